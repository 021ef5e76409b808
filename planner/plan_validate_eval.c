/*
 * plan_validate_eval.c: a published run's layout, as plan_validate.c maps
 * it, evaluated: the micro-batch, the schedule and (without a published
 * layout) the degrees searched where the row leaves them open, the fastest
 * layout that fits taken, as a tuned run would have run; and a recompute
 * the row leaves out inferred where the stack's default cannot have fit
 * the memory the run had (infer_recompute).
 */
#include "planner/plan_validate_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define blank plan__blank
#define contains plan__contains
#define note plan__note
#define skip plan__skip

/* A search's answer for a row: its fastest layout that fits, else the one
 * that misses memory by least; NULL when it evaluated none. */
static const plan_candidate *best_of(const plan_result *res)
{
    if (res->ntop > 0)
        return &res->top[0];
    return res->rejected[PLAN_REJ_OOM] > 0 ? &res->closest_oom : NULL;
}

/* Batches within PLAN__BATCH_ROUND_TOL of gb, nearest first: gb rounded to the
 * nearest multiple of 2^k for each k (a batch that many data-parallel
 * replicas and microbatches divide), each once; the count. */
static int batch_candidates(int64_t gb, int64_t *v, int cap)
{
    int n = 0;
    for (int k = 1; k < 31 && n < cap; k++) {
        int64_t u = (int64_t)1 << k, x = (gb + u / 2) / u * u;
        if (x < 1 || x == gb || fabs((double)(x - gb)) > PLAN__BATCH_ROUND_TOL * (double)gb)
            continue;
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = v[j] == x;
        if (!seen)
            v[n++] = x;
    }
    /* nearest first; on a tie the larger (more of it divides) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int64_t a = v[j - 1], b = v[j];
            int64_t da = a > gb ? a - gb : gb - a, db = b > gb ? b - gb : gb - b;
            if (db < da || (db == da && b > a)) {
                v[j - 1] = b;
                v[j] = a;
            }
        }
    return n;
}

/* Search the micro-batch with every other knob as the row fixed it; the
 * fastest layout that fits, else the one that misses memory by least. */
static int search_mbs(const plan_model *m, const plan_cluster *c, plan_layout *l, int degrees,
                      int keep_mbs, unsigned schedules, plan_estimate *est,
                      plan_validate_result *out, int *skipped, st_err *err)
{
    *skipped = 0;
    plan_config cfg;
    plan_config_from_layout(&cfg, l);
    if (!keep_mbs) {
        cfg.micro_batch = 0; /* searched */
        cfg.microbatches = 0;
    }
    if (degrees) {
        /* the row publishes no parallel layout: the framework's best, as a
         * tuned run would use it (its microbatches follow from the degrees) */
        cfg.tp = cfg.pp = cfg.dp = 0;
        cfg.microbatches = 0;
        cfg.cp = l->cp;
        cfg.sequence_parallel = -1;
        cfg.virtual_stages = 0;
        cfg.schedule = -1;
        cfg.allow_tp_across_nodes = 0;
    }
    cfg.active_microbatches = l->active_microbatches >= PLAN__NO_ACTIVE_CAP ? 0 : l->active_microbatches;
    if (schedules && l->virtual_stages == 1) {
        /* the source does not say which schedule ran: search its framework's */
        cfg.schedule = -1;
        cfg.schedule_mask = schedules;
        cfg.virtual_stages = 0;
    }
    if (!degrees)
        cfg.allow_tp_across_nodes = 1; /* the published layout is what ran */
    cfg.any_instance = 1; /* ... and where it ran */
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
    const plan_candidate *best = best_of(res);
    /* A published batch no layout of the search divides (a rounded figure:
     * "4M tokens" of 2048-token sequences is 1953.1 of them) is read as the
     * nearest batch within PLAN__BATCH_ROUND_TOL that one does, as a whole number
     * of microbatches is for a published layout (whole_batch). */
    int64_t gb0 = cfg.global_batch, cand[24];
    int ncand = best || gb0 < 2 ? 0 : batch_candidates(gb0, cand, 24);
    for (int i = 0; i < ncand && !best; i++) {
        cfg.global_batch = cand[i];
        memset(res, 0, sizeof *res);
        if (plan_search(m, c, &cfg, res, &e) != ST_OK)
            continue;
        best = best_of(res);
        if (best)
            note(out, "global batch %lld read as %lld, the nearest a layout of the search runs",
                 (long long)gb0, (long long)cand[i]);
    }
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
    out->micro_batch_searched = !keep_mbs;
    if (degrees)
        note(out, "parallel layout not published: the planner's best for the framework, tp %d "
                  "pp %d dp %d", l->tp, l->pp, l->dp);
    if (!keep_mbs)
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

/* The published run went out of memory: its memory or metrics say so. */
int plan__row_went_oom(const plan_validate_row *row)
{
    return contains(row->memory_metric, "OOM") || contains(row->memory_per_gpu_gb, "OOM") ||
           contains(row->memory_per_gpu_gb, "out of memory") ||
           contains(row->other_metrics, "OOM") || contains(row->notes, "went OOM");
}

/* The row's layout evaluated into out->est, its micro-batch or its
 * pipeline's schedule searched where the row leaves them open; 1 when the
 * row is skipped (out says why) or on an error (*rc). */
static int evaluate_row(const plan_model *m, const plan_cluster *c, const plan_framework *fw,
                        const plan_validate_row *row, row_layout *rl, plan_validate_result *out,
                        int *rc, st_err *err)
{
    plan_estimate *est = &out->est;
    *rc = ST_OK;
    /* a pipeline whose schedule the run does not state, on a stack with
     * more than one it could have run: searched as in search_mbs, the
     * published micro-batch kept */
    unsigned su = fw->schedules_unknown;
    int sched_open = rl->l.pp > 1 && rl->l.virtual_stages == 1 && (su & (su - 1)) &&
                     plan__virtual_unstated(row->virtual_stages);
    if (rl->search_mbs || rl->search_degrees || sched_open) {
        int skipped;
        *rc = search_mbs(m, c, &rl->l, rl->search_degrees, !rl->search_mbs, su, est, out,
                         &skipped, err);
        if (*rc != ST_OK || skipped)
            return 1;
    } else {
        st_err e = {0};
        if (plan_evaluate(m, c, &rl->l, est, NULL, &e) != ST_OK) {
            skip(out, "layout: %s", e.msg);
            return 1;
        }
    }
    if (est->reject != PLAN_OK && est->reject != PLAN_REJ_OOM) {
        skip(out, "layout rejected by the planner: %s (%s)", plan_reject_name(est->reject),
             est->reason);
        return 1;
    }
    return 0;
}

/* What the memory model misses on a chip's published memory figures
 * (plan_gpu.mem_err_pct); a chip without any takes the worst chip's; 0
 * when no chip has one. */
static double mem_band_pct(const plan_catalog *cat, const plan_gpu *g)
{
    if (g && g->mem_err_pct > 0)
        return g->mem_err_pct;
    double worst = 0;
    for (int i = 0; i < cat->ngpus; i++)
        worst = fmax(worst, cat->gpus[i].mem_err_pct);
    return worst;
}

void plan__recompute_words(plan_recompute k, int layers, char *out, size_t n)
{
    if (k == PLAN_RECOMP_FULL && layers > 0)
        snprintf(out, n, "full recompute of the first %d layer%s of each model chunk (the block "
                 "method)", layers, layers == 1 ? "" : "s");
    else
        snprintf(out, n, "%s recompute", plan_recompute_name(k));
}

double plan__recompute_rank(plan_recompute k, int layers)
{
    if (k != PLAN_RECOMP_FULL)
        return (double)k; /* none 0, selective 1 */
    return layers > 0 ? 2.0 + layers : 1e9; /* more layers recomputed, less kept */
}

/* Trial of recompute kind k (with n layers of each chunk by the block
 * method, 0: all) on the layout as asked, into t from before: 1 when it
 * fits, 0 when it runs out of memory, TRY_SKIPPED when the layout is not
 * compared, -1 on an error (*rc). */
#define TRY_SKIPPED (-2)
static int try_recompute(const plan_model *m, const plan_cluster *c, const plan_framework *fw,
                         const plan_validate_row *row, const row_layout *asked, int k, int n,
                         const plan_validate_result *before, row_layout *tl,
                         plan_validate_result *t, int *rc, st_err *err)
{
    *tl = *asked;
    tl->l.recompute = (plan_recompute)k;
    tl->l.recompute_layers = n;
    *t = *before;
    int skipped = evaluate_row(m, c, fw, row, tl, t, rc, err);
    if (*rc != ST_OK)
        return -1;
    if (skipped)
        return TRY_SKIPPED;
    return t->est.reject != PLAN_REJ_OOM;
}

/* A run that ran, whose recompute the row leaves to its stack's default
 * (or says it derived, plan__row_derives) where that does not fit by more
 * than the memory model misses on the chip: the run cannot have held what
 * the default keeps, so it recomputed. Read as the least recompute of
 * the stack's that fits:
 * selective, then (Megatron's block method, where the stack has it) full
 * recompute of the fewest layers of each model chunk, then every layer.
 * When none fits but recomputing every layer closes most of the gap (the
 * activations the default keeps are the bulk of what the run could not
 * have held), read as that, the reading nearest to what ran, and still a
 * fit miss; where it closes less, something else ran otherwise (sharding,
 * offload) and recompute is no reading of the evidence. Left as the
 * default when the stack has no
 * full recompute or the default misses by less than the model's own error
 * (a run 1 GiB over on 80 GiB is the model's error, not evidence of
 * recompute). asked: the layout as mapped; before: the result before
 * evaluating it. */
static int infer_recompute(const plan_catalog *cat, const plan_model *m, const plan_cluster *c,
                           const plan_framework *fw, const plan_validate_row *row,
                           const row_layout *asked, const plan_validate_result *before,
                           row_layout *rl, plan_validate_result *out, st_err *err)
{
    double band = mem_band_pct(cat, c->gpu);
    double need = plan_mem_need_bytes(&out->est.mem), cap = out->est.capacity_bytes;
    if (!(band > 0) || !(need > cap * (1.0 + band / 100.0)))
        return ST_OK;
    plan_validate_result *t = malloc(sizeof *t);
    if (!t)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    row_layout tl;
    int rc = ST_OK, k = -1, n = 0, fit = 0;
    if ((int)asked->l.recompute < PLAN_RECOMP_SELECTIVE &&
        (fw->recomputes & (1u << PLAN_RECOMP_SELECTIVE)))
        fit = try_recompute(m, c, fw, row, asked, k = PLAN_RECOMP_SELECTIVE, 0, before, &tl, t,
                            &rc, err);
    if ((fit == 0 || fit == TRY_SKIPPED) && (fw->recomputes & (1u << PLAN_RECOMP_FULL))) {
        /* the block method's fewest layers that fit, by bisection (memory
         * falls as layers are recomputed); every layer at the top */
        int64_t chunk = m->layers / asked->l.pp;
        int64_t lo = 1, hi = fw->recompute_block ? chunk : 1;
        fit = 0;
        while (lo < hi && fit != -1) {
            int64_t mid = lo + (hi - lo) / 2;
            fit = try_recompute(m, c, fw, row, asked, PLAN_RECOMP_FULL, (int)mid, before, &tl, t,
                                &rc, err);
            if (fit > 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (fit != -1) {
            n = fw->recompute_block && lo < chunk ? (int)lo : 0;
            fit = try_recompute(m, c, fw, row, asked, k = PLAN_RECOMP_FULL, n, before, &tl, t,
                                &rc, err);
        }
    }
    /* none fits: every layer recomputed, the least the stack keeps, closes
     * most of the gap */
    double full_need = fit == 0 ? plan_mem_need_bytes(&t->est.mem) : need;
    int nearest = fit == 0 && k == PLAN_RECOMP_FULL && n == 0 &&
                  (int)asked->l.recompute < k && need - full_need > 0.5 * (need - cap);
    if (fit > 0 || nearest) {
        *out = *t;
        *rl = tl;
        out->recompute_inferred = 1;
        char what[96], why[256];
        plan__recompute_words((plan_recompute)k, n, what, sizeof what);
        if (nearest)
            snprintf(why, sizeof why, "no recompute of the stack's fits: read as %s, the least "
                     "memory of them (%.1f GiB), which closes most of the gap", what,
                     full_need / 1073741824.0);
        else
            snprintf(why, sizeof why, "read as %s, the least that fits", what);
        int derived = plan__parse_recompute(row->recompute) != -2;
        note(out, "recompute %s, and %s %.1f GiB is over the %.1f GiB the run had by more than "
             "the memory model misses on %s memory figures (%.1f%%): %s",
             derived ? "derived by the row" : "not stated", derived ? "its" : "the default's",
             need / 1073741824.0, cap / 1073741824.0,
             c->gpu->mem_err_pct > 0 ? "the chip's" : "any chip's", band, why);
    }
    free(t);
    return rc;
}

int plan__validate_evaluate(const plan_catalog *cat, const plan_model *m, const plan_cluster *c,
                            const plan_framework *fw, const plan_validate_row *row,
                            row_layout *rl, plan_validate_result *out, int *skipped,
                            st_err *err)
{
    plan_validate_result *before = malloc(sizeof *before);
    if (!before)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    *before = *out;
    row_layout asked = *rl;
    int rc;
    *skipped = evaluate_row(m, c, fw, row, rl, out, &rc, err);
    if (!*skipped && out->est.reject == PLAN_REJ_OOM && asked.recompute_defaulted &&
        !plan__row_went_oom(row))
        rc = infer_recompute(cat, m, c, fw, row, &asked, before, rl, out, err);
    free(before);
    int emb, loss;
    if (rc == ST_OK && !*skipped && plan_split_embedding_loss(m, &rl->l, &emb, &loss)) {
        const plan_layout *l = &rl->l;
        note(out, "%lld layers over %d pipeline chunks (pp %d x virtual %d) split as the stack "
             "splits them: the %s a layer's place, the first stage %d layers, the last %d",
             (long long)m->layers, l->pp * l->virtual_stages, l->pp, l->virtual_stages,
             emb ? "embedding and the loss each take" : "loss takes", out->est.stage_layers[0],
             out->est.stage_layers[l->pp - 1]);
    }
    return rc;
}
