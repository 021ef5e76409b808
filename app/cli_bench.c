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
 * an instance type and its device per thread count per rank (bench gpu:
 * one for the GPUs), named as planner/plan_host_names.h says; what each
 * figure is and where it comes from is said in planner/plan_host_entry.c.
 * The measurements run in exec/ (exec_bench_here.h); data/ makes and
 * writes the entry (data_host_entry.h: an existing file only with --force,
 * never through a symbolic link), reads records back (db_bench_load.h) and
 * gives the JSON (data_bench_json.h); reports/ the text (rpt_bench.h).
 */
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli_int.h"
#include "common/outfile.h"
#include "common/units.h"
#include "data/data_bench_json.h"
#include "data/data_host_entry.h"
#include "data/db_bench_load.h"
#include "exec/exec_bench_here.h"
#include "exec/exec_comm.h"
#include "planner/plan_host_names.h"
#include "reports/rpt_bench.h"

#define THREAD_LIST_MAX EXEC_BENCH_THREADS_MAX

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
    exec_bench_here run;         /* --quick, the threads per rank, the transport job */
    const char *write, *name, *db_path;
    int force, json, no_record;
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
    o->run.nthreads = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        int64_t v;
        int rc = units_parse_int(t, "--threads-per-rank", 1, 256, &v, err);
        if (rc)
            return rc;
        if (o->run.nthreads == THREAD_LIST_MAX)
            return ST_RAISE(err, ST_EINVAL, "--threads-per-rank '%s': at most %d counts", s,
                            THREAD_LIST_MAX);
        o->run.threads[o->run.nthreads++] = (int)v;
    }
    if (!o->run.nthreads)
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
        case O_QUICK: o->run.quick = 1; break;
        case O_THREADS: rc = parse_threads(optarg, o, &err); break;
        case O_RANKS:
            rc = units_parse_int(optarg, "--ranks", 2, 1024, &v, &err);
            o->run.ranks = (int)v;
            break;
        case O_MAX_BYTES:
            rc = units_parse_bytes(optarg, "--max-bytes", &o->run.max_bytes, &err);
            if (rc == ST_OK && (o->run.max_bytes < 8 || o->run.max_bytes > 1e13))
                rc = ST_RAISE(&err, ST_EINVAL, "--max-bytes '%s': allowed 8 B to 10 TB", optarg);
            break;
        case O_OPS: {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t && rc == ST_OK; t = strtok(NULL, ",")) {
                exec_bench_op op;
                rc = exec_bench_op_parse(t, &op, &err);
            }
            snprintf(o->run.ops, sizeof o->run.ops, "%s", optarg);
            break;
        }
        case O_FROM_RECORD:
            rc = units_parse_int(optarg, "--from-record", 0, INT64_MAX / 2, &o->from_record, &err);
            break;
        case O_ITERS:
            rc = units_parse_int(optarg, "--iters", 1, 100000, &v, &err);
            o->run.iters = (int)v;
            break;
        case O_TRANSPORT:
            if (strcmp(optarg, "mpi") != 0 && strcmp(optarg, "nccl") != 0)
                rc = ST_RAISE(&err, ST_EINVAL, "--transport '%s': allowed are mpi, nccl", optarg);
            else if (!exec_comm_built(optarg))
                rc = ST_RAISE(&err, ST_EINVAL, "--transport %s: not in this build (built: %s)",
                              optarg, exec_comm_names());
            snprintf(o->run.transport, sizeof o->run.transport, "%s", optarg);
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
            o->run.timeout_s = t;
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
    if (!strcmp(o->run.transport, "nccl") && (o->cpu || o->write)) {
        fprintf(stderr, "smdplan: bench: --transport nccl: only with the word comm and without "
                        "--write-catalog (the catalog entry describes the CPU device and MPI)\n");
        return 2;
    }
    return 0;
}

/* ---- recording and printing ---- */

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

/* A progress line on stderr (none with --json). */
static void say(const char *line, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

/* JSON text printed and freed (nothing when out of memory). */
static void print_json(char *s)
{
    if (s)
        printf("%s\n", s);
    free(s);
}

static void print_catalog_file(const char *path)
{
    printf("catalog: %s (load it with --catalog %s)\n", path, path);
}

/* smdplan bench gpu: measure (or read the record), make the entry, write
 * and record it, print. Frees b. */
static int bench_gpu(const bench_opts *o, exec_bench_cpu *b)
{
    st_err err = {0};
    int measured = o->from_record < 0, no_gpu = 0;
    int rc = measured ? exec_bench_here_gpu(&o->run, b, &no_gpu, &err)
                      : db_bench_load_gpu(o->db_path, o->from_record, b, &err);
    if (rc != ST_OK) {
        free(b);
        if (!no_gpu)
            return cli_fail(&err);
        /* no GPU here, or no CUDA libraries to ask: one line, exit 2 */
        fprintf(stderr, "smdplan: bench gpu: %s\n", err.msg);
        return 2;
    }
    int ngpu;
    double host_mem_bytes;
    exec_bench_gpu_host(b, &ngpu, &host_mem_bytes);
    char host[PLAN_HOST_SHORT_MAX];
    exec_bench_host_name(NULL, 0, host, sizeof host);
    data_host_bench in = {b, NULL, host, o->name};
    data_host_entries *es = NULL;
    rc = data_host_gpu_entries(&in, ngpu, host_mem_bytes, &es, &err);
    if (rc == ST_OK && o->write)
        rc = data_host_entries_write(es, o->write, o->force, &err);
    bench_record br = {b, NULL, rc == ST_OK ? &es->e[0].fig : NULL};
    int recorded_ok = measured ? cli_record(o->db_path, o->no_record, record_bench, &br) : 0;
    const char *written = o->write && rc == ST_OK ? o->write : NULL;
    if (o->json) {
        data_bench_doc d = {.device_key = "gpu", .device = b, .entry = es ? es->cat : NULL,
                            .catalog_file = written, .recorded = recorded_ok};
        print_json(data_bench_json(&d));
    } else {
        rpt_bench_cpu_text(stdout, b);
        if (rc == ST_OK)
            rpt_bench_gpu_entry(stdout, &es->e[0].h);
        if (written)
            print_catalog_file(written);
    }
    data_host_entries_free(es);
    free(b);
    return rc == ST_OK ? 0 : cli_fail(&err);
}

/* What was measured or read, and the entries made from it (text or
 * JSON). */
static void print_bench(const bench_opts *o, const exec_bench_cpu *cpu, int have_cpu,
                        const exec_bench_comm *comm, int have_comm, int64_t from_cpu,
                        int64_t from_comm, const data_host_entries *es, int rc, int recorded_ok)
{
    /* an entry measured under load predicts this host badly: said, whatever
     * the output's form */
    if (have_cpu && !from_cpu)
        rpt_bench_busy_warning(stderr, cpu);
    const char *written = o->write && rc == ST_OK ? o->write : NULL;
    if (o->json) {
        char *comm_json = have_comm ? exec_bench_comm_json(comm) : NULL;
        data_bench_doc d = {.device_key = "cpu", .device = have_cpu ? cpu : NULL,
                            .device_from_record = from_cpu, .comm_json = comm_json,
                            .comm_from_record = from_comm, .entry = es ? es->cat : NULL,
                            .with_curves = 1, .catalog_file = written,
                            .recorded = recorded_ok};
        print_json(data_bench_json(&d));
        free(comm_json);
        return;
    }
    if (have_cpu && o->cpu)
        rpt_bench_cpu_text(stdout, cpu);
    if (have_comm && o->comm)
        rpt_bench_comm_text(stdout, comm);
    if (from_cpu)
        printf("CPU figures from bench record %lld\n", (long long)from_cpu);
    if (from_comm)
        printf("transport figures from bench record %lld\n", (long long)from_comm);
    for (int t = 0; es && t < es->n; t++)
        rpt_bench_cpu_entry(stdout, &es->e[t].h, have_comm);
    if (written)
        print_catalog_file(written);
}

static void bench_opts_init(bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->cpu = o->comm = 1;
    o->run.threads[0] = 1;
    o->run.nthreads = 1;
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
    o.run.say = o.json ? NULL : say;
    if (o.gpu) {
        free(comm);
        return bench_gpu(&o, cpu);
    }
    int have_cpu = 0, have_comm = 0, rc = ST_OK;
    if (o.from_record >= 0) { /* nothing measured: a recorded bench */
        o.cpu = o.comm = 0;
        char host[EXEC_BENCH_NAME_MAX];
        exec_bench_host_name(host, sizeof host, NULL, 0);
        rc = db_bench_load(o.db_path, o.from_record, host, cpu, &have_cpu, comm, &have_comm,
                           &err);
    }
    if (o.cpu) {
        rc = exec_bench_here_cpu(&o.run, cpu, &err);
        have_cpu = rc == ST_OK;
    }
    if (rc == ST_OK && o.comm) {
        rc = exec_bench_here_comm(&o.run, comm, &err);
        have_comm = rc == ST_OK;
    }
    int64_t from_cpu = 0, from_comm = 0;
    if (rc == ST_OK)
        rc = db_bench_complete(o.db_path, o.from_record, cpu, &have_cpu, comm, &have_comm,
                               &from_cpu, &from_comm, &err);
    if (rc != ST_OK) {
        free(cpu);
        free(comm);
        return cli_fail(&err);
    }
    char host[PLAN_HOST_SHORT_MAX];
    exec_bench_host_name(NULL, 0, host, sizeof host);
    data_host_bench in = {have_cpu ? cpu : NULL, have_comm ? comm : NULL, host, o.name};
    data_host_entries *es = NULL;
    rc = data_host_cpu_entries(&in, o.run.threads, o.run.nthreads, &es, &err);
    if (rc == ST_OK && o.write) /* refused unless both measurements are there */
        rc = data_host_entries_write(es, o.write, o.force, &err);
    /* recorded: what was measured now (and the entry, with the first
     * thread count's figures) */
    bench_record br = {o.cpu ? cpu : NULL, o.comm ? comm : NULL,
                       es && es->n ? &es->e[0].fig : NULL};
    int recorded_ok = o.cpu || o.comm ? cli_record(o.db_path, o.no_record, record_bench, &br) : 0;
    print_bench(&o, cpu, have_cpu, comm, have_comm, from_cpu, from_comm, es, rc, recorded_ok);
    data_host_entries_free(es);
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
