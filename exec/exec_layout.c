/*
 * exec_layout.c: a layout and a model as the executor runs them
 * (exec_layout.h).
 */
#include "exec/exec_layout.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "planner/plan_framework.h"

/* Layout defaults when the options leave a knob open and nothing is
 * searched: one sequence per microbatch, and 2 x pp microbatches, so a 1F1B
 * pipeline has twice its depth in flight (bubble (p - 1) / m, Huang et al.
 * 2019: under a half). */
#define DEFAULT_MICROBATCHES_PER_STAGE 2

static void catf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void catf(char *buf, size_t n, const char *fmt, ...)
{
    size_t u = strlen(buf);
    if (u + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + u, n - u, fmt, ap);
    va_end(ap);
}

/* The executor's profile on a device (data/frameworks.json): "smdplan" on the
 * CPU, "smdplan-cuda" on the GPU (what differs there, with its sources). */
int exec_layout_profile(int cuda)
{
    int idx = PLAN_FW_DEFAULT;
    st_err ignore = {0};
    plan_framework_find(cuda ? "smdplan-cuda" : "smdplan", &idx, &ignore);
    return idx;
}

/* The executor's own behaviour (the device's profile), with the knobs
 * CONFIG.json carries kept as the plan set them; the attention kernel as
 * --flash-attention says (the profile's otherwise), the device's precision:
 * fp32 on the CPU, bf16 with fp32 master weights on the GPU. */
void exec_layout_apply(plan_layout *l, int cuda, int flash)
{
    int idx = exec_layout_profile(cuda);
    int dp_overlap = l->dp_overlap;
    double bucket = l->dp_bucket_bytes;
    char placement[4];
    memcpy(placement, l->placement, 4);
    plan_framework_apply(plan_framework_get(idx), idx, l);
    l->dp_overlap = dp_overlap;
    l->dp_bucket_bytes = bucket;
    memcpy(l->placement, placement, 4);
    if (flash >= 0)
        l->flash_attention = flash;
    l->precision = cuda ? PLAN_PREC_BF16 : PLAN_PREC_FP32;
    l->prescaled_batch = 0;
}

/* A layout from the flags alone (no search): the knobs given, the defaults
 * above for the others, the device's profile's behaviour. */
int exec_layout_from_config(const plan_config *cfg, int cuda, plan_layout *l, st_err *err)
{
    int idx = exec_layout_profile(cuda);
    const plan_framework *fw = plan_framework_get(idx);
    plan_layout_default(l);
    plan_framework_apply(fw, idx, l);
    l->tp = cfg->tp > 0 ? cfg->tp : 1;
    l->pp = cfg->pp > 0 ? cfg->pp : 1;
    l->dp = cfg->dp > 0 ? cfg->dp : 1;
    l->cp = cfg->cp > 0 ? cfg->cp : 1;
    l->micro_batch = cfg->micro_batch > 0 ? cfg->micro_batch : 1;
    if (cfg->microbatches > 0)
        l->microbatches = cfg->microbatches;
    else if (cfg->global_batch > 0) {
        int64_t per = (int64_t)l->dp * l->micro_batch;
        if (cfg->global_batch % per != 0)
            return ST_RAISE(err, ST_EINVAL, "--global-batch %lld: not a multiple of dp %d x "
                            "micro-batch %d", (long long)cfg->global_batch, l->dp, l->micro_batch);
        l->microbatches = (int)(cfg->global_batch / per);
    } else
        l->microbatches = DEFAULT_MICROBATCHES_PER_STAGE * l->pp;
    l->schedule = cfg->schedule >= 0 ? (plan_schedule)cfg->schedule : PLAN_SCHED_INTERLEAVED;
    l->virtual_stages = cfg->virtual_stages > 0 ? cfg->virtual_stages
                        : l->schedule == PLAN_SCHED_VIRTUAL ? 2 : 1;
    if (l->schedule == PLAN_SCHED_VIRTUAL && l->pp > 1 && l->microbatches % l->pp != 0)
        return ST_RAISE(err, ST_EINVAL, "--microbatches %d: must be a multiple of --pp %d for the "
                        "virtual schedule", l->microbatches, l->pp);
    l->active_microbatches = cfg->active_microbatches > 0 ? cfg->active_microbatches
                                                          : l->microbatches;
    l->recompute = cfg->recompute >= 0 ? (plan_recompute)cfg->recompute : PLAN_RECOMP_NONE;
    l->recompute_group = cfg->recompute_group > 0 ? cfg->recompute_group : 1;
    l->sharding = cfg->sharding >= 0 ? (plan_sharding)cfg->sharding : PLAN_SHARD_NONE;
    l->sequence_parallel = cfg->sequence_parallel >= 0 ? cfg->sequence_parallel : 0;
    l->offload_activations = cfg->offload_activations > 0;
    if (cfg->placement[0])
        memcpy(l->placement, cfg->placement, 4);
    if (cfg->dp_overlap >= 0)
        l->dp_overlap = cfg->dp_overlap;
    if (cfg->dp_bucket_bytes > 0)
        l->dp_bucket_bytes = cfg->dp_bucket_bytes;
    l->global_batch = (int64_t)l->dp * l->micro_batch * l->microbatches;
    return ST_OK;
}

/* Shrink m by sc, keeping what the layout needs; *said gets what changed. */
int exec_model_scale(const exec_scale *sc, const plan_layout *l, plan_model *m, char *said,
                     size_t n, st_err *err)
{
    said[0] = '\0';
    plan_model o = *m;
    struct { const char *key; int64_t want; int64_t *field; } v[] = {
        {"layers", sc->layers, &m->layers}, {"hidden", sc->hidden, &m->hidden},
        {"heads", sc->heads, &m->heads},    {"kv_heads", sc->kv_heads, &m->kv_heads},
        {"ffn", sc->ffn, &m->ffn},          {"seq", sc->seq, &m->seq},
        {"vocab", sc->vocab, &m->vocab}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i].want > *v[i].field)
            return ST_RAISE(err, ST_EINVAL, "--scale %s=%lld: larger than the model's %lld (--scale "
                            "only shrinks)", v[i].key, (long long)v[i].want,
                            (long long)*v[i].field);
    if (sc->layers)
        m->layers = sc->layers;
    if (sc->seq)
        m->seq = sc->seq;
    if (sc->vocab)
        m->vocab = sc->vocab;
    if (sc->heads)
        m->heads = sc->heads;
    if (sc->kv_heads)
        m->kv_heads = sc->kv_heads;
    else if (sc->heads && o.kv_heads == o.heads)
        m->kv_heads = m->heads; /* multi-head attention stays multi-head */
    else if (sc->heads && m->kv_heads > m->heads)
        m->kv_heads = m->heads;
    if (sc->hidden) {
        m->hidden = sc->hidden;
        if (!sc->ffn) { /* the MLP keeps its ratio to hidden, split evenly by TP */
            int64_t f = (int64_t)llround((double)o.ffn * (double)sc->hidden / (double)o.hidden);
            int64_t q = l->tp > 0 ? l->tp : 1;
            f = (f + q - 1) / q * q;
            m->ffn = f < q ? q : f;
        }
    }
    if (sc->ffn)
        m->ffn = sc->ffn;
    if (m->hidden % m->heads != 0)
        return ST_RAISE(err, ST_EINVAL, "--scale: hidden %lld is not divisible by the %lld heads; "
                        "give heads=N too (e.g. heads=%lld)", (long long)m->hidden,
                        (long long)m->heads,
                        (long long)(m->hidden >= 64 ? m->hidden / 64 : 1));
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        int64_t before = *(int64_t *)((char *)&o + ((char *)v[i].field - (char *)m));
        if (before != *v[i].field)
            catf(said, n, "%s%s %lld -> %lld", said[0] ? ", " : "", v[i].key, (long long)before,
                 (long long)*v[i].field);
    }
    if (said[0]) {
        char nm[PLAN_NAME_MAX];
        snprintf(nm, sizeof nm, "%.50s-scaled", o.name);
        snprintf(m->name, sizeof m->name, "%s", nm);
        size_t u = strlen(m->source);
        snprintf(m->source + u, sizeof m->source - u, "%s", "; reduced by smdplan exec --scale");
    }
    return plan_model_finish(m, err);
}

/* What the executor needs of the shape under the layout (one line naming
 * the value, and --scale as the way out). */
int exec_model_check(const plan_model *m, const plan_layout *l, const char *data_kind,
                     st_err *err)
{
    const char *hint = "; reduce it with --scale";
    int t = l->tp;
    /* the executor's attention (exec/, its CPU and CUDA devices) projects
     * hidden to hidden and attends over the whole sequence */
    if (plan_model_attn_width(m) != m->hidden)
        return ST_RAISE(err, ST_EINVAL, "model: head size %lld is not hidden / heads (%lld x %lld "
                        "heads = %lld, hidden %lld); the executor's attention projections are "
                        "hidden x hidden (plan it with smdplan, run it with another stack)",
                        (long long)plan_model_head_dim(m), (long long)plan_model_head_dim(m),
                        (long long)m->heads, (long long)plan_model_attn_width(m),
                        (long long)m->hidden);
    if (plan_model_local_layers(m) > 0)
        return ST_RAISE(err, ST_EINVAL, "model: sliding window of %lld tokens on %lld of %lld "
                        "layers; the executor attends over the whole sequence (--sliding-window 0 "
                        "runs it without the window)", (long long)m->sliding_window,
                        (long long)plan_model_local_layers(m), (long long)m->layers);
    if (m->heads % t != 0)
        return ST_RAISE(err, ST_EINVAL, "model: %lld heads do not divide by tp %d (the executor "
                        "splits heads over TP ranks)%s", (long long)m->heads, t, hint);
    if (m->kv_heads % t != 0)
        return ST_RAISE(err, ST_EINVAL, "model: %lld kv heads do not divide by tp %d (the executor "
                        "splits key/value heads over TP ranks)%s", (long long)m->kv_heads, t, hint);
    if (m->ffn % t != 0)
        return ST_RAISE(err, ST_EINVAL, "model: MLP size %lld does not divide by tp %d%s",
                        (long long)m->ffn, t, hint);
    if (m->vocab % t != 0)
        return ST_RAISE(err, ST_EINVAL, "model: vocabulary %lld does not divide by tp %d (the "
                        "embedding and loss are vocabulary-parallel)%s", (long long)m->vocab, t,
                        hint);
    if ((int64_t)l->pp * l->virtual_stages > m->layers)
        return ST_RAISE(err, ST_EINVAL, "model: %lld layers for pp %d x %d virtual stages (each "
                        "pipeline chunk needs a layer)%s", (long long)m->layers, l->pp,
                        l->virtual_stages, hint);
    if (l->sequence_parallel && m->seq % t != 0)
        return ST_RAISE(err, ST_EINVAL, "model: sequence %lld does not divide by tp %d with "
                        "sequence parallelism%s", (long long)m->seq, t, hint);
    if (m->arch == PLAN_ARCH_LLAMA && plan_model_head_dim(m) % 2 != 0)
        return ST_RAISE(err, ST_EINVAL, "model: head dimension %lld is odd; rotary positions rotate "
                        "pairs of dimensions%s", (long long)plan_model_head_dim(m), hint);
    if (!strcmp(data_kind, "text") && m->vocab < 256)
        return ST_RAISE(err, ST_EINVAL, "model: vocabulary %lld with --data text: a text file is "
                        "read as bytes, which needs a vocabulary of at least 256",
                        (long long)m->vocab);
    return ST_OK;
}

/* Knobs the executor does not run: refused by name (issue: never
 * ignored). */
int exec_layout_check(const plan_layout *l, int cuda, st_err *err)
{
    if (l->cp > 1)
        return ST_RAISE(err, ST_EINVAL, "layout: context parallel %d; the executor has no context "
                        "parallelism (cp must be 1)", l->cp);
    if (l->offload_activations)
        return ST_RAISE(err, ST_EINVAL, cuda ? "layout: activation offload; the executor does not "
                        "offload activations to the host (offload must be off)"
                        : "layout: activation offload; the CPU device keeps "
                        "activations in host memory already (offload must be off)");
    int idx = exec_layout_profile(cuda);
    char why[200];
    if (plan_framework_check(plan_framework_get(idx), l, why, sizeof why))
        return ST_RAISE(err, ST_EINVAL, "layout: %s", why);
    return ST_OK;
}
