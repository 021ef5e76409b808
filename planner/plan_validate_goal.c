/*
 * plan_validate_goal.c: whether a validation summary meets the goal of
 * plan_validate_goal.h (both the mean over sources and the worst source).
 */
#include "planner/plan_validate_goal.h"

int plan_validate_goal_met(const plan_validate_summary *s)
{
    return s->mean_source_pct <= PLAN_VAL_GOAL_MEAN_SOURCE_PCT &&
           s->max_source_pct <= PLAN_VAL_GOAL_MAX_SOURCE_PCT;
}
