/*
 * rpt_label.c: a layout in a few words, for plot keys, axis labels and
 * tables, so a plan reads the same in every plot of a report.
 *
 * Degrees and the micro-batch always appear; the other knobs only when they
 * differ from plan_layout_default, so a label stays short for the common
 * case and still tells two top plans apart.
 */
#include "reports/rpt_int.h"
#include "planner/plan_framework.h"

#include <stdio.h>
#include <string.h>

char *rpt_layout_label(const plan_layout *l, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    rpt__buf b = {0};
    rpt__buf_printf(&b, "tp%d pp%d dp%d", l->tp, l->pp, l->dp);
    if (l->cp > 1)
        rpt__buf_printf(&b, " cp%d", l->cp);
    rpt__buf_printf(&b, " mb%d", l->micro_batch);
    if (l->pp > 1) /* the schedule by its stack's name (1f1b, SMP's interleaved, ...) */
        rpt__buf_printf(&b, " %s", plan_framework_schedule_name(l));
    if (l->virtual_stages > 1)
        rpt__buf_printf(&b, " v%d", l->virtual_stages);
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_group > 1)
        rpt__buf_printf(&b, " full/%d", l->recompute_group);
    else if (l->recompute != PLAN_RECOMP_NONE)
        rpt__buf_printf(&b, " %s", plan_recompute_name(l->recompute));
    if (l->sharding != PLAN_SHARD_NONE)
        rpt__buf_printf(&b, " shard %s", plan_sharding_name(l->sharding));
    if (l->offload_activations)
        rpt__buf_puts(&b, " offload");
    /* two plans differing only in sequence parallelism must not share a key */
    if (l->sequence_parallel && l->tp > 1)
        rpt__buf_puts(&b, " sp");
    snprintf(buf, n, "%s", b.oom || !b.p ? "" : b.p);
    rpt__buf_fini(&b);
    return buf;
}
