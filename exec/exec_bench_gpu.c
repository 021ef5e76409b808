/*
 * exec_bench_gpu.c: a GPU measured for the planner's catalog, through the
 * executor's own CUDA device table (exec_dev.h), as exec_bench_dev.c
 * measures the CPU device: what the entry describes is the device as the
 * executor drives it (cuBLASLt with its epilogues, this project's kernels).
 *
 *  - Linears: a transformer layer's four (QKV h -> 3h, projection h -> h,
 *    MLP up h -> 4h and down 4h -> h) for T tokens, each in its three
 *    passes (forward with bias, input gradient, weight gradient with the
 *    bias gradient), at the token counts and widths of GPT models of 0.1 to
 *    7 B parameters on one GPU; the LM head (h -> V) in its three passes.
 *    A layer at one size is one group of the GEMM fit (plan_hwfit.h).
 *  - The fused attention (flash_fwd, flash_bwd) at sequences of 1 to 4 K
 *    and heads of 64 and 128, 128 heads in all: "flash_fwd" and
 *    "flash_bwd" with m = n = T, k = head size, and FLOPs as the planner
 *    counts them (the causal half: 2 T^2 d per head forward, 2.5 times that
 *    backward: plan_eval.c).
 *  - The plain attention core (attention_fwd, attention_bwd: the T x T
 *    probabilities kept) at sequences of 1 and 2 K and heads of 64 and
 *    128: "attn_fwd" and
 *    "attn_bwd", 4 T^2 d and 8 T^2 d per head (the full products).
 *  - Elementwise kernels per element, as exec_bench_dev.c names them: GELU
 *    and SwiGLU forward and backward, a layer's two norms and residual adds
 *    forward ("norm_fwd") and the two norms' gradients ("norm_bwd") per
 *    token x hidden element, the optimizer (the gradient's sum of squares
 *    and AdamW with master weights) per parameter.
 *  - Memory bandwidth: a device-to-device copy of 512 MiB, bytes read plus
 *    bytes written over its time (mem[0], in the triad's place).
 *
 * Timing: the calls of one measurement are queued back to back on the
 * device's stream and waited for once (the device is asynchronous: a host
 * clock around the wait times the GPU), after two calls of warm-up; the
 * median of ROUNDS rounds is kept. Inputs are random bf16 (zeros run faster
 * than real data). Every figure is a measurement of this process on this
 * GPU; nothing here writes files.
 */
#include "exec/exec_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/exec_dev.h"

#define ROUNDS 5
#define WARMUP 2

typedef void (*gpu_fn)(void *ctx);

/* The rounds' spreads of one exec_bench_gpu_run (one at a time: the
 * device is the process's). */
static double gpu_spreads[EXEC_BENCH_GEMM_MAX + EXEC_BENCH_ELEM_MAX];
static int gpu_nspreads;

/* Median seconds of one call of f over ROUNDS rounds of reps calls (their
 * interquartile range over the median kept in gpu_spreads). */
static double time_calls(exec_dev *d, gpu_fn f, void *ctx, int reps, st_err *err)
{
    double t[ROUNDS];
    for (int k = 0; k < WARMUP; k++)
        f(ctx);
    if (d->ops->sync(d, err) != ST_OK)
        return NAN;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = exec_now_s();
        for (int k = 0; k < reps; k++)
            f(ctx);
        if (d->ops->sync(d, err) != ST_OK)
            return NAN;
        t[r] = (exec_now_s() - t0) / reps;
    }
    exec__bench_sort(t, ROUNDS);
    if (gpu_nspreads < (int)(sizeof gpu_spreads / sizeof gpu_spreads[0]))
        gpu_spreads[gpu_nspreads++] = exec__bench_iqr_spread(t, ROUNDS);
    return t[ROUNDS / 2];
}

/* Repetitions that make a round last about 20 ms at a guessed rate. */
static int reps_for(double flops_or_bytes, double rate)
{
    double one = flops_or_bytes / rate;
    int n = (int)(0.02 / (one > 1e-6 ? one : 1e-6));
    return n < 3 ? 3 : n > 200 ? 200 : n;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double gauss(void)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        u[k] = ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

/* A device buffer of n elements of the device's dtype (state: its state
 * dtype), random N(0, scale^2) values, or |N| when positive: drawn on the
 * device where it can (init_fill, the weights' own generator), else on the
 * host. */
static void *rand_buf(exec_dev *d, int64_t n, double scale, int state, int positive, st_err *err)
{
    size_t es = state ? d->state_bytes : d->elem_bytes;
    void *p = exec_dev_alloc(d, (size_t)n * es, EXEC_MEM_WORKSPACE, err);
    if (!p)
        return NULL;
    if (!state && !positive && d->ops->init_fill) {
        static int gid = 1;
        exec_init_fill f = {gid++, EXEC_INIT_NORMAL, scale, 0x5eedull, 0, 0, n, n};
        d->ops->init_fill(d, p, &f, 0, n);
        return p;
    }
    enum { CHUNK = 1 << 20 };
    double *h = malloc(CHUNK * sizeof *h);
    float *hf = malloc(CHUNK * sizeof *hf);
    if (!h || !hf) {
        free(h);
        free(hf);
        exec_dev_free(d, p, (size_t)n * es, EXEC_MEM_WORKSPACE);
        ST_RAISE(err, ST_ENOMEM, "bench: out of host memory");
        return NULL;
    }
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t m = n - o < CHUNK ? n - o : CHUNK;
        for (int64_t i = 0; i < m; i++) {
            double v = scale * gauss();
            h[i] = positive ? fabs(v) : v;
            hf[i] = (float)h[i];
        }
        if (state) /* the state dtype is fp32 on the CUDA device */
            d->ops->upload(d, (char *)p + (size_t)o * es, hf, (size_t)m * es);
        else
            d->ops->upload_f64(d, (char *)p + (size_t)o * es, h, m);
    }
    free(h);
    free(hf);
    return p;
}

/* ---- the calls ---- */

typedef struct lin_ctx {
    exec_dev *d;
    void *inp, *w, *bias, *out, *dout, *dinp, *dw, *dbias;
    int64_t n, C, OC;
    int pass;
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

typedef struct attn_ctx {
    exec_dev *d;
    void *qkv, *out, *lse, *dout, *dqkv, *probs, *dprobs;
    int64_t T, B, H, hd;
    int pass, fused;
} attn_ctx;

static void attn_call(void *p)
{
    attn_ctx *a = p;
    const exec_dev_ops *o = a->d->ops;
    if (a->fused && !a->pass)
        o->flash_fwd(a->d, a->out, a->lse, a->qkv, a->T, a->B, a->H, a->H, a->hd);
    else if (a->fused)
        o->flash_bwd(a->d, a->dqkv, a->dout, a->qkv, a->out, a->lse, a->T, a->B, a->H, a->H,
                     a->hd);
    else if (!a->pass)
        o->attention_fwd(a->d, a->out, a->probs, a->qkv, a->T, a->B, a->H, a->H, a->hd);
    else
        o->attention_bwd(a->d, a->dqkv, a->dprobs, a->dout, a->qkv, a->probs, a->T, a->B, a->H,
                         a->H, a->hd);
}

typedef struct elem_ctx {
    exec_dev *d;
    const char *op;
    void *a, *b, *c, *w, *bias, *mean, *rstd, *dw, *db, *master, *m, *v;
    int64_t n, rows, C;
    exec_adamw adam;
} elem_ctx;

static void elem_call(void *p)
{
    elem_ctx *x = p;
    exec_dev *d = x->d;
    const exec_dev_ops *o = d->ops;
    if (!strcmp(x->op, "gelu_fwd"))
        o->gelu_fwd(d, x->b, x->a, x->n);
    else if (!strcmp(x->op, "gelu_bwd"))
        o->gelu_bwd(d, x->c, x->a, x->b, x->n);
    else if (!strcmp(x->op, "swiglu_fwd"))
        o->swiglu_fwd(d, x->b, x->a, x->rows, x->C);
    else if (!strcmp(x->op, "swiglu_bwd"))
        o->swiglu_bwd(d, x->c, x->a, x->b, x->rows, x->C);
    else if (!strcmp(x->op, "optimizer")) { /* as the runner: norm, then AdamW */
        o->acc_add(d, EXEC_ACC_SUMSQ, x->c, x->n, 1.0);
        o->adamw(d, x->a, x->master, x->c, x->m, x->v, x->n, &x->adam);
    } else if (!strcmp(x->op, "norm_fwd")) {
        for (int k = 0; k < 2; k++) {
            o->norm_fwd(d, x->b, x->mean, x->rstd, x->a, x->w, x->bias, x->rows, x->C, 0);
            o->add3(d, x->c, x->a, x->b, x->rows * x->C);
        }
    } else if (!strcmp(x->op, "norm_bwd")) {
        for (int k = 0; k < 2; k++) {
            o->norm_bwd_input(d, x->c, x->b, x->a, x->w, x->mean, x->rstd, x->rows, x->C, 0, 1);
            o->norm_bwd_weight(d, x->dw, x->db, x->b, x->a, x->mean, x->rstd, x->rows, x->C, 0);
        }
    } else { /* "copy": a into b */
        o->copy(d, x->b, x->a, (size_t)x->n * d->elem_bytes);
    }
}

/* ---- the run ---- */

/* Token counts and widths of the linears: microbatches of 4 K and 16 K
 * tokens, GPT widths of 768 (0.1 B) to 4096 (7 B). */
static const int64_t lin_tokens[] = {4096, 16384};
static const int64_t lin_widths[] = {768, 1024, 1536, 2048, 4096};
#define N_TOK (int)(sizeof lin_tokens / sizeof lin_tokens[0])
#define N_WID (int)(sizeof lin_widths / sizeof lin_widths[0])
#define HEAD_VOCAB 50304         /* GPT-2's vocabulary padded to a multiple of 128 */
#define HEAD_WIDTH 2048
#define HEAD_TOKENS 8192

/* The fused attention's shapes: 128 heads (B x H = 8 x 16) of 64 and 128 at
 * sequences of 1, 2 and 4 K; the plain core at 1 and 2 K (its T x T
 * probabilities: 64 heads of 2 K are 512 MiB in bf16). */
static const int64_t flash_T[] = {1024, 2048, 4096}, flash_hd[] = {64, 128};
static const int64_t plain_T[] = {1024, 2048}, plain_hd[] = {64, 128};

/* Elementwise sizes: the MLP of 16 K tokens at width 2048 (ffn 8192), the
 * norms at 16 K x 2048, the optimizer over 64 M parameters. */
#define ELEM_ROWS 16384
#define ELEM_WIDTH 2048
#define OPT_PARAMS (16ll << 20)
#define COPY_BYTES ((int64_t)1 << 29)

static int add_gemm(exec_bench_cpu *out, const char *kind, int64_t m, int64_t n, int64_t k,
                    int reps, double t, double work, int group, st_err *err)
{
    if (!isfinite(t) || !(t > 0))
        return err->code ? err->code : ST_RAISE(err, ST_EIO, "bench: %s not timed", kind);
    if (out->ngemm >= EXEC_BENCH_GEMM_MAX)
        return ST_OK;
    exec_bench_gemm *g = &out->gemm[out->ngemm++];
    *g = (exec_bench_gemm){"", 1, m, n, k, reps, t, work / t, group};
    snprintf(g->kind, sizeof g->kind, "%s", kind);
    return ST_OK;
}

static int add_elem(exec_bench_cpu *out, const char *op, int64_t n, int reps, double t,
                    st_err *err)
{
    if (!isfinite(t) || !(t > 0))
        return err->code ? err->code : ST_RAISE(err, ST_EIO, "bench: %s not timed", op);
    if (out->nelem >= EXEC_BENCH_ELEM_MAX)
        return ST_OK;
    exec_bench_elem *e = &out->elem[out->nelem++];
    *e = (exec_bench_elem){"", 1, n, reps, t, t / (double)n};
    snprintf(e->op, sizeof e->op, "%s", op);
    return ST_OK;
}

/* The buffers a run holds: the largest linear (16 K x 4 x 4096), the
 * attention's, the elementwise kernels'. */
typedef struct gpu_bufs {
    exec_dev *d;
    void *p[16];
    size_t bytes[16];
    int n;
} gpu_bufs;

static void *keep(gpu_bufs *b, void *p, size_t bytes)
{
    if (p && b->n < 16) {
        b->p[b->n] = p;
        b->bytes[b->n++] = bytes;
    }
    return p;
}

static void drop_all(gpu_bufs *b)
{
    for (int i = b->n - 1; i >= 0; i--)
        exec_dev_free(b->d, b->p[i], b->bytes[i], EXEC_MEM_WORKSPACE);
    b->n = 0;
}

static int run_linears(exec_dev *d, exec_bench_cpu *out, double guess_flops, st_err *err)
{
    gpu_bufs b = {d, {0}, {0}, 0};
    int64_t Tm = lin_tokens[N_TOK - 1], hm = lin_widths[N_WID - 1];
    /* inputs: at most T x 4h (the MLP's down projection); outputs: that or
     * the LM head's tokens x vocabulary */
    int64_t big_in = Tm * 4 * hm, big = big_in, wbig = 4 * hm * hm;
    if ((int64_t)HEAD_TOKENS * HEAD_VOCAB > big)
        big = (int64_t)HEAD_TOKENS * HEAD_VOCAB;
    if (HEAD_VOCAB * (int64_t)HEAD_WIDTH > wbig)
        wbig = HEAD_VOCAB * (int64_t)HEAD_WIDTH;
    size_t es = d->elem_bytes;
    void *inp = keep(&b, rand_buf(d, big_in, 1.0, 0, 0, err), big_in * es);
    void *w = keep(&b, rand_buf(d, wbig, 0.02, 0, 0, err), wbig * es);
    void *bias = keep(&b, rand_buf(d, HEAD_VOCAB, 0.02, 0, 0, err), HEAD_VOCAB * es);
    void *outb = keep(&b, exec_dev_alloc(d, big * es, EXEC_MEM_WORKSPACE, err), big * es);
    void *dout = keep(&b, rand_buf(d, big, 1e-3, 0, 0, err), big * es);
    void *dinp = keep(&b, exec_dev_alloc(d, big_in * es, EXEC_MEM_WORKSPACE, err), big_in * es);
    void *dw = keep(&b, exec_dev_alloc(d, wbig * es, EXEC_MEM_WORKSPACE, err), wbig * es);
    void *db = keep(&b, exec_dev_alloc(d, HEAD_VOCAB * es, EXEC_MEM_WORKSPACE, err),
                    HEAD_VOCAB * es);
    int rc = b.n == 8 ? ST_OK : (err->code ? err->code : ST_ENOMEM);
    static const char *const kinds[] = {"fwd", "bwd_input", "bwd_weight"};
    for (int i = 0; rc == ST_OK && i < N_TOK; i++)
        for (int j = 0; rc == ST_OK && j < N_WID; j++) {
            int64_t T = lin_tokens[i], h = lin_widths[j];
            int64_t lin[4][2] = {{h, 3 * h}, {h, h}, {h, 4 * h}, {4 * h, h}};
            for (int q = 0; rc == ST_OK && q < 4; q++)
                for (int pass = 0; rc == ST_OK && pass < 3; pass++) {
                    lin_ctx x = {d, inp, w, bias, outb, dout, dinp, dw, db, T, lin[q][0],
                                 lin[q][1], pass};
                    double work = 2.0 * (double)T * (double)x.C * (double)x.OC;
                    int reps = reps_for(work, guess_flops);
                    double t = time_calls(d, lin_call, &x, reps, err);
                    int64_t m = pass == 2 ? x.OC : T, n = pass == 0 ? x.OC : x.C,
                            k = pass == 0 ? x.C : pass == 1 ? x.OC : T;
                    rc = add_gemm(out, kinds[pass], m, n, k, reps, t, work, 1 + i * N_WID + j,
                                  err);
                }
        }
    /* the LM head, its own group */
    for (int pass = 0; rc == ST_OK && pass < 3; pass++) {
        lin_ctx x = {d, inp, w, NULL, outb, dout, dinp, dw, NULL, HEAD_TOKENS, HEAD_WIDTH,
                     HEAD_VOCAB, pass};
        double work = 2.0 * (double)HEAD_TOKENS * HEAD_WIDTH * HEAD_VOCAB;
        int reps = reps_for(work, guess_flops);
        double t = time_calls(d, lin_call, &x, reps, err);
        int64_t m = pass == 2 ? HEAD_VOCAB : HEAD_TOKENS, n = pass == 0 ? HEAD_VOCAB : HEAD_WIDTH,
                k = pass == 0 ? HEAD_WIDTH : pass == 1 ? HEAD_VOCAB : HEAD_TOKENS;
        rc = add_gemm(out, kinds[pass], m, n, k, reps, t, work, 1 + N_TOK * N_WID, err);
    }
    drop_all(&b);
    return rc;
}

static int run_attention(exec_dev *d, exec_bench_cpu *out, double guess_flops, st_err *err)
{
    const int64_t B = 8, H = 16;
    int64_t Tm = flash_T[sizeof flash_T / sizeof flash_T[0] - 1], dm = 128;
    int64_t nq = Tm * B * 3 * H * dm, no = Tm * B * H * dm, nl = B * H * Tm;
    int64_t np = 4 * 16 * plain_T[1] * plain_T[1]; /* probs of B 4 x H 16 at 2 K */
    size_t es = d->elem_bytes;
    gpu_bufs b = {d, {0}, {0}, 0};
    void *qkv = keep(&b, rand_buf(d, nq, 1.0, 0, 0, err), nq * es);
    void *dqkv = keep(&b, exec_dev_alloc(d, nq * es, EXEC_MEM_WORKSPACE, err), nq * es);
    void *o = keep(&b, exec_dev_alloc(d, no * es, EXEC_MEM_WORKSPACE, err), no * es);
    void *dout = keep(&b, rand_buf(d, no, 1.0, 0, 0, err), no * es);
    void *lse = keep(&b, exec_dev_alloc(d, nl * d->stat_bytes, EXEC_MEM_WORKSPACE, err),
                     nl * d->stat_bytes);
    void *probs = keep(&b, exec_dev_alloc(d, np * es, EXEC_MEM_WORKSPACE, err), np * es);
    void *dprobs = keep(&b, exec_dev_alloc(d, np * es, EXEC_MEM_WORKSPACE, err), np * es);
    int rc = b.n == 7 ? ST_OK : (err->code ? err->code : ST_ENOMEM);
    for (size_t i = 0; rc == ST_OK && d->ops->flash_fwd && i < sizeof flash_T / sizeof flash_T[0];
         i++)
        for (size_t j = 0; rc == ST_OK && j < sizeof flash_hd / sizeof flash_hd[0]; j++) {
            /* heads of 64 twice as many: the same width, the same buffers */
            int64_t T = flash_T[i], hd = flash_hd[j], Hh = H * dm / hd;
            /* the planner's count: 4 b a s^2 d, the causal half */
            double fwd = 2.0 * (double)B * (double)Hh * (double)T * (double)T * (double)hd;
            for (int pass = 0; rc == ST_OK && pass < 2; pass++) {
                attn_ctx a = {d, qkv, o, lse, dout, dqkv, NULL, NULL, T, B, Hh, hd, pass, 1};
                if (pass) /* the forward's output and log-sum-exp for the backward */
                    attn_call(&(attn_ctx){d, qkv, o, lse, dout, dqkv, NULL, NULL, T, B, Hh, hd,
                                          0, 1});
                double work = pass ? 2.5 * fwd : fwd;
                int reps = reps_for(work, 0.3 * guess_flops);
                double t = time_calls(d, attn_call, &a, reps, err);
                rc = add_gemm(out, pass ? "flash_bwd" : "flash_fwd", T, T, hd, reps, t, work, 0,
                              err);
            }
        }
    /* heads of 64 and 128 (16 of them, 4 sequences): what grows with the
     * head apart from what grows with the rows (plan_bench_attn_rows) */
    for (size_t i = 0; rc == ST_OK && i < sizeof plain_T / sizeof plain_T[0]; i++)
        for (size_t j = 0; rc == ST_OK && j < sizeof plain_hd / sizeof plain_hd[0]; j++) {
            int64_t T = plain_T[i], Bp = 4, hd = plain_hd[j], Hp = 16;
            double scores = (double)Bp * Hp * T * T;
            for (int pass = 0; rc == ST_OK && pass < 2; pass++) {
                attn_ctx a = {d, qkv, o, lse, dout, dqkv, probs, dprobs, T, Bp, Hp, hd, pass, 0};
                if (pass)
                    attn_call(&(attn_ctx){d, qkv, o, lse, dout, dqkv, probs, dprobs, T, Bp, Hp,
                                          hd, 0, 0});
                double work = (pass ? 8.0 : 4.0) * scores * hd;
                int reps = reps_for(work, 0.2 * guess_flops);
                double t = time_calls(d, attn_call, &a, reps, err);
                rc = add_gemm(out, pass ? "attn_bwd" : "attn_fwd", T, T, hd, reps, t, work, 0,
                              err);
            }
        }
    drop_all(&b);
    return rc;
}

static int run_elementwise(exec_dev *d, exec_bench_cpu *out, st_err *err)
{
    const int64_t rows = ELEM_ROWS, C = ELEM_WIDTH, F = 4 * ELEM_WIDTH;
    int64_t n = rows * F; /* the MLP's activations; 2 n for SwiGLU's input */
    size_t es = d->elem_bytes, ss = d->state_bytes;
    gpu_bufs b = {d, {0}, {0}, 0};
    void *a = keep(&b, rand_buf(d, 2 * n, 1.0, 0, 0, err), 2 * n * es);
    void *bb = keep(&b, rand_buf(d, 2 * n, 1e-2, 0, 0, err), 2 * n * es);
    void *c = keep(&b, exec_dev_alloc(d, 2 * n * es, EXEC_MEM_WORKSPACE, err), 2 * n * es);
    void *w = keep(&b, rand_buf(d, C, 1.0, 0, 1, err), C * es);
    void *bias = keep(&b, rand_buf(d, C, 0.02, 0, 0, err), C * es);
    void *mean = keep(&b, exec_dev_alloc(d, rows * d->stat_bytes, EXEC_MEM_WORKSPACE, err),
                      rows * d->stat_bytes);
    void *rstd = keep(&b, exec_dev_alloc(d, rows * d->stat_bytes, EXEC_MEM_WORKSPACE, err),
                      rows * d->stat_bytes);
    void *dw = keep(&b, exec_dev_alloc(d, 2 * C * es, EXEC_MEM_WORKSPACE, err), 2 * C * es);
    void *master = keep(&b, rand_buf(d, OPT_PARAMS, 0.02, 1, 0, err), OPT_PARAMS * ss);
    void *m = keep(&b, rand_buf(d, OPT_PARAMS, 1e-3, 1, 0, err), OPT_PARAMS * ss);
    void *v = keep(&b, rand_buf(d, OPT_PARAMS, 1e-6, 1, 1, err), OPT_PARAMS * ss);
    int rc = b.n == 11 ? ST_OK : (err->code ? err->code : ST_ENOMEM);
    elem_ctx x = {d, "", a, bb, c, w, bias, mean, rstd, dw, (char *)dw + C * es, master, m, v,
                  n, rows, F, {3e-4, 0.9, 0.95, 1e-8, 0.1, 1.0, 10}};
    static const char *const ops[] = {"gelu_fwd", "gelu_bwd", "swiglu_fwd", "swiglu_bwd",
                                      "norm_fwd", "norm_bwd", "optimizer"};
    /* bytes each moves, for the repetitions only */
    for (size_t q = 0; rc == ST_OK && q < sizeof ops / sizeof ops[0]; q++) {
        elem_ctx e = x;
        e.op = ops[q];
        int64_t count = n;
        if (!strncmp(e.op, "norm", 4)) { /* tokens x hidden */
            e.C = C;
            count = rows * C;
            /* a normalised row needs its statistics: the forward writes them */
            d->ops->norm_fwd(d, bb, mean, rstd, a, w, bias, rows, C, 0);
        } else if (!strcmp(e.op, "optimizer")) {
            e.n = count = OPT_PARAMS;
            e.a = a; /* the bf16 parameters */
            e.c = bb; /* the gradients */
        }
        int reps = reps_for(8.0 * (double)count, 2e12);
        double t = time_calls(d, elem_call, &e, reps, err);
        if (!strcmp(e.op, "optimizer"))
            d->ops->acc_take(d, EXEC_ACC_SUMSQ);
        rc = add_elem(out, e.op, count, reps, t, err);
    }
    /* memory bandwidth: a copy of COPY_BYTES within the device */
    if (rc == ST_OK && (int64_t)(2 * n * es) >= COPY_BYTES) {
        elem_ctx e = x;
        e.op = "copy";
        e.n = COPY_BYTES / (int64_t)es;
        int reps = reps_for(2.0 * COPY_BYTES, 2e12);
        double t = time_calls(d, elem_call, &e, reps, err);
        if (!(isfinite(t) && t > 0))
            rc = err->code ? err->code : ST_RAISE(err, ST_EIO, "bench: the copy was not timed");
        else
            out->mem[out->nmem++] = (exec_bench_mem){1, (double)COPY_BYTES, reps, t,
                                                     2.0 * (double)COPY_BYTES / t};
    }
    drop_all(&b);
    return rc;
}

int exec_bench_gpu_run(const char *device, exec_bench_cpu *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    /* the host's load is not the GPU's (out->cores counts a rank per GPU,
     * not the host's cores): not kept; the rounds' spread says it */
    out->load_start = out->load_end = -1;
    gpu_nspreads = 0;
    if (!exec_dev_built(device))
        return ST_RAISE(err, ST_EUNSUPPORTED, "bench gpu: this build has no %s device (built: "
                        "%s)", device, exec_dev_names());
    exec_dev *d = NULL;
    int rc = exec_dev_open(device, 1, &d, err);
    if (rc != ST_OK)
        return rc;
    if (d->ops->host_memory) {
        exec_dev_close(d);
        return ST_RAISE(err, ST_EINVAL, "bench gpu: %s is not a GPU device", device);
    }
    if (gethostname(out->host, sizeof out->host - 1) != 0)
        snprintf(out->host, sizeof out->host, "unknown");
    snprintf(out->cpu_model, sizeof out->cpu_model, "%s",
             d->ops->describe ? d->ops->describe(d) : device);
    snprintf(out->blas, sizeof out->blas, "the executor's %s device (cuBLASLt and its kernels)",
             device);
    snprintf(out->device, sizeof out->device, "%s", device);
    out->cores = 1; /* one rank per GPU */
    out->mem_bytes = d->mem_total_bytes;
    out->nthreads = 1;
    out->threads[0] = 1;
    /* a first guess of the GEMM rate, for the repetitions only */
    double guess = 5e14;
    if (rc == ST_OK)
        rc = run_linears(d, out, guess, err);
    if (rc == ST_OK)
        rc = run_attention(d, out, guess, err);
    if (rc == ST_OK)
        rc = run_elementwise(d, out, err);
    exec__bench_spreads(out, gpu_spreads, gpu_nspreads);
    exec_dev_close(d);
    return rc;
}
