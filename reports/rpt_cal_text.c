/*
 * rpt_cal_text.c: the text of a calibration (rpt_cal.h) from the planner's
 * report of the fit (planner/plan_calibrate.h) and its verdicts per
 * parameter (planner/plan_cal_summary.h). Everything is printed into a
 * buffer and wrapped to the terminal at the end, the tables already fitted
 * to it.
 */
#include "reports/rpt_cal.h"

#include <math.h>
#include <stdio.h>

#include "data/db.h"
#include "planner/plan_cal_summary.h"
#include "planner/plan_measured.h"
#include "reports/rpt_table.h"

/* Each fit: its parameters before and after, then its errors. */
static void print_groups(FILE *f, const plan_cal_report *rep)
{
    fprintf(f, "%-10s %-6s %5s %4s  %-13s %9s %9s %8s  %s\n", "framework", "chip", "rows", "src",
            "parameter", "before", "after", "+-", "");
    for (int i = 0; i < rep->ngroups; i++) {
        const plan_cal_group *g = &rep->group[i];
        int first = 1;
        if (g->pooled) {
            fprintf(f, "%-10s %-6s %5d %4d  not fitted: %s\n\n", g->framework, g->silicon,
                    g->rows, g->sources, g->why);
            continue;
        }
        for (int p = 0; p < PLAN_EFF__COUNT; p++) {
            if (!(g->asked & (1u << p)))
                continue;
            plan_cal_outcome oc = plan_cal_param_outcome(g, (plan_eff_param)p);
            char se[16] = "";
            if (oc != PLAN_CAL_KEPT)
                snprintf(se, sizeof se, "%.4f", g->std_err[p]);
            fprintf(f, "%-10s %-6s %5s %4s  %-13s %9.4f %9.4f %8s  %s\n",
                    first ? (g->framework[0] ? g->framework : "(all)") : "",
                    first ? g->silicon : "", "", "", plan_eff_param_name((plan_eff_param)p),
                    *plan_eff_ref((plan_eff *)&g->before, (plan_eff_param)p),
                    *plan_eff_ref((plan_eff *)&g->after, (plan_eff_param)p), se,
                    plan_cal_outcome_text(oc));
            if (first) {
                fprintf(f, "%-10s %-6s %5d %4d\n", "", "", g->rows, g->sources);
                first = 0;
            }
        }
        fprintf(f, "%-10s mean |error| over sources %.1f%% -> %.1f%% (worst run %.1f%%), %d "
                   "iterations%s%s%s\n\n",
                "", g->mean_abs_err_before_pct, g->mean_abs_err_after_pct,
                g->max_abs_err_after_pct, g->iterations,
                g->converged || !g->fitted ? "" : " (stopped before the tolerance)",
                g->rejected ? "; REJECTED: " : "", g->rejected ? g->why : "");
    }
}

/* The parameters fitted onto a bound of their range, with its source. */
static void print_bounds(FILE *f, const plan_cal_report *rep)
{
    unsigned bound_params;
    int nbound = plan_cal_report_bounds(rep, &bound_params);
    if (!nbound) {
        fputs("No fitted parameter ended on a bound of its physical range.\n", f);
        return;
    }
    fprintf(f, "%d fitted parameter%s ended on a bound of its physical range: the fit "
               "absorbs physics the model lacks there; not a result. The bounds:\n",
            nbound, nbound == 1 ? "" : "s");
    for (int p = 0; p < PLAN_EFF__COUNT; p++) {
        if ((bound_params >> p) & 1) {
            char head[40];
            snprintf(head, sizeof head, "  %s: ", plan_eff_param_name((plan_eff_param)p));
            rpt_term_wrap(f, plan_cal_bound_source((plan_eff_param)p), head, "    ");
        }
    }
}

/* Each source's error, fitted and held out, and their mean. */
static void print_sources(FILE *f, const plan_cal_report *rep)
{
    rpt_table *t = rpt_table_new();
    const char *const head[] = {"source", "rows", "framework", "chip", "fitted", "held out",
                                "held out, predicted by"};
    const int right[] = {0, 1, 0, 0, 1, 1, 0};
    const int prio[] = {0, 2, 0, 0, 0, 0, 1};
    for (int k = 0; t && k < 7; k++)
        rpt_table_col(t, head[k], right[k], prio[k]);
    for (int i = 0; t && i < rep->nsources; i++) {
        const plan_cal_source *x = &rep->source[i];
        rpt_table_row(t);
        rpt_table_cell(t, "%s", x->source_key);
        rpt_table_cell(t, "%d", x->rows);
        rpt_table_cell(t, "%s", x->framework);
        rpt_table_cell(t, "%s", x->silicon);
        rpt_table_cell(t, "%.1f%%", x->mean_abs_err_pct);
        if (!isnan(x->loso_mean_abs_err_pct))
            rpt_table_cell(t, "%.1f%%", x->loso_mean_abs_err_pct);
        else
            rpt_table_cell(t, "-");
        rpt_table_cell(t, "%s", x->loso_basis);
    }
    if (t)
        rpt_table_print(f, t, "");
    rpt_table_free(t);
    fprintf(f, "\nmean over sources of the mean |error|: %.1f%% (worst source %.1f%%)",
            rep->mean_source_err_pct, rep->max_source_err_pct);
    if (!isnan(rep->loso_mean_source_err_pct))
        fprintf(f, "; held out: %.1f%% (worst %.1f%%)", rep->loso_mean_source_err_pct,
                rep->loso_max_source_err_pct);
    fprintf(f, "\n");
    /* the fits made without a source are fits too: a parameter of theirs
     * on a bound is the same failure of the model */
    int nb = 0;
    for (int i = 0; i < rep->nsources; i++)
        nb += rep->source[i].loso_bound[0] != '\0';
    if (!nb)
        return;
    fprintf(f, "Held out, %d source%s left fits with a parameter on a bound of its range, "
               "a failure of the model there too:\n",
            nb, nb == 1 ? "" : "s");
    for (int i = 0; i < rep->nsources; i++)
        if (rep->source[i].loso_bound[0])
            fprintf(f, "  without %s: %s\n", rep->source[i].source_key,
                    rep->source[i].loso_bound);
}

static void print_report(FILE *f, const char *source, int nrows, const plan_cal_report *rep)
{
    fprintf(f, "calibrate: %s, %d rows, %d with a compared time fitted, %d sources\n", source,
            nrows, rep->rows_used, rep->nsources);
    if (rep->rows_oom)
        fprintf(f, "           %d of them ran though the planner finds their published layout "
                   "out of memory (fitted and scored all the same)\n",
                rep->rows_oom);
    fprintf(f, "\n");
    print_groups(f, rep);
    fputs("(kept: a parameter the runs do not constrain keeps its value; undetermined: one\n"
          " they move, but whose standard error is over half its range, keeps it too)\n",
          f);
    print_bounds(f, rep);
    fputs("\n", f);
    print_sources(f, rep);
}

void rpt_cal_text(FILE *f, const char *source, int nrows, const plan_cal_report *rep)
{
    rpt_term_capture_buf cb;
    FILE *pf = rpt_term_capture(&cb);
    print_report(pf ? pf : f, source, nrows, rep);
    rpt_term_capture_wrap(&cb, f, "", "");
}

/* Each run: measured, predicted before the fit and after it. */
static void print_runs(FILE *f, const plan_catalog *cat, const db_cal_runs *cr,
                       const double *before)
{
    rpt_table *t = rpt_table_new();
    const char *const head[] = {"run", "model", "layout", "on", "measured", "before",
                                "error", "fitted", "error"};
    const int right[] = {1, 0, 0, 0, 1, 1, 1, 1, 1};
    const int prio[] = {0, 1, 2, 1, 0, 0, 0, 0, 0};
    for (int k = 0; t && k < 9; k++)
        rpt_table_col(t, head[k], right[k], prio[k]);
    for (int i = 0; t && i < cr->nrows; i++) {
        const plan_validate_result *r = &cr->rows[i];
        double after = plan_validate_step_s(cat, r);
        rpt_table_row(t);
        rpt_table_cell(t, "%s", r->row_id + 4); /* "run " left out: the column says it */
        rpt_table_cell(t, "%s", r->source_key);
        rpt_table_cell(t, "%s", r->notes);
        rpt_table_cell(t, "%s", r->instance);
        rpt_table_cell(t, "%.4f s", r->ref_time_s);
        rpt_table_cell(t, "%.4f s", before ? before[i] : 0.0);
        rpt_table_cell(t, "%+.1f%%", before ? plan_error_pct(before[i], r->ref_time_s) : NAN);
        rpt_table_cell(t, "%.4f s", after);
        rpt_table_cell(t, "%+.1f%%", plan_error_pct(after, r->ref_time_s));
    }
    if (t)
        rpt_table_print(f, t, "");
    rpt_table_free(t);
    if (cr->left)
        fprintf(f, "%d executed run%s left out:\n", cr->left, cr->left == 1 ? "" : "s");
    for (int i = 0; i < cr->nruns; i++)
        if (cr->why[i][0])
            fprintf(f, "  run %lld: %s\n", (long long)cr->runs[i].record_id, cr->why[i]);
}

void rpt_cal_runs_text(FILE *f, const char *source, const plan_catalog *cat,
                       const db_cal_runs *cr, const double *before, const plan_cal_report *rep)
{
    rpt_term_capture_buf cb;
    FILE *pf = rpt_term_capture(&cb);
    FILE *w = pf ? pf : f;
    print_report(w, source, cr->nrows, rep);
    fprintf(w, "\n");
    print_runs(w, cat, cr, before);
    rpt_term_capture_wrap(&cb, f, "", "");
}
