/*
 * cli_int.h: what the smdplan commands share inside app/.
 */
#ifndef SMD_CLI_INT_H
#define SMD_CLI_INT_H

#include <stdint.h>
#include <stdio.h>

#include "common/st.h"
#include "planner/plan.h"

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
    const char *emit;            /* "sagemaker", "mpirun" or NULL */
    char command_line[1024];
} cli_plan_opts;

/* The resolved inputs of a plan. */
typedef struct cli_plan_ctx {
    plan_catalog cat;
    plan_presets presets;
    plan_model model;
    plan_cluster cluster;
    int have_cluster;
} cli_plan_ctx;

/* Human output of a search (cli_out.c). */
void cli_print_model(FILE *f, const plan_model *m);
void cli_print_cluster(FILE *f, const plan_cluster *c);
void cli_print_result(FILE *f, const cli_plan_opts *o, const plan_model *m,
                      const plan_cluster *c, const plan_result *r);
void cli_print_terms(FILE *f, const plan_terms *t);
/* Why the search found nothing, and what would fit (exit 3 follows). */
void cli_print_infeasible(FILE *f, const cli_plan_opts *o, const plan_model *m,
                          const plan_cluster *c, const plan_result *r, int min_nodes);

/* JSON output (cli_json.c). Returns 0 or an exit code. */
int cli_print_json(FILE *f, const cli_plan_opts *o, const plan_model *m, const plan_cluster *c,
                   const plan_result *r, int min_nodes);

/* JSON objects of one plan and of a model (cli_json.c); caller owns. */
struct cJSON;
struct cJSON *cli_json_plan(const plan_candidate *c);
struct cJSON *cli_json_model(const plan_model *m);

/* --emit sagemaker | mpirun (cli_emit.c). Returns 0 or an exit code. */
int cli_emit(FILE *f, const char *what, const plan_model *m, const plan_cluster *c,
             const plan_candidate *best, st_err *err);

/* No --instances: compare instance types and counts (cli_compare.c). */
int cli_compare(const cli_plan_opts *o, cli_plan_ctx *x);

#endif
