/*
 * rpt_scaling.c: plot 3, throughput (tokens/s) and cost (USD per 1M tokens)
 * against instance count, one curve per instance type: two panels side by
 * side sharing a log2 x axis (cluster sizes are usually doubled), log y
 * axes (types differ by orders of magnitude), each type in a colour, dash
 * and marker of its own (up to 24 types, any colour vision).
 *
 * scaling.dat has one block per instance type (gnuplot `index`), in the
 * order the types first appear, each ordered by instance count. A count
 * where nothing fits is a row with '-' values, so its curve has a gap there;
 * an unknown price leaves only the cost missing. A panel draws only the
 * types that have a value in it (gnuplot refuses a curve with no points).
 */
#include "reports/rpt_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_W 1200
#define DEFAULT_H 560

/* Okabe and Ito's colours (Color Universal Design, 2008), distinct for
 * every colour vision; yellow left out, it vanishes on white. */
static const char *const safe_color[] = {"#000000", "#e69f00", "#56b4e9", "#009e73",
                                         "#0072b2", "#d55e00", "#cc79a7"};
#define NSAFE 7
static const int point_type[] = {7, 5, 9, 11, 13, 15, 4, 6, 8, 10};
#define NPOINTS 10
/* gnuplot's five predefined dash types (solid, dashed, dotted, dash-dot,
 * dash-dot-dot): with the colours, the series one plot tells apart */
#define NDASH 5
#define NSTYLES (NSAFE * NDASH)

static const char *const cols[] = {"instance", "instances", "gpus", "tokens_per_s",
                                   "usd_per_mtokens", "layout", NULL};
static const char *const text_cols[] = {"instance", "layout", NULL};

typedef struct order {
    const rpt_scaling_point *pt;
    int series, index;
} order;

static int cmp_order(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->series != y->series)
        return x->series - y->series;
    if (x->pt->instances != y->pt->instances)
        return x->pt->instances < y->pt->instances ? -1 : 1;
    return x->index - y->index;
}

static int has_cost(const rpt_scaling_point *pt)
{
    return pt->feasible && isfinite(pt->usd_per_mtokens) && pt->usd_per_mtokens > 0;
}

/* One panel: column col of every series that has a value there; a panel
 * with none says why (empty_msg) over invisible points, since gnuplot
 * refuses a plot with no valid point. */
static void panel(rpt__buf *gp, int nseries, const char *const *names, const int *have,
                  const int *style, int col, const char *empty_msg)
{
    int any = 0;
    for (int s = 0; s < nseries; s++)
        any |= have[s] && style[s] >= 0;
    if (!any) {
        rpt__buf_puts(gp, "    set label 1 ");
        rpt__gp_str(gp, empty_msg);
        rpt__buf_puts(gp, " at graph 0.5, graph 0.5 center\n"
                          "    unset logscale y\n"
                          "    set yrange [0:1]\n"
                          "    set format y ''\n"
                          "    plot data_file using 2:(0) with points ps 0 notitle\n"
                          "    unset label 1\n"
                          "    set autoscale y\n"
                          "    set logscale y\n");
        return;
    }
    rpt__buf_puts(gp, "    plot ");
    int first = 1;
    for (int s = 0; s < nseries; s++) {
        if (!have[s] || style[s] < 0)
            continue;
        /* each drawn type its own colour and dash (NSTYLES pairs), the
         * marker shifting with each round of colours */
        int k = style[s];
        rpt__buf_printf(gp, "%sdata_file index %d using 2:%d with linespoints lw 2 dt %d pt %d "
                            "ps 1.2 lc rgb '%s' title ",
                        first ? "" : ", \\\n         ", s, col, 1 + k / NSAFE % NDASH,
                        point_type[(k + k / NSAFE) % NPOINTS], safe_color[k % NSAFE]);
        rpt__gp_str(gp, names[s]);
        first = 0;
    }
    rpt__buf_puts(gp, "\n");
}

static int write_plot(rpt_report *r, const void *input, rpt_render *render, st_err *err)
{
    const rpt_scaling *in = input;
    if (in->npoints < 1 || in->npoints > RPT_SCALING_POINTS_MAX || !in->points)
        return ST_RAISE(err, ST_EINVAL, "scaling plot: %d points (1..%d)", in->npoints,
                        RPT_SCALING_POINTS_MAX);
    const char *names[RPT_SCALING_SERIES_MAX];
    int nseries = 0;
    int have_tput[RPT_SCALING_SERIES_MAX] = {0}, have_cost[RPT_SCALING_SERIES_MAX] = {0};
    order *ord = malloc((size_t)in->npoints * sizeof *ord);
    if (!ord)
        return ST_RAISE(err, ST_ENOMEM, "scaling plot: out of memory");
    int rc = ST_OK;
    for (int i = 0; i < in->npoints && rc == ST_OK; i++) {
        const rpt_scaling_point *pt = &in->points[i];
        if (!pt->instance || !*pt->instance)
            rc = ST_RAISE(err, ST_EINVAL, "scaling plot: point %d has no instance type", i);
        else if (pt->instances < 1 || pt->gpus < 0)
            rc = ST_RAISE(err, ST_EINVAL, "scaling plot: %s: %d instances, %d GPUs",
                          pt->instance, pt->instances, pt->gpus);
        else if (pt->feasible && !(isfinite(pt->tokens_per_s) && pt->tokens_per_s > 0))
            rc = ST_RAISE(err, ST_EINVAL, "scaling plot: %d x %s: throughput %g tokens/s",
                          pt->instances, pt->instance, pt->tokens_per_s);
        if (rc != ST_OK)
            break;
        int s = 0;
        while (s < nseries && strcmp(names[s], pt->instance) != 0)
            s++;
        if (s == nseries) {
            if (nseries == RPT_SCALING_SERIES_MAX) {
                rc = ST_RAISE(err, ST_EINVAL, "scaling plot: more than %d instance types",
                              RPT_SCALING_SERIES_MAX);
                break;
            }
            names[nseries++] = pt->instance;
        }
        for (int j = 0; j < i; j++)
            if (ord[j].series == s && in->points[j].instances == pt->instances) {
                rc = ST_RAISE(err, ST_EINVAL, "scaling plot: %d x %s given twice",
                              pt->instances, pt->instance);
                break;
            }
        ord[i] = (order){pt, s, i};
        have_tput[s] |= pt->feasible;
        have_cost[s] |= has_cost(pt);
    }
    if (rc != ST_OK) {
        free(ord);
        return rc;
    }
    qsort(ord, (size_t)in->npoints, sizeof *ord, cmp_order);

    /* more types than a plot tells apart: the fastest NSTYLES are drawn
     * (by their best throughput), every type stays in the table */
    int style[RPT_SCALING_SERIES_MAX];
    double best[RPT_SCALING_SERIES_MAX];
    for (int k = 0; k < nseries; k++)
        best[k] = 0.0;
    for (int i = 0; i < in->npoints; i++)
        if (ord[i].pt->feasible && ord[i].pt->tokens_per_s > best[ord[i].series])
            best[ord[i].series] = ord[i].pt->tokens_per_s;
    int ndrawn = 0;
    for (int k = 0; k < nseries; k++) {
        int faster = 0; /* types ahead of k: faster, or as fast and listed first */
        for (int j = 0; j < nseries; j++)
            faster += best[j] > best[k] || (best[j] == best[k] && j < k);
        style[k] = faster < NSTYLES ? ndrawn++ : -1;
    }

    rpt__plot *p;
    rc = rpt__plot_begin(r, in->name, "scaling", in->title,
                         "Throughput and cost against instance count", DEFAULT_W, DEFAULT_H, &p,
                         err);
    if (rc != ST_OK) {
        free(ord);
        return rc;
    }
    rpt__table *t = &p->table;
    rpt__table_init(t, cols, text_cols, NULL);
    int nfeasible = 0, ncost = 0;
    for (int i = 0; i < in->npoints; i++) {
        const rpt_scaling_point *pt = ord[i].pt;
        rpt__table_row(t, ord[i].series);
        rpt__table_cell(t, pt->instance);
        rpt__table_cellf(t, "%d", pt->instances);
        if (pt->gpus > 0)
            rpt__table_cellf(t, "%d", pt->gpus);
        else
            rpt__table_cell(t, RPT__MISSING);
        rpt__table_num(t, "%.6g", pt->feasible ? pt->tokens_per_s : NAN);
        rpt__table_num(t, "%.6g", has_cost(pt) ? pt->usd_per_mtokens : NAN);
        rpt__table_cell(t, pt->layout ? pt->layout : "");
        nfeasible += pt->feasible;
        ncost += has_cost(pt);
    }
    free(ord);

    rpt__buf gp = {0}, cap = {0};
    rpt__gp_head(&gp, p, "throughput and cost against instance count, one curve per instance "
                         "type (log2 x axis).");
    rpt__buf_puts(&gp, "set logscale x 2\n"
                       "set xlabel 'instances'\n"
                       "set grid\n"
                       "set key top left\n"
                       "set offsets graph 0.05, graph 0.05, graph 0.05, 0\n");
    rpt__gp_loop_begin(&gp, p);
    rpt__buf_puts(&gp, "    set multiplot layout 1,2 title title_text\n"
                       "    # log y: the small types keep their shape beside the large ones\n"
                       "    set logscale y\n"
                       "    set ylabel 'throughput (tokens/s, log scale)'\n"
                       "    set format y '%.1s%c'\n"
                       "    set key top left reverse Left samplen 3\n");
    panel(&gp, nseries, names, have_tput, style, 4, "no cluster size fits the model");
    rpt__buf_puts(&gp, "    set ylabel 'cost (USD per 1M tokens, log scale)'\n"
                       "    set format y '%g'\n"
                       "    unset key\n");
    panel(&gp, nseries, names, have_cost, style, 5, "no price known");
    rpt__buf_puts(&gp, "    unset multiplot\n");
    rpt__gp_loop_end(&gp);

    rpt__buf_printf(&cap, "Training throughput (left, tokens/s) and cost (right, USD per million "
                          "tokens at on-demand prices) of the best layout against the number of "
                          "instances, for %d instance type%s (log2 x axis, log y axes). ",
                    nseries, nseries == 1 ? "" : "s");
    if (ndrawn < nseries)
        rpt__buf_printf(&cap, "The %d fastest are drawn, all %d are in the table. ", ndrawn,
                        nseries);
    rpt__buf_printf(&cap, "%d of %d cluster sizes fit the model", nfeasible, in->npoints);
    if (nfeasible < in->npoints)
        rpt__buf_puts(&cap, " (the others leave gaps)");
    if (ncost < nfeasible)
        rpt__buf_printf(&cap, "; %d without a known price %s no cost", nfeasible - ncost,
                        nfeasible - ncost == 1 ? "has" : "have");
    rpt__buf_puts(&cap, ".");
    rpt__plot_howto(p, "Both axes are logarithmic: on the left a line rising at the slope of the "
                       "grid's diagonal scales perfectly with the instances, a flatter one loses "
                       "throughput to communication; on the right lower is cheaper per token, and "
                       "each type keeps its colour, dash and marker from the key on the left.");
    return rpt__plot_finish(r, p, "best layout per cluster size, one block per instance type; '-' "
                                  "where nothing fits or no price is known",
                            &gp, &cap, render, err);
}

int rpt_scaling_write(rpt_report *r, const rpt_scaling *in, rpt_render *render, st_err *err)
{
    return rpt__plot_write_c(write_plot, r, in, render, err);
}
