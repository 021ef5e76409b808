/*
 * cli_emit.h: the launch files smdplan writes for a plan, every stack's in
 * one place (app/cli_emit*.c).
 *
 *   cli_emit.c          the one entry point (--emit KIND), escaping for each
 *                       language a launch lands in, and the shell and Slurm
 *                       scripts every torchrun-style stack shares
 *   cli_emit_smp.c      SageMaker model parallel v1: the estimator and mpirun
 *   cli_emit_smp2.c     SageMaker model parallel v2: the estimator
 *   cli_emit_stacks.c   Megatron-LM, Megatron-DeepSpeed, torchtitan, PyTorch
 *                       FSDP, MaxText (JAX), smdplan's own executor
 * The Slurm script of `smdplan exec --emit slurm` (the executor's own job,
 * which records its run) stays in cli_exec.c with the executor it launches.
 *
 * A stack's builder describes its launch as data (cli_emit_job: the
 * environment, the files to write, the launcher's and the program's
 * arguments, notes), and one writer turns that into a shell script or an
 * sbatch script, and --json into an object: the three always agree.
 */
#ifndef SMD_CLI_EMIT_H
#define SMD_CLI_EMIT_H

#include <stdint.h>
#include <stdio.h>

#include "app/cli_int.h"

struct cJSON;

/* Columns of the emitted comment blocks. */
#define CLI_EMIT_WRAP_COLS 80
#define CLI_EMIT_NOTES_MAX 16
#define CLI_EMIT_NOTE_LEN 700

/* ---- Escaping (cli_emit.c) ---- */

/* s as a Python string literal in double quotes, ASCII only (control
 * characters and non-ASCII as escapes): nothing can end the literal. */
void cli__py_str(FILE *f, const char *s);
/* s as one shell word in single quotes ('\'' for a quote). */
void cli__sh_str(FILE *f, const char *s);
/* s as it is when no shell treats any of its characters specially, else
 * single-quoted. */
void cli__sh_word(FILE *f, const char *s);
/* text (made printable ASCII first) wrapped into "# " comment lines. */
void cli__comment_block(FILE *f, const char *text);
/* A JSON value as a Python literal (dicts of str, bool, int, float). */
void cli__py_value(FILE *f, const struct cJSON *v, int indent);
/* s as a TOML basic string (TOML 1.0, "Basic strings": quote, backslash
 * and control characters escaped, non-ASCII as \uXXXX / \UXXXXXXXX). */
void cli__toml_str(FILE *f, const char *s);

/* ---- SageMaker model parallel v1 (cli_emit_smp.c) ---- */

int cli_emit_smp_check(const char *what, const cli_plan_opts *o, const plan_model *m,
                       const plan_cluster *c, const plan_result *r, st_err *err);
int cli_emit_smp(FILE *f, const char *what, const cli_plan_opts *o, const plan_model *m,
                 const plan_cluster *c, const plan_result *r, const cli_sim_col *sim,
                 st_err *err);
struct cJSON *cli_emit_smp_json(const char *what, const cli_plan_opts *o, const plan_model *m,
                                const plan_cluster *c, const plan_result *r,
                                const cli_sim_col *sim, st_err *err);

/* ---- SageMaker model parallel v2 (cli_emit_smp2.c): --emit sagemaker for a
 * plan of --framework smp2 (mpirun refused: SMP v2 starts with torchrun) ---- */

int cli_emit_smp2_check(const char *what, const cli_plan_opts *o, const plan_model *m,
                        const plan_cluster *c, const plan_result *r, st_err *err);
int cli_emit_smp2(FILE *f, const char *what, const cli_plan_opts *o, const plan_model *m,
                  const plan_cluster *c, const plan_result *r, const cli_sim_col *sim,
                  st_err *err);
struct cJSON *cli_emit_smp2_json(const char *what, const cli_plan_opts *o, const plan_model *m,
                                 const plan_cluster *c, const plan_result *r,
                                 const cli_sim_col *sim, st_err *err);

/* ---- Every other stack (cli_emit_stacks.c) ---- */

/* How the program is started. */
typedef enum cli_emit_launcher {
    CLI_EMIT_TORCHRUN = 0,       /* torchrun, one process per GPU, c10d rendezvous */
    CLI_EMIT_DEEPSPEED,          /* the deepspeed runner over a hostfile (pdsh) */
    CLI_EMIT_PER_NODE,           /* one process per node, started on every node */
    CLI_EMIT_COMMAND,            /* one command on this host (smdplan exec) */
} cli_emit_launcher;

typedef struct cli_emit_job {
    const char *kind;            /* the --emit kind: "megatron", ... */
    const char *title;           /* "Megatron-LM (Megatron-Core) launch" */
    const cli_plan_opts *o;
    const plan_model *m;
    const plan_cluster *c;
    const plan_layout *l;
    const plan_estimate *e;
    double sim_step_s;           /* 0: not simulated */
    const char *band;            /* the step's error band and its basis, or NULL */
    char band_text[520];
    int stage_layers[PLAN_PP_MAX]; /* the plan's split over pipeline stages */
    int uneven;                  /* 1: not the same number of layers on every stage */
    int64_t train_steps;         /* optimizer steps for --tokens (default 300B) */
    cli_emit_launcher launcher;
    struct cJSON *env;           /* object: variables the job exports */
    struct cJSON *files;         /* object: file name -> its text, written beside the job */
    struct cJSON *configs;       /* object: a JSON file's parsed object, for --json */
    struct cJSON *program;       /* array: the program and its arguments */
    const char *sources;         /* the documents every name was read from */
    int nnotes;
    char notes[CLI_EMIT_NOTES_MAX][CLI_EMIT_NOTE_LEN];
} cli_emit_job;

void cli__emit_note(cli_emit_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append to j->program. */
void cli__emit_arg(cli_emit_job *j, const char *s);
void cli__emit_argf(cli_emit_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The builder of kind (its stack's launch) for j, which holds the plan:
 * ST_EINVAL with one line naming the knob the stack cannot express. */
int cli__emit_build(cli_emit_job *j, st_err *err);

/* The kinds cli__emit_build knows, and the stack family each is for. */
int cli__emit_kind_known(const char *kind);

#endif
