/*
 * rpt_accuracy.c: plot 5, predicted against measured step time for
 * recorded and published runs: a log-log scatter with the y = x line and a
 * shaded band of +-band (default 10 %) around it, one colour and key entry
 * per source.
 *
 * The error of a run is 100 (predicted - measured) / measured, the
 * convention of plan_validate.h. accuracy.dat has one block per source in
 * the order sources first appear, runs in the order given. Both axes span
 * the same range (the data's, widened by RANGE_PAD on each side) and the
 * plot is square, so distance from the diagonal reads the same everywhere.
 */
#include "reports/rpt_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_W 820
#define DEFAULT_H 760
#define DEFAULT_BAND 0.10
#define RANGE_PAD 1.5            /* axes from min / RANGE_PAD to max * RANGE_PAD */

static const char *const cols[] = {"source", "label", "measured_s", "predicted_s", "error_pct",
                                   NULL};
static const char *const text_cols[] = {"source", "label", NULL};

typedef struct order {
    const rpt_accuracy_point *pt;
    int series, index;
} order;

static int cmp_order(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->series != y->series)
        return x->series - y->series;
    return x->index - y->index;
}

static const char *source_of(const rpt_accuracy_point *pt)
{
    return pt->source && *pt->source ? pt->source : "unknown source";
}

static int write_plot(rpt_report *r, const void *input, rpt_render *render, st_err *err)
{
    const rpt_accuracy *in = input;
    if (in->npoints < 1 || in->npoints > RPT_ACCURACY_POINTS_MAX || !in->points)
        return ST_RAISE(err, ST_EINVAL, "accuracy plot: %d points (1..%d)", in->npoints,
                        RPT_ACCURACY_POINTS_MAX);
    double band = in->band == 0 ? DEFAULT_BAND : in->band;
    if (!(isfinite(band) && band > 0 && band < 1))
        return ST_RAISE(err, ST_EINVAL, "accuracy plot: error band %g must be in (0, 1)", band);
    const char *names[RPT_ACCURACY_SERIES_MAX];
    int nseries = 0;
    order *ord = malloc((size_t)in->npoints * sizeof *ord);
    if (!ord)
        return ST_RAISE(err, ST_ENOMEM, "accuracy plot: out of memory");
    double lo = 0, hi = 0, sum_abs = 0;
    int within = 0;
    for (int i = 0; i < in->npoints; i++) {
        const rpt_accuracy_point *pt = &in->points[i];
        if (!(isfinite(pt->measured_s) && pt->measured_s > 0 && isfinite(pt->predicted_s) &&
              pt->predicted_s > 0)) {
            free(ord);
            return ST_RAISE(err, ST_EINVAL, "accuracy plot: point %d (%s): measured %g s, "
                            "predicted %g s; both must be positive", i,
                            pt->label ? pt->label : source_of(pt), pt->measured_s,
                            pt->predicted_s);
        }
        int s = 0;
        while (s < nseries && strcmp(names[s], source_of(pt)) != 0)
            s++;
        if (s == nseries) {
            if (nseries == RPT_ACCURACY_SERIES_MAX) {
                free(ord);
                return ST_RAISE(err, ST_EINVAL, "accuracy plot: more than %d sources",
                                RPT_ACCURACY_SERIES_MAX);
            }
            names[nseries++] = source_of(pt);
        }
        ord[i] = (order){pt, s, i};
        double a = fmin(pt->measured_s, pt->predicted_s), b = fmax(pt->measured_s, pt->predicted_s);
        lo = i == 0 || a < lo ? a : lo;
        hi = i == 0 || b > hi ? b : hi;
        double e = (pt->predicted_s - pt->measured_s) / pt->measured_s;
        sum_abs += fabs(e);
        within += fabs(e) <= band;
    }
    qsort(ord, (size_t)in->npoints, sizeof *ord, cmp_order);

    rpt__plot *p;
    int rc = rpt__plot_begin(r, in->name, "accuracy", in->title,
                             "Predicted against measured step time", DEFAULT_W, DEFAULT_H, &p,
                             err);
    if (rc != ST_OK) {
        free(ord);
        return rc;
    }
    rpt__table *t = &p->table;
    rpt__table_init(t, cols, text_cols, NULL);
    for (int i = 0; i < in->npoints; i++) {
        const rpt_accuracy_point *pt = ord[i].pt;
        rpt__table_row(t, ord[i].series);
        rpt__table_cell(t, source_of(pt));
        if (pt->label)
            rpt__table_cell(t, pt->label);
        else
            rpt__table_cellf(t, "#%d", ord[i].index + 1);
        rpt__table_num(t, "%.6g", pt->measured_s);
        rpt__table_num(t, "%.6g", pt->predicted_s);
        rpt__table_num(t, "%.2f", 100.0 * (pt->predicted_s - pt->measured_s) / pt->measured_s);
    }
    free(ord);

    const char *predictor = in->predictor && *in->predictor ? in->predictor : "predicted";
    rpt__buf gp = {0}, cap = {0};
    rpt__gp_head(&gp, p, "predicted against measured step time, log-log, with y = x and an "
                         "error band.");
    rpt__buf_puts(&gp, "band = ");
    rpt__gp_num(&gp, band);
    rpt__buf_puts(&gp, "     # relative error band around y = x\nlo = ");
    rpt__gp_num(&gp, lo / RANGE_PAD);
    rpt__buf_puts(&gp, "\nhi = ");
    rpt__gp_num(&gp, hi * RANGE_PAD);
    rpt__buf_puts(&gp, "\nset title title_text\n"
                       "set logscale xy\n"
                       "set xrange [lo:hi]\n"
                       "set yrange [lo:hi]\n"
                       "set size square\n"
                       "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
                       "set xlabel 'measured step time (s)'\n"
                       "set ylabel ");
    {
        rpt__buf lab = {0};
        rpt__buf_printf(&lab, "%s step time (s)", predictor);
        rpt__gp_str(&gp, lab.oom ? "" : lab.p);
        rpt__buf_fini(&lab);
    }
    rpt__buf_puts(&gp, "\nset key top left box opaque\n"
                       "set samples 2\n");
    rpt__gp_loop_begin(&gp, p);
    rpt__buf_puts(&gp, "    plot '+' using 1:((1 - band) * $1):((1 + band) * $1) with "
                       "filledcurves fillcolor rgb '#cccccc' fillstyle solid 0.5 noborder "
                       "title sprintf('within ±%.0f %%', 100 * band), \\\n"
                       "         (1 - band) * x with lines dt 2 lc rgb '#888888' notitle, \\\n"
                       "         (1 + band) * x with lines dt 2 lc rgb '#888888' notitle, \\\n"
                       "         x with lines lw 1.5 lc rgb 'black' title 'y = x'");
    for (int s = 0; s < nseries; s++) {
        rpt__buf_printf(&gp, ", \\\n         data_file index %d using 3:4 with points "
                             "pt %d ps 1.3 lc rgb '%s' title ",
                        s, 5 + 2 * (s % 4), rpt__series_color[s % RPT_NCOLORS]);
        rpt__gp_str(&gp, names[s]);
    }
    if (in->label_points)
        rpt__buf_puts(&gp, ", \\\n         data_file using 3:4:2 with labels left "
                           "offset 0.8,0.4 font ',8' notitle");
    rpt__buf_puts(&gp, "\n");
    rpt__gp_loop_end(&gp);

    rpt__buf_printf(&cap, "Step time %s%s against measured for %d run%s from %d source%s (log-log; "
                          "one colour per source). On the diagonal the prediction is exact; the "
                          "shaded band is ±%.0f %%. Mean absolute error %.1f %%; %d of %d within "
                          "the band. error_pct is 100 (predicted - measured) / measured.",
                    strcmp(predictor, "predicted") == 0 ? "" : "predicted by the ",
                    predictor, in->npoints, in->npoints == 1 ? "" : "s", nseries,
                    nseries == 1 ? "" : "s", 100 * band, 100 * sum_abs / in->npoints, within,
                    in->npoints);
    rpt__plot_howto(p, "Each point is one run, its measured step time across and the "
                       "predicted one up, both logarithmic: on the diagonal the prediction was "
                       "exact, inside the shaded band within its error bound, above it the "
                       "prediction is slower than the run was.");
    return rpt__plot_finish(r, p, "predicted and measured step time per run, one block per "
                                  "source", &gp, &cap, render, err);
}

int rpt_accuracy_write(rpt_report *r, const rpt_accuracy *in, rpt_render *render, st_err *err)
{
    return rpt__plot_write_c(write_plot, r, in, render, err);
}
