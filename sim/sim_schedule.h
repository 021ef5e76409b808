/*
 * sim_schedule.h: the pipeline schedule generator, one pure function shared
 * by the event simulator and the executor, so that the simulated step and the
 * executed step are the same step.
 *
 * For a pipeline of pp ranks ("stages"), m microbatches, v model chunks per
 * rank (virtual stages), a schedule and SMP's active_microbatches cap, it
 * lists, per stage, the operations the stage runs in order: forwards,
 * backwards (for zero bubble split into input-gradient and weight-gradient
 * parts) and the point-to-point sends and receives between them.
 *
 * Layout of chunks (Megatron-LM's): chunk c of rank s is global virtual stage
 * g = c * pp + s of P = v * pp; activations flow g -> g + 1, gradients
 * g + 1 -> g. The peer of g + 1 is rank (s + 1) % pp, chunk c + (s == pp - 1).
 *
 * What one op list means (the contract with the simulator and the executor):
 *   - A stage runs its ops strictly in list order, one at a time.
 *   - Across stages the only dependencies are SEND -> RECV pairs; the pair of
 *     an op is given by sim_op_peer(). A RECV completes only once its SEND
 *     was issued (plus the transfer); a SEND never waits for its receiver
 *     (post it non-blocking, or batch it with the next RECV as Megatron's
 *     send_forward_recv_backward does): with rendezvous sends 1F1B deadlocks.
 *   - A RECV comes directly before the compute op that consumes it, a SEND
 *     directly after the compute op that produced it. No RECV_FWD on global
 *     virtual stage 0, no SEND_FWD on P - 1; no RECV_BWD on P - 1, no SEND_BWD
 *     on 0. With pp == 1 there is no communication at all (all chunks share
 *     the rank's memory).
 *   - Local dependencies are implied by the order and always hold: F(mb, c)
 *     before B(mb, c) (or BWD_INPUT(mb, c)), BWD_INPUT(mb, c) before
 *     BWD_WEIGHT(mb, c). Every (mb, chunk) appears in exactly one F and one
 *     B, or (ZB-H1) one Bi and one W, on each stage. Microbatches enter and
 *     leave each chunk in ascending order (first in, first out), so an
 *     executor can keep its activations in per-chunk queues.
 *   - Memory: F stores the (mb, chunk) activations; B frees them; Bi frees
 *     all but what W needs (layer inputs and output gradients of the linear
 *     layers, Qi et al. 2023's M_W); W frees the rest. "In flight" below
 *     counts (mb, chunk) whose F ran and whose B / Bi did not.
 *
 * Schedules (cap = active_microbatches; in flight on stage s never exceeds
 * planner/plan_eval_mem.c's inflight(), nor cap v):
 *   simple       GPipe (Huang et al. 2019): waves of min(cap, m) microbatches,
 *                all forwards of the wave, then its backwards in ascending
 *                order; in flight min(m, cap).
 *   interleaved  SMP's "interleaved" (backward first whenever possible), i.e.
 *                1F1B (Narayanan et al. 2021, Sec. 2.2.1); in flight
 *                min(pp - s, m, cap). With cap >= pp exactly 1F1B; below pp
 *                not a 1F1B with a shorter warm-up but the order of a timeline
 *                in which cap microbatches circulate, which reaches the cap's
 *                bound of one microbatch per 3 pp / cap (F = 1, B = 2).
 *   virtual      Megatron-LM's interleaved 1F1B (Narayanan et al. 2021,
 *                Sec. 2.2.2; schedules.py forward_backward_pipelining_with_
 *                interleaving); in flight, in chunks, at most
 *                min((v - 1) pp + 2 (pp - s - 1) + 1, m v, cap v). A cap
 *                below that costs time (see sim_schedule.c, gen_virtual).
 *   zb-h1        Qi et al. 2023 ZB-H1: 1F1B with B split into Bi and W, the
 *                first s weight gradients of stage s held back to fill the
 *                cool-down; in flight min(pp - s, m, cap), plus up to s
 *                pending W. Under a cap below pp: the interleaved order with
 *                each W right after its Bi.
 */
#ifndef SMD_SIM_SCHEDULE_H
#define SMD_SIM_SCHEDULE_H

#include <stdint.h>

#include "common/st.h"
#include "planner/plan.h"

typedef enum sim_op_kind {
    SIM_OP_RECV_FWD = 0, /* receive the input activation of (microbatch, chunk) */
    SIM_OP_FWD,          /* forward of (microbatch, chunk) */
    SIM_OP_SEND_FWD,     /* send the output activation of (microbatch, chunk) on */
    SIM_OP_RECV_BWD,     /* receive the output gradient of (microbatch, chunk) */
    SIM_OP_BWD,          /* full backward: input and weight gradients */
    SIM_OP_BWD_INPUT,    /* zero bubble's B: the input gradient only */
    SIM_OP_BWD_WEIGHT,   /* zero bubble's W: the weight gradient */
    SIM_OP_SEND_BWD,     /* send the input gradient of (microbatch, chunk) back */
    SIM_OP__COUNT
} sim_op_kind;

/* One operation. For every kind, (microbatch, chunk) names the local compute
 * op it belongs to: a RECV the one it feeds, a SEND the one that produced
 * its tensor. chunk is the model chunk on this rank, 0..v-1. */
typedef struct sim_op {
    uint8_t kind;        /* sim_op_kind */
    int32_t microbatch;  /* 0..m-1 */
    int16_t chunk;       /* 0..v-1; global virtual stage chunk * pp + stage */
} sim_op;

/* The inputs of a schedule. */
typedef struct sim_sched {
    int pp;                   /* pipeline ranks, 1..PLAN_PP_MAX */
    int microbatches;         /* per step, 1..SIM_SCHED_MAX_MICROBATCHES */
    int virtual_stages;       /* chunks per rank, 1..SIM_SCHED_MAX_VIRTUAL; > 1 only for virtual */
    int active_microbatches;  /* SMP's cap on microbatches in flight on a stage, >= 1 */
    plan_schedule schedule;
} sim_sched;

/* Limits that keep every op count and index inside int / int16_t. */
#define SIM_SCHED_MAX_MICROBATCHES (1 << 20)
#define SIM_SCHED_MAX_VIRTUAL 256

/* A schedule for a planner layout (pp, microbatches, virtual_stages,
 * active_microbatches, schedule). */
void sim_sched_from_layout(sim_sched *s, const plan_layout *l);

/* Check a schedule's inputs. ST_EINVAL with a one-line message naming the
 * value and what is allowed: pp, microbatches, virtual stages or active
 * microbatches out of range, an unknown schedule, v > 1 with a schedule other
 * than virtual, virtual with v > 1 and microbatches not a multiple of pp.
 * (More chunks than layers is the caller's check.) */
int sim_sched_check(const sim_sched *s, st_err *err);

/* Exact number of ops stage runs (to size a buffer); -1 if s fails
 * sim_sched_check or stage is not in 0..pp-1. */
int sim_sched_len(const sim_sched *s, int stage);

/* Fill ops[0..*n) with stage's ops in execution order. Allocates nothing.
 * ST_EINVAL for bad inputs (see sim_sched_check) or a stage outside
 * 0..pp-1; ST_ERANGE if cap < sim_sched_len() (then *n is the length needed
 * and ops holds its first cap entries). n may be NULL. */
int sim_sched_ops(const sim_sched *s, int stage, sim_op *ops, int cap, int *n, st_err *err);

/* The other end of a communication op on stage: *peer_stage and the op that
 * pairs with it there (SEND_FWD <-> RECV_FWD, SEND_BWD <-> RECV_BWD), with
 * that rank's chunk index. ST_EINVAL if op is not a communication op or has
 * no peer (e.g. SEND_FWD on the last global virtual stage). */
int sim_op_peer(const sim_sched *s, int stage, const sim_op *op, int *peer_stage, sim_op *peer,
                st_err *err);

/* Short name of a kind: "recvF", "F", "sendF", "recvB", "B", "Bi", "W",
 * "sendB"; "?" for anything else. */
const char *sim_op_name(sim_op_kind k);

/* Most (microbatch, chunk) pairs stage holds in flight under s (F done, B or
 * Bi not yet), found by running the generator (no buffer); 0 for bad
 * inputs. Memory per stage is this times a chunk's activations. */
int sim_sched_inflight(const sim_sched *s, int stage);

#endif
