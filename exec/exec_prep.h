/*
 * exec_prep.h: a run of smdplan exec from its request (exec_request.h) to
 * what it came to, phase by phase; the command calls them in order and
 * prints between them, and records the account (exec_account) in the
 * database itself (exec/ does not link data/).
 *
 *  - the job: its model and layout (a recorded plan's, which the caller
 *    reads, the planner's best on the cluster named, or the layout flags'
 *    on this host), the GPUs and the transport between its ranks, the
 *    model as --scale reduces it, checked against the layout;
 *  - its CONFIG.json, checked as the rank program will read it, and the
 *    backends the ranks will open found;
 *  - its run directory and launch command; a dry run's JSON and the sbatch
 *    script (exec_prep_out.c);
 *  - before the launch: its memory checked against this host, its
 *    prediction, its time limit, its run directory made with CONFIG.json;
 *  - the launch under launch/'s supervisor (or, with --import, what another
 *    launcher said of it), RESULT.json read and checked, and what the run
 *    came to judged (exec_account.c).
 *
 * Messages name the smdplan exec option that changes the value. Times are
 * seconds, memory bytes.
 */
#ifndef SMD_EXEC_PREP_H
#define SMD_EXEC_PREP_H

#include <stdint.h>
#include <stdio.h>

#include "common/st.h"
#include "exec/exec.h"
#include "exec/exec_host.h"
#include "exec/exec_request.h"
#include "launch/launch.h"
#include "launch/launch_job.h"
#include "planner/plan.h"

/* A run as it is prepared. */
typedef struct exec_prep {
    const exec_request *req;     /* borrowed: outlives the prep */
    int cuda;                    /* the CUDA device (else the CPU's) */
    char host[64];               /* this host's name */
    char host_entry[64];         /* the catalog entry smdplan bench gives this host for
                                  * the request's threads per rank (host-NAME[-tT]) */
    const plan_catalog *cat;     /* borrowed from exec_prep_job on: outlives the prep */
    const plan_instance *plan_inst; /* the cluster --instances names; NULL: none */
    exec_job job;
    exec_gpu_hosts gpus;         /* a cuda job's GPUs */
    int gpus_used;               /* the GPUs the ranks run on (fewer than the ranks when
                                  * they share one) */
    char transport[8];
    char *config_text;           /* CONFIG.json (owned) */
    char run_dir[EXEC_RUN_DIR_MAX];
    launch_cmd *cmd;             /* the launch command (owned) */
    char *cmd_text;              /* the launch command as one shell line (owned) */
    double timeout_s;            /* the run's limit, 0: none */
    char limit_why[256];         /* how the limit was set */
} exec_prep;

/* p for request r on this host: its name host and its bench entry's name
 * host_entry (smdplan bench's names: the caller knows them). */
void exec_prep_init(exec_prep *p, const exec_request *r, const char *host,
                    const char *host_entry);

/* What p owns released; p stays readable up to its pointers. */
void exec_prep_free(exec_prep *p);

/* The job: with m, the model the plan options name, its layout the
 * planner's best on cluster c (exec_job_search) or, c NULL, the layout
 * options of cfg on this host; with m NULL, p->job's model_full, layout and
 * source are a recorded plan's, set by the caller. Then as the executor
 * runs it (exec_job_finish), its GPUs and transport (cuda:
 * exec_gpu_hosts_of, exec_transport_choose; staged through host memory, no
 * bucket overlap unless cfg asks), the model as the request's --scale
 * reduces it, checked against the layout and data. cat (and c) are kept:
 * they outlive p. ST_EINVAL naming the option, ST_EINFEASIBLE for a
 * cluster the model fits on nowhere. */
int exec_prep_job(exec_prep *p, const plan_config *cfg, const plan_catalog *cat,
                  const plan_model *m, const plan_cluster *c, st_err *err);

/* The job's CONFIG.json (exec_job_config: checked as the rank program
 * reads it) into p->config_text; for a launch here (not a dry run, an
 * sbatch script or an import) the device's and the transport's backends
 * found too (exec_dev_present, exec_comm_present): one missing is one
 * error, "...; nothing launched". */
int exec_prep_config(exec_prep *p, st_err *err);

/* The run directory (--import's made absolute, --run-dir, else
 * exec_run_dir_default; an import's checked: exec_import_check) and the
 * launch command of the rank program at rank_program ("": found nowhere,
 * named EXEC_RANK_PROGRAM). ST_EINVAL for an argument the command would
 * cut short, ST_ENOMEM. */
int exec_prep_command(exec_prep *p, const char *rank_program, st_err *err);

/* --dry-run --json: the command, the run directory, the ranks, the device,
 * the transport (a cuda job's GPUs and ranks per host) and the CONFIG.json
 * it would write, as JSON text (malloc'd; NULL when out of memory). */
char *exec_prep_json(const exec_prep *p);

/* --emit slurm: the sbatch script of the job (exec_here_slurm_script) that
 * runs the command from the working directory and records the run with
 * smdplan, this program's path ("" unknown). Malloc'd; NULL and err when
 * out of memory. */
char *exec_prep_slurm(const exec_prep *p, const char *smdplan, st_err *err);

/* The prediction of the job into h: on the CPU, on the request's --host
 * or this host's bench entry (exec_predict_host); on the GPU
 * (exec_here_predict_gpu), of the device device_desc names (RESULT.json's
 * device_name; NULL before the run), device_gpu its catalog GPU (< 0:
 * none). */
void exec_prep_predict(const exec_prep *p, const char *device_desc, int device_gpu,
                       exec_pred *h);

/* Before the launch: the job's memory against this host (exec_memory_check;
 * not for an import), its prediction into h (exec_prep_predict), its
 * limit (the request's --timeout, else exec_default_timeout_s, how it was
 * set in p->limit_why), its run directory made (exec_run_dir_make) with
 * CONFIG.json written into it; the directory is removed again when the
 * write fails ("...; nothing launched or recorded"). An import makes and
 * writes nothing. */
int exec_prep_ready(exec_prep *p, exec_pred *h, st_err *err);

/* What the run is before it starts, after the model's line: where the
 * model and layout came from, the layout, the device, the prediction h,
 * the command (or the import) and its limit. */
void exec_prep_print_start(FILE *f, const exec_prep *p, const exec_pred *h);

/* ---- what the run came to (exec_account.c) ---- */

/* A run as it is recorded and printed. */
typedef struct exec_account {
    const exec_job *j;           /* borrowed from the prep */
    const exec_pred *h;          /* set by exec_account_judge */
    launch_job_result lr;        /* the launcher's (an import's: its exit status) */
    exec_result res;             /* RESULT.json, when have_result (owned) */
    int have_result;
    st_err result_err;           /* why there is none, or it is not the run's */
    exec_outcome oc;
    const char *cmd_text, *run_dir, *config_text; /* borrowed from the prep */
    char host[EXEC_HOST_MAX];    /* the run's host (RESULT.json's, else this one) */
    int exit_status;             /* the launcher's */
    int64_t plan_record;         /* the plan record run, 0: none */
    int threads;                 /* per rank */
    const char *device, *transport; /* as CONFIG.json says */
    int cuda;
    int64_t run_id;              /* set when recorded, 0: not recorded */
    double timeout_s;            /* the run's limit, 0: none (an import) */
} exec_account;

/* Launch p's command under launch_job_run (its logs mpirun.out and
 * mpirun.err in the run directory, its progress on progress, NULL: none),
 * or with --import take the exit status the request gives; then read the
 * run's RESULT.json (exec_result_load) into a (zeroed first; free with
 * exec_account_free). An import whose RESULT.json is not the run's is
 * ST_EINVAL, "...; nothing recorded"; a launch that could not start is
 * launch_job_run's error. */
int exec_account_launch(const exec_prep *p, FILE *progress, exec_account *a, st_err *err);

/* What the run came to (exec_outcome_judge, with the prediction h, which
 * a keeps): a RESULT.json that could not be read, or is not this run's, is
 * the error unless the launcher said something of its own. */
void exec_account_judge(exec_account *a, const exec_pred *h);

/* The exit code of smdplan exec for the run: 0 ok, 2 a config the rank
 * program refused, 1 another failure; with --import (import), 0 when it
 * was recorded (a->run_id > 0), else 1. */
int exec_account_exit(const exec_account *a, int import);

/* The account as JSON text (--json: run_id, status, error, ranks, the
 * measurement, losses, the prediction, the model, the run directory and
 * command, the wall time and limit), the model being model (the caller's
 * JSON object of the job's model, taken over; NULL: left out). Malloc'd;
 * NULL when out of memory. */
struct cJSON;
char *exec_account_json(const exec_account *a, struct cJSON *model);

/* The account for a person: status and error, the step time beside the
 * prediction, throughput and MFU, memory, device, losses, run directory. */
void exec_account_print(FILE *f, const exec_account *a);

/* What a owns released. */
void exec_account_free(exec_account *a);

#endif
