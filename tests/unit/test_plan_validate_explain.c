/*
 * test_plan_validate_explain.c: validate --explain's planner side
 * (planner/plan_validate_explain.c): a row found by its row_id (the first
 * of equal ids; -1 for none), and the terms of a compared row's prediction
 * made again: its step among them equal to the step the row was predicted
 * with; a row not compared has none.
 */
#include "test_validate_rows.h"

#include "planner/plan_validate_explain.h"

static void test_find(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    assert_int_equal(plan_validate_find(v.res, v.n, v.res[7].row_id), 7);
    assert_int_equal(plan_validate_find(v.res, v.n, "no such row"), -1);
    assert_int_equal(plan_validate_find(v.res, 0, v.res[0].row_id), -1);
    plan_validate_result twice[3] = {v.res[3], v.res[5], v.res[5]};
    assert_int_equal(plan_validate_find(twice, 3, v.res[5].row_id), 1);
    validated_free(&v);
}

static void test_terms(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    st_err err = {0};
    plan_terms *t = malloc(sizeof *t);
    int c = validated_first(&v, 1);
    t->n = -1;
    assert_int_equal(plan_validate_terms(&v.cat, &v.rows[c], &v.res[c], t, &err), ST_OK);
    assert_true(t->n > 10);
    int memory = 0, time = 0, step = 0;
    for (int i = 0; i < t->n; i++) {
        memory += !strcmp(t->v[i].group, "memory");
        time += !strcmp(t->v[i].group, "time");
        assert_non_null(t->v[i].formula);
        if (!strcmp(t->v[i].group, "time") && !strcmp(t->v[i].name, "step")) {
            assert_rel(t->v[i].value, v.res[c].pred_time_s, 1e-12);
            step++;
        }
    }
    assert_true(memory > 0 && time > 0);
    assert_int_equal(step, 1);
    int u = validated_first(&v, 0);
    assert_int_equal(plan_validate_terms(&v.cat, &v.rows[u], &v.res[u], t, &err), ST_OK);
    assert_int_equal(t->n, 0);
    free(t);
    validated_free(&v);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(test_find),
          cmocka_unit_test(test_terms))
