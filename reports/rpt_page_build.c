/*
 * rpt_page_build.c: the page of `smdplan report` (rpt_page.h) from plain
 * data: the facts of its opening, the captions of the simulations' plots,
 * the accuracy series and the closing note. Every string it composes is
 * copied by the writers it calls, so the buffers here live for one call.
 */
#include "reports/rpt_page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "planner/plan_framework.h"

#define FACTS_MAX 10
#define FACT_LEN 320

void rpt_page_titles(const plan_model *m, const rpt_page_plan *one, char *title, size_t title_len,
                     char *scale_title, size_t scale_title_len)
{
    char p[24];
    title[0] = scale_title[0] = '\0';
    if (!m)
        return;
    units_fmt_count((double)m->params, p, sizeof p);
    if (one)
        snprintf(title, title_len, "%s (%s parameters) on %d x %s", m->name, p, one->nodes,
                 one->instance_type);
    else
        snprintf(title, title_len, "%s (%s parameters)", m->name, p);
    snprintf(scale_title, scale_title_len, "%s (%s parameters), the best layout of each "
             "instance type and count", m->name, p);
}

/* The model in one line, into val (FACT_LEN bytes). */
static void model_fact(const plan_model *m, char *val)
{
    char a[32];
    int k = snprintf(val, FACT_LEN, "%.63s, %.31s parameters: %lld layers, hidden %lld, "
                     "seq %lld", m->name, units_fmt_count((double)m->params, a, sizeof a),
                     (long long)m->layers, (long long)m->hidden, (long long)m->seq);
    /* the attention shape beyond hidden and heads, where the model has
     * it (plan_model: a head size apart from hidden / heads, a window) */
    if (plan_model_attn_width(m) != m->hidden && k > 0 && k < FACT_LEN)
        k += snprintf(val + k, FACT_LEN - (size_t)k, ", %lld heads of %lld",
                      (long long)m->heads, (long long)plan_model_head_dim(m));
    if (plan_model_local_layers(m) > 0 && k > 0 && k < FACT_LEN)
        snprintf(val + k, FACT_LEN - (size_t)k, ", sliding window %lld on %lld of %lld "
                 "layers", (long long)m->sliding_window,
                 (long long)plan_model_local_layers(m), (long long)m->layers);
}

int rpt_page_summary(rpt_report *r, const rpt_page_plan *one, const plan_model *m,
                     const rpt_page_plan *pl, int npl, const rpt_page_launch *launch, st_err *err)
{
    char val[FACTS_MAX][FACT_LEN];
    rpt_fact f[FACTS_MAX];
    int n = 0;
    const plan_estimate *e = one->est;
    char a[32], b[32];
    if (m) {
        model_fact(m, val[n]);
        f[n] = (rpt_fact){"Model", val[n]}, n++;
    }
    snprintf(val[n], FACT_LEN, "%d x %s, %d GPUs (%s)", one->nodes, one->instance_type, one->gpus,
             one->gpu);
    f[n] = (rpt_fact){"Cluster", val[n]}, n++;
    snprintf(val[n], FACT_LEN, "%s (%s, %s)", one->label,
             plan_framework_get(one->layout->framework)->label,
             plan_precision_name(one->layout->precision));
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
                 "of %.1f GiB, %.0f%% free; the allocator's reserve comes on top)",
                 units_fmt_bytes(head, a, sizeof a), e->worst_stage,
                 units_fmt_bytes(need, b, sizeof b), e->capacity_bytes / 1073741824.0,
                 e->capacity_bytes > 0 ? 100.0 * head / e->capacity_bytes : 0.0);
        f[n] = (rpt_fact){"Memory headroom", val[n]}, n++;
    }
    for (int i = 0; i < npl; i++)
        if (!strcmp(pl[i].role, "top") && pl[i].rank == 2 && pl[i].have_est && one->have_est) {
            double t1 = one->simulated_s > 0 && pl[i].simulated_s > 0 ? one->simulated_s
                                                                       : e->time.step_s;
            double t2 = one->simulated_s > 0 && pl[i].simulated_s > 0 ? pl[i].simulated_s
                                                                       : pl[i].est->time.step_s;
            snprintf(val[n], FACT_LEN, "%s, %.3f s (%+.1f%%)", pl[i].label, t2,
                     t1 > 0 ? 100.0 * (t2 - t1) / t1 : 0.0);
            f[n] = (rpt_fact){"Runner-up (#2)", val[n]}, n++;
        }
    if (!launch->text && n < FACTS_MAX && launch->error && launch->error[0]) {
        snprintf(val[n], FACT_LEN, "none: %.300s", launch->error);
        f[n] = (rpt_fact){"Launch settings", val[n]}, n++;
    }
    char code_title[160];
    snprintf(code_title, sizeof code_title, "Launch settings (smdplan --emit %s)", launch->what);
    char lead[400];
    snprintf(lead, sizeof lead, "The plan the search recommends for this model and cluster, as "
             "recorded; the plots below show why: its memory, the step time of every TP x PP, "
             "how the cost scales with the cluster and how a step plays out.");
    rpt_summary sum = {"Recommended plan", lead, n, f, launch->text ? code_title : NULL,
                       launch->text};
    return rpt_report_set_summary(r, &sum, err);
}

int rpt_page_comparison_summary(rpt_report *r, const plan_model *m, const rpt_page_plan *pl,
                                int npl, st_err *err)
{
    char val[FACTS_MAX][FACT_LEN];
    rpt_fact f[FACTS_MAX];
    int n = 0, fastest = -1, cheapest = -1, options = 0;
    for (int i = 0; i < npl; i++) {
        if (strcmp(pl[i].role, "option") || !pl[i].have_est)
            continue;
        options++;
        if (fastest < 0 || pl[i].est->tokens_per_s > pl[fastest].est->tokens_per_s)
            fastest = i;
        if (pl[i].est->cost_per_mtokens > 0 &&
            (cheapest < 0 || pl[i].est->cost_per_mtokens < pl[cheapest].est->cost_per_mtokens))
            cheapest = i;
    }
    if (m) {
        model_fact(m, val[n]);
        f[n] = (rpt_fact){"Model", val[n]}, n++;
    }
    snprintf(val[n], FACT_LEN, "%d instance types and counts, each with its best layout", options);
    f[n] = (rpt_fact){"Compared", val[n]}, n++;
    const struct {
        const char *what;
        int i;
    } pick[] = {{"Fastest", fastest}, {"Cheapest per token", cheapest}};
    for (int k = 0; k < 2; k++) {
        const rpt_page_plan *o = pick[k].i >= 0 ? &pl[pick[k].i] : NULL;
        if (!o)
            snprintf(val[n], FACT_LEN, "none priced");
        else
            snprintf(val[n], FACT_LEN, "%d x %.47s: %.127s (%.60s), %.0f tokens/s, %s", o->nodes,
                     o->instance_type, o->label, plan_framework_get(o->layout->framework)->label,
                     o->est->tokens_per_s, o->est->cost_per_mtokens > 0 ? "" : "no price");
        if (o && o->est->cost_per_mtokens > 0) {
            size_t u = strlen(val[n]);
            snprintf(val[n] + u, FACT_LEN - u, "$%.3f per million tokens",
                     o->est->cost_per_mtokens);
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

int rpt_page_simulations(rpt_report *r, const rpt_page_sim *stages, const rpt_page_sim *trace,
                         const char *one_label, int *have_stages, int *have_timeline,
                         st_err *err)
{
    int rc = ST_OK;
    *have_stages = *have_timeline = 0;
    for (int pass = 0; pass < 2 && rc == ST_OK; pass++) {
        const rpt_page_sim *ps = pass == 0 ? stages : trace;
        if (!ps)
            continue;
        const sim_result *s = ps->sim;
        char title[320], note[700];
        snprintf(title, sizeof title, "%s, simulated step %.3g s",
                 ps->label[0] ? ps->label : "a layout", s->step_s);
        if (ps->mine)
            snprintf(note, sizeof note, "This is the recommended plan #1 (simulation record "
                     "%lld).", (long long)ps->id);
        else if (one_label)
            snprintf(note, sizeof note, "This is not the recommended plan #1 (%s) but the "
                     "newest simulation%s (record %lld): run smdplan simulate with plan #1's "
                     "layout%s to see its own.", one_label, pass ? " with a trace" : "",
                     (long long)ps->id, pass ? " and --trace FILE" : "");
        else
            snprintf(note, sizeof note, "Simulation record %lld.", (long long)ps->id);
        if (s->window_microbatches[0] > 0 && pass == 1) {
            size_t u = strlen(note);
            snprintf(note + u, sizeof note - u, " The step's %d microbatches were extrapolated "
                     "from windows of %d and %d; the trace shows the first window.",
                     s->microbatches, s->window_microbatches[0], s->window_microbatches[1]);
        }
        rpt_render how;
        if (pass == 0 && s->pp >= 1 && s->pipeline_s > 0) {
            rpt_stages in = {NULL, title, s->pp, s->stage, s->pipeline_s, s->step_s, note};
            rc = rpt_stages_write(r, &in, &how, err);
            *have_stages = rc == ST_OK;
        } else if (pass == 1 && s->ntrace > 0) {
            rpt_timeline in = {NULL, title, s->pp, s->ntrace, s->trace, s->step_s, note};
            rc = rpt_timeline_write(r, &in, &how, err);
            *have_timeline = rc == ST_OK;
        }
    }
    return rc;
}

int rpt_page_accuracy(rpt_report *r, const rpt_page_run *runs, int n, st_err *err)
{
    rpt_accuracy_point *p = calloc((size_t)n + 1, sizeof *p), *q = calloc((size_t)n + 1, sizeof *q);
    int np = 0, nq = 0, rc = ST_OK;
    if (!p || !q)
        rc = ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    for (int i = 0; rc == ST_OK && i < n; i++) {
        const rpt_page_run *m = &runs[i];
        /* executed runs (smdplan exec) are one series, each point its layout */
        int exec = !strcmp(m->source, "measured");
        const char *src = m->source_key[0] ? m->source_key
                          : exec             ? "smdplan exec"
                                             : m->source;
        const char *label = m->row_id[0] ? m->row_id : exec && m->layout[0] ? m->layout : NULL;
        if (m->measured_s > 0 && m->predicted_s > 0)
            p[np++] = (rpt_accuracy_point){src, label, m->measured_s, m->predicted_s};
        if (m->measured_s > 0 && m->simulated_s > 0)
            q[nq++] = (rpt_accuracy_point){src, label, m->measured_s, m->simulated_s};
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
    free(p);
    free(q);
    return rc;
}

int rpt_page_finish(rpt_report *r, const rpt_page_sources *src, st_err *err)
{
    /* say only what is missing, and the command that makes it */
    char note[1200];
    char from[64] = "no plan search recorded: the runs' accuracy only";
    if (src->plan_id)
        snprintf(from, sizeof from, "plan record %lld", (long long)src->plan_id);
    size_t u = (size_t)snprintf(note, sizeof note, "From %s, %s.", src->db_path, from);
    const char *missing[4];
    int nm = 0;
    if (src->plan_id && !src->have_scaling)
        missing[nm++] = "the scaling curves (record a comparison of instance types: smdplan "
                        "--params SIZE with no --instances)";
    if (!src->have_stages)
        missing[nm++] = "the per-stage busy time (smdplan simulate with the plan's layout)";
    if (!src->have_timeline)
        missing[nm++] = "the timeline (smdplan simulate ... --trace FILE)";
    if (!src->have_accuracy)
        missing[nm++] = "the accuracy plots (smdplan validate FILE.csv --sim, or smdplan exec: "
                        "executed runs beside the prediction and simulation of their layout)";
    for (int i = 0; i < nm && u < sizeof note; i++)
        u += (size_t)snprintf(note + u, sizeof note - u, "%s%s%s",
                              i == 0 ? " Not in the records yet, so not drawn: " : "; ",
                              missing[i], i == nm - 1 ? "." : "");
    if (src->worst_only && u < sizeof note)
        snprintf(note + u, sizeof note - u, " Plans recorded before the records kept every "
                 "stage's memory by term (schema version 1) show their worst stage only.");
    return rpt_html_write(r, "smdplan report", note, err);
}
