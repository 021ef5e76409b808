/*
 * test_plan_measured.c: a run the executor measured as a row of the fit
 * (planner/plan_measured.h).
 *
 * The planner's best layout of a GPT of hidden 1536, 13 layers, 12 heads
 * on one p4d, measured at 1.25 times its predicted step p, is a row whose
 * error is exactly 100 (p - 1.25 p) / 1.25 p = -20 %, its model shape its
 * source; the same layout over tp 5 (12 heads do not split 5 ways) cannot
 * take part, and says why.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data.h"
#include "planner/plan_measured.h"

static void measured_row(void **state)
{
    (void)state;
    setenv("SMDPLAN_DATA", SMD_TEST_DATA_DIR, 1);
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = 13, .hidden = 1536, .heads = 12,
                    .kv_heads = 12, .ffn = 6144, .seq = 1000, .vocab = 51200,
                    .tied_embedding = 1};
    snprintf(m.name, sizeof m.name, "gpt-13x1536");
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    const plan_instance *p4d = found_or_fail(plan_catalog_find(&cat, "p4d.24xlarge"), "type",
                                             "p4d.24xlarge");
    plan_cluster c;
    assert_int_equal(plan_cluster_make(&cat, p4d, 1, &c, &err), ST_OK);
    plan_config cfg;
    plan_config_default(&cfg);
    plan_result *res = calloc(1, sizeof *res);
    assert_non_null(res);
    assert_int_equal(plan_search(&m, &c, &cfg, res, &err), ST_OK);
    assert_true(res->ntop > 0);
    plan_layout l = res->top[0].layout;
    double pred_s = res->top[0].est.time.step_s;
    assert_true(pred_s > 0);

    plan_measured_run run = {.row_id = "run 12", .model = &m, .layout = &l, .inst = p4d,
                             .nodes = 1, .gpus = 8, .label = "tp 1", .measured_s = 1.25 * pred_s};
    plan_validate_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    char why[200] = "";
    assert_int_equal(plan_measured_row(&cat, &run, r, why, sizeof why), 0);
    assert_string_equal(why, "");
    assert_true(r->compared && r->have_model && r->have_layout);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_TIME);
    assert_string_equal(r->row_id, "run 12");
    assert_string_equal(r->source_key, "gpt L13 H1536 A12 S1000 V51200");
    assert_string_equal(r->notes, "tp 1");
    assert_string_equal(r->instance, "p4d.24xlarge");
    assert_rel(r->pred_time_s, pred_s, 1e-12);
    assert_rel(r->error_pct, -20.0, 1e-12);
    assert_rel(plan_validate_step_s(&cat, r), r->pred_time_s, 1e-15);

    l.tp = 5; /* 12 heads do not split 5 ways */
    assert_int_equal(plan_measured_row(&cat, &run, r, why, sizeof why), 1);
    assert_true(why[0] != '\0');
    assert_false(r->compared);

    m.arch = PLAN_ARCH_LLAMA, m.layers = 4, m.hidden = 512, m.heads = 8, m.seq = 256;
    m.vocab = 1024;
    char key[64];
    plan_measured_shape_key(&m, key, sizeof key);
    assert_string_equal(key, "llama L4 H512 A8 S256 V1024");
    free(r);
    free(res);
    plan_catalog_free(&cat);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(measured_row))
