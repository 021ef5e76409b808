/*
 * test_data_diff.c: smdplan diff's records and JSON (data/data_diff.c): a
 * recorded plan of a given rank read back with its layout, prediction,
 * model, cluster and the band of its stack on its chip; a rank the record
 * does not hold and a record that does not exist are errors that say so;
 * an instance type the catalog no longer has gives no band and says why;
 * and the --json document holds both sides, B's step less A's, and
 * whether the steps lie within each other's bands.
 */
#include <cjson/cJSON.h>

#include "data/data_diff.h"
#include "test_db_fixture.h"

static void test_read(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    int64_t id = record_search(f, NULL);
    plan_diff_plan p;
    memset(&p, 0, sizeof p);
    assert_int_equal(data_diff_plan_read(f->path, id, 2, &p, &err), ST_OK);
    const plan_candidate *two = &f->res.top[1];
    assert_int_equal(p.layout.tp, two->layout.tp);
    assert_int_equal(p.layout.pp, two->layout.pp);
    assert_int_equal(p.layout.dp, two->layout.dp);
    assert_rel(p.est.time.step_s, two->est.time.step_s, 1e-12);
    assert_int_equal(p.oom, 0);
    char name[32];
    snprintf(name, sizeof name, "%lld:2", (long long)id);
    assert_string_equal(p.name, name);
    assert_string_equal(p.model, f->model.name);
    assert_string_equal(p.cluster, "16 x p4d.24xlarge");
    assert_true(p.band_pct > 0);
    assert_true(strlen(p.band_basis) > 0);

    assert_int_equal(data_diff_plan_read(f->path, id, 99, &p, &err), ST_EINVAL);
    assert_text(err.msg, TEXTS("has no plan of rank 99 with its prediction"), NULL);
    assert_int_equal(data_diff_plan_read(f->path, id + 5, 1, &p, &err), ST_ENOENT);
}

static void test_not_in_catalog(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_instance custom = *f->cluster.inst;
    snprintf(custom.name, sizeof custom.name, "custom.box");
    plan_cluster c = f->cluster;
    c.inst = &custom;
    int64_t id = 0;
    assert_int_equal(db_record_plan(f->d, &f->prov, &f->model, &c, &f->cfg, &f->res, NULL, &id,
                                    &err),
                     ST_OK);
    plan_diff_plan p;
    memset(&p, 0, sizeof p);
    assert_int_equal(data_diff_plan_read(f->path, id, 1, &p, &err), ST_OK);
    assert_string_equal(p.cluster, "16 x custom.box");
    assert_true(p.band_pct == 0);
    assert_string_equal(p.band_basis, "no band: custom.box is not in the catalog");
}

static void test_json(void **state)
{
    fixture *f = *state;
    plan_diff_plan a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    snprintf(a.name, sizeof a.name, "A");
    snprintf(b.name, sizeof b.name, "B");
    a.layout = f->res.top[0].layout;
    a.est = f->res.top[0].est;
    b.layout = f->res.top[1].layout;
    b.est = f->res.top[1].est;
    b.oom = 1;
    a.band_pct = b.band_pct = 50; /* wide: within */
    snprintf(a.band_basis, sizeof a.band_basis, "basis");
    cJSON *j = data_diff_json(&a, &b);
    assert_non_null(j);
    cJSON *ja = cJSON_GetObjectItem(j, "a"), *jb = cJSON_GetObjectItem(j, "b");
    assert_string_equal(cJSON_GetObjectItem(ja, "name")->valuestring, "A");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ja, "fits")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(jb, "fits")));
    assert_non_null(cJSON_GetObjectItem(ja, "plan"));
    assert_true(cJSON_GetObjectItem(ja, "step_band_pct")->valuedouble == 50);
    assert_string_equal(cJSON_GetObjectItem(ja, "band_basis")->valuestring, "basis");
    assert_rel(cJSON_GetObjectItem(j, "step_difference_s")->valuedouble,
               b.est.time.step_s - a.est.time.step_s, 1e-12);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "within_error_bands")));
    cJSON_Delete(j);
    a.band_pct = b.band_pct = 0; /* no bands and another step: not within */
    b.est.time.step_s = 1.1 * a.est.time.step_s;
    j = data_diff_json(&a, &b);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "within_error_bands")));
    cJSON_Delete(j);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test_setup_teardown(test_read, setup, teardown),
          cmocka_unit_test_setup_teardown(test_not_in_catalog, setup, teardown),
          cmocka_unit_test_setup_teardown(test_json, setup, teardown))
