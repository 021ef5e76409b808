/*
 * exec_dev_cpu_impl.h: the CPU device's operations, written once over a
 * real type and included twice by exec_dev_cpu.c: REAL = float (the "cpu"
 * device, sgemm) and REAL = double ("cpu64", dgemm, for the finite-
 * difference checks of every backward). Not a header to include elsewhere.
 *
 * Before including: REAL, SFX (name suffix), GEMM (OpenBLAS's cblas_sgemm
 * or cblas_dgemm, through exec_blas.h), CPU_NAME, CPU_DTYPE and CPU_TABLE
 * (the table's name). Math goes through <tgmath.h>, so exp() of a float is
 * expf(). Sums over a row accumulate in double either way.
 *
 * The ops follow llm.c's CPU reference (train_gpt2.c): one loop nest per
 * op, forward and backward side by side; matrix products, including the
 * attention scores and values per (sequence, head), go to BLAS. A loop
 * body is a range function (rows, elements, columns or tasks [lo, hi))
 * that cpu_parallel splits over the device's threads; BLAS itself runs on
 * one thread per call, large products split by rows of the result. Each
 * range function reads its op's arguments from a struct of named fields
 * (FN(x_args), typed in REAL), filled by the op from its parameters.
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* ---- embedding ---- */

typedef struct {
    REAL *out;
    const REAL *wte;
    const int32_t *tok;
    int64_t C, v0, vn;
} FN(embed_fwd_args);

static void FN(embed_fwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(embed_fwd_args) *a = args;
    REAL *out = a->out;
    const REAL *wte = a->wte;
    int64_t C = a->C, v0 = a->v0, vn = a->vn;
    for (int64_t i = lo; i < hi; i++) {
        int64_t t = (int64_t)a->tok[i] - v0;
        if (t >= 0 && t < vn)
            memcpy(out + i * C, wte + t * C, (size_t)C * sizeof(REAL));
        else
            memset(out + i * C, 0, (size_t)C * sizeof(REAL));
    }
}

static void FN(embed_fwd)(exec_dev *d, void *out, const int32_t *tok, const void *wte, int64_t n,
                          int64_t C, int64_t v0, int64_t vn)
{
    FN(embed_fwd_args) a = {.out = out, .wte = wte, .tok = tok, .C = C, .v0 = v0, .vn = vn};
    cpu_parallel(d, n, CPU_PAR_MIN / (C + 1), FN(embed_fwd_r), &a);
}

/* Rows of the table take gradient from every token naming them: split the
 * table's columns, so two ranges never add into the same element. */
typedef struct {
    REAL *dwte;
    const REAL *dout;
    const int32_t *tok;
    int64_t n, C, v0, vn;
} FN(embed_bwd_args);

static void FN(embed_bwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(embed_bwd_args) *a = args;
    REAL *dwte = a->dwte;
    const REAL *dout = a->dout;
    int64_t n = a->n, C = a->C, v0 = a->v0, vn = a->vn;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = (int64_t)a->tok[i] - v0;
        if (t < 0 || t >= vn)
            continue;
        REAL *row = dwte + t * C;
        const REAL *g = dout + i * C;
        for (int64_t c = lo; c < hi; c++)
            row[c] += g[c];
    }
}

static void FN(embed_bwd)(exec_dev *d, void *dwte, const void *dout, const int32_t *tok,
                          int64_t n, int64_t C, int64_t v0, int64_t vn)
{
    FN(embed_bwd_args) a = {.dwte = dwte, .dout = dout, .tok = tok, .n = n, .C = C, .v0 = v0,
                            .vn = vn};
    cpu_parallel(d, C, n * C >= CPU_PAR_MIN ? 2 : C + 1, FN(embed_bwd_r), &a);
}

typedef struct {
    REAL *x;
    const REAL *wpe;
    int64_t B, C, t0;
} FN(pos_fwd_args);

static void FN(pos_fwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(pos_fwd_args) *a = args;
    REAL *x = a->x;
    const REAL *wpe = a->wpe;
    int64_t B = a->B, C = a->C, t0 = a->t0;
    for (int64_t t = lo; t < hi; t++)
        for (int64_t b = 0; b < B; b++) {
            REAL *row = x + (t * B + b) * C;
            const REAL *p = wpe + (t0 + t) * C;
            for (int64_t c = 0; c < C; c++)
                row[c] += p[c];
        }
}

static void FN(pos_fwd)(exec_dev *d, void *x, const void *wpe, int64_t T, int64_t B, int64_t C,
                        int64_t t0)
{
    FN(pos_fwd_args) a = {.x = x, .wpe = wpe, .B = B, .C = C, .t0 = t0};
    cpu_parallel(d, T, CPU_PAR_MIN / (B * C + 1), FN(pos_fwd_r), &a);
}

typedef struct {
    REAL *dwpe;
    const REAL *dout;
    int64_t B, C, t0;
} FN(pos_bwd_args);

static void FN(pos_bwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(pos_bwd_args) *a = args;
    REAL *dwpe = a->dwpe;
    const REAL *dout = a->dout;
    int64_t B = a->B, C = a->C, t0 = a->t0;
    for (int64_t t = lo; t < hi; t++)
        for (int64_t b = 0; b < B; b++) {
            REAL *p = dwpe + (t0 + t) * C;
            const REAL *g = dout + (t * B + b) * C;
            for (int64_t c = 0; c < C; c++)
                p[c] += g[c];
        }
}

static void FN(pos_bwd)(exec_dev *d, void *dwpe, const void *dout, int64_t T, int64_t B,
                        int64_t C, int64_t t0)
{
    FN(pos_bwd_args) a = {.dwpe = dwpe, .dout = dout, .B = B, .C = C, .t0 = t0};
    cpu_parallel(d, T, CPU_PAR_MIN / (B * C + 1), FN(pos_bwd_r), &a);
}

/* ---- norms ---- */

typedef struct {
    REAL *out, *mean, *rstd;     /* mean NULL for RMSNorm */
    const REAL *inp, *w, *b;     /* b NULL: no bias */
    int64_t C;
    int rms;
} FN(norm_fwd_args);

static void FN(norm_fwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(norm_fwd_args) *a = args;
    REAL *out = a->out, *mean = a->mean, *rstd = a->rstd;
    const REAL *inp = a->inp, *w = a->w, *b = a->b;
    int64_t C = a->C;
    int rms = a->rms;
    for (int64_t i = lo; i < hi; i++) {
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

static void FN(norm_fwd)(exec_dev *d, void *out, void *mean, void *rstd, const void *inp,
                         const void *w, const void *b, int64_t n, int64_t C, int rms)
{
    FN(norm_fwd_args) a = {.out = out, .mean = mean, .rstd = rstd, .inp = inp, .w = w, .b = b,
                           .C = C, .rms = rms};
    cpu_parallel(d, n, CPU_PAR_MIN / (C + 1), FN(norm_fwd_r), &a);
}

/* LayerNorm's input gradient (llm.c layernorm_backward):
 * dx = rstd (dn - mean(dn) - xhat mean(dn xhat)), dn = dout w; RMSNorm's is
 * the same without the mean term. */
typedef struct {
    REAL *dinp;
    const REAL *dout, *inp, *w, *mean, *rstd;
    int64_t C;
    int rms, accumulate;
} FN(norm_bwd_input_args);

static void FN(norm_bwd_input_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(norm_bwd_input_args) *a = args;
    REAL *dinp = a->dinp;
    const REAL *dout = a->dout, *inp = a->inp, *w = a->w, *mean = a->mean, *rstd = a->rstd;
    int64_t C = a->C;
    int rms = a->rms, accumulate = a->accumulate;
    for (int64_t i = lo; i < hi; i++) {
        const REAL *g = dout + i * C, *x = inp + i * C;
        double m = rms ? 0.0 : (double)mean[i], s = (double)rstd[i];
        double dn_mean = 0, dn_xh = 0;
        for (int64_t c = 0; c < C; c++) {
            double dn = (double)g[c] * (double)w[c];
            dn_mean += dn;
            dn_xh += dn * ((double)x[c] - m) * s;
        }
        dn_mean = rms ? 0.0 : dn_mean / (double)C;
        dn_xh /= (double)C;
        REAL *dx = dinp + i * C;
        for (int64_t c = 0; c < C; c++) {
            double xh = ((double)x[c] - m) * s;
            double v = s * ((double)g[c] * (double)w[c] - dn_mean - xh * dn_xh);
            dx[c] = accumulate ? dx[c] + (REAL)v : (REAL)v;
        }
    }
}

static void FN(norm_bwd_input)(exec_dev *d, void *dinp, const void *dout, const void *inp,
                               const void *w, const void *mean, const void *rstd, int64_t n,
                               int64_t C, int rms, int accumulate)
{
    FN(norm_bwd_input_args) a = {.dinp = dinp, .dout = dout, .inp = inp, .w = w, .mean = mean,
                                 .rstd = rstd, .C = C, .rms = rms, .accumulate = accumulate};
    cpu_parallel(d, n, CPU_PAR_MIN / (C + 1), FN(norm_bwd_input_r), &a);
}

/* Weight and bias gradients sum over rows: ranges split the columns. */
typedef struct {
    REAL *dw, *db;               /* db NULL: no bias */
    const REAL *dout, *inp, *mean, *rstd;
    int64_t n, C;
    int rms;
} FN(norm_bwd_weight_args);

static void FN(norm_bwd_weight_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(norm_bwd_weight_args) *a = args;
    REAL *dw = a->dw, *db = a->db;
    const REAL *dout = a->dout, *inp = a->inp, *mean = a->mean, *rstd = a->rstd;
    int64_t n = a->n, C = a->C;
    int rms = a->rms;
    for (int64_t i = 0; i < n; i++) {
        const REAL *g = dout + i * C, *x = inp + i * C;
        REAL m = rms ? (REAL)0 : mean[i], s = rstd[i];
        for (int64_t c = lo; c < hi; c++) {
            dw[c] += g[c] * ((x[c] - m) * s);
            if (db)
                db[c] += g[c];
        }
    }
}

static void FN(norm_bwd_weight)(exec_dev *d, void *dw, void *db, const void *dout,
                                const void *inp, const void *mean, const void *rstd, int64_t n,
                                int64_t C, int rms)
{
    FN(norm_bwd_weight_args) a = {.dw = dw, .db = db, .dout = dout, .inp = inp, .mean = mean,
                                  .rstd = rstd, .n = n, .C = C, .rms = rms};
    cpu_parallel(d, C, n * C >= CPU_PAR_MIN ? 2 : C + 1, FN(norm_bwd_weight_r), &a);
}

/* ---- matrix products ---- */

/* Rows of C per block when a product is split over the threads (a multiple
 * of the kernels' register tiles). */
#define CPU_GEMM_ROWS 32
/* Products smaller than this many multiply-adds run on one thread. */
#define CPU_GEMM_PAR_MIN (1 << 21)

/* Rows [lo, hi) blocks of C = alpha op(A) op(B) + beta C, row-major: one
 * single-threaded BLAS call per range (BLAS runs on one thread; the
 * device's pool splits the work, so no BLAS thread spins while the pool's
 * loops run). */
typedef struct {
    int ta, tb;
    int64_t M, N, K, lda, ldb, ldc;
    double alpha, beta;
    const REAL *A, *B;
    REAL *C;
} FN(gemm_args);

static void FN(gemm_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(gemm_args) *a = args;
    int ta = a->ta, tb = a->tb;
    int64_t M = a->M, N = a->N, K = a->K, lda = a->lda, ldb = a->ldb, ldc = a->ldc;
    int64_t r0 = lo * CPU_GEMM_ROWS, r1 = hi * CPU_GEMM_ROWS < M ? hi * CPU_GEMM_ROWS : M;
    const REAL *A = a->A, *B = a->B;
    REAL *C = a->C;
    GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
         (int)(r1 - r0), (int)N, (int)K, (REAL)a->alpha, ta ? A + r0 : A + r0 * lda, (int)lda, B,
         (int)ldb, (REAL)a->beta, C + r0 * ldc, (int)ldc);
}

static void FN(gemm)(exec_dev *d, int ta, int tb, int64_t M, int64_t N, int64_t K, double alpha,
                     const REAL *A, int64_t lda, const REAL *B, int64_t ldb, double beta, REAL *C,
                     int64_t ldc)
{
    FN(gemm_args) a = {.ta = ta, .tb = tb, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb,
                       .ldc = ldc, .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C};
    int64_t blocks = (M + CPU_GEMM_ROWS - 1) / CPU_GEMM_ROWS;
    cpu_parallel(d, blocks, (double)M * (double)N * (double)K >= CPU_GEMM_PAR_MIN ? 2 : blocks + 1,
                 FN(gemm_r), &a);
}

/* ---- linear ---- */

typedef struct {
    REAL *out;
    const REAL *bias;
    int64_t OC;
} FN(bias_rows_args);

static void FN(bias_rows_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(bias_rows_args) *a = args;
    REAL *out = a->out;
    int64_t OC = a->OC;
    for (int64_t i = lo; i < hi; i++)
        memcpy(out + i * OC, a->bias, (size_t)OC * sizeof(REAL));
}

typedef struct {
    REAL *out;
    const REAL *res;
    int64_t OC;
} FN(res_rows_args);

static void FN(res_rows_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(res_rows_args) *a = args;
    (void)tid;
    for (int64_t e = lo * a->OC; e < hi * a->OC; e++)
        a->out[e] += a->res[e];
}

/* The residual after the product and bias, as a separate sum in REAL: a
 * layer's out = (x W^T + b) + res, the order of the unfused product-then-
 * add, so that fp32 results are those of the two passes bit for bit. */
static void FN(matmul_fwd)(exec_dev *d, void *out, const void *inp, const void *w,
                           const void *bias, const void *res, int64_t n, int64_t C, int64_t OC)
{
    if (bias) {
        FN(bias_rows_args) a = {.out = out, .bias = bias, .OC = OC};
        cpu_parallel(d, n, CPU_PAR_MIN / (OC + 1), FN(bias_rows_r), &a);
    }
    FN(gemm)(d, 0, 1, n, OC, C, 1, inp, C, w, C, bias ? 1 : 0, out, OC);
    if (res) {
        FN(res_rows_args) a = {.out = out, .res = res, .OC = OC};
        cpu_parallel(d, n, CPU_PAR_MIN / (OC + 1), FN(res_rows_r), &a);
    }
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

static void FN(matmul_bwd_input)(exec_dev *d, void *dinp, const void *dout, const void *w,
                                 int64_t n, int64_t C, int64_t OC, int accumulate)
{
    FN(gemm)(d, 0, 0, n, C, OC, 1, dout, OC, w, C, accumulate ? 1 : 0, dinp, C);
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

typedef struct {
    REAL *dbias;
    const REAL *dout;
    int64_t n, OC;
} FN(colsum_args);

static void FN(colsum_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(colsum_args) *a = args;
    REAL *dbias = a->dbias;
    const REAL *dout = a->dout;
    int64_t n = a->n, OC = a->OC;
    for (int64_t i = 0; i < n; i++)
        for (int64_t o = lo; o < hi; o++)
            dbias[o] += dout[i * OC + o];
}

static void FN(matmul_bwd_weight)(exec_dev *d, void *dw, void *dbias, const void *dout,
                                  const void *inp, int64_t n, int64_t C, int64_t OC)
{
    FN(gemm)(d, 1, 0, OC, C, n, 1, dout, OC, inp, C, 1, dw, C);
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
    if (dbias) {
        FN(colsum_args) a = {.dbias = dbias, .dout = dout, .n = n, .OC = OC};
        cpu_parallel(d, OC, n * OC >= CPU_PAR_MIN ? 2 : OC + 1, FN(colsum_r), &a);
    }
}

/* ---- activations ---- */

/* sqrt(2 / pi), GPT-2's tanh approximation of GELU */
#define GELU_K 0.7978845608028654

/* tanh(u) = 1 - 2 / (exp(2u) + 1): one exp instead of tanh's expm1 (an
 * eighth of a step went to tanh alone); exact at both limits (exp gives 0
 * or inf) and within a few ulps of tanh elsewhere. */
static inline REAL FN(tanh_fast)(REAL u)
{
    return (REAL)1 - (REAL)2 / (exp((REAL)2 * u) + (REAL)1);
}

typedef struct {
    REAL *out;
    const REAL *inp;
} FN(gelu_fwd_args);

static void FN(gelu_fwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(gelu_fwd_args) *a = args;
    REAL *out = a->out;
    const REAL *inp = a->inp;
    for (int64_t i = lo; i < hi; i++) {
        REAL x = inp[i];
        out[i] = (REAL)0.5 * x *
                 ((REAL)1 + FN(tanh_fast)((REAL)GELU_K * (x + (REAL)0.044715 * x * x * x)));
    }
}

static void FN(gelu_fwd)(exec_dev *d, void *out, const void *inp, int64_t n)
{
    FN(gelu_fwd_args) a = {.out = out, .inp = inp};
    cpu_parallel(d, n, CPU_PAR_MIN, FN(gelu_fwd_r), &a);
}

/* d/dx: 0.5 (1 + th) + 0.5 x (1 - th^2) k (1 + 3 0.044715 x^2), th = tanh(u) */
typedef struct {
    REAL *dinp;
    const REAL *inp, *dout;
} FN(gelu_bwd_args);

static void FN(gelu_bwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(gelu_bwd_args) *a = args;
    REAL *dinp = a->dinp;
    const REAL *inp = a->inp, *dout = a->dout;
    for (int64_t i = lo; i < hi; i++) {
        REAL x = inp[i];
        REAL th = FN(tanh_fast)((REAL)GELU_K * (x + (REAL)0.044715 * x * x * x));
        REAL g = (REAL)0.5 * ((REAL)1 + th) +
                 x * (REAL)0.5 * ((REAL)1 - th * th) * (REAL)GELU_K *
                     ((REAL)1 + (REAL)3 * (REAL)0.044715 * x * x);
        dinp[i] = g * dout[i];
    }
}

static void FN(gelu_bwd)(exec_dev *d, void *dinp, const void *inp, const void *dout, int64_t n)
{
    FN(gelu_bwd_args) a = {.dinp = dinp, .inp = inp, .dout = dout};
    cpu_parallel(d, n, CPU_PAR_MIN, FN(gelu_bwd_r), &a);
}

/* The product then the GELU, in REAL (the same sums as the two ops). */
static void FN(matmul_gelu_fwd)(exec_dev *d, void *act, void *pre, const void *inp,
                                const void *w, const void *bias, int64_t n, int64_t C,
                                int64_t OC)
{
    FN(matmul_fwd)(d, pre, inp, w, bias, NULL, n, C, OC);
    FN(gelu_fwd)(d, act, pre, n * OC);
}

static void FN(matmul_bwd_input_gelu)(exec_dev *d, void *dpre, const void *dout, const void *w,
                                      const void *pre, int64_t n, int64_t C, int64_t OC)
{
    FN(matmul_bwd_input)(d, dpre, dout, w, n, C, OC, 0);
    FN(gelu_bwd)(d, dpre, pre, dpre, n * C);
}

typedef struct {
    REAL *out;
    const REAL *inp;
    int64_t F;
} FN(swiglu_fwd_args);

static void FN(swiglu_fwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(swiglu_fwd_args) *a = args;
    REAL *out = a->out;
    const REAL *inp = a->inp;
    int64_t F = a->F;
    for (int64_t i = lo; i < hi; i++) {
        const REAL *g = inp + i * 2 * F, *u = g + F;
        REAL *o = out + i * F;
        for (int64_t j = 0; j < F; j++)
            o[j] = g[j] / ((REAL)1 + exp(-g[j])) * u[j];
    }
}

static void FN(swiglu_fwd)(exec_dev *d, void *out, const void *inp, int64_t n, int64_t F)
{
    FN(swiglu_fwd_args) a = {.out = out, .inp = inp, .F = F};
    cpu_parallel(d, n, CPU_PAR_MIN / (F + 1), FN(swiglu_fwd_r), &a);
}

typedef struct {
    REAL *dinp;
    const REAL *inp, *dout;
    int64_t F;
} FN(swiglu_bwd_args);

static void FN(swiglu_bwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(swiglu_bwd_args) *a = args;
    REAL *dinp = a->dinp;
    const REAL *inp = a->inp, *dout = a->dout;
    int64_t F = a->F;
    for (int64_t i = lo; i < hi; i++) {
        const REAL *g = inp + i * 2 * F, *u = g + F, *go = dout + i * F;
        REAL *dg = dinp + i * 2 * F, *du = dg + F;
        for (int64_t j = 0; j < F; j++) {
            REAL sig = (REAL)1 / ((REAL)1 + exp(-g[j]));
            du[j] = go[j] * g[j] * sig;
            dg[j] = go[j] * u[j] * sig * ((REAL)1 + g[j] * ((REAL)1 - sig));
        }
    }
}

static void FN(swiglu_bwd)(exec_dev *d, void *dinp, const void *inp, const void *dout,
                           int64_t n, int64_t F)
{
    FN(swiglu_bwd_args) a = {.dinp = dinp, .inp = inp, .dout = dout, .F = F};
    cpu_parallel(d, n, CPU_PAR_MIN / (F + 1), FN(swiglu_bwd_r), &a);
}

/* ---- attention ---- */

/* Rotate pairs (j, j + hd/2) of every head by angle t theta^(-2j/hd) (sign
 * +1) or back (sign -1); ranges split positions t. */
typedef struct {
    REAL *x;
    double *cs;                  /* per-thread angle tables, cs_stride apart */
    int64_t B, H, hd, cs_stride, ld;
    double theta, sign;
} FN(rope_args);

static void FN(rope_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(rope_args) *a = args;
    REAL *x = a->x;
    double *cs = a->cs + (size_t)tid * (size_t)a->cs_stride;
    int64_t B = a->B, H = a->H, hd = a->hd, ld = a->ld, half = hd / 2;
    double theta = a->theta, sign = a->sign;
    for (int64_t t = lo; t < hi; t++) {
        for (int64_t j = 0; j < half; j++) {
            double ang = (double)t * pow(theta, -2.0 * (double)j / (double)hd);
            cs[j] = cos(ang);
            cs[half + j] = sign * sin(ang);
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

static void FN(rope)(exec_dev *d, void *x, int64_t T, int64_t B, int64_t H, int64_t hd,
                     int64_t ld, double theta, double sign)
{
    double *cs = cpu_scratch(d, (size_t)hd * sizeof(double));
    if (!cs)
        return;
    FN(rope_args) a = {.x = x, .cs = cs, .B = B, .H = H, .hd = hd, .cs_stride = hd, .ld = ld,
                       .theta = theta, .sign = sign};
    cpu_parallel(d, T, 2, FN(rope_r), &a);
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

/* Causal softmax of the rows of one T x T score matrix. */
static void FN(softmax_rows)(REAL *P, int64_t T)
{
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
}

/* Its backward: dS = P (dP - rowsum(P dP)), in place over dP; masked P are 0. */
static void FN(softmax_rows_bwd)(REAL *dP, const REAL *P, int64_t T)
{
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
}

/* Attention runs as B x Hkv tasks, one per (sequence b, kv head): the
 * query heads sharing that kv head one after another, so a task alone
 * writes its keys' and values' gradients. Per query head h: S = Q K^T /
 * sqrt(hd) through one GEMM (the full T x T, as the planner counts
 * attention FLOPs), the causal softmax by rows, O = P V through another.
 * Q of head h is a T x hd matrix whose rows are B (Hq + 2 Hkv) hd apart
 * (sequence-first rows). */
typedef struct {
    REAL *out, *probs;           /* out NULL: the probabilities alone */
    const REAL *qkv;
    int64_t T, B, Hq, Hkv, hd;
} FN(attention_fwd_args);

static void FN(attention_fwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(attention_fwd_args) *a = args;
    REAL *out = a->out, *probs = a->probs;
    const REAL *qkv = a->qkv;
    int64_t T = a->T, B = a->B, Hq = a->Hq, Hkv = a->Hkv, hd = a->hd;
    int64_t W = (Hq + 2 * Hkv) * hd, ld = B * W, ldo = B * Hq * hd, group = Hq / Hkv;
    REAL scale = (REAL)(1.0 / sqrt((double)hd));
    for (int64_t task = lo; task < hi; task++) {
        int64_t b = task / Hkv, kh = task % Hkv;
        for (int64_t h = kh * group; h < (kh + 1) * group; h++) {
            REAL *P = probs + (b * Hq + h) * T * T;
            GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hd, scale,
                 qkv + b * W + h * hd, (int)ld, qkv + b * W + (Hq + kh) * hd, (int)ld, 0, P,
                 (int)T);
            FN(softmax_rows)(P, T);
            if (out)
                GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hd, (int)T, 1, P,
                     (int)T, qkv + b * W + (Hq + Hkv + kh) * hd, (int)ld, 0,
                     out + b * Hq * hd + h * hd, (int)ldo);
        }
    }
}

static void FN(attention_fwd)(exec_dev *d, void *out, void *probs, const void *qkv, int64_t T,
                              int64_t B, int64_t Hq, int64_t Hkv, int64_t hd)
{
    FN(attention_fwd_args) a = {.out = out, .probs = probs, .qkv = qkv, .T = T, .B = B, .Hq = Hq,
                                .Hkv = Hkv, .hd = hd};
    cpu_parallel(d, B * Hkv, 2, FN(attention_fwd_r), &a);
    d->flops += (out ? 4.0 : 2.0) * (double)B * (double)Hq * (double)T * (double)T * (double)hd;
}

typedef struct {
    REAL *dqkv, *dprobs;
    const REAL *dout, *qkv, *probs;
    int64_t T, B, Hq, Hkv, hd;
} FN(attention_bwd_args);

static void FN(attention_bwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(attention_bwd_args) *a = args;
    REAL *dqkv = a->dqkv, *dprobs = a->dprobs;
    const REAL *dout = a->dout, *qkv = a->qkv, *probs = a->probs;
    int64_t T = a->T, B = a->B, Hq = a->Hq, Hkv = a->Hkv, hd = a->hd;
    int64_t W = (Hq + 2 * Hkv) * hd, ld = B * W, ldo = B * Hq * hd, group = Hq / Hkv;
    REAL scale = (REAL)(1.0 / sqrt((double)hd));
    for (int64_t task = lo; task < hi; task++) {
        int64_t b = task / Hkv, kh = task % Hkv;
        int64_t ko = b * W + (Hq + kh) * hd, vo = b * W + (Hq + Hkv + kh) * hd;
        /* the kv head's gradients accumulate over its query heads */
        for (int64_t t = 0; t < T; t++) {
            memset(dqkv + t * ld + ko, 0, (size_t)hd * sizeof(REAL));
            memset(dqkv + t * ld + vo, 0, (size_t)hd * sizeof(REAL));
        }
        for (int64_t h = kh * group; h < (kh + 1) * group; h++) {
            int64_t qo = b * W + h * hd;
            const REAL *P = probs + (b * Hq + h) * T * T;
            const REAL *dO = dout + b * Hq * hd + h * hd;
            REAL *dP = dprobs + (b * Hq + h) * T * T;
            /* dP = dO V^T; dV += P^T dO */
            GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hd, 1, dO,
                 (int)ldo, qkv + vo, (int)ld, 0, dP, (int)T);
            GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hd, (int)T, 1, P, (int)T,
                 dO, (int)ldo, 1, dqkv + vo, (int)ld);
            FN(softmax_rows_bwd)(dP, P, T);
            /* dQ = scale dS K; dK += scale dS^T Q */
            GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hd, (int)T, scale, dP,
                 (int)T, qkv + ko, (int)ld, 0, dqkv + qo, (int)ld);
            GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hd, (int)T, scale, dP,
                 (int)T, qkv + qo, (int)ld, 1, dqkv + ko, (int)ld);
        }
    }
}

static void FN(attention_bwd)(exec_dev *d, void *dqkv, void *dprobs, const void *dout,
                              const void *qkv, const void *probs, int64_t T, int64_t B,
                              int64_t Hq, int64_t Hkv, int64_t hd)
{
    FN(attention_bwd_args) a = {.dqkv = dqkv, .dprobs = dprobs, .dout = dout, .qkv = qkv,
                                .probs = probs, .T = T, .B = B, .Hq = Hq, .Hkv = Hkv, .hd = hd};
    cpu_parallel(d, B * Hkv, 2, FN(attention_bwd_r), &a);
    d->flops += 8.0 * (double)B * (double)Hq * (double)T * (double)T * (double)hd;
}

/* ---- vocab-parallel cross-entropy ---- */

typedef struct {
    REAL *rowmax;
    const REAL *logits;
    int64_t vn;
} FN(ce_rowmax_args);

static void FN(ce_rowmax_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(ce_rowmax_args) *a = args;
    REAL *rowmax = a->rowmax;
    const REAL *logits = a->logits;
    int64_t vn = a->vn;
    for (int64_t i = lo; i < hi; i++) {
        const REAL *l = logits + i * vn;
        REAL mx = l[0];
        for (int64_t j = 1; j < vn; j++)
            mx = l[j] > mx ? l[j] : mx;
        rowmax[i] = mx;
    }
}

static void FN(ce_rowmax)(exec_dev *d, void *rowmax, const void *logits, int64_t n, int64_t vn)
{
    FN(ce_rowmax_args) a = {.rowmax = rowmax, .logits = logits, .vn = vn};
    cpu_parallel(d, n, CPU_PAR_MIN / (vn + 1), FN(ce_rowmax_r), &a);
}

/* Sum of exp(logit - max) and the target's logit; the logits become
 * exp(logit - max) (what ce_loss_bwd needs), so exp runs once per logit. */
typedef struct {
    REAL *stats, *logits;
    const REAL *rowmax;
    const int32_t *targets;
    int64_t n, vn, v0;
} FN(ce_stats_args);

static void FN(ce_stats_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(ce_stats_args) *a = args;
    REAL *stats = a->stats, *logits = a->logits;
    const REAL *rowmax = a->rowmax;
    int64_t n = a->n, vn = a->vn, v0 = a->v0;
    for (int64_t i = lo; i < hi; i++) {
        REAL *l = logits + i * vn, mx = rowmax[i];
        int64_t t = (int64_t)a->targets[i] - v0;
        stats[n + i] = t >= 0 && t < vn ? l[t] : (REAL)0;
        double s = 0;
        for (int64_t j = 0; j < vn; j++) {
            l[j] = exp(l[j] - mx);
            s += (double)l[j];
        }
        stats[i] = (REAL)s;
    }
}

static void FN(ce_stats)(exec_dev *d, void *stats, void *logits, const void *rowmax,
                         const int32_t *targets, int64_t n, int64_t vn, int64_t v0)
{
    FN(ce_stats_args) a = {.stats = stats, .logits = logits, .rowmax = rowmax,
                           .targets = targets, .n = n, .vn = vn, .v0 = v0};
    cpu_parallel(d, n, CPU_PAR_MIN / (vn + 1), FN(ce_stats_r), &a);
}

typedef struct {
    REAL *losses, *logits;       /* logits: exp(logit - max), from ce_stats */
    const REAL *rowmax, *stats;
    const int32_t *targets;
    int64_t n, vn, v0;
    double scale;
} FN(ce_loss_bwd_args);

static void FN(ce_loss_bwd_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(ce_loss_bwd_args) *a = args;
    REAL *losses = a->losses, *e = a->logits;
    const REAL *rowmax = a->rowmax, *stats = a->stats;
    int64_t n = a->n, vn = a->vn, v0 = a->v0;
    double scale = a->scale;
    for (int64_t i = lo; i < hi; i++) {
        REAL *l = e + i * vn;
        double sum = (double)stats[i];
        losses[i] = (REAL)(log(sum) + (double)rowmax[i] - (double)stats[n + i]);
        int64_t t = (int64_t)a->targets[i] - v0;
        REAL k = (REAL)(scale / sum);
        for (int64_t j = 0; j < vn; j++)
            l[j] *= k;
        if (t >= 0 && t < vn)
            l[t] -= (REAL)scale;
    }
}

static void FN(ce_loss_bwd)(exec_dev *d, void *losses, void *logits, const void *rowmax,
                            const void *stats, const int32_t *targets, int64_t n, int64_t vn,
                            int64_t v0, double scale)
{
    FN(ce_loss_bwd_args) a = {.losses = losses, .logits = logits, .rowmax = rowmax,
                              .stats = stats, .targets = targets, .n = n, .vn = vn, .v0 = v0,
                              .scale = scale};
    cpu_parallel(d, n, CPU_PAR_MIN / (vn + 1), FN(ce_loss_bwd_r), &a);
}

/* ---- elementwise, reductions ---- */

/* y = x + b, or y += x when b is NULL */
typedef struct {
    REAL *y;
    const REAL *x, *b;
} FN(add_args);

static void FN(add_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(add_args) *a = args;
    REAL *y = a->y;
    const REAL *x = a->x, *b = a->b;
    if (b)
        for (int64_t i = lo; i < hi; i++)
            y[i] = x[i] + b[i];
    else
        for (int64_t i = lo; i < hi; i++)
            y[i] += x[i];
}

static void FN(add)(exec_dev *d, void *y, const void *x, int64_t n)
{
    FN(add_args) a = {.y = y, .x = x, .b = NULL};
    cpu_parallel(d, n, CPU_PAR_MIN, FN(add_r), &a);
}

static void FN(add3)(exec_dev *d, void *out, const void *x, const void *b, int64_t n)
{
    FN(add_args) a = {.y = out, .x = x, .b = b};
    cpu_parallel(d, n, CPU_PAR_MIN, FN(add_r), &a);
}

typedef struct {
    REAL *x;
    double s;
} FN(scale_args);

static void FN(scale_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(scale_args) *a = args;
    REAL *x = a->x, s = (REAL)a->s;
    for (int64_t i = lo; i < hi; i++)
        x[i] *= s;
}

static void FN(scale)(exec_dev *d, void *x, double s, int64_t n)
{
    FN(scale_args) a = {.x = x, .s = s};
    cpu_parallel(d, n, CPU_PAR_MIN, FN(scale_r), &a);
}

/* Sums by fixed blocks of CPU_SUM_BLOCK elements, added in block order: the
 * same result for any number of threads. */
#define CPU_SUM_BLOCK 65536

typedef struct {
    const REAL *x;
    int64_t n;
    int sq;                      /* 1: sum of squares */
    double *part;                /* one partial sum per block */
} FN(sum_args);

static void FN(sum_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(sum_args) *a = args;
    const REAL *x = a->x;
    int64_t n = a->n;
    int sq = a->sq;
    for (int64_t blk = lo; blk < hi; blk++) {
        int64_t i0 = blk * CPU_SUM_BLOCK, i1 = i0 + CPU_SUM_BLOCK < n ? i0 + CPU_SUM_BLOCK : n;
        double s = 0;
        if (sq)
            for (int64_t i = i0; i < i1; i++)
                s += (double)x[i] * (double)x[i];
        else
            for (int64_t i = i0; i < i1; i++)
                s += (double)x[i];
        a->part[blk] = s;
    }
}

static double FN(reduce)(exec_dev *d, const void *x, int64_t n, int sq)
{
    int64_t blocks = (n + CPU_SUM_BLOCK - 1) / CPU_SUM_BLOCK;
    double one = 0, *part = &one;
    if (blocks > 1 && !(part = cpu_scratch(d, (size_t)blocks * sizeof(double))))
        return NAN;
    FN(sum_args) a = {.x = x, .n = n, .sq = sq, .part = part};
    cpu_parallel(d, blocks, 2, FN(sum_r), &a);
    double s = 0;
    for (int64_t b = 0; b < blocks; b++)
        s += part[b];
    return s;
}

static double FN(sum)(exec_dev *d, const void *x, int64_t n)
{
    return FN(reduce)(d, x, n, 0);
}

static double FN(sumsq)(exec_dev *d, const void *x, int64_t n)
{
    return FN(reduce)(d, x, n, 1);
}

static void FN(acc_add)(exec_dev *d, exec_acc which, const void *x, int64_t n, double k)
{
    if (which == EXEC_ACC_LOSS)
        d->host_acc[which] += FN(reduce)(d, x, n, 0) * k;
    else
        d->host_acc[which] += FN(reduce)(d, x, n, 1);
}

static double FN(acc_take)(exec_dev *d, exec_acc which)
{
    double s = d->host_acc[which];
    d->host_acc[which] = 0;
    return s;
}

/* AdamW, llm.c's adamw_update: m, v moments with bias correction, the
 * decay decoupled from the gradient (Loshchilov & Hutter 2019). The
 * parameters are the master copy here (the device computes in its state
 * type), so master is unused. */
typedef struct {
    REAL *param, *m, *v;
    const REAL *grad;
    double beta1, beta2, grad_scale, eps;
    double lr, weight_decay;
    double ic1, ic2;             /* the bias corrections 1 / (1 - beta^step) */
} FN(adamw_args);

static void FN(adamw_r)(const void *args, int64_t lo, int64_t hi, int tid)
{
    const FN(adamw_args) *a = args;
    REAL *p = a->param, *m = a->m, *v = a->v;
    const REAL *g = a->grad;
    REAL b1 = (REAL)a->beta1, b2 = (REAL)a->beta2, gs = (REAL)a->grad_scale, eps = (REAL)a->eps;
    REAL lr = (REAL)a->lr, wd = (REAL)a->weight_decay, ic1 = (REAL)a->ic1, ic2 = (REAL)a->ic2;
    for (int64_t i = lo; i < hi; i++) {
        REAL gi = g[i] * gs;
        REAL mi = b1 * m[i] + ((REAL)1 - b1) * gi;
        REAL vi = b2 * v[i] + ((REAL)1 - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        REAL mh = mi * ic1, vh = vi * ic2;
        p[i] -= lr * (mh / (sqrt(vh) + eps) + wd * p[i]);
    }
}

static void FN(adamw)(exec_dev *d, void *param, void *master, const void *grad, void *m, void *v,
                      int64_t n, const exec_adamw *ad)
{
    double c1 = 1.0 - pow(ad->beta1, (double)ad->step), c2 = 1.0 - pow(ad->beta2, (double)ad->step);
    FN(adamw_args) a = {.param = param, .m = m, .v = v, .grad = grad, .beta1 = ad->beta1,
                        .beta2 = ad->beta2, .grad_scale = ad->grad_scale, .eps = ad->eps,
                        .lr = ad->lr, .weight_decay = ad->weight_decay, .ic1 = 1.0 / c1,
                        .ic2 = 1.0 / c2};
    cpu_parallel(d, n, CPU_PAR_MIN, FN(adamw_r), &a);
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
    .stat_dtype = CPU_DTYPE,
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
    .matmul_gelu_fwd = FN(matmul_gelu_fwd),
    .matmul_bwd_input_gelu = FN(matmul_bwd_input_gelu),
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
    .acc_add = FN(acc_add),
    .acc_take = FN(acc_take),
    .adamw = FN(adamw),
    .upload_f64 = FN(upload_f64),
    .download_f64 = FN(download_f64),
};

#undef FN
#undef CAT
#undef CAT_
#undef GELU_K
#undef CPU_SUM_BLOCK
#undef CPU_GEMM_ROWS
#undef CPU_GEMM_PAR_MIN
