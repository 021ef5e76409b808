/*
 * exec_dev_cuda_int.h: what the CUDA device's files share. The device
 * proper, its operation table (exec_dev_cuda.c), sits on two parts with
 * their own state: the allocator of device memory (exec_alloc_cuda.c) and
 * the matrix products on cuBLASLt with their cache of plans
 * (exec_matmul_cuda.c). Internal to exec/, built only with CUDA, in the
 * module smdplan-cuda.so.
 */
#ifndef SMD_EXEC_DEV_CUDA_INT_H
#define SMD_EXEC_DEV_CUDA_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "common/st.h"
#include "exec/exec_dev.h"

/* Bytes a block reserved from CUDA, and the device's own scratch, are
 * rounded up to. */
#define EXEC_CUDA_ROUND_BYTES ((size_t)2 << 20)

/* The largest power of two (2 to 256) dividing the address p: the operand
 * alignment cuBLASLt's algorithms and the vectorized kernels ask for. */
static inline uint32_t exec__cuda_align(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t r = 256;
    while (r > 2 && a % r)
        r >>= 1;
    return r;
}

/* ---- the allocator (exec_alloc_cuda.c) ----
 * Every buffer the executor asks for comes from large blocks reserved with
 * cudaMalloc once per buffer class (a buffer of 64 MiB or more gets a block
 * of its own: the flat parameters, gradients and optimizer states are one
 * allocation each), carved first-fit and returned to their block on free,
 * never to CUDA until the pool is finished; nothing calls cudaMalloc in a
 * step once the first step has run. A zeroed pool is empty. */
typedef struct exec_cuda_block exec_cuda_block;

typedef struct exec_cuda_pool {
    exec_cuda_block *blocks;
    int n, cap;
} exec_cuda_pool;

/* A buffer of at least bytes of class cls, not cleared; *size gets the
 * bytes it spans (bytes rounded up to the pool's alignment, 256). NULL
 * when CUDA or the host is out of memory (CUDA's error is cleared: an
 * out-of-memory is an answer, not a failure). */
void *exec__cuda_pool_alloc(exec_cuda_pool *pool, size_t bytes, exec_mem_class cls,
                            size_t *size);
/* Give back p, merged with its free neighbours; -1 when p is not a buffer
 * of the pool (nothing changes), else 0. */
int exec__cuda_pool_free(exec_cuda_pool *pool, void *p);
/* Every block back to CUDA (the work using them must have finished); the
 * pool is empty again. */
void exec__cuda_pool_fini(exec_cuda_pool *pool);

/* ---- matrix products on cuBLASLt (exec_matmul_cuda.c) ---- */

/* cuBLASLt's workspace: 32 MiB, what NVIDIA recommends for Hopper (the
 * cuBLAS documentation, "cublasSetWorkspace"; llm.c uses the same). */
#define EXEC_CUDA_LT_WORKSPACE ((size_t)32 << 20)

typedef struct exec_cuda_plan exec_cuda_plan;

/* cuBLASLt's handle, its workspace and the plans made so far, products
 * queued on stream; a failure is raised into *fail (the device's sticky
 * error), and nothing runs once *fail is set. */
typedef struct exec_cuda_lt {
    cublasLtHandle_t handle;
    void *ws;                    /* EXEC_CUDA_LT_WORKSPACE bytes of device memory */
    cudaStream_t stream;
    st_err *fail;                /* borrowed from the device */
    exec_cuda_plan *plans;
    int nplans;
} exec_cuda_lt;

/* Make lt's handle, workspace and empty cache on stream, reporting into
 * *fail later; on an error (ST_ENOMEM, ST_EIO with CUDA's or cuBLASLt's
 * word) what was made is left for exec__cuda_lt_close. */
int exec__cuda_lt_open(exec_cuda_lt *lt, cudaStream_t stream, st_err *fail, st_err *err);
/* Free what open made (a zeroed lt is harmless). */
void exec__cuda_lt_close(exec_cuda_lt *lt);

/* D (m x n) = alpha op(A) op(B) + beta C (+ bias per row of D), all bf16,
 * column-major, batch products of strides sa, sb, sd; C is D itself when
 * NULL, else a matrix of D's layout (a residual). With bgrad, bias is
 * written instead: the sums of op(B) over the product's k dimension, one
 * per column of D (cuBLASLt's CUBLASLT_EPILOGUE_BGRADB, the bias gradient
 * of a linear layer whose weight gradient this product is). Returns 1 when
 * the epilogue had no algorithm (nothing was run; the caller adds the bias
 * or sums the gradient itself), 0 otherwise. */
int exec__cuda_lt_matmul(exec_cuda_lt *lt, int ta, int tb, int64_t m, int64_t n, int64_t k,
                         const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                         int64_t sb, void *D, int64_t ldd, int64_t sd, int batch, float alpha,
                         float beta, const void *bias, int bgrad, const void *C);

/* The GELU in a product's epilogue (one product, no batch, beta 0):
 * EXEC_CUDA_GELU_FWD: D = gelu(op(A) op(B) + bias) with aux (m x n, leading
 * dimension ldd, bf16) = the GELU's input (CUBLASLT_EPILOGUE_GELU_AUX_BIAS);
 * EXEC_CUDA_GELU_BWD: D = gelu'(aux) * op(A) op(B), aux that input
 * (CUBLASLT_EPILOGUE_DGELU), bias NULL. cuBLASLt's GELU is the tanh
 * approximation (the executor's, GPT-2's). Returns 1 when cuBLASLt has no
 * algorithm for it (nothing was run: the caller runs the product and the
 * GELU's kernel apart), 0 otherwise. */
typedef enum exec_cuda_gelu { EXEC_CUDA_GELU_FWD = 1, EXEC_CUDA_GELU_BWD } exec_cuda_gelu;
int exec__cuda_lt_matmul_gelu(exec_cuda_lt *lt, exec_cuda_gelu kind, int ta, int tb, int64_t m,
                              int64_t n, int64_t k, const void *A, int64_t lda, const void *B,
                              int64_t ldb, void *D, int64_t ldd, const void *bias, void *aux);

#endif
