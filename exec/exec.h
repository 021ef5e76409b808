/*
 * exec.h: the executor's public interface (what app/ includes).
 *
 *  - exec_features: which backends this build has (CUDA, NCCL, MPI), for
 *    --version and for the provenance of every record.
 *  - exec_config: what one run does (CONFIG.json version 1, the contract
 *    between `smdplan exec` and the rank program smdplan-rank), with its
 *    reader and writer.
 *  - exec_result: what one run measured (RESULT.json version 1), with its
 *    writer (atomic: temp file, fsync, rename) and reader.
 *  - exec_run (exec/exec_run.h): run a config on this rank (collective over
 *    the world group), what the rank program build/smdplan-rank does.
 *  - exec_layout (exec/exec_layout.h): a layout and a model as the executor
 *    runs them, checked before anything is written or launched.
 *
 * Beyond the contract's first version: model.mlp ("plain" | "gated", the
 * architecture's own when absent), train.stop_after, the "debug" object
 * (dump_weights, fail_rank / fail_step / fail_mode for fault injection) and,
 * per rank, peak_memory_by_class_bytes, max_rss_bytes and
 * device_memory_peak_bytes (what the accelerator's own memory API saw in
 * use at most: cudaMemGetInfo's total - free, the CUDA context and the
 * libraries' buffers included; 0 on the CPU devices), device_name (what
 * the device says it is: the GPU's model), and in the layout
 * flash_attention (the fused attention kernel, on a device that has one),
 * and in the model head_dim, sliding_window and sliding_window_pattern
 * (plan_model; written only where the model has them, and refused by the
 * checks: the executor's attention is hidden x hidden over the whole
 * sequence).
 * A rank program
 * with threads_per_rank > 1 should be launched unbound (mpirun --bind-to
 * none, or a binding of that many cores per rank): Open MPI binds each rank
 * to one core by default, and its BLAS and loop threads would share it.
 *
 * The model shape and the layout are the planner's own structs, so a plan
 * runs exactly as the planner described it; the enum strings in the JSON are
 * the planner's names (plan_schedule_name, plan_recompute_name,
 * plan_sharding_name, "DPT"-style placement).
 */
#ifndef SMD_EXEC_H
#define SMD_EXEC_H

#include <stdint.h>

#include "common/st.h"
#include "planner/plan.h"

typedef struct exec_features {
    int cuda;                    /* CUDA backend built */
    int nccl;                    /* NCCL transport built */
    int mpi;                     /* MPI transport built */
} exec_features;

/* Backends compiled into this build. */
exec_features exec_features_built(void);

/* Devices of kind name on this host ("cuda": the GPUs CUDA sees; "cpu",
 * "cpu64": 1) and the memory of one, bytes: for "cuda" the smallest GPU's
 * total memory as the device describes itself (no context is made); 0 for
 * the CPU devices (their memory is the host's). For "cuda" this opens the
 * module smdplan-cuda-info.so (CUDA's runtime alone). ST_EUNSUPPORTED when
 * the kind is not in this build, ST_ENOENT with one line when its module
 * is missing or cannot be loaded (CUDA's libraries absent). */
int exec_device_query(const char *name, int *count, double *memory_bytes, st_err *err);

/* The same, each alone: 0 when there are none, the kind is not in this
 * build or its module cannot be had. */
int exec_device_count(const char *name);
double exec_device_memory_bytes(const char *name);

/* "CUDA NCCL MPI" style summary with "+"/"-" per feature, e.g.
 * "+cuda +nccl +mpi". Returns a static string. */
const char *exec_features_str(void);

/* ------------------------------------------------------------------------ */
/* CONFIG.json                                                               */
/* ------------------------------------------------------------------------ */

#define EXEC_CONFIG_VERSION 1
#define EXEC_RESULT_VERSION 1
#define EXEC_PATH_MAX 1024
#define EXEC_NAME_MAX 32

typedef enum exec_data_kind {
    EXEC_DATA_SYNTHETIC = 0,     /* seeded uniform tokens */
    EXEC_DATA_TEXT,              /* a file read as bytes (vocab 256) */
    EXEC_DATA_TOKENS,            /* a file of little-endian uint16 token ids */
    EXEC_DATA__COUNT
} exec_data_kind;

const char *exec_data_kind_name(exec_data_kind k); /* "synthetic", "text", "tokens" */

typedef struct exec_train {
    int64_t steps;               /* optimizer steps to run (>= 1) */
    uint64_t seed;               /* weights and synthetic data */
    double lr;                   /* peak learning rate */
    double min_lr;               /* floor of the cosine decay */
    int64_t warmup_steps;        /* linear warm-up to lr */
    double weight_decay;         /* AdamW's decoupled decay (matrices and embeddings) */
    double beta1, beta2, eps;    /* Adam */
    double grad_clip;            /* global gradient-norm limit; 0: no clipping */
    int64_t warmup_steps_unmeasured; /* first steps reported "measured": false */
    int64_t stop_after;          /* end after this many steps as if interrupted (the
                                  * schedule still spans `steps`); 0: run them all */
} exec_train;

typedef struct exec_config {
    int version;                 /* EXEC_CONFIG_VERSION */
    plan_model model;            /* finished (plan_model_finish) by the reader */
    plan_layout layout;          /* global_batch = dp x micro_batch x microbatches */
    exec_train train;
    exec_data_kind data_kind;
    char data_path[EXEC_PATH_MAX];   /* "" for synthetic */
    char device[EXEC_NAME_MAX];      /* "cpu" (and "cpu64": double, for tests), "cuda"
                                      * (bf16 on one GPU per rank, when built) */
    char transport[EXEC_NAME_MAX];   /* "mpi", "self" (one rank, no MPI), "nccl" (GPU
                                      * buffers, one GPU per rank, when built); a cuda
                                      * device under mpi or self is staged through host
                                      * memory (several ranks may share a GPU) */
    int threads_per_rank;            /* BLAS threads per rank (>= 1) */
    char save_dir[EXEC_PATH_MAX];    /* checkpoint directory, "" none */
    int64_t save_every;              /* steps between checkpoints (0: only at the end
                                      * when save_dir is set) */
    char resume_dir[EXEC_PATH_MAX];  /* checkpoint to continue from, "" none */
    double timeout_s;                /* longest blocking wait before the job aborts */
    int progress;                    /* rank 0 prints one line per step */
    /* Test mode ("debug": {"dump_weights": DIR}): after the last step every
     * rank writes the weights it owns, by global tensor and offset
     * (exec_dump.h), so runs on different layouts can be compared. */
    char dump_dir[EXEC_PATH_MAX];
    /* Fault injection ("debug": {"fail_rank": R, "fail_step": S, "fail_mode":
     * "error" | "hang"}): rank R fails at the start of step S (1-based) with
     * an error, or stops answering (the others time out). -1: none. */
    int fail_rank;
    int64_t fail_step;
    int fail_hang;
} exec_config;

/* The contract's example defaults: gpt, 1-way layout, 20 steps, seed 1234,
 * AdamW (3e-4 .. 3e-5, warm-up 2, decay 0.1, betas 0.9/0.95, eps 1e-8, clip
 * 1.0), synthetic data, cpu device, mpi transport, 1 thread, timeout 60 s. */
void exec_config_default(exec_config *cfg);

/* Parse CONFIG.json text (version 1). Unknown keys, wrong types and values
 * out of range are ST_EINVAL with one line naming the key and what is
 * allowed; malformed JSON is ST_EPARSE. Knobs the executor does not run
 * (cp > 1, offload_activations, dropout, ...) are refused here (ST_EINVAL
 * naming the knob), before any rank starts work. Fills the model's counts. */
int exec_config_parse(const char *json, exec_config *cfg, st_err *err);
/* The same from a file (ST_ENOENT / ST_EIO when it cannot be read). */
int exec_config_read(const char *path, exec_config *cfg, st_err *err);

/* The config as CONFIG.json text (malloc'd, caller frees); NULL on ENOMEM. */
char *exec_config_json(const exec_config *cfg);
/* Write it atomically (temp file in the same directory, fsync, rename). */
int exec_config_write(const char *path, const exec_config *cfg, st_err *err);

/* Checks that need the layout and the rank count together: tp x pp x dp ==
 * ranks, heads and kv heads divisible by tp, vocab and ffn by tp, sequence by
 * tp with sequence parallelism, chunks <= layers, the schedule's own rules
 * (sim_sched_check). ST_EINVAL with one line. */
int exec_config_check(const exec_config *cfg, int ranks, st_err *err);

/* Checks of the files a config names, before any work: the data file is
 * readable, a resume directory has a checkpoint (latest.json), a save
 * directory's parent exists. ST_ENOENT / ST_EINVAL with the path. */
int exec_config_check_files(const exec_config *cfg, st_err *err);

/* ------------------------------------------------------------------------ */
/* RESULT.json                                                               */
/* ------------------------------------------------------------------------ */

/* Wall time by phase, seconds. */
typedef struct exec_phases {
    double compute_s;            /* forward, backward, recompute, loss */
    double tp_comm_s;            /* tensor-parallel collectives (with sequence parallelism
                                  * also the sum of the norms' gradients over TP) */
    double pp_wait_s;            /* waiting for pipeline receives (and sends at the end) */
    double dp_comm_s;            /* data-parallel gradient sync and parameter gathers
                                  * not hidden behind compute */
    double optimizer_s;          /* clipping, AdamW, embedding-group sync */
} exec_phases;

/* Bytes the executor allocates, by buffer class. */
typedef enum exec_mem_class {
    EXEC_MEM_PARAMS = 0,         /* weights (shards with ZeRO-3, gathered layers too) */
    EXEC_MEM_GRADS,
    EXEC_MEM_OPTIMIZER,          /* Adam m and v (shards with ZeRO-1+) */
    EXEC_MEM_ACTIVATIONS,        /* stored activations of the microbatches in flight */
    EXEC_MEM_WORKSPACE,          /* recompute, backward scratch, logits */
    EXEC_MEM_COMM,               /* send/receive and bucket buffers */
    EXEC_MEM__COUNT
} exec_mem_class;

const char *exec_mem_class_name(exec_mem_class c); /* "params", "grads", ... */

typedef struct exec_step_result {
    int64_t step;                /* 1-based */
    double time_s;               /* slowest rank's wall time of the step */
    double loss;                 /* mean cross-entropy over the step's tokens, nats */
    double lr;
    double grad_norm;            /* global norm before clipping */
    int measured;                /* 0 for the first warmup_steps_unmeasured steps */
    exec_phases phases;          /* mean over ranks */
} exec_step_result;

typedef struct exec_rank_stat {
    int rank, tp_rank, pp_rank, dp_rank;
    double peak_memory_bytes;    /* most bytes the executor held at once */
    double peak_class_bytes[EXEC_MEM__COUNT]; /* peak of each class on its own */
    double max_rss_bytes;        /* the process's peak resident set (getrusage) */
    double device_memory_peak_bytes; /* the GPU's memory in use at most (cudaMemGetInfo:
                                      * total - free at every sync); 0 on the CPU */
    exec_phases phases;          /* totals over the measured steps */
} exec_rank_stat;

#define EXEC_STATUS_MAX 16
#define EXEC_HOST_MAX 256

typedef struct exec_result {
    int version;                 /* EXEC_RESULT_VERSION */
    char status[EXEC_STATUS_MAX];/* "ok" or "failed" */
    char error[ST_MSG_MAX];      /* one line when failed, "" otherwise */
    int failed_rank;             /* -1: none */
    int ranks;
    char device[EXEC_NAME_MAX];
    char transport[EXEC_NAME_MAX];
    int threads_per_rank;
    char host[EXEC_HOST_MAX];
    char device_name[EXEC_HOST_MAX]; /* rank 0's device as it names itself ("NVIDIA H100
                                      * 80GB HBM3, compute capability 9.0, ..."; the CPU:
                                      * "cpu") */
    double tokens_per_step;
    double model_flops_per_step; /* 6 N T + attention, no recompute (MFU's numerator) */
    double hardware_flops_per_step; /* what the ranks computed, recompute included */
    int nsteps;
    exec_step_result *steps;     /* malloc'd */
    int nranks;
    exec_rank_stat *rank_stats;  /* malloc'd, by rank */
} exec_result;

void exec_result_init(exec_result *r);
void exec_result_free(exec_result *r);

/* RESULT.json text (malloc'd); NULL on ENOMEM. */
char *exec_result_json(const exec_result *r);
/* Write atomically: temp file beside path, fsync, rename. */
int exec_result_write(const char *path, const exec_result *r, st_err *err);
/* Read RESULT.json back (for the launcher). ST_EPARSE / ST_EINVAL naming
 * the bad key. */
int exec_result_parse(const char *json, exec_result *r, st_err *err);
int exec_result_read(const char *path, exec_result *r, st_err *err);

#endif
