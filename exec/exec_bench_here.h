/*
 * exec_bench_here.h: smdplan bench's measurements of this host, in the
 * order it takes them (exec_bench_here.c): the CPU device and the
 * executor's reference step at each thread count asked for, the transport
 * between the ranks of one job, or a GPU through the executor's cuda
 * device; with this host's name and what a GPU host's entry needs of it.
 *
 * The rank programs are looked for beside smdplan (exec_program.h). What
 * is measured comes back in the planner's plain structs (exec_bench.h);
 * nothing here records, writes a file of the caller's or prints: progress
 * lines go to the caller's say function.
 */
#ifndef SMD_EXEC_BENCH_HERE_H
#define SMD_EXEC_BENCH_HERE_H

#include <stddef.h>

#include "common/st.h"
#include "exec/exec_bench.h"

/* A progress line (no newline) for the person waiting; ctx is the caller's. */
typedef void (*exec_bench_say_fn)(const char *line, void *ctx);

/* What smdplan bench measures. Zero fields take exec_bench_comm_job's
 * defaults. */
typedef struct exec_bench_here {
    int quick;                   /* fewer shapes and sizes; no reference step */
    int threads[EXEC_BENCH_THREADS_MAX]; /* threads per rank of the reference step */
    int nthreads;
    int ranks;                   /* the transport job's (exec_bench_comm_job) */
    double max_bytes;
    char ops[128];
    char transport[16];          /* "mpi" ("": mpi) or "nccl" */
    int iters;
    double timeout_s;
    exec_bench_say_fn say;       /* NULL: silent */
    void *say_ctx;
} exec_bench_here;

/* The CPU device (exec_bench_cpu_run, quick as h says) into cpu; unless
 * quick, the executor's reference step at each of h's thread counts
 * (exec_bench_ref_step_run) when EXEC_BENCH_REF_PROGRAM is beside smdplan.
 * Their errors. */
int exec_bench_here_cpu(const exec_bench_here *h, exec_bench_cpu *cpu, st_err *err);

/* The transport between the ranks of one job on this host
 * (exec_bench_comm_job_run on EXEC_BENCH_RANK_PROGRAM, beside smdplan; as
 * many ranks as cores by default), into out. ST_ENOENT when the program is
 * not there; the job's errors. */
int exec_bench_here_comm(const exec_bench_here *h, exec_bench_comm *out, st_err *err);

/* A GPU of this host through the executor's cuda device
 * (exec_bench_gpu_run) into out. *no_gpu is set to 1, with the reason in
 * err, when there is nothing to measure: the build has no cuda device,
 * CUDA sees no GPU or its module is missing (the device query's error),
 * or the bench finds no device or module (ST_EUNSUPPORTED, ST_ENOENT);
 * to 0 for every other outcome. */
int exec_bench_here_gpu(const exec_bench_here *h, exec_bench_cpu *out, int *no_gpu,
                        st_err *err);

/* This host's name as gethostname gives it ("localhost" when it gives
 * none) into full (nf bytes), and its short name (plan_host_short_name)
 * into short_name (ns bytes); either may be NULL. */
void exec_bench_host_name(char *full, size_t nf, char *short_name, size_t ns);

/* What a GPU host's catalog entry takes of this host: the GPUs of b's
 * device that it counts (exec_device_count) and its physical memory,
 * bytes (sysconf; 0 when unknown). */
void exec_bench_gpu_host(const exec_bench_cpu *b, int *ngpu, double *host_mem_bytes);

#endif
