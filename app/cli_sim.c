/*
 * cli_sim.c: simulating plans for the command line: `smdplan simulate`, the
 * simulated column of `smdplan plan`, and their printing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "common/units.h"

void cli_print_sim(FILE *f, const sim_config *cfg, const sim_result *r, double threshold_pct)
{
    char a[32], b[32];
    double diff = r->planner_step_s > 0 ? 100.0 * (r->step_s - r->planner_step_s) / r->planner_step_s : 0;
    fprintf(f, "\nsimulated step: %s (planner: %s, %+.1f%%)", units_fmt_seconds(r->step_s, a, sizeof a),
            units_fmt_seconds(r->planner_step_s, b, sizeof b), diff);
    if (fabs(diff) > threshold_pct)
        fprintf(f, "  <- differs from the planner by more than %.0f%%", threshold_pct);
    fprintf(f, "\n");
    if (r->steps > 1)
        fprintf(f, "steps: %d with jitter sigma %.3f (seed %llu): p50 %.4f s, p95 %.4f s, p99 %.4f s\n",
                r->steps, cfg->jitter_sigma, (unsigned long long)cfg->seed, r->p50_s, r->p95_s, r->p99_s);
    if (r->window_microbatches[0] > 0)
        fprintf(f, "extrapolated: %d microbatches are too many to play out one by one; windows "
                   "of %d and %d were, and the step is extrapolated from them (the steady state "
                   "adds the same time per microbatch)\n",
                r->microbatches, r->window_microbatches[0], r->window_microbatches[1]);
    fprintf(f, "pipeline span %.4f s, bubble %.1f%% of the ideal time, %llu events%s\n", r->pipeline_s,
            100 * r->bubble_fraction, (unsigned long long)r->events,
            r->window_microbatches[0] > 0 ? " (extrapolated)" : "");
    fprintf(f, "bounds: compute %.4f s, busiest link %.4f s\n", r->compute_bound_s, r->comm_bound_s);
    fprintf(f, "critical path: %d ops over %d stage%s: compute %.4f s, transfers %.4f s, gradient "
               "sync and optimizer %.4f s\n",
            r->critical_ops, r->critical_stages, r->critical_stages == 1 ? "" : "s",
            r->critical_compute_s, r->critical_transfer_s, r->critical_tail_s);
    fprintf(f, "\n stage  busy s  bubble  util  in flight  peak act   peak mem  send busy  DP exposed\n");
    double span = r->pipeline_s > 0 ? r->pipeline_s : 1;
    for (int i = 0; i < r->pp; i++) {
        const sim_stage_stats *s = &r->stage[i];
        fprintf(f, " %5d %7.3f %6.1f%% %4.0f%% %10d %9s %10s %9.3f %11.3f\n", i, s->busy_s,
                100 * s->bubble_fraction, 100 * s->busy_s / span, s->peak_inflight,
                units_fmt_bytes(s->peak_act_bytes, a, sizeof a),
                units_fmt_bytes(s->peak_mem_bytes, b, sizeof b), s->send_busy_s, s->dp_exposed_s);
    }
}

cJSON *cli_json_sim(const sim_result *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "step_time_s", r->step_s);
    cJSON_AddNumberToObject(j, "planner_step_time_s", r->planner_step_s);
    cJSON_AddNumberToObject(j, "pipeline_s", r->pipeline_s);
    cJSON_AddNumberToObject(j, "events", (double)r->events);
    cJSON_AddNumberToObject(j, "microbatches", r->microbatches);
    if (r->window_microbatches[0] > 0) {
        cJSON *w = cJSON_AddArrayToObject(j, "extrapolated_from_microbatches");
        cJSON_AddItemToArray(w, cJSON_CreateNumber(r->window_microbatches[0]));
        cJSON_AddItemToArray(w, cJSON_CreateNumber(r->window_microbatches[1]));
    }
    cJSON_AddNumberToObject(j, "steps", r->steps);
    cJSON_AddNumberToObject(j, "p50_s", r->p50_s);
    cJSON_AddNumberToObject(j, "p95_s", r->p95_s);
    cJSON_AddNumberToObject(j, "p99_s", r->p99_s);
    cJSON_AddNumberToObject(j, "compute_bound_s", r->compute_bound_s);
    cJSON_AddNumberToObject(j, "comm_bound_s", r->comm_bound_s);
    cJSON *bf = cJSON_CreateObject();
    cJSON_AddNumberToObject(bf, "overall", r->bubble_fraction);
    cJSON *per = cJSON_CreateArray(), *peak = cJSON_CreateArray(), *busy = cJSON_CreateArray();
    for (int i = 0; i < r->pp; i++) {
        cJSON_AddItemToArray(per, cJSON_CreateNumber(r->stage[i].bubble_fraction));
        cJSON_AddItemToArray(peak, cJSON_CreateNumber(r->stage[i].peak_inflight));
        cJSON_AddItemToArray(busy, cJSON_CreateNumber(r->stage[i].busy_s));
    }
    cJSON_AddItemToObject(bf, "per_stage", per);
    cJSON_AddItemToObject(j, "bubble_fraction", bf);
    cJSON_AddItemToObject(j, "peak_microbatches_in_flight", peak);
    cJSON_AddItemToObject(j, "stage_busy_s", busy);
    cJSON *cp = cJSON_CreateObject();
    cJSON_AddNumberToObject(cp, "ops", r->critical_ops);
    cJSON_AddNumberToObject(cp, "stages", r->critical_stages);
    cJSON_AddNumberToObject(cp, "compute_s", r->critical_compute_s);
    cJSON_AddNumberToObject(cp, "transfer_s", r->critical_transfer_s);
    cJSON_AddNumberToObject(cp, "tail_s", r->critical_tail_s);
    cJSON_AddItemToObject(j, "critical_path", cp);
    return j;
}

int cli_sim_top(const plan_model *m, const plan_cluster *c, plan_result *r, const sim_config *cfg,
                plan_objective objective, double threshold_pct, cli_sim_col *col, st_err *err)
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
