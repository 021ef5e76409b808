/*
 * test_db_fixture.h: the records tests' shared fixture: the shipped catalog
 * and presets, a 30B model on 16 x p4d and its search, a fresh database in
 * a scratch directory; the search recorded; a simulated step; and a
 * comparison record over three instance types.
 */
#ifndef SMD_TEST_DB_FIXTURE_H
#define SMD_TEST_DB_FIXTURE_H

#include "data/data.h"
#include "test_db_util.h"

#define CATALOG SMD_TEST_DATA_DIR "/catalog.json"
#define PRESETS SMD_TEST_DATA_DIR "/models.json"
#define RUNS_CSV SMD_TEST_DATA_DIR "/reference/calibration_runs.csv"

typedef struct fixture {
    char dir[512];
    char path[600];
    plan_catalog cat;
    plan_presets presets;
    plan_model model;
    plan_cluster cluster;
    plan_config cfg;
    plan_result res;
    db *d;
    db_provenance prov;
} fixture;

static inline int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    st_err err = {0};
    tdir_make(f->dir, sizeof f->dir);
    snprintf(f->path, sizeof f->path, "%s/records.db", f->dir);
    assert_int_equal(data_catalog_load(CATALOG, &f->cat, &err), ST_OK);
    assert_int_equal(data_presets_load(PRESETS, &f->presets, &err), ST_OK);
    assert_int_equal(plan_model_resolve(&f->presets, 30e9, PLAN_ARCH_GPT, NULL, &f->model, &err),
                     ST_OK);
    assert_int_equal(plan_cluster_parse(&f->cat, "16xp4d", &f->cluster, &err), ST_OK);
    plan_config_default(&f->cfg);
    assert_int_equal(plan_search(&f->model, &f->cluster, &f->cfg, &f->res, &err), ST_OK);
    assert_true(f->res.ntop >= 3);
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &f->d, &err), ST_OK);
    f->prov = test_provenance();
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    fixture *f = *state;
    db_close(f->d);
    plan_catalog_free(&f->cat);
    plan_presets_free(&f->presets);
    test_dir_remove(f->dir);
    free(f);
    return 0;
}

/* Record the fixture's search, with sim (NULL: none) the simulated steps
 * of its top plans; the record's id. */
static inline int64_t record_search(fixture *f, const double *sim)
{
    st_err err = {0};
    int64_t id = 0;
    assert_int_equal(db_record_plan(f->d, &f->prov, &f->model, &f->cluster, &f->cfg, &f->res, sim,
                                    &id, &err),
                     ST_OK);
    return id;
}

/* The simulator on layout l of the fixture's model and cluster (seed fixed). */
static inline void simulate(fixture *f, const plan_layout *l, int trace, sim_config *cfg, sim_result *s)
{
    st_err err = {0};
    plan_costs *costs = malloc(sizeof *costs);
    sim_config_default(cfg);
    cfg->keep_trace = trace;
    cfg->seed = 1234567;
    assert_int_equal(plan_costs_compute(&f->model, &f->cluster, l, costs, &err), ST_OK);
    assert_int_equal(sim_step_run(costs, cfg, s, &err), ST_OK);
    free(costs);
}

/* Record the best plan of each of three clusters as one comparison (mode
 * "compare", 300B tokens); cl and cd get the clusters and plans. */
static inline int64_t record_options(fixture *f, const char *const spec[3], const plan_config *base,
                                     plan_cluster cl[3], plan_candidate cd[3])
{
    st_err err = {0};
    plan_config cfg = *base;
    cfg.top_k = 1;
    plan_result *r = calloc(1, sizeof *r);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(plan_cluster_parse(&f->cat, spec[i], &cl[i], &err), ST_OK);
        assert_int_equal(plan_search(&f->model, &cl[i], &cfg, r, &err), ST_OK);
        assert_true(r->ntop >= 1);
        cd[i] = r->top[0];
    }
    free(r);
    int64_t id = 0;
    assert_int_equal(db_record_plan_options(f->d, &f->prov, &f->model, &cfg, 3, cl, cd, 300e9, &id,
                                            &err),
                     ST_OK);
    return id;
}

#endif
