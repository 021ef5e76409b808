/*
 * data_validate_json.c: `smdplan validate --json` (data_validate_json.h):
 * the rows, the per-source statistics and the summary as one JSON object.
 *
 * Numbers are the planner's own (seconds, bytes, percentages); a byte count
 * is written as a whole number (the planner's terms are products of
 * fractions: 0.8 GiB of CUDA context is 858993459.2 bytes), a figure that
 * was not compared or is not finite as null. A row id that is a plain
 * number is written as one.
 */
#include "data/data_validate_json.h"

#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "data/data_json.h"
#include "planner/plan_fields.h"
#include "planner/plan_validate_goal.h"

static void add_row_id(cJSON *o, const char *id)
{
    char *end;
    long v = strtol(id, &end, 10);
    if (id[0] && *end == '\0' && id[0] != '-' && id[0] != '+')
        cJSON_AddNumberToObject(o, "row_id", (double)v);
    else
        cJSON_AddStringToObject(o, "row_id", id);
}

static void add_num_or_null(cJSON *o, const char *k, int have, double v)
{
    if (have && isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_prediction(cJSON *o, const plan_validate_result *r)
{
    cJSON_AddStringToObject(o, "instance_type", r->instance);
    cJSON_AddNumberToObject(o, "gpus", r->gpus);
    data_json_fields(o, &plan_layout_fields, &r->layout);
    cJSON_AddBoolToObject(o, "micro_batch_searched", r->micro_batch_searched);
    cJSON_AddNumberToObject(o, "predicted_iteration_time_s", r->pred_time_s);
    const plan_time *t = &r->est.time;
    const data_json_member times[] = {
        DATA_JSON_NUM("compute", t->compute_s), DATA_JSON_NUM("tp_comm", t->tp_comm_s),
        DATA_JSON_NUM("cp_comm", t->cp_comm_s), DATA_JSON_NUM("pp_comm", t->pp_comm_s),
        DATA_JSON_NUM("dp_exposed", t->dp_exposed_s), DATA_JSON_NUM("bubble", t->bubble_s),
        DATA_JSON_NUM("optimizer", t->optimizer_s),
    };
    const data_json_member compute[] = {
        DATA_JSON_NUM("gemm", r->est.compute.gemm_s),
        DATA_JSON_NUM("attention", r->est.compute.attn_s),
        DATA_JSON_NUM("elementwise", r->est.compute.elem_s),
        DATA_JSON_NUM("host", r->est.compute.host_s),
    };
    data_json_add(cJSON_AddObjectToObject(o, "predicted_time_s"), times,
                  sizeof times / sizeof times[0]);
    data_json_add(cJSON_AddObjectToObject(o, "predicted_compute_s"), compute,
                  sizeof compute / sizeof compute[0]);
}

cJSON *data_validate_row_json(const plan_validate_result *r, double sim_s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_row_id(o, r->row_id);
    cJSON_AddStringToObject(o, "source_key", r->source_key);
    if (!r->compared)
        cJSON_AddStringToObject(o, "reason", r->reason);
    if (sim_s > 0 && r->compared)
        cJSON_AddNumberToObject(o, "simulated_iteration_time_s", sim_s);
    /* the model as every output writes it (its field table), not its name
     * alone under the same key */
    if (r->have_model)
        cJSON_AddItemToObject(o, "model", data_json_model(&r->model));
    if (r->have_layout)
        add_prediction(o, r);
    if (r->compared) {
        cJSON_AddNumberToObject(o, "reference_iteration_time_s", r->ref_time_s);
        cJSON_AddStringToObject(o, "reference_basis", plan_validate_basis_name(r->basis));
        cJSON_AddNumberToObject(o, "error_pct", r->error_pct);
        cJSON_AddBoolToObject(o, "scored", plan_validate_scored(r));
    }
    if (r->have_layout) {
        cJSON_AddItemToObject(o, "predicted_memory_per_gpu_bytes", data_json_bytes(r->pred_mem_bytes));
        cJSON_AddItemToObject(o, "reference_memory_per_gpu_bytes",
                              r->have_mem ? data_json_bytes(r->ref_mem_bytes) : cJSON_CreateNull());
        add_num_or_null(o, "memory_error_pct", r->have_mem, r->mem_error_pct);
        cJSON_AddBoolToObject(o, "predicted_oom", r->pred_oom);
        cJSON_AddBoolToObject(o, "reference_oom", r->ref_oom);
    }
    if (r->notes[0])
        cJSON_AddStringToObject(o, "notes", r->notes);
    return o;
}

cJSON *data_validate_stats_json(const plan_validate_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (s->source_key[0])
        cJSON_AddStringToObject(o, "source_key", s->source_key);
    cJSON_AddNumberToObject(o, "rows", s->rows);
    cJSON_AddNumberToObject(o, "rows_compared", s->compared);
    add_num_or_null(o, "mean_abs_error_pct", s->compared, s->mean_abs_error_pct);
    add_num_or_null(o, "max_abs_error_pct", s->compared, s->max_abs_error_pct);
    add_num_or_null(o, "mean_error_pct", s->compared, s->mean_error_pct);
    cJSON_AddNumberToObject(o, "memory_rows_compared", s->mem_compared);
    add_num_or_null(o, "memory_mean_abs_error_pct", s->mem_compared, s->mem_mean_abs_error_pct);
    add_num_or_null(o, "memory_max_abs_error_pct", s->mem_compared, s->mem_max_abs_error_pct);
    cJSON_AddNumberToObject(o, "oom_reference", s->oom_reference);
    cJSON_AddNumberToObject(o, "oom_agreed", s->oom_agreed);
    cJSON_AddNumberToObject(o, "predicted_oom_of_runs_that_ran", s->pred_oom_of_ran);
    cJSON_AddNumberToObject(o, "rows_scored_predicted_oom", s->oom_timed);
    add_num_or_null(o, "predicted_oom_mean_abs_error_pct", s->oom_timed,
                    s->oom_timed_mean_abs_error_pct);
    cJSON_AddNumberToObject(o, "fit_or_oom_checked", s->fit_checked);
    cJSON_AddNumberToObject(o, "fit_or_oom_agreed", s->fit_agreed);
    if (s->sim_compared) {
        cJSON_AddNumberToObject(o, "simulated_mean_abs_error_pct", s->sim_mean_abs_error_pct);
        cJSON_AddNumberToObject(o, "simulated_max_abs_error_pct", s->sim_max_abs_error_pct);
    }
    return o;
}

int data_validate_json_write(FILE *f, const char *file, const plan_validate_result *v,
                             const double *sim_s, int n, const plan_validate_summary *s,
                             st_err *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return ST_RAISE(err, ST_ENOMEM, "out of memory writing JSON");
    cJSON_AddStringToObject(root, "file", file);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(rows, data_validate_row_json(&v[i], sim_s ? sim_s[i] : 0.0));
    add_num_or_null(root, "mean_abs_error_pct", s->all.compared, s->all.mean_abs_error_pct);
    add_num_or_null(root, "max_abs_error_pct", s->all.compared, s->all.max_abs_error_pct);
    cJSON_AddNumberToObject(root, "rows_compared", s->all.compared);
    cJSON_AddNumberToObject(root, "rows_skipped", s->all.rows - s->all.compared);
    cJSON_AddNumberToObject(root, "goal_mean_abs_error_pct", PLAN_VAL_GOAL_MEAN_SOURCE_PCT);
    cJSON *src = cJSON_AddArrayToObject(root, "sources");
    for (int k = 0; k < s->nsources; k++)
        cJSON_AddItemToArray(src, data_validate_stats_json(&s->source[k]));
    cJSON_AddItemToObject(root, "all", data_validate_stats_json(&s->all));
    cJSON_AddNumberToObject(root, "mean_source_abs_error_pct", s->mean_source_pct);
    cJSON_AddNumberToObject(root, "max_source_abs_error_pct", s->max_source_pct);
    if (s->all.sim_compared) {
        cJSON_AddNumberToObject(root, "simulated_mean_source_abs_error_pct",
                                s->sim_mean_source_pct);
        cJSON_AddNumberToObject(root, "simulated_max_source_abs_error_pct", s->sim_max_source_pct);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return ST_RAISE(err, ST_ENOMEM, "out of memory writing JSON");
    fprintf(f, "%s\n", text);
    cJSON_free(text);
    return ST_OK;
}
