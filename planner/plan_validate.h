/*
 * plan_validate.h: predict published training runs and measure the error.
 *
 * `smdplan validate FILE.csv` reads measured runs in the format of
 * data/reference/calibration_runs.csv (one run per row: model shape, GPUs,
 * layout, measured iteration time or TFLOP/s, per-GPU memory) and asks the
 * planner for each row's step time and memory. This module is the pure part:
 * it maps one row, given as the text of its cells, to a model, a cluster and
 * a layout, evaluates it, and compares. It reads no files; the CSV is read
 * by data/data_csv.c and the command lives in app/cli_validate.c.
 *
 * A row is read by its fields: the framework it names (and that
 * framework's documented defaults for what the row leaves unsaid), its GPU,
 * memory and network, its layout, and its FLOP convention. Nothing keys on
 * the source a row came from, and there is no per-row or per-source
 * correction of the prediction (plan_validate.c says how each field is
 * read).
 *
 * Errors are percentages: 100 (predicted - reference) / reference.
 */
#ifndef SMD_PLAN_VALIDATE_H
#define SMD_PLAN_VALIDATE_H

#include <stddef.h>

#include "planner/plan.h"

/* One published run as text: each member is the cell of the column with the
 * same name, "" (or NULL) when absent. Borrowed for the call. */
typedef struct plan_validate_row {
    const char *row_id, *source_key, *model_name, *architecture, *framework;
    /* where the run was published, for the date of its source (the stack's
     * release then in force): a source_date column ("2022-05", "May 2022")
     * when the file has one, else a date in the title, locator or
     * reference (an arXiv number is its month) */
    const char *source_date, *source_title, *source_locator, *source_ref;
    const char *num_layers, *hidden_size, *num_heads, *num_kv_heads, *ffn_hidden_size;
    /* the size of one attention head where a row gives one apart from
     * hidden_size / num_heads (Megatron's kv_channels); blank: that ratio */
    const char *head_dim;
    const char *seq_len, *vocab_size;
    const char *params_b;        /* the model's size, billions (a check of a named shape) */
    const char *gpu_type, *gpu_mem_gb, *num_gpus, *instance_type, *interconnect;
    /* the network as numbers, when a file states them (Gb/s, one direction):
     * each GPU's NIC, or the node's NICs together; over the interconnect text */
    const char *net_gbps_per_gpu, *net_gbps_per_node;
    const char *tp, *pp, *dp, *cp, *model_parallel_size, *virtual_stages, *micro_batch_size;
    const char *global_batch_size, *global_batch_tokens, *num_microbatches, *grad_accum_steps;
    const char *recompute, *optimizer_sharding, *sequence_parallel;
    const char *precision;
    const char *tflops_per_gpu, *tflops_convention, *mfu_pct, *peak_basis_tflops;
    /* hardware FLOPs utilisation (%), a percentage of peak in the row's
     * convention, the whole cluster's PFLOP/s, sequences per second */
    const char *hfu_pct, *pct_of_peak_reported, *aggregate_pflops, *samples_per_s;
    const char *iteration_time_s, *tokens_per_s_per_gpu, *tokens_per_s_total;
    const char *memory_per_gpu_gb, *memory_metric, *other_metrics, *notes;
    /* the columns whose values the row derived rather than read printed */
    const char *derived_fields;
} plan_validate_row;

/* The CSV columns a row is read from: header name, where its text goes, and
 * whether a file without that column is refused. Ends with a NULL name. */
typedef struct plan_validate_column {
    const char *name;
    size_t offset;               /* offsetof(plan_validate_row, member) */
    int required;
} plan_validate_column;

extern const plan_validate_column plan_validate_columns[];

/* How the reference iteration time was obtained. */
typedef enum plan_validate_basis {
    PLAN_VAL_BASIS_NONE = 0,
    PLAN_VAL_BASIS_TIME,         /* iteration_time_s as published */
    PLAN_VAL_BASIS_EQ3,          /* from TFLOP/s with Narayanan et al. 2021, Eq. 3 */
    PLAN_VAL_BASIS_MODEL_FLOPS,  /* from TFLOP/s with the DGX Cloud model-FLOPs formula */
    PLAN_VAL_BASIS_TOKENS,       /* tokens per step / published tokens per second */
    PLAN_VAL_BASIS_MEGATRON,     /* from TFLOP/s with Megatron-LM's model-FLOPs count */
    PLAN_VAL_BASIS_MOSAIC,       /* from TFLOP/s with llm-foundry's 6N + 12 l h s */
    PLAN_VAL_BASIS_PARAMS8,      /* from TFLOP/s with 8 N FLOPs per token */
    PLAN_VAL_BASIS_HARDWARE,     /* from TFLOP/s or HFU over the FLOPs executed: Megatron's
                                  * model count and the layout's recomputed forward */
    PLAN_VAL_BASIS_PARAMS6,      /* from TFLOP/s with 6 N FLOPs per token (no attention) */
} plan_validate_basis;

const char *plan_validate_basis_name(plan_validate_basis b);

#define PLAN_VAL_ID_MAX 32
#define PLAN_VAL_KEY_MAX 64
#define PLAN_VAL_REASON_MAX 200
#define PLAN_VAL_NOTES_MAX 1536

/* What a published memory figure measured, read from its tool's
 * documented names (plan__mem_metric). */
typedef enum plan_mem_metric {
    PLAN_MEM_DEVICE,      /* the process's whole footprint: nvidia-smi, NVML, DCGM's
                           * framebuffer used; a figure that names no tool */
    PLAN_MEM_RESERVED,    /* what PyTorch's caching allocator holds, tensors and its
                           * cache (torch.cuda.max_memory_reserved; DeepSpeed's CA) */
    PLAN_MEM_ALLOCATED,   /* the tensors alone (torch.cuda.max_memory_allocated;
                           * DeepSpeed's MA) */
} plan_mem_metric;

/* A least recompute for a row that leaves its own open: kind (plan_recompute;
 * -1 none asked) and, with full recompute by Megatron's block method, the
 * layers of each model chunk (0: every layer). */
typedef struct plan_recompute_floor {
    int kind;
    int layers;
    char row_id[PLAN_VAL_ID_MAX]; /* the run of the configuration that needs it */
} plan_recompute_floor;

/* The outcome for one row. compared == 0 means the time was not compared and
 * reason says why (a result, not an error). Memory is compared on its own
 * (have_mem) and never enters the time statistics. */
typedef struct plan_validate_result {
    char row_id[PLAN_VAL_ID_MAX];
    char source_key[PLAN_VAL_KEY_MAX];
    int compared;
    char reason[PLAN_VAL_REASON_MAX];
    char notes[PLAN_VAL_NOTES_MAX];     /* interpretations applied, "; "-separated */

    int have_model;
    plan_model model;
    int recompute_inferred;             /* the recompute was read from the memory the run had */
    int recompute_open;                 /* the row leaves its recompute to its stack (not
                                         * stated, or derived by the row) */
    int recompute_shared;               /* read as recompute_floor: the least that fits every
                                         * run of the row's configuration (plan_validate_rows) */
    plan_recompute_floor recompute_floor;
    int have_layout;                    /* layout, instance, nodes, gpus and est are set */
    plan_layout layout;
    char instance[48];                  /* the name of inst */
    plan_instance inst;                 /* the node the row ran on: a catalog entry, or one
                                         * made from the row's GPU and network text */
    int own_gpu;                        /* 1: the row states a memory the catalog GPU of its
                                         * chip does not have: gpu is that GPU with it */
    plan_gpu gpu;
    int framework;                      /* plan_frameworks index the row was read with */
    int nodes, gpus;
    plan_estimate est;                  /* of the layout above */
    int micro_batch_searched;           /* the micro-batch came from plan_search */

    plan_validate_basis basis;
    double pred_time_s, ref_time_s, error_pct;

    double sim_time_s;                  /* the simulator's step for the layout (0: not
                                         * simulated; set by the caller) */
    int have_mem;                       /* a reference memory figure was compared */
    plan_mem_metric mem_metric;         /* ... as the row's tool measured it */
    double pred_mem_bytes, ref_mem_bytes, mem_error_pct;
    int ref_oom;                        /* the published run went out of memory */
    int pred_oom;                       /* the planner says the layout does not fit */
} plan_validate_result;

/* What a word of a run's architecture text (or of its model name, when it
 * states no architecture) says of the model: a family's documented name
 * ("Llama", "MPT") or a component's ("RoPE", "SwiGLU", "no dropout").
 * Data (data/model_families.json), installed by plan_model_traits_set;
 * read in order, the first trait that sets a property decides it. */
/* What kind of network a family is: the planner models dense decoder-only
 * transformers; a trait naming another kind makes validate list the row
 * with that reason instead of reading it as a dense decoder. */
typedef enum plan_model_structure {
    PLAN_STRUCT_DECODER = 0,     /* dense decoder-only transformer */
    PLAN_STRUCT_MOE,             /* mixture of experts: routed expert MLPs */
    PLAN_STRUCT_ENCDEC,          /* encoder-decoder */
    PLAN_STRUCT_SSM,             /* state-space layers in place of attention */
    PLAN_STRUCT__COUNT
} plan_model_structure;

#define PLAN_TRAIT_WORDS 8
#define PLAN_TRAIT_WORD_MAX 24
typedef struct plan_model_trait {
    char words[PLAN_TRAIT_WORDS][PLAN_TRAIT_WORD_MAX]; /* any of them, case-insensitive */
    int nwords;
    int arch;                    /* plan_arch, or -1: says nothing of it */
    int mlp;                     /* PLAN_MLP_PLAIN / _GATED, or -1 */
    int dropout;                 /* PLAN_DROPOUT_ON / _OFF, or -1 */
    int tied;                    /* 1 tied, 0 untied embedding and head, or -1 */
    int64_t vocab;               /* the family's tokenizer's size, or 0: says nothing */
    int kv_heads;                /* key-value heads its attention keeps (multi-query: 1),
                                  * for a run that states none; 0: says nothing */
    int structure;               /* plan_model_structure, or -1: says nothing */
    char source[PLAN_SOURCE_MAX];
} plan_model_trait;

#define PLAN_TRAITS_MAX 64

/* Install the traits (copied); replaces any installed before. */
int plan_model_traits_set(const plan_model_trait *v, int n, st_err *err);
/* The installed traits (NULL and 0 before any). */
const plan_model_trait *plan_model_traits(int *n);

/* A model a run may name without publishing its shape: its documented
 * names (a preset's key, a Hugging Face id and its aliases: "llama-2-70b",
 * "meta-llama/Llama-2-70b-hf", "gpt3-175b") and its published shape.
 * Data (data/models.json, data/hf_models.json), installed by
 * plan_known_models_set. A row's model name names one when a name, read
 * without case, spaces and punctuation ("Llama 2 70B" is "llama270b"),
 * stands in it as a whole word that no digit follows. */
#define PLAN_KNOWN_NAMES 4
#define PLAN_KNOWN_NAME_MAX 64
typedef struct plan_known_model {
    char names[PLAN_KNOWN_NAMES][PLAN_KNOWN_NAME_MAX];
    int nnames;
    plan_model model;            /* the shape (its seq is the model's, not a run's) */
} plan_known_model;

#define PLAN_KNOWN_MAX 128

/* Install the known models (copied); replaces any installed before. */
int plan_known_models_set(const plan_known_model *v, int n, st_err *err);
/* The known model a model name names (the longest name matched), NULL
 * when none; *name the matched name. */
const plan_known_model *plan_known_model_named(const char *text, const char **name);

/* Map a row to a model, cluster and layout, evaluate it and compare with the
 * reference. Always fills out (a row that cannot be predicted gets a
 * reason). terms, if non-NULL, receives the evaluated layout's terms.
 * Returns ST_OK, or ST_ENOMEM / ST_EINTERNAL on failures that are not the
 * row's fault. */
int plan_validate_run(const plan_catalog *cat, const plan_validate_row *row,
                      plan_validate_result *out, plan_terms *terms, st_err *err);

/* plan_validate_run with a least recompute for a row that leaves its own
 * open (floor NULL or kind -1: none), as plan_validate_rows reads it. */
int plan_validate_run_floor(const plan_catalog *cat, const plan_validate_row *row,
                            const plan_recompute_floor *floor, plan_validate_result *out,
                            plan_terms *terms, st_err *err);

/* Every row of a file (plan_validate_run), then one configuration, one
 * recompute: rows of one source that give the same model, stack, GPU and
 * layout but for the data-parallel degree (a scaling table of one config)
 * and leave the recompute open ran one setting of it; where the memory the
 * runs had made some read a recompute (the least that fits each), every
 * one of them is read with the most of those, the least that fits them all
 * (a config's activation checkpointing is one setting, not one per node
 * count: NeMo's launcher scales a config by trainer.num_nodes alone). */
int plan_validate_rows(const plan_catalog *cat, const plan_validate_row *rows, int n,
                       plan_validate_result *res, st_err *err);

/* The second half of plan_validate_rows on results res of rows (each row's
 * own reading, plan_validate_run on cat): its configurations' rows read
 * again with their shared recompute. */
int plan_validate_share_recompute(const plan_catalog *cat, const plan_validate_row *rows, int n,
                                  plan_validate_result *res, st_err *err);

/* The cluster of a result with a layout: r->inst on r->nodes nodes, its
 * GPU count, the framework's fitted efficiencies. c borrows r->inst and the
 * catalog. ST_EINVAL without a layout. */
int plan_validate_cluster(const plan_catalog *cat, const plan_validate_result *r,
                          plan_cluster *c, st_err *err);

/* The predicted per-GPU memory m as r's tool measured it (r->mem_metric):
 * the tensors only, the caching allocator's reserve, or the process's
 * whole footprint as nvidia-smi shows it. */
double plan_validate_mem_bytes(const plan_validate_result *r, const plan_mem *m);

/* Reference FLOPs of one iteration by Narayanan et al. 2021, Eq. 3 (with
 * full recompute): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). */
double plan_validate_eq3_flops(double batch, double seq, double layers, double hidden,
                               double vocab);

/* Model FLOPs of one iteration by the DGX Cloud benchmark recipes (GPT, no
 * recompute): B s (24 l h^2 + 12 l h s + 48 l h^2 + 6 V h). */
double plan_validate_model_flops(double batch, double seq, double layers, double hidden,
                                 double vocab);

/* Model FLOPs of one iteration as Megatron-LM counts them for its MFU
 * (megatron/training/training.py, num_floating_point_operations): 12 B s l
 * h^2 ((1 + kv/a + s/h) q/h + (f/h) g + V/(2 l h)), q = a x head dim, g =
 * 3/2 for a gated MLP. */
double plan_validate_megatron_flops(const plan_model *m, double batch);

/* Error statistics of a group of rows. */
typedef struct plan_validate_stats {
    char source_key[PLAN_VAL_KEY_MAX];  /* "" for all rows */
    int rows;                           /* rows in the group */
    int compared;                       /* rows whose time was scored
                                         * (plan_validate_scored) */
    double mean_abs_error_pct, max_abs_error_pct;
    double mean_error_pct;              /* signed: > 0 the planner is slow */
    char worst_row_id[PLAN_VAL_ID_MAX];
    int mem_compared;
    double mem_mean_abs_error_pct, mem_max_abs_error_pct;
    int oom_reference;                  /* published runs that went out of memory */
    int oom_agreed;                     /* ... where the planner says OOM too */
    int pred_oom_of_ran;                /* runs that ran but the planner calls OOM */
    int oom_timed;                      /* ... whose time was scored (in the figures above
                                         * as well: a time error and a fit miss) */
    double oom_timed_mean_abs_error_pct;
    int fit_checked;                    /* rows with a layout whose fit/OOM is known */
    int fit_agreed;                     /* ... where the planner agrees */
    int sim_compared;                   /* compared rows the simulator played out */
    double sim_mean_abs_error_pct, sim_max_abs_error_pct;
} plan_validate_stats;

#define PLAN_VAL_SOURCES_MAX 32

typedef struct plan_validate_summary {
    plan_validate_stats all;
    /* every source weighs the same: the mean over sources of each source's
     * mean |error| (sources with compared rows), and the worst source */
    double mean_source_pct, max_source_pct;
    char worst_source[PLAN_VAL_KEY_MAX];
    double sim_mean_source_pct, sim_max_source_pct;  /* the same for the simulator */
    int nsources;                       /* in order of first appearance */
    plan_validate_stats source[PLAN_VAL_SOURCES_MAX];
    int rows_unlisted;                  /* rows of sources past the maximum (counted in all) */
} plan_validate_summary;

/* 1 when r's time counts in the statistics: every row whose time was
 * compared. A run whose published layout the planner calls out of memory,
 * though it ran, counts twice: its time error here, and a fit/OOM miss (it
 * is also summed apart in oom_timed, to be seen). */
int plan_validate_scored(const plan_validate_result *r);

/* Per-source and overall statistics of n results. */
void plan_validate_summarize(const plan_validate_result *r, int n, plan_validate_summary *s);

#endif
