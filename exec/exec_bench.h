/*
 * exec_bench.h: measuring this host for the planner's catalog.
 *
 * The planner predicts a run on a machine from its catalog entry: the
 * device's peak FLOP/s and how a GEMM's shape lowers it, its memory and
 * memory bandwidth, and the bandwidth and latency of the links between
 * ranks. For the CPU device these are measured here, on the host itself,
 * with the same libraries the executor runs on:
 *   - GEMMs: single-precision cblas_sgemm (OpenBLAS) of square and
 *     transformer-shaped sizes at each thread count, rate = 2 m n k / time;
 *   - memory bandwidth: a STREAM-style triad a[i] = b[i] + s c[i] over
 *     arrays far larger than the caches, 24 bytes per element as STREAM
 *     counts them (McCalpin, STREAM benchmark, "Counting Bytes and FLOPS"),
 *     the best of several repetitions, at each thread count;
 *   - the host: online cores, physical memory, CPU model, BLAS build.
 * The transport between ranks is measured by exec_bench_comm (the rank
 * program's bench mode, collective over the ranks of a job).
 *
 * Every figure is a measurement of this process on this host; nothing here
 * writes files or touches the database (smdplan records the results).
 */
#ifndef SMD_EXEC_BENCH_H
#define SMD_EXEC_BENCH_H

#include <stdint.h>

#include "common/st.h"

#define EXEC_BENCH_THREADS_MAX 8      /* thread counts measured */
#define EXEC_BENCH_GEMM_MAX 256       /* GEMM measurements kept */
#define EXEC_BENCH_NAME_MAX 128

/* One timed GEMM: C[m x n] = A[m x k] B[k x n] in fp32, row-major, with B
 * stored transposed (n x k) as a linear layer's weight is (llm.c's
 * matmul_forward: out = inp W^T). */
typedef struct exec_bench_gemm {
    char kind[12];               /* "sgemm" (cblas_sgemm, C = A B^T); the executor's own
                                  * linear through the device table: "fwd" (out = inp W^T +
                                  * bias), "bwd_input" (dinp = dout W), "bwd_weight" (dW +=
                                  * dout^T inp, dbias += column sums); the attention core
                                  * of every head through the device table, softmax
                                  * included: "attn_fwd", "attn_bwd" (m, n, k: T, T, head
                                  * size; FLOPs 4 T^2 hd per head forward, 8 backward) */
    int threads;
    int64_t m, n, k;
    int reps;                    /* timed repetitions after one warm-up */
    double time_s;               /* median time of one */
    double flops;                /* achieved FLOP/s: 2 m n k / time_s */
    int group;                   /* > 0: the linears of one transformer layer at one size
                                  * (their three passes), fitted as a whole (plan_hwfit.h);
                                  * 0: none */
} exec_bench_gemm;

/* One of the executor's elementwise kernels, through the device table:
 * time per element (per parameter for "optimizer"). */
typedef struct exec_bench_elem {
    char op[20];                 /* "gelu_fwd", "gelu_bwd", "swiglu_fwd", "swiglu_bwd",
                                  * "optimizer" (gradient sum of squares + AdamW),
                                  * "norm_fwd" (two norms and two residual adds),
                                  * "norm_bwd" (two norms' input and weight gradients) */
    int threads;
    int64_t n;                   /* elements (the activation's outputs, parameters, or
                                  * tokens x hidden for the norms) */
    int reps;
    double time_s;               /* median of one */
    double elem_s;               /* time_s / n */
} exec_bench_elem;

#define EXEC_BENCH_ELEM_MAX 64

/* One STREAM triad measurement. */
typedef struct exec_bench_mem {
    int threads;
    double array_bytes;          /* bytes of each of the three arrays */
    int reps;
    double time_s;               /* best time of one triad pass */
    double triad_bps;            /* 3 x 8 bytes per element / time_s */
} exec_bench_mem;

typedef struct exec_bench_cpu {
    char host[EXEC_BENCH_NAME_MAX];      /* gethostname */
    char cpu_model[EXEC_BENCH_NAME_MAX]; /* /proc/cpuinfo "model name" ("" if unknown) */
    char blas[EXEC_BENCH_NAME_MAX];      /* OpenBLAS build: its config and core */
    int cores;                   /* online CPUs (sysconf _SC_NPROCESSORS_ONLN) */
    double mem_bytes;            /* physical memory (sysconf pages x page size) */
    int nthreads;                /* thread counts measured, ascending */
    int threads[EXEC_BENCH_THREADS_MAX];
    int ngemm;
    exec_bench_gemm gemm[EXEC_BENCH_GEMM_MAX];
    int nmem;
    exec_bench_mem mem[EXEC_BENCH_THREADS_MAX];
    char device[16];             /* the executor's device measured ("cpu"), "" if none */
    int nelem;
    exec_bench_elem elem[EXEC_BENCH_ELEM_MAX];
} exec_bench_cpu;

/* One collective (or send/recv) at one message size, over the ranks of a
 * job, as nccl-tests measures it (doc/PERFORMANCE.md): time is the mean of
 * iters iterations after warm-up, the slowest rank's; algbw = bytes / time;
 * busbw = algbw x (2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and
 * all-gather, 1 for send/recv), bytes being the buffer size nccl-tests
 * reports (the full buffer of an all-gather or reduce-scatter, the message
 * of a send). */
typedef struct exec_bench_coll {
    char op[16];                 /* "allreduce", "reducescatter", "allgather", "sendrecv" */
    int ranks;
    double bytes;
    int iters;
    double time_s;
    double algbw_bps;
    double busbw_bps;
} exec_bench_coll;

#define EXEC_BENCH_COLL_MAX 256

typedef struct exec_bench_comm {
    char transport[16];          /* "mpi" */
    char host[EXEC_BENCH_NAME_MAX];
    int ranks;
    int threads_per_rank;
    int n;
    exec_bench_coll v[EXEC_BENCH_COLL_MAX];
} exec_bench_comm;

/* nccl-tests' bus bandwidth factor of an op over n ranks (PERFORMANCE.md):
 * 2(n-1)/n all-reduce, (n-1)/n reduce-scatter and all-gather, 1 send/recv;
 * 0 for an unknown op. */
double exec_bench_busbw_factor(const char *op, int n);

/* The operations of the transport bench. */
typedef enum exec_bench_op {
    EXEC_BENCH_ALLREDUCE = 0,
    EXEC_BENCH_REDUCESCATTER,
    EXEC_BENCH_ALLGATHER,
    EXEC_BENCH_SENDRECV,
    EXEC_BENCH_OP__COUNT
} exec_bench_op;

const char *exec_bench_op_name(exec_bench_op op); /* "allreduce", ... */
int exec_bench_op_parse(const char *s, exec_bench_op *out, st_err *err);

struct exec_dev;

typedef struct exec_bench_comm_config {
    double min_bytes, max_bytes; /* message sizes, doubling (default 8 B to 1 GiB) */
    unsigned ops;                /* bit 1 << exec_bench_op (default all) */
    int warmup, iters;           /* nccl-tests' -w 5 -n 20 by default */
    /* The device whose memory holds the buffers, for a transport that takes
     * device buffers (NCCL: the cuda device); NULL: host memory (MPI).
     * Borrowed for the call. */
    struct exec_dev *dev;
} exec_bench_comm_config;

void exec_bench_comm_config_default(exec_bench_comm_config *cfg);

/* The largest size of the doubling sequence up to want that two buffers per
 * rank of ranks_on_host ranks hold in half of this host's memory. */
double exec_bench_comm_max_bytes(double want, int ranks_on_host);

/* Measure the transport of world (see exec_bench_comm.c). Collective over
 * world: every rank calls it with the same config; every rank gets the
 * same out. A wrong result is ST_EINTERNAL; a transport failure or timeout
 * is the transport's error (the caller aborts the job). */
struct exec_comm;
int exec_bench_comm_run(struct exec_comm *world, const exec_bench_comm_config *cfg,
                        exec_bench_comm *out, st_err *err);

/* The measurements as JSON text (version 1; malloc'd, caller frees), its
 * reader (ST_EPARSE, ST_EINVAL naming the key), and an atomic writer. */
char *exec_bench_comm_json(const exec_bench_comm *b);
int exec_bench_comm_parse(const char *text, exec_bench_comm *b, st_err *err);
int exec_bench_comm_write(const char *path, const exec_bench_comm *b, st_err *err);

/* What to measure. Zero-initialised fields take the defaults below. */
typedef struct exec_bench_cpu_config {
    int max_threads;             /* largest thread count (default: the online cores) */
    double min_time_s;           /* time each measurement runs at least (default 0.2 s) */
    int64_t max_dim;             /* largest square GEMM side (default 2048) */
    double triad_bytes;          /* bytes of each triad array (default 64 MiB, at most
                                  * 1/16 of physical memory) */
    int quick;                   /* 1: fewer shapes and less time (tests) */
} exec_bench_cpu_config;

void exec_bench_cpu_config_default(exec_bench_cpu_config *cfg);

/* Measure this host's CPU device (minutes at most with the defaults; the
 * calling thread and OpenBLAS's threads only). Each GEMM's result is
 * checked against a reference dot product first. ST_ENOMEM, ST_EINVAL for
 * a config out of range, ST_EINTERNAL when sgemm gives a wrong answer. */
int exec_bench_cpu_run(const exec_bench_cpu_config *cfg, exec_bench_cpu *out, st_err *err);

/* The executor's own kernels on device (the device table: "cpu"), at every
 * thread count out->threads lists: its three linear passes over the
 * transformer shapes of exec_bench_cpu_run (appended to out->gemm with their
 * kind) and its elementwise kernels (out->elem). Called by
 * exec_bench_cpu_run; each linear is checked against cblas first. */
int exec_bench_dev_run(const char *device, const exec_bench_cpu_config *cfg, exec_bench_cpu *out,
                       st_err *err);

/* A GPU through the executor's device (device, "cuda"): its linears (the
 * GEMM fit's samples, grouped by layer), fused and plain attention,
 * elementwise kernels and a device-to-device copy (mem[0]), into out with
 * host, device, cpu_model (the device's description), cores 1 (a rank per
 * GPU), mem_bytes (the GPU's memory) and threads {1} (exec_bench_gpu.c).
 * ST_EUNSUPPORTED without such a device or GPU. */
int exec_bench_gpu_run(const char *device, exec_bench_cpu *out, st_err *err);

/* The thread counts measured for a host of `cores` cores up to max: 1, 2,
 * 4, ... and max itself; at most EXEC_BENCH_THREADS_MAX. Returns the count. */
int exec_bench_thread_counts(int max, int *out);

#endif
