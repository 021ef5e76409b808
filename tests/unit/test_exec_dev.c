/*
 * test_exec_dev.c: every operation of the CPU device table. Each backward
 * is checked against central finite differences of its forward in double
 * precision (the "cpu64" device: the same code as "cpu", compiled for
 * double): for a scalar L = sum(out * R) with R fixed random weights, dL/dx
 * from the backward must match (L(x + h) - L(x - h)) / 2h for every input
 * element, to 1e-6 relative. Then the fp32 device must agree with the fp64
 * one on the same inputs (it is the same code), and AdamW must match the
 * formula by hand. Results computed in another precision or summed in
 * another order are compared within their rounding-error bound, worked out
 * per element from the actual inputs (Higham's gamma_n, see gamma_n).
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "exec/exec_dev.h"

#define FD_H 1e-5
#define FD_TOL 1e-6

static exec_dev *dev64;

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double *rnd(int64_t n, double scale)
{
    double *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; i < n; i++)
        p[i] = urand() * scale;
    return p;
}

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* ---- rounding-error bounds ---- */

/* Unit roundoff of IEEE binary32 and binary64, round to nearest. */
#define U32 0x1p-24
#define U64 0x1p-53

/* gamma_n = n u / (1 - n u): a sum of n terms, or of n products, computed
 * in floating point with unit roundoff u in any order (any blocking, with
 * or without FMA) is within gamma_n sum |a_i b_i| of the exact sum
 * (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 2002,
 * Section 3.1); n roundings each of relative size u compound to at most
 * gamma_n (its Lemma 3.1). */
static double gamma_n(double n, double u)
{
    return n * u / (1 - n * u);
}

/* Largest |x - y| two fp32 GEMMs may differ by, per element of
 * C = A B^T (tb) or A^T B (ta) plus c0: each is within
 * gamma_{K+1} (sum_k |a_k b_k| + |c0|) of the exact value (c0 is added in
 * as a (K+1)-th term), whatever order its kernel sums in, so two of them
 * within twice that. A is M x K (or K x M with ta), B is N x K (or K x N),
 * row-major; c0 NULL for none. */
static void gemm_diff_bound(double *bound, int ta, int tb, const float *A, const float *B,
                            const double *c0, int64_t M, int64_t N, int64_t K)
{
    double g = 2 * gamma_n((double)K + 1, U32);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = c0 ? fabs(c0[i * N + j]) : 0;
            for (int64_t k = 0; k < K; k++)
                s += fabs((double)(ta ? A[k * M + i] : A[i * K + k])) *
                     fabs((double)(tb ? B[j * K + k] : B[k * N + j]));
            bound[i * N + j] = g * s;
        }
}

/* Largest |O_computed - O_exact| of causal attention's forward in a
 * precision of unit roundoff u, per output element, for inputs qkv
 * (T x B x 3 H hd, one kv head per query head, as attention_fwd takes
 * them) and P the softmax computed in double. Following the device's
 * steps for query row i of a head:
 *   S_ij = s q_i.k_j by GEMM (hd products, then the scale, itself
 *     rounded): |dS_ij| <= eta_ij = gamma_{hd+3} s sum_d |q_id k_jd|;
 *   x_j = S_ij - max_j S_ij, one rounding: with the above, the exponent
 *     is off by at most D_i = max_j (eta_ij + u (|S_ij - m_i| + 2 eta_i))
 *     (m_i, eta_i: the row's exact max and largest eta);
 *   exp, within 1 ulp (<= 2u relative; glibc's expf is within 0.502 ulp
 *     over every binary32 input, Gladman, Innocente, Mather and
 *     Zimmermann, Accuracy of Mathematical Functions, 2024); the row sum
 *     in double, 1 / sum rounded to the precision, the product rounded:
 *     P_ij comes out within a factor (1 + rho_i) of the exact softmax,
 *     rho_i = exp(2 D_i) (1 + 2u) / (1 - 2u) (1 + u)^2 (1 + gamma_{T+2}(U64)) - 1
 *     (a shift d_j of each exponent moves p_j / P_j by at most
 *     exp(2 max |d_j|));
 *   O_id = sum_j P_ij v_jd by GEMM over T terms:
 *     |dO_id| <= (rho_i + gamma_T (1 + rho_i)) sum_j P_ij |v_jd|. */
static void attn_fwd_bound(double *bound, const double *qkv, const double *P, int64_t T,
                           int64_t B, int64_t H, int64_t hd, double u)
{
    int64_t W = 3 * H * hd, ld = B * W, ldo = B * H * hd;
    double s = 1.0 / sqrt((double)hd), gs = gamma_n((double)hd + 3, u), gt = gamma_n((double)T, u);
    double *S = malloc((size_t)T * sizeof *S), *eta = malloc((size_t)T * sizeof *eta);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < T; i++) {
                const double *q = qkv + i * ld + b * W + h * hd;
                double m = -INFINITY, emax = 0, D = 0;
                for (int64_t j = 0; j <= i; j++) {
                    const double *k = qkv + j * ld + b * W + (H + h) * hd;
                    double dot_qk = 0, abs_qk = 0;
                    for (int64_t d = 0; d < hd; d++) {
                        dot_qk += q[d] * k[d];
                        abs_qk += fabs(q[d] * k[d]);
                    }
                    S[j] = s * dot_qk;
                    eta[j] = gs * s * abs_qk;
                    m = fmax(m, S[j]);
                    emax = fmax(emax, eta[j]);
                }
                for (int64_t j = 0; j <= i; j++)
                    D = fmax(D, eta[j] + u * (fabs(S[j] - m) + 2 * emax));
                double rho = exp(2 * D) * (1 + 2 * u) / (1 - 2 * u) * (1 + u) * (1 + u) *
                                 (1 + gamma_n((double)T + 2, U64)) -
                             1;
                const double *p = P + (b * H + h) * T * T + i * T;
                for (int64_t d = 0; d < hd; d++) {
                    double pv = 0;
                    for (int64_t j = 0; j <= i; j++)
                        pv += p[j] * fabs(qkv[j * ld + b * W + (2 * H + h) * hd + d]);
                    bound[i * ldo + b * H * hd + h * hd + d] = (rho + gt * (1 + rho)) * pv;
                }
            }
    free(S);
    free(eta);
}

/* A forward whose scalar loss the checks differentiate. */
typedef double (*loss_fn)(void *ctx);

/* Compare analytic[0..n) with finite differences of f over x[0..n). */
static void fd_check(const char *what, double *x, const double *analytic, int64_t n, loss_fn f,
                     void *ctx)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double keep = x[i];
        x[i] = keep + FD_H;
        double lp = f(ctx);
        x[i] = keep - FD_H;
        double lm = f(ctx);
        x[i] = keep;
        double num = (lp - lm) / (2 * FD_H);
        double den = fmax(fmax(fabs(num), fabs(analytic[i])), 1e-3);
        double rel = fabs(num - analytic[i]) / den;
        if (rel > worst)
            worst = rel;
        if (rel > FD_TOL) {
            print_error("%s[%ld]: backward %.12g, finite difference %.12g (rel %.3g)\n", what,
                        (long)i, analytic[i], num, rel);
            fail();
        }
    }
    print_message("%-24s %5ld elements, worst relative difference %.2e\n", what, (long)n, worst);
}

/* ---- matmul ---- */
typedef struct mm_ctx {
    int64_t n, C, OC;
    double *inp, *w, *b, *out, *R;
} mm_ctx;

static double mm_loss(void *p)
{
    mm_ctx *c = p;
    dev64->ops->matmul_fwd(dev64, c->out, c->inp, c->w, c->b, NULL, c->n, c->C, c->OC);
    return dot(c->out, c->R, c->n * c->OC);
}

static void test_matmul(void **state)
{
    mm_ctx c = {.n = 5, .C = 7, .OC = 3};
    c.inp = rnd(c.n * c.C, 1);
    c.w = rnd(c.OC * c.C, 1);
    c.b = rnd(c.OC, 1);
    c.out = calloc(c.n * c.OC, sizeof(double));
    c.R = rnd(c.n * c.OC, 1);
    double *dinp = rnd(c.n * c.C, 1), *dw = calloc(c.OC * c.C, 8), *db = calloc(c.OC, 8);
    const exec_dev_ops *o = dev64->ops;
    o->matmul_bwd_input(dev64, dinp, c.R, c.w, c.n, c.C, c.OC, 0);
    o->matmul_bwd_weight(dev64, dw, db, c.R, c.inp, c.n, c.C, c.OC);
    fd_check("matmul dinp", c.inp, dinp, c.n * c.C, mm_loss, &c);
    fd_check("matmul dw", c.w, dw, c.OC * c.C, mm_loss, &c);
    fd_check("matmul dbias", c.b, db, c.OC, mm_loss, &c);
    /* accumulate: a second call adds the same again */
    double *dinp2 = malloc(c.n * c.C * 8);
    memcpy(dinp2, dinp, c.n * c.C * 8);
    o->matmul_bwd_input(dev64, dinp2, c.R, c.w, c.n, c.C, c.OC, 1);
    for (int64_t i = 0; i < c.n * c.C; i++)
        assert_rel(dinp2[i], 2 * dinp[i], 1e-12);
    free(c.inp), free(c.w), free(c.b), free(c.out), free(c.R), free(dinp), free(dw), free(db);
    free(dinp2);
}

/* ---- norms ---- */
typedef struct norm_ctx {
    int64_t n, C;
    int rms;
    double *inp, *w, *b, *out, *mean, *rstd, *R;
} norm_ctx;

static double norm_loss(void *p)
{
    norm_ctx *c = p;
    dev64->ops->norm_fwd(dev64, c->out, c->rms ? NULL : c->mean, c->rstd, c->inp, c->w,
                         c->rms ? NULL : c->b, c->n, c->C, c->rms);
    return dot(c->out, c->R, c->n * c->C);
}

static void norm_case(int rms)
{
    norm_ctx c = {.n = 4, .C = 9, .rms = rms};
    c.inp = rnd(c.n * c.C, 2);
    c.w = rnd(c.C, 1);
    c.b = rnd(c.C, 1);
    c.out = calloc(c.n * c.C, 8);
    c.mean = calloc(c.n, 8);
    c.rstd = calloc(c.n, 8);
    c.R = rnd(c.n * c.C, 1);
    norm_loss(&c);
    double *dinp = calloc(c.n * c.C, 8), *dw = calloc(c.C, 8), *db = calloc(c.C, 8);
    const exec_dev_ops *o = dev64->ops;
    o->norm_bwd_input(dev64, dinp, c.R, c.inp, c.w, rms ? NULL : c.mean, c.rstd, c.n, c.C, rms, 1);
    o->norm_bwd_weight(dev64, dw, rms ? NULL : db, c.R, c.inp, rms ? NULL : c.mean, c.rstd, c.n,
                       c.C, rms);
    fd_check(rms ? "rmsnorm dinp" : "layernorm dinp", c.inp, dinp, c.n * c.C, norm_loss, &c);
    fd_check(rms ? "rmsnorm dw" : "layernorm dw", c.w, dw, c.C, norm_loss, &c);
    if (!rms)
        fd_check("layernorm db", c.b, db, c.C, norm_loss, &c);
    free(c.inp), free(c.w), free(c.b), free(c.out), free(c.mean), free(c.rstd), free(c.R);
    free(dinp), free(dw), free(db);
}

static void test_norms(void **state)
{
    norm_case(0);
    norm_case(1);
}

/* ---- activations ---- */
typedef struct act_ctx {
    int64_t n, F;
    int swiglu;
    double *inp, *out, *R;
} act_ctx;

static double act_loss(void *p)
{
    act_ctx *c = p;
    if (c->swiglu)
        dev64->ops->swiglu_fwd(dev64, c->out, c->inp, c->n, c->F);
    else
        dev64->ops->gelu_fwd(dev64, c->out, c->inp, c->n * c->F);
    return dot(c->out, c->R, c->n * c->F);
}

static void test_activations(void **state)
{
    for (int sw = 0; sw < 2; sw++) {
        act_ctx c = {.n = 3, .F = 8, .swiglu = sw};
        int64_t nin = c.n * c.F * (sw ? 2 : 1);
        c.inp = rnd(nin, 3);
        c.out = calloc(c.n * c.F, 8);
        c.R = rnd(c.n * c.F, 1);
        double *dinp = calloc(nin, 8);
        if (sw)
            dev64->ops->swiglu_bwd(dev64, dinp, c.inp, c.R, c.n, c.F);
        else
            dev64->ops->gelu_bwd(dev64, dinp, c.inp, c.R, c.n * c.F);
        fd_check(sw ? "swiglu dinp" : "gelu dinp", c.inp, dinp, nin, act_loss, &c);
        free(c.inp), free(c.out), free(c.R), free(dinp);
    }
    /* GELU's tanh form at known points: gelu(1) = 0.8411919906 */
    double x = 1, y = 0;
    dev64->ops->gelu_fwd(dev64, &y, &x, 1);
    assert_rel(y, 0.8411919906082768, 1e-12);
}

/* ---- embedding and positions ---- */
typedef struct emb_ctx {
    int64_t T, B, C, v0, vn;
    int32_t *tok;
    double *wte, *wpe, *out, *R;
} emb_ctx;

static double emb_loss(void *p)
{
    emb_ctx *c = p;
    dev64->ops->embed_fwd(dev64, c->out, c->tok, c->wte, c->T * c->B, c->C, c->v0, c->vn);
    dev64->ops->pos_fwd(dev64, c->out, c->wpe, c->T, c->B, c->C, 1);
    return dot(c->out, c->R, c->T * c->B * c->C);
}

static void test_embedding(void **state)
{
    emb_ctx c = {.T = 4, .B = 2, .C = 5, .v0 = 3, .vn = 6};
    int32_t tok[8] = {3, 8, 4, 0, 3, 9, 5, 8}; /* 0 and 9 outside [3, 9) */
    c.tok = tok;
    c.wte = rnd(c.vn * c.C, 1);
    c.wpe = rnd((c.T + 1) * c.C, 1);
    c.out = calloc(c.T * c.B * c.C, 8);
    c.R = rnd(c.T * c.B * c.C, 1);
    double *dwte = calloc(c.vn * c.C, 8), *dwpe = calloc((c.T + 1) * c.C, 8);
    dev64->ops->embed_bwd(dev64, dwte, c.R, tok, c.T * c.B, c.C, c.v0, c.vn);
    dev64->ops->pos_bwd(dev64, dwpe, c.R, c.T, c.B, c.C, 1);
    fd_check("embedding dwte", c.wte, dwte, c.vn * c.C, emb_loss, &c);
    fd_check("positions dwpe", c.wpe, dwpe, (c.T + 1) * c.C, emb_loss, &c);
    emb_loss(&c);
    /* a token outside this rank's vocabulary rows gives zeros (+ position) */
    assert_rel(c.out[3 * c.C + 2], c.wpe[(1 + 1) * c.C + 2], 1e-15);
    free(c.wte), free(c.wpe), free(c.out), free(c.R), free(dwte), free(dwpe);
}

/* ---- attention (with RoPE on queries and keys) ---- */
typedef struct attn_ctx {
    int64_t T, B, Hq, Hkv, hd;
    int rope;
    double *qkv, *work, *out, *probs, *R;
} attn_ctx;

static double attn_loss(void *p)
{
    attn_ctx *c = p;
    int64_t W = (c->Hq + 2 * c->Hkv) * c->hd, rows = c->T * c->B;
    memcpy(c->work, c->qkv, (size_t)(rows * W) * 8);
    if (c->rope)
        dev64->ops->rope_fwd(dev64, c->work, c->T, c->B, c->Hq + c->Hkv, c->hd, W, 10000.0);
    dev64->ops->attention_fwd(dev64, c->out, c->probs, c->work, c->T, c->B, c->Hq, c->Hkv, c->hd);
    return dot(c->out, c->R, rows * c->Hq * c->hd);
}

static void attn_case(int64_t Hq, int64_t Hkv, int rope)
{
    attn_ctx c = {.T = 5, .B = 2, .Hq = Hq, .Hkv = Hkv, .hd = 4, .rope = rope};
    int64_t W = (Hq + 2 * Hkv) * c.hd, rows = c.T * c.B;
    c.qkv = rnd(rows * W, 1);
    c.work = calloc(rows * W, 8);
    c.out = calloc(rows * Hq * c.hd, 8);
    c.probs = calloc(c.B * Hq * c.T * c.T, 8);
    c.R = rnd(rows * Hq * c.hd, 1);
    attn_loss(&c);
    double *dqkv = calloc(rows * W, 8), *dP = calloc(c.B * Hq * c.T * c.T, 8);
    dev64->ops->attention_bwd(dev64, dqkv, dP, c.R, c.work, c.probs, c.T, c.B, Hq, Hkv, c.hd);
    if (rope)
        dev64->ops->rope_bwd(dev64, dqkv, c.T, c.B, Hq + Hkv, c.hd, W, 10000.0);
    char what[64];
    snprintf(what, sizeof what, "attention%s dqkv %ld/%ld", rope ? "+rope" : "", (long)Hq,
             (long)Hkv);
    fd_check(what, c.qkv, dqkv, rows * W, attn_loss, &c);
    /* causal: rows of probs sum to one and nothing looks ahead */
    attn_loss(&c);
    for (int64_t i = 0; i < c.T; i++) {
        double s = 0;
        for (int64_t j = 0; j < c.T; j++)
            s += c.probs[i * c.T + j];
        assert_rel(s, 1.0, 1e-12);
        assert_true(i == c.T - 1 || c.probs[i * c.T + c.T - 1] == 0);
    }
    free(c.qkv), free(c.work), free(c.out), free(c.probs), free(c.R), free(dqkv), free(dP);
}

static void test_attention(void **state)
{
    attn_case(2, 2, 0); /* multi-head */
    attn_case(4, 2, 0); /* grouped-query: two query heads per kv head */
    attn_case(4, 1, 1); /* multi-query with rotary positions */
}

/* ---- vocab-parallel cross-entropy over two vocabulary shards ---- */
typedef struct ce_ctx {
    int64_t n, V;
    int32_t *tgt;
    double *logits, *work, *losses;
} ce_ctx;

/* The loss as two TP ranks compute it, with the all-reduces done by hand. */
static double ce_run(ce_ctx *c, double scale, double *dlogits)
{
    const exec_dev_ops *o = dev64->ops;
    int64_t n = c->n, h = c->V / 2;
    double mx[2][8], st[2][16], shard[2][64];
    for (int r = 0; r < 2; r++) {
        for (int64_t i = 0; i < n; i++)
            memcpy(shard[r] + i * h, c->logits + i * c->V + r * h, (size_t)h * 8);
        o->ce_rowmax(dev64, mx[r], shard[r], n, h);
    }
    for (int64_t i = 0; i < n; i++)
        mx[0][i] = mx[1][i] = fmax(mx[0][i], mx[1][i]);
    for (int r = 0; r < 2; r++)
        o->ce_stats(dev64, st[r], shard[r], mx[r], c->tgt, n, h, r * h);
    for (int64_t i = 0; i < 2 * n; i++)
        st[0][i] = st[1][i] = st[0][i] + st[1][i];
    double total = 0;
    for (int r = 0; r < 2; r++) {
        o->ce_loss_bwd(dev64, c->losses, shard[r], mx[r], st[r], c->tgt, n, h, r * h, scale);
        if (dlogits)
            for (int64_t i = 0; i < n; i++)
                memcpy(dlogits + i * c->V + r * h, shard[r] + i * h, (size_t)h * 8);
    }
    for (int64_t i = 0; i < n; i++)
        total += c->losses[i];
    return total * scale;
}

static double ce_loss(void *p)
{
    return ce_run(p, 0.25, NULL);
}

static void test_cross_entropy(void **state)
{
    int32_t tgt[4] = {0, 7, 3, 4};
    ce_ctx c = {.n = 4, .V = 8, .tgt = tgt};
    c.logits = rnd(c.n * c.V, 3);
    c.losses = calloc(c.n, 8);
    double *d = calloc(c.n * c.V, 8);
    ce_run(&c, 0.25, d);
    fd_check("cross-entropy dlogits", c.logits, d, c.n * c.V, ce_loss, &c);
    /* the loss of row 0 by the formula: logsumexp - logit of the target */
    double s = 0;
    for (int j = 0; j < 8; j++)
        s += exp(c.logits[j]);
    ce_run(&c, 1.0, NULL);
    assert_rel(c.losses[0], log(s) - c.logits[0], 1e-12);
    free(c.logits), free(c.losses), free(d);
}

/* ---- fp32 agrees with fp64; AdamW by hand ---- */
static void test_f32_and_adamw(void **state)
{
    exec_dev *d32 = NULL;
    st_err err = {0};
    assert_int_equal(exec_dev_open("cpu", 1, &d32, &err), ST_OK);
    assert_int_equal(d32->elem_bytes, 4);
    int64_t T = 6, B = 1, H = 2, hd = 8, W = 3 * H * hd;
    double *qkv = rnd(T * B * W, 1);
    for (int64_t i = 0; i < T * B * W; i++) /* both devices get the same (fp32) inputs */
        qkv[i] = (float)qkv[i];
    float *q32 = malloc(T * B * W * 4), *o32 = malloc(T * B * H * hd * 4),
          *p32 = malloc(B * H * T * T * 4);
    double *o64 = malloc(T * B * H * hd * 8), *p64 = malloc(B * H * T * T * 8);
    double *b32 = malloc(T * B * H * hd * 8), *b64 = malloc(T * B * H * hd * 8);
    d32->ops->upload_f64(d32, q32, qkv, T * B * W);
    d32->ops->attention_fwd(d32, o32, p32, q32, T, B, H, H, hd);
    dev64->ops->attention_fwd(dev64, o64, p64, qkv, T, B, H, H, hd);
    /* each within its precision's bound of the exact attention */
    attn_fwd_bound(b32, qkv, p64, T, B, H, hd, U32);
    attn_fwd_bound(b64, qkv, p64, T, B, H, hd, U64);
    double worst = 0;
    for (int64_t i = 0; i < T * B * H * hd; i++) {
        double diff = fabs(o32[i] - o64[i]), bound = b32[i] + b64[i];
        worst = fmax(worst, diff / bound);
        if (!(diff <= bound)) {
            print_error("attention out[%ld]: fp32 %.9g, fp64 %.17g, differ by %.3g > bound %.3g\n",
                        (long)i, o32[i], o64[i], diff, bound);
            fail();
        }
    }
    print_message("attention fp32 against fp64: worst %.2f of the rounding bound\n", worst);
    assert_true(d32->flops > 0);

    /* one AdamW step from m = v = 0 at step 1 moves each weight by about lr
     * against its gradient's sign, and decays it */
    double p[3] = {1.0, -2.0, 0.5}, g[3] = {0.1, -0.3, 0.0}, m[3] = {0}, v[3] = {0};
    exec_adamw a = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1,
                    .grad_scale = 2.0, .step = 1};
    dev64->ops->adamw(dev64, p, NULL, g, m, v, 3, &a);
    for (int i = 0; i < 3; i++) {
        double gi = g[i] * 2.0, p0 = i == 0 ? 1.0 : i == 1 ? -2.0 : 0.5;
        double mh = 0.1 * gi / 0.1, vh = 0.05 * gi * gi / 0.05;
        double want = p0 - 0.01 * (mh / (sqrt(vh) + 1e-8) + 0.1 * p0);
        assert_rel(p[i], want, 1e-12);
        assert_rel(m[i], 0.1 * gi, 1e-12);
    }
    free(qkv), free(q32), free(o32), free(p32), free(o64), free(p64), free(b32), free(b64);
    exec_dev_close(d32);
}

/* The device's own loops give the same bits on any number of threads:
 * elementwise ops split elements, row ops rows, column sums columns, sums
 * fixed blocks. */
static void test_threads(void **state)
{
    st_err err = {0};
    exec_dev *d[2] = {NULL, NULL};
    assert_int_equal(exec_dev_open("cpu", 1, &d[0], &err), ST_OK);
    assert_int_equal(exec_dev_open("cpu", 3, &d[1], &err), ST_OK);
    int64_t n = 300, C = 97, F = 77, V = 131, N = n * C;
    double *src = rnd(4 * N + 200000, 2);
    float *in[2], *out[2][8];
    int32_t tok[300];
    for (int i = 0; i < 300; i++)
        tok[i] = (int32_t)((i * 37) % 140);
    for (int k = 0; k < 2; k++) {
        in[k] = malloc((size_t)(4 * N + 200000) * 4);
        d[k]->ops->upload_f64(d[k], in[k], src, 4 * N + 200000);
        for (int j = 0; j < 8; j++)
            out[k][j] = calloc((size_t)(2 * N + 200000), 4);
    }
    double sq[2];
    for (int k = 0; k < 2; k++) { /* m and v of AdamW start at zero: out[5], out[6] + 2N */
        const exec_dev_ops *o = d[k]->ops;
        float *x = in[k], *w = in[k] + N, *g = in[k] + 2 * N;
        o->norm_fwd(d[k], out[k][0], out[k][1], out[k][2], x, w, w + C, n, C, 0);
        o->norm_bwd_input(d[k], out[k][3], g, x, w, out[k][1], out[k][2], n, C, 0, 0);
        o->norm_bwd_weight(d[k], out[k][4], out[k][4] + C, g, x, out[k][1], out[k][2], n, C, 0);
        o->gelu_bwd(d[k], out[k][5], x, g, N);
        o->swiglu_bwd(d[k], out[k][6], x, g, n, F);
        memcpy(out[k][7], x, (size_t)(n * V) * 4);
        o->ce_rowmax(d[k], out[k][1], out[k][7], n, V);
        o->ce_stats(d[k], out[k][2], out[k][7], out[k][1], tok, n, V, 10);
        o->ce_loss_bwd(d[k], out[k][0] + N, out[k][7], out[k][1], out[k][2], tok, n, V, 10, 0.5);
        o->embed_bwd(d[k], out[k][4] + 2 * C, g, tok, n, C, 3, 100);
        o->adamw(d[k], x + 3 * N, NULL, g, out[k][5] + 2 * N, out[k][6] + 2 * N, N,
                 &(exec_adamw){.lr = 0.1, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8,
                               .weight_decay = 0.1, .grad_scale = 0.7, .step = 3});
        sq[k] = o->sumsq(d[k], in[k], 4 * N + 200000);
    }
    for (int j = 0; j < 8; j++)
        assert_memory_equal(out[0][j], out[1][j], (size_t)(2 * N + 200000) * 4);
    /* Matrix products split by rows over the threads: a block of rows is
     * its own BLAS call, and a kernel may sum a row's products in another
     * order for another number of rows (OpenBLAS's Haswell and Zen kernels
     * do for dW = dout^T x), so the two agree within the rounding bound of
     * a sum of n products. Attention runs one task per (sequence, kv head),
     * and a task makes the same BLAS calls on the same operands whatever
     * the number of threads: the same bits. */
    int64_t T = 64, B = 3, Hq = 4, Hkv = 2, hd = 16, W = (Hq + 2 * Hkv) * hd;
    double *dw0 = malloc((size_t)(77 * 97) * sizeof *dw0); /* dW accumulates onto this */
    for (int64_t i = 0; i < 77 * 97; i++)
        dw0[i] = out[0][1][i];
    for (int k = 0; k < 2; k++) {
        const exec_dev_ops *o = d[k]->ops;
        float *x = in[k], *w = in[k] + N, *g = in[k] + 2 * N;
        o->matmul_fwd(d[k], out[k][0], x, w, NULL, NULL, 300, 97, 77);
        o->matmul_bwd_weight(d[k], out[k][1], NULL, g, x, 300, 97, 77);
        o->attention_fwd(d[k], out[k][2], out[k][3], x, T, B, Hq, Hkv, hd);
        o->attention_bwd(d[k], out[k][4], out[k][5], g, x, out[k][3], T, B, Hq, Hkv, hd);
    }
    double *bound[2] = {malloc((size_t)(300 * 77) * sizeof(double)),
                        malloc((size_t)(77 * 97) * sizeof(double))};
    gemm_diff_bound(bound[0], 0, 1, in[0], in[0] + N, NULL, 300, 77, 97); /* x w^T */
    gemm_diff_bound(bound[1], 1, 0, in[0] + 2 * N, in[0], dw0, 77, 97, 300); /* dout^T x */
    int64_t sizes[6] = {300 * 77, 77 * 97, T * B * Hq * hd, B * Hq * T * T, T * B * W,
                        B * Hq * T * T};
    for (int j = 0; j < 2; j++) {
        double worst = 0;
        for (int64_t i = 0; i < sizes[j]; i++) {
            double diff = fabs((double)out[0][j][i] - (double)out[1][j][i]);
            worst = fmax(worst, diff / bound[j][i]);
            if (!(diff <= bound[j][i])) {
                print_error("%s[%ld]: %.9g on 1 thread, %.9g on 3, differ by %.3g > bound %.3g\n",
                            j ? "matmul dW" : "matmul out", (long)i, out[0][j][i], out[1][j][i],
                            diff, bound[j][i]);
                fail();
            }
        }
        print_message("%s on 1 and 3 threads: worst %.2g of the rounding bound\n",
                      j ? "matmul dW" : "matmul out", worst);
    }
    for (int j = 2; j < 6; j++)
        assert_memory_equal(out[0][j], out[1][j], (size_t)sizes[j] * 4);
    free(dw0), free(bound[0]), free(bound[1]);
    assert_memory_equal(in[0], in[1], (size_t)(4 * N + 200000) * 4);
    if (sq[0] != sq[1])
        print_error("sumsq %.17g and %.17g\n", sq[0], sq[1]);
    assert_true(isfinite(sq[0]) && sq[0] == sq[1]);
    for (int k = 0; k < 2; k++) {
        free(in[k]);
        for (int j = 0; j < 8; j++)
            free(out[k][j]);
        exec_dev_close(d[k]);
    }
    free(src);
}

/* Memory accounting by class, and an unknown device. */
static void test_accounting(void **state)
{
    st_err err = {0};
    exec_dev *d = NULL;
    assert_int_equal(exec_dev_open("gpu9000", 1, &d, &err), ST_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "cpu"));
    assert_int_equal(exec_dev_open("cpu", 1, &d, &err), ST_OK);
    void *a = exec_dev_alloc(d, 1000, EXEC_MEM_PARAMS, &err);
    void *b = exec_dev_alloc(d, 500, EXEC_MEM_ACTIVATIONS, &err);
    exec_dev_free(d, b, 500, EXEC_MEM_ACTIVATIONS);
    void *c = exec_dev_alloc(d, 200, EXEC_MEM_ACTIVATIONS, &err);
    assert_rel(d->mem.peak_total_bytes, 1500, 0);
    assert_rel(d->mem.cur_total_bytes, 1200, 0);
    assert_rel(d->mem.peak_class_bytes[EXEC_MEM_ACTIVATIONS], 500, 0);
    exec_dev_free(d, a, 1000, EXEC_MEM_PARAMS);
    exec_dev_free(d, c, 200, EXEC_MEM_ACTIVATIONS);
    assert_rel(d->mem.cur_total_bytes, 0, 0);
    exec_dev_close(d);
}

static int setup(void **state)
{
    st_err err = {0};
    return exec_dev_open("cpu64", 1, &dev64, &err);
}

/* x rounded to bf16 (nearest even), as a float. */
static float bf16_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* "cpu-bf16" is "cpu" followed by the rounding of what each op stores:
 * bit for bit on a product, a norm, an activation and AdamW (whose
 * parameter is its fp32 master rounded, the master and moments fp32). */
static void test_cpu_bf16(void **state)
{
    st_err err = {0};
    exec_dev *f = NULL, *b = NULL;
    assert_int_equal(exec_dev_open("cpu", 1, &f, &err), ST_OK);
    assert_int_equal(exec_dev_open("cpu-bf16", 1, &b, &err), ST_OK);
    assert_true(b->ops->has_master);
    int64_t n = 37, C = 48, OC = 40;
    double *x = rnd(n * C, 1), *w = rnd(OC * C, 0.3), *bias = rnd(OC, 0.1);
    float *xf = malloc(n * C * 4), *wf = malloc(OC * C * 4), *bf = malloc(OC * 4);
    float *yf = malloc(n * OC * 4), *yb = malloc(n * OC * 4);
    /* the same bf16 inputs on both */
    b->ops->upload_f64(b, xf, x, n * C);
    b->ops->upload_f64(b, wf, w, OC * C);
    b->ops->upload_f64(b, bf, bias, OC);
    for (int64_t i = 0; i < n * C; i++)
        assert_true(xf[i] == bf16_of(xf[i]));
    f->ops->matmul_fwd(f, yf, xf, wf, bf, NULL, n, C, OC);
    b->ops->matmul_fwd(b, yb, xf, wf, bf, NULL, n, C, OC);
    for (int64_t i = 0; i < n * OC; i++)
        assert_true(yb[i] == bf16_of(yf[i]));
    /* a residual added in the product: on "cpu" the product then the add
     * (fp32, the same sums as two passes), on "cpu-bf16" rounded once */
    float *res = malloc(n * OC * 4), *rf = malloc(n * OC * 4), *rb = malloc(n * OC * 4);
    for (int64_t i = 0; i < n * OC; i++)
        res[i] = bf16_of(0.25f * (float)((i * 7919) % 13) - 1.5f);
    f->ops->matmul_fwd(f, rf, xf, wf, bf, res, n, C, OC);
    b->ops->matmul_fwd(b, rb, xf, wf, bf, res, n, C, OC);
    for (int64_t i = 0; i < n * OC; i++) {
        assert_true(rf[i] == yf[i] + res[i]);
        assert_true(rb[i] == bf16_of(yf[i] + res[i]));
    }
    free(res), free(rf), free(rb);
    f->ops->gelu_fwd(f, yf, xf, n * C < n * OC ? n * C : n * OC);
    b->ops->gelu_fwd(b, yb, xf, n * C < n * OC ? n * C : n * OC);
    for (int64_t i = 0; i < (n * C < n * OC ? n * C : n * OC); i++)
        assert_true(yb[i] == bf16_of(yf[i]));
    float *mean = malloc(n * 4), *rstd = malloc(n * 4), *lw = malloc(C * 4), *lb = malloc(C * 4);
    float *nf = malloc(n * C * 4), *nb = malloc(n * C * 4);
    for (int64_t i = 0; i < C; i++)
        lw[i] = 1.0f, lb[i] = 0.0f;
    f->ops->norm_fwd(f, nf, mean, rstd, xf, lw, lb, n, C, 0);
    b->ops->norm_fwd(b, nb, mean, rstd, xf, lw, lb, n, C, 0);
    for (int64_t i = 0; i < n * C; i++)
        assert_true(nb[i] == bf16_of(nf[i]));
    /* AdamW: the "cpu" op on the master, the parameter rounded from it */
    float p[4], mst[4], mstf[4], g[4], m[4] = {0}, v[4] = {0}, m2[4] = {0}, v2[4] = {0};
    for (int i = 0; i < 4; i++) {
        mst[i] = mstf[i] = 0.3f * (float)(i + 1) + 1e-3f;
        p[i] = bf16_of(mst[i]);
        g[i] = bf16_of(0.05f * (float)(i - 2));
    }
    exec_adamw a = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1,
                    .grad_scale = 1.0, .step = 1};
    b->ops->adamw(b, p, mst, g, m, v, 4, &a);
    f->ops->adamw(f, mstf, NULL, g, m2, v2, 4, &a);
    for (int i = 0; i < 4; i++) {
        assert_true(mst[i] == mstf[i] && m[i] == m2[i] && v[i] == v2[i]);
        assert_true(p[i] == bf16_of(mstf[i]));
    }
    free(x), free(w), free(bias), free(xf), free(wf), free(bf), free(yf), free(yb);
    free(mean), free(rstd), free(lw), free(lb), free(nf), free(nb);
    exec_dev_close(f);
    exec_dev_close(b);
}

static int teardown(void **state)
{
    exec_dev_close(dev64);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul),       cmocka_unit_test(test_norms),
        cmocka_unit_test(test_activations),  cmocka_unit_test(test_embedding),
        cmocka_unit_test(test_attention),    cmocka_unit_test(test_cross_entropy),
        cmocka_unit_test(test_f32_and_adamw), cmocka_unit_test(test_threads),
        cmocka_unit_test(test_accounting),   cmocka_unit_test(test_cpu_bf16),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
