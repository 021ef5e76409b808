/*
 * exec_layout.h: a layout and a model as the executor runs them, before
 * anything is written or launched (what smdplan exec asks of them).
 *
 *  - the executor's profile on a device (data/frameworks.json: "smdplan" on
 *    the CPU, "smdplan-cuda" on the GPU) and a layout made to follow it;
 *  - a layout from the plan options alone, with defaults for the knobs they
 *    leave open;
 *  - the knobs and shapes the executor does not run, refused by name;
 *  - a model shrunk (--scale) keeping what the layout needs.
 *
 * Messages name the smdplan exec option that changes the value.
 */
#ifndef SMD_EXEC_LAYOUT_H
#define SMD_EXEC_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"
#include "planner/plan.h"

/* The executor's framework index on the CPU (cuda 0) or the GPU (cuda 1). */
int exec_layout_profile(int cuda);

/* l made the executor's own (the device's profile), with the knobs
 * CONFIG.json carries kept as the plan set them; the attention kernel as
 * flash says (-1: the profile's), the device's precision: fp32 on the CPU,
 * bf16 with fp32 master weights on the GPU. */
void exec_layout_apply(plan_layout *l, int cuda, int flash);

/* A layout from the options of cfg alone (no search): the knobs given, the
 * defaults for the others (one sequence per microbatch, 2 x pp
 * microbatches, 1F1B), the device's profile's behaviour. ST_EINVAL naming
 * the option for a global batch or microbatch count the layout cannot take. */
int exec_layout_from_config(const plan_config *cfg, int cuda, plan_layout *l, st_err *err);

/* Knobs the executor does not run (context parallelism, activation offload,
 * what the device's profile refuses): ST_EINVAL naming the knob. */
int exec_layout_check(const plan_layout *l, int cuda, st_err *err);

/* What the executor needs of m's shape under l (heads, kv heads, MLP and
 * vocabulary split by TP, layers over the pipeline chunks, sequence by TP
 * with sequence parallelism; data_kind "text" needs 256 tokens): ST_EINVAL
 * naming the value, with --scale as the way out. */
int exec_model_check(const plan_model *m, const plan_layout *l, const char *data_kind,
                     st_err *err);

/* A model shrunk for a trial run: each value 0 when not given. */
typedef struct exec_scale {
    int64_t layers, hidden, heads, kv_heads, ffn, seq, vocab;
} exec_scale;

/* Shrink m by sc, keeping what l needs (the MLP keeps its ratio to hidden,
 * split evenly by TP; multi-head attention stays multi-head); what changed
 * into said (n bytes, "" for nothing), and m renamed NAME-scaled.
 * ST_EINVAL for a value larger than the model's, or heads that do not
 * divide hidden. */
int exec_model_scale(const exec_scale *sc, const plan_layout *l, plan_model *m, char *said,
                     size_t n, st_err *err);

#endif
