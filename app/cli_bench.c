/*
 * cli_bench.c: `smdplan bench`, this host measured and put in the catalog.
 *
 *   smdplan bench [cpu | comm] [--quick] [--threads-per-rank 1,2] [--ranks N]
 *                 [--max-bytes SIZE] [--ops LIST] [--transport mpi|nccl]
 *                 [--write-catalog FILE [--force]]
 *                 [--name NAME] [--timeout S] [--json] [--db FILE] [--no-record]
 *
 * cpu measures the CPU device (exec_bench_cpu_run: sgemm rates per thread
 * count over square and transformer shapes, STREAM triad bandwidth, cores,
 * memory); comm measures the transport between ranks of one job on this
 * host (mpirun on smdplan-bench-rank: all-reduce, reduce-scatter,
 * all-gather, send/recv from 8 B to 1 GiB, capped by memory and
 * --max-bytes, time, algbw and busbw as nccl-tests' doc/PERFORMANCE.md
 * defines them); no word does both. comm --transport nccl measures NCCL
 * between the GPUs of this host instead (one rank per GPU, device
 * buffers; only with the word comm, and no catalog entry: the entry
 * describes the CPU device and MPI). Each run is recorded (a bench record:
 * every measurement and the entry made from them).
 *
 * The catalog entry (--write-catalog FILE; loadable with --catalog FILE):
 * for each thread count T per rank, an instance type host-NAME[-tT] with
 * cores / T "GPUs" per node, each a device entry cpu-NAME[-tT]:
 *   peak_flops     the asymptote of the GEMM model fitted to the executor's
 *                  own linears at T threads (their forward, input- and
 *                  weight-gradient passes through the device table, a
 *                  layer's worth at each size fitted as a whole:
 *                  plan_hwfit.h), the rate a GEMM approaches as its sides
 *                  grow: the device's peak (sgemm's rates without the
 *                  device measurements);
 *   gemm_eff_max   1 (the peak is the measured rate itself);
 *   gemm_dim_half  fitted with it (how a GEMM's sides lower its rate);
 *   misaligned_factor  the rate of sgemm 1023^3 over the model's at 1024^3
 *                  (at most 1);
 *   act_*_s, glu_*_s  the executor's GELU and SwiGLU, forward and backward,
 *                  per element: the compute floors of the activation kernels;
 *   attn_*_flops   the executor's attention core (products and softmax) at
 *                  its median rate, forward and backward;
 *   hbm_bps        the triad bandwidth with every core busy, shared by the
 *                  device slots (bandwidth per rank when the host is full);
 *   hbm_eff, opt_param_s  from the executor's own step on a reference model
 *                  (ref_step): the fraction of hbm_bps that makes the
 *                  planner's compute time of that step the measured one,
 *                  and its optimizer phase per parameter (without it: the
 *                  norm kernels' bytes over their time, and the optimizer
 *                  kernels' time per parameter);
 *   mem_bytes      physical memory / device slots;
 *   flash_eff      1, unused: the smdplan framework runs no fused attention
 *                  kernel on the CPU device (plan_framework.c).
 * and the links between ranks, from the transport bench:
 *   intra_busbw_bps  B of the fit time = a + 2(n-1)/n S / B to every
 *                    all-reduce measured (least squares in relative error),
 *                    the planner's ring model (plan_hw.c);
 *   intra_latency_s  the median all-reduce time at <= 1 KiB (the catalog's
 *                    definition: nccl-tests' small-message time);
 *   nvlink_bps       the send/recv bandwidth fitted the same way, divided
 *                    by the fraction of a link a send reaches in the
 *                    planner (P2P_PEAK_EFF in plan_hw.c), so the planner's
 *                    point-to-point time uses the measured bandwidth;
 *   net_*            a single host has no network: the intra-host figures,
 *                    so the entry is complete (say so in _note); plans of
 *                    more than one node of this type mean nothing;
 *   intra_curve      the all-reduce busbw at each size over its largest
 *                    (a curve of the catalog, for the record).
 * The figures are fitted in the planner (plan_hwfit.h) and the file is
 * written by data/ (data_catalog_entry_write): an existing file is
 * replaced only with --force, never through a symbolic link; entries of
 * other names in it are then kept. The text is checked by the catalog's
 * own reader before it is written, atomically.
 */
#include "app/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "launch/launch_job.h"
#include "common/outfile.h"
#include "common/units.h"
#include "data/data.h"
#include "exec/exec.h"
#include "exec/exec_bench.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "planner/plan_framework.h"
#include "planner/plan_hwfit.h"

#define BENCH_RANK_PROGRAM "smdplan-bench-rank"
/* The fraction of a link's bandwidth a point-to-point send reaches in the
 * planner (plan_hw.c, P2P_PEAK_EFF: ib_write_bw 24 of 25 GB/s). */
#define PLANNER_P2P_PEAK_EFF 0.96
#define DEFAULT_COMM_TIMEOUT_S 900.0
#define THREAD_LIST_MAX 8

enum {
    O_HELP = 'h', O_QUICK = 256, O_THREADS, O_RANKS, O_MAX_BYTES, O_OPS, O_WRITE, O_FORCE,
    O_NAME, O_TIMEOUT, O_JSON, O_DB, O_NO_RECORD, O_ITERS, O_FROM_RECORD, O_TRANSPORT,
};

static const struct option long_opts[] = {
    {"quick", 0, NULL, O_QUICK},         {"threads-per-rank", 1, NULL, O_THREADS},
    {"ranks", 1, NULL, O_RANKS},         {"max-bytes", 1, NULL, O_MAX_BYTES},
    {"ops", 1, NULL, O_OPS},             {"write-catalog", 1, NULL, O_WRITE},
    {"force", 0, NULL, O_FORCE},         {"name", 1, NULL, O_NAME},
    {"timeout", 1, NULL, O_TIMEOUT},     {"json", 0, NULL, O_JSON},
    {"db", 1, NULL, O_DB},               {"no-record", 0, NULL, O_NO_RECORD},
    {"iters", 1, NULL, O_ITERS},         {"from-record", 1, NULL, O_FROM_RECORD},
    {"transport", 1, NULL, O_TRANSPORT},
    {"help", 0, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

typedef struct bench_opts {
    int cpu, comm, gpu;
    int quick;
    int threads[THREAD_LIST_MAX], nthreads;
    int ranks;
    double max_bytes;
    char ops[128];
    char transport[16];          /* comm: "mpi" (default) or "nccl" */
    int iters;
    const char *write, *name, *db_path;
    int force, json, no_record;
    double timeout_s;
    int64_t from_record;         /* -1: measure; 0: this host's newest bench record; > 0 that one */
} bench_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan bench [cpu | comm | gpu] [options]\n\n"
            "Measures this host for the planner's catalog: the CPU device (OpenBLAS sgemm rates\n"
            "per thread count, STREAM triad bandwidth, cores, memory) and the MPI transport\n"
            "between ranks of one job (all-reduce, reduce-scatter, all-gather, send/recv from 8 B\n"
            "to 1 GiB: time, algbw, busbw as nccl-tests defines them). Without a word, both.\n"
            "gpu measures this host's GPU through the executor's cuda device instead (its\n"
            "linears, fused and plain attention, elementwise kernels and a device copy):\n"
            "--write-catalog then writes instance host-NAME-cuda.\n"
            "Every run is recorded (smdplan history --kind bench); --write-catalog makes the\n"
            "host's catalog entry, which smdplan exec and the planner load with --catalog FILE.\n\n"
            "  --write-catalog FILE   write the entry (instance host-NAME, device cpu-NAME)\n"
            "  --force                replace an existing FILE (never through a symbolic link;\n"
            "                         other hosts' entries in a file smdplan bench wrote stay)\n"
            "  --threads-per-rank L   entries for these threads per rank (default 1; each\n"
            "                         divides the cores)\n"
            "  --name NAME            instance type name instead of host-NAME\n"
            "  --ranks N              comm: ranks of the job (default the cores, at least 2)\n"
            "  --max-bytes SIZE       comm: largest message (default 1GiB, capped by memory)\n"
            "  --ops LIST             comm: allreduce,reducescatter,allgather,sendrecv (default all)\n"
            "  --transport NAME       comm: mpi (default) or nccl (one rank per GPU; default ranks\n"
            "                         the GPUs; no catalog entry)\n"
            "  --iters N              comm: timed iterations per size (default 20, nccl-tests')\n"
            "  --timeout S            comm: wall-clock limit of the job (default 900)\n"
            "  --quick                fewer shapes and sizes, for a fast check\n"
            "  --from-record ID       measure nothing: the entry from bench record ID (0: this\n"
            "                         host's newest; smdplan calibrate --bench does the same)\n"
            "  --json                 print the measurements and the entry as JSON\n"
            "  --db FILE, --no-record where to record, or not\n\n"
            "Example:\n"
            "  smdplan bench --write-catalog host.json\n"
            "  smdplan exec --catalog host.json --layers 4 --hidden 256 --heads 4 --pp 2\n");
}

static int parse_threads(const char *s, bench_opts *o, st_err *err)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    o->nthreads = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        int64_t v;
        int rc = units_parse_int(t, "--threads-per-rank", 1, 256, &v, err);
        if (rc)
            return rc;
        if (o->nthreads == THREAD_LIST_MAX)
            return ST_RAISE(err, ST_EINVAL, "--threads-per-rank '%s': at most %d counts", s,
                            THREAD_LIST_MAX);
        o->threads[o->nthreads++] = (int)v;
    }
    if (!o->nthreads)
        return ST_RAISE(err, ST_EINVAL, "--threads-per-rank '%s': give counts like 1,2", s);
    return ST_OK;
}

/* 0 parsed, 1 help printed, else an exit code. */
static int parse_args(int argc, char **argv, bench_opts *o)
{
    st_err err = {0};
    int first = 1;
    if (argc > 1 && argv[1][0] != '-') {
        if (!strcmp(argv[1], "cpu"))
            o->comm = 0;
        else if (!strcmp(argv[1], "comm"))
            o->cpu = 0;
        else if (!strcmp(argv[1], "gpu"))
            o->cpu = o->comm = 0, o->gpu = 1;
        else {
            fprintf(stderr, "smdplan: bench '%s': allowed are cpu, comm, gpu (or none: cpu and "
                            "comm)\n", argv[1]);
            return 2;
        }
        first = 2;
    }
    optind = first;
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        int rc = ST_OK;
        int64_t v;
        switch (id) {
        case O_HELP: usage(stdout); return 1;
        case O_QUICK: o->quick = 1; break;
        case O_THREADS: rc = parse_threads(optarg, o, &err); break;
        case O_RANKS:
            rc = units_parse_int(optarg, "--ranks", 2, 1024, &v, &err);
            o->ranks = (int)v;
            break;
        case O_MAX_BYTES:
            rc = units_parse_bytes(optarg, "--max-bytes", &o->max_bytes, &err);
            if (rc == ST_OK && (o->max_bytes < 8 || o->max_bytes > 1e13))
                rc = ST_RAISE(&err, ST_EINVAL, "--max-bytes '%s': allowed 8 B to 10 TB", optarg);
            break;
        case O_OPS: {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t && rc == ST_OK; t = strtok(NULL, ",")) {
                exec_bench_op op;
                rc = exec_bench_op_parse(t, &op, &err);
            }
            snprintf(o->ops, sizeof o->ops, "%s", optarg);
            break;
        }
        case O_FROM_RECORD:
            rc = units_parse_int(optarg, "--from-record", 0, INT64_MAX / 2, &o->from_record, &err);
            break;
        case O_ITERS:
            rc = units_parse_int(optarg, "--iters", 1, 100000, &v, &err);
            o->iters = (int)v;
            break;
        case O_TRANSPORT:
            if (strcmp(optarg, "mpi") != 0 && strcmp(optarg, "nccl") != 0)
                rc = ST_RAISE(&err, ST_EINVAL, "--transport '%s': allowed are mpi, nccl", optarg);
            else if (!exec_comm_built(optarg))
                rc = ST_RAISE(&err, ST_EINVAL, "--transport %s: not in this build (built: %s)",
                              optarg, exec_comm_names());
            snprintf(o->transport, sizeof o->transport, "%s", optarg);
            break;
        case O_WRITE: o->write = optarg; break;
        case O_FORCE: o->force = 1; break;
        case O_NAME:
            if (!*optarg || strlen(optarg) > 40)
                rc = ST_RAISE(&err, ST_EINVAL, "--name '%s': 1 to 40 characters", optarg);
            o->name = optarg;
            break;
        case O_TIMEOUT: {
            double t;
            rc = units_parse_count(optarg, "--timeout", &t, &err);
            if (rc == ST_OK && !(t >= 1 && t <= 1e6))
                rc = ST_RAISE(&err, ST_EINVAL, "--timeout '%s': allowed 1 to 1e6 s", optarg);
            o->timeout_s = t;
            break;
        }
        case O_JSON: o->json = 1; break;
        case O_DB: o->db_path = optarg; break;
        case O_NO_RECORD: o->no_record = 1; break;
        default:
            fprintf(stderr, "smdplan: bench: unknown option or missing value: '%s' (see smdplan "
                            "bench --help)\n", argv[optind - 1]);
            return 2;
        }
        if (rc != ST_OK)
            return cli_fail(&err);
    }
    if (optind < argc) {
        fprintf(stderr, "smdplan: bench: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!strcmp(o->transport, "nccl") && (o->cpu || o->write)) {
        fprintf(stderr, "smdplan: bench: --transport nccl: only with the word comm and without "
                        "--write-catalog (the catalog entry describes the CPU device and MPI)\n");
        return 2;
    }
    return 0;
}

/* ---- the measurements ---- */

/* The transport bench: mpirun on smdplan-bench-rank in a directory of our
 * own, supervised as smdplan exec supervises its runs. */
static int run_comm(const bench_opts *o, int cores, exec_bench_comm *out, st_err *err)
{
    char prog[CLI_PATH_MAX];
    cli_find_program(BENCH_RANK_PROGRAM, 0, prog, sizeof prog);
    if (!prog[0])
        return ST_RAISE(err, ST_ENOENT, "bench comm: %s is not next to smdplan (this build has "
                        "no MPI, or it was not built)", BENCH_RANK_PROGRAM);
    const char *tmp = getenv("TMPDIR");
    char dir[CLI_PATH_MAX];
    snprintf(dir, sizeof dir, "%s/smdplan-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return ST_RAISE(err, ST_EIO, "bench comm: cannot make a directory under %s",
                        tmp && *tmp ? tmp : "/tmp");
    int nccl = !strcmp(o->transport, "nccl"), gpus = 0;
    double gpu_bytes = 0;
    /* the modules the ranks will open, found here (exec_module.h) */
    if ((nccl && !o->ranks && exec_device_query("cuda", &gpus, &gpu_bytes, err) != ST_OK) ||
        (nccl && exec_dev_present("cuda", err) != ST_OK) ||
        exec_comm_present(o->transport[0] ? o->transport : "mpi", err) != ST_OK) {
        rmdir(dir);
        return err->code;
    }
    int ranks = o->ranks ? o->ranks : nccl ? gpus : cores < 2 ? 2 : cores;
    if (nccl && ranks < 2) {
        rmdir(dir);
        return ST_RAISE(err, ST_EINVAL, "bench comm --transport nccl: %d GPU%s on this host; NCCL "
                        "needs one GPU per rank and at least 2 ranks", ranks,
                        ranks == 1 ? "" : "s");
    }
    double want = o->max_bytes > 0 ? o->max_bytes : o->quick ? 4.0 * 1048576.0 : 1073741824.0;
    double max_bytes = exec_bench_comm_max_bytes(want, ranks);
    char a_ranks[16], a_max[32], a_iters[16], a_out[CLI_PATH_MAX + 16], a_timeout[32];
    snprintf(a_ranks, sizeof a_ranks, "%d", ranks);
    snprintf(a_max, sizeof a_max, "%.0f", max_bytes);
    snprintf(a_iters, sizeof a_iters, "%d", o->iters ? o->iters : o->quick ? 5 : 20);
    snprintf(a_out, sizeof a_out, "%s/comm.json", dir);
    double timeout = o->timeout_s > 0 ? o->timeout_s : DEFAULT_COMM_TIMEOUT_S;
    snprintf(a_timeout, sizeof a_timeout, "%.0f", timeout);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)"mpirun";
    argv[n++] = (char *)"-n";
    argv[n++] = a_ranks;
    if (ranks > cores)
        argv[n++] = (char *)"--oversubscribe";
    argv[n++] = prog;
    argv[n++] = (char *)"--out";
    argv[n++] = a_out;
    argv[n++] = (char *)"--max-bytes";
    argv[n++] = a_max;
    argv[n++] = (char *)"--iters";
    argv[n++] = a_iters;
    argv[n++] = (char *)"--timeout";
    argv[n++] = a_timeout;
    if (o->ops[0]) {
        argv[n++] = (char *)"--ops";
        argv[n++] = (char *)o->ops;
    }
    if (nccl) {
        argv[n++] = (char *)"--transport";
        argv[n++] = (char *)"nccl";
    }
    argv[n] = NULL;
    char *env[3] = {NULL, NULL, NULL};
    char e1[] = "OMPI_ALLOW_RUN_AS_ROOT=1", e2[] = "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
    if (geteuid() == 0) {
        env[0] = e1;
        env[1] = e2;
    }
    launch_job l = {argv, env, timeout + 30, NULL, NULL, NULL};
    launch_job_result r;
    int rc = launch_job_run(&l, &r, err);
    char *text = NULL;
    size_t len = 0;
    if (rc == ST_OK && (r.exit_status != 0 || r.timed_out || r.interrupted)) {
        char line[512];
        launch_job_error_line(&r, BENCH_RANK_PROGRAM ": ", line, sizeof line);
        rc = ST_RAISE(err, ST_EIO, "bench comm: the job %s (status %d)%s%s",
                      r.timed_out ? "timed out" : r.interrupted ? "was interrupted" : "failed",
                      r.exit_status, line[0] ? ": " : "", line);
    }
    if (rc == ST_OK)
        rc = data_read_file(a_out, &text, &len, err);
    if (rc == ST_OK)
        rc = exec_bench_comm_parse(text, out, err);
    free(text);
    unlink(a_out); /* ours, in a directory of our own */
    rmdir(dir);
    return rc;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run a reference step (cfg: its model, layout and device) on one rank;
 * its median compute and optimizer phases are appended to b's elementwise
 * list ("ref_compute": n the tokens of a step; "ref_optimizer": n the
 * parameters) at threads. A build without the rank program measures no
 * reference (ST_OK, nothing added). */
static int ref_step_run(exec_config *cfg, int threads, exec_bench_cpu *b, st_err *err)
{
    char prog[CLI_PATH_MAX];
    cli_find_program("smdplan-rank", 0, prog, sizeof prog);
    if (!prog[0])
        return ST_OK;
    const char *tmp = getenv("TMPDIR");
    char dir[CLI_PATH_MAX];
    snprintf(dir, sizeof dir, "%s/smdplan-ref-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return ST_RAISE(err, ST_EIO, "bench: cannot make a directory under %s",
                        tmp && *tmp ? tmp : "/tmp");
    cfg->train.steps = PLAN_BENCH_REF_STEPS;
    snprintf(cfg->transport, sizeof cfg->transport, "self");
    cfg->threads_per_rank = threads;
    cfg->progress = 0;
    char conf[CLI_PATH_MAX + 16], res[CLI_PATH_MAX + 16];
    snprintf(conf, sizeof conf, "%s/CONFIG.json", dir);
    snprintf(res, sizeof res, "%s/RESULT.json", dir);
    int rc = exec_config_write(conf, cfg, err);
    if (rc == ST_OK)
        rc = plan_model_finish(&cfg->model, err);
    int64_t params = cfg->model.params;
    int64_t tokens = (int64_t)cfg->layout.global_batch * cfg->model.seq;
    char *argv[] = {prog, (char *)"--config", conf, (char *)"--result", res, NULL};
    launch_job l = {argv, NULL, 300, NULL, NULL, NULL};
    launch_job_result lr;
    if (rc == ST_OK)
        rc = launch_job_run(&l, &lr, err);
    exec_result r;
    exec_result_init(&r);
    if (rc == ST_OK && lr.exit_status != 0) {
        char line[512];
        launch_job_error_line(&lr, "smdplan-rank: ", line, sizeof line);
        rc = ST_RAISE(err, ST_EIO, "bench: the reference step failed (status %d)%s%s",
                      lr.exit_status, line[0] ? ": " : "", line);
    }
    if (rc == ST_OK)
        rc = exec_result_read(res, &r, err);
    double comp[PLAN_BENCH_REF_STEPS], opt[PLAN_BENCH_REF_STEPS];
    int n = 0;
    for (int i = 0; rc == ST_OK && i < r.nsteps && n < PLAN_BENCH_REF_STEPS; i++)
        if (r.steps[i].measured) {
            comp[n] = r.steps[i].phases.compute_s;
            opt[n++] = r.steps[i].phases.optimizer_s;
        }
    if (rc == ST_OK && n > 0 && b->nelem + 2 <= EXEC_BENCH_ELEM_MAX) {
        qsort(comp, (size_t)n, sizeof comp[0], cmp_dbl);
        qsort(opt, (size_t)n, sizeof opt[0], cmp_dbl);
        double mc = n % 2 ? comp[n / 2] : 0.5 * (comp[n / 2 - 1] + comp[n / 2]);
        double mo = n % 2 ? opt[n / 2] : 0.5 * (opt[n / 2 - 1] + opt[n / 2]);
        b->elem[b->nelem++] = (exec_bench_elem){"ref_compute", threads, tokens, n, mc,
                                                mc / (double)tokens};
        b->elem[b->nelem++] = (exec_bench_elem){"ref_optimizer", threads, params, n, mo,
                                                mo / (double)params};
    }
    exec_result_free(&r);
    unlink(conf); /* ours, in a directory of our own */
    unlink(res);
    rmdir(dir);
    return rc;
}

/* The CPU's reference step at `threads` threads. */
static int ref_step(int threads, exec_bench_cpu *cpu, st_err *err)
{
    exec_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return ST_RAISE(err, ST_ENOMEM, "bench: out of memory");
    exec_config_default(cfg);
    plan_bench_ref_model(&cfg->model);
    plan_bench_ref_layout(&cfg->layout);
    int rc = ref_step_run(cfg, threads, cpu, err);
    free(cfg);
    return rc;
}

/* buf = the formatted text, cut short when it does not fit. */
static void setf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

/* The all-reduce curve's name: "mpi-" and the host's (at most 31 characters,
 * a catalog curve name). */
static void curve_name(const bench_opts *o, char *buf, size_t n)
{
    char h[32];
    cli_host_name(h, sizeof h);
    setf(buf, n, "mpi-%.27s", o->name ? o->name : h);
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    cJSON_AddStringToObject(o, k, v);
}

/* How steady the measurements were, in words, into buf. */
static void steadiness(const exec_bench_cpu *b, char *buf, size_t n)
{
    if (!(b->spread_median > 0) && !(b->load_start >= 0)) {
        setf(buf, n, "spread and load not recorded (figures from a record)");
        return;
    }
    char load[96] = "";
    if (b->load_start >= 0)
        setf(load, sizeof load, "; 1-minute load %.2f at the start, %.2f at the end, %d cores",
             b->load_start, b->load_end, b->cores);
    setf(buf, n, "measurements' spread (interquartile range over the median) %.1f %% median, "
         "%.1f %% worst%s%s", 100 * b->spread_median, 100 * b->spread_worst, load,
         plan_bench_busy(b) ? ": a busy host" : "");
}

/* The entry for threads per rank T, into the catalog arrays; figures into
 * e. The link fields need comm. */
static int make_entry(const bench_opts *o, const exec_bench_cpu *cpu, const exec_bench_comm *comm,
                      int T, data_catalog_entry *cat, db_bench_entry *e,
                      char *inst_name, char *gpu_name, size_t nn, st_err *err)
{
    if (cpu->cores % T != 0 || T > cpu->cores)
        return ST_RAISE(err, ST_EINVAL, "--threads-per-rank %d: does not divide the %d cores", T,
                        cpu->cores);
    int measured = 0;
    for (int i = 0; i < cpu->nthreads; i++)
        measured |= cpu->threads[i] == T;
    if (!measured)
        return ST_RAISE(err, ST_EINVAL, "--threads-per-rank %d: the CPU bench measured %d to %d "
                        "threads only", T, cpu->threads[0], cpu->threads[cpu->nthreads - 1]);
    plan_host_cpu_fit f;
    int rc = plan_host_cpu_fit_run(cpu, T, &f, err);
    if (rc != ST_OK)
        return rc;
    const plan_dev_fit d = f.d;
    const plan_gpu w = f.g;
    int slots = f.slots;
    double hbm = w.hbm_bps, mis = w.misaligned_factor, hbm_eff = w.hbm_eff;
    const char *hbm_how = f.hbm_how;
    char gname[64], iname[64];
    cli_host_entry_names(T, iname, sizeof iname, gname, sizeof gname);
    if (o->name && T <= 1)
        setf(iname, sizeof iname, "%s", o->name);
    else if (o->name)
        setf(iname, sizeof iname, "%s-t%d", o->name, T);
    snprintf(inst_name, nn, "%s", iname);
    snprintf(gpu_name, nn, "%s", gname);
    char src[PLAN_SOURCE_MAX];
    setf(src, sizeof src, "smdplan bench on %.40s: %d thread%s per rank, sgemm fit over %d "
             "shapes (rms %.1f%%), triad %.1f GB/s over %d slots", cpu->host, T, T == 1 ? "" : "s",
             d.gemm.used, 100 * d.gemm.rms_log_err, plan_bench_full_triad(cpu) / 1e9, slots);
    char note[1000], steady[200];
    steadiness(cpu, steady, sizeof steady);
    setf(note, sizeof note,
             "CPU device of %s (%s; %s; %s). peak_flops: asymptote of the GEMM model fitted to "
             "%s at %d thread%s (worst shape %.1f%% off); gemm_eff_max 1: the peak is the "
             "measured rate; misaligned_factor: sgemm 1023^3 against the model at 1024^3; "
             "hbm_bps: STREAM triad with every core busy / %d slots; hbm_eff: from %s; act_*_s, "
             "glu_*_s: the executor's GELU and SwiGLU per element; opt_param_s: its optimizer "
             "step per parameter; attn_*_flops: its attention core's median rate; "
             "flash_eff unused (no fused attention on the CPU device).",
             cpu->host, cpu->cpu_model[0] ? cpu->cpu_model : "CPU model unknown", cpu->blas, steady,
             d.device_gemms ? "the executor's linears (forward, input and weight gradients)"
                            : "cblas_sgemm rates",
             T, T == 1 ? "" : "s", d.gemm.max_abs_err_pct, slots, hbm_how);
    data_catalog_entry_add_gpu(cat, gname, &w, src, note);

    *e = (db_bench_entry){.threads_per_rank = T, .peak_flops = d.gemm.asymptote_flops,
                          .gemm_dim_half = d.gemm.dim_half,
                          .gemm_rms_log_err = d.gemm.rms_log_err, .misaligned_factor = mis,
                          .hbm_bps = hbm, .hbm_eff = hbm_eff, .act_fwd_s = d.act_fwd_s,
                          .act_bwd_s = d.act_bwd_s, .glu_fwd_s = d.glu_fwd_s,
                          .glu_bwd_s = d.glu_bwd_s, .opt_param_s = d.opt_param_s,
                          .attn_fwd_flops = d.attn_fwd_flops, .attn_bwd_flops = d.attn_bwd_flops,
                          .p2p_bps = NAN, .p2p_latency_s = NAN,
                          .allreduce_busbw_bps = NAN, .allreduce_latency_s = NAN};
    if (!comm)
        return ST_OK;

    plan_link_fit ar = plan_link_fit_run(comm, "allreduce"), p2p = plan_link_fit_run(comm, "sendrecv");
    if (!(ar.bw_bps > 0) || !(ar.small_s > 0) || !(p2p.bw_bps > 0))
        return ST_RAISE(err, ST_EINVAL, "bench comm: the all-reduce and send/recv measurements "
                        "give no bandwidth or small-message time (measure with --ops including "
                        "allreduce and sendrecv, from 8 B)");
    e->allreduce_busbw_bps = ar.bw_bps;
    e->allreduce_latency_s = ar.small_s;
    e->p2p_bps = p2p.bw_bps;
    e->p2p_latency_s = p2p.small_s;
    char cname[32];
    curve_name(o, cname, sizeof cname);
    if (!data_catalog_entry_ncurves(cat)) {
        plan_curve cv;
        memset(&cv, 0, sizeof cv);
        snprintf(cv.name, sizeof cv.name, "%s", cname);
        for (int i = 0; i < comm->n && cv.n < PLAN_CURVE_MAX; i++) {
            const exec_bench_coll *v = &comm->v[i];
            if (strcmp(v->op, "allreduce") || !(v->busbw_bps > 0))
                continue;
            cv.log2_bytes[cv.n] = log2(v->bytes);
            cv.eff[cv.n++] = fmax(1e-6, v->busbw_bps / ar.max_busbw_bps);
        }
        setf(cv.source, sizeof cv.source, "smdplan bench comm on %.40s: %s all-reduce busbw "
             "over its largest (%.2f GB/s), %d ranks", comm->host, comm->transport,
             ar.max_busbw_bps / 1e9, comm->ranks);
        data_catalog_entry_add_curve(cat, &cv);
    }
    plan_instance in;
    memset(&in, 0, sizeof in);
    in.gpus_per_node = slots;
    in.nvlink_bps = p2p.bw_bps / PLANNER_P2P_PEAK_EFF;
    in.nvswitch = 1;
    in.intra_busbw_bps = ar.bw_bps;
    in.intra_latency_s = ar.small_s;
    in.net_bps = p2p.bw_bps * slots;
    in.net_latency_s = ar.small_s;
    in.net_ring_eff = in.net_tree_eff = 1.0;
    in.host_mem_bytes = cpu->mem_bytes;
    setf(src, sizeof src, "smdplan bench on %.40s: %d cores / %d thread%s per rank; %s between "
             "%d ranks", cpu->host, cpu->cores, T, T == 1 ? "" : "s", comm->transport, comm->ranks);
    setf(note, sizeof note,
             "intra_busbw_bps: B of t = a + 2(n-1)/n S / B fitted to every %s all-reduce "
             "measured (a = %.2f us); intra_latency_s: median all-reduce time at <= 1 KiB; "
             "nvlink_bps: send/recv bandwidth %.2f GB/s fitted the same way / 0.96 (the "
             "planner's point-to-point efficiency). A single host has no network: net_* repeat "
             "the intra-host figures; plans of several nodes of this type mean nothing.",
             comm->transport, 1e6 * ar.lat_s, p2p.bw_bps / 1e9);
    /* one curve for the host: MPI does not depend on the BLAS threads */
    data_catalog_entry_add_instance(cat, iname, gname, &in, cname, cname, src, note);
    return ST_OK;
}

/* ---- a GPU's entry (smdplan bench gpu) ---- */

/* The names of a GPU host's entry: instance host-NAME-cuda, device
 * cuda-NAME (or --name's). */
static void gpu_entry_names(const bench_opts *o, char *inst, size_t ni, char *gpu, size_t ng)
{
    char h[32];
    cli_host_name(h, sizeof h);
    snprintf(inst, ni, "%s%s", o->name ? o->name : "host-", o->name ? "" : h);
    if (!o->name)
        snprintf(inst + strlen(inst), ni - strlen(inst), "-cuda");
    snprintf(gpu, ng, "cuda-%.24s", o->name ? o->name : h);
}

/* The entry of this host's GPUs from the GPU bench: the device as the
 * executor drives it, every figure measured (see the comment at the top of
 * this file), and the instance host-NAME-cuda of the GPUs CUDA sees. */
typedef struct gpu_summary {
    double asymptote_flops, gemm_eff_max, flash_eff, hbm_eff;
} gpu_summary;

static int make_gpu_entry(const bench_opts *o, const exec_bench_cpu *b,
                          data_catalog_entry *out, db_bench_entry *e, gpu_summary *sum,
                          char *inst_name, char *gpu_name, size_t nn, st_err *err)
{
    char gname[64], iname[64];
    gpu_entry_names(o, iname, sizeof iname, gname, sizeof gname);
    snprintf(inst_name, nn, "%s", iname);
    snprintf(gpu_name, nn, "%s", gname);
    /* the catalog's GPU of this device: its datasheet peak stays the peak
     * (MFU is against it), the measured asymptote its fraction */
    plan_catalog cat;
    memset(&cat, 0, sizeof cat);
    st_err ignore = {0};
    int gi = -1;
    if (data_catalog_load(NULL, &cat, &ignore) == ST_OK)
        gi = cli_catalog_gpu_of_device(&cat, b->cpu_model);
    const plan_gpu *ref = gi >= 0 ? &cat.gpus[gi] : NULL;
    const plan_instance *ri = NULL;
    for (int i = 0; ref && i < cat.ninstances && !ri; i++)
        if (cat.instances[i].gpu_index == gi)
            ri = &cat.instances[i];
    plan_host_gpu_fit f;
    int rc = plan_host_gpu_fit_run(b, ref, &f, err);
    if (rc != ST_OK) {
        plan_catalog_free(&cat);
        return rc;
    }
    const plan_dev_fit d = f.d;
    const plan_gpu g = f.g;
    double peak = g.peak_flops, eff = g.gemm_eff_max, hbm = g.hbm_bps;
    double flash_eff = g.flash_eff, hbm_eff = g.hbm_eff;
    const char *hbm_how = f.hbm_how;
    *sum = (gpu_summary){d.gemm.asymptote_flops, eff, flash_eff, hbm_eff};
    char src[PLAN_SOURCE_MAX];
    setf(src, sizeof src, "smdplan bench gpu on %.40s: %.80s", b->host, b->cpu_model);
    char note[1200], steady[200];
    steadiness(b, steady, sizeof steady);
    setf(note, sizeof note,
         "The executor's %s device on %s (%s; %s). peak_flops: %s; gemm_eff_max: the asymptote "
         "of the GEMM model fitted to the executor's linears (forward, input and weight "
         "gradients, a layer's worth at each of %d groups; rms %.1f%%, worst group %.1f%%) "
         "over that peak; hbm_bps: a device-to-device copy, bytes read and written; hbm_eff: "
         "from %s; flash_eff: the fused attention's forward and backward work as the planner "
         "counts it over their time, median of the shapes, over the peak; attn_row_*_s and "
         "attn_elem_*_s: the plain attention core's time beyond the planner's terms per score "
         "row (its softmax row kernels) and per row and head element (layout copies, short "
         "products), least squares over the shapes; act_*_s, glu_*_s: "
         "GELU and SwiGLU per element; "
         "opt_param_s: the executor's optimizer (the gradients' squares and AdamW) per "
         "parameter. Measured, not fitted to runs.",
         b->device, b->host, b->cpu_model, steady,
         ref ? "the datasheet peak of the catalog's GPU of this device" : "the measured asymptote "
         "(no catalog GPU matches this device)",
         d.gemm.groups, 100 * d.gemm.rms_log_err, d.gemm.max_abs_err_pct, hbm_how);
    data_catalog_entry_add_gpu(out, gname, &g, src, note);

    /* the instance: this host's GPUs; the links between them are the
     * catalog's instance of this GPU where there is one (not measured: NCCL
     * between the GPUs is smdplan bench comm --transport nccl) */
    int ngpu = exec_device_count(b->device);
    plan_instance in;
    memset(&in, 0, sizeof in);
    in.gpus_per_node = ngpu > 0 ? ngpu : 1;
    in.nvlink_bps = ri ? ri->nvlink_bps : hbm;
    in.nvswitch = ri ? ri->nvswitch : 1;
    in.intra_busbw_bps = ri ? ri->intra_busbw_bps : hbm;
    in.intra_latency_s = ri ? ri->intra_latency_s : 1e-5;
    in.net_bps = ri ? ri->net_bps : hbm;
    in.net_latency_s = ri ? ri->net_latency_s : 1e-5;
    in.net_ring_eff = ri ? ri->net_ring_eff : 1.0;
    in.net_tree_eff = ri ? ri->net_tree_eff : 1.0;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        in.host_mem_bytes = (double)pages * (double)page;
    in.efa = ri ? ri->efa : 0;
    const plan_curve *ci = ri ? &cat.curves[ri->intra_curve_index] : cat.ncurves ? &cat.curves[0]
                                                                                 : NULL,
                     *cn = ri ? &cat.curves[ri->net_curve_index] : ci;
    if (!ci) {
        plan_catalog_free(&cat);
        return ST_RAISE(err, ST_EINVAL, "bench gpu: the catalog has no collective curve to name");
    }
    data_catalog_entry_add_curve(out, ci);
    data_catalog_entry_add_curve(out, cn);
    setf(src, sizeof src, "smdplan bench gpu on %.40s: %d GPU%s", b->host, ngpu,
         ngpu == 1 ? "" : "s");
    setf(note, sizeof note, "This host's %d GPU%s as CUDA sees them. The links between them "
         "are %s%s, not measured here.", ngpu, ngpu == 1 ? "" : "s",
         ri ? "the catalog's instance type " : "placeholders (the device's own bandwidth)",
         ri ? ri->name : "");
    data_catalog_entry_add_instance(out, iname, gname, &in, ci->name, cn->name, src, note);
    plan_catalog_free(&cat);

    *e = (db_bench_entry){.threads_per_rank = 1, .peak_flops = peak,
                          .gemm_dim_half = d.gemm.dim_half,
                          .gemm_rms_log_err = d.gemm.rms_log_err,
                          .misaligned_factor = g.misaligned_factor, .hbm_bps = hbm,
                          .hbm_eff = hbm_eff, .act_fwd_s = d.act_fwd_s,
                          .act_bwd_s = d.act_bwd_s, .glu_fwd_s = d.glu_fwd_s,
                          .glu_bwd_s = d.glu_bwd_s, .opt_param_s = d.opt_param_s,
                          .attn_fwd_flops = d.attn_fwd_flops, .attn_bwd_flops = d.attn_bwd_flops,
                          .p2p_bps = NAN, .p2p_latency_s = NAN,
                          .allreduce_busbw_bps = NAN, .allreduce_latency_s = NAN};
    return ST_OK;
}

/* The entry's key ("gpus", "instances", "curves") into obj. */
static void add_entry_json(cJSON *obj, const data_catalog_entry *e, const char *key)
{
    char *t = data_catalog_entry_json(e, key);
    cJSON *a = t ? cJSON_Parse(t) : NULL;
    free(t);
    cJSON_AddItemToObject(obj, key, a ? a : cJSON_CreateArray());
}

typedef struct bench_record {
    const exec_bench_cpu *cpu;
    const exec_bench_comm *comm;
    const db_bench_entry *entry;
} bench_record;

static int record_bench(db *d, const db_provenance *p, void *ctx, st_err *err)
{
    const bench_record *b = ctx;
    return db_record_bench(d, p, b->cpu, b->comm, b->entry, NULL, err);
}

/* The newest recorded measurement of this host of the kind not measured
 * now (cpu or comm), for a complete entry. */
static int recorded(const bench_opts *o, const char *host, exec_bench_cpu *cpu, int *have_cpu,
                    exec_bench_comm *comm, int *have_comm)
{
    db *d = NULL;
    st_err err = {0};
    if (db_open(db_default_path(o->db_path), DB_OPEN_READ, &d, &err) != ST_OK)
        return 0;
    /* newest first: the first record holding the part wanted */
    enum { LOOK = 64 };
    db_summary s[LOOK];
    int n = 0, found = 0;
    if (db_history(d, "bench", s, LOOK, &n, &err) == ST_OK)
        for (int i = 0; i < n && !found; i++) {
            int hc = 0, hm = 0;
            int64_t id = 0;
            st_err e2 = {0};
            if (db_bench_read(d, s[i].id, NULL, cpu, &hc, comm, &hm, &id, &e2) != ST_OK)
                continue;
            if (strcmp(cpu ? cpu->host : comm->host, host) != 0)
                continue;
            if ((have_cpu && hc) || (have_comm && hm)) {
                if (have_cpu)
                    *have_cpu = hc;
                if (have_comm)
                    *have_comm = hm;
                found = (int)id;
            }
        }
    db_close(d);
    return found;
}

static void print_cpu(const exec_bench_cpu *b)
{
    char mem[32];
    printf("host %s: %d cores, %s memory, %s\nBLAS: %s\n\n", b->host, b->cores,
           units_fmt_bytes(b->mem_bytes, mem, sizeof mem),
           b->cpu_model[0] ? b->cpu_model : "CPU model unknown", b->blas);
    printf("%-10s %7s %7s %7s %7s %6s %11s %9s %9s\n", "GEMM", "threads", "m", "n", "k", "reps",
           "time", "GFLOP/s", "model");
    for (int t = 0; t < b->nthreads; t++) {
        st_err err = {0};
        plan_dev_fit d = plan_dev_fit_run(b, b->threads[t], &err);
        for (int i = 0; i < b->ngemm; i++) {
            const exec_bench_gemm *g = &b->gemm[i];
            if (g->threads != b->threads[t])
                continue;
            char ts[32];
            printf("%-10s %7d %7lld %7lld %7lld %6d %11s %9.2f %9.2f\n", g->kind, g->threads,
                   (long long)g->m,
                   (long long)g->n, (long long)g->k, g->reps,
                   units_fmt_seconds(g->time_s, ts, sizeof ts), g->flops / 1e9,
                   d.ok ? plan_gemm_fit_rate(&d.gemm, (double)g->m, (double)g->n, (double)g->k) / 1e9
                        : NAN);
        }
        for (int i = 0; i < b->nelem; i++)
            if (b->elem[i].threads == b->threads[t])
                printf("%-10s %7d %7lld elements %18s %9.3f ns per element\n", b->elem[i].op,
                       b->elem[i].threads, (long long)b->elem[i].n, "", 1e9 * b->elem[i].elem_s);
        if (d.ok)
            printf("  %d thread%s: peak (asymptote of the %s) %.2f GFLOP/s, gemm_dim_half %.1f, "
                   "rms %.1f%%, worst %.1f%%, misaligned factor %.3f; triad %.2f GB/s\n\n",
                   b->threads[t], b->threads[t] == 1 ? "" : "s",
                   d.device_gemms ? "executor's linears" : "sgemm rates",
                   d.gemm.asymptote_flops / 1e9, d.gemm.dim_half, 100 * d.gemm.rms_log_err,
                   d.gemm.max_abs_err_pct, d.misaligned, d.triad_bps / 1e9);
    }
    char steady[200];
    steadiness(b, steady, sizeof steady);
    printf("steadiness: %s\n\n", steady);
}

static void print_comm(const exec_bench_comm *c)
{
    printf("%s between %d ranks on %s (time: mean over ranks of the mean iteration; algbw = S / "
           "t; busbw as nccl-tests' PERFORMANCE.md)\n", c->transport, c->ranks, c->host);
    printf("%-14s %12s %6s %12s %10s %10s\n", "op", "size (B)", "iters", "time (us)",
           "algbw GB/s", "busbw GB/s");
    for (int i = 0; i < c->n; i++) {
        const exec_bench_coll *v = &c->v[i];
        printf("%-14s %12.0f %6d %12.2f %10.3f %10.3f\n", v->op, v->bytes, v->iters,
               v->time_s * 1e6, v->algbw_bps / 1e9, v->busbw_bps / 1e9);
    }
    printf("\n");
}

static cJSON *cpu_json(const exec_bench_cpu *b)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "host", b->host);
    add_str(o, "cpu_model", b->cpu_model);
    add_str(o, "blas", b->blas);
    cJSON_AddNumberToObject(o, "cores", b->cores);
    cJSON_AddNumberToObject(o, "mem_bytes", b->mem_bytes);
    cJSON_AddNumberToObject(o, "spread_median", b->spread_median);
    cJSON_AddNumberToObject(o, "spread_worst", b->spread_worst);
    cJSON_AddNumberToObject(o, "load_start", b->load_start);
    cJSON_AddNumberToObject(o, "load_end", b->load_end);
    cJSON_AddBoolToObject(o, "busy", plan_bench_busy(b));
    cJSON *g = cJSON_AddArrayToObject(o, "gemm");
    for (int i = 0; i < b->ngemm; i++) {
        cJSON *x = cJSON_CreateObject();
        add_str(x, "kind", b->gemm[i].kind);
        cJSON_AddNumberToObject(x, "threads", b->gemm[i].threads);
        cJSON_AddNumberToObject(x, "m", (double)b->gemm[i].m);
        cJSON_AddNumberToObject(x, "n", (double)b->gemm[i].n);
        cJSON_AddNumberToObject(x, "k", (double)b->gemm[i].k);
        cJSON_AddNumberToObject(x, "time_s", b->gemm[i].time_s);
        cJSON_AddNumberToObject(x, "achieved_flops", b->gemm[i].flops);
        cJSON_AddItemToArray(g, x);
    }
    cJSON *el = cJSON_AddArrayToObject(o, "elementwise");
    for (int i = 0; i < b->nelem; i++) {
        cJSON *x = cJSON_CreateObject();
        add_str(x, "op", b->elem[i].op);
        cJSON_AddNumberToObject(x, "threads", b->elem[i].threads);
        cJSON_AddNumberToObject(x, "n", (double)b->elem[i].n);
        cJSON_AddNumberToObject(x, "time_s", b->elem[i].time_s);
        cJSON_AddNumberToObject(x, "elem_s", b->elem[i].elem_s);
        cJSON_AddItemToArray(el, x);
    }
    cJSON *m = cJSON_AddArrayToObject(o, "triad");
    for (int i = 0; i < b->nmem; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "threads", b->mem[i].threads);
        cJSON_AddNumberToObject(x, "array_bytes", b->mem[i].array_bytes);
        cJSON_AddNumberToObject(x, "triad_bps", b->mem[i].triad_bps);
        cJSON_AddItemToArray(m, x);
    }
    return o;
}

/* smdplan bench gpu: measure, make the entry, write and record it, print.
 * Frees b. */
static int bench_gpu(const bench_opts *o, exec_bench_cpu *b)
{
    st_err err = {0};
    int rc = ST_OK, measured = o->from_record < 0;
    if (!measured) { /* the entry again from a recorded GPU bench */
        db *dbh = NULL;
        int have = 0;
        rc = db_open(db_default_path(o->db_path), DB_OPEN_READ, &dbh, &err);
        if (rc == ST_OK)
            rc = db_bench_read(dbh, o->from_record, NULL, b, &have, NULL, NULL, NULL, &err);
        db_close(dbh);
        if (rc == ST_OK && (!have || strcmp(b->device, "cuda") != 0))
            rc = ST_RAISE(&err, ST_EINVAL, "--from-record %lld: not a GPU bench record (smdplan "
                          "bench gpu records one)", (long long)o->from_record);
        if (rc != ST_OK) {
            free(b);
            return cli_fail(&err);
        }
    }
    /* no GPU here, or no CUDA libraries to ask: one line, exit 2 */
    int visible = 0;
    double gpu_bytes = 0;
    if (measured && exec_features_built().cuda &&
        exec_device_query("cuda", &visible, &gpu_bytes, &err) != ST_OK) {
        free(b);
        fprintf(stderr, "smdplan: bench gpu: %s\n", err.msg);
        return 2;
    }
    if (measured && visible < 1) {
        free(b);
        fprintf(stderr, "smdplan: bench gpu: no GPU: %s\n",
                exec_features_built().cuda ? "CUDA sees none on this host"
                                      : "this build has no cuda device (built without CUDA)");
        return 2;
    }
    if (measured && !o->json)
        fprintf(stderr, "measuring the GPU through the executor's cuda device...\n");
    if (measured)
        rc = exec_bench_gpu_run("cuda", b, &err);
    if (rc != ST_OK) {
        free(b);
        if (rc == ST_EUNSUPPORTED || rc == ST_ENOENT) { /* no GPU or no module: one line, 2 */
            fprintf(stderr, "smdplan: bench gpu: %s\n", err.msg);
            return 2;
        }
        return cli_fail(&err);
    }
    data_catalog_entry *out = NULL;
    db_bench_entry entry;
    char iname[64] = "", gname[64] = "";
    memset(&entry, 0, sizeof entry);
    gpu_summary sum = {0, 0, 0, 0};
    rc = data_catalog_entry_new(&out, &err);
    if (rc == ST_OK)
        rc = make_gpu_entry(o, b, out, &entry, &sum, iname, gname, sizeof iname, &err);
    char *catalog_text = NULL;
    if (rc == ST_OK && o->write) {
        rc = data_catalog_entry_write(out, o->write, o->force, &err);
        size_t len = 0;
        if (rc == ST_OK && data_read_file(o->write, &catalog_text, &len, &err) != ST_OK)
            catalog_text = NULL;
    }
    entry.instance_name = iname;
    entry.gpu_name = gname;
    entry.catalog_file = rc == ST_OK ? o->write : NULL;
    entry.catalog_json = catalog_text;
    bench_record br = {b, NULL, rc == ST_OK ? &entry : NULL};
    int recorded_ok = measured ? cli_record(o->db_path, o->no_record, record_bench, &br) : 0;
    if (o->json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "gpu", cpu_json(b));
        cJSON *cat = cJSON_AddObjectToObject(root, "catalog");
        add_entry_json(cat, out, "gpus");
        add_entry_json(cat, out, "instances");
        if (o->write && rc == ST_OK)
            add_str(root, "catalog_file", o->write);
        cJSON_AddBoolToObject(root, "recorded", recorded_ok);
        char *s = cJSON_Print(root);
        cJSON_Delete(root);
        if (s)
            printf("%s\n", s);
        free(s);
    } else {
        print_cpu(b);
        if (rc == ST_OK)
            printf("entry %s (device %s): GEMM asymptote %.1f TFLOP/s (gemm_eff_max %.3f of "
                   "%.0f TFLOP/s), gemm_dim_half %.1f, copy %.0f GB/s (hbm_eff %.3f), fused "
                   "attention flash_eff %.3f\n",
                   iname, gname, sum.asymptote_flops / 1e12, sum.gemm_eff_max,
                   entry.peak_flops / 1e12, entry.gemm_dim_half, entry.hbm_bps / 1e9,
                   sum.hbm_eff, sum.flash_eff);
        if (o->write && rc == ST_OK)
            printf("catalog: %s (load it with --catalog %s)\n", o->write, o->write);
    }
    free(catalog_text);
    data_catalog_entry_free(out);
    free(b);
    return rc == ST_OK ? 0 : cli_fail(&err);
}

/* The measurements of bench record o->from_record (0: only this host's
 * name, for the newest records of it to fill in). */
static int load_record(const bench_opts *o, exec_bench_cpu *cpu, int *have_cpu,
                       exec_bench_comm *comm, int *have_comm, st_err *err)
{
    char h[64];
    cli_host_name(h, sizeof h);
    db *d = NULL;
    int rc = db_open(db_default_path(o->db_path), DB_OPEN_READ, &d, err);
    if (rc == ST_OK && o->from_record > 0)
        rc = db_bench_read(d, o->from_record, NULL, cpu, have_cpu, comm, have_comm, NULL, err);
    db_close(d);
    if (rc == ST_OK && o->from_record == 0) {
        snprintf(cpu->host, sizeof cpu->host, "%s", h);
        snprintf(comm->host, sizeof comm->host, "%s", h);
        /* the host's name as gethostname gives it: the records keep that */
        char full[EXEC_BENCH_NAME_MAX] = "";
        if (gethostname(full, sizeof full - 1) == 0 && full[0]) {
            snprintf(cpu->host, sizeof cpu->host, "%s", full);
            snprintf(comm->host, sizeof comm->host, "%s", full);
        }
    }
    return rc;
}

/* The CPU device (and, unless --quick, the executor's reference step at
 * each thread count) into cpu. */
static int measure_cpu(const bench_opts *o, exec_bench_cpu *cpu, st_err *err)
{
    exec_bench_cpu_config cfg;
    exec_bench_cpu_config_default(&cfg);
    cfg.quick = o->quick;
    if (!o->json)
        fprintf(stderr, "measuring the CPU device (sgemm, triad)...\n");
    int rc = exec_bench_cpu_run(&cfg, cpu, err);
    if (rc == ST_OK && !o->quick && !o->json)
        fprintf(stderr, "measuring the executor's reference step...\n");
    for (int t = 0; rc == ST_OK && !o->quick && t < o->nthreads; t++)
        rc = ref_step(o->threads[t], cpu, err);
    return rc;
}

/* What was measured or read, and the entries made from it (text or
 * JSON). */
static void print_bench(const bench_opts *o, const exec_bench_cpu *cpu, int have_cpu,
                        const exec_bench_comm *comm, int have_comm, int64_t from_cpu,
                        int64_t from_comm, const data_catalog_entry *out,
                        const db_bench_entry *entry, char (*inames)[64],
                        char (*gnames)[64], int nentries, int rc, int recorded_ok)
{
    /* an entry measured under load predicts this host badly: said, whatever
     * the output's form */
    if (have_cpu && !from_cpu && plan_bench_busy(cpu)) {
        char steady[200];
        steadiness(cpu, steady, sizeof steady);
        fprintf(stderr, "smdplan: warning: this host was busy while it was measured (%s); an "
                "entry written under load made a host's CPU predictions 15-17 %% off, against "
                "5 %% from one written quiet: measure again on a quiet host\n", steady);
    }
    if (o->json) {
        cJSON *root = cJSON_CreateObject();
        if (have_cpu)
            cJSON_AddItemToObject(root, "cpu", cpu_json(cpu));
        if (from_cpu)
            cJSON_AddNumberToObject(root, "cpu_from_record", (double)from_cpu);
        if (have_comm) {
            char *s = exec_bench_comm_json(comm);
            cJSON *c = s ? cJSON_Parse(s) : NULL;
            free(s);
            if (c)
                cJSON_AddItemToObject(root, "comm", c);
        }
        if (from_comm)
            cJSON_AddNumberToObject(root, "comm_from_record", (double)from_comm);
        cJSON *cat = cJSON_AddObjectToObject(root, "catalog");
        add_entry_json(cat, out, "gpus");
        add_entry_json(cat, out, "instances");
        add_entry_json(cat, out, "curves");
        if (o->write && rc == ST_OK)
            add_str(root, "catalog_file", o->write);
        cJSON_AddBoolToObject(root, "recorded", recorded_ok);
        char *s = cJSON_Print(root);
        cJSON_Delete(root);
        if (s)
            printf("%s\n", s);
        free(s);
    } else {
        if (have_cpu && o->cpu)
            print_cpu(cpu);
        if (have_comm && o->comm)
            print_comm(comm);
        if (from_cpu)
            printf("CPU figures from bench record %lld\n", (long long)from_cpu);
        if (from_comm)
            printf("transport figures from bench record %lld\n", (long long)from_comm);
        for (int t = 0; t < nentries; t++) {
            printf("entry %s (device %s): peak %.2f GFLOP/s per rank, gemm_dim_half %.1f, triad "
                   "%.2f GB/s per rank", have_comm ? inames[t] : "(no transport yet)", gnames[t],
                   entry[t].peak_flops / 1e9, entry[t].gemm_dim_half, entry[t].hbm_bps / 1e9);
            if (have_comm)
                printf(", all-reduce busbw %.2f GB/s, latency %.2f us, send/recv %.2f GB/s",
                       entry[t].allreduce_busbw_bps / 1e9, entry[t].allreduce_latency_s * 1e6,
                       entry[t].p2p_bps / 1e9);
            printf("\n");
        }
        if (o->write && rc == ST_OK)
            printf("catalog: %s (load it with --catalog %s)\n", o->write, o->write);
    }
}

static void bench_opts_init(bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->cpu = o->comm = 1;
    o->threads[0] = 1;
    o->nthreads = 1;
    o->from_record = -1;
}

/* Measure what o asks (or read it from a record), make the entries, write
 * the catalog file, record, print; an exit code. */
static int bench_run(bench_opts o)
{
    st_err err = {0};
    /* a file that may not be written is refused before measuring for minutes */
    if (o.write && outfile_check(o.write, "--write-catalog", o.force, &err) != ST_OK)
        return cli_fail(&err);
    exec_bench_cpu *cpu = calloc(1, sizeof *cpu);
    exec_bench_comm *comm = calloc(1, sizeof *comm);
    if (!cpu || !comm) {
        free(cpu);
        free(comm);
        return 1;
    }
    int have_cpu = 0, have_comm = 0, rc = ST_OK;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = nc > 0 ? (int)nc : 1;
    if (o.from_record >= 0) { /* nothing measured: a recorded bench */
        o.cpu = o.comm = 0;
        rc = load_record(&o, cpu, &have_cpu, comm, &have_comm, &err);
    }
    if (o.cpu) {
        rc = measure_cpu(&o, cpu, &err);
        have_cpu = rc == ST_OK;
    }
    if (o.gpu) {
        free(comm);
        return bench_gpu(&o, cpu);
    }
    if (rc == ST_OK && o.comm) {
        if (!o.json)
            fprintf(stderr, "measuring the transport between ranks (mpirun)...\n");
        rc = run_comm(&o, cores, comm, &err);
        have_comm = rc == ST_OK;
    }
    if (rc != ST_OK) {
        free(cpu);
        free(comm);
        return cli_fail(&err);
    }
    char host[EXEC_BENCH_NAME_MAX];
    snprintf(host, sizeof host, "%s", have_cpu ? cpu->host : comm->host);
    int64_t from_cpu = o.from_record > 0 && have_cpu ? o.from_record : 0;
    int64_t from_comm = o.from_record > 0 && have_comm ? o.from_record : 0;
    if (!have_cpu && o.from_record <= 0)
        from_cpu = recorded(&o, host, cpu, &have_cpu, NULL, NULL);
    if (!have_comm && o.from_record <= 0)
        from_comm = recorded(&o, host, NULL, NULL, comm, &have_comm);
    if (o.from_record >= 0 && !have_cpu && !have_comm) {
        free(cpu);
        free(comm);
        ST_RAISE(&err, ST_ENOENT, "--from-record: no bench measurements of %s recorded in %s",
                 host, db_default_path(o.db_path));
        return cli_fail(&err);
    }

    /* the entry */
    data_catalog_entry *out = NULL;
    db_bench_entry entry[THREAD_LIST_MAX];
    char inames[THREAD_LIST_MAX][64], gnames[THREAD_LIST_MAX][64];
    int nentries = 0;
    memset(entry, 0, sizeof entry);
    rc = data_catalog_entry_new(&out, &err);
    for (int t = 0; have_cpu && rc == ST_OK && t < o.nthreads; t++) {
        rc = make_entry(&o, cpu, have_comm ? comm : NULL, o.threads[t], out, &entry[t],
                        inames[t], gnames[t], sizeof inames[t], &err);
        if (rc == ST_OK)
            nentries++;
    }
    char *catalog_text = NULL;
    if (rc == ST_OK && o.write) {
        if (!have_cpu || !have_comm) {
            rc = ST_RAISE(&err, ST_ENOENT, "--write-catalog %s: no %s measurement of %s yet (run "
                          "smdplan bench %s first, or smdplan bench for both)", o.write,
                          have_cpu ? "transport" : "CPU", host, have_cpu ? "comm" : "cpu");
        } else {
            rc = data_catalog_entry_write(out, o.write, o.force, &err);
            if (rc == ST_OK) {
                char *t = NULL;
                size_t len = 0;
                if (data_read_file(o.write, &t, &len, &err) == ST_OK)
                    catalog_text = t;
            }
        }
    }
    for (int t = 0; t < nentries; t++) {
        entry[t].instance_name = have_comm ? inames[t] : NULL;
        entry[t].gpu_name = gnames[t];
        entry[t].catalog_file = rc == ST_OK ? o.write : NULL;
        entry[t].catalog_json = catalog_text;
    }
    /* recorded: what was measured now (and the entry, with the first
     * thread count's figures) */
    bench_record br = {o.cpu ? cpu : NULL, o.comm ? comm : NULL, nentries ? &entry[0] : NULL};
    int recorded_ok = o.cpu || o.comm ? cli_record(o.db_path, o.no_record, record_bench, &br) : 0;

    print_bench(&o, cpu, have_cpu, comm, have_comm, from_cpu, from_comm, out, entry, inames,
                gnames, nentries, rc, recorded_ok);
    free(catalog_text);
    data_catalog_entry_free(out);
    free(cpu);
    free(comm);
    return rc == ST_OK ? 0 : cli_fail(&err);
}

int cli_bench_cmd(int argc, char **argv)
{
    bench_opts o;
    bench_opts_init(&o);
    int ex = parse_args(argc, argv, &o);
    if (ex)
        return ex == 1 ? 0 : ex;
    return bench_run(o);
}

int cli_bench_redo(const cli_bench_redo_opts *r)
{
    bench_opts o;
    bench_opts_init(&o);
    st_err err = {0};
    if (units_parse_int(r->record, "--from-record", 0, INT64_MAX / 2, &o.from_record, &err) !=
            ST_OK ||
        (r->threads && parse_threads(r->threads, &o, &err) != ST_OK))
        return cli_fail(&err);
    o.write = r->write;
    o.force = r->force;
    o.json = r->json;
    o.db_path = r->db_path;
    return bench_run(o);
}
