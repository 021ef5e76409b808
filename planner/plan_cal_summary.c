/*
 * plan_cal_summary.c: a calibration report read (plan_cal_summary.h):
 * each parameter's outcome, the parameters on a bound, the chip check.
 */
#include "planner/plan_cal_summary.h"

#include <strings.h>

plan_cal_outcome plan_cal_param_outcome(const plan_cal_group *g, plan_eff_param p)
{
    if ((g->undetermined >> p) & 1)
        return PLAN_CAL_UNDETERMINED;
    if (!((g->fitted >> p) & 1))
        return PLAN_CAL_KEPT;
    return (g->on_bound >> p) & 1 ? PLAN_CAL_ON_BOUND : PLAN_CAL_FITTED;
}

const char *plan_cal_outcome_text(plan_cal_outcome o)
{
    switch (o) {
    case PLAN_CAL_KEPT: return "kept";
    case PLAN_CAL_UNDETERMINED: return "kept: undetermined by these rows";
    case PLAN_CAL_ON_BOUND: return "ON A BOUND: a failure of the model";
    case PLAN_CAL_FITTED: return "fitted";
    }
    return "?";
}

int plan_cal_report_bounds(const plan_cal_report *rep, unsigned *params)
{
    int n = 0;
    unsigned any = 0;
    for (int i = 0; i < rep->ngroups; i++) {
        const plan_cal_group *g = &rep->group[i];
        if (g->pooled || g->rejected)
            continue;
        for (int p = 0; p < PLAN_EFF__COUNT; p++) {
            if (!((g->on_bound >> p) & 1))
                continue;
            any |= 1u << p;
            n += ((g->asked >> p) & 1) && ((g->fitted >> p) & 1);
        }
    }
    if (params)
        *params = any;
    return n;
}

int plan_cal_silicon_check(const plan_catalog *cat, const char *silicon, st_err *err)
{
    for (int i = 0; i < cat->ngpus; i++)
        if (strcasecmp(cat->gpus[i].silicon, silicon) == 0)
            return ST_OK;
    return ST_RAISE(err, ST_EINVAL, "--gpu '%s': not a chip of the catalog (its GPUs' "
                    "silicon: see smdplan catalog --json)", silicon);
}
