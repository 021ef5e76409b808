/*
 * cli_out.c: the plan command's human output: the resolved model and
 * cluster, the ranked plans in one table, why the winner wins, and the
 * rejected layouts counted by reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "data/data.h"
#include "launch/launch.h"
#include "planner/plan_framework.h"
#include "planner/plan_summary.h"

#define GIB 1073741824.0

void cli_print_model(FILE *f, const plan_model *m)
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

void cli_print_cluster(FILE *f, const plan_cluster *c)
{
    const plan_instance *in = c->inst;
    fprintf(f, "cluster: %d x %s = %d x %s (%.0f GiB each), %s %.0f GB/s per GPU, network %.0f Gbps per node",
            c->nodes, in->name, c->gpus, c->gpu->name, c->gpu->mem_bytes / GIB,
            in->nvswitch ? "NVSwitch" : "NVLink/PCIe", in->nvlink_bps / 1e9, in->net_bps * 8 / 1e9);
    if (in->price_per_hour > 0)
        fprintf(f, ", $%.2f/h", in->price_per_hour * c->nodes);
    else
        fprintf(f, ", no price");
    fprintf(f, "\nprices:  %s\n", cli_price_list());
}

const char *cli_columns_key(void)
{
    return "TP, PP, DP: tensor-, pipeline- and data-parallel degrees; mbs: sequences per "
           "microbatch; mb: microbatches per step; act: microbatches in flight per stage, "
           "SMP's active_microbatches (- where the stack has no such knob); sched: the "
           "pipeline schedule by its stack's name (SMP's simple and interleaved are GPipe and "
           "1F1B; elsewhere 1f1b, and interleaved/v is 1F1B over v virtual stages); recomp: "
           "activation recompute, none, sel (selective: the attention core only, Korthikanti "
           "et al. 2022) or full (every layer; full/k every k layers; +off: checkpoints "
           "offloaded to host); SP: sequence parallelism (SMP: optimize \"memory\")";
}

const char *cli_recomp_label(const plan_layout *l, char *buf, size_t n)
{
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_group > 1)
        snprintf(buf, n, "full/%d", l->recompute_group);
    else if (l->recompute == PLAN_RECOMP_SELECTIVE)
        snprintf(buf, n, "sel");
    else
        snprintf(buf, n, "%s", plan_recompute_name(l->recompute));
    if (l->offload_activations)
        strncat(buf, "+off", n - strlen(buf) - 1);
    return buf;
}

/* A time term: tiny negatives from rounding read as 0. */
static double term(double v)
{
    return fabs(v) < 5e-7 ? 0.0 : v;
}

void cli_plan_cells(rpt_table *t, const plan_layout *l, const plan_estimate *e)
{
    const plan_time *tm = &e->time;
    char buf[32];
    rpt_table_cell(t, "%d", l->tp);
    rpt_table_cell(t, "%d", l->pp);
    rpt_table_cell(t, "%d", l->dp);
    rpt_table_cell(t, "%d", l->micro_batch);
    rpt_table_cell(t, "%d", l->microbatches);
    rpt_table_cell(t, "%s", plan_framework_act_label(l, buf, sizeof buf));
    rpt_table_cell(t, "%s", plan_framework_sched_label(l, buf, sizeof buf));
    rpt_table_cell(t, "%s", cli_recomp_label(l, buf, sizeof buf));
    rpt_table_cell(t, "%s", plan_sharding_name(l->sharding));
    rpt_table_cell(t, "%s", l->sequence_parallel ? "on" : "-");
    rpt_table_cell(t, "%s", l->placement);
    rpt_table_cell(t, "%.1f/%.0f", plan_mem_need_bytes(&e->mem) / GIB, e->capacity_bytes / GIB);
    rpt_table_cell(t, "%.3f", tm->step_s);
    rpt_table_cell(t, "%.3f", term(tm->compute_s));
    rpt_table_cell(t, "%.3f", term(tm->tp_comm_s + tm->cp_comm_s));
    rpt_table_cell(t, "%.3f", term(tm->pp_comm_s));
    rpt_table_cell(t, "%.3f", term(tm->dp_exposed_s));
    rpt_table_cell(t, "%.3f", term(tm->bubble_s));
    rpt_table_cell(t, "%.3f", term(tm->optimizer_s));
}

/* The ranked plans: the layout and the figures that decide, always; the
 * time terms, the knobs at their usual values and prices go first when the
 * terminal is narrow (rpt_table.c). */
static void print_table(FILE *f, const plan_result *r, const cli_sim_col *sim)
{
    int simulated = sim && sim->n;
    rpt_table *t = rpt_table_new();
    if (!t)
        return;
    rpt_table_col(t, "#", 1, 0);
    rpt_table_col(t, "TP", 1, 0);
    rpt_table_col(t, "PP", 1, 0);
    rpt_table_col(t, "DP", 1, 1); /* GPUs / (TP x PP x CP): the first to go */
    rpt_table_col(t, "mbs", 1, 0);
    rpt_table_col(t, "mb", 1, 0);
    rpt_table_col(t, "act", 1, 3);
    rpt_table_col(t, "sched", 0, 0);
    rpt_table_col(t, "recomp", 0, 0);
    rpt_table_col(t, "sharding", 0, 0);
    rpt_table_col(t, "SP", 0, 1);
    rpt_table_col(t, "place", 0, 3);
    rpt_table_col(t, "mem GiB", 1, 0);
    rpt_table_col(t, "step s", 1, 0);
    rpt_table_col(t, "compute", 1, 4);
    rpt_table_col(t, "TP", 1, 4);
    rpt_table_col(t, "PP", 1, 4);
    rpt_table_col(t, "DPexp", 1, 4);
    rpt_table_col(t, "bubble", 1, 4);
    rpt_table_col(t, "opt", 1, 5);
    rpt_table_col(t, "tokens/s", 1, 1);
    rpt_table_col(t, "MFU", 1, 3);
    rpt_table_col(t, "$/h", 1, 5);
    rpt_table_col(t, "$/1M tok", 1, 2);
    if (simulated)
        rpt_table_col(t, "sim s", 1, 0);
    for (int i = 0; i < r->ntop; i++) {
        const plan_estimate *e = &r->top[i].est;
        const plan_time *tm = &e->time;
        rpt_table_row(t);
        rpt_table_cell(t, "%d", i + 1);
        cli_plan_cells(t, &r->top[i].layout, e);
        rpt_table_cell(t, "%.0f", e->tokens_per_s);
        rpt_table_cell(t, "%.1f%%", 100 * e->mfu);
        if (e->cost_per_hour > 0) {
            rpt_table_cell(t, "%.2f", e->cost_per_hour);
            rpt_table_cell(t, "%.3f", e->cost_per_mtokens);
        } else {
            rpt_table_cell(t, "-");
            rpt_table_cell(t, "-");
        }
        if (simulated && sim->n > i) {
            double d = 100.0 * (sim->step_s[i] - tm->step_s) / tm->step_s;
            rpt_table_cell(t, "%.3f%s", sim->step_s[i], fabs(d) > sim->threshold_pct ? " !" : "");
        }
    }
    fputc('\n', f);
    rpt_table_print(f, t, "");
    rpt_table_free(t);
}

int cli_train_of(const cli_plan_opts *o, const plan_result *r, const cli_sim_col *sim,
                 double *time_s, double *cost, int *simulated)
{
    double sim_step_s = sim && sim->n > 0 ? sim->step_s[0] : 0;
    *time_s = *cost = 0;
    *simulated = 0;
    return o->tokens_given &&
           plan_summary_train(r, sim_step_s, o->tokens, time_s, cost, simulated);
}

static void print_train(FILE *f, const cli_plan_opts *o, const plan_result *r,
                        const cli_sim_col *sim)
{
    double t, cost;
    int simulated;
    if (!cli_train_of(o, r, sim, &t, &cost, &simulated))
        return;
    char tok[32], tt[32];
    units_fmt_count(o->tokens, tok, sizeof tok);
    units_fmt_seconds(t, tt, sizeof tt);
    fprintf(f, "Train %s tokens with #1: %s at its %s step of %.3f s", tok, tt,
            simulated ? "simulated" : "predicted",
            simulated ? sim->step_s[0] : r->top[0].est.time.step_s);
    if (cost > 0)
        fprintf(f, ", $%.0f at $%.2f/h (%s).\n", cost, r->top[0].est.cost_per_hour,
                cli_price_list());
    else
        fprintf(f, "; no price for this instance type, so no cost.\n");
}

double cli_band_of(const plan_cluster *c, int fw, char *basis, size_t n)
{
    static data_bands bands;
    static int loaded, failed;
    static char why[300];
    if (!loaded) {
        st_err err = {0};
        loaded = 1;
        failed = data_bands_load(NULL, &bands, &err) != ST_OK;
        if (failed)
            snprintf(why, sizeof why, "no error bands: %.250s", err.msg);
    }
    if (failed) {
        snprintf(basis, n, "%s", why);
        return 0;
    }
    const char *chip = c->gpu->silicon[0] ? c->gpu->silicon : c->gpu->name;
    return data_band_of(&bands, plan_framework_get(fw)->key, chip, basis, n);
}

void cli_launch_plan_of(const cli_plan_opts *o, const plan_model *m, const plan_cluster *c,
                        const plan_result *r, const cli_sim_col *sim, launch_plan *p,
                        char *basis, size_t n)
{
    *p = (launch_plan){.m = m, .c = c, .r = r, .command_line = o->command_line,
                       .tokens = o->tokens, .catalog_files = o->catalog_files,
                       .ncatalogs = o->ncatalogs, .band_basis = basis};
    p->sim_step_s = sim && sim->n > 0 ? sim->step_s[0] : 0;
    basis[0] = '\0';
    if (r->ntop > 0)
        p->band_pct = cli_band_of(c, r->top[0].layout.framework, basis, n);
}

int cli_band_overlap(const plan_result *r, const cli_sim_col *sim, double band_pct)
{
    return plan_summary_band_overlap(r, sim ? sim->step_s : NULL, sim ? sim->n : 0, band_pct);
}

static void print_band(FILE *f, const plan_result *r, const cli_sim_col *sim, int fw,
                       const plan_cluster *c)
{
    char basis[400];
    double b = cli_band_of(c, fw, basis, sizeof basis);
    if (r->ntop < 1)
        return;
    if (!(b > 0)) {
        fprintf(f, "No error band on the steps: %s.\n", basis);
        return;
    }
    double step_s = plan_summary_ranked_step_s(r, sim ? sim->step_s : NULL, sim ? sim->n : 0, 0);
    fprintf(f, "Step of #1: %.3f s \u00b1%.0f %% (%s%s).", step_s, b,
            sim && sim->n ? "simulated; " : "", basis);
    int k = cli_band_overlap(r, sim, b);
    if (k > 1)
        fprintf(f, " #1 to #%d lie within each other's bands: the planner cannot tell which of "
                   "them is fastest; choose among them on memory, cost or simplicity.",
                k);
    else if (r->ntop > 1)
        fprintf(f, " #2 lies outside #1's band.");
    fputc('\n', f);
}

static void print_rejected(FILE *f, const plan_result *r)
{
    char text[2048];
    plan_summary_rejected(r, text, sizeof text);
    fputs(text, f);
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
    else if (strncmp(c->gpu->source, "fitted", 6) == 0)
        fprintf(f, "efficiencies: the %s chip's, %s (no %s runs on this chip fitted)\n",
                c->gpu->silicon[0] ? c->gpu->silicon : c->gpu->name, c->gpu->source,
                plan_fw_family_key(fw->family));
    else
        fprintf(f, "efficiencies: the %s's own (no %s runs on this chip fitted)\n", c->gpu->name,
                plan_fw_family_key(fw->family));
}

static void print_header(FILE *f, const cli_plan_opts *o, const plan_model *m,
                         const plan_cluster *c, const plan_result *r)
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
    if (!r->batch_defaulted && o->batch_source)
        fprintf(f, "         %s\n", o->batch_source);
    fprintf(f, "search:  %lld layouts in %.0f ms, %lld fit\n", (long long)r->evaluated,
            r->search_s * 1e3, (long long)r->feasible);
}

void cli_print_result(FILE *f, const cli_plan_opts *o, const plan_model *m,
                      const plan_cluster *c, const plan_result *r, const cli_sim_col *sim)
{
    rpt_term_capture_buf hb;
    FILE *h = rpt_term_capture(&hb);
    print_header(h ? h : f, o, m, c, r);
    rpt_term_capture_wrap(&hb, f, "", "         ");
    print_table(f, r, sim);
    char key[1400];
    snprintf(key, sizeof key,
             "(%s; mem: worst stage needed/available (nvidia-smi shows the allocator's reserve "
             "on top); times per step in seconds, the second TP and PP their communication; "
             "DPexp: gradient sync not hidden behind backward%s)",
             cli_columns_key(),
             sim && sim->n ? "; sim s: the step played out by the simulator, ! where it differs "
                             "from the planner's by more than the --sim-threshold" : "");
    rpt_term_wrap(f, key, "", " ");
    if (sim && sim->n) {
        int flagged = 0;
        for (int i = 0; i < sim->n; i++)
            flagged += fabs(sim->step_s[i] - r->top[i].est.time.step_s) >
                       sim->threshold_pct / 100.0 * r->top[i].est.time.step_s;
        if (sim->reranked)
            fprintf(f, "Ranked by the simulated step, which reorders the planner's ranking.\n");
        if (sim->extrapolated)
            fprintf(f, "%d plan%s too many microbatches to play out one by one: the simulator "
                       "played out two windows of them and extrapolated the step.\n",
                    sim->extrapolated, sim->extrapolated == 1 ? " has" : "s have");
        if (flagged)
            fprintf(f, "%d plan%s: simulation and planner differ by more than %.0f%%.\n", flagged,
                    flagged == 1 ? "" : "s", sim->threshold_pct);
    }
    /* the sentences, wrapped to the terminal */
    rpt_term_capture_buf wb;
    FILE *ms = rpt_term_capture(&wb);
    if (r->twins)
        fprintf(ms ? ms : f, "%lld more layout%s left out as twin%s of a plan shown: the same "
                "degrees, micro-batching and step time, differing only in knobs that then "
                "change memory alone (sharding, recompute, microbatches in flight, placement); "
                "the table keeps the one that needs the least memory.\n",
                (long long)r->twins, r->twins == 1 ? " is" : "s are", r->twins == 1 ? "" : "s");
    char why[2048];
    plan_summary_why(r, sim ? sim->step_s : NULL, sim ? sim->n : 0, o->cfg.objective, why,
                     sizeof why);
    fputs(why, ms ? ms : f);
    print_band(ms ? ms : f, r, sim, r->ntop > 0 ? r->top[0].layout.framework : 0, c);
    print_train(ms ? ms : f, o, r, sim);
    print_rejected(ms ? ms : f, r);
    rpt_term_capture_wrap(&wb, f, "", "");
}

void cli_print_infeasible(FILE *f, const cli_plan_opts *o, const plan_model *m,
                          const plan_cluster *c, const plan_result *r, int min_nodes)
{
    (void)o;
    rpt_term_capture_buf hb;
    FILE *h = rpt_term_capture(&hb);
    print_header(h ? h : f, o, m, c, r);
    rpt_term_capture_wrap(&hb, f, "", "         ");
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

void cli_print_opt_table(FILE *f, const cli_opt *t, int n)
{
    for (int i = 0; i < n; i++) {
        const cli_opt *o = &t[i];
        if (!o->name) {
            fprintf(f, "\n%s:\n", o->help);
            continue;
        }
        char lhs[48];
        snprintf(lhs, sizeof lhs, "--%s%s%s", o->name, o->has_arg ? " " : "",
                 o->has_arg ? o->arg : "");
        fprintf(f, "  %-26s %s\n", lhs, o->help);
    }
}
