/*
 * plan_summary.c: the sentences that explain a search's answer (see
 * plan_summary.h). Memory is in GiB (2^30 bytes), times in seconds, as the
 * plan table shows them.
 */
#include "planner/plan_summary.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/units.h"

#define GIB 1073741824.0
#define SUMMARY_SAME_TIME_PCT 0.05   /* steps closer than this read as the same time */
#define SUMMARY_SAME_ESTIMATE 5e-4   /* relative: planner estimates this close tie */
#define SUMMARY_SAME_MEM_GIB 0.05    /* memory closer than this is "a little less" */

/* Append printf text to buf (n bytes) at *used; truncated text stays cut. */
static void add(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
    if (*used >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, n - *used, fmt, ap);
    va_end(ap);
    if (k > 0)
        *used = *used + (size_t)k < n ? *used + (size_t)k : n - 1;
}

double plan_summary_ranked_step_s(const plan_result *r, const double *sim_step_s, int nsim, int i)
{
    return sim_step_s && nsim > i && sim_step_s[i] > 0 ? sim_step_s[i] : r->top[i].est.time.step_s;
}

/* Why two plans with the same step rank as they do. */
static void why_tie(const plan_candidate *A, const plan_candidate *B, int simulated, double ma,
                    double mb, char *buf, size_t n, size_t *used)
{
    const plan_time *a = &A->est.time, *b = &B->est.time;
    int ra = A->layout.tp * A->layout.pp, rb = B->layout.tp * B->layout.pp;
    if (simulated && a->step_s < b->step_s * (1 - SUMMARY_SAME_ESTIMATE))
        add(buf, n, used, "the planner's estimate of its step is shorter (%.3f s against %.3f s)",
            a->step_s, b->step_s);
    else if (mb - ma >= SUMMARY_SAME_MEM_GIB)
        add(buf, n, used, "it needs less memory (%.1f GiB against %.1f GiB)", ma, mb);
    else if (mb > ma)
        add(buf, n, used, "it needs a little less memory (%.0f MiB less, of %.1f GiB)",
            (mb - ma) * 1024, mb);
    else if (ra < rb)
        add(buf, n, used, "it uses fewer model-parallel ranks (TP x PP %d against %d)", ra, rb);
    else
        add(buf, n, used, "it was found first: the two are equivalent");
}

/* The time term by which #1 gains most on #2. */
static void why_term(const plan_time *a, const plan_time *b, int simulated, char *buf, size_t n,
                     size_t *used)
{
    struct { const char *name; double a, b; } terms[] = {
        {"compute", a->compute_s, b->compute_s},
        {"TP communication", a->tp_comm_s + a->cp_comm_s, b->tp_comm_s + b->cp_comm_s},
        {"pipeline communication", a->pp_comm_s, b->pp_comm_s},
        {"exposed gradient sync", a->dp_exposed_s, b->dp_exposed_s},
        {"pipeline bubble", a->bubble_s, b->bubble_s},
        {"optimizer step", a->optimizer_s, b->optimizer_s},
    };
    int best = 0;
    for (int i = 1; i < (int)(sizeof terms / sizeof terms[0]); i++)
        if (terms[i].b - terms[i].a > terms[best].b - terms[best].a)
            best = i;
    add(buf, n, used, ", mostly because%s its %s takes %.3f s against %.3f s",
        simulated ? ", by the planner's terms," : "", terms[best].name, terms[best].a,
        terms[best].b);
}

void plan_summary_why(const plan_result *r, const double *sim_step_s, int nsim,
                      plan_objective obj, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    if (r->ntop < 2) {
        add(buf, n, &used, "\nWhy #1: it is the only layout that fits.\n");
        return;
    }
    const plan_candidate *A = &r->top[0], *B = &r->top[1];
    const plan_time *a = &A->est.time, *b = &B->est.time;
    const plan_layout *la = &A->layout, *lb = &B->layout;
    double ma = plan_mem_need_bytes(&A->est.mem) / GIB, mb = plan_mem_need_bytes(&B->est.mem) / GIB;
    if (obj == PLAN_OBJ_MEMORY) {
        add(buf, n, &used, "\nWhy #1: it needs the least memory per GPU (%.2f GiB against #2's "
                           "%.2f GiB; --objective memory).\n", ma, mb);
        return;
    }
    int simulated = sim_step_s && nsim >= 2;
    double ta = simulated ? sim_step_s[0] : a->step_s, tb = simulated ? sim_step_s[1] : b->step_s;
    const char *step = simulated ? "simulated step" : "step";
    double gain = tb > 0 ? 100.0 * (tb - ta) / tb : 0.0;
    if (gain < SUMMARY_SAME_TIME_PCT) {
        add(buf, n, &used, "\nWhy #1: #1 and #2 take the same time (%s %.3f s against %.3f s); "
                           "#1 ranks first because ", step, ta, tb);
        why_tie(A, B, simulated, ma, mb, buf, n, &used);
        add(buf, n, &used, ".\n");
        return;
    }
    char diff[96] = "";
    if (la->tp != lb->tp || la->pp != lb->pp)
        snprintf(diff, sizeof diff, "TP %d x PP %d against TP %d x PP %d: ", la->tp, la->pp,
                 lb->tp, lb->pp);
    else if (la->recompute != lb->recompute)
        snprintf(diff, sizeof diff, "recompute %s against %s: ", plan_recompute_name(la->recompute),
                 plan_recompute_name(lb->recompute));
    else if (la->micro_batch != lb->micro_batch)
        snprintf(diff, sizeof diff, "micro-batch %d against %d: ", la->micro_batch,
                 lb->micro_batch);
    add(buf, n, &used, "\nWhy #1: its %s is %.1f%% shorter than #2's (%s%.3f s against %.3f s)",
        step, gain, diff, ta, tb);
    if (simulated && !(a->step_s < b->step_s))
        add(buf, n, &used, "; the planner's estimates have them the other way round (%.3f s "
                           "against %.3f s): the difference is in how the step plays out "
                           "(overlap of sends, bubbles, link contention), which only the "
                           "simulator follows", a->step_s, b->step_s);
    else
        why_term(a, b, simulated, buf, n, &used);
    add(buf, n, &used, ".\n");
}

void plan_summary_rejected(const plan_result *r, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    int any = 0;
    for (int i = 1; i < PLAN_REJ__COUNT; i++)
        any |= r->rejected[i] > 0;
    if (!any)
        return;
    add(buf, n, &used, "Rejected:");
    const char *sep = " ";
    for (int i = 1; i < PLAN_REJ__COUNT; i++) {
        if (!r->rejected[i])
            continue;
        add(buf, n, &used, "%s%lld %s", sep, (long long)r->rejected[i],
            plan_reject_name((plan_reject)i));
        if (i == PLAN_REJ_OOM && r->min_oom_excess_bytes > 0) {
            const plan_layout *l = &r->closest_oom.layout;
            char miss[32];
            units_fmt_bytes(r->min_oom_excess_bytes, miss, sizeof miss);
            add(buf, n, &used, " (closest: tp %d pp %d dp %d mbs %d, %s recompute, %s sharding "
                               "missed by %s)", l->tp, l->pp, l->dp, l->micro_batch,
                plan_recompute_name(l->recompute), plan_sharding_name(l->sharding), miss);
        }
        sep = ", ";
    }
    add(buf, n, &used, ".\n");
}

int plan_summary_band_overlap(const plan_result *r, const double *sim_step_s, int nsim,
                              double band_pct)
{
    if (r->ntop < 1)
        return 0;
    double b = band_pct / 100.0, t1 = plan_summary_ranked_step_s(r, sim_step_s, nsim, 0);
    int k = 1;
    while (k < r->ntop) {
        double tk = plan_summary_ranked_step_s(r, sim_step_s, nsim, k);
        if (!(fabs(tk - t1) <= b * (t1 + tk)))
            break;
        k++;
    }
    return k;
}

int plan_summary_train(const plan_result *r, double sim_step_s, double tokens, double *time_s,
                       double *cost, int *simulated)
{
    *time_s = *cost = 0;
    *simulated = 0;
    if (r->ntop < 1)
        return 0;
    const plan_estimate *e = &r->top[0].est;
    *simulated = sim_step_s > 0;
    double step = *simulated ? sim_step_s : e->time.step_s;
    if (!(step > 0 && e->tokens_per_step > 0))
        return 0;
    *time_s = tokens / e->tokens_per_step * step;
    *cost = e->cost_per_hour > 0 ? *time_s / 3600.0 * e->cost_per_hour : 0;
    return 1;
}
