/*
 * sim_schedule.c: the pipeline schedule generator (see sim_schedule.h for
 * the contract an op list carries).
 *
 * Every schedule is written as an order of compute ops on a stage; fwd() and
 * bwd() wrap each compute op in the receive it needs and the send it
 * produces, so the communication rules live in one place. The generator
 * writes into a caller's buffer through an emitter that counts past the end
 * (so one pass both fills and measures) and allocates nothing.
 *
 * Sources:
 *   simple       GPipe, Huang et al. 2019, Sec. 2.2: all forwards of a batch,
 *                then all backwards; SMP's active_microbatches (SageMaker
 *                model parallelism docs, "active_microbatches": microbatches
 *                in flight) splits the m microbatches into waves. Backwards
 *                run in ascending microbatch order, as PyTorch's
 *                torch.distributed.pipelining ScheduleGPipe does, so every
 *                schedule here is first-in first-out per chunk.
 *   interleaved  SMP's "interleaved" pipeline (docs: "backward first whenever
 *                possible"), i.e. PipeDream-Flush / 1F1B, Narayanan et al.
 *                2021, Sec. 2.2.1: stage s runs p - s - 1 warm-up forwards,
 *                then one forward one backward, then the cool-down backwards.
 *   virtual      Megatron-LM schedules.py, forward_backward_pipelining_with_
 *                interleaving (Narayanan et al. 2021, Sec. 2.2.2): the k-th
 *                forward is chunk (k / g) % v of microbatch (k / (g v)) g +
 *                k % g with group size g = pp, the k-th backward the same
 *                microbatch of chunk v - 1 - (k / g) % v; warm-up
 *                2 (pp - s - 1) + (v - 1) g forwards. Megatron-Core's
 *                get_schedule_table gives the order for a group size g other
 *                than pp with a shorter last group, used here only when the
 *                cap needs it (see virtual_group()). Megatron's special case
 *                "m == pp: all forwards first" is not taken: it holds more
 *                than the planner's in-flight count and saves no time.
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
 * past the end. */
typedef struct emitter {
    const sim_sched *s;
    int stage;
    sim_op *ops;
    int cap;
    int n;
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

/* A full backward (SIM_OP_BWD) or zero bubble's input-gradient part. */
static void bwd(emitter *e, sim_op_kind kind, int mb, int chunk)
{
    if (has_next(e, chunk))
        put(e, SIM_OP_RECV_BWD, mb, chunk);
    put(e, kind, mb, chunk);
    if (has_prev(e, chunk))
        put(e, SIM_OP_SEND_BWD, mb, chunk);
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
            bwd(e, SIM_OP_BWD, mb, 0);
    }
}

/* ---- interleaved (SMP's backward-first, 1F1B) ---- */

/* Forwards before the first backward: p - s - 1 in 1F1B, fewer when the cap
 * allows fewer than p - s in flight. */
static int warmup_1f1b(const sim_sched *s, int stage)
{
    return imin(imin(s->pp - stage - 1, s->microbatches), s->active_microbatches - 1);
}

#include <stdlib.h>
static int64_t nom_a(int j, int c, int p) { return (int64_t)(j / c) * 3 * p + j % c; }
static void gen_merge(emitter *e)
{
    int p = e->s->pp, m = e->s->microbatches, c = e->s->active_microbatches, st = e->stage;
    if (c > m) c = m;
    int limit = getenv("NOLIM") ? imin(c, m) : imin(imin(p - st, c), m), jf = 0, jb = 0;
    while (jb < m) {
        int64_t f = jf < m ? nom_a(jf, c, p) + st : 0, b = nom_a(jb, c, p) + p + 2 * (p - 1 - st);
        if (jf < m && jf - jb < limit && f < b)
            fwd(e, jf++, 0);
        else
            bwd(e, SIM_OP_BWD, jb++, 0);
    }
}

static void gen_1f1b(emitter *e)
{
    const char *mode = getenv("SCHED_MODE");
    if (mode && mode[0] == '5') {
        int p = e->s->pp, m = e->s->microbatches, c = e->s->active_microbatches, st = e->stage;
        int64_t big = p > c ? p : c;
        int jf = 0, jb = 0;
        while (jb < m) {
            if (jf < m && (int64_t)(jf - jb) * 3 * big < (int64_t)c * (3 * p - 2 - 3 * st))
                fwd(e, jf++, 0);
            else
                bwd(e, SIM_OP_BWD, jb++, 0);
        }
        return;
    }
    if (mode && (mode[0] == '2' || (mode[0] == '3' && e->s->active_microbatches < e->s->pp))) {
        gen_merge(e);
        return;
    }
    int m = e->s->microbatches, w = warmup_1f1b(e->s, e->stage);
    for (int k = 0; k < w; k++)
        fwd(e, k, 0);
    for (int j = 0; j < m - w; j++) {
        fwd(e, w + j, 0);
        bwd(e, SIM_OP_BWD, j, 0);
    }
    for (int j = m - w; j < m; j++)
        bwd(e, SIM_OP_BWD, j, 0);
}

/* ---- virtual (Megatron's interleaved 1F1B) ---- */

/* Microbatches run through a chunk back to back (Megatron-Core's
 * microbatch_group_size_per_vp_stage): pp. The first backward of a group
 * needs its microbatch's last chunk, (v - 1) g forwards later, so a cap of
 * fewer than (v - 1) pp + 1 chunks in flight shrinks the group to what the
 * cap can hold (the last group is then shorter). */
static int virtual_group(const sim_sched *s)
{
    int v = s->virtual_stages, cap = s->active_microbatches;
    int g = imin(s->pp, s->microbatches);
    if (v > 1 && cap < s->microbatches && (v - 1) * g > cap * v - 1)
        g = (cap * v - 1) / (v - 1);
    return g;
}

static int warmup_virtual(const sim_sched *s, int stage)
{
    int v = s->virtual_stages, total = s->microbatches * v;
    int w = imin(2 * (s->pp - stage - 1) + (v - 1) * virtual_group(s), total);
    if (s->active_microbatches < s->microbatches)
        w = imin(w, s->active_microbatches * v - 1);
    return w;
}

/* The k-th entry of Megatron-Core's schedule table: groups of g
 * microbatches, each run through chunk 0, 1, ..., v - 1; a last group of
 * m % g microbatches. Backward visits the chunks in reverse. */
static void virtual_op(const sim_sched *s, int g, int k, int forward, int *mb, int *chunk)
{
    int m = s->microbatches, v = s->virtual_stages;
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

static void vfwd(emitter *e, int g, int k)
{
    int mb, chunk;
    virtual_op(e->s, g, k, 1, &mb, &chunk);
    fwd(e, mb, chunk);
}

static void vbwd(emitter *e, int g, int k)
{
    int mb, chunk;
    virtual_op(e->s, g, k, 0, &mb, &chunk);
    bwd(e, SIM_OP_BWD, mb, chunk);
}

static void gen_virtual(emitter *e)
{
    int total = e->s->microbatches * e->s->virtual_stages;
    int g = virtual_group(e->s), w = warmup_virtual(e->s, e->stage);
    for (int k = 0; k < w; k++)
        vfwd(e, g, k);
    for (int j = 0; j < total - w; j++) {
        vfwd(e, g, w + j);
        vbwd(e, g, j);
    }
    for (int j = total - w; j < total; j++)
        vbwd(e, g, j);
}

/* ---- zb-h1 (Qi et al. 2023) ---- */

/* Forwards before the first Bi (1F1B's warm-up plus its first steady
 * forward), and the W passes stage holds back to its cool-down. */
static int forwards_zb(const sim_sched *s, int stage)
{
    return imin(imin(s->pp - stage, s->microbatches), s->active_microbatches);
}

static int deferred_zb(const sim_sched *s, int stage)
{
    return imin(stage, s->microbatches - forwards_zb(s, stage));
}

static void gen_zb_h1(emitter *e)
{
    int m = e->s->microbatches, w = forwards_zb(e->s, e->stage);
    int d = deferred_zb(e->s, e->stage);
    for (int k = 0; k < w; k++)
        fwd(e, k, 0);
    for (int j = 0; j < m - w; j++) {
        bwd(e, SIM_OP_BWD_INPUT, j, 0);
        if (j >= d)
            put(e, SIM_OP_BWD_WEIGHT, j, 0);
        fwd(e, w + j, 0);
    }
    for (int j = m - w; j < m; j++) {
        bwd(e, SIM_OP_BWD_INPUT, j, 0);
        put(e, SIM_OP_BWD_WEIGHT, j, 0);
    }
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

int sim_sched_ops(const sim_sched *s, int stage, sim_op *ops, int cap, int *n, st_err *err)
{
    int rc = sim_sched_check(s, err);
    if (rc != ST_OK)
        return rc;
    if (stage < 0 || stage >= s->pp)
        return ST_RAISE(err, ST_EINVAL, "stage %d: must be in 0..%d", stage, s->pp - 1);
    emitter e = {.s = s, .stage = stage, .ops = ops, .cap = ops ? (cap > 0 ? cap : 0) : 0};
    switch (s->schedule) {
    case PLAN_SCHED_SIMPLE:
        gen_simple(&e);
        break;
    case PLAN_SCHED_VIRTUAL:
        gen_virtual(&e);
        break;
    case PLAN_SCHED_ZB_H1:
        gen_zb_h1(&e);
        break;
    case PLAN_SCHED_INTERLEAVED:
    default:
        gen_1f1b(&e);
        break;
    }
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
    int m = s->microbatches;
    switch (s->schedule) {
    case PLAN_SCHED_SIMPLE:
        return imin(m, s->active_microbatches);
    case PLAN_SCHED_VIRTUAL:
        return imin(warmup_virtual(s, stage) + 1, m * s->virtual_stages);
    case PLAN_SCHED_ZB_H1:
        return forwards_zb(s, stage);
    case PLAN_SCHED_INTERLEAVED:
    default:
        return imin(warmup_1f1b(s, stage) + 1, m);
    }
}
