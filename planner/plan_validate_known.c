/*
 * plan_validate_known.c: the models a published run may name without
 * publishing their shape (plan_validate.h, plan_known_model).
 *
 * The models and their documented names are data (data/models.json's
 * presets, data/hf_models.json's configs), installed by the data layer;
 * nothing here names a model. A name matches a run's model name when both,
 * lower-cased with everything but letters, digits and '.' dropped, hold
 * the name at the start of a word of the run's text and no digit or '.'
 * follows it there: "Llama 2 70B (chat)" names "llama-2-70b", "LLaMA2-7B"
 * does not name "llama-2-70b", "GPT-3 1.3B" does not name "gpt3-13b".
 */
#include "planner/plan_validate.h"

#include <ctype.h>
#include <string.h>

static plan_known_model known[PLAN_KNOWN_MAX];
static int nknown;

int plan_known_models_set(const plan_known_model *v, int n, st_err *err)
{
    if (n < 0 || n > PLAN_KNOWN_MAX || (n > 0 && !v))
        return ST_RAISE(err, ST_EINVAL, "known models: %d of them; allowed: 0 to %d", n,
                        PLAN_KNOWN_MAX);
    for (int i = 0; i < n; i++) {
        const plan_known_model *k = &v[i];
        if (k->nnames < 1 || k->nnames > PLAN_KNOWN_NAMES)
            return ST_RAISE(err, ST_EINVAL, "known model %d: %d names; allowed: 1 to %d", i + 1,
                            k->nnames, PLAN_KNOWN_NAMES);
        for (int w = 0; w < k->nnames; w++)
            if (!k->names[w][0] || !memchr(k->names[w], 0, PLAN_KNOWN_NAME_MAX))
                return ST_RAISE(err, ST_EINVAL, "known model %d: an empty or unterminated name",
                                i + 1);
        if (k->model.layers < 1 || k->model.hidden < 1 || k->model.heads < 1 ||
            k->model.vocab < 1)
            return ST_RAISE(err, ST_EINVAL, "known model %d ('%s'): no shape", i + 1,
                            k->names[0]);
    }
    if (n > 0)
        memcpy(known, v, (size_t)n * sizeof *v);
    nknown = n;
    return ST_OK;
}

static int kept(char c)
{
    return isalnum((unsigned char)c) || c == '.';
}

/* text lower-cased with only letters, digits and '.' kept, into out (n
 * bytes); start[k]: whether out[k] begins a word of text. */
static size_t squeeze(const char *text, char *out, unsigned char *start, size_t n)
{
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < n; p++) {
        if (!kept(*p))
            continue;
        if (start)
            start[k] = p == text || !isalnum((unsigned char)p[-1]);
        out[k++] = (char)tolower((unsigned char)*p);
    }
    out[k] = '\0';
    return k;
}

const plan_known_model *plan_known_model_named(const char *text, const char **name)
{
    char t[256], w[PLAN_KNOWN_NAME_MAX];
    unsigned char start[256];
    const plan_known_model *best = NULL;
    size_t best_len = 0;
    if (!text)
        return NULL;
    size_t tn = squeeze(text, t, start, sizeof t);
    for (int i = 0; i < nknown; i++)
        for (int j = 0; j < known[i].nnames; j++) {
            /* a Hugging Face id's organisation is not part of the name */
            const char *nm = known[i].names[j], *slash = strrchr(nm, '/');
            size_t wn = squeeze(slash ? slash + 1 : nm, w, NULL, sizeof w);
            if (wn == 0 || wn > tn || wn <= best_len)
                continue;
            for (size_t a = 0; a + wn <= tn; a++) {
                if (!start[a] || memcmp(t + a, w, wn) != 0)
                    continue;
                char after = t[a + wn];
                if (isdigit((unsigned char)after) || after == '.')
                    continue;
                best = &known[i];
                best_len = wn;
                if (name)
                    *name = nm;
                break;
            }
        }
    return best;
}
