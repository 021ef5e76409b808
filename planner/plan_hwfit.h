/*
 * plan_hwfit.h: the catalog's device parameters fitted to measurements of
 * the device itself (smdplan bench), rather than to published training
 * runs (plan_calibrate.h).
 *
 * The planner times a GEMM of m x n x k on a device as (plan_hw.c)
 *     peak x gemm_eff_max x prod_{d in m, n, k} d / (d + gemm_dim_half)
 * (times misaligned_factor when a side is not a multiple of 8). Given
 * measured rates of GEMMs of several shapes on one device, the fit below
 * finds the asymptote A = peak x gemm_eff_max and gemm_dim_half that make
 * this model closest to them in log(time) of each group of samples (every
 * group, or every ungrouped shape, weighs the same in relative terms): a
 * group is what a step is made of, so its total is what the planner must
 * get right. Pure computation, no allocation.
 */
#ifndef SMD_PLAN_HWFIT_H
#define SMD_PLAN_HWFIT_H

#include "common/st.h"

/* One measured GEMM: sides and achieved FLOP/s. Samples with the same
 * group > 0 are the GEMMs of one unit of work (a transformer layer's
 * linears and attention at one size): the fit matches their total time, not
 * each one's; group 0 is a sample of its own. */
typedef struct plan_gemm_sample {
    double m, n, k;
    double flops;
    int group;
} plan_gemm_sample;

typedef struct plan_gemm_fit {
    double asymptote_flops;      /* A: the rate as every side grows without bound */
    double dim_half;             /* gemm_dim_half */
    double rms_log_err;          /* root mean square over groups of log(model / measured) */
    double max_abs_err_pct;      /* worst group's |model - measured| / measured, percent */
    int used;                    /* samples fitted (sides multiples of 8) */
    int groups;                  /* groups (an ungrouped sample counts as one) */
} plan_gemm_fit;

/* Largest dim_half the fit considers, elements. */
#define PLAN_GEMM_DIM_HALF_MAX 16384.0

/* Fit A and dim_half to n samples; samples with a side that is not a
 * multiple of 8 are left out (misaligned_factor covers them). ST_EINVAL
 * with fewer than two usable groups or a non-positive value. */
int plan_gemm_fit_run(const plan_gemm_sample *s, int n, plan_gemm_fit *out, st_err *err);

/* The model's rate for one shape under a fit (aligned sides). */
double plan_gemm_fit_rate(const plan_gemm_fit *f, double m, double n, double k);

#endif
