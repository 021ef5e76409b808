/*
 * test_plan_summary.c: the sentences that explain a plan (planner/
 * plan_summary.c), on hand-made results: two plans whose steps and terms
 * are set so each branch of "why #1" is the one taken, rejections by
 * reason, band overlap and the time and cost of training.
 */
#include "test_util.h"

#include <stdlib.h>

#include "planner/plan_summary.h"

#define GIB 1073741824.0

/* Plan i: tp x pp, step_s split into compute and bubble, memory in GiB. */
static void set_plan(plan_result *r, int i, int tp, int pp, double compute_s, double bubble_s,
                     double mem_gib)
{
    plan_candidate *p = &r->top[i];
    p->layout.tp = tp, p->layout.pp = pp, p->layout.micro_batch = 2;
    p->est.time.compute_s = compute_s;
    p->est.time.bubble_s = bubble_s;
    p->est.time.step_s = compute_s + bubble_s;
    p->est.mem.total_bytes = mem_gib * GIB;
}

static plan_result *two_plans(void)
{
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->ntop = 2;
    set_plan(r, 0, 8, 2, 1.500, 0.250, 30.5);
    set_plan(r, 1, 4, 4, 1.520, 0.480, 33.0);
    return r;
}

static void why_names_knobs_and_term(void **state)
{
    (void)state;
    plan_result *r = two_plans();
    char buf[1024];
    plan_summary_why(r, NULL, 0, PLAN_OBJ_TIME, buf, sizeof buf);
    /* (2.0 - 1.75) / 2.0 = 12.5 %; the bubble gains 0.23 s, compute 0.02 s */
    assert_string_equal(buf, "\nWhy #1: its step is 12.5% shorter than #2's (TP 8 x PP 2 against "
                             "TP 4 x PP 4: 1.750 s against 2.000 s), mostly because its "
                             "pipeline bubble takes 0.250 s against 0.480 s.\n");
    /* simulated steps that reverse the planner's order */
    double sim[2] = {1.900, 2.000};
    r->top[0].est.time.step_s = 2.1;
    plan_summary_why(r, sim, 2, PLAN_OBJ_TIME, buf, sizeof buf);
    assert_non_null(strstr(buf, "its simulated step is 5.0% shorter"));
    assert_non_null(strstr(buf, "the other way round (2.100 s against 2.000 s)"));
    plan_summary_why(r, NULL, 0, PLAN_OBJ_MEMORY, buf, sizeof buf);
    assert_string_equal(buf, "\nWhy #1: it needs the least memory per GPU (30.50 GiB against "
                             "#2's 33.00 GiB; --objective memory).\n");
    /* a buffer too small holds the start, terminated */
    char small[16];
    plan_summary_why(r, NULL, 0, PLAN_OBJ_MEMORY, small, sizeof small);
    assert_string_equal(small, "\nWhy #1: it nee");
    free(r);
}

static void why_breaks_ties(void **state)
{
    (void)state;
    plan_result *r = two_plans();
    char buf[1024];
    set_plan(r, 1, 4, 4, 1.500, 0.250, 30.5 + 0.02); /* same step, 20 MiB more */
    plan_summary_why(r, NULL, 0, PLAN_OBJ_TIME, buf, sizeof buf);
    assert_string_equal(buf, "\nWhy #1: #1 and #2 take the same time (step 1.750 s against "
                             "1.750 s); #1 ranks first because it needs a little less memory "
                             "(20 MiB less, of 30.5 GiB).\n");
    set_plan(r, 1, 4, 4, 1.500, 0.250, 30.5);
    plan_summary_why(r, NULL, 0, PLAN_OBJ_TIME, buf, sizeof buf);
    assert_non_null(strstr(buf, "because it was found first: the two are equivalent.\n"));
    r->ntop = 1;
    plan_summary_why(r, NULL, 0, PLAN_OBJ_TIME, buf, sizeof buf);
    assert_string_equal(buf, "\nWhy #1: it is the only layout that fits.\n");
    free(r);
}

static void rejected_by_reason(void **state)
{
    (void)state;
    plan_result *r = two_plans();
    char buf[1024], want[1024];
    plan_summary_rejected(r, buf, sizeof buf);
    assert_string_equal(buf, "");
    r->rejected[PLAN_REJ_HEADS] = 37;
    r->rejected[PLAN_REJ_LAYERS] = 1536;
    plan_summary_rejected(r, buf, sizeof buf);
    snprintf(want, sizeof want, "Rejected: 37 %s, 1536 %s.\n", plan_reject_name(PLAN_REJ_HEADS),
             plan_reject_name(PLAN_REJ_LAYERS));
    assert_string_equal(buf, want);
    r->rejected[PLAN_REJ_OOM] = 13;
    r->min_oom_excess_bytes = 1.5 * GIB;
    r->closest_oom.layout = r->top[1].layout;
    plan_summary_rejected(r, buf, sizeof buf);
    assert_non_null(strstr(buf, "(closest: tp 4 pp 4 dp 0 mbs 2, "));
    assert_non_null(strstr(buf, "missed by 1.5"));
    free(r);
}

static void band_overlap_and_train(void **state)
{
    (void)state;
    plan_result *r = two_plans();
    /* 1.75 and 2.0 overlap when 0.25 <= b x 3.75: b >= 6.67 % */
    assert_int_equal(plan_summary_band_overlap(r, NULL, 0, 6.0), 1);
    assert_int_equal(plan_summary_band_overlap(r, NULL, 0, 7.0), 2);
    double sim[2] = {1.95, 2.0}; /* ranked by the simulated steps */
    assert_int_equal(plan_summary_band_overlap(r, sim, 2, 2.0), 2);
    assert_rel(plan_summary_ranked_step_s(r, sim, 1, 1), 2.0, 1e-15);

    double t, cost;
    int simulated;
    r->top[0].est.tokens_per_step = 1048576;
    r->top[0].est.cost_per_hour = 262.16;
    assert_int_equal(plan_summary_train(r, 0, 3e11, &t, &cost, &simulated), 1);
    assert_int_equal(simulated, 0);
    assert_rel(t, 3e11 / 1048576 * 1.75, 1e-12);
    assert_rel(cost, t / 3600 * 262.16, 1e-12);
    assert_int_equal(plan_summary_train(r, 1.95, 3e11, &t, &cost, &simulated), 1);
    assert_int_equal(simulated, 1);
    assert_rel(t, 3e11 / 1048576 * 1.95, 1e-12);
    r->ntop = 0;
    assert_int_equal(plan_summary_train(r, 1.95, 3e11, &t, &cost, &simulated), 0);
    assert_true(t == 0 && cost == 0);
    free(r);
}

TEST_MAIN((void)0,
          cmocka_unit_test(why_names_knobs_and_term),
          cmocka_unit_test(why_breaks_ties),
          cmocka_unit_test(rejected_by_reason),
          cmocka_unit_test(band_overlap_and_train))
