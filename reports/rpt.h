/*
 * rpt.h: the reports library: plots and an HTML page a capacity planner
 * wants to look at, made from plain data.
 *
 * A report is an output directory. Each plot writes three kinds of file
 * there, all named after the plot (NAME, default "memory", "grid", ...):
 *
 *   NAME.dat   the data, one row per bar / cell / point / op, a comment
 *              header naming the columns with their units;
 *   NAME.gp    a gnuplot script that reads NAME.dat by its relative name and
 *              writes NAME.png (pngcairo) and NAME.svg, so a user can change
 *              either file and run `gnuplot NAME.gp` inside the directory;
 *   NAME.png, NAME.svg  by running that script with gnuplot (when asked to
 *              and when gnuplot is found).
 *
 * rpt_html_write() then writes index.html: every plot (the PNG, linked to its
 * SVG) with the table behind it (the rows of NAME.dat) and a caption saying
 * what it shows and how to re-render it. The page needs nothing from the
 * network.
 *
 * The library knows nothing of the records database: the caller (the
 * `report` command) reads its records into the structs below. Each input
 * struct and every pointer in it is borrowed for the call only.
 *
 * Output is deterministic: the same inputs give byte-identical .dat, .gp and
 * .html files (nothing time- or host-dependent is written unless the caller
 * passes it in, e.g. in the page's note), in any locale the program set:
 * numbers are always written with a decimal point (the "C" numeric locale
 * is used for the duration of each call, per thread).
 *
 * gnuplot is found as rpt_config.gnuplot, else $SMDPLAN_GNUPLOT (when set
 * and non-empty), else "gnuplot" on PATH, and run in the output directory
 * (fork and exec; its error output becomes the st_err message). When it is
 * not found, the .dat and .gp files are still written, the call returns
 * ST_OK and reports RPT_RENDER_NO_GNUPLOT: print rpt_gnuplot_hint().
 *
 * Units are in the names (_bytes, _s, _usd); the files show GiB (2^30 bytes)
 * and milliseconds where those read better, and say so in their headers.
 */
#ifndef SMD_RPT_H
#define SMD_RPT_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"
#include "planner/plan.h"
#include "sim/sim.h"

/* ------------------------------------------------------------------------ */
/* Report                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct rpt_report rpt_report;

/* What happened to a plot's images. Ordered from best to worst: a report's
 * state (rpt_report_render) is the worst of its plots'. */
typedef enum rpt_render {
    RPT_RENDER_OK = 0,        /* gnuplot wrote NAME.png and NAME.svg */
    RPT_RENDER_OFF,           /* not asked for (rpt_config.render = 0): .dat and .gp only */
    RPT_RENDER_NO_GNUPLOT,    /* gnuplot not found: .dat and .gp only */
    RPT_RENDER_FAILED,        /* gnuplot ran and failed (the call returned ST_EIO) */
} rpt_render;

const char *rpt_render_name(rpt_render r); /* "rendered", "off", "no gnuplot", "failed" */

/* One line for the user when gnuplot was not found: how to install it and
 * how to render the scripts afterwards. Static string, no newline. */
const char *rpt_gnuplot_hint(void);

#define RPT_NAME_MAX 64          /* plot names: [A-Za-z0-9_-], 1..63 characters */
#define RPT_IMAGE_MAX_PX 8000    /* largest image side accepted */

typedef struct rpt_config {
    int render;                  /* 1 (default): run gnuplot after writing each script */
    const char *gnuplot;         /* program; NULL: $SMDPLAN_GNUPLOT if set and non-empty,
                                  * else "gnuplot" searched on PATH. A name with a '/' is
                                  * a path. Borrowed until rpt_report_new returns. */
    int width_px, height_px;     /* image size; 0 = each plot's own default */
    int html_max_rows;           /* rows of each table shown in index.html (the .dat
                                  * always has all of them); default 200, >= 1 */
    int replace;                 /* 1: files already in dir are replaced (--force);
                                  * 0 (default): none is (common/outfile.h), and a dir
                                  * that holds a file the report writes is refused
                                  * before anything is written */
} rpt_config;

void rpt_config_default(rpt_config *cfg);

/* Start a report in dir, creating the directory (and its parents) when
 * missing. cfg may be NULL (defaults). ST_EINVAL for a bad config, when
 * dir is not a directory or may not be written, or when index.html or a
 * file of a plot of a default name (NAME.dat, .gp, .png, .svg) is there and
 * may not be replaced (any, without cfg->replace; a link or a file of
 * several links, even with it: common/outfile.h); ST_ENOENT / ST_EIO when
 * it cannot be created (with the system's reason), ST_ENOMEM. */
int rpt_report_new(const char *dir, const rpt_config *cfg, rpt_report **out, st_err *err);

/* rpt_report_free(NULL) is harmless. Files already written stay. */
void rpt_report_free(rpt_report *r);

/* The worst render state of the plots written so far (RPT_RENDER_OK when
 * none). */
rpt_render rpt_report_render(const rpt_report *r);

/* Plots written so far, in order, and a plot's name (NULL out of range). */
int rpt_report_nplots(const rpt_report *r);
const char *rpt_report_plot_name(const rpt_report *r, int i);

/*
 * Every plot writer below:
 *   - validates its input (ST_EINVAL with a message naming the bad value;
 *     nothing is written then), and refuses a name already used in r;
 *   - writes NAME.dat and NAME.gp, each whole or not at all (a temporary
 *     renamed over the old file; a file that cannot be written is an error
 *     with the system's reason: ST_EINVAL / ST_ENOENT for a path that may not
 *     be written, ST_EIO for a failed write);
 *   - with rendering on, runs gnuplot on temporary image names and renames
 *     them to NAME.png / NAME.svg once both are complete (images a failed
 *     run did not make are left alone, and the page does not show them):
 *     *render (if non-NULL) gets RPT_RENDER_OK, RPT_RENDER_NO_GNUPLOT (the
 *     call still returns ST_OK) or RPT_RENDER_FAILED (returns ST_EIO with
 *     gnuplot's error message; the plot stays in the report, so the page can
 *     still be written and says so);
 *   - adds the plot and its table to r for rpt_html_write.
 * name and title may be NULL: the plot's default name and a generic title.
 */

/* ------------------------------------------------------------------------ */
/* 1. Memory per GPU by term and pipeline stage, for the top plans           */
/* ------------------------------------------------------------------------ */

/* One plan: a group of stacked bars, one per pipeline stage given, labelled
 * "#RANK sSTAGE" ("#1 s0", "#1 s1", ...). Each bar stacks the nine terms of
 * plan_mem (weights, gradients, optimizer, activations, recompute working
 * set, logits, comm buffers, CUDA context, allocator); the total shown is
 * their sum (total_bytes is not read). A plan given more than
 * RPT_MEM_STAGES_SHOWN stages gets three bars, its first, worst (largest
 * total) and last entries, and the caption says so; a plan given fewer
 * stages than it has (pp) is named in the caption with the stages shown. */
typedef struct rpt_mem_plan {
    const char *label;           /* the plan in a few words, "tp8 pp4 dp2 mb1 1F1B" */
    int nstages;                 /* entries, 1..PLAN_PP_MAX, in stage order */
    const plan_mem *stage_mem;   /* nstages entries, bytes per GPU by term */
    const int *stage;            /* pipeline rank of each entry (< pp); NULL = 0, 1, 2, ...
                                  * (a caller with only the worst stage passes
                                  * nstages = 1 and &est.worst_stage) */
    int pp;                      /* the plan's pipeline stages, nstages..PLAN_PP_MAX;
                                  * 0 = nstages */
} rpt_mem_plan;

typedef struct rpt_memory {
    const char *name;            /* default "memory" */
    const char *title;           /* "gpt3-175b on 16 x p4d.24xlarge" */
    const char *gpu;             /* GPU type for the caption, "A100-40GB"; may be NULL */
    double capacity_bytes;       /* the GPU's memory: the horizontal line, > 0 */
    int nplans;                  /* 1..RPT_MEM_PLANS_MAX, best first */
    const rpt_mem_plan *plans;
} rpt_memory;

#define RPT_MEM_PLANS_MAX 64
#define RPT_MEM_BARS_MAX 4096    /* bars over all plans */
#define RPT_MEM_STAGES_SHOWN 16  /* stages of one plan drawn in full; more: first, worst, last */

int rpt_memory_write(rpt_report *r, const rpt_memory *in, rpt_render *render, st_err *err);

/* ------------------------------------------------------------------------ */
/* 2. Step time over the TP x PP grid (heat map)                             */
/* ------------------------------------------------------------------------ */

/* One (TP, PP) cell: the best layout with those degrees, or why there is
 * none. Cells of the TP x PP product that are not given are drawn blank and
 * listed as "not evaluated". */
typedef struct rpt_grid_cell {
    int tp, pp;                  /* >= 1; each pair at most once */
    int feasible;                /* 1: step_s is the best step time here */
    double step_s;               /* > 0 when feasible */
    const char *reason;          /* when infeasible: short, "OOM", "heads"; NULL = "infeasible" */
    const char *layout;          /* optional: the best layout here, for the table */
} rpt_grid_cell;

typedef struct rpt_grid {
    const char *name;            /* default "grid" */
    const char *title;           /* "gpt3-175b on 16 x p4d.24xlarge" */
    int ncells;                  /* 1..RPT_GRID_CELLS_MAX */
    const rpt_grid_cell *cells;
} rpt_grid;

#define RPT_GRID_AXIS_MAX 64     /* distinct TP (and PP) values */
#define RPT_GRID_CELLS_MAX (RPT_GRID_AXIS_MAX * RPT_GRID_AXIS_MAX)

int rpt_grid_write(rpt_report *r, const rpt_grid *in, rpt_render *render, st_err *err);

/* ------------------------------------------------------------------------ */
/* 3. Throughput and cost against instance count (scaling curves, log x)     */
/* ------------------------------------------------------------------------ */

/* One cluster size of one instance type. Points of one type form a curve,
 * in order of instance count; types keep the order they first appear in. */
typedef struct rpt_scaling_point {
    const char *instance;        /* instance type, "p4d.24xlarge" */
    int instances;               /* instance count, >= 1 (the x axis) */
    int gpus;                    /* GPUs in the cluster; 0 = not given */
    int feasible;                /* 0: no layout fits at this count (a gap in the curve) */
    double tokens_per_s;         /* > 0 when feasible */
    double usd_per_mtokens;      /* USD per 1e6 tokens; <= 0 = price unknown */
    const char *layout;          /* optional: the layout behind the point, for the table */
} rpt_scaling_point;

typedef struct rpt_scaling {
    const char *name;            /* default "scaling" */
    const char *title;           /* "gpt3-175b, best layout per cluster" */
    int npoints;                 /* 1..RPT_SCALING_POINTS_MAX */
    const rpt_scaling_point *points;
} rpt_scaling;

#define RPT_SCALING_POINTS_MAX 4096
#define RPT_SCALING_SERIES_MAX 256 /* instance types (the fastest 35 drawn, all tabled) */

int rpt_scaling_write(rpt_report *r, const rpt_scaling *in, rpt_render *render, st_err *err);

/* ------------------------------------------------------------------------ */
/* 4. Pipeline timeline of a simulated step (Gantt chart per stage)          */
/* ------------------------------------------------------------------------ */

/* The ops of a simulated step as sim_step_run keeps them (sim_result.trace
 * with keep_trace): compute ops (F, B, Bi, W) on the compute lane of their
 * stage, sends (sendF, sendB) on its send lane, gradient buckets on its
 * gradient-sync lane, each kind in its own colour. Time from the start of
 * the step, in seconds for a step of SECONDS_FROM_S or more (milliseconds
 * below), the data always in milliseconds. A send or bucket too short to
 * see is drawn at least a fixed share of the step wide, and the caption
 * says so. */
typedef struct rpt_timeline {
    const char *name;            /* default "timeline" */
    const char *title;           /* "tp8 pp4 1F1B, 8 microbatches" */
    int pp;                      /* pipeline ranks, 1..PLAN_PP_MAX; every rec's stage < pp */
    int ntrace;                  /* 1..RPT_TIMELINE_OPS_MAX */
    const sim_trace_rec *trace;  /* start_ns <= end_ns, start_ns >= 0 */
    double step_s;               /* > 0: a dashed line at the step's end; 0 = none */
    const char *note;            /* optional: a sentence added to the caption (which layout
                                  * this is, against the plan recommended) */
} rpt_timeline;

#define RPT_TIMELINE_OPS_MAX (1 << 20)

int rpt_timeline_write(rpt_report *r, const rpt_timeline *in, rpt_render *render, st_err *err);

/* ------------------------------------------------------------------------ */
/* 5. Predicted against measured step time (scatter, log-log)                */
/* ------------------------------------------------------------------------ */

/* One run: a measured step (recorded by the executor, or published) and what
 * was predicted for it. Points of one source share a colour and a key entry;
 * sources keep the order they first appear in. */
typedef struct rpt_accuracy_point {
    const char *source;          /* "recorded", "Megatron-LM 2021", ... */
    const char *label;           /* the run, "row 12", "run 31"; NULL = "#" and its
                                  * position in points (from 1) */
    double measured_s;           /* > 0 */
    double predicted_s;          /* > 0 */
} rpt_accuracy_point;

typedef struct rpt_accuracy {
    const char *name;            /* default "accuracy" */
    const char *title;           /* "planner against measured step time" */
    const char *predictor;       /* what predicted: "planner", "simulator"; NULL = "predicted" */
    double band;                 /* relative error band drawn around y = x; 0 = 0.10 */
    int label_points;            /* 1: write each point's label beside it */
    int npoints;                 /* 1..RPT_ACCURACY_POINTS_MAX */
    const rpt_accuracy_point *points;
} rpt_accuracy;

#define RPT_ACCURACY_POINTS_MAX 100000
#define RPT_ACCURACY_SERIES_MAX 24 /* sources */

int rpt_accuracy_write(rpt_report *r, const rpt_accuracy *in, rpt_render *render, st_err *err);

/* ------------------------------------------------------------------------ */
/* 6. Busy time and bubble per pipeline stage of a simulated step            */
/* ------------------------------------------------------------------------ */

/* The per-stage figures of a simulation (sim_result.stage, recorded with or
 * without the trace): one stacked bar per stage, compute, bubble (span minus
 * busy) and the gradient sync past the last backward. */
typedef struct rpt_stages {
    const char *name;            /* default "stages" */
    const char *title;
    int pp;                      /* 1..PLAN_PP_MAX */
    const sim_stage_stats *stage;/* pp entries */
    double pipeline_s;           /* > 0: first forward to last backward */
    double step_s;               /* > 0: a dashed line at the step; 0 = none */
    const char *note;            /* optional sentence added to the caption */
} rpt_stages;

int rpt_stages_write(rpt_report *r, const rpt_stages *in, rpt_render *render, st_err *err);

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* A layout in a few words, the same in every plot and table: "tp8 pp4 dp2
 * mb1 interleaved", then what is not at its default: "cp2", "v2" (virtual
 * stages), the recompute ("selective", "full/2" with its group), the
 * sharding ("shard optimizer") and "offload". Writes at most n bytes
 * (truncating, always NUL-terminated); returns buf. */
char *rpt_layout_label(const plan_layout *l, char *buf, size_t n);

/* ------------------------------------------------------------------------ */
/* The page                                                                  */
/* ------------------------------------------------------------------------ */

/* The page's opening: what the report recommends, before any plot. A
 * heading, a lead sentence, label/value facts (the plan, its predicted
 * step, cost, memory headroom, ...) and a preformatted block (the launch
 * settings) with its title; any of them may be NULL / 0. Copied (escaped)
 * into r; a second call replaces the first. ST_ENOMEM. */
typedef struct rpt_fact {
    const char *label;
    const char *value;
} rpt_fact;

typedef struct rpt_summary {
    const char *heading;         /* "Recommended plan" */
    const char *lead;
    int nfacts;
    const rpt_fact *facts;
    const char *code_title;      /* "Launch settings (SageMaker estimator)" */
    const char *code;
} rpt_summary;

int rpt_report_set_summary(rpt_report *r, const rpt_summary *s, st_err *err);

/* Write DIR/index.html: title (NULL = "smdplan report"), an optional note
 * under it (what the report was made from; the place for a date, which the
 * library never adds), the summary (rpt_report_set_summary) if any, a
 * contents list, then every plot in the order written: a heading naming
 * what the plot is and its title (contents entries and headings are
 * unique), one sentence on how to read it, the PNG linked to the SVG, the
 * caption, links to NAME.dat and NAME.gp, and the table (the first
 * html_max_rows rows of NAME.dat). In place
 * of the image, a plot gnuplot could not render (not found, or failed) gets
 * a line saying why and how to render it; with rendering off the page still
 * shows NAME.png, for a caller that renders the scripts later. All text is
 * HTML-escaped; the page loads nothing from the network. Call it after the
 * plots (it can be called again to rewrite the page). ST_EIO when it cannot
 * be written, ST_ENOMEM. */
int rpt_html_write(const rpt_report *r, const char *title, const char *note, st_err *err);

#endif
