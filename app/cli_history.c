/*
 * cli_history.c: reading the record database back.
 *
 *   smdplan history [--kind K] [--limit N] [--json|--csv] [--db FILE]
 *   smdplan show ID [--json|--csv] [--db FILE]
 *   smdplan compare [ID...] [--model NAME] [--instance TYPE] [--all] [--limit N]
 *                   [--json|--csv] [--db FILE]
 *
 * The database is opened read-only (DB_OPEN_READ): these commands never
 * create, migrate or change a file. Exit codes: 0, or 2 with one line on
 * stderr for a bad option, id or kind, a missing, corrupt or foreign file,
 * or one written by a newer schema; 1 for anything else (I/O).
 *
 * Errors in compare are percentages, 100 (a - b) / b: pred/meas is the
 * prediction against the measurement, sim/meas the simulation against the
 * measurement, sim/pred the simulation against the prediction.
 */
#include "app/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "data/db_format.h"
#include "reports/rpt_history.h"

#define HISTORY_DEFAULT_LIMIT 20
#define COMPARE_DEFAULT_LIMIT 50
#define LIMIT_MAX 100000
#define IDS_MAX 64

enum { O_HELP = 'h', O_DB = 256, O_JSON, O_CSV, O_KIND, O_LIMIT, O_MODEL, O_INSTANCE, O_ALL, O_CHECK };

typedef struct hist_opts {
    const char *db_path;
    int json, csv;
    const char *kind;
    int limit;
    const char *model, *instance;
    int all;
    int check;                   /* history --check: the full integrity check */
    int nids;
    int64_t ids[IDS_MAX];
} hist_opts;

/* Exit code of a failure: a newer schema is the file's fault, like a
 * corrupt one (2), not an unsupported feature of this build. */
static int fail(const st_err *err)
{
    fprintf(stderr, "smdplan: %s\n", err->msg[0] ? err->msg : st_str(err->code));
    return err->code == ST_EUNSUPPORTED ? 2 : st_exit_code(err->code);
}

static void usage(FILE *f, const char *cmd)
{
    if (!strcmp(cmd, "show"))
        fprintf(f, "usage: smdplan show ID [--json|--csv] [--db FILE]\n\n"
                   "Shows one record in full: its provenance, the model and cluster, and for a\n"
                   "plan each layout with every memory and time term; for a simulation the summary\n"
                   "and per-stage figures; for runs each run beside its prediction; for a\n"
                   "calibration each fit (a framework on a GPU chip, or the chip's pool) with its\n"
                   "parameters before and after and their standard errors, and each published\n"
                   "source's error fitted and held out. --csv prints its main table.\n");
    else if (!strcmp(cmd, "compare"))
        fprintf(f, "usage: smdplan compare [ID...] [--model NAME] [--instance TYPE] [--all]\n"
                   "                       [--limit N] [--json|--csv] [--db FILE]\n\n"
                   "Puts prediction, simulation and measurement of the same plan (same model\n"
                   "shape, cluster and layout) side by side, the latest of each, with the errors\n"
                   "100 (a - b) / b: pred/meas, sim/meas and sim/pred. Lists the plans that have\n"
                   "at least two of the three (--all: one), newest first.\n\n"
                   "  ID...            only plans of these records (and their matches elsewhere)\n"
                   "  --model NAME     model name contains NAME\n"
                   "  --instance TYPE  instance type contains TYPE\n"
                   "  --limit N        at most N rows (default %d)\n",
                COMPARE_DEFAULT_LIMIT);
    else
        fprintf(f, "usage: smdplan history [--kind K] [--limit N] [--json|--csv] [--db FILE]\n\n"
                   "Lists recorded answers, newest first: plan, simulation, run, calibration and\n"
                   "bench records, each with its id (for smdplan show ID), time (UTC) and a summary.\n\n"
                   "  --kind K   only records of kind K: plan, simulation, run, calibration, bench\n"
                   "  --limit N  at most N records (default %d)\n"
                   "  --check    check the whole file (every page and index; seconds on a large\n"
                   "             one); opening checks files up to 16 MiB, larger ones cheaply\n",
                HISTORY_DEFAULT_LIMIT);
    fprintf(f, "  --json     JSON\n"
               "  --csv      CSV with a header row\n"
               "  --db FILE  the database (default $SMDPLAN_DB, else smdplan.db)\n");
}

static int parse_id(const char *s, int64_t *id)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v <= 0)
        return -1;
    *id = v;
    return 0;
}

/* 0: parsed; 1: help printed; otherwise an exit code. */
static int parse_args(const char *cmd, int argc, char **argv, hist_opts *o)
{
    static const struct option lo[] = {
        {"db", 1, NULL, O_DB},         {"json", 0, NULL, O_JSON},   {"csv", 0, NULL, O_CSV},
        {"kind", 1, NULL, O_KIND},     {"limit", 1, NULL, O_LIMIT}, {"model", 1, NULL, O_MODEL},
        {"instance", 1, NULL, O_INSTANCE}, {"all", 0, NULL, O_ALL}, {"help", 0, NULL, O_HELP},
        {"check", 0, NULL, O_CHECK},
        {NULL, 0, NULL, 0},
    };
    int is_hist = !strcmp(cmd, "history"), is_cmp = !strcmp(cmd, "compare");
    optind = 1;
    opterr = 0;
    int id, li = -1;
    st_err err = {0};
    while ((li = -1, id = getopt_long(argc, argv, "h", lo, &li)) != -1) {
        int ok = 1;
        switch (id) {
        case O_HELP: usage(stdout, cmd); return 1;
        case O_DB: o->db_path = optarg; break;
        case O_JSON: o->json = 1; break;
        case O_CSV: o->csv = 1; break;
        case O_KIND:
            ok = is_hist;
            o->kind = optarg;
            if (ok && !db_kind_valid(optarg)) {
                fprintf(stderr, "smdplan: %s: unknown record kind '%s'; allowed: plan, simulation, "
                                "run, calibration, bench\n", cmd, optarg);
                return 2;
            }
            break;
        case O_LIMIT: {
            ok = is_hist || is_cmp;
            int64_t v = 0;
            if (ok && units_parse_int(optarg, "--limit", 1, LIMIT_MAX, &v, &err) != ST_OK)
                return fail(&err);
            if (ok)
                o->limit = (int)v;
            break;
        }
        case O_MODEL: ok = is_cmp; o->model = optarg; break;
        case O_INSTANCE: ok = is_cmp; o->instance = optarg; break;
        case O_ALL: ok = is_cmp; o->all = 1; break;
        case O_CHECK: ok = is_hist; o->check = 1; break;
        default: ok = 0; break;
        }
        if (!ok && li >= 0) { /* an option of another of these commands */
            fprintf(stderr, "smdplan: %s: --%s is not an option of %s (see smdplan %s --help)\n",
                    cmd, lo[li].name, cmd, cmd);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "smdplan: %s: unknown option or missing value: '%s' (see smdplan %s "
                            "--help)\n", cmd, argv[optind - 1], cmd);
            return 2;
        }
    }
    if (o->json && o->csv) {
        fprintf(stderr, "smdplan: %s: give --json or --csv, not both\n", cmd);
        return 2;
    }
    int npos = argc - optind;
    if (is_hist && npos > 0) {
        fprintf(stderr, "smdplan: history: unexpected argument '%s' (see smdplan history --help)\n",
                argv[optind]);
        return 2;
    }
    if (!strcmp(cmd, "show") && npos != 1) {
        fprintf(stderr, "smdplan: show: give one record id (see smdplan history)\n");
        return 2;
    }
    if (npos > IDS_MAX) {
        fprintf(stderr, "smdplan: %s: at most %d record ids\n", cmd, IDS_MAX);
        return 2;
    }
    for (int i = optind; i < argc; i++) {
        if (parse_id(argv[i], &o->ids[o->nids]) != 0) {
            fprintf(stderr, "smdplan: %s: '%s' is not a record id (a positive number; see smdplan "
                            "history)\n", cmd, argv[i]);
            return 2;
        }
        o->nids++;
    }
    return 0;
}

/* ---- history ---- */

/* history --check: PRAGMA integrity_check over the whole file. */
static int check_db(const hist_opts *o)
{
    st_err err = {0};
    db *d = NULL;
    const char *path = db_default_path(o->db_path);
    cli_progress prog;
    cli_progress_start(&prog, "checking");
    char report[4096];
    report[0] = '\0';
    int rc = db_open(path, DB_OPEN_READ, &d, &err);
    if (rc == ST_OK)
        rc = db_check(d, report, sizeof report, &err);
    db_close(d);
    cli_progress_end(&prog);
    if (rc != ST_OK) {
        int ex = fail(&err);
        if (report[0])
            fprintf(stderr, "%s\n", report);
        return ex;
    }
    printf("%s: ok (every page and index checked)\n", path);
    return 0;
}

int cli_history_cmd(int argc, char **argv)
{
    hist_opts o;
    memset(&o, 0, sizeof o);
    o.limit = HISTORY_DEFAULT_LIMIT;
    int ex = parse_args("history", argc, argv, &o);
    if (ex)
        return ex == 1 ? 0 : ex;
    st_err err = {0};
    db *d = NULL;
    if (o.check)
        return check_db(&o);
    db_summary *rows = calloc((size_t)o.limit, sizeof *rows);
    int n = 0;
    int rc = rows ? ST_OK : ST_RAISE(&err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK)
        rc = db_open(db_default_path(o.db_path), DB_OPEN_READ, &d, &err);
    if (rc == ST_OK)
        rc = db_history(d, o.kind, rows, o.limit, &n, &err);
    db_close(d);
    if (rc != ST_OK) {
        free(rows);
        return fail(&err);
    }
    if (o.json)
        db_format_history_json(stdout, rows, n);
    else if (o.csv)
        db_format_history_csv(stdout, rows, n);
    else
        rpt_history_text(stdout, rows, n, o.kind);
    free(rows);
    return 0;
}

/* ---- show ---- */

int cli_show_cmd(int argc, char **argv)
{
    hist_opts o;
    memset(&o, 0, sizeof o);
    int ex = parse_args("show", argc, argv, &o);
    if (ex)
        return ex == 1 ? 0 : ex;
    st_err err = {0};
    db *d = NULL;
    cJSON *rec = NULL;
    int rc = db_open(db_default_path(o.db_path), DB_OPEN_READ, &d, &err);
    if (rc == ST_OK)
        rc = db_show(d, o.ids[0], &rec, &err);
    db_close(d);
    if (rc != ST_OK)
        return fail(&err);
    db_format_round_bytes(rec);
    if (o.json) {
        char *s = cJSON_Print(rec);
        if (s)
            printf("%s\n", s);
        cJSON_free(s);
    } else if (o.csv) {
        db_format_record_csv(stdout, rec);
    } else {
        rpt_history_show(stdout, rec);
    }
    cJSON_Delete(rec);
    return 0;
}

/* ---- compare ---- */

int cli_compare_cmd(int argc, char **argv)
{
    hist_opts o;
    memset(&o, 0, sizeof o);
    o.limit = COMPARE_DEFAULT_LIMIT;
    int ex = parse_args("compare", argc, argv, &o);
    if (ex)
        return ex == 1 ? 0 : ex;
    st_err err = {0};
    db *d = NULL;
    db_compare_row *rows = calloc((size_t)o.limit, sizeof *rows);
    int n = 0;
    db_compare_filter f = {o.ids, o.nids, o.model, o.instance, o.all ? 1 : 2};
    int rc = rows ? ST_OK : ST_RAISE(&err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK)
        rc = db_open(db_default_path(o.db_path), DB_OPEN_READ, &d, &err);
    if (rc == ST_OK)
        rc = db_compare(d, &f, rows, o.limit, &n, &err);
    db_close(d);
    if (rc != ST_OK) {
        free(rows);
        return fail(&err);
    }
    if (o.json)
        db_format_compare_json(stdout, rows, n);
    else if (o.csv)
        db_format_compare_csv(stdout, rows, n);
    else if (n == 0)
        printf("nothing to compare: no plan has %s of prediction, simulation and measurement "
               "(see smdplan compare --help)\n", o.all ? "any" : "two");
    else
        rpt_history_compare(stdout, rows, n);
    free(rows);
    return 0;
}
