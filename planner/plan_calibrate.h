/*
 * plan_calibrate.h: fit a GPU type's efficiency parameters to measured runs.
 *
 * The planner's compute model has a handful of hardware-efficiency
 * parameters per GPU type (plan_gpu: gemm_eff_max, gemm_dim_half,
 * misaligned_factor, hbm_eff, flash_eff, align_partial_factor). GPU types
 * made of the same chip (plan_gpu.silicon: A100-40GB and A100-80GB are both
 * GA100) share them: they are fitted together over all those types' rows and
 * written into each. This module fits them to published
 * runs (rows of a calibration CSV, mapped by plan_validate) by nonlinear least
 * squares on log(predicted / measured) iteration time (GSL's trust-region
 * solver, gsl_multifit_nlinear), so one set of parameters per GPU type serves
 * every row of that GPU: no per-row or per-source factors.
 *
 * Pure computation: no files. The catalog passed in is modified in place
 * (the fitted values are written into its GPU entry).
 */
#ifndef SMD_PLAN_CALIBRATE_H
#define SMD_PLAN_CALIBRATE_H

#include "planner/plan.h"
#include "planner/plan_validate.h"

typedef enum plan_cal_param {
    PLAN_CAL_GEMM_EFF_MAX = 0,
    PLAN_CAL_GEMM_DIM_HALF,
    PLAN_CAL_MISALIGNED,
    PLAN_CAL_HBM_EFF,
    PLAN_CAL_FLASH_EFF,
    PLAN_CAL_ALIGN_PARTIAL,
    PLAN_CAL__COUNT
} plan_cal_param;

/* "gemm_eff_max", ... (the catalog's field names). */
const char *plan_cal_param_name(plan_cal_param p);
/* Parse a comma-separated list of names into a bit mask (1 << param). */
int plan_cal_params_parse(const char *list, unsigned *mask, st_err *err);

#define PLAN_CAL_ALL ((1u << PLAN_CAL__COUNT) - 1)
/* What `smdplan calibrate` fits unless told: gemm_dim_half is left out,
 * because runs of one model size barely constrain it apart from
 * gemm_eff_max (they trade off against each other). */
#define PLAN_CAL_DEFAULT (PLAN_CAL_ALL & ~(1u << PLAN_CAL_GEMM_DIM_HALF))

typedef struct plan_calibration {
    char gpu[32];                        /* the GPU asked for */
    char silicon[32];                    /* its chip: every GPU of it got the values */
    int rows;                            /* rows of this GPU with a compared time */
    unsigned asked;                      /* parameters asked for */
    unsigned fitted;                     /* those the rows constrain (others kept) */
    double before[PLAN_CAL__COUNT];
    double after[PLAN_CAL__COUNT];
    double mean_abs_err_before_pct;
    double mean_abs_err_after_pct;
    double max_abs_err_after_pct;
    int iterations;
    int converged;                       /* the solver met its tolerance */
} plan_calibration;

/* Fit the parameters in mask for catalog GPU gpu_index over the rows whose
 * cluster uses a GPU of the same silicon. Writes the fitted values into every
 * catalog GPU of that silicon (and fills out, before and after). A GPU with no usable rows is a result
 * (out->rows == 0, nothing changed). ST_ENOMEM / ST_EINTERNAL on failure. */
int plan_calibrate_gpu(plan_catalog *cat, int gpu_index, const plan_validate_row *rows,
                       int nrows, unsigned mask, plan_calibration *out, st_err *err);

#endif
