/*
 * plan_request.c: a plan request's model and layout flags, checked and
 * applied before any search (see plan_request.h). The messages name the
 * command-line flags, as the search's own refusals do.
 */
#include "planner/plan_request.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define REQUEST_CUSTOM_SEQ 2048        /* GPT-3's training length (Brown et al. 2020) */
#define REQUEST_LLAMA_VOCAB 32000      /* Llama 1 and 2's tokenizer (Touvron et al. 2023) */
#define REQUEST_GPT_VOCAB 50257        /* GPT-2's BPE (Radford et al. 2019) */
#define REQUEST_LLAMA_FFN_MULTIPLE 256 /* Meta's reference llama/model.py, multiple_of */

int plan_request_arch(const char *arch_name, const char *family, plan_arch *out, st_err *err)
{
    *out = PLAN_ARCH_GPT;
    if (arch_name) {
        if (!strcasecmp(arch_name, "gpt"))
            *out = PLAN_ARCH_GPT;
        else if (!strcasecmp(arch_name, "llama"))
            *out = PLAN_ARCH_LLAMA;
        else
            return ST_RAISE(err, ST_EINVAL, "--arch '%s': allowed are gpt, llama", arch_name);
    } else if (family && !strcasecmp(family, "llama")) {
        *out = PLAN_ARCH_LLAMA;
    }
    return ST_OK;
}

void plan_request_custom_model(plan_arch arch, plan_model *out)
{
    memset(out, 0, sizeof *out);
    out->arch = arch;
    snprintf(out->name, sizeof out->name, "custom");
    snprintf(out->source, sizeof out->source, "sizes given on the command line");
    out->seq = REQUEST_CUSTOM_SEQ;
    out->vocab = arch == PLAN_ARCH_LLAMA ? REQUEST_LLAMA_VOCAB : REQUEST_GPT_VOCAB;
    out->tied_embedding = arch == PLAN_ARCH_GPT;
}

/* *field = v when v is set (v != unset); 1 when it was. */
static int set(int64_t *field, int64_t v, int64_t unset)
{
    if (v == unset)
        return 0;
    *field = v;
    return 1;
}

int plan_request_override(plan_model *m, const plan_model_overrides *ov, int note_source,
                          st_err *err)
{
    int changed = 0;
    changed |= set(&m->layers, ov->layers, 0);
    changed |= set(&m->hidden, ov->hidden, 0);
    changed |= set(&m->heads, ov->heads, 0);
    changed |= set(&m->kv_heads, ov->kv_heads, 0);
    changed |= set(&m->ffn, ov->ffn, 0);
    changed |= set(&m->seq, ov->seq, 0);
    changed |= set(&m->vocab, ov->vocab, 0);
    /* a head size read from a config stays with --hidden or --heads; one
     * derived from them follows them (plan_model.head_dim) */
    changed |= set(&m->head_dim, ov->head_dim, 0);
    changed |= set(&m->sliding_window, ov->window, -1);
    if (ov->window_pattern >= 0) {
        m->sliding_window_pattern = ov->window_pattern;
        changed = 1;
    }
    if (ov->dropout >= 0)
        m->dropout = ov->dropout ? PLAN_DROPOUT_ON : PLAN_DROPOUT_OFF;
    if (!ov->kv_heads && (ov->heads || !m->kv_heads))
        m->kv_heads = m->heads;
    if (!ov->ffn && (ov->hidden || !m->ffn) && m->arch == PLAN_ARCH_GPT)
        m->ffn = 4 * m->hidden;
    if (!m->ffn && m->arch == PLAN_ARCH_LLAMA) /* Llama: 2/3 x 4h, multiple of 256 */
        m->ffn = ((8 * m->hidden / 3) + REQUEST_LLAMA_FFN_MULTIPLE - 1) /
                 REQUEST_LLAMA_FFN_MULTIPLE * REQUEST_LLAMA_FFN_MULTIPLE;
    if (changed && note_source) {
        size_t n = strlen(m->source);
        snprintf(m->source + n, sizeof m->source - n, "%s",
                 "; sizes overridden on the command line");
    }
    return plan_model_finish(m, err);
}

int plan_request_check_layout(const plan_model *m, const plan_cluster *c, int64_t batch_size,
                              plan_config *cfg, st_err *err)
{
    if (cfg->tp && (m->heads % cfg->tp != 0 ||
                    (m->kv_heads % cfg->tp != 0 && cfg->tp % m->kv_heads != 0)))
        return ST_RAISE(err, ST_EINVAL,
                        "--tp %d: must divide the %lld attention heads (and %lld kv heads)",
                        cfg->tp, (long long)m->heads, (long long)m->kv_heads);

    /* Layouts no search could make: say so rather than search. */
    int v = cfg->virtual_stages ? cfg->virtual_stages : 1;
    if (cfg->pp && (int64_t)cfg->pp * v > m->layers)
        return ST_RAISE(err, ST_EINVAL,
                        "--pp %d x --virtual-stages %d: more pipeline chunks than the %lld layers",
                        cfg->pp, v, (long long)m->layers);
    if (cfg->virtual_stages > 1 && cfg->schedule >= 0 && cfg->schedule != PLAN_SCHED_VIRTUAL)
        return ST_RAISE(err, ST_EINVAL, "--virtual-stages %d: only with --schedule virtual",
                        cfg->virtual_stages);
    if (cfg->schedule == PLAN_SCHED_VIRTUAL && cfg->pp && cfg->microbatches &&
        cfg->microbatches % cfg->pp != 0)
        return ST_RAISE(err, ST_EINVAL,
                        "--microbatches %d: must be a multiple of --pp %d for the virtual schedule",
                        cfg->microbatches, cfg->pp);

    /* --batch-size is SMP's per-model-parallel-group batch: global = N x dp. */
    if (!batch_size)
        return ST_OK;
    int dp = cfg->dp;
    if (!dp && cfg->tp && cfg->pp) {
        long mp = (long)cfg->tp * cfg->pp * (cfg->cp ? cfg->cp : 1);
        if (c->gpus % mp == 0)
            dp = (int)(c->gpus / mp);
    }
    if (!dp)
        return ST_RAISE(err, ST_EINVAL,
                        "--batch-size %lld: the data-parallel degree must be known; give --dp, or "
                        "--tp and --pp, or use --global-batch",
                        (long long)batch_size);
    cfg->global_batch = batch_size * dp;
    return ST_OK;
}
