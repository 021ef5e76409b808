/*
 * bench_schedule.c: speed of the pipeline schedule generator (not a test).
 *
 * Generates every stage's op list of a large pipeline per case (pp up to
 * 64, 512 microbatches, v up to 8, a cap above and below pp) and times it.
 * Each list is checked first (its length is sim_sched_len's, every
 * (microbatch, chunk) has one forward). Prints a table and machine-readable
 * "bench," rows: median and spread (min, max) of the wall time per case, ops
 * generated and ops per second.
 */
#include "bench_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_schedule.h"

#define REPEATS 7

/* Every stage's list once; the number of ops, or -1 on an error. */
static long generate_all(const sim_sched *s, sim_op *ops, int cap, int check)
{
    long total = 0;
    st_err err = {0};
    for (int st = 0; st < s->pp; st++) {
        int n;
        if (sim_sched_ops(s, st, ops, cap, &n, &err) != ST_OK) {
            fprintf(stderr, "bench_schedule: %s\n", err.msg);
            return -1;
        }
        if (check) {
            long fwd = 0;
            for (int i = 0; i < n; i++)
                fwd += ops[i].kind == SIM_OP_FWD;
            if (n != sim_sched_len(s, st) || fwd != (long)s->microbatches * s->virtual_stages) {
                fprintf(stderr, "bench_schedule: stage %d: wrong list\n", st);
                return -1;
            }
        }
        total += n;
    }
    return total;
}

static int run_case(sim_sched s, sim_op *ops, int cap)
{
    long nops = generate_all(&s, ops, cap, 1);
    if (nops < 0)
        return 1;
    double t[REPEATS];
    for (int i = 0; i < REPEATS; i++) {
        double t0 = bench_now_s();
        if (generate_all(&s, ops, cap, 0) != nops)
            return 1;
        t[i] = bench_now_s() - t0;
    }
    qsort(t, REPEATS, sizeof t[0], bench_cmp_double);
    double med = t[REPEATS / 2];
    printf("%-12s %4d %5d %3d %5d %10ld %10.3f %8.3f %8.3f %8.1f\n",
           plan_schedule_name(s.schedule), s.pp, s.microbatches, s.virtual_stages,
           s.active_microbatches, nops, med * 1e3, t[0] * 1e3, t[REPEATS - 1] * 1e3,
           nops / med / 1e6);
    printf("bench,schedule,%s,pp=%d,m=%d,v=%d,cap=%d,ops=%ld,median_s=%.6g,min_s=%.6g,"
           "max_s=%.6g,ops_per_s=%.6g\n",
           plan_schedule_name(s.schedule), s.pp, s.microbatches, s.virtual_stages,
           s.active_microbatches, nops, med, t[0], t[REPEATS - 1], nops / med);
    return 0;
}

int main(void)
{
    enum { M = 512, VMAX = 8 };
    int cap = M * VMAX * 7;
    sim_op *ops = malloc((size_t)cap * sizeof *ops);
    if (!ops)
        return 1;
    static const struct {
        plan_schedule k;
        int pp, v, active;
    } cases[] = {
        {PLAN_SCHED_SIMPLE, 64, 1, 66},      {PLAN_SCHED_INTERLEAVED, 64, 1, 66},
        {PLAN_SCHED_INTERLEAVED, 64, 1, 32}, {PLAN_SCHED_ZB_H1, 64, 1, 66},
        {PLAN_SCHED_ZB_H1, 64, 1, 32},       {PLAN_SCHED_VIRTUAL, 64, 2, 66},
        {PLAN_SCHED_VIRTUAL, 64, 8, 64},     {PLAN_SCHED_VIRTUAL, 64, 8, 32},
    };
    printf("%-12s %4s %5s %3s %5s %10s %10s %8s %8s %8s\n", "schedule", "pp", "m", "v", "cap",
           "ops", "median_ms", "min_ms", "max_ms", "Mops/s");
    int rc = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !rc; i++) {
        sim_sched s = {.pp = cases[i].pp, .microbatches = M, .virtual_stages = cases[i].v,
                       .active_microbatches = cases[i].active, .schedule = cases[i].k};
        rc = run_case(s, ops, cap);
    }
    free(ops);
    return rc;
}
