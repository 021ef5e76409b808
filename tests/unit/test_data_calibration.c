/*
 * test_data_calibration.c: smdplan calibrate's fit written as data files
 * (data/data_calibration.h).
 *
 * A fitted GA100 pool (gemm_eff_max 0.61 over 7 runs of 2 sources, mean
 * |error| 4.3 %) goes onto every catalog GPU of that chip, each naming the
 * runs; a framework fit the catalog does not hold (rejected) writes
 * nothing. The override is written under the rule of every output: an
 * existing file is kept without force and replaced with it, a symbolic
 * link never written through. The bands written read back as written.
 */
#include "test_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "data/data.h"
#include "data/data_calibration.h"
#include "test_dir.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *b = calloc(1, 1 << 16);
    size_t n = b ? fread(b, 1, (1 << 16) - 1, f) : 0;
    (void)n;
    fclose(f);
    return b;
}

static void override_written(void **state)
{
    test_scratch *s = *state;
    setenv("SMDPLAN_DATA", SMD_TEST_DATA_DIR, 1);
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load_base(&cat, &err), ST_OK);
    plan_cal_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    rep->ngroups = 2;
    plan_cal_group *g = &rep->group[0];
    snprintf(g->silicon, sizeof g->silicon, "GA100");
    g->fitted = 1u << PLAN_EFF_GEMM;
    g->after.gemm_eff_max = 0.61;
    g->rows = 7, g->sources = 2, g->mean_abs_err_after_pct = 4.3;
    g = &rep->group[1];
    snprintf(g->framework, sizeof g->framework, "nosuch");
    snprintf(g->silicon, sizeof g->silicon, "GA100");
    g->fitted = 1u << PLAN_EFF_GEMM;

    char path[600], link[600];
    snprintf(path, sizeof path, "%s/fitted.json", s->dir);
    assert_int_equal(data_calibration_write(path, "--write", 0, &cat, rep, "runs.csv", &err),
                     ST_OK);
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    const cJSON *gpus = cJSON_GetObjectItem(root, "gpus");
    int want = 0;
    for (int i = 0; i < cat.ngpus; i++)
        want += strcmp(cat.gpus[i].silicon, "GA100") == 0;
    assert_true(want >= 2);
    assert_int_equal(cJSON_GetArraySize(gpus), want);
    const cJSON *o;
    cJSON_ArrayForEach(o, gpus)
    {
        const plan_gpu *gpu = NULL;
        for (int i = 0; i < cat.ngpus; i++)
            if (!strcmp(cat.gpus[i].name, cJSON_GetObjectItem(o, "name")->valuestring))
                gpu = &cat.gpus[i];
        assert_non_null(gpu);
        assert_string_equal(gpu->silicon, "GA100");
        assert_rel(cJSON_GetObjectItem(o, "gemm_eff_max")->valuedouble, 0.61, 1e-15);
        assert_null(cJSON_GetObjectItem(o, "hbm_eff")); /* not fitted: not written */
        assert_string_equal(cJSON_GetObjectItem(o, "source")->valuestring,
                            "fitted by smdplan calibrate to 7 runs (2 sources) of runs.csv on "
                            "GA100 GPUs: mean |error| 4.3%");
    }
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "efficiencies")), 0);
    cJSON_Delete(root);

    /* an existing file: kept without force, replaced with it */
    g = &rep->group[0];
    g->after.gemm_eff_max = 0.7;
    assert_int_equal(data_calibration_write(path, "--write", 0, &cat, rep, "runs.csv", &err),
                     ST_EINVAL);
    assert_non_null(strstr(err.msg, "--write"));
    char *kept = slurp(path);
    assert_string_equal(kept, text);
    st_err_clear(&err);
    assert_int_equal(data_calibration_write(path, "--write", 1, &cat, rep, "runs.csv", &err),
                     ST_OK);
    char *replaced = slurp(path);
    assert_non_null(strstr(replaced, "0.7"));
    /* never through a symbolic link, even with force */
    snprintf(link, sizeof link, "%s/link.json", s->dir);
    assert_int_equal(symlink(path, link), 0);
    assert_int_not_equal(data_calibration_write(link, "--write", 1, &cat, rep, "runs.csv", &err),
                         ST_OK);
    char *after = slurp(path);
    assert_string_equal(after, replaced);
    free(after);
    free(replaced);
    free(kept);
    free(text);
    free(rep);
    plan_catalog_free(&cat);
}

static void bands_written(void **state)
{
    test_scratch *s = *state;
    plan_cal_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    rep->nsources = 1;
    plan_cal_piece *pc = &rep->source[0].piece[rep->source[0].npieces++];
    snprintf(pc->release, sizeof pc->release, "megatron@2021");
    snprintf(pc->framework, sizeof pc->framework, "megatron");
    snprintf(pc->silicon, sizeof pc->silicon, "GA100");
    pc->rows = 10;
    pc->loso_mean_abs_err_pct = 6.25;
    rep->loso_max_source_err_pct = 6.25;
    char path[600];
    snprintf(path, sizeof path, "%s/bands.json", s->dir);
    st_err err = {0};
    assert_int_equal(data_bands_write(path, "--write-bands", 0, rep, "runs.csv", &err), ST_OK);
    data_bands b;
    assert_int_equal(data_bands_load(path, &b, &err), ST_OK);
    assert_int_equal(b.n, 2); /* the release's band and the chip's pool */
    assert_string_equal(b.v[0].stack, "megatron@2021");
    assert_rel(b.v[0].pct, 6.25, 1e-15);
    assert_rel(b.worst_pct, 6.25, 1e-15);
    data_bands_free(&b);
    assert_int_equal(data_bands_write(path, "--write-bands", 0, rep, "runs.csv", &err),
                     ST_EINVAL);
    free(rep);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test_setup_teardown(override_written, test_scratch_setup,
                                          test_scratch_teardown),
          cmocka_unit_test_setup_teardown(bands_written, test_scratch_setup, test_scratch_teardown))
