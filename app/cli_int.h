/*
 * cli_int.h: what the smdplan commands share inside app/.
 */
#ifndef SMD_CLI_INT_H
#define SMD_CLI_INT_H

#include <stdint.h>
#include <stdio.h>

#include "common/st.h"
#include "data/data_band_plan.h"
#include "data/data_plan_json.h"
#include "data/db.h"
#include "planner/plan.h"
#include "reports/rpt_plan.h"
#include "reports/rpt_table.h"
#include "sim/sim.h"
#include "sim/sim_plans.h"
#include "sim/sim_plans.h"

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

/* A file path's room, bytes (PATH_MAX on Linux). */
#define CLI_PATH_MAX 4096

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

/* --emit KIND (launch/launch.h): what the launch of plan #1 of r is made
 * of, from the plan command's options (the command line, --tokens, the
 * --catalog files), the simulated steps (sim may be NULL) and the step's
 * error band, whose basis goes into basis (n bytes) (cli_out.c). */
struct launch_plan;
void cli_launch_plan_of(const cli_plan_opts *o, const plan_model *m, const plan_cluster *c,
                        const plan_result *r, const sim_top_steps *sim, struct launch_plan *p,
                        char *basis, size_t n);

/* Print the answer of a search (cli_out.c): with --json its document (with
 * o->json_extra's objects), else the plans as text (reports/rpt_plan.h) or
 * why none fits, the preset's reference beside #1 (cmp, compared when
 * shown), and --explain's terms (NULL: not asked) with the error band. 0,
 * or 1 when the JSON cannot be written. */
int cli_plan_show(const cli_plan_opts *o, const cli_plan_ctx *x, const plan_result *r,
                  int min_nodes, const sim_top_steps *sim, const plan_preset_cmp *cmp,
                  const plan_terms *terms);

/* With no global batch asked for, set o->cfg.global_batch to the batch
 * published by the preset that x's model is (planner/plan_preset_cmp.h) and
 * o->batch_source to src (n bytes), which says where it came from
 * (cli_plan.c). 0 or a status (a reference naming no known cluster). */
int cli_preset_batch(cli_plan_opts *o, const cli_plan_ctx *x, char *src, size_t n, st_err *err);

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
