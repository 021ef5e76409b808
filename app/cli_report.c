/*
 * cli_report.c: `smdplan report [--out DIR] [--db PATH] [--plan ID]`.
 *
 * Reads the records database (read-only) and writes, with the reports
 * library, the plots a capacity planner looks at and an index.html with the
 * tables behind them: memory per GPU by term and pipeline stage for the top
 * plans of a search (the worst stage only for plans recorded before stages
 * kept their terms), step time over TP x PP, throughput and cost against
 * instance count, the pipeline timeline of the newest simulation with a
 * trace, and predicted against measured step time. A plot whose records are missing is left out
 * and the page says which command makes them. gnuplot missing: the data and
 * scripts are written and one line says how to install it.
 */
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "data/db.h"
#include "reports/rpt.h"

#define REPORT_PLANS_MAX 32
#define REPORT_HISTORY_MAX 64

enum { O_HELP = 'h', O_OUT = 256, O_DB, O_PLAN, O_NO_RENDER };

static const struct option long_opts[] = {
    {"out", 1, NULL, O_OUT},   {"db", 1, NULL, O_DB},  {"plan", 1, NULL, O_PLAN},
    {"no-render", 0, NULL, O_NO_RENDER}, {"no-record", 0, NULL, 0x7f},
    {"help", 0, NULL, O_HELP}, {NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan report [--out DIR] [--db PATH] [--plan ID] [--no-render]\n\n"
            "Draws the recorded plans, simulations and runs with gnuplot (PNG and SVG) and\n"
            "writes DIR/index.html with the tables behind the plots; each plot's .dat and\n"
            ".gp stay beside it, so `gnuplot NAME.gp` in DIR redraws it.\n\n"
            "  --out DIR     where to write (default: report)\n"
            "  --db PATH     records database (default: $SMDPLAN_DB or smdplan.db)\n"
            "  --plan ID     the plan record to draw (default: the newest)\n"
            "  --no-render   write data, scripts and the page without running gnuplot\n");
}

/* The newest plan record of a search (one with ranked plans, not a
 * comparison of instance types); 0 if none. */
static int64_t newest_search(db *d)
{
    db_summary s[REPORT_HISTORY_MAX];
    int n = 0;
    st_err err = {0};
    if (db_history(d, "plan", s, REPORT_HISTORY_MAX, &n, &err) != ST_OK)
        return 0;
    db_plan *pl = calloc(REPORT_PLANS_MAX, sizeof *pl);
    int64_t found = 0;
    for (int i = 0; pl && i < n && !found; i++) {
        int np = 0;
        if (db_plans(d, s[i].id, pl, REPORT_PLANS_MAX, &np, &err) != ST_OK) {
            st_err_clear(&err);
            continue;
        }
        for (int j = 0; j < np && !found; j++)
            if (strcmp(pl[j].role, "top") == 0)
                found = s[i].id;
    }
    free(pl);
    return found;
}

/* Memory by term of every stage of the newest search's top plans; a plan
 * recorded before stages kept their terms (schema 1), or whose stages lack
 * them, shows its worst stage as the prediction holds it. *worst_only gets
 * how many plans did. */
static int add_memory(rpt_report *r, db *d, int64_t plan_id, const char *title, int *worst_only,
                      st_err *err)
{
    db_plan *pl = calloc(REPORT_PLANS_MAX, sizeof *pl);
    plan_mem *mem = calloc((size_t)REPORT_PLANS_MAX * PLAN_PP_MAX, sizeof *mem);
    int *stage = calloc((size_t)REPORT_PLANS_MAX * PLAN_PP_MAX, sizeof *stage);
    db_plan_stage *st = calloc(PLAN_PP_MAX, sizeof *st);
    rpt_mem_plan mp[REPORT_PLANS_MAX];
    int n = 0, k = 0, rc = ST_OK;
    *worst_only = 0;
    if (!pl || !mem || !stage || !st)
        rc = ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    if (rc == ST_OK)
        rc = db_plans(d, plan_id, pl, REPORT_PLANS_MAX, &n, err);
    double cap = 0;
    for (int i = 0; rc == ST_OK && i < n; i++) {
        if (!pl[i].have_est || strcmp(pl[i].role, "top") != 0)
            continue;
        const plan_estimate *e = &pl[i].est;
        plan_mem *m = &mem[(size_t)k * PLAN_PP_MAX];
        int *sx = &stage[(size_t)k * PLAN_PP_MAX];
        int ns = 0, all = e->nstages >= 1 && e->nstages <= PLAN_PP_MAX;
        rc = db_plan_stages(d, pl[i].id, st, PLAN_PP_MAX, &ns, err);
        all = all && rc == ST_OK && ns == e->nstages;
        for (int j = 0; all && j < ns; j++) {
            all = st[j].have_terms && st[j].stage == j;
            m[j] = st[j].mem;
            sx[j] = j;
        }
        if (all) {
            mp[k] = (rpt_mem_plan){pl[i].label, ns, m, sx, ns};
        } else {
            /* the planner's breakdown of the worst stage, as recorded */
            int pp = e->nstages > e->worst_stage && e->nstages <= PLAN_PP_MAX ? e->nstages : 0;
            mp[k] = (rpt_mem_plan){pl[i].label, 1, &e->mem, &e->worst_stage, pp};
            (*worst_only)++;
        }
        cap = e->capacity_bytes;
        k++;
    }
    if (rc == ST_OK && k > 0) {
        rpt_memory in = {NULL, title, pl[0].gpu, cap, k, mp};
        rpt_render how;
        rc = rpt_memory_write(r, &in, &how, err);
    }
    free(st);
    free(stage);
    free(mem);
    free(pl);
    return rc;
}

static int add_grid(rpt_report *r, db *d, int64_t plan_id, const char *title, st_err *err)
{
    db_grid_cell *c = calloc(RPT_GRID_CELLS_MAX, sizeof *c);
    rpt_grid_cell *g = calloc(RPT_GRID_CELLS_MAX, sizeof *g);
    int n = 0, rc = ST_OK;
    if (!c || !g)
        rc = ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    if (rc == ST_OK)
        rc = db_grid(d, plan_id, c, RPT_GRID_CELLS_MAX, &n, err);
    for (int i = 0; rc == ST_OK && i < n; i++)
        g[i] = (rpt_grid_cell){c[i].tp, c[i].pp, c[i].feasible, c[i].step_s,
                               c[i].reason[0] ? c[i].reason : NULL, c[i].layout};
    if (rc == ST_OK && n > 0) {
        rpt_grid in = {NULL, title, n, g};
        rpt_render how;
        rc = rpt_grid_write(r, &in, &how, err);
    }
    free(c);
    free(g);
    return rc;
}

static int add_scaling(rpt_report *r, db *d, int64_t plan_id, const char *title, st_err *err)
{
    db_scaling_point *p = calloc(RPT_SCALING_POINTS_MAX, sizeof *p);
    rpt_scaling_point *s = calloc(RPT_SCALING_POINTS_MAX, sizeof *s);
    int n = 0, rc = ST_OK;
    if (!p || !s)
        rc = ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    if (rc == ST_OK)
        rc = db_scaling(d, plan_id, p, RPT_SCALING_POINTS_MAX, &n, err);
    for (int i = 0; rc == ST_OK && i < n; i++)
        s[i] = (rpt_scaling_point){p[i].instance_type, p[i].nodes, p[i].gpus, 1, p[i].tokens_per_s,
                                   p[i].cost_per_mtokens, p[i].layout};
    /* a single cluster is no curve */
    if (rc == ST_OK && n > 1) {
        rpt_scaling in = {NULL, title, n, s};
        rpt_render how;
        rc = rpt_scaling_write(r, &in, &how, err);
    }
    free(p);
    free(s);
    return rc;
}

/* The newest simulation record that kept its trace. */
static int add_timeline(rpt_report *r, db *d, st_err *err)
{
    db_summary hist[REPORT_HISTORY_MAX];
    int n = 0;
    int rc = db_history(d, "simulation", hist, REPORT_HISTORY_MAX, &n, err);
    for (int i = 0; rc == ST_OK && i < n; i++) {
        sim_result s;
        st_err e = {0};
        if (db_simulation(d, hist[i].id, NULL, &s, &e) != ST_OK)
            continue;
        if (s.ntrace > 0 && s.ntrace <= RPT_TIMELINE_OPS_MAX) {
            rpt_timeline in = {NULL, hist[i].summary, s.pp, s.ntrace, s.trace, s.step_s};
            rpt_render how;
            rc = rpt_timeline_write(r, &in, &how, err);
            sim_result_fini(&s);
            return rc;
        }
        sim_result_fini(&s);
    }
    return rc;
}

static int add_accuracy(rpt_report *r, db *d, st_err *err)
{
    enum { MAXRUNS = 4096 };
    db_measured *m = calloc(MAXRUNS, sizeof *m);
    rpt_accuracy_point *p = calloc(MAXRUNS, sizeof *p), *q = calloc(MAXRUNS, sizeof *q);
    int n = 0, np = 0, nq = 0, rc = ST_OK;
    if (!m || !p || !q)
        rc = ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    if (rc == ST_OK)
        rc = db_measured_runs(d, 0, m, MAXRUNS, &n, err);
    for (int i = 0; rc == ST_OK && i < n; i++) {
        const char *src = m[i].source_key[0] ? m[i].source_key : m[i].source;
        const char *label = m[i].row_id[0] ? m[i].row_id : NULL;
        if (m[i].measured_s > 0 && m[i].predicted_s > 0)
            p[np++] = (rpt_accuracy_point){src, label, m[i].measured_s, m[i].predicted_s};
        if (m[i].measured_s > 0 && m[i].simulated_s > 0)
            q[nq++] = (rpt_accuracy_point){src, label, m[i].measured_s, m[i].simulated_s};
    }
    rpt_render how;
    if (rc == ST_OK && np > 0) {
        rpt_accuracy in = {"accuracy", "planner against measured step time", "planner", 0, 0, np, p};
        rc = rpt_accuracy_write(r, &in, &how, err);
    }
    if (rc == ST_OK && nq > 0) {
        rpt_accuracy in = {"accuracy_sim", "simulator against measured step time", "simulator", 0, 0,
                           nq, q};
        rc = rpt_accuracy_write(r, &in, &how, err);
    }
    free(m);
    free(p);
    free(q);
    return rc;
}

int cli_report_cmd(int argc, char **argv)
{
    const char *out = "report", *db_path = NULL;
    int64_t plan_id = 0;
    int render = 1;
    st_err err = {0};
    optind = 1;
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (id) {
        case O_HELP: usage(stdout); return 0;
        case O_OUT: out = optarg; break;
        case O_DB: db_path = optarg; break;
        case O_NO_RENDER: render = 0; break;
        case 0x7f: break; /* --no-record: a report records nothing */
        case O_PLAN:
            if (units_parse_int(optarg, "--plan", 1, INT64_MAX / 2, &plan_id, &err))
                return cli_fail(&err);
            break;
        default:
            fprintf(stderr, "smdplan: report: unknown option or missing value: '%s' (see smdplan "
                            "report --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "smdplan: report: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    const char *path = db_default_path(db_path);
    db *d = NULL;
    if (db_open(path, DB_OPEN_READ, &d, &err) != ST_OK)
        return cli_fail(&err);
    if (!plan_id)
        plan_id = newest_search(d);
    if (!plan_id) {
        db_close(d);
        fprintf(stderr, "smdplan: report: %s holds no plan yet (run smdplan --params ... "
                        "--instances ... first)\n", path);
        return 2;
    }

    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.render = render;
    rpt_report *r = NULL;
    plan_model m;
    char title[160] = "";
    int rc = rpt_report_new(out, &cfg, &r, &err);
    st_err merr = {0}; /* a plan without its model only loses the title */
    if (rc == ST_OK && db_model(d, plan_id, &m, &merr) == ST_OK)
        snprintf(title, sizeof title, "%s (%lld parameters)", m.name, (long long)m.params);
    int worst_only = 0;
    if (rc == ST_OK)
        rc = add_memory(r, d, plan_id, title, &worst_only, &err);
    if (rc == ST_OK)
        rc = add_grid(r, d, plan_id, title, &err);
    if (rc == ST_OK)
        rc = add_scaling(r, d, plan_id, title, &err);
    if (rc == ST_OK)
        rc = add_timeline(r, d, &err);
    if (rc == ST_OK)
        rc = add_accuracy(r, d, &err);
    if (rc == ST_OK) {
        char note[512];
        snprintf(note, sizeof note,
                 "From %s, plan record %lld. Plots without records are left out: the scaling curves "
                 "come from `smdplan --params SIZE` (no --instances), the timeline from `smdplan "
                 "simulate ... --trace FILE`, the accuracy plots from `smdplan validate FILE.csv "
                 "--sim`.%s",
                 path, (long long)plan_id,
                 worst_only ? " Plans recorded before the records kept every stage's memory by "
                              "term (schema version 1) show their worst stage only." : "");
        rc = rpt_html_write(r, "smdplan report", note, &err);
    }
    int ex = 0;
    if (rc != ST_OK) {
        ex = cli_fail(&err);
    } else {
        printf("report: %s/index.html (%d plots)\n", out, rpt_report_nplots(r));
        if (rpt_report_render(r) == RPT_RENDER_NO_GNUPLOT)
            fprintf(stderr, "smdplan: %s\n", rpt_gnuplot_hint());
    }
    rpt_report_free(r);
    db_close(d);
    return ex;
}
