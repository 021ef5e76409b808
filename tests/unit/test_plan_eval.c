/*
 * test_plan_eval.c: closed forms and invariants of the memory and time model
 * on a hand-made cluster (no data files): activation bytes after Korthikanti
 * et al. 2022, ZeRO state bytes, ring and hierarchical all-reduce times,
 * bubble ratios between schedules, placement spans, terms summing to totals.
 */
#include "test_util.h"

#include "planner/plan_framework.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "planner/plan_int.h"

static plan_gpu gpu;
static plan_instance inst;

/* 8 GPUs of 80 GB per node, flat efficiency curves, round numbers. */
static void make_cluster(plan_cluster *c, int nodes)
{
    gpu = (plan_gpu){.name = "TEST-80GB", .mem_bytes = 80e9, .peak_flops = 300e12,
                     .hbm_bps = 2e12, .gemm_eff_max = 0.8, .gemm_dim_half = 96,
                     .misaligned_factor = 0.5, .hbm_eff = 0.8, .flash_eff = 0.5,
                     .gemm_ceiling = 1.0};
    inst = (plan_instance){.name = "test.8x", .gpus_per_node = 8, .nvlink_bps = 300e9,
                           .nvswitch = 1, .intra_busbw_bps = 230e9, .intra_latency_s = 10e-6,
                           .net_bps = 50e9, .net_latency_s = 50e-6, .net_ring_eff = 1.0,
                           .net_tree_eff = 1.0, .net_latency_nodes = 2, .price_per_hour = 32.0};
    test_cluster_flat(c, &gpu, &inst, nodes);
}

static void finish(plan_model *m)
{
    st_err err = {0};
    assert_int_equal(plan_model_finish(m, &err), ST_OK);
}

static plan_model model_13(void)
{
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = 13, .hidden = 1536, .heads = 12,
                    .kv_heads = 12, .ffn = 4 * 1536, .seq = 1024, .vocab = 51200,
                    .tied_embedding = 1};
    finish(&m);
    return m;
}

/* plan_evaluate, which must succeed (a rejected layout is a result). */
static void eval(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                 plan_estimate *e)
{
    st_err err = {0};
    assert_int_equal(plan_evaluate(m, c, l, e, NULL, &err), ST_OK);
}

/* One node (make_cluster) and the 13-layer model. */
static plan_model one_node_13(plan_cluster *c)
{
    make_cluster(c, 1);
    return model_13();
}

static plan_layout layout(int tp, int pp, int dp, int mbs, int m)
{
    plan_layout l;
    plan_layout_default(&l);
    l.tp = tp;
    l.pp = pp;
    l.dp = dp;
    l.micro_batch = mbs;
    l.microbatches = m;
    l.global_batch = (int64_t)dp * mbs * m;
    l.active_microbatches = pp + 2;
    l.flash_attention = 0;
    l.sequence_parallel = 0;
    return l;
}

/* Korthikanti et al. 2022 Table 2, TP without SP: sbh(10 + 24/t + 5as/(ht)). */
static void activations_tp_closed_form(void **state)
{
    plan_cluster c;
    plan_model m = one_node_13(&c);
    plan_layout l = layout(2, 1, 4, 3, 5);
    plan_estimate e;
    eval(&m, &c, &l, &e);
    double s = 1024, b = 3, h = 1536, a = 12, t = 2;
    double per_layer = s * b * h * (10 + 24 / t + 5 * a * s / (h * t));
    double embed = s * b * h * 3; /* embedding output + dropout mask, stage 0 */
    assert_rel(e.mem.activations_bytes, 13 * per_layer + embed, 1e-12);

    /* With SP everything divides by t: sbh(34 + 5as/h)/t. */
    l.sequence_parallel = 1;
    eval(&m, &c, &l, &e);
    per_layer = s * b * h * (34 + 5 * a * s / h) / t;
    assert_rel(e.mem.activations_bytes, 13 * per_layer + embed / t, 1e-12);

    /* Selective recompute drops the 5as/h term. */
    l.recompute = PLAN_RECOMP_SELECTIVE;
    eval(&m, &c, &l, &e);
    assert_rel(e.mem.activations_bytes, 13 * s * b * h * 34 / t + embed / t, 1e-12);

    /* Full recompute keeps 2sbh/t per layer (the checkpointed input). */
    l.recompute = PLAN_RECOMP_FULL;
    eval(&m, &c, &l, &e);
    assert_rel(e.mem.activations_bytes, 13 * 2 * s * b * h / t + embed / t, 1e-12);
}

/* A head size apart from h / a (12 heads of 160 on h 1536: q = 1920): Q, K,
 * V and the attention output are q wide, so Korthikanti's 24/t term of TP
 * (Q, K, V 3h, the projection input h, fc1 out 4h, GELU out 4h, at 2 bytes)
 * becomes (8q + 16h)/t per token; the rest stays. */
static void activations_head_size(void **state)
{
    plan_cluster c;
    plan_model m = one_node_13(&c);
    m.head_dim = 160;
    finish(&m);
    plan_layout l = layout(2, 1, 4, 3, 5);
    plan_estimate e;
    eval(&m, &c, &l, &e);
    double s = 1024, b = 3, h = 1536, a = 12, t = 2, q = 1920;
    double per_layer = s * b * (10 * h + (8 * q + 16 * h) / t + 5 * a * s / t);
    assert_rel(e.mem.activations_bytes, 13 * per_layer + s * b * h * 3, 1e-12);
    /* TP divides heads, not the head size: 12 heads over 4 */
    l = layout(4, 1, 2, 3, 5);
    eval(&m, &c, &l, &e);
    assert_int_equal(e.reject, PLAN_OK);
}

/* The attention core with a sliding window (s 4096, W 1024), fused: a
 * local layer's queries see the band of W keys ending at each, sW - W^2/2
 * pairs, W(1 - W/2s) = 896 keys a query against the causal s/2 = 2048 of a
 * global layer, so its time is 896/2048 of the global one's; with every
 * other layer global (7 of 13 local) the mean. Unfused the product is
 * computed whole and masked: no change. The GEMMs do not change. */
static void attention_window(void **state)
{
    (void)state;
    plan_cluster c;
    plan_model m = one_node_13(&c);
    m.seq = 4096;
    finish(&m);
    plan_layout l = layout(1, 1, 8, 1, 2);
    l.flash_attention = 1;
    l.attention = PLAN_ATTN_FLASH2;
    plan_estimate full, win;
    eval(&m, &c, &l, &full);
    m.sliding_window = 1024;
    finish(&m);
    eval(&m, &c, &l, &win);
    double band = 1024 * (1 - 1024 / (2.0 * 4096));
    assert_rel(band, 896, 0);
    assert_rel(win.compute.attn_s, full.compute.attn_s * band / 2048, 1e-12);
    assert_rel(win.compute.gemm_s, full.compute.gemm_s, 1e-15);
    assert_rel(win.mem.total_bytes, full.mem.total_bytes, 1e-15);
    m.sliding_window_pattern = 2;
    finish(&m);
    eval(&m, &c, &l, &win);
    assert_rel(win.compute.attn_s, full.compute.attn_s * (6 * 2048 + 7 * band) / (13 * 2048),
               1e-12);
    /* unfused: every score computed, then masked */
    l.flash_attention = 0;
    l.attention = PLAN_ATTN_UNFUSED;
    eval(&m, &c, &l, &win);
    m.sliding_window = 0;
    finish(&m);
    eval(&m, &c, &l, &full);
    assert_rel(win.compute.attn_s, full.compute.attn_s, 1e-15);
}

/* ZeRO (Rajbhandari et al. 2020): 2 + 2 + 12 bytes per parameter, sharded. */
static void zero_state_bytes(void **state)
{
    plan_cluster c;
    plan_model m = one_node_13(&c);
    plan_layout l = layout(2, 1, 4, 1, 4);
    plan_estimate e;
    double P = (double)m.params / 2; /* pp 1, tied: everything on the stage, split by TP */
    double P_tp = (13.0 * m.params_layer + m.params_embedding) / 2 + m.params_final_norm;
    (void)P;
    l.sharding = PLAN_SHARD_NONE;
    eval(&m, &c, &l, &e);
    assert_rel(e.mem.weights_bytes, 2 * P_tp, 1e-12);
    assert_rel(e.mem.grads_bytes, 2 * P_tp, 1e-12);
    assert_rel(e.mem.optimizer_bytes, 12 * P_tp, 1e-12);
    l.sharding = PLAN_SHARD_OPTIMIZER;
    eval(&m, &c, &l, &e);
    assert_rel(e.mem.optimizer_bytes, 12 * P_tp / 4, 1e-12);
    assert_rel(e.mem.grads_bytes, 2 * P_tp, 1e-12);
    l.sharding = PLAN_SHARD_GRADIENTS;
    eval(&m, &c, &l, &e);
    assert_rel(e.mem.grads_bytes, 2 * P_tp / 4, 1e-12);
}

/* More sharding never uses more memory; terms sum to the totals. */
static void invariants(void **state)
{
    plan_cluster c;
    make_cluster(&c, 2);
    plan_model m = model_13();
    double prev = 1e300;
    for (int sh = 0; sh < PLAN_SHARD__COUNT; sh++) {
        plan_layout l = layout(2, 2, 4, 2, 8);
        l.sharding = (plan_sharding)sh;
        plan_estimate e;
        eval(&m, &c, &l, &e);
        assert_true(e.mem.total_bytes <= prev);
        prev = e.mem.total_bytes;
        const plan_mem *x = &e.mem;
        assert_rel(x->total_bytes,
                   x->weights_bytes + x->grads_bytes + x->optimizer_bytes + x->activations_bytes +
                       x->recompute_bytes + x->logits_bytes + x->comm_buffers_bytes +
                       x->context_bytes + x->allocator_bytes,
                   1e-12);
        const plan_time *t = &e.time;
        assert_rel(t->step_s,
                   t->compute_s + t->tp_comm_s + t->cp_comm_s + t->pp_comm_s + t->bubble_s +
                       t->dp_exposed_s + t->optimizer_s,
                   1e-12);
        assert_true(t->bubble_s >= 0 && t->dp_exposed_s <= t->dp_total_s + 1e-15);
    }
}

/* One layout's stages by term against plan_evaluate: each stage's terms sum
 * to its stage_mem_bytes exactly (the same code computes both), the worst
 * stage's terms are est.mem, plan_stage_mem and plan_stages_mem agree, and
 * only the last stage holds logits. */
static void check_stage_terms(const plan_model *m, const plan_cluster *c, const plan_layout *l)
{
    plan_estimate e;
    st_err err = {0};
    eval(m, c, l, &e);
    assert_true(e.reject == PLAN_OK || e.reject == PLAN_REJ_OOM);
    assert_int_equal(e.nstages, l->pp);
    plan_mem *all = calloc(PLAN_PP_MAX, sizeof *all);
    assert_non_null(all);
    assert_int_equal(plan_stages_mem(m, c, l, all, PLAN_PP_MAX, &err), ST_OK);
    for (int s = 0; s < l->pp; s++) {
        plan_mem one;
        assert_int_equal(plan_stage_mem(m, c, l, s, &one, &err), ST_OK);
        assert_memory_equal(&one, &all[s], sizeof one);
        const plan_mem *x = &all[s];
        double sum = x->weights_bytes + x->grads_bytes + x->optimizer_bytes +
                     x->activations_bytes + x->recompute_bytes + x->logits_bytes +
                     x->comm_buffers_bytes + x->context_bytes + x->allocator_bytes;
        assert_true(sum == e.stage_mem_bytes[s]);
        assert_true(x->total_bytes == e.stage_mem_bytes[s]);
        assert_true(x->weights_bytes > 0 && x->activations_bytes > 0 && x->context_bytes > 0);
        if (s == l->pp - 1)
            assert_true(x->logits_bytes > 0);
        else
            assert_true(x->logits_bytes == 0.0);
    }
    assert_memory_equal(&all[e.worst_stage], &e.mem, sizeof e.mem);
    free(all);
}

/* Terms of every stage for pipelines of 1, 2, 4 and 8 stages, even and
 * uneven splits of 13 layers, every ZeRO level, recompute, GPipe, virtual
 * stages, fp32 gradients and a layout that does not fit. */
static void stage_terms(void **state)
{
    plan_cluster c1, c2;
    make_cluster(&c1, 1);
    make_cluster(&c2, 2);
    plan_model m = model_13();
    st_err err = {0};

    plan_layout l = layout(2, 1, 4, 3, 5); /* pp 1: the one stage has the logits */
    check_stage_terms(&m, &c1, &l);
    for (int sh = 0; sh < PLAN_SHARD__COUNT; sh++) {
        l = layout(2, 2, 4, 2, 8);
        l.sharding = (plan_sharding)sh;
        check_stage_terms(&m, &c2, &l);
    }
    l = layout(1, 8, 1, 1, 12); /* 13 layers over 8 stages: uneven */
    plan_estimate e;
    eval(&m, &c1, &l, &e);
    int lo = e.stage_layers[0], hi = e.stage_layers[0];
    for (int s = 1; s < 8; s++) {
        lo = e.stage_layers[s] < lo ? e.stage_layers[s] : lo;
        hi = e.stage_layers[s] > hi ? e.stage_layers[s] : hi;
    }
    assert_true(lo < hi);
    check_stage_terms(&m, &c1, &l);
    l.sharding = PLAN_SHARD_OPTIMIZER;
    l.recompute = PLAN_RECOMP_FULL;
    l.recompute_group = 2;
    l.offload_activations = 1;
    check_stage_terms(&m, &c1, &l);
    l = layout(2, 4, 2, 1, 8);
    l.schedule = PLAN_SCHED_VIRTUAL;
    l.virtual_stages = 2;
    l.fp32_grads = 1;
    l.sequence_parallel = 1;
    check_stage_terms(&m, &c2, &l);
    l = layout(1, 4, 2, 2, 6);
    l.schedule = PLAN_SCHED_SIMPLE;
    l.recompute = PLAN_RECOMP_SELECTIVE;
    l.sharding = PLAN_SHARD_PARAMS;
    check_stage_terms(&m, &c1, &l);

    /* Out of memory is a result: its stages still have their terms. */
    gpu.mem_bytes = 1e9;
    l = layout(2, 2, 2, 3, 5);
    eval(&m, &c1, &l, &e);
    assert_int_equal(e.reject, PLAN_REJ_OOM);
    check_stage_terms(&m, &c1, &l);

    /* Errors: a stage out of range, too little room, a rejected layout. */
    plan_mem one[2];
    assert_int_equal(plan_stage_mem(&m, &c1, &l, 2, one, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "stage 2"));
    st_err_clear(&err);
    assert_int_equal(plan_stage_mem(&m, &c1, &l, -1, one, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(plan_stages_mem(&m, &c1, &l, one, 1, &err), ST_EINVAL);
    st_err_clear(&err);
    l = layout(8, 1, 1, 1, 1); /* 12 heads, TP 8 */
    assert_int_equal(plan_stage_mem(&m, &c1, &l, 0, one, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "heads"));
    st_err_clear(&err);
    l = layout(2, 1, 4, 1, 1);
    l.micro_batch = 0;
    assert_int_equal(plan_stage_mem(&m, &c1, &l, 0, one, &err), ST_EINVAL);
    st_err_clear(&err);
    /* 3 stages inside nodes of 8 GPUs ("DPT": P innermost but TP 1) do not tile */
    plan_cluster c3;
    make_cluster(&c3, 3);
    l = layout(1, 3, 8, 1, 4);
    eval(&m, &c3, &l, &e);
    assert_int_equal(e.reject, PLAN_REJ_PLACEMENT);
    assert_int_equal(plan_stage_mem(&m, &c3, &l, 0, one, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "placement"));
}

/* 1F1B's bubble does not depend on m; interleaving v chunks divides it by
 * about v (Narayanan et al. 2021); ZB-H1 leaves a third (Qi et al. 2023). */
static void bubble_ratios(void **state)
{
    plan_cluster c;
    plan_model m = one_node_13(&c);
    m.layers = 16;
    finish(&m);
    plan_estimate e8, e16, ev, ez;
    plan_layout l = layout(1, 4, 2, 1, 8);
    eval(&m, &c, &l, &e8);
    plan_layout l16 = layout(1, 4, 2, 1, 16);
    eval(&m, &c, &l16, &e16);
    assert_rel(e8.time.bubble_s, e16.time.bubble_s, 1e-9);
    assert_true(e8.time.bubble_s > 0);

    plan_layout lz = l;
    lz.schedule = PLAN_SCHED_ZB_H1;
    eval(&m, &c, &lz, &ez);
    assert_rel(ez.time.bubble_s, e8.time.bubble_s / 3, 1e-9);

    plan_layout lv = l;
    lv.schedule = PLAN_SCHED_VIRTUAL;
    lv.virtual_stages = 2;
    eval(&m, &c, &lv, &ev);
    /* p2p per microbatch doubles with v, so the ratio is close to, not exactly, 1/2 */
    assert_rel(ev.time.bubble_s, e8.time.bubble_s / 2, 0.02);

    /* GPipe holds every microbatch, 1F1B at most p on the first stage. */
    plan_layout lg = l;
    lg.schedule = PLAN_SCHED_SIMPLE;
    lg.active_microbatches = 8;
    plan_estimate eg;
    eval(&m, &c, &lg, &eg);
    assert_int_equal(eg.stage_inflight[0], 8);
    assert_int_equal(e8.stage_inflight[0], 4);
    assert_int_equal(e8.stage_inflight[3], 1);
    assert_true(eg.mem.activations_bytes > e8.mem.activations_bytes);
}

/* Ring all-reduce inside a node: alpha + 2(n-1)/n S / busbw; across nodes
 * with one rank per node: alpha + 2(N-1)/N S / (net / gpus_per_node). */
static void allreduce_closed_forms(void **state)
{
    plan_cluster c;
    make_cluster(&c, 4);
    double S = 3.0e8;
    /* NCCL tuning.cc constants (us): ring Simple base 8.4, NVLink hop 3.4,
     * network hop 14; the node's measured small-message times (10 us on one
     * node of 8, 50 us on two) scale the hops against the LL ones (base
     * 6.6, NVLink 0.6, network 2.7). Large messages run Simple on a ring. */
    double si = (10.0 - 6.6) / (2 * 7 * 0.6);
    /* the two-node measurement ran the faster of an LL ring and an LL tree */
    double sn_ring = (50.0 - 6.6 - (2 * 15 - 2) * 0.6 * si) / (2 * 2.7);
    double sn_tree = (50.0 - 6.8 - 2 * 7 * 0.6 * si) / (2 * 1 * 5.0);
    double sn = sn_ring > sn_tree ? sn_ring : sn_tree;
    plan__span in = {4, 1};
    assert_rel(plan__allreduce_s(&c, &in, S), (8.4 + 6 * 3.4 * si) * 1e-6 + 2.0 * 3 / 4 * S / 230e9,
               1e-12);
    plan__span across = {1, 4};
    assert_rel(plan__allreduce_s(&c, &across, S),
               (8.4 + 6 * 14.0 * sn) * 1e-6 + 2.0 * 3 / 4 * S / (50e9 / 8), 1e-12);
    /* 8 x 4: a ring drives all 8 NICs but moves 2 x 31/32 of the buffer; a
     * tree moves the 1/8 shard 2 x 3/4 times across, and wins */
    plan__span both = {8, 4};
    double t_in = 2.0 * 7 / 8 * S / 230e9, t_out = 2.0 * 3 / 4 * (S / 8) / (50e9 / 8);
    const double base_r[3] = {6.6, 14.0, 8.4}, base_t[3] = {6.8, 14.0, 0.0};
    const double nv_r[3] = {0.6, 1.9, 3.4}, nv_t[3] = {0.6, 1.25, 28.0};
    const double net_r[3] = {2.7, 4.0, 14.0}, net_t[3] = {5.0, 8.5, 28.0};
    const double data[3] = {0.5, 120.0 / 128.0, 1.0};
    double best = 1e30, best_ring = 1e30;
    for (int p = 0; p < 3; p++) {
        double ring = (base_r[p] + 56 * nv_r[p] * si + 6 * net_r[p] * sn) * 1e-6 +
                      2.0 * 31 / 32 * S / 50e9 / data[p];
        double tree = (base_t[p] + 2 * (7 * nv_t[p] * si + 2 * net_t[p] * sn)) * 1e-6 +
                      (t_in > t_out ? t_in : t_out) / data[p];
        best = fmin(best, fmin(ring, tree));
        best_ring = fmin(best_ring, ring);
    }
    assert_rel(plan__allreduce_s(&c, &both, S), best, 1e-12);
    assert_true(best < best_ring); /* a tree wins */
    /* all-gather: half the steps and half the traffic */
    assert_rel(plan__allgather_s(&c, &in, S), (8.4 + 3 * 3.4 * si) * 1e-6 + 3.0 / 4 * S / 230e9,
               1e-12);
    /* a tiny message runs LL on a tree across many nodes */
    plan_cluster big;
    make_cluster(&big, 64);
    plan__span wide = {1, 64};
    double ring_ll = (6.6 + 126 * 2.7 * sn) * 1e-6 + 2.0 * 63 / 64 * 8.0 / (50e9 / 8) / 0.5;
    double tree_ll = (6.8 + 2 * 6 * 5.0 * sn) * 1e-6 + 2.0 * 63 / 64 * 8.0 / (50e9 / 8) / 0.5;
    assert_rel(plan__allreduce_s(&big, &wide, 8.0), tree_ll, 1e-12);
    assert_true(tree_ll < ring_ll);
}

/* Tensor cores want dims that are multiples of 8 elements, on A100 of 64
 * (NVIDIA Matrix Multiplication Background User's Guide): three tiers. */
static void gemm_alignment_tiers(void **state)
{
    plan_cluster c;
    make_cluster(&c, 1);
    gpu.gemm_align_bytes = 128;
    gpu.align_partial_factor = 0.75;
    /* closed form: 2mnk / (peak x eff_max x prod d/(d + half) x factor) */
#define GEMM_T(m, n, k, f)                                                                     \
    (2.0 * (m) * (n) * (k) /                                                                   \
     (300e12 * 0.8 * (m) / ((m) + 96.0) * (n) / ((n) + 96.0) * (k) / ((k) + 96.0) * (f)))
    assert_rel(plan__gemm_s(&c, 4096, 1792, 14336, 1), GEMM_T(4096, 1792, 14336, 1.0), 1e-12);
    assert_rel(plan__gemm_s(&c, 4096, 1800, 14400, 1), GEMM_T(4096, 1800, 14400, 0.75), 1e-12);
    assert_rel(plan__gemm_s(&c, 4096, 1804, 14400, 1), GEMM_T(4096, 1804, 14400, 0.5), 1e-12);
    gpu.gemm_align_bytes = 16; /* one tier only */
    assert_rel(plan__gemm_s(&c, 4096, 1800, 14400, 1), GEMM_T(4096, 1800, 14400, 1.0), 1e-12);
    gpu.gemm_align_bytes = 0; /* unset reads as 16 */
    assert_rel(plan__gemm_s(&c, 4096, 1800, 14400, 1), GEMM_T(4096, 1800, 14400, 1.0), 1e-12);
#undef GEMM_T
}

/* Blocking launches add the host's time of every kernel; without them that
 * time is only a floor, which large kernels stay above. */
static void host_time_per_kernel(void **state)
{
    plan_cluster c;
    plan_model m = one_node_13(&c);
    plan_layout l = layout(1, 1, 8, 2, 4);
    l.recompute = PLAN_RECOMP_FULL;
    plan_estimate async, blocking;
    eval(&m, &c, &l, &async);
    l.launch_blocking = 1;
    eval(&m, &c, &l, &blocking);
    /* forward, recomputed forward and backward of 13 layers, 4 microbatches */
    double host = 4 * 13 * (2 * PLAN__KERNELS_FWD + PLAN__KERNELS_BWD) * plan_framework_get(l.framework)->host_op_s;
    assert_int_equal(async.reject, PLAN_OK);
    assert_rel(blocking.time.compute_s - async.time.compute_s, host, 1e-9);
    /* fused attention: 3 and 6 kernels fewer per layer */
    l.flash_attention = 1;
    l.launch_blocking = 0;
    eval(&m, &c, &l, &async);
    l.launch_blocking = 1;
    eval(&m, &c, &l, &blocking);
    host = 4 * 13 *
           (2 * (PLAN__KERNELS_FWD - PLAN__KERNELS_ATTN_FWD + 1) + PLAN__KERNELS_BWD -
            PLAN__KERNELS_ATTN_BWD + 1) *
           plan_framework_get(l.framework)->host_op_s;
    assert_rel(blocking.time.compute_s - async.time.compute_s, host, 1e-9);

    /* a tiny model: the GPU would finish each kernel before the host has
     * launched the next, so the host sets the pace */
    plan_model tiny = {.arch = PLAN_ARCH_GPT, .layers = 4, .hidden = 64, .heads = 2,
                       .kv_heads = 2, .ffn = 256, .seq = 64, .vocab = 512, .tied_embedding = 1};
    finish(&tiny);
    l = layout(1, 1, 8, 1, 8);
    l.recompute = PLAN_RECOMP_NONE;
    eval(&tiny, &c, &l, &async);
    assert_int_equal(async.reject, PLAN_OK);
    assert_true(async.time.compute_s >=
                8 * 4 * (PLAN__KERNELS_FWD + PLAN__KERNELS_BWD) * plan_framework_get(l.framework)->host_op_s);
}

/* The span of the group along axis: ranks per node and nodes (-1: not
 * checked). */
static void check_span(const plan_layout *l, const plan_cluster *c, char axis, int ranks_per_node,
                       int nodes)
{
    plan__span s;
    assert_int_equal(plan__span_of(l, c, axis, &s), 0);
    if (ranks_per_node >= 0)
        assert_int_equal(s.ranks_per_node, ranks_per_node);
    if (nodes >= 0)
        assert_int_equal(s.nodes, nodes);
}

static void placement_spans(void **state)
{
    plan_cluster c;
    make_cluster(&c, 4);
    plan_layout l = layout(8, 2, 2, 1, 2);
    check_span(&l, &c, 'T', 8, 1);
    check_span(&l, &c, 'P', 1, 2);
    l = layout(2, 4, 4, 1, 4);
    memcpy(l.placement, "DPT", 4); /* P stride 2: 4 stages inside a node */
    check_span(&l, &c, 'P', 4, 1);
    check_span(&l, &c, 'D', 1, 4);
    memcpy(l.placement, "TPD", 4); /* spread: DP innermost, TP stride 16 */
    check_span(&l, &c, 'T', -1, 2);
    check_span(&l, &c, 'D', 4, -1);
}

static void rejections(void **state)
{
    plan_cluster c;
    plan_model m = one_node_13(&c);
    st_err err = {0};
    plan_estimate e;
    plan_layout l = layout(8, 1, 1, 1, 1); /* 12 heads, TP 8 */
    eval(&m, &c, &l, &e);
    assert_int_equal(e.reject, PLAN_REJ_HEADS);
    l = layout(2, 2, 2, 1, 4);
    l.global_batch = 7;
    eval(&m, &c, &l, &e);
    assert_int_equal(e.reject, PLAN_REJ_BATCH);
    l = layout(1, 8, 1, 1, 12);
    l.schedule = PLAN_SCHED_VIRTUAL;
    l.virtual_stages = 2; /* 16 chunks for 13 layers */
    eval(&m, &c, &l, &e);
    assert_int_equal(e.reject, PLAN_REJ_LAYERS);
    l = layout(2, 1, 4, 1, 1);
    l.micro_batch = 0;
    assert_int_equal(plan_evaluate(&m, &c, &l, &e, NULL, &err), ST_EINVAL);
}

/* The search keeps its best first and finds the layout a user fixes. */
static void search_ranks_and_fixes(void **state)
{
    plan_cluster c;
    make_cluster(&c, 2);
    plan_model m = model_13();
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.global_batch = 64;
    plan_result *r = calloc(1, sizeof *r);
    st_err err = {0};
    /* SMP v1 (the default) runs on the instance types it documents only */
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "does not run on test.8x"));
    cfg.any_instance = 1; /* as validate reads a published run: where it ran */
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop >= 2);
    for (int i = 1; i < r->ntop; i++)
        assert_true(r->top[i - 1].est.time.step_s <= r->top[i].est.time.step_s);
    assert_true(r->evaluated >= r->feasible);

    cfg.tp = 2;
    cfg.pp = 2;
    cfg.dp = 4;
    cfg.micro_batch = 2;
    cfg.recompute = PLAN_RECOMP_FULL;
    cfg.sharding = PLAN_SHARD_OPTIMIZER;
    cfg.schedule = PLAN_SCHED_INTERLEAVED;
    cfg.active_microbatches = 4;
    cfg.offload_activations = 0;
    cfg.sequence_parallel = 0;
    cfg.placement[0] = 0;
    memcpy(cfg.placement, "DPT", 4);
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_int_equal(r->ntop, 1);
    assert_int_equal(r->top[0].layout.microbatches, 8);

    cfg.tp = 3; /* does not divide 16 GPUs */
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_EINVAL);

    /* the half precision a release has: Megatron-LM 2019-2020 trains fp16
     * (--fp16 only), Megatron-Core bf16 */
    plan_config_default(&cfg);
    cfg.global_batch = 64;
    cfg.any_instance = 1;
    int k = -1;
    assert_int_equal(plan_framework_find("megatron@2020", &k, &err), ST_OK);
    cfg.framework = k;
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_int_equal(r->top[0].layout.precision, PLAN_PREC_FP16);
    assert_int_equal(plan_framework_find("megatron@2024", &k, &err), ST_OK);
    cfg.framework = k;
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_int_equal(r->top[0].layout.precision, PLAN_PREC_BF16);
    free(r);
}

/* The fused attention generations: FlashAttention-2 at the chip's
 * flash_eff; FlashAttention at half of it, -3 at 1.5x on a chip its
 * kernels run on (Hopper: flash3; not merely one with FP8 tensor cores)
 * and as -2 elsewhere, cuDNN as -2 unless measured;
 * a measured rate wins, per direction where measured so (the derived
 * generations follow FlashAttention-2's measured directions). The
 * attention core's time follows. */
static double attn_f(const plan_cluster *c, plan_attn a)
{
    double f, b;
    double r = plan__attn_eff(c, a, &f, &b);
    assert_true(r == f);
    return f;
}

static double attn_b(const plan_cluster *c, plan_attn a)
{
    double f, b;
    plan__attn_eff(c, a, &f, &b);
    return b;
}

static void attention_generations(void **state)
{
    (void)state;
    plan_cluster c;
    make_cluster(&c, 1);
    assert_rel(attn_f(&c, PLAN_ATTN_FLASH2), 0.5, 0);
    assert_rel(attn_b(&c, PLAN_ATTN_FLASH2), 0.5, 0);
    assert_rel(attn_f(&c, PLAN_ATTN_FLASH1), 0.25, 1e-15);
    assert_rel(attn_f(&c, PLAN_ATTN_FLASH3), 0.5, 0);
    assert_rel(attn_f(&c, PLAN_ATTN_CUDNN), 0.5, 0);
    gpu.fp8_peak_flops = 600e12; /* FP8 tensor cores are not Hopper's kernels */
    assert_rel(attn_f(&c, PLAN_ATTN_FLASH3), 0.5, 0);
    gpu.flash3 = 1;
    assert_rel(attn_f(&c, PLAN_ATTN_FLASH3), 0.75, 1e-15);
    gpu.cudnn_attn_eff = 0.361;
    gpu.flash3_eff = 0.6;
    assert_rel(attn_f(&c, PLAN_ATTN_CUDNN), 0.361, 0);
    assert_rel(attn_b(&c, PLAN_ATTN_CUDNN), 0.361, 0);
    assert_rel(attn_f(&c, PLAN_ATTN_FLASH3), 0.6, 0);

    plan_model m = model_13();
    plan_layout l = layout(1, 1, 8, 2, 4);
    plan_estimate e2, ec;
    l.flash_attention = 1;
    l.attention = PLAN_ATTN_FLASH2;
    eval(&m, &c, &l, &e2);
    l.attention = PLAN_ATTN_CUDNN;
    eval(&m, &c, &l, &ec);
    assert_rel(ec.compute.attn_s, e2.compute.attn_s * 0.5 / 0.361, 1e-9);
    /* a fused kernel without a generation is FlashAttention-2 */
    l.attention = PLAN_ATTN_UNFUSED;
    eval(&m, &c, &l, &ec);
    assert_rel(ec.compute.attn_s, e2.compute.attn_s, 1e-12);

    /* measured per direction (FlashAttention-2 on an H100 through PyTorch:
     * 0.285 of peak forward, 0.193 backward; cuDNN 0.523 and 0.321): the
     * forward at the one, the backward's 2.5x the FLOPs at the other, and
     * FlashAttention-1 and -3 by their ratios to each direction */
    gpu.flash3_eff = gpu.cudnn_attn_eff = 0;
    gpu.flash2_fwd_eff = 0.285;
    gpu.flash2_bwd_eff = 0.193;
    gpu.cudnn_fwd_eff = 0.523;
    gpu.cudnn_bwd_eff = 0.321;
    assert_rel(attn_f(&c, PLAN_ATTN_FLASH2), 0.285, 0);
    assert_rel(attn_b(&c, PLAN_ATTN_FLASH2), 0.193, 0);
    assert_rel(attn_b(&c, PLAN_ATTN_FLASH1), 0.0965, 1e-15);
    assert_rel(attn_b(&c, PLAN_ATTN_FLASH3), 0.2895, 1e-15);
    assert_rel(attn_f(&c, PLAN_ATTN_CUDNN), 0.523, 0);
    assert_rel(attn_b(&c, PLAN_ATTN_CUDNN), 0.321, 0);
    l.attention = PLAN_ATTN_FLASH2;
    eval(&m, &c, &l, &e2);
    /* forward F / 0.285 + backward 2.5 F / 0.193, against 3.5 F / 0.5 before */
    double per_f = 1.0 / 0.285 + 2.5 / 0.193;
    l.attention = PLAN_ATTN_CUDNN;
    eval(&m, &c, &l, &ec);
    assert_rel(ec.compute.attn_s, e2.compute.attn_s * (1.0 / 0.523 + 2.5 / 0.321) / per_f, 1e-9);
    gpu.flash2_fwd_eff = gpu.flash2_bwd_eff = gpu.cudnn_fwd_eff = gpu.cudnn_bwd_eff = 0;
    gpu.fp8_peak_flops = 0;
}

/* A GPU's share of the network: its node's split over its GPUs, at most
 * the NIC it reaches (net_gpu_bps); the rings and sends across nodes use it. */
static void network_share_per_gpu(void **state)
{
    (void)state;
    plan_cluster c;
    make_cluster(&c, 2);
    double share = inst.net_bps / inst.gpus_per_node;
    assert_rel(plan__p2p_link_bps(&c, 0), share * 0.96, 1e-12);
    inst.net_gpu_bps = share / 4; /* one slow NIC for each GPU */
    assert_rel(plan__p2p_link_bps(&c, 0), share / 4 * 0.96, 1e-12);
    plan__span sp = {.ranks_per_node = 1, .nodes = 2};
    double slow = plan__allgather_s(&c, &sp, 1e9);
    inst.net_gpu_bps = 4 * share; /* a faster NIC than the node's share: the share */
    double fast = plan__allgather_s(&c, &sp, 1e9);
    assert_rel(plan__p2p_link_bps(&c, 0), share * 0.96, 1e-12);
    assert_true(slow > 3.0 * fast);
    inst.net_gpu_bps = 0;
}


/* A collective the compute hides takes its channels' SMs from it
 * (plan__comm_sm_frac): 20 channels on 100 SMs slow the backward the
 * gradient buckets overlap by 0.2 of the overlap, so the DP term grows by
 * 0.2 x what was hidden, never past the whole sync; ZeRO-3's per-layer
 * gathers the same; a GPU or node without the counts is unchanged. */
static void collectives_take_sms(void **state)
{
    (void)state;
    plan_cluster c;
    make_cluster(&c, 2);
    plan_model m = model_13();
    plan_layout l = layout(1, 1, 16, 2, 4);
    l.flash_attention = 1;
    plan_estimate e0, e1;
    assert_rel(plan__comm_sm_frac(&c), 0.0, 0);
    eval(&m, &c, &l, &e0);
    gpu.sms = 100;
    assert_rel(plan__comm_sm_frac(&c), 0.0, 0); /* channels not known */
    inst.nccl_channels = 20;
    assert_rel(plan__comm_sm_frac(&c), 0.2, 0);
    eval(&m, &c, &l, &e1);
    const plan_time *t0 = &e0.time, *t1 = &e1.time;
    assert_true(t0->dp_total_s > t0->dp_exposed_s); /* something was hidden */
    assert_rel(t1->dp_exposed_s, t0->dp_exposed_s + 0.2 * (t0->dp_total_s - t0->dp_exposed_s), 1e-12);
    assert_rel(t1->dp_total_s, t0->dp_total_s, 0);
    assert_rel(t1->compute_s, t0->compute_s, 0);

    /* ZeRO-3: the gathers hidden behind each layer's compute */
    l.sharding = PLAN_SHARD_PARAMS;
    gpu.sms = 0;
    eval(&m, &c, &l, &e0);
    gpu.sms = 100;
    eval(&m, &c, &l, &e1);
    assert_true(e1.time.dp_exposed_s > e0.time.dp_exposed_s);
    assert_true(e1.time.dp_exposed_s <= e1.time.dp_total_s);
    assert_rel(e1.time.dp_total_s, e0.time.dp_total_s, 0);
    gpu.sms = 0;
    inst.nccl_channels = 0;
}

/* Transformer Engine's userbuffers (plan_tp_overlap.c) in closed form on a
 * GEMM rate that does not depend on the shape (gemm_dim_half 0, so a
 * product in pieces costs what it costs whole): no TP, nothing; with the
 * SM count unknown and one piece per pipelined product, the products cost
 * what they did and every reduce-scatter stays exposed; with 132 SMs, 16 of
 * them given to each pipelined reduce-scatter in 4 pieces and 16 to each
 * bulk collective, the row-parallel forwards run on 116/132 of the chip,
 * the bulk collectives take 16/132 of what they hide, and a quarter of each
 * pipelined reduce-scatter stays exposed. */
static void userbuffers_overlap(void **state)
{
    (void)state;
    plan_cluster c;
    make_cluster(&c, 1);
    c.eff.gemm_dim_half = 0;
    plan__span sp = {.ranks_per_node = 4, .nodes = 1};
    plan_framework fw = {0};
    plan__ub_layer_in in = {.tokens = 8192, .tp = 1, .hidden = 4096,
                            .col_n = {3072, 4096}, .row_k = {1024, 4096},
                            .elem_bytes = 2, .fp8 = 0};
    plan__ub_cost u;
    plan__ub_layer(&c, &fw, &sp, &in, &u);
    assert_rel(u.fwd_gemm_s + u.bwd_gemm_s + u.fwd_exposed_s + u.bwd_exposed_s, 0.0, 0);

    in.tp = 4;
    double coll = plan__allgather_s(&c, &sp, 2.0 * 8192 * 4096);
    double col[2], row[2];
    for (int i = 0; i < 2; i++) {
        col[i] = plan__gemm_s(&c, 8192, in.col_n[i], 4096, 1);
        row[i] = plan__gemm_s(&c, 8192, 4096, in.row_k[i], 1);
    }
    plan__ub_layer(&c, &fw, &sp, &in, &u);
    assert_true(fabs(u.fwd_gemm_s) <= 1e-12 * col[0]); /* the pieces' sums round */
    assert_true(fabs(u.bwd_gemm_s) <= 1e-12 * col[0]);
    double ef = 0.0, eb = 0.0;
    for (int i = 0; i < 2; i++) {
        ef += fmax(0.0, coll - 0.75 * col[i]) + coll;
        eb += fmax(0.0, coll - 0.75 * row[i]) + 2.0 * fmax(0.0, coll - col[i]);
    }
    assert_rel(u.fwd_exposed_s, ef, 1e-12);
    assert_rel(u.bwd_exposed_s, eb, 1e-12);

    gpu.sms = 132;
    fw.ub_pipeline_sms = 16;
    fw.ub_pipeline_splits = 4;
    fw.ub_bulk_sms = 16;
    plan__ub_layer(&c, &fw, &sp, &in, &u);
    double gf = 0.0, gb = 0.0;
    ef = eb = 0.0;
    for (int i = 0; i < 2; i++) {
        double pipe = row[i] * 132.0 / 116.0;
        gf += pipe - row[i];
        gb += 2.0 * 16.0 / 132.0 * fmin(coll, col[i]);
        ef += fmax(0.0, coll - 0.75 * col[i]) + coll / 4 + fmax(0.0, 0.75 * (coll - pipe));
        eb += fmax(0.0, coll - 0.75 * row[i]) + 2.0 * fmax(0.0, coll - col[i]);
    }
    assert_true(gf > 0 && gb > 0);
    assert_rel(u.fwd_gemm_s, gf, 1e-12);
    assert_rel(u.bwd_gemm_s, gb, 1e-12);
    assert_rel(u.fwd_exposed_s, ef, 1e-12);
    assert_rel(u.bwd_exposed_s, eb, 1e-12);

    /* a shape-dependent rate: pieces of fewer rows cost more */
    c.eff.gemm_dim_half = 96;
    fw.ub_pipeline_sms = fw.ub_bulk_sms = 0;
    plan__ub_layer(&c, &fw, &sp, &in, &u);
    assert_true(u.fwd_gemm_s > 0 && u.bwd_gemm_s > 0);
    gpu.sms = 0;
}

/* Megatron's block method (plan_layout_recompute_share): recomputing the
 * first r of a chunk's 13 layers stores and costs r/13 of the way from no
 * recompute to full recompute, in the activations and in the compute; all
 * 13 (or more) is full recompute, bit for bit; the share follows the
 * chunk's layers (13 / (pp v)). */
static void block_recompute_share(void **state)
{
    (void)state;
    plan_cluster c;
    plan_model m = one_node_13(&c);
    plan_layout l = layout(1, 1, 8, 1, 4);
    plan_estimate none, full, part, all;
    eval(&m, &c, &l, &none);
    l.recompute = PLAN_RECOMP_FULL;
    eval(&m, &c, &l, &full);
    assert_rel(plan_layout_recompute_share(&m, &l), 1.0, 0);
    l.recompute_layers = 13;
    eval(&m, &c, &l, &all);
    assert_rel(all.time.step_s, full.time.step_s, 0);
    assert_rel(all.mem.activations_bytes, full.mem.activations_bytes, 0);
    l.recompute_layers = 4;
    assert_rel(plan_layout_recompute_share(&m, &l), 4.0 / 13.0, 1e-15);
    eval(&m, &c, &l, &part);
    double r = 4.0 / 13.0;
    assert_rel(part.time.compute_s,
               none.time.compute_s + r * (full.time.compute_s - none.time.compute_s), 1e-12);
    assert_rel(part.mem.activations_bytes,
               none.mem.activations_bytes +
                   r * (full.mem.activations_bytes - none.mem.activations_bytes),
               1e-12);
    assert_true(part.time.compute_s < full.time.compute_s);
    assert_true(part.mem.activations_bytes > full.mem.activations_bytes);
    /* 13 layers on 2 stages of 2 chunks: 3.25 a chunk, 2 of them recomputed */
    plan_layout v = layout(1, 2, 4, 1, 4);
    v.recompute = PLAN_RECOMP_FULL;
    v.schedule = PLAN_SCHED_VIRTUAL;
    v.virtual_stages = 2;
    v.recompute_layers = 2;
    assert_rel(plan_layout_recompute_share(&m, &v), 2.0 / 3.25, 1e-15);
    v.recompute = PLAN_RECOMP_SELECTIVE;
    assert_rel(plan_layout_recompute_share(&m, &v), 0.0, 0);
}

/* A partial rematerialisation (plan_layout.recompute_saved) between no
 * recompute and full: keeping every product's output and the attention's
 * leaves only the elementwise kernels to recompute and stores those
 * outputs; keeping none is full recompute; each kept output lowers the
 * recompute and raises the store. A stack whose recompute is dead-code
 * eliminated (JAX) skips the MLP's output product even in full recompute,
 * keeping what it stores. */
static void partial_remat(void **state)
{
    (void)state;
    plan_cluster c;
    plan_model m = one_node_13(&c);
    plan_layout l = layout(1, 1, 8, 1, 4);
    l.flash_attention = 1;
    plan_estimate none, full, part, all;
    eval(&m, &c, &l, &none);
    l.recompute = PLAN_RECOMP_FULL;
    eval(&m, &c, &l, &full);
    l.recompute_saved = PLAN_SAVE_QKV | PLAN_SAVE_OUT;
    eval(&m, &c, &l, &part);
    assert_true(part.time.compute_s < full.time.compute_s);
    assert_true(part.time.compute_s > none.time.compute_s);
    assert_true(part.mem.activations_bytes > full.mem.activations_bytes);
    assert_true(part.mem.activations_bytes < none.mem.activations_bytes);
    l.recompute_saved = PLAN_SAVE_ALL;
    eval(&m, &c, &l, &all);
    assert_true(all.time.compute_s < part.time.compute_s);
    assert_true(all.compute.gemm_s <= none.compute.gemm_s * (1 + 1e-12));
    assert_true(all.compute.attn_s <= none.compute.attn_s * (1 + 1e-12));

    /* JAX: the full recompute without the MLP's output product */
    int jax = -1;
    st_err err = {0};
    assert_int_equal(plan_framework_find("jax@2024", &jax, &err), ST_OK);
    plan_layout lj = layout(1, 1, 8, 1, 4);
    lj.flash_attention = 1;
    lj.recompute = PLAN_RECOMP_FULL;
    plan_estimate fj, fm;
    eval(&m, &c, &lj, &fm);
    lj.framework = jax;
    eval(&m, &c, &lj, &fj);
    assert_true(plan_framework_get(jax)->remat_dce);
    assert_true(fj.compute.gemm_s < fm.compute.gemm_s);
    assert_rel(fj.mem.activations_bytes, fm.mem.activations_bytes, 1e-12);
}

/* torchtitan's selective recompute is its op-level policy (the outputs of
 * the attention and of every other product kept, the rest recomputed), not
 * Korthikanti et al.'s, which with a fused attention kernel keeps and
 * recomputes what no recompute does: it stores less than no recompute and
 * more than full, recomputes more than none and less than full, the
 * attention core not at all; the default stack's selective (SMP v1's,
 * Korthikanti et al.'s) under the same fused kernel is the layout without
 * recompute. Of the products, the kept ones
 * are Q, V, the gate and the down product; K, the output projection and
 * the up product are recomputed. */
static void torchtitan_op_sac(void **state)
{
    (void)state;
    plan_cluster c;
    plan_model m = one_node_13(&c);
    int tt = -1;
    st_err err = {0};
    assert_int_equal(plan_framework_find("torchtitan@2024", &tt, &err), ST_OK);
    assert_true(plan_framework_get(tt)->selective_ops);
    plan_layout l = layout(1, 1, 8, 1, 4);
    l.flash_attention = 1;
    plan_estimate none, sel, full, smp_none, smp_sel;
    eval(&m, &c, &l, &smp_none);
    l.recompute = PLAN_RECOMP_SELECTIVE;
    eval(&m, &c, &l, &smp_sel);
    assert_rel(smp_sel.mem.activations_bytes, smp_none.mem.activations_bytes, 1e-12);
    assert_rel(smp_sel.time.compute_s, smp_none.time.compute_s, 1e-12);
    l.framework = tt;
    l.recompute = PLAN_RECOMP_NONE;
    eval(&m, &c, &l, &none);
    l.recompute = PLAN_RECOMP_SELECTIVE;
    eval(&m, &c, &l, &sel);
    l.recompute = PLAN_RECOMP_FULL;
    eval(&m, &c, &l, &full);
    assert_true(sel.mem.activations_bytes < none.mem.activations_bytes);
    assert_true(sel.mem.activations_bytes > full.mem.activations_bytes);
    assert_true(sel.time.compute_s > none.time.compute_s);
    assert_true(sel.time.compute_s < full.time.compute_s);
    assert_rel(sel.compute.attn_s, none.compute.attn_s, 1e-12);
    assert_true(sel.compute.gemm_s > none.compute.gemm_s);
}

/* one_node_13's shape as a Llama layer (RoPE, RMSNorm, SwiGLU), and the
 * index of torchtitan's 2024 release in *tt. */
static plan_model llama_node_13(plan_cluster *c, int *tt)
{
    plan_model m = one_node_13(c);
    m.arch = PLAN_ARCH_LLAMA;
    m.mlp = PLAN_MLP_ARCH;
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_framework_find("torchtitan@2024", tt, &err), ST_OK);
    return m;
}

/* Under a pipeline, torchtitan's FSDP2 (PyTorch's pipelining) syncs the
 * sharded gradients once, at the last microbatch's backward, and keeps the
 * stage's parameters gathered and gradients unsharded until then: its
 * sharded layout moves and holds what the unsharded one does (a
 * reduce-scatter and an all-gather cost an all-reduce's traffic). Without a
 * pipeline it reduce-scatters every microbatch as FSDP does. */
static void torchtitan_pp_sync_once(void **state)
{
    (void)state;
    plan_cluster c;
    int tt = -1;
    plan_model m = llama_node_13(&c, &tt);
    assert_true(plan_framework_get(tt)->pp_sync_once);
    plan_layout l = layout(1, 2, 4, 1, 8);
    l.flash_attention = 1;
    l.attention = PLAN_ATTN_FLASH2;
    l.framework = tt;
    l.fp32_grads = 1;
    plan_estimate sharded, plain;
    l.sharding = PLAN_SHARD_GRADIENTS;
    eval(&m, &c, &l, &sharded);
    l.sharding = PLAN_SHARD_NONE;
    eval(&m, &c, &l, &plain);
    assert_rel(sharded.time.dp_total_s, plain.time.dp_total_s, 1e-12);
    assert_rel(sharded.mem.grads_bytes, plain.mem.grads_bytes, 1e-12);
    assert_rel(sharded.mem.weights_bytes, plain.mem.weights_bytes, 1e-12);
    assert_true(sharded.mem.optimizer_bytes < plain.mem.optimizer_bytes);
    /* no pipeline: every microbatch's gradients reduce-scattered */
    plan_layout d = layout(1, 1, 8, 1, 8);
    d.flash_attention = 1;
    d.attention = PLAN_ATTN_FLASH2;
    d.framework = tt;
    d.fp32_grads = 1;
    d.sharding = PLAN_SHARD_GRADIENTS;
    eval(&m, &c, &d, &sharded);
    d.sharding = PLAN_SHARD_NONE;
    eval(&m, &c, &d, &plain);
    assert_true(sharded.time.dp_total_s > 4.0 * plain.time.dp_total_s);
    assert_true(sharded.mem.grads_bytes < plain.mem.grads_bytes);
}

/* Summing the microbatches' weight gradients: Megatron-LM 2021's main_grad
 * hook reads each microbatch's gradient and reads and writes the buffer
 * (2 + 2 + 2 bytes a parameter in half precision, 2 + 4 + 4 into fp32)
 * after every microbatch; 2020's autograd accumulation the same from the
 * second on; 2022's fused GEMM accumulates in place, no pass. With one
 * microbatch there is nothing to sum. */
static void wgrad_accumulation_pass(void **state)
{
    (void)state;
    plan_cluster c;
    plan_model m = one_node_13(&c);
    static const struct {
        const char *key;
        int fp32;
        double bytes, share;
    } cases[] = {
        {"megatron@2021", 0, 6.0, 1.0},
        {"megatron@2021", 1, 10.0, 1.0},
        {"megatron@2020", 0, 6.0, 7.0 / 8.0},
        {"megatron@2022", 0, 0.0, 0.0},
    };
    /* the one stage's weights: layers, embedding, final norm (tied head) */
    double P = 13.0 * (double)m.params_layer + (double)m.params_embedding +
               (double)m.params_final_norm;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st_err err = {0};
        int fw = -1;
        assert_int_equal(plan_framework_find(cases[i].key, &fw, &err), ST_OK);
        plan_layout one = layout(1, 1, 8, 1, 1), eight = layout(1, 1, 8, 1, 8);
        one.framework = eight.framework = fw;
        one.fp32_grads = eight.fp32_grads = cases[i].fp32;
        plan_estimate e1, e8;
        eval(&m, &c, &one, &e1);
        eval(&m, &c, &eight, &e8);
        double pass = cases[i].bytes * P / (gpu.hbm_bps * gpu.hbm_eff) * cases[i].share;
        if (pass > 0)
            assert_rel(e8.time.compute_s - 8.0 * e1.time.compute_s, 8.0 * pass, 1e-9);
        else
            assert_rel(e8.time.compute_s, 8.0 * e1.time.compute_s, 1e-12);
    }
}

/* DeepSpeed-Ulysses (megatron-deepspeed@2023): per layer and microbatch,
 * an all-to-all of Q, K, V and the output forward and of their gradients
 * backward, all exposed (plan__alltoall_s over the context-parallel
 * group), again in a fully recomputed forward; the heads must divide over
 * the group. A ring (Megatron-Core) exchanges K and V behind the
 * attention instead. */
static void ulysses_all_to_all(void **state)
{
    (void)state;
    plan_cluster c;
    plan_model m = one_node_13(&c);
    int ds = -1, mc = -1;
    st_err err = {0};
    assert_int_equal(plan_framework_find("megatron-deepspeed@2023", &ds, &err), ST_OK);
    assert_int_equal(plan_framework_find("megatron@2024", &mc, &err), ST_OK);
    assert_true(plan_framework_get(ds)->cp_all_to_all);
    plan_layout l = layout(1, 1, 2, 1, 3);
    l.cp = 4;
    l.framework = ds;
    l.flash_attention = 1;
    l.attention = PLAN_ATTN_FLASH2;
    l.recompute = PLAN_RECOMP_NONE;
    l.sharding = PLAN_SHARD_NONE;
    memcpy(l.placement, "DPT", 4);
    plan_estimate e;
    eval(&m, &c, &l, &e);
    assert_int_equal(e.reject, PLAN_OK);
    plan__span sp = {.ranks_per_node = 4, .nodes = 1};
    double eb = 2.0, tok = (double)m.seq / l.cp; /* micro-batch 1 */
    double x = 2.0 * plan__alltoall_s(&c, &sp, eb * tok * (double)m.hidden) +
               2.0 * plan__alltoall_s(&c, &sp, eb * tok * (double)m.kv_heads *
                                                   (double)plan_model_head_dim(&m));
    assert_true(x > 0);
    assert_rel(e.time.cp_comm_s, 3.0 * 13.0 * 2.0 * x, 1e-12);
    /* a fully recomputed forward runs its all-to-alls again */
    l.recompute = PLAN_RECOMP_FULL;
    eval(&m, &c, &l, &e);
    assert_rel(e.time.cp_comm_s, 3.0 * 13.0 * 3.0 * x, 1e-12);
    /* the ring hides its exchange behind the attention: less exposed */
    l.recompute = PLAN_RECOMP_NONE;
    l.framework = mc;
    eval(&m, &c, &l, &e);
    assert_true(e.time.cp_comm_s < 3.0 * 13.0 * 2.0 * x);
    /* 12 heads do not split over 8 */
    l.framework = ds;
    l.cp = 8;
    l.dp = 1;
    l.global_batch = 3;
    eval(&m, &c, &l, &e);
    assert_int_equal(e.reject, PLAN_REJ_HEADS);
    assert_non_null(strstr(e.reason, "DeepSpeed-Ulysses 8"));
}

/* torchtitan's Llama layer is written in separate ATen ops, and so is the
 * Hugging Face Llama that PyTorch FSDP and DDP train: run eagerly, its two
 * RMSNorms, the rotary embedding and SwiGLU stream their tensors op by op,
 * more elementwise time than the fused kernels' counts, and autograd keeps
 * what each op's backward reads: per token, each norm's fp32 upcast and
 * normalised tensor (4h bytes beyond the fused kernel's input), the
 * attention output beside the projection's contiguous copy (2q) and SiLU's
 * output (2f). Under torch.compile each chain is one kernel, the fused
 * counts and the fused memory. A stack without the trait (Megatron-Core,
 * its kernels fused) costs the fused counts either way; a GPT layer
 * (LayerNorm and GELU are single kernels in eager PyTorch) is the same
 * either way. */
static void eager_pointwise(void **state)
{
    (void)state;
    plan_cluster c;
    int tt = -1, fs = -1;
    plan_model m = llama_node_13(&c, &tt);
    st_err err = {0};
    assert_int_equal(plan_framework_find("fsdp@2024", &fs, &err), ST_OK);
    assert_true(plan_framework_get(tt)->unfused_pointwise && plan_framework_get(tt)->compile);
    assert_true(plan_framework_get(fs)->unfused_pointwise && plan_framework_get(fs)->compile);
    int ddp = -1, mc = -1;
    assert_int_equal(plan_framework_find("pytorch@2019", &ddp, &err), ST_OK);
    assert_true(plan_framework_get(ddp)->unfused_pointwise);
    assert_false(plan_framework_get(ddp)->compile); /* torch.compile: PyTorch 2.0 on */
    assert_int_equal(plan_framework_find("megatron@2024", &mc, &err), ST_OK);
    assert_false(plan_framework_get(mc)->unfused_pointwise);
    plan_layout l = layout(1, 1, 8, 1, 4);
    l.flash_attention = 1;
    l.attention = PLAN_ATTN_FLASH2;
    l.sharding = PLAN_SHARD_PARAMS;
    plan_estimate eager, compiled, fsdp_eager, fsdp_compiled;
    l.framework = tt;
    eval(&m, &c, &l, &eager);
    l.compiled = 1;
    eval(&m, &c, &l, &compiled);
    l.framework = fs;
    eval(&m, &c, &l, &fsdp_compiled);
    l.compiled = 0;
    eval(&m, &c, &l, &fsdp_eager);
    double el_e = eager.time.compute_s - eager.compute.gemm_s - eager.compute.attn_s;
    double el_c = compiled.time.compute_s - compiled.compute.gemm_s - compiled.compute.attn_s;
    assert_true(el_e > 2.0 * el_c);
    assert_rel(compiled.compute.gemm_s, eager.compute.gemm_s, 1e-12);
    assert_rel(compiled.time.compute_s, fsdp_compiled.time.compute_s, 1e-12);
    assert_rel(eager.time.compute_s, fsdp_eager.time.compute_s, 1e-12);
    /* memory: the eager extras on every layer of the one stage (tp 1, no
     * recompute, one microbatch in flight) */
    double T = (double)l.micro_batch * (double)m.seq;
    double q = m.head_dim > 0 ? (double)m.heads * (double)m.head_dim : (double)m.hidden;
    double extra = T * (2.0 * 4.0 * (double)m.hidden + 2.0 * q + 2.0 * (double)m.ffn);
    assert_rel(eager.mem.activations_bytes - compiled.mem.activations_bytes,
               (double)m.layers * extra, 1e-9);
    /* SMP v2: the Hugging Face layer's ATen ops at tp 1, Transformer
     * Engine's fused layers under its tensor parallelism */
    int smp2 = -1;
    assert_int_equal(plan_framework_find("smp2", &smp2, &err), ST_OK);
    assert_true(plan_framework_get(smp2)->unfused_pointwise);
    assert_true(plan_framework_get(smp2)->fused_with_tp);
    plan_layout t = layout(2, 1, 4, 1, 4);
    t.flash_attention = 1;
    t.attention = PLAN_ATTN_FLASH2;
    t.sharding = PLAN_SHARD_PARAMS;
    plan_estimate s_tp, f_tp;
    t.framework = smp2;
    eval(&m, &c, &t, &s_tp);
    t.framework = fs;
    t.compiled = 1;
    eval(&m, &c, &t, &f_tp);
    assert_rel(s_tp.mem.activations_bytes, f_tp.mem.activations_bytes, 1e-12);
    l.framework = smp2;
    l.compiled = 0;
    eval(&m, &c, &l, &s_tp);
    assert_rel(s_tp.mem.activations_bytes, eager.mem.activations_bytes, 1e-12);
    /* GPT: unchanged by the trait */
    plan_model g = one_node_13(&c);
    l.framework = tt;
    eval(&g, &c, &l, &eager);
    l.compiled = 1;
    eval(&g, &c, &l, &compiled);
    assert_rel(compiled.time.compute_s, eager.time.compute_s, 1e-12);
    assert_rel(compiled.mem.activations_bytes, eager.mem.activations_bytes, 1e-12);
}

/* Transformer Engine's TP overlap needs sequence parallelism (Megatron-
 * Core asserts it): a megatron@2024 layout without SP has Megatron's
 * backward overlap alone, its forward all-reduces exposed, exactly as a
 * stack with that overlap only; with SP its userbuffers' terms. */
static void tp_overlap_needs_sp(void **state)
{
    (void)state;
    plan_cluster c;
    plan_model m = one_node_13(&c);
    int fw = -1;
    st_err err = {0};
    assert_int_equal(plan_framework_find("megatron@2024", &fw, &err), ST_OK);
    plan_layout l = layout(2, 1, 4, 1, 4);
    plan_framework_apply(plan_framework_get(fw), fw, &l);
    l.tp = 2, l.pp = 1, l.dp = 4, l.micro_batch = 1, l.microbatches = 4, l.global_batch = 16;
    l.recompute = PLAN_RECOMP_NONE;
    l.sharding = PLAN_SHARD_NONE;
    l.sequence_parallel = 0;
    assert_int_equal(l.tp_overlap, 2);
    plan_estimate te, bwd, sp;
    eval(&m, &c, &l, &te);
    assert_true(te.time.tp_comm_s > 0);
    l.tp_overlap = 1;
    eval(&m, &c, &l, &bwd);
    assert_rel(te.time.tp_comm_s, bwd.time.tp_comm_s, 0);
    assert_rel(te.time.compute_s, bwd.time.compute_s, 0);
    l.tp_overlap = 2;
    l.sequence_parallel = 1;
    eval(&m, &c, &l, &sp);
    assert_true(sp.time.tp_comm_s < te.time.tp_comm_s);
    assert_true(sp.compute.gemm_s > te.compute.gemm_s); /* the pieces and SMs it costs */
}

/* torchtitan's async TP (compiled, sequence parallel): each TP linear's
 * collective in tp pieces beside its partial products, on the copy engines:
 * less TP communication exposed than with none, the pieces' smaller
 * products cost some GEMM time, and nothing else changes. */
static void async_tp(void **state)
{
    (void)state;
    plan_cluster c;
    int tt = -1;
    plan_model m = llama_node_13(&c, &tt);
    const plan_framework *fw = plan_framework_get(tt);
    assert_true(fw->async_tp);
    assert_int_equal(plan_framework_tp_overlaps(fw), (1u << 0) | (1u << 2));
    plan_layout l = layout(4, 1, 2, 1, 4);
    plan_framework_apply(fw, tt, &l);
    l.tp = 4, l.pp = 1, l.dp = 2, l.micro_batch = 1, l.microbatches = 4, l.global_batch = 8;
    l.recompute = PLAN_RECOMP_NONE;
    l.sharding = PLAN_SHARD_PARAMS;
    l.sequence_parallel = 1;
    l.compiled = 1;
    l.flash_attention = 1;
    l.attention = PLAN_ATTN_FLASH2;
    assert_int_equal(l.tp_overlap, 0);
    char why[200];
    assert_int_equal(plan_framework_check(fw, &l, why, sizeof why), 0);
    plan_estimate none, async;
    eval(&m, &c, &l, &none);
    l.tp_overlap = 2;
    assert_int_equal(plan_framework_check(fw, &l, why, sizeof why), 0);
    eval(&m, &c, &l, &async);
    assert_true(none.time.tp_comm_s > 0);
    assert_true(async.time.tp_comm_s < 0.5 * none.time.tp_comm_s);
    assert_true(async.compute.gemm_s > none.compute.gemm_s);
    assert_rel(async.compute.attn_s, none.compute.attn_s, 1e-12);
    assert_true(async.time.step_s < none.time.step_s);
    /* its requirements, as torchtitan states them */
    l.compiled = 0;
    assert_int_not_equal(plan_framework_check(fw, &l, why, sizeof why), 0);
    assert_non_null(strstr(why, "torch.compile"));
    l.compiled = 1;
    l.sequence_parallel = 0;
    assert_int_not_equal(plan_framework_check(fw, &l, why, sizeof why), 0);
    /* the backward-only overlap is Megatron's, not a torchtitan level */
    l.sequence_parallel = 1;
    l.tp_overlap = 1;
    assert_int_not_equal(plan_framework_check(fw, &l, why, sizeof why), 0);
    assert_non_null(strstr(why, "none or pipelined"));
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(async_tp),
        cmocka_unit_test(activations_tp_closed_form),
        cmocka_unit_test(activations_head_size),
        cmocka_unit_test(attention_window),
        cmocka_unit_test(attention_generations),
        cmocka_unit_test(network_share_per_gpu),
        cmocka_unit_test(zero_state_bytes),
        cmocka_unit_test(invariants),
        cmocka_unit_test(stage_terms),
        cmocka_unit_test(bubble_ratios),
        cmocka_unit_test(allreduce_closed_forms),
        cmocka_unit_test(gemm_alignment_tiers),
        cmocka_unit_test(host_time_per_kernel),
        cmocka_unit_test(placement_spans),
        cmocka_unit_test(rejections),
        cmocka_unit_test(search_ranks_and_fixes),
        cmocka_unit_test(collectives_take_sms),
        cmocka_unit_test(userbuffers_overlap),
        cmocka_unit_test(block_recompute_share),
        cmocka_unit_test(partial_remat),
        cmocka_unit_test(torchtitan_op_sac),
        cmocka_unit_test(eager_pointwise),
        cmocka_unit_test(ulysses_all_to_all),
        cmocka_unit_test(torchtitan_pp_sync_once),
        cmocka_unit_test(wgrad_accumulation_pass),
        cmocka_unit_test(tp_overlap_needs_sp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
