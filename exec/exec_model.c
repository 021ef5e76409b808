/*
 * exec_model.c: the transformer's forward and backward on one rank, over
 * the device table (exec_dev.h) and the TP group. GPT (LayerNorm, biases,
 * learned positions, GELU) and Llama (RMSNorm, RoPE, SwiGLU, grouped-query
 * attention, no biases) share one layer; the model's flags pick the ops.
 *
 * Tensor parallelism is Megatron's (Shoeybi et al. 2019, Fig. 3;
 * megatron/core/tensor_parallel/mappings.py): a column-parallel layer's
 * input is copied to every TP rank and its input gradient all-reduced; a
 * row-parallel layer's output is all-reduced. With sequence parallelism
 * (Korthikanti et al. 2022, Sec. 4.2.2) the copy becomes an all-gather along
 * the sequence and the all-reduces reduce-scatters, so norms, residual adds
 * and positions run on T / tp positions. A row-parallel bias is added once,
 * by TP rank 0 before the reduction; its gradient is the column sum of the
 * (gathered) output gradient, the same on every TP rank. The vocab-parallel
 * embedding and cross-entropy follow Megatron's VocabParallelEmbedding and
 * cross_entropy.py.
 *
 * Backward is split in two passes per layer: the input-gradient pass
 * (layer_bwd) writes the output gradients each weight needs into an
 * exec_douts, and the weight-gradient pass (layer_wgrad) turns those and the
 * stored activations into weight gradients: at once for a full backward, or
 * later from a kept store for zero bubble's W (Qi et al. 2023).
 *
 * Recomputation (Korthikanti et al. 2022, Sec. 5): "selective" keeps no
 * attention probabilities and recomputes them in the backward; "full"
 * keeps only the input of every group of recompute_group layers and runs
 * the group's forward again before its backward. With the fused attention
 * (layout.flash_attention, a device with flash_fwd) no probabilities are
 * ever kept: each row's log-sum-exp is, and the fused backward recomputes
 * the rest (Dao et al. 2022), so "selective" changes nothing there.
 */
#include <string.h>

#include "exec/exec_dev_int.h"
#include "exec/exec_model.h"

#define ALIGN_BYTES 64

/* Carve a block into buffers; with base NULL only the size is counted. */
typedef struct carve {
    char *base;
    size_t off;
} carve;

static void *take(carve *c, size_t bytes)
{
    void *p = c->base ? c->base + c->off : NULL;
    c->off += (bytes + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES;
    return p;
}

static void *take_el(carve *c, const exec_model *x, int64_t n)
{
    return take(c, (size_t)n * x->dev->elem_bytes);
}

/* n per-row statistics (the device's stat_dtype) */
static void *take_st(carve *c, const exec_model *x, int64_t n)
{
    return take(c, (size_t)n * x->dev->stat_bytes);
}

static int full_recompute(const exec_model *x)
{
    return x->l->recompute == PLAN_RECOMP_FULL;
}

/* One layer's activations carved from c; probs only when stored (never with
 * the fused attention, which keeps its rows' log-sum-exp instead: the s x s
 * term the planner leaves out with flash attention). */
static void carve_acts(carve *c, const exec_model *x, exec_acts *a, int with_probs)
{
    const exec_dims *d = &x->d;
    a->x_in = take_el(c, x, d->Nr * d->C);
    a->ln1 = take_el(c, x, d->N * d->C);
    a->ln1_mean = take_st(c, x, d->Nr);
    a->ln1_rstd = take_st(c, x, d->Nr);
    a->qkv = take_el(c, x, d->N * d->Wqkv);
    a->probs = with_probs && !x->flash ? take_el(c, x, d->B * d->Hl * d->T * d->T) : NULL;
    a->lse = x->flash ? take_st(c, x, d->B * d->Hl * d->T) : NULL;
    a->atty = take_el(c, x, d->N * d->Hl * d->hd);
    a->x_mid = take_el(c, x, d->Nr * d->C);
    a->ln2 = take_el(c, x, d->N * d->C);
    a->ln2_mean = take_st(c, x, d->Nr);
    a->ln2_rstd = take_st(c, x, d->Nr);
    a->fc = take_el(c, x, d->N * d->Ffc);
    a->act = take_el(c, x, d->N * d->Fl);
}

static void carve_douts(carve *c, const exec_model *x, exec_douts *g)
{
    const exec_dims *d = &x->d;
    g->dln1 = take_el(c, x, d->Nr * d->C);
    g->dln2 = take_el(c, x, d->Nr * d->C);
    g->dqkv = take_el(c, x, d->N * d->Wqkv);
    g->dproj = take_el(c, x, d->N * d->C);
    g->dfc = take_el(c, x, d->N * d->Ffc);
    g->dmlp = take_el(c, x, d->N * d->C);
}

/* The stored activations of a (microbatch, chunk). */
typedef struct slot_view {
    exec_acts *acts;             /* per layer (not with full recompute) */
    void **ckpt;                 /* per group (full recompute) */
    exec_head_acts head;
} slot_view;

static void carve_slot(carve *c, const exec_model *x, const exec_chunk *ch, exec_acts *acts,
                       void **ckpt, void **in0)
{
    const exec_dims *d = &x->d;
    if (ch->nlayers == 0) {
        /* a chunk without layers (the planner's split can leave a rank fewer
         * layers than chunks): it passes its input on, or to the head */
        void *p = take_el(c, x, d->Nr * d->C);
        if (in0)
            *in0 = p;
        return;
    }
    if (full_recompute(x)) {
        int k = x->l->recompute_group, groups = (ch->nlayers + k - 1) / k;
        for (int i = 0; i < groups; i++) {
            void *p = take_el(c, x, d->Nr * d->C);
            if (ckpt)
                ckpt[i] = p;
            if (in0 && i == 0)
                *in0 = p;
        }
    } else {
        exec_acts dummy;
        int probs = x->l->recompute == PLAN_RECOMP_NONE;
        for (int i = 0; i < ch->nlayers; i++)
            carve_acts(c, x, acts ? &acts[i] : &dummy, probs);
        if (in0)
            *in0 = acts ? acts[0].x_in : NULL;
    }
}

static void carve_head(carve *c, const exec_model *x, exec_head_acts *h)
{
    const exec_dims *d = &x->d;
    h->x = take_el(c, x, d->Nr * d->C);
    h->lnf = take_el(c, x, d->N * d->C);
    h->lnf_mean = take_st(c, x, d->Nr);
    h->lnf_rstd = take_st(c, x, d->Nr);
    h->dlogits = take_el(c, x, d->N * d->Vl);
}

size_t exec_slot_bytes(const exec_model *x, const exec_chunk *ch)
{
    carve c = {NULL, 0};
    carve_slot(&c, x, ch, NULL, NULL, NULL);
    if (ch->last) {
        exec_head_acts h;
        carve_head(&c, x, &h);
    }
    return c.off;
}

/* What zero bubble's W needs after a chunk's input-gradient pass. */
typedef struct wstore_view {
    exec_douts *g;               /* per layer */
    exec_acts *acts;             /* per layer, full recompute only (recomputed at Bi) */
    void *dlnf;                  /* [Nr, C] head */
    void *demb_local;            /* [Nr, C] embedding output gradient, local rows */
    void *demb_full;             /* [N, C] gathered */
} wstore_view;

static void carve_wstore(carve *c, const exec_model *x, const exec_chunk *ch, wstore_view *w)
{
    const exec_dims *d = &x->d;
    exec_douts gd;
    exec_acts ad;
    for (int i = 0; i < ch->nlayers; i++)
        carve_douts(c, x, w ? &w->g[i] : &gd);
    if (full_recompute(x))
        for (int i = 0; i < ch->nlayers; i++)
            carve_acts(c, x, w ? &w->acts[i] : &ad, 1);
    void *p = ch->last ? take_el(c, x, d->Nr * d->C) : NULL;
    if (w)
        w->dlnf = p;
    p = ch->first ? take_el(c, x, d->Nr * d->C) : NULL;
    if (w)
        w->demb_local = p;
    p = ch->first ? take_el(c, x, d->N * d->C) : NULL;
    if (w)
        w->demb_full = p;
}

size_t exec_wstore_bytes(const exec_model *x, const exec_chunk *ch)
{
    carve c = {NULL, 0};
    carve_wstore(&c, x, ch, NULL);
    return c.off;
}

/* ---- TP reductions of a row-parallel output, and the input copy ---- */

/* A row-parallel layer's partial output part [N, C] summed over TP into
 * out [Nr, C] = base + sum (all-reduce, or reduce-scatter with SP). */
static int reduce_residual(exec_model *x, void *out, const void *base, void *part, st_err *err)
{
    const exec_dims *d = &x->d;
    const exec_dev_ops *o = x->dev->ops;
    int rc;
    if (x->sp) {
        if (!base)
            return exec_tp_reduce_scatter(x, part, out, d->Nr * d->C, err);
        if ((rc = exec_tp_reduce_scatter(x, part, x->ws.lnl, d->Nr * d->C, err)))
            return rc;
        o->add3(x->dev, out, base, x->ws.lnl, d->Nr * d->C);
    } else {
        if ((rc = exec_tp_allreduce(x, part, d->N * d->C, x->dev->ops->dtype, EXEC_RED_SUM,
                                    err)))
            return rc;
        if (base)
            o->add3(x->dev, out, base, part, d->N * d->C);
        else
            o->copy(x->dev, out, part, (size_t)(d->N * d->C) * x->dev->elem_bytes);
    }
    return ST_OK;
}

/* The gradient at a column-parallel layer's input, part [N, C] from this
 * rank's columns, summed over TP into out [Nr, C] (nothing to do when part
 * is out: input_grad_dst). */
static int reduce_input_grad(exec_model *x, void *out, void *part, st_err *err)
{
    const exec_dims *d = &x->d;
    if (x->sp)
        return exec_tp_reduce_scatter(x, part, out, d->Nr * d->C, err);
    int rc = exec_tp_allreduce(x, part, d->N * d->C, x->dev->ops->dtype, EXEC_RED_SUM, err);
    if (rc == ST_OK && part != out)
        x->dev->ops->copy(x->dev, out, part, (size_t)(d->N * d->C) * x->dev->elem_bytes);
    return rc;
}

/* One rank holds the whole layer (TP 1, so no SP): nothing is summed or
 * scattered over a TP group. */
static int whole_layer(const exec_model *x)
{
    return !x->sp && x->tp->size == 1;
}

/* Where a column-parallel layer's input gradient is made: straight into
 * out when no TP group sums it (the sum is the part, and a copy of [N, C]
 * per norm would be all reduce_input_grad did), else a workspace the
 * reduction reads. */
static void *input_grad_dst(exec_model *x, void *out)
{
    return whole_layer(x) ? out : x->ws.big;
}

/* Local rows [Nr, C] to every position [N, C] (the input of a column-
 * parallel layer, or the gradient of a row-parallel layer's output). */
static int gather_rows(exec_model *x, void *full, const void *local, st_err *err)
{
    const exec_dims *d = &x->d;
    if (x->sp)
        return exec_tp_allgather(x, local, full, d->Nr * d->C, err);
    if (full != local)
        x->dev->ops->copy(x->dev, full, local, (size_t)(d->N * d->C) * x->dev->elem_bytes);
    return ST_OK;
}

/* A norm of local rows, its output on every position. */
static int norm_gathered(exec_model *x, void *out_full, void *mean, void *rstd, const void *inp,
                         const void *w, const void *b, st_err *err)
{
    const exec_dims *d = &x->d;
    void *o = x->sp ? x->ws.lnl : out_full;
    x->dev->ops->norm_fwd(x->dev, o, d->gpt ? mean : NULL, rstd, inp, w, d->gpt ? b : NULL, d->Nr,
                          d->C, !d->gpt);
    return x->sp ? gather_rows(x, out_full, o, err) : ST_OK;
}

/* ---- one transformer layer ---- */

static int layer_fwd(exec_model *x, int u, exec_acts *a, void *x_out, st_err *err)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    const exec_dev_ops *o = dev->ops;
    int tp0 = x->tp_rank == 0, rc;
    if ((rc = norm_gathered(x, a->ln1, a->ln1_mean, a->ln1_rstd, a->x_in, exec_param(x, u, R_LN1W),
                            exec_param(x, u, R_LN1B), err)))
        return rc;
    o->matmul_fwd(dev, a->qkv, a->ln1, exec_param(x, u, R_QKVW), exec_param(x, u, R_QKVB), NULL,
                  d->N, d->C, d->Wqkv);
    if (!d->gpt) /* rotary positions on the queries and keys */
        o->rope_fwd(dev, a->qkv, d->T, d->B, d->Hl + d->Hkvl, d->hd, d->Wqkv, EXEC_ROPE_THETA);
    if (x->flash) {
        o->flash_fwd(dev, a->atty, a->lse, a->qkv, d->T, d->B, d->Hl, d->Hkvl, d->hd);
    } else {
        void *probs = a->probs ? a->probs : x->ws.probs;
        o->attention_fwd(dev, a->atty, probs, a->qkv, d->T, d->B, d->Hl, d->Hkvl, d->hd);
    }
    /* one rank holding the layer: the residual in the product's epilogue */
    int whole = whole_layer(x);
    o->matmul_fwd(dev, whole ? a->x_mid : x->ws.big, a->atty, exec_param(x, u, R_OW),
                  tp0 ? exec_param(x, u, R_OB) : NULL, whole ? a->x_in : NULL, d->N,
                  d->Hl * d->hd, d->C);
    if (!whole && (rc = reduce_residual(x, a->x_mid, a->x_in, x->ws.big, err)))
        return rc;
    if ((rc = norm_gathered(x, a->ln2, a->ln2_mean, a->ln2_rstd, a->x_mid, exec_param(x, u, R_LN2W),
                            exec_param(x, u, R_LN2B), err)))
        return rc;
    if (d->gated) {
        o->matmul_fwd(dev, a->fc, a->ln2, exec_param(x, u, R_FCW), exec_param(x, u, R_FCB), NULL,
                      d->N, d->C, d->Ffc);
        o->swiglu_fwd(dev, a->act, a->fc, d->N, d->Fl);
    } else { /* the GELU with the product (a GPU's epilogue) */
        o->matmul_gelu_fwd(dev, a->act, a->fc, a->ln2, exec_param(x, u, R_FCW),
                           exec_param(x, u, R_FCB), d->N, d->C, d->Ffc);
    }
    o->matmul_fwd(dev, whole ? x_out : x->ws.big, a->act, exec_param(x, u, R_PROJW),
                  tp0 ? exec_param(x, u, R_PROJB) : NULL, whole ? a->x_mid : NULL, d->N, d->Fl,
                  d->C);
    return whole ? ST_OK : reduce_residual(x, x_out, a->x_mid, x->ws.big, err);
}

/* The gradient at a row-parallel product's output on every position: dres
 * itself without SP when its weight gradient is taken before dres changes
 * (wnow), else gathered (or copied) into keep, which outlives dres. */
static int output_grad(exec_model *x, void *keep, void *dres, int wnow, void **at, st_err *err)
{
    *at = !x->sp && wnow ? dres : keep;
    return *at == dres ? ST_OK : gather_rows(x, keep, dres, err);
}

/* Input-gradient pass: dres holds the gradient of the layer's output on
 * entry and of its input on return; g receives what layer_wgrad needs.
 * wnow: layer_wgrad follows at once (no deferred weight pass), so the two
 * row-parallel products' weight gradients are taken here while dres is
 * still their output's gradient, and neither is copied aside (layer_wgrad
 * with wnow skips them: the same products, the same sums). */
static int layer_bwd(exec_model *x, int u, const exec_acts *a, void *dres, exec_douts *g,
                     int wnow, st_err *err)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    const exec_dev_ops *o = dev->ops;
    void *dy;
    int rc;
    /* MLP: out = x_mid + proj(act(fc(norm2(x_mid)))) */
    if ((rc = output_grad(x, g->dmlp, dres, wnow, &dy, err)))
        return rc;
    if (d->gated) {
        o->matmul_bwd_input(dev, x->ws.dx, dy, exec_param(x, u, R_PROJW), d->N, d->Fl, d->C, 0);
        o->swiglu_bwd(dev, g->dfc, a->fc, x->ws.dx, d->N, d->Fl);
    } else { /* the GELU's gradient with the product (a GPU's epilogue) */
        o->matmul_bwd_input_gelu(dev, g->dfc, dy, exec_param(x, u, R_PROJW), a->fc, d->N, d->Fl,
                                 d->C);
    }
    if (wnow)
        o->matmul_bwd_weight(dev, exec_grad(x, u, R_PROJW), exec_grad(x, u, R_PROJB), dy, a->act,
                             d->N, d->Fl, d->C);
    void *part = input_grad_dst(x, g->dln2);
    o->matmul_bwd_input(dev, part, g->dfc, exec_param(x, u, R_FCW), d->N, d->C, d->Ffc, 0);
    if ((rc = reduce_input_grad(x, g->dln2, part, err)))
        return rc;
    o->norm_bwd_input(dev, dres, g->dln2, a->x_mid, exec_param(x, u, R_LN2W), a->ln2_mean,
                      a->ln2_rstd, d->Nr, d->C, !d->gpt, 1);
    /* attention: x_mid = x_in + o(attention(qkv(norm1(x_in)))) */
    if ((rc = output_grad(x, g->dproj, dres, wnow, &dy, err)))
        return rc;
    o->matmul_bwd_input(dev, x->ws.dx, dy, exec_param(x, u, R_OW), d->N, d->Hl * d->hd, d->C, 0);
    if (wnow)
        o->matmul_bwd_weight(dev, exec_grad(x, u, R_OW), exec_grad(x, u, R_OB), dy, a->atty, d->N,
                             d->Hl * d->hd, d->C);
    if (x->flash) { /* the fused backward recomputes the probabilities itself */
        o->flash_bwd(dev, g->dqkv, x->ws.dx, a->qkv, a->atty, a->lse, d->T, d->B, d->Hl, d->Hkvl,
                     d->hd);
    } else {
        const void *probs = a->probs;
        if (!probs) { /* selective recompute: the probabilities again */
            o->attention_fwd(dev, NULL, x->ws.probs, a->qkv, d->T, d->B, d->Hl, d->Hkvl, d->hd);
            probs = x->ws.probs;
        }
        o->attention_bwd(dev, g->dqkv, x->ws.dprobs, x->ws.dx, a->qkv, probs, d->T, d->B, d->Hl,
                         d->Hkvl, d->hd);
    }
    if (!d->gpt)
        o->rope_bwd(dev, g->dqkv, d->T, d->B, d->Hl + d->Hkvl, d->hd, d->Wqkv, EXEC_ROPE_THETA);
    part = input_grad_dst(x, g->dln1);
    o->matmul_bwd_input(dev, part, g->dqkv, exec_param(x, u, R_QKVW), d->N, d->C, d->Wqkv, 0);
    if ((rc = reduce_input_grad(x, g->dln1, part, err)))
        return rc;
    o->norm_bwd_input(dev, dres, g->dln1, a->x_in, exec_param(x, u, R_LN1W), a->ln1_mean,
                      a->ln1_rstd, d->Nr, d->C, !d->gpt, 1);
    return ST_OK;
}

/* Weight-gradient pass of a layer (accumulates); wnow: the row-parallel
 * products' were taken in layer_bwd. */
static void layer_wgrad(exec_model *x, int u, const exec_acts *a, const exec_douts *g, int wnow)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    const exec_dev_ops *o = dev->ops;
    if (!wnow)
        o->matmul_bwd_weight(dev, exec_grad(x, u, R_PROJW), exec_grad(x, u, R_PROJB), g->dmlp,
                             a->act, d->N, d->Fl, d->C);
    o->matmul_bwd_weight(dev, exec_grad(x, u, R_FCW), exec_grad(x, u, R_FCB), g->dfc, a->ln2, d->N,
                         d->C, d->Ffc);
    o->norm_bwd_weight(dev, exec_grad(x, u, R_LN2W), exec_grad(x, u, R_LN2B), g->dln2, a->x_mid,
                       a->ln2_mean, a->ln2_rstd, d->Nr, d->C, !d->gpt);
    if (!wnow)
        o->matmul_bwd_weight(dev, exec_grad(x, u, R_OW), exec_grad(x, u, R_OB), g->dproj,
                             a->atty, d->N, d->Hl * d->hd, d->C);
    o->matmul_bwd_weight(dev, exec_grad(x, u, R_QKVW), exec_grad(x, u, R_QKVB), g->dqkv, a->ln1,
                         d->N, d->C, d->Wqkv);
    o->norm_bwd_weight(dev, exec_grad(x, u, R_LN1W), exec_grad(x, u, R_LN1B), g->dln1, a->x_in,
                       a->ln1_mean, a->ln1_rstd, d->Nr, d->C, !d->gpt);
}

/* ---- embedding and head ---- */

/* The unit and role holding the LM head's weight. */
static void head_weight(const exec_model *x, const exec_chunk *ch, int *u, exec_role *r)
{
    if (ch->unit_head >= 0) {
        *u = ch->unit_head;
        *r = x->m->tied_embedding ? R_WTE : R_HEAD;
    } else { /* tied, embedding on this very chunk list: the same tensor */
        *u = x->chunk[0].unit_embed;
        *r = R_WTE;
    }
}

static int embed_fwd(exec_model *x, const exec_chunk *ch, const int32_t *tokens, void *out,
                     st_err *err)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    int rc;
    if ((rc = exec_z3_acquire(x, ch->unit_embed, err)))
        return rc;
    dev->ops->embed_fwd(dev, x->ws.big, tokens, exec_param(x, ch->unit_embed, R_WTE), d->N, d->C,
                        d->v0, d->Vl);
    exec_z3_release(x, ch->unit_embed);
    if ((rc = reduce_residual(x, out, NULL, x->ws.big, err)))
        return rc;
    if (ch->unit_pos >= 0) {
        if ((rc = exec_z3_acquire(x, ch->unit_pos, err)))
            return rc;
        dev->ops->pos_fwd(dev, out, exec_param(x, ch->unit_pos, R_WPE), d->Tl, d->B, d->C, d->t0);
        exec_z3_release(x, ch->unit_pos);
    }
    return ST_OK;
}

/* The embedding's weight gradients from its output gradient: local rows
 * (positions) and every position (the vocab-parallel table). */
static int embed_wgrad(exec_model *x, const exec_chunk *ch, const int32_t *tokens,
                       const void *dlocal, const void *dfull, st_err *err)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    int rc;
    if (ch->unit_pos >= 0) {
        dev->ops->pos_bwd(dev, exec_grad(x, ch->unit_pos, R_WPE), dlocal, d->Tl, d->B, d->C, d->t0);
        if ((rc = exec_unit_wgrad_done(x, ch->unit_pos, err)))
            return rc;
    }
    dev->ops->embed_bwd(dev, exec_grad(x, ch->unit_embed, R_WTE), dfull, tokens, d->N, d->C, d->v0,
                        d->Vl);
    return exec_unit_wgrad_done(x, ch->unit_embed, err);
}

static int head_fwd(exec_model *x, const exec_chunk *ch, exec_head_acts *h,
                    const int32_t *targets, double scale, st_err *err)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    const exec_dev_ops *o = dev->ops;
    int rc, hu;
    exec_role hr;
    head_weight(x, ch, &hu, &hr);
    if ((rc = exec_z3_acquire(x, ch->unit_final, err)))
        return rc;
    rc = norm_gathered(x, h->lnf, h->lnf_mean, h->lnf_rstd, h->x, exec_param(x, ch->unit_final, R_LNFW),
                       exec_param(x, ch->unit_final, R_LNFB), err);
    exec_z3_release(x, ch->unit_final);
    if (rc || (rc = exec_z3_acquire(x, hu, err)))
        return rc;
    o->matmul_fwd(dev, h->dlogits, h->lnf, exec_param(x, hu, hr), NULL, NULL, d->N, d->C, d->Vl);
    exec_z3_release(x, hu);
    /* vocab-parallel cross-entropy: global max, then global sum of exp and
     * the target's logit, then the loss and the logits' gradient */
    o->ce_rowmax(dev, x->ws.rowmax, h->dlogits, d->N, d->Vl);
    if ((rc = exec_tp_allreduce(x, x->ws.rowmax, d->N, o->stat_dtype, EXEC_RED_MAX, err)))
        return rc;
    o->ce_stats(dev, x->ws.stats, h->dlogits, x->ws.rowmax, targets, d->N, d->Vl, d->v0);
    if ((rc = exec_tp_allreduce(x, x->ws.stats, 2 * d->N, o->stat_dtype, EXEC_RED_SUM, err)))
        return rc;
    o->ce_loss_bwd(dev, x->ws.losses, h->dlogits, x->ws.rowmax, x->ws.stats, targets, d->N, d->Vl,
                   d->v0, scale);
    o->acc_add(dev, EXEC_ACC_LOSS, x->ws.losses, d->N, scale);
    return ST_OK;
}

/* Head input-gradient pass: dres = gradient at the last layer's output;
 * dlnf keeps the final norm's output gradient for head_wgrad. */
static int head_bwd(exec_model *x, const exec_chunk *ch, const exec_head_acts *h, void *dlnf,
                    void *dres, st_err *err)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    int rc, hu;
    exec_role hr;
    head_weight(x, ch, &hu, &hr);
    if ((rc = exec_z3_acquire(x, hu, err)))
        return rc;
    dev->ops->matmul_bwd_input(dev, x->ws.big, h->dlogits, exec_param(x, hu, hr), d->N, d->C,
                               d->Vl, 0);
    exec_z3_release(x, hu);
    if ((rc = reduce_input_grad(x, dlnf, x->ws.big, err)) ||
        (rc = exec_z3_acquire(x, ch->unit_final, err)))
        return rc;
    dev->ops->norm_bwd_input(dev, dres, dlnf, h->x, exec_param(x, ch->unit_final, R_LNFW),
                             h->lnf_mean, h->lnf_rstd, d->Nr, d->C, !d->gpt, 0);
    exec_z3_release(x, ch->unit_final);
    return ST_OK;
}

static int head_wgrad(exec_model *x, const exec_chunk *ch, const exec_head_acts *h,
                      const void *dlnf, st_err *err)
{
    const exec_dims *d = &x->d;
    exec_dev *dev = x->dev;
    int hu, rc;
    exec_role hr;
    head_weight(x, ch, &hu, &hr);
    dev->ops->matmul_bwd_weight(dev, exec_grad(x, hu, hr), NULL, h->dlogits, h->lnf, d->N, d->C,
                                d->Vl);
    dev->ops->norm_bwd_weight(dev, exec_grad(x, ch->unit_final, R_LNFW),
                              exec_grad(x, ch->unit_final, R_LNFB), dlnf, h->x, h->lnf_mean,
                              h->lnf_rstd, d->Nr, d->C, !d->gpt);
    if ((rc = exec_unit_wgrad_done(x, hu, err)))
        return rc;
    return exec_unit_wgrad_done(x, ch->unit_final, err);
}

/* ---- chunks ---- */

static void view_slot(const exec_model *x, const exec_chunk *ch, void *slot, exec_acts *acts,
                      void **ckpt, void **in0, exec_head_acts *h)
{
    carve c = {slot, 0};
    carve_slot(&c, x, ch, acts, ckpt, in0);
    if (ch->last)
        carve_head(&c, x, h);
}

void *exec_slot_input(const exec_model *x, int chunk, void *slot)
{
    /* the first buffer carved from a slot is layer 0's input (or the first
     * group's checkpoint): the received activation goes straight there */
    (void)x;
    (void)chunk;
    return slot;
}

/* The forward of layers [i0, i1) of a chunk from the input in: with acts,
 * every layer's activations are kept there (acts[0] is layer i0);
 * without, they go through the workspace. The output of layer i1 - 1 goes
 * to out. */
static int group_fwd(exec_model *x, const exec_chunk *ch, int i0, int i1, const void *in,
                     exec_acts *acts, void *out, st_err *err)
{
    const void *cur = in;
    int flip = 0, rc;
    for (int i = i0; i < i1; i++) {
        exec_acts *a = acts ? &acts[i - i0] : &x->ws.a;
        if (acts && i == i0) /* kept activations hold their own input (W reads it later) */
            x->dev->ops->copy(x->dev, a->x_in, in,
                              (size_t)(x->d.Nr * x->d.C) * x->dev->elem_bytes);
        else
            a->x_in = (void *)cur;
        void *o;
        if (i + 1 == i1)
            o = out;
        else if (acts)
            o = acts[i + 1 - i0].x_in;
        else
            o = x->ws.res[flip ^= 1];
        int u = ch->unit_layer0 + i;
        if ((rc = exec_z3_acquire(x, u, err)))
            return rc;
        rc = layer_fwd(x, u, a, o, err);
        exec_z3_release(x, u);
        if (rc)
            return rc;
        cur = o;
    }
    return ST_OK;
}

int exec_chunk_fwd(exec_model *x, int ci, void *slot, const int32_t *tokens,
                   const int32_t *targets, const void *input, void *output, double loss_scale,
                   st_err *err)
{
    const exec_chunk *ch = &x->chunk[ci];
    const exec_dims *d = &x->d;
    size_t rbytes = (size_t)(d->Nr * d->C) * x->dev->elem_bytes;
    exec_acts *acts = x->view.acts;
    void **ckpt = x->view.ckpt;
    exec_head_acts h = {0};
    void *x0 = NULL;
    view_slot(x, ch, slot, acts, ckpt, &x0, &h);
    int full = full_recompute(x), rc;
    if (ch->first) {
        if ((rc = embed_fwd(x, ch, tokens, x0, err)))
            return rc;
    } else if (input != x0) {
        x->dev->ops->copy(x->dev, x0, input, rbytes);
    }
    void *final = ch->last ? h.x : output;
    if (ch->nlayers == 0) {
        if (final != x0)
            x->dev->ops->copy(x->dev, final, x0, rbytes);
    } else if (full) {
        /* keep each group's input; the rest goes through the workspace */
        int k = x->l->recompute_group;
        for (int i0 = 0; i0 < ch->nlayers; i0 += k) {
            int i1 = i0 + k < ch->nlayers ? i0 + k : ch->nlayers;
            void *o = i1 == ch->nlayers ? final : ckpt[i1 / k];
            if ((rc = group_fwd(x, ch, i0, i1, ckpt[i0 / k], NULL, o, err)))
                return rc;
        }
    } else {
        for (int i = 0; i < ch->nlayers; i++) {
            void *o = i + 1 < ch->nlayers ? acts[i + 1].x_in : final;
            int u = ch->unit_layer0 + i;
            if ((rc = exec_z3_acquire(x, u, err)))
                return rc;
            rc = layer_fwd(x, u, &acts[i], o, err);
            exec_z3_release(x, u);
            if (rc)
                return rc;
        }
    }
    if (ch->last)
        return head_fwd(x, ch, &h, targets, loss_scale, err);
    return ST_OK;
}

int exec_chunk_bwd(exec_model *x, int ci, void *slot, const int32_t *tokens, const void *dout,
                   void *dinput, int split, void *wstore, st_err *err)
{
    const exec_chunk *ch = &x->chunk[ci];
    const exec_dims *d = &x->d;
    size_t rbytes = (size_t)(d->Nr * d->C) * x->dev->elem_bytes;
    exec_acts *acts = x->view.acts, *wacts = x->view.wacts;
    exec_douts *wg = x->view.douts;
    void **ckpt = x->view.ckpt;
    exec_head_acts h = {0};
    view_slot(x, ch, slot, acts, ckpt, NULL, &h);
    wstore_view w = {wg, wacts, NULL, NULL, NULL};
    if (split) {
        carve c = {wstore, 0};
        carve_wstore(&c, x, ch, &w);
    }
    void *dres = x->ws.dres;
    int full = full_recompute(x), k = x->l->recompute_group, rc;
    if (ch->last) {
        void *dlnf = split ? w.dlnf : x->ws.lnl;
        if ((rc = head_bwd(x, ch, &h, dlnf, dres, err)))
            return rc;
        if (!split && (rc = head_wgrad(x, ch, &h, dlnf, err)))
            return rc;
    } else if (dout != dres) {
        x->dev->ops->copy(x->dev, dres, dout, rbytes);
    }
    exec_acts *rec = NULL; /* recomputed group (full recompute) */
    int rec0 = -1;
    for (int i = ch->nlayers - 1; i >= 0; i--) {
        const exec_acts *a = &acts[i];
        if (full) {
            int g0 = i / k * k;
            if (rec0 != g0) { /* run the group's forward again from its input */
                int g1 = g0 + k < ch->nlayers ? g0 + k : ch->nlayers;
                rec = split ? &wacts[g0] : x->ws_rec;
                rc = group_fwd(x, ch, g0, g1, ckpt[g0 / k], rec, x->ws.res[1], err);
                if (rc)
                    return rc;
                rec0 = g0;
            }
            a = &rec[i - g0];
        }
        exec_douts *g = split ? &wg[i] : &x->ws.g;
        int u = ch->unit_layer0 + i;
        if ((rc = exec_z3_acquire(x, u, err)))
            return rc;
        rc = layer_bwd(x, u, a, dres, g, !split, err);
        exec_z3_release(x, u);
        if (rc)
            return rc;
        if (!split) {
            layer_wgrad(x, u, a, g, 1);
            if ((rc = exec_unit_wgrad_done(x, u, err)))
                return rc;
        }
    }
    if (ch->first) {
        void *dloc = split ? w.demb_local : dres, *dfull = split ? w.demb_full : x->ws.big;
        if (split)
            x->dev->ops->copy(x->dev, dloc, dres, rbytes);
        if ((rc = gather_rows(x, dfull, dloc, err)))
            return rc;
        if (!split)
            return embed_wgrad(x, ch, tokens, dloc, dfull, err);
    } else if (dinput != dres) {
        x->dev->ops->copy(x->dev, dinput, dres, rbytes);
    }
    return ST_OK;
}

int exec_chunk_wgrad(exec_model *x, int ci, void *slot, const int32_t *tokens, void *wstore,
                     st_err *err)
{
    const exec_chunk *ch = &x->chunk[ci];
    exec_acts *acts = x->view.acts, *wacts = x->view.wacts;
    exec_douts *wg = x->view.douts;
    void **ckpt = x->view.ckpt;
    exec_head_acts h = {0};
    view_slot(x, ch, slot, acts, ckpt, NULL, &h);
    wstore_view w = {wg, wacts, NULL, NULL, NULL};
    carve c = {wstore, 0};
    carve_wstore(&c, x, ch, &w);
    const exec_acts *a = full_recompute(x) ? wacts : acts;
    int rc;
    if (ch->last && (rc = head_wgrad(x, ch, &h, w.dlnf, err)))
        return rc;
    for (int i = ch->nlayers - 1; i >= 0; i--) {
        int u = ch->unit_layer0 + i;
        layer_wgrad(x, u, &a[i], &wg[i], 0);
        if ((rc = exec_unit_wgrad_done(x, u, err)))
            return rc;
    }
    if (ch->first)
        return embed_wgrad(x, ch, tokens, w.demb_local, w.demb_full, err);
    return ST_OK;
}

void exec_ws_layout(exec_model *x, void *ws_block, void *rec_block)
{
    const exec_dims *d = &x->d;
    int64_t wide = d->C;
    if (d->Ffc > wide)
        wide = d->Ffc;
    if (d->Wqkv > wide)
        wide = d->Wqkv;
    carve c = {ws_block, 0};
    carve_acts(&c, x, &x->ws.a, 1);
    carve_douts(&c, x, &x->ws.g);
    x->ws.res[0] = take_el(&c, x, d->Nr * d->C);
    x->ws.res[1] = take_el(&c, x, d->Nr * d->C);
    x->ws.lnl = take_el(&c, x, d->Nr * d->C);
    x->ws.big = take_el(&c, x, d->N * wide);
    x->ws.probs = x->ws.a.probs; /* selective recompute's and the full one's never overlap */
    x->ws.dprobs = x->flash ? NULL : take_el(&c, x, d->B * d->Hl * d->T * d->T);
    x->ws.dres = take_el(&c, x, d->Nr * d->C);
    x->ws.dx = take_el(&c, x, d->N * wide);
    x->ws.rowmax = take_st(&c, x, d->N);
    x->ws.stats = take_st(&c, x, 2 * d->N);
    x->ws.losses = take_st(&c, x, d->N);
    x->ws_bytes = c.off;
    carve r = {rec_block, 0};
    int k = full_recompute(x) ? x->l->recompute_group : 0;
    for (int i = 0; i < k && x->ws_rec; i++)
        carve_acts(&r, x, &x->ws_rec[i], 1);
    if (!x->ws_rec) {
        exec_acts dummy;
        for (int i = 0; i < k; i++)
            carve_acts(&r, x, &dummy, 1);
    }
    x->rec_bytes = r.off;
}
