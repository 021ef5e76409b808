/*
 * plan_resolve.c: a nominal size ("--params 30B") to a model shape.
 *
 * Pure computation over the presets data/ read from models.json: no files.
 *
 * Exact match. A preset of the requested architecture whose nominal size is
 * within 0.5 % of the request is returned as is. Several families publish the
 * same sizes; ties go to the family order smp, gpt3, megatron: smdplan plans
 * for the SageMaker model-parallel library, so that library's reference
 * configurations come first, then the GPT-3 paper the others follow, then
 * Megatron-LM's weak-scaling table. Inside a family the preset whose exact
 * count is nearest the request wins (so "70B" is Llama-3-70B, 70.55B, not
 * Llama-2-70B, 68.98B).
 *
 * Derived shape, between presets (the x values are the presets' exact
 * counts, not their labels, so a generously rounded label such as
 * Llama-2-7B's, 6.74B, does not bend the curve):
 *   1. hidden: log(h) linear in log(P) between the neighbouring presets below
 *      and above the request. Outside the presets the end segment is
 *      extended; its far point is the nearest preset whose hidden differs from
 *      the end's (Llama-2-7B and Llama-3-8B share h 4096; a flat end segment
 *      would give a 1B Llama h 4096, while this gives 2176, near Llama 3.2
 *      1B's 2048). With a single distinct hidden the slope is 1/3: at a fixed
 *      depth-to-width ratio P ~ 12 l h^2 ~ h^3 (Kaplan et al. 2020, Sec. 2.1).
 *   2. rounding: h < 1024 to a multiple of 64 with head dim 64 (GPT-3 Small
 *      and Medium, Brown et al. 2020 Table 2.1); h < 4096 to a multiple of
 *      128 with head dim 128; h >= 4096 to a multiple of 1024, head dim 128,
 *      so the head count is a multiple of 8 and tensor parallelism over a
 *      whole 8-GPU node divides it (SMP best practices: TP a power of two up
 *      to the GPUs per node; the planner rejects a TP that does not divide
 *      the heads). Every published shape in models.json with h >= 4096 is a
 *      multiple of 1024.
 *   3. layers: the whole number >= 1 whose exact count (plan_model_finish) is
 *      nearest the request; P is linear in l, so that is a rounding.
 *   4. ffn 4h for GPT (Brown et al. 2020, Sec. 2.1); for Llama the SwiGLU
 *      size 2/3 * 4h rounded up to a multiple of 256 (Meta's reference
 *      llama/model.py, multiple_of = 256), 8 kv heads when 8 divides the heads
 *      (Llama 2 70B and every Llama 3 model), else multi-head.
 *   5. seq and vocab from the candidate preset nearest in log(P) (the
 *      candidates are one family for Llama; for GPT all GPT families unless
 *      one is asked for).
 * Sizes under 1e6 parameters (smaller than any embedding a preset carries)
 * or over 1e15 (past every product the planner forms exactly) are refused.
 * Small requests are dominated by the embedding: the layer fit stops at one
 * layer, and the caller prints the exact count it got.
 */
#include "planner/plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define RESOLVE_EXACT_REL 0.005  /* nominal within 0.5 % of the request */
#define RESOLVE_MIN_PARAMS 1e6
#define RESOLVE_MAX_PARAMS 1e15
#define RESOLVE_SLOPE_DEFAULT (1.0 / 3.0) /* P ~ h^3 at a fixed aspect */
#define RESOLVE_SMALL_HIDDEN 1024  /* below: head dim 64 */
#define RESOLVE_WIDE_HIDDEN 4096   /* from here: heads a multiple of 8 */
#define RESOLVE_HEADS_MULTIPLE 8   /* GPUs in one p4d/p5 node */
#define RESOLVE_LLAMA_KV_HEADS 8   /* Llama 2 70B, Llama 3 (Llama Team 2024, Table 3) */
#define RESOLVE_LLAMA_MULTIPLE_OF 256

/* Families in the order an exact tie is given to (see the header). */
static const char *const family_order[] = {"smp", "gpt3", "megatron"};
#define FAMILY_ORDER_N ((int)(sizeof family_order / sizeof family_order[0]))

static int family_rank(const char *family)
{
    for (int i = 0; i < FAMILY_ORDER_N; i++)
        if (strcmp(family, family_order[i]) == 0)
            return i;
    return FAMILY_ORDER_N;
}

static const char *arch_name(plan_arch arch)
{
    return arch == PLAN_ARCH_LLAMA ? "llama" : "gpt";
}

/* A preset of the architecture (and of the family asked for); without a
 * family, only one with the architecture's own feed-forward layer (plain
 * for GPT, gated for Llama): a derived shape follows rule 4, which a
 * Llama-style model with a plain MLP (Nemotron-4's squared ReLU) does not. */
static int is_candidate(const plan_preset *p, plan_arch arch, const char *family)
{
    if (p->model.arch != arch)
        return 0;
    if (family)
        return strcmp(p->family, family) == 0;
    return p->model.mlp == (arch == PLAN_ARCH_LLAMA ? PLAN_MLP_GATED : PLAN_MLP_PLAIN);
}

static double log_params(const plan_preset *p)
{
    return log((double)p->model.params);
}

/* 1 if a is preferred to b as the answer to a request of params. */
static int preferred(const plan_preset *a, const plan_preset *b, double params)
{
    int ra = family_rank(a->family), rb = family_rank(b->family);
    if (ra != rb)
        return ra < rb;
    return fabs((double)a->model.params - params) < fabs((double)b->model.params - params);
}

/* Comma-separated distinct family names of arch (any arch if all), in file
 * order, into buf. */
static void list_families(const plan_presets *ps, plan_arch arch, int all, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; ps && i < ps->n; i++) {
        const plan_preset *p = &ps->v[i];
        if (!all && p->model.arch != arch)
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = (all || ps->v[j].model.arch == arch) && strcmp(ps->v[j].family, p->family) == 0;
        if (seen)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", p->family);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
}

static int check_request(const plan_presets *ps, double params, plan_arch arch,
                         const char *family, st_err *err)
{
    char fams[256];
    if (!(params >= RESOLVE_MIN_PARAMS && params <= RESOLVE_MAX_PARAMS))
        return ST_RAISE(err, ST_EINVAL, "params %g: allowed range is 1e6 (1M) to 1e15 (1000T)",
                        params);
    if (arch != PLAN_ARCH_GPT && arch != PLAN_ARCH_LLAMA)
        return ST_RAISE(err, ST_EINVAL, "arch %d: allowed are gpt, llama", (int)arch);
    int n_family = 0, n_cand = 0;
    for (int i = 0; ps && i < ps->n; i++) {
        n_family += family && strcmp(ps->v[i].family, family) == 0;
        n_cand += is_candidate(&ps->v[i], arch, family);
    }
    if (family && n_family == 0) {
        list_families(ps, arch, 1, fams, sizeof fams);
        return ST_RAISE(err, ST_EINVAL, "family '%s': unknown; families are: %s", family, fams);
    }
    if (family && n_cand == 0) {
        list_families(ps, arch, 0, fams, sizeof fams);
        return ST_RAISE(err, ST_EINVAL, "family '%s' has no %s presets; %s families are: %s",
                        family, arch_name(arch), arch_name(arch), fams);
    }
    if (n_cand == 0)
        return ST_RAISE(err, ST_ENOENT, "no %s model presets loaded", arch_name(arch));
    return ST_OK;
}

static const plan_preset *find_exact(const plan_presets *ps, double params, plan_arch arch,
                                     const char *family)
{
    const plan_preset *best = NULL;
    for (int i = 0; i < ps->n; i++) {
        const plan_preset *p = &ps->v[i];
        if (!is_candidate(p, arch, family) ||
            fabs(p->nominal_params - params) > RESOLVE_EXACT_REL * params)
            continue;
        if (!best || preferred(p, best, params))
            best = p;
    }
    return best;
}

/* The candidate nearest x = log(P) from below (dir < 0: largest count <= P)
 * or from above (dir > 0: smallest count > P); NULL if none. */
static const plan_preset *find_side(const plan_presets *ps, double params, int dir,
                                    plan_arch arch, const char *family)
{
    const plan_preset *best = NULL;
    double x = log(params);
    for (int i = 0; i < ps->n; i++) {
        const plan_preset *p = &ps->v[i];
        double px = log_params(p);
        if (!is_candidate(p, arch, family) || (dir < 0 ? px > x : px <= x))
            continue;
        double bx = best ? log_params(best) : 0.0;
        if (!best || (dir < 0 ? px > bx : px < bx) || (px == bx && preferred(p, best, params)))
            best = p;
    }
    return best;
}

/* Far point of an end segment: the candidate beyond end (dir > 0: above,
 * dir < 0: below) nearest to it whose hidden differs; NULL if none. */
static const plan_preset *find_partner(const plan_presets *ps, const plan_preset *end, int dir,
                                       plan_arch arch, const char *family)
{
    const plan_preset *best = NULL;
    double ex = log_params(end);
    for (int i = 0; i < ps->n; i++) {
        const plan_preset *p = &ps->v[i];
        double px = log_params(p);
        if (!is_candidate(p, arch, family) || p->model.hidden == end->model.hidden ||
            (dir > 0 ? px <= ex : px >= ex))
            continue;
        if (!best || fabs(px - ex) < fabs(log_params(best) - ex))
            best = p;
    }
    return best;
}

static const plan_preset *find_nearest(const plan_presets *ps, double params, plan_arch arch,
                                       const char *family)
{
    const plan_preset *best = NULL;
    double x = log(params), bd = 0.0;
    for (int i = 0; i < ps->n; i++) {
        const plan_preset *p = &ps->v[i];
        if (!is_candidate(p, arch, family))
            continue;
        double d = fabs(log_params(p) - x);
        if (!best || d < bd || (d == bd && preferred(p, best, params))) {
            best = p;
            bd = d;
        }
    }
    return best;
}

/* The segment the hidden size is read from: the neighbours below and above
 * the request, or outside the presets the end preset and its partner. *p0
 * and *p1 are equal when no partner exists (default slope). */
static void find_segment(const plan_presets *ps, double params, plan_arch arch,
                         const char *family, const plan_preset **p0, const plan_preset **p1)
{
    const plan_preset *a = find_side(ps, params, -1, arch, family);
    const plan_preset *b = find_side(ps, params, +1, arch, family);
    if (!a) {
        const plan_preset *far = find_partner(ps, b, +1, arch, family);
        *p0 = b;
        *p1 = far ? far : b;
    } else if (!b) {
        const plan_preset *far = find_partner(ps, a, -1, arch, family);
        *p0 = far ? far : a;
        *p1 = a;
    } else {
        *p0 = a;
        *p1 = b;
    }
}

/* Unrounded hidden for params on the line through (log P, log h) of p0, p1. */
static double interp_hidden(double params, const plan_preset *p0, const plan_preset *p1)
{
    double x = log(params), x0 = log_params(p0), y0 = log((double)p0->model.hidden);
    double slope = RESOLVE_SLOPE_DEFAULT;
    if (p0 != p1)
        slope = (log((double)p1->model.hidden) - y0) / (log_params(p1) - x0);
    return exp(y0 + slope * (x - x0));
}

/* Rule 2's head size for a hidden size (see the header). */
static int64_t rule_head_dim(double hidden)
{
    return hidden < RESOLVE_SMALL_HIDDEN ? 64 : 128;
}

int64_t plan_derived_head_dim(int64_t hidden)
{
    int64_t hd = rule_head_dim((double)hidden);
    return hidden > 0 && hidden % hd == 0 ? hd : 0;
}

/* Round an unrounded hidden size to the grid of rule 2 (see the header). */
static void round_hidden(double raw, int64_t *hidden, int64_t *head_dim)
{
    int64_t step = 1024, hd = rule_head_dim(raw);
    if (raw < RESOLVE_SMALL_HIDDEN)
        step = 64;
    else if (raw < RESOLVE_WIDE_HIDDEN)
        step = 128;
    else
        step = hd * RESOLVE_HEADS_MULTIPLE;
    double capped = fmin(raw, (double)PLAN_MAX_HIDDEN);
    int64_t h = (int64_t)llround(capped / (double)step) * step;
    *hidden = h < step ? step : h;
    *head_dim = hd;
}

/* SwiGLU inner size: 2/3 of 4h, rounded up to multiple_of (Meta's reference
 * llama/model.py FeedForward: hidden_dim = int(2 * 4h / 3), then rounded up). */
static int64_t llama_ffn(int64_t h)
{
    int64_t f = 2 * (4 * h) / 3;
    return (f + RESOLVE_LLAMA_MULTIPLE_OF - 1) / RESOLVE_LLAMA_MULTIPLE_OF *
           RESOLVE_LLAMA_MULTIPLE_OF;
}

/* Layers whose exact count is nearest params (P = l * per_layer + rest). */
static int fit_layers(plan_model *m, double params, st_err *err)
{
    int rc;
    m->layers = 1;
    if ((rc = plan_model_finish(m, err)))
        return rc;
    double rest = (double)(m->params - m->params_layer);
    double l = round((params - rest) / (double)m->params_layer);
    m->layers = (int64_t)fmax(1.0, fmin(l, (double)PLAN_MAX_LAYERS));
    return plan_model_finish(m, err);
}

/* "20B", "2.5B", "350M", "1.5T": the request as a short label. */
static void fmt_label(double params, char *buf, size_t len)
{
    double div = 1e6;
    char unit = 'M';
    if (params >= 1e12)
        div = 1e12, unit = 'T';
    else if (params >= 1e9)
        div = 1e9, unit = 'B';
    snprintf(buf, len, "%.4g%c", params / div, unit);
}

static int derive(const plan_presets *ps, double params, plan_arch arch, const char *family,
                  plan_model *out, st_err *err)
{
    const plan_preset *lo = NULL, *hi = NULL;
    find_segment(ps, params, arch, family, &lo, &hi);
    double raw = interp_hidden(params, lo, hi);
    const plan_preset *near = find_nearest(ps, params, arch, family);
    plan_model m = {.arch = arch, .seq = near->model.seq, .vocab = near->model.vocab};
    int64_t head_dim;
    round_hidden(raw, &m.hidden, &head_dim);
    m.heads = m.hidden / head_dim;
    if (arch == PLAN_ARCH_LLAMA) {
        m.ffn = llama_ffn(m.hidden);
        m.kv_heads = m.heads % RESOLVE_LLAMA_KV_HEADS == 0 ? RESOLVE_LLAMA_KV_HEADS : m.heads;
        m.tied_embedding = 0;
    } else {
        m.ffn = 4 * m.hidden;
        m.kv_heads = m.heads;
        m.tied_embedding = 1;
    }
    int rc = fit_layers(&m, params, err);
    if (rc)
        return rc;
    char label[16];
    fmt_label(params, label, sizeof label);
    snprintf(m.name, sizeof m.name, "derived-%s", label);
    /* Keys are cut to 24 characters so the note fits PLAN_SOURCE_MAX. */
    int inside = params >= (double)lo->model.params && params <= (double)hi->model.params;
    snprintf(m.source, sizeof m.source,
             "derived: hidden log-log %s %.24s..%.24s, head dim %d; layers fit to "
             "%.8s; ffn %s; seq, vocab of %.24s",
             inside ? "interpolated" : "extrapolated", lo->key, hi->key, (int)head_dim, label,
             arch == PLAN_ARCH_LLAMA ? "2/3*4h to 256, 8 kv heads" : "4h", near->key);
    *out = m;
    return ST_OK;
}

int plan_model_resolve(const plan_presets *presets, double params, plan_arch arch,
                       const char *family, plan_model *out, st_err *err)
{
    if (family && !*family)
        family = NULL;
    int rc = check_request(presets, params, arch, family, err);
    if (rc)
        return rc;
    const plan_preset *p = find_exact(presets, params, arch, family);
    if (!p)
        return derive(presets, params, arch, family, out, err);
    plan_model m = p->model;
    if ((rc = plan_model_finish(&m, err)))
        return rc;
    *out = m;
    return ST_OK;
}
