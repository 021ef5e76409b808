/*
 * plan_hwfit_host.c: a host's catalog entry fitted to what smdplan bench
 * measured on it (plan_hwfit.h): the device's GEMM model and kernel floors,
 * the links between ranks, the fused and plain attention of a GPU, and
 * hbm_eff from the executor's own reference step. Pure computation on the
 * measurements (planner/plan_bench.h); the caller runs the benchmarks and
 * writes the entry.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "planner/plan_framework.h"
#include "planner/plan_hwfit.h"
#include "planner/plan_int.h"

void plan_bench_ref_model(plan_model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "bench-reference");
    snprintf(m->source, sizeof m->source, "smdplan bench's reference step");
    m->arch = PLAN_ARCH_GPT;
    m->layers = PLAN_BENCH_REF_LAYERS;
    m->hidden = PLAN_BENCH_REF_HIDDEN;
    m->heads = m->kv_heads = PLAN_BENCH_REF_HEADS;
    m->ffn = 4 * PLAN_BENCH_REF_HIDDEN;
    m->seq = PLAN_BENCH_REF_SEQ;
    m->vocab = PLAN_BENCH_REF_VOCAB;
    m->tied_embedding = 1;
    m->dropout = PLAN_DROPOUT_OFF;
}

void plan_bench_ref_layout(plan_layout *l)
{
    int fw = PLAN_FW_DEFAULT;
    st_err ignore = {0};
    plan_framework_find("smdplan", &fw, &ignore);
    plan_layout_default(l);
    plan_framework_apply(plan_framework_get(fw), fw, l);
    l->microbatches = l->active_microbatches = PLAN_BENCH_REF_MICROBATCHES;
    l->global_batch = PLAN_BENCH_REF_MICROBATCHES;
    l->precision = PLAN_PREC_FP32;
}

/* hbm_eff in (0, 1] such that the planner's compute time of the reference
 * step on device g (one rank) is the executor's measured one: bisection on
 * a time that falls as hbm_eff grows. 1 when even the triad's full rate
 * leaves the planner slower; *how says which. */
static double fit_hbm_eff_for(plan_gpu g, plan_model m, const plan_layout *lp,
                              double measured_s, const char **how)
{
    st_err err = {0};
    plan_model_finish(&m, &err);
    plan_layout l = *lp;
    plan_curve flat;
    memset(&flat, 0, sizeof flat);
    snprintf(flat.name, sizeof flat.name, "flat");
    flat.n = 1;
    flat.log2_bytes[0] = 20;
    flat.eff[0] = 1;
    plan_instance in;
    memset(&in, 0, sizeof in);
    snprintf(in.name, sizeof in.name, "reference");
    in.gpus_per_node = 1;
    in.nvlink_bps = in.intra_busbw_bps = in.net_bps = 1e10; /* one rank: no link is used */
    in.net_ring_eff = in.net_tree_eff = 1;
    in.net_latency_nodes = 2;
    plan_cluster c;
    memset(&c, 0, sizeof c);
    c.inst = &in;
    c.gpu = &g;
    c.intra_curve = c.net_curve = &flat;
    c.nodes = c.gpus = 1;
    double lo = 0.01, hi = 1.0;
    plan_estimate e;
    for (int it = 0; it < 50; it++) {
        double mid = it == 0 ? hi : 0.5 * (lo + hi);
        g.hbm_eff = mid;
        plan_cluster_use(NULL, NULL, &c);
        if (plan_evaluate(&m, &c, &l, &e, NULL, &err) != ST_OK) {
            *how = "the planner could not time the reference";
            return 1.0;
        }
        if (it == 0) {
            if (e.time.compute_s >= measured_s) {
                *how = "the triad's full rate already times the reference at or above the "
                       "executor";
                return 1.0;
            }
            continue;
        }
        if (e.time.compute_s > measured_s)
            lo = mid;
        else
            hi = mid;
    }
    *how = "the executor's reference step";
    return 0.5 * (lo + hi);
}

double plan_hbm_eff_fit(plan_gpu g, double measured_s, const char **how)
{
    plan_model m;
    plan_bench_ref_model(&m);
    plan_layout l;
    plan_bench_ref_layout(&l);
    return fit_hbm_eff_for(g, m, &l, measured_s, how);
}


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Weighted least squares of t = a + f S / B over the rows of op (weights
 * 1/t^2: relative error), with f its bus factor. */
plan_link_fit plan_link_fit_run(const plan_bench_comm *c, const char *op)
{
    plan_link_fit lf = {NAN, NAN, NAN, 0, 0};
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, small[PLAN_BENCH_COLL_MAX];
    int ns = 0;
    for (int i = 0; i < c->n; i++) {
        const plan_bench_coll *v = &c->v[i];
        if (strcmp(v->op, op) || !(v->time_s > 0))
            continue;
        double f = plan_bench_busbw_factor(op, v->ranks);
        double x = f * v->bytes, y = v->time_s, w = 1.0 / (y * y);
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
        lf.n++;
        if (v->busbw_bps > lf.max_busbw_bps)
            lf.max_busbw_bps = v->busbw_bps;
        if (v->bytes <= PLAN_SMALL_MESSAGE_BYTES)
            small[ns++] = v->time_s;
    }
    double det = sw * sxx - sx * sx;
    if (lf.n >= 2 && det > 0) {
        double slope = (sw * sxy - sx * sy) / det, a = (sy - slope * sx) / sw;
        if (slope > 0) {
            lf.bw_bps = 1.0 / slope;
            lf.lat_s = a;
        }
    }
    if (ns > 0) {
        qsort(small, (size_t)ns, sizeof small[0], cmp_double);
        lf.small_s = ns % 2 ? small[ns / 2] : 0.5 * (small[ns / 2 - 1] + small[ns / 2]);
    }
    return lf;
}



double plan_bench_elem_s(const plan_bench_cpu *b, int threads, const char *op)
{
    for (int i = 0; i < b->nelem; i++)
        if (b->elem[i].threads == threads && !strcmp(b->elem[i].op, op))
            return b->elem[i].elem_s;
    return NAN;
}

/* A bench measurement of an attention core (plain "attn_*", fused
 * "flash_*"), not a linear. */
static int attention_kind(const char *kind)
{
    return strncmp(kind, "attn", 4) == 0 || strncmp(kind, "flash", 5) == 0;
}

/* The median rate of the attention core's measurements of kind at threads
 * (NAN: none). */
static double attn_rate(const plan_bench_cpu *b, int threads, const char *kind)
{
    double r[PLAN_BENCH_GEMM_MAX];
    int n = 0;
    for (int i = 0; i < b->ngemm; i++)
        if (b->gemm[i].threads == threads && !strcmp(b->gemm[i].kind, kind))
            r[n++] = b->gemm[i].flops;
    if (!n)
        return NAN;
    qsort(r, (size_t)n, sizeof r[0], cmp_double);
    return n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
}

plan_dev_fit plan_dev_fit_run(const plan_bench_cpu *b, int threads, st_err *err)
{
    plan_dev_fit d;
    memset(&d, 0, sizeof d);
    d.threads = threads;
    d.misaligned = NAN;
    plan_gemm_sample s[PLAN_BENCH_GEMM_MAX];
    memset(s, 0, sizeof s);
    /* the executor's own linears when measured (what it runs), else sgemm;
     * the attention cores are no linears */
    for (int i = 0; i < b->ngemm; i++)
        d.device_gemms |= b->gemm[i].threads == threads && !attention_kind(b->gemm[i].kind) &&
                          strcmp(b->gemm[i].kind, "sgemm") != 0;
    int n = 0;
    for (int i = 0; i < b->ngemm; i++)
        if (b->gemm[i].threads == threads && !attention_kind(b->gemm[i].kind) &&
            (strcmp(b->gemm[i].kind, "sgemm") != 0) == d.device_gemms)
            s[n++] = (plan_gemm_sample){(double)b->gemm[i].m, (double)b->gemm[i].n,
                                        (double)b->gemm[i].k, b->gemm[i].flops, b->gemm[i].group};
    if (plan_gemm_fit_run(s, n, &d.gemm, err) != ST_OK)
        return d;
    for (int i = 0; i < b->ngemm; i++) {
        const plan_bench_gemm *g = &b->gemm[i];
        if (g->threads == threads && g->m == 1023 && g->n == 1023 && g->k == 1023)
            d.misaligned = fmin(1.0, g->flops / plan_gemm_fit_rate(&d.gemm, 1024, 1024, 1024));
    }
    for (int i = 0; i < b->nmem; i++)
        if (b->mem[i].threads == threads)
            d.triad_bps = b->mem[i].triad_bps;
    d.act_fwd_s = plan_bench_elem_s(b, threads, "gelu_fwd");
    d.act_bwd_s = plan_bench_elem_s(b, threads, "gelu_bwd");
    d.glu_fwd_s = plan_bench_elem_s(b, threads, "swiglu_fwd");
    d.glu_bwd_s = plan_bench_elem_s(b, threads, "swiglu_bwd");
    d.opt_param_s = plan_bench_elem_s(b, threads, "optimizer");
    d.norm_s = plan_bench_elem_s(b, threads, "norm_fwd") + plan_bench_elem_s(b, threads, "norm_bwd");
    d.attn_fwd_flops = attn_rate(b, threads, "attn_fwd");
    d.attn_bwd_flops = attn_rate(b, threads, "attn_bwd");
    d.ok = 1;
    return d;
}

double plan_bench_full_triad(const plan_bench_cpu *b)
{
    double bps = 0;
    int best = 0;
    for (int i = 0; i < b->nmem; i++)
        if (b->mem[i].threads >= best) {
            best = b->mem[i].threads;
            bps = b->mem[i].triad_bps;
        }
    return bps;
}

/* Least squares of the n x k system a x = y (rows a[i][0..k-1]), by GSL's
 * SVD with the columns scaled to unit norm first (the terms' sizes differ
 * by 1e5); 0 when the system is rank-deficient (fewer shapes than terms, or
 * terms that do not differ over the shapes). */
#define FLASH_TERMS 3
static int lsq_small(double a[][FLASH_TERMS], const double *y, int n, int k, double *x)
{
    if (k == 0)
        return 1;
    if (n < k)
        return 0;
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)k);
    gsl_vector *Y = gsl_vector_alloc((size_t)n), *c = gsl_vector_alloc((size_t)k);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)n, (size_t)k);
    double scale[FLASH_TERMS], rnorm = 0, snorm = 0;
    int ok = X && Y && c && w;
    for (int i = 0; ok && i < k; i++) {
        double ss = 0;
        for (int r = 0; r < n; r++)
            ss += a[r][i] * a[r][i];
        ok = ss > 0;
        scale[i] = ok ? 1.0 / sqrt(ss) : 0.0;
        for (int r = 0; ok && r < n; r++)
            gsl_matrix_set(X, (size_t)r, (size_t)i, a[r][i] * scale[i]);
    }
    for (int r = 0; ok && r < n; r++)
        gsl_vector_set(Y, (size_t)r, y[r]);
    ok = ok && gsl_multifit_linear_svd(X, w) == GSL_SUCCESS &&
         gsl_multifit_linear_rank(1e-10, w) == (size_t)k &&
         gsl_multifit_linear_solve(0.0, X, Y, c, &rnorm, &snorm, w) == GSL_SUCCESS;
    for (int i = 0; ok && i < k; i++)
        x[i] = gsl_vector_get(c, (size_t)i) * scale[i];
    gsl_multifit_linear_free(w);
    gsl_vector_free(c);
    gsl_vector_free(Y);
    gsl_matrix_free(X);
    return ok;
}

/* The fused attention's time in one direction: work / (peak eff) + scores
 * score_s + rows row_s. Each shape measured gives its work as the planner
 * counts it (4 d per score of the causal half forward, 2.5 times that
 * backward: plan_eval.c), hence its scores and rows (scores = rows x T /
 * 2). Residuals relative to each shape's time, so that every shape counts
 * alike. The constraints (eff at most 1, the two times at least 0) are met
 * by trying each set of terms held at their bound (the rate at the peak,
 * a time at 0) and keeping the best fit that meets them all: the optimum of
 * a convex problem with bounds is one of those. */
int plan_bench_flash_fit(const plan_bench_cpu *b, double peak, int bwd, double *eff,
                         double *score_s, double *row_s)
{
    double feat[PLAN_BENCH_GEMM_MAX][FLASH_TERMS], t[PLAN_BENCH_GEMM_MAX];
    int n = 0;
    const char *kind = bwd ? "flash_bwd" : "flash_fwd";
    *eff = 0;
    *score_s = *row_s = 0;
    for (int i = 0; i < b->ngemm && n < PLAN_BENCH_GEMM_MAX; i++) {
        const plan_bench_gemm *g = &b->gemm[i];
        if (strcmp(g->kind, kind) || !(g->time_s > 0) || !(g->flops > 0) || g->m <= 0 ||
            g->k <= 0)
            continue;
        double work = g->flops * g->time_s;
        double scores = work / ((bwd ? PLAN__ATTN_BWD_OVER_FWD : 1.0) * 4.0 * (double)g->k);
        feat[n][0] = work;
        feat[n][1] = scores;
        feat[n][2] = 2.0 * scores / (double)g->m;
        t[n++] = g->time_s;
    }
    if (!n || !(peak > 0))
        return ST_ENOENT;
    double best = INFINITY, bx[FLASH_TERMS] = {0};
    /* free: bit j set when term j is fitted; term 0 otherwise at the peak */
    for (int free = 0; free < (1 << FLASH_TERMS); free++) {
        for (int pinned = 0; pinned < 2; pinned++) {
            if (pinned == !!(free & 1))
                continue; /* the rate is either fitted or at the peak */
            double a[PLAN_BENCH_GEMM_MAX][FLASH_TERMS], x[FLASH_TERMS] = {0}, sol[FLASH_TERMS];
            int cols[FLASH_TERMS], k = 0;
            for (int j = 0; j < FLASH_TERMS; j++)
                if (free & (1 << j))
                    cols[k++] = j;
            if (pinned)
                x[0] = 1.0 / peak;
            /* what the fitted terms are to make of each shape: its time
             * less the pinned rate's share, relative to the time */
            double rhs[PLAN_BENCH_GEMM_MAX];
            for (int r = 0; r < n; r++) {
                rhs[r] = 1.0 - x[0] * feat[r][0] / t[r];
                for (int c = 0; c < k; c++)
                    a[r][c] = feat[r][cols[c]] / t[r];
            }
            if (!lsq_small(a, rhs, n, k, sol))
                continue;
            for (int c = 0; c < k; c++)
                x[cols[c]] = sol[c];
            /* a term whose share of every shape's time is below the
             * solve's rounding is 0, not negative */
            for (int j = 1; j < FLASH_TERMS; j++) {
                double share = 0;
                for (int r = 0; r < n; r++)
                    share = fmax(share, fabs(x[j]) * feat[r][j] / t[r]);
                if (share < 1e-9)
                    x[j] = 0;
            }
            if (x[0] < (1.0 - 1e-9) / peak || x[1] < 0 || x[2] < 0)
                continue;
            double sse = 0;
            for (int r = 0; r < n; r++) {
                double p = (x[0] * feat[r][0] + x[1] * feat[r][1] + x[2] * feat[r][2]) / t[r];
                sse += (p - 1) * (p - 1);
            }
            if (sse < best) {
                best = sse;
                memcpy(bx, x, sizeof bx);
            }
        }
    }
    if (!isfinite(best))
        return ST_ENOENT;
    *eff = 1.0 / (bx[0] * peak);
    *score_s = bx[1];
    *row_s = bx[2];
    return ST_OK;
}

/* The plain attention's time beyond the planner's count: each measured
 * plain core ("attn_fwd" 4 d per score, "attn_bwd" 8 d; T x T scores of
 * head d, their number of products from the work) less what the planner's
 * terms give for it on the entry g being written (the batched products on
 * its GEMM model, the score bytes at its hbm_eff), over its rows (products
 * x T): y = row_s + elem_s d, fitted by least squares over the shapes with
 * both terms at least 0 (a term that would go below is 0 and the other
 * refitted alone). What the two stand for: the causal softmax and its
 * gradient run one score row at a time and a row costs more than its bytes
 * (row_s); the executor's layout copies (Q, K, V to head-major and the
 * output back, exec_dev_cuda.c: 16 B per row and head element forward, 28
 * backward) and the products' short side, the head, which the GEMM model
 * extrapolates from the linears' widths (elem_s). With heads of 64 and 128
 * measured the two are told apart; with one size, elem_s is 0 and row_s
 * their mean. */
int plan_bench_attn_rows(const plan_bench_cpu *b, const plan_gpu *g, int bwd, double *row_s,
                         double *elem_s)
{
    double sd = 0, sy = 0, sdd = 0, sdy = 0;
    int n = 0;
    const char *kind = bwd ? "attn_bwd" : "attn_fwd";
    *row_s = *elem_s = NAN;
    for (int i = 0; i < b->ngemm; i++) {
        const plan_bench_gemm *a = &b->gemm[i];
        if (strcmp(a->kind, kind) || !(a->time_s > 0) || a->m <= 0 || a->k <= 0)
            continue;
        double T = (double)a->m, hd = (double)a->k;
        double nb = a->flops * a->time_s / ((bwd ? 8.0 : 4.0) * T * T * hd);
        double f = 0, w = 0;
        st_err ignore = {0};
        if (!(nb >= 1) || plan_attn_plain_time(g, nb, T, T, hd, &f, &w, &ignore) != ST_OK)
            continue;
        double y = (a->time_s - (bwd ? w : f)) / (nb * T);
        sd += hd;
        sy += y;
        sdd += hd * hd;
        sdy += hd * y;
        n++;
    }
    if (!n)
        return ST_ENOENT;
    double var = sdd - sd * sd / n; /* n times the head sizes' variance */
    double e = var > 1e-9 * sdd ? (sdy - sd * sy / n) / var : 0.0;
    double r = (sy - e * sd) / n;
    if (e < 0) { /* no cost that grows with the head: the mean alone */
        e = 0;
        r = sy / n;
    }
    if (r < 0) { /* none per row: all of it per head element */
        r = 0;
        e = sdd > 0 ? fmax(0.0, sdy / sdd) : 0.0;
    }
    *row_s = r;
    *elem_s = e;
    return ST_OK;
}

int plan_host_cpu_fit_run(const plan_bench_cpu *cpu, int T, plan_host_cpu_fit *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    if (T < 1 || cpu->cores < T)
        return ST_RAISE(err, ST_EINVAL, "%d threads per rank on %d cores", T, cpu->cores);
    plan_dev_fit d = plan_dev_fit_run(cpu, T, err);
    if (!d.ok)
        return err->code ? err->code : ST_EINVAL;
    int slots = cpu->cores / T;
    double hbm = plan_bench_full_triad(cpu) / slots;
    double mis = isfinite(d.misaligned) ? d.misaligned : 1.0;
    /* the norm and residual kernels' bytes as the planner counts them, over
     * their time, against the triad: the executor's elementwise efficiency
     * (at most 1: its kernels move less than the planner counts when they
     * keep no dropout masks) */
    double hbm_eff = isfinite(d.norm_s) && d.norm_s > 0 ? fmin(1.0, PLAN_NORM_BYTES_PER_ELEM /
                                                                         (d.norm_s * hbm))
                                                        : 1.0;
    /* the executor's own step, when measured: hbm_eff and the optimizer from
     * it (PLAN_BENCH_REF_*) */
    double ref_c = plan_bench_elem_s(cpu, T, "ref_compute");
    double ref_o = plan_bench_elem_s(cpu, T, "ref_optimizer");
    const char *hbm_how = "the norm and residual kernels";
    if (isfinite(ref_o) && ref_o > 0)
        d.opt_param_s = ref_o;
    if (isfinite(ref_c) && ref_c > 0) {
        plan_gpu g;
        memset(&g, 0, sizeof g);
        g.mem_bytes = cpu->mem_bytes / slots;
        g.peak_flops = d.gemm.asymptote_flops;
        g.hbm_bps = hbm;
        g.gemm_eff_max = 1;
        g.gemm_dim_half = d.gemm.dim_half;
        g.misaligned_factor = mis;
        g.flash_eff = 1;
        g.act_fwd_s = isfinite(d.act_fwd_s) ? d.act_fwd_s : 0;
        g.act_bwd_s = isfinite(d.act_bwd_s) ? d.act_bwd_s : 0;
        g.glu_fwd_s = isfinite(d.glu_fwd_s) ? d.glu_fwd_s : 0;
        g.glu_bwd_s = isfinite(d.glu_bwd_s) ? d.glu_bwd_s : 0;
        g.opt_param_s = d.opt_param_s;
        g.attn_fwd_flops = isfinite(d.attn_fwd_flops) ? d.attn_fwd_flops : 0;
        g.attn_bwd_flops = isfinite(d.attn_bwd_flops) ? d.attn_bwd_flops : 0;
        hbm_eff = plan_hbm_eff_fit(g, ref_c * (double)PLAN_BENCH_REF_MICROBATCHES * PLAN_BENCH_REF_SEQ,
                                   &hbm_how);
    }

    plan_gpu *w = &out->g;
    w->mem_bytes = cpu->mem_bytes / slots;
    w->peak_flops = d.gemm.asymptote_flops;
    w->hbm_bps = hbm;
    w->gemm_eff_max = 1.0;
    w->gemm_dim_half = d.gemm.dim_half;
    w->misaligned_factor = mis;
    w->hbm_eff = hbm_eff;
    w->flash_eff = 1.0;
    w->act_fwd_s = d.act_fwd_s;
    w->act_bwd_s = d.act_bwd_s;
    w->glu_fwd_s = d.glu_fwd_s;
    w->glu_bwd_s = d.glu_bwd_s;
    w->opt_param_s = d.opt_param_s;
    w->attn_fwd_flops = d.attn_fwd_flops;
    w->attn_bwd_flops = d.attn_bwd_flops;
    out->d = d;
    out->slots = slots;
    out->hbm_how = hbm_how;
    return ST_OK;
}

int plan_host_gpu_fit_run(const plan_bench_cpu *b, const plan_gpu *ref, plan_host_gpu_fit *out,
                          st_err *err)
{
    memset(out, 0, sizeof *out);
    plan_dev_fit d = plan_dev_fit_run(b, 1, err);
    if (!d.ok)
        return err->code ? err->code : ST_EINVAL;
    if (b->nmem < 1 || !(b->mem[0].triad_bps > 0))
        return ST_RAISE(err, ST_EINVAL, "bench gpu: no memory bandwidth was measured");
    double peak = ref ? ref->peak_flops : d.gemm.asymptote_flops;
    /* at most 1: an asymptote above the datasheet's peak is the fit's
     * extrapolation, and the peak bounds it */
    double eff = fmin(1.0, d.gemm.asymptote_flops / peak);
    double hbm = b->mem[0].triad_bps;
    /* the fused attention per direction: its products' rate, and its time
     * per score and per score row beyond them (plan_bench_flash_fit) */
    double fe[2] = {0, 0}, fs[2] = {0, 0}, fr[2] = {0, 0};
    int flash_ok = 1;
    for (int dir = 0; dir < 2; dir++)
        if (plan_bench_flash_fit(b, peak, dir, &fe[dir], &fs[dir], &fr[dir]) != ST_OK)
            flash_ok = 0;
    double flash_eff = flash_ok ? plan__attn_fwd_bwd_eff(fe[0], fe[1]) : 1.0;
    /* hbm_eff: measured, not fitted. The executor's norm and residual
     * kernels (bench: two norms and two residual adds forward, the two norms'
     * gradients backward, per token x hidden element) against the bytes the
     * planner counts for them (its 11 forward and 22 backward passes, 2 B
     * each in bf16), over the copy's bandwidth: the fraction of it that
     * makes the planner's elementwise time the executor's. At most 1: where
     * the planner counts more bytes than these kernels move, the kernels at
     * the copy's rate are what it can say. */
    double norm_eff = isfinite(d.norm_s) && d.norm_s > 0
                          ? 0.5 * PLAN_NORM_BYTES_PER_ELEM / (d.norm_s * hbm)
                          : NAN;
    double hbm_eff = isfinite(norm_eff) ? fmin(1.0, norm_eff) : 1.0;
    if (isfinite(norm_eff))
        snprintf(out->hbm_how, sizeof out->hbm_how, "the norm and residual kernels (%.2f of "
                 "the copy at the planner's byte count%s)", norm_eff,
                 norm_eff > 1 ? ", capped at 1" : "");
    else
        snprintf(out->hbm_how, sizeof out->hbm_how, "no elementwise measurement: 1");
    plan_gpu *g = &out->g;
    g->mem_bytes = b->mem_bytes;
    g->peak_flops = peak;
    g->hbm_bps = hbm;
    g->gemm_eff_max = eff;
    g->gemm_dim_half = d.gemm.dim_half;
    g->misaligned_factor = ref ? ref->misaligned_factor : 1.0;
    g->gemm_align_bytes = ref ? ref->gemm_align_bytes : 0;
    g->align_partial_factor = ref ? ref->align_partial_factor : 0;
    g->flash_eff = flash_eff;
    if (flash_ok) {
        g->flash_measured = 1;
        g->flash2_fwd_eff = fe[0];
        g->flash2_bwd_eff = fe[1];
        g->flash_score_fwd_s = fs[0];
        g->flash_score_bwd_s = fs[1];
        g->flash_row_fwd_s = fr[0];
        g->flash_row_bwd_s = fr[1];
    }
    g->act_fwd_s = isfinite(d.act_fwd_s) ? d.act_fwd_s : 0;
    g->act_bwd_s = isfinite(d.act_bwd_s) ? d.act_bwd_s : 0;
    g->glu_fwd_s = isfinite(d.glu_fwd_s) ? d.glu_fwd_s : 0;
    g->glu_bwd_s = isfinite(d.glu_bwd_s) ? d.glu_bwd_s : 0;
    g->opt_param_s = isfinite(d.opt_param_s) ? d.opt_param_s : 0;
    /* The plain attention core is not bounded by one measured rate on a
     * GPU: its time grows with the sequence faster than its FLOPs (the
     * scores' bytes and the products' short side, the head), which the
     * planner's terms (the batched products on the GEMM model, the score
     * bytes on hbm_eff) follow and one rate cannot (bench: 63 TFLOP/s
     * forward at 1 K against 89 at 2 K, heads of 128). The rates stay in
     * the bench record; what the terms miss is a time per score row
     * (plan_bench_attn_rows). */
    g->hbm_eff = hbm_eff;
    double row_f = 0, row_b = 0, elem_f = 0, elem_b = 0;
    if (plan_bench_attn_rows(b, g, 0, &row_f, &elem_f) != ST_OK)
        row_f = elem_f = 0;
    if (plan_bench_attn_rows(b, g, 1, &row_b, &elem_b) != ST_OK)
        row_b = elem_b = 0;
    g->attn_row_fwd_s = row_f;
    g->attn_row_bwd_s = row_b;
    g->attn_elem_fwd_s = elem_f;
    g->attn_elem_bwd_s = elem_b;
    out->d = d;
    return ST_OK;
}

int plan_bench_busy(const plan_bench_cpu *b)
{
    return b->spread_median > PLAN_BENCH_SPREAD_BUSY ||
           (b->load_start > 0 && b->cores > 0 && b->load_start > 0.5 * b->cores);
}
