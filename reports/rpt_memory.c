/*
 * rpt_memory.c: plot 1, memory per GPU by term and pipeline stage for the
 * top plans: stacked bars against the GPU's capacity.
 *
 * One bar per (plan, stage), grouped by plan with a gap between groups; each
 * bar stacks the nine terms of plan_mem in the planner's order, bottom up,
 * so the terms that scale with the model (weights, gradients, optimizer) sit
 * under those that scale with the batch. Values are GiB (2^30 bytes) in the
 * data; the total is the sum of the terms (parts sum to the total by
 * construction), headroom is capacity minus total (negative: does not fit).
 *
 * The script stacks by summing columns (boxxyerror from the sum of the terms
 * below to the sum including this one), so editing a value in memory.dat
 * moves everything above it.
 */
#include "reports/rpt_int.h"

#include <math.h>
#include <stdio.h>

#define NTERMS 9
#define DEFAULT_W 1100
#define DEFAULT_H 620
#define XTICS_MAX_BARS 48        /* above this, stage numbers would overlap */
#define TOTALS_MAX_BARS 32       /* above this, total labels would overlap */
#define KEY_MAX_PLANS 16         /* plans listed under the key */
#define KEY_LABEL_MAX 48         /* characters of a plan's label listed there */

static const char *const cols[] = {
    "plan", "label", "stage", "weights_gib", "gradients_gib", "optimizer_gib",
    "activations_gib", "recompute_gib", "logits_gib", "comm_buffers_gib", "cuda_context_gib",
    "allocator_gib", "total_gib", "headroom_gib", NULL};
static const char *const text_cols[] = {"label", NULL};

static const char *const term_title[NTERMS] = {
    "weights", "gradients", "optimizer states", "activations", "recompute working set",
    "logits", "comm buffers", "CUDA context", "allocator"};
/* Tableau 10: distinct at a glance and in greyscale order. */
static const char *const term_color[NTERMS] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};

static void terms_of(const plan_mem *m, double v[NTERMS])
{
    v[0] = m->weights_bytes;
    v[1] = m->grads_bytes;
    v[2] = m->optimizer_bytes;
    v[3] = m->activations_bytes;
    v[4] = m->recompute_bytes;
    v[5] = m->logits_bytes;
    v[6] = m->comm_buffers_bytes;
    v[7] = m->context_bytes;
    v[8] = m->allocator_bytes;
}

static int check(const rpt_memory *in, int *nbars, st_err *err)
{
    if (!(isfinite(in->capacity_bytes) && in->capacity_bytes > 0))
        return ST_RAISE(err, ST_EINVAL, "memory plot: GPU capacity %g bytes must be positive",
                        in->capacity_bytes);
    if (in->nplans < 1 || in->nplans > RPT_MEM_PLANS_MAX || !in->plans)
        return ST_RAISE(err, ST_EINVAL, "memory plot: %d plans (1..%d)", in->nplans,
                        RPT_MEM_PLANS_MAX);
    *nbars = 0;
    for (int p = 0; p < in->nplans; p++) {
        const rpt_mem_plan *pl = &in->plans[p];
        if (pl->nstages < 1 || pl->nstages > PLAN_PP_MAX || !pl->stage_mem)
            return ST_RAISE(err, ST_EINVAL, "memory plot: plan %d has %d stages (1..%d)", p + 1,
                            pl->nstages, PLAN_PP_MAX);
        for (int s = 0; s < pl->nstages; s++) {
            if (pl->stage && (pl->stage[s] < 0 || pl->stage[s] >= PLAN_PP_MAX))
                return ST_RAISE(err, ST_EINVAL, "memory plot: plan %d: stage index %d", p + 1,
                                pl->stage[s]);
            double v[NTERMS];
            terms_of(&pl->stage_mem[s], v);
            for (int k = 0; k < NTERMS; k++)
                if (!(isfinite(v[k]) && v[k] >= 0))
                    return ST_RAISE(err, ST_EINVAL, "memory plot: plan %d, stage %d: %s = %g "
                                    "bytes", p + 1, s, term_title[k], v[k]);
        }
        *nbars += pl->nstages;
    }
    if (*nbars > RPT_MEM_BARS_MAX)
        return ST_RAISE(err, ST_EINVAL, "memory plot: %d bars (at most %d)", *nbars,
                        RPT_MEM_BARS_MAX);
    return ST_OK;
}

static void script(rpt__buf *gp, const rpt__plot *p, const rpt_memory *in, int nbars)
{
    rpt__gp_head(gp, p, "memory per GPU by term and pipeline stage for the top plans, "
                        "stacked bars against the GPU's capacity.");
    rpt__buf_puts(gp, "capacity_gib = ");
    rpt__gp_num(gp, in->capacity_bytes / RPT__GIB);
    rpt__buf_puts(gp, "\nplan_gap = 1.0     # empty bar slots between two plans\n"
                      "bar_width = 0.8\n");
    rpt__buf_printf(gp, "array term_title[%d] = [", NTERMS);
    for (int k = 0; k < NTERMS; k++) {
        rpt__buf_puts(gp, k ? ", " : "");
        rpt__gp_str(gp, term_title[k]);
    }
    rpt__buf_printf(gp, "]\narray term_color[%d] = [", NTERMS);
    for (int k = 0; k < NTERMS; k++)
        rpt__buf_printf(gp, "%s\"%s\"", k ? ", " : "", term_color[k]);
    rpt__buf_puts(gp,
                  "]\n"
                  "# A bar's x: its row in the data plus the gaps before its plan (column 1).\n"
                  "bar_x(plan) = column(0) + plan_gap * (plan - 1)\n"
                  "# Top of term k in a bar's stack: the sum of columns 4 .. 3+k (GiB).\n"
                  "stack(k) = sum [j=4:3+k] column(j)\n"
                  "set title title_text\n"
                  "set ylabel 'memory per GPU (GiB)'\n"
                  "set yrange [0:*]\n"
                  "set grid ytics\n"
                  "set key outside right top vertical Left reverse\n"
                  "# room above the tallest bar for its total\n"
                  "set offsets 0, 0, graph 0.08, 0\n"
                  "set style fill solid 0.9 noborder\n"
                  "set style textbox opaque noborder\n");
    /* Plan ranks on the top axis, at the middle of each group of bars. */
    double xmax = 0;
    rpt__buf_puts(gp, "set link x2\nset x2tics out nomirror (");
    for (int i = 0, row = 0; i < in->nplans; i++) {
        int n = in->plans[i].nstages;
        double mid = row + i * 1.0 + (n - 1) / 2.0;
        rpt__buf_printf(gp, "%s'#%d' ", i ? ", " : "", i + 1);
        rpt__gp_num(gp, mid);
        row += n;
        xmax = row - 1 + i * 1.0;
    }
    rpt__buf_puts(gp, ")\nset xrange [-0.75:");
    rpt__gp_num(gp, xmax + 0.75);
    rpt__buf_puts(gp, "]\n");
    if (nbars <= XTICS_MAX_BARS)
        rpt__buf_puts(gp, "set xlabel 'pipeline stage (plans by rank, top axis)'\n"
                          "set xtics nomirror scale 0\n");
    else
        rpt__buf_puts(gp, "set xlabel 'pipeline stages, in order (plans by rank, top axis)'\n"
                          "unset xtics\n");
    rpt__gp_loop_begin(gp, p);
    rpt__buf_printf(gp,
                    "    plot for [k=1:%d] data_file using (bar_x($1)):(stack(k)):"
                    "(bar_x($1) - bar_width/2):(bar_x($1) + bar_width/2):(stack(k-1)):(stack(k))%s \\\n"
                    "             with boxxyerror lc rgb term_color[k] title term_title[k], \\\n",
                    NTERMS, nbars <= XTICS_MAX_BARS ? ":xtic(3)" : "");
    if (nbars <= TOTALS_MAX_BARS)
        rpt__buf_puts(gp, "         data_file using (bar_x($1)):13:(sprintf('%.1f', $13)) "
                          "with labels boxed offset 0,0.7 font ',8' notitle, \\\n");
    rpt__buf_puts(gp, "         capacity_gib with lines dt 2 lw 2 lc rgb 'black' "
                      "title sprintf('GPU capacity %.1f GiB', capacity_gib)");
    /* The plans themselves, as text entries under the key. */
    if (in->nplans <= KEY_MAX_PLANS) {
        rpt__buf_puts(gp, ", \\\n         keyentry with points pt -1 lc rgb 'white' title ' ', "
                          "\\\n         keyentry with points pt -1 lc rgb 'white' title 'plans:'");
        for (int i = 0; i < in->nplans; i++) {
            rpt__buf lab = {0};
            if (in->plans[i].label)
                rpt__buf_printf(&lab, "#%d %.*s", i + 1, KEY_LABEL_MAX, in->plans[i].label);
            else
                rpt__buf_printf(&lab, "#%d plan %d", i + 1, i + 1);
            rpt__buf_puts(gp, ", \\\n         keyentry with points pt -1 lc rgb 'white' title ");
            rpt__gp_str(gp, lab.oom ? "" : lab.p);
            rpt__buf_fini(&lab);
        }
    }
    rpt__buf_puts(gp, "\n");
    rpt__gp_loop_end(gp);
}

static int write_plot(rpt_report *r, const rpt_memory *in, rpt_render *render, st_err *err)
{
    int nbars = 0;
    int rc = check(in, &nbars, err);
    if (rc != ST_OK)
        return rc;
    rpt__plot *p;
    rc = rpt__plot_begin(r, in->name, "memory", in->title, "Memory per GPU of the top plans",
                         DEFAULT_W, DEFAULT_H, &p, err);
    if (rc != ST_OK)
        return rc;

    rpt__table *t = &p->table;
    rpt__table_init(t, cols, text_cols, NULL);
    double cap_gib = in->capacity_bytes / RPT__GIB;
    int over = 0;
    for (int i = 0; i < in->nplans; i++) {
        const rpt_mem_plan *pl = &in->plans[i];
        for (int s = 0; s < pl->nstages; s++) {
            double v[NTERMS], total = 0;
            terms_of(&pl->stage_mem[s], v);
            rpt__table_row(t, 0);
            rpt__table_cellf(t, "%d", i + 1);
            if (pl->label)
                rpt__table_cell(t, pl->label);
            else
                rpt__table_cellf(t, "plan %d", i + 1);
            rpt__table_cellf(t, "%d", pl->stage ? pl->stage[s] : s);
            for (int k = 0; k < NTERMS; k++) {
                rpt__table_num(t, "%.3f", v[k] / RPT__GIB);
                total += v[k];
            }
            rpt__table_num(t, "%.3f", total / RPT__GIB);
            rpt__table_num(t, "%.3f", cap_gib - total / RPT__GIB);
            over += total > in->capacity_bytes;
        }
    }

    rpt__buf gp = {0}, cap = {0};
    script(&gp, p, in, nbars);
    rpt__buf_printf(&cap,
                    "Memory per GPU of each pipeline stage of the top %d plan%s, stacked by term "
                    "from weights (bottom) to allocator fragmentation (top), against the %.1f "
                    "GiB of one ",
                    in->nplans, in->nplans == 1 ? "" : "s", cap_gib);
    if (in->gpu && *in->gpu)
        rpt__buf_puts(&cap, in->gpu);
    else
        rpt__buf_puts(&cap, "GPU");
    rpt__buf_printf(&cap, " (dashed line). Bars are grouped by plan, best first (#1 on the top "
                          "axis); headroom_gib is capacity minus total. ");
    if (over)
        rpt__buf_printf(&cap, "%d bar%s over the line do%s not fit.", over, over == 1 ? "" : "s",
                        over == 1 ? "es" : "");
    else
        rpt__buf_puts(&cap, "Every stage fits.");
    rc = rpt__plot_finish(r, p, "memory per GPU by term (GiB = 2^30 bytes), one row per "
                                "(plan, pipeline stage)", &gp, &cap, render, err);
    rpt__buf_fini(&gp);
    rpt__buf_fini(&cap);
    return rc;
}

int rpt_memory_write(rpt_report *r, const rpt_memory *in, rpt_render *render, st_err *err)
{
    rpt__locale loc;
    rpt__locale_enter(&loc);
    int rc = write_plot(r, in, render, err);
    rpt__locale_leave(&loc);
    return rc;
}
