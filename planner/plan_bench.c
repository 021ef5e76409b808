/*
 * plan_bench.c: small facts about a host's measurements (plan_bench.h).
 */
#include <string.h>

#include "planner/plan_bench.h"

double plan_bench_busbw_factor(const char *op, int n)
{
    if (n < 1)
        return 0.0;
    if (!strcmp(op, "allreduce"))
        return 2.0 * (n - 1) / n;
    if (!strcmp(op, "reducescatter") || !strcmp(op, "allgather"))
        return (double)(n - 1) / n;
    if (!strcmp(op, "sendrecv"))
        return 1.0;
    return 0.0;
}
