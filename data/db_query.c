/*
 * db_query.c: reading records back: history, one record in full (as JSON),
 * the prediction / simulation / measurement comparison, and a read-only
 * SELECT for reports/.
 *
 * `compare` joins on plans.match_key (model shape, cluster, every layout
 * member): for each key it takes the latest prediction (predictions.step_s),
 * the latest simulated step (plans.simulated_step_s, set by simulate, by
 * plan for its simulated top plans and by validate --sim) and the latest
 * measured step (runs.measured_step_s, published or measured), wherever
 * they were recorded.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/db_int.h"

const char *const db_kinds[] = {"plan", "simulation", "run", "calibration", "bench", NULL};

int db_kind_valid(const char *kind)
{
    for (int i = 0; kind && db_kinds[i]; i++)
        if (strcmp(kind, db_kinds[i]) == 0)
            return 1;
    return 0;
}

static int check_kind(db *d, const char *kind, st_err *err)
{
    if (!kind || db_kind_valid(kind))
        return ST_OK;
    return ST_RAISE(err, ST_EINVAL, "unknown record kind '%s'; allowed: plan, simulation, run, "
                    "calibration, bench", kind);
}

static void copy(char *dst, size_t n, const unsigned char *src)
{
    snprintf(dst, n, "%s", src ? (const char *)src : "");
}

int db_history(db *d, const char *kind, db_summary *out, int max, int *n, st_err *err)
{
    *n = 0;
    int rc = check_kind(d, kind, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = db__prepare(d,
                     "SELECT id, kind, created_at, summary, command_line FROM records "
                     "WHERE ?1 IS NULL OR kind = ?1 ORDER BY id DESC LIMIT ?2",
                     &st, err);
    if (rc != ST_OK)
        return rc;
    if (kind)
        sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, max > 0 ? max : 0);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW && *n < max) {
        db_summary *o = &out[(*n)++];
        o->id = sqlite3_column_int64(st, 0);
        copy(o->kind, sizeof o->kind, sqlite3_column_text(st, 1));
        copy(o->created_at, sizeof o->created_at, sqlite3_column_text(st, 2));
        copy(o->summary, sizeof o->summary, sqlite3_column_text(st, 3));
        const unsigned char *cl = sqlite3_column_text(st, 4);
        copy(o->command_line, sizeof o->command_line, cl);
        if (cl && strlen((const char *)cl) >= sizeof o->command_line)
            memcpy(o->command_line + sizeof o->command_line - 4, "...", 4);
    }
    if (s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "history");
    sqlite3_finalize(st);
    return rc;
}

int db_count(db *d, const char *kind, int64_t *n, st_err *err)
{
    *n = 0;
    int rc = check_kind(d, kind, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = db__prepare(d, "SELECT count(*) FROM records WHERE ?1 IS NULL OR kind = ?1", &st, err);
    if (rc != ST_OK)
        return rc;
    if (kind)
        sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    else
        rc = db__fail(d, s, err, "count");
    sqlite3_finalize(st);
    return rc;
}

/* ---- show ---- */

/* A row as an object keyed by column names. Columns named *_json hold JSON
 * text and come back parsed, under the name without the suffix; skip (if
 * non-NULL) names a column left out. */
static cJSON *row_object(sqlite3_stmt *st, const char *skip)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int nc = sqlite3_column_count(st);
    for (int i = 0; i < nc; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (skip && strcmp(name, skip) == 0)
            continue;
        size_t len = strlen(name);
        cJSON *v = NULL;
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER: v = cJSON_CreateNumber((double)sqlite3_column_int64(st, i)); break;
        case SQLITE_FLOAT: v = cJSON_CreateNumber(sqlite3_column_double(st, i)); break;
        case SQLITE_NULL: v = cJSON_CreateNull(); break;
        default: {
            const char *t = (const char *)sqlite3_column_text(st, i);
            if (len > 5 && strcmp(name + len - 5, "_json") == 0 && t) {
                char key[64];
                snprintf(key, sizeof key, "%.*s", (int)(len - 5), name);
                cJSON *parsed = cJSON_Parse(t);
                cJSON_AddItemToObject(o, key, parsed ? parsed : cJSON_CreateString(t));
                continue;
            }
            v = cJSON_CreateString(t ? t : "");
        }
        }
        cJSON_AddItemToObject(o, name, v);
    }
    return o;
}

/* Every row of sql (one int64 parameter) as an array of objects. */
static int rows_json(db *d, const char *sql, int64_t param, const char *skip, cJSON **out,
                     st_err *err)
{
    *out = NULL;
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, param);
    cJSON *arr = cJSON_CreateArray();
    int s = SQLITE_DONE;
    while (arr && (s = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *o = row_object(st, skip);
        if (!o)
            break;
        cJSON_AddItemToArray(arr, o);
    }
    if (!arr)
        rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", d->path);
    else if (s != SQLITE_DONE)
        rc = s == SQLITE_ROW ? ST_RAISE(err, ST_ENOMEM, "%s: out of memory", d->path)
                             : db__fail(d, s, err, "read");
    sqlite3_finalize(st);
    if (rc != ST_OK) {
        cJSON_Delete(arr);
        return rc;
    }
    *out = arr;
    return ST_OK;
}

/* Attach the rows of sql (parameter: the id of obj) to obj as key; an
 * empty result is left out. */
static int attach(db *d, cJSON *obj, const char *key, const char *sql, const char *skip,
                  st_err *err)
{
    cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
    cJSON *arr = NULL;
    int rc = rows_json(d, sql, id ? (int64_t)id->valuedouble : 0, skip, &arr, err);
    if (rc != ST_OK)
        return rc;
    if (cJSON_GetArraySize(arr) > 0)
        cJSON_AddItemToObject(obj, key, arr);
    else
        cJSON_Delete(arr);
    return ST_OK;
}

/* Attach the single row of sql as an object. */
static int attach_one(db *d, cJSON *obj, const char *key, const char *sql, int64_t param,
                      const char *skip, st_err *err)
{
    cJSON *arr = NULL;
    int rc = rows_json(d, sql, param, skip, &arr, err);
    if (rc != ST_OK)
        return rc;
    if (cJSON_GetArraySize(arr) > 0)
        cJSON_AddItemToObject(obj, key, cJSON_DetachItemFromArray(arr, 0));
    cJSON_Delete(arr);
    return ST_OK;
}

static const char *const prov_cols[] = {"command_line", "tool_version", "git_rev",
                                        "build_features", "library_versions", "host", NULL};

int db_show(db *d, int64_t id, cJSON **out, st_err *err)
{
    *out = NULL;
    cJSON *arr = NULL, *rec = NULL, *list = NULL;
    int rc = rows_json(d, "SELECT * FROM records WHERE id = ?1", id, NULL, &arr, err);
    if (rc != ST_OK)
        return rc;
    if (cJSON_GetArraySize(arr) == 0) {
        cJSON_Delete(arr);
        return ST_RAISE(err, ST_ENOENT, "%s: no record %lld (see smdplan history)", d->path,
                        (long long)id);
    }
    rec = cJSON_DetachItemFromArray(arr, 0);
    cJSON_Delete(arr);
    cJSON *prov = cJSON_CreateObject();
    for (int i = 0; prov_cols[i]; i++)
        cJSON_AddItemToObject(prov, prov_cols[i], cJSON_DetachItemFromObject(rec, prov_cols[i]));
    cJSON_AddItemToObject(rec, "provenance", prov);

    const char *skip = "record_id";
    rc = attach(d, rec, "models", "SELECT * FROM models WHERE record_id = ?1 ORDER BY id", skip, err);
    if (rc == ST_OK)
        rc = attach(d, rec, "instance_types",
                    "SELECT * FROM instance_types WHERE record_id = ?1 ORDER BY id", skip, err);
    if (rc == ST_OK)
        rc = attach_one(d, rec, "search", "SELECT * FROM searches WHERE record_id = ?1", id, skip,
                        err);
    if (rc == ST_OK)
        rc = rows_json(d, "SELECT * FROM plans WHERE record_id = ?1 ORDER BY id", id, skip, &list,
                       err);
    for (cJSON *p = list ? list->child : NULL; rc == ST_OK && p; p = p->next) {
        cJSON *pid = cJSON_GetObjectItemCaseSensitive(p, "id");
        rc = attach_one(d, p, "prediction", "SELECT * FROM predictions WHERE plan_id = ?1",
                        (int64_t)pid->valuedouble, skip, err);
        cJSON *pred = cJSON_GetObjectItemCaseSensitive(p, "prediction");
        if (rc == ST_OK && pred) {
            cJSON_DeleteItemFromObject(pred, "plan_id");
            /* SELECT *: the terms' columns exist from schema version 2 on */
            rc = attach(d, pred, "stages",
                        "SELECT * FROM prediction_stages WHERE prediction_id = ?1 ORDER BY stage",
                        "prediction_id", err);
        }
    }
    if (rc == ST_OK && cJSON_GetArraySize(list) > 0) {
        cJSON_AddItemToObject(rec, "plans", list);
        list = NULL;
    }
    cJSON_Delete(list);
    list = NULL;

    if (rc == ST_OK)
        rc = rows_json(d, "SELECT * FROM simulations WHERE record_id = ?1 ORDER BY id", id, skip,
                       &list, err);
    for (cJSON *s = list ? list->child : NULL; rc == ST_OK && s; s = s->next) {
        rc = attach(d, s, "stages",
                    "SELECT * FROM sim_stages WHERE simulation_id = ?1 ORDER BY stage",
                    "simulation_id", err);
        if (rc == ST_OK)
            rc = attach(d, s, "trace",
                        "SELECT * FROM sim_trace WHERE simulation_id = ?1 ORDER BY seq",
                        "simulation_id", err);
    }
    if (rc == ST_OK && cJSON_GetArraySize(list) > 0) {
        cJSON_AddItemToObject(rec, "simulations", list);
        list = NULL;
    }
    cJSON_Delete(list);
    list = NULL;

    if (rc == ST_OK)
        rc = rows_json(d, "SELECT * FROM runs WHERE record_id = ?1 ORDER BY id", id, skip, &list,
                       err);
    for (cJSON *r = list ? list->child : NULL; rc == ST_OK && r; r = r->next) {
        rc = attach(d, r, "steps", "SELECT * FROM run_steps WHERE run_id = ?1 ORDER BY step",
                    "run_id", err);
        if (rc == ST_OK)
            rc = attach(d, r, "ranks", "SELECT * FROM run_ranks WHERE run_id = ?1 ORDER BY rank",
                        "run_id", err);
    }
    if (rc == ST_OK && cJSON_GetArraySize(list) > 0) {
        cJSON_AddItemToObject(rec, "runs", list);
        list = NULL;
    }
    cJSON_Delete(list);
    list = NULL;

    if (rc == ST_OK)
        rc = rows_json(d, "SELECT * FROM calibrations WHERE record_id = ?1 ORDER BY id", id, skip,
                       &list, err);
    /* SELECT *: std_err exists from schema version 3 on */
    for (cJSON *c = list ? list->child : NULL; rc == ST_OK && c; c = c->next)
        rc = attach(d, c, "params",
                    "SELECT * FROM calibration_params WHERE calibration_id = ?1 ORDER BY param",
                    "calibration_id", err);
    if (rc == ST_OK && cJSON_GetArraySize(list) > 0) {
        cJSON_AddItemToObject(rec, "calibrations", list);
        list = NULL;
    }
    cJSON_Delete(list);
    list = NULL;

    /* the table exists from schema version 3 on (a reader does not migrate) */
    if (rc == ST_OK && d->version >= 3)
        rc = attach(d, rec, "calibration_sources",
                    "SELECT * FROM calibration_sources WHERE record_id = ?1 ORDER BY id", skip,
                    err);

    /* the bench tables exist from schema version 4 on */
    if (rc == ST_OK && d->version >= 4)
        rc = attach_one(d, rec, "bench", "SELECT * FROM bench_hosts WHERE record_id = ?1", id,
                        skip, err);
    cJSON *bench = cJSON_GetObjectItemCaseSensitive(rec, "bench");
    if (rc == ST_OK && bench) {
        static const char *const tables[][2] = {
            {"gemm", "SELECT * FROM bench_gemm WHERE record_id = ?1 ORDER BY seq"},
            {"elem", "SELECT * FROM bench_elem WHERE record_id = ?1 ORDER BY seq"},
            {"mem", "SELECT * FROM bench_mem WHERE record_id = ?1 ORDER BY seq"},
            {"comm", "SELECT * FROM bench_comm WHERE record_id = ?1 ORDER BY seq"},
        };
        for (size_t i = 0; rc == ST_OK && i < sizeof tables / sizeof tables[0]; i++) {
            cJSON *rows = NULL;
            rc = rows_json(d, tables[i][1], id, skip, &rows, err);
            if (rc == ST_OK && cJSON_GetArraySize(rows) > 0)
                cJSON_AddItemToObject(bench, tables[i][0], rows);
            else
                cJSON_Delete(rows);
        }
    }

    if (rc != ST_OK) {
        cJSON_Delete(rec);
        return rc;
    }
    *out = rec;
    return ST_OK;
}

/* ---- compare ---- */

static int contains_ci(const char *hay, const char *needle)
{
    if (!needle || !*needle)
        return 1;
    if (!hay)
        return 0;
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

typedef struct group {
    db_compare_row row;
    int64_t latest;              /* newest plan id of the key */
    int selected;                /* one of its plans is in the record filter */
} group;

static int cmp_latest(const void *a, const void *b)
{
    const group *x = a, *y = b;
    return x->latest < y->latest ? 1 : x->latest > y->latest ? -1 : 0;
}

static int figures(const db_compare_row *r)
{
    return (r->predicted_s > 0) + (r->simulated_s > 0) + (r->measured_s > 0);
}

int db__record_exists(db *d, int64_t id, const char *what, st_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, "SELECT 1 FROM records WHERE id = ?1", &st, err);
    if (rc != ST_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int s = sqlite3_step(st);
    if (s == SQLITE_DONE)
        rc = ST_RAISE(err, ST_ENOENT, "%s: no record %lld (see smdplan history)", d->path,
                      (long long)id);
    else if (s != SQLITE_ROW)
        rc = db__fail(d, s, err, what);
    sqlite3_finalize(st);
    return rc;
}

int db_compare(db *d, const db_compare_filter *f, db_compare_row *out, int max, int *n,
               st_err *err)
{
    *n = 0;
    db_compare_filter none;
    memset(&none, 0, sizeof none);
    if (!f)
        f = &none;
    int need = f->min_figures > 0 ? f->min_figures : 2;
    int rc = ST_OK;
    for (int i = 0; i < f->nrecords && rc == ST_OK; i++)
        rc = db__record_exists(d, f->records[i], "compare", err);
    if (rc != ST_OK)
        return rc;

    sqlite3_stmt *st = NULL;
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT p.id, p.record_id, p.match_key, p.nodes, p.gpus, p.label,"
             " p.simulated_step_s, m.name, m.params, i.name, pr.step_s,"
             " r.measured_step_s, r.source, r.record_id, %s"
             " FROM plans p"
             " LEFT JOIN models m ON m.id = p.model_id"
             " LEFT JOIN instance_types i ON i.id = p.instance_type_id"
             " LEFT JOIN predictions pr ON pr.plan_id = p.id"
             " LEFT JOIN runs r ON r.id = (SELECT max(id) FROM runs"
             "   WHERE plan_id = p.id AND measured_step_s IS NOT NULL)"
             " WHERE p.role <> 'grid'" /* the grid's layouts are predictions only */
             " ORDER BY p.match_key, p.id DESC",
             db__stack_cols(d));
    rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    int cap = 64, ng = 0;
    group *g = malloc((size_t)cap * sizeof *g);
    if (!g) {
        sqlite3_finalize(st);
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", d->path);
    }
    char key[1024] = "";
    group *cur = NULL;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 2);
        int64_t pid = sqlite3_column_int64(st, 0), rec = sqlite3_column_int64(st, 1);
        if (!cur || strcmp(k ? k : "", key) != 0) {
            if (ng == cap) {
                group *bigger = realloc(g, (size_t)cap * 2 * sizeof *g);
                if (!bigger) {
                    rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", d->path);
                    break;
                }
                g = bigger;
                cap *= 2;
            }
            cur = &g[ng++];
            memset(cur, 0, sizeof *cur);
            snprintf(key, sizeof key, "%s", k ? k : "");
            cur->latest = pid; /* rows of a key come newest first */
            db_compare_row *r = &cur->row;
            r->nodes = sqlite3_column_int(st, 3);
            r->gpus = sqlite3_column_int(st, 4);
            copy(r->layout, sizeof r->layout, sqlite3_column_text(st, 5));
            copy(r->model, sizeof r->model, sqlite3_column_text(st, 7));
            r->params = sqlite3_column_int64(st, 8);
            copy(r->instance_type, sizeof r->instance_type, sqlite3_column_text(st, 9));
            copy(r->framework, sizeof r->framework, sqlite3_column_text(st, 14));
            copy(r->precision, sizeof r->precision, sqlite3_column_text(st, 15));
        }
        db_compare_row *r = &cur->row;
        for (int i = 0; i < f->nrecords; i++)
            if (f->records[i] == rec)
                cur->selected = 1;
        if (!(r->simulated_s > 0) && sqlite3_column_type(st, 6) != SQLITE_NULL) {
            r->simulated_s = sqlite3_column_double(st, 6);
            r->simulated_id = rec;
        }
        if (!(r->predicted_s > 0) && sqlite3_column_type(st, 10) != SQLITE_NULL) {
            r->predicted_s = sqlite3_column_double(st, 10);
            r->predicted_id = rec;
        }
        if (!(r->measured_s > 0) && sqlite3_column_type(st, 11) != SQLITE_NULL) {
            r->measured_s = sqlite3_column_double(st, 11);
            copy(r->measured_source, sizeof r->measured_source, sqlite3_column_text(st, 12));
            r->measured_id = sqlite3_column_int64(st, 13);
        }
    }
    if (rc == ST_OK && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "compare");
    sqlite3_finalize(st);
    if (rc != ST_OK) {
        free(g);
        return rc;
    }
    int kept = 0;
    for (int i = 0; i < ng; i++) {
        const db_compare_row *r = &g[i].row;
        if (figures(r) < need || (f->nrecords > 0 && !g[i].selected) ||
            !contains_ci(r->model, f->model) || !contains_ci(r->instance_type, f->instance_type))
            continue;
        g[kept++] = g[i];
    }
    qsort(g, (size_t)kept, sizeof *g, cmp_latest);
    for (int i = 0; i < kept && i < max; i++)
        out[(*n)++] = g[i].row;
    free(g);
    return ST_OK;
}

/* ---- read-only SELECT ---- */

#define SELECT_MAX_COLS 256

int db_select(db *d, const char *sql, const char *const *params, int nparams, db_row_fn fn,
              void *ctx, st_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    int nc = sqlite3_column_count(st);
    if (!sqlite3_stmt_readonly(st) || nc == 0) {
        sqlite3_finalize(st);
        return ST_RAISE(err, ST_EINVAL, "%s: only a read-only SELECT may run here", d->path);
    }
    if (nc > SELECT_MAX_COLS) {
        sqlite3_finalize(st);
        return ST_RAISE(err, ST_EINVAL, "%s: %d columns; at most %d", d->path, nc, SELECT_MAX_COLS);
    }
    for (int i = 0; i < nparams; i++) {
        int b = params[i] ? sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_TRANSIENT)
                          : sqlite3_bind_null(st, i + 1);
        if (b != SQLITE_OK) {
            rc = db__fail(d, b, err, "bind");
            sqlite3_finalize(st);
            return rc;
        }
    }
    const char *names[SELECT_MAX_COLS];
    db_value vals[SELECT_MAX_COLS];
    for (int i = 0; i < nc; i++)
        names[i] = sqlite3_column_name(st, i);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < nc; i++) {
            int t = sqlite3_column_type(st, i);
            vals[i].is_null = t == SQLITE_NULL;
            vals[i].num = t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, i)
                                                                    : 0.0;
            const unsigned char *txt = sqlite3_column_text(st, i);
            vals[i].text = txt ? (const char *)txt : "";
        }
        if (fn(ctx, nc, names, vals) != 0) {
            s = SQLITE_DONE;
            break;
        }
    }
    if (s != SQLITE_DONE)
        rc = db__fail(d, s, err, "select");
    sqlite3_finalize(st);
    return rc;
}
