/*
 * rpt_plan_text.c: the lines that describe a search (rpt_plan.h): the
 * resolved model, cluster and stack, the batch and the search's counts, a
 * layout on one line, why nothing fits, and --explain's terms.
 */
#include "reports/rpt_plan.h"

#include <stdio.h>
#include <string.h>

#include "common/units.h"
#include "planner/plan_framework.h"
#include "planner/plan_summary.h"
#include "reports/rpt_table.h"

#define GIB 1073741824.0 /* 2^30: memory is said in GiB */

void rpt_plan_model(FILE *f, const plan_model *m)
{
    char p[32];
    fprintf(f, "model:   %s, %s parameters (%lld exact): %lld layers, hidden %lld, %lld heads",
            m->name, units_fmt_count((double)m->params, p, sizeof p), (long long)m->params,
            (long long)m->layers, (long long)m->hidden, (long long)m->heads);
    if (m->kv_heads != m->heads)
        fprintf(f, " (%lld kv)", (long long)m->kv_heads);
    if (plan_model_attn_width(m) != m->hidden)
        fprintf(f, " of %lld", (long long)plan_model_head_dim(m));
    fprintf(f, ", ffn %lld, seq %lld, vocab %lld, %s", (long long)m->ffn, (long long)m->seq,
            (long long)m->vocab, m->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt");
    if (plan_model_local_layers(m) > 0)
        fprintf(f, ", sliding window %lld on %lld of %lld layers", (long long)m->sliding_window,
                (long long)plan_model_local_layers(m), (long long)m->layers);
    fputc('\n', f);
    if (m->source[0])
        fprintf(f, "         shape: %s\n", m->source);
}

void rpt_plan_cluster(FILE *f, const plan_cluster *c, const char *price_list)
{
    const plan_instance *in = c->inst;
    fprintf(f, "cluster: %d x %s = %d x %s (%.0f GiB each), %s %.0f GB/s per GPU, network %.0f Gbps per node",
            c->nodes, in->name, c->gpus, c->gpu->name, c->gpu->mem_bytes / GIB,
            in->gpu_link[0] ? in->gpu_link : in->nvswitch ? "NVSwitch" : "NVLink/PCIe",
            in->nvlink_bps / 1e9, in->net_bps * 8 / 1e9);
    if (in->price_per_hour > 0)
        fprintf(f, ", $%.2f/h", in->price_per_hour * c->nodes);
    else
        fprintf(f, ", no price");
    fprintf(f, "\nprices:  %s\n", price_list);
}

void rpt_plan_stack(FILE *f, int framework, const plan_cluster *c)
{
    const plan_framework *fw = plan_framework_get(framework);
    fprintf(f, "stack:   %s (--framework %s); ", fw->label, fw->key);
    if (c->eff_fit)
        fprintf(f, "efficiencies fitted for %s on %s GPUs (%d runs from %d sources, mean |error| "
                   "%.1f%%)\n",
                c->eff_fit->framework, c->eff_fit->silicon, c->eff_fit->rows, c->eff_fit->sources,
                c->eff_fit->mean_abs_err_pct);
    else if (strncmp(c->gpu->source, "fitted", 6) == 0)
        fprintf(f, "efficiencies: the %s chip's, %s (no %s runs on this chip fitted)\n",
                c->gpu->silicon[0] ? c->gpu->silicon : c->gpu->name, c->gpu->source,
                plan_fw_family_key(fw->family));
    else
        fprintf(f, "efficiencies: the %s's own (no %s runs on this chip fitted)\n", c->gpu->name,
                plan_fw_family_key(fw->family));
}

void rpt_plan_layout(FILE *f, const plan_layout *l)
{
    char act[16];
    fprintf(f, "layout:  tp %d, pp %d, dp %d%s, micro-batch %d x %d microbatches, active %s, %s",
            l->tp, l->pp, l->dp, l->cp > 1 ? " (cp)" : "", l->micro_batch, l->microbatches,
            plan_framework_act_label(l, act, sizeof act), plan_framework_schedule_name(l));
    if (l->schedule == PLAN_SCHED_VIRTUAL)
        fprintf(f, " x %d virtual stages", l->virtual_stages);
    fprintf(f, ", recompute %s, sharding %s, placement %s\n", plan_recompute_name(l->recompute),
            plan_sharding_name(l->sharding), l->placement);
}

/* The head's lines, unwrapped. */
static void head_lines(FILE *f, const plan_model *m, const plan_cluster *c, const plan_result *r,
                       const rpt_plan_opts *o)
{
    rpt_plan_model(f, m);
    rpt_plan_cluster(f, c, o->price_list);
    if (r->ntop > 0)
        rpt_plan_stack(f, r->top[0].layout.framework, c);
    char tok[32];
    fprintf(f, "batch:   %lld sequences per step (%s tokens)%s\n", (long long)r->global_batch,
            units_fmt_count((double)r->global_batch * (double)m->seq, tok, sizeof tok),
            r->batch_defaulted ? "; default from the GPT-3 batch schedule (Brown et al. 2020), "
                                 "set with --global-batch"
                               : "");
    if (!r->batch_defaulted && o->batch_source)
        fprintf(f, "         %s\n", o->batch_source);
    fprintf(f, "search:  %lld layouts in %.0f ms, %lld fit\n", (long long)r->evaluated,
            r->search_s * 1e3, (long long)r->feasible);
}

void rpt_plan_head(FILE *f, const plan_model *m, const plan_cluster *c, const plan_result *r,
                   const rpt_plan_opts *o)
{
    rpt_term_capture_buf hb;
    FILE *h = rpt_term_capture(&hb);
    head_lines(h ? h : f, m, c, r, o);
    rpt_term_capture_wrap(&hb, f, "", "         ");
}

void rpt_plan_infeasible(FILE *f, const plan_model *m, const plan_cluster *c,
                         const plan_result *r, int min_nodes, const rpt_plan_opts *o)
{
    rpt_plan_head(f, m, c, r, o);
    fprintf(f, "\nNo layout fits: %lld layouts looked at, none feasible.\n", (long long)r->evaluated);
    char text[2048];
    plan_summary_rejected(r, text, sizeof text);
    fputs(text, f);
    if (r->min_oom_excess_bytes > 0) {
        const plan_estimate *e = &r->closest_oom.est;
        fprintf(f, "The closest layout needs %.1f GiB per GPU on stage %d, %.1f GiB more than the "
                   "%.1f GiB a %s has.\n",
                plan_mem_need_bytes(&e->mem) / GIB, e->worst_stage, e->oom_excess_bytes / GIB,
                e->capacity_bytes / GIB, c->gpu->name);
    }
    if (min_nodes > 0)
        fprintf(f, "It would need at least %d x %s (with the same fixed knobs).\n", min_nodes,
                c->inst->name);
    else
        fprintf(f, "No count of %s up to 16384 fits it with the fixed knobs.\n", c->inst->name);
}

void rpt_plan_terms(FILE *f, const plan_terms *t)
{
    fprintf(f, "\nExplain (plan #1):\n");
    const char *group = "";
    for (int i = 0; i < t->n; i++) {
        const plan_term *x = &t->v[i];
        if (strcmp(group, x->group)) {
            group = x->group;
            fprintf(f, "  [%s]\n", group);
        }
        char val[40];
        if (!strcmp(x->unit, "bytes"))
            units_fmt_bytes(x->value, val, sizeof val);
        else if (!strcmp(x->unit, "s"))
            units_fmt_seconds(x->value, val, sizeof val);
        else if (!strcmp(x->unit, "flops"))
            snprintf(val, sizeof val, "%.3e", x->value);
        else
            snprintf(val, sizeof val, "%.4g", x->value);
        /* one line when it fits; else the value, then the formula and
         * its source wrapped under it */
        char rest[1600];
        snprintf(rest, sizeof rest, "= %s%s%s%s", x->formula,
                 x->source && x->source[0] ? "  [" : "", x->source ? x->source : "",
                 x->source && x->source[0] ? "]" : "");
        int width = rpt_term_width();
        if (!width || 2 + 24 + 1 + 12 + 2 + (int)strlen(rest) <= width) {
            fprintf(f, "  %-24s %12s  %s\n", x->name, val, rest);
        } else {
            fprintf(f, "  %-24s %12s\n", x->name, val);
            rpt_term_wrap(f, rest, "      ", "        ");
        }
    }
}

void rpt_plan_uncertainty(FILE *f, double step_s, double band_pct, const char *basis)
{
    char text[700];
    snprintf(text, sizeof text, "error band: the step %.3f s \u00b1%.0f %%: %s", step_s, band_pct,
             basis);
    fprintf(f, "  [uncertainty]\n");
    rpt_term_wrap(f, text, "  ", "      ");
}
