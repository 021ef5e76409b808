/*
 * rpt_timeline.c: plot 4, the pipeline timeline of a simulated step as a
 * Gantt chart, one band per pipeline stage (stage 0 on top).
 *
 * Each band has three lanes: compute (F, B, Bi, W, tall), sends (sendF,
 * sendB, over NVLink or the network; thin) and the gradient sync (DP
 * buckets; thin). Each kind has its own colour; compute ops are labelled
 * with their microbatch (microbatch.chunk with virtual stages) while a
 * stage has few enough of them to read. Times are milliseconds from the
 * start of the step, printed exactly from the trace's integer nanoseconds.
 *
 * timeline.dat has one row per op, ordered by stage, then start time, then
 * stream (the trace's own order breaks ties), so the page's table reads
 * stage by stage. Only the kinds present are plotted (an empty series is an
 * error to gnuplot, and the key stays honest).
 */
#include "reports/rpt_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_W 1200
#define LABEL_MAX_OPS 48         /* compute ops on a stage above which labels would overlap */
#define BORDER_MAX_OPS 400       /* above this, op borders would hide the ops */
#define YTICS_MAX_STAGES 32      /* above this, stage tics are left to gnuplot */
#define SECONDS_FROM_S 2.0       /* a step this long is drawn in seconds, not ms */
#define MIN_WIDTH_SHARE 0.002    /* the narrowest send or bucket drawn, a share of the span */

static const char *const cols[] = {"stage", "stream", "kind", "microbatch", "chunk",
                                   "start_ms", "end_ms", NULL};
static const char *const text_cols[] = {"stream", "kind", NULL};

/* Kinds in the order of the key; trace kind SIM_OP__COUNT is a DP bucket. */
enum { K_F, K_B, K_BI, K_W, K_SENDF, K_SENDB, K_RECVF, K_RECVB, K_BUCKET, NKINDS };
static const char *const kind_name[NKINDS] = {"F", "B", "Bi", "W", "sendF", "sendB",
                                              "recvF", "recvB", "bucket"};
static const char *const kind_title[NKINDS] = {
    "F (forward)", "B (backward)", "Bi (input gradient)", "W (weight gradient)",
    "sendF (activation)", "sendB (gradient)", "recvF", "recvB", "gradient bucket (DP)"};
/* Okabe-Ito colours (see rpt__series_color): forward blue, backward
 * vermillion, the split backward orange and purple, sends sky blue and
 * yellow, receives grey, buckets bluish green; every pair apart for a
 * deuteranope (test_rpt_plots) */
const char *const rpt__timeline_color[NKINDS] = {"#0072b2", "#d55e00", "#e69f00", "#cc79a7",
                                                "#56b4e9", "#f0e442", "#cccccc", "#cccccc",
                                                "#009e73"};
#define kind_color rpt__timeline_color
static const char *const stream_name[] = {"compute", "send_nvlink", "send_network",
                                          "grad_sync"};

static int kind_of(const sim_trace_rec *t)
{
    switch (t->kind) {
    case SIM_OP_FWD: return K_F;
    case SIM_OP_BWD: return K_B;
    case SIM_OP_BWD_INPUT: return K_BI;
    case SIM_OP_BWD_WEIGHT: return K_W;
    case SIM_OP_SEND_FWD: return K_SENDF;
    case SIM_OP_SEND_BWD: return K_SENDB;
    case SIM_OP_RECV_FWD: return K_RECVF;
    case SIM_OP_RECV_BWD: return K_RECVB;
    case SIM_OP__COUNT: return K_BUCKET;
    }
    return -1;
}

static int is_compute(int k)
{
    return k <= K_W;
}

typedef struct order {
    const sim_trace_rec *t;
    int index;
} order;

static int cmp_order(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->t->stage != y->t->stage)
        return x->t->stage < y->t->stage ? -1 : 1;
    if (x->t->start_ns != y->t->start_ns)
        return x->t->start_ns < y->t->start_ns ? -1 : 1;
    if (x->t->stream != y->t->stream)
        return x->t->stream < y->t->stream ? -1 : 1;
    return x->index - y->index;
}

static void put_ms(rpt__table *t, sim_time_ns ns)
{
    rpt__table_cellf(t, "%" PRId64 ".%06" PRId64, (int64_t)ns / 1000000, (int64_t)ns % 1000000);
}

static int check(const rpt_timeline *in, st_err *err)
{
    if (in->pp < 1 || in->pp > PLAN_PP_MAX)
        return ST_RAISE(err, ST_EINVAL, "timeline plot: %d pipeline stages (1..%d)", in->pp,
                        PLAN_PP_MAX);
    if (in->ntrace < 1 || in->ntrace > RPT_TIMELINE_OPS_MAX || !in->trace)
        return ST_RAISE(err, ST_EINVAL, "timeline plot: %d ops (1..%d; simulate with the "
                        "trace kept)", in->ntrace, RPT_TIMELINE_OPS_MAX);
    if (!(isfinite(in->step_s) && in->step_s >= 0))
        return ST_RAISE(err, ST_EINVAL, "timeline plot: step time %g s", in->step_s);
    for (int i = 0; i < in->ntrace; i++) {
        const sim_trace_rec *t = &in->trace[i];
        if (t->stage < 0 || t->stage >= in->pp || t->stream > SIM_STREAM_DP ||
            kind_of(t) < 0 || t->start_ns < 0 || t->end_ns < t->start_ns)
            return ST_RAISE(err, ST_EINVAL, "timeline plot: op %d: stage %d (pp %d), stream %d, "
                            "kind %d, %" PRId64 "..%" PRId64 " ns", i, (int)t->stage, in->pp,
                            (int)t->stream, (int)t->kind, (int64_t)t->start_ns,
                            (int64_t)t->end_ns);
    }
    return ST_OK;
}

/* The gnuplot script of the timeline: lanes, units, ranges, one boxes
 * series per kind of op present, labels when few, the step's end. */
static void timeline_script(rpt__buf *gp, rpt__plot *p, const rpt_timeline *in,
                            const int *present, int most_ops, int chunks, double span_ms, int in_s)
{
    rpt__buf_puts(gp, "# Lanes of a stage's band: compute ops tall, sends and gradient buckets "
                      "below.\n"
                      "compute(k) = k eq 'F' || k eq 'B' || k eq 'Bi' || k eq 'W'\n"
                      "lane(k) = compute(k) ? -0.12 : (k eq 'bucket' ? 0.37 : 0.22)\n"
                      "half(k) = compute(k) ? 0.25 : (k eq 'bucket' ? 0.06 : 0.08)\n"
                      "# The box of an op of kind k, NaN (skipped) for the other kinds.\n"
                      "op_y(k) = strcol(3) eq k ? $1 + lane(k) : NaN\n");
    rpt__buf_printf(gp, "# Time unit: the data is in ms; a step of %.0f s or more is drawn in s.\n"
                        "unit = %s\n"
                        "# A send or bucket shorter than this (ms) is drawn this wide, to be seen.\n"
                        "min_ms = ",
                    SECONDS_FROM_S, in_s ? "1000.0" : "1.0");
    rpt__gp_num(gp, span_ms * MIN_WIDTH_SHARE);
    rpt__buf_printf(gp, "\nhalf_w(k, a, b) = compute(k) || b - a >= min_ms ? (b - a) / 2 : min_ms / 2\n"
                        "set title title_text\n"
                        "set xlabel 'time from the start of the step (%s)'\n"
                        "set ylabel 'pipeline stage'\n",
                    in_s ? "s" : "ms");
    rpt__buf_printf(gp, "set yrange [%d.5:-0.5]\n", in->pp - 1);
    if (in->pp <= YTICS_MAX_STAGES)
        rpt__buf_puts(gp, "set ytics 1 scale 0\n");
    rpt__buf_puts(gp, "set xrange [0:*]\n"
                      "set grid xtics\n"
                      "set key outside right top vertical Left reverse\n");
    if (in->step_s > 0) {
        /* A two-point curve rather than an arrow: it takes part in the x
         * autoscale and has a key entry. */
        rpt__buf_puts(gp, "# The end of the step (optimizer included), a dashed line.\n"
                          "$step_end << EOD\n");
        for (int k = 0; k < 2; k++) {
            rpt__gp_num(gp, in_s ? in->step_s : in->step_s * 1e3);
            rpt__buf_puts(gp, " ");
            rpt__gp_num(gp, k ? in->pp - 0.5 : -0.5);
            rpt__buf_puts(gp, "\n");
        }
        rpt__buf_puts(gp, "EOD\n");
    }
    rpt__gp_loop_begin(gp, p);
    rpt__buf_puts(gp, "    plot ");
    int first = 1;
    for (int k = 0; k < NKINDS; k++) {
        if (!present[k])
            continue;
        rpt__buf_printf(gp, "%sdata_file using (($6+$7)/2/unit):(op_y('%s')):"
                            "(half_w('%s', $6, $7)/unit):(half('%s')) with boxxyerror "
                            "fillstyle solid 1.0 %s fillcolor rgb '%s' title '%s'",
                        first ? "" : ", \\\n         ", kind_name[k], kind_name[k], kind_name[k],
                        is_compute(k) && most_ops <= BORDER_MAX_OPS ? "border lw 0.5 lc rgb 'white'"
                                                                    : "noborder",
                        kind_color[k], kind_title[k]);
        first = 0;
    }
    if (most_ops <= LABEL_MAX_OPS)
        rpt__buf_printf(gp, ", \\\n         data_file using (($6+$7)/2/unit):"
                            "(compute(strcol(3)) ? $1 + lane('F') : NaN):(%s) with labels "
                            "font ',7' tc rgb 'white' notitle",
                        chunks ? "sprintf('%d.%d', $4, $5)" : "sprintf('%d', $4)");
    if (in->step_s > 0)
        rpt__buf_puts(gp, ", \\\n         $step_end using 1:2 with lines dt 2 lw 1.5 "
                          "lc rgb 'black' title 'step end'");
    rpt__buf_puts(gp, "\n");
    rpt__gp_loop_end(gp);

}

/* The caption: what each lane holds, the op count, the step's end. */
static void timeline_caption(rpt__buf *cap, const rpt_timeline *in, const int *present,
                             int most_ops, int chunks, sim_time_ns end_ns, double span_ms,
                             int in_s)
{
    int ncompute = 0;
    for (int k = 0; k <= K_W; k++)
        ncompute += present[k];
    rpt__buf_printf(cap, "Every op of one simulated training step on each of the %d pipeline "
                         "stage%s (stage 0 on top), over time in %s: compute ops in the tall "
                         "lane",
                    in->pp, in->pp == 1 ? "" : "s", in_s ? "seconds" : "milliseconds");
    if (ncompute > 0) {
        rpt__buf_puts(cap, " (");
        for (int k = 0, n = 0; k <= K_W; k++)
            if (present[k])
                rpt__buf_printf(cap, "%s%s", n++ ? ", " : "", kind_title[k]);
        rpt__buf_puts(cap, ")");
    }
    rpt__buf_puts(cap, ", sends and gradient buckets in the thin lanes below, each kind in its "
                       "own colour");
    if (most_ops <= LABEL_MAX_OPS)
        rpt__buf_printf(cap, "; compute ops are labelled with their microbatch%s",
                        chunks ? ".chunk" : "");
    rpt__buf_printf(cap, ". %d ops, the last ending at %.3f %s", in->ntrace,
                    in_s ? (double)end_ns / 1e9 : (double)end_ns / 1e6, in_s ? "s" : "ms");
    if (in->step_s > 0)
        rpt__buf_printf(cap, "; the dashed line is the step's end (%.3f %s, optimizer included)",
                        in_s ? in->step_s : in->step_s * 1e3, in_s ? "s" : "ms");
    rpt__buf_printf(cap, "; sends and buckets shorter than %.2g %s are drawn that wide so they "
                         "show. Idle gaps in the tall lane are the pipeline bubble.",
                    (in_s ? span_ms / 1e3 : span_ms) * MIN_WIDTH_SHARE, in_s ? "s" : "ms");
    if (in->note && *in->note) {
        rpt__buf_puts(cap, " ");
        rpt__buf_puts(cap, in->note);
    }
}

static int write_plot(rpt_report *r, const void *input, rpt_render *render, st_err *err)
{
    const rpt_timeline *in = input;
    int rc = check(in, err);
    if (rc != ST_OK)
        return rc;
    order *ord = malloc((size_t)in->ntrace * sizeof *ord);
    int *per_stage = calloc((size_t)in->pp, sizeof *per_stage);
    if (!ord || !per_stage) {
        free(ord);
        free(per_stage);
        return ST_RAISE(err, ST_ENOMEM, "timeline plot: out of memory");
    }
    int present[NKINDS] = {0}, chunks = 0, most_ops = 0;
    sim_time_ns end_ns = 0;
    for (int i = 0; i < in->ntrace; i++) {
        const sim_trace_rec *t = &in->trace[i];
        int k = kind_of(t);
        ord[i] = (order){t, i};
        if (k < 0) /* refused by check() */
            continue;
        present[k] = 1;
        if (is_compute(k) && ++per_stage[t->stage] > most_ops)
            most_ops = per_stage[t->stage];
        chunks |= t->chunk > 0;
        if (t->end_ns > end_ns)
            end_ns = t->end_ns;
    }
    free(per_stage);
    qsort(ord, (size_t)in->ntrace, sizeof *ord, cmp_order);

    int height = 140 + 70 * in->pp;
    height = height < 420 ? 420 : height > 2400 ? 2400 : height;
    rpt__plot *p;
    rc = rpt__plot_begin(r, in->name, "timeline", in->title, "Pipeline timeline of a simulated step",
                         DEFAULT_W, height, &p, err);
    if (rc != ST_OK) {
        free(ord);
        return rc;
    }
    rpt__table *t = &p->table;
    rpt__table_init(t, cols, text_cols, NULL);
    for (int i = 0; i < in->ntrace; i++) {
        const sim_trace_rec *o = ord[i].t;
        rpt__table_row(t, 0);
        rpt__table_cellf(t, "%d", (int)o->stage);
        rpt__table_cell(t, stream_name[o->stream]);
        int k = kind_of(o);
        rpt__table_cell(t, k >= 0 ? kind_name[k] : "?");
        rpt__table_cellf(t, "%d", (int)o->microbatch);
        rpt__table_cellf(t, "%d", (int)o->chunk);
        put_ms(t, o->start_ns);
        put_ms(t, o->end_ns);
    }
    free(ord);

    rpt__buf gp = {0}, cap = {0};
    rpt__gp_head(&gp, p, "the pipeline timeline of a simulated step, a Gantt chart per stage.");
    double span_ms = (double)end_ns / 1e6;
    if (in->step_s * 1e3 > span_ms)
        span_ms = in->step_s * 1e3;
    int in_s = span_ms >= SECONDS_FROM_S * 1e3;
    timeline_script(&gp, p, in, present, most_ops, chunks, span_ms, in_s);
    timeline_caption(&cap, in, present, most_ops, chunks, end_ns, span_ms, in_s);
    rpt__plot_howto(p, "Each band is one pipeline stage over the step, time left to right: tall "
                       "boxes are compute (forward, backward), thin ones below are the "
                       "activations and gradients sent to the next stage and the gradient "
                       "all-reduce; white gaps in the tall lane are the bubble, time the stage "
                       "waits.");
    return rpt__plot_finish(r, p,
                            "one row per op of the simulated step; times in ms from its start",
                            &gp, &cap, render, err);
}

int rpt_timeline_write(rpt_report *r, const rpt_timeline *in, rpt_render *render, st_err *err)
{
    return rpt__plot_write_c(write_plot, r, in, render, err);
}
