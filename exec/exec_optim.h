/*
 * exec_optim.h: the optimizer step (internal to exec/): AdamW state over
 * the elements this rank updates, the learning-rate schedule, clipping.
 */
#ifndef SMD_EXEC_OPTIM_H
#define SMD_EXEC_OPTIM_H

#include "exec/exec_model.h"

typedef struct exec_optim {
    exec_model *x;
    void *m, *v;                 /* [held_numel] of the device's state type */
    void *master;                /* [held_numel] master weights (has_master), or NULL */
    size_t bytes;                /* of each */
    exec_adamw_range *ranges;    /* adamw_multi's list, made at the first step */
    int nranges, cap_ranges;
} exec_optim;

int exec_optim_init(exec_optim *o, exec_model *x, st_err *err);
/* Master weights made again from the parameters (after loading them). */
void exec_optim_sync_master(exec_optim *o);
void exec_optim_fini(exec_optim *o);

/* Learning rate of 0-based step. */
double exec_lr_at(const exec_train *t, int64_t step);

/* This rank's share of the squared global gradient norm (after the syncs
 * of exec_dp_finish). */
double exec_optim_local_sumsq(exec_optim *o);

/* Multiplier of the gradients for a global norm and a limit (1: none). */
double exec_clip_scale(double norm, double clip);

/* AdamW on the held elements at 0-based step with lr. */
void exec_optim_apply(exec_optim *o, const exec_train *t, int64_t step, double lr,
                      double grad_scale);

#endif
