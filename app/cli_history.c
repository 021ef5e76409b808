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

/* ---- CSV ---- */

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The shortest of %.15g / %.17g that reads back as v. */
static void csv_num(FILE *f, double v)
{
    if (!isfinite(v))
        return;
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, f);
}

/* A JSON scalar as a CSV cell (null: empty). */
static void csv_json(FILE *f, const cJSON *v)
{
    if (!v || cJSON_IsNull(v))
        return;
    if (cJSON_IsNumber(v))
        csv_num(f, v->valuedouble);
    else if (cJSON_IsString(v))
        csv_field(f, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "1" : "0", f);
    else {
        char *t = cJSON_PrintUnformatted(v);
        csv_field(f, t ? t : "");
        cJSON_free(t);
    }
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
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < n; i++) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddNumberToObject(j, "id", (double)rows[i].id);
            cJSON_AddStringToObject(j, "kind", rows[i].kind);
            cJSON_AddStringToObject(j, "created_at", rows[i].created_at);
            cJSON_AddStringToObject(j, "summary", rows[i].summary);
            cJSON_AddStringToObject(j, "command_line", rows[i].command_line);
            cJSON_AddItemToArray(arr, j);
        }
        char *s = cJSON_Print(arr);
        cJSON_Delete(arr);
        if (s)
            printf("%s\n", s);
        cJSON_free(s);
    } else if (o.csv) {
        printf("id,kind,created_at,summary,command_line\n");
        for (int i = 0; i < n; i++) {
            printf("%lld,%s,%s,", (long long)rows[i].id, rows[i].kind, rows[i].created_at);
            csv_field(stdout, rows[i].summary);
            fputc(',', stdout);
            csv_field(stdout, rows[i].command_line);
            fputc('\n', stdout);
        }
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

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static const cJSON *arr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsArray(v) ? v : NULL;
}

static const char *bytes(double b, char *buf, int n)
{
    if (!isfinite(b))
        return "-";
    return units_fmt_bytes(b, buf, n);
}

static void show_model(const cJSON *m)
{
    char p[24], head[40] = "", window[96] = "";
    /* recorded from schema version 6 (NULL before: a head of hidden / heads,
     * no window): a head size apart from hidden / heads and the layers that
     * attend through a sliding window, as the plan's model line says them
     * (cli_print_model; plan_model_local_layers: every Nth layer global,
     * 0 every layer local) */
    double hd = num(m, "head_dim"), w = num(m, "sliding_window"), L = num(m, "layers");
    double pat = num(m, "sliding_window_pattern");
    if (hd > 0 && hd * num(m, "heads") != num(m, "hidden"))
        snprintf(head, sizeof head, " of %.0f", hd);
    if (w > 0 && w < num(m, "seq") && L > 0) {
        double local = pat > 0 ? L - floor(L / pat) : L;
        if (local > 0)
            snprintf(window, sizeof window, ", sliding window %.0f on %.0f of %.0f layers", w,
                     local, L);
    }
    fprintf(out, "model:    %s (%s), %s params: %.0f layers, hidden %.0f, %.0f heads (kv %.0f)%s, "
           "ffn %.0f, seq %.0f, vocab %.0f%s\n",
           str(m, "name"), str(m, "arch"), units_fmt_count(num(m, "params"), p, sizeof p),
           num(m, "layers"), num(m, "hidden"), num(m, "heads"), num(m, "kv_heads"), head,
           num(m, "ffn"), num(m, "seq"), num(m, "vocab"), window);
}

static const cJSON *find_id(const cJSON *list, double id)
{
    for (const cJSON *x = list ? list->child : NULL; x; x = x->next)
        if (num(x, "id") == id)
            return x;
    return NULL;
}

static void show_prediction(const cJSON *pr)
{
    char a[32], b[32];
    fprintf(out, "  memory per GPU (worst stage %.0f of %.0f): %s of %s", num(pr, "worst_stage"),
           num(pr, "nstages"), bytes(num(pr, "total_bytes"), a, sizeof a),
           bytes(num(pr, "capacity_bytes"), b, sizeof b));
    if (strcmp(str(pr, "reject"), "ok") != 0)
        fprintf(out, "  (rejected: %s: %s)", str(pr, "reject"), str(pr, "reason"));
    fprintf(out, "\n    ");
    static const char *const mem[][2] = {
        {"weights_bytes", "weights"}, {"grads_bytes", "gradients"},
        {"optimizer_bytes", "optimizer"}, {"activations_bytes", "activations"},
        {"recompute_bytes", "recompute"}, {"logits_bytes", "logits"},
        {"comm_buffers_bytes", "comm buffers"}, {"context_bytes", "context"},
        {"allocator_bytes", "allocator"}};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
        fprintf(out, "%s%s %s", i ? ", " : "", mem[i][1], bytes(num(pr, mem[i][0]), a, sizeof a));
    fprintf(out, "\n");
    const cJSON *st = arr(pr, "stages");
    if (st && cJSON_GetArraySize(st) > 1) {
        fprintf(out, "    per stage:");
        int k = 0;
        for (const cJSON *s = st->child; s; s = s->next, k++)
            fprintf(out, "%s %s (%.0f layers)", k ? "," : "", bytes(num(s, "mem_bytes"), a, sizeof a),
                   num(s, "layers"));
        fprintf(out, "\n");
    }
    fprintf(out, "  step %.4f s: compute %.4f, tp comm %.4f, cp comm %.4f, pp comm %.4f, dp exposed "
           "%.4f, bubble %.4f, optimizer %.4f (dp total %.4f)\n",
           num(pr, "step_s"), num(pr, "compute_s"), num(pr, "tp_comm_s"), num(pr, "cp_comm_s"),
           num(pr, "pp_comm_s"), num(pr, "dp_exposed_s"), num(pr, "bubble_s"),
           num(pr, "optimizer_s"), num(pr, "dp_total_s"));
    fprintf(out, "  %.0f tokens/s, MFU %.1f%%", num(pr, "tokens_per_s"), 100 * num(pr, "mfu"));
    if (num(pr, "cost_per_hour") > 0)
        fprintf(out, ", $%.2f/h, $%.4f per 1M tokens", num(pr, "cost_per_hour"),
               num(pr, "cost_per_mtokens"));
    fprintf(out, "\n");
}

static void show_plans(const cJSON *rec)
{
    const cJSON *plans = arr(rec, "plans"), *its = arr(rec, "instance_types");
    for (const cJSON *p = plans ? plans->child : NULL; p; p = p->next) {
        const char *role = str(p, "role");
        const cJSON *it = find_id(its, num(p, "instance_type_id"));
        fprintf(out, "\n");
        if (!strcmp(role, "top"))
            fprintf(out, "plan %.0f: ", num(p, "rank"));
        else if (!strcmp(role, "closest_oom"))
            fprintf(out, "closest layout (out of memory): ");
        else if (!strcmp(role, "option"))
            fprintf(out, "%.0f x %s: ", num(p, "nodes"), it ? str(it, "name") : "?");
        else
            fprintf(out, "layout: ");
        fprintf(out, "%s, placement %s, global batch %.0f", str(p, "label"), str(p, "placement"),
               num(p, "global_batch"));
        if (*str(p, "framework")) /* recorded from schema version 3 on */
            fprintf(out, ", %s %s", str(p, "framework"), str(p, "precision"));
        fprintf(out, "\n");
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(p, "prediction");
        if (pr)
            show_prediction(pr);
        if (num(p, "simulated_step_s") > 0)
            fprintf(out, "  simulated step %.4f s\n", num(p, "simulated_step_s"));
    }
}

static void show_simulations(const cJSON *rec)
{
    const cJSON *sims = arr(rec, "simulations");
    for (const cJSON *s = sims ? sims->child : NULL; s; s = s->next) {
        char a[32], b[32];
        fprintf(out, "\nsimulated step %.4f s (planner %.4f s), pipeline span %.4f s, bubble %.1f%%, "
               "%.0f events\n",
               num(s, "step_s"), num(s, "planner_step_s"), num(s, "pipeline_s"),
               100 * num(s, "bubble_fraction"), num(s, "events"));
        if (num(s, "steps") > 1)
            fprintf(out, "%.0f steps, jitter sigma %.3f, seed %.0f: p50 %.4f s, p95 %.4f s, p99 %.4f s\n",
                   num(s, "steps"), num(s, "jitter_sigma"), num(s, "seed"), num(s, "p50_s"),
                   num(s, "p95_s"), num(s, "p99_s"));
        fprintf(out, "bounds: compute %.4f s, busiest link %.4f s; critical path %.0f ops over %.0f "
               "stages\n",
               num(s, "compute_bound_s"), num(s, "comm_bound_s"), num(s, "critical_ops"),
               num(s, "critical_stages"));
        cli_table *t = cli_table_new();
        if (t) {
            const char *const head[] = {"stage", "busy s", "bubble", "in flight", "peak act",
                                        "peak mem", "send busy", "DP exposed"};
            for (int k = 0; k < 8; k++)
                cli_table_col(t, head[k], 1, k < 3 ? 0 : k);
            const cJSON *st = arr(s, "stages");
            for (const cJSON *x = st ? st->child : NULL; x; x = x->next) {
                cli_table_row(t);
                cli_table_cell(t, "%.0f", num(x, "stage"));
                cli_table_cell(t, "%.3f", num(x, "busy_s"));
                cli_table_cell(t, "%.1f%%", 100 * num(x, "bubble_fraction"));
                cli_table_cell(t, "%.0f", num(x, "peak_inflight"));
                cli_table_cell(t, "%s", bytes(num(x, "peak_act_bytes"), a, sizeof a));
                cli_table_cell(t, "%s", bytes(num(x, "peak_mem_bytes"), b, sizeof b));
                cli_table_cell(t, "%.3f", num(x, "send_busy_s"));
                cli_table_cell(t, "%.3f", num(x, "dp_exposed_s"));
            }
            cli_table_print(out, t, " ");
            cli_table_free(t);
        }
        if (num(s, "trace_ops") > 0)
            fprintf(out, "trace: %.0f ops kept (in --json)\n", num(s, "trace_ops"));
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
    const cJSON *runs = arr(rec, "runs"), *plans = arr(rec, "plans"), *models = arr(rec, "models");
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
        const cJSON *p = find_id(plans, num(r, "plan_id"));
        const cJSON *m = find_id(models, num(r, "model_id"));
        char meas[24], pred[24], e[24], sim[24];
        cell(meas, sizeof meas, "%.3f", num(r, "measured_step_s"));
        cell(pred, sizeof pred, "%.3f", num(r, "predicted_step_s"));
        cell(e, sizeof e, "%+.1f%%", num(r, "error_pct"));
        cell(sim, sizeof sim, "%.3f", num(r, "simulated_step_s"));
        const char *note = str(r, "error_text");
        if (!*note)
            note = num(r, "compared") == 0 && *str(r, "reason") ? str(r, "reason") : str(r, "notes");
        const char *fw = p && *str(p, "framework") ? str(p, "framework") : "-";
        cli_table_row(t);
        cli_table_cell(t, "%.0f", num(r, "id"));
        cli_table_cell(t, "%s", str(r, "source"));
        cli_table_cell(t, "%s %s", str(r, "source_key"), str(r, "row_id"));
        cli_table_cell(t, "%s", m ? str(m, "name") : "-");
        cli_table_cell(t, "%s", fw);
        cli_table_cell(t, "%s", p ? str(p, "label") : "-");
        cli_table_cell(t, "%s", meas);
        cli_table_cell(t, "%s", pred);
        cli_table_cell(t, "%s", e);
        cli_table_cell(t, "%s", sim);
        cli_table_cell(t, "%s", str(r, "status"));
        const cJSON *steps = arr(r, "steps"), *ranks = arr(r, "ranks");
        /* under the row: what an executed run measured (schema version 4),
         * its steps, each rank's peak memory, how the row was read */
        char *extra = NULL;
        size_t xn = 0;
        FILE *xf = open_memstream(&extra, &xn);
        if (!xf)
            continue;
        if (num(r, "nranks") > 0) { /* an executed run (schema version 4) */
            fprintf(xf, "%.0f ranks, %s on %s, %.0f thread%s per rank", num(r, "nranks"),
                    str(r, "backend"), str(r, "run_host"), num(r, "threads_per_rank"),
                    num(r, "threads_per_rank") == 1 ? "" : "s");
            if (num(r, "tokens_per_s") > 0)
                fprintf(xf, "; %.1f tokens/s, %.3g model FLOP/s", num(r, "tokens_per_s"),
                        num(r, "achieved_flops"));
            if (num(r, "mfu") > 0)
                fprintf(xf, ", MFU %.2f%% of %.3g FLOP/s", 100 * num(r, "mfu"),
                        num(r, "peak_flops"));
            fprintf(xf, "\n");
            /* schema version 5: the device as it named itself */
            if (*str(r, "device_name") && strcmp(str(r, "device_name"), str(r, "device")))
                fprintf(xf, "device: %s\n", str(r, "device_name"));
            if (*str(r, "scaled"))
                fprintf(xf, "scaled: %s\n", str(r, "scaled"));
            if (num(r, "failed_rank") >= 0 && !cJSON_IsNull(cJSON_GetObjectItem(r, "failed_rank")))
                fprintf(xf, "failed rank %.0f, launcher status %.0f\n", num(r, "failed_rank"),
                        num(r, "exit_status"));
            /* the mean phases of the measured steps */
            double ph[5] = {0};
            int nm = 0;
            static const char *const keys[] = {"compute_s", "tp_comm_s", "pp_wait_s", "dp_comm_s",
                                               "optimizer_s"};
            for (const cJSON *k = steps ? steps->child : NULL; k; k = k->next)
                if (num(k, "measured") == 1) {
                    for (int q = 0; q < 5; q++)
                        ph[q] += num(k, keys[q]) > 0 ? num(k, keys[q]) : 0;
                    nm++;
                }
            if (nm > 0)
                fprintf(xf, "per step (mean of %d measured): compute %.4f s, TP comm %.4f s, PP "
                        "wait %.4f s, DP comm %.4f s, optimizer %.4f s\n", nm, ph[0] / nm,
                        ph[1] / nm, ph[2] / nm, ph[3] / nm, ph[4] / nm);
            if (*str(r, "run_dir"))
                fprintf(xf, "run directory %s; launched: %s\n", str(r, "run_dir"),
                        str(r, "launch_command"));
        }
        if (steps)
            fprintf(xf, "%d steps recorded\n", cJSON_GetArraySize(steps));
        if (ranks) {
            char a[32];
            int gpu = 0;
            fprintf(xf, "peak memory per rank:");
            for (const cJSON *k = ranks->child; k; k = k->next) {
                fprintf(xf, " %s", bytes(num(k, "peak_mem_bytes"), a, sizeof a));
                gpu |= num(k, "device_memory_peak_bytes") > 0;
            }
            fprintf(xf, "\n");
            if (gpu) { /* schema version 5: as CUDA counted it, context and libraries too */
                fprintf(xf, "GPU memory in use at most per rank (CUDA's count):");
                for (const cJSON *k = ranks->child; k; k = k->next)
                    fprintf(xf, " %s", bytes(num(k, "device_memory_peak_bytes"), a, sizeof a));
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
        snprintf(buf, n, "%s", str(c, "gpu"));
    else if (fw->valuestring[0])
        snprintf(buf, n, "%s on %s", fw->valuestring, str(c, "silicon"));
    else
        snprintf(buf, n, "%s pool", str(c, "silicon"));
}

static void show_calibrations(const cJSON *rec)
{
    const cJSON *cals = arr(rec, "calibrations");
    if (cals)
        fprintf(out, "\nfits (a framework on a chip, or the chip's pool of every framework's runs):\n");
    for (const cJSON *c = cals ? cals->child : NULL; c; c = c->next) {
        char name[64];
        fit_name(c, name, sizeof name);
        fprintf(out, "\n%s: %.0f rows", name, num(c, "rows"));
        if (num(c, "sources") > 0)
            fprintf(out, " from %.0f source%s", num(c, "sources"), num(c, "sources") == 1 ? "" : "s");
        fprintf(out, ", mean |error| %.1f%% -> %.1f%% (max %.1f%%), %.0f iterations%s\n",
               num(c, "mean_abs_err_before_pct"), num(c, "mean_abs_err_after_pct"),
               num(c, "max_abs_err_after_pct"), num(c, "iterations"),
               num(c, "converged") > 0 ? "" : " (not converged)");
        const cJSON *ps = arr(c, "params");
        for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
            int fitted = num(p, "fitted") > 0;
            char se[32] = "";
            if (fitted && isfinite(num(p, "std_err")))
                snprintf(se, sizeof se, "+- %.2g", num(p, "std_err"));
            fprintf(out, "  %-18s %10.4g -> %10.4g %-10s  %s\n", str(p, "name"), num(p, "before"),
                   num(p, "after"), se, fitted ? "fitted" : num(p, "asked") > 0 ? "kept (the "
                   "runs do not constrain it)" : "kept (not asked)");
        }
        if (num(c, "rejected") > 0)
            fprintf(out, "  rejected: %s; its runs use the %s pool\n", str(c, "why"),
                   str(c, "silicon"));
    }
    const cJSON *srcs = arr(rec, "calibration_sources");
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
        cell(a, sizeof a, "%.1f%%", num(x, "mean_abs_err_pct"));
        cell(b, sizeof b, "%.1f%%", num(x, "loso_mean_abs_err_pct"));
        cli_table_row(t);
        cli_table_cell(t, "%s", str(x, "source_key"));
        cli_table_cell(t, "%s", str(x, "framework"));
        cli_table_cell(t, "%s", str(x, "silicon"));
        cli_table_cell(t, "%.0f", num(x, "rows"));
        cli_table_cell(t, "%s", a);
        cli_table_cell(t, "%s", b);
        cli_table_cell(t, "%s", *str(x, "loso_basis") ? str(x, "loso_basis") : "-");
    }
    cli_table_print(out, t, "");
    cli_table_free(t);
}

/* A bench record: the host, the entry made, the measurements by kind. */
static void show_bench(const cJSON *rec)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(rec, "bench");
    if (!b)
        return;
    char a[32];
    fprintf(out, "host:     %s, %.0f cores, %s memory, %s\n", str(b, "host"), num(b, "cores"),
           bytes(num(b, "mem_bytes"), a, sizeof a), str(b, "cpu_model"));
    if (*str(b, "blas"))
        fprintf(out, "BLAS:     %s\n", str(b, "blas"));
    if (num(b, "peak_flops") > 0)
        fprintf(out, "device:   %s: peak %.2f GFLOP/s per rank (%.0f thread%s), gemm_dim_half %.1f "
               "(rms %.1f%%), misaligned factor %.3f, triad %.2f GB/s per rank\n",
               str(b, "gpu_name"), num(b, "peak_flops") / 1e9, num(b, "threads_per_rank"),
               num(b, "threads_per_rank") == 1 ? "" : "s", num(b, "gemm_dim_half"),
               100 * num(b, "gemm_rms_log_err"), num(b, "misaligned_factor"),
               num(b, "hbm_bps") / 1e9);
    if (num(b, "act_fwd_s") > 0 || num(b, "opt_param_s") > 0)
        printf("kernels:  hbm_eff %.3f; ns per element: GELU %.2f + %.2f, SwiGLU %.2f + %.2f, "
               "optimizer %.2f per parameter\n", num(b, "hbm_eff"), 1e9 * num(b, "act_fwd_s"),
               1e9 * num(b, "act_bwd_s"), 1e9 * num(b, "glu_fwd_s"), 1e9 * num(b, "glu_bwd_s"),
               1e9 * num(b, "opt_param_s"));
    if (num(b, "allreduce_busbw_bps") > 0)
        fprintf(out, "links:    %s between %.0f ranks: all-reduce busbw %.2f GB/s, %.2f us at <= 1 KiB; "
               "send/recv %.2f GB/s\n", str(b, "transport"), num(b, "ranks"),
               num(b, "allreduce_busbw_bps") / 1e9, 1e6 * num(b, "allreduce_latency_s"),
               num(b, "p2p_bps") / 1e9);
    if (*str(b, "instance_name"))
        fprintf(out, "entry:    %s%s%s\n", str(b, "instance_name"), *str(b, "catalog_file") ? " in " : "",
               str(b, "catalog_file"));
    const cJSON *g = arr(b, "gemm"), *m = arr(b, "mem"), *c = arr(b, "comm");
    const cJSON *el = arr(b, "elem");
    fprintf(out, "measured: %d GEMMs, %d elementwise kernels, %d triads, %d collectives (smdplan "
            "show %.0f --json has each)\n", g ? cJSON_GetArraySize(g) : 0,
            el ? cJSON_GetArraySize(el) : 0, m ? cJSON_GetArraySize(m) : 0,
           c ? cJSON_GetArraySize(c) : 0, num(rec, "id"));
}

static void show_human(const cJSON *rec)
{
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(rec, "provenance");
    fprintf(out, "record %.0f: %s, %s\n", num(rec, "id"), str(rec, "kind"), str(rec, "created_at"));
    fprintf(out, "summary:  %s\n", str(rec, "summary"));
    fprintf(out, "command:  %s\n", str(prov, "command_line"));
    fprintf(out, "by:       smdplan %s (git %s), %s; %s; host %s\n", str(prov, "tool_version"),
           str(prov, "git_rev"), str(prov, "build_features"), str(prov, "library_versions"),
           str(prov, "host"));
    const cJSON *models = arr(rec, "models");
    const cJSON *search = cJSON_GetObjectItemCaseSensitive(rec, "search");
    int many_models = models && cJSON_GetArraySize(models) > 1;
    if (models && !many_models)
        show_model(models->child);
    const cJSON *its = arr(rec, "instance_types");
    const cJSON *plans = arr(rec, "plans");
    if (plans && its && cJSON_GetArraySize(its) == 1 && !arr(rec, "runs")) {
        const cJSON *it = its->child, *p = plans->child;
        char a[32];
        fprintf(out, "cluster:  %.0f x %s (%.0f GPUs, %s, %s each)\n", num(p, "nodes"), str(it, "name"),
               num(p, "gpus"), str(it, "gpu"), bytes(num(it, "gpu_mem_bytes"), a, sizeof a));
    }
    if (search && !strcmp(str(search, "mode"), "compare")) {
        char t[24];
        fprintf(out, "compare:  objective %s, the best plan of each instance type and count; training "
               "%s tokens\n",
               str(search, "objective"), units_fmt_count(num(search, "tokens"), t, sizeof t));
    } else if (search) {
        fprintf(out, "search:   objective %s, %.0f layouts evaluated, %.0f feasible",
               str(search, "objective"), num(search, "evaluated"), num(search, "feasible"));
        if (num(search, "global_batch") > 0)
            fprintf(out, ", global batch %.0f", num(search, "global_batch"));
        fprintf(out, "\n");
    }
    if (!arr(rec, "runs"))
        show_plans(rec);
    show_simulations(rec);
    show_runs(rec);
    show_calibrations(rec);
    show_bench(rec);
}

/* CSV of a list: the scalars of each element, plus those of one nested
 * object (flatten) and one parent value (lead / lead_val); the header comes
 * from the first element. */
static void csv_list(const cJSON *list, const char *flatten, const char *lead,
                     const cJSON *const *lead_vals)
{
    static const char *const skip[] = {"id", "plan_id", "model_id", "instance_type_id",
                                       "prediction_id", "simulation_id", "run_id",
                                       "calibration_id", "match_key", NULL};
    const cJSON *first = list ? list->child : NULL;
    if (!first)
        return;
    const cJSON *fo = flatten ? cJSON_GetObjectItemCaseSensitive(first, flatten) : NULL;
    int col = 0;
    for (int pass = 0; pass < 2; pass++) {
        const cJSON *src = pass == 0 ? first : fo;
        if (pass == 0 && lead)
            printf("%s", lead), col++;
        for (const cJSON *c = src ? src->child : NULL; c; c = c->next) {
            int sk = cJSON_IsArray(c) || cJSON_IsObject(c);
            for (int k = 0; !sk && skip[k]; k++)
                sk = !strcmp(c->string, skip[k]);
            if (sk)
                continue;
            printf("%s%s", col++ ? "," : "", c->string);
        }
    }
    printf("\n");
    int i = 0;
    for (const cJSON *e = first; e; e = e->next, i++) {
        const cJSON *eo = flatten ? cJSON_GetObjectItemCaseSensitive(e, flatten) : NULL;
        col = 0;
        if (lead) {
            csv_json(stdout, lead_vals[i]);
            col++;
        }
        for (int pass = 0; pass < 2; pass++) {
            const cJSON *hdr = pass == 0 ? first : fo;
            const cJSON *src = pass == 0 ? e : eo;
            for (const cJSON *c = hdr ? hdr->child : NULL; c; c = c->next) {
                int sk = cJSON_IsArray(c) || cJSON_IsObject(c);
                for (int k = 0; !sk && skip[k]; k++)
                    sk = !strcmp(c->string, skip[k]);
                if (sk)
                    continue;
                if (col++)
                    fputc(',', stdout);
                csv_json(stdout, src ? cJSON_GetObjectItemCaseSensitive(src, c->string) : NULL);
            }
        }
        fputc('\n', stdout);
    }
}

static void show_csv(const cJSON *rec)
{
    const char *kind = str(rec, "kind");
    if (!strcmp(kind, "simulation")) {
        const cJSON *sims = arr(rec, "simulations");
        if (sims)
            csv_list(arr(sims->child, "stages"), NULL, NULL, NULL);
    } else if (!strcmp(kind, "run")) {
        csv_list(arr(rec, "runs"), NULL, NULL, NULL);
    } else if (!strcmp(kind, "calibration")) {
        /* one row per (fit, parameter); a fit is a framework on a chip or
         * the chip's pool (framework empty); gpu: a version-2 record's GPU */
        const cJSON *cals = arr(rec, "calibrations");
        printf("framework,silicon,gpu,rows,sources,rejected,name,before,after,std_err,asked,"
               "fitted\n");
        for (const cJSON *c = cals ? cals->child : NULL; c; c = c->next) {
            const cJSON *ps = arr(c, "params");
            for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
                csv_field(stdout, str(c, "framework"));
                fputc(',', stdout);
                csv_field(stdout, str(c, "silicon"));
                fputc(',', stdout);
                csv_field(stdout, str(c, "gpu"));
                printf(",%.0f,", num(c, "rows"));
                csv_num(stdout, num(c, "sources"));
                fputc(',', stdout);
                csv_num(stdout, num(c, "rejected"));
                printf(",%s,", str(p, "name"));
                csv_num(stdout, num(p, "before"));
                fputc(',', stdout);
                csv_num(stdout, num(p, "after"));
                fputc(',', stdout);
                csv_num(stdout, num(p, "std_err"));
                printf(",%.0f,%.0f\n", num(p, "asked"), num(p, "fitted"));
            }
        }
    } else if (!strcmp(kind, "bench")) {
        /* the transport's measurements when there are, else the GEMMs */
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(rec, "bench");
        csv_list(arr(b, "comm") ? arr(b, "comm") : arr(b, "gemm"), NULL, NULL, NULL);
    } else {
        csv_list(arr(rec, "plans"), "prediction", NULL, NULL);
    }
}

/* Byte counts as whole numbers in what show prints: the records keep the
 * planner's exact figures (products of fractions: 0.8 GiB of CUDA context
 * is 858993459.2 bytes), a byte count is read as a whole number. */
static void round_bytes(cJSON *v, int bytes)
{
    for (cJSON *c = v ? v->child : NULL; c; c = c->next) {
        size_t n = c->string ? strlen(c->string) : 0;
        int b = bytes || (n > 6 && strcmp(c->string + n - 6, "_bytes") == 0);
        if (cJSON_IsNumber(c) && b && isfinite(c->valuedouble))
            cJSON_SetNumberValue(c, round(c->valuedouble));
        else if (cJSON_IsArray(c) || cJSON_IsObject(c))
            round_bytes(c, b && cJSON_IsArray(c));
    }
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
    round_bytes(rec, 0);
    if (o.json) {
        char *s = cJSON_Print(rec);
        if (s)
            printf("%s\n", s);
        cJSON_free(s);
    } else if (o.csv) {
        show_csv(rec);
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

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v) && v != 0)
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_id_or_null(cJSON *o, const char *k, int64_t v)
{
    if (v > 0)
        cJSON_AddNumberToObject(o, k, (double)v);
    else
        cJSON_AddNullToObject(o, k);
}

/* smdplan compare --json: the rows as an array of objects. */
static void compare_json(const db_compare_row *rows, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const db_compare_row *r = &rows[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", r->model);
        cJSON_AddNumberToObject(j, "params", (double)r->params);
        cJSON_AddStringToObject(j, "instance_type", r->instance_type);
        cJSON_AddNumberToObject(j, "instances", r->nodes);
        cJSON_AddNumberToObject(j, "gpus", r->gpus);
        cJSON_AddStringToObject(j, "layout", r->layout);
        if (r->framework[0])
            cJSON_AddStringToObject(j, "framework", r->framework);
        else /* recorded before frameworks */
            cJSON_AddNullToObject(j, "framework");
        if (r->precision[0])
            cJSON_AddStringToObject(j, "precision", r->precision);
        else
            cJSON_AddNullToObject(j, "precision");
        add_num_or_null(j, "predicted_step_s", r->predicted_s);
        add_num_or_null(j, "simulated_step_s", r->simulated_s);
        add_num_or_null(j, "measured_step_s", r->measured_s);
        if (r->measured_source[0])
            cJSON_AddStringToObject(j, "measured_source", r->measured_source);
        add_num_or_null(j, "error_pred_vs_measured_pct", db_error_pct(r->predicted_s, r->measured_s));
        add_num_or_null(j, "error_sim_vs_measured_pct", db_error_pct(r->simulated_s, r->measured_s));
        add_num_or_null(j, "error_sim_vs_pred_pct", db_error_pct(r->simulated_s, r->predicted_s));
        add_id_or_null(j, "predicted_record", r->predicted_id);
        add_id_or_null(j, "simulated_record", r->simulated_id);
        add_id_or_null(j, "measured_record", r->measured_id);
        cJSON_AddItemToArray(a, j);
    }
    char *s = cJSON_Print(a);
    cJSON_Delete(a);
    if (s)
        printf("%s\n", s);
    cJSON_free(s);
}

/* smdplan compare --csv: a header line, then a line per row. */
static void compare_csv(const db_compare_row *rows, int n)
{
    printf("model,params,instance_type,instances,gpus,layout,framework,precision,"
           "predicted_step_s,simulated_step_s,measured_step_s,measured_source,"
           "error_pred_vs_measured_pct,error_sim_vs_measured_pct,error_sim_vs_pred_pct,"
           "predicted_record,simulated_record,measured_record\n");
    for (int i = 0; i < n; i++) {
        const db_compare_row *r = &rows[i];
        csv_field(stdout, r->model);
        printf(",%lld,", (long long)r->params);
        csv_field(stdout, r->instance_type);
        printf(",%d,%d,", r->nodes, r->gpus);
        csv_field(stdout, r->layout);
        fputc(',', stdout);
        csv_field(stdout, r->framework);
        fputc(',', stdout);
        csv_field(stdout, r->precision);
        double v[] = {r->predicted_s, r->simulated_s, r->measured_s};
        for (int k = 0; k < 3; k++) {
            fputc(',', stdout);
            if (v[k] > 0)
                csv_num(stdout, v[k]);
        }
        printf(",%s,", r->measured_source);
        csv_num(stdout, db_error_pct(r->predicted_s, r->measured_s));
        fputc(',', stdout);
        csv_num(stdout, db_error_pct(r->simulated_s, r->measured_s));
        fputc(',', stdout);
        csv_num(stdout, db_error_pct(r->simulated_s, r->predicted_s));
        int64_t rid[] = {r->predicted_id, r->simulated_id, r->measured_id};
        for (int k = 0; k < 3; k++) {
            fputc(',', stdout);
            if (rid[k] > 0)
                printf("%lld", (long long)rid[k]);
        }
        fputc('\n', stdout);
    }
}

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
        compare_json(rows, n);
    } else if (o.csv) {
        compare_csv(rows, n);
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
