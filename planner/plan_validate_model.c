/*
 * plan_validate_model.c: a published run's model as plan_validate.c reads
 * it (plan__map_model): layers, hidden, heads, kv heads (one per query head
 * when absent, multi-query attention's one where the text names it), head
 * size (hidden / heads when absent), ffn (when absent 4h, 2/3 of that for
 * a gated MLP), sequence and vocabulary (the named model's, its family's
 * tokenizer, else the framework's default, padded as the framework pads
 * it), or a known model's shape by its name; the architecture from its
 * text by the installed traits (data/model_families.json): RoPE /
 * Llama-style (RMSNorm, untied head) or GPT-style, the MLP gated (SwiGLU,
 * GLU) or plain (GeLU, squared ReLU), never from grouped-query attention.
 */
#include "planner/plan_validate.h"
#include "planner/plan_framework.h"
#include "planner/plan_validate_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define contains plan__contains
#define nz plan__nz
#define skip plan__skip
#define note plan__note
#define blank plan__blank
#define copy plan__copy

/* word in text, as plan__contains, but a word ending in a digit not inside
 * a longer number ("Llama 3" is not "LLaMA 30B"). */
static int trait_word_in(const char *text, const char *word)
{
    size_t n = strlen(word);
    int digit_end = n > 0 && isdigit((unsigned char)word[n - 1]);
    for (const char *p = text; p && *p; p++) {
        if (strncasecmp(p, word, n) != 0)
            continue;
        if (!digit_end || !isdigit((unsigned char)p[n]))
            return 1;
    }
    return 0;
}

/* The first trait that gives the property `has` says something of whose
 * word is in one of the n texts; NULL when none does. *word: the word
 * found (its source is in the traits' file). */
static const plan_model_trait *first_trait(const char *const *texts, size_t n_texts,
                                           int (*has)(const plan_model_trait *),
                                           const char **word)
{
    int n = 0;
    const plan_model_trait *t = plan_model_traits(&n);
    for (int i = 0; i < n; i++) {
        if (!has(&t[i]))
            continue;
        for (int w = 0; w < t[i].nwords; w++)
            for (size_t k = 0; k < n_texts; k++)
                if (!blank(texts[k]) && trait_word_in(texts[k], t[i].words[w])) {
                    *word = t[i].words[w];
                    return &t[i];
                }
    }
    return NULL;
}

static int gives_vocab(const plan_model_trait *t)
{
    return t->vocab > 0;
}

static int gives_kv_heads(const plan_model_trait *t)
{
    return t->kv_heads > 0;
}

/* The vocabulary a family's documented tokenizer has, by the row's
 * architecture text or its model's name (first_trait); 0 when no trait
 * gives one. */
static int64_t trait_vocab(const plan_validate_row *r, const char **word)
{
    const char *texts[] = {r->architecture, r->model_name};
    const plan_model_trait *t = first_trait(texts, 2, gives_vocab, word);
    return t ? t->vocab : 0;
}

/* The key-value heads a trait gives by the words of the n texts
 * (first_trait: multi-query attention's one); 0 when none does.
 * Grouped-query attention generalises multi-query attention to several
 * key-value heads (Ainslie et al. 2023, GQA: "Generalized Multi-Query
 * Transformer Models"): a text that names it gives no count here. */
static int trait_kv_heads(const char *const *texts, size_t n_texts, const char **word)
{
    for (size_t k = 0; k < n_texts; k++)
        if (contains(texts[k], "GQA") || contains(texts[k], "grouped") ||
            contains(texts[k], "generalized multi-query"))
            return 0;
    const plan_model_trait *t = first_trait(texts, n_texts, gives_kv_heads, word);
    return t ? t->kv_heads : 0;
}

/* word in a model's name: as trait_word_in, at the start of a word ("MPT"
 * is in "MPT-30B", not in "Attempt"). */
static int name_word_in(const char *text, const char *word)
{
    size_t n = strlen(word);
    int digit_end = n > 0 && isdigit((unsigned char)word[n - 1]);
    for (const char *p = text; p && *p; p++) {
        if (p > text && isalnum((unsigned char)p[-1]))
            continue;
        if (strncasecmp(p, word, n) != 0)
            continue;
        if (!digit_end || !isdigit((unsigned char)p[n]))
            return 1;
    }
    return 0;
}

/* The first of trait t's words in text: anywhere in an architecture text
 * (arch_text), at the start of a word in a model's name; NULL if none. */
static const char *trait_word(const plan_model_trait *t, const char *text, int arch_text)
{
    for (int w = 0; w < t->nwords; w++)
        if (arch_text ? contains(text, t->words[w]) : name_word_in(text, t->words[w]))
            return t->words[w];
    return NULL;
}

/* The architecture from the row's text by the installed traits
 * (data/model_families.json): the architecture text first, then the
 * model's name (a family's documented name says its layer: "Llama 3 405B"
 * beside "dense transformer (GQA)" is gated), each read trait by trait;
 * the first trait that sets a property decides it. A Llama-style model is
 * untied and gated unless a word says otherwise, a GPT-style one tied
 * (plan_model_finish resolves the rest from the architecture). */
static void read_arch(const plan_validate_row *r, const plan_model *km, plan_model *m)
{
    int arch = -1, mlp = -1, dropout = -1, tied = -1, n = 0;
    const plan_model_trait *t = plan_model_traits(&n);
    const char *texts[] = {r->architecture, r->model_name};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        if (blank(texts[k]))
            continue;
        for (int i = 0; i < n; i++) {
            if (!trait_word(&t[i], texts[k], k == 0))
                continue;
            if (arch < 0)
                arch = t[i].arch;
            if (mlp < 0)
                mlp = t[i].mlp;
            if (dropout < 0)
                dropout = t[i].dropout;
            if (tied < 0)
                tied = t[i].tied;
        }
    }
    /* what no word names: the named model's own layer, where the row names
     * one whose shape it gives (km) */
    if (arch < 0 && km)
        arch = km->arch;
    if (mlp < 0 && km)
        mlp = km->mlp;
    if (tied < 0 && km)
        tied = km->tied_embedding;
    m->arch = arch == PLAN_ARCH_LLAMA ? PLAN_ARCH_LLAMA : PLAN_ARCH_GPT;
    m->mlp = mlp >= 0 ? (plan_mlp)mlp : PLAN_MLP_ARCH;
    m->dropout = dropout >= 0 ? dropout : PLAN_DROPOUT_ARCH;
    m->tied_embedding = tied >= 0 ? tied : m->arch != PLAN_ARCH_LLAMA;
}

/* The kind of network the row's architecture text, else its model's name,
 * names by the installed traits (the first trait that says one decides);
 * PLAN_STRUCT_DECODER when none does. *word: the word found. */
static int read_structure(const plan_validate_row *r, const char **word)
{
    int n = 0;
    const plan_model_trait *t = plan_model_traits(&n);
    const char *texts[] = {r->architecture, r->model_name};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        if (blank(texts[k]))
            continue;
        for (int i = 0; i < n; i++) {
            if (t[i].structure < 0 || !(*word = trait_word(&t[i], texts[k], k == 0)))
                continue;
            return t[i].structure;
        }
    }
    return PLAN_STRUCT_DECODER;
}

/* A model size at s, after spaces: a number with its unit ("70B", "350M")
 * in billions into *out, or a bare number when bare is set ("70"); the
 * characters read, 0 when there is none. */
static int size_at(const char *s, int bare, double *out)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    char *e;
    double v = strtod(p, &e);
    if (e == p || !(v > 0))
        return 0;
    const char *u = e;
    while (*u == ' ')
        u++;
    double unit = *u == 'B' || *u == 'b' ? 1.0 : *u == 'M' || *u == 'm' ? 1e-3 : 0.0;
    if (unit > 0 && !isalnum((unsigned char)u[1])) {
        *out = v * unit;
        return (int)(u + 1 - s);
    }
    if (!bare)
        return 0;
    *out = v;
    return (int)(e - s);
}

/* The size params_b gives, in billions ("70", "13B", "350M", "13
 * billion", "~13B"); 0 when it gives none. */
static int params_billions(const char *s, double *out)
{
    if (blank(s))
        return 0;
    while (*s == ' ' || *s == '~')
        s++;
    int n = size_at(s, 1, out);
    if (n <= 0)
        return 0;
    const char *rest = s + n;
    while (*rest == ' ')
        rest++;
    static const struct {
        const char *word;
        double scale;
    } words[] = {{"billion", 1.0}, {"million", 1e-3}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t k = strlen(words[i].word);
        if (rest > s + n && strncasecmp(rest, words[i].word, k) == 0 && blank(rest + k) &&
            !isalpha((unsigned char)s[n - 1])) {
            *out *= words[i].scale;
            return 1;
        }
    }
    return blank(s + n);
}

/* The documented model a row names: by its model name ("Llama 2 70B"),
 * else by the name with the size the row gives in params_b after it
 * ("Llama 2" and 70: "Llama 2 70B"), or with a size that leads the name
 * moved after it ("70B Llama 2"), as the models' names write it; said in
 * the notes when so. NULL when none. */
static const plan_known_model *known_model_of(const plan_validate_row *r, const char **kname,
                                              plan_validate_result *out)
{
    const plan_known_model *k = plan_known_model_named(r->model_name, kname);
    if (k || blank(r->model_name))
        return k;
    char alt[192];
    const char *nm = r->model_name;
    double pb;
    int n = size_at(nm, 0, &pb);
    if (n > 0) { /* "70B Llama 2": the size after the family's name */
        const char *rest = nm + n;
        while (*rest == ' ' || *rest == '-' || *rest == '_')
            rest++;
        snprintf(alt, sizeof alt, "%s %.*s", rest, n, nm);
    }
    else if (params_billions(r->params_b, &pb) && pb < 1e5)
        snprintf(alt, sizeof alt, "%s %gB", nm, pb);
    else
        return NULL;
    if ((k = plan_known_model_named(alt, kname)) != NULL)
        note(out, "model '%s' read as '%s'%s", nm, alt, n > 0 ? "" : " (its params_b)");
    return k;
}

int plan__map_model(const plan_validate_row *r, const plan_framework *fw,
                     plan_validate_result *out)
{
    static const char *const kinds[] = {"a dense decoder", "a mixture-of-experts",
                                        "an encoder-decoder", "a state-space"};
    const char *sword = NULL;
    int structure = read_structure(r, &sword);
    if (structure != PLAN_STRUCT_DECODER)
        return skip(out, "%s model ('%s', model_families.json): the planner models dense "
                    "decoder-only transformers", kinds[structure], sword);
    int64_t L = 0, H = 0, A = 0, KV = 0, D = 0, F = 0, S = 0, V = 0;
    int hl, hh, ha, hkv, hd, hf, hs, hv;
    /* the key-value heads by the attention's kind: multi-head attention
     * keeps one per query head (as none stated), a kind the traits give a
     * count for that count (multi-query attention's one) */
    const char *kvs = r->num_kv_heads, *kvw = NULL;
    char kvn[16];
    int kvk = blank(kvs) || strpbrk(kvs, "0123456789") ? 0 : trait_kv_heads(&kvs, 1, &kvw);
    if (!blank(kvs) && (!strcasecmp(kvs, "MHA") || contains(kvs, "multi-head")))
        kvs = "";
    else if (kvk > 0) {
        snprintf(kvn, sizeof kvn, "%d", kvk);
        kvs = kvn;
    }
    if ((hl = plan__get_int(out, "num_layers", r->num_layers, 1, PLAN_MAX_LAYERS, &L)) < 0 ||
        (hh = plan__get_int(out, "hidden_size", r->hidden_size, 1, PLAN_MAX_HIDDEN, &H)) < 0 ||
        (ha = plan__get_int(out, "num_heads", r->num_heads, 1, PLAN_MAX_HEADS, &A)) < 0 ||
        (hkv = plan__get_int(out, "num_kv_heads", kvs, 1, PLAN_MAX_HEADS, &KV)) < 0 ||
        (hd = plan__get_int(out, "head_dim", r->head_dim, 1, PLAN_MAX_ATTN_WIDTH, &D)) < 0 ||
        (hf = plan__get_int(out, "ffn_hidden_size", r->ffn_hidden_size, 1, 16 * (int64_t)PLAN_MAX_HIDDEN,
                      &F)) < 0 ||
        (hs = plan__get_int(out, "seq_len", r->seq_len, 1, PLAN_MAX_SEQ, &S)) < 0 ||
        (hv = plan__get_int(out, "vocab_size", r->vocab_size, 1, PLAN_MAX_VOCAB, &V)) < 0)
        return 1;
    /* A documented model the row names: what the row does give must be
     * its, and what the row leaves out is its published config's */
    const char *kname = NULL;
    const plan_known_model *k = known_model_of(r, &kname, out);
    const plan_model *km = k ? &k->model : NULL;
    /* heads left out of a shape given otherwise, no named model to give
     * them: hidden over the head size stated, else over the head size the
     * planner's derived shapes take (GPT-3 and Megatron-LM's models: 64
     * below a hidden of 1024, 128 from there; Brown et al. 2020, Table 2.1) */
    if (hl && hh && !ha && !km) {
        int64_t d = hd ? D : plan_derived_head_dim(H);
        if (d > 0 && H % d == 0) {
            A = H / d;
            ha = 1;
            note(out, "heads not published: hidden %lld / head size %lld%s = %lld", (long long)H,
                 (long long)d, hd ? " (stated)" : " (the derived shapes' rule)", (long long)A);
        }
    }
    int named_shape = !hl || !hh || !ha; /* the shape is the named model's */
    double pb;
    if (km && ((hl && L != km->layers) || (hh && H != km->hidden) || (ha && A != km->heads) ||
               (hkv && KV != km->kv_heads) || (hf && F != km->ffn) ||
               (params_billions(r->params_b, &pb) && pb > 0 &&
                fabs(log(pb * 1e9 / (double)km->params)) > log(1.15))))
        km = NULL;
    int cited = 0; /* km's source in the notes already */
    if (named_shape) {
        if (!km)
            return skip(out, "shape not published (layers, hidden size or heads missing)");
        note(out, "shape of %s as published (%s)", kname, km->source);
        cited = 1;
    } else {
        /* the row's own shape, with the named model's kv heads and ffn
         * where it states none */
        if (km && (!hkv || !hf)) {
            note(out, "%s%s%s of %s as published (%s)", hkv ? "" : "kv heads",
                 !hkv && !hf ? " and " : "", hf ? "" : "ffn", kname, km->source);
            cited = 1;
            if (!hkv)
                KV = km->kv_heads, hkv = 1;
            if (!hf)
                F = km->ffn, hf = 1;
            if (!hd && km->head_dim)
                D = km->head_dim, hd = 1;
        }
    }
    if (!hs && km && km->seq > 0) {
        /* left out, like the shape: the named model's own training context
         * (a paper's table, or the pretraining length its config's source
         * cites beside the config); its source once in the notes */
        S = km->seq;
        hs = 1;
        note(out, "sequence length %lld: %s's training context (%s)", (long long)S, kname,
             cited ? "the same source" : km->source);
    }
    if (!hs)
        return skip(out, "sequence length not published");
    plan_model *m = &out->model;
    memset(m, 0, sizeof *m);
    if (named_shape) {
        *m = *km;
        copy(m->name, sizeof m->name, r->model_name);
        snprintf(m->source, sizeof m->source, "%s row %s", nz(r->source_key), nz(r->row_id));
        m->seq = S;
        if (hv)
            m->vocab = V;
        st_err e = {0};
        if (plan_model_finish(m, &e) != ST_OK)
            return skip(out, "model shape: %s", e.msg);
        out->have_model = 1;
        return 0;
    }
    read_arch(r, km, m);
    const char *vword = NULL;
    if (!hv && km) {
        /* the named model's own vocabulary, which its family's tokenizer
         * may not be */
        V = km->vocab;
        note(out, "vocabulary %lld of %s as published (%s)", (long long)V, kname,
             cited ? "the same source" : km->source);
    } else if (!hv && (V = trait_vocab(r, &vword)) > 0) {
        note(out, "vocabulary %lld (%s's tokenizer, model_families.json)", (long long)V, vword);
    } else if (!hv) {
        if (!fw->default_vocab || m->arch != PLAN_ARCH_GPT)
            return skip(out, "vocabulary size not published");
        V = fw->default_vocab;
        note(out, "vocabulary %lld (%s's GPT-2 BPE default)", (long long)V, fw->label);
    }
    copy(m->name, sizeof m->name, blank(r->model_name) ? "row" : r->model_name);
    snprintf(m->source, sizeof m->source, "%s row %s", nz(r->source_key), nz(r->row_id));
    m->layers = L;
    m->hidden = H;
    m->heads = A;
    m->kv_heads = hkv ? KV : A;
    const char *kvword = NULL;
    const char *kvtexts[] = {r->architecture, r->model_name};
    int kvt = hkv ? 0 : trait_kv_heads(kvtexts, 2, &kvword);
    if (kvt > 0 && A % kvt == 0) {
        m->kv_heads = kvt;
        note(out, "%d key-value head%s (%s, model_families.json)", kvt, kvt == 1 ? "" : "s",
             kvword);
    }
    m->head_dim = hd ? D : 0;
    /* a width the row leaves out: 4h for a plain MLP (Vaswani et al. 2017;
     * Radford et al. 2019); 2/3 of that for a gated one, whose three
     * matrices then hold what a plain one's two do (Touvron et al. 2023,
     * LLaMA, Sec. 2.2: "2/3 4d"), a multiple of 64 as Megatron-LM sets it
     * for --swiglu without --ffn-hidden-size (arguments.py) */
    m->ffn = hf ? F : plan_model_gated(m) ? (4 * H * 2 / 3) / 64 * 64 : 4 * H;
    if (!hf && plan_model_gated(m))
        note(out, "ffn %lld: a gated MLP's 2/3 of 4h (Megatron-LM --swiglu, LLaMA Sec. 2.2), "
             "the row giving none", (long long)m->ffn);
    m->seq = S;
    m->vocab = V;
    st_err e = {0};
    if (plan_model_finish(m, &e) != ST_OK)
        return skip(out, "model shape: %s", e.msg);
    out->have_model = 1;
    return 0;
}
