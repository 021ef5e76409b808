/*
 * rpt_page_db.c: the sections of the page of `smdplan report` from the
 * records (rpt_page_db.h): data/'s structs copied field by field into the
 * writers' own (their strings borrowed, nothing kept after the call), each
 * plot drawn only when its records hold something to draw.
 */
#include "reports/rpt_page_db.h"

#include <stdlib.h>
#include <string.h>

rpt_page_plan rpt_page_plan_of(const db_plan *p)
{
    return (rpt_page_plan){p->role,  p->rank, p->instance_type, p->gpu,     p->nodes,
                           p->gpus,  p->label, &p->layout,      p->have_est, &p->est,
                           p->simulated_s};
}

void rpt_page_db_titles(const db_report_search *s, char *title, size_t title_len,
                        char *scale_title, size_t scale_title_len)
{
    const db_plan *one = s->one >= 0 ? &s->plans[s->one] : NULL;
    rpt_page_plan p1 = one ? rpt_page_plan_of(one) : (rpt_page_plan){0};
    rpt_page_titles(s->have_model ? &s->model : NULL, one ? &p1 : NULL, title, title_len,
                    scale_title, scale_title_len);
}

int rpt_page_db_summary(rpt_report *r, const db_report_search *s, const rpt_page_launch *launch,
                        st_err *err)
{
    rpt_page_plan pl[DB_REPORT_PLANS_MAX];
    for (int i = 0; i < s->nplans; i++)
        pl[i] = rpt_page_plan_of(&s->plans[i]);
    const plan_model *m = s->have_model ? &s->model : NULL;
    if (s->one < 0)
        return s->comparison ? rpt_page_comparison_summary(r, m, pl, s->nplans, err) : ST_OK;
    return rpt_page_summary(r, &pl[s->one], m, pl, s->nplans, launch, err);
}

int rpt_page_db_memory(rpt_report *r, db *d, int64_t plan_id, const char *title, int *worst_only,
                       st_err *err)
{
    db_report_memory *dm = calloc(1, sizeof *dm);
    rpt_mem_plan mp[DB_REPORT_PLANS_MAX];
    int rc = dm ? db_report_memory_read(d, plan_id, dm, err)
                : ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    *worst_only = rc == ST_OK ? dm->worst_only : 0;
    for (int i = 0; rc == ST_OK && i < dm->nplans; i++) {
        const db_report_mem_plan *p = &dm->plans[i];
        mp[i] = (rpt_mem_plan){p->label, p->nstages, p->mem, p->stage, p->pp};
    }
    if (rc == ST_OK && dm->nplans > 0) {
        rpt_memory in = {NULL, title, dm->gpu, dm->capacity_bytes, dm->nplans, mp};
        rpt_render how;
        rc = rpt_memory_write(r, &in, &how, err);
    }
    free(dm);
    return rc;
}

int rpt_page_db_grid(rpt_report *r, db *d, int64_t plan_id, const char *title, st_err *err)
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

int rpt_page_db_scaling(rpt_report *r, db *d, int64_t plan_id, const char *title, st_err *err)
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

int rpt_page_db_simulations(rpt_report *r, db *d, const db_plan *one, int *have_stages,
                            int *have_timeline, st_err *err)
{
    db_report_sim ds[2];
    rpt_page_sim ps[2];
    *have_stages = *have_timeline = 0;
    int rc = db_report_sims_read(d, one, RPT_TIMELINE_OPS_MAX, &ds[0], &ds[1], err);
    if (rc != ST_OK)
        return rc;
    for (int i = 0; i < 2; i++)
        ps[i] = (rpt_page_sim){ds[i].id, ds[i].mine, ds[i].label, &ds[i].sim};
    rc = rpt_page_simulations(r, ds[0].id ? &ps[0] : NULL, ds[1].id ? &ps[1] : NULL,
                              one ? one->label : NULL, have_stages, have_timeline, err);
    for (int i = 0; i < 2; i++)
        if (ds[i].id)
            sim_result_fini(&ds[i].sim);
    return rc;
}

int rpt_page_db_accuracy(rpt_report *r, db *d, st_err *err)
{
    db_measured *m = calloc(RPT_PAGE_DB_RUNS_MAX, sizeof *m);
    rpt_page_run *p = calloc(RPT_PAGE_DB_RUNS_MAX, sizeof *p);
    int n = 0, rc = ST_OK;
    if (!m || !p)
        rc = ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    if (rc == ST_OK)
        rc = db_measured_runs(d, 0, m, RPT_PAGE_DB_RUNS_MAX, &n, err);
    for (int i = 0; rc == ST_OK && i < n; i++)
        p[i] = (rpt_page_run){m[i].source,     m[i].source_key,  m[i].row_id,    m[i].layout,
                              m[i].measured_s, m[i].predicted_s, m[i].simulated_s};
    if (rc == ST_OK)
        rc = rpt_page_accuracy(r, p, n, err);
    free(m);
    free(p);
    return rc;
}
