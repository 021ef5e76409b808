/*
 * exec_dev_cpu_bf16.c: "cpu-bf16", the CPU device that rounds like the CUDA
 * device stores: every parameter, activation and gradient an operation
 * writes is rounded to bf16 (round to nearest even, NaN kept) while the
 * arithmetic inside the operation stays the fp32 CPU device's; master
 * weights, Adam's moments and the per-row statistics stay fp32, as on the
 * GPU (exec_dev_cuda.c: Micikevicius et al. 2018's mixed precision with
 * bf16). It is the reference the GPU is compared with: both round the same
 * stored values the same way, so what remains between them is the order of
 * the fp32 sums and the roundings a GPU kernel makes inside itself (the
 * plain attention's scores before the softmax, the fused attention's
 * probabilities before P V), which test_gpu_train's tolerances count.
 *
 * Storage stays fp32 (4 bytes a value, so the host transports and the
 * checkpoints take it as the "cpu" device's), holding values a bf16 can
 * hold. Each operation is the "cpu" table's, followed by the rounding of
 * what it wrote; AdamW updates the fp32 master and rounds the parameter
 * from it, as the CUDA device's kernel does.
 */
#include <stdint.h>
#include <string.h>

#include "exec/exec_bf16.h"
#include "exec/exec_dev.h"
#include "exec/exec_dev_int.h"

#define F32 (&exec_dev_cpu_ops)

static void rnd(void *p, int64_t n)
{
    float *x = p;
    for (int64_t i = 0; i < n; i++)
        x[i] = exec_bf16_round(x[i]);
}

static void b_embed_fwd(exec_dev *d, void *out, const int32_t *tok, const void *wte, int64_t n,
                        int64_t C, int64_t v0, int64_t vn)
{
    F32->embed_fwd(d, out, tok, wte, n, C, v0, vn);
    rnd(out, n * C);
}

static void b_embed_bwd(exec_dev *d, void *dwte, const void *dout, const int32_t *tok, int64_t n,
                        int64_t C, int64_t v0, int64_t vn)
{
    F32->embed_bwd(d, dwte, dout, tok, n, C, v0, vn);
    rnd(dwte, vn * C);
}

static void b_pos_fwd(exec_dev *d, void *x, const void *wpe, int64_t T, int64_t B, int64_t C,
                      int64_t t0)
{
    F32->pos_fwd(d, x, wpe, T, B, C, t0);
    rnd(x, T * B * C);
}

static void b_pos_bwd(exec_dev *d, void *dwpe, const void *dout, int64_t T, int64_t B, int64_t C,
                      int64_t t0)
{
    F32->pos_bwd(d, dwpe, dout, T, B, C, t0);
    rnd((float *)dwpe + t0 * C, T * C);
}

static void b_norm_fwd(exec_dev *d, void *out, void *mean, void *rstd, const void *inp,
                       const void *w, const void *b, int64_t n, int64_t C, int rms)
{
    F32->norm_fwd(d, out, mean, rstd, inp, w, b, n, C, rms);
    rnd(out, n * C);
}

static void b_norm_bwd_input(exec_dev *d, void *dinp, const void *dout, const void *inp,
                             const void *w, const void *mean, const void *rstd, int64_t n,
                             int64_t C, int rms, int accumulate)
{
    F32->norm_bwd_input(d, dinp, dout, inp, w, mean, rstd, n, C, rms, accumulate);
    rnd(dinp, n * C);
}

static void b_norm_bwd_weight(exec_dev *d, void *dw, void *db, const void *dout, const void *inp,
                              const void *mean, const void *rstd, int64_t n, int64_t C, int rms)
{
    F32->norm_bwd_weight(d, dw, db, dout, inp, mean, rstd, n, C, rms);
    rnd(dw, C);
    if (db)
        rnd(db, C);
}

/* The residual in fp32 before the one rounding, as the GPU's epilogue adds
 * it (cuBLASLt: fp32 alpha A B + beta C, then bf16). */
static void b_matmul_fwd(exec_dev *d, void *out, const void *inp, const void *w, const void *bias,
                         const void *res, int64_t n, int64_t C, int64_t OC)
{
    F32->matmul_fwd(d, out, inp, w, bias, res, n, C, OC);
    rnd(out, n * OC);
}

static void b_matmul_bwd_input(exec_dev *d, void *dinp, const void *dout, const void *w, int64_t n,
                               int64_t C, int64_t OC, int accumulate)
{
    F32->matmul_bwd_input(d, dinp, dout, w, n, C, OC, accumulate);
    rnd(dinp, n * C);
}

static void b_matmul_bwd_weight(exec_dev *d, void *dw, void *dbias, const void *dout,
                                const void *inp, int64_t n, int64_t C, int64_t OC)
{
    F32->matmul_bwd_weight(d, dw, dbias, dout, inp, n, C, OC);
    rnd(dw, OC * C);
    if (dbias)
        rnd(dbias, OC);
}

static void b_gelu_fwd(exec_dev *d, void *out, const void *inp, int64_t n)
{
    F32->gelu_fwd(d, out, inp, n);
    rnd(out, n);
}

static void b_gelu_bwd(exec_dev *d, void *dinp, const void *inp, const void *dout, int64_t n)
{
    F32->gelu_bwd(d, dinp, inp, dout, n);
    rnd(dinp, n);
}

/* As the GPU's epilogue: the GELU of the fp32 sum, then both rounded. */
static void b_matmul_gelu_fwd(exec_dev *d, void *act, void *pre, const void *inp, const void *w,
                              const void *bias, int64_t n, int64_t C, int64_t OC)
{
    F32->matmul_gelu_fwd(d, act, pre, inp, w, bias, n, C, OC);
    rnd(act, n * OC);
    rnd(pre, n * OC);
}

/* gelu'(pre) (pre as stored, bf16) times the fp32 product, rounded once. */
static void b_matmul_bwd_input_gelu(exec_dev *d, void *dpre, const void *dout, const void *w,
                                    const void *pre, int64_t n, int64_t C, int64_t OC)
{
    F32->matmul_bwd_input_gelu(d, dpre, dout, w, pre, n, C, OC);
    rnd(dpre, n * C);
}

static void b_swiglu_fwd(exec_dev *d, void *out, const void *inp, int64_t n, int64_t F)
{
    F32->swiglu_fwd(d, out, inp, n, F);
    rnd(out, n * F);
}

static void b_swiglu_bwd(exec_dev *d, void *dinp, const void *inp, const void *dout, int64_t n,
                         int64_t F)
{
    F32->swiglu_bwd(d, dinp, inp, dout, n, F);
    rnd(dinp, n * 2 * F);
}

/* RoPE rotates heads in place inside rows of stride ld: round those. */
static void rnd_heads(void *x, int64_t rows, int64_t H, int64_t hd, int64_t ld)
{
    for (int64_t r = 0; r < rows; r++)
        rnd((float *)x + r * ld, H * hd);
}

static void b_rope_fwd(exec_dev *d, void *x, int64_t T, int64_t B, int64_t H, int64_t hd,
                       int64_t ld, double theta)
{
    F32->rope_fwd(d, x, T, B, H, hd, ld, theta);
    rnd_heads(x, T * B, H, hd, ld);
}

static void b_rope_bwd(exec_dev *d, void *dx, int64_t T, int64_t B, int64_t H, int64_t hd,
                       int64_t ld, double theta)
{
    F32->rope_bwd(d, dx, T, B, H, hd, ld, theta);
    rnd_heads(dx, T * B, H, hd, ld);
}

static void b_attention_fwd(exec_dev *d, void *out, void *probs, const void *qkv, int64_t T,
                            int64_t B, int64_t Hq, int64_t Hkv, int64_t hd)
{
    F32->attention_fwd(d, out, probs, qkv, T, B, Hq, Hkv, hd);
    rnd(probs, B * Hq * T * T);
    if (out)
        rnd(out, T * B * Hq * hd);
}

static void b_attention_bwd(exec_dev *d, void *dqkv, void *dprobs, const void *dout,
                            const void *qkv, const void *probs, int64_t T, int64_t B, int64_t Hq,
                            int64_t Hkv, int64_t hd)
{
    F32->attention_bwd(d, dqkv, dprobs, dout, qkv, probs, T, B, Hq, Hkv, hd);
    rnd(dqkv, T * B * (Hq + 2 * Hkv) * hd);
}

/* The cross-entropy's statistics and losses are fp32 on the GPU too; the
 * logits' gradient is stored in bf16. */
static void b_ce_loss_bwd(exec_dev *d, void *losses, void *logits, const void *rowmax,
                          const void *stats, const int32_t *targets, int64_t n, int64_t vn,
                          int64_t v0, double scale)
{
    F32->ce_loss_bwd(d, losses, logits, rowmax, stats, targets, n, vn, v0, scale);
    rnd(logits, n * vn);
}

static void b_add(exec_dev *d, void *y, const void *x, int64_t n)
{
    F32->add(d, y, x, n);
    rnd(y, n);
}

static void b_add3(exec_dev *d, void *out, const void *a, const void *b, int64_t n)
{
    F32->add3(d, out, a, b, n);
    rnd(out, n);
}

static void b_scale(exec_dev *d, void *x, double s, int64_t n)
{
    F32->scale(d, x, s, n);
    rnd(x, n);
}

/* AdamW on the fp32 master (the "cpu" op updates what it is given as the
 * parameter), then the parameter is the master rounded. */
static void b_adamw(exec_dev *d, void *param, void *master, const void *grad, void *m, void *v,
                    int64_t n, const exec_adamw *a)
{
    F32->adamw(d, master, NULL, grad, m, v, n, a);
    const float *src = master;
    float *dst = param;
    for (int64_t i = 0; i < n; i++)
        dst[i] = exec_bf16_round(src[i]);
}

static void b_widen(exec_dev *d, void *dst, const void *src, int64_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(float));
}

static void b_upload_f64(exec_dev *d, void *dst, const double *src, int64_t n)
{
    float *x = dst;
    for (int64_t i = 0; i < n; i++)
        x[i] = exec_bf16_round((float)src[i]);
}

/* What needs no rounding is the "cpu" device's own: opening, memory,
 * copies, the fp32 statistics and the reductions to the host. */
static int b_open(exec_dev *d, int threads, st_err *err)
{
    return F32->open(d, threads, err);
}

static void b_close(exec_dev *d)
{
    F32->close(d);
}

static void *b_alloc(exec_dev *d, size_t bytes, exec_mem_class c)
{
    return F32->alloc(d, bytes, c);
}

static void b_free(exec_dev *d, void *p)
{
    F32->free(d, p);
}

static void b_copy(exec_dev *d, void *dst, const void *src, size_t bytes)
{
    F32->copy(d, dst, src, bytes);
}

static void b_zero(exec_dev *d, void *p, size_t bytes)
{
    F32->zero(d, p, bytes);
}

static int b_sync(exec_dev *d, st_err *err)
{
    return F32->sync(d, err);
}

static void *b_stream(exec_dev *d)
{
    return F32->stream(d);
}

static void b_ce_rowmax(exec_dev *d, void *rowmax, const void *logits, int64_t n, int64_t vn)
{
    F32->ce_rowmax(d, rowmax, logits, n, vn);
}

static void b_ce_stats(exec_dev *d, void *stats, void *logits, const void *rowmax,
                       const int32_t *targets, int64_t n, int64_t vn, int64_t v0)
{
    F32->ce_stats(d, stats, logits, rowmax, targets, n, vn, v0);
}

static double b_sum(exec_dev *d, const void *x, int64_t n)
{
    return F32->sum(d, x, n);
}

static double b_sumsq(exec_dev *d, const void *x, int64_t n)
{
    return F32->sumsq(d, x, n);
}

static void b_acc_add(exec_dev *d, exec_acc which, const void *x, int64_t n, double k)
{
    F32->acc_add(d, which, x, n, k);
}

static double b_acc_take(exec_dev *d, exec_acc which)
{
    return F32->acc_take(d, which);
}

static void b_download_f64(exec_dev *d, double *dst, const void *src, int64_t n)
{
    F32->download_f64(d, dst, src, n);
}

const exec_dev_ops exec_dev_cpu_bf16_ops = {
    .name = "cpu-bf16",
    .dtype = EXEC_DT_F32,
    .state_dtype = EXEC_DT_F32,
    .stat_dtype = EXEC_DT_F32,
    .has_master = 1,
    .host_memory = 1,
    .open = b_open,
    .close = b_close,
    .alloc = b_alloc,
    .free = b_free,
    .upload = b_copy,
    .download = b_copy,
    .copy = b_copy,
    .zero = b_zero,
    .sync = b_sync,
    .stream = b_stream,
    .embed_fwd = b_embed_fwd,
    .embed_bwd = b_embed_bwd,
    .pos_fwd = b_pos_fwd,
    .pos_bwd = b_pos_bwd,
    .norm_fwd = b_norm_fwd,
    .norm_bwd_input = b_norm_bwd_input,
    .norm_bwd_weight = b_norm_bwd_weight,
    .matmul_fwd = b_matmul_fwd,
    .matmul_bwd_input = b_matmul_bwd_input,
    .matmul_bwd_weight = b_matmul_bwd_weight,
    .gelu_fwd = b_gelu_fwd,
    .gelu_bwd = b_gelu_bwd,
    .matmul_gelu_fwd = b_matmul_gelu_fwd,
    .matmul_bwd_input_gelu = b_matmul_bwd_input_gelu,
    .swiglu_fwd = b_swiglu_fwd,
    .swiglu_bwd = b_swiglu_bwd,
    .rope_fwd = b_rope_fwd,
    .rope_bwd = b_rope_bwd,
    .attention_fwd = b_attention_fwd,
    .attention_bwd = b_attention_bwd,
    .ce_rowmax = b_ce_rowmax,
    .ce_stats = b_ce_stats,
    .ce_loss_bwd = b_ce_loss_bwd,
    .add = b_add,
    .add3 = b_add3,
    .scale = b_scale,
    .sum = b_sum,
    .sumsq = b_sumsq,
    .acc_add = b_acc_add,
    .acc_take = b_acc_take,
    .adamw = b_adamw,
    .widen = b_widen,
    .upload_f64 = b_upload_f64,
    .download_f64 = b_download_f64,
};
