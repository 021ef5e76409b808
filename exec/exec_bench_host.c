/*
 * exec_bench_host.c: the host side of smdplan bench's runs: a rank program
 * started under launch/'s supervisor (launch_job.h) in a directory of its
 * own under $TMPDIR, and what it wrote read back.
 *
 *   exec_bench_comm_job_run   mpirun on the transport bench's rank program
 *                             (exec_bench_main.c); its JSON measurements
 *   exec_bench_ref_step_run   the executor's rank program (exec_rank_main.c)
 *                             on the reference model of plan_hwfit.h, one
 *                             rank on transport "self"; the medians of its
 *                             compute and optimizer phases
 *
 * The caller finds the programs and passes their paths. Nothing here prints
 * or exits; a job that fails is ST_EIO with its own last error line. The
 * directory and the files in it are ours and are removed on every path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/exec_bench.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_int.h"
#include "launch/launch_job.h"
#include "planner/plan_hwfit.h"

#define HOST_PATH_MAX 4096
/* The reference run's wall-clock limit: far above its PLAN_BENCH_REF_STEPS
 * steps (about 1 s each on one core of a small VM). */
#define REF_STEP_TIMEOUT_S 300.0
/* The transport bench's largest message and timed iterations by default:
 * nccl-tests' 1 GiB and -n 20; with quick, 4 MiB and 5. */
#define COMM_MAX_BYTES 1073741824.0
#define COMM_QUICK_MAX_BYTES (4.0 * 1048576.0)
#define COMM_ITERS 20
#define COMM_QUICK_ITERS 5
/* The supervisor's limit on the job beyond the ranks' own (--timeout), so
 * that the ranks end themselves first. */
#define COMM_JOB_GRACE_S 30.0

/* A directory of our own under $TMPDIR (else /tmp) named prefix-XXXXXX into
 * dir; what names it in the error message. */
static int make_dir(const char *prefix, const char *what, char *dir, size_t n, st_err *err)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, n, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
    if (!mkdtemp(dir))
        return ST_RAISE(err, ST_EIO, "%s: cannot make a directory under %s", what,
                        tmp && *tmp ? tmp : "/tmp");
    return ST_OK;
}

int exec_bench_comm_job_run(const exec_bench_comm_job *job, exec_bench_comm *out, st_err *err)
{
    char dir[HOST_PATH_MAX];
    int rc = make_dir("smdplan-bench", "bench comm", dir, sizeof dir, err);
    if (rc != ST_OK)
        return rc;
    const char *transport = job->transport && job->transport[0] ? job->transport : "mpi";
    int nccl = !strcmp(transport, "nccl"), gpus = 0;
    double gpu_bytes = 0;
    /* the modules the ranks will open, found here (exec_module.h) */
    if ((nccl && !job->ranks && exec_device_query("cuda", &gpus, &gpu_bytes, err) != ST_OK) ||
        (nccl && exec_dev_present("cuda", err) != ST_OK) ||
        exec_comm_present(transport, err) != ST_OK) {
        rmdir(dir);
        return err->code;
    }
    int ranks = job->ranks ? job->ranks : nccl ? gpus : job->cores < 2 ? 2 : job->cores;
    if (nccl && ranks < 2) {
        rmdir(dir);
        return ST_RAISE(err, ST_EINVAL, "bench comm --transport nccl: %d GPU%s on this host; NCCL "
                        "needs one GPU per rank and at least 2 ranks", ranks,
                        ranks == 1 ? "" : "s");
    }
    double want = job->max_bytes > 0 ? job->max_bytes
                  : job->quick       ? COMM_QUICK_MAX_BYTES
                                     : COMM_MAX_BYTES;
    double max_bytes = exec_bench_comm_max_bytes(want, ranks);
    char a_ranks[16], a_max[32], a_iters[16], a_out[HOST_PATH_MAX + 16], a_timeout[32];
    snprintf(a_ranks, sizeof a_ranks, "%d", ranks);
    snprintf(a_max, sizeof a_max, "%.0f", max_bytes);
    snprintf(a_iters, sizeof a_iters, "%d",
             job->iters ? job->iters : job->quick ? COMM_QUICK_ITERS : COMM_ITERS);
    snprintf(a_out, sizeof a_out, "%s/comm.json", dir);
    double timeout = job->timeout_s > 0 ? job->timeout_s : EXEC_BENCH_COMM_TIMEOUT_S;
    snprintf(a_timeout, sizeof a_timeout, "%.0f", timeout);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)"mpirun";
    argv[n++] = (char *)"-n";
    argv[n++] = a_ranks;
    if (ranks > job->cores)
        argv[n++] = (char *)"--oversubscribe";
    argv[n++] = (char *)job->program;
    argv[n++] = (char *)"--out";
    argv[n++] = a_out;
    argv[n++] = (char *)"--max-bytes";
    argv[n++] = a_max;
    argv[n++] = (char *)"--iters";
    argv[n++] = a_iters;
    argv[n++] = (char *)"--timeout";
    argv[n++] = a_timeout;
    if (job->ops && job->ops[0]) {
        argv[n++] = (char *)"--ops";
        argv[n++] = (char *)job->ops;
    }
    if (nccl) {
        argv[n++] = (char *)"--transport";
        argv[n++] = (char *)"nccl";
    }
    argv[n] = NULL;
    /* Open MPI refuses to run as root without both (its mpirun(1)) */
    char *env[3] = {NULL, NULL, NULL};
    char e1[] = "OMPI_ALLOW_RUN_AS_ROOT=1", e2[] = "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
    if (geteuid() == 0) {
        env[0] = e1;
        env[1] = e2;
    }
    launch_job l = {argv, env, timeout + COMM_JOB_GRACE_S, NULL, NULL, NULL};
    launch_job_result r;
    rc = launch_job_run(&l, &r, err);
    char *text = NULL;
    if (rc == ST_OK && (r.exit_status != 0 || r.timed_out || r.interrupted)) {
        char line[512];
        launch_job_error_line(&r, EXEC_BENCH_RANK_PROGRAM ": ", line, sizeof line);
        rc = ST_RAISE(err, ST_EIO, "bench comm: the job %s (status %d)%s%s",
                      r.timed_out ? "timed out" : r.interrupted ? "was interrupted" : "failed",
                      r.exit_status, line[0] ? ": " : "", line);
    }
    if (rc == ST_OK)
        rc = exec__read_file(a_out, &text, NULL, err);
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

/* The median of n values (sorted here). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Run the reference step cfg (its model, layout and device) on one rank in
 * dir and append its medians to b (exec_bench_ref_step_run). */
static int ref_step_in(const char *program, const char *dir, exec_config *cfg, int threads,
                       exec_bench_cpu *b, st_err *err)
{
    cfg->train.steps = PLAN_BENCH_REF_STEPS;
    snprintf(cfg->transport, sizeof cfg->transport, "self");
    cfg->threads_per_rank = threads;
    cfg->progress = 0;
    char conf[HOST_PATH_MAX + 16], res[HOST_PATH_MAX + 16];
    snprintf(conf, sizeof conf, "%s/CONFIG.json", dir);
    snprintf(res, sizeof res, "%s/RESULT.json", dir);
    int rc = exec_config_write(conf, cfg, err);
    if (rc == ST_OK)
        rc = plan_model_finish(&cfg->model, err);
    int64_t params = cfg->model.params;
    int64_t tokens = (int64_t)cfg->layout.global_batch * cfg->model.seq;
    char *argv[] = {(char *)program, (char *)"--config", conf, (char *)"--result", res, NULL};
    launch_job l = {argv, NULL, REF_STEP_TIMEOUT_S, NULL, NULL, NULL};
    launch_job_result lr;
    if (rc == ST_OK)
        rc = launch_job_run(&l, &lr, err);
    exec_result r;
    exec_result_init(&r);
    if (rc == ST_OK && lr.exit_status != 0) {
        char line[512];
        launch_job_error_line(&lr, EXEC_BENCH_REF_PROGRAM ": ", line, sizeof line);
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
        double mc = median(comp, n), mo = median(opt, n);
        b->elem[b->nelem++] = (exec_bench_elem){"ref_compute", threads, tokens, n, mc,
                                                mc / (double)tokens};
        b->elem[b->nelem++] = (exec_bench_elem){"ref_optimizer", threads, params, n, mo,
                                                mo / (double)params};
    }
    exec_result_free(&r);
    unlink(conf); /* ours, in a directory of our own */
    unlink(res);
    return rc;
}

int exec_bench_ref_step_run(const char *program, int threads, exec_bench_cpu *b, st_err *err)
{
    char dir[HOST_PATH_MAX];
    int rc = make_dir("smdplan-ref", "bench", dir, sizeof dir, err);
    if (rc != ST_OK)
        return rc;
    exec_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        rmdir(dir);
        return ST_RAISE(err, ST_ENOMEM, "bench: out of memory");
    }
    exec_config_default(cfg);
    plan_bench_ref_model(&cfg->model);
    plan_bench_ref_layout(&cfg->layout);
    rc = ref_step_in(program, dir, cfg, threads, b, err);
    free(cfg);
    rmdir(dir);
    return rc;
}
