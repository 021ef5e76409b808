/*
 * test_sim_step.c: the simulated step against closed forms.
 *
 * Uniform stages and no communication: the bubble over the ideal time is
 * (p-1)/m for GPipe and 1F1B, (p-1)/(v m) with v virtual stages, about
 * (p-1)/(3m) for ZB-H1 with F = B = W (Narayanan et al. 2021; Qi et al.
 * 2023). A transfer on the critical path adds its latency + bytes/bandwidth.
 * The step is never below the compute or the communication bound; one seed
 * gives one trace; bad schedules are refused with a message.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "sim/sim.h"

#define F_S 1e-3

/* p uniform stages, F = 1 ms, B = 2 ms (W = 1 ms of it), free links. */
static plan_costs *uniform(int p, int m, int v, plan_schedule s, int cap)
{
    plan_costs *c = calloc(1, sizeof *c);
    c->pp = p;
    c->microbatches = m;
    c->virtual_stages = v;
    c->active_microbatches = cap;
    c->schedule = s;
    c->p2p_bytes = 0;
    c->p2p_intra_bps = c->p2p_net_bps = 1e12;
    for (int i = 0; i < p; i++) {
        c->stage[i].fwd_s = F_S / v;
        c->stage[i].bwd_s = 2 * F_S / v;
        c->stage[i].bwd_weight_s = F_S / v;
        c->stage[i].act_bytes = 1e6;
        c->stage[i].node = 0;
    }
    return c;
}

static sim_result run(const plan_costs *c, const sim_config *cfg)
{
    sim_result r;
    st_err err = {0};
    int rc = sim_step_run(c, cfg, &r, &err);
    if (rc != ST_OK)
        print_error("sim_step_run: %s\n", err.msg);
    assert_int_equal(rc, ST_OK);
    return r;
}

static void bubble_closed_forms(void **state)
{
    sim_config cfg;
    sim_config_default(&cfg);
    static const struct { int p, m; } cases[] = {{4, 8}, {6, 12}, {3, 7}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int p = cases[i].p, m = cases[i].m;
        plan_costs *c = uniform(p, m, 1, PLAN_SCHED_INTERLEAVED, p + 2);
        sim_result r = run(c, &cfg);
        assert_rel(r.bubble_fraction, (double)(p - 1) / m, 1e-6);
        assert_rel(r.step_s, (m + p - 1) * 3 * F_S, 1e-6);
        for (int s = 0; s < p; s++)
            assert_int_equal(r.stage[s].peak_inflight, p - s < m ? p - s : m);
        sim_result_fini(&r);
        c->schedule = PLAN_SCHED_SIMPLE;
        c->active_microbatches = m;
        r = run(c, &cfg);
        assert_rel(r.bubble_fraction, (double)(p - 1) / m, 1e-6);
        assert_int_equal(r.stage[0].peak_inflight, m);
        sim_result_fini(&r);
        free(c);
    }
    /* virtual stages: (p-1)/(v m) */
    static const struct { int p, m, v; } vcases[] = {{4, 8, 2}, {4, 12, 3}, {2, 6, 2}};
    for (size_t i = 0; i < sizeof vcases / sizeof vcases[0]; i++) {
        int p = vcases[i].p, m = vcases[i].m, v = vcases[i].v;
        plan_costs *c = uniform(p, m, v, PLAN_SCHED_VIRTUAL, m);
        sim_result r = run(c, &cfg);
        assert_rel(r.bubble_fraction, (double)(p - 1) / ((double)v * m), 1e-6);
        sim_result_fini(&r);
        free(c);
    }
    /* ZB-H1 with F = B = W: about a third of 1F1B's bubble */
    plan_costs *c = uniform(4, 12, 1, PLAN_SCHED_ZB_H1, 6);
    for (int i = 0; i < 4; i++) {
        c->stage[i].bwd_s = 2 * F_S;
        c->stage[i].bwd_weight_s = F_S;
    }
    sim_result r = run(c, &cfg);
    double want = 3.0 / (3.0 * 12);
    assert_true(r.bubble_fraction < 0.5 * 3.0 / 12); /* well below 1F1B's */
    assert_rel(r.bubble_fraction, want, 0.35);
    sim_result_fini(&r);
    free(c);
}

/* Two stages, one microbatch, a 100 MB message over 100 GB/s and 20 us: the
 * step is F0 + t + F1 + B1 + t + B0 with t = 20 us + 1 ms. */
static void transfer_on_critical_path(void **state)
{
    plan_costs *c = uniform(2, 1, 1, PLAN_SCHED_INTERLEAVED, 3);
    c->p2p_bytes = 100e6;
    c->p2p_net_bps = 100e9;
    c->net_latency_s = 20e-6;
    c->stage[1].node = 1;
    sim_config cfg;
    sim_config_default(&cfg);
    sim_result r = run(c, &cfg);
    double t = 20e-6 + 1e-3;
    assert_rel(r.step_s, 2 * 3 * F_S + 2 * t, 1e-6);
    assert_rel(r.critical_transfer_s, 2 * t, 1e-6);
    assert_rel(r.critical_compute_s, 2 * 3 * F_S, 1e-6);
    assert_int_equal(r.critical_stages, 2);
    assert_true(r.step_s >= r.compute_bound_s && r.step_s >= r.comm_bound_s);
    sim_result_fini(&r);
    free(c);
}

/* Gradient buckets after the last backward, without overlap, add their
 * all-reduce times; with overlap the part inside the last backward hides. */
static void dp_sync_and_optimizer(void **state)
{
    plan_costs *c = uniform(1, 4, 1, PLAN_SCHED_INTERLEAVED, 3);
    c->stage[0].dp_buckets = 3;
    c->stage[0].dp_bucket_s = 1e-3;
    c->stage[0].dp_last_bucket_s = 0.5e-3;
    c->optimizer_s = 0.25e-3;
    sim_config cfg;
    sim_config_default(&cfg);
    c->dp_overlap = 0;
    sim_result r = run(c, &cfg);
    assert_rel(r.step_s, 4 * 3 * F_S + 2.5e-3 + 0.25e-3, 1e-6);
    assert_rel(r.stage[0].dp_exposed_s, 2.5e-3, 1e-6);
    sim_result_fini(&r);
    c->dp_overlap = 1;
    r = run(c, &cfg);
    /* buckets ready at 2/3, 4/3 and 2 ms into the last 2 ms backward; one
     * stream: 0.67-1.67, 1.67-2.67, 2.67-3.17 ms, so 1.17 ms past its end */
    assert_rel(r.stage[0].dp_exposed_s, (2.0 / 3 + 1.0 + 1.0 + 0.5 - 2.0) * 1e-3, 1e-3);
    sim_result_fini(&r);
    free(c);
}

/* FNV-1a over every field of every record (not the raw bytes: padding). */
static unsigned long hash_trace(const sim_result *r)
{
    unsigned long h = 1469598103934665603UL;
    for (int i = 0; i < r->ntrace; i++) {
        const sim_trace_rec *t = &r->trace[i];
        long long v[] = {t->stage, t->stream, t->kind, t->chunk, t->microbatch, t->start_ns,
                         t->end_ns};
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++)
            h = (h ^ (unsigned long)v[j]) * 1099511628211UL;
    }
    return h;
}

static void seeded_jitter_is_reproducible(void **state)
{
    plan_costs *c = uniform(4, 8, 1, PLAN_SCHED_INTERLEAVED, 6);
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.jitter_sigma = 0.1;
    cfg.keep_trace = 1;
    cfg.seed = 42;
    sim_result a = run(c, &cfg), b = run(c, &cfg);
    assert_int_equal(a.ntrace, b.ntrace);
    assert_true(a.ntrace > 0);
    assert_int_equal(hash_trace(&a), hash_trace(&b));
    cfg.seed = 43;
    sim_result d = run(c, &cfg);
    assert_true(hash_trace(&a) != hash_trace(&d));
    /* events never go back in time within a stream */
    for (int i = 0; i < a.ntrace; i++)
        assert_true(a.trace[i].end_ns >= a.trace[i].start_ns);
    sim_result_fini(&a);
    sim_result_fini(&b);
    sim_result_fini(&d);

    /* Monte Carlo quantiles are ordered; a straggler slows the step */
    cfg.keep_trace = 0;
    cfg.monte_carlo = 20;
    sim_result mc = run(c, &cfg);
    assert_int_equal(mc.steps, 20);
    assert_true(mc.p50_s <= mc.p95_s && mc.p95_s <= mc.p99_s);
    cfg.monte_carlo = 1;
    cfg.jitter_sigma = 0;
    sim_result base = run(c, &cfg);
    cfg.straggler_stage = 2;
    cfg.straggler_factor = 1.5;
    sim_result slow = run(c, &cfg);
    assert_true(slow.step_s > base.step_s * 1.2);
    free(c);
}

static void refuses_bad_schedules(void **state)
{
    sim_config cfg;
    sim_config_default(&cfg);
    sim_result r;
    st_err err = {0};
    plan_costs *c = uniform(4, 6, 2, PLAN_SCHED_VIRTUAL, 6); /* 6 not a multiple of 4 */
    assert_int_equal(sim_step_run(c, &cfg, &r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "6"));
    free(c);
    st_err_clear(&err);
    c = uniform(4, 8, 1, PLAN_SCHED_INTERLEAVED, 0); /* cap < 1 */
    assert_int_equal(sim_step_run(c, &cfg, &r, &err), ST_EINVAL);
    free(c);
    st_err_clear(&err);
    c = uniform(4, 8, 1, PLAN_SCHED_INTERLEAVED, 6);
    cfg.straggler_stage = 9;
    cfg.straggler_factor = 2;
    assert_int_equal(sim_step_run(c, &cfg, &r, &err), ST_EINVAL);
    free(c);
}

/* A 13B GPT model (models.json) on 4 x p4de (catalog.json): 32 GPUs; room
 * for a layout's costs. */
typedef struct p4de_13b {
    plan_catalog cat;
    plan_presets presets;
    plan_model m;
    plan_cluster c;
    plan_costs *costs;
} p4de_13b;

/* Setup and teardown of the tests that run on it (P4DE_13B_TEST). */
static int p4de_13b_load(void **state)
{
    p4de_13b *x = calloc(1, sizeof *x);
    assert_non_null(x);
    *state = x;
    st_err err = {0};
    assert_int_equal(data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &x->cat, &err), ST_OK);
    assert_int_equal(data_presets_load(SMD_TEST_DATA_DIR "/models.json", &x->presets, &err),
                     ST_OK);
    assert_int_equal(plan_model_resolve(&x->presets, 13e9, PLAN_ARCH_GPT, "gpt3", &x->m, &err),
                     ST_OK);
    assert_int_equal(plan_cluster_parse(&x->cat, "4xp4de", &x->c, &err), ST_OK);
    x->costs = malloc(sizeof *x->costs);
    assert_non_null(x->costs);
    return 0;
}

static int p4de_13b_free(void **state)
{
    p4de_13b *x = *state;
    free(x->costs);
    plan_catalog_free(&x->cat);
    plan_presets_free(&x->presets);
    free(x);
    return 0;
}

#define P4DE_13B_TEST(test) cmocka_unit_test_setup_teardown(test, p4de_13b_load, p4de_13b_free)

/* The costs (into x->costs) of a layout of x's 32 GPUs: tp x pp x
 * (32 / tp pp), micro-batches of mbs, m of them with cap in flight, schedule
 * s of v virtual stages, full recompute, ZeRO-1, sequence parallel with TP. */
static plan_costs *costs_32(p4de_13b *x, int tp, int pp, int mbs, int m, int cap,
                            plan_schedule s, int v)
{
    plan_layout l;
    plan_layout_default(&l);
    l.tp = tp;
    l.pp = pp;
    l.dp = 32 / (tp * pp);
    l.micro_batch = mbs;
    l.microbatches = m;
    l.global_batch = (int64_t)l.dp * mbs * m;
    l.schedule = s;
    l.virtual_stages = v;
    l.active_microbatches = cap;
    l.recompute = PLAN_RECOMP_FULL;
    l.sharding = PLAN_SHARD_OPTIMIZER;
    l.sequence_parallel = tp > 1;
    st_err err = {0};
    assert_int_equal(plan_costs_compute(&x->m, &x->c, &l, x->costs, &err), ST_OK);
    return x->costs;
}

/* Differential: real layouts of a 13B model on 4 x p4de, every schedule.
 * The simulated step is never below its compute or link bound, and stays
 * within 20% of the planner's closed form (they price the same ops; they
 * differ in how sends overlap and how stages wait). */
static void agrees_with_planner(void **state)
{
    p4de_13b *x = *state;
    static const struct { int tp, pp, mbs, m, v; plan_schedule s; } cases[] = {
        {8, 4, 1, 16, 1, PLAN_SCHED_INTERLEAVED}, {4, 4, 2, 8, 1, PLAN_SCHED_SIMPLE},
        {4, 8, 1, 16, 2, PLAN_SCHED_VIRTUAL},     {2, 8, 1, 32, 1, PLAN_SCHED_ZB_H1},
        {8, 2, 4, 8, 1, PLAN_SCHED_INTERLEAVED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sim_config cfg;
        sim_config_default(&cfg);
        sim_result r = run(costs_32(x, cases[i].tp, cases[i].pp, cases[i].mbs, cases[i].m,
                                    cases[i].m, cases[i].s, cases[i].v),
                           &cfg);
        assert_true(r.step_s >= r.compute_bound_s);
        assert_true(r.step_s >= r.comm_bound_s);
        assert_rel(r.step_s, r.planner_step_s, 0.2);
        sim_result_fini(&r);
    }
}

/* A step of many microbatches is extrapolated from two windows of them:
 * the same step time, stage busy times, bubbles and peaks as playing every
 * microbatch out (the steady state is linear), and a step past the
 * schedule generator's limit still simulates, in bounded work. */
static void long_steps_extrapolated(void **state)
{
    p4de_13b *x = *state;
    static const struct { int tp, pp, m, v, cap; plan_schedule s; } cases[] = {
        {8, 4, 1500, 1, 6, PLAN_SCHED_INTERLEAVED}, {4, 4, 777, 1, 2, PLAN_SCHED_SIMPLE},
        {4, 8, 1040, 2, 1040, PLAN_SCHED_VIRTUAL},  {2, 8, 1999, 1, 1999, PLAN_SCHED_ZB_H1},
    };
    plan_costs *costs = x->costs;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_true(cases[i].tp > 1); /* sequence parallel in every case */
        costs_32(x, cases[i].tp, cases[i].pp, 1, cases[i].m, cases[i].cap, cases[i].s,
                 cases[i].v);
        sim_config cfg;
        sim_config_default(&cfg);
        cfg.straggler_stage = 1;
        cfg.straggler_factor = 1.3;
        sim_result w = run(costs, &cfg);
        cfg.whole_step = 1;
        sim_result all = run(costs, &cfg);
        assert_int_equal(all.window_microbatches[0], 0);
        assert_true(w.window_microbatches[0] > 0 && w.window_microbatches[1] < cases[i].m);
        assert_int_equal(w.microbatches, cases[i].m);
        assert_rel(w.step_s, all.step_s, 1e-6);
        assert_rel(w.pipeline_s, all.pipeline_s, 1e-6);
        assert_rel(w.bubble_fraction, all.bubble_fraction, 1e-4);
        assert_rel((double)w.events, (double)all.events, 1e-3);
        for (int s = 0; s < cases[i].pp; s++) {
            assert_rel(w.stage[s].busy_s, all.stage[s].busy_s, 1e-6);
            assert_rel(w.stage[s].send_busy_s, all.stage[s].send_busy_s, 1e-6);
            assert_int_equal(w.stage[s].peak_inflight, all.stage[s].peak_inflight);
            assert_rel(w.stage[s].dp_exposed_s, all.stage[s].dp_exposed_s, 1e-6);
        }
        assert_rel(w.critical_compute_s, all.critical_compute_s, 1e-3);
        sim_result_fini(&w);
        sim_result_fini(&all);
    }
    /* past the generator's 2^20 microbatches: windows only, a trace of the first */
    costs->microbatches = 4 << 20;
    costs->active_microbatches = costs->pp + 2;
    costs->schedule = PLAN_SCHED_INTERLEAVED;
    costs->virtual_stages = 1;
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.keep_trace = 1;
    sim_result big = run(costs, &cfg);
    assert_int_equal(big.microbatches, 4 << 20);
    assert_true(big.ntrace > 0 && big.ntrace < 100000);
    assert_true(big.step_s > (4 << 20) * costs->stage[0].fwd_s);
    sim_result_fini(&big);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bubble_closed_forms),
        cmocka_unit_test(transfer_on_critical_path),
        cmocka_unit_test(dp_sync_and_optimizer),
        cmocka_unit_test(seeded_jitter_is_reproducible),
        cmocka_unit_test(refuses_bad_schedules),
        P4DE_13B_TEST(agrees_with_planner),
        P4DE_13B_TEST(long_steps_extrapolated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
