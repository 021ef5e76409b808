/*
 * cli_report.c: `smdplan report [--out DIR] [--db PATH] [--plan ID]`.
 *
 * Reads the records database (read-only) and writes, with the reports
 * library, a page that opens with the recommended plan of the newest search
 * (its layout, launch settings, predicted step, throughput, cost and memory
 * headroom) and then the plots a capacity planner looks at, each with a
 * sentence on how to read it and the table behind it: memory per GPU by
 * term and pipeline stage of the top plans (the worst stage only for plans
 * recorded before stages kept their terms), step time over TP x PP,
 * throughput and cost against instance count (any comparison recorded for
 * the model), the busy time and bubble of each pipeline stage of plan #1's
 * simulation (recorded with or without a trace; else the newest), the
 * timeline of the newest simulation with a trace (plan #1's when there is
 * one; the caption says whose it is), and predicted against measured step
 * time. A plot whose records are missing is left out and the page names
 * those, with the command that records them. gnuplot missing: the data and
 * scripts are written and one line says how to install it.
 *
 * The records are read by data/ (db_report.h) and the page is composed by
 * reports/ section by section (rpt_page_db.h, rpt_page.h); here the options
 * are parsed, plan #1's launch settings are made (as smdplan --emit makes
 * them), the sections are called in the page's order and the outcome is
 * printed.
 */
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "data/data.h"
#include "data/db.h"
#include "data/db_report.h"
#include "launch/launch.h"
#include "planner/plan_framework.h"
#include "reports/rpt.h"
#include "reports/rpt_page.h"
#include "reports/rpt_page_db.h"

enum { O_HELP = 'h', O_OUT = 256, O_DB, O_PLAN, O_NO_RENDER, O_FORCE };

static const struct option long_opts[] = {
    {"out", 1, NULL, O_OUT},   {"db", 1, NULL, O_DB},  {"plan", 1, NULL, O_PLAN},
    {"no-render", 0, NULL, O_NO_RENDER}, {"no-record", 0, NULL, 0x7f},
    {"force", 0, NULL, O_FORCE},
    {"help", 0, NULL, O_HELP}, {NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan report [--out DIR [--force]] [--db PATH] [--plan ID] [--no-render]\n\n"
            "Draws the recorded plans, simulations and runs with gnuplot (PNG and SVG) and\n"
            "writes DIR/index.html with the tables behind the plots; each plot's .dat and\n"
            ".gp stay beside it, so `gnuplot NAME.gp` in DIR redraws it.\n\n"
            "  --out DIR     where to write (default: report); a DIR that holds a report is\n"
            "                refused before anything is written\n"
            "  --force       replace the files of a report already in DIR (never through a\n"
            "                symbolic link)\n"
            "  --db PATH     records database (default: $SMDPLAN_DB or smdplan.db)\n"
            "  --plan ID     the plan record to draw (default: the newest)\n"
            "  --no-render   write data, scripts and the page without running gnuplot\n");
}

/* The launch settings of plan #1 (model m, may be NULL) as smdplan --emit
 * what prints them: owned by the caller; NULL, with the reason in e2 where
 * there is one, when they cannot be made. */
static char *launch_text(const db_plan *one, const plan_model *m, const char *what, st_err *e2)
{
    char *text = NULL;
    size_t len = 0;
    plan_catalog cat = {0};
    plan_cluster c;
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%s", one->nodes, one->instance_type);
    plan_result *one_res = calloc(1, sizeof *one_res);
    cli_plan_opts *o = calloc(1, sizeof *o);
    if (one_res && o && m && data_catalog_load(NULL, &cat, e2) == ST_OK &&
        plan_cluster_parse(&cat, spec, &c, e2) == ST_OK) {
        one_res->ntop = 1;
        one_res->top[0] = (plan_candidate){one->layout, one->est};
        one_res->global_batch = one->layout.global_batch;
        snprintf(o->command_line, sizeof o->command_line, "smdplan report (plan #1 as recorded)");
        FILE *ms = open_memstream(&text, &len);
        if (ms) {
            launch_plan lp;
            char basis[400];
            cli_launch_plan_of(o, m, &c, one_res, NULL, &lp, basis, sizeof basis);
            int bad = launch_write(ms, what, &lp, e2) != ST_OK;
            fclose(ms);
            if (bad) {
                free(text);
                text = NULL;
            }
        }
    }
    free(one_res);
    free(o);
    plan_catalog_free(&cat);
    return text;
}

/* The search's opening: plan #1's summary with its launch settings, or a
 * comparison's. */
static int add_summary(rpt_report *r, const db_report_search *s, st_err *err)
{
    if (s->one < 0)
        return rpt_page_db_summary(r, s, NULL, err);
    const db_plan *one = &s->plans[s->one];
    /* SMP's estimator (mpirun off SageMaker), else the plan's stack's launch */
    const char *what = plan_framework_get(one->layout.framework)->family != PLAN_FW_SMP ? "launch"
                       : strchr(one->instance_type, '.')                              ? "sagemaker"
                                                                                      : "mpirun";
    st_err e2 = {0};
    char *text = launch_text(one, s->have_model ? &s->model : NULL, what, &e2);
    rpt_page_launch launch = {what, text, e2.msg};
    int rc = rpt_page_db_summary(r, s, &launch, err);
    free(text);
    return rc;
}

int cli_report_cmd(int argc, char **argv)
{
    const char *out = "report", *db_path = NULL;
    int64_t plan_id = 0;
    int render = 1, force = 0;
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
        case O_FORCE: force = 1; break;
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
        plan_id = db_report_newest_search(d);
    /* no search, but executed or published runs: their accuracy alone */
    int runs_only = 0;
    if (!plan_id) {
        db_measured one;
        int nm = 0;
        runs_only = db_measured_runs(d, 0, &one, 1, &nm, &err) == ST_OK && nm > 0;
        st_err_clear(&err);
    }
    if (!plan_id && !runs_only) {
        db_close(d);
        fprintf(stderr, "smdplan: report: %s holds no plan yet (run smdplan --params ... "
                        "--instances ... first)\n", path);
        return 2;
    }

    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.render = render;
    cfg.replace = force;
    rpt_report *r = NULL;
    char title[200] = "", scale_title[200] = "";
    db_report_search *s = calloc(1, sizeof *s);
    int rc = s ? rpt_report_new(out, &cfg, &r, &err)
               : ST_RAISE(&err, ST_ENOMEM, "report: out of memory");
    /* a plan without its model or plans only loses titles and the summary */
    if (rc == ST_OK)
        db_report_search_read(d, plan_id, s);
    const db_plan *one = rc == ST_OK && s->one >= 0 ? &s->plans[s->one] : NULL;
    if (rc == ST_OK)
        rpt_page_db_titles(s, title, sizeof title, scale_title, sizeof scale_title);
    int comparison = rc == ST_OK && s->comparison;
    if (rc == ST_OK)
        rc = add_summary(r, s, &err);
    int worst_only = 0, have_stages = 0, have_timeline = 0;
    cli_progress prog; /* gnuplot takes a while per plot */
    cli_progress_start(&prog, "drawing the plots");
    if (rc == ST_OK && plan_id)
        rc = rpt_page_db_memory(r, d, plan_id, title, &worst_only, &err);
    cli_progress_step(&prog, 1, 5);
    if (rc == ST_OK && plan_id && !comparison) /* a comparison has no TP x PP grid */
        rc = rpt_page_db_grid(r, d, plan_id, title, &err);
    cli_progress_step(&prog, 2, 5);
    int nplots_before = rc == ST_OK ? rpt_report_nplots(r) : 0;
    if (rc == ST_OK && plan_id)
        rc = rpt_page_db_scaling(r, d, plan_id, scale_title, &err);
    cli_progress_step(&prog, 3, 5);
    int have_scaling = rc == ST_OK && rpt_report_nplots(r) > nplots_before;
    if (rc == ST_OK)
        rc = rpt_page_db_simulations(r, d, one, &have_stages, &have_timeline, &err);
    cli_progress_step(&prog, 4, 5);
    nplots_before = rc == ST_OK ? rpt_report_nplots(r) : 0;
    if (rc == ST_OK)
        rc = rpt_page_db_accuracy(r, d, &err);
    cli_progress_end(&prog);
    int have_accuracy = rc == ST_OK && rpt_report_nplots(r) > nplots_before;
    if (rc == ST_OK) {
        rpt_page_sources src = {path,          plan_id,      have_scaling, have_stages,
                                have_timeline, have_accuracy, worst_only};
        rc = rpt_page_finish(r, &src, &err);
    }
    free(s);
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
