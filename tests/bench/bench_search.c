/*
 * bench_search.c: speed of the planner's full search (not a test).
 *
 * Cases from the planner issue: 30B on 16 x p4d.24xlarge and a 1T model on
 * 384 x p4d.24xlarge; target under 100 ms each on one core. Prints a table
 * and machine-readable "bench," rows: median and spread of the wall time,
 * layouts evaluated and layouts per second. The answer is checked (a plan is
 * found) before it is timed.
 */
#include "bench_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/units.h"
#include "data/data.h"
#include "planner/plan.h"

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
    plan_result *r = calloc(1, sizeof *r);
    if (!r)
        return 1;
    double t[REPEATS];
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
    }
    qsort(t, REPEATS, sizeof t[0], bench_cmp_double);
    double med = t[REPEATS / 2];
    printf("%-6s on %-10s  %9lld layouts  median %8.2f ms  (min %.2f, max %.2f)  %10.0f layouts/s  "
           "best: tp %d pp %d dp %d, %.3f s/step\n",
           params, instances, (long long)r->evaluated, med * 1e3, t[0] * 1e3, t[REPEATS - 1] * 1e3,
           (double)r->evaluated / med, r->top[0].layout.tp, r->top[0].layout.pp,
           r->top[0].layout.dp, r->top[0].est.time.step_s);
    printf("bench,search,%s,%s,%lld,%.6f,%.6f,%.6f,%.0f\n", params, instances,
           (long long)r->evaluated, med, t[0], t[REPEATS - 1], (double)r->evaluated / med);
    free(r);
    return 0;
}

int main(void)
{
    plan_catalog cat = {0};
    plan_presets presets = {0};
    st_err err = {0};
    if (data_frameworks_load(NULL, &err) || data_catalog_load(NULL, &cat, &err) ||
        data_presets_load(NULL, &presets, &err)) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 1;
    }
    int rc = run_case(&cat, &presets, "30B", "16xp4d") || run_case(&cat, &presets, "1T", "384xp4d");
    plan_catalog_free(&cat);
    plan_presets_free(&presets);
    return rc;
}
