/*
 * plan_validate.c: map one published run to the planner's inputs, predict
 * it and compare (plan_validate_run), and summarise the errors.
 *
 * A row is read in four steps, each of which may end it with a reason:
 *   model    layers, hidden, heads, kv heads, ffn (4h when absent), sequence
 *            and vocabulary from the row; Llama (SwiGLU, GQA, untied head)
 *            when kv heads < heads or the architecture says Llama, else GPT
 *            (tied embedding). No shape, no prediction.
 *   cluster  the row's GPU and interconnect text mapped to a catalog
 *            instance type (cluster_rules below); a run on fewer GPUs than
 *            one node has is a one-node cluster of that many GPUs.
 *   layout   tp, pp, cp (1), dp (GPUs / (tp pp cp)), virtual stages (> 1:
 *            Megatron's interleaved schedule, else 1F1B), micro-batch and
 *            microbatches, recompute, sharding, sequence parallelism; what
 *            the row leaves empty comes from its framework's documented
 *            default (framework_rules below). A missing micro-batch is
 *            searched with everything else fixed.
 *   compare  the reference time is iteration_time_s, else TFLOP/s per GPU
 *            converted with the row's own FLOP convention; memory (GB =
 *            1e9 B unless the metric says GiB) against the worst stage's
 *            total; a published OOM against the planner's verdict.
 *
 * Units: seconds, bytes, FLOPs; errors in percent.
 */
#include "planner/plan_validate.h"
#include "planner/plan_validate_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COL(name, req) {#name, offsetof(plan_validate_row, name), req}
const plan_validate_column plan_validate_columns[] = {
    COL(row_id, 1), COL(source_key, 1), COL(model_name, 0), COL(architecture, 0),
    COL(framework, 0), COL(num_layers, 0), COL(hidden_size, 0), COL(num_heads, 0),
    COL(num_kv_heads, 0), COL(ffn_hidden_size, 0), COL(seq_len, 0), COL(vocab_size, 0),
    COL(gpu_type, 0), COL(num_gpus, 1), COL(instance_type, 0), COL(interconnect, 0),
    COL(tp, 0), COL(pp, 0), COL(dp, 0), COL(cp, 0), COL(virtual_stages, 0),
    COL(micro_batch_size, 0), COL(global_batch_size, 0), COL(num_microbatches, 0),
    COL(recompute, 0), COL(optimizer_sharding, 0), COL(sequence_parallel, 0),
    COL(precision, 0), COL(tflops_per_gpu, 0), COL(tflops_convention, 0),
    COL(iteration_time_s, 0), COL(memory_per_gpu_gb, 0), COL(memory_metric, 0),
    COL(other_metrics, 0), COL(notes, 0),
    {NULL, 0, 0},
};
#undef COL

/* ------------------------------------------------------------------------ */
/* How each framework's configuration is read                                */
/* ------------------------------------------------------------------------ */


/* Microbatches in flight are not capped outside SMP (active_microbatches is
 * an SMP knob): a cap no schedule reaches. */
#define NO_ACTIVE_CAP (1 << 24)
/* A global batch recovered from published TFLOP/s and time must land this
 * close to a whole number of sequences to be believed. */
#define DERIVED_BATCH_TOL 0.02
/* Largest global batch read, in sequences: far past any published run, and
 * small enough that every per-replica count fits an int. */
#define MAX_GLOBAL_BATCH (INT64_C(1) << 30)

/* ------------------------------------------------------------------------ */
/* Small text helpers                                                        */
/* ------------------------------------------------------------------------ */

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* Case-insensitive substring test. */
static int contains(const char *hay, const char *needle)
{
    if (!hay || !needle)
        return 0;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] &&
               tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static int blank(const char *s)
{
    if (!s)
        return 1;
    while (isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

/* 0: absent, 1: parsed, -1: not a finite number. */
static int parse_num(const char *s, double *out)
{
    if (blank(s))
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 1;
}

static void copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", nz(src));
}

static int skip(plan_validate_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int skip(plan_validate_result *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    out->compared = 0;
    return 1;
}

static void note(plan_validate_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(plan_validate_result *out, const char *fmt, ...)
{
    size_t used = strlen(out->notes);
    if (used + 3 >= sizeof out->notes)
        return;
    if (used) {
        memcpy(out->notes + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->notes + used, sizeof out->notes - used, fmt, ap);
    va_end(ap);
}

/* A whole number in [min, max] from column `what`: 0 absent, 1 ok, -1 bad
 * (the row is skipped with a reason). */
static int get_int(plan_validate_result *out, const char *what, const char *text, int64_t min,
                   int64_t max, int64_t *v)
{
    double d;
    int r = parse_num(text, &d);
    if (r == 0)
        return 0;
    if (r < 0 || d != floor(d) || d < (double)min || d > (double)max) {
        skip(out, "%s '%s': expected a whole number in [%lld, %lld]", what, nz(text),
             (long long)min, (long long)max);
        return -1;
    }
    *v = (int64_t)d;
    return 1;
}

/* A positive number: 0 absent, 1 ok, -1 bad. */
static int get_pos(plan_validate_result *out, const char *what, const char *text, double *v)
{
    int r = parse_num(text, v);
    if (r == 0)
        return 0;
    if (r < 0 || *v <= 0) {
        skip(out, "%s '%s': expected a positive number", what, nz(text));
        return -1;
    }
    return 1;
}

const char *plan_validate_basis_name(plan_validate_basis b)
{
    switch (b) {
    case PLAN_VAL_BASIS_TIME:
        return "iteration time";
    case PLAN_VAL_BASIS_EQ3:
        return "TFLOP/s via Eq. 3";
    case PLAN_VAL_BASIS_MODEL_FLOPS:
        return "TFLOP/s via model FLOPs";
    case PLAN_VAL_BASIS_NONE:
    default:
        return "none";
    }
}

double plan_validate_eq3_flops(double B, double s, double l, double h, double V)
{
    /* Narayanan et al. 2021, Eq. 3 (forward, backward and the recomputed
     * forward of every layer, plus the LM head). */
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double plan_validate_model_flops(double B, double s, double l, double h, double V)
{
    /* NVIDIA dgxc-benchmarking README, "Notes": model FLOPs per sample of a
     * GPT model, s (24 l h^2 + 12 l h s + 48 l h^2 + 6 V h) (no recompute). */
    return B * s * (24.0 * l * h * h + 12.0 * l * h * s + 48.0 * l * h * h + 6.0 * V * h);
}

/* ------------------------------------------------------------------------ */
/* Row -> model                                                              */
/* ------------------------------------------------------------------------ */

static int map_model(const plan_validate_row *r, plan_validate_result *out)
{
    int64_t L = 0, H = 0, A = 0, KV = 0, F = 0, S = 0, V = 0;
    int hl, hh, ha, hkv, hf, hs, hv;
    if ((hl = get_int(out, "num_layers", r->num_layers, 1, PLAN_MAX_LAYERS, &L)) < 0 ||
        (hh = get_int(out, "hidden_size", r->hidden_size, 1, PLAN_MAX_HIDDEN, &H)) < 0 ||
        (ha = get_int(out, "num_heads", r->num_heads, 1, PLAN_MAX_HEADS, &A)) < 0 ||
        (hkv = get_int(out, "num_kv_heads", r->num_kv_heads, 1, PLAN_MAX_HEADS, &KV)) < 0 ||
        (hf = get_int(out, "ffn_hidden_size", r->ffn_hidden_size, 1, 16 * (int64_t)PLAN_MAX_HIDDEN,
                      &F)) < 0 ||
        (hs = get_int(out, "seq_len", r->seq_len, 1, PLAN_MAX_SEQ, &S)) < 0 ||
        (hv = get_int(out, "vocab_size", r->vocab_size, 1, PLAN_MAX_VOCAB, &V)) < 0)
        return 1;
    if (!hl || !hh || !ha)
        return skip(out, "shape not published (layers, hidden size or heads missing)");
    if (!hs)
        return skip(out, "sequence length not published");
    if (!hv)
        return skip(out, "vocabulary size not published");

    plan_model *m = &out->model;
    memset(m, 0, sizeof *m);
    copy(m->name, sizeof m->name, blank(r->model_name) ? "row" : r->model_name);
    snprintf(m->source, sizeof m->source, "%s row %s", nz(r->source_key), nz(r->row_id));
    m->layers = L;
    m->hidden = H;
    m->heads = A;
    m->kv_heads = hkv ? KV : A;
    m->ffn = hf ? F : 4 * H;
    m->seq = S;
    m->vocab = V;
    int llama = m->kv_heads < m->heads || contains(r->architecture, "llama") ||
                contains(r->model_name, "llama");
    m->arch = llama ? PLAN_ARCH_LLAMA : PLAN_ARCH_GPT;
    m->tied_embedding = !llama;
    st_err e = {0};
    if (plan_model_finish(m, &e) != ST_OK)
        return skip(out, "model shape: %s", e.msg);
    out->have_model = 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Row -> cluster                                                            */
/* ------------------------------------------------------------------------ */

static const plan_instance *map_instance(const plan_catalog *cat, const plan_validate_row *r,
                                         plan_validate_result *out)
{
    /* "ml.p4d.24xlarge x16": the first word names the instance type. */
    if (!blank(r->instance_type)) {
        char word[64];
        const char *s = r->instance_type;
        while (isspace((unsigned char)*s))
            s++;
        size_t n = strcspn(s, " \t");
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), s);
        const plan_instance *in = plan_catalog_find(cat, word);
        if (in)
            return in;
    }
    for (int i = 0; i < plan__ncluster_rules; i++) {
        const cluster_rule *c = &plan__cluster_rules[i];
        int ok = 1;
        for (int k = 0; k < 2 && ok; k++)
            if (c->need[k])
                ok = contains(r->gpu_type, c->need[k]) || contains(r->instance_type, c->need[k]) ||
                     contains(r->interconnect, c->need[k]);
        if (!ok)
            continue;
        const plan_instance *in = plan_catalog_find(cat, c->instance);
        if (!in) {
            skip(out, "instance type '%s' (for GPU '%s') is not in the catalog", c->instance,
                 nz(r->gpu_type));
            return NULL;
        }
        return in;
    }
    skip(out, "no catalog instance type for GPU '%s' (%s)", nz(r->gpu_type),
         blank(r->interconnect) ? "interconnect not given" : r->interconnect);
    return NULL;
}

static int map_cluster(const plan_catalog *cat, const plan_validate_row *r, int64_t gpus,
                       plan_cluster *c, plan_validate_result *out)
{
    const plan_instance *in = map_instance(cat, r, out);
    if (!in)
        return 1;
    int g = in->gpus_per_node;
    int nodes;
    if (gpus < g)
        nodes = 1;
    else if (gpus % g != 0)
        return skip(out, "%lld GPUs is not a whole number of %s nodes (%d GPUs each)",
                    (long long)gpus, in->name, g);
    else
        nodes = (int)(gpus / g);
    st_err e = {0};
    if (plan_cluster_make(cat, in, nodes, c, &e) != ST_OK)
        return skip(out, "cluster %d x %s: %s", nodes, in->name, e.msg);
    if (gpus < g) {
        /* A run on part of one node: that many GPUs of the node's type. */
        c->gpus = (int)gpus;
        note(out, "%lld of the %d GPUs of one %s", (long long)gpus, g, in->name);
    }
    copy(out->instance, sizeof out->instance, in->name);
    out->nodes = c->nodes;
    out->gpus = c->gpus;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Row -> layout                                                             */
/* ------------------------------------------------------------------------ */

static const framework_rule *find_framework(const plan_validate_row *r)
{
    for (int i = 0; i < plan__nframework_rules; i++) {
        const framework_rule *f = &plan__framework_rules[i];
        if (contains(r->framework, f->framework) ||
            (f->source && contains(r->source_key, f->source)))
            return f;
    }
    return &plan__default_rule;
}

/* Recompute text: "selective ..." -> selective; "full", "... recomputation",
 * "... checkpointing" -> full; "none", "no", "off", "false" -> none; -1 for
 * text not understood, -2 for empty. */
static int parse_recompute(const char *s)
{
    if (blank(s))
        return -2;
    if (contains(s, "selective"))
        return PLAN_RECOMP_SELECTIVE;
    if (contains(s, "full") || contains(s, "recomput") || contains(s, "checkpoint"))
        return PLAN_RECOMP_FULL;
    if (contains(s, "none") || contains(s, "false") || contains(s, "off") || contains(s, "no"))
        return PLAN_RECOMP_NONE;
    return -1;
}

/* Sharding text: ZeRO stage names, SMP and Megatron names; -1 not
 * understood, -2 empty. */
static int parse_sharding(const char *s)
{
    if (blank(s))
        return -2;
    if (contains(s, "zero-3") || contains(s, "zero3") || contains(s, "zero stage 3") ||
        contains(s, "fsdp") || contains(s, "sharded data parallel") || contains(s, "params"))
        return PLAN_SHARD_PARAMS;
    if (contains(s, "zero-2") || contains(s, "zero2") || contains(s, "zero stage 2"))
        return PLAN_SHARD_GRADIENTS;
    if (contains(s, "zero-1") || contains(s, "zero1") || contains(s, "zero stage 1") ||
        contains(s, "optimizer state sharding") || contains(s, "distributed optimizer") ||
        contains(s, "shard_optimizer_state"))
        return PLAN_SHARD_OPTIMIZER;
    if (contains(s, "none") || contains(s, "false") || contains(s, "off") || contains(s, "no"))
        return PLAN_SHARD_NONE;
    return -1;
}

/* 1/0 for yes/no words (the first word of the text), -1 not understood,
 * -2 empty. */
static int parse_flag(const char *s)
{
    if (blank(s))
        return -2;
    static const char *const yes[] = {"1", "true", "yes", "on", "enabled"};
    static const char *const no[] = {"0", "false", "no", "off", "disabled"};
    char w[16];
    int n = 0;
    while (isspace((unsigned char)*s))
        s++;
    while (isalnum((unsigned char)s[n]) && n < (int)sizeof w - 1) {
        w[n] = (char)tolower((unsigned char)s[n]);
        n++;
    }
    w[n] = '\0';
    for (int i = 0; i < 5; i++) {
        if (strcmp(w, yes[i]) == 0)
            return 1;
        if (strcmp(w, no[i]) == 0)
            return 0;
    }
    return -1;
}

typedef struct row_layout {
    plan_layout l;
    int search_mbs;              /* micro-batch not given: search it */
} row_layout;

/* Reference FLOPs of one iteration under the row's convention, for a
 * global batch B; 0 with basis NONE when the convention is not known. */
static double convention_flops(const plan_validate_row *r, const plan_model *m, double B,
                               plan_validate_basis *basis)
{
    const char *c = r->tflops_convention;
    double s = (double)m->seq, l = (double)m->layers, h = (double)m->hidden, V = (double)m->vocab;
    if (contains(c, "Eq.3") || contains(c, "Eq. 3")) {
        *basis = PLAN_VAL_BASIS_EQ3;
        return plan_validate_eq3_flops(B, s, l, h, V);
    }
    if (contains(c, "dgxc") && m->arch == PLAN_ARCH_GPT) {
        *basis = PLAN_VAL_BASIS_MODEL_FLOPS;
        return plan_validate_model_flops(B, s, l, h, V);
    }
    *basis = PLAN_VAL_BASIS_NONE;
    return 0.0;
}

static int map_layout(const plan_validate_row *r, const plan_model *m, int64_t gpus,
                      const framework_rule *fw, row_layout *rl, plan_validate_result *out)
{
    plan_layout *l = &rl->l;
    plan_layout_default(l);
    rl->search_mbs = 0;
    int64_t tp = 1, pp = 1, cp = 1, dp = 0, v = 1, mbs = 0, gb = 0, nmb = 0;
    int hdp, hmbs, hgb, hnmb;
    if (get_int(out, "tp", r->tp, 1, 1 << 20, &tp) < 0 ||
        get_int(out, "pp", r->pp, 1, PLAN_PP_MAX, &pp) < 0 ||
        get_int(out, "cp", r->cp, 1, 1 << 20, &cp) < 0 ||
        (hdp = get_int(out, "dp", r->dp, 1, 1 << 24, &dp)) < 0 ||
        get_int(out, "virtual_stages", r->virtual_stages, 1, 1 << 20, &v) < 0 ||
        (hmbs = get_int(out, "micro_batch_size", r->micro_batch_size, 1, 1 << 24, &mbs)) < 0 ||
        (hgb = get_int(out, "global_batch_size", r->global_batch_size, 1, MAX_GLOBAL_BATCH,
                       &gb)) < 0 ||
        (hnmb = get_int(out, "num_microbatches", r->num_microbatches, 1, 1 << 30, &nmb)) < 0)
        return 1;
    int64_t mp = tp * pp * cp;
    if (gpus % mp != 0)
        return skip(out, "tp x pp x cp = %lld does not divide %lld GPUs", (long long)mp,
                    (long long)gpus);
    if (!hdp)
        dp = gpus / mp;
    else if (dp * mp != gpus)
        return skip(out, "tp x pp x dp x cp = %lld, but the run has %lld GPUs",
                    (long long)(dp * mp), (long long)gpus);

    if (!hgb) {
        /* Published TFLOP/s and time pin the batch under the row's convention. */
        double tf, t;
        plan_validate_basis b;
        double f1 = convention_flops(r, m, 1.0, &b);
        if (parse_num(r->tflops_per_gpu, &tf) == 1 && parse_num(r->iteration_time_s, &t) == 1 &&
            f1 > 0 && tf > 0 && t > 0) {
            double B = tf * 1e12 * (double)gpus * t / f1;
            double Br = floor(B + 0.5);
            if (Br >= 1 && Br <= (double)MAX_GLOBAL_BATCH &&
                fabs(B - Br) <= DERIVED_BATCH_TOL * Br) {
                gb = (int64_t)Br;
                note(out, "global batch %lld derived from TFLOP/s and time (%s)", (long long)gb,
                     plan_validate_basis_name(b));
            }
        }
        if (!gb)
            return skip(out, "global batch not published");
    }

    if (hmbs && hnmb) {
        if (gb % (dp * mbs) != 0 || gb / (dp * mbs) != nmb)
            return skip(out, "global batch %lld != dp %lld x micro-batch %lld x %lld microbatches",
                        (long long)gb, (long long)dp, (long long)mbs, (long long)nmb);
    } else if (hmbs) {
        if (gb % (dp * mbs) != 0)
            return skip(out, "global batch %lld is not a multiple of dp %lld x micro-batch %lld",
                        (long long)gb, (long long)dp, (long long)mbs);
        nmb = gb / (dp * mbs);
    } else if (hnmb) {
        if (gb % (dp * nmb) != 0)
            return skip(out, "global batch %lld is not a multiple of dp %lld x %lld microbatches",
                        (long long)gb, (long long)dp, (long long)nmb);
        mbs = gb / (dp * nmb);
    } else if (fw->local_batch) {
        if (gb % dp != 0)
            return skip(out, "global batch %lld is not a multiple of dp %lld", (long long)gb,
                        (long long)dp);
        mbs = gb / dp;
        nmb = 1;
        note(out, "micro-batch %lld = global / dp (%s: no gradient accumulation)", (long long)mbs,
             fw->label);
    } else {
        rl->search_mbs = 1;
        mbs = 1;
        nmb = gb / dp;
    }
    if (mbs > INT_MAX || nmb > INT_MAX)
        return skip(out, "micro-batch or microbatch count too large");

    l->tp = (int)tp;
    l->pp = (int)pp;
    l->cp = (int)cp;
    l->dp = (int)dp;
    l->micro_batch = (int)mbs;
    l->microbatches = (int)nmb;
    l->active_microbatches = NO_ACTIVE_CAP;
    l->global_batch = gb;
    l->schedule = v > 1 ? PLAN_SCHED_VIRTUAL : PLAN_SCHED_INTERLEAVED;
    l->virtual_stages = (int)v;
    l->recompute_group = 1;
    l->prescaled_batch = 0;
    l->offload_activations = 0;
    memcpy(l->placement, fw->placement, 4);
    l->flash_attention = fw->flash_attention;
    l->dp_overlap = fw->dp_overlap;
    l->tp_overlap = fw->tp_overlap;
    l->pp_overlap = fw->pp_overlap;
    l->dp_bucket_bytes = fw->dp_bucket_bytes;
    l->launch_blocking = fw->launch_blocking;
    if (fw->launch_blocking)
        note(out, "blocking kernel launches (%s: CUDA_LAUNCH_BLOCKING=1)", fw->label);

    int rc = parse_recompute(r->recompute);
    if (rc == -1)
        return skip(out, "recompute '%s' not understood", r->recompute);
    if (rc == -2) {
        rc = fw->recompute;
        note(out, "recompute %s (%s default)", plan_recompute_name((plan_recompute)rc), fw->label);
    }
    l->recompute = (plan_recompute)rc;

    int sh = parse_sharding(r->optimizer_sharding);
    if (sh == -1)
        return skip(out, "optimizer_sharding '%s' not understood", r->optimizer_sharding);
    if (sh == -2) {
        sh = fw->sharding;
        if (sh != PLAN_SHARD_NONE)
            note(out, "sharding %s (%s default)", plan_sharding_name((plan_sharding)sh), fw->label);
    }
    l->sharding = (plan_sharding)sh;

    int sp = parse_flag(r->sequence_parallel);
    if (sp == -1)
        return skip(out, "sequence_parallel '%s' not understood", r->sequence_parallel);
    if (sp == -2) {
        sp = fw->sp_with_tp && tp > 1;
        if (sp)
            note(out, "sequence parallel (%s default with TP)", fw->label);
    }
    l->sequence_parallel = sp;
    if (contains(r->precision, "fp32 grad")) {
        l->fp32_grads = 1;
        note(out, "fp32 gradients (4 bytes)");
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Evaluate                                                                  */
/* ------------------------------------------------------------------------ */

/* Search the micro-batch with every other knob as the row fixed it; the
 * fastest layout that fits, else the one that misses memory by least. */
static int search_mbs(const plan_model *m, const plan_cluster *c, plan_layout *l,
                      unsigned schedules, plan_estimate *est, plan_validate_result *out, int *skipped, st_err *err)
{
    *skipped = 0;
    plan_config cfg;
    plan_config_from_layout(&cfg, l);
    cfg.micro_batch = 0; /* searched */
    cfg.microbatches = 0;
    if (schedules && l->virtual_stages == 1) {
        /* the source does not say which schedule ran: search its framework's */
        cfg.schedule = -1;
        cfg.schedule_mask = schedules;
        cfg.virtual_stages = 0;
    }
    cfg.allow_tp_across_nodes = 1; /* the published layout is what ran */
    cfg.top_k = 1;

    plan_result *res = calloc(1, sizeof *res);
    if (!res)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate a search result");
    st_err e = {0};
    int rc = plan_search(m, c, &cfg, res, &e);
    if (rc != ST_OK) {
        free(res);
        *skipped = skip(out, "micro-batch search: %s", e.msg);
        return ST_OK;
    }
    const plan_candidate *best = NULL;
    if (res->ntop > 0)
        best = &res->top[0];
    else if (res->rejected[PLAN_REJ_OOM] > 0)
        best = &res->closest_oom;
    if (!best) {
        int why = 0;
        for (int i = 1; i < PLAN_REJ__COUNT; i++)
            if (res->rejected[i] > res->rejected[why])
                why = i;
        free(res);
        *skipped = skip(out, "micro-batch search: no layout evaluated (%s)",
                        plan_reject_name((plan_reject)why));
        return ST_OK;
    }
    *l = best->layout;
    *est = best->est;
    out->micro_batch_searched = 1;
    note(out, "micro-batch %d searched", l->micro_batch);
    if (cfg.schedule_mask) {
        if (l->schedule == PLAN_SCHED_VIRTUAL)
            note(out, "schedule searched: interleaved, %d virtual stages", l->virtual_stages);
        else
            note(out, "schedule searched: %s", plan_schedule_name(l->schedule));
    }
    free(res);
    return ST_OK;
}

int plan_validate_run(const plan_catalog *cat, const plan_validate_row *row,
                      plan_validate_result *out, plan_terms *terms, st_err *err)
{
    memset(out, 0, sizeof *out);
    copy(out->row_id, sizeof out->row_id, row->row_id);
    copy(out->source_key, sizeof out->source_key, row->source_key);
    if (terms)
        terms->n = 0;

    if (map_model(row, out))
        return ST_OK;
    const plan_model *m = &out->model;

    int64_t gpus = 0;
    int hg = get_int(out, "num_gpus", row->num_gpus, 1, 1 << 24, &gpus);
    if (hg < 0)
        return ST_OK;
    if (hg == 0) {
        skip(out, "number of GPUs not published");
        return ST_OK;
    }
    plan_cluster c;
    if (map_cluster(cat, row, gpus, &c, out))
        return ST_OK;

    const framework_rule *fw = find_framework(row);
    if (fw == &plan__default_rule)
        note(out, "framework '%s' has no rule: planner defaults", nz(row->framework));
    row_layout rl;
    if (map_layout(row, m, gpus, fw, &rl, out))
        return ST_OK;

    plan_estimate *est = &out->est;
    if (rl.search_mbs) {
        int skipped, rc = search_mbs(m, &c, &rl.l, fw->schedules, est, out, &skipped, err);
        if (rc != ST_OK || skipped)
            return rc;
    } else {
        st_err e = {0};
        if (plan_evaluate(m, &c, &rl.l, est, NULL, &e) != ST_OK) {
            skip(out, "layout: %s", e.msg);
            return ST_OK;
        }
    }
    if (est->reject != PLAN_OK && est->reject != PLAN_REJ_OOM) {
        skip(out, "layout rejected by the planner: %s (%s)", plan_reject_name(est->reject),
             est->reason);
        return ST_OK;
    }
    if (terms) {
        st_err e = {0};
        plan_estimate again;
        plan_evaluate(m, &c, &rl.l, &again, terms, &e);
    }
    out->layout = rl.l;
    out->have_layout = 1;
    out->pred_oom = est->reject == PLAN_REJ_OOM;
    out->pred_time_s = est->time.step_s;
    out->pred_mem_bytes = est->mem.total_bytes;

    /* ---- memory ---- */
    out->ref_oom = contains(row->memory_metric, "OOM") || contains(row->memory_per_gpu_gb, "OOM") ||
                   contains(row->other_metrics, "OOM") || contains(row->notes, "went OOM");
    double gb;
    if (!out->ref_oom && parse_num(row->memory_per_gpu_gb, &gb) == 1 && gb > 0) {
        double unit = contains(row->memory_metric, "GiB") ? 1073741824.0 : 1e9;
        out->have_mem = 1;
        out->ref_mem_bytes = gb * unit;
        out->mem_error_pct =
            100.0 * (out->pred_mem_bytes - out->ref_mem_bytes) / out->ref_mem_bytes;
    }
    if (out->pred_oom && !out->ref_oom)
        note(out, "planner: out of memory (%s)", est->reason);

    /* ---- time ---- */
    if (out->ref_oom) {
        skip(out, "published run went out of memory; planner %s (worst stage %.1f GiB of %.1f)",
             out->pred_oom ? "agrees: OOM" : "says it fits", est->mem.total_bytes / 1073741824.0,
             est->capacity_bytes / 1073741824.0);
        return ST_OK;
    }
    double t = 0, tf = 0;
    int ht = get_pos(out, "iteration_time_s", row->iteration_time_s, &t);
    if (ht < 0)
        return ST_OK;
    if (ht > 0) {
        out->basis = PLAN_VAL_BASIS_TIME;
        out->ref_time_s = t;
    } else {
        int hf = get_pos(out, "tflops_per_gpu", row->tflops_per_gpu, &tf);
        if (hf < 0)
            return ST_OK;
        if (hf == 0) {
            skip(out, "neither iteration_time_s nor tflops_per_gpu published");
            return ST_OK;
        }
        double F = convention_flops(row, m, (double)rl.l.global_batch, &out->basis);
        if (F <= 0) {
            skip(out, "TFLOP/s convention '%s' not understood", nz(row->tflops_convention));
            return ST_OK;
        }
        out->ref_time_s = F / (tf * 1e12 * (double)gpus);
        note(out, "reference time from %.1f TFLOP/s per GPU (%s)", tf,
             plan_validate_basis_name(out->basis));
    }
    out->error_pct = 100.0 * (out->pred_time_s - out->ref_time_s) / out->ref_time_s;
    out->compared = 1;
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                   */
/* ------------------------------------------------------------------------ */

static void add(plan_validate_stats *s, const plan_validate_result *r)
{
    s->rows++;
    if (r->compared) {
        double a = fabs(r->error_pct);
        s->mean_abs_error_pct += a; /* sums until finish() */
        s->mean_error_pct += r->error_pct;
        if (s->compared == 0 || a > s->max_abs_error_pct) {
            s->max_abs_error_pct = a;
            copy(s->worst_row_id, sizeof s->worst_row_id, r->row_id);
        }
        s->compared++;
    }
    if (r->have_mem) {
        double a = fabs(r->mem_error_pct);
        s->mem_mean_abs_error_pct += a;
        if (s->mem_compared == 0 || a > s->mem_max_abs_error_pct)
            s->mem_max_abs_error_pct = a;
        s->mem_compared++;
    }
    if (r->ref_oom && r->have_layout) {
        s->oom_reference++;
        s->oom_agreed += r->pred_oom;
    }
    if (!r->ref_oom && r->have_layout && r->pred_oom)
        s->pred_oom_of_ran++;
}

static void finish(plan_validate_stats *s)
{
    if (s->compared) {
        s->mean_abs_error_pct /= s->compared;
        s->mean_error_pct /= s->compared;
    }
    if (s->mem_compared)
        s->mem_mean_abs_error_pct /= s->mem_compared;
}

void plan_validate_summarize(const plan_validate_result *r, int n, plan_validate_summary *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n; i++) {
        add(&s->all, &r[i]);
        int k = 0;
        while (k < s->nsources && strcmp(s->source[k].source_key, r[i].source_key) != 0)
            k++;
        if (k == s->nsources) {
            if (k == PLAN_VAL_SOURCES_MAX) {
                s->rows_unlisted++;
                continue;
            }
            s->nsources++;
            copy(s->source[k].source_key, sizeof s->source[k].source_key, r[i].source_key);
        }
        add(&s->source[k], &r[i]);
    }
    finish(&s->all);
    for (int k = 0; k < s->nsources; k++)
        finish(&s->source[k]);
}
