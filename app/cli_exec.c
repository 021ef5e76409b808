/*
 * cli_exec.c: `smdplan exec`, running a plan for real on this host.
 *
 *   smdplan exec --plan ID [--plan-rank K] [--scale layers=4,hidden=256,...] [options]
 *   smdplan exec --layers 4 --hidden 256 --heads 4 --tp 2 --pp 2 [layout flags] [options]
 *   smdplan exec --params 1.3B --instances 2xp4d [layout flags] --scale ... [options]
 *
 * The layout comes from a recorded plan (--plan ID: a record of `smdplan
 * plan`, its plan of rank K), from the planner's own search on --instances
 * (the plan command's flags, the smdplan framework), or from the layout
 * flags alone on this host (knobs not given take the defaults below). The
 * model may be shrunk with --scale (layers, hidden, heads, kv heads, ffn,
 * sequence, vocabulary) keeping the layout, as SageMaker's model-parallel
 * guide advises ("validate a reduced model before renting the cluster");
 * the reduced shape is checked against the layout the executor runs (heads,
 * kv heads, MLP and vocabulary split by TP, layers over the pipeline
 * chunks, sequence by TP with sequence parallelism) and what was reduced is
 * said.
 *
 * It writes CONFIG.json (cli_exec.h) into a run directory it creates,
 * launches `mpirun -n R` on the rank program (smdplan-rank next to this
 * executable, else on PATH) with --oversubscribe when R x threads exceeds
 * the online cores, the Open MPI root variables when run as root, and
 * --hostfile passed through (a regular file: launch_hostfile.c), once the
 * job's memory is known to fit this host and its time limit is set
 * (exec/exec_limits.c); supervises it (launch_job.c: the hard time limit,
 * interruption, nothing left behind); reads RESULT.json and records the run
 * (data/: the database), with the planner's prediction and the simulator's
 * step for the same layout on this host's catalog entry (smdplan bench
 * writes it) beside it (exec/exec_predict.c). What the run came to is
 * judged in exec/exec_outcome.c, recorded and printed in cli_exec_run.c.
 *
 * --dry-run prints the exact command and writes nothing; --emit slurm
 * prints (or --out writes) an sbatch script (launch/launch_slurm.c) that
 * runs the same command and then records the run itself: its last step is
 * this command again, with --import RUN_DIR --exit-status S, which checks
 * that RUN_DIR's CONFIG.json is the run the options describe, reads
 * RESULT.json, predicts and records as after a launch, and marks RUN_DIR
 * recorded (a second import is refused).
 * Exit codes: 0 the run succeeded, 1 it failed (recorded with the error),
 * 2 bad input (nothing launched), or the rank program refused the config;
 * with --import, 0 recorded, 1 nothing recorded, 2 bad input.
 */
#include "app/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "app/cli_exec_int.h"
#include "app/cli_int.h"
#include "launch/launch_job.h"
#include "common/text.h"
#include "common/units.h"
#include "data/data.h"
#include "data/db_lookup.h"
#include "exec/exec.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_here.h"
#include "exec/exec_host.h"
#include "exec/exec_layout.h"
#include "launch/launch.h"
#include "planner/plan_framework.h"

/* The contract's longest blocking wait inside the job. */
#define DEFAULT_WAIT_TIMEOUT_S 60.0
#define ARGS_MAX 64

enum {
    X_HELP = 'h',
    X_PLAN = 1000, X_PLAN_RANK, X_STEPS, X_SCALE, X_DATA, X_SEED, X_SAVE, X_SAVE_EVERY, X_RESUME,
    X_TIMEOUT, X_WAIT_TIMEOUT, X_THREADS, X_HOSTFILE, X_HOST, X_RUN_DIR, X_DRY_RUN, X_EMIT, X_OUT,
    X_FORCE, X_LR, X_MIN_LR, X_WARMUP, X_WEIGHT_DECAY, X_GRAD_CLIP, X_DEVICE, X_TRANSPORT,
    X_GPUS_PER_HOST, X_IMPORT, X_EXIT_STATUS,
};


static const cli_opt xopts[] = {
    {NULL, 0, 0, NULL, "What to run"},
    {"plan", 1, X_PLAN, "ID", "a recorded plan (a record id of smdplan plan; see smdplan history)"},
    {"plan-rank", 1, X_PLAN_RANK, "K", "with --plan: its plan of rank K (default 1, the best)"},
    {"scale", 1, X_SCALE, "K=N,...", "shrink the model, keeping the layout: layers, hidden, heads, kv_heads, ffn, seq, vocab"},
    {"steps", 1, X_STEPS, "N", "training steps (default 20; the first is a warm-up, not measured)"},
    {"data", 1, X_DATA, "D", "synthetic (default, seeded tokens), text:FILE (bytes, vocab 256), tokens:FILE (uint16)"},
    {"seed", 1, X_SEED, "N", "seed of the weights and synthetic data (default 1234)"},
    {NULL, 0, 0, NULL, "Optimizer (AdamW; defaults as GPT-3 trained)"},
    {"lr", 1, X_LR, "R", "peak learning rate (default 3e-4)"},
    {"min-lr", 1, X_MIN_LR, "R", "final learning rate of the cosine decay (default lr / 10)"},
    {"warmup-steps", 1, X_WARMUP, "N", "linear warm-up steps (default 2)"},
    {"weight-decay", 1, X_WEIGHT_DECAY, "W", "decoupled weight decay (default 0.1)"},
    {"grad-clip", 1, X_GRAD_CLIP, "C", "global gradient-norm clip (default 1.0; 0 = none)"},
    {NULL, 0, 0, NULL, "Checkpoints"},
    {"save", 1, X_SAVE, "DIR", "write model and optimizer state to DIR"},
    {"save-every", 1, X_SAVE_EVERY, "N", "with --save: every N steps (default: at the end)"},
    {"resume", 1, X_RESUME, "DIR", "continue from a checkpoint written with the same layout"},
    {NULL, 0, 0, NULL, "Device"},
    {"device", 1, X_DEVICE, "D", "cpu (default: fp32, OpenBLAS) or cuda (bf16 on one GPU per rank, fp32 master weights)"},
    {"transport", 1, X_TRANSPORT, "T", "with --device cuda: nccl (the default when each rank has a GPU of its own) or mpi (staged through host memory: ranks may share a GPU)"},
    {"gpus-per-host", 1, X_GPUS_PER_HOST, "N", "with --device cuda: GPUs each host gives the job (default: those CUDA sees here)"},
    {NULL, 0, 0, NULL, "Launch"},
    {"threads", 1, X_THREADS, "N", "threads per rank (OpenBLAS; default 1)"},
    {"timeout", 1, X_TIMEOUT, "S", "hard wall-clock limit of the whole run, seconds (default 10 x the predicted run, at least 600; 0: none)"},
    {"wait-timeout", 1, X_WAIT_TIMEOUT, "S", "longest blocking wait inside the job before it aborts (default 60)"},
    {"hostfile", 1, X_HOSTFILE, "FILE", "passed to mpirun --hostfile"},
    {"host", 1, X_HOST, "TYPE", "this host's catalog instance type (cpu: default host-NAME from smdplan bench; cuda: default an instance type of the GPU the run names)"},
    {"run-dir", 1, X_RUN_DIR, "DIR", "run directory to create (default smdplan-runs/TIME-PID)"},
    {"dry-run", 0, X_DRY_RUN, NULL, "print the mpirun command and write nothing"},
    {"emit", 1, X_EMIT, "slurm", "print an sbatch script that runs the plan (with --out FILE: write it)"},
    {"out", 1, X_OUT, "FILE", "with --emit: write the script to FILE"},
    {"force", 0, X_FORCE, NULL, "with --out: replace an existing file (never through a symbolic link)"},
    {"import", 1, X_IMPORT, "DIR", "record a run that another launcher ran, from its run directory (CONFIG.json, RESULT.json), with the options it was emitted with (the emitted slurm script does this itself)"},
    {"exit-status", 1, X_EXIT_STATUS, "N", "with --import: the launcher's exit status (default 0)"},
    {"help", 0, X_HELP, NULL, "this help"},
};
#define NXOPTS ((int)(sizeof xopts / sizeof xopts[0]))

/* Plan options that mean nothing to exec: refused rather than ignored. */
static const char *const refused[] = {"explain", "trace", "monte-carlo", "jitter", "straggler",
                                      "sim-threshold", "no-sim", "objective", "top",
                                      "max-instances", "tokens", NULL};
/* Plan options that name the model or the layout (not with --plan). */
static const char *const shape_opts[] = {
    "params", "arch", "family", "model", "layers", "hidden", "heads", "kv-heads", "head-dim",
    "sliding-window", "sliding-window-pattern", "ffn", "seq", "vocab", "instances", "tp", "pp",
    "partitions", "dp", "cp", "micro-batch", "microbatches", "active-microbatches", "schedule",
    "virtual-stages", "recompute", "recompute-group", "sharding", "sequence-parallel", "offload",
    "prescaled-batch", "placement", "global-batch", "batch-size", "framework", "precision", NULL};

typedef struct exec_opts {
    int64_t plan_id;
    int plan_rank;
    exec_train train;
    exec_scale scale;
    const char *scale_text;
    char data_kind[16];
    const char *data_path;
    const char *save_dir, *resume_dir;
    int save_every;
    double timeout_s, wait_timeout_s;
    int timeout_given;           /* --timeout (0: none); else the default
                                  * (exec_default_timeout_s) */
    int threads;
    const char *hostfile, *host_type, *run_dir, *emit, *out;
    int hostfile_slots;          /* the hostfile's largest slots=N, 0: none given */
    int dry_run, force;
    char device[8];              /* "cpu" or "cuda" */
    char transport[8];           /* "nccl", "mpi", or "" (chosen: exec_transport_choose) */
    int gpus_per_host;           /* 0: CUDA's count on this host */
    int min_lr_given;
    int framework_given, precision_given;
    int shape_opt_given;
    char shape_opt[32];
    const char *import_dir;      /* --import DIR: record that run, launch nothing */
    int exit_status, exit_status_given;
    /* the arguments that describe the run (all but --emit, --out, --force,
     * --dry-run, --run-dir): what the emitted script's --import repeats */
    const char *run_args[2 * ARGS_MAX];
    int nrun_args;
} exec_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan exec --plan ID [--scale K=N,...] [options]\n"
            "       smdplan exec [model and layout flags of smdplan plan] [options]\n\n"
            "Runs a plan for real: a GPT or Llama model trained over MPI ranks on this host's CPUs\n"
            "(or, with --device cuda, on its GPUs in bf16 over NCCL) with the plan's tensor, pipeline\n"
            "and data parallelism and the simulator's own pipeline schedule, measured and recorded\n"
            "beside the planner's prediction and the simulated step for the same layout on this\n"
            "host (its catalog entry: smdplan bench --write-catalog FILE, then --catalog FILE; on a\n"
            "GPU the catalog's instance type of that GPU, or --host TYPE, with the smdplan-cuda\n"
            "profile). The model and layout flags are the plan command's (see\n"
            "smdplan --help); without --plan or --instances the layout is the flags' on this host,\n"
            "the knobs not given being 1-way parallelism, micro-batch 1, 2 x pp microbatches, the\n"
            "interleaved (1F1B) schedule, no recompute, no sharding.\n");
    cli_print_opt_table(f, xopts, NXOPTS);
    fprintf(f,
            "\nAlso: --catalog FILE (more than once: later files override), --json (run_id, status,\n"
            "ranks, step_time_s, tokens_per_s, mfu, peak_memory_bytes, losses, predicted_step_s,\n"
            "simulated_step_s; with --dry-run: the command and the CONFIG.json it would write),\n"
            "--flash-attention on (the fused attention kernel, --device cuda), --db FILE, --no-record.\n"
            "\nExamples:\n"
            "  smdplan exec --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 512 --tp 2 --steps 20\n"
            "  smdplan --params 30B --instances 16xp4d                       # record 12, say\n"
            "  smdplan exec --plan 12 --scale layers=4,hidden=256,seq=128,vocab=512 --dry-run\n"
            "  smdplan exec --plan 12 --scale layers=4,hidden=256 --emit slurm --out job.sbatch\n"
            "  sbatch job.sbatch        # the job records its run (smdplan exec ... --import DIR)\n"
            "  smdplan exec --device cuda --layers 24 --hidden 2048 --heads 16 --seq 1024 --steps 20\n"
            "\nExit codes: 0 the run succeeded, 1 it failed (recorded with its error), 2 bad input;\n"
            "with --import: 0 the run was recorded (whatever it came to), 1 nothing was recorded,\n"
            "2 bad input (a RESULT.json that is not the run's, a directory already recorded).\n");
}

static const cli_opt *find_xopt(const char *name, size_t len)
{
    for (int i = 0; i < NXOPTS; i++)
        if (xopts[i].name && strlen(xopts[i].name) == len && !strncmp(xopts[i].name, name, len))
            return &xopts[i];
    return NULL;
}

static int in_list(const char *const *list, const char *name, size_t len)
{
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == len && !strncmp(list[i], name, len))
            return 1;
    return 0;
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out,
                        st_err *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi)
        return ST_RAISE(err, ST_EINVAL, "--%s '%s': allowed a number from %g to %g", opt, s, lo, hi);
    *out = v;
    return ST_OK;
}

static int parse_scale(const char *s, exec_scale *sc, st_err *err)
{
    memset(sc, 0, sizeof *sc);
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf || !*s)
        return ST_RAISE(err, ST_EINVAL, "--scale '%s': expected KEY=N,... with keys layers, hidden, "
                        "heads, kv_heads, ffn, seq, vocab", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return ST_RAISE(err, ST_EINVAL, "--scale '%s': '%s' is not KEY=N (keys: layers, hidden, "
                            "heads, kv_heads, ffn, seq, vocab)", s, tok);
        *eq = '\0';
        struct { const char *key; int64_t *dst; int64_t max; } keys[] = {
            {"layers", &sc->layers, PLAN_MAX_LAYERS}, {"hidden", &sc->hidden, PLAN_MAX_HIDDEN},
            {"heads", &sc->heads, PLAN_MAX_HEADS},    {"kv_heads", &sc->kv_heads, PLAN_MAX_HEADS},
            {"ffn", &sc->ffn, 16 * (int64_t)PLAN_MAX_HIDDEN}, {"seq", &sc->seq, PLAN_MAX_SEQ},
            {"vocab", &sc->vocab, PLAN_MAX_VOCAB}};
        int k = -1;
        for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++)
            if (!strcmp(tok, keys[i].key))
                k = i;
        if (k < 0)
            return ST_RAISE(err, ST_EINVAL, "--scale '%s': unknown key '%s'; allowed: layers, hidden, "
                            "heads, kv_heads, ffn, seq, vocab", s, tok);
        char what[48];
        snprintf(what, sizeof what, "--scale %s", tok);
        int rc = units_parse_int(eq + 1, what, 1, keys[k].max, keys[k].dst, err);
        if (rc)
            return rc;
    }
    return ST_OK;
}

static int apply_xopt(exec_opts *o, const cli_opt *d, const char *a, st_err *err)
{
    int64_t v;
    int rc;
    switch (d->id) {
    case X_PLAN:
        return units_parse_int(a, "--plan", 1, INT64_MAX / 2, &o->plan_id, err);
    case X_PLAN_RANK:
        rc = units_parse_int(a, "--plan-rank", 1, PLAN_TOPK_MAX, &v, err);
        o->plan_rank = (int)v;
        return rc;
    case X_STEPS:
        return units_parse_int(a, "--steps", 1, 100000000, &o->train.steps, err);
    case X_SCALE:
        o->scale_text = a;
        return parse_scale(a, &o->scale, err);
    case X_DATA:
        if (!strcmp(a, "synthetic")) {
            snprintf(o->data_kind, sizeof o->data_kind, "synthetic");
            o->data_path = NULL;
            return ST_OK;
        }
        if ((!strncmp(a, "text:", 5) || !strncmp(a, "tokens:", 7)) && strchr(a, ':')[1]) {
            snprintf(o->data_kind, sizeof o->data_kind, "%.*s", (int)(strchr(a, ':') - a), a);
            o->data_path = strchr(a, ':') + 1;
            return ST_OK;
        }
        return ST_RAISE(err, ST_EINVAL, "--data '%s': allowed synthetic, text:FILE, tokens:FILE", a);
    case X_SEED:
        rc = units_parse_int(a, "--seed", 0, INT64_MAX / 2, &v, err);
        o->train.seed = (uint64_t)v;
        return rc;
    case X_SAVE: o->save_dir = a; return ST_OK;
    case X_RESUME: o->resume_dir = a; return ST_OK;
    case X_SAVE_EVERY:
        rc = units_parse_int(a, "--save-every", 1, 100000000, &v, err);
        o->save_every = (int)v;
        return rc;
    case X_TIMEOUT:
        o->timeout_given = 1;
        return parse_double("timeout", a, 0, 1e7, &o->timeout_s, err);
    case X_WAIT_TIMEOUT: return parse_double("wait-timeout", a, 1, 1e6, &o->wait_timeout_s, err);
    case X_THREADS:
        rc = units_parse_int(a, "--threads", 1, 256, &v, err);
        o->threads = (int)v;
        return rc;
    case X_HOSTFILE: o->hostfile = a; return ST_OK;
    case X_HOST: o->host_type = a; return ST_OK;
    case X_RUN_DIR: o->run_dir = a; return ST_OK;
    case X_DRY_RUN: o->dry_run = 1; return ST_OK;
    case X_EMIT:
        if (strcmp(a, "slurm"))
            return ST_RAISE(err, ST_EINVAL, "--emit '%s': smdplan exec emits slurm", a);
        o->emit = a;
        return ST_OK;
    case X_OUT: o->out = a; return ST_OK;
    case X_FORCE: o->force = 1; return ST_OK;
    case X_IMPORT: o->import_dir = a; return ST_OK;
    case X_EXIT_STATUS:
        rc = units_parse_int(a, "--exit-status", 0, 255, &v, err);
        o->exit_status = (int)v;
        o->exit_status_given = 1;
        return rc;
    case X_DEVICE:
        if (strcmp(a, "cpu") && strcmp(a, "cuda"))
            return ST_RAISE(err, ST_EINVAL, "--device '%s': allowed cpu, cuda", a);
        snprintf(o->device, sizeof o->device, "%s", a);
        return ST_OK;
    case X_TRANSPORT:
        if (strcmp(a, "nccl") && strcmp(a, "mpi"))
            return ST_RAISE(err, ST_EINVAL, "--transport '%s': allowed nccl, mpi", a);
        snprintf(o->transport, sizeof o->transport, "%s", a);
        return ST_OK;
    case X_GPUS_PER_HOST:
        rc = units_parse_int(a, "--gpus-per-host", 1, 1024, &v, err);
        o->gpus_per_host = (int)v;
        return rc;
    case X_LR: return parse_double("lr", a, 0, 10, &o->train.lr, err);
    case X_MIN_LR:
        o->min_lr_given = 1;
        return parse_double("min-lr", a, 0, 10, &o->train.min_lr, err);
    case X_WARMUP:
        return units_parse_int(a, "--warmup-steps", 0, 100000000, &o->train.warmup_steps, err);
    case X_WEIGHT_DECAY: return parse_double("weight-decay", a, 0, 10, &o->train.weight_decay, err);
    case X_GRAD_CLIP: return parse_double("grad-clip", a, 0, 1e6, &o->train.grad_clip, err);
    default:
        return ST_RAISE(err, ST_EINTERNAL, "option --%s has no handler", d->name);
    }
}

/* Options that say how and where to launch, not what runs: the emitted
 * script's --import leaves them out. */
static int launch_only(int id)
{
    return id == X_EMIT || id == X_OUT || id == X_FORCE || id == X_DRY_RUN || id == X_RUN_DIR ||
           id == X_IMPORT || id == X_EXIT_STATUS;
}

static void keep_run_arg(exec_opts *o, const char *a)
{
    if (o->nrun_args < 2 * ARGS_MAX)
        o->run_args[o->nrun_args++] = a;
}

/* Split argv: exec's own options are applied here, the rest go to the
 * plan command's parser (pargv, with pargv[0] the command word). 0, 1 for
 * --help, or an exit code with the message printed. */
static int parse_exec_args(int argc, char **argv, exec_opts *o, char **pargv, int *pargc)
{
    st_err err = {0};
    int n = 0;
    pargv[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int first = i;
        if (!strcmp(a, "-h")) {
            usage(stdout);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0 || !a[2]) {
            pargv[n++] = argv[i];
            keep_run_arg(o, argv[i]);
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (in_list(refused, name, len)) {
            fprintf(stderr, "smdplan: exec: --%.*s is a plan option smdplan exec does not take "
                            "(see smdplan exec --help)\n", (int)len, name);
            return 2;
        }
        if (in_list(shape_opts, name, len) && !o->shape_opt_given) {
            o->shape_opt_given = 1;
            snprintf(o->shape_opt, sizeof o->shape_opt, "%.*s", (int)len, name);
        }
        if (len == 9 && !strncmp(name, "framework", 9))
            o->framework_given = 1;
        if (len == 9 && !strncmp(name, "precision", 9))
            o->precision_given = 1;
        const cli_opt *d = find_xopt(name, len);
        if (!d) {
            pargv[n++] = argv[i];
            keep_run_arg(o, argv[i]);
            continue;
        }
        if (d->id == X_HELP) {
            usage(stdout);
            return 1;
        }
        const char *val = NULL;
        if (d->has_arg) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else {
                fprintf(stderr, "smdplan: exec: --%s needs a value (see smdplan exec --help)\n",
                        d->name);
                return 2;
            }
        } else if (eq) {
            fprintf(stderr, "smdplan: exec: --%s takes no value\n", d->name);
            return 2;
        }
        if (apply_xopt(o, d, val, &err) != ST_OK)
            return cli_fail(&err);
        if (!launch_only(d->id))
            for (int k = first; k <= i; k++)
                keep_run_arg(o, argv[k]);
    }
    if (o->nrun_args >= 2 * ARGS_MAX) {
        fprintf(stderr, "smdplan: exec: more than %d arguments\n", 2 * ARGS_MAX - 1);
        return 2;
    }
    pargv[n] = NULL;
    *pargc = n;
    return 0;
}

/* ---- the model and the layout (as the executor runs them: exec/exec_layout.h) ---- */

/* The layout and model of recorded plan record o->plan_id (its plan of
 * rank o->plan_rank), and where they came from. */
static int from_record(const exec_opts *o, const char *db_path, exec_job *j, st_err *err)
{
    db_plan pick;
    int rc = db_plan_pick(db_path, o->plan_id, o->plan_rank, &pick, &j->model_full, err);
    if (rc != ST_OK)
        return rc;
    j->layout = pick.layout;
    j->plan_nodes = pick.nodes;
    j->plan_gpus = pick.gpus;
    snprintf(j->plan_instance, sizeof j->plan_instance, "%s", pick.instance_type);
    snprintf(j->source, sizeof j->source, "plan record %lld (%s%s%d on %d x %s)",
             (long long)o->plan_id, pick.role, pick.rank ? " #" : "", pick.rank ? pick.rank : 0,
             pick.nodes, pick.instance_type);
    return ST_OK;
}

/* ---- the prediction on this host (exec/exec_predict.c) ---- */

/* A CPU run's prediction on --host TYPE, else on the entry smdplan bench
 * gives this host for the threads per rank. */
static void predict_on_host(const exec_opts *o, const cli_plan_ctx *x, const exec_job *j,
                            exec_pred *h)
{
    memset(h, 0, sizeof *h);
    int threads = o->threads > 0 ? o->threads : 1;
    char gpu[64];
    if (o->host_type)
        snprintf(h->type, sizeof h->type, "%s", o->host_type);
    else
        cli_host_entry_names(threads, h->type, sizeof h->type, gpu, sizeof gpu);
    exec_predict_host(&x->cat, j, h);
}

/* The prediction of a cuda run (exec_here_predict_gpu), of the device desc
 * names (RESULT.json's device_name; NULL before the run). gpus_used: the
 * GPUs the ranks run on (fewer than the ranks when they share). */
static void predict_on_gpu(const exec_opts *o, const cli_plan_ctx *x, const exec_job *j,
                           const char *desc, int gpus_used, exec_pred *h)
{
    char hn[32], own_name[64];
    cli_host_name(hn, sizeof hn);
    snprintf(own_name, sizeof own_name, "host-%s-cuda", hn);
    exec_here_gpu w = {
        .host_type = o->host_type, .plan_inst = x->have_cluster ? x->cluster.inst : NULL,
        .own_name = own_name, .device_desc = desc,
        .device_gpu = desc && *desc ? cli_catalog_gpu_of_device(&x->cat, desc) : -1,
        .gpus_used = gpus_used,
    };
    exec_here_predict_gpu(&x->cat, &w, j, h);
}

/* ---- --emit slurm ---- */

/* The sbatch script of the job (exec_here_slurm_script; NULL and err when
 * out of memory). */
static char *slurm_script(const exec_opts *o, const exec_job *j, const launch_cmd *c,
                          const char *config_text, const exec_gpu_hosts *g, st_err *err)
{
    char self[CLI_PATH_MAX], cwd[CLI_PATH_MAX];
    cli_self_path(self, sizeof self);
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    exec_here_slurm hs = {
        .j = j, .cmd = c, .config_text = config_text, .gpus = g, .threads = o->threads,
        .timeout_s = o->timeout_s, .smdplan = self, .cwd = cwd, .run_args = o->run_args,
        .nrun_args = o->nrun_args,
    };
    return exec_here_slurm_script(&hs, err);
}

static void print_layout(FILE *f, const plan_layout *l, int ranks)
{
    fprintf(f, "layout:  tp %d, pp %d, dp %d (%d ranks), micro-batch %d x %d microbatches, %s",
            l->tp, l->pp, l->dp, ranks, l->micro_batch, l->microbatches,
            plan_layout_schedule_label(l));
    if (l->schedule == PLAN_SCHED_VIRTUAL)
        fprintf(f, " x %d virtual stages", l->virtual_stages);
    fprintf(f, ", recompute %s, sharding %s%s, placement %s\n", plan_recompute_name(l->recompute),
            plan_sharding_name(l->sharding), l->sequence_parallel ? ", sequence parallel" : "",
            l->placement);
}

/* The job's model and layout: a recorded plan's, the planner's best on the
 * cluster named, or the layout flags'; then as the executor runs it. */
static int job_layout(const exec_opts *o, const cli_plan_opts *po, const cli_plan_ctx *x,
                      int cuda, exec_job *j, st_err *err)
{
    int rc;
    if (o->plan_id)
        rc = from_record(o, po->db_path, j, err);
    else if (x->have_cluster)
        rc = exec_job_search(&x->model, &x->cluster, &po->cfg, j, err);
    else
        rc = exec_job_from_config(&x->model, &po->cfg, cuda, j, err);
    if (rc == ST_OK)
        rc = exec_job_finish(j, cuda, po->cfg.flash_attention, err);
    return rc;
}

/* The options' own consistency, and the files they name: before anything
 * is resolved, launched or written. */
static int check_exec_opts(exec_opts *o, const plan_config *cfg, int cuda, st_err *err)
{
    if (!o->min_lr_given)
        o->train.min_lr = o->train.lr * 0.1;
    if (o->train.min_lr > o->train.lr)
        ST_RAISE(err, ST_EINVAL, "--min-lr %g: above --lr %g", o->train.min_lr, o->train.lr);
    else if (o->train.steps <= o->train.warmup_steps_unmeasured)
        ST_RAISE(err, ST_EINVAL, "--steps %lld: the first %lld step%s not measured; give at "
                 "least %lld", (long long)o->train.steps,
                 (long long)o->train.warmup_steps_unmeasured,
                 o->train.warmup_steps_unmeasured == 1 ? " is" : "s are",
                 (long long)o->train.warmup_steps_unmeasured + 1);
    else if (o->save_every && !o->save_dir)
        ST_RAISE(err, ST_EINVAL, "--save-every %d: needs --save DIR", o->save_every);
    else if (o->out && !o->emit)
        ST_RAISE(err, ST_EINVAL, "--out %s: only with --emit slurm", o->out);
    else if (o->emit && o->dry_run)
        ST_RAISE(err, ST_EINVAL, "--emit and --dry-run: choose one");
    else if (o->import_dir && (o->emit || o->dry_run))
        ST_RAISE(err, ST_EINVAL, "--import %s: records a run that has run; not with --%s",
                 o->import_dir, o->emit ? "emit" : "dry-run");
    else if (o->import_dir && o->run_dir)
        ST_RAISE(err, ST_EINVAL, "--run-dir %s: with --import the run directory is %s",
                 o->run_dir, o->import_dir);
    else if (o->exit_status_given && !o->import_dir)
        ST_RAISE(err, ST_EINVAL, "--exit-status %d: only with --import", o->exit_status);
    else if (o->plan_id && o->shape_opt_given)
        ST_RAISE(err, ST_EINVAL, "--%s: the model and layout come from plan record %lld; shrink "
                 "the model with --scale", o->shape_opt, (long long)o->plan_id);
    else if (o->plan_rank && !o->plan_id)
        ST_RAISE(err, ST_EINVAL, "--plan-rank %d: only with --plan ID", o->plan_rank);
    else if (o->framework_given &&
             plan_framework_get(cfg->framework)->family != PLAN_FW_SMDPLAN)
        ST_RAISE(err, ST_EINVAL, "--framework %s: smdplan exec runs the smdplan executor "
                 "(--framework smdplan)", plan_framework_get(cfg->framework)->key);
    else if (o->framework_given && cfg->framework != plan_framework_match("smdplan", 0) &&
             cfg->framework != exec_layout_profile(cuda))
        ST_RAISE(err, ST_EINVAL, "--framework %s: the executor's profile on the %s device is "
                 "%s", plan_framework_get(cfg->framework)->key, o->device,
                 plan_framework_get(exec_layout_profile(cuda))->key);
    else if (o->precision_given && !cuda && cfg->precision != PLAN_PREC_FP32)
        ST_RAISE(err, ST_EINVAL, "--precision %s: the CPU device computes in fp32 (bf16 with "
                 "--device cuda)", plan_precision_name((plan_precision)cfg->precision));
    else if (o->precision_given && cuda && cfg->precision != PLAN_PREC_BF16)
        ST_RAISE(err, ST_EINVAL, "--precision %s: the CUDA device computes in bf16 (with fp32 "
                 "master weights and optimizer state)",
                 plan_precision_name((plan_precision)cfg->precision));
    else if (o->transport[0] && !cuda)
        ST_RAISE(err, ST_EINVAL, "--transport %s: only with --device cuda (the CPU device runs "
                 "over mpi)", o->transport);
    else if (o->gpus_per_host && !cuda)
        ST_RAISE(err, ST_EINVAL, "--gpus-per-host %d: only with --device cuda",
                 o->gpus_per_host);
    else if (cfg->flash_attention > 0 && !cuda)
        ST_RAISE(err, ST_EINVAL, "--flash-attention on: the CPU device has no fused attention "
                 "kernel (it runs with --device cuda)");
    if (err->code)
        return err->code;
    struct stat sb;
    if (o->data_path && (stat(o->data_path, &sb) != 0 || !S_ISREG(sb.st_mode)))
        return ST_RAISE(err, ST_EINVAL, "--data %s:%s: no such file", o->data_kind, o->data_path);
    if (o->resume_dir && (stat(o->resume_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        return ST_RAISE(err, ST_EINVAL, "--resume %s: no such directory", o->resume_dir);
    if (o->hostfile) { /* a regular file (a FIFO would block mpirun), its slots */
        launch_hostfile hf;
        int rc = launch_hostfile_read(o->hostfile, &hf, err);
        if (rc != ST_OK)
            return rc;
        o->hostfile_slots = hf.most_slots;
    }
    return ST_OK;
}

/* ---- the command, phase by phase ---- */

/* What the phases of smdplan exec hand on: the options, the job they
 * describe, and what is made for it. */
typedef struct exec_cmd {
    exec_opts o;
    cli_plan_opts po;
    int cuda;
    cli_plan_ctx x;
    int have_x;                  /* x resolved: freed at the end */
    exec_job j;
    exec_gpu_hosts gh;
    char transport[8];
    char *config_text;           /* CONFIG.json */
    char rank_prog[CLI_PATH_MAX];
    char run_dir[CLI_PATH_MAX];
    launch_cmd *cmd;
    char *cmd_text;              /* the launch command as one shell line */
} exec_cmd;

static void exec_cmd_free(exec_cmd *s)
{
    free(s->config_text);
    free(s->cmd);
    free(s->cmd_text);
    if (s->have_x)
        cli_plan_ctx_free(&s->x);
}

/* Parse and check the options: -1 to go on, else the exit code (the
 * message printed). */
static int parse_cmd(int argc, char **argv, exec_cmd *s, st_err *err)
{
    exec_opts *o = &s->o;
    exec_config defaults;
    exec_config_default(&defaults);
    o->train = defaults.train;
    snprintf(o->data_kind, sizeof o->data_kind, "synthetic");
    o->wait_timeout_s = DEFAULT_WAIT_TIMEOUT_S;
    o->threads = 1;
    char **pargv = calloc((size_t)argc + 2, sizeof *pargv);
    if (!pargv)
        return 1;
    int pargc = 0;
    int ex = parse_exec_args(argc, argv, o, pargv, &pargc);
    if (ex) {
        free(pargv);
        return ex == 1 ? 0 : ex;
    }
    cli_plan_opts_init(&s->po, 0);
    ex = cli_plan_parse(pargc, pargv, &s->po, err);
    free(pargv);
    if (ex)
        return ex == 1 ? 0 : ex;
    if (s->po.emit) {
        fprintf(stderr, "smdplan: exec: --emit %s: smdplan exec emits slurm\n", s->po.emit);
        return 2;
    }
    if (!o->device[0])
        snprintf(o->device, sizeof o->device, "cpu");
    s->cuda = !strcmp(o->device, "cuda");
    /* a device this build lacks: one line, before anything else is looked at */
    if (s->cuda && !exec_features_built().cuda) {
        fprintf(stderr, "smdplan: exec: --device cuda: this build has no CUDA device (build "
                        "features: %s); configure with CUDA (-DWITH_CUDA=ON)\n",
                exec_features_str());
        return 2;
    }
    if (check_exec_opts(o, &s->po.cfg, s->cuda, err) != ST_OK)
        return cli_fail(err);
    if (o->import_dir && (s->po.no_record || db_record_disabled())) {
        ST_RAISE(err, ST_EINVAL, "--import %s: records the run; not with %s", o->import_dir,
                 s->po.no_record ? "--no-record" : "SMDPLAN_NO_RECORD");
        return cli_fail(err);
    }
    return -1;
}

/* The model and the layout, the GPUs and the transport between them, and
 * the model as --scale reduces it, checked against the layout. */
static int resolve_job(exec_cmd *s, st_err *err)
{
    const exec_opts *o = &s->o;
    exec_job *j = &s->j;
    exec_gpu_hosts *gh = &s->gh;
    s->po.cfg.framework = exec_layout_profile(s->cuda);
    if (!o->precision_given)
        s->po.cfg.precision = s->cuda ? PLAN_PREC_BF16 : PLAN_PREC_FP32;
    int rc = cli_plan_resolve(&s->po, &s->x, o->plan_id == 0, err);
    if (rc != ST_OK)
        return rc;
    s->have_x = 1;
    rc = job_layout(o, &s->po, &s->x, s->cuda, j, err);
    /* the GPU: where the ranks find theirs, and the transport between them */
    snprintf(s->transport, sizeof s->transport, "mpi");
    if (rc == ST_OK && s->cuda) {
        exec_gpu_hosts_of(&s->x.cat, j, o->gpus_per_host, o->emit != NULL,
                          o->hostfile != NULL, o->hostfile_slots, gh);
        rc = exec_transport_choose(gh, s->cuda, o->transport, s->transport, sizeof s->transport,
                                   err);
        /* staged through host memory, a bucket progresses only inside MPI's
         * calls: no overlap unless asked (the smdplan profile's reason) */
        if (rc == ST_OK && !strcmp(s->transport, "mpi") && s->po.cfg.dp_overlap < 0)
            j->layout.dp_overlap = 0;
        if (rc == ST_OK && o->host_type && !plan_catalog_find(&s->x.cat, o->host_type))
            rc = ST_RAISE(err, ST_EINVAL, "--host %s: not an instance type of the catalog (see "
                          "smdplan catalog; add one with --catalog FILE)", o->host_type);
        if (rc == ST_OK && o->emit && gh->gpus == 0)
            rc = ST_RAISE(err, ST_EINVAL, "--emit slurm --device cuda: the GPUs of a node are "
                          "not known here (no plan cluster, none visible); give --gpus-per-host N");
        if (rc == ST_OK && gh->visible == 0 && !o->dry_run && !o->emit && !o->import_dir)
            rc = gh->unseen.code
                     ? ST_RAISE(err, gh->unseen.code, "%s; nothing launched", gh->unseen.msg)
                     : ST_RAISE(err, ST_EINVAL, "--device cuda: CUDA sees no GPU on this host; "
                                "nothing launched (--dry-run or --emit slurm, with "
                                "--gpus-per-host N, prepare a run for another host)");
    }
    if (rc == ST_OK && o->scale_text)
        rc = exec_model_scale(&o->scale, &j->layout, &j->model, j->scaled, sizeof j->scaled,
                              err);
    if (rc == ST_OK)
        rc = exec_model_check(&j->model, &j->layout, o->data_kind, err);
    return rc;
}

/* CONFIG.json, checked as the rank program will read it (exec_job_config).
 * -1 to go on, else the exit code. */
static int make_config(exec_cmd *s, st_err *err)
{
    const exec_opts *o = &s->o;
    exec_job_run r = {
        .train = &o->train, .data_kind = o->data_kind, .data_path = o->data_path,
        .save_dir = o->save_dir, .save_every = o->save_every, .resume_dir = o->resume_dir,
        .threads = o->threads, .wait_timeout_s = o->wait_timeout_s, .device = o->device,
        .transport = s->transport,
    };
    int rc = exec_job_config(&s->j, &r, &s->config_text, err);
    /* the modules the ranks will open (exec_module.h), found here without
     * loading them: one missing is one line before anything launches
     * rather than one from every rank after */
    if (rc == ST_OK && !o->dry_run && !o->emit && !o->import_dir) {
        st_err why = {0};
        if (exec_dev_present(o->device, &why) != ST_OK ||
            exec_comm_present(s->transport, &why) != ST_OK)
            rc = ST_RAISE(err, why.code, "%s; nothing launched", why.msg);
    }
    return rc != ST_OK ? cli_fail(err) : -1;
}

/* The rank program, the run directory and the launch command. -1 to go
 * on, else the exit code. */
static int make_command(exec_cmd *s, st_err *err)
{
    const exec_opts *o = &s->o;
    cli_find_program(EXEC_RANK_PROGRAM, 1, s->rank_prog, sizeof s->rank_prog);
    if (o->import_dir)
        exec_path_absolute(o->import_dir, s->run_dir, sizeof s->run_dir);
    else if (o->run_dir)
        snprintf(s->run_dir, sizeof s->run_dir, "%s", o->run_dir);
    else
        exec_run_dir_default(s->run_dir, sizeof s->run_dir);
    if (o->import_dir && exec_import_check(s->run_dir, s->config_text, err) != ST_OK)
        return cli_fail(err);
    s->cmd = calloc(1, sizeof *s->cmd);
    s->cmd_text = malloc(LAUNCH_CMD_TEXT_MAX);
    if (!s->config_text || !s->cmd || !s->cmd_text)
        return 1;
    exec_job_command(&s->j, o->threads, o->hostfile,
                     s->rank_prog[0] ? s->rank_prog : EXEC_RANK_PROGRAM, s->run_dir, s->cmd);
    launch_cmd_line(s->cmd, s->cmd_text, LAUNCH_CMD_TEXT_MAX);
    if (s->cmd->cut) { /* mpirun would be given a path cut short */
        ST_RAISE(err, ST_EINVAL, "the launch command: an argument (--run-dir, --hostfile or the "
                 "rank program's path) is longer than %d bytes; give a shorter path",
                 (int)sizeof s->cmd->store[0] - 1);
        return cli_fail(err);
    }
    return -1;
}

/* --dry-run (the command, with --json the CONFIG.json it would write) and
 * --emit slurm: print and write nothing else. The exit code. */
static int print_prepared(const exec_cmd *s, st_err *err)
{
    const exec_opts *o = &s->o;
    int ex = 0;
    if (o->dry_run && s->po.json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "command", s->cmd_text);
        cJSON_AddStringToObject(root, "run_dir", s->run_dir);
        cJSON_AddNumberToObject(root, "ranks", s->j.ranks);
        cJSON_AddStringToObject(root, "device", o->device);
        cJSON_AddStringToObject(root, "transport", s->transport);
        if (s->cuda) {
            cJSON_AddNumberToObject(root, "gpus_per_host", s->gh.gpus);
            cJSON_AddNumberToObject(root, "ranks_per_host", s->gh.ranks_per_host);
        }
        cJSON *conf = cJSON_Parse(s->config_text);
        if (conf)
            cJSON_AddItemToObject(root, "config", conf);
        char *text = cJSON_Print(root);
        cJSON_Delete(root);
        if (text)
            printf("%s\n", text);
        else
            ex = 1;
        free(text);
    } else if (o->dry_run) {
        printf("%s\n", s->cmd_text);
    } else {
        char *script = slurm_script(o, &s->j, s->cmd, s->config_text, s->cuda ? &s->gh : NULL,
                                    err);
        if (!script)
            ex = cli_fail(err);
        else if (o->out) {
            if (cli_write_file(o->out, "--out", script, o->force, err) != ST_OK)
                ex = cli_fail(err);
        } else
            fputs(script, stdout);
        free(script);
    }
    return ex;
}

/* What the run is before it starts: the model, where the layout came
 * from, the layout, the device, the prediction, the command and its limit. */
static void print_start(const exec_cmd *s, const exec_pred *h, int gpus_used,
                        const char *limit_why)
{
    const exec_job *j = &s->j;
    cli_print_model(stdout, &j->model);
    if (j->scaled[0])
        printf("scaled:  %s (from %s)\n", j->scaled, j->model_full.name);
    printf("from:    %s\n", j->source);
    print_layout(stdout, &j->layout, j->ranks);
    if (s->cuda)
        printf("device:  cuda (bf16, fp32 master weights)%s over %s%s, %d GPU%s\n",
               j->layout.flash_attention ? ", fused attention" : "", s->transport,
               !strcmp(s->transport, "mpi") ? " (staged through host memory)" : "", gpus_used,
               gpus_used == 1 ? "" : "s");
    if (h->have_est)
        printf("predicted on %s: %.4f s/step, simulated %.4f s/step\n", h->type,
               h->est.time.step_s, h->simulated_s);
    else
        printf("note:    %s\n", h->note);
    if (s->o.import_dir)
        printf("import:  %s (run by another launcher, exit status %d)\n", s->run_dir,
               s->o.exit_status);
    else
        printf("run:     %s\n", s->cmd_text);
    if (!s->o.import_dir && s->o.timeout_s > 0)
        printf("limit:   %.0f s (%s)\n", s->o.timeout_s, limit_why);
    fflush(stdout);
}

/* Before the launch: the memory the run takes of this host (refused when
 * it does not fit, before anything is made), the prediction, the time
 * limit, the run directory and its CONFIG.json. -1 to go on, else the
 * exit code. */
static int prepare_run(exec_cmd *s, exec_pred *h, int gpus_used, char *limit_why, size_t n,
                       st_err *err)
{
    exec_opts *o = &s->o;
    const exec_job *j = &s->j;
    if (!o->import_dir) {
        int per_host = s->cuda ? s->gh.ranks_per_host
                       : o->hostfile_slots > 0 && o->hostfile_slots < j->ranks ? o->hostfile_slots
                                                                               : j->ranks;
        int per_gpu = s->cuda && s->gh.gpus > 0
                          ? (s->gh.ranks_per_host + s->gh.gpus - 1) / s->gh.gpus
                          : 1;
        if (exec_memory_check(j, s->cuda, per_host, per_gpu, err) != ST_OK)
            return cli_fail(err);
    }
    if (s->cuda)
        predict_on_gpu(o, &s->x, j, NULL, gpus_used, h);
    else
        predict_on_host(o, &s->x, j, h);
    if (!o->import_dir && !o->timeout_given)
        o->timeout_s = exec_default_timeout_s(j, h, o->train.steps, limit_why, n);
    if (!o->import_dir && exec_run_dir_make(s->run_dir, err) != ST_OK)
        return cli_fail(err);
    char path[CLI_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/CONFIG.json", s->run_dir);
    st_err werr = {0};
    if (!o->import_dir &&
        cli_write_file(path, "run directory", s->config_text, 0, &werr) != ST_OK) {
        /* nothing ran, so there is no run to record: the error says so, and
         * the directory made above (empty: the write left nothing) goes */
        (void)rmdir(s->run_dir);
        ST_RAISE(err, werr.code, "%s; nothing launched or recorded", werr.msg);
        return cli_fail(err);
    }
    return -1;
}

/* Launch the job (or, with --import, take what its launcher said), read
 * RESULT.json, judge, record and print. The exit code. */
static int run_job(exec_cmd *s, st_err *err)
{
    exec_opts *o = &s->o;
    const exec_job *j = &s->j;
    exec_pred *h = calloc(1, sizeof *h);
    if (!h)
        return 1;
    /* the GPUs the ranks run on: theirs, or the ones they share */
    int gpus_used = s->cuda && !o->hostfile && s->gh.gpus < j->ranks ? s->gh.gpus : j->ranks;
    char limit_why[256] = "--timeout";
    int ex = prepare_run(s, h, gpus_used, limit_why, sizeof limit_why, err);
    if (ex >= 0) {
        free(h);
        return ex;
    }
    if (!s->po.json)
        print_start(s, h, gpus_used, limit_why);
    char out_log[CLI_PATH_MAX + 32], err_log[CLI_PATH_MAX + 32];
    snprintf(out_log, sizeof out_log, "%s/mpirun.out", s->run_dir);
    snprintf(err_log, sizeof err_log, "%s/mpirun.err", s->run_dir);
    launch_job L = {s->cmd->argv, s->cmd->env, o->timeout_s,
                    !s->po.json && isatty(STDOUT_FILENO) ? stdout : NULL, out_log, err_log};
    launch_job_result lr;
    if (o->import_dir) { /* it has run: what the launcher said of it */
        memset(&lr, 0, sizeof lr);
        lr.exited = 1;
        lr.exit_status = o->exit_status;
        lr.wall_s = NAN;
    } else if (launch_job_run(&L, &lr, err) != ST_OK) {
        free(h);
        return cli_fail(err);
    }
    exec_result res;
    exec_result_init(&res);
    st_err rerr = {0};
    int have_result = exec_result_load(s->run_dir, j, &o->train, &res, &rerr);
    if (o->import_dir && rerr.code) { /* a RESULT.json that is not this run's: nothing recorded */
        ST_RAISE(err, rerr.code == ST_ENOMEM ? ST_ENOMEM : ST_EINVAL, "--import %s: %s; "
                 "nothing recorded", s->run_dir, rerr.msg);
        free(h);
        return cli_fail(err);
    }
    /* a GPU named only by the run: its catalog entry, prediction and peak now */
    if (s->cuda && !h->have_entry && have_result)
        predict_on_gpu(o, &s->x, j, res.device_name, gpus_used, h);
    exec_outcome oc;
    exec_outcome_judge(o->timeout_s, &lr, have_result, &res, h, &oc);
    /* a RESULT.json that could not be read, or is not this run's: that is
     * the error, unless the launcher said something of its own */
    if (!have_result && rerr.code && (!oc.error[0] || (lr.exited && lr.exit_status == 0)))
        snprintf(oc.error, sizeof oc.error, "%s", rerr.msg);

    char host[64];
    cli_host_name(host, sizeof host);
    rec_ctx rx = {j, h, &res, have_result, &oc, s->cmd_text, s->run_dir, s->config_text,
                  have_result && res.host[0] ? res.host : host, lr.exit_status, o->plan_id,
                  o->threads, o->device, s->transport, 0, o->import_dir ? 0 : o->timeout_s};
    int64_t run_id = 0;
    /* an import claims the directory first: of two at once, one records */
    int mark_fd = -1;
    if (o->import_dir && exec_import_claim(s->run_dir, &mark_fd, err) != ST_OK) {
        ex = cli_fail(err);
        if (have_result)
            exec_result_free(&res);
        free(h);
        return ex;
    }
    if (cli_record(s->po.db_path, s->po.no_record, cli_exec__record_run, &rx))
        run_id = rx.run_id;
    rx.run_id = run_id; /* 0 unless the record was committed */
    st_err merr = {0};
    if (o->import_dir && exec_import_finish(s->run_dir, mark_fd, run_id, &merr) != ST_OK)
        fprintf(stderr, "smdplan: exec: %s\n", merr.msg);

    if (s->po.json)
        cli_exec__print_json(&rx, lr.wall_s);
    else
        cli_exec__print_text(&rx, s->cuda);
    ex = !strcmp(oc.status, "ok") ? 0 : oc.bad_config ? 2 : 1;
    if (o->import_dir) /* whether it was recorded (cli_record said why not); the run's own
                        * status is the script's exit status */
        ex = run_id > 0 ? 0 : 1;
    if (have_result)
        exec_result_free(&res);
    free(h);
    return ex;
}

int cli_exec_cmd(int argc, char **argv)
{
    exec_cmd s;
    memset(&s, 0, sizeof s);
    st_err err = {0};
    int ex = parse_cmd(argc, argv, &s, &err);
    if (ex >= 0)
        return ex;
    if (resolve_job(&s, &err) != ST_OK)
        ex = cli_fail(&err);
    if (ex < 0)
        ex = make_config(&s, &err);
    if (ex < 0)
        ex = make_command(&s, &err);
    if (ex < 0 && (s.o.dry_run || s.o.emit))
        ex = print_prepared(&s, &err);
    if (ex < 0 && !s.rank_prog[0] && !s.o.import_dir) {
        ST_RAISE(&err, ST_ENOENT, "the rank program %s is neither next to smdplan nor on PATH "
                 "(build it: cmake --build build)", EXEC_RANK_PROGRAM);
        cli_fail(&err);
        ex = 1; /* a build without it, not bad input */
    }
    if (ex < 0)
        ex = run_job(&s, &err);
    exec_cmd_free(&s);
    return ex;
}
