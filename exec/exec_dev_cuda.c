/*
 * exec_dev_cuda.c: the CUDA device ("cuda"): parameters, activations and
 * gradients in bf16, master weights, Adam moments and per-row statistics in
 * fp32 (Micikevicius et al. 2018's mixed precision with bf16's range, so
 * no loss scaling), every operation queued on one compute stream.
 *
 *  - Matrix products on cuBLASLt (exec_matmul_cuda.c): bf16 in and out,
 *    fp32 accumulation, the linear layers' bias in the product's epilogue
 *    where cuBLASLt has an algorithm for it, a bias kernel otherwise. The
 *    plain attention is strided batched products over the heads permuted
 *    to [B, Hq, T, hd], with the causal softmax between them (the path the
 *    planner models without flash attention: the T x T probabilities are
 *    kept).
 *  - Everything else is this project's kernels (exec_cuda_kernels.cu),
 *    including the fused attention and the fused softmax cross-entropy
 *    over the LM head's logits (vocab-parallel, as the CPU device).
 *  - Memory: every buffer the executor asks for comes from the device's
 *    pool (exec_alloc_cuda.c: blocks reserved once per buffer class, never
 *    given back to CUDA until the device closes). The device's own scratch
 *    (cuBLASLt's workspace, the plain attention's permuted heads, partial
 *    sums) is counted as workspace. The peak in use on the GPU as CUDA
 *    sees it (cudaMemGetInfo: total - free) is sampled at every sync into
 *    device_peak_bytes.
 *  - Errors: every CUDA and cuBLASLt call is checked; the first failure is
 *    recorded with CUDA's own message, the call and its place, and every
 *    later operation becomes a no-op; sync() returns it (ST_EIO), as
 *    exec_dev.h documents. Out of memory on alloc returns NULL at once.
 *  - Host copies (upload, download and their f64 forms) are ordered after
 *    the queued work and wait for their own completion; everything else
 *    returns as soon as it is queued.
 *  - Built as the module smdplan-cuda.so with its kernels, its allocator
 *    and its products (exec_module.h): a process loads CUDA's libraries
 *    when it first asks for this device.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "exec/exec_bf16.h"
#include "exec/exec_cuda.h"
#include "exec/exec_cuda_kernels.h"
#include "exec/exec_dev.h"
#include "exec/exec_dev_cuda_int.h"
#include "exec/exec_dev_int.h"
#include "exec/exec_module.h"

typedef struct cuda_dev {
    int ordinal;
    cudaStream_t stream;
    exec_cuda_lt lt;             /* cuBLASLt and its plans */
    st_err fail;                 /* the first failure (sticky) */
    exec_cuda_pool pool;         /* the executor's buffers */
    void *scratch;               /* device scratch, grown on demand */
    size_t scratch_bytes;
    void *host;                  /* host scratch (conversions, the embedding's buckets) */
    size_t host_bytes;
    double total_bytes;          /* the GPU's memory */
    exec_cuk_aw_range *aw_host; /* adamw_multi's table: pinned host memory */
    exec_cuk_aw_range *aw_dev;  /* and its copy on the device */
    int aw_cap;
    cudaEvent_t aw_copied;       /* the table's last upload, waited for before refilling */
    int aw_pending;
    float *ce_local;             /* ce_rowmax's per-row (maximum, sum) for ce_stats */
    size_t ce_local_bytes;
    double *acc;                 /* acc_add's running sums: EXEC_ACC__COUNT x
                                  * exec_cuk_reduce_blocks_max() block partials */
    int attn_sm90;               /* the fused attention on Hopper's wgmma kernels */
    char desc[400];              /* describe() */
} cuda_dev;

static cuda_dev *cu(exec_dev *d)
{
    return d->impl;
}

/* ---- errors ---- */

static int ck_at(exec_dev *d, cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return 0;
    st_raise(&cu(d)->fail, ST_EIO, file, line, "cuda: %s: %s (%s)", what, cudaGetErrorString(e),
             cudaGetErrorName(e));
    return 1;
}

#define CK(d, call) ck_at((d), (call), #call, __FILE__, __LINE__)
/* A kernel's launch: its name for the message. */
#define CKK(d, call, name) ck_at((d), (call), name, __FILE__, __LINE__)

static int failed(exec_dev *d)
{
    return cu(d)->fail.code != ST_OK;
}

/* ---- memory accounting of the device's own buffers ---- */

static void account(exec_dev *d, double delta)
{
    exec_mem *m = &d->mem;
    m->cur_bytes[EXEC_MEM_WORKSPACE] += delta;
    m->cur_total_bytes += delta;
    if (m->cur_bytes[EXEC_MEM_WORKSPACE] > m->peak_class_bytes[EXEC_MEM_WORKSPACE])
        m->peak_class_bytes[EXEC_MEM_WORKSPACE] = m->cur_bytes[EXEC_MEM_WORKSPACE];
    if (m->cur_total_bytes > m->peak_total_bytes)
        m->peak_total_bytes = m->cur_total_bytes;
}

/* Device scratch of at least bytes for the op being queued (ops on the
 * stream run one after the other, so one buffer serves them all). Growing
 * frees the old one: cudaFree waits for the work using it. */
static void *scratch(exec_dev *d, size_t bytes)
{
    cuda_dev *c = cu(d);
    if (failed(d))
        return NULL;
    if (bytes <= c->scratch_bytes)
        return c->scratch;
    size_t round = EXEC_CUDA_ROUND_BYTES, want = (bytes + round - 1) / round * round;
    if (c->scratch) {
        CK(d, cudaFree(c->scratch));
        account(d, -(double)c->scratch_bytes);
        c->scratch = NULL;
        c->scratch_bytes = 0;
    }
    if (CK(d, cudaMalloc(&c->scratch, want)))
        return NULL;
    c->scratch_bytes = want;
    account(d, (double)want);
    return c->scratch;
}

static void *host_scratch(exec_dev *d, size_t bytes)
{
    cuda_dev *c = cu(d);
    if (bytes <= c->host_bytes)
        return c->host;
    void *p = realloc(c->host, bytes);
    if (!p) {
        ST_RAISE(&c->fail, ST_ENOMEM, "cuda: cannot allocate %zu bytes of host staging", bytes);
        return NULL;
    }
    c->host = p;
    c->host_bytes = bytes;
    return p;
}

/* ---- memory ---- */

static void *cuda_alloc(exec_dev *d, size_t bytes, exec_mem_class cls)
{
    cuda_dev *c = cu(d);
    if (failed(d))
        return NULL;
    size_t size = 0;
    void *p = exec__cuda_pool_alloc(&c->pool, bytes, cls, &size);
    /* exec_dev_alloc's contract: zeroed (queued: every use is on the stream) */
    if (p)
        CK(d, cudaMemsetAsync(p, 0, size, c->stream));
    return p;
}

static void cuda_free(exec_dev *d, void *ptr)
{
    if (exec__cuda_pool_free(&cu(d)->pool, ptr) != 0)
        st_raise(&cu(d)->fail, ST_EINTERNAL, __FILE__, __LINE__,
                 "cuda: free of %p, not allocated here", ptr);
}

/* ---- open, close, sync ---- */

static void cuda_close(exec_dev *d)
{
    cuda_dev *c = cu(d);
    if (!c)
        return;
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    exec__cuda_pool_fini(&c->pool);
    if (c->scratch)
        cudaFree(c->scratch);
    if (c->acc)
        cudaFree(c->acc);
    if (c->ce_local)
        cudaFree(c->ce_local);
    if (c->aw_pending)
        cudaEventSynchronize(c->aw_copied);
    if (c->aw_copied)
        cudaEventDestroy(c->aw_copied);
    if (c->aw_host)
        cudaFreeHost(c->aw_host);
    if (c->aw_dev)
        cudaFree(c->aw_dev);
    exec__cuda_lt_close(&c->lt);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c->host);
    free(c);
    d->impl = NULL;
}

static void sample_memory(exec_dev *d)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    double used = (double)total_b - (double)free_b;
    if (used > d->device_peak_bytes)
        d->device_peak_bytes = used;
    cu(d)->total_bytes = (double)total_b;
}

/* Which fused attention forward runs: Hopper's warpgroup kernel where this
 * GPU has its image (exec_cuda_attention_sm90.cu), else the sm_80 one;
 * SMDPLAN_CUDA_ATTENTION=sm80 or sm90 asks for one (to compare them on
 * one GPU), auto or unset chooses. */
static int attention_kernel(cuda_dev *c, const char *gpu, st_err *err)
{
    const char *want = getenv("SMDPLAN_CUDA_ATTENTION");
    if (want && !*want)
        want = NULL;
    if (want && strcmp(want, "auto") && strcmp(want, "sm80") && strcmp(want, "sm90"))
        return ST_RAISE(err, ST_EINVAL, "SMDPLAN_CUDA_ATTENTION=%s: allowed auto, sm80, sm90",
                        want);
    int ready = exec_cuk_flash_sm90_ready(c->ordinal);
    if (want && !strcmp(want, "sm90") && !ready)
        return ST_RAISE(err, ST_EUNSUPPORTED,
                        "SMDPLAN_CUDA_ATTENTION=sm90: GPU %d (%s) does not run the sm_90a "
                        "kernel (compute capability 9.0 needed); allowed here: auto, sm80",
                        c->ordinal, gpu);
    c->attn_sm90 = ready && !(want && !strcmp(want, "sm80"));
    return ST_OK;
}

static int cuda_open(exec_dev *d, int threads, st_err *err)
{
    cuda_dev *c = calloc(1, sizeof *c);
    if (!c)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the cuda device");
    d->impl = c;
    int rc = exec__cuda_select(&c->ordinal, err);
    if (rc != ST_OK)
        goto fail;
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, c->ordinal);
    if (e != cudaSuccess) {
        rc = ST_RAISE(err, ST_EUNSUPPORTED, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
        goto fail;
    }
    /* bf16 tensor cores and the fused attention's WMMA need compute
     * capability 8.0 (Ampere) or newer */
    if (prop.major < 8) {
        rc = ST_RAISE(err, ST_EUNSUPPORTED, "GPU %d (%s) has compute capability %d.%d; the cuda "
                      "device needs 8.0 or newer (bf16)", c->ordinal, prop.name, prop.major,
                      prop.minor);
        goto fail;
    }
    if ((rc = attention_kernel(c, prop.name, err)) != ST_OK)
        goto fail;
    d->mem_total_bytes = (double)prop.totalGlobalMem;
    snprintf(c->desc, sizeof c->desc,
             "%.200s, compute capability %d.%d, %.1f GiB, %d SMs, GPU %d, fused attention %s",
             prop.name, prop.major, prop.minor, (double)prop.totalGlobalMem / 1073741824.0,
             prop.multiProcessorCount, c->ordinal,
             c->attn_sm90 ? "sm90 (wgmma)" : "sm80 (mma.sync)");
    if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        rc = ST_RAISE(err, ST_EIO, "cuda: %s", cudaGetErrorString(e));
        goto fail;
    }
    if ((rc = exec__cuda_lt_open(&c->lt, c->stream, &c->fail, err)) != ST_OK)
        goto fail;
    account(d, (double)EXEC_CUDA_LT_WORKSPACE);
    size_t acc_bytes =
        (size_t)EXEC_ACC__COUNT * (size_t)exec_cuk_reduce_blocks_max() * sizeof(double);
    if ((e = cudaMalloc((void **)&c->acc, acc_bytes)) != cudaSuccess ||
        (e = cudaMemset(c->acc, 0, acc_bytes)) != cudaSuccess) {
        rc = ST_RAISE(err, ST_EIO, "cuda: %s", cudaGetErrorString(e));
        goto fail;
    }
    account(d, (double)acc_bytes);
    sample_memory(d);
    return ST_OK;
fail:
    cuda_close(d);
    return rc;
}

static int cuda_sync(exec_dev *d, st_err *err)
{
    cuda_dev *c = cu(d);
    if (!failed(d))
        CK(d, cudaStreamSynchronize(c->stream));
    if (!failed(d))
        CK(d, cudaGetLastError());
    sample_memory(d);
    if (failed(d))
        return ST_RAISE(err, c->fail.code, "%s", c->fail.msg);
    return ST_OK;
}

static void *cuda_stream(exec_dev *d)
{
    return cu(d)->stream;
}

static const char *cuda_describe(exec_dev *d)
{
    return cu(d)->desc;
}

/* ---- copies ---- */

static void copy_kind(exec_dev *d, void *dst, const void *src, size_t bytes,
                      enum cudaMemcpyKind kind, int wait)
{
    if (failed(d) || !bytes)
        return;
    cuda_dev *c = cu(d);
    if (!CK(d, cudaMemcpyAsync(dst, src, bytes, kind, c->stream)) && wait)
        CK(d, cudaStreamSynchronize(c->stream));
}

static void cuda_upload(exec_dev *d, void *dst, const void *src, size_t bytes)
{
    copy_kind(d, dst, src, bytes, cudaMemcpyHostToDevice, 1);
}

static void cuda_download(exec_dev *d, void *dst, const void *src, size_t bytes)
{
    copy_kind(d, dst, src, bytes, cudaMemcpyDeviceToHost, 1);
}

static void cuda_copy(exec_dev *d, void *dst, const void *src, size_t bytes)
{
    if (dst != src)
        copy_kind(d, dst, src, bytes, cudaMemcpyDeviceToDevice, 0);
}

static void cuda_zero(exec_dev *d, void *p, size_t bytes)
{
    if (!failed(d) && bytes)
        CK(d, cudaMemsetAsync(p, 0, bytes, cu(d)->stream));
}

static void cuda_upload_f64(exec_dev *d, void *dst, const double *src, int64_t n)
{
    uint16_t *h = host_scratch(d, (size_t)n * sizeof *h + 1);
    if (!h || failed(d))
        return;
    for (int64_t i = 0; i < n; i++)
        h[i] = exec_bf16_from_f32((float)src[i]);
    cuda_upload(d, dst, h, (size_t)n * sizeof *h);
}

static void cuda_download_f64(exec_dev *d, double *dst, const void *src, int64_t n)
{
    uint16_t *h = host_scratch(d, (size_t)n * sizeof *h + 1);
    if (!h || failed(d))
        return;
    cuda_download(d, h, src, (size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++)
        dst[i] = failed(d) ? NAN : (double)exec_bf16_to_f32(h[i]);
}

/* ---- matrix products (exec_matmul_cuda.c; column-major, as cuBLAS sees them) ---- */

static int lt_matmul(exec_dev *d, int ta, int tb, int64_t m, int64_t n, int64_t k,
                     const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                     int64_t sb, void *D, int64_t ldd, int64_t sd, int batch, float alpha,
                     float beta, const void *bias, int bgrad)
{
    return exec__cuda_lt_matmul(&cu(d)->lt, ta, tb, m, n, k, A, lda, sa, B, ldb, sb, D, ldd, sd,
                                batch, alpha, beta, bias, bgrad, NULL);
}

/* ---- linear ---- */

/* out[n, OC] = inp[n, C] W[OC, C]^T + bias, i.e. column-major out^T (OC x n)
 * = W (C x OC stored, transposed) inp^T (C x n). */
static void cuda_matmul_fwd(exec_dev *d, void *out, const void *inp, const void *w,
                            const void *bias, const void *res, int64_t n, int64_t C, int64_t OC)
{
    /* a residual is the product's C operand (beta 1), read in its epilogue */
    float beta = res ? 1.0f : 0.0f;
    cuda_dev *c = cu(d);
    if (exec__cuda_lt_matmul(&c->lt, 1, 0, OC, n, C, w, C, 0, inp, C, 0, out, OC, 0, 1, 1.0f,
                             beta, bias, 0, res)) {
        exec__cuda_lt_matmul(&c->lt, 1, 0, OC, n, C, w, C, 0, inp, C, 0, out, OC, 0, 1, 1.0f,
                             beta, NULL, 0, res);
        if (!failed(d))
            CKK(d, exec_cuk_bias_rows(c->stream, out, bias, n, OC), "bias_rows");
    }
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

/* dinp[n, C] (+)= dout[n, OC] W[OC, C]: dinp^T (C x n) = W^T (C x OC) dout^T. */
static void cuda_matmul_bwd_input(exec_dev *d, void *dinp, const void *dout, const void *w,
                                  int64_t n, int64_t C, int64_t OC, int accumulate)
{
    lt_matmul(d, 0, 0, C, n, OC, w, C, 0, dout, OC, 0, dinp, C, 0, 1, 1.0f,
              accumulate ? 1.0f : 0.0f, NULL, 0);
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

static void cuda_gelu_fwd(exec_dev *d, void *out, const void *inp, int64_t n);
static void cuda_gelu_bwd(exec_dev *d, void *dinp, const void *inp, const void *dout, int64_t n);

/* act, pre [n, OC]: pre = inp W^T + bias, act = gelu(pre), in one product
 * (cuBLASLt's GELU_AUX_BIAS epilogue writes pre as its auxiliary output):
 * a pass over the activations (read pre, write act) fewer; else the
 * product, then the GELU's kernel. */
static void cuda_matmul_gelu_fwd(exec_dev *d, void *act, void *pre, const void *inp,
                                 const void *w, const void *bias, int64_t n, int64_t C,
                                 int64_t OC)
{
    if (!bias || exec__cuda_lt_matmul_gelu(&cu(d)->lt, EXEC_CUDA_GELU_FWD, 1, 0, OC, n, C, w, C,
                                           inp, C, act, OC, bias, pre)) {
        cuda_matmul_fwd(d, pre, inp, w, bias, NULL, n, C, OC);
        cuda_gelu_fwd(d, act, pre, n * OC);
        return;
    }
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

/* dpre[n, C] = gelu'(pre) * (dout[n, OC] W[OC, C]) in one product (DGELU:
 * pre the epilogue's auxiliary input): a pass over the activations (write
 * the product, read it and pre, write the gradient) fewer; else the product
 * into dpre and the GELU's gradient in place. */
static void cuda_matmul_bwd_input_gelu(exec_dev *d, void *dpre, const void *dout, const void *w,
                                       const void *pre, int64_t n, int64_t C, int64_t OC)
{
    if (exec__cuda_lt_matmul_gelu(&cu(d)->lt, EXEC_CUDA_GELU_BWD, 0, 0, C, n, OC, w, C, dout, OC,
                                  dpre, C, NULL, (void *)pre)) {
        cuda_matmul_bwd_input(d, dpre, dout, w, n, C, OC, 0);
        cuda_gelu_bwd(d, dpre, pre, dpre, n * C);
        return;
    }
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

static void colsum(exec_dev *d, void *dw, void *db, const void *dout, const void *inp,
                   const void *mean, const void *rstd, int64_t n, int64_t C, int rms)
{
    int chunks = exec_cuk_colsum_chunks(n);
    float *part = scratch(d, (size_t)chunks * 2 * (size_t)C * sizeof(float));
    if (part)
        CKK(d, exec_cuk_colsum(cu(d)->stream, dw, db, dout, inp, mean, rstd, n, C, rms, part,
                               chunks),
            "colsum");
}

/* dw[OC, C] += dout^T inp: dw^T (C x OC) = inp^T (C x n) dout (n x OC). */
static void cuda_matmul_bwd_weight(exec_dev *d, void *dw, void *dbias, const void *dout,
                                   const void *inp, int64_t n, int64_t C, int64_t OC)
{
    void *db = NULL;
    if (dbias) /* the product writes the bias gradient; it is then added */
        db = scratch(d, (size_t)OC * 2);
    if (!dbias ||
        (db && !lt_matmul(d, 0, 1, C, OC, n, inp, C, 0, dout, OC, 0, dw, C, 0, 1, 1.0f, 1.0f, db,
                          1))) {
        if (!dbias)
            lt_matmul(d, 0, 1, C, OC, n, inp, C, 0, dout, OC, 0, dw, C, 0, 1, 1.0f, 1.0f, NULL, 0);
        else if (!failed(d))
            CKK(d, exec_cuk_add(cu(d)->stream, dbias, db, NULL, OC), "add (bias gradient)");
    } else if (!failed(d)) { /* no algorithm with the epilogue: sum the columns apart */
        lt_matmul(d, 0, 1, C, OC, n, inp, C, 0, dout, OC, 0, dw, C, 0, 1, 1.0f, 1.0f, NULL, 0);
        colsum(d, NULL, dbias, dout, NULL, NULL, NULL, n, OC, 0);
    }
    d->flops += 2.0 * (double)n * (double)C * (double)OC;
}

/* ---- embedding ---- */

static void cuda_embed_fwd(exec_dev *d, void *out, const int32_t *tok, const void *wte, int64_t n,
                           int64_t C, int64_t v0, int64_t vn)
{
    if (!failed(d))
        CKK(d, exec_cuk_embed_fwd(cu(d)->stream, out, tok, wte, n, C, v0, vn), "embed_fwd");
}

/* The tokens are sorted by table row on the device (exec_cuda_embed.cu), so
 * every row of the table sums its own gradients, in token order, without
 * atomics and without the host. */
static void cuda_embed_bwd(exec_dev *d, void *dwte, const void *dout, const int32_t *tok,
                           int64_t n, int64_t C, int64_t v0, int64_t vn)
{
    if (failed(d) || n == 0)
        return;
    size_t bytes = exec_cuk_embed_bwd_scratch(n, vn);
    void *s = scratch(d, bytes);
    if (s)
        CKK(d, exec_cuk_embed_bwd(cu(d)->stream, dwte, dout, tok, n, C, v0, vn, s, bytes),
            "embed_bwd");
}

static void cuda_pos_fwd(exec_dev *d, void *x, const void *wpe, int64_t T, int64_t B, int64_t C,
                         int64_t t0)
{
    if (!failed(d))
        CKK(d, exec_cuk_pos_fwd(cu(d)->stream, x, wpe, T, B, C, t0), "pos_fwd");
}

static void cuda_pos_bwd(exec_dev *d, void *dwpe, const void *dout, int64_t T, int64_t B,
                         int64_t C, int64_t t0)
{
    if (!failed(d))
        CKK(d, exec_cuk_pos_bwd(cu(d)->stream, dwpe, dout, T, B, C, t0), "pos_bwd");
}

/* ---- norms ---- */

static void cuda_norm_fwd(exec_dev *d, void *out, void *mean, void *rstd, const void *inp,
                          const void *w, const void *b, int64_t n, int64_t C, int rms)
{
    if (!failed(d))
        CKK(d, exec_cuk_norm_fwd(cu(d)->stream, out, mean, rstd, inp, w, b, n, C, rms,
                                 EXEC_NORM_EPS),
            "norm_fwd");
}

static void cuda_norm_bwd_input(exec_dev *d, void *dinp, const void *dout, const void *inp,
                                const void *w, const void *mean, const void *rstd, int64_t n,
                                int64_t C, int rms, int accumulate)
{
    if (!failed(d))
        CKK(d, exec_cuk_norm_bwd_input(cu(d)->stream, dinp, dout, inp, w, mean, rstd, n, C, rms,
                                       accumulate),
            "norm_bwd_input");
}

static void cuda_norm_bwd_weight(exec_dev *d, void *dw, void *db, const void *dout,
                                 const void *inp, const void *mean, const void *rstd, int64_t n,
                                 int64_t C, int rms)
{
    colsum(d, dw, db, dout, inp, mean, rstd, n, C, rms);
}

/* ---- activations ---- */

static void cuda_gelu_fwd(exec_dev *d, void *out, const void *inp, int64_t n)
{
    if (!failed(d))
        CKK(d, exec_cuk_gelu_fwd(cu(d)->stream, out, inp, n), "gelu_fwd");
}

static void cuda_gelu_bwd(exec_dev *d, void *dinp, const void *inp, const void *dout, int64_t n)
{
    if (!failed(d))
        CKK(d, exec_cuk_gelu_bwd(cu(d)->stream, dinp, inp, dout, n), "gelu_bwd");
}

static void cuda_swiglu_fwd(exec_dev *d, void *out, const void *inp, int64_t n, int64_t F)
{
    if (!failed(d))
        CKK(d, exec_cuk_swiglu_fwd(cu(d)->stream, out, inp, n, F), "swiglu_fwd");
}

static void cuda_swiglu_bwd(exec_dev *d, void *dinp, const void *inp, const void *dout,
                            int64_t n, int64_t F)
{
    if (!failed(d))
        CKK(d, exec_cuk_swiglu_bwd(cu(d)->stream, dinp, inp, dout, n, F), "swiglu_bwd");
}

static void cuda_rope_fwd(exec_dev *d, void *x, int64_t T, int64_t B, int64_t H, int64_t hd,
                          int64_t ld, double theta)
{
    if (!failed(d))
        CKK(d, exec_cuk_rope(cu(d)->stream, x, T, B, H, hd, ld, theta, 1.0), "rope_fwd");
}

static void cuda_rope_bwd(exec_dev *d, void *dx, int64_t T, int64_t B, int64_t H, int64_t hd,
                          int64_t ld, double theta)
{
    if (!failed(d))
        CKK(d, exec_cuk_rope(cu(d)->stream, dx, T, B, H, hd, ld, theta, -1.0), "rope_bwd");
}

/* ---- attention, the plain path ---- */

/* S[b, h] = q k^T (T x T, row-major) is, column-major, k q^T: A = k stored
 * hd x T transposed, B = q stored hd x T; one product per (b, h). */
static void cuda_attention_fwd(exec_dev *d, void *out, void *probs, const void *qkv, int64_t T,
                               int64_t B, int64_t Hq, int64_t Hkv, int64_t hd)
{
    int64_t E = B * Hq * T * hd, TT = T * T;
    int nb = (int)(B * Hq);
    char *s = scratch(d, (size_t)E * 2 * 4);
    if (!s)
        return;
    void *q = s, *k = s + E * 2, *v = s + E * 4, *o = s + E * 6;
    cudaStream_t st = cu(d)->stream;
    float scale = (float)(1.0 / sqrt((double)hd));
    CKK(d, exec_cuk_attn_permute(st, q, k, v, qkv, T, B, Hq, Hkv, hd), "attn_permute");
    lt_matmul(d, 1, 0, T, T, hd, k, hd, T * hd, q, hd, T * hd, probs, T, TT, nb, scale, 0.0f,
              NULL, 0);
    if (!failed(d))
        CKK(d, exec_cuk_softmax_causal(st, probs, B * Hq, T), "softmax_causal");
    if (out) {
        /* O^T (hd x T) = v^T P^T: A = v stored hd x T, B = P stored T x T (= P^T) */
        lt_matmul(d, 0, 0, hd, T, T, v, hd, T * hd, probs, T, TT, o, hd, T * hd, nb, 1.0f, 0.0f,
                  NULL, 0);
        if (!failed(d))
            CKK(d, exec_cuk_attn_unpermute(st, out, o, T, B, Hq, hd), "attn_unpermute");
    }
    d->flops += (out ? 4.0 : 2.0) * (double)B * (double)Hq * (double)T * (double)T * (double)hd;
}

static void cuda_attention_bwd(exec_dev *d, void *dqkv, void *dprobs, const void *dout,
                               const void *qkv, const void *probs, int64_t T, int64_t B,
                               int64_t Hq, int64_t Hkv, int64_t hd)
{
    int64_t E = B * Hq * T * hd, TT = T * T;
    int nb = (int)(B * Hq);
    char *s = scratch(d, (size_t)E * 2 * 7);
    if (!s)
        return;
    void *q = s, *k = s + E * 2, *v = s + E * 4, *dO = s + E * 6, *dq = s + E * 8,
         *dk = s + E * 10, *dv = s + E * 12;
    cudaStream_t st = cu(d)->stream;
    float scale = (float)(1.0 / sqrt((double)hd));
    CKK(d, exec_cuk_attn_permute(st, q, k, v, qkv, T, B, Hq, Hkv, hd), "attn_permute");
    if (!failed(d))
        CKK(d, exec_cuk_attn_heads(st, dO, dout, T, B, Hq, hd), "attn_heads");
    /* dP = dO v^T (as S = q k^T) */
    lt_matmul(d, 1, 0, T, T, hd, v, hd, T * hd, dO, hd, T * hd, dprobs, T, TT, nb, 1.0f, 0.0f,
              NULL, 0);
    /* dV^T (hd x T) = dO^T P: B = P stored T x T, transposed */
    lt_matmul(d, 0, 1, hd, T, T, dO, hd, T * hd, probs, T, TT, dv, hd, T * hd, nb, 1.0f, 0.0f,
              NULL, 0);
    if (!failed(d))
        CKK(d, exec_cuk_softmax_causal_bwd(st, dprobs, probs, B * Hq, T), "softmax_causal_bwd");
    /* dQ^T = scale k^T dS^T (dS stored T x T is dS^T column-major) */
    lt_matmul(d, 0, 0, hd, T, T, k, hd, T * hd, dprobs, T, TT, dq, hd, T * hd, nb, scale, 0.0f,
              NULL, 0);
    /* dK^T = scale q^T dS */
    lt_matmul(d, 0, 1, hd, T, T, q, hd, T * hd, dprobs, T, TT, dk, hd, T * hd, nb, scale, 0.0f,
              NULL, 0);
    if (!failed(d))
        CKK(d, exec_cuk_attn_unpermute_grad(st, dqkv, dq, dk, dv, T, B, Hq, Hkv, hd),
            "attn_unpermute_grad");
    d->flops += 8.0 * (double)B * (double)Hq * (double)T * (double)T * (double)hd;
}

/* ---- attention, fused ---- */

static int flash_check(exec_dev *d, int64_t hd)
{
    if (exec_cuk_flash_supported(hd))
        return 1;
    st_raise(&cu(d)->fail, ST_EUNSUPPORTED, __FILE__, __LINE__,
             "cuda: the fused attention takes head sizes 16 to 128 in steps of 16, not %lld "
             "(set layout.flash_attention false)",
             (long long)hd);
    return 0;
}

static void cuda_flash_fwd(exec_dev *d, void *out, void *lse, const void *qkv, int64_t T,
                           int64_t B, int64_t Hq, int64_t Hkv, int64_t hd)
{
    if (failed(d) || !flash_check(d, hd))
        return;
    double fl = 0;
    if (cu(d)->attn_sm90 && exec_cuk_flash_sm90_supported(hd))
        CKK(d, exec_cuk_flash_fwd_sm90(cu(d)->stream, out, lse, qkv, T, B, Hq, Hkv, hd, &fl),
            "flash_fwd (sm90)");
    else
        CKK(d, exec_cuk_flash_fwd(cu(d)->stream, out, lse, qkv, T, B, Hq, Hkv, hd, &fl),
            "flash_fwd");
    d->flops += fl;
}

static void cuda_flash_bwd(exec_dev *d, void *dqkv, const void *dout, const void *qkv,
                           const void *out, const void *lse, int64_t T, int64_t B, int64_t Hq,
                           int64_t Hkv, int64_t hd)
{
    if (failed(d) || !flash_check(d, hd))
        return;
    int64_t rows = B * Hq * T;
    float *s = scratch(d, (size_t)(rows * hd + rows) * sizeof(float));
    if (!s)
        return;
    double fl = 0;
    CKK(d, exec_cuk_flash_bwd(cu(d)->stream, dqkv, dout, qkv, out, lse, s, s + rows * hd, T, B,
                              Hq, Hkv, hd, cu(d)->attn_sm90, &fl),
        "flash_bwd");
    d->flops += fl;
}

/* ---- cross-entropy ---- */

/* The cross-entropy's rows' local (maximum, sum) pairs between ce_rowmax
 * and ce_stats (the TP all-reduce of the maxima runs between them): kept by
 * the device, grown on demand. */
static float *ce_local(exec_dev *d, int64_t n)
{
    cuda_dev *c = cu(d);
    size_t want = (size_t)(2 * n) * sizeof(float);
    if (want <= c->ce_local_bytes)
        return c->ce_local;
    if (c->ce_local) {
        CK(d, cudaFree(c->ce_local));
        account(d, -(double)c->ce_local_bytes);
        c->ce_local = NULL;
        c->ce_local_bytes = 0;
    }
    if (CK(d, cudaMalloc((void **)&c->ce_local, want)))
        return NULL;
    c->ce_local_bytes = want;
    account(d, (double)want);
    return c->ce_local;
}

static void cuda_ce_rowmax(exec_dev *d, void *rowmax, const void *logits, int64_t n, int64_t vn)
{
    float *local = failed(d) ? NULL : ce_local(d, n);
    if (local)
        CKK(d, exec_cuk_ce_rowmax(cu(d)->stream, rowmax, local, logits, n, vn), "ce_rowmax");
}

static void cuda_ce_stats(exec_dev *d, void *stats, void *logits, const void *rowmax,
                          const int32_t *targets, int64_t n, int64_t vn, int64_t v0)
{
    if (!failed(d) && cu(d)->ce_local_bytes < (size_t)(2 * n) * sizeof(float))
        st_raise(&cu(d)->fail, ST_EINTERNAL, __FILE__, __LINE__,
                 "cuda: ce_stats of %lld rows without ce_rowmax's pairs", (long long)n);
    if (!failed(d))
        CKK(d, exec_cuk_ce_stats(cu(d)->stream, stats, cu(d)->ce_local, logits, rowmax, targets,
                                 n, vn, v0),
            "ce_stats");
}

static void cuda_ce_loss_bwd(exec_dev *d, void *losses, void *logits, const void *rowmax,
                             const void *stats, const int32_t *targets, int64_t n, int64_t vn,
                             int64_t v0, double scale)
{
    if (!failed(d))
        CKK(d, exec_cuk_ce_loss_bwd(cu(d)->stream, losses, logits, rowmax, stats, targets, n, vn,
                                    v0, scale),
            "ce_loss_bwd");
}

/* ---- elementwise, reductions ---- */

static void cuda_add(exec_dev *d, void *y, const void *x, int64_t n)
{
    if (!failed(d))
        CKK(d, exec_cuk_add(cu(d)->stream, y, x, NULL, n), "add");
}

static void cuda_add3(exec_dev *d, void *out, const void *a, const void *b, int64_t n)
{
    if (!failed(d))
        CKK(d, exec_cuk_add(cu(d)->stream, out, a, b, n), "add3");
}

static void cuda_scale(exec_dev *d, void *x, double s, int64_t n)
{
    if (!failed(d))
        CKK(d, exec_cuk_scale(cu(d)->stream, x, s, n), "scale");
}

/* Block partials on the device, added on the host in block order. */
static double reduce(exec_dev *d, const void *x, int64_t n, int sq)
{
    if (failed(d))
        return NAN;
    if (n <= 0)
        return 0.0;
    int nb = exec_cuk_reduce_blocks(n);
    double *part = scratch(d, (size_t)nb * sizeof(double));
    double *h = host_scratch(d, (size_t)nb * sizeof(double));
    if (!part || !h)
        return NAN;
    CKK(d, exec_cuk_reduce(cu(d)->stream, part, x, n, sq), "reduce");
    cuda_download(d, h, part, (size_t)nb * sizeof(double));
    if (failed(d))
        return NAN;
    double s = 0;
    for (int i = 0; i < nb; i++)
        s += h[i];
    return s;
}

static void cuda_acc_add(exec_dev *d, exec_acc which, const void *x, int64_t n, double k)
{
    double *acc = cu(d)->acc + which * exec_cuk_reduce_blocks_max();
    if (!failed(d))
        CKK(d, exec_cuk_reduce_acc(cu(d)->stream, acc, x, n, which == EXEC_ACC_SUMSQ,
                                   which == EXEC_ACC_SUMSQ ? 1.0 : k),
            "reduce_acc");
}

/* The block partials to the host (one wait), added in block order, and
 * zeroed on the device for the next step. */
static double cuda_acc_take(exec_dev *d, exec_acc which)
{
    int nb = exec_cuk_reduce_blocks_max();
    double *h = host_scratch(d, (size_t)nb * sizeof(double)), *a = cu(d)->acc + which * nb;
    if (!h || failed(d))
        return NAN;
    cuda_download(d, h, a, (size_t)nb * sizeof(double));
    cuda_zero(d, a, (size_t)nb * sizeof(double));
    if (failed(d))
        return NAN;
    double s = 0;
    for (int i = 0; i < nb; i++)
        s += h[i];
    return s;
}

static double cuda_sum(exec_dev *d, const void *x, int64_t n)
{
    return reduce(d, x, n, 0);
}

static double cuda_sumsq(exec_dev *d, const void *x, int64_t n)
{
    return reduce(d, x, n, 1);
}

/* ---- optimizer ---- */

static void cuda_adamw(exec_dev *d, void *param, void *master, const void *grad, void *m, void *v,
                       int64_t n, const exec_adamw *a)
{
    if (failed(d))
        return;
    if (!master) {
        st_raise(&cu(d)->fail, ST_EINTERNAL, __FILE__, __LINE__,
                 "cuda: AdamW without master weights");
        return;
    }
    double ic1 = 1.0 / (1.0 - pow(a->beta1, (double)a->step));
    double ic2 = 1.0 / (1.0 - pow(a->beta2, (double)a->step));
    CKK(d, exec_cuk_adamw(cu(d)->stream, param, master, grad, m, v, n, a->lr, a->beta1, a->beta2,
                          a->eps, a->weight_decay, a->grad_scale, ic1, ic2),
        "adamw");
}

static void cuda_init_fill(exec_dev *d, void *dst, const exec_init_fill *f, int64_t k0, int64_t n)
{
    if (!failed(d))
        CKK(d, exec_cuk_init_fill(cu(d)->stream, dst, *f, k0, n), "init_fill");
}

/* AdamW over every range in one launch (a few when the table is long): the
 * table is written into pinned host memory, copied to the device on the
 * stream, and the kernel reads it there. */
static void cuda_adamw_multi(exec_dev *d, const exec_adamw_range *r, int nr, const exec_adamw *a)
{
    cuda_dev *c = cu(d);
    if (failed(d) || nr <= 0)
        return;
    for (int i = 0; i < nr; i++)
        if (!r[i].master) {
            st_raise(&c->fail, ST_EINTERNAL, __FILE__, __LINE__,
                     "cuda: AdamW without master weights");
            return;
        }
    if (c->aw_pending) { /* the last table may still be on its way */
        if (CK(d, cudaEventSynchronize(c->aw_copied)))
            return;
        c->aw_pending = 0;
    }
    if (nr > c->aw_cap) {
        if (c->aw_host)
            cudaFreeHost(c->aw_host);
        if (c->aw_dev) {
            cudaFree(c->aw_dev);
            account(d, -(double)c->aw_cap * sizeof *c->aw_dev);
        }
        c->aw_host = NULL;
        c->aw_dev = NULL;
        c->aw_cap = 0;
        if (CK(d, cudaMallocHost((void **)&c->aw_host, (size_t)nr * sizeof *c->aw_host)) ||
            CK(d, cudaMalloc((void **)&c->aw_dev, (size_t)nr * sizeof *c->aw_dev)))
            return;
        c->aw_cap = nr;
        account(d, (double)nr * sizeof *c->aw_dev);
    }
    if (!c->aw_copied && CK(d, cudaEventCreateWithFlags(&c->aw_copied, cudaEventDisableTiming)))
        return;
    int64_t blocks = 0;
    for (int i = 0; i < nr; i++) {
        exec_cuk_aw_range *t = &c->aw_host[i];
        t->param = r[i].param;
        t->master = r[i].master;
        t->m = r[i].m;
        t->v = r[i].v;
        t->grad = r[i].grad;
        t->n = r[i].n;
        t->wd = (float)r[i].weight_decay;
        t->vec = r[i].n % 8 == 0 && exec__cuda_align(r[i].param) >= 16 &&
                 exec__cuda_align(r[i].master) >= 16 && exec__cuda_align(r[i].m) >= 16 &&
                 exec__cuda_align(r[i].v) >= 16 && exec__cuda_align(r[i].grad) >= 16;
        t->block0 = blocks;
        blocks += (r[i].n + EXEC_CUK_AW_CHUNK - 1) / EXEC_CUK_AW_CHUNK;
    }
    if (CK(d, cudaMemcpyAsync(c->aw_dev, c->aw_host, (size_t)nr * sizeof *c->aw_host,
                              cudaMemcpyHostToDevice, c->stream)) ||
        CK(d, cudaEventRecord(c->aw_copied, c->stream)))
        return;
    c->aw_pending = 1;
    double ic1 = 1.0 / (1.0 - pow(a->beta1, (double)a->step));
    double ic2 = 1.0 / (1.0 - pow(a->beta2, (double)a->step));
    CKK(d, exec_cuk_adamw_multi(c->stream, c->aw_dev, nr, blocks, a->lr, a->beta1, a->beta2,
                                a->eps, a->grad_scale, ic1, ic2),
        "adamw_multi");
}

static void cuda_widen(exec_dev *d, void *dst, const void *src, int64_t n)
{
    if (!failed(d))
        CKK(d, exec_cuk_widen(cu(d)->stream, dst, src, n), "widen");
}

static const exec_dev_ops exec_dev_cuda_ops = {
    .name = "cuda",
    .dtype = EXEC_DT_BF16,
    .state_dtype = EXEC_DT_F32,
    .stat_dtype = EXEC_DT_F32,
    .has_master = 1,
    .host_memory = 0,
    .open = cuda_open,
    .close = cuda_close,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .copy = cuda_copy,
    .zero = cuda_zero,
    .sync = cuda_sync,
    .stream = cuda_stream,
    .describe = cuda_describe,
    .embed_fwd = cuda_embed_fwd,
    .embed_bwd = cuda_embed_bwd,
    .pos_fwd = cuda_pos_fwd,
    .pos_bwd = cuda_pos_bwd,
    .norm_fwd = cuda_norm_fwd,
    .norm_bwd_input = cuda_norm_bwd_input,
    .norm_bwd_weight = cuda_norm_bwd_weight,
    .matmul_fwd = cuda_matmul_fwd,
    .matmul_bwd_input = cuda_matmul_bwd_input,
    .matmul_bwd_weight = cuda_matmul_bwd_weight,
    .matmul_gelu_fwd = cuda_matmul_gelu_fwd,
    .matmul_bwd_input_gelu = cuda_matmul_bwd_input_gelu,
    .gelu_fwd = cuda_gelu_fwd,
    .gelu_bwd = cuda_gelu_bwd,
    .swiglu_fwd = cuda_swiglu_fwd,
    .swiglu_bwd = cuda_swiglu_bwd,
    .rope_fwd = cuda_rope_fwd,
    .rope_bwd = cuda_rope_bwd,
    .attention_fwd = cuda_attention_fwd,
    .attention_bwd = cuda_attention_bwd,
    .flash_fwd = cuda_flash_fwd,
    .flash_bwd = cuda_flash_bwd,
    .ce_rowmax = cuda_ce_rowmax,
    .ce_stats = cuda_ce_stats,
    .ce_loss_bwd = cuda_ce_loss_bwd,
    .add = cuda_add,
    .add3 = cuda_add3,
    .scale = cuda_scale,
    .sum = cuda_sum,
    .sumsq = cuda_sumsq,
    .acc_add = cuda_acc_add,
    .acc_take = cuda_acc_take,
    .adamw = cuda_adamw,
    .adamw_multi = cuda_adamw_multi,
    .widen = cuda_widen,
    .init_fill = cuda_init_fill,
    .upload_f64 = cuda_upload_f64,
    .download_f64 = cuda_download_f64,
};

/* The module smdplan-cuda.so (exec_module.h). */
const exec_module exec_module_cuda = {
    .abi = EXEC_MODULE_ABI,
    .build = EXEC_MODULE_BUILD,
    .dev = &exec_dev_cuda_ops,
    .device_count = exec__cuda_count,
    .device_memory_bytes = exec__cuda_memory_bytes,
};
