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
#include "data/data.h"
#include "data/data_csv.h"
#include "data/data_known_models.h"
#include "data/data_validate_json.h"
#include "planner/plan_validate.h"
#include "planner/plan_validate_explain.h"
#include "reports/rpt_validate.h"
#include "sim/sim_validate.h"
#include "reports/rpt_plan.h"

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

/* --explain ROW: how the row was read, and every term of its prediction. */
static int explain_row(const plan_catalog *cat, const plan_validate_row *rows,
                       const plan_validate_result *res, int n, const char *id)
{
    int i = plan_validate_find(res, n, id);
    if (i < 0) {
        fprintf(stderr, "smdplan: validate: --explain %s: no row with that row_id\n", id);
        return 2;
    }
    rpt_validate_explain(stdout, &res[i]);
    plan_terms *t = calloc(1, sizeof *t);
    st_err err = {0};
    if (t && plan_validate_terms(cat, &rows[i], &res[i], t, &err) == ST_OK && t->n) {
        printf("\n");
        rpt_plan_terms(stdout, t);
    }
    free(t);
    return 0;
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
    if (rc == ST_OK) /* the models a row may name without its shape */
        rc = data_known_models_load(&err);
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
    if (rc == ST_OK)
        rc = plan_validate_rows(&cat, rows, csv.nrows, res, &err);
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
        sim_validate_rows(&cat, res, sim_s, csv.nrows, cli_progress_sim, &prog);
        cli_progress_end(&prog);
    }

    plan_validate_summary sum;
    plan_validate_summarize(res, csv.nrows, &sum);
    if (o.json) {
        if (data_validate_json_write(stdout, o.file, res, sim_s, csv.nrows, &sum, &err) != ST_OK)
            ex = cli_fail(&err);
    } else {
        rpt_validate_text(stdout, o.file, res, sim_s, csv.nrows, &sum);
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
