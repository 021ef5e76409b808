/*
 * test_rpt_bench_text.c: smdplan bench's text (reports/rpt_bench_text.c),
 * on the measurements of test_bench_fixture.h.
 *
 * The device's page: the host line, one row per GEMM whose model column is
 * the fitted model's rate (the fixture follows the model exactly, so it
 * equals the measured rate), each thread count's fit summary and the
 * steadiness line. The transport's table: one row per size, time in us,
 * algbw = S / t and busbw = algbw x 2(n-1)/n for all-reduce. The warning
 * of a busy host, and none for a quiet one. The entry lines, with and
 * without links, and a GPU's.
 */
#include "test_util.h"

#include <stdlib.h>

#include "reports/rpt_bench.h"
#include "test_bench_fixture.h"

/* What call printed to f, a memory stream, into text (malloc'd). */
#define CAPTURE(text, call)                                                                    \
    do {                                                                                       \
        size_t len_ = 0;                                                                       \
        FILE *f = open_memstream(&(text), &len_);                                              \
        assert_non_null(f);                                                                    \
        call;                                                                                  \
        fclose(f);                                                                             \
    } while (0)

static int lines_starting(const char *text, const char *prefix)
{
    int n = 0;
    size_t k = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += !strncmp(p, prefix, k);
    return n;
}

static void cpu_page(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    bench_fixture_cpu(&b);
    char *t = NULL;
    CAPTURE(t, rpt_bench_cpu_text(f, &b));
    assert_text(t, TEXTS("host box7.example.com: 8 cores, ", " memory, Test CPU 9000\n"
                         "BLAS: OpenBLAS test\n\n",
                         "GEMM       threads       m       n       k   reps        time   "
                         "GFLOP/s     model\n",
                         "  1 thread: peak (asymptote of the sgemm rates) 200.00 GFLOP/s, "
                         "gemm_dim_half 24.0, rms 0.0%, worst 0.0%, misaligned factor nan; ",
                         "  2 threads: peak (asymptote of the sgemm rates) 200.00 GFLOP/s",
                         "\nsteadiness: "),
                NULL);
    assert_int_equal(lines_starting(t, "sgemm "), b.ngemm);
    /* each row: the measured rate and the model's, equal to the 0.01 GFLOP/s
     * both are printed to */
    int rows = 0;
    for (const char *p = strstr(t, "\nsgemm "); p; p = strstr(p + 1, "\nsgemm ")) {
        char kind[16], unit[16];
        int threads, reps;
        long long m, n, k;
        double time, rate, model;
        assert_int_equal(sscanf(p + 1, "%15s %d %lld %lld %lld %d %lf %15s %lf %lf", kind,
                                &threads, &m, &n, &k, &reps, &time, unit, &rate, &model),
                         10);
        assert_true(rate > 0 && fabs(rate - model) <= 0.0100001);
        rows++;
    }
    assert_int_equal(rows, b.ngemm);
    free(t);

    /* an elementwise kernel: its row under its thread count */
    b.elem[b.nelem++] = (plan_bench_elem){"gelu_fwd", 2, 131072, 9, 1.25e-3, 1.25e-3 / 131072};
    CAPTURE(t, rpt_bench_cpu_text(f, &b));
    assert_text(t, TEXTS("gelu_fwd         2  131072 elements                        9.537 ns per "
                         "element\n"),
                NULL);
    free(t);
}

static void comm_table(void **state)
{
    (void)state;
    static plan_bench_comm c;
    bench_fixture_comm(&c, 1);
    char *t = NULL;
    CAPTURE(t, rpt_bench_comm_text(f, &c));
    /* 64 MiB all-reduce over 4 ranks: t = 5 us + 1.5 x 67108864 / 2e9 s =
     * 50336.648 us; algbw 1.333 GB/s, busbw 1.5 x that */
    assert_text(t, TEXTS("mpi between 4 ranks on box7.example.com (time: mean over ranks of the "
                         "mean iteration; algbw = S / t; busbw as nccl-tests' PERFORMANCE.md)\n"
                         "op                 size (B)  iters    time (us) algbw GB/s busbw GB/s\n",
                         "\nallreduce          67108864     20     50336.65      1.333"
                         "      2.000\n",
                         "\nsendrecv                  8     20         3.00      0.003"
                         "      0.003\n"),
                NULL);
    assert_int_equal(lines_starting(t, "allreduce "), 24);
    assert_int_equal(lines_starting(t, "sendrecv "), 24);
    assert_true(t[strlen(t) - 1] == '\n' && t[strlen(t) - 2] == '\n');
    free(t);
}

static void entry_lines(void **state)
{
    (void)state;
    static plan_host_entry h;
    memset(&h, 0, sizeof h);
    snprintf(h.instance_name, sizeof h.instance_name, "host-box7-t2");
    snprintf(h.gpu_name, sizeof h.gpu_name, "cpu-box7-t2");
    h.gpu.peak_flops = 2e11;
    h.fit.gemm.dim_half = 24;
    h.gpu.hbm_bps = 1e10;
    h.allreduce = (plan_link_fit){.bw_bps = 2e9, .small_s = 5e-6};
    h.p2p = (plan_link_fit){.bw_bps = 4e9, .small_s = 3e-6};
    char *t = NULL;
    CAPTURE(t, rpt_bench_cpu_entry(f, &h, 1));
    assert_string_equal(t, "entry host-box7-t2 (device cpu-box7-t2): peak 200.00 GFLOP/s per "
                           "rank, gemm_dim_half 24.0, triad 10.00 GB/s per rank, all-reduce "
                           "busbw 2.00 GB/s, latency 5.00 us, send/recv 4.00 GB/s\n");
    free(t);
    CAPTURE(t, rpt_bench_cpu_entry(f, &h, 0));
    assert_string_equal(t, "entry (no transport yet) (device cpu-box7-t2): peak 200.00 GFLOP/s "
                           "per rank, gemm_dim_half 24.0, triad 10.00 GB/s per rank\n");
    free(t);

    snprintf(h.instance_name, sizeof h.instance_name, "host-box7-cuda");
    snprintf(h.gpu_name, sizeof h.gpu_name, "cuda-box7");
    h.fit.gemm.asymptote_flops = 6.5e14;
    h.gpu.gemm_eff_max = 0.657;
    h.gpu.peak_flops = 9.89e14;
    h.fit.gemm.dim_half = 512;
    h.gpu.hbm_bps = 3e12;
    h.gpu.hbm_eff = 0.8;
    h.gpu.flash_eff = 0.55;
    CAPTURE(t, rpt_bench_gpu_entry(f, &h));
    assert_string_equal(t, "entry host-box7-cuda (device cuda-box7): GEMM asymptote 650.0 "
                           "TFLOP/s (gemm_eff_max 0.657 of 989 TFLOP/s), gemm_dim_half 512.0, "
                           "copy 3000 GB/s (hbm_eff 0.800), fused attention flash_eff 0.550\n");
    free(t);
}

/* Quiet: nothing; busy (a median spread over 5 %): one line saying how. */
static void busy_warning(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    bench_fixture_cpu(&b);
    char *t = NULL;
    CAPTURE(t, rpt_bench_busy_warning(f, &b));
    assert_string_equal(t, "");
    free(t);
    b.spread_median = 0.08;
    b.spread_worst = 0.2;
    b.load_start = 6.5;
    b.load_end = 7.25;
    CAPTURE(t, rpt_bench_busy_warning(f, &b));
    assert_string_equal(t, "smdplan: warning: this host was busy while it was measured "
                           "(measurements' spread (interquartile range over the median) 8.0 % "
                           "median, 20.0 % worst; 1-minute load 6.50 at the start, 7.25 at the "
                           "end, 8 cores: a busy host); an entry written under load made a "
                           "host's CPU predictions 15-17 % off, against 5 % from one written "
                           "quiet: measure again on a quiet host\n");
    free(t);
}

TEST_MAIN((void)0,
          cmocka_unit_test(cpu_page),
          cmocka_unit_test(busy_warning),
          cmocka_unit_test(comm_table),
          cmocka_unit_test(entry_lines))
