/*
 * test_rpt_plan.c: a search's answer as text (reports/rpt_plan_*.c): the
 * recompute cell, a plan's row, the head, the ranked table with its
 * simulated column and the sentences under it, why nothing fits,
 * --explain's terms, a preset's reference and a simulated step. The width
 * is unlimited (rpt_term_set_wide), so lines are not wrapped.
 */
#include "test_util.h"

#include <stdlib.h>

#include "reports/rpt_plan.h"
#include "test_models.h"

/* What a renderer wrote, as one string (caller frees). */
typedef struct capture {
    FILE *f;
    char *text;
    size_t n;
} capture;

static FILE *cap_open(capture *c)
{
    c->text = NULL;
    c->f = open_memstream(&c->text, &c->n);
    assert_non_null(c->f);
    return c->f;
}

static char *cap_close(capture *c)
{
    fclose(c->f);
    return c->text;
}

static void labels_and_cells(void **state)
{
    (void)state;
    char buf[32];
    plan_layout l = {.tp = 2, .pp = 4, .dp = 3, .micro_batch = 2, .microbatches = 16,
                     .recompute = PLAN_RECOMP_FULL, .recompute_group = 3,
                     .offload_activations = 1, .placement = "DPT"};
    assert_string_equal(rpt_plan_recomp_label(&l, buf, sizeof buf), "full/3+off");
    l.recompute_group = 1, l.offload_activations = 0;
    assert_string_equal(rpt_plan_recomp_label(&l, buf, sizeof buf), "full");
    l.recompute = PLAN_RECOMP_SELECTIVE;
    assert_string_equal(rpt_plan_recomp_label(&l, buf, sizeof buf), "sel");
    assert_text(rpt_plan_columns_key(), TEXTS("TP, PP, CP, DP:", "recomp:", "SP:"), NULL);

    plan_estimate e = {.capacity_bytes = 40.0 * 1073741824.0};
    e.mem.total_bytes = 16.25 * 1073741824.0;
    e.time.step_s = 3.25, e.time.compute_s = 2.5, e.time.bubble_s = 0.75;
    e.time.pp_comm_s = -1e-9; /* rounding: printed as 0 */
    rpt_table *t = rpt_table_new();
    const char *heads[] = {"#", "TP", "PP", "CP", "DP", "mbs", "mb", "act", "sched", "recomp",
                           "sharding", "SP", "place", "mem", "step", "compute", "TPc", "PPc",
                           "DPexp", "bubble", "opt"};
    for (int i = 0; i < 21; i++)
        rpt_table_col(t, heads[i], 0, 0);
    rpt_table_row(t);
    rpt_table_cell(t, "x");
    rpt_plan_cells(t, &l, &e);
    capture c;
    rpt_table_print(cap_open(&c), t, "");
    char *text = cap_close(&c);
    assert_text(text, TEXTS("sel", "DPT", "16.2/40", "3.250", "2.500", "0.750", "0.000"),
                TEXTS("-0.000"));
    free(text);
    rpt_table_free(t);
}

static void result_with_simulation(void **state)
{
    const test_searched *s = *state;
    assert_true(s->r->ntop >= 2);
    /* #1 simulated 30 % above its planned step: flagged at 10 % */
    double planned = s->r->top[0].est.time.step_s;
    sim_top_steps sim = {.n = 2, .step_s = {1.3 * planned, 1.31 * planned}, .threshold_pct = 10,
                         .reranked = 1, .extrapolated = 1};
    rpt_plan_opts o = {.objective = PLAN_OBJ_TIME, .price_list = "some prices",
                       .band_pct = 9.4, .band_basis = "five sources held out",
                       .train_tokens = 300e9, .sim = &sim};
    capture cp;
    rpt_plan_result(cap_open(&cp), &s->m, &s->c, s->r, &o);
    char *text = cap_close(&cp);
    char step[64];
    snprintf(step, sizeof step, "Step of #1: %.3f s \u00b19 %% (simulated; five sources",
             1.3 * planned);
    assert_text(text, TEXTS("model:   gpt-13x1536", "cluster: 1 x p4d.24xlarge",
                            "prices:  some prices", "stack:   ", "search:  ", "sim s", " !",
                            "Ranked by the simulated step", "1 plan has too many microbatches",
                            "simulation and planner differ by more than 10%", "Why #1:", step,
                            "Train 300B tokens with #1:", "at its simulated step",
                            "/h (some prices).\n"),
                NULL);
    free(text);

    /* no simulation, no band, no tokens */
    o = (rpt_plan_opts){.price_list = "p", .band_basis = "no error bands: unreadable"};
    rpt_plan_result(cap_open(&cp), &s->m, &s->c, s->r, &o);
    text = cap_close(&cp);
    assert_text(text, TEXTS("No error band on the steps: no error bands: unreadable."),
                TEXTS("sim s", "Train ", "Ranked by"));
    free(text);
}

static void nothing_fits(void **state)
{
    const test_searched *s = *state;
    const plan_result *r = s->r;
    assert_int_equal(r->ntop, 0);
    rpt_plan_opts o = {.price_list = "p", .batch_source = "from somewhere"};
    capture cp;
    rpt_plan_infeasible(cap_open(&cp), &s->m, &s->c, r, 12, &o);
    char *text = cap_close(&cp);
    assert_text(text, TEXTS("No layout fits:", "Rejected:",
                            "It would need at least 12 x p4d.24xlarge"),
                TEXTS("stack:   "));
    if (r->min_oom_excess_bytes > 0)
        assert_text(text, TEXTS("The closest layout needs"), NULL);
    free(text);
    rpt_plan_infeasible(cap_open(&cp), &s->m, &s->c, r, 0, &o);
    text = cap_close(&cp);
    assert_text(text, TEXTS("No count of p4d.24xlarge up to 16384 fits it"), NULL);
    free(text);
}

static void explain_terms(void **state)
{
    const test_searched *s = *state;
    plan_terms *t = calloc(1, sizeof *t);
    plan_estimate *e = calloc(1, sizeof *e);
    st_err err = {0};
    assert_int_equal(plan_evaluate(&s->m, &s->c, &s->r->top[0].layout, e, t, &err), ST_OK);
    capture cp;
    FILE *f = cap_open(&cp);
    rpt_plan_terms(f, t);
    rpt_plan_uncertainty(f, 1.5, 9.4, "its basis");
    char *text = cap_close(&cp);
    char group[80];
    snprintf(group, sizeof group, "  [%s]\n", t->v[0].group);
    assert_text(text, TEXTS("\nExplain (plan #1):\n", group, t->v[0].name, t->v[0].formula,
                            "  [uncertainty]\n  error band: the step 1.500 s \u00b19 %: its basis\n"),
                NULL);
    free(text);
    free(t);
    free(e);
}

static void preset_beside_ours(void **state)
{
    (void)state;
    plan_preset p = {.key = "smp-x"};
    snprintf(p.ref.source, sizeof p.ref.source, "the publisher");
    plan_candidate ours = {.layout = {.tp = 2, .pp = 8, .dp = 8, .placement = "PDT"}};
    plan_preset_cmp cmp = {.shown = 0};
    capture cp;
    rpt_plan_preset(cap_open(&cp), &cmp, &ours);
    char *text = cap_close(&cp);
    assert_string_equal(text, "");
    free(text);
    cmp = (plan_preset_cmp){.shown = 1, .preset = &p, .status = PLAN_PRESET_OOM,
                            .ref = {.layout = {.tp = 8, .pp = 1, .dp = 16, .placement = "DPT"}},
                            .why = "it does not fit."};
    rpt_plan_preset(cap_open(&cp), &cmp, &ours);
    text = cap_close(&cp);
    assert_text(text, TEXTS("SMP's own layout for smp-x (the publisher)", "ours #1", "SMP (OOM)",
                            "Why ours differs: it does not fit.\n"),
                NULL);
    free(text);
    cmp.status = PLAN_PRESET_UNPLACEABLE;
    rpt_plan_preset(cap_open(&cp), &cmp, &ours);
    text = cap_close(&cp);
    assert_string_equal(text, "\nit does not fit.\n");
    free(text);
}

static void simulated_step_and_layout(void **state)
{
    (void)state;
    sim_config cfg;
    sim_config_default(&cfg);
    cfg.jitter_sigma = 0.05, cfg.seed = 7;
    sim_result s = {.step_s = 1.25, .planner_step_s = 1.0, .pp = 3, .steps = 4,
                    .pipeline_s = 1.0, .microbatches = 512, .window_microbatches = {24, 48}};
    capture cp;
    rpt_plan_sim(cap_open(&cp), &cfg, &s, 10);
    char *text = cap_close(&cp);
    /* (1.25 - 1.0) / 1.0 = +25 % */
    assert_text(text, TEXTS("+25.0%)", "<- differs from the planner by more than 10%",
                            "steps: 4 with jitter sigma 0.050 (seed 7)",
                            "extrapolated: 512 microbatches", "windows of 24 and 48",
                            "(extrapolated)\n", "\n     2 "),
                NULL);
    free(text);
    s.step_s = 1.05, s.steps = 1, s.window_microbatches[0] = 0;
    rpt_plan_sim(cap_open(&cp), &cfg, &s, 10);
    text = cap_close(&cp);
    assert_text(text, TEXTS("+5.0%)"), TEXTS("<- differs", "steps: ", "extrapolated"));
    free(text);

    plan_layout l = {.tp = 2, .pp = 4, .dp = 1, .micro_batch = 1, .microbatches = 8,
                     .schedule = PLAN_SCHED_VIRTUAL, .virtual_stages = 2, .placement = "DPT"};
    rpt_plan_layout(cap_open(&cp), &l);
    text = cap_close(&cp);
    assert_text(text, TEXTS("layout:  tp 2, pp 4, dp 1, micro-batch 1 x 8 microbatches",
                            " x 2 virtual stages", "placement DPT\n"),
                NULL);
    free(text);
}

TEST_MAIN((test_frameworks_load(), rpt_term_set_wide(1)),
          cmocka_unit_test(labels_and_cells),
          cmocka_unit_test_setup_teardown(result_with_simulation, test_searched_setup,
                                          test_searched_teardown),
          cmocka_unit_test_setup_teardown(nothing_fits, test_too_big_setup,
                                          test_searched_teardown),
          cmocka_unit_test_setup_teardown(explain_terms, test_searched_setup,
                                          test_searched_teardown),
          cmocka_unit_test(preset_beside_ours),
          cmocka_unit_test(simulated_step_and_layout))
