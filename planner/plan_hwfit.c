/*
 * plan_hwfit.c: fitting the GEMM model of plan_hw.c to measured GEMM rates
 * (see plan_hwfit.h).
 *
 * For a fixed dim_half h, log A is the mean over groups of log(the group's
 * model time at A = 1) - log(its measured time) (least squares in log time
 * with one free offset); the residual sum of squares is then a function of
 * h alone,
 * minimised by a scan of h over 0 and powers of two up to
 * PLAN_GEMM_DIM_HALF_MAX, refined by golden-section search (Kiefer 1953)
 * between the neighbours of the best point of the scan.
 */
#include "planner/plan_hwfit.h"

#include <math.h>

#define GOLDEN 0.6180339887498949
#define GOLDEN_ITERS 60

static int aligned8(double d)
{
    double q = d / 8.0;
    return q == floor(q);
}

static int usable(const plan_gemm_sample *s)
{
    return s->m > 0 && s->n > 0 && s->k > 0 && s->flops > 0 && isfinite(s->flops) &&
           aligned8(s->m) && aligned8(s->n) && aligned8(s->k);
}

static double shape_log(const plan_gemm_sample *s, double h)
{
    return log(s->m / (s->m + h)) + log(s->n / (s->n + h)) + log(s->k / (s->k + h));
}

/* Is sample i the first usable one of its group (or ungrouped)? */
static int group_head(const plan_gemm_sample *s, int i)
{
    if (!usable(&s[i]))
        return 0;
    if (s[i].group <= 0)
        return 1;
    for (int j = 0; j < i; j++)
        if (usable(&s[j]) && s[j].group == s[i].group)
            return 0;
    return 1;
}

/* For the group headed by i: log of the model's total time at h with A = 1
 * (sum of flops / shape factor), and log of the measured total time. */
static void group_logs(const plan_gemm_sample *s, int n, int i, double h, double *model,
                       double *meas)
{
    double tm = 0, tt = 0;
    for (int j = i; j < n; j++) {
        if (!usable(&s[j]) || (j != i && (s[i].group <= 0 || s[j].group != s[i].group)))
            continue;
        double work = 2.0 * s[j].m * s[j].n * s[j].k;
        tm += work * exp(-shape_log(&s[j], h));
        tt += work / s[j].flops;
        if (s[i].group <= 0)
            break;
    }
    *model = log(tm);
    *meas = log(tt);
}

/* Residual sum of squares over groups at h; *log_a gets the best offset:
 * log(model time) = log(work / shape) - log A, so log A is the mean over
 * groups of log(model at A = 1) - log(measured). */
static double rss(const plan_gemm_sample *s, int n, double h, double *log_a)
{
    double sum = 0;
    int groups = 0;
    for (int i = 0; i < n; i++)
        if (group_head(s, i)) {
            double mo, me;
            group_logs(s, n, i, h, &mo, &me);
            sum += mo - me;
            groups++;
        }
    double la = sum / groups, r = 0;
    for (int i = 0; i < n; i++)
        if (group_head(s, i)) {
            double mo, me;
            group_logs(s, n, i, h, &mo, &me);
            double e = mo - la - me;
            r += e * e;
        }
    *log_a = la;
    return r;
}

int plan_gemm_fit_run(const plan_gemm_sample *s, int n, plan_gemm_fit *out, st_err *err)
{
    int used = 0, groups = 0;
    for (int i = 0; i < n; i++) {
        if (!(s[i].flops > 0) || !isfinite(s[i].flops) || !(s[i].m > 0 && s[i].n > 0 && s[i].k > 0))
            return ST_RAISE(err, ST_EINVAL, "GEMM sample %d (%gx%gx%g): rate %g FLOP/s; sides and "
                            "rate must be positive", i, s[i].m, s[i].n, s[i].k, s[i].flops);
        used += usable(&s[i]);
        groups += group_head(s, i);
    }
    if (groups < 2)
        return ST_RAISE(err, ST_EINVAL, "GEMM fit: %d groups of samples with sides that are "
                        "multiples of 8; at least 2 are needed", groups);
    /* scan: 0, 1, 2, 4, ... */
    double best_h = 0, la, best = rss(s, n, 0, &la);
    for (double h = 1; h <= PLAN_GEMM_DIM_HALF_MAX; h *= 2) {
        double r = rss(s, n, h, &la);
        if (r < best) {
            best = r;
            best_h = h;
        }
    }
    double prev_h = best_h > 1 ? best_h / 2 : 0;
    double next_h = best_h > 0 ? fmin(best_h * 2, PLAN_GEMM_DIM_HALF_MAX) : 1;
    /* golden section on [prev_h, next_h] */
    double a = prev_h, b = next_h;
    double x1 = b - GOLDEN * (b - a), x2 = a + GOLDEN * (b - a);
    double f1 = rss(s, n, x1, &la), f2 = rss(s, n, x2, &la);
    for (int it = 0; it < GOLDEN_ITERS; it++) {
        if (f1 < f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - GOLDEN * (b - a);
            f1 = rss(s, n, x1, &la);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + GOLDEN * (b - a);
            f2 = rss(s, n, x2, &la);
        }
    }
    double h = 0.5 * (a + b);
    double r = rss(s, n, h, &la);
    if (best < r) { /* the scan's point was better (an edge of the range) */
        h = best_h;
        r = rss(s, n, h, &la);
    }
    /* log(model time) = log(work / shape) - log A: A = exp(la) */
    out->asymptote_flops = exp(la);
    out->dim_half = h;
    out->rms_log_err = sqrt(r / groups);
    out->used = used;
    out->groups = groups;
    out->max_abs_err_pct = 0;
    for (int i = 0; i < n; i++)
        if (group_head(s, i)) {
            double mo, me;
            group_logs(s, n, i, h, &mo, &me);
            double e = 100.0 * fabs(exp(mo - la - me) - 1.0);
            if (e > out->max_abs_err_pct)
                out->max_abs_err_pct = e;
        }
    return ST_OK;
}

double plan_gemm_fit_rate(const plan_gemm_fit *f, double m, double n, double k)
{
    double h = f->dim_half;
    return f->asymptote_flops * m / (m + h) * n / (n + h) * k / (k + h);
}
