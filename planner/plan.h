/*
 * plan.h: the planner's public interface.
 *
 * The planner is pure computation: given a model shape, a cluster (instance
 * type x count, from the catalog) and a layout (TP, PP, DP, micro-batch,
 * schedule, recompute, sharding, placement ...), it estimates per-GPU memory
 * by term and step time by term; its search enumerates layouts, prunes by
 * memory before timing, and ranks what fits. It reads no files and touches no
 * database, GPU or MPI: the data files are read by data/ into the structs
 * below and handed in.
 *
 * Units are in the names: _bytes, _s, _flops, _bps (bytes per second).
 * Counts of parameters, tokens and sequences are int64_t; derived rates are
 * double.
 */
#ifndef SMD_PLAN_H
#define SMD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"

/* ------------------------------------------------------------------------ */
/* Model shape                                                               */
/* ------------------------------------------------------------------------ */

typedef enum plan_arch {
    /* GPT-2/3 and Megatron: learned positions, LayerNorm with bias, GELU MLP
     * (usually ffn = 4h), multi-head attention, biases everywhere, embedding
     * tied to the LM head. */
    PLAN_ARCH_GPT = 0,
    /* Llama 2/3: rotary positions (no parameters), RMSNorm (weight only),
     * SwiGLU MLP with its own ffn size, grouped-query attention, no biases,
     * untied LM head. */
    PLAN_ARCH_LLAMA = 1,
} plan_arch;

/* The MLP's matrices: two (GELU, squared ReLU) or three (gated: SwiGLU,
 * GeGLU; the gate and up projections both h x ffn). */
typedef enum plan_mlp {
    PLAN_MLP_ARCH = 0,           /* the architecture's own: plain for gpt, gated for llama */
    PLAN_MLP_PLAIN,
    PLAN_MLP_GATED,
} plan_mlp;

/* Dropout: GPT-2/3 and Megatron's GPT train with hidden and attention
 * dropout 0.1 (Megatron-LM arguments.py defaults); Llama, Mistral and MPT
 * with none (their released configs: attention/residual dropout 0). */
enum {
    PLAN_DROPOUT_ARCH = 0,       /* the architecture's own: on for gpt, off for llama */
    PLAN_DROPOUT_ON,
    PLAN_DROPOUT_OFF,
};

#define PLAN_NAME_MAX 64
#define PLAN_SOURCE_MAX 200

typedef struct plan_model {
    char name[PLAN_NAME_MAX];     /* "gpt3-175b", "derived-30B", "config.json" */
    char source[PLAN_SOURCE_MAX]; /* where the shape comes from */
    plan_arch arch;
    int64_t layers;
    int64_t hidden;
    int64_t heads;
    int64_t kv_heads;  /* = heads for multi-head attention */
    /* Size of one attention head; 0: hidden / heads. The queries and the
     * attention output (the output projection's input) are heads x head_dim
     * wide, which need not be hidden (Gemma 2: 16 heads of 256 on hidden
     * 3584). plan_model_finish stores a value equal to hidden / heads as 0,
     * so a shape changed afterwards (--hidden, --heads) keeps deriving it. */
    int64_t head_dim;
    /* Sliding-window (local) attention: a query sees the sliding_window
     * keys ending at itself (its own included), as transformers' Mistral
     * and Gemma 2 masks do; 0: every layer attends to the whole sequence. */
    int64_t sliding_window;
    /* With sliding_window: every Nth layer (0-based i with (i + 1) % N == 0)
     * attends globally and the others locally, transformers' Gemma 3
     * sliding_window_pattern and Megatron-Core's --window-attn-skip-freq N
     * (Gemma 2 alternates: 2); 0: every layer is local (Mistral 7B). */
    int sliding_window_pattern;
    int64_t ffn;       /* MLP inner size */
    int64_t seq;       /* training sequence length, tokens */
    int64_t vocab;
    int tied_embedding;/* 1: LM head shares the token embedding */
    plan_mlp mlp;      /* PLAN_MLP_ARCH is resolved by plan_model_finish */
    int dropout;       /* PLAN_DROPOUT_*: trained with dropout (masks are stored) */

    /* Filled by plan_model_finish(): exact parameter counts. */
    int64_t params;            /* total */
    int64_t params_layer;      /* one transformer layer */
    int64_t params_embedding;  /* token (+ learned position) embedding */
    int64_t params_head;       /* untied LM head (0 when tied) */
    int64_t params_final_norm; /* final LayerNorm / RMSNorm */
} plan_model;

/* Largest accepted sizes: far past any published model, small enough that
 * every product the planner forms stays exact in int64_t / finite in double. */
#define PLAN_MAX_LAYERS 100000
#define PLAN_MAX_HIDDEN 1048576
#define PLAN_MAX_HEADS 65536
#define PLAN_MAX_SEQ 16777216
#define PLAN_MAX_VOCAB 16777216
/* The attention width heads x head_dim: at most four times the largest
 * hidden size, so that a layer's parameters times PLAN_MAX_LAYERS stay
 * exact in int64_t. */
#define PLAN_MAX_ATTN_WIDTH (4 * (int64_t)PLAN_MAX_HIDDEN)

/* Validate a shape (positive sizes, heads divide hidden unless head_dim is
 * given, kv_heads divide heads, a window and its pattern not negative,
 * limits above) and fill its parameter counts. ST_EINVAL / ST_ERANGE with a
 * one-line message naming the bad value. */
int plan_model_finish(plan_model *m, st_err *err);

/* 1 when the MLP is gated (three matrices), 0 when plain (two). */
int plan_model_gated(const plan_model *m);

/* 1 when the model trains with dropout. */
int plan_model_dropout(const plan_model *m);

/* Size of one attention head: m->head_dim, or hidden / heads when 0. */
int64_t plan_model_head_dim(const plan_model *m);

/* m with what it leaves to its architecture said: the head size in force
 * (plan_model_head_dim) and the MLP (plain or gated). What the model
 * writers write (plan_model_fields), so that every file gives the values
 * the planner and the executor use. */
plan_model plan_model_resolved(const plan_model *m);

/* Width of the queries and of the attention output: heads x head_dim (=
 * hidden unless the head size is given apart from it). */
int64_t plan_model_attn_width(const plan_model *m);

/* Layers that attend through a window shorter than the sequence (local
 * layers); 0 without a sliding window or when it covers the sequence. */
int64_t plan_model_local_layers(const plan_model *m);

/* Keys a local layer's query sees: min(sliding_window, seq); seq without a
 * window. */
int64_t plan_model_window(const plan_model *m);

/* Parameters in one layer's matrix multiplies (weights only, no biases or
 * norms): the GEMM work of a token is 2 FLOPs per such parameter. */
int64_t plan_model_layer_matmul_params(const plan_model *m);

/* Forward FLOPs for one token through the attention core (the score and
 * value products), averaged over the layers: 4 * heads * head_dim * keys,
 * keys the sequence on a global layer (full s x s, as Narayanan et al. 2021,
 * Eq. 3 counts it: 4sh) and min(seq, window) on a local one (MaxText's
 * MaxText/maxtext_utils.py, calculate_gemma2_tflops_training_per_device:
 * the non-causal count of a local layer, 4 b s min(W, s) heads head_dim). */
double plan_model_attn_fwd_flops_per_token(const plan_model *m);

/* Forward FLOPs for one token through one transformer layer (the mean over
 * the layers): 2 per matmul weight plus the attention core above. */
double plan_model_layer_fwd_flops_per_token(const plan_model *m);

/* Forward FLOPs for one token through the LM head: 2 * hidden * vocab. */
double plan_model_head_fwd_flops_per_token(const plan_model *m);

/* Model FLOPs per token for a training step (forward + backward = 3x forward,
 * no recompute): the numerator of MFU (Chowdhery et al. 2022, App. B). */
double plan_model_train_flops_per_token(const plan_model *m);

/* ------------------------------------------------------------------------ */
/* Model presets (published shapes), read from data/models.json by data/     */
/* ------------------------------------------------------------------------ */

/* The layout a preset's publisher trained it with, where one is published
 * (SageMaker model parallel's reference configurations): the cluster, the
 * knobs, and the batch the training script read. Layout enums are declared
 * below; they are stored here as their int values. */
typedef struct plan_preset_ref {
    int present;                 /* 0: the preset publishes no layout */
    char instances[64];          /* the cluster as --instances takes it: "16xp4d.24xlarge" */
    int tp, pp;
    int microbatches;            /* SMP microbatches (its default 1) */
    int active_microbatches;     /* SMP active_microbatches (its default partitions + 2) */
    int sharding;                /* plan_sharding */
    int recompute;               /* plan_recompute */
    int recompute_group;         /* layers per checkpoint (SMP's "each transformer layer": 1) */
    int prescaled_batch;         /* SMP prescaled_batch */
    int64_t batch_size;          /* the training script's batch: per model-parallel group
                                  * with prescaled_batch, else per rank */
    char source[PLAN_SOURCE_MAX];
} plan_preset_ref;

/* Other documented names of a preset's model (a run naming one of them
 * names the preset's shape: plan_known_model), at most this many. */
#define PLAN_PRESET_ALIASES 3

typedef struct plan_preset {
    char key[PLAN_NAME_MAX];    /* "gpt3-175b" */
    char aliases[PLAN_PRESET_ALIASES][PLAN_NAME_MAX]; /* "mt-nlg-530b"; "" unused */
    int naliases;
    char family[32];            /* "gpt3", "megatron", "smp", "llama" */
    char label[32];             /* nominal size as published: "175B", "1.3B" */
    double nominal_params;      /* 175e9 */
    plan_model model;           /* finished shape */
    plan_preset_ref ref;        /* the publisher's layout, if any */
} plan_preset;

typedef struct plan_presets {
    plan_preset *v;
    int n;
} plan_presets;

void plan_presets_free(plan_presets *p);

/* Resolve a nominal size to a shape. arch selects the architecture family
 * (GPT families for PLAN_ARCH_GPT, Llama for PLAN_ARCH_LLAMA); family, if
 * non-NULL and non-empty, restricts to one family. A preset whose nominal size
 * matches params within 0.5 % is returned as is; otherwise a derived shape is
 * made between the neighbouring presets (see plan_resolve.c for the rule). */
int plan_model_resolve(const plan_presets *presets, double params, plan_arch arch,
                       const char *family, plan_model *out, st_err *err);

/* The head size a derived shape of this hidden size has (plan_resolve.c,
 * rule 2: 64 below 1024, else 128); 0 when it does not divide the hidden
 * size. */
int64_t plan_derived_head_dim(int64_t hidden);

/* ------------------------------------------------------------------------ */
/* Hardware: GPUs, instance types, catalog                                   */
/* ------------------------------------------------------------------------ */

#define PLAN_CURVE_MAX 40

/* Efficiency against message size: y (fraction of peak, 0..1] at
 * x = log2(message bytes), piecewise linear, flat outside the points. */
typedef struct plan_curve {
    char name[32];
    int n;
    double log2_bytes[PLAN_CURVE_MAX];
    double eff[PLAN_CURVE_MAX];
    char source[PLAN_SOURCE_MAX];
} plan_curve;

/* Evaluate a curve at a message size (bytes > 0). */
double plan_curve_eval(const plan_curve *c, double bytes);

/* Longest path of a GPU's measured-rates file as its catalog entry gives it. */
#define PLAN_MEASURED_PATH_MAX 256

typedef struct plan_gpu {
    char name[32];               /* "A100-40GB" */
    char silicon[32];            /* the chip ("GA100"): GPUs sharing it share efficiencies */
    double mem_bytes;            /* device memory */
    double peak_flops;           /* dense FP16/BF16 tensor-core peak, FLOP/s */
    double hbm_bps;              /* HBM bandwidth, bytes/s */
    /* Achievable-throughput model (calibratable, see plan_compute.c). */
    double gemm_eff_max;         /* fraction of peak a large aligned GEMM reaches */
    double gemm_dim_half;        /* GEMM dim d keeps d/(d + dim_half) of it */
    double misaligned_factor;    /* throughput multiplier for dims not a multiple of 8 */
    double gemm_align_bytes;     /* alignment at which tensor-core GEMMs run at full
                                  * speed (16, or 128 on A100); 0 reads as 16 */
    double align_partial_factor; /* multiplier for dims a multiple of 8 but not of that */
    double hbm_eff;              /* fraction of HBM bandwidth elementwise kernels reach */
    double flash_eff;            /* fraction of peak FlashAttention-2 reaches, forward and
                                  * backward, causal (the reference fused generation) */
    /* The other fused generations where measured on the chip, fractions of
     * peak as flash_eff; 0: not measured (plan__attn_eff derives them from
     * flash_eff by their published ratios) */
    double flash1_eff;           /* FlashAttention (Dao et al. 2022) */
    double flash3_eff;           /* FlashAttention-3 (Shah et al. 2024), Hopper */
    double cudnn_attn_eff;       /* cuDNN fused attention (Transformer Engine) */
    double fp8_peak_flops;       /* dense FP8 tensor-core peak, FLOP/s (0: no FP8) */
    double fp8_gemm_eff;         /* fraction of the FP8 peak a large aligned FP8 GEMM reaches */
    double alloc_frac;           /* the allocator's reserve (plan_eff); 0 reads as none */
    double mem_err_pct;          /* the memory model's mean |error| on this chip's published
                                  * memory figures, its reserve fitted (smdplan calibrate),
                                  * percent; 0: no figure measured on the chip */
    double gemm_ceiling;         /* measured fraction of peak an isolated large GEMM reaches:
                                  * no fitted GEMM efficiency may exceed it (0: not
                                  * measured, the peak bounds it) */
    /* Compute floors of kernels a CPU computes slower than it streams them
     * (tanh and exp per element, Adam's square root), seconds per element,
     * measured through the executor's own kernels by smdplan bench; 0 (a
     * GPU): the kernel is memory-bound and only its bytes count. */
    double act_fwd_s;            /* GELU forward, per element */
    double act_bwd_s;            /* GELU backward, per element */
    double glu_fwd_s;            /* SwiGLU forward, per output element */
    double glu_bwd_s;            /* SwiGLU backward, per output element */
    double opt_param_s;          /* optimizer step (AdamW and the gradient norm), per parameter */
    double attn_fwd_flops;       /* the unfused attention core's rate, softmax included: FLOP/s
                                  * of its forward (4 d per score) and backward (8 d) products;
                                  * 0: the GEMM model and the scores' bytes alone */
    double attn_bwd_flops;
    /* The unfused attention core's row kernels (the causal softmax and its
     * gradient) beyond their bytes, seconds per score row (batch x heads x
     * queries), measured through the executor's kernels by smdplan bench
     * gpu; 0: their bytes alone. */
    double attn_row_fwd_s;
    double attn_row_bwd_s;
    /* ... and beyond that, seconds per score row and head element (the
     * layout copies and the products' short side, the head: measured at
     * heads of 64 and 128, plan_bench_attn_rows); 0: none. */
    double attn_elem_fwd_s;
    double attn_elem_bwd_s;
    /* The fused attention's time beyond its products at the measured rate
     * (flash2_fwd_eff, flash2_bwd_eff), measured through the executor's
     * kernels by smdplan bench gpu (plan_bench_flash_fit): seconds per score
     * of the causal half (the softmax's exponential and its arithmetic, on
     * the special function units: Shah et al. 2024, Section 3, "H100 SXM5
     * has 989 TFLOPS of FP16 matmul but only 3.9 TFLOPS of special
     * functions") and per score row (a row's loads, stores and
     * log-sum-exp, and its share of the diagonal tiles' masked half); 0:
     * the products alone. */
    double flash_score_fwd_s;
    double flash_score_bwd_s;
    double flash_row_fwd_s;
    double flash_row_bwd_s;
    int fp16_only;               /* 1: its tensor cores multiply fp16 but not bf16 (Volta,
                                  * Turing): a plan on it trains in fp16 */
    int flash3;                  /* 1: FlashAttention-3's kernels run on it: Hopper (sm90)
                                  * only, they need its wgmma and TMA (Shah et al. 2024,
                                  * Section 3; flash-attention's hopper/ README: "H100 /
                                  * H800 GPU"); elsewhere a stack that names it runs
                                  * FlashAttention-2 */
    int package_devices;         /* devices one package holds, each its own GPU to the
                                  * software (AMD MI250X: two GCDs); 0 reads as 1. A row
                                  * stating the package's memory means this GPU */
    /* Streaming multiprocessors (the chip's whitepaper); 0: not known. A
     * collective's CUDA blocks hold some of them while it runs beside the
     * compute (plan__comm_sm_frac). */
    int sms;
    /* Rates measured on the device itself, from the file "measured" names
     * (its path as resolved from the catalog that names it; plan_gpu_measured
     * applies them): */
    char measured[PLAN_MEASURED_PATH_MAX];
    int gemm_measured;           /* 1: gemm_ceiling and gemm_dim_half are the GEMM model
                                  * fitted to the device's measured GEMMs, not to runs */
    double gemm_measured_rms;    /* that fit's root-mean-square log error over the shapes */
    int gemm_measured_shapes;    /* shapes it used (calls at the harness's floor left out) */
    /* Fused attention measured per direction, fraction of peak (0: not
     * measured): FlashAttention-2 and cuDNN's fused attention */
    double flash2_fwd_eff, flash2_bwd_eff;
    double cudnn_fwd_eff, cudnn_bwd_eff;
    double exec_attn_fwd_eff, exec_attn_bwd_eff; /* this executor's fused kernels */
    /* and its plain attention core's time per score row and per row and head
     * element, as attn_row_*_s and attn_elem_*_s (used for a framework that
     * runs the executor's kernels, where the entry has none of its own) */
    double exec_attn_row_fwd_s, exec_attn_row_bwd_s, exec_attn_elem_fwd_s, exec_attn_elem_bwd_s;
    int flash_measured;          /* 1: flash2_*_eff are the executor's own fused kernels,
                                  * measured through it (smdplan bench gpu): its share of
                                  * them is 1, not a fitted efficiency */
    double copy_bps;             /* a device-to-device copy, bytes read + written per
                                  * second, measured on a device with memory_bps of HBM
                                  * (0: not measured): plan_gpu_copy_eff */
    double copy_hbm_bps;
    /* NVIDIA's reference node of the chip (its DGX, or the cloud node where
     * there is none), for a published run that does not describe its
     * cluster: GPUs per node on NVSwitch and the node's network, one
     * direction (0: none given) */
    int ref_node_gpus;
    double ref_node_net_bps;
    char ref_node_source[PLAN_SOURCE_MAX];
    char source[PLAN_SOURCE_MAX];
} plan_gpu;

/* The efficiencies a stack reaches on a chip, fitted per (framework family,
 * chip) by smdplan calibrate (plan_calibrate.h); a GPU's own fields above
 * are the chip's values when no framework fit exists. */
typedef struct plan_eff {
    double gemm_eff_max;         /* as plan_gpu */
    double hbm_eff;
    double flash_eff;
    double fp8_gemm_eff;
    double gemm_dim_half;        /* the chip's tile occupancy (fitted per chip only) */
    double alloc_frac;           /* memory the caching allocator reserves beyond what
                                  * tensors hold, as a fraction of it (fragmentation);
                                  * fitted to measured memory */
} plan_eff;

typedef enum plan_eff_param {
    PLAN_EFF_GEMM = 0,
    PLAN_EFF_HBM,
    PLAN_EFF_FLASH,
    PLAN_EFF_FP8_GEMM,
    PLAN_EFF_DIM_HALF,
    PLAN_EFF_ALLOC,
    PLAN_EFF__COUNT
} plan_eff_param;

/* The parameters a framework's time fit may set: the dimension scale of a
 * GEMM's efficiency is the chip's (its tiles and SMs), fitted only over
 * every framework's runs on it; the allocator's reserve is fitted to
 * memory, not time. */
#define PLAN_EFF_FRAMEWORK_MASK ((1u << PLAN_EFF_DIM_HALF) - 1)
#define PLAN_EFF_MEMORY_MASK (1u << PLAN_EFF_ALLOC)

/* "gemm_eff_max", "hbm_eff", "flash_eff", "fp8_gemm_eff", "gemm_dim_half",
 * "alloc_frac". */
const char *plan_eff_param_name(plan_eff_param p);
/* The member of e for p. */
double *plan_eff_ref(plan_eff *e, plan_eff_param p);

/* One fitted (framework family, chip) entry of the catalog. */
typedef struct plan_fw_eff {
    char name[48];               /* "megatron@GA100" */
    char framework[16];          /* plan_fw_family_key: "megatron" */
    char silicon[32];            /* plan_gpu.silicon: "GA100" */
    plan_eff eff;
    unsigned fitted;             /* bit 1 << plan_eff_param: fitted (others: the chip's) */
    double std_err[PLAN_EFF__COUNT]; /* standard error of each fitted value */
    int rows;                    /* runs fitted */
    int sources;                 /* published sources they came from */
    double mean_abs_err_pct;     /* of those runs after the fit */
    char source[PLAN_SOURCE_MAX];
} plan_fw_eff;

typedef struct plan_instance {
    char name[48];               /* "p4d.24xlarge" */
    char aliases[6][32];         /* "p4d", "ml.p4d.24xlarge" */
    int naliases;
    char gpu[32];                /* name of a plan_gpu in the catalog */
    int gpu_index;               /* resolved index into catalog gpus */
    int gpus_per_node;
    double nvlink_bps;           /* GPU-to-GPU bandwidth per GPU, one direction */
    int nvswitch;                /* 1: any-to-any switch; 0: mesh or PCIe */
    char gpu_link[32];           /* the links' name where not NVIDIA's ("Infinity Fabric");
                                  * "": NVSwitch or NVLink/PCIe as nvswitch says */
    double intra_busbw_bps;      /* all-reduce bus bandwidth inside one node (nccl-tests) */
    double intra_latency_s;      /* small-message (<= 1 KiB) all-reduce time on one node,
                                  * nccl-tests: sets the NVLink hop latency (plan_hw.c) */
    double net_bps;              /* network bandwidth per node, one direction: every NIC
                                  * of the node together */
    double net_gpu_bps;          /* the NIC bandwidth one GPU reaches, one direction (rail-
                                  * optimised nodes give each GPU its own NIC); 0: an equal
                                  * share of net_bps. A GPU's share of the network is at most
                                  * this, whatever the node has */
    double net_latency_s;        /* the same across net_latency_nodes nodes: sets the
                                  * network hop latency */
    int net_latency_nodes;       /* nodes of that measurement (2 unless said) */
    double net_ring_eff;         /* fraction of net_bps a ring's large messages reach
                                  * across nodes (nccl-tests busbw) */
    double net_tree_eff;         /* the same for NCCL's tree all-reduce */
    double price_per_hour;       /* USD on demand; 0 = unknown */
    double host_mem_bytes;       /* host (CPU) memory of one node; 0 = unknown */
    int efa;                     /* 1: the instance type has Elastic Fabric Adapter */
    int nics;                    /* network cards (EFA devices) per node; 0 = unknown */
    char nics_source[PLAN_SOURCE_MAX];
    char price_source[PLAN_SOURCE_MAX]; /* where price_per_hour was read (or why none) */
    int nccl_channels;           /* CUDA blocks (one SM each) an NCCL collective runs on
                                  * each GPU of this node (its log's channel count); 0:
                                  * not known. With the GPU's sms: the share of the GPU
                                  * a collective takes from compute it overlaps */
    char intra_curve[32];        /* efficiency curve names (catalog curves) */
    char net_curve[32];
    int intra_curve_index;       /* resolved */
    int net_curve_index;
    char source[PLAN_SOURCE_MAX];
} plan_instance;

typedef struct plan_catalog {
    plan_gpu *gpus;
    int ngpus;
    plan_instance *instances;
    int ninstances;
    plan_curve *curves;
    int ncurves;
    plan_fw_eff *effs;           /* fitted (framework, chip) efficiencies */
    int neffs;
} plan_catalog;

void plan_catalog_free(plan_catalog *cat);

/* Resolve names (gpu, curves) to indices and check every value is sane.
 * Called by the loader after reading and after merging user overrides. */
int plan_catalog_link(plan_catalog *cat, st_err *err);

/* Find an instance type by name or alias, case-insensitive, with or without
 * the "ml." prefix, the separators between its parts aside ("DGX A100" is
 * dgx-a100). NULL if none. */
const plan_instance *plan_catalog_find(const plan_catalog *cat, const char *name);

/* Up to max names closest to name (edit distance), for "did you mean". */
int plan_catalog_suggest(const plan_catalog *cat, const char *name, const char **out, int max);

typedef struct plan_cluster {
    const plan_instance *inst;   /* borrowed from the catalog */
    const plan_gpu *gpu;         /* borrowed from the catalog */
    const plan_curve *intra_curve;
    const plan_curve *net_curve;
    int nodes;
    int gpus;                    /* nodes * gpus_per_node */
    plan_eff eff;                /* the efficiencies in force: the framework's fit on
                                  * this chip, else the GPU's own (plan_cluster_use) */
    const plan_fw_eff *eff_fit;  /* the fit in force, NULL: the GPU's own values */
    int exec_kernels;            /* the framework runs this executor's own kernels
                                  * (plan_cluster_use_framework): its measured rates */
} plan_cluster;

/* Parse "16xp4d", "16xml.p4d.24xlarge", "p4d:16", "p4d" (one node) into a
 * cluster. Unknown names give ST_ENOENT with the closest names suggested. */
int plan_cluster_parse(const plan_catalog *cat, const char *text, plan_cluster *out, st_err *err);

/* Make a cluster of n nodes of an instance type. Its efficiencies are the
 * GPU's own until plan_cluster_use sets a framework's. */
int plan_cluster_make(const plan_catalog *cat, const plan_instance *inst, int nodes,
                      plan_cluster *out, st_err *err);

/* The plain (unfused) attention core on GPU g at its own efficiencies, no
 * dropout: nb products (batch x heads) of sq queries against sk keys of
 * head size d, forward and backward seconds, as the planner counts them
 * (smdplan bench gpu sets a device's row times against this). */
int plan_attn_plain_time(const plan_gpu *g, double nb, double sq, double sk, double d,
                         double *fwd_s, double *bwd_s, st_err *err);

/* Use the catalog's efficiencies fitted for a framework family (its
 * plan_fw_family_key) on c's chip; without a fit, the GPU's own. Returns
 * the fit used, or NULL. */
const plan_fw_eff *plan_cluster_use(const plan_catalog *cat, const char *family_key,
                                    plan_cluster *c);

/* The catalog entry of (family, silicon), NULL if none. */
const plan_fw_eff *plan_catalog_eff(const plan_catalog *cat, const char *family_key,
                                    const char *silicon);

/* ------------------------------------------------------------------------ */
/* Layout                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum plan_schedule {
    PLAN_SCHED_SIMPLE = 0,      /* SMP "simple": GPipe, all forwards then all backwards */
    PLAN_SCHED_INTERLEAVED,     /* SMP "interleaved": backward first when possible (1F1B) */
    PLAN_SCHED_VIRTUAL,         /* Megatron interleaved 1F1B with virtual stages */
    PLAN_SCHED_ZB_H1,           /* zero-bubble ZB-H1 (Qi et al. 2023) */
    PLAN_SCHED__COUNT
} plan_schedule;

typedef enum plan_recompute {
    PLAN_RECOMP_NONE = 0,
    PLAN_RECOMP_SELECTIVE,      /* recompute attention core only (Korthikanti 2022 Sec. 5) */
    PLAN_RECOMP_FULL,           /* checkpoint every k layers' input, recompute forward */
    PLAN_RECOMP__COUNT
} plan_recompute;

typedef enum plan_sharding {
    PLAN_SHARD_NONE = 0,
    PLAN_SHARD_OPTIMIZER,       /* ZeRO-1, SMP shard_optimizer_state */
    PLAN_SHARD_GRADIENTS,       /* ZeRO-2 */
    PLAN_SHARD_PARAMS,          /* ZeRO-3, SMP sharded_data_parallel_degree */
    PLAN_SHARD__COUNT
} plan_sharding;

#define PLAN_PP_MAX 256

/* Number format of the linear layers' matrix products. */
typedef enum plan_precision {
    PLAN_PREC_BF16 = 0,         /* bf16 mixed precision (fp32 master weights) */
    PLAN_PREC_FP8,              /* FP8 linears, the rest bf16 (Transformer Engine) */
    PLAN_PREC_FP32,             /* fp32 throughout (CPU device) */
    /* fp16 mixed precision with loss scaling: the same bytes and tensor-core
     * peak as bf16 (NVIDIA V100 and A100 datasheets give one FP16/BF16
     * figure), so it costs what bf16 does; it is its own value because the
     * chip and the stack decide which of the two a run can use (V100 and T4
     * have no bf16) and the launch file names it */
    PLAN_PREC_FP16,
    PLAN_PREC__COUNT
} plan_precision;

const char *plan_precision_name(plan_precision p); /* "bf16", "fp8", "fp32", "fp16" */
/* 1 for the half-precision mixed formats (bf16, fp16): 2-byte parameters,
 * gradients and activations beside fp32 master weights. */
int plan_precision_half(plan_precision p);
int plan_precision_parse(const char *s, plan_precision *out, st_err *err);

/* The attention core's kernel generation. Unfused: the s x s scores are
 * materialised (QK^T, a fused scale-mask-softmax, dropout, PV: Megatron-LM's
 * path before FlashAttention). The fused ones keep no scores and recompute
 * them in the backward: FlashAttention (Dao et al. 2022), FlashAttention-2
 * (Dao 2023), FlashAttention-3 (Shah et al. 2024, Hopper only), and cuDNN's
 * fused attention (Transformer Engine's FusedAttention backend). Each runs at
 * its own fraction of the chip's peak (plan_gpu.attn_eff). */
typedef enum plan_attn {
    PLAN_ATTN_UNFUSED = 0,
    PLAN_ATTN_FLASH1,
    PLAN_ATTN_FLASH2,
    PLAN_ATTN_FLASH3,
    PLAN_ATTN_CUDNN,
    PLAN_ATTN__COUNT
} plan_attn;

const char *plan_attn_name(plan_attn a); /* "unfused", "flash1", "flash2", "flash3", "cudnn" */
int plan_attn_parse(const char *s, plan_attn *out, st_err *err);

typedef struct plan_layout {
    int tp;                      /* tensor-parallel degree */
    int pp;                      /* pipeline degree (SMP "partitions") */
    int dp;                      /* data-parallel degree */
    int cp;                      /* context-parallel degree (sequence split; 1 = off) */
    int micro_batch;             /* sequences per microbatch per model replica */
    int microbatches;            /* microbatches per step per pipeline */
    int active_microbatches;     /* SMP: max microbatches in flight per stage */
    plan_schedule schedule;
    int virtual_stages;          /* model chunks per pipeline rank (1 unless VIRTUAL) */
    plan_recompute recompute;
    int recompute_group;         /* layers per checkpoint with FULL (SMP strategy "group_k") */
    int recompute_layers;        /* FULL by Megatron's block method: the layers recomputed
                                  * in each model chunk (its first ones); the others keep
                                  * their activations. 0: every layer */
    int recompute_saved;         /* FULL with a policy that saves some products' outputs
                                  * (MaxText remat_policy): PLAN_SAVE_* bits; 0: none */
    int sequence_parallel;       /* Megatron sequence parallelism with TP */
    int offload_activations;     /* checkpoints offloaded to host memory */
    int compiled;                /* the model under torch.compile: TorchInductor fuses each
                                  * chain of pointwise ops into one kernel (a stack whose
                                  * model writes them as separate ATen ops: the
                                  * framework's unfused_pointwise) */
    int fused_pointwise;         /* the run's own fused kernels for the norms, the MLP's
                                  * activation and the rotary embedding (a published run
                                  * says so): the fused counts on such a stack, eager */
    plan_sharding sharding;
    int sharding_degree;         /* ranks the states are sharded over (dp unless set) */
    int prescaled_batch;         /* SMP prescaled_batch: batch counted per TP group */
    char placement[4];           /* order of D, P, T from outermost to innermost rank
                                  * stride, e.g. "DPT" (SMP "cluster"), "TPD" ("spread") */
    int flash_attention;         /* fused attention kernel: no s x s activations */
    plan_attn attention;         /* which kernel: unfused, or the fused generation when
                                  * flash_attention (plan_framework_apply sets both) */
    int dp_overlap;              /* DP sync bucketed and overlapped with backward */
    int fp32_grads;              /* gradients kept and all-reduced in fp32 (4 B, e.g.
                                  * Megatron --accumulate-allreduce-grads-in-fp32) */
    int tp_overlap;              /* 0: TP collectives exposed; 1: the backward input-
                                  * gradient all-reduce runs beside the weight-gradient
                                  * GEMM (Megatron-LM 2022); 2: every TP collective split
                                  * and pipelined behind its GEMM (Transformer Engine
                                  * userbuffers) */
    int pp_overlap;              /* p2p sends overlapped with the next chunk's compute
                                  * (Megatron-Core overlap_p2p_comm) */
    double dp_bucket_bytes;      /* gradient all-reduce message size; 0 = one message
                                  * for the whole buffer (see plan_layout_default) */
    int launch_blocking;         /* CUDA_LAUNCH_BLOCKING=1: each kernel launch waits for
                                  * the previous kernel, so the host's per-op time adds */
    int64_t global_batch;        /* sequences per optimizer step */
    int framework;               /* the stack: index into plan_frameworks (plan_framework.h) */
    plan_precision precision;    /* number format of the linears */
} plan_layout;

/* A layout with every knob at its neutral value (1-way everything, 1F1B,
 * no recompute, no sharding, "DPT"). */
/* The outputs a partial rematerialisation policy keeps (plan_layout
 * recompute_saved), by MaxText's names of them (layers/decoders.py,
 * get_remat_policy: jax.checkpoint_policies.save_only_these_names): the
 * Q, K and V projections (query_proj, key_proj, value_proj, qkv_proj), the
 * attention output (context), the output projection (out_proj), the MLP's
 * input products (mlpwi) and its output product (mlpwo). */
#define PLAN_SAVE_QKV 1
#define PLAN_SAVE_OUT 2
#define PLAN_SAVE_MLPWI 4
#define PLAN_SAVE_MLPWO 8
#define PLAN_SAVE_CONTEXT 16
#define PLAN_SAVE_ALL 31
/* Every other product's output in a layer's forward order (Q, K, V, the
 * output projection, the MLP's gate, up and down products), the first
 * kept: torchtitan's op-level selective checkpointing (parallelize_llama.py
 * _custom_policy: "saves output of all compute ops, except every second
 * mm"). Not one of MaxText's names. */
#define PLAN_SAVE_ALT_MM 32

void plan_layout_default(plan_layout *l);

/* The share of its layers a layout recomputes in the backward: 1 with full
 * recompute of every layer, recompute_layers over a chunk's layers with
 * Megatron's block method (at most 1), 0 without full recompute. */
double plan_layout_recompute_share(const plan_model *m, const plan_layout *l);

const char *plan_schedule_name(plan_schedule s);   /* "simple", "interleaved", ... */
/* The schedule a layout runs: its name, or "none" with one pipeline stage
 * (no pipeline: the knob changes nothing). */
const char *plan_layout_schedule_label(const plan_layout *l);
const char *plan_recompute_name(plan_recompute r); /* "none", "selective", "full" */
const char *plan_sharding_name(plan_sharding s);   /* "none", "optimizer", "gradients", "params" */
int plan_schedule_parse(const char *s, plan_schedule *out, st_err *err);
/* A layout's schedule as its records and files write it: "none" for one
 * stage on the one-stage convention (interleaved, one virtual stage, what
 * a search and the executor's defaults give it), else its name (a
 * one-stage layout given another schedule keeps it: the executor runs
 * the schedule's order even on one stage). */
const char *plan_layout_schedule_key(const plan_layout *l);
/* Its reverse: a name of plan_schedule_parse, or "none" (*one = 1, *out
 * the one-stage convention), which only a layout of one stage may have. */
int plan_layout_schedule_parse(const char *s, plan_schedule *out, int *one, st_err *err);
int plan_recompute_parse(const char *s, plan_recompute *out, st_err *err);
/* A MaxText remat policy that keeps some products' outputs, by its name
 * (PLAN_SAVE_* bits into *saved); "full" keeps none (0). */
int plan_remat_policy_parse(const char *s, int *saved, st_err *err);
/* Its name for saved (NULL where MaxText names none). */
const char *plan_remat_policy_name(int saved);
/* The named policies, i from 0 while it returns a name (a name that
 * contains another comes before it): the name, its PLAN_SAVE_* bits. */
const char *plan_remat_policy_at(int i, int *saved);
int plan_sharding_parse(const char *s, plan_sharding *out, st_err *err);
/* "cluster" -> "DPT", "spread" -> "TPD", or a permutation of D, P, T. */
int plan_placement_parse(const char *s, char out[4], st_err *err);

/* Transformer layers of every pipeline rank of l (out[0 .. l->pp - 1]): the
 * planner's one split (cost-balanced, the LM head weighing on the last
 * stage), which plan_evaluate, the simulator and the executor all use. */
void plan_stage_layers(const plan_model *m, const plan_layout *l, int *out);

/* Does l's stack count the embedding and the loss as layers of its
 * pipeline split (plan_framework.pipeline_embedding_loss) for l, its
 * layers not splitting evenly over pp x virtual stages otherwise? Then 1,
 * and *embedding, *loss say which of them take a layer's place (the
 * first chunk, the last chunk one transformer layer fewer); else 0. Either
 * pointer may be NULL. */
int plan_split_embedding_loss(const plan_model *m, const plan_layout *l, int *embedding,
                              int *loss);

/* Rank stride of a parallel dimension ('D', 'P', 'T') under l's placement
 * (1 for the innermost): rank = sum over dims of coordinate x stride. */
int plan_layout_stride(const plan_layout *l, char dim);

/* ------------------------------------------------------------------------ */
/* Estimate                                                                  */
/* ------------------------------------------------------------------------ */

/* Per-GPU memory of one pipeline stage, bytes. */
typedef struct plan_mem {
    double weights_bytes;        /* fp16/bf16 parameters held */
    double grads_bytes;          /* gradients held */
    double optimizer_bytes;      /* fp32 master + Adam m, v */
    double activations_bytes;    /* stored activations of the microbatches in flight */
    double recompute_bytes;      /* working set while recomputing / back-propagating one layer group */
    double logits_bytes;         /* LM head logits and loss (last stage) */
    double comm_buffers_bytes;   /* DP buckets, p2p buffers, NCCL buffers */
    double context_bytes;        /* CUDA context and library workspaces */
    double allocator_bytes;      /* what the caching allocator reserves beyond the
                                  * tensors (cached free blocks, fragmentation): shows
                                  * in nvidia-smi, released and retried before an
                                  * out-of-memory error */
    double total_bytes;          /* the process's footprint as nvidia-smi shows it */
} plan_mem;

/* What a stage must hold at its peak: everything but the allocator's
 * reserve. PyTorch's caching allocator, when cudaMalloc fails, frees its
 * cached blocks and retries before it raises out of memory (c10/cuda/
 * CUDACachingAllocator.cpp, release_cached_blocks), so a layout fits when
 * this fits, though nvidia-smi then shows up to total_bytes. */
double plan_mem_need_bytes(const plan_mem *m);

/* The error of a prediction against a measurement, percent: 100
 * (predicted - measured) / measured, positive when the prediction is
 * slower (larger); NAN unless both are finite and positive. The one
 * definition every table, record and run report uses. */
double plan_error_pct(double predicted, double measured);

/* Step time split into the terms the user sees, seconds. The terms sum to
 * step_s. */
typedef struct plan_time {
    double compute_s;            /* forward + backward (+ recompute) on the busiest stage */
    double tp_comm_s;            /* exposed TP collectives */
    double cp_comm_s;            /* exposed context-parallel KV exchange */
    double pp_comm_s;            /* exposed point-to-point activations/gradients */
    double dp_exposed_s;         /* DP gradient sync not hidden behind backward */
    double bubble_s;             /* pipeline fill and drain */
    double optimizer_s;          /* optimizer step */
    double step_s;
    double dp_total_s;           /* whole DP sync, hidden or not (for reference) */
} plan_time;

/* plan_time's compute_s by kind of kernel (they sum to it): the linear
 * layers' GEMMs (with FP8 casts), the attention core, elementwise kernels
 * (norms, activations, residuals, the loss), and the host's launch time
 * where it exceeds the GPU's (a floor, or added with blocking launches). */
typedef struct plan_compute_split {
    double gemm_s, attn_s, elem_s, host_s;
} plan_compute_split;

typedef enum plan_reject {
    PLAN_OK = 0,
    PLAN_REJ_OOM,                /* worst stage does not fit in GPU memory */
    PLAN_REJ_TP_ACROSS_NODES,    /* TP group spans nodes (not allowed by default) */
    PLAN_REJ_BATCH,              /* global batch not divisible into dp x microbatch */
    PLAN_REJ_HEADS,              /* heads (or kv heads) not divisible by TP */
    PLAN_REJ_LAYERS,             /* more stages (x virtual) than layers */
    PLAN_REJ_VIRTUAL,            /* virtual stages need microbatches % pp == 0 */
    PLAN_REJ_GPUS,               /* tp x pp x dp x cp != GPUs */
    PLAN_REJ_PLACEMENT,          /* groups do not tile the nodes */
    PLAN_REJ_SEQ,                /* sequence not divisible by cp (or tp with SP) */
    PLAN_REJ__COUNT
} plan_reject;

const char *plan_reject_name(plan_reject r);

typedef struct plan_estimate {
    plan_reject reject;          /* PLAN_OK if feasible */
    char reason[160];            /* one line when rejected for structure; empty for
                                  * memory (see plan_estimate_reason) */

    /* Memory: the worst stage decides feasibility. */
    plan_mem mem;                /* worst stage */
    plan_compute_split compute;  /* time.compute_s by kind of kernel */
    int worst_stage;
    double capacity_bytes;       /* GPU memory */
    double oom_excess_bytes;     /* > 0: by how much the worst stage misses */
    int nstages;
    int stage_layers[PLAN_PP_MAX];      /* transformer layers per pipeline rank */
    double stage_mem_bytes[PLAN_PP_MAX];/* total per pipeline rank */
    int stage_inflight[PLAN_PP_MAX];    /* microbatches whose activations it holds */

    plan_time time;
    double stage_fwd_s;          /* one microbatch forward on the slowest stage */
    double stage_bwd_s;          /* one microbatch backward (+ recompute) there */

    double tokens_per_step;
    double tokens_per_s;
    double model_flops_per_step; /* 3x forward, no recompute */
    double hw_flops_per_step;    /* with recompute */
    double mfu;                  /* model FLOPs / (time x GPUs x peak) */
    double hfu;                  /* hardware FLOPs, same denominator */
    double cost_per_hour;        /* USD for the cluster; 0 if price unknown */
    double cost_per_mtokens;     /* USD per 1e6 tokens */
} plan_estimate;

/* Why est was rejected, one line, into buf (n bytes): its reason, or for
 * memory the stage, its need, the capacity and the excess. Returns buf. */
const char *plan_estimate_reason(const plan_estimate *est, char *buf, size_t n);

/* One explained term: what, its value, the formula, the source. */
typedef struct plan_term {
    const char *group;           /* "memory", "time", "flops" */
    const char *name;
    double value;
    const char *unit;            /* "bytes", "s", "flops" */
    const char *formula;
    const char *source;
} plan_term;

#define PLAN_TERMS_MAX 96
typedef struct plan_terms {
    int n;
    plan_term v[PLAN_TERMS_MAX];
} plan_terms;

/* Evaluate one layout. Always fills est (a rejected layout is a result, with
 * est->reject and est->reason set, not an error). terms, if non-NULL, gets
 * every memory and time term with its formula and source (for --explain).
 * Returns ST_EINVAL only for a layout that is malformed (zero degrees ...). */
int plan_evaluate(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                  plan_estimate *est, plan_terms *terms, st_err *err);

/* Per-GPU memory by term of one pipeline stage (0 .. l->pp - 1) of a layout:
 * the terms plan_evaluate computes for that stage, by the same code, so
 * out->total_bytes equals its stage_mem_bytes[stage] exactly and the worst
 * stage's terms equal its est.mem. plan_estimate keeps only the worst
 * stage's terms (it is copied throughout the search); this gives any other.
 * A layout that does not fit still has its memory (OOM is not an error).
 * ST_EINVAL for a malformed layout, a stage out of range, or a layout that
 * plan_evaluate rejects for anything but memory (the reason in err);
 * ST_ENOMEM. */
int plan_stage_mem(const plan_model *m, const plan_cluster *c, const plan_layout *l, int stage,
                   plan_mem *out, st_err *err);

/* Every stage at once: out[i] for i in 0 .. l->pp - 1 (out has room for n
 * entries; ST_EINVAL when n < l->pp), with one setup for all of them.
 * Otherwise as plan_stage_mem. */
int plan_stages_mem(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                    plan_mem *out, int n, st_err *err);

/* ------------------------------------------------------------------------ */
/* What the simulator plays out                                              */
/* ------------------------------------------------------------------------ */

/* One pipeline rank's costs for one microbatch through one of its model
 * chunks (a rank with v virtual stages runs v chunks), from the same compute
 * and communication models as plan_evaluate. */
typedef struct plan_stage_cost {
    int layers;                  /* transformer layers on the rank (all chunks) */
    double fwd_s;                /* forward: compute + exposed TP/CP communication and
                                  * sharded-data-parallel gathers (ZeRO-3, FSDP) */
    double bwd_s;                /* full backward, recompute included, with the same */
    double bwd_weight_s;         /* the weight-gradient part of bwd_s (zero bubble's W) */
    double fwd_comm_s;           /* the TP/CP and sharding collectives inside fwd_s */
    double bwd_comm_s;           /* the TP/CP and sharding collectives inside bwd_s */
    double act_bytes;            /* activations stored per microbatch and chunk */
    double grad_bytes;           /* the rank's gradients, all chunks (DP sync) */
    double static_bytes;         /* memory that does not scale with microbatches in flight */
    int node;                    /* node of the rank in the first pipeline replica */
    int dp_buckets;              /* gradient all-reduce messages */
    double dp_bucket_s;          /* time of one full bucket's all-reduce */
    double dp_last_bucket_s;     /* time of the last (partial) bucket */
} plan_stage_cost;

typedef struct plan_costs {
    int pp, virtual_stages, microbatches, active_microbatches;
    plan_schedule schedule;
    plan_stage_cost stage[PLAN_PP_MAX];
    double p2p_bytes;            /* one activation or gradient message */
    double p2p_intra_bps;        /* GPU-to-GPU inside a node, at that message size */
    double p2p_net_bps;          /* one GPU's share of its node's network, same */
    double intra_latency_s, net_latency_s;   /* one send's latency, inside / across nodes */
    int dp_overlap;              /* gradient buckets start during the last backward */
    double comm_sm_frac;         /* the share of the GPU a collective takes from the
                                  * compute it overlaps (plan__comm_sm_frac) */
    double optimizer_s;
    double capacity_bytes;       /* GPU memory */
    double planner_step_s;       /* plan_evaluate's step time, for comparison */
    double planner_bubble_s;
} plan_costs;

/* Costs of every pipeline rank of a layout. ST_EINVAL (with the reason) for
 * a layout plan_evaluate rejects for anything but memory. */
int plan_costs_compute(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       plan_costs *out, st_err *err);

/* ------------------------------------------------------------------------ */
/* Search                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum plan_objective {
    PLAN_OBJ_TIME = 0,           /* shortest step time */
    PLAN_OBJ_COST,               /* lowest $ per token */
    PLAN_OBJ_THROUGHPUT,         /* most tokens/s (= time for a fixed cluster) */
    PLAN_OBJ_MEMORY,             /* lowest worst-stage memory */
    PLAN_OBJ__COUNT
} plan_objective;

const char *plan_objective_name(plan_objective o);
int plan_objective_parse(const char *s, plan_objective *out, st_err *err);

/* Knobs: 0 (or -1 for enums and flags) means "search it". */
typedef struct plan_config {
    int tp, pp, dp, cp;
    int micro_batch, microbatches, active_microbatches, virtual_stages;
    int schedule;                /* plan_schedule or -1 */
    int recompute;               /* plan_recompute or -1 */
    int recompute_group;         /* 0 = search 1..; >0 fixed */
    int recompute_layers;        /* with FULL: layers recomputed per chunk (0: every layer) */
    int recompute_saved;         /* with FULL: PLAN_SAVE_* outputs kept (0: none) */
    int compiled;                /* 0/1: torch.compile (a stack with the knob), never searched */
    int fused_pointwise;         /* 0/1: plan_layout.fused_pointwise, never searched */
    int sharding;                /* plan_sharding or -1 */
    int sequence_parallel;       /* 0/1 or -1 */
    int offload_activations;     /* 0/1 or -1 (searched only with full recompute and pp > 1) */
    int prescaled_batch;         /* 0/1 or -1 */
    int flash_attention;         /* 0/1 or -1: the framework's */
    int attention;               /* plan_attn or -1: the framework's generation (a fused
                                  * one when flash_attention is 1) */
    int dp_overlap;              /* 0/1 or -1: the framework's */
    int fp32_grads;              /* 0/1 or -1: the framework's */
    int tp_overlap;              /* 0/1/2 or -1: the framework's */
    int pp_overlap;              /* 0/1 or -1: the framework's */
    double dp_bucket_bytes;      /* 0 = the framework's bucket */
    int launch_blocking;         /* 0/1 or -1: the framework's */
    int framework;               /* plan_frameworks index (default PLAN_FW_DEFAULT, SMP) */
    int precision;               /* plan_precision or -1: bf16 */
    unsigned schedule_mask;      /* with schedule < 0: the schedules searched (bit
                                  * 1 << plan_schedule); 0 = all */
    char placement[4];           /* "" = search */
    int64_t global_batch;        /* 0 = default (plan_default_global_batch) */
    plan_objective objective;
    int allow_tp_across_nodes;   /* default 0, as SMP's best practice says */
    int any_instance;            /* 1: the framework's instance types are not checked (a
                                  * published run ran where it ran) */
    int top_k;                   /* plans kept, default 5 */
} plan_config;

void plan_config_default(plan_config *cfg);

/* A config that fixes every knob to l's value: the search then evaluates
 * exactly l (callers unfix what they want searched). */
void plan_config_from_layout(plan_config *cfg, const plan_layout *l);

/* Default global batch in sequences for a model on a cluster: the GPT-3
 * batch-size schedule by model size (Brown et al. 2020, Table 2.1),
 * interpolated in log(params), rounded to a multiple of the GPU count. */
int64_t plan_default_global_batch(const plan_model *m, const plan_cluster *c);

typedef struct plan_candidate {
    plan_layout layout;
    plan_estimate est;
} plan_candidate;

#define PLAN_TOPK_MAX 32
#define PLAN_GRID_MAX 128

/* The best layout the search found for one (TP, PP) pair. */
typedef struct plan_grid_cell {
    int tp, pp;
    int feasible;                 /* best is feasible; else it is the closest miss */
    plan_candidate best;
} plan_grid_cell;

typedef struct plan_result {
    int ntop;
    plan_candidate top[PLAN_TOPK_MAX];  /* best first */
    int64_t evaluated;                  /* layouts looked at */
    int64_t costed;                     /* of those, the ones the cost model ran on
                                         * (memory, and time when kept); the rest were
                                         * rejected before any costing (structure,
                                         * batch, TP across nodes, ...) */
    int64_t feasible;
    int64_t rejected[PLAN_REJ__COUNT];  /* by reason */
    double min_oom_excess_bytes;        /* smallest miss among OOM layouts */
    plan_candidate closest_oom;         /* the OOM layout that missed by least */
    int64_t global_batch;
    int batch_defaulted;                /* 1 if global_batch came from the default */
    double search_s;                    /* wall time of the search */
    /* The best layout per (TP, PP) (step time over the grid, for reports):
     * feasible ones by the objective, else the smallest memory miss. Pairs
     * past PLAN_GRID_MAX are not kept. */
    int ngrid;
    plan_grid_cell grid[PLAN_GRID_MAX];
    /* Layouts left out of top[] as twins of one in it: the same degrees,
     * micro-batching and step time, differing only in knobs that then
     * change memory alone (ZeRO-1 against ZeRO-2, recompute that costs no
     * time, ...); top[] keeps the one that needs the least memory. Not
     * collapsed for the memory objective. */
    int64_t twins;
} plan_result;

/* Search layouts for a model on a cluster. A model that fits on no layout is
 * a result (ntop == 0, rejected[] says why), not an error. ST_EINVAL for a
 * config that can never be satisfied (e.g. tp that does not divide the GPUs). */
int plan_search(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                plan_result *res, st_err *err);

/* Smallest number of nodes of c's instance type on which the model fits,
 * searching up to max_nodes; 0 if none. */
int plan_min_nodes(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                   int max_nodes, st_err *err);

/* Compare two candidates for an objective: <0 if a is better. */
int plan_candidate_cmp(const plan_candidate *a, const plan_candidate *b, plan_objective o);

#endif
