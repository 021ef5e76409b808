/*
 * plan_summary.h: the sentences that explain a search's answer, computed
 * from the planner's values: why plan #1 ranks above #2, the layouts
 * rejected counted by reason, which plans lie within each other's error
 * bands, and what training a token count with #1 takes. Pure: the text goes
 * into the caller's buffer, the caller prints it.
 *
 * sim_step_s (nsim entries, NULL when 0) are the simulated steps of the top
 * plans in their order, seconds, when the simulator played them out; a plan
 * is ranked by its simulated step when it has one, else by the planner's.
 */
#ifndef SMD_PLAN_SUMMARY_H
#define SMD_PLAN_SUMMARY_H

#include <stddef.h>

#include "planner/plan.h"

/* The step plan i was ranked by, seconds. */
double plan_summary_ranked_step_s(const plan_result *r, const double *sim_step_s, int nsim, int i);

/* "\nWhy #1: ... .\n" into buf (n bytes, truncated to fit): the figure the
 * ranking used (memory for PLAN_OBJ_MEMORY, the simulated steps when nsim
 * >= 2, the planner's otherwise), the knob that differs and the time term
 * that differs most, or what breaks a tie. */
void plan_summary_why(const plan_result *r, const double *sim_step_s, int nsim,
                      plan_objective obj, char *buf, size_t n);

/* "Rejected: N reason, ... .\n" into buf, the closest layout that ran out
 * of memory named beside the memory count; "" when nothing was rejected. */
void plan_summary_rejected(const plan_result *r, char *buf, size_t n);

/* How many plans from #1 lie within each other's error bands of +-
 * band_pct % around their ranked steps (1: #2 lies outside #1's); 0 without
 * plans. Two intervals t (1 +- b) overlap when |t1 - t2| <= b (t1 + t2). */
int plan_summary_band_overlap(const plan_result *r, const double *sim_step_s, int nsim,
                              double band_pct);

/* Time (s) and cost (dollars; 0 without a price) of training tokens with
 * plan #1 at its simulated step (sim_step_s > 0; *simulated 1) or its
 * predicted one. 0 (and zeros) when there is no plan or no step. */
int plan_summary_train(const plan_result *r, double sim_step_s, double tokens, double *time_s,
                       double *cost, int *simulated);

#endif
