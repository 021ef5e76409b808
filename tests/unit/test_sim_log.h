/*
 * test_sim_log.h: what the simulator's engine and link tests record: the
 * events that ran, each with its time and argument.
 */
#ifndef SMD_TEST_SIM_LOG_H
#define SMD_TEST_SIM_LOG_H

#include "sim/sim_engine.h"

#define EVENT_LOG_MAX 64

typedef struct event_log {
    int n;
    sim_time_ns t[EVENT_LOG_MAX];
    uint64_t arg[EVENT_LOG_MAX];
} event_log;

/* An event's callback that logs it into ctx (an event_log). */
static inline void log_event(sim_engine *e, void *ctx, uint64_t arg)
{
    event_log *lg = ctx;
    assert_true(lg->n < EVENT_LOG_MAX);
    lg->t[lg->n] = sim_engine_now(e);
    lg->arg[lg->n] = arg;
    lg->n++;
}

#endif
