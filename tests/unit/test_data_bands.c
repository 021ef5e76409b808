/*
 * test_data_bands.c: the error bands of predicted steps.
 *
 * A step carries the held-out error of its evidence: its stack release's
 * runs on its chip (each published source predicted without it), else the
 * chip pool's, else the worst source held out on any chip. The shipped
 * data/error_bands.json must be what calibrating the shipped runs gives
 * (remake it with smdplan calibrate data/reference/calibration_runs.csv
 * --write-bands data/error_bands.json), as data/calibration.json is.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "data/data.h"
#include "data/data_csv.h"
#include "planner/plan_calibrate.h"

static const char *const sample =
    "{\"bands\": [{\"stack\": \"nemo@2024\", \"framework\": \"megatron\", \"silicon\": "
    "\"GH100\", \"heldout_mean_abs_err_pct\": 8.24, \"sources\": 3, \"rows\": 107}, "
    "{\"stack\": \"megatron@2024\", \"framework\": \"megatron\", \"silicon\": \"GH100\", "
    "\"heldout_mean_abs_err_pct\": 5.5, \"sources\": 2, \"rows\": 20}, "
    "{\"stack\": \"fsdp@2024\", \"framework\": \"fsdp\", \"silicon\": \"GH100\", "
    "\"heldout_mean_abs_err_pct\": 14.92, \"sources\": 1, \"rows\": 216}],"
    " \"pools\": [{\"silicon\": \"GH100\", \"heldout_mean_abs_err_pct\": 9.91, \"sources\": 4, "
    "\"rows\": 323}], \"worst_heldout_source_pct\": 14.92}";

static void lookup_rule(void **state)
{
    (void)state;
    data_bands b;
    st_err err = {0};
    char basis[400];
    assert_int_equal(data_bands_parse(sample, strlen(sample), "t", &b, &err), ST_OK);
    /* the release's own runs on the chip, not its family's: two releases
     * of one family carry their own bands */
    assert_rel(data_band_of(&b, "nemo@2024", "GH100", basis, sizeof basis), 8.24, 1e-12);
    assert_non_null(strstr(basis, "nemo@2024 on GH100"));
    assert_non_null(strstr(basis, "3 published sources"));
    assert_rel(data_band_of(&b, "megatron@2024", "GH100", basis, sizeof basis), 5.5, 1e-12);
    assert_non_null(strstr(basis, "megatron@2024 on GH100"));
    /* one source: said as one, not "each of its 1 published source" */
    assert_rel(data_band_of(&b, "fsdp@2024", "GH100", basis, sizeof basis), 14.92, 1e-12);
    assert_non_null(strstr(basis, "its one published source (216 runs)"));
    /* no runs of this release on the chip, though its family has some:
     * the chip's pool */
    assert_rel(data_band_of(&b, "megatron@2022", "GH100", basis, sizeof basis), 9.91, 1e-12);
    assert_non_null(strstr(basis, "no megatron@2022 runs on GH100"));
    assert_rel(data_band_of(&b, "smp@v1", "GH100", basis, sizeof basis), 9.91, 1e-12);
    assert_non_null(strstr(basis, "no smp@v1 runs on GH100"));
    /* no run on the chip at all: the worst source held out */
    assert_rel(data_band_of(&b, "megatron@2024", "TU104", basis, sizeof basis), 14.92, 1e-12);
    assert_non_null(strstr(basis, "no published run on TU104"));
    data_bands_free(&b);
    /* a band without its evidence is refused */
    static const char *const bad[] = {
        "{\"bands\": [{\"stack\": \"m@1\", \"framework\": \"m\", \"silicon\": \"X\", "
        "\"heldout_mean_abs_err_pct\": 5}], \"pools\": [], \"worst_heldout_source_pct\": 1}",
        /* a band keyed by family alone (before releases had their own) */
        "{\"bands\": [{\"framework\": \"m\", \"silicon\": \"X\", \"heldout_mean_abs_err_pct\": 5, "
        "\"sources\": 1, \"rows\": 1}], \"pools\": [], \"worst_heldout_source_pct\": 1}",
        "{\"bands\": [], \"pools\": []}",
        "{\"bands\": [], \"pools\": [{\"silicon\": \"X\", \"heldout_mean_abs_err_pct\": -1, "
        "\"sources\": 1, \"rows\": 1}], \"worst_heldout_source_pct\": 1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(data_bands_parse(bad[i], strlen(bad[i]), "t", &b, &err), ST_EINVAL);
        assert_int_equal(b.n, 0);
    }
}

/* The shipped bands are the held-out errors of the shipped fit: calibrate
 * the published runs again (leave-one-source-out) and compare every number
 * to a quarter of a percentage point, a quarter of the unit a band is shown
 * in. The refit is the same calibration only to its minimiser's tolerance,
 * which moves with the BLAS kernels (llm-foundry's 216 runs: 14.92 % with the ones
 * OpenBLAS picks here, 14.97 % with its Haswell ones); a band left stale by
 * changed runs, model or code is caught once it is off by more. */
#define BAND_TOL_PCT 0.25
static void shipped_bands_are_current(void **state)
{
    (void)state;
    setenv("SMDPLAN_DATA", SMD_TEST_DATA_DIR, 1);
    plan_catalog cat = {0};
    data_csv csv = {0};
    st_err err = {0};
    const char *path = SMD_TEST_DATA_DIR "/reference/calibration_runs.csv";
    assert_int_equal(data_catalog_load_base(&cat, &err), ST_OK);
    assert_int_equal(data_csv_load(path, &csv, &err), ST_OK);
    plan_validate_row *rows = calloc((size_t)csv.nrows, sizeof *rows);
    plan_cal_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rows);
    assert_non_null(rep);
    assert_int_equal(data_csv_validate_rows(&csv, path, rows, &err), ST_OK);
    plan_cal_options opt = {0};
    opt.loso = 1;
    assert_int_equal(plan_calibrate(&cat, rows, csv.nrows, &opt, rep, &err), ST_OK);
    cJSON *fresh = cli_bands_json(rep, path);
    assert_non_null(fresh);
    char *text = cJSON_Print(fresh);
    data_bands want, got;
    assert_int_equal(data_bands_parse(text, strlen(text), "fresh", &want, &err), ST_OK);
    assert_int_equal(data_bands_load(NULL, &got, &err), ST_OK);
    assert_int_equal(got.n, want.n);
    for (int i = 0; i < want.n; i++) {
        assert_string_equal(got.v[i].stack, want.v[i].stack);
        assert_string_equal(got.v[i].framework, want.v[i].framework);
        assert_string_equal(got.v[i].silicon, want.v[i].silicon);
        if (fabs(got.v[i].pct - want.v[i].pct) > BAND_TOL_PCT)
            print_error("%s on %s: data/error_bands.json has %.2f %%, calibrate gives %.2f %%: "
                        "remake it\n", got.v[i].stack[0] ? got.v[i].stack : "pool",
                        got.v[i].silicon, got.v[i].pct,
                        want.v[i].pct);
        assert_true(fabs(got.v[i].pct - want.v[i].pct) <= BAND_TOL_PCT);
        assert_int_equal(got.v[i].sources, want.v[i].sources);
    }
    assert_true(fabs(got.worst_pct - want.worst_pct) <= BAND_TOL_PCT);
    data_bands_free(&got);
    data_bands_free(&want);
    free(text);
    cJSON_Delete(fresh);
    free(rep);
    free(rows);
    data_csv_free(&csv);
    plan_catalog_free(&cat);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookup_rule),
        cmocka_unit_test(shipped_bands_are_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
