/*
 * db_record.c: writing records. Each db_record_* call is one transaction:
 * the records row (kind, summary, provenance) and every row that belongs to
 * it, or, on any failure, none of them.
 *
 * A plan record's rows: models (1), instance_types (1 per type), searches
 * (1), plans (the ranked layouts, role 'top', rank 1..; or the closest
 * out-of-memory layout, role 'closest_oom'; the best layout of each (TP, PP)
 * pair, role 'grid'), predictions (1 per plan) and prediction_stages (1 per
 * pipeline stage, with its memory by term, recomputed here from the model,
 * cluster and layout by the planner's own code). A simulation adds simulations, sim_stages and, when
 * kept, sim_trace; a validation adds runs (source 'published') and the node
 * each row ran on; a calibration adds calibrations (one per fit) with their
 * calibration_params, and calibration_sources (one per published source).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/units.h"
#include "data/db_int.h"
#include "planner/plan_framework.h"

#define KEY_MAX 640

static void b_id_or_null(db__ins *s, int64_t id)
{
    if (id > 0)
        db__b_i64(s, id);
    else
        db__b_null(s);
}

static int insert_model(db *d, int64_t rec, const plan_model *m, int64_t *id, st_err *err)
{
    db__ins s;
    const db__fields *lists[] = {db__model_list()};
    int rc = db__ins_prepare(d, &s, "models", "record_id", lists, 1, err);
    /* as the planner resolves it (the head size in force), as every file
     * gives it */
    plan_model row = plan_model_resolved(m);
    if (rc == ST_OK) {
        db__b_i64(&s, rec);
        db__b_fields(&s, db__model_list(), &row);
        rc = db__ins_step(d, &s, id, err);
    }
    db__ins_finalize(&s);
    return rc;
}

/* A curve as [[log2_bytes, eff], ...] text (caller frees), or NULL. */
static char *curve_json(const plan_curve *c)
{
    if (!c)
        return NULL;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < c->n; i++) {
        cJSON *pt = cJSON_CreateArray();
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(c->log2_bytes[i]));
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(c->eff[i]));
        cJSON_AddItemToArray(a, pt);
    }
    char *s = a ? cJSON_PrintUnformatted(a) : NULL;
    cJSON_Delete(a);
    return s;
}

/* The catalog entry as it was used: the instance type, its GPU (after any
 * user override) and the points of its efficiency curves. */
static int insert_instance(db *d, int64_t rec, const plan_instance *in, const plan_gpu *g,
                           const plan_curve *intra, const plan_curve *net, int64_t *id,
                           st_err *err)
{
    char aliases[6 * 34] = "";
    size_t u = 0;
    for (int i = 0; i < in->naliases && i < 6; i++)
        u += (size_t)snprintf(aliases + u, sizeof aliases - u, "%s%s", i ? "," : "",
                              in->aliases[i]);
    char *ij = curve_json(intra), *nj = curve_json(net);
    db__ins s;
    const db__fields *lists[] = {&db__instance_fields, &db__gpu_fields};
    plan_gpu none;
    memset(&none, 0, sizeof none);
    int rc = db__ins_prepare(d, &s, "instance_types",
                             "record_id, aliases, intra_curve_json, net_curve_json", lists, 2, err);
    if (rc == ST_OK) {
        db__b_i64(&s, rec);
        db__b_txt(&s, aliases);
        db__b_txt(&s, ij);
        db__b_txt(&s, nj);
        db__b_fields(&s, &db__instance_fields, in);
        db__b_fields(&s, &db__gpu_fields, g ? g : &none);
        rc = db__ins_step(d, &s, id, err);
    }
    db__ins_finalize(&s);
    cJSON_free(ij);
    cJSON_free(nj);
    return rc;
}

static int insert_cluster(db *d, int64_t rec, const plan_cluster *c, int64_t *id, st_err *err)
{
    return insert_instance(d, rec, c->inst, c->gpu, c->intra_curve, c->net_curve, id, err);
}

/* A plan row: the layout on a cluster. sim_s <= 0 stores NULL. */
static int insert_plan(db *d, int64_t rec, int64_t model_id, int64_t inst_id, const char *role,
                       int rank, const plan_model *m, const char *instance, int nodes, int gpus,
                       const plan_layout *l, double sim_s, int64_t *id, st_err *err)
{
    char key[KEY_MAX], label[128];
    db__match_key(m, instance, nodes, gpus, l, key, sizeof key);
    db__layout_label(l, label, sizeof label);
    db__ins s;
    const db__fields *lists[] = {db__layout_list()};
    int rc = db__ins_prepare(d, &s, "plans",
                             "record_id, model_id, instance_type_id, role, rank, nodes, gpus, "
                             "simulated_step_s, match_key, label",
                             lists, 1, err);
    if (rc == ST_OK) {
        db__b_i64(&s, rec);
        b_id_or_null(&s, model_id);
        b_id_or_null(&s, inst_id);
        db__b_txt(&s, role);
        if (rank > 0)
            db__b_i64(&s, rank);
        else
            db__b_null(&s);
        db__b_i64(&s, nodes);
        db__b_i64(&s, gpus);
        db__b_dbl(&s, sim_s > 0 ? sim_s : NAN);
        db__b_txt(&s, key);
        db__b_txt(&s, label);
        db__b_fields(&s, db__layout_list(), l);
        rc = db__ins_step(d, &s, id, err);
    }
    db__ins_finalize(&s);
    return rc;
}

/* Largest relative difference between a stage's recomputed total and the
 * estimate's at which its terms are kept (both come from the same code, so
 * they agree to the last bit unless the estimate was made otherwise). */
#define STAGE_TERMS_REL_TOL 1e-9

/* The memory by term of every stage of e, computed again from the model,
 * cluster and layout it was made from (plan_stages_mem: the code
 * plan_evaluate ran for each stage). NULL (caller frees otherwise) when
 * anything is missing, the layout is rejected for anything but memory, or
 * a stage's terms do not sum to e's stage_mem_bytes: no terms are recorded
 * rather than terms that disagree with the totals beside them. */
static plan_mem *stage_terms(const plan_estimate *e, const plan_model *m, const plan_cluster *c,
                             const plan_layout *l)
{
    if (!m || !c || !c->gpu || !c->inst || !l || e->nstages < 1 || e->nstages != l->pp ||
        e->nstages > PLAN_PP_MAX)
        return NULL;
    plan_mem *mem = malloc((size_t)e->nstages * sizeof *mem);
    st_err ignore = {0};
    if (!mem || plan_stages_mem(m, c, l, mem, e->nstages, &ignore) != ST_OK) {
        free(mem);
        return NULL;
    }
    for (int i = 0; i < e->nstages; i++) {
        double a = mem[i].total_bytes, b = e->stage_mem_bytes[i];
        if (!(fabs(a - b) <= STAGE_TERMS_REL_TOL * fmax(fabs(a), fabs(b)))) {
            free(mem);
            return NULL;
        }
    }
    return mem;
}

/* The estimate of a plan with its per-stage memory: the total of each stage
 * and, when m, c and l (the inputs of e; any may be NULL) give them, its
 * terms. */
static int insert_prediction(db *d, int64_t rec, int64_t plan_id, const plan_estimate *e,
                             const plan_model *m, const plan_cluster *c, const plan_layout *l,
                             st_err *err)
{
    db__ins s, t;
    const db__fields *lists[] = {&db__estimate_fields};
    const db__fields *stage_lists[] = {&db__stage_mem_fields};
    int64_t pid = 0;
    memset(&t, 0, sizeof t);
    plan_mem *terms = NULL;
    int rc = db__ins_prepare(d, &s, "predictions", "plan_id, record_id", lists, 1, err);
    if (rc == ST_OK) {
        db__b_i64(&s, plan_id);
        db__b_i64(&s, rec);
        db__b_fields(&s, &db__estimate_fields, e);
        rc = db__ins_step(d, &s, &pid, err);
    }
    if (rc == ST_OK && e->nstages > 0) {
        terms = stage_terms(e, m, c, l);
        rc = db__ins_prepare(d, &t, "prediction_stages",
                             "prediction_id, stage, layers, mem_bytes, inflight", stage_lists, 1,
                             err);
    }
    for (int i = 0; rc == ST_OK && i < e->nstages && i < PLAN_PP_MAX; i++) {
        db__b_i64(&t, pid);
        db__b_i64(&t, i);
        db__b_i64(&t, e->stage_layers[i]);
        db__b_dbl(&t, e->stage_mem_bytes[i]);
        db__b_i64(&t, e->stage_inflight[i]);
        if (terms) {
            db__b_fields(&t, &db__stage_mem_fields, &terms[i]);
        } else {
            for (int k = 0; k < db__stage_mem_fields.n; k++)
                db__b_null(&t);
        }
        rc = db__ins_step(d, &t, NULL, err);
    }
    free(terms);
    db__ins_finalize(&t);
    db__ins_finalize(&s);
    return rc;
}

static int insert_search(db *d, int64_t rec, int64_t model_id, int64_t inst_id, int nodes,
                         int gpus, const char *mode, const plan_config *cfg, double tokens,
                         const plan_result *r, st_err *err)
{
    char *cfg_json = db__fields_json(&db__config_fields, cfg);
    char *rej_json = NULL;
    cJSON *rej = cJSON_CreateObject();
    for (int i = 1; rej && r && i < PLAN_REJ__COUNT; i++)
        cJSON_AddNumberToObject(rej, plan_reject_name((plan_reject)i), (double)r->rejected[i]);
    if (rej && r)
        rej_json = cJSON_PrintUnformatted(rej);
    cJSON_Delete(rej);
    db__ins s;
    const db__fields *lists[] = {&db__result_fields};
    int rc = db__ins_prepare(d, &s, "searches",
                             "record_id, model_id, instance_type_id, nodes, gpus, mode, objective, "
                             "top_k, tokens, rejected_json, config_json",
                             lists, 1, err);
    if (rc == ST_OK) {
        db__b_i64(&s, rec);
        b_id_or_null(&s, model_id);
        b_id_or_null(&s, inst_id);
        if (nodes > 0) {
            db__b_i64(&s, nodes);
            db__b_i64(&s, gpus);
        } else {
            db__b_null(&s);
            db__b_null(&s);
        }
        db__b_txt(&s, mode);
        db__b_txt(&s, plan_objective_name(cfg->objective));
        db__b_i64(&s, cfg->top_k);
        db__b_dbl(&s, tokens > 0 ? tokens : NAN);
        db__b_txt(&s, rej_json);
        db__b_txt(&s, cfg_json);
        if (r) {
            db__b_fields(&s, &db__result_fields, r);
        } else { /* comparison mode: one search per option, not kept */
            for (int i = 0; i < db__result_fields.n; i++)
                db__b_null(&s);
        }
        rc = db__ins_step(d, &s, NULL, err);
    }
    db__ins_finalize(&s);
    cJSON_free(cfg_json);
    cJSON_free(rej_json);
    return rc;
}

/* Run body inside one transaction with its records row. */
typedef int (*body_fn)(db *d, int64_t rec, void *ctx, st_err *err);

static int in_transaction(db *d, const db_provenance *p, const char *kind, const char *summary,
                          body_fn body, void *ctx, int64_t *id, st_err *err)
{
    if (!d)
        return ST_RAISE(err, ST_EINVAL, "database: not open");
    if (d->mode != DB_OPEN_WRITE)
        return ST_RAISE(err, ST_EINVAL, "%s: opened for reading", d->path);
    int64_t rec = 0;
    int rc = db__begin(d, err);
    if (rc != ST_OK)
        return rc;
    rc = db__record_insert(d, p, kind, summary, &rec, err);
    if (rc == ST_OK)
        rc = body(d, rec, ctx, err);
    if (rc == ST_OK)
        rc = db__commit(d, err);
    if (rc != ST_OK) {
        db__rollback(d);
        return rc;
    }
    if (id)
        *id = rec;
    return ST_OK;
}

static void model_label(const plan_model *m, char *buf, size_t n)
{
    char p[24];
    units_fmt_count((double)m->params, p, sizeof p);
    buf[0] = '\0';
    db__catf(buf, n, "%s (%s params)", m->name, p);
}

/* "megatron bf16": the framework's key and the precision; a config's -1
 * precision is the default, bf16. */
static void stack_label(int framework, int precision, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s", plan_framework_get(framework)->key,
             plan_precision_name(precision < 0 ? PLAN_PREC_BF16 : (plan_precision)precision));
}

/* ---- plan ---- */

typedef struct plan_ctx {
    const plan_model *m;
    const plan_cluster *c;
    const plan_config *cfg;
    const plan_result *r;
    const double *sim;
} plan_ctx;

static int plan_body(db *d, int64_t rec, void *vctx, st_err *err)
{
    plan_ctx *x = vctx;
    int64_t mid = 0, iid = 0, pid = 0;
    int rc = insert_model(d, rec, x->m, &mid, err);
    if (rc == ST_OK)
        rc = insert_cluster(d, rec, x->c, &iid, err);
    if (rc == ST_OK)
        rc = insert_search(d, rec, mid, iid, x->c->nodes, x->c->gpus, "cluster", x->cfg, 0, x->r,
                           err);
    for (int i = 0; rc == ST_OK && i < x->r->ntop; i++) {
        const plan_candidate *cd = &x->r->top[i];
        rc = insert_plan(d, rec, mid, iid, "top", i + 1, x->m, x->c->inst->name, x->c->nodes,
                         x->c->gpus, &cd->layout, x->sim ? x->sim[i] : 0, &pid, err);
        if (rc == ST_OK)
            rc = insert_prediction(d, rec, pid, &cd->est, x->m, x->c, &cd->layout, err);
    }
    if (rc == ST_OK && x->r->ntop == 0 && x->r->min_oom_excess_bytes > 0) {
        const plan_candidate *cd = &x->r->closest_oom;
        rc = insert_plan(d, rec, mid, iid, "closest_oom", 0, x->m, x->c->inst->name, x->c->nodes,
                         x->c->gpus, &cd->layout, 0, &pid, err);
        if (rc == ST_OK)
            rc = insert_prediction(d, rec, pid, &cd->est, x->m, x->c, &cd->layout, err);
    }
    /* the best layout of every (TP, PP) pair, for the step-time grid */
    for (int i = 0; rc == ST_OK && i < x->r->ngrid; i++) {
        const plan_candidate *cd = &x->r->grid[i].best;
        rc = insert_plan(d, rec, mid, iid, "grid", 0, x->m, x->c->inst->name, x->c->nodes,
                         x->c->gpus, &cd->layout, 0, &pid, err);
        if (rc == ST_OK)
            rc = insert_prediction(d, rec, pid, &cd->est, x->m, x->c, &cd->layout, err);
    }
    return rc;
}

int db_record_plan(db *d, const db_provenance *p, const plan_model *m, const plan_cluster *c,
                   const plan_config *cfg, const plan_result *r, const double *sim_step_s,
                   int64_t *id, st_err *err)
{
    char sum[256] = "", ml[96], lay[128], stack[48];
    model_label(m, ml, sizeof ml);
    if (r->ntop > 0) {
        const plan_layout *l = &r->top[0].layout;
        db__layout_label(l, lay, sizeof lay);
        stack_label(l->framework, l->precision, stack, sizeof stack);
        db__catf(sum, sizeof sum, "%s on %d x %s with %s: %s, %.3f s/step", ml, c->nodes,
                 c->inst->name, stack, lay, r->top[0].est.time.step_s);
        if (sim_step_s && sim_step_s[0] > 0)
            db__catf(sum, sizeof sum, " (simulated %.3f s)", sim_step_s[0]);
        db__catf(sum, sizeof sum, "; %d plan%s", r->ntop, r->ntop == 1 ? "" : "s");
    } else {
        stack_label(cfg->framework, cfg->precision, stack, sizeof stack);
        db__catf(sum, sizeof sum, "%s on %d x %s with %s: nothing fits (%lld layouts evaluated)",
                 ml, c->nodes, c->inst->name, stack, (long long)r->evaluated);
    }
    plan_ctx x = {m, c, cfg, r, sim_step_s};
    return in_transaction(d, p, "plan", sum, plan_body, &x, id, err);
}

typedef struct options_ctx {
    const plan_model *m;
    const plan_config *cfg;
    int n;
    const plan_cluster *cl;
    const plan_candidate *cands;
    double tokens;
} options_ctx;

static int options_body(db *d, int64_t rec, void *vctx, st_err *err)
{
    options_ctx *x = vctx;
    int64_t mid = 0, pid = 0;
    int rc = insert_model(d, rec, x->m, &mid, err);
    if (rc == ST_OK)
        rc = insert_search(d, rec, mid, 0, 0, 0, "compare", x->cfg, x->tokens, NULL, err);
    /* One instance_types row per type, shared by its counts. */
    const plan_instance *last = NULL;
    int64_t iid = 0;
    for (int i = 0; rc == ST_OK && i < x->n; i++) {
        const plan_cluster *c = &x->cl[i];
        if (c->inst != last) {
            rc = insert_cluster(d, rec, c, &iid, err);
            last = c->inst;
        }
        if (rc == ST_OK)
            rc = insert_plan(d, rec, mid, iid, "option", 0, x->m, c->inst->name, c->nodes, c->gpus,
                             &x->cands[i].layout, 0, &pid, err);
        if (rc == ST_OK)
            rc = insert_prediction(d, rec, pid, &x->cands[i].est, x->m, c, &x->cands[i].layout,
                                   err);
    }
    return rc;
}

int db_record_plan_options(db *d, const db_provenance *p, const plan_model *m,
                           const plan_config *cfg, int n, const plan_cluster *clusters,
                           const plan_candidate *cands, double tokens, int64_t *id, st_err *err)
{
    char sum[256] = "", ml[96], stack[48];
    model_label(m, ml, sizeof ml);
    stack_label(cfg->framework, cfg->precision, stack, sizeof stack);
    int best = -1;
    for (int i = 0; i < n; i++)
        if (best < 0 || cands[i].est.tokens_per_s > cands[best].est.tokens_per_s)
            best = i;
    if (best >= 0)
        db__catf(sum, sizeof sum, "%s with %s: %d instance options; fastest %d x %s, %.3f s/step",
                 ml, stack, n, clusters[best].nodes, clusters[best].inst->name,
                 cands[best].est.time.step_s);
    else
        db__catf(sum, sizeof sum, "%s with %s: no instance option fits", ml, stack);
    options_ctx x = {m, cfg, n, clusters, cands, tokens};
    return in_transaction(d, p, "plan", sum, options_body, &x, id, err);
}

/* ---- simulation ---- */

typedef struct sim_ctx {
    const plan_model *m;
    const plan_cluster *c;
    const plan_layout *l;
    const plan_estimate *est;
    const sim_config *cfg;
    const sim_result *s;
} sim_ctx;

static const char *stream_name(int s)
{
    switch (s) {
    case SIM_STREAM_COMPUTE: return "compute";
    case SIM_STREAM_SEND_INTRA: return "send_intra";
    case SIM_STREAM_SEND_NET: return "send_net";
    case SIM_STREAM_DP: return "dp";
    default: return "?";
    }
}

static int sim_body(db *d, int64_t rec, void *vctx, st_err *err)
{
    sim_ctx *x = vctx;
    const sim_result *r = x->s;
    int64_t mid = 0, iid = 0, pid = 0, sid = 0;
    int rc = insert_model(d, rec, x->m, &mid, err);
    if (rc == ST_OK)
        rc = insert_cluster(d, rec, x->c, &iid, err);
    if (rc == ST_OK)
        rc = insert_plan(d, rec, mid, iid, "simulated", 1, x->m, x->c->inst->name, x->c->nodes,
                         x->c->gpus, x->l, r->step_s, &pid, err);
    if (rc == ST_OK && x->est)
        rc = insert_prediction(d, rec, pid, x->est, x->m, x->c, x->l, err);
    db__ins s, t;
    memset(&t, 0, sizeof t);
    const db__fields *lists[] = {&db__sim_config_fields, &db__sim_fields};
    if (rc == ST_OK)
        rc = db__ins_prepare(d, &s, "simulations", "record_id, plan_id", lists, 2, err);
    else
        memset(&s, 0, sizeof s);
    if (rc == ST_OK) {
        db__b_i64(&s, rec);
        db__b_i64(&s, pid);
        db__b_fields(&s, &db__sim_config_fields, x->cfg);
        db__b_fields(&s, &db__sim_fields, r);
        rc = db__ins_step(d, &s, &sid, err);
    }
    db__ins_finalize(&s);
    const db__fields *stl[] = {&db__sim_stage_fields};
    if (rc == ST_OK)
        rc = db__ins_prepare(d, &t, "sim_stages", "simulation_id, stage", stl, 1, err);
    for (int i = 0; rc == ST_OK && i < r->pp && i < PLAN_PP_MAX; i++) {
        db__b_i64(&t, sid);
        db__b_i64(&t, i);
        db__b_fields(&t, &db__sim_stage_fields, &r->stage[i]);
        rc = db__ins_step(d, &t, NULL, err);
    }
    db__ins_finalize(&t);
    if (rc == ST_OK && r->trace && r->ntrace > 0)
        rc = db__ins_prepare(d, &t, "sim_trace",
                             "simulation_id, seq, stage, stream, op, chunk, microbatch, start_ns, "
                             "end_ns",
                             NULL, 0, err);
    for (int i = 0; rc == ST_OK && r->trace && i < r->ntrace; i++) {
        const sim_trace_rec *e = &r->trace[i];
        db__b_i64(&t, sid);
        db__b_i64(&t, i);
        db__b_i64(&t, e->stage);
        db__b_txt(&t, stream_name(e->stream));
        db__b_txt(&t, e->kind < SIM_OP__COUNT ? sim_op_name((sim_op_kind)e->kind) : "allreduce");
        db__b_i64(&t, e->chunk);
        db__b_i64(&t, e->microbatch);
        db__b_i64(&t, e->start_ns);
        db__b_i64(&t, e->end_ns);
        rc = db__ins_step(d, &t, NULL, err);
    }
    db__ins_finalize(&t);
    return rc;
}

int db_record_simulation(db *d, const db_provenance *p, const plan_model *m,
                         const plan_cluster *c, const plan_layout *l, const plan_estimate *est,
                         const sim_config *cfg, const sim_result *s, int64_t *id, st_err *err)
{
    char sum[256] = "", ml[96], lay[128], stack[48];
    model_label(m, ml, sizeof ml);
    db__layout_label(l, lay, sizeof lay);
    stack_label(l->framework, l->precision, stack, sizeof stack);
    db__catf(sum, sizeof sum,
             "%s on %d x %s with %s: %s: simulated %.3f s/step (planner %.3f s), bubble %.1f%%",
             ml, c->nodes, c->inst->name, stack, lay, s->step_s, s->planner_step_s,
             100 * s->bubble_fraction);
    sim_ctx x = {m, c, l, est, cfg, s};
    return in_transaction(d, p, "simulation", sum, sim_body, &x, id, err);
}

/* ---- runs ---- */

/* Columns of runs after the lead "record_id, plan_id, model_id". */
#define RUN_COLS                                                                                 \
    "source, status, error_text, backend, file, compared, basis, measured_step_s, "              \
    "predicted_step_s, simulated_step_s, error_pct, measured_mem_bytes, predicted_mem_bytes, "   \
    "mem_error_pct, nsteps"

typedef struct val_ctx {
    const plan_catalog *cat;
    const char *file;
    const plan_validate_result *rows;
    const double *sim;
    int n;
} val_ctx;

/* The node of validation row r as an instance_types row, once per record:
 * rows read as the same node (a catalog entry, or one made from the row's
 * GPU and network text) share it. seen[0..*nseen) are the nodes recorded
 * so far and ids their rows. */
static int val_instance(db *d, int64_t rec, const plan_catalog *cat,
                        const plan_validate_result *r, const plan_instance **seen, int64_t *ids,
                        int *nseen, int64_t *id, st_err *err)
{
    const plan_instance *in = &r->inst;
    for (int k = 0; k < *nseen; k++)
        if (seen[k]->gpu_index == in->gpu_index &&
            db__fields_equal(&db__instance_fields, seen[k], in)) {
            *id = ids[k];
            return ST_OK;
        }
    plan_cluster cl;
    st_err ignore = {0};
    int rc;
    if (cat && plan_validate_cluster(cat, r, &cl, &ignore) == ST_OK)
        rc = insert_cluster(d, rec, &cl, id, err);
    else /* not linked to this catalog: the node without its GPU and curves */
        rc = insert_instance(d, rec, in, NULL, NULL, NULL, id, err);
    if (rc == ST_OK) {
        seen[*nseen] = in;
        ids[(*nseen)++] = *id;
    }
    return rc;
}

static int val_body(db *d, int64_t rec, void *vctx, st_err *err)
{
    val_ctx *x = vctx;
    size_t cap = x->n > 0 ? (size_t)x->n : 1;
    const plan_instance **seen = calloc(cap, sizeof *seen);
    int64_t *inst_ids = calloc(cap, sizeof *inst_ids);
    int nseen = 0;
    if (!seen || !inst_ids) {
        free(seen);
        free(inst_ids);
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", d->path);
    }
    db__ins s;
    const db__fields *lists[] = {&db__validate_fields};
    int rc = db__ins_prepare(d, &s, "runs", "record_id, plan_id, model_id, " RUN_COLS, lists, 1,
                             err);
    for (int i = 0; rc == ST_OK && i < x->n; i++) {
        const plan_validate_result *r = &x->rows[i];
        int64_t mid = 0, iid = 0, pid = 0;
        if (r->have_model)
            rc = insert_model(d, rec, &r->model, &mid, err);
        if (rc == ST_OK && r->have_layout) {
            rc = val_instance(d, rec, x->cat, r, seen, inst_ids, &nseen, &iid, err);
            double sim = x->sim && x->sim[i] > 0 ? x->sim[i] : 0;
            if (rc == ST_OK)
                rc = insert_plan(d, rec, mid, iid, "published", 0, &r->model, r->inst.name,
                                 r->nodes, r->gpus, &r->layout, sim, &pid, err);
            /* the cluster the row was predicted on, for its stages' terms
             * (a run on part of one node keeps its GPU count) */
            plan_cluster cl, *clp = NULL;
            st_err ignore = {0};
            if (x->cat && r->have_model && plan_validate_cluster(x->cat, r, &cl, &ignore) == ST_OK)
                clp = &cl;
            if (rc == ST_OK)
                rc = insert_prediction(d, rec, pid, &r->est, r->have_model ? &r->model : NULL, clp,
                                       &r->layout, err);
        }
        if (rc != ST_OK)
            break;
        db__b_i64(&s, rec);
        b_id_or_null(&s, pid);
        b_id_or_null(&s, mid);
        db__b_txt(&s, "published");
        db__b_txt(&s, r->ref_oom ? "oom" : "ok");
        db__b_null(&s);
        db__b_null(&s);
        db__b_txt(&s, x->file);
        db__b_i64(&s, r->compared);
        db__b_txt(&s, r->compared ? plan_validate_basis_name(r->basis) : NULL);
        db__b_dbl(&s, r->compared ? r->ref_time_s : NAN);
        db__b_dbl(&s, r->have_layout ? r->pred_time_s : NAN);
        db__b_dbl(&s, x->sim && x->sim[i] > 0 ? x->sim[i] : NAN);
        db__b_dbl(&s, r->compared ? r->error_pct : NAN);
        db__b_dbl(&s, r->have_mem ? r->ref_mem_bytes : NAN);
        db__b_dbl(&s, r->have_layout ? r->pred_mem_bytes : NAN);
        db__b_dbl(&s, r->have_mem ? r->mem_error_pct : NAN);
        db__b_null(&s);
        db__b_fields(&s, &db__validate_fields, r);
        rc = db__ins_step(d, &s, NULL, err);
    }
    db__ins_finalize(&s);
    free(inst_ids);
    free(seen);
    return rc;
}

int db_record_validation(db *d, const db_provenance *p, const plan_catalog *cat,
                         const char *file, const plan_validate_result *rows, const double *sim_s,
                         int n, int64_t *id, st_err *err)
{
    plan_validate_summary sum;
    plan_validate_summarize(rows, n, &sum);
    char text[256] = "";
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file ? file : "-";
    if (sum.all.compared)
        db__catf(text, sizeof text,
                 "validate %s: %d published runs, %d compared, mean |error| %.1f%% (max %.1f%%)",
                 base, n, sum.all.compared, sum.all.mean_abs_error_pct, sum.all.max_abs_error_pct);
    else
        db__catf(text, sizeof text, "validate %s: %d published runs, none compared", base, n);
    val_ctx x = {cat, file, rows, sim_s, n};
    return in_transaction(d, p, "run", text, val_body, &x, id, err);
}

typedef struct run_ctx {
    const plan_model *m;
    const plan_cluster *c;
    const plan_layout *l;
    const plan_estimate *est;
    const db_run *run;
} run_ctx;

/* NAN binds NULL: a zero that means "not given" becomes NAN. */
static double given(double v)
{
    return v != 0 ? v : NAN;
}

static void b_int_ptr(db__ins *s, const int *v)
{
    if (v)
        db__b_i64(s, *v);
    else
        db__b_null(s);
}

/* Columns of runs that schema version 4 added. */
#define RUN_COLS_V4                                                                              \
    "nranks, device, transport, threads_per_rank, run_host, tokens_per_step, tokens_per_s, "    \
    "model_flops_per_step, hardware_flops_per_step, achieved_flops, peak_flops, mfu, "          \
    "failed_rank, exit_status, measured_steps, launch_command, run_dir, config_json, scaled, "   \
    "plan_record_id"
/* ... and version 5. */
#define RUN_COLS_V5 "device_name"

static int run_steps_insert(db *d, int64_t rid, const db_run *u, st_err *err)
{
    if (u->nsteps <= 0 || !u->steps)
        return ST_OK;
    db__ins t;
    int rc = db__ins_prepare(d, &t, "run_steps",
                             "run_id, step, time_s, forward_s, backward_s, optimizer_s, comm_s, "
                             "loss, compute_s, tp_comm_s, pp_wait_s, dp_comm_s, lr, grad_norm, "
                             "measured",
                             NULL, 0, err);
    for (int i = 0; rc == ST_OK && i < u->nsteps; i++) {
        const db_run_step *st = &u->steps[i];
        db__b_i64(&t, rid);
        db__b_i64(&t, st->step);
        db__b_dbl(&t, st->time_s);
        db__b_dbl(&t, st->forward_s);
        db__b_dbl(&t, st->backward_s);
        db__b_dbl(&t, st->optimizer_s);
        db__b_dbl(&t, st->comm_s);
        db__b_dbl(&t, st->loss);
        if (st->phases) {
            db__b_dbl(&t, st->compute_s);
            db__b_dbl(&t, st->tp_comm_s);
            db__b_dbl(&t, st->pp_wait_s);
            db__b_dbl(&t, st->dp_comm_s);
            db__b_dbl(&t, st->lr);
            db__b_dbl(&t, st->grad_norm);
            db__b_i64(&t, st->measured);
        } else {
            for (int k = 0; k < 7; k++)
                db__b_null(&t);
        }
        rc = db__ins_step(d, &t, NULL, err);
    }
    db__ins_finalize(&t);
    return rc;
}

static int run_ranks_insert(db *d, int64_t rid, const db_run *u, st_err *err)
{
    if (u->nranks <= 0 || (!u->rank_stats && !u->rank_peak_mem_bytes))
        return ST_OK;
    db__ins t;
    int rc = db__ins_prepare(d, &t, "run_ranks",
                             "run_id, rank, peak_mem_bytes, tp_rank, pp_rank, dp_rank, compute_s, "
                             "tp_comm_s, pp_wait_s, dp_comm_s, optimizer_s, "
                             "device_memory_peak_bytes",
                             NULL, 0, err);
    for (int i = 0; rc == ST_OK && i < u->nranks; i++) {
        db__b_i64(&t, rid);
        if (u->rank_stats) {
            const db_run_rank *k = &u->rank_stats[i];
            db__b_i64(&t, k->rank);
            db__b_dbl(&t, k->peak_mem_bytes);
            db__b_i64(&t, k->tp_rank);
            db__b_i64(&t, k->pp_rank);
            db__b_i64(&t, k->dp_rank);
            db__b_dbl(&t, k->compute_s);
            db__b_dbl(&t, k->tp_comm_s);
            db__b_dbl(&t, k->pp_wait_s);
            db__b_dbl(&t, k->dp_comm_s);
            db__b_dbl(&t, k->optimizer_s);
            db__b_dbl(&t, given(k->device_mem_peak_bytes));
        } else {
            db__b_i64(&t, i);
            db__b_dbl(&t, u->rank_peak_mem_bytes[i]);
            for (int k = 0; k < 9; k++)
                db__b_null(&t);
        }
        rc = db__ins_step(d, &t, NULL, err);
    }
    db__ins_finalize(&t);
    return rc;
}

static int run_body(db *d, int64_t rec, void *vctx, st_err *err)
{
    run_ctx *x = vctx;
    const db_run *u = x->run;
    int64_t mid = 0, iid = 0, pid = 0, rid = 0;
    double sim = u->simulated_step_s > 0 ? u->simulated_step_s : 0;
    int rc = insert_model(d, rec, x->m, &mid, err);
    if (rc == ST_OK && x->c)
        rc = insert_cluster(d, rec, x->c, &iid, err);
    /* no catalog entry for the host it ran on: the plan names the host */
    const char *inst = x->c ? x->c->inst->name : u->run_host ? u->run_host : "";
    int nodes = x->c ? x->c->nodes : 1;
    int gpus = x->c ? x->c->gpus : u->ranks > 0 ? u->ranks : 1;
    if (rc == ST_OK)
        rc = insert_plan(d, rec, mid, iid, "measured", 1, x->m, inst, nodes, gpus, x->l, sim, &pid,
                         err);
    if (rc == ST_OK && x->est && x->c)
        rc = insert_prediction(d, rec, pid, x->est, x->m, x->c, x->l, err);
    db__ins s;
    memset(&s, 0, sizeof s);
    if (rc == ST_OK)
        rc = db__ins_prepare(d, &s, "runs",
                             "record_id, plan_id, model_id, " RUN_COLS ", " RUN_COLS_V4
                             ", " RUN_COLS_V5, NULL, 0,
                             err);
    if (rc == ST_OK) {
        double pred = x->est ? x->est->time.step_s : NAN;
        double meas = u->measured_step_s > 0 ? u->measured_step_s : NAN;
        db__b_i64(&s, rec);
        db__b_i64(&s, pid);
        db__b_i64(&s, mid);
        db__b_txt(&s, "measured");
        db__b_txt(&s, u->status ? u->status : "ok");
        db__b_txt(&s, u->error_text && *u->error_text ? u->error_text : NULL);
        db__b_txt(&s, u->backend);
        db__b_null(&s);
        db__b_i64(&s, x->est && u->measured_step_s > 0);
        db__b_null(&s);
        db__b_dbl(&s, meas);
        db__b_dbl(&s, pred);
        db__b_dbl(&s, sim > 0 ? sim : NAN);
        db__b_dbl(&s, plan_error_pct(pred, meas));
        /* the memory compared with the planner's total (what nvidia-smi
         * shows: context and workspaces included): the GPU's memory in use
         * where a rank's device reports it, else the executor's count */
        double peak = NAN, dev = NAN;
        for (int i = 0; i < u->nranks; i++) {
            double v = u->rank_stats ? u->rank_stats[i].peak_mem_bytes
                       : u->rank_peak_mem_bytes ? u->rank_peak_mem_bytes[i] : NAN;
            double g = u->rank_stats ? u->rank_stats[i].device_mem_peak_bytes : 0;
            if (peak != peak || v > peak)
                peak = v;
            if (g > 0 && !(dev >= g))
                dev = g;
        }
        if (dev > 0)
            peak = dev;
        db__b_dbl(&s, peak);
        db__b_dbl(&s, x->est ? x->est->mem.total_bytes : NAN);
        db__b_dbl(&s, x->est ? plan_error_pct(x->est->mem.total_bytes, peak) : NAN);
        db__b_i64(&s, u->nsteps);
        /* version 4 */
        if (u->ranks > 0)
            db__b_i64(&s, u->ranks);
        else
            db__b_null(&s);
        db__b_txt(&s, u->device);
        db__b_txt(&s, u->transport);
        if (u->threads_per_rank > 0)
            db__b_i64(&s, u->threads_per_rank);
        else
            db__b_null(&s);
        db__b_txt(&s, u->run_host);
        db__b_dbl(&s, given(u->tokens_per_step));
        db__b_dbl(&s, given(u->tokens_per_s));
        db__b_dbl(&s, given(u->model_flops_per_step));
        db__b_dbl(&s, given(u->hardware_flops_per_step));
        db__b_dbl(&s, given(u->achieved_flops));
        db__b_dbl(&s, given(u->peak_flops));
        db__b_dbl(&s, given(u->mfu));
        b_int_ptr(&s, u->failed_rank);
        b_int_ptr(&s, u->exit_status);
        if (u->ranks > 0)
            db__b_i64(&s, u->measured_steps);
        else
            db__b_null(&s);
        db__b_txt(&s, u->launch_command);
        db__b_txt(&s, u->run_dir);
        db__b_txt(&s, u->config_json);
        db__b_txt(&s, u->scaled && *u->scaled ? u->scaled : NULL);
        if (u->plan_record_id > 0)
            db__b_i64(&s, u->plan_record_id);
        else
            db__b_null(&s);
        /* version 5 */
        db__b_txt(&s, u->device_name && *u->device_name ? u->device_name : NULL);
        rc = db__ins_step(d, &s, &rid, err);
    }
    db__ins_finalize(&s);
    if (rc == ST_OK)
        rc = run_steps_insert(d, rid, u, err);
    if (rc == ST_OK)
        rc = run_ranks_insert(d, rid, u, err);
    return rc;
}

int db_record_run(db *d, const db_provenance *p, const plan_model *m, const plan_cluster *c,
                  const plan_layout *l, const plan_estimate *est, const db_run *run, int64_t *id,
                  st_err *err)
{
    char sum[256] = "", ml[96], lay[128];
    model_label(m, ml, sizeof ml);
    db__layout_label(l, lay, sizeof lay);
    if (c)
        db__catf(sum, sizeof sum, "%s on %d x %s: %s: run %s", ml, c->nodes, c->inst->name, lay,
                 run->status ? run->status : "ok");
    else
        db__catf(sum, sizeof sum, "%s on %s: %s: run %s", ml,
                 run->run_host ? run->run_host : "an unknown host", lay,
                 run->status ? run->status : "ok");
    if (run->ranks > 0)
        db__catf(sum, sizeof sum, " (%d ranks)", run->ranks);
    if (run->measured_step_s > 0)
        db__catf(sum, sizeof sum, ", measured %.3f s/step", run->measured_step_s);
    if (est && run->measured_step_s > 0)
        db__catf(sum, sizeof sum, " (predicted %.3f s", est->time.step_s);
    if (est && run->measured_step_s > 0 && run->simulated_step_s > 0)
        db__catf(sum, sizeof sum, ", simulated %.3f s", run->simulated_step_s);
    if (est && run->measured_step_s > 0)
        db__catf(sum, sizeof sum, ")");
    if (run->error_text && *run->error_text)
        db__catf(sum, sizeof sum, ": %s", run->error_text);
    run_ctx x = {m, c, l, est, run};
    return in_transaction(d, p, "run", sum, run_body, &x, id, err);
}

/* ---- bench ---- */

typedef struct bench_ctx {
    const plan_bench_cpu *cpu;
    const plan_bench_comm *comm;
    const db_bench_entry *e;
} bench_ctx;

static int bench_body(db *d, int64_t rec, void *vctx, st_err *err)
{
    const bench_ctx *x = vctx;
    const db_bench_entry *e = x->e;
    db__ins s;
    int rc = db__ins_prepare(d, &s, "bench_hosts",
                             "record_id, host, cpu_model, blas, cores, mem_bytes, threads_per_rank,"
                             " ranks, transport, instance_name, gpu_name, catalog_file,"
                             " catalog_json, peak_flops, gemm_dim_half, gemm_rms_log_err,"
                             " misaligned_factor, hbm_bps, hbm_eff, act_fwd_s, act_bwd_s,"
                             " glu_fwd_s, glu_bwd_s, opt_param_s, attn_fwd_flops,"
                             " attn_bwd_flops, p2p_bps, p2p_latency_s,"
                             " allreduce_busbw_bps, allreduce_latency_s, device",
                             NULL, 0, err);
    if (rc == ST_OK) {
        db__b_i64(&s, rec);
        db__b_txt(&s, x->cpu ? x->cpu->host : x->comm ? x->comm->host : NULL);
        db__b_txt(&s, x->cpu ? x->cpu->cpu_model : NULL);
        db__b_txt(&s, x->cpu ? x->cpu->blas : NULL);
        if (x->cpu) {
            db__b_i64(&s, x->cpu->cores);
            db__b_dbl(&s, x->cpu->mem_bytes);
        } else {
            db__b_null(&s);
            db__b_null(&s);
        }
        if (e && e->threads_per_rank > 0)
            db__b_i64(&s, e->threads_per_rank);
        else
            db__b_null(&s);
        if (x->comm) {
            db__b_i64(&s, x->comm->ranks);
            db__b_txt(&s, x->comm->transport);
        } else {
            db__b_null(&s);
            db__b_null(&s);
        }
        db__b_txt(&s, e ? e->instance_name : NULL);
        db__b_txt(&s, e ? e->gpu_name : NULL);
        db__b_txt(&s, e ? e->catalog_file : NULL);
        db__b_txt(&s, e ? e->catalog_json : NULL);
        const double nan = NAN;
        const double *v[] = {e ? &e->peak_flops : &nan,        e ? &e->gemm_dim_half : &nan,
                             e ? &e->gemm_rms_log_err : &nan,  e ? &e->misaligned_factor : &nan,
                             e ? &e->hbm_bps : &nan,           e ? &e->hbm_eff : &nan,
                             e ? &e->act_fwd_s : &nan,         e ? &e->act_bwd_s : &nan,
                             e ? &e->glu_fwd_s : &nan,         e ? &e->glu_bwd_s : &nan,
                             e ? &e->opt_param_s : &nan,       e ? &e->attn_fwd_flops : &nan,
                             e ? &e->attn_bwd_flops : &nan,    e ? &e->p2p_bps : &nan,
                             e ? &e->p2p_latency_s : &nan,     e ? &e->allreduce_busbw_bps : &nan,
                             e ? &e->allreduce_latency_s : &nan};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            db__b_dbl(&s, *v[i]);
        db__b_txt(&s, x->cpu && x->cpu->device[0] ? x->cpu->device : NULL);
        rc = db__ins_step(d, &s, NULL, err);
    }
    db__ins_finalize(&s);
    if (rc == ST_OK && x->cpu && x->cpu->ngemm > 0) {
        rc = db__ins_prepare(d, &s, "bench_gemm",
                             "record_id, seq, kind, threads, m, n, k, reps, time_s, achieved_flops,"
                             " layer_group",
                             NULL, 0, err);
        for (int i = 0; rc == ST_OK && i < x->cpu->ngemm; i++) {
            const plan_bench_gemm *g = &x->cpu->gemm[i];
            db__b_i64(&s, rec);
            db__b_i64(&s, i);
            db__b_txt(&s, g->kind);
            db__b_i64(&s, g->threads);
            db__b_i64(&s, g->m);
            db__b_i64(&s, g->n);
            db__b_i64(&s, g->k);
            db__b_i64(&s, g->reps);
            db__b_dbl(&s, g->time_s);
            db__b_dbl(&s, g->flops);
            db__b_i64(&s, g->group);
            rc = db__ins_step(d, &s, NULL, err);
        }
        db__ins_finalize(&s);
    }
    if (rc == ST_OK && x->cpu && x->cpu->nelem > 0) {
        rc = db__ins_prepare(d, &s, "bench_elem",
                             "record_id, seq, op, threads, n, reps, time_s, elem_s", NULL, 0, err);
        for (int i = 0; rc == ST_OK && i < x->cpu->nelem; i++) {
            const plan_bench_elem *k = &x->cpu->elem[i];
            db__b_i64(&s, rec);
            db__b_i64(&s, i);
            db__b_txt(&s, k->op);
            db__b_i64(&s, k->threads);
            db__b_i64(&s, k->n);
            db__b_i64(&s, k->reps);
            db__b_dbl(&s, k->time_s);
            db__b_dbl(&s, k->elem_s);
            rc = db__ins_step(d, &s, NULL, err);
        }
        db__ins_finalize(&s);
    }
    if (rc == ST_OK && x->cpu && x->cpu->nmem > 0) {
        rc = db__ins_prepare(d, &s, "bench_mem",
                             "record_id, seq, threads, array_bytes, reps, time_s, triad_bps", NULL,
                             0, err);
        for (int i = 0; rc == ST_OK && i < x->cpu->nmem; i++) {
            const plan_bench_mem *m = &x->cpu->mem[i];
            db__b_i64(&s, rec);
            db__b_i64(&s, i);
            db__b_i64(&s, m->threads);
            db__b_dbl(&s, m->array_bytes);
            db__b_i64(&s, m->reps);
            db__b_dbl(&s, m->time_s);
            db__b_dbl(&s, m->triad_bps);
            rc = db__ins_step(d, &s, NULL, err);
        }
        db__ins_finalize(&s);
    }
    if (rc == ST_OK && x->comm && x->comm->n > 0) {
        rc = db__ins_prepare(d, &s, "bench_comm",
                             "record_id, seq, transport, op, ranks, bytes, iters, time_s,"
                             " algbw_bps, busbw_bps",
                             NULL, 0, err);
        for (int i = 0; rc == ST_OK && i < x->comm->n; i++) {
            const plan_bench_coll *c = &x->comm->v[i];
            db__b_i64(&s, rec);
            db__b_i64(&s, i);
            db__b_txt(&s, x->comm->transport);
            db__b_txt(&s, c->op);
            db__b_i64(&s, c->ranks);
            db__b_dbl(&s, c->bytes);
            db__b_i64(&s, c->iters);
            db__b_dbl(&s, c->time_s);
            db__b_dbl(&s, c->algbw_bps);
            db__b_dbl(&s, c->busbw_bps);
            rc = db__ins_step(d, &s, NULL, err);
        }
        db__ins_finalize(&s);
    }
    return rc;
}

int db_record_bench(db *d, const db_provenance *p, const plan_bench_cpu *cpu,
                    const plan_bench_comm *comm, const db_bench_entry *entry, int64_t *id,
                    st_err *err)
{
    if (!cpu && !comm)
        return ST_RAISE(err, ST_EINVAL, "bench record: no measurements");
    char sum[256] = "";
    const char *host = cpu ? cpu->host : comm->host;
    db__catf(sum, sizeof sum, "bench %s:", host);
    if (cpu)
        db__catf(sum, sizeof sum, " %d cores", cpu->cores);
    if (entry && entry->peak_flops > 0)
        db__catf(sum, sizeof sum, ", sgemm %.1f GFLOP/s per rank (%d thread%s)",
                 entry->peak_flops / 1e9, entry->threads_per_rank,
                 entry->threads_per_rank == 1 ? "" : "s");
    if (entry && entry->hbm_bps > 0)
        db__catf(sum, sizeof sum, ", triad %.1f GB/s per rank", entry->hbm_bps / 1e9);
    if (comm)
        db__catf(sum, sizeof sum, ", %s over %d ranks", comm->transport, comm->ranks);
    if (entry && entry->allreduce_busbw_bps > 0)
        db__catf(sum, sizeof sum, ": all-reduce busbw %.2f GB/s", entry->allreduce_busbw_bps / 1e9);
    if (entry && entry->instance_name && *entry->instance_name)
        db__catf(sum, sizeof sum, "; catalog entry %s", entry->instance_name);
    bench_ctx x = {cpu, comm, entry};
    return in_transaction(d, p, "bench", sum, bench_body, &x, id, err);
}

/* ---- calibration ---- */

typedef struct cal_ctx {
    const char *file;
    const plan_cal_report *rep;
} cal_ctx;

static int cal_body(db *d, int64_t rec, void *vctx, st_err *err)
{
    const cal_ctx *x = vctx;
    const plan_cal_report *rep = x->rep;
    db__ins s, t, u;
    const db__fields *lists[] = {&db__calibration_fields};
    const db__fields *src_lists[] = {&db__cal_source_fields};
    memset(&t, 0, sizeof t);
    memset(&u, 0, sizeof u);
    int rc = db__ins_prepare(d, &s, "calibrations", "record_id, file", lists, 1, err);
    if (rc == ST_OK)
        rc = db__ins_prepare(d, &t, "calibration_params",
                             "calibration_id, param, name, before, after, std_err, asked, fitted",
                             NULL, 0, err);
    for (int i = 0; rc == ST_OK && i < rep->ngroups && i < PLAN_CAL_GROUPS_MAX; i++) {
        const plan_cal_group *g = &rep->group[i];
        plan_eff before = g->before, after = g->after;
        int64_t cid = 0;
        db__b_i64(&s, rec);
        db__b_txt(&s, x->file);
        db__b_fields(&s, &db__calibration_fields, g);
        rc = db__ins_step(d, &s, &cid, err);
        for (int k = 0; rc == ST_OK && k < PLAN_EFF__COUNT; k++) {
            db__b_i64(&t, cid);
            db__b_i64(&t, k);
            db__b_txt(&t, plan_eff_param_name((plan_eff_param)k));
            db__b_dbl(&t, *plan_eff_ref(&before, (plan_eff_param)k));
            db__b_dbl(&t, *plan_eff_ref(&after, (plan_eff_param)k));
            db__b_dbl(&t, g->std_err[k]);
            db__b_i64(&t, (g->asked >> k) & 1u);
            db__b_i64(&t, (g->fitted >> k) & 1u);
            rc = db__ins_step(d, &t, NULL, err);
        }
    }
    if (rc == ST_OK && rep->nsources > 0)
        rc = db__ins_prepare(d, &u, "calibration_sources", "record_id", src_lists, 1, err);
    for (int i = 0; rc == ST_OK && i < rep->nsources && i < PLAN_VAL_SOURCES_MAX; i++) {
        db__b_i64(&u, rec);
        db__b_fields(&u, &db__cal_source_fields, &rep->source[i]);
        rc = db__ins_step(d, &u, NULL, err);
    }
    db__ins_finalize(&u);
    db__ins_finalize(&t);
    db__ins_finalize(&s);
    return rc;
}

int db_record_calibration(db *d, const db_provenance *p, const char *file,
                          const plan_cal_report *rep, int64_t *id, st_err *err)
{
    char sum[256] = "";
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file ? file : "-";
    int rejected = 0;
    for (int i = 0; i < rep->ngroups && i < PLAN_CAL_GROUPS_MAX; i++)
        rejected += rep->group[i].rejected != 0;
    db__catf(sum, sizeof sum, "calibrate %s: %d rows from %d sources", base, rep->rows_used,
             rep->nsources);
    if (rep->ngroups == 0) {
        db__catf(sum, sizeof sum, "; nothing had rows to fit");
    } else {
        db__catf(sum, sizeof sum, ", %d fits", rep->ngroups);
        if (rejected)
            db__catf(sum, sizeof sum, " (%d rejected)", rejected);
        db__catf(sum, sizeof sum, "; mean |error| per source %.1f%% fitted",
                 rep->mean_source_err_pct);
        if (!isnan(rep->loso_mean_source_err_pct))
            db__catf(sum, sizeof sum, ", %.1f%% held out", rep->loso_mean_source_err_pct);
    }
    cal_ctx x = {file, rep};
    return in_transaction(d, p, "calibration", sum, cal_body, &x, id, err);
}

