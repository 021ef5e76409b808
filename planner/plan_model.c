/*
 * plan_model.c: exact parameter counts and FLOPs per token of a model shape.
 *
 * q = heads x head_dim is the width of the queries and of the attention
 * output; it is h unless the head size is given apart from the hidden size
 * (Gemma 2: head_dim 256 with h 3584 and 16 heads, q = 4096; Gemma Team
 * 2024, Gemma 2, Table 1; transformers Gemma2Attention: q_proj h x heads
 * head_dim, o_proj heads head_dim x h).
 * GPT (Megatron-LM's GPT-2/3 layer): per layer
 *   QKV  h*(q + 2*kv*d) weights + (q + 2*kv*d) biases     (d = head dim; kv = heads for MHA)
 *   proj q*h + h;  MLP h*f + f + f*h + h;  two LayerNorms 2*2h
 *   = 4h^2 + 2hf + f + 9h with q = h and kv = heads; with f = 4h this is 12h^2 + 13h,
 *   the per-layer term of Narayanan et al. 2021, Sec. 5.1 (P = 12lh^2(1 + 13/12h + (V+s)/12lh)).
 *   Embedding V*h + s*h (learned positions), final LayerNorm 2h, LM head tied.
 * Llama (Touvron et al. 2023): per layer
 *   q, o: h*q each; k, v: h*kv*d each; SwiGLU MLP 3*h*f; two RMSNorms h each; no biases.
 * The MLP's matrix count follows the model's MLP (plan_mlp), not its
 * attention: a gated MLP has three h x f matrices (Shazeer 2020, GLU
 * variants: SwiGLU and Gemma's GeGLU alike), a plain one two (Nemotron-4's
 * squared ReLU is plain and its attention grouped).
 *   Embedding V*h, untied LM head V*h, final RMSNorm h.
 *   Check: Llama-2-7B (h 4096, f 11008, l 32, V 32000) = 6,738,415,616.
 *   Gemma 2 (tied, V 256000) counts 2,614,222,080 (2B), 9,241,404,928
 *   (9B) and 27,226,704,384 (27B) here, against the published totals 2.61B,
 *   9.24B and 27.2B (the parameter counts of google/gemma-2-2b, -9b and
 *   -27b on Hugging Face). The four RMSNorms of Gemma 2's layer (pre- and
 *   post-norm of each sub-layer, Gemma 2 Sec. 2) are two more h per layer
 *   than counted: 2*26*2304 = 119,808 in the 2B, under 0.01 %.
 *
 * FLOPs: a matmul weight costs 2 FLOPs per token forward; attention adds the
 * score and value products, 2*s*q each per token (full s x s as Narayanan et
 * al. 2021 Eq. 3 counts it), 2*min(s, W)*q each on a layer with a sliding
 * window W (MaxText's count for Gemma 2's local layers); backward is twice
 * forward (same source). Gemma 2's logit soft-capping (a tanh on every
 * attention score and on the final logits, Gemma 2 Sec. 2) adds a few
 * elementwise operations per score against the 4 head_dim FLOPs of its
 * products: well under 1 %, not counted.
 */
#include "planner/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t plan_model_head_dim(const plan_model *m)
{
    return m->head_dim > 0 ? m->head_dim : m->hidden / m->heads;
}

plan_model plan_model_resolved(const plan_model *m)
{
    plan_model r = *m;
    if (r.heads > 0)
        r.head_dim = plan_model_head_dim(m);
    r.mlp = plan_model_gated(m) ? PLAN_MLP_GATED : PLAN_MLP_PLAIN;
    return r;
}

int64_t plan_model_attn_width(const plan_model *m)
{
    return m->heads * plan_model_head_dim(m);
}

int64_t plan_model_window(const plan_model *m)
{
    return m->sliding_window > 0 && m->sliding_window < m->seq ? m->sliding_window : m->seq;
}

int64_t plan_model_local_layers(const plan_model *m)
{
    if (plan_model_window(m) >= m->seq)
        return 0;
    int64_t n = m->sliding_window_pattern;
    return n > 0 ? m->layers - m->layers / n : m->layers;
}

int plan_model_gated(const plan_model *m)
{
    return m->mlp == PLAN_MLP_GATED || (m->mlp == PLAN_MLP_ARCH && m->arch == PLAN_ARCH_LLAMA);
}

int plan_model_dropout(const plan_model *m)
{
    return m->dropout == PLAN_DROPOUT_ON || (m->dropout == PLAN_DROPOUT_ARCH && m->arch == PLAN_ARCH_GPT);
}

int64_t plan_model_layer_matmul_params(const plan_model *m)
{
    int64_t h = m->hidden, d = plan_model_head_dim(m), kvd = m->kv_heads * d;
    int64_t q = plan_model_attn_width(m);
    int64_t attn = h * (q + 2 * kvd) + q * h;
    int64_t mlp = (plan_model_gated(m) ? 3 : 2) * h * m->ffn;
    return attn + mlp;
}

static int check_range(const char *what, int64_t v, int64_t max, st_err *err)
{
    if (v <= 0)
        return ST_RAISE(err, ST_EINVAL, "%s %lld: must be a positive whole number", what,
                        (long long)v);
    if (v > max)
        return ST_RAISE(err, ST_ERANGE, "%s %lld: larger than the supported maximum %lld", what,
                        (long long)v, (long long)max);
    return ST_OK;
}

int plan_model_finish(plan_model *m, st_err *err)
{
    int rc;
    if ((rc = check_range("layers", m->layers, PLAN_MAX_LAYERS, err)) ||
        (rc = check_range("hidden", m->hidden, PLAN_MAX_HIDDEN, err)) ||
        (rc = check_range("heads", m->heads, PLAN_MAX_HEADS, err)) ||
        (rc = check_range("kv-heads", m->kv_heads, PLAN_MAX_HEADS, err)) ||
        (rc = check_range("ffn", m->ffn, 16 * (int64_t)PLAN_MAX_HIDDEN, err)) ||
        (rc = check_range("seq", m->seq, PLAN_MAX_SEQ, err)) ||
        (rc = check_range("vocab", m->vocab, PLAN_MAX_VOCAB, err)))
        return rc;
    if (m->arch != PLAN_ARCH_GPT && m->arch != PLAN_ARCH_LLAMA)
        return ST_RAISE(err, ST_EINVAL, "arch %d: allowed are gpt, llama", (int)m->arch);
    if (m->head_dim < 0)
        return ST_RAISE(err, ST_EINVAL, "head-dim %lld: must be a positive whole number",
                        (long long)m->head_dim);
    if (m->head_dim == 0 && m->hidden % m->heads != 0)
        return ST_RAISE(err, ST_EINVAL, "heads %lld: must divide hidden %lld (or give the head "
                        "size, head-dim)", (long long)m->heads, (long long)m->hidden);
    if (m->head_dim > PLAN_MAX_ATTN_WIDTH / m->heads)
        return ST_RAISE(err, ST_ERANGE, "head-dim %lld: heads x head-dim = %lld x %lld is larger "
                        "than the supported maximum %lld", (long long)m->head_dim,
                        (long long)m->heads, (long long)m->head_dim,
                        (long long)PLAN_MAX_ATTN_WIDTH);
    if (m->head_dim > 0 && m->head_dim * m->heads == m->hidden)
        m->head_dim = 0; /* the derived size: kept derived (plan_model.head_dim) */
    if (m->sliding_window < 0 || m->sliding_window > PLAN_MAX_SEQ)
        return ST_RAISE(err, m->sliding_window < 0 ? ST_EINVAL : ST_ERANGE,
                        "sliding-window %lld: allowed are 0 (none) to %lld tokens",
                        (long long)m->sliding_window, (long long)PLAN_MAX_SEQ);
    if (m->sliding_window_pattern < 0 || m->sliding_window_pattern > PLAN_MAX_LAYERS)
        return ST_RAISE(err, m->sliding_window_pattern < 0 ? ST_EINVAL : ST_ERANGE,
                        "sliding-window-pattern %d: allowed are 0 (every layer local) to %d",
                        m->sliding_window_pattern, PLAN_MAX_LAYERS);
    if (m->heads % m->kv_heads != 0)
        return ST_RAISE(err, ST_EINVAL, "kv-heads %lld: must divide heads %lld",
                        (long long)m->kv_heads, (long long)m->heads);

    if ((unsigned)m->mlp > PLAN_MLP_GATED)
        return ST_RAISE(err, ST_EINVAL, "mlp %d: allowed are plain, gated", (int)m->mlp);
    if (m->mlp == PLAN_MLP_ARCH)
        m->mlp = m->arch == PLAN_ARCH_LLAMA ? PLAN_MLP_GATED : PLAN_MLP_PLAIN;
    if ((unsigned)m->dropout > PLAN_DROPOUT_OFF)
        return ST_RAISE(err, ST_EINVAL, "dropout %d: allowed are on, off", m->dropout);
    if (m->dropout == PLAN_DROPOUT_ARCH)
        m->dropout = m->arch == PLAN_ARCH_GPT ? PLAN_DROPOUT_ON : PLAN_DROPOUT_OFF;
    int64_t h = m->hidden, f = m->ffn, V = m->vocab, s = m->seq;
    int64_t d = plan_model_head_dim(m), kvd = m->kv_heads * d, q = m->heads * d;
    int64_t nmat = plan_model_gated(m) ? 3 : 2;
    if (m->arch == PLAN_ARCH_GPT) {
        int64_t qkv = h * (q + 2 * kvd) + (q + 2 * kvd);
        int64_t proj = q * h + h;
        int64_t mlp = nmat * h * f + (nmat - 1) * f + h;
        int64_t norms = 2 * 2 * h;
        m->params_layer = qkv + proj + mlp + norms;
        m->params_embedding = V * h + s * h;
        m->params_final_norm = 2 * h;
    } else {
        int64_t attn = 2 * h * q + 2 * h * kvd;
        int64_t mlp = nmat * h * f;
        int64_t norms = 2 * h;
        m->params_layer = attn + mlp + norms;
        m->params_embedding = V * h;
        m->params_final_norm = h;
    }
    m->params_head = m->tied_embedding ? 0 : V * h;
    m->params = m->layers * m->params_layer + m->params_embedding + m->params_head +
                m->params_final_norm;
    return ST_OK;
}

double plan_model_attn_fwd_flops_per_token(const plan_model *m)
{
    /* keys per query summed over the layers: s on a global layer, min(s, W)
     * on a local one */
    double local = (double)plan_model_local_layers(m), L = (double)m->layers;
    double keys = ((L - local) * (double)m->seq + local * (double)plan_model_window(m)) / L;
    return 4.0 * keys * (double)plan_model_attn_width(m);
}

double plan_model_layer_fwd_flops_per_token(const plan_model *m)
{
    /* Narayanan et al. 2021, Eq. 3 derivation: 24h^2 (GEMMs, f = 4h) + 4sh (attention). */
    return 2.0 * (double)plan_model_layer_matmul_params(m) + plan_model_attn_fwd_flops_per_token(m);
}

double plan_model_head_fwd_flops_per_token(const plan_model *m)
{
    return 2.0 * (double)m->hidden * (double)m->vocab;
}

double plan_model_train_flops_per_token(const plan_model *m)
{
    return 3.0 * ((double)m->layers * plan_model_layer_fwd_flops_per_token(m) +
                  plan_model_head_fwd_flops_per_token(m));
}

void plan_presets_free(plan_presets *p)
{
    if (!p)
        return;
    free(p->v);
    p->v = NULL;
    p->n = 0;
}
