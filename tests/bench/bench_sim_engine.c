/*
 * bench_sim_engine.c: speed of the simulator's event core (not a test).
 *
 * Case "hold": the classic hold model of event-queue benchmarks (Jones 1986,
 * "An empirical comparison of priority-queue and event-set
 * implementations"): K events in flight; each event, when it runs, schedules
 * one more at now + a pseudo-random delay in [1, 1024] ns, until N events
 * have run. K = 1000 is the size of a large pipeline step's queue; K = 100000
 * shows what a queue beyond the caches costs. Target: >= 10 million events/s
 * on one core for K = 1000.
 *
 * Case "link": 64 transfers in flight over 8 processor-sharing links; each
 * completion starts another transfer on a pseudo-random link. Reports
 * transfers and engine events per second.
 *
 * Each case is first run once with a trace hook that checks the answer
 * (exactly N events, never back in time, FIFO at equal times); the timed
 * runs have no hook. Prints a table and machine-readable "bench," rows:
 * case, K, N, median, min and max seconds, and events per second at the
 * median.
 */
#include "bench_util.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/sim_engine.h"
#include "sim/sim_link.h"

#define REPEATS 5

/* xorshift64* (Vigna 2016): cheap, so the timing is the engine's. */
static inline uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ull;
}

typedef struct hold {
    uint64_t rand;
    uint64_t scheduled; /* events scheduled so far */
    uint64_t total;     /* N */
    /* checking hook */
    sim_time_ns last_t;
    uint64_t last_seq;
    uint64_t traced;
    uint64_t bad;
} hold;

static void hold_event(sim_engine *e, void *ctx, uint64_t arg)
{
    hold *h = ctx;
    if (h->scheduled >= h->total)
        return;
    h->scheduled++;
    sim_time_ns d = 1 + (sim_time_ns)(next_rand(&h->rand) >> 54);
    sim_engine_schedule(e, sim_engine_now(e) + d, hold_event, h, arg, NULL);
}

static void check_hook(void *tctx, sim_time_ns t, uint64_t seq)
{
    hold *h = tctx;
    if (h->traced > 0 && (t < h->last_t || (t == h->last_t && seq <= h->last_seq)))
        h->bad++;
    h->last_t = t;
    h->last_seq = seq;
    h->traced++;
}

/* One hold run of n events with k in flight; returns seconds, or -1. */
static double hold_run(uint64_t k, uint64_t n, int check)
{
    st_err err = {0};
    sim_engine *e;
    if (sim_engine_new(k + 1, &e, &err)) {
        fprintf(stderr, "bench_sim_engine: %s\n", err.msg);
        return -1;
    }
    hold h = {.rand = 0x9e3779b97f4a7c15ull, .total = n};
    if (check)
        sim_engine_set_trace(e, check_hook, &h);
    for (uint64_t i = 0; i < k; i++) {
        h.scheduled++;
        sim_engine_schedule(e, (sim_time_ns)(next_rand(&h.rand) >> 54), hold_event, &h, i, NULL);
    }
    uint64_t ran = 0;
    double t0 = bench_now_s();
    int rc = sim_engine_run(e, SIM_TIME_MAX, &ran);
    double dt = bench_now_s() - t0;
    if (rc || ran != n || (check && (h.bad || h.traced != n))) {
        fprintf(stderr, "bench_sim_engine: hold k=%llu: %s, ran %llu of %llu, %llu out of order\n",
                (unsigned long long)k, rc ? sim_engine_err(e)->msg : "wrong answer",
                (unsigned long long)ran, (unsigned long long)n, (unsigned long long)h.bad);
        dt = -1;
    }
    sim_engine_free(e);
    return dt;
}

static void report(const char *name, uint64_t k, uint64_t n, double *t, double per_run,
                   const char *unit)
{
    qsort(t, REPEATS, sizeof t[0], bench_cmp_double);
    double med = t[REPEATS / 2];
    printf("%-5s k %-7llu  %10llu %-9s  median %8.2f ms  (min %.2f, max %.2f)  %6.2f M %s/s\n",
           name, (unsigned long long)k, (unsigned long long)per_run, unit, med * 1e3, t[0] * 1e3,
           t[REPEATS - 1] * 1e3, (double)per_run / med * 1e-6, unit);
    printf("bench,sim_engine,%s,%s,%llu,%llu,%.6f,%.6f,%.6f,%.0f\n", name, unit,
           (unsigned long long)k, (unsigned long long)n, med, t[0], t[REPEATS - 1],
           (double)per_run / med);
}

static int hold_case(uint64_t k, uint64_t n)
{
    if (hold_run(k, n / 10, 1) < 0)
        return 1;
    double t[REPEATS];
    for (int i = 0; i < REPEATS; i++)
        if ((t[i] = hold_run(k, n, 0)) < 0)
            return 1;
    report("hold", k, n, t, (double)n, "events");
    return 0;
}

/* Link case: 8 links, k transfers in flight, n transfers in all. */
#define NLINK 8

typedef struct churn {
    sim_link link[NLINK];
    sim_link_xfer st[NLINK][64];
    uint64_t rand;
    uint64_t started, total;
} churn;

static void churn_done(sim_engine *e, void *ctx, uint64_t arg)
{
    churn *c = ctx;
    if (c->started >= c->total)
        return;
    c->started++;
    uint64_t x = next_rand(&c->rand);
    double bytes = (double)(1 + (x >> 40)); /* up to 16 MiB */
    sim_link_start(&c->link[x & (NLINK - 1)], bytes, churn_done, c, 0);
}

static double churn_run(uint64_t k, uint64_t n, uint64_t *events)
{
    st_err err = {0};
    sim_engine *e;
    churn *c = calloc(1, sizeof *c);
    if (!c || k > 64 || sim_engine_new(2 * k + NLINK + 1, &e, &err)) {
        fprintf(stderr, "bench_sim_engine: link setup: %s\n", err.msg);
        free(c);
        return -1;
    }
    c->rand = 0x2545f4914f6cdd1dull;
    c->total = n;
    for (int i = 0; i < NLINK; i++)
        sim_link_init(&c->link[i], e, 150e9, 2500, 64, c->st[i], &err);
    for (uint64_t i = 0; i < k; i++)
        churn_done(e, c, 0);
    uint64_t ran = 0;
    double t0 = bench_now_s();
    int rc = sim_engine_run(e, SIM_TIME_MAX, &ran);
    double dt = bench_now_s() - t0;
    uint64_t finished = 0;
    for (int i = 0; i < NLINK; i++)
        finished += sim_link_finished(&c->link[i]);
    if (rc || finished != n) {
        fprintf(stderr, "bench_sim_engine: link: %s, %llu of %llu transfers\n",
                rc ? sim_engine_err(e)->msg : "wrong answer", (unsigned long long)finished,
                (unsigned long long)n);
        dt = -1;
    }
    *events = ran;
    sim_engine_free(e);
    free(c);
    return dt;
}

static int link_case(uint64_t k, uint64_t n)
{
    double t[REPEATS], te[REPEATS];
    uint64_t events = 0;
    for (int i = 0; i < REPEATS; i++) {
        if ((t[i] = churn_run(k, n, &events)) < 0)
            return 1;
        te[i] = t[i];
    }
    report("link", k, n, t, (double)n, "transfers");
    report("link", k, events, te, (double)events, "events");
    return 0;
}

int main(int argc, char **argv)
{
    /* An optional scale factor for quick runs: bench_sim_engine 0.1 */
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(scale > 0))
        scale = 1.0;
    uint64_t n = (uint64_t)(20e6 * scale);
    int rc = hold_case(1000, n) || hold_case(100000, n) || link_case(64, (uint64_t)(2e6 * scale));
    return rc;
}
