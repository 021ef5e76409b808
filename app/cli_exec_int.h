/*
 * cli_exec_int.h: what smdplan exec's launch (cli_exec.c) and its account
 * of a run (cli_exec_run.c: the outcome judged, recorded and printed, and
 * the checks of --import) share.
 */
#ifndef SMD_CLI_EXEC_INT_H
#define SMD_CLI_EXEC_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "launch/launch_job.h"
#include "data/data.h"
#include "data/db.h"
#include "exec/exec.h"
#include "planner/plan.h"

#define RANK_PROGRAM "smdplan-rank"

/* ---- the job ---- */

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

/* The planner's prediction of the job on the host (or GPU) it runs on. */
typedef struct host_pred {
    int have_entry;              /* the catalog has this host's entry */
    char type[64];
    plan_cluster cluster;        /* the host, gpus = ranks */
    int have_est;
    plan_estimate est;
    double simulated_s;          /* 0: not simulated */
    double peak_flops_per_rank;  /* the device's peak (catalog) */
    int peak_devices;            /* devices the peak counts: the ranks, or the GPUs they
                                  * share */
    char note[256];              /* why there is no prediction */
    /* This host as an instance type of its own (cluster.inst may point
     * here: the host_pred is not copied): its GPUs, the links of the
     * catalog's instance type of that GPU. */
    plan_instance own;
} host_pred;

/* ---- after the run ---- */

/* What a run came to (cli_exec__judge). */
typedef struct outcome {
    char status[16];
    char error[600];
    int failed_rank;             /* -1 none */
    int bad_config;              /* the rank program refused the config (exit 2) */
    double step_s, tokens_per_s, achieved_flops, peak_flops, mfu, peak_mem_bytes;
    double device_mem_bytes;     /* the largest rank's GPU memory (CUDA's count); NAN: none */
    int measured;
} outcome;

/* A run as it is recorded and printed. */
typedef struct rec_ctx {
    const exec_job *j;
    const host_pred *h;
    const exec_result *res;
    int have_result;
    const outcome *oc;
    const char *cmd_text, *run_dir, *config_text, *host;
    int exit_status;
    int64_t plan_record;
    int threads;
    const char *device, *transport; /* as CONFIG.json says */
    int64_t run_id;              /* set when recorded */
    double timeout_s;            /* the run's time limit, 0: none (an import) */
} rec_ctx;

/* Created in the run directory (O_EXCL) before an import records the run,
 * and then saying which run it became: a second import of the same run,
 * at the same time or later, is refused rather than recorded twice. */
#define IMPORT_MARKER "RECORDED"
/* Sizes past any run's files: a CONFIG.json is a few KiB; a RESULT.json
 * holds a few hundred bytes per step and per rank. */
#define IMPORT_CONFIG_MAX ((off_t)1 << 20)
#define IMPORT_RESULT_MAX ((off_t)1 << 30)

/* The run's outcome from the launcher's result and RESULT.json (when
 * have_result): status, error, failed rank, median step, throughput, MFU. */
void cli_exec__judge(double timeout_s, const launch_job_result *lr, int have_result,
                     const exec_result *res, const host_pred *h, const exec_job *j, outcome *oc);

/* cli_record's callback: the run, its steps and ranks, and its prediction;
 * sets x->run_id. */
int cli_exec__record_run(db *d, const db_provenance *p, void *vctx, st_err *err);

/* What a run came to, as JSON (--json) and for a person. */
void cli_exec__print_json(const rec_ctx *x, double wall_s);
void cli_exec__print_text(const rec_ctx *x, int cuda);

/* --import DIR: the run these options describe (its CONFIG.json is
 * config_text as the executor reads both), its files plain files of a
 * run's size, and not recorded before. */
int cli_exec__import_check(const char *dir, const char *config_text, st_err *err);

/* ---- before the launch (cli_exec_limits.c) ---- */

/* The job's memory per rank (the planner's) against this host's available
 * memory for ranks_per_host ranks (cpu), or the GPU's for ranks_per_gpu
 * ranks sharing one (cuda): ST_EINVAL with both numbers when it does not
 * fit. */
int cli_exec__memory_check(const exec_job *j, int cuda, int ranks_per_host, int ranks_per_gpu,
                           st_err *err);

/* The limit of a run without --timeout, seconds (see cli_exec_limits.c);
 * why gets how it was set. */
double cli_exec__default_timeout(const exec_job *j, const host_pred *h, int64_t steps,
                                 char *why, size_t n);

/* RESULT.json r is the run j with training t could have written (see
 * cli_exec_run.c): ST_EINVAL naming the first value that is not, and what
 * is allowed. */
int cli_exec__result_check(const exec_result *r, const exec_job *j, const exec_train *t,
                           st_err *err);

/* Claim DIR for recording: create its marker with O_EXCL (*fd open on it).
 * ST_EINVAL when it is there (recorded, or another import is recording
 * it), naming the run. */
int cli_exec__import_claim(const char *dir, int *fd, st_err *err);
/* After the record: the marker says "run ID", or is removed when run_id is
 * 0 (nothing recorded). Closes fd. ST_EIO when the marker could not be
 * written. */
int cli_exec__import_finish(const char *dir, int fd, int64_t run_id, st_err *err);

#endif
