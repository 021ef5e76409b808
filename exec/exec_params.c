/*
 * exec_params.c: the model's parameters as one rank holds them: the global
 * tensor list, this rank's tensors (Megatron's column/row split of each),
 * units, chunks and gradient buckets, the flat buffers, the workspace, and
 * the initial values.
 *
 * Initial values are a pure function of (seed, global tensor, element), so a
 * model split any way starts from the same weights: GPT-2's scheme
 * (Radford et al. 2019, Sec. 2.3; llm.c's gpt2_build_from_random): weights
 * normal with std 0.02, the residual projections (attention output, MLP
 * projection) 0.02 / sqrt(2 L), biases zero, norm weights one. The normal
 * variates come from a counter-based generator (splitmix64 of the counter,
 * Box-Muller), no state to carry.
 *
 * Flat layout: the rank's units in forward order (chunk by chunk), each
 * unit's tensors contiguous; buckets are runs of whole units formed from the
 * end (the order in which the backward finishes them) up to dp_bucket_bytes,
 * each padded to a multiple of dp elements so it splits evenly into ZeRO
 * shards. With ZeRO-3 every unit is its own bucket (it is gathered alone);
 * a tied embedding and its copy on the last stage are buckets of their own
 * so their shards line up for the embedding group's sum.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_init.h"
#include "exec/exec_model.h"

/* GPT-2's initial standard deviation of every weight (Radford et al. 2019). */
#define EXEC_INIT_STD 0.02

double exec_init_value(const exec_gtensor *g, int gid, int64_t i, uint64_t seed)
{
    return exec_init_draw(g->init, g->std, gid, i, seed);
}

/* ---- global tensors ---- */

typedef struct gid_layer {
    int ln1w, ln1b, q, k, v, qb, kb, vb, o, ob, ln2w, ln2b, fc, up, fcb, upb, proj, projb;
} gid_layer;

static int add_gt(exec_model *x, const char *name, int64_t rows, int64_t cols, int init,
                  double std)
{
    exec_gtensor *g = &x->gt[x->ngt];
    snprintf(g->name, sizeof g->name, "%s", name);
    g->rows = rows;
    g->cols = cols;
    g->init = init;
    g->std = std;
    g->offset = x->ngt ? x->gt[x->ngt - 1].offset + x->gt[x->ngt - 1].rows * x->gt[x->ngt - 1].cols
                       : 0;
    return x->ngt++;
}

static int add_gt_layer(exec_model *x, int layer, const char *what, int64_t rows, int64_t cols,
                        int init, double std)
{
    char name[EXEC_TNAME_MAX];
    snprintf(name, sizeof name, "layers.%d.%s", layer, what);
    return add_gt(x, name, rows, cols, init, std);
}

/* The whole model in canonical order; gids of each layer's tensors into
 * gl[layer] (-1 where the architecture has none). */
static void build_global(exec_model *x, gid_layer *gl, int *g_wte, int *g_wpe, int *g_lnfw,
                         int *g_lnfb, int *g_head)
{
    const plan_model *m = x->m;
    int gpt = m->arch == PLAN_ARCH_GPT, gated = plan_model_gated(m);
    int64_t C = m->hidden, hd = plan_model_head_dim(m), Hq = m->heads, Hkv = m->kv_heads;
    int64_t F = m->ffn, L = m->layers;
    double sd = EXEC_INIT_STD, sd_res = EXEC_INIT_STD / sqrt(2.0 * (double)L);
    *g_wte = add_gt(x, "wte", m->vocab, C, EXEC_INIT_NORMAL, sd);
    *g_wpe = gpt ? add_gt(x, "wpe", m->seq, C, EXEC_INIT_NORMAL, sd) : -1;
    for (int l = 0; l < L; l++) {
        gid_layer *g = &gl[l];
        memset(g, -1, sizeof *g);
        g->ln1w = add_gt_layer(x, l, "ln1.weight", C, 1, EXEC_INIT_ONE, 0);
        if (gpt)
            g->ln1b = add_gt_layer(x, l, "ln1.bias", C, 1, EXEC_INIT_ZERO, 0);
        g->q = add_gt_layer(x, l, "attn.q.weight", Hq * hd, C, EXEC_INIT_NORMAL, sd);
        g->k = add_gt_layer(x, l, "attn.k.weight", Hkv * hd, C, EXEC_INIT_NORMAL, sd);
        g->v = add_gt_layer(x, l, "attn.v.weight", Hkv * hd, C, EXEC_INIT_NORMAL, sd);
        if (gpt) {
            g->qb = add_gt_layer(x, l, "attn.q.bias", Hq * hd, 1, EXEC_INIT_ZERO, 0);
            g->kb = add_gt_layer(x, l, "attn.k.bias", Hkv * hd, 1, EXEC_INIT_ZERO, 0);
            g->vb = add_gt_layer(x, l, "attn.v.bias", Hkv * hd, 1, EXEC_INIT_ZERO, 0);
        }
        g->o = add_gt_layer(x, l, "attn.o.weight", C, Hq * hd, EXEC_INIT_NORMAL, sd_res);
        if (gpt)
            g->ob = add_gt_layer(x, l, "attn.o.bias", C, 1, EXEC_INIT_ZERO, 0);
        g->ln2w = add_gt_layer(x, l, "ln2.weight", C, 1, EXEC_INIT_ONE, 0);
        if (gpt)
            g->ln2b = add_gt_layer(x, l, "ln2.bias", C, 1, EXEC_INIT_ZERO, 0);
        g->fc = add_gt_layer(x, l, gated ? "mlp.gate.weight" : "mlp.fc.weight", F, C,
                             EXEC_INIT_NORMAL, sd);
        if (gated)
            g->up = add_gt_layer(x, l, "mlp.up.weight", F, C, EXEC_INIT_NORMAL, sd);
        if (gpt) {
            g->fcb = add_gt_layer(x, l, gated ? "mlp.gate.bias" : "mlp.fc.bias", F, 1,
                                  EXEC_INIT_ZERO, 0);
            if (gated)
                g->upb = add_gt_layer(x, l, "mlp.up.bias", F, 1, EXEC_INIT_ZERO, 0);
        }
        g->proj = add_gt_layer(x, l, "mlp.proj.weight", C, F, EXEC_INIT_NORMAL, sd_res);
        if (gpt)
            g->projb = add_gt_layer(x, l, "mlp.proj.bias", C, 1, EXEC_INIT_ZERO, 0);
    }
    *g_lnfw = add_gt(x, "lnf.weight", C, 1, EXEC_INIT_ONE, 0);
    *g_lnfb = gpt ? add_gt(x, "lnf.bias", C, 1, EXEC_INIT_ZERO, 0) : -1;
    *g_head = m->tied_embedding ? -1 : add_gt(x, "head.weight", m->vocab, C, EXEC_INIT_NORMAL, sd);
}

/* ---- local tensors and units ---- */

/* A range of rows of global tensor gid: the r-th of tp equal parts. */
static exec_piece rows_of(const exec_model *x, int gid, int r, int tp)
{
    const exec_gtensor *g = &x->gt[gid];
    int64_t n = g->rows / tp;
    return (exec_piece){gid, r * n, n, 0, g->cols};
}

static exec_piece cols_of(const exec_model *x, int gid, int r, int tp)
{
    const exec_gtensor *g = &x->gt[gid];
    int64_t n = g->cols / tp;
    return (exec_piece){gid, 0, g->rows, r * n, n};
}

static exec_piece whole(const exec_model *x, int gid)
{
    return (exec_piece){gid, 0, x->gt[gid].rows, 0, x->gt[gid].cols};
}

static void add_tensor(exec_model *x, int u, exec_role role, unsigned flags, int np,
                       const exec_piece *p)
{
    exec_unit *un = &x->u[u];
    exec_tensor *t = &x->t[x->nt];
    memset(t, 0, sizeof *t);
    t->role = role;
    t->unit = u;
    t->flags = flags;
    t->npieces = np;
    for (int i = 0; i < np; i++) {
        t->piece[i] = p[i];
        t->numel += p[i].nrows * p[i].ncols;
    }
    t->off = un->numel;
    un->numel += t->numel;
    un->tensor[role] = x->nt++;
}

static int add_unit(exec_model *x, exec_unit_kind kind, int chunk, int layer)
{
    exec_unit *u = &x->u[x->nu];
    memset(u, 0, sizeof *u);
    u->kind = kind;
    u->chunk = chunk;
    u->layer = layer;
    for (int r = 0; r < R__COUNT; r++)
        u->tensor[r] = -1;
    u->contrib = 1;
    return x->nu++;
}

#define P1(a) 1, (exec_piece[]){a}
#define P2(a, b) 2, (exec_piece[]){a, b}
#define P3(a, b, c) 3, (exec_piece[]){a, b, c}

static void build_layer(exec_model *x, int u, const gid_layer *g)
{
    int r = x->tp_rank, tp = x->l->tp;
    unsigned norm = EXEC_T_TP_REPL | EXEC_T_SP_PARTIAL, repl = EXEC_T_TP_REPL;
    add_tensor(x, u, R_LN1W, norm, P1(whole(x, g->ln1w)));
    if (g->ln1b >= 0)
        add_tensor(x, u, R_LN1B, norm, P1(whole(x, g->ln1b)));
    add_tensor(x, u, R_QKVW, EXEC_T_DECAY,
               P3(rows_of(x, g->q, r, tp), rows_of(x, g->k, r, tp), rows_of(x, g->v, r, tp)));
    if (g->qb >= 0)
        add_tensor(x, u, R_QKVB, 0,
                   P3(rows_of(x, g->qb, r, tp), rows_of(x, g->kb, r, tp), rows_of(x, g->vb, r, tp)));
    add_tensor(x, u, R_OW, EXEC_T_DECAY, P1(cols_of(x, g->o, r, tp)));
    if (g->ob >= 0)
        add_tensor(x, u, R_OB, repl, P1(whole(x, g->ob)));
    add_tensor(x, u, R_LN2W, norm, P1(whole(x, g->ln2w)));
    if (g->ln2b >= 0)
        add_tensor(x, u, R_LN2B, norm, P1(whole(x, g->ln2b)));
    if (g->up >= 0)
        add_tensor(x, u, R_FCW, EXEC_T_DECAY, P2(rows_of(x, g->fc, r, tp), rows_of(x, g->up, r, tp)));
    else
        add_tensor(x, u, R_FCW, EXEC_T_DECAY, P1(rows_of(x, g->fc, r, tp)));
    if (g->fcb >= 0) {
        if (g->upb >= 0)
            add_tensor(x, u, R_FCB, 0, P2(rows_of(x, g->fcb, r, tp), rows_of(x, g->upb, r, tp)));
        else
            add_tensor(x, u, R_FCB, 0, P1(rows_of(x, g->fcb, r, tp)));
    }
    add_tensor(x, u, R_PROJW, EXEC_T_DECAY, P1(cols_of(x, g->proj, r, tp)));
    if (g->projb >= 0)
        add_tensor(x, u, R_PROJB, repl, P1(whole(x, g->projb)));
}

/* Layers of every global virtual stage: the planner's split per pipeline
 * rank (plan_stage_layers), each rank's share divided evenly over its v
 * chunks, the first chunks taking the remainder. */
static void chunk_layers(const plan_model *m, const plan_layout *l, int *count)
{
    int per_rank[PLAN_PP_MAX];
    plan_stage_layers(m, l, per_rank);
    int v = l->virtual_stages, pp = l->pp;
    for (int g = 0; g < pp * v; g++) {
        int s = g % pp, c = g / pp;
        count[g] = per_rank[s] / v + (c < per_rank[s] % v ? 1 : 0);
    }
}

/* ---- buckets and the flat layout ---- */

static void build_buckets(exec_model *x)
{
    const plan_layout *l = x->l;
    int dp = l->dp;
    double limit_bytes = l->dp_bucket_bytes > 0 ? l->dp_bucket_bytes : 1e300;
    /* from the last unit backward: close a bucket once it holds the limit,
     * and around units that must stand alone */
    int nb = 0, cur = -1, cur_alone = 0;
    int *first = malloc((size_t)x->nu * sizeof *first);
    double bytes = 0;
    for (int i = x->nu - 1; i >= 0; i--) {
        const exec_unit *u = &x->u[i];
        int alone = x->zero3 || (x->m->tied_embedding && l->pp > 1 &&
                                 (u->kind == U_EMBED || u->kind == U_HEAD));
        if (cur >= 0 && (alone || cur_alone || bytes >= limit_bytes)) {
            first[nb++] = cur;
            cur = -1;
            bytes = 0;
        }
        if (cur < 0)
            cur_alone = alone;
        bytes += (double)u->numel * (double)x->elem_bytes;
        cur = i;
    }
    first[nb++] = cur;
    /* first[] holds each bucket's first unit, last bucket first */
    x->nb = nb;
    x->b = calloc((size_t)nb, sizeof *x->b);
    int64_t cursor = 0, held = 0;
    for (int k = 0; k < nb; k++) {
        exec_bucket *b = &x->b[k];
        b->unit0 = first[nb - 1 - k];
        int end = k + 1 < nb ? first[nb - 2 - k] : x->nu;
        b->nunits = end - b->unit0;
        b->off = cursor;
        for (int i = b->unit0; i < end; i++) {
            x->u[i].off = cursor;
            x->u[i].bucket = k;
            cursor += x->u[i].numel;
        }
        b->len = (cursor - b->off + dp - 1) / dp * dp;
        cursor = b->off + b->len;
        if (l->sharding != PLAN_SHARD_NONE) {
            int64_t s = b->len / dp;
            b->held_off = b->off + (int64_t)x->dp_rank * s;
            b->held_len = s;
        } else {
            b->held_off = b->off;
            b->held_len = b->len;
        }
        b->shard_off = held;
        held += b->held_len;
    }
    free(first);
    x->flat_numel = cursor;
    x->held_numel = held;
}

/* ---- public ---- */

void *exec_param(const exec_model *x, int u, exec_role r)
{
    const exec_unit *un = &x->u[u];
    int t = un->tensor[r];
    if (t < 0)
        return NULL;
    if (x->zero3)
        return exec_dev_at(x->dev, un->gathered, x->t[t].off);
    return exec_dev_at(x->dev, x->params, un->off + x->t[t].off);
}

void *exec_grad(const exec_model *x, int u, exec_role r)
{
    const exec_unit *un = &x->u[u];
    int t = un->tensor[r];
    if (t < 0)
        return NULL;
    return exec_dev_at(x->dev, x->grads, un->off + x->t[t].off);
}

int64_t exec_tensor_global(const exec_model *x, const exec_tensor *t, int64_t k)
{
    for (int i = 0; i < t->npieces; i++) {
        const exec_piece *pc = &t->piece[i];
        int64_t n = pc->nrows * pc->ncols;
        if (k < n) {
            const exec_gtensor *g = &x->gt[pc->gid];
            return g->offset + (pc->row0 + k / pc->ncols) * g->cols + pc->col0 + k % pc->ncols;
        }
        k -= n;
    }
    return -1;
}

/* Fill a unit's parameters (all of them, padding zero) into host doubles. */
static void unit_init(const exec_model *x, int u, uint64_t seed, double *out)
{
    const exec_unit *un = &x->u[u];
    memset(out, 0, (size_t)un->numel * sizeof *out);
    for (int r = 0; r < R__COUNT; r++) {
        int ti = un->tensor[r];
        if (ti < 0)
            continue;
        const exec_tensor *t = &x->t[ti];
        double *p = out + t->off;
        for (int k = 0; k < t->npieces; k++) {
            const exec_piece *pc = &t->piece[k];
            const exec_gtensor *g = &x->gt[pc->gid];
            for (int64_t i = 0; i < pc->nrows; i++)
                for (int64_t j = 0; j < pc->ncols; j++)
                    *p++ = exec_init_value(g, pc->gid, (pc->row0 + i) * g->cols + pc->col0 + j,
                                           seed);
        }
    }
}

/* The same values drawn by the device itself, piece by piece (the buffers
 * come zeroed from exec_dev_alloc, so a unit's padding needs nothing). With
 * ZeRO-3 only the part of each piece inside this rank's shard is drawn. */
static int init_on_device(exec_model *x, uint64_t seed, st_err *err)
{
    exec_dev *dev = x->dev;
    for (int u = 0; u < x->nu; u++) {
        const exec_unit *un = &x->u[u];
        const exec_bucket *b = &x->b[un->bucket];
        /* the unit's elements this rank holds: [h0, h1) of the unit */
        int64_t h0 = x->zero3 ? b->held_off - b->off : 0;
        int64_t h1 = x->zero3 ? h0 + b->held_len : un->numel;
        void *base = x->zero3 ? exec_dev_at(dev, x->pshard, b->shard_off)
                              : exec_dev_at(dev, x->params, un->off);
        for (int r = 0; r < R__COUNT; r++) {
            int ti = un->tensor[r];
            if (ti < 0)
                continue;
            const exec_tensor *t = &x->t[ti];
            int64_t off = t->off; /* the piece's first element in the unit */
            for (int k = 0; k < t->npieces; k++) {
                const exec_piece *pc = &t->piece[k];
                const exec_gtensor *g = &x->gt[pc->gid];
                int64_t n = pc->nrows * pc->ncols, a = off > h0 ? off : h0,
                        e = off + n < h1 ? off + n : h1;
                if (a < e) {
                    exec_init_fill f = {pc->gid, g->init, g->std, seed,
                                        pc->row0, pc->col0, pc->ncols, g->cols};
                    dev->ops->init_fill(dev, exec_dev_at(dev, base, a - h0), &f, a - off, e - a);
                }
                off += n;
            }
        }
    }
    return dev->ops->sync(dev, err);
}

int exec_model_tables(exec_model *x, int pp_rank, size_t elem_bytes, st_err *err)
{
    const plan_model *m = x->m;
    const plan_layout *l = x->l;
    int tp = l->tp, pp = l->pp, v = l->virtual_stages;
    exec_dims *d = &x->d;
    d->C = m->hidden;
    d->hd = plan_model_head_dim(m);
    d->Hl = m->heads / tp;
    d->Hkvl = m->kv_heads / tp;
    d->Wqkv = (d->Hl + 2 * d->Hkvl) * d->hd;
    d->gated = plan_model_gated(m);
    d->gpt = m->arch == PLAN_ARCH_GPT;
    d->Fl = m->ffn / tp;
    d->Ffc = d->gated ? 2 * d->Fl : d->Fl;
    d->Vl = m->vocab / tp;
    d->v0 = (int64_t)x->tp_rank * d->Vl;
    d->T = m->seq;
    d->B = l->micro_batch;
    x->sp = l->sequence_parallel && tp > 1;
    d->Tl = x->sp ? d->T / tp : d->T;
    d->t0 = x->sp ? (int64_t)x->tp_rank * d->Tl : 0;
    d->N = d->T * d->B;
    d->Nr = d->Tl * d->B;
    x->zero3 = l->sharding == PLAN_SHARD_PARAMS;

    size_t ngt_max = 4 + 18 * (size_t)m->layers;
    x->gt = calloc(ngt_max, sizeof *x->gt);
    gid_layer *gl = calloc((size_t)m->layers, sizeof *gl);
    int chunks = v;
    x->t = calloc(6 + 12 * (size_t)m->layers, sizeof *x->t);
    x->u = calloc(6 * (size_t)chunks + (size_t)m->layers, sizeof *x->u);
    x->chunk = calloc((size_t)chunks, sizeof *x->chunk);
    int *count = calloc((size_t)pp * v, sizeof *count);
    if (!x->gt || !gl || !x->t || !x->u || !x->chunk || !count) {
        free(gl);
        free(count);
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the model's tables");
    }
    int g_wte, g_wpe, g_lnfw, g_lnfb, g_head;
    build_global(x, gl, &g_wte, &g_wpe, &g_lnfw, &g_lnfb, &g_head);
    chunk_layers(m, l, count);

    x->nchunks = chunks;
    int P = pp * v;
    for (int c = 0; c < chunks; c++) {
        exec_chunk *ch = &x->chunk[c];
        ch->g = c * pp + pp_rank;
        ch->first = ch->g == 0;
        ch->last = ch->g == P - 1;
        ch->layer0 = 0;
        for (int g = 0; g < ch->g; g++)
            ch->layer0 += count[g];
        ch->nlayers = count[ch->g];
        ch->unit_embed = ch->unit_pos = ch->unit_final = ch->unit_head = -1;
        int r = x->tp_rank;
        if (ch->first) {
            ch->unit_embed = add_unit(x, U_EMBED, c, -1);
            add_tensor(x, ch->unit_embed, R_WTE, EXEC_T_DECAY, P1(rows_of(x, g_wte, r, tp)));
            if (g_wpe >= 0) {
                ch->unit_pos = add_unit(x, U_POS, c, -1);
                add_tensor(x, ch->unit_pos, R_WPE,
                           EXEC_T_DECAY | EXEC_T_TP_REPL | EXEC_T_SP_PARTIAL,
                           P1(whole(x, g_wpe)));
            }
        }
        ch->unit_layer0 = x->nu;
        for (int i = 0; i < ch->nlayers; i++) {
            int u = add_unit(x, U_LAYER, c, ch->layer0 + i);
            build_layer(x, u, &gl[ch->layer0 + i]);
        }
        if (ch->last) {
            unsigned norm = EXEC_T_TP_REPL | EXEC_T_SP_PARTIAL;
            ch->unit_final = add_unit(x, U_FINAL_NORM, c, -1);
            add_tensor(x, ch->unit_final, R_LNFW, norm, P1(whole(x, g_lnfw)));
            if (g_lnfb >= 0)
                add_tensor(x, ch->unit_final, R_LNFB, norm, P1(whole(x, g_lnfb)));
            if (!m->tied_embedding) {
                ch->unit_head = add_unit(x, U_HEAD, c, -1);
                add_tensor(x, ch->unit_head, R_HEAD, EXEC_T_DECAY, P1(rows_of(x, g_head, r, tp)));
            } else if (pp > 1) {
                ch->unit_head = add_unit(x, U_HEAD, c, -1);
                add_tensor(x, ch->unit_head, R_WTE, EXEC_T_DECAY | EXEC_T_TIED_COPY,
                           P1(rows_of(x, g_wte, r, tp)));
            }
        }
    }
    free(gl);
    free(count);
    int most_layers = 1;
    for (int c = 0; c < chunks; c++)
        most_layers = x->chunk[c].nlayers > most_layers ? x->chunk[c].nlayers : most_layers;
    x->view.acts = calloc((size_t)most_layers, sizeof *x->view.acts);
    x->view.wacts = calloc((size_t)most_layers, sizeof *x->view.wacts);
    x->view.douts = calloc((size_t)most_layers, sizeof *x->view.douts);
    x->view.ckpt = calloc((size_t)most_layers, sizeof *x->view.ckpt);
    if (!x->view.acts || !x->view.wacts || !x->view.douts || !x->view.ckpt)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the activation views");
    if (m->tied_embedding && pp == 1)
        x->u[x->chunk[0].unit_embed].contrib = 2; /* the embedding and the head */

    x->elem_bytes = elem_bytes;
    build_buckets(x);
    return ST_OK;
}

/* What this rank holds of SP-partial tensors and of the embedding. */
typedef struct held_sums {
    int64_t sp_partial, wte;
} held_sums;

static void add_held(const exec_bucket *b, int r, const exec_tensor *t, int64_t lo, int64_t hi,
                     void *ctx)
{
    (void)b;
    held_sums *s = ctx;
    if (t->flags & EXEC_T_SP_PARTIAL)
        s->sp_partial += hi - lo;
    if (r == R_WTE)
        s->wte += hi - lo;
}

int exec_model_build(exec_model *x, int pp_rank, uint64_t seed, st_err *err)
{
    const plan_layout *l = x->l;
    int rc = exec_model_tables(x, pp_rank, x->dev->elem_bytes, err);
    if (rc != ST_OK)
        return rc;

    /* flat buffers and the workspace */
    exec_dev *dev = x->dev;
    size_t es = dev->elem_bytes;
    if (!x->zero3 && !(x->params = exec_dev_alloc(dev, (size_t)x->flat_numel * es,
                                                   EXEC_MEM_PARAMS, err)))
        return ST_ENOMEM;
    if (x->zero3 && !(x->pshard = exec_dev_alloc(dev, (size_t)x->held_numel * es,
                                                  EXEC_MEM_PARAMS, err)))
        return ST_ENOMEM;
    if (!(x->grads = exec_dev_alloc(dev, (size_t)x->flat_numel * es, EXEC_MEM_GRADS, err)))
        return ST_ENOMEM;
    if (l->sharding == PLAN_SHARD_GRADIENTS || l->sharding == PLAN_SHARD_PARAMS) {
        if (!(x->gshard = exec_dev_alloc(dev, (size_t)x->held_numel * es, EXEC_MEM_GRADS, err)))
            return ST_ENOMEM;
    }
    /* the buffer that packs the SP-partial gradients of every bucket (or a
     * tied embedding's) for one message */
    held_sums held = {0, 0};
    exec_each_held(x, add_held, &held);
    x->sp_pack_numel = x->sp ? held.sp_partial : 0;
    if (x->emb && held.wte > x->sp_pack_numel) /* the embedding group sums it */
        x->sp_pack_numel = held.wte;
    if (x->sp_pack_numel > 0 &&
        !(x->sp_pack = exec_dev_alloc(dev, (size_t)x->sp_pack_numel * es, EXEC_MEM_COMM, err)))
        return ST_ENOMEM;
    if (l->recompute == PLAN_RECOMP_FULL &&
        !(x->ws_rec = calloc((size_t)l->recompute_group, sizeof *x->ws_rec)))
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the recompute views");
    exec_ws_layout(x, NULL, NULL);
    if (!(x->ws_block = exec_dev_alloc(dev, x->ws_bytes, EXEC_MEM_WORKSPACE, err)))
        return ST_ENOMEM;
    if (x->rec_bytes && l->schedule != PLAN_SCHED_ZB_H1 &&
        !(x->rec_block = exec_dev_alloc(dev, x->rec_bytes, EXEC_MEM_WORKSPACE, err)))
        return ST_ENOMEM;
    exec_ws_layout(x, x->ws_block, x->rec_block);

    /* initial values */
    if (dev->ops->init_fill)
        return init_on_device(x, seed, err);
    int64_t most = 0;
    for (int i = 0; i < x->nb; i++)
        most = x->b[i].len > most ? x->b[i].len : most;
    double *host = calloc((size_t)(most ? most : 1), sizeof *host);
    if (!host)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the initialisation buffer");
    for (int i = 0; i < x->nu; i++) {
        const exec_unit *un = &x->u[i];
        const exec_bucket *b = &x->b[un->bucket];
        if (!x->zero3) {
            unit_init(x, i, seed, host);
            dev->ops->upload_f64(dev, exec_dev_at(dev, x->params, un->off), host, un->numel);
        } else { /* the unit is its bucket: keep this rank's shard */
            memset(host, 0, (size_t)b->len * sizeof *host);
            unit_init(x, i, seed, host);
            dev->ops->upload_f64(dev, exec_dev_at(dev, x->pshard, b->shard_off),
                                 host + (b->held_off - b->off), b->held_len);
        }
    }
    free(host);
    return dev->ops->sync(dev, err);
}

void exec_model_free(exec_model *x)
{
    if (!x)
        return;
    exec_dev *dev = x->dev;
    size_t es = dev ? dev->elem_bytes : 0;
    if (dev) {
        exec_dev_free(dev, x->params, (size_t)x->flat_numel * es, EXEC_MEM_PARAMS);
        exec_dev_free(dev, x->pshard, (size_t)x->held_numel * es, EXEC_MEM_PARAMS);
        exec_dev_free(dev, x->grads, (size_t)x->flat_numel * es, EXEC_MEM_GRADS);
        exec_dev_free(dev, x->gshard, (size_t)x->held_numel * es, EXEC_MEM_GRADS);
        exec_dev_free(dev, x->sp_pack, (size_t)x->sp_pack_numel * es, EXEC_MEM_COMM);
        exec_dev_free(dev, x->ws_block, x->ws_bytes, EXEC_MEM_WORKSPACE);
        exec_dev_free(dev, x->rec_block, x->rec_bytes, EXEC_MEM_WORKSPACE);
        for (int i = 0; i < x->nu; i++)
            if (x->u[i].gathered)
                exec_dev_free(dev, x->u[i].gathered, (size_t)x->b[x->u[i].bucket].len * es,
                              EXEC_MEM_PARAMS);
    }
    free(x->ws_rec);
    free(x->view.acts);
    free(x->view.wacts);
    free(x->view.douts);
    free(x->view.ckpt);
    memset(&x->view, 0, sizeof x->view);
    free(x->gt);
    free(x->t);
    free(x->u);
    free(x->b);
    free(x->chunk);
    x->params = x->pshard = x->grads = x->gshard = x->ws_block = x->rec_block = NULL;
    x->sp_pack = NULL;
    x->gt = NULL;
    x->t = NULL;
    x->u = NULL;
    x->b = NULL;
    x->chunk = NULL;
    x->ws_rec = NULL;
}
