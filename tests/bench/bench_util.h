/*
 * bench_util.h: what every benchmark shares: a monotonic clock and the
 * median/spread of repeated timings.
 */
#ifndef SMD_BENCH_UTIL_H
#define SMD_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Monotonic wall clock, seconds. */
static inline double bench_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sort t[0..n) and return its median; t[0] and t[n-1] are then the spread. */
static inline double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], bench_cmp_double);
    return t[n / 2];
}

#endif
