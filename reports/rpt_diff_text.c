/*
 * rpt_diff_text.c: two plans side by side, term by term (rpt_diff.h), from
 * the planner's comparison (planner/plan_diff.h): its terms in the order a
 * reader adds them up, and its paragraph on the difference.
 */
#include "reports/rpt_diff.h"

#include <stdio.h>
#include <string.h>

#include "planner/plan_framework.h"
#include "reports/rpt_plan.h"
#include "reports/rpt_table.h"

#define GIB 1073741824.0 /* memory is shown in GiB, as everywhere */

/* "tp 8, pp 2, dp 4, mbs 1 x 16, SCHED, RECOMP, SHARDING[, sp]" */
static void layout_words(const plan_layout *l, char *buf, size_t n)
{
    char s[24], r[24];
    snprintf(buf, n, "tp %d, pp %d, dp %d%s, mbs %d x %d, %s, %s, %s%s", l->tp, l->pp, l->dp,
             l->cp > 1 ? " (cp)" : "", l->micro_batch, l->microbatches,
             plan_framework_sched_label(l, s, sizeof s), rpt_plan_recomp_label(l, r, sizeof r),
             plan_sharding_name(l->sharding), l->sequence_parallel && l->tp > 1 ? ", sp" : "");
}

/* The model, cluster and layout lines, each "A vs B" where they differ. */
static void print_head(FILE *f, const plan_diff_plan *A, const plan_diff_plan *B)
{
    char la[200], lb[200];
    layout_words(&A->layout, la, sizeof la);
    layout_words(&B->layout, lb, sizeof lb);
    char head[1200];
    char na[80] = "", nb[80] = "";
    if (strcmp(A->name, "A"))
        snprintf(na, sizeof na, " (record %s)", A->name);
    if (strcmp(B->name, "B"))
        snprintf(nb, sizeof nb, " (record %s)", B->name);
    snprintf(head, sizeof head, "model:   %s%s%s\ncluster: %s%s%s\nA%s:  %s; %s %s\nB%s:  %s; "
             "%s %s\n", A->model, strcmp(A->model, B->model) ? " vs " : "",
             strcmp(A->model, B->model) ? B->model : "", A->cluster,
             strcmp(A->cluster, B->cluster) ? " vs " : "", strcmp(A->cluster, B->cluster)
                 ? B->cluster : "", na, la, plan_framework_get(A->layout.framework)->key,
             plan_precision_name(A->layout.precision), nb, lb,
             plan_framework_get(B->layout.framework)->key,
             plan_precision_name(B->layout.precision));
    rpt_term_wrap_lines(f, head);
}

/* A heading row, then one row per term: a, b and b - a over scale, with
 * decimals digits after the point. */
static void term_rows(rpt_table *t, const char *heading, const plan_diff_term *v, int n,
                      double scale, int decimals)
{
    rpt_table_row(t);
    rpt_table_cell(t, "%s", heading);
    for (int k = 0; k < 3; k++)
        rpt_table_cell(t, " ");
    for (int i = 0; i < n; i++) {
        rpt_table_row(t);
        rpt_table_cell(t, "  %s", v[i].name);
        rpt_table_cell(t, "%.*f", decimals, v[i].a / scale);
        rpt_table_cell(t, "%.*f", decimals, v[i].b / scale);
        rpt_table_cell(t, "%+.*f", decimals, (v[i].b - v[i].a) / scale);
    }
}

/* Band, tokens/s, MFU and (when both are priced) cost per token. */
static void figure_rows(rpt_table *t, const plan_diff_plan *A, const plan_diff_plan *B)
{
    rpt_table_row(t);
    rpt_table_cell(t, "  error band");
    rpt_table_cell(t, "\u00b1%.0f %%", A->band_pct);
    rpt_table_cell(t, "\u00b1%.0f %%", B->band_pct);
    rpt_table_cell(t, " ");
    rpt_table_row(t);
    rpt_table_cell(t, "tokens/s");
    rpt_table_cell(t, "%.0f", A->est.tokens_per_s);
    rpt_table_cell(t, "%.0f", B->est.tokens_per_s);
    rpt_table_cell(t, "%+.0f", B->est.tokens_per_s - A->est.tokens_per_s);
    rpt_table_row(t);
    rpt_table_cell(t, "MFU");
    rpt_table_cell(t, "%.1f%%", 100 * A->est.mfu);
    rpt_table_cell(t, "%.1f%%", 100 * B->est.mfu);
    rpt_table_cell(t, "%+.1f", 100 * (B->est.mfu - A->est.mfu));
    if (A->est.cost_per_mtokens > 0 && B->est.cost_per_mtokens > 0) {
        rpt_table_row(t);
        rpt_table_cell(t, "$ per 1M tokens");
        rpt_table_cell(t, "%.3f", A->est.cost_per_mtokens);
        rpt_table_cell(t, "%.3f", B->est.cost_per_mtokens);
        rpt_table_cell(t, "%+.3f", B->est.cost_per_mtokens - A->est.cost_per_mtokens);
    }
}

void rpt_diff_text(FILE *f, const plan_diff_plan *A, const plan_diff_plan *B)
{
    print_head(f, A, B);
    static const rpt_table_colspec cols[] = {{"", 0, 0}, {"A", 1, 0}, {"B", 1, 0},
                                             {"B - A", 1, 0}};
    rpt_table *t = rpt_table_new_cols(cols, 4);
    if (!t)
        return;
    plan_diff_term v[PLAN_DIFF_MEM_TERMS];
    int n = plan_diff_mem_terms(&A->est.mem, &B->est.mem, v);
    term_rows(t, "memory per GPU, GiB", v, n, GIB, 2);
    n = plan_diff_time_terms(&A->est.time, &B->est.time, v);
    term_rows(t, "time per step, s", v, n, 1.0, 3);
    figure_rows(t, A, B);
    fputc('\n', f);
    rpt_table_print(f, t, "");
    rpt_table_free(t);
    fputc('\n', f);
    char text[1600];
    plan_diff_side sa = plan_diff_plan_side(A), sb = plan_diff_plan_side(B);
    plan_diff_explain(&sa, &sb, text, sizeof text);
    rpt_term_wrap(f, text, "", "");
    char bands[900];
    snprintf(bands, sizeof bands, "(error bands: A %s; B %s)", A->band_basis, B->band_basis);
    rpt_term_wrap(f, bands, "", " ");
}
