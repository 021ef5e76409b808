/*
 * test_plan_diff_plan.c: a side of smdplan diff searched for (planner/
 * plan_diff_plan.c): with some knobs fixed it is the search's best plan of
 * those knobs, whatever top_k the config asks; a layout too big for the
 * cluster comes back as the closest one out of memory; knobs no layout can
 * take are an error that names them; and the side handed to plan_diff
 * borrows the plan's own layout and estimate.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data.h"
#include "planner/plan_diff_plan.h"

#define CATALOG SMD_TEST_DATA_DIR "/catalog.json"
#define PRESETS SMD_TEST_DATA_DIR "/models.json"

typedef struct world {
    plan_catalog cat;
    plan_presets presets;
    plan_model model;
    plan_cluster cluster;
} world;

static void world_make(world *w, double params, const char *spec)
{
    st_err err = {0};
    memset(w, 0, sizeof *w);
    assert_int_equal(data_catalog_load(CATALOG, &w->cat, &err), ST_OK);
    assert_int_equal(data_presets_load(PRESETS, &w->presets, &err), ST_OK);
    assert_int_equal(plan_model_resolve(&w->presets, params, PLAN_ARCH_GPT, NULL, &w->model, &err),
                     ST_OK);
    assert_int_equal(plan_cluster_parse(&w->cat, spec, &w->cluster, &err), ST_OK);
}

static void world_free(world *w)
{
    plan_catalog_free(&w->cat);
    plan_presets_free(&w->presets);
}

/* The side of w's model and cluster searched for with TP and PP fixed and
 * top_k plans asked (0: the default), as --a tp=TP,pp=PP: it has those
 * knobs; cfg gets the config searched with. */
static void side_search(const world *w, int tp, int pp, int top_k, plan_config *cfg,
                        plan_diff_plan *p)
{
    st_err err = {0};
    char what[48];
    plan_config_default(cfg);
    cfg->tp = tp;
    cfg->pp = pp;
    if (top_k)
        cfg->top_k = top_k;
    snprintf(what, sizeof what, "--a tp=%d,pp=%d", tp, pp);
    memset(p, 0, sizeof *p);
    assert_int_equal(plan_diff_plan_search(&w->model, &w->cluster, cfg, what, p, &err), ST_OK);
    assert_int_equal(p->layout.tp, tp);
    assert_int_equal(p->layout.pp, pp);
}

static void test_best(void **state)
{
    (void)state;
    world w;
    world_make(&w, 30e9, "16xp4d");
    st_err err = {0};
    plan_config cfg;
    plan_diff_plan p;
    side_search(&w, 8, 1, 5, &cfg, &p);
    assert_int_equal(p.oom, 0);
    assert_string_equal(p.model, w.model.name);
    assert_string_equal(p.cluster, "16 x p4d.24xlarge");
    assert_string_equal(p.name, ""); /* the caller's */
    /* the search's own #1 with the same knobs */
    plan_result *r = calloc(1, sizeof *r);
    assert_int_equal(plan_search(&w.model, &w.cluster, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 1);
    assert_int_equal(p.layout.dp, r->top[0].layout.dp);
    assert_int_equal(p.layout.micro_batch, r->top[0].layout.micro_batch);
    assert_true(p.est.time.step_s == r->top[0].est.time.step_s);
    free(r);
    /* the side borrows it */
    p.band_pct = 9;
    plan_diff_side s = plan_diff_plan_side(&p);
    assert_ptr_equal(s.layout, &p.layout);
    assert_ptr_equal(s.est, &p.est);
    assert_int_equal(s.oom, 0);
    assert_true(s.band_pct == 9);
    world_free(&w);
}

static void test_oom_and_none(void **state)
{
    (void)state;
    world w;
    world_make(&w, 175e9, "2xp4d");
    plan_config cfg;
    plan_diff_plan p;
    side_search(&w, 8, 2, 0, &cfg, &p);
    assert_int_equal(p.oom, 1);
    assert_int_equal(p.est.reject, PLAN_REJ_OOM);
    world_free(&w);

    /* TP across the nodes is not searched: nothing can be evaluated */
    world_make(&w, 30e9, "16xp4d");
    plan_config_default(&cfg);
    cfg.tp = 16;
    st_err err = {0};
    assert_int_equal(plan_diff_plan_search(&w.model, &w.cluster, &cfg, "--a tp=16", &p, &err),
                     ST_EINVAL);
    assert_text(err.msg, TEXTS("--a tp=16: no layout of these knobs can be evaluated on 16 x "
                               "p4d.24xlarge"),
                NULL);
    world_free(&w);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(test_best),
          cmocka_unit_test(test_oom_and_none))
