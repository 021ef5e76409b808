/*
 * data_plan_json.c: a plan's answer as the JSON of `smdplan --json` and
 * `smdplan simulate --json` (data_plan_json.h), with stable field names
 * (units in the names).
 */
#include "data/data_plan_json.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/data_json.h"
#include "planner/plan_fields.h"
#include "planner/plan_framework.h"
#include "planner/plan_summary.h"
#include "smd_config.h"

/* An object of the n members of m (data_json_add). */
static cJSON *object_of(const data_json_member *m, size_t n)
{
    cJSON *j = cJSON_CreateObject();
    if (j)
        data_json_add(j, m, n);
    return j;
}

static cJSON *cluster_json(const plan_cluster *c, const char *price_list)
{
    const data_json_member m[] = {
        DATA_JSON_STR("instance_type", c->inst->name), DATA_JSON_NUM("instances", c->nodes),
        DATA_JSON_NUM("gpus", c->gpus), DATA_JSON_NUM("gpus_per_instance", c->inst->gpus_per_node),
        DATA_JSON_STR("gpu", c->gpu->name), DATA_JSON_BYTES("gpu_memory_bytes", c->gpu->mem_bytes),
        DATA_JSON_NUM("gpu_peak_flops", c->gpu->peak_flops),
    };
    cJSON *j = object_of(m, sizeof m / sizeof m[0]);
    if (c->inst->price_per_hour > 0)
        cJSON_AddNumberToObject(j, "price_per_hour", c->inst->price_per_hour * c->nodes);
    else
        cJSON_AddNullToObject(j, "price_per_hour");
    cJSON_AddStringToObject(j, "price_list", price_list);
    return j;
}

static cJSON *mem_json(const plan_mem *x)
{
    const data_json_member m[] = {
        DATA_JSON_BYTES("total", x->total_bytes), DATA_JSON_BYTES("weights", x->weights_bytes),
        DATA_JSON_BYTES("gradients", x->grads_bytes),
        DATA_JSON_BYTES("optimizer", x->optimizer_bytes),
        DATA_JSON_BYTES("activations", x->activations_bytes),
        DATA_JSON_BYTES("recompute_working_set", x->recompute_bytes),
        DATA_JSON_BYTES("logits", x->logits_bytes),
        DATA_JSON_BYTES("comm_buffers", x->comm_buffers_bytes),
        DATA_JSON_BYTES("cuda_context", x->context_bytes),
        DATA_JSON_BYTES("allocator", x->allocator_bytes),
    };
    return object_of(m, sizeof m / sizeof m[0]);
}

static cJSON *time_json(const plan_time *t)
{
    const data_json_member m[] = {
        DATA_JSON_NUM("total", t->step_s), DATA_JSON_NUM("compute", t->compute_s),
        DATA_JSON_NUM("tp_comm", t->tp_comm_s), DATA_JSON_NUM("cp_comm", t->cp_comm_s),
        DATA_JSON_NUM("pp_comm", t->pp_comm_s), DATA_JSON_NUM("dp_exposed", t->dp_exposed_s),
        DATA_JSON_NUM("dp_total", t->dp_total_s), DATA_JSON_NUM("bubble", t->bubble_s),
        DATA_JSON_NUM("optimizer", t->optimizer_s),
    };
    return object_of(m, sizeof m / sizeof m[0]);
}

cJSON *data_json_plan(const plan_candidate *c)
{
    const plan_layout *l = &c->layout;
    const plan_estimate *e = &c->est;
    cJSON *j = cJSON_CreateObject();
    /* the layout by its field table: the names SQLite and CONFIG.json use */
    data_json_fields(j, &plan_layout_fields, l);
    cJSON_AddItemToObject(j, "memory_per_gpu_bytes", mem_json(&e->mem));
    cJSON_AddItemToObject(j, "memory_capacity_bytes", data_json_bytes(e->capacity_bytes));
    cJSON_AddNumberToObject(j, "worst_stage", e->worst_stage);
    cJSON *sl = cJSON_CreateArray(), *sm = cJSON_CreateArray();
    for (int i = 0; i < e->nstages; i++) {
        cJSON_AddItemToArray(sl, cJSON_CreateNumber(e->stage_layers[i]));
        cJSON_AddItemToArray(sm, data_json_bytes(e->stage_mem_bytes[i]));
    }
    cJSON_AddItemToObject(j, "stage_layers", sl);
    cJSON_AddItemToObject(j, "stage_memory_bytes", sm);
    cJSON_AddItemToObject(j, "step_time_s", time_json(&e->time));
    const data_json_member rates[] = {
        DATA_JSON_NUM("tokens_per_s", e->tokens_per_s), DATA_JSON_NUM("mfu", e->mfu),
        DATA_JSON_NUM("hfu", e->hfu), DATA_JSON_NUM("cost_per_hour", e->cost_per_hour),
        DATA_JSON_NUM("cost_per_million_tokens", e->cost_per_mtokens),
    };
    data_json_add(j, rates, sizeof rates / sizeof rates[0]);
    if (e->reject != PLAN_OK) {
        cJSON_AddStringToObject(j, "rejected", plan_reject_name(e->reject));
        char why[160];
        cJSON_AddStringToObject(j, "reason", plan_estimate_reason(e, why, sizeof why));
    }
    return j;
}

cJSON *data_json_terms(const plan_terms *t)
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

cJSON *data_json_preset_cmp(const plan_preset_cmp *p)
{
    if (!p->shown)
        return NULL;
    static const char *const status[] = {"fits", "out_of_memory", "not_evaluated"};
    const plan_preset_ref *r = &p->preset->ref;
    const data_json_member m[] = {
        DATA_JSON_STR("preset", p->preset->key), DATA_JSON_STR("source", r->source),
        DATA_JSON_STR("published_instances", r->instances),
        DATA_JSON_NUM("published_batch_size", r->batch_size),
        DATA_JSON_STR("status", status[p->status]),
    };
    cJSON *j = object_of(m, sizeof m / sizeof m[0]);
    if (p->status != PLAN_PRESET_UNPLACEABLE)
        cJSON_AddItemToObject(j, "plan", data_json_plan(&p->ref));
    cJSON_AddStringToObject(j, "why_ours_differs", p->why);
    cJSON_AddBoolToObject(j, "smp_runs_fitted", p->smp_fitted);
    return j;
}

cJSON *data_json_sim(const sim_result *r)
{
    const data_json_member head[] = {
        DATA_JSON_NUM("step_time_s", r->step_s),
        DATA_JSON_NUM("planner_step_time_s", r->planner_step_s),
        DATA_JSON_NUM("pipeline_s", r->pipeline_s), DATA_JSON_NUM("events", r->events),
        DATA_JSON_NUM("microbatches", r->microbatches),
    };
    const data_json_member steps[] = {
        DATA_JSON_NUM("steps", r->steps), DATA_JSON_NUM("p50_s", r->p50_s),
        DATA_JSON_NUM("p95_s", r->p95_s), DATA_JSON_NUM("p99_s", r->p99_s),
        DATA_JSON_NUM("compute_bound_s", r->compute_bound_s),
        DATA_JSON_NUM("comm_bound_s", r->comm_bound_s),
    };
    const data_json_member critical[] = {
        DATA_JSON_NUM("ops", r->critical_ops), DATA_JSON_NUM("stages", r->critical_stages),
        DATA_JSON_NUM("compute_s", r->critical_compute_s),
        DATA_JSON_NUM("transfer_s", r->critical_transfer_s),
        DATA_JSON_NUM("tail_s", r->critical_tail_s),
    };
    cJSON *j = object_of(head, sizeof head / sizeof head[0]);
    if (r->window_microbatches[0] > 0) {
        cJSON *w = cJSON_AddArrayToObject(j, "extrapolated_from_microbatches");
        cJSON_AddItemToArray(w, cJSON_CreateNumber(r->window_microbatches[0]));
        cJSON_AddItemToArray(w, cJSON_CreateNumber(r->window_microbatches[1]));
    }
    data_json_add(j, steps, sizeof steps / sizeof steps[0]);
    cJSON *bf = cJSON_CreateObject();
    cJSON_AddNumberToObject(bf, "overall", r->bubble_fraction);
    cJSON *per = cJSON_CreateArray(), *peak = cJSON_CreateArray(), *busy = cJSON_CreateArray();
    for (int i = 0; i < r->pp; i++) {
        cJSON_AddItemToArray(per, cJSON_CreateNumber(r->stage[i].bubble_fraction));
        cJSON_AddItemToArray(peak, cJSON_CreateNumber(r->stage[i].peak_inflight));
        cJSON_AddItemToArray(busy, cJSON_CreateNumber(r->stage[i].busy_s));
    }
    cJSON_AddItemToObject(bf, "per_stage", per);
    cJSON_AddItemToObject(j, "bubble_fraction", bf);
    cJSON_AddItemToObject(j, "peak_microbatches_in_flight", peak);
    cJSON_AddItemToObject(j, "stage_busy_s", busy);
    cJSON_AddItemToObject(j, "critical_path",
                          object_of(critical, sizeof critical / sizeof critical[0]));
    return j;
}

/* The error band of every step (data/error_bands.json): which evidence
 * supports it, and which top plans it cannot tell apart. */
static void add_band(cJSON *root, const data_plan_doc *d, double band)
{
    const plan_result *r = d->r;
    const plan_cluster *c = d->c;
    const plan_framework *fw = plan_framework_get(r->top[0].layout.framework);
    const data_json_member m[] = {
        DATA_JSON_NUM("pct", band), DATA_JSON_STR("basis", d->band_basis),
        DATA_JSON_STR("stack", fw->key), DATA_JSON_STR("framework", plan_fw_family_key(fw->family)),
        DATA_JSON_STR("silicon", c->gpu->silicon[0] ? c->gpu->silicon : c->gpu->name),
    };
    cJSON *eb = object_of(m, sizeof m / sizeof m[0]);
    cJSON_AddItemToObject(root, "error_band", eb);
    cJSON_AddNumberToObject(eb, "plans_within_band_of_first",
                            band > 0 ? plan_summary_band_overlap(r, d->sim ? d->sim->step_s : NULL,
                                                                 d->sim ? d->sim->n : 0, band)
                                     : 1);
}

/* The plans, each with its simulated step and the range its band gives. */
static cJSON *plans_json(const plan_result *r, const sim_top_steps *sim, double band)
{
    cJSON *plans = cJSON_CreateArray();
    for (int i = 0; i < r->ntop; i++) {
        cJSON *p = data_json_plan(&r->top[i]);
        if (sim && sim->n > i)
            cJSON_AddNumberToObject(p, "simulated_step_time_s", sim->step_s[i]);
        double t = sim && sim->n > i ? sim->step_s[i] : r->top[i].est.time.step_s;
        cJSON_AddNumberToObject(p, "step_band_pct", band);
        cJSON *range = cJSON_AddArrayToObject(p, "step_range_s");
        cJSON_AddItemToArray(range, cJSON_CreateNumber(t * (1 - band / 100)));
        cJSON_AddItemToArray(range, cJSON_CreateNumber(t * (1 + band / 100)));
        cJSON_AddItemToArray(plans, p);
    }
    return plans;
}

/* The time and cost of training d->train_tokens with plan #1. */
static void add_train(cJSON *root, const data_plan_doc *d)
{
    double time_s, cost;
    int simulated;
    double sim_step_s = d->sim && d->sim->n > 0 ? d->sim->step_s[0] : 0;
    if (!(d->train_tokens > 0) ||
        !plan_summary_train(d->r, sim_step_s, d->train_tokens, &time_s, &cost, &simulated))
        return;
    cJSON *t = cJSON_AddObjectToObject(root, "train");
    cJSON_AddNumberToObject(t, "tokens", d->train_tokens);
    cJSON_AddNumberToObject(t, "time_s", time_s);
    if (cost > 0)
        cJSON_AddNumberToObject(t, "cost", cost);
    else
        cJSON_AddNullToObject(t, "cost");
    cJSON_AddStringToObject(t, "step", simulated ? "simulated" : "predicted");
    cJSON_AddStringToObject(t, "prices", d->price_list);
}

cJSON *data_json_plan_doc(const data_plan_doc *d)
{
    const plan_result *r = d->r;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "tool_version", SMD_VERSION);
    cJSON_AddStringToObject(root, "command_line", d->command_line);
    cJSON_AddItemToObject(root, "model", data_json_model(d->m));
    cJSON_AddItemToObject(root, "cluster", cluster_json(d->c, d->price_list));
    cJSON_AddNumberToObject(root, "global_batch", (double)r->global_batch);
    cJSON_AddBoolToObject(root, "global_batch_defaulted", r->batch_defaulted);
    if (!r->batch_defaulted && d->batch_source)
        cJSON_AddStringToObject(root, "global_batch_source", d->batch_source);
    const data_json_member search[] = {
        DATA_JSON_STR("objective", plan_objective_name(d->objective)),
        DATA_JSON_NUM("layouts_evaluated", r->evaluated),
        DATA_JSON_NUM("layouts_feasible", r->feasible), DATA_JSON_NUM("search_s", r->search_s),
        DATA_JSON_NUM("twins_collapsed", r->twins),
    };
    data_json_add(root, search, sizeof search / sizeof search[0]);
    double band = r->ntop > 0 ? d->band_pct : 0;
    if (r->ntop > 0)
        add_band(root, d, band);
    cJSON *plans = plans_json(r, d->sim, band);
    if (d->sim && d->sim->n > 0)
        cJSON_AddBoolToObject(root, "reranked_by_simulation", d->sim->reranked);
    cJSON_AddItemToObject(root, "plans", plans);
    add_train(root, d);
    cJSON *rej = cJSON_CreateObject();
    for (int i = 1; i < PLAN_REJ__COUNT; i++)
        cJSON_AddNumberToObject(rej, plan_reject_name((plan_reject)i), (double)r->rejected[i]);
    cJSON_AddItemToObject(root, "rejected", rej);
    if (r->ntop == 0) {
        if (r->min_oom_excess_bytes > 0)
            cJSON_AddItemToObject(root, "closest_out_of_memory", data_json_plan(&r->closest_oom));
        cJSON_AddNumberToObject(root, "min_instances_needed", d->min_nodes);
    }
    for (const cJSON *x = d->extra ? d->extra->child : NULL; x; x = x->next)
        cJSON_AddItemToObject(root, x->string, cJSON_Duplicate(x, 1));
    return root;
}

cJSON *data_json_simulation(const sim_result *r, const plan_model *m, const plan_cluster *c,
                            const plan_candidate *plan, uint64_t seed)
{
    cJSON *root = data_json_sim(r);
    cJSON_AddItemToObject(root, "model", data_json_model(m));
    cJSON_AddItemToObject(root, "plan", data_json_plan(plan));
    cJSON_AddStringToObject(root, "instance_type", c->inst->name);
    cJSON_AddNumberToObject(root, "instances", c->nodes);
    cJSON_AddNumberToObject(root, "seed", (double)seed);
    return root;
}
