/*
 * bench_exec.c: how fast the CPU executor trains, against what this
 * machine's BLAS can do.
 *
 *   bench_exec [--threads N] [--quick] [--only gpt|llama|mpi]
 *
 * 1. The ceiling: OpenBLAS's sgemm on large square fp32 matrices (2048, or
 *    1024 with --quick), with N threads, its answer checked on sampled
 *    entries against a double-precision dot product before it is timed;
 *    median of 5, measured again right before and after each model run
 *    (a machine shared with other work slows both alike; the ratio uses
 *    the median of the rates around that run).
 * 2. One rank (in this process, the one-rank transport, N BLAS threads):
 *    training steps of a GPT with hidden 768 (and a Llama of the same width):
 *    median step time of the measured steps, tokens/s, and the achieved
 *    FLOP/s = the FLOPs the device counted per step (its matrix products:
 *    equal to the planner's model FLOPs without recompute) / step time,
 *    as a fraction of the sgemm rate. The target is >= 60 %. The fastest
 *    measured step is printed too (on a machine shared with other work the
 *    median shows the sharing, the fastest step what the code reaches).
 * 3. MPI overhead: the same global batch on 1, 2 and 4 ranks
 *    (data-parallel, smdplan-rank under mpiexec --oversubscribe, N / R BLAS
 *    threads per rank, at least 1): step time, tokens/s, the mean DP time
 *    per rank, and the overhead t(R) / t(1) - 1. On a machine with fewer
 *    cores than ranks the ranks share cores, which the overhead includes.
 *
 * Rows "bench_exec,KEY,VALUE" repeat every figure for scripts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "exec/exec.h"
#include "exec/exec_blas.h"
#include "exec/exec_comm.h"
#include "exec/exec_run.h"

#ifndef SMD_RANK_PROG
#define SMD_RANK_PROG "smdplan-rank"
#endif
#ifndef SMD_MPIEXEC
#define SMD_MPIEXEC "mpiexec"
#endif

/* OpenBLAS as the CPU device opens it (exec_blas.h): sgemm by name could
 * be GSL's reference CBLAS, which the program links too. */
static double sgemm_rate(int n, int threads, int quiet)
{
    const exec_blas *blas = NULL;
    st_err err = {0};
    if (exec_blas_open(&blas, &err) != ST_OK) {
        fprintf(stderr, "bench_exec: %s\n", err.msg);
        exit(1);
    }
    blas->set_num_threads(threads);
    float *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
          *c = malloc((size_t)n * n * sizeof *c);
    unsigned s = 12345;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
        s = s * 1103515245u + 12345u;
        b[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
    }
    /* verify before timing */
    blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
    for (int k = 0; k < 16; k++) {
        int i = (k * 7919) % n, j = (k * 104729) % n;
        double ref = 0;
        for (int p = 0; p < n; p++)
            ref += (double)a[(size_t)i * n + p] * (double)b[(size_t)p * n + j];
        if (fabs(ref - c[(size_t)i * n + j]) > 1e-3 * sqrt((double)n)) {
            fprintf(stderr, "bench_exec: sgemm gives %g at (%d, %d), expected %g\n",
                    c[(size_t)i * n + j], i, j, ref);
            exit(1);
        }
    }
    double t[5];
    for (int r = 0; r < 5; r++) {
        double t0 = bench_now_s();
        blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
        t[r] = bench_now_s() - t0;
    }
    double med = bench_median(t, 5), rate = 2.0 * n * (double)n * n / med;
    if (!quiet) {
        printf("sgemm %dx%d, %d threads: median %.4f s (%.4f .. %.4f), %.1f GFLOP/s\n", n, n,
               threads, med, t[0], t[4], rate / 1e9);
        printf("bench_exec,sgemm_gflops,%.2f\n", rate / 1e9);
    }
    free(a), free(b), free(c);
    return rate;
}

/* The benchmark model as CONFIG.json text. */
static void model_json(char *buf, size_t n, const char *arch, int quick, int mb, int dp,
                       int threads, const char *transport)
{
    int steps = quick ? 5 : 10;
    snprintf(buf, n,
             "{\"version\": 1, \"model\": {\"name\": \"bench-%s\", \"arch\": \"%s\", "
             "\"layers\": %d, \"hidden\": 768, \"heads\": 12, \"kv_heads\": %d, \"ffn\": %d, "
             "\"seq\": 256, \"vocab\": 8192}, \"layout\": {\"dp\": %d, \"micro_batch\": %d, "
             "\"microbatches\": 1}, \"train\": {\"steps\": %d, \"warmup_steps_unmeasured\": 2}, "
             "\"device\": \"cpu\", \"transport\": \"%s\", \"threads_per_rank\": %d, "
             "\"progress\": false, \"timeout_s\": 600}",
             arch, arch, quick ? 2 : 4, strcmp(arch, "llama") == 0 ? 4 : 12,
             strcmp(arch, "llama") == 0 ? 2048 : 3072, dp, mb, steps, transport, threads);
}

/* Median step time of the measured steps (*best: the fastest). */
static double median_step_best(const exec_result *r, double *best)
{
    double t[64];
    int n = 0;
    for (int i = 0; i < r->nsteps && n < 64; i++)
        if (r->steps[i].measured)
            t[n++] = r->steps[i].time_s;
    double med = n ? bench_median(t, n) : NAN;
    if (best)
        *best = n ? t[0] : NAN;
    return med;
}

static double median_step(const exec_result *r)
{
    return median_step_best(r, NULL);
}

static void one_rank(const char *arch, int quick, int threads, int gemm_n)
{
    double rates[3];
    rates[0] = sgemm_rate(gemm_n, threads, 1);
    char json[2048];
    model_json(json, sizeof json, arch, quick, 8, 1, threads, "self");
    exec_config c;
    st_err err = {0};
    exec_comm *world = NULL;
    exec_result r;
    if (exec_config_parse(json, &c, &err) || exec_comm_open("self", 600, &world, &err) ||
        exec_run(&c, world, &r, &err)) {
        fprintf(stderr, "bench_exec: %s\n", err.msg);
        exit(1);
    }
    rates[1] = sgemm_rate(gemm_n, threads, 1);
    rates[2] = sgemm_rate(gemm_n, threads, 1);
    double sgemm = bench_median(rates, 3);
    double best, t = median_step_best(&r, &best), flops = r.hardware_flops_per_step / t;
    printf("1 rank %s (hidden 768, %lld layers, seq 256, batch 8, %d threads): step %.3f s, "
           "%.0f tokens/s, %.1f GFLOP/s = %.0f %% of sgemm's %.1f GFLOP/s around it (target "
           ">= 60 %%); loss %.3f -> %.3f\n",
           arch, (long long)c.model.layers, threads, t, r.tokens_per_step / t, flops / 1e9,
           100 * flops / sgemm, sgemm / 1e9, r.steps[0].loss, r.steps[r.nsteps - 1].loss);
    printf("  fastest step %.3f s: %.1f GFLOP/s = %.0f %% of sgemm\n", best,
           r.hardware_flops_per_step / best / 1e9, 100 * r.hardware_flops_per_step / best / sgemm);
    printf("bench_exec,%s_step_s,%.4f\nbench_exec,%s_tokens_per_s,%.1f\nbench_exec,%s_gflops,%.2f\n"
           "bench_exec,%s_sgemm_ratio,%.3f\nbench_exec,%s_best_sgemm_ratio,%.3f\n",
           arch, t, arch, r.tokens_per_step / t, arch, flops / 1e9, arch, flops / sgemm, arch,
           r.hardware_flops_per_step / best / sgemm);
    double comp = 0, opt = 0;
    int nm = 0;
    for (int i = 0; i < r.nsteps; i++)
        if (r.steps[i].measured) {
            comp += r.steps[i].phases.compute_s;
            opt += r.steps[i].phases.optimizer_s;
            nm++;
        }
    printf("  mean phases of a measured step: compute %.3f s, optimizer %.3f s; model FLOPs %.3g, "
           "hardware FLOPs %.3g per step; peak memory %.1f MiB (RSS %.1f MiB)\n",
           comp / (nm ? nm : 1), opt / (nm ? nm : 1), r.model_flops_per_step,
           r.hardware_flops_per_step,
           r.rank_stats[0].peak_memory_bytes / 1048576.0, r.rank_stats[0].max_rss_bytes / 1048576.0);
    exec_result_free(&r);
    exec_comm_free(world);
}

/* The same global batch over R data-parallel ranks under mpiexec. */
static int mpi_run(int R, int quick, int threads, const char *dir, double *step_s, double *dp_s,
                   double *tps)
{
    char json[2048], cfg[512], res[512], cmd[2048];
    int per = threads / R > 0 ? threads / R : 1;
    model_json(json, sizeof json, "gpt", quick, 8 / R, R, per, "mpi");
    snprintf(cfg, sizeof cfg, "%s/config-%d.json", dir, R);
    snprintf(res, sizeof res, "%s/result-%d.json", dir, R);
    FILE *f = fopen(cfg, "w");
    if (!f)
        return 1;
    fputs(json, f);
    fclose(f);
    /* --bind-to none: Open MPI binds a rank to one core by default, which
     * would put all of its BLAS threads on that core */
    snprintf(cmd, sizeof cmd, "%s -n %d --oversubscribe --bind-to none %s --config %s --result %s",
             SMD_MPIEXEC, R, SMD_RANK_PROG, cfg, res);
    int st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench_exec: %s failed\n", cmd);
        return 1;
    }
    exec_result r;
    st_err err = {0};
    if (exec_result_read(res, &r, &err)) {
        fprintf(stderr, "bench_exec: %s\n", err.msg);
        return 1;
    }
    *step_s = median_step(&r);
    *tps = r.tokens_per_step / *step_s;
    *dp_s = 0;
    int n = 0;
    for (int i = 0; i < r.nsteps; i++)
        if (r.steps[i].measured) {
            *dp_s += r.steps[i].phases.dp_comm_s;
            n++;
        }
    *dp_s /= n ? n : 1;
    exec_result_free(&r);
    return 0;
}

int main(int argc, char **argv)
{
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), quick = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_exec [--threads N] [--quick] [--only gpt|llama|mpi]\n");
            return 2;
        }
    }
    if (threads < 1)
        threads = 1;
    int gemm_n = quick ? 1024 : 2048;
    sgemm_rate(gemm_n, threads, 0);
    if (!only || strcmp(only, "gpt") == 0)
        one_rank("gpt", quick, threads, gemm_n);
    if (!only || strcmp(only, "llama") == 0)
        one_rank("llama", quick, threads, gemm_n);
    if (only && strcmp(only, "mpi") != 0)
        return 0;

    char dir[] = "/tmp/bench_exec_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    double t1 = 0;
    printf("MPI ranks (data parallel, the same global batch of 8 x 256 tokens, GPT):\n");
    for (int R = 1; R <= 4; R *= 2) {
        double t, dp, tps;
        if (mpi_run(R, quick, threads, dir, &t, &dp, &tps))
            return 1;
        if (R == 1)
            t1 = t;
        printf("  %d rank%s: step %.3f s, %.0f tokens/s, DP comm %.3f s per rank, overhead "
               "against 1 rank %+.1f %%\n",
               R, R > 1 ? "s" : " ", t, tps, dp, 100 * (t / t1 - 1));
        printf("bench_exec,mpi%d_step_s,%.4f\nbench_exec,mpi%d_overhead,%.4f\n", R, t, R,
               t / t1 - 1);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_exec: could not remove %s\n", dir);
    return 0;
}
