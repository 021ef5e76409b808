/*
 * plan_measured.c: a measured run (plan_measured.h) as a row of the fit,
 * and a row's step time under the catalog as it stands. The row is what
 * plan_validate_run makes of a published run, made from values known
 * exactly rather than read from a table: nothing is interpreted, so its
 * notes hold only the layout's label.
 */
#include "planner/plan_measured.h"

#include <stdio.h>
#include <string.h>

void plan_measured_shape_key(const plan_model *m, char *buf, size_t n)
{
    snprintf(buf, n, "%s L%lld H%lld A%lld S%lld V%lld",
             m->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt", (long long)m->layers,
             (long long)m->hidden, (long long)m->heads, (long long)m->seq, (long long)m->vocab);
}

int plan_measured_row(const plan_catalog *cat, const plan_measured_run *run,
                      plan_validate_result *r, char *why, size_t nwhy)
{
    memset(r, 0, sizeof *r);
    r->model = *run->model;
    snprintf(r->row_id, sizeof r->row_id, "%s", run->row_id);
    plan_measured_shape_key(&r->model, r->source_key, sizeof r->source_key);
    r->have_model = 1;
    r->layout = *run->layout;
    r->framework = run->layout->framework;
    r->inst = *run->inst;
    snprintf(r->instance, sizeof r->instance, "%s", run->inst->name);
    r->nodes = run->nodes;
    r->gpus = run->gpus;
    snprintf(r->notes, sizeof r->notes, "%s", run->label); /* for the table */
    r->have_layout = 1;
    plan_cluster c;
    st_err err = {0};
    if (plan_validate_cluster(cat, r, &c, &err) != ST_OK ||
        plan_evaluate(&r->model, &c, &r->layout, &r->est, NULL, &err) != ST_OK) {
        snprintf(why, nwhy, "cannot be predicted now: %.150s", err.msg);
        return 1;
    }
    if ((r->est.reject != PLAN_OK && r->est.reject != PLAN_REJ_OOM) || !(r->est.time.step_s > 0)) {
        char w[160];
        snprintf(why, nwhy, "the planner rejects its layout now: %.150s",
                 plan_estimate_reason(&r->est, w, sizeof w));
        return 1;
    }
    r->pred_oom = r->est.reject == PLAN_REJ_OOM;
    r->pred_time_s = r->est.time.step_s;
    r->pred_mem_bytes = r->est.mem.total_bytes;
    r->basis = PLAN_VAL_BASIS_TIME;
    r->ref_time_s = run->measured_s;
    r->error_pct = 100.0 * (r->pred_time_s - r->ref_time_s) / r->ref_time_s;
    r->compared = 1;
    return 0;
}

double plan_validate_step_s(const plan_catalog *cat, const plan_validate_result *r)
{
    plan_cluster c;
    plan_estimate e;
    st_err err = {0};
    if (plan_validate_cluster(cat, r, &c, &err) != ST_OK ||
        plan_evaluate(&r->model, &c, &r->layout, &e, NULL, &err) != ST_OK)
        return 0;
    return e.time.step_s;
}
