/*
 * plan_int.h: internals shared by the planner's files (not for other folders).
 */
#ifndef SMD_PLAN_INT_H
#define SMD_PLAN_INT_H

#include "planner/plan.h"

/* Bytes per element of the training data type (fp16/bf16). */
#define PLAN_BYTES_HALF 2.0

/* Kernels of one transformer layer and one microbatch, counted from
 * Megatron's GPT layer (Korthikanti et al. 2022, Fig. 2). Forward: 2
 * LayerNorms, 4 GEMMs, 2 TP all-reduces, 2 bias-dropout-add, bias-GeLU,
 * attention core (QK^T, softmax, dropout, PV) and the context copy: 16.
 * Backward: 8 GEMMs (input and weight gradients), 4 bias gradients, 4
 * batched GEMMs, softmax and 3 dropout gradients, 2 x 2 LayerNorm kernels,
 * GeLU gradient, 2 all-reduces, the copy, 2 residual adds, and 12 gradient
 * accumulations (one per parameter tensor): 42. A fused attention kernel
 * takes the place of 4 forward and 7 backward ones. */
#define PLAN__KERNELS_FWD 16
#define PLAN__KERNELS_BWD 42
#define PLAN__KERNELS_ATTN_FWD 4
#define PLAN__KERNELS_ATTN_BWD 7


/* Where one parallel dimension's groups sit on the nodes. */
typedef struct plan__span {
    int ranks_per_node;          /* members of one group inside one node */
    int nodes;                   /* nodes one group spans */
} plan__span;

/* Span of dimension dim ('T', 'C', 'P' or 'D') under l's placement on c.
 * Returns 0, or -1 if the groups do not tile the nodes. */
/* Does text name another board of a chip than the catalog GPU name does?
 * A PCIe or NVL board runs at other clocks, power and memory bandwidth
 * than the SXM module of the same chip (NVIDIA H100 datasheet: H100 PCIe
 * 756 dense BF16 TFLOP/s and 2.0 TB/s, H100 NVL 835 and 3.9, against SXM's
 * 989 and 3.35; A100 PCIe at 250-300 W against SXM's 400 W): each variant
 * word ("PCIe", "NVL"; digits may follow: "NVL72"; not "NVLink") in one and
 * not the other. */
int plan__board_differs(const char *text, const char *gpu_name);
/* The variant word of the board text names, as a word of its own: "PCIe",
 * "NVL", or NULL. */
const char *plan__board_variant(const char *text);

int plan__span_of(const plan_layout *l, const plan_cluster *c, char dim, plan__span *out);

/* One microbatch through one transformer layer on one GPU. */
typedef struct layer_cost {
    double fwd_comp_s;        /* GEMMs + attention core + elementwise */
    double bwd_comp_s;
    double recomp_comp_s;     /* extra compute in backward for recompute */
    double attn_fwd_s;        /* attention core alone (for CP overlap) */
    double gemm_fwd_s;        /* the layer's GEMMs alone (for TP overlap) */
    double tp_fwd_s, tp_bwd_s, tp_recomp_s;
    double cp_fwd_s, cp_bwd_s;
    double act_full_bytes;    /* stored activations, no recompute */
    double act_stored_bytes;  /* stored under the plan's recompute, per layer */
    double act_input_bytes;   /* one layer input (checkpoint) */
    /* fwd + bwd + recompute by kind (the estimate's compute split): GEMMs,
     * attention core, host launch time beyond the GPU's */
    double gemm_s, attn_s, host_s;   /* elementwise is the rest of the compute */
    /* what the recompute adds to, kept apart (layer_recompute) */
    double gemm_fwd_all_s;    /* the forward's GEMMs, FP8 casts included */
    double host_fwd_s;        /* the forward's host time beyond the GPU's */
    double act_tok_bytes;     /* stored activations without the score tensors */
    /* the forward by part, for a recompute that keeps some products'
     * outputs (plan_layout.recompute_saved) or re-runs only what the
     * backward reads (remat_dce): each linear's GEMM with its FP8 casts
     * (QKV, output projection, MLP in, MLP out), the elementwise kernels;
     * and the bytes of each output a policy can keep (PLAN_SAVE_* order:
     * QKV, output projection, MLP in, MLP out, attention output) */
    double lin_fwd_s[4];
    double elem_fwd_s;
    double save_bytes[5];
    double q_share;           /* Q's share of the QKV products' width: q / (q + 2 kv d) */
    int up_products;          /* the MLP's input products: 2 gated (gate and up), else 1 */
} layer_cost;

/* What plan__evaluate works out of the degrees, micro-batch, placement and
 * the stack's behaviour alone, before the schedule, recompute, sharding and
 * offload: the search's innermost loop varies only those, so it computes
 * this once for all of them (plan_search.c search_inner). valid 0: not yet
 * (plan__evaluate fills it); -1: their placement does not tile the nodes. */
#define PLAN__MEMO_COLL 8
/* memory stages (mem_stages) whose sharded terms are kept per sharding */
#define PLAN__MEMO_STATES 4
/* What a stage's activation memory reads of a layout beyond its knobs, the
 * same for every layout of a memo: its stack, the tokens of a microbatch,
 * the last stage's logits (plan_eval_mem.c). */
typedef struct plan__act_in {
    const struct plan_framework *fw;
    double tokens_mb, logits_bytes;
} plan__act_in;

typedef struct plan__eval_memo {
    int valid;
    const struct plan_framework *fw; /* the layouts' stack */
    plan__span sp_t, sp_p, sp_d, sp_c;
    layer_cost lc;               /* before layer_recompute */
    /* after it, by recompute kind: the last recompute of each kind a
     * layout of the memo asked for (memo_recompute in plan_eval.c) */
    struct plan__memo_recompute {
        int set, layers, saved, group, virtual_stages;
        layer_cost lc;
    } recompute[PLAN_RECOMP__COUNT];
    int stage_layers[PLAN_PP_MAX];
    /* the stages whose memory can be the worst (eval_memory), in order:
     * the first, the first middle stage of each layer count, the last */
    int nmem_stages;
    int mem_stages[PLAN_PP_MAX];
    double mem_params[PLAN_PP_MAX]; /* their parameters per GPU, unsharded */
    plan__act_in act;
    /* the terms of their memory the sharding decides (stage_state_bytes)
     * of the first PLAN__MEMO_STATES, by sharding: state_set's bit
     * k * PLAN_SHARD__COUNT + sharding once worked out */
    unsigned state_set;
    plan_mem state[PLAN__MEMO_STATES][PLAN_SHARD__COUNT];
    double head_f_s, head_b_s, head_gemm_s; /* the LM head and loss per microbatch */
    double p2p_bytes, p2p_s;     /* one activation send between stages, its bytes and time */
    double stage_params[PLAN_PP_MAX]; /* each stage's parameters per GPU, unsharded */
    /* the runs of stages timed alike (eval_stages): the stage after the
     * run that stage i starts, for each i that starts one */
    int run_next[PLAN_PP_MAX];
    double max_stage_params;     /* the largest stage's parameters per GPU, unsharded */
    /* the model's FLOPs per token (plan_model_train_flops_per_token,
     * plan_model_layer_fwd_flops_per_token): the same for every layout */
    double train_flops_per_token, layer_fwd_flops_per_token;
    /* collectives over the data-parallel group already timed: kind (0
     * all-reduce, 1 all-gather), bytes, seconds */
    int ncoll;
    int coll_kind[PLAN__MEMO_COLL];
    double coll_bytes[PLAN__MEMO_COLL], coll_s[PLAN__MEMO_COLL];
} plan__eval_memo;

/* plan_evaluate; with memory_only a layout that does not fit gets no time
 * (the search's pruning), of the per-stage arrays only stage_layers and the
 * worst stage's stage_mem_bytes are set (the rest keep what they held), and
 * a rejection for structure or placement no reason in words. memo: NULL, or
 * one shared by layouts that differ only in schedule, virtual stages,
 * active microbatches, recompute, sharding and offload (the caller's
 * promise). */
int plan__evaluate(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                   plan_estimate *est, plan_terms *terms, int memory_only, plan__eval_memo *memo,
                   st_err *err);

/* A term of an estimate's breakdown into T (NULL: none wanted). */
#define PLAN__TERM(T, grp, nm, val, un, fml, src)                                              \
    do {                                                                                       \
        if ((T) && (T)->n < PLAN_TERMS_MAX)                                                    \
            (T)->v[(T)->n++] = (plan_term){grp, nm, (val), un, fml, src};                      \
    } while (0)

/* Tokens of one microbatch on one GPU (its share of the sequence under CP). */
static inline double plan__tokens_per_mb(const plan_model *m, const plan_layout *l)
{
    return (double)l->micro_batch * (double)m->seq / (double)l->cp;
}

/* Bytes of one activation element: 4 in fp32, else 2 (bf16/fp16, and the
 * bf16 activations around FP8 linears). */
static inline double plan__elem_bytes(const plan_layout *l)
{
    return l->precision == PLAN_PREC_FP32 ? 4.0 : PLAN_BYTES_HALF;
}

/* ---- memory (plan_eval_mem.c) ---- */

/* Parameters held by one GPU of stage i with layers layers (before
 * sharding). */
double plan__stage_params(const plan_model *m, const plan_layout *l, int i, int layers);
/* The ranks the layout's sharded states are split over. */
int plan__shard_degree(const plan_layout *l);
/* Does the pipeline sync its data parallelism once a step (pp_sync_once)? */
int plan__pipeline_syncs_once(const plan_layout *l, const struct plan_framework *fw);
/* Memory of stage i (layers layers, P its plan__stage_params) into mem. */
void plan__stage_memory(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                        const layer_cost *lc, int i, int layers, double P, plan_mem *mem);
/* The stages whose memory can be the worst, with their parameters, and
 * what their activations read (plan__act_in) into memo (its stage_layers
 * set). */
void plan__memory_stages(const plan_model *m, const plan_layout *l, plan__eval_memo *memo);
/* The worst stage's memory by term into est->mem (every stage's total too
 * unless memory_only), its terms into terms; a layout whose need exceeds the
 * capacity is marked PLAN_REJ_OOM. */
void plan__eval_memory(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       const layer_cost *lc, plan__eval_memo *mm, plan_estimate *est,
                       plan_terms *terms, int memory_only);

/* Rank stride of dimension dim under l's placement (1 for the innermost). */
int plan__stride_of(const plan_layout *l, char dim);

/* Time of one GEMM of m x k by k x n, batch times, on c's GPU, seconds. */
double plan__gemm_s(const plan_cluster *c, double m, double n, double k, double batch);
/* The same with FP8 operands when fp8 (and the GPU has FP8 tensor cores). */
double plan__gemm_prec_s(const plan_cluster *c, double m, double n, double k, double batch, int fp8);

/* Backward FLOPs of fused attention over its forward ones (FlashAttention-2:
 * five matrix products to the forward's two, Dao 2023). */
#define PLAN__ATTN_BWD_OVER_FWD 2.5

/* Fraction of c's peak the fused attention kernel of generation a reaches
 * (a != PLAN_ATTN_UNFUSED), forward (*fwd) and backward (*bwd). Where the
 * chip's FlashAttention-2 was measured per direction, a stack reaches its
 * efficiency's share of the measured rates (flash_eff over the measured
 * forward-and-backward rate, at most all of them), in each direction and
 * for every generation measured or derived from it; elsewhere flash_eff is
 * FlashAttention-2's rate both ways. Returns the forward one. */
double plan__attn_eff(const plan_cluster *c, plan_attn a, double *fwd, double *bwd);

/* The forward-and-backward rate over the peak of a kernel reaching fwd
 * forward and bwd backward (FLOPs PLAN__ATTN_BWD_OVER_FWD to 1); 0 when
 * either is not positive. */
double plan__attn_fwd_bwd_eff(double fwd, double bwd);

/* The share of c's GPU an NCCL collective takes from the compute it runs
 * beside: its channels' CUDA blocks over the GPU's SMs (0 where either is
 * not known). */
double plan__comm_sm_frac(const plan_cluster *c);

/* The plain (unfused) attention core of nb products (batch x heads) of sq
 * queries against sk keys of head size d, forward and backward, seconds
 * (plan_hw.c); dropout: the model drops attention probabilities. */
void plan__attn_plain_s(const plan_cluster *c, double nb, double sq, double sk, double d,
                        int dropout, double *fwd_s, double *bwd_s);

/* Time of an elementwise (memory-bound) kernel moving bytes, seconds. */
double plan__mem_s(const plan_cluster *c, double bytes);

/* All-reduce of bytes per rank over a group with the given span, seconds.
 * sharing: how many such groups run at once on a node's network (the node's
 * GPUs not in this group that communicate concurrently): the network share of
 * one group is ranks_per_node / gpus_per_node. Ring/hierarchical cost, see
 * plan_comm.c. */
double plan__allreduce_s(const plan_cluster *c, const plan__span *sp, double bytes);

/* Reduce-scatter or all-gather: half an all-reduce's traffic. */
double plan__allgather_s(const plan_cluster *c, const plan__span *sp, double bytes);

/* An all-to-all of bytes per rank over a group with the given span,
 * seconds (plan_hw.c). */
double plan__alltoall_s(const plan_cluster *c, const plan__span *sp, double bytes);

/* The fraction of a link's bandwidth a point-to-point send reaches:
 * ib_write_bw reaches 24 of 25 GB/s on an HDR link (NCCL issue #1048,
 * 2023); the same fraction is taken for NVLink and for the GPU's share of
 * the node's network (plan_hw.c), and a host's measured send/recv is
 * divided by it for its entry (plan_host_entry.c). */
#define PLAN__P2P_PEAK_EFF 0.96

/* A point-to-point send's bandwidth (bytes/s) and latency (s), inside a
 * node or across nodes. */
double plan__p2p_link_bps(const plan_cluster *c, int same_node);
double plan__p2p_latency_s(const plan_cluster *c, int same_node);

/* Point-to-point send of bytes to a neighbour stage, inside a node or not. */
double plan__p2p_s(const plan_cluster *c, int same_node, double bytes);

/* One layer's linears under Transformer Engine's userbuffers overlap
 * (plan_tp_overlap.c): tokens of the microbatch on a rank (T), TP degree,
 * hidden size, the two column-parallel products' output widths per rank
 * (QKV, MLP up), the two row-parallel products' input widths per rank
 * (projection, MLP down), bytes per activation element, FP8 linears. */
struct plan_framework;

typedef struct plan__ub_layer_in {
    double tokens, tp, hidden;
    double col_n[2];
    double row_k[2];
    double elem_bytes;
    int fp8;
} plan__ub_layer_in;

/* What the overlap adds to the layer's products (pieces, SMs given to the
 * communication) and what of its collectives stays exposed, forward and
 * backward, seconds. */
typedef struct plan__ub_cost {
    double fwd_gemm_s, bwd_gemm_s;
    double fwd_exposed_s, bwd_exposed_s;
} plan__ub_cost;

void plan__ub_layer(const plan_cluster *c, const struct plan_framework *fw, const plan__span *sp_t,
                    const plan__ub_layer_in *in, plan__ub_cost *out);

#endif
