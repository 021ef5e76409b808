/*
 * cli_json.c: `smdplan --json`: the resolved model and cluster and the
 * ranked plans, with stable field names (units in the names).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "data/data_json.h"
#include "planner/plan_fields.h"
#include "planner/plan_framework.h"
#include "smd_config.h"

static void add_bytes(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, data_json_bytes(v));
}

static cJSON *cluster_json(const plan_cluster *c)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "instance_type", c->inst->name);
    cJSON_AddNumberToObject(j, "instances", c->nodes);
    cJSON_AddNumberToObject(j, "gpus", c->gpus);
    cJSON_AddNumberToObject(j, "gpus_per_instance", c->inst->gpus_per_node);
    cJSON_AddStringToObject(j, "gpu", c->gpu->name);
    add_bytes(j, "gpu_memory_bytes", c->gpu->mem_bytes);
    cJSON_AddNumberToObject(j, "gpu_peak_flops", c->gpu->peak_flops);
    if (c->inst->price_per_hour > 0)
        cJSON_AddNumberToObject(j, "price_per_hour", c->inst->price_per_hour * c->nodes);
    else
        cJSON_AddNullToObject(j, "price_per_hour");
    cJSON_AddStringToObject(j, "price_list", cli_price_list());
    return j;
}

static cJSON *mem_json(const plan_mem *m)
{
    cJSON *j = cJSON_CreateObject();
    add_bytes(j, "total", m->total_bytes);
    add_bytes(j, "weights", m->weights_bytes);
    add_bytes(j, "gradients", m->grads_bytes);
    add_bytes(j, "optimizer", m->optimizer_bytes);
    add_bytes(j, "activations", m->activations_bytes);
    add_bytes(j, "recompute_working_set", m->recompute_bytes);
    add_bytes(j, "logits", m->logits_bytes);
    add_bytes(j, "comm_buffers", m->comm_buffers_bytes);
    add_bytes(j, "cuda_context", m->context_bytes);
    add_bytes(j, "allocator", m->allocator_bytes);
    return j;
}

static cJSON *time_json(const plan_time *t)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "total", t->step_s);
    cJSON_AddNumberToObject(j, "compute", t->compute_s);
    cJSON_AddNumberToObject(j, "tp_comm", t->tp_comm_s);
    cJSON_AddNumberToObject(j, "cp_comm", t->cp_comm_s);
    cJSON_AddNumberToObject(j, "pp_comm", t->pp_comm_s);
    cJSON_AddNumberToObject(j, "dp_exposed", t->dp_exposed_s);
    cJSON_AddNumberToObject(j, "dp_total", t->dp_total_s);
    cJSON_AddNumberToObject(j, "bubble", t->bubble_s);
    cJSON_AddNumberToObject(j, "optimizer", t->optimizer_s);
    return j;
}

cJSON *cli_json_plan(const plan_candidate *c)
{
    const plan_layout *l = &c->layout;
    const plan_estimate *e = &c->est;
    cJSON *j = cJSON_CreateObject();
    /* the layout by its field table: the names SQLite and CONFIG.json use */
    data_json_fields(j, &plan_layout_fields, l);
    cJSON_AddItemToObject(j, "memory_per_gpu_bytes", mem_json(&e->mem));
    add_bytes(j, "memory_capacity_bytes", e->capacity_bytes);
    cJSON_AddNumberToObject(j, "worst_stage", e->worst_stage);
    cJSON *sl = cJSON_CreateArray(), *sm = cJSON_CreateArray();
    for (int i = 0; i < e->nstages; i++) {
        cJSON_AddItemToArray(sl, cJSON_CreateNumber(e->stage_layers[i]));
        cJSON_AddItemToArray(sm, data_json_bytes(e->stage_mem_bytes[i]));
    }
    cJSON_AddItemToObject(j, "stage_layers", sl);
    cJSON_AddItemToObject(j, "stage_memory_bytes", sm);
    cJSON_AddItemToObject(j, "step_time_s", time_json(&e->time));
    cJSON_AddNumberToObject(j, "tokens_per_s", e->tokens_per_s);
    cJSON_AddNumberToObject(j, "mfu", e->mfu);
    cJSON_AddNumberToObject(j, "hfu", e->hfu);
    cJSON_AddNumberToObject(j, "cost_per_hour", e->cost_per_hour);
    cJSON_AddNumberToObject(j, "cost_per_million_tokens", e->cost_per_mtokens);
    if (e->reject != PLAN_OK) {
        cJSON_AddStringToObject(j, "rejected", plan_reject_name(e->reject));
        char why[160];
        cJSON_AddStringToObject(j, "reason", plan_estimate_reason(e, why, sizeof why));
    }
    return j;
}

/* --explain's terms: each with its value, unit, formula and source. */
cJSON *cli_json_terms(const plan_terms *t)
{
    cJSON *ex = cJSON_CreateArray();
    for (int i = 0; ex && i < t->n; i++) {
        const plan_term *x = &t->v[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "group", x->group);
        cJSON_AddStringToObject(j, "name", x->name);
        if (!strcmp(x->unit, "bytes"))
            cJSON_AddItemToObject(j, "value", data_json_bytes(x->value));
        else
            cJSON_AddNumberToObject(j, "value", x->value);
        cJSON_AddStringToObject(j, "unit", x->unit);
        cJSON_AddStringToObject(j, "formula", x->formula);
        if (x->source && x->source[0])
            cJSON_AddStringToObject(j, "source", x->source);
        cJSON_AddItemToArray(ex, j);
    }
    return ex;
}

int cli_print_json(FILE *f, const cli_plan_opts *o, const plan_model *m, const plan_cluster *c,
                   const plan_result *r, int min_nodes, const cli_sim_col *sim)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "tool_version", SMD_VERSION);
    cJSON_AddStringToObject(root, "command_line", o->command_line);
    cJSON_AddItemToObject(root, "model", data_json_model(m));
    cJSON_AddItemToObject(root, "cluster", cluster_json(c));
    cJSON_AddNumberToObject(root, "global_batch", (double)r->global_batch);
    cJSON_AddBoolToObject(root, "global_batch_defaulted", r->batch_defaulted);
    if (!r->batch_defaulted && o->batch_source)
        cJSON_AddStringToObject(root, "global_batch_source", o->batch_source);
    cJSON_AddStringToObject(root, "objective", plan_objective_name(o->cfg.objective));
    cJSON_AddNumberToObject(root, "layouts_evaluated", (double)r->evaluated);
    cJSON_AddNumberToObject(root, "layouts_feasible", (double)r->feasible);
    cJSON_AddNumberToObject(root, "search_s", r->search_s);
    cJSON_AddNumberToObject(root, "twins_collapsed", (double)r->twins);
    /* the error band of every step (data/error_bands.json): which evidence
     * supports it, and which top plans it cannot tell apart */
    char basis[400];
    double band = r->ntop > 0 ? cli_band_of(c, r->top[0].layout.framework, basis, sizeof basis)
                              : 0;
    if (r->ntop > 0) {
        cJSON *eb = cJSON_AddObjectToObject(root, "error_band");
        cJSON_AddNumberToObject(eb, "pct", band);
        cJSON_AddStringToObject(eb, "basis", basis);
        cJSON_AddStringToObject(eb, "stack", plan_framework_get(r->top[0].layout.framework)->key);
        cJSON_AddStringToObject(eb, "framework",
                                plan_fw_family_key(plan_framework_get(r->top[0].layout.framework)
                                                       ->family));
        cJSON_AddStringToObject(eb, "silicon", c->gpu->silicon[0] ? c->gpu->silicon
                                                                  : c->gpu->name);
        cJSON_AddNumberToObject(eb, "plans_within_band_of_first",
                                band > 0 ? cli_band_overlap(r, sim, band) : 1);
    }
    cJSON *plans = cJSON_CreateArray();
    for (int i = 0; i < r->ntop; i++) {
        cJSON *p = cli_json_plan(&r->top[i]);
        if (sim && sim->n > i)
            cJSON_AddNumberToObject(p, "simulated_step_time_s", sim->step_s[i]);
        double t = sim && sim->n > i ? sim->step_s[i] : r->top[i].est.time.step_s;
        cJSON_AddNumberToObject(p, "step_band_pct", band);
        cJSON *range = cJSON_AddArrayToObject(p, "step_range_s");
        cJSON_AddItemToArray(range, cJSON_CreateNumber(t * (1 - band / 100)));
        cJSON_AddItemToArray(range, cJSON_CreateNumber(t * (1 + band / 100)));
        cJSON_AddItemToArray(plans, p);
    }
    if (sim && sim->n > 0)
        cJSON_AddBoolToObject(root, "reranked_by_simulation", sim->reranked);
    cJSON_AddItemToObject(root, "plans", plans);
    double train_s, train_cost;
    int train_sim;
    if (cli_train_of(o, r, sim, &train_s, &train_cost, &train_sim)) {
        cJSON *t = cJSON_AddObjectToObject(root, "train");
        cJSON_AddNumberToObject(t, "tokens", o->tokens);
        cJSON_AddNumberToObject(t, "time_s", train_s);
        if (train_cost > 0)
            cJSON_AddNumberToObject(t, "cost", train_cost);
        else
            cJSON_AddNullToObject(t, "cost");
        cJSON_AddStringToObject(t, "step", train_sim ? "simulated" : "predicted");
        cJSON_AddStringToObject(t, "prices", cli_price_list());
    }
    cJSON *rej = cJSON_CreateObject();
    for (int i = 1; i < PLAN_REJ__COUNT; i++)
        cJSON_AddNumberToObject(rej, plan_reject_name((plan_reject)i), (double)r->rejected[i]);
    cJSON_AddItemToObject(root, "rejected", rej);
    if (r->ntop == 0) {
        if (r->min_oom_excess_bytes > 0)
            cJSON_AddItemToObject(root, "closest_out_of_memory", cli_json_plan(&r->closest_oom));
        cJSON_AddNumberToObject(root, "min_instances_needed", min_nodes);
    }
    for (const cJSON *x = o->json_extra ? o->json_extra->child : NULL; x; x = x->next)
        cJSON_AddItemToObject(root, x->string, cJSON_Duplicate(x, 1));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) {
        fprintf(stderr, "smdplan: out of memory writing JSON\n");
        return 1;
    }
    fprintf(f, "%s\n", s);
    free(s);
    return 0;
}
