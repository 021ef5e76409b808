/*
 * test_rpt_cal_text.c: the text of smdplan calibrate (reports/
 * rpt_cal_text.c) from a report made by hand: a pooled group says why it
 * was not fitted; a fitted group lists its asked parameters before and
 * after with the outcome of each (a kept one without a standard error),
 * its errors, an unconverged fit and a rejection; a parameter on a bound
 * is counted and its range's source printed (a rejected group's are not);
 * a source held out of nothing shows "-", one whose absence left a fit on
 * a bound says which; and calibrate --runs adds each
 * run's measured step with its errors 100 (predicted - measured) /
 * measured before and after, and why each run left out is.
 */
#include "test_validate_rows.h"

#include "planner/plan_calibrate.h"
#include "planner/plan_measured.h"
#include "reports/rpt_cal.h"
#include "reports/rpt_table.h"

static plan_cal_report *report(void)
{
    plan_cal_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    rep->ngroups = 3;
    plan_cal_group *g = &rep->group[0];
    snprintf(g->framework, sizeof g->framework, "megatron");
    snprintf(g->silicon, sizeof g->silicon, "GA100");
    g->rows = 3;
    g->sources = 1;
    g->pooled = 1;
    snprintf(g->why, sizeof g->why, "one source only");
    g = &rep->group[1]; /* the chip's pool, fitted, not converged */
    snprintf(g->silicon, sizeof g->silicon, "GH100");
    g->rows = 40;
    g->sources = 4;
    g->asked = 1u << PLAN_EFF_GEMM | 1u << PLAN_EFF_FLASH;
    g->fitted = g->on_bound = 1u << PLAN_EFF_GEMM;
    g->before.gemm_eff_max = 0.8125;
    g->after.gemm_eff_max = 0.9375;
    g->std_err[PLAN_EFF_GEMM] = 0.0123;
    g->std_err[PLAN_EFF_FLASH] = 7.0; /* kept: not shown */
    g->mean_abs_err_before_pct = 12.5;
    g->mean_abs_err_after_pct = 4.25;
    g->max_abs_err_after_pct = 9.75;
    g->iterations = 17;
    g = &rep->group[2]; /* rejected: its bound does not count */
    snprintf(g->framework, sizeof g->framework, "fsdp");
    snprintf(g->silicon, sizeof g->silicon, "GA100");
    g->asked = g->fitted = g->on_bound = 1u << PLAN_EFF_HBM;
    g->converged = 1;
    g->rejected = 1;
    snprintf(g->why, sizeof g->why, "worse held out than the pool");
    rep->nsources = 1;
    plan_cal_source *s = &rep->source[0];
    snprintf(s->source_key, sizeof s->source_key, "src_a");
    snprintf(s->framework, sizeof s->framework, "megatron");
    snprintf(s->silicon, sizeof s->silicon, "GA100");
    s->rows = 3;
    s->mean_abs_err_pct = 6.25;
    s->loso_mean_abs_err_pct = NAN;
    rep->rows_used = 43;
    rep->mean_source_err_pct = 6.25;
    rep->max_source_err_pct = 6.25;
    rep->loso_mean_source_err_pct = NAN;
    rep->loso_max_source_err_pct = NAN;
    return rep;
}

static void test_report(void **state)
{
    (void)state;
    plan_cal_report *rep = report();
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    rpt_cal_text(f, "runs.csv", 50, rep);
    fclose(f);
    assert_text(text, TEXTS("calibrate: runs.csv, 50 rows, 43 with a compared time fitted, "
                            "1 sources\n",
                            "megatron   GA100      3    1  not fitted: one source only\n",
                            "(all)      GH100              gemm_eff_max     0.8125    "
                            "0.9375   0.0123  ON A BOUND",
                            "                              flash_eff ",
                            "12.5% -> 4.2% (worst run 9.8%), 17 iterations (stopped before "
                            "the tolerance)",
                            "; REJECTED: worse held out than the pool",
                            "1 fitted parameter ended on a bound", "  gemm_eff_max: ",
                            "src_a", "6.2%",
                            "mean over sources of the mean |error|: 6.2% (worst source 6.2%)\n"),
                TEXTS("7.0000", "  hbm_eff: ", "; held out:", "ran though the planner"));
    /* the kept parameter: no standard error, "kept" */
    const char *flash = strstr(text, "flash_eff");
    char line[200];
    snprintf(line, sizeof line, "%.*s", (int)(strchr(flash, '\n') - flash), flash);
    assert_string_equal(line + strlen(line) - 4, "kept");
    free(text);

    /* held out, and no bound */
    rep->group[1].on_bound = 0;
    rep->source[0].loso_mean_abs_err_pct = 8.5;
    rep->loso_mean_source_err_pct = 8.5;
    rep->loso_max_source_err_pct = 8.5;
    rep->rows_oom = 2;
    f = open_memstream(&text, &n);
    rpt_cal_text(f, "runs.csv", 50, rep);
    fclose(f);
    assert_text(text, TEXTS("No fitted parameter ended on a bound", "8.5%",
                            "; held out: 8.5% (worst 8.5%)",
                            "2 of them ran though the planner finds"),
                TEXTS("The bounds:", "left fits with a parameter on a bound"));
    free(text);

    /* a fit made without the source ended on a bound: said as in the full fit */
    snprintf(rep->source[0].loso_bound, sizeof rep->source[0].loso_bound,
             "GA100 pool: gemm_dim_half");
    f = open_memstream(&text, &n);
    rpt_cal_text(f, "runs.csv", 50, rep);
    fclose(f);
    assert_text(text, TEXTS("Held out, 1 source left fits with a parameter on a bound",
                            "  without src_a: GA100 pool: gemm_dim_half\n"),
                TEXTS("The bounds:"));
    free(text);
    free(rep);
}

static void test_runs(void **state)
{
    (void)state;
    validated v;
    validated_load(&v);
    plan_cal_report *rep = report();
    plan_validate_result row = v.res[validated_first(&v, 1)];
    snprintf(row.row_id, sizeof row.row_id, "run 42");
    db_exec_run runs[2];
    memset(runs, 0, sizeof runs);
    runs[0].record_id = 42;
    runs[1].record_id = 43;
    char why[2][DB_CAL_WHY_MAX] = {"", "no catalog entry"};
    db_cal_runs cr = {runs, 2, &row, 1, why, 1};
    double before[1] = {row.ref_time_s * 1.5};
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    rpt_cal_runs_text(f, "the executed runs in x.db", &v.cat, &cr, before, rep);
    fclose(f);
    char after[64];
    double pred = plan_validate_step_s(&v.cat, &row);
    snprintf(after, sizeof after, "%.4f s  %+.1f%%", pred,
             100 * (pred - row.ref_time_s) / row.ref_time_s);
    assert_text(text, TEXTS("calibrate: the executed runs in x.db, 1 rows", "measured",
                            "\n 42 ", "+50.0%", after, "1 executed run left out:\n",
                            "  run 43: no catalog entry\n"),
                TEXTS("run 42:"));
    free(text);
    /* before not known: "-"-free zero and nan */
    f = open_memstream(&text, &n);
    rpt_cal_runs_text(f, "y", &v.cat, &cr, NULL, rep);
    fclose(f);
    assert_text(text, TEXTS("0.0000 s", "nan%"), TEXTS("+50.0%"));
    free(text);
    free(rep);
    validated_free(&v);
}

TEST_MAIN((test_frameworks_load(), rpt_term_set_wide(1)),
          cmocka_unit_test(test_report),
          cmocka_unit_test(test_runs))
