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

#include "data/data.h"
#include "data/data_calibration.h"
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

/* The bands a calibration writes: one per (stack release, chip) its
 * sources' runs cover, each the mean over those sources of their runs'
 * held-out error there; one pool per chip, each source's runs on the chip
 * together (weighted by runs) and then the mean over sources. Source a ran
 * megatron@2020 on V100 (4 runs, 3 %) and on A100 (8 runs, 2 %); source b
 * megatron@2021 (10 runs, 6 %) and nemo@2023 (5 runs, 12 %) on A100, and a
 * piece not held out (NAN) counts nowhere. The A100 pool: a's 2 % and b's
 * (10 x 6 + 5 x 12) / 15 = 8 %, mean 5 % over 2 sources and 23 runs. */
static void bands_by_release_and_chip(void **state)
{
    (void)state;
    plan_cal_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    static const struct {
        int src;
        const char *release, *family, *chip;
        int rows;
        double pct;
    } pieces[] = {
        {0, "megatron@2020", "megatron", "GV100", 4, 3.0},
        {0, "megatron@2020", "megatron", "GA100", 8, 2.0},
        {1, "megatron@2021", "megatron", "GA100", 10, 6.0},
        {1, "nemo@2023", "megatron", "GA100", 5, 12.0},
        {1, "jax@2024", "jax", "GH100", 7, NAN},
    };
    rep->nsources = 2;
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        plan_cal_source *src = &rep->source[pieces[i].src];
        plan_cal_piece *pc = &src->piece[src->npieces++];
        snprintf(pc->release, sizeof pc->release, "%s", pieces[i].release);
        snprintf(pc->framework, sizeof pc->framework, "%s", pieces[i].family);
        snprintf(pc->silicon, sizeof pc->silicon, "%s", pieces[i].chip);
        pc->rows = pieces[i].rows;
        pc->loso_mean_abs_err_pct = pieces[i].pct;
    }
    rep->loso_max_source_err_pct = 7.5;
    cJSON *j = data_bands_json(rep, "runs.csv");
    assert_non_null(j);
    char *text = cJSON_Print(j);
    data_bands b;
    st_err err = {0};
    assert_int_equal(data_bands_parse(text, strlen(text), "t", &b, &err), ST_OK);
    static const struct {
        const char *stack, *chip;
        double pct;
        int sources, rows;
    } want[] = {
        {"megatron@2020", "GV100", 3.0, 1, 4}, {"megatron@2020", "GA100", 2.0, 1, 8},
        {"megatron@2021", "GA100", 6.0, 1, 10}, {"nemo@2023", "GA100", 12.0, 1, 5},
        {"", "GV100", 3.0, 1, 4},               {"", "GA100", 5.0, 2, 23},
    };
    assert_int_equal(b.n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < b.n; i++) {
        assert_string_equal(b.v[i].stack, want[i].stack);
        assert_string_equal(b.v[i].silicon, want[i].chip);
        assert_rel(b.v[i].pct, want[i].pct, 1e-12);
        assert_int_equal(b.v[i].sources, want[i].sources);
        assert_int_equal(b.v[i].rows, want[i].rows);
    }
    assert_rel(b.worst_pct, 7.5, 1e-12);
    /* megatron@2020 on A100 is its own runs' band, though the source's first
     * runs were on V100; megatron@2022 there has none: the pool's */
    char basis[400];
    assert_rel(data_band_of(&b, "megatron@2020", "GA100", basis, sizeof basis), 2.0, 1e-12);
    assert_rel(data_band_of(&b, "megatron@2022", "GA100", basis, sizeof basis), 5.0, 1e-12);
    data_bands_free(&b);
    free(text);
    cJSON_Delete(j);
    free(rep);
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
    cJSON *fresh = data_bands_json(rep, path);
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
        cmocka_unit_test(bands_by_release_and_chip),
        cmocka_unit_test(shipped_bands_are_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
