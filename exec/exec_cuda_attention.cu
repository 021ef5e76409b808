/*
 * exec_cuda_attention.cu: the fused causal attention of the CUDA device
 * (flash_fwd / flash_bwd of exec_dev.h), FlashAttention-2 (Dao 2023,
 * Algorithms 1 and 2, and Section 3.1's work partitioning) on the tensor
 * cores through mma.sync m16n8k16 (bf16 operands, fp32 accumulation),
 * which sm_80 and sm_90 both run. On Hopper the forward at head sizes 64
 * and 128 is exec_cuda_attention_sm90.cu's (wgmma); this file's backward
 * serves both forwards (the same lse).
 *
 * Forward (fa_fwd_k): a block of 4 warps owns 64 query rows of one (batch,
 * head), each warp 16 of them, and walks the key/value tiles of 64 from
 * the diagonal down to the first (causal block skipping: tiles above the
 * diagonal are never touched; only the diagonal tile and a tile past the
 * sequence's end are masked). Q lives in registers for the whole walk; the
 * scores S = Q K^T, the running row maximum and sum (online softmax,
 * Milakov & Gimelshein 2018) and the output accumulator O stay in
 * registers: S's accumulator fragments are the A fragments of P V once
 * rounded to bf16, so P never goes through shared memory
 * (FlashAttention-2, Section 3.1). K and V tiles come through shared
 * memory by cp.async into two buffers each: the next tile's loads are
 * issued as a tile's work begins and have all of it to arrive, with one
 * barrier a tile (0.588 against 0.604 ms with one buffer, whose V load
 * overlapped only S and K's only P V). The softmax works in base 2
 * (exp2(s log2(e) / sqrt(d) - m), ex2.approx.ftz: ex2_ftz), and each row's
 * log-sum-exp is kept in fp32 (natural log) for the backward. Blocks are
 * issued longest first (the last query tiles walk the most key tiles).
 *
 * Backward (fa_bwd_k): a block of 8 warps owns 128 keys of one kv head,
 * each warp 16 of them, with dK and dV accumulated in registers over every
 * query head of
 * the group (grouped-query attention sums there, without atomics) and every
 * query tile at or below the diagonal. Per query tile it recomputes
 * S^T = K Q^T and dP^T = V dO^T for its keys, P^T = exp2(S^T - lse),
 * dS^T = P^T (dP^T - D) with D = rowsum(dO o O) computed first
 * (fa_drow_k), then dV += P^T dO and dK += dS^T Q straight from registers;
 * dS^T goes to shared memory once, and each warp adds 16 query rows by 64
 * columns of dQ = dS K (over the block's 128 keys) into an fp32 buffer with
 * atomics (FlashAttention-2's dQ accumulation), which a last kernel scales
 * into dqkv. The next query tile's loads overlap that dQ product. 128 keys
 * a block rather than 64 (FlashAttention-2's kBlockN for heads of 128 on
 * sm80/sm90) halves the dQ atomics and the Q and dO loads per product:
 * 1.79 against 1.95 ms at B8 H16 T2048 d128 on an H100 (tests/bench/
 * gpu_notes.md), with the same registers a thread.
 *
 * Shared memory rows are padded by 16 bytes, so the 8 row addresses of an
 * ldmatrix fall in 8 different groups of 4 banks (no bank conflicts) while
 * every row stays 16-byte aligned for cp.async. Head sizes: multiples of
 * 16 up to 128; sequences of any length (the last tiles are zero-filled
 * and masked).
 */
#include <math.h>
#include <stdint.h>

#include "exec/exec_cuda_common.cuh"
#include "exec/exec_cuda_kernels.h"

#define FA_TILE 64               /* query rows and key rows per tile */
#define FA_WARPS 4               /* the forward's: 16 query rows each */
#define FA_THREADS (32 * FA_WARPS)
#define FA_BWD_WARPS 8           /* the backward's: 16 keys each */
#define FA_BWD_THREADS (32 * FA_BWD_WARPS)
#define FA_BWD_KEYS (16 * FA_BWD_WARPS)
#define FA_PAD 8                 /* bf16 elements of padding per shared row */
#define FA_MAX_HD 128
#define FA_LOG2E 1.4426950408889634f
#define FA_LN2 0.6931471805599453f

extern "C" int exec_cuk_flash_supported(int64_t hd)
{
    return hd >= 16 && hd <= FA_MAX_HD && hd % 16 == 0;
}

/* Rows r0 .. r0 + R - 1 of a head (HD bf16 each, row t at g + t * stride)
 * into shared rows of HD + FA_PAD by a block of NT threads, asynchronously;
 * rows at or past T are zeros. */
template <int HD, int R = FA_TILE, int NT = FA_THREADS>
static __device__ __forceinline__ void fa_load_tile(bf16 *s, const bf16 *g, int64_t stride,
                                                    int r0, int T)
{
    constexpr int CPR = HD / 8, P = HD + FA_PAD, N = R * CPR;
#pragma unroll
    for (int it = 0; it < (N + NT - 1) / NT; it++) {
        int e = it * NT + (int)threadIdx.x, r = e / CPR, c = (e % CPR) * 8;
        if (N % NT != 0 && e >= N) /* the last round, when N is not a multiple of NT */
            break;
        bool ok = r0 + r < T;
        cp_async16(s + r * P + c, ok ? g + (int64_t)(r0 + r) * stride + c : g, ok);
    }
}

/* A fragments of rows row0 .. row0 + 15, columns k0 .. k0 + 15 of a shared
 * matrix of pitch P (the operand stored row-major as A itself). */
template <int P>
static __device__ __forceinline__ void fa_frag_a(uint32_t a[4], const bf16 *s, int row0, int k0,
                                                 int lane)
{
    int m = lane >> 3;
    ldsm_x4(a, s + (row0 + (m & 1) * 8 + (lane & 7)) * P + k0 + (m >> 1) * 8);
}

/* A fragments of rows row0 .. row0 + 15, k0 .. k0 + 15 of A = M^T, M stored
 * row-major (rows k, columns row): transposed loads. */
template <int P>
static __device__ __forceinline__ void fa_frag_at(uint32_t a[4], const bf16 *s, int row0, int k0,
                                                  int lane)
{
    int m = lane >> 3;
    ldsm_x4_t(a, s + (k0 + (m >> 1) * 8 + (lane & 7)) * P + row0 + (m & 1) * 8);
}

/* B fragments of two n-tiles (n0 .. n0 + 7 in b[0..1], n0 + 8 .. n0 + 15 in
 * b[2..3]) at k0 .. k0 + 15, for B = M^T with M stored row-major (rows n,
 * columns k): Q K^T's K, dO V^T's dO. */
template <int P>
static __device__ __forceinline__ void fa_frag_b_nk(uint32_t b[4], const bf16 *s, int n0, int k0,
                                                    int lane)
{
    int m = lane >> 3;
    ldsm_x4(b, s + (n0 + (m >> 1) * 8 + (lane & 7)) * P + k0 + (m & 1) * 8);
}

/* The same for B stored row-major as itself (rows k, columns n): P V's V,
 * dS K's K: transposed loads. */
template <int P>
static __device__ __forceinline__ void fa_frag_b_kn(uint32_t b[4], const bf16 *s, int n0, int k0,
                                                    int lane)
{
    int m = lane >> 3;
    ldsm_x4_t(b, s + (k0 + (m & 1) * 8 + (lane & 7)) * P + n0 + (m >> 1) * 8);
}

/* ------------------------------------------------------------------------ */
/* forward                                                                  */
/* ------------------------------------------------------------------------ */

/* The forward's end: the row sums over the quad; O / l through this
 * warp's own rows of Qs (only this warp ever read them) to 16-byte stores;
 * each row's log-sum-exp. */
template <int HD>
static __device__ __forceinline__ void fa_fwd_store(bf16 *out, float *lse, bf16 *Qs,
                                                    const float (&o)[HD / 8][4], float m0,
                                                    float m1, float l0, float l1, int warp,
                                                    int lane, int q0, int ra, int rb, int T,
                                                    int B, int Hq, int h, int b)
{
    constexpr int P = HD + FA_PAD, ND = HD / 8;
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float i0 = 1.0f / l0, i1 = 1.0f / l1;
    bf16 *stage = Qs + warp * 16 * P;
    const int g = lane >> 2, t2 = 2 * (lane & 3);
#pragma unroll
    for (int d = 0; d < ND; d++) {
        *(uint32_t *)(stage + g * P + d * 8 + t2) = pack_bf16(o[d][0] * i0, o[d][1] * i0);
        *(uint32_t *)(stage + (g + 8) * P + d * 8 + t2) = pack_bf16(o[d][2] * i1, o[d][3] * i1);
    }
    __syncwarp();
    const int64_t ldo = (int64_t)Hq * HD;
#pragma unroll
    for (int e = lane; e < 16 * (HD / 8); e += 32) {
        int r = e / (HD / 8), c = (e % (HD / 8)) * 8, i = q0 + warp * 16 + r;
        if (i < T)
            *(int4 *)(out + ((int64_t)i * B + b) * ldo + (int64_t)h * HD + c) =
                *(const int4 *)(stage + r * P + c);
    }
    if ((lane & 3) == 0) {
        float *lr = lse + ((int64_t)b * Hq + h) * T;
        if (ra < T)
            lr[ra] = (m0 + log2f(l0)) * FA_LN2;
        if (rb < T)
            lr[rb] = (m1 + log2f(l1)) * FA_LN2;
    }
}

template <int HD>
__global__ void __launch_bounds__(FA_THREADS)
    fa_fwd_k(bf16 *out, float *lse, const bf16 *qkv, int T, int B, int Hq, int Hkv,
             float scale_log2)
{
    constexpr int P = HD + FA_PAD, KS = HD / 16, ND = HD / 8;
    extern __shared__ __align__(16) unsigned char fa_smem[];
    /* Q, then two buffers of K and two of V (tile kt in buffer kt & 1) */
    bf16 *Qs = (bf16 *)fa_smem, *Kb = Qs + FA_TILE * P, *Vb = Kb + 2 * FA_TILE * P;
    const int nt = (T + FA_TILE - 1) / FA_TILE;
    const int qt = nt - 1 - (int)blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int kh = h / (Hq / Hkv), q0 = qt * FA_TILE;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t W = (int64_t)(Hq + 2 * Hkv) * HD, rs = (int64_t)B * W;
    const bf16 *qg = qkv + b * W + (int64_t)h * HD, *kg = qkv + b * W + (int64_t)(Hq + kh) * HD,
               *vg = qkv + b * W + (int64_t)(Hq + Hkv + kh) * HD;
    /* this thread's two rows of the warp's 16 */
    const int ra = q0 + warp * 16 + (lane >> 2), rb = ra + 8;

    fa_load_tile<HD>(Qs, qg, rs, q0, T);
    fa_load_tile<HD>(Kb + (qt & 1) * FA_TILE * P, kg, rs, q0, T);
    fa_load_tile<HD>(Vb + (qt & 1) * FA_TILE * P, vg, rs, q0, T);
    cp_async_commit();

    uint32_t qf[KS][4];
    float o[ND][4];
#pragma unroll
    for (int d = 0; d < ND; d++)
        o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;

    for (int kt = qt; kt >= 0; kt--) {
        const int j0 = kt * FA_TILE;
        cp_async_wait<0>(); /* this tile's K and V (and Q) */
        __syncthreads();    /* visible to all; every warp is done with the last tile */
        const bf16 *Ks = Kb + (kt & 1) * FA_TILE * P, *Vs = Vb + (kt & 1) * FA_TILE * P;
        if (kt > 0) { /* the next tile into the buffers the last one used */
            fa_load_tile<HD>(Kb + ((kt - 1) & 1) * FA_TILE * P, kg, rs, j0 - FA_TILE, T);
            fa_load_tile<HD>(Vb + ((kt - 1) & 1) * FA_TILE * P, vg, rs, j0 - FA_TILE, T);
            cp_async_commit();
        }
        if (kt == qt) {
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
                fa_frag_a<P>(qf[ks], Qs, warp * 16, ks * 16, lane);
        }
        /* S = Q K^T: 16 rows x 64 keys per warp, 8 n-tiles */
        float s[8][4];
#pragma unroll
        for (int n = 0; n < 8; n++)
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
#pragma unroll
            for (int np = 0; np < 4; np++) {
                uint32_t bk[4];
                fa_frag_b_nk<P>(bk, Ks, np * 16, ks * 16, lane);
                mma_bf16(s[2 * np], qf[ks], bk[0], bk[1]);
                mma_bf16(s[2 * np + 1], qf[ks], bk[2], bk[3]);
            }
        }
        /* scale to base 2, mask, online softmax (the quad of lanes sharing a
         * row reduces its maximum), O rescaled: S becomes P */
        fa_online_softmax<8, ND>(&s[0][0], &o[0][0], m0, m1, l0, l1, scale_log2,
                                 kt == qt || j0 + FA_TILE > T, j0, ra, rb, T, lane);
        /* O += P V: P's accumulator fragments are A fragments */
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            uint32_t pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]),
                              pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                              pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int dp = 0; dp < HD / 16; dp++) {
                uint32_t bv[4];
                fa_frag_b_kn<P>(bv, Vs, dp * 16, kk * 16, lane);
                mma_bf16(o[2 * dp], pa, bv[0], bv[1]);
                mma_bf16(o[2 * dp + 1], pa, bv[2], bv[3]);
            }
        }
    }
    fa_fwd_store<HD>(out, lse, Qs, o, m0, m1, l0, l1, warp, lane, q0, ra, rb, T, B, Hq, h, b);
}

/* ------------------------------------------------------------------------ */
/* backward                                                                 */
/* ------------------------------------------------------------------------ */

/* D = rowsum(dO o O) per (b, h, i), [B, Hq, T]: one warp per row. */
__global__ void fa_drow_k(float *drow, const bf16 *dout, const bf16 *out, int64_t T, int64_t B,
                          int64_t Hq, int64_t hd)
{
    int lane = threadIdx.x & 31;
    int64_t r = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (r >= B * Hq * T)
        return;
    int64_t i = r % T, h = (r / T) % Hq, b = r / (T * Hq);
    int64_t off = (i * B + b) * Hq * hd + h * hd;
    float acc = 0.0f;
    for (int64_t d = 2 * lane; d < hd; d += 64) {
        float2 x = __bfloat1622float2(*(const __nv_bfloat162 *)(dout + off + d));
        float2 y = __bfloat1622float2(*(const __nv_bfloat162 *)(out + off + d));
        acc += x.x * y.x + x.y * y.y;
    }
    acc = warp_sum(acc);
    if (lane == 0)
        drow[r] = acc;
}

/* Shared memory of the backward, in bf16 elements from the start: the
 * block's keys and values, a query tile's Q and dO, dS^T (keys x queries),
 * then the tile's lse and D as floats. */
template <int HD> struct fa_bwd_smem {
    static constexpr int P = HD + FA_PAD, PS = FA_TILE + FA_PAD;
    static constexpr int k = 0, v = k + FA_BWD_KEYS * P, q = v + FA_BWD_KEYS * P,
                         dO = q + FA_TILE * P, ds = dO + FA_TILE * P,
                         stats = ds + FA_BWD_KEYS * PS; /* then floats */
    static constexpr size_t bytes = (size_t)stats * 2 + 2 * FA_TILE * sizeof(float);
};

/* dq_acc [B, Hq, T, HD] += v at (row i, columns c, c + 1). */
static __device__ __forceinline__ void fa_add2(float *p, float x, float y)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd((float2 *)p, make_float2(x, y));
#else
    atomicAdd(p, x);
    atomicAdd(p + 1, y);
#endif
}

/* A step's query tile: Q and dO of head h from query i0, and its rows' lse
 * and D, into shared memory (asynchronous, one commit group). */
template <int HD>
static __device__ __forceinline__ void fa_bwd_load_step(bf16 *Qs, bf16 *dOs, float *lse_s,
                                                        const bf16 *qkv, const bf16 *dout,
                                                        const float *lse, const float *drow,
                                                        int b, int64_t W, int64_t rs,
                                                        int64_t ldo, int64_t rso, int Hq, int h,
                                                        int i0, int T)
{
    constexpr int NT = FA_BWD_THREADS;
    fa_load_tile<HD, FA_TILE, NT>(Qs, qkv + b * W + (int64_t)h * HD, rs, i0, T);
    fa_load_tile<HD, FA_TILE, NT>(dOs, dout + b * ldo + (int64_t)h * HD, rso, i0, T);
    if (threadIdx.x < 2 * FA_TILE) {
        const float *lr = (threadIdx.x < FA_TILE ? lse : drow) + ((int64_t)b * Hq + h) * T;
        int r = threadIdx.x % FA_TILE;
        cp_async4(lse_s + threadIdx.x, i0 + r < T ? lr + i0 + r : lr, i0 + r < T);
    }
    cp_async_commit();
}

/* dQ (query rows rg * 16.., columns cg * DQC..) += dS K over the block's
 * keys, 16 columns at a time, into dq_acc (atomically: the blocks of other
 * keys add to the same rows). */
template <int HD>
static __device__ __forceinline__ void fa_bwd_dq(float *dq_acc, const bf16 *dSs, const bf16 *Ks,
                                                 int i0, int b, int Hq, int h, int T)
{
    typedef fa_bwd_smem<HD> L;
    constexpr int P = L::P, PS = L::PS;
    /* dQ of a query tile (64 rows x HD) over the warps: 4 groups of 16 rows
     * by CG groups of the pieces of 16 columns; each a sum over the block's
     * keys */
    constexpr int CG = FA_BWD_WARPS / 4, KK = FA_BWD_KEYS / 16;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t2 = 2 * (lane & 3);
    const int rg = warp & 3, cg = warp >> 2;
    uint32_t sa[KK][4];
#pragma unroll
    for (int kk = 0; kk < KK; kk++)
        fa_frag_at<PS>(sa[kk], dSs, rg * 16, kk * 16, lane);
    const int ia = i0 + rg * 16 + g, ib = ia + 8;
    float *dqr = dq_acc + ((int64_t)b * Hq + h) * (int64_t)T * HD;
#pragma unroll
    for (int q = 0; q < (HD / 16 + CG - 1) / CG; q++) {
        /* pieces cg, cg + CG, ...: contiguous where they divide evenly */
        const int np = HD / 16 % CG == 0 ? cg * (HD / 16 / CG) + q : cg + q * CG;
        if (np >= HD / 16)
            break;
        const int c0 = np * 16;
        float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
        for (int kk = 0; kk < KK; kk++) {
            uint32_t bk[4];
            fa_frag_b_kn<P>(bk, Ks, c0, kk * 16, lane);
            mma_bf16(acc[0], sa[kk], bk[0], bk[1]);
            mma_bf16(acc[1], sa[kk], bk[2], bk[3]);
        }
#pragma unroll
        for (int u = 0; u < 2; u++) {
            int c = c0 + u * 8 + t2;
            if (ia < T)
                fa_add2(dqr + (int64_t)ia * HD + c, acc[u][0], acc[u][1]);
            if (ib < T)
                fa_add2(dqr + (int64_t)ib * HD + c, acc[u][2], acc[u][3]);
        }
    }
}

/* dK (scaled) and dV of this warp's keys into dqkv. */
template <int HD>
static __device__ __forceinline__ void fa_bwd_store(bf16 *dqkv, const float (&dk)[HD / 8][4],
                                                    const float (&dv)[HD / 8][4], int kh, int Hq,
                                                    int Hkv, int ja, int jb, int T, int B,
                                                    int b, int64_t W, int t2, float scale)
{
    constexpr int ND = HD / 8;
    bf16 *dkr = dqkv + (int64_t)(Hq + kh) * HD, *dvr = dqkv + (int64_t)(Hq + Hkv + kh) * HD;
#pragma unroll
    for (int d = 0; d < ND; d++) {
        int c = d * 8 + t2;
        if (ja < T) {
            int64_t row = ((int64_t)ja * B + b) * W;
            *(uint32_t *)(dkr + row + c) = pack_bf16(dk[d][0] * scale, dk[d][1] * scale);
            *(uint32_t *)(dvr + row + c) = pack_bf16(dv[d][0], dv[d][1]);
        }
        if (jb < T) {
            int64_t row = ((int64_t)jb * B + b) * W;
            *(uint32_t *)(dkr + row + c) = pack_bf16(dk[d][2] * scale, dk[d][3] * scale);
            *(uint32_t *)(dvr + row + c) = pack_bf16(dv[d][2], dv[d][3]);
        }
    }
}

template <int HD>
__global__ void __launch_bounds__(FA_BWD_THREADS)
    fa_bwd_k(bf16 *dqkv, float *dq_acc, const bf16 *dout, const bf16 *qkv, const float *lse,
             const float *drow, int T, int B, int Hq, int Hkv, float scale, float scale_log2)
{
    typedef fa_bwd_smem<HD> L;
    constexpr int P = L::P, PS = L::PS, KS = HD / 16, ND = HD / 8, NT = FA_BWD_THREADS;
    extern __shared__ __align__(16) unsigned char fa_smem[];
    bf16 *base = (bf16 *)fa_smem;
    bf16 *Ks = base + L::k, *Vs = base + L::v, *Qs = base + L::q, *dOs = base + L::dO,
         *dSs = base + L::ds;
    float *lse_s = (float *)(base + L::stats), *d_s = lse_s + FA_TILE;
    const int nt = (T + FA_TILE - 1) / FA_TILE;
    const int kt = blockIdx.x, kh = blockIdx.y, b = blockIdx.z, group = Hq / Hkv;
    const int j0 = kt * FA_BWD_KEYS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t2 = 2 * (lane & 3);
    const int64_t W = (int64_t)(Hq + 2 * Hkv) * HD, rs = (int64_t)B * W;
    const int64_t ldo = (int64_t)Hq * HD, rso = (int64_t)B * ldo;
    /* this thread's two keys of the warp's 16 */
    const int ja = j0 + warp * 16 + g, jb = ja + 8;

    fa_load_tile<HD, FA_BWD_KEYS, NT>(Ks, qkv + b * W + (int64_t)(Hq + kh) * HD, rs, j0, T);
    fa_load_tile<HD, FA_BWD_KEYS, NT>(Vs, qkv + b * W + (int64_t)(Hq + Hkv + kh) * HD, rs, j0,
                                      T);

    float dk[ND][4], dv[ND][4];
#pragma unroll
    for (int d = 0; d < ND; d++) {
        dk[d][0] = dk[d][1] = dk[d][2] = dk[d][3] = 0.0f;
        dv[d][0] = dv[d][1] = dv[d][2] = dv[d][3] = 0.0f;
    }
    /* the (head, query tile) pairs this block walks, in order: the query
     * tiles from the one holding the block's first key */
    const int qfirst = j0 / FA_TILE, per_head = nt - qfirst, steps = group * per_head;
    /* Q, dO, lse and D of step 0 */
    fa_bwd_load_step<HD>(Qs, dOs, lse_s, qkv, dout, lse, drow, b, W, rs, ldo, rso, Hq,
                         kh * group, qfirst * FA_TILE, T);
    for (int step = 0; step < steps; step++) {
        const int h = kh * group + step / per_head, qt = qfirst + step % per_head;
        const int i0 = qt * FA_TILE;
        cp_async_wait<0>();
        __syncthreads(); /* this step's tiles visible; the last step's dQ is done */
        /* S^T = K Q^T and dP^T = V dO^T: the warp's 16 keys x 64 queries */
        float s[8][4], dp[8][4];
#pragma unroll
        for (int n = 0; n < 8; n++) {
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
            dp[n][0] = dp[n][1] = dp[n][2] = dp[n][3] = 0.0f;
        }
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            uint32_t ka[4], va[4];
            fa_frag_a<P>(ka, Ks, warp * 16, ks * 16, lane);
            fa_frag_a<P>(va, Vs, warp * 16, ks * 16, lane);
#pragma unroll
            for (int np = 0; np < 4; np++) {
                uint32_t bq[4], bo[4];
                fa_frag_b_nk<P>(bq, Qs, np * 16, ks * 16, lane);
                fa_frag_b_nk<P>(bo, dOs, np * 16, ks * 16, lane);
                mma_bf16(s[2 * np], ka, bq[0], bq[1]);
                mma_bf16(s[2 * np + 1], ka, bq[2], bq[3]);
                mma_bf16(dp[2 * np], va, bo[0], bo[1]);
                mma_bf16(dp[2 * np + 1], va, bo[2], bo[3]);
            }
        }
        /* P^T = exp2(S^T scale log2(e) - lse log2(e)) where i >= j, i < T,
         * j < T; dS^T = P^T (dP^T - D) */
        const bool edge = i0 < j0 + FA_BWD_KEYS || i0 + FA_TILE > T || j0 + FA_BWD_KEYS > T;
#pragma unroll
        for (int n = 0; n < 8; n++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int il = n * 8 + t2 + (e & 1), i = i0 + il, j = e < 2 ? ja : jb;
                float p = ex2_ftz(s[n][e] * scale_log2 - lse_s[il] * FA_LOG2E);
                if (edge && (i < j || i >= T || j >= T))
                    p = 0.0f;
                s[n][e] = p;
                dp[n][e] = p * (dp[n][e] - d_s[il]);
            }
        }
        /* dV += P^T dO, dK += dS^T Q (k = the 64 queries) */
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            uint32_t pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]),
                              pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                              pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
            uint32_t da[4] = {pack_bf16(dp[2 * kk][0], dp[2 * kk][1]),
                              pack_bf16(dp[2 * kk][2], dp[2 * kk][3]),
                              pack_bf16(dp[2 * kk + 1][0], dp[2 * kk + 1][1]),
                              pack_bf16(dp[2 * kk + 1][2], dp[2 * kk + 1][3])};
            /* dS^T to shared memory for dQ (the same bf16 values dK uses) */
            bf16 *dsr = dSs + (warp * 16 + g) * PS + kk * 16 + t2;
            *(uint32_t *)dsr = da[0];
            *(uint32_t *)(dsr + 8 * PS) = da[1];
            *(uint32_t *)(dsr + 8) = da[2];
            *(uint32_t *)(dsr + 8 * PS + 8) = da[3];
#pragma unroll
            for (int np = 0; np < HD / 16; np++) {
                uint32_t bo[4], bq[4];
                fa_frag_b_kn<P>(bo, dOs, np * 16, kk * 16, lane);
                fa_frag_b_kn<P>(bq, Qs, np * 16, kk * 16, lane);
                mma_bf16(dv[2 * np], pa, bo[0], bo[1]);
                mma_bf16(dv[2 * np + 1], pa, bo[2], bo[3]);
                mma_bf16(dk[2 * np], da, bq[0], bq[1]);
                mma_bf16(dk[2 * np + 1], da, bq[2], bq[3]);
            }
        }
        __syncthreads(); /* dS^T complete; Q, dO, lse and D no longer read */
        if (step + 1 < steps) /* the next step's, behind this step's dQ */
            fa_bwd_load_step<HD>(Qs, dOs, lse_s, qkv, dout, lse, drow, b, W, rs, ldo, rso, Hq,
                                 kh * group + (step + 1) / per_head,
                                 (qfirst + (step + 1) % per_head) * FA_TILE, T);
        fa_bwd_dq<HD>(dq_acc, dSs, Ks, i0, b, Hq, h, T);
    }
    fa_bwd_store<HD>(dqkv, dk, dv, kh, Hq, Hkv, ja, jb, T, B, b, W, t2, scale);
}

/* dqkv's query columns from the fp32 sums, scaled: 8 columns per thread. */
__global__ void fa_dq_k(bf16 *dqkv, const float *dq_acc, int64_t T, int64_t B, int64_t Hq,
                        int64_t Hkv, int64_t hd, float scale)
{
    int64_t W = (Hq + 2 * Hkv) * hd, n8 = B * Hq * T * hd / 8;
    GRID_STRIDE(e8, n8)
    {
        int64_t e = e8 * 8, d = e % hd, i = (e / hd) % T, h = (e / (hd * T)) % Hq,
                b = e / (hd * T * Hq);
        float4 x = *(const float4 *)(dq_acc + e), y = *(const float4 *)(dq_acc + e + 4);
        uint4 v;
        v.x = pack_bf16(x.x * scale, x.y * scale);
        v.y = pack_bf16(x.z * scale, x.w * scale);
        v.z = pack_bf16(y.x * scale, y.y * scale);
        v.w = pack_bf16(y.z * scale, y.w * scale);
        *(uint4 *)(dqkv + (i * B + b) * W + h * hd + d) = v;
    }
}

/* ------------------------------------------------------------------------ */
/* launchers                                                                */
/* ------------------------------------------------------------------------ */

template <int HD> static size_t fa_fwd_bytes(void)
{
    return (size_t)5 * FA_TILE * (HD + FA_PAD) * sizeof(bf16); /* Q, 2 K, 2 V */
}

template <int HD>
static cudaError_t fa_fwd_launch(cudaStream_t s, void *out, float *lse, const void *qkv, int T,
                                 int B, int Hq, int Hkv)
{
    size_t bytes = fa_fwd_bytes<HD>();
    cudaError_t e =
        cudaFuncSetAttribute(fa_fwd_k<HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e != cudaSuccess)
        return e;
    int nt = (T + FA_TILE - 1) / FA_TILE;
    dim3 grid((unsigned)nt, (unsigned)Hq, (unsigned)B);
    fa_fwd_k<HD><<<grid, FA_THREADS, bytes, s>>>((bf16 *)out, lse, (const bf16 *)qkv, T, B, Hq,
                                                 Hkv, FA_LOG2E / sqrtf((float)HD));
    return cudaGetLastError();
}

template <int HD>
static cudaError_t fa_bwd_launch(cudaStream_t s, void *dqkv, float *dq_acc, const void *dout,
                                 const void *qkv, const float *lse, const float *drow, int T,
                                 int B, int Hq, int Hkv)
{
    size_t bytes = fa_bwd_smem<HD>::bytes;
    cudaError_t e =
        cudaFuncSetAttribute(fa_bwd_k<HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e != cudaSuccess)
        return e;
    int nk = (T + FA_BWD_KEYS - 1) / FA_BWD_KEYS;
    dim3 grid((unsigned)nk, (unsigned)Hkv, (unsigned)B);
    float scale = 1.0f / sqrtf((float)HD);
    fa_bwd_k<HD><<<grid, FA_BWD_THREADS, bytes, s>>>((bf16 *)dqkv, dq_acc, (const bf16 *)dout,
                                                 (const bf16 *)qkv, lse, drow, T, B, Hq, Hkv,
                                                 scale, scale * FA_LOG2E);
    return cudaGetLastError();
}

/* The causal tiles of 64 x 64 the forward computes over the batch and
 * heads: nt (nt + 1) / 2 a head. */
static double fa_tiles(int64_t T, int64_t B, int64_t Hq)
{
    double nt = (double)((T + FA_TILE - 1) / FA_TILE);
    return nt * (nt + 1) / 2 * (double)(B * Hq);
}

/* Those the backward computes: a block of FA_BWD_KEYS keys walks every
 * query tile from the one holding its first key, FA_BWD_KEYS / 64 tiles of
 * 64 x 64 each (the diagonal's masked half included). */
static double fa_bwd_tiles(int64_t T, int64_t B, int64_t Hq)
{
    int64_t nt = (T + FA_TILE - 1) / FA_TILE, nk = (T + FA_BWD_KEYS - 1) / FA_BWD_KEYS;
    double tiles = 0;
    for (int64_t k = 0; k < nk; k++)
        tiles += (double)(nt - k * FA_BWD_KEYS / FA_TILE) * (FA_BWD_KEYS / FA_TILE);
    return tiles * (double)(B * Hq);
}

#define FA_DISPATCH(hd, call)                                                                  \
    switch (hd) {                                                                              \
    case 16: return call(16);                                                                  \
    case 32: return call(32);                                                                  \
    case 48: return call(48);                                                                  \
    case 64: return call(64);                                                                  \
    case 80: return call(80);                                                                  \
    case 96: return call(96);                                                                  \
    case 112: return call(112);                                                                \
    case 128: return call(128);                                                                \
    default: return cudaErrorInvalidValue;                                                     \
    }

static cudaError_t fa_fwd_any(cudaStream_t s, void *out, float *lse, const void *qkv, int T,
                              int B, int Hq, int Hkv, int hd)
{
#define FA_FWD(HD) fa_fwd_launch<HD>(s, out, lse, qkv, T, B, Hq, Hkv)
    FA_DISPATCH(hd, FA_FWD)
#undef FA_FWD
}

static cudaError_t fa_bwd_any(cudaStream_t s, void *dqkv, float *dq_acc, const void *dout,
                              const void *qkv, const float *lse, const float *drow, int T, int B,
                              int Hq, int Hkv, int hd)
{
#define FA_BWD(HD) fa_bwd_launch<HD>(s, dqkv, dq_acc, dout, qkv, lse, drow, T, B, Hq, Hkv)
    FA_DISPATCH(hd, FA_BWD)
#undef FA_BWD
}

/* Sizes the kernels index with int: rows of a head's tiles and grid sizes. */
static int fa_fits_int(int64_t T, int64_t B, int64_t Hq, int64_t Hkv)
{
    return T < (1 << 30) && B < 65536 && Hq < 65536 && Hkv >= 1 && Hq % Hkv == 0;
}

extern "C" cudaError_t exec_cuk_flash_fwd(cudaStream_t s, void *out, float *lse, const void *qkv,
                                          int64_t T, int64_t B, int64_t Hq, int64_t Hkv,
                                          int64_t hd, double *flops)
{
    if (!exec_cuk_flash_supported(hd) || !aligned16(qkv) || !aligned16(out) ||
        !fa_fits_int(T, B, Hq, Hkv))
        return cudaErrorInvalidValue;
    *flops = 0;
    if (T * B * Hq == 0)
        return cudaGetLastError();
    cudaError_t e = fa_fwd_any(s, out, lse, qkv, (int)T, (int)B, (int)Hq, (int)Hkv, (int)hd);
    /* per tile: S = Q K^T and O += P V, 2 x 64 x 64 x hd multiply-adds */
    *flops = 4.0 * FA_TILE * FA_TILE * (double)hd * fa_tiles(T, B, Hq);
    return e;
}

extern "C" cudaError_t exec_cuk_flash_bwd(cudaStream_t s, void *dqkv, const void *dout,
                                          const void *qkv, const void *out, const float *lse,
                                          float *dq_acc, float *drow, int64_t T, int64_t B,
                                          int64_t Hq, int64_t Hkv, int64_t hd, int sm90,
                                          double *flops)
{
    if (!exec_cuk_flash_supported(hd) || !aligned16(qkv) || !aligned16(dout) ||
        !aligned16(out) || !aligned16(dqkv) || !aligned16(dq_acc) || !fa_fits_int(T, B, Hq, Hkv))
        return cudaErrorInvalidValue;
    *flops = 0;
    if (T * B * Hq == 0)
        return cudaGetLastError();
    int64_t rows = B * Hq * T;
    fa_drow_k<<<(unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK), THREADS, 0, s>>>(
        drow, (const bf16 *)dout, (const bf16 *)out, T, B, Hq, hd);
    cudaError_t e = cudaMemsetAsync(dq_acc, 0, (size_t)(rows * hd) * sizeof(float), s);
    if (e != cudaSuccess)
        return e;
    /* the same walk of 128 keys by query tiles of 64 either way (the FLOPs
     * below hold for both) */
    if (sm90 && exec_cuk_flash_sm90_supported(hd))
        e = exec_cuk_flash_bwd_sm90_core(s, dqkv, dq_acc, dout, qkv, lse, drow, (int)T, (int)B,
                                         (int)Hq, (int)Hkv, (int)hd);
    else
        e = fa_bwd_any(s, dqkv, dq_acc, dout, qkv, lse, drow, (int)T, (int)B, (int)Hq,
                       (int)Hkv, (int)hd);
    if (e != cudaSuccess)
        return e;
    fa_dq_k<<<blocks_for(rows * hd / 8, THREADS), THREADS, 0, s>>>(
        (bf16 *)dqkv, dq_acc, T, B, Hq, Hkv, hd, (float)(1.0 / sqrt((double)hd)));
    /* per tile: S, dP, dV, dK and dQ, five 64 x 64 x hd products */
    *flops = 10.0 * FA_TILE * FA_TILE * (double)hd * fa_bwd_tiles(T, B, Hq);
    return cudaGetLastError();
}
