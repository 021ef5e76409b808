/*
 * plan_preset_cmp.c: what a preset that publishes the layout it was trained
 * with adds to a plan (plan_preset_cmp.h). The SMP presets carry SageMaker
 * model parallel's best-practices reference configurations
 * (data/models.json "reference"):
 *
 *   - The default global batch is the published one. The reference gives
 *     the training script's batch_size; with prescaled_batch that is the
 *     batch of one model-parallel group, and "the global batch size is
 *     smp.rdp_size() multiplied by the per-MP_GROUP batch size" (SMP
 *     parameters, sagemaker-python-sdk smd_model_parallel_general.rst,
 *     Prescaled Batch), rdp_size being the data-parallel degree of the
 *     published layout on the published cluster: GPUs / (tp x pp). Without
 *     prescaled_batch it is per rank, and the global batch is tp times more.
 *     So smp-30b's batch_size=32 on 16 x p4d.24xlarge at TP 8, PP 1 is
 *     32 x 16 = 512 sequences.
 *   - The published layout is evaluated by the planner on the user's cluster
 *     (its TP, PP and knobs, the data-parallel degree the cluster leaves,
 *     the plan's global batch) and set beside the plan ranked #1, with one
 *     sentence naming the term of the step that differs most and the knobs
 *     behind it.
 * A preset counts only while its shape is the published one: a shape changed
 * on the command line is another model.
 */
#include "planner/plan_preset_cmp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan_framework.h"

#define GIB 1073741824.0 /* 2^30: memory is said in GiB */

const plan_preset *plan_preset_of(const plan_presets *presets, const plan_model *m)
{
    for (int i = 0; i < presets->n; i++) {
        const plan_preset *p = &presets->v[i];
        const plan_model *q = &p->model;
        if (p->ref.present && !strcmp(p->key, m->name) && q->arch == m->arch &&
            q->layers == m->layers && q->hidden == m->hidden && q->heads == m->heads &&
            q->kv_heads == m->kv_heads && q->ffn == m->ffn && q->seq == m->seq &&
            q->vocab == m->vocab && q->tied_embedding == m->tied_embedding &&
            plan_model_head_dim(q) == plan_model_head_dim(m) &&
            q->sliding_window == m->sliding_window &&
            q->sliding_window_pattern == m->sliding_window_pattern)
            return p;
    }
    return NULL;
}

int plan_preset_batch(const plan_catalog *cat, const plan_preset *p, int64_t *global, char *src,
                      size_t n, st_err *err)
{
    const plan_preset_ref *r = &p->ref;
    plan_cluster rc;
    int st = plan_cluster_parse(cat, r->instances, &rc, err);
    if (st)
        return st;
    int mp = r->tp * r->pp;
    if (rc.gpus % mp != 0)
        return ST_RAISE(err, ST_EINVAL,
                        "preset %s: reference tp %d x pp %d does not divide the %d GPUs of %s",
                        p->key, r->tp, r->pp, rc.gpus, r->instances);
    int dp = rc.gpus / mp;
    *global = r->batch_size * dp * (r->prescaled_batch ? 1 : r->tp);
    if (r->prescaled_batch)
        snprintf(src, n,
                 "default: %s's published batch_size=%lld per model-parallel group (prescaled "
                 "batch) x %d data-parallel replicas (tp %d, pp %d on %d x %s; SMP best "
                 "practices), set with --global-batch",
                 p->key, (long long)r->batch_size, dp, r->tp, r->pp, rc.nodes, rc.inst->name);
    else
        snprintf(src, n,
                 "default: %s's published batch_size=%lld per rank x %d TP ranks x %d "
                 "data-parallel replicas (pp %d on %d x %s; SMP best practices), set with "
                 "--global-batch",
                 p->key, (long long)r->batch_size, r->tp, dp, r->pp, rc.nodes, rc.inst->name);
    return ST_OK;
}

/* The knobs a comparison names, and which of them drive each time term. */
enum {
    K_TP = 1 << 0, K_PP = 1 << 1, K_DP = 1 << 2, K_MBS = 1 << 3, K_MB = 1 << 4,
    K_ACT = 1 << 5, K_SCHED = 1 << 6, K_RECOMP = 1 << 7, K_SHARD = 1 << 8, K_SP = 1 << 9,
    K_PLACE = 1 << 10, K_OFF = 1 << 11,
};

/* Knobs whose values differ between a and b, as "tp 4 vs 8, ..." (only
 * those in mask; all of them when none in mask differ). */
static unsigned knob_diff(const plan_layout *a, const plan_layout *b, unsigned mask, char *buf,
                          size_t n)
{
    struct {
        unsigned bit;
        const char *name;
        char va[24], vb[24];
        int differ;
    } k[] = {
        {K_TP, "tp", "", "", 0},          {K_PP, "pp", "", "", 0},
        {K_DP, "dp", "", "", 0},          {K_MBS, "micro-batch", "", "", 0},
        {K_MB, "microbatches", "", "", 0}, {K_ACT, "active microbatches", "", "", 0},
        {K_SCHED, "schedule", "", "", 0}, {K_RECOMP, "recompute", "", "", 0},
        {K_SHARD, "sharding", "", "", 0}, {K_SP, "sequence parallel", "", "", 0},
        {K_PLACE, "placement", "", "", 0}, {K_OFF, "offload", "", "", 0},
    };
    const int nk = (int)(sizeof k / sizeof k[0]);
#define NUM(i, fa, fb) snprintf(k[i].va, 24, "%d", fa), snprintf(k[i].vb, 24, "%d", fb)
#define STR(i, sa, sb) snprintf(k[i].va, 24, "%s", sa), snprintf(k[i].vb, 24, "%s", sb)
    NUM(0, a->tp, b->tp);
    NUM(1, a->pp, b->pp);
    NUM(2, a->dp, b->dp);
    NUM(3, a->micro_batch, b->micro_batch);
    NUM(4, a->microbatches, b->microbatches);
    NUM(5, a->active_microbatches, b->active_microbatches);
    STR(6, plan_schedule_name(a->schedule), plan_schedule_name(b->schedule));
    STR(7, plan_recompute_name(a->recompute), plan_recompute_name(b->recompute));
    STR(8, plan_sharding_name(a->sharding), plan_sharding_name(b->sharding));
    STR(9, a->sequence_parallel ? "on" : "off", b->sequence_parallel ? "on" : "off");
    STR(10, a->placement, b->placement);
    STR(11, a->offload_activations ? "on" : "off", b->offload_activations ? "on" : "off");
#undef NUM
#undef STR
    unsigned all = 0;
    for (int i = 0; i < nk; i++) {
        /* the pipeline's own knobs mean nothing without a pipeline */
        int pipe = k[i].bit & (K_ACT | K_SCHED);
        k[i].differ = strcmp(k[i].va, k[i].vb) != 0 && !(pipe && a->pp == 1 && b->pp == 1);
        if (k[i].differ)
            all |= k[i].bit;
    }
    if (!(all & mask))
        mask = all;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < nk && used < n; i++)
        if (k[i].differ && (k[i].bit & mask))
            used += (size_t)snprintf(buf + used, n - used, "%s%s %s vs %s", used ? ", " : "",
                                     k[i].name, k[i].va, k[i].vb);
    return all;
}

static void compare_why(plan_preset_cmp *p, const plan_candidate *ours)
{
    const plan_estimate *eo = &ours->est, *er = &p->ref.est;
    if (p->status == PLAN_PRESET_UNPLACEABLE)
        return; /* why already says it */
    if (p->status == PLAN_PRESET_OOM) {
        snprintf(p->why, sizeof p->why,
                 "SMP's reference layout does not fit by the planner's memory model: its stage %d "
                 "needs %.1f GiB of the GPU's %.1f GiB, where ours needs %.1f GiB.",
                 er->worst_stage, plan_mem_need_bytes(&er->mem) / GIB, er->capacity_bytes / GIB,
                 plan_mem_need_bytes(&eo->mem) / GIB);
        return;
    }
    char knobs[300];
    if (!knob_diff(&ours->layout, &p->ref.layout, ~0u, knobs, sizeof knobs)) {
        snprintf(p->why, sizeof p->why, "Ours is SMP's reference layout.");
        return;
    }
    const plan_time *to = &eo->time, *tr = &er->time;
    struct {
        const char *what;
        double o, r;
        unsigned knobs;
    } t[] = {
        {"compute", to->compute_s, tr->compute_s, K_RECOMP | K_MBS | K_TP | K_SP},
        {"exposed tensor-parallel communication", to->tp_comm_s + to->cp_comm_s,
         tr->tp_comm_s + tr->cp_comm_s, K_TP | K_SP | K_MBS | K_PLACE},
        {"exposed pipeline sends", to->pp_comm_s, tr->pp_comm_s, K_PP | K_MBS | K_PLACE},
        {"gradient sync not hidden behind the backward", to->dp_exposed_s, tr->dp_exposed_s,
         K_DP | K_PP | K_TP | K_SHARD | K_PLACE},
        {"pipeline bubble", to->bubble_s, tr->bubble_s, K_PP | K_MB | K_SCHED | K_ACT},
        {"optimizer step", to->optimizer_s, tr->optimizer_s, K_SHARD | K_DP | K_TP | K_PP},
    };
    const int nt = (int)(sizeof t / sizeof t[0]);
    double d = tr->step_s - to->step_s;
    int best = 0;
    for (int i = 1; i < nt; i++) {
        double di = t[i].r - t[i].o, dbest = t[best].r - t[best].o;
        if (d >= 0 ? di > dbest : di < dbest)
            best = i;
    }
    knob_diff(&ours->layout, &p->ref.layout, t[best].knobs, knobs, sizeof knobs);
    double pct = to->step_s > 0 ? 100 * fabs(d) / (d >= 0 ? tr->step_s : to->step_s) : 0;
    snprintf(p->why, sizeof p->why,
             "Ours is %.1f%% %s per step (%.3f s against %.3f s), most of it in the %s (%.3f s "
             "against %.3f s), where the layouts differ in %s; it needs %.1f GiB per GPU against "
             "%.1f GiB.",
             pct, d >= 0 ? "faster" : "slower", to->step_s, tr->step_s, t[best].what, t[best].o,
             t[best].r, knobs, plan_mem_need_bytes(&eo->mem) / GIB,
             plan_mem_need_bytes(&er->mem) / GIB);
}

/* The search that evaluates the reference: cfg's stack, precision and
 * behaviour, the reference's knobs, dp data-parallel replicas of per
 * sequences each. */
static void ref_config(const plan_config *base, const plan_preset_ref *ref, int dp, int64_t per,
                       int64_t global_batch, plan_config *cfg)
{
    *cfg = *base; /* the same stack, precision and behaviour */
    cfg->tp = ref->tp;
    cfg->pp = ref->pp;
    cfg->dp = dp;
    cfg->cp = 1;
    cfg->microbatches = ref->microbatches;
    cfg->micro_batch = (int)(per / ref->microbatches);
    cfg->active_microbatches = ref->active_microbatches;
    cfg->virtual_stages = 0;
    cfg->schedule = PLAN_SCHED_INTERLEAVED; /* SMP's default pipeline */
    cfg->schedule_mask = 0;
    cfg->recompute = ref->recompute;
    cfg->recompute_group = ref->recompute_group;
    cfg->sharding = ref->sharding;
    /* SMP's default optimize "memory": no activation stored twice across TP
     * ranks, the planner's sequence parallelism (smd_model_parallel_general.rst) */
    cfg->sequence_parallel = ref->tp > 1;
    cfg->offload_activations = 0;
    cfg->prescaled_batch = ref->prescaled_batch;
    memcpy(cfg->placement, "DPT", 4); /* SMP's default placement_strategy, "cluster" */
    cfg->global_batch = global_batch;
    cfg->top_k = 1;
    cfg->allow_tp_across_nodes = 1;   /* the reference is what was published */
}

/* A speed-up over SMP's own layout is a measurement only where SMP runs
 * were fitted; SMP's reference configurations publish no step time
 * (data/reference: aws_smp_v1_refcfg, "no throughput published"), so
 * validate scores none of them and no smp fit exists today. */
static void note_fit(plan_preset_cmp *out, const plan_cluster *c)
{
    out->smp_fitted = c->eff_fit && strcmp(c->eff_fit->framework, plan_fw_family_key(PLAN_FW_SMP)) == 0;
    if (out->status != PLAN_PRESET_FITS || out->smp_fitted)
        return;
    size_t u = strlen(out->why);
    char basis[160];
    if (c->eff_fit)
        snprintf(basis, sizeof basis, "the efficiencies fitted for %s on %s",
                 c->eff_fit->framework, c->eff_fit->silicon);
    else
        snprintf(basis, sizeof basis, "the %s chip's own efficiencies",
                 c->gpu->silicon[0] ? c->gpu->silicon : c->gpu->name);
    snprintf(out->why + u, sizeof out->why - u,
             " No SMP run has been fitted (SMP's reference configurations publish no step "
             "time, so validate scores none of them): both times are the planner's model of "
             "SMP with %s, and the difference is the model's, not a measured one.",
             basis);
}

int plan_preset_compare(const plan_preset *p, const plan_model *m, const plan_cluster *c,
                        const plan_config *base, const plan_result *r, plan_preset_cmp *out,
                        st_err *err)
{
    memset(out, 0, sizeof *out);
    if (!p || r->ntop < 1)
        return ST_OK;
    out->preset = p;
    const plan_framework *fw = plan_framework_get(base->framework);
    if (fw->family != PLAN_FW_SMP) {
        snprintf(out->why, sizeof out->why,
                 "SMP's reference layout for %s is not compared: this plan is for %s.", p->key,
                 fw->label);
        out->status = PLAN_PRESET_UNPLACEABLE;
        out->shown = 1;
        return ST_OK;
    }
    const plan_preset_ref *ref = &p->ref;
    out->shown = 1;
    int mp = ref->tp * ref->pp;
    int dp = mp > 0 && c->gpus % mp == 0 ? c->gpus / mp : 0;
    int64_t per = dp ? r->global_batch / dp : 0;
    if (!dp || r->global_batch % dp != 0 || per % ref->microbatches != 0) {
        out->status = PLAN_PRESET_UNPLACEABLE;
        if (!dp)
            snprintf(out->why, sizeof out->why,
                     "SMP's reference layout for %s (tp %d, pp %d) cannot be placed on the %d "
                     "GPUs of this cluster.",
                     p->key, ref->tp, ref->pp, c->gpus);
        else
            snprintf(out->why, sizeof out->why,
                     "SMP's reference layout for %s (tp %d, pp %d, dp %d, %d microbatches) "
                     "cannot split the global batch of %lld evenly.",
                     p->key, ref->tp, ref->pp, dp, ref->microbatches, (long long)r->global_batch);
        return ST_OK;
    }
    plan_config cfg;
    ref_config(base, ref, dp, per, r->global_batch, &cfg);
    plan_result *res = calloc(1, sizeof *res);
    if (!res)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    st_err inner = {0};
    int rc = plan_search(m, c, &cfg, res, &inner);
    if (rc == ST_OK && res->ntop > 0) {
        out->status = PLAN_PRESET_FITS;
        out->ref = res->top[0];
    } else if (rc == ST_OK && res->min_oom_excess_bytes > 0) {
        out->status = PLAN_PRESET_OOM;
        out->ref = res->closest_oom;
    } else {
        out->status = PLAN_PRESET_UNPLACEABLE;
        const char *reason = inner.msg;
        for (int i = 1; !reason[0] && i < PLAN_REJ__COUNT; i++)
            if (res->rejected[i])
                reason = plan_reject_name((plan_reject)i);
        snprintf(out->why, sizeof out->why,
                 "SMP's reference layout for %s cannot be evaluated on this cluster: %.400s.",
                 p->key, reason[0] ? reason : "no layout");
    }
    free(res);
    compare_why(out, &r->top[0]);
    note_fit(out, c);
    return ST_OK;
}
