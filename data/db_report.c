/*
 * db_report.c: the records `smdplan report` draws (db_report.h), read with
 * the database's queries; nothing here writes. Reads that only add to the
 * page (a record's model, a simulation's layout) lose what they cannot
 * read rather than fail the page.
 */
#include "data/db_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far back the page looks for a search and for simulations. */
#define REPORT_HISTORY_MAX 64

int64_t db_report_newest_search(db *d)
{
    db_summary s[REPORT_HISTORY_MAX];
    int n = 0;
    st_err err = {0};
    if (db_history(d, "plan", s, REPORT_HISTORY_MAX, &n, &err) != ST_OK)
        return 0;
    db_plan *pl = calloc(DB_REPORT_PLANS_MAX, sizeof *pl);
    int64_t found = 0;
    for (int i = 0; pl && i < n && !found; i++) {
        int np = 0;
        if (db_plans(d, s[i].id, pl, DB_REPORT_PLANS_MAX, &np, &err) != ST_OK) {
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

void db_report_search_read(db *d, int64_t record_id, db_report_search *out)
{
    st_err err = {0};
    out->have_model = out->nplans = out->comparison = 0;
    out->one = -1;
    if (!record_id)
        return;
    out->have_model = db_model(d, record_id, &out->model, &err) == ST_OK;
    st_err_clear(&err);
    if (db_plans(d, record_id, out->plans, DB_REPORT_PLANS_MAX, &out->nplans, &err) != ST_OK)
        out->nplans = 0;
    int top = 0, options = 0;
    for (int i = 0; i < out->nplans; i++) {
        top += !strcmp(out->plans[i].role, "top");
        options += !strcmp(out->plans[i].role, "option");
        if (out->one < 0 && !strcmp(out->plans[i].role, "top") && out->plans[i].rank == 1)
            out->one = i;
    }
    out->comparison = !top && options > 0;
}

int db_report_memory_read(db *d, int64_t record_id, db_report_memory *out, st_err *err)
{
    db_plan *pl = calloc(DB_REPORT_PLANS_MAX, sizeof *pl);
    db_plan_stage *st = calloc(PLAN_PP_MAX, sizeof *st);
    int n = 0, rc = ST_OK;
    out->gpu[0] = '\0';
    out->capacity_bytes = 0;
    out->nplans = out->worst_only = 0;
    if (!pl || !st)
        rc = ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    if (rc == ST_OK)
        rc = db_plans(d, record_id, pl, DB_REPORT_PLANS_MAX, &n, err);
    for (int i = 0; rc == ST_OK && i < n; i++) {
        if (!pl[i].have_est || strcmp(pl[i].role, "top") != 0)
            continue;
        const plan_estimate *e = &pl[i].est;
        db_report_mem_plan *m = &out->plans[out->nplans++];
        int ns = 0, all = e->nstages >= 1 && e->nstages <= PLAN_PP_MAX;
        rc = db_plan_stages(d, pl[i].id, st, PLAN_PP_MAX, &ns, err);
        all = all && rc == ST_OK && ns == e->nstages;
        for (int j = 0; all && j < ns; j++) {
            all = st[j].have_terms && st[j].stage == j;
            m->mem[j] = st[j].mem;
            m->stage[j] = j;
        }
        snprintf(m->label, sizeof m->label, "%s", pl[i].label);
        m->worst_only = !all;
        if (all) {
            m->nstages = m->pp = ns;
        } else {
            /* the planner's breakdown of the worst stage, as recorded */
            m->nstages = 1;
            m->mem[0] = e->mem;
            m->stage[0] = e->worst_stage;
            m->pp = e->nstages > e->worst_stage && e->nstages <= PLAN_PP_MAX ? e->nstages : 0;
            out->worst_only++;
        }
        out->capacity_bytes = e->capacity_bytes;
    }
    if (rc == ST_OK && n > 0)
        snprintf(out->gpu, sizeof out->gpu, "%s", pl[0].gpu);
    free(st);
    free(pl);
    return rc;
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

/* Record id into *s; s->id 0 when it cannot be read. */
static void sim_read(db *d, int64_t id, const db_plan *one, db_report_sim *s)
{
    st_err e = {0};
    s->id = 0;
    if (!id || db_simulation(d, id, NULL, &s->sim, &e) != ST_OK)
        return;
    s->id = id;
    s->mine = sim_layout(d, id, one, s->label, sizeof s->label);
}

int db_report_sims_read(db *d, const db_plan *one, int trace_ops_max, db_report_sim *stages,
                        db_report_sim *trace, st_err *err)
{
    db_summary hist[REPORT_HISTORY_MAX];
    int n = 0, rc = db_history(d, "simulation", hist, REPORT_HISTORY_MAX, &n, err);
    stages->id = trace->id = 0;
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
        int traced = s.ntrace > 0 && s.ntrace <= trace_ops_max;
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
    sim_read(d, stages_id ? stages_id : stages_any, one, stages);
    sim_read(d, trace_id ? trace_id : trace_any, one, trace);
    return ST_OK;
}
