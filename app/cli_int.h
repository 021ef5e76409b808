/*
 * cli_int.h: what the smdplan commands share inside app/.
 */
#ifndef SMD_CLI_INT_H
#define SMD_CLI_INT_H

#include <stdint.h>
#include <stdio.h>

#include "common/st.h"
#include "data/db.h"
#include "planner/plan.h"
#include "reports/rpt_table.h"
#include "sim/sim.h"

/* Replace stdout and stderr by streams that print control characters as
 * \u00XX (cli_term.c); main calls it once. */
void cli_term_install(void);
/* The escaping itself: n bytes of buf into out (room for 6 n bytes);
 * *pending_c2 carries a 0xC2 (a possible C1 lead) between calls. */
size_t cli_term_escape(const char *buf, size_t n, int *pending_c2, char *out);

/* A progress line for work that may take more than a second: shown on a
 * terminal only, after a second, erased at the end (cli_progress.c). */
typedef struct cli_progress {
    const char *what;            /* "comparing instance types" */
    double t0, last;
    size_t width;                /* of the line shown, 0 = none */
    int tty;
} cli_progress;
void cli_progress_start(cli_progress *p, const char *what);
void cli_progress_step(cli_progress *p, long done, long total); /* total 0: unknown */
void cli_progress_end(cli_progress *p);
/* sim_config.progress for a cli_progress passed as its context */
void cli_progress_sim(void *ctx, int done, int total);

/* Print "smdplan: <message>" on stderr and return the exit code for code. */
int cli_fail(const st_err *err);

/* One row of a command's option table: an option, or (name NULL) a heading
 * of its --help. One table drives getopt_long, --help and the checks. */
typedef struct cli_opt {
    const char *name;            /* NULL: a heading in --help */
    int has_arg;
    int id;
    const char *arg;             /* metavar with unit */
    const char *help;            /* one line, with default and allowed values */
} cli_opt;

/* The option rows of t[0..n) under their headings, as --help lists them. */
void cli_print_opt_table(FILE *f, const cli_opt *t, int n);

/* --catalog files a command merges, at most. */
#define CLI_CATALOGS_MAX 8

/* Everything the plan command was asked. */
typedef struct cli_plan_opts {
    plan_config cfg;
    const char *params;          /* --params text */
    const char *arch;            /* --arch */
    const char *family;          /* --family */
    const char *model_file;      /* --model config.json */
    const char *instances;       /* --instances */
    const char *catalog_files[CLI_CATALOGS_MAX]; /* --catalog, in order: each merged over
                                  * the catalog as it stands (later files override) */
    int ncatalogs;
    const char *region;          /* --region: SageMaker prices of this region */
    const char *prices_file;     /* --prices: price lists (default data/sagemaker_prices.json) */
    int64_t layers, hidden, heads, kv_heads, ffn, seq, vocab; /* overrides, 0 = unset */
    int dropout;                 /* override: -1 unset, 0 off, 1 on */
    int64_t head_dim;            /* override: --head-dim, 0 = unset */
    int64_t window;              /* override: --sliding-window, -1 = unset, 0 = none */
    int window_pattern;          /* override: --sliding-window-pattern, -1 = unset */
    int64_t batch_size;          /* SMP script batch per model-parallel group, 0 = unset */
    int max_instances;           /* comparison mode: largest count tried */
    double tokens;               /* tokens to train: the comparison's; with --instances,
                                  * when given, plan #1's time and cost to train them */
    int tokens_given;            /* --tokens was on the command line */
    int json, explain, no_record;
    const char *db_path;         /* --db FILE: where the answer is recorded */
    const char *emit;            /* "sagemaker", "mpirun" or NULL */
    int simulate;                /* `smdplan simulate`: simulate the layout */
    int no_sim;                  /* plan: do not simulate the top plans */
    sim_config sim;              /* --seed, --jitter, --straggler, --monte-carlo */
    const char *trace_path;      /* --trace FILE */
    int force;                   /* --force: --trace may replace an existing file */
    double sim_threshold_pct;    /* say so when simulation and planner differ by more */
    char command_line[1024];
    const char *batch_source;    /* where a default global batch came from when not the
                                  * planner's default (a preset's reference); NULL: none */
    struct cJSON *json_extra;    /* objects --json adds to its document under their
                                  * names (--emit's settings, a preset's reference);
                                  * owned by cli_plan_run */
} cli_plan_opts;

/* The resolved inputs of a plan. */
typedef struct cli_plan_ctx {
    plan_catalog cat;
    plan_presets presets;
    plan_model model;
    plan_cluster cluster;
    int have_cluster;
} cli_plan_ctx;

/* The plan command's options, shared with smdplan exec (cli_plan.c). */
void cli_plan_opts_init(cli_plan_opts *o, int simulate);
/* Parse the plan command's options (argv[0] is the command word). 0: parsed;
 * 1: --help or --version printed; otherwise the exit code (2), with the
 * one-line message already printed. */
int cli_plan_parse(int argc, char **argv, cli_plan_opts *o, st_err *err);
/* Load the catalog (with --catalog), and when need_model the presets and
 * the model; the cluster when --instances was given. x is freed on error. */
int cli_plan_resolve(const cli_plan_opts *o, cli_plan_ctx *x, int need_model, st_err *err);
void cli_plan_ctx_free(cli_plan_ctx *x);

/* Simulated step times of the top plans (plan mode), in their order. */
typedef struct cli_sim_col {
    int n;                       /* 0: not simulated */
    double step_s[PLAN_TOPK_MAX];
    double threshold_pct;
    int reranked;                /* the order changed after simulating */
    int extrapolated;            /* plans whose step was extrapolated from windows */
} cli_sim_col;

/* Prices (cli_prices.c). With a region, every instance of cat takes its
 * SageMaker price in that region's list (0, unknown, when the list has
 * none); without, the catalog's EC2 on-demand prices stay. Either way the
 * list is remembered for cli_price_list(). A region without a list is bad
 * input, naming the regions that have one. */
int cli_prices_apply(plan_catalog *cat, const char *region, const char *prices_file,
                     st_err *err);
/* Which price list the costs come from, one phrase with its source and
 * date ("SageMaker training, on demand, us-east-1 (URL, read 2025-01-31)"). */
const char *cli_price_list(void);
/* 1 when the costs are SageMaker's (a --region list). */
int cli_price_is_sagemaker(void);

/* A layout's recompute cell as every table shows it (sel, full/k, +off;
 * the schedule's and microbatches' are plan_framework_sched_label and
 * plan_framework_act_label), and the sentence that explains the columns
 * (cli_out.c). Return buf (a static string). */
const char *cli_recomp_label(const plan_layout *l, char *buf, size_t n);
const char *cli_columns_key(void);

/* Time and cost to train o->tokens with plan #1 of r, from the step the
 * ranking used (simulated when the plans were simulated): 1 when --tokens
 * was given and there is a plan, with *time_s, *cost (0: no price) and
 * *simulated set; 0 otherwise (cli_out.c). */
int cli_train_of(const cli_plan_opts *o, const plan_result *r, const cli_sim_col *sim,
                 double *time_s, double *cost, int *simulated);

/* The error band of a predicted step on c with framework index fw (percent
 * of the step, data/error_bands.json: the held-out error of that stack
 * release's runs on c's chip, else the chip pool's, else the worst source
 * held out),
 * one sentence on its basis into basis (n bytes); 0 with the reason when
 * the bands file cannot be read (cli_out.c). */
double cli_band_of(const plan_cluster *c, int fw, char *basis, size_t n);
/* How many of the first n plans of r lie within each other's band of #1
 * (by the step the ranking used): 1 when #2 is outside it. */
int cli_band_overlap(const plan_result *r, const cli_sim_col *sim, double band_pct);


/* Human output of a search (cli_out.c). */
void cli_print_model(FILE *f, const plan_model *m);
void cli_print_cluster(FILE *f, const plan_cluster *c);
/* The framework a plan is for and whose efficiencies were used. */
void cli_print_stack(FILE *f, int framework, const plan_cluster *c);
void cli_print_result(FILE *f, const cli_plan_opts *o, const plan_model *m,
                      const plan_cluster *c, const plan_result *r, const cli_sim_col *sim);
void cli_print_terms(FILE *f, const plan_terms *t);
/* Why the search found nothing, and what would fit (exit 3 follows). */
void cli_print_infeasible(FILE *f, const cli_plan_opts *o, const plan_model *m,
                          const plan_cluster *c, const plan_result *r, int min_nodes);

/* JSON output (cli_json.c). Returns 0 or an exit code. */
int cli_print_json(FILE *f, const cli_plan_opts *o, const plan_model *m, const plan_cluster *c,
                   const plan_result *r, int min_nodes, const cli_sim_col *sim);

/* The JSON object of one plan (cli_json.c); caller owns. */
struct cJSON;
struct cJSON *cli_json_plan(const plan_candidate *c);
/* --explain's terms as an array (each with value, unit, formula, source). */
struct cJSON *cli_json_terms(const plan_terms *t);

/* --emit KIND (launch/launch.h): what the launch of plan #1 of r is made
 * of, from the plan command's options (the command line, --tokens, the
 * --catalog files), the simulated steps (sim may be NULL) and the step's
 * error band, whose basis goes into basis (n bytes) (cli_out.c). */
struct launch_plan;
void cli_launch_plan_of(const cli_plan_opts *o, const plan_model *m, const plan_cluster *c,
                        const plan_result *r, const cli_sim_col *sim, struct launch_plan *p,
                        char *basis, size_t n);

/* Simulation (cli_sim.c). */
void cli_print_sim(FILE *f, const sim_config *cfg, const sim_result *r, double threshold_pct);
/* Simulate the top plans of r and re-rank them by the simulated step
 * (not for --objective memory). */
int cli_sim_top(const plan_model *m, const plan_cluster *c, plan_result *r, const sim_config *cfg,
                plan_objective objective, double threshold_pct, cli_sim_col *col, st_err *err);
struct cJSON *cli_json_sim(const sim_result *r);

/* A plan's row of the plan table from the degrees to the optimizer step
 * (cli_out.c), after the caller's first cell: the same columns in the plan
 * table and in a preset's comparison. Time terms under half a microsecond
 * are 0. */
void cli_plan_cells(rpt_table *t, const plan_layout *l, const plan_estimate *e);

/* Presets that publish the layout they were trained with (cli_preset.c). */
/* The preset x's model is, when it publishes a layout and its shape is the
 * published one; NULL otherwise. */
const plan_preset *cli_preset_of(const cli_plan_ctx *x);
/* With no global batch asked for, set o->cfg.global_batch to the preset's
 * published one and o->batch_source to src (n bytes), which says where it
 * came from. 0 or a status (a reference naming no known cluster). */
int cli_preset_batch(cli_plan_opts *o, const cli_plan_ctx *x, char *src, size_t n, st_err *err);

enum { CLI_PRESET_FITS = 0, CLI_PRESET_OOM, CLI_PRESET_UNPLACEABLE };

/* The preset's layout beside the plan ranked #1. */
typedef struct cli_preset_cmp {
    int shown;                   /* 0: no preset layout to compare */
    const plan_preset *preset;
    int status;                  /* CLI_PRESET_*: evaluated and fits, evaluated and out
                                  * of memory, or not evaluated (why says why) */
    plan_candidate ref;          /* the reference evaluated on the plan's cluster */
    char why[1024];              /* why ours differs; with no SMP run fitted, it says
                                  * so: the difference is the model's */
    int smp_fitted;              /* the efficiencies in force were fitted to SMP runs */
} cli_preset_cmp;

/* Evaluate the preset's layout on x's cluster with r's global batch and say
 * why r->top[0] differs. out->shown is 0 when there is nothing to compare.
 * ST_ENOMEM only; a layout that cannot be evaluated is a result. */
int cli_preset_compare(const cli_plan_opts *o, const cli_plan_ctx *x, const plan_result *r,
                       cli_preset_cmp *out, st_err *err);
void cli_preset_print(FILE *f, const cli_preset_cmp *p, const plan_candidate *ours);
/* NULL when not shown; caller owns. */
struct cJSON *cli_preset_json(const cli_preset_cmp *p);

/* No --instances: compare instance types and counts (cli_instance_types.c). */
int cli_instance_types_compare(const cli_plan_opts *o, cli_plan_ctx *x);

/* Recording (cli_record.c). cli_main hands over the whole command line for
 * the provenance of every record (argv is kept, not copied). */
void cli_record_args(int argc, char **argv);
/* Writes one record into the open database. */
typedef int (*cli_record_fn)(db *d, const db_provenance *p, void *ctx, st_err *err);
/* Record what a command computed, unless no_record or $SMDPLAN_NO_RECORD:
 * open db_path (NULL: $SMDPLAN_DB or smdplan.db), call fn, close. When the
 * database cannot be written, print one line "smdplan: warning: not
 * recorded: <reason>" on stderr; the caller's exit code stays what it was.
 * Returns 1 when recorded. */
int cli_record(const char *db_path, int no_record, cli_record_fn fn, void *ctx);

/* This host (cli_host.c). */
#define CLI_PATH_MAX 4096
/* Host name up to its first dot, letters, digits and '-' only. */
void cli_host_name(char *buf, size_t n);
/* The catalog names smdplan bench gives this host's entry for a number of
 * threads per rank: instance type "host-NAME" (or "host-NAME-tT") and its
 * device "cpu-NAME" (or "cpu-NAME-tT"). */
void cli_host_entry_names(int threads_per_rank, char *inst, size_t ni, char *gpu, size_t ng);

/* The catalog GPU a CUDA device's description names (cli_host.c): the chip
 * a catalog GPU's name starts with ("H100" of "H100-80GB") as a word of
 * desc, and among that chip's GPUs the one whose memory is closest to what
 * desc states ("80GB", "79.1 GiB"; the first in catalog order when it states
 * none). Its index in cat->gpus, or -1 when no catalog chip is named. */
int cli_catalog_gpu_of_device(const plan_catalog *cat, const char *desc);
/* Write text to path whole or not at all, under the one rule of every
 * output (common/outfile.h): an existing file only with force, never
 * through a symbolic link. what names the output in messages ("--out"). */
int cli_write_file(const char *path, const char *what, const char *text, int force, st_err *err);
/* This executable's path into buf ("" when /proc does not say). */
void cli_self_path(char *buf, size_t n);

/* Program name next to this executable, else (search_path) the first on
 * PATH, into buf; "" when neither has it. */
void cli_find_program(const char *name, int search_path, char *buf, size_t n);

/* smdplan exec and smdplan bench (cli_exec.c, cli_bench.c). */
int cli_exec_cmd(int argc, char **argv);
int cli_bench_cmd(int argc, char **argv);

/* A host's catalog entry made again from a recorded bench, measuring
 * nothing: what smdplan bench --from-record does (calibrate --bench). The
 * strings are borrowed for the call. Returns an exit code. */
typedef struct cli_bench_redo_opts {
    const char *record;          /* the bench record's id; "0": this host's newest */
    const char *write;           /* the catalog file to write; NULL: none */
    int force;                   /* replace an existing file */
    int json;
    const char *db_path;         /* NULL: the default database */
    const char *threads;         /* threads per rank, "1,2"; NULL: 1 */
} cli_bench_redo_opts;

int cli_bench_redo(const cli_bench_redo_opts *r);

#endif
