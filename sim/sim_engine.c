/*
 * sim_engine.c: event pool, 4-ary heap, run loop, seeded randomness.
 *
 * Layout: the pool holds each event's action (fn, ctx, arg), a generation
 * count and its position in the heap; the heap holds (time, seq, slot)
 * entries, so comparisons during sifts read only the heap array and never
 * chase a pointer into the pool. A free slot's pos field links the free
 * list. Generations start at 1 and grow each time a slot is freed, so an id
 * {slot, gen} is live exactly when pool[slot].gen == gen and the slot is in
 * the heap; gen 0 never matches, which makes {0, 0} the "none" id.
 *
 * Why 4-ary: half the depth of a binary heap for the same size, and the four
 * children of a node sit next to each other in memory; pops dominate the
 * cost of a run and each level of a pop reads one group of children.
 * Eager cancel (remove from the middle of the heap) keeps the pool from
 * filling with dead events when models cancel and reschedule often, as
 * sim_link does on every transfer start and finish.
 */
#include "sim/sim_engine.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

#define NO_POS UINT32_MAX /* end of the free list */

typedef struct heap_ent {
    sim_time_ns t;
    uint64_t seq;
    uint32_t slot;
} heap_ent;

typedef struct pool_ent {
    sim_event_fn fn;
    void *ctx;
    uint64_t arg;
    uint32_t gen;
    uint32_t pos; /* index in the heap while pending; next free slot while free */
} pool_ent;

struct sim_engine {
    sim_time_ns now;
    uint64_t seq;      /* schedule calls so far: the next event's sequence number */
    uint64_t events;   /* events run */
    heap_ent *heap;    /* heap[0 .. n-1] */
    pool_ent *pool;    /* pool[0 .. cap-1] */
    uint32_t n;        /* pending events */
    uint32_t cap;      /* max_events */
    uint32_t free_head;/* first free slot, NO_POS if none */
    uint32_t fresh;    /* slots [fresh, cap) never used yet: set up when first
                        * taken, so that only the memory a run uses is
                        * touched (a 1T plan's capacity is 0.5 M events, and
                        * writing them all cost a sixth of its simulation in
                        * page faults) */
    int stop;          /* set by sim_engine_stop during a run */
    int running;
    sim_trace_fn hook;
    void *tctx;
    st_err err;
};

static inline int before(const heap_ent *a, const heap_ent *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Move the entry x up from hole i to its place. */
static inline void sift_up(sim_engine *e, uint32_t i, heap_ent x)
{
    heap_ent *h = e->heap;
    while (i > 0) {
        uint32_t p = (i - 1) >> 2;
        if (!before(&x, &h[p]))
            break;
        h[i] = h[p];
        e->pool[h[i].slot].pos = i;
        i = p;
    }
    h[i] = x;
    e->pool[x.slot].pos = i;
}

/* Move the entry x down from hole i to its place. */
static inline void sift_down(sim_engine *e, uint32_t i, heap_ent x)
{
    heap_ent *h = e->heap;
    uint32_t n = e->n;
    for (;;) {
        uint32_t c = 4 * i + 1;
        if (c >= n)
            break;
        uint32_t end = c + 4 < n ? c + 4 : n;
        uint32_t m = c;
        for (uint32_t k = c + 1; k < end; k++)
            if (before(&h[k], &h[m]))
                m = k;
        if (!before(&h[m], &x))
            break;
        h[i] = h[m];
        e->pool[h[i].slot].pos = i;
        i = m;
    }
    h[i] = x;
    e->pool[x.slot].pos = i;
}

/* Take the entry at heap position i out of the heap (the slot stays allocated). */
static inline void heap_remove(sim_engine *e, uint32_t i)
{
    heap_ent last = e->heap[--e->n];
    if (i == e->n)
        return;
    if (i > 0 && before(&last, &e->heap[(i - 1) >> 2]))
        sift_up(e, i, last);
    else
        sift_down(e, i, last);
}

static inline void slot_free(sim_engine *e, uint32_t slot)
{
    pool_ent *p = &e->pool[slot];
    p->gen = p->gen + 1 ? p->gen + 1 : 1; /* skip 0 on wrap: 0 means "none" */
    p->pos = e->free_head;
    e->free_head = slot;
}

int sim_engine_new(size_t max_events, sim_engine **out, st_err *err)
{
    *out = NULL;
    if (max_events < 1 || max_events > SIM_ENGINE_MAX_EVENTS)
        return ST_RAISE(err, ST_EINVAL, "event capacity %zu out of range 1..%zu", max_events,
                        SIM_ENGINE_MAX_EVENTS);
    sim_engine *e = calloc(1, sizeof *e);
    if (!e)
        goto fail;
    e->heap = malloc(max_events * sizeof *e->heap);
    if (!e->heap)
        goto fail;
    e->pool = malloc(max_events * sizeof *e->pool);
    if (!e->pool)
        goto fail;
    e->cap = (uint32_t)max_events;
    e->free_head = NO_POS;
    e->fresh = 0;
    *out = e;
    return ST_OK;
fail:
    sim_engine_free(e);
    return ST_RAISE(err, ST_ENOMEM, "no memory for an event engine of %zu events", max_events);
}

void sim_engine_free(sim_engine *e)
{
    if (!e)
        return;
    free(e->pool);
    free(e->heap);
    free(e);
}

sim_time_ns sim_engine_now(const sim_engine *e)
{
    return e->now;
}

int sim_engine_schedule(sim_engine *e, sim_time_ns at, sim_event_fn fn, void *ctx, uint64_t arg,
                        sim_event_id *id)
{
    if (id)
        *id = (sim_event_id){0, 0};
    if (at < e->now)
        return ST_RAISE(&e->err, ST_EINVAL,
                        "event scheduled at %lld ns, before the current time %lld ns",
                        (long long)at, (long long)e->now);
    if (!fn)
        return ST_RAISE(&e->err, ST_EINVAL, "event scheduled with no action");
    uint32_t slot = e->free_head;
    pool_ent *p;
    if (slot != NO_POS) {
        p = &e->pool[slot];
        e->free_head = p->pos;
    } else if (e->fresh < e->cap) {
        slot = e->fresh++;
        p = &e->pool[slot];
        p->gen = 1;
    } else {
        return ST_RAISE(&e->err, ST_ERANGE,
                        "event pool full: %u events pending at %lld ns (raise the capacity)",
                        e->cap, (long long)e->now);
    }
    p->fn = fn;
    p->ctx = ctx;
    p->arg = arg;
    heap_ent x = {at, e->seq++, slot};
    sift_up(e, e->n++, x);
    if (id)
        *id = (sim_event_id){slot, p->gen};
    return ST_OK;
}

bool sim_engine_cancel(sim_engine *e, sim_event_id id)
{
    if (id.slot >= e->fresh) /* never handed out */
        return false;
    pool_ent *p = &e->pool[id.slot];
    /* A freed slot's gen has moved past every id handed out for it; the
     * position check also turns away made-up ids naming a free slot. */
    if (p->gen != id.gen || p->pos >= e->n || e->heap[p->pos].slot != id.slot)
        return false;
    heap_remove(e, p->pos);
    slot_free(e, id.slot);
    return true;
}

int sim_engine_run(sim_engine *e, sim_time_ns until, uint64_t *events_run)
{
    uint64_t ran = 0;
    if (events_run)
        *events_run = 0;
    if (e->err.code)
        return e->err.code;
    e->stop = 0;
    e->running = 1;
    while (e->n > 0) {
        heap_ent top = e->heap[0];
        if (top.t > until)
            break;
        heap_remove(e, 0);
        pool_ent *p = &e->pool[top.slot];
        sim_event_fn fn = p->fn;
        void *ctx = p->ctx;
        uint64_t arg = p->arg;
        /* Free before the action runs: the action may reuse the slot, and
         * cancelling its own (now stale) id does nothing. */
        slot_free(e, top.slot);
        e->now = top.t;
        if (e->hook)
            e->hook(e->tctx, top.t, top.seq);
        fn(e, ctx, arg);
        ran++;
        e->events++;
        if (e->stop || e->err.code)
            break;
    }
    e->running = 0;
    e->stop = 0;
    if (events_run)
        *events_run = ran;
    return e->err.code;
}

void sim_engine_stop(sim_engine *e)
{
    if (e->running)
        e->stop = 1;
}

void sim_engine_set_trace(sim_engine *e, sim_trace_fn hook, void *tctx)
{
    e->hook = hook;
    e->tctx = hook ? tctx : NULL;
}

uint64_t sim_engine_events(const sim_engine *e)
{
    return e->events;
}

size_t sim_engine_pending(const sim_engine *e)
{
    return e->n;
}

sim_time_ns sim_engine_next_time(const sim_engine *e)
{
    return e->n ? e->heap[0].t : SIM_TIME_MAX;
}

st_err *sim_engine_err(sim_engine *e)
{
    return &e->err;
}

int sim_rng_new(uint64_t seed, gsl_rng **out, st_err *err)
{
    *out = gsl_rng_alloc(gsl_rng_mt19937);
    if (!*out)
        return ST_RAISE(err, ST_ENOMEM, "no memory for a random number generator");
    gsl_rng_set(*out, (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffu));
    return ST_OK;
}

double sim_lognormal_factor(gsl_rng *r, double sigma)
{
    if (sigma == 0)
        return 1.0;
    return gsl_ran_lognormal(r, -0.5 * sigma * sigma, sigma);
}
