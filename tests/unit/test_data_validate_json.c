/*
 * test_data_validate_json.c: `smdplan validate --json`
 * (data/data_validate_json.h) and the goal it reports
 * (planner/plan_validate_goal.h).
 *
 * A row id that is a plain number is written as one, any other as text; a
 * byte count is a whole number (858993459.2 bytes of predicted memory is
 * 858993459); a figure not compared is null; the rows skipped are the rows
 * less the compared (13 - 7 = 6). The goal is met at exactly 5 % over
 * sources and 10 % for the worst, and missed just above either.
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/data_validate_json.h"
#include "planner/plan_validate_goal.h"

static void row(void **state)
{
    (void)state;
    static plan_validate_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.row_id, sizeof r.row_id, "94");
    snprintf(r.source_key, sizeof r.source_key, "src-a");
    snprintf(r.instance, sizeof r.instance, "p4d.24xlarge");
    r.compared = r.have_layout = 1;
    r.gpus = 64;
    r.pred_time_s = 1.5;
    r.ref_time_s = 1.25;
    r.error_pct = 20.0;
    r.basis = PLAN_VAL_BASIS_TIME;
    r.pred_mem_bytes = 858993459.2;
    cJSON *o = data_validate_row_json(&r, 1.375);
    assert_non_null(o);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "row_id")));
    assert_int_equal(cJSON_GetObjectItem(o, "row_id")->valuedouble, 94);
    assert_true(cJSON_GetObjectItem(o, "simulated_iteration_time_s")->valuedouble == 1.375);
    assert_true(cJSON_GetObjectItem(o, "predicted_memory_per_gpu_bytes")->valuedouble ==
                858993459.0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "reference_memory_per_gpu_bytes")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "memory_error_pct")));
    assert_string_equal(cJSON_GetObjectItem(o, "reference_basis")->valuestring,
                        plan_validate_basis_name(PLAN_VAL_BASIS_TIME));
    assert_null(cJSON_GetObjectItem(o, "reason"));
    cJSON_Delete(o);

    snprintf(r.row_id, sizeof r.row_id, "+7");
    r.compared = 0;
    snprintf(r.reason, sizeof r.reason, "no batch");
    o = data_validate_row_json(&r, 1.375);
    assert_string_equal(cJSON_GetObjectItem(o, "row_id")->valuestring, "+7");
    assert_string_equal(cJSON_GetObjectItem(o, "reason")->valuestring, "no batch");
    assert_null(cJSON_GetObjectItem(o, "simulated_iteration_time_s"));
    assert_null(cJSON_GetObjectItem(o, "error_pct"));
    cJSON_Delete(o);
}

static void summary(void **state)
{
    (void)state;
    static plan_validate_summary s;
    memset(&s, 0, sizeof s);
    s.all.rows = 13;
    s.all.compared = 7;
    s.all.mean_abs_error_pct = 4.5;
    s.nsources = 1;
    snprintf(s.source[0].source_key, sizeof s.source[0].source_key, "src-a");
    s.source[0].rows = 2;
    FILE *f = tmpfile();
    assert_non_null(f);
    st_err err = {0};
    assert_int_equal(data_validate_json_write(f, "runs.csv", NULL, NULL, 0, &s, &err), ST_OK);
    long len = ftell(f);
    rewind(f);
    char *text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    assert_int_equal(text[len - 1], '\n');
    cJSON *o = cJSON_Parse(text);
    free(text);
    assert_non_null(o);
    assert_int_equal(cJSON_GetObjectItem(o, "rows_skipped")->valuedouble, 6);
    assert_true(cJSON_GetObjectItem(o, "goal_mean_abs_error_pct")->valuedouble ==
                PLAN_VAL_GOAL_MEAN_SOURCE_PCT);
    cJSON *src = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "sources"), 0);
    assert_string_equal(cJSON_GetObjectItem(src, "source_key")->valuestring, "src-a");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(src, "mean_abs_error_pct")));
    cJSON *all = cJSON_GetObjectItem(o, "all");
    assert_null(cJSON_GetObjectItem(all, "source_key"));
    assert_true(cJSON_GetObjectItem(all, "mean_abs_error_pct")->valuedouble == 4.5);
    assert_null(cJSON_GetObjectItem(o, "simulated_mean_source_abs_error_pct"));
    cJSON_Delete(o);
}

static void goal(void **state)
{
    (void)state;
    static plan_validate_summary s;
    memset(&s, 0, sizeof s);
    s.mean_source_pct = 5.0;
    s.max_source_pct = 10.0;
    assert_int_equal(plan_validate_goal_met(&s), 1);
    s.mean_source_pct = 5.01;
    assert_int_equal(plan_validate_goal_met(&s), 0);
    s.mean_source_pct = 4.0;
    s.max_source_pct = 10.01;
    assert_int_equal(plan_validate_goal_met(&s), 0);
}

TEST_MAIN((void)0,
          cmocka_unit_test(row),
          cmocka_unit_test(summary),
          cmocka_unit_test(goal))
