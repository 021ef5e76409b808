/*
 * bench_search.c: speed of the planner's full search, and of the whole
 * answer (not a test).
 *
 * Cases from the planner issue: 30B on 16 x p4d.24xlarge and a 1T model on
 * 384 x p4d.24xlarge; target under 100 ms each on one core. For each, two
 * timings, median and spread of REPEATS runs:
 *   search   plan_search alone; its rate counts only the layouts the cost
 *            model ran on (res.costed), never the ones rejected before any
 *            costing (they are counted and shown apart);
 *   answer   what `smdplan --params P --instances I` computes before it
 *            prints: the search, then the simulation of its top plans and
 *            their re-ranking (sim_top_rank, the program's own code).
 * `bench_search PARAMS INSTANCES` times that one case instead (to profile
 * it). Machine-readable "bench," rows follow the table. The answer is checked (a
 * plan is found, and simulated) before it is timed.
 */
#include "bench_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "data/data.h"
#include "planner/plan.h"
#include "sim/sim.h"
#include "sim/sim_plans.h"

#define REPEATS 7

static int run_case(const plan_catalog *cat, const plan_presets *presets, const char *params,
                    const char *instances)
{
    st_err err = {0};
    plan_model m;
    plan_cluster c;
    double p;
    if (units_parse_count(params, "params", &p, &err) ||
        plan_model_resolve(presets, p, PLAN_ARCH_GPT, NULL, &m, &err) ||
        plan_cluster_parse(cat, instances, &c, &err)) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 1;
    }
    plan_config cfg;
    plan_config_default(&cfg);
    sim_config sc;
    sim_config_default(&sc);
    plan_result *r = calloc(1, sizeof *r);
    if (!r)
        return 1;
    double t[REPEATS], a[REPEATS];
    sim_top_steps col;
    for (int i = 0; i < REPEATS; i++) {
        double t0 = bench_now_s();
        if (plan_search(&m, &c, &cfg, r, &err)) {
            fprintf(stderr, "bench_search: %s\n", err.msg);
            free(r);
            return 1;
        }
        t[i] = bench_now_s() - t0;
        if (r->ntop == 0) {
            fprintf(stderr, "bench_search: no plan for %s on %s\n", params, instances);
            free(r);
            return 1;
        }
        /* the whole answer: the search again, then its top plans simulated */
        t0 = bench_now_s();
        if (plan_search(&m, &c, &cfg, r, &err) ||
            sim_top_rank(&m, &c, r, &sc, cfg.objective, 10.0, &col, &err)) {
            fprintf(stderr, "bench_search: %s\n", err.msg);
            free(r);
            return 1;
        }
        a[i] = bench_now_s() - t0;
        if (col.n != r->ntop || !(col.step_s[0] > 0)) {
            fprintf(stderr, "bench_search: top plans of %s on %s not simulated\n", params,
                    instances);
            free(r);
            return 1;
        }
    }
    double med = bench_median(t, REPEATS), amed = bench_median(a, REPEATS);
    int64_t early = r->evaluated - r->costed;
    printf("%-6s on %-10s  %9lld costed (+%lld rejected before costing)  median %8.2f ms  "
           "(min %.2f, max %.2f)  %10.0f costed layouts/s  best: tp %d pp %d dp %d, %.3f s/step\n",
           params, instances, (long long)r->costed, (long long)early, med * 1e3, t[0] * 1e3,
           t[REPEATS - 1] * 1e3, (double)r->costed / med, r->top[0].layout.tp,
           r->top[0].layout.pp, r->top[0].layout.dp, r->top[0].est.time.step_s);
    printf("%-6s on %-10s  whole answer (search + %d top plans simulated)  median %8.2f ms  "
           "(min %.2f, max %.2f)\n",
           params, instances, col.n, amed * 1e3, a[0] * 1e3, a[REPEATS - 1] * 1e3);
    printf("bench,search,%s,%s,%lld,%.6f,%.6f,%.6f,%.0f\n", params, instances,
           (long long)r->costed, med, t[0], t[REPEATS - 1], (double)r->costed / med);
    printf("bench,answer,%s,%s,%d,%.6f,%.6f,%.6f\n", params, instances, col.n, amed, a[0],
           a[REPEATS - 1]);
    free(r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 1 && argc != 3) {
        fprintf(stderr, "usage: bench_search [PARAMS INSTANCES]  (default: the 30B and 1T cases)\n");
        return 2;
    }
    plan_catalog cat = {0};
    plan_presets presets = {0};
    st_err err = {0};
    if (data_frameworks_load(NULL, &err) || data_catalog_load(NULL, &cat, &err) ||
        data_presets_load(NULL, &presets, &err)) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 1;
    }
    int rc = argc == 3 ? run_case(&cat, &presets, argv[1], argv[2])
                       : run_case(&cat, &presets, "30B", "16xp4d") ||
                             run_case(&cat, &presets, "1T", "384xp4d");
    plan_catalog_free(&cat);
    plan_presets_free(&presets);
    return rc;
}
