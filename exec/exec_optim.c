/*
 * exec_optim.c: the optimizer step: learning-rate schedule, global
 * gradient-norm clipping and AdamW over the parameters this rank updates
 * (all of them, or its ZeRO shard).
 *
 *  - Schedule (llm.c's get_learning_rate): linear warm-up to lr over
 *    warmup_steps, then cosine decay to min_lr at the last step.
 *  - The global norm counts every parameter of the model once: a tensor
 *    copied on every TP rank only on TP rank 0, a tied embedding's copy
 *    not at all, an unsharded gradient only on DP rank 0 (sharded ones
 *    once per shard). One world all-reduce sums the squares (and the
 *    step's loss rides along). Gradients are scaled by clip / norm when
 *    the norm exceeds clip (Pascanu et al. 2013; torch clip_grad_norm_).
 *  - AdamW (Loshchilov & Hutter 2019) with weight decay on matrices and
 *    embeddings only (GPT-2's and llm.c's convention; biases and norms
 *    are not decayed).
 *  - A device computing in a narrower type than its state (bf16 on CUDA,
 *    has_master) keeps master weights of the state type for the elements
 *    this rank updates, made from the parameters at the start (Megatron's
 *    Float16OptimizerWithFloat16Params: fp32 main parameters cloned from the
 *    model's, updated by the optimizer and copied back into the model's
 *    parameters after every step; Micikevicius et al. 2018, Sec. 3.1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_optim.h"

/* Call f on every (tensor, held element range) of the rank. */
typedef void (*range_fn)(exec_optim *o, const exec_bucket *b, const exec_tensor *t, int64_t lo,
                         int64_t hi, void *ctx);

/* Added to the norm before dividing: torch.nn.utils.clip_grad_norm_'s 1e-6. */
#define EXEC_CLIP_EPS 1e-6

double exec_lr_at(const exec_train *t, int64_t step)
{
    if (t->warmup_steps > 0 && step < t->warmup_steps)
        return t->lr * (double)(step + 1) / (double)t->warmup_steps;
    if (t->steps <= t->warmup_steps)
        return t->min_lr;
    double r = (double)(step - t->warmup_steps) / (double)(t->steps - t->warmup_steps);
    if (r > 1)
        r = 1;
    double coeff = 0.5 * (1.0 + cos(3.141592653589793 * r));
    return t->min_lr + coeff * (t->lr - t->min_lr);
}

int exec_optim_init(exec_optim *o, exec_model *x, st_err *err)
{
    memset(o, 0, sizeof *o);
    o->x = x;
    size_t bytes = (size_t)x->held_numel * x->dev->state_bytes;
    o->bytes = bytes;
    if (!(o->m = exec_dev_alloc(x->dev, bytes, EXEC_MEM_OPTIMIZER, err)) ||
        !(o->v = exec_dev_alloc(x->dev, bytes, EXEC_MEM_OPTIMIZER, err)))
        return ST_ENOMEM;
    if (!x->dev->ops->has_master)
        return ST_OK;
    if (!x->dev->ops->widen)
        return ST_RAISE(err, ST_EINTERNAL, "device %s keeps master weights but cannot make them",
                        x->dev->ops->name);
    if (!(o->master = exec_dev_alloc(x->dev, bytes, EXEC_MEM_OPTIMIZER, err)))
        return ST_ENOMEM;
    exec_optim_sync_master(o);
    return x->dev->ops->sync(x->dev, err);
}

static void widen_range(exec_optim *o, const exec_bucket *b, const exec_tensor *t, int64_t lo,
                        int64_t hi, void *ctx)
{
    const exec_model *x = o->x;
    int64_t s = exec_held_state(b, lo);
    x->dev->ops->widen(x->dev, (char *)o->master + (size_t)s * x->dev->state_bytes,
                       exec_held_param(x, b, lo), hi - lo);
}

static void each_held(exec_optim *o, range_fn f, void *ctx);

void exec_optim_sync_master(exec_optim *o)
{
    if (o->master)
        each_held(o, widen_range, NULL);
}

void exec_optim_fini(exec_optim *o)
{
    if (!o->x)
        return;
    exec_dev_free(o->x->dev, o->m, o->bytes, EXEC_MEM_OPTIMIZER);
    exec_dev_free(o->x->dev, o->v, o->bytes, EXEC_MEM_OPTIMIZER);
    exec_dev_free(o->x->dev, o->master, o->bytes, EXEC_MEM_OPTIMIZER);
    o->m = o->v = o->master = NULL;
    free(o->ranges);
    o->ranges = NULL;
    o->nranges = o->cap_ranges = 0;
}


/* each_held's hop through exec_each_held */
typedef struct held_hop {
    exec_optim *o;
    range_fn f;
    void *ctx;
} held_hop;

static void hop(const exec_bucket *b, int r, const exec_tensor *t, int64_t lo, int64_t hi,
                void *ctx)
{
    (void)r;
    held_hop *h = ctx;
    h->f(h->o, b, t, lo, hi, h->ctx);
}

static void each_held(exec_optim *o, range_fn f, void *ctx)
{
    held_hop h = {o, f, ctx};
    exec_each_held(o->x, hop, &h);
}

static void sumsq_range(exec_optim *o, const exec_bucket *b, const exec_tensor *t, int64_t lo,
                        int64_t hi, void *ctx)
{
    const exec_model *x = o->x;
    if ((t->flags & EXEC_T_TP_REPL) && x->tp_rank != 0)
        return;
    if (t->flags & EXEC_T_TIED_COPY)
        return;
    if (x->l->sharding == PLAN_SHARD_NONE && x->dp_rank != 0)
        return;
    x->dev->ops->acc_add(x->dev, EXEC_ACC_SUMSQ, exec_held_grad(x, b, lo), hi - lo, 1.0);
}

double exec_optim_local_sumsq(exec_optim *o)
{
    each_held(o, sumsq_range, NULL);
    return o->x->dev->ops->acc_take(o->x->dev, EXEC_ACC_SUMSQ);
}

typedef struct adam_ctx {
    exec_adamw a;
    double wd;
} adam_ctx;

/* The operands of AdamW on one held range. */
static exec_adamw_range range_of(exec_optim *o, const exec_bucket *b, const exec_tensor *t,
                                 int64_t lo, int64_t hi, double wd)
{
    const exec_model *x = o->x;
    int64_t s = exec_held_state(b, lo);
    size_t sb = x->dev->state_bytes;
    exec_adamw_range r = {exec_held_param(x, b, lo),
                          o->master ? (char *)o->master + (size_t)s * sb : NULL,
                          (char *)o->m + (size_t)s * sb,
                          (char *)o->v + (size_t)s * sb,
                          exec_held_grad(x, b, lo),
                          hi - lo,
                          (t->flags & EXEC_T_DECAY) ? wd : 0.0};
    return r;
}

static void adam_range(exec_optim *o, const exec_bucket *b, const exec_tensor *t, int64_t lo,
                       int64_t hi, void *ctx)
{
    adam_ctx *c = ctx;
    exec_adamw_range r = range_of(o, b, t, lo, hi, c->wd);
    exec_adamw a = c->a;
    a.weight_decay = r.weight_decay;
    o->x->dev->ops->adamw(o->x->dev, r.param, r.master, r.grad, r.m, r.v, r.n, &a);
}

/* adamw_multi's list: every held range once, in the order each_held walks
 * them, made again at every step (host work over a few hundred ranges); a
 * failed allocation leaves the range-by-range path. */
static void list_range(exec_optim *o, const exec_bucket *b, const exec_tensor *t, int64_t lo,
                       int64_t hi, void *ctx)
{
    if (o->nranges < 0)
        return;
    if (o->nranges == o->cap_ranges) {
        int cap = o->cap_ranges ? 2 * o->cap_ranges : 64;
        exec_adamw_range *p = realloc(o->ranges, (size_t)cap * sizeof *p);
        if (!p) {
            o->nranges = -1;
            return;
        }
        o->ranges = p;
        o->cap_ranges = cap;
    }
    o->ranges[o->nranges++] = range_of(o, b, t, lo, hi, *(const double *)ctx);
}

void exec_optim_apply(exec_optim *o, const exec_train *t, int64_t step, double lr,
                      double grad_scale)
{
    adam_ctx c = {{.lr = lr, .beta1 = t->beta1, .beta2 = t->beta2, .eps = t->eps,
                   .grad_scale = grad_scale, .step = step + 1},
                  t->weight_decay};
    exec_dev *d = o->x->dev;
    o->nranges = 0;
    if (d->ops->adamw_multi)
        each_held(o, list_range, &c.wd);
    if (d->ops->adamw_multi && o->nranges > 0)
        d->ops->adamw_multi(d, o->ranges, o->nranges, &c.a);
    else
        each_held(o, adam_range, &c);
}

double exec_clip_scale(double norm, double clip)
{
    if (!(clip > 0) || !(norm > clip))
        return 1.0;
    return clip / (norm + EXEC_CLIP_EPS);
}
