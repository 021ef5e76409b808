/*
 * sim_schedule.c: the pipeline schedule generator (see sim_schedule.h for
 * the contract an op list carries).
 *
 * Every schedule is an order of compute ops on a stage; fwd() and bwd() wrap
 * each compute op in the receive it needs and the send it produces, so the
 * communication rules live in one place. The generator writes into the
 * caller's buffer through an emitter that counts past the end (one pass both
 * fills and measures, and tracks the peak in flight) and allocates nothing.
 *
 * Sources:
 *   simple       GPipe, Huang et al. 2019, Sec. 2.2: all forwards of a batch,
 *                then all backwards; SMP's active_microbatches (SageMaker
 *                model parallelism docs: the most microbatches in process at
 *                once) splits the m microbatches into waves. Backwards run in
 *                ascending microbatch order, as PyTorch's
 *                torch.distributed.pipelining ScheduleGPipe does, so every
 *                schedule here is first-in first-out per chunk.
 *   interleaved  SMP's "interleaved" pipeline (docs: backward first whenever
 *                possible), i.e. PipeDream-Flush / 1F1B, Narayanan et al.
 *                2021, Sec. 2.2.1: stage s runs pp - s - 1 warm-up forwards,
 *                then one forward one backward, then the cool-down
 *                backwards. Under a cap below pp the order of a timeline in
 *                which cap microbatches circulate (gen_timeline).
 *   virtual      Megatron-LM schedules.py, forward_backward_pipelining_with_
 *                interleaving (Narayanan et al. 2021, Sec. 2.2.2): the k-th
 *                forward is chunk (k / pp) % v of microbatch
 *                (k / (pp v)) pp + k % pp, the k-th backward the same
 *                microbatch of chunk v - 1 - (k / pp) % v; warm-up
 *                2 (pp - s - 1) + (v - 1) pp forwards. Megatron's special case
 *                "m == pp: all forwards first" is not taken: it holds more
 *                than the planner's in-flight count and saves no time (the
 *                tests check the planner's step time without it).
 *   zb-h1        Qi et al. 2023, "Zero Bubble Pipeline Parallelism", Sec. 3.1
 *                and Fig. 3: 1F1B in which B is split into Bi (input
 *                gradient, sent on at once) and W (weight gradient); stage s
 *                holds back its first s W passes to fill its cool-down
 *                bubble, so the bubble falls from (p - 1)(F + B + W) to
 *                (p - 1)(F + B - W) at the same peak memory (p microbatches
 *                on stage 0). The order follows PaddlePaddle's ZBH1 pass
 *                (pipeline_zero_bubble.py) with Bi and W always separate.
 */
#include "sim/sim_schedule.h"

#include <stddef.h>

/* Writes ops into a buffer of cap entries and counts every op, also those
 * past the end; tracks the (microbatch, chunk) pairs in flight. */
typedef struct emitter {
    const sim_sched *s;
    int stage;
    sim_op *ops;
    int cap;
    int n;
    int live, peak; /* in flight now, most in flight */
} emitter;

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static void put(emitter *e, sim_op_kind kind, int mb, int chunk)
{
    if (e->n < e->cap)
        e->ops[e->n] = (sim_op){.kind = (uint8_t)kind, .microbatch = mb, .chunk = (int16_t)chunk};
    e->n++;
    if (kind == SIM_OP_FWD && ++e->live > e->peak)
        e->peak = e->live;
    else if (kind == SIM_OP_BWD || kind == SIM_OP_BWD_INPUT)
        e->live--;
}

/* Global virtual stage of a chunk on e's stage, and whether it has a
 * neighbour before / after it on another rank. */
static int gstage(const emitter *e, int chunk)
{
    return chunk * e->s->pp + e->stage;
}

static int has_prev(const emitter *e, int chunk)
{
    return e->s->pp > 1 && gstage(e, chunk) > 0;
}

static int has_next(const emitter *e, int chunk)
{
    return e->s->pp > 1 && gstage(e, chunk) < e->s->pp * e->s->virtual_stages - 1;
}

static void fwd(emitter *e, int mb, int chunk)
{
    if (has_prev(e, chunk))
        put(e, SIM_OP_RECV_FWD, mb, chunk);
    put(e, SIM_OP_FWD, mb, chunk);
    if (has_next(e, chunk))
        put(e, SIM_OP_SEND_FWD, mb, chunk);
}

/* How a backward is emitted. */
enum { BWD_FULL, BWD_SPLIT, BWD_INPUT_ONLY };

/* A full backward; or zero bubble's Bi (its gradient sent on at once)
 * followed by W (BWD_SPLIT), or with W left for later (BWD_INPUT_ONLY). */
static void bwd(emitter *e, int how, int mb, int chunk)
{
    if (has_next(e, chunk))
        put(e, SIM_OP_RECV_BWD, mb, chunk);
    put(e, how == BWD_FULL ? SIM_OP_BWD : SIM_OP_BWD_INPUT, mb, chunk);
    if (has_prev(e, chunk))
        put(e, SIM_OP_SEND_BWD, mb, chunk);
    if (how == BWD_SPLIT)
        put(e, SIM_OP_BWD_WEIGHT, mb, chunk);
}

/* ---- simple (GPipe in waves of the cap) ---- */

static void gen_simple(emitter *e)
{
    int m = e->s->microbatches, w = imin(e->s->active_microbatches, m);
    for (int a = 0; a < m; a += w) {
        int end = imin(a + w, m);
        for (int mb = a; mb < end; mb++)
            fwd(e, mb, 0);
        for (int mb = a; mb < end; mb++)
            bwd(e, BWD_FULL, mb, 0);
    }
}

/* ---- backward first under a cap: the order of a nominal timeline ---- */

/*
 * One timeline of the whole pipeline, in units where a chunk's forward takes
 * 1 and its backward 2 (the usual B = 2F: a backward runs two GEMMs per
 * forward GEMM); each stage runs its ops in the order they start on it,
 * backward first on ties. Every dependency of an op (the previous global
 * stage's forward, the next one's backward, its own forward) starts strictly
 * earlier on this timeline, so the stages' orders can never deadlock,
 * whatever the real durations: a wait cycle would have to go back in time.
 *
 * Microbatch j enters global virtual stage 0 at admit(j): waves of
 * c = min(cap, pp) microbatches, 3v apart (one microbatch's work on a rank),
 * a wave every round trip 3 pp v (the first of the previous wave is back and
 * frees its place). Its forward on global virtual stage g starts at
 * admit(j) + g, its backward there, when its gradient is back, at
 * admit(j) + 3 P - 2 - 2 g with P = pp v. Stage s then holds at most
 * min(pp - s, cap, m) microbatches in flight (v = 1), or at most cap v
 * chunks, within the planner's inflight() (v > 1; checked over a sweep in
 * the tests).
 *
 * With v = 1 no two ops of a stage overlap (forwards start at s, backwards at
 * s + 1 mod 3 within a wave), so with F = 1, B = 2 the stages run it as
 * written: for cap >= pp it is 1F1B exactly (warm-up pp - s - 1, then one
 * forward one backward; Narayanan et al. 2021, Sec. 2.2.1), in (m + pp - 1) 3
 * units; for cap < pp a microbatch starts every 3 pp / cap units, the cap's
 * bound (cap microbatches per round trip), which a 1F1B merely cut short at
 * cap - 1 warm-up forwards misses by up to 50 %. With v > 1 the timeline is
 * a feasible order, not a tight one (see gen_virtual).
 */
static int64_t admit(const sim_sched *s, int j)
{
    int64_t c = imin(s->active_microbatches, s->pp), v = s->virtual_stages;
    return (int64_t)(j / c) * 3 * s->pp * v + 3 * v * (j % c);
}

static int64_t fwd_start(const emitter *e, int mb, int chunk)
{
    return admit(e->s, mb) + gstage(e, chunk);
}

static int64_t bwd_start(const emitter *e, int mb, int chunk)
{
    int64_t P = (int64_t)e->s->pp * e->s->virtual_stages;
    return admit(e->s, mb) + 3 * P - 2 - 2 * (int64_t)gstage(e, chunk);
}

/* The stage's ops in timeline order: a merge of its v forward and v backward
 * streams, each in microbatch order. O(v) per op. */
static void gen_timeline(emitter *e, int how)
{
    int m = e->s->microbatches, v = e->s->virtual_stages;
    int nf[SIM_SCHED_MAX_VIRTUAL] = {0}, nb[SIM_SCHED_MAX_VIRTUAL] = {0};
    for (int left = 2 * m * v; left > 0; left--) {
        int back = 0, chunk = -1;
        int64_t best = 0;
        for (int c = 0; c < v; c++) /* a backward wins a tie */
            if (nb[c] < nf[c] && (chunk < 0 || bwd_start(e, nb[c], c) < best)) {
                back = 1, chunk = c, best = bwd_start(e, nb[c], c);
            }
        for (int c = 0; c < v; c++)
            if (nf[c] < m && (chunk < 0 || fwd_start(e, nf[c], c) < best)) {
                back = 0, chunk = c, best = fwd_start(e, nf[c], c);
            }
        if (back)
            bwd(e, how, nb[chunk]++, chunk);
        else
            fwd(e, nf[chunk]++, chunk);
    }
}

/* ---- virtual (Megatron's interleaved 1F1B) ---- */

/* Megatron's warm-up forwards on stage: 2 (pp - s - 1) + (v - 1) pp, all of
 * them when fewer. A cap too low for that (only with cap >= pp, see
 * gen_virtual) cuts it to cap v - 1 - s: one forward less per stage is the
 * least slope that keeps the 1F1B rhythm. In the steady state stage s runs
 * F(w_s + j) then B(j) every 3 units (F = 1, B = 2), and stage s + 1 gets
 * its forward input and stage s its gradient in time iff w_s >= w_{s+1} + 1;
 * a cut to a flat cap v - 1 stalls (p = 4, v = 2, m = 16, cap = 4: 175 units
 * instead of 105). As cap >= pp, the cut keeps at least (v - 1) pp + pp - 1 - s
 * forwards, more than the (v - 1) pp the first backward needs. */
static int warmup_virtual(const sim_sched *s, int stage)
{
    int v = s->virtual_stages, total = s->microbatches * v;
    int w = imin(2 * (s->pp - stage - 1) + (v - 1) * s->pp, total);
    if (s->active_microbatches < s->microbatches)
        w = imin(w, s->active_microbatches * v - 1 - stage);
    return w;
}

/* The k-th forward (backward) of Megatron's order: groups of pp
 * microbatches, each run through chunk 0, 1, ..., v - 1 (backward: v - 1,
 * ..., 0). A last group of m % pp microbatches (only with v = 1, as v > 1
 * needs m % pp == 0) is handled as Megatron-Core's get_schedule_table does. */
static void virtual_op(const sim_sched *s, int k, int forward, int *mb, int *chunk)
{
    int g = s->pp, m = s->microbatches, v = s->virtual_stages;
    int span = g * v, full = m / g, r = m % g;
    if (k < full * span) {
        *chunk = (k % span) / g;
        *mb = (k / span) * g + k % g;
    } else {
        int o = k - full * span;
        *chunk = o / r;
        *mb = full * g + o % r;
    }
    if (!forward)
        *chunk = v - 1 - *chunk;
}

static void vfwd(emitter *e, int k)
{
    int mb, chunk;
    virtual_op(e->s, k, 1, &mb, &chunk);
    fwd(e, mb, chunk);
}

static void vbwd(emitter *e, int k)
{
    int mb, chunk;
    virtual_op(e->s, k, 0, &mb, &chunk);
    bwd(e, BWD_FULL, mb, chunk);
}

/* Megatron's order when the cap is at least pp (its warm-up cut to the cap
 * as warmup_virtual says, which cost no time against the planner's
 * pipeline_s() anywhere in the tests' sweeps); below pp the timeline order
 * (gen_timeline). Megatron's order cannot serve a cap below pp: with groups
 * of g microbatches per chunk its first backward needs (v - 1) g + 1
 * forwards, so g would have to drop below pp - 1, and such orders deadlock
 * (rank 0 waits for the last rank's previous chunk while that rank waits
 * for a gradient from rank 0; found by sweeping). */
static void gen_virtual(emitter *e)
{
    if (e->s->active_microbatches < e->s->pp) {
        gen_timeline(e, BWD_FULL);
        return;
    }
    int total = e->s->microbatches * e->s->virtual_stages, w = warmup_virtual(e->s, e->stage);
    for (int k = 0; k < w; k++)
        vfwd(e, k);
    for (int j = 0; j < total - w; j++) {
        vfwd(e, w + j);
        vbwd(e, j);
    }
    for (int j = total - w; j < total; j++)
        vbwd(e, j);
}

/* ---- zb-h1 (Qi et al. 2023) ---- */

/* Stage s: min(pp - s, m) forwards, then s times Bi + F with W held back,
 * then Bi + W + F, then the cool-down Bi + W, then the s held-back W
 * (PaddlePaddle's ZBH1 order). Under a cap below pp the timeline order with
 * each W right after its Bi: holding back W needs the full pipeline. */
static void gen_zb_h1(emitter *e)
{
    const sim_sched *s = e->s;
    if (s->active_microbatches < s->pp) {
        gen_timeline(e, BWD_SPLIT);
        return;
    }
    int m = s->microbatches, w = imin(s->pp - e->stage, m), d = imin(e->stage, m - w);
    for (int k = 0; k < w; k++)
        fwd(e, k, 0);
    for (int j = 0; j < m - w; j++) {
        bwd(e, j < d ? BWD_INPUT_ONLY : BWD_SPLIT, j, 0);
        fwd(e, w + j, 0);
    }
    for (int j = m - w; j < m; j++)
        bwd(e, BWD_SPLIT, j, 0);
    for (int j = 0; j < d; j++)
        put(e, SIM_OP_BWD_WEIGHT, j, 0);
}

/* ---- public ---- */

void sim_sched_from_layout(sim_sched *s, const plan_layout *l)
{
    s->pp = l->pp;
    s->microbatches = l->microbatches;
    s->virtual_stages = l->virtual_stages;
    s->active_microbatches = l->active_microbatches;
    s->schedule = l->schedule;
}

int sim_sched_check(const sim_sched *s, st_err *err)
{
    if (s->pp < 1 || s->pp > PLAN_PP_MAX)
        return ST_RAISE(err, ST_EINVAL, "pipeline degree %d: must be in 1..%d", s->pp,
                        PLAN_PP_MAX);
    if (s->microbatches < 1 || s->microbatches > SIM_SCHED_MAX_MICROBATCHES)
        return ST_RAISE(err, ST_EINVAL, "microbatches %d: must be in 1..%d", s->microbatches,
                        SIM_SCHED_MAX_MICROBATCHES);
    if (s->virtual_stages < 1 || s->virtual_stages > SIM_SCHED_MAX_VIRTUAL)
        return ST_RAISE(err, ST_EINVAL, "virtual stages %d: must be in 1..%d",
                        s->virtual_stages, SIM_SCHED_MAX_VIRTUAL);
    if (s->active_microbatches < 1)
        return ST_RAISE(err, ST_EINVAL, "active microbatches %d: must be at least 1",
                        s->active_microbatches);
    if ((unsigned)s->schedule >= PLAN_SCHED__COUNT)
        return ST_RAISE(err, ST_EINVAL,
                        "schedule %d: unknown (simple, interleaved, virtual or zb-h1)",
                        (int)s->schedule);
    if (s->virtual_stages > 1 && s->schedule != PLAN_SCHED_VIRTUAL)
        return ST_RAISE(err, ST_EINVAL, "virtual stages %d need the virtual schedule, not %s",
                        s->virtual_stages, plan_schedule_name(s->schedule));
    if (s->virtual_stages > 1 && s->microbatches % s->pp != 0)
        return ST_RAISE(err, ST_EINVAL,
                        "microbatches %d must be a multiple of pp %d for virtual stages",
                        s->microbatches, s->pp);
    return ST_OK;
}

int sim_sched_len(const sim_sched *s, int stage)
{
    if (sim_sched_check(s, NULL) != ST_OK || stage < 0 || stage >= s->pp)
        return -1;
    emitter e = {.s = s, .stage = stage};
    int compute = s->schedule == PLAN_SCHED_ZB_H1 ? 3 : 2, per_mb = 0;
    for (int c = 0; c < s->virtual_stages; c++)
        per_mb += compute + 2 * has_prev(&e, c) + 2 * has_next(&e, c);
    return s->microbatches * per_mb;
}

/* Runs the schedule's generator into e. */
static void generate(emitter *e)
{
    switch (e->s->schedule) {
    case PLAN_SCHED_SIMPLE:
        gen_simple(e);
        break;
    case PLAN_SCHED_VIRTUAL:
        gen_virtual(e);
        break;
    case PLAN_SCHED_ZB_H1:
        gen_zb_h1(e);
        break;
    case PLAN_SCHED_INTERLEAVED:
    default:
        gen_timeline(e, BWD_FULL);
        break;
    }
}

int sim_sched_ops(const sim_sched *s, int stage, sim_op *ops, int cap, int *n, st_err *err)
{
    int rc = sim_sched_check(s, err);
    if (rc != ST_OK)
        return rc;
    if (stage < 0 || stage >= s->pp)
        return ST_RAISE(err, ST_EINVAL, "stage %d: must be in 0..%d", stage, s->pp - 1);
    emitter e = {.s = s, .stage = stage, .ops = ops, .cap = ops && cap > 0 ? cap : 0};
    generate(&e);
    if (n)
        *n = e.n;
    if (e.n > e.cap)
        return ST_RAISE(err, ST_ERANGE, "stage %d runs %d ops, the buffer holds %d", stage, e.n,
                        cap);
    return ST_OK;
}

int sim_op_peer(const sim_sched *s, int stage, const sim_op *op, int *peer_stage, sim_op *peer,
                st_err *err)
{
    int rc = sim_sched_check(s, err);
    if (rc != ST_OK)
        return rc;
    if (stage < 0 || stage >= s->pp || op->chunk < 0 || op->chunk >= s->virtual_stages)
        return ST_RAISE(err, ST_EINVAL, "stage %d chunk %d: outside %d stages x %d chunks",
                        stage, (int)op->chunk, s->pp, s->virtual_stages);
    emitter e = {.s = s, .stage = stage};
    int fwd_dir = op->kind == SIM_OP_SEND_FWD || op->kind == SIM_OP_RECV_FWD;
    int to_next = op->kind == SIM_OP_SEND_FWD || op->kind == SIM_OP_RECV_BWD;
    int to_prev = op->kind == SIM_OP_RECV_FWD || op->kind == SIM_OP_SEND_BWD;
    if (!(to_next && has_next(&e, op->chunk)) && !(to_prev && has_prev(&e, op->chunk)))
        return ST_RAISE(err, ST_EINVAL, "%s of microbatch %d chunk %d on stage %d has no peer",
                        sim_op_name((sim_op_kind)op->kind), (int)op->microbatch,
                        (int)op->chunk, stage);
    int kind;
    if (fwd_dir)
        kind = op->kind == SIM_OP_SEND_FWD ? SIM_OP_RECV_FWD : SIM_OP_SEND_FWD;
    else
        kind = op->kind == SIM_OP_SEND_BWD ? SIM_OP_RECV_BWD : SIM_OP_SEND_BWD;
    int chunk = op->chunk;
    if (to_next) {
        *peer_stage = (stage + 1) % s->pp;
        chunk += stage == s->pp - 1;
    } else {
        *peer_stage = (stage + s->pp - 1) % s->pp;
        chunk -= stage == 0;
    }
    *peer = (sim_op){.kind = (uint8_t)kind, .microbatch = op->microbatch, .chunk = (int16_t)chunk};
    return ST_OK;
}

const char *sim_op_name(sim_op_kind k)
{
    static const char *const names[SIM_OP__COUNT] = {
        [SIM_OP_RECV_FWD] = "recvF", [SIM_OP_FWD] = "F",          [SIM_OP_SEND_FWD] = "sendF",
        [SIM_OP_RECV_BWD] = "recvB", [SIM_OP_BWD] = "B",          [SIM_OP_BWD_INPUT] = "Bi",
        [SIM_OP_BWD_WEIGHT] = "W",   [SIM_OP_SEND_BWD] = "sendB",
    };
    return (unsigned)k < SIM_OP__COUNT ? names[k] : "?";
}

int sim_sched_inflight(const sim_sched *s, int stage)
{
    if (sim_sched_check(s, NULL) != ST_OK || stage < 0 || stage >= s->pp)
        return 0;
    emitter e = {.s = s, .stage = stage};
    generate(&e);
    return e.peak;
}
