/*
 * sim.h: the simulator's public interface.
 *
 * The simulator plays one training step of a layout out event by event: each
 * pipeline rank runs the op list of the shared schedule generator
 * (sim_schedule.h) on its compute stream, with durations from the planner's
 * compute model (plan_costs_compute), sends its activations and gradients
 * over bandwidth-shared links (sim_link.h), synchronises gradients across
 * data-parallel replicas in buckets on its communication stream, and ends
 * with the optimizer step. It reports the step time, the bubble of every
 * stage, utilisations, the peak of microbatches in flight, the critical path
 * and, optionally, a trace of every op.
 *
 * One data-parallel replica's pipeline is simulated: the replicas run the
 * same schedule at the same time, so each GPU gets its share of its node's
 * network (plan_costs.p2p_net_bps) and the gradient all-reduce is priced by
 * the planner's collective model.
 */
#ifndef SMD_SIM_H
#define SMD_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "common/st.h"
#include "planner/plan.h"
#include "sim/sim_engine.h"
#include "sim/sim_link.h"
#include "sim/sim_schedule.h"

typedef struct sim_config {
    uint64_t seed;               /* seeds the jitter (one seed, one trace) */
    double jitter_sigma;         /* per-op lognormal jitter: sigma of log(duration); 0 = none */
    int straggler_stage;         /* a pipeline rank whose compute runs slower; -1 = none */
    double straggler_factor;     /* its durations are multiplied by this (>= 1) */
    int monte_carlo;             /* steps simulated with seeds seed, seed+1, ... (>= 1) */
    int keep_trace;              /* keep every op of the (first) step for a trace */
    int whole_step;              /* 1: play out every microbatch however many (no windows) */
    /* Called after each Monte Carlo step (done of total); NULL = none. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
} sim_config;

void sim_config_default(sim_config *cfg);

/* Streams of a rank in the trace. */
enum { SIM_STREAM_COMPUTE = 0, SIM_STREAM_SEND_INTRA, SIM_STREAM_SEND_NET, SIM_STREAM_DP };

typedef struct sim_trace_rec {
    int32_t stage;
    uint8_t stream;              /* SIM_STREAM_* */
    uint8_t kind;                /* sim_op_kind, or SIM_OP__COUNT for a DP bucket / optimizer */
    int16_t chunk;
    int32_t microbatch;          /* or bucket index */
    sim_time_ns start_ns, end_ns;
} sim_trace_rec;

typedef struct sim_stage_stats {
    double busy_s;               /* compute stream busy */
    double bubble_fraction;      /* idle / busy over the pipeline span (Narayanan et al.
                                  * 2021: bubble time over ideal time; (p-1)/m for 1F1B) */
    int peak_inflight;           /* most (microbatch, chunk) activations held at once */
    double peak_act_bytes;       /* ... and their bytes */
    double peak_mem_bytes;       /* static memory + peak activations */
    double send_busy_s;          /* its outgoing links busy */
    double dp_busy_s;            /* its gradient buckets in flight */
    double dp_exposed_s;         /* gradient sync past its last backward */
} sim_stage_stats;

typedef struct sim_result {
    double step_s;               /* mean over the Monte Carlo steps */
    double pipeline_s;           /* first forward to last backward (first step) */
    double bubble_fraction;      /* the same over all ranks: (pp span - sum busy) / sum busy */
    double p50_s, p95_s, p99_s;  /* step-time quantiles over the steps */
    int steps;
    uint64_t events;             /* engine events of the first step */
    double compute_bound_s;      /* no step is shorter: the busiest compute stream */
    double comm_bound_s;         /* nor shorter than the busiest link */
    double planner_step_s;       /* plan_evaluate's analytic step time */
    int pp;
    sim_stage_stats stage[PLAN_PP_MAX];
    /* The critical path of the first step, ending at the last op: time in
     * compute, in transfers and in the gradient sync and optimizer. */
    double critical_compute_s, critical_transfer_s, critical_tail_s;
    int critical_ops;
    int critical_stages;         /* distinct ranks the path runs through */
    /* With keep_trace: every op of the first step (owned; sim_result_fini);
     * of the first window when the step was extrapolated. */
    sim_trace_rec *trace;
    int ntrace;
    int microbatches;            /* the step's microbatches */
    /* A step of many microbatches is not played out whole: windows of
     * window_microbatches[0] and [1] microbatches are, and every figure
     * that grows with the microbatches is extrapolated linearly from the
     * two (the pipeline's steady state adds the same per microbatch). Both
     * 0 when the whole step was played out. */
    int window_microbatches[2];
} sim_result;

/* Simulate a step of the layout whose costs are given. The work is bounded
 * by the pipeline's depth, not the batch: a step of more than a few hundred
 * microbatches is extrapolated from two windows of them (see
 * window_microbatches). ST_EINVAL for a schedule the generator refuses
 * (message names the value), ST_ENOMEM. */
int sim_step_run(const plan_costs *costs, const sim_config *cfg, sim_result *out, st_err *err);

/* Simulate a step of layout l of model m on cluster c: the planner's costs
 * of the layout (plan_costs_compute), then sim_step_run. What smdplan plan,
 * simulate, validate --sim and exec's prediction play out. */
int sim_layout_run(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                   const sim_config *cfg, sim_result *out, st_err *err);

/* Release what a result owns (its trace). */
void sim_result_fini(sim_result *r);

/* Write a Chrome trace-event JSON (opens in Perfetto / chrome://tracing):
 * one process per GPU (pipeline rank), one thread per stream. */
int sim_trace_write(FILE *f, const sim_result *r, const char *title, st_err *err);

#endif
