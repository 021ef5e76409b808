/*
 * test_plan_hwfit.c: the device parameters measured by smdplan bench.
 *
 * The GEMM fit finds a known asymptote and gemm_dim_half back from rates
 * made by the model itself (with and without noise, one by one and by
 * groups whose totals it matches), leaves sides that are not multiples of 8
 * out, and refuses too few or bad samples. The compute
 * floors of a CPU device (catalog act_*_s, glu_*_s, opt_param_s) change
 * the step exactly as their closed form says, only for the architecture's
 * own activation, and leave a device without them bit for bit as before.
 * Rates measured on a device (plan_gpu_measured) become its GEMM ceiling
 * and dimension scale (calls at the harness's floor left out), its
 * FlashAttention-2 and cuDNN rates per direction and its copy share, which
 * holds only on memory of the measured device's bandwidth.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan.h"
#include "planner/plan_hwfit.h"

static void fit_recovers_model(void **state)
{
    (void)state;
    plan_gemm_fit truth = {.asymptote_flops = 2.0e11, .dim_half = 24.0};
    plan_gemm_sample s[32];
    int n = 0;
    static const double sides[] = {64, 128, 256, 768, 2048};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j += 2) {
            double m = sides[i], k = sides[j], nn = 3 * sides[(i + j) % 5];
            s[n++] = (plan_gemm_sample){m, nn, k, plan_gemm_fit_rate(&truth, m, nn, k), 0};
        }
    s[n++] = (plan_gemm_sample){1023, 1023, 1023, 1.0, 0}; /* misaligned: left out */
    plan_gemm_fit f;
    st_err err = {0};
    assert_int_equal(plan_gemm_fit_run(s, n, &f, &err), ST_OK);
    assert_int_equal(f.used, n - 1);
    assert_rel(f.asymptote_flops, 2.0e11, 1e-6);
    assert_rel(f.dim_half, 24.0, 1e-5);
    assert_true(f.rms_log_err < 1e-6 && f.max_abs_err_pct < 1e-4);

    /* +-3 % alternating noise: still close, and the error is reported */
    for (int i = 0; i < n - 1; i++)
        s[i].flops *= i % 2 ? 1.03 : 0.97;
    assert_int_equal(plan_gemm_fit_run(s, n - 1, &f, &err), ST_OK);
    assert_rel(f.asymptote_flops, 2.0e11, 0.05);
    assert_true(fabs(f.dim_half - 24.0) < 10.0);
    assert_true(f.rms_log_err > 0.02 && f.rms_log_err < 0.04);

    /* too few usable samples, a bad rate */
    assert_int_equal(plan_gemm_fit_run(s + n - 1, 1, &f, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "at least 2"));
    st_err_clear(&err);
    s[0].flops = -1;
    assert_int_equal(plan_gemm_fit_run(s, n, &f, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "must be positive"));
}

/* Grouped samples: the fit matches each group's total time. Two groups of
 * a fast and a slow GEMM (the slow one below the model) and the model
 * itself found back from totals made by it. */
static void fit_by_groups(void **state)
{
    (void)state;
    plan_gemm_fit truth = {.asymptote_flops = 1.5e11, .dim_half = 40.0};
    plan_gemm_sample s[12];
    int n = 0;
    static const double T[] = {128, 512, 2048};
    for (int g = 0; g < 3; g++) {
        double sides[3][3] = {{T[g], 768, 256}, {T[g], 256, 1024}, {T[g], T[g], 64}};
        for (int q = 0; q < 3; q++)
            s[n++] = (plan_gemm_sample){sides[q][0], sides[q][1], sides[q][2],
                                        plan_gemm_fit_rate(&truth, sides[q][0], sides[q][1],
                                                           sides[q][2]),
                                        g + 1};
    }
    /* one group's two GEMMs trade time: 10 % slower and faster so that
     * their total is the model's */
    double t0 = 2 * s[0].m * s[0].n * s[0].k / s[0].flops;
    double t1 = 2 * s[1].m * s[1].n * s[1].k / s[1].flops;
    double d = 0.1 * fmin(t0, t1);
    s[0].flops = 2 * s[0].m * s[0].n * s[0].k / (t0 + d);
    s[1].flops = 2 * s[1].m * s[1].n * s[1].k / (t1 - d);
    plan_gemm_fit f;
    st_err err = {0};
    assert_int_equal(plan_gemm_fit_run(s, n, &f, &err), ST_OK);
    assert_int_equal(f.groups, 3);
    assert_int_equal(f.used, 9);
    assert_rel(f.asymptote_flops, 1.5e11, 1e-6);
    assert_rel(f.dim_half, 40.0, 1e-5);
    assert_true(f.max_abs_err_pct < 1e-4);
}

static plan_gpu gpu;
static plan_instance inst;

/* One GPU per node, round numbers. */
static void make_cluster(plan_cluster *c)
{
    gpu = (plan_gpu){.name = "CPU-TEST", .mem_bytes = 1e12, .peak_flops = 2e11, .hbm_bps = 2e10,
                     .gemm_eff_max = 1.0, .gemm_dim_half = 16, .misaligned_factor = 1.0,
                     .hbm_eff = 0.5, .flash_eff = 1.0};
    inst = (plan_instance){.name = "host-test", .gpus_per_node = 1, .nvlink_bps = 1e10,
                           .intra_busbw_bps = 1e10, .net_bps = 1e10, .intra_latency_s = 2e-6,
                           .net_latency_s = 2e-6, .net_ring_eff = 1.0, .net_tree_eff = 1.0,
                           .net_latency_nodes = 2};
    test_cluster_flat(c, &gpu, &inst, 1);
}

static plan_model model(plan_arch arch)
{
    plan_model m = {.arch = arch, .layers = 13, .hidden = 640, .heads = 10, .kv_heads = 10,
                    .ffn = arch == PLAN_ARCH_GPT ? 2560 : 1792, .seq = 384, .vocab = 4096,
                    .tied_embedding = arch == PLAN_ARCH_GPT, .dropout = PLAN_DROPOUT_OFF};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    return m;
}

static plan_layout one_rank(int mbs, int mb)
{
    plan_layout l;
    plan_layout_default(&l);
    l.micro_batch = mbs;
    l.microbatches = mb;
    l.active_microbatches = mb;
    l.global_batch = (int64_t)mbs * mb;
    l.precision = PLAN_PREC_FP32;
    return l;
}

static void compute_floors(void **state)
{
    (void)state;
    plan_cluster c;
    make_cluster(&c);
    st_err err = {0};
    for (int arch = 0; arch < 2; arch++) {
        plan_model m = model((plan_arch)arch);
        plan_layout l = one_rank(3, 5);
        plan_estimate e0, e1;
        make_cluster(&c);
        assert_int_equal(plan_evaluate(&m, &c, &l, &e0, NULL, &err), ST_OK);
        /* the other activation's floors change nothing, bit for bit */
        if (arch == PLAN_ARCH_GPT)
            gpu.glu_fwd_s = gpu.glu_bwd_s = 1e-6;
        else
            gpu.act_fwd_s = gpu.act_bwd_s = 1e-6;
        assert_int_equal(plan_evaluate(&m, &c, &l, &e1, NULL, &err), ST_OK);
        assert_memory_equal(&e0.time, &e1.time, sizeof e0.time);
        /* the architecture's own: each layer's activation kernels take
         * elements x floor instead of their bytes at the HBM rate */
        double fs = 7e-9, bs = 1.1e-8;
        if (arch == PLAN_ARCH_GPT) {
            gpu.act_fwd_s = fs;
            gpu.act_bwd_s = bs;
        } else {
            gpu.glu_fwd_s = fs;
            gpu.glu_bwd_s = bs;
        }
        assert_int_equal(plan_evaluate(&m, &c, &l, &e1, NULL, &err), ST_OK);
        double T = 3.0 * 384, n_act = T * (double)m.ffn;
        double passes = arch == PLAN_ARCH_GPT ? 2.0 : 3.0; /* ELEM_F_GPT, ELEM_F_LLAMA */
        double mem_a = 4.0 * T * passes * (double)m.ffn / (2e10 * 0.5);
        double per_mb = 13 * ((n_act * fs - mem_a) + (n_act * bs - 2 * mem_a));
        assert_rel(e1.time.compute_s - e0.time.compute_s, 5 * per_mb, 1e-9);
        assert_true(e1.time.optimizer_s == e0.time.optimizer_s);
        /* the optimizer: parameters x floor when that is the slower */
        gpu.opt_param_s = 5e-9;
        assert_int_equal(plan_evaluate(&m, &c, &l, &e1, NULL, &err), ST_OK);
        assert_rel(e1.time.optimizer_s, (double)m.params * 5e-9, 1e-12);
        assert_rel(e1.time.step_s, e1.time.compute_s + e1.time.optimizer_s + e1.time.bubble_s +
                                       e1.time.pp_comm_s + e1.time.dp_exposed_s,
                   1e-12);
        gpu.opt_param_s = 1e-15; /* below the bytes: the bytes decide */
        assert_int_equal(plan_evaluate(&m, &c, &l, &e1, NULL, &err), ST_OK);
        assert_true(e1.time.optimizer_s == e0.time.optimizer_s);
    }
}

/* One rank's step (3 x 5 microbatches) of the GPT model (no dropout, as
 * the executor trains) with the unfused attention, on the cluster as
 * make_cluster leaves it (no measured attention rates or times): e0. */
typedef struct {
    plan_cluster c;
    plan_model m;
    plan_layout l;
    plan_estimate e0;
} plain_step;

static void plain_attention_step(plain_step *p)
{
    make_cluster(&p->c);
    p->m = model(PLAN_ARCH_GPT);
    assert_int_equal(p->m.dropout, PLAN_DROPOUT_OFF);
    p->l = one_rank(3, 5);
    p->l.flash_attention = 0;
    st_err err = {0};
    assert_int_equal(plan_evaluate(&p->m, &p->c, &p->l, &p->e0, NULL, &err), ST_OK);
}

/* The attention core's measured rates bound the unfused attention: with
 * rates far below the GEMM model, a step's attention time is exactly the
 * counted work over them (4 d per score forward, 8 d backward, the full
 * s x s as the planner counts it). */
static void attention_rates(void **state)
{
    (void)state;
    plain_step p;
    plain_attention_step(&p);
    plan_estimate e1;
    st_err err = {0};
    gpu.attn_fwd_flops = 1e9;
    gpu.attn_bwd_flops = 2e9;
    assert_int_equal(plan_evaluate(&p.m, &p.c, &p.l, &e1, NULL, &err), ST_OK);
    double scores = 3.0 * 10 * 384 * 384, d = 64;
    double want = 13 * 5 * (4 * scores * d / 1e9 + 8 * scores * d / 2e9);
    assert_rel(e1.compute.attn_s, want, 1e-9);
    assert_true(e1.compute.attn_s > p.e0.compute.attn_s);
    assert_rel(e1.time.compute_s - p.e0.time.compute_s, want - p.e0.compute.attn_s, 1e-9);
    /* rates far above it: the GEMM model and the scores' bytes decide */
    gpu.attn_fwd_flops = gpu.attn_bwd_flops = 1e20;
    assert_int_equal(plan_evaluate(&p.m, &p.c, &p.l, &e1, NULL, &err), ST_OK);
    assert_true(e1.time.compute_s == p.e0.time.compute_s);
}

/* The plain core's row kernels: a measured time per score row (batch x
 * heads x queries) adds exactly rows x that time, forward and backward; the
 * planner's own count of a core (plan_attn_plain_time, which smdplan bench
 * gpu sets the row times against) is what a step's attention holds per
 * layer and microbatch. */
static void attention_rows(void **state)
{
    (void)state;
    plain_step p;
    plain_attention_step(&p);
    plan_estimate e1;
    assert_true(gpu.attn_fwd_flops == 0 && gpu.attn_bwd_flops == 0);
    st_err err = {0};
    double f = 0, b = 0, nb = 3.0 * 10, T = 384;
    assert_int_equal(plan_attn_plain_time(&gpu, nb, T, T, 64, &f, &b, &err), ST_OK);
    assert_rel(p.e0.compute.attn_s, 13 * 5 * (f + b), 1e-12);
    gpu.attn_row_fwd_s = 3e-9;
    gpu.attn_row_bwd_s = 5e-9;
    assert_int_equal(plan_evaluate(&p.m, &p.c, &p.l, &e1, NULL, &err), ST_OK);
    assert_rel(e1.compute.attn_s - p.e0.compute.attn_s, 13 * 5 * nb * T * 8e-9, 1e-9);
    double f1 = 0, b1 = 0;
    assert_int_equal(plan_attn_plain_time(&gpu, nb, T, T, 64, &f1, &b1, &err), ST_OK);
    assert_rel(f1 - f, nb * T * 3e-9, 1e-9);
    assert_rel(b1 - b, nb * T * 5e-9, 1e-9);
    gpu.attn_row_fwd_s = gpu.attn_row_bwd_s = 0;
    /* per row and head element: rows x d x that time */
    gpu.attn_elem_fwd_s = 2e-11;
    gpu.attn_elem_bwd_s = 7e-11;
    assert_int_equal(plan_attn_plain_time(&gpu, nb, T, T, 64, &f1, &b1, &err), ST_OK);
    assert_rel(f1 - f, nb * T * 64 * 2e-11, 1e-9);
    assert_rel(b1 - b, nb * T * 64 * 7e-11, 1e-9);
    gpu.attn_elem_fwd_s = gpu.attn_elem_bwd_s = 0;
    /* bad input: one line naming the values */
    assert_int_equal(plan_attn_plain_time(&gpu, 0, T, T, 64, &f, &b, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "allowed: positive"));
}

/* The plain core's measured time beyond the planner's terms, made as
 * rows x (row_s + d elem_s) on top of the planner's own count: the fit
 * finds both back from heads of 64 and 128; with one head size measured,
 * elem_s is 0 and row_s the mean per row; a negative part is held at 0;
 * nothing measured is ST_ENOENT. */
static void attention_rows_fit(void **state)
{
    (void)state;
    plan_cluster c;
    make_cluster(&c);
    gpu.attn_fwd_flops = gpu.attn_bwd_flops = 0;
    static plan_bench_cpu b;
    memset(&b, 0, sizeof b);
    static const double Ts[] = {1024, 2048}, hds[] = {64, 128};
    const double nb = 64, row = 3e-9, elem = 2e-11;
    for (int bwd = 0; bwd < 2; bwd++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                double T = Ts[i], hd = hds[j], f = 0, w = 0;
                st_err err = {0};
                assert_int_equal(plan_attn_plain_time(&gpu, nb, T, T, hd, &f, &w, &err), ST_OK);
                double t = (bwd ? w : f) + nb * T * (row + (bwd ? 2 : 1) * elem * hd);
                plan_bench_gemm *g = &b.gemm[b.ngemm++];
                snprintf(g->kind, sizeof g->kind, "%s", bwd ? "attn_bwd" : "attn_fwd");
                g->threads = 1;
                g->m = g->n = (int64_t)T;
                g->k = (int64_t)hd;
                g->reps = 1;
                g->time_s = t;
                g->flops = (bwd ? 8.0 : 4.0) * nb * T * T * hd / t;
            }
    double r = 0, e = 0;
    assert_int_equal(plan_bench_attn_rows(&b, &gpu, 0, &r, &e), ST_OK);
    assert_rel(r, row, 1e-6);
    assert_rel(e, elem, 1e-6);
    assert_int_equal(plan_bench_attn_rows(&b, &gpu, 1, &r, &e), ST_OK);
    assert_rel(r, row, 1e-6);
    assert_rel(e, 2 * elem, 1e-6);
    /* heads of 128 only (the forward's two): no head term, the mean per row */
    plan_bench_cpu one = b;
    one.gemm[0] = one.gemm[1];
    one.gemm[2] = one.gemm[3];
    one.ngemm = 4; /* forward 128, 128, 128, 128 at 1 K, 1 K, 2 K, 2 K */
    assert_int_equal(plan_bench_attn_rows(&one, &gpu, 0, &r, &e), ST_OK);
    assert_true(e == 0.0);
    assert_rel(r, row + 128 * elem, 1e-6);
    /* a time that falls with the head: no negative elem_s */
    plan_bench_cpu neg = b;
    for (int i = 0; i < 4; i++)
        if (neg.gemm[i].k == 64) { /* the same work in more time */
            neg.gemm[i].time_s *= 1.5;
            neg.gemm[i].flops /= 1.5;
        }
    assert_int_equal(plan_bench_attn_rows(&neg, &gpu, 0, &r, &e), ST_OK);
    assert_true(e == 0.0 && r > row);
    /* nothing measured */
    plan_bench_cpu none;
    memset(&none, 0, sizeof none);
    assert_int_equal(plan_bench_attn_rows(&none, &gpu, 0, &r, &e), ST_ENOENT);
    assert_true(isnan(r) && isnan(e));
}

/* The fused attention per direction from shapes made with a known rate,
 * time per score and per row (heads of 64 and 128 at 1, 2 and 4 K, as
 * smdplan bench gpu times them): the fit gives them back; one shape gives
 * the rate alone; a rate over the peak is held at it; none measured. */
static plan_bench_cpu flash_bench(double peak, const double eff[2], const double sc[2],
                                  const double rw[2])
{
    plan_bench_cpu b;
    memset(&b, 0, sizeof b);
    static const double Ts[] = {1024, 2048, 4096}, hds[] = {64, 128};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            for (int bwd = 0; bwd < 2; bwd++) {
                double T = Ts[i], hd = hds[j], heads = 8.0 * 2048 / hd;
                double scores = heads * T * T / 2, work = (bwd ? 2.5 : 1.0) * 4.0 * scores * hd;
                double t = work / (peak * eff[bwd]) + scores * sc[bwd] + heads * T * rw[bwd];
                plan_bench_gemm *g = &b.gemm[b.ngemm++];
                snprintf(g->kind, sizeof g->kind, "%s", bwd ? "flash_bwd" : "flash_fwd");
                g->threads = 1;
                g->m = g->n = (int64_t)T;
                g->k = (int64_t)hd;
                g->reps = 1;
                g->time_s = t;
                g->flops = work / t;
            }
    return b;
}

static void flash_fit(void **state)
{
    (void)state;
    const double peak = 989e12, eff[2] = {0.54, 0.49}, sc[2] = {2.6e-13, 8.2e-13},
                 rw[2] = {3.6e-10, 1.3e-9};
    plan_bench_cpu b = flash_bench(peak, eff, sc, rw);
    for (int bwd = 0; bwd < 2; bwd++) {
        double e = 0, s = 0, r = 0;
        assert_int_equal(plan_bench_flash_fit(&b, peak, bwd, &e, &s, &r), ST_OK);
        assert_rel(e, eff[bwd], 1e-6);
        assert_rel(s, sc[bwd], 1e-5);
        assert_rel(r, rw[bwd], 1e-5);
    }
    /* one shape (the first forward): its rate, nothing per score or row */
    plan_bench_cpu one = b;
    one.ngemm = 1;
    double e = 0, s = 1, r = 1;
    assert_int_equal(plan_bench_flash_fit(&one, peak, 0, &e, &s, &r), ST_OK);
    assert_rel(e, one.gemm[0].flops / peak, 1e-9);
    assert_true(s == 0.0 && r == 0.0);
    /* products faster than the peak: the rate held at it, the rest per score */
    const double fast[2] = {1.5, 1.5};
    plan_bench_cpu over = flash_bench(peak, fast, sc, rw);
    assert_int_equal(plan_bench_flash_fit(&over, peak, 1, &e, &s, &r), ST_OK);
    assert_rel(e, 1.0, 1e-9);
    assert_true(s > 0 && r >= 0);
    /* no fused attention measured */
    plan_bench_cpu none;
    memset(&none, 0, sizeof none);
    assert_int_equal(plan_bench_flash_fit(&none, peak, 0, &e, &s, &r), ST_ENOENT);
    assert_true(e == 0.0);
}

/* A bench written on a busy host is said to be: its measurements' median
 * spread over PLAN_BENCH_SPREAD_BUSY, or a load at its start of more than
 * half the cores; not when unknown (a record's figures). */
static void bench_busy(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    memset(&b, 0, sizeof b);
    b.cores = 8;
    b.load_start = b.load_end = -1;
    assert_false(plan_bench_busy(&b));
    b.spread_median = 0.02;
    b.load_start = 1.0;
    assert_false(plan_bench_busy(&b));
    b.spread_median = 0.08;
    assert_true(plan_bench_busy(&b));
    b.spread_median = 0.02;
    b.load_start = 4.5;
    assert_true(plan_bench_busy(&b));
}

/* A measured file made by the GEMM model itself (asymptote 0.75 of a 1000
 * TFLOP/s peak, dim_half 48) plus three calls at a 26 us harness floor that
 * would pull the fit far off: the floor calls are left out and the model
 * comes back; attention per direction from forward and forward+backward
 * rates; the copy holds on the measured memory only. */
static void measured_rates(void **state)
{
    (void)state;
    plan_gpu g;
    memset(&g, 0, sizeof g);
    strcpy(g.name, "TEST");
    g.peak_flops = 1000e12;
    g.hbm_bps = 3000e9;
    g.gemm_eff_max = 0.9;
    g.flash_eff = 0.6;
    plan_measured m;
    memset(&m, 0, sizeof m);
    plan_gemm_fit truth = {.asymptote_flops = 750e12, .dim_half = 48.0};
    static const double ks[] = {2048, 4096, 8192, 12288};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) {
            double mm = 4096.0 * (j + 1), k = ks[i], n = 3 * k;
            m.gemm[m.ngemm++] = (plan_gemm_sample){mm, n, k, plan_gemm_fit_rate(&truth, mm, n, k), 0};
        }
    /* at the floor: 26 us whatever their work (4.3 to 12.9 GFLOP) */
    static const double small[][3] = {{2048, 1024, 1024}, {2048, 3072, 1024}, {4096, 1024, 1024}};
    for (int i = 0; i < 3; i++) {
        double w = 2.0 * small[i][0] * small[i][1] * small[i][2];
        m.gemm[m.ngemm++] = (plan_gemm_sample){small[i][0], small[i][1], small[i][2], w / 26e-6, 0};
    }
    /* FlashAttention-2 at 0.3 forward and 0.2 backward: forward and backward
     * together 3.5 / (1/0.3 + 2.5/0.2) = 0.22105 of the peak */
    m.flash2_fwd_flops = 300e12;
    m.flash2_fwd_bwd_flops = 3.5 / (1 / 300e12 + 2.5 / 200e12);
    m.cudnn_fwd_flops = 500e12;
    m.cudnn_fwd_bwd_flops = 3.5 / (1 / 500e12 + 2.5 / 320e12);
    m.copy_bps = 2700e9;
    m.hbm_bps = 3000e9;
    st_err err = {0};
    assert_int_equal(plan_gpu_measured(&g, &m, &err), ST_OK);
    assert_true(g.gemm_measured);
    assert_int_equal(g.gemm_measured_shapes, 12);
    assert_rel(g.gemm_ceiling, 0.75, 1e-6);
    assert_rel(g.gemm_dim_half, 48.0, 1e-4);
    assert_rel(g.gemm_eff_max, g.gemm_ceiling, 0); /* the chip's own: its isolated GEMMs */
    assert_rel(g.flash2_fwd_eff, 0.3, 1e-12);
    assert_rel(g.flash2_bwd_eff, 0.2, 1e-12);
    assert_rel(g.cudnn_fwd_eff, 0.5, 1e-12);
    assert_rel(g.cudnn_bwd_eff, 0.32, 1e-12);
    assert_rel(g.flash_eff, 3.5 / (1 / 0.3 + 2.5 / 0.2), 1e-12);
    assert_rel(plan_gpu_copy_eff(&g), 0.9, 1e-12);
    g.hbm_bps = 4800e9; /* other memory: the copy is not its own */
    assert_rel(plan_gpu_copy_eff(&g), 0.0, 0);

    /* forward and backward in less time than the forward alone, a bad rate */
    m.flash2_fwd_bwd_flops = 1200e12;
    assert_int_equal(plan_gpu_measured(&g, &m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "FlashAttention-2"));
    st_err_clear(&err);
    m.flash2_fwd_bwd_flops = 200e12;
    m.gemm[0].flops = 0;
    assert_int_equal(plan_gpu_measured(&g, &m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "must be positive"));
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fit_recovers_model),
        cmocka_unit_test(fit_by_groups),
        cmocka_unit_test(compute_floors),
        cmocka_unit_test(attention_rates),
        cmocka_unit_test(attention_rows),
        cmocka_unit_test(attention_rows_fit),
        cmocka_unit_test(flash_fit),
        cmocka_unit_test(bench_busy),
        cmocka_unit_test(measured_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
