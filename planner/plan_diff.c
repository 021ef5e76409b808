/*
 * plan_diff.c: two plans compared term by term, and the paragraph on what
 * makes the difference (plan_diff.h).
 *
 * The terms are the planner's own (plan_mem, plan_time) so the rows add up
 * as the estimate does; the paragraph names the largest time difference
 * among the parts of the step and judges it against the two error bands,
 * the evidence behind the model.
 */
#include "planner/plan_diff.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "planner/plan_framework.h"

#define GIB_BYTES 1073741824.0  /* 2^30: memory is said in GiB */

int plan_diff_mem_terms(const plan_mem *a, const plan_mem *b, plan_diff_term *t)
{
    const plan_diff_term v[PLAN_DIFF_MEM_TERMS] = {
        {"weights", a->weights_bytes, b->weights_bytes},
        {"gradients", a->grads_bytes, b->grads_bytes},
        {"optimizer states", a->optimizer_bytes, b->optimizer_bytes},
        {"activations", a->activations_bytes, b->activations_bytes},
        {"recompute work", a->recompute_bytes, b->recompute_bytes},
        {"logits", a->logits_bytes, b->logits_bytes},
        {"comm buffers", a->comm_buffers_bytes, b->comm_buffers_bytes},
        {"CUDA context", a->context_bytes, b->context_bytes},
        {"needed", plan_mem_need_bytes(a), plan_mem_need_bytes(b)},
        {"allocator reserve", a->allocator_bytes, b->allocator_bytes},
    };
    memcpy(t, v, sizeof v);
    return PLAN_DIFF_MEM_TERMS;
}

int plan_diff_time_terms(const plan_time *a, const plan_time *b, plan_diff_term *t)
{
    const plan_diff_term v[PLAN_DIFF_TIME_TERMS] = {
        {"compute", a->compute_s, b->compute_s},
        {"TP communication", a->tp_comm_s + a->cp_comm_s, b->tp_comm_s + b->cp_comm_s},
        {"pipeline sends", a->pp_comm_s, b->pp_comm_s},
        {"exposed gradient sync", a->dp_exposed_s, b->dp_exposed_s},
        {"pipeline bubble", a->bubble_s, b->bubble_s},
        {"optimizer step", a->optimizer_s, b->optimizer_s},
        {"step", a->step_s, b->step_s},
    };
    memcpy(t, v, sizeof v);
    return PLAN_DIFF_TIME_TERMS;
}

void plan_diff_knobs(const plan_layout *a, const plan_layout *b, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = '\0';
#define DIFF_INT(name, f)                                                                       \
    if (a->f != b->f && u < n)                                                                  \
        u += (size_t)snprintf(buf + u, n - u, "%s" name " %d vs %d", u ? ", " : "", a->f, b->f);
    DIFF_INT("tp", tp)
    DIFF_INT("pp", pp)
    DIFF_INT("dp", dp)
    DIFF_INT("cp", cp)
    DIFF_INT("micro-batch", micro_batch)
    DIFF_INT("microbatches", microbatches)
    DIFF_INT("virtual stages", virtual_stages)
#undef DIFF_INT
    char sa[24], sb[24];
    if (a->schedule != b->schedule && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%sschedule %s vs %s", u ? ", " : "",
                              plan_framework_sched_label(a, sa, sizeof sa),
                              plan_framework_sched_label(b, sb, sizeof sb));
    if (a->recompute != b->recompute && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%srecompute %s vs %s", u ? ", " : "",
                              plan_recompute_name(a->recompute), plan_recompute_name(b->recompute));
    if (a->sharding != b->sharding && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%ssharding %s vs %s", u ? ", " : "",
                              plan_sharding_name(a->sharding), plan_sharding_name(b->sharding));
    if (a->sequence_parallel != b->sequence_parallel && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%ssequence parallel %s vs %s", u ? ", " : "",
                              a->sequence_parallel ? "on" : "off",
                              b->sequence_parallel ? "on" : "off");
    if (a->framework != b->framework && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%sstack %s vs %s", u ? ", " : "",
                              plan_framework_get(a->framework)->key,
                              plan_framework_get(b->framework)->key);
    if (a->precision != b->precision && u < n)
        snprintf(buf + u, n - u, "%sprecision %s vs %s", u ? ", " : "",
                 plan_precision_name(a->precision), plan_precision_name(b->precision));
}

/* printf at text + *u, cut to n; *u stays at most n - 1. */
__attribute__((format(printf, 4, 5)))
static void append(char *text, size_t n, size_t *u, const char *fmt, ...)
{
    if (*u + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(text + *u, n - *u, fmt, ap);
    va_end(ap);
    if (k > 0)
        *u = *u + (size_t)k < n ? *u + (size_t)k : n - 1;
}

int plan_diff_within_bands(const plan_diff_side *a, const plan_diff_side *b)
{
    double ta = a->est->time.step_s, tb = b->est->time.step_s;
    double ba = a->band_pct / 100, bb = b->band_pct / 100;
    return fabs(tb - ta) <= ba * ta + bb * tb;
}

void plan_diff_explain(const plan_diff_side *A, const plan_diff_side *B, char *text, size_t n)
{
    if (n == 0)
        return;
    text[0] = '\0';
    plan_diff_term t[PLAN_DIFF_TIME_TERMS];
    int nt = plan_diff_time_terms(&A->est->time, &B->est->time, t);
    int big = 0;
    for (int i = 1; i < nt - 1; i++)
        if (fabs(t[i].b - t[i].a) > fabs(t[big].b - t[big].a))
            big = i;
    double ta = A->est->time.step_s, tb = B->est->time.step_s;
    double pct = ta > 0 ? 100 * (tb - ta) / ta : 0;
    char knobs[400];
    plan_diff_knobs(A->layout, B->layout, knobs, sizeof knobs);
    double ma = plan_mem_need_bytes(&A->est->mem) / GIB_BYTES;
    double mb = plan_mem_need_bytes(&B->est->mem) / GIB_BYTES;
    size_t u = 0;
    append(text, n, &u, "Difference: ");
    if (!knobs[0])
        append(text, n, &u, "the two are the same layout. ");
    else if (fabs(pct) < 0.05)
        append(text, n, &u, "B takes the same time as A (%s). ", knobs);
    else
        append(text, n, &u, "B's step is %.1f%% %s than A's (%.3f s against %.3f s), mostly in "
               "its %s (%+.3f s), where the layouts differ in %s. ", fabs(pct),
               pct > 0 ? "longer" : "shorter", tb, ta, t[big].name, t[big].b - t[big].a, knobs);
    append(text, n, &u, "B needs %.1f GiB per GPU on its fullest stage against A's %.1f GiB%s%s. ",
           mb, ma, B->oom ? " (it does not fit)" : "", A->oom ? " (A does not fit)" : "");
    if (A->band_pct > 0 && B->band_pct > 0 && knobs[0])
        append(text, n, &u, "%s", plan_diff_within_bands(A, B)
                   ? "The steps lie within each other's error bands: by the evidence behind "
                     "the model, neither is known to be faster."
                   : "The difference is larger than the error bands: it is the evidence's, "
                     "not noise.");
}
