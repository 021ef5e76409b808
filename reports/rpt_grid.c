/*
 * rpt_grid.c: plot 2, step time over the TP x PP grid for one model and
 * cluster, as a heat map.
 *
 * The axes are the distinct TP and PP values given, in increasing order,
 * one cell per pair (so non-powers of two sit evenly between their
 * neighbours). A feasible cell is coloured by its step time and labelled
 * with it; an infeasible one is hatched grey and labelled with its reason;
 * a pair that was not given is light grey and labelled "not evaluated". The
 * colours are viridis, readable with any colour vision and in grey.
 * The fastest cell is outlined. The colour scale turns logarithmic when the
 * step times span more than LOG_CB_SPAN, so near-optimal cells stay apart.
 *
 * grid.dat holds every cell of the product, TP-major; its first two columns
 * are the cell's position on the axes (hidden in the page's table).
 */
#include "reports/rpt_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_W 900
#define DEFAULT_H 640
#define LOG_CB_SPAN 10.0         /* max/min step time above which colour is log-scaled */
#define NOT_EVALUATED "not evaluated"
#define REASON_MAX 40            /* characters of a reason kept in a cell label */

static const char *const cols[] = {"x", "y", "tp", "pp", "step_s", "status", "layout", NULL};
static const char *const text_cols[] = {"status", "layout", NULL};
static const char *const hidden_cols[] = {"x", "y", NULL};

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct values of one degree; their count. */
static int axis(const rpt_grid *in, int use_pp, int *v)
{
    int n = 0;
    for (int i = 0; i < in->ncells; i++) {
        int d = use_pp ? in->cells[i].pp : in->cells[i].tp;
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = v[j] == d;
        if (!seen) {
            if (n == RPT_GRID_AXIS_MAX)
                return n + 1;
            v[n++] = d;
        }
    }
    qsort(v, (size_t)n, sizeof *v, cmp_int);
    return n;
}

static int index_of(const int *v, int n, int d)
{
    for (int i = 0; i < n; i++)
        if (v[i] == d)
            return i;
    return -1;
}

static int check(const rpt_grid *in, st_err *err)
{
    if (in->ncells < 1 || in->ncells > RPT_GRID_CELLS_MAX || !in->cells)
        return ST_RAISE(err, ST_EINVAL, "grid plot: %d cells (1..%d)", in->ncells,
                        RPT_GRID_CELLS_MAX);
    for (int i = 0; i < in->ncells; i++) {
        const rpt_grid_cell *c = &in->cells[i];
        if (c->tp < 1 || c->pp < 1)
            return ST_RAISE(err, ST_EINVAL, "grid plot: cell %d has TP %d, PP %d (>= 1)", i,
                            c->tp, c->pp);
        if (c->feasible && !(isfinite(c->step_s) && c->step_s > 0))
            return ST_RAISE(err, ST_EINVAL, "grid plot: feasible cell TP %d PP %d has step "
                            "time %g s", c->tp, c->pp, c->step_s);
        for (int j = 0; j < i; j++)
            if (in->cells[j].tp == c->tp && in->cells[j].pp == c->pp)
                return ST_RAISE(err, ST_EINVAL, "grid plot: cell TP %d PP %d given twice",
                                c->tp, c->pp);
    }
    return ST_OK;
}

/* The caption: the feasible cells and their range, the fastest, the
 * infeasible and the positions not evaluated. */
static void grid_caption(rpt__buf *cap, const rpt_grid *in, int nfeasible, int ninfeasible,
                         int best, double lo, double hi, int positions)
{
    rpt__buf_printf(cap, "Step time of the best layout at each tensor-parallel (TP) and "
                         "pipeline-parallel (PP) degree: %d feasible cell%s",
                    nfeasible, nfeasible == 1 ? "" : "s");
    if (best >= 0)
        rpt__buf_printf(cap, ", from %.3g s to %.3g s; the fastest (TP %d, PP %d) is outlined",
                        lo, hi, in->cells[best].tp, in->cells[best].pp);
    if (ninfeasible > 0)
        rpt__buf_printf(cap, ". %d infeasible cell%s hatched and labelled with why",
                        ninfeasible, ninfeasible == 1 ? " is" : "s are");
    int blank = positions - in->ncells;
    if (blank > 0)
        rpt__buf_printf(cap, "%s%d pair%s the search did not evaluate %s labelled \"not "
                       "evaluated\"", ninfeasible > 0 ? "; " : ". ", blank,
                        blank == 1 ? "" : "s", blank == 1 ? "is" : "are");
    rpt__buf_puts(cap, ".");
}

static int write_plot(rpt_report *r, const void *input, rpt_render *render, st_err *err)
{
    const rpt_grid *in = input;
    int rc = check(in, err);
    if (rc != ST_OK)
        return rc;
    int tps[RPT_GRID_AXIS_MAX + 1], pps[RPT_GRID_AXIS_MAX + 1];
    int ntp = axis(in, 0, tps), npp = axis(in, 1, pps);
    if (ntp > RPT_GRID_AXIS_MAX || npp > RPT_GRID_AXIS_MAX)
        return ST_RAISE(err, ST_EINVAL, "grid plot: more than %d distinct TP or PP values",
                        RPT_GRID_AXIS_MAX);
    /* Which given cell sits at each (tp, pp) position, -1 for none. */
    int *at = malloc((size_t)ntp * (size_t)npp * sizeof *at);
    if (!at)
        return ST_RAISE(err, ST_ENOMEM, "grid plot: out of memory");
    for (int i = 0; i < ntp * npp; i++)
        at[i] = -1;
    int best = -1, nfeasible = 0, ninfeasible = 0;
    double lo = 0, hi = 0;
    for (int i = 0; i < in->ncells; i++) {
        const rpt_grid_cell *c = &in->cells[i];
        at[index_of(tps, ntp, c->tp) * npp + index_of(pps, npp, c->pp)] = i;
    }
    /* The fastest cell, ties to the smallest TP then PP: scan in axis order. */
    for (int x = 0; x < ntp; x++)
        for (int y = 0; y < npp; y++) {
            int i = at[x * npp + y];
            if (i < 0)
                continue;
            if (!in->cells[i].feasible) {
                ninfeasible++;
                continue;
            }
            double s = in->cells[i].step_s;
            if (nfeasible == 0 || s < lo)
                lo = s;
            if (nfeasible == 0 || s > hi)
                hi = s;
            if (best < 0 || s < in->cells[best].step_s)
                best = i;
            nfeasible++;
        }

    rpt__plot *p;
    rc = rpt__plot_begin(r, in->name, "grid", in->title, "Step time over TP x PP", DEFAULT_W,
                         DEFAULT_H, &p, err);
    if (rc != ST_OK) {
        free(at);
        return rc;
    }
    rpt__table *t = &p->table;
    rpt__table_init(t, cols, text_cols, hidden_cols);
    for (int x = 0; x < ntp; x++)
        for (int y = 0; y < npp; y++) {
            int i = at[x * npp + y];
            const rpt_grid_cell *c = i >= 0 ? &in->cells[i] : NULL;
            rpt__table_row(t, 0);
            rpt__table_cellf(t, "%d", x);
            rpt__table_cellf(t, "%d", y);
            rpt__table_cellf(t, "%d", tps[x]);
            rpt__table_cellf(t, "%d", pps[y]);
            rpt__table_num(t, "%.6g", c && c->feasible ? c->step_s : NAN);
            if (!c)
                rpt__table_cell(t, NOT_EVALUATED);
            else if (c->feasible)
                rpt__table_cell(t, "ok");
            else
                rpt__table_cellf(t, "%.*s", REASON_MAX,
                                 c->reason && *c->reason && strcmp(c->reason, "ok") != 0 &&
                                         strcmp(c->reason, NOT_EVALUATED) != 0
                                     ? c->reason
                                     : "infeasible");
            rpt__table_cell(t, c && c->layout ? c->layout : "");
        }

    rpt__buf gp = {0}, cap = {0};
    rpt__gp_head(&gp, p, "step time over the TP x PP grid, as a heat map.");
    rpt__buf_puts(&gp, "set title title_text\n"
                       "set xlabel 'tensor-parallel degree (TP)'\n"
                       "set ylabel 'pipeline-parallel degree (PP)'\n"
                       "set xtics scale 0 (");
    for (int x = 0; x < ntp; x++)
        rpt__buf_printf(&gp, "%s'%d' %d", x ? ", " : "", tps[x], x);
    rpt__buf_puts(&gp, ")\nset ytics scale 0 (");
    for (int y = 0; y < npp; y++)
        rpt__buf_printf(&gp, "%s'%d' %d", y ? ", " : "", pps[y], y);
    rpt__buf_printf(&gp, ")\nset xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\n", ntp - 1, npp - 1);
    rpt__buf_puts(&gp, "unset key\n"
                       "set cblabel 'step time (s)'\n"
                       "ok(s) = s eq 'ok'\n"
                       "# dark is fast, yellow is slow: viridis (van der Walt and Smith 2015),\n"
                       "# even in lightness and readable with any colour vision\n"
                       "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21908d', "
                       "0.75 '#5dc963', 1 '#fde725')\n");
    int logcb = nfeasible > 0 && hi / lo > LOG_CB_SPAN;
    if (logcb)
        rpt__buf_puts(&gp, "set logscale cb\n");
    /* a cell's label in white on the dark (fast) half of the scale */
    rpt__buf_puts(&gp, "# the label of a cell: white on the dark half of the colour scale\n"
                       "lo = ");
    rpt__gp_num(&gp, nfeasible > 0 ? lo : 1.0);
    rpt__buf_puts(&gp, "\nhi = ");
    rpt__gp_num(&gp, nfeasible > 0 && hi > lo ? hi : (nfeasible > 0 ? lo * 2 : 2.0));
    rpt__buf_printf(&gp, "\nshade(t) = %s\n",
                    logcb ? "(log(t) - log(lo)) / (log(hi) - log(lo))" : "(t - lo) / (hi - lo)");
    rpt__buf_puts(&gp, "# (t is the step as text: a '-' in a numeric column would drop the label)\n"
                       "label_rgb(s, t) = ok(s) ? (shade(t + 0) < 0.5 ? 0xffffff : 0x000000) : "
                       "0x000000\n");
    if (nfeasible == 0)
        rpt__buf_puts(&gp, "unset colorbox\n");
    if (best >= 0) {
        int bx = index_of(tps, ntp, in->cells[best].tp);
        int by = index_of(pps, npp, in->cells[best].pp);
        rpt__buf_printf(&gp, "# the fastest cell: TP %d, PP %d\n"
                             "set object 1 rect center %d,%d size 0.96,0.96 front "
                             "fillstyle empty border lc rgb '#e69f00' lw 4\n",
                        tps[bx], pps[by], bx, by);
    }
    rpt__buf_puts(&gp, "# Step time as text: a '-' in a numeric column would drop the label.\n"
                       "cell_label(s, step) = ok(s) ? sprintf('%.3g s', step + 0) : s\n");
    rpt__gp_loop_begin(&gp, p);
    rpt__buf_puts(&gp, "    plot ");
    if (nfeasible > 0)
        rpt__buf_puts(&gp, "data_file using 1:2:(0.5):(0.5):(ok(strcol(6)) ? $5 : NaN) "
                           "with boxxyerror fillstyle solid 1.0 border lc rgb 'white' "
                           "fillcolor palette, \\\n         ");
    if (ninfeasible > 0)
        rpt__buf_puts(&gp, "data_file using 1:(ok(strcol(6)) || strcol(6) eq '" NOT_EVALUATED
                           "' ? NaN : $2):(0.5):(0.5) with boxxyerror fillstyle pattern 4 "
                           "border lc rgb 'white' fillcolor rgb '#bbbbbb', \\\n         ");
    if (ntp * npp > in->ncells)
        rpt__buf_puts(&gp, "data_file using 1:(strcol(6) eq '" NOT_EVALUATED "' ? $2 : NaN):"
                           "(0.5):(0.5) with boxxyerror fillstyle solid 1.0 border lc rgb "
                           "'white' fillcolor rgb '#f2f2f2', \\\n         ");
    rpt__buf_puts(&gp, "data_file using 1:2:(cell_label(strcol(6), strcol(5))):"
                       "(label_rgb(strcol(6), strcol(5))) with labels font ',9' tc rgb variable\n");
    rpt__gp_loop_end(&gp);

    grid_caption(&cap, in, nfeasible, ninfeasible, best, lo, hi, ntp * npp);
    free(at);
    rpt__plot_howto(p, "Each cell is the fastest layout the search found with that tensor- and "
                       "pipeline-parallel degree: dark purple is fast, yellow slow (the bar on "
                       "the right gives seconds), the outlined cell is the fastest, hatched cells "
                       "do not fit in memory and grey ones were not evaluated.");
    return rpt__plot_finish(r, p, "step time per (TP, PP); x and y are the cell's position on "
                                  "the axes, step_s '-' where no layout runs", &gp, &cap, render,
                            err);
}

int rpt_grid_write(rpt_report *r, const rpt_grid *in, rpt_render *render, st_err *err)
{
    return rpt__plot_write_c(write_plot, r, in, render, err);
}
