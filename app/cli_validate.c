/*
 * cli_validate.c: `smdplan validate FILE.csv`, the planner against published
 * training runs.
 *
 * Reads a table of measured runs (the columns of
 * data/reference/calibration_runs.csv), predicts each row's iteration time
 * and per-GPU memory with the planner (planner/plan_validate.c says how a
 * row is read), and prints one line per row and the mean and maximum
 * absolute errors per source and overall. The goal is a mean absolute time
 * error of at most 5 %; missing it is a measurement, not a failure, so the
 * exit code is 0 whenever the file could be read (2 when it could not).
 */
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli_int.h"
#include "planner/plan_fields.h"
#include "common/units.h"
#include "data/data.h"
#include "data/data_csv.h"
#include "data/data_validate_json.h"
#include "planner/plan_validate.h"
#include "planner/plan_validate_goal.h"
#include "planner/plan_framework.h"

#define GIB 1073741824.0 /* memory is shown in GiB, as everywhere */

enum { O_HELP = 'h', O_CATALOG = 256, O_JSON, O_NO_RECORD, O_SIM, O_DB, O_EXPLAIN };

typedef struct opt_def {
    const char *name;
    int has_arg;
    int id;
    const char *arg;
    const char *help;
} opt_def;

static const opt_def opt_table[] = {
    {"catalog", 1, O_CATALOG, "FILE", "JSON file adding or overriding instance types and GPUs"},
    {"json", 0, O_JSON, NULL, "print JSON: one object per row, then the mean and max errors"},
    {"no-record", 0, O_NO_RECORD, NULL, "do not record this run"},
    {"db", 1, O_DB, "FILE", "record into this database (default $SMDPLAN_DB, else smdplan.db)"},
    {"sim", 0, O_SIM, NULL, "also play each compared row out in the simulator (simulated_iteration_time_s)"},
    {"explain", 1, O_EXPLAIN, "ROW", "print how row ROW (its row_id) was read and every term of its prediction"},
    {"help", 0, O_HELP, NULL, "this help"},
};
#define NOPTS ((int)(sizeof opt_table / sizeof opt_table[0]))

typedef struct validate_opts {
    const char *file;
    const char *catalog_file;
    const char *db_path;
    const char *explain;         /* row_id to explain */
    int json, no_record, sim;
} validate_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan validate FILE.csv [--catalog FILE] [--json] [--sim] [--no-record] [--db FILE]\n\n"
            "Predicts the iteration time and per-GPU memory of published training runs and\n"
            "prints the error of each row and the mean and maximum absolute error per source\n"
            "and overall. FILE.csv has the columns of data/reference/calibration_runs.csv\n"
            "(row_id, source_key, num_gpus required; shape, layout and measurements optional).\n"
            "A row without a model shape, a batch or a measurement is listed with the reason.\n\n");
    for (int i = 0; i < NOPTS; i++) {
        const opt_def *o = &opt_table[i];
        char lhs[48];
        snprintf(lhs, sizeof lhs, "--%s%s%s", o->name, o->has_arg ? " " : "",
                 o->has_arg ? o->arg : "");
        fprintf(f, "  %-26s %s\n", lhs, o->help);
    }
    fprintf(f, "\nExample:\n  smdplan validate data/reference/calibration_runs.csv\n"
               "\nExit codes: 0 the file was read (whatever the errors), 2 bad input.\n");
}

/* 0: parsed; 1: --help printed; otherwise an exit code. */
static int parse_args(int argc, char **argv, validate_opts *o)
{
    struct option lo[NOPTS + 1];
    for (int i = 0; i < NOPTS; i++)
        lo[i] = (struct option){opt_table[i].name, opt_table[i].has_arg, NULL, opt_table[i].id};
    lo[NOPTS] = (struct option){0, 0, 0, 0};
    optind = 1;
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (id) {
        case O_HELP:
            usage(stdout);
            return 1;
        case O_CATALOG:
            o->catalog_file = optarg;
            break;
        case O_JSON:
            o->json = 1;
            break;
        case O_SIM:
            o->sim = 1;
            break;
        case O_NO_RECORD:
            o->no_record = 1;
            break;
        case O_DB:
            o->db_path = optarg;
            break;
        case O_EXPLAIN:
            o->explain = optarg;
            break;
        default: {
            const char *bad = argv[optind - 1];
            fprintf(stderr,
                    "smdplan: validate: unknown option or missing value: '%s' (see smdplan "
                    "validate --help)\n",
                    bad ? bad : "?");
            return 2;
        }
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "smdplan: validate: no file given (usage: smdplan validate FILE.csv)\n");
        return 2;
    }
    if (argc - optind > 1) {
        fprintf(stderr, "smdplan: validate: one file at a time ('%s' is extra)\n",
                argv[optind + 1]);
        return 2;
    }
    o->file = argv[optind];
    return 0;
}

/* ---- human output ---- */

static void layout_label(const plan_validate_result *r, char *buf, size_t n)
{
    const plan_layout *l = &r->layout;
    if (l->cp > 1)
        snprintf(buf, n, "%d/%d/%d/%d", l->tp, l->pp, l->dp, l->cp);
    else
        snprintf(buf, n, "%d/%d/%d", l->tp, l->pp, l->dp);
}

static void print_rows(FILE *f, const plan_validate_result *v, const double *sim_s, int n)
{
    rpt_table *t = rpt_table_new();
    if (!t)
        return;
    rpt_table_col(t, "row", 0, 0);
    rpt_table_col(t, "source", 0, 2);
    rpt_table_col(t, "model", 0, 3);
    rpt_table_col(t, "params", 1, 1);
    rpt_table_col(t, "GPUs", 1, 1);
    rpt_table_col(t, "tp/pp/dp", 0, 1);
    rpt_table_col(t, "mbs", 1, 3);
    rpt_table_col(t, "pred s", 1, 0);
    rpt_table_col(t, "ref s", 1, 0);
    rpt_table_col(t, "error", 1, 0);
    rpt_table_col(t, "mem GiB p/r", 1, 2);
    if (sim_s) {
        rpt_table_col(t, "sim s", 1, 1);
        rpt_table_col(t, "sim err", 1, 1);
    }
    for (int i = 0; i < n; i++) {
        const plan_validate_result *r = &v[i];
        char params[16] = "-", lay[32] = "-";
        if (r->have_model)
            units_fmt_count((double)r->model.params, params, sizeof params);
        rpt_table_row(t);
        rpt_table_cell(t, "%s", r->row_id);
        rpt_table_cell(t, "%s", r->source_key);
        rpt_table_cell(t, "%.24s", r->have_model ? r->model.name : "-");
        rpt_table_cell(t, "%s", params);
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
        if (sim_s && sim_s[i] > 0 && r->compared) {
            rpt_table_cell(t, "%.3f", sim_s[i]);
            rpt_table_cell(t, "%+.1f%%", db_error_pct(sim_s[i], r->ref_time_s));
        } else if (sim_s) {
            rpt_table_cell(t, "-");
            rpt_table_cell(t, "-");
        }
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

static void print_summary(FILE *f, const plan_validate_summary *s)
{
    rpt_table *t = rpt_table_new();
    if (!t)
        return;
    rpt_table_col(t, "source", 0, 0);
    rpt_table_col(t, "rows", 1, 2);
    rpt_table_col(t, "scored", 1, 0);
    rpt_table_col(t, "mean|err|", 1, 0);
    rpt_table_col(t, "max|err| (row)", 1, 1);
    rpt_table_col(t, "mean err", 1, 1);
    rpt_table_col(t, "memory n: mean / max", 1, 3);
    rpt_table_col(t, "OOM agreed", 1, 3);
    rpt_table_col(t, "pred OOM", 1, 3);
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
    FILE *out = f;
    if ((f = rpt_term_capture(&cb)) == NULL)
        f = out;
    if (s->all.compared) {
        fprintf(f, "\nEvery source weighs the same: mean over sources of the mean |time error| "
                   "%.1f%%, worst source %.1f%% (%s)",
                s->mean_source_pct, s->max_source_pct, s->worst_source);
        if (s->all.sim_compared)
            fprintf(f, "; simulated %.1f%%, worst %.1f%%", s->sim_mean_source_pct,
                    s->sim_max_source_pct);
        fprintf(f, ".\nFit or out of memory predicted right: %d of %d runs.\n",
                s->all.fit_agreed, s->all.fit_checked);
        if (s->all.oom_timed)
            fprintf(f, "Scored though the planner finds their published layout out of memory: "
                       "%d runs that ran (mean |time error| %.1f%%; each also a fit miss).\n",
                    s->all.oom_timed, s->all.oom_timed_mean_abs_error_pct);
        fprintf(f, "Goal: mean over sources <= %.0f%%, no source above %.0f%%: %s.\n",
                PLAN_VAL_GOAL_MEAN_SOURCE_PCT, PLAN_VAL_GOAL_MAX_SOURCE_PCT,
                plan_validate_goal_met(s) ? "met" : "missed");
    } else {
        fprintf(f, "\nNo row could be compared.\n");
    }
    rpt_term_capture_wrap(&cb, out, "", "");
}

/* --explain ROW: how the row was read, and every term of its prediction. */
static int explain_row(const plan_catalog *cat, const plan_validate_row *rows,
                       const plan_validate_result *res, int n, const char *id)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(res[i].row_id, id) != 0)
            continue;
        const plan_validate_result *r = &res[i];
        printf("row %s (%s): %s\n", r->row_id, r->source_key, r->model.name);
        printf("framework: %s\n", plan_framework_get(r->framework)->label);
        if (r->have_layout)
            printf("cluster:   %d x %s, %d GPUs\n", r->nodes, r->instance, r->gpus);
        if (r->compared)
            printf("time:      predicted %.4f s, reference %.4f s (%s), error %+.1f%%\n",
                   r->pred_time_s, r->ref_time_s, plan_validate_basis_name(r->basis), r->error_pct);
        else
            printf("not compared: %s\n", r->reason);
        if (r->notes[0])
            printf("read as:   %s\n", r->notes);
        plan_terms *t = calloc(1, sizeof *t);
        plan_validate_result *again = calloc(1, sizeof *again);
        st_err err = {0};
        if (t && again && plan_validate_run(cat, &rows[i], again, t, &err) == ST_OK && t->n) {
            printf("\n");
            cli_print_terms(stdout, t);
        }
        free(again);
        free(t);
        return 0;
    }
    fprintf(stderr, "smdplan: validate: --explain %s: no row with that row_id\n", id);
    return 2;
}

/* The row's layout played out by the simulator; 0 when it cannot be. */
static double simulate_row(const plan_catalog *cat, const plan_validate_result *r)
{
    if (!r->compared || !r->have_layout)
        return 0.0;
    plan_cluster c;
    st_err err = {0};
    if (plan_validate_cluster(cat, r, &c, &err) != ST_OK)
        return 0.0;
    sim_config cfg;
    sim_config_default(&cfg);
    sim_result s;
    if (sim_layout_run(&r->model, &c, &r->layout, &cfg, &s, &err) != ST_OK)
        return 0.0;
    double t = s.step_s;
    sim_result_fini(&s);
    return t;
}

typedef struct validate_record {
    const plan_catalog *cat;
    const char *file;
    const plan_validate_result *res;
    const double *sim_s;
    int n;
} validate_record;

static int record_validation(db *d, const db_provenance *p, void *ctx, st_err *err)
{
    const validate_record *v = ctx;
    return db_record_validation(d, p, v->cat, v->file, v->res, v->sim_s, v->n, NULL, err);
}

int cli_validate_cmd(int argc, char **argv)
{
    validate_opts o = {0};
    int ex = parse_args(argc, argv, &o);
    if (ex)
        return ex == 1 ? 0 : ex;

    st_err err = {0};
    plan_catalog cat = {0};
    data_csv csv = {0};
    plan_validate_row *rows = NULL;
    plan_validate_result *res = NULL;
    double *sim_s = NULL;
    int rc = data_catalog_load(NULL, &cat, &err);
    if (rc == ST_OK && o.catalog_file)
        rc = data_catalog_merge(&cat, o.catalog_file, &err);
    if (rc == ST_OK)
        rc = data_csv_load(o.file, &csv, &err);
    if (rc == ST_OK) {
        rows = calloc(csv.nrows ? (size_t)csv.nrows : 1, sizeof *rows);
        res = calloc(csv.nrows ? (size_t)csv.nrows : 1, sizeof *res);
        if (!rows || !res)
            rc = ST_RAISE(&err, ST_ENOMEM, "out of memory for %d rows", csv.nrows);
    }
    if (rc == ST_OK)
        rc = data_csv_validate_rows(&csv, o.file, rows, &err);
    for (int i = 0; rc == ST_OK && i < csv.nrows; i++)
        rc = plan_validate_run(&cat, &rows[i], &res[i], NULL, &err);
    if (rc != ST_OK) {
        ex = cli_fail(&err);
        goto done;
    }
    if (o.explain) {
        ex = explain_row(&cat, rows, res, csv.nrows, o.explain);
        goto done;
    }

    if (o.sim) {
        sim_s = calloc(csv.nrows ? (size_t)csv.nrows : 1, sizeof *sim_s);
        if (!sim_s) {
            ST_RAISE(&err, ST_ENOMEM, "out of memory");
            ex = cli_fail(&err);
            goto done;
        }
        cli_progress prog;
        cli_progress_start(&prog, "simulating the rows");
        for (int i = 0; i < csv.nrows; i++) {
            res[i].sim_time_s = sim_s[i] = simulate_row(&cat, &res[i]);
            cli_progress_step(&prog, i + 1, csv.nrows);
        }
        cli_progress_end(&prog);
    }

    plan_validate_summary sum;
    plan_validate_summarize(res, csv.nrows, &sum);
    if (o.json) {
        if (data_validate_json_write(stdout, o.file, res, sim_s, csv.nrows, &sum, &err) != ST_OK)
            ex = cli_fail(&err);
    } else {
        printf("validate: %s, %d rows\n\n", o.file, csv.nrows);
        print_rows(stdout, res, sim_s, csv.nrows);
        if (sum.all.sim_compared) /* the summary's own figures, over the scored rows */
            printf("simulated: mean |error| %.1f%%, max %.1f%% over %d scored rows\n",
                   sum.all.sim_mean_abs_error_pct, sum.all.sim_max_abs_error_pct,
                   sum.all.sim_compared);
        print_summary(stdout, &sum);
    }
    validate_record rec = {&cat, o.file, res, sim_s, csv.nrows};
    cli_record(o.db_path, o.no_record, record_validation, &rec);
done:
    free(sim_s);
    free(res);
    free(rows);
    data_csv_free(&csv);
    plan_catalog_free(&cat);
    return ex;
}
