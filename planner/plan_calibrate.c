/*
 * plan_calibrate.c: per-(framework, chip) and per-chip fits of the
 * efficiency parameters, with leave-one-source-out (see plan_calibrate.h).
 *
 * Rows are mapped once (plan_validate_run with the catalog as given); a fit
 * then only re-evaluates each row's layout (plan_evaluate) on a cluster
 * whose efficiencies are the candidate values, so a fit of hundreds of rows
 * takes seconds. Error of a row: e = log(predicted / measured), weighted by
 * 1 / (rows of its source in the fit), so every source counts the same.
 */
#include "planner/plan_calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "planner/plan_framework.h"
#include "planner/plan_hwfit.h"
#include "planner/plan_int.h"

/* Physical range each parameter is searched in, and where each bound comes
 * from. A fit that ends on one is a failure of the model (some physics it
 * lacks is being absorbed), reported as such (plan_cal_group.on_bound),
 * never a result. */
static const struct {
    double lo, hi;
    const char *src;
} ranges[PLAN_EFF__COUNT] = {
    /* the top is the chip's measured GEMM ceiling (cal_hi) */
    [PLAN_EFF_GEMM] = {0.30, 0.90,
                       "low: the GEMM term's roofline takes HBM-bound shapes apart, so a large "
                       "GEMM below 0.30 of peak is no tensor-core GEMM; high: the chip's "
                       "measured GEMM ceiling (the H100's 45 measured shapes: 0.763 of peak, "
                       "data/measured/h100-sxm.json; the A100's maximum achievable matmul: "
                       "0.859), else 0.90"},
    [PLAN_EFF_HBM] = {0.30, 0.90,
                      "high: a device-to-device copy moves 0.89 of the datasheet bandwidth on "
                      "H100 (2990 of 3350 GB/s, gpu_h100_measured.json) and 0.90 on H200 (4.3 "
                      "of 4.8 TB/s, hardware.md): no streaming kernel moves more; low: a third "
                      "of that (a stack's unfused small kernels)"},
    [PLAN_EFF_FLASH] = {0.05, 0.95,
                        "high: the chip's measured FlashAttention-2 forward and backward where "
                        "measured (a stack's kernels reach at most the measured one: 0.212 of "
                        "the H100 peak, data/measured/h100-sxm.json), else its GEMM ceiling "
                        "(attention is two GEMMs with a softmax between them); low: a quarter "
                        "of the H100's measured rate"},
    [PLAN_EFF_FP8_GEMM] = {0.20, 0.90,
                           "as gemm_eff_max, of the FP8 peak (twice the BF16 one on H100, "
                           "hardware.md)"},
    [PLAN_EFF_DIM_HALF] = {16.0, 2048.0,
                           "a GEMM dim d keeps d / (d + half) of the peak: from tile padding "
                           "(half ~ one 16-wide tile) to wave quantisation on a chip of many "
                           "SMs (half ~ SMs x a 16-wide tile: 132 x 16 on H100)"},
    [PLAN_EFF_ALLOC] = {0.0, 0.5,
                        "the caching allocator rounds requests to at most twice their size "
                        "(c10 CUDACachingAllocator block sizes), half of the tensors on top"},
};

/* A (framework, chip) gets its own fit only from this many independent
 * published sources; with fewer, its rows are the chip's pool's, and the
 * pool predicts it (one source alone would make a per-source fit). */
#define PLAN_CAL_MIN_SOURCES 3

/* A fitted value within this fraction of its range of a bound is on it. */
#define CAL_ON_BOUND 1e-3

/* A parameter whose standard error exceeds this fraction of its physical
 * range is not determined by the rows: one standard error either side of
 * it spans the whole range, so the rows say nothing of where in the range
 * it lies (a parameter without information is not identified: Bates &
 * Watts 1988, Nonlinear Regression Analysis, Sec. 3.5). It keeps the
 * chip's value instead of being fitted. */
#define CAL_UNDETERMINED 0.5

const char *plan_cal_bound_source(plan_eff_param p)
{
    return (unsigned)p < PLAN_EFF__COUNT ? ranges[p].src : "";
}

/* Solver limits: at most four parameters; GSL's suggested tolerances. */
#define CAL_MAX_ITER 80
#define CAL_XTOL 1e-6
#define CAL_GTOL 1e-8
#define CAL_FTOL 1e-8
/* Keeps sqrt|e| differentiable at e = 0 (a 0.01 % error scale). */
#define CAL_L1_EPS 1e-8
/* Finite-difference step for the covariance Jacobian, in parameter units. */
#define CAL_FD_STEP 1e-4
/* Restarts of the solver from where it stopped, and the gain in the
 * objective below which one more is not made (see descend). */
#define CAL_RESTARTS 4
#define CAL_RESTART_GAIN 1e-6

int plan_cal_params_parse(const char *list, unsigned *mask, st_err *err)
{
    *mask = 0;
    const char *p = list;
    while (p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 && (e || p != list))
            return ST_RAISE(err, ST_EINVAL, "--fit '%s': an empty name between commas; allowed "
                            "are gemm_eff_max, hbm_eff, flash_eff, fp8_gemm_eff, gemm_dim_half",
                            list);
        if (n == 0)
            break;
        int found = -1;
        for (int i = 0; i < PLAN_EFF__COUNT; i++) {
            const char *name = plan_eff_param_name((plan_eff_param)i);
            if (strlen(name) == n && strncmp(p, name, n) == 0)
                found = i;
        }
        if (found < 0)
            return ST_RAISE(err, ST_EINVAL,
                            "--fit '%.*s': allowed are gemm_eff_max, hbm_eff, flash_eff, "
                            "fp8_gemm_eff, gemm_dim_half",
                            (int)n, p);
        *mask |= 1u << found;
        p = e ? e + 1 : NULL;
    }
    if (!*mask)
        return ST_RAISE(err, ST_EINVAL, "--fit: name at least one parameter");
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct cal_row {
    const plan_validate_result *r;
    char family[16];
    char silicon[32];
    int source;                  /* index into the report's sources */
    int piece;                   /* index into its source's pieces; -1: none left */
} cal_row;

typedef struct cal {
    plan_catalog *cat;
    const plan_validate_result *res;
    cal_row *row;
    int nrow;
    cal_row *mrow;               /* runs with a measured memory */
    int nmrow;
    plan_cal_report *rep;
    /* the fit in progress */
    int *use;                    /* rows in it */
    double *w;                   /* their weights */
    int nuse;
    int idx[PLAN_EFF__COUNT];    /* fitted parameter ids */
    int np;
    plan_eff eff;                /* the values being tried */
    double hi_gemm;              /* the chip's GEMM ceiling */
    double hi_hbm;               /* its measured copy's share of HBM (0: not measured) */
    double hi_flash;             /* its measured FlashAttention-2, forward and backward (0: not) */
    int pool;                    /* fitting a chip's pool (cal_lo) */
    double start[PLAN_EFF__COUNT]; /* the fit's starting values (the chip's own) */
    int keep_chips;              /* plan_cal_options.keep_chips */
    int failed;
} cal;

/* Copy a string into a fixed buffer, cut at its size. */
static void cpy(char *dst, size_t n, const char *src)
{
    size_t l = strnlen(src, n - 1);
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static const char *silicon_of(const plan_gpu *g)
{
    return g->silicon[0] ? g->silicon : g->name;
}

/* The top of p's range: the chip's measured GEMM ceiling bounds the GEMM
 * efficiency and the fused attention's too (attention is two GEMMs with a
 * softmax between them: FlashAttention-3 reaches 75 % of the H100 peak
 * forward, Shah et al. 2024, no more than a large GEMM does). */
static double cal_hi(const cal *c, int p)
{
    double hi = p == PLAN_EFF_GEMM || p == PLAN_EFF_FLASH ? fmin(ranges[p].hi, c->hi_gemm)
                                                          : ranges[p].hi;
    /* a copy measured on the chip's own memory is its streaming ceiling,
     * the measured FlashAttention-2 its attention's (a stack's kernels
     * reach at most the measured ones) */
    if (p == PLAN_EFF_HBM && c->hi_hbm > 0)
        hi = fmin(hi, c->hi_hbm);
    if (p == PLAN_EFF_FLASH && c->hi_flash > 0)
        hi = fmin(hi, c->hi_flash);
    /* a chip measured above the range has the whole of its measured rate
     * for range: a CPU host's efficiencies are fractions of its own
     * measured peaks (smdplan bench: gemm_eff_max 1, the peak being the
     * measured sgemm rate; hbm_eff from its triad) */
    return c->start[p] > hi ? fmax(c->start[p], 1.0) : hi;
}

/* log(predicted / measured) of row i with efficiencies e (NULL: as the
 * catalog has them for its framework). 0 and c->failed when it cannot be
 * evaluated. */
static double row_error(cal *c, int i, const plan_eff *e)
{
    const plan_validate_result *r = c->row[i].r;
    plan_cluster cl;
    st_err err = {0};
    if (plan_validate_cluster(c->cat, r, &cl, &err) != ST_OK) {
        c->failed = 1;
        return 0.0;
    }
    if (e)
        cl.eff = *e;
    plan_estimate est;
    if (plan_evaluate(&r->model, &cl, &r->layout, &est, NULL, &err) != ST_OK ||
        !(est.time.step_s > 0)) {
        c->failed = 1;
        return 0.0;
    }
    return log(est.time.step_s / r->ref_time_s);
}

/* Residuals of the fit's rows at c->eff; the weighted mean |error| % (the
 * mean over sources of each source's mean) and the worst row's. */
static double residuals(cal *c, gsl_vector *f, double *max_pct)
{
    double sum = 0, wsum = 0, mx = 0;
    for (int k = 0; k < c->nuse; k++) {
        double e = row_error(c, c->use[k], &c->eff);
        if (f)
            gsl_vector_set(f, (size_t)k,
                           sqrt(c->w[k]) * copysign(sqrt(fabs(e) + CAL_L1_EPS), e));
        double pct = fabs(100.0 * (exp(e) - 1.0));
        sum += c->w[k] * pct;
        wsum += c->w[k];
        if (pct > mx)
            mx = pct;
    }
    if (max_pct)
        *max_pct = mx;
    return wsum > 0 ? sum / wsum : 0.0;
}

/* A chip's pool stands for the chip itself (the stacks without a fit of
 * their own get it), so its HBM efficiency keeps to what streaming kernels
 * reach on the chip: a device-to-device copy moves about 0.90 of the
 * datasheet bandwidth on H100 and H200 (measured, reference/hardware.md),
 * and a stack's elementwise kernels, at training's tensor sizes, no less
 * than two thirds of that. A framework's own fit may go lower: unfused
 * small kernels and launch gaps are its software's, not the chip's. */
#define POOL_HBM_MIN 0.60

static double cal_lo(const cal *c, int p)
{
    return p == PLAN_EFF_HBM && c->pool ? POOL_HBM_MIN : ranges[p].lo;
}

static double to_phys(const cal *c, int p, double u)
{
    double lo = cal_lo(c, p), hi = cal_hi(c, p);
    return lo + (hi - lo) / (1.0 + exp(-u));
}

static double to_free(const cal *c, int p, double x)
{
    double lo = cal_lo(c, p), hi = cal_hi(c, p);
    /* a start on a bound would sit where the logistic map is flat; a
     * framework fitted on its chip's own values (keep_chips, no pool fitted
     * before it) may start on one (a pool may have ended a parameter there)
     * and starts a tenth of the range inside */
    double in = c->keep_chips ? 0.1 : 0.01;
    double f = (x - lo) / (hi - lo);
    if (f < in)
        f = in;
    if (f > 1.0 - in)
        f = 1.0 - in;
    return log(f / (1.0 - f));
}

static void set_free(cal *c, const gsl_vector *u)
{
    for (int i = 0; i < c->np; i++)
        *plan_eff_ref(&c->eff, (plan_eff_param)c->idx[i]) =
            to_phys(c, c->idx[i], gsl_vector_get(u, (size_t)i));
}

static int cal_f(const gsl_vector *u, void *params, gsl_vector *f)
{
    cal *c = params;
    set_free(c, u);
    residuals(c, f, NULL);
    return GSL_SUCCESS;
}

/* Keep the parameters the rows constrain: moving one changes some row. */
static void drop_unconstrained(cal *c)
{
    int keep[PLAN_EFF__COUNT] = {0}, nk = 0;
    plan_eff base = c->eff;
    for (int i = 0; i < c->np; i++) {
        int p = c->idx[i];
        double *x = plan_eff_ref(&c->eff, (plan_eff_param)p);
        double x0 = *x, span = cal_hi(c, p) - cal_lo(c, p);
        *x = x0 + 0.02 * span * (x0 + 0.02 * span <= cal_hi(c, p) ? 1 : -1);
        int moved = 0;
        for (int k = 0; k < c->nuse && !moved; k++)
            moved = fabs(row_error(c, c->use[k], &c->eff) - row_error(c, c->use[k], &base)) > 1e-9;
        *x = x0;
        if (moved)
            keep[nk++] = p;
    }
    memcpy(c->idx, keep, sizeof keep);
    c->np = nk;
}

/* Standard errors of the fitted parameters: s^2 (J^T W J)^-1 with J the
 * derivative of each row's log error by each physical parameter and W the
 * rows' weights scaled to a mean of 1 (so that n rows carry n rows'
 * information; weights summing to 1 would inflate every error by sqrt(n)),
 * s^2 the weighted mean square residual with n - p degrees of freedom. */
static void std_errors(cal *c, double *se)
{
    int n = c->nuse, p = c->np;
    for (int i = 0; i < PLAN_EFF__COUNT; i++)
        se[i] = 0;
    if (p == 0 || n <= p)
        return;
    gsl_matrix *J = gsl_matrix_alloc((size_t)n, (size_t)p);
    gsl_matrix *A = gsl_matrix_alloc((size_t)p, (size_t)p);
    double *e0 = malloc(sizeof(double) * (size_t)n);
    if (!J || !A || !e0)
        goto done;
    double s2 = 0, wsum = 0;
    for (int k = 0; k < n; k++) {
        e0[k] = row_error(c, c->use[k], &c->eff);
        s2 += c->w[k] * e0[k] * e0[k];
        wsum += c->w[k];
    }
    s2 = s2 / wsum * (double)n / (double)(n - p);
    for (int j = 0; j < p; j++) {
        double *x = plan_eff_ref(&c->eff, (plan_eff_param)c->idx[j]), x0 = *x;
        *x = x0 + CAL_FD_STEP;
        for (int k = 0; k < n; k++)
            gsl_matrix_set(J, (size_t)k, (size_t)j,
                           sqrt(c->w[k] * n / wsum) * (row_error(c, c->use[k], &c->eff) - e0[k]) /
                               CAL_FD_STEP);
        *x = x0;
    }
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, J, J, 0.0, A);
    if (gsl_linalg_cholesky_decomp1(A) == GSL_SUCCESS && gsl_linalg_cholesky_invert(A) == GSL_SUCCESS)
        for (int j = 0; j < p; j++)
            se[c->idx[j]] = sqrt(fmax(0.0, s2 * gsl_matrix_get(A, (size_t)j, (size_t)j)));
done:
    gsl_matrix_free(J);
    gsl_matrix_free(A);
    free(e0);
}

/* The rows of one fit and their weights. family NULL: every framework (a
 * chip's pool). skip_source >= 0: leave that source out. */
static int select(cal *c, const char *family, const char *silicon, int skip_source, int *sources)
{
    int count[PLAN_VAL_SOURCES_MAX] = {0};
    c->nuse = 0;
    for (int i = 0; i < c->nrow; i++) {
        const cal_row *r = &c->row[i];
        if (r->source == skip_source || strcmp(r->silicon, silicon) != 0 ||
            (family && strcmp(r->family, family) != 0))
            continue;
        c->use[c->nuse++] = i;
        count[r->source]++;
    }
    int ns = 0;
    for (int s = 0; s < PLAN_VAL_SOURCES_MAX; s++)
        ns += count[s] > 0;
    for (int k = 0; k < c->nuse; k++)
        c->w[k] = 1.0 / ((double)count[c->row[c->use[k]].source] * ns);
    *sources = ns;
    return c->nuse;
}

/* Sum of squared residuals at the solver's position. */
static double cost(gsl_multifit_nlinear_workspace *w)
{
    double s = 0;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &s);
    return s;
}

/* Descend from u (free variables; left at the end point) and return the
 * cost there. The sum of |e| through sqrt|e| residuals has a kink wherever
 * a row's error changes sign, where its Jacobian jumps: the trust region
 * can collapse at one and the step test pass far from the minimum (a fit
 * stopping after one iteration at its start), and which kinks a path meets
 * depends on the last bits of its arithmetic (GSL's linear algebra runs on
 * the BLAS kernels OpenBLAS picks for the CPU). So the solver starts again
 * from where it stopped, with a fresh trust region, while a run gains more
 * than CAL_RESTART_GAIN of the cost, at most CAL_RESTARTS times. */
static double descend(gsl_multifit_nlinear_fdf *fdf, gsl_multifit_nlinear_workspace *w,
                      gsl_vector *u, plan_cal_group *g)
{
    double prev = INFINITY, now = INFINITY;
    for (int r = 0; r <= CAL_RESTARTS; r++) {
        gsl_multifit_nlinear_init(u, fdf, w);
        int info = 0;
        int status = gsl_multifit_nlinear_driver(CAL_MAX_ITER, CAL_XTOL, CAL_GTOL, CAL_FTOL, NULL,
                                                 NULL, &info, w);
        g->iterations += (int)gsl_multifit_nlinear_niter(w);
        g->converged = status == GSL_SUCCESS;
        gsl_vector_memcpy(u, gsl_multifit_nlinear_position(w));
        now = cost(w);
        if (!(now < prev * (1 - CAL_RESTART_GAIN)))
            break;
        prev = now;
    }
    return now;
}

/* Descend from the chip's values over the parameters in c->idx (none: the
 * rows are only evaluated); leaves the result in c->eff. */
static int descend_all(cal *c, plan_cal_group *g, st_err *err)
{
    if (c->np > 0) {
        /* From the chip's values, then from the middle of every range: a
         * parameter driven against a bound sits where the logistic map is
         * flat, its gradient gone, and no restart moves it off; the other
         * start reaches the inside minimum when there is one. The lower
         * cost wins; the chip's start unless the other gains more than
         * CAL_RESTART_GAIN (the same minimum reached twice differs by
         * rounding, and must not pick a side by it). */
        gsl_vector *u = gsl_vector_alloc((size_t)c->np), *mid = gsl_vector_calloc((size_t)c->np);
        gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
        gsl_multifit_nlinear_workspace *w =
            gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, (size_t)c->nuse, (size_t)c->np);
        if (!u || !mid || !w) {
            gsl_vector_free(u);
            gsl_vector_free(mid);
            gsl_multifit_nlinear_free(w);
            return ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
        }
        for (int i = 0; i < c->np; i++)
            gsl_vector_set(u, (size_t)i,
                           to_free(c, c->idx[i], *plan_eff_ref(&c->eff, (plan_eff_param)c->idx[i])));
        gsl_multifit_nlinear_fdf fdf = {.f = cal_f, .n = (size_t)c->nuse, .p = (size_t)c->np,
                                        .params = c};
        g->iterations = 0;
        double at_chip = descend(&fdf, w, u, g);
        int converged = g->converged;
        if (descend(&fdf, w, mid, g) < at_chip * (1 - CAL_RESTART_GAIN))
            gsl_vector_memcpy(u, mid);
        else
            g->converged = converged;
        set_free(c, u);
        gsl_multifit_nlinear_free(w);
        gsl_vector_free(mid);
        gsl_vector_free(u);
    }
    return ST_OK;
}

/* The parameter of c->idx whose standard error spans the most of its
 * range, when that is more than CAL_UNDETERMINED of it; -1 when none. */
static int undetermined(const cal *c, const double *se)
{
    int worst = -1;
    double wr = CAL_UNDETERMINED;
    for (int i = 0; i < c->np; i++) {
        int p = c->idx[i];
        double r = se[p] / (cal_hi(c, p) - cal_lo(c, p));
        if (!(r <= wr)) { /* a NaN standard error is undetermined too */
            worst = i;
            wr = isnan(r) ? INFINITY : r;
        }
    }
    return worst;
}

/* Fit the rows selected from start e0; fills g (after, std_err, errors).
 * A parameter the rows leave undetermined (its standard error over
 * CAL_UNDETERMINED of its range) is taken out and the rest fitted again
 * from the start: it keeps the chip's value, reported as such, rather
 * than land wherever the solver stopped, a bound included. */
static int fit(cal *c, const plan_eff *e0, unsigned asked, plan_cal_group *g, st_err *err)
{
    c->eff = *e0;
    for (int p = 0; p < PLAN_EFF__COUNT; p++)
        c->start[p] = *plan_eff_ref((plan_eff *)e0, (plan_eff_param)p);
    g->before = g->after = *e0;
    g->asked = asked;
    g->undetermined = 0;
    c->np = 0;
    for (int p = 0; p < PLAN_EFF__COUNT; p++)
        if (asked & (1u << p))
            c->idx[c->np++] = p;
    c->failed = 0;
    g->mean_abs_err_before_pct = residuals(c, NULL, NULL);
    drop_unconstrained(c);
    while (c->np > c->nuse) /* no more parameters than rows */
        c->np--;
    double kept_se[PLAN_EFF__COUNT] = {0};
    for (;;) {
        g->fitted = 0;
        for (int i = 0; i < c->np; i++)
            g->fitted |= 1u << c->idx[i];
        c->eff = *e0;
        int rc = descend_all(c, g, err);
        if (rc != ST_OK)
            return rc;
        if (c->failed)
            return ST_RAISE(err, ST_EINTERNAL,
                            "calibrate: a row could not be evaluated during the fit");
        std_errors(c, g->std_err);
        int u = undetermined(c, g->std_err);
        if (u < 0)
            break;
        int p = c->idx[u];
        g->undetermined |= 1u << p;
        kept_se[p] = g->std_err[p];
        for (int i = u; i + 1 < c->np; i++)
            c->idx[i] = c->idx[i + 1];
        c->np--;
    }
    for (int p = 0; p < PLAN_EFF__COUNT; p++)
        if (g->undetermined & (1u << p))
            g->std_err[p] = kept_se[p];
    g->after = c->eff;
    g->mean_abs_err_after_pct = residuals(c, NULL, &g->max_abs_err_after_pct);
    g->on_bound = 0;
    for (int i = 0; i < c->np; i++) {
        int p = c->idx[i];
        double x = *plan_eff_ref(&g->after, (plan_eff_param)p);
        double lo = cal_lo(c, p), hi = cal_hi(c, p), tol = CAL_ON_BOUND * (hi - lo);
        if (x <= lo + tol || x >= hi - tol)
            g->on_bound |= 1u << p;
    }
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Writing fits into the catalog                                             */
/* ------------------------------------------------------------------------ */

static void set_chip(plan_catalog *cat, const char *silicon, const plan_eff *e, unsigned fitted)
{
    for (int j = 0; j < cat->ngpus; j++) {
        plan_gpu *g = &cat->gpus[j];
        if (strcmp(silicon_of(g), silicon) != 0)
            continue;
        if (fitted & (1u << PLAN_EFF_GEMM))
            g->gemm_eff_max = e->gemm_eff_max;
        if (fitted & (1u << PLAN_EFF_HBM))
            g->hbm_eff = e->hbm_eff;
        if (fitted & (1u << PLAN_EFF_FLASH))
            g->flash_eff = e->flash_eff;
        if (fitted & (1u << PLAN_EFF_FP8_GEMM))
            g->fp8_gemm_eff = e->fp8_gemm_eff;
        if (fitted & (1u << PLAN_EFF_DIM_HALF))
            g->gemm_dim_half = e->gemm_dim_half;
        if (fitted & (1u << PLAN_EFF_ALLOC))
            g->alloc_frac = e->alloc_frac;
    }
}

/* The chip's own values as a plan_eff. */
static plan_eff chip_eff(const plan_catalog *cat, const char *silicon)
{
    plan_eff e = {0};
    for (int j = 0; j < cat->ngpus; j++) {
        const plan_gpu *g = &cat->gpus[j];
        if (strcmp(silicon_of(g), silicon) == 0) {
            e.gemm_eff_max = g->gemm_eff_max;
            e.hbm_eff = g->hbm_eff;
            e.flash_eff = g->flash_eff;
            e.fp8_gemm_eff = g->fp8_gemm_eff > 0 ? g->fp8_gemm_eff : g->gemm_eff_max;
            e.gemm_dim_half = g->gemm_dim_half;
            e.alloc_frac = g->alloc_frac;
            break;
        }
    }
    return e;
}

static const plan_gpu *chip_gpu(const plan_catalog *cat, const char *silicon)
{
    for (int j = 0; j < cat->ngpus; j++)
        if (strcmp(silicon_of(&cat->gpus[j]), silicon) == 0)
            return &cat->gpus[j];
    return NULL;
}

static double chip_ceiling(const plan_catalog *cat, const char *silicon)
{
    const plan_gpu *g = chip_gpu(cat, silicon);
    return g && g->gemm_ceiling > 0 ? g->gemm_ceiling : 1.0;
}

/* The lowest copy share measured on a GPU of the chip (0: none). */
static double chip_copy_eff(const plan_catalog *cat, const char *silicon)
{
    double lo = 0;
    for (int j = 0; j < cat->ngpus; j++) {
        double e = strcmp(silicon_of(&cat->gpus[j]), silicon) == 0
                       ? plan_gpu_copy_eff(&cat->gpus[j]) : 0.0;
        if (e > 0 && (lo == 0 || e < lo))
            lo = e;
    }
    return lo;
}

static void drop_eff(plan_catalog *cat, const char *family, const char *silicon)
{
    for (int i = 0; i < cat->neffs; i++)
        if (strcmp(cat->effs[i].framework, family) == 0 &&
            strcmp(cat->effs[i].silicon, silicon) == 0) {
            memmove(&cat->effs[i], &cat->effs[i + 1],
                    (size_t)(cat->neffs - i - 1) * sizeof *cat->effs);
            cat->neffs--;
            return;
        }
}

static int put_eff(plan_catalog *cat, const plan_cal_group *g, st_err *err)
{
    const plan_fw_eff *old = plan_catalog_eff(cat, g->framework, g->silicon);
    double keep_alloc = old && (old->fitted & PLAN_EFF_MEMORY_MASK) ? old->eff.alloc_frac : -1;
    drop_eff(cat, g->framework, g->silicon);
    if (!g->fitted)
        return ST_OK;
    plan_fw_eff *v = realloc(cat->effs, (size_t)(cat->neffs + 1) * sizeof *v);
    if (!v)
        return ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
    cat->effs = v;
    plan_fw_eff *e = &cat->effs[cat->neffs++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s@%s", g->framework, g->silicon);
    snprintf(e->framework, sizeof e->framework, "%s", g->framework);
    snprintf(e->silicon, sizeof e->silicon, "%s", g->silicon);
    e->eff = g->after;
    e->fitted = g->fitted;
    if (keep_alloc >= 0 && !(g->fitted & PLAN_EFF_MEMORY_MASK)) {
        e->eff.alloc_frac = keep_alloc;
        e->fitted |= PLAN_EFF_MEMORY_MASK;
    }
    memcpy(e->std_err, g->std_err, sizeof e->std_err);
    e->rows = g->rows;
    e->sources = g->sources;
    e->mean_abs_err_pct = g->mean_abs_err_after_pct;
    snprintf(e->source, sizeof e->source,
             "fitted by smdplan calibrate to %d runs of %d sources: mean |error| %.1f%%", g->rows,
             g->sources, g->mean_abs_err_after_pct);
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* One pass: chip pools, then frameworks on each chip                        */
/* ------------------------------------------------------------------------ */

typedef struct pair {
    char family[16];
    char silicon[32];
} pair;

/* Distinct (family, chip) pairs of the rows (family "" for chips), the
 * options' filter applied. */
static int pairs_of(const cal *c, const plan_cal_options *o, pair *out, int max, int chips)
{
    int n = 0;
    for (int i = 0; i < c->nrow; i++) {
        const cal_row *r = &c->row[i];
        if (o->silicon && o->silicon[0] && strcasecmp(o->silicon, r->silicon) != 0)
            continue;
        if (!chips && o->framework && o->framework[0] && strcasecmp(o->framework, r->family) != 0)
            continue;
        const char *fam = chips ? "" : r->family;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++)
            seen = strcmp(out[k].family, fam) == 0 && strcmp(out[k].silicon, r->silicon) == 0;
        if (!seen && n < max) {
            cpy(out[n].family, sizeof out[n].family, fam);
            cpy(out[n].silicon, sizeof out[n].silicon, r->silicon);
            n++;
        }
    }
    return n;
}

/* Fit every pool and pair into cat, leaving source skip out (-1: none).
 * groups (may be NULL) receives each fit, pools first. */
static int fit_all(cal *c, const plan_cal_options *o, int skip, plan_cal_group *groups, int *ngroups,
                   st_err *err)
{
    unsigned asked = o->params ? o->params : PLAN_CAL_DEFAULT;
    pair chips[PLAN_CAL_GROUPS_MAX], fws[PLAN_CAL_GROUPS_MAX];
    int nc = pairs_of(c, o, chips, PLAN_CAL_GROUPS_MAX, 1);
    int nf = pairs_of(c, o, fws, PLAN_CAL_GROUPS_MAX, 0);
    int ng = 0;
    for (int pass = o->keep_chips ? 1 : 0; pass < 2; pass++) {
        int n = pass == 0 ? nc : nf;
        for (int i = 0; i < n; i++) {
            const pair *pr = pass == 0 ? &chips[i] : &fws[i];
            plan_cal_group g;
            memset(&g, 0, sizeof g);
            cpy(g.framework, sizeof g.framework, pr->family);
            cpy(g.silicon, sizeof g.silicon, pr->silicon);
            g.rows = select(c, pass == 0 ? NULL : pr->family, pr->silicon, skip, &g.sources);
            if (pass == 1)
                drop_eff(c->cat, pr->family, pr->silicon);
            if (g.rows == 0)
                continue;
            if (pass == 1 && g.sources < PLAN_CAL_MIN_SOURCES) {
                /* too few sources for a fit of its own: the chip's pool */
                g.pooled = 1;
                snprintf(g.why, sizeof g.why,
                         "%d independent source%s; a stack's own fit needs %d: predicted by "
                         "the %s pool", g.sources, g.sources == 1 ? "" : "s",
                         PLAN_CAL_MIN_SOURCES, pr->silicon);
                if (groups && ng < PLAN_CAL_GROUPS_MAX)
                    groups[ng++] = g;
                continue;
            }
            c->hi_gemm = chip_ceiling(c->cat, pr->silicon);
            c->hi_hbm = chip_copy_eff(c->cat, pr->silicon);
            const plan_gpu *chip = chip_gpu(c->cat, pr->silicon);
            c->hi_flash = chip ? plan__attn_fwd_bwd_eff(chip->flash2_fwd_eff, chip->flash2_bwd_eff) : 0;
            c->pool = pass == 0;
            plan_eff e0 = chip_eff(c->cat, pr->silicon);
            /* a framework fits its efficiencies; the chip's pool also the
             * dims, unless they were measured on the chip itself */
            unsigned mask = pass == 0 ? asked : asked & PLAN_EFF_FRAMEWORK_MASK;
            if (chip && chip->gemm_measured)
                mask &= ~(1u << PLAN_EFF_DIM_HALF);
            /* the executor's own fused kernels measured on the chip: the
             * stack's share of them is 1 by what was measured */
            if (chip && chip->flash_measured)
                mask &= ~(1u << PLAN_EFF_FLASH);
            int rc = fit(c, &e0, mask, &g, err);
            if (rc)
                return rc;
            if (pass == 0)
                set_chip(c->cat, pr->silicon, &g.after, g.fitted);
            else if ((rc = put_eff(c->cat, &g, err)))
                return rc;
            if (groups && ng < PLAN_CAL_GROUPS_MAX)
                groups[ng++] = g;
        }
    }
    if (ngroups)
        *ngroups = ng;
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Memory: the allocator's reserve                                           */
/* ------------------------------------------------------------------------ */

/* Per-GPU memory of memory row i with reserve f (as validate compares it). */
static double mem_pred(cal *c, int i, double f)
{
    const plan_validate_result *r = c->mrow[i].r;
    plan_cluster cl;
    st_err err = {0};
    if (plan_validate_cluster(c->cat, r, &cl, &err) != ST_OK)
        return NAN;
    cl.eff.alloc_frac = f;
    plan_estimate est;
    if (plan__evaluate(&r->model, &cl, &r->layout, &est, NULL, 0, NULL, &err) != ST_OK)
        return NAN;
    return plan_validate_mem_bytes(r, &est.mem);
}

typedef struct mem_set {
    cal *c;
    const char *family;          /* NULL: every framework */
    const char *silicon;
} mem_set;

static int in_set(const mem_set *m, int i)
{
    const cal_row *r = &m->c->mrow[i];
    return strcmp(r->silicon, m->silicon) == 0 && (!m->family || strcmp(r->family, m->family) == 0);
}

/* Mean |error| % of the set's memory rows with reserve f. */
static double mem_err(double f, void *params)
{
    const mem_set *m = params;
    double sum = 0;
    int n = 0;
    for (int i = 0; i < m->c->nmrow; i++) {
        if (!in_set(m, i))
            continue;
        double p = mem_pred(m->c, i, f), ref = m->c->mrow[i].r->ref_mem_bytes;
        if (isnan(p) || !(p > 0))
            continue;
        sum += fabs(100.0 * (p - ref) / ref);
        n++;
    }
    return n ? sum / n : 0.0;
}

/* Brent's method (GSL gsl_min) on [0, ALLOC_MAX] from the best of a coarse
 * scan (mean |error| is piecewise linear, so the scan brackets it). */
#define ALLOC_MAX 0.5
#define ALLOC_SCAN 11
static double fit_alloc(mem_set *m, double *err_after)
{
    double best_x = 0, best = INFINITY;
    for (int k = 0; k < ALLOC_SCAN; k++) {
        double x = ALLOC_MAX * k / (ALLOC_SCAN - 1), e = mem_err(x, m);
        if (e < best)
            best = e, best_x = x;
    }
    double lo = fmax(0.0, best_x - ALLOC_MAX / (ALLOC_SCAN - 1));
    double hi = fmin(ALLOC_MAX, best_x + ALLOC_MAX / (ALLOC_SCAN - 1));
    gsl_function F = {mem_err, m};
    gsl_min_fminimizer *s = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
    if (s && best_x > lo && best_x < hi && mem_err(lo, m) > best && mem_err(hi, m) > best &&
        gsl_min_fminimizer_set(s, &F, best_x, lo, hi) == GSL_SUCCESS) {
        for (int it = 0; it < 60; it++) {
            gsl_min_fminimizer_iterate(s);
            double a = gsl_min_fminimizer_x_lower(s), b = gsl_min_fminimizer_x_upper(s);
            if (gsl_min_test_interval(a, b, PLAN_CAL_ALLOC_TOL, 0.0) == GSL_SUCCESS)
                break;
        }
        double x = gsl_min_fminimizer_x_minimum(s), e = mem_err(x, m);
        if (e < best)
            best_x = x, best = e;
    }
    gsl_min_fminimizer_free(s);
    *err_after = best;
    return best_x;
}

/* Fit every chip's and (framework, chip)'s reserve to its memory rows;
 * each result joins its time fit's group in rep (a new group when the
 * framework has memory rows but no times there). */
static int fit_memory(cal *c, plan_cal_report *rep, st_err *err)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < c->nmrow; i++) {
            const cal_row *r = &c->mrow[i];
            const char *fam = pass == 0 ? "" : r->family;
            int k = 0;
            while (k < rep->ngroups && !(strcmp(rep->group[k].framework, fam) == 0 &&
                                         strcmp(rep->group[k].silicon, r->silicon) == 0))
                k++;
            if (k < rep->ngroups && rep->group[k].mem_rows > 0)
                continue; /* done */
            if (pass == 1) {
                /* a stack's own reserve, as its own time fit, only from
                 * PLAN_CAL_MIN_SOURCES sources: else the chip's */
                int ns = 0;
                for (int j = 0; j < c->nmrow; j++) {
                    const cal_row *a = &c->mrow[j];
                    if (strcmp(a->family, r->family) || strcmp(a->silicon, r->silicon))
                        continue;
                    int first = 1;
                    for (int k2 = 0; k2 < j && first; k2++)
                        first = strcmp(c->mrow[k2].family, r->family) ||
                                strcmp(c->mrow[k2].silicon, r->silicon) ||
                                strcmp(c->mrow[k2].r->source_key, a->r->source_key);
                    ns += first;
                }
                if (ns < PLAN_CAL_MIN_SOURCES)
                    continue;
            }
            if (k == rep->ngroups) {
                if (k == PLAN_CAL_GROUPS_MAX)
                    continue;
                memset(&rep->group[k], 0, sizeof rep->group[k]);
                cpy(rep->group[k].framework, sizeof rep->group[k].framework, fam);
                cpy(rep->group[k].silicon, sizeof rep->group[k].silicon, r->silicon);
                rep->group[k].before = rep->group[k].after = chip_eff(c->cat, r->silicon);
                rep->ngroups++;
            }
            plan_cal_group *g = &rep->group[k];
            mem_set m = {c, pass == 0 ? NULL : r->family, r->silicon};
            const plan_fw_eff *e0 = pass ? plan_catalog_eff(c->cat, r->family, r->silicon) : NULL;
            double f0 = e0 && (e0->fitted & PLAN_EFF_MEMORY_MASK) ? e0->eff.alloc_frac
                                                                  : chip_eff(c->cat, r->silicon).alloc_frac;
            for (int j = 0; j < c->nmrow; j++)
                g->mem_rows += in_set(&m, j);
            g->mem_mean_abs_err_before_pct = mem_err(f0, &m);
            double after;
            double f = fit_alloc(&m, &after);
            g->mem_mean_abs_err_after_pct = after;
            g->before.alloc_frac = f0;
            g->after.alloc_frac = f;
            g->asked |= PLAN_EFF_MEMORY_MASK;
            g->fitted |= PLAN_EFF_MEMORY_MASK;
            if (pass == 0) {
                set_chip(c->cat, r->silicon, &g->after, PLAN_EFF_MEMORY_MASK);
                continue;
            }
            plan_fw_eff *fe = (plan_fw_eff *)plan_catalog_eff(c->cat, r->family, r->silicon);
            if (!fe) {
                plan_cal_group only = *g;
                only.fitted = PLAN_EFF_MEMORY_MASK;
                int rc = put_eff(c->cat, &only, err);
                if (rc)
                    return rc;
                fe = (plan_fw_eff *)plan_catalog_eff(c->cat, r->family, r->silicon);
            }
            fe->eff.alloc_frac = f;
            fe->fitted |= PLAN_EFF_MEMORY_MASK;
        }
    }
    return ST_OK;
}

/* Mean |error| % of source s's rows under the catalog as it is. */
static double source_error(cal *c, int s)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < c->nrow; i++)
        if (c->row[i].source == s) {
            sum += fabs(100.0 * (exp(row_error(c, i, NULL)) - 1.0));
            n++;
        }
    return n ? sum / n : NAN;
}

/* The piece of source src that a row of stack release fw on its chip
 * belongs to, made when new; -1 when the source has PLAN_CAL_PIECES_MAX
 * already (the row still counts for its source). */
static int piece_of(plan_cal_source *src, const plan_framework *fw, const cal_row *r)
{
    for (int p = 0; p < src->npieces; p++)
        if (strcmp(src->piece[p].release, fw->key) == 0 &&
            strcmp(src->piece[p].silicon, r->silicon) == 0) {
            src->piece[p].rows++;
            return p;
        }
    if (src->npieces == PLAN_CAL_PIECES_MAX)
        return -1;
    plan_cal_piece *pc = &src->piece[src->npieces];
    snprintf(pc->release, sizeof pc->release, "%s", fw->key);
    memcpy(pc->framework, r->family, sizeof pc->framework);
    memcpy(pc->silicon, r->silicon, sizeof pc->silicon);
    pc->rows = 1;
    pc->loso_mean_abs_err_pct = NAN;
    return src->npieces++;
}

/* The mean |error| of each piece of source s under the catalog in force. */
static void piece_errors(cal *c, int s)
{
    plan_cal_source *src = &c->rep->source[s];
    double sum[PLAN_CAL_PIECES_MAX] = {0};
    int n[PLAN_CAL_PIECES_MAX] = {0};
    for (int i = 0; i < c->nrow; i++)
        if (c->row[i].source == s && c->row[i].piece >= 0) {
            sum[c->row[i].piece] += fabs(100.0 * (exp(row_error(c, i, NULL)) - 1.0));
            n[c->row[i].piece]++;
        }
    for (int p = 0; p < src->npieces; p++)
        src->piece[p].loso_mean_abs_err_pct = n[p] ? sum[p] / n[p] : NAN;
}

/* ------------------------------------------------------------------------ */
/* Catalog copies (for leave-one-source-out)                                 */
/* ------------------------------------------------------------------------ */

static void *dup(const void *p, size_t n)
{
    if (!n)
        return NULL;
    void *v = malloc(n);
    if (v)
        memcpy(v, p, n);
    return v;
}

static int copy_catalog(plan_catalog *dst, const plan_catalog *src)
{
    memset(dst, 0, sizeof *dst);
    dst->gpus = dup(src->gpus, (size_t)src->ngpus * sizeof *src->gpus);
    dst->instances = dup(src->instances, (size_t)src->ninstances * sizeof *src->instances);
    dst->curves = dup(src->curves, (size_t)src->ncurves * sizeof *src->curves);
    dst->effs = dup(src->effs, (size_t)src->neffs * sizeof *src->effs);
    dst->ngpus = src->ngpus;
    dst->ninstances = src->ninstances;
    dst->ncurves = src->ncurves;
    dst->neffs = src->neffs;
    if ((src->ngpus && !dst->gpus) || (src->ninstances && !dst->instances) ||
        (src->ncurves && !dst->curves) || (src->neffs && !dst->effs)) {
        plan_catalog_free(dst);
        return ST_ENOMEM;
    }
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Leave one source out                                                      */
/* ------------------------------------------------------------------------ */

/* Append group g's parameters on a bound to buf ("GA100 pool: gemm_dim_half;
 * megatron on GH100: flash_eff"), as far as it holds them. */
static void bound_names(const plan_cal_group *g, char *buf, size_t n)
{
    if (!g->on_bound)
        return;
    size_t len = strlen(buf);
    if (g->framework[0])
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s on %s:",
                                len ? "; " : "", g->framework, g->silicon);
    else
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s pool:", len ? "; " : "",
                                g->silicon);
    for (int p = 0; p < PLAN_EFF__COUNT && len < n; p++)
        if ((g->on_bound >> p) & 1u)
            len += (size_t)snprintf(buf + len, n - len, " %s",
                                    plan_eff_param_name((plan_eff_param)p));
}

/* Held out source s: fit the rest from the starting catalog, predict s.
 * *pool_err gets s's error under its chip's pool alone (NAN without one). */
static int loso_one(cal *c, const plan_catalog *start, const plan_cal_options *o, int s,
                    double *err_out, double *pool_err, char *basis, size_t nb, st_err *err)
{
    plan_catalog work;
    if (copy_catalog(&work, start) != ST_OK)
        return ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
    plan_catalog *keep = c->cat;
    c->cat = &work;
    plan_cal_source *src = &c->rep->source[s];
    plan_cal_group *groups = malloc(PLAN_CAL_GROUPS_MAX * sizeof *groups);
    int ng = 0;
    int rc = groups ? fit_all(c, o, s, groups, &ng, err)
                    : ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
    src->loso_bound[0] = '\0';
    for (int g = 0; rc == ST_OK && g < ng; g++)
        bound_names(&groups[g], src->loso_bound, sizeof src->loso_bound);
    free(groups);
    if (rc == ST_OK) {
        int others_fw = 0, others_chip = 0;
        for (int i = 0; i < c->nrow; i++) {
            const cal_row *r = &c->row[i];
            if (r->source == s || strcmp(r->silicon, src->silicon) != 0)
                continue;
            others_chip = 1;
            others_fw |= strcmp(r->family, src->framework) == 0;
        }
        *err_out = source_error(c, s);
        piece_errors(c, s); /* the same errors by (stack release, chip) */
        if (others_fw && plan_catalog_eff(&work, src->framework, src->silicon))
            snprintf(basis, nb, "%s on %s from the other sources", src->framework, src->silicon);
        else if (others_fw && (others_chip || o->keep_chips))
            snprintf(basis, nb, "%s %s (fewer than %d other %s sources)", src->silicon,
                     o->keep_chips ? "chip's own values" : "pool", PLAN_CAL_MIN_SOURCES,
                     src->framework);
        else if (others_chip)
            snprintf(basis, nb, "%s pool (no other %s source)", src->silicon, src->framework);
        else
            snprintf(basis, nb, "%s's own values (no other source on it)", src->silicon);
        /* the same source under its chip's pool alone */
        drop_eff(&work, src->framework, src->silicon);
        *pool_err = others_chip ? source_error(c, s) : NAN;
    }
    c->cat = keep;
    plan_catalog_free(&work);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Entry                                                                     */
/* ------------------------------------------------------------------------ */

/* validate reads a run's unstated (or derived) recompute from the memory
 * it had, within the band of what the memory model misses on the chip's
 * memory figures (plan_gpu.mem_err_pct, plan_validate_eval.c). That band is
 * this calibration's own memory fit, which the catalog calibrate starts
 * from does not hold: it is fitted first (the allocator's reserve alone, on
 * a copy), and the rows are mapped again under it, so that what is fitted
 * is what validate then scores. */
static int remap_with_band(const plan_catalog *cat, const plan_validate_row *rows, int nrows,
                           plan_validate_result *res, st_err *err)
{
    plan_catalog band = {0};
    plan_cal_report *mrep = calloc(1, sizeof *mrep);
    int rc = ST_OK, any = 0;
    if (!mrep || copy_catalog(&band, cat) != ST_OK) {
        rc = ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    plan_cal_options mo = {.params = PLAN_EFF_MEMORY_MASK};
    if ((rc = plan_calibrate_results(&band, res, nrows, &mo, mrep, err)) != ST_OK)
        goto done;
    for (int g = 0; g < mrep->ngroups; g++) {
        const plan_cal_group *gr = &mrep->group[g];
        if (gr->framework[0] || gr->mem_rows <= 0 || !isfinite(gr->mem_mean_abs_err_after_pct))
            continue;
        for (int j = 0; j < band.ngpus; j++)
            if (strcmp(band.gpus[j].silicon, gr->silicon) == 0 && !(band.gpus[j].mem_err_pct > 0)) {
                band.gpus[j].mem_err_pct = round(gr->mem_mean_abs_err_after_pct * 100) / 100;
                any = 1;
            }
    }
    /* only a run the planner finds out of memory is read again under the
     * band (the only reading it changes) */
    for (int i = 0; any && i < nrows; i++) {
        if (!res[i].pred_oom || res[i].ref_oom)
            continue;
        st_err e = {0};
        if (plan_validate_run(&band, &rows[i], &res[i], NULL, &e) != ST_OK)
            memset(&res[i], 0, sizeof res[i]); /* not used */
    }
    /* ... and a configuration's rows with the recompute they share, as
     * validate reads them */
    if (any)
        rc = plan_validate_share_recompute(&band, rows, nrows, res, err);
done:
    plan_catalog_free(&band);
    free(mrep);
    return rc;
}

int plan_calibrate(plan_catalog *cat, const plan_validate_row *rows, int nrows,
                   const plan_cal_options *opt, plan_cal_report *rep, st_err *err)
{
    memset(rep, 0, sizeof *rep);
    plan_validate_result *res = calloc(nrows > 0 ? (size_t)nrows : 1, sizeof *res);
    if (!res)
        return ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
    /* map every row once */
    for (int i = 0; i < nrows; i++) {
        st_err e = {0};
        if (plan_validate_run(cat, &rows[i], &res[i], NULL, &e) != ST_OK)
            memset(&res[i], 0, sizeof res[i]); /* not used */
    }
    int rc = plan_validate_share_recompute(cat, rows, nrows, res, err);
    if (rc == ST_OK)
        rc = remap_with_band(cat, rows, nrows, res, err);
    if (rc == ST_OK)
        rc = plan_calibrate_results(cat, res, nrows, opt, rep, err);
    free(res);
    return rc;
}

int plan_calibrate_results(plan_catalog *cat, const plan_validate_result *res, int nrows,
                           const plan_cal_options *opt, plan_cal_report *rep, st_err *err)
{
    plan_cal_options o = opt ? *opt : (plan_cal_options){0};
    memset(rep, 0, sizeof *rep);
    int rc = ST_OK;
    cal_row *row = calloc(nrows > 0 ? (size_t)nrows : 1, sizeof *row);
    cal_row *mrow = calloc(nrows > 0 ? (size_t)nrows : 1, sizeof *mrow);
    int *use = calloc(nrows > 0 ? (size_t)nrows : 1, sizeof *use);
    double *w = calloc(nrows > 0 ? (size_t)nrows : 1, sizeof *w);
    plan_catalog start = {0};
    if (!row || !mrow || !use || !w || copy_catalog(&start, cat) != ST_OK) {
        rc = ST_RAISE(err, ST_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    cal c = {.cat = cat, .res = res, .row = row, .mrow = mrow, .rep = rep, .use = use, .w = w,
             .keep_chips = o.keep_chips};

    for (int i = 0; i < nrows; i++) {
        const plan_validate_result *r = &res[i];
        if (!r->have_layout || r->inst.gpu_index < 0 || r->inst.gpu_index >= cat->ngpus)
            continue;
        if (r->have_mem) {
            cal_row *m = &mrow[c.nmrow++];
            m->r = r;
            cpy(m->family, sizeof m->family,
                plan_fw_family_key(plan_framework_get(r->framework)->family));
            cpy(m->silicon, sizeof m->silicon, silicon_of(&cat->gpus[r->inst.gpu_index]));
        }
        if (!r->compared)
            continue;
        /* a run whose published layout the planner finds out of memory
         * ran all the same: what validate scores is what is fitted */
        if (r->pred_oom)
            rep->rows_oom++;
        cal_row *cr = &row[c.nrow];
        cr->r = r;
        snprintf(cr->family, sizeof cr->family, "%s",
                 plan_fw_family_key(plan_framework_get(r->framework)->family));
        const char *si = silicon_of(&cat->gpus[r->inst.gpu_index]);
        size_t sl = strnlen(si, sizeof cr->silicon - 1);
        memcpy(cr->silicon, si, sl);
        cr->silicon[sl] = '\0';
        int s = 0;
        while (s < rep->nsources && strcmp(rep->source[s].source_key, r->source_key) != 0)
            s++;
        if (s == rep->nsources) {
            if (s == PLAN_VAL_SOURCES_MAX)
                continue;
            plan_cal_source *ps = &rep->source[rep->nsources++];
            snprintf(ps->source_key, sizeof ps->source_key, "%s", r->source_key);
            snprintf(ps->framework, sizeof ps->framework, "%s", cr->family);
            snprintf(ps->silicon, sizeof ps->silicon, "%s", cr->silicon);
            ps->loso_mean_abs_err_pct = NAN;
        }
        rep->source[s].rows++;
        cr->source = s;
        cr->piece = piece_of(&rep->source[s], plan_framework_get(r->framework), cr);
        c.nrow++;
    }
    rep->rows_used = c.nrow;

    if ((rc = fit_all(&c, &o, -1, rep->group, &rep->ngroups, err)))
        goto done;
    if ((!o.params || (o.params & PLAN_EFF_MEMORY_MASK)) && (rc = fit_memory(&c, rep, err)))
        goto done;

    if (o.loso) {
        double pool_err[PLAN_VAL_SOURCES_MAX], fw_err[PLAN_VAL_SOURCES_MAX];
        for (int s = 0; s < rep->nsources; s++) {
            plan_cal_source *src = &rep->source[s];
            rc = loso_one(&c, &start, &o, s, &fw_err[s], &pool_err[s], src->loso_basis,
                          sizeof src->loso_basis, err);
            if (rc)
                goto done;
            src->loso_mean_abs_err_pct = fw_err[s];
        }
        /* A framework fit that predicts its own sources, each held out,
         * worse on average than the chip's pool does (also without them)
         * is not kept: it fits its rows without carrying over to runs it
         * did not see. */
        for (int g = 0; g < rep->ngroups; g++) {
            plan_cal_group *gr = &rep->group[g];
            if (!gr->framework[0] || gr->sources < 2)
                continue;
            double fw_sum = 0, pool_sum = 0;
            int n = 0;
            for (int s = 0; s < rep->nsources; s++) {
                const plan_cal_source *src = &rep->source[s];
                if (strcmp(src->framework, gr->framework) != 0 ||
                    strcmp(src->silicon, gr->silicon) != 0 || isnan(pool_err[s]))
                    continue;
                fw_sum += fw_err[s];
                pool_sum += pool_err[s];
                n++;
            }
            if (n == 0 || !(fw_sum > pool_sum))
                continue;
            gr->rejected = 1;
            snprintf(gr->why, sizeof gr->why,
                     "its %d sources, each held out, are predicted %.1f%% off on average by this "
                     "fit, %.1f%% by the %s %s", n, fw_sum / n, pool_sum / n, gr->silicon,
                     o.keep_chips ? "chip's own values" : "pool");
            drop_eff(cat, gr->framework, gr->silicon);
        }
    }

    /* every source under the catalog as it now stands */
    double sum = 0, lsum = 0;
    int nl = 0;
    for (int s = 0; s < rep->nsources; s++) {
        plan_cal_source *src = &rep->source[s];
        src->mean_abs_err_pct = source_error(&c, s);
        sum += src->mean_abs_err_pct;
        if (src->mean_abs_err_pct > rep->max_source_err_pct)
            rep->max_source_err_pct = src->mean_abs_err_pct;
        if (!isnan(src->loso_mean_abs_err_pct)) {
            lsum += src->loso_mean_abs_err_pct;
            nl++;
            if (src->loso_mean_abs_err_pct > rep->loso_max_source_err_pct)
                rep->loso_max_source_err_pct = src->loso_mean_abs_err_pct;
        }
    }
    rep->mean_source_err_pct = rep->nsources ? sum / rep->nsources : 0;
    rep->loso_mean_source_err_pct = nl ? lsum / nl : NAN;

done:
    plan_catalog_free(&start);
    free(w);
    free(use);
    free(mrow);
    free(row);
    return rc;
}
