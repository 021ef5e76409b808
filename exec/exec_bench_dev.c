/*
 * exec_bench_dev.c: the executor's own kernels timed through the device
 * table (exec_dev.h), so that the catalog entry describes the device as the
 * executor drives it, not only the BLAS underneath.
 *
 * Linears: a transformer layer's four (QKV h -> 3h, projection h -> h, MLP
 * up h -> 4h and down 4h -> h) for T tokens, each in its three passes: the
 * forward with its bias, the input gradient, the weight gradient with the
 * bias gradient; a GEMM of 2 x tokens x in x out FLOPs each. Elementwise: the
 * MLP activations (GELU and SwiGLU, forward and backward) per element, the
 * optimizer step (the gradient's sum of squares for the global norm, then
 * AdamW) per parameter, and a layer's norm-and-residual kernels (forward:
 * two norms and two residual adds; backward: the two norms' input and
 * weight gradients) per token x hidden element. Each is checked once on its
 * inputs before it is timed (llm.c's and the device's own formulas), then
 * timed as exec_bench_cpu_run times sgemm, with the caches refilled between
 * repetitions (see evict): repetitions until half its min_time_s has passed
 * (at least three), and on, up to four times as long, while their
 * interquartile range is over 5 % of their median; the median kept, each
 * spread summed up in out (spread_median, spread_worst: a busy host shows
 * there, plan_bench_busy).
 */
#include "exec/exec_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_dev.h"

#define MIN_REPS 3
#define MAX_REPS 4096
#define GELU_K 0.7978845608028654 /* sqrt(2 / pi), GPT-2's tanh approximation */

/* One kernel call, for timing. */
typedef void (*call_fn)(void *ctx);

/* Between repetitions the caches are refilled with other data, as a step
 * does between one layer's use of its operands and the next (a kernel
 * timed in a tight loop finds them in cache and runs faster than it does
 * in a step): EVICT_BYTES, past this host's per-core L2 caches, written
 * outside the timed region. */
#define EVICT_BYTES (16u << 20)

static void evict(void)
{
    static unsigned char *junk;
    if (!junk)
        junk = calloc(EVICT_BYTES, 1);
    for (size_t i = 0; junk && i < EVICT_BYTES; i += 64)
        junk[i]++;
}

/* The spreads of the measurements of one run (exec_bench_dev_run). */
typedef struct spread_list {
    double v[EXEC_BENCH_GEMM_MAX + EXEC_BENCH_ELEM_MAX];
    int n;
} spread_list;

/* Repetitions until min_time_s has passed (at least MIN_REPS), and then on,
 * up to SPREAD_TIME_FACTOR times as long, while their interquartile range
 * is over PLAN_BENCH_SPREAD_BUSY of their median: the median of a steady
 * set. The spread is added to sl. */
#define SPREAD_TIME_FACTOR 4.0
static double time_median(call_fn f, void *ctx, double min_time_s, double *times, int *reps,
                          spread_list *sl)
{
    f(ctx); /* warm-up */
    int n = 0;
    const double cap_s = SPREAD_TIME_FACTOR * min_time_s;
    double start = exec_now_s(), spent = 0, spread = 0, until = min_time_s;
    for (;;) {
        while (n < MAX_REPS && (n < MIN_REPS || spent < until)) {
            evict();
            double t0 = exec_now_s();
            f(ctx);
            times[n++] = exec_now_s() - t0;
            spent = exec_now_s() - start;
        }
        exec__bench_sort(times, n);
        spread = exec__bench_iqr_spread(times, n);
        if (spread <= PLAN_BENCH_SPREAD_BUSY || n >= MAX_REPS || spent >= cap_s)
            break;
        until = fmin(cap_s, 2.0 * spent); /* twice the repetitions, within the cap */
    }
    if (sl->n < (int)(sizeof sl->v / sizeof sl->v[0]))
        sl->v[sl->n++] = spread;
    *reps = n;
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

typedef struct lin_ctx {
    exec_dev *d;
    float *inp, *w, *bias, *out, *dout, *dinp, *dw, *dbias;
    int64_t n, C, OC;
    int pass;                    /* 0 fwd, 1 bwd_input, 2 bwd_weight */
} lin_ctx;

static void lin_call(void *p)
{
    lin_ctx *x = p;
    const exec_dev_ops *o = x->d->ops;
    if (x->pass == 0)
        o->matmul_fwd(x->d, x->out, x->inp, x->w, x->bias, NULL, x->n, x->C, x->OC);
    else if (x->pass == 1)
        o->matmul_bwd_input(x->d, x->dinp, x->dout, x->w, x->n, x->C, x->OC, 0);
    else
        o->matmul_bwd_weight(x->d, x->dw, x->dbias, x->dout, x->inp, x->n, x->C, x->OC);
}

/* Fill with small values of both signs, the same every run. */
static void fill(float *p, int64_t n, unsigned seed)
{
    uint64_t s = 0x9E3779B97F4A7C15ull ^ seed;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p[i] = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5);
    }
}

/* |got - want| within k-term fp32 rounding of mag (Higham 2002, Sec. 3.1). */
static int close_to(double got, double want, double mag, double k)
{
    return fabs(got - want) <= k * 1.2e-7 * mag + 1e-30;
}

static int check_linear(lin_ctx *x, st_err *err)
{
    const int64_t n = x->n, C = x->C, OC = x->OC;
    x->pass = 0;
    lin_call(x);
    for (int e = 0; e < 8; e++) {
        int64_t i = (n - 1) * e / 7, o = (OC - 1) * ((e * 3) % 8) / 7;
        double ref = x->bias[o], mag = fabs(x->bias[o]);
        for (int64_t c = 0; c < C; c++) {
            ref += (double)x->inp[i * C + c] * x->w[o * C + c];
            mag += fabs((double)x->inp[i * C + c] * x->w[o * C + c]);
        }
        if (!close_to(x->out[i * OC + o], ref, mag, (double)C))
            return ST_RAISE(err, ST_EINTERNAL, "bench: the device's linear %lldx%lld->%lld gives "
                            "out[%lld][%lld] = %g, expected %g", (long long)n, (long long)C,
                            (long long)OC, (long long)i, (long long)o, x->out[i * OC + o], ref);
    }
    x->pass = 1;
    lin_call(x);
    x->pass = 2;
    memset(x->dw, 0, (size_t)(OC * C) * sizeof(float));
    memset(x->dbias, 0, (size_t)OC * sizeof(float));
    lin_call(x);
    for (int e = 0; e < 8; e++) {
        int64_t i = (n - 1) * e / 7, c = (C - 1) * ((e * 5) % 8) / 7, o = (OC - 1) * e / 7;
        double di = 0, dm = 0, dw = 0, wm = 0;
        for (int64_t q = 0; q < OC; q++) {
            di += (double)x->dout[i * OC + q] * x->w[q * C + c];
            dm += fabs((double)x->dout[i * OC + q] * x->w[q * C + c]);
        }
        for (int64_t r = 0; r < n; r++) {
            dw += (double)x->dout[r * OC + o] * x->inp[r * C + c];
            wm += fabs((double)x->dout[r * OC + o] * x->inp[r * C + c]);
        }
        if (!close_to(x->dinp[i * C + c], di, dm, (double)OC) ||
            !close_to(x->dw[o * C + c], dw, wm, (double)n))
            return ST_RAISE(err, ST_EINTERNAL, "bench: the device's linear gradients %lldx%lld->"
                            "%lld are wrong at (%lld, %lld, %lld)", (long long)n, (long long)C,
                            (long long)OC, (long long)i, (long long)c, (long long)o);
    }
    return ST_OK;
}

/* The attention core through the device table (attention_fwd and _bwd:
 * per head S = Q K^T, the causal softmax, O = P V; and back), heads of
 * ATTN_HEAD_DIM on a sequence-first [T, 3 H hd] QKV, one sequence. Its
 * work is counted as the planner counts it: 4 T^2 hd per head forward, 8
 * backward (the full T x T products). */
#define ATTN_HEAD_DIM 64
#define ATTN_T_MAX 512 /* probabilities of every head are kept: H T^2 floats */

typedef struct attn_ctx {
    exec_dev *d;
    int64_t T, H, hd;
    float *qkv, *probs, *dout, *dqkv, *out;
    int pass;                    /* 0 forward, 1 backward */
} attn_ctx;

static void attn_call(void *p)
{
    attn_ctx *a = p;
    const exec_dev_ops *o = a->d->ops;
    if (!a->pass)
        o->attention_fwd(a->d, a->out, a->probs, a->qkv, a->T, 1, a->H, a->H, a->hd);
    else
        o->attention_bwd(a->d, a->dqkv, a->probs + a->H * a->T * a->T, a->dout, a->qkv, a->probs,
                         a->T, 1, a->H, a->H, a->hd);
}

typedef struct elem_ctx {
    exec_dev *d;
    const char *op;
    float *a, *b, *c, *m, *v, *mean, *rstd, *w, *bias, *dw, *db;
    int64_t n, rows, C;
    exec_adamw adam;
} elem_ctx;

static void elem_call(void *p)
{
    elem_ctx *x = p;
    const exec_dev_ops *o = x->d->ops;
    exec_dev *d = x->d;
    if (!strcmp(x->op, "gelu_fwd"))
        o->gelu_fwd(d, x->b, x->a, x->n);
    else if (!strcmp(x->op, "gelu_bwd"))
        o->gelu_bwd(d, x->c, x->a, x->b, x->n);
    else if (!strcmp(x->op, "swiglu_fwd"))
        o->swiglu_fwd(d, x->b, x->a, x->rows, x->C); /* a: rows x 2C, b: rows x C */
    else if (!strcmp(x->op, "swiglu_bwd"))
        o->swiglu_bwd(d, x->c, x->a, x->b, x->rows, x->C); /* c: rows x 2C */
    else if (!strcmp(x->op, "optimizer")) {
        double ss = o->sumsq(d, x->c, x->n); /* the global norm, as the runner reads it */
        (void)ss;
        o->adamw(d, x->a, NULL, x->c, x->m, x->v, x->n, &x->adam);
    } else if (!strcmp(x->op, "norm_fwd")) {
        for (int k = 0; k < 2; k++) {
            o->norm_fwd(d, x->b, x->mean, x->rstd, x->a, x->w, x->bias, x->rows, x->C, 0);
            o->add3(d, x->c, x->a, x->b, x->n);
        }
    } else { /* norm_bwd */
        for (int k = 0; k < 2; k++) {
            o->norm_bwd_input(d, x->c, x->b, x->a, x->w, x->mean, x->rstd, x->rows, x->C, 0, 1);
            o->norm_bwd_weight(d, x->dw, x->db, x->b, x->a, x->mean, x->rstd, x->rows, x->C, 0);
        }
    }
}

/* The forward results of the elementwise kernels against their formulas. */
static int check_elem(elem_ctx *x, st_err *err)
{
    const exec_dev_ops *o = x->d->ops;
    o->gelu_fwd(x->d, x->b, x->a, x->n);
    for (int64_t i = 0; i < x->n; i += x->n / 13 + 1) {
        double v = x->a[i];
        double want = 0.5 * v * (1 + tanh(GELU_K * (v + 0.044715 * v * v * v)));
        if (fabs(x->b[i] - want) > 1e-6 * (1 + fabs(want)))
            return ST_RAISE(err, ST_EINTERNAL, "bench: the device's GELU of %g gives %g, expected "
                            "%g", v, x->b[i], want);
    }
    o->swiglu_fwd(x->d, x->b, x->a, x->rows, x->C);
    for (int64_t r = 0; r < x->rows; r += x->rows / 5 + 1) {
        double g = x->a[r * 2 * x->C], u = x->a[r * 2 * x->C + x->C];
        double want = g / (1 + exp(-g)) * u;
        if (fabs(x->b[r * x->C] - want) > 1e-6 * (1 + fabs(want)))
            return ST_RAISE(err, ST_EINTERNAL, "bench: the device's SwiGLU gives %g, expected %g",
                            x->b[r * x->C], want);
    }
    double ss = 0;
    for (int64_t i = 0; i < x->n; i++)
        ss += (double)x->c[i] * x->c[i];
    double got = o->sumsq(x->d, x->c, x->n);
    if (fabs(got - ss) > 1e-9 * ss)
        return ST_RAISE(err, ST_EINTERNAL, "bench: the device's sum of squares gives %g, expected "
                        "%g", got, ss);
    o->norm_fwd(x->d, x->b, x->mean, x->rstd, x->a, x->w, x->bias, x->rows, x->C, 0);
    double m = 0, v = 0; /* a normalised row with w 1, b 0: mean 0, variance 1 */
    for (int64_t c = 0; c < x->C; c++)
        m += x->b[c];
    m /= (double)x->C;
    for (int64_t c = 0; c < x->C; c++)
        v += (x->b[c] - m) * (x->b[c] - m);
    v /= (double)x->C;
    /* 1 less the norm's epsilon over the row's variance (below 1 % for the
     * rows here) */
    if (fabs(m) > 1e-4 || fabs(v - 1) > 1e-2)
        return ST_RAISE(err, ST_EINTERNAL, "bench: the device's LayerNorm row has mean %g and "
                        "variance %g, expected 0 and 1", m, v);
    return ST_OK;
}

int exec_bench_dev_run(const char *device, const exec_bench_cpu_config *cfg, exec_bench_cpu *out,
                       st_err *err)
{
    /* tokens per microbatch from one short sequence (128) to several long
     * ones (2048): a CPU run's microbatches are small, and a GEMM's rate
     * falls with its smallest side */
    static const int64_t tok_full[] = {128, 512, 2048}, hid_full[] = {256, 768};
    static const int64_t tok_quick[] = {128, 256}, hid_quick[] = {128};
    const int64_t *tok = cfg->quick ? tok_quick : tok_full, *hid = cfg->quick ? hid_quick : hid_full;
    int nt = cfg->quick ? 2 : 3, nh = cfg->quick ? 1 : 2;
    int64_t Tmax = tok[nt - 1], hmax = hid[nh - 1];
    double min_time = (cfg->quick ? fmin(cfg->min_time_s, 0.02) : cfg->min_time_s) / 2;
    snprintf(out->device, sizeof out->device, "%s", device);
    double *times = malloc(MAX_REPS * sizeof *times);
    spread_list *sl_p = calloc(1, sizeof *sl_p);
    /* buffers for the largest linear (4h x T) and the elementwise kernels */
    int64_t big = Tmax * 4 * hmax, wbig = 4 * hmax * hmax;
    float *buf[11] = {NULL};
    int rc = times && sl_p ? ST_OK : ST_RAISE(err, ST_ENOMEM, "bench: out of memory");

    for (int ti = 0; rc == ST_OK && ti < out->nthreads; ti++) {
        exec_dev *d = NULL;
        if ((rc = exec_dev_open(device, out->threads[ti], &d, err)) != ST_OK)
            break;
        /* 0 inputs, 1 weights, 2 bias, 3 outputs, 4 output gradients, 5 input
         * gradients, 6 weight gradients, 7 bias gradients, 8 SwiGLU inputs,
         * 9 SwiGLU input gradients, 10 Adam's second moment */
        size_t sz[11] = {(size_t)big, (size_t)wbig, (size_t)(4 * hmax), (size_t)big, (size_t)big,
                         (size_t)big, (size_t)wbig, (size_t)(4 * hmax), (size_t)(2 * big),
                         (size_t)(2 * big), (size_t)big};
        for (int k = 0; rc == ST_OK && k < 11; k++)
            if (!(buf[k] = exec_dev_alloc(d, sz[k] * sizeof(float), EXEC_MEM_WORKSPACE, err)))
                rc = err->code ? err->code : ST_ENOMEM;
        for (int k = 0; rc == ST_OK && k < 11; k++)
            fill(buf[k], (int64_t)sz[k], (unsigned)k + 1);
        /* Adam's second moment is a running mean of squares: never negative
         * (a negative one would time sqrt's error path, not the step) */
        for (int64_t k = 0; rc == ST_OK && k < (int64_t)sz[10]; k++)
            buf[10][k] = buf[10][k] * buf[10][k] * 1e-2f;
        /* linears */
        for (int i = 0; rc == ST_OK && i < nt; i++)
            for (int j = 0; rc == ST_OK && j < nh; j++) {
                int64_t T = tok[i], h = hid[j];
                int64_t lin[4][2] = {{h, 3 * h}, {h, h}, {h, 4 * h}, {4 * h, h}};
                for (int q = 0; rc == ST_OK && q < 4; q++) {
                    lin_ctx x = {d,      buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6],
                                 buf[7], T,      lin[q][0], lin[q][1], 0};
                    if ((rc = check_linear(&x, err)) != ST_OK)
                        break;
                    for (int pass = 0; pass < 3 && out->ngemm < EXEC_BENCH_GEMM_MAX; pass++) {
                        static const char *const kinds[] = {"fwd", "bwd_input", "bwd_weight"};
                        x.pass = pass;
                        int reps;
                        double t = time_median(lin_call, &x, min_time, times, &reps, sl_p);
                        int64_t m = pass == 2 ? x.OC : T, n = pass == 0 ? x.OC : x.C,
                                k = pass == 0 ? x.C : pass == 1 ? x.OC : T;
                        exec_bench_gemm *g = &out->gemm[out->ngemm++];
                        *g = (exec_bench_gemm){"", out->threads[ti], m, n, k, reps, t,
                                               2.0 * (double)T * (double)x.C * (double)x.OC / t,
                                               1 + i * nh + j};
                        snprintf(g->kind, sizeof g->kind, "%s", kinds[pass]);
                    }
                }
                /* the layer's attention core, heads of ATTN_HEAD_DIM (not part
                 * of the GEMM fit: the planner bounds it by its own rate) */
                for (int pass = 0; rc == ST_OK && T <= ATTN_T_MAX && pass < 2 &&
                                   out->ngemm < EXEC_BENCH_GEMM_MAX;
                     pass++) {
                    /* probs and dprobs: 2 H T^2 in the SwiGLU buffer (2 T_max 4 h_max) */
                    attn_ctx a = {d,      T,      h / ATTN_HEAD_DIM, ATTN_HEAD_DIM, buf[0],
                                  buf[8], buf[4], buf[5],            buf[3],        pass};
                    if (!pass)
                        attn_call(&a); /* the probabilities the backward reads */
                    int reps;
                    double t = time_median(attn_call, &a, min_time, times, &reps, sl_p);
                    double work = (pass ? 8.0 : 4.0) * (double)a.H * (double)T * (double)T * a.hd;
                    exec_bench_gemm *g = &out->gemm[out->ngemm++];
                    *g = (exec_bench_gemm){"", out->threads[ti], T, T, a.hd, reps, t, work / t, 0};
                    snprintf(g->kind, sizeof g->kind, "%s", pass ? "attn_bwd" : "attn_fwd");
                }
            }
        /* elementwise, at the largest layer's sizes */
        elem_ctx e = {d, "", buf[0], buf[3], buf[4], buf[5], buf[10], buf[2], buf[7],
                      buf[6], buf[6] + 4 * hmax, buf[6] + 8 * hmax, buf[6] + 12 * hmax,
                      big, big / (4 * hmax), 4 * hmax,
                      {3e-4, 0.9, 0.95, 1e-8, 0.1, 1.0, 10}};
        /* SwiGLU's rows x 2C input lives in buf[8] */
        e.a = buf[8];
        e.rows = Tmax;
        e.C = 4 * hmax;
        e.n = Tmax * 4 * hmax;
        for (int64_t k = 0; k < 4 * hmax; k++) {
            e.w[k] = 1.0f;
            e.bias[k] = 0.0f;
        }
        if (rc == ST_OK) {
            elem_ctx c = e;
            c.C = hmax;
            c.rows = Tmax;
            c.n = Tmax * hmax;
            rc = check_elem(&c, err);
        }
        static const char *const ops[] = {"gelu_fwd", "gelu_bwd", "swiglu_fwd", "swiglu_bwd",
                                          "optimizer", "norm_fwd", "norm_bwd"};
        for (int q = 0; rc == ST_OK && q < 7 && out->nelem < EXEC_BENCH_ELEM_MAX; q++) {
            elem_ctx x = e;
            x.op = ops[q];
            if (!strncmp(x.op, "norm", 4)) { /* tokens x hidden */
                x.rows = Tmax;
                x.C = hmax;
                x.n = Tmax * hmax;
                x.a = buf[0];
            } else if (!strncmp(x.op, "gelu", 4) || !strcmp(x.op, "optimizer")) {
                x.a = buf[0];
                if (!strcmp(x.op, "optimizer")) /* gradients of a model's size: small */
                    for (int64_t k = 0; k < x.n; k++)
                        x.c[k] *= 1e-2f;
            } else { /* SwiGLU: input and input gradient rows x 2C */
                x.c = buf[9];
            }
            int reps;
            double t = time_median(elem_call, &x, min_time, times, &reps, sl_p);
            exec_bench_elem *r = &out->elem[out->nelem++];
            *r = (exec_bench_elem){"", out->threads[ti], x.n, reps, t, t / (double)x.n};
            snprintf(r->op, sizeof r->op, "%s", x.op);
        }
        for (int k = 0; k < 11; k++) {
            exec_dev_free(d, buf[k], sz[k] * sizeof(float), EXEC_MEM_WORKSPACE);
            buf[k] = NULL;
        }
        exec_dev_close(d);
    }
    if (rc == ST_OK)
        exec__bench_spreads(out, sl_p->v, sl_p->n);
    free(sl_p);
    free(times);
    return rc;
}
