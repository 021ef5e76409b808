/*
 * plan_bench.h: a host's measurements as the catalog fit reads them.
 *
 * smdplan bench measures a device and the links between ranks with the
 * executor's own libraries (exec/exec_bench.h); the figures come back in
 * these plain structs, which the planner fits a catalog entry to
 * (plan_hwfit.h) and data/ records. Nothing here measures or allocates:
 * units are in the names (seconds, FLOP/s, bytes, bytes per second).
 */
#ifndef SMD_PLAN_BENCH_H
#define SMD_PLAN_BENCH_H

#include <stddef.h>
#include <stdint.h>

#define PLAN_BENCH_THREADS_MAX 8      /* thread counts measured */
#define PLAN_BENCH_GEMM_MAX 256       /* GEMM measurements kept */
#define PLAN_BENCH_NAME_MAX 128

/* One timed GEMM: C[m x n] = A[m x k] B[k x n] in fp32, row-major, with B
 * stored transposed (n x k) as a linear layer's weight is (llm.c's
 * matmul_forward: out = inp W^T). */
typedef struct plan_bench_gemm {
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
} plan_bench_gemm;

/* One of the executor's elementwise kernels, through the device table:
 * time per element (per parameter for "optimizer"). */
typedef struct plan_bench_elem {
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
} plan_bench_elem;

#define PLAN_BENCH_ELEM_MAX 64

/* One STREAM triad measurement. */
typedef struct plan_bench_mem {
    int threads;
    double array_bytes;          /* bytes of each of the three arrays */
    int reps;
    double time_s;               /* best time of one triad pass */
    double triad_bps;            /* 3 x 8 bytes per element / time_s */
} plan_bench_mem;

typedef struct plan_bench_cpu {
    char host[PLAN_BENCH_NAME_MAX];      /* gethostname */
    char cpu_model[PLAN_BENCH_NAME_MAX]; /* /proc/cpuinfo "model name" ("" if unknown) */
    char blas[PLAN_BENCH_NAME_MAX];      /* OpenBLAS build: its config and core */
    int cores;                   /* online CPUs (sysconf _SC_NPROCESSORS_ONLN) */
    double mem_bytes;            /* physical memory (sysconf pages x page size) */
    int nthreads;                /* thread counts measured, ascending */
    int threads[PLAN_BENCH_THREADS_MAX];
    int ngemm;
    plan_bench_gemm gemm[PLAN_BENCH_GEMM_MAX];
    int nmem;
    plan_bench_mem mem[PLAN_BENCH_THREADS_MAX];
    char device[16];             /* the executor's device measured ("cpu"), "" if none */
    int nelem;
    plan_bench_elem elem[PLAN_BENCH_ELEM_MAX];
    /* How steady the device's measurements were: each one's repetitions'
     * interquartile range over their median, the median and the largest of
     * them (0: not measured); and the host's 1-minute load average when
     * the bench began and ended (-1: not known). */
    double spread_median, spread_worst;
    double load_start, load_end;
} plan_bench_cpu;

/* A bench entry measured on a busy host: a median spread above this, or a
 * load at the start of more than half the cores (other work running) (one
 * written under load made this kind of host's CPU predictions 15-17 % off,
 * against 5 % from one written quiet). */
#define PLAN_BENCH_SPREAD_BUSY 0.05
int plan_bench_busy(const plan_bench_cpu *b);

/* How steady b's measurements were, in words, into buf (n bytes, at most
 * PLAN_BENCH_STEADY_MAX needed; cut short when it does not fit): their
 * spread, the load at the start and end, and whether the host was busy
 * (plan_host_entry.c). */
#define PLAN_BENCH_STEADY_MAX 200
void plan_bench_steadiness(const plan_bench_cpu *b, char *buf, size_t n);

/* One collective (or send/recv) at one message size, over the ranks of a
 * job, as nccl-tests measures it (doc/PERFORMANCE.md): time is the mean of
 * iters iterations after warm-up, the slowest rank's; algbw = bytes / time;
 * busbw = algbw x (2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and
 * all-gather, 1 for send/recv), bytes being the buffer size nccl-tests
 * reports (the full buffer of an all-gather or reduce-scatter, the message
 * of a send). */
typedef struct plan_bench_coll {
    char op[16];                 /* "allreduce", "reducescatter", "allgather", "sendrecv" */
    int ranks;
    double bytes;
    int iters;
    double time_s;
    double algbw_bps;
    double busbw_bps;
} plan_bench_coll;

#define PLAN_BENCH_COLL_MAX 256

typedef struct plan_bench_comm {
    char transport[16];          /* "mpi" */
    char host[PLAN_BENCH_NAME_MAX];
    int ranks;
    int threads_per_rank;
    int n;
    plan_bench_coll v[PLAN_BENCH_COLL_MAX];
} plan_bench_comm;

/* nccl-tests' bus bandwidth factor of an op over n ranks (PERFORMANCE.md):
 * 2(n-1)/n all-reduce, (n-1)/n reduce-scatter and all-gather, 1 send/recv;
 * 0 for an unknown op. */
double plan_bench_busbw_factor(const char *op, int n);

#endif
