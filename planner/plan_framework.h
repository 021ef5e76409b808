/*
 * plan_framework.h: the training stacks a plan is for, release by release.
 *
 * A plan is always for a stack that exists, at a release: SageMaker's
 * model-parallel library v1 (the default), Megatron-LM by year and
 * Megatron-Core, NeMo by year, DeepSpeed and Megatron-DeepSpeed, PyTorch
 * FSDP1 and FSDP2, llm-foundry, torchtitan, JAX on XLA, or smdplan's own
 * executor. A profile (one stack at one release, "megatron@2022") is three
 * things:
 *   1. the knobs it has, so the search proposes only what it can run;
 *   2. how it behaves: which collectives it overlaps, its attention kernel
 *      generation, its gradient and parameter collectives under sharding and
 *      how far ahead it prefetches them, its host time per kernel, its rank
 *      order; and what a run that does not say means (its defaults);
 *   3. its efficiency parameters, fitted per (family, GPU chip) by `smdplan
 *      calibrate` and kept in the catalog (plan_fw_eff), never per release,
 *      published source or row.
 *
 * The profiles are data: data/frameworks.json, read by data/ (one entry per
 * release, inheriting from an earlier one, each value with its citation)
 * and installed here with plan_frameworks_set. The planner does no file
 * I/O: a program installs the profiles once before it plans (the smdplan
 * program at start; tests through their helper). Until then there are
 * none, and plan_framework_get gives an empty profile labelled so.
 *
 * A stack is named by the documented names of the thing (its product and
 * library names, never a row's spelling); a release by its key, by a name
 * only that release has (PTD-P for Megatron-LM 2021), by a version number
 * after a stack name ("Megatron-Core r0.8.0", "NeMo 24.07"), by a year in
 * the text, or by the date of its source: the release in force then.
 */
#ifndef SMD_PLAN_FRAMEWORK_H
#define SMD_PLAN_FRAMEWORK_H

#include <stddef.h>

#include "planner/plan.h"

/* Families: efficiencies are fitted per (family, chip). */
typedef enum plan_fw_family {
    PLAN_FW_SMP = 0,             /* SageMaker model parallelism library */
    PLAN_FW_MEGATRON,            /* Megatron-LM, Megatron-Core, NeMo */
    PLAN_FW_DEEPSPEED,           /* DeepSpeed, Megatron-DeepSpeed */
    PLAN_FW_FSDP,                /* PyTorch FSDP (llm-foundry, torchtitan, metaseq) */
    PLAN_FW_JAX,                 /* JAX on XLA: MaxText, Paxml */
    PLAN_FW_SMDPLAN,             /* smdplan's own executor (exec/) */
    PLAN_FW_PYTORCH,             /* plain PyTorch DDP: a stack not known by name */
    PLAN_FW__COUNT
} plan_fw_family;

/* "smp", "megatron", "deepspeed", "fsdp", "jax", "smdplan", "pytorch". */
const char *plan_fw_family_key(plan_fw_family f);
/* The family of a key, or -1. */
int plan_fw_family_parse(const char *key);

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

/* How a stack adds each microbatch's weight gradients to those of the
 * step's earlier microbatches. */
typedef enum plan_fw_accum {
    /* inside the weight-gradient GEMM (beta = 1 into the buffer: Megatron's
     * gradient_accumulation_fusion, Transformer Engine's fuse_wgrad_-
     * accumulation), or sharded so that the pass is over a shard */
    PLAN_ACCUM_FUSED = 0,
    /* a pass of its own over the stage's gradients after every microbatch's
     * backward, into a main_grad buffer (Megatron's DDP hook
     * main_grad.add_(grad); DeepSpeed's BF16_Optimizer) */
    PLAN_ACCUM_MAIN_GRAD,
    /* PyTorch autograd's AccumulateGrad (grad += new) from the second
     * microbatch on (the first assigns) */
    PLAN_ACCUM_AUTOGRAD,
} plan_fw_accum;

/* Sizes of a profile's texts. */
#define PLAN_FW_KEY_MAX 32       /* "megatron-deepspeed@2022" */
#define PLAN_FW_WORD_MAX 40      /* one documented name */
#define PLAN_FW_NAMES_MAX 12     /* names of a stack given by one entry */
#define PLAN_FW_RELNAMES_MAX 4   /* names only one release has */
#define PLAN_FW_VERSIONS_MAX 4   /* version numbers a release begins at */
#define PLAN_FW_TYPES_MAX 10     /* instance types a stack runs on */
#define PLAN_FW_MAX 64           /* profiles installed at once */
/* Bucket sizes with a meaning of their own (dp_bucket_bytes). */
#define PLAN_FW_WHOLE_BUFFER 1e30 /* one message for the whole gradient buffer */

/* A version number a release begins at, after one of the stack's names
 * ("Megatron-Core" 0.6 for Megatron-Core's 2024 release). */
typedef struct plan_fw_version {
    char name[PLAN_FW_WORD_MAX];
    int v[3];                    /* major, minor, patch */
} plan_fw_version;

typedef struct plan_framework {
    /* ---- identity ---- */
    char key[PLAN_FW_KEY_MAX];   /* "megatron@2022"; a stack with one release may have
                                  * no "@" ("smdplan") */
    char stack[PLAN_FW_KEY_MAX]; /* the key before "@": "megatron" */
    char inherits[PLAN_FW_KEY_MAX]; /* the profile it was written against ("" none) */
    plan_fw_family family;
    char label[96];              /* "Megatron-LM 2022 (sequence parallelism)" */
    int released_ym;             /* in force from year * 12 + month - 1 (0: not dated) */
    /* Documented names of the stack (case-insensitive words of a run's
     * framework text). Any release of a stack may list some; together they
     * name the stack. */
    char names[PLAN_FW_NAMES_MAX][PLAN_FW_WORD_MAX];
    /* Names only this release has ("PTD-P", "FSDP2"). */
    char release_names[PLAN_FW_RELNAMES_MAX][PLAN_FW_WORD_MAX];
    /* A version after a stack name at or past one of these (and below the
     * next release's) is this release. */
    plan_fw_version versions[PLAN_FW_VERSIONS_MAX];
    int nversions;
    /* Stack names whose versions are calendar ones, YY.MM (NGC containers:
     * "NeMo 24.07" is July 2024): such a version is a date. */
    char calendar_names[PLAN_FW_RELNAMES_MAX][PLAN_FW_WORD_MAX];
    /* Keys this profile answered to before it was a release ("megatron-2021"),
     * so that old records and scripts still read. */
    char aliases[PLAN_FW_RELNAMES_MAX][PLAN_FW_KEY_MAX];
    /* The other stack this one joins to the one it inherits from ("" none):
     * a text that names both names this one ("megatron" on
     * Megatron-DeepSpeed, Megatron-LM's layers on DeepSpeed's engine). */
    char joins[PLAN_FW_KEY_MAX];

    /* ---- 1. knobs the stack has ---- */
    unsigned schedules;          /* bit 1 << plan_schedule */
    unsigned shardings;          /* bit 1 << plan_sharding */
    unsigned shardings_with_pp;  /* of those, the ones that combine with pp > 1 */
    unsigned shardings_with_tp;  /* ... and with tp > 1 */
    unsigned recomputes;         /* bit 1 << plan_recompute */
    int recompute_groups;        /* checkpoints may group k > 1 layers */
    int sequence_parallel;       /* 1: has Megatron sequence parallelism */
    int context_parallel;        /* 1: has context parallelism */
    int cp_all_to_all;           /* 1: it is DeepSpeed-Ulysses: all-to-alls of Q, K, V and
                                  * the output around the attention, heads split over
                                  * the group; 0: a ring exchange of K and V */
    int active_cap;              /* 1: SMP's active_microbatches knob */
    int offload;                 /* 1: activation offload to host */
    int offload_layers_held;     /* > 0: offload by layer, the checkpointed layers a
                                  * stage keeps on the GPU (the running one and those
                                  * loaded ahead); 0: by microbatch (SMP v1: those not
                                  * running wait on the host, none with one) */
    int prescaled;               /* 1: SMP's prescaled_batch knob */
    int placement_search;        /* 1: rank order is a knob (SMP placement_strategy) */
    int fp8;                     /* 1: FP8 linears (Transformer Engine, torchao or XLA) */
    int tp_max_in_node;          /* TP degree at most the GPUs of a node, a power of two */
    /* the instance types it runs on, as the catalog names them; none listed
     * (an empty first name): any node */
    char instance_types[PLAN_FW_TYPES_MAX][24];

    /* ---- 2. behaviour ---- */
    char placement[4];           /* rank order, outermost first ("PDT": TP innermost) */
    plan_attn attention;         /* the attention kernel generation it runs */
    int flash_attention;         /* attention != PLAN_ATTN_UNFUSED: no s x s scores stored */
    int dp_overlap;              /* gradient buckets overlapped with the backward */
    double dp_bucket_bytes;      /* gradient reduction message; PLAN_FW_WHOLE_BUFFER:
                                  * the whole buffer */
    int dp_bucket_layer;         /* gradients reduced one transformer layer at a time */
    plan_fw_sync sync_sharded;   /* with ZeRO-2/3: per step or per microbatch */
    int pp_sync_once;            /* with a pipeline: sharded gradients reduce-scattered
                                  * once, at the last microbatch's backward, parameters
                                  * kept gathered between microbatches, whatever
                                  * sync_sharded says without one */
    plan_fw_accum wgrad_accum;   /* how microbatches' weight gradients are summed */
    int tflops_model;            /* the TFLOP/s its own logs print count model FLOPs
                                  * (no recompute); else the FLOPs executed */
    int pipeline_ends;           /* the first and last pipeline stages may hold fewer
                                  * layers than the others, which split the rest evenly */
    int virtual_even;            /* the interleaved schedule's model chunks hold equal
                                  * whole numbers of layers: layers a multiple of pp x v */
    int pipeline_embedding_loss; /* with virtual_even, the embedding and the loss may
                                  * each count as a layer of the split (the first and
                                  * the last chunk one transformer layer fewer) */
    int fused_with_tp;           /* with tp > 1 its layers are Transformer Engine's fused
                                  * ones, whatever unfused_pointwise says of tp 1 */
    int param_gather_overlap;    /* sharded optimizer's parameter all-gather overlapped
                                  * with the next step's forward */
    int tp_overlap;              /* 0 none, 1 backward TP all-reduce beside the weight-
                                  * gradient GEMM, 2 every TP collective split and
                                  * pipelined behind its GEMM (Transformer Engine) */
    unsigned tp_overlaps;        /* the tp_overlap levels a layout may take on this stack
                                  * (bits); 0: every level up to its own tp_overlap (a
                                  * stack that overlaps can be told not to) */
    int async_tp;                /* tp_overlap 2 is PyTorch's micro-pipelined async TP:
                                  * every collective of a TP linear cut into tp pieces
                                  * exchanged by the copy engines beside the partial
                                  * products; needs torch.compile */
    int ub_pipeline_sms;         /* tp_overlap 2: SMs a pipelined reduce-scatter takes
                                  * from its product (Transformer Engine num_sm) */
    int ub_pipeline_splits;      /* tp_overlap 2: pieces of a pipelined product (num_splits) */
    int ub_bulk_sms;             /* tp_overlap 2: SMs a bulk-overlapped collective runs on
                                  * beside its product (num_sm) */
    int pp_overlap;              /* p2p sends overlapped with the next chunk's compute */
    int zero3_prefetch;          /* ZeRO-3 / FSDP: per-layer all-gathers issued this many
                                  * layers ahead of the compute that needs them (0: none,
                                  * each gather waited for where it is needed) */
    int zero3_regather;          /* ZeRO-3 re-gathers weights for the recomputed forward */
    int zero2_gathers;           /* ZeRO-2 shards the weights at rest too and gathers
                                  * them for each forward (FSDP SHARD_GRAD_OP) */
    int fp32_grads;              /* gradients accumulated and reduced in fp32 */
    int launch_blocking;         /* runs with CUDA_LAUNCH_BLOCKING=1 */
    int no_dropout;              /* trains without dropout whatever the model has
                                  * (plan_model_dropout is the model's own) */
    int measured_kernels;        /* runs this project's executor's kernels: on a chip with
                                  * measured rates (its "measured" file) its efficiencies
                                  * are those, not a pool fitted to other stacks' runs
                                  * (plan_cluster_use_framework) */
    int gelu_epilogue;           /* the MLP's GELU and its gradient in the epilogues of
                                  * its products (cuBLASLt GELU_AUX_BIAS, DGELU) */
    int recompute_block;         /* Megatron's block method: full recompute of the first N
                                  * layers of each model chunk (--recompute-method block) */
    int recompute_every;         /* full recompute of every Nth layer (torchtitan's
                                  * selective_ac_option N): recompute_layers = Lc / N of a
                                  * chunk's Lc, N a divisor of Lc */
    int remat_policies;          /* remat policies that keep some products' outputs
                                  * (MaxText remat_policy) */
    int compile;                 /* 1: the model may run under torch.compile (a knob) */
    int unfused_pointwise;       /* the model's RMSNorm, rotary embedding and SwiGLU are
                                  * written as separate ATen ops: a kernel and a pass
                                  * over its tensors each, unless compiled */
    int selective_ops;           /* selective recompute is torchtitan's op-level policy:
                                  * the attention's output and every other product's
                                  * kept, the rest of each layer recomputed
                                  * (PLAN_SAVE_ALT_MM), not Korthikanti et al.'s */
    int remat_dce;               /* full recompute re-runs only what the backward reads:
                                  * not the MLP's output product (compiled graphs) */
    int residual_epilogue;       /* a layer's two residual adds are read in the epilogues
                                  * of its output products (the product's C operand) where
                                  * one rank holds the layer (TP 1, no SP): no separate
                                  * add pass */
    double host_op_s;            /* host time per kernel launch (0: compiled graphs) */
    int local_batch;             /* no gradient accumulation: micro-batch = global / dp */
    double optimizer_bytes;      /* optimizer state per parameter, sharded with ZeRO-1+
                                  * (mixed precision; 0: the usual 12 B: fp32 master, m, v) */
    double grad_buffer_bytes;    /* a gradient bucket buffer beside the gradients */
    double context_bytes;        /* the device memory in use beyond the stack's own
                                  * tensors (CUDA context, library workspaces, driver
                                  * reservation) as nvidia-smi shows it; 0: the usual
                                  * 0.8 GiB (plan_eval_mem.c CUDA_CONTEXT_BYTES) */
    double loss_bytes_per_logit; /* the cross-entropy's traffic per logit element, forward
                                  * and backward, as the stack's loss runs (0: the
                                  * planner's default, 24 B) */

    /* ---- what a silent configuration means (validate, defaults) ---- */
    int64_t default_vocab;       /* the tokenizer its GPT examples train with (0: none) */
    int vocab_multiple;          /* vocabulary padded to a multiple of this x TP (0: none) */
    plan_recompute recompute_default;
    plan_sharding sharding_default;
    int sp_default;              /* sequence parallel when tp > 1 */
    plan_precision precision_default; /* number format of a run that does not state one */
    unsigned schedules_unknown;  /* searched when a run does not say */
} plan_framework;

/* The installed profiles (plan_frameworks_set), index 0 the default; a
 * read-only view, valid until the next plan_frameworks_set. */
extern const plan_framework *plan_frameworks;
extern int plan_nframeworks;

/* Index of the default framework (SMP v1): plan_frameworks_set puts it first. */
#define PLAN_FW_DEFAULT 0

/* Install n profiles (copied), v[def] becoming the default, index 0; the
 * others keep their order. ST_EINVAL when n is not 1..PLAN_FW_MAX, def is
 * out of range, or two profiles share a key or an alias. */
int plan_frameworks_set(const plan_framework *v, int n, int def, st_err *err);

/* Profile by key: "megatron@2022" exactly, a bare stack "megatron" (its
 * latest release), or an old key one lists as an alias (case-insensitive):
 * its index, or ST_EINVAL naming the stacks --framework allows. */
int plan_framework_find(const char *key, int *index, st_err *err);

/* The profile a published run's framework text names: the stack it names
 * first (longest name at a tie), and of that stack the release its text
 * names (a release name, a version after a stack name, a year), else the
 * one in force at source_ym (year * 12 + month - 1; 0: not known), else
 * the latest. Its index, or -1 when the text names no stack. */
int plan_framework_match(const char *text, int source_ym);

/* Does release i belong to a stack built on stack (its inheritance reaches
 * one of stack's releases: metaseq and torchtitan on PyTorch FSDP, NeMo on
 * Megatron-LM)? 0 for stack's own releases. */
int plan_framework_builds_on(int i, const char *stack);

/* The release of stack in force at ym (year * 12 + month - 1; 0: the
 * latest), its earliest when ym precedes them all: its index, or -1 when no
 * profile is of that stack. */
int plan_framework_release_at(const char *stack, int ym);

/* The profile of index i (the default when out of range; an empty profile
 * when none are installed). Inline: the search's cost model asks it on
 * every layout. */
extern const plan_framework plan__framework_none;
static inline const plan_framework *plan_framework_get(int i)
{
    if (plan_nframeworks == 0)
        return &plan__framework_none;
    return &plan_frameworks[i >= 0 && i < plan_nframeworks ? i : PLAN_FW_DEFAULT];
}

/* "smp, megatron, nemo, ...": the stacks --framework takes (each also as
 * stack@release). A static string, rebuilt by plan_frameworks_set. */
const char *plan_framework_user_keys(void);

/* "2024-07" for a year * 12 + month - 1 (""/"-" when 0) into buf. */
const char *plan_fw_ym_text(int ym, char *buf, size_t n);

/* The tp_overlap levels a layout may take on fw (bits of 0 none, 1
 * backward, 2 pipelined): its tp_overlaps, else every level up to its own. */
unsigned plan_framework_tp_overlaps(const plan_framework *fw);

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
/* A layout's cells as every table and launch file shows them: the schedule
 * by its stack's name ("-" without a pipeline, "NAME/v" over v virtual
 * stages) and the microbatches in flight per stage ("-" where the stack has
 * no such knob), into buf (n bytes). Return buf. */
const char *plan_framework_sched_label(const plan_layout *l, char *buf, size_t n);
const char *plan_framework_act_label(const plan_layout *l, char *buf, size_t n);

/* Set l's behaviour fields (attention kernel, overlaps, buckets, rank order
 * when the framework fixes it, gradient precision, launch mode) to fw's. */
void plan_framework_apply(const plan_framework *fw, int index, plan_layout *l);

#endif
