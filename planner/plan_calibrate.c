/*
 * plan_calibrate.c: least-squares fit of one GPU type's efficiency
 * parameters to measured runs (see plan_calibrate.h).
 *
 * Error of a row: e = log(predicted / measured iteration time), so a 10 %
 * miss weighs the same on a 1 s step and a 100 s step; the fit minimises the
 * sum of |e| (see residuals()). Each parameter is
 * searched inside its physical range through a logistic map
 * x = lo + (hi - lo) / (1 + exp(-u)), so the unconstrained trust-region
 * solver (GSL multifit_nlinear, Levenberg-Marquardt with geodesic
 * acceleration off, finite-difference Jacobian) never leaves it. A parameter
 * the rows do not constrain (its Jacobian column is zero, e.g. flash_eff for
 * runs without fused attention) is left as it was.
 */
#include "planner/plan_calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

static const struct {
    const char *name;
    double lo, hi;               /* physical range searched */
} cal_params[PLAN_CAL__COUNT] = {
    /* Ceiling 0.90: an isolated large GEMM reaches about 0.81 of the dense
     * tensor peak on H100 and 0.80 on H200 (measured, reference/hardware.md);
     * a training step's GEMMs do no better. */
    [PLAN_CAL_GEMM_EFF_MAX] = {"gemm_eff_max", 0.30, 0.90},
    [PLAN_CAL_GEMM_DIM_HALF] = {"gemm_dim_half", 1.0, 1024.0},
    /* Floor 0.25: falling back from tensor cores to CUDA cores, the FP16
     * non-tensor peak is a quarter of the tensor peak on V100 (31.4 of 125)
     * and A100 (78 of 312) (NVIDIA V100 and A100 datasheets). */
    [PLAN_CAL_MISALIGNED] = {"misaligned_factor", 0.25, 1.00},
    /* Ceiling 0.92: a device-to-device copy moves about 0.90 of the HBM
     * datasheet bandwidth on H100 (3.0 of 3.35 TB/s) and H200 (4.3 of 4.8)
     * (measured, reference/hardware.md). */
    [PLAN_CAL_HBM_EFF] = {"hbm_eff", 0.30, 0.92},
    [PLAN_CAL_FLASH_EFF] = {"flash_eff", 0.10, 0.95},
    /* Dims aligned to 16 bytes but not to the GPU's best alignment still
     * use tensor cores: never slower than the misaligned floor, never
     * faster than aligned. */
    [PLAN_CAL_ALIGN_PARTIAL] = {"align_partial_factor", 0.25, 1.00},
};

/* Solver limits: the fit has at most five parameters and converges in a few
 * tens of iterations; the tolerances are GSL's suggested defaults. */
#define CAL_MAX_ITER 60
#define CAL_XTOL 1e-6
#define CAL_GTOL 1e-8
#define CAL_FTOL 1e-8
/* Keeps sqrt|e| differentiable at e = 0 (a 0.01 % error scale). */
#define CAL_L1_EPS 1e-8

const char *plan_cal_param_name(plan_cal_param p)
{
    return (unsigned)p < PLAN_CAL__COUNT ? cal_params[p].name : "?";
}

int plan_cal_params_parse(const char *list, unsigned *mask, st_err *err)
{
    *mask = 0;
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int found = -1;
        for (int i = 0; i < PLAN_CAL__COUNT; i++)
            if (strlen(cal_params[i].name) == n && strncmp(p, cal_params[i].name, n) == 0)
                found = i;
        if (found < 0)
            return ST_RAISE(err, ST_EINVAL,
                            "--fit '%.*s': allowed are gemm_eff_max, gemm_dim_half, "
                            "misaligned_factor, hbm_eff, flash_eff, align_partial_factor",
                            (int)n, p);
        *mask |= 1u << found;
        p = e ? e + 1 : NULL;
    }
    if (!*mask)
        return ST_RAISE(err, ST_EINVAL, "--fit: name at least one parameter");
    return ST_OK;
}

static double *param_ptr(plan_gpu *g, int p)
{
    switch (p) {
    case PLAN_CAL_GEMM_EFF_MAX: return &g->gemm_eff_max;
    case PLAN_CAL_GEMM_DIM_HALF: return &g->gemm_dim_half;
    case PLAN_CAL_MISALIGNED: return &g->misaligned_factor;
    case PLAN_CAL_HBM_EFF: return &g->hbm_eff;
    case PLAN_CAL_ALIGN_PARTIAL: return &g->align_partial_factor;
    case PLAN_CAL_FLASH_EFF:
    default: return &g->flash_eff;
    }
}

static double to_phys(int p, double u)
{
    return cal_params[p].lo + (cal_params[p].hi - cal_params[p].lo) / (1.0 + exp(-u));
}

static double to_free(int p, double x)
{
    double lo = cal_params[p].lo, hi = cal_params[p].hi;
    /* A start on a bound (a default of 1.0, a floor reached in an earlier
     * fit) would sit where the logistic map is flat and never move: start
     * just inside. */
    double f = (x - lo) / (hi - lo);
    if (f < 0.01)
        f = 0.01;
    if (f > 0.99)
        f = 0.99;
    return log(f / (1.0 - f));
}

typedef struct cal_ctx {
    plan_catalog *cat;
    int gpu;
    const plan_validate_row *rows;
    const int *use;              /* indices of the rows of this GPU */
    int nuse;
    int idx[PLAN_CAL__COUNT];    /* fitted parameter ids */
    int np;
    plan_validate_result *res;   /* scratch */
    int failed;
} cal_ctx;

static const char *silicon_of(const plan_gpu *g)
{
    return g->silicon[0] ? g->silicon : g->name;
}

static int same_silicon(const plan_catalog *cat, int a, int b)
{
    return strcmp(silicon_of(&cat->gpus[a]), silicon_of(&cat->gpus[b])) == 0;
}

/* Every GPU of the fitted chip takes the same value. */
static void set_param(cal_ctx *c, int p, double x)
{
    for (int j = 0; j < c->cat->ngpus; j++)
        if (same_silicon(c->cat, j, c->gpu))
            *param_ptr(&c->cat->gpus[j], p) = x;
}

static void set_params(cal_ctx *c, const gsl_vector *u)
{
    for (int i = 0; i < c->np; i++)
        set_param(c, c->idx[i], to_phys(c->idx[i], gsl_vector_get(u, (size_t)i)));
}

/* Residuals at the catalog's current values; returns the mean |error| %. */
static double residuals(cal_ctx *c, gsl_vector *f, double *max_pct)
{
    double sum = 0, mx = 0;
    st_err err = {0};
    for (int i = 0; i < c->nuse; i++) {
        plan_validate_result *r = c->res;
        double e = 0;
        if (plan_validate_run(c->cat, &c->rows[c->use[i]], r, NULL, &err) != ST_OK || !r->compared ||
            !(r->pred_time_s > 0))
            c->failed = 1;
        else
            e = log(r->pred_time_s / r->ref_time_s);
        /* The solver minimises the sum of squared residuals; a residual of
         * sqrt|e| makes that the sum of |e|, the mean absolute error the
         * validation reports, which one odd run sways less than squares. */
        if (f)
            gsl_vector_set(f, (size_t)i, copysign(sqrt(fabs(e) + CAL_L1_EPS), e));
        double pct = fabs(100.0 * (exp(e) - 1.0));
        sum += pct;
        if (pct > mx)
            mx = pct;
    }
    if (max_pct)
        *max_pct = mx;
    return c->nuse ? sum / c->nuse : 0.0;
}

static int cal_f(const gsl_vector *u, void *params, gsl_vector *f)
{
    cal_ctx *c = params;
    set_params(c, u);
    residuals(c, f, NULL);
    return GSL_SUCCESS;
}

/* Which rows use this GPU and have a time to compare. */
static int select_rows(cal_ctx *c, int nrows, int *use)
{
    st_err err = {0};
    int n = 0;
    for (int i = 0; i < nrows; i++) {
        if (plan_validate_run(c->cat, &c->rows[i], c->res, NULL, &err) != ST_OK) {
            st_err_clear(&err);
            continue;
        }
        if (!c->res->compared || !c->res->have_layout)
            continue;
        const plan_instance *in = plan_catalog_find(c->cat, c->res->instance);
        if (in && in->gpu_index >= 0 && same_silicon(c->cat, in->gpu_index, c->gpu))
            use[n++] = i;
    }
    return n;
}

/* Drop parameters whose Jacobian column is zero at the start point. */
static void drop_unconstrained(cal_ctx *c, gsl_vector *f0, gsl_vector *f1)
{
    plan_gpu *g = &c->cat->gpus[c->gpu];
    int keep[PLAN_CAL__COUNT] = {0}, nk = 0;
    residuals(c, f0, NULL);
    for (int i = 0; i < c->np; i++) {
        int p = c->idx[i];
        double x0 = *param_ptr(g, p);
        double span = cal_params[p].hi - cal_params[p].lo;
        set_param(c, p, x0 + 0.01 * span * (x0 + 0.01 * span <= cal_params[p].hi ? 1 : -1));
        residuals(c, f1, NULL);
        set_param(c, p, x0);
        gsl_vector_sub(f1, f0);
        if (gsl_blas_dnrm2(f1) > 1e-9)
            keep[nk++] = c->idx[i];
    }
    memcpy(c->idx, keep, sizeof keep);
    c->np = nk;
}

int plan_calibrate_gpu(plan_catalog *cat, int gpu_index, const plan_validate_row *rows,
                       int nrows, unsigned mask, plan_calibration *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    if (gpu_index < 0 || gpu_index >= cat->ngpus)
        return ST_RAISE(err, ST_EINVAL, "calibrate: no GPU %d in the catalog", gpu_index);
    plan_gpu *g = &cat->gpus[gpu_index];
    snprintf(out->gpu, sizeof out->gpu, "%s", g->name);
    snprintf(out->silicon, sizeof out->silicon, "%s", silicon_of(g));
    out->asked = mask;
    for (int p = 0; p < PLAN_CAL__COUNT; p++)
        out->before[p] = out->after[p] = *param_ptr(g, p);

    int rc = ST_OK;
    int *use = malloc(sizeof(int) * (size_t)(nrows > 0 ? nrows : 1));
    plan_validate_result *res = malloc(sizeof *res);
    gsl_multifit_nlinear_workspace *w = NULL;
    gsl_vector *u = NULL, *f0 = NULL, *f1 = NULL;
    if (!use || !res) {
        rc = ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    cal_ctx c = {.cat = cat, .gpu = gpu_index, .rows = rows, .use = use, .res = res};
    c.nuse = select_rows(&c, nrows, use);
    out->rows = c.nuse;
    if (c.nuse == 0)
        goto done;
    for (int p = 0; p < PLAN_CAL__COUNT; p++)
        if (mask & (1u << p))
            c.idx[c.np++] = p;
    f0 = gsl_vector_alloc((size_t)c.nuse);
    f1 = gsl_vector_alloc((size_t)c.nuse);
    if (!f0 || !f1) {
        rc = ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    out->mean_abs_err_before_pct = residuals(&c, NULL, NULL);
    drop_unconstrained(&c, f0, f1);
    /* least squares needs at least as many rows as parameters */
    while (c.np > c.nuse)
        c.np--;
    for (int i = 0; i < c.np; i++)
        out->fitted |= 1u << c.idx[i];
    if (c.np == 0) {
        out->mean_abs_err_after_pct = residuals(&c, NULL, &out->max_abs_err_after_pct);
        goto done;
    }

    u = gsl_vector_alloc((size_t)c.np);
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, (size_t)c.nuse, (size_t)c.np);
    if (!u || !w) {
        rc = ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    for (int i = 0; i < c.np; i++)
        gsl_vector_set(u, (size_t)i, to_free(c.idx[i], *param_ptr(g, c.idx[i])));
    gsl_multifit_nlinear_fdf fdf = {.f = cal_f, .df = NULL, .fvv = NULL, .n = (size_t)c.nuse,
                                    .p = (size_t)c.np, .params = &c};
    gsl_multifit_nlinear_init(u, &fdf, w);
    int info = 0;
    int status = gsl_multifit_nlinear_driver(CAL_MAX_ITER, CAL_XTOL, CAL_GTOL, CAL_FTOL, NULL,
                                             NULL, &info, w);
    out->iterations = (int)gsl_multifit_nlinear_niter(w);
    out->converged = status == GSL_SUCCESS;
    set_params(&c, gsl_multifit_nlinear_position(w));
    if (c.failed) {
        rc = ST_RAISE(err, ST_EINTERNAL, "calibrate: a row could not be evaluated during the fit");
        goto done;
    }
    out->mean_abs_err_after_pct = residuals(&c, NULL, &out->max_abs_err_after_pct);
    for (int p = 0; p < PLAN_CAL__COUNT; p++)
        out->after[p] = *param_ptr(g, p);

done:
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(u);
    gsl_vector_free(f0);
    gsl_vector_free(f1);
    free(res);
    free(use);
    return rc;
}
