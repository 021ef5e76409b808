/*
 * test_rpt_validate_text.c: the text of smdplan validate (reports/
 * rpt_validate_text.c) on the shipped runs: a row compared with its error,
 * one not compared with its reason under it, the simulated columns only
 * when the rows were simulated (their error 100 (sim - ref) / ref), the
 * per-source table and the goal's verdict; no row compared says so; and
 * --explain's head of a row.
 */
#include "test_validate_rows.h"

#include "planner/plan_framework.h"
#include "reports/rpt_table.h"
#include "reports/rpt_validate.h"

static char *text_of(const char *file, const plan_validate_result *v, const double *sim_s, int n,
                     const plan_validate_summary *sum)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    rpt_validate_text(f, file, v, sim_s, n, sum);
    fclose(f);
    return text;
}

static void test_rows(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    int c = validated_first(&v, 1), u = validated_first(&v, 0);
    plan_validate_result two[2] = {v.res[c], v.res[u]};
    plan_validate_summary sum;
    plan_validate_summarize(two, 2, &sum);
    char *text = text_of("runs.csv", two, NULL, 2, &sum);
    char err[32], why[300];
    snprintf(err, sizeof err, " %+.1f%%", two[0].error_pct);
    snprintf(why, sizeof why, "not compared: %s", two[1].reason);
    assert_text(text, TEXTS("validate: runs.csv, 2 rows\n", "pred s", "ref s", err, why,
                            "mean|err|", "\nall ", "Goal: mean over sources <= "),
                TEXTS("sim s", "simulated:", "No row could be compared"));
    free(text);

    /* simulated: the columns and their error */
    double sim_s[2] = {two[0].ref_time_s * 1.25, 0};
    two[0].sim_time_s = sim_s[0];
    plan_validate_summarize(two, 2, &sum);
    text = text_of("runs.csv", two, sim_s, 2, &sum);
    assert_text(text, TEXTS("sim s", "sim err", "+25.0%",
                            "simulated: mean |error| 25.0%, max 25.0% over 1 scored rows"),
                NULL);
    free(text);

    /* nothing compared */
    plan_validate_summarize(&two[1], 1, &sum);
    text = text_of("x.csv", &two[1], NULL, 1, &sum);
    assert_text(text, TEXTS("validate: x.csv, 1 rows", "No row could be compared."),
                TEXTS("Goal:"));
    free(text);
    validated_free(&v);
}

/* The goal's verdict follows plan_validate_goal_met: every row exact is met. */
static void test_goal(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    int c = validated_first(&v, 1);
    plan_validate_result r = v.res[c];
    r.pred_time_s = r.ref_time_s;
    r.error_pct = 0;
    plan_validate_summary sum;
    plan_validate_summarize(&r, 1, &sum);
    char *text = text_of("x.csv", &r, NULL, 1, &sum);
    assert_text(text, TEXTS("no source above", ": met.\n"), TEXTS("missed"));
    free(text);
    r.error_pct = 40;
    r.pred_time_s = 1.4 * r.ref_time_s;
    plan_validate_summarize(&r, 1, &sum);
    text = text_of("x.csv", &r, NULL, 1, &sum);
    assert_text(text, TEXTS(": missed.\n", "+40.0%"), NULL);
    free(text);
    validated_free(&v);
}

static void test_explain(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    for (int k = 0; k < 2; k++) {
        const plan_validate_result *r = &v.res[validated_first(&v, k)];
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        rpt_validate_explain(f, r);
        fclose(f);
        char head[256], fw[160];
        snprintf(head, sizeof head, "row %s (%s): %s\n", r->row_id, r->source_key, r->model.name);
        snprintf(fw, sizeof fw, "framework: %s\n", plan_framework_get(r->framework)->label);
        assert_text(text, TEXTS(head, fw), NULL);
        if (k)
            assert_text(text, TEXTS("time:      predicted ", "reference "),
                        TEXTS("not compared"));
        else
            assert_text(text, TEXTS("not compared: "), TEXTS("time:"));
        free(text);
    }
    validated_free(&v);
}

TEST_MAIN((test_frameworks_load(), rpt_term_set_wide(1)),
          cmocka_unit_test(test_rows),
          cmocka_unit_test(test_goal),
          cmocka_unit_test(test_explain))
