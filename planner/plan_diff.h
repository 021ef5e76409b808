/*
 * plan_diff.h: two plans compared term by term, and the paragraph that says
 * what makes the difference (`smdplan diff`). Pure: no files, no output but
 * the caller's buffers; every argument is borrowed for the call.
 *
 * Sides are "A" and "B"; each difference is B - A. Memory is bytes per GPU
 * of the worst pipeline stage, time seconds per step.
 */
#ifndef SMD_PLAN_DIFF_H
#define SMD_PLAN_DIFF_H

#include <stddef.h>

#include "planner/plan.h"

#define PLAN_DIFF_MEM_TERMS 10   /* rows of plan_diff_mem_terms */
#define PLAN_DIFF_TIME_TERMS 7   /* rows of plan_diff_time_terms */

/* One row of the comparison: a term's name in words and its two values. */
typedef struct plan_diff_term {
    const char *name;            /* static string: "weights", "pipeline bubble", ... */
    double a, b;
} plan_diff_term;

/* One side: its layout and estimate, whether the layout fits, and the error
 * band of its step (percent, 0 = none known). */
typedef struct plan_diff_side {
    const plan_layout *layout;
    const plan_estimate *est;
    int oom;                     /* 1: the layout does not fit in memory */
    double band_pct;
} plan_diff_side;

/* The memory terms of plan_mem in the order a reader adds them up, then the
 * memory needed (plan_mem_need_bytes) and the allocator's reserve: fills
 * t[0 .. PLAN_DIFF_MEM_TERMS - 1] (bytes) and returns PLAN_DIFF_MEM_TERMS. */
int plan_diff_mem_terms(const plan_mem *a, const plan_mem *b, plan_diff_term *t);

/* The time terms of plan_time (TP and context-parallel communication as one),
 * the step last: fills t[0 .. PLAN_DIFF_TIME_TERMS - 1] (seconds) and returns
 * PLAN_DIFF_TIME_TERMS. */
int plan_diff_time_terms(const plan_time *a, const plan_time *b, plan_diff_term *t);

/* The knobs in which two layouts differ, "tp 8 vs 2, pp 1 vs 8, schedule
 * 1F1B vs interleaved", into buf (NUL-terminated, cut to n); "" when they
 * are the same layout. */
void plan_diff_knobs(const plan_layout *a, const plan_layout *b, char *buf, size_t n);

/* 1 when the two steps lie within each other's error bands: |tb - ta| <=
 * ta band_a + tb band_b (bands as fractions); 0 otherwise. */
int plan_diff_within_bands(const plan_diff_side *a, const plan_diff_side *b);

/* The paragraph "Difference: ..." as one line into text (cut to n): the
 * relative step difference and the time term (of those but the step) that
 * differs most, with the knobs behind it; the memory each needs, in GiB
 * (2^30 bytes), and which does not fit; and, when both bands are known and
 * the layouts differ, whether the difference is within the bands. */
void plan_diff_explain(const plan_diff_side *a, const plan_diff_side *b, char *text, size_t n);

#endif
