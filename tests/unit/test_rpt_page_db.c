/*
 * test_rpt_page_db.c: the sections of smdplan report read from the records
 * (reports/rpt_page_db.c), on a database holding a 30B search on 16 x p4d:
 * a recorded plan handed over field by field; the titles naming the model
 * and plan #1's cluster; the memory and TP x PP plots of the search drawn;
 * the scaling plot drawn only once a comparison of two clusters or more is
 * recorded for the model; the stages plot only once a simulation is; no
 * accuracy plot without a measured run; and the summary written.
 * Images are not rendered (.dat and .gp only).
 */
#include "reports/rpt_page_db.h"
#include "test_db_fixture.h"

static int has_file(const char *dir, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static void test_sections(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    int64_t id = record_search(f, NULL);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/report", f->dir);
    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.render = 0;
    rpt_report *r = NULL;
    assert_int_equal(rpt_report_new(dir, &cfg, &r, &err), ST_OK);

    db_report_search *s = calloc(1, sizeof *s);
    db_report_search_read(f->d, id, s);
    assert_true(s->one >= 0);
    const db_plan *one = &s->plans[s->one];
    rpt_page_plan p = rpt_page_plan_of(one);
    assert_ptr_equal(p.role, one->role);
    assert_ptr_equal(p.layout, &one->layout);
    assert_ptr_equal(p.est, &one->est);
    assert_int_equal(p.rank, 1);
    assert_int_equal(p.nodes, 16);
    assert_int_equal(p.have_est, one->have_est);
    assert_true(p.simulated_s == one->simulated_s);
    char title[200], scale[200];
    rpt_page_db_titles(s, title, sizeof title, scale, sizeof scale);
    assert_text(title, TEXTS(f->model.name, "on 16 x p4d.24xlarge"), NULL);
    assert_text(scale, TEXTS(f->model.name, "the best layout of each instance type"), NULL);

    rpt_page_launch launch = {"launch", "torchrun ...", NULL};
    assert_int_equal(rpt_page_db_summary(r, s, &launch, &err), ST_OK);
    int worst_only = -1;
    assert_int_equal(rpt_page_db_memory(r, f->d, id, title, &worst_only, &err), ST_OK);
    assert_int_equal(worst_only, 0);
    assert_true(has_file(dir, "memory.dat") && has_file(dir, "memory.gp"));
    assert_int_equal(rpt_page_db_grid(r, f->d, id, title, &err), ST_OK);
    assert_true(has_file(dir, "grid.dat"));
    int nplots = rpt_report_nplots(r);
    assert_int_equal(nplots, 2);

    /* nothing recorded yet for these: nothing drawn, no error */
    int stages = -1, timeline = -1;
    assert_int_equal(rpt_page_db_scaling(r, f->d, id, scale, &err), ST_OK);
    assert_int_equal(rpt_page_db_simulations(r, f->d, one, &stages, &timeline, &err), ST_OK);
    assert_int_equal(stages + timeline, 0);
    assert_int_equal(rpt_page_db_accuracy(r, f->d, &err), ST_OK);
    assert_int_equal(rpt_report_nplots(r), nplots);
    assert_false(has_file(dir, "scaling.dat") || has_file(dir, "stages.dat"));

    /* a comparison of three clusters, and plan #1 simulated */
    const char *const spec[3] = {"2xp4d", "4xp4d", "8xp4d"};
    plan_cluster cl[3];
    plan_candidate cd[3];
    record_options(f, spec, &f->cfg, cl, cd);
    assert_int_equal(rpt_page_db_scaling(r, f->d, id, scale, &err), ST_OK);
    assert_true(has_file(dir, "scaling.dat"));
    sim_config sc;
    sim_result sr;
    int64_t sim_id = 0;
    simulate(f, &f->res.top[0].layout, 0, &sc, &sr);
    assert_int_equal(db_record_simulation(f->d, &f->prov, &f->model, &f->cluster,
                                          &f->res.top[0].layout, &f->res.top[0].est, &sc, &sr,
                                          &sim_id, &err),
                     ST_OK);
    sim_result_fini(&sr);
    assert_int_equal(rpt_page_db_simulations(r, f->d, one, &stages, &timeline, &err), ST_OK);
    assert_int_equal(stages, 1);
    assert_int_equal(timeline, 0); /* recorded without a trace */
    assert_true(has_file(dir, "stages.dat"));
    assert_int_equal(rpt_report_nplots(r), nplots + 2);
    free(s);
    rpt_report_free(r);
}

/* A comparison's record: its summary is the comparison's, titles without
 * a cluster. */
static void test_comparison(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    const char *const spec[3] = {"2xp4d", "4xp4d", "8xp4d"};
    plan_cluster cl[3];
    plan_candidate cd[3];
    int64_t id = record_options(f, spec, &f->cfg, cl, cd);
    db_report_search *s = calloc(1, sizeof *s);
    db_report_search_read(f->d, id, s);
    assert_int_equal(s->comparison, 1);
    char title[200], scale[200];
    rpt_page_db_titles(s, title, sizeof title, scale, sizeof scale);
    assert_text(title, TEXTS(f->model.name), TEXTS(" on "));
    char dir[600];
    snprintf(dir, sizeof dir, "%s/cmp", f->dir);
    rpt_report *r = NULL;
    assert_int_equal(rpt_report_new(dir, NULL, &r, &err), ST_OK);
    assert_int_equal(rpt_page_db_summary(r, s, NULL, &err), ST_OK);
    free(s);
    rpt_report_free(r);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test_setup_teardown(test_sections, setup, teardown),
          cmocka_unit_test_setup_teardown(test_comparison, setup, teardown))
