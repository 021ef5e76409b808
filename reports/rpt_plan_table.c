/*
 * rpt_plan_table.c: the ranked plans of a search in one table that fits the
 * terminal, its key, and the sentences under it: the simulation's notes,
 * the twins left out, why #1 wins, its error band, the time to train, the
 * rejected layouts (rpt_plan.h).
 */
#include "reports/rpt_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/units.h"
#include "planner/plan_framework.h"
#include "planner/plan_summary.h"
#include "reports/rpt_table.h"

#define GIB 1073741824.0 /* 2^30: memory is said in GiB */

const char *rpt_plan_columns_key(void)
{
    return "TP, PP, CP, DP: tensor-, pipeline-, context- and data-parallel degrees (CP: the "
           "sequence split, a ring or DeepSpeed-Ulysses as the stack has it); mbs: sequences per "
           "microbatch; mb: microbatches per step; act: microbatches in flight per stage, "
           "SMP's active_microbatches (- where the stack has no such knob); sched: the "
           "pipeline schedule by its stack's name (SMP's simple and interleaved are GPipe and "
           "1F1B; elsewhere 1f1b, and interleaved/v is 1F1B over v virtual stages); recomp: "
           "activation recompute, none, sel (selective: the attention core only, Korthikanti "
           "et al. 2022; torchtitan's: its op-level policy, the attention's and every other "
           "product's outputs kept) or full (every layer; full/k every k layers; block/n the first n "
           "layers of each model chunk, Megatron's block method, or as many of them spread one in "
           "Lc/n, torchtitan's selective_ac_option; part: a remat policy "
           "keeping some products' outputs; +off: checkpoints offloaded to host); SP: "
           "sequence parallelism (SMP: optimize \"memory\")";
}

const char *rpt_plan_recomp_label(const plan_layout *l, char *buf, size_t n)
{
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_layers > 0)
        snprintf(buf, n, "block/%d", l->recompute_layers);
    else if (l->recompute == PLAN_RECOMP_FULL && l->recompute_saved)
        snprintf(buf, n, "part");
    else if (l->recompute == PLAN_RECOMP_FULL && l->recompute_group > 1)
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

void rpt_plan_cells(rpt_table *t, const plan_layout *l, const plan_estimate *e)
{
    const plan_time *tm = &e->time;
    char buf[32];
    rpt_table_cell(t, "%d", l->tp);
    rpt_table_cell(t, "%d", l->pp);
    rpt_table_cell(t, "%d", l->cp);
    rpt_table_cell(t, "%d", l->dp);
    rpt_table_cell(t, "%d", l->micro_batch);
    rpt_table_cell(t, "%d", l->microbatches);
    rpt_table_cell(t, "%s", plan_framework_act_label(l, buf, sizeof buf));
    rpt_table_cell(t, "%s", plan_framework_sched_label(l, buf, sizeof buf));
    rpt_table_cell(t, "%s", rpt_plan_recomp_label(l, buf, sizeof buf));
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

/* The columns of the ranked plans: DP (GPUs / (TP x PP x CP)) is the
 * first to go, CP with the knobs at their usual values; "sim s" only with
 * the simulated steps. */
static const rpt_table_colspec plan_cols[] = {
    {"#", 1, 0},        {"TP", 1, 0},       {"PP", 1, 0},      {"CP", 1, 3},
    {"DP", 1, 1},
    {"mbs", 1, 0},      {"mb", 1, 0},       {"act", 1, 3},     {"sched", 0, 0},
    {"recomp", 0, 0},   {"sharding", 0, 0}, {"SP", 0, 1},      {"place", 0, 3},
    {"mem GiB", 1, 0},  {"step s", 1, 0},   {"compute", 1, 4}, {"TP", 1, 4},
    {"PP", 1, 4},       {"DPexp", 1, 4},    {"bubble", 1, 4},  {"opt", 1, 5},
    {"tokens/s", 1, 1}, {"MFU", 1, 3},      {"$/h", 1, 5},     {"$/1M tok", 1, 2},
    {"sim s", 1, 0},
};

/* The ranked plans: the layout and the figures that decide, always; the
 * time terms, the knobs at their usual values and prices go first when the
 * terminal is narrow (rpt_table.c). */
static void print_table(FILE *f, const plan_result *r, const sim_top_steps *sim)
{
    int simulated = sim && sim->n;
    int ncols = (int)(sizeof plan_cols / sizeof plan_cols[0]);
    rpt_table *t = rpt_table_new_cols(plan_cols, simulated ? ncols : ncols - 1);
    if (!t)
        return;
    for (int i = 0; i < r->ntop; i++) {
        const plan_estimate *e = &r->top[i].est;
        const plan_time *tm = &e->time;
        rpt_table_row(t);
        rpt_table_cell(t, "%d", i + 1);
        rpt_plan_cells(t, &r->top[i].layout, e);
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

/* The time and cost of training o->train_tokens with #1. */
static void print_train(FILE *f, const plan_result *r, const rpt_plan_opts *o)
{
    const sim_top_steps *sim = o->sim;
    double t, cost;
    int simulated;
    if (!(o->train_tokens > 0) ||
        !plan_summary_train(r, sim && sim->n > 0 ? sim->step_s[0] : 0, o->train_tokens, &t, &cost,
                            &simulated))
        return;
    char tok[32], tt[32];
    units_fmt_count(o->train_tokens, tok, sizeof tok);
    units_fmt_seconds(t, tt, sizeof tt);
    fprintf(f, "Train %s tokens with #1: %s at its %s step of %.3f s", tok, tt,
            simulated ? "simulated" : "predicted",
            simulated ? sim->step_s[0] : r->top[0].est.time.step_s);
    if (cost > 0)
        fprintf(f, ", $%.0f at $%.2f/h (%s).\n", cost, r->top[0].est.cost_per_hour,
                o->price_list);
    else
        fprintf(f, "; no price for this instance type, so no cost.\n");
}

/* #1's step with its error band, and the plans it cannot tell apart. */
static void print_band(FILE *f, const plan_result *r, const rpt_plan_opts *o)
{
    const sim_top_steps *sim = o->sim;
    double b = o->band_pct;
    if (r->ntop < 1)
        return;
    if (!(b > 0)) {
        fprintf(f, "No error band on the steps: %s.\n", o->band_basis);
        return;
    }
    double step_s = plan_summary_ranked_step_s(r, sim ? sim->step_s : NULL, sim ? sim->n : 0, 0);
    fprintf(f, "Step of #1: %.3f s \u00b1%.0f %% (%s%s).", step_s, b,
            sim && sim->n ? "simulated; " : "", o->band_basis);
    int k = plan_summary_band_overlap(r, sim ? sim->step_s : NULL, sim ? sim->n : 0, b);
    if (k > 1)
        fprintf(f, " #1 to #%d lie within each other's bands: the planner cannot tell which of "
                   "them is fastest; choose among them on memory, cost or simplicity.",
                k);
    else if (r->ntop > 1)
        fprintf(f, " #2 lies outside #1's band.");
    fputc('\n', f);
}

/* What the simulation of the top plans adds under the table. */
static void print_sim_notes(FILE *f, const plan_result *r, const sim_top_steps *sim)
{
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

/* The sentences under the table, unwrapped. */
static void print_sentences(FILE *f, const plan_result *r, const rpt_plan_opts *o)
{
    const sim_top_steps *sim = o->sim;
    if (r->twins)
        fprintf(f, "%lld more layout%s left out as twin%s of a plan shown: the same "
                "degrees, micro-batching and step time, differing only in knobs that then "
                "change memory alone (sharding, recompute, microbatches in flight, placement); "
                "the table keeps the one that needs the least memory.\n",
                (long long)r->twins, r->twins == 1 ? " is" : "s are", r->twins == 1 ? "" : "s");
    char text[2048];
    plan_summary_why(r, sim ? sim->step_s : NULL, sim ? sim->n : 0, o->objective, text,
                     sizeof text);
    fputs(text, f);
    print_band(f, r, o);
    print_train(f, r, o);
    plan_summary_rejected(r, text, sizeof text);
    fputs(text, f);
}

void rpt_plan_result(FILE *f, const plan_model *m, const plan_cluster *c, const plan_result *r,
                     const rpt_plan_opts *o)
{
    const sim_top_steps *sim = o->sim;
    rpt_plan_head(f, m, c, r, o);
    print_table(f, r, sim);
    char key[1400];
    snprintf(key, sizeof key,
             "(%s; mem: worst stage needed/available (nvidia-smi shows the allocator's reserve "
             "on top); times per step in seconds, the second TP and PP their communication; "
             "DPexp: gradient sync not hidden behind backward%s)",
             rpt_plan_columns_key(),
             sim && sim->n ? "; sim s: the step played out by the simulator, ! where it differs "
                             "from the planner's by more than the --sim-threshold" : "");
    rpt_term_wrap(f, key, "", " ");
    if (sim && sim->n)
        print_sim_notes(f, r, sim);
    /* the sentences, wrapped to the terminal */
    rpt_term_capture_buf wb;
    FILE *ms = rpt_term_capture(&wb);
    print_sentences(ms ? ms : f, r, o);
    rpt_term_capture_wrap(&wb, f, "", "");
}
