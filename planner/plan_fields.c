/*
 * plan_fields.c: the field tables of plan_fields.h.
 */
#include "planner/plan_fields.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "planner/plan_framework.h"

#define F(nm, kind, st, member, carry)                                                         \
    {nm, kind, offsetof(st, member), sizeof(((st *)0)->member), carry}
#define X PLAN_FIELD_EXEC

/* The layout, in the order every writer gives it: the parallel degrees,
 * the batch, the schedule, memory savers, then the stack's behaviour. */
static const plan_field layout_f[] = {
    F("tp", PLAN_FK_INT, plan_layout, tp, X),
    F("pp", PLAN_FK_INT, plan_layout, pp, X),
    F("dp", PLAN_FK_INT, plan_layout, dp, X),
    F("cp", PLAN_FK_INT, plan_layout, cp, X),
    F("micro_batch", PLAN_FK_INT, plan_layout, micro_batch, X),
    F("microbatches", PLAN_FK_INT, plan_layout, microbatches, X),
    F("active_microbatches", PLAN_FK_INT, plan_layout, active_microbatches, X),
    F("schedule", PLAN_FK_SCHED, plan_layout, schedule, X),
    F("virtual_stages", PLAN_FK_INT, plan_layout, virtual_stages, X),
    F("recompute", PLAN_FK_RECOMP, plan_layout, recompute, X),
    F("recompute_group", PLAN_FK_INT, plan_layout, recompute_group, X),
    F("recompute_layers", PLAN_FK_INT, plan_layout, recompute_layers, 0),
    F("recompute_saved", PLAN_FK_INT, plan_layout, recompute_saved, 0),
    F("sequence_parallel", PLAN_FK_BOOL, plan_layout, sequence_parallel, X),
    F("offload_activations", PLAN_FK_BOOL, plan_layout, offload_activations, X),
    F("compiled", PLAN_FK_BOOL, plan_layout, compiled, 0),
    F("fused_pointwise", PLAN_FK_BOOL, plan_layout, fused_pointwise, 0),
    F("sharding", PLAN_FK_SHARD, plan_layout, sharding, X),
    F("sharding_degree", PLAN_FK_INT, plan_layout, sharding_degree, 0),
    F("prescaled_batch", PLAN_FK_BOOL, plan_layout, prescaled_batch, 0),
    F("placement", PLAN_FK_STR, plan_layout, placement, X),
    F("flash_attention", PLAN_FK_BOOL, plan_layout, flash_attention, X),
    F("dp_overlap", PLAN_FK_BOOL, plan_layout, dp_overlap, X),
    F("fp32_grads", PLAN_FK_BOOL, plan_layout, fp32_grads, 0),
    F("tp_overlap", PLAN_FK_INT, plan_layout, tp_overlap, 0),
    F("pp_overlap", PLAN_FK_BOOL, plan_layout, pp_overlap, 0),
    F("dp_bucket_bytes", PLAN_FK_DBL, plan_layout, dp_bucket_bytes, X),
    F("global_batch", PLAN_FK_I64, plan_layout, global_batch, 0),
    F("launch_blocking", PLAN_FK_BOOL, plan_layout, launch_blocking, 0),
    F("framework", PLAN_FK_FW, plan_layout, framework, 0),
    F("precision", PLAN_FK_PREC, plan_layout, precision, 0),
};
const plan_fields plan_layout_fields = {layout_f, (int)(sizeof layout_f / sizeof layout_f[0])};

static const plan_field model_f[] = {
    F("name", PLAN_FK_STR, plan_model, name, X),
    F("source", PLAN_FK_STR, plan_model, source, 0),
    F("arch", PLAN_FK_ARCH, plan_model, arch, X),
    F("layers", PLAN_FK_I64, plan_model, layers, X),
    F("hidden", PLAN_FK_I64, plan_model, hidden, X),
    F("heads", PLAN_FK_I64, plan_model, heads, X),
    F("kv_heads", PLAN_FK_I64, plan_model, kv_heads, X),
    F("head_dim", PLAN_FK_I64, plan_model, head_dim, X),
    F("sliding_window", PLAN_FK_I64, plan_model, sliding_window, X),
    F("sliding_window_pattern", PLAN_FK_INT, plan_model, sliding_window_pattern, X),
    F("ffn", PLAN_FK_I64, plan_model, ffn, X),
    F("seq", PLAN_FK_I64, plan_model, seq, X),
    F("vocab", PLAN_FK_I64, plan_model, vocab, X),
    F("tied_embedding", PLAN_FK_BOOL, plan_model, tied_embedding, X),
    F("mlp", PLAN_FK_MLP, plan_model, mlp, X),
    F("params", PLAN_FK_I64, plan_model, params, 0),
};
const plan_fields plan_model_fields = {model_f, (int)(sizeof model_f / sizeof model_f[0])};

/* Keys spelled otherwise before the tables (`smdplan --json` wrote these
 * two): a reader that meets one names the key it is now. */
static const struct {
    const char *old, *now;
} renamed[] = {
    {"micro_batch_size", "micro_batch"},
    {"optimizer_sharding", "sharding"},
};

const char *plan_field_renamed(const char *key)
{
    for (size_t i = 0; key && i < sizeof renamed / sizeof renamed[0]; i++)
        if (strcmp(key, renamed[i].old) == 0)
            return renamed[i].now;
    return NULL;
}

const plan_field *plan_field_find(const plan_fields *t, const char *name)
{
    for (int i = 0; name && i < t->n; i++)
        if (strcmp(t->f[i].name, name) == 0)
            return &t->f[i];
    return NULL;
}

static const void *at(const plan_field *f, const void *obj)
{
    return (const char *)obj + f->offset;
}

static int get_int(const plan_field *f, const void *obj)
{
    int v;
    memcpy(&v, at(f, obj), sizeof v);
    return v;
}

double plan_field_num(const plan_field *f, const void *obj)
{
    switch (f->kind) {
    case PLAN_FK_INT:
    case PLAN_FK_BOOL:
        return (double)get_int(f, obj);
    case PLAN_FK_I64: {
        int64_t v;
        memcpy(&v, at(f, obj), sizeof v);
        return (double)v;
    }
    case PLAN_FK_DBL: {
        double v;
        memcpy(&v, at(f, obj), sizeof v);
        return v;
    }
    default:
        return NAN;
    }
}

const char *plan_field_text(const plan_field *f, const void *obj, char *buf, size_t n)
{
    const char *s = NULL;
    int v = f->kind == PLAN_FK_STR ? 0 : get_int(f, obj);
    switch (f->kind) {
    case PLAN_FK_STR: s = (const char *)at(f, obj); break;
    case PLAN_FK_SCHED: s = plan_layout_schedule_key((const plan_layout *)obj); break;
    case PLAN_FK_RECOMP: s = plan_recompute_name((plan_recompute)v); break;
    case PLAN_FK_SHARD: s = plan_sharding_name((plan_sharding)v); break;
    case PLAN_FK_PREC: s = plan_precision_name((plan_precision)v); break;
    case PLAN_FK_FW: s = plan_framework_get(v)->key; break;
    case PLAN_FK_ARCH: s = v == PLAN_ARCH_LLAMA ? "llama" : "gpt"; break;
    case PLAN_FK_MLP: s = v == PLAN_MLP_GATED ? "gated" : v == PLAN_MLP_PLAIN ? "plain" : "arch"; break;
    default: return NULL;
    }
    snprintf(buf, n, "%s", s ? s : "");
    return buf;
}
