/*
 * exec_request.h: what smdplan exec is asked beyond the plan's model and
 * layout options: the training (steps, optimizer, data, seed), checkpoints,
 * the device and the transport between ranks, the launch (threads, time
 * limits, hostfile, run directory) and what to make of it (a dry run, an
 * sbatch script, the record of a run another launcher ran). Its defaults,
 * its --scale value read, and its own consistency and the files it names
 * checked before anything is resolved, written or launched
 * (exec_request.c).
 *
 * Messages name the smdplan exec option that changes the value, as
 * exec_layout.h's do. Times are seconds.
 */
#ifndef SMD_EXEC_REQUEST_H
#define SMD_EXEC_REQUEST_H

#include <stdint.h>

#include "common/st.h"
#include "exec/exec.h"
#include "exec/exec_layout.h"
#include "planner/plan.h"

/* The contract's longest blocking wait inside the job (exec.h's
 * timeout_s), unless --wait-timeout says otherwise. */
#define EXEC_WAIT_TIMEOUT_S_DEFAULT 60.0
/* The arguments that describe a run, at most (what the emitted script's
 * --import repeats). */
#define EXEC_REQUEST_ARGS_MAX 128

/* What smdplan exec was asked. The strings are borrowed (the command
 * line's) and must outlive the request. */
typedef struct exec_request {
    int64_t plan_id;             /* --plan: a recorded plan's record id, 0: none */
    int plan_rank;               /* --plan-rank, 0: not given (the best) */
    exec_train train;            /* steps, optimizer, seed */
    exec_scale scale;            /* --scale, read (exec_scale_parse) */
    const char *scale_text;      /* --scale as given, NULL: not given */
    char data_kind[16];          /* "synthetic", "text", "tokens" */
    const char *data_path;       /* NULL: synthetic data */
    const char *save_dir, *resume_dir;
    int save_every;
    double timeout_s;            /* --timeout (0: none; the default is the caller's:
                                  * exec_default_timeout_s) */
    double wait_timeout_s;
    int timeout_given;
    int threads;                 /* per rank */
    const char *hostfile, *host_type, *run_dir, *emit, *out;
    int hostfile_slots;          /* the hostfile's largest slots=N, 0: none given (set by
                                  * exec_request_check) */
    int dry_run, force;
    char device[8];              /* "cpu" or "cuda" */
    char transport[8];           /* "nccl", "mpi", or "" (chosen: exec_transport_choose) */
    int gpus_per_host;           /* 0: CUDA's count on this host */
    int min_lr_given;
    int framework_given, precision_given;
    int shape_opt_given;         /* a plan option naming the model or the layout */
    char shape_opt[32];          /* its name, the first given */
    const char *import_dir;      /* --import DIR: record that run, launch nothing */
    int exit_status, exit_status_given;
    /* the arguments that describe the run (all but --emit, --out, --force,
     * --dry-run, --run-dir): what the emitted script's --import repeats */
    const char *run_args[EXEC_REQUEST_ARGS_MAX];
    int nrun_args;
} exec_request;

/* r zeroed, then the defaults: the executor's training defaults
 * (exec_config_default), synthetic data, the contract's wait, one thread
 * per rank, the CPU device. */
void exec_request_default(exec_request *r);

/* --scale's value s, "KEY=N,..." with keys layers, hidden, heads, kv_heads,
 * ffn, seq, vocab (each from 1 to the planner's limit of it), into sc
 * (zeroed first: a key not given is 0). ST_EINVAL naming the key or value. */
int exec_scale_parse(const char *s, exec_scale *sc, st_err *err);

/* --data's value spec: "synthetic", "text:FILE" (bytes, vocabulary 256)
 * or "tokens:FILE" (uint16 token ids) into r->data_kind and r->data_path
 * (pointing into spec: borrowed; NULL for synthetic). ST_EINVAL naming the
 * forms allowed. */
int exec_request_data(exec_request *r, const char *spec, st_err *err);

/* The request's own consistency under the plan options cfg (its framework,
 * precision and attention kernel, and whether they were given: r's
 * *_given), then the files it names: the data file, the checkpoint to
 * resume, the hostfile (read: launch_hostfile_read, its most slots into
 * r->hostfile_slots). Sets the final learning rate to a tenth of the peak
 * when --min-lr was not given. ST_EINVAL naming the option (a hostfile's
 * own codes for it). */
int exec_request_check(exec_request *r, const plan_config *cfg, st_err *err);

#endif
