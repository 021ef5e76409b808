/*
 * test_data_json_catalog.c: smdplan catalog --json (data/data_json_catalog.c):
 * every GPU, instance type, curve and efficiency entry of the catalog as
 * loaded (with the shipped calibration), and read back as a catalog file
 * the same values: a GPU value computed rather than read (0.1 x 3, which
 * 15 digits would print as 0.3) comes back as the same double.
 */
#include "test_util.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

#include "data/data.h"
#include "data/data_json_catalog.h"
#include "test_dir.h"

static void test_arrays(void **state)
{
    (void)state;
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    assert_true(cat.neffs > 0); /* the shipped calibration's entries */
    cJSON *j = data_json_catalog(&cat);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "gpus")), cat.ngpus);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "instances")), cat.ninstances);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "curves")), cat.ncurves);
    cJSON *effs = cJSON_GetObjectItem(j, "efficiencies");
    assert_int_equal(cJSON_GetArraySize(effs), cat.neffs);
    /* an efficiency entry: each fitted parameter with its standard error */
    const plan_fw_eff *e = &cat.effs[0];
    cJSON *e0 = cJSON_GetArrayItem(effs, 0);
    assert_string_equal(cJSON_GetObjectItem(e0, "name")->valuestring, e->name);
    for (int p = 0; p < PLAN_EFF__COUNT; p++) {
        char key[48];
        snprintf(key, sizeof key, "%s_stderr", plan_eff_param_name((plan_eff_param)p));
        int fitted = (e->fitted >> p) & 1;
        assert_int_equal(cJSON_GetObjectItem(e0, key) != NULL, fitted);
        if (fitted)
            assert_rel(cJSON_GetObjectItem(e0, key)->valuedouble, e->std_err[p], 1e-15);
    }
    /* an instance type: its aliases in order */
    cJSON *i0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "instances"), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(i0, "aliases")),
                     cat.instances[0].naliases);
    cJSON_Delete(j);
    plan_catalog_free(&cat);
}

static void test_round_trip(void **state)
{
    (void)state;
    plan_catalog cat = {0}, back = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    cat.gpus[0].gemm_eff_max = 0.1 * 3; /* 0.30000000000000004 */
    cJSON *j = data_json_catalog(&cat);
    char *text = cJSON_Print(j);
    assert_non_null(text);
    assert_non_null(strstr(text, "0.30000000000000004"));
    char dir[512], path[600];
    assert_int_equal(test_dir_make(dir, sizeof dir, "smd-catjson-"), 0);
    snprintf(path, sizeof path, "%s/catalog.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(data_catalog_load(path, &back, &err), ST_OK);
    assert_int_equal(back.ngpus, cat.ngpus);
    assert_int_equal(back.ninstances, cat.ninstances);
    assert_int_equal(back.ncurves, cat.ncurves);
    assert_true(back.gpus[0].gemm_eff_max == cat.gpus[0].gemm_eff_max);
    for (int i = 0; i < cat.ngpus; i++) {
        assert_string_equal(back.gpus[i].name, cat.gpus[i].name);
        assert_true(back.gpus[i].peak_flops == cat.gpus[i].peak_flops);
        assert_true(back.gpus[i].mem_bytes == cat.gpus[i].mem_bytes);
        assert_true(back.gpus[i].hbm_eff == cat.gpus[i].hbm_eff);
    }
    for (int i = 0; i < cat.ninstances; i++) {
        assert_string_equal(back.instances[i].name, cat.instances[i].name);
        assert_string_equal(back.instances[i].gpu, cat.instances[i].gpu);
        assert_int_equal(back.instances[i].gpus_per_node, cat.instances[i].gpus_per_node);
        assert_rel(back.instances[i].net_bps, cat.instances[i].net_bps, 1e-14);
        assert_rel(back.instances[i].price_per_hour, cat.instances[i].price_per_hour, 1e-14);
    }
    cJSON_free(text);
    cJSON_Delete(j);
    plan_catalog_free(&back);
    plan_catalog_free(&cat);
    test_dir_remove(dir);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(test_arrays),
          cmocka_unit_test(test_round_trip))
