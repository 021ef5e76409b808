/*
 * launch.h: the launch files smdplan writes, every stack's in one place:
 * the launch of a plan's stack (--emit KIND of smdplan plan) and the sbatch
 * script of the executor's own run (smdplan exec --emit slurm).
 *
 * Pure text from plain values: no file is read or written here (the
 * caller prints what comes back), so the same plan always gives the same
 * bytes. Every string that reaches a launch file is escaped for its
 * language (launch.c).
 *
 * Running a launcher is the library's other half, apart from the text
 * (launch_job.h): a job (mpirun and its ranks) under supervision, and the
 * hostfile mpirun is given, read as untrusted input.
 */
#ifndef SMD_LAUNCH_H
#define SMD_LAUNCH_H

#include <stddef.h>
#include <stdio.h>

#include "common/st.h"
#include "planner/plan.h"

struct cJSON;

/* ---- A plan's launch (launch.c, launch_smp.c, launch_smp2.c,
 * launch_stacks.c) ---- */

/* What a launch is made from: the plan ranked #1 of a search and the few
 * words of the command that made it. Borrowed for the call. */
typedef struct launch_plan {
    const plan_model *m;
    const plan_cluster *c;
    const plan_result *r;        /* r->top[0], the plan ranked #1, is launched */
    const char *command_line;    /* the smdplan command that made r (the header says it) */
    double tokens;               /* tokens to train: each stack's step count */
    const char *const *catalog_files; /* --catalog files, in order (smdplan's own launch) */
    int ncatalogs;
    double sim_step_s;           /* simulated step of r->top[0]; 0: not simulated */
    double band_pct;             /* the step's error band, percent; 0: none */
    const char *band_basis;      /* one sentence on its basis (read when band_pct > 0) */
} launch_plan;

/* The --emit kinds, one line for --help and errors. */
const char *launch_kinds(void);
/* 1 when what is one of them. */
int launch_kind_valid(const char *what);

/* Whether what can be emitted for p: ST_OK, or ST_EINVAL with one line
 * naming the knob the stack cannot express (a kind that is not the plan's
 * stack's is refused naming both). Call it before printing anything. */
int launch_check(const char *what, const launch_plan *p, st_err *err);
/* The launch file of kind what for p onto f: the SageMaker estimator or
 * mpirun script of SMP, a stack's launch script, or an sbatch script of one
 * ("slurm"). Status as launch_check. */
int launch_write(FILE *f, const char *what, const launch_plan *p, st_err *err);
/* The same settings as a JSON object (caller owns); NULL with err set when
 * it cannot be emitted. */
struct cJSON *launch_json(const char *what, const launch_plan *p, st_err *err);

/* ---- The executor's mpirun command (launch_mpirun.c) ---- */

#define LAUNCH_ARGS_MAX 64        /* arguments of the command, its NULL included */
#define LAUNCH_ARG_BYTES 1024     /* bytes of one argument, its NUL included */
/* The command's text (launch_cmd_line): every argument quoted for the shell
 * (at most 4 bytes a byte) with a separator, and its environment. */
#define LAUNCH_CMD_TEXT_MAX (LAUNCH_ARGS_MAX * (4 * LAUNCH_ARG_BYTES + 4) + 1024)

/* What the command of one run is made from. Borrowed for the call. */
typedef struct launch_mpirun {
    int ranks;
    int threads;                 /* per rank (< 1: 1) */
    int cores;                   /* this host's online cores: without a hostfile, more
                                  * ranks x threads than these oversubscribe */
    const char *hostfile;        /* passed to mpirun --hostfile; NULL: none */
    const char *rank_program;    /* the rank program's path */
    const char *run_dir;         /* where CONFIG.json is and RESULT.json goes */
    int allow_root;              /* 1: set OMPI_ALLOW_RUN_AS_ROOT=1 for the job */
    int allow_root_confirm;      /* 1: set OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 */
} launch_mpirun;

/* The command: argv (NULL-terminated) and the environment it adds. */
typedef struct launch_cmd {
    char *argv[LAUNCH_ARGS_MAX];
    char store[LAUNCH_ARGS_MAX][LAUNCH_ARG_BYTES];
    int argc;
    char *env[4];                /* "NAME=VALUE", NULL-terminated */
    char env_store[4][64];
    int oversubscribed;
    int cut;                     /* an argument was longer than store's: refuse it */
} launch_cmd;

/* mpirun -n RANKS [--oversubscribe] [--hostfile F] [--bind-to none] -x
 * OPENBLAS_NUM_THREADS=T -x OMP_NUM_THREADS=T RANK_PROGRAM --config
 * DIR/CONFIG.json --result DIR/RESULT.json into c. */
void launch_mpirun_cmd(const launch_mpirun *m, launch_cmd *c);
/* The command as one shell line (environment first) into buf (n bytes,
 * LAUNCH_CMD_TEXT_MAX holds any). */
void launch_cmd_line(const launch_cmd *c, char *buf, size_t n);

/* ---- The executor's sbatch script (launch_slurm.c) ---- */

/* A run of smdplan's executor as a Slurm batch job: the rank program under
 * mpirun inside the allocation, then smdplan exec --import to record it.
 * Borrowed for the call. */
typedef struct launch_slurm {
    const char *model_name;      /* the model run (the job's name; a comment) */
    const plan_layout *layout;
    int ranks;                   /* tp x pp x dp x cp */
    int plan_nodes;              /* nodes of the plan's cluster, 0: none */
    const char *plan_instance;   /* its instance type, "" when none */
    const char *scaled;          /* what --scale reduced, "" when nothing */
    int threads;                 /* threads per rank */
    int gpus_per_node;           /* #SBATCH --gpus-per-node, 0: a CPU job */
    double timeout_s;            /* #SBATCH --time (rounded up to minutes), 0: none */
    const char *runs_dir;        /* where run directories go by default */
    const char *config_text;     /* CONFIG.json, written by the script */
    const char *rank_program;    /* the rank program's path */
    const char *smdplan;         /* this program's path ("" when unknown) */
    const char *cwd;             /* the directory the options were given in ("" unknown) */
    const char *const *run_args; /* the options that describe the run, repeated by the
                                  * script's smdplan exec --import */
    int nrun_args;
} launch_slurm;

/* The script, never cut (malloc'd, caller frees); NULL with ST_ENOMEM. */
char *launch_slurm_script(const launch_slurm *s, st_err *err);

#endif
