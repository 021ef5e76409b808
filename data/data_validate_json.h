/*
 * data_validate_json.h: `smdplan validate --json`, the planner's comparison
 * with published runs (planner/plan_validate.h) as machine-readable text.
 *
 * One object per row (how it was read, its prediction by term, its
 * reference and errors), the statistics of each source and of every row,
 * and the mean and worst source. The model and the layout are written by
 * the planner's field tables under the names every output uses; byte counts
 * are whole numbers; a figure that was not compared is null. The results
 * and summary are borrowed for the call.
 */
#ifndef SMD_DATA_VALIDATE_JSON_H
#define SMD_DATA_VALIDATE_JSON_H

#include <stdio.h>

#include "common/st.h"
#include "planner/plan_validate.h"

struct cJSON;

/* One row r as a JSON object (caller owns; NULL when out of memory);
 * sim_s is its simulated step, seconds (0: not simulated, not written). */
struct cJSON *data_validate_row_json(const plan_validate_result *r, double sim_s);

/* The statistics s of one source (or of every row) as a JSON object
 * (caller owns; NULL when out of memory). */
struct cJSON *data_validate_stats_json(const plan_validate_stats *s);

/* The whole answer for file: its n rows v (sim_s[i] their simulated steps,
 * seconds, or NULL), their summary s (plan_validate_summarize), the goal
 * (planner/plan_validate_goal.h), as cJSON's indented text and a newline to
 * f. ST_ENOMEM when it cannot be made. */
int data_validate_json_write(FILE *f, const char *file, const plan_validate_result *v,
                             const double *sim_s, int n, const plan_validate_summary *s,
                             st_err *err);

#endif
