/*
 * exec_bench.c: this host's CPU device, measured (see exec_bench.h).
 *
 * GEMMs are timed the way the CPU device calls them: cblas_sgemm on
 * row-major fp32 with the weight transposed (C = A B^T). Each shape runs one
 * warm-up, then repetitions until min_time_s has passed (at least three);
 * the median repetition is kept (median and not best: the planner predicts
 * a typical step). Before timing, a few entries of C are checked against a
 * double-precision dot product within the rounding bound of a k-term fp32
 * sum (Higham 2002, Accuracy and Stability of Numerical Algorithms, Sec.
 * 3.1: |error| <= k u sum |a_i b_i| to first order, u = FLT_EPSILON / 2).
 *
 * The triad follows STREAM (McCalpin 1995, stream.c): three arrays of
 * doubles much larger than the last-level cache (STREAM's rule: each at
 * least four times the caches), a[i] = b[i] + q c[i], 24 bytes counted per
 * element, the best of the repetitions reported. Each thread first touches
 * and later works on its own contiguous chunk, as STREAM's OpenMP loops do.
 */
#include "exec/exec_bench.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec_blas.h"
#include "exec/exec_comm.h"

#define DEFAULT_MIN_TIME_S 0.2
#define DEFAULT_MAX_DIM 2048
#define DEFAULT_TRIAD_BYTES (64.0 * 1048576.0)
#define MIN_TRIAD_BYTES (4.0 * 1048576.0)
#define MIN_REPS 3
#define MAX_REPS 4096
#define TRIAD_REPS 5             /* STREAM's NTIMES is 10; 5 keeps the bench short */
#define TRIAD_SCALAR 3.0         /* STREAM's scalar */
#define TRIAD_BYTES_PER_ELEM 24.0
#define CHECK_ENTRIES 16

void exec_bench_cpu_config_default(exec_bench_cpu_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->min_time_s = DEFAULT_MIN_TIME_S;
    cfg->max_dim = DEFAULT_MAX_DIM;
    cfg->triad_bytes = DEFAULT_TRIAD_BYTES;
}

int exec_bench_thread_counts(int max, int *out)
{
    int n = 0;
    if (max < 1)
        max = 1;
    for (int t = 1; t < max && n < EXEC_BENCH_THREADS_MAX - 1; t *= 2)
        out[n++] = t;
    out[n++] = max;
    return n;
}

/* ---- host facts ---- */

static void read_cpu_model(char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(buf, n, "%s", v);
        size_t k = strlen(buf);
        while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
            buf[--k] = '\0';
        break;
    }
    fclose(f);
}

/* ---- GEMM ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void exec__bench_sort(double *v, int n)
{
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, cmp_double);
}

/* xorshift64 for the operands: any values in [-1, 1) will do, the same
 * every run. */
static float next_val(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* OpenBLAS's functions (exec_blas.h), set by exec_bench_cpu_run. */
static const exec_blas *blas;

static void sgemm_abt(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c)
{
    blas->sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k,
                b, (int)k, 0.0f, c, (int)n);
}

/* C = A B^T right at CHECK_ENTRIES places spread over C? */
static int check_gemm(int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                      const float *c, st_err *err)
{
    for (int e = 0; e < CHECK_ENTRIES; e++) {
        int64_t i = (m - 1) * e / (CHECK_ENTRIES - 1), j = (n - 1) * ((e * 7) % CHECK_ENTRIES) /
                                                          (CHECK_ENTRIES - 1);
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < k; p++) {
            double t = (double)a[i * k + p] * (double)b[j * k + p];
            ref += t;
            mag += fabs(t);
        }
        double bound = (double)k * FLT_EPSILON * mag + FLT_MIN;
        double got = c[i * n + j];
        if (!(fabs(got - ref) <= bound))
            return ST_RAISE(err, ST_EINTERNAL,
                            "sgemm %lldx%lldx%lld gives C[%lld][%lld] = %g, expected %g (bound %g)",
                            (long long)m, (long long)n, (long long)k, (long long)i, (long long)j,
                            got, ref, bound);
    }
    return ST_OK;
}

static int time_gemm(int threads, int64_t m, int64_t n, int64_t k, double min_time_s,
                     double *times, exec_bench_gemm *out, st_err *err)
{
    float *a = malloc((size_t)(m * k) * sizeof *a), *b = malloc((size_t)(n * k) * sizeof *b);
    float *c = malloc((size_t)(m * n) * sizeof *c);
    int rc = ST_OK;
    if (!a || !b || !c) {
        rc = ST_RAISE(err, ST_ENOMEM, "bench: out of memory for a %lldx%lldx%lld GEMM",
                      (long long)m, (long long)n, (long long)k);
        goto done;
    }
    uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)(m * 131 + n * 7 + k);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = next_val(&s);
    for (int64_t i = 0; i < n * k; i++)
        b[i] = next_val(&s);
    blas->set_num_threads(threads);
    sgemm_abt(m, n, k, a, b, c); /* warm-up: threads started, pages touched */
    if ((rc = check_gemm(m, n, k, a, b, c, err)) != ST_OK)
        goto done;
    int reps = 0;
    double start = exec_now_s();
    while (reps < MAX_REPS && (reps < MIN_REPS || exec_now_s() - start < min_time_s)) {
        double t0 = exec_now_s();
        sgemm_abt(m, n, k, a, b, c);
        times[reps++] = exec_now_s() - t0;
    }
    exec__bench_sort(times, reps);
    double med = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    *out = (exec_bench_gemm){"sgemm", threads, m, n, k, reps, med,
                             2.0 * (double)m * (double)n * (double)k / med, 0};
done:
    free(a);
    free(b);
    free(c);
    return rc;
}

typedef struct shape {
    int64_t m, n, k;
} shape;

/* Square sides from 128 up to max_dim (doubling), a misaligned side beside
 * the largest that is a multiple of 8 below 1024 (how a side that is not a
 * multiple of 8 fares), and the four linear layers of a transformer block
 * forward (QKV h -> 3h, projection h -> h, MLP up h -> 4h and down 4h -> h)
 * for T tokens per microbatch and hidden h, plus a weight-gradient shape
 * (h x h over T: k = T). */
static int shapes_of(const exec_bench_cpu_config *cfg, shape *out, int cap)
{
    int n = 0;
    for (int64_t d = 128; d <= cfg->max_dim && n < cap; d *= 2)
        out[n++] = (shape){d, d, d};
    if (cfg->max_dim >= 1024 && n < cap)
        out[n++] = (shape){1023, 1023, 1023};
    static const int64_t tokens_full[] = {512, 2048}, hidden_full[] = {256, 768};
    static const int64_t tokens_quick[] = {256}, hidden_quick[] = {128};
    const int64_t *tok = cfg->quick ? tokens_quick : tokens_full;
    const int64_t *hid = cfg->quick ? hidden_quick : hidden_full;
    int nt = cfg->quick ? 1 : 2, nh = cfg->quick ? 1 : 2;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j < nh; j++) {
            int64_t T = tok[i], h = hid[j];
            shape s[] = {{T, 3 * h, h}, {T, h, h}, {T, 4 * h, h}, {T, h, 4 * h}, {h, h, T}};
            for (size_t q = 0; q < sizeof s / sizeof s[0] && n < cap; q++)
                out[n++] = s[q];
        }
    return n;
}

/* ---- triad ---- */

typedef struct triad_part {
    double *a, *b, *c;
    size_t lo, hi;
    int init;
} triad_part;

static void *triad_worker(void *p)
{
    triad_part *t = p;
    if (t->init) {
        for (size_t i = t->lo; i < t->hi; i++) {
            t->a[i] = 1.0;
            t->b[i] = 2.0;
            t->c[i] = 0.5;
        }
        return NULL;
    }
    const double q = TRIAD_SCALAR;
    double *restrict a = t->a;
    const double *restrict b = t->b, *restrict c = t->c;
    for (size_t i = t->lo; i < t->hi; i++)
        a[i] = b[i] + q * c[i];
    return NULL;
}

/* One pass over [0, n) by `threads` threads (the caller's and threads - 1
 * more). */
static int triad_pass(double *a, double *b, double *c, size_t n, int threads, int init,
                      st_err *err)
{
    pthread_t tid[64];
    triad_part part[64];
    if (threads > 64)
        threads = 64;
    for (int t = 0; t < threads; t++)
        part[t] = (triad_part){a, b, c, n * (size_t)t / (size_t)threads,
                               n * (size_t)(t + 1) / (size_t)threads, init};
    int started = 0, rc = ST_OK;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&tid[t], NULL, triad_worker, &part[t]) != 0) {
            rc = ST_RAISE(err, ST_EINTERNAL, "bench: cannot start triad thread %d of %d", t,
                          threads);
            break;
        }
        started = t;
    }
    triad_worker(&part[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    return rc;
}

static int time_triad(int threads, double array_bytes, exec_bench_mem *out, st_err *err)
{
    size_t n = (size_t)(array_bytes / sizeof(double));
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    int rc = ST_OK;
    if (!a || !b || !c) {
        rc = ST_RAISE(err, ST_ENOMEM, "bench: out of memory for three triad arrays of %.0f bytes",
                      array_bytes);
        goto done;
    }
    if ((rc = triad_pass(a, b, c, n, threads, 1, err)) != ST_OK)
        goto done;
    double best = INFINITY;
    for (int r = 0; r < TRIAD_REPS && rc == ST_OK; r++) {
        double t0 = exec_now_s();
        rc = triad_pass(a, b, c, n, threads, 0, err);
        double t = exec_now_s() - t0;
        if (t < best)
            best = t;
    }
    /* verify as STREAM's checkSTREAMresults does: every a[i] = 2 + q 0.5 */
    for (size_t i = 0; rc == ST_OK && i < n; i += n / 97 + 1)
        if (a[i] != 2.0 + TRIAD_SCALAR * 0.5)
            rc = ST_RAISE(err, ST_EINTERNAL, "bench: triad result a[%zu] = %g, expected %g", i,
                          a[i], 2.0 + TRIAD_SCALAR * 0.5);
    if (rc == ST_OK)
        *out = (exec_bench_mem){threads, (double)n * sizeof(double), TRIAD_REPS, best,
                                TRIAD_BYTES_PER_ELEM * (double)n / best};
done:
    free(a);
    free(b);
    free(c);
    return rc;
}

/* ---- how steady ---- */

double exec__bench_loadavg(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double v = -1;
    if (f) {
        if (fscanf(f, "%lf", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

double exec__bench_iqr_spread(const double *t, int n)
{
    if (n <= 0)
        return 0.0;
    double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    return med > 0 ? (t[(3 * n) / 4] - t[n / 4]) / med : 0.0;
}

void exec__bench_spreads(exec_bench_cpu *out, double *v, int n)
{
    out->spread_median = out->spread_worst = 0;
    if (n <= 0)
        return;
    exec__bench_sort(v, n);
    out->spread_median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    out->spread_worst = v[n - 1];
}

/* ---- the whole measurement ---- */

int exec_bench_cpu_run(const exec_bench_cpu_config *cfg_in, exec_bench_cpu *out, st_err *err)
{
    exec_bench_cpu_config cfg;
    exec_bench_cpu_config_default(&cfg);
    if (cfg_in) {
        cfg.quick = cfg_in->quick;
        cfg.max_threads = cfg_in->max_threads;
        if (cfg_in->min_time_s > 0)
            cfg.min_time_s = cfg_in->min_time_s;
        if (cfg_in->max_dim > 0)
            cfg.max_dim = cfg_in->max_dim;
        if (cfg_in->triad_bytes > 0)
            cfg.triad_bytes = cfg_in->triad_bytes;
    }
    if (cfg.max_dim < 128 || cfg.max_dim > 16384)
        return ST_RAISE(err, ST_EINVAL, "bench: largest GEMM side %lld; allowed 128 to 16384",
                        (long long)cfg.max_dim);
    if (cfg.quick && cfg.max_dim > 512)
        cfg.max_dim = 512;
    int brc = exec_blas_open(&blas, err);
    if (brc != ST_OK)
        return brc;
    memset(out, 0, sizeof *out);
    out->load_start = exec__bench_loadavg();
    if (gethostname(out->host, sizeof out->host - 1) != 0)
        snprintf(out->host, sizeof out->host, "unknown");
    read_cpu_model(out->cpu_model, sizeof out->cpu_model);
    const char *conf = blas->get_config(), *core = blas->get_corename();
    snprintf(out->blas, sizeof out->blas, "%s%s%s", conf ? conf : "OpenBLAS", core ? " core " : "",
             core ? core : "");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out->cores = cores > 0 ? (int)cores : 1;
    out->mem_bytes = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
    if (cfg.max_threads < 1)
        cfg.max_threads = out->cores;
    if (cfg.max_threads > 64)
        return ST_RAISE(err, ST_EINVAL, "bench: %d threads; allowed 1 to 64", cfg.max_threads);
    out->nthreads = exec_bench_thread_counts(cfg.max_threads, out->threads);

    double triad = cfg.triad_bytes;
    if (out->mem_bytes > 0 && triad > out->mem_bytes / 16)
        triad = out->mem_bytes / 16;
    if (cfg.quick && triad > MIN_TRIAD_BYTES * 4)
        triad = MIN_TRIAD_BYTES * 4;
    if (triad < MIN_TRIAD_BYTES)
        triad = MIN_TRIAD_BYTES;

    shape sh[32];
    int nsh = shapes_of(&cfg, sh, 32);
    double *times = malloc(MAX_REPS * sizeof *times);
    if (!times)
        return ST_RAISE(err, ST_ENOMEM, "bench: out of memory");
    double min_time = cfg.quick ? fmin(cfg.min_time_s, 0.02) : cfg.min_time_s;
    int rc = ST_OK;
    for (int ti = 0; rc == ST_OK && ti < out->nthreads; ti++) {
        int t = out->threads[ti];
        for (int s = 0; rc == ST_OK && s < nsh && out->ngemm < EXEC_BENCH_GEMM_MAX; s++)
            if ((rc = time_gemm(t, sh[s].m, sh[s].n, sh[s].k, min_time, times,
                                &out->gemm[out->ngemm], err)) == ST_OK)
                out->ngemm++;
        if (rc == ST_OK && (rc = time_triad(t, triad, &out->mem[out->nmem], err)) == ST_OK)
            out->nmem++;
    }
    blas->set_num_threads(1);
    free(times);
    if (rc == ST_OK)
        rc = exec_bench_dev_run("cpu", &cfg, out, err);
    out->load_end = exec__bench_loadavg();
    return rc;
}
