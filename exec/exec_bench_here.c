/*
 * exec_bench_here.c: smdplan bench's measurements of this host
 * (exec_bench_here.h): which bench runs, on which programs, after which
 * checks, with a progress line before each long one. The measurements
 * themselves are exec_bench.c's, exec_bench_gpu.c's and
 * exec_bench_host.c's.
 */
#include "exec/exec_bench_here.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/exec_program.h"
#include "planner/plan_host_names.h"

static void say(const exec_bench_here *h, const char *line)
{
    if (h->say)
        h->say(line, h->say_ctx);
}

int exec_bench_here_cpu(const exec_bench_here *h, exec_bench_cpu *cpu, st_err *err)
{
    exec_bench_cpu_config cfg;
    exec_bench_cpu_config_default(&cfg);
    cfg.quick = h->quick;
    say(h, "measuring the CPU device (sgemm, triad)...");
    int rc = exec_bench_cpu_run(&cfg, cpu, err);
    if (rc == ST_OK && !h->quick)
        say(h, "measuring the executor's reference step...");
    char prog[EXEC_PROGRAM_PATH_MAX];
    exec_program_find(EXEC_BENCH_REF_PROGRAM, 0, prog, sizeof prog);
    for (int t = 0; rc == ST_OK && !h->quick && prog[0] && t < h->nthreads; t++)
        rc = exec_bench_ref_step_run(prog, h->threads[t], cpu, err);
    return rc;
}

int exec_bench_here_comm(const exec_bench_here *h, exec_bench_comm *out, st_err *err)
{
    say(h, "measuring the transport between ranks (mpirun)...");
    char prog[EXEC_PROGRAM_PATH_MAX];
    exec_program_find(EXEC_BENCH_RANK_PROGRAM, 0, prog, sizeof prog);
    if (!prog[0])
        return ST_RAISE(err, ST_ENOENT, "bench comm: %s is not next to smdplan (this build has "
                        "no MPI, or it was not built)", EXEC_BENCH_RANK_PROGRAM);
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    exec_bench_comm_job job = {.program = prog, .transport = h->transport, .ranks = h->ranks,
                               .cores = nc > 0 ? (int)nc : 1, .max_bytes = h->max_bytes,
                               .ops = h->ops, .iters = h->iters, .quick = h->quick,
                               .timeout_s = h->timeout_s};
    return exec_bench_comm_job_run(&job, out, err);
}

int exec_bench_here_gpu(const exec_bench_here *h, exec_bench_cpu *out, int *no_gpu, st_err *err)
{
    int visible = 0, cuda = exec_features_built().cuda;
    double gpu_bytes = 0;
    *no_gpu = 1;
    if (cuda) {
        int rc = exec_device_query("cuda", &visible, &gpu_bytes, err);
        if (rc != ST_OK)
            return rc;
    }
    if (visible < 1)
        return ST_RAISE(err, ST_EUNSUPPORTED, "no GPU: %s",
                        cuda ? "CUDA sees none on this host"
                             : "this build has no cuda device (built without CUDA)");
    say(h, "measuring the GPU through the executor's cuda device...");
    int rc = exec_bench_gpu_run("cuda", out, err);
    *no_gpu = rc == ST_EUNSUPPORTED || rc == ST_ENOENT;
    return rc;
}

void exec_bench_host_name(char *full, size_t nf, char *short_name, size_t ns)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0)
        h[0] = '\0';
    if (full)
        snprintf(full, nf, "%s", h[0] ? h : "localhost");
    if (short_name)
        plan_host_short_name(h, short_name, ns);
}

void exec_bench_gpu_host(const exec_bench_cpu *b, int *ngpu, double *host_mem_bytes)
{
    *ngpu = exec_device_count(b->device);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *host_mem_bytes = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}
