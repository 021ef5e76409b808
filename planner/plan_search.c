/*
 * plan_search.c: enumerate layouts, evaluate each, keep the best.
 *
 * The knobs and their ranges:
 *   tp   powers of two dividing the GPUs of a node (SMP best practice: TP a
 *        power of two, at most the GPUs per node) and dividing the heads;
 *        past one node only with allow_tp_across_nodes
 *   cp   where the stack has context parallelism: powers of two with tp x cp
 *        inside a node, the sequence a multiple of 2 cp
 *   pp   divisors of GPUs / (tp cp), at most the layers
 *   dp   the rest
 *   micro-batch  powers of two dividing the per-replica batch
 *   schedule     simple, interleaved (SMP 1F1B), virtual (v = 2, 4, 8; every divisor of
 *                a stage's layers where chunks are equal), zb-h1;
 *                only interleaved when pp = 1 (they coincide)
 *   active_microbatches  SMP's default pp + 2, and pp / 2 (less memory), for SMP's own
 *                schedules (simple, interleaved); the others run uncapped
 *   recompute    none, selective, full (each layer); where the stack has Megatron's
 *                block method and only full recompute fits, also the fewest
 *                layers of each chunk that fit (search_block)
 *   sharding     none, optimizer (ZeRO-1), gradients, params when dp > 1
 *   offload      with full recompute and pp > 1 (SMP v1's best practice), or any pp
 *                where the stack offloads by layer (SMP v2)
 *   placement    the permutations of D, P, T whose group spans differ
 * A knob the config fixes is not searched. Nothing is allocated per layout:
 * the result holds a fixed top-k array.
 */
#include "planner/plan_int.h"
#include "planner/plan_framework.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Largest micro-batch size and microbatch count a layout holds (an int,
 * with room to multiply by small factors). */
#define PLAN_MICRO_MAX (1 << 30)
/* Room for the virtual stage counts searched for one layout: every divisor
 * of a stage's layers where the stack's chunks are equal (virtual_even; up
 * to one layer a chunk, as NeMo's GPT-3 175B launch config runs, 'set to
 * maximum'); no layer count has more divisors than this holds. */
#define VS_MAX 64

/* Step times this close are the same time: twins (see keep_top). */
#define PLAN_TWIN_REL 1e-9

static double objective_value(const plan_candidate *c, plan_objective o)
{
    switch (o) {
    case PLAN_OBJ_COST:
        return c->est.cost_per_mtokens > 0 ? c->est.cost_per_mtokens : c->est.time.step_s;
    case PLAN_OBJ_MEMORY:
        return c->est.mem.total_bytes;
    case PLAN_OBJ_THROUGHPUT:
        return -c->est.tokens_per_s;
    case PLAN_OBJ_TIME:
    default:
        return c->est.time.step_s;
    }
}

int plan_candidate_cmp(const plan_candidate *a, const plan_candidate *b, plan_objective o)
{
    double x = objective_value(a, o), y = objective_value(b, o);
    if (x < y)
        return -1;
    if (x > y)
        return 1;
    /* ties: less memory, then fewer model-parallel ranks */
    if (a->est.mem.total_bytes != b->est.mem.total_bytes)
        return a->est.mem.total_bytes < b->est.mem.total_bytes ? -1 : 1;
    int ma = a->layout.tp * a->layout.pp, mb = b->layout.tp * b->layout.pp;
    return (ma > mb) - (ma < mb);
}

/* Same degrees, same micro-batching, same step: what else differs changes
 * only memory, and a table of both would show one plan twice. */
static int twins(const plan_candidate *a, const plan_candidate *b)
{
    const plan_layout *x = &a->layout, *y = &b->layout;
    double ta = a->est.time.step_s, tb = b->est.time.step_s;
    return x->tp == y->tp && x->pp == y->pp && x->dp == y->dp && x->cp == y->cp &&
           x->micro_batch == y->micro_batch && x->microbatches == y->microbatches &&
           fabs(ta - tb) <= PLAN_TWIN_REL * fmax(ta, tb);
}

static void keep_top(plan_result *res, const plan_candidate *c, int k, plan_objective o)
{
    if (o != PLAN_OBJ_MEMORY) {
        for (int j = 0; j < res->ntop; j++) {
            if (!twins(c, &res->top[j]))
                continue;
            res->twins++;
            if (plan_candidate_cmp(c, &res->top[j], o) >= 0)
                return; /* the twin shown needs no more memory */
            /* c replaces its twin: take the twin out, then insert c */
            memmove(&res->top[j], &res->top[j + 1],
                    (size_t)(res->ntop - j - 1) * sizeof res->top[0]);
            res->ntop--;
            break;
        }
    }
    int n = res->ntop;
    if (n == k && plan_candidate_cmp(c, &res->top[n - 1], o) >= 0)
        return;
    int i = n < k ? n : k - 1;
    while (i > 0 && plan_candidate_cmp(c, &res->top[i - 1], o) < 0) {
        res->top[i] = res->top[i - 1];
        i--;
    }
    res->top[i] = *c;
    if (n < k)
        res->ntop++;
}

static int is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* Do two placements put every dimension's groups on the same spans? Then
 * they cost the same and only one is evaluated. */
static int same_spans(const plan_layout *a, const plan_layout *b, const plan_cluster *c)
{
    static const char dims[] = "TCPD";
    for (int i = 0; i < 4; i++) {
        plan__span x, y;
        int ra = plan__span_of(a, c, dims[i], &x), rb = plan__span_of(b, c, dims[i], &y);
        if (ra != rb || (ra == 0 && (x.ranks_per_node != y.ranks_per_node || x.nodes != y.nodes)))
            return 0;
    }
    return 1;
}

typedef struct search_ctx {
    const plan_model *m;
    const plan_cluster *c;
    const plan_config *cfg;
    const plan_framework *fw;
    plan_result *res;
    int k;
    st_err *err;
} search_ctx;

/* Keep the best candidate of its (TP, PP) pair. */
static void keep_grid(plan_result *res, const plan_candidate *cand, plan_objective o)
{
    const plan_layout *l = &cand->layout;
    int ok = cand->est.reject == PLAN_OK;
    if (!ok && cand->est.reject != PLAN_REJ_OOM)
        return;
    plan_grid_cell *g = NULL;
    for (int i = res->ngrid - 1; i >= 0 && !g; i--)
        if (res->grid[i].tp == l->tp && res->grid[i].pp == l->pp)
            g = &res->grid[i];
    if (!g) {
        if (res->ngrid == PLAN_GRID_MAX)
            return;
        g = &res->grid[res->ngrid++];
        g->tp = l->tp;
        g->pp = l->pp;
        g->feasible = ok;
        g->best = *cand;
        return;
    }
    int better = ok ? (!g->feasible || plan_candidate_cmp(cand, &g->best, o) < 0)
                    : (!g->feasible && cand->est.oom_excess_bytes < g->best.est.oom_excess_bytes);
    if (better) {
        g->feasible = ok;
        g->best = *cand;
    }
}

/* Would cand enter the top list or its grid cell? Only then is it worth
 * a full evaluation (every stage's memory, and time when it does not fit). */
static int kept(const plan_result *res, const plan_candidate *cand, int k, plan_objective o)
{
    const plan_layout *l = &cand->layout;
    int ok = cand->est.reject == PLAN_OK;
    if (ok && (res->ntop < k || plan_candidate_cmp(cand, &res->top[res->ntop - 1], o) < 0))
        return 1;
    for (int i = res->ngrid - 1; i >= 0; i--)
        if (res->grid[i].tp == l->tp && res->grid[i].pp == l->pp)
            return ok ? (!res->grid[i].feasible || plan_candidate_cmp(cand, &res->grid[i].best, o) < 0)
                      : (!res->grid[i].feasible &&
                         cand->est.oom_excess_bytes < res->grid[i].best.est.oom_excess_bytes);
    return res->ngrid < PLAN_GRID_MAX;
}

/* Count cand (memo: the one its evaluation used) and keep it where it
 * belongs, evaluated in full first. */
static void count(search_ctx *x, plan_candidate *cand, plan__eval_memo *memo)
{
    plan_result *res = x->res;
    res->evaluated++;
    if (cand->est.reject == PLAN_OK || cand->est.reject == PLAN_REJ_OOM) {
        res->costed++;
        if (kept(res, cand, x->k, x->cfg->objective)) {
            st_err e = {0};
            plan__evaluate(x->m, x->c, &cand->layout, &cand->est, NULL, 0, memo, &e);
        }
    }
    keep_grid(res, cand, x->cfg->objective);
    if (cand->est.reject == PLAN_OK) {
        res->feasible++;
        keep_top(res, cand, x->k, x->cfg->objective);
        return;
    }
    res->rejected[cand->est.reject]++;
    if (cand->est.reject == PLAN_REJ_OOM &&
        (res->min_oom_excess_bytes == 0 || cand->est.oom_excess_bytes < res->min_oom_excess_bytes)) {
        res->min_oom_excess_bytes = cand->est.oom_excess_bytes;
        res->closest_oom = *cand;
        if (!(res->closest_oom.est.time.step_s > 0)) { /* it gets its time too */
            st_err e = {0};
            plan__evaluate(x->m, x->c, &cand->layout, &res->closest_oom.est, NULL, 0, memo, &e);
        }
    }
}

/* Megatron's block method (recompute_block): full recompute of only the
 * first N layers of each model chunk, the others keeping their
 * activations. Where the recompute is searched (not asked for), for a
 * layout that fits with every layer recomputed but not with none, the
 * fewest N that fits (memory falls as N grows: bisection on
 * the memory alone), costed as one more candidate: the fastest recompute
 * of the stack that fits there. cand holds the fitting full recompute; it
 * is left as it was. */
static int search_block(search_ctx *x, plan_candidate *cand, plan__eval_memo *memo)
{
    plan_layout *cl = &cand->layout;
    const plan_layout full = *cl;
    int64_t chunk = (x->m->layers + (int64_t)cl->pp * cl->virtual_stages - 1) /
                    ((int64_t)cl->pp * cl->virtual_stages);
    int rc = ST_OK;
    cl->recompute = PLAN_RECOMP_NONE;
    cl->recompute_layers = 0;
    if ((rc = plan__evaluate(x->m, x->c, cl, &cand->est, NULL, 1, memo, x->err)) != ST_OK ||
        cand->est.reject != PLAN_REJ_OOM || chunk < 2)
        goto done;
    int64_t lo = 1, hi = chunk; /* hi: every layer, which fits */
    cl->recompute = PLAN_RECOMP_FULL;
    while (lo < hi) {
        cl->recompute_layers = (int)(lo + (hi - lo) / 2);
        if ((rc = plan__evaluate(x->m, x->c, cl, &cand->est, NULL, 1, memo, x->err)) != ST_OK)
            goto done;
        if (cand->est.reject == PLAN_OK)
            hi = cl->recompute_layers;
        else
            lo = (int64_t)cl->recompute_layers + 1;
    }
    if (lo < chunk) {
        cl->recompute_layers = (int)lo;
        if ((rc = plan__evaluate(x->m, x->c, cl, &cand->est, NULL, 1, memo, x->err)) == ST_OK)
            count(x, cand, memo);
    }
done:
    *cl = full;
    return rc;
}

/* An empty result: every field but the entries of top[] and grid[] past
 * ntop and ngrid (0), which nothing reads. Clearing those too (most of the
 * result's 0.7 MiB) was 3 % of a search's instructions and flushed the
 * cache it runs in. */
static void result_clear(plan_result *res)
{
    res->ntop = 0;
    memset(&res->evaluated, 0,
           offsetof(plan_result, grid) - offsetof(plan_result, evaluated));
    res->twins = 0;
}
_Static_assert(offsetof(plan_result, top) < offsetof(plan_result, evaluated) &&
                   offsetof(plan_result, ngrid) < offsetof(plan_result, grid) &&
                   offsetof(plan_result, twins) > offsetof(plan_result, grid),
               "result_clear: ntop and top[] first, the scalars, ngrid, grid[], twins last");

/* Innermost knobs for a fixed (tp, cp, pp, dp, micro-batch, placement). */
static int search_inner(search_ctx *x, const plan_layout *l)
{
    const plan_config *cfg = x->cfg;
    const plan_framework *fw = x->fw;
    int p = l->pp, m = l->microbatches;
    /* the knobs below are set in the candidate's own layout, the one
     * evaluated (no copy of l per layout) */
    plan_candidate cand;
    plan_layout *cl = &cand.layout;
    *cl = *l;
    /* what every layout below shares (degrees, micro-batch, placement):
     * worked out by the first evaluation, reused by the others */
    plan__eval_memo memo;
    memo.valid = 0;
    /* what the framework runs with this layout's degrees */
    unsigned shardings = fw->shardings;
    if (p > 1)
        shardings &= fw->shardings_with_pp;
    if (l->tp > 1)
        shardings &= fw->shardings_with_tp;
    if (l->dp * l->cp == 1) /* nothing to shard over, where the stack runs these degrees */
        shardings = (p == 1 || fw->shardings_with_pp) && (l->tp == 1 || fw->shardings_with_tp)
                        ? 1u << PLAN_SHARD_NONE
                        : 0;

    for (int s = 0; s < PLAN_SCHED__COUNT; s++) {
        if (cfg->schedule >= 0 ? s != cfg->schedule
                               : ((p == 1 && s != PLAN_SCHED_INTERLEAVED) ||
                                  (p > 1 && !(fw->schedules & (1u << s))) ||
                                  (p > 1 && cfg->schedule_mask && !(cfg->schedule_mask & (1u << s)))))
            continue;
        static const int vs_search[] = {2, 4, 8};
        int vs[VS_MAX], nv = 0;
        if (s != PLAN_SCHED_VIRTUAL)
            vs[nv++] = 1;
        else if (cfg->virtual_stages > 0)
            vs[nv++] = cfg->virtual_stages;
        else if (fw->virtual_even) {
            /* equal chunks: every divisor of the layers a stage holds; where
             * the stack counts the embedding and the loss as layers of the
             * split, the counts that split so too */
            int64_t per = x->m->layers % p == 0 ? x->m->layers / p : 0;
            int64_t top = fw->pipeline_embedding_loss ? (x->m->layers + 2) / p : per;
            plan_layout t = *l;
            for (int64_t v = 2; v <= top && nv < VS_MAX && m % p == 0; v++) {
                t.virtual_stages = (int)v;
                if ((per > 0 && per % v == 0) || plan_split_embedding_loss(x->m, &t, NULL, NULL))
                    vs[nv++] = (int)v;
            }
        } else
            for (int i = 0; i < 3; i++)
                if ((int64_t)p * vs_search[i] <= x->m->layers && m % p == 0)
                    vs[nv++] = vs_search[i];
        for (int iv = 0; iv < nv; iv++) {
            int caps[2], ncap = 0;
            if (cfg->active_microbatches > 0)
                caps[ncap++] = cfg->active_microbatches;
            else if (!fw->active_cap || s == PLAN_SCHED_VIRTUAL || s == PLAN_SCHED_ZB_H1)
                caps[ncap++] = m; /* SMP's cap is a knob of its own schedules only */
            else {
                /* SMP default: partitions + 2; never more than there are
                 * microbatches (SMP runs min(active, microbatches) at once) */
                caps[ncap++] = p + 2 < m ? p + 2 : m;
                if (p >= 4 && p / 2 < m)
                    caps[ncap++] = p / 2;
            }
            for (int ic = 0; ic < ncap; ic++) {
                for (int r = 0; r < PLAN_RECOMP__COUNT; r++) {
                    if (cfg->recompute >= 0 ? r != cfg->recompute
                                            : (!(fw->recomputes & (1u << r)) ||
                                               (r == PLAN_RECOMP_SELECTIVE && l->flash_attention &&
                                                !fw->selective_ops)))
                        continue; /* a fused attention kernel already recomputes its core
                                   * (torchtitan's selective is another policy) */
                    int group = cfg->recompute_group > 0 ? cfg->recompute_group : 1;
                    for (int sh = 0; sh < PLAN_SHARD__COUNT; sh++) {
                        if (cfg->sharding >= 0 ? sh != cfg->sharding : !(shardings & (1u << sh)))
                            continue;
                        for (int off = 0; off <= 1; off++) {
                            if (cfg->offload_activations >= 0
                                    ? off != cfg->offload_activations
                                    : (off && !(fw->offload && r == PLAN_RECOMP_FULL &&
                                                (p > 1 || fw->offload_layers_held > 0))))
                                continue;
                            cl->schedule = (plan_schedule)s;
                            cl->virtual_stages = vs[iv];
                            cl->active_microbatches = caps[ic];
                            cl->recompute = (plan_recompute)r;
                            cl->recompute_group = group;
                            cl->recompute_layers =
                                r == PLAN_RECOMP_FULL ? cfg->recompute_layers : 0;
                            cl->recompute_saved = r == PLAN_RECOMP_FULL ? cfg->recompute_saved : 0;
                            cl->sharding = (plan_sharding)sh;
                            cl->offload_activations = off;
                            int rc = plan__evaluate(x->m, x->c, cl, &cand.est, NULL, 1, &memo,
                                                    x->err);
                            if (rc)
                                return rc;
                            count(x, &cand, &memo);
                            if (r == PLAN_RECOMP_FULL && cand.est.reject == PLAN_OK &&
                                cfg->recompute < 0 && !cfg->recompute_saved &&
                                fw->recompute_block &&
                                (rc = search_block(x, &cand, &memo)) != ST_OK)
                                return rc;
                        }
                    }
                }
            }
        }
    }
    return ST_OK;
}

static const char *const all_placements[] = {"DPT", "PDT", "DTP", "PTD", "TDP", "TPD"};

/* Knobs the user fixed must be ones the framework has: say which and what
 * it allows, rather than search nothing. */
static int check_fixed(const plan_framework *fw, const plan_cluster *c, const plan_config *cfg,
                       st_err *err)
{
    char list[96] = "";
    if (!cfg->any_instance && !plan_framework_runs_on(fw, c->inst)) {
        char types[160], other[160] = "";
        /* a stack that lists its instance types and has this one (SMP v2
         * for a p5 that v1 does not list) is named */
        for (int i = 0; i < plan_nframeworks && !other[0]; i++) {
            const plan_framework *o = plan_framework_get(i);
            if (o != fw && o->instance_types[0][0] && plan_framework_runs_on(o, c->inst))
                snprintf(other, sizeof other, "; %s does: --framework %s", o->label, o->key);
        }
        return ST_RAISE(err, ST_EINVAL, "%s does not run on %s: it runs on %s%s; or choose "
                        "another stack with --framework", fw->label, c->inst->name,
                        plan_framework_instance_list(fw, types, sizeof types), other);
    }
    /* a stack that combines no sharding with a pipeline (or with tensor
     * parallelism) has none: PyTorch FSDP shards over every GPU */
    if (cfg->pp > 1 && !fw->shardings_with_pp)
        return ST_RAISE(err, ST_EINVAL, "--pp %d: %s has no pipeline parallelism (pp 1)",
                        cfg->pp, fw->label);
    if (cfg->tp > 1 && !fw->shardings_with_tp)
        return ST_RAISE(err, ST_EINVAL, "--tp %d: %s has no tensor parallelism (tp 1)", cfg->tp,
                        fw->label);
    if (cfg->schedule >= 0 && !(fw->schedules & (1u << cfg->schedule))) {
        for (int s = 0; s < PLAN_SCHED__COUNT; s++)
            if (fw->schedules & (1u << s)) {
                size_t n = strlen(list);
                snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "",
                         plan_schedule_name((plan_schedule)s));
            }
        return ST_RAISE(err, ST_EINVAL, "--schedule %s: %s runs %s",
                        plan_schedule_name((plan_schedule)cfg->schedule), fw->label, list);
    }
    if (cfg->sharding >= 0 && !(fw->shardings & (1u << cfg->sharding)))
        return ST_RAISE(err, ST_EINVAL, "--sharding %s: not a sharding %s has",
                        plan_sharding_name((plan_sharding)cfg->sharding), fw->label);
    if (cfg->recompute >= 0 && !(fw->recomputes & (1u << cfg->recompute)))
        return ST_RAISE(err, ST_EINVAL, "--recompute %s: %s does not recompute that way",
                        plan_recompute_name((plan_recompute)cfg->recompute), fw->label);
    if (cfg->recompute_group > 1 && !fw->recompute_groups)
        return ST_RAISE(err, ST_EINVAL, "--recompute-group %d: %s checkpoints every layer",
                        cfg->recompute_group, fw->label);
    if (cfg->recompute_layers > 0 && !fw->recompute_block && !fw->recompute_every)
        return ST_RAISE(err, ST_EINVAL, "--recompute-layers %d: Megatron's block method; %s "
                        "recomputes every layer it checkpoints", cfg->recompute_layers, fw->label);
    if (cfg->recompute_saved && !fw->remat_policies)
        return ST_RAISE(err, ST_EINVAL, "--remat-policy %s: a MaxText remat policy; %s has none",
                        plan_remat_policy_name(cfg->recompute_saved), fw->label);
    if ((cfg->recompute_layers > 0 || cfg->recompute_saved) && cfg->recompute != PLAN_RECOMP_FULL)
        return ST_RAISE(err, ST_EINVAL, "--%s: a refinement of full recompute; allowed with "
                        "--recompute full", cfg->recompute_layers > 0 ? "recompute-layers"
                                                                     : "remat-policy");
    if (cfg->compiled > 0 && !fw->compile)
        return ST_RAISE(err, ST_EINVAL, "--compile: %s has no torch.compile knob", fw->label);
    if (cfg->tp_overlap >= 0 && cfg->tp_overlap < 3) {
        static const char *const word[] = {"off", "bwd", "on"};
        unsigned tpo = plan_framework_tp_overlaps(fw);
        if (!((tpo >> cfg->tp_overlap) & 1)) {
            for (int v = 0; v < 3; v++)
                if ((tpo >> v) & 1) {
                    size_t n = strlen(list);
                    snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", word[v]);
                }
            return ST_RAISE(err, ST_EINVAL, "--tp-overlap %s: %s takes %s",
                            word[cfg->tp_overlap], fw->label, list);
        }
        /* torchtitan parallelize_llama.py: "Async TP requires --training.compile" */
        if (cfg->tp_overlap == 2 && fw->async_tp && cfg->compiled <= 0)
            return ST_RAISE(err, ST_EINVAL, "--tp-overlap on: %s's async TP needs torch.compile "
                            "(--compile on)", fw->label);
    }
    if (cfg->cp > 1 && !fw->context_parallel)
        return ST_RAISE(err, ST_EINVAL, "--cp %d: %s has no context parallelism", cfg->cp,
                        fw->label);
    if (cfg->sequence_parallel == 1 && !fw->sequence_parallel)
        return ST_RAISE(err, ST_EINVAL, "--sequence-parallel on: %s has no sequence parallelism",
                        fw->label);
    if (cfg->offload_activations == 1 && !fw->offload)
        return ST_RAISE(err, ST_EINVAL, "--offload on: %s does not offload activations", fw->label);
    if (cfg->prescaled_batch == 1 && !fw->prescaled)
        return ST_RAISE(err, ST_EINVAL, "--prescaled-batch on: an SMP knob %s does not have",
                        fw->label);
    if (cfg->active_microbatches > 0 && !fw->active_cap)
        return ST_RAISE(err, ST_EINVAL,
                        "--active-microbatches %d: an SMP knob %s does not have (it does not cap "
                        "microbatches in flight)", cfg->active_microbatches, fw->label);
    if (cfg->placement[0] && !fw->placement_search && strcmp(cfg->placement, fw->placement) != 0)
        return ST_RAISE(err, ST_EINVAL, "--placement %s: %s places ranks in the order %s",
                        cfg->placement, fw->label, fw->placement);
    /* bf16 where the chip has no bf16 tensor cores: a published run ran as
     * it ran (any_instance; bf16 and fp16 cost the same), a plan cannot */
    if (cfg->precision == PLAN_PREC_BF16 && c->gpu->fp16_only && !cfg->any_instance)
        return ST_RAISE(err, ST_EINVAL, "--precision bf16: the %s has no bf16 tensor cores; "
                        "use fp16 (the default on it)", c->gpu->name);
    if (cfg->precision == PLAN_PREC_FP8 && !fw->fp8)
        return ST_RAISE(err, ST_EINVAL, "--precision fp8: %s has no FP8 linears", fw->label);
    if (cfg->precision == PLAN_PREC_FP8 && !(c->gpu->fp8_peak_flops > 0))
        return ST_RAISE(err, ST_EINVAL, "--precision fp8: the %s has no FP8 tensor cores",
                        c->gpu->name);
    return ST_OK;
}

static int search_placements(search_ctx *x, plan_layout *l)
{
    const plan_config *cfg = x->cfg;
    plan_layout seen[6];
    int nseen = 0;
    /* a rank order the framework fixes is the only one (Megatron: TP innermost) */
    const char *fixed = cfg->placement[0] ? cfg->placement
                        : !x->fw->placement_search ? x->fw->placement : NULL;
    for (int ip = 0; ip < 6; ip++) {
        const char *pl = fixed ? fixed : all_placements[ip];
        memcpy(l->placement, pl, 4);
        int dup = 0;
        for (int j = 0; j < nseen && !dup; j++)
            dup = same_spans(&seen[j], l, x->c);
        if (!dup) {
            seen[nseen++] = *l;
            plan__span st;
            if (plan__span_of(l, x->c, 'T', &st) == 0 && st.nodes > 1 &&
                !cfg->allow_tp_across_nodes) {
                x->res->evaluated++;
                x->res->rejected[PLAN_REJ_TP_ACROSS_NODES]++;
            } else {
                int rc = search_inner(x, l);
                if (rc)
                    return rc;
            }
        }
        if (fixed)
            break;
    }
    return ST_OK;
}

static void reject_outer(search_ctx *x, plan_reject r)
{
    x->res->evaluated++;
    x->res->rejected[r]++;
}

/* The knobs the request fixes: positive, degrees that divide the cluster's
 * GPUs (and multiply to them when all four are given), a known stack. */
static int check_degrees(const plan_cluster *c, const plan_config *cfg, st_err *err)
{
    int G = c->gpus;
    if (cfg->tp < 0 || cfg->pp < 0 || cfg->dp < 0 || cfg->cp < 0 || cfg->micro_batch < 0 ||
        cfg->microbatches < 0 || cfg->active_microbatches < 0 || cfg->global_batch < 0)
        return ST_RAISE(err, ST_EINVAL, "layout knobs must be positive");
    int fixed = (cfg->tp ? cfg->tp : 1) * (cfg->pp ? cfg->pp : 1) * (cfg->dp ? cfg->dp : 1) *
                (cfg->cp ? cfg->cp : 1);
    if (G % fixed != 0)
        return ST_RAISE(err, ST_EINVAL,
                        "the fixed degrees (tp x pp x dp x cp = %d) do not divide the %d GPUs of "
                        "%d x %s",
                        fixed, G, c->nodes, c->inst->name);
    if (cfg->tp && cfg->pp && cfg->dp && (cfg->cp ? cfg->cp : 1) * cfg->tp * cfg->pp * cfg->dp != G)
        return ST_RAISE(err, ST_EINVAL, "tp x pp x dp x cp = %d, but %d x %s has %d GPUs", fixed,
                        c->nodes, c->inst->name, G);
    if (cfg->framework < 0 || cfg->framework >= plan_nframeworks)
        return ST_RAISE(err, ST_EINVAL, "framework %d: not a known framework", cfg->framework);
    return ST_OK;
}

int plan_search(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                plan_result *res, st_err *err)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    result_clear(res);
    int k = cfg->top_k > 0 ? cfg->top_k : 5;
    if (k > PLAN_TOPK_MAX)
        k = PLAN_TOPK_MAX;
    int G = c->gpus, gpn = c->inst->gpus_per_node;
    int rc0 = check_degrees(c, cfg, err);
    if (rc0)
        return rc0;
    const plan_framework *fw = plan_framework_get(cfg->framework);
    int rc = check_fixed(fw, c, cfg, err);
    if (rc)
        return rc;
    res->global_batch = cfg->global_batch > 0 ? cfg->global_batch : plan_default_global_batch(m, c);
    res->batch_defaulted = cfg->global_batch <= 0;
    search_ctx x = {m, c, cfg, fw, res, k, err};

    plan_layout l;
    plan_layout_default(&l);
    l.global_batch = res->global_batch;
    plan_framework_apply(fw, cfg->framework, &l);
    /* what the user set explicitly overrides the framework's behaviour */
    if (cfg->attention >= 0 && cfg->attention < PLAN_ATTN__COUNT) {
        l.attention = (plan_attn)cfg->attention;
        l.flash_attention = l.attention != PLAN_ATTN_UNFUSED;
    }
    if (cfg->flash_attention >= 0) {
        /* a fused kernel asked of a stack whose own is unfused: the one
         * such stacks offered as an option, FlashAttention-2 (Megatron-LM
         * --use-flash-attn, Megatron-DeepSpeed --use-flash-attn-v2) */
        l.flash_attention = cfg->flash_attention;
        if (!l.flash_attention)
            l.attention = PLAN_ATTN_UNFUSED;
        else if (l.attention == PLAN_ATTN_UNFUSED)
            l.attention = PLAN_ATTN_FLASH2;
    }
    if (cfg->dp_overlap >= 0)
        l.dp_overlap = cfg->dp_overlap;
    if (cfg->fp32_grads >= 0)
        l.fp32_grads = cfg->fp32_grads;
    l.compiled = cfg->compiled > 0;
    l.fused_pointwise = cfg->fused_pointwise > 0;
    if (cfg->tp_overlap >= 0)
        l.tp_overlap = cfg->tp_overlap;
    if (cfg->pp_overlap >= 0)
        l.pp_overlap = cfg->pp_overlap;
    if (cfg->launch_blocking >= 0)
        l.launch_blocking = cfg->launch_blocking;
    if (cfg->dp_bucket_bytes > 0)
        l.dp_bucket_bytes = cfg->dp_bucket_bytes;
    /* half precision by default: bf16, or fp16 on a chip without bf16 or
     * with a stack release whose half precision is fp16 (Megatron-LM
     * 2019-2020 has --fp16 only: frameworks.json precision_default) */
    l.precision = cfg->precision >= 0 ? (plan_precision)cfg->precision
                  : c->gpu->fp16_only || fw->precision_default == PLAN_PREC_FP16
                      ? PLAN_PREC_FP16
                      : PLAN_PREC_BF16;

    int tp_max = cfg->allow_tp_across_nodes ? G : gpn;
    for (int tp = 1; tp <= tp_max; tp++) {
        if (cfg->tp ? tp != cfg->tp : (!is_pow2(tp) || G % tp != 0 || (tp <= gpn && gpn % tp)))
            continue;
        if (tp > 1 && !fw->shardings_with_tp) /* the stack has no tensor parallelism */
            continue;
        if (m->heads % tp != 0 || (m->kv_heads % tp != 0 && tp % m->kv_heads != 0)) {
            reject_outer(&x, PLAN_REJ_HEADS);
            continue;
        }
        /* context parallelism where the stack has it: powers of two with TP
         * inside a node (a ring's K/V exchange, Ulysses' all-to-alls on
         * NVLink), the sequence a multiple of 2 cp (Megatron-Core splits it
         * in 2 cp chunks to balance the causal mask, arguments.py) */
        int cp_max = cfg->cp ? cfg->cp : fw->context_parallel ? gpn : 1;
        for (int cp = cfg->cp ? cfg->cp : 1; cp <= cp_max; cp *= 2) {
            if (!cfg->cp && cp > 1 &&
                (G % (tp * cp) != 0 || tp * cp > gpn || m->seq % (2 * cp) != 0))
                continue;
            for (int pp = 1; pp <= G / (tp * cp) && pp <= PLAN_PP_MAX; pp++) {
                if ((G / (tp * cp)) % pp != 0 || (cfg->pp && pp != cfg->pp))
                    continue;
                if (pp > 1 && !fw->shardings_with_pp) /* the stack has no pipeline */
                    continue;
                if (pp > m->layers) {
                    reject_outer(&x, PLAN_REJ_LAYERS);
                    continue;
                }
                int dp = G / (tp * cp * pp);
                if (cfg->dp && dp != cfg->dp)
                    continue;
                if (res->global_batch % dp != 0) {
                    reject_outer(&x, PLAN_REJ_BATCH);
                    continue;
                }
                int64_t per_replica = res->global_batch / dp;
                int64_t mbs_list[64];
                int nmbs = 0;
                if (cfg->micro_batch || cfg->microbatches) {
                    int64_t mbs = cfg->micro_batch ? cfg->micro_batch : per_replica / cfg->microbatches;
                    if (mbs < 1 || mbs > PLAN_MICRO_MAX || per_replica % mbs != 0 ||
                        (cfg->microbatches && per_replica / mbs != cfg->microbatches)) {
                        reject_outer(&x, PLAN_REJ_BATCH);
                        continue;
                    }
                    mbs_list[nmbs++] = mbs;
                } else if (fw->local_batch && pp == 1) {
                    /* no gradient accumulation: the replica's batch is one step */
                    mbs_list[nmbs++] = per_replica;
                } else {
                    for (int64_t mbs = 1; mbs <= per_replica && nmbs < 64; mbs *= 2)
                        if (per_replica % mbs == 0)
                            mbs_list[nmbs++] = mbs;
                }
                for (int im = 0; im < nmbs; im++) {
                    int64_t mb = per_replica / mbs_list[im];
                    /* the layout holds both as int: a batch of 2^32 sequences
                     * on one replica has micro-batches past INT_MAX */
                    if (mb > PLAN_MICRO_MAX || mbs_list[im] > PLAN_MICRO_MAX)
                        continue;
                    l.tp = tp;
                    l.pp = pp;
                    l.dp = dp;
                    l.cp = cp;
                    l.micro_batch = (int)mbs_list[im];
                    l.microbatches = (int)mb;
                    l.prescaled_batch = cfg->prescaled_batch >= 0 ? cfg->prescaled_batch
                                                                  : fw->prescaled && tp > 1;
                    /* sequence parallelism (SMP: optimize "memory") where the
                     * framework has it: its default, and with TP the other
                     * setting too when it is a choice (it trades memory) */
                    int sps[2], nsp = 0;
                    if (cfg->sequence_parallel >= 0)
                        sps[nsp++] = cfg->sequence_parallel;
                    else {
                        sps[nsp++] = fw->sequence_parallel && tp > 1 && fw->sp_default;
                        if (fw->sequence_parallel && tp > 1)
                            sps[nsp++] = !sps[0];
                    }
                    for (int isp = 0; isp < nsp; isp++) {
                        l.sequence_parallel = sps[isp];
                        rc = search_placements(&x, &l);
                        if (rc)
                            return rc;
                    }
                }
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->search_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return ST_OK;
}

int plan_min_nodes(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                   int max_nodes, st_err *err)
{
    plan_result *res = calloc(1, sizeof *res);
    if (!res)
        return 0;
    plan_config one = *cfg;
    one.top_k = 1;
    one.dp = 0; /* the count changes, so the DP degree must be free */
    int lo = c->nodes, hi = 0;
    for (int n = c->nodes > 1 ? c->nodes * 2 : 2; n <= max_nodes; n *= 2) {
        plan_cluster cc = *c;
        cc.nodes = n;
        cc.gpus = n * c->inst->gpus_per_node;
        if (plan_search(m, &cc, &one, res, err) == ST_OK && res->ntop > 0) {
            hi = n;
            break;
        }
        lo = n;
    }
    /* refine between the last infeasible and the first feasible power of two */
    while (hi && hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        plan_cluster cc = *c;
        cc.nodes = mid;
        cc.gpus = mid * c->inst->gpus_per_node;
        if (plan_search(m, &cc, &one, res, err) == ST_OK && res->ntop > 0)
            hi = mid;
        else
            lo = mid;
    }
    free(res);
    return hi;
}
