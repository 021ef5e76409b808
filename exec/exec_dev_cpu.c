/*
 * exec_dev_cpu.c: the CPU devices. "cpu" computes in fp32 with OpenBLAS's
 * sgemm (the executor's CPU device); "cpu64" is the same code in double
 * with dgemm, so the backward of every op, and of the whole model, can be
 * checked against finite differences in double precision. The operations
 * are written once, in exec_dev_cpu_impl.h, and compiled for each type.
 *
 * Buffers are host memory (malloc, zeroed), so a host transport (MPI) takes
 * them directly. With threads_per_rank T, the device's work is split into T
 * equal ranges run by a small pool of T - 1 workers and the caller
 * (cpu_parallel): its own loops (norms, activations, softmax, cross-entropy,
 * AdamW ...), the attention by (sequence, kv head), and large matrix
 * products by rows of the result, each range one single-threaded OpenBLAS
 * call (openblas_set_num_threads(1); OpenBLAS is opened when the first
 * device opens, exec_blas.h). One pool for everything: OpenBLAS's
 * own threads spin (sched_yield) between its calls, which with the device's
 * loops between products took a fifth of the machine.
 * A range never depends on how many ranges there are: elementwise ops split
 * elements, row ops rows, column sums columns, and sums of squares add
 * fixed blocks in a fixed order, so results are the same for any T.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "exec/exec_blas.h"
#include "exec/exec_dev.h"
#include "exec/exec_dev_int.h"

/* OpenBLAS's functions (exec_blas.h), set by the first device opened;
 * every operation runs on an open device. */
static const exec_blas *blas;

/* One parallel range: [lo, hi) of a loop, tid the range's index; args is
 * the op's own struct of named arguments (one per op, with its range
 * function), read-only for the ranges. */
typedef void (*cpu_range_fn)(const void *args, int64_t lo, int64_t hi, int tid);

typedef struct cpu_dev {
    void *scratch;               /* per-thread scratch (RoPE's angle tables) */
    size_t scratch_bytes;
    int nthreads;
    pthread_t *workers;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;           /* bumped for each parallel loop */
    int pending;                 /* workers still running the current loop */
    int quit;
    cpu_range_fn fn;
    const void *args;
    int64_t n;
} cpu_dev;

static void range_of(int64_t n, int parts, int k, int64_t *lo, int64_t *hi)
{
    *lo = n * k / parts;
    *hi = n * (k + 1) / parts;
}

typedef struct worker_arg {
    cpu_dev *c;
    int tid;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg *w = p;
    cpu_dev *c = w->c;
    int tid = w->tid;
    free(w);
    unsigned long seen = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (c->gen == seen && !c->quit)
            pthread_cond_wait(&c->go, &c->mu);
        if (c->quit)
            break;
        seen = c->gen;
        cpu_range_fn fn = c->fn;
        const void *args = c->args;
        int64_t n = c->n, lo, hi;
        pthread_mutex_unlock(&c->mu);
        range_of(n, c->nthreads, tid, &lo, &hi);
        if (hi > lo)
            fn(args, lo, hi, tid);
        pthread_mutex_lock(&c->mu);
        if (--c->pending == 0)
            pthread_cond_signal(&c->done);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Run fn over [0, n) in nthreads ranges (the caller takes range 0); loops
 * shorter than min_n run on the caller alone. */
static void cpu_parallel(exec_dev *d, int64_t n, int64_t min_n, cpu_range_fn fn,
                         const void *args)
{
    cpu_dev *c = d->impl;
    if (c->nthreads <= 1 || n < min_n) {
        if (n > 0)
            fn(args, 0, n, 0);
        return;
    }
    pthread_mutex_lock(&c->mu);
    c->fn = fn;
    c->args = args;
    c->n = n;
    c->pending = c->nthreads - 1;
    c->gen++;
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->mu);
    int64_t lo, hi;
    range_of(n, c->nthreads, 0, &lo, &hi);
    if (hi > lo)
        fn(args, lo, hi, 0);
    pthread_mutex_lock(&c->mu);
    while (c->pending > 0)
        pthread_cond_wait(&c->done, &c->mu);
    pthread_mutex_unlock(&c->mu);
}

/* Smallest loop worth waking the workers for (elements or rows x width):
 * a wake-up costs some microseconds, a few thousand elements about one. */
#define CPU_PAR_MIN 16384

static void cpu_close(exec_dev *d)
{
    cpu_dev *c = d->impl;
    if (!c)
        return;
    if (c->workers) {
        pthread_mutex_lock(&c->mu);
        c->quit = 1;
        pthread_cond_broadcast(&c->go);
        pthread_mutex_unlock(&c->mu);
        for (int i = 0; i < c->nthreads - 1; i++)
            pthread_join(c->workers[i], NULL);
        free(c->workers);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->go);
    pthread_cond_destroy(&c->done);
    free(c->scratch);
    free(c);
    d->impl = NULL;
}

static int cpu_open(exec_dev *d, int threads, st_err *err)
{
    cpu_dev *c = calloc(1, sizeof *c);
    if (!c)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the cpu device");
    d->impl = c;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->go, NULL);
    pthread_cond_init(&c->done, NULL);
    c->nthreads = 1;
    int rc = exec_blas_open(&blas, err);
    if (rc != ST_OK) {
        cpu_close(d);
        return rc;
    }
    blas->set_num_threads(1);
    if (threads > 1) {
        c->workers = calloc((size_t)threads - 1, sizeof *c->workers);
        if (!c->workers) {
            cpu_close(d);
            return ST_RAISE(err, ST_ENOMEM, "cannot allocate the cpu device's threads");
        }
        for (int i = 0; i < threads - 1; i++) {
            worker_arg *w = malloc(sizeof *w);
            if (w) {
                w->c = c;
                w->tid = i + 1;
            }
            if (!w || pthread_create(&c->workers[i], NULL, worker_main, w) != 0) {
                free(w);
                c->nthreads = i + 1; /* join the ones started */
                cpu_close(d);
                return ST_RAISE(err, ST_EIO, "cannot start the cpu device's thread %d", i + 1);
            }
        }
        c->nthreads = threads;
    }
    return ST_OK;
}

static void *cpu_alloc(exec_dev *d, size_t bytes, exec_mem_class c)
{
    return calloc(1, bytes ? bytes : 1);
}

static void cpu_free(exec_dev *d, void *p)
{
    free(p);
}

/* Large copies and clears in blocks over the threads (a step clears every
 * gradient). */
#define CPU_MEM_BLOCK 65536

/* dst = src, or dst = 0 when src is NULL */
typedef struct copy_args {
    char *dst;
    const char *src;
    size_t bytes;
} copy_args;

static void copy_r(const void *args, int64_t lo, int64_t hi, int tid)
{
    const copy_args *a = args;
    size_t bytes = a->bytes, from = (size_t)lo * CPU_MEM_BLOCK;
    size_t to = (size_t)hi * CPU_MEM_BLOCK < bytes ? (size_t)hi * CPU_MEM_BLOCK : bytes;
    if (a->src)
        memcpy(a->dst + from, a->src + from, to - from);
    else
        memset(a->dst + from, 0, to - from);
}

static void cpu_copy(exec_dev *d, void *dst, const void *src, size_t bytes)
{
    if (dst == src || !bytes)
        return;
    const char *s = src, *t = dst;
    if ((s < t + bytes && t < s + bytes) || bytes < 4 * CPU_MEM_BLOCK) { /* overlap or small */
        memmove(dst, src, bytes);
        return;
    }
    copy_args a = {.dst = dst, .src = src, .bytes = bytes};
    cpu_parallel(d, (int64_t)((bytes + CPU_MEM_BLOCK - 1) / CPU_MEM_BLOCK), 2, copy_r, &a);
}

static void cpu_zero(exec_dev *d, void *p, size_t bytes)
{
    if (!bytes)
        return;
    if (bytes < 4 * CPU_MEM_BLOCK) {
        memset(p, 0, bytes);
        return;
    }
    copy_args a = {.dst = p, .src = NULL, .bytes = bytes};
    cpu_parallel(d, (int64_t)((bytes + CPU_MEM_BLOCK - 1) / CPU_MEM_BLOCK), 2, copy_r, &a);
}

static int cpu_sync(exec_dev *d, st_err *err)
{
    return ST_OK;
}

static void *cpu_stream(exec_dev *d)
{
    return NULL;
}

/* Scratch of at least bytes per thread (thread k's at k * bytes), kept
 * between calls; NULL if out of memory (the op then does nothing, and the
 * caller's next allocation fails). */
static void *cpu_scratch(exec_dev *d, size_t bytes)
{
    cpu_dev *c = d->impl;
    bytes *= (size_t)c->nthreads;
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
#define GEMM blas->sgemm
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
#define GEMM blas->dgemm
#define CPU_NAME "cpu64"
#define CPU_DTYPE EXEC_DT_F64
#define CPU_TABLE exec_dev_cpu64_ops
#include "exec/exec_dev_cpu_impl.h"
