/*
 * test_exec_layout.c: a layout and a model as the executor runs them
 * (exec/exec_layout.c).
 *
 * Defaults: with only pp 3 given, one sequence per microbatch and 2 x 3 = 6
 * microbatches; a global batch of 12 over dp 2 x micro-batch 2 is 3
 * microbatches, and 7 is refused naming --global-batch. --scale on a GPT
 * of hidden 1536, 13 layers, 12 heads under tp 5: hidden 768 keeps the
 * MLP's ratio (6144 x 768 / 1536 = 3072, rounded up to 3075 for 5 TP
 * ranks), heads 6 keeps multi-head attention (kv heads 6), and says so; a
 * value larger than the model's is refused. The shape check refuses 12
 * heads over tp 5 by name.
 */
#include "test_models.h"

#include "exec/exec_layout.h"


static void test_from_config(void **state)
{
    (void)state;
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.pp = 3;
    plan_layout l;
    st_err err = {0};
    assert_int_equal(exec_layout_from_config(&cfg, 0, &l, &err), ST_OK);
    assert_int_equal(l.tp * l.dp * l.cp, 1);
    assert_int_equal(l.pp, 3);
    assert_int_equal(l.micro_batch, 1);
    assert_int_equal(l.microbatches, 6);
    assert_int_equal(l.global_batch, 6);
    assert_int_equal(l.schedule, PLAN_SCHED_INTERLEAVED);
    assert_int_equal(exec_layout_check(&l, 0, &err), ST_OK);
    /* full recompute of part of the layers, or keeping products' outputs:
     * refused by name, never run as whole-layer recompute */
    l.recompute = PLAN_RECOMP_FULL;
    l.recompute_layers = 2;
    assert_int_equal(exec_layout_check(&l, 0, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "recompute_layers 2"));
    st_err_clear(&err);
    l.recompute_layers = 0;
    l.recompute_saved = PLAN_SAVE_QKV;
    assert_int_equal(exec_layout_check(&l, 0, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "recompute_saved 1"));
    st_err_clear(&err);
    l.recompute_saved = 0;
    assert_int_equal(exec_layout_check(&l, 0, &err), ST_OK);

    plan_config_default(&cfg);
    cfg.dp = 2, cfg.micro_batch = 2, cfg.global_batch = 12;
    assert_int_equal(exec_layout_from_config(&cfg, 0, &l, &err), ST_OK);
    assert_int_equal(l.microbatches, 3);
    assert_int_equal(l.global_batch, 12);
    cfg.global_batch = 7;
    assert_int_equal(exec_layout_from_config(&cfg, 0, &l, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--global-batch 7"));
}

static void test_scale(void **state)
{
    (void)state;
    plan_model m = test_gpt_13x1536();
    plan_layout l;
    plan_layout_default(&l);
    l.tp = 5;
    exec_scale sc = {.hidden = 768, .heads = 6};
    char said[256];
    st_err err = {0};
    assert_int_equal(exec_model_scale(&sc, &l, &m, said, sizeof said, &err), ST_OK);
    assert_int_equal(m.hidden, 768);
    assert_int_equal(m.ffn, 3075);
    assert_int_equal(m.heads, 6);
    assert_int_equal(m.kv_heads, 6);
    assert_int_equal(m.layers, 13);
    assert_string_equal(said, "hidden 1536 -> 768, heads 12 -> 6, kv_heads 12 -> 6, "
                              "ffn 6144 -> 3075");
    assert_string_equal(m.name, "gpt-13x1536-scaled");

    m = test_gpt_13x1536();
    sc = (exec_scale){.layers = 14};
    assert_int_equal(exec_model_scale(&sc, &l, &m, said, sizeof said, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--scale layers=14"));

    m = test_gpt_13x1536();
    st_err_clear(&err); /* the first error is kept: a fresh context for the next */
    assert_int_equal(exec_model_check(&m, &l, "synthetic", &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "12 heads do not divide by tp 5"));
    l.tp = 4;
    assert_int_equal(exec_model_check(&m, &l, "synthetic", &err), ST_OK);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_config),
        cmocka_unit_test(test_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
