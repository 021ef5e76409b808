/*
 * exec_cuda_common.cuh: what the CUDA device's kernel files share (inside
 * exec/ only): bf16 loads and stores with fp32 arithmetic, launch sizes,
 * warp reductions, and the tensor-core primitives of the fused attention
 * (ldmatrix, mma.sync m16n8k16 bf16 with fp32 accumulation, cp.async),
 * each a thin wrapper over one PTX instruction as the PTX ISA documents it
 * ("Warp-level matrix instructions", "Data movement: cp.async").
 */
#ifndef SMD_EXEC_CUDA_COMMON_CUH
#define SMD_EXEC_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

#define THREADS 256
#define MAX_BLOCKS 65536
/* Rows per block of the kernels that give each row one warp. */
#define ROWS_PER_BLOCK (THREADS / 32)

static __device__ __forceinline__ float lb(const bf16 *p, int64_t i)
{
    return __bfloat162float(p[i]);
}

static __device__ __forceinline__ bf16 tb(float x)
{
    return __float2bfloat16(x);
}

static inline unsigned blocks_for(int64_t n, int threads)
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

/* 16-byte aligned (NULL counts as aligned: an absent operand). */
static inline __host__ __device__ int aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/* ---- tensor-core primitives ---- */

static __device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16 bytes global -> shared, asynchronously; zeros when !valid (the
 * source size 0: nothing is read, the destination is zero-filled). */
static __device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(valid ? 16 : 0));
}

/* 4 bytes, the same way. */
static __device__ __forceinline__ void cp_async4(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(valid ? 4 : 0));
}

static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

/* Wait until at most n of this thread's committed groups are pending. */
template <int n> static __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(n));
}

/* Four 8x8 b16 matrices from shared memory: lanes 8m..8m+7 give the row
 * addresses of matrix m; lane l receives, of each matrix, row l / 4,
 * columns 2 (l % 4) and 2 (l % 4) + 1 (the low half the first). */
static __device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(row)));
}

/* The same, each matrix transposed: lane l receives rows 2 (l % 4) and
 * 2 (l % 4) + 1 of column l / 4. */
static __device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(row)));
}

/* c (16x8 fp32) += a (16x16 bf16, row) b (16x8 bf16, col). Fragments
 * (PTX ISA, "Matrix Fragments for mma.m16n8k16"), g = lane / 4, t = lane % 4:
 * a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..],
 * a[3] = A[g+8][2t+8..]; b[0] = B[2t..2t+1][g], b[1] = B[2t+8..][g];
 * c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1]. */
static __device__ __forceinline__ void mma_bf16(float c[4], const uint32_t a[4], uint32_t b0,
                                                uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* 2^x by the special function unit, subnormal results flushed to zero
 * (PTX ISA, "ex2": ex2.approx.ftz.f32, maximum relative error 2^-22 over
 * the normal range). exp2f compiles to the same instruction with a
 * rescaling around it for subnormal results, which a probability below
 * 2^-126 never needs: 2 % of the forward and the backward at B8 H16 T2048
 * d128 on an H100. */
static __device__ __forceinline__ float ex2_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* One tile of the fused attention's online softmax (Milakov & Gimelshein
 * 2018; FlashAttention-2, Algorithm 1), for the two rows a thread holds of
 * mma's accumulator layout (n-tile n: s[4n], s[4n+1] of row ra, s[4n+2],
 * s[4n+3] of row rb, keys j0 + 8n + 2 (lane % 4) and one on): the scores
 * scaled to base 2, those above the diagonal or past the end masked when
 * edge, the quad of lanes sharing a row reducing its maximum, S turned into
 * P = exp2(S - max) in place, the running maximum and sum folded, and O's
 * NO n-tiles rescaled. NT n-tiles of keys. */
template <int NT, int NO>
static __device__ __forceinline__ void fa_online_softmax(float *s, float *o, float &m0,
                                                         float &m1, float &l0, float &l1,
                                                         float scale, bool edge, int j0, int ra,
                                                         int rb, int T, int lane)
{
#pragma unroll
    for (int n = 0; n < NT; n++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float v = s[4 * n + e] * scale;
            if (edge) {
                int j = j0 + n * 8 + 2 * (lane & 3) + (e & 1), i = e < 2 ? ra : rb;
                if (j > i || j >= T)
                    v = -INFINITY;
            }
            s[4 * n + e] = v;
        }
    }
    float x0 = m0, x1 = m1;
#pragma unroll
    for (int n = 0; n < NT; n++) {
        x0 = fmaxf(x0, fmaxf(s[4 * n], s[4 * n + 1]));
        x1 = fmaxf(x1, fmaxf(s[4 * n + 2], s[4 * n + 3]));
    }
    x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
    x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
    x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
    x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
    /* the first tile walked is the diagonal one, where every row has its
     * own key: x0 and x1 are finite from there on */
    const float a0 = ex2_ftz(m0 - x0), a1 = ex2_ftz(m1 - x1);
    m0 = x0;
    m1 = x1;
    float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
    for (int n = 0; n < NT; n++) {
        s[4 * n] = ex2_ftz(s[4 * n] - x0);
        s[4 * n + 1] = ex2_ftz(s[4 * n + 1] - x0);
        s[4 * n + 2] = ex2_ftz(s[4 * n + 2] - x1);
        s[4 * n + 3] = ex2_ftz(s[4 * n + 3] - x1);
        s0 += s[4 * n] + s[4 * n + 1];
        s1 += s[4 * n + 2] + s[4 * n + 3];
    }
    l0 = l0 * a0 + s0;
    l1 = l1 * a1 + s1;
#pragma unroll
    for (int n = 0; n < NO; n++) {
        o[4 * n] *= a0;
        o[4 * n + 1] *= a0;
        o[4 * n + 2] *= a1;
        o[4 * n + 3] *= a1;
    }
}

/* Two floats as bf16 in one register, lo in the low half (round to
 * nearest even). */
static __device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* ---- 16-byte vectors of 8 bf16, for the memory-bound kernels ---- */

#define VEC 8

/* Every pointer 16-byte aligned (the vector paths' condition, with sizes
 * that are multiples of VEC). */
static inline __host__ __device__ int all_aligned16(const void *a, const void *b, const void *c, const void *d)
{
    return aligned16(a) && aligned16(b) && aligned16(c) && aligned16(d);
}

static __device__ __forceinline__ void load8(float f[VEC], const bf16 *p)
{
    uint4 u = *(const uint4 *)p;
    const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        float2 v = __bfloat1622float2(h[k]);
        f[2 * k] = v.x;
        f[2 * k + 1] = v.y;
    }
}

static __device__ __forceinline__ void store8(bf16 *p, const float f[VEC])
{
    uint4 u;
    u.x = pack_bf16(f[0], f[1]);
    u.y = pack_bf16(f[2], f[3]);
    u.z = pack_bf16(f[4], f[5]);
    u.w = pack_bf16(f[6], f[7]);
    *(uint4 *)p = u;
}

static __device__ __forceinline__ void load8f(float f[VEC], const float *p)
{
    float4 a = *(const float4 *)p, b = *(const float4 *)(p + 4);
    f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w;
    f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
}

static __device__ __forceinline__ void store8f(float *p, const float f[VEC])
{
    *(float4 *)p = make_float4(f[0], f[1], f[2], f[3]);
    *(float4 *)(p + 4) = make_float4(f[4], f[5], f[6], f[7]);
}

#endif
