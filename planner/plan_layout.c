/*
 * plan_layout.c: layout and config defaults, names and parsers of the enums,
 * and the default global batch.
 */
#include "planner/plan.h"
#include "planner/plan_framework.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const sched_names[PLAN_SCHED__COUNT] = {
    [PLAN_SCHED_SIMPLE] = "simple",
    [PLAN_SCHED_INTERLEAVED] = "interleaved",
    [PLAN_SCHED_VIRTUAL] = "virtual",
    [PLAN_SCHED_ZB_H1] = "zb-h1",
};
static const char *const recomp_names[PLAN_RECOMP__COUNT] = {
    [PLAN_RECOMP_NONE] = "none",
    [PLAN_RECOMP_SELECTIVE] = "selective",
    [PLAN_RECOMP_FULL] = "full",
};
static const char *const shard_names[PLAN_SHARD__COUNT] = {
    [PLAN_SHARD_NONE] = "none",
    [PLAN_SHARD_OPTIMIZER] = "optimizer",
    [PLAN_SHARD_GRADIENTS] = "gradients",
    [PLAN_SHARD_PARAMS] = "params",
};
static const char *const prec_names[PLAN_PREC__COUNT] = {
    [PLAN_PREC_BF16] = "bf16",
    [PLAN_PREC_FP8] = "fp8",
    [PLAN_PREC_FP32] = "fp32",
    [PLAN_PREC_FP16] = "fp16",
};
static const char *const attn_names[PLAN_ATTN__COUNT] = {
    [PLAN_ATTN_UNFUSED] = "unfused",
    [PLAN_ATTN_FLASH1] = "flash1",
    [PLAN_ATTN_FLASH2] = "flash2",
    [PLAN_ATTN_FLASH3] = "flash3",
    [PLAN_ATTN_CUDNN] = "cudnn",
};
static const char *const obj_names[PLAN_OBJ__COUNT] = {
    [PLAN_OBJ_TIME] = "time",
    [PLAN_OBJ_COST] = "cost",
    [PLAN_OBJ_THROUGHPUT] = "throughput",
    [PLAN_OBJ_MEMORY] = "memory",
};
static const char *const reject_names[PLAN_REJ__COUNT] = {
    [PLAN_OK] = "feasible",
    [PLAN_REJ_OOM] = "out of memory",
    [PLAN_REJ_TP_ACROSS_NODES] = "TP across nodes",
    [PLAN_REJ_BATCH] = "batch not divisible",
    [PLAN_REJ_HEADS] = "heads not divisible by TP",
    [PLAN_REJ_LAYERS] = "more stages than layers",
    [PLAN_REJ_VIRTUAL] = "virtual stages need microbatches divisible by PP",
    [PLAN_REJ_GPUS] = "degrees do not multiply to the GPU count",
    [PLAN_REJ_PLACEMENT] = "groups do not tile the nodes",
    [PLAN_REJ_SEQ] = "sequence not divisible",
};

const char *plan_schedule_name(plan_schedule s)
{
    return (unsigned)s < PLAN_SCHED__COUNT ? sched_names[s] : "?";
}
const char *plan_layout_schedule_label(const plan_layout *l)
{
    return l->pp <= 1 && l->virtual_stages <= 1 ? "none" : plan_schedule_name(l->schedule);
}
const char *plan_recompute_name(plan_recompute r)
{
    return (unsigned)r < PLAN_RECOMP__COUNT ? recomp_names[r] : "?";
}
const char *plan_sharding_name(plan_sharding s)
{
    return (unsigned)s < PLAN_SHARD__COUNT ? shard_names[s] : "?";
}
const char *plan_precision_name(plan_precision p)
{
    return (unsigned)p < PLAN_PREC__COUNT ? prec_names[p] : "?";
}
const char *plan_attn_name(plan_attn a)
{
    return (unsigned)a < PLAN_ATTN__COUNT ? attn_names[a] : "?";
}
const char *plan_objective_name(plan_objective o)
{
    return (unsigned)o < PLAN_OBJ__COUNT ? obj_names[o] : "?";
}
const char *plan_reject_name(plan_reject r)
{
    return (unsigned)r < PLAN_REJ__COUNT ? reject_names[r] : "?";
}

/* Find s in names[0..n); the error lists the allowed names. */
static int parse_name(const char *what, const char *s, const char *const *names, int n,
                      int *out, st_err *err)
{
    for (int i = 0; i < n; i++)
        if (s && strcasecmp(s, names[i]) == 0) {
            *out = i;
            return ST_OK;
        }
    char allowed[160] = "";
    for (int i = 0; i < n; i++) {
        strncat(allowed, names[i], sizeof allowed - strlen(allowed) - 1);
        if (i + 1 < n)
            strncat(allowed, ", ", sizeof allowed - strlen(allowed) - 1);
    }
    return ST_RAISE(err, ST_EINVAL, "%s '%s': allowed are %s", what, s ? s : "", allowed);
}

int plan_schedule_parse(const char *s, plan_schedule *out, st_err *err)
{
    int v = 0;
    /* SMP's pipeline names and the Megatron/zero-bubble ones. */
    if (s && strcasecmp(s, "1f1b") == 0)
        s = "interleaved";
    if (s && strcasecmp(s, "gpipe") == 0)
        s = "simple";
    int rc = parse_name("--schedule", s, sched_names, PLAN_SCHED__COUNT, &v, err);
    if (rc == ST_OK)
        *out = (plan_schedule)v;
    return rc;
}

const char *plan_layout_schedule_key(const plan_layout *l)
{
    return l->pp <= 1 && l->virtual_stages <= 1 && l->schedule == PLAN_SCHED_INTERLEAVED
               ? "none"
               : plan_schedule_name(l->schedule);
}

int plan_layout_schedule_parse(const char *s, plan_schedule *out, int *one, st_err *err)
{
    *one = s && strcmp(s, "none") == 0;
    if (*one) {
        *out = PLAN_SCHED_INTERLEAVED;
        return ST_OK;
    }
    return plan_schedule_parse(s, out, err);
}

int plan_recompute_parse(const char *s, plan_recompute *out, st_err *err)
{
    int v = 0;
    int rc = parse_name("--recompute", s, recomp_names, PLAN_RECOMP__COUNT, &v, err);
    if (rc == ST_OK)
        *out = (plan_recompute)v;
    return rc;
}

/* MaxText's named remat policies (layers/decoders.py get_remat_policy:
 * jax.checkpoint_policies.save_only_these_names of each). */
static const struct {
    const char *name;
    int saved;
} remat_policies[] = {
    {"full", 0},
    {"save_dot_with_context_except_mlp", PLAN_SAVE_QKV | PLAN_SAVE_OUT | PLAN_SAVE_CONTEXT},
    {"save_dot_except_mlpwi", PLAN_SAVE_QKV | PLAN_SAVE_OUT | PLAN_SAVE_MLPWO},
    {"save_dot_except_mlp", PLAN_SAVE_QKV | PLAN_SAVE_OUT},
    {"save_qkv_proj", PLAN_SAVE_QKV},
    {"save_out_proj", PLAN_SAVE_OUT},
};
#define NREMAT ((int)(sizeof remat_policies / sizeof remat_policies[0]))

int plan_remat_policy_parse(const char *s, int *saved, st_err *err)
{
    for (int i = 0; s && i < NREMAT; i++)
        if (strcmp(s, remat_policies[i].name) == 0) {
            *saved = remat_policies[i].saved;
            return ST_OK;
        }
    char list[200] = "";
    for (int i = 0; i < NREMAT; i++) {
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", remat_policies[i].name);
    }
    return ST_RAISE(err, ST_EINVAL, "--remat-policy '%s': allowed: %s", s ? s : "", list);
}

const char *plan_remat_policy_at(int i, int *saved)
{
    if (i < 0 || i >= NREMAT)
        return NULL;
    *saved = remat_policies[i].saved;
    return remat_policies[i].name;
}

const char *plan_remat_policy_name(int saved)
{
    for (int i = 0; i < NREMAT; i++)
        if (remat_policies[i].saved == saved)
            return remat_policies[i].name;
    return NULL;
}

int plan_sharding_parse(const char *s, plan_sharding *out, st_err *err)
{
    int v = 0;
    /* ZeRO stage names are accepted too (Rajbhandari et al. 2020). */
    static const char *const zero[] = {"zero0", "zero1", "zero2", "zero3"};
    for (int i = 0; i < 4; i++)
        if (s && strcasecmp(s, zero[i]) == 0) {
            *out = (plan_sharding)i;
            return ST_OK;
        }
    int rc = parse_name("--sharding", s, shard_names, PLAN_SHARD__COUNT, &v, err);
    if (rc == ST_OK)
        *out = (plan_sharding)v;
    return rc;
}

int plan_precision_parse(const char *s, plan_precision *out, st_err *err)
{
    int v = 0;
    int rc = parse_name("--precision", s, prec_names, PLAN_PREC__COUNT, &v, err);
    if (rc == ST_OK)
        *out = (plan_precision)v;
    return rc;
}

int plan_attn_parse(const char *s, plan_attn *out, st_err *err)
{
    int v = 0;
    int rc = parse_name("attention", s, attn_names, PLAN_ATTN__COUNT, &v, err);
    if (rc == ST_OK)
        *out = (plan_attn)v;
    return rc;
}

int plan_precision_half(plan_precision p)
{
    return p == PLAN_PREC_BF16 || p == PLAN_PREC_FP16;
}

int plan_objective_parse(const char *s, plan_objective *out, st_err *err)
{
    int v = 0;
    int rc = parse_name("--objective", s, obj_names, PLAN_OBJ__COUNT, &v, err);
    if (rc == ST_OK)
        *out = (plan_objective)v;
    return rc;
}

int plan_placement_parse(const char *s, char out[4], st_err *err)
{
    /* SMP placement_strategy: "cluster" keeps a model replica's ranks close
     * (TP innermost, DP outermost), "spread" spreads them (DP innermost). */
    if (s && strcasecmp(s, "cluster") == 0)
        s = "DPT";
    else if (s && strcasecmp(s, "spread") == 0)
        s = "TPD";
    if (!s || strlen(s) != 3)
        goto bad;
    char u[4] = {0};
    int seen_d = 0, seen_p = 0, seen_t = 0;
    for (int i = 0; i < 3; i++) {
        char c = s[i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        seen_d += c == 'D';
        seen_p += c == 'P';
        seen_t += c == 'T';
        u[i] = c;
    }
    if (seen_d != 1 || seen_p != 1 || seen_t != 1)
        goto bad;
    memcpy(out, u, 4);
    return ST_OK;
bad:
    return ST_RAISE(err, ST_EINVAL,
                    "--placement '%s': allowed are cluster, spread, or a permutation of D, P, T "
                    "(outermost first, e.g. DPT)",
                    s ? s : "");
}

void plan_layout_default(plan_layout *l)
{
    memset(l, 0, sizeof *l);
    l->tp = l->pp = l->dp = l->cp = 1;
    l->micro_batch = 1;
    l->microbatches = 1;
    l->active_microbatches = 3; /* SMP default: partitions + 2 */
    l->schedule = PLAN_SCHED_INTERLEAVED;
    l->virtual_stages = 1;
    l->recompute = PLAN_RECOMP_NONE;
    l->recompute_group = 1;
    l->sharding = PLAN_SHARD_NONE;
    memcpy(l->placement, "DPT", 4);
    l->global_batch = 1;
    l->precision = PLAN_PREC_BF16;
    l->framework = PLAN_FW_DEFAULT;
    /* neutral behaviour: the plain attention, gradients in PyTorch DDP's
     * 25 MB buckets (bucket_cap_mb) overlapped with the backward ... */
    l->attention = PLAN_ATTN_UNFUSED;
    l->dp_overlap = 1;
    l->dp_bucket_bytes = 25e6;
    /* ... and the default framework's, when profiles are installed (a
     * program that plans installs them first; the executor's rank program
     * reads its layout whole from CONFIG.json and installs none) */
    if (plan_nframeworks > 0)
        plan_framework_apply(plan_framework_get(PLAN_FW_DEFAULT), PLAN_FW_DEFAULT, l);
}

/* Megatron-LM's block method (--recompute-method block --recompute-num-
 * layers N, arguments.py: "recompute the input activations of only a set
 * number of individual Transformer layers per pipeline stage and do the
 * rest without any recomputing"; NeMo activations_checkpoint_method block,
 * activations_checkpoint_num_layers) recomputes the first N layers of each
 * model chunk (Megatron-Core TransformerBlock._checkpointed_forward): of a
 * chunk's L / (pp v) layers, N on average over the stages. */
double plan_layout_recompute_share(const plan_model *m, const plan_layout *l)
{
    if (l->recompute != PLAN_RECOMP_FULL)
        return 0.0;
    if (l->recompute_layers <= 0)
        return 1.0;
    double chunk = (double)m->layers / ((double)l->pp * (double)l->virtual_stages);
    return chunk > 0 ? fmin(1.0, (double)l->recompute_layers / chunk) : 1.0;
}

void plan_config_default(plan_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->schedule = -1;
    cfg->recompute = -1;
    cfg->sharding = -1;
    cfg->sequence_parallel = -1;
    cfg->offload_activations = -1;
    cfg->prescaled_batch = -1;
    cfg->flash_attention = -1;
    cfg->dp_overlap = -1;
    cfg->fp32_grads = -1;
    cfg->tp_overlap = -1;
    cfg->pp_overlap = -1;
    cfg->launch_blocking = -1;
    cfg->attention = -1;
    cfg->framework = PLAN_FW_DEFAULT;
    cfg->precision = -1;
    cfg->objective = PLAN_OBJ_TIME;
    cfg->top_k = 5;
}

void plan_config_from_layout(plan_config *cfg, const plan_layout *l)
{
    plan_config_default(cfg);
    cfg->tp = l->tp;
    cfg->pp = l->pp;
    cfg->dp = l->dp;
    cfg->cp = l->cp;
    cfg->micro_batch = l->micro_batch;
    cfg->microbatches = l->microbatches;
    cfg->active_microbatches = l->active_microbatches;
    cfg->virtual_stages = l->virtual_stages;
    cfg->schedule = (int)l->schedule;
    cfg->recompute = (int)l->recompute;
    cfg->recompute_group = l->recompute_group;
    cfg->recompute_layers = l->recompute_layers;
    cfg->recompute_saved = l->recompute_saved;
    cfg->compiled = l->compiled;
    cfg->fused_pointwise = l->fused_pointwise;
    cfg->sharding = (int)l->sharding;
    cfg->sequence_parallel = l->sequence_parallel;
    cfg->offload_activations = l->offload_activations;
    cfg->prescaled_batch = l->prescaled_batch;
    cfg->flash_attention = l->flash_attention;
    cfg->attention = (int)l->attention;
    cfg->dp_overlap = l->dp_overlap;
    cfg->fp32_grads = l->fp32_grads;
    cfg->tp_overlap = l->tp_overlap;
    cfg->pp_overlap = l->pp_overlap;
    cfg->dp_bucket_bytes = l->dp_bucket_bytes;
    cfg->launch_blocking = l->launch_blocking;
    cfg->framework = l->framework;
    cfg->precision = (int)l->precision;
    memcpy(cfg->placement, l->placement, 4);
    cfg->global_batch = l->global_batch;
    cfg->top_k = 1;
}

int64_t plan_default_global_batch(const plan_model *m, const plan_cluster *c)
{
    /* Brown et al. 2020, Table 2.1: batch size in tokens by model size. */
    static const double params[] = {125e6, 350e6, 760e6, 1.3e9, 2.7e9, 6.7e9, 13e9, 175e9};
    static const double tokens[] = {0.5e6, 0.5e6, 0.5e6, 1e6, 1e6, 2e6, 2e6, 3.2e6};
    const int n = (int)(sizeof params / sizeof params[0]);
    double p = (double)m->params, tok;
    if (p <= params[0])
        tok = tokens[0];
    else if (p >= params[n - 1])
        tok = tokens[n - 1];
    else {
        int i = 0;
        while (p > params[i + 1])
            i++;
        double f = log(p / params[i]) / log(params[i + 1] / params[i]);
        tok = tokens[i] + f * (tokens[i + 1] - tokens[i]);
    }
    double seqs = tok / (double)m->seq;
    int64_t g = c->gpus;
    int64_t b = (int64_t)llround(seqs / (double)g) * g;
    return b < g ? g : b;
}
