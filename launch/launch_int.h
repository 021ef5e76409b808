/*
 * launch_int.h: what the launch files share inside launch/.
 *
 *   launch.c            the one entry point (--emit KIND), escaping for each
 *                       language a launch lands in, and the shell and Slurm
 *                       scripts every torchrun-style stack shares
 *   launch_smp.c        SageMaker model parallel v1: the estimator and mpirun
 *   launch_smp2.c       SageMaker model parallel v2: the estimator
 *   launch_stacks.c     Megatron-LM, Megatron-DeepSpeed, torchtitan, PyTorch
 *                       FSDP, MaxText (JAX), smdplan's own executor
 *   launch_slurm.c      the sbatch script of `smdplan exec --emit slurm` (the
 *                       executor's own job, which records its run)
 *
 * A stack's builder describes its launch as data (launch_job: the
 * environment, the files to write, the launcher's and the program's
 * arguments, notes), and one writer turns that into a shell script or an
 * sbatch script, and --json into an object: the three always agree.
 */
#ifndef SMD_LAUNCH_INT_H
#define SMD_LAUNCH_INT_H

#include <stdint.h>
#include <stdio.h>

#include "launch/launch.h"

struct cJSON;

/* Columns of the emitted comment blocks. */
#define LAUNCH_WRAP_COLS 80
#define LAUNCH_NOTES_MAX 16
#define LAUNCH_NOTE_LEN 700

/* ---- Escaping (launch.c) ---- */

/* s as a Python string literal in double quotes, ASCII only (control
 * characters and non-ASCII as escapes): nothing can end the literal. */
void launch__py_str(FILE *f, const char *s);
/* s as one shell word in single quotes ('\'' for a quote). */
void launch__sh_str(FILE *f, const char *s);
/* s as it is when no shell treats any of its characters specially, else
 * single-quoted. */
void launch__sh_word(FILE *f, const char *s);
/* text (made printable ASCII first) wrapped into "# " comment lines. */
void launch__comment_block(FILE *f, const char *text);
/* A JSON value as a Python literal (dicts of str, bool, int, float). */
void launch__py_value(FILE *f, const struct cJSON *v, int indent);
/* s as a TOML basic string (TOML 1.0, "Basic strings": quote, backslash
 * and control characters escaped, non-ASCII as \uXXXX / \UXXXXXXXX). */
void launch__toml_str(FILE *f, const char *s);

/* ---- SageMaker model parallel v1 (launch_smp.c) ---- */

int launch__smp_check(const char *what, const launch_plan *p, st_err *err);
int launch__smp_write(FILE *f, const char *what, const launch_plan *p, st_err *err);
struct cJSON *launch__smp_json(const char *what, const launch_plan *p, st_err *err);

/* ---- SageMaker model parallel v2 (launch_smp2.c): --emit sagemaker for a
 * plan of --framework smp2 (mpirun refused: SMP v2 starts with torchrun) ---- */

int launch__smp2_check(const char *what, const launch_plan *p, st_err *err);
int launch__smp2_write(FILE *f, const char *what, const launch_plan *p, st_err *err);
struct cJSON *launch__smp2_json(const char *what, const launch_plan *p, st_err *err);

/* ---- Every other stack (launch_stacks.c) ---- */

/* How the program is started. */
typedef enum launch_launcher {
    LAUNCH_TORCHRUN = 0,         /* torchrun, one process per GPU, c10d rendezvous */
    LAUNCH_DEEPSPEED,            /* the deepspeed runner over a hostfile (pdsh) */
    LAUNCH_PER_NODE,             /* one process per node, started on every node */
    LAUNCH_COMMAND,              /* one command on this host (smdplan exec) */
} launch_launcher;

typedef struct launch_job {
    const char *kind;            /* the --emit kind: "megatron", ... */
    const char *title;           /* "Megatron-LM (Megatron-Core) launch" */
    const launch_plan *p;
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
    launch_launcher launcher;
    struct cJSON *env;           /* object: variables the job exports */
    struct cJSON *files;         /* object: file name -> its text, written beside the job */
    struct cJSON *configs;       /* object: a JSON file's parsed object, for --json */
    struct cJSON *program;       /* array: the program and its arguments */
    const char *sources;         /* the documents every name was read from */
    int nnotes;
    char notes[LAUNCH_NOTES_MAX][LAUNCH_NOTE_LEN];
} launch_job;

void launch__note(launch_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append to j->program. */
void launch__arg(launch_job *j, const char *s);
void launch__argf(launch_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The builder of kind (its stack's launch) for j, which holds the plan:
 * ST_EINVAL with one line naming the knob the stack cannot express. */
int launch__build(launch_job *j, st_err *err);

/* The kinds launch__build knows, and the stack family each is for. */
int launch__kind_known(const char *kind);

#endif
