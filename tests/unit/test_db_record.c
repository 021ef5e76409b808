/*
 * test_db_record.c: every record type written and read back.
 *
 * Real inputs (the shipped catalog and presets, a search of a 30B model on
 * 16 x p4d, a simulated step with its trace, the published runs of the
 * calibration file) are recorded, then read back through db_show,
 * db_history and db_compare and compared field by field: doubles exactly
 * (SQLite keeps IEEE doubles), enums by name, counts of child rows; every
 * pipeline stage's memory by term against the planner's. Also:
 * a record that fails half-way leaves nothing behind, with SQLite's
 * message; db_select runs only read-only statements.
 */
#include <cjson/cJSON.h>

#include "data/data.h"
#include "data/data_csv.h"
#include "data/db_int.h"
#include "planner/plan_fields.h"
#include "planner/plan_framework.h"
#include "test_db_fixture.h"
#include "test_json.h"

#define KEY_MAX_TEST 1024

/* A number of a JSON object and the value it must be, exactly. */
typedef struct num_is {
    const char *key;
    double want;
} num_is;

static void check_nums(const cJSON *o, const num_is *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double got = num(o, v[i].key);
        if (!(got == v[i].want))
            fail_msg("'%s' is %.17g, want %.17g", v[i].key, got, v[i].want);
    }
}

/* CHECK_NUMS(o, {"key", value}, ...): each key of o is its value. */
#define CHECK_NUMS(o, ...)                                                                         \
    do {                                                                                           \
        const num_is want_[] = {__VA_ARGS__};                                                      \
        check_nums(o, want_, sizeof want_ / sizeof want_[0]);                                      \
    } while (0)

static int is_null(const cJSON *o, const char *k)
{
    return cJSON_IsNull(get(o, k));
}

static cJSON *show(fixture *f, int64_t id)
{
    st_err err = {0};
    cJSON *rec = NULL;
    int rc = db_show(f->d, id, &rec, &err);
    if (rc != ST_OK)
        fail_msg("db_show(%lld): %s", (long long)id, err.msg);
    return rec;
}

static void check_provenance(const fixture *f, const cJSON *rec)
{
    const cJSON *p = get(rec, "provenance");
    assert_string_equal(str(p, "command_line"), "smdplan calibrate 'runs file.csv'");
    assert_string_equal(str(p, "command_line"), f->prov.command_line);
    assert_string_equal(str(p, "tool_version"), f->prov.tool_version);
    assert_string_equal(str(p, "git_rev"), f->prov.git_rev);
    assert_string_equal(str(p, "build_features"), f->prov.build_features);
    assert_string_equal(str(p, "library_versions"), f->prov.library_versions);
    assert_string_equal(str(p, "host"), f->prov.host);
    assert_string_equal(str(rec, "created_at"), f->prov.created_at);
}

static void check_model(const cJSON *m, const plan_model *want)
{
    assert_string_equal(str(m, "name"), want->name);
    assert_string_equal(str(m, "source"), want->source);
    assert_string_equal(str(m, "arch"), want->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt");
    CHECK_NUMS(m, {"layers", want->layers}, {"hidden", want->hidden}, {"heads", want->heads},
               {"kv_heads", want->kv_heads}, {"ffn", want->ffn}, {"seq", want->seq},
               {"vocab", want->vocab}, {"tied_embedding", want->tied_embedding},
               {"params", want->params}, {"params_layer", want->params_layer},
               {"params_head", want->params_head});
}

static void check_layout(const cJSON *p, const plan_layout *l)
{
    CHECK_NUMS(p, {"tp", l->tp}, {"pp", l->pp}, {"dp", l->dp}, {"cp", l->cp},
               {"micro_batch", l->micro_batch}, {"microbatches", l->microbatches},
               {"active_microbatches", l->active_microbatches});
    assert_string_equal(str(p, "schedule"), plan_layout_schedule_key(l));
    assert_int_equal((int)num(p, "virtual_stages"), l->virtual_stages);
    assert_string_equal(str(p, "recompute"), plan_recompute_name(l->recompute));
    CHECK_NUMS(p, {"recompute_group", l->recompute_group},
               {"sequence_parallel", l->sequence_parallel},
               {"offload_activations", l->offload_activations});
    assert_string_equal(str(p, "sharding"), plan_sharding_name(l->sharding));
    assert_int_equal((int)num(p, "sharding_degree"), l->sharding_degree);
    assert_int_equal((int)num(p, "prescaled_batch"), l->prescaled_batch);
    assert_string_equal(str(p, "placement"), l->placement);
    CHECK_NUMS(p, {"flash_attention", l->flash_attention}, {"dp_overlap", l->dp_overlap},
               {"fp32_grads", l->fp32_grads}, {"tp_overlap", l->tp_overlap},
               {"pp_overlap", l->pp_overlap}, {"dp_bucket_bytes", l->dp_bucket_bytes},
               {"global_batch", l->global_batch}, {"launch_blocking", l->launch_blocking});
    assert_string_equal(str(p, "framework"), plan_framework_get(l->framework)->key);
    assert_string_equal(str(p, "precision"), plan_precision_name(l->precision));
}

/* Every memory and time term, bit for bit; per-stage memory. */
static void check_prediction(const cJSON *pr, const plan_estimate *e)
{
    assert_string_equal(str(pr, "reject"),
                        e->reject == PLAN_OK ? "ok" : plan_reject_name(e->reject));
    CHECK_NUMS(pr, {"weights_bytes", e->mem.weights_bytes}, {"grads_bytes", e->mem.grads_bytes},
               {"optimizer_bytes", e->mem.optimizer_bytes},
               {"activations_bytes", e->mem.activations_bytes},
               {"recompute_bytes", e->mem.recompute_bytes},
               {"logits_bytes", e->mem.logits_bytes},
               {"comm_buffers_bytes", e->mem.comm_buffers_bytes},
               {"context_bytes", e->mem.context_bytes},
               {"allocator_bytes", e->mem.allocator_bytes}, {"total_bytes", e->mem.total_bytes},
               {"capacity_bytes", e->capacity_bytes}, {"worst_stage", e->worst_stage},
               {"compute_s", e->time.compute_s}, {"tp_comm_s", e->time.tp_comm_s},
               {"cp_comm_s", e->time.cp_comm_s}, {"pp_comm_s", e->time.pp_comm_s},
               {"dp_exposed_s", e->time.dp_exposed_s}, {"bubble_s", e->time.bubble_s},
               {"optimizer_s", e->time.optimizer_s}, {"step_s", e->time.step_s},
               {"dp_total_s", e->time.dp_total_s}, {"tokens_per_s", e->tokens_per_s},
               {"mfu", e->mfu}, {"cost_per_mtokens", e->cost_per_mtokens});
    /* the terms sum to the totals (the planner's invariant survives storage) */
    double mem = 0;
    static const char *const mt[] = {"weights_bytes", "grads_bytes", "optimizer_bytes",
                                     "activations_bytes", "recompute_bytes", "logits_bytes",
                                     "comm_buffers_bytes", "context_bytes", "allocator_bytes"};
    for (size_t i = 0; i < sizeof mt / sizeof mt[0]; i++)
        mem += num(pr, mt[i]);
    assert_rel(mem, num(pr, "total_bytes"), 1e-12);
    const cJSON *st = get(pr, "stages");
    assert_int_equal(cJSON_GetArraySize(st), e->nstages);
    int i = 0;
    for (const cJSON *s = st->child; s; s = s->next, i++) {
        CHECK_NUMS(s, {"stage", i}, {"layers", e->stage_layers[i]},
                   {"mem_bytes", e->stage_mem_bytes[i]}, {"inflight", e->stage_inflight[i]});
        /* a stage's terms, when recorded, sum to its total; logits on the last */
        if (is_null(s, "weights_bytes")) {
            for (size_t k = 0; k < sizeof mt / sizeof mt[0]; k++)
                assert_true(is_null(s, mt[k]));
            continue;
        }
        double sum = 0;
        for (size_t k = 0; k < sizeof mt / sizeof mt[0]; k++)
            sum += num(s, mt[k]);
        assert_rel(sum, e->stage_mem_bytes[i], 1e-12);
        assert_true((num(s, "logits_bytes") > 0) == (i == e->nstages - 1));
    }
}

/* Every stage of a recorded prediction has the terms the planner gives for
 * it (plan_stages_mem on the same model, cluster and layout), bit for bit;
 * the worst stage's are the prediction's own. */
static void check_stage_terms(const cJSON *pr, const plan_model *m, const plan_cluster *c,
                              const plan_layout *l, const plan_estimate *e)
{
    plan_mem *want = calloc(PLAN_PP_MAX, sizeof *want);
    st_err err = {0};
    assert_int_equal(plan_stages_mem(m, c, l, want, PLAN_PP_MAX, &err), ST_OK);
    const cJSON *st = get(pr, "stages");
    assert_int_equal(cJSON_GetArraySize(st), l->pp);
    int i = 0;
    for (const cJSON *s = st->child; s; s = s->next, i++) {
        const plan_mem *w = &want[i];
        CHECK_NUMS(s, {"weights_bytes", w->weights_bytes}, {"grads_bytes", w->grads_bytes},
                   {"optimizer_bytes", w->optimizer_bytes},
                   {"activations_bytes", w->activations_bytes},
                   {"recompute_bytes", w->recompute_bytes}, {"logits_bytes", w->logits_bytes},
                   {"comm_buffers_bytes", w->comm_buffers_bytes},
                   {"context_bytes", w->context_bytes}, {"allocator_bytes", w->allocator_bytes},
                   {"mem_bytes", w->total_bytes});
    }
    assert_memory_equal(&want[e->worst_stage], &e->mem, sizeof e->mem);
    free(want);
}

static void test_plan_round_trip(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    double sim[PLAN_TOPK_MAX] = {0};
    for (int i = 0; i < f->res.ntop; i++)
        sim[i] = 10.0 + 0.125 * i;
    int64_t id = record_search(f, sim);
    cJSON *rec = show(f, id);
    assert_true(num(rec, "id") == (double)id);
    assert_string_equal(str(rec, "kind"), "plan");
    assert_non_null(strstr(str(rec, "summary"), "p4d.24xlarge with smp@v1 bf16"));
    check_provenance(f, rec);
    const cJSON *models = get(rec, "models");
    assert_int_equal(cJSON_GetArraySize(models), 1);
    check_model(models->child, &f->model);

    const cJSON *it = get(rec, "instance_types")->child;
    assert_string_equal(str(it, "name"), f->cluster.inst->name);
    assert_string_equal(str(it, "gpu"), f->cluster.gpu->name);
    CHECK_NUMS(it, {"gpus_per_node", f->cluster.inst->gpus_per_node},
               {"net_bps", f->cluster.inst->net_bps},
               {"gpu_mem_bytes", f->cluster.gpu->mem_bytes},
               {"gemm_eff_max", f->cluster.gpu->gemm_eff_max});
    assert_string_equal(str(it, "gpu_silicon"), f->cluster.gpu->silicon);
    CHECK_NUMS(it, {"gemm_align_bytes", f->cluster.gpu->gemm_align_bytes},
               {"align_partial_factor", f->cluster.gpu->align_partial_factor},
               {"fp8_peak_flops", f->cluster.gpu->fp8_peak_flops},
               {"fp8_gemm_eff", f->cluster.gpu->fp8_gemm_eff},
               {"gemm_ceiling", f->cluster.gpu->gemm_ceiling},
               {"host_mem_bytes", f->cluster.inst->host_mem_bytes},
               {"efa", f->cluster.inst->efa});
    assert_true(cJSON_IsArray(get(it, "intra_curve")));
    assert_int_equal(cJSON_GetArraySize(get(it, "intra_curve")), f->cluster.intra_curve->n);

    const cJSON *search = get(rec, "search");
    CHECK_NUMS(search, {"evaluated", f->res.evaluated}, {"feasible", f->res.feasible},
               {"global_batch", f->res.global_batch}, {"nodes", 16},
               {"gpus", f->cluster.gpus});
    assert_string_equal(str(search, "objective"), "time");
    const cJSON *rej = get(search, "rejected");
    assert_true(num(rej, plan_reject_name(PLAN_REJ_OOM)) == (double)f->res.rejected[PLAN_REJ_OOM]);
    assert_int_equal((int)num(get(search, "config"), "top_k"), f->cfg.top_k);

    const cJSON *plans = get(rec, "plans");
    /* the ranked plans, then the best layout of each (TP, PP) pair */
    assert_int_equal(cJSON_GetArraySize(plans), f->res.ntop + f->res.ngrid);
    int i = 0;
    for (const cJSON *p = plans->child; p && i < f->res.ntop; p = p->next, i++) {
        assert_string_equal(str(p, "role"), "top");
        CHECK_NUMS(p, {"rank", i + 1}, {"nodes", 16}, {"simulated_step_s", sim[i]});
        check_layout(p, &f->res.top[i].layout);
        check_prediction(get(p, "prediction"), &f->res.top[i].est);
        check_stage_terms(get(p, "prediction"), &f->model, &f->cluster, &f->res.top[i].layout,
                          &f->res.top[i].est);
    }
    /* the grid's layouts, out of memory or not, have their stages' terms too */
    for (const cJSON *p = plans->child; p; p = p->next) {
        if (strcmp(str(p, "role"), "grid") != 0)
            continue;
        const plan_grid_cell *g = NULL;
        for (int k = 0; k < f->res.ngrid && !g; k++)
            if (f->res.grid[k].tp == (int)num(p, "tp") && f->res.grid[k].pp == (int)num(p, "pp"))
                g = &f->res.grid[k];
        assert_non_null(g);
        check_prediction(get(p, "prediction"), &g->best.est);
        check_stage_terms(get(p, "prediction"), &f->model, &f->cluster, &g->best.layout,
                          &g->best.est);
    }
    cJSON_Delete(rec);

    /* history: one plan record with its summary */
    db_summary h[4];
    int n = 0;
    assert_int_equal(db_history(f->d, NULL, h, 4, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_int_equal(h[0].id, id);
    assert_string_equal(h[0].kind, "plan");
    assert_string_equal(h[0].created_at, f->prov.created_at);
    assert_string_equal(h[0].command_line, f->prov.command_line);
}

/* Nothing fits: the record keeps the search and the closest layout. */
static void test_plan_nothing_fits(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_model big;
    plan_cluster one;
    plan_result *r = calloc(1, sizeof *r);
    assert_int_equal(plan_model_resolve(&f->presets, 1e12, PLAN_ARCH_GPT, NULL, &big, &err), ST_OK);
    assert_int_equal(plan_cluster_parse(&f->cat, "1xp4d", &one, &err), ST_OK);
    assert_int_equal(plan_search(&big, &one, &f->cfg, r, &err), ST_OK);
    assert_int_equal(r->ntop, 0);
    int64_t id = 0;
    assert_int_equal(db_record_plan(f->d, &f->prov, &big, &one, &f->cfg, r, NULL, &id, &err),
                     ST_OK);
    cJSON *rec = show(f, id);
    assert_non_null(strstr(str(rec, "summary"), "nothing fits"));
    if (r->min_oom_excess_bytes > 0) {
        const cJSON *p = get(rec, "plans")->child;
        assert_string_equal(str(p, "role"), "closest_oom");
        assert_true(is_null(p, "rank"));
        assert_true(is_null(p, "simulated_step_s"));
        check_layout(p, &r->closest_oom.layout);
        check_prediction(get(p, "prediction"), &r->closest_oom.est);
        check_stage_terms(get(p, "prediction"), &big, &one, &r->closest_oom.layout,
                          &r->closest_oom.est);
        assert_string_equal(str(get(p, "prediction"), "reject"), plan_reject_name(PLAN_REJ_OOM));
    }
    cJSON_Delete(rec);
    free(r);
}

/* The comparison mode: plans over several instance types and counts. */
static void test_plan_options(void **state)
{
    fixture *f = *state;
    plan_cluster cl[3];
    plan_candidate cd[3];
    const char *const spec[3] = {"8xp4d", "16xp4d", "4xp5"};
    plan_config cfg = f->cfg;
    st_err err = {0}; /* a stack that runs on p5 (SMP v1 does not) */
    assert_int_equal(plan_framework_find("megatron", &cfg.framework, &err), ST_OK);
    cfg.launch_blocking = 1; /* a knob off its default goes in and comes back */
    int64_t id = record_options(f, spec, &cfg, cl, cd);
    cJSON *rec = show(f, id);
    assert_string_equal(str(get(rec, "search"), "mode"), "compare");
    assert_true(num(get(rec, "search"), "tokens") == 300e9);
    assert_int_equal(cJSON_GetArraySize(get(rec, "instance_types")), 2); /* p4d once, p5 */
    int i = 0;
    for (const cJSON *p = get(rec, "plans")->child; p; p = p->next, i++) {
        assert_string_equal(str(p, "role"), "option");
        assert_int_equal((int)num(p, "nodes"), cl[i].nodes);
        assert_int_equal((int)num(p, "gpus"), cl[i].gpus);
        check_layout(p, &cd[i].layout);
        assert_int_equal((int)num(p, "launch_blocking"), 1);
        check_prediction(get(p, "prediction"), &cd[i].est);
        check_stage_terms(get(p, "prediction"), &f->model, &cl[i], &cd[i].layout, &cd[i].est);
    }
    assert_int_equal(i, 3);
    cJSON_Delete(rec);
}

static void test_simulation_round_trip(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    const plan_candidate *best = &f->res.top[0];
    sim_config cfg;
    sim_result s;
    simulate(f, &best->layout, 1, &cfg, &s);
    assert_true(s.ntrace > 0);
    int64_t id = 0;
    assert_int_equal(db_record_simulation(f->d, &f->prov, &f->model, &f->cluster, &best->layout,
                                          &best->est, &cfg, &s, &id, &err),
                     ST_OK);
    cJSON *rec = show(f, id);
    assert_string_equal(str(rec, "kind"), "simulation");
    check_provenance(f, rec);
    check_model(get(rec, "models")->child, &f->model);
    const cJSON *p = get(rec, "plans")->child;
    check_layout(p, &best->layout);
    check_prediction(get(p, "prediction"), &best->est);
    assert_true(num(p, "simulated_step_s") == s.step_s);
    const cJSON *sim = get(rec, "simulations")->child;
    CHECK_NUMS(sim, {"plan_id", num(p, "id")}, {"step_s", s.step_s}, {"pipeline_s", s.pipeline_s},
               {"bubble_fraction", s.bubble_fraction}, {"planner_step_s", s.planner_step_s},
               {"compute_bound_s", s.compute_bound_s}, {"events", (double)s.events},
               {"seed", 1234567}, {"pp", s.pp}, {"trace_ops", s.ntrace});
    const cJSON *stages = get(sim, "stages");
    assert_int_equal(cJSON_GetArraySize(stages), s.pp);
    int i = 0;
    for (const cJSON *x = stages->child; x; x = x->next, i++) {
        CHECK_NUMS(x, {"stage", i}, {"busy_s", s.stage[i].busy_s},
                   {"bubble_fraction", s.stage[i].bubble_fraction},
                   {"peak_inflight", s.stage[i].peak_inflight},
                   {"peak_mem_bytes", s.stage[i].peak_mem_bytes},
                   {"dp_exposed_s", s.stage[i].dp_exposed_s});
    }
    const cJSON *trace = get(sim, "trace");
    assert_int_equal(cJSON_GetArraySize(trace), s.ntrace);
    i = 0;
    for (const cJSON *t = trace->child; t; t = t->next, i++) {
        const sim_trace_rec *e = &s.trace[i];
        CHECK_NUMS(t, {"seq", i}, {"stage", e->stage}, {"microbatch", e->microbatch},
                   {"chunk", e->chunk}, {"start_ns", (double)e->start_ns},
                   {"end_ns", (double)e->end_ns});
        assert_string_equal(str(t, "op"), e->kind < SIM_OP__COUNT
                                              ? sim_op_name((sim_op_kind)e->kind)
                                              : "allreduce");
        assert_true(num(t, "end_ns") >= num(t, "start_ns"));
    }
    cJSON_Delete(rec);

    /* without a trace: no trace rows */
    sim_result_fini(&s);
    simulate(f, &best->layout, 0, &cfg, &s);
    assert_int_equal(db_record_simulation(f->d, &f->prov, &f->model, &f->cluster, &best->layout,
                                          NULL, &cfg, &s, &id, &err),
                     ST_OK);
    rec = show(f, id);
    sim = get(rec, "simulations")->child;
    assert_null(cJSON_GetObjectItemCaseSensitive(sim, "trace"));
    assert_null(cJSON_GetObjectItemCaseSensitive(get(rec, "plans")->child, "prediction"));
    cJSON_Delete(rec);
    sim_result_fini(&s);
}

static void test_validation_round_trip(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    data_csv csv = {0};
    assert_int_equal(data_csv_load(RUNS_CSV, &csv, &err), ST_OK);
    int n = csv.nrows;
    plan_validate_row *rows = calloc((size_t)n, sizeof *rows);
    plan_validate_result *res = calloc((size_t)n, sizeof *res);
    double *sim = calloc((size_t)n, sizeof *sim);
    assert_int_equal(data_csv_validate_rows(&csv, RUNS_CSV, rows, &err), ST_OK);
    /* some rows on networks no catalog node has: each is read as a node made
     * from its GPU and network text, and recorded as that node */
    for (int i = 0; i < n; i++)
        if (!rows[i].instance_type || !rows[i].instance_type[0])
            rows[i].interconnect = i % 4 == 1   ? "NVSwitch, 2x 100 Gbps InfiniBand HDR"
                                   : i % 4 == 3 ? "NVSwitch, 4x 100 Gbps InfiniBand HDR"
                                                : rows[i].interconnect;
    int compared = 0, layouts = 0;
    for (int i = 0; i < n; i++) {
        assert_int_equal(plan_validate_run(&f->cat, &rows[i], &res[i], NULL, &err), ST_OK);
        compared += res[i].compared;
        layouts += res[i].have_layout;
        sim[i] = res[i].compared && i % 3 == 0 ? res[i].pred_time_s * 1.01 : 0;
    }
    assert_true(compared > 10);
    int64_t id = 0;
    assert_int_equal(db_record_validation(f->d, &f->prov, &f->cat, RUNS_CSV, res, sim, n, &id, &err),
                     ST_OK);
    cJSON *rec = show(f, id);
    assert_string_equal(str(rec, "kind"), "run");
    const cJSON *runs = get(rec, "runs");
    assert_int_equal(cJSON_GetArraySize(runs), n);
    assert_int_equal(cJSON_GetArraySize(get(rec, "plans")), layouts);
    int i = 0;
    for (const cJSON *r = runs->child; r; r = r->next, i++) {
        const plan_validate_result *v = &res[i];
        assert_string_equal(str(r, "source"), "published");
        assert_string_equal(str(r, "row_id"), v->row_id);
        assert_string_equal(str(r, "source_key"), v->source_key);
        assert_int_equal((int)num(r, "compared"), v->compared);
        assert_string_equal(str(r, "file"), RUNS_CSV);
        if (v->compared) {
            assert_true(num(r, "measured_step_s") == v->ref_time_s);
            assert_true(num(r, "error_pct") == v->error_pct);
            assert_string_equal(str(r, "basis"), plan_validate_basis_name(v->basis));
        } else {
            assert_true(is_null(r, "measured_step_s"));
            assert_true(is_null(r, "error_pct"));
            assert_string_equal(str(r, "reason"), v->reason);
        }
        if (v->have_layout) {
            assert_true(num(r, "predicted_step_s") == v->pred_time_s);
            assert_true(num(r, "predicted_mem_bytes") == v->pred_mem_bytes);
            assert_false(is_null(r, "plan_id"));
        } else {
            assert_true(is_null(r, "plan_id"));
        }
        if (sim[i] > 0)
            assert_true(num(r, "simulated_step_s") == sim[i]);
        else
            assert_true(is_null(r, "simulated_step_s"));
        if (v->have_mem)
            assert_true(num(r, "measured_mem_bytes") == v->ref_mem_bytes);
        else
            assert_true(is_null(r, "measured_mem_bytes"));
        assert_int_equal((int)num(r, "measured_oom"), v->ref_oom);
    }
    /* each run's plan is on the node its row was read as, once per node,
     * and for the framework the row names */
    const cJSON *plans = get(rec, "plans"), *its = get(rec, "instance_types");
    int made = 0, nodes = 0;
    i = 0;
    for (const cJSON *r = runs->child; r; r = r->next, i++) {
        const plan_validate_result *v = &res[i];
        if (!v->have_layout)
            continue;
        const cJSON *p = NULL, *it = NULL;
        for (const cJSON *x = plans->child; x && !p; x = x->next)
            if (num(x, "id") == num(r, "plan_id"))
                p = x;
        assert_non_null(p);
        for (const cJSON *x = its->child; x && !it; x = x->next)
            if (num(x, "id") == num(p, "instance_type_id"))
                it = x;
        assert_non_null(it);
        assert_string_equal(str(it, "name"), v->inst.name);
        assert_true(num(it, "net_bps") == v->inst.net_bps);
        assert_int_equal((int)num(it, "gpus_per_node"), v->inst.gpus_per_node);
        assert_string_equal(str(it, "gpu"), v->inst.gpu);
        assert_true(num(it, "gpu_mem_bytes") == f->cat.gpus[v->inst.gpu_index].mem_bytes);
        made += plan_catalog_find(&f->cat, v->inst.name) == NULL;
        int first = 1; /* the first row on this node */
        for (int k = 0; k < i && first; k++)
            first = !(res[k].have_layout && !strcmp(res[k].inst.name, v->inst.name) &&
                      res[k].inst.net_bps == v->inst.net_bps);
        nodes += first;
        assert_int_equal(v->layout.framework, v->framework);
        assert_string_equal(str(p, "framework"), plan_framework_get(v->framework)->key);
        assert_string_equal(str(p, "precision"), plan_precision_name(v->layout.precision));
    }
    assert_true(made > 0);
    assert_int_equal(cJSON_GetArraySize(its), nodes);

    /* the plan of a compared run carries its layout and prediction; a
     * prediction the planner could make has its stages' terms */
    int row = 0, with_terms = 0;
    for (const cJSON *p = get(rec, "plans")->child; p; p = p->next) {
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(p, "prediction");
        assert_non_null(pr);
        while (row < n && !res[row].have_layout)
            row++;
        assert_true(row < n);
        check_prediction(pr, &res[row].est);
        const char *rej = str(pr, "reject");
        if (!strcmp(rej, "ok") || !strcmp(rej, plan_reject_name(PLAN_REJ_OOM))) {
            assert_false(is_null(get(pr, "stages")->child, "weights_bytes"));
            with_terms++;
        }
        row++;
    }
    assert_true(with_terms > 10);
    cJSON_Delete(rec);

    /* compare: each compared run with its prediction; the simulated ones too */
    db_compare_row *cmp = calloc((size_t)n, sizeof *cmp);
    int nc = 0;
    db_compare_filter all = {NULL, 0, NULL, NULL, 1};
    assert_int_equal(db_compare(f->d, &all, cmp, n, &nc, &err), ST_OK);
    int with_meas = 0, with_sim = 0;
    for (int k = 0; k < nc; k++) {
        with_meas += cmp[k].measured_s > 0;
        with_sim += cmp[k].simulated_s > 0 && cmp[k].measured_s > 0;
        assert_true(cmp[k].predicted_s > 0);
        if (cmp[k].measured_s > 0) {
            assert_string_equal(cmp[k].measured_source, "published");
            assert_int_equal(cmp[k].measured_id, id);
        }
    }
    assert_true(with_meas > 0 && with_sim > 0);
    free(cmp);

    /* the accuracy points: every compared row, with its source */
    db_measured *ms = calloc((size_t)n, sizeof *ms);
    int nm = 0, nm0 = 0;
    assert_int_equal(db_measured_runs(f->d, id, ms, n, &nm, &err), ST_OK);
    assert_int_equal(nm, compared);
    for (int k = 0; k < nm; k++) {
        assert_string_equal(ms[k].source, "published");
        assert_true(ms[k].measured_s > 0 && ms[k].predicted_s > 0);
        assert_true(ms[k].source_key[0] && ms[k].row_id[0]);
    }
    assert_int_equal(db_measured_runs(f->d, 0, ms, n, &nm0, &err), ST_OK);
    assert_int_equal(nm0, compared);
    free(ms);
    free(sim);
    free(res);
    free(rows);
    data_csv_free(&csv);
}

/* Every fit with its parameters and standard errors, every source with its
 * fitted and held-out errors, as columns; the summary keeps the means. */
static void test_calibration_round_trip(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_cal_report *cal = calloc(1, sizeof *cal);
    sample_calibration(cal);
    int64_t id = 0;
    assert_int_equal(db_record_calibration(f->d, &f->prov, "runs file.csv", cal, &id, &err), ST_OK);
    cJSON *rec = show(f, id);
    assert_string_equal(str(rec, "kind"), "calibration");
    check_provenance(f, rec);
    char want[128];
    snprintf(want, sizeof want, "%.1f%% fitted, %.1f%% held out", cal->mean_source_err_pct,
             cal->loso_mean_source_err_pct);
    assert_non_null(strstr(str(rec, "summary"), want));
    assert_non_null(strstr(str(rec, "summary"), "4 fits (1 rejected)"));
    const cJSON *cals = get(rec, "calibrations");
    assert_int_equal(cJSON_GetArraySize(cals), cal->ngroups);
    int i = 0;
    for (const cJSON *c = cals->child; c; c = c->next, i++) {
        const plan_cal_group *g = &cal->group[i];
        assert_string_equal(str(c, "framework"), g->framework); /* "" for a pool */
        assert_string_equal(str(c, "silicon"), g->silicon);
        assert_true(is_null(c, "gpu"));
        assert_string_equal(str(c, "file"), "runs file.csv");
        assert_int_equal((int)num(c, "rows"), g->rows);
        assert_int_equal((int)num(c, "sources"), g->sources);
        assert_int_equal((unsigned)num(c, "asked"), g->asked);
        assert_int_equal((unsigned)num(c, "fitted"), g->fitted);
        CHECK_NUMS(c, {"mean_abs_err_before_pct", g->mean_abs_err_before_pct},
                   {"mean_abs_err_after_pct", g->mean_abs_err_after_pct},
                   {"max_abs_err_after_pct", g->max_abs_err_after_pct},
                   {"iterations", g->iterations}, {"converged", g->converged},
                   {"rejected", g->rejected});
        assert_string_equal(str(c, "why"), g->why);
        const cJSON *ps = get(c, "params");
        assert_int_equal(cJSON_GetArraySize(ps), PLAN_EFF__COUNT);
        int k = 0;
        for (const cJSON *p = ps->child; p; p = p->next, k++) {
            plan_eff b = g->before, a = g->after;
            assert_string_equal(str(p, "name"), plan_eff_param_name((plan_eff_param)k));
            CHECK_NUMS(p, {"before", *plan_eff_ref(&b, (plan_eff_param)k)},
                       {"after", *plan_eff_ref(&a, (plan_eff_param)k)},
                       {"std_err", g->std_err[k]}, {"asked", (int)((g->asked >> k) & 1u)},
                       {"fitted", (int)((g->fitted >> k) & 1u)});
        }
    }
    const cJSON *srcs = get(rec, "calibration_sources");
    assert_int_equal(cJSON_GetArraySize(srcs), cal->nsources);
    i = 0;
    for (const cJSON *x = srcs->child; x; x = x->next, i++) {
        const plan_cal_source *src = &cal->source[i];
        assert_string_equal(str(x, "source_key"), src->source_key);
        assert_string_equal(str(x, "framework"), src->framework);
        assert_string_equal(str(x, "silicon"), src->silicon);
        assert_int_equal((int)num(x, "rows"), src->rows);
        assert_true(num(x, "mean_abs_err_pct") == src->mean_abs_err_pct);
        if (isnan(src->loso_mean_abs_err_pct)) /* not held out: NULL */
            assert_true(is_null(x, "loso_mean_abs_err_pct"));
        else
            assert_true(num(x, "loso_mean_abs_err_pct") == src->loso_mean_abs_err_pct);
        assert_string_equal(str(x, "loso_basis"), src->loso_basis);
    }
    cJSON_Delete(rec);

    /* nothing fitted: the record says so and has no sources */
    memset(cal, 0, sizeof *cal);
    cal->loso_mean_source_err_pct = NAN;
    assert_int_equal(db_record_calibration(f->d, &f->prov, "empty.csv", cal, &id, &err), ST_OK);
    rec = show(f, id);
    assert_non_null(strstr(str(rec, "summary"), "nothing had rows to fit"));
    assert_null(cJSON_GetObjectItemCaseSensitive(rec, "calibrations"));
    assert_null(cJSON_GetObjectItemCaseSensitive(rec, "calibration_sources"));
    cJSON_Delete(rec);
    free(cal);
}

/* A search for another framework and precision: every plan keeps them. */
static void test_plan_framework_round_trip(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_cluster c;
    plan_config cfg = f->cfg;
    assert_int_equal(plan_framework_find("megatron", &cfg.framework, &err), ST_OK);
    cfg.precision = PLAN_PREC_FP8;
    assert_int_equal(plan_cluster_parse(&f->cat, "4xp5", &c, &err), ST_OK);
    plan_result *r = calloc(1, sizeof *r);
    assert_int_equal(plan_search(&f->model, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    int64_t id = 0;
    assert_int_equal(db_record_plan(f->d, &f->prov, &f->model, &c, &cfg, r, NULL, &id, &err),
                     ST_OK);
    cJSON *rec = show(f, id);
    assert_non_null(strstr(str(rec, "summary"), "with megatron@2025 fp8"));
    const cJSON *it = get(rec, "instance_types")->child;
    assert_true(num(it, "fp8_peak_flops") == c.gpu->fp8_peak_flops && c.gpu->fp8_peak_flops > 0);
    assert_true(num(it, "gemm_ceiling") == c.gpu->gemm_ceiling);
    int n = 0;
    for (const cJSON *p = get(rec, "plans")->child; p; p = p->next, n++) {
        assert_string_equal(str(p, "framework"), "megatron@2025");
        assert_string_equal(str(p, "precision"), "fp8");
    }
    assert_int_equal(n, r->ntop + r->ngrid);
    for (int i = 0; i < r->ntop; i++)
        check_layout(cJSON_GetArrayItem(get(rec, "plans"), i), &r->top[i].layout);
    const cJSON *cfg_json = get(get(rec, "search"), "config");
    assert_string_equal(str(cfg_json, "framework"), "megatron@2025");
    assert_int_equal((int)num(cfg_json, "precision"), PLAN_PREC_FP8);
    cJSON_Delete(rec);

    /* compare sees the framework; the same layout for another framework is
     * another plan */
    db_compare_row rows[PLAN_TOPK_MAX];
    int64_t ids[] = {id};
    db_compare_filter filt = {ids, 1, NULL, NULL, 1};
    assert_int_equal(db_compare(f->d, &filt, rows, PLAN_TOPK_MAX, &n, &err), ST_OK);
    assert_int_equal(n, r->ntop);
    for (int i = 0; i < n; i++) {
        assert_string_equal(rows[i].framework, "megatron@2025");
        assert_string_equal(rows[i].precision, "fp8");
    }
    char ka[KEY_MAX_TEST], kb[KEY_MAX_TEST];
    plan_layout other = r->top[0].layout;
    other.framework = PLAN_FW_DEFAULT;
    db__match_key(&f->model, "p5", 4, 32, &r->top[0].layout, ka, sizeof ka);
    db__match_key(&f->model, "p5", 4, 32, &other, kb, sizeof kb);
    assert_string_not_equal(ka, kb);
    assert_non_null(strstr(ka, ",megatron@2025,fp8,"));
    free(r);
}

/* A measured run (what the executor will record) and compare's three
 * figures for one plan: prediction, simulation and measurement. */
static void test_run_round_trip_and_compare(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    const plan_candidate *best = &f->res.top[0];
    db_run_step steps[3] = {{.step = 1, 21.0, 7.0, 13.0, 0.5, 0.5, 9.75},
                            {.step = 2, 20.5, 6.9, 12.7, 0.4, 0.5, 9.5},
                            {.step = 3, 20.25, 6.8, 12.6, 0.4, 0.45, 9.25}};
    double peaks[4] = {33e9, 32.5e9, 31e9, 30.25e9};
    db_run run = {.status = "ok", .backend = "cpu+mpi", .measured_step_s = 20.375, .nsteps = 3,
                  .steps = steps, .nranks = 4, .rank_peak_mem_bytes = peaks};
    int64_t plan_id = 0, sim_id = 0, run_id = 0;
    plan_id = record_search(f, NULL);
    sim_config cfg;
    sim_result s;
    simulate(f, &best->layout, 0, &cfg, &s);
    assert_int_equal(db_record_simulation(f->d, &f->prov, &f->model, &f->cluster, &best->layout,
                                          &best->est, &cfg, &s, &sim_id, &err),
                     ST_OK);
    assert_int_equal(db_record_run(f->d, &f->prov, &f->model, &f->cluster, &best->layout,
                                   &best->est, &run, &run_id, &err),
                     ST_OK);
    cJSON *rec = show(f, run_id);
    const cJSON *r = get(rec, "runs")->child;
    assert_string_equal(str(r, "source"), "measured");
    assert_string_equal(str(r, "status"), "ok");
    assert_string_equal(str(r, "backend"), "cpu+mpi");
    assert_true(is_null(r, "error_text"));
    CHECK_NUMS(r, {"measured_step_s", 20.375}, {"predicted_step_s", best->est.time.step_s},
               {"measured_mem_bytes", 33e9});
    assert_rel(num(r, "error_pct"), 100 * (best->est.time.step_s - 20.375) / 20.375, 1e-12);
    const cJSON *st = get(r, "steps"), *rk = get(r, "ranks");
    assert_int_equal(cJSON_GetArraySize(st), 3);
    assert_int_equal(cJSON_GetArraySize(rk), 4);
    assert_true(num(cJSON_GetArrayItem(st, 2), "loss") == 9.25);
    assert_true(num(cJSON_GetArrayItem(st, 1), "backward_s") == 12.7);
    assert_true(num(cJSON_GetArrayItem(rk, 3), "peak_mem_bytes") == 30.25e9);
    cJSON_Delete(rec);

    /* a failed run keeps its error text */
    db_run bad = {.status = "failed", .error_text = "rank 3: CUDA out of memory",
                  .backend = "cuda+nccl"};
    int64_t bad_id = 0;
    assert_int_equal(db_record_run(f->d, &f->prov, &f->model, &f->cluster, &best->layout, NULL,
                                   &bad, &bad_id, &err),
                     ST_OK);
    rec = show(f, bad_id);
    r = get(rec, "runs")->child;
    assert_string_equal(str(r, "error_text"), "rank 3: CUDA out of memory");
    assert_true(is_null(r, "measured_step_s"));
    cJSON_Delete(rec);

    /* compare, restricted to the plan record: its best plan has all three */
    db_compare_row rows[PLAN_TOPK_MAX];
    int n = 0;
    int64_t ids[] = {plan_id};
    db_compare_filter filt = {ids, 1, "30", "p4d", 3};
    assert_int_equal(db_compare(f->d, &filt, rows, PLAN_TOPK_MAX, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_true(rows[0].predicted_s == best->est.time.step_s);
    assert_true(rows[0].simulated_s == s.step_s);
    assert_true(rows[0].measured_s == 20.375);
    assert_int_equal(rows[0].simulated_id, sim_id);
    assert_int_equal(rows[0].measured_id, run_id);
    assert_string_equal(rows[0].measured_source, "measured");
    assert_int_equal(rows[0].nodes, 16);
    assert_string_equal(rows[0].instance_type, f->cluster.inst->name);
    assert_rel(plan_error_pct(rows[0].simulated_s, rows[0].measured_s),
               100 * (s.step_s - 20.375) / 20.375, 1e-12);
    assert_true(isnan(plan_error_pct(0, 1)));
    /* two figures: the other top plans have a prediction only */
    filt.min_figures = 2;
    assert_int_equal(db_compare(f->d, &filt, rows, PLAN_TOPK_MAX, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    filt.min_figures = 1;
    assert_int_equal(db_compare(f->d, &filt, rows, PLAN_TOPK_MAX, &n, &err), ST_OK);
    assert_int_equal(n, f->res.ntop);
    /* filters that match nothing, and an id with no record */
    filt.model = "no such model";
    assert_int_equal(db_compare(f->d, &filt, rows, PLAN_TOPK_MAX, &n, &err), ST_OK);
    assert_int_equal(n, 0);
    int64_t missing[] = {999999};
    db_compare_filter bad_ids = {missing, 1, NULL, NULL, 0};
    assert_int_equal(db_compare(f->d, &bad_ids, rows, PLAN_TOPK_MAX, &n, &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "no record 999999"));
    sim_result_fini(&s);
}

/* An executed run as smdplan exec records it (schema version 4): the
 * executor's phases per step, each rank's place and totals, the derived
 * rates, the launch, the simulated step beside the prediction; compare
 * joins the three figures inside the run's own record. */
static void test_exec_run_round_trip(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    const plan_candidate *best = &f->res.top[0];
    db_run_step steps[3];
    for (int i = 0; i < 3; i++)
        steps[i] = (db_run_step){.step = i + 1, .time_s = 0.375 - 0.0625 * (i > 0),
                                 .forward_s = NAN, .backward_s = NAN, .optimizer_s = 0.03125,
                                 .comm_s = NAN, .loss = 5.5 - 0.25 * i, .phases = 1,
                                 .compute_s = 0.25, .tp_comm_s = 0.015625, .pp_wait_s = 0.0078125,
                                 .dp_comm_s = 0.0, .lr = 3e-4, .grad_norm = 1.5,
                                 .measured = i > 0};
    db_run_rank ranks[2] = {{0, 0, 0, 0, 1.25e6, 0.5, 0.03125, 0.015625, 0, 0.0625, 2.5e9},
                            {1, 0, 1, 0, 1.5e6, 0.4375, 0.03125, 0.09375, 0, 0.0625, 0}};
    int exit_status = 0;
    db_run run = {.status = "ok", .backend = "cpu+mpi", .measured_step_s = 0.3125, .nsteps = 3,
                  .steps = steps, .nranks = 2, .rank_stats = ranks, .ranks = 2, .device = "cpu",
                  .transport = "mpi", .threads_per_rank = 1, .run_host = "h1",
                  .tokens_per_step = 512, .tokens_per_s = 512 / 0.3125,
                  .model_flops_per_step = 1.25e9, .hardware_flops_per_step = 1.5e9,
                  .achieved_flops = 1.25e9 / 0.3125, .peak_flops = 2 * 1.75e11,
                  .mfu = 1.25e9 / 0.3125 / (2 * 1.75e11), .exit_status = &exit_status,
                  .measured_steps = 2, .launch_command = "mpirun -n 2 smdplan-rank",
                  .run_dir = "runs/x", .config_json = "{\"version\": 1}",
                  .scaled = "layers 40 -> 4", .plan_record_id = 3, .simulated_step_s = 0.296875,
                  .device_name = "NVIDIA H100 80GB HBM3, compute capability 9.0"};
    int64_t id = 0;
    assert_int_equal(db_record_run(f->d, &f->prov, &f->model, &f->cluster, &best->layout,
                                   &best->est, &run, &id, &err),
                     ST_OK);
    cJSON *rec = show(f, id);
    assert_non_null(strstr(str(rec, "summary"), "(2 ranks)"));
    assert_non_null(strstr(str(rec, "summary"), "simulated 0.297 s"));
    const cJSON *r = get(rec, "runs")->child;
    assert_true(num(r, "nranks") == 2 && num(r, "threads_per_rank") == 1);
    assert_string_equal(str(r, "device"), "cpu");
    assert_string_equal(str(r, "transport"), "mpi");
    assert_string_equal(str(r, "run_host"), "h1");
    CHECK_NUMS(r, {"tokens_per_s", 512 / 0.3125}, {"mfu", run.mfu}, {"peak_flops", 3.5e11},
               {"achieved_flops", 4e9}, {"hardware_flops_per_step", 1.5e9},
               {"simulated_step_s", 0.296875}, {"exit_status", 0}, {"measured_steps", 2},
               {"plan_record_id", 3});
    assert_true(is_null(r, "failed_rank"));
    assert_string_equal(str(r, "launch_command"), "mpirun -n 2 smdplan-rank");
    assert_true(num(get(r, "config"), "version") == 1); /* config_json comes back parsed */
    assert_string_equal(str(r, "scaled"), "layers 40 -> 4");
    /* the memory compared with the planner's total: the GPU's in use where a
     * rank's device reports it (rank 0's, below), else the executor's count */
    assert_true(num(r, "measured_mem_bytes") == 2.5e9);
    const cJSON *st = get(r, "steps"), *rk = get(r, "ranks");
    assert_int_equal(cJSON_GetArraySize(st), 3);
    const cJSON *s0 = cJSON_GetArrayItem(st, 0), *s2 = cJSON_GetArrayItem(st, 2);
    assert_true(num(s0, "measured") == 0 && num(s2, "measured") == 1);
    assert_true(num(s2, "compute_s") == 0.25 && num(s2, "pp_wait_s") == 0.0078125);
    assert_true(num(s2, "lr") == 3e-4 && num(s2, "grad_norm") == 1.5 && num(s2, "loss") == 5.0);
    assert_true(is_null(s2, "forward_s"));
    assert_int_equal(cJSON_GetArraySize(rk), 2);
    const cJSON *k1 = cJSON_GetArrayItem(rk, 1);
    assert_true(num(k1, "pp_rank") == 1 && num(k1, "pp_wait_s") == 0.09375);
    assert_true(num(k1, "peak_mem_bytes") == 1.5e6);
    /* version 5: the device's name, each rank's peak on the GPU (none: NULL) */
    assert_string_equal(str(r, "device_name"), "NVIDIA H100 80GB HBM3, compute capability 9.0");
    assert_true(num(cJSON_GetArrayItem(rk, 0), "device_memory_peak_bytes") == 2.5e9);
    assert_true(is_null(k1, "device_memory_peak_bytes"));
    const cJSON *pl = get(rec, "plans")->child;
    assert_true(num(pl, "simulated_step_s") == 0.296875);
    cJSON_Delete(rec);

    /* compare: all three figures of the plan, from this one record */
    db_compare_row row;
    int n = 0;
    int64_t ids[] = {id};
    db_compare_filter filt = {ids, 1, NULL, NULL, 3};
    assert_int_equal(db_compare(f->d, &filt, &row, 1, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_true(row.predicted_s == best->est.time.step_s && row.simulated_s == 0.296875 &&
                row.measured_s == 0.3125);
    assert_true(row.predicted_id == id && row.simulated_id == id && row.measured_id == id);
    db_measured m;
    assert_int_equal(db_measured_runs(f->d, id, &m, 1, &n, &err), ST_OK);
    assert_true(n == 1 && m.simulated_s == 0.296875 && m.measured_s == 0.3125);

    /* a failed run keeps the failing rank and mpirun's status */
    int failed = 1, status = 137;
    db_run bad = {.status = "failed", .error_text = "rank 1 killed by signal 9",
                  .backend = "cpu+mpi", .ranks = 2, .failed_rank = &failed,
                  .exit_status = &status, .launch_command = "mpirun -n 2 smdplan-rank"};
    assert_int_equal(db_record_run(f->d, &f->prov, &f->model, &f->cluster, &best->layout,
                                   &best->est, &bad, &id, &err),
                     ST_OK);
    /* what calibrate --runs fits to: the run that ended ok, not the failed one */
    db_exec_run x[4];
    assert_int_equal(db_exec_runs(f->d, x, 4, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_true(x[0].measured_s == 0.3125 && x[0].predicted_s == best->est.time.step_s &&
                x[0].simulated_s == 0.296875 && x[0].ranks == 2);
    assert_string_equal(x[0].device, "cpu");
    assert_string_equal(x[0].transport, "mpi");
    assert_string_equal(x[0].device_name, "NVIDIA H100 80GB HBM3, compute capability 9.0");
    assert_string_equal(x[0].instance_type, f->cluster.inst->name);
    assert_string_equal(x[0].framework, plan_framework_get(best->layout.framework)->key);
    rec = show(f, id);
    r = get(rec, "runs")->child;
    assert_true(num(r, "failed_rank") == 1 && num(r, "exit_status") == 137);
    assert_true(is_null(r, "measured_step_s") && is_null(r, "mfu") && is_null(r, "device_name"));
    assert_non_null(strstr(str(rec, "summary"), "run failed (2 ranks): rank 1 killed by signal 9"));
    cJSON_Delete(rec);
}

/* A bench record and its measurements read back as they were measured. */
static void test_bench_round_trip(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_bench_cpu *cpu = calloc(1, sizeof *cpu), *cpu2 = calloc(1, sizeof *cpu2);
    plan_bench_comm *comm = calloc(1, sizeof *comm), *comm2 = calloc(1, sizeof *comm2);
    assert_true(cpu && cpu2 && comm && comm2);
    snprintf(cpu->host, sizeof cpu->host, "h1");
    snprintf(cpu->cpu_model, sizeof cpu->cpu_model, "Some CPU");
    snprintf(cpu->blas, sizeof cpu->blas, "OpenBLAS 0.3.21");
    cpu->cores = 2;
    cpu->mem_bytes = 25e9;
    cpu->nthreads = 2;
    cpu->threads[0] = 1;
    cpu->threads[1] = 2;
    for (int i = 0; i < 6; i++) {
        int64_t d = 128 << (i % 3);
        plan_bench_gemm *g = &cpu->gemm[cpu->ngemm++];
        *g = (plan_bench_gemm){"sgemm", 1 + i / 3, d, d, 3 * d, 10 + i, 1e-3 * (i + 1),
                               2.0 * d * d * 3 * d / (1e-3 * (i + 1)), i % 3};
        if (i % 2) {
            memset(g->kind, 0, sizeof g->kind);
            snprintf(g->kind, sizeof g->kind, "fwd");
        }
    }
    snprintf(cpu->device, sizeof cpu->device, "cpu");
    cpu->elem[cpu->nelem++] = (plan_bench_elem){"gelu_fwd", 1, 1 << 20, 7, 0.0125, 0.0125 / (1 << 20)};
    cpu->elem[cpu->nelem++] = (plan_bench_elem){"optimizer", 2, 1 << 22, 5, 0.03, 0.03 / (1 << 22)};
    cpu->mem[cpu->nmem++] = (plan_bench_mem){1, 6.7e7, 5, 4.25e-3, 24 * 6.7e7 / 8 / 4.25e-3};
    cpu->mem[cpu->nmem++] = (plan_bench_mem){2, 6.7e7, 5, 2.5e-3, 24 * 6.7e7 / 8 / 2.5e-3};
    snprintf(comm->transport, sizeof comm->transport, "mpi");
    snprintf(comm->host, sizeof comm->host, "h1");
    comm->ranks = 2;
    comm->threads_per_rank = 1;
    const char *ops[] = {"allreduce", "sendrecv"};
    for (int i = 0; i < 4; i++) {
        plan_bench_coll *c = &comm->v[comm->n++];
        snprintf(c->op, sizeof c->op, "%s", ops[i % 2]);
        c->ranks = 2;
        c->bytes = 8 << (4 * i);
        c->iters = 20;
        c->time_s = 1e-6 * (i + 1);
        c->algbw_bps = c->bytes / c->time_s;
        c->busbw_bps = c->algbw_bps * plan_bench_busbw_factor(c->op, 2);
    }
    db_bench_entry e = {.instance_name = "host-h1", .gpu_name = "cpu-h1",
                        .catalog_file = "host.json", .catalog_json = "{}", .threads_per_rank = 1,
                        .peak_flops = 1.8e11, .gemm_dim_half = 17.5, .gemm_rms_log_err = 0.03,
                        .misaligned_factor = 0.97, .hbm_bps = 1.4e10, .hbm_eff = 0.5,
                        .act_fwd_s = 1e-8, .act_bwd_s = 1.6e-8, .glu_fwd_s = 3e-9,
                        .glu_bwd_s = 4e-9, .opt_param_s = 4e-9, .p2p_bps = 5e9,
                        .p2p_latency_s = 1e-6, .allreduce_busbw_bps = 4e9,
                        .allreduce_latency_s = 2e-6};
    int64_t id = 0, got = 0;
    assert_int_equal(db_record_bench(f->d, &f->prov, cpu, comm, &e, &id, &err), ST_OK);
    int have_cpu = 0, have_comm = 0;
    assert_int_equal(db_bench_read(f->d, 0, "h1", cpu2, &have_cpu, comm2, &have_comm, &got, &err),
                     ST_OK);
    assert_true(have_cpu && have_comm && got == id);
    assert_memory_equal(cpu, cpu2, sizeof *cpu);
    assert_memory_equal(comm, comm2, sizeof *comm);
    /* by id, and a host with no bench */
    assert_int_equal(db_bench_read(f->d, id, NULL, cpu2, NULL, NULL, NULL, NULL, &err), ST_OK);
    assert_int_equal(db_bench_read(f->d, 0, "h2", cpu2, NULL, NULL, NULL, NULL, &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "no bench record of host h2"));
    st_err_clear(&err);
    cJSON *rec = show(f, id);
    assert_string_equal(str(rec, "kind"), "bench");
    assert_non_null(strstr(str(rec, "summary"), "bench h1: 2 cores, sgemm 180.0 GFLOP/s per rank"));
    const cJSON *b = get(rec, "bench");
    assert_string_equal(str(b, "instance_name"), "host-h1");
    assert_true(num(b, "peak_flops") == 1.8e11 && num(b, "ranks") == 2);
    assert_int_equal(cJSON_GetArraySize(get(b, "gemm")), 6);
    assert_int_equal(cJSON_GetArraySize(get(b, "elem")), 2);
    assert_true(num(b, "act_bwd_s") == 1.6e-8 && num(b, "hbm_eff") == 0.5);
    assert_string_equal(str(b, "device"), "cpu");
    assert_int_equal(cJSON_GetArraySize(get(b, "mem")), 2);
    assert_int_equal(cJSON_GetArraySize(get(b, "comm")), 4);
    cJSON_Delete(rec);
    /* a record of another kind is not a bench */
    assert_int_equal(db_bench_read(f->d, 0, NULL, NULL, NULL, NULL, NULL, NULL, &err), ST_OK);
    db_summary h[4];
    int n = 0;
    assert_int_equal(db_history(f->d, "bench", h, 4, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    free(cpu);
    free(cpu2);
    free(comm);
    free(comm2);
}

static void test_history(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    int64_t ids[6];
    for (int i = 0; i < 6; i++) {
        plan_cal_report c;
        small_calibration(&c, i);
        if (i % 2)
            assert_int_equal(db_record_calibration(f->d, &f->prov, "x.csv", &c, &ids[i], &err),
                             ST_OK);
        else
            assert_int_equal(db_record_plan(f->d, &f->prov, &f->model, &f->cluster, &f->cfg,
                                            &f->res, NULL, &ids[i], &err),
                             ST_OK);
    }
    db_summary h[10];
    int n = 0;
    assert_int_equal(db_history(f->d, NULL, h, 10, &n, &err), ST_OK);
    assert_int_equal(n, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(h[i].id, ids[5 - i]); /* newest first */
    assert_int_equal(db_history(f->d, "calibration", h, 2, &n, &err), ST_OK);
    assert_int_equal(n, 2);
    assert_int_equal(h[0].id, ids[5]);
    assert_int_equal(h[1].id, ids[3]);
    assert_string_equal(h[0].kind, "calibration");
    assert_int_equal(db_history(f->d, "simulation", h, 10, &n, &err), ST_OK);
    assert_int_equal(n, 0);
    int64_t c = 0;
    assert_int_equal(db_count(f->d, "plan", &c, &err), ST_OK);
    assert_int_equal(c, 3);
    assert_int_equal(db_history(f->d, "plans", h, 10, &n, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "unknown record kind 'plans'"));
    st_err_clear(&err);
    cJSON *rec = NULL;
    assert_int_equal(db_show(f->d, 424242, &rec, &err), ST_ENOENT);
    assert_null(rec);
}

/* A record that fails half-way leaves nothing: one transaction. The
 * failure is provoked with a trigger and keeps SQLite's message. */
static void test_failed_record_leaves_nothing(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    char *msg = NULL;
    assert_int_equal(sqlite3_exec(f->d->h,
                                  "CREATE TRIGGER boom BEFORE INSERT ON predictions WHEN "
                                  "(SELECT count(*) FROM predictions) >= 2 BEGIN "
                                  "SELECT RAISE(ABORT, 'injected failure'); END;",
                                  NULL, NULL, &msg),
                     SQLITE_OK);
    int64_t id = -1;
    assert_int_not_equal(db_record_plan(f->d, &f->prov, &f->model, &f->cluster, &f->cfg, &f->res,
                                        NULL, &id, &err),
                         ST_OK);
    assert_int_equal(id, -1);
    assert_non_null(strstr(err.msg, "injected failure"));
    assert_non_null(strstr(err.msg, f->path));
    static const char *const tables[] = {"records", "models", "instance_types", "searches",
                                         "plans", "predictions", "prediction_stages", NULL};
    for (int i = 0; tables[i]; i++) {
        char sql[96];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
        if (raw_int(f->d, sql) != 0)
            fail_msg("%s has rows after a failed record", tables[i]);
    }
    assert_true(sqlite3_get_autocommit(f->d->h)); /* no transaction left open */
    /* the handle still records */
    assert_int_equal(sqlite3_exec(f->d->h, "DROP TRIGGER boom", NULL, NULL, &msg), SQLITE_OK);
    st_err_clear(&err);
    id = record_search(f, NULL);
}

typedef struct sel {
    int rows;
    double sum;
    char kind[16];
} sel;

static int on_row(void *ctx, int ncols, const char *const *names, const db_value *v)
{
    sel *s = ctx;
    assert_int_equal(ncols, 2);
    assert_string_equal(names[0], "kind");
    snprintf(s->kind, sizeof s->kind, "%s", v[0].text);
    s->sum += v[1].num;
    s->rows++;
    return 0;
}

static void test_select(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_cal_report c;
    small_calibration(&c, 2);
    assert_int_equal(db_record_calibration(f->d, &f->prov, "x.csv", &c, NULL, &err), ST_OK);
    sel s = {0};
    const char *params[] = {"calibration"};
    assert_int_equal(db_select(f->d,
                               "SELECT r.kind, c.rows FROM records r JOIN calibrations c ON "
                               "c.record_id = r.id WHERE r.kind = ?1",
                               params, 1, on_row, &s, &err),
                     ST_OK);
    assert_int_equal(s.rows, 1);
    assert_string_equal(s.kind, "calibration");
    assert_true(s.sum == c.group[0].rows);
    assert_int_equal(db_select(f->d, "DELETE FROM records", NULL, 0, on_row, &s, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "read-only SELECT"));
    int64_t n = 0;
    assert_int_equal(db_count(f->d, NULL, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    st_err_clear(&err);
    assert_int_equal(db_select(f->d, "SELECT no_such_column FROM records", NULL, 0, on_row, &s, &err),
                     ST_EINTERNAL);
    assert_non_null(strstr(err.msg, "no such column: no_such_column"));
}

/* A reader cannot record. */
static void test_reader_refuses_records(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_cal_report c;
    small_calibration(&c, 1);
    assert_int_equal(db_record_calibration(f->d, &f->prov, "x.csv", &c, NULL, &err), ST_OK);
    db *r = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &r, &err), ST_OK);
    assert_int_equal(db_record_calibration(r, &f->prov, "x.csv", &c, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "opened for reading"));
    db_close(r);
}


/* SQLite's columns of a layout and a model are the planner's field tables
 * (planner/plan_fields.c): the same names, members and sizes, in the same
 * order, so a field has one spelling in SQLite, CONFIG.json and --json;
 * the model's MLP has no column (the architecture it follows from is
 * recorded), its parameter counts come after the table. Recording and
 * reading them back is test_plan_round_trip's. */
static void test_columns_are_the_field_tables(void **state)
{
    (void)state;
    static const struct {
        const db__fields *(*db)(void);
        const plan_fields *plan;
        const char *what;
    } pairs[] = {{db__layout_list, &plan_layout_fields, "layout"},
                 {db__model_list, &plan_model_fields, "model"}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const db__fields *d = pairs[k].db();
        const plan_fields *t = pairs[k].plan;
        int c = 0;
        for (int i = 0; i < t->n; i++) {
            const plan_field *f = &t->f[i];
            if (f->kind == PLAN_FK_MLP)
                continue;
            if (c >= d->n || strcmp(d->v[c].col, f->name) || d->v[c].off != f->offset ||
                d->v[c].cap != f->size)
                fail_msg("%s field %s: not column %d", pairs[k].what, f->name, c);
            c++;
        }
        assert_int_equal(d->n - c, k == 0 ? 0 : 4); /* the model's params_layer ... */
    }
    assert_non_null(plan_field_find(&plan_model_fields, "layers"));
    assert_string_equal(plan_field_renamed("micro_batch_size"), "micro_batch");
    assert_string_equal(plan_field_renamed("optimizer_sharding"), "sharding");
    assert_null(plan_field_renamed("micro_batch"));
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_are_the_field_tables),
        cmocka_unit_test_setup_teardown(test_plan_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan_nothing_fits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simulation_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validation_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calibration_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan_framework_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_round_trip_and_compare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_run_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bench_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_record_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_refuses_records, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
