/*
 * exec_cuda_kernels.cu: the CUDA device's own kernels (everything that is
 * not a matrix product; those go to cuBLASLt in exec_dev_cuda.c), behind
 * the plain C entry points of exec_cuda_kernels.h.
 *
 * The shapes follow llm.c's CUDA kernels (train_gpt2.cu and the llmc/ headers): one
 * warp per row for the norms, one block per row for the softmax and the
 * cross-entropy, elementwise kernels over grid-stride loops; the code is
 * this project's own. Storage is bf16, arithmetic fp32 (double for RoPE's
 * angles and the reductions that come back to the host). Every result is
 * deterministic except the fused attention's query gradient, which sums its
 * key tiles with fp32 atomics as FlashAttention-2 does (Dao 2023, Alg. 2).
 *
 * The fused attention (flash_fwd / flash_bwd) is FlashAttention-2's tiling
 * (Dao 2023, Algorithms 1 and 2) on tensor cores through WMMA (16x16x16
 * bf16 fragments, fp32 accumulation): a block holds 64 query rows (4 warps
 * of 16) and walks the key/value tiles of 64 at or below the diagonal,
 * keeping the running row maximum and sum (online softmax; Milakov &
 * Gimelshein 2018) and the output accumulator in shared memory, so no T x T
 * matrix exists in global memory; each row's log-sum-exp is kept for the
 * backward. The backward holds one key/value tile per block over every
 * query head of its kv head (grouped-query attention sums there without
 * atomics), recomputes P = exp(S - lse) tile by tile, accumulates dK and
 * dV in registers and adds dQ into an fp32 buffer. Head sizes: multiples
 * of 16 up to 128 (shared memory: about 113 KB forward, 126 KB backward at
 * 128, within an A100's 163 KB and an H100's 227 KB).
 */
#include <cuda_bf16.h>
#include <math.h>
#include <mma.h>
#include <stdint.h>

#include "exec/exec_cuda_kernels.h"

typedef __nv_bfloat16 bf16;

#define THREADS 256
#define MAX_BLOCKS 65536

static __device__ __forceinline__ float lb(const bf16 *p, int64_t i)
{
    return __bfloat162float(p[i]);
}

static __device__ __forceinline__ bf16 tb(float x)
{
    return __float2bfloat16(x);
}

static unsigned blocks_for(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    if (b < 1)
        b = 1;
    return (unsigned)(b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

#define GRID_STRIDE(i, n)                                                                      \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                  \
         i += (int64_t)blockDim.x * gridDim.x)

static __device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

static __device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Sum (or max) over a block of THREADS threads; every thread gets it. */
static __device__ float block_reduce(float v, int is_max)
{
    __shared__ float part[THREADS / 32];
    __shared__ float result;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = is_max ? warp_max(v) : warp_sum(v);
    if (lane == 0)
        part[w] = v;
    __syncthreads();
    if (w == 0) {
        float x = lane < (int)(blockDim.x >> 5) ? part[lane] : (is_max ? -INFINITY : 0.0f);
        x = is_max ? warp_max(x) : warp_sum(x);
        if (lane == 0)
            result = x;
    }
    __syncthreads();
    float r = result;
    __syncthreads(); /* part and result are reused by the next call */
    return r;
}

/* ------------------------------------------------------------------------ */
/* embedding                                                                 */
/* ------------------------------------------------------------------------ */

__global__ void embed_fwd_k(bf16 *out, const int32_t *tok, const bf16 *wte, int64_t C, int64_t v0,
                            int64_t vn)
{
    int64_t i = blockIdx.x, t = (int64_t)tok[i] - v0;
    bf16 *o = out + i * C;
    if (t >= 0 && t < vn) {
        const bf16 *w = wte + t * C;
        for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
            o[c] = w[c];
    } else {
        for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
            o[c] = tb(0.0f);
    }
}

extern "C" cudaError_t exec_cuk_embed_fwd(cudaStream_t s, void *out, const int32_t *tok,
                                          const void *wte, int64_t n, int64_t C, int64_t v0,
                                          int64_t vn)
{
    if (n > 0)
        embed_fwd_k<<<(unsigned)n, THREADS, 0, s>>>((bf16 *)out, tok, (const bf16 *)wte, C, v0,
                                                     vn);
    return cudaGetLastError();
}

__global__ void embed_bwd_k(bf16 *dwte, const bf16 *dout, const int32_t *rows,
                            const int32_t *starts, const int32_t *idx, int64_t C)
{
    int64_t r = blockIdx.x, c = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    float acc = 0.0f;
    for (int k = starts[r]; k < starts[r + 1]; k++)
        acc += lb(dout, (int64_t)idx[k] * C + c);
    bf16 *w = dwte + (int64_t)rows[r] * C + c;
    *w = tb(__bfloat162float(*w) + acc);
}

extern "C" cudaError_t exec_cuk_embed_bwd(cudaStream_t s, void *dwte, const void *dout,
                                          const int32_t *rows, const int32_t *starts,
                                          const int32_t *idx, int64_t nrows, int64_t C)
{
    if (nrows > 0) {
        dim3 grid((unsigned)nrows, (unsigned)((C + THREADS - 1) / THREADS));
        embed_bwd_k<<<grid, THREADS, 0, s>>>((bf16 *)dwte, (const bf16 *)dout, rows, starts, idx,
                                             C);
    }
    return cudaGetLastError();
}

__global__ void pos_fwd_k(bf16 *x, const bf16 *wpe, int64_t B, int64_t C, int64_t t0)
{
    int64_t r = blockIdx.x, t = r / B;
    bf16 *row = x + r * C;
    const bf16 *p = wpe + (t0 + t) * C;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
        row[c] = tb(__bfloat162float(row[c]) + __bfloat162float(p[c]));
}

extern "C" cudaError_t exec_cuk_pos_fwd(cudaStream_t s, void *x, const void *wpe, int64_t T,
                                        int64_t B, int64_t C, int64_t t0)
{
    if (T * B > 0)
        pos_fwd_k<<<(unsigned)(T * B), THREADS, 0, s>>>((bf16 *)x, (const bf16 *)wpe, B, C, t0);
    return cudaGetLastError();
}

/* dwpe[t0 + t] += sum over b of dout[t * B + b]: one thread per (t, c). */
__global__ void pos_bwd_k(bf16 *dwpe, const bf16 *dout, int64_t B, int64_t C, int64_t t0)
{
    int64_t t = blockIdx.x, c = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    float acc = 0.0f;
    for (int64_t b = 0; b < B; b++)
        acc += lb(dout, (t * B + b) * C + c);
    bf16 *w = dwpe + (t0 + t) * C + c;
    *w = tb(__bfloat162float(*w) + acc);
}

extern "C" cudaError_t exec_cuk_pos_bwd(cudaStream_t s, void *dwpe, const void *dout, int64_t T,
                                        int64_t B, int64_t C, int64_t t0)
{
    if (T > 0) {
        dim3 grid((unsigned)T, (unsigned)((C + THREADS - 1) / THREADS));
        pos_bwd_k<<<grid, THREADS, 0, s>>>((bf16 *)dwpe, (const bf16 *)dout, B, C, t0);
    }
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* LayerNorm and RMSNorm: one warp per row                                   */
/* ------------------------------------------------------------------------ */

#define ROWS_PER_BLOCK (THREADS / 32)

__global__ void norm_fwd_k(bf16 *out, float *mean, float *rstd, const bf16 *inp, const bf16 *w,
                           const bf16 *b, int64_t n, int64_t C, int rms, float eps)
{
    int lane = threadIdx.x & 31;
    int64_t i = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (i >= n)
        return;
    const bf16 *x = inp + i * C;
    float m = 0.0f;
    if (!rms) {
        for (int64_t c = lane; c < C; c += 32)
            m += __bfloat162float(x[c]);
        m = warp_sum(m) / (float)C;
    }
    float v = 0.0f;
    for (int64_t c = lane; c < C; c += 32) {
        float d = __bfloat162float(x[c]) - m;
        v += d * d;
    }
    v = warp_sum(v) / (float)C;
    float s = 1.0f / sqrtf(v + eps);
    bf16 *o = out + i * C;
    for (int64_t c = lane; c < C; c += 32) {
        float xh = (__bfloat162float(x[c]) - m) * s;
        float y = xh * __bfloat162float(w[c]);
        if (b)
            y += __bfloat162float(b[c]);
        o[c] = tb(y);
    }
    if (lane == 0) {
        if (mean)
            mean[i] = m;
        rstd[i] = s;
    }
}

extern "C" cudaError_t exec_cuk_norm_fwd(cudaStream_t s, void *out, float *mean, float *rstd,
                                         const void *inp, const void *w, const void *b, int64_t n,
                                         int64_t C, int rms, double eps)
{
    if (n > 0)
        norm_fwd_k<<<(unsigned)((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK), THREADS, 0, s>>>(
            (bf16 *)out, mean, rstd, (const bf16 *)inp, (const bf16 *)w, (const bf16 *)b, n, C,
            rms, (float)eps);
    return cudaGetLastError();
}

/* dx = rstd (dn - mean(dn) - xhat mean(dn xhat)), dn = dout w (llm.c's
 * layernorm_backward; RMSNorm without the mean term). */
__global__ void norm_bwd_input_k(bf16 *dinp, const bf16 *dout, const bf16 *inp, const bf16 *w,
                                 const float *mean, const float *rstd, int64_t n, int64_t C,
                                 int rms, int accumulate)
{
    int lane = threadIdx.x & 31;
    int64_t i = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (i >= n)
        return;
    const bf16 *g = dout + i * C, *x = inp + i * C;
    float m = rms ? 0.0f : mean[i], s = rstd[i];
    float dn_mean = 0.0f, dn_xh = 0.0f;
    for (int64_t c = lane; c < C; c += 32) {
        float dn = __bfloat162float(g[c]) * __bfloat162float(w[c]);
        dn_mean += dn;
        dn_xh += dn * (__bfloat162float(x[c]) - m) * s;
    }
    dn_mean = rms ? 0.0f : warp_sum(dn_mean) / (float)C;
    dn_xh = warp_sum(dn_xh) / (float)C;
    bf16 *dx = dinp + i * C;
    for (int64_t c = lane; c < C; c += 32) {
        float xh = (__bfloat162float(x[c]) - m) * s;
        float v = s * (__bfloat162float(g[c]) * __bfloat162float(w[c]) - dn_mean - xh * dn_xh);
        dx[c] = tb(accumulate ? __bfloat162float(dx[c]) + v : v);
    }
}

extern "C" cudaError_t exec_cuk_norm_bwd_input(cudaStream_t s, void *dinp, const void *dout,
                                               const void *inp, const void *w, const float *mean,
                                               const float *rstd, int64_t n, int64_t C, int rms,
                                               int accumulate)
{
    if (n > 0)
        norm_bwd_input_k<<<(unsigned)((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK), THREADS, 0,
                           s>>>((bf16 *)dinp, (const bf16 *)dout, (const bf16 *)inp,
                                (const bf16 *)w, mean, rstd, n, C, rms, accumulate);
    return cudaGetLastError();
}

/* Column sums in two passes with a fixed order: chunks of rows into
 * partial (block of 32 columns x 8 row lanes), then each column adds its
 * chunks in order. */
#define COLSUM_ROWS_PER_CHUNK 256
#define COLSUM_MAX_CHUNKS 256

extern "C" int exec_cuk_colsum_chunks(int64_t n)
{
    int64_t k = (n + COLSUM_ROWS_PER_CHUNK - 1) / COLSUM_ROWS_PER_CHUNK;
    return (int)(k < 1 ? 1 : k > COLSUM_MAX_CHUNKS ? COLSUM_MAX_CHUNKS : k);
}

__global__ void colsum_part_k(float *partial, const bf16 *dout, const bf16 *inp,
                              const float *mean, const float *rstd, int64_t n, int64_t C, int rms,
                              int nchunks)
{
    __shared__ float sw[8][33], sb[8][33];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    int64_t c = (int64_t)blockIdx.x * 32 + tx;
    int chunk = blockIdx.y;
    int64_t r0 = n * chunk / nchunks, r1 = n * (chunk + 1) / nchunks;
    float aw = 0.0f, ab = 0.0f;
    if (c < C)
        for (int64_t r = r0 + ty; r < r1; r += 8) {
            float g = lb(dout, r * C + c);
            ab += g;
            if (inp) {
                float m = rms ? 0.0f : mean[r];
                aw += g * (lb(inp, r * C + c) - m) * rstd[r];
            }
        }
    sw[ty][tx] = aw;
    sb[ty][tx] = ab;
    __syncthreads();
    if (ty == 0 && c < C) {
        float w = 0.0f, b = 0.0f;
        for (int k = 0; k < 8; k++) {
            w += sw[k][tx];
            b += sb[k][tx];
        }
        partial[(int64_t)chunk * 2 * C + c] = w;
        partial[(int64_t)chunk * 2 * C + C + c] = b;
    }
}

__global__ void colsum_add_k(bf16 *dw, bf16 *db, const float *partial, int64_t C, int nchunks)
{
    GRID_STRIDE(c, C)
    {
        float w = 0.0f, b = 0.0f;
        for (int k = 0; k < nchunks; k++) {
            w += partial[(int64_t)k * 2 * C + c];
            b += partial[(int64_t)k * 2 * C + C + c];
        }
        if (dw)
            dw[c] = tb(__bfloat162float(dw[c]) + w);
        if (db)
            db[c] = tb(__bfloat162float(db[c]) + b);
    }
}

extern "C" cudaError_t exec_cuk_colsum(cudaStream_t s, void *dw, void *db, const void *dout,
                                       const void *inp, const float *mean, const float *rstd,
                                       int64_t n, int64_t C, int rms, float *partial, int nchunks)
{
    if (C <= 0)
        return cudaGetLastError();
    dim3 grid((unsigned)((C + 31) / 32), (unsigned)nchunks);
    colsum_part_k<<<grid, THREADS, 0, s>>>(partial, (const bf16 *)dout,
                                           dw ? (const bf16 *)inp : NULL, mean, rstd, n, C, rms,
                                           nchunks);
    colsum_add_k<<<blocks_for(C, THREADS), THREADS, 0, s>>>((bf16 *)dw, (bf16 *)db, partial, C,
                                                            nchunks);
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* activations                                                               */
/* ------------------------------------------------------------------------ */

/* sqrt(2 / pi), GPT-2's tanh approximation of GELU (Hendrycks & Gimpel 2016) */
#define GELU_K 0.7978845608028654f
#define GELU_C 0.044715f

__global__ void gelu_fwd_k(bf16 *out, const bf16 *inp, int64_t n)
{
    GRID_STRIDE(i, n)
    {
        float x = __bfloat162float(inp[i]);
        out[i] = tb(0.5f * x * (1.0f + tanhf(GELU_K * (x + GELU_C * x * x * x))));
    }
}

__global__ void gelu_bwd_k(bf16 *dinp, const bf16 *inp, const bf16 *dout, int64_t n)
{
    GRID_STRIDE(i, n)
    {
        float x = __bfloat162float(inp[i]);
        float th = tanhf(GELU_K * (x + GELU_C * x * x * x));
        float g = 0.5f * (1.0f + th) +
                  x * 0.5f * (1.0f - th * th) * GELU_K * (1.0f + 3.0f * GELU_C * x * x);
        dinp[i] = tb(g * __bfloat162float(dout[i]));
    }
}

extern "C" cudaError_t exec_cuk_gelu_fwd(cudaStream_t s, void *out, const void *inp, int64_t n)
{
    if (n > 0)
        gelu_fwd_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)out, (const bf16 *)inp, n);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_gelu_bwd(cudaStream_t s, void *dinp, const void *inp,
                                         const void *dout, int64_t n)
{
    if (n > 0)
        gelu_bwd_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)dinp, (const bf16 *)inp,
                                                             (const bf16 *)dout, n);
    return cudaGetLastError();
}

/* SwiGLU (Shazeer 2020): rows (gate | up) of 2F, out = silu(gate) up. */
__global__ void swiglu_fwd_k(bf16 *out, const bf16 *inp, int64_t n, int64_t F)
{
    GRID_STRIDE(k, n * F)
    {
        int64_t i = k / F, j = k % F;
        float g = lb(inp, i * 2 * F + j), u = lb(inp, i * 2 * F + F + j);
        out[k] = tb(g / (1.0f + expf(-g)) * u);
    }
}

__global__ void swiglu_bwd_k(bf16 *dinp, const bf16 *inp, const bf16 *dout, int64_t n, int64_t F)
{
    GRID_STRIDE(k, n * F)
    {
        int64_t i = k / F, j = k % F;
        float g = lb(inp, i * 2 * F + j), u = lb(inp, i * 2 * F + F + j), go = lb(dout, k);
        float sig = 1.0f / (1.0f + expf(-g));
        dinp[i * 2 * F + F + j] = tb(go * g * sig);
        dinp[i * 2 * F + j] = tb(go * u * sig * (1.0f + g * (1.0f - sig)));
    }
}

extern "C" cudaError_t exec_cuk_swiglu_fwd(cudaStream_t s, void *out, const void *inp, int64_t n,
                                           int64_t F)
{
    if (n * F > 0)
        swiglu_fwd_k<<<blocks_for(n * F, THREADS), THREADS, 0, s>>>((bf16 *)out,
                                                                   (const bf16 *)inp, n, F);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_swiglu_bwd(cudaStream_t s, void *dinp, const void *inp,
                                           const void *dout, int64_t n, int64_t F)
{
    if (n * F > 0)
        swiglu_bwd_k<<<blocks_for(n * F, THREADS), THREADS, 0, s>>>(
            (bf16 *)dinp, (const bf16 *)inp, (const bf16 *)dout, n, F);
    return cudaGetLastError();
}

/* RoPE (Su et al. 2021), rotate-half pairs (j, j + hd/2) by t theta^(-2j/hd)
 * (sign -1 rotates back). The angle and its sine and cosine in double: at
 * t in the thousands an fp32 angle would be off by 1e-3 rad. */
__global__ void rope_k(bf16 *x, int64_t T, int64_t B, int64_t H, int64_t hd, int64_t ld,
                       double theta, double sign)
{
    int64_t half = hd / 2;
    GRID_STRIDE(k, T * B * H * half)
    {
        int64_t j = k % half, h = (k / half) % H, r = k / (half * H), t = r / B;
        double ang = (double)t * pow(theta, -2.0 * (double)j / (double)hd);
        double sn, cs;
        sincos(ang, &sn, &cs);
        float c = (float)cs, sv = (float)(sign * sn);
        bf16 *v = x + r * ld + h * hd;
        float x1 = __bfloat162float(v[j]), x2 = __bfloat162float(v[j + half]);
        v[j] = tb(x1 * c - x2 * sv);
        v[j + half] = tb(x2 * c + x1 * sv);
    }
}

extern "C" cudaError_t exec_cuk_rope(cudaStream_t s, void *x, int64_t T, int64_t B, int64_t H,
                                     int64_t hd, int64_t ld, double theta, double sign)
{
    int64_t n = T * B * H * (hd / 2);
    if (n > 0)
        rope_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)x, T, B, H, hd, ld, theta,
                                                         sign);
    return cudaGetLastError();
}

__global__ void bias_rows_k(bf16 *out, const bf16 *bias, int64_t n, int64_t OC)
{
    GRID_STRIDE(k, n * OC)
    out[k] = tb(__bfloat162float(out[k]) + __bfloat162float(bias[k % OC]));
}

extern "C" cudaError_t exec_cuk_bias_rows(cudaStream_t s, void *out, const void *bias, int64_t n,
                                          int64_t OC)
{
    if (n * OC > 0)
        bias_rows_k<<<blocks_for(n * OC, THREADS), THREADS, 0, s>>>((bf16 *)out,
                                                                   (const bf16 *)bias, n, OC);
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* attention: the plain path's layout changes and causal softmax              */
/* ------------------------------------------------------------------------ */

__global__ void attn_permute_k(bf16 *q, bf16 *k, bf16 *v, const bf16 *qkv, int64_t T, int64_t B,
                               int64_t Hq, int64_t Hkv, int64_t hd)
{
    int64_t W = (Hq + 2 * Hkv) * hd, group = Hq / Hkv;
    GRID_STRIDE(e, B * Hq * T * hd)
    {
        int64_t d = e % hd, t = (e / hd) % T, h = (e / (hd * T)) % Hq, b = e / (hd * T * Hq);
        int64_t kh = h / group;
        const bf16 *row = qkv + (t * B + b) * W;
        q[e] = row[h * hd + d];
        k[e] = row[(Hq + kh) * hd + d];
        v[e] = row[(Hq + Hkv + kh) * hd + d];
    }
}

extern "C" cudaError_t exec_cuk_attn_permute(cudaStream_t s, void *q, void *k, void *v,
                                             const void *qkv, int64_t T, int64_t B, int64_t Hq,
                                             int64_t Hkv, int64_t hd)
{
    int64_t n = B * Hq * T * hd;
    if (n > 0)
        attn_permute_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>(
            (bf16 *)q, (bf16 *)k, (bf16 *)v, (const bf16 *)qkv, T, B, Hq, Hkv, hd);
    return cudaGetLastError();
}

__global__ void attn_unpermute_k(bf16 *out, const bf16 *o, int64_t T, int64_t B, int64_t Hq,
                                 int64_t hd)
{
    GRID_STRIDE(e, B * Hq * T * hd)
    {
        int64_t d = e % hd, t = (e / hd) % T, h = (e / (hd * T)) % Hq, b = e / (hd * T * Hq);
        out[(t * B + b) * Hq * hd + h * hd + d] = o[e];
    }
}

extern "C" cudaError_t exec_cuk_attn_unpermute(cudaStream_t s, void *out, const void *o,
                                               int64_t T, int64_t B, int64_t Hq, int64_t hd)
{
    int64_t n = B * Hq * T * hd;
    if (n > 0)
        attn_unpermute_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)out,
                                                                   (const bf16 *)o, T, B, Hq, hd);
    return cudaGetLastError();
}

__global__ void attn_heads_k(bf16 *o, const bf16 *rows, int64_t T, int64_t B, int64_t Hq,
                             int64_t hd)
{
    GRID_STRIDE(e, B * Hq * T * hd)
    {
        int64_t d = e % hd, t = (e / hd) % T, h = (e / (hd * T)) % Hq, b = e / (hd * T * Hq);
        o[e] = rows[(t * B + b) * Hq * hd + h * hd + d];
    }
}

extern "C" cudaError_t exec_cuk_attn_heads(cudaStream_t s, void *o, const void *rows, int64_t T,
                                           int64_t B, int64_t Hq, int64_t hd)
{
    int64_t n = B * Hq * T * hd;
    if (n > 0)
        attn_heads_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)o, (const bf16 *)rows, T,
                                                               B, Hq, hd);
    return cudaGetLastError();
}

/* One thread per element of dqkv: a query column copies, a key or value
 * column sums its kv head's query heads. */
__global__ void attn_unpermute_grad_k(bf16 *dqkv, const bf16 *dq, const bf16 *dk,
                                      const bf16 *dv, int64_t T, int64_t B, int64_t Hq,
                                      int64_t Hkv, int64_t hd)
{
    int64_t W = (Hq + 2 * Hkv) * hd, group = Hq / Hkv;
    GRID_STRIDE(e, T * B * W)
    {
        int64_t col = e % W, r = e / W, t = r / B, b = r % B;
        int64_t head = col / hd, d = col % hd;
        float acc;
        if (head < Hq) {
            acc = lb(dq, ((b * Hq + head) * T + t) * hd + d);
        } else {
            int is_v = head >= Hq + Hkv;
            int64_t kh = head - Hq - (is_v ? Hkv : 0);
            const bf16 *src = is_v ? dv : dk;
            acc = 0.0f;
            for (int64_t h = kh * group; h < (kh + 1) * group; h++)
                acc += lb(src, ((b * Hq + h) * T + t) * hd + d);
        }
        dqkv[e] = tb(acc);
    }
}

extern "C" cudaError_t exec_cuk_attn_unpermute_grad(cudaStream_t s, void *dqkv, const void *dq,
                                                    const void *dk, const void *dv, int64_t T,
                                                    int64_t B, int64_t Hq, int64_t Hkv,
                                                    int64_t hd)
{
    int64_t n = T * B * (Hq + 2 * Hkv) * hd;
    if (n > 0)
        attn_unpermute_grad_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>(
            (bf16 *)dqkv, (const bf16 *)dq, (const bf16 *)dk, (const bf16 *)dv, T, B, Hq, Hkv,
            hd);
    return cudaGetLastError();
}

/* One block per row i of a T x T matrix: softmax over j <= i, 0 above. */
__global__ void softmax_causal_k(bf16 *p, int64_t T)
{
    int64_t row = blockIdx.x, i = row % T;
    bf16 *x = p + row * T;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j <= i; j += blockDim.x)
        mx = fmaxf(mx, __bfloat162float(x[j]));
    mx = block_reduce(mx, 1);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j <= i; j += blockDim.x)
        sum += expf(__bfloat162float(x[j]) - mx);
    sum = block_reduce(sum, 0);
    float inv = 1.0f / sum;
    for (int64_t j = threadIdx.x; j < T; j += blockDim.x)
        x[j] = tb(j <= i ? expf(__bfloat162float(x[j]) - mx) * inv : 0.0f);
}

__global__ void softmax_causal_bwd_k(bf16 *dp, const bf16 *p, int64_t T)
{
    int64_t row = blockIdx.x, i = row % T;
    bf16 *g = dp + row * T;
    const bf16 *pr = p + row * T;
    float dot = 0.0f;
    for (int64_t j = threadIdx.x; j <= i; j += blockDim.x)
        dot += __bfloat162float(pr[j]) * __bfloat162float(g[j]);
    dot = block_reduce(dot, 0);
    for (int64_t j = threadIdx.x; j < T; j += blockDim.x)
        g[j] = tb(j <= i ? __bfloat162float(pr[j]) * (__bfloat162float(g[j]) - dot) : 0.0f);
}

extern "C" cudaError_t exec_cuk_softmax_causal(cudaStream_t s, void *p, int64_t nmat, int64_t T)
{
    if (nmat * T > 0)
        softmax_causal_k<<<(unsigned)(nmat * T), THREADS, 0, s>>>((bf16 *)p, T);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_softmax_causal_bwd(cudaStream_t s, void *dp, const void *p,
                                                   int64_t nmat, int64_t T)
{
    if (nmat * T > 0)
        softmax_causal_bwd_k<<<(unsigned)(nmat * T), THREADS, 0, s>>>((bf16 *)dp,
                                                                     (const bf16 *)p, T);
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* attention, fused                                                          */
/* ------------------------------------------------------------------------ */

#define FA_TILE 64               /* query rows per block, key rows per step */
#define FA_WARPS 4
#define FA_THREADS (32 * FA_WARPS)
#define FA_MAX_HD 128
#define FA_PAD_H 8               /* bf16 row padding (WMMA: ldm a multiple of 8) */
#define FA_PAD_F 4               /* fp32 row padding (ldm a multiple of 4) */
#define FA_STAGE_LD (16 + FA_PAD_F)

using namespace nvcuda;

typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::col_major> frag_at;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> frag_b;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> frag_bt;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> frag_c;

extern "C" int exec_cuk_flash_supported(int64_t hd)
{
    return hd >= 16 && hd <= FA_MAX_HD && hd % 16 == 0;
}

static __host__ __device__ size_t fa_align(size_t b)
{
    return (b + 127) / 128 * 128;
}

/* Shared memory of the forward (offsets in bytes). */
struct fa_fwd_smem {
    size_t q, k, v, s, p, o, m, l, total;
};

static __host__ __device__ fa_fwd_smem fa_fwd_layout(int hd)
{
    fa_fwd_smem L;
    size_t tile_h = fa_align((size_t)FA_TILE * (hd + FA_PAD_H) * 2);
    L.q = 0;
    L.k = L.q + tile_h;
    L.v = L.k + tile_h;
    L.s = L.v + tile_h;
    L.p = L.s + fa_align((size_t)FA_TILE * (FA_TILE + FA_PAD_F) * 4);
    L.o = L.p + fa_align((size_t)FA_TILE * (FA_TILE + FA_PAD_H) * 2);
    L.m = L.o + fa_align((size_t)FA_TILE * (hd + FA_PAD_F) * 4);
    L.l = L.m + fa_align(FA_TILE * 4);
    L.total = L.l + fa_align(FA_TILE * 4);
    return L;
}

struct fa_bwd_smem {
    size_t k, v, q, dO, s, dp, p, ds, stage, lse, drow, total;
};

static __host__ __device__ fa_bwd_smem fa_bwd_layout(int hd)
{
    fa_bwd_smem L;
    size_t tile_h = fa_align((size_t)FA_TILE * (hd + FA_PAD_H) * 2);
    size_t tile_s = fa_align((size_t)FA_TILE * (FA_TILE + FA_PAD_F) * 4);
    size_t tile_p = fa_align((size_t)FA_TILE * (FA_TILE + FA_PAD_H) * 2);
    L.k = 0;
    L.v = L.k + tile_h;
    L.q = L.v + tile_h;
    L.dO = L.q + tile_h;
    L.s = L.dO + tile_h;
    L.dp = L.s + tile_s;
    L.p = L.dp + tile_s;
    L.ds = L.p + tile_p;
    L.stage = L.ds + tile_p;
    L.lse = L.stage + fa_align((size_t)FA_WARPS * 16 * FA_STAGE_LD * 4);
    L.drow = L.lse + fa_align(FA_TILE * 4);
    L.total = L.drow + fa_align(FA_TILE * 4);
    return L;
}

/* Rows r0.. of a head (64 x hd) into shared memory, 16 bytes at a time;
 * rows at or past T become zeros. Row t starts at base + t * stride. */
static __device__ void fa_load_tile(bf16 *dst, const bf16 *base, int64_t stride, int64_t r0,
                                    int64_t T, int hd)
{
    int per_row = hd / 8, ld = hd + FA_PAD_H;
    for (int e = threadIdx.x; e < FA_TILE * per_row; e += blockDim.x) {
        int r = e / per_row, c = (e % per_row) * 8;
        int4 v = make_int4(0, 0, 0, 0);
        if (r0 + r < T)
            v = *(const int4 *)(base + (r0 + r) * stride + c);
        *(int4 *)(dst + r * ld + c) = v;
    }
}

__global__ void __launch_bounds__(FA_THREADS)
    flash_fwd_k(bf16 *out, float *lse, const bf16 *qkv, int64_t T, int64_t B, int64_t Hq,
                int64_t Hkv, int hd, float scale)
{
    extern __shared__ __align__(128) unsigned char smem[];
    fa_fwd_smem L = fa_fwd_layout(hd);
    bf16 *Qs = (bf16 *)(smem + L.q), *Ks = (bf16 *)(smem + L.k), *Vs = (bf16 *)(smem + L.v);
    float *Ss = (float *)(smem + L.s), *Os = (float *)(smem + L.o);
    bf16 *Ps = (bf16 *)(smem + L.p);
    float *Ms = (float *)(smem + L.m), *Ls = (float *)(smem + L.l);
    const int ldh = hd + FA_PAD_H, lds = FA_TILE + FA_PAD_F, ldp = FA_TILE + FA_PAD_H,
              ldo = hd + FA_PAD_F;
    int qt = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    int64_t W = (Hq + 2 * Hkv) * hd, kh = h / (Hq / Hkv), q0 = (int64_t)qt * FA_TILE;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const bf16 *qbase = qkv + b * W + h * hd, *kbase = qkv + b * W + (Hq + kh) * hd,
               *vbase = qkv + b * W + (Hq + Hkv + kh) * hd;
    fa_load_tile(Qs, qbase, B * W, q0, T, hd);
    for (int e = threadIdx.x; e < FA_TILE * ldo; e += blockDim.x)
        Os[e] = 0.0f;
    for (int e = threadIdx.x; e < FA_TILE; e += blockDim.x) {
        Ms[e] = -INFINITY;
        Ls[e] = 0.0f;
    }
    int nk = hd / 16, row = warp * 16 + (lane >> 1), hf = lane & 1;
    int64_t i = q0 + row;
    for (int kt = 0; kt <= qt; kt++) {
        int64_t j0 = (int64_t)kt * FA_TILE;
        __syncthreads(); /* the previous tile's K, V and P are no longer read */
        fa_load_tile(Ks, kbase, B * W, j0, T, hd);
        fa_load_tile(Vs, vbase, B * W, j0, T, hd);
        __syncthreads();
        /* S = Q K^T for this warp's 16 rows */
        for (int n = 0; n < FA_TILE / 16; n++) {
            frag_c acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int kk = 0; kk < nk; kk++) {
                frag_a a;
                frag_bt bk;
                wmma::load_matrix_sync(a, Qs + warp * 16 * ldh + kk * 16, ldh);
                wmma::load_matrix_sync(bk, Ks + n * 16 * ldh + kk * 16, ldh);
                wmma::mma_sync(acc, a, bk, acc);
            }
            wmma::store_matrix_sync(Ss + warp * 16 * lds + n * 16, acc, lds, wmma::mem_row_major);
        }
        __syncwarp();
        /* online softmax: two lanes per row, 32 columns each */
        float *srow = Ss + row * lds;
        float mx = -INFINITY;
        for (int c = hf * 32; c < hf * 32 + 32; c++) {
            int64_t j = j0 + c;
            float v = (i < T && j < T && j <= i) ? srow[c] * scale : -INFINITY;
            srow[c] = v;
            mx = fmaxf(mx, v);
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        float m_old = Ms[row], m_new = fmaxf(m_old, mx);
        float alpha = m_new == -INFINITY ? 1.0f : __expf(m_old - m_new);
        float sum = 0.0f;
        for (int c = hf * 32; c < hf * 32 + 32; c++) {
            float p = m_new == -INFINITY ? 0.0f : __expf(srow[c] - m_new);
            sum += p;
            Ps[row * ldp + c] = tb(p);
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        for (int d = hf; d < hd; d += 2)
            Os[row * ldo + d] *= alpha;
        __syncwarp();
        if (hf == 0) {
            Ms[row] = m_new;
            Ls[row] = Ls[row] * alpha + sum;
        }
        /* O += P V */
        for (int n = 0; n < nk; n++) {
            frag_c acc;
            wmma::load_matrix_sync(acc, Os + warp * 16 * ldo + n * 16, ldo, wmma::mem_row_major);
            for (int kk = 0; kk < FA_TILE / 16; kk++) {
                frag_a a;
                frag_b bv;
                wmma::load_matrix_sync(a, Ps + warp * 16 * ldp + kk * 16, ldp);
                wmma::load_matrix_sync(bv, Vs + kk * 16 * ldh + n * 16, ldh);
                wmma::mma_sync(acc, a, bv, acc);
            }
            wmma::store_matrix_sync(Os + warp * 16 * ldo + n * 16, acc, ldo, wmma::mem_row_major);
        }
        __syncwarp();
    }
    if (i < T) {
        float l = Ls[row], inv = l > 0.0f ? 1.0f / l : 0.0f;
        bf16 *o = out + (i * B + b) * Hq * hd + h * hd;
        for (int d = hf; d < hd; d += 2)
            o[d] = tb(Os[row * ldo + d] * inv);
        if (hf == 0)
            lse[((int64_t)b * Hq + h) * T + i] = Ms[row] + logf(l);
    }
}

/* D = rowsum(dO o O) per (b, h, i): one warp per row. */
__global__ void flash_drow_k(float *drow, const bf16 *dout, const bf16 *out, int64_t T,
                             int64_t B, int64_t Hq, int64_t hd)
{
    int lane = threadIdx.x & 31;
    int64_t r = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (r >= B * Hq * T)
        return;
    int64_t i = r % T, h = (r / T) % Hq, b = r / (T * Hq);
    int64_t off = (i * B + b) * Hq * hd + h * hd;
    float acc = 0.0f;
    for (int64_t d = lane; d < hd; d += 32)
        acc += lb(dout, off + d) * lb(out, off + d);
    acc = warp_sum(acc);
    if (lane == 0)
        drow[r] = acc;
}

__global__ void __launch_bounds__(FA_THREADS)
    flash_bwd_k(bf16 *dqkv, float *dq_acc, const bf16 *dout, const bf16 *qkv, const float *lse,
                const float *drow, int64_t T, int64_t B, int64_t Hq, int64_t Hkv, int hd,
                float scale)
{
    extern __shared__ __align__(128) unsigned char smem[];
    fa_bwd_smem L = fa_bwd_layout(hd);
    bf16 *Ks = (bf16 *)(smem + L.k), *Vs = (bf16 *)(smem + L.v), *Qs = (bf16 *)(smem + L.q),
         *dOs = (bf16 *)(smem + L.dO), *Ps = (bf16 *)(smem + L.p), *dSs = (bf16 *)(smem + L.ds);
    float *Ss = (float *)(smem + L.s), *dPs = (float *)(smem + L.dp),
          *stage = (float *)(smem + L.stage), *lse_s = (float *)(smem + L.lse),
          *drow_s = (float *)(smem + L.drow);
    const int ldh = hd + FA_PAD_H, lds = FA_TILE + FA_PAD_F, ldp = FA_TILE + FA_PAD_H;
    int kt = blockIdx.x, kh = blockIdx.y, b = blockIdx.z;
    int64_t W = (Hq + 2 * Hkv) * hd, group = Hq / Hkv, j0 = (int64_t)kt * FA_TILE;
    int64_t ntiles = (T + FA_TILE - 1) / FA_TILE, ldo = Hq * hd;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nk = hd / 16;
    float *wst = stage + warp * 16 * FA_STAGE_LD;
    fa_load_tile(Ks, qkv + b * W + (Hq + kh) * hd, B * W, j0, T, hd);
    fa_load_tile(Vs, qkv + b * W + (Hq + Hkv + kh) * hd, B * W, j0, T, hd);
    frag_c dK[FA_MAX_HD / 16], dV[FA_MAX_HD / 16];
#pragma unroll
    for (int n = 0; n < FA_MAX_HD / 16; n++) {
        wmma::fill_fragment(dK[n], 0.0f);
        wmma::fill_fragment(dV[n], 0.0f);
    }
    for (int64_t h = kh * group; h < (kh + 1) * group; h++) {
        for (int64_t qt = kt; qt < ntiles; qt++) {
            int64_t i0 = qt * FA_TILE;
            __syncthreads(); /* the previous tile is no longer read */
            fa_load_tile(Qs, qkv + b * W + h * hd, B * W, i0, T, hd);
            fa_load_tile(dOs, dout + b * ldo + h * hd, B * ldo, i0, T, hd);
            for (int e = threadIdx.x; e < FA_TILE; e += blockDim.x) {
                int64_t i = i0 + e;
                lse_s[e] = i < T ? lse[((int64_t)b * Hq + h) * T + i] : 0.0f;
                drow_s[e] = i < T ? drow[((int64_t)b * Hq + h) * T + i] : 0.0f;
            }
            __syncthreads();
            /* S = Q K^T and dP = dO V^T for this warp's 16 query rows */
            for (int n = 0; n < FA_TILE / 16; n++) {
                frag_c s_acc, p_acc;
                wmma::fill_fragment(s_acc, 0.0f);
                wmma::fill_fragment(p_acc, 0.0f);
                for (int kk = 0; kk < nk; kk++) {
                    frag_a a;
                    frag_bt bt;
                    wmma::load_matrix_sync(a, Qs + warp * 16 * ldh + kk * 16, ldh);
                    wmma::load_matrix_sync(bt, Ks + n * 16 * ldh + kk * 16, ldh);
                    wmma::mma_sync(s_acc, a, bt, s_acc);
                    wmma::load_matrix_sync(a, dOs + warp * 16 * ldh + kk * 16, ldh);
                    wmma::load_matrix_sync(bt, Vs + n * 16 * ldh + kk * 16, ldh);
                    wmma::mma_sync(p_acc, a, bt, p_acc);
                }
                wmma::store_matrix_sync(Ss + warp * 16 * lds + n * 16, s_acc, lds,
                                        wmma::mem_row_major);
                wmma::store_matrix_sync(dPs + warp * 16 * lds + n * 16, p_acc, lds,
                                        wmma::mem_row_major);
            }
            __syncwarp();
            /* P = exp(scale S - lse), dS = P (dP - D) */
            {
                int row = warp * 16 + (lane >> 1), hf = lane & 1;
                int64_t i = i0 + row;
                for (int c = hf * 32; c < hf * 32 + 32; c++) {
                    int64_t j = j0 + c;
                    int ok = i < T && j < T && j <= i;
                    float p = ok ? __expf(Ss[row * lds + c] * scale - lse_s[row]) : 0.0f;
                    float ds = p * (dPs[row * lds + c] - drow_s[row]);
                    Ps[row * ldp + c] = tb(p);
                    dSs[row * ldp + c] = tb(ds);
                }
            }
            __syncthreads();
            /* dV += P^T dO and dK += dS^T Q for this warp's 16 key rows */
#pragma unroll
            for (int n = 0; n < FA_MAX_HD / 16; n++) {
                if (n >= nk)
                    break;
                for (int kk = 0; kk < FA_TILE / 16; kk++) {
                    frag_at at;
                    frag_b bb;
                    wmma::load_matrix_sync(at, Ps + kk * 16 * ldp + warp * 16, ldp);
                    wmma::load_matrix_sync(bb, dOs + kk * 16 * ldh + n * 16, ldh);
                    wmma::mma_sync(dV[n], at, bb, dV[n]);
                    wmma::load_matrix_sync(at, dSs + kk * 16 * ldp + warp * 16, ldp);
                    wmma::load_matrix_sync(bb, Qs + kk * 16 * ldh + n * 16, ldh);
                    wmma::mma_sync(dK[n], at, bb, dK[n]);
                }
            }
            /* dQ += dS K for this warp's 16 query rows, into the fp32 buffer */
            for (int n = 0; n < nk; n++) {
                frag_c acc;
                wmma::fill_fragment(acc, 0.0f);
                for (int kk = 0; kk < FA_TILE / 16; kk++) {
                    frag_a a;
                    frag_b bb;
                    wmma::load_matrix_sync(a, dSs + warp * 16 * ldp + kk * 16, ldp);
                    wmma::load_matrix_sync(bb, Ks + kk * 16 * ldh + n * 16, ldh);
                    wmma::mma_sync(acc, a, bb, acc);
                }
                wmma::store_matrix_sync(wst, acc, FA_STAGE_LD, wmma::mem_row_major);
                __syncwarp();
                for (int e = lane; e < 256; e += 32) {
                    int r = e / 16, c = e % 16;
                    int64_t i = i0 + warp * 16 + r;
                    if (i < T)
                        atomicAdd(dq_acc + (((int64_t)b * Hq + h) * T + i) * hd + n * 16 + c,
                                  wst[r * FA_STAGE_LD + c]);
                }
                __syncwarp();
            }
        }
    }
    /* dK (scaled) and dV of this warp's 16 key rows into dqkv */
#pragma unroll
    for (int n = 0; n < FA_MAX_HD / 16; n++) {
        if (n >= nk)
            break;
        for (int which = 0; which < 2; which++) {
            wmma::store_matrix_sync(wst, which ? dV[n] : dK[n], FA_STAGE_LD, wmma::mem_row_major);
            __syncwarp();
            for (int e = lane; e < 256; e += 32) {
                int r = e / 16, c = e % 16;
                int64_t j = j0 + warp * 16 + r;
                if (j < T) {
                    int64_t col = (which ? Hq + Hkv + kh : Hq + kh) * hd + n * 16 + c;
                    float v = wst[r * FA_STAGE_LD + c];
                    dqkv[(j * B + b) * W + col] = tb(which ? v : v * scale);
                }
            }
            __syncwarp();
        }
    }
}

/* dqkv's query columns from the fp32 sums, scaled. */
__global__ void flash_dq_k(bf16 *dqkv, const float *dq_acc, int64_t T, int64_t B, int64_t Hq,
                           int64_t Hkv, int64_t hd, float scale)
{
    int64_t W = (Hq + 2 * Hkv) * hd;
    GRID_STRIDE(e, B * Hq * T * hd)
    {
        int64_t d = e % hd, i = (e / hd) % T, h = (e / (hd * T)) % Hq, b = e / (hd * T * Hq);
        dqkv[(i * B + b) * W + h * hd + d] = tb(dq_acc[e] * scale);
    }
}

static int aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

extern "C" cudaError_t exec_cuk_flash_fwd(cudaStream_t s, void *out, float *lse, const void *qkv,
                                          int64_t T, int64_t B, int64_t Hq, int64_t Hkv,
                                          int64_t hd, double *flops)
{
    if (!exec_cuk_flash_supported(hd) || !aligned16(qkv) || Hq % Hkv != 0)
        return cudaErrorInvalidValue;
    if (T * B * Hq == 0)
        return cudaGetLastError();
    fa_fwd_smem L = fa_fwd_layout((int)hd);
    cudaError_t e = cudaFuncSetAttribute(flash_fwd_k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)L.total);
    if (e != cudaSuccess)
        return e;
    int64_t nt = (T + FA_TILE - 1) / FA_TILE;
    dim3 grid((unsigned)nt, (unsigned)Hq, (unsigned)B);
    flash_fwd_k<<<grid, FA_THREADS, L.total, s>>>((bf16 *)out, lse, (const bf16 *)qkv, T, B, Hq,
                                                  Hkv, (int)hd, (float)(1.0 / sqrt((double)hd)));
    /* tiles (qt, kt <= qt): nt (nt + 1) / 2 per head, two 64 x 64 x hd products each */
    *flops = 4.0 * (double)FA_TILE * FA_TILE * (double)hd * (double)(nt * (nt + 1) / 2) *
             (double)(B * Hq);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_flash_bwd(cudaStream_t s, void *dqkv, const void *dout,
                                          const void *qkv, const void *out, const float *lse,
                                          float *dq_acc, float *drow, int64_t T, int64_t B,
                                          int64_t Hq, int64_t Hkv, int64_t hd, double *flops)
{
    if (!exec_cuk_flash_supported(hd) || !aligned16(qkv) || !aligned16(dout) || Hq % Hkv != 0)
        return cudaErrorInvalidValue;
    if (T * B * Hq == 0)
        return cudaGetLastError();
    fa_bwd_smem L = fa_bwd_layout((int)hd);
    cudaError_t e = cudaFuncSetAttribute(flash_bwd_k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)L.total);
    if (e != cudaSuccess)
        return e;
    int64_t rows = B * Hq * T, nt = (T + FA_TILE - 1) / FA_TILE;
    flash_drow_k<<<(unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK), THREADS, 0, s>>>(
        drow, (const bf16 *)dout, (const bf16 *)out, T, B, Hq, hd);
    e = cudaMemsetAsync(dq_acc, 0, (size_t)(rows * hd) * sizeof(float), s);
    if (e != cudaSuccess)
        return e;
    dim3 grid((unsigned)nt, (unsigned)Hkv, (unsigned)B);
    float scale = (float)(1.0 / sqrt((double)hd));
    flash_bwd_k<<<grid, FA_THREADS, L.total, s>>>((bf16 *)dqkv, dq_acc, (const bf16 *)dout,
                                                  (const bf16 *)qkv, lse, drow, T, B, Hq, Hkv,
                                                  (int)hd, scale);
    flash_dq_k<<<blocks_for(rows * hd, THREADS), THREADS, 0, s>>>((bf16 *)dqkv, dq_acc, T, B, Hq,
                                                                  Hkv, hd, scale);
    /* per tile pair: S, dP, dV, dK, dQ, five 64 x 64 x hd products */
    *flops = 10.0 * (double)FA_TILE * FA_TILE * (double)hd * (double)(nt * (nt + 1) / 2) *
             (double)(B * Hq);
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* vocab-parallel cross-entropy: one block per row                           */
/* ------------------------------------------------------------------------ */

__global__ void ce_rowmax_k(float *rowmax, const bf16 *logits, int64_t vn)
{
    int64_t i = blockIdx.x;
    const bf16 *l = logits + i * vn;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < vn; j += blockDim.x)
        mx = fmaxf(mx, __bfloat162float(l[j]));
    mx = block_reduce(mx, 1);
    if (threadIdx.x == 0)
        rowmax[i] = mx;
}

/* The logits stay as they are: ce_loss_bwd exponentiates them again, which
 * is cheaper than a bf16 round trip of exp(logit - max) is inaccurate. */
__global__ void ce_stats_k(float *stats, const bf16 *logits, const float *rowmax,
                           const int32_t *targets, int64_t n, int64_t vn, int64_t v0)
{
    int64_t i = blockIdx.x;
    const bf16 *l = logits + i * vn;
    float mx = rowmax[i], sum = 0.0f;
    for (int64_t j = threadIdx.x; j < vn; j += blockDim.x)
        sum += expf(__bfloat162float(l[j]) - mx);
    sum = block_reduce(sum, 0);
    if (threadIdx.x == 0) {
        int64_t t = (int64_t)targets[i] - v0;
        stats[i] = sum;
        stats[n + i] = t >= 0 && t < vn ? __bfloat162float(l[t]) : 0.0f;
    }
}

__global__ void ce_loss_bwd_k(float *losses, bf16 *logits, const float *rowmax,
                              const float *stats, const int32_t *targets, int64_t n, int64_t vn,
                              int64_t v0, float scale)
{
    int64_t i = blockIdx.x, t = (int64_t)targets[i] - v0;
    bf16 *l = logits + i * vn;
    float mx = rowmax[i], sum = stats[i], k = scale / sum;
    if (threadIdx.x == 0)
        losses[i] = logf(sum) + mx - stats[n + i];
    for (int64_t j = threadIdx.x; j < vn; j += blockDim.x) {
        float g = expf(__bfloat162float(l[j]) - mx) * k;
        if (j == t)
            g -= scale;
        l[j] = tb(g);
    }
}

extern "C" cudaError_t exec_cuk_ce_rowmax(cudaStream_t s, float *rowmax, const void *logits,
                                          int64_t n, int64_t vn)
{
    if (n > 0)
        ce_rowmax_k<<<(unsigned)n, THREADS, 0, s>>>(rowmax, (const bf16 *)logits, vn);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_ce_stats(cudaStream_t s, float *stats, const void *logits,
                                         const float *rowmax, const int32_t *targets, int64_t n,
                                         int64_t vn, int64_t v0)
{
    if (n > 0)
        ce_stats_k<<<(unsigned)n, THREADS, 0, s>>>(stats, (const bf16 *)logits, rowmax, targets,
                                                   n, vn, v0);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_ce_loss_bwd(cudaStream_t s, float *losses, void *logits,
                                            const float *rowmax, const float *stats,
                                            const int32_t *targets, int64_t n, int64_t vn,
                                            int64_t v0, double scale)
{
    if (n > 0)
        ce_loss_bwd_k<<<(unsigned)n, THREADS, 0, s>>>(losses, (bf16 *)logits, rowmax, stats,
                                                      targets, n, vn, v0, (float)scale);
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* elementwise, reductions, optimizer                                        */
/* ------------------------------------------------------------------------ */

__global__ void add_k(bf16 *y, const bf16 *a, const bf16 *b, int64_t n)
{
    GRID_STRIDE(i, n)
    y[i] = tb(__bfloat162float(b ? b[i] : y[i]) + __bfloat162float(a[i]));
}

extern "C" cudaError_t exec_cuk_add(cudaStream_t s, void *y, const void *a, const void *b,
                                    int64_t n)
{
    if (n > 0)
        add_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)y, (const bf16 *)a,
                                                        (const bf16 *)b, n);
    return cudaGetLastError();
}

__global__ void scale_k(bf16 *x, float v, int64_t n)
{
    GRID_STRIDE(i, n)
    x[i] = tb(__bfloat162float(x[i]) * v);
}

extern "C" cudaError_t exec_cuk_scale(cudaStream_t s, void *x, double v, int64_t n)
{
    if (n > 0)
        scale_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)x, (float)v, n);
    return cudaGetLastError();
}

#define REDUCE_MAX_BLOCKS 1024

extern "C" int exec_cuk_reduce_blocks(int64_t n)
{
    int64_t b = (n + 8 * THREADS - 1) / (8 * THREADS);
    return (int)(b < 1 ? 1 : b > REDUCE_MAX_BLOCKS ? REDUCE_MAX_BLOCKS : b);
}

/* Block k sums a fixed grid-stride share in double: the same partials for
 * the same n every time. */
__global__ void reduce_k(double *partial, const void *x, int64_t n, int sq)
{
    __shared__ double part[THREADS];
    double acc = 0.0;
    GRID_STRIDE(i, n)
    {
        double v = sq ? (double)__bfloat162float(((const bf16 *)x)[i])
                      : (double)((const float *)x)[i];
        acc += sq ? v * v : v;
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = part[0];
}

extern "C" cudaError_t exec_cuk_reduce(cudaStream_t s, double *partial, const void *x, int64_t n,
                                       int sq)
{
    reduce_k<<<(unsigned)exec_cuk_reduce_blocks(n), THREADS, 0, s>>>(partial, x, n, sq);
    return cudaGetLastError();
}

/* AdamW (Loshchilov & Hutter 2019) on fp32 master weights and moments, the
 * bf16 parameter rounded from the master (llm.c's adamw_kernel3 without its
 * stochastic rounding); the same formula as the CPU device. */
__global__ void adamw_k(bf16 *param, float *master, const bf16 *grad, float *m, float *v,
                        int64_t n, float lr, float b1, float b2, float eps, float wd, float gs,
                        float ic1, float ic2)
{
    GRID_STRIDE(i, n)
    {
        float g = __bfloat162float(grad[i]) * gs;
        float mi = b1 * m[i] + (1.0f - b1) * g;
        float vi = b2 * v[i] + (1.0f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        float p = master[i];
        p -= lr * (mi * ic1 / (sqrtf(vi * ic2) + eps) + wd * p);
        master[i] = p;
        param[i] = tb(p);
    }
}

extern "C" cudaError_t exec_cuk_adamw(cudaStream_t s, void *param, float *master,
                                      const void *grad, float *m, float *v, int64_t n, double lr,
                                      double beta1, double beta2, double eps, double wd,
                                      double grad_scale, double ic1, double ic2)
{
    if (n > 0)
        adamw_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>(
            (bf16 *)param, master, (const bf16 *)grad, m, v, n, (float)lr, (float)beta1,
            (float)beta2, (float)eps, (float)wd, (float)grad_scale, (float)ic1, (float)ic2);
    return cudaGetLastError();
}

__global__ void widen_k(float *dst, const bf16 *src, int64_t n)
{
    GRID_STRIDE(i, n)
    dst[i] = __bfloat162float(src[i]);
}

extern "C" cudaError_t exec_cuk_widen(cudaStream_t s, float *dst, const void *src, int64_t n)
{
    if (n > 0)
        widen_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>(dst, (const bf16 *)src, n);
    return cudaGetLastError();
}
