/*
 * plan_validate_goal.h: the goal `smdplan validate` measures the planner
 * against, over the published runs' sources (plan_validate_summarize).
 *
 * Every source weighs the same: the mean over sources of each source's mean
 * |time error| should be at most PLAN_VAL_GOAL_MEAN_SOURCE_PCT and no
 * source's above PLAN_VAL_GOAL_MAX_SOURCE_PCT. Missing it is a measurement,
 * not a failure. Percentages, 100 (predicted - reference) / reference.
 */
#ifndef SMD_PLAN_VALIDATE_GOAL_H
#define SMD_PLAN_VALIDATE_GOAL_H

#include "planner/plan_validate.h"

/* The goal for the mean over sources of the mean |time error|, and
 * for the worst source's, percent. */
#define PLAN_VAL_GOAL_MEAN_SOURCE_PCT 5.0
#define PLAN_VAL_GOAL_MAX_SOURCE_PCT 10.0

/* 1 when summary s meets both goals, else 0. Meaningful only when a row
 * was compared (s->all.compared): the source figures are 0 otherwise. */
int plan_validate_goal_met(const plan_validate_summary *s);

#endif
