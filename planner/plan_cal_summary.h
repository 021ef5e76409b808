/*
 * plan_cal_summary.h: what a calibration report (plan_calibrate.h) says
 * once it is read: each asked parameter's outcome in its group, the fitted
 * parameters that ended on a bound of their physical range, and the check
 * that a chip asked for is one of the catalog's. Pure computation over the
 * report; `smdplan calibrate` prints these.
 */
#ifndef SMD_PLAN_CAL_SUMMARY_H
#define SMD_PLAN_CAL_SUMMARY_H

#include "common/st.h"
#include "planner/plan.h"
#include "planner/plan_calibrate.h"

/* What became of one asked parameter of a fitted group. */
typedef enum plan_cal_outcome {
    PLAN_CAL_KEPT = 0,           /* the runs do not constrain it: its value kept */
    PLAN_CAL_UNDETERMINED,       /* constrained, but its standard error is over half its
                                  * range: its value kept */
    PLAN_CAL_ON_BOUND,           /* fitted, and ended on a bound: a failure of the model */
    PLAN_CAL_FITTED,
} plan_cal_outcome;

/* The outcome of parameter p in group g (undetermined before fitted). A
 * standard error is known (g->std_err[p]) for every outcome but KEPT. */
plan_cal_outcome plan_cal_param_outcome(const plan_cal_group *g, plan_eff_param p);

/* The outcome in words, as smdplan calibrate prints it. */
const char *plan_cal_outcome_text(plan_cal_outcome o);

/* The fitted parameters of rep that ended on a bound: returns how many
 * (asked and fitted parameters of the groups fitted and not rejected,
 * counted once per group), and sets *params (may be NULL) to the
 * plan_eff_param bits on a bound in any group fitted and not rejected. */
int plan_cal_report_bounds(const plan_cal_report *rep, unsigned *params);

/* ST_OK when silicon names the chip of a GPU of cat (case-insensitive),
 * else ST_EINVAL naming it as --gpu. */
int plan_cal_silicon_check(const plan_catalog *cat, const char *silicon, st_err *err);

#endif
