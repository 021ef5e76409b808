/*
 * exec_dev_cpu_impl.h: the CPU device's operations, written once over a
 * real type and included twice by exec_dev_cpu.c: REAL = float (the "cpu"
 * device, sgemm) and REAL = double ("cpu64", dgemm, for the finite-
 * difference checks of every backward). Not a header to include elsewhere.
 *
 * Before including: REAL, SFX (name suffix), GEMM (cblas_sgemm or
 * cblas_dgemm), CPU_NAME, CPU_DTYPE and CPU_TABLE (the table's name). Math goes through <tgmath.h>, so exp() of a float is
 * expf(). Sums over a row accumulate in double either way.
 *
 * The ops follow llm.c's CPU reference (train_gpt2.c): one loop nest per
 * op, forward and backward side by side; matrix products, including the
 * attention scores and values per (sequence, head), go to BLAS.
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* ---- embedding ---- */

static void FN(embed_fwd)(exec_dev *d, void *out_, const int32_t *tok, const void *wte_,
                          int64_t n, int64_t C, int64_t v0, int64_t vn)
{
    REAL *out = out_;
    const REAL *wte = wte_;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = (int64_t)tok[i] - v0;
        if (t >= 0 && t < vn)
            memcpy(out + i * C, wte + t * C, (size_t)C * sizeof(REAL));
        else
            memset(out + i * C, 0, (size_t)C * sizeof(REAL));
    }
}

static void FN(embed_bwd)(exec_dev *d, void *dwte_, const void *dout_, const int32_t *tok,
                          int64_t n, int64_t C, int64_t v0, int64_t vn)
{
    REAL *dwte = dwte_;
    const REAL *dout = dout_;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = (int64_t)tok[i] - v0;
        if (t < 0 || t >= vn)
            continue;
        REAL *row = dwte + t * C;
        const REAL *g = dout + i * C;
        for (int64_t c = 0; c < C; c++)
            row[c] += g[c];
    }
}

static void FN(pos_fwd)(exec_dev *d, void *x_, const void *wpe_, int64_t T, int64_t B,
                        int64_t C, int64_t t0)
{
    REAL *x = x_;
    const REAL *wpe = wpe_;
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            REAL *row = x + (t * B + b) * C;
            const REAL *p = wpe + (t0 + t) * C;
            for (int64_t c = 0; c < C; c++)
                row[c] += p[c];
        }
}

static void FN(pos_bwd)(exec_dev *d, void *dwpe_, const void *dout_, int64_t T, int64_t B,
                        int64_t C, int64_t t0)
{
    REAL *dwpe = dwpe_;
    const REAL *dout = dout_;
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            REAL *p = dwpe + (t0 + t) * C;
            const REAL *g = dout + (t * B + b) * C;
            for (int64_t c = 0; c < C; c++)
                p[c] += g[c];
        }
}

/* ---- norms ---- */

static void FN(norm_fwd)(exec_dev *d, void *out_, void *mean_, void *rstd_, const void *inp_,
                         const void *w_, const void *b_, int64_t n, int64_t C, int rms)
{
    REAL *out = out_, *mean = mean_, *rstd = rstd_;
    const REAL *inp = inp_, *w = w_, *b = b_;
    for (int64_t i = 0; i < n; i++) {
        const REAL *x = inp + i * C;
        double m = 0, v = 0;
        if (!rms) {
            for (int64_t c = 0; c < C; c++)
                m += x[c];
            m /= (double)C;
        }
        for (int64_t c = 0; c < C; c++)
            v += ((double)x[c] - m) * ((double)x[c] - m);
        double s = 1.0 / sqrt(v / (double)C + EXEC_NORM_EPS);
        REAL *o = out + i * C;
        for (int64_t c = 0; c < C; c++) {
            REAL xh = (REAL)(((double)x[c] - m) * s);
            o[c] = b ? xh * w[c] + b[c] : xh * w[c];
        }
        if (mean)
            mean[i] = (REAL)m;
        rstd[i] = (REAL)s;
    }
}

/* LayerNorm's input gradient (llm.c layernorm_backward):
 * dx = rstd (dn - mean(dn) - xhat mean(dn xhat)), dn = dout w; RMSNorm's is
 * the same without the mean term. */
static void FN(norm_bwd_input)(exec_dev *d, void *dinp_, const void *dout_, const void *inp_,
                               const void *w_, const void *mean_, const void *rstd_, int64_t n,
                               int64_t C, int rms, int accumulate)
{
    REAL *dinp = dinp_;
    const REAL *dout = dout_, *inp = inp_, *w = w_, *mean = mean_, *rstd = rstd_;
    for (int64_t i = 0; i < n; i++) {
        const REAL *g = dout + i * C, *x = inp + i * C;
        double m = rms ? 0.0 : (double)mean[i], s = (double)rstd[i];
        double dn_mean = 0, dn_xh = 0;
        for (int64_t c = 0; c < C; c++) {
            double dn = (double)g[c] * (double)w[c];
            dn_mean += dn;
            dn_xh += dn * ((double)x[c] - m) * s;
        }
        dn_mean /= (double)C;
        dn_xh /= (double)C;
        if (rms)
            dn_mean = 0;
        REAL *dx = dinp + i * C;
        for (int64_t c = 0; c < C; c++) {
            double xh = ((double)x[c] - m) * s;
            double v = s * ((double)g[c] * (double)w[c] - dn_mean - xh * dn_xh);
            dx[c] = accumulate ? dx[c] + (REAL)v : (REAL)v;
        }
    }
}

static void FN(norm_bwd_weight)(exec_dev *d, void *dw_, void *db_, const void *dout_,
                                const void *inp_, const void *mean_, const void *rstd_,
                                int64_t n, int64_t C, int rms)
{
    REAL *dw = dw_, *db = db_;
    const REAL *dout = dout_, *inp = inp_, *mean = mean_, *rstd = rstd_;
    for (int64_t i = 0; i < n; i++) {
        const REAL *g = dout + i * C, *x = inp + i * C;
        REAL m = rms ? (REAL)0 : mean[i], s = rstd[i];
        for (int64_t c = 0; c < C; c++) {
            dw[c] += g[c] * ((x[c] - m) * s);
            if (db)
                db[c] += g[c];
        }
    }
}

/* ---- linear ---- */

static void FN(matmul_fwd)(exec_dev *d, void *out_, const void *inp_, const void *w_,
                           const void *bias_, int64_t n, int64_t C, int64_t OC)
{
    REAL *out = out_;
    const REAL *inp = inp_, *w = w_, *bias = bias_;
    if (bias)
        for (int64_t i = 0; i < n; i++)
            memcpy(out + i * OC, bias, (size_t)OC * sizeof(REAL));
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)OC, (int)C, 1, inp, (int)C, w,
         (int)C, bias ? 1 : 0, out, (int)OC);
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

static void FN(matmul_bwd_input)(exec_dev *d, void *dinp, const void *dout, const void *w,
                                 int64_t n, int64_t C, int64_t OC, int accumulate)
{
    GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)C, (int)OC, 1, dout, (int)OC,
         w, (int)C, accumulate ? 1 : 0, dinp, (int)C);
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

static void FN(matmul_bwd_weight)(exec_dev *d, void *dw, void *dbias_, const void *dout_,
                                  const void *inp, int64_t n, int64_t C, int64_t OC)
{
    GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)OC, (int)C, (int)n, 1, dout_, (int)OC,
         inp, (int)C, 1, dw, (int)C);
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
    if (dbias_) {
        REAL *dbias = dbias_;
        const REAL *dout = dout_;
        for (int64_t i = 0; i < n; i++)
            for (int64_t o = 0; o < OC; o++)
                dbias[o] += dout[i * OC + o];
    }
}

/* ---- activations ---- */

/* sqrt(2 / pi), GPT-2's tanh approximation of GELU */
#define GELU_K 0.7978845608028654

static void FN(gelu_fwd)(exec_dev *d, void *out_, const void *inp_, int64_t n)
{
    REAL *out = out_;
    const REAL *inp = inp_;
    for (int64_t i = 0; i < n; i++) {
        REAL x = inp[i];
        out[i] = (REAL)0.5 * x * ((REAL)1 + tanh((REAL)GELU_K * (x + (REAL)0.044715 * x * x * x)));
    }
}

static void FN(gelu_bwd)(exec_dev *d, void *dinp_, const void *inp_, const void *dout_,
                         int64_t n)
{
    REAL *dinp = dinp_;
    const REAL *inp = inp_, *dout = dout_;
    for (int64_t i = 0; i < n; i++) {
        REAL x = inp[i];
        REAL u = (REAL)GELU_K * (x + (REAL)0.044715 * x * x * x);
        REAL th = tanh(u), ch = cosh(u);
        REAL sech2 = (REAL)1 / (ch * ch);
        REAL g = (REAL)0.5 * ((REAL)1 + th) +
                 x * (REAL)0.5 * sech2 * (REAL)GELU_K * ((REAL)1 + (REAL)3 * (REAL)0.044715 * x * x);
        dinp[i] = g * dout[i];
    }
}

static void FN(swiglu_fwd)(exec_dev *d, void *out_, const void *inp_, int64_t n, int64_t F)
{
    REAL *out = out_;
    const REAL *inp = inp_;
    for (int64_t i = 0; i < n; i++) {
        const REAL *g = inp + i * 2 * F, *u = g + F;
        REAL *o = out + i * F;
        for (int64_t j = 0; j < F; j++)
            o[j] = g[j] / ((REAL)1 + exp(-g[j])) * u[j];
    }
}

static void FN(swiglu_bwd)(exec_dev *d, void *dinp_, const void *inp_, const void *dout_,
                           int64_t n, int64_t F)
{
    REAL *dinp = dinp_;
    const REAL *inp = inp_, *dout = dout_;
    for (int64_t i = 0; i < n; i++) {
        const REAL *g = inp + i * 2 * F, *u = g + F, *go = dout + i * F;
        REAL *dg = dinp + i * 2 * F, *du = dg + F;
        for (int64_t j = 0; j < F; j++) {
            REAL sig = (REAL)1 / ((REAL)1 + exp(-g[j]));
            du[j] = go[j] * g[j] * sig;
            dg[j] = go[j] * u[j] * sig * ((REAL)1 + g[j] * ((REAL)1 - sig));
        }
    }
}

/* ---- attention ---- */

/* Rotate pairs (j, j + hd/2) of every head by angle t theta^(-2j/hd) (sign
 * +1) or back (sign -1). */
static void FN(rope)(exec_dev *d, void *x_, int64_t T, int64_t B, int64_t H, int64_t hd,
                     int64_t ld, double theta, double sign)
{
    REAL *x = x_;
    int64_t half = hd / 2;
    double *cs = cpu_scratch(d, (size_t)hd * sizeof(double));
    if (!cs)
        return;
    for (int64_t t = 0; t < T; t++) {
        for (int64_t j = 0; j < half; j++) {
            double a = (double)t * pow(theta, -2.0 * (double)j / (double)hd);
            cs[j] = cos(a);
            cs[half + j] = sign * sin(a);
        }
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < H; h++) {
                REAL *v = x + (t * B + b) * ld + h * hd;
                for (int64_t j = 0; j < half; j++) {
                    REAL x1 = v[j], x2 = v[j + half];
                    REAL c = (REAL)cs[j], s = (REAL)cs[half + j];
                    v[j] = x1 * c - x2 * s;
                    v[j + half] = x2 * c + x1 * s;
                }
            }
    }
}

static void FN(rope_fwd)(exec_dev *d, void *x, int64_t T, int64_t B, int64_t H, int64_t hd,
                         int64_t ld, double theta)
{
    FN(rope)(d, x, T, B, H, hd, ld, theta, 1.0);
}

static void FN(rope_bwd)(exec_dev *d, void *dx, int64_t T, int64_t B, int64_t H, int64_t hd,
                         int64_t ld, double theta)
{
    FN(rope)(d, dx, T, B, H, hd, ld, theta, -1.0);
}

/* Per (sequence b, query head h): S = Q K^T / sqrt(hd) through one GEMM
 * (the full T x T, as the planner counts attention FLOPs), causal softmax
 * by rows, O = P V through another. Q of head h is a T x hd matrix whose
 * rows are B (Hq + 2 Hkv) hd apart. */
static void FN(attention_fwd)(exec_dev *d, void *out_, void *probs_, const void *qkv_,
                              int64_t T, int64_t B, int64_t Hq, int64_t Hkv, int64_t hd)
{
    REAL *out = out_, *probs = probs_;
    const REAL *qkv = qkv_;
    int64_t W = (Hq + 2 * Hkv) * hd, ld = B * W, ldo = B * Hq * hd, group = Hq / Hkv;
    REAL scale = (REAL)(1.0 / sqrt((double)hd));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            int64_t kh = h / group;
            const REAL *Q = qkv + b * W + h * hd;
            const REAL *K = qkv + b * W + (Hq + kh) * hd;
            const REAL *V = qkv + b * W + (Hq + Hkv + kh) * hd;
            REAL *P = probs + (b * Hq + h) * T * T;
            GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hd, scale, Q,
                 (int)ld, K, (int)ld, 0, P, (int)T);
            for (int64_t i = 0; i < T; i++) {
                REAL *row = P + i * T;
                REAL mx = row[0];
                for (int64_t j = 1; j <= i; j++)
                    mx = row[j] > mx ? row[j] : mx;
                double s = 0;
                for (int64_t j = 0; j <= i; j++) {
                    row[j] = exp(row[j] - mx);
                    s += row[j];
                }
                REAL inv = (REAL)(1.0 / s);
                for (int64_t j = 0; j <= i; j++)
                    row[j] *= inv;
                for (int64_t j = i + 1; j < T; j++)
                    row[j] = 0;
            }
            if (out)
                GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hd, (int)T, 1, P,
                     (int)T, V, (int)ld, 0, out + b * Hq * hd + h * hd, (int)ldo);
        }
    d->flops += (out ? 4.0 : 2.0) * (double)B * (double)Hq * (double)T * (double)T * (double)hd;
}

static void FN(attention_bwd)(exec_dev *d, void *dqkv_, void *dprobs_, const void *dout_,
                              const void *qkv_, const void *probs_, int64_t T, int64_t B,
                              int64_t Hq, int64_t Hkv, int64_t hd)
{
    REAL *dqkv = dqkv_, *dP = dprobs_;
    const REAL *dout = dout_, *qkv = qkv_, *probs = probs_;
    int64_t W = (Hq + 2 * Hkv) * hd, ld = B * W, ldo = B * Hq * hd, group = Hq / Hkv;
    REAL scale = (REAL)(1.0 / sqrt((double)hd));
    /* keys and values are shared by a group of query heads: their
     * gradients accumulate, so start from zero */
    for (int64_t r = 0; r < T * B; r++)
        memset(dqkv + r * W + Hq * hd, 0, (size_t)(2 * Hkv * hd) * sizeof(REAL));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            int64_t kh = h / group;
            int64_t qo = b * W + h * hd, ko = b * W + (Hq + kh) * hd,
                    vo = b * W + (Hq + Hkv + kh) * hd;
            const REAL *P = probs + (b * Hq + h) * T * T;
            const REAL *dO = dout + b * Hq * hd + h * hd;
            /* dP = dO V^T; dV += P^T dO */
            GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hd, 1, dO,
                 (int)ldo, qkv + vo, (int)ld, 0, dP, (int)T);
            GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hd, (int)T, 1, P, (int)T,
                 dO, (int)ldo, 1, dqkv + vo, (int)ld);
            /* softmax backward: dS = P (dP - rowsum(P dP)); masked P are 0 */
            for (int64_t i = 0; i < T; i++) {
                const REAL *p = P + i * T;
                REAL *g = dP + i * T;
                double dot = 0;
                for (int64_t j = 0; j <= i; j++)
                    dot += (double)p[j] * (double)g[j];
                for (int64_t j = 0; j <= i; j++)
                    g[j] = p[j] * (g[j] - (REAL)dot);
                for (int64_t j = i + 1; j < T; j++)
                    g[j] = 0;
            }
            /* dQ = scale dS K; dK += scale dS^T Q */
            GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hd, (int)T, scale, dP,
                 (int)T, qkv + ko, (int)ld, 0, dqkv + qo, (int)ld);
            GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hd, (int)T, scale, dP,
                 (int)T, qkv + qo, (int)ld, 1, dqkv + ko, (int)ld);
        }
    d->flops += 8.0 * (double)B * (double)Hq * (double)T * (double)T * (double)hd;
}

/* ---- vocab-parallel cross-entropy ---- */

static void FN(ce_rowmax)(exec_dev *d, void *rowmax_, const void *logits_, int64_t n,
                          int64_t vn)
{
    REAL *rowmax = rowmax_;
    const REAL *logits = logits_;
    for (int64_t i = 0; i < n; i++) {
        const REAL *l = logits + i * vn;
        REAL mx = l[0];
        for (int64_t j = 1; j < vn; j++)
            mx = l[j] > mx ? l[j] : mx;
        rowmax[i] = mx;
    }
}

static void FN(ce_stats)(exec_dev *d, void *stats_, const void *logits_, const void *rowmax_,
                         const int32_t *targets, int64_t n, int64_t vn, int64_t v0)
{
    REAL *stats = stats_;
    const REAL *logits = logits_, *rowmax = rowmax_;
    for (int64_t i = 0; i < n; i++) {
        const REAL *l = logits + i * vn;
        double s = 0;
        for (int64_t j = 0; j < vn; j++)
            s += exp((double)(l[j] - rowmax[i]));
        int64_t t = (int64_t)targets[i] - v0;
        stats[i] = (REAL)s;
        stats[n + i] = t >= 0 && t < vn ? l[t] : (REAL)0;
    }
}

static void FN(ce_loss_bwd)(exec_dev *d, void *losses_, void *logits_, const void *rowmax_,
                            const void *stats_, const int32_t *targets, int64_t n, int64_t vn,
                            int64_t v0, double scale)
{
    REAL *losses = losses_, *logits = logits_;
    const REAL *rowmax = rowmax_, *stats = stats_;
    for (int64_t i = 0; i < n; i++) {
        REAL *l = logits + i * vn;
        double sum = (double)stats[i];
        losses[i] = (REAL)(log(sum) + (double)rowmax[i] - (double)stats[n + i]);
        int64_t t = (int64_t)targets[i] - v0;
        for (int64_t j = 0; j < vn; j++) {
            double p = exp((double)(l[j] - rowmax[i])) / sum;
            l[j] = (REAL)((p - (j == t ? 1.0 : 0.0)) * scale);
        }
    }
}

/* ---- elementwise, reductions ---- */

static void FN(add)(exec_dev *d, void *y_, const void *x_, int64_t n)
{
    REAL *y = y_;
    const REAL *x = x_;
    for (int64_t i = 0; i < n; i++)
        y[i] += x[i];
}

static void FN(add3)(exec_dev *d, void *out_, const void *a_, const void *b_, int64_t n)
{
    REAL *out = out_;
    const REAL *a = a_, *b = b_;
    for (int64_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

static void FN(scale)(exec_dev *d, void *x_, double s, int64_t n)
{
    REAL *x = x_;
    for (int64_t i = 0; i < n; i++)
        x[i] *= (REAL)s;
}

static double FN(sum)(exec_dev *d, const void *x_, int64_t n)
{
    const REAL *x = x_;
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)x[i];
    return s;
}

static double FN(sumsq)(exec_dev *d, const void *x_, int64_t n)
{
    const REAL *x = x_;
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)x[i] * (double)x[i];
    return s;
}

/* AdamW, llm.c's adamw_update: m, v moments with bias correction, the
 * decay decoupled from the gradient (Loshchilov & Hutter 2019). The
 * parameters are the master copy here (the device computes in its state
 * type), so master is unused. */
static void FN(adamw)(exec_dev *d, void *param_, void *master, const void *grad_, void *m_,
                      void *v_, int64_t n, const exec_adamw *a)
{
    REAL *p = param_, *m = m_, *v = v_;
    const REAL *g = grad_;
    double c1 = 1.0 - pow(a->beta1, (double)a->step), c2 = 1.0 - pow(a->beta2, (double)a->step);
    REAL b1 = (REAL)a->beta1, b2 = (REAL)a->beta2, gs = (REAL)a->grad_scale;
    REAL lr = (REAL)a->lr, wd = (REAL)a->weight_decay, eps = (REAL)a->eps;
    REAL ic1 = (REAL)(1.0 / c1), ic2 = (REAL)(1.0 / c2);
    for (int64_t i = 0; i < n; i++) {
        REAL gi = g[i] * gs;
        REAL mi = b1 * m[i] + ((REAL)1 - b1) * gi;
        REAL vi = b2 * v[i] + ((REAL)1 - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        REAL mh = mi * ic1, vh = vi * ic2;
        p[i] -= lr * (mh / (sqrt(vh) + eps) + wd * p[i]);
    }
}

static void FN(upload_f64)(exec_dev *d, void *dst_, const double *src, int64_t n)
{
    REAL *dst = dst_;
    for (int64_t i = 0; i < n; i++)
        dst[i] = (REAL)src[i];
}

static void FN(download_f64)(exec_dev *d, double *dst, const void *src_, int64_t n)
{
    const REAL *src = src_;
    for (int64_t i = 0; i < n; i++)
        dst[i] = (double)src[i];
}

const exec_dev_ops CPU_TABLE = {
    .name = CPU_NAME,
    .dtype = CPU_DTYPE,
    .state_dtype = CPU_DTYPE,
    .has_master = 0,
    .host_memory = 1,
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_copy,
    .download = cpu_copy,
    .copy = cpu_copy,
    .zero = cpu_zero,
    .sync = cpu_sync,
    .stream = cpu_stream,
    .embed_fwd = FN(embed_fwd),
    .embed_bwd = FN(embed_bwd),
    .pos_fwd = FN(pos_fwd),
    .pos_bwd = FN(pos_bwd),
    .norm_fwd = FN(norm_fwd),
    .norm_bwd_input = FN(norm_bwd_input),
    .norm_bwd_weight = FN(norm_bwd_weight),
    .matmul_fwd = FN(matmul_fwd),
    .matmul_bwd_input = FN(matmul_bwd_input),
    .matmul_bwd_weight = FN(matmul_bwd_weight),
    .gelu_fwd = FN(gelu_fwd),
    .gelu_bwd = FN(gelu_bwd),
    .swiglu_fwd = FN(swiglu_fwd),
    .swiglu_bwd = FN(swiglu_bwd),
    .rope_fwd = FN(rope_fwd),
    .rope_bwd = FN(rope_bwd),
    .attention_fwd = FN(attention_fwd),
    .attention_bwd = FN(attention_bwd),
    .ce_rowmax = FN(ce_rowmax),
    .ce_stats = FN(ce_stats),
    .ce_loss_bwd = FN(ce_loss_bwd),
    .add = FN(add),
    .add3 = FN(add3),
    .scale = FN(scale),
    .sum = FN(sum),
    .sumsq = FN(sumsq),
    .adamw = FN(adamw),
    .upload_f64 = FN(upload_f64),
    .download_f64 = FN(download_f64),
};

#undef FN
#undef CAT
#undef CAT_
#undef GELU_K
