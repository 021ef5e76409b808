/*
 * plan_request.h: what a plan request (the command line's model and layout
 * flags) comes to before any search: the architecture it names, a model
 * shape with its size overrides applied, and the fixed layout knobs no
 * search could honour, refused with the flag named. Pure: no files.
 */
#ifndef SMD_PLAN_REQUEST_H
#define SMD_PLAN_REQUEST_H

#include "planner/plan.h"

/* Sizes a request sets over a model's own. */
typedef struct plan_model_overrides {
    int64_t layers, hidden, heads, kv_heads, ffn, seq, vocab; /* 0: unset */
    int64_t head_dim;            /* 0: unset */
    int64_t window;              /* sliding window, tokens: -1 unset, 0 none */
    int window_pattern;          /* every Nth layer attends globally: -1 unset */
    int dropout;                 /* -1 unset, 0 off, 1 on */
} plan_model_overrides;

/* The architecture arch_name names ("gpt" or "llama", any case). Without a
 * name: gpt, or llama when family is "llama" (a family names its
 * architecture). ST_EINVAL naming --arch for another name. */
int plan_request_arch(const char *arch_name, const char *family, plan_arch *out, st_err *err);

/* A model whose layers, hidden and heads the overrides will give: named
 * "custom", seq 2048 (GPT-3's training length, Brown et al. 2020), vocab
 * 32000 for llama and 50257 for gpt, embeddings tied for gpt. */
void plan_request_custom_model(plan_arch arch, plan_model *out);

/* Apply ov over m and finish it (plan_model_finish): kv heads follow the
 * heads unless given, gpt's ffn follows the hidden (4h), llama's defaults to
 * SwiGLU's 2/3 x 4h in multiples of 256. When note_source and a size
 * changed, m->source says the sizes were overridden. Returns
 * plan_model_finish's status. */
int plan_request_override(plan_model *m, const plan_model_overrides *ov, int note_source,
                          st_err *err);

/* Refuse the layout knobs cfg fixes that no search could honour on m and
 * c (a TP that does not divide the heads, more pipeline chunks than layers,
 * virtual stages without the virtual schedule, microbatches the virtual
 * schedule cannot split), and turn batch_size (SMP's batch per
 * model-parallel group, sequences; 0: unset) into cfg->global_batch =
 * batch_size x dp, dp from --dp or from the GPUs over TP x PP x CP.
 * ST_EINVAL naming the flag. */
int plan_request_check_layout(const plan_model *m, const plan_cluster *c, int64_t batch_size,
                              plan_config *cfg, st_err *err);

#endif
