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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "data/db_format.h"
#include "reports/rpt_record.h"
#include "common/json_get.h"

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
    if (o.json) {
        db_format_history_json(stdout, rows, n);
    } else if (o.csv) {
        db_format_history_csv(stdout, rows, n);
    } else {
        if (n == 0)
            printf("no records%s%s\n", o.kind ? " of kind " : "", o.kind ? o.kind : "");
        else
            printf("%6s  %-11s  %-24s  %s\n", "id", "kind", "created (UTC)", "summary");
        /* the summary wrapped under itself */
        for (int i = 0; i < n; i++) {
            char lead[64];
            snprintf(lead, sizeof lead, "%6lld  %-11s  %-24s  ", (long long)rows[i].id,
                     rows[i].kind, rows[i].created_at);
            char rest[64];
            snprintf(rest, sizeof rest, "%*s", (int)strlen(lead), "");
            /* one record, one paragraph: a newline in a name is shown as \u000a */
            char *line = cli_escape_line(rows[i].summary);
            cli_wrap(stdout, line ? line : rows[i].summary, lead, rest);
            free(line);
        }
    }
    free(rows);
    return 0;
}

/* ---- show ---- */

/* Where show's human output goes: a buffer that is wrapped to the terminal
 * at the end (cli_wrap_lines). */
static FILE *out;


static const char *bytes(double b, char *buf, int n)
{
    if (!isfinite(b))
        return "-";
    return units_fmt_bytes(b, buf, n);
}

static const cJSON *find_id(const cJSON *list, double id)
{
    for (const cJSON *x = list ? list->child : NULL; x; x = x->next)
        if (json_get_num(x, "id") == id)
            return x;
    return NULL;
}

static void show_simulations(const cJSON *rec)
{
    const cJSON *sims = json_get_arr(rec, "simulations");
    for (const cJSON *s = sims ? sims->child : NULL; s; s = s->next) {
        char a[32], b[32];
        fprintf(out, "\nsimulated step %.4f s (planner %.4f s), pipeline span %.4f s, bubble %.1f%%, "
               "%.0f events\n",
               json_get_num(s, "step_s"), json_get_num(s, "planner_step_s"), json_get_num(s, "pipeline_s"),
               100 * json_get_num(s, "bubble_fraction"), json_get_num(s, "events"));
        if (json_get_num(s, "steps") > 1)
            fprintf(out, "%.0f steps, jitter sigma %.3f, seed %.0f: p50 %.4f s, p95 %.4f s, p99 %.4f s\n",
                   json_get_num(s, "steps"), json_get_num(s, "jitter_sigma"), json_get_num(s, "seed"), json_get_num(s, "p50_s"),
                   json_get_num(s, "p95_s"), json_get_num(s, "p99_s"));
        fprintf(out, "bounds: compute %.4f s, busiest link %.4f s; critical path %.0f ops over %.0f "
               "stages\n",
               json_get_num(s, "compute_bound_s"), json_get_num(s, "comm_bound_s"), json_get_num(s, "critical_ops"),
               json_get_num(s, "critical_stages"));
        cli_table *t = cli_table_new();
        if (t) {
            const char *const head[] = {"stage", "busy s", "bubble", "in flight", "peak act",
                                        "peak mem", "send busy", "DP exposed"};
            for (int k = 0; k < 8; k++)
                cli_table_col(t, head[k], 1, k < 3 ? 0 : k);
            const cJSON *st = json_get_arr(s, "stages");
            for (const cJSON *x = st ? st->child : NULL; x; x = x->next) {
                cli_table_row(t);
                cli_table_cell(t, "%.0f", json_get_num(x, "stage"));
                cli_table_cell(t, "%.3f", json_get_num(x, "busy_s"));
                cli_table_cell(t, "%.1f%%", 100 * json_get_num(x, "bubble_fraction"));
                cli_table_cell(t, "%.0f", json_get_num(x, "peak_inflight"));
                cli_table_cell(t, "%s", bytes(json_get_num(x, "peak_act_bytes"), a, sizeof a));
                cli_table_cell(t, "%s", bytes(json_get_num(x, "peak_mem_bytes"), b, sizeof b));
                cli_table_cell(t, "%.3f", json_get_num(x, "send_busy_s"));
                cli_table_cell(t, "%.3f", json_get_num(x, "dp_exposed_s"));
            }
            cli_table_print(out, t, " ");
            cli_table_free(t);
        }
        if (json_get_num(s, "trace_ops") > 0)
            fprintf(out, "trace: %.0f ops kept (in --json)\n", json_get_num(s, "trace_ops"));
    }
}

static void cell(char *buf, size_t n, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "-");
}

static void show_runs(const cJSON *rec)
{
    const cJSON *runs = json_get_arr(rec, "runs"), *plans = json_get_arr(rec, "plans"), *models = json_get_arr(rec, "models");
    if (!runs)
        return;
    cli_table *t = cli_table_new();
    if (!t)
        return;
    const char *const head[] = {"run", "source", "row", "model", "framework", "layout",
                                "measured", "predicted", "error", "simulated", "status"};
    const int right[] = {1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0};
    const int prio[] = {0, 3, 0, 2, 3, 1, 0, 0, 0, 1, 2};
    for (int k = 0; k < 11; k++)
        cli_table_col(t, head[k], right[k], prio[k]);
    for (const cJSON *r = runs->child; r; r = r->next) {
        const cJSON *p = find_id(plans, json_get_num(r, "plan_id"));
        const cJSON *m = find_id(models, json_get_num(r, "model_id"));
        char meas[24], pred[24], e[24], sim[24];
        cell(meas, sizeof meas, "%.3f", json_get_num(r, "measured_step_s"));
        cell(pred, sizeof pred, "%.3f", json_get_num(r, "predicted_step_s"));
        cell(e, sizeof e, "%+.1f%%", json_get_num(r, "error_pct"));
        cell(sim, sizeof sim, "%.3f", json_get_num(r, "simulated_step_s"));
        const char *note = json_get_str(r, "error_text");
        if (!*note)
            note = json_get_num(r, "compared") == 0 && *json_get_str(r, "reason") ? json_get_str(r, "reason") : json_get_str(r, "notes");
        const char *fw = p && *json_get_str(p, "framework") ? json_get_str(p, "framework") : "-";
        cli_table_row(t);
        cli_table_cell(t, "%.0f", json_get_num(r, "id"));
        cli_table_cell(t, "%s", json_get_str(r, "source"));
        cli_table_cell(t, "%s %s", json_get_str(r, "source_key"), json_get_str(r, "row_id"));
        cli_table_cell(t, "%s", m ? json_get_str(m, "name") : "-");
        cli_table_cell(t, "%s", fw);
        cli_table_cell(t, "%s", p ? json_get_str(p, "label") : "-");
        cli_table_cell(t, "%s", meas);
        cli_table_cell(t, "%s", pred);
        cli_table_cell(t, "%s", e);
        cli_table_cell(t, "%s", sim);
        cli_table_cell(t, "%s", json_get_str(r, "status"));
        const cJSON *steps = json_get_arr(r, "steps"), *ranks = json_get_arr(r, "ranks");
        /* under the row: what an executed run measured (schema version 4),
         * its steps, each rank's peak memory, how the row was read */
        char *extra = NULL;
        size_t xn = 0;
        FILE *xf = open_memstream(&extra, &xn);
        if (!xf)
            continue;
        if (json_get_num(r, "nranks") > 0) { /* an executed run (schema version 4) */
            fprintf(xf, "%.0f ranks, %s on %s, %.0f thread%s per rank", json_get_num(r, "nranks"),
                    json_get_str(r, "backend"), json_get_str(r, "run_host"), json_get_num(r, "threads_per_rank"),
                    json_get_num(r, "threads_per_rank") == 1 ? "" : "s");
            if (json_get_num(r, "tokens_per_s") > 0)
                fprintf(xf, "; %.1f tokens/s, %.3g model FLOP/s", json_get_num(r, "tokens_per_s"),
                        json_get_num(r, "achieved_flops"));
            if (json_get_num(r, "mfu") > 0)
                fprintf(xf, ", MFU %.2f%% of %.3g FLOP/s", 100 * json_get_num(r, "mfu"),
                        json_get_num(r, "peak_flops"));
            fprintf(xf, "\n");
            /* schema version 5: the device as it named itself */
            if (*json_get_str(r, "device_name") && strcmp(json_get_str(r, "device_name"), json_get_str(r, "device")))
                fprintf(xf, "device: %s\n", json_get_str(r, "device_name"));
            if (*json_get_str(r, "scaled"))
                fprintf(xf, "scaled: %s\n", json_get_str(r, "scaled"));
            if (json_get_num(r, "failed_rank") >= 0 && !cJSON_IsNull(cJSON_GetObjectItem(r, "failed_rank")))
                fprintf(xf, "failed rank %.0f, launcher status %.0f\n", json_get_num(r, "failed_rank"),
                        json_get_num(r, "exit_status"));
            /* the mean phases of the measured steps */
            double ph[5] = {0};
            int nm = 0;
            static const char *const keys[] = {"compute_s", "tp_comm_s", "pp_wait_s", "dp_comm_s",
                                               "optimizer_s"};
            for (const cJSON *k = steps ? steps->child : NULL; k; k = k->next)
                if (json_get_num(k, "measured") == 1) {
                    for (int q = 0; q < 5; q++)
                        ph[q] += json_get_num(k, keys[q]) > 0 ? json_get_num(k, keys[q]) : 0;
                    nm++;
                }
            if (nm > 0)
                fprintf(xf, "per step (mean of %d measured): compute %.4f s, TP comm %.4f s, PP "
                        "wait %.4f s, DP comm %.4f s, optimizer %.4f s\n", nm, ph[0] / nm,
                        ph[1] / nm, ph[2] / nm, ph[3] / nm, ph[4] / nm);
            if (*json_get_str(r, "run_dir"))
                fprintf(xf, "run directory %s; launched: %s\n", json_get_str(r, "run_dir"),
                        json_get_str(r, "launch_command"));
        }
        if (steps)
            fprintf(xf, "%d steps recorded\n", cJSON_GetArraySize(steps));
        if (ranks) {
            char a[32];
            int gpu = 0;
            fprintf(xf, "peak memory per rank:");
            for (const cJSON *k = ranks->child; k; k = k->next) {
                fprintf(xf, " %s", bytes(json_get_num(k, "peak_mem_bytes"), a, sizeof a));
                gpu |= json_get_num(k, "device_memory_peak_bytes") > 0;
            }
            fprintf(xf, "\n");
            if (gpu) { /* schema version 5: as CUDA counted it, context and libraries too */
                fprintf(xf, "GPU memory in use at most per rank (CUDA's count):");
                for (const cJSON *k = ranks->child; k; k = k->next)
                    fprintf(xf, " %s", bytes(json_get_num(k, "device_memory_peak_bytes"), a, sizeof a));
                fprintf(xf, "\n");
            }
        }
        if (*note)
            fprintf(xf, "%s", note);
        fclose(xf);
        while (xn > 0 && extra[xn - 1] == '\n')
            extra[--xn] = '\0';
        if (xn > 0)
            cli_table_note(t, "%s", extra);
        free(extra);
    }
    fprintf(out, "\n");
    cli_table_print(out, t, "");
    cli_table_free(t);
}

/* "megatron on GA100", "GA100 pool" (every framework's runs on the chip),
 * or a version-2 record's GPU type. */
static void fit_name(const cJSON *c, char *buf, size_t n)
{
    const cJSON *fw = cJSON_GetObjectItemCaseSensitive(c, "framework");
    if (!cJSON_IsString(fw)) /* recorded before fits per framework */
        snprintf(buf, n, "%s", json_get_str(c, "gpu"));
    else if (fw->valuestring[0])
        snprintf(buf, n, "%s on %s", fw->valuestring, json_get_str(c, "silicon"));
    else
        snprintf(buf, n, "%s pool", json_get_str(c, "silicon"));
}

static void show_calibrations(const cJSON *rec)
{
    const cJSON *cals = json_get_arr(rec, "calibrations");
    if (cals)
        fprintf(out, "\nfits (a framework on a chip, or the chip's pool of every framework's runs):\n");
    for (const cJSON *c = cals ? cals->child : NULL; c; c = c->next) {
        char name[64];
        fit_name(c, name, sizeof name);
        fprintf(out, "\n%s: %.0f rows", name, json_get_num(c, "rows"));
        if (json_get_num(c, "sources") > 0)
            fprintf(out, " from %.0f source%s", json_get_num(c, "sources"), json_get_num(c, "sources") == 1 ? "" : "s");
        fprintf(out, ", mean |error| %.1f%% -> %.1f%% (max %.1f%%), %.0f iterations%s\n",
               json_get_num(c, "mean_abs_err_before_pct"), json_get_num(c, "mean_abs_err_after_pct"),
               json_get_num(c, "max_abs_err_after_pct"), json_get_num(c, "iterations"),
               json_get_num(c, "converged") > 0 ? "" : " (not converged)");
        const cJSON *ps = json_get_arr(c, "params");
        for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
            int fitted = json_get_num(p, "fitted") > 0;
            char se[32] = "";
            if (fitted && isfinite(json_get_num(p, "std_err")))
                snprintf(se, sizeof se, "+- %.2g", json_get_num(p, "std_err"));
            fprintf(out, "  %-18s %10.4g -> %10.4g %-10s  %s\n", json_get_str(p, "name"), json_get_num(p, "before"),
                   json_get_num(p, "after"), se, fitted ? "fitted" : json_get_num(p, "asked") > 0 ? "kept (the "
                   "runs do not constrain it)" : "kept (not asked)");
        }
        if (json_get_num(c, "rejected") > 0)
            fprintf(out, "  rejected: %s; its runs use the %s pool\n", json_get_str(c, "why"),
                   json_get_str(c, "silicon"));
    }
    const cJSON *srcs = json_get_arr(rec, "calibration_sources");
    if (!srcs)
        return;
    fprintf(out, "\nsources: mean |error| of their runs, fitted with every source and held out (fitted "
           "without the source's own runs)\n");
    cli_table *t = cli_table_new();
    if (!t)
        return;
    const char *const head[] = {"source", "framework", "chip", "rows", "fitted", "held out",
                                "held out, predicted by"};
    const int right[] = {0, 0, 0, 1, 1, 1, 0};
    const int prio[] = {0, 0, 0, 2, 0, 0, 1};
    for (int k = 0; k < 7; k++)
        cli_table_col(t, head[k], right[k], prio[k]);
    for (const cJSON *x = srcs->child; x; x = x->next) {
        char a[24], b[24];
        cell(a, sizeof a, "%.1f%%", json_get_num(x, "mean_abs_err_pct"));
        cell(b, sizeof b, "%.1f%%", json_get_num(x, "loso_mean_abs_err_pct"));
        cli_table_row(t);
        cli_table_cell(t, "%s", json_get_str(x, "source_key"));
        cli_table_cell(t, "%s", json_get_str(x, "framework"));
        cli_table_cell(t, "%s", json_get_str(x, "silicon"));
        cli_table_cell(t, "%.0f", json_get_num(x, "rows"));
        cli_table_cell(t, "%s", a);
        cli_table_cell(t, "%s", b);
        cli_table_cell(t, "%s", *json_get_str(x, "loso_basis") ? json_get_str(x, "loso_basis") : "-");
    }
    cli_table_print(out, t, "");
    cli_table_free(t);
}

/* The page of smdplan show: the reports library's text around the tables
 * that fit the terminal. */
static void show_human(const cJSON *rec)
{
    rpt_record_text_head(out, rec);
    rpt_record_text_plans(out, rec);
    show_simulations(rec);
    show_runs(rec);
    show_calibrations(rec);
    rpt_record_text_bench(out, rec);
}

/* Every string of a record as one line (cli_escape_line): show prints each
 * field on a line of its own, which a newline in a name would split. */
static void escape_strings(cJSON *c)
{
    for (; c; c = c->next) {
        if (cJSON_IsString(c) && c->valuestring && strpbrk(c->valuestring, "\t\n\r\v\f")) {
            char *line = cli_escape_line(c->valuestring);
            if (line)
                cJSON_SetValuestring(c, line);
            free(line);
        }
        if (c->child)
            escape_strings(c->child);
    }
}

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
        escape_strings(rec);
        cli_capture_buf cb;
        out = cli_capture(&cb);
        if (!out) {
            out = stdout;
            show_human(rec);
        } else {
            show_human(rec);
            fclose(cb.f);
            cb.f = NULL;
            if (cb.text)
                cli_wrap_lines(stdout, cb.text);
            free(cb.text);
        }
        out = NULL;
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
    if (o.json) {
        db_format_compare_json(stdout, rows, n);
    } else if (o.csv) {
        db_format_compare_csv(stdout, rows, n);
    } else if (n == 0) {
        printf("nothing to compare: no plan has %s of prediction, simulation and measurement "
               "(see smdplan compare --help)\n", o.all ? "any" : "two");
    } else {
        cli_table *t = cli_table_new();
        const char *const head[] = {"model", "instance", "n", "layout", "framework",
                                    "predicted", "simulated", "measured", "pred/meas",
                                    "sim/meas", "sim/pred", "records p/s/m"};
        const int right[] = {0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1};
        const int prio[] = {2, 0, 0, -1, 3, 0, 0, 0, 0, 1, 1, 0};
        for (int k = 0; t && k < 12; k++)
            cli_table_col(t, head[k], right[k], prio[k]);
        for (int i = 0; t && i < n; i++) {
            const db_compare_row *r = &rows[i];
            char p[16], s[16], m[16], e1[16], e2[16], e3[16], ids[3][24];
            /* three significant digits at least: an executed run on a CPU
             * steps in milliseconds */
            const char *tf = "%.3f";
            double small = fmin(r->predicted_s > 0 ? r->predicted_s : INFINITY,
                                fmin(r->simulated_s > 0 ? r->simulated_s : INFINITY,
                                     r->measured_s > 0 ? r->measured_s : INFINITY));
            if (small < 0.1)
                tf = "%.5f";
            cell(p, sizeof p, tf, r->predicted_s > 0 ? r->predicted_s : NAN);
            cell(s, sizeof s, tf, r->simulated_s > 0 ? r->simulated_s : NAN);
            cell(m, sizeof m, tf, r->measured_s > 0 ? r->measured_s : NAN);
            cell(e1, sizeof e1, "%+.1f%%", db_error_pct(r->predicted_s, r->measured_s));
            cell(e2, sizeof e2, "%+.1f%%", db_error_pct(r->simulated_s, r->measured_s));
            cell(e3, sizeof e3, "%+.1f%%", db_error_pct(r->simulated_s, r->predicted_s));
            const int64_t rid[3] = {r->predicted_id, r->simulated_id, r->measured_id};
            for (int k = 0; k < 3; k++)
                cell(ids[k], sizeof ids[k], "%.0f", rid[k] > 0 ? (double)rid[k] : NAN);
            cli_table_row(t);
            cli_table_cell(t, "%s", r->model);
            cli_table_cell(t, "%s", r->instance_type);
            cli_table_cell(t, "%d", r->nodes);
            cli_table_cell(t, "%s", r->layout); /* whole: a cut layout is another layout */
            if (r->framework[0])
                cli_table_cell(t, "%s %s", r->framework, r->precision);
            else /* recorded before frameworks */
                cli_table_cell(t, "-");
            cli_table_cell(t, "%s", p);
            cli_table_cell(t, "%s", s);
            cli_table_cell(t, "%s", m);
            cli_table_cell(t, "%s", e1);
            cli_table_cell(t, "%s", e2);
            cli_table_cell(t, "%s", e3);
            cli_table_cell(t, "%s/%s/%s", ids[0], ids[1], ids[2]);
        }
        if (t)
            cli_table_print(stdout, t, "");
        cli_table_free(t);
        cli_wrap(stdout, "(step times in s, latest of each; errors 100 (a - b) / b; n = instances; "
                         "records p/s/m: the records of the prediction, simulation and measurement, "
                         "for smdplan show ID)", "", " ");
    }
    free(rows);
    return 0;
}
