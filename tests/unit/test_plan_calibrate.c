/*
 * test_plan_calibrate.c: the calibrator recovers known parameters.
 *
 * Self-consistency: reference times are made by the planner itself with
 * known A100 efficiencies on rows of different shapes and layouts (Megatron-
 * LM 2020 style: time given, full recompute, unfused attention, so
 * gemm_eff_max, misaligned_factor, align_partial_factor and hbm_eff act and
 * flash_eff does not);
 * the catalog is then perturbed and the fit must find the known values back,
 * leave flash_eff alone (the rows do not constrain it), and bring the error
 * to zero. Also: parameter-list parsing and a GPU without rows.
 */
#include "test_util.h"

#include <gsl/gsl_errno.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "planner/plan_calibrate.h"

#define NROWS 6

/* Shapes with a head dim that is not a multiple of 8 in two of them (the
 * misaligned path) and hidden sizes that are multiples of 8 but not of 64 in
 * the same two (A100's second alignment tier), sizes and TP degrees that weigh GEMM and HBM terms
 * differently. */
static const struct {
    const char *layers, *hidden, *heads, *gpus, *tp, *batch;
} shapes[NROWS] = {
    {"24", "1920", "15", "1", "1", "8"},  {"30", "2304", "18", "2", "2", "16"},
    {"36", "3072", "24", "4", "4", "16"}, {"13", "1560", "12", "1", "1", "4"},
    {"20", "2600", "20", "2", "2", "8"},  {"42", "4096", "32", "8", "8", "16"},
};

static char times[NROWS][32];
static char ids[NROWS][8];
static plan_validate_row rows[NROWS];

static void make_rows(void)
{
    for (int i = 0; i < NROWS; i++) {
        snprintf(ids[i], sizeof ids[i], "%d", i + 1);
        rows[i] = (plan_validate_row){
            .row_id = ids[i], .source_key = "megatron_readme_2020",
            .framework = "Megatron-LM (2020)", .architecture = "GPT-2 style",
            .num_layers = shapes[i].layers, .hidden_size = shapes[i].hidden,
            .num_heads = shapes[i].heads, .seq_len = "1024", .vocab_size = "51200",
            .gpu_type = "A100 (DGX-A100)", .num_gpus = shapes[i].gpus,
            .interconnect = "NVLink3/NVSwitch", .tp = shapes[i].tp, .pp = "1", .dp = "1",
            .global_batch_size = shapes[i].batch, .precision = "fp16 mixed",
            .iteration_time_s = times[i],
        };
    }
}

static int gpu_index(const plan_catalog *cat, const char *name)
{
    for (int i = 0; i < cat->ngpus; i++)
        if (strcmp(cat->gpus[i].name, name) == 0)
            return i;
    return -1;
}

/* Set the four fitted efficiencies on every GPU of the A100's chip. */
static void set_ga100(plan_catalog *cat, double gemm, double mis, double hbm, double partial)
{
    for (int i = 0; i < cat->ngpus; i++) {
        plan_gpu *g = &cat->gpus[i];
        if (strcmp(g->silicon, "GA100") != 0)
            continue;
        g->gemm_eff_max = gemm;
        g->misaligned_factor = mis;
        g->hbm_eff = hbm;
        g->align_partial_factor = partial;
    }
}

static void recovers_known_values(void **state)
{
    gsl_set_error_handler_off();
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &cat, &err), ST_OK);
    /* The rows name a 2020 DGX A100 (A100-40GB); the fit is asked for the
     * A100-80GB: the same chip, so it must use those rows and set both. */
    int g = gpu_index(&cat, "A100-80GB"), g40 = gpu_index(&cat, "A100-40GB");
    assert_true(g >= 0 && g40 >= 0);
    plan_gpu *gpu = &cat.gpus[g];
    set_ga100(&cat, 0.71, 0.40, 0.77, 0.80);
    double flash = gpu->flash_eff;

    /* reference times from the known values */
    make_rows();
    plan_validate_result *r = malloc(sizeof *r);
    for (int i = 0; i < NROWS; i++) {
        snprintf(times[i], sizeof times[i], "1");
        assert_int_equal(plan_validate_run(&cat, &rows[i], r, NULL, &err), ST_OK);
        assert_true(r->compared);
        snprintf(times[i], sizeof times[i], "%.17g", r->pred_time_s);
    }
    free(r);

    /* The second alignment tier alone first: from 1.0 (its default, on the
     * bound of its range) back to 0.80. */
    set_ga100(&cat, 0.71, 0.40, 0.77, 1.0);
    plan_calibration cal;
    assert_int_equal(plan_calibrate_gpu(&cat, g, rows, NROWS, 1u << PLAN_CAL_ALIGN_PARTIAL, &cal,
                                        &err), ST_OK);
    assert_true(cal.mean_abs_err_before_pct > 1.0);
    assert_true(cal.mean_abs_err_after_pct < 0.01);
    assert_rel(gpu->align_partial_factor, 0.80, 1e-3);

    set_ga100(&cat, 0.55, 0.8, 0.5, 0.80);
    unsigned mask = (1u << PLAN_CAL_GEMM_EFF_MAX) | (1u << PLAN_CAL_MISALIGNED) |
                    (1u << PLAN_CAL_HBM_EFF) | (1u << PLAN_CAL_FLASH_EFF);
    assert_int_equal(plan_calibrate_gpu(&cat, g, rows, NROWS, mask, &cal, &err), ST_OK);
    assert_int_equal(cal.rows, NROWS);
    assert_true(cal.mean_abs_err_before_pct > 5.0);
    assert_true(cal.mean_abs_err_after_pct < 0.01);
    assert_rel(gpu->gemm_eff_max, 0.71, 1e-3);
    assert_rel(gpu->misaligned_factor, 0.40, 1e-2);
    assert_rel(gpu->hbm_eff, 0.77, 1e-2);
    assert_string_equal(cal.silicon, "GA100");
    const plan_gpu *other = &cat.gpus[g40]; /* the same chip got the same values */
    assert_rel(other->gemm_eff_max, gpu->gemm_eff_max, 0);
    assert_rel(other->hbm_eff, gpu->hbm_eff, 0);
    assert_rel(other->misaligned_factor, gpu->misaligned_factor, 0);
    assert_true(cal.fitted & (1u << PLAN_CAL_GEMM_EFF_MAX));
    assert_false(cal.fitted & (1u << PLAN_CAL_FLASH_EFF)); /* no fused attention here */
    assert_rel(gpu->flash_eff, flash, 0);

    /* A GPU none of the rows use: a result with no rows, nothing changed. */
    int h = gpu_index(&cat, "H100-80GB");
    double before = cat.gpus[h].gemm_eff_max;
    assert_int_equal(plan_calibrate_gpu(&cat, h, rows, NROWS, mask, &cal, &err), ST_OK);
    assert_int_equal(cal.rows, 0);
    assert_rel(cat.gpus[h].gemm_eff_max, before, 0);
    plan_catalog_free(&cat);
}

static void parses_parameter_lists(void **state)
{
    unsigned mask;
    st_err err = {0};
    assert_int_equal(plan_cal_params_parse("gemm_eff_max,flash_eff", &mask, &err), ST_OK);
    assert_int_equal(mask, (1u << PLAN_CAL_GEMM_EFF_MAX) | (1u << PLAN_CAL_FLASH_EFF));
    assert_int_equal(plan_cal_params_parse("gemm_eff_max,bogus", &mask, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "bogus"));
    st_err_clear(&err);
    assert_int_equal(plan_cal_params_parse("", &mask, &err), ST_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recovers_known_values),
        cmocka_unit_test(parses_parameter_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
