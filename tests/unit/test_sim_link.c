/*
 * test_sim_link.c: processor-sharing links. Closed forms on an NVLink-like
 * link of 150 GB/s and 2.5 us with activation-sized messages (a 3 x 1024 x
 * 1536 fp16 tensor is 9437184 bytes, 62914.56 ns at 150 bytes/ns): one
 * transfer, two at once (twice as long), staggered starts, five sizes at
 * once (the processor-sharing finish times), back-to-back chains; busy time
 * and bytes; errors; and a seeded random workload against its lower bounds,
 * the same twice.
 */
#include "test_util.h"

#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "sim/sim_link.h"
#include "test_sim_log.h"

#define BW 150e9         /* bytes/s */
#define LAT 2500         /* ns */
#define ACT 9437184.0    /* bytes: 3 * 1024 * 1536 * 2 */
#define ACT_NS 62914.56  /* ACT / BW in ns */


typedef struct rig {
    sim_engine *e;
    sim_link link;
    sim_link_xfer storage[16];
    event_log d;
} rig;

static rig *rig_new(int max_active)
{
    rig *r = calloc(1, sizeof *r);
    assert_non_null(r);
    st_err err = {0};
    assert_int_equal(sim_engine_new(256, &r->e, &err), ST_OK);
    assert_int_equal(sim_link_init(&r->link, r->e, BW, LAT, max_active, r->storage, &err), ST_OK);
    return r;
}

static void rig_free(rig *r)
{
    sim_link_fini(&r->link);
    sim_engine_free(r->e);
    free(r);
}

/* An event that starts a transfer of arg bytes on the rig's link; the done
 * callback gets the start time as its argument. */
static void start_act(sim_engine *e, void *ctx, uint64_t arg)
{
    rig *r = ctx;
    assert_int_equal(sim_link_start(&r->link, (double)arg, log_event, &r->d,
                                     (uint64_t)sim_engine_now(e)),
                     ST_OK);
}

/* One transfer of B bytes takes latency + B / bw, rounded up to whole ns. */
static void one_transfer(void **state)
{
    rig *r = rig_new(4);
    assert_int_equal(sim_engine_schedule(r->e, 1000, start_act, r, (uint64_t)ACT, NULL), ST_OK);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 1);
    assert_int_equal(r->d.arg[0], 1000);
    assert_int_equal(r->d.t[0], 1000 + LAT + (sim_time_ns)ceil(ACT_NS)); /* 66415 */
    assert_int_equal(r->d.t[0], 66415);
    assert_int_equal(sim_link_busy_ns(&r->link), 62915);
    assert_rel(sim_link_bytes(&r->link), ACT, 1e-15);
    assert_int_equal(sim_link_started(&r->link), 1);
    assert_int_equal(sim_link_finished(&r->link), 1);
    assert_int_equal(sim_link_active(&r->link), 0);
    rig_free(r);
}

/* Two transfers sharing the link take twice as long as one. */
static void two_transfers_twice_as_long(void **state)
{
    rig *r = rig_new(4);
    assert_int_equal(sim_engine_schedule(r->e, 0, start_act, r, (uint64_t)ACT, NULL), ST_OK);
    assert_int_equal(sim_engine_schedule(r->e, 0, start_act, r, (uint64_t)ACT, NULL), ST_OK);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 2);
    sim_time_ns want = LAT + (sim_time_ns)ceil(2 * ACT_NS); /* 2500 + 125830 */
    assert_int_equal(r->d.t[0], want);
    assert_int_equal(r->d.t[1], want);
    assert_int_equal(sim_link_busy_ns(&r->link), 125830);
    assert_rel(sim_link_bytes(&r->link), 2 * ACT, 1e-15);
    rig_free(r);
}

/* a starts at 0, b at t1 (both B bytes). a alone serves bw t1 bytes, then
 * both run at bw/2: a's last byte at t1 + 2(B - bw t1)/bw = 2B/bw - t1; b
 * has then B - bw t1 behind it and bw t1 to go alone: it ends at 2B/bw. */
static void staggered_starts(void **state)
{
    rig *r = rig_new(4);
    const sim_time_ns t1 = 20000;
    assert_int_equal(sim_engine_schedule(r->e, 0, start_act, r, (uint64_t)ACT, NULL), ST_OK);
    assert_int_equal(sim_engine_schedule(r->e, t1, start_act, r, (uint64_t)ACT, NULL), ST_OK);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 2);
    assert_int_equal(r->d.arg[0], 0);
    assert_int_equal(r->d.t[0], LAT + (sim_time_ns)ceil(2 * ACT_NS - t1)); /* 2500 + 105830 */
    assert_int_equal(r->d.arg[1], t1);
    /* a holds its share 0.44 ns past its exact end (rounding up), which
     * delays b by at most that: still 125830 after rounding. */
    assert_int_equal(r->d.t[1], LAT + (sim_time_ns)ceil(2 * ACT_NS)); /* 2500 + 125830 */
    assert_int_equal(sim_link_busy_ns(&r->link), 125830);
    rig_free(r);
}

/* k transfers started together, sizes b_1 <= ... <= b_k: the i-th (1-based)
 * finishes when every transfer has received b_i, having shared with the
 * k - i + 1 not yet done: f_i = (sum_{j<i} b_j + (k - i + 1) b_i) / bw. */
static void processor_sharing_closed_form(void **state)
{
    rig *r = rig_new(8);
    /* Started out of size order: fp16 grads of a 1536-wide layer row block,
     * an activation, a 12 MiB bucket, the 51200 x 1536 fp16 embedding, a
     * 7 MiB bucket. */
    const double size[5] = {3145728, ACT, 12582912, 157286400, 7340032};
    const double sorted[5] = {3145728, 7340032, ACT, 12582912, 157286400};
    for (int i = 0; i < 5; i++)
        assert_int_equal(sim_link_start(&r->link, size[i], log_event, &r->d, (uint64_t)size[i]),
                         ST_OK);
    assert_int_equal(sim_link_active(&r->link), 5);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 5);
    double before = 0;
    for (int i = 0; i < 5; i++) {
        double f_ns = (before + (5 - i) * sorted[i]) / BW * 1e9;
        before += sorted[i];
        assert_int_equal(r->d.arg[i], (uint64_t)sorted[i]);
        /* Never early; late by at most one rounding per earlier finish. */
        sim_time_ns exact = LAT + (sim_time_ns)ceil(f_ns - 1e-6);
        assert_true(r->d.t[i] >= exact);
        assert_true(r->d.t[i] <= exact + i);
    }
    /* Work-conserving: busy for the whole makespan, every byte carried. */
    assert_int_equal(sim_link_busy_ns(&r->link), r->d.t[4] - LAT);
    assert_rel(sim_link_bytes(&r->link), before, 1e-15);
    assert_true(sim_link_bytes(&r->link) <= BW * 1e-9 * (double)sim_link_busy_ns(&r->link));
    rig_free(r);
}

/* Three equal transfers started together finish together, callbacks in start order. */
static void equal_finish_in_start_order(void **state)
{
    rig *r = rig_new(4);
    for (uint64_t i = 0; i < 3; i++)
        assert_int_equal(sim_link_start(&r->link, 1536.0 * 1536 * 2, log_event, &r->d, 10 + i),
                         ST_OK);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r->d.arg[i], 10 + i);
        /* 3 * 4718592 bytes at 150 bytes/ns = 94371.84 ns. */
        assert_int_equal(r->d.t[i], LAT + 94372);
    }
    rig_free(r);
}

/* Each completion starts the next transfer: 13 back to back. */
static void chain_next(sim_engine *e, void *ctx, uint64_t arg)
{
    rig *r = ctx;
    log_event(e, &r->d, arg);
    if (arg < 12)
        assert_int_equal(sim_link_start(&r->link, ACT, chain_next, r, arg + 1), ST_OK);
}

static void chained_transfers(void **state)
{
    rig *r = rig_new(1);
    assert_int_equal(sim_link_start(&r->link, ACT, chain_next, r, 0), ST_OK);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 13);
    for (int i = 0; i < 13; i++)
        assert_int_equal(r->d.t[i], (i + 1) * (LAT + 62915));
    /* Busy only in the bandwidth phases, not the latencies between them. */
    assert_int_equal(sim_link_busy_ns(&r->link), 13 * 62915);
    assert_rel(sim_link_bytes(&r->link), 13 * ACT, 1e-15);
    rig_free(r);
}

/* Probe the accounting part-way through. */
static void probe(sim_engine *e, void *ctx, uint64_t arg)
{
    rig *r = ctx;
    log_event(e, &r->d, (uint64_t)sim_link_busy_ns(&r->link));
    r->d.t[r->d.n - 1] = (sim_time_ns)sim_link_bytes(&r->link);
}

/* Busy time counts only time with a transfer in flight; bytes include the
 * part of a transfer served so far. */
static void busy_and_bytes(void **state)
{
    rig *r = rig_new(4);
    assert_int_equal(sim_engine_schedule(r->e, 0, start_act, r, (uint64_t)ACT, NULL), ST_OK);
    assert_int_equal(sim_engine_schedule(r->e, 30000, probe, r, 0, NULL), ST_OK);
    assert_int_equal(sim_engine_schedule(r->e, 300000, start_act, r, (uint64_t)(ACT / 2), NULL),
                     ST_OK);
    assert_int_equal(sim_engine_schedule(r->e, 310000, probe, r, 0, NULL), ST_OK);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 4);
    /* probe at 30000: busy 30000, 150 * 30000 bytes served. */
    assert_int_equal(r->d.arg[0], 30000);
    assert_int_equal(r->d.t[0], 4500000);
    /* a done at 62915 + LAT */
    assert_int_equal(r->d.t[1], 65415);
    /* probe at 310000: busy 62915 + 10000; ACT + 1.5e6 bytes. */
    assert_int_equal(r->d.arg[2], 72915);
    assert_int_equal(r->d.t[2], (sim_time_ns)(ACT + 1500000));
    /* b: 31457.28 ns -> 31458 */
    assert_int_equal(r->d.t[3], 300000 + 31458 + LAT);
    assert_int_equal(sim_link_busy_ns(&r->link), 62915 + 31458);
    assert_rel(sim_link_bytes(&r->link), 1.5 * ACT, 1e-15);
    rig_free(r);
}

/* Zero bytes take the latency alone; zero latency is allowed. */
static void zero_bytes_and_latency(void **state)
{
    rig *r = rig_new(4);
    assert_int_equal(sim_engine_schedule(r->e, 777, start_act, r, 0, NULL), ST_OK);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 1);
    assert_int_equal(r->d.t[0], 777 + LAT);
    assert_int_equal(sim_link_busy_ns(&r->link), 0);

    sim_link fast;
    sim_link_xfer st[2];
    st_err err = {0};
    assert_int_equal(sim_link_init(&fast, r->e, 1e9, 0, 2, st, &err), ST_OK);
    assert_int_equal(sim_link_start(&fast, 1000, log_event, &r->d, 5), ST_OK);
    assert_int_equal(sim_link_start(&fast, 0, NULL, NULL, 0), ST_OK); /* no callback */
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 2);
    /* 1000 bytes at 1 byte/ns, sharing for the 0 ns the empty transfer lasted. */
    assert_int_equal(r->d.t[1], sim_engine_now(r->e));
    assert_int_equal(r->d.t[1], 777 + LAT + 1000);
    assert_int_equal(sim_link_finished(&fast), 2);
    sim_link_fini(&fast);
    rig_free(r);
}

static void start_three(sim_engine *e, void *ctx, uint64_t arg)
{
    rig *r = ctx;
    for (int i = 0; i < 3; i++)
        if (sim_link_start(&r->link, ACT, log_event, &r->d, (uint64_t)i))
            return;
}

static void errors(void **state)
{
    sim_engine *e;
    sim_link l;
    sim_link_xfer st[2];
    st_err err = {0};
    assert_int_equal(sim_engine_new(16, &e, &err), ST_OK);
    assert_int_equal(sim_link_init(&l, e, 0, LAT, 2, st, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "bandwidth 0"));
    st_err_clear(&err);
    assert_int_equal(sim_link_init(&l, e, NAN, LAT, 2, st, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(sim_link_init(&l, e, INFINITY, LAT, 2, st, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(sim_link_init(&l, e, BW, -1, 2, st, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "latency -1"));
    st_err_clear(&err);
    assert_int_equal(sim_link_init(&l, e, BW, LAT, 0, st, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(sim_link_init(&l, e, BW, LAT, 2, NULL, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(sim_link_init(&l, e, BW, LAT, 2, st, &err), ST_OK);

    /* Bad sizes leave the link as it was; the engine keeps the first error. */
    assert_int_equal(sim_link_start(&l, -1, NULL, NULL, 0), ST_EINVAL);
    assert_non_null(strstr(sim_engine_err(e)->msg, "-1 bytes"));
    assert_int_equal(sim_link_start(&l, NAN, NULL, NULL, 0), ST_EINVAL);
    assert_int_equal(sim_link_active(&l), 0);
    assert_int_equal(sim_engine_pending(e), 0);
    st_err_clear(sim_engine_err(e));
    sim_engine_free(e);

    /* A full link inside an event ends the run with ST_ERANGE. */
    rig *r = rig_new(2);
    assert_int_equal(sim_engine_schedule(r->e, 5, start_three, r, 0, NULL), ST_OK);
    uint64_t ran = 0;
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, &ran), ST_ERANGE);
    assert_int_equal(ran, 1);
    assert_non_null(strstr(sim_engine_err(r->e)->msg, "link full: 2 transfers in flight at 5 ns"));
    assert_int_equal(sim_link_active(&r->link), 2);
    rig_free(r);
}

/* fini drops transfers in flight and the pending completion. */
static void fini_cancels(void **state)
{
    rig *r = rig_new(4);
    assert_int_equal(sim_link_start(&r->link, ACT, log_event, &r->d, 0), ST_OK);
    assert_int_equal(sim_engine_pending(r->e), 1);
    sim_link_fini(&r->link);
    assert_int_equal(sim_engine_pending(r->e), 0);
    assert_int_equal(sim_engine_run(r->e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(r->d.n, 0);
    rig_free(r);
}

/* A seeded random workload on two links (an NVLink and a slower, shared
 * network link): every transfer finishes no earlier than its lower bound
 * start + latency + bytes / bw, every byte is carried, bytes <= bw * busy,
 * and the same seed gives the same completion times. */
#define RW_N 3000

typedef struct rand_wl {
    gsl_rng *rng;
    sim_link link[2];
    sim_link_xfer st[2][RW_N];
    double bytes[RW_N];
    sim_time_ns start[RW_N], end[RW_N];
    int which[RW_N];
    int n;
    uint64_t hash;
} rand_wl;

static void rw_done(sim_engine *e, void *ctx, uint64_t arg)
{
    rand_wl *w = ctx;
    assert_int_equal(w->end[arg], -1);
    w->end[arg] = sim_engine_now(e);
    w->hash = (w->hash ^ (uint64_t)w->end[arg]) * 1099511628211ull;
    w->hash = (w->hash ^ arg) * 1099511628211ull;
}

static void rw_start(sim_engine *e, void *ctx, uint64_t arg)
{
    rand_wl *w = ctx;
    int i = w->n++;
    w->which[i] = (int)gsl_rng_uniform_int(w->rng, 2);
    w->bytes[i] = floor(1 + gsl_rng_uniform(w->rng) * 3e6);
    w->start[i] = sim_engine_now(e);
    w->end[i] = -1;
    assert_int_equal(sim_link_start(&w->link[w->which[i]], w->bytes[i], rw_done, w, (uint64_t)i),
                     ST_OK);
    if (w->n < RW_N)
        assert_int_equal(sim_engine_schedule(e, sim_engine_now(e) +
                                                    (sim_time_ns)gsl_rng_uniform_int(w->rng, 40000),
                                             rw_start, w, 0, NULL),
                         ST_OK);
}

static uint64_t run_random(uint64_t seed)
{
    rand_wl *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->hash = 14695981039346656037ull;
    st_err err = {0};
    sim_engine *e;
    assert_int_equal(sim_engine_new(2 * RW_N + 8, &e, &err), ST_OK);
    assert_int_equal(sim_rng_new(seed, &w->rng, &err), ST_OK);
    const double bw[2] = {BW, 50e9};
    const sim_time_ns lat[2] = {LAT, 15000};
    for (int k = 0; k < 2; k++)
        assert_int_equal(sim_link_init(&w->link[k], e, bw[k], lat[k], RW_N, w->st[k], &err),
                         ST_OK);
    assert_int_equal(sim_engine_schedule(e, 0, rw_start, w, 0, NULL), ST_OK);
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(w->n, RW_N);
    double total[2] = {0, 0};
    int peak_shared = 0;
    for (int i = 0; i < RW_N; i++) {
        int k = w->which[i];
        total[k] += w->bytes[i];
        assert_true(w->end[i] >= 0);
        double lower = (double)w->start[i] + (double)lat[k] + w->bytes[i] / bw[k] * 1e9;
        assert_true((double)w->end[i] >= lower - 1e-6);
        if ((double)w->end[i] > lower + 1.5)
            peak_shared++;
    }
    assert_true(peak_shared > RW_N / 4); /* the links were shared often */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sim_link_started(&w->link[k]), sim_link_finished(&w->link[k]));
        assert_rel(sim_link_bytes(&w->link[k]), total[k], 1e-12);
        double cap = bw[k] * 1e-9 * (double)sim_link_busy_ns(&w->link[k]);
        assert_true(sim_link_bytes(&w->link[k]) <= cap);
        /* Rounding costs at most one ns of bandwidth per finish. */
        assert_true(cap - sim_link_bytes(&w->link[k]) <=
                    bw[k] * 1e-9 * (double)sim_link_finished(&w->link[k]));
        sim_link_fini(&w->link[k]);
    }
    uint64_t h = w->hash;
    gsl_rng_free(w->rng);
    sim_engine_free(e);
    free(w);
    return h;
}

static void random_workload(void **state)
{
    uint64_t a = run_random(1536), b = run_random(1536), c = run_random(1537);
    assert_int_equal(a, b);
    assert_true(a != c);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_transfer),
        cmocka_unit_test(two_transfers_twice_as_long),
        cmocka_unit_test(staggered_starts),
        cmocka_unit_test(processor_sharing_closed_form),
        cmocka_unit_test(equal_finish_in_start_order),
        cmocka_unit_test(chained_transfers),
        cmocka_unit_test(busy_and_bytes),
        cmocka_unit_test(zero_bytes_and_latency),
        cmocka_unit_test(errors),
        cmocka_unit_test(fini_cancels),
        cmocka_unit_test(random_workload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
