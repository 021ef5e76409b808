/*
 * exec_cuda_embed.cu: the CUDA device's embedding kernels: the
 * vocabulary-parallel token embedding (Megatron's VocabParallelEmbedding:
 * rows outside this rank's range give zeros, the TP all-reduce sums the
 * ranks' parts) and the learned positions, forward and backward. Its own
 * file because the backward uses CUB (the CUDA toolkit's parallel
 * primitives: radix sort, run-length encoding, scan), a large header.
 */
#include <cub/cub.cuh>
#include <stdint.h>

#include "exec/exec_cuda_common.cuh"
#include "exec/exec_cuda_kernels.h"

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

/* ---- embedding backward: the tokens sorted by table row on the device ----
 * The keys are the rows (tokens of other ranks' vocabulary get the key vn,
 * after every row), the values the token positions; CUB's radix sort is
 * stable (least significant digit first), so each row's positions come out
 * in index order. A run-length encoding gives each row and its count, an
 * exclusive scan where its positions start; one block column per row then
 * sums its positions' gradients in that order and adds the sum to the
 * row. The same sums in the same order every time, no atomics, and nothing
 * comes to the host. */

typedef struct emb_scratch {
    int32_t *keys_in, *keys_out, *vals_in, *vals_out, *rows, *counts, *starts, *nruns;
    void *temp;
    size_t temp_bytes, total;
} emb_scratch;

static size_t emb_align(size_t b)
{
    return (b + 255) / 256 * 256;
}

static int emb_end_bit(int64_t vn)
{
    int b = 1;
    while (b < 31 && ((int64_t)1 << b) <= vn) /* keys 0 .. vn */
        b++;
    return b;
}

/* The scratch's layout (base NULL: sizes only). */
static emb_scratch emb_layout(char *base, int64_t n, int64_t vn)
{
    emb_scratch e;
    size_t arr = emb_align((size_t)n * sizeof(int32_t)), off = 0;
    int32_t **arrays[7] = {&e.keys_in, &e.keys_out, &e.vals_in, &e.vals_out,
                           &e.rows, &e.counts, &e.starts};
    for (int k = 0; k < 7; k++, off += arr)
        *arrays[k] = base ? (int32_t *)(base + off) : NULL;
    e.nruns = base ? (int32_t *)(base + off) : NULL;
    off += 256;
    size_t t1 = 0, t2 = 0, t3 = 0;
    int nn = (int)n;
    cub::DeviceRadixSort::SortPairs(NULL, t1, e.keys_in, e.keys_out, e.vals_in, e.vals_out, nn, 0,
                                    emb_end_bit(vn));
    cub::DeviceRunLengthEncode::Encode(NULL, t2, e.keys_out, e.rows, e.counts, e.nruns, nn);
    cub::DeviceScan::ExclusiveSum(NULL, t3, e.counts, e.starts, nn);
    e.temp_bytes = t1 > t2 ? (t1 > t3 ? t1 : t3) : (t2 > t3 ? t2 : t3);
    e.temp = base ? base + off : NULL;
    e.total = off + emb_align(e.temp_bytes);
    return e;
}

extern "C" size_t exec_cuk_embed_bwd_scratch(int64_t n, int64_t vn)
{
    return n > 0 ? emb_layout(NULL, n, vn).total : 0;
}

__global__ void emb_keys_k(int32_t *keys, int32_t *vals, const int32_t *tok, int64_t n,
                           int64_t v0, int64_t vn)
{
    GRID_STRIDE(i, n)
    {
        int64_t t = (int64_t)tok[i] - v0;
        keys[i] = (int32_t)(t >= 0 && t < vn ? t : vn);
        vals[i] = (int32_t)i;
    }
}

/* Run r (grid-stride over the runs the encoding found) adds its positions'
 * gradients, in order, to its row; columns by blockIdx.y. */
__global__ void emb_rows_k(bf16 *dwte, const bf16 *dout, const int32_t *rows,
                           const int32_t *counts, const int32_t *starts, const int32_t *pos,
                           const int32_t *nruns, int64_t C, int64_t vn)
{
    int64_t c = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    for (int r = blockIdx.x; r < *nruns; r += gridDim.x) {
        if (rows[r] >= vn)
            continue;
        float acc = 0.0f;
        for (int k = starts[r]; k < starts[r] + counts[r]; k++)
            acc += lb(dout, (int64_t)pos[k] * C + c);
        bf16 *w = dwte + (int64_t)rows[r] * C + c;
        *w = tb(__bfloat162float(*w) + acc);
    }
}

extern "C" cudaError_t exec_cuk_embed_bwd(cudaStream_t s, void *dwte, const void *dout,
                                          const int32_t *tok, int64_t n, int64_t C, int64_t v0,
                                          int64_t vn, void *scratch, size_t scratch_bytes)
{
    if (n <= 0 || C <= 0)
        return cudaGetLastError();
    if (n >= INT32_MAX || vn >= INT32_MAX)
        return cudaErrorInvalidValue;
    emb_scratch e = emb_layout((char *)scratch, n, vn);
    if (e.total > scratch_bytes)
        return cudaErrorInvalidValue;
    int nn = (int)n;
    emb_keys_k<<<blocks_for(n, THREADS), THREADS, 0, s>>>(e.keys_in, e.vals_in, tok, n, v0, vn);
    size_t tb_ = e.temp_bytes;
    cudaError_t err = cub::DeviceRadixSort::SortPairs(e.temp, tb_, e.keys_in, e.keys_out, e.vals_in,
                                                      e.vals_out, nn, 0, emb_end_bit(vn), s);
    if (err == cudaSuccess) {
        tb_ = e.temp_bytes;
        err = cudaMemsetAsync(e.counts, 0, (size_t)n * sizeof(int32_t), s);
    }
    if (err == cudaSuccess)
        err = cub::DeviceRunLengthEncode::Encode(e.temp, tb_, e.keys_out, e.rows, e.counts,
                                                 e.nruns, nn, s);
    if (err == cudaSuccess) {
        tb_ = e.temp_bytes;
        err = cub::DeviceScan::ExclusiveSum(e.temp, tb_, e.counts, e.starts, nn, s);
    }
    if (err != cudaSuccess)
        return err;
    int64_t runs_max = n < vn + 1 ? n : vn + 1;
    dim3 grid((unsigned)(runs_max < 65535 ? runs_max : 65535), (unsigned)((C + THREADS - 1) / THREADS));
    emb_rows_k<<<grid, THREADS, 0, s>>>((bf16 *)dwte, (const bf16 *)dout, e.rows, e.counts,
                                        e.starts, e.vals_out, e.nruns, C, vn);
    return cudaGetLastError();
}

