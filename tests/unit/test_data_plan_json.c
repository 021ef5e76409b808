/*
 * test_data_plan_json.c: a plan's answer as JSON (data/data_plan_json.c)
 * and the error band of its step (data/data_band_plan.c): the plan's terms
 * under their names with whole bytes, the document's band and step ranges
 * (t (1 +- b/100)), the training time, the caller's extra objects, the
 * infeasible answer, a preset's reference and a simulation.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data_band_plan.h"
#include "data/data_plan_json.h"
#include "planner/plan_framework.h"
#include "test_json.h"
#include "test_models.h"

static void plan_and_terms(void **state)
{
    const test_searched *s = *state;
    assert_true(s->r->ntop > 0);
    const plan_candidate *p = &s->r->top[0];
    cJSON *j = data_json_plan(p);
    assert_int_equal(num(j, "tp"), p->layout.tp);
    assert_int_equal(num(j, "pp"), p->layout.pp);
    const cJSON *mem = cJSON_GetObjectItem(j, "memory_per_gpu_bytes");
    double total = num(mem, "total");
    assert_true(total == floor(total)); /* whole bytes */
    assert_true(fabs(total - p->est.mem.total_bytes) <= 0.5); /* rounded to the byte */
    assert_rel(num(cJSON_GetObjectItem(j, "step_time_s"), "total"), p->est.time.step_s, 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "stage_layers")), p->est.nstages);
    assert_null(cJSON_GetObjectItem(j, "rejected"));
    cJSON_Delete(j);

    plan_terms *t = calloc(1, sizeof *t);
    plan_estimate *e = calloc(1, sizeof *e);
    st_err err = {0};
    assert_int_equal(plan_evaluate(&s->m, &s->c, &p->layout, e, t, &err), ST_OK);
    j = data_json_terms(t);
    assert_int_equal(cJSON_GetArraySize(j), t->n);
    for (int i = 0; i < t->n; i++) {
        const cJSON *x = cJSON_GetArrayItem(j, i);
        assert_string_equal(str(x, "name"), t->v[i].name);
        assert_string_equal(str(x, "unit"), t->v[i].unit);
        if (!strcmp(t->v[i].unit, "bytes"))
            assert_true(num(x, "value") == floor(num(x, "value")));
        assert_int_equal(cJSON_GetObjectItem(x, "source") != NULL,
                         t->v[i].source && t->v[i].source[0]);
    }
    cJSON_Delete(j);
    free(t);
    free(e);
}

static void document_of_a_search(void **state)
{
    const test_searched *s = *state;
    assert_true(s->r->ntop >= 2);
    sim_top_steps sim = {.n = 2, .step_s = {0.8, 0.9}, .threshold_pct = 10, .reranked = 1};
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddStringToObject(extra, "note", "kept");
    data_plan_doc d = {
        .command_line = "smdplan --x", .m = &s->m, .c = &s->c, .r = s->r, .sim = &sim,
        .objective = PLAN_OBJ_TIME, .price_list = "a list", .band_pct = 10,
        .band_basis = "held out", .train_tokens = 1e12, .extra = extra,
    };
    cJSON *j = data_json_plan_doc(&d);
    assert_string_equal(str(j, "command_line"), "smdplan --x");
    assert_string_equal(str(cJSON_GetObjectItem(j, "cluster"), "price_list"), "a list");
    const cJSON *eb = cJSON_GetObjectItem(j, "error_band");
    assert_rel(num(eb, "pct"), 10, 0);
    assert_string_equal(str(eb, "basis"), "held out");
    const plan_framework *fw = plan_framework_get(s->r->top[0].layout.framework);
    assert_string_equal(str(eb, "stack"), fw->key);
    /* |0.8 - 0.9| <= 0.1 (0.8 + 0.9): #1 and #2 overlap (plan_summary_band_overlap) */
    assert_true(num(eb, "plans_within_band_of_first") >= 2);
    const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "plans"), 0);
    assert_rel(num(p0, "simulated_step_time_s"), 0.8, 0);
    const cJSON *range = cJSON_GetObjectItem(p0, "step_range_s");
    assert_rel(cJSON_GetArrayItem(range, 0)->valuedouble, 0.8 * 0.9, 1e-15);
    assert_rel(cJSON_GetArrayItem(range, 1)->valuedouble, 0.8 * 1.1, 1e-15);
    const cJSON *p2 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "plans"), 2);
    if (p2) /* not simulated: the planner's step */
        assert_null(cJSON_GetObjectItem(p2, "simulated_step_time_s"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "reranked_by_simulation")));
    const cJSON *train = cJSON_GetObjectItem(j, "train");
    assert_string_equal(str(train, "step"), "simulated");
    /* 1e12 tokens at the plan's tokens per step, 0.8 s (simulated) each */
    assert_rel(num(train, "time_s"), 1e12 / s->r->top[0].est.tokens_per_step * 0.8, 1e-15);
    assert_string_equal(str(j, "note"), "kept");
    assert_null(cJSON_GetObjectItem(j, "min_instances_needed"));
    cJSON_Delete(j);

    /* without tokens, simulation or band */
    d.train_tokens = 0, d.sim = NULL, d.band_pct = 0, d.extra = NULL;
    j = data_json_plan_doc(&d);
    assert_null(cJSON_GetObjectItem(j, "train"));
    assert_null(cJSON_GetObjectItem(j, "reranked_by_simulation"));
    assert_null(cJSON_GetObjectItem(j, "note"));
    assert_int_equal(num(cJSON_GetObjectItem(j, "error_band"), "plans_within_band_of_first"), 1);
    cJSON_Delete(j);
    cJSON_Delete(extra);
}

static void document_when_nothing_fits(void **state)
{
    const test_searched *s = *state;
    const plan_result *r = s->r;
    assert_int_equal(r->ntop, 0);
    data_plan_doc d = {.command_line = "", .m = &s->m, .c = &s->c, .r = r, .min_nodes = 12,
                       .price_list = "", .band_pct = 10, .band_basis = "", .train_tokens = 1e9};
    cJSON *j = data_json_plan_doc(&d);
    assert_int_equal(num(j, "min_instances_needed"), 12);
    assert_null(cJSON_GetObjectItem(j, "error_band"));
    assert_null(cJSON_GetObjectItem(j, "train"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "plans")), 0);
    const cJSON *oom = cJSON_GetObjectItem(j, "closest_out_of_memory");
    assert_int_equal(oom != NULL, r->min_oom_excess_bytes > 0);
    if (oom)
        assert_string_equal(str(oom, "rejected"), plan_reject_name(PLAN_REJ_OOM));
    assert_true(num(cJSON_GetObjectItem(j, "rejected"), plan_reject_name(PLAN_REJ_OOM)) > 0);
    cJSON_Delete(j);
}

static void preset_and_simulation(void **state)
{
    const test_searched *w = *state;
    plan_preset p = {.key = "smp-x"};
    p.ref.batch_size = 32;
    snprintf(p.ref.instances, sizeof p.ref.instances, "16xp4d.24xlarge");
    plan_preset_cmp cmp = {.shown = 0};
    assert_null(data_json_preset_cmp(&cmp));
    cmp = (plan_preset_cmp){.shown = 1, .preset = &p, .status = PLAN_PRESET_OOM,
                            .why = "too big", .smp_fitted = 0};
    cJSON *j = data_json_preset_cmp(&cmp);
    assert_string_equal(str(j, "status"), "out_of_memory");
    assert_string_equal(str(j, "published_instances"), "16xp4d.24xlarge");
    assert_int_equal(num(j, "published_batch_size"), 32);
    assert_non_null(cJSON_GetObjectItem(j, "plan"));
    assert_string_equal(str(j, "why_ours_differs"), "too big");
    cJSON_Delete(j);
    cmp.status = PLAN_PRESET_UNPLACEABLE;
    j = data_json_preset_cmp(&cmp);
    assert_string_equal(str(j, "status"), "not_evaluated");
    assert_null(cJSON_GetObjectItem(j, "plan"));
    cJSON_Delete(j);

    sim_result s = {.step_s = 1.25, .planner_step_s = 1.2, .pp = 3, .steps = 4,
                    .microbatches = 512, .window_microbatches = {24, 48}};
    s.stage[2].busy_s = 0.75;
    j = data_json_simulation(&s, &w->m, &w->c, &w->r->top[0], 42);
    assert_rel(num(j, "step_time_s"), 1.25, 0);
    assert_int_equal(num(j, "seed"), 42);
    assert_int_equal(num(j, "instances"), 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "stage_busy_s")), 3);
    assert_rel(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "stage_busy_s"), 2)->valuedouble, 0.75, 0);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "extrapolated_from_microbatches"),
                                        1)->valueint,
                     48);
    assert_string_equal(str(cJSON_GetObjectItem(j, "model"), "name"), "gpt-13x1536");
    cJSON_Delete(j);
    s.window_microbatches[0] = 0;
    j = data_json_sim(&s);
    assert_null(cJSON_GetObjectItem(j, "extrapolated_from_microbatches"));
    cJSON_Delete(j);
}

static void band_of_a_plan(void **state)
{
    const test_searched *s = *state; /* for its catalog */
    plan_cluster c;
    st_err err = {0};
    assert_int_equal(plan_cluster_parse(&s->cat, "16xp4d", &c, &err), ST_OK);
    int fw;
    assert_int_equal(plan_framework_find("megatron", &fw, &err), ST_OK);
    data_bands b = {0};
    assert_int_equal(data_bands_load(NULL, &b, &err), ST_OK);
    char want[400], got[400];
    double expect = data_band_of(&b, plan_framework_get(fw)->key, c.gpu->silicon, want,
                                 sizeof want);
    assert_true(expect > 0);
    /* twice: the file read once gives the same answer */
    for (int i = 0; i < 2; i++) {
        assert_rel(data_band_of_plan(&c, fw, got, sizeof got), expect, 0);
        assert_string_equal(got, want);
    }
    data_bands_free(&b);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test_setup_teardown(plan_and_terms, test_searched_setup,
                                          test_searched_teardown),
          cmocka_unit_test_setup_teardown(document_of_a_search, test_searched_setup,
                                          test_searched_teardown),
          cmocka_unit_test_setup_teardown(document_when_nothing_fits, test_too_big_setup,
                                          test_searched_teardown),
          cmocka_unit_test_setup_teardown(preset_and_simulation, test_searched_setup,
                                          test_searched_teardown),
          cmocka_unit_test_setup_teardown(band_of_a_plan, test_searched_setup,
                                          test_searched_teardown))
