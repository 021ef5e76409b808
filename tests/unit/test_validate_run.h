/*
 * test_validate_run.h: one published row run as smdplan validate runs it,
 * against the shipped catalog (loaded by the group's setup), for the tests
 * of how rows are read.
 */
#ifndef SMD_TEST_VALIDATE_RUN_H
#define SMD_TEST_VALIDATE_RUN_H

#include <string.h>

#include "data/data.h"
#include "data/data_known_models.h"
#include "planner/plan_validate.h"
#include "test_util.h"

static plan_catalog cat;

static inline int validate_setup(void **state)
{
    (void)state;
    st_err err = {0};
    if (data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &cat, &err) != ST_OK) {
        fprintf(stderr, "catalog: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* validate_setup with the known models installed, as validate installs
 * them (a row may name a model without its shape) */
static inline int validate_setup_known(void **state)
{
    st_err err = {0};
    if (data_known_models_load(&err) != ST_OK) {
        fprintf(stderr, "known models: %s\n", err.msg);
        return -1;
    }
    return validate_setup(state);
}

static inline int validate_teardown(void **state)
{
    (void)state;
    plan_catalog_free(&cat);
    return 0;
}

static inline plan_validate_result *run(const plan_validate_row *row)
{
    static plan_validate_result r;
    st_err err = {0};
    assert_int_equal(plan_validate_run(&cat, row, &r, NULL, &err), ST_OK);
    return &r;
}

/* A row run but not compared, for a reason that contains why. */
static inline const plan_validate_result *refused(const plan_validate_row *row, const char *why)
{
    const plan_validate_result *r = run(row);
    assert_false(r->compared);
    assert_non_null(strstr(r->reason, why));
    return r;
}

#endif
