/*
 * rpt_plan_sim.c: a simulated step as `smdplan simulate` prints it
 * (rpt_plan.h): against the planner's, its Monte Carlo spread, the
 * extrapolation from windows, the bubble, the bounds, the critical path,
 * and one row per pipeline stage.
 */
#include "reports/rpt_plan.h"

#include <math.h>
#include <stdio.h>

#include "common/units.h"

void rpt_plan_sim(FILE *f, const sim_config *cfg, const sim_result *r, double threshold_pct)
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
