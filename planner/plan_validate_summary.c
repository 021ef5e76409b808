/*
 * plan_validate_summary.c: the figures of a validation, per source and
 * over all rows (plan_validate_summarize): the mean and worst |time
 * error|, every source weighing the same, the memory errors and the fit or
 * out-of-memory verdicts.
 */
#include "planner/plan_validate_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define copy plan__copy

/* Every timed row is scored. A run that ran though the planner calls its
 * published layout out of memory is evidence against the memory model (or
 * the published layout), not a row to set aside: its time error counts, and
 * so does its fit/OOM miss (add: fit_checked/fit_agreed). */
int plan_validate_scored(const plan_validate_result *r)
{
    return r->compared;
}

static void add(plan_validate_stats *s, const plan_validate_result *r)
{
    s->rows++;
    if (r->compared && r->pred_oom) {
        s->oom_timed++;
        s->oom_timed_mean_abs_error_pct += fabs(r->error_pct); /* sums until finish() */
    }
    if (plan_validate_scored(r)) {
        double a = fabs(r->error_pct);
        s->mean_abs_error_pct += a; /* sums until finish() */
        s->mean_error_pct += r->error_pct;
        if (s->compared == 0 || a > s->max_abs_error_pct) {
            s->max_abs_error_pct = a;
            copy(s->worst_row_id, sizeof s->worst_row_id, r->row_id);
        }
        s->compared++;
    }
    if (plan_validate_scored(r) && r->sim_time_s > 0) {
        double a = fabs(100.0 * (r->sim_time_s - r->ref_time_s) / r->ref_time_s);
        s->sim_mean_abs_error_pct += a;
        if (a > s->sim_max_abs_error_pct)
            s->sim_max_abs_error_pct = a;
        s->sim_compared++;
    }
    if (r->have_mem) {
        double a = fabs(r->mem_error_pct);
        s->mem_mean_abs_error_pct += a;
        if (s->mem_compared == 0 || a > s->mem_max_abs_error_pct)
            s->mem_max_abs_error_pct = a;
        s->mem_compared++;
    }
    if (r->ref_oom && r->have_layout) {
        s->oom_reference++;
        s->oom_agreed += r->pred_oom;
    }
    /* fit or OOM known: a published OOM, or a run that ran */
    if (r->have_layout && (r->ref_oom || r->compared || r->have_mem)) {
        s->fit_checked++;
        s->fit_agreed += r->ref_oom == r->pred_oom;
    }
    if (!r->ref_oom && r->have_layout && r->pred_oom)
        s->pred_oom_of_ran++;
}

static void finish(plan_validate_stats *s)
{
    if (s->compared) {
        s->mean_abs_error_pct /= s->compared;
        s->mean_error_pct /= s->compared;
    }
    if (s->mem_compared)
        s->mem_mean_abs_error_pct /= s->mem_compared;
    if (s->oom_timed)
        s->oom_timed_mean_abs_error_pct /= s->oom_timed;
    if (s->sim_compared)
        s->sim_mean_abs_error_pct /= s->sim_compared;
}

void plan_validate_summarize(const plan_validate_result *r, int n, plan_validate_summary *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n; i++) {
        add(&s->all, &r[i]);
        int k = 0;
        while (k < s->nsources && strcmp(s->source[k].source_key, r[i].source_key) != 0)
            k++;
        if (k == s->nsources) {
            if (k == PLAN_VAL_SOURCES_MAX) {
                s->rows_unlisted++;
                continue;
            }
            s->nsources++;
            copy(s->source[k].source_key, sizeof s->source[k].source_key, r[i].source_key);
        }
        add(&s->source[k], &r[i]);
    }
    finish(&s->all);
    int n_src = 0, n_sim = 0;
    for (int k = 0; k < s->nsources; k++) {
        plan_validate_stats *x = &s->source[k];
        finish(x);
        if (x->compared) {
            s->mean_source_pct += x->mean_abs_error_pct;
            if (x->mean_abs_error_pct > s->max_source_pct) {
                s->max_source_pct = x->mean_abs_error_pct;
                copy(s->worst_source, sizeof s->worst_source, x->source_key);
            }
            n_src++;
        }
        if (x->sim_compared) {
            s->sim_mean_source_pct += x->sim_mean_abs_error_pct;
            if (x->sim_mean_abs_error_pct > s->sim_max_source_pct)
                s->sim_max_source_pct = x->sim_mean_abs_error_pct;
            n_sim++;
        }
    }
    if (n_src)
        s->mean_source_pct /= n_src;
    if (n_sim)
        s->sim_mean_source_pct /= n_sim;
}
