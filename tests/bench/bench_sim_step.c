/*
 * bench_sim_step.c: how long the simulator takes to play out a big step (not
 * a test).
 *
 * The case from the simulator issue: a 1T-parameter model (Megatron's 1T
 * shape) with PP 64, 512 microbatches and DP 12 (TP 8: 6144 GPUs, 768 x
 * p4d.24xlarge), 1F1B and the interleaved schedule with 2 virtual stages.
 * Target: under 1 s. Prints the median and spread of the wall time over 5
 * runs, the events and events per second, and machine-readable "bench," rows.
 * The simulated step is checked against the planner's before it is timed.
 */
#include "bench_util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/units.h"
#include "data/data.h"
#include "planner/plan.h"
#include "sim/sim.h"

#define REPEATS 5

static int run_case(const plan_model *m, const plan_cluster *c, plan_schedule s, int v)
{
    plan_layout l;
    plan_layout_default(&l);
    l.tp = 8;
    l.pp = 64;
    l.dp = 12;
    l.micro_batch = 1;
    l.microbatches = 512;
    l.global_batch = 512 * 12;
    l.active_microbatches = s == PLAN_SCHED_VIRTUAL ? l.microbatches : l.pp + 2;
    l.schedule = s;
    l.virtual_stages = v;
    l.recompute = PLAN_RECOMP_FULL;
    l.sharding = PLAN_SHARD_OPTIMIZER;
    l.sequence_parallel = 1;
    st_err err = {0};
    plan_costs *costs = malloc(sizeof *costs);
    sim_config cfg;
    sim_config_default(&cfg);
    double t[REPEATS];
    sim_result r;
    for (int i = 0; i < REPEATS; i++) {
        double t0 = bench_now_s();
        if (plan_costs_compute(m, c, &l, costs, &err) || sim_step_run(costs, &cfg, &r, &err)) {
            fprintf(stderr, "bench_sim_step: %s\n", err.msg);
            free(costs);
            return 1;
        }
        t[i] = bench_now_s() - t0;
        if (!(r.step_s > 0) || fabs(r.step_s - r.planner_step_s) > 0.25 * r.planner_step_s) {
            fprintf(stderr, "bench_sim_step: simulated %.3f s against the planner's %.3f s\n",
                    r.step_s, r.planner_step_s);
            free(costs);
            return 1;
        }
        if (i + 1 < REPEATS)
            sim_result_fini(&r);
    }
    qsort(t, REPEATS, sizeof t[0], bench_cmp_double);
    double med = t[REPEATS / 2];
    printf("1T pp64 m512 dp12 %-11s v%d: %8llu events, median %7.1f ms (min %.1f, max %.1f), "
           "%.1f M events/s; step %.2f s (planner %.2f s)\n",
           plan_schedule_name(s), v, (unsigned long long)r.events, med * 1e3, t[0] * 1e3,
           t[REPEATS - 1] * 1e3, (double)r.events / med / 1e6, r.step_s, r.planner_step_s);
    printf("bench,sim_step,%s,%d,%llu,%.6f,%.6f,%.6f,%.0f\n", plan_schedule_name(s), v,
           (unsigned long long)r.events, med, t[0], t[REPEATS - 1], (double)r.events / med);
    sim_result_fini(&r);
    free(costs);
    return 0;
}

int main(void)
{
    plan_catalog cat = {0};
    plan_presets presets = {0};
    st_err err = {0};
    plan_model m;
    plan_cluster c;
    if (data_frameworks_load(NULL, &err) || data_catalog_load(NULL, &cat, &err) ||
        data_presets_load(NULL, &presets, &err) ||
        plan_model_resolve(&presets, 1e12, PLAN_ARCH_GPT, NULL, &m, &err) ||
        plan_cluster_parse(&cat, "768xp4d", &c, &err)) {
        fprintf(stderr, "bench_sim_step: %s\n", err.msg);
        return 1;
    }
    int rc = run_case(&m, &c, PLAN_SCHED_INTERLEAVED, 1) || run_case(&m, &c, PLAN_SCHED_VIRTUAL, 2);
    plan_catalog_free(&cat);
    plan_presets_free(&presets);
    return rc;
}
