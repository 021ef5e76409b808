/*
 * rpt_plan.h: a search's answer as the text of `smdplan [plan]` and
 * `smdplan simulate`: the resolved model, cluster and stack, the ranked
 * plans in one table that fits the terminal (rpt_table.h), the sentences on
 * why #1 wins, its error band and training time, the layouts rejected, why
 * nothing fits, --explain's terms, a preset's reference layout beside #1
 * and a simulated step.
 *
 * Text goes to the FILE * given; tables and paragraphs are fitted to the
 * terminal's width, not to f's. Every argument is borrowed for the call.
 * Memory is printed in GiB (2^30 bytes), times in seconds.
 */
#ifndef SMD_RPT_PLAN_H
#define SMD_RPT_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "planner/plan.h"
#include "planner/plan_preset_cmp.h"
#include "reports/rpt_table.h"
#include "sim/sim.h"
#include "sim/sim_plans.h"

/* What the text of a search says beyond the planner's values. */
typedef struct rpt_plan_opts {
    plan_objective objective;    /* what the plans were ranked by */
    const char *batch_source;    /* where a global batch not defaulted came from; NULL */
    const char *price_list;      /* the prices' source, one phrase */
    double band_pct;             /* the error band of plan #1's step, percent; 0: none,
                                  * band_basis says why */
    const char *band_basis;      /* one sentence on the band's basis */
    double train_tokens;         /* > 0: the time and cost of training them with #1 */
    const sim_top_steps *sim;    /* the top plans' simulated steps; NULL: not simulated */
} rpt_plan_opts;

/* "model:   NAME, SIZE parameters (...): ..." and its shape's source. */
void rpt_plan_model(FILE *f, const plan_model *m);
/* "cluster: N x TYPE = ..." with its price, and "prices:  " price_list. */
void rpt_plan_cluster(FILE *f, const plan_cluster *c, const char *price_list);
/* "stack:   " the stack of framework index framework, and whose
 * efficiencies c uses (a fit's, the chip's fitted ones, or the GPU's own). */
void rpt_plan_stack(FILE *f, int framework, const plan_cluster *c);
/* "layout:  tp .., pp .., dp .., ..." of one layout, one line. */
void rpt_plan_layout(FILE *f, const plan_layout *l);

/* The model, cluster, stack (when r has a plan), batch and search lines,
 * wrapped under their labels. */
void rpt_plan_head(FILE *f, const plan_model *m, const plan_cluster *c, const plan_result *r,
                   const rpt_plan_opts *o);

/* A layout's recompute cell as every table shows it (sel, full/k, +off)
 * into buf (n bytes); returns buf. */
const char *rpt_plan_recomp_label(const plan_layout *l, char *buf, size_t n);
/* The sentence that explains the plan table's layout columns. */
const char *rpt_plan_columns_key(void);
/* A plan's row from the degrees to the optimizer step, after the caller's
 * first cell: the same columns in the plan table and in a preset's
 * comparison. Time terms under half a microsecond are 0. */
void rpt_plan_cells(rpt_table *t, const plan_layout *l, const plan_estimate *e);

/* The whole answer of a search with plans: the head, the table of r's
 * plans (with their simulated steps when o->sim has them), its key, the
 * simulation's notes, then wrapped: the twins left out, why #1 wins, its
 * error band, the time to train o->train_tokens, the rejected layouts. */
void rpt_plan_result(FILE *f, const plan_model *m, const plan_cluster *c, const plan_result *r,
                     const rpt_plan_opts *o);
/* Why the search found nothing (r->ntop == 0): the head, the rejected
 * layouts, the closest layout out of memory, and min_nodes, the fewest
 * instances that fit (0: none up to 16384). */
void rpt_plan_infeasible(FILE *f, const plan_model *m, const plan_cluster *c,
                         const plan_result *r, int min_nodes, const rpt_plan_opts *o);

/* --explain: every term of a plan under its group, with its value, formula
 * and source. */
void rpt_plan_terms(FILE *f, const plan_terms *t);
/* --explain's last group: the step step_s and its error band band_pct with
 * its basis. */
void rpt_plan_uncertainty(FILE *f, double step_s, double band_pct, const char *basis);

/* A preset's reference layout beside ours, plan #1, and why they differ;
 * nothing when p->shown is 0. */
void rpt_plan_preset(FILE *f, const plan_preset_cmp *p, const plan_candidate *ours);

/* A simulated step (cfg, the configuration it ran with): against the
 * planner's (flagged beyond threshold_pct percent), its Monte Carlo spread,
 * extrapolation, bubble, bounds, critical path and a table of its stages. */
void rpt_plan_sim(FILE *f, const sim_config *cfg, const sim_result *r, double threshold_pct);

#endif
