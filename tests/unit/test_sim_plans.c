/*
 * test_sim_plans.c: the simulations of a search's answer (sim/sim_plans.c):
 * the top plans re-ranked by their simulated steps (each step the one a
 * lone simulation of the layout gives, the order ascending, memory's order
 * kept), and one layout's trace written whole or not at all.
 */
#include "test_util.h"

#include <stdlib.h>

#include "sim/sim_plans.h"
#include "test_dir.h"
#include "test_models.h"

static plan_catalog cat;

/* The top 8 plans of the 13 x 1536 model on one p4d.24xlarge. */
static plan_result *search(const plan_model *m, plan_cluster *c, plan_objective obj)
{
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.top_k = 8;
    cfg.objective = obj;
    plan_result *r = test_search(&cat, m, "1xp4d", &cfg, c);
    assert_true(r->ntop >= 3);
    return r;
}

/* The index in before of layout l (same degrees and knobs). */
static int index_of(const plan_result *before, const plan_layout *l)
{
    for (int i = 0; i < before->ntop; i++)
        if (!memcmp(&before->top[i].layout, l, sizeof *l))
            return i;
    return -1;
}

static void top_plans_reranked(void **state)
{
    (void)state;
    plan_model m = test_gpt_13x1536();
    plan_cluster c;
    plan_result *r = search(&m, &c, PLAN_OBJ_TIME);
    plan_result *before = malloc(sizeof *before);
    assert_non_null(before);
    memcpy(before, r, sizeof *r);
    sim_config cfg;
    sim_config_default(&cfg);
    sim_top_steps col;
    st_err err = {0};
    assert_int_equal(sim_top_rank(&m, &c, r, &cfg, PLAN_OBJ_TIME, 7.5, &col, &err), ST_OK);
    assert_int_equal(col.n, r->ntop);
    assert_rel(col.threshold_pct, 7.5, 0);
    int moved = 0;
    for (int i = 0; i < col.n; i++) {
        /* the same plans, each with the step a lone simulation gives */
        int k = index_of(before, &r->top[i].layout);
        assert_true(k >= 0);
        moved |= k != i;
        sim_result s;
        assert_int_equal(sim_layout_run(&m, &c, &r->top[i].layout, &cfg, &s, &err), ST_OK);
        assert_rel(col.step_s[i], s.step_s, 0);
        sim_result_fini(&s);
        if (i > 0)
            assert_true(col.step_s[i - 1] <= col.step_s[i]);
    }
    assert_int_equal(col.reranked, moved);

    /* the ranked plans handed over in reverse: put back in order */
    memcpy(before, r, sizeof *r);
    for (int i = 0; i < r->ntop; i++)
        r->top[i] = before->top[before->ntop - 1 - i];
    assert_int_equal(sim_top_rank(&m, &c, r, &cfg, PLAN_OBJ_TIME, 7.5, &col, &err), ST_OK);
    assert_true(col.reranked);
    for (int i = 0; i < r->ntop; i++)
        assert_rel(r->top[i].est.time.step_s, before->top[i].est.time.step_s, 0);

    /* --objective memory: the planner's order stays */
    free(r);
    r = search(&m, &c, PLAN_OBJ_MEMORY);
    memcpy(before, r, sizeof *r);
    assert_int_equal(sim_top_rank(&m, &c, r, &cfg, PLAN_OBJ_MEMORY, 10, &col, &err), ST_OK);
    assert_int_equal(col.n, r->ntop);
    assert_false(col.reranked);
    assert_memory_equal(r->top, before->top, sizeof r->top[0] * (size_t)r->ntop);
    free(before);
    free(r);
}

static void top_plans_refused(void **state)
{
    (void)state;
    plan_model m = test_gpt_13x1536();
    plan_cluster c;
    plan_result *r = search(&m, &c, PLAN_OBJ_TIME);
    r->top[1].layout.pp = 0; /* no simulation has no pipeline */
    sim_config cfg;
    sim_config_default(&cfg);
    sim_top_steps col;
    st_err err = {0};
    assert_int_not_equal(sim_top_rank(&m, &c, r, &cfg, PLAN_OBJ_TIME, 10, &col, &err), ST_OK);
    assert_int_equal(col.n, 0);
    assert_true(err.msg[0] != '\0');
    free(r);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = calloc(1, 1 << 22);
    if (s)
        fread(s, 1, (1 << 22) - 1, f);
    fclose(f);
    return s;
}

static void layout_trace_whole_or_not(void **state)
{
    (void)state;
    plan_model m = test_gpt_13x1536();
    plan_cluster c;
    plan_result *r = search(&m, &c, PLAN_OBJ_TIME);
    char dir[512], path[600], missing[600];
    assert_int_equal(test_dir_make(dir, sizeof dir, "smd-sim-plans-"), 0);
    snprintf(path, sizeof path, "%s/step.json", dir);
    snprintf(missing, sizeof missing, "%s/no/step.json", dir);
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.keep_trace = 1;
    sim_result s;
    st_err err = {0};
    assert_int_equal(sim_layout_run_trace(&m, &c, &r->top[0].layout, &cfg, path, 0, &s, &err),
                     ST_OK);
    assert_true(s.ntrace > 0);
    sim_result_fini(&s);
    char *first = slurp(path);
    assert_text(first, TEXTS("traceEvents", "gpt-13x1536 on 1 x p4d.24xlarge"), NULL);
    /* an existing file only with force; refused, it stays as it was */
    assert_int_equal(sim_layout_run_trace(&m, &c, &r->top[1].layout, &cfg, path, 0, &s, &err),
                     ST_EINVAL);
    assert_text(err.msg, TEXTS("--trace"), NULL);
    char *again = slurp(path);
    assert_string_equal(again, first);
    free(again);
    err = (st_err){0};
    assert_int_equal(sim_layout_run_trace(&m, &c, &r->top[0].layout, &cfg, path, 1, &s, &err),
                     ST_OK);
    sim_result_fini(&s);
    again = slurp(path);
    assert_string_equal(again, first); /* one config, one trace */
    free(again);
    free(first);
    assert_int_not_equal(
        sim_layout_run_trace(&m, &c, &r->top[0].layout, &cfg, missing, 1, &s, &err), ST_OK);
    /* no path: the simulation alone */
    assert_int_equal(sim_layout_run_trace(&m, &c, &r->top[0].layout, &cfg, NULL, 0, &s, &err),
                     ST_OK);
    assert_true(s.step_s > 0);
    sim_result_fini(&s);
    test_dir_remove(dir);
    free(r);
}

TEST_MAIN((test_frameworks_load(), test_catalog_load(&cat)),
          cmocka_unit_test(top_plans_reranked),
          cmocka_unit_test(top_plans_refused),
          cmocka_unit_test(layout_trace_whole_or_not))
