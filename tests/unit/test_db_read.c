/*
 * test_db_read.c: the typed readers the report draws from, on real records:
 * db_plans and db_plan_stages give back the layouts and estimates a search
 * recorded (doubles exactly, every stage's memory by term), db_grid the best
 * layout of each TP x PP pair (of one framework and precision), db_scaling
 * one point per instance type and count, db_measured_runs the published and
 * executor runs, db_calibration a calibration report bit for bit.
 */
#include "data/db_int.h"
#include "planner/plan_framework.h"
#include "test_db_fixture.h"

/* ---- read back into structs ---- */

static void same_layout(const plan_model *m, const plan_layout *a, const plan_layout *b)
{
    char ka[1024], kb[1024];
    db__match_key(m, "x", 1, 1, a, ka, sizeof ka);
    db__match_key(m, "x", 1, 1, b, kb, sizeof kb);
    assert_string_equal(ka, kb);
}

static void same_estimate(const plan_estimate *a, const plan_estimate *b)
{
    assert_int_equal(a->reject, b->reject);
    assert_memory_equal(&a->mem, &b->mem, sizeof a->mem);   /* doubles only */
    assert_memory_equal(&a->time, &b->time, sizeof a->time);
    assert_int_equal(a->nstages, b->nstages);
    assert_int_equal(a->worst_stage, b->worst_stage);
    for (int i = 0; i < a->nstages; i++) {
        assert_int_equal(a->stage_layers[i], b->stage_layers[i]);
        assert_true(a->stage_mem_bytes[i] == b->stage_mem_bytes[i]);
        assert_int_equal(a->stage_inflight[i], b->stage_inflight[i]);
    }
    assert_true(a->tokens_per_s == b->tokens_per_s && a->mfu == b->mfu && a->hfu == b->hfu);
    assert_true(a->cost_per_mtokens == b->cost_per_mtokens);
    assert_true(a->capacity_bytes == b->capacity_bytes);
}

static void test_read_back_structs(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    double sim[PLAN_TOPK_MAX] = {0};
    sim[0] = 12.5;
    int64_t id = record_search(f, sim);
    int cap = PLAN_TOPK_MAX + PLAN_GRID_MAX;
    db_plan *plans = calloc((size_t)cap, sizeof *plans);
    int n = 0;
    assert_int_equal(db_plans(f->d, id, plans, cap, &n, &err), ST_OK);
    assert_int_equal(n, f->res.ntop + f->res.ngrid);
    for (int i = f->res.ntop; i < n; i++)
        assert_string_equal(plans[i].role, "grid");
    n = f->res.ntop;
    for (int i = 0; i < n; i++) {
        assert_string_equal(plans[i].role, "top");
        assert_int_equal(plans[i].rank, i + 1);
        assert_int_equal(plans[i].record_id, id);
        assert_string_equal(plans[i].instance_type, f->cluster.inst->name);
        assert_string_equal(plans[i].gpu, f->cluster.gpu->name);
        assert_int_equal(plans[i].nodes, 16);
        assert_true(plans[i].have_est);
        same_layout(&f->model, &plans[i].layout, &f->res.top[i].layout);
        assert_int_equal(plans[i].layout.framework, f->res.top[i].layout.framework);
        assert_int_equal(plans[i].layout.precision, f->res.top[i].layout.precision);
        same_estimate(&plans[i].est, &f->res.top[i].est);
        assert_true(plans[i].simulated_s == sim[i]);
    }
    /* every stage by term, as the planner gives it; the worst is est.mem */
    db_plan_stage *g = calloc(PLAN_PP_MAX, sizeof *g);
    plan_mem *want = calloc(PLAN_PP_MAX, sizeof *want);
    for (int i = 0; i < n; i++) {
        const plan_candidate *cd = &f->res.top[i];
        int ns = 0;
        assert_int_equal(db_plan_stages(f->d, plans[i].id, g, PLAN_PP_MAX, &ns, &err), ST_OK);
        assert_int_equal(ns, cd->layout.pp);
        assert_int_equal(plan_stages_mem(&f->model, &f->cluster, &cd->layout, want, PLAN_PP_MAX,
                                         &err),
                         ST_OK);
        for (int k = 0; k < ns; k++) {
            assert_int_equal(g[k].stage, k);
            assert_int_equal(g[k].layers, cd->est.stage_layers[k]);
            assert_int_equal(g[k].inflight, cd->est.stage_inflight[k]);
            assert_true(g[k].mem_bytes == cd->est.stage_mem_bytes[k]);
            assert_true(g[k].have_terms);
            assert_memory_equal(&g[k].mem, &want[k], sizeof want[k]);
        }
        assert_memory_equal(&g[cd->est.worst_stage].mem, &cd->est.mem, sizeof cd->est.mem);
        if (cd->layout.pp > 1) { /* a smaller max is honoured */
            assert_int_equal(db_plan_stages(f->d, plans[i].id, g, 1, &ns, &err), ST_OK);
            assert_int_equal(ns, 1);
        }
    }
    int ns = 5;
    assert_int_equal(db_plan_stages(f->d, 777777, g, PLAN_PP_MAX, &ns, &err), ST_OK);
    assert_int_equal(ns, 0);
    free(want);
    free(g);

    /* a smaller max is honoured */
    assert_int_equal(db_plans(f->d, id, plans, 2, &n, &err), ST_OK);
    assert_int_equal(n, 2);
    assert_int_equal(db_plans(f->d, 777777, plans, 2, &n, &err), ST_ENOENT);
    free(plans);
    st_err_clear(&err);

    plan_model m;
    assert_int_equal(db_model(f->d, id, &m, &err), ST_OK);
    assert_string_equal(m.name, f->model.name);
    assert_string_equal(m.source, f->model.source);
    assert_int_equal(m.arch, f->model.arch);
    assert_int_equal(m.params, f->model.params);
    assert_int_equal(m.layers, f->model.layers);
    assert_int_equal(m.kv_heads, f->model.kv_heads);
    assert_int_equal(m.params_final_norm, f->model.params_final_norm);
    /* the head size is recorded as the planner used it (hidden / heads
     * here) and read back as derived; no window */
    assert_int_equal(raw_int(f->d, "SELECT count(*) FROM models WHERE head_dim * heads = hidden"
                                   " AND sliding_window = 0"),
                     1);
    assert_int_equal(m.head_dim, 0);
    assert_int_equal(m.sliding_window, 0);

    /* a head size apart from hidden / heads and a window (Gemma 2 9B's
     * shape) come back whole, with their own match key */
    plan_model gm = {.arch = PLAN_ARCH_LLAMA, .layers = 42, .hidden = 3584, .heads = 16,
                     .kv_heads = 8, .head_dim = 256, .ffn = 14336, .seq = 8192,
                     .vocab = 256000, .tied_embedding = 1, .mlp = PLAN_MLP_ARCH,
                     .dropout = PLAN_DROPOUT_ARCH, .sliding_window = 4096,
                     .sliding_window_pattern = 2};
    memcpy(gm.name, f->model.name, sizeof gm.name);
    memcpy(gm.source, f->model.source, sizeof gm.source);
    assert_int_equal(plan_model_finish(&gm, &err), ST_OK);
    plan_result *gr = calloc(1, sizeof *gr);
    assert_int_equal(plan_search(&gm, &f->cluster, &f->cfg, gr, &err), ST_OK);
    assert_true(gr->ntop >= 1);
    int64_t gid = 0;
    assert_int_equal(db_record_plan(f->d, &f->prov, &gm, &f->cluster, &f->cfg, gr, NULL, &gid, &err),
                     ST_OK);
    plan_model back;
    assert_int_equal(db_model(f->d, gid, &back, &err), ST_OK);
    assert_int_equal(back.head_dim, 256);
    assert_int_equal(back.sliding_window, 4096);
    assert_int_equal(back.sliding_window_pattern, 2);
    assert_int_equal(back.params, gm.params);
    char kg[1024], km[1024];
    db__match_key(&gm, "x", 1, 1, &gr->top[0].layout, kg, sizeof kg);
    assert_non_null(strstr(kg, "|D256|W4096/2|"));
    db__match_key(&f->model, "x", 1, 1, &gr->top[0].layout, km, sizeof km);
    assert_null(strstr(km, "|D"));
    free(gr);

    /* a simulation with its trace */
    const plan_candidate *best = &f->res.top[0];
    sim_config cfg, cfg2;
    sim_result s, r;
    simulate(f, &best->layout, 1, &cfg, &s);
    cfg.jitter_sigma = 0.0625;
    int64_t sid = 0;
    assert_int_equal(db_record_simulation(f->d, &f->prov, &f->model, &f->cluster, &best->layout,
                                          &best->est, &cfg, &s, &sid, &err),
                     ST_OK);
    assert_int_equal(db_simulation(f->d, sid, &cfg2, &r, &err), ST_OK);
    assert_true(cfg2.seed == cfg.seed && cfg2.jitter_sigma == cfg.jitter_sigma);
    assert_int_equal(cfg2.keep_trace, 1);
    assert_true(r.step_s == s.step_s && r.pipeline_s == s.pipeline_s);
    assert_true(r.bubble_fraction == s.bubble_fraction && r.p99_s == s.p99_s);
    assert_true(r.events == s.events && r.steps == s.steps && r.pp == s.pp);
    assert_true(r.critical_tail_s == s.critical_tail_s && r.critical_ops == s.critical_ops);
    for (int k = 0; k < s.pp; k++) {
        assert_true(r.stage[k].busy_s == s.stage[k].busy_s);
        assert_true(r.stage[k].bubble_fraction == s.stage[k].bubble_fraction);
        assert_int_equal(r.stage[k].peak_inflight, s.stage[k].peak_inflight);
        assert_true(r.stage[k].peak_act_bytes == s.stage[k].peak_act_bytes);
        assert_true(r.stage[k].send_busy_s == s.stage[k].send_busy_s);
        assert_true(r.stage[k].dp_busy_s == s.stage[k].dp_busy_s);
    }
    assert_int_equal(r.ntrace, s.ntrace);
    for (int k = 0; k < s.ntrace; k++) {
        const sim_trace_rec *a = &r.trace[k], *b = &s.trace[k];
        assert_int_equal(a->stage, b->stage);
        assert_int_equal(a->stream, b->stream);
        assert_int_equal(a->kind, b->kind);
        assert_int_equal(a->chunk, b->chunk);
        assert_int_equal(a->microbatch, b->microbatch);
        assert_int_equal(a->start_ns, b->start_ns);
        assert_int_equal(a->end_ns, b->end_ns);
    }
    sim_result_fini(&r);
    sim_result_fini(&s);
    assert_int_equal(db_simulation(f->d, id, NULL, &r, &err), ST_ENOENT);
    assert_null(r.trace);
}

/* The grid gathers every record of the same shape and cluster; a search
 * with TP and PP fixed fills its cell. */
static void test_grid(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    int64_t id = record_search(f, NULL), id2 = 0;
    plan_config cfg = f->cfg;
    cfg.tp = 8;
    cfg.pp = 4;
    plan_result *r = calloc(1, sizeof *r);
    assert_int_equal(plan_search(&f->model, &f->cluster, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    assert_int_equal(db_record_plan(f->d, &f->prov, &f->model, &f->cluster, &cfg, r, NULL, &id2,
                                    &err),
                     ST_OK);
    /* another cluster: not in this grid */
    plan_cluster other;
    assert_int_equal(plan_cluster_parse(&f->cat, "8xp4d", &other, &err), ST_OK);
    plan_result *r2 = calloc(1, sizeof *r2);
    assert_int_equal(plan_search(&f->model, &other, &f->cfg, r2, &err), ST_OK);
    assert_int_equal(db_record_plan(f->d, &f->prov, &f->model, &other, &f->cfg, r2, NULL, NULL,
                                    &err),
                     ST_OK);
    /* the same shape and cluster for another framework: a grid of its own */
    plan_config mcfg = f->cfg;
    int64_t mid = 0;
    assert_int_equal(plan_framework_find("megatron", &mcfg.framework, &err), ST_OK);
    plan_result *r3 = calloc(1, sizeof *r3);
    assert_int_equal(plan_search(&f->model, &f->cluster, &mcfg, r3, &err), ST_OK);
    assert_true(r3->ntop > 0);
    assert_int_equal(db_record_plan(f->d, &f->prov, &f->model, &f->cluster, &mcfg, r3, NULL, &mid,
                                    &err),
                     ST_OK);
    db_grid_cell cells[64];
    int n = 0;
    assert_int_equal(db_grid(f->d, mid, cells, 64, &n, &err), ST_OK);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        assert_string_equal(cells[i].framework, "megatron@2025");
        assert_string_equal(cells[i].precision, "bf16");
        if (cells[i].tp == r3->top[0].layout.tp && cells[i].pp == r3->top[0].layout.pp)
            assert_true(cells[i].step_s == r3->top[0].est.time.step_s);
    }
    free(r3);
    assert_int_equal(db_grid(f->d, id, cells, 64, &n, &err), ST_OK);
    int found_best = 0, found_fixed = 0;
    for (int i = 0; i < n; i++) {
        assert_string_equal(cells[i].framework, plan_framework_get(PLAN_FW_DEFAULT)->key);
        if (i > 0)
            assert_true(cells[i - 1].tp < cells[i].tp ||
                        (cells[i - 1].tp == cells[i].tp && cells[i - 1].pp < cells[i].pp));
        /* a pair where nothing fits keeps its closest miss (SMP shards
         * parameters only without a pipeline, so some pairs do not fit) */
        assert_true(!cells[i].feasible || cells[i].step_s > 0);
        if (cells[i].tp == f->res.top[0].layout.tp && cells[i].pp == f->res.top[0].layout.pp) {
            found_best = 1;
            assert_true(cells[i].step_s == f->res.top[0].est.time.step_s);
        }
        if (cells[i].tp == 8 && cells[i].pp == 4) {
            found_fixed = 1;
            assert_true(cells[i].step_s <= r->top[0].est.time.step_s);
        }
        /* no cell is slower than some recorded plan of its (tp, pp) */
        for (int k = 0; k < f->res.ntop; k++)
            if (f->res.top[k].layout.tp == cells[i].tp && f->res.top[k].layout.pp == cells[i].pp)
                assert_true(cells[i].step_s <= f->res.top[k].est.time.step_s);
    }
    assert_true(found_best && found_fixed);
    /* the same grid from either record */
    db_grid_cell cells2[64];
    int n2 = 0;
    assert_int_equal(db_grid(f->d, id2, cells2, 64, &n2, &err), ST_OK);
    assert_int_equal(n2, n);
    free(r);
    free(r2);
}

static void test_scaling_and_measured(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_cluster cl[3];
    plan_candidate cd[3];
    const char *const spec[3] = {"4xp5", "16xp4d", "8xp4d"};
    plan_config cfg = f->cfg; /* a stack that runs on p5 (SMP v1 does not) */
    assert_int_equal(plan_framework_find("megatron", &cfg.framework, &err), ST_OK);
    int64_t id = record_options(f, spec, &cfg, cl, cd);
    db_scaling_point pts[8];
    int n = 0;
    assert_int_equal(db_scaling(f->d, id, pts, 8, &n, &err), ST_OK);
    assert_int_equal(n, 3);
    /* by type, then count: p4d 8, p4d 16, p5 4 */
    assert_string_equal(pts[0].instance_type, cl[2].inst->name);
    assert_int_equal(pts[0].nodes, 8);
    assert_int_equal(pts[1].nodes, 16);
    assert_string_equal(pts[2].instance_type, cl[0].inst->name);
    assert_true(pts[1].tokens_per_s == cd[1].est.tokens_per_s);
    assert_true(pts[1].cost_per_mtokens == cd[1].est.cost_per_mtokens);
    assert_int_equal(pts[1].gpus, cl[1].gpus);
    for (int i = 0; i < n; i++) {
        assert_string_equal(pts[i].framework, plan_framework_get(cfg.framework)->key);
        assert_string_equal(pts[i].precision, "bf16");
    }

    /* measured runs: a published set and an executor run */
    db_measured runs[8];
    assert_int_equal(db_measured_runs(f->d, 0, runs, 8, &n, &err), ST_OK);
    assert_int_equal(n, 0);
    db_run_step steps[1] = {{.step = 1, 21.0, 7.0, 13.0, 0.5, 0.5, 9.75}};
    db_run run = {.status = "ok", .backend = "cpu", .measured_step_s = 21.0, .nsteps = 1,
                  .steps = steps};
    int64_t rid = 0;
    assert_int_equal(db_record_run(f->d, &f->prov, &f->model, &f->cluster, &f->res.top[0].layout,
                                   &f->res.top[0].est, &run, &rid, &err),
                     ST_OK);
    assert_int_equal(db_measured_runs(f->d, 0, runs, 8, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_string_equal(runs[0].source, "measured");
    assert_int_equal(runs[0].record_id, rid);
    assert_true(runs[0].measured_s == 21.0);
    assert_true(runs[0].predicted_s == f->res.top[0].est.time.step_s);
    assert_string_equal(runs[0].model, f->model.name);
    assert_string_equal(runs[0].framework, plan_framework_get(f->res.top[0].layout.framework)->key);
    assert_string_equal(runs[0].precision, plan_precision_name(f->res.top[0].layout.precision));
    assert_int_equal(db_measured_runs(f->d, rid, runs, 8, &n, &err), ST_OK);
    assert_int_equal(n, 1);
}

/* Two doubles are the same bits (NAN included: the same "not a number"). */
static void same_double(double a, double b)
{
    if (isnan(a) || isnan(b))
        assert_true(isnan(a) && isnan(b));
    else
        assert_memory_equal(&a, &b, sizeof a);
}

static void same_report(const plan_cal_report *a, const plan_cal_report *b)
{
    assert_int_equal(a->ngroups, b->ngroups);
    for (int i = 0; i < a->ngroups; i++) {
        const plan_cal_group *x = &a->group[i], *y = &b->group[i];
        assert_string_equal(x->framework, y->framework);
        assert_string_equal(x->silicon, y->silicon);
        assert_int_equal(x->rows, y->rows);
        assert_int_equal(x->sources, y->sources);
        assert_int_equal(x->asked, y->asked);
        assert_int_equal(x->fitted, y->fitted);
        plan_eff xb = x->before, yb = y->before, xa = x->after, ya = y->after;
        for (int k = 0; k < PLAN_EFF__COUNT; k++) {
            same_double(*plan_eff_ref(&xb, (plan_eff_param)k), *plan_eff_ref(&yb, (plan_eff_param)k));
            same_double(*plan_eff_ref(&xa, (plan_eff_param)k), *plan_eff_ref(&ya, (plan_eff_param)k));
            same_double(x->std_err[k], y->std_err[k]);
        }
        same_double(x->mean_abs_err_before_pct, y->mean_abs_err_before_pct);
        same_double(x->mean_abs_err_after_pct, y->mean_abs_err_after_pct);
        same_double(x->max_abs_err_after_pct, y->max_abs_err_after_pct);
        assert_int_equal(x->iterations, y->iterations);
        assert_int_equal(x->converged, y->converged);
        assert_int_equal(x->rejected, y->rejected);
        assert_string_equal(x->why, y->why);
    }
    assert_int_equal(a->nsources, b->nsources);
    for (int i = 0; i < a->nsources; i++) {
        const plan_cal_source *x = &a->source[i], *y = &b->source[i];
        assert_string_equal(x->source_key, y->source_key);
        assert_string_equal(x->framework, y->framework);
        assert_string_equal(x->silicon, y->silicon);
        assert_int_equal(x->rows, y->rows);
        same_double(x->mean_abs_err_pct, y->mean_abs_err_pct);
        same_double(x->loso_mean_abs_err_pct, y->loso_mean_abs_err_pct);
        assert_string_equal(x->loso_basis, y->loso_basis);
    }
    assert_int_equal(a->rows_used, b->rows_used);
    same_double(a->mean_source_err_pct, b->mean_source_err_pct);
    same_double(a->max_source_err_pct, b->max_source_err_pct);
    same_double(a->loso_mean_source_err_pct, b->loso_mean_source_err_pct);
    same_double(a->loso_max_source_err_pct, b->loso_max_source_err_pct);
}

/* A calibration report comes back as it was recorded: pools, a rejected
 * fit, sources held out and not; a report of one fit without LOSO. */
static void test_calibration(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    plan_cal_report *want = calloc(1, sizeof *want), *got = calloc(1, sizeof *got);
    sample_calibration(want);
    int64_t id = 0, id2 = 0, pid = 0;
    assert_int_equal(db_record_calibration(f->d, &f->prov, "runs.csv", want, &id, &err), ST_OK);
    assert_int_equal(db_calibration(f->d, id, got, &err), ST_OK);
    same_report(got, want);
    small_calibration(want, 7);
    assert_int_equal(db_record_calibration(f->d, &f->prov, "runs.csv", want, &id2, &err), ST_OK);
    assert_int_equal(db_calibration(f->d, id2, got, &err), ST_OK);
    same_report(got, want);
    assert_true(isnan(got->loso_mean_source_err_pct));

    /* a record of another kind, and no record */
    pid = record_search(f, NULL);
    assert_int_equal(db_calibration(f->d, pid, got, &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "holds no calibration"));
    st_err_clear(&err);
    assert_int_equal(db_calibration(f->d, 888888, got, &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "no record 888888"));
    free(got);
    free(want);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_back_structs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scaling_and_measured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calibration, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
