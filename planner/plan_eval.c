/*
 * plan_eval.c: the step time of one layout (plan_evaluate), with its memory
 * from plan_eval_mem.c.
 *
 * Per layer: the stored activations of one microbatch, after Korthikanti
 *   et al. 2022, Sec. 4 and Table 2: sbh(34 + 5as/h) bytes without
 *   parallelism; with TP sbh(10 + 24/t + 5as/(ht)); with TP and sequence
 *   parallelism sbh(34 + 5as/h)/t; selective recompute (or a fused
 *   flash-attention kernel, Dao et al. 2022) removes the 5as/h term; full
 *   recompute keeps only each checkpoint's input, 2sbh (/t with SP), every k
 *   layers. The per-token counts are generalised here to GQA (K, V scale
 *   with kv/heads), to a head size given apart from h/a (Q and the attention
 *   output are a x head_dim wide: Gemma 2) and to SwiGLU MLPs by counting
 *   the same stored tensors. A sliding window changes no stored tensor: the
 *   fused kernels keep no scores, the unfused path masks a full s x s
 *   product. A stage's memory from these, its parameters and its
 *   microbatches in flight: plan_eval_mem.c.
 *
 * Time, per step:
 *   Each stage's forward and backward of one microbatch from its layers'
 *   GEMMs, attention core and elementwise kernels (plan_hw.c), TP
 *   all-reduces (two per layer forward, two backward, Shoeybi et al. 2019,
 *   Fig. 4), recompute when the plan recomputes, and point-to-point sends.
 *   A layer's attention core is the mean over the model's layers where some
 *   attend through a sliding window (causal_keys): a stage's share of local
 *   layers differs from its share of layers by at most one layer.
 *   The pipeline: GPipe (m - 1) max_i T_i + sum_i T_i (in waves of
 *   active_microbatches); 1F1B the same, with the per-microbatch period
 *   raised to sum_i T_i / active when fewer than p microbatches may be in
 *   flight; interleaved virtual stages m max T + (sum T - max T)/v
 *   (Narayanan et al. 2021, Sec. 2.2.2: bubble (p-1)/(v m)); ZB-H1 a third
 *   of the 1F1B bubble (Qi et al. 2023, Sec. 3). For uniform stages this is
 *   (m + p - 1) T, the bubble fraction (p - 1)/m of Huang et al. 2019.
 *   DP gradient sync of the first stage (it finishes its backward last) in
 *   buckets, overlapped with its last backward; ZeRO-3 gathers weights each
 *   microbatch. The optimizer step streams its state through HBM.
 */
#include "planner/plan_int.h"
#include "planner/plan_framework.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- named constants, each with its source ---- */

/* Adam step traffic per parameter held: read and write fp32 master, m and v
 * (24 B), read the 2-byte gradient, write the 2-byte model copy, read the
 * gradient again for norm clipping (2 B); counted from apex/PyTorch fused Adam. */
#define ADAM_BYTES_PER_PARAM 30.0
/* fp32: read and write weights, m and v (24 B), read the gradient twice (8 B). */
#define ADAM_BYTES_FP32 32.0
/* FlashAttention-2 (Dao 2023): backward does 5 matmuls to forward's 2
 * (PLAN__ATTN_BWD_OVER_FWD), and a causal mask skips half the score blocks. */
#define FLASH_BWD_OVER_FWD PLAN__ATTN_BWD_OVER_FWD
#define CAUSAL_FRACTION 0.5
/* Elementwise passes per token in units of h-sized (resp. ffn-sized) 2-byte
 * tensors, forward, counted from the layer's op list (Korthikanti et al.
 * 2022, Fig. 2): GPT: two LayerNorms (2+2), two bias-dropout-residual
 * (3.5+3.5 with the 1-byte mask; 3+3 without dropout: read two, write one);
 * bias-GELU over ffn (2). Llama: two RMSNorms (2+2), two residual adds
 * (3+3); SwiGLU reads gate and up, writes (3). Backward moves about twice
 * the forward bytes. */
#define ELEM_H_GPT 11.0
#define ELEM_H_DROPOUT_MASKS 1.0 /* the two 1-byte masks, half a 2-byte pass each */
#define ELEM_F_GPT 2.0
#define ELEM_H_LLAMA 10.0
#define ELEM_F_LLAMA 3.0
#define ELEM_BWD_OVER_FWD 2.0
/* Of ELEM_H_*, the passes two residual adds in the output products'
 * epilogues save: 2 x (3 - 1). Of ELEM_F_GPT, the pass the GELU in the up
 * product's epilogue saves (the backward, ELEM_BWD_OVER_FWD times it: the
 * GELU gradient's kernel reading the product's output and writing its own,
 * replaced by the down product's epilogue reading the pre-activation). */
#define ELEM_H_RESIDUAL_EPILOGUE 4.0
#define ELEM_F_GELU_EPILOGUE 1.0
/* A Llama layer written as separate ATen ops and run eagerly (torchtitan's
 * models/llama/model.py: RMSNorm._norm, apply_rotary_emb, the SwiGLU
 * feed-forward), each op a kernel and a pass over its tensors, in the same
 * 2-byte units. RMSNorm in fp32: x.float() (read 1, write 2), pow (2+2),
 * mean (2), x * rsqrt (2+2), type_as (2+1), * weight (1+1): 18, where one
 * fused kernel reads and writes once (2). The rotary embedding on Q and K
 * (their widths, split by TP): float (1+2), the complex product (2+2),
 * type_as (2+1): 10 (the fused count has none: Megatron-Core fuses it with
 * its neighbours). SwiGLU: silu (1+1), times up (2+1): 5 over ffn, where
 * the fused kernel does 3. torch.compile's TorchInductor fuses each such
 * chain of pointwise ops into one kernel (Ansel et al. 2024, PyTorch 2,
 * Sec. 5): the fused counts. */
#define ELEM_H_EAGER_RMSNORM 18.0
/* Bytes per element an eager RMSNorm keeps beyond the fused kernel's input:
 * its fp32 copy in place of the input (4 - 2 in bf16) and the normalised
 * bf16 tensor the weight multiplies (2); 4 either way (in fp32 the upcast
 * is the input itself and the normalised tensor 4 bytes). */
#define EAGER_NORM_EXTRA_BYTES 4.0
#define ELEM_EAGER_ROPE 10.0
#define ELEM_F_EAGER_SWIGLU 5.0
/* Cross-entropy over fp32 logits where a stack gives no count of its own
 * (loss_bytes_per_logit in frameworks.json: Megatron's 52, PyTorch's 48, the
 * executor's): write fp16 logits, softmax in fp32 and its gradient, about
 * 24 bytes per logit element forward and backward (SMP v1, JAX/XLA's fused
 * loss). */
#define LOSS_BYTES_PER_LOGIT 24.0

#define PLAN__STR(x) #x
#define PLAN__XSTR(x) PLAN__STR(x)

/* Transformer Engine's FP8 linear (NVIDIA Transformer Engine docs, "Using
 * FP8 with Transformer Engine"): the forward casts the bf16 input to FP8
 * (read 2 B, write 1 B per element); the backward casts the output gradient
 * the same way and writes the FP8 transpose of the input for the weight
 * gradient (read 1 B, write 1 B). Bytes per input and per output element. */
#define FP8_CAST_FWD_BYTES 3.0
#define FP8_CAST_BWD_IN_BYTES 2.0
#define FP8_CAST_BWD_OUT_BYTES 3.0

/* One linear layer of T tokens, k inputs and n outputs on this GPU. */
typedef struct lin_cost {
    double fwd_s;             /* the forward GEMM (with its FP8 casts) */
    double gemm_s;            /* the GEMM alone: the weight gradient costs the same */
    double bwd_extra_s;       /* the backward's FP8 casts */
} lin_cost;

static lin_cost linear(const plan_cluster *c, const plan_layout *l, double T, double n, double k)
{
    int fp8 = l->precision == PLAN_PREC_FP8 && c->gpu->fp8_peak_flops > 0;
    lin_cost x;
    x.gemm_s = plan__gemm_prec_s(c, T, n, k, 1, fp8);
    x.fwd_s = x.gemm_s + (fp8 ? plan__mem_s(c, FP8_CAST_FWD_BYTES * T * k) : 0.0);
    x.bwd_extra_s = fp8 ? plan__mem_s(c, FP8_CAST_BWD_IN_BYTES * T * k +
                                             FP8_CAST_BWD_OUT_BYTES * T * n)
                        : 0.0;
    return x;
}

/* Keys a query attends to under the causal mask, averaged over the queries
 * of a sequence and over the model's layers, for the fused kernels, which
 * skip the blocks the mask removes. A global layer: s/2 (the s^2/2 pairs of
 * the causal triangle, CAUSAL_FRACTION). A local layer with a window W < s
 * (each query sees the W keys ending at itself): the band's sW - W^2/2 pairs
 * over s queries, W(1 - W/2s), which is s/2 at W = s; not half of W, since
 * every key of a query's window is already before it (the band lies inside
 * the triangle). FlashAttention-2 takes the window as window_size
 * (flash-attention README, changelog 2.3: local, i.e. sliding window,
 * attention) and skips the blocks outside the band as it skips those above
 * the diagonal. The unfused path (Megatron's scale-mask-softmax,
 * transformers' eager attention) computes every score of the s x s product
 * and masks it: the window saves it nothing (plan__attn_plain_s keeps its
 * full count). */
static double causal_keys(const plan_model *m)
{
    double s = (double)m->seq, w = (double)plan_model_window(m);
    double L = (double)m->layers, local = (double)plan_model_local_layers(m);
    double band = w < s ? w * (1.0 - w / (2.0 * s)) : CAUSAL_FRACTION * s;
    return ((L - local) * CAUSAL_FRACTION * s + local * band) / L;
}

/* A layer's TP and CP communication per microbatch, forward and backward,
 * less what the stack hides behind its GEMMs (col_gemm_s: the two
 * column-parallel linears' weight-gradient GEMMs; ub: what Transformer
 * Engine's overlap leaves, plan_tp_overlap.c) or its attention core
 * (attn_f, attn_b). */
static void comm_costs(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       const plan__span *sp_t, const plan__span *sp_c, double col_gemm_s,
                       double attn_f, double attn_b, const plan__ub_cost *ub, layer_cost *lc)
{
    double T = plan__tokens_per_mb(m, l), t = l->tp, eb = plan__elem_bytes(l), h = (double)m->hidden;
    double d = (double)plan_model_head_dim(m), kv = (double)m->kv_heads;
    double b = l->micro_batch, sq = (double)m->seq / l->cp;
    /* TP: two all-reduces of the layer's [T, h] output forward, two backward
     * (Shoeybi et al. 2019); with sequence parallelism each becomes a
     * reduce-scatter + all-gather pair of the same total traffic
     * (Korthikanti et al. 2022, Sec. 4.2.2). */
    double msg = eb * T * h, sm_frac = plan__comm_sm_frac(c);
    double ar = l->tp > 1 ? plan__allreduce_s(c, sp_t, msg) : 0.0;
    /* With sequence parallelism the backward also gathers each column-
     * parallel linear's input again for its weight gradient (Korthikanti et
     * al. 2022, Sec. 4.2.2): per linear pair, the output gradient's gather,
     * the input's re-gather and the input gradient's reduce-scatter, three
     * halves of an all-reduce where the forward has two. */
    int sp = l->sequence_parallel && l->tp > 1;
    lc->tp_fwd_s = 2.0 * ar;
    lc->tp_bwd_s = (sp ? 3.0 : 2.0) * ar;
    if (ub) {
        /* Transformer Engine's userbuffers: what each method leaves exposed
         * (plan_tp_overlap.c); its pieces and SMs are in the products */
        lc->tp_fwd_s = ub->fwd_exposed_s;
        lc->tp_bwd_s = ub->bwd_exposed_s;
    } else if (l->tp_overlap >= 1) {
        /* Megatron-LM (2022, layers.py LinearWithGradAccumulationAndAsync-
         * Communication): the backward's input-gradient all-reduce (or
         * reduce-scatter with SP) of the two column-parallel linears runs
         * asynchronously beside their weight-gradient GEMMs, and with SP
         * the input's re-gather beside their input-gradient GEMMs (each as
         * long as the forward's); the products lose the SMs its blocks hold
         * meanwhile (plan__comm_sm_frac). A stack with Transformer Engine's
         * overlap has this without sequence parallelism, which that overlap
         * needs (Megatron-Core arguments.py: --tp-comm-overlap asserts
         * --sequence-parallel). */
        double hidden = sp ? fmin(2.0 * ar, 2.0 * col_gemm_s) : fmin(lc->tp_bwd_s, col_gemm_s);
        lc->tp_bwd_s += sm_frac * hidden - hidden;
    }

    /* CP: ring exchange of K and V chunks, overlapped with the attention
     * core (Liu et al. 2023, ring attention); only the excess is exposed. */
    lc->cp_fwd_s = lc->cp_bwd_s = 0.0;
    const plan_framework *fw = plan_framework_get(l->framework);
    if (l->cp > 1 && fw->cp_all_to_all) {
        /* DeepSpeed-Ulysses (Jacobs et al. 2023, Sec. 3): Q, K and V go
         * from sequence-split to head-split by an all-to-all each before
         * the local attention, its output back by one after; the backward
         * moves their gradients the same way; on the critical path (the
         * attention waits for its heads) */
        double qb = eb * b * sq * (double)plan_model_attn_width(m) / t;
        double kvb = eb * b * sq * kv * d / t;
        double x = 2.0 * plan__alltoall_s(c, sp_c, qb) + 2.0 * plan__alltoall_s(c, sp_c, kvb);
        lc->cp_fwd_s = x;
        lc->cp_bwd_s = x;
    } else if (l->cp > 1) {
        double kv_bytes = eb * 2.0 * b * sq * kv * d / t * l->cp;
        double x = plan__allgather_s(c, sp_c, kv_bytes);
        /* what the attention core hides still takes its SMs */
        lc->cp_fwd_s = fmax(0.0, x - attn_f) + sm_frac * fmin(x, attn_f);
        lc->cp_bwd_s = fmax(0.0, 2.0 * x - attn_b) + sm_frac * fmin(2.0 * x, attn_b);
    }
}

static void layer_costs(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                        const plan__span *sp_t, const plan__span *sp_c, layer_cost *lc)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    double T = plan__tokens_per_mb(m, l), t = l->tp, eb = plan__elem_bytes(l);
    double h = (double)m->hidden, f = (double)m->ffn, a = (double)m->heads;
    double d = (double)plan_model_head_dim(m), kv = (double)m->kv_heads;
    double q = (double)plan_model_attn_width(m); /* a d: h unless the head size is apart */
    double b = l->micro_batch, sq = (double)m->seq / l->cp, sk = (double)m->seq;
    int gated = plan_model_gated(m), llama = m->arch == PLAN_ARCH_LLAMA;
    double th = l->sequence_parallel ? t : 1.0; /* divisor of the replicated parts */
    /* dropout as the model has it, unless the stack trains without any */
    int drop = plan_model_dropout(m) && !fw->no_dropout;

    /* GEMMs: QKV and MLP up (gate + up when gated) are column-parallel, the
     * output projection and MLP down row-parallel (Shoeybi et al. 2019). */
    lin_cost qkv = linear(c, l, T, (q + 2 * kv * d) / t, h), o = linear(c, l, T, h, q / t);
    lin_cost up = linear(c, l, T, (gated ? 2 : 1) * f / t, h), down = linear(c, l, T, h, f / t);
    double gemm = qkv.fwd_s + o.fwd_s + up.fwd_s + down.fwd_s;
    double gemm_only = qkv.gemm_s + o.gemm_s + up.gemm_s + down.gemm_s;
    /* the backward beyond its products: FP8 casts, the overlap's costs */
    double bwd_x = qkv.bwd_extra_s + o.bwd_extra_s + up.bwd_extra_s + down.bwd_extra_s;
    /* Transformer Engine's userbuffers need sequence parallelism (Megatron-
     * Core arguments.py: --tp-comm-overlap asserts --sequence-parallel):
     * their pieces and SMs go into the products, what they leave exposed
     * into the TP communication (comm_costs) */
    plan__ub_cost ub_c = {0}, *ub = NULL;
    if (l->tp_overlap >= 2 && l->tp > 1 && l->sequence_parallel) {
        plan__ub_layer_in in = {
            .tokens = T, .tp = t, .hidden = h,
            .col_n = {(q + 2 * kv * d) / t, (gated ? 2 : 1) * f / t},
            .row_k = {q / t, f / t},
            .elem_bytes = eb,
            .fp8 = l->precision == PLAN_PREC_FP8 && c->gpu->fp8_peak_flops > 0,
        };
        plan__ub_layer(c, fw, sp_t, &in, &ub_c);
        ub = &ub_c;
        gemm += ub_c.fwd_gemm_s;
        bwd_x += ub_c.bwd_gemm_s;
    }

    /* Attention core over a/t heads, sq queries against sk keys. */
    double ah = a / t, attn_f, attn_b;
    if (l->flash_attention) {
        /* the layout's fused generation (a fused kernel without one named
         * is FlashAttention-2, the executor's and the stacks' option) */
        plan_attn gen = l->attention != PLAN_ATTN_UNFUSED ? l->attention : PLAN_ATTN_FLASH2;
        double flops = 4.0 * b * ah * sq * causal_keys(m) * d, eff_f, eff_b;
        plan__attn_eff(c, gen, &eff_f, &eff_b);
        attn_f = flops / (c->gpu->peak_flops * eff_f);
        attn_b = FLASH_BWD_OVER_FWD * flops / (c->gpu->peak_flops * eff_b);
        /* a device whose entry measured its kernel's time per score and per
         * score row beyond the products (smdplan bench gpu: the softmax on
         * the special function units, a row's loads and stores) */
        const plan_gpu *g = c->gpu;
        double rows = b * ah * sq, scores = rows * causal_keys(m);
        attn_f += scores * g->flash_score_fwd_s + rows * g->flash_row_fwd_s;
        attn_b += scores * g->flash_score_bwd_s + rows * g->flash_row_bwd_s;
    } else {
        plan__attn_plain_s(c, b * ah, sq, sk, d, drop, &attn_f, &attn_b);
    }

    double eh = llama ? ELEM_H_LLAMA
                      : ELEM_H_GPT - (drop ? 0.0 : ELEM_H_DROPOUT_MASKS);
    double ef = gated ? ELEM_F_LLAMA : ELEM_F_GPT;
    /* the eager ops of a stack whose Llama layer is written in ATen ops,
     * unless compiled (or, on a stack whose tensor parallelism swaps in
     * Transformer Engine's layers, split by TP): the two norms and SwiGLU
     * unfused, and the rotary embedding on Q and K (its own term, over
     * their widths) */
    int eager = fw->unfused_pointwise && !l->compiled && !l->fused_pointwise &&
                !(fw->fused_with_tp && l->tp > 1) && llama && gated;
    double rope_w = 0.0;
    if (eager) {
        eh += 2.0 * (ELEM_H_EAGER_RMSNORM - 2.0);
        ef = ELEM_F_EAGER_SWIGLU;
        rope_w = ELEM_EAGER_ROPE * (q + kv * d) / t;
    }
    /* residual adds in the output products' epilogues: each reads the
     * residual there (1 pass) instead of a separate add reading the
     * product's output and the residual and writing the sum (3); the
     * backward's passes are the unfused forward's (ELEM_BWD_OVER_FWD) */
    double eh_f = eh - (fw->residual_epilogue && t == 1 && !l->sequence_parallel
                            ? ELEM_H_RESIDUAL_EPILOGUE
                            : 0.0);
    /* the GELU in the MLP's products' epilogues: forward, the activation
     * written beside the pre-activation the product writes anyway (1 pass
     * of 2), backward the gradient's separate kernel gone (2 of 4), and no
     * activation kernel for a compute floor to bound */
    int gelu_ep = fw->gelu_epilogue && !gated;
    double ef_x = ef - (gelu_ep ? ELEM_F_GELU_EPILOGUE : 0.0);
    double elem_f = plan__mem_s(c, eb * T * (eh_f * h / th + ef_x * f / t + rope_w));
    double elem_b =
        ELEM_BWD_OVER_FWD * plan__mem_s(c, eb * T * (eh * h / th + ef_x * f / t + rope_w));
    /* The MLP activation's kernels stream ef passes of the ffn-sized
     * tensor; a device with a compute floor for them (a CPU: tanh or exp per
     * element, catalog act_*_s / glu_*_s measured by smdplan bench) takes
     * the larger of moving and computing them (roofline, Williams et al.
     * 2009); the other elementwise kernels stay memory-bound. */
    double act_fs = gated ? c->gpu->glu_fwd_s : c->gpu->act_fwd_s;
    double act_bs = gated ? c->gpu->glu_bwd_s : c->gpu->act_bwd_s;
    if ((act_fs > 0 || act_bs > 0) && !gelu_ep) {
        double act_n = T * f / t, mem_h = plan__mem_s(c, eb * T * (eh * h / th + rope_w));
        double mem_a = plan__mem_s(c, eb * T * ef * f / t);
        elem_f = plan__mem_s(c, eb * T * (eh_f * h / th + rope_w)) + fmax(mem_a, act_n * act_fs);
        elem_b = ELEM_BWD_OVER_FWD * mem_h + fmax(ELEM_BWD_OVER_FWD * mem_a, act_n * act_bs);
    }

    lc->gemm_fwd_s = gemm_only;
    lc->attn_fwd_s = attn_f;
    lc->fwd_comp_s = gemm + attn_f + elem_f;
    lc->bwd_comp_s = 2.0 * gemm_only + bwd_x + attn_b + elem_b;
    double gpu_f = lc->fwd_comp_s, gpu_b = lc->bwd_comp_s;
    /* The host's share: added to every kernel with blocking launches, else
     * a floor the GPU cannot beat when its kernels are shorter than it.
     * Compiled stacks (XLA) launch a whole step and pay none per kernel. */
    int fused_f = l->flash_attention ? PLAN__KERNELS_ATTN_FWD - 1 : 0;
    int fused_b = l->flash_attention ? PLAN__KERNELS_ATTN_BWD - 1 : 0;
    double host_f = fw->host_op_s * (PLAN__KERNELS_FWD - fused_f);
    double host_b = fw->host_op_s * (PLAN__KERNELS_BWD - fused_b);
    if (l->launch_blocking) {
        lc->fwd_comp_s += host_f;
        lc->bwd_comp_s += host_b;
    } else {
        lc->fwd_comp_s = fmax(lc->fwd_comp_s, host_f);
        lc->bwd_comp_s = fmax(lc->bwd_comp_s, host_b);
    }
    double host_xf = lc->fwd_comp_s - gpu_f, host_xb = lc->bwd_comp_s - gpu_b;
    lc->gemm_s = gemm + 2.0 * gemm_only + bwd_x;
    lc->attn_s = attn_f + attn_b;
    lc->host_s = host_xf + host_xb;

    comm_costs(m, c, l, sp_t, sp_c, qkv.gemm_s + up.gemm_s, attn_f, attn_b, ub, lc);

    /* Stored activations of one token, bytes, tensor by tensor as autograd
     * keeps them (Korthikanti et al. 2022, Sec. 4.1 counts the same
     * tensors for GPT: sbh(34 + 5as/h)):
     *   replicated across TP ranks unless sequence parallel (/th): the two
     *   norms' inputs and the QKV and fc1 inputs (2h each), and with dropout
     *   the two residual dropout masks (h, 1 byte each);
     *   split by TP (/t): Q, K, V (q + 2 kv d, q = a d: h unless the head
     *   size is apart), the attention output that is the projection's input
     *   (q), the fc1 output (f, or gate and up, 2f,
     *   when gated) and the fc2 input (f), 2 bytes each;
     *   unfused attention also keeps the softmax output (2 a s) and with
     *   dropout its mask and output (a s + 2 a s) per token (the 5as term);
     *   a fused kernel keeps none of the s x s scores (Dao et al. 2022).
     * FP8 linears keep their inputs cast to FP8 (1 byte: QKV, fc1, fc2
     * inputs; Transformer Engine saves the FP8 copy for the weight
     * gradient). fp32 doubles every 2-byte tensor. */
    double es = eb / PLAN_BYTES_HALF, lin = l->precision == PLAN_PREC_FP8 ? 1.0 : eb;
    double repl = 2.0 * eb * h + 2.0 * lin * h + (drop ? 2.0 * h : 0.0);
    double div = eb * (q + 2.0 * kv * d) + eb * q + eb * (gated ? 2.0 : 1.0) * f + lin * f;
    /* The same layer run eagerly as separate ATen ops (eager, above) keeps
     * what each op's backward reads (PyTorch's derivatives.yaml): RMSNorm's
     * fp32 upcast of its input (pow and the multiply by rsqrt save it, 4
     * bytes an element, where the fused kernel keeps the input itself) and
     * the normalised tensor the weight multiplies, 4h more a norm; the
     * attention output SDPA keeps besides the contiguous copy the output
     * projection reads (q); SiLU's output, which the product with the up
     * projection keeps besides SiLU's input (f). TorchInductor's partitioner
     * recomputes such pointwise outputs rather than keep them (Ansel et al.
     * 2024, Sec. 5): compiled, the fused count. */
    if (eager) {
        repl += 2.0 * EAGER_NORM_EXTRA_BYTES * h;
        div += eb * q + eb * f;
    }
    double score = es * (drop ? 5.0 : 2.0) * ah * sk; /* per query token, this rank's heads */
    double per_tok = repl / th + div / t;
    lc->act_full_bytes = T * (per_tok + (l->flash_attention ? 0.0 : score));
    lc->act_input_bytes = T * h * eb / th;
    lc->act_tok_bytes = T * per_tok;
    lc->gemm_fwd_all_s = gemm;
    lc->lin_fwd_s[0] = qkv.fwd_s;
    lc->lin_fwd_s[1] = o.fwd_s;
    lc->lin_fwd_s[2] = up.fwd_s;
    lc->lin_fwd_s[3] = down.fwd_s;
    lc->elem_fwd_s = elem_f;
    lc->save_bytes[0] = T * eb * (q + 2.0 * kv * d) / t;
    lc->save_bytes[1] = T * eb * h / th;
    lc->save_bytes[2] = T * eb * (gated ? 2.0 : 1.0) * f / t;
    lc->save_bytes[3] = T * eb * h / th;
    lc->save_bytes[4] = T * eb * q / t;
    lc->q_share = q / (q + 2.0 * kv * d);
    lc->up_products = gated ? 2 : 1;
    lc->host_fwd_s = host_xf;
}

/* Full recompute that keeps some products' outputs (MaxText's remat
 * policies, plan_layout.recompute_saved) or re-runs only what the backward
 * reads (remat_dce: jax.checkpoint's recompute is dead-code eliminated),
 * or torchtitan's op-level selective policy (PLAN_SAVE_ALT_MM: every other
 * product in forward order kept).
 * The backward reads the Q, K and V projections (the attention's
 * derivative), the attention output (the output projection's weight
 * gradient), the output projection's (the second norm's input is the
 * residual sum), the MLP's input products (the activation's derivative);
 * the MLP's output product only feeds the residual sum. The recompute runs
 * the products whose outputs were not kept, the attention core unless its
 * output was kept, and every elementwise kernel (the norms and the
 * activation are cheaper to redo than to keep, none of the policies keeps
 * them); the TP collectives and the host's time by the share of the
 * forward they belong to. Each layer stores its input and what was kept.
 * r: the share of the layers recomputed (the block method). */
static void recompute_part(const plan_layout *l, const plan_framework *fw, double r, int sv,
                           layer_cost *lc)
{
    /* the four linears' bits, in lin_fwd_s' and save_bytes' order (the
     * attention output's, save_bytes[4], is PLAN_SAVE_CONTEXT) */
    static const int bit[4] = {PLAN_SAVE_QKV, PLAN_SAVE_OUT, PLAN_SAVE_MLPWI, PLAN_SAVE_MLPWO};
    double lin_all = 0.0, lin_re = 0.0, kept = 0.0;
    if (sv & PLAN_SAVE_CONTEXT)
        kept += lc->save_bytes[4];
    if (sv & PLAN_SAVE_ALT_MM) {
        /* the layer's products one by one, in forward order: Q, K, V by
         * their widths, the output projection, the MLP's input products
         * (gate and up halves when gated), its output product; the 1st,
         * 3rd, ... kept */
        double qs = lc->q_share, ks = 0.5 * (1.0 - qs);
        int nu = lc->up_products;
        double part[7][2];
        int n = 0;
        double qkv_share[3] = {qs, ks, ks};
        for (int i = 0; i < 3; i++, n++) {
            part[n][0] = qkv_share[i] * lc->lin_fwd_s[0];
            part[n][1] = qkv_share[i] * lc->save_bytes[0];
        }
        part[n][0] = lc->lin_fwd_s[1], part[n][1] = lc->save_bytes[1], n++;
        for (int i = 0; i < nu; i++, n++) {
            part[n][0] = lc->lin_fwd_s[2] / nu;
            part[n][1] = lc->save_bytes[2] / nu;
        }
        part[n][0] = lc->lin_fwd_s[3], part[n][1] = lc->save_bytes[3], n++;
        for (int i = 0; i < n; i++) {
            lin_all += part[i][0];
            if (i % 2 == 0)
                kept += part[i][1];
            else
                lin_re += part[i][0];
        }
    } else {
        for (int i = 0; i < 4; i++)
            if (sv & bit[i])
                kept += lc->save_bytes[i];
        for (int i = 0; i < 4; i++) {
            lin_all += lc->lin_fwd_s[i];
            if (!(sv & bit[i]) && (i < 3 || !fw->remat_dce)) /* MLP out: not read back */
                lin_re += lc->lin_fwd_s[i];
        }
    }
    double g = lin_all > 0 ? lin_re / lin_all : 1.0; /* share of the forward's products */
    double gemm = g * lc->gemm_fwd_all_s;
    double attn = (sv & PLAN_SAVE_CONTEXT) ? 0.0 : lc->attn_fwd_s;
    double gpu_f = lc->fwd_comp_s - lc->host_fwd_s;
    double gpu_re = gemm + attn + lc->elem_fwd_s;
    double host = gpu_f > 0 ? lc->host_fwd_s * fmin(1.0, gpu_re / gpu_f) : 0.0;
    double stored = fmin(lc->act_full_bytes, lc->act_input_bytes / l->recompute_group + kept);
    lc->act_stored_bytes = r * stored + (1.0 - r) * lc->act_full_bytes;
    lc->recomp_comp_s = r * (gpu_re + host);
    lc->gemm_s += r * gemm;
    lc->attn_s += r * attn;
    lc->host_s += r * host;
    lc->tp_recomp_s = r * g * lc->tp_fwd_s;
}

/* What the layout's recompute stores and adds to the base costs of
 * layer_costs (in place; once per layout). */
static void layer_recompute(const plan_model *m, const plan_layout *l, layer_cost *lc)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    lc->recomp_comp_s = 0.0;
    lc->tp_recomp_s = 0.0;
    switch (l->recompute) {
    case PLAN_RECOMP_NONE:
        lc->act_stored_bytes = lc->act_full_bytes;
        break;
    case PLAN_RECOMP_SELECTIVE:
        if (fw->selective_ops) {
            /* torchtitan's op-level policy: the attention's output and every
             * other product's kept, the rest of the layer recomputed */
            recompute_part(l, fw, 1.0, PLAN_SAVE_ALT_MM | PLAN_SAVE_CONTEXT, lc);
            break;
        }
        lc->act_stored_bytes = lc->act_tok_bytes; /* the score tensors are recomputed */
        if (!l->flash_attention) { /* the fused kernel already recomputes */
            lc->recomp_comp_s = lc->attn_fwd_s;
            lc->attn_s += lc->attn_fwd_s;
        }
        break;
    case PLAN_RECOMP_FULL:
    default: {
        /* every layer (r = 1), or with Megatron's block method a share r
         * of them, the others keeping all they store without recompute */
        double r = l->recompute == PLAN_RECOMP_FULL ? plan_layout_recompute_share(m, l) : 1.0;
        if (l->recompute_saved || fw->remat_dce) {
            recompute_part(l, fw, r, l->recompute_saved, lc);
            break;
        }
        lc->act_stored_bytes =
            r * (lc->act_input_bytes / l->recompute_group) + (1.0 - r) * lc->act_full_bytes;
        lc->recomp_comp_s = r * lc->fwd_comp_s;
        lc->gemm_s += r * lc->gemm_fwd_all_s;
        lc->attn_s += r * lc->attn_fwd_s;
        lc->host_s += r * lc->host_fwd_s;
        lc->tp_recomp_s = r * lc->tp_fwd_s; /* the recomputed forward's collectives */
        /* and DeepSpeed-Ulysses' all-to-alls, which the checkpointed layer
         * runs again */
        if (l->cp > 1 && fw->cp_all_to_all)
            lc->cp_bwd_s += r * lc->cp_fwd_s;
        break;
    }
    }
}

/* Layers per pipeline rank, balanced by cost as SMP's automatic partition
 * and Megatron-DeepSpeed's embedding-aware partition do (BLOOM tr11 used
 * "type:transformer|embedding"): the LM head weighs head_layers layers on
 * the last stage, so that stage takes round((L + head_layers)/p - head_layers)
 * layers (at least one), and the rest are split evenly, the remainder going
 * to the middle stages first. */
static void split_layers(int64_t L, int p, double head_layers, int *out)
{
    if (p == 1) {
        out[0] = (int)L;
        return;
    }
    double per_stage = ((double)L + head_layers) / p;
    int64_t last = llround(per_stage - head_layers);
    if (last < 1)
        last = 1;
    if (last > L - (p - 1))
        last = L - (p - 1);
    out[p - 1] = (int)last;
    int64_t rest = L - last;
    int n = p - 1, base = (int)(rest / n), rem = (int)(rest % n);
    for (int i = 0; i < n; i++)
        out[i] = base;
    /* Walk outward from the middle of the first n stages: n/2, n/2 - 1,
     * n/2 + 1, ...; stage 0 (with the embedding) comes last. */
    int mid = n / 2;
    for (int k = 0; rem > 0 && k < 2 * n; k++) {
        int off = (k + 1) / 2, i = (k % 2) ? mid - off : mid + off;
        if (i < 0 || i >= n)
            continue;
        out[i]++;
        rem--;
    }
}

/* The busiest stage of a split, in layers' forward work: its layers, and
 * on the last stage the LM head's head_layers. The step waits for it. */
static double split_cost(const int *out, int p, double head_layers)
{
    double worst = 0;
    for (int i = 0; i < p; i++) {
        double c = out[i] + (i == p - 1 ? head_layers : 0.0);
        if (c > worst)
            worst = c;
    }
    return worst;
}

/* Layers of every pipeline rank of l: the one split plan_evaluate and
 * plan_stage_mem share. Even (what every stack does by default: Megatron
 * requires --num-layers divisible by the pipeline size unless the first or
 * last stage is set apart, torchtitan and DeepSpeed split uniformly), the
 * remainder of L / p going to the stages before the last, unless the
 * cost-balanced split (split_layers) makes the busiest stage lighter: then
 * that, and the emitters say how each stack expresses it. The balanced
 * split's rounding can make it heavier (48 layers over 8 stages with a
 * head of 0.57 layers: 6,6,6,7,6,6,6,5, a stage of 7 against even's 6 +
 * 0.57), so it is taken only where it wins. */
static void stage_split(const plan_model *m, const plan_layout *l, int *out)
{
    /* the LM head's forward in units of one layer's forward (FLOP ratio) */
    double head_layers = plan_model_head_fwd_flops_per_token(m) / plan_model_layer_fwd_flops_per_token(m);
    int p = l->pp, emb, loss;
    if (plan_split_embedding_loss(m, l, &emb, &loss)) {
        /* the stack's own uneven split: the layer places a stage holds,
         * less the embedding's on the first and the loss's on the last */
        int per = (int)((m->layers + emb + loss) / p);
        for (int i = 0; i < p; i++)
            out[i] = per - (i == 0 ? emb : 0) - (i == p - 1 ? loss : 0);
        return;
    }
    split_layers(m->layers, p, head_layers, out);
    if (p == 1)
        return;
    /* even: the last stage floor(L / p), the rest spread over the others,
     * the first ones taking one more where it does not divide */
    int even[PLAN_PP_MAX];
    int64_t base = m->layers / p, rest = m->layers - base;
    int n = p - 1, b = (int)(rest / n), rem = (int)(rest % n);
    for (int i = 0; i < n; i++)
        even[i] = b + (i < rem);
    even[p - 1] = (int)base;
    /* a stack whose stages hold equal layers (virtual_even: Megatron-LM,
     * beside the lighter ends below) takes no other split */
    const plan_framework *fw = plan_framework_get(l->framework);
    if ((fw && fw->virtual_even) ||
        split_cost(out, p, head_layers) >= split_cost(even, p, head_layers))
        memcpy(out, even, (size_t)p * sizeof *out);
    /* Lighter ends, where the stack can run them (pipeline_ends): the
     * first and the last stage f layers each, the middle ones the same
     * larger count (Megatron-Core's --decoder-first/last-pipeline-num-
     * layers; Llama 3 405B ran 126 layers over 16 stages so, 7, 8 x 14, 7:
     * Dubey et al. 2024, Sec. 3.3.2). Taken where its busiest stage is no
     * heavier and its first stage lighter: stage 0 holds the most
     * microbatches' activations in flight (p of them under 1F1B), so a
     * layer fewer there is the most memory a split can save. */
    if (p > 2 && fw && fw->pipeline_ends) {
        double best = split_cost(out, p, head_layers);
        for (int64_t f = m->layers / p; f >= 1 && f < out[0]; f--) {
            int64_t mid = m->layers - 2 * f;
            if (mid % (p - 2) != 0 || mid / (p - 2) < f)
                continue;
            int ends[PLAN_PP_MAX];
            for (int i = 0; i < p; i++)
                ends[i] = (int)(i == 0 || i == p - 1 ? f : mid / (p - 2));
            if (split_cost(ends, p, head_layers) <= best) {
                memcpy(out, ends, (size_t)p * sizeof *out);
                break;
            }
        }
    }
}

/* Megatron-Core 0.11's uneven virtual split (account_for_embedding_in_
 * pipeline_split, account_for_loss_in_pipeline_split: CHANGELOG.md 0.11.0,
 * "Uneven virtual pipeline parallel split support in first and last PP
 * stage"): the embedding and the loss each take one layer's place, the
 * layers plus those places split evenly over the pp x v chunks, so the
 * first chunk holds one transformer layer fewer with the embedding and the
 * last one fewer with the loss. Taken where the layers alone do not split
 * evenly: both places where that divides, else the loss's alone (the
 * heavier end, with the LM head); every chunk keeps a transformer layer. */
int plan_split_embedding_loss(const plan_model *m, const plan_layout *l, int *embedding,
                              int *loss)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    int64_t chunks = (int64_t)l->pp * (l->virtual_stages > 1 ? l->virtual_stages : 1);
    int both = -1; /* none */
    if (fw && fw->virtual_even && fw->pipeline_embedding_loss && l->pp >= 2 &&
        m->layers % chunks != 0)
        for (int b = 1; b >= 0 && both < 0; b--)
            if ((m->layers + 1 + b) % chunks == 0 && (m->layers + 1 + b) / chunks >= 2)
                both = b;
    if (embedding)
        *embedding = both > 0;
    if (loss)
        *loss = both >= 0;
    return both >= 0;
}

void plan_stage_layers(const plan_model *m, const plan_layout *l, int *out)
{
    stage_split(m, l, out);
}

static plan_reject reject(plan_estimate *est, plan_reject r, const char *fmt, long a, long b)
{
    est->reject = r;
    snprintf(est->reason, sizeof est->reason, fmt, a, b);
    return r;
}

/* Structural checks of the virtual stages: the pipeline's chunks against
 * the layers, and against the microbatches; the reason in words only with
 * why (a search counts these rejections, and shows none of them). */
static plan_reject check_layers(const plan_model *m, const plan_layout *l, plan_estimate *est,
                                int why)
{
    int64_t chunks = (int64_t)l->pp * l->virtual_stages;
    /* a stack whose chunks hold equal whole numbers of layers (virtual_even:
     * Megatron-LM's interleaved schedule) */
    const plan_framework *fw = plan_framework_get(l->framework);
    int unequal = l->virtual_stages > 1 && fw && fw->virtual_even && m->layers % chunks != 0 &&
                  !plan_split_embedding_loss(m, l, NULL, NULL);
    if (chunks <= m->layers && !unequal)
        return PLAN_OK;
    if (!why)
        return est->reject = PLAN_REJ_LAYERS;
    if (unequal)
        return reject(est, PLAN_REJ_LAYERS, "%ld layers not a multiple of pp x virtual stages "
                      "(%ld): the stack's model chunks hold equal numbers of layers",
                      (long)m->layers, (long)chunks);
    return reject(est, PLAN_REJ_LAYERS, "%ld pipeline chunks for %ld layers", (long)chunks,
                  (long)m->layers);
}

static plan_reject check_virtual(const plan_layout *l, plan_estimate *est, int why)
{
    if (!(l->schedule == PLAN_SCHED_VIRTUAL && l->virtual_stages > 1 && l->pp > 1 &&
          l->microbatches % l->pp != 0))
        return PLAN_OK;
    if (!why)
        return est->reject = PLAN_REJ_VIRTUAL;
    return reject(est, PLAN_REJ_VIRTUAL, "%ld microbatches not a multiple of PP %ld",
                  (long)l->microbatches, l->pp);
}

/* A split a stack with equal stages can run (virtual_even): Megatron-LM
 * asserts the layers a multiple of the pipeline size (megatron/model/
 * transformer.py, _get_num_layers), Megatron-Core lets the first and last
 * stages differ (pipeline_ends), and under the interleaved schedule every
 * stage's layers must divide into its v chunks ("each stage's layer count
 * must still be divisible by the VPP size", Megatron-LM MR 2795). */
static plan_reject check_megatron_split(const plan_model *m, const plan_layout *l,
                                        plan_estimate *est, int why)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    int p = l->pp, v = l->virtual_stages > 1 ? l->virtual_stages : 1;
    if (!fw || !fw->virtual_even || p < 2 || plan_split_embedding_loss(m, l, NULL, NULL))
        return PLAN_OK; /* (the stack's own uneven split: stage_split) */
    const int *n = est->stage_layers;
    int ok = 1, ref = p > 2 ? n[1] : n[0];
    for (int i = 0; i < p && ok; i++) {
        int end = i == 0 || i == p - 1;
        ok = (end && fw->pipeline_ends ? 1 : n[i] == ref) && n[i] % v == 0;
    }
    if (ok)
        return PLAN_OK;
    if (!why)
        return est->reject = PLAN_REJ_LAYERS;
    return reject(est, PLAN_REJ_LAYERS, "the stages' layers (first %ld) do not split into the "
                  "stack's equal stages of %ld chunks each", (long)n[0], (long)v);
}

/* The checks of check_layout that depend on the schedule's chunks alone
 * (what layouts sharing a memo differ in), in its order. */
static plan_reject check_chunks(const plan_model *m, const plan_layout *l, plan_estimate *est,
                                int why)
{
    plan_reject r = check_layers(m, l, est, why);
    return r != PLAN_OK ? r : check_virtual(l, est, why);
}

/* Structural checks that need no arithmetic of cost. */
static plan_reject check_layout(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                                plan_estimate *est)
{
    if ((long)l->tp * l->pp * l->dp * l->cp != c->gpus)
        return reject(est, PLAN_REJ_GPUS, "tp x pp x dp x cp = %ld, cluster has %ld GPUs",
                      (long)l->tp * l->pp * l->dp * l->cp, c->gpus);
    if (m->heads % l->tp != 0 || (m->kv_heads % l->tp != 0 && l->tp % m->kv_heads != 0))
        return reject(est, PLAN_REJ_HEADS, "TP %ld does not divide %ld heads", l->tp,
                      (long)m->heads);
    if (check_layers(m, l, est, 1) != PLAN_OK)
        return est->reject;
    if (l->cp > 1 && plan_framework_get(l->framework)->cp_all_to_all) {
        /* DeepSpeed-Ulysses splits each TP rank's heads and KV heads over
         * the group (DistributedAttention scatters the head dimension) */
        long ah = m->heads / l->tp, kvh = m->kv_heads >= l->tp ? m->kv_heads / l->tp : 1;
        if (ah % l->cp != 0 || kvh % l->cp != 0)
            return reject(est, PLAN_REJ_HEADS, "DeepSpeed-Ulysses %ld does not divide a TP "
                          "rank's %ld heads (or KV heads)", (long)l->cp, ah % l->cp ? ah : kvh);
    }
    if (m->seq % l->cp != 0 || (l->sequence_parallel && (m->seq / l->cp) % l->tp != 0))
        return reject(est, PLAN_REJ_SEQ, "sequence %ld not divisible by cp %ld (x tp with SP)",
                      (long)m->seq, l->cp);
    if (l->global_batch % ((int64_t)l->dp * l->micro_batch) != 0 ||
        l->global_batch / ((int64_t)l->dp * l->micro_batch) != l->microbatches)
        return reject(est, PLAN_REJ_BATCH, "global batch %ld is not dp x micro-batch x %ld",
                      (long)l->global_batch, (long)l->microbatches);
    return check_virtual(l, est, 1);
}

/* est zeroed for a new evaluation. A memory-only one (the search's
 * pruning) leaves its per-stage arrays and its reason past an empty first
 * character as they were: plan__evaluate sets the stage_layers it reads and
 * the worst stage's total, the search shows no such reason and evaluates
 * in full every layout it keeps (clearing the 4 KiB of a whole estimate
 * per layout was 7 % of the search's time). */
static void est_clear(plan_estimate *est, int memory_only)
{
    if (!memory_only) {
        memset(est, 0, sizeof *est);
        return;
    }
    est->reject = PLAN_OK;
    est->reason[0] = '\0';
    memset(&est->mem, 0, offsetof(plan_estimate, stage_layers) - offsetof(plan_estimate, mem));
    /* the tail, field by field: a memset of it is a rep stos whose start-up
     * cost the search pays on every layout */
    est->time = (plan_time){0};
    est->stage_fwd_s = est->stage_bwd_s = 0;
    est->tokens_per_step = est->tokens_per_s = 0;
    est->model_flops_per_step = est->hw_flops_per_step = 0;
    est->mfu = est->hfu = 0;
    est->cost_per_hour = est->cost_per_mtokens = 0;
}
_Static_assert(sizeof(plan_estimate) - offsetof(plan_estimate, time) ==
                   sizeof(plan_time) + 10 * sizeof(double),
               "est_clear zeroes each field after time by name: a field added there needs it");

static int check_degrees(const plan_layout *l, st_err *err)
{
    if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->micro_batch < 1 ||
        l->microbatches < 1 || l->active_microbatches < 1 || l->virtual_stages < 1 ||
        l->recompute_group < 1 || l->recompute_layers < 0 || l->global_batch < 1)
        return ST_RAISE(err, ST_EINVAL,
                        "layout degrees, micro-batch, microbatches, active microbatches, virtual "
                        "stages and recompute group must be at least 1, recomputed layers at "
                        "least 0");
    if (l->pp > PLAN_PP_MAX)
        return ST_RAISE(err, ST_EINVAL, "pp %d: at most %d pipeline stages", l->pp, PLAN_PP_MAX);
    if ((unsigned)l->schedule >= PLAN_SCHED__COUNT || (unsigned)l->recompute >= PLAN_RECOMP__COUNT ||
        (unsigned)l->sharding >= PLAN_SHARD__COUNT)
        return ST_RAISE(err, ST_EINVAL, "layout has an unknown schedule, recompute or sharding");
    return ST_OK;
}

/* The LM head's GEMM and the cross-entropy over the vocabulary for one
 * microbatch on the last stage (the loss traffic split a third forward, two
 * thirds backward). */
static void head_times(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       double *fwd_s, double *bwd_s, double *gemm_s)
{
    double T = plan__tokens_per_mb(m, l), h = (double)m->hidden, V = (double)m->vocab, t = l->tp;
    double g = plan__gemm_s(c, T, V / t, h, 1);
    const plan_framework *fw = plan_framework_get(l->framework);
    double lb = fw->loss_bytes_per_logit > 0 ? fw->loss_bytes_per_logit : LOSS_BYTES_PER_LOGIT;
    double loss = plan__mem_s(c, lb * T * V / t);
    *fwd_s = g + loss / 3.0;
    *bwd_s = 2.0 * g + 2.0 * loss / 3.0;
    *gemm_s = 3.0 * g;
}

/* One microbatch through a whole pipeline rank (all its chunks). */
typedef struct stage_time {
    double comp;              /* forward + backward (+ recompute) compute */
    double gemm, attn, elem, host; /* comp by kind (layer_cost) */
    double tp, cp;            /* exposed TP and CP communication */
    double zero;              /* exposed sharded-data-parallel collectives */
    double f;                 /* forward: compute + TP + CP + sharding */
    double b;                 /* backward with recompute: compute + TP + CP + sharding */
    double w;                 /* the weight-gradient GEMMs inside b (zero bubble's W) */
} stage_time;

/* Sharded data parallelism's collectives during one microbatch of a stage
 * (ZeRO-3 / FSDP FULL_SHARD, FSDP SHARD_GRAD_OP, and gradients reduced every
 * microbatch). Per layer the forward all-gathers the layer's weights over the
 * shard group, the backward all-gathers them again (parameters sharded at
 * rest), once more for the recomputed forward where the stack re-gathers,
 * and reduce-scatters the layer's gradients (Rajbhandari et al. 2020, Sec.
 * 5; PyTorch FSDP docs). With prefetch each layer's collectives run behind
 * the neighbouring layer's compute (Zhao et al. 2023, PyTorch FSDP, Sec.
 * 3.3: backward prefetch), so a layer exposes only what its compute does not
 * cover, plus the first gather of the forward and the last reduce-scatter of
 * the backward, which nothing covers. Without overlap everything is exposed.
 * Collective times include the ring's (n - 1) hop latencies (plan_hw.c),
 * which dominate per-layer messages across hundreds of ranks. */
typedef struct zero_mb {
    double fwd_s, bwd_s;      /* exposed, whole stage */
    double total_s;           /* all of it, hidden or not */
} zero_mb;

/* A collective over the data-parallel group sp_g (kind 0 all-reduce, 1
 * all-gather / reduce-scatter) of bytes, through the memo's cache where
 * there is one (its group is the memo's). */
static double group_coll_s(const plan_cluster *c, const plan__span *sp_g, plan__eval_memo *mm,
                           int kind, double bytes)
{
    if (mm)
        for (int i = 0; i < mm->ncoll; i++)
            if (mm->coll_kind[i] == kind && mm->coll_bytes[i] == bytes)
                return mm->coll_s[i];
    double t = kind ? plan__allgather_s(c, sp_g, bytes) : plan__allreduce_s(c, sp_g, bytes);
    if (mm && mm->ncoll < PLAN__MEMO_COLL) {
        mm->coll_kind[mm->ncoll] = kind;
        mm->coll_bytes[mm->ncoll] = bytes;
        mm->coll_s[mm->ncoll++] = t;
    }
    return t;
}

/* Are a layout's sharded gradients reduce-scattered (and its parameters
 * gathered) every microbatch? Not on a stack that syncs them once per step,
 * nor under a pipeline that does (pipeline_syncs_once). */
static int sharded_per_microbatch(const plan_layout *l, const plan_framework *fw)
{
    return l->sharding >= PLAN_SHARD_GRADIENTS && fw->sync_sharded == PLAN_SYNC_PER_MICROBATCH &&
           !plan__pipeline_syncs_once(l, fw);
}

static void zero_microbatch(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                            const plan__span *sp_g, plan__eval_memo *mm, const layer_cost *lc,
                            int layers, zero_mb *z)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    memset(z, 0, sizeof *z);
    if (l->dp * l->cp <= 1 || layers <= 0 || plan__pipeline_syncs_once(l, fw))
        return;
    int gathers_f = l->sharding == PLAN_SHARD_PARAMS ||
                    (l->sharding == PLAN_SHARD_GRADIENTS && fw->zero2_gathers);
    int gathers_b = l->sharding == PLAN_SHARD_PARAMS;
    int regather = gathers_b && fw->zero3_regather && l->recompute == PLAN_RECOMP_FULL;
    int rs_mb = sharded_per_microbatch(l, fw);
    if (!gathers_f && !rs_mb)
        return;
    double P = (double)m->params_layer / l->tp;
    double ag = gathers_f ? group_coll_s(c, sp_g, mm, 1, plan__elem_bytes(l) * P) : 0.0;
    double rs = rs_mb ? group_coll_s(c, sp_g, mm, 1, (l->fp32_grads ? 4.0 : plan__elem_bytes(l)) * P)
                      : 0.0;
    double cf = ag, cb = (gathers_b ? ag : 0.0) + (regather ? ag : 0.0) + rs;
    double n = layers;
    z->total_s = n * (cf + cb);
    double f = lc->fwd_comp_s + lc->tp_fwd_s;
    double b = lc->bwd_comp_s + lc->recomp_comp_s + lc->tp_bwd_s + lc->tp_recomp_s;
    if (!l->dp_overlap || !fw->zero3_prefetch) {
        z->fwd_s = n * cf;
        z->bwd_s = n * cb;
        return;
    }
    z->fwd_s = cf + (n - 1.0) * fmax(0.0, cf - f);
    z->bwd_s = n * fmax(0.0, cb - b) + rs;
    /* the collectives the compute hides hold their SMs meanwhile, and the
     * compute they overlap runs on the rest (plan__comm_sm_frac) */
    double phi = plan__comm_sm_frac(c);
    z->fwd_s += phi * fmax(0.0, n * cf - z->fwd_s);
    z->bwd_s += phi * fmax(0.0, n * cb - z->bwd_s);
}

/* The pass a stack makes over a stage's weight gradients to add one
 * microbatch's to the step's earlier ones (plan_fw_accum), per microbatch
 * on average, for P parameters held (before sharding): a main_grad hook
 * reads the new gradient and reads and writes the buffer (2 + 4 + 4 bytes
 * a parameter into an fp32 buffer, fp32_grads; 2 + 2 + 2 into a
 * half-precision one) every microbatch; autograd's AccumulateGrad the same
 * from the second microbatch on; a fused one (the weight-gradient GEMM accumulating into
 * the buffer) none. Sharded gradients (ZeRO-2/3) are summed over a shard.
 * Streamed at hbm_eff of HBM bandwidth, as every elementwise kernel. */
static double wgrad_accum_s(const plan_cluster *c, const plan_layout *l,
                            const plan_framework *fw, double P)
{
    if (!fw || fw->wgrad_accum == PLAN_ACCUM_FUSED || l->microbatches <= 1)
        return 0.0;
    double eb = plan__elem_bytes(l), buf = l->fp32_grads ? 4.0 : eb;
    double share = 1.0;
    if (l->sharding == PLAN_SHARD_GRADIENTS || l->sharding == PLAN_SHARD_PARAMS)
        share = 1.0 / plan__shard_degree(l);
    if (fw->wgrad_accum == PLAN_ACCUM_AUTOGRAD) /* the first microbatch assigns */
        share *= (double)(l->microbatches - 1) / (double)l->microbatches;
    return plan__mem_s(c, (eb + 2.0 * buf) * P * share);
}

static void stage_time_of(const layer_cost *lc, const zero_mb *z, double n, int last,
                          double head_f, double head_b, double head_gemm, double accum_s,
                          stage_time *st)
{
    st->comp = n * (lc->fwd_comp_s + lc->bwd_comp_s + lc->recomp_comp_s) +
               (last ? head_f + head_b : 0.0) + accum_s;
    st->gemm = n * lc->gemm_s + (last ? head_gemm : 0.0);
    st->attn = n * lc->attn_s;
    st->host = n * lc->host_s;
    st->elem = st->comp - st->gemm - st->attn - st->host;
    st->tp = n * (lc->tp_fwd_s + lc->tp_bwd_s + lc->tp_recomp_s);
    st->cp = n * (lc->cp_fwd_s + lc->cp_bwd_s);
    st->zero = z->fwd_s + z->bwd_s;
    st->f = n * (lc->fwd_comp_s + lc->tp_fwd_s + lc->cp_fwd_s) + (last ? head_f : 0.0) + z->fwd_s;
    st->b = st->comp + st->tp + st->cp + st->zero - st->f;
    /* backward GEMMs are the input-gradient and the weight-gradient product,
     * each the size of the forward one (Qi et al. 2023, Sec. 2) */
    st->w = n * lc->gemm_fwd_s + (last ? head_b / 2.0 : 0.0);
}

/* Exposed point-to-point time of a rank per microbatch: a send of its output
 * and of its input gradient per chunk (2v), or, overlapped, only what the
 * next chunk's compute does not cover (Megatron-Core overlap_p2p_comm). */
static double stage_p2p_s(const plan_layout *l, const stage_time *st, double p2p)
{
    if (l->pp <= 1)
        return 0.0;
    double v = l->virtual_stages;
    if (!l->pp_overlap)
        return 2.0 * v * p2p;
    return v * (fmax(0.0, p2p - st->f / v) + fmax(0.0, p2p - st->b / v));
}

/* Pipeline time from per-stage per-microbatch times (see the file comment). */
static double pipeline_s(const plan_layout *l, double maxT, double sumT)
{
    int m = l->microbatches, cap = l->active_microbatches, p = l->pp;
    /* SMP's cap throttles only when it is below both the microbatches and
     * the stages: then cap microbatches circulate through the sum of the
     * stage times, one period per microbatch. */
    double period = (cap < m && cap < p) ? fmax(maxT, sumT / cap) : maxT;
    switch (l->schedule) {
    case PLAN_SCHED_SIMPLE: {
        int w = m < cap ? m : cap;
        int waves = (m + w - 1) / w, last = m - (waves - 1) * w;
        return (waves - 1) * ((w - 1) * maxT + sumT) + (last - 1) * maxT + sumT;
    }
    case PLAN_SCHED_VIRTUAL:
        return m * period + (sumT - maxT) / l->virtual_stages;
    case PLAN_SCHED_ZB_H1:
        /* never below one microbatch's round trip through every stage */
        return fmax(m * period + (sumT - maxT) / 3.0, sumT);
    case PLAN_SCHED_INTERLEAVED:
    default:
        return (m - 1) * period + sumT;
    }
}

/* Does the step end with a gradient sync of its own? Not when gradients are
 * reduce-scattered every microbatch (zero_microbatch does that). */
static int step_sync(const plan_layout *l)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    return l->dp * l->cp > 1 && !sharded_per_microbatch(l, fw);
}

/* The once-per-step gradient sync of a rank's gradients in buckets: count,
 * full, last. Each bucket is all-reduced; with a sharded optimizer whose
 * parameter all-gather runs behind the next forward (Megatron-Core's
 * distributed optimizer with --overlap-param-gather) only the reduce-scatter
 * half is on the step's path; otherwise reduce-scatter + all-gather cost an
 * all-reduce (nccl-tests PERFORMANCE.md: the same bus traffic). */
static void dp_buckets(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       const plan__span *sp, plan__eval_memo *mm, double grad_bytes,
                       plan_stage_cost *sc)
{
    sc->dp_buckets = 0;
    sc->dp_bucket_s = sc->dp_last_bucket_s = 0.0;
    if (!step_sync(l) || grad_bytes <= 0)
        return;
    const plan_framework *fw = plan_framework_get(l->framework);
    int rs_only = l->sharding >= PLAN_SHARD_OPTIMIZER && fw->param_gather_overlap;
    double bucket = l->dp_bucket_bytes > 0 ? fmin(l->dp_bucket_bytes, grad_bytes) : grad_bytes;
    if (fw->dp_bucket_layer && !(l->dp_bucket_bytes > 0)) /* one transformer layer a chunk */
        bucket = fmin(grad_bytes, (l->fp32_grads ? 4.0 : plan__elem_bytes(l)) * (double)m->params_layer /
                                      l->tp);
    double full = floor(grad_bytes / bucket), rest = grad_bytes - full * bucket;
    sc->dp_buckets = (int)full + (rest > 0);
    sc->dp_bucket_s = group_coll_s(c, sp, mm, rs_only, bucket);
    sc->dp_last_bucket_s = rest > 0 ? group_coll_s(c, sp, mm, rs_only, rest) : sc->dp_bucket_s;
}

/* The busiest stage per microbatch and the pipeline's schedule: compute by
 * kind, TP, CP and PP communication and the bubble into est; the first
 * stage's sharded collectives per microbatch (all of them, zero_total) and
 * the busiest stage's exposed part (crit_zero) for the data-parallel terms. */
static void eval_stages(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                        const layer_cost *lc, const plan__span *sp_g, plan__eval_memo *mm,
                        plan_estimate *est, double *zero_total, double *crit_zero)
{
    /* ---- time ---- */
    *zero_total = *crit_zero = 0;
    double head_f = mm->head_f_s, head_b = mm->head_b_s, head_gemm = mm->head_gemm_s;
    double p2p = mm->p2p_s;

    double maxT = 0, sumT = 0;
    double crit_comp = 0, crit_tp = 0, crit_cp = 0, crit_pp = 0, crit_f = 0, crit_b = 0;
    stage_time crit = {0}, st;
    zero_mb z;
    /* a run of stages alike is timed once (memo_runs) */
    for (int i = 0, next; i < l->pp; i = next) {
        int last = i == l->pp - 1, n = est->stage_layers[i];
        next = mm->run_next[i];
        zero_microbatch(m, c, l, sp_g, mm, lc, n, &z);
        double acc = wgrad_accum_s(c, l, mm->fw, mm->stage_params[i]);
        stage_time_of(lc, &z, n, last, head_f, head_b, head_gemm, acc, &st);
        double pp = stage_p2p_s(l, &st, p2p);
        double Ti = st.comp + st.tp + st.cp + st.zero + pp;
        /* stage by stage, in order: the sum's rounding is the schedule's */
        for (int j = i; j < next; j++)
            sumT += Ti;
        if (i == 0)
            *zero_total = z.total_s;
        if (Ti > maxT) {
            maxT = Ti;
            crit_comp = st.comp;
            crit = st;
            crit_tp = st.tp;
            crit_cp = st.cp;
            *crit_zero = st.zero;
            crit_pp = pp;
            crit_f = st.f;
            crit_b = st.b;
        }
    }
    double mb = l->microbatches;
    double t_pipe = pipeline_s(l, maxT, sumT);
    plan_time *tm = &est->time;
    tm->compute_s = mb * crit_comp;
    plan_compute_split *cs = &est->compute;
    cs->gemm_s = mb * crit.gemm;
    cs->attn_s = mb * crit.attn;
    cs->host_s = mb * crit.host;
    cs->elem_s = tm->compute_s - cs->gemm_s - cs->attn_s - cs->host_s;
    tm->tp_comm_s = mb * crit_tp;
    tm->cp_comm_s = mb * crit_cp;
    tm->pp_comm_s = mb * crit_pp;
    tm->bubble_s = t_pipe - mb * maxT;
    est->stage_fwd_s = crit_f;
    est->stage_bwd_s = crit_b;
}

/* The data-parallel gradient sync (exposed and total) and the optimizer
 * step into est->time, and the step time they complete. */
static void eval_dp_optimizer(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                              const layer_cost *lc, const plan__span *sp_g, plan__eval_memo *mm,
                              plan_estimate *est, double zero_total, double crit_zero)
{
    double mb = l->microbatches;
    plan_time *tm = &est->time;
    /* DP: the first stage's gradients (it finishes its backward last), in
     * buckets over dp x cp ranks, one after another on its communication
     * stream. With overlap the buckets become ready evenly over the last
     * backward op (span B), so the sync ends at max(B/n + t_dp, B + t_last):
     * the bound for the first bucket and for the last one (the finish time
     * of bucket k is linear in k); the simulator plays the same rule out.
     * Gradients reduced every microbatch (zero_microbatch) are in the
     * stages' times already: their exposed part is counted here too. */
    plan_stage_cost b0;
    dp_buckets(m, c, l, sp_g, mm, (l->fp32_grads ? 4.0 : plan__elem_bytes(l)) * mm->mem_params[0],
               &b0);
    double t_dp = b0.dp_buckets > 0 ? (b0.dp_buckets - 1) * b0.dp_bucket_s + b0.dp_last_bucket_s : 0.0;
    double last_b = est->stage_layers[0] * (lc->bwd_comp_s + lc->recomp_comp_s + lc->tp_bwd_s) /
                    l->virtual_stages;
    double exposed;
    if (l->dp_overlap && b0.dp_buckets > 0) {
        exposed = fmax(b0.dp_last_bucket_s, t_dp + last_b / b0.dp_buckets - last_b);
        /* the hidden buckets' NCCL blocks slow the backward they overlap
         * by the SMs they hold (plan__comm_sm_frac) */
        exposed += plan__comm_sm_frac(c) * fmax(0.0, t_dp - exposed);
    } else {
        exposed = t_dp;
    }
    tm->dp_total_s = t_dp + mb * zero_total;
    tm->dp_exposed_s = exposed + mb * crit_zero;

    /* Optimizer step over the largest local shard. */
    double P_local = mm->max_stage_params;
    if (l->sharding >= PLAN_SHARD_OPTIMIZER)
        P_local /= plan__shard_degree(l);
    tm->optimizer_s = plan__mem_s(c, (l->precision == PLAN_PREC_FP32 ? ADAM_BYTES_FP32
                                                                      : ADAM_BYTES_PER_PARAM) *
                                         P_local);
    /* a device that computes the step slower than it streams it (a CPU's
     * square root and division per parameter: catalog opt_param_s) */
    tm->optimizer_s = fmax(tm->optimizer_s, P_local * c->gpu->opt_param_s);
    tm->step_s = tm->compute_s + tm->tp_comm_s + tm->cp_comm_s + tm->pp_comm_s + tm->bubble_s +
                 tm->dp_exposed_s + tm->optimizer_s;
}

static void time_terms(const plan_estimate *est, plan_terms *terms)
{
    const plan_time *tm = &est->time;
    const plan_compute_split *cs = &est->compute;
    PLAN__TERM(terms, "time", "compute", tm->compute_s, "s",
               "m x (fwd + bwd + recompute) of the busiest stage; GEMM at peak x eff(m,n,k), "
               "attention core, elementwise at HBM bandwidth; with blocking launches plus "
               "the stack's host time per kernel (host_op_s, " PLAN__XSTR(PLAN__KERNELS_FWD)
               " forward, " PLAN__XSTR(PLAN__KERNELS_BWD) " backward per layer), else that as a floor",
               "GEMM efficiency by tile occupancy and alignment (NVIDIA Matrix Multiplication "
               "Background guide); Narayanan et al. 2021 Eq. 3 FLOP counts; PyTorch eager dispatch");
    PLAN__TERM(terms, "time", "  GEMMs", cs->gemm_s, "s",
               "the linear layers and the LM head: 3 GEMMs per forward GEMM (input and weight "
               "gradients), a fourth with full recompute; FP8 casts with FP8 linears; with "
               "Transformer Engine's TP overlap, its products in pieces and on the SMs its "
               "communication leaves",
               "Qi et al. 2023, Sec. 2; NVIDIA Matrix Multiplication Background guide; Transformer "
               "Engine initialize_ub defaults");
    PLAN__TERM(terms, "time", "  attention core", cs->attn_s, "s",
               "fused: 4 b a s^2 d causal half forward (a local layer's band of W keys: 4 b a s "
               "W(1 - W/2s) d), 2.5x that backward, at the generation's "
               "efficiency per direction: the chip's measured rates times the stack's share "
               "(flash_eff over the measured FlashAttention-2), else flash_eff; FlashAttention 1 and "
               "3 by published ratios; unfused: batched GEMMs and the score tensors through HBM",
               "Dao 2023 (FlashAttention-2); the chip's measured-rates file");
    PLAN__TERM(terms, "time", "  elementwise", cs->elem_s, "s",
               "norms, activations, residuals, dropout and the loss, and the weight gradients' "
               "accumulation pass where the stack makes one (wgrad_accum), at hbm_eff of HBM "
               "bandwidth",
               "Korthikanti et al. 2022, Fig. 2 op list; Megatron's main_grad hook");
    PLAN__TERM(terms, "time", "  host launch", cs->host_s, "s",
               "host time per kernel beyond the GPU's time (blocking launches: all of it)",
               "PyTorch eager dispatch");
    PLAN__TERM(terms, "time", "TP communication", tm->tp_comm_s, "s",
               "m x layers x 4 all-reduces of s b h x 2 B (6 with full recompute), less what "
               "the stack overlaps; an overlapped NCCL collective still takes its channels' SMs "
               "from the GEMMs it hides behind; Transformer Engine's overlap (sequence parallel: "
               "4 collectives forward, 6 backward): what outlasts the product pieces it runs "
               "beside, and the last piece's reduce-scatter",
               "Shoeybi et al. 2019, Fig. 4; Korthikanti et al. 2022 Sec. 4.2.2; nccl-tests "
               "PERFORMANCE.md bus bandwidth");
    PLAN__TERM(terms, "time", "CP communication", tm->cp_comm_s, "s",
               "ring KV exchange beyond the attention compute it overlaps, and the SMs its "
               "hidden part takes from it", "Liu et al. 2023");
    PLAN__TERM(terms, "time", "PP communication", tm->pp_comm_s, "s",
               "m x 2 x v p2p sends of s b h x 2 B / t (scatter/gather)", "Narayanan et al. 2021, Sec. 4.1");
    PLAN__TERM(terms, "time", "pipeline bubble", tm->bubble_s, "s",
               "schedule time - m x slowest stage; (p-1)/m for 1F1B/GPipe, (p-1)/(vm) interleaved, "
               "about a third of that for ZB-H1",
               "Huang et al. 2019; Narayanan et al. 2021 Sec. 2.2; Qi et al. 2023");
    PLAN__TERM(terms, "time", "DP exposed", tm->dp_exposed_s, "s",
               "bucketed all-reduce of the first stage's gradients past its last backward B: "
               "max(t_last, t_dp + B/n - B) with n buckets ready evenly over B, plus the SMs its "
               "hidden part takes from that backward (NCCL channels / SMs of the hidden time); with "
               "ZeRO-3 / FSDP the per-layer gathers and reduce-scatters compute does not hide, and "
               "the same SM share of those it hides",
               "Li et al. 2020 (PyTorch DDP) bucketing; nccl-tests bus bandwidth; NCCL environment "
               "variables (NCCL_MIN_NCHANNELS: a channel is a CUDA block)");
    PLAN__TERM(terms, "time", "DP total", tm->dp_total_s, "s", "whole gradient sync, hidden or not",
               "as above");
    PLAN__TERM(terms, "time", "optimizer", tm->optimizer_s, "s",
               "30 B per local parameter through HBM (Adam)", "fused Adam read/write count");
    PLAN__TERM(terms, "time", "step", tm->step_s, "s", "sum of the exposed terms", "");
}

static void eval_rates(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       const plan__eval_memo *mm, plan_estimate *est, plan_terms *terms)
{
    const plan_time *tm = &est->time;
    /* ---- rates ---- */
    est->tokens_per_step = (double)l->global_batch * (double)m->seq;
    est->tokens_per_s = est->tokens_per_step / tm->step_s;
    est->model_flops_per_step = mm->train_flops_per_token * est->tokens_per_step;
    double recomp_flops = 0;
    if (l->recompute == PLAN_RECOMP_FULL)
        recomp_flops = (double)m->layers * mm->layer_fwd_flops_per_token;
    else if (l->recompute == PLAN_RECOMP_SELECTIVE && !l->flash_attention)
        /* the unfused core recomputed: every score of the s x s product,
         * local layers' too (causal_keys) */
        recomp_flops = (double)m->layers * 4.0 * (double)m->seq *
                       (double)plan_model_attn_width(m);
    est->hw_flops_per_step = est->model_flops_per_step + recomp_flops * est->tokens_per_step;
    double denom = tm->step_s * c->gpus * c->gpu->peak_flops;
    est->mfu = est->model_flops_per_step / denom;
    est->hfu = est->hw_flops_per_step / denom;
    est->cost_per_hour = c->inst->price_per_hour * c->nodes;
    est->cost_per_mtokens = est->cost_per_hour / 3600.0 / est->tokens_per_s * 1e6;
    PLAN__TERM(terms, "flops", "model FLOPs per step", est->model_flops_per_step, "flops",
               "3 x tokens x (L(2 x matmul params + 4s x heads x head_dim) + 2hV), min(s, window) for s "
               "on local layers", "Narayanan et al. 2021, Eq. 3 (no recompute); MaxText's Gemma 2 count");
    PLAN__TERM(terms, "flops", "MFU", est->mfu, "", "model FLOPs / (step x GPUs x peak)",
               "Chowdhery et al. 2022, App. B");
}

/* The runs of stages eval_stages times once: stages differ only in their
 * layer count, the last one's head and the second one's share of the
 * embedding's gradients, so a run starts at stage i and goes on while the
 * next is a middle stage of the same layer count; the first stage is a run
 * of its own where the stack makes a pass over its gradients (the
 * embedding's are its own, the next stage's time is its own too). */
static void memo_runs(const plan_layout *l, plan__eval_memo *memo)
{
    int split_after_first = memo->fw && memo->fw->wgrad_accum != PLAN_ACCUM_FUSED;
    for (int i = 0, next; i < l->pp; i = next) {
        next = i + 1;
        if (i > 0 || !split_after_first)
            while (next < l->pp - 1 && memo->stage_layers[next] == memo->stage_layers[i])
                next++;
        memo->run_next[i] = next;
    }
}

/* What l's degrees, micro-batch and placement decide, into memo (valid):
 * the groups' spans, a layer's costs before its recompute, the layer split,
 * the LM head, the stage-to-stage send, the largest stage's parameters; 0,
 * or -1 when the placement does not tile the nodes (valid -1: so for every
 * layout of the memo). */
static int memo_fill(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                     plan__eval_memo *memo)
{
    memo->valid = -1;
    if (plan__span_of(l, c, 'T', &memo->sp_t) || plan__span_of(l, c, 'P', &memo->sp_p) ||
        plan__span_of(l, c, 'D', &memo->sp_d) || plan__span_of(l, c, 'C', &memo->sp_c))
        return -1;
    layer_costs(m, c, l, &memo->sp_t, &memo->sp_c, &memo->lc);
    stage_split(m, l, memo->stage_layers);
    plan__memory_stages(m, l, memo);
    memo->fw = plan_framework_get(l->framework);
    memo_runs(l, memo);
    memo->state_set = 0;
    head_times(m, c, l, &memo->head_f_s, &memo->head_b_s, &memo->head_gemm_s);
    /* The activation a stage sends is split over its TP ranks: sequence
     * parallelism shards it, and Megatron's scatter/gather optimisation sends
     * 1/t from each TP rank and all-gathers over NVLink (Narayanan et al.
     * 2021, Sec. 4.1). */
    memo->p2p_bytes = plan__elem_bytes(l) * plan__tokens_per_mb(m, l) * (double)m->hidden / l->tp;
    memo->p2p_s = l->pp > 1 ? plan__p2p_s(c, memo->sp_p.nodes == 1, memo->p2p_bytes) : 0.0;
    memo->max_stage_params = 0;
    for (int i = 0; i < l->pp; i++) {
        memo->stage_params[i] = plan__stage_params(m, l, i, memo->stage_layers[i]);
        memo->max_stage_params = fmax(memo->max_stage_params, memo->stage_params[i]);
    }
    memo->train_flops_per_token = plan_model_train_flops_per_token(m);
    memo->layer_fwd_flops_per_token = plan_model_layer_fwd_flops_per_token(m);
    memo->ncoll = 0;
    for (int r = 0; r < PLAN_RECOMP__COUNT; r++)
        memo->recompute[r].set = 0;
    memo->valid = 1;
    return 0;
}

/* The memo's layer costs after the layout's recompute (layer_recompute),
 * worked out once for each recompute setting in turn: what it reads of
 * the layout beyond the memo's knobs is the recompute's kind, layers,
 * saved products and group, and the chunk the layers are a share of. */
static const layer_cost *memo_recompute(const plan_model *m, const plan_layout *l,
                                        plan__eval_memo *memo)
{
    struct plan__memo_recompute *r = &memo->recompute[l->recompute];
    if (!r->set || r->layers != l->recompute_layers || r->saved != l->recompute_saved ||
        r->group != l->recompute_group || r->virtual_stages != l->virtual_stages) {
        r->lc = memo->lc;
        layer_recompute(m, l, &r->lc);
        r->set = 1;
        r->layers = l->recompute_layers;
        r->saved = l->recompute_saved;
        r->group = l->recompute_group;
        r->virtual_stages = l->virtual_stages;
    }
    return &r->lc;
}

/* plan_evaluate; with memory_only (the search's pruning), a layout that does
 * not fit gets its worst stage's memory but no time, and no layout gets the
 * totals of its other stages (stage_mem_bytes, stage_inflight): the search
 * evaluates the layouts it keeps again in full. */
int plan__evaluate(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                   plan_estimate *est, plan_terms *terms, int memory_only, plan__eval_memo *memo,
                   st_err *err)
{
    /* a valid memo's layouts are the search's own, built from degrees its
     * first layout passed */
    int rc = memo && memo->valid > 0 ? ST_OK : check_degrees(l, err);
    if (rc)
        return rc;
    est_clear(est, memory_only);
    est->capacity_bytes = c->gpu->mem_bytes;
    est->nstages = l->pp;
    /* a valid memo was filled for a layout that passed check_layout, and
     * its layouts share every knob that checks but the chunks (the
     * search's, whose rejections it counts without their reasons) */
    if ((memo && memo->valid > 0 ? check_chunks(m, l, est, !memory_only)
                                 : check_layout(m, c, l, est)) != PLAN_OK)
        return ST_OK;

    plan__eval_memo own;
    if (!memo) {
        own.valid = 0;
        memo = &own;
    }
    if (memo->valid == 0)
        memo_fill(m, c, l, memo);
    if (memo->valid < 0) {
        est->reject = PLAN_REJ_PLACEMENT;
        if (!memory_only) /* (the search counts it) */
            snprintf(est->reason, sizeof est->reason,
                     "placement %s does not tile nodes of %d GPUs", l->placement,
                     c->inst->gpus_per_node);
        return ST_OK;
    }
    const plan__span sp_d = memo->sp_d, sp_c = memo->sp_c;
    const layer_cost *lc = memo_recompute(m, l, memo);
    memcpy(est->stage_layers, memo->stage_layers, (size_t)l->pp * sizeof est->stage_layers[0]);
    if (check_megatron_split(m, l, est, !memory_only) != PLAN_OK)
        return ST_OK;

    plan__eval_memory(m, c, l, lc, memo, est, terms, memory_only);
    if (memory_only && est->reject == PLAN_REJ_OOM)
        return ST_OK;

    plan__span sp_g = {sp_d.ranks_per_node * sp_c.ranks_per_node, sp_d.nodes * sp_c.nodes};
    double zero_total, crit_zero;
    eval_stages(m, c, l, lc, &sp_g, memo, est, &zero_total, &crit_zero);
    eval_dp_optimizer(m, c, l, lc, &sp_g, memo, est, zero_total, crit_zero);
    time_terms(est, terms);
    eval_rates(m, c, l, memo, est, terms);
    return ST_OK;
}

double plan_error_pct(double predicted, double measured)
{
    if (!(predicted > 0) || !(measured > 0) || !isfinite(predicted) || !isfinite(measured))
        return NAN;
    return 100.0 * (predicted - measured) / measured;
}

const char *plan_estimate_reason(const plan_estimate *est, char *buf, size_t n)
{
    if (est->reject == PLAN_REJ_OOM && !est->reason[0])
        snprintf(buf, n, "stage %d needs %.1f GiB of %.1f GiB (%.1f GiB over)", est->worst_stage,
                 plan_mem_need_bytes(&est->mem) / 1073741824.0,
                 est->capacity_bytes / 1073741824.0, est->oom_excess_bytes / 1073741824.0);
    else
        snprintf(buf, n, "%s", est->reason);
    return buf;
}

int plan_evaluate(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                  plan_estimate *est, plan_terms *terms, st_err *err)
{
    return plan__evaluate(m, c, l, est, terms, 0, NULL, err);
}

/* ------------------------------------------------------------------------ */
/* Memory by term of single stages                                           */
/* ------------------------------------------------------------------------ */

/* Stages [first, first + n) of l into out[0 .. n-1], by the steps
 * plan_evaluate takes (degrees, structure, placement, per-layer costs, layer
 * split, stage_memory), so every term is bit for bit what it computed. */
static int stages_mem(const plan_model *m, const plan_cluster *c, const plan_layout *l, int first,
                      int n, plan_mem *out, st_err *err)
{
    int rc = check_degrees(l, err);
    if (rc)
        return rc;
    if (first < 0 || n < 0 || first + n > l->pp)
        return ST_RAISE(err, ST_EINVAL, "stage %d: a layout with pp %d has stages 0..%d",
                        first < 0 ? first : first + n - 1, l->pp, l->pp - 1);
    plan_estimate *est = malloc(sizeof *est); /* for check_layout's reason only */
    if (!est)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate an estimate");
    memset(est, 0, sizeof *est);
    plan__eval_memo memo;
    if (check_layout(m, c, l, est) != PLAN_OK)
        rc = ST_RAISE(err, ST_EINVAL, "layout rejected: %s", est->reason);
    else if (memo_fill(m, c, l, &memo) != 0)
        rc = ST_RAISE(err, ST_EINVAL, "layout rejected: placement %s does not tile nodes of %d GPUs",
                      l->placement, c->inst->gpus_per_node);
    if (rc == ST_OK) {
        layer_cost lc = memo.lc;
        layer_recompute(m, l, &lc);
        for (int k = 0; k < n; k++) {
            int i = first + k, layers = memo.stage_layers[i];
            plan__stage_memory(m, c, l, &lc, i, layers, plan__stage_params(m, l, i, layers), &out[k]);
        }
    }
    free(est);
    return rc;
}

int plan_stage_mem(const plan_model *m, const plan_cluster *c, const plan_layout *l, int stage,
                   plan_mem *out, st_err *err)
{
    return stages_mem(m, c, l, stage, 1, out, err);
}

int plan_stages_mem(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                    plan_mem *out, int n, st_err *err)
{
    if (n < l->pp)
        return ST_RAISE(err, ST_EINVAL, "room for %d stages, the layout has pp %d", n, l->pp);
    return stages_mem(m, c, l, 0, l->pp, out, err);
}

/* ------------------------------------------------------------------------ */
/* Costs for the simulator                                                   */
/* ------------------------------------------------------------------------ */

int plan_costs_compute(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                       plan_costs *out, st_err *err)
{
    plan_estimate *est = malloc(sizeof *est);
    if (!est)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate an estimate");
    int rc = plan_evaluate(m, c, l, est, NULL, err);
    if (rc == ST_OK && est->reject != PLAN_OK && est->reject != PLAN_REJ_OOM)
        rc = ST_RAISE(err, ST_EINVAL, "layout rejected: %s", est->reason);
    if (rc != ST_OK) {
        free(est);
        return rc;
    }
    memset(out, 0, sizeof *out);
    out->pp = l->pp;
    out->virtual_stages = l->virtual_stages;
    out->microbatches = l->microbatches;
    out->active_microbatches = l->active_microbatches;
    out->schedule = l->schedule;
    out->planner_step_s = est->time.step_s;
    out->planner_bubble_s = est->time.bubble_s;
    out->capacity_bytes = est->capacity_bytes;
    out->optimizer_s = est->time.optimizer_s;
    out->dp_overlap = l->dp_overlap;
    out->comm_sm_frac = plan__comm_sm_frac(c);

    plan__eval_memo memo;
    memo_fill(m, c, l, &memo); /* tiling was checked by plan_evaluate */
    plan__span sp_g = {memo.sp_d.ranks_per_node * memo.sp_c.ranks_per_node,
                       memo.sp_d.nodes * memo.sp_c.nodes};
    layer_cost lc = memo.lc;
    layer_recompute(m, l, &lc);
    double head_f = memo.head_f_s, head_b = memo.head_b_s, head_gemm = memo.head_gemm_s;

    double v = l->virtual_stages;
    out->p2p_bytes = memo.p2p_bytes;
    out->p2p_intra_bps = plan__p2p_link_bps(c, 1);
    out->p2p_net_bps = plan__p2p_link_bps(c, 0);
    out->intra_latency_s = plan__p2p_latency_s(c, 1);
    out->net_latency_s = plan__p2p_latency_s(c, 0);

    int stride_p = plan__stride_of(l, 'P');
    for (int i = 0; i < l->pp; i++) {
        plan_stage_cost *sc = &out->stage[i];
        int last = i == l->pp - 1, n = est->stage_layers[i];
        stage_time st;
        zero_mb z;
        double P = plan__stage_params(m, l, i, n);
        zero_microbatch(m, c, l, &sp_g, &memo, &lc, n, &z);
        stage_time_of(&lc, &z, n, last, head_f, head_b, head_gemm, wgrad_accum_s(c, l, memo.fw, P),
                      &st);
        sc->layers = n;
        sc->fwd_s = st.f / v;
        sc->bwd_s = st.b / v;
        sc->bwd_weight_s = st.w / v;
        sc->fwd_comm_s = (n * (lc.tp_fwd_s + lc.cp_fwd_s) + z.fwd_s) / v;
        sc->bwd_comm_s = (n * (lc.tp_bwd_s + lc.tp_recomp_s + lc.cp_bwd_s) + z.bwd_s) / v;
        sc->act_bytes = n * lc.act_stored_bytes / v;
        sc->grad_bytes = (l->fp32_grads ? 4.0 : plan__elem_bytes(l)) * P;
        plan_mem mem;
        plan__stage_memory(m, c, l, &lc, i, n, P, &mem);
        sc->static_bytes = mem.total_bytes - mem.activations_bytes - mem.allocator_bytes;
        sc->node = (int)((long)i * stride_p / c->inst->gpus_per_node);
        dp_buckets(m, c, l, &sp_g, &memo, sc->grad_bytes, sc);
    }
    free(est);
    return ST_OK;
}
