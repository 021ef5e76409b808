/*
 * data_diff.c: the records and JSON side of `smdplan diff` (data_diff.h):
 * a recorded plan read back with its model and its step's error band, and
 * the two sides as one JSON document.
 */
#include "data/data_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/data.h"
#include "data/data_band_plan.h"
#include "data/data_json.h"
#include "data/data_plan_json.h"
#include "data/db.h"

#define DIFF_PLANS_MAX 64 /* plans of a record read: a search keeps top, grid and more */

/* The band of the stack of p's layout on its cluster's chip, as the
 * shipped catalog names the instance type. */
static void band_of(const db_plan *p, plan_diff_plan *out)
{
    st_err err = {0};
    plan_catalog cat = {0};
    plan_cluster c;
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%s", p->nodes, p->instance_type);
    if (data_catalog_load(NULL, &cat, &err) == ST_OK &&
        plan_cluster_parse(&cat, spec, &c, &err) == ST_OK)
        out->band_pct = data_band_of_plan(&c, out->layout.framework, out->band_basis,
                                          sizeof out->band_basis);
    else
        snprintf(out->band_basis, sizeof out->band_basis, "no band: %s is not in the "
                 "catalog", p->instance_type);
    plan_catalog_free(&cat);
}

int data_diff_plan_read(const char *path, int64_t id, long rank, plan_diff_plan *out,
                        st_err *err)
{
    db *d = NULL;
    db_plan *pl = calloc(DIFF_PLANS_MAX, sizeof *pl);
    plan_model m;
    int np = 0, rc = pl ? ST_OK : ST_RAISE(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK)
        rc = db_open(path, DB_OPEN_READ, &d, err);
    if (rc == ST_OK)
        rc = db_plans(d, id, pl, DIFF_PLANS_MAX, &np, err);
    if (rc == ST_OK)
        rc = db_model(d, id, &m, err);
    const db_plan *p = NULL;
    for (int i = 0; rc == ST_OK && i < np && !p; i++)
        if (!strcmp(pl[i].role, "top") && pl[i].rank == rank)
            p = &pl[i];
    if (rc == ST_OK && (!p || !p->have_est))
        rc = ST_RAISE(err, ST_EINVAL, "diff: record %lld has no plan of rank %ld with its "
                      "prediction (smdplan show %lld)", (long long)id, rank, (long long)id);
    if (rc == ST_OK) {
        out->layout = p->layout;
        out->est = p->est;
        snprintf(out->name, sizeof out->name, "%lld:%ld", (long long)id, rank);
        snprintf(out->model, sizeof out->model, "%s", m.name);
        snprintf(out->cluster, sizeof out->cluster, "%d x %s", p->nodes, p->instance_type);
        band_of(p, out);
    }
    db_close(d);
    free(pl);
    return rc;
}

static cJSON *side_json(const plan_diff_plan *s)
{
    const data_json_member head[] = {
        DATA_JSON_STR("name", s->name), DATA_JSON_STR("model", s->model),
        DATA_JSON_STR("cluster", s->cluster), DATA_JSON_BOOL("fits", !s->oom),
    };
    const data_json_member band[] = {
        DATA_JSON_NUM("step_band_pct", s->band_pct), DATA_JSON_STR("band_basis", s->band_basis),
    };
    cJSON *o = cJSON_CreateObject();
    data_json_add(o, head, sizeof head / sizeof head[0]);
    cJSON_AddItemToObject(o, "plan", data_json_plan(&(plan_candidate){s->layout, s->est}));
    data_json_add(o, band, sizeof band / sizeof band[0]);
    return o;
}

cJSON *data_diff_json(const plan_diff_plan *a, const plan_diff_plan *b)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "a", side_json(a));
    cJSON_AddItemToObject(o, "b", side_json(b));
    cJSON_AddNumberToObject(o, "step_difference_s", b->est.time.step_s - a->est.time.step_s);
    plan_diff_side sa = plan_diff_plan_side(a), sb = plan_diff_plan_side(b);
    cJSON_AddBoolToObject(o, "within_error_bands", plan_diff_within_bands(&sa, &sb));
    return o;
}
