/*
 * cli_exec.h: what `smdplan exec` hands the rank program and reads back:
 * CONFIG.json (written here) and RESULT.json (read here), version 1 of the
 * contract between the launcher and the rank program (exec/exec.h has the
 * rank program's side), and the figures derived from a result.
 */
#ifndef SMD_CLI_EXEC_H
#define SMD_CLI_EXEC_H

#include <stdint.h>

#include "common/st.h"
#include "planner/plan.h"

#define CLI_EXEC_PATH_MAX 1024

/* Optimizer and schedule of the training run (CONFIG.json "train"). */
typedef struct cli_exec_train {
    int steps;
    uint64_t seed;
    double lr, min_lr;
    int warmup_steps;
    double weight_decay, beta1, beta2, eps, grad_clip;
    int warmup_steps_unmeasured;
} cli_exec_train;

/* Everything CONFIG.json says. */
typedef struct cli_exec_spec {
    plan_model model;
    plan_layout layout;
    cli_exec_train train;
    char data_kind[16];          /* "synthetic", "text", "tokens" */
    char data_path[CLI_EXEC_PATH_MAX]; /* absolute; "" for synthetic */
    int threads_per_rank;
    char save_dir[CLI_EXEC_PATH_MAX];  /* "" none */
    int save_every;
    char resume_dir[CLI_EXEC_PATH_MAX];
    double timeout_s;            /* longest blocking wait inside the job */
    int progress;
} cli_exec_spec;

/* The defaults of the train section: AdamW as GPT-3 trained (Brown et al.
 * 2020, Appendix B: beta1 0.9, beta2 0.95, eps 1e-8, weight decay 0.1,
 * gradient clipping at 1.0, cosine decay to 10 % of the peak rate). */
void cli_exec_train_default(cli_exec_train *t);

/* CONFIG.json text (cJSON_Print, caller frees with free()); NULL when out of
 * memory. */
char *cli_exec_config_text(const cli_exec_spec *s);

/* One step of RESULT.json. */
typedef struct cli_exec_step {
    int step;
    double time_s, loss, lr, grad_norm;
    int measured;
    double compute_s, tp_comm_s, pp_wait_s, dp_comm_s, optimizer_s;
} cli_exec_step;

typedef struct cli_exec_rank {
    int rank, tp_rank, pp_rank, dp_rank;
    double peak_memory_bytes;
    double compute_s, tp_comm_s, pp_wait_s, dp_comm_s, optimizer_s;
} cli_exec_rank;

/* RESULT.json, version 1. */
typedef struct cli_exec_result {
    char status[16];             /* "ok", "failed" */
    char error[512];             /* "" when none */
    int failed_rank;             /* -1: none */
    int ranks;
    char device[16], transport[16];
    int threads_per_rank;
    char host[128];
    double tokens_per_step;
    double model_flops_per_step, hardware_flops_per_step;
    int nsteps;
    cli_exec_step *steps;        /* owned */
    int nranks;
    cli_exec_rank *rank_stats;   /* owned */
} cli_exec_result;

/* Read RESULT.json at path. ST_ENOENT when there is no file, ST_EPARSE for
 * text that is not JSON, ST_EINVAL for JSON of the wrong shape or version
 * (the message names the file and the field). out is freed on error. */
int cli_exec_result_read(const char *path, cli_exec_result *out, st_err *err);
void cli_exec_result_free(cli_exec_result *r);

/* Figures of a result: the median time of the measured steps (NAN when
 * none), and their count. */
double cli_exec_median_step_s(const cli_exec_result *r, int *measured);

#endif
