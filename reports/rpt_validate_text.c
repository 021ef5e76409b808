/*
 * rpt_validate_text.c: the text of `smdplan validate` (rpt_validate.h) from
 * the planner's results and summary (planner/plan_validate.h): the rows'
 * table, the per-source table, the goal's verdict (plan_validate_goal.h)
 * and --explain's account of one row.
 */
#include "reports/rpt_validate.h"

#include <stdio.h>
#include <string.h>

#include "common/units.h"
#include "data/db.h"
#include "planner/plan_framework.h"
#include "planner/plan_validate_goal.h"
#include "reports/rpt_table.h"

#define GIB 1073741824.0 /* memory is shown in GiB, as everywhere */

static void layout_label(const plan_validate_result *r, char *buf, size_t n)
{
    const plan_layout *l = &r->layout;
    if (l->cp > 1)
        snprintf(buf, n, "%d/%d/%d/%d", l->tp, l->pp, l->dp, l->cp);
    else
        snprintf(buf, n, "%d/%d/%d", l->tp, l->pp, l->dp);
}

/* The cells of one result from its GPU count on. */
static void row_cells(rpt_table *t, const plan_validate_result *r, const double *sim_s)
{
    char lay[32] = "-";
    if (r->have_layout) {
        layout_label(r, lay, sizeof lay);
        rpt_table_cell(t, "%d", r->gpus);
        rpt_table_cell(t, "%s", lay);
        rpt_table_cell(t, "%d%s", r->layout.micro_batch, r->micro_batch_searched ? "*" : "");
        rpt_table_cell(t, "%.3f", r->pred_time_s);
    } else {
        for (int k = 0; k < 4; k++)
            rpt_table_cell(t, "-");
    }
    if (r->compared) {
        rpt_table_cell(t, "%.3f", r->ref_time_s);
        rpt_table_cell(t, "%+.1f%%", r->error_pct);
    } else {
        rpt_table_cell(t, "-");
        rpt_table_cell(t, "-");
    }
    if (!r->have_layout)
        rpt_table_cell(t, "-");
    else if (r->have_mem)
        rpt_table_cell(t, "%.1f/%.1f", r->pred_mem_bytes / GIB, r->ref_mem_bytes / GIB);
    else
        rpt_table_cell(t, "%.1f/%s", r->pred_mem_bytes / GIB, r->ref_oom ? "OOM" : "-");
    if (sim_s && *sim_s > 0 && r->compared) {
        rpt_table_cell(t, "%.3f", *sim_s);
        rpt_table_cell(t, "%+.1f%%", plan_error_pct(*sim_s, r->ref_time_s));
    } else if (sim_s) {
        rpt_table_cell(t, "-");
        rpt_table_cell(t, "-");
    }
}

/* The columns of the rows: the last two only with the simulated steps. */
static const rpt_table_colspec row_cols[] = {
    {"row", 0, 0},    {"source", 0, 2},   {"model", 0, 3},       {"params", 1, 1},
    {"GPUs", 1, 1},   {"tp/pp/dp", 0, 1}, {"mbs", 1, 3},         {"pred s", 1, 0},
    {"ref s", 1, 0},  {"error", 1, 0},    {"mem GiB p/r", 1, 2}, {"sim s", 1, 1},
    {"sim err", 1, 1},
};

static void print_rows(FILE *f, const plan_validate_result *v, const double *sim_s, int n)
{
    int ncols = (int)(sizeof row_cols / sizeof row_cols[0]);
    rpt_table *t = rpt_table_new_cols(row_cols, sim_s ? ncols : ncols - 2);
    if (!t)
        return;
    for (int i = 0; i < n; i++) {
        const plan_validate_result *r = &v[i];
        char params[16] = "-";
        if (r->have_model)
            units_fmt_count((double)r->model.params, params, sizeof params);
        rpt_table_row(t);
        rpt_table_cell(t, "%s", r->row_id);
        rpt_table_cell(t, "%s", r->source_key);
        rpt_table_cell(t, "%.24s", r->have_model ? r->model.name : "-");
        rpt_table_cell(t, "%s", params);
        row_cells(t, r, sim_s ? &sim_s[i] : NULL);
        if (!r->compared)
            rpt_table_note(t, "not compared: %s%s%s%s", r->reason, r->notes[0] ? " (" : "",
                           r->notes, r->notes[0] ? ")" : "");
        else if (r->notes[0])
            rpt_table_note(t, "%s", r->notes);
    }
    rpt_table_print(f, t, "");
    rpt_table_free(t);
    rpt_term_wrap(f, "(error = (predicted - reference) / reference; mbs * = micro-batch searched, "
                     "not published; memory in GiB (2^30 bytes), predicted / reference, the worst "
                     "pipeline stage; under each row how it was read)", "", " ");
}

static void stats_row(rpt_table *t, const char *label, const plan_validate_stats *s)
{
    rpt_table_row(t);
    rpt_table_cell(t, "%s", label);
    rpt_table_cell(t, "%d", s->rows);
    rpt_table_cell(t, "%d", s->compared);
    if (s->compared) {
        rpt_table_cell(t, "%.1f%%", s->mean_abs_error_pct);
        rpt_table_cell(t, "%.1f%% (%s)", s->max_abs_error_pct, s->worst_row_id);
        rpt_table_cell(t, "%+.1f%%", s->mean_error_pct);
    } else {
        for (int k = 0; k < 3; k++)
            rpt_table_cell(t, "-");
    }
    if (s->mem_compared)
        rpt_table_cell(t, "%d: %.1f%% / %.1f%%", s->mem_compared, s->mem_mean_abs_error_pct,
                       s->mem_max_abs_error_pct);
    else
        rpt_table_cell(t, "-");
    if (s->oom_reference)
        rpt_table_cell(t, "%d of %d", s->oom_agreed, s->oom_reference);
    else
        rpt_table_cell(t, "-");
    if (s->oom_timed)
        rpt_table_cell(t, "%d (%.1f%%)", s->pred_oom_of_ran, s->oom_timed_mean_abs_error_pct);
    else
        rpt_table_cell(t, "%d", s->pred_oom_of_ran);
}

/* Every source weighed the same, the fits, and the goal's verdict. */
static void print_goal(FILE *f, const plan_validate_summary *s)
{
    if (!s->all.compared) {
        fprintf(f, "\nNo row could be compared.\n");
        return;
    }
    fprintf(f, "\nEvery source weighs the same: mean over sources of the mean |time error| "
               "%.1f%%, worst source %.1f%% (%s)",
            s->mean_source_pct, s->max_source_pct, s->worst_source);
    if (s->all.sim_compared)
        fprintf(f, "; simulated %.1f%%, worst %.1f%%", s->sim_mean_source_pct,
                s->sim_max_source_pct);
    fprintf(f, ".\nFit or out of memory predicted right: %d of %d runs.\n", s->all.fit_agreed,
            s->all.fit_checked);
    if (s->all.oom_timed)
        fprintf(f, "Scored though the planner finds their published layout out of memory: "
                   "%d runs that ran (mean |time error| %.1f%%; each also a fit miss).\n",
                s->all.oom_timed, s->all.oom_timed_mean_abs_error_pct);
    fprintf(f, "Goal: mean over sources <= %.0f%%, no source above %.0f%%: %s.\n",
            PLAN_VAL_GOAL_MEAN_SOURCE_PCT, PLAN_VAL_GOAL_MAX_SOURCE_PCT,
            plan_validate_goal_met(s) ? "met" : "missed");
}

static void print_summary(FILE *f, const plan_validate_summary *s)
{
    static const rpt_table_colspec cols[] = {
        {"source", 0, 0},    {"rows", 1, 2},           {"scored", 1, 0},
        {"mean|err|", 1, 0}, {"max|err| (row)", 1, 1}, {"mean err", 1, 1},
        {"memory n: mean / max", 1, 3}, {"OOM agreed", 1, 3}, {"pred OOM", 1, 3},
    };
    rpt_table *t = rpt_table_new_cols(cols, (int)(sizeof cols / sizeof cols[0]));
    if (!t)
        return;
    for (int k = 0; k < s->nsources; k++)
        stats_row(t, s->source[k].source_key, &s->source[k]);
    stats_row(t, "all", &s->all);
    fprintf(f, "\n");
    rpt_table_print(f, t, "");
    rpt_table_free(t);
    rpt_term_wrap(f, "(scored: every row whose time was compared; mean err > 0: the planner "
                     "predicts slower steps than measured; memory errors are not in the time "
                     "figures; pred OOM: runs that ran but the planner says do not fit, scored and "
                     "counted as fit misses, with their mean |time error|)", "", " ");
    rpt_term_capture_buf cb;
    FILE *w = rpt_term_capture(&cb);
    print_goal(w ? w : f, s);
    rpt_term_capture_wrap(&cb, f, "", "");
}

void rpt_validate_text(FILE *f, const char *file, const plan_validate_result *v,
                       const double *sim_s, int n, const plan_validate_summary *sum)
{
    fprintf(f, "validate: %s, %d rows\n\n", file, n);
    print_rows(f, v, sim_s, n);
    if (sum->all.sim_compared) /* the summary's own figures, over the scored rows */
        fprintf(f, "simulated: mean |error| %.1f%%, max %.1f%% over %d scored rows\n",
                sum->all.sim_mean_abs_error_pct, sum->all.sim_max_abs_error_pct,
                sum->all.sim_compared);
    print_summary(f, sum);
}

void rpt_validate_explain(FILE *f, const plan_validate_result *r)
{
    fprintf(f, "row %s (%s): %s\n", r->row_id, r->source_key, r->model.name);
    fprintf(f, "framework: %s\n", plan_framework_get(r->framework)->label);
    if (r->have_layout)
        fprintf(f, "cluster:   %d x %s, %d GPUs\n", r->nodes, r->instance, r->gpus);
    if (r->compared)
        fprintf(f, "time:      predicted %.4f s, reference %.4f s (%s), error %+.1f%%\n",
                r->pred_time_s, r->ref_time_s, plan_validate_basis_name(r->basis), r->error_pct);
    else
        fprintf(f, "not compared: %s\n", r->reason);
    if (r->notes[0])
        fprintf(f, "read as:   %s\n", r->notes);
}
