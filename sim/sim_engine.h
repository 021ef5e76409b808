/*
 * sim_engine.h: the simulator's discrete-event core.
 *
 * The engine knows time, a queue of events, schedule/cancel/run and a trace
 * hook; nothing else. Compute streams, links, collectives and schedules are
 * models written on top of it (sim_link.h is one).
 *
 * Time is an integer count of nanoseconds (sim_time_ns) from the start of the
 * run. An event is an action (fn, ctx, arg) due at a time. Invariants:
 *
 *   - Events run in order of (time, sequence), where the sequence is a 64-bit
 *     count of schedule calls on this engine: events due at the same time run
 *     first-in first-out, in the order they were scheduled.
 *   - Time never goes back: an event may be scheduled at now or later, never
 *     earlier (ST_EINVAL), so the times seen by the trace hook never decrease.
 *   - No allocation after sim_engine_new: events live in a pool of max_events
 *     slots (a free list) and the queue is a 4-ary min-heap of (time, sequence,
 *     slot) entries, both sized up front. A full pool is ST_ERANGE.
 *   - The engine keeps the first error raised into it (sticky, see
 *     sim_engine_err); sim_engine_run stops after the event during which an
 *     error was raised and returns its code. Models raise into the same
 *     context, so an error inside an event callback (which returns void)
 *     still ends the run with a message naming its source.
 *
 * Randomness: models that need it own a gsl_rng made by sim_rng_new from the
 * run's seed, and draw from it only inside events; since the event order is
 * a pure function of the schedule calls, one seed gives one trace, byte for
 * byte.
 */
#ifndef SMD_SIM_ENGINE_H
#define SMD_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "common/st.h"

/* Simulated time in nanoseconds since the start of the run. */
typedef int64_t sim_time_ns;

/* The latest representable time; run(SIM_TIME_MAX) runs until the queue is empty. */
#define SIM_TIME_MAX INT64_MAX

/* Largest max_events sim_engine_new accepts (slots are 32-bit indices). */
#define SIM_ENGINE_MAX_EVENTS ((size_t)UINT32_MAX - 1)

typedef struct sim_engine sim_engine;

/* An event's action, called once when the event is due, with the engine's
 * clock at the event's time. It may schedule and cancel events (including at
 * the current time: they run after every event already queued for it), raise
 * into sim_engine_err, or call sim_engine_stop. */
typedef void (*sim_event_fn)(sim_engine *e, void *ctx, uint64_t arg);

/* Names a scheduled event for cancellation. An id outlives its event: once
 * the event has run or been cancelled the id is stale and cancelling it does
 * nothing. A zero-initialised id ({0, 0}) never names an event, so it is a
 * safe "none". */
typedef struct sim_event_id {
    uint32_t slot;
    uint32_t gen;
} sim_event_id;

/* Trace hook: called just before each event's action, with its time and
 * sequence number. */
typedef void (*sim_trace_fn)(void *tctx, sim_time_ns t, uint64_t seq);

/* Create an engine with room for max_events pending events (1 to
 * SIM_ENGINE_MAX_EVENTS; a larger or zero count is ST_EINVAL). Memory is
 * allocated here, once: about 56 bytes per event. The clock starts at 0.
 * Returns ST_OK and the engine in *out, or ST_EINVAL / ST_ENOMEM with a
 * message in err (*out is then NULL). */
int sim_engine_new(size_t max_events, sim_engine **out, st_err *err);

/* Free an engine and its pool. Pending events are dropped without running.
 * sim_engine_free(NULL) is harmless. */
void sim_engine_free(sim_engine *e);

/* The current time: the time of the event running now, or of the last event
 * run (0 before any). run() never moves the clock past the last event it ran,
 * even when stopped by its until argument. */
sim_time_ns sim_engine_now(const sim_engine *e);

/* Schedule fn(e, ctx, arg) at time at (ns, at >= now). ctx is kept until the
 * event runs or is cancelled; the engine never dereferences it. If id is
 * non-NULL it receives the event's id, for sim_engine_cancel.
 * Returns ST_OK; ST_EINVAL if at < now (never back in time) or fn is NULL;
 * ST_ERANGE if all max_events slots are pending. Errors are also raised into
 * the engine's sticky error context (so a failed schedule inside an event
 * ends the run); *id is then the "none" id. O(log n). */
int sim_engine_schedule(sim_engine *e, sim_time_ns at, sim_event_fn fn, void *ctx, uint64_t arg,
                        sim_event_id *id);

/* Remove a pending event. Returns true if id named a pending event (now
 * removed, never to run), false if it was stale: already run, already
 * cancelled, or never scheduled. Eager: the slot is free at once. O(log n). */
bool sim_engine_cancel(sim_engine *e, sim_event_id id);

/* Run events in (time, sequence) order while the queue is non-empty and the
 * next event's time is <= until (ns; inclusive), or until an event calls
 * sim_engine_stop or raises an error. If events_run is non-NULL it receives
 * the number of events this call ran.
 * Returns ST_OK, or the code of the engine's sticky error: one already held
 * when run is called (nothing runs), or one raised during an event (the run
 * stops after that event). */
int sim_engine_run(sim_engine *e, sim_time_ns until, uint64_t *events_run);

/* Ask the current run to return after the event now running. Outside run it
 * does nothing (the next run is not affected). */
void sim_engine_stop(sim_engine *e);

/* Install a trace hook, called before each event's action with (tctx, time,
 * sequence); hook NULL removes it. tctx is kept until replaced. */
void sim_engine_set_trace(sim_engine *e, sim_trace_fn hook, void *tctx);

/* Events run since the engine was made (all run calls together). */
uint64_t sim_engine_events(const sim_engine *e);

/* Events now pending (scheduled, neither run nor cancelled). */
size_t sim_engine_pending(const sim_engine *e);

/* The time of the next pending event, or SIM_TIME_MAX if none. */
sim_time_ns sim_engine_next_time(const sim_engine *e);

/* The engine's sticky error context: ST_OK, or the first error raised by the
 * engine or by a model into it (ST_RAISE(sim_engine_err(e), ...)). Clear it
 * with st_err_clear to run again after handling an error. Never NULL; owned
 * by the engine. */
st_err *sim_engine_err(sim_engine *e);

/* Seeded randomness. */

/* Make a Mersenne Twister (gsl_rng_mt19937) seeded from seed. MT19937 takes a
 * 32-bit seed: the two halves of seed are xor-folded, so seeds below 2^32
 * are used as they are; GSL maps seed 0 to its default 4357. Free with
 * gsl_rng_free. Returns ST_OK or ST_ENOMEM. */
int sim_rng_new(uint64_t seed, gsl_rng **out, st_err *err);

/* A lognormal multiplier with mean 1, exp(N(-sigma^2/2, sigma^2)) (the mean
 * of exp(N(mu, s^2)) is exp(mu + s^2/2)), for per-operation jitter: multiply
 * a duration by it. sigma is the standard deviation of the log (>= 0);
 * sigma 0 returns exactly 1 and draws nothing, so turning jitter off does
 * not shift the random stream of anything else. */
double sim_lognormal_factor(gsl_rng *r, double sigma);

#endif
