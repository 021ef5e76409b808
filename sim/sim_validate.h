/*
 * sim_validate.h: the published runs of `smdplan validate --sim` played
 * out by the simulator: each compared row's layout on its cluster, with
 * the simulator's defaults (sim_config_default), beside the planner's
 * prediction of it. Times in seconds per step.
 */
#ifndef SMD_SIM_VALIDATE_H
#define SMD_SIM_VALIDATE_H

#include "planner/plan.h"
#include "planner/plan_validate.h"

/* The simulated step of row r (its model, layout and cluster on cat, as
 * plan_validate_cluster makes it); 0 when r was not compared, has no
 * layout, or cannot be simulated (a result, not an error). */
double sim_validate_step_s(const plan_catalog *cat, const plan_validate_result *r);

/* Called after each row with the rows done and their total. */
typedef void (*sim_validate_progress_fn)(void *ctx, int done, int total);

/* sim_validate_step_s of each of the n rows res into sim_s[i] (n doubles)
 * and res[i].sim_time_s, in order, calling progress(ctx, i + 1, n) after
 * each when progress is not NULL. */
void sim_validate_rows(const plan_catalog *cat, plan_validate_result *res, double *sim_s, int n,
                       sim_validate_progress_fn progress, void *ctx);

#endif
