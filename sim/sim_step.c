/*
 * sim_step.c: one training step, played out event by event (see sim.h).
 *
 * Each pipeline rank walks its op list from the schedule generator:
 *   - a compute op (F, B, Bi, W) occupies the rank's compute stream for its
 *     duration (plan_costs, times the jitter and straggler factors);
 *   - a SEND starts a transfer on the rank's outgoing link (NVLink inside a
 *     node, its share of the node's network otherwise) and does not block;
 *   - a RECV blocks the rank until the matching transfer has arrived.
 * When a rank's last backward starts, its gradients become ready bucket by
 * bucket over that backward (with dp_overlap; otherwise all at its end) and
 * its communication stream all-reduces them one bucket after another, each
 * priced by the planner's collective model. The step ends when every rank's
 * gradients are synchronised, plus the optimizer step.
 *
 * Everything is sized before the run starts: op lists, arrival tables, link
 * tables, per-op records and the trace; the event loop allocates nothing.
 * Time is integer nanoseconds; durations are rounded to the nearest ns.
 */
#include "sim/sim.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#define NS_PER_S 1e9

/* A step of more microbatches than SIM_WINDOW_FACTOR times the second
 * window is extrapolated from two windows (see window()). The windows hold
 * SIM_WINDOW_PER_STAGE microbatches per pipeline rank: the 1F1B warm-up and
 * drain take pp - 1 each (Narayanan et al. 2021, Sec. 2.2), so a window of
 * 8 pp is three quarters steady state; a deep pipeline of many chunks gets
 * down to 2 per stage (still a steady state as long as the warm-up), so
 * the work stays bounded (SIM_WINDOW_OPS_MAX). */
#define SIM_WINDOW_PER_STAGE 8
#define SIM_WINDOW_PER_STAGE_MIN 2
#define SIM_WINDOW_OPS_MAX (1 << 19) /* (microbatch, chunk, stage) slots of the second window */
#define SIM_WINDOW_MIN 64
#define SIM_WINDOW_FACTOR 4

void sim_config_default(sim_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->seed = 1;
    cfg->straggler_stage = -1;
    cfg->straggler_factor = 1.0;
    cfg->monte_carlo = 1;
}

/* One message slot: the transfer a RECV waits for. */
typedef struct arrival {
    sim_time_ns t;               /* arrival time, -1 until it arrives */
    int32_t from_stage;          /* sender */
    int32_t from_op;             /* the compute op the sender ran before sending */
} arrival;

/* What the critical-path walk needs of each op. */
typedef struct op_rec {
    sim_time_ns start, end;      /* compute ops only */
    int32_t pred_stage;          /* -1: the previous compute op on this rank */
    int32_t pred_op;
    sim_time_ns pred_arrival;    /* when the message that released it arrived */
} op_rec;

typedef struct rank {
    int id;
    sim_op *ops;
    op_rec *rec;
    int nops, pc;
    int busy, waiting;
    int last_compute;            /* index of the last compute op run */
    sim_time_ns free_at;         /* when the compute stream last became free */
    sim_time_ns busy_ns;
    int last_bwd;                /* index of the rank's final backward-type op */
    int inflight, peak_inflight;
    /* a compute op's duration by kind where it is the same every time (no
     * jitter: op_seconds draws nothing then), else -1 */
    sim_time_ns op_ns[SIM_OP__COUNT];
    sim_link link_intra, link_net;
    sim_link_xfer *xfer;         /* storage of both links */
    sim_time_ns dp_end, compute_end;
    double dp_busy_ns;
} rank;

typedef struct run {
    const plan_costs *c;
    const sim_config *cfg;
    sim_sched sch;
    sim_engine *e;
    gsl_rng *rng;
    rank *r;
    arrival *arr;                /* [2][pp][m][v]: forward then backward messages */
    int v, m, pp;
    sim_trace_rec *trace;
    int ntrace, cap_trace;
    int ranks_done;
    sim_time_ns end_ns;
} run;

static sim_time_ns to_ns(double s)
{
    return s <= 0 ? 0 : (sim_time_ns)llround(s * NS_PER_S);
}

static arrival *slot(run *x, int bwd, int stage, int mb, int chunk)
{
    return &x->arr[(((size_t)bwd * x->pp + stage) * x->m + mb) * x->v + chunk];
}

static void trace_add(run *x, int stage, int stream, int kind, int chunk, int mb,
                      sim_time_ns a, sim_time_ns b)
{
    if (!x->trace || x->ntrace >= x->cap_trace)
        return;
    x->trace[x->ntrace++] = (sim_trace_rec){stage, (uint8_t)stream, (uint8_t)kind,
                                            (int16_t)chunk, mb, a, b};
}

static int is_compute(int kind)
{
    return kind == SIM_OP_FWD || kind == SIM_OP_BWD || kind == SIM_OP_BWD_INPUT ||
           kind == SIM_OP_BWD_WEIGHT;
}

static double op_seconds(run *x, int stage, int kind)
{
    const plan_stage_cost *sc = &x->c->stage[stage];
    double d;
    switch (kind) {
    case SIM_OP_FWD: d = sc->fwd_s; break;
    case SIM_OP_BWD: d = sc->bwd_s; break;
    case SIM_OP_BWD_INPUT: d = sc->bwd_s - sc->bwd_weight_s; break;
    default: d = sc->bwd_weight_s; break;
    }
    if (stage == x->cfg->straggler_stage)
        d *= x->cfg->straggler_factor;
    return d * sim_lognormal_factor(x->rng, x->cfg->jitter_sigma);
}

static void advance(run *x, int stage);

/* The duration of rank k's next compute op, of kind kind. */
static sim_time_ns op_duration(run *x, const rank *k, int kind)
{
    return k->op_ns[kind] >= 0 ? k->op_ns[kind] : to_ns(op_seconds(x, k->id, kind));
}

/* op_ns of rank k: fixed durations where nothing random scales them. */
static void fixed_durations(run *x, rank *k)
{
    for (int kind = 0; kind < SIM_OP__COUNT; kind++)
        k->op_ns[kind] = x->cfg->jitter_sigma == 0 && is_compute(kind)
                             ? to_ns(op_seconds(x, k->id, kind))
                             : -1;
}

/* Gradient buckets of a rank: ready from t_ready over span_ns (spread evenly,
 * as the last backward produces them), all-reduced one after another.
 * Returns how long they run inside [t_ready, t_ready + span_ns]: the
 * backward they overlap. */
static sim_time_ns dp_sync(run *x, rank *k, sim_time_ns t_ready, sim_time_ns span_ns)
{
    const plan_stage_cost *sc = &x->c->stage[k->id];
    sim_time_ns t = t_ready, inside = 0, end_span = t_ready + span_ns;
    int nb = sc->dp_buckets;
    for (int b = 0; b < nb; b++) {
        sim_time_ns ready = t_ready + (sim_time_ns)((double)span_ns * (b + 1) / nb);
        sim_time_ns start = ready > t ? ready : t;
        sim_time_ns dur = to_ns(b == nb - 1 ? sc->dp_last_bucket_s : sc->dp_bucket_s);
        trace_add(x, k->id, SIM_STREAM_DP, SIM_OP__COUNT, 0, b, start, start + dur);
        k->dp_busy_ns += (double)dur;
        if (start < end_span)
            inside += (start + dur < end_span ? start + dur : end_span) - start;
        t = start + dur;
    }
    k->dp_end = t;
    return inside;
}

static void rank_done(sim_engine *e, void *ctx, uint64_t arg)
{
    run *x = ctx;
    (void)arg;
    x->ranks_done++;
    if (sim_engine_now(e) > x->end_ns)
        x->end_ns = sim_engine_now(e);
}

static void compute_done(sim_engine *e, void *ctx, uint64_t arg)
{
    run *x = ctx;
    rank *k = &x->r[arg];
    const sim_op *op = &k->ops[k->pc];
    sim_time_ns now = sim_engine_now(e);
    k->rec[k->pc].end = now;
    k->busy_ns += now - k->rec[k->pc].start;
    trace_add(x, k->id, SIM_STREAM_COMPUTE, op->kind, op->chunk, op->microbatch,
              k->rec[k->pc].start, now);
    if (op->kind == SIM_OP_BWD || op->kind == SIM_OP_BWD_INPUT)
        k->inflight--;
    k->busy = 0;
    k->free_at = now;
    k->last_compute = k->pc;
    k->pc++;
    advance(x, k->id);
}

static void message_arrived(sim_engine *e, void *ctx, uint64_t arg)
{
    run *x = ctx;
    int bwd = (int)(arg >> 63), stage = (int)((arg >> 40) & 0x3fff);
    int chunk = (int)((arg >> 24) & 0xffff), mb = (int)(arg & 0xffffff);
    arrival *a = slot(x, bwd, stage, mb, chunk);
    a->t = sim_engine_now(e);
    if (x->r[stage].waiting)
        advance(x, stage);
}

static void start_send(run *x, rank *k, const sim_op *op)
{
    int peer_stage;
    sim_op peer;
    st_err *err = sim_engine_err(x->e);
    if (sim_op_peer(&x->sch, k->id, op, &peer_stage, &peer, err) != ST_OK)
        return;
    int bwd = op->kind == SIM_OP_SEND_BWD;
    arrival *a = slot(x, bwd, peer_stage, peer.microbatch, peer.chunk);
    a->from_stage = k->id;
    a->from_op = k->last_compute;
    int same = x->c->stage[peer_stage].node == x->c->stage[k->id].node;
    sim_link *l = same ? &k->link_intra : &k->link_net;
    uint64_t arg = ((uint64_t)bwd << 63) | ((uint64_t)peer_stage << 40) |
                   ((uint64_t)(uint16_t)peer.chunk << 24) | (uint64_t)peer.microbatch;
    sim_time_ns now = sim_engine_now(x->e);
    sim_link_start(l, x->c->p2p_bytes, message_arrived, x, arg);
    /* the trace shows the transfer's ideal span; contention stretches it
     * (worked out only for a trace: a send is one of a step's commonest ops) */
    if (!x->trace)
        return;
    double bw = same ? x->c->p2p_intra_bps : x->c->p2p_net_bps;
    trace_add(x, k->id, same ? SIM_STREAM_SEND_INTRA : SIM_STREAM_SEND_NET, op->kind, op->chunk,
              op->microbatch, now, now + to_ns(x->c->p2p_bytes / bw));
}

/* Run rank stage's ops until it starts a compute op, waits, or ends. */
static void advance(run *x, int stage)
{
    rank *k = &x->r[stage];
    if (k->busy)
        return;
    k->waiting = 0;
    sim_time_ns now = sim_engine_now(x->e);
    while (k->pc < k->nops) {
        const sim_op *op = &k->ops[k->pc];
        if (op->kind == SIM_OP_RECV_FWD || op->kind == SIM_OP_RECV_BWD) {
            arrival *a = slot(x, op->kind == SIM_OP_RECV_BWD, stage, op->microbatch, op->chunk);
            if (a->t < 0) {
                k->waiting = 1;
                return;
            }
            /* the next compute op waited for this message if it came late */
            op_rec *next = &k->rec[k->pc + 1 < k->nops ? k->pc + 1 : k->pc];
            if (a->t > k->free_at) {
                next->pred_stage = a->from_stage;
                next->pred_op = a->from_op;
                next->pred_arrival = a->t;
            }
            k->pc++;
            continue;
        }
        if (op->kind == SIM_OP_SEND_FWD || op->kind == SIM_OP_SEND_BWD) {
            start_send(x, k, op);
            k->pc++;
            continue;
        }
        /* compute */
        sim_time_ns dur = op_duration(x, k, op->kind);
        k->busy = 1;
        k->rec[k->pc].start = now;
        if (op->kind == SIM_OP_FWD && ++k->inflight > k->peak_inflight)
            k->peak_inflight = k->inflight;
        if (k->pc == k->last_bwd) {
            sim_time_ns span = x->c->dp_overlap ? dur : 0;
            sim_time_ns hidden = dp_sync(x, k, x->c->dp_overlap ? now : now + dur, span);
            /* the buckets' NCCL blocks take their SMs from this backward
             * while they run inside it (plan_costs.comm_sm_frac): it ends
             * later, and so do the buckets it makes ready */
            sim_time_ns slow = (sim_time_ns)llround(x->c->comm_sm_frac * (double)hidden);
            dur += slow;
            k->dp_end += slow;
        }
        sim_engine_schedule(x->e, now + dur, compute_done, x, (uint64_t)stage, NULL);
        return;
    }
    /* all ops done: the rank is finished once its gradients are synchronised */
    if (k->compute_end == 0 && k->nops > 0) {
        k->compute_end = now;
        if (k->dp_end < now)
            k->dp_end = now;
        sim_engine_schedule(x->e, k->dp_end, rank_done, x, (uint64_t)stage, NULL);
    }
}

/* ---- setup and teardown ---- */

static void run_free(run *x)
{
    if (x->r) {
        for (int i = 0; i < x->pp; i++) {
            free(x->r[i].ops);
            free(x->r[i].rec);
            free(x->r[i].xfer);
        }
        free(x->r);
    }
    free(x->arr);
    sim_engine_free(x->e);
    if (x->rng)
        gsl_rng_free(x->rng);
}

static int run_setup(run *x, const plan_costs *c, const sim_config *cfg, uint64_t seed, st_err *err)
{
    memset(x, 0, sizeof *x);
    x->c = c;
    x->cfg = cfg;
    x->sch = (sim_sched){c->pp, c->microbatches, c->virtual_stages, c->active_microbatches,
                         c->schedule};
    int rc = sim_sched_check(&x->sch, err);
    if (rc)
        return rc;
    x->pp = c->pp;
    x->m = c->microbatches;
    x->v = c->virtual_stages;
    size_t nslots = 2 * (size_t)x->pp * x->m * x->v;
    /* per rank: at most one compute event, plus one latency event per
     * transfer and one completion event per link; a rank_done event */
    size_t max_events = (size_t)x->pp * (4 + 4 * (size_t)x->m * x->v) + 16;
    x->arr = malloc(nslots * sizeof *x->arr);
    x->r = calloc((size_t)x->pp, sizeof *x->r);
    if (!x->arr || !x->r)
        return ST_RAISE(err, ST_ENOMEM, "simulator: cannot allocate %zu message slots", nslots);
    for (size_t i = 0; i < nslots; i++)
        x->arr[i] = (arrival){-1, -1, -1};
    if ((rc = sim_engine_new(max_events, &x->e, err)) || (rc = sim_rng_new(seed, &x->rng, err)))
        return rc;
    int max_xfer = 2 * x->m * x->v + 2;
    for (int i = 0; i < x->pp; i++) {
        rank *k = &x->r[i];
        k->id = i;
        k->last_compute = -1;
        fixed_durations(x, k);
        k->nops = sim_sched_len(&x->sch, i);
        k->ops = malloc((size_t)k->nops * sizeof *k->ops);
        k->rec = malloc((size_t)k->nops * sizeof *k->rec);
        k->xfer = malloc(2 * (size_t)max_xfer * sizeof *k->xfer);
        if (!k->ops || !k->rec || !k->xfer)
            return ST_RAISE(err, ST_ENOMEM, "simulator: cannot allocate rank %d's ops", i);
        if ((rc = sim_sched_ops(&x->sch, i, k->ops, k->nops, NULL, err)))
            return rc;
        for (int j = 0; j < k->nops; j++) /* one pass over them: no calloc's before it */
            k->rec[j] = (op_rec){.pred_stage = -1};
        k->last_bwd = -1;
        for (int j = k->nops - 1; j >= 0 && k->last_bwd < 0; j--)
            if (is_compute(k->ops[j].kind) && k->ops[j].kind != SIM_OP_FWD)
                k->last_bwd = j;
        if ((rc = sim_link_init(&k->link_intra, x->e, c->p2p_intra_bps, to_ns(c->intra_latency_s),
                                max_xfer, k->xfer, err)) ||
            (rc = sim_link_init(&k->link_net, x->e, c->p2p_net_bps, to_ns(c->net_latency_s),
                                max_xfer, k->xfer + max_xfer, err)))
            return rc;
    }
    return ST_OK;
}

/* ---- results ---- */

static void critical_path(run *x, sim_result *out)
{
    /* the rank that finished last */
    int s = 0;
    for (int i = 1; i < x->pp; i++)
        if (x->r[i].dp_end > x->r[s].dp_end)
            s = i;
    rank *k = &x->r[s];
    int op = k->last_compute;
    out->critical_tail_s = (double)(x->end_ns - (op >= 0 ? k->rec[op].end : 0)) / NS_PER_S;
    unsigned char *seen = calloc((size_t)x->pp, 1);
    while (op >= 0) {
        op_rec *rc = &k->rec[op];
        out->critical_compute_s += (double)(rc->end - rc->start) / NS_PER_S;
        out->critical_ops++;
        if (seen && !seen[s]) {
            seen[s] = 1;
            out->critical_stages++;
        }
        if (rc->pred_stage >= 0 && rc->pred_op >= 0) {
            rank *from = &x->r[rc->pred_stage];
            out->critical_transfer_s += (double)(rc->start - from->rec[rc->pred_op].end) / NS_PER_S;
            s = rc->pred_stage;
            k = from;
            op = rc->pred_op;
            continue;
        }
        /* the previous compute op on this rank */
        int j = op - 1;
        while (j >= 0 && !is_compute(k->ops[j].kind))
            j--;
        op = j;
    }
    free(seen);
}

static void stage_stats(run *x, sim_result *out, sim_time_ns span)
{
    double busy_sum = 0;
    for (int i = 0; i < x->pp; i++) {
        rank *k = &x->r[i];
        sim_stage_stats *st = &out->stage[i];
        st->busy_s = (double)k->busy_ns / NS_PER_S;
        st->bubble_fraction = k->busy_ns > 0 ? (double)(span - k->busy_ns) / (double)k->busy_ns : 0.0;
        st->peak_inflight = k->peak_inflight;
        st->peak_act_bytes = k->peak_inflight * x->c->stage[i].act_bytes;
        st->peak_mem_bytes = x->c->stage[i].static_bytes + st->peak_act_bytes;
        st->send_busy_s = (double)(sim_link_busy_ns(&k->link_intra) +
                                   sim_link_busy_ns(&k->link_net)) / NS_PER_S;
        st->dp_busy_s = k->dp_busy_ns / NS_PER_S;
        st->dp_exposed_s = (double)(k->dp_end - k->compute_end) / NS_PER_S;
        busy_sum += (double)k->busy_ns;
        if (st->busy_s > out->compute_bound_s)
            out->compute_bound_s = st->busy_s;
        if (st->send_busy_s > out->comm_bound_s)
            out->comm_bound_s = st->send_busy_s;
    }
    out->bubble_fraction = busy_sum > 0 ? ((double)x->pp * (double)span - busy_sum) / busy_sum : 0.0;
}

/* One step with one seed; fills the first-step fields of out when first. */
static int one_step(const plan_costs *c, const sim_config *cfg, uint64_t seed, int first,
                    sim_result *out, double *step_s, st_err *err)
{
    run x;
    int rc = run_setup(&x, c, cfg, seed, err);
    if (rc == ST_OK && first && cfg->keep_trace) {
        size_t cap = 0;
        for (int i = 0; i < x.pp; i++)
            cap += (size_t)x.r[i].nops + (size_t)c->stage[i].dp_buckets + 1;
        x.trace = malloc(cap * sizeof *x.trace);
        x.cap_trace = (int)cap;
        if (!x.trace)
            rc = ST_RAISE(err, ST_ENOMEM, "simulator: cannot allocate a trace of %zu ops", cap);
    }
    for (int i = 0; rc == ST_OK && i < x.pp; i++)
        advance(&x, i);
    if (rc == ST_OK)
        rc = sim_engine_run(x.e, SIM_TIME_MAX, NULL);
    if (rc != ST_OK) {
        if (err && !err->code && sim_engine_err(x.e)->code)
            *err = *sim_engine_err(x.e);
        free(x.trace);
        run_free(&x);
        return rc;
    }
    if (x.ranks_done != x.pp) {
        free(x.trace);
        run_free(&x);
        return ST_RAISE(err, ST_EINTERNAL, "simulator: the schedule stalled (%d of %d ranks done)",
                        x.ranks_done, x.pp);
    }
    sim_time_ns opt = to_ns(c->optimizer_s);
    *step_s = (double)(x.end_ns + opt) / NS_PER_S;
    if (first) {
        sim_time_ns span = 0;
        for (int i = 0; i < x.pp; i++)
            if (x.r[i].compute_end > span)
                span = x.r[i].compute_end;
        out->pipeline_s = (double)span / NS_PER_S;
        out->events = sim_engine_events(x.e);
        stage_stats(&x, out, span);
        critical_path(&x, out);
        out->critical_tail_s += (double)opt / NS_PER_S;
        out->trace = x.trace;
        out->ntrace = x.ntrace;
    } else {
        free(x.trace);
    }
    run_free(&x);
    return ST_OK;
}

/* Every step of cfg (seeds seed, seed + 1, ...) of the layout c: the first
 * step's figures in out, each step's time in t[monte_carlo]. */
static int run_steps(const plan_costs *c, const sim_config *cfg, sim_result *out, double *t,
                     st_err *err)
{
    memset(out, 0, sizeof *out);
    out->pp = c->pp;
    out->planner_step_s = c->planner_step_s;
    out->microbatches = c->microbatches;
    int rc = ST_OK;
    for (int i = 0; i < cfg->monte_carlo && rc == ST_OK; i++) {
        rc = one_step(c, cfg, cfg->seed + (uint64_t)i, i == 0, out, &t[i], err);
        if (cfg->progress && cfg->monte_carlo > 1)
            cfg->progress(cfg->progress_ctx, i + 1, cfg->monte_carlo);
    }
    if (rc != ST_OK)
        sim_result_fini(out);
    return rc;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The two windows of microbatches simulated for a step of m (0 when the
 * whole step is simulated). A window must hold the pipeline's warm-up and
 * drain and steady state between them: SIM_WINDOW_PER_STAGE microbatches
 * per pipeline rank, at least SIM_WINDOW_MIN. The steady state repeats with
 * a period of the cap on microbatches in flight (SMP's active
 * microbatches admit them in groups) and of pp (virtual stages go round
 * the pipeline in groups of pp), so the base W is a multiple of both when
 * that is not much longer, else of pp, and the windows are W + r and
 * 2W + r with r = m mod W: m is the second window plus whole periods. */
static int window(const plan_costs *c, int *w1, int *w2)
{
    /* fewer per stage for a deep pipeline of many chunks, so the second
     * window's ops (pp x v x 2 base) stay within SIM_WINDOW_OPS_MAX */
    int64_t per_stage = SIM_WINDOW_PER_STAGE;
    while (per_stage > SIM_WINDOW_PER_STAGE_MIN &&
           (int64_t)c->pp * c->virtual_stages * 2 * per_stage * c->pp > SIM_WINDOW_OPS_MAX)
        per_stage /= 2;
    int64_t base = per_stage * (int64_t)c->pp;
    if (base < SIM_WINDOW_MIN)
        base = SIM_WINDOW_MIN;
    int64_t cap = c->active_microbatches < c->microbatches ? c->active_microbatches
                                                          : c->microbatches;
    if (cap < 1)
        cap = 1;
    int64_t period = c->pp / gcd64(c->pp, cap) * cap;
    if (period > 4 * base)
        period = c->pp;
    int64_t w = (base + period - 1) / period * period;
    int64_t r = c->microbatches % w;
    if ((2 * w + r) * SIM_WINDOW_FACTOR > c->microbatches)
        return 0;
    *w1 = (int)(w + r);
    *w2 = (int)(2 * w + r);
    return 1;
}

/* a at m microbatches on the line through (m1, a1) and (m2, a2) */
static double line(double a1, double a2, int m1, int m2, int m)
{
    return a2 + (a2 - a1) * (double)(m - m2) / (double)(m2 - m1);
}

/* A step of m microbatches from the windows r1 (m1, with the trace) and r2
 * (m2): every figure that grows with the microbatches grows on the line
 * through the two (the steady state adds the same time per microbatch);
 * what happens once per step (the gradient sync past the last backward,
 * the optimizer, the ranks on the critical path) is r2's. */
static void extrapolate(const plan_costs *c, sim_result *r1, const sim_result *r2, int m1,
                        int m2, sim_result *out)
{
    int m = c->microbatches;
    *out = *r2;
    out->microbatches = m;
    out->window_microbatches[0] = m1;
    out->window_microbatches[1] = m2;
    out->trace = r1->trace; /* the smaller window's ops, handed over */
    out->ntrace = r1->ntrace;
    r1->trace = NULL;
    r1->ntrace = 0;
    out->pipeline_s = line(r1->pipeline_s, r2->pipeline_s, m1, m2, m);
    double ev = line((double)r1->events, (double)r2->events, m1, m2, m);
    out->events = ev > 0 ? (uint64_t)llround(ev) : 0;
    out->compute_bound_s = out->comm_bound_s = 0;
    double busy_sum = 0;
    for (int i = 0; i < c->pp; i++) {
        const sim_stage_stats *a = &r1->stage[i], *b = &r2->stage[i];
        sim_stage_stats *s = &out->stage[i];
        s->busy_s = line(a->busy_s, b->busy_s, m1, m2, m);
        s->send_busy_s = line(a->send_busy_s, b->send_busy_s, m1, m2, m);
        double peak = line(a->peak_inflight, b->peak_inflight, m1, m2, m);
        s->peak_inflight = peak > m ? m : (int)llround(peak);
        s->peak_act_bytes = s->peak_inflight * c->stage[i].act_bytes;
        s->peak_mem_bytes = c->stage[i].static_bytes + s->peak_act_bytes;
        s->bubble_fraction = s->busy_s > 0 ? (out->pipeline_s - s->busy_s) / s->busy_s : 0.0;
        busy_sum += s->busy_s;
        if (s->busy_s > out->compute_bound_s)
            out->compute_bound_s = s->busy_s;
        if (s->send_busy_s > out->comm_bound_s)
            out->comm_bound_s = s->send_busy_s;
    }
    out->bubble_fraction = busy_sum > 0 ? (c->pp * out->pipeline_s - busy_sum) / busy_sum : 0.0;
    out->critical_compute_s = line(r1->critical_compute_s, r2->critical_compute_s, m1, m2, m);
    out->critical_transfer_s = line(r1->critical_transfer_s, r2->critical_transfer_s, m1, m2, m);
    double ops = line(r1->critical_ops, r2->critical_ops, m1, m2, m);
    out->critical_ops = ops > INT32_MAX ? INT32_MAX : (int)llround(ops);
}

int sim_step_run(const plan_costs *c, const sim_config *cfg, sim_result *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    out->pp = c->pp;
    out->planner_step_s = c->planner_step_s;
    out->microbatches = c->microbatches;
    if (cfg->monte_carlo < 1 || cfg->jitter_sigma < 0 || !isfinite(cfg->jitter_sigma) ||
        (cfg->straggler_stage >= 0 && !(cfg->straggler_factor >= 1.0)))
        return ST_RAISE(err, ST_EINVAL,
                        "simulate: steps must be >= 1, jitter >= 0 and a straggler factor >= 1");
    if (cfg->straggler_stage >= c->pp)
        return ST_RAISE(err, ST_EINVAL, "simulate: straggler stage %d: allowed 0 to %d",
                        cfg->straggler_stage, c->pp - 1);
    if (c->microbatches < 1)
        return ST_RAISE(err, ST_EINVAL, "simulate: microbatches %d: must be at least 1",
                        c->microbatches);
    int n = cfg->monte_carlo;
    double *t = malloc(2 * (size_t)n * sizeof *t);
    if (!t)
        return ST_RAISE(err, ST_ENOMEM, "simulate: cannot allocate %d step times", n);
    int rc, m1, m2;
    if (cfg->whole_step || !window(c, &m1, &m2)) {
        rc = run_steps(c, cfg, out, t, err);
    } else {
        /* A long step (a large batch): two windows of its microbatches are
         * played out and the step is extrapolated from them, so the work is
         * bounded by the pipeline's depth, not by the batch. */
        plan_costs *w = malloc(sizeof *w);
        sim_result *r = calloc(2, sizeof *r);
        rc = w && r ? ST_OK : ST_RAISE(err, ST_ENOMEM, "simulate: out of memory");
        sim_config one = *cfg;
        if (rc == ST_OK) {
            *w = *c;
            w->microbatches = m1;
            rc = run_steps(w, &one, &r[0], t, err);
        }
        if (rc == ST_OK) {
            w->microbatches = m2;
            one.keep_trace = 0;
            rc = run_steps(w, &one, &r[1], t + n, err);
        }
        if (rc == ST_OK) {
            for (int i = 0; i < n; i++)
                t[i] = line(t[i], t[n + i], m1, m2, c->microbatches);
            extrapolate(c, &r[0], &r[1], m1, m2, out);
        }
        if (r) {
            sim_result_fini(&r[0]);
            sim_result_fini(&r[1]);
        }
        free(r);
        free(w);
    }
    if (rc == ST_OK) {
        out->steps = n;
        out->step_s = gsl_stats_mean(t, 1, (size_t)n);
        gsl_sort(t, 1, (size_t)n);
        out->p50_s = gsl_stats_quantile_from_sorted_data(t, 1, (size_t)n, 0.50);
        out->p95_s = gsl_stats_quantile_from_sorted_data(t, 1, (size_t)n, 0.95);
        out->p99_s = gsl_stats_quantile_from_sorted_data(t, 1, (size_t)n, 0.99);
    } else {
        sim_result_fini(out);
    }
    free(t);
    return rc;
}

void sim_result_fini(sim_result *r)
{
    if (!r)
        return;
    free(r->trace);
    r->trace = NULL;
    r->ntrace = 0;
}

int sim_layout_run(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                   const sim_config *cfg, sim_result *out, st_err *err)
{
    plan_costs *costs = malloc(sizeof *costs);
    if (!costs)
        return ST_RAISE(err, ST_ENOMEM, "simulate: out of memory");
    int rc = plan_costs_compute(m, c, l, costs, err);
    if (rc == ST_OK)
        rc = sim_step_run(costs, cfg, out, err);
    free(costs);
    return rc;
}
