/*
 * db_read.c: records read back into the planner's and simulator's structs,
 * and the aggregates a report draws (TP x PP grid, scaling, measured runs).
 *
 * Members come back through the same field lists they were written with
 * (db_fields.c), so a struct read back equals the one recorded, bit for
 * bit. Grouping by model shape and cluster uses the prefixes of
 * plans.match_key: "SHAPE|" and "SHAPE|CLUSTER|" (db__match_key); the grid
 * and the scaling points keep to the framework and precision of the
 * record's first plan (plans recorded before schema version 3 have none
 * and go together).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/db_int.h"

static void copy(char *dst, size_t n, const unsigned char *src)
{
    snprintf(dst, n, "%s", src ? (const char *)src : "");
}

const char *db__stack_cols(const db *d)
{
    return d->version >= 3 ? "p.framework, p.precision" : "NULL, NULL";
}

/* The prediction of plan_id into e (with its stages); *have = 0 if none. */
static int read_prediction(db *d, sqlite3_stmt *pst, sqlite3_stmt *sst, int64_t plan_id,
                           plan_estimate *e, int *have, st_err *err)
{
    *have = 0;
    sqlite3_reset(pst);
    sqlite3_bind_int64(pst, 1, plan_id);
    int s = sqlite3_step(pst);
    if (s == SQLITE_DONE)
        return ST_OK;
    if (s != SQLITE_ROW)
        return db__fail(d, s, err, "read prediction");
    memset(e, 0, sizeof *e);
    db__read_fields(pst, &db__estimate_fields, e);
    int64_t pid = sqlite3_column_int64(pst, 0); /* predictions.id is the first column */
    sqlite3_reset(sst);
    sqlite3_bind_int64(sst, 1, pid);
    while ((s = sqlite3_step(sst)) == SQLITE_ROW) {
        int k = sqlite3_column_int(sst, 0);
        if (k < 0 || k >= PLAN_PP_MAX)
            continue;
        e->stage_layers[k] = sqlite3_column_int(sst, 1);
        e->stage_mem_bytes[k] = sqlite3_column_double(sst, 2);
        e->stage_inflight[k] = sqlite3_column_int(sst, 3);
    }
    if (s != SQLITE_DONE)
        return db__fail(d, s, err, "read prediction stages");
    *have = 1;
    return ST_OK;
}

int db_plans(db *d, int64_t record_id, db_plan *out, int max, int *n, st_err *err)
{
    *n = 0;
    int rc = db__record_exists(d, record_id, "read", err);
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL, *pst = NULL, *sst = NULL;
    rc = db__prepare(d,
                     "SELECT p.*, i.name AS instance_name, i.gpu AS instance_gpu FROM plans p"
                     " LEFT JOIN instance_types i ON i.id = p.instance_type_id"
                     " WHERE p.record_id = ?1 ORDER BY p.id",
                     &st, err);
    if (rc == ST_OK)
        rc = db__prepare(d, "SELECT * FROM predictions WHERE plan_id = ?1", &pst, err);
    if (rc == ST_OK)
        rc = db__prepare(d,
                         "SELECT stage, layers, mem_bytes, inflight FROM prediction_stages"
                         " WHERE prediction_id = ?1 ORDER BY stage",
                         &sst, err);
    if (rc != ST_OK)
        goto done;
    sqlite3_bind_int64(st, 1, record_id);
    int s = SQLITE_DONE;
    while (rc == ST_OK && *n < max && (s = sqlite3_step(st)) == SQLITE_ROW) {
        db_plan *p = &out[*n];
        memset(p, 0, sizeof *p);
        int nc = sqlite3_column_count(st);
        for (int c = 0; c < nc; c++) {
            const char *name = sqlite3_column_name(st, c);
            if (!strcmp(name, "id"))
                p->id = sqlite3_column_int64(st, c);
            else if (!strcmp(name, "record_id"))
                p->record_id = sqlite3_column_int64(st, c);
            else if (!strcmp(name, "role"))
                copy(p->role, sizeof p->role, sqlite3_column_text(st, c));
            else if (!strcmp(name, "rank"))
                p->rank = sqlite3_column_int(st, c);
            else if (!strcmp(name, "nodes"))
                p->nodes = sqlite3_column_int(st, c);
            else if (!strcmp(name, "gpus"))
                p->gpus = sqlite3_column_int(st, c);
            else if (!strcmp(name, "simulated_step_s"))
                p->simulated_s = sqlite3_column_double(st, c);
            else if (!strcmp(name, "label"))
                copy(p->label, sizeof p->label, sqlite3_column_text(st, c));
            else if (!strcmp(name, "instance_name"))
                copy(p->instance_type, sizeof p->instance_type, sqlite3_column_text(st, c));
            else if (!strcmp(name, "instance_gpu"))
                copy(p->gpu, sizeof p->gpu, sqlite3_column_text(st, c));
        }
        plan_layout_default(&p->layout);
        db__read_fields(st, db__layout_list(), &p->layout);
        rc = read_prediction(d, pst, sst, p->id, &p->est, &p->have_est, err);
        if (rc == ST_OK)
            (*n)++;
    }
    if (rc == ST_OK && *n < max && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read plans");
done:
    sqlite3_finalize(sst);
    sqlite3_finalize(pst);
    sqlite3_finalize(st);
    return rc;
}

/* A stage row's terms into out (total_bytes left 0); 0, with out zeroed,
 * when any is absent (a version-1 file read as it is) or NULL (recorded
 * under version 1, or not computed). */
static int read_stage_terms(sqlite3_stmt *st, plan_mem *out)
{
    const db__fields *f = &db__stage_mem_fields;
    memset(out, 0, sizeof *out);
    for (int k = 0; k < f->n; k++)
        *(double *)((char *)out + f->v[k].off) = NAN;
    db__read_fields(st, f, out);
    for (int k = 0; k < f->n; k++)
        if (isnan(*(const double *)((const char *)out + f->v[k].off))) {
            memset(out, 0, sizeof *out);
            return 0;
        }
    return 1;
}

int db_plan_stages(db *d, int64_t plan_id, db_plan_stage *out, int max, int *n, st_err *err)
{
    *n = 0;
    sqlite3_stmt *st = NULL;
    /* SELECT *: the terms' columns exist from schema version 2 on */
    int rc = db__prepare(d,
                         "SELECT s.* FROM prediction_stages s"
                         " JOIN predictions p ON p.id = s.prediction_id"
                         " WHERE p.plan_id = ?1 ORDER BY s.stage",
                         &st, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, plan_id);
    int s = SQLITE_DONE, nc = sqlite3_column_count(st);
    while (*n < max && (s = sqlite3_step(st)) == SQLITE_ROW) {
        db_plan_stage *g = &out[(*n)++];
        memset(g, 0, sizeof *g);
        for (int c = 0; c < nc; c++) {
            const char *name = sqlite3_column_name(st, c);
            if (!strcmp(name, "stage"))
                g->stage = sqlite3_column_int(st, c);
            else if (!strcmp(name, "layers"))
                g->layers = sqlite3_column_int(st, c);
            else if (!strcmp(name, "inflight"))
                g->inflight = sqlite3_column_int(st, c);
            else if (!strcmp(name, "mem_bytes"))
                g->mem_bytes = sqlite3_column_double(st, c);
        }
        g->have_terms = read_stage_terms(st, &g->mem);
        if (g->have_terms)
            g->mem.total_bytes = g->mem_bytes;
    }
    if (*n < max && s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read prediction stages");
    sqlite3_finalize(st);
    return rc;
}

int db_model(db *d, int64_t record_id, plan_model *out, st_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, "SELECT * FROM models WHERE record_id = ?1 ORDER BY id LIMIT 1", &st,
                         err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, record_id);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        db__read_fields(st, db__model_list(), out);
        /* a recorded head size of hidden / heads is the derived one
         * (plan_model.head_dim): kept derived, as plan_model_finish keeps it */
        if (out->head_dim > 0 && out->head_dim * out->heads == out->hidden)
            out->head_dim = 0;
    } else if (s == SQLITE_DONE) {
        rc = ST_RAISE(err, ST_ENOENT, "%s: record %lld has no model", d->path,
                      (long long)record_id);
    } else {
        rc = db__fail(d, s, err, "read model");
    }
    sqlite3_finalize(st);
    return rc;
}

static int stream_value(const char *t)
{
    static const char *const names[] = {"compute", "send_intra", "send_net", "dp"};
    for (int i = 0; i < 4; i++)
        if (t && !strcmp(t, names[i]))
            return i;
    return SIM_STREAM_COMPUTE;
}

static int op_value(const char *t)
{
    for (int k = 0; k < SIM_OP__COUNT; k++)
        if (t && !strcmp(t, sim_op_name((sim_op_kind)k)))
            return k;
    return SIM_OP__COUNT; /* "allreduce": a gradient bucket */
}

int db_simulation(db *d, int64_t record_id, sim_config *cfg, sim_result *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, "SELECT * FROM simulations WHERE record_id = ?1 ORDER BY id LIMIT 1",
                         &st, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, record_id);
    int s = sqlite3_step(st);
    int64_t sid = 0;
    if (s == SQLITE_ROW) {
        sid = sqlite3_column_int64(st, 0);
        db__read_fields(st, &db__sim_fields, out);
        if (cfg) {
            sim_config_default(cfg);
            db__read_fields(st, &db__sim_config_fields, cfg);
        }
    } else if (s == SQLITE_DONE) {
        rc = ST_RAISE(err, ST_ENOENT, "%s: record %lld holds no simulation (see smdplan history "
                      "--kind simulation)", d->path, (long long)record_id);
    } else {
        rc = db__fail(d, s, err, "read simulation");
    }
    sqlite3_finalize(st);
    st = NULL;
    int ntrace = out->ntrace;
    out->ntrace = 0;
    if (rc == ST_OK)
        rc = db__prepare(d, "SELECT * FROM sim_stages WHERE simulation_id = ?1 ORDER BY stage", &st,
                         err);
    if (rc == ST_OK) {
        sqlite3_bind_int64(st, 1, sid);
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
            int k = sqlite3_column_int(st, 1);
            if (k >= 0 && k < PLAN_PP_MAX)
                db__read_fields(st, &db__sim_stage_fields, &out->stage[k]);
        }
        if (s != SQLITE_DONE)
            rc = db__fail(d, s, err, "read simulation stages");
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == ST_OK && ntrace > 0) {
        out->trace = calloc((size_t)ntrace, sizeof *out->trace);
        if (!out->trace)
            rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory for %d trace ops", d->path, ntrace);
        if (rc == ST_OK)
            rc = db__prepare(d,
                             "SELECT stage, stream, op, chunk, microbatch, start_ns, end_ns"
                             " FROM sim_trace WHERE simulation_id = ?1 ORDER BY seq",
                             &st, err);
        if (rc == ST_OK) {
            sqlite3_bind_int64(st, 1, sid);
            while (out->ntrace < ntrace && (s = sqlite3_step(st)) == SQLITE_ROW) {
                sim_trace_rec *t = &out->trace[out->ntrace++];
                t->stage = sqlite3_column_int(st, 0);
                t->stream = (uint8_t)stream_value((const char *)sqlite3_column_text(st, 1));
                t->kind = (uint8_t)op_value((const char *)sqlite3_column_text(st, 2));
                t->chunk = (int16_t)sqlite3_column_int(st, 3);
                t->microbatch = sqlite3_column_int(st, 4);
                t->start_ns = sqlite3_column_int64(st, 5);
                t->end_ns = sqlite3_column_int64(st, 6);
            }
            if (s != SQLITE_ROW && s != SQLITE_DONE)
                rc = db__fail(d, s, err, "read trace");
        }
        sqlite3_finalize(st);
    }
    if (rc != ST_OK)
        sim_result_fini(out);
    return rc;
}

/* What a record's first plan is grouped with: its match_key cut after its
 * n-th '|', and its framework and precision (NULL when not recorded). */
typedef struct plan_group {
    char prefix[1024];
    char framework[PLAN_FW_KEY_MAX], precision[8];
    int have_framework, have_precision;
} plan_group;

static int first_plan(db *d, int64_t record_id, int n, plan_group *g, st_err *err)
{
    memset(g, 0, sizeof *g);
    int rc = db__record_exists(d, record_id, "read", err);
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT p.match_key, %s FROM plans p WHERE p.record_id = ?1 ORDER BY p.id LIMIT 1",
             db__stack_cols(d));
    rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, record_id);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        copy(g->prefix, sizeof g->prefix, sqlite3_column_text(st, 0));
        char *p = g->prefix;
        for (int k = 0; k < n && p; k++) {
            p = strchr(p, '|');
            if (p)
                p++;
        }
        if (p)
            *p = '\0';
        g->have_framework = sqlite3_column_type(st, 1) != SQLITE_NULL;
        g->have_precision = sqlite3_column_type(st, 2) != SQLITE_NULL;
        copy(g->framework, sizeof g->framework, sqlite3_column_text(st, 1));
        copy(g->precision, sizeof g->precision, sqlite3_column_text(st, 2));
    } else if (s == SQLITE_DONE) {
        rc = ST_RAISE(err, ST_ENOENT, "%s: record %lld holds no plan", d->path,
                      (long long)record_id);
    } else {
        rc = db__fail(d, s, err, "read plan");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The filter on the first plan's framework and precision ("IS": NULL, not
 * recorded, equals NULL); none in a file older than schema version 3,
 * where no plan has them (the columns do not exist). */
static const char *stack_filter(const db *d)
{
    return d->version >= 3 ? " AND p.framework IS ?2 AND p.precision IS ?3" : "";
}

/* Bind ?1 the prefix and, with stack_filter's, ?2 and ?3. */
static void bind_group(const db *d, sqlite3_stmt *st, const plan_group *g)
{
    sqlite3_bind_text(st, 1, g->prefix, -1, SQLITE_TRANSIENT);
    if (d->version < 3)
        return;
    if (g->have_framework)
        sqlite3_bind_text(st, 2, g->framework, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 2);
    if (g->have_precision)
        sqlite3_bind_text(st, 3, g->precision, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 3);
}

int db_grid(db *d, int64_t record_id, db_grid_cell *out, int max, int *n, st_err *err)
{
    *n = 0;
    plan_group g;
    int rc = first_plan(d, record_id, 2, &g, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT p.tp, p.pp, pr.reject, pr.step_s, p.label, %s FROM plans p"
             " JOIN predictions pr ON pr.plan_id = p.id"
             " WHERE substr(p.match_key, 1, length(?1)) = ?1%s"
             " ORDER BY p.tp, p.pp, pr.reject = 'ok' DESC, pr.step_s, p.id DESC",
             db__stack_cols(d), stack_filter(d));
    rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    bind_group(d, st, &g);
    int s = SQLITE_DONE;
    /* rows of a cell come feasible first, fastest first: the first decides */
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int tp = sqlite3_column_int(st, 0), pp = sqlite3_column_int(st, 1);
        if (*n > 0 && out[*n - 1].tp == tp && out[*n - 1].pp == pp)
            continue;
        if (*n == max)
            break;
        db_grid_cell *c = &out[(*n)++];
        memset(c, 0, sizeof *c);
        c->tp = tp;
        c->pp = pp;
        const char *rej = (const char *)sqlite3_column_text(st, 2);
        c->feasible = rej && !strcmp(rej, "ok");
        if (c->feasible)
            c->step_s = sqlite3_column_double(st, 3);
        else
            copy(c->reason, sizeof c->reason, (const unsigned char *)rej);
        copy(c->layout, sizeof c->layout, sqlite3_column_text(st, 4));
        copy(c->framework, sizeof c->framework, sqlite3_column_text(st, 5));
        copy(c->precision, sizeof c->precision, sqlite3_column_text(st, 6));
    }
    if (s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read grid");
    sqlite3_finalize(st);
    return rc;
}

int db_scaling(db *d, int64_t record_id, db_scaling_point *out, int max, int *n, st_err *err)
{
    *n = 0;
    plan_group g;
    int rc = first_plan(d, record_id, 1, &g, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    char sql[640];
    snprintf(sql, sizeof sql,
             "SELECT i.name, p.nodes, p.gpus, pr.tokens_per_s, pr.step_s, pr.mfu,"
             " pr.cost_per_hour, pr.cost_per_mtokens, p.label, %s FROM plans p"
             " JOIN predictions pr ON pr.plan_id = p.id"
             " JOIN instance_types i ON i.id = p.instance_type_id"
             " WHERE substr(p.match_key, 1, length(?1)) = ?1 AND pr.reject = 'ok'%s"
             " ORDER BY i.name, p.nodes, pr.tokens_per_s DESC",
             db__stack_cols(d), stack_filter(d));
    rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    bind_group(d, st, &g);
    int s = SQLITE_DONE;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int nodes = sqlite3_column_int(st, 1);
        if (*n > 0 && out[*n - 1].nodes == nodes && !strcmp(out[*n - 1].instance_type, name))
            continue;
        if (*n == max)
            break;
        db_scaling_point *p = &out[(*n)++];
        memset(p, 0, sizeof *p);
        copy(p->instance_type, sizeof p->instance_type, (const unsigned char *)name);
        p->nodes = nodes;
        p->gpus = sqlite3_column_int(st, 2);
        p->tokens_per_s = sqlite3_column_double(st, 3);
        p->step_s = sqlite3_column_double(st, 4);
        p->mfu = sqlite3_column_double(st, 5);
        p->cost_per_hour = sqlite3_column_double(st, 6);
        p->cost_per_mtokens = sqlite3_column_double(st, 7);
        copy(p->layout, sizeof p->layout, sqlite3_column_text(st, 8));
        copy(p->framework, sizeof p->framework, sqlite3_column_text(st, 9));
        copy(p->precision, sizeof p->precision, sqlite3_column_text(st, 10));
    }
    if (s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read scaling");
    sqlite3_finalize(st);
    return rc;
}

int db_measured_runs(db *d, int64_t record_id, db_measured *out, int max, int *n, st_err *err)
{
    *n = 0;
    int rc = record_id > 0 ? db__record_exists(d, record_id, "read", err) : ST_OK;
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    char sql[768];
    snprintf(sql, sizeof sql,
             "SELECT r.id, r.record_id, r.source, r.source_key, r.row_id, m.name, p.label,"
             " r.measured_step_s, r.predicted_step_s, r.simulated_step_s, %s FROM runs r"
             " LEFT JOIN models m ON m.id = r.model_id"
             " LEFT JOIN plans p ON p.id = r.plan_id"
             " WHERE r.measured_step_s IS NOT NULL AND (CASE WHEN ?1 > 0"
             "   THEN r.record_id = ?1"
             "   ELSE r.source = 'measured' OR r.record_id = (SELECT max(record_id)"
             "     FROM runs WHERE source = 'published') END)"
             " ORDER BY r.id",
             db__stack_cols(d));
    rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, record_id);
    int s = SQLITE_DONE;
    while (*n < max && (s = sqlite3_step(st)) == SQLITE_ROW) {
        db_measured *m = &out[(*n)++];
        memset(m, 0, sizeof *m);
        m->run_id = sqlite3_column_int64(st, 0);
        m->record_id = sqlite3_column_int64(st, 1);
        copy(m->source, sizeof m->source, sqlite3_column_text(st, 2));
        copy(m->source_key, sizeof m->source_key, sqlite3_column_text(st, 3));
        copy(m->row_id, sizeof m->row_id, sqlite3_column_text(st, 4));
        copy(m->model, sizeof m->model, sqlite3_column_text(st, 5));
        copy(m->layout, sizeof m->layout, sqlite3_column_text(st, 6));
        m->measured_s = sqlite3_column_double(st, 7);
        m->predicted_s = sqlite3_column_double(st, 8);
        m->simulated_s = sqlite3_column_double(st, 9);
        copy(m->framework, sizeof m->framework, sqlite3_column_text(st, 10));
        copy(m->precision, sizeof m->precision, sqlite3_column_text(st, 11));
    }
    if (*n < max && s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read runs");
    sqlite3_finalize(st);
    return rc;
}

int db_exec_runs(db *d, db_exec_run *out, int max, int *n, st_err *err)
{
    *n = 0;
    if (d->version < 4)
        return ST_OK; /* the executor's runs are recorded from version 4 */
    sqlite3_stmt *st = NULL;
    char sql[768];
    snprintf(sql, sizeof sql,
             "SELECT r.id, r.record_id, r.nranks, r.device, r.transport, %s, r.run_host, m.name,"
             " i.name, p.framework, r.measured_step_s, r.predicted_step_s,"
             " r.simulated_step_s FROM runs r"
             " LEFT JOIN models m ON m.id = r.model_id"
             " LEFT JOIN plans p ON p.id = r.plan_id"
             " LEFT JOIN instance_types i ON i.id = p.instance_type_id"
             " WHERE r.source = 'measured' AND r.status = 'ok' AND r.nranks IS NOT NULL"
             " AND r.measured_step_s > 0 ORDER BY r.id",
             d->version >= 5 ? "r.device_name" : "NULL");
    int rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    int s = SQLITE_DONE;
    while (*n < max && (s = sqlite3_step(st)) == SQLITE_ROW) {
        db_exec_run *r = &out[(*n)++];
        memset(r, 0, sizeof *r);
        r->run_id = sqlite3_column_int64(st, 0);
        r->record_id = sqlite3_column_int64(st, 1);
        r->ranks = sqlite3_column_int(st, 2);
        copy(r->device, sizeof r->device, sqlite3_column_text(st, 3));
        copy(r->transport, sizeof r->transport, sqlite3_column_text(st, 4));
        copy(r->device_name, sizeof r->device_name, sqlite3_column_text(st, 5));
        copy(r->run_host, sizeof r->run_host, sqlite3_column_text(st, 6));
        copy(r->model, sizeof r->model, sqlite3_column_text(st, 7));
        copy(r->instance_type, sizeof r->instance_type, sqlite3_column_text(st, 8));
        copy(r->framework, sizeof r->framework, sqlite3_column_text(st, 9));
        r->measured_s = sqlite3_column_double(st, 10);
        r->predicted_s = sqlite3_column_double(st, 11);
        r->simulated_s = sqlite3_column_double(st, 12);
    }
    if (*n < max && s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read runs");
    sqlite3_finalize(st);
    return rc;
}

/* ---- calibration ---- */

/* The parameters of calibration cid into g, matched by name; asked and
 * fitted come from them (a version-2 record numbered other parameters). */
static int read_cal_params(db *d, sqlite3_stmt *st, int64_t cid, plan_cal_group *g, st_err *err)
{
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, cid);
    int nc = sqlite3_column_count(st), s;
    g->asked = g->fitted = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int k = -1;
        for (int c = 0; c < nc && k < 0; c++)
            if (!strcmp(sqlite3_column_name(st, c), "name")) {
                const char *t = (const char *)sqlite3_column_text(st, c);
                for (int p = 0; t && p < PLAN_EFF__COUNT && k < 0; p++)
                    if (!strcmp(t, plan_eff_param_name((plan_eff_param)p)))
                        k = p;
            }
        if (k < 0)
            continue;
        for (int c = 0; c < nc; c++) {
            const char *name = sqlite3_column_name(st, c);
            if (sqlite3_column_type(st, c) == SQLITE_NULL)
                continue;
            double v = sqlite3_column_double(st, c);
            if (!strcmp(name, "before"))
                *plan_eff_ref(&g->before, (plan_eff_param)k) = v;
            else if (!strcmp(name, "after"))
                *plan_eff_ref(&g->after, (plan_eff_param)k) = v;
            else if (!strcmp(name, "std_err"))
                g->std_err[k] = v;
            else if (!strcmp(name, "asked") && sqlite3_column_int(st, c))
                g->asked |= 1u << k;
            else if (!strcmp(name, "fitted") && sqlite3_column_int(st, c))
                g->fitted |= 1u << k;
        }
    }
    if (s != SQLITE_DONE)
        return db__fail(d, s, err, "read calibration parameters");
    return ST_OK;
}

/* The totals of a report from its sources, as plan_calibrate computes them. */
static void cal_totals(plan_cal_report *r)
{
    double sum = 0, lsum = 0;
    int nl = 0;
    r->rows_used = 0;
    r->max_source_err_pct = r->loso_max_source_err_pct = 0;
    for (int s = 0; s < r->nsources; s++) {
        const plan_cal_source *src = &r->source[s];
        r->rows_used += src->rows;
        sum += src->mean_abs_err_pct;
        if (src->mean_abs_err_pct > r->max_source_err_pct)
            r->max_source_err_pct = src->mean_abs_err_pct;
        if (!isnan(src->loso_mean_abs_err_pct)) {
            lsum += src->loso_mean_abs_err_pct;
            nl++;
            if (src->loso_mean_abs_err_pct > r->loso_max_source_err_pct)
                r->loso_max_source_err_pct = src->loso_mean_abs_err_pct;
        }
    }
    r->mean_source_err_pct = r->nsources ? sum / r->nsources : 0;
    r->loso_mean_source_err_pct = nl ? lsum / nl : NAN;
    if (r->nsources == 0) /* a version-2 record: one fit per GPU type, rows apart */
        for (int g = 0; g < r->ngroups; g++)
            r->rows_used += r->group[g].rows;
}

int db_calibration(db *d, int64_t record_id, plan_cal_report *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = db__record_exists(d, record_id, "read", err);
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL, *pst = NULL;
    rc = db__prepare(d, "SELECT * FROM calibrations WHERE record_id = ?1 ORDER BY id", &st, err);
    if (rc == ST_OK) /* SELECT *: std_err exists from schema version 3 on */
        rc = db__prepare(d, "SELECT * FROM calibration_params WHERE calibration_id = ?1"
                            " ORDER BY param", &pst, err);
    if (rc != ST_OK)
        goto done;
    sqlite3_bind_int64(st, 1, record_id);
    int s = SQLITE_DONE;
    while (rc == ST_OK && out->ngroups < PLAN_CAL_GROUPS_MAX &&
           (s = sqlite3_step(st)) == SQLITE_ROW) {
        plan_cal_group *g = &out->group[out->ngroups++];
        for (int k = 0; k < PLAN_EFF__COUNT; k++) {
            *plan_eff_ref(&g->before, (plan_eff_param)k) = NAN;
            *plan_eff_ref(&g->after, (plan_eff_param)k) = NAN;
            g->std_err[k] = NAN;
        }
        db__read_fields(st, &db__calibration_fields, g);
        int64_t cid = sqlite3_column_int64(st, 0); /* calibrations.id is the first column */
        if (!g->silicon[0]) /* version 2: the GPU type fitted */
            for (int c = 0; c < sqlite3_column_count(st); c++)
                if (!strcmp(sqlite3_column_name(st, c), "gpu"))
                    copy(g->silicon, sizeof g->silicon, sqlite3_column_text(st, c));
        rc = read_cal_params(d, pst, cid, g, err);
    }
    if (rc == ST_OK && s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read calibrations");
    sqlite3_finalize(st);
    st = NULL;
    if (rc == ST_OK && out->ngroups == 0)
        rc = ST_RAISE(err, ST_ENOENT, "%s: record %lld holds no calibration (see smdplan history "
                      "--kind calibration)", d->path, (long long)record_id);
    /* the table exists from schema version 3 on (a reader does not migrate) */
    if (rc == ST_OK && d->version >= 3)
        rc = db__prepare(d, "SELECT * FROM calibration_sources WHERE record_id = ?1 ORDER BY id",
                         &st, err);
    if (rc == ST_OK && st) {
        sqlite3_bind_int64(st, 1, record_id);
        while (out->nsources < PLAN_VAL_SOURCES_MAX && (s = sqlite3_step(st)) == SQLITE_ROW) {
            plan_cal_source *src = &out->source[out->nsources++];
            src->mean_abs_err_pct = src->loso_mean_abs_err_pct = NAN;
            db__read_fields(st, &db__cal_source_fields, src);
        }
        if (s != SQLITE_ROW && s != SQLITE_DONE)
            rc = db__fail(d, s, err, "read calibration sources");
    }
    if (rc == ST_OK)
        cal_totals(out);
done:
    sqlite3_finalize(pst);
    sqlite3_finalize(st);
    return rc;
}

/* ---- bench ---- */

int db_bench_read(db *d, int64_t record_id, const char *host, plan_bench_cpu *cpu,
                  int *have_cpu, plan_bench_comm *comm, int *have_comm, int64_t *id,
                  st_err *err)
{
    if (have_cpu)
        *have_cpu = 0;
    if (have_comm)
        *have_comm = 0;
    if (d->version < 4)
        return ST_RAISE(err, ST_ENOENT, "%s: no bench records (schema version %d; smdplan bench "
                        "records from version 4)", d->path, d->version);
    int rc = record_id > 0 ? db__record_exists(d, record_id, "read bench", err) : ST_OK;
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = db__prepare(d,
                     "SELECT b.record_id, b.host, b.cpu_model, b.blas, b.cores, b.mem_bytes,"
                     " b.ranks, b.transport, b.threads_per_rank, b.device FROM bench_hosts b"
                     " WHERE (?1 > 0 AND b.record_id = ?1) OR (?1 <= 0 AND (?2 IS NULL OR"
                     " b.host = ?2)) ORDER BY b.record_id DESC LIMIT 1",
                     &st, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, record_id);
    if (host)
        sqlite3_bind_text(st, 2, host, -1, SQLITE_TRANSIENT);
    int s = sqlite3_step(st);
    if (s != SQLITE_ROW) {
        rc = s == SQLITE_DONE
                 ? (record_id > 0
                        ? ST_RAISE(err, ST_ENOENT, "%s: record %lld is not a bench record", d->path,
                                   (long long)record_id)
                        : ST_RAISE(err, ST_ENOENT, "%s: no bench record%s%s (run smdplan bench)",
                                   d->path, host ? " of host " : "", host ? host : ""))
                 : db__fail(d, s, err, "read bench");
        sqlite3_finalize(st);
        return rc;
    }
    int64_t rec = sqlite3_column_int64(st, 0);
    if (id)
        *id = rec;
    if (cpu) {
        memset(cpu, 0, sizeof *cpu);
        copy(cpu->host, sizeof cpu->host, sqlite3_column_text(st, 1));
        copy(cpu->cpu_model, sizeof cpu->cpu_model, sqlite3_column_text(st, 2));
        copy(cpu->blas, sizeof cpu->blas, sqlite3_column_text(st, 3));
        cpu->cores = sqlite3_column_int(st, 4);
        cpu->mem_bytes = sqlite3_column_double(st, 5);
        copy(cpu->device, sizeof cpu->device, sqlite3_column_text(st, 9));
    }
    if (comm) {
        memset(comm, 0, sizeof *comm);
        copy(comm->host, sizeof comm->host, sqlite3_column_text(st, 1));
        comm->ranks = sqlite3_column_int(st, 6);
        copy(comm->transport, sizeof comm->transport, sqlite3_column_text(st, 7));
        comm->threads_per_rank = sqlite3_column_int(st, 8);
    }
    sqlite3_finalize(st);
    st = NULL;

    if (cpu) {
        rc = db__prepare(d, "SELECT kind, threads, m, n, k, reps, time_s, achieved_flops,"
                            " layer_group FROM bench_gemm WHERE record_id = ?1 ORDER BY seq", &st,
                         err);
        if (rc == ST_OK)
            sqlite3_bind_int64(st, 1, rec);
        while (rc == ST_OK && (s = sqlite3_step(st)) == SQLITE_ROW &&
               cpu->ngemm < PLAN_BENCH_GEMM_MAX) {
            plan_bench_gemm *g = &cpu->gemm[cpu->ngemm++];
            copy(g->kind, sizeof g->kind, sqlite3_column_text(st, 0));
            g->threads = sqlite3_column_int(st, 1);
            g->m = sqlite3_column_int64(st, 2);
            g->n = sqlite3_column_int64(st, 3);
            g->k = sqlite3_column_int64(st, 4);
            g->reps = sqlite3_column_int(st, 5);
            g->time_s = sqlite3_column_double(st, 6);
            g->flops = sqlite3_column_double(st, 7);
            g->group = sqlite3_column_int(st, 8);
        }
        if (rc == ST_OK && s != SQLITE_ROW && s != SQLITE_DONE)
            rc = db__fail(d, s, err, "read bench_gemm");
        sqlite3_finalize(st);
        st = NULL;
        if (rc == ST_OK)
            rc = db__prepare(d, "SELECT op, threads, n, reps, time_s, elem_s FROM bench_elem"
                                " WHERE record_id = ?1 ORDER BY seq", &st, err);
        if (rc == ST_OK)
            sqlite3_bind_int64(st, 1, rec);
        while (rc == ST_OK && (s = sqlite3_step(st)) == SQLITE_ROW &&
               cpu->nelem < PLAN_BENCH_ELEM_MAX) {
            plan_bench_elem *e = &cpu->elem[cpu->nelem++];
            copy(e->op, sizeof e->op, sqlite3_column_text(st, 0));
            e->threads = sqlite3_column_int(st, 1);
            e->n = sqlite3_column_int64(st, 2);
            e->reps = sqlite3_column_int(st, 3);
            e->time_s = sqlite3_column_double(st, 4);
            e->elem_s = sqlite3_column_double(st, 5);
        }
        if (rc == ST_OK && s != SQLITE_ROW && s != SQLITE_DONE)
            rc = db__fail(d, s, err, "read bench_elem");
        sqlite3_finalize(st);
        st = NULL;
        if (rc == ST_OK)
            rc = db__prepare(d, "SELECT threads, array_bytes, reps, time_s, triad_bps FROM"
                                " bench_mem WHERE record_id = ?1 ORDER BY seq", &st, err);
        if (rc == ST_OK)
            sqlite3_bind_int64(st, 1, rec);
        while (rc == ST_OK && (s = sqlite3_step(st)) == SQLITE_ROW &&
               cpu->nmem < PLAN_BENCH_THREADS_MAX) {
            plan_bench_mem *m = &cpu->mem[cpu->nmem++];
            *m = (plan_bench_mem){sqlite3_column_int(st, 0), sqlite3_column_double(st, 1),
                                  sqlite3_column_int(st, 2), sqlite3_column_double(st, 3),
                                  sqlite3_column_double(st, 4)};
            /* the thread counts measured, as the triad rows list them */
            if (cpu->nthreads < PLAN_BENCH_THREADS_MAX)
                cpu->threads[cpu->nthreads++] = m->threads;
        }
        if (rc == ST_OK && s != SQLITE_ROW && s != SQLITE_DONE)
            rc = db__fail(d, s, err, "read bench_mem");
        sqlite3_finalize(st);
        st = NULL;
        if (rc == ST_OK && have_cpu)
            *have_cpu = cpu->ngemm > 0 || cpu->nmem > 0;
    }
    if (comm && rc == ST_OK) {
        rc = db__prepare(d, "SELECT op, ranks, bytes, iters, time_s, algbw_bps, busbw_bps FROM"
                            " bench_comm WHERE record_id = ?1 ORDER BY seq", &st, err);
        if (rc == ST_OK)
            sqlite3_bind_int64(st, 1, rec);
        while (rc == ST_OK && (s = sqlite3_step(st)) == SQLITE_ROW && comm->n < PLAN_BENCH_COLL_MAX) {
            plan_bench_coll *c = &comm->v[comm->n++];
            memset(c, 0, sizeof *c);
            copy(c->op, sizeof c->op, sqlite3_column_text(st, 0));
            c->ranks = sqlite3_column_int(st, 1);
            c->bytes = sqlite3_column_double(st, 2);
            c->iters = sqlite3_column_int(st, 3);
            c->time_s = sqlite3_column_double(st, 4);
            c->algbw_bps = sqlite3_column_double(st, 5);
            c->busbw_bps = sqlite3_column_double(st, 6);
        }
        if (rc == ST_OK && s != SQLITE_ROW && s != SQLITE_DONE)
            rc = db__fail(d, s, err, "read bench_comm");
        sqlite3_finalize(st);
        if (rc == ST_OK && have_comm)
            *have_comm = comm->n > 0;
    }
    return rc;
}
