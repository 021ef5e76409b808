/*
 * exec_dev_cpu.c: the CPU devices. "cpu" computes in fp32 with OpenBLAS's
 * sgemm (the executor's CPU device); "cpu64" is the same code in double
 * with dgemm, so the backward of every op, and of the whole model, can be
 * checked against finite differences in double precision. The operations
 * are written once, in exec_dev_cpu_impl.h, and compiled for each type.
 *
 * Buffers are host memory (malloc, zeroed), so a host transport (MPI) takes
 * them directly. BLAS threads per rank are set at open
 * (openblas_set_num_threads); the loops themselves run on one thread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include <cblas.h>

#include "exec/exec_dev.h"
#include "exec/exec_dev_int.h"

typedef struct cpu_dev {
    void *scratch;               /* small per-op scratch (RoPE's angle table) */
    size_t scratch_bytes;
} cpu_dev;

static int cpu_open(exec_dev *d, int threads, st_err *err)
{
    cpu_dev *c = calloc(1, sizeof *c);
    if (!c)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the cpu device");
    d->impl = c;
    openblas_set_num_threads(threads);
    return ST_OK;
}

static void cpu_close(exec_dev *d)
{
    cpu_dev *c = d->impl;
    if (c)
        free(c->scratch);
    free(c);
    d->impl = NULL;
}

static void *cpu_alloc(exec_dev *d, size_t bytes)
{
    return calloc(1, bytes ? bytes : 1);
}

static void cpu_free(exec_dev *d, void *p)
{
    free(p);
}

static void cpu_copy(exec_dev *d, void *dst, const void *src, size_t bytes)
{
    if (dst != src && bytes)
        memmove(dst, src, bytes);
}

static void cpu_zero(exec_dev *d, void *p, size_t bytes)
{
    if (bytes)
        memset(p, 0, bytes);
}

static int cpu_sync(exec_dev *d, st_err *err)
{
    return ST_OK;
}

static void *cpu_stream(exec_dev *d)
{
    return NULL;
}

/* Scratch of at least bytes, kept between calls; NULL if out of memory
 * (the op then does nothing, and the caller's next allocation fails). */
static void *cpu_scratch(exec_dev *d, size_t bytes)
{
    cpu_dev *c = d->impl;
    if (c->scratch_bytes < bytes) {
        void *p = realloc(c->scratch, bytes);
        if (!p)
            return NULL;
        c->scratch = p;
        c->scratch_bytes = bytes;
    }
    return c->scratch;
}

#define REAL float
#define SFX _f32
#define GEMM cblas_sgemm
#define CPU_NAME "cpu"
#define CPU_DTYPE EXEC_DT_F32
#define CPU_TABLE exec_dev_cpu_ops
#include "exec/exec_dev_cpu_impl.h"
#undef REAL
#undef SFX
#undef GEMM
#undef CPU_NAME
#undef CPU_DTYPE
#undef CPU_TABLE

#define REAL double
#define SFX _f64
#define GEMM cblas_dgemm
#define CPU_NAME "cpu64"
#define CPU_DTYPE EXEC_DT_F64
#define CPU_TABLE exec_dev_cpu64_ops
#include "exec/exec_dev_cpu_impl.h"
