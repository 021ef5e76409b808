/*
 * cli_out.c: the plan command's human output: the resolved model and
 * cluster, the ranked plans in one table, why the winner wins, and the
 * rejected layouts counted by reason.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "planner/plan_framework.h"

#define GIB 1073741824.0

void cli_print_model(FILE *f, const plan_model *m)
{
    char p[32];
    fprintf(f, "model:   %s, %s parameters (%lld exact): %lld layers, hidden %lld, %lld heads",
            m->name, units_fmt_count((double)m->params, p, sizeof p), (long long)m->params,
            (long long)m->layers, (long long)m->hidden, (long long)m->heads);
    if (m->kv_heads != m->heads)
        fprintf(f, " (%lld kv)", (long long)m->kv_heads);
    fprintf(f, ", ffn %lld, seq %lld, vocab %lld, %s\n", (long long)m->ffn, (long long)m->seq,
            (long long)m->vocab, m->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt");
    if (m->source[0])
        fprintf(f, "         shape: %s\n", m->source);
}

void cli_print_cluster(FILE *f, const plan_cluster *c)
{
    const plan_instance *in = c->inst;
    fprintf(f, "cluster: %d x %s = %d x %s (%.0f GiB each), %s %.0f GB/s per GPU, network %.0f Gbps per node",
            c->nodes, in->name, c->gpus, c->gpu->name, c->gpu->mem_bytes / GIB,
            in->nvswitch ? "NVSwitch" : "NVLink/PCIe", in->nvlink_bps / 1e9, in->net_bps * 8 / 1e9);
    if (in->price_per_hour > 0)
        fprintf(f, ", $%.2f/h", in->price_per_hour * c->nodes);
    fprintf(f, "\n");
}

static const char *sched_label(const plan_layout *l, char *buf, size_t n)
{
    if (l->schedule == PLAN_SCHED_VIRTUAL)
        snprintf(buf, n, "virtual/%d", l->virtual_stages);
    else
        snprintf(buf, n, "%s", plan_schedule_name(l->schedule));
    return buf;
}

static const char *recomp_label(const plan_layout *l, char *buf, size_t n)
{
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_group > 1)
        snprintf(buf, n, "full/%d", l->recompute_group);
    else
        snprintf(buf, n, "%s", plan_recompute_name(l->recompute));
    if (l->offload_activations)
        strncat(buf, "+off", n - strlen(buf) - 1);
    return buf;
}

static void print_table(FILE *f, const plan_result *r, const cli_sim_col *sim)
{
    fprintf(f,
            "\n  # TP PP  DP mbs   mb act sched        recomp     sharding   SP place  mem GiB   "
            "  step s  compute     TP     PP  DPexp bubble    opt   tokens/s   MFU      $/h  $/1M tok%s\n",
            sim && sim->n ? "    sim s" : "");
    for (int i = 0; i < r->ntop; i++) {
        const plan_layout *l = &r->top[i].layout;
        const plan_estimate *e = &r->top[i].est;
        const plan_time *t = &e->time;
        char s[24], rc[24];
        fprintf(f,
                "%3d %2d %2d %3d %3d %4d %3d %-12s %-10s %-10s %2s %-5s %4.1f/%-4.0f %8.3f %8.3f "
                "%6.3f %6.3f %6.3f %6.3f %6.3f %10.0f %5.1f%% %8.2f %9.3f",
                i + 1, l->tp, l->pp, l->dp, l->micro_batch, l->microbatches, l->active_microbatches,
                sched_label(l, s, sizeof s), recomp_label(l, rc, sizeof rc),
                plan_sharding_name(l->sharding), l->sequence_parallel ? "on" : "-", l->placement,
                plan_mem_need_bytes(&e->mem) / GIB, e->capacity_bytes / GIB, t->step_s, t->compute_s,
                t->tp_comm_s + t->cp_comm_s, t->pp_comm_s, t->dp_exposed_s, t->bubble_s,
                t->optimizer_s, e->tokens_per_s, 100 * e->mfu, e->cost_per_hour,
                e->cost_per_mtokens);
        if (sim && sim->n > i) {
            double d = 100.0 * (sim->step_s[i] - t->step_s) / t->step_s;
            fprintf(f, " %8.3f%s", sim->step_s[i], fabs(d) > sim->threshold_pct ? " !" : "");
        }
        fprintf(f, "\n");
    }
}

/* The time term that differs most between the two plans. */
static void why(FILE *f, const plan_result *r)
{
    if (r->ntop < 2) {
        fprintf(f, "\nWhy #1: it is the only layout that fits.\n");
        return;
    }
    const plan_time *a = &r->top[0].est.time, *b = &r->top[1].est.time;
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
    const plan_layout *la = &r->top[0].layout, *lb = &r->top[1].layout;
    double gain = b->step_s > 0 ? 100.0 * (b->step_s - a->step_s) / b->step_s : 0.0;
    if (gain < 0.05) {
        fprintf(f,
                "\nWhy #1: #1 and #2 take the same time (%.3f s); #1 ranks first because it needs "
                "less memory (%.1f GiB against %.1f GiB) or fewer model-parallel ranks.\n",
                a->step_s, r->top[0].est.mem.total_bytes / GIB, r->top[1].est.mem.total_bytes / GIB);
        return;
    }
    fprintf(f,
            "\nWhy #1: its step is %.1f%% shorter than #2's (%.3f s vs %.3f s), mostly because its "
            "%s takes %.3f s against %.3f s",
            gain, a->step_s, b->step_s, terms[best].name, terms[best].a, terms[best].b);
    if (la->tp != lb->tp || la->pp != lb->pp)
        fprintf(f, " (TP %d x PP %d against TP %d x PP %d)", la->tp, la->pp, lb->tp, lb->pp);
    else if (la->recompute != lb->recompute)
        fprintf(f, " (recompute %s against %s)", plan_recompute_name(la->recompute),
                plan_recompute_name(lb->recompute));
    else if (la->micro_batch != lb->micro_batch)
        fprintf(f, " (micro-batch %d against %d)", la->micro_batch, lb->micro_batch);
    fprintf(f, ".\n");
}

static void print_rejected(FILE *f, const plan_result *r)
{
    int any = 0;
    for (int i = 1; i < PLAN_REJ__COUNT; i++)
        any |= r->rejected[i] > 0;
    if (!any)
        return;
    fprintf(f, "Rejected:");
    const char *sep = " ";
    for (int i = 1; i < PLAN_REJ__COUNT; i++) {
        if (!r->rejected[i])
            continue;
        fprintf(f, "%s%lld %s", sep, (long long)r->rejected[i], plan_reject_name((plan_reject)i));
        if (i == PLAN_REJ_OOM && r->min_oom_excess_bytes > 0) {
            const plan_layout *l = &r->closest_oom.layout;
            char miss[32];
            units_fmt_bytes(r->min_oom_excess_bytes, miss, sizeof miss);
            fprintf(f, " (closest: tp %d pp %d dp %d mbs %d, %s recompute, %s sharding missed by %s)",
                    l->tp, l->pp, l->dp, l->micro_batch, plan_recompute_name(l->recompute),
                    plan_sharding_name(l->sharding), miss);
        }
        sep = ", ";
    }
    fprintf(f, ".\n");
}

void cli_print_stack(FILE *f, int framework, const plan_cluster *c)
{
    const plan_framework *fw = plan_framework_get(framework);
    fprintf(f, "stack:   %s (--framework %s); ", fw->label, fw->key);
    if (c->eff_fit)
        fprintf(f, "efficiencies fitted for %s on %s GPUs (%d runs from %d sources, mean |error| "
                   "%.1f%%)\n",
                c->eff_fit->framework, c->eff_fit->silicon, c->eff_fit->rows, c->eff_fit->sources,
                c->eff_fit->mean_abs_err_pct);
    else
        fprintf(f, "efficiencies: the %s's own (no %s runs on this chip fitted)\n", c->gpu->name,
                plan_fw_family_key(fw->family));
}

static void print_header(FILE *f, const plan_model *m, const plan_cluster *c, const plan_result *r)
{
    cli_print_model(f, m);
    cli_print_cluster(f, c);
    if (r->ntop > 0)
        cli_print_stack(f, r->top[0].layout.framework, c);
    char tok[32];
    fprintf(f, "batch:   %lld sequences per step (%s tokens)%s\n", (long long)r->global_batch,
            units_fmt_count((double)r->global_batch * (double)m->seq, tok, sizeof tok),
            r->batch_defaulted ? "; default from the GPT-3 batch schedule (Brown et al. 2020), "
                                 "set with --global-batch"
                               : "");
    fprintf(f, "search:  %lld layouts in %.0f ms, %lld fit\n", (long long)r->evaluated,
            r->search_s * 1e3, (long long)r->feasible);
}

void cli_print_result(FILE *f, const cli_plan_opts *o, const plan_model *m,
                      const plan_cluster *c, const plan_result *r, const cli_sim_col *sim)
{
    (void)o;
    print_header(f, m, c, r);
    print_table(f, r, sim);
    fprintf(f, "(mem: worst stage needed/available (nvidia-smi shows the allocator's reserve on top); times per step in seconds; DPexp: gradient sync "
               "not hidden behind backward%s)\n",
            sim && sim->n ? "; sim s: the step played out by the simulator, ! where it differs "
                            "from the planner's by more than the --sim-threshold" : "");
    if (sim && sim->n) {
        int flagged = 0;
        for (int i = 0; i < sim->n; i++)
            flagged += fabs(sim->step_s[i] - r->top[i].est.time.step_s) >
                       sim->threshold_pct / 100.0 * r->top[i].est.time.step_s;
        if (sim->reranked)
            fprintf(f, "Ranked by the simulated step, which reorders the planner's ranking.\n");
        if (flagged)
            fprintf(f, "%d plan%s: simulation and planner differ by more than %.0f%%.\n", flagged,
                    flagged == 1 ? "" : "s", sim->threshold_pct);
    }
    why(f, r);
    print_rejected(f, r);
}

void cli_print_infeasible(FILE *f, const cli_plan_opts *o, const plan_model *m,
                          const plan_cluster *c, const plan_result *r, int min_nodes)
{
    (void)o;
    print_header(f, m, c, r);
    fprintf(f, "\nNo layout fits: %lld layouts looked at, none feasible.\n", (long long)r->evaluated);
    print_rejected(f, r);
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

void cli_print_terms(FILE *f, const plan_terms *t)
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
        fprintf(f, "  %-24s %12s  = %s", x->name, val, x->formula);
        if (x->source && x->source[0])
            fprintf(f, "  [%s]", x->source);
        fprintf(f, "\n");
    }
}
