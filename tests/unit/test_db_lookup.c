/*
 * test_db_lookup.c: one answer from a database by its path (data/db_lookup.c):
 * the plan of a rank of a search record and its model, a record's own plan
 * taken when no rank is asked, a rank the record lacks refused, and a
 * database that is not there read as nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "data/db_lookup.h"
#include "test_db_fixture.h"

static void test_plan_pick(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    int64_t id = record_search(f, NULL);
    db_plan p;
    plan_model m;
    /* rank 3 of 16 x p4d's search: the planner's third plan, on 16 nodes */
    assert_int_equal(db_plan_pick(f->path, id, 3, &p, &m, &err), ST_OK);
    assert_string_equal(p.role, "top");
    assert_int_equal(p.rank, 3);
    assert_int_equal(p.nodes, 16);
    assert_string_equal(p.instance_type, f->cluster.inst->name);
    const plan_layout *l3 = &f->res.top[2].layout;
    assert_int_equal(p.layout.tp, l3->tp);
    assert_int_equal(p.layout.pp, l3->pp);
    assert_int_equal(p.layout.dp, l3->dp);
    assert_int_equal(p.layout.micro_batch, l3->micro_batch);
    assert_int_equal(m.layers, f->model.layers);
    assert_int_equal(m.hidden, f->model.hidden);
    /* no rank asked: the best */
    assert_int_equal(db_plan_pick(f->path, id, 0, &p, &m, &err), ST_OK);
    assert_int_equal(p.rank, 1);
    assert_int_equal(p.layout.tp, f->res.top[0].layout.tp);
    assert_int_equal(p.layout.pp, f->res.top[0].layout.pp);
    /* a rank past the search's: refused, naming it */
    int past = f->res.ntop + 1;
    assert_int_equal(db_plan_pick(f->path, id, past, &p, &m, &err), ST_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "no plan of rank %d", past);
    assert_non_null(strstr(err.msg, want));
}

static void test_bench_newest_none(void **state)
{
    fixture *f = *state;
    char missing[700];
    snprintf(missing, sizeof missing, "%s/none.db", f->dir);
    plan_bench_cpu *cpu = calloc(1, sizeof *cpu);
    int have_cpu = 0;
    assert_int_equal(db_bench_newest(missing, "vm", cpu, &have_cpu, NULL, NULL), 0);
    assert_int_equal(have_cpu, 0);
    /* a database without bench records */
    assert_int_equal(db_bench_newest(f->path, "vm", cpu, &have_cpu, NULL, NULL), 0);
    assert_int_equal(have_cpu, 0);
    free(cpu);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test_setup_teardown(test_plan_pick, setup, teardown),
          cmocka_unit_test_setup_teardown(test_bench_newest_none, setup, teardown))
