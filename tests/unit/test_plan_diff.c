/*
 * test_plan_diff.c: two plans compared term by term (planner/plan_diff.c),
 * on hand-made estimates: the rows add up as the estimate does, the knobs
 * that differ are named, and each branch of the paragraph (same layout,
 * longer step and its largest term, within or beyond the error bands, a
 * layout that does not fit) is taken, cut short safely in a small buffer.
 */
#include "test_util.h"

#include <string.h>

#include "planner/plan_diff.h"

#define GIB 1073741824.0

/* A: tp 8, pp 1, step 2.0 s; B: tp 2, pp 8, step 2.5 s, 0.4 s more bubble. */
static void two(plan_layout *la, plan_estimate *ea, plan_layout *lb, plan_estimate *eb)
{
    memset(la, 0, sizeof *la), memset(lb, 0, sizeof *lb);
    memset(ea, 0, sizeof *ea), memset(eb, 0, sizeof *eb);
    la->tp = 8, la->pp = 1, la->dp = 4, la->cp = 1;
    *lb = *la;
    lb->tp = 2, lb->pp = 8;
    ea->time = (plan_time){.compute_s = 1.5, .tp_comm_s = 0.3, .cp_comm_s = 0.05,
                           .bubble_s = 0.15, .step_s = 2.0};
    eb->time = (plan_time){.compute_s = 1.55, .tp_comm_s = 0.05, .pp_comm_s = 0.05,
                           .bubble_s = 0.55, .optimizer_s = 0.3, .step_s = 2.5};
    ea->mem.weights_bytes = 3 * GIB, ea->mem.allocator_bytes = 1 * GIB;
    ea->mem.total_bytes = 21.5 * GIB;
    eb->mem.weights_bytes = 12 * GIB, eb->mem.allocator_bytes = 2 * GIB;
    eb->mem.total_bytes = 42 * GIB;
}

static void terms_add_up(void **state)
{
    (void)state;
    plan_layout la, lb;
    plan_estimate ea, eb;
    two(&la, &ea, &lb, &eb);
    plan_diff_term m[PLAN_DIFF_MEM_TERMS], t[PLAN_DIFF_TIME_TERMS];
    assert_int_equal(plan_diff_mem_terms(&ea.mem, &eb.mem, m), PLAN_DIFF_MEM_TERMS);
    assert_string_equal(m[0].name, "weights");
    assert_rel(m[0].b - m[0].a, 9 * GIB, 1e-15);
    assert_string_equal(m[8].name, "needed");
    assert_rel(m[8].a, 20.5 * GIB, 1e-15); /* total less the allocator's reserve */
    assert_rel(m[8].b, 40 * GIB, 1e-15);
    assert_string_equal(m[9].name, "allocator reserve");
    assert_int_equal(plan_diff_time_terms(&ea.time, &eb.time, t), PLAN_DIFF_TIME_TERMS);
    assert_string_equal(t[1].name, "TP communication");
    assert_rel(t[1].a, 0.35, 1e-15); /* TP and CP as one */
    assert_string_equal(t[PLAN_DIFF_TIME_TERMS - 1].name, "step");
    double sa = 0, sb = 0;
    for (int i = 0; i < PLAN_DIFF_TIME_TERMS - 1; i++)
        sa += t[i].a, sb += t[i].b;
    assert_rel(sa, t[PLAN_DIFF_TIME_TERMS - 1].a, 8 * 1.2e-16);
    assert_rel(sb, t[PLAN_DIFF_TIME_TERMS - 1].b, 8 * 1.2e-16);
}

static void knobs_named(void **state)
{
    (void)state;
    plan_layout la, lb;
    plan_estimate ea, eb;
    two(&la, &ea, &lb, &eb);
    char buf[200];
    plan_diff_knobs(&la, &lb, buf, sizeof buf);
    assert_string_equal(buf, "tp 8 vs 2, pp 1 vs 8");
    lb.recompute = PLAN_RECOMP_FULL;
    lb.sequence_parallel = 1;
    plan_diff_knobs(&la, &lb, buf, sizeof buf);
    assert_string_equal(buf, "tp 8 vs 2, pp 1 vs 8, recompute none vs full, sequence parallel "
                             "off vs on");
    plan_diff_knobs(&la, &la, buf, sizeof buf);
    assert_string_equal(buf, "");
}

static void explain_branches(void **state)
{
    (void)state;
    plan_layout la, lb;
    plan_estimate ea, eb;
    two(&la, &ea, &lb, &eb);
    plan_diff_side a = {&la, &ea, 0, 10}, b = {&lb, &eb, 1, 10};
    char text[1600];
    /* 0.5 s apart, bands 0.2 + 0.25 s: beyond them; the bubble moved most */
    assert_int_equal(plan_diff_within_bands(&a, &b), 0);
    plan_diff_explain(&a, &b, text, sizeof text);
    assert_text(text, TEXTS("Difference: B's step is 25.0% longer than A's (2.500 s against "
                            "2.000 s), mostly in its pipeline bubble (+0.400 s), where the "
                            "layouts differ in tp 8 vs 2, pp 1 vs 8. ",
                            "B needs 40.0 GiB per GPU on its fullest stage against A's 20.5 "
                            "GiB (it does not fit). ",
                            "larger than the error bands"), NULL);
    a.band_pct = b.band_pct = 15; /* 0.3 + 0.375 s */
    assert_int_equal(plan_diff_within_bands(&a, &b), 1);
    plan_diff_explain(&a, &b, text, sizeof text);
    assert_text(text, TEXTS("lie within each other's error bands"), NULL);
    b.band_pct = 0; /* no band known: no verdict */
    plan_diff_explain(&a, &b, text, sizeof text);
    assert_text(text, TEXTS("Difference: "), TEXTS("error bands"));
    plan_diff_explain(&a, &a, text, sizeof text);
    assert_text(text, TEXTS("Difference: the two are the same layout. "), NULL);
    char small[16];
    memset(small, 'x', sizeof small);
    plan_diff_explain(&a, &b, small, sizeof small);
    assert_string_equal(small, "Difference: B's");
    plan_diff_explain(&a, &b, small, 1);
    assert_string_equal(small, "");
}

TEST_MAIN((void)0,
          cmocka_unit_test(terms_add_up),
          cmocka_unit_test(knobs_named),
          cmocka_unit_test(explain_branches))
