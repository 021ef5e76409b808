/*
 * plan_eval_mem.c: the memory of one layout, per GPU and pipeline stage
 * (plan_evaluate's memory; plan_eval.c works out the time).
 *
 * Per stage (the worst stage decides):
 *   weights 2 B, gradients 2 B, optimizer 12 B per parameter held (fp32
 *   master, Adam m and v): mixed-precision Adam as in Rajbhandari et al. 2020
 *   (ZeRO), Sec. 3.1; sharding divides optimizer (ZeRO-1), + gradients
 *   (ZeRO-2), + weights (ZeRO-3) by the sharding degree.
 *   Activations per layer per microbatch (layer_costs in plan_eval.c: after
 *   Korthikanti et al. 2022, Sec. 4 and Table 2) times the microbatches in
 *   flight: all of them (capped by SMP's active_microbatches) for GPipe,
 *   p - i for 1F1B on stage i (Narayanan et al. 2021, Sec. 2.2.1), more
 *   chunks for the interleaved schedule (Megatron-LM's warm-up count
 *   (v-1)p + 2(p-i-1) + 1); activation offload keeps fewer.
 *   Communication buffers, the CUDA context and the caching allocator's
 *   reserve on top. plan_estimate keeps the terms of the worst stage and the
 *   total of every stage; plan_stage_mem gives any stage's terms by the same
 *   steps.
 */
#include "planner/plan_int.h"
#include "planner/plan_framework.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Bytes per parameter: fp16/bf16 weights and gradients, fp32 master + Adam
 * m and v (Rajbhandari et al. 2020, Sec. 3.1: 2 + 2 + 12). */
#define GRAD_BYTES 2.0
#define OPTIMIZER_BYTES 12.0
/* fp32 training: Adam's m and v (8 B); the weights are the master copy. */
#define OPTIMIZER_BYTES_FP32 8.0
/* One FP8 byte per weight for Transformer Engine's cached FP8 weights. */
#define FP8_WEIGHT_BYTES 1.0
/* NCCL keeps NCCL_BUFFSIZE (default 4 MiB, NCCL environment-variable docs)
 * per channel and direction; 16 channels is NCCL's usual count on NVSwitch
 * systems. Per communicator the plan uses. */
#define NCCL_BUFFERS_BYTES (2.0 * 4.0 * 1048576.0 * 16.0)
/* CUDA context with cuBLAS/NCCL kernels loaded and the cuBLAS workspace:
 * about 0.8 GiB on A100/H100 under CUDA 11-12 as PyTorch reports it
 * (nvidia-smi after torch.cuda.init() and a first GEMM). An estimate. */
#define CUDA_CONTEXT_BYTES (0.8 * 1073741824.0)
/* Logits held for the loss: fp16 logits + fp32 softmax (6 bytes/element). */
#define LOGIT_BYTES 6.0

/* Microbatches (in whole-stage units) whose activations stage i holds. */
static double inflight(const plan_layout *l, int i)
{
    int p = l->pp, m = l->microbatches, cap = l->active_microbatches;
    double n;
    switch (l->schedule) {
    case PLAN_SCHED_SIMPLE:
        n = m < cap ? m : cap;
        break;
    case PLAN_SCHED_VIRTUAL: {
        int v = l->virtual_stages;
        double chunks = (double)(v - 1) * p + 2.0 * (p - i - 1) + 1.0;
        if (chunks > (double)m * v)
            chunks = (double)m * v;
        if (chunks > (double)cap * v)
            chunks = (double)cap * v;
        n = chunks / v;
        break;
    }
    case PLAN_SCHED_INTERLEAVED:
    case PLAN_SCHED_ZB_H1:
    default:
        n = p - i;
        if (n > m)
            n = m;
        if (n > cap)
            n = cap;
        break;
    }
    return n < 1.0 ? 1.0 : n;
}

/* Parameters held by one GPU of stage i (before sharding). */
double plan__stage_params(const plan_model *m, const plan_layout *l, int i, int layers)
{
    double t = l->tp;
    double p = (double)layers * (double)m->params_layer / t;
    if (i == 0)
        p += (double)m->params_embedding / t;
    if (i == l->pp - 1) {
        if (!m->tied_embedding)
            p += (double)m->params_head / t;
        else if (l->pp > 1) /* Megatron keeps a copy of the tied embedding on the last stage */
            p += (double)m->vocab * (double)m->hidden / t;
        p += (double)m->params_final_norm;
    }
    return p;
}

int plan__shard_degree(const plan_layout *l)
{
    return l->sharding_degree > 0 ? l->sharding_degree : l->dp * l->cp;
}

/* Does the layout's pipeline sync its data parallelism once a step
 * (pp_sync_once: PyTorch's pipelining, stage.py backward_maybe_with_nosync,
 * "accumulate gradients on previous steps and reduce them on the last
 * step"), its stage's parameters gathered and gradients unsharded until
 * then (set_reshard_after_backward(False), set_requires_gradient_sync(False)
 * before the last backward)? */
int plan__pipeline_syncs_once(const plan_layout *l, const plan_framework *fw)
{
    return l->pp > 1 && fw->pp_sync_once;
}

/* The terms of a stage's memory that its parameters (P, plan__stage_params) and
 * the layout's sharding decide: weights, gradients, optimizer state,
 * communication buffers, context; the others in mem are left as they are. */
static void stage_state_bytes(const plan_model *m, const plan_layout *l, const plan_framework *fw,
                              const layer_cost *lc, double P, plan_mem *mem)
{
    double sh = plan__shard_degree(l), eb = plan__elem_bytes(l);
    int fp32 = l->precision == PLAN_PREC_FP32;
    /* held gathered and unsharded across microbatches */
    int held = plan__pipeline_syncs_once(l, fw) && l->sharding >= PLAN_SHARD_GRADIENTS;
    mem->weights_bytes = eb * P / (l->sharding >= PLAN_SHARD_PARAMS && !held ? sh : 1.0);
    /* gathered working copies: the layer computing and the ones the stack
     * prefetches ahead of it (FSDP1's limit_all_gathers: two in flight;
     * the release's zero3_prefetch, data/frameworks.json) */
    if (l->sharding >= PLAN_SHARD_PARAMS && !held)
        mem->weights_bytes += (1.0 + fw->zero3_prefetch) * eb * (double)m->params_layer / l->tp;
    if (l->precision == PLAN_PREC_FP8) /* FP8 copies of the linears' weights, kept across
                                        * microbatches (Transformer Engine's weight caching) */
        mem->weights_bytes += FP8_WEIGHT_BYTES * P / (l->sharding >= PLAN_SHARD_PARAMS ? sh : 1.0);
    mem->grads_bytes = (l->fp32_grads || fp32 ? 4.0 : GRAD_BYTES) * P /
                       (l->sharding >= PLAN_SHARD_GRADIENTS && !held ? sh : 1.0);
    /* fp32 training keeps no master copy: Adam's m and v only */
    double ob = fp32 ? OPTIMIZER_BYTES_FP32 : fw->optimizer_bytes > 0 ? fw->optimizer_bytes
                                                                      : OPTIMIZER_BYTES;
    mem->optimizer_bytes = ob * P / (l->sharding >= PLAN_SHARD_OPTIMIZER ? sh : 1.0);

    int comms = (l->tp > 1) + (l->pp > 1) + (l->dp > 1) + (l->cp > 1);
    mem->comm_buffers_bytes = comms * NCCL_BUFFERS_BYTES;
    if (l->dp * l->cp > 1) /* the framework's gradient bucket buffer */
        mem->comm_buffers_bytes += fmin(fw->grad_buffer_bytes, mem->grads_bytes);
    if (l->pp > 1) /* send and receive buffers, activations and gradients */
        mem->comm_buffers_bytes += 4.0 * lc->act_input_bytes;
    mem->context_bytes = fw->context_bytes > 0 ? fw->context_bytes : CUDA_CONTEXT_BYTES;
}

static plan__act_in act_in_of(const plan_model *m, const plan_layout *l)
{
    plan__act_in a = {plan_framework_get(l->framework), plan__tokens_per_mb(m, l), 0.0};
    a.logits_bytes = a.tokens_mb * (double)m->vocab / l->tp * LOGIT_BYTES;
    return a;
}

/* The terms of stage i's memory (layers layers) that the schedule,
 * recompute and offload decide: activations, the recompute working set,
 * the logits (0 but on the last stage); the others are left as they are. */
static void stage_act_bytes(const plan_model *m, const plan_layout *l, const layer_cost *lc,
                            const plan__act_in *a, int i, int layers, plan_mem *mem)
{
    double n = inflight(l, i);
    double stored = n, held = layers;
    if (l->offload_activations && a->fw->offload_layers_held > 0) {
        /* by layer (SMP v2): the running layer's checkpoint and those
         * loaded ahead of it stay, of each microbatch in flight */
        held = fmin((double)layers, (double)a->fw->offload_layers_held);
    } else if (l->offload_activations && stored > 2.0) {
        stored = 2.0; /* by microbatch (SMP v1): current + prefetching microbatch stay */
    }
    double th = l->sequence_parallel ? l->tp : 1.0;
    mem->activations_bytes = stored * held * lc->act_stored_bytes;
    if (i == 0) /* embedding output and its dropout mask */
        mem->activations_bytes += stored * a->tokens_mb * (double)m->hidden * 3.0 / th;
    /* Working set of the backward pass: the recomputed group (full) or one
     * layer's activation gradients. */
    int k = l->recompute == PLAN_RECOMP_FULL ? l->recompute_group : 1;
    if (k > layers)
        k = layers;
    mem->recompute_bytes = (double)k * lc->act_full_bytes;
    mem->logits_bytes = i == l->pp - 1 ? a->logits_bytes : 0.0;
}

/* A stage's allocator reserve and total from its sharded terms (st) and
 * its activation terms (act, which may be st). PyTorch's caching allocator
 * keeps what it once reserved and rounds and splits blocks (requests up to
 * 1 MiB from 2 MiB segments, 1-10 MiB from 20 MiB ones, larger ones rounded
 * to 2 MiB: c10 CUDA caching allocator); the memory it reserves beyond what
 * the tensors hold is a fraction fitted per stack to measured memory
 * (c->eff.alloc_frac). */
static double total_of(const plan_cluster *c, const plan_mem *st, const plan_mem *act,
                       double *allocator_bytes)
{
    double tensors = st->weights_bytes + st->grads_bytes + st->optimizer_bytes +
                     act->activations_bytes + act->recompute_bytes + act->logits_bytes;
    *allocator_bytes = c->eff.alloc_frac * tensors;
    return tensors + st->comm_buffers_bytes + st->context_bytes + *allocator_bytes;
}

/* The allocator's reserve and the total, from the other terms. */
static void stage_total_bytes(const plan_cluster *c, plan_mem *mem)
{
    mem->total_bytes = total_of(c, mem, mem, &mem->allocator_bytes);
}

/* Memory of stage i (layers layers, P its plan__stage_params) into mem. */
void plan__stage_memory(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                        const layer_cost *lc, int i, int layers, double P, plan_mem *mem)
{
    plan__act_in a = act_in_of(m, l);
    stage_state_bytes(m, l, a.fw, lc, P, mem);
    stage_act_bytes(m, l, lc, &a, i, layers, mem);
    stage_total_bytes(c, mem);
}

/* The stages whose memory can be the worst, in order, into memo. Stages
 * differ in their layer count (two counts in the middle, see split_layers),
 * the first's embedding, the last's head, and the microbatches in flight,
 * which never grow with the stage index under any schedule (inflight()). So
 * among the middle stages of one layer count the first holds the most, and
 * the worst stage is among: stage 0, the first middle stage of each count,
 * the last stage. They depend on the split alone: once per memo, with
 * their parameters (plan__stage_params). */
void plan__memory_stages(const plan_model *m, const plan_layout *l, plan__eval_memo *memo)
{
    int pp = l->pp, seen_a = -1, seen_b = -1, k = 0;
    for (int i = 0; i < pp; i++) {
        int n = memo->stage_layers[i];
        if (i > 0 && i < pp - 1) {
            if (n == seen_a || n == seen_b)
                continue;
            if (seen_a < 0)
                seen_a = n;
            else
                seen_b = n;
        }
        memo->mem_params[k] = plan__stage_params(m, l, i, n);
        memo->mem_stages[k++] = i;
    }
    memo->nmem_stages = k;
    memo->act = act_in_of(m, l);
}

_Static_assert(PLAN__MEMO_STATES * PLAN_SHARD__COUNT <= 32, "state_set holds a bit per state");

/* The sharded terms of the memo's k-th memory stage (stage_state_bytes):
 * the memo's, worked out there the first time, or into scratch past the
 * stages the memo holds. */
static const plan_mem *memo_state(const plan_model *m, const plan_layout *l, const layer_cost *lc,
                                  plan__eval_memo *mm, int k, plan_mem *scratch)
{
    if (k >= PLAN__MEMO_STATES) {
        stage_state_bytes(m, l, mm->fw, lc, mm->mem_params[k], scratch);
        return scratch;
    }
    unsigned bit = 1u << (k * PLAN_SHARD__COUNT + (int)l->sharding);
    plan_mem *st = &mm->state[k][l->sharding];
    if (!(mm->state_set & bit)) {
        stage_state_bytes(m, l, mm->fw, lc, mm->mem_params[k], st);
        mm->state_set |= bit;
    }
    return st;
}

/* Every stage's total memory and microbatches in flight into est; stages
 * after the first of a middle run of one layer count share its sharded
 * terms (their parameters are the same). */
static void every_stage_memory(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                               const layer_cost *lc, const plan__eval_memo *mm,
                               plan_estimate *est)
{
    plan_mem mem;
    int prev = -1; /* layers of the middle stage before, whose sharded terms mem holds */
    for (int i = 0; i < l->pp; i++) {
        int n = est->stage_layers[i], middle = i > 0 && i < l->pp - 1;
        if (!middle || n != prev)
            stage_state_bytes(m, l, mm->fw, lc, mm->stage_params[i], &mem);
        prev = middle ? n : -1;
        stage_act_bytes(m, l, lc, &mm->act, i, n, &mem);
        stage_total_bytes(c, &mem);
        est->stage_mem_bytes[i] = mem.total_bytes;
        est->stage_inflight[i] = (int)ceil(inflight(l, i));
    }
}

/* The worst stage's memory by term into est->mem (every stage's total too
 * unless memory_only); a layout whose need exceeds the capacity is marked
 * PLAN_REJ_OOM. */
void plan__eval_memory(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       const layer_cost *lc, plan__eval_memo *mm, plan_estimate *est,
                       plan_terms *terms, int memory_only)
{
    /* ---- memory: the worst stage ----
     * among the memo's candidates (plan__memory_stages). A search pruning by
     * memory looks only at those; a layout that fits gets every stage's
     * total. */
    /* stage 0 comes first: it sets the worst. Its sharded terms stay where
     * they are (the memo's, or a scratch buffer, the other one reused) and
     * are copied once, with the worst's activation terms. */
    plan_mem scratch[2], act, worst_act = {0};
    const plan_mem *worst_st = &scratch[0];
    int free_scratch = 0;
    for (int k = 0; k < mm->nmem_stages; k++) {
        int i = mm->mem_stages[k];
        const plan_mem *st = memo_state(m, l, lc, mm, k, &scratch[free_scratch]);
        stage_act_bytes(m, l, lc, &mm->act, i, mm->stage_layers[i], &act);
        act.total_bytes = total_of(c, st, &act, &act.allocator_bytes);
        if (i == 0 || act.total_bytes > worst_act.total_bytes) {
            if (st == &scratch[free_scratch])
                free_scratch ^= 1;
            worst_st = st;
            worst_act = act;
            est->worst_stage = i;
        }
    }
    /* the sharded terms the worst stage's, the others its own */
    est->mem = *worst_st;
    est->mem.activations_bytes = worst_act.activations_bytes;
    est->mem.recompute_bytes = worst_act.recompute_bytes;
    est->mem.logits_bytes = worst_act.logits_bytes;
    est->mem.allocator_bytes = worst_act.allocator_bytes;
    est->mem.total_bytes = worst_act.total_bytes;
    const plan_mem *worst = &est->mem;
    if (!memory_only)
        every_stage_memory(m, c, l, lc, mm, est);
    else
        est->stage_mem_bytes[est->worst_stage] = worst->total_bytes;
    PLAN__TERM(terms, "memory", "weights", worst->weights_bytes, "bytes",
               "2 B x params held on the stage / TP (/ shard degree with ZeRO-3)",
               "Rajbhandari et al. 2020 (ZeRO), Sec. 3.1");
    PLAN__TERM(terms, "memory", "gradients", worst->grads_bytes, "bytes",
               "2 B (4 B with fp32 gradients) x params held (/ shard degree with ZeRO-2/3)",
               "Rajbhandari et al. 2020, Sec. 3.1");
    PLAN__TERM(terms, "memory", "optimizer", worst->optimizer_bytes, "bytes",
               "12 B x params held (fp32 master, Adam m, v) / shard degree with ZeRO-1+",
               "Rajbhandari et al. 2020, Sec. 3.1");
    PLAN__TERM(terms, "memory", "activations", worst->activations_bytes, "bytes",
               "in-flight microbatches x layers x per-layer stored bytes; per layer "
               "sbh(10 + 24/t + 5as/(ht)), /t with SP, 5as/h term gone with selective recompute or "
               "flash attention, 2sbh/k with full recompute; Q, K, V and the attention output at "
               "their own widths (kv heads, heads x head_dim)",
               "Korthikanti et al. 2022, Table 2; in-flight count Narayanan et al. 2021 Sec. 2.2");
    PLAN__TERM(terms, "memory", "recompute working set", worst->recompute_bytes, "bytes",
               "k layers' full activations for one microbatch while recomputing",
               "Korthikanti et al. 2022, Sec. 5 (checkpoint groups, SMP activation checkpointing)");
    PLAN__TERM(terms, "memory", "logits", worst->logits_bytes, "bytes",
               "s b V / t x (2 B fp16 + 4 B fp32 softmax), last stage", "cross-entropy over vocab");
    PLAN__TERM(terms, "memory", "comm buffers", worst->comm_buffers_bytes, "bytes",
               "per communicator 2 x NCCL_BUFFSIZE(4 MiB) x 16 channels; p2p send/recv buffers",
               "NCCL environment variables documentation (NCCL_BUFFSIZE)");
    PLAN__TERM(terms, "memory", "CUDA context", worst->context_bytes, "bytes",
               "the stack's context_bytes (frameworks.json), else constant 0.8 GiB",
               "estimate: CUDA context + cuBLAS workspace as PyTorch reports it; a stack's own where "
               "measured");
    PLAN__TERM(terms, "memory", "allocator", worst->allocator_bytes, "bytes",
               "alloc_frac x the tensors' memory: what the caching allocator reserves beyond it",
               "c10 CUDA caching allocator; alloc_frac fitted per stack to measured memory");
    PLAN__TERM(terms, "memory", "total (worst stage)", worst->total_bytes, "bytes",
               "sum of the above: what nvidia-smi shows", "");
    PLAN__TERM(terms, "memory", "needed (worst stage)", plan_mem_need_bytes(worst), "bytes",
               "total less the allocator's reserve: a layout fits when this fits (the allocator "
               "frees its cached blocks and retries before it fails)",
               "c10 CUDACachingAllocator, release_cached_blocks");

    if (plan_mem_need_bytes(worst) > est->capacity_bytes) {
        /* the reason is formatted on demand (plan_estimate_reason): most
         * layouts a search rejects for memory are never shown */
        est->oom_excess_bytes = plan_mem_need_bytes(worst) - est->capacity_bytes;
        est->reject = PLAN_REJ_OOM;
    }
}

double plan_mem_need_bytes(const plan_mem *m)
{
    return m->total_bytes - m->allocator_bytes;
}
