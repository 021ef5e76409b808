/*
 * plan_calibrate.h: fit the efficiency parameters of each (framework, GPU
 * chip) to measured runs, and say how well they predict runs they never saw.
 *
 * The planner's compute model has a few efficiency parameters (plan_eff:
 * gemm_eff_max, hbm_eff, flash_eff, fp8_gemm_eff): how close a stack's
 * matrix products, memory-bound kernels, fused attention and FP8 GEMMs come
 * to the chip's peaks; and one of the chip's own, gemm_dim_half (how fast a
 * GEMM's efficiency falls with small dims), fitted only in the chip's pool. They are stack efficiencies, so they are fitted per
 * (framework family, chip): Megatron-Core on GH100, FSDP on GA100, ...,
 * and kept in the catalog's "efficiencies". Each chip also gets a pooled
 * fit over every framework's runs on it (the GPU's own values), which a
 * framework without runs on that chip uses. Nothing is fitted per source
 * or per row.
 *
 * The fit: nonlinear least squares (GSL's trust-region solver) on the error
 * e = log(predicted / measured) step time, as sqrt|e| residuals so the sum
 * minimised is the sum of |e|; each published source weighs the same, so a
 * source with 200 rows does not drown one with 10. Each parameter stays in
 * its physical range (a logistic map); a GEMM efficiency never above the
 * chip's measured GEMM ceiling. The solver runs from the chip's values and
 * from the middle of every range, each restarted where it stops while that
 * still lowers the sum, and the lower sum is kept: one start alone can stall
 * at a kink of the sum or against a bound, and where depends on rounding (on
 * the CPU's BLAS kernels), so the result would. A parameter the rows do not
 * constrain is left as it was. Standard errors come from the weighted
 * Jacobian of e at the solution: cov = s^2 (J^T W J)^-1.
 *
 * Leave-one-source-out: every fit is repeated without each source in turn
 * and that source's runs predicted by what remains: its framework's fit on
 * its chip from the other sources if there are any, else the chip's pooled
 * fit, else the chip's starting values (its physics alone). A framework fit
 * that predicts its own sources, each held out, worse on average than the
 * chip's pooled fit (also without them) is rejected: its rows then use the
 * pooled fit. A held-out source's errors are also kept by the stack release
 * and chip of its runs (plan_cal_piece): the error bands plans carry are per
 * (stack release, chip), while the fits are per (framework family, chip).
 *
 * Memory: the allocator's reserve (plan_eff alloc_frac) is a stack
 * property too; it is fitted per (framework, chip) and per chip to the
 * runs that publish per-GPU memory (GSL's Brent minimiser of their mean
 * |error| %, from the best of a coarse scan), where such runs exist.
 *
 * Pure computation: the catalog passed in is modified in place.
 */
#ifndef SMD_PLAN_CALIBRATE_H
#define SMD_PLAN_CALIBRATE_H

#include "planner/plan.h"
#include "planner/plan_framework.h"
#include "planner/plan_validate.h"

/* Parse a comma-separated list of plan_eff_param names into a bit mask. */
int plan_cal_params_parse(const char *list, unsigned *mask, st_err *err);

#define PLAN_CAL_ALL ((1u << PLAN_EFF__COUNT) - 1)
/* What is fitted unless asked: the framework efficiencies, and in each
 * chip's pool (every framework's runs on it) the chip's GEMM dimension
 * scale gemm_dim_half, a property of its tiles and SM count that every
 * framework's fit then shares: a chip of more SMs needs larger dimensions
 * to fill them (H100 SXM 132 SMs against A100's 108; NVIDIA Matrix
 * Multiplication Background User's Guide, wave quantization). */
/* The HBM efficiency is not fitted unless asked: it is the chip's
 * streaming rate, measured where the chip has a measured-rates file (a
 * device copy moved 2990 of 3350 GB/s on the H100, gpu_h100_measured.json)
 * and the catalog's elsewhere. Fitted to step times it was determined by
 * no run (standard errors of 0.07-0.27 on a 0.3-0.9 range) and three of
 * its fits ended on a bound, absorbing what the other terms miss. */
#define PLAN_CAL_DEFAULT                                                                           \
    ((PLAN_EFF_FRAMEWORK_MASK & ~(1u << PLAN_EFF_HBM)) | (1u << PLAN_EFF_DIM_HALF))

/* The allocator's reserve (alloc_frac) is fitted until the bracket of
 * Brent's minimiser that holds the minimum is narrower than this (GSL's
 * gsl_min_test_interval, absolute): the value is known to within it. */
#define PLAN_CAL_ALLOC_TOL 1e-5

typedef struct plan_cal_options {
    unsigned params;             /* plan_eff_param bits asked (0: PLAN_CAL_DEFAULT) */
    int loso;                    /* run leave-one-source-out (and the rejection test) */
    const char *framework;       /* fit only this family ("" or NULL: every one) */
    const char *silicon;         /* fit only this chip ("" or NULL: every one) */
    /* 1: the chips' own values stay as the catalog has them (no pool is
     * fitted): only frameworks are, each starting from and held out
     * against its chip's values. For runs of one stack (the executor's own,
     * `smdplan calibrate --runs`), whose chip values come from elsewhere
     * (smdplan bench, or the published runs' pools) and must not be
     * refitted from that one stack. */
    int keep_chips;
} plan_cal_options;

/* Where the bounds of parameter p's range come from (one line). */
const char *plan_cal_bound_source(plan_eff_param p);

/* One fit: a framework family on a chip, or a chip's pool (framework ""). */
typedef struct plan_cal_group {
    char framework[16];
    char silicon[32];
    int rows;                    /* runs fitted */
    int sources;                 /* their published sources */
    unsigned asked;              /* parameters asked */
    unsigned fitted;             /* those the runs constrain */
    unsigned undetermined;       /* constrained, but with a standard error over half
                                  * their range: not fitted, the chip's value kept
                                  * (std_err holds the error they had) */
    plan_eff before, after;
    double std_err[PLAN_EFF__COUNT];
    double mean_abs_err_before_pct;   /* mean over sources of each source's mean |error| */
    double mean_abs_err_after_pct;
    double max_abs_err_after_pct;     /* worst row */
    int iterations;              /* the solver's, every start and restart together */
    int converged;
    int rejected;                /* worsened a held-out source: not kept */
    int pooled;                  /* too few independent sources for a fit of its own:
                                  * not fitted, the chip's pool predicts it */
    unsigned on_bound;           /* fitted parameters that ended on a bound of their
                                  * range: a failure of the model (physics the fit
                                  * absorbs), not a result */
    int mem_rows;                /* runs with a measured memory the allocator's reserve
                                  * (alloc_frac) was fitted to; 0: not fitted */
    double mem_mean_abs_err_before_pct, mem_mean_abs_err_after_pct;
    char why[160];               /* the rejection, one line */
} plan_cal_group;

/* The runs of one source with one stack release on one chip, held out
 * with their source: what an error band is made of. A band belongs to a
 * (stack release, chip), and a source may span several (llm-foundry's
 * tables on A100 and H100, the DGX Cloud benchmarks' NeMo and MaxText). */
typedef struct plan_cal_piece {
    char release[PLAN_FW_KEY_MAX]; /* plan_framework.key: "megatron@2024" */
    char framework[16];          /* its family: "megatron" */
    char silicon[32];
    int rows;
    double loso_mean_abs_err_pct;/* their mean |error| with the source held out; NAN
                                  * without --loso */
} plan_cal_piece;

#define PLAN_CAL_PIECES_MAX 8

/* How one published source fares in the fit and held out of it. */
typedef struct plan_cal_source {
    char source_key[PLAN_VAL_KEY_MAX];
    char framework[16];          /* its rows' framework family (the first row's) */
    char silicon[32];
    int rows;                    /* runs compared */
    double mean_abs_err_pct;     /* after the fit, with every source */
    double loso_mean_abs_err_pct;/* predicted without it; NAN without --loso */
    char loso_basis[96];         /* what predicted it when held out */
    char loso_bound[128];        /* the fits made without it whose parameters ended on a
                                  * bound ("GA100 pool: gemm_dim_half"): as in the full
                                  * fit, a failure of the model; "" when none */
    int npieces;                 /* its runs by (stack release, chip), in order seen */
    plan_cal_piece piece[PLAN_CAL_PIECES_MAX];
} plan_cal_source;

#define PLAN_CAL_GROUPS_MAX 64

typedef struct plan_cal_report {
    int ngroups;
    plan_cal_group group[PLAN_CAL_GROUPS_MAX];
    int nsources;
    plan_cal_source source[PLAN_VAL_SOURCES_MAX];
    int rows_used;               /* rows with a compared time, fitted */
    int rows_oom;                /* of rows_used, those whose published layout does not
                                  * fit by the planner's memory model, though they ran:
                                  * fitted as validate scores them */
    double mean_source_err_pct;  /* mean over sources of their mean |error| */
    double max_source_err_pct;
    double loso_mean_source_err_pct;
    double loso_max_source_err_pct;
} plan_cal_report;

/* Fit every (framework, chip) and chip pool the rows cover (or those the
 * options name), write the values into cat (GPU fields for pools, efficiency
 * entries for frameworks), and report. Rows are mapped once with cat as
 * given (the micro-batch a row does not publish is searched then and kept).
 * ST_ENOMEM / ST_EINTERNAL on failures; rows that cannot be predicted are
 * simply not used. */
int plan_calibrate(plan_catalog *cat, const plan_validate_row *rows, int nrows,
                   const plan_cal_options *opt, plan_cal_report *rep, st_err *err);

/* The same fit from rows already mapped (plan_validate_run's results, or
 * results made from measured runs whose model, layout, node and time are
 * known exactly: the executor's recorded runs). A row takes part when it
 * has a layout (have_layout, a catalog GPU in inst), a compared time
 * (compared, ref_time_s) and the planner does not find it out of memory
 * (pred_oom); its source_key groups it for the weights and leave-one-
 * source-out. res is borrowed for the call. */
int plan_calibrate_results(plan_catalog *cat, const plan_validate_result *res, int nrows,
                           const plan_cal_options *opt, plan_cal_report *rep, st_err *err);

#endif
