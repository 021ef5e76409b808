/*
 * exec_result_check.c: a RESULT.json checked against the run it claims to
 * be before anything of it is recorded (what smdplan exec does after a
 * launch and on --import): a status of the contract's set, the run's
 * ranks, its tokens and model FLOPs per step as the executor counts them
 * for this model and layout, steps of the run's schedule, learning rates
 * up to the peak, and times, FLOPs and memory finite, non-negative and
 * under bounds no run reaches. And the run's step time, the median of its
 * measured steps.
 */
#include "exec/exec_host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The statuses of the contract (exec.h): the rank program writes no other. */
static const char *const result_statuses[] = {"ok", "failed", NULL};
/* Longest time a step (or a phase of it) can take: the largest --timeout
 * smdplan exec takes for a whole run, 1e7 s. */
#define RESULT_TIME_MAX_S 1e7
/* Most memory a rank can report: 1 PiB, more than any host or GPU holds. */
#define RESULT_MEM_MAX_BYTES 1125899906842624.0
/* Hardware FLOPs over the model's: full recompute adds one forward to the
 * forward and backward, 4/3 (Korthikanti et al. 2022); twice that is past
 * anything the executor computes. */
#define RESULT_HW_FLOPS_FACTOR (2.0 * 4.0 / 3.0)
/* Relative tolerance of a count the executor computes in double from the
 * same integers: a few roundings of 2^-53 each. */
#define RESULT_COUNT_RTOL 1e-9

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double exec_result_median_step_s(const exec_result *r, int *measured)
{
    *measured = 0;
    double *t = r->nsteps > 0 ? malloc((size_t)r->nsteps * sizeof *t) : NULL;
    if (!t)
        return NAN;
    int n = 0;
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].measured && isfinite(r->steps[i].time_s))
            t[n++] = r->steps[i].time_s;
    *measured = n;
    double med = NAN;
    if (n > 0) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    }
    free(t);
    return med;
}

static int in_range(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

/* v is 0 (nothing measured) or the count the executor makes, want. */
static int zero_or(double v, double want)
{
    return v == 0.0 || (isfinite(v) && fabs(v - want) <= RESULT_COUNT_RTOL * want);
}

static int check_phases(const exec_phases *p, double max_s, const char *where, st_err *err)
{
    const struct {
        const char *name;
        double v;
    } ph[] = {{"compute_s", p->compute_s},   {"tp_comm_s", p->tp_comm_s},
              {"pp_wait_s", p->pp_wait_s},   {"dp_comm_s", p->dp_comm_s},
              {"optimizer_s", p->optimizer_s}};
    for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++)
        if (!in_range(ph[i].v, 0, max_s))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: %s phases_s.%s %g: allowed 0 to %g s",
                            where, ph[i].name, ph[i].v, max_s);
    return ST_OK;
}

int exec_result_check(const exec_result *r, const exec_job *j, const exec_train *t,
                      st_err *err)
{
    int known = 0;
    for (int i = 0; result_statuses[i]; i++)
        known |= !strcmp(r->status, result_statuses[i]);
    if (!known)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: status \"%.40s\": allowed ok, failed",
                        r->status);
    if (r->ranks != j->ranks)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: ranks %d: the run has %d", r->ranks,
                        j->ranks);
    if (r->failed_rank < -1 || r->failed_rank >= j->ranks)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: failed_rank %d: allowed -1 (none) to %d",
                        r->failed_rank, j->ranks - 1);
    double tokens = (double)j->layout.global_batch * (double)j->model.seq;
    double flops = plan_model_train_flops_per_token(&j->model) * tokens;
    if (!zero_or(r->tokens_per_step, tokens))
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: tokens_per_step %g: allowed 0 or the run's "
                        "%.0f (global batch %lld x sequence %lld)", r->tokens_per_step, tokens,
                        (long long)j->layout.global_batch, (long long)j->model.seq);
    if (!zero_or(r->model_flops_per_step, flops))
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: model_flops_per_step %g: allowed 0 or the "
                        "run's %.6g", r->model_flops_per_step, flops);
    if (!in_range(r->hardware_flops_per_step, 0, RESULT_HW_FLOPS_FACTOR * flops))
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: hardware_flops_per_step %g: allowed 0 to "
                        "%.6g (%.3g x the model's)", r->hardware_flops_per_step,
                        RESULT_HW_FLOPS_FACTOR * flops, RESULT_HW_FLOPS_FACTOR);
    if (r->nsteps > t->steps)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: %d steps: the run has %lld", r->nsteps,
                        (long long)t->steps);
    char where[48];
    for (int i = 0; i < r->nsteps; i++) {
        const exec_step_result *s = &r->steps[i];
        int64_t prev = i ? r->steps[i - 1].step : 0;
        if (s->step <= prev || s->step > t->steps)
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].step %lld: allowed %lld to "
                            "%lld, increasing", i, (long long)s->step, (long long)prev + 1,
                            (long long)t->steps);
        if (!in_range(s->time_s, 0, RESULT_TIME_MAX_S))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].time_s %g: allowed 0 to %g s",
                            i, s->time_s, RESULT_TIME_MAX_S);
        /* a diverged run's loss and norm are NaN (null in the file) */
        if (!isnan(s->loss) && !(isfinite(s->loss) && s->loss >= 0))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].loss %g: allowed a "
                            "cross-entropy >= 0, or null", i, s->loss);
        if (!isnan(s->grad_norm) && !(isfinite(s->grad_norm) && s->grad_norm >= 0))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].grad_norm %g: allowed >= 0, "
                            "or null", i, s->grad_norm);
        if (!in_range(s->lr, 0, t->lr * (1 + RESULT_COUNT_RTOL)))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].lr %g: allowed 0 to the "
                            "run's peak %g", i, s->lr, t->lr);
        snprintf(where, sizeof where, "steps[%d]", i);
        int rc = check_phases(&s->phases, RESULT_TIME_MAX_S, where, err);
        if (rc)
            return rc;
    }
    if (r->nranks > j->ranks)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: %d rank_stats: the run has %d ranks",
                        r->nranks, j->ranks);
    for (int i = 0; i < r->nranks; i++) {
        const exec_rank_stat *k = &r->rank_stats[i];
        if (k->rank < 0 || k->rank >= j->ranks || k->tp_rank < 0 || k->tp_rank >= j->layout.tp ||
            k->pp_rank < 0 || k->pp_rank >= j->layout.pp || k->dp_rank < 0 ||
            k->dp_rank >= j->layout.dp)
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d] rank %d (tp %d, pp %d, "
                            "dp %d): outside the layout's %d ranks (tp %d, pp %d, dp %d)", i,
                            k->rank, k->tp_rank, k->pp_rank, k->dp_rank, j->ranks, j->layout.tp,
                            j->layout.pp, j->layout.dp);
        for (int m = 0; m < i; m++)
            if (r->rank_stats[m].rank == k->rank)
                return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d]: rank %d twice", i,
                                k->rank);
        const struct {
            const char *name;
            double v;
        } mem[] = {{"peak_memory_bytes", k->peak_memory_bytes},
                   {"max_rss_bytes", k->max_rss_bytes},
                   {"device_memory_peak_bytes", k->device_memory_peak_bytes}};
        for (size_t q = 0; q < sizeof mem / sizeof mem[0]; q++)
            if (!in_range(mem[q].v, 0, RESULT_MEM_MAX_BYTES))
                return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d].%s %g: allowed 0 to "
                                "%g bytes", i, mem[q].name, mem[q].v, RESULT_MEM_MAX_BYTES);
        for (int c = 0; c < EXEC_MEM__COUNT; c++)
            if (!in_range(k->peak_class_bytes[c], 0, RESULT_MEM_MAX_BYTES))
                return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d] peak of %s %g: "
                                "allowed 0 to %g bytes", i, exec_mem_class_name((exec_mem_class)c),
                                k->peak_class_bytes[c], RESULT_MEM_MAX_BYTES);
        snprintf(where, sizeof where, "rank_stats[%d]", i);
        int rc = check_phases(&k->phases, RESULT_TIME_MAX_S * (double)t->steps, where, err);
        if (rc)
            return rc;
    }
    return ST_OK;
}

int exec_result_load(const char *run_dir, const exec_job *j, const exec_train *t,
                     exec_result *res, st_err *err)
{
    char path[EXEC_RUN_DIR_MAX + 32];
    snprintf(path, sizeof path, "%s/RESULT.json", run_dir);
    int have = access(path, F_OK) == 0 && exec_result_read(path, res, err) == ST_OK;
    if (have && exec_result_check(res, j, t, err) != ST_OK) {
        exec_result_free(res);
        have = 0;
    }
    return have;
}
