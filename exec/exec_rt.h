/*
 * exec_rt.h: one rank's run (internal to exec/): its groups, device,
 * model, optimizer, data and the pipeline runner's state.
 */
#ifndef SMD_EXEC_RT_H
#define SMD_EXEC_RT_H

#include "exec/exec.h"
#include "exec/exec_data.h"
#include "exec/exec_model.h"
#include "exec/exec_optim.h"
#include "sim/sim_schedule.h"

/* A free list of equal buffers: taken and returned counted in the device's
 * memory accounting (what is live), kept allocated between uses. */
typedef struct exec_pool {
    size_t bytes;
    exec_mem_class cls;
    void **free;
    int nfree, cap;
} exec_pool;

/* A send in flight and the buffer it reads. */
typedef struct exec_send {
    exec_req *req;
    void *buf;
} exec_send;

/* Per-step figures of one rank. */
typedef struct exec_step_stat {
    double wall_s;
    exec_phases ph;
    double loss, lr, grad_norm;
} exec_step_stat;

typedef struct exec_rt {
    const exec_config *cfg;
    exec_comm *world, *tp, *pp, *dp, *emb;
    int rank, tp_rank, pp_rank, dp_rank;
    exec_dev *dev;
    exec_model x;
    exec_optim opt;
    exec_data data;
    exec_timers timers;
    int64_t step;                /* steps done (0-based index of the next) */

    /* the stage's op list, from the simulator's generator */
    sim_sched sched;
    sim_op *ops;
    int nops;

    /* per step */
    int32_t *tok_in, *tok_tgt;   /* device [m][N], stage 0 / last stage */
    int32_t *host_tok;           /* host [2 N + 2 T] */
    void **slot;                 /* [chunk][mb] stored activations */
    void **wstore;               /* [chunk][mb] zero bubble's W stores */
    exec_pool *slot_pool, *wstore_pool;  /* per chunk */
    exec_pool send_pool;         /* [Nr, C] activations and gradients */
    exec_send *sends;
    int nsends, sends_cap;
    void *pending_out;           /* output of the last F / B, for its SEND */
    void **hand_fwd, **hand_bwd; /* [chunk][mb] with pp == 1: a chunk's output (input
                                  * gradient) for the next (previous) chunk on this rank */
    double loss_sum;             /* this step's loss contributions */

    exec_step_stat *stats;       /* [steps] */
    char saved_dir[EXEC_PATH_MAX + 32]; /* the last checkpoint this run wrote ("" none) */
} exec_rt;

/* exec_pipe.c: the pipeline runner. */
int exec_pipe_init(exec_rt *rt, st_err *err);
void exec_pipe_fini(exec_rt *rt);
/* Forward and backward of every microbatch of step rt->step and the
 * gradient sync: afterwards the held gradients are final and rt->loss_sum
 * holds this rank's part of the loss (no optimizer step). */
int exec_pipe_grads(exec_rt *rt, exec_phases *ph, st_err *err);
/* One training step (forward, backward, gradient sync, optimizer) at
 * rt->step; fills rt->stats[rt->step]. */
int exec_pipe_step(exec_rt *rt, st_err *err);

/* exec_run.c: set up and tear down one rank's run (collective). */
int exec_rt_init(exec_rt *rt, const exec_config *cfg, exec_comm *world, st_err *err);
void exec_rt_free(exec_rt *rt);

/* exec_ckpt.c */
int exec_ckpt_save(exec_rt *rt, const char *dir, st_err *err);
int exec_ckpt_load(exec_rt *rt, const char *dir, st_err *err);

/* exec_dump.c: the weights this rank owns, by global tensor (test mode). */
int exec_dump_weights(exec_rt *rt, const char *dir, st_err *err);

#endif
