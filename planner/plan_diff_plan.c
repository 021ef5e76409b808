/*
 * plan_diff_plan.c: a side of `smdplan diff` searched for (plan_diff_plan.h):
 * the planner's search with the knobs the side fixes, its best plan, or the
 * closest layout out of memory when nothing fits, so that a layout too big
 * for the cluster is still shown term by term beside the other.
 */
#include "planner/plan_diff_plan.h"

#include <stdio.h>
#include <stdlib.h>

plan_diff_side plan_diff_plan_side(const plan_diff_plan *p)
{
    return (plan_diff_side){&p->layout, &p->est, p->oom, p->band_pct};
}

int plan_diff_plan_search(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                          const char *what, plan_diff_plan *out, st_err *err)
{
    plan_result *res = calloc(1, sizeof *res);
    if (!res)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    plan_config one = *cfg;
    one.top_k = 1;
    int rc = plan_search(m, c, &one, res, err);
    /* a closest layout out of memory exists when one was evaluated */
    if (rc == ST_OK && res->ntop == 0 && !(res->min_oom_excess_bytes > 0))
        rc = ST_RAISE(err, ST_EINVAL, "%s: no layout of these knobs can be evaluated on %d x %s",
                      what, c->nodes, c->inst->name);
    if (rc == ST_OK) {
        const plan_candidate *best = res->ntop ? &res->top[0] : &res->closest_oom;
        out->layout = best->layout;
        out->est = best->est;
        out->oom = res->ntop == 0;
        snprintf(out->model, sizeof out->model, "%s", m->name);
        snprintf(out->cluster, sizeof out->cluster, "%d x %s", c->nodes, c->inst->name);
    }
    free(res);
    return rc;
}
