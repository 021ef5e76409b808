/*
 * exec_cuda_kernels.cu: the CUDA device's own kernels (everything that is
 * not a matrix product; those go to cuBLASLt in exec_matmul_cuda.c), behind
 * the plain C entry points of exec_cuda_kernels.h.
 *
 * The shapes follow llm.c's CUDA kernels (train_gpt2.cu and the llmc/ headers): one
 * warp per row for the norms, one block per row for the softmax and the
 * cross-entropy, elementwise kernels over grid-stride loops; the code is
 * this project's own. Storage is bf16, arithmetic fp32 (double for RoPE's
 * angles and the reductions that come back to the host). Every result is
 * deterministic. The fused attention lives in exec_cuda_attention.cu.
 */
#include <math.h>
#include <stdint.h>

#include "exec/exec_cuda_common.cuh"
#include "exec/exec_cuda_kernels.h"

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
/* LayerNorm and RMSNorm: one warp per row                                   */
/* ------------------------------------------------------------------------ */


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

/* The same with 16-byte loads and stores (C a multiple of 8, every row
 * aligned): the row is read three times, from L1 after the first. */
__global__ void norm_fwd_v_k(bf16 *out, float *mean, float *rstd, const bf16 *inp, const bf16 *w,
                             const bf16 *b, int64_t n, int64_t C, int rms, float eps)
{
    int lane = threadIdx.x & 31;
    int64_t i = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (i >= n)
        return;
    const bf16 *x = inp + i * C;
    float m = 0.0f, f[VEC];
    if (!rms) {
        for (int64_t c = lane * VEC; c < C; c += 32 * VEC) {
            load8(f, x + c);
#pragma unroll
            for (int k = 0; k < VEC; k++)
                m += f[k];
        }
        m = warp_sum(m) / (float)C;
    }
    float v = 0.0f;
    for (int64_t c = lane * VEC; c < C; c += 32 * VEC) {
        load8(f, x + c);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            v += (f[k] - m) * (f[k] - m);
    }
    v = warp_sum(v) / (float)C;
    float sd = 1.0f / sqrtf(v + eps);
    bf16 *o = out + i * C;
    for (int64_t c = lane * VEC; c < C; c += 32 * VEC) {
        float wv[VEC], bv[VEC] = {0, 0, 0, 0, 0, 0, 0, 0};
        load8(f, x + c);
        load8(wv, w + c);
        if (b)
            load8(bv, b + c);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            f[k] = (f[k] - m) * sd * wv[k] + bv[k];
        store8(o + c, f);
    }
    if (lane == 0) {
        if (mean)
            mean[i] = m;
        rstd[i] = sd;
    }
}

extern "C" cudaError_t exec_cuk_norm_fwd(cudaStream_t s, void *out, float *mean, float *rstd,
                                         const void *inp, const void *w, const void *b, int64_t n,
                                         int64_t C, int rms, double eps)
{
    if (n <= 0)
        return cudaGetLastError();
    unsigned blocks = (unsigned)((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    if (C % VEC == 0 && all_aligned16(out, inp, w, b))
        norm_fwd_v_k<<<blocks, THREADS, 0, s>>>((bf16 *)out, mean, rstd, (const bf16 *)inp,
                                                (const bf16 *)w, (const bf16 *)b, n, C, rms,
                                                (float)eps);
    else
        norm_fwd_k<<<blocks, THREADS, 0, s>>>((bf16 *)out, mean, rstd, (const bf16 *)inp,
                                              (const bf16 *)w, (const bf16 *)b, n, C, rms,
                                              (float)eps);
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

/* The same with 16-byte loads and stores. */
__global__ void norm_bwd_input_v_k(bf16 *dinp, const bf16 *dout, const bf16 *inp, const bf16 *w,
                                   const float *mean, const float *rstd, int64_t n, int64_t C,
                                   int rms, int accumulate)
{
    int lane = threadIdx.x & 31;
    int64_t i = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (i >= n)
        return;
    const bf16 *g = dout + i * C, *x = inp + i * C;
    float m = rms ? 0.0f : mean[i], sd = rstd[i];
    float dn_mean = 0.0f, dn_xh = 0.0f, gv[VEC], xv[VEC], wv[VEC];
    for (int64_t c = lane * VEC; c < C; c += 32 * VEC) {
        load8(gv, g + c);
        load8(xv, x + c);
        load8(wv, w + c);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            float dn = gv[k] * wv[k];
            dn_mean += dn;
            dn_xh += dn * (xv[k] - m) * sd;
        }
    }
    dn_mean = rms ? 0.0f : warp_sum(dn_mean) / (float)C;
    dn_xh = warp_sum(dn_xh) / (float)C;
    bf16 *dx = dinp + i * C;
    for (int64_t c = lane * VEC; c < C; c += 32 * VEC) {
        float dv[VEC];
        load8(gv, g + c);
        load8(xv, x + c);
        load8(wv, w + c);
        if (accumulate)
            load8(dv, dx + c);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            float xh = (xv[k] - m) * sd;
            float v = sd * (gv[k] * wv[k] - dn_mean - xh * dn_xh);
            dv[k] = accumulate ? dv[k] + v : v;
        }
        store8(dx + c, dv);
    }
}

extern "C" cudaError_t exec_cuk_norm_bwd_input(cudaStream_t s, void *dinp, const void *dout,
                                               const void *inp, const void *w, const float *mean,
                                               const float *rstd, int64_t n, int64_t C, int rms,
                                               int accumulate)
{
    if (n <= 0)
        return cudaGetLastError();
    unsigned blocks = (unsigned)((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    if (C % VEC == 0 && all_aligned16(dinp, dout, inp, w))
        norm_bwd_input_v_k<<<blocks, THREADS, 0, s>>>((bf16 *)dinp, (const bf16 *)dout,
                                                      (const bf16 *)inp, (const bf16 *)w, mean,
                                                      rstd, n, C, rms, accumulate);
    else
        norm_bwd_input_k<<<blocks, THREADS, 0, s>>>((bf16 *)dinp, (const bf16 *)dout,
                                                    (const bf16 *)inp, (const bf16 *)w, mean,
                                                    rstd, n, C, rms, accumulate);
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

/* The same partials with 16-byte loads: a block covers 256 columns (32
 * threads of 8) x 8 row lanes; the same chunks, so the same sums in the
 * same order whichever kernel ran. */
__global__ void colsum_part_v_k(float *partial, const bf16 *dout, const bf16 *inp,
                                const float *mean, const float *rstd, int64_t n, int64_t C,
                                int rms, int nchunks)
{
    __shared__ float sw[8][32 * VEC + 1], sb[8][32 * VEC + 1];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    int64_t c = ((int64_t)blockIdx.x * 32 + tx) * VEC;
    int chunk = blockIdx.y;
    int64_t r0 = n * chunk / nchunks, r1 = n * (chunk + 1) / nchunks;
    float aw[VEC] = {0, 0, 0, 0, 0, 0, 0, 0}, ab[VEC] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (c < C)
        for (int64_t r = r0 + ty; r < r1; r += 8) {
            float g[VEC], x[VEC];
            load8(g, dout + r * C + c);
            if (inp) {
                load8(x, inp + r * C + c);
                float m = rms ? 0.0f : mean[r], sd = rstd[r];
#pragma unroll
                for (int k = 0; k < VEC; k++)
                    aw[k] += g[k] * (x[k] - m) * sd;
            }
#pragma unroll
            for (int k = 0; k < VEC; k++)
                ab[k] += g[k];
        }
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        sw[ty][tx * VEC + k] = aw[k];
        sb[ty][tx * VEC + k] = ab[k];
    }
    __syncthreads();
    if (ty == 0 && c < C) {
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            float w = 0.0f, b = 0.0f;
            for (int y = 0; y < 8; y++) {
                w += sw[y][tx * VEC + k];
                b += sb[y][tx * VEC + k];
            }
            partial[(int64_t)chunk * 2 * C + c + k] = w;
            partial[(int64_t)chunk * 2 * C + C + c + k] = b;
        }
    }
}

extern "C" cudaError_t exec_cuk_colsum(cudaStream_t s, void *dw, void *db, const void *dout,
                                       const void *inp, const float *mean, const float *rstd,
                                       int64_t n, int64_t C, int rms, float *partial, int nchunks)
{
    if (C <= 0)
        return cudaGetLastError();
    if (C % VEC == 0 && all_aligned16(dout, dw ? inp : NULL, NULL, NULL)) {
        dim3 grid((unsigned)((C / VEC + 31) / 32), (unsigned)nchunks);
        colsum_part_v_k<<<grid, THREADS, 0, s>>>(partial, (const bf16 *)dout,
                                                 dw ? (const bf16 *)inp : NULL, mean, rstd, n, C,
                                                 rms, nchunks);
    } else {
        dim3 grid((unsigned)((C + 31) / 32), (unsigned)nchunks);
        colsum_part_k<<<grid, THREADS, 0, s>>>(partial, (const bf16 *)dout,
                                               dw ? (const bf16 *)inp : NULL, mean, rstd, n, C,
                                               rms, nchunks);
    }
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

/* The same, 8 elements per thread with 16-byte loads and stores. */
__global__ void gelu_fwd_v_k(bf16 *out, const bf16 *inp, int64_t n8)
{
    GRID_STRIDE(i, n8)
    {
        float f[VEC];
        load8(f, inp + i * VEC);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            float x = f[k];
            f[k] = 0.5f * x * (1.0f + tanhf(GELU_K * (x + GELU_C * x * x * x)));
        }
        store8(out + i * VEC, f);
    }
}

__global__ void gelu_bwd_v_k(bf16 *dinp, const bf16 *inp, const bf16 *dout, int64_t n8)
{
    GRID_STRIDE(i, n8)
    {
        float f[VEC], go[VEC];
        load8(f, inp + i * VEC);
        load8(go, dout + i * VEC);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            float x = f[k];
            float th = tanhf(GELU_K * (x + GELU_C * x * x * x));
            float g = 0.5f * (1.0f + th) +
                      x * 0.5f * (1.0f - th * th) * GELU_K * (1.0f + 3.0f * GELU_C * x * x);
            f[k] = g * go[k];
        }
        store8(dinp + i * VEC, f);
    }
}

extern "C" cudaError_t exec_cuk_gelu_fwd(cudaStream_t s, void *out, const void *inp, int64_t n)
{
    if (n > 0 && n % VEC == 0 && all_aligned16(out, inp, NULL, NULL))
        gelu_fwd_v_k<<<blocks_for(n / VEC, THREADS), THREADS, 0, s>>>((bf16 *)out,
                                                                     (const bf16 *)inp, n / VEC);
    else if (n > 0)
        gelu_fwd_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)out, (const bf16 *)inp, n);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_gelu_bwd(cudaStream_t s, void *dinp, const void *inp,
                                         const void *dout, int64_t n)
{
    if (n > 0 && n % VEC == 0 && all_aligned16(dinp, inp, dout, NULL))
        gelu_bwd_v_k<<<blocks_for(n / VEC, THREADS), THREADS, 0, s>>>(
            (bf16 *)dinp, (const bf16 *)inp, (const bf16 *)dout, n / VEC);
    else if (n > 0)
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
/* vocab-parallel cross-entropy: one block per row                           */
/* ------------------------------------------------------------------------ */

/* One pass over a row of logits gives its maximum and its sum of
 * exp(logit - maximum) together (the online softmax's running pair,
 * Milakov & Gimelshein 2018): a thread keeps (m, s) over its elements, and
 * two pairs combine as (max, s1 exp(m1 - M) + s2 exp(m2 - M)). */
static __device__ __forceinline__ void ms_add(float &m, float &s, float x)
{
    if (x > m) {
        s = s * __expf(m - x) + 1.0f;
        m = x;
    } else {
        s += __expf(x - m);
    }
}

static __device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2)
{
    float M = fmaxf(m, m2);
    if (M == -INFINITY)
        return;
    s = s * __expf(m - M) + s2 * __expf(m2 - M);
    m = M;
}

/* Rows of logits read 8 at a time where vn is a multiple of 8 (and the
 * logits aligned: every row is then aligned), else one at a time. rowmax[i]
 * and local[i] get the row's maximum, local[n + i] its sum of exponentials
 * under it: ce_stats needs no second pass over the logits. */
__global__ void ce_rowmax_k(float *rowmax, float *local, const bf16 *logits, int64_t n,
                            int64_t vn)
{
    __shared__ float pm[THREADS / 32], ps[THREADS / 32];
    int64_t i = blockIdx.x;
    const bf16 *l = logits + i * vn;
    float m = -INFINITY, s = 0.0f;
    if (vn % VEC == 0 && aligned16(logits))
        for (int64_t j = threadIdx.x * VEC; j < vn; j += blockDim.x * VEC) {
            float f[VEC];
            load8(f, l + j);
#pragma unroll
            for (int q = 0; q < VEC; q++)
                ms_add(m, s, f[q]);
        }
    else
        for (int64_t j = threadIdx.x; j < vn; j += blockDim.x)
            ms_add(m, s, __bfloat162float(l[j]));
    for (int o = 16; o > 0; o >>= 1)
        ms_merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) {
        pm[w] = m;
        ps[w] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float M = pm[0], S = ps[0];
        for (int k = 1; k < (int)(blockDim.x >> 5); k++)
            ms_merge(M, S, pm[k], ps[k]);
        rowmax[i] = M;
        local[i] = M;
        local[n + i] = S;
    }
}

/* The sum of exponentials under the global maximum (rowmax, after the TP
 * all-reduce) from this rank's pair: local sum x exp(local max - global
 * max); the target's logit read alone. One thread per row. */
__global__ void ce_stats_k(float *stats, const float *local, const bf16 *logits,
                           const float *rowmax, const int32_t *targets, int64_t n, int64_t vn,
                           int64_t v0)
{
    GRID_STRIDE(i, n)
    {
        float lm = local[i], M = rowmax[i];
        int64_t t = (int64_t)targets[i] - v0;
        stats[i] = lm == -INFINITY ? 0.0f : local[n + i] * __expf(lm - M);
        stats[n + i] = t >= 0 && t < vn ? __bfloat162float(logits[i * vn + t]) : 0.0f;
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
    if (vn % VEC == 0 && aligned16(logits)) {
        for (int64_t j = threadIdx.x * VEC; j < vn; j += blockDim.x * VEC) {
            float f[VEC];
            load8(f, l + j);
#pragma unroll
            for (int q = 0; q < VEC; q++)
                f[q] = expf(f[q] - mx) * k - (j + q == t ? scale : 0.0f);
            store8(l + j, f);
        }
        return;
    }
    for (int64_t j = threadIdx.x; j < vn; j += blockDim.x) {
        float g = expf(__bfloat162float(l[j]) - mx) * k;
        if (j == t)
            g -= scale;
        l[j] = tb(g);
    }
}

extern "C" cudaError_t exec_cuk_ce_rowmax(cudaStream_t s, float *rowmax, float *local,
                                          const void *logits, int64_t n, int64_t vn)
{
    if (n > 0)
        ce_rowmax_k<<<(unsigned)n, THREADS, 0, s>>>(rowmax, local, (const bf16 *)logits, n, vn);
    return cudaGetLastError();
}

extern "C" cudaError_t exec_cuk_ce_stats(cudaStream_t s, float *stats, const float *local,
                                         const void *logits, const float *rowmax,
                                         const int32_t *targets, int64_t n, int64_t vn,
                                         int64_t v0)
{
    if (n > 0)
        ce_stats_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>(stats, local, (const bf16 *)logits,
                                                             rowmax, targets, n, vn, v0);
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

__global__ void add_v_k(bf16 *y, const bf16 *a, const bf16 *b, int64_t n8)
{
    GRID_STRIDE(i, n8)
    {
        float x[VEC], z[VEC];
        load8(x, a + i * VEC);
        load8(z, (b ? b : y) + i * VEC);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            z[k] += x[k];
        store8(y + i * VEC, z);
    }
}

extern "C" cudaError_t exec_cuk_add(cudaStream_t s, void *y, const void *a, const void *b,
                                    int64_t n)
{
    if (n > 0 && n % VEC == 0 && all_aligned16(y, a, b, NULL))
        add_v_k<<<blocks_for(n / VEC, THREADS), THREADS, 0, s>>>((bf16 *)y, (const bf16 *)a,
                                                                (const bf16 *)b, n / VEC);
    else if (n > 0)
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
    if (sq && n % VEC == 0 && aligned16(x)) {
        GRID_STRIDE(i, n / VEC)
        {
            float f[VEC];
            load8(f, (const bf16 *)x + i * VEC);
#pragma unroll
            for (int k = 0; k < VEC; k++)
                acc += (double)f[k] * (double)f[k];
        }
    } else {
        GRID_STRIDE(i, n)
        {
            double v = sq ? (double)__bfloat162float(((const bf16 *)x)[i])
                          : (double)((const float *)x)[i];
            acc += sq ? v * v : v;
        }
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

extern "C" int exec_cuk_reduce_blocks_max(void)
{
    return REDUCE_MAX_BLOCKS;
}

/* reduce_k's partial of block b, times k, added into acc[b]: kernels on one
 * stream run in order, so the running sums are the same for the same calls. */
__global__ void reduce_acc_k(double *acc, const void *x, int64_t n, int sq, double k)
{
    __shared__ double part[THREADS];
    double a = 0.0;
    if (sq && n % VEC == 0 && aligned16(x)) {
        GRID_STRIDE(i, n / VEC)
        {
            float f[VEC];
            load8(f, (const bf16 *)x + i * VEC);
#pragma unroll
            for (int q = 0; q < VEC; q++)
                a += (double)f[q] * (double)f[q];
        }
    } else {
        GRID_STRIDE(i, n)
        {
            double v = sq ? (double)__bfloat162float(((const bf16 *)x)[i])
                          : (double)((const float *)x)[i];
            a += sq ? v * v : v;
        }
    }
    part[threadIdx.x] = a;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        acc[blockIdx.x] += k * part[0];
}

extern "C" cudaError_t exec_cuk_reduce_acc(cudaStream_t s, double *acc, const void *x, int64_t n,
                                           int sq, double k)
{
    if (n > 0)
        reduce_acc_k<<<(unsigned)exec_cuk_reduce_blocks(n), THREADS, 0, s>>>(acc, x, n, sq, k);
    return cudaGetLastError();
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
/* AdamW's constants of a step: lr, beta1, beta2, eps, the gradients'
 * scale (clipping) and the bias corrections 1 / (1 - beta^t). */
struct aw_hyper {
    float lr, b1, b2, eps, gs, ic1, ic2;
};

/* One element's update: the moments from the scaled gradient, the master
 * weight with decoupled decay wd; every AdamW kernel below runs it. */
static __device__ __forceinline__ void aw_update(const aw_hyper &h, float wd, float g, float &m,
                                                 float &v, float &p)
{
    g *= h.gs;
    m = h.b1 * m + (1.0f - h.b1) * g;
    v = h.b2 * v + (1.0f - h.b2) * g * g;
    p -= h.lr * (m * h.ic1 / (sqrtf(v * h.ic2) + h.eps) + wd * p);
}

__global__ void adamw_k(bf16 *param, float *master, const bf16 *grad, float *m, float *v,
                        int64_t n, aw_hyper h, float wd)
{
    GRID_STRIDE(i, n)
    {
        float mi = m[i], vi = v[i], p = master[i];
        aw_update(h, wd, __bfloat162float(grad[i]), mi, vi, p);
        m[i] = mi;
        v[i] = vi;
        master[i] = p;
        param[i] = tb(p);
    }
}

/* The same, 8 elements per thread: 16-byte loads and stores of the bf16
 * parameter and gradient, two of 16 bytes of each fp32 array. */
__global__ void adamw_v_k(bf16 *param, float *master, const bf16 *grad, float *m, float *v,
                          int64_t n8, aw_hyper h, float wd)
{
    GRID_STRIDE(i, n8)
    {
        float g[VEC], mi[VEC], vi[VEC], p[VEC];
        int64_t e = i * VEC;
        load8(g, grad + e);
        load8f(mi, m + e);
        load8f(vi, v + e);
        load8f(p, master + e);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            aw_update(h, wd, g[k], mi[k], vi[k], p[k]);
        store8f(m + e, mi);
        store8f(v + e, vi);
        store8f(master + e, p);
        store8(param + e, p);
    }
}

static aw_hyper aw_of(double lr, double beta1, double beta2, double eps, double grad_scale,
                      double ic1, double ic2)
{
    aw_hyper h = {(float)lr, (float)beta1, (float)beta2, (float)eps, (float)grad_scale,
                  (float)ic1, (float)ic2};
    return h;
}

extern "C" cudaError_t exec_cuk_adamw(cudaStream_t s, void *param, float *master,
                                      const void *grad, float *m, float *v, int64_t n, double lr,
                                      double beta1, double beta2, double eps, double wd,
                                      double grad_scale, double ic1, double ic2)
{
    aw_hyper h = aw_of(lr, beta1, beta2, eps, grad_scale, ic1, ic2);
    if (n > 0 && n % VEC == 0 && all_aligned16(param, master, grad, m) && aligned16(v))
        adamw_v_k<<<blocks_for(n / VEC, THREADS), THREADS, 0, s>>>(
            (bf16 *)param, master, (const bf16 *)grad, m, v, n / VEC, h, (float)wd);
    else if (n > 0)
        adamw_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)param, master,
                                                          (const bf16 *)grad, m, v, n, h,
                                                          (float)wd);
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* initial weights                                                           */
/* ------------------------------------------------------------------------ */

__global__ void init_fill_k(bf16 *dst, exec_init_fill f, int64_t k0, int64_t n)
{
    GRID_STRIDE(e, n)
    {
        double v = exec_init_draw(f.kind, f.std, f.gid, exec_init_index(&f, k0 + e), f.seed);
        dst[e] = __float2bfloat16_rn((float)v);
    }
}

extern "C" cudaError_t exec_cuk_init_fill(cudaStream_t s, void *dst, exec_init_fill f, int64_t k0,
                                          int64_t n)
{
    if (n > 0 && f.ncols > 0)
        init_fill_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>((bf16 *)dst, f, k0, n);
    return cudaGetLastError();
}

/* One block of EXEC_CUK_AW_CHUNK elements of one range: the range found by
 * a binary search over the table's block0 (thread 0, shared), then the
 * same update as adamw_k / adamw_v_k. */
__global__ void adamw_multi_k(const exec_cuk_aw_range *table, int nr, aw_hyper h)
{
    __shared__ int which;
    int64_t blk = blockIdx.x;
    if (threadIdx.x == 0) {
        int lo = 0, hi = nr - 1;
        while (lo < hi) { /* the last range whose block0 <= blk */
            int mid = (lo + hi + 1) / 2;
            if (table[mid].block0 <= blk)
                lo = mid;
            else
                hi = mid - 1;
        }
        which = lo;
    }
    __syncthreads();
    const exec_cuk_aw_range *r = &table[which];
    int64_t e0 = (blk - r->block0) * EXEC_CUK_AW_CHUNK;
    bf16 *param = (bf16 *)r->param;
    const bf16 *grad = (const bf16 *)r->grad;
    if (r->vec) {
        int64_t e = e0 + (int64_t)threadIdx.x * VEC;
        if (e >= r->n)
            return;
        float g[VEC], mi[VEC], vi[VEC], p[VEC];
        load8(g, grad + e);
        load8f(mi, r->m + e);
        load8f(vi, r->v + e);
        load8f(p, r->master + e);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            aw_update(h, r->wd, g[k], mi[k], vi[k], p[k]);
        store8f(r->m + e, mi);
        store8f(r->v + e, vi);
        store8f(r->master + e, p);
        store8(param + e, p);
        return;
    }
    for (int k = 0; k < VEC; k++) {
        int64_t i = e0 + (int64_t)k * blockDim.x + threadIdx.x;
        if (i >= r->n)
            return;
        float mi = r->m[i], vi = r->v[i], p = r->master[i];
        aw_update(h, r->wd, __bfloat162float(grad[i]), mi, vi, p);
        r->m[i] = mi;
        r->v[i] = vi;
        r->master[i] = p;
        param[i] = tb(p);
    }
}

extern "C" cudaError_t exec_cuk_adamw_multi(cudaStream_t s, const exec_cuk_aw_range *table,
                                            int nr, int64_t blocks, double lr, double beta1,
                                            double beta2, double eps, double grad_scale,
                                            double ic1, double ic2)
{
    static_assert(EXEC_CUK_AW_CHUNK == THREADS * VEC, "a block covers THREADS x VEC elements");
    if (nr > 0 && blocks > 0)
        adamw_multi_k<<<(unsigned)blocks, THREADS, 0, s>>>(
            table, nr, aw_of(lr, beta1, beta2, eps, grad_scale, ic1, ic2));
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
