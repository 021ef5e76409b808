/*
 * exec_cuda_kernels.h: the CUDA device's own kernels, as plain C entry
 * points (exec_cuda_kernels.cu defines them; exec_dev_cuda.c calls them).
 * Internal to exec/, built only with CUDA.
 *
 * Types: "bf16" buffers hold __nv_bfloat16 (the device's dtype), "f32"
 * float (its stat and state dtype); every kernel computes in fp32. Row
 * layouts are those of exec_dev.h (sequence-first activations, linear
 * weights (out, in)). Each entry point queues its work on stream s and
 * returns the launch's error (cudaGetLastError), never waits.
 */
#ifndef SMD_EXEC_CUDA_KERNELS_H
#define SMD_EXEC_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "exec/exec_init.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- embedding ---- */
cudaError_t exec_cuk_embed_fwd(cudaStream_t s, void *out, const int32_t *tok, const void *wte,
                               int64_t n, int64_t C, int64_t v0, int64_t vn);
/* Bytes of device scratch exec_cuk_embed_bwd needs for n tokens. */
size_t exec_cuk_embed_bwd_scratch(int64_t n, int64_t vn);
/* dwte[t - v0] += the sum of dout[i] over the tokens i with tok[i] = t in
 * [v0, v0 + vn), each row summing its tokens in index order (the tokens
 * sorted by row on the device: deterministic, no atomics, no host). */
cudaError_t exec_cuk_embed_bwd(cudaStream_t s, void *dwte, const void *dout, const int32_t *tok,
                               int64_t n, int64_t C, int64_t v0, int64_t vn, void *scratch,
                               size_t scratch_bytes);
cudaError_t exec_cuk_pos_fwd(cudaStream_t s, void *x, const void *wpe, int64_t T, int64_t B,
                             int64_t C, int64_t t0);
cudaError_t exec_cuk_pos_bwd(cudaStream_t s, void *dwpe, const void *dout, int64_t T, int64_t B,
                             int64_t C, int64_t t0);

/* ---- norms (mean, rstd f32; mean NULL for RMSNorm) ---- */
cudaError_t exec_cuk_norm_fwd(cudaStream_t s, void *out, float *mean, float *rstd,
                              const void *inp, const void *w, const void *b, int64_t n,
                              int64_t C, int rms, double eps);
cudaError_t exec_cuk_norm_bwd_input(cudaStream_t s, void *dinp, const void *dout,
                                    const void *inp, const void *w, const float *mean,
                                    const float *rstd, int64_t n, int64_t C, int rms,
                                    int accumulate);
/* Column sums over n rows, added into bf16 vectors of C: dw += sum of
 * dout * xhat (xhat from inp, mean, rstd; when inp is NULL, dw is NULL),
 * db += sum of dout (db may be NULL). partial holds nchunks x 2C floats
 * (exec_cuk_colsum_chunks). */
cudaError_t exec_cuk_colsum(cudaStream_t s, void *dw, void *db, const void *dout,
                            const void *inp, const float *mean, const float *rstd, int64_t n,
                            int64_t C, int rms, float *partial, int nchunks);
int exec_cuk_colsum_chunks(int64_t n);

/* ---- activations ---- */
cudaError_t exec_cuk_gelu_fwd(cudaStream_t s, void *out, const void *inp, int64_t n);
cudaError_t exec_cuk_gelu_bwd(cudaStream_t s, void *dinp, const void *inp, const void *dout,
                              int64_t n);
cudaError_t exec_cuk_swiglu_fwd(cudaStream_t s, void *out, const void *inp, int64_t n,
                                int64_t F);
cudaError_t exec_cuk_swiglu_bwd(cudaStream_t s, void *dinp, const void *inp, const void *dout,
                                int64_t n, int64_t F);
cudaError_t exec_cuk_rope(cudaStream_t s, void *x, int64_t T, int64_t B, int64_t H, int64_t hd,
                          int64_t ld, double theta, double sign);
cudaError_t exec_cuk_bias_rows(cudaStream_t s, void *out, const void *bias, int64_t n,
                               int64_t OC);

/* ---- attention, the plain path: heads permuted to [B, Hq, T, hd] for
 * cuBLASLt's strided batched products ---- */
/* q, k, v [B, Hq, T, hd] from qkv rows [T * B, (Hq + 2 Hkv) hd] (k, v of
 * kv head h / (Hq / Hkv) repeated for every query head). */
cudaError_t exec_cuk_attn_permute(cudaStream_t s, void *q, void *k, void *v, const void *qkv,
                                  int64_t T, int64_t B, int64_t Hq, int64_t Hkv, int64_t hd);
/* out rows [T * B, Hq hd] from o [B, Hq, T, hd]. */
cudaError_t exec_cuk_attn_unpermute(cudaStream_t s, void *out, const void *o, int64_t T,
                                    int64_t B, int64_t Hq, int64_t hd);
/* o [B, Hq, T, hd] from rows [T * B, Hq hd] (the inverse of unpermute). */
cudaError_t exec_cuk_attn_heads(cudaStream_t s, void *o, const void *rows, int64_t T, int64_t B,
                                int64_t Hq, int64_t hd);
/* dqkv rows from dq, dk, dv [B, Hq, T, hd], dk and dv summed over each kv
 * head's query heads (overwrites dqkv). */
cudaError_t exec_cuk_attn_unpermute_grad(cudaStream_t s, void *dqkv, const void *dq,
                                         const void *dk, const void *dv, int64_t T, int64_t B,
                                         int64_t Hq, int64_t Hkv, int64_t hd);
/* Causal softmax of rows of nmat T x T score matrices in place. */
cudaError_t exec_cuk_softmax_causal(cudaStream_t s, void *p, int64_t nmat, int64_t T);
/* dS = P (dP - rowsum(P dP)) in place over dp; masked entries 0. */
cudaError_t exec_cuk_softmax_causal_bwd(cudaStream_t s, void *dp, const void *p, int64_t nmat,
                                        int64_t T);

/* ---- attention, fused (FlashAttention-2 style), head sizes 16..128 in
 * steps of 16 ---- */
int exec_cuk_flash_supported(int64_t hd);
/* out [T * B, Hq hd] bf16, lse [B, Hq, T] f32. *flops: the products'
 * FLOPs the kernel runs (the tiles at or below the diagonal). */
cudaError_t exec_cuk_flash_fwd(cudaStream_t s, void *out, float *lse, const void *qkv, int64_t T,
                               int64_t B, int64_t Hq, int64_t Hkv, int64_t hd, double *flops);
/* The same forward on Hopper's warpgroup instructions (wgmma, sm_90a;
 * exec_cuda_attention_sm90.cu), head sizes 64 and 128, the same out and
 * lse; run only where exec_cuk_flash_sm90_ready(the GPU's ordinal). */
int exec_cuk_flash_sm90_supported(int64_t hd);
int exec_cuk_flash_sm90_ready(int ordinal);
cudaError_t exec_cuk_flash_fwd_sm90(cudaStream_t s, void *out, float *lse, const void *qkv,
                                    int64_t T, int64_t B, int64_t Hq, int64_t Hkv, int64_t hd,
                                    double *flops);
/* dqkv (overwritten) from dout, qkv, out, lse; dq_acc [B, Hq, T, hd] f32
 * and drow [B, Hq, T] f32 are scratch. sm90: the products on Hopper's
 * warpgroup kernel (head sizes 64 and 128; where ready). */
cudaError_t exec_cuk_flash_bwd(cudaStream_t s, void *dqkv, const void *dout, const void *qkv,
                               const void *out, const float *lse, float *dq_acc, float *drow,
                               int64_t T, int64_t B, int64_t Hq, int64_t Hkv, int64_t hd,
                               int sm90, double *flops);
/* Its middle kernel on Hopper (exec_cuda_attention_sm90.cu): the same grid
 * of 128 keys a block, drow and dq_acc ready. */
cudaError_t exec_cuk_flash_bwd_sm90_core(cudaStream_t s, void *dqkv, float *dq_acc,
                                         const void *dout, const void *qkv, const float *lse,
                                         const float *drow, int T, int B, int Hq, int Hkv,
                                         int hd);

/* ---- vocab-parallel cross-entropy (rowmax, stats, losses f32) ---- */
/* rowmax = each row's maximum, local [2n] = (maximum, sum of exp(logit -
 * maximum)) of this rank's columns, in one pass over the logits. */
cudaError_t exec_cuk_ce_rowmax(cudaStream_t s, float *rowmax, float *local, const void *logits,
                               int64_t n, int64_t vn);
/* stats = (sum of exp(logit - rowmax), target logit) from local (after
 * rowmax became the global maximum): no pass over the logits. */
cudaError_t exec_cuk_ce_stats(cudaStream_t s, float *stats, const float *local,
                              const void *logits, const float *rowmax, const int32_t *targets,
                              int64_t n, int64_t vn, int64_t v0);
cudaError_t exec_cuk_ce_loss_bwd(cudaStream_t s, float *losses, void *logits,
                                 const float *rowmax, const float *stats, const int32_t *targets,
                                 int64_t n, int64_t vn, int64_t v0, double scale);

/* ---- initial weights: dst[0 .. n) bf16 = elements k0 .. k0 + n of the
 * piece f describes (exec_init.h's draw, in double, rounded once to fp32
 * and then to bf16, as the host's upload of doubles rounds) ---- */
cudaError_t exec_cuk_init_fill(cudaStream_t s, void *dst, exec_init_fill f, int64_t k0, int64_t n);

/* ---- elementwise, reductions, optimizer ---- */
cudaError_t exec_cuk_add(cudaStream_t s, void *y, const void *a, const void *b, int64_t n);
cudaError_t exec_cuk_scale(cudaStream_t s, void *x, double v, int64_t n);
/* Partial sums of x (f32, sq 0) or of squares of x (bf16, sq 1) into
 * partial[exec_cuk_reduce_blocks(n)]; the host adds them in order. */
int exec_cuk_reduce_blocks(int64_t n);
cudaError_t exec_cuk_reduce(cudaStream_t s, double *partial, const void *x, int64_t n, int sq);
/* The same partials, times k, added into acc[exec_cuk_reduce_blocks_max()]
 * (block b into acc[b]): a running sum the host reads once. */
int exec_cuk_reduce_blocks_max(void);
cudaError_t exec_cuk_reduce_acc(cudaStream_t s, double *acc, const void *x, int64_t n, int sq,
                                double k);
cudaError_t exec_cuk_adamw(cudaStream_t s, void *param, float *master, const void *grad,
                           float *m, float *v, int64_t n, double lr, double beta1, double beta2,
                           double eps, double wd, double grad_scale, double ic1, double ic2);
/* AdamW over many ranges in one launch (exec_dev.h's adamw_multi): each
 * range gets ceil(n / EXEC_CUK_AW_CHUNK) blocks from block0 on (block0 the
 * sum of the earlier ranges' blocks); vec 1 when every pointer is 16-byte
 * aligned and n a multiple of 8 (16-byte loads), 0 otherwise. The table
 * lives in device memory. */
#define EXEC_CUK_AW_CHUNK 2048
typedef struct exec_cuk_aw_range {
    void *param;
    float *master, *m, *v;
    const void *grad;
    int64_t n, block0;
    float wd;
    int vec;
} exec_cuk_aw_range;
cudaError_t exec_cuk_adamw_multi(cudaStream_t s, const exec_cuk_aw_range *table, int nr,
                                 int64_t blocks, double lr, double beta1, double beta2, double eps,
                                 double grad_scale, double ic1, double ic2);
cudaError_t exec_cuk_widen(cudaStream_t s, float *dst, const void *src, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
