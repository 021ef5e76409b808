/*
 * exec_dp.c: data parallelism and the other gradient syncs of a step.
 *
 *  - Buckets (exec_params.c) are reduced as soon as their last unit's
 *    weight gradients are final, while the backward goes on, when the
 *    layout says dp_overlap (PyTorch DDP and Megatron's overlapped grad
 *    reduce: a bucket's all-reduce starts when its last gradient is
 *    ready); otherwise all of them after the last backward.
 *  - sharding none: all-reduce. optimizer (ZeRO-1): all-reduce, then each
 *    rank updates its shard and the shards are all-gathered. gradients
 *    (ZeRO-2) and params (ZeRO-3): reduce-scatter into this rank's shard
 *    (Rajbhandari et al. 2020, Sec. 5). ZeRO-3 keeps only parameter shards
 *    and all-gathers a unit before each use (forward, recompute,
 *    backward), freeing it after. The gradients are synced once per step
 *    (the planner's profile of this executor: sync_sharded per step).
 *  - With sequence parallelism the norms' and positions' gradients are
 *    partial per TP rank and are summed over TP (Megatron's
 *    allreduce_layernorm_grads); a tied embedding's two copies (first and
 *    last stage) sum their gradients (Megatron's embedding group).
 */
#include <string.h>

#include "exec/exec_model.h"

static double elapsed(double t0)
{
    return exec_now_s() - t0;
}

/* ---- ZeRO-3 gathers ---- */

int exec_z3_acquire(exec_model *x, int u, st_err *err)
{
    if (!x->zero3 || u < 0)
        return ST_OK;
    exec_unit *un = &x->u[u];
    if (un->refs++ > 0)
        return ST_OK;
    const exec_bucket *b = &x->b[un->bucket];
    size_t es = x->dev->elem_bytes;
    un->gathered = exec_dev_alloc(x->dev, (size_t)b->len * es, EXEC_MEM_PARAMS, err);
    if (!un->gathered) {
        un->refs = 0;
        return ST_ENOMEM;
    }
    double t0 = exec_now_s();
    int rc = exec_comm_allgather(x->dp, exec_dev_at(x->dev, x->pshard, b->shard_off), un->gathered,
                                 (size_t)b->held_len, x->dev->ops->dtype, NULL, err);
    x->timers->dp_s += elapsed(t0);
    return rc;
}

void exec_z3_release(exec_model *x, int u)
{
    if (!x->zero3 || u < 0)
        return;
    exec_unit *un = &x->u[u];
    if (--un->refs > 0)
        return;
    exec_dev_free(x->dev, un->gathered, (size_t)x->b[un->bucket].len * x->dev->elem_bytes,
                  EXEC_MEM_PARAMS);
    un->gathered = NULL;
    un->refs = 0;
}

/* ---- buckets ---- */

static int scattered(const exec_model *x)
{
    return x->l->sharding == PLAN_SHARD_GRADIENTS || x->l->sharding == PLAN_SHARD_PARAMS;
}

void *exec_held_param(const exec_model *x, const exec_bucket *b, int64_t e)
{
    if (x->zero3)
        return exec_dev_at(x->dev, x->pshard, b->shard_off + (e - b->held_off));
    return exec_dev_at(x->dev, x->params, e);
}

void *exec_held_grad(const exec_model *x, const exec_bucket *b, int64_t e)
{
    if (scattered(x))
        return exec_dev_at(x->dev, x->gshard, b->shard_off + (e - b->held_off));
    return exec_dev_at(x->dev, x->grads, e);
}

void exec_each_held(const exec_model *x, exec_held_fn f, void *ctx)
{
    for (int bi = 0; bi < x->nb; bi++) {
        const exec_bucket *b = &x->b[bi];
        for (int ui = b->unit0; ui < b->unit0 + b->nunits; ui++)
            for (int r = 0; r < R__COUNT; r++) {
                int ti = x->u[ui].tensor[r];
                if (ti < 0)
                    continue;
                int64_t lo = x->u[ui].off + x->t[ti].off, hi = lo + x->t[ti].numel;
                lo = lo > b->held_off ? lo : b->held_off;
                hi = hi < b->held_off + b->held_len ? hi : b->held_off + b->held_len;
                if (hi > lo)
                    f(b, r, &x->t[ti], lo, hi, ctx);
            }
    }
}

int64_t exec_held_state(const exec_bucket *b, int64_t e)
{
    return b->shard_off + (e - b->held_off);
}

void exec_dp_step_begin(exec_model *x)
{
    x->dev->ops->zero(x->dev, x->grads, (size_t)x->flat_numel * x->dev->elem_bytes);
    for (int i = 0; i < x->nu; i++)
        x->u[i].wdone = 0;
    for (int i = 0; i < x->nb; i++) {
        x->b[i].ready = 0;
        x->b[i].started = 0;
        x->b[i].req = NULL;
    }
}

/* Start bucket b's reduction (non-blocking). */
static int bucket_start(exec_model *x, exec_bucket *b, st_err *err)
{
    b->started = 1;
    exec_dtype t = x->dev->ops->dtype;
    if (x->dp->size == 1 && !scattered(x))
        return ST_OK;
    double t0 = exec_now_s();
    void *g = exec_dev_at(x->dev, x->grads, b->off);
    int rc;
    if (scattered(x))
        rc = exec_comm_reduce_scatter(x->dp, g, exec_dev_at(x->dev, x->gshard, b->shard_off),
                                      (size_t)b->held_len, t, EXEC_RED_SUM, &b->req, err);
    else
        rc = exec_comm_allreduce(x->dp, g, g, (size_t)b->len, t, EXEC_RED_SUM, &b->req, err);
    x->timers->dp_s += elapsed(t0);
    return rc;
}

int exec_unit_wgrad_done(exec_model *x, int u, st_err *err)
{
    exec_unit *un = &x->u[u];
    if (++un->wdone != un->contrib * x->l->microbatches)
        return ST_OK;
    exec_bucket *b = &x->b[un->bucket];
    if (++b->ready == b->nunits && x->l->dp_overlap)
        return bucket_start(x, b, err);
    return ST_OK;
}

int exec_dp_progress(exec_model *x, st_err *err)
{
    for (int i = 0; i < x->nb; i++) {
        if (!x->b[i].req)
            continue;
        int done;
        int rc = exec_comm_test(&x->b[i].req, &done, err);
        if (rc != ST_OK)
            return rc;
    }
    return ST_OK;
}

/* Sum, over group c, the parts of the held gradients in tensors with any
 * of the flags (packed into one message). */
static int sync_flagged(exec_model *x, exec_comm *c, unsigned flags, int only_kind,
                        double *timer, st_err *err)
{
    exec_dev *dev = x->dev;
    size_t es = dev->elem_bytes;
    int64_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (n == 0)
                return ST_OK;
            double t0 = exec_now_s();
            int rc = exec_comm_allreduce(c, x->sp_pack, x->sp_pack, (size_t)n, dev->ops->dtype,
                                         EXEC_RED_SUM, NULL, err);
            *timer += elapsed(t0);
            if (rc != ST_OK)
                return rc;
            n = 0;
        }
        for (int bi = 0; bi < x->nb; bi++) {
            const exec_bucket *b = &x->b[bi];
            for (int ui = b->unit0; ui < b->unit0 + b->nunits; ui++) {
                const exec_unit *un = &x->u[ui];
                if (only_kind >= 0 && (int)un->kind != only_kind)
                    continue;
                for (int r = 0; r < R__COUNT; r++) {
                    int ti = un->tensor[r];
                    if (ti < 0 || !(x->t[ti].flags & flags))
                        continue;
                    int64_t lo = un->off + x->t[ti].off, hi = lo + x->t[ti].numel;
                    if (lo < b->held_off)
                        lo = b->held_off;
                    if (hi > b->held_off + b->held_len)
                        hi = b->held_off + b->held_len;
                    if (hi <= lo)
                        continue;
                    void *pk = exec_dev_at(dev, x->sp_pack, n), *g = exec_held_grad(x, b, lo);
                    if (pass == 0)
                        dev->ops->copy(dev, pk, g, (size_t)(hi - lo) * es);
                    else
                        dev->ops->copy(dev, g, pk, (size_t)(hi - lo) * es);
                    n += hi - lo;
                }
            }
        }
    }
    return ST_OK;
}

int exec_dp_finish(exec_model *x, st_err *err)
{
    int rc;
    for (int i = 0; i < x->nb; i++) {
        exec_bucket *b = &x->b[i];
        if (!b->started) {
            if ((rc = bucket_start(x, b, err)))
                return rc;
            if (!x->l->dp_overlap) { /* one after the other, nothing overlapped */
                double t0 = exec_now_s();
                rc = exec_comm_wait(&b->req, "the gradient reduction", err);
                x->timers->dp_s += elapsed(t0);
                if (rc)
                    return rc;
            }
        }
    }
    double t0 = exec_now_s();
    for (int i = 0; i < x->nb; i++)
        if ((rc = exec_comm_wait(&x->b[i].req, "the gradient reduction", err)))
            return rc;
    x->timers->dp_s += elapsed(t0);
    if (x->sp && (rc = sync_flagged(x, x->tp, EXEC_T_SP_PARTIAL, -1, &x->timers->tp_s, err)))
        return rc;
    if (x->emb && x->emb->size > 1) {
        /* the embedding on stage 0 and its copy on the last stage */
        if ((rc = sync_flagged(x, x->emb, EXEC_T_DECAY, U_EMBED, &x->timers->emb_s, err)) ||
            (rc = sync_flagged(x, x->emb, EXEC_T_TIED_COPY, U_HEAD, &x->timers->emb_s, err)))
            return rc;
    }
    return ST_OK;
}

int exec_dp_gather_params(exec_model *x, st_err *err)
{
    if (x->l->sharding == PLAN_SHARD_NONE || x->zero3 || x->dp->size == 1)
        return ST_OK;
    double t0 = exec_now_s();
    int rc = ST_OK;
    for (int i = 0; i < x->nb && rc == ST_OK; i++) {
        exec_bucket *b = &x->b[i];
        void *full = exec_dev_at(x->dev, x->params, b->off);
        rc = exec_comm_allgather(x->dp, exec_dev_at(x->dev, x->params, b->held_off), full,
                                 (size_t)b->held_len, x->dev->ops->dtype, &b->req, err);
    }
    for (int i = 0; i < x->nb; i++) {
        int r = exec_comm_wait(&x->b[i].req, "the parameter all-gather", err);
        if (rc == ST_OK)
            rc = r;
    }
    x->timers->dp_s += elapsed(t0);
    return rc;
}
