/*
 * test_sim_validate.c: validate --sim (sim/sim_validate.c): a compared row's
 * step is the simulator's own on the row's model, layout and cluster with
 * the default configuration, and agrees with the planner's prediction of
 * it (a differential test: the simulator plays out the same costs and adds
 * only the interplay of microbatches and links; the first rows of the
 * shipped runs differ by under 1 %, so 5 % is a failure); a row not
 * compared, or without a layout, is not simulated (0); every row's step
 * goes into both the array and its result, with the progress called once
 * per row in order.
 */
#include "test_validate_rows.h"

#include "sim/sim.h"
#include "sim/sim_validate.h"

static void test_step(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    int c = validated_first(&v, 1), u = validated_first(&v, 0);
    double s = sim_validate_step_s(&v.cat, &v.res[c]);
    assert_true(s > 0);
    assert_rel(s, v.res[c].pred_time_s, 0.05);
    plan_cluster cl;
    st_err err = {0};
    assert_int_equal(plan_validate_cluster(&v.cat, &v.res[c], &cl, &err), ST_OK);
    sim_config cfg;
    sim_config_default(&cfg);
    sim_result own;
    assert_int_equal(sim_layout_run(&v.res[c].model, &cl, &v.res[c].layout, &cfg, &own, &err),
                     ST_OK);
    assert_true(own.step_s == s);
    sim_result_fini(&own);
    /* the same configuration every time: the same step */
    assert_true(sim_validate_step_s(&v.cat, &v.res[c]) == s);
    assert_true(sim_validate_step_s(&v.cat, &v.res[u]) == 0.0);
    plan_validate_result no_layout = v.res[c];
    no_layout.have_layout = 0;
    assert_true(sim_validate_step_s(&v.cat, &no_layout) == 0.0);
    validated_free(&v);
}

typedef struct progress_log {
    int calls, last_done, total, in_order;
} progress_log;

static void progress(void *ctx, int done, int total)
{
    progress_log *p = ctx;
    p->in_order &= done == p->last_done + 1;
    p->last_done = done;
    p->total = total;
    p->calls++;
}

static void test_rows(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    enum { N = 6 };
    plan_validate_result res[N];
    memcpy(res, v.res, sizeof res);
    double sim_s[N];
    progress_log log = {0, 0, 0, 1};
    sim_validate_rows(&v.cat, res, sim_s, N, progress, &log);
    assert_int_equal(log.calls, N);
    assert_int_equal(log.total, N);
    assert_int_equal(log.in_order, 1);
    for (int i = 0; i < N; i++) {
        assert_true(res[i].sim_time_s == sim_s[i]);
        assert_true(sim_s[i] == sim_validate_step_s(&v.cat, &v.res[i]));
        assert_int_equal(sim_s[i] > 0, res[i].compared && res[i].have_layout);
    }
    /* no progress: the same steps */
    double again[N];
    sim_validate_rows(&v.cat, res, again, N, NULL, NULL);
    assert_memory_equal(again, sim_s, sizeof again);
    validated_free(&v);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(test_step),
          cmocka_unit_test(test_rows))
