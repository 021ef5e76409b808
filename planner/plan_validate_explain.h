/*
 * plan_validate_explain.h: one published run of `smdplan validate
 * --explain ROW`: found among the results by its row_id, and every term of
 * its prediction made again (plan_terms: each memory and time term with
 * its formula and source). Pure: no files, no output.
 */
#ifndef SMD_PLAN_VALIDATE_EXPLAIN_H
#define SMD_PLAN_VALIDATE_EXPLAIN_H

#include "planner/plan.h"
#include "planner/plan_validate.h"

/* The index of the first of the n results res whose row_id is id; -1 when
 * none is. */
int plan_validate_find(const plan_validate_result *res, int n, const char *id);

/* Every term of the prediction of row (as plan_validate_run reads it on
 * cat, with the recompute its configuration shares where r, its result in
 * the file, has one: plan_validate_rows) into t; the result itself is not
 * kept. t->n is 0 when the row has no prediction (a row that is not
 * compared). ST_ENOMEM, or plan_validate_run's codes. */
int plan_validate_terms(const plan_catalog *cat, const plan_validate_row *row,
                        const plan_validate_result *r, plan_terms *t, st_err *err);

#endif
