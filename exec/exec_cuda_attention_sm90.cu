/*
 * exec_cuda_attention_sm90.cu: the fused causal attention's forward and
 * backward on Hopper's warpgroup tensor-core instructions (PTX ISA 8.0,
 * "Asynchronous Warpgroup Level Matrix Multiply-Accumulate":
 * wgmma.mma_async, sm_90a),
 * FlashAttention-3's form of the forward (Shah et al. 2024, Section 3.1)
 * without its producer warps and TMA: a block of two warpgroups owns 128
 * query rows of one (batch, head), each warpgroup 64, and walks the key and
 * value tiles of 128 from the diagonal down (causal block skipping, as the
 * sm_80 kernel of exec_cuda_attention.cu does, whose online softmax, base-2
 * scores and fp32 log-sum-exp this keeps, so the backward there reads the
 * same lse).
 *
 * Per tile, each warpgroup: S = Q K^T by eight (head size 128) or four (64)
 * wgmma m64n128k16 with Q and K both read from shared memory by descriptor;
 * the softmax on S's fp32 accumulators in registers; O += P V by eight
 * wgmma m64nDk16 with P from registers (the accumulator layout of S is the
 * A-fragment layout of mma.m16n8k16, which wgmma's register A takes) and V
 * from shared memory as an N-major operand (imm-trans-b), so V needs no
 * transpose. The two warpgroups share each K and V tile; the next tile's
 * loads (cp.async) are issued as a tile begins and have all of its work to
 * arrive.
 *
 * Shared memory holds every tile in the 128-byte swizzled K-major layout
 * of the PTX ISA ("Shared Memory Matrix Layout", 128B swizzling mode; CUTLASS
 * names it Swizzle<3,4,3>): a head's row of d elements splits into panels of
 * 64 (128 bytes); panel p of row r sits at p * R * 128 + r * 128 and its
 * 16-byte chunk c at (c ^ (r % 8)) * 16 within the row, every panel
 * 1024-byte aligned. For Q and K (K-major operands) a descriptor's stride
 * byte offset is 1024 (the next 8 rows) and a k-step of 16 elements adds 32
 * bytes within a panel; V as the N-major operand of P V reads the same
 * layout with its leading byte offset the distance between d-panels
 * (R * 128) and its stride byte offset the next 8 keys (1024). The 16-byte
 * chunks of one row go to 8 different bank groups, so the cp.async writes
 * have no bank conflicts either.
 *
 * The backward (f9_bwd_k, its own comment below) uses the same layout and
 * descriptors: K and V as K-major A operands, Q and dO as K-major B
 * operands of S^T and dP^T and N-major ones of dV and dK, dS^T as the
 * M-major A of dQ.
 *
 * Generic-proxy writes (cp.async) are made visible to wgmma's async proxy
 * by fence.proxy.async before the barrier that publishes a tile (PTX ISA,
 * "Async proxy"). Only head sizes 64 and 128; built for sm_90a alone
 * (CMakeLists.txt), and chosen at run time only where the GPU runs that
 * image (exec_cuk_flash_sm90_ready); elsewhere the sm_80 kernel runs.
 */
#include <math.h>
#include <stdint.h>

#include "exec/exec_cuda_common.cuh"
#include "exec/exec_cuda_kernels.h"

#define F9_ROWS 128    /* query rows a block: two warpgroups of 64 */
#define F9_KEYS 128    /* keys a tile */
#define F9_QT 64       /* the backward's query tile */
#define F9_THREADS 256
#define F9_LOG2E 1.4426950408889634f
#define F9_LN2 0.6931471805599453f

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define F9_DEVICE 1 /* this pass compiles the kernel's body (sm_90a) */
#else
#define F9_DEVICE 0
#endif

/* The accumulator operands of a wgmma: its string ({%0, ..., %N-1}) and
 * the N floats d[0..N-1] read and written, N 64 (n128) or 32 (n64). */
#define F9_ACC64_STR \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
#define F9_ACC64_OPS \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), \
    "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), \
    "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), \
    "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), \
    "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), \
    "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
    "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), \
    "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), \
    "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define F9_ACC32_STR \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
#define F9_ACC32_OPS \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), \
    "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), \
    "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), \
    "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), \
    "+f"(d[30]), "+f"(d[31])

/* d (64 x 128 fp32, this warpgroup's rows) = A B, plus d when acc: A (64 x 16)
 * and B (128 x 16), both K-major, from shared memory by descriptor. */
static __device__ __forceinline__ void f9_mma_ss_n128(float (&d)[64], uint64_t da, uint64_t db,
                                                      int acc)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 F9_ACC64_STR
                 "%64, %65, p, 1, 1, 0, 0;\n}\n"
                 : F9_ACC64_OPS
                 : "l"(da), "l"(db), "r"(acc));
}

/* d (64 x 128 fp32) += A B: A (64 x 16 bf16) from registers in mma.m16n8k16's A
 * layout (each warp's 16 rows), B (16 x 128) N-major (imm-trans-b 1) from
 * shared memory by descriptor. */
static __device__ __forceinline__ void f9_mma_rs_n128(float (&d)[64], const uint32_t (&a)[4],
                                                     uint64_t db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 F9_ACC64_STR
                 "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
                 : F9_ACC64_OPS
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

/* d (64 x 64 fp32) += A B: A (64 x 16 bf16) from registers in mma.m16n8k16's A
 * layout (each warp's 16 rows), B (16 x 64) N-major (imm-trans-b 1) from
 * shared memory by descriptor. */
static __device__ __forceinline__ void f9_mma_rs_n64(float (&d)[32], const uint32_t (&a)[4],
                                                     uint64_t db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 F9_ACC32_STR
                 "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
                 : F9_ACC32_OPS
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

/* d (64 x 64 fp32) = A B, plus d when acc: A (64 x 16) and B (16 x 64) from
 * shared memory by descriptor, K-major (TR 0: imm-trans-a and -b 0) or A
 * M-major and B N-major (TR 1). */
template <int TR>
static __device__ __forceinline__ void f9_mma_ss_n64(float (&d)[32], uint64_t da, uint64_t db,
                                                     int acc)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 F9_ACC32_STR
                 "%32, %33, p, 1, 1, %35, %35;\n}\n"
                 : F9_ACC32_OPS
                 : "l"(da), "l"(db), "r"(acc), "n"(TR));
}

static __device__ __forceinline__ void f9_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void f9_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void f9_wait_all(void)
{
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

/* cp.async's writes (generic proxy) visible to wgmma (async proxy). */
static __device__ __forceinline__ void f9_fence_proxy(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Keeps the compiler from moving a read or write of an accumulator across
 * the wgmma that owns it (the wait is a separate instruction it does not
 * tie to the registers): CUTLASS's warpgroup_fence_operand. */
template <int N> static __device__ __forceinline__ void f9_hold(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(r[i])::"memory");
}

/* A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
 * start address, leading and stride byte offsets (each >> 4, 14 bits), the
 * 128-byte swizzle (layout type 1, bits 62-63); base offset 0, every panel
 * being 1024-byte aligned. */
static __device__ __forceinline__ uint64_t f9_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | (uint64_t)((lbo & 0x3FFFFu) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFFu) >> 4) << 32 | (uint64_t)1 << 62;
}

/* Byte offset of 16-byte chunk c (8 elements) of row r in a tile of R rows. */
template <int R> static __device__ __forceinline__ uint32_t f9_off(int r, int c)
{
    return (uint32_t)((c >> 3) * R * 128 + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}

/* Rows r0 .. r0 + R - 1 of a head (HD bf16 each, row t at g + t * stride)
 * into a swizzled tile at shared address s, asynchronously; rows at or past
 * T are zeros. */
template <int HD, int R>
static __device__ __forceinline__ void f9_load(unsigned char *s, const bf16 *g, int64_t stride,
                                               int r0, int T)
{
    constexpr int CPR = HD / 8, N = R * CPR;
    static_assert(N % F9_THREADS == 0, "whole rounds of the block");
#pragma unroll
    for (int it = 0; it < N / F9_THREADS; it++) {
        int e = it * F9_THREADS + (int)threadIdx.x, r = e / CPR, c = e % CPR;
        bool ok = r0 + r < T;
        cp_async16(s + f9_off<R>(r, c), ok ? g + (int64_t)(r0 + r) * stride + c * 8 : g, ok);
    }
}

template <int HD> struct f9_tiles {
    static constexpr int q_bytes = F9_ROWS * HD * 2, kv_bytes = F9_KEYS * HD * 2;
    /* Q, two K and two V buffers, and the slack to align the first to 1024 */
    static constexpr int bytes = q_bytes + 4 * kv_bytes + 1024;
};

/* O / l of this warp's 16 rows through its own rows of the Q tile (only its
 * warpgroup's wgmmas read them, and those are done) to 16-byte stores, and
 * each row's log-sum-exp (natural log). */
template <int HD>
static __device__ __forceinline__ void f9_store(bf16 *out, float *lse, unsigned char *Qs,
                                                const float (&o)[HD / 2], float m0, float m1,
                                                float l0, float l1, int row0, int lane, int q0,
                                                int T, int B, int Hq, int h, int b)
{
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float i0 = 1.0f / l0, i1 = 1.0f / l1;
    const int g = lane >> 2, t4 = 4 * (lane & 3);
#pragma unroll
    for (int n = 0; n < HD / 8; n++) {
        *(uint32_t *)(Qs + f9_off<F9_ROWS>(row0 + g, n) + t4) =
            pack_bf16(o[4 * n] * i0, o[4 * n + 1] * i0);
        *(uint32_t *)(Qs + f9_off<F9_ROWS>(row0 + g + 8, n) + t4) =
            pack_bf16(o[4 * n + 2] * i1, o[4 * n + 3] * i1);
    }
    __syncwarp();
    const int64_t ldo = (int64_t)Hq * HD;
#pragma unroll
    for (int e = lane; e < 16 * (HD / 8); e += 32) {
        int r = e / (HD / 8), c = e % (HD / 8), i = q0 + row0 + r;
        if (i < T)
            *(int4 *)(out + ((int64_t)i * B + b) * ldo + (int64_t)h * HD + c * 8) =
                *(const int4 *)(Qs + f9_off<F9_ROWS>(row0 + r, c));
    }
    if ((lane & 3) == 0) {
        float *lr = lse + ((int64_t)b * Hq + h) * T;
        int ra = q0 + row0 + g, rb = ra + 8;
        if (ra < T)
            lr[ra] = (m0 + log2f(l0)) * F9_LN2;
        if (rb < T)
            lr[rb] = (m1 + log2f(l1)) * F9_LN2;
    }
}

/* acc (64 x HD fp32) += A B, A in registers and B N-major (HD columns):
 * the forward's O += P V, the backward's dV += P^T dO and dK += dS^T Q. */
template <int HD>
static __device__ __forceinline__ void f9_pv(float (&o)[HD / 2], const uint32_t (&p)[4],
                                             uint64_t dv)
{
    if constexpr (HD == 128)
        f9_mma_rs_n128(o, p, dv);
    else
        f9_mma_rs_n64(o, p, dv);
}

template <int HD>
__global__ void __launch_bounds__(F9_THREADS, 1)
    f9_fwd_k(bf16 *out, float *lse, const bf16 *qkv, int T, int B, int Hq, int Hkv,
             float scale_log2)
{
#if F9_DEVICE
    using tl = f9_tiles<HD>;
    extern __shared__ unsigned char f9_raw[];
    unsigned char *Qs = f9_raw + ((1024u - (smem_addr(f9_raw) & 1023u)) & 1023u);
    unsigned char *Kb = Qs + tl::q_bytes, *Vb = Kb + 2 * tl::kv_bytes;
    const int nt = (T + F9_ROWS - 1) / F9_ROWS;
    const int qt = nt - 1 - (int)blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int kh = h / (Hq / Hkv), q0 = qt * F9_ROWS;
    const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int row0 = wg * 64 + warp * 16; /* this warp's first row in the block */
    const int ra = q0 + row0 + (lane >> 2), rb = ra + 8;
    const int64_t W = (int64_t)(Hq + 2 * Hkv) * HD, rs = (int64_t)B * W;
    const bf16 *qg = qkv + b * W + (int64_t)h * HD, *kg = qkv + b * W + (int64_t)(Hq + kh) * HD,
               *vg = qkv + b * W + (int64_t)(Hq + Hkv + kh) * HD;

    f9_load<HD, F9_ROWS>(Qs, qg, rs, q0, T);
    f9_load<HD, F9_KEYS>(Kb + (qt & 1) * tl::kv_bytes, kg, rs, q0, T);
    f9_load<HD, F9_KEYS>(Vb + (qt & 1) * tl::kv_bytes, vg, rs, q0, T);
    cp_async_commit();

    const uint32_t qa = smem_addr(Qs) + wg * 64 * 128;
    float o[HD / 2];
#pragma unroll
    for (int i = 0; i < HD / 2; i++)
        o[i] = 0.0f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;

    for (int kt = qt; kt >= 0; kt--) {
        const int j0 = kt * F9_KEYS;
        cp_async_wait<0>(); /* this tile's K and V (and Q) */
        f9_fence_proxy();
        __syncthreads(); /* visible to all; both warpgroups are done with the last tile */
        const uint32_t ka = smem_addr(Kb + (kt & 1) * tl::kv_bytes),
                       va = smem_addr(Vb + (kt & 1) * tl::kv_bytes);
        if (kt > 0) { /* the next tile into the buffers the last one used */
            f9_load<HD, F9_KEYS>(Kb + ((kt - 1) & 1) * tl::kv_bytes, kg, rs, j0 - F9_KEYS, T);
            f9_load<HD, F9_KEYS>(Vb + ((kt - 1) & 1) * tl::kv_bytes, vg, rs, j0 - F9_KEYS, T);
            cp_async_commit();
        }
        /* S = Q K^T: k-steps of 16 along the head, 4 to a 128-byte panel */
        float s[64];
        f9_fence();
#pragma unroll
        for (int ks = 0; ks < HD / 16; ks++) {
            uint32_t step = (uint32_t)((ks >> 2) * F9_ROWS * 128 + (ks & 3) * 32);
            uint32_t kstep = (uint32_t)((ks >> 2) * F9_KEYS * 128 + (ks & 3) * 32);
            f9_mma_ss_n128(s, f9_desc(qa + step, 16, 1024), f9_desc(ka + kstep, 16, 1024),
                           ks > 0);
        }
        f9_commit();
        f9_wait_all();
        f9_hold(s);
        fa_online_softmax<16, HD / 8>(s, o, m0, m1, l0, l1, scale_log2,
                                      kt == qt || j0 + F9_KEYS > T, j0,
                       ra, rb, T, lane);
        /* O += P V: 16 keys a k-step, 2048 bytes of V's panels; P's
         * fragments all written before the fence (a register written
         * between two wgmmas makes the compiler wait for the first) */
        uint32_t p[F9_KEYS / 16][4];
#pragma unroll
        for (int kk = 0; kk < F9_KEYS / 16; kk++) {
            p[kk][0] = pack_bf16(s[8 * kk], s[8 * kk + 1]);
            p[kk][1] = pack_bf16(s[8 * kk + 2], s[8 * kk + 3]);
            p[kk][2] = pack_bf16(s[8 * kk + 4], s[8 * kk + 5]);
            p[kk][3] = pack_bf16(s[8 * kk + 6], s[8 * kk + 7]);
        }
        f9_fence();
#pragma unroll
        for (int kk = 0; kk < F9_KEYS / 16; kk++)
            f9_pv<HD>(o, p[kk], f9_desc(va + kk * 16 * 128, F9_KEYS * 128, 1024));
        f9_commit();
        f9_wait_all();
        f9_hold(o);
    }
    f9_store<HD>(out, lse, Qs, o, m0, m1, l0, l1, row0, lane, q0, T, B, Hq, h, b);
#endif
}

template <int HD>
static cudaError_t f9_launch(cudaStream_t s, void *out, float *lse, const void *qkv, int T, int B,
                             int Hq, int Hkv)
{
    int bytes = f9_tiles<HD>::bytes;
    cudaError_t e =
        cudaFuncSetAttribute(f9_fwd_k<HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess)
        return e;
    int nt = (T + F9_ROWS - 1) / F9_ROWS;
    dim3 grid((unsigned)nt, (unsigned)Hq, (unsigned)B);
    f9_fwd_k<HD><<<grid, F9_THREADS, (size_t)bytes, s>>>((bf16 *)out, lse, (const bf16 *)qkv, T,
                                                         B, Hq, Hkv, F9_LOG2E / sqrtf((float)HD));
    return cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* backward                                                                 */
/* ------------------------------------------------------------------------ */

/* The backward (FlashAttention-2's Algorithm 2 in FlashAttention-3's
 * warpgroup form, without its producer warps): a block of two warpgroups
 * owns 128 keys of one kv head, each warpgroup 64, with dK and dV in
 * registers over every query head of the group and every query tile of 64
 * at or below the diagonal, in the order exec_cuda_attention.cu's fa_bwd_k
 * walks them (the same grid, drow and dq_acc: its launcher calls this one
 * on Hopper). Per query tile, each warpgroup: S^T = K Q^T and dP^T = V dO^T
 * (m64n64k16, all four operands K-major in shared memory); P^T and dS^T in
 * registers; dV += P^T dO and dK += dS^T Q with P^T and dS^T from registers
 * and dO and Q as N-major operands; dS^T to shared memory (rows of keys,
 * 64 queries to a 128-byte row: the M-major A of the next product); then
 * dQ = dS K (m64n64k16, A M-major and B N-major), added to dq_acc with
 * fp32 atomics: with heads of 128 each warpgroup takes 64 of the columns
 * over all 128 keys, with heads of 64 all the columns over its own 64 keys.
 * Q, dO and the tile's lse and D are double-buffered: the next tile's
 * loads are issued as a tile begins. */
template <int HD> struct f9_bwd_tiles {
    static constexpr int kv_bytes = F9_KEYS * HD * 2, q_bytes = F9_QT * HD * 2,
                         ds_bytes = F9_KEYS * F9_QT * 2, stats_bytes = 2 * F9_QT * 4;
    static constexpr int k = 0, v = kv_bytes, q = 2 * kv_bytes, dO = q + 2 * q_bytes,
                         ds = dO + 2 * q_bytes, stats = ds + ds_bytes,
                         bytes = stats + 2 * stats_bytes + 1024;
};

/* A query tile's Q and dO (head h, queries i0..) and its rows' lse and D
 * into buffer set `buf`, asynchronously, one commit group. */
template <int HD>
static __device__ __forceinline__ void f9_bwd_load(unsigned char *sm, int buf, const bf16 *qkv,
                                                   const bf16 *dout, const float *lse,
                                                   const float *drow, int b, int64_t W,
                                                   int64_t rs, int64_t ldo, int64_t rso, int Hq,
                                                   int h, int i0, int T)
{
    using L = f9_bwd_tiles<HD>;
    f9_load<HD, F9_QT>(sm + L::q + buf * L::q_bytes, qkv + b * W + (int64_t)h * HD, rs, i0, T);
    f9_load<HD, F9_QT>(sm + L::dO + buf * L::q_bytes, dout + b * ldo + (int64_t)h * HD, rso, i0,
                       T);
    if (threadIdx.x < 2 * F9_QT) {
        float *st = (float *)(sm + L::stats + buf * L::stats_bytes);
        const float *lr = (threadIdx.x < F9_QT ? lse : drow) + ((int64_t)b * Hq + h) * T;
        int r = threadIdx.x % F9_QT;
        cp_async4(st + threadIdx.x, i0 + r < T ? lr + i0 + r : lr, i0 + r < T);
    }
    cp_async_commit();
}

/* dq_acc [B, Hq, T, HD] += (x, y) at one row, two columns. */
static __device__ __forceinline__ void f9_add2(float *p, float x, float y)
{
    atomicAdd((float2 *)p, make_float2(x, y));
}

/* P^T = exp2(S^T scale log2(e) - lse log2(e)) where the query is at or
 * after the key and both are in the sequence, dS^T = P^T (dP^T - D); both
 * packed as the A fragments of the next products (4 k-steps of 16 queries),
 * dS^T also into shared memory for dQ. ka: this thread's first key in the
 * block (its second is ka + 8), ja the same in the sequence. */
static __device__ __forceinline__ void f9_bwd_grad(const float (&s)[32], const float (&dp)[32],
                                                   uint32_t (&pa)[4][4], uint32_t (&da)[4][4],
                                                   unsigned char *dss, const float *st,
                                                   float scale_log2, bool edge, int i0, int ka,
                                                   int ja, int T, int lane)
{
    const float *lse_s = st, *d_s = st + F9_QT;
    const int t2 = 2 * (lane & 3);
#pragma unroll
    for (int n = 0; n < 8; n++) {
        float p[4], ds[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int il = n * 8 + t2 + (e & 1), i = i0 + il, j = ja + (e < 2 ? 0 : 8);
            float v = ex2_ftz(s[4 * n + e] * scale_log2 - lse_s[il] * F9_LOG2E);
            if (edge && (i < j || i >= T || j >= T))
                v = 0.0f;
            p[e] = v;
            ds[e] = v * (dp[4 * n + e] - d_s[il]);
        }
        /* n-tile n is half of k-step n / 2: registers 0, 1 (first half) or
         * 2, 3 (second) of mma's A fragment */
        const int kk = n >> 1, hi = (n & 1) * 2;
        pa[kk][hi] = pack_bf16(p[0], p[1]);
        pa[kk][hi + 1] = pack_bf16(p[2], p[3]);
        da[kk][hi] = pack_bf16(ds[0], ds[1]);
        da[kk][hi + 1] = pack_bf16(ds[2], ds[3]);
        *(uint32_t *)(dss + f9_off<F9_KEYS>(ka, n) + 2 * t2) = da[kk][hi];
        *(uint32_t *)(dss + f9_off<F9_KEYS>(ka + 8, n) + 2 * t2) = da[kk][hi + 1];
    }
}

/* dK (scaled) and dV of this thread's two keys into dqkv. */
template <int HD>
static __device__ __forceinline__ void f9_bwd_store(bf16 *dqkv, const float (&dk)[HD / 2],
                                                    const float (&dv)[HD / 2], int kh, int Hq,
                                                    int Hkv, int ja, int T, int B, int b,
                                                    int64_t W, int t2, float scale)
{
    bf16 *dkr = dqkv + (int64_t)(Hq + kh) * HD, *dvr = dqkv + (int64_t)(Hq + Hkv + kh) * HD;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const int j = ja + 8 * u;
        if (j >= T)
            continue;
        const int64_t row = ((int64_t)j * B + b) * W;
#pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            int c = n * 8 + t2;
            *(uint32_t *)(dkr + row + c) =
                pack_bf16(dk[4 * n + 2 * u] * scale, dk[4 * n + 2 * u + 1] * scale);
            *(uint32_t *)(dvr + row + c) = pack_bf16(dv[4 * n + 2 * u], dv[4 * n + 2 * u + 1]);
        }
    }
}

template <int HD>
__global__ void __launch_bounds__(F9_THREADS, 1)
    f9_bwd_k(bf16 *dqkv, float *dq_acc, const bf16 *dout, const bf16 *qkv, const float *lse,
             const float *drow, int T, int B, int Hq, int Hkv, float scale, float scale_log2)
{
#if F9_DEVICE
    using L = f9_bwd_tiles<HD>;
    extern __shared__ unsigned char f9_raw[];
    unsigned char *sm = f9_raw + ((1024u - (smem_addr(f9_raw) & 1023u)) & 1023u);
    const uint32_t sa = smem_addr(sm);
    const int nt = (T + F9_QT - 1) / F9_QT;
    const int kt = blockIdx.x, kh = blockIdx.y, b = blockIdx.z, group = Hq / Hkv;
    const int j0 = kt * F9_KEYS;
    const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int t2 = 2 * (lane & 3);
    const int64_t W = (int64_t)(Hq + 2 * Hkv) * HD, rs = (int64_t)B * W;
    const int64_t ldo = (int64_t)Hq * HD, rso = (int64_t)B * ldo;
    /* this thread's first key in the block (and 8 on), and in the sequence */
    const int ka = wg * 64 + warp * 16 + (lane >> 2), ja = j0 + ka;

    f9_load<HD, F9_KEYS>(sm + L::k, qkv + b * W + (int64_t)(Hq + kh) * HD, rs, j0, T);
    f9_load<HD, F9_KEYS>(sm + L::v, qkv + b * W + (int64_t)(Hq + Hkv + kh) * HD, rs, j0, T);

    float dk[HD / 2], dv[HD / 2];
#pragma unroll
    for (int i = 0; i < HD / 2; i++)
        dk[i] = dv[i] = 0.0f;
    const int qfirst = j0 / F9_QT, per_head = nt - qfirst, steps = group * per_head;
    f9_bwd_load<HD>(sm, 0, qkv, dout, lse, drow, b, W, rs, ldo, rso, Hq, kh * group,
                    qfirst * F9_QT, T);
    /* the products' fixed operands: this warpgroup's 64 keys of K and V */
    const uint32_t kw = sa + L::k + wg * 64 * 128, vw = sa + L::v + wg * 64 * 128;
    for (int step = 0; step < steps; step++) {
        const int h = kh * group + step / per_head, i0 = (qfirst + step % per_head) * F9_QT;
        const int buf = step & 1;
        cp_async_wait<0>();
        f9_fence_proxy();
        __syncthreads(); /* this step's tiles visible; the last step's dQ is done */
        if (step + 1 < steps)
            f9_bwd_load<HD>(sm, buf ^ 1, qkv, dout, lse, drow, b, W, rs, ldo, rso, Hq,
                            kh * group + (step + 1) / per_head,
                            (qfirst + (step + 1) % per_head) * F9_QT, T);
        const uint32_t qa = sa + L::q + buf * L::q_bytes, oa = sa + L::dO + buf * L::q_bytes;
        /* S^T = K Q^T, dP^T = V dO^T: this warpgroup's 64 keys x 64 queries */
        float s[32], dp[32];
        f9_fence();
#pragma unroll
        for (int ks = 0; ks < HD / 16; ks++) {
            const uint32_t kv = (uint32_t)((ks >> 2) * F9_KEYS * 128 + (ks & 3) * 32),
                           qo = (uint32_t)((ks >> 2) * F9_QT * 128 + (ks & 3) * 32);
            f9_mma_ss_n64<0>(s, f9_desc(kw + kv, 16, 1024), f9_desc(qa + qo, 16, 1024), ks > 0);
            f9_mma_ss_n64<0>(dp, f9_desc(vw + kv, 16, 1024), f9_desc(oa + qo, 16, 1024), ks > 0);
        }
        f9_commit();
        f9_wait_all();
        f9_hold(s);
        f9_hold(dp);
        const bool edge = i0 < j0 + F9_KEYS || i0 + F9_QT > T || j0 + F9_KEYS > T;
        uint32_t pa[4][4], da[4][4];
        f9_bwd_grad(s, dp, pa, da, sm + L::ds,
                    (const float *)(sm + L::stats + buf * L::stats_bytes), scale_log2, edge, i0,
                    ka, ja, T, lane);
        /* dV += P^T dO, dK += dS^T Q: k-steps of 16 queries (2048 bytes) */
        f9_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            f9_pv<HD>(dv, pa[kk], f9_desc(oa + kk * 2048, F9_QT * 128, 1024));
            f9_pv<HD>(dk, da[kk], f9_desc(qa + kk * 2048, F9_QT * 128, 1024));
        }
        f9_commit();
        f9_fence_proxy(); /* dS^T's stores, for the dQ product's reads */
        __syncthreads();  /* both warpgroups' dS^T written */
        /* dQ = dS K: heads of 128, columns wg * 64.. over the 128 keys;
         * heads of 64, every column over this warpgroup's keys */
        float dq[32];
        f9_fence();
        constexpr int DK = HD == 128 ? F9_KEYS / 16 : 4;
        const uint32_t dsa = sa + L::ds + (HD == 128 ? 0 : wg * 64 * 128),
                       kb = sa + L::k + (HD == 128 ? wg * F9_KEYS * 128 : wg * 64 * 128);
#pragma unroll
        for (int kk = 0; kk < DK; kk++)
            f9_mma_ss_n64<1>(dq, f9_desc(dsa + kk * 2048, 1024, 1024),
                            f9_desc(kb + kk * 2048, 1024, 1024), kk > 0);
        f9_commit();
        f9_wait_all();
        f9_hold(dq);
        f9_hold(dv);
        f9_hold(dk);
        float *dqr = dq_acc + ((int64_t)b * Hq + h) * (int64_t)T * HD;
        const int qa0 = i0 + warp * 16 + (lane >> 2), c0 = HD == 128 ? wg * 64 : 0;
#pragma unroll
        for (int n = 0; n < 8; n++) {
            int c = c0 + n * 8 + t2;
            if (qa0 < T)
                f9_add2(dqr + (int64_t)qa0 * HD + c, dq[4 * n], dq[4 * n + 1]);
            if (qa0 + 8 < T)
                f9_add2(dqr + (int64_t)(qa0 + 8) * HD + c, dq[4 * n + 2], dq[4 * n + 3]);
        }
    }
    f9_bwd_store<HD>(dqkv, dk, dv, kh, Hq, Hkv, ja, T, B, b, W, t2, scale);
#endif
}

/* The backward's middle kernel on Hopper: f9_bwd_k over the grid
 * exec_cuda_attention.cu's launcher sets up (drow and dq_acc ready). */
extern "C" cudaError_t exec_cuk_flash_bwd_sm90_core(cudaStream_t s, void *dqkv, float *dq_acc,
                                                    const void *dout, const void *qkv,
                                                    const float *lse, const float *drow, int T,
                                                    int B, int Hq, int Hkv, int hd)
{
    if (!exec_cuk_flash_sm90_supported(hd))
        return cudaErrorInvalidValue;
    int bytes = hd == 128 ? f9_bwd_tiles<128>::bytes : f9_bwd_tiles<64>::bytes;
    cudaError_t e = cudaFuncSetAttribute(hd == 128 ? f9_bwd_k<128> : f9_bwd_k<64>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess)
        return e;
    dim3 grid((unsigned)((T + F9_KEYS - 1) / F9_KEYS), (unsigned)Hkv, (unsigned)B);
    float scale = 1.0f / sqrtf((float)hd);
    if (hd == 128)
        f9_bwd_k<128><<<grid, F9_THREADS, (size_t)bytes, s>>>(
            (bf16 *)dqkv, dq_acc, (const bf16 *)dout, (const bf16 *)qkv, lse, drow, T, B, Hq, Hkv,
            scale, scale * F9_LOG2E);
    else
        f9_bwd_k<64><<<grid, F9_THREADS, (size_t)bytes, s>>>(
            (bf16 *)dqkv, dq_acc, (const bf16 *)dout, (const bf16 *)qkv, lse, drow, T, B, Hq, Hkv,
            scale, scale * F9_LOG2E);
    return cudaGetLastError();
}

/* Whether GPU `ordinal` runs this file's sm_90a image: compute capability
 * 9.0 and the kernel's binary built for it (a build without sm_90a, or
 * another GPU, has no image to run). */
extern "C" int exec_cuk_flash_sm90_ready(int ordinal)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal) !=
            cudaSuccess || major != 9 || minor != 0) {
        (void)cudaGetLastError();
        return 0;
    }
    cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, f9_fwd_k<128>) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.binaryVersion == 90;
}

extern "C" int exec_cuk_flash_sm90_supported(int64_t hd)
{
    return hd == 64 || hd == 128;
}

extern "C" cudaError_t exec_cuk_flash_fwd_sm90(cudaStream_t s, void *out, float *lse,
                                               const void *qkv, int64_t T, int64_t B, int64_t Hq,
                                               int64_t Hkv, int64_t hd, double *flops)
{
    if (!exec_cuk_flash_sm90_supported(hd) || !aligned16(qkv) || !aligned16(out) ||
        T >= (1 << 30) || B >= 65536 || Hq >= 65536 || Hkv < 1 || Hq % Hkv != 0)
        return cudaErrorInvalidValue;
    *flops = 0;
    if (T * B * Hq == 0)
        return cudaGetLastError();
    cudaError_t e = hd == 128 ? f9_launch<128>(s, out, lse, qkv, (int)T, (int)B, (int)Hq, (int)Hkv)
                              : f9_launch<64>(s, out, lse, qkv, (int)T, (int)B, (int)Hq, (int)Hkv);
    /* per tile of 128 x 128: S = Q K^T and O += P V */
    double nt = (double)((T + F9_ROWS - 1) / F9_ROWS);
    *flops = 4.0 * F9_ROWS * F9_KEYS * (double)hd * nt * (nt + 1) / 2 * (double)(B * Hq);
    return e;
}
