/*
 * data_families.c: reading what words of a run's architecture text say of
 * the model (data/model_families.json) and installing them in the planner
 * (plan_model_traits_set).
 *
 * The file is one JSON object whose "traits" array lists, in the order they
 * are read, one entry per word list: "words" (1 to PLAN_TRAIT_WORDS
 * strings), at least one of "arch" ("gpt", "llama"), "mlp" ("plain",
 * "gated"), "dropout" ("on", "off"), "tied" (true, false), "vocab" (the
 * family's tokenizer's size, tokens), "kv_heads" (the key-value heads its
 * attention keeps, for a run that states none), and "source".
 * Keys starting with '_' are comments. Errors are one line naming the file,
 * the entry and the key, with what is allowed; nothing is installed unless
 * the whole file reads.
 */
#include "data/data.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan_validate.h"

const char *data_families_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/model_families.json", data_dir());
    return path;
}

/* The value of key among names (returning its index), -1 when absent;
 * ST_EINVAL through err when present but not one of them. */
static int read_enum(const cJSON *o, const char *key, const char *const *names, int n,
                     const char *file, int entry, int *out, st_err *err)
{
    *out = -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return ST_OK;
    for (int i = 0; cJSON_IsString(v) && i < n; i++)
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = i;
            return ST_OK;
        }
    char allowed[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s\"%s\"",
                 i ? ", " : "", names[i]);
    return ST_RAISE(err, ST_EINVAL, "%s: trait %d: \"%s\" must be one of %s", file, entry, key,
                    allowed);
}

static int read_trait(const cJSON *o, const char *file, int entry, plan_model_trait *t,
                      st_err *err)
{
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(o))
        return ST_RAISE(err, ST_EINVAL, "%s: trait %d: expected an object", file, entry);
    const cJSON *x;
    cJSON_ArrayForEach(x, o)
    {
        const char *k = x->string ? x->string : "";
        if (k[0] != '_' && strcmp(k, "words") && strcmp(k, "arch") && strcmp(k, "mlp") &&
            strcmp(k, "dropout") && strcmp(k, "tied") && strcmp(k, "vocab") &&
            strcmp(k, "kv_heads") && strcmp(k, "structure") && strcmp(k, "source"))
            return ST_RAISE(err, ST_EINVAL,
                            "%s: trait %d: unknown key \"%.40s\"; allowed: words, arch, mlp, "
                            "dropout, tied, vocab, kv_heads, structure, source",
                            file, entry, k);
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "words");
    int nw = cJSON_IsArray(w) ? cJSON_GetArraySize(w) : 0;
    if (nw < 1 || nw > PLAN_TRAIT_WORDS)
        return ST_RAISE(err, ST_EINVAL, "%s: trait %d: \"words\" must be an array of 1 to %d "
                        "strings", file, entry, PLAN_TRAIT_WORDS);
    cJSON_ArrayForEach(x, w)
    {
        if (!cJSON_IsString(x) || !x->valuestring[0] ||
            strlen(x->valuestring) >= PLAN_TRAIT_WORD_MAX)
            return ST_RAISE(err, ST_EINVAL, "%s: trait %d: a word must be a string of 1 to %d "
                            "characters", file, entry, PLAN_TRAIT_WORD_MAX - 1);
        snprintf(t->words[t->nwords++], PLAN_TRAIT_WORD_MAX, "%s", x->valuestring);
    }
    static const char *const arch[] = {"gpt", "llama"}; /* PLAN_ARCH_GPT, _LLAMA */
    static const char *const mlp[] = {"", "plain", "gated"}; /* PLAN_MLP_PLAIN, _GATED */
    static const char *const dropout[] = {"", "on", "off"}; /* PLAN_DROPOUT_ON, _OFF */
    int rc = read_enum(o, "arch", arch, 2, file, entry, &t->arch, err);
    if (!rc)
        rc = read_enum(o, "mlp", mlp + 1, 2, file, entry, &t->mlp, err);
    if (!rc)
        rc = read_enum(o, "dropout", dropout + 1, 2, file, entry, &t->dropout, err);
    /* PLAN_STRUCT_DECODER, _MOE, _ENCDEC, _SSM */
    static const char *const structure[] = {"decoder", "mixture-of-experts", "encoder-decoder",
                                            "state-space"};
    if (!rc)
        rc = read_enum(o, "structure", structure, PLAN_STRUCT__COUNT, file, entry,
                       &t->structure, err);
    if (rc)
        return rc;
    if (t->mlp >= 0)
        t->mlp += PLAN_MLP_PLAIN;
    if (t->dropout >= 0)
        t->dropout += PLAN_DROPOUT_ON;
    const cJSON *tied = cJSON_GetObjectItemCaseSensitive(o, "tied");
    t->tied = -1;
    if (tied && !cJSON_IsBool(tied))
        return ST_RAISE(err, ST_EINVAL, "%s: trait %d: \"tied\" must be true or false", file,
                        entry);
    if (tied)
        t->tied = cJSON_IsTrue(tied);
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(o, "vocab");
    if (vocab && (!cJSON_IsNumber(vocab) || vocab->valuedouble < 1 ||
                  vocab->valuedouble > PLAN_MAX_VOCAB ||
                  vocab->valuedouble != (double)(int64_t)vocab->valuedouble))
        return ST_RAISE(err, ST_EINVAL, "%s: trait %d: \"vocab\" must be a whole number of "
                        "tokens from 1 to %d", file, entry, PLAN_MAX_VOCAB);
    t->vocab = vocab ? (int64_t)vocab->valuedouble : 0;
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(o, "kv_heads");
    if (kv && (!cJSON_IsNumber(kv) || kv->valuedouble < 1 || kv->valuedouble > PLAN_MAX_HEADS ||
               kv->valuedouble != (double)(int64_t)kv->valuedouble))
        return ST_RAISE(err, ST_EINVAL, "%s: trait %d: \"kv_heads\" must be a whole number of "
                        "heads from 1 to %d", file, entry, PLAN_MAX_HEADS);
    t->kv_heads = kv ? (int)kv->valuedouble : 0;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
    if (!cJSON_IsString(src) || !src->valuestring[0])
        return ST_RAISE(err, ST_EINVAL, "%s: trait %d ('%s'): \"source\" (where the name is "
                        "documented) is required", file, entry, t->words[0]);
    snprintf(t->source, sizeof t->source, "%s", src->valuestring);
    return ST_OK;
}

int data_families_parse(const char *text, size_t len, const char *name, st_err *err)
{
    const char *file = name ? name : "model_families";
    cJSON *root = text ? cJSON_ParseWithLength(text, len) : NULL;
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "%s: malformed JSON; expected an object with \"traits\"",
                        file);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "traits");
    int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1, rc = ST_OK;
    plan_model_trait *v = NULL;
    if (n < 1 || n > PLAN_TRAITS_MAX)
        rc = ST_RAISE(err, ST_EINVAL, "%s: \"traits\" must be an array of 1 to %d entries", file,
                      PLAN_TRAITS_MAX);
    else if (!(v = calloc((size_t)n, sizeof *v)))
        rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
    int i = 0;
    const cJSON *o;
    if (!rc)
        cJSON_ArrayForEach(o, arr)
        {
            if ((rc = read_trait(o, file, i + 1, &v[i], err)))
                break;
            i++;
        }
    if (!rc)
        rc = plan_model_traits_set(v, n, err);
    free(v);
    cJSON_Delete(root);
    return rc;
}

int data_families_load(const char *path, st_err *err)
{
    const char *file = path ? path : data_families_path();
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(file, &text, &len, err);
    if (rc)
        return rc;
    rc = data_families_parse(text, len, file, err);
    free(text);
    return rc;
}
