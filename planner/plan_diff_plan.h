/*
 * plan_diff_plan.h: one side of `smdplan diff`: a plan (layout and
 * estimate) with the words that name its model and cluster and the error
 * band of its step, whichever way it was found: searched here for a model
 * and cluster with some layout knobs fixed, or read from a recorded plan
 * (data/data_diff.h). Pure: no files, no output.
 *
 * Memory in bytes per GPU, times in seconds per step, the band in percent
 * of the step.
 */
#ifndef SMD_PLAN_DIFF_PLAN_H
#define SMD_PLAN_DIFF_PLAN_H

#include "common/st.h"
#include "planner/plan.h"
#include "planner/plan_diff.h"

#define PLAN_DIFF_BASIS_MAX 400

typedef struct plan_diff_plan {
    char name[64];               /* "A", "B", or "ID:RANK" of a recorded plan */
    plan_layout layout;          /* with its framework and precision */
    plan_estimate est;
    int oom;                     /* the layout does not fit */
    char model[PLAN_NAME_MAX];
    char cluster[96];            /* "N x TYPE" */
    double band_pct;             /* the step's error band; 0: none known */
    char band_basis[PLAN_DIFF_BASIS_MAX]; /* one sentence on the band's basis */
} plan_diff_plan;

/* p as plan_diff's side (borrowing p's layout and estimate). */
plan_diff_side plan_diff_plan_side(const plan_diff_plan *p);

/* The best layout of model m on cluster c under cfg (the knobs it fixes;
 * the others searched; cfg->top_k is not read: one is kept), or when none
 * fits the closest one out of memory (out->oom 1), into out's layout,
 * estimate, model and cluster; its name and band are left to the caller.
 * ST_EINVAL when no layout of these knobs can be evaluated, the message
 * starting with what (the knobs as the user gave them); plan_search's
 * codes; ST_ENOMEM. */
int plan_diff_plan_search(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                          const char *what, plan_diff_plan *out, st_err *err);

#endif
