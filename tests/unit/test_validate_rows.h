/*
 * test_validate_rows.h: the published runs of data/reference/
 * calibration_runs.csv read and predicted as smdplan validate does, for the
 * tests of what is made of them (their text, their simulation, --explain).
 */
#ifndef SMD_TEST_VALIDATE_ROWS_H
#define SMD_TEST_VALIDATE_ROWS_H

#include <stdlib.h>

#include "data/data.h"
#include "data/data_csv.h"
#include "planner/plan_validate.h"
#include "test_util.h"

#define VALIDATE_RUNS_CSV SMD_TEST_DATA_DIR "/reference/calibration_runs.csv"

typedef struct validated {
    plan_catalog cat;            /* the shipped catalog, as validate loads it */
    data_csv csv;
    plan_validate_row *rows;
    plan_validate_result *res;
    int n;
} validated;

/* Every row of the shipped runs, read and predicted into v. */
static inline void validated_load(validated *v)
{
    st_err err = {0};
    memset(v, 0, sizeof *v);
    assert_int_equal(data_catalog_load(NULL, &v->cat, &err), ST_OK);
    assert_int_equal(data_csv_load(VALIDATE_RUNS_CSV, &v->csv, &err), ST_OK);
    v->n = v->csv.nrows;
    assert_true(v->n > 100);
    v->rows = calloc((size_t)v->n, sizeof *v->rows);
    v->res = calloc((size_t)v->n, sizeof *v->res);
    assert_non_null(v->rows);
    assert_non_null(v->res);
    assert_int_equal(data_csv_validate_rows(&v->csv, "runs.csv", v->rows, &err), ST_OK);
    assert_int_equal(plan_validate_rows(&v->cat, v->rows, v->n, v->res, &err), ST_OK);
}

static inline void validated_free(validated *v)
{
    free(v->rows);
    free(v->res);
    data_csv_free(&v->csv);
    plan_catalog_free(&v->cat);
}

/* The index of the first row that was not compared, and of the first that
 * was; the test fails when there is none of either. */
static inline int validated_first(const validated *v, int compared)
{
    for (int i = 0; i < v->n; i++)
        if (v->res[i].compared == compared)
            return i;
    fail_msg("no row with compared = %d", compared);
    return -1;
}

#endif
