/*
 * bench_validate.c: the planner against the shipped published runs
 * (data/reference/calibration_runs.csv), as figures (not a test).
 *
 * Prints the mean and max absolute time error per source and overall, the
 * memory errors, the ten worst rows with the planner's time terms (which
 * term dominates the prediction), and how long one validation pass takes
 * (median and spread). Machine-readable lines start with "validate,":
 *   validate,source,<key>,rows,compared,mean_abs_pct,max_abs_pct,mean_pct,worst_row
 *   validate,row,<id>,<source>,pred_s,ref_s,error_pct,mem_pred_bytes,mem_ref_bytes
 *   validate,terms,<id>,compute,tp,cp,pp,bubble,dp_exposed,optimizer (seconds)
 *   validate,time,median_s,min_s,max_s,rows
 * The answer is checked (the file reads, every row maps without error,
 * some rows are compared) before it is timed.
 */
#include "bench_util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/data.h"
#include "data/data_csv.h"
#include "planner/plan.h"
#include "planner/plan_validate.h"

#define REPEATS 5
#define WORST 10

static const plan_validate_result *g_res;

static int cmp_worst(const void *a, const void *b)
{
    double x = fabs(g_res[*(const int *)a].error_pct), y = fabs(g_res[*(const int *)b].error_pct);
    return (x < y) - (x > y);
}

static int run_all(const plan_catalog *cat, const plan_validate_row *rows, int n,
                   plan_validate_result *res, st_err *err)
{
    return plan_validate_rows(cat, rows, n, res, err);
}

static void print_stats(const char *label, const plan_validate_stats *s)
{
    printf("%-22s %5d %8d %9.1f%% %9.1f%% %+9.1f%% %6s %6d %9.1f%% %9.1f%%\n", label, s->rows,
           s->compared, s->mean_abs_error_pct, s->max_abs_error_pct, s->mean_error_pct,
           s->worst_row_id, s->mem_compared, s->mem_mean_abs_error_pct, s->mem_max_abs_error_pct);
    printf("validate,source,%s,%d,%d,%.3f,%.3f,%.3f,%s\n", label, s->rows, s->compared,
           s->mean_abs_error_pct, s->max_abs_error_pct, s->mean_error_pct, s->worst_row_id);
}

/* The time terms of one row's prediction, re-evaluated with terms. */
static void print_terms(const plan_catalog *cat, const plan_validate_row *row,
                        const plan_validate_result *r)
{
    plan_terms *t = calloc(1, sizeof *t);
    plan_validate_result *again = calloc(1, sizeof *again);
    st_err err = {0};
    if (!t || !again || plan_validate_run(cat, row, again, t, &err) != ST_OK) {
        free(t);
        free(again);
        return;
    }
    const plan_time *tm = &again->est.time;
    struct {
        const char *name;
        double s;
    } terms[] = {
        {"compute", tm->compute_s},       {"TP comm", tm->tp_comm_s},
        {"CP comm", tm->cp_comm_s},       {"PP comm", tm->pp_comm_s},
        {"bubble", tm->bubble_s},         {"DP exposed", tm->dp_exposed_s},
        {"optimizer", tm->optimizer_s},
    };
    const plan_layout *l = &r->layout;
    printf("%-5s %-20.20s %+7.1f%% %8.2f %8.2f  tp%d pp%d dp%d cp%d mbs%d m%d v%d %-9s", r->row_id,
           r->source_key, r->error_pct, r->pred_time_s, r->ref_time_s, l->tp, l->pp, l->dp, l->cp,
           l->micro_batch, l->microbatches, l->virtual_stages, plan_recompute_name(l->recompute));
    for (int i = 0; i < 7; i++)
        printf(" %s %.0f%%", terms[i].name, 100.0 * terms[i].s / tm->step_s);
    printf("  MFU %.0f%% HFU %.0f%%\n", 100.0 * again->est.mfu, 100.0 * again->est.hfu);
    printf("validate,terms,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", r->row_id, tm->compute_s,
           tm->tp_comm_s, tm->cp_comm_s, tm->pp_comm_s, tm->bubble_s, tm->dp_exposed_s,
           tm->optimizer_s);
    free(t);
    free(again);
}

int main(int argc, char **argv)
{
    char path[1024];
    if (argc > 1)
        snprintf(path, sizeof path, "%s", argv[1]);
    else
        snprintf(path, sizeof path, "%s/reference/calibration_runs.csv", data_dir());

    st_err err = {0};
    plan_catalog cat = {0};
    data_csv csv = {0};
    plan_validate_row *rows = NULL;
    plan_validate_result *res = NULL;
    int *order = NULL;
    int rc = data_frameworks_load(NULL, &err);
    if (rc == ST_OK)
        rc = data_families_load(NULL, &err);
    if (rc == ST_OK)
        rc = data_catalog_load(NULL, &cat, &err);
    if (rc == ST_OK)
        rc = data_csv_load(path, &csv, &err);
    if (rc == ST_OK) {
        rows = calloc((size_t)csv.nrows + 1, sizeof *rows);
        res = calloc((size_t)csv.nrows + 1, sizeof *res);
        order = calloc((size_t)csv.nrows + 1, sizeof *order);
        if (!rows || !res || !order)
            rc = ST_RAISE(&err, ST_ENOMEM, "out of memory");
    }
    if (rc == ST_OK)
        rc = data_csv_validate_rows(&csv, path, rows, &err);
    /* Check the answer before timing it. */
    if (rc == ST_OK)
        rc = run_all(&cat, rows, csv.nrows, res, &err);
    plan_validate_summary sum;
    if (rc == ST_OK) {
        plan_validate_summarize(res, csv.nrows, &sum);
        if (sum.all.compared == 0)
            rc = ST_RAISE(&err, ST_EINTERNAL, "%s: no row could be compared", path);
    }
    if (rc != ST_OK) {
        fprintf(stderr, "bench_validate: %s\n", err.msg);
        goto done;
    }

    double t[REPEATS];
    for (int i = 0; i < REPEATS; i++) {
        double t0 = bench_now_s();
        run_all(&cat, rows, csv.nrows, res, &err);
        t[i] = bench_now_s() - t0;
    }
    qsort(t, REPEATS, sizeof t[0], bench_cmp_double);

    printf("bench_validate: %s, %d rows, %d compared\n\n", path, csv.nrows, sum.all.compared);
    printf("%-22s %5s %8s %10s %10s %10s %6s %6s %10s %10s\n", "source", "rows", "compared",
           "mean|err|", "max|err|", "mean err", "worst", "mem n", "mem mean", "mem max");
    for (int k = 0; k < sum.nsources; k++)
        print_stats(sum.source[k].source_key, &sum.source[k]);
    print_stats("all", &sum.all);

    printf("\nrows:\n");
    for (int i = 0; i < csv.nrows; i++)
        if (res[i].compared)
            printf("validate,row,%s,%s,%.4f,%.4f,%.3f,%.4g,%.4g\n", res[i].row_id,
                   res[i].source_key, res[i].pred_time_s, res[i].ref_time_s, res[i].error_pct,
                   res[i].pred_mem_bytes, res[i].have_mem ? res[i].ref_mem_bytes : 0.0);

    int nc = 0;
    for (int i = 0; i < csv.nrows; i++)
        if (res[i].compared)
            order[nc++] = i;
    g_res = res;
    qsort(order, (size_t)nc, sizeof *order, cmp_worst);
    printf("\n%d worst rows (time terms as %% of the predicted step):\n", WORST);
    for (int k = 0; k < nc && k < WORST; k++)
        print_terms(&cat, &rows[order[k]], &res[order[k]]);

    printf("\none pass over %d rows: median %.2f ms (min %.2f, max %.2f) over %d runs\n",
           csv.nrows, 1e3 * t[REPEATS / 2], 1e3 * t[0], 1e3 * t[REPEATS - 1], REPEATS);
    printf("validate,time,%.6f,%.6f,%.6f,%d\n", t[REPEATS / 2], t[0], t[REPEATS - 1], csv.nrows);
done:
    free(order);
    free(res);
    free(rows);
    data_csv_free(&csv);
    plan_catalog_free(&cat);
    return rc == ST_OK ? 0 : 1;
}
