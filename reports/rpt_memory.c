/*
 * rpt_memory.c: plot 1, memory per GPU by term and pipeline stage for the
 * top plans: stacked bars against the GPU's capacity.
 *
 * One bar per (plan, stage), labelled "#RANK sSTAGE" and grouped by plan
 * with a gap between groups; each bar stacks the nine terms of plan_mem in
 * the planner's order, bottom up, so the terms that scale with the model
 * (weights, gradients, optimizer) sit under those that scale with the batch.
 * Values are GiB (2^30 bytes) in the data; the total is the sum of the terms
 * (parts sum to the total by construction). A stage fits by the rule the
 * plan table applies (plan_mem_need_bytes): everything but the allocator's
 * reserve, which PyTorch's caching allocator frees and retries before it
 * fails; so headroom is capacity minus (total - allocator), negative when the
 * stage does not fit, and the allocator's term is drawn hatched on top: a bar
 * that crosses the line only with it still fits, as the caption says.
 *
 * To stay readable, a plan with more than RPT_MEM_STAGES_SHOWN stages gets
 * three bars (its first, worst and last stage), the bar labels turn upright
 * past FLAT_XTICS_MAX_BARS bars, and the default image widens with the bars;
 * the caption names every plan whose stages are not all drawn.
 *
 * The script stacks by summing columns (boxxyerror from the sum of the terms
 * below to the sum including this one), so editing a value in memory.dat
 * moves everything above it. Terms take the shared series colours.
 */
#include "reports/rpt_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NTERMS 9
#define DEFAULT_W 1100
#define DEFAULT_H 620
#define WIDE_SLOTS 40            /* bar slots (bars and gaps) the default width holds */
#define SLOT_PX 18               /* image width added per slot past WIDE_SLOTS */
#define AUTO_W_MAX 2400          /* widest default image */
#define FLAT_XTICS_MAX_BARS 16   /* above this, bar labels are written upright */
#define XTICS_MAX_BARS 128       /* above this, bar labels would overlap even upright */
#define TOTALS_MAX_BARS 32       /* above this, total labels would overlap */
#define KEY_MAX_PLANS 16         /* plans listed under the key */
#define KEY_LABEL_MAX 48         /* characters of a plan's label listed there */
#define COL_BAR 16               /* column of the bar label in memory.dat */

static const char *const cols[] = {
    "plan", "label", "stage", "weights_gib", "gradients_gib", "optimizer_gib",
    "activations_gib", "recompute_gib", "logits_gib", "comm_buffers_gib", "cuda_context_gib",
    "allocator_gib", "total_gib", "headroom_gib", "plan_stages", "bar", NULL};
static const char *const text_cols[] = {"label", "bar", NULL};

static const char *const term_title[NTERMS] = {
    "weights", "gradients", "optimizer states", "activations", "recompute working set",
    "logits", "comm buffers", "CUDA context", "allocator"};

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

static double total_of(const plan_mem *m)
{
    double v[NTERMS], t = 0;
    terms_of(m, v);
    for (int k = 0; k < NTERMS; k++)
        t += v[k];
    return t;
}

static int stage_of(const rpt_mem_plan *pl, int i)
{
    return pl->stage ? pl->stage[i] : i;
}

static int pp_of(const rpt_mem_plan *pl)
{
    return pl->pp > 0 ? pl->pp : pl->nstages;
}

/* The entries of a plan that get a bar, as indices in order: all of them up
 * to RPT_MEM_STAGES_SHOWN, else the first, the worst (largest total; the
 * first of equals) and the last. Returns their count; *worst gets the
 * worst's index (-1 when all are shown). */
static int shown_entries(const rpt_mem_plan *pl, int idx[RPT_MEM_STAGES_SHOWN], int *worst)
{
    int n = pl->nstages;
    *worst = -1;
    if (n <= RPT_MEM_STAGES_SHOWN) {
        for (int i = 0; i < n; i++)
            idx[i] = i;
        return n;
    }
    int w = 0;
    double wt = total_of(&pl->stage_mem[0]);
    for (int i = 1; i < n; i++) {
        double t = total_of(&pl->stage_mem[i]);
        if (t > wt) {
            wt = t;
            w = i;
        }
    }
    *worst = w;
    int k = 0;
    idx[k++] = 0;
    if (w != 0 && w != n - 1)
        idx[k++] = w;
    idx[k++] = n - 1;
    return k;
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
        if (pl->pp < 0 || (pl->pp > 0 && (pl->pp < pl->nstages || pl->pp > PLAN_PP_MAX)))
            return ST_RAISE(err, ST_EINVAL, "memory plot: plan %d: pp %d for %d stages given "
                            "(0, or %d..%d)", p + 1, pl->pp, pl->nstages, pl->nstages,
                            PLAN_PP_MAX);
        for (int s = 0; s < pl->nstages; s++) {
            if (stage_of(pl, s) < 0 || stage_of(pl, s) >= pp_of(pl))
                return ST_RAISE(err, ST_EINVAL, "memory plot: plan %d: stage index %d (0..%d)",
                                p + 1, stage_of(pl, s), pp_of(pl) - 1);
            double v[NTERMS];
            terms_of(&pl->stage_mem[s], v);
            for (int k = 0; k < NTERMS; k++)
                if (!(isfinite(v[k]) && v[k] >= 0))
                    return ST_RAISE(err, ST_EINVAL, "memory plot: plan %d, stage %d: %s = %g "
                                    "bytes", p + 1, s, term_title[k], v[k]);
        }
        int idx[RPT_MEM_STAGES_SHOWN], worst;
        *nbars += shown_entries(pl, idx, &worst);
    }
    if (*nbars > RPT_MEM_BARS_MAX)
        return ST_RAISE(err, ST_EINVAL, "memory plot: %d bars (at most %d)", *nbars,
                        RPT_MEM_BARS_MAX);
    return ST_OK;
}

/* x of the last bar: bars and the gaps between plans, from 0. */
static double last_x(const rpt_memory *in, int nbars)
{
    return nbars - 1 + (in->nplans - 1) * 1.0;
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
        rpt__buf_printf(gp, "%s\"%s\"", k ? ", " : "", rpt__series_color[k % RPT_NCOLORS]);
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
    rpt__buf_puts(gp, "set link x2\nset x2tics out nomirror (");
    for (int i = 0, row = 0; i < in->nplans; i++) {
        int idx[RPT_MEM_STAGES_SHOWN], worst;
        int n = shown_entries(&in->plans[i], idx, &worst);
        double mid = row + i * 1.0 + (n - 1) / 2.0;
        rpt__buf_printf(gp, "%s'#%d' ", i ? ", " : "", i + 1);
        rpt__gp_num(gp, mid);
        row += n;
    }
    rpt__buf_puts(gp, ")\nset xrange [-0.75:");
    rpt__gp_num(gp, last_x(in, nbars) + 0.75);
    rpt__buf_puts(gp, "]\n");
    if (nbars <= FLAT_XTICS_MAX_BARS)
        rpt__buf_puts(gp, "set xlabel 'plan #rank, pipeline stage s (plans by rank, top axis)'\n"
                          "set xtics nomirror scale 0\n");
    else if (nbars <= XTICS_MAX_BARS)
        rpt__buf_puts(gp, "set xlabel 'plan #rank, pipeline stage s (plans by rank, top axis)'\n"
                          "set xtics nomirror scale 0 rotate by 90 right font ',8'\n");
    else
        rpt__buf_puts(gp, "set xlabel 'pipeline stages, in order (plans by rank, top axis)'\n"
                          "unset xtics\n");
    rpt__gp_loop_begin(gp, p);
    rpt__buf_printf(gp,
                    "    plot for [k=1:%d] data_file using (bar_x($1)):(stack(k)):"
                    "(bar_x($1) - bar_width/2):(bar_x($1) + bar_width/2):(stack(k-1)):(stack(k))",
                    NTERMS - 1);
    if (nbars <= XTICS_MAX_BARS)
        rpt__buf_printf(gp, ":xtic(%d)", COL_BAR);
    rpt__buf_puts(gp, " \\\n"
                      "             with boxxyerror lc rgb term_color[k] title term_title[k], \\\n");
    /* the allocator's reserve, hatched: not part of the fit test */
    rpt__buf_printf(gp,
                    "         data_file using (bar_x($1)):(stack(%d)):(bar_x($1) - bar_width/2):"
                    "(bar_x($1) + bar_width/2):(stack(%d)):(stack(%d)) \\\n"
                    "             with boxxyerror fs pattern 4 border lc rgb term_color[%d] "
                    "title term_title[%d].' (reserve, not in the fit)', \\\n",
                    NTERMS, NTERMS - 1, NTERMS, NTERMS, NTERMS);
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
            /* a long label goes on over a second entry, broken at a space:
             * plans often differ only at the end of theirs */
            const char *text = in->plans[i].label;
            char num[16];
            snprintf(num, sizeof num, "#%d ", i + 1);
            for (int line = 0; line < 2; line++) {
                rpt__buf lab = {0};
                size_t len = text ? strlen(text) : 0, take = len;
                if (line == 0 && len > KEY_LABEL_MAX) {
                    take = KEY_LABEL_MAX;
                    while (take > KEY_LABEL_MAX / 2 && text[take] != ' ')
                        take--;
                } else if (take > KEY_LABEL_MAX) {
                    take = KEY_LABEL_MAX;
                }
                if (!text)
                    rpt__buf_printf(&lab, "#%d plan %d", i + 1, i + 1);
                else
                    rpt__buf_printf(&lab, "%*s%.*s", line ? (int)strlen(num) + 1 : 0, "",
                                    (int)take, text);
                if (line == 0 && text) {
                    rpt__buf lab2 = {0};
                    rpt__buf_printf(&lab2, "%s%s", num, lab.p ? lab.p : "");
                    rpt__buf_fini(&lab);
                    lab = lab2;
                }
                rpt__buf_puts(gp, ", \\\n         keyentry with points pt -1 lc rgb 'white' "
                                  "title ");
                rpt__gp_str(gp, lab.oom ? "" : lab.p);
                rpt__buf_fini(&lab);
                if (!text || take >= len)
                    break;
                text += take;
                while (*text == ' ')
                    text++;
                if (!*text)
                    break;
            }
        }
    }
    rpt__buf_puts(gp, "\n");
    rpt__gp_loop_end(gp);
}

/* The caption's sentence on a plan whose stages are not all drawn: which
 * are, and why. Nothing for a plan drawn in full. */
static void partial_note(rpt__buf *cap, const rpt_mem_plan *pl, int rank)
{
    int idx[RPT_MEM_STAGES_SHOWN], worst;
    int n = shown_entries(pl, idx, &worst), pp = pp_of(pl);
    if (worst >= 0) {
        int first = stage_of(pl, 0), last = stage_of(pl, pl->nstages - 1);
        int w = stage_of(pl, worst);
        rpt__buf_printf(cap, " #%d has %d stages; to keep the bars readable (at most %d per "
                             "plan) it shows its first (s%d), ",
                        rank, pp, RPT_MEM_STAGES_SHOWN, first);
        if (worst == 0)
            rpt__buf_printf(cap, "which is also its worst, and its last (s%d).", last);
        else if (worst == pl->nstages - 1)
            rpt__buf_printf(cap, "and its last (s%d), which is also its worst.", last);
        else
            rpt__buf_printf(cap, "worst (s%d) and last (s%d).", w, last);
        if (pl->nstages < pp)
            rpt__buf_printf(cap, " Only %d of its %d stages are known by term.", pl->nstages, pp);
        return;
    }
    if (n >= pp)
        return;
    rpt__buf_printf(cap, " #%d shows stage%s ", rank, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++)
        rpt__buf_printf(cap, "%ss%d", i == 0 ? "" : i == n - 1 ? " and " : ", ",
                        stage_of(pl, idx[i]));
    rpt__buf_printf(cap, " only, of its %d: the other stages are not known by term.", pp);
}

static int write_plot(rpt_report *r, const void *input, rpt_render *render, st_err *err)
{
    const rpt_memory *in = input;
    int nbars = 0;
    int rc = check(in, &nbars, err);
    if (rc != ST_OK)
        return rc;
    /* wider than the default when the bars and gaps need it */
    double slots = last_x(in, nbars) + 1.5;
    int width = DEFAULT_W;
    if (slots > WIDE_SLOTS)
        width = (int)fmin(AUTO_W_MAX, DEFAULT_W + SLOT_PX * (slots - WIDE_SLOTS));
    rpt__plot *p;
    rc = rpt__plot_begin(r, in->name, "memory", in->title, "Memory per GPU of the top plans",
                         width, DEFAULT_H, &p, err);
    if (rc != ST_OK)
        return rc;

    rpt__table *t = &p->table;
    rpt__table_init(t, cols, text_cols, NULL);
    double cap_gib = in->capacity_bytes / RPT__GIB;
    int over = 0, reserve_only = 0;
    for (int i = 0; i < in->nplans; i++) {
        const rpt_mem_plan *pl = &in->plans[i];
        int idx[RPT_MEM_STAGES_SHOWN], worst;
        int n = shown_entries(pl, idx, &worst);
        for (int j = 0; j < n; j++) {
            int s = idx[j];
            double v[NTERMS], total = 0;
            terms_of(&pl->stage_mem[s], v);
            rpt__table_row(t, 0);
            rpt__table_cellf(t, "%d", i + 1);
            if (pl->label)
                rpt__table_cell(t, pl->label);
            else
                rpt__table_cellf(t, "plan %d", i + 1);
            rpt__table_cellf(t, "%d", stage_of(pl, s));
            for (int k = 0; k < NTERMS; k++) {
                rpt__table_num(t, "%.3f", v[k] / RPT__GIB);
                total += v[k];
            }
            double need = total - v[NTERMS - 1]; /* what must fit: all but the reserve */
            rpt__table_num(t, "%.3f", total / RPT__GIB);
            rpt__table_num(t, "%.3f", cap_gib - need / RPT__GIB);
            rpt__table_cellf(t, "%d", pp_of(pl));
            rpt__table_cellf(t, "#%d s%d", i + 1, stage_of(pl, s));
            over += need > in->capacity_bytes;
            reserve_only += need <= in->capacity_bytes && total > in->capacity_bytes;
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
    rpt__buf_printf(&cap, " (dashed line). Bars are grouped by plan, best first, and labelled "
                          "by plan rank and stage (#1 s0 is stage 0 of the best plan); "
                          "plan_stages is the plan's pipeline depth. A stage fits when its bar "
                          "below the allocator's reserve (hatched, on top) stays under the "
                          "line, the rule of the plan table: PyTorch's caching allocator frees "
                          "its cached blocks and retries before it fails, so the reserve shows "
                          "in nvidia-smi but does not decide; headroom_gib is capacity minus "
                          "total without the reserve. ");
    if (over)
        rpt__buf_printf(&cap, "%d bar%s do%s not fit.", over, over == 1 ? "" : "s",
                        over == 1 ? "es" : "");
    else
        rpt__buf_puts(&cap, "Every stage fits.");
    if (reserve_only)
        rpt__buf_printf(&cap, " %d bar%s cross%s the line only with the reserve and fit%s.",
                        reserve_only, reserve_only == 1 ? "" : "s", reserve_only == 1 ? "es" : "",
                        reserve_only == 1 ? "s" : "");
    for (int i = 0; i < in->nplans; i++)
        partial_note(&cap, &in->plans[i], i + 1);
    rpt__plot_howto(p, "Each bar is one pipeline stage of a plan, stacked by what holds the "
                       "memory of one of its GPUs; the dashed line is the GPU's memory, so the "
                       "gap above a bar is its headroom; a bar whose solid part crosses the line would not fit.");
    return rpt__plot_finish(r, p, "memory per GPU by term (GiB = 2^30 bytes), one row per "
                                  "(plan, pipeline stage) drawn", &gp, &cap, render, err);
}

int rpt_memory_write(rpt_report *r, const rpt_memory *in, rpt_render *render, st_err *err)
{
    return rpt__plot_write_c(write_plot, r, in, render, err);
}
