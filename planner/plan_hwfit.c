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
#include "planner/plan_int.h"

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

/* ---- measured rates ---- */

/* The measured file counts forward and backward as 3.5x the forward's
 * FLOPs: the planner's count (PLAN__ATTN_BWD_OVER_FWD). */
#define ATTN_BWD_OVER_FWD PLAN__ATTN_BWD_OVER_FWD

static int attn_dir(const char *what, double fwd, double fb, double peak, double *ef, double *eb,
                    st_err *err)
{
    *ef = *eb = 0;
    if (fwd == 0 && fb == 0)
        return ST_OK;
    /* times per forward FLOP: forward 1/fwd, both 3.5/fb */
    double t_b = (1.0 + ATTN_BWD_OVER_FWD) / fb - 1.0 / fwd;
    if (!(fwd > 0) || !(fb > 0) || !isfinite(fwd) || !isfinite(fb) || !(t_b > 0))
        return ST_RAISE(err, ST_EINVAL, "measured %s attention: forward %g and forward+backward "
                        "%g FLOP/s must be positive, forward and backward taking longer than the "
                        "forward alone", what, fwd, fb);
    *ef = fwd / peak;
    *eb = ATTN_BWD_OVER_FWD / t_b / peak;
    return ST_OK;
}

int plan_gpu_measured(plan_gpu *g, const plan_measured *m, st_err *err)
{
    if (!(g->peak_flops > 0))
        return ST_RAISE(err, ST_EINVAL, "GPU '%s': measured rates need its peak_flops", g->name);
    if (m->ngemm > 0) {
        if (m->ngemm > PLAN_MEASURED_GEMM_MAX)
            return ST_RAISE(err, ST_EINVAL, "%d measured GEMMs; at most %d", m->ngemm,
                            PLAN_MEASURED_GEMM_MAX);
        double shortest = INFINITY;
        for (int i = 0; i < m->ngemm; i++) {
            const plan_gemm_sample *s = &m->gemm[i];
            if (!(s->flops > 0) || !isfinite(s->flops) || !(s->m > 0 && s->n > 0 && s->k > 0))
                return ST_RAISE(err, ST_EINVAL, "measured GEMM %d (%gx%gx%g): rate %g FLOP/s; "
                                "sides and rate must be positive", i, s->m, s->n, s->k, s->flops);
            shortest = fmin(shortest, 2.0 * s->m * s->n * s->k / s->flops);
        }
        plan_gemm_sample kept[PLAN_MEASURED_GEMM_MAX];
        int n = 0;
        for (int i = 0; i < m->ngemm; i++) {
            const plan_gemm_sample *s = &m->gemm[i];
            if (2.0 * s->m * s->n * s->k / s->flops <= PLAN_MEASURED_FLOOR_RATIO * shortest)
                continue;
            kept[n] = *s;
            kept[n++].group = 0;
        }
        plan_gemm_fit f;
        int rc = plan_gemm_fit_run(kept, n, &f, err);
        if (rc)
            return rc;
        /* the chip's own values are what its isolated kernels reached; a
         * stack's fit may only come below them */
        g->gemm_ceiling = fmin(1.0, f.asymptote_flops / g->peak_flops);
        g->gemm_dim_half = f.dim_half;
        g->gemm_eff_max = g->gemm_ceiling;
        g->gemm_measured = 1;
        g->gemm_measured_rms = f.rms_log_err;
        g->gemm_measured_shapes = f.used;
    }
    int rc = attn_dir("FlashAttention-2", m->flash2_fwd_flops, m->flash2_fwd_bwd_flops,
                      g->peak_flops, &g->flash2_fwd_eff, &g->flash2_bwd_eff, err);
    if (!rc)
        rc = attn_dir("cuDNN", m->cudnn_fwd_flops, m->cudnn_fwd_bwd_flops, g->peak_flops,
                      &g->cudnn_fwd_eff, &g->cudnn_bwd_eff, err);
    if (!rc)
        rc = attn_dir("the executor's", m->smdplan_fwd_flops, m->smdplan_fwd_bwd_flops,
                      g->peak_flops, &g->exec_attn_fwd_eff, &g->exec_attn_bwd_eff, err);
    g->exec_attn_row_fwd_s = m->smdplan_row_fwd_s;
    g->exec_attn_row_bwd_s = m->smdplan_row_bwd_s;
    g->exec_attn_elem_fwd_s = m->smdplan_elem_fwd_s;
    g->exec_attn_elem_bwd_s = m->smdplan_elem_bwd_s;
    if (rc)
        return rc;
    if (g->flash2_fwd_eff > 0)
        g->flash_eff = plan__attn_fwd_bwd_eff(g->flash2_fwd_eff, g->flash2_bwd_eff);
    if (m->copy_bps > 0) {
        if (!(m->hbm_bps > 0))
            return ST_RAISE(err, ST_EINVAL, "a measured copy needs the datasheet HBM bandwidth "
                            "of the device it was measured on");
        g->copy_bps = m->copy_bps;
        g->copy_hbm_bps = m->hbm_bps;
    }
    return ST_OK;
}

double plan_gpu_copy_eff(const plan_gpu *g)
{
    /* the same memory: datasheet bandwidths within a part in a thousand */
    if (!(g->copy_bps > 0) || !(g->hbm_bps > 0) ||
        fabs(g->copy_hbm_bps - g->hbm_bps) > 1e-3 * g->hbm_bps)
        return 0.0;
    return g->copy_bps / g->hbm_bps;
}
