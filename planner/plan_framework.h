/*
 * plan_framework.h: the training stacks a plan is for.
 *
 * A plan is always for a stack that exists: SageMaker's model-parallel
 * library v1 (the default), Megatron-LM / Megatron-Core (and NeMo, which
 * runs Megatron-Core), DeepSpeed (Megatron-DeepSpeed), PyTorch FSDP, JAX on
 * XLA (MaxText, Paxml), or smdplan's own executor. A framework is three
 * things (plan_framework.c, each with its source):
 *   1. the knobs it has, so the search proposes only what it can run (SMP v1
 *      runs the "simple" and "interleaved" pipelines, caps microbatches in
 *      flight with active_microbatches, shards optimizer state or, without
 *      a pipeline, parameters; Megatron-Core runs 1F1B and interleaved
 *      virtual stages, sequence and context parallelism ...);
 *   2. how it behaves: which collectives it overlaps, its attention kernel,
 *      its gradient and parameter collectives under sharding, its host time
 *      per kernel, its rank order;
 *   3. its efficiency parameters, fitted per (framework, GPU chip) by
 *      `smdplan calibrate` and kept in the catalog (plan_fw_eff), never per
 *      published source or row.
 * A framework may have several profiles: one per version whose behaviour
 * differs in a way the model sees (Megatron-LM's 2020 release had no
 * pipeline and an unfused attention path; Megatron-Core overlaps its
 * collectives). Profiles of one family share the family's fitted
 * efficiencies.
 *
 * Pure data and lookups: no files.
 */
#ifndef SMD_PLAN_FRAMEWORK_H
#define SMD_PLAN_FRAMEWORK_H

#include <stddef.h>

#include "planner/plan.h"

/* Families: efficiencies are fitted per (family, chip). */
typedef enum plan_fw_family {
    PLAN_FW_SMP = 0,             /* SageMaker model parallelism library v1 */
    PLAN_FW_MEGATRON,            /* Megatron-LM, Megatron-Core, NeMo */
    PLAN_FW_DEEPSPEED,           /* DeepSpeed, Megatron-DeepSpeed */
    PLAN_FW_FSDP,                /* PyTorch FSDP (llm-foundry, torchtitan) */
    PLAN_FW_JAX,                 /* JAX on XLA: MaxText, Paxml */
    PLAN_FW_SMDPLAN,             /* smdplan's own executor (exec/) */
    PLAN_FW_PYTORCH,             /* plain PyTorch DDP: a stack not known by name */
    PLAN_FW__COUNT
} plan_fw_family;

/* "smp", "megatron", "deepspeed", "fsdp", "jax", "smdplan", "pytorch". */
const char *plan_fw_family_key(plan_fw_family f);

/* How gradients and parameters move under a sharding mode. */
typedef enum plan_fw_sync {
    /* gradients reduced once per step, after the last microbatch's
     * backward (in buckets, overlapped with it when dp_overlap); sharded
     * optimizers then all-gather the updated parameters once per step */
    PLAN_SYNC_PER_STEP = 0,
    /* gradients reduce-scattered after every microbatch's backward
     * (DeepSpeed ZeRO-2/3, FSDP without no_sync) */
    PLAN_SYNC_PER_MICROBATCH,
} plan_fw_sync;

/* Names a run's framework text may give a profile by (NULL-terminated). */
#define PLAN_FW_NAMES_MAX 10

typedef struct plan_framework {
    const char *key;             /* "smp", "megatron", "megatron-2020", ... */
    plan_fw_family family;
    const char *label;           /* "SageMaker model parallel v1" */
    /* Texts of a published run's framework column that name this profile
     * (case-insensitive substrings, NULL-terminated); the first profile in
     * table order with a matching text wins. */
    const char *names[PLAN_FW_NAMES_MAX];
    int user;                    /* offered to --framework */

    /* ---- 1. knobs the stack has ---- */
    unsigned schedules;          /* bit 1 << plan_schedule */
    unsigned shardings;          /* bit 1 << plan_sharding */
    unsigned shardings_with_pp;  /* of those, the ones that combine with pp > 1 */
    unsigned shardings_with_tp;  /* ... and with tp > 1 */
    unsigned recomputes;         /* bit 1 << plan_recompute */
    int recompute_groups;        /* checkpoints may group k > 1 layers */
    int sequence_parallel;       /* 1: has Megatron sequence parallelism */
    int context_parallel;        /* 1: has context parallelism */
    int active_cap;              /* 1: SMP's active_microbatches knob */
    int offload;                 /* 1: activation offload to host */
    int prescaled;               /* 1: SMP's prescaled_batch knob */
    int placement_search;        /* 1: rank order is a knob (SMP placement_strategy) */
    int fp8;                     /* 1: FP8 linears (Transformer Engine or XLA) */
    int tp_max_in_node;          /* TP degree at most the GPUs of a node, a power of two */
    /* the instance types it runs on, as the catalog names them (NULL-
     * terminated); none listed: any node */
    const char *instance_types[PLAN_FW_NAMES_MAX];

    /* ---- 2. behaviour ---- */
    const char *placement;       /* rank order, outermost first ("PDT": TP innermost) */
    int flash_attention;         /* fused attention kernel, no s x s scores stored */
    int dp_overlap;              /* gradient buckets overlapped with the backward */
    double dp_bucket_bytes;      /* gradient reduction message; 1e30: the whole buffer */
    int dp_bucket_layer;         /* gradients reduced one transformer layer at a time */
    plan_fw_sync sync_sharded;   /* with ZeRO-2/3: per step or per microbatch */
    int param_gather_overlap;    /* sharded optimizer's parameter all-gather overlapped
                                  * with the next step's forward */
    int tp_overlap;              /* 0 none, 1 backward TP all-reduce beside the weight-
                                  * gradient GEMM, 2 every TP collective split and
                                  * pipelined behind its GEMM (Transformer Engine) */
    int pp_overlap;              /* p2p sends overlapped with the next chunk's compute */
    int zero3_prefetch;          /* ZeRO-3 gathers prefetched behind compute: layers ahead */
    int zero3_regather;          /* ZeRO-3 re-gathers weights for the recomputed forward */
    int zero2_gathers;           /* ZeRO-2 shards the weights at rest too and gathers
                                  * them for each forward (FSDP SHARD_GRAD_OP) */
    int fp32_grads;              /* gradients accumulated and reduced in fp32 */
    int launch_blocking;         /* runs with CUDA_LAUNCH_BLOCKING=1 */
    double host_op_s;            /* host time per kernel launch (0: compiled graphs) */
    int local_batch;             /* no gradient accumulation: micro-batch = global / dp */
    double optimizer_bytes;      /* optimizer state per parameter, sharded with ZeRO-1+
                                  * (mixed precision; 0: the usual 12 B: fp32 master, m, v) */
    double grad_buffer_bytes;    /* a gradient bucket buffer beside the gradients */

    /* ---- what a silent configuration means (validate, defaults) ---- */
    int64_t default_vocab;       /* the tokenizer its GPT examples train with (0: none) */
    int vocab_multiple;          /* vocabulary padded to a multiple of this x TP (0: none) */
    plan_recompute recompute_default;
    plan_sharding sharding_default;
    int sp_default;              /* sequence parallel when tp > 1 */
    unsigned schedules_unknown;  /* searched when a run does not say */

    const char *doc;             /* the sources of all of the above */
} plan_framework;

/* Every profile, in matching order; plan_frameworks[i].key is unique. */
extern const plan_framework plan_frameworks[];
extern const int plan_nframeworks;

/* Index of the default framework (SMP v1). */
#define PLAN_FW_DEFAULT 0

/* Profile by key ("smp", "megatron", ...; case-insensitive): its index, or
 * ST_EINVAL naming the keys --framework allows. */
int plan_framework_find(const char *key, int *index, st_err *err);

/* Profile a published run's framework text names: its index, or -1. */
int plan_framework_match(const char *text);

/* The profile of index i (PLAN_FW_DEFAULT when out of range). */
const plan_framework *plan_framework_get(int i);

/* "smp, megatron, deepspeed, fsdp, jax, smdplan": the keys --framework
 * takes. A static string. */
const char *plan_framework_user_keys(void);

/* Does framework fw run layout l? 0 if so; otherwise 1 and why, one line
 * naming the knob and what the framework allows (e.g. "schedule zb-h1:
 * SageMaker model parallel v1 runs simple or interleaved"). */
int plan_framework_check(const plan_framework *fw, const plan_layout *l, char *why, size_t n);

/* Does fw run on instance type in (its name, with or without "ml.", in
 * fw's list, or fw lists none)? 1 if so. */
int plan_framework_runs_on(const plan_framework *fw, const plan_instance *in);

/* "ml.g4dn.12xlarge, ml.p3.16xlarge, ...": the instance types fw runs on,
 * into buf ("" when any). Returns buf. */
const char *plan_framework_instance_list(const plan_framework *fw, char *buf, size_t n);

/* Use the catalog's efficiencies fitted for framework index i's family on
 * c's chip (plan_cluster_use). Returns the fit used, or NULL. */
const plan_fw_eff *plan_cluster_use_framework(const plan_catalog *cat, int i, plan_cluster *c);

/* The pipeline schedule of l by the name its stack gives it: SMP v1 calls
 * GPipe "simple" and 1F1B "interleaved" (smd_model_parallel_general.rst,
 * pipeline); Megatron-LM, DeepSpeed, PyTorch and the others call 1F1B
 * "1f1b" and keep "interleaved" for 1F1B over virtual stages (Narayanan et
 * al. 2021, Sec. 2.2; Megatron's --num-layers-per-virtual-pipeline-stage),
 * GPipe "gpipe" (torch.distributed.pipelining ScheduleGPipe). A static
 * string; plan_schedule_name stays the option's and the records' word. */
const char *plan_framework_schedule_name(const plan_layout *l);

/* Set l's behaviour fields (attention kernel, overlaps, buckets, rank order
 * when the framework fixes it, gradient precision, launch mode) to fw's. */
void plan_framework_apply(const plan_framework *fw, int index, plan_layout *l);

#endif
