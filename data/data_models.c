/*
 * data_models.c: the model presets (models.json) and Hugging Face config.json.
 *
 * models.json is a JSON array of presets, each
 *   {key, family, label, nominal_params, arch ("gpt"|"llama"), layers, hidden,
 *    heads, kv_heads, ffn, seq, vocab, tied_embedding, source}
 * with every field required and no others allowed (a misspelt field is an
 * error, not a silent default), and optionally
 *   reference {instances, tp, pp, microbatches, active_microbatches, sharding,
 *              recompute, recompute_group, prescaled_batch, batch_size, source}
 * the layout the preset's publisher trained it with (every field required;
 * sharding and recompute take the names --sharding and --recompute take),
 * and aliases [names]: other documented names of the same model, which a
 * published run may use (its source says where they are documented).
 * Each preset is finished (plan_model_finish) on load, so its exact parameter
 * count is known.
 *
 * A Hugging Face config.json is mapped onto the planner's two architectures:
 *   gpt   GPT-2, GPT-NeoX, GPT-J, OPT, BLOOM: n_layer / num_hidden_layers,
 *         n_embd / hidden_size, n_head / num_attention_heads, n_inner /
 *         intermediate_size / ffn_dim (absent or null: 4h), n_positions /
 *         max_position_embeddings, vocab_size.
 *   llama Llama, Mistral, Qwen2, Gemma 2: num_hidden_layers, hidden_size,
 *         num_attention_heads, num_key_value_heads (absent: = heads),
 *         intermediate_size, max_position_embeddings, vocab_size.
 * Either: head_dim (absent or null: hidden / heads), and sliding-window
 * attention from sliding_window and which layers use it (hf_window).
 * tie_word_embeddings, when absent, takes the transformers default of the
 * model type (tied: GPT-2, OPT, BLOOM, Gemma 2; untied: GPT-NeoX, GPT-J,
 * Llama, Mistral, Qwen2). The count is approximate where the planner's layer differs
 * from the model's, and the model's source says so: the gpt layer counts a
 * learned position table of seq x hidden, which GPT-NeoX and GPT-J (rotary)
 * and BLOOM (ALiBi) lack (BLOOM's embedding LayerNorm, 2h, is not counted;
 * its seq is seq_length or 2048, its training length);
 * GPT-J (parallel block) has no attention biases and one LayerNorm per layer;
 * Qwen2's q, k, v biases are not counted.
 * The difference is about s*h: under 0.5 % of the total from 1B parameters up.
 *
 * Errors name the file, the entry or field and what is allowed. Both readers
 * fill their output only on success; every path frees the cJSON tree.
 */
#include "common/text.h"
#include "data/data.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Smallest and largest nominal size a preset may state (plan_resolve.c's
 * accepted range). */
#define DATA_NOMINAL_MIN 1e6
#define DATA_NOMINAL_MAX 1e15
/* BLOOM's training sequence length, 2048 (Le Scao et al. 2022, BLOOM: A
 * 176B-Parameter Open-Access Multilingual Language Model, training
 * hyperparameters), for configs without seq_length: ALiBi has no position
 * table to read it from. */
#define DATA_BLOOM_SEQ 2048

/* ------------------------------------------------------------------------ */
/* JSON helpers                                                              */
/* ------------------------------------------------------------------------ */

/* Line and column (1-based) of byte offset off in text. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* Parse len bytes of text. The bytes are copied into a NUL-terminated buffer
 * first: the input need not be terminated, and cJSON never reads past it. */
static int parse_json(const char *text, size_t len, const char *name, cJSON **out, st_err *err)
{
    *out = NULL;
    if (len == 0)
        return ST_RAISE(err, ST_EPARSE, "%s: empty file, expected a JSON value", name);
    char *buf = malloc(len + 1);
    if (!buf)
        return ST_RAISE(err, ST_ENOMEM, "%s: cannot allocate %zu bytes", name, len + 1);
    memcpy(buf, text, len);
    buf[len] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (!root) {
        size_t off = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
        int line, col;
        line_col(buf, off, &line, &col);
        free(buf);
        return ST_RAISE(err, ST_EPARSE, "%s: malformed JSON at line %d, column %d (byte %zu)",
                        name, line, col, off);
    }
    free(buf);
    *out = root;
    return ST_OK;
}

/* A whole number in [1, max] from a JSON number; ctx and field name it. */
static int json_int(const cJSON *it, const char *ctx, const char *field, int64_t max,
                    int64_t *out, st_err *err)
{
    if (!cJSON_IsNumber(it))
        return ST_RAISE(err, ST_EINVAL, "%s: %s: must be a number", ctx, field);
    double v = it->valuedouble;
    if (isnan(v))
        return ST_RAISE(err, ST_EINVAL, "%s: %s: must be a number", ctx, field);
    if (v > (double)max)
        return ST_RAISE(err, ST_ERANGE, "%s: %s %g: larger than the supported maximum %lld", ctx,
                        field, v, (long long)max);
    if (v < 1.0)
        return ST_RAISE(err, ST_EINVAL, "%s: %s %g: must be a positive whole number", ctx,
                        field, v);
    if (v != floor(v))
        return ST_RAISE(err, ST_EINVAL, "%s: %s %g: must be a whole number", ctx, field, v);
    *out = (int64_t)v;
    return ST_OK;
}

/* A non-empty string shorter than len, copied into buf. */
static int json_str(const cJSON *it, const char *ctx, const char *field, char *buf, size_t len,
                    st_err *err)
{
    if (!cJSON_IsString(it) || !it->valuestring || !it->valuestring[0])
        return ST_RAISE(err, ST_EINVAL, "%s: %s: must be a non-empty string", ctx, field);
    if (strlen(it->valuestring) >= len)
        return ST_RAISE(err, ST_EINVAL, "%s: %s: longer than %zu characters", ctx, field,
                        len - 1);
    memcpy(buf, it->valuestring, strlen(it->valuestring) + 1);
    return ST_OK;
}

static int json_bool(const cJSON *it, const char *ctx, const char *field, int *out, st_err *err)
{
    if (!cJSON_IsBool(it))
        return ST_RAISE(err, ST_EINVAL, "%s: %s: must be true or false", ctx, field);
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return ST_OK;
}

/* Present and not null. */
static const cJSON *json_get(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return it && !cJSON_IsNull(it) ? it : NULL;
}

/* Re-raise an error of plan_model_finish with ctx in front. */
static int finish_in(plan_model *m, const char *ctx, st_err *err)
{
    st_err inner = {0};
    int rc = plan_model_finish(m, &inner);
    if (rc)
        return ST_RAISE(err, rc, "%s: %s", ctx, inner.msg);
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Presets                                                                   */
/* ------------------------------------------------------------------------ */

static const char *const preset_fields[] = {
    "key", "family", "label", "nominal_params", "arch", "layers", "hidden",
    "heads", "kv_heads", "ffn", "seq", "vocab", "tied_embedding", "source",
};
#define PRESET_NFIELDS ((int)(sizeof preset_fields / sizeof preset_fields[0]))

static int check_fields(const cJSON *o, const char *ctx, st_err *err)
{
    for (const cJSON *it = o->child; it; it = it->next) {
        int known = it->string && (strcmp(it->string, "reference") == 0 ||
                                   strcmp(it->string, "aliases") == 0 ||
                                   strcmp(it->string, "mlp") == 0);
        for (int i = 0; i < PRESET_NFIELDS && !known; i++)
            known = it->string && strcmp(it->string, preset_fields[i]) == 0;
        if (!known)
            return ST_RAISE(err, ST_EINVAL,
                            "%s: unknown field '%s' (fields: key, family, label, "
                            "nominal_params, arch, layers, hidden, heads, kv_heads, ffn, seq, "
                            "vocab, tied_embedding, source, reference, aliases, mlp)",
                            ctx, it->string ? it->string : "?");
    }
    for (int i = 0; i < PRESET_NFIELDS; i++)
        if (!cJSON_GetObjectItemCaseSensitive(o, preset_fields[i]))
            return ST_RAISE(err, ST_EINVAL, "%s: missing field '%s'", ctx, preset_fields[i]);
    return ST_OK;
}

static int preset_nominal(const cJSON *o, const char *ctx, double *out, st_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "nominal_params");
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= DATA_NOMINAL_MIN) ||
        !(it->valuedouble <= DATA_NOMINAL_MAX))
        return ST_RAISE(err, ST_EINVAL, "%s: nominal_params: must be a number from 1e6 to 1e15",
                        ctx);
    *out = it->valuedouble;
    return ST_OK;
}

static int preset_arch(const cJSON *o, const char *ctx, plan_arch *out, st_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "arch");
    const char *s = cJSON_IsString(it) ? it->valuestring : NULL;
    if (s && strcmp(s, "gpt") == 0)
        *out = PLAN_ARCH_GPT;
    else if (s && strcmp(s, "llama") == 0)
        *out = PLAN_ARCH_LLAMA;
    else
        return ST_RAISE(err, ST_EINVAL, "%s: arch: must be \"gpt\" or \"llama\"", ctx);
    return ST_OK;
}

/* The feed-forward layer where it is not the architecture's own (optional):
 * "plain" (two matrices: GeLU, ReLU, squared ReLU) or "gated" (three:
 * SwiGLU, GeGLU). */
static int preset_mlp(const cJSON *o, const char *ctx, plan_mlp *out, st_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "mlp");
    if (!it)
        return ST_OK;
    const char *s = cJSON_IsString(it) ? it->valuestring : NULL;
    if (s && strcmp(s, "plain") == 0)
        *out = PLAN_MLP_PLAIN;
    else if (s && strcmp(s, "gated") == 0)
        *out = PLAN_MLP_GATED;
    else
        return ST_RAISE(err, ST_EINVAL, "%s: mlp: must be \"plain\" or \"gated\"", ctx);
    return ST_OK;
}

static int preset_shape(const cJSON *o, const char *ctx, plan_model *m, st_err *err)
{
    static const struct {
        const char *field;
        size_t off;
        int64_t max;
    } ints[] = {
        {"layers", offsetof(plan_model, layers), PLAN_MAX_LAYERS},
        {"hidden", offsetof(plan_model, hidden), PLAN_MAX_HIDDEN},
        {"heads", offsetof(plan_model, heads), PLAN_MAX_HEADS},
        {"kv_heads", offsetof(plan_model, kv_heads), PLAN_MAX_HEADS},
        {"ffn", offsetof(plan_model, ffn), 16 * (int64_t)PLAN_MAX_HIDDEN},
        {"seq", offsetof(plan_model, seq), PLAN_MAX_SEQ},
        {"vocab", offsetof(plan_model, vocab), PLAN_MAX_VOCAB},
    };
    int rc;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int64_t *dst = (int64_t *)((char *)m + ints[i].off);
        if ((rc = json_int(cJSON_GetObjectItemCaseSensitive(o, ints[i].field), ctx,
                           ints[i].field, ints[i].max, dst, err)))
            return rc;
    }
    return json_bool(cJSON_GetObjectItemCaseSensitive(o, "tied_embedding"), ctx,
                     "tied_embedding", &m->tied_embedding, err);
}

static const char *const ref_fields[] = {
    "instances", "tp", "pp", "microbatches", "active_microbatches", "sharding", "recompute",
    "recompute_group", "prescaled_batch", "batch_size", "source",
};
#define REF_NFIELDS ((int)(sizeof ref_fields / sizeof ref_fields[0]))

/* The publisher's layout: every field required, no others. */
static int preset_ref(const cJSON *o, const char *ctx, plan_preset_ref *r, st_err *err)
{
    char c[ST_MSG_MAX / 2];
    snprintf(c, sizeof c, "%.200s: reference", ctx);
    if (!cJSON_IsObject(o))
        return ST_RAISE(err, ST_EINVAL, "%s: must be an object", c);
    for (const cJSON *it = o->child; it; it = it->next) {
        int known = 0;
        for (int i = 0; i < REF_NFIELDS && !known; i++)
            known = it->string && strcmp(it->string, ref_fields[i]) == 0;
        if (!known)
            return ST_RAISE(err, ST_EINVAL,
                            "%s: unknown field '%s' (fields: instances, tp, pp, microbatches, "
                            "active_microbatches, sharding, recompute, recompute_group, "
                            "prescaled_batch, batch_size, source)",
                            c, it->string ? it->string : "?");
    }
    for (int i = 0; i < REF_NFIELDS; i++)
        if (!cJSON_GetObjectItemCaseSensitive(o, ref_fields[i]))
            return ST_RAISE(err, ST_EINVAL, "%s: missing field '%s'", c, ref_fields[i]);
    int64_t tp, pp, mb, act, group, batch;
    char sharding[32], recompute[32];
    int rc;
    if ((rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "instances"), c, "instances",
                       r->instances, sizeof r->instances, err)) ||
        (rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "source"), c, "source", r->source,
                       sizeof r->source, err)) ||
        (rc = json_int(cJSON_GetObjectItemCaseSensitive(o, "tp"), c, "tp", 65536, &tp, err)) ||
        (rc = json_int(cJSON_GetObjectItemCaseSensitive(o, "pp"), c, "pp", PLAN_PP_MAX, &pp,
                       err)) ||
        (rc = json_int(cJSON_GetObjectItemCaseSensitive(o, "microbatches"), c, "microbatches",
                       1 << 20, &mb, err)) ||
        (rc = json_int(cJSON_GetObjectItemCaseSensitive(o, "active_microbatches"), c,
                       "active_microbatches", 1 << 20, &act, err)) ||
        (rc = json_int(cJSON_GetObjectItemCaseSensitive(o, "recompute_group"), c,
                       "recompute_group", PLAN_MAX_LAYERS, &group, err)) ||
        (rc = json_int(cJSON_GetObjectItemCaseSensitive(o, "batch_size"), c, "batch_size",
                       (int64_t)1 << 40, &batch, err)) ||
        (rc = json_bool(cJSON_GetObjectItemCaseSensitive(o, "prescaled_batch"), c,
                        "prescaled_batch", &r->prescaled_batch, err)) ||
        (rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "sharding"), c, "sharding", sharding,
                       sizeof sharding, err)) ||
        (rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "recompute"), c, "recompute",
                       recompute, sizeof recompute, err)))
        return rc;
    plan_sharding sh;
    plan_recompute re;
    st_err inner = {0};
    if (plan_sharding_parse(sharding, &sh, &inner) || plan_recompute_parse(recompute, &re, &inner))
        return ST_RAISE(err, ST_EINVAL, "%s: %s", c, inner.msg);
    r->tp = (int)tp;
    r->pp = (int)pp;
    r->microbatches = (int)mb;
    r->active_microbatches = (int)act;
    r->recompute_group = (int)group;
    r->batch_size = batch;
    r->sharding = (int)sh;
    r->recompute = (int)re;
    r->present = 1;
    return ST_OK;
}

/* The other documented names of the preset's model (optional): an array of
 * at most PLAN_PRESET_ALIASES non-empty strings (json_str refuses an empty
 * one); the preset's source says where each is documented. */
static int preset_aliases(const cJSON *a, const char *ctx, plan_preset *p, st_err *err)
{
    p->naliases = 0;
    if (!a)
        return ST_OK;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 ||
        cJSON_GetArraySize(a) > PLAN_PRESET_ALIASES)
        return ST_RAISE(err, ST_EINVAL, "%s: aliases: must be an array of 1 to %d names", ctx,
                        PLAN_PRESET_ALIASES);
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
    {
        int rc = json_str(it, ctx, "aliases", p->aliases[p->naliases],
                          sizeof p->aliases[p->naliases], err);
        if (rc)
            return rc;
        p->naliases++;
    }
    return ST_OK;
}

static int preset_parse(const cJSON *o, const char *ctx, plan_preset *p, st_err *err)
{
    int rc;
    if (!cJSON_IsObject(o))
        return ST_RAISE(err, ST_EINVAL, "%s: must be an object", ctx);
    if ((rc = check_fields(o, ctx, err)) ||
        (rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "key"), ctx, "key", p->key,
                       sizeof p->key, err)) ||
        (rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "family"), ctx, "family", p->family,
                       sizeof p->family, err)) ||
        (rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "label"), ctx, "label", p->label,
                       sizeof p->label, err)) ||
        (rc = json_str(cJSON_GetObjectItemCaseSensitive(o, "source"), ctx, "source",
                       p->model.source, sizeof p->model.source, err)) ||
        (rc = preset_nominal(o, ctx, &p->nominal_params, err)) ||
        (rc = preset_arch(o, ctx, &p->model.arch, err)) ||
        (rc = preset_mlp(o, ctx, &p->model.mlp, err)) ||
        (rc = preset_shape(o, ctx, &p->model, err)))
        return rc;
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(o, "reference");
    if (ref && (rc = preset_ref(ref, ctx, &p->ref, err)))
        return rc;
    if ((rc = preset_aliases(cJSON_GetObjectItemCaseSensitive(o, "aliases"), ctx, p, err)))
        return rc;
    memcpy(p->model.name, p->key, sizeof p->model.name);
    return finish_in(&p->model, ctx, err);
}

/* "FILE: entry N (key)" for messages; the key only once it is known. */
static void entry_ctx(char *buf, size_t len, const char *file, int i, const cJSON *o)
{
    const cJSON *key = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "key") : NULL;
    if (cJSON_IsString(key) && key->valuestring)
        snprintf(buf, len, "%.160s: entry %d (%.63s)", file, i + 1, key->valuestring);
    else
        snprintf(buf, len, "%.160s: entry %d", file, i + 1);
}

static int presets_from_json(const cJSON *root, const char *file, plan_presets *out, st_err *err)
{
    if (!cJSON_IsArray(root) || cJSON_GetArraySize(root) == 0)
        return ST_RAISE(err, ST_EINVAL, "%s: must be a non-empty JSON array of presets", file);
    int n = cJSON_GetArraySize(root);
    plan_preset *v = calloc((size_t)n, sizeof *v);
    if (!v)
        return ST_RAISE(err, ST_ENOMEM, "%s: cannot allocate %d presets", file, n);
    int i = 0, rc = ST_OK;
    char ctx[ST_MSG_MAX / 2];
    for (const cJSON *o = root->child; o; o = o->next, i++) {
        entry_ctx(ctx, sizeof ctx, file, i, o);
        if ((rc = preset_parse(o, ctx, &v[i], err)))
            goto fail;
        for (int j = 0; j < i; j++)
            if (strcmp(v[j].key, v[i].key) == 0) {
                rc = ST_RAISE(err, ST_EINVAL, "%s: key '%s' already used by entry %d", ctx,
                              v[i].key, j + 1);
                goto fail;
            }
    }
    out->v = v;
    out->n = n;
    return ST_OK;
fail:
    free(v);
    return rc;
}

int data_presets_load(const char *path, plan_presets *presets, st_err *err)
{
    char def[4096];
    presets->v = NULL;
    presets->n = 0;
    if (!path) {
        int n = snprintf(def, sizeof def, "%s/models.json", data_dir());
        if (n < 0 || (size_t)n >= sizeof def)
            return ST_RAISE(err, ST_EINVAL, "data directory path too long");
        path = def;
    }
    char *text = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    int rc;
    if ((rc = data_read_file(path, &text, &len, err)) ||
        (rc = parse_json(text, len, path, &root, err)))
        goto done;
    rc = presets_from_json(root, path, presets, err);
done:
    cJSON_Delete(root);
    free(text);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Hugging Face config.json                                                  */
/* ------------------------------------------------------------------------ */

/* A model type transformers knows, and how it maps onto the planner. The
 * tie defaults are those of the transformers config classes. */
typedef struct hf_kind {
    const char *model_type;  /* config "model_type" */
    const char *cls;         /* "architectures" class prefix, e.g. "GPT2" */
    plan_arch arch;
    int tied_default;
    const char *note;        /* approximation, for the model's source */
} hf_kind;

static const hf_kind hf_kinds[] = {
    {"gpt2", "GPT2", PLAN_ARCH_GPT, 1, "learned positions, tied"},
    {"gpt_neox", "GPTNeoX", PLAN_ARCH_GPT, 0, "rotary: counts s*h position params it lacks"},
    {"gptj", "GPTJ", PLAN_ARCH_GPT, 0,
     "rotary, parallel block: counts s*h positions, attn biases, a LayerNorm it lacks"},
    {"opt", "OPT", PLAN_ARCH_GPT, 1, "learned positions (2 offset rows not counted)"},
    {"bloom", "Bloom", PLAN_ARCH_GPT, 1,
     "ALiBi: counts s*h position params it lacks, not its embedding LayerNorm"},
    {"llama", "Llama", PLAN_ARCH_LLAMA, 0, "exact"},
    {"mistral", "Mistral", PLAN_ARCH_LLAMA, 0, "exact"},
    {"qwen2", "Qwen2", PLAN_ARCH_LLAMA, 0, "q, k, v biases not counted"},
    /* Gemma 2 (Gemma2Config: tie_word_embeddings defaults to true): RoPE,
     * RMSNorm, grouped-query attention, a GeGLU MLP (gated: three h x f
     * matrices), no biases, head_dim apart from hidden/heads */
    {"gemma2", "Gemma2", PLAN_ARCH_LLAMA, 1,
     "GeGLU as gated; its post-norms (2h a layer) and logit soft-capping not counted"},
    /* Gemma (GemmaConfig: tie_word_embeddings defaults to true): RoPE,
     * RMSNorm, multi-head or multi-query attention, GeGLU, no biases,
     * head_dim 256 apart from hidden/heads (Gemma Team 2024, arXiv
     * 2403.08295, Sec. 2) */
    {"gemma", "Gemma", PLAN_ARCH_LLAMA, 1, "GeGLU as gated"},
    /* Falcon (transformers FalconConfig): rotary positions, parallel
     * attention and MLP, no biases, multi-query or grouped keys; MPT
     * (MptConfig): ALiBi, no biases, MLP expansion_ratio x d_model */
    {"falcon", "Falcon", PLAN_ARCH_GPT, 1,
     "rotary, parallel block, no biases: counts s*h positions and biases it lacks"},
    {"mpt", "Mpt", PLAN_ARCH_GPT, 1,
     "ALiBi, no biases: counts s*h positions and biases it lacks"},
};
#define HF_NKINDS ((int)(sizeof hf_kinds / sizeof hf_kinds[0]))

/* When neither model_type nor architectures is known: decided by the keys. */
static const hf_kind hf_by_keys_gpt = {"", "", PLAN_ARCH_GPT, 1,
                                       "unknown type, read as GPT-2 by its keys"};
static const hf_kind hf_by_keys_llama = {"", "", PLAN_ARCH_LLAMA, 0,
                                         "unknown type, read as Llama by its keys"};

/* Accepted spellings of each field, first found wins. */
static const char *const f_layers[] = {"num_hidden_layers", "n_layer", "num_layers", "n_layers",
                                       NULL};
static const char *const f_hidden[] = {"hidden_size", "n_embd", "n_embed", "d_model", NULL};
static const char *const f_heads[] = {"num_attention_heads", "n_head", "n_heads", NULL};
static const char *const f_kv[] = {"num_key_value_heads", "num_kv_heads", NULL};
static const char *const f_ffn[] = {"intermediate_size", "n_inner", "ffn_dim", NULL};
static const char *const f_seq[] = {"max_position_embeddings", "n_positions", "n_ctx",
                                    "seq_length", "max_seq_len", NULL};
static const char *const f_vocab[] = {"vocab_size", NULL};
/* Keys only Llama-style configs carry. */
static const char *const f_llama_marks[] = {"num_key_value_heads", "rms_norm_eps", "rope_theta",
                                            NULL};
/* Keys of mixture-of-experts configs, which the planner does not model. */
static const char *const f_moe_marks[] = {"num_local_experts", "num_experts", "n_routed_experts",
                                          "moe_intermediate_size", NULL};

static int class_matches(const char *cls, const char *prefix)
{
    static const char *const suffixes[] = {"LMHeadModel", "ForCausalLM", "Model"};
    size_t n = strlen(prefix);
    if (strncmp(cls, prefix, n) != 0)
        return 0;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (strcmp(cls + n, suffixes[i]) == 0)
            return 1;
    return 0;
}

static const char *find_key(const cJSON *root, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (json_get(root, names[i]))
            return names[i];
    return NULL;
}

/* The kind of a config: model_type, else architectures, else its keys. */
static const hf_kind *hf_kind_of(const cJSON *root)
{
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (cJSON_IsString(mt) && mt->valuestring)
        for (int i = 0; i < HF_NKINDS; i++)
            if (strcmp(mt->valuestring, hf_kinds[i].model_type) == 0)
                return &hf_kinds[i];
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    const cJSON *list = cJSON_IsArray(archs) ? archs : NULL, *a;
    cJSON_ArrayForEach(a, list)
    {
        if (!cJSON_IsString(a) || !a->valuestring)
            continue;
        for (int i = 0; i < HF_NKINDS; i++)
            if (class_matches(a->valuestring, hf_kinds[i].cls))
                return &hf_kinds[i];
    }
    return find_key(root, f_llama_marks) ? &hf_by_keys_llama : &hf_by_keys_gpt;
}

/* "a, b, c" of a spelling list, for messages. */
static void spellings(const char *const *names, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; names[i]; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
}

/* Read a field under any of its spellings. *found is 0 (and *out untouched)
 * if none is present; required makes absence an error naming them all. */
static int hf_int(const cJSON *root, const char *ctx, const char *what,
                  const char *const *names, int64_t max, int required, int64_t *out, int *found,
                  st_err *err)
{
    const char *key = find_key(root, names);
    *found = key != NULL;
    if (!key) {
        if (!required)
            return ST_OK;
        char alts[160];
        spellings(names, alts, sizeof alts);
        return ST_RAISE(err, ST_EINVAL, "%s: missing %s (accepted: %s)", ctx, what, alts);
    }
    return json_int(json_get(root, key), ctx, key, max, out, err);
}

/* Required fields common to both architectures. */
static int hf_core(const cJSON *root, const char *ctx, plan_model *m, st_err *err)
{
    int rc, found;
    if ((rc = hf_int(root, ctx, "layers", f_layers, PLAN_MAX_LAYERS, 1, &m->layers, &found,
                     err)) ||
        (rc = hf_int(root, ctx, "hidden size", f_hidden, PLAN_MAX_HIDDEN, 1, &m->hidden, &found,
                     err)) ||
        (rc = hf_int(root, ctx, "attention heads", f_heads, PLAN_MAX_HEADS, 1, &m->heads, &found,
                     err)) ||
        (rc = hf_int(root, ctx, "vocabulary size", f_vocab, PLAN_MAX_VOCAB, 1, &m->vocab, &found,
                     err)))
        return rc;
    return ST_OK;
}

/* seq_default > 0: the sequence length when the config names none (a
 * model known by name: its published training length). */
static int hf_optional(const cJSON *root, const char *ctx, const hf_kind *k, plan_model *m,
                       int64_t seq_default, st_err *err)
{
    int rc, found;
    int llama = k->arch == PLAN_ARCH_LLAMA;
    m->kv_heads = m->heads;
    if ((rc = hf_int(root, ctx, "kv heads", f_kv, PLAN_MAX_HEADS, 0, &m->kv_heads, &found, err)))
        return rc;
    /* Falcon-7B's multi_query: one key/value head (FalconConfig) */
    const cJSON *mq = json_get(root, "multi_query");
    if (!found && cJSON_IsTrue(mq))
        m->kv_heads = 1;
    m->ffn = 4 * m->hidden; /* GPT-2/3 MLP (Radford et al. 2019; n_inner null means 4h) */
    /* MPT: d_model x expansion_ratio (MptConfig) */
    const cJSON *er = json_get(root, "expansion_ratio");
    if (er) {
        int64_t ratio;
        if ((rc = json_int(er, ctx, "expansion_ratio", 64, &ratio, err)))
            return rc;
        m->ffn = ratio * m->hidden;
    }
    if ((rc = hf_int(root, ctx, "MLP size", f_ffn, 16 * (int64_t)PLAN_MAX_HIDDEN, llama,
                     &m->ffn, &found, err)))
        return rc;
    int bloom = strcmp(k->model_type, "bloom") == 0;
    m->seq = seq_default > 0 ? seq_default : DATA_BLOOM_SEQ;
    if ((rc = hf_int(root, ctx, "sequence length", f_seq, PLAN_MAX_SEQ,
                     !bloom && seq_default <= 0, &m->seq, &found, err)))
        return rc;
    if (seq_default > 0)
        m->seq = seq_default; /* the training length, not the longest context */
    m->tied_embedding = k->tied_default;
    const cJSON *tie = json_get(root, "tie_word_embeddings");
    if (tie && (rc = json_bool(tie, ctx, "tie_word_embeddings", &m->tied_embedding, err)))
        return rc;
    return ST_OK;
}

/* Shapes the planner cannot represent. */
static int hf_unsupported(const cJSON *root, const char *ctx, st_err *err)
{
    const char *moe = find_key(root, f_moe_marks);
    if (moe)
        return ST_RAISE(err, ST_EUNSUPPORTED,
                        "%s: %s: mixture-of-experts models are not modelled", ctx, moe);
    return ST_OK;
}

/* The size of one attention head, head_dim (transformers' Gemma2Config,
 * MistralConfig, LlamaConfig: "The attention head dimension"; absent or
 * null: hidden / heads). */
static int hf_head_dim(const cJSON *root, const char *ctx, plan_model *m, st_err *err)
{
    const cJSON *hd = json_get(root, "head_dim");
    return hd ? json_int(hd, ctx, "head_dim", PLAN_MAX_ATTN_WIDTH, &m->head_dim, err) : ST_OK;
}

/* Spellings of the window: sliding_window (MistralConfig, Gemma2Config,
 * Qwen2Config), sliding_window_size (the first Gemma 2 configs carry it
 * beside sliding_window). */
static const char *const f_window[] = {"sliding_window", "sliding_window_size", NULL};

/* layer_types (transformers' Gemma 2 and Gemma 3 configs from 4.53: one of
 * "sliding_attention", "full_attention" per layer) as a pattern: every layer
 * local (0), every Nth global (N), none local (-1); anything else -2. */
static int layer_types_pattern(const cJSON *lt, int64_t layers)
{
    int n = cJSON_GetArraySize(lt), first_full = -1, any_local = 0;
    if (n != layers)
        return -2;
    const cJSON *it;
    int i = 0;
    cJSON_ArrayForEach(it, lt)
    {
        const char *v = cJSON_IsString(it) ? it->valuestring : NULL;
        int local = v && !strcmp(v, "sliding_attention");
        if (!local && !(v && !strcmp(v, "full_attention")))
            return -2;
        any_local |= local;
        if (!local && first_full < 0)
            first_full = i;
        i++;
    }
    if (!any_local)
        return -1;
    if (first_full < 0)
        return 0;
    i = 0;
    cJSON_ArrayForEach(it, lt)
    {
        int global = !strcmp(it->valuestring, "full_attention");
        if (global != ((i + 1) % (first_full + 1) == 0))
            return -2;
        i++;
    }
    return first_full + 1;
}

/* Sliding-window attention: the window (f_window; null or absent: none) and
 * which layers use it.
 *   Mistral 7B: every layer (Jiang et al. 2023, Mistral 7B, Sec. 2: W =
 *   4096; transformers' MistralAttention applies config.sliding_window to
 *   each layer).
 *   Gemma 2: every other layer, local first (Gemma Team 2024, arXiv
 *   2408.00118, Sec. 2: "We alternate between a local sliding window
 *   attention and global attention in every other layer", window 4096;
 *   transformers' Gemma2Attention: sliding_window when not layer_idx % 2);
 *   its config.json names no pattern, so model_type gemma2 gives 2.
 *   sliding_window_pattern N (Gemma 3, Cohere2): every Nth layer global.
 *   layer_types, where given, decides (layer_types_pattern).
 *   Qwen2: use_sliding_window false (its released configs) turns the window
 *   off; true windows the layers from max_window_layers on, an arrangement
 *   not modelled. */
static int hf_window(const cJSON *root, const char *ctx, const hf_kind *k, plan_model *m,
                     st_err *err)
{
    int rc, found;
    const cJSON *use = json_get(root, "use_sliding_window");
    if (use && !cJSON_IsBool(use))
        return ST_RAISE(err, ST_EINVAL, "%s: use_sliding_window: must be true or false", ctx);
    if ((rc = hf_int(root, ctx, "sliding window", f_window, PLAN_MAX_SEQ, 0, &m->sliding_window,
                     &found, err)))
        return rc;
    if (!found || cJSON_IsFalse(use)) {
        m->sliding_window = 0;
        return ST_OK;
    }
    if (cJSON_IsTrue(use)) {
        const cJSON *mwl = json_get(root, "max_window_layers");
        int64_t from = 0;
        if (mwl && (rc = json_int(mwl, ctx, "max_window_layers", PLAN_MAX_LAYERS, &from, err)))
            return rc;
        if (from < m->layers)
            return ST_RAISE(err, ST_EUNSUPPORTED, "%s: use_sliding_window with max_window_layers "
                            "%lld of %lld layers: a window on the last layers only is not "
                            "modelled", ctx, (long long)from, (long long)m->layers);
        m->sliding_window = 0; /* no layer from max_window_layers on */
        return ST_OK;
    }
    m->sliding_window_pattern = strcmp(k->model_type, "gemma2") == 0 ? 2 : 0;
    const cJSON *pat = json_get(root, "sliding_window_pattern");
    if (pat) {
        int64_t n;
        if ((rc = json_int(pat, ctx, "sliding_window_pattern", PLAN_MAX_LAYERS, &n, err)))
            return rc;
        m->sliding_window_pattern = (int)n;
    }
    const cJSON *lt = json_get(root, "layer_types");
    if (lt) {
        int n = cJSON_IsArray(lt) ? layer_types_pattern(lt, m->layers) : -2;
        if (n == -2)
            return ST_RAISE(err, ST_EUNSUPPORTED, "%s: layer_types: local and global layers "
                            "other than every Nth global (or one kind for %lld layers) are not "
                            "modelled", ctx, (long long)m->layers);
        if (n == -1)
            m->sliding_window = 0;
        else
            m->sliding_window_pattern = n;
    }
    return ST_OK;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void hf_names(const cJSON *root, const char *name, const hf_kind *k, plan_model *m)
{
    const cJSON *np = cJSON_GetObjectItemCaseSensitive(root, "_name_or_path");
    const char *model = cJSON_IsString(np) && np->valuestring && np->valuestring[0]
                            ? np->valuestring
                            : base_name(name);
    snprintf(m->name, sizeof m->name, "%s", model);
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const char *type = cJSON_IsString(mt) && mt->valuestring ? mt->valuestring : "no model_type";
    snprintf(m->source, sizeof m->source, "Hugging Face config %.60s (%.24s as %s: %s)",
             base_name(name), type, k->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt", k->note);
}

/* A config object into a finished model (seq_default as hf_optional). */
static int hf_from_json(const cJSON *root, const char *name, int64_t seq_default, plan_model *m,
                        st_err *err)
{
    plan_model out = {0};
    if (!cJSON_IsObject(root))
        return ST_RAISE(err, ST_EINVAL, "%s: top level must be a JSON object", name);
    const hf_kind *k = hf_kind_of(root);
    out.arch = k->arch;
    int rc;
    if ((rc = hf_core(root, name, &out, err)) ||
        (rc = hf_optional(root, name, k, &out, seq_default, err)) ||
        (rc = hf_head_dim(root, name, &out, err)) ||
        (rc = hf_window(root, name, k, &out, err)) ||
        (rc = hf_unsupported(root, name, err)))
        return rc;
    hf_names(root, name, k, &out);
    if ((rc = finish_in(&out, name, err)))
        return rc;
    *m = out;
    return ST_OK;
}

int data_hfconfig_parse(const char *text, size_t len, const char *name, plan_model *m,
                        st_err *err)
{
    if (!name)
        name = "config.json";
    if (!text)
        return ST_RAISE(err, ST_EINVAL, "%s: no text", name);
    cJSON *root = NULL;
    int rc = parse_json(text, len, name, &root, err);
    if (rc)
        return rc;
    rc = hf_from_json(root, name, 0, m, err);
    cJSON_Delete(root);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Models by name (data/hf_models.json)                                      */
/* ------------------------------------------------------------------------ */

/* Does entry e go by name (its name, the name without its organization, or
 * an alias; case-insensitive)? */
static int named(const cJSON *e, const char *name)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (!cJSON_IsString(n) || !n->valuestring)
        return 0;
    const char *full = n->valuestring, *slash = strchr(full, '/');
    if (!strcasecmp(full, name) || (slash && !strcasecmp(slash + 1, name)))
        return 1;
    const cJSON *al = cJSON_GetObjectItemCaseSensitive(e, "aliases"), *a;
    if (!cJSON_IsArray(al))
        return 0;
    cJSON_ArrayForEach(a, al)
    {
        if (cJSON_IsString(a) && a->valuestring && !strcasecmp(a->valuestring, name))
            return 1;
    }
    return 0;
}

/* One entry into a model: its config through the config.json parser, its
 * training length as the sequence, its name and sources. */
static int named_model(const cJSON *e, const char *file, int i, plan_model *m, st_err *err)
{
    char ctx[160];
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(e, "config");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "source");
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(e, "train_seq");
    const cJSON *ssrc = cJSON_GetObjectItemCaseSensitive(e, "train_seq_source");
    snprintf(ctx, sizeof ctx, "%s: models[%d]", file, i);
    if (!cJSON_IsString(n) || !cJSON_IsObject(cfg) || !cJSON_IsString(src) ||
        !cJSON_IsString(ssrc))
        return ST_RAISE(err, ST_EINVAL, "%s: needs name, config, source and train_seq_source",
                        ctx);
    int64_t train_seq;
    int rc = json_int(seq, ctx, "train_seq", PLAN_MAX_SEQ, &train_seq, err);
    if (rc)
        return rc;
    snprintf(ctx, sizeof ctx, "%.100s (%s)", n->valuestring, "data/hf_models.json");
    if ((rc = hf_from_json(cfg, ctx, train_seq, m, err)))
        return rc;
    snprintf(m->name, sizeof m->name, "%s", n->valuestring);
    /* the page and the citation whole, never cut: each has its room in
     * m->source (80 + 95 characters with the words between) */
    if (strlen(src->valuestring) > 80 || strlen(ssrc->valuestring) > 95)
        return ST_RAISE(err, ST_EINVAL, "%s: source over 80 or train_seq_source over 95 "
                        "characters (shorten the citation)", ctx);
    snprintf(m->source, sizeof m->source, "%s; trained at seq %lld: %s", src->valuestring,
             (long long)train_seq, ssrc->valuestring);
    return ST_OK;
}

static int named_load(cJSON **root, const cJSON **list, st_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/hf_models.json", data_dir());
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = parse_json(text, len, path, root, err);
    free(text);
    if (rc)
        return rc;
    *list = cJSON_GetObjectItemCaseSensitive(*root, "models");
    if (!cJSON_IsArray(*list)) {
        cJSON_Delete(*root);
        *root = NULL;
        return ST_RAISE(err, ST_EINVAL, "%s: no models array", path);
    }
    return ST_OK;
}

int data_hf_named_load(const char *name, plan_model *m, st_err *err)
{
    cJSON *root = NULL;
    const cJSON *list = NULL, *e;
    int rc = named_load(&root, &list, err);
    if (rc)
        return rc;
    int i = 0;
    const char *best[3] = {NULL, NULL, NULL};
    int bestd[3] = {1 << 30, 1 << 30, 1 << 30};
    cJSON_ArrayForEach(e, list)
    {
        if (named(e, name)) {
            rc = named_model(e, "hf_models.json", i, m, err);
            cJSON_Delete(root);
            return rc;
        }
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && n->valuestring) {
            int d = text_edit_distance(n->valuestring, name);
            for (int k = 0; k < 3; k++)
                if (d < bestd[k]) {
                    for (int q = 2; q > k; q--)
                        best[q] = best[q - 1], bestd[q] = bestd[q - 1];
                    best[k] = n->valuestring;
                    bestd[k] = d;
                    break;
                }
        }
        i++;
    }
    char safe[160];
    int j = 0;
    for (const char *p = name; *p && j + 5 < (int)sizeof safe; p++)
        j += (*p >= 0x20 && *p < 0x7F) ? snprintf(safe + j, sizeof safe - (size_t)j, "%c", *p)
                                       : snprintf(safe + j, sizeof safe - (size_t)j, "\\x%02x",
                                                  (unsigned char)*p);
    safe[j] = '\0';
    rc = ST_RAISE(err, ST_ENOENT, "--model %s: no such file, and no model of that name in "
                  "data/hf_models.json (closest: %s%s%s%s%s; smdplan models lists them); give "
                  "a config.json", safe, best[0] ? best[0] : "none", best[1] ? ", " : "",
                  best[1] ? best[1] : "", best[2] ? ", " : "", best[2] ? best[2] : "");
    cJSON_Delete(root);
    return rc;
}

int data_hf_named_list(data_hf_named **out, int *n, st_err *err)
{
    *out = NULL;
    *n = 0;
    cJSON *root = NULL;
    const cJSON *list = NULL, *e;
    int rc = named_load(&root, &list, err);
    if (rc)
        return rc;
    int cap = cJSON_GetArraySize(list);
    data_hf_named *v = calloc(cap > 0 ? (size_t)cap : 1, sizeof *v);
    if (!v) {
        cJSON_Delete(root);
        return ST_RAISE(err, ST_ENOMEM, "hf_models.json: out of memory");
    }
    int i = 0;
    cJSON_ArrayForEach(e, list)
    {
        st_err e1 = {0};
        data_hf_named *x = &v[i];
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        snprintf(x->name, sizeof x->name, "%s",
                 cJSON_IsString(nm) && nm->valuestring ? nm->valuestring : "?");
        const cJSON *al = cJSON_GetObjectItemCaseSensitive(e, "aliases"), *a;
        cJSON_ArrayForEach(a, al)
        {
            if (x->naliases < DATA_HF_ALIASES && cJSON_IsString(a) && a->valuestring &&
                strlen(a->valuestring) < sizeof x->aliases[0])
                memcpy(x->aliases[x->naliases++], a->valuestring, strlen(a->valuestring) + 1);
        }
        x->ok = named_model(e, "hf_models.json", i, &x->model, &e1) == ST_OK;
        if (!x->ok)
            snprintf(x->why, sizeof x->why, "%.255s", e1.msg);
        i++;
    }
    cJSON_Delete(root);
    *out = v;
    *n = i;
    return ST_OK;
}

int data_hfconfig_load(const char *path, plan_model *m, st_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = data_hfconfig_parse(text, len, path, m, err);
    free(text);
    return rc;
}
