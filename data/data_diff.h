/*
 * data_diff.h: what `smdplan diff` reads and writes through data/: a
 * recorded plan read back as a side (planner/plan_diff_plan.h), with the
 * error band its stack carries on its chip (data/error_bands.json), and
 * the two sides as the JSON of `smdplan diff --json`.
 */
#ifndef SMD_DATA_DIFF_H
#define SMD_DATA_DIFF_H

#include <stdint.h>

#include "common/st.h"
#include "planner/plan_diff_plan.h"

/* The plan of rank rank (role "top") of record id in the database at path
 * (opened to read, closed before it returns) into out: its layout and
 * prediction, its model's name, "N x TYPE", the name "ID:RANK", and the
 * band of its stack on its chip as the catalog names the chip (none, and
 * the basis saying so, when its instance type is not in the catalog).
 * ST_EINVAL when the record has no plan of that rank with its prediction;
 * db_open's, db_plans' and db_model's codes (ST_ENOENT: no such record);
 * ST_ENOMEM. */
int data_diff_plan_read(const char *path, int64_t id, long rank, plan_diff_plan *out,
                        st_err *err);

/* The document of smdplan diff --json: "a" and "b" (name, model, cluster,
 * fits, the plan as data_json_plan writes it, step_band_pct, band_basis),
 * step_difference_s (b's step minus a's, seconds) and within_error_bands
 * (plan_diff_within_bands). Caller owns (cJSON_Delete); NULL when out of
 * memory. */
struct cJSON;
struct cJSON *data_diff_json(const plan_diff_plan *a, const plan_diff_plan *b);

#endif
