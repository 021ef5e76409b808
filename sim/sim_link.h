/*
 * sim_link.h: a link whose bandwidth is shared equally among the transfers
 * on it (processor sharing), as a model on top of the event engine.
 *
 * A link has a bandwidth (bytes/s) and a latency (ns). A transfer of B bytes
 * started at t0 is in its bandwidth phase until its last byte is through; its
 * completion callback then runs one latency later. While n transfers are in
 * their bandwidth phase each gets bandwidth / n, so one transfer alone takes
 * latency + B / bandwidth and two equal transfers started together both take
 * latency + 2B / bandwidth. Latency is pure delay (it does not hold
 * bandwidth), the alpha-beta model of Hockney 1994 with fair sharing of beta.
 *
 * One link per transfer: a path through several links (a GPU's NVLink, then
 * its node's network) is modelled by its bottleneck link, and a resource that
 * several GPUs share (a node's network) is one sim_link used by all of them.
 *
 * How: the link keeps its "service level" S, the bytes served so far to any
 * one transfer continuously active since the link was last idle (S grows at
 * bandwidth / n per unit time). A transfer started at level S0 finishes when
 * S reaches its tag S0 + B, so the next to finish is the smallest tag and
 * only S moves as time passes (after the virtual-time idea of Demers,
 * Keshav and Shenker 1989). On every start and finish the link brings S to
 * now, cancels its one pending completion event and schedules the next.
 *
 * Units and rounding: time in integer ns, bytes and bandwidth as doubles.
 * A completion time is the exact time rounded up to the next whole ns (ceil,
 * after forgiving SIM_LINK_SLACK_NS of floating-point noise), so a transfer
 * never completes early and ends at most about 1 ns late; a transfer that
 * stays one extra ns keeps its share for that ns, which only ever delays the
 * others, never hastens them.
 *
 * Storage: the caller owns the sim_link and its table of max_active
 * sim_link_xfer entries (no allocation per transfer). Both must stay put
 * while the link has transfers in flight: the engine holds a pointer to the
 * link in its pending completion event. Each transfer uses one engine event
 * for its latency phase (if it has a callback), and the link holds at most
 * one completion event: size the engine for both.
 */
#ifndef SMD_SIM_LINK_H
#define SMD_SIM_LINK_H

#include <stdint.h>

#include "common/st.h"
#include "sim/sim_engine.h"

/* Floating-point noise forgiven before rounding a completion time up, in ns:
 * an exact time of 1000 ns computed as 1000.0000000001 is 1000, not 1001. */
#define SIM_LINK_SLACK_NS 1e-6

/* One transfer in its bandwidth phase. Private to sim_link.c; declared here
 * so the caller can size the storage. */
typedef struct sim_link_xfer {
    double tag;         /* service level at which the last byte is through */
    double bytes;       /* size of the transfer */
    sim_event_fn done;  /* completion callback, may be NULL */
    void *ctx;
    uint64_t arg;
} sim_link_xfer;

/* A link. Fields are private to sim_link.c (read them with the accessors). */
typedef struct sim_link {
    sim_engine *e;
    double bw_bps;          /* bandwidth, bytes per second */
    double bw_per_ns;       /* bandwidth, bytes per ns */
    sim_time_ns latency_ns; /* pure delay after the last byte */
    int max_active;         /* entries in xfer */
    int nactive;            /* transfers in their bandwidth phase: xfer[0 .. nactive-1], by start */
    sim_link_xfer *xfer;    /* caller-owned table */
    double level;           /* service level S, bytes, at last_ns; 0 whenever the link is idle */
    sim_time_ns last_ns;    /* time level and busy_ns were last brought up to date */
    sim_time_ns busy_ns;    /* time with >= 1 transfer in its bandwidth phase, up to last_ns */
    double done_bytes;      /* bytes of transfers past their bandwidth phase */
    uint64_t started;       /* transfers started */
    uint64_t finished;      /* transfers past their bandwidth phase */
    sim_event_id next;      /* the pending completion event, or none */
    double next_tag;        /* the tag that event was scheduled for */
} sim_link;

/* Set up a link on engine e (kept, not owned) with bandwidth bw_bps (bytes/s,
 * finite, > 0), latency latency_ns (>= 0) and room for max_active (>= 1)
 * concurrent transfers in storage (caller-owned, max_active entries, kept).
 * Returns ST_OK, or ST_EINVAL with a message in err. */
int sim_link_init(sim_link *l, sim_engine *e, double bw_bps, sim_time_ns latency_ns,
                  int max_active, sim_link_xfer *storage, st_err *err);

/* Forget the link's transfers in flight (their callbacks never run) and
 * cancel its pending completion event; callbacks already in their latency
 * phase are engine events and stay scheduled. After fini the link and its
 * storage may be reused or released. */
void sim_link_fini(sim_link *l);

/* Start a transfer of bytes (finite, >= 0) at the engine's current time.
 * done(e, ctx, arg), if done is non-NULL, runs when the last byte is through
 * plus the link's latency (ctx is kept until then). A transfer of 0 bytes
 * completes after the latency alone. Call from inside an event or between
 * runs. Returns ST_OK; ST_EINVAL for bad bytes; ST_ERANGE if max_active
 * transfers are in flight or a completion time would pass SIM_TIME_MAX; or
 * an engine status if scheduling fails. Errors are raised into the engine's
 * sticky error context, so a failure inside an event ends the run. Bad
 * bytes and a full table leave the link as it was; after a failed schedule
 * it is fit only for sim_link_fini. */
int sim_link_start(sim_link *l, double bytes, sim_event_fn done, void *ctx, uint64_t arg);

/* Transfers now in their bandwidth phase. */
int sim_link_active(const sim_link *l);

/* Time up to now with at least one transfer in its bandwidth phase (ns);
 * busy / elapsed is the link's utilization. */
sim_time_ns sim_link_busy_ns(const sim_link *l);

/* Bytes carried up to now: whole transfers past their bandwidth phase plus
 * the bytes served so far to those still in it. */
double sim_link_bytes(const sim_link *l);

/* Transfers started, and transfers past their bandwidth phase, since init. */
uint64_t sim_link_started(const sim_link *l);
uint64_t sim_link_finished(const sim_link *l);

#endif
