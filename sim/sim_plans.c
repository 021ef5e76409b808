/*
 * sim_plans.c: the simulations a search's answer asks for (sim_plans.h):
 * the top plans re-ranked by their simulated steps, and one layout played
 * out with its trace file.
 */
#include "sim/sim_plans.h"

#include <stdio.h>

#include "common/outfile.h"

int sim_top_rank(const plan_model *m, const plan_cluster *c, plan_result *r, const sim_config *cfg,
                 plan_objective objective, double threshold_pct, sim_top_steps *col, st_err *err)
{
    col->n = 0;
    col->extrapolated = 0;
    col->threshold_pct = threshold_pct;
    col->reranked = 0;
    sim_config one = *cfg;
    one.keep_trace = 0;
    for (int i = 0; i < r->ntop; i++) {
        sim_result s;
        int rc = sim_layout_run(m, c, &r->top[i].layout, &one, &s, err);
        if (rc != ST_OK)
            return rc;
        col->step_s[i] = s.step_s;
        col->extrapolated += s.window_microbatches[0] > 0;
        sim_result_fini(&s);
    }
    col->n = r->ntop;
    /* --objective memory ranks by memory, which the simulator does not change */
    if (objective == PLAN_OBJ_MEMORY)
        return ST_OK;
    /* re-rank by the simulated step (insertion sort: a handful of plans);
     * on one cluster cost and throughput rank as the step does */
    for (int i = 1; i < r->ntop; i++) {
        plan_candidate cand = r->top[i];
        double t = col->step_s[i];
        int j = i;
        while (j > 0 && col->step_s[j - 1] > t) {
            r->top[j] = r->top[j - 1];
            col->step_s[j] = col->step_s[j - 1];
            j--;
        }
        if (j != i)
            col->reranked = 1;
        r->top[j] = cand;
        col->step_s[j] = t;
    }
    return ST_OK;
}

int sim_layout_run_trace(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                         const sim_config *cfg, const char *trace_path, int force,
                         sim_result *out, st_err *err)
{
    int rc = sim_layout_run(m, c, l, cfg, out, err);
    if (rc != ST_OK || !trace_path)
        return rc;
    /* a temporary beside the path, renamed over it once complete: a
     * failed write leaves whatever was there */
    outfile of;
    rc = outfile_open(&of, trace_path, "--trace", force, err);
    if (rc == ST_OK) {
        char title[160];
        snprintf(title, sizeof title, "%s on %d x %s", m->name, c->nodes, c->inst->name);
        rc = sim_trace_write(of.f, out, title, err);
        if (rc == ST_OK)
            rc = outfile_commit(&of, err);
        else
            outfile_abort(&of);
    }
    if (rc != ST_OK)
        sim_result_fini(out);
    return rc;
}
