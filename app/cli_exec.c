/*
 * cli_exec.c: `smdplan exec`, running a plan for real on this host.
 *
 *   smdplan exec --plan ID [--plan-rank K] [--scale layers=4,hidden=256,...] [options]
 *   smdplan exec --layers 4 --hidden 256 --heads 4 --tp 2 --pp 2 [layout flags] [options]
 *   smdplan exec --params 1.3B --instances 2xp4d [layout flags] --scale ... [options]
 *
 * The layout comes from a recorded plan (--plan ID: a record of `smdplan
 * plan`, its plan of rank K, read here from the database), from the
 * planner's own search on --instances, or from the layout flags alone on
 * this host. The model may be shrunk with --scale keeping the layout, as
 * SageMaker's model-parallel guide advises ("validate a reduced model
 * before renting the cluster").
 *
 * Here: the options (exec's own into an exec_request, exec/exec_request.h;
 * the rest by the plan command's parser), what only the command knows
 * (this host's name, the rank program, this program's path, the
 * database), the printing, and the record of the run. The run itself,
 * phase by phase, is exec/'s (exec/exec_prep.h).
 *
 * --dry-run prints the exact command and writes nothing; --emit slurm
 * prints (or --out writes) an sbatch script that runs the same command and
 * then records the run itself: its last step is this command again, with
 * --import RUN_DIR --exit-status S, which checks that RUN_DIR's CONFIG.json
 * is the run the options describe, reads RESULT.json, predicts and records
 * as after a launch, and marks RUN_DIR recorded (a second import is
 * refused).
 * Exit codes: 0 the run succeeded, 1 it failed (recorded with the error),
 * 2 bad input (nothing launched), or the rank program refused the config;
 * with --import, 0 recorded, 1 nothing recorded, 2 bad input.
 */
#include "app/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "data/data_json.h"
#include "data/db_lookup.h"
#include "exec/exec_bench_here.h"
#include "exec/exec_layout.h"
#include "exec/exec_prep.h"
#include "common/outfile.h"
#include "exec/exec_program.h"
#include "planner/plan_host_names.h"
#include "reports/rpt_plan.h"

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
    "virtual-stages", "recompute", "recompute-group", "recompute-layers", "remat-policy",
    "sharding", "sequence-parallel", "offload",
    "prescaled-batch", "placement", "global-batch", "batch-size", "framework", "precision", NULL};

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

static int apply_xopt(exec_request *o, const cli_opt *d, const char *a, st_err *err)
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
        return exec_scale_parse(a, &o->scale, err);
    case X_DATA: return exec_request_data(o, a, err);
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

static void keep_run_arg(exec_request *o, const char *a)
{
    if (o->nrun_args < EXEC_REQUEST_ARGS_MAX)
        o->run_args[o->nrun_args++] = a;
}

/* Split argv: exec's own options are applied here, the rest go to the
 * plan command's parser (pargv, with pargv[0] the command word). 0, 1 for
 * --help, or an exit code with the message printed. */
static int parse_exec_args(int argc, char **argv, exec_request *o, char **pargv, int *pargc)
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
    if (o->nrun_args >= EXEC_REQUEST_ARGS_MAX) {
        fprintf(stderr, "smdplan: exec: more than %d arguments\n", EXEC_REQUEST_ARGS_MAX - 1);
        return 2;
    }
    pargv[n] = NULL;
    *pargc = n;
    return 0;
}

/* ---- the command, phase by phase (the run's phases: exec/exec_prep.h) ---- */

/* What the phases of smdplan exec hand on: the options, the plan's inputs
 * and the run prepared from them. */
typedef struct exec_cmd {
    exec_request o;
    cli_plan_opts po;
    cli_plan_ctx x;
    int have_x;                  /* x resolved: freed at the end */
    exec_prep p;
    char rank_prog[CLI_PATH_MAX];
} exec_cmd;

/* Parse and check the options: -1 to go on, else the exit code (the
 * message printed). */
static int parse_cmd(int argc, char **argv, exec_cmd *s, st_err *err)
{
    exec_request *o = &s->o;
    exec_request_default(o);
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
    /* a device this build lacks: one line, before anything else is looked at */
    if (!strcmp(o->device, "cuda") && !exec_features_built().cuda) {
        fprintf(stderr, "smdplan: exec: --device cuda: this build has no CUDA device (build "
                        "features: %s); configure with CUDA (-DWITH_CUDA=ON)\n",
                exec_features_str());
        return 2;
    }
    if (exec_request_check(o, &s->po.cfg, err) != ST_OK)
        return cli_fail(err);
    if (o->import_dir && (s->po.no_record || db_record_disabled())) {
        ST_RAISE(err, ST_EINVAL, "--import %s: records the run; not with %s", o->import_dir,
                 s->po.no_record ? "--no-record" : "SMDPLAN_NO_RECORD");
        return cli_fail(err);
    }
    char host[64], entry[64], gpu[64];
    char short_host[PLAN_HOST_SHORT_MAX]; /* the entry's names: smdplan bench's */
    exec_bench_host_name(NULL, 0, host, sizeof host);
    exec_bench_host_name(NULL, 0, short_host, sizeof short_host);
    plan_host_cpu_names(short_host, NULL, o->threads > 0 ? o->threads : 1, entry, sizeof entry,
                        gpu, sizeof gpu);
    exec_prep_init(&s->p, o, host, entry);
    return -1;
}

/* The layout and model of recorded plan record o->plan_id (its plan of
 * rank o->plan_rank), and where they came from. */
static int from_record(const exec_request *o, const char *db_path, exec_job *j, st_err *err)
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

/* The plan's inputs (the catalog, the model, the cluster) under the
 * device's profile and precision, and the job: a recorded plan's, or the
 * plan options' (exec_prep_job). */
static int resolve_job(exec_cmd *s, st_err *err)
{
    const exec_request *o = &s->o;
    s->po.cfg.framework = exec_layout_profile(s->p.cuda);
    if (!o->precision_given)
        s->po.cfg.precision = s->p.cuda ? PLAN_PREC_BF16 : PLAN_PREC_FP32;
    int rc = cli_plan_resolve(&s->po, &s->x, o->plan_id == 0, err);
    if (rc != ST_OK)
        return rc;
    s->have_x = 1;
    if (o->plan_id && (rc = from_record(o, s->po.db_path, &s->p.job, err)) != ST_OK)
        return rc;
    return exec_prep_job(&s->p, &s->po.cfg, &s->x.cat, o->plan_id ? NULL : &s->x.model,
                         s->x.have_cluster ? &s->x.cluster : NULL, err);
}

/* CONFIG.json, the rank program, the run directory and the launch
 * command. -1 to go on, else the exit code. */
static int prepare(exec_cmd *s, st_err *err)
{
    if (exec_prep_config(&s->p, err) != ST_OK)
        return cli_fail(err);
    exec_program_find(EXEC_RANK_PROGRAM, 1, s->rank_prog, sizeof s->rank_prog);
    if (exec_prep_command(&s->p, s->rank_prog, err) != ST_OK)
        return cli_fail(err);
    return -1;
}

/* --dry-run (the command, with --json the CONFIG.json it would write) and
 * --emit slurm: print and write nothing else. The exit code. */
static int print_prepared(const exec_cmd *s, st_err *err)
{
    const exec_request *o = &s->o;
    int ex = 0;
    char *text = NULL;
    if (o->dry_run && s->po.json) {
        text = exec_prep_json(&s->p);
        if (text)
            printf("%s\n", text);
        else
            ex = 1;
    } else if (o->dry_run) {
        printf("%s\n", s->p.cmd_text);
    } else {
        char self[CLI_PATH_MAX];
        exec_program_self(self, sizeof self);
        text = exec_prep_slurm(&s->p, self, err);
        if (!text)
            ex = cli_fail(err);
        else if (o->out) {
            if (outfile_write(o->out, "--out", text, strlen(text), o->force, err) != ST_OK)
                ex = cli_fail(err);
        } else
            fputs(text, stdout);
    }
    free(text);
    return ex;
}

/* A value the run did not give (NAN) as the database's 0. */
static double nan0(double v)
{
    return isfinite(v) ? v : 0.0;
}

/* cli_record's callback: the account vctx (exec/'s: the outcome judged,
 * RESULT.json checked) as the database's run, with its steps, ranks and
 * prediction; sets its run_id. Here because neither library knows the
 * other's structs. */
static int record_run(db *d, const db_provenance *p, void *vctx, st_err *err)
{
    exec_account *x = vctx;
    const exec_result *r = &x->res;
    int ns = x->have_result ? r->nsteps : 0, nr = x->have_result ? r->nranks : 0;
    db_run_step *steps = ns ? calloc((size_t)ns, sizeof *steps) : NULL;
    db_run_rank *ranks = nr ? calloc((size_t)nr, sizeof *ranks) : NULL;
    if ((ns && !steps) || (nr && !ranks)) {
        free(steps);
        free(ranks);
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    }
    for (int i = 0; i < ns; i++) {
        const exec_step_result *s = &r->steps[i];
        steps[i] = (db_run_step){.step = (int)s->step, .time_s = s->time_s, .forward_s = NAN,
                                 .backward_s = NAN, .optimizer_s = s->phases.optimizer_s,
                                 .comm_s = NAN, .loss = s->loss, .phases = 1,
                                 .compute_s = s->phases.compute_s,
                                 .tp_comm_s = s->phases.tp_comm_s,
                                 .pp_wait_s = s->phases.pp_wait_s,
                                 .dp_comm_s = s->phases.dp_comm_s, .lr = s->lr,
                                 .grad_norm = s->grad_norm, .measured = s->measured};
    }
    for (int i = 0; i < nr; i++) {
        const exec_rank_stat *k = &r->rank_stats[i];
        ranks[i] = (db_run_rank){k->rank, k->tp_rank, k->pp_rank, k->dp_rank, k->peak_memory_bytes,
                                 k->phases.compute_s, k->phases.tp_comm_s, k->phases.pp_wait_s,
                                 k->phases.dp_comm_s, k->phases.optimizer_s,
                                 nan0(k->device_memory_peak_bytes)};
    }
    const exec_outcome *oc = &x->oc;
    int failed_rank = oc->failed_rank, exit_status = x->exit_status;
    char backend[32];
    snprintf(backend, sizeof backend, "%s+%s", x->device, x->transport);
    db_run run = {
        .status = oc->status, .error_text = oc->error, .backend = backend,
        .measured_step_s = nan0(oc->step_s), .nsteps = ns, .steps = steps, .nranks = nr,
        .rank_stats = ranks, .ranks = x->j->ranks, .device = x->device,
        .transport = x->transport,
        .device_name = x->have_result && r->device_name[0] ? r->device_name : NULL,
        .threads_per_rank = x->threads, .run_host = x->host,
        .tokens_per_step = x->have_result ? nan0(r->tokens_per_step) : 0,
        .tokens_per_s = nan0(oc->tokens_per_s),
        .model_flops_per_step = x->have_result ? nan0(r->model_flops_per_step) : 0,
        .hardware_flops_per_step = x->have_result ? nan0(r->hardware_flops_per_step) : 0,
        .achieved_flops = nan0(oc->achieved_flops), .peak_flops = nan0(oc->peak_flops),
        .mfu = nan0(oc->mfu), .failed_rank = failed_rank >= 0 ? &failed_rank : NULL,
        .exit_status = &exit_status, .measured_steps = oc->measured,
        .launch_command = x->cmd_text, .run_dir = x->run_dir, .config_json = x->config_text,
        .scaled = x->j->scaled, .plan_record_id = x->plan_record,
        .simulated_step_s = x->h->simulated_s};
    const plan_cluster *c = x->h->have_entry ? &x->h->cluster : NULL;
    int rc = db_record_run(d, p, &x->j->model, c, &x->j->layout, x->h->have_est ? &x->h->est : NULL,
                           &run, &x->run_id, err);
    free(steps);
    free(ranks);
    return rc;
}

/* The run recorded (an import claims its directory first: of two at once,
 * one records; then its marker says which run it became) and printed. The
 * exit code. */
static int record_and_print(const exec_cmd *s, exec_account *a, st_err *err)
{
    const exec_request *o = &s->o;
    int mark_fd = -1;
    if (o->import_dir && exec_import_claim(a->run_dir, &mark_fd, err) != ST_OK)
        return cli_fail(err);
    int64_t run_id = 0;
    if (cli_record(s->po.db_path, s->po.no_record, record_run, a))
        run_id = a->run_id;
    a->run_id = run_id; /* 0 unless the record was committed */
    st_err merr = {0};
    if (o->import_dir && exec_import_finish(a->run_dir, mark_fd, run_id, &merr) != ST_OK)
        fprintf(stderr, "smdplan: exec: %s\n", merr.msg);
    if (s->po.json) {
        char *text = exec_account_json(a, data_json_model(&a->j->model));
        if (text)
            printf("%s\n", text);
        free(text);
    } else {
        exec_account_print(stdout, a);
    }
    return exec_account_exit(a, o->import_dir != NULL);
}

/* Make the run ready, say what it is, launch it (or, with --import, take
 * what its launcher said), judge, record and print. The exit code. */
static int run_job(exec_cmd *s, st_err *err)
{
    exec_prep *p = &s->p;
    exec_pred *h = calloc(1, sizeof *h);
    if (!h)
        return 1;
    exec_account a;
    memset(&a, 0, sizeof a);
    int ex = exec_prep_ready(p, h, err) != ST_OK ? cli_fail(err) : -1;
    if (ex < 0 && !s->po.json) {
        rpt_plan_model(stdout, &p->job.model);
        exec_prep_print_start(stdout, p, h);
        fflush(stdout);
    }
    FILE *progress = !s->po.json && isatty(STDOUT_FILENO) ? stdout : NULL;
    if (ex < 0 && exec_account_launch(p, progress, &a, err) != ST_OK)
        ex = cli_fail(err);
    /* a GPU named only by the run: its catalog entry, prediction and peak now */
    const char *dev = a.res.device_name;
    if (ex < 0 && p->cuda && !h->have_entry && a.have_result)
        exec_prep_predict(p, dev, *dev ? plan_host_catalog_gpu(&s->x.cat, dev) : -1, h);
    if (ex < 0) {
        exec_account_judge(&a, h);
        ex = record_and_print(s, &a, err);
    }
    exec_account_free(&a);
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
        ex = prepare(&s, &err);
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
    exec_prep_free(&s.p);
    if (s.have_x)
        cli_plan_ctx_free(&s.x);
    return ex;
}
