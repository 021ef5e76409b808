/*
 * sim_link.c: processor-sharing links on the event engine (see sim_link.h).
 *
 * Invariants between calls: level is the service level at last_ns; every
 * active transfer has tag > level - rounding (it has not finished); next is
 * the one pending completion event when nactive > 0 and names the smallest
 * tag, next_tag; the table xfer[0 .. nactive-1] is in start order, so
 * transfers finishing together get their callbacks in the order they started
 * (engine FIFO at equal times). When the link goes idle, level restarts at 0
 * so it never grows large enough to cost precision on small transfers.
 */
#include "sim/sim_link.h"

#include <math.h>

/* Bring level and busy time up to the engine's current time. */
static void advance(sim_link *l)
{
    sim_time_ns now = sim_engine_now(l->e);
    if (l->nactive > 0 && now > l->last_ns) {
        sim_time_ns dt = now - l->last_ns;
        l->level += (double)dt * l->bw_per_ns / l->nactive;
        l->busy_ns += dt;
    }
    l->last_ns = now;
}

static void on_complete(sim_engine *e, void *ctx, uint64_t arg);

/* Schedule the completion event for the smallest tag (the previous one has
 * been cancelled or has just run). */
static int reschedule(sim_link *l)
{
    l->next = (sim_event_id){0, 0};
    if (l->nactive == 0) {
        l->level = 0;
        return ST_OK;
    }
    double tag = l->xfer[0].tag;
    for (int i = 1; i < l->nactive; i++)
        if (l->xfer[i].tag < tag)
            tag = l->xfer[i].tag;
    double left = tag - l->level;
    if (left < 0)
        left = 0;
    /* Time to serve left bytes to each of nactive transfers. */
    double dt = ceil(left * l->nactive / l->bw_per_ns - SIM_LINK_SLACK_NS);
    if (dt < 0)
        dt = 0;
    sim_time_ns now = sim_engine_now(l->e);
    if (!(dt < (double)(SIM_TIME_MAX - now)))
        return ST_RAISE(sim_engine_err(l->e), ST_ERANGE,
                        "link transfer of %.6g bytes left would end past the end of time "
                        "(%.6g ns from %lld ns)",
                        left, dt, (long long)now);
    l->next_tag = tag;
    return sim_engine_schedule(l->e, now + (sim_time_ns)dt, on_complete, l, 0, &l->next);
}

static void on_complete(sim_engine *e, void *ctx, uint64_t arg)
{
    sim_link *l = ctx;
    advance(l);
    /* The event was scheduled for next_tag and nothing has changed since
     * (every start and finish reschedules), so that transfer is through even
     * if rounding left level a hair short of its tag. */
    if (l->level < l->next_tag)
        l->level = l->next_tag;
    sim_time_ns now = sim_engine_now(e);
    if (l->latency_ns > SIM_TIME_MAX - now) {
        ST_RAISE(sim_engine_err(e), ST_ERANGE,
                 "link latency %lld ns from %lld ns passes the end of time",
                 (long long)l->latency_ns, (long long)now);
        return;
    }
    sim_time_ns at = now + l->latency_ns;
    int k = 0;
    for (int i = 0; i < l->nactive; i++) {
        sim_link_xfer x = l->xfer[i];
        if (x.tag > l->level) {
            l->xfer[k++] = x;
            continue;
        }
        l->done_bytes += x.bytes;
        l->finished++;
        /* A failure is raised into the engine's error and ends the run. */
        if (x.done)
            sim_engine_schedule(e, at, x.done, x.ctx, x.arg, NULL);
    }
    l->nactive = k;
    reschedule(l);
}

int sim_link_init(sim_link *l, sim_engine *e, double bw_bps, sim_time_ns latency_ns,
                  int max_active, sim_link_xfer *storage, st_err *err)
{
    *l = (sim_link){0};
    if (!e || !storage)
        return ST_RAISE(err, ST_EINVAL, "link needs an engine and transfer storage");
    if (!(bw_bps > 0) || !isfinite(bw_bps))
        return ST_RAISE(err, ST_EINVAL, "link bandwidth %g bytes/s is not a positive number",
                        bw_bps);
    if (latency_ns < 0)
        return ST_RAISE(err, ST_EINVAL, "link latency %lld ns is negative", (long long)latency_ns);
    if (max_active < 1)
        return ST_RAISE(err, ST_EINVAL, "link room for %d transfers is less than 1", max_active);
    l->e = e;
    l->bw_bps = bw_bps;
    l->bw_per_ns = bw_bps * 1e-9;
    l->latency_ns = latency_ns;
    l->max_active = max_active;
    l->xfer = storage;
    l->last_ns = sim_engine_now(e);
    return ST_OK;
}

void sim_link_fini(sim_link *l)
{
    if (l->e)
        sim_engine_cancel(l->e, l->next);
    l->next = (sim_event_id){0, 0};
    l->nactive = 0;
    l->level = 0;
}

int sim_link_start(sim_link *l, double bytes, sim_event_fn done, void *ctx, uint64_t arg)
{
    if (!(bytes >= 0) || !isfinite(bytes))
        return ST_RAISE(sim_engine_err(l->e), ST_EINVAL,
                        "link transfer of %g bytes: size must be finite and >= 0", bytes);
    if (l->nactive >= l->max_active)
        return ST_RAISE(sim_engine_err(l->e), ST_ERANGE,
                        "link full: %d transfers in flight at %lld ns (raise its capacity)",
                        l->nactive, (long long)sim_engine_now(l->e));
    advance(l);
    sim_engine_cancel(l->e, l->next);
    l->xfer[l->nactive++] = (sim_link_xfer){
        .tag = l->level + bytes, .bytes = bytes, .done = done, .ctx = ctx, .arg = arg};
    l->started++;
    return reschedule(l);
}

int sim_link_active(const sim_link *l)
{
    return l->nactive;
}

sim_time_ns sim_link_busy_ns(const sim_link *l)
{
    sim_time_ns now = sim_engine_now(l->e);
    return l->busy_ns + (l->nactive > 0 && now > l->last_ns ? now - l->last_ns : 0);
}

double sim_link_bytes(const sim_link *l)
{
    sim_time_ns now = sim_engine_now(l->e);
    double level = l->level;
    if (l->nactive > 0 && now > l->last_ns)
        level += (double)(now - l->last_ns) * l->bw_per_ns / l->nactive;
    double b = l->done_bytes;
    for (int i = 0; i < l->nactive; i++) {
        double served = level - (l->xfer[i].tag - l->xfer[i].bytes);
        b += served < 0 ? 0 : served > l->xfer[i].bytes ? l->xfer[i].bytes : served;
    }
    return b;
}

uint64_t sim_link_started(const sim_link *l)
{
    return l->started;
}

uint64_t sim_link_finished(const sim_link *l)
{
    return l->finished;
}
