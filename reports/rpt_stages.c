/*
 * rpt_stages.c: plot 6, where each pipeline stage's time goes in a
 * simulated step: one stacked bar per stage, compute (busy) from the
 * bottom, then the bubble (the pipeline span the stage spends waiting),
 * then the gradient sync the stage cannot hide behind its backward. It
 * needs only the per-stage figures every simulation records, so a
 * simulation recorded without its trace still shows how balanced the
 * pipeline is and where the bubble sits.
 *
 * stages.dat has one row per stage: busy, bubble (span - busy, never
 * negative), exposed gradient sync, the bubble as a share of busy time
 * (Narayanan et al. 2021's bubble fraction, as sim.h defines it) and the
 * stage's outgoing link time.
 */
#include "reports/rpt_int.h"

#include <math.h>
#include <stdio.h>

#define DEFAULT_W 900
#define DEFAULT_H 520

static const char *const cols[] = {"stage", "busy_s", "bubble_s", "dp_exposed_s",
                                   "bubble_pct", "send_busy_s", NULL};

static int write_plot(rpt_report *r, const void *input, rpt_render *render, st_err *err)
{
    const rpt_stages *in = input;
    if (in->pp < 1 || in->pp > PLAN_PP_MAX || !in->stage)
        return ST_RAISE(err, ST_EINVAL, "stages plot: %d pipeline stages (1..%d)", in->pp,
                        PLAN_PP_MAX);
    if (!(isfinite(in->pipeline_s) && in->pipeline_s > 0))
        return ST_RAISE(err, ST_EINVAL, "stages plot: pipeline span %g s (> 0)", in->pipeline_s);
    for (int i = 0; i < in->pp; i++) {
        const sim_stage_stats *s = &in->stage[i];
        if (!(isfinite(s->busy_s) && s->busy_s >= 0 && isfinite(s->dp_exposed_s) &&
              s->dp_exposed_s >= 0 && isfinite(s->send_busy_s) && s->send_busy_s >= 0))
            return ST_RAISE(err, ST_EINVAL, "stages plot: stage %d: busy %g s, exposed sync %g "
                            "s, sends %g s; all >= 0", i, s->busy_s, s->dp_exposed_s,
                            s->send_busy_s);
    }
    rpt__plot *p;
    int rc = rpt__plot_begin(r, in->name, "stages", in->title,
                             "Busy time and bubble per pipeline stage", DEFAULT_W, DEFAULT_H,
                             &p, err);
    if (rc != ST_OK)
        return rc;
    rpt__table *t = &p->table;
    rpt__table_init(t, cols, NULL, NULL);
    double most_idle = 0, busy_sum = 0;
    int idlest = 0;
    for (int i = 0; i < in->pp; i++) {
        const sim_stage_stats *s = &in->stage[i];
        double idle = in->pipeline_s - s->busy_s;
        if (idle < 0)
            idle = 0;
        if (idle > most_idle) {
            most_idle = idle;
            idlest = i;
        }
        busy_sum += s->busy_s;
        rpt__table_row(t, 0);
        rpt__table_cellf(t, "%d", i);
        rpt__table_num(t, "%.6g", s->busy_s);
        rpt__table_num(t, "%.6g", idle);
        rpt__table_num(t, "%.6g", s->dp_exposed_s);
        rpt__table_num(t, "%.4g", s->busy_s > 0 ? 100.0 * idle / s->busy_s : NAN);
        rpt__table_num(t, "%.6g", s->send_busy_s);
    }

    rpt__buf gp = {0}, cap = {0};
    rpt__gp_head(&gp, p, "busy time, bubble and exposed gradient sync per pipeline stage.");
    rpt__buf_puts(&gp, "set title title_text\n"
                       "set xlabel 'pipeline stage'\n"
                       "set ylabel 'time in the step (s)'\n"
                       "set style fill solid 1.0 border lc rgb 'white'\n"
                       "set boxwidth 0.7\n"
                       "set yrange [0:*]\n"
                       "set grid ytics\n"
                       "set key outside right top vertical Left reverse\n");
    rpt__buf_printf(&gp, "set xrange [-0.6:%d.6]\n", in->pp - 1);
    if (in->pp <= 32)
        rpt__buf_puts(&gp, "set xtics 1\n");
    rpt__gp_loop_begin(&gp, p);
    /* stacked by hand: each segment a box from its base to its top; the
     * colours are Okabe and Ito's (any colour vision), the bubble hatched */
    rpt__buf_puts(&gp, "    plot data_file using 1:($2/2):(0.35):($2/2) with boxxyerror "
                       "fillstyle solid 1.0 fillcolor rgb '#0072b2' title 'compute (busy)', \\\n"
                       "         data_file using 1:($2+$3/2):(0.35):($3/2) with boxxyerror "
                       "fillstyle pattern 2 fillcolor rgb '#e69f00' title 'bubble (waiting)', "
                       "\\\n"
                       "         data_file using 1:($2+$3+$4/2):(0.35):($4/2) with boxxyerror "
                       "fillstyle solid 1.0 fillcolor rgb '#009e73' title 'gradient sync not "
                       "hidden'");
    if (in->step_s > 0) {
        rpt__buf_puts(&gp, ", \\\n         ");
        rpt__gp_num(&gp, in->step_s);
        rpt__buf_puts(&gp, " with lines dt 2 lw 1.5 lc rgb 'black' title 'step (optimizer "
                           "included)'");
    }
    rpt__buf_puts(&gp, "\n");
    rpt__gp_loop_end(&gp);

    double overall = busy_sum > 0 ? (in->pp * in->pipeline_s - busy_sum) / busy_sum : 0;
    rpt__buf_printf(&cap, "How each of the %d pipeline stage%s spends the pipeline span of "
                          "%.4g s: computing (blue), waiting for the other stages (the bubble, "
                          "hatched orange: %.1f%% of the busy time over all stages) and "
                          "synchronising gradients past its last backward (green)",
                    in->pp, in->pp == 1 ? "" : "s", in->pipeline_s, 100 * overall);
    if (in->pp > 1)
        rpt__buf_printf(&cap, "; stage %d waits the most (%.4g s)", idlest, most_idle);
    rpt__buf_puts(&cap, ".");
    if (in->note && *in->note) {
        rpt__buf_puts(&cap, " ");
        rpt__buf_puts(&cap, in->note);
    }
    rpt__plot_howto(p, "Each bar is one pipeline stage's step from the bottom up: blue it "
                       "computes, hatched orange it waits for the others (the bubble), green it "
                       "waits for its gradients to be synchronised; bars of equal blue mean a "
                       "balanced pipeline.");
    return rpt__plot_finish(r, p, "per pipeline stage of a simulated step: busy, bubble and "
                                  "exposed gradient sync in seconds",
                            &gp, &cap, render, err);
}

int rpt_stages_write(rpt_report *r, const rpt_stages *in, rpt_render *render, st_err *err)
{
    return rpt__plot_write_c(write_plot, r, in, render, err);
}
