/*
 * rpt_plan_preset.c: a preset's reference layout beside the plan ranked #1
 * (plan_preset_cmp.h) as the plan command prints it: the two rows in the
 * plan table's columns, and why ours differs (rpt_plan.h).
 */
#include "reports/rpt_plan.h"

#include <stdio.h>

#include "reports/rpt_table.h"

static void row(rpt_table *t, const char *label, const plan_candidate *cand)
{
    rpt_table_row(t);
    rpt_table_cell(t, "%s", label);
    rpt_plan_cells(t, &cand->layout, &cand->est);
}

void rpt_plan_preset(FILE *f, const plan_preset_cmp *p, const plan_candidate *ours)
{
    if (!p->shown)
        return;
    fprintf(f, "\n");
    if (p->status != PLAN_PRESET_UNPLACEABLE) {
        char head[600];
        snprintf(head, sizeof head, "SMP's own layout for %s (%s), with this plan's global batch, "
                 "by the planner:", p->preset->key, p->preset->ref.source);
        rpt_term_wrap(f, head, "", "");
        /* the columns of the plan table, left out in the same order when narrow */
        static const char *const head_[] = {"", "TP", "PP", "CP", "DP", "mbs", "mb", "act",
                                            "sched", "recomp", "sharding", "SP", "place",
                                            "mem GiB", "step s", "compute", "TP", "PP", "DPexp",
                                            "bubble", "opt"};
        static const int prio[] = {0, 0, 0, 3, 0, 0, 0, 3, 2, 0, 0, 3, 3, 0, 0, 4, 4, 4, 4, 4, 5};
        rpt_table *t = rpt_table_new();
        for (int k = 0; t && k < 21; k++)
            rpt_table_col(t, head_[k], k > 0 && (k < 8 || k > 12), prio[k]);
        if (t) {
            row(t, "ours #1", ours);
            row(t, p->status == PLAN_PRESET_OOM ? "SMP (OOM)" : "SMP ref", &p->ref);
            rpt_table_print(f, t, "  ");
        }
        rpt_table_free(t);
    }
    char why[1200];
    snprintf(why, sizeof why, "%s%s", p->status == PLAN_PRESET_UNPLACEABLE ? "" : "Why ours differs: ",
             p->why);
    rpt_term_wrap(f, why, "", "");
}
