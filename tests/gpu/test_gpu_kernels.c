/*
 * test_gpu_kernels.c: every operation of the CUDA device against the CPU
 * device ("cpu", fp32) on the same random inputs, forward and backward.
 *
 *   test_gpu_kernels          exit 0 pass, 1 fail, 77 skipped (no cuda device
 *                             in this build, or no usable GPU)
 *
 * The inputs are drawn in double and rounded to bf16 first, so both devices
 * see exactly the same values and the difference is the CUDA device's own:
 * bf16 outputs (a relative rounding of at most 2^-9), bf16 intermediates
 * where the kernels keep them (the attention's probabilities as bf16 for
 * the P V product, as FlashAttention does; the plain path's scores and
 * probabilities stored in bf16), and fp32 accumulation in another order.
 * Each comparison is normwise: |gpu - cpu|_2 / |cpu|_2 <= tol, and the
 * largest elementwise difference <= 8 tol max|cpu| (one badly wrong
 * element in a large tensor fails the second). Tolerances, stated per op
 * below: 1e-2 where a single bf16 rounding of the result is the only
 * difference (elementwise ops, copies, sums of few terms), 2e-2 where bf16
 * inputs feed long fp32 sums whose results are rounded once more (matrix
 * products, norms and their backward, cross-entropy's gradient), 3e-2 for
 * the attention (scores rounded to bf16 before the softmax on the plain
 * path, probabilities rounded before P V on both), 5e-2 for gradients
 * through attention's backward (dS = P (dP - D) subtracts close numbers).
 * fp32 results (the norms' mean and rstd, the cross-entropy's statistics
 * and losses, sums) get 1e-3: their inputs are identical and only the
 * summation order differs. AdamW's master weights and moments (fp32) get
 * 1e-5.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/exec_dev.h"
#include "exec/exec_init.h"

#define TOL_ELEM 1e-2
#define TOL_SUM 2e-2
#define TOL_ATTN 3e-2
#define TOL_ATTN_BWD 5e-2
#define TOL_F32 1e-3
#define TOL_STATE 1e-5

static exec_dev *cpu, *gpu;
static int failures, checks;

/* ---- random bf16-exact inputs ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* v rounded to bf16 (nearest even), as a double. */
static double bf16_round(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

static double *rnd(int64_t n, double scale)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    for (int64_t i = 0; i < n; i++)
        p[i] = bf16_round(urand() * scale);
    return p;
}

/* ---- a tensor on both devices ---- */

typedef struct pair {
    void *c, *g;
    int64_t n;
    int f32;                     /* fp32 on the GPU too (stat or state buffers) */
} pair;

static pair mk(int64_t n, const double *init, int f32)
{
    pair p = {NULL, NULL, n, f32};
    st_err err = {0};
    size_t nb = (size_t)(n > 0 ? n : 1);
    p.c = exec_dev_alloc(cpu, nb * 4, EXEC_MEM_WORKSPACE, &err);
    p.g = exec_dev_alloc(gpu, nb * (f32 ? 4 : 2), EXEC_MEM_WORKSPACE, &err);
    if (!p.c || !p.g) {
        fprintf(stderr, "test_gpu_kernels: %s\n", err.msg);
        exit(1);
    }
    if (init) {
        cpu->ops->upload_f64(cpu, p.c, init, n);
        if (f32) {
            float *h = malloc(nb * sizeof *h);
            for (int64_t i = 0; i < n; i++)
                h[i] = (float)init[i];
            gpu->ops->upload(gpu, p.g, h, (size_t)n * 4);
            free(h);
        } else {
            gpu->ops->upload_f64(gpu, p.g, init, n);
        }
    }
    return p;
}

static void drop(pair p)
{
    exec_dev_free(cpu, p.c, (size_t)(p.n > 0 ? p.n : 1) * 4, EXEC_MEM_WORKSPACE);
    exec_dev_free(gpu, p.g, (size_t)(p.n > 0 ? p.n : 1) * (p.f32 ? 4 : 2), EXEC_MEM_WORKSPACE);
}

static void fetch(pair p, double *c, double *g)
{
    cpu->ops->download_f64(cpu, c, p.c, p.n);
    if (p.f32) {
        float *h = malloc((size_t)(p.n > 0 ? p.n : 1) * sizeof *h);
        gpu->ops->download(gpu, h, p.g, (size_t)p.n * 4);
        for (int64_t i = 0; i < p.n; i++)
            g[i] = h[i];
        free(h);
    } else {
        gpu->ops->download_f64(gpu, g, p.g, p.n);
    }
}

/* The GPU's error so far (its first asynchronous failure) ends the test. */
static void gpu_ok(const char *what)
{
    st_err err = {0};
    if (gpu->ops->sync(gpu, &err) != ST_OK) {
        fprintf(stderr, "FAIL %s: the cuda device failed: %s\n", what, err.msg);
        exit(1);
    }
}

static void compare_arrays(const char *what, const double *c, const double *g, int64_t n,
                           double tol)
{
    double num = 0, den = 0, worst = 0, cmax = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = g[i] - c[i];
        num += d * d;
        den += c[i] * c[i];
        if (fabs(c[i]) > cmax)
            cmax = fabs(c[i]);
        if (!(fabs(d) <= worst)) {
            worst = fabs(d);
            at = i;
        }
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    int ok = rel <= tol && worst <= 8 * tol * (cmax > 0 ? cmax : 1) && isfinite(rel);
    checks++;
    printf("%-4s %-30s %8lld elements  rel %.2e (tol %.0e)  max |diff| %.3g at %lld (cpu %.4g, "
           "gpu %.4g)\n",
           ok ? "ok" : "FAIL", what, (long long)n, rel, tol, worst, (long long)at,
           n ? c[at] : 0.0, n ? g[at] : 0.0);
    if (!ok)
        failures++;
}

static void compare(const char *what, pair p, double tol)
{
    gpu_ok(what);
    double *c = malloc((size_t)(p.n > 0 ? p.n : 1) * sizeof *c);
    double *g = malloc((size_t)(p.n > 0 ? p.n : 1) * sizeof *g);
    fetch(p, c, g);
    compare_arrays(what, c, g, p.n, tol);
    free(c);
    free(g);
}

/* ---- the operations ---- */

static void test_matmul(int64_t n, int64_t C, int64_t OC)
{
    double *x = rnd(n * C, 1), *w = rnd(OC * C, 0.2), *b = rnd(OC, 0.5), *dy = rnd(n * OC, 1);
    double *dx0 = rnd(n * C, 1);
    pair X = mk(n * C, x, 0), Wt = mk(OC * C, w, 0), Bi = mk(OC, b, 0), Y = mk(n * OC, NULL, 0);
    pair dY = mk(n * OC, dy, 0), dX = mk(n * C, dx0, 0), dW = mk(OC * C, NULL, 0),
         dB = mk(OC, NULL, 0);
    char name[64];
    cpu->ops->matmul_fwd(cpu, Y.c, X.c, Wt.c, Bi.c, NULL, n, C, OC);
    gpu->ops->matmul_fwd(gpu, Y.g, X.g, Wt.g, Bi.g, NULL, n, C, OC);
    snprintf(name, sizeof name, "matmul_fwd %lldx%lldx%lld", (long long)n, (long long)C,
             (long long)OC);
    compare(name, Y, TOL_SUM);
    cpu->ops->matmul_fwd(cpu, Y.c, X.c, Wt.c, NULL, NULL, n, C, OC);
    gpu->ops->matmul_fwd(gpu, Y.g, X.g, Wt.g, NULL, NULL, n, C, OC);
    compare("matmul_fwd (no bias)", Y, TOL_SUM);
    /* a residual in the epilogue (a layer's output products), with and
     * without the bias: dY as the residual */
    pair R = mk(n * OC, NULL, 0);
    cpu->ops->matmul_fwd(cpu, R.c, X.c, Wt.c, Bi.c, dY.c, n, C, OC);
    gpu->ops->matmul_fwd(gpu, R.g, X.g, Wt.g, Bi.g, dY.g, n, C, OC);
    compare("matmul_fwd + residual", R, TOL_SUM);
    cpu->ops->matmul_fwd(cpu, R.c, X.c, Wt.c, NULL, dY.c, n, C, OC);
    gpu->ops->matmul_fwd(gpu, R.g, X.g, Wt.g, NULL, dY.g, n, C, OC);
    compare("matmul_fwd + residual (no bias)", R, TOL_SUM);
    drop(R);
    for (int acc = 0; acc < 2; acc++) {
        cpu->ops->matmul_bwd_input(cpu, dX.c, dY.c, Wt.c, n, C, OC, acc);
        gpu->ops->matmul_bwd_input(gpu, dX.g, dY.g, Wt.g, n, C, OC, acc);
        compare(acc ? "matmul_bwd_input (accumulate)" : "matmul_bwd_input", dX, TOL_SUM);
    }
    /* twice: the weight gradient accumulates */
    for (int k = 0; k < 2; k++) {
        cpu->ops->matmul_bwd_weight(cpu, dW.c, dB.c, dY.c, X.c, n, C, OC);
        gpu->ops->matmul_bwd_weight(gpu, dW.g, dB.g, dY.g, X.g, n, C, OC);
    }
    compare("matmul_bwd_weight dw (x2)", dW, TOL_SUM);
    compare("matmul_bwd_weight dbias (x2)", dB, TOL_SUM);
    drop(X), drop(Wt), drop(Bi), drop(Y), drop(dY), drop(dX), drop(dW), drop(dB);
    free(x), free(w), free(b), free(dy), free(dx0);
}

/* The GELU in the product's epilogue against the CPU device's product and
 * GELU: the pre-activation (a product's sum, TOL_SUM), the activation and
 * the input gradient (a GELU of a sum: the product's rounding carried
 * through a slope of at most 1.13, TOL_SUM). */
static void test_matmul_gelu(int64_t n, int64_t C, int64_t OC)
{
    double *x = rnd(n * C, 1), *w = rnd(OC * C, 0.2), *b = rnd(OC, 0.5), *dy = rnd(n * C, 1);
    pair X = mk(n * C, x, 0), Wt = mk(OC * C, w, 0), Bi = mk(OC, b, 0), Pre = mk(n * OC, NULL, 0),
         Act = mk(n * OC, NULL, 0), dY = mk(n * C, dy, 0), dPre = mk(n * OC, NULL, 0);
    char name[64];
    cpu->ops->matmul_gelu_fwd(cpu, Act.c, Pre.c, X.c, Wt.c, Bi.c, n, C, OC);
    gpu->ops->matmul_gelu_fwd(gpu, Act.g, Pre.g, X.g, Wt.g, Bi.g, n, C, OC);
    snprintf(name, sizeof name, "matmul_gelu_fwd %lldx%lldx%lld pre", (long long)n, (long long)C,
             (long long)OC);
    compare(name, Pre, TOL_SUM);
    compare("matmul_gelu_fwd act", Act, TOL_SUM);
    /* the backward of the next product (W2[C, OC] as [OC x C] transposed:
     * dpre[n, OC] = gelu'(pre) * (dy[n, C] W2), W2 given as Wt's C x OC) */
    cpu->ops->matmul_bwd_input_gelu(cpu, dPre.c, dY.c, Wt.c, Pre.c, n, OC, C);
    gpu->ops->matmul_bwd_input_gelu(gpu, dPre.g, dY.g, Wt.g, Pre.g, n, OC, C);
    compare("matmul_bwd_input_gelu", dPre, TOL_SUM);
    drop(X), drop(Wt), drop(Bi), drop(Pre), drop(Act), drop(dY), drop(dPre);
    free(x), free(w), free(b), free(dy);
}

static void test_embedding(void)
{
    int64_t n = 300, C = 96, v0 = 40, vn = 50, T = 30, B = 10;
    int32_t *tok = malloc((size_t)n * sizeof *tok);
    for (int64_t i = 0; i < n; i++) /* some tokens outside [v0, v0 + vn): other ranks' rows */
        tok[i] = (int32_t)((urand() + 1.0) * 60.0) % 120;
    st_err err = {0};
    int32_t *tc = exec_dev_alloc(cpu, (size_t)n * 4, EXEC_MEM_WORKSPACE, &err);
    int32_t *tg = exec_dev_alloc(gpu, (size_t)n * 4, EXEC_MEM_WORKSPACE, &err);
    cpu->ops->upload(cpu, tc, tok, (size_t)n * 4);
    gpu->ops->upload(gpu, tg, tok, (size_t)n * 4);
    double *w = rnd(vn * C, 1), *dy = rnd(n * C, 1), *pe = rnd(40 * C, 1);
    pair Wt = mk(vn * C, w, 0), Y = mk(n * C, NULL, 0), dY = mk(n * C, dy, 0),
         dW = mk(vn * C, w, 0), P = mk(40 * C, pe, 0), dP = mk(40 * C, pe, 0);
    cpu->ops->embed_fwd(cpu, Y.c, tc, Wt.c, n, C, v0, vn);
    gpu->ops->embed_fwd(gpu, Y.g, tg, Wt.g, n, C, v0, vn);
    compare("embed_fwd", Y, TOL_ELEM);
    cpu->ops->embed_bwd(cpu, dW.c, dY.c, tc, n, C, v0, vn);
    gpu->ops->embed_bwd(gpu, dW.g, dY.g, tg, n, C, v0, vn);
    compare("embed_bwd (adds)", dW, TOL_ELEM);
    cpu->ops->pos_fwd(cpu, Y.c, P.c, T, B, C, 7);
    gpu->ops->pos_fwd(gpu, Y.g, P.g, T, B, C, 7);
    compare("pos_fwd", Y, TOL_ELEM);
    cpu->ops->pos_bwd(cpu, dP.c, dY.c, T, B, C, 7);
    gpu->ops->pos_bwd(gpu, dP.g, dY.g, T, B, C, 7);
    compare("pos_bwd (adds)", dP, TOL_SUM);
    exec_dev_free(cpu, tc, (size_t)n * 4, EXEC_MEM_WORKSPACE);
    exec_dev_free(gpu, tg, (size_t)n * 4, EXEC_MEM_WORKSPACE);
    drop(Wt), drop(Y), drop(dY), drop(dW), drop(P), drop(dP);
    free(tok), free(w), free(dy), free(pe);
}

static void test_norm(int rms, int64_t C)
{
    int64_t n = 257;
    double *x = rnd(n * C, 2), *w = rnd(C, 1), *b = rnd(C, 0.5), *dy = rnd(n * C, 1);
    double *dx0 = rnd(n * C, 1);
    for (int64_t i = 0; i < n * C; i++) /* an offset, so LayerNorm's mean matters */
        x[i] = bf16_round(x[i] + 0.7);
    pair X = mk(n * C, x, 0), Wt = mk(C, w, 0), Bi = mk(C, b, 0), Y = mk(n * C, NULL, 0);
    pair M = mk(n, NULL, 1), R = mk(n, NULL, 1), dY = mk(n * C, dy, 0), dX = mk(n * C, dx0, 0);
    pair dW = mk(C, NULL, 0), dB = mk(C, NULL, 0);
    char nm[32];
    snprintf(nm, sizeof nm, "%s C%lld", rms ? "rmsnorm" : "layernorm", (long long)C);
    char name[64];
    cpu->ops->norm_fwd(cpu, Y.c, rms ? NULL : M.c, R.c, X.c, Wt.c, rms ? NULL : Bi.c, n, C, rms);
    gpu->ops->norm_fwd(gpu, Y.g, rms ? NULL : M.g, R.g, X.g, Wt.g, rms ? NULL : Bi.g, n, C, rms);
    snprintf(name, sizeof name, "%s_fwd", nm);
    compare(name, Y, TOL_SUM);
    snprintf(name, sizeof name, "%s_fwd rstd (f32)", nm);
    compare(name, R, TOL_F32);
    if (!rms) {
        snprintf(name, sizeof name, "%s_fwd mean (f32)", nm);
        compare(name, M, TOL_F32);
    }
    for (int acc = 0; acc < 2; acc++) {
        cpu->ops->norm_bwd_input(cpu, dX.c, dY.c, X.c, Wt.c, rms ? NULL : M.c, R.c, n, C, rms, acc);
        gpu->ops->norm_bwd_input(gpu, dX.g, dY.g, X.g, Wt.g, rms ? NULL : M.g, R.g, n, C, rms, acc);
        snprintf(name, sizeof name, "%s_bwd_input%s", nm, acc ? " (accumulate)" : "");
        compare(name, dX, TOL_SUM);
    }
    cpu->ops->norm_bwd_weight(cpu, dW.c, rms ? NULL : dB.c, dY.c, X.c, rms ? NULL : M.c, R.c, n,
                              C, rms);
    gpu->ops->norm_bwd_weight(gpu, dW.g, rms ? NULL : dB.g, dY.g, X.g, rms ? NULL : M.g, R.g, n,
                              C, rms);
    snprintf(name, sizeof name, "%s_bwd_weight dw", nm);
    compare(name, dW, TOL_SUM);
    if (!rms)
        compare("layernorm_bwd_weight db", dB, TOL_SUM);
    drop(X), drop(Wt), drop(Bi), drop(Y), drop(M), drop(R), drop(dY), drop(dX), drop(dW),
        drop(dB);
    free(x), free(w), free(b), free(dy), free(dx0);
}

static void test_activations(void)
{
    int64_t n = 123, F = 200;
    double *x = rnd(n * 2 * F, 3), *dy = rnd(n * 2 * F, 1);
    pair X = mk(n * 2 * F, x, 0), Y = mk(n * 2 * F, NULL, 0), dY = mk(n * 2 * F, dy, 0),
         dX = mk(n * 2 * F, NULL, 0);
    cpu->ops->gelu_fwd(cpu, Y.c, X.c, n * 2 * F);
    gpu->ops->gelu_fwd(gpu, Y.g, X.g, n * 2 * F);
    compare("gelu_fwd", Y, TOL_ELEM);
    cpu->ops->gelu_bwd(cpu, dX.c, X.c, dY.c, n * 2 * F);
    gpu->ops->gelu_bwd(gpu, dX.g, X.g, dY.g, n * 2 * F);
    compare("gelu_bwd", dX, TOL_ELEM);
    pair S = mk(n * F, NULL, 0);
    cpu->ops->swiglu_fwd(cpu, S.c, X.c, n, F);
    gpu->ops->swiglu_fwd(gpu, S.g, X.g, n, F);
    compare("swiglu_fwd", S, TOL_ELEM);
    cpu->ops->swiglu_bwd(cpu, dX.c, X.c, dY.c, n, F);
    gpu->ops->swiglu_bwd(gpu, dX.g, X.g, dY.g, n, F);
    compare("swiglu_bwd", dX, TOL_ELEM);
    drop(X), drop(Y), drop(dY), drop(dX), drop(S);
    free(x), free(dy);
}

static void test_rope(void)
{
    /* positions up to 2000: the angles' precision matters there */
    int64_t T = 2000, B = 2, H = 6, hd = 32, ld = 256;
    double *x = rnd(T * B * ld, 1);
    pair X = mk(T * B * ld, x, 0);
    cpu->ops->rope_fwd(cpu, X.c, T, B, H, hd, ld, 10000.0);
    gpu->ops->rope_fwd(gpu, X.g, T, B, H, hd, ld, 10000.0);
    compare("rope_fwd", X, TOL_ELEM);
    cpu->ops->rope_bwd(cpu, X.c, T, B, H, hd, ld, 10000.0);
    gpu->ops->rope_bwd(gpu, X.g, T, B, H, hd, ld, 10000.0);
    compare("rope_bwd (back to the input)", X, TOL_ELEM);
    double *c = malloc((size_t)(T * B * ld) * sizeof *c), *g = malloc((size_t)(T * B * ld) * sizeof *g);
    fetch(X, c, g);
    compare_arrays("rope_fwd then bwd = identity", x, g, T * B * ld, TOL_ELEM);
    drop(X);
    free(x), free(c), free(g);
}

/* The plain path against the CPU, then the fused one against the CPU. */
static void test_attention(int64_t T, int64_t B, int64_t Hq, int64_t Hkv, int64_t hd)
{
    int64_t W = (Hq + 2 * Hkv) * hd, N = T * B, P = B * Hq * T * T;
    double *qkv = rnd(N * W, 1.5), *dy = rnd(N * Hq * hd, 1);
    pair Q = mk(N * W, qkv, 0), O = mk(N * Hq * hd, NULL, 0), Pr = mk(P, NULL, 0),
         dPr = mk(P, NULL, 0), dO = mk(N * Hq * hd, dy, 0), dQ = mk(N * W, NULL, 0),
         L = mk(B * Hq * T, NULL, 1);
    char name[96];
    snprintf(name, sizeof name, "attention T%lld B%lld H%lld/%lld hd%lld", (long long)T,
             (long long)B, (long long)Hq, (long long)Hkv, (long long)hd);
    cpu->ops->attention_fwd(cpu, O.c, Pr.c, Q.c, T, B, Hq, Hkv, hd);
    gpu->ops->attention_fwd(gpu, O.g, Pr.g, Q.g, T, B, Hq, Hkv, hd);
    char line[160];
    snprintf(line, sizeof line, "%s out", name);
    compare(line, O, TOL_ATTN);
    snprintf(line, sizeof line, "%s probs", name);
    compare(line, Pr, TOL_ATTN);
    cpu->ops->attention_bwd(cpu, dQ.c, dPr.c, dO.c, Q.c, Pr.c, T, B, Hq, Hkv, hd);
    gpu->ops->attention_bwd(gpu, dQ.g, dPr.g, dO.g, Q.g, Pr.g, T, B, Hq, Hkv, hd);
    snprintf(line, sizeof line, "%s dqkv", name);
    compare(line, dQ, TOL_ATTN_BWD);
    /* the fused kernels: out against the CPU's, dqkv against the CPU's */
    pair Of = mk(N * Hq * hd, NULL, 0), dQf = mk(N * W, NULL, 0);
    gpu->ops->flash_fwd(gpu, Of.g, L.g, Q.g, T, B, Hq, Hkv, hd);
    gpu->ops->flash_bwd(gpu, dQf.g, dO.g, Q.g, Of.g, L.g, T, B, Hq, Hkv, hd);
    gpu_ok("flash");
    double *c = malloc((size_t)(N * W) * sizeof *c), *g = malloc((size_t)(N * W) * sizeof *g);
    cpu->ops->download_f64(cpu, c, O.c, N * Hq * hd);
    gpu->ops->download_f64(gpu, g, Of.g, N * Hq * hd);
    snprintf(line, sizeof line, "flash %s out", name + 10);
    compare_arrays(line, c, g, N * Hq * hd, TOL_ATTN);
    cpu->ops->download_f64(cpu, c, dQ.c, N * W);
    gpu->ops->download_f64(gpu, g, dQf.g, N * W);
    snprintf(line, sizeof line, "flash %s dqkv", name + 10);
    compare_arrays(line, c, g, N * W, TOL_ATTN_BWD);
    /* the log-sum-exp against the CPU's probabilities: lse = s_ii - log p_ii
     * for the diagonal entry (scaled score s of row i with itself) */
    float *lse = malloc((size_t)(B * Hq * T) * sizeof *lse);
    double *pr = malloc((size_t)P * sizeof *pr);
    gpu->ops->download(gpu, lse, L.g, (size_t)(B * Hq * T) * 4);
    cpu->ops->download_f64(cpu, pr, Pr.c, P);
    double *lc = malloc((size_t)(B * Hq * T) * sizeof *lc), *lg = malloc((size_t)(B * Hq * T) * sizeof *lg);
    double scale = 1.0 / sqrt((double)hd);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < T; i++) {
                int64_t kh = h / (Hq / Hkv);
                double s = 0;
                for (int64_t d = 0; d < hd; d++)
                    s += qkv[(i * B + b) * W + h * hd + d] * qkv[(i * B + b) * W + (Hq + kh) * hd + d];
                int64_t r = (b * Hq + h) * T + i;
                lc[r] = s * scale - log(pr[r * T + i]);
                lg[r] = lse[r];
            }
    snprintf(line, sizeof line, "flash %s lse (f32)", name + 10);
    compare_arrays(line, lc, lg, B * Hq * T, TOL_F32);
    free(lse), free(pr), free(lc), free(lg), free(c), free(g);
    drop(Q), drop(O), drop(Pr), drop(dPr), drop(dO), drop(dQ), drop(L), drop(Of), drop(dQf);
    free(qkv), free(dy);
}

static void test_cross_entropy(void)
{
    int64_t n = 190, vn = 3000, v0 = 1000;
    double *lg = rnd(n * vn, 4);
    int32_t *tgt = malloc((size_t)n * sizeof *tgt);
    for (int64_t i = 0; i < n; i++) /* a fifth off this rank's vocab range */
        tgt[i] = (int32_t)(i % 5 == 0 ? (i * 37) % 1000 : v0 + (i * 7919) % vn);
    st_err err = {0};
    int32_t *tc = exec_dev_alloc(cpu, (size_t)n * 4, EXEC_MEM_WORKSPACE, &err);
    int32_t *tg = exec_dev_alloc(gpu, (size_t)n * 4, EXEC_MEM_WORKSPACE, &err);
    cpu->ops->upload(cpu, tc, tgt, (size_t)n * 4);
    gpu->ops->upload(gpu, tg, tgt, (size_t)n * 4);
    pair Lg = mk(n * vn, lg, 0), Mx = mk(n, NULL, 1), St = mk(2 * n, NULL, 1),
         Ls = mk(n, NULL, 1);
    cpu->ops->ce_rowmax(cpu, Mx.c, Lg.c, n, vn);
    gpu->ops->ce_rowmax(gpu, Mx.g, Lg.g, n, vn);
    compare("ce_rowmax (f32)", Mx, TOL_F32);
    cpu->ops->ce_stats(cpu, St.c, Lg.c, Mx.c, tc, n, vn, v0);
    gpu->ops->ce_stats(gpu, St.g, Lg.g, Mx.g, tg, n, vn, v0);
    compare("ce_stats (f32)", St, TOL_F32);
    double scale = 1.0 / 512;
    cpu->ops->ce_loss_bwd(cpu, Ls.c, Lg.c, Mx.c, St.c, tc, n, vn, v0, scale);
    gpu->ops->ce_loss_bwd(gpu, Ls.g, Lg.g, Mx.g, St.g, tg, n, vn, v0, scale);
    compare("ce_loss_bwd losses (f32)", Ls, TOL_F32);
    compare("ce_loss_bwd dlogits", Lg, TOL_SUM);
    double sc = cpu->ops->sum(cpu, Ls.c, n), sg = gpu->ops->sum(gpu, Ls.g, n);
    compare_arrays("sum of the losses (f32)", &sc, &sg, 1, TOL_F32);
    exec_dev_free(cpu, tc, (size_t)n * 4, EXEC_MEM_WORKSPACE);
    exec_dev_free(gpu, tg, (size_t)n * 4, EXEC_MEM_WORKSPACE);
    drop(Lg), drop(Mx), drop(St), drop(Ls);
    free(lg), free(tgt);
}

static void test_elementwise(int64_t n)
{
    double *a = rnd(n, 1), *b = rnd(n, 1);
    pair A = mk(n, a, 0), B = mk(n, b, 0), Y = mk(n, NULL, 0);
    cpu->ops->add3(cpu, Y.c, A.c, B.c, n);
    gpu->ops->add3(gpu, Y.g, A.g, B.g, n);
    compare("add3", Y, TOL_ELEM);
    cpu->ops->add(cpu, Y.c, A.c, n);
    gpu->ops->add(gpu, Y.g, A.g, n);
    compare("add", Y, TOL_ELEM);
    cpu->ops->scale(cpu, Y.c, -0.37, n);
    gpu->ops->scale(gpu, Y.g, -0.37, n);
    compare("scale", Y, TOL_ELEM);
    double qc = cpu->ops->sumsq(cpu, A.c, n), qg = gpu->ops->sumsq(gpu, A.g, n);
    compare_arrays("sumsq (bf16 in, to the host)", &qc, &qg, 1, TOL_F32);
    cpu->ops->copy(cpu, Y.c, B.c, (size_t)n * 4);
    gpu->ops->copy(gpu, Y.g, B.g, (size_t)n * 2);
    compare("copy", Y, TOL_ELEM);
    cpu->ops->zero(cpu, Y.c, (size_t)n * 4);
    gpu->ops->zero(gpu, Y.g, (size_t)n * 2);
    compare("zero", Y, TOL_ELEM);
    drop(A), drop(B), drop(Y);
    free(a), free(b);
}

/* AdamW: the CPU updates its fp32 parameters directly, the GPU its fp32
 * master (the CPU's parameters are the master here) and rounds the bf16
 * parameter from it. */
static void test_adamw(int64_t n)
{
    double *p = rnd(n, 1), *g = rnd(n, 0.1), *m = rnd(n, 0.01), *v = rnd(n, 0.001);
    for (int64_t i = 0; i < n; i++)
        v[i] = fabs(v[i]);
    pair Pm = mk(n, p, 0), Mst = mk(n, p, 1), G = mk(n, g, 0), M = mk(n, m, 1), V = mk(n, v, 1);
    exec_adamw a = {.lr = 3e-3, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1,
                    .grad_scale = 0.7, .step = 3};
    /* widen: the master from the bf16 parameters */
    pair Wd = mk(n, NULL, 1);
    gpu->ops->widen(gpu, Wd.g, Pm.g, n);
    cpu->ops->copy(cpu, Wd.c, Pm.c, (size_t)n * 4);
    compare("widen (bf16 to f32)", Wd, TOL_STATE);
    for (int k = 0; k < 3; k++) {
        cpu->ops->adamw(cpu, Mst.c, NULL, G.c, M.c, V.c, n, &a);
        gpu->ops->adamw(gpu, Pm.g, Mst.g, G.g, M.g, V.g, n, &a);
        a.step++;
    }
    compare("adamw master (f32, 3 steps)", Mst, TOL_STATE);
    /* the multi-tensor form on the GPU: four ranges with their own weight
     * decay, one of them starting off 16-byte alignment (its scalar path),
     * against the CPU range by range */
    int64_t cut[5] = {0, 1000, 1003, n / 2, n};
    double wds[4] = {0.1, 0.0, 0.1, 0.05};
    exec_adamw_range r[4];
    for (int k = 0; k < 4; k++) {
        int64_t o = cut[k], len = cut[k + 1] - cut[k];
        r[k] = (exec_adamw_range){(char *)Pm.g + 2 * o, (char *)Mst.g + 4 * o,
                                  (char *)M.g + 4 * o, (char *)V.g + 4 * o,
                                  (const char *)G.g + 2 * o, len, wds[k]};
        exec_adamw ak = a;
        ak.weight_decay = wds[k];
        cpu->ops->adamw(cpu, (char *)Mst.c + 4 * o, NULL, (const char *)G.c + 4 * o,
                        (char *)M.c + 4 * o, (char *)V.c + 4 * o, len, &ak);
    }
    gpu->ops->adamw_multi(gpu, r, 4, &a);
    a.step++;
    compare("adamw_multi master (f32, 4 ranges)", Mst, TOL_STATE);
    compare("adamw m (f32)", M, TOL_STATE);
    compare("adamw v (f32)", V, TOL_STATE);
    /* the bf16 parameter is the master rounded */
    double *c = malloc((size_t)n * sizeof *c), *gg = malloc((size_t)n * sizeof *gg);
    cpu->ops->download_f64(cpu, c, Mst.c, n);
    gpu->ops->download_f64(gpu, gg, Pm.g, n);
    compare_arrays("adamw bf16 parameter = master", c, gg, n, TOL_ELEM);
    drop(Pm), drop(Mst), drop(G), drop(M), drop(V), drop(Wd);
    free(p), free(g), free(m), free(v), free(c), free(gg);
}

/* Initial weights drawn on the GPU against the host's draw of the same
 * elements (exec_init.h): a piece of a 300 x 1000 tensor at (17, 40), from
 * its 1234th element. Both draw in double from the same counter; the GPU's
 * log and cos (CUDA's double functions, within 2 ulp of the exact value)
 * may differ from the host's libm in the last bits, which survives the
 * rounding to bf16 (8 bits) only at a rounding boundary: at most a 2^-8
 * relative step on a few elements, none larger. */
static void test_init_fill(void)
{
    exec_init_fill f = {7, EXEC_INIT_NORMAL, 0.02, 0x5eedull, 17, 40, 900, 1000};
    int64_t k0 = 1234, n = 200000;
    checks++;
    st_err err = {0};
    void *g = exec_dev_alloc(gpu, (size_t)n * 2, EXEC_MEM_WORKSPACE, &err);
    double *got = malloc((size_t)n * sizeof *got);
    if (!g || !got) {
        fprintf(stderr, "test_gpu_kernels: %s\n", err.msg);
        exit(1);
    }
    gpu->ops->init_fill(gpu, g, &f, k0, n);
    gpu_ok("init_fill");
    gpu->ops->download_f64(gpu, got, g, n);
    int64_t same = 0, off = 0;
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        double want = bf16_round(exec_init_draw(f.kind, f.std, f.gid, exec_init_index(&f, k0 + k),
                                                f.seed));
        double rel = want != 0 ? fabs(got[k] - want) / fabs(want) : fabs(got[k]);
        same += got[k] == want;
        off += got[k] != want;
        worst = fmax(worst, rel);
    }
    int ok = worst <= 1.0 / 256 && off <= n / 1000;
    printf("%-4s %-30s %8lld elements  %lld identical, %lld one bf16 step apart at most (worst "
           "rel %.2e)\n",
           ok ? "ok" : "FAIL", "init_fill (the host's numbers)", (long long)n, (long long)same,
           (long long)off, worst);
    failures += !ok;
    exec_dev_free(gpu, g, (size_t)n * 2, EXEC_MEM_WORKSPACE);
    free(got);
}

int main(void)
{
    st_err err = {0};
    if (!exec_dev_find("cuda")) {
        printf("skipped: this build has no cuda device (built: %s)\n", exec_dev_names());
        return 77;
    }
    if (exec_dev_open("cuda", 1, &gpu, &err) != ST_OK) {
        printf("skipped: %s\n", err.msg);
        return 77;
    }
    if (exec_dev_open("cpu", 1, &cpu, &err) != ST_OK) {
        fprintf(stderr, "test_gpu_kernels: %s\n", err.msg);
        return 1;
    }
    test_matmul(200, 96, 160);
    test_matmul(1024, 768, 2304); /* a GPT-2 small layer's QKV */
    test_matmul(37, 24, 10);      /* odd shapes: unaligned rows */
    test_matmul_gelu(256, 96, 384); /* an MLP's up projection */
    test_matmul_gelu(1024, 768, 3072);
    test_matmul_gelu(37, 24, 12);   /* odd: the epilogue may have no algorithm (then apart) */
    test_embedding();
    /* C a multiple of 8: the 16-byte kernels; 100: the scalar ones */
    test_norm(0, 384);
    test_norm(1, 384);
    test_norm(0, 100);
    test_norm(1, 100);
    test_activations();
    test_rope();
    test_attention(64, 2, 4, 4, 16);
    test_attention(100, 3, 4, 2, 32);  /* GQA, T not a multiple of the 64-row tiles */
    test_attention(256, 2, 8, 2, 64);
    test_attention(130, 1, 2, 1, 128); /* the largest head size of the fused kernel */
    /* the sm90 forward's 128-row tiles: a sequence of three, the last
     * partial, with grouped-query heads, at both of its head sizes */
    test_attention(300, 2, 4, 2, 128);
    test_attention(257, 1, 4, 1, 64);
    printf("cuda device: %s\n", gpu->ops->describe(gpu));
    if (strstr(gpu->ops->describe(gpu), "fused attention sm90")) {
        /* the same comparisons through the sm_80 kernel, which GPUs before
         * Hopper run (SMDPLAN_CUDA_ATTENTION chooses it at the device's
         * opening) */
        exec_dev_close(gpu);
        setenv("SMDPLAN_CUDA_ATTENTION", "sm80", 1);
        if (exec_dev_open("cuda", 1, &gpu, &err) != ST_OK) {
            fprintf(stderr, "test_gpu_kernels: %s\n", err.msg);
            return 1;
        }
        unsetenv("SMDPLAN_CUDA_ATTENTION");
        printf("cuda device: %s\n", gpu->ops->describe(gpu));
        test_attention(256, 2, 8, 2, 64);
        test_attention(300, 2, 4, 2, 128);
    }
    test_cross_entropy();
    test_elementwise(1000000); /* the 16-byte kernels */
    test_elementwise(1000003); /* the scalar ones */
    test_adamw(300000);
    test_adamw(300007);
    test_init_fill();
    gpu_ok("the end");
    printf("%d of %d comparisons failed\n", failures, checks);
    exec_dev_close(cpu);
    exec_dev_close(gpu);
    return failures ? 1 : 0;
}
