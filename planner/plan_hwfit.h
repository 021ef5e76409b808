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
#include "planner/plan.h"

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

/* ---- rates measured on a device, applied to its catalog GPU ----
 * A measured-rates file (data/measured/, named by a catalog GPU's
 * "measured") gives what one device reached: GEMMs by shape, fused
 * attention per kernel generation and direction, a device-to-device copy.
 * plan_gpu_measured turns them into the GPU's model:
 *   GEMMs: the model above fitted to the shapes (each shape a group of its
 *     own), leaving out calls at the harness's per-call floor: a call within
 *     PLAN_MEASURED_FLOOR_RATIO of the shortest measured one times the host's
 *     dispatch of a call, not the GEMM (the H100 file's four smallest
 *     shapes, 4.3 to 17.2 GFLOP, all took 26-30 us). gemm_ceiling becomes
 *     the asymptote over the peak (what no fitted efficiency exceeds) and
 *     gemm_dim_half the fitted one (the chip's, no longer fitted to runs);
 *   attention: forward efficiency = forward FLOP/s over the peak; backward
 *     from the forward-and-backward time less the forward one, at 2.5x the
 *     forward FLOPs (the planner's count, Dao 2023);
 *   copy: kept with the datasheet bandwidth of the memory it was measured
 *     on (plan_gpu_copy_eff). */
#define PLAN_MEASURED_GEMM_MAX 128
#define PLAN_MEASURED_FLOOR_RATIO 1.5

typedef struct plan_measured {
    plan_gemm_sample gemm[PLAN_MEASURED_GEMM_MAX]; /* bf16, group 0 */
    int ngemm;
    double flash2_fwd_flops, flash2_fwd_bwd_flops; /* FLOP/s; 0: not measured */
    double cudnn_fwd_flops, cudnn_fwd_bwd_flops;
    double copy_bps;             /* bytes read + written per second; 0: not measured */
    double hbm_bps;              /* the measured device's datasheet HBM bandwidth */
} plan_measured;

/* Apply m to g (whose peak_flops must be set). ST_EINVAL, naming the
 * value, when a rate is not positive or too few GEMM shapes remain. */
int plan_gpu_measured(plan_gpu *g, const plan_measured *m, st_err *err);

/* The fraction of g's HBM bandwidth a device-to-device copy measured on
 * memory of the same datasheet bandwidth reached; 0 when none was. */
double plan_gpu_copy_eff(const plan_gpu *g);

#endif
