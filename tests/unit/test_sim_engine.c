/*
 * test_sim_engine.c: the discrete-event core. Order by time, first-in
 * first-out at equal times, cancel, never back in time, pool exhaustion,
 * sticky errors ending a run, run(until) and stop; a seeded random workload
 * whose every event runs exactly once, at the time it was scheduled for, in
 * strictly increasing (time, sequence) order, with the same trace for the
 * same seed; the mean-1 lognormal jitter.
 */
#include "test_util.h"

#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "sim/sim_engine.h"
#include "test_sim_log.h"

static sim_engine *engine(size_t cap)
{
    sim_engine *e = NULL;
    st_err err = {0};
    assert_int_equal(sim_engine_new(cap, &e, &err), ST_OK);
    assert_non_null(e);
    return e;
}

/* Events given out of order run sorted by time; the clock reads each one's time. */
static void order_by_time(void **state)
{
    sim_engine *e = engine(32);
    event_log lg = {0};
    /* 13 distinct times, a permutation of 1536 * k + 7 for k = 0..12. */
    const int perm[13] = {7, 2, 11, 0, 12, 5, 9, 1, 4, 10, 3, 8, 6};
    for (int i = 0; i < 13; i++)
        assert_int_equal(
            sim_engine_schedule(e, 1536 * perm[i] + 7, log_event, &lg, (uint64_t)perm[i], NULL),
            ST_OK);
    assert_int_equal(sim_engine_pending(e), 13);
    assert_int_equal(sim_engine_next_time(e), 7);
    uint64_t ran = 0;
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, &ran), ST_OK);
    assert_int_equal(ran, 13);
    assert_int_equal(lg.n, 13);
    for (int k = 0; k < 13; k++) {
        assert_int_equal(lg.arg[k], k);
        assert_int_equal(lg.t[k], 1536 * k + 7);
    }
    assert_int_equal(sim_engine_now(e), 1536 * 12 + 7);
    assert_int_equal(sim_engine_events(e), 13);
    assert_int_equal(sim_engine_pending(e), 0);
    assert_int_equal(sim_engine_next_time(e), SIM_TIME_MAX);
    sim_engine_free(e);
}

/* Equal times run in the order they were scheduled, interleaved with other
 * times, and an event scheduled at the current time runs after those already
 * queued for it. */
static void fifo_at_equal_times(void **state)
{
    sim_engine *e = engine(32);
    event_log lg = {0};
    for (uint64_t i = 0; i < 7; i++) {
        assert_int_equal(sim_engine_schedule(e, 1000, log_event, &lg, 100 + i, NULL), ST_OK);
        assert_int_equal(sim_engine_schedule(e, 1000 - 13 * (sim_time_ns)i, log_event, &lg, i,
                                             NULL),
                         ST_OK); /* i = 0 also lands at 1000, after 100 */
        assert_int_equal(sim_engine_schedule(e, 2000, log_event, &lg, 200 + i, NULL), ST_OK);
    }
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(lg.n, 21);
    /* 1000 - 13*6 .. 1000 - 13: args 6..1, then at 1000: 100, 0, 101, ..., 106. */
    for (int k = 0; k < 6; k++)
        assert_int_equal(lg.arg[k], 6 - k);
    assert_int_equal(lg.arg[6], 100);
    assert_int_equal(lg.arg[7], 0);
    for (int k = 8; k < 14; k++)
        assert_int_equal(lg.arg[k], 101 + (k - 8));
    for (int k = 14; k < 21; k++) {
        assert_int_equal(lg.arg[k], 200 + (k - 14));
        assert_int_equal(lg.t[k], 2000);
    }
    sim_engine_free(e);
}

/* An event that schedules another at the current time: it runs after every
 * event already queued for that time. */
static void chain_now(sim_engine *e, void *ctx, uint64_t arg)
{
    log_event(e, ctx, arg);
    if (arg == 1)
        assert_int_equal(sim_engine_schedule(e, sim_engine_now(e), log_event, ctx, 9, NULL), ST_OK);
}

static void schedule_at_now_runs_last(void **state)
{
    sim_engine *e = engine(8);
    event_log lg = {0};
    for (uint64_t i = 1; i <= 3; i++)
        assert_int_equal(sim_engine_schedule(e, 4096, chain_now, &lg, i, NULL), ST_OK);
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(lg.n, 4);
    const uint64_t want[4] = {1, 2, 3, 9};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(lg.arg[k], want[k]);
        assert_int_equal(lg.t[k], 4096);
    }
    sim_engine_free(e);
}

/* Cancel removes from the middle of the heap; stale ids do nothing; the
 * freed slot can be scheduled again at once. */
static void cancel(void **state)
{
    sim_engine *e = engine(11);
    event_log lg = {0};
    sim_event_id id[11];
    for (int i = 0; i < 11; i++)
        assert_int_equal(sim_engine_schedule(e, 300 + 17 * ((i * 7) % 11), log_event, &lg,
                                             (uint64_t)i, &id[i]),
                         ST_OK);
    /* Full: one more fails until a cancel frees a slot. */
    assert_int_equal(sim_engine_schedule(e, 5, log_event, &lg, 99, NULL), ST_ERANGE);
    st_err_clear(sim_engine_err(e));
    assert_true(sim_engine_cancel(e, id[3]));
    assert_true(sim_engine_cancel(e, id[8]));
    assert_true(sim_engine_cancel(e, id[0])); /* the earliest: the heap's root */
    assert_false(sim_engine_cancel(e, id[3])); /* twice */
    assert_false(sim_engine_cancel(e, (sim_event_id){0, 0})); /* none */
    assert_false(sim_engine_cancel(e, (sim_event_id){1000, 1})); /* out of range */
    assert_int_equal(sim_engine_pending(e), 8);
    sim_event_id again;
    assert_int_equal(sim_engine_schedule(e, 301, log_event, &lg, 42, &again), ST_OK);
    /* The old id of the reused slot stays stale. */
    assert_true(again.slot == id[0].slot || again.slot == id[3].slot || again.slot == id[8].slot);
    for (int i = 0; i < 11; i++)
        if (id[i].slot == again.slot)
            assert_false(sim_engine_cancel(e, id[i]));
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(lg.n, 9);
    sim_time_ns prev = 0;
    for (int k = 0; k < lg.n; k++) {
        assert_true(lg.arg[k] != 3 && lg.arg[k] != 8 && lg.arg[k] != 0);
        assert_true(lg.t[k] >= prev);
        prev = lg.t[k];
    }
    assert_int_equal(lg.arg[0], 42);
    /* After the run every id is stale. */
    for (int i = 0; i < 11; i++)
        assert_false(sim_engine_cancel(e, id[i]));
    assert_false(sim_engine_cancel(e, again));
    sim_engine_free(e);
}

/* Scheduling before now is refused with a message; the error is sticky and
 * stops the next run until cleared. */
static void never_back_in_time(void **state)
{
    sim_engine *e = engine(8);
    event_log lg = {0};
    assert_int_equal(sim_engine_schedule(e, 2500, log_event, &lg, 1, NULL), ST_OK);
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, NULL), ST_OK);
    assert_int_equal(sim_engine_now(e), 2500);
    sim_event_id id = {7, 7};
    assert_int_equal(sim_engine_schedule(e, 2499, log_event, &lg, 2, &id), ST_EINVAL);
    assert_int_equal(id.gen, 0); /* the none id */
    assert_int_equal(sim_engine_err(e)->code, ST_EINVAL);
    assert_non_null(strstr(sim_engine_err(e)->msg, "2499"));
    assert_non_null(strstr(sim_engine_err(e)->msg, "before the current time 2500"));
    assert_int_equal(sim_engine_schedule(e, 2500, NULL, &lg, 2, NULL), ST_EINVAL);
    /* Sticky: the first message stays; run refuses. */
    assert_non_null(strstr(sim_engine_err(e)->msg, "2499"));
    assert_int_equal(sim_engine_schedule(e, 2500, log_event, &lg, 3, NULL), ST_OK);
    uint64_t ran = 99;
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, &ran), ST_EINVAL);
    assert_int_equal(ran, 0);
    st_err_clear(sim_engine_err(e));
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, &ran), ST_OK);
    assert_int_equal(ran, 1);
    assert_int_equal(lg.n, 2);
    assert_int_equal(lg.arg[1], 3);
    sim_engine_free(e);
}

/* An event that schedules two children 10 ns later: the population doubles
 * until the pool is full, which ends the run with ST_ERANGE. */
static void fork2(sim_engine *e, void *ctx, uint64_t arg)
{
    (*(int *)ctx)++;
    for (int i = 0; i < 2; i++)
        if (sim_engine_schedule(e, sim_engine_now(e) + 10, fork2, ctx, arg + 1, NULL))
            return;
}

static void pool_exhaustion(void **state)
{
    sim_engine *e = engine(13);
    int ran_fns = 0;
    assert_int_equal(sim_engine_schedule(e, 0, fork2, &ran_fns, 0, NULL), ST_OK);
    uint64_t ran = 0;
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, &ran), ST_ERANGE);
    assert_non_null(strstr(sim_engine_err(e)->msg, "event pool full: 13"));
    /* Generations of 1, 2, 4 and 8 events at t = 0, 10, 20, 30. Each event
     * of generation 3 frees its own slot and takes two, so with 8 + j - 1
     * pending before its j-th event, the 6th finds no slot for its second
     * child: 1 + 2 + 4 + 6 = 13 events run. */
    assert_int_equal(ran, 13);
    assert_int_equal(ran_fns, 13);
    assert_int_equal(sim_engine_pending(e), 13);
    assert_int_equal(sim_engine_now(e), 30);
    sim_engine_free(e);

    /* Out-of-range capacities. */
    st_err err = {0};
    sim_engine *bad = (sim_engine *)&err;
    assert_int_equal(sim_engine_new(0, &bad, &err), ST_EINVAL);
    assert_null(bad);
    assert_non_null(strstr(err.msg, "event capacity 0"));
    sim_engine_free(NULL);
}

static void stop_at_arg(sim_engine *e, void *ctx, uint64_t arg)
{
    log_event(e, ctx, arg);
    if (arg == 5)
        sim_engine_stop(e);
}

/* run(until) includes events at until, leaves later ones queued and keeps
 * the clock at the last event run; stop ends a run after the current event. */
static void run_until_and_stop(void **state)
{
    sim_engine *e = engine(16);
    event_log lg = {0};
    for (uint64_t i = 0; i < 10; i++)
        assert_int_equal(sim_engine_schedule(e, 1000 * (sim_time_ns)i, stop_at_arg, &lg, i, NULL),
                         ST_OK);
    uint64_t ran = 0;
    assert_int_equal(sim_engine_run(e, 3000, &ran), ST_OK);
    assert_int_equal(ran, 4);
    assert_int_equal(sim_engine_now(e), 3000);
    assert_int_equal(sim_engine_run(e, 3999, &ran), ST_OK);
    assert_int_equal(ran, 0);
    assert_int_equal(sim_engine_now(e), 3000);
    /* Events 4 and 5; 5 stops the run. */
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, &ran), ST_OK);
    assert_int_equal(ran, 2);
    assert_int_equal(sim_engine_now(e), 5000);
    /* Stop outside a run does not affect the next run. */
    sim_engine_stop(e);
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, &ran), ST_OK);
    assert_int_equal(ran, 4);
    assert_int_equal(lg.n, 10);
    assert_int_equal(sim_engine_events(e), 10);
    assert_int_equal(sim_engine_now(e), 9000);
    sim_engine_free(e);
}

/* A seeded random workload. Each event schedules 0-3 children at random
 * delays (a third of them at delay 0, so equal times are common) and cancels
 * a random held event now and then. The test keeps its own count of schedule
 * calls, which is the engine's sequence number, to know for each sequence
 * the time it was due and whether it was cancelled. */
#define WL_MAX 20000   /* schedule calls in all */
#define WL_PENDING 2000 /* most pending at once (the engine has room for 4096) */

typedef struct workload {
    gsl_rng *r;
    int scheduled; /* successful schedule calls = next sequence number */
    sim_time_ns due[WL_MAX];
    unsigned char cancelled[WL_MAX];
    unsigned char ran[WL_MAX];
    sim_event_id held[64];
    int held_seq[64];
    /* trace */
    uint64_t hash;
    uint64_t traced;
    sim_time_ns last_t;
    uint64_t last_seq;
    int bad_order;
    int bad_due;
} workload;

static void wl_event(sim_engine *e, void *ctx, uint64_t arg);

static void wl_schedule(sim_engine *e, workload *w, sim_time_ns at)
{
    if (w->scheduled >= WL_MAX || sim_engine_pending(e) >= WL_PENDING)
        return;
    sim_event_id id;
    assert_int_equal(sim_engine_schedule(e, at, wl_event, w, (uint64_t)w->scheduled, &id), ST_OK);
    w->due[w->scheduled] = at;
    int h = (int)gsl_rng_uniform_int(w->r, 64);
    w->held[h] = id;
    w->held_seq[h] = w->scheduled;
    w->scheduled++;
}

static void wl_event(sim_engine *e, void *ctx, uint64_t arg)
{
    workload *w = ctx;
    assert_int_equal(w->ran[arg], 0);
    w->ran[arg] = 1;
    int kids = (int)gsl_rng_uniform_int(w->r, 4);
    for (int k = 0; k < kids; k++) {
        sim_time_ns d = 0;
        if (gsl_rng_uniform_int(w->r, 3) != 0)
            d = (sim_time_ns)gsl_rng_uniform_int(w->r, 5000);
        wl_schedule(e, w, sim_engine_now(e) + d);
    }
    if (gsl_rng_uniform_int(w->r, 4) == 0) {
        int h = (int)gsl_rng_uniform_int(w->r, 64);
        int s = w->held_seq[h];
        /* True exactly when the held event is still pending. */
        bool pending = w->held[h].gen != 0 && !w->ran[s] && !w->cancelled[s];
        assert_int_equal(sim_engine_cancel(e, w->held[h]), pending);
        if (pending)
            w->cancelled[s] = 1;
    }
}

static void wl_trace(void *tctx, sim_time_ns t, uint64_t seq)
{
    workload *w = tctx;
    /* Strictly increasing (time, sequence): never back in time, FIFO at equal times. */
    if (w->traced > 0 && (t < w->last_t || (t == w->last_t && seq <= w->last_seq)))
        w->bad_order++;
    if (seq >= (uint64_t)w->scheduled || w->due[seq] != t || w->cancelled[seq])
        w->bad_due++;
    w->last_t = t;
    w->last_seq = seq;
    w->traced++;
    /* FNV-1a over the bytes of (t, seq). */
    uint64_t v[2] = {(uint64_t)t, seq};
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++) {
        w->hash ^= b[i];
        w->hash *= 1099511628211ull;
    }
}

static void run_workload(uint64_t seed, workload *w)
{
    memset(w, 0, sizeof *w);
    w->hash = 14695981039346656037ull;
    st_err err = {0};
    assert_int_equal(sim_rng_new(seed, &w->r, &err), ST_OK);
    sim_engine *e = engine(4096);
    sim_engine_set_trace(e, wl_trace, w);
    for (int i = 0; i < 40; i++)
        wl_schedule(e, w, (sim_time_ns)gsl_rng_uniform_int(w->r, 1000));
    uint64_t ran = 0;
    assert_int_equal(sim_engine_run(e, SIM_TIME_MAX, &ran), ST_OK);
    assert_int_equal(sim_engine_pending(e), 0);
    assert_int_equal(w->bad_order, 0);
    assert_int_equal(w->bad_due, 0);
    assert_int_equal(ran, w->traced);
    /* Every event ran exactly once or was cancelled, never both. */
    uint64_t want = 0;
    for (int s = 0; s < w->scheduled; s++) {
        assert_int_equal(w->ran[s] + w->cancelled[s], 1);
        want += w->ran[s];
    }
    assert_int_equal(ran, want);
    sim_engine_free(e);
    gsl_rng_free(w->r);
}

static void random_workload_deterministic(void **state)
{
    workload *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    run_workload(20240917, a);
    assert_true(a->scheduled == WL_MAX); /* the workload grew to its cap */
    assert_true(a->traced > 15000);
    run_workload(20240917, b);
    assert_int_equal(a->hash, b->hash);
    assert_int_equal(a->traced, b->traced);
    assert_int_equal(a->last_t, b->last_t);
    run_workload(20240918, b);
    assert_true(a->hash != b->hash);
    free(a);
    free(b);
}

/* Same seed, same stream; the jitter factor has mean 1; sigma 0 draws nothing. */
static void rng_and_lognormal(void **state)
{
    gsl_rng *r1, *r2;
    st_err err = {0};
    assert_int_equal(sim_rng_new(1536, &r1, &err), ST_OK);
    assert_int_equal(sim_rng_new(1536, &r2, &err), ST_OK);
    for (int i = 0; i < 100; i++)
        assert_int_equal(gsl_rng_get(r1), gsl_rng_get(r2));
    assert_rel(sim_lognormal_factor(r1, 0.0), 1.0, 0.0);
    assert_int_equal(gsl_rng_get(r1), gsl_rng_get(r2));

    /* Mean of exp(N(-s^2/2, s^2)) is 1; its standard deviation is
     * sqrt(exp(s^2) - 1) = 0.307 for s = 0.3, so the mean of 200000 draws is
     * within 5 standard errors (0.0034) of 1. The median is exp(-s^2/2). */
    const int n = 200000;
    double sum = 0;
    int below = 0;
    for (int i = 0; i < n; i++) {
        double f = sim_lognormal_factor(r1, 0.3);
        assert_true(f > 0);
        sum += f;
        below += f < exp(-0.045);
    }
    assert_rel(sum / n, 1.0, 0.0035);
    assert_rel((double)below / n, 0.5, 0.01);
    gsl_rng_free(r1);
    gsl_rng_free(r2);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_by_time),
        cmocka_unit_test(fifo_at_equal_times),
        cmocka_unit_test(schedule_at_now_runs_last),
        cmocka_unit_test(cancel),
        cmocka_unit_test(never_back_in_time),
        cmocka_unit_test(pool_exhaustion),
        cmocka_unit_test(run_until_and_stop),
        cmocka_unit_test(random_workload_deterministic),
        cmocka_unit_test(rng_and_lognormal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
