/*
 * rpt_page.h: the page of `smdplan report` composed from plain data: its
 * titles, its opening summary (a search's recommended plan, or a
 * comparison's recommended cluster), the simulations' plots with captions
 * saying whose layout they show, the accuracy plots and the closing note
 * naming what the records lack. The caller reads the records (data/) and
 * hands them over in the structs below; each is borrowed for the call.
 */
#ifndef SMD_RPT_PAGE_H
#define SMD_RPT_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"
#include "planner/plan.h"
#include "reports/rpt.h"
#include "sim/sim.h"

/* A recorded plan of a search or comparison. */
typedef struct rpt_page_plan {
    const char *role;            /* "top" (ranked), "option" (comparison), "grid", ... */
    int rank;                    /* 1.. for "top" */
    const char *instance_type;
    const char *gpu;
    int nodes, gpus;
    const char *label;           /* the layout in a few words */
    const plan_layout *layout;   /* with its framework and precision */
    int have_est;                /* est holds the prediction */
    const plan_estimate *est;
    double simulated_s;          /* simulated step; 0 = not simulated */
} rpt_page_plan;

/* The page's title (model, parameters, plan #1's cluster when one is not
 * NULL) and the scaling plot's, into title and scale_title; both "" when m
 * is NULL. */
void rpt_page_titles(const plan_model *m, const rpt_page_plan *one, char *title, size_t title_len,
                     char *scale_title, size_t scale_title_len);

/* The launch settings of plan #1, made by the caller as smdplan --emit
 * prints them. */
typedef struct rpt_page_launch {
    const char *what;            /* the --emit target: "launch", "sagemaker", "mpirun" */
    const char *text;            /* the settings; NULL when they could not be made */
    const char *error;           /* why not, when text is NULL; "" or NULL: not said */
} rpt_page_launch;

/* The page's opening for a search: the recommended plan one (plan #1 of
 * the npl plans pl), its model (m, may be NULL), cluster, predicted step,
 * throughput, cost, memory headroom, the runner-up and the launch
 * settings. rpt_report_set_summary's codes. */
int rpt_page_summary(rpt_report *r, const rpt_page_plan *one, const plan_model *m,
                     const rpt_page_plan *pl, int npl, const rpt_page_launch *launch, st_err *err);

/* The page's opening for a comparison of instance types and counts (its
 * "option" plans among pl): the fastest and the cheapest option per token.
 * m may be NULL. rpt_report_set_summary's codes. */
int rpt_page_comparison_summary(rpt_report *r, const plan_model *m, const rpt_page_plan *pl,
                                int npl, st_err *err);

/* A simulation record to draw. */
typedef struct rpt_page_sim {
    int64_t id;                  /* the record */
    int mine;                    /* it played out plan #1's layout and cluster */
    const char *label;           /* "LAYOUT on N x TYPE"; "" unknown */
    const sim_result *sim;
} rpt_page_sim;

/* The per-stage busy time and bubble of stages and the timeline of trace
 * (either may be NULL: not drawn), each captioned with whose layout it is
 * against plan #1 (one_label, the label of plan #1; NULL when there is
 * none). *have_stages and *have_timeline say what was drawn. The writers'
 * codes; the timeline is not tried after a failed stages plot. */
int rpt_page_simulations(rpt_report *r, const rpt_page_sim *stages, const rpt_page_sim *trace,
                         const char *one_label, int *have_stages, int *have_timeline,
                         st_err *err);

/* A run measured (executed with smdplan exec, or published) with what the
 * planner predicted and the simulator played out for it. */
typedef struct rpt_page_run {
    const char *source;          /* "measured" (smdplan exec) or "published" */
    const char *source_key;      /* a published run's source; "" */
    const char *row_id;          /* a published run's row; "" */
    const char *layout;          /* "" when not recorded */
    double measured_s, predicted_s, simulated_s; /* 0 = none */
} rpt_page_run;

/* Predicted (planner) and simulated against measured step time of the n
 * runs: one plot each, drawn when a run has both. The writer's codes. */
int rpt_page_accuracy(rpt_report *r, const rpt_page_run *runs, int n, st_err *err);

/* What the page was made from and which plots the records allowed. */
typedef struct rpt_page_sources {
    const char *db_path;
    int64_t plan_id;             /* the search drawn; 0: runs only */
    int have_scaling, have_stages, have_timeline, have_accuracy;
    int worst_only;              /* plans drawn with their worst stage only */
} rpt_page_sources;

/* Write index.html (rpt_html_write) with a note saying where the page is
 * from and what is not in the records yet, with the command that records
 * it. rpt_html_write's codes. */
int rpt_page_finish(rpt_report *r, const rpt_page_sources *src, st_err *err);

#endif
