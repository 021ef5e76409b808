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

static inline int aligned16(const void *p)
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

/* Two floats as bf16 in one register, lo in the low half (round to
 * nearest even). */
static __device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

#endif
