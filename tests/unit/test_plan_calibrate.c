/*
 * test_plan_calibrate.c: the calibrator recovers known per-(framework,
 * chip) efficiencies and says how well it predicts sources it never saw.
 *
 * Self-consistency: rows of two frameworks on one chip (Megatron-LM 2020
 * and Megatron-DeepSpeed on A100s, both without fused attention, neither
 * in FP8), two published sources each, shapes and TP degrees that weigh
 * the GEMM and memory-bound terms differently. Their reference times are
 * made by the planner itself with known efficiencies per framework (entries
 * of the catalog's "efficiencies"), then moved by a fixed +-0.4 % pattern
 * (so the fit has a residual and its standard errors are not zero). The
 * catalog is then perturbed (the entries removed, the chip's own values
 * moved far off) and plan_calibrate must find each framework's values
 * back, leave flash_eff and fp8_gemm_eff alone (no row constrains them),
 * give small non-zero standard errors, and predict every source held out
 * of the fit (leave-one-source-out), saying what predicted it. The same
 * from rows mapped beforehand with the chips' own values kept (what
 * calibrate --runs does with the executor's runs). Also: parameter-list
 * parsing, and data/calibration.json is what the fit gives back, within
 * the fit's own standard errors (FIX_SIGMAS).
 */
#include "test_util.h"

#include <gsl/gsl_errno.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "data/data_csv.h"
#include "planner/plan_calibrate.h"

#define NSHAPES 8
#define NROWS (2 * NSHAPES)
/* Sources per stack: a stack gets a fit of its own only from three or more
 * (plan_calibrate.c), and still from three with one held out. */
#define NSRC 4

/* Relative size of the pattern laid on the reference times. */
#define NOISE 0.004

/* Head dims and hidden sizes that are and are not multiples of 8 and 64,
 * sizes and TP degrees that weigh GEMM and HBM terms differently. */
static const struct {
    const char *layers, *hidden, *heads, *gpus, *tp, *batch;
} shapes[NSHAPES] = {
    {"24", "1920", "15", "1", "1", "8"},  {"30", "2304", "18", "2", "2", "16"},
    {"36", "3072", "24", "4", "4", "16"}, {"13", "1560", "12", "1", "1", "4"},
    {"20", "2600", "20", "2", "2", "8"},  {"42", "4096", "32", "8", "8", "16"},
    {"16", "2048", "16", "1", "1", "8"},  {"28", "3584", "28", "4", "4", "16"},
};

/* The known efficiencies of each framework family on GA100. The DeepSpeed
 * rows run ZeRO's engine, which sums its micro-batches' gradients without a
 * pass of its own (Megatron-DeepSpeed's main_grad pass would tie the pool's
 * HBM efficiency to its rows, which the undetermined case below needs
 * free). */
static const struct {
    const char *family, *text, *source[NSRC];
    double gemm, hbm;
} stacks[2] = {
    {"megatron", "Megatron-LM (2020)", {"mlm2020_readme", "mlm2020_blog", "mlm_c", "mlm_d"},
     0.71, 0.77},
    {"deepspeed", "DeepSpeed", {"mds_tr_a", "mds_tr_b", "mds_c", "mds_d"}, 0.62, 0.58},
};

static char times[NROWS][32];
static char ids[NROWS][8];
static plan_validate_row rows[NROWS];

/* Row i: shape i % NSHAPES for stack i / NSHAPES, from source shape % NSRC
 * (each source spans small and large). */
static void make_rows(void)
{
    for (int i = 0; i < NROWS; i++) {
        int s = i % NSHAPES, k = i / NSHAPES;
        snprintf(ids[i], sizeof ids[i], "%d", i + 1);
        rows[i] = (plan_validate_row){
            .row_id = ids[i], .source_key = stacks[k].source[s % NSRC],
            .framework = stacks[k].text, .architecture = "GPT-2 style",
            .num_layers = shapes[s].layers, .hidden_size = shapes[s].hidden,
            .num_heads = shapes[s].heads, .seq_len = "1024", .vocab_size = "51200",
            .gpu_type = "A100 (DGX-A100)", .num_gpus = shapes[s].gpus,
            .interconnect = "NVLink3/NVSwitch", .tp = shapes[s].tp, .pp = "1", .dp = "1",
            .global_batch_size = shapes[s].batch, .precision = "fp16 mixed",
            /* Megatron-LM 2020 runs the global batch at once; DeepSpeed
             * accumulates micro-batches of 2 */
            .micro_batch_size = k == 1 ? "2" : "", .iteration_time_s = times[i],
        };
    }
}

/* Every GA100 GPU's own efficiencies. */
static void set_chip(plan_catalog *cat, double gemm, double hbm)
{
    for (int i = 0; i < cat->ngpus; i++)
        if (strcmp(cat->gpus[i].silicon, "GA100") == 0) {
            cat->gpus[i].gemm_eff_max = gemm;
            cat->gpus[i].hbm_eff = hbm;
        }
}

/* The known values as the catalog's efficiencies of each family on GA100. */
static void set_known(plan_catalog *cat)
{
    free(cat->effs);
    cat->effs = calloc(2, sizeof *cat->effs);
    assert_non_null(cat->effs);
    cat->neffs = 2;
    for (int k = 0; k < 2; k++) {
        plan_fw_eff *e = &cat->effs[k];
        snprintf(e->name, sizeof e->name, "%s@GA100", stacks[k].family);
        snprintf(e->framework, sizeof e->framework, "%s", stacks[k].family);
        snprintf(e->silicon, sizeof e->silicon, "GA100");
        e->eff.gemm_eff_max = stacks[k].gemm;
        e->eff.hbm_eff = stacks[k].hbm;
        e->fitted = (1u << PLAN_EFF_GEMM) | (1u << PLAN_EFF_HBM);
    }
}

/* What the self-consistency tests start from and free after them. */
typedef struct known_fit {
    plan_catalog cat; /* data/catalog.json with the known values as its efficiencies */
    plan_validate_result *res; /* room for the rows' results */
    plan_cal_report *rep;
} known_fit;

/* Setup: the catalog and the rows (their times still to be made). */
static int load_known(void **state)
{
    gsl_set_error_handler_off();
    known_fit *fx = calloc(1, sizeof *fx);
    st_err err = {0};
    if (!fx || data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &fx->cat, &err) != ST_OK) {
        fprintf(stderr, "catalog: %s\n", err.msg);
        free(fx);
        return -1;
    }
    set_known(&fx->cat);
    make_rows();
    fx->res = calloc(NROWS, sizeof *fx->res);
    fx->rep = calloc(1, sizeof *fx->rep);
    *state = fx;
    return fx->res && fx->rep ? 0 : -1;
}

/* A test that starts from a known_fit of its own. */
#define KNOWN_FIT_TEST(test) cmocka_unit_test_setup_teardown(test, load_known, release)

/* Row i compared (into r). */
static void run_row(const plan_catalog *cat, int i, plan_validate_result *r)
{
    st_err err = {0};
    assert_int_equal(plan_validate_run(cat, &rows[i], r, NULL, &err), ST_OK);
}

/* Row i's reference time: what the planner predicts for it (into r, run
 * with a time of 1 s) times factor. */
static void make_time(const plan_catalog *cat, int i, double factor, plan_validate_result *r)
{
    snprintf(times[i], sizeof times[i], "1");
    run_row(cat, i, r);
    snprintf(times[i], sizeof times[i], "%.17g", r->pred_time_s * factor);
}

/* The catalog's fits forgotten. */
static void forget_fits(plan_catalog *cat)
{
    free(cat->effs);
    cat->effs = NULL;
    cat->neffs = 0;
}

/* Teardown. */
static int release(void **state)
{
    known_fit *fx = *state;
    free(fx->rep);
    free(fx->res);
    plan_catalog_free(&fx->cat);
    free(fx);
    return 0;
}

static const plan_cal_group *group_of(const plan_cal_report *r, const char *fw)
{
    for (int i = 0; i < r->ngroups; i++)
        if (strcmp(r->group[i].framework, fw) == 0 && strcmp(r->group[i].silicon, "GA100") == 0)
            return &r->group[i];
    fail_msg("no fit of '%s' on GA100", fw);
    return NULL;
}

static void recovers_known_values(void **state)
{
    known_fit *fx = *state;
    st_err err = {0};
    const plan_gpu *a100 = NULL;
    for (int i = 0; i < fx->cat.ngpus && !a100; i++)
        if (strcmp(fx->cat.gpus[i].name, "A100-80GB") == 0)
            a100 = &fx->cat.gpus[i];
    assert_non_null(a100);
    double flash = a100->flash_eff, fp8 = a100->fp8_gemm_eff;

    /* reference times from the known values, with a fixed pattern on them */
    for (int i = 0; i < NROWS; i++) {
        make_time(&fx->cat, i, 1 + NOISE * sin(7.0 * i), &fx->res[i]);
        if (!fx->res[i].compared)
            fail_msg("row %d not compared: %s", i + 1, fx->res[i].reason);
        /* no memory in the rows: the chip's first variant, the same chip */
        assert_string_equal(fx->cat.gpus[fx->res[i].inst.gpu_index].silicon, a100->silicon);
    }

    /* the fits forgotten, the chip's own values far off */
    forget_fits(&fx->cat);
    set_chip(&fx->cat, 0.50, 0.92);
    /* the framework efficiencies only: the chip's dimension scale (fitted
     * by default in its pool) stays at the value the times were made with */
    plan_cal_options opt = {.params = PLAN_EFF_FRAMEWORK_MASK, .loso = 1};
    assert_int_equal(plan_calibrate(&fx->cat, rows, NROWS, &opt, fx->rep, &err), ST_OK);
    assert_int_equal(fx->rep->rows_used, NROWS);
    assert_int_equal(fx->rep->ngroups, 3); /* the GA100 pool, then each framework on it */
    assert_string_equal(fx->rep->group[0].framework, "");
    assert_int_equal(fx->rep->group[0].rows, NROWS);
    /* The pool's HBM efficiency: the two stacks' known values differ, so
     * the pool's rows leave it undetermined (a standard error over half its
     * range): it keeps the chip's value instead of a fitted compromise, and
     * is reported as such. */
    print_message("pool: hbm_eff standard error %.3f, gemm_eff_max %.3f\n",
                  fx->rep->group[0].std_err[PLAN_EFF_HBM],
                  fx->rep->group[0].std_err[PLAN_EFF_GEMM]);
    assert_int_equal(fx->rep->group[0].undetermined, 1u << PLAN_EFF_HBM);
    assert_int_equal(fx->rep->group[0].fitted & (1u << PLAN_EFF_HBM), 0);
    assert_true(fx->rep->group[0].after.hbm_eff == 0.92);

    for (int k = 0; k < 2; k++) {
        const plan_cal_group *g = group_of(fx->rep, stacks[k].family);
        assert_int_equal(g->rows, NSHAPES);
        assert_int_equal(g->sources, NSRC);
        assert_int_equal(g->on_bound, 0);
        assert_int_equal(g->asked, PLAN_EFF_FRAMEWORK_MASK);
        assert_int_equal(g->fitted, (1u << PLAN_EFF_GEMM) | (1u << PLAN_EFF_HBM));
        assert_false(g->rejected);
        /* the pool's values (its HBM efficiency left at the chip's: the two
         * stacks disagree on it, see below) miss; the stack's own fit does not */
        assert_true(g->mean_abs_err_before_pct > 2.0 * g->mean_abs_err_after_pct);
        assert_true(g->mean_abs_err_after_pct < 1.0);
        assert_rel(g->after.gemm_eff_max, stacks[k].gemm, 0.02);
        assert_rel(g->after.hbm_eff, stacks[k].hbm, 0.05);
        /* standard errors: there, small, and as large as the misses */
        plan_eff after = g->after;
        double known[PLAN_EFF__COUNT] = {[PLAN_EFF_GEMM] = stacks[k].gemm,
                                         [PLAN_EFF_HBM] = stacks[k].hbm};
        for (int p = PLAN_EFF_GEMM; p <= PLAN_EFF_HBM; p++) {
            double x = *plan_eff_ref(&after, (plan_eff_param)p), se = g->std_err[p];
            if (!(se > 0 && se < 0.05 && fabs(x - known[p]) <= 3 * se))
                fail_msg("%s %s: %g, known %g, standard error %g", stacks[k].family,
                         plan_eff_param_name((plan_eff_param)p), x, known[p], se);
        }
        /* no fused attention, no FP8: left as they were */
        assert_true(g->after.flash_eff == g->before.flash_eff && g->std_err[PLAN_EFF_FLASH] == 0);
        assert_true(g->after.fp8_gemm_eff == g->before.fp8_gemm_eff &&
                    g->std_err[PLAN_EFF_FP8_GEMM] == 0);
        /* and kept in the catalog for the family on the chip */
        const plan_fw_eff *e = plan_catalog_eff(&fx->cat, stacks[k].family, "GA100");
        assert_non_null(e);
        assert_true(e->eff.gemm_eff_max == g->after.gemm_eff_max);
        assert_true(e->eff.hbm_eff == g->after.hbm_eff);
        assert_int_equal(e->fitted, g->fitted);
    }
    /* the two frameworks really differ: one pooled value would not do */
    assert_true(fabs(group_of(fx->rep, "megatron")->after.gemm_eff_max -
                     group_of(fx->rep, "deepspeed")->after.gemm_eff_max) > 0.05);
    assert_rel(a100->flash_eff, flash, 0);
    assert_rel(a100->fp8_gemm_eff, fp8, 0);

    /* every source predicted without its own runs, by its framework's fit
     * from the other sources */
    assert_int_equal(fx->rep->nsources, 2 * NSRC);
    for (int s = 0; s < fx->rep->nsources; s++) {
        const plan_cal_source *src = &fx->rep->source[s];
        assert_int_equal(src->rows, NSHAPES / NSRC);
        assert_string_equal(src->silicon, "GA100");
        assert_true(src->mean_abs_err_pct < 1.0);
        assert_false(isnan(src->loso_mean_abs_err_pct));
        assert_true(src->loso_mean_abs_err_pct < 10.0);
        char want[96];
        snprintf(want, sizeof want, "%s on GA100 from the other sources", src->framework);
        assert_string_equal(src->loso_basis, want);
        /* synthetic runs made with values inside the ranges: no fit without
         * a source ends on a bound */
        assert_string_equal(src->loso_bound, "");
    }
    assert_false(isnan(fx->rep->loso_mean_source_err_pct));
    assert_true(fx->rep->loso_max_source_err_pct >= fx->rep->loso_mean_source_err_pct);
}

/* Rows mapped beforehand (plan_calibrate_results, as calibrate --runs
 * hands in the executor's runs), with the chips' own values kept: no pool
 * is fitted, the chip's values stay where they are (far off here), and
 * each framework's values are found back from them. */
static void keeps_the_chip_values(void **state)
{
    known_fit *fx = *state;
    for (int i = 0; i < NROWS; i++) {
        make_time(&fx->cat, i, 1 + NOISE * sin(7.0 * i), &fx->res[i]);
        run_row(&fx->cat, i, &fx->res[i]);
        assert_true(fx->res[i].compared);
    }
    /* the chip's values far off, each on a bound of its range once (a
     * start where the map from the solver's free variable is flat) */
    const double starts[2][2] = {{0.50, 0.92}, {0.85, 0.30}};
    st_err err = {0};
    for (int t = 0; t < 2; t++) {
        forget_fits(&fx->cat);
        set_chip(&fx->cat, starts[t][0], starts[t][1]);
        plan_cal_options opt = {.params = PLAN_EFF_FRAMEWORK_MASK, .loso = 1, .keep_chips = 1};
        assert_int_equal(plan_calibrate_results(&fx->cat, fx->res, NROWS, &opt, fx->rep, &err),
                         ST_OK);
        assert_int_equal(fx->rep->rows_used, NROWS);
        assert_int_equal(fx->rep->ngroups, 2); /* the frameworks only */
        for (int i = 0; i < fx->cat.ngpus; i++)
            if (strcmp(fx->cat.gpus[i].silicon, "GA100") == 0)
                assert_true(fx->cat.gpus[i].gemm_eff_max == starts[t][0] &&
                            fx->cat.gpus[i].hbm_eff == starts[t][1]);
        for (int k = 0; k < 2; k++) {
            const plan_cal_group *g = group_of(fx->rep, stacks[k].family);
            assert_false(g->rejected);
            assert_true(g->before.gemm_eff_max == starts[t][0]); /* from the chip's own */
            assert_rel(g->after.gemm_eff_max, stacks[k].gemm, 0.02);
            assert_rel(g->after.hbm_eff, stacks[k].hbm, 0.05);
            assert_non_null(plan_catalog_eff(&fx->cat, stacks[k].family, "GA100"));
        }
        for (int src = 0; src < fx->rep->nsources; src++)
            assert_true(fx->rep->source[src].loso_mean_abs_err_pct < 10.0);
    }
}

/* A stack with fewer than three independent sources gets no fit of its
 * own: its rows are the chip's pool's, and the report says so; a fit driven
 * onto a bound of its physical range is flagged as a failure of the model. */
static void pools_few_sources_and_flags_bounds(void **state)
{
    known_fit *fx = *state;
    for (int i = 0; i < NROWS; i++) {
        /* Megatron's runs twice as fast as its known values make them: no
         * GEMM efficiency within the chip's ceiling reaches that */
        make_time(&fx->cat, i, i < NSHAPES ? 0.5 : 1.0, &fx->res[i]);
        /* DeepSpeed's from two sources only */
        if (i >= NSHAPES)
            rows[i].source_key = stacks[1].source[(i % NSHAPES) % 2];
        run_row(&fx->cat, i, &fx->res[i]);
    }
    forget_fits(&fx->cat);
    st_err err = {0};
    plan_cal_options opt = {.params = PLAN_EFF_FRAMEWORK_MASK};
    assert_int_equal(plan_calibrate_results(&fx->cat, fx->res, NROWS, &opt, fx->rep, &err), ST_OK);
    const plan_cal_group *ds = group_of(fx->rep, "deepspeed"), *mg = group_of(fx->rep, "megatron");
    assert_true(ds->pooled);
    assert_int_equal(ds->sources, 2);
    assert_int_equal(ds->fitted, 0);
    assert_non_null(strstr(ds->why, "2 independent sources; a stack's own fit needs 3"));
    assert_null(plan_catalog_eff(&fx->cat, "deepspeed", "GA100"));
    assert_false(mg->pooled);
    assert_non_null(plan_catalog_eff(&fx->cat, "megatron", "GA100"));
    assert_true((mg->on_bound >> PLAN_EFF_GEMM) & 1);
    assert_non_null(strstr(plan_cal_bound_source(PLAN_EFF_GEMM), "measured GEMM ceiling"));
}

static void parses_parameter_lists(void **state)
{
    (void)state;
    unsigned mask;
    st_err err = {0};
    assert_int_equal(plan_cal_params_parse("gemm_eff_max,hbm_eff,flash_eff,fp8_gemm_eff,gemm_dim_half,alloc_frac",
                                           &mask, &err),
                     ST_OK);
    assert_int_equal(mask, PLAN_CAL_ALL);
    assert_int_equal(plan_cal_params_parse("fp8_gemm_eff,hbm_eff", &mask, &err), ST_OK);
    assert_int_equal(mask, (1u << PLAN_EFF_FP8_GEMM) | (1u << PLAN_EFF_HBM));
    /* names no longer fitted, and unknown ones: one line naming it and the
     * allowed names */
    static const char *const bad[] = {"gemm_eff_max,misaligned_factor", "align_partial_factor",
                                      "gemm_eff_max,bogus", "gemm_eff", "hbm_eff,", ",hbm_eff"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st_err_clear(&err);
        assert_int_equal(plan_cal_params_parse(bad[i], &mask, &err), ST_EINVAL);
        assert_null(strchr(err.msg, '\n'));
        assert_non_null(strstr(err.msg, "fp8_gemm_eff"));
    }
    assert_non_null(strstr(err.msg, "hbm_eff"));
    st_err_clear(&err);
    assert_int_equal(plan_cal_params_parse("gemm_eff_max,bogus", &mask, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "'bogus'"));
    st_err_clear(&err);
    assert_int_equal(plan_cal_params_parse("", &mask, &err), ST_EINVAL);
    assert_null(strchr(err.msg, '\n'));
}

/* ---- the shipped calibration is a fixed point ---- */

/* How far a refit may land from the shipped value and still be the same
 * calibration, in the fit's own standard errors.
 *
 * A refit moves because the solver (GSL's trust region) stops wherever its
 * step or gradient test first passes, and GSL's linear algebra runs on the
 * BLAS kernels OpenBLAS picks for the CPU (Haswell, Zen and SkylakeX ones
 * sum in different orders): the same iterations round differently and stop
 * at another point of the minimum's valley. How far apart two such points
 * can be is the valley's width, and the standard error measures exactly
 * that: cov = s^2 (J^T W J)^-1 (plan_calibrate.h) is the quadratic model of
 * the weighted sum of squared log errors around the minimum, in which a
 * parameter moved by k standard errors (the others refitted) raises the sum
 * by k^2 s^2, k^2 of one average run's squared error among the fit's n - p.
 * At k = 0.1 that is a hundredth of one run's share, and every prediction
 * made from the value moves by a tenth of its own one-sigma band: the two
 * are the same calibration. A file left stale by changed runs, model or
 * code is caught once a value is off by more. */
#define FIX_SIGMAS 0.1

/* The most |refit - shipped| of parameter p of a fit (fitted bits, standard
 * errors) that still counts as the same value. */
static double fix_bound(unsigned fitted, const double *std_err, int p)
{
    if (!(fitted & (1u << p)))
        return 0; /* not fitted: the base catalog's value, unchanged */
    if (p == PLAN_EFF_ALLOC)
        return 2 * PLAN_CAL_ALLOC_TOL; /* Brent's: each fit within the tolerance of the minimum */
    return FIX_SIGMAS * std_err[p];
}

/* A GPU's own value of p. */
static double *gpu_param(plan_gpu *g, int p)
{
    switch (p) {
    case PLAN_EFF_GEMM: return &g->gemm_eff_max;
    case PLAN_EFF_HBM: return &g->hbm_eff;
    case PLAN_EFF_FLASH: return &g->flash_eff;
    case PLAN_EFF_FP8_GEMM: return &g->fp8_gemm_eff;
    case PLAN_EFF_DIM_HALF: return &g->gemm_dim_half;
    default: return &g->alloc_frac;
    }
}

/* The pool (every framework's runs) fitted on a GPU's chip, NULL if none. */
static const plan_cal_group *pool_of(const plan_cal_report *rep, const plan_gpu *g)
{
    const char *silicon = g->silicon[0] ? g->silicon : g->name;
    for (int i = 0; i < rep->ngroups; i++)
        if (!rep->group[i].framework[0] && strcmp(rep->group[i].silicon, silicon) == 0)
            return &rep->group[i];
    return NULL;
}

typedef struct fix_tally {
    int misses;                  /* values out of their bound */
    double worst;                /* largest |refit - shipped| / bound of the others */
    int quiet;                   /* 1: do not print the misses */
} fix_tally;

static void fix_value(fix_tally *t, const char *who, int p, double refit, double shipped,
                      double bound)
{
    double d = fabs(refit - shipped);
    if (d <= bound) {
        if (bound > 0)
            t->worst = fmax(t->worst, d / bound);
        return;
    }
    t->misses++;
    if (!t->quiet)
        print_error("%s %s: calibrate gives %.9g, data/calibration.json has %.9g (differ by "
                    "%.3g, more than %.3g): remake it\n",
                    who, plan_eff_param_name((plan_eff_param)p), refit, shipped, d, bound);
}

/* Every GPU value and fitted framework value of the refit against the
 * shipped catalog. */
static void fix_check(const plan_catalog *fit, const plan_cal_report *rep,
                      const plan_catalog *shipped, fix_tally *t)
{
    assert_int_equal(fit->ngpus, shipped->ngpus);
    for (int i = 0; i < fit->ngpus; i++) {
        plan_gpu *a = &fit->gpus[i], *b = &shipped->gpus[i];
        assert_string_equal(a->name, b->name);
        const plan_cal_group *pool = pool_of(rep, a);
        for (int p = 0; p < PLAN_EFF__COUNT; p++)
            fix_value(t, a->name, p, *gpu_param(a, p), *gpu_param(b, p),
                      pool ? fix_bound(pool->fitted, pool->std_err, p) : 0);
    }
    assert_int_equal(fit->neffs, shipped->neffs);
    for (int i = 0; i < fit->neffs; i++) {
        const plan_fw_eff *a = &fit->effs[i];
        const plan_fw_eff *b = plan_catalog_eff(shipped, a->framework, a->silicon);
        assert_non_null(b);
        assert_int_equal(a->fitted, b->fitted);
        for (int p = 0; p < PLAN_EFF__COUNT; p++)
            if (a->fitted & (1u << p))
                fix_value(t, a->name, p, *plan_eff_ref((plan_eff *)&a->eff, (plan_eff_param)p),
                          *plan_eff_ref((plan_eff *)&b->eff, (plan_eff_param)p),
                          fix_bound(a->fitted, a->std_err, p));
    }
}

/* Move one shipped value past its bound (away from the refit, by three
 * bounds; a value compared exactly by one ulp) and back: the check must
 * name it. */
static void fix_check_moved(const plan_catalog *fit, const plan_cal_report *rep,
                            plan_catalog *shipped, double *x, double refit, double bound)
{
    double keep = *x;
    *x = bound > 0 ? keep + (keep >= refit ? 3 : -3) * bound : nextafter(keep, INFINITY);
    fix_tally t = {.quiet = 1};
    fix_check(fit, rep, shipped, &t);
    *x = keep;
    assert_int_equal(t.misses, 1);
}

/* The shipped calibration (data/calibration.json) is what calibrating the
 * shipped catalog on the shipped runs gives: fit again from the base
 * catalog and every value comes back within FIX_SIGMAS of its standard
 * error (the reserve within its minimiser's tolerance, what is not fitted
 * exactly). And the check would see a stale file: any one value moved past
 * its bound is named. */
static void shipped_calibration_is_a_fixed_point(void **state)
{
    (void)state;
    st_err err = {0};
    if (!data_calibration_path())
        skip();
    plan_catalog fit = {0}, shipped = {0};
    data_csv csv;
    assert_int_equal(data_catalog_load_base(&fit, &err), ST_OK);
    assert_int_equal(data_catalog_load(NULL, &shipped, &err), ST_OK);
    assert_int_equal(data_csv_load(SMD_TEST_DATA_DIR "/reference/calibration_runs.csv", &csv, &err),
                     ST_OK);
    plan_validate_row *r = calloc((size_t)csv.nrows, sizeof *r);
    plan_cal_report *rep = calloc(1, sizeof *rep);
    assert_non_null(r);
    assert_non_null(rep);
    assert_int_equal(data_csv_validate_rows(&csv, "calibration_runs.csv", r, &err), ST_OK);
    plan_cal_options o = {.loso = 1};
    assert_int_equal(plan_calibrate(&fit, r, csv.nrows, &o, rep, &err), ST_OK);

    fix_tally t = {0};
    fix_check(&fit, rep, &shipped, &t);
    print_message("refit against data/calibration.json: %d values off, the others within "
                  "%.3f of their bound\n", t.misses, t.worst);
    if (t.misses)
        fail_msg("%d values of data/calibration.json are stale", t.misses);

    for (int i = 0; i < fit.ngpus; i++) {
        const plan_cal_group *pool = pool_of(rep, &fit.gpus[i]);
        for (int p = 0; p < PLAN_EFF__COUNT; p++)
            fix_check_moved(&fit, rep, &shipped, gpu_param(&shipped.gpus[i], p),
                            *gpu_param(&fit.gpus[i], p),
                            pool ? fix_bound(pool->fitted, pool->std_err, p) : 0);
    }
    for (int i = 0; i < fit.neffs; i++) {
        plan_fw_eff *a = &fit.effs[i];
        plan_fw_eff *b = (plan_fw_eff *)plan_catalog_eff(&shipped, a->framework, a->silicon);
        for (int p = 0; p < PLAN_EFF__COUNT; p++)
            if (a->fitted & (1u << p))
                fix_check_moved(&fit, rep, &shipped, plan_eff_ref(&b->eff, (plan_eff_param)p),
                                *plan_eff_ref(&a->eff, (plan_eff_param)p),
                                fix_bound(a->fitted, a->std_err, p));
    }
    free(rep);
    free(r);
    data_csv_free(&csv);
    plan_catalog_free(&fit);
    plan_catalog_free(&shipped);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        KNOWN_FIT_TEST(recovers_known_values),
        KNOWN_FIT_TEST(keeps_the_chip_values),
        KNOWN_FIT_TEST(pools_few_sources_and_flags_bounds),
        cmocka_unit_test(parses_parameter_lists),
        cmocka_unit_test(shipped_calibration_is_a_fixed_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
