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
#include "launch/launch.h"
#include "planner/plan_framework.h"
#include "reports/rpt.h"

#define REPORT_PLANS_MAX 32
#define REPORT_HISTORY_MAX 64

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

#define FACTS_MAX 10
#define FACT_LEN 320

/* The page's opening: the recommended plan, its launch settings, predicted
 * step, cost and memory headroom, from the search's recorded plan #1. */
static int add_summary(rpt_report *r, const db_plan *one, const plan_model *m, const db_plan *pl,
                       int npl, st_err *err)
{
    static char val[FACTS_MAX][FACT_LEN];
    rpt_fact f[FACTS_MAX];
    int n = 0;
    const plan_estimate *e = &one->est;
    char a[32], b[32];
    if (m) {
        int k = snprintf(val[n], FACT_LEN, "%.63s, %.31s parameters: %lld layers, hidden %lld, "
                         "seq %lld", m->name, units_fmt_count((double)m->params, a, sizeof a),
                         (long long)m->layers, (long long)m->hidden, (long long)m->seq);
        /* the attention shape beyond hidden and heads, where the model has
         * it (plan_model: a head size apart from hidden / heads, a window) */
        if (plan_model_attn_width(m) != m->hidden && k > 0 && k < FACT_LEN)
            k += snprintf(val[n] + k, FACT_LEN - (size_t)k, ", %lld heads of %lld",
                          (long long)m->heads, (long long)plan_model_head_dim(m));
        if (plan_model_local_layers(m) > 0 && k > 0 && k < FACT_LEN)
            snprintf(val[n] + k, FACT_LEN - (size_t)k, ", sliding window %lld on %lld of %lld "
                     "layers", (long long)m->sliding_window,
                     (long long)plan_model_local_layers(m), (long long)m->layers);
        f[n] = (rpt_fact){"Model", val[n]}, n++;
    }
    snprintf(val[n], FACT_LEN, "%d x %s, %d GPUs (%s)", one->nodes, one->instance_type, one->gpus,
             one->gpu);
    f[n] = (rpt_fact){"Cluster", val[n]}, n++;
    snprintf(val[n], FACT_LEN, "%s (%s, %s)", one->label,
             plan_framework_get(one->layout.framework)->label,
             plan_precision_name(one->layout.precision));
    f[n] = (rpt_fact){"Recommended plan (#1)", val[n]}, n++;
    if (one->have_est) {
        int k = snprintf(val[n], FACT_LEN, "%.3f s by the planner", e->time.step_s);
        if (one->simulated_s > 0)
            snprintf(val[n] + k, FACT_LEN - (size_t)k, ", %.3f s played out by the simulator",
                     one->simulated_s);
        f[n] = (rpt_fact){"Predicted step time", val[n]}, n++;
        snprintf(val[n], FACT_LEN, "%.0f tokens/s, MFU %.1f%%", e->tokens_per_s, 100 * e->mfu);
        f[n] = (rpt_fact){"Throughput", val[n]}, n++;
        if (e->cost_per_hour > 0)
            snprintf(val[n], FACT_LEN, "$%.2f per hour, $%.3f per million tokens (the prices "
                     "recorded with the plan)", e->cost_per_hour, e->cost_per_mtokens);
        else
            snprintf(val[n], FACT_LEN, "no price was known for %s when it was planned",
                     one->instance_type);
        f[n] = (rpt_fact){"Cost", val[n]}, n++;
        /* what the plan needs, as the plan table and --emit say; the
         * allocator's reserve comes on top in nvidia-smi */
        double need = plan_mem_need_bytes(&e->mem), head = e->capacity_bytes - need;
        snprintf(val[n], FACT_LEN, "%s to spare per GPU on the fullest stage (stage %d needs %s "
                 "of %.1f GiB, %.0f%% free; the allocator's reserve comes on top)", units_fmt_bytes(head, a, sizeof a),
                 e->worst_stage, units_fmt_bytes(need, b, sizeof b),
                 e->capacity_bytes / 1073741824.0,
                 e->capacity_bytes > 0 ? 100.0 * head / e->capacity_bytes : 0.0);
        f[n] = (rpt_fact){"Memory headroom", val[n]}, n++;
    }
    for (int i = 0; i < npl; i++)
        if (!strcmp(pl[i].role, "top") && pl[i].rank == 2 && pl[i].have_est && one->have_est) {
            double t1 = one->simulated_s > 0 && pl[i].simulated_s > 0 ? one->simulated_s
                                                                       : e->time.step_s;
            double t2 = one->simulated_s > 0 && pl[i].simulated_s > 0 ? pl[i].simulated_s
                                                                       : pl[i].est.time.step_s;
            snprintf(val[n], FACT_LEN, "%s, %.3f s (%+.1f%%)", pl[i].label, t2,
                     t1 > 0 ? 100.0 * (t2 - t1) / t1 : 0.0);
            f[n] = (rpt_fact){"Runner-up (#2)", val[n]}, n++;
        }

    /* the launch settings, as smdplan --emit prints them */
    char *launch = NULL;
    size_t len = 0;
    /* SMP's estimator (mpirun off SageMaker), else the plan's stack's launch */
    const char *what = plan_framework_get(one->layout.framework)->family != PLAN_FW_SMP ? "launch"
                       : strchr(one->instance_type, '.')                              ? "sagemaker"
                                                                                      : "mpirun";
    plan_catalog cat = {0};
    plan_cluster c;
    char spec[96];
    st_err e2 = {0};
    snprintf(spec, sizeof spec, "%dx%s", one->nodes, one->instance_type);
    plan_result *one_res = calloc(1, sizeof *one_res);
    cli_plan_opts *o = calloc(1, sizeof *o);
    if (one_res && o && m && data_catalog_load(NULL, &cat, &e2) == ST_OK &&
        plan_cluster_parse(&cat, spec, &c, &e2) == ST_OK) {
        one_res->ntop = 1;
        one_res->top[0] = (plan_candidate){one->layout, one->est};
        one_res->global_batch = one->layout.global_batch;
        snprintf(o->command_line, sizeof o->command_line, "smdplan report (plan #1 as recorded)");
        FILE *ms = open_memstream(&launch, &len);
        if (ms) {
            launch_plan lp;
            char basis[400];
            cli_launch_plan_of(o, m, &c, one_res, NULL, &lp, basis, sizeof basis);
            int bad = launch_write(ms, what, &lp, &e2) != ST_OK;
            fclose(ms);
            if (bad) {
                free(launch);
                launch = NULL;
            }
        }
    }
    if (!launch && n < FACTS_MAX && e2.msg[0]) {
        snprintf(val[n], FACT_LEN, "none: %.300s", e2.msg);
        f[n] = (rpt_fact){"Launch settings", val[n]}, n++;
    }
    free(one_res);
    free(o);
    plan_catalog_free(&cat);
    char code_title[160];
    snprintf(code_title, sizeof code_title, "Launch settings (smdplan --emit %s)", what);
    char lead[400];
    snprintf(lead, sizeof lead, "The plan the search recommends for this model and cluster, as "
             "recorded; the plots below show why: its memory, the step time of every TP x PP, "
             "how the cost scales with the cluster and how a step plays out.");
    rpt_summary sum = {"Recommended plan", lead, n, f, launch ? code_title : NULL, launch};
    int rc = rpt_report_set_summary(r, &sum, err);
    free(launch);
    return rc;
}

/* A comparison of instance types and counts (its plans are "option"s, one
 * per type and count): the page opens with its answer, the fastest and the
 * cheapest option per token, not with a TP x PP grid of one cell. */
static int is_comparison(const db_plan *pl, int n)
{
    int options = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(pl[i].role, "top"))
            return 0;
        options += !strcmp(pl[i].role, "option");
    }
    return options > 0;
}

static int add_comparison_summary(rpt_report *r, const plan_model *m, const db_plan *pl, int npl,
                                  st_err *err)
{
    static char val[FACTS_MAX][FACT_LEN];
    rpt_fact f[FACTS_MAX];
    int n = 0, fastest = -1, cheapest = -1, options = 0;
    char a[32];
    for (int i = 0; i < npl; i++) {
        if (strcmp(pl[i].role, "option") || !pl[i].have_est)
            continue;
        options++;
        if (fastest < 0 || pl[i].est.tokens_per_s > pl[fastest].est.tokens_per_s)
            fastest = i;
        if (pl[i].est.cost_per_mtokens > 0 &&
            (cheapest < 0 || pl[i].est.cost_per_mtokens < pl[cheapest].est.cost_per_mtokens))
            cheapest = i;
    }
    if (m) {
        int k = snprintf(val[n], FACT_LEN, "%.63s, %.31s parameters: %lld layers, hidden %lld, "
                         "seq %lld", m->name, units_fmt_count((double)m->params, a, sizeof a),
                         (long long)m->layers, (long long)m->hidden, (long long)m->seq);
        /* the attention shape beyond hidden and heads, where the model has
         * it (plan_model: a head size apart from hidden / heads, a window) */
        if (plan_model_attn_width(m) != m->hidden && k > 0 && k < FACT_LEN)
            k += snprintf(val[n] + k, FACT_LEN - (size_t)k, ", %lld heads of %lld",
                          (long long)m->heads, (long long)plan_model_head_dim(m));
        if (plan_model_local_layers(m) > 0 && k > 0 && k < FACT_LEN)
            snprintf(val[n] + k, FACT_LEN - (size_t)k, ", sliding window %lld on %lld of %lld "
                     "layers", (long long)m->sliding_window,
                     (long long)plan_model_local_layers(m), (long long)m->layers);
        f[n] = (rpt_fact){"Model", val[n]}, n++;
    }
    snprintf(val[n], FACT_LEN, "%d instance types and counts, each with its best layout", options);
    f[n] = (rpt_fact){"Compared", val[n]}, n++;
    const struct {
        const char *what;
        int i;
    } pick[] = {{"Fastest", fastest}, {"Cheapest per token", cheapest}};
    for (int k = 0; k < 2; k++) {
        const db_plan *o = pick[k].i >= 0 ? &pl[pick[k].i] : NULL;
        if (!o)
            snprintf(val[n], FACT_LEN, "none priced");
        else
            snprintf(val[n], FACT_LEN, "%d x %.47s: %.127s (%.60s), %.0f tokens/s, %s", o->nodes,
                     o->instance_type, o->label, plan_framework_get(o->layout.framework)->label,
                     o->est.tokens_per_s, o->est.cost_per_mtokens > 0 ? "" : "no price");
        if (o && o->est.cost_per_mtokens > 0) {
            size_t u = strlen(val[n]);
            snprintf(val[n] + u, FACT_LEN - u, "$%.3f per million tokens", o->est.cost_per_mtokens);
        }
        f[n] = (rpt_fact){pick[k].what, val[n]}, n++;
    }
    rpt_summary sum = {"Recommended cluster",
                       "The instance type and count a comparison recommends for this model, as "
                       "recorded (smdplan --params SIZE without --instances); the plot below "
                       "shows throughput and cost against the count of each type.",
                       n, f, NULL, NULL};
    return rpt_report_set_summary(r, &sum, err);
}

/* Plan #1 of a search, or NULL (rank 1 of role "top"). */
static const db_plan *plan_one(const db_plan *pl, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(pl[i].role, "top") && pl[i].rank == 1)
            return &pl[i];
    return NULL;
}

/* The layout a simulation record played out, into label; 1 when it is
 * plan #1's (same cluster, same layout label). */
static int sim_layout(db *d, int64_t id, const db_plan *one, char *label, size_t n)
{
    db_plan pl[4];
    int np = 0;
    st_err e = {0};
    label[0] = '\0';
    if (db_plans(d, id, pl, 4, &np, &e) != ST_OK || np < 1)
        return 0;
    snprintf(label, n, "%s on %d x %s", pl[0].label, pl[0].nodes, pl[0].instance_type);
    return one && pl[0].nodes == one->nodes && !strcmp(pl[0].instance_type, one->instance_type) &&
           !strcmp(pl[0].label, one->label);
}

/* The simulations: per-stage busy time and bubble of plan #1's newest
 * simulation (else the newest simulation), and the timeline of plan #1's
 * newest simulation with a trace (else the newest with one); each caption
 * says which layout it is against plan #1. *have_stages, *have_timeline
 * say what was drawn. */
static int add_simulations(rpt_report *r, db *d, const db_plan *one, int *have_stages,
                           int *have_timeline, st_err *err)
{
    db_summary hist[REPORT_HISTORY_MAX];
    int n = 0, rc = db_history(d, "simulation", hist, REPORT_HISTORY_MAX, &n, err);
    *have_stages = *have_timeline = 0;
    if (rc != ST_OK)
        return rc;
    /* the picks: plan #1's first, else the newest */
    int64_t stages_id = 0, trace_id = 0, stages_any = 0, trace_any = 0;
    for (int i = 0; i < n; i++) {
        sim_result s;
        st_err e = {0};
        if (db_simulation(d, hist[i].id, NULL, &s, &e) != ST_OK)
            continue;
        char lab[256];
        int mine = sim_layout(d, hist[i].id, one, lab, sizeof lab);
        int traced = s.ntrace > 0 && s.ntrace <= RPT_TIMELINE_OPS_MAX;
        sim_result_fini(&s);
        if (!stages_any)
            stages_any = hist[i].id;
        if (mine && !stages_id)
            stages_id = hist[i].id;
        if (traced && !trace_any)
            trace_any = hist[i].id;
        if (traced && mine && !trace_id)
            trace_id = hist[i].id;
    }
    if (!stages_id)
        stages_id = stages_any;
    if (!trace_id)
        trace_id = trace_any;
    for (int pass = 0; pass < 2 && rc == ST_OK; pass++) {
        int64_t id = pass == 0 ? stages_id : trace_id;
        if (!id)
            continue;
        sim_result s;
        st_err e = {0};
        if (db_simulation(d, id, NULL, &s, &e) != ST_OK)
            continue;
        char lab[256], title[320], note[700];
        int mine = sim_layout(d, id, one, lab, sizeof lab);
        snprintf(title, sizeof title, "%s, simulated step %.3g s", lab[0] ? lab : "a layout",
                 s.step_s);
        if (mine)
            snprintf(note, sizeof note, "This is the recommended plan #1 (simulation record "
                     "%lld).", (long long)id);
        else if (one)
            snprintf(note, sizeof note, "This is not the recommended plan #1 (%s) but the "
                     "newest simulation%s (record %lld): run smdplan simulate with plan #1's "
                     "layout%s to see its own.", one->label, pass ? " with a trace" : "",
                     (long long)id, pass ? " and --trace FILE" : "");
        else
            snprintf(note, sizeof note, "Simulation record %lld.", (long long)id);
        if (s.window_microbatches[0] > 0 && pass == 1) {
            size_t u = strlen(note);
            snprintf(note + u, sizeof note - u, " The step's %d microbatches were extrapolated "
                     "from windows of %d and %d; the trace shows the first window.",
                     s.microbatches, s.window_microbatches[0], s.window_microbatches[1]);
        }
        rpt_render how;
        if (pass == 0 && s.pp >= 1 && s.pipeline_s > 0) {
            rpt_stages in = {NULL, title, s.pp, s.stage, s.pipeline_s, s.step_s, note};
            rc = rpt_stages_write(r, &in, &how, err);
            *have_stages = rc == ST_OK;
        } else if (pass == 1 && s.ntrace > 0) {
            rpt_timeline in = {NULL, title, s.pp, s.ntrace, s.trace, s.step_s, note};
            rc = rpt_timeline_write(r, &in, &how, err);
            *have_timeline = rc == ST_OK;
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
        /* executed runs (smdplan exec) are one series, each point its layout */
        int exec = !strcmp(m[i].source, "measured");
        const char *src = m[i].source_key[0] ? m[i].source_key
                          : exec               ? "smdplan exec"
                                               : m[i].source;
        const char *label = m[i].row_id[0] ? m[i].row_id : exec && m[i].layout[0] ? m[i].layout
                                                                                  : NULL;
        if (m[i].measured_s > 0 && m[i].predicted_s > 0)
            p[np++] = (rpt_accuracy_point){src, label, m[i].measured_s, m[i].predicted_s};
        if (m[i].measured_s > 0 && m[i].simulated_s > 0)
            q[nq++] = (rpt_accuracy_point){src, label, m[i].measured_s, m[i].simulated_s};
    }
    rpt_render how;
    char title[96];
    if (rc == ST_OK && np > 0) {
        snprintf(title, sizeof title, "the planner, %d runs", np);
        rpt_accuracy in = {"accuracy", title, "planner", 0, 0, np, p};
        rc = rpt_accuracy_write(r, &in, &how, err);
    }
    if (rc == ST_OK && nq > 0) {
        snprintf(title, sizeof title, "the simulator, %d runs", nq);
        rpt_accuracy in = {"accuracy_sim", title, "simulator", 0, 0, nq, q};
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
        plan_id = newest_search(d);
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
    plan_model m;
    int have_model = 0;
    char title[200] = "", scale_title[200] = "";
    db_plan *pl = calloc(REPORT_PLANS_MAX, sizeof *pl);
    int npl = 0;
    int rc = pl ? rpt_report_new(out, &cfg, &r, &err)
                : ST_RAISE(&err, ST_ENOMEM, "report: out of memory");
    st_err merr = {0}; /* a plan without its model or plans only loses titles and the summary */
    if (rc == ST_OK && plan_id && db_model(d, plan_id, &m, &merr) == ST_OK)
        have_model = 1;
    if (rc == ST_OK && (!plan_id || db_plans(d, plan_id, pl, REPORT_PLANS_MAX, &npl, &merr) != ST_OK))
        npl = 0;
    const db_plan *one = rc == ST_OK ? plan_one(pl, npl) : NULL;
    char p[24];
    if (have_model) {
        units_fmt_count((double)m.params, p, sizeof p);
        if (one)
            snprintf(title, sizeof title, "%s (%s parameters) on %d x %s", m.name, p, one->nodes,
                     one->instance_type);
        else
            snprintf(title, sizeof title, "%s (%s parameters)", m.name, p);
        snprintf(scale_title, sizeof scale_title, "%s (%s parameters), the best layout of each "
                 "instance type and count", m.name, p);
    }
    int comparison = rc == ST_OK && is_comparison(pl, npl);
    if (rc == ST_OK && one)
        rc = add_summary(r, one, have_model ? &m : NULL, pl, npl, &err);
    else if (rc == ST_OK && comparison)
        rc = add_comparison_summary(r, have_model ? &m : NULL, pl, npl, &err);
    int worst_only = 0, have_stages = 0, have_timeline = 0;
    cli_progress prog; /* gnuplot takes a while per plot */
    cli_progress_start(&prog, "drawing the plots");
    if (rc == ST_OK && plan_id)
        rc = add_memory(r, d, plan_id, title, &worst_only, &err);
    cli_progress_step(&prog, 1, 5);
    if (rc == ST_OK && plan_id && !comparison) /* a comparison has no TP x PP grid */
        rc = add_grid(r, d, plan_id, title, &err);
    cli_progress_step(&prog, 2, 5);
    int nplots_before = rc == ST_OK ? rpt_report_nplots(r) : 0;
    if (rc == ST_OK && plan_id)
        rc = add_scaling(r, d, plan_id, scale_title, &err);
    cli_progress_step(&prog, 3, 5);
    int have_scaling = rc == ST_OK && rpt_report_nplots(r) > nplots_before;
    if (rc == ST_OK)
        rc = add_simulations(r, d, one, &have_stages, &have_timeline, &err);
    cli_progress_step(&prog, 4, 5);
    nplots_before = rc == ST_OK ? rpt_report_nplots(r) : 0;
    if (rc == ST_OK)
        rc = add_accuracy(r, d, &err);
    cli_progress_end(&prog);
    int have_accuracy = rc == ST_OK && rpt_report_nplots(r) > nplots_before;
    if (rc == ST_OK) {
        /* say only what is missing, and the command that makes it */
        char note[1200];
        char from[64] = "no plan search recorded: the runs' accuracy only";
        if (plan_id)
            snprintf(from, sizeof from, "plan record %lld", (long long)plan_id);
        size_t u = (size_t)snprintf(note, sizeof note, "From %s, %s.", path, from);
        const char *missing[4];
        int nm = 0;
        if (plan_id && !have_scaling)
            missing[nm++] = "the scaling curves (record a comparison of instance types: smdplan "
                            "--params SIZE with no --instances)";
        if (!have_stages)
            missing[nm++] = "the per-stage busy time (smdplan simulate with the plan's layout)";
        if (!have_timeline)
            missing[nm++] = "the timeline (smdplan simulate ... --trace FILE)";
        if (!have_accuracy)
            missing[nm++] = "the accuracy plots (smdplan validate FILE.csv --sim, or smdplan exec: "
                            "executed runs beside the prediction and simulation of their layout)";
        for (int i = 0; i < nm && u < sizeof note; i++)
            u += (size_t)snprintf(note + u, sizeof note - u, "%s%s%s",
                                  i == 0 ? " Not in the records yet, so not drawn: " : "; ",
                                  missing[i], i == nm - 1 ? "." : "");
        if (worst_only && u < sizeof note)
            snprintf(note + u, sizeof note - u, " Plans recorded before the records kept every "
                     "stage's memory by term (schema version 1) show their worst stage only.");
        rc = rpt_html_write(r, "smdplan report", note, &err);
    }
    free(pl);
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
