/*
 * test_db_report.c: what `smdplan report` reads (data/db_report.c): the
 * newest search found behind a newer comparison, a search's plan #1 and a
 * comparison told apart, every stage's memory of the top plans, and the
 * simulations picked for the page (plan #1's first, a traced one for the
 * timeline, none when the traces are too long).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "data/db_report.h"
#include "test_db_fixture.h"

static void test_search(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    assert_int_equal(db_report_newest_search(f->d), 0);
    int64_t id = record_search(f, NULL);
    const char *const spec[3] = {"2xp4d", "4xp4d", "8xp4d"};
    plan_cluster cl[3];
    plan_candidate cd[3];
    int64_t cmp = record_options(f, spec, &f->cfg, cl, cd);
    /* the comparison is newer, but has no ranked plans */
    assert_int_equal(db_report_newest_search(f->d), id);

    db_report_search *s = calloc(1, sizeof *s);
    db_report_search_read(f->d, id, s);
    assert_int_equal(s->have_model, 1);
    assert_int_equal(s->model.layers, f->model.layers);
    assert_int_equal(s->comparison, 0);
    assert_true(s->one >= 0 && s->one < s->nplans);
    assert_string_equal(s->plans[s->one].role, "top");
    assert_int_equal(s->plans[s->one].rank, 1);
    assert_int_equal(s->plans[s->one].layout.tp, f->res.top[0].layout.tp);
    assert_int_equal(s->plans[s->one].layout.pp, f->res.top[0].layout.pp);
    db_report_search_read(f->d, cmp, s);
    assert_int_equal(s->comparison, 1);
    assert_int_equal(s->one, -1);
    db_report_search_read(f->d, 0, s);
    assert_int_equal(s->have_model + s->nplans + s->comparison, 0);
    assert_int_equal(s->one, -1);
    free(s);

    /* every stage of each top plan, by term, summing to what the
     * planner holds per stage */
    db_report_memory *m = calloc(1, sizeof *m);
    assert_int_equal(db_report_memory_read(f->d, id, m, &err), ST_OK);
    assert_int_equal(m->nplans, f->res.ntop);
    assert_int_equal(m->worst_only, 0);
    assert_string_equal(m->gpu, f->cluster.inst->gpu);
    const plan_estimate *e = &f->res.top[0].est;
    assert_true(m->capacity_bytes > 0);
    assert_int_equal(m->plans[0].nstages, e->nstages);
    assert_int_equal(m->plans[0].pp, e->nstages);
    for (int j = 0; j < m->plans[0].nstages; j++)
        assert_int_equal(m->plans[0].stage[j], j);
    double worst = plan_mem_need_bytes(&m->plans[0].mem[e->worst_stage]);
    assert_true(fabs(worst - plan_mem_need_bytes(&e->mem)) <= 1e-9 * worst);
    free(m);
}

static void test_sims(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    int64_t id = record_search(f, NULL), other = 0, mine = 0;
    db_report_search *s = calloc(1, sizeof *s);
    db_report_search_read(f->d, id, s);
    const db_plan *one = &s->plans[s->one];
    /* plan #2 with a trace, then plan #1 without one */
    sim_config cfg;
    sim_result r;
    simulate(f, &f->res.top[1].layout, 1, &cfg, &r);
    assert_int_equal(db_record_simulation(f->d, &f->prov, &f->model, &f->cluster,
                                          &f->res.top[1].layout, &f->res.top[1].est, &cfg, &r,
                                          &other, &err),
                     ST_OK);
    int ntrace = r.ntrace;
    sim_result_fini(&r);
    simulate(f, &f->res.top[0].layout, 0, &cfg, &r);
    assert_int_equal(db_record_simulation(f->d, &f->prov, &f->model, &f->cluster,
                                          &f->res.top[0].layout, &f->res.top[0].est, &cfg, &r,
                                          &mine, &err),
                     ST_OK);
    sim_result_fini(&r);

    db_report_sim st, tr;
    assert_int_equal(db_report_sims_read(f->d, one, ntrace, &st, &tr, &err), ST_OK);
    assert_true(st.id == mine && st.mine == 1);
    assert_string_equal(st.label + strlen(st.label) - strlen(f->cluster.inst->name),
                        f->cluster.inst->name);
    assert_int_equal(st.sim.ntrace, 0);
    assert_true(tr.id == other && tr.mine == 0);
    assert_int_equal(tr.sim.ntrace, ntrace);
    sim_result_fini(&st.sim);
    sim_result_fini(&tr.sim);
    /* a trace longer than the page draws: no timeline; no plan #1: the newest */
    assert_int_equal(db_report_sims_read(f->d, NULL, ntrace - 1, &st, &tr, &err), ST_OK);
    assert_true(st.id == mine && st.mine == 0);
    assert_int_equal(tr.id, 0);
    sim_result_fini(&st.sim);
    free(s);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test_setup_teardown(test_search, setup, teardown),
          cmocka_unit_test_setup_teardown(test_sims, setup, teardown))
