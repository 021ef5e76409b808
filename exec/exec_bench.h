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
 * program's bench mode, collective over the ranks of a job), which the
 * host side starts (exec_bench_host.c), as it starts the executor's own
 * step on a reference model.
 *
 * Every figure is a measurement on this host; nothing here touches the
 * database or writes a file of the caller's (the host side's rank programs
 * write into a directory of their own, removed after), and smdplan records
 * the results.
 */
#ifndef SMD_EXEC_BENCH_H
#define SMD_EXEC_BENCH_H

#include <stdint.h>

#include "common/st.h"
#include "planner/plan_bench.h"

/* The measurements themselves are plain data the planner fits and data/
 * records (planner/plan_bench.h); the executor fills them. */
#define EXEC_BENCH_THREADS_MAX PLAN_BENCH_THREADS_MAX
#define EXEC_BENCH_GEMM_MAX PLAN_BENCH_GEMM_MAX
#define EXEC_BENCH_NAME_MAX PLAN_BENCH_NAME_MAX
#define EXEC_BENCH_ELEM_MAX PLAN_BENCH_ELEM_MAX
#define EXEC_BENCH_COLL_MAX PLAN_BENCH_COLL_MAX
typedef plan_bench_gemm exec_bench_gemm;
typedef plan_bench_elem exec_bench_elem;
typedef plan_bench_mem exec_bench_mem;
typedef plan_bench_cpu exec_bench_cpu;
typedef plan_bench_coll exec_bench_coll;
typedef plan_bench_comm exec_bench_comm;

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

/* ---- the host side: the rank programs under launch/'s supervisor
 * (exec_bench_host.c) ---- */

/* The rank programs, beside smdplan in a build: the transport bench's
 * (exec_bench_main.c) and the executor's (exec_rank_main.c), whose lines
 * on stderr start with these names. */
#define EXEC_BENCH_RANK_PROGRAM "smdplan-bench-rank"
#define EXEC_BENCH_REF_PROGRAM "smdplan-rank"

/* The transport bench job's wall-clock limit by default, seconds. */
#define EXEC_BENCH_COMM_TIMEOUT_S 900.0

/* A transport bench job. Zero fields take the defaults. Strings are
 * borrowed for the call. */
typedef struct exec_bench_comm_job {
    const char *program;         /* path of EXEC_BENCH_RANK_PROGRAM */
    const char *transport;       /* "mpi" or "nccl" (NULL or "": mpi) */
    int ranks;                   /* ranks of the job (0: one per GPU CUDA sees with nccl,
                                  * else the cores, at least 2) */
    int cores;                   /* this host's online CPUs: more ranks run oversubscribed */
    double max_bytes;            /* largest message wanted (0: 1 GiB, 4 MiB with quick),
                                  * capped by memory (exec_bench_comm_max_bytes) */
    const char *ops;             /* "allreduce,sendrecv", ... (NULL or "": all) */
    int iters;                   /* timed iterations per size (0: 20, 5 with quick) */
    int quick;
    double timeout_s;            /* the ranks' limit (0: EXEC_BENCH_COMM_TIMEOUT_S) */
} exec_bench_comm_job;

/* Measure the transport between the ranks of one job on this host: mpirun
 * on job->program in a directory of our own, supervised (launch_job_run),
 * its JSON read into out (exec_bench_comm_parse). The modules the ranks
 * open are checked first (exec_comm_present, exec_dev_present; their
 * errors). ST_EINVAL with nccl and fewer than 2 GPUs; ST_EIO when the
 * directory cannot be made or the job fails, times out or is interrupted
 * (its last error line in the message); the reader's errors. */
int exec_bench_comm_job_run(const exec_bench_comm_job *job, exec_bench_comm *out, st_err *err);

/* The executor's own step on the reference model (planner/plan_hwfit.h:
 * plan_bench_ref_model, plan_bench_ref_layout) at threads per rank:
 * program (the path of EXEC_BENCH_REF_PROGRAM) on one rank, transport
 * "self", PLAN_BENCH_REF_STEPS steps; the medians of its measured steps'
 * compute and optimizer phases are appended to b->elem at threads, when
 * two places remain, as "ref_compute" (n: the tokens of a step) and
 * "ref_optimizer" (n: the parameters). ST_EIO when the step fails;
 * ST_ENOMEM; the result reader's errors. */
int exec_bench_ref_step_run(const char *program, int threads, exec_bench_cpu *b, st_err *err);

/* ---- between the bench files ---- */

/* This host's 1-minute load average (/proc/loadavg); -1 when unknown. */
double exec__bench_loadavg(void);
/* The n values v sorted ascending. */
void exec__bench_sort(double *v, int n);
/* n sorted times' interquartile range over their median (0 when it is 0). */
double exec__bench_iqr_spread(const double *t, int n);
/* out->spread_median and spread_worst from the n spreads v (sorted here). */
void exec__bench_spreads(exec_bench_cpu *out, double *v, int n);

#endif
