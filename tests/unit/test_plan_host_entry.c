/*
 * test_plan_host_entry.c: a host's catalog entry as smdplan bench makes it
 * (planner/plan_host_entry.c).
 *
 * The CPU of test_bench_fixture.h, 8 cores whose sgemm follows the
 * planner's GEMM model exactly (asymptote 2e11 FLOP/s, gemm_dim_half 24),
 * gives, at 2 threads per rank, 4 device slots of that asymptote and a
 * quarter of the full triad each, with texts that name the host, the
 * thread count and how steady the measurements were. Its links, from the
 * fixture's transport bench between 4 ranks that follows t = a + f S / B
 * exactly (nccl-tests' bus factor f = 2(n-1)/n for all-reduce, 1 for
 * send/recv), are those B and the median small-message time, the
 * send/recv rate over the planner's point-to-point efficiency (0.96), the
 * network repeating them; the all-reduce curve is its busbw
 * over the largest. Without send/recv rows there is no instance. A GPU's
 * device takes its catalog GPU's peak (the asymptote its fraction) or,
 * with none, the asymptote; its instance takes the catalog's instance of
 * that GPU and its curves, or the device's own bandwidth as placeholders
 * and the first curve, and is refused with no curve at all.
 */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "planner/plan.h"
#include "test_bench_fixture.h"

/* The device at 2 threads per rank: 4 slots, each the asymptote and a
 * quarter of the full triad; its texts; no links yet. More threads than
 * cores is refused, out left empty. */
static void cpu_device(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    bench_fixture_cpu(&b);
    static plan_host_entry h;
    st_err err = {0};
    assert_int_equal(plan_host_cpu_device(&b, 2, "cpu-box7-t2", &h, &err), ST_OK);
    assert_string_equal(h.gpu_name, "cpu-box7-t2");
    assert_int_equal(h.slots, 4);
    assert_int_equal(h.fit.threads, 2);
    assert_rel(h.gpu.peak_flops, BF_ASYMPTOTE_FLOPS, 1e-6);
    assert_rel(h.gpu.gemm_dim_half, BF_DIM_HALF, 1e-5);
    assert_true(h.gpu.gemm_eff_max == 1.0 && h.gpu.flash_eff == 1.0);
    assert_true(h.gpu.hbm_bps == BF_TRIAD_FULL_BPS / 4);
    assert_true(h.gpu.mem_bytes == BF_MEM_BYTES / 4);
    assert_true(h.gpu.misaligned_factor == 1.0); /* 1023^3 not measured */
    assert_false(h.has_instance);
    assert_true(isnan(h.allreduce.bw_bps) && isnan(h.p2p.bw_bps) && isnan(h.p2p.small_s));
    assert_text(h.gpu_source, TEXTS("on box7.example.com: 2 threads per rank", "over 15 shapes",
                                    "triad 40.0 GB/s over 4 slots"), NULL);
    assert_text(h.gpu_note, TEXTS("CPU device of box7.example.com (Test CPU 9000; OpenBLAS test; "
                                  "spread and load not recorded", "cblas_sgemm rates at 2 threads",
                                  "/ 4 slots", "hbm_eff: from the norm and residual kernels"),
                TEXTS("busy host"));

    /* a busy host is said in the note */
    b.spread_median = 0.08;
    b.spread_worst = 0.2;
    b.load_start = 6.5;
    b.load_end = 7.25;
    assert_int_equal(plan_host_cpu_device(&b, 1, "cpu-box7", &h, &err), ST_OK);
    assert_int_equal(h.slots, BF_CORES);
    assert_text(h.gpu_note, TEXTS("spread (interquartile range over the median) 8.0 % median, "
                                  "20.0 % worst; 1-minute load 6.50 at the start, 7.25 at the "
                                  "end, 8 cores: a busy host", "at 1 thread ("),
                NULL);

    assert_int_equal(plan_host_cpu_device(&b, 16, "cpu-box7-t16", &h, &err), ST_EINVAL);
    assert_string_equal(h.gpu_name, "");
    assert_true(isnan(h.allreduce.bw_bps));
}

/* The instance of the device at 2 threads per rank from the links. */
static void cpu_instance(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    static plan_bench_comm c;
    static plan_host_entry h;
    bench_fixture_cpu(&b);
    bench_fixture_comm(&c, 1);
    st_err err = {0};
    assert_int_equal(plan_host_cpu_device(&b, 2, "cpu-box7-t2", &h, &err), ST_OK);
    assert_int_equal(plan_host_cpu_instance(&b, &c, "host-box7-t2", "mpi-box7", &h, &err), ST_OK);
    assert_true(h.has_instance);
    assert_string_equal(h.instance_name, "host-box7-t2");
    const plan_instance *in = &h.instance;
    /* the median of the 8 all-reduce times at <= 1 KiB: between 64 and 128 B */
    double f = 2.0 * (BF_RANKS - 1) / BF_RANKS;
    double small_s = BF_AR_LAT_S + f * 96.0 / BF_AR_BUS_BPS;
    assert_int_equal(in->gpus_per_node, 4);
    assert_rel(in->intra_busbw_bps, BF_AR_BUS_BPS, 1e-6);
    assert_rel(in->intra_latency_s, small_s, 1e-12);
    assert_rel(in->nvlink_bps, BF_P2P_BPS / 0.96, 1e-6);
    assert_rel(in->net_bps, BF_P2P_BPS * 4, 1e-6);
    assert_rel(in->net_latency_s, small_s, 1e-12);
    assert_true(in->nvswitch == 1 && in->net_ring_eff == 1.0 && in->net_tree_eff == 1.0);
    assert_true(in->host_mem_bytes == BF_MEM_BYTES);
    assert_rel(h.allreduce.bw_bps, BF_AR_BUS_BPS, 1e-6);
    assert_rel(h.allreduce.lat_s, BF_AR_LAT_S, 1e-6);
    assert_rel(h.p2p.bw_bps, BF_P2P_BPS, 1e-6);
    assert_rel(h.p2p.small_s, BF_P2P_LAT_S + 96.0 / BF_P2P_BPS, 1e-12);
    /* the curve: every all-reduce size, busbw over the largest */
    const plan_curve *cv = &h.intra_curve;
    assert_string_equal(cv->name, "mpi-box7");
    assert_string_equal(h.net_curve.name, "mpi-box7");
    assert_int_equal(cv->n, 24);
    assert_true(cv->log2_bytes[0] == 3.0 && cv->log2_bytes[23] == 26.0);
    assert_true(cv->eff[23] == 1.0);
    assert_rel(cv->eff[0], c.v[0].busbw_bps / c.v[23].busbw_bps, 1e-12);
    assert_int_equal(h.net_curve.n, 24);
    assert_text(cv->source, TEXTS("mpi all-reduce busbw over its largest", "4 ranks"), NULL);
    assert_text(h.instance_source, TEXTS("on box7.example.com: 8 cores / 2 threads per rank; mpi "
                                         "between 4 ranks"), NULL);
    assert_text(h.instance_note, TEXTS("(a = 5.00 us)", "send/recv bandwidth 4.00 GB/s", "/ 0.96",
                                       "A single host has no network"), NULL);

    /* no send/recv measured: no instance */
    bench_fixture_comm(&c, 0);
    assert_int_equal(plan_host_cpu_device(&b, 2, "cpu-box7-t2", &h, &err), ST_OK);
    assert_int_equal(plan_host_cpu_instance(&b, &c, "host-box7-t2", "mpi-box7", &h, &err),
                     ST_EINVAL);
    assert_text(err.msg, TEXTS("--ops including allreduce and sendrecv"), NULL);
    assert_false(h.has_instance);
    assert_true(isnan(h.p2p.bw_bps));
}

/* A catalog of two GPUs, an instance type of the second, three curves. */
static plan_gpu cat_gpus[2];
static plan_instance cat_insts[1];
static plan_curve cat_curves[3];

static void make_catalog(plan_catalog *cat)
{
    memset(cat, 0, sizeof *cat);
    memset(cat_gpus, 0, sizeof cat_gpus);
    memset(cat_insts, 0, sizeof cat_insts);
    memset(cat_curves, 0, sizeof cat_curves);
    snprintf(cat_gpus[0].name, sizeof cat_gpus[0].name, "X1-16GB");
    snprintf(cat_gpus[1].name, sizeof cat_gpus[1].name, "X2-80GB");
    cat_gpus[1].peak_flops = 4 * BF_ASYMPTOTE_FLOPS;
    cat_gpus[1].misaligned_factor = 0.7;
    for (int i = 0; i < 3; i++) {
        snprintf(cat_curves[i].name, sizeof cat_curves[i].name, "curve%d", i);
        cat_curves[i].n = 1;
        cat_curves[i].eff[0] = 0.5 + 0.1 * i;
    }
    plan_instance *in = &cat_insts[0];
    snprintf(in->name, sizeof in->name, "x2.big");
    in->gpu_index = 1;
    in->gpus_per_node = 8;
    in->nvlink_bps = 3e11;
    in->nvswitch = 1;
    in->intra_busbw_bps = 2.5e11;
    in->intra_latency_s = 2e-5;
    in->net_bps = 4e11;
    in->net_latency_s = 3e-5;
    in->net_ring_eff = 0.8;
    in->net_tree_eff = 0.7;
    in->efa = 1;
    in->intra_curve_index = 1;
    in->net_curve_index = 2;
    cat->gpus = cat_gpus;
    cat->ngpus = 2;
    cat->instances = cat_insts;
    cat->ninstances = 1;
    cat->curves = cat_curves;
    cat->ncurves = 3;
}

/* A GPU's device against its catalog GPU (the datasheet peak, the
 * asymptote its fraction) or none; its instance from the catalog's
 * instance type of that GPU, or placeholders; none without a curve. */
static void gpu_entry(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    static plan_host_entry h;
    plan_catalog cat;
    bench_fixture_cpu(&b);
    make_catalog(&cat);
    snprintf(b.device, sizeof b.device, "cuda");
    snprintf(b.cpu_model, sizeof b.cpu_model, "X2 80GB");
    st_err err = {0};
    assert_int_equal(plan_host_gpu_device(&b, &cat, 1, "cuda-box7", &h, &err), ST_OK);
    assert_string_equal(h.gpu_name, "cuda-box7");
    assert_true(h.gpu.peak_flops == 4 * BF_ASYMPTOTE_FLOPS);
    assert_rel(h.gpu.gemm_eff_max, 0.25, 1e-6);
    assert_rel(h.fit.gemm.asymptote_flops, BF_ASYMPTOTE_FLOPS, 1e-6);
    assert_true(h.gpu.misaligned_factor == 0.7);
    assert_true(h.gpu.hbm_bps == BF_TRIAD_ONE_BPS); /* the copy: mem[0] */
    assert_true(isnan(h.allreduce.bw_bps) && isnan(h.p2p.bw_bps));
    assert_text(h.gpu_source, TEXTS("smdplan bench gpu on box7.example.com: X2 80GB"), NULL);
    assert_text(h.gpu_note, TEXTS("The executor's cuda device on box7.example.com (X2 80GB; ",
                                  "peak_flops: the datasheet peak of the catalog's GPU"), NULL);
    /* no fused attention measured: nothing of it in the entry */
    assert_true(h.gpu.flash_eff == 1.0 && !h.gpu.flash_measured && h.gpu.flash2_fwd_eff == 0);
    /* measured (one rate a direction, 2 x 128 heads of 128 at 1 and 2 K):
     * the executor's own kernels, so its share is not a fitted efficiency */
    static plan_bench_cpu bf;
    bf = b;
    for (int bwd = 0; bwd < 2; bwd++)
        for (int T = 1024; T <= 2048; T *= 2) {
            plan_bench_gemm *g = &bf.gemm[bf.ngemm++];
            snprintf(g->kind, sizeof g->kind, "%s", bwd ? "flash_bwd" : "flash_fwd");
            g->threads = 1;
            g->m = g->n = T;
            g->k = 128;
            g->reps = 1;
            g->flops = (bwd ? 0.25 : 0.3) * 4 * BF_ASYMPTOTE_FLOPS; /* of the X2's peak */
            g->time_s = (bwd ? 2.5 : 1.0) * 2.0 * 128 * (double)T * T * 128 / g->flops;
        }
    assert_int_equal(plan_host_gpu_device(&bf, &cat, 1, "cuda-box7", &h, &err), ST_OK);
    assert_true(h.gpu.flash_measured);
    assert_rel(h.gpu.flash2_fwd_eff, 0.3, 1e-6);
    assert_rel(h.gpu.flash2_bwd_eff, 0.25, 1e-6);
    assert_true(h.gpu.flash_score_fwd_s == 0 && h.gpu.flash_row_bwd_s == 0);
    assert_int_equal(plan_host_gpu_instance(&b, &cat, 1, 4, 5e11, "host-box7-cuda", &h, &err),
                     ST_OK);
    assert_true(h.has_instance);
    const plan_instance *in = &h.instance;
    assert_int_equal(in->gpus_per_node, 4);
    assert_int_equal(h.slots, 4);
    assert_true(in->nvlink_bps == 3e11 && in->intra_busbw_bps == 2.5e11 && in->net_bps == 4e11);
    assert_true(in->intra_latency_s == 2e-5 && in->net_latency_s == 3e-5);
    assert_true(in->net_ring_eff == 0.8 && in->net_tree_eff == 0.7 && in->efa == 1);
    assert_true(in->host_mem_bytes == 5e11);
    assert_string_equal(h.intra_curve.name, "curve1");
    assert_string_equal(h.net_curve.name, "curve2");
    assert_text(h.instance_source, TEXTS("box7.example.com: 4 GPUs"), NULL);
    assert_text(h.instance_note, TEXTS("the catalog's instance type x2.big, not measured"), NULL);

    /* no catalog GPU of this device: the asymptote is the peak, the links
     * the device's own bandwidth */
    assert_int_equal(plan_host_gpu_device(&b, &cat, -1, "cuda-box7", &h, &err), ST_OK);
    assert_rel(h.gpu.peak_flops, BF_ASYMPTOTE_FLOPS, 1e-6);
    assert_true(h.gpu.gemm_eff_max == 1.0);
    assert_text(h.gpu_note, TEXTS("peak_flops: the measured asymptote (no catalog GPU"), NULL);
    assert_int_equal(plan_host_gpu_instance(&b, &cat, -1, 0, 0, "host-box7-cuda", &h, &err),
                     ST_OK);
    in = &h.instance;
    assert_int_equal(in->gpus_per_node, 1);
    assert_true(in->nvlink_bps == BF_TRIAD_ONE_BPS && in->intra_busbw_bps == BF_TRIAD_ONE_BPS &&
                in->net_bps == BF_TRIAD_ONE_BPS);
    assert_true(in->intra_latency_s == 1e-5 && in->net_latency_s == 1e-5 && in->efa == 0);
    assert_true(in->host_mem_bytes == 0);
    assert_string_equal(h.intra_curve.name, "curve0");
    assert_string_equal(h.net_curve.name, "curve0");
    assert_text(h.instance_note, TEXTS("This host's 0 GPUs", "placeholders"), NULL);

    /* no curve to name */
    cat.ncurves = 0;
    assert_int_equal(plan_host_gpu_device(&b, &cat, -1, "cuda-box7", &h, &err), ST_OK);
    assert_int_equal(plan_host_gpu_instance(&b, &cat, -1, 1, 0, "host-box7-cuda", &h, &err),
                     ST_EINVAL);
    assert_text(err.msg, TEXTS("no collective curve"), NULL);
    assert_false(h.has_instance);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(cpu_device),
          cmocka_unit_test(cpu_instance),
          cmocka_unit_test(gpu_entry))
