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
 * cores / T "GPUs" per node, each a device entry cpu-NAME[-tT] (bench gpu:
 * host-NAME-cuda of device cuda-NAME); what each figure is and where it
 * comes from is said in planner/plan_host_entry.c. The measurements run in
 * exec/ (exec_bench.h), the figures are fitted and the entry made in the
 * planner (plan_hwfit.h), and the file is written by data/
 * (data_catalog_entry_write): an existing file is replaced only with
 * --force, never through a symbolic link; entries of other names in it are
 * then kept. The text is checked by the catalog's own reader before it is
 * written, atomically.
 */
#include "app/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "common/outfile.h"
#include "common/units.h"
#include "data/data.h"
#include "data/db_lookup.h"
#include "exec/exec.h"
#include "exec/exec_bench.h"
#include "exec/exec_comm.h"
#include "planner/plan_hwfit.h"

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

/* The transport bench: smdplan-bench-rank, next to smdplan, run by exec/
 * as smdplan exec supervises its runs. */
static int run_comm(const bench_opts *o, int cores, exec_bench_comm *out, st_err *err)
{
    char prog[CLI_PATH_MAX];
    cli_find_program(EXEC_BENCH_RANK_PROGRAM, 0, prog, sizeof prog);
    if (!prog[0])
        return ST_RAISE(err, ST_ENOENT, "bench comm: %s is not next to smdplan (this build has "
                        "no MPI, or it was not built)", EXEC_BENCH_RANK_PROGRAM);
    exec_bench_comm_job job = {.program = prog, .transport = o->transport, .ranks = o->ranks,
                               .cores = cores, .max_bytes = o->max_bytes, .ops = o->ops,
                               .iters = o->iters, .quick = o->quick, .timeout_s = o->timeout_s};
    return exec_bench_comm_job_run(&job, out, err);
}

/* The all-reduce curve's name: "mpi-" and the host's (at most 31 characters,
 * a catalog curve name). */
static void curve_name(const bench_opts *o, char *buf, size_t n)
{
    char h[32];
    cli_host_name(h, sizeof h);
    snprintf(buf, n, "mpi-%.27s", o->name ? o->name : h);
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    cJSON_AddStringToObject(o, k, v);
}

/* h's instance type and its curves into cat (its device is added first). */
static void add_instance(data_catalog_entry *cat, const plan_host_entry *h)
{
    data_catalog_entry_add_curve(cat, &h->intra_curve);
    data_catalog_entry_add_curve(cat, &h->net_curve);
    data_catalog_entry_add_instance(cat, h->instance_name, h->gpu_name, &h->instance,
                                    h->intra_curve.name, h->net_curve.name, h->instance_source,
                                    h->instance_note);
}

/* The figures the bench record keeps of entry h at T threads per rank. */
static void entry_figures(const plan_host_entry *h, int T, db_bench_entry *e)
{
    const plan_dev_fit *d = &h->fit;
    *e = (db_bench_entry){.threads_per_rank = T, .peak_flops = h->gpu.peak_flops,
                          .gemm_dim_half = d->gemm.dim_half,
                          .gemm_rms_log_err = d->gemm.rms_log_err,
                          .misaligned_factor = h->gpu.misaligned_factor,
                          .hbm_bps = h->gpu.hbm_bps, .hbm_eff = h->gpu.hbm_eff,
                          .act_fwd_s = d->act_fwd_s, .act_bwd_s = d->act_bwd_s,
                          .glu_fwd_s = d->glu_fwd_s, .glu_bwd_s = d->glu_bwd_s,
                          .opt_param_s = d->opt_param_s, .attn_fwd_flops = d->attn_fwd_flops,
                          .attn_bwd_flops = d->attn_bwd_flops, .p2p_bps = h->p2p.bw_bps,
                          .p2p_latency_s = h->p2p.small_s,
                          .allreduce_busbw_bps = h->allreduce.bw_bps,
                          .allreduce_latency_s = h->allreduce.small_s};
}

/* The entry for threads per rank T (plan_host_entry.c), into the catalog
 * arrays; figures into e. The instance type needs comm. */
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
    char gname[64], iname[64];
    cli_host_entry_names(T, iname, sizeof iname, gname, sizeof gname);
    if (o->name && T <= 1)
        snprintf(iname, sizeof iname, "%s", o->name);
    else if (o->name)
        snprintf(iname, sizeof iname, "%s-t%d", o->name, T);
    snprintf(inst_name, nn, "%s", iname);
    snprintf(gpu_name, nn, "%s", gname);
    plan_host_entry h;
    int rc = plan_host_cpu_device(cpu, T, gname, &h, err);
    if (rc != ST_OK)
        return rc;
    data_catalog_entry_add_gpu(cat, h.gpu_name, &h.gpu, h.gpu_source, h.gpu_note);
    if (comm) {
        char cname[32];
        curve_name(o, cname, sizeof cname);
        rc = plan_host_cpu_instance(cpu, comm, iname, cname, &h, err);
        if (rc != ST_OK)
            return rc;
        add_instance(cat, &h);
    }
    entry_figures(&h, T, e);
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

/* The entry of this host's GPUs from the GPU bench (plan_host_entry.c):
 * the device as the executor drives it, against the catalog's GPU of this
 * device, and the instance host-NAME-cuda of the GPUs CUDA sees, into out
 * and h; figures into e. */
static int make_gpu_entry(const bench_opts *o, const exec_bench_cpu *b,
                          data_catalog_entry *out, db_bench_entry *e, plan_host_entry *h,
                          char *inst_name, char *gpu_name, size_t nn, st_err *err)
{
    char gname[64], iname[64];
    gpu_entry_names(o, iname, sizeof iname, gname, sizeof gname);
    snprintf(inst_name, nn, "%s", iname);
    snprintf(gpu_name, nn, "%s", gname);
    plan_catalog cat;
    memset(&cat, 0, sizeof cat);
    st_err ignore = {0};
    int gi = -1;
    if (data_catalog_load(NULL, &cat, &ignore) == ST_OK)
        gi = cli_catalog_gpu_of_device(&cat, b->cpu_model);
    int rc = plan_host_gpu_device(b, &cat, gi, gname, h, err);
    if (rc == ST_OK) {
        data_catalog_entry_add_gpu(out, h->gpu_name, &h->gpu, h->gpu_source, h->gpu_note);
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        double mem_bytes = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
        rc = plan_host_gpu_instance(b, &cat, gi, exec_device_count(b->device), mem_bytes, iname,
                                    h, err);
    }
    if (rc == ST_OK) {
        add_instance(out, h);
        entry_figures(h, 1, e);
    }
    plan_catalog_free(&cat);
    return rc;
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
    char steady[PLAN_BENCH_STEADY_MAX];
    plan_bench_steadiness(b, steady, sizeof steady);
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
    plan_host_entry h;
    rc = data_catalog_entry_new(&out, &err);
    if (rc == ST_OK)
        rc = make_gpu_entry(o, b, out, &entry, &h, iname, gname, sizeof iname, &err);
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
                   iname, gname, h.fit.gemm.asymptote_flops / 1e12, h.gpu.gemm_eff_max,
                   entry.peak_flops / 1e12, entry.gemm_dim_half, entry.hbm_bps / 1e9,
                   h.gpu.hbm_eff, h.gpu.flash_eff);
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
 * each thread count, when smdplan-rank is beside smdplan) into cpu. */
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
    char prog[CLI_PATH_MAX];
    cli_find_program(EXEC_BENCH_REF_PROGRAM, 0, prog, sizeof prog);
    for (int t = 0; rc == ST_OK && !o->quick && prog[0] && t < o->nthreads; t++)
        rc = exec_bench_ref_step_run(prog, o->threads[t], cpu, err);
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
        char steady[PLAN_BENCH_STEADY_MAX];
        plan_bench_steadiness(cpu, steady, sizeof steady);
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
    /* the part not measured now from this host's newest record of it */
    if (!have_cpu && o.from_record <= 0)
        from_cpu = db_bench_newest(o.db_path, host, cpu, &have_cpu, NULL, NULL);
    if (!have_comm && o.from_record <= 0)
        from_comm = db_bench_newest(o.db_path, host, NULL, NULL, comm, &have_comm);
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
