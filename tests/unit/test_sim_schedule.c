/*
 * test_sim_schedule.c: the pipeline schedule generator on its own.
 *
 * Structure: every (microbatch, chunk) has one F and one B (or one Bi and one
 * W) per stage, F before B, Bi before W, a RECV right before the op it feeds
 * and a SEND right after the op that produced it, each SEND paired with one
 * RECV on the peer stage, first-in first-out per chunk, the length
 * sim_sched_len promised, and in flight at most the planner's inflight()
 * (planner/plan_eval_mem.c) and the cap.
 *
 * Dynamics: play() is an abstract lock-step executor: each stage walks its
 * list; a compute op takes its duration, a SEND records when it was issued
 * and never waits, a RECV waits until its SEND was issued (plus a transfer
 * time). It must finish for every (p, m, v, cap) of a sweep and each
 * schedule, with global virtual stages in order. With uniform stages and no
 * transfer time its finish time gives the closed forms of the bubble:
 * (p - 1)/m for GPipe and 1F1B (Huang et al. 2019; Narayanan et al. 2021,
 * Sec. 2.2.1), (p - 1)/(v m) for Megatron's interleaved 1F1B (Narayanan et
 * al. 2021, Sec. 2.2.2) and (p - 1)(F + B - W) over m(F + B + W) for ZB-H1
 * (Qi et al. 2023, Sec. 3.1), and equals the planner's pipeline_s().
 */
#include "test_util.h"

#include <stdlib.h>

#include "sim/sim_schedule.h"

#define MAXP 16
#define MAXV 4
#define MAXM 64
#define MAXOPS (MAXM * MAXV * 7)

/* Op lists of every stage of one schedule. */
typedef struct lists {
    sim_sched s;
    int n[MAXP];
    sim_op ops[MAXP][MAXOPS];
} lists;

/* Durations of the compute ops, and of one transfer. */
typedef struct durs {
    int64_t f, b, bi, w, comm;
} durs;

/* What play() measured. */
typedef struct play_out {
    int64_t finish;           /* last op's end; -1 on deadlock */
    int64_t fwd_end[MAXP * MAXV][MAXM];  /* by global virtual stage, microbatch */
    int64_t bwd_end[MAXP * MAXV][MAXM];  /* B or Bi */
} play_out;

static lists L;
static play_out P;

static sim_sched sched(plan_schedule k, int p, int m, int v, int cap)
{
    return (sim_sched){.pp = p, .microbatches = m, .virtual_stages = v,
                       .active_microbatches = cap, .schedule = k};
}

static void make(const sim_sched *s)
{
    st_err err = {0};
    L.s = *s;
    assert_true(s->pp <= MAXP && s->microbatches <= MAXM && s->virtual_stages <= MAXV);
    for (int st = 0; st < s->pp; st++) {
        int rc = sim_sched_ops(s, st, L.ops[st], MAXOPS, &L.n[st], &err);
        if (rc != ST_OK)
            fail_msg("p=%d m=%d v=%d cap=%d %s: %s", s->pp, s->microbatches, s->virtual_stages,
                     s->active_microbatches, plan_schedule_name(s->schedule), err.msg);
        assert_int_equal(L.n[st], sim_sched_len(s, st));
    }
}

/* make of sched's schedule. */
static void make_sched(plan_schedule k, int p, int m, int v, int cap)
{
    sim_sched s = sched(k, p, m, v, cap);
    make(&s);
}

static int is_compute(int k)
{
    return k == SIM_OP_FWD || k == SIM_OP_BWD || k == SIM_OP_BWD_INPUT || k == SIM_OP_BWD_WEIGHT;
}

/* The planner's inflight() for stage i, in chunks (plan_eval_mem.c). */
static double planner_chunks(const sim_sched *s, int i)
{
    int p = s->pp, m = s->microbatches, cap = s->active_microbatches, v = s->virtual_stages;
    double n;
    switch (s->schedule) {
    case PLAN_SCHED_SIMPLE:
        n = m < cap ? m : cap;
        break;
    case PLAN_SCHED_VIRTUAL: {
        double chunks = (double)(v - 1) * p + 2.0 * (p - i - 1) + 1.0;
        chunks = fmin(chunks, (double)m * v);
        chunks = fmin(chunks, (double)cap * v);
        n = chunks / v;
        break;
    }
    default:
        n = fmin(fmin(p - i, m), cap);
        break;
    }
    return (n < 1.0 ? 1.0 : n) * v;
}

/* The structural checks of one stage's list (see the file comment). */
static void check_stage(const sim_sched *s, int st, const sim_op *ops, int n)
{
    int p = s->pp, m = s->microbatches, v = s->virtual_stages, zb = s->schedule == PLAN_SCHED_ZB_H1;
    static int seen[SIM_OP__COUNT][MAXV][MAXM];
    memset(seen, 0, sizeof seen);
    int last_f[MAXV], last_b[MAXV], inflight = 0, peak = 0;
    for (int c = 0; c < v; c++)
        last_f[c] = last_b[c] = -1;
    for (int i = 0; i < n; i++) {
        const sim_op *o = &ops[i];
        int k = o->kind, mb = o->microbatch, c = o->chunk, g = c * p + st;
        assert_true(k < SIM_OP__COUNT && mb >= 0 && mb < m && c >= 0 && c < v);
        seen[k][c][mb]++;
        assert_int_equal(seen[k][c][mb], 1);
        switch (k) {
        case SIM_OP_FWD:
            assert_true(mb > last_f[c]); /* first in, first out */
            last_f[c] = mb;
            peak = ++inflight > peak ? inflight : peak;
            /* its RECV right before it iff it has a previous stage on another rank */
            assert_int_equal(i > 0 && ops[i - 1].kind == SIM_OP_RECV_FWD, p > 1 && g > 0);
            assert_int_equal(i + 1 < n && ops[i + 1].kind == SIM_OP_SEND_FWD, p > 1 && g < p * v - 1);
            break;
        case SIM_OP_BWD:
        case SIM_OP_BWD_INPUT:
            assert_int_equal(k == SIM_OP_BWD_INPUT, zb);
            assert_int_equal(seen[SIM_OP_FWD][c][mb], 1);
            assert_true(mb > last_b[c]);
            last_b[c] = mb;
            inflight--;
            assert_int_equal(i > 0 && ops[i - 1].kind == SIM_OP_RECV_BWD, p > 1 && g < p * v - 1);
            assert_int_equal(i + 1 < n && ops[i + 1].kind == SIM_OP_SEND_BWD, p > 1 && g > 0);
            break;
        case SIM_OP_BWD_WEIGHT:
            assert_true(zb);
            assert_int_equal(seen[SIM_OP_BWD_INPUT][c][mb], 1);
            break;
        case SIM_OP_RECV_FWD:
        case SIM_OP_RECV_BWD: /* feeds the next op, of the same (mb, chunk) */
            assert_true(i + 1 < n && ops[i + 1].microbatch == mb && ops[i + 1].chunk == c);
            assert_int_equal(ops[i + 1].kind == SIM_OP_FWD, k == SIM_OP_RECV_FWD);
            assert_true(is_compute(ops[i + 1].kind) && ops[i + 1].kind != SIM_OP_BWD_WEIGHT);
            break;
        default: /* a SEND follows the op that produced its tensor */
            assert_true(i > 0 && ops[i - 1].microbatch == mb && ops[i - 1].chunk == c);
            assert_int_equal(ops[i - 1].kind == SIM_OP_FWD, k == SIM_OP_SEND_FWD);
            assert_true(is_compute(ops[i - 1].kind) && ops[i - 1].kind != SIM_OP_BWD_WEIGHT);
            break;
        }
    }
    for (int c = 0; c < v; c++)
        for (int mb = 0; mb < m; mb++) {
            assert_int_equal(seen[SIM_OP_FWD][c][mb], 1);
            assert_int_equal(seen[SIM_OP_BWD][c][mb] + seen[SIM_OP_BWD_INPUT][c][mb], 1);
            assert_int_equal(seen[SIM_OP_BWD_WEIGHT][c][mb], zb);
        }
    assert_int_equal(inflight, 0);
    assert_int_equal(peak, sim_sched_inflight(s, st));
    assert_true(peak <= (int64_t)s->active_microbatches * v);
    assert_true(peak <= planner_chunks(s, st) + 1e-9);
}

/* Every communication op's peer is on the peer stage, once, and pairs back. */
static void check_pairs(const sim_sched *s)
{
    static unsigned char has[MAXP][SIM_OP__COUNT][MAXV][MAXM];
    memset(has, 0, sizeof has);
    for (int st = 0; st < s->pp; st++)
        for (int i = 0; i < L.n[st]; i++) {
            const sim_op *o = &L.ops[st][i];
            has[st][o->kind][o->chunk][o->microbatch]++;
        }
    st_err err = {0};
    for (int st = 0; st < s->pp; st++)
        for (int i = 0; i < L.n[st]; i++) {
            const sim_op *o = &L.ops[st][i];
            if (is_compute(o->kind))
                continue;
            int ps, back_s;
            sim_op q, back;
            assert_int_equal(sim_op_peer(s, st, o, &ps, &q, &err), ST_OK);
            assert_int_equal(has[ps][q.kind][q.chunk][q.microbatch], 1);
            assert_int_equal(sim_op_peer(s, ps, &q, &back_s, &back, &err), ST_OK);
            assert_true(back_s == st && back.kind == o->kind && back.chunk == o->chunk &&
                        back.microbatch == o->microbatch);
            /* the peer is the next (previous) global virtual stage */
            int g = o->chunk * s->pp + st, pg = q.chunk * s->pp + ps;
            int next = o->kind == SIM_OP_SEND_FWD || o->kind == SIM_OP_RECV_BWD;
            assert_int_equal(pg, next ? g + 1 : g - 1);
        }
}

static int64_t dur_of(const durs *d, int k)
{
    switch (k) {
    case SIM_OP_FWD:
        return d->f;
    case SIM_OP_BWD:
        return d->b;
    case SIM_OP_BWD_INPUT:
        return d->bi;
    case SIM_OP_BWD_WEIGHT:
        return d->w;
    default:
        return 0;
    }
}

/* The abstract executor over L (see the file comment). Fills P; returns the
 * finish time or -1 when no stage can move and some have ops left. */
static int64_t play(const durs *d)
{
    static int64_t sent[2][MAXP][MAXV][MAXM]; /* [bwd][stage][chunk][mb]: when issued */
    const sim_sched *s = &L.s;
    int pos[MAXP] = {0};
    int64_t clock[MAXP] = {0};
    st_err err = {0};
    memset(sent, 0xff, sizeof sent);
    memset(&P, 0xff, sizeof P);
    for (int moved = 1; moved;) {
        moved = 0;
        for (int st = 0; st < s->pp; st++) {
            while (pos[st] < L.n[st]) {
                const sim_op *o = &L.ops[st][pos[st]];
                int k = o->kind, g = o->chunk * s->pp + st;
                if (k == SIM_OP_RECV_FWD || k == SIM_OP_RECV_BWD) {
                    int64_t t = sent[k == SIM_OP_RECV_BWD][st][o->chunk][o->microbatch];
                    if (t < 0)
                        break;
                    if (t + d->comm > clock[st])
                        clock[st] = t + d->comm;
                } else if (k == SIM_OP_SEND_FWD || k == SIM_OP_SEND_BWD) {
                    int ps;
                    sim_op q;
                    assert_int_equal(sim_op_peer(s, st, o, &ps, &q, &err), ST_OK);
                    sent[k == SIM_OP_SEND_BWD][ps][q.chunk][q.microbatch] = clock[st];
                } else {
                    clock[st] += dur_of(d, k);
                    if (k == SIM_OP_FWD)
                        P.fwd_end[g][o->microbatch] = clock[st];
                    else if (k != SIM_OP_BWD_WEIGHT)
                        P.bwd_end[g][o->microbatch] = clock[st];
                }
                pos[st]++;
                moved = 1;
            }
        }
    }
    P.finish = 0;
    for (int st = 0; st < s->pp; st++) {
        if (pos[st] < L.n[st])
            return P.finish = -1;
        if (clock[st] > P.finish)
            P.finish = clock[st];
    }
    return P.finish;
}

/* After play(): each microbatch went through the global virtual stages in
 * order, forward up and backward down (an F ends at least its duration
 * after the previous stage's F). */
static void check_stage_order(const sim_sched *s, const durs *d)
{
    int G = s->pp * s->virtual_stages;
    int64_t bd = s->schedule == PLAN_SCHED_ZB_H1 ? d->bi : d->b;
    for (int mb = 0; mb < s->microbatches; mb++) {
        for (int g = 1; g < G; g++)
            assert_true(P.fwd_end[g][mb] >= P.fwd_end[g - 1][mb] + d->f);
        assert_true(P.bwd_end[G - 1][mb] >= P.fwd_end[G - 1][mb] + bd);
        for (int g = G - 2; g >= 0; g--)
            assert_true(P.bwd_end[g][mb] >= P.bwd_end[g + 1][mb] + bd);
    }
}

/* planner/plan_eval.c pipeline_s() for p uniform stages of per-microbatch
 * time T (all chunks of a rank; v (f + b), or f + bi + w for zero bubble). */
static double planner_pipeline(const sim_sched *s, double T)
{
    int m = s->microbatches, cap = s->active_microbatches, p = s->pp;
    double sumT = p * T, maxT = T, period = fmax(maxT, sumT / (cap < m ? cap : m));
    switch (s->schedule) {
    case PLAN_SCHED_SIMPLE: {
        int w = m < cap ? m : cap;
        int waves = (m + w - 1) / w, last = m - (waves - 1) * w;
        return (waves - 1) * ((w - 1) * maxT + sumT) + (last - 1) * maxT + sumT;
    }
    case PLAN_SCHED_VIRTUAL:
        return m * period + (sumT - maxT) / s->virtual_stages;
    case PLAN_SCHED_ZB_H1:
        return m * period + (sumT - maxT) / 3.0;
    default:
        return (m - 1) * period + sumT;
    }
}

/* One stage's ops as text: every op ("F0 sendF0 recvB0 B0"), or its compute
 * ops only ("F0 F1 B0 ..."), with chunk letters a, b, ... after the
 * microbatch when v > 1. */
static const char *ops_text(int st, int compute_only)
{
    static char buf[8192];
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < L.n[st] && n + 16 < sizeof buf; i++) {
        const sim_op *o = &L.ops[st][i];
        if (compute_only && !is_compute(o->kind))
            continue;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s%d", n ? " " : "",
                              sim_op_name((sim_op_kind)o->kind), (int)o->microbatch);
        if (compute_only && L.s.virtual_stages > 1)
            buf[n++] = (char)('a' + o->chunk), buf[n] = '\0';
    }
    return buf;
}

static const char *compute_text(int st)
{
    return ops_text(st, 1);
}

static const char *full_text(int st)
{
    return ops_text(st, 0);
}

static void op_names(void **state)
{
    static const char *const want[SIM_OP__COUNT] = {"recvF", "F", "sendF", "recvB",
                                                    "B",     "Bi", "W",   "sendB"};
    for (int k = 0; k < SIM_OP__COUNT; k++)
        assert_string_equal(sim_op_name((sim_op_kind)k), want[k]);
    assert_string_equal(sim_op_name(SIM_OP__COUNT), "?");
    assert_string_equal(sim_op_name((sim_op_kind)-1), "?");
}

/* One bad input: the code, and the message names the value. */
static void expect_einval(sim_sched s, const char *msg)
{
    st_err err = {0};
    sim_op ops[4];
    int n = -1;
    assert_int_equal(sim_sched_check(&s, &err), ST_EINVAL);
    assert_string_equal(err.msg, msg);
    assert_int_equal(sim_sched_len(&s, 0), -1);
    assert_int_equal(sim_sched_inflight(&s, 0), 0);
    st_err_clear(&err);
    assert_int_equal(sim_sched_ops(&s, 0, ops, 4, &n, &err), ST_EINVAL);
    assert_string_equal(err.msg, msg);
    assert_int_equal(n, -1); /* untouched */
}

static void bad_inputs(void **state)
{
    expect_einval(sched(PLAN_SCHED_INTERLEAVED, 0, 8, 1, 2), "pipeline degree 0: must be in 1..256");
    expect_einval(sched(PLAN_SCHED_INTERLEAVED, 300, 8, 1, 2),
                  "pipeline degree 300: must be in 1..256");
    expect_einval(sched(PLAN_SCHED_SIMPLE, 4, 0, 1, 2), "microbatches 0: must be in 1..1048576");
    expect_einval(sched(PLAN_SCHED_VIRTUAL, 4, 8, 0, 2), "virtual stages 0: must be in 1..256");
    expect_einval(sched(PLAN_SCHED_ZB_H1, 4, 8, 1, 0), "active microbatches 0: must be at least 1");
    expect_einval(sched(PLAN_SCHED_ZB_H1, 4, 8, 1, -3), "active microbatches -3: must be at least 1");
    expect_einval(sched((plan_schedule)7, 4, 8, 1, 2),
                  "schedule 7: unknown (simple, interleaved, virtual or zb-h1)");
    expect_einval(sched(PLAN_SCHED_INTERLEAVED, 4, 8, 2, 6),
                  "virtual stages 2 need the virtual schedule, not interleaved");
    expect_einval(sched(PLAN_SCHED_VIRTUAL, 4, 6, 2, 6),
                  "microbatches 6 must be a multiple of pp 4 for virtual stages");

    /* v = 1 under the virtual schedule needs no multiple (the planner's rule) */
    sim_sched ok = sched(PLAN_SCHED_VIRTUAL, 4, 6, 1, 6);
    st_err err = {0};
    assert_int_equal(sim_sched_check(&ok, &err), ST_OK);

    /* stage out of range */
    sim_op ops[64];
    int n;
    assert_int_equal(sim_sched_ops(&ok, 4, ops, 64, &n, &err), ST_EINVAL);
    assert_string_equal(err.msg, "stage 4: must be in 0..3");
    assert_int_equal(sim_sched_len(&ok, -1), -1);
    assert_int_equal(sim_sched_len(&ok, 4), -1);
}

/* Same ops (field by field: sim_op has padding). */
static int ops_equal(const sim_op *a, const sim_op *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].kind != b[i].kind || a[i].microbatch != b[i].microbatch || a[i].chunk != b[i].chunk)
            return 0;
    return 1;
}

/* A short buffer is ST_ERANGE with the length needed; what fits is the
 * list's beginning, and nothing past cap is written. */
static void short_buffer(void **state)
{
    sim_sched s = sched(PLAN_SCHED_VIRTUAL, 4, 8, 2, 6);
    int len = sim_sched_len(&s, 1), n = 0;
    static sim_op full[MAXOPS], part[MAXOPS];
    st_err err = {0};
    assert_int_equal(sim_sched_ops(&s, 1, full, len, &n, &err), ST_OK);
    assert_int_equal(n, len);

    memset(part, 0x5a, sizeof part);
    assert_int_equal(sim_sched_ops(&s, 1, part, len - 1, &n, &err), ST_ERANGE);
    assert_int_equal(n, len);
    char want[128];
    snprintf(want, sizeof want, "stage 1 runs %d ops, the buffer holds %d", len, len - 1);
    assert_string_equal(err.msg, want);
    assert_true(ops_equal(part, full, len - 1));
    sim_op canary;
    memset(&canary, 0x5a, sizeof canary);
    assert_memory_equal(&part[len - 1], &canary, sizeof canary);

    st_err_clear(&err);
    assert_int_equal(sim_sched_ops(&s, 1, NULL, 0, &n, &err), ST_ERANGE);
    assert_int_equal(n, len);

    /* pure: the same inputs give the same list */
    assert_int_equal(sim_sched_ops(&s, 1, part, MAXOPS, NULL, NULL), ST_OK);
    assert_true(ops_equal(part, full, len));
}

/* The op counts sim_sched_len promises, in closed form: 2 compute ops (3 for
 * zero bubble) per (mb, chunk), 2 receives/sends per neighbour on another
 * rank. */
static void lengths(void **state)
{
    sim_sched s = sched(PLAN_SCHED_INTERLEAVED, 6, 12, 1, 8);
    assert_int_equal(sim_sched_len(&s, 0), 12 * (2 + 2));
    assert_int_equal(sim_sched_len(&s, 3), 12 * (2 + 4));
    assert_int_equal(sim_sched_len(&s, 5), 12 * (2 + 2));
    s = sched(PLAN_SCHED_ZB_H1, 6, 12, 1, 8);
    assert_int_equal(sim_sched_len(&s, 3), 12 * (3 + 4));
    s = sched(PLAN_SCHED_VIRTUAL, 4, 8, 3, 6); /* rank 0 hosts g = 0, 4, 8 of 12 */
    assert_int_equal(sim_sched_len(&s, 0), 8 * (3 * 2 + 2 + 4 + 4));
    assert_int_equal(sim_sched_len(&s, 3), 8 * (3 * 2 + 4 + 4 + 2));
    s = sched(PLAN_SCHED_VIRTUAL, 1, 5, 3, 2); /* one rank: no communication */
    assert_int_equal(sim_sched_len(&s, 0), 5 * 3 * 2);
}

/* Hand-written lists: each schedule's order on a small pipeline. */
static void known_orders(void **state)
{
    /* 1F1B, p = 2: with its sends and receives */
    make_sched(PLAN_SCHED_INTERLEAVED, 2, 2, 1, 4);
    assert_string_equal(full_text(0), "F0 sendF0 F1 sendF1 recvB0 B0 recvB1 B1");
    assert_string_equal(full_text(1), "recvF0 F0 B0 sendB0 recvF1 F1 B1 sendB1");

    /* 1F1B, p = 4, m = 6: warm-up p - s - 1 */
    make_sched(PLAN_SCHED_INTERLEAVED, 4, 6, 1, 6);
    assert_string_equal(compute_text(0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
    assert_string_equal(compute_text(1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5");
    assert_string_equal(compute_text(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");

    /* 1F1B under cap 2 < p = 4: two microbatches circulate; the middle
     * stages take them in pairs */
    make_sched(PLAN_SCHED_INTERLEAVED, 4, 6, 1, 2);
    assert_string_equal(compute_text(0), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
    assert_string_equal(compute_text(1), "F0 F1 B0 B1 F2 F3 B2 B3 F4 F5 B4 B5");
    assert_string_equal(compute_text(2), "F0 F1 B0 B1 F2 F3 B2 B3 F4 F5 B4 B5");
    assert_string_equal(compute_text(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");

    /* GPipe in waves of the cap, backwards in ascending order */
    make_sched(PLAN_SCHED_SIMPLE, 3, 5, 1, 2);
    assert_string_equal(compute_text(1), "F0 F1 B0 B1 F2 F3 B2 B3 F4 B4");

    /* Megatron, p = 2, v = 2, m = 4: groups of 2 microbatches per chunk,
     * warm-up 2 (p - s - 1) + (v - 1) p */
    make_sched(PLAN_SCHED_VIRTUAL, 2, 4, 2, 4);
    assert_string_equal(compute_text(0),
                        "F0a F1a F0b F1b F2a B0b F3a B1b F2b B0a F3b B1a B2b B3b B2a B3a");
    assert_string_equal(compute_text(1),
                        "F0a F1a F0b B0b F1b B1b F2a B0a F3a B1a F2b B2b F3b B3b B2a B3a");

    /* ZB-H1, p = 4, m = 6, stage 2: p - s forwards, s Bi with W held back,
     * Bi W F, cool-down Bi W, the held-back W last */
    make_sched(PLAN_SCHED_ZB_H1, 4, 6, 1, 6);
    assert_string_equal(compute_text(2), "F0 F1 Bi0 F2 Bi1 F3 Bi2 W2 F4 Bi3 W3 F5 Bi4 W4 Bi5 W5 W0 W1");
    assert_string_equal(compute_text(0), "F0 F1 F2 F3 Bi0 W0 F4 Bi1 W1 F5 Bi2 W2 Bi3 W3 Bi4 W4 Bi5 W5");
    assert_string_equal(full_text(3), "recvF0 F0 Bi0 sendB0 recvF1 F1 Bi1 sendB1 recvF2 F2 Bi2 sendB2 "
                                      "recvF3 F3 Bi3 sendB3 W3 recvF4 F4 Bi4 sendB4 W4 recvF5 F5 "
                                      "Bi5 sendB5 W5 W0 W1 W2");

    /* one rank, three chunks: no communication, chunks in order */
    make_sched(PLAN_SCHED_VIRTUAL, 1, 2, 3, 4);
    assert_string_equal(compute_text(0), "F0a F0b F0c B0c F1a B0b F1b B0a F1c B1c B1b B1a");
}

/* Peers: Megatron's layout, chunk c of rank s is global stage c p + s. */
static void peers(void **state)
{
    sim_sched s = sched(PLAN_SCHED_VIRTUAL, 4, 8, 2, 6);
    st_err err = {0};
    int ps;
    sim_op q, o = {.kind = SIM_OP_SEND_FWD, .microbatch = 5, .chunk = 0};
    assert_int_equal(sim_op_peer(&s, 3, &o, &ps, &q, &err), ST_OK); /* g 3 -> 4 */
    assert_true(ps == 0 && q.kind == SIM_OP_RECV_FWD && q.chunk == 1 && q.microbatch == 5);
    o = (sim_op){.kind = SIM_OP_SEND_BWD, .microbatch = 2, .chunk = 1}; /* g 4 -> 3 */
    assert_int_equal(sim_op_peer(&s, 0, &o, &ps, &q, &err), ST_OK);
    assert_true(ps == 3 && q.kind == SIM_OP_RECV_BWD && q.chunk == 0 && q.microbatch == 2);
    o = (sim_op){.kind = SIM_OP_RECV_BWD, .microbatch = 7, .chunk = 0}; /* g 1 <- 2 */
    assert_int_equal(sim_op_peer(&s, 1, &o, &ps, &q, &err), ST_OK);
    assert_true(ps == 2 && q.kind == SIM_OP_SEND_BWD && q.chunk == 0);

    /* no peer: the ends of the pipeline, compute ops, one rank */
    o = (sim_op){.kind = SIM_OP_SEND_FWD, .microbatch = 0, .chunk = 1}; /* g 7, the last */
    assert_int_equal(sim_op_peer(&s, 3, &o, &ps, &q, &err), ST_EINVAL);
    assert_string_equal(err.msg, "sendF of microbatch 0 chunk 1 on stage 3 has no peer");
    st_err_clear(&err);
    o = (sim_op){.kind = SIM_OP_RECV_FWD, .microbatch = 0, .chunk = 0};
    assert_int_equal(sim_op_peer(&s, 0, &o, &ps, &q, &err), ST_EINVAL);
    st_err_clear(&err);
    o = (sim_op){.kind = SIM_OP_FWD, .microbatch = 0, .chunk = 0};
    assert_int_equal(sim_op_peer(&s, 1, &o, &ps, &q, &err), ST_EINVAL);
    st_err_clear(&err);
    o = (sim_op){.kind = SIM_OP_SEND_FWD, .microbatch = 0, .chunk = 2};
    assert_int_equal(sim_op_peer(&s, 1, &o, &ps, &q, &err), ST_EINVAL);
    assert_string_equal(err.msg, "stage 1 chunk 2: outside 4 stages x 2 chunks");
    st_err_clear(&err);
    s = sched(PLAN_SCHED_VIRTUAL, 1, 4, 2, 4);
    o = (sim_op){.kind = SIM_OP_SEND_FWD, .microbatch = 0, .chunk = 0};
    assert_int_equal(sim_op_peer(&s, 0, &o, &ps, &q, &err), ST_EINVAL);
}

static void from_layout(void **state)
{
    plan_layout l;
    plan_layout_default(&l);
    l.pp = 6;
    l.microbatches = 12;
    l.active_microbatches = 8;
    l.virtual_stages = 2;
    l.schedule = PLAN_SCHED_VIRTUAL;
    sim_sched s;
    sim_sched_from_layout(&s, &l);
    assert_true(s.pp == 6 && s.microbatches == 12 && s.virtual_stages == 2 &&
                s.active_microbatches == 8 && s.schedule == PLAN_SCHED_VIRTUAL);
    st_err err = {0};
    assert_int_equal(sim_sched_check(&s, &err), ST_OK);
}

/* Play one schedule with F = 1, B = 2 (Bi = W = 1) and no transfer time:
 * the finish time in units. */
static int64_t finish(plan_schedule k, int p, int m, int v, int cap, const durs *d)
{
    sim_sched s = sched(k, p, m, v, cap);
    make(&s);
    int64_t t = play(d);
    assert_true(t > 0);
    return t;
}

/* Bubble fractions in closed form for non-trivial p, m: the finish time
 * minus the busy time m v (F + B) of a stage, over that busy time. */
static void bubble_closed_forms(void **state)
{
    static const durs unit = {.f = 1, .b = 1, .bi = 1, .w = 1}; /* F = B = W = 1 */
    static const durs fb2 = {.f = 1, .b = 2, .bi = 1, .w = 1};  /* B = 2F, Bi = W = F */
    static const int pm[][2] = {{4, 8}, {6, 12}, {8, 24}, {5, 15}};
    for (int i = 0; i < 4; i++) {
        int p = pm[i][0], m = pm[i][1];
        for (int k = 0; k < 2; k++) {
            const durs *d = k ? &fb2 : &unit;
            int64_t busy = (int64_t)m * (d->f + d->b);
            /* GPipe and 1F1B: (p - 1)/m (Huang et al. 2019; Narayanan et al. 2021) */
            int64_t t = finish(PLAN_SCHED_SIMPLE, p, m, 1, m, d);
            assert_rel((double)(t - busy) / busy, (double)(p - 1) / m, 1e-12);
            t = finish(PLAN_SCHED_INTERLEAVED, p, m, 1, p + 2, d);
            assert_rel((double)(t - busy) / busy, (double)(p - 1) / m, 1e-12);
            /* Megatron's interleaving: (p - 1)/(v m), Narayanan et al. 2021 Sec. 2.2.2 */
            for (int v = 2; v <= 3; v++) {
                if (m % p)
                    continue;
                t = finish(PLAN_SCHED_VIRTUAL, p, m, v, p + 2, d);
                assert_rel((double)(t - v * busy) / (v * busy), (double)(p - 1) / (v * m), 1e-12);
            }
            /* ZB-H1: (p - 1)(F + Bi - W) over m (F + Bi + W), Qi et al. 2023 Sec. 3.1:
             * a third of 1F1B's with F = Bi = W */
            int64_t zbusy = (int64_t)m * (d->f + d->bi + d->w);
            t = finish(PLAN_SCHED_ZB_H1, p, m, 1, p, d);
            assert_int_equal(t - zbusy, (int64_t)(p - 1) * (d->f + d->bi - d->w));
            assert_rel((double)(t - zbusy) / zbusy, (double)(p - 1) / (3.0 * m), 1e-12);
        }
    }
    /* GPipe in waves of the cap: each wave (cap + p - 1)(F + B) */
    assert_int_equal(finish(PLAN_SCHED_SIMPLE, 4, 10, 1, 4, &fb2), 3 * ((4 + 3) * 2 + (2 + 3)));
    /* 1F1B under a cap c < p, m a multiple of c: a microbatch every 3p/c
     * units, the last wave's stragglers 3 units apart: 3pm/c + 3(c - 1) */
    assert_int_equal(finish(PLAN_SCHED_INTERLEAVED, 4, 12, 1, 2, &fb2), 3 * 4 * 12 / 2 + 3);
    assert_int_equal(finish(PLAN_SCHED_INTERLEAVED, 8, 24, 1, 3, &fb2), 3 * 8 * 24 / 3 + 6);
    /* Megatron with a cap of p microbatches (p v chunks, below its own
     * (v - 1) p + 2 (p - 1) + 1): no slower */
    assert_int_equal(finish(PLAN_SCHED_VIRTUAL, 4, 16, 2, 4, &fb2),
                     finish(PLAN_SCHED_VIRTUAL, 4, 16, 2, 16, &fb2));
    assert_int_equal(finish(PLAN_SCHED_VIRTUAL, 8, 16, 4, 8, &fb2),
                     finish(PLAN_SCHED_VIRTUAL, 8, 16, 4, 16, &fb2));
}

/* Every (p, m, v, cap) of the sweep and each schedule: the structure, the
 * pairs, no deadlock (with and without transfer time), stages in order, and
 * the step time against the planner's pipeline_s() (uniform stages, F = 1,
 * B = 2): equal where the planner's formula is exact (simple always; the
 * others with m >= p and a cap that does not bind: cap >= p, and for
 * virtual cap >= p too), never slower for 1F1B. */
static void sweep(void **state)
{
    static const durs fb2 = {.f = 1, .b = 2, .bi = 1, .w = 1};
    static const durs odd = {.f = 3, .b = 5, .bi = 2, .w = 4, .comm = 1};
    long configs = 0;
    for (int k = 0; k < PLAN_SCHED__COUNT; k++)
        for (int p = 1; p <= 8; p++)
            for (int m = 1; m <= 16; m++)
                for (int v = 1; v <= (k == PLAN_SCHED_VIRTUAL ? 4 : 1); v++) {
                    if (v > 1 && m % p != 0)
                        continue;
                    for (int cap = 1; cap <= p + 2; cap++) {
                        sim_sched s = sched((plan_schedule)k, p, m, v, cap);
                        make(&s);
                        for (int st = 0; st < p; st++)
                            check_stage(&s, st, L.ops[st], L.n[st]);
                        check_pairs(&s);
                        if (play(&odd) < 0)
                            fail_msg("deadlock: %s p=%d m=%d v=%d cap=%d",
                                     plan_schedule_name(s.schedule), p, m, v, cap);
                        check_stage_order(&s, &odd);
                        int64_t t = play(&fb2);
                        assert_true(t > 0);
                        check_stage_order(&s, &fb2);
                        double T = k == PLAN_SCHED_ZB_H1 ? 3.0 : 3.0 * v;
                        double plan = planner_pipeline(&s, T);
                        int exact = k == PLAN_SCHED_SIMPLE || (m >= p && cap >= p);
                        if (exact && fabs((double)t - plan) > 1e-9)
                            fail_msg("%s p=%d m=%d v=%d cap=%d: %ld units, planner %.3f",
                                     plan_schedule_name(s.schedule), p, m, v, cap, (long)t, plan);
                        if (k == PLAN_SCHED_INTERLEAVED)
                            assert_true((double)t <= plan + 1e-9);
                        configs++;
                    }
                }
    assert_int_equal(configs, 3940);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(op_names),
        cmocka_unit_test(bad_inputs),
        cmocka_unit_test(short_buffer),
        cmocka_unit_test(lengths),
        cmocka_unit_test(known_orders),
        cmocka_unit_test(peers),
        cmocka_unit_test(from_layout),
        cmocka_unit_test(bubble_closed_forms),
        cmocka_unit_test(sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
