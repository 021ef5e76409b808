/*
 * plan_measured.h: a run measured on a model, layout and node known
 * exactly (the executor's, recorded by smdplan exec) as a row of the fit
 * (plan_calibrate_results): what it ran, predicted now, and its measured
 * step the reference. Pure computation; reading the runs back from the
 * database is data/'s (data/data_calibration.h).
 */
#ifndef SMD_PLAN_MEASURED_H
#define SMD_PLAN_MEASURED_H

#include <stddef.h>

#include "planner/plan.h"
#include "planner/plan_validate.h"

/* One measured run. Borrowed for the call. */
typedef struct plan_measured_run {
    const char *row_id;          /* "run 12" */
    const plan_model *model;     /* as it ran */
    const plan_layout *layout;   /* as it ran, with its framework */
    const plan_instance *inst;   /* its node: a catalog entry */
    int nodes, gpus;
    const char *label;           /* the layout in words (the row's notes, for a table) */
    double measured_s;           /* its measured step (the median of its measured steps) */
} plan_measured_run;

/* r: run as a row of the fit, its model shape the source it is grouped by
 * (plan_measured_shape_key; leave-one-source-out then predicts each shape
 * from the others), predicted on cat as it stands, its measured step the
 * reference time (PLAN_VAL_BASIS_TIME) and the error of the prediction. 0
 * and r filled, or 1 and why (nwhy bytes) it cannot take part: it cannot
 * be predicted now, or the planner rejects its layout now. */
int plan_measured_row(const plan_catalog *cat, const plan_measured_run *run,
                      plan_validate_result *r, char *why, size_t nwhy);

/* A model shape as a source key: "gpt L4 H512 A8 S256 V1024" (layers,
 * hidden, heads, sequence, vocabulary) into buf (n bytes). */
void plan_measured_shape_key(const plan_model *m, char *buf, size_t n);

/* The step time of row r (with a layout) under cat as it stands, seconds;
 * 0 when it cannot be predicted. */
double plan_validate_step_s(const plan_catalog *cat, const plan_validate_result *r);

#endif
