/*
 * sim_plans.h: the simulations a search's answer asks for: its top plans
 * played out and re-ranked by their simulated steps (smdplan plan), and one
 * layout played out with its trace written to a file (smdplan simulate).
 * Times are seconds.
 */
#ifndef SMD_SIM_PLANS_H
#define SMD_SIM_PLANS_H

#include "common/st.h"
#include "planner/plan.h"
#include "sim/sim.h"

/* Simulated step times of the top plans, in their order. */
typedef struct sim_top_steps {
    int n;                       /* 0: not simulated */
    double step_s[PLAN_TOPK_MAX];
    double threshold_pct;        /* the plans whose simulated and planned steps differ by
                                  * more (percent of the planned) are flagged */
    int reranked;                /* the order changed after simulating */
    int extrapolated;            /* plans whose step was extrapolated from windows */
} sim_top_steps;

/* Simulate each plan of r->top (cfg without its trace) and re-rank r->top
 * by the simulated step, stable, unless objective is PLAN_OBJ_MEMORY (the
 * simulator does not change memory): on one cluster cost and throughput
 * rank as the step does. col is set whole; its n stays 0 on error.
 * sim_layout_run's status. */
int sim_top_rank(const plan_model *m, const plan_cluster *c, plan_result *r, const sim_config *cfg,
                 plan_objective objective, double threshold_pct, sim_top_steps *col, st_err *err);

/* Simulate layout l of m on c (sim_layout_run with cfg as given) and, when
 * trace_path is not NULL, write the step's trace there (sim_trace_write,
 * titled "MODEL on N x INSTANCE"; cfg->keep_trace should be set) whole or
 * not at all, replacing an existing file only with force
 * (common/outfile.h; its messages name the file as --trace). On success
 * the caller owns *out (sim_result_fini); on error nothing is kept and the
 * file is as it was. */
int sim_layout_run_trace(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                         const sim_config *cfg, const char *trace_path, int force,
                         sim_result *out, st_err *err);

#endif
