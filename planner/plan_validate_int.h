/*
 * plan_validate_int.h: how smdplan validate reads a published run's text
 * fields (plan_validate_rules.c, plan_validate_read.c), shared with
 * plan_validate.c, which maps a row, and plan_validate_eval.c, which
 * evaluates what it mapped. Inside planner/ only.
 *
 * Every rule here reads a field of the row (its GPU, interconnect, FLOP
 * convention ...) by what the field says; none names a published source.
 */
#ifndef SMD_PLAN_VALIDATE_INT_H
#define SMD_PLAN_VALIDATE_INT_H

#include "planner/plan_framework.h"
#include "planner/plan_validate.h"

#include <stdio.h>

/* Case-insensitive substring test; an empty needle matches. */
int plan__contains(const char *hay, const char *needle);
/* What a memory figure's metric text says it measured, by the tools'
 * documented names, and its unit in bytes (*unit_bytes: 2^30 where the
 * text or its tool says GiB, else 1e9). */
plan_mem_metric plan__mem_metric(const char *text, double *unit_bytes);

/* NULL, empty or only spaces. */
int plan__blank(const char *s);

/* The text, "" for NULL. */
static inline const char *plan__nz(const char *s)
{
    return s ? s : "";
}

/* src (NULL: "") into dst of n bytes, cut to fit. */
static inline void plan__copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", plan__nz(src));
}

/* A number as people write one ("~10", "1,024"): 0 absent, 1 parsed, -1
 * not a finite number. */
int plan__parse_num(const char *text, double *out);

/* A remark in parentheses after a value ("62 GB (max reserved)") cut
 * from s, with the spaces before it. */
void plan__cut_remark(char *s);

/* A count as sources write it ("MBS=2", "512 sequences", "2K", "~4M
 * tokens", "8 nodes x 8 GPUs"; plan_validate_read.c): 0 absent, 1 read
 * into *d, -1 not a count. */
int plan__read_count(const char *what, const char *text, double *d);
/* A whole count in [min, max] of column `what`: 0 absent, 1 read, -1 not
 * one (the row is skipped with a reason). */
int plan__get_int(plan_validate_result *out, const char *what, const char *text, int64_t min,
                  int64_t max, int64_t *v);

/* The unit families of the measured columns, each read into the column's
 * own unit: seconds, tokens/s, samples/s, TFLOP/s, PFLOP/s, percent, GB. */
typedef enum plan_units {
    PLAN_UNITS_TIME = 0,
    PLAN_UNITS_RATE,
    PLAN_UNITS_SAMPLES,
    PLAN_UNITS_TFLOPS,
    PLAN_UNITS_PFLOPS,
    PLAN_UNITS_PCT,
    PLAN_UNITS_MEM,
} plan_units;
/* A measured figure with its unit ("10 s/iter", "217.7K tokens/s"): 0
 * absent, 1 read, -1 not a number of that family. */
int plan__measure_num(const char *text, plan_units u, double *out);
/* A positive measured value of column `what`: 0 absent, 1 read, -1 bad
 * (the row is skipped with a reason). */
int plan__get_measure(plan_validate_result *out, const char *what, const char *text,
                      plan_units u, double *v);
/* A percentage of peak ("41", "41 %"; a value at most 1 without a percent
 * sign a fraction, said in the notes). */
int plan__get_pct(plan_validate_result *out, const char *what, const char *text, double *v);

/* The row not compared, for the reason fmt gives; returns 1. */
int plan__skip(plan_validate_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A note on how the row was read, after the ones before it. */
void plan__note(plan_validate_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The cluster row r ran on into out->inst (and out->own_gpu, out->gpu,
 * out->nodes, out->gpus, out->instance) for its gpus GPUs
 * (plan_validate_cluster.c); 1 when the row is skipped, with the reason. */
int plan__map_cluster(const plan_catalog *cat, const plan_validate_row *r, int64_t gpus,
                      plan_validate_result *out);
/* The GPUs of a row that does not count them: the product of its degrees,
 * else its instance count times the type's GPUs; 0 when neither. *how
 * says which. */
int64_t plan__gpus_of_layout(const plan_catalog *cat, const plan_validate_row *r,
                             const char **how);
/* The GPUs of a count of nodes ("8 DGX H100 nodes", "16 p4d nodes"): the
 * nodes times the GPUs of the instance type the text or the row's
 * instance_type names, else of the row's chip's reference node; 0 when the
 * text counts no nodes or no node is known. *how says which. */
int64_t plan__gpus_of_nodes(const plan_catalog *cat, const plan_validate_row *r,
                            const char *text, const char **how);

/* A row's recompute, optimizer sharding and yes/no texts: -1 not
 * understood, -2 the framework's default (the text says nothing, "N/A",
 * "not stated" ...), -3 understood but not modelled (a partial remat
 * policy; states offloaded to the host), else the plan_recompute /
 * plan_sharding value, or 0/1.
 * plan__parse_sharding sets *degree for a shard group smaller than the
 * data-parallel group (-1: the node's GPUs, FSDP HYBRID_SHARD). */
int plan__parse_recompute(const char *s);

/* The outputs a MaxText remat policy the text names keeps (PLAN_SAVE_*
 * bits): a named policy's, or the custom policy's tensors set to "device";
 * -3 for a policy keeping them on the host (the *_offloaded policies,
 * "offload" in custom) or custom without its settings, -1 when the text
 * names none. */
int plan__parse_remat_saved(const char *s);

/* A text naming full checkpoints of every Nth layer (torchtitan's
 * selective_ac_option N, "every other layer", "every 3rd layer"): N, else -1. */
int plan__parse_recompute_every(const char *s);
/* The layer count full recompute's text gives under a stack's documented
 * key (Megatron-LM --recompute-num-layers and, before 2022,
 * --checkpoint-num-layers; Megatron-Core recompute_num_layers; NeMo
 * activations_checkpoint_num_layers), -1 when none: with the block method
 * named (*block = 1) the layers recomputed per model chunk, else the
 * layers of one checkpoint (the uniform method). */
int plan__parse_recompute_layers(const char *s, int *block);
int plan__parse_sharding(const char *s, int *degree);
int plan__parse_flag(const char *s);

/* A row's precision text: -2 not stated (blank, "not stated" ...: the
 * release's default), PLAN__PREC_FP4 for the names of 4-bit floating point
 * (FP4, NVFP4, MXFP4, E2M1), which the planner does not model, else the
 * plan_precision of the linears: FP8 for the names of 8-bit floating point
 * (FP8, float8, E4M3, E5M2), fp32 for fp32 training (not fp32 gradients or
 * masters beside half precision), else bf16 (bf16, fp16, mixed or half
 * precision: one tensor-core rate). */
#define PLAN__PREC_FP4 (-3)
/* A key (a word's start: "checkpoint", "sequence") given a no as its value
 * ("activation_checkpointing: false", "sequence_parallel=False",
 * "checkpointing disabled"), or a text that opens with "without" and names
 * it: the row says the thing was off. */
int plan__key_says_no(const char *s, const char *key);
/* A virtual_stages text that gives no count: blank, or words without a
 * number that name the schedule ("interleaved", "virtual pipeline"). */
int plan__virtual_unstated(const char *s);
/* The row's model into out->model (plan_validate_model.c); 1 when the row
 * is skipped (out says why). */
int plan__map_model(const plan_validate_row *r, const struct plan_framework *fw,
                    plan_validate_result *out);
int plan__parse_precision(const char *s);

/* An FSDP mixed-precision mode the text names as a word of its own, in the
 * upper case of its documentation: 1 DEFAULT, 2 PURE, 3 FULL, 0 none. */
int plan__fsdp_mp_mode(const char *s);
/* 1: the text names DeepSpeed's ZeRO (its stages, config key or the ZeRO
 * paper's stage names); names one of PyTorch FSDP's sharding strategies. */
int plan__names_zero(const char *s);
int plan__names_fsdp_strategy(const char *s);
/* DeepSpeed-Ulysses where the text names it (DeepSpeed-Ulysses, Megatron-
 * DeepSpeed's --ds-sequence-parallel-size): its degree where the text gives
 * one ("Ulysses 4", "4-way Ulysses", "ds_sequence_parallel_size=4"), 0
 * without one, -1 not named. */
int plan__ulysses_degree(const char *s);
/* 1: the row states its GPU's memory (gpu_mem_gb, or "80GB" in its GPU
 * text). The next larger memory (bytes) of the catalog's variants of the
 * chip the row's GPU text names than bytes, 0 if none (plan_validate_
 * cluster.c). */
int plan__row_states_mem(const plan_validate_row *r);
double plan__larger_variant_mem(const plan_catalog *cat, const plan_validate_row *r,
                                double bytes);
/* 1: the row's derived_fields names column col among the values it derived
 * (from a default config, a formula ...) instead of reading them printed
 * for this run (the file's documented meaning of derived_fields). */
int plan__row_derives(const plan_validate_row *r, const char *col);
/* 1: the text says the model ran under torch.compile (not that it did not). */
int plan__says_compiled(const char *s);
/* The run's own fused kernels named for a layer's pointwise ops ("fused
 * RMSNorm", "fused SwiGLU", "fused rotary", "Liger kernels"): 1, else 0. */
int plan__says_fused_kernels(const char *s);
/* Activation offloading named: 1 on, 0 said off, -1 not named. */
int plan__says_act_offload(const char *s);
int plan__says_tp_overlap(const char *s);

/* The FlashAttention generation a text names (FlashAttention-2, "flash-attn
 * 3", FA3, cuDNN fused attention ...), PLAN_ATTN_UNFUSED when it names none. */
plan_attn plan__parse_flash_generation(const char *s);

/* The network a run names: its technology and its per-node bandwidth. */
typedef enum net_tech {
    NET_UNSTATED = 0,
    NET_EFA,                     /* AWS Elastic Fabric Adapter (SRD) */
    NET_RDMA,                    /* InfiniBand, RoCE, Omni-Path: verbs RDMA */
} net_tech;

typedef struct net_text {
    net_tech tech;
    double node_bps;             /* 0: not stated */
    double gpu_bps;              /* a rate the text gives per GPU ("400 Gb/s per GPU"),
                                  * the node's being that times its GPUs; 0: none */
    int nvswitch;                /* the text names an NVSwitch inside the node */
} net_text;

/* Read an interconnect text ("8x200Gb/s HDR IB per node", "1600 Gbps RoCE
 * node-node", "4x Omni-Path per node", "EFA 4x100 Gb/s", "400 Gb/s RDMA per
 * GPU": a rate said to be per GPU or per accelerator is one GPU's, never the
 * node's). */
void plan__net_parse(const char *text, net_text *out);

/* FLOP conventions a published TFLOP/s may be stated in. */
typedef enum flop_conv {
    CONV_UNKNOWN = 0,
    CONV_EQ3,                    /* Narayanan et al. 2021, Eq. 3 (with recompute) */
    CONV_MEGATRON,               /* Megatron-LM num_floating_point_operations (model FLOPs) */
    CONV_MOSAIC,                 /* llm-foundry: 6N + 12 l h s per token (model FLOPs) */
    CONV_PARAMS8,                /* 8 N s B per iteration (BigScience estimate) */
    CONV_HARDWARE,               /* the FLOPs executed: model FLOPs and the recomputed forward */
    CONV_PARAMS6,                /* 6 N per token, the weights alone (Kaplan et al. 2020) */
} flop_conv;

flop_conv plan__conv_parse(const char *text);

/* The month a row's source was published, year * 12 + month - 1, 0 when it
 * gives none: its source_date, else the earliest date named in its title,
 * locator, reference or key ("Sep 2020", "2022-05", "2021", an arXiv number
 * 2104.04473 is April 2021). */
int plan__source_ym(const plan_validate_row *r);


/* Microbatches in flight are not capped outside SMP (active_microbatches is
 * an SMP knob): a cap no schedule reaches. */
#define PLAN__NO_ACTIVE_CAP (1 << 24)
/* A published global batch the published layout cannot run exactly (a
 * rounded figure: "2M tokens" of 2048-token sequences on 124 data-parallel
 * ranks, 1538 on 12 x 4) is read as the nearest batch of whole
 * microbatches, when that is within this fraction of it (and said). */
#define PLAN__BATCH_ROUND_TOL 0.05

/* A row's layout as mapped (plan_validate.c) and what it leaves open. */
typedef struct row_layout {
    plan_layout l;
    int search_mbs;              /* micro-batch not given: search it */
    int search_degrees;          /* neither TP, PP, DP nor a model-parallel size given */
    int recompute_defaulted;     /* recompute not stated: the stack's default */
} row_layout;

/* A recompute in words: "selective recompute", "full recompute of the
 * first 2 layers of each model chunk (the block method)". */
void plan__recompute_words(plan_recompute k, int layers, char *out, size_t n);

/* An order of recomputes by what they keep (more recompute, higher): none,
 * selective, full of 1, 2, ... layers of each chunk by the block method,
 * full of every layer. Comparable within one layout's chunks. */
double plan__recompute_rank(plan_recompute k, int layers);

/* DeepSpeed-Ulysses where a column of the row names it: its degree, 0
 * without one, -1 not named (plan_validate_stack.c). */
int plan__ulysses_named(const plan_validate_row *r);

/* The stack a row ran, at a release: its plan_frameworks index, how it was
 * read said in out's notes (plan_validate_stack.c). */
int plan__row_framework(const plan_validate_row *row, plan_validate_result *out);

/* The published run went out of memory: its memory or metrics say so. */
int plan__row_went_oom(const plan_validate_row *row);

/* The row's layout rl evaluated into out (out->est; plan_validate_eval.c):
 * its micro-batch or its pipeline's schedule searched where the row leaves
 * them open, its unstated recompute inferred where the stack's default
 * cannot have fit (rl then the layout read). *skipped 1 when the row is
 * not compared (out says why). */
int plan__validate_evaluate(const plan_catalog *cat, const plan_model *m, const plan_cluster *c,
                            const plan_framework *fw, const plan_validate_row *row,
                            row_layout *rl, plan_validate_result *out, int *skipped,
                            st_err *err);

#endif
