/*
 * exec_host.h: the host side of a run of the executor, what `smdplan exec`
 * does around the rank programs it launches under launch/'s supervisor
 * (launch/launch_job.h); nothing here runs on a rank.
 *
 *  - the job: a model and a layout as the executor runs them, and where
 *    they came from; its CONFIG.json and its mpirun command (exec_job.c);
 *  - the planner's and the simulator's prediction of the job on this host
 *    or on its GPUs (exec_predict.c);
 *  - the GPUs each host gives the job and the transport between its ranks
 *    (exec_hosts.c);
 *  - what the job may take of the host: its memory checked, its time limit
 *    set (exec_limits.c);
 *  - the run directory: made, never reused; one another launcher ran
 *    checked and claimed before it is recorded, once (exec_rundir.c);
 *  - RESULT.json checked against the job it claims to be
 *    (exec_result_check.c), and what the run came to judged from it and
 *    from the launcher's result (exec_outcome.c).
 *
 * Messages name the smdplan exec option that changes the value, as
 * exec_layout.h's do. Times are seconds, memory bytes.
 */
#ifndef SMD_EXEC_HOST_H
#define SMD_EXEC_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"
#include "exec/exec.h"
#include "launch/launch.h"
#include "launch/launch_job.h"
#include "planner/plan.h"

/* The rank program smdplan exec launches (exec/exec_rank_main.c). */
#define EXEC_RANK_PROGRAM "smdplan-rank"
/* Where run directories go by default, relative to the working directory. */
#define EXEC_RUNS_DIR "smdplan-runs"
/* Longest run directory path, bytes (Linux's PATH_MAX). */
#define EXEC_RUN_DIR_MAX 4096

/* ---- the job (exec_job.c) ---- */

typedef struct exec_job {
    plan_model model;            /* as run (scaled) */
    plan_model model_full;       /* before --scale */
    plan_layout layout;          /* as run */
    int ranks;
    char scaled[256];            /* what --scale reduced, "" for nothing */
    char source[160];            /* where the layout came from */
    int plan_nodes, plan_gpus;   /* the plan's cluster (for --emit slurm); 0: this host */
    char plan_instance[48];
} exec_job;

/* j's model m (before --scale) and layout: the planner's best on cluster c
 * (plan_search with cfg, as smdplan plan runs it), with the plan's cluster
 * and j->source said. ST_EINFEASIBLE when the model fits on no layout of
 * c. */
int exec_job_search(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                    exec_job *j, st_err *err);

/* j's model m and layout from the options of cfg alone on this host
 * (exec_layout_from_config). */
int exec_job_from_config(const plan_model *m, const plan_config *cfg, int cuda, exec_job *j,
                         st_err *err);

/* j (its model_full and layout set) as the executor runs it on the CPU
 * (cuda 0) or the GPU: the device's profile (exec_layout_apply, the
 * attention kernel as flash says), the model without dropout, the ranks;
 * then the knobs it does not run refused (exec_layout_check). */
int exec_job_finish(exec_job *j, int cuda, int flash, st_err *err);

/* What a run does beyond its job's model and layout: the options
 * CONFIG.json carries. Borrowed for the call. */
typedef struct exec_job_run {
    const exec_train *train;
    const char *data_kind;       /* "synthetic", "text", "tokens" */
    const char *data_path;       /* relative to the working directory; NULL: none */
    const char *save_dir;        /* checkpoints written here; NULL: none */
    int save_every;              /* steps between checkpoints (0: at the end) */
    const char *resume_dir;      /* the checkpoint continued from; NULL: none */
    int threads;                 /* per rank */
    double wait_timeout_s;       /* longest blocking wait inside the job */
    const char *device, *transport;
} exec_job_run;

/* j's CONFIG.json with r's options (its paths made absolute) into *text
 * (malloc'd, caller frees), by the executor's own writer, read back by its
 * own reader and checked against j's ranks (exec_config_check): a config
 * the rank program would refuse is refused here (ST_EINVAL naming the
 * value), before anything launches. */
int exec_job_config(const exec_job *j, const exec_job_run *r, char **text, st_err *err);

/* The mpirun command of job j into c (launch_mpirun_cmd: c->cut when an
 * argument would be cut short), threads per rank, hostfile (NULL: none)
 * passed through, the rank program at rank_program reading run_dir's
 * CONFIG.json, with this host's facts: its online cores, and Open MPI's
 * run-as-root variables when run as root without them. */
void exec_job_command(const exec_job *j, int threads, const char *hostfile,
                      const char *rank_program, const char *run_dir, launch_cmd *c);

/* ---- the prediction (exec_predict.c) ---- */

/* The planner's prediction of the job on the host (or GPU) it runs on. */
typedef struct exec_pred {
    int have_entry;              /* the catalog has this host's entry */
    char type[64];
    plan_cluster cluster;        /* the host, gpus = ranks (points into the catalog, or
                                  * at own) */
    int have_est;
    plan_estimate est;
    double simulated_s;          /* 0: not simulated */
    double peak_flops_per_rank;  /* the device's peak (catalog) */
    int peak_devices;            /* devices the peak counts: the ranks, or the GPUs they
                                  * share */
    char note[256];              /* why there is no prediction */
    /* This host as an instance type of its own (cluster.inst may point
     * here: the exec_pred is not copied): its GPUs, the links of the
     * catalog's instance type of that GPU. */
    plan_instance own;
} exec_pred;

/* The prediction of a CPU run on the catalog entry h->type (h zeroed but
 * for its type: --host TYPE, or the one smdplan bench gives this host),
 * with the smdplan profile; h->note says why there is none (no entry, more
 * ranks than its device slots, a layout the planner rejects). */
void exec_predict_host(const plan_catalog *cat, const exec_job *j, exec_pred *h);

/* This host as an instance type of its own, into h->own: as many GPUs as
 * CUDA sees (at least gpus_used) of the catalog GPU gi, with the links of
 * the first instance type of that GPU, called name. &h->own, or NULL when
 * gi is no catalog GPU (< 0) or no instance type has it. */
const plan_instance *exec_pred_own_gpu(const plan_catalog *cat, int gi, const char *name,
                                       int gpus_used, exec_pred *h);

/* The prediction of a CUDA run on instance type in (h zeroed, or holding
 * in as h->own), with the smdplan-cuda profile in bf16. gpus_used: the
 * GPUs the ranks run on (fewer than the ranks when they share one: no
 * prediction then, the planner predicts one GPU per rank). */
void exec_predict_gpu(const plan_catalog *cat, const plan_instance *in, const exec_job *j,
                      int gpus_used, exec_pred *h);

/* ---- the GPUs and the transport (exec_hosts.c) ---- */

/* Where the job's ranks find their GPUs. */
typedef struct exec_gpu_hosts {
    int visible;                 /* GPUs CUDA sees on this host */
    st_err unseen;               /* why none are known, when CUDA could not be asked */
    int gpus;                    /* GPUs each host gives the job */
    int ranks_per_host;          /* most ranks one host runs */
} exec_gpu_hosts;

/* The GPUs and ranks per host of a cuda job: gpus_per_host (--gpus-per-host,
 * 0: not given), else for a Slurm script (emit) the plan's instance type's
 * GPUs per node, else CUDA's count here; the ranks of one host: all of them
 * here, a hostfile's most slots (hostfile_slots, 0: none given), or the
 * plan's ranks per node in a Slurm script. */
void exec_gpu_hosts_of(const plan_catalog *cat, const exec_job *j, int gpus_per_host, int emit,
                       int hostfile, int hostfile_slots, exec_gpu_hosts *g);

/* The transport of a job into out (n bytes): mpi on the CPU; on the GPU
 * asked (--transport, "" when not given), else nccl when each rank has a
 * GPU of its own and the build has it, else mpi staged through host memory.
 * ST_EINVAL for an nccl this build lacks or where ranks would share a GPU. */
int exec_transport_choose(const exec_gpu_hosts *g, int cuda, const char *asked, char *out,
                          size_t n, st_err *err);

/* ---- what the job may take of the host (exec_limits.c) ---- */

/* The job's memory per rank (the planner's) against this host's available
 * memory for ranks_per_host ranks (cpu), or the GPU's for ranks_per_gpu
 * ranks sharing one (cuda): ST_EINVAL with both numbers when it does not
 * fit. */
int exec_memory_check(const exec_job *j, int cuda, int ranks_per_host, int ranks_per_gpu,
                      st_err *err);

/* The limit of a run of steps steps without --timeout, seconds; why gets
 * how it was set (n bytes). */
double exec_default_timeout_s(const exec_job *j, const exec_pred *h, int64_t steps, char *why,
                              size_t n);

/* ---- the run directory (exec_rundir.c) ---- */

/* Created in the run directory (O_EXCL) before an import records the run,
 * and then saying which run it became: a second import of the same run,
 * at the same time or later, is refused rather than recorded twice. */
#define EXEC_IMPORT_MARKER "RECORDED"

/* The default run directory, EXEC_RUNS_DIR/TIME-PID (UTC), into buf. */
void exec_run_dir_default(char *buf, size_t n);

/* Create dir and the parents it lacks. A directory already there is
 * ST_EINVAL (a run directory is never reused), another failure ST_EIO. */
int exec_run_dir_make(const char *dir, st_err *err);

/* An absolute form of path (relative to the working directory) into buf;
 * "" for NULL or "". */
void exec_path_absolute(const char *path, char *buf, size_t n);

/* --import DIR: the run the options describe (its CONFIG.json is
 * config_text as the executor reads both), its files plain files of a
 * run's size, a RESULT.json (when there is one) that reads, and not
 * recorded before. ST_EINVAL naming what is not. */
int exec_import_check(const char *dir, const char *config_text, st_err *err);

/* Claim DIR for recording: create its marker with O_EXCL (*fd open on it).
 * ST_EINVAL when it is there (recorded, or another import is recording
 * it), naming the run. */
int exec_import_claim(const char *dir, int *fd, st_err *err);

/* After the record: the marker says "run ID", or is removed when run_id is
 * 0 (nothing recorded). Closes fd. ST_EIO when the marker could not be
 * written. */
int exec_import_finish(const char *dir, int fd, int64_t run_id, st_err *err);

/* ---- RESULT.json against its job (exec_result_check.c) ---- */

/* r is what the run j with training t could have written: a status of the
 * contract's set, j's ranks, its tokens and model FLOPs per step as the
 * executor counts them, steps of t's schedule, learning rates up to t's
 * peak, times, FLOPs and memory finite, non-negative and under bounds no
 * run reaches. ST_EINVAL naming the first value that is not, and what is
 * allowed. */
int exec_result_check(const exec_result *r, const exec_job *j, const exec_train *t,
                      st_err *err);

/* The RESULT.json the run j with training t wrote in run_dir, read and
 * checked (exec_result_check) into res (exec_result_init'd): 1 when it is
 * there and passes, res then the caller's to free; else 0, with err saying
 * what is wrong with it (untouched when there is none: the run failed
 * before writing one). */
int exec_result_load(const char *run_dir, const exec_job *j, const exec_train *t,
                     exec_result *res, st_err *err);

/* The median time of r's measured steps (the contract's step time), NAN
 * when none was measured; *measured their count. */
double exec_result_median_step_s(const exec_result *r, int *measured);

/* ---- what the run came to (exec_outcome.c) ---- */

typedef struct exec_outcome {
    char status[16];             /* "ok", "failed", "timeout" */
    char error[600];
    int failed_rank;             /* -1 none */
    int bad_config;              /* the rank program refused the config (exit 2) */
    double step_s, tokens_per_s, achieved_flops, peak_flops, mfu, peak_mem_bytes;
    double device_mem_bytes;     /* the largest rank's GPU memory (CUDA's count); NAN: none */
    int measured;                /* measured steps */
} exec_outcome;

/* The run's outcome from the launcher's result lr and RESULT.json res
 * (when have_result, checked), with the peak of the prediction h: status,
 * error, failed rank, median step, throughput, MFU (NAN where unknown).
 * timeout_s: the run's limit, for the message of a run stopped by it. */
void exec_outcome_judge(double timeout_s, const launch_job_result *lr, int have_result,
                        const exec_result *res, const exec_pred *h, exec_outcome *oc);

#endif
