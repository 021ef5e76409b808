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
#include "sim/sim.h"

/* Print "smdplan: <message>" on stderr and return the exit code for code. */
int cli_fail(const st_err *err);

/* Everything the plan command was asked. */
typedef struct cli_plan_opts {
    plan_config cfg;
    const char *params;          /* --params text */
    const char *arch;            /* --arch */
    const char *family;          /* --family */
    const char *model_file;      /* --model config.json */
    const char *instances;       /* --instances */
    const char *catalog_file;    /* --catalog */
    int64_t layers, hidden, heads, kv_heads, ffn, seq, vocab; /* overrides, 0 = unset */
    int64_t batch_size;          /* SMP script batch per model-parallel group, 0 = unset */
    int max_instances;           /* comparison mode: largest count tried */
    double tokens;               /* comparison mode: tokens to train */
    int json, explain, no_record;
    const char *db_path;         /* --db FILE: where the answer is recorded */
    const char *emit;            /* "sagemaker", "mpirun" or NULL */
    int simulate;                /* `smdplan simulate`: simulate the layout */
    int no_sim;                  /* plan: do not simulate the top plans */
    sim_config sim;              /* --seed, --jitter, --straggler, --monte-carlo */
    const char *trace_path;      /* --trace FILE */
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
} cli_sim_col;

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

/* JSON objects of one plan and of a model (cli_json.c); caller owns. */
struct cJSON;
struct cJSON *cli_json_plan(const plan_candidate *c);
struct cJSON *cli_json_model(const plan_model *m);

/* --emit sagemaker | mpirun (cli_emit.c): the launch settings of r->top[0],
 * the plan ranked #1 (after the simulator's re-ranking), for SageMaker model
 * parallel v1. cli_emit_check says whether it can be emitted (0, or exit code
 * 2 with a one-line reason naming the knob in err); call it before printing
 * anything. cli_emit prints the Python estimator or the mpirun script;
 * cli_emit_json returns the same settings as a JSON object (caller owns;
 * NULL with err set when it cannot be emitted). sim (may be NULL) gives the
 * simulated step for the header. */
int cli_emit_check(const char *what, const cli_plan_opts *o, const plan_model *m,
                   const plan_cluster *c, const plan_result *r, st_err *err);
int cli_emit(FILE *f, const char *what, const cli_plan_opts *o, const plan_model *m,
             const plan_cluster *c, const plan_result *r, const cli_sim_col *sim, st_err *err);
struct cJSON *cli_emit_json(const char *what, const cli_plan_opts *o, const plan_model *m,
                            const plan_cluster *c, const plan_result *r, const cli_sim_col *sim,
                            st_err *err);

/* Simulation (cli_sim.c). */
int cli_sim_layout(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                   const sim_config *cfg, sim_result *out, st_err *err);
void cli_print_sim(FILE *f, const sim_config *cfg, const sim_result *r, double threshold_pct);
/* Simulate the top plans of r and re-rank them by the simulated step. */
int cli_sim_top(const plan_model *m, const plan_cluster *c, plan_result *r, const sim_config *cfg,
                double threshold_pct, cli_sim_col *col, st_err *err);
struct cJSON *cli_json_sim(const sim_result *r);

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
    char why[640];               /* one sentence: why ours differs */
} cli_preset_cmp;

/* Evaluate the preset's layout on x's cluster with r's global batch and say
 * why r->top[0] differs. out->shown is 0 when there is nothing to compare.
 * ST_ENOMEM only; a layout that cannot be evaluated is a result. */
int cli_preset_compare(const cli_plan_opts *o, const cli_plan_ctx *x, const plan_result *r,
                       cli_preset_cmp *out, st_err *err);
void cli_preset_print(FILE *f, const cli_preset_cmp *p, const plan_candidate *ours);
/* NULL when not shown; caller owns. */
struct cJSON *cli_preset_json(const cli_preset_cmp *p);

/* No --instances: compare instance types and counts (cli_compare.c). */
int cli_compare(const cli_plan_opts *o, cli_plan_ctx *x);

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
/* Write text to path atomically (temporary file in the same directory,
 * fsync, rename). An existing file is replaced only with force or when it
 * holds marker (smdplan's own files carry one); otherwise ST_EINVAL naming
 * it and nothing is written. ST_EIO when it cannot be written. */
int cli_write_file(const char *path, const char *text, const char *marker, int force, st_err *err);
/* s quoted for a POSIX shell (single quotes) unless it needs none. */
void cli_shell_quote(const char *s, char *buf, size_t n);

/* smdplan exec and smdplan bench (cli_exec.c, cli_bench.c). */
int cli_exec_cmd(int argc, char **argv);
int cli_bench_cmd(int argc, char **argv);

#endif
