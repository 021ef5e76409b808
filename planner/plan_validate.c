/*
 * plan_validate.c: map one published run to the planner's inputs, predict
 * it and compare (plan_validate_run); the layout's evaluation, with what the
 * row leaves open searched or inferred, is plan_validate_eval.c's, the
 * summary of the errors plan_validate_summary.c's.
 *
 * A row is read by its fields, in four steps, each of which may end it with
 * a reason that is the row's own (a value it does not publish):
 *   framework the profile its framework column names (plan_framework_match;
 *            how a row's stack and release are read: plan_validate_stack.c);
 *            what the row leaves unsaid, or says is "not stated" or
 *            "implied", is that framework's documented default.
 *   model    layers, hidden, heads, kv heads, head size, ffn, sequence and
 *            vocabulary, and the architecture from its text
 *            (plan_validate_model.c).
 *   cluster  the instance_type when the catalog knows it; otherwise the GPU
 *            (chip, board and memory), its node (GPUs per node, NVSwitch)
 *            and the network (technology and bandwidth per node) the row
 *            states, NVIDIA's reference node for that GPU where it states
 *            none; the catalog entry closest to that, its network set to the
 *            stated one. A run on part of one node is a one-node cluster of
 *            that many GPUs (plan_validate_cluster.c).
 *   layout   tp, pp, cp, dp (GPUs / (tp pp cp)), or model_parallel_size
 *            when TP and PP are not split out; virtual stages (Megatron's
 *            interleaved schedule), micro-batch, microbatches (or gradient
 *            accumulation steps), recompute, sharding (ZeRO stages, FSDP
 *            FULL_SHARD / SHARD_GRAD_OP / HYBRID_SHARD and shard groups),
 *            sequence parallelism, precision (FP8, fp32 gradient reduction).
 *            A missing micro-batch is searched with everything else fixed;
 *            a recompute left out where the stack's default cannot have
 *            fit is inferred (plan_validate_eval.c).
 *   compare  the reference time is iteration_time_s, else tokens per step
 *            over tokens/s (or samples/s x seq), else TFLOP/s (per GPU, the
 *            cluster's PFLOP/s, a percentage of peak, MFU or HFU x peak)
 *            converted with the row's own FLOP convention; memory against
 *            what its tool counts (plan__mem_metric); a published OOM
 *            against the planner's verdict; a layout the planner finds out of
 *            memory while it ran is compared and reported as such.
 *
 * Units: seconds, bytes, FLOPs; errors in percent.
 */
#include "planner/plan_validate.h"
#include "planner/plan_framework.h"
#include "planner/plan_validate_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define COL(name, req) {#name, offsetof(plan_validate_row, name), req}
const plan_validate_column plan_validate_columns[] = {
    COL(row_id, 1), COL(source_key, 1), COL(source_date, 0), COL(source_title, 0),
    COL(source_locator, 0), COL(source_ref, 0), COL(model_name, 0), COL(architecture, 0),
    COL(framework, 0), COL(num_layers, 0), COL(hidden_size, 0), COL(num_heads, 0),
    COL(num_kv_heads, 0), COL(head_dim, 0), COL(ffn_hidden_size, 0), COL(seq_len, 0), COL(vocab_size, 0),
    COL(params_b, 0),
    COL(gpu_type, 0), COL(gpu_mem_gb, 0), COL(num_gpus, 1), COL(instance_type, 0),
    COL(interconnect, 0), COL(net_gbps_per_gpu, 0), COL(net_gbps_per_node, 0), COL(tp, 0), COL(pp, 0), COL(dp, 0), COL(cp, 0),
    COL(model_parallel_size, 0), COL(virtual_stages, 0), COL(micro_batch_size, 0),
    COL(global_batch_size, 0), COL(global_batch_tokens, 0), COL(num_microbatches, 0),
    COL(grad_accum_steps, 0), COL(recompute, 0), COL(optimizer_sharding, 0),
    COL(sequence_parallel, 0), COL(precision, 0), COL(tflops_per_gpu, 0),
    COL(tflops_convention, 0), COL(mfu_pct, 0), COL(peak_basis_tflops, 0), COL(hfu_pct, 0),
    COL(pct_of_peak_reported, 0), COL(aggregate_pflops, 0), COL(samples_per_s, 0),
    COL(iteration_time_s, 0), COL(tokens_per_s_per_gpu, 0), COL(tokens_per_s_total, 0),
    COL(memory_per_gpu_gb, 0), COL(memory_metric, 0), COL(other_metrics, 0), COL(notes, 0),
    COL(derived_fields, 0),
    {NULL, 0, 0},
};
#undef COL

/* A global batch recovered from published TFLOP/s and time must land this
 * close to a whole number of sequences to be believed. */
#define DERIVED_BATCH_TOL 0.02
/* Largest global batch read, in sequences: far past any published run, and
 * small enough that every per-replica count fits an int. */
#define MAX_GLOBAL_BATCH (INT64_C(1) << 30)
/* A published time or rate outside these bounds is a unit mistake, not a
 * training run (a step of 1e-6 s or of more than a day; 1e12 tokens/s). */
#define MIN_TIME_S 1e-6
#define MAX_TIME_S 86400.0
#define MAX_RATE 1e12

/* ------------------------------------------------------------------------ */
/* Small text helpers                                                        */
/* ------------------------------------------------------------------------ */

#define contains plan__contains
#define nz plan__nz
#define parse_num plan__parse_num
#define skip plan__skip
#define note plan__note

#define blank plan__blank

#define copy plan__copy

const char *plan_validate_basis_name(plan_validate_basis b)
{
    switch (b) {
    case PLAN_VAL_BASIS_TIME:
        return "iteration time";
    case PLAN_VAL_BASIS_EQ3:
        return "TFLOP/s via Eq. 3";
    case PLAN_VAL_BASIS_MODEL_FLOPS:
        return "TFLOP/s via model FLOPs";
    case PLAN_VAL_BASIS_TOKENS:
        return "tokens/s";
    case PLAN_VAL_BASIS_MEGATRON:
        return "TFLOP/s via Megatron's FLOP count";
    case PLAN_VAL_BASIS_MOSAIC:
        return "TFLOP/s via 6N + 12lhs";
    case PLAN_VAL_BASIS_PARAMS8:
        return "TFLOP/s via 8N";
    case PLAN_VAL_BASIS_HARDWARE:
        return "TFLOP/s via hardware FLOPs";
    case PLAN_VAL_BASIS_PARAMS6:
        return "TFLOP/s via 6N";
    case PLAN_VAL_BASIS_NONE:
    default:
        return "none";
    }
}

double plan_validate_mem_bytes(const plan_validate_result *r, const plan_mem *m)
{
    /* what the tool measured: torch.cuda.max_memory_allocated counts the
     * tensors only; torch.cuda.max_memory_reserved the caching allocator's
     * segments, the tensors and its cache, but not the CUDA context, which
     * the driver holds outside it (PyTorch "CUDA semantics: memory
     * management": "unused memory managed by the allocator will still show
     * as if used in nvidia-smi"); nvidia-smi (and unspecified figures) the
     * process's whole footprint: the allocator's reserve, the CUDA context
     * and NCCL's buffers too */
    switch (r->mem_metric) {
    case PLAN_MEM_ALLOCATED: return m->total_bytes - m->allocator_bytes - m->context_bytes;
    case PLAN_MEM_RESERVED: return m->total_bytes - m->context_bytes;
    case PLAN_MEM_DEVICE:
    default: return m->total_bytes;
    }
}

double plan_validate_eq3_flops(double B, double s, double l, double h, double V)
{
    /* Narayanan et al. 2021, Eq. 3 (forward, backward and the recomputed
     * forward of every layer, plus the LM head). */
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double plan_validate_model_flops(double B, double s, double l, double h, double V)
{
    /* NVIDIA dgxc-benchmarking README, "Notes": model FLOPs per sample of a
     * GPT model, s (24 l h^2 + 12 l h s + 48 l h^2 + 6 V h) (no recompute). */
    return B * s * (24.0 * l * h * h + 12.0 * l * h * s + 48.0 * l * h * h + 6.0 * V * h);
}

double plan_validate_megatron_flops(const plan_model *m, double B)
{
    /* megatron/training/training.py, num_floating_point_operations: the
     * attention (with its s/h score term), the MLP (3/2 for a gated one)
     * and the logits, 12 B s l h^2 in front. */
    double h = (double)m->hidden, s = (double)m->seq, l = (double)m->layers;
    double a = (double)m->heads, kv = (double)m->kv_heads, f = (double)m->ffn;
    double q = a * (double)plan_model_head_dim(m) / h;
    double g = plan_model_gated(m) ? 1.5 : 1.0;
    return 12.0 * B * s * l * h * h *
           ((1.0 + kv / a + s / h) * q + (f / h) * g + (double)m->vocab / (2.0 * l * h));
}

/* ------------------------------------------------------------------------ */
/* Row -> layout                                                             */
/* ------------------------------------------------------------------------ */


/* The FLOPs a step of batch B executes with recompute rc (-1: not yet
 * known, 0 returned): Megatron's model count (3 x the forward) and the
 * forward recomputed in the backward: every layer's with full recompute,
 * the attention scores' (4 B s^2 l a d in that count) with selective; the
 * LM head is not recomputed (Narayanan et al. 2021, Eq. 3 is this for a
 * GPT with full recompute: 4 x the layers' forward, 3 x the head's); share:
 * the layers full recompute recomputes (plan_layout_recompute_share). */
static double hardware_flops(const plan_model *m, double B, int rc, double share)
{
    double F = plan_validate_megatron_flops(m, B);
    double h = (double)m->hidden, s = (double)m->seq, l = (double)m->layers;
    double q = (double)m->heads * (double)plan_model_head_dim(m);
    double head = 6.0 * B * s * h * (double)m->vocab;
    switch (rc) {
    case PLAN_RECOMP_NONE: return F;
    case PLAN_RECOMP_FULL: return F + share * (F - head) / 3.0;
    case PLAN_RECOMP_SELECTIVE: return F + 4.0 * B * s * s * l * q;
    default: return 0.0;
    }
}

/* Reference FLOPs of one iteration under the row's convention, for a
 * global batch B with recompute (-1: not yet known) of a share of the
 * layers (hardware FLOPs); when the convention names no count read, the
 * count the stack's logs print (tflops_model), else the FLOPs executed. */
static double convention_flops(const plan_validate_row *r, const plan_framework *fw,
                               const plan_model *m, double B, int recompute, double share,
                               plan_validate_basis *basis)
{
    double s = (double)m->seq, l = (double)m->layers, h = (double)m->hidden, V = (double)m->vocab;
    switch (plan__conv_parse(r->tflops_convention)) {
    case CONV_HARDWARE:
        *basis = PLAN_VAL_BASIS_HARDWARE;
        return hardware_flops(m, B, recompute, share);
    case CONV_EQ3:
        *basis = PLAN_VAL_BASIS_EQ3;
        return plan_validate_eq3_flops(B, s, l, h, V);
    case CONV_MEGATRON:
        *basis = PLAN_VAL_BASIS_MEGATRON;
        return plan_validate_megatron_flops(m, B);
    case CONV_MOSAIC:
        /* llm-foundry's MFU: 6 N FLOPs per token for the weights plus
         * 12 l h s for attention (its callbacks, flops_per_batch) */
        *basis = PLAN_VAL_BASIS_MOSAIC;
        return B * s * (6.0 * (double)m->params + 12.0 * l * h * s);
    case CONV_PARAMS8:
        *basis = PLAN_VAL_BASIS_PARAMS8;
        return 8.0 * (double)m->params * s * B;
    case CONV_PARAMS6:
        /* C = 6 N D: the weights' FLOPs alone, forward and backward, no
         * attention term (Kaplan et al. 2020, Sec. 2.1; Hoffmann et al.
         * 2022, Sec. 3 with N all the parameters) */
        *basis = PLAN_VAL_BASIS_PARAMS6;
        return 6.0 * (double)m->params * s * B;
    case CONV_UNKNOWN:
    default:
        /* No count named (or none read): the count the stack's own logs
         * print (tflops_model: Megatron-LM's num_floating_point_operations,
         * torchtitan's and MaxText's, model FLOPs), else a GPU's rate is of
         * the FLOPs it executed, the recomputed forward included (hardware
         * FLOPs, Chowdhery et al. 2022, App. B); without recompute the two
         * are the same. reference_time says which. */
        if (fw && fw->tflops_model) {
            *basis = PLAN_VAL_BASIS_MEGATRON;
            return plan_validate_megatron_flops(m, B);
        }
        *basis = PLAN_VAL_BASIS_HARDWARE;
        return hardware_flops(m, B, recompute, share);
    }
}

/* The data-parallel, tensor and pipeline degrees of a row: tp and pp as
 * published; with only model_parallel_size, TP inside a node and PP for the
 * rest (Megatron's practice, Narayanan et al. 2021 Sec. 3.3; without a
 * pipeline in the framework, all of it TP). */
static int map_degrees(const plan_validate_row *r, const plan_framework *fw, int gpn,
                       int64_t gpus, int64_t *tp, int64_t *pp, int64_t *cp, int64_t *dp,
                       int *search, plan_validate_result *out)
{
    *search = blank(r->tp) && blank(r->pp) && blank(r->dp) && blank(r->model_parallel_size);
    int64_t mp = 0;
    int htp, hpp, hdp, hmp;
    *tp = *pp = *cp = 1;
    *dp = 0;
    if ((htp = plan__get_int(out, "tp", r->tp, 1, 1 << 20, tp)) < 0 ||
        (hpp = plan__get_int(out, "pp", r->pp, 1, PLAN_PP_MAX, pp)) < 0 ||
        plan__get_int(out, "cp", r->cp, 1, 1 << 20, cp) < 0 ||
        (hdp = plan__get_int(out, "dp", r->dp, 1, 1 << 24, dp)) < 0 ||
        (hmp = plan__get_int(out, "model_parallel_size", r->model_parallel_size, 1, 1 << 24, &mp)) < 0)
        return 1;
    if (hmp && !htp && !hpp) {
        int pipeline = (fw->schedules & ~(1u << PLAN_SCHED_INTERLEAVED)) != 0 ||
                       fw->shardings_with_pp != 0;
        *tp = pipeline && mp > gpn ? gpn : mp;
        *pp = mp / *tp;
        if (*tp * *pp != mp)
            return skip(out, "model_parallel_size %lld does not split into TP %lld x PP",
                        (long long)mp, (long long)*tp);
        note(out, "model-parallel size %lld read as TP %lld x PP %lld", (long long)mp,
             (long long)*tp, (long long)*pp);
    }
    int uly = plan__ulysses_named(r);
    if (*cp > 1 && !fw->context_parallel && uly < 0)
        return skip(out, "context parallel %lld: %s has no context parallelism", (long long)*cp,
                    fw->label);
    if (uly > 1 || (uly == 0 && *cp > 1)) {
        if (!fw->cp_all_to_all)
            return skip(out, "DeepSpeed-Ulysses: %s has none", fw->label);
        if (*cp == 1)
            *cp = uly;
        note(out, "DeepSpeed-Ulysses over %lld GPUs (read as context parallelism)", (long long)*cp);
    }
    int64_t m = *tp * *pp * *cp;
    if (gpus % m != 0)
        return skip(out, "tp x pp x cp = %lld does not divide %lld GPUs", (long long)m,
                    (long long)gpus);
    if (!hdp)
        *dp = gpus / m;
    else if (*cp > 1 && *dp * *tp * *pp == gpus) {
        /* a data-parallel degree counted over the context-parallel ranks
         * too (GPUs / (TP x PP): Megatron-Core's data-parallel group with
         * context parallelism, get_data_parallel_world_size(with_context_
         * parallel=True)) */
        note(out, "dp %lld counts the context-parallel ranks: dp %lld x cp %lld", (long long)*dp,
             (long long)(*dp / *cp), (long long)*cp);
        *dp /= *cp;
    } else if (*dp * m != gpus)
        return skip(out, "tp x pp x dp x cp = %lld, but the run has %lld GPUs",
                    (long long)(*dp * m), (long long)gpus);
    return 0;
}

/* The attention kernel, where the row names it: FlashAttention is
 * optional in several stacks (Megatron-DeepSpeed --use-flash-attn,
 * Megatron-LM --use-flash-attn before Transformer Engine), so a run
 * that says it used it did, and one that says it did not, did not. */
static void map_attention(const plan_validate_row *r, plan_layout *l, plan_validate_result *out)
{
    const char *texts[] = {r->architecture, r->framework, r->notes, r->other_metrics};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        /* xformers' memory-efficient attention (xformers.ops.
         * memory_efficient_attention: the fused kernel of Rabe and Staats
         * 2021's algorithm, on CUTLASS, FlashAttention's class; LLaMA's
         * "efficient implementation of the causal multi-head attention ...
         * available in the xformers library", Touvron et al. 2023 Sec.
         * 2.4) is a fused kernel of the first FlashAttention's generation
         * where the text names no other */
        int xf = !contains(texts[i], "flash") &&
                 (contains(texts[i], "xformers") ||
                  contains(texts[i], "memory_efficient_attention") ||
                  contains(texts[i], "memory-efficient attention"));
        if (xf) {
            if (l->attention != PLAN_ATTN_FLASH1)
                note(out, "attention %s (xformers' memory-efficient attention)",
                     plan_attn_name(PLAN_ATTN_FLASH1));
            l->attention = PLAN_ATTN_FLASH1;
            l->flash_attention = 1;
            break;
        }
        if (!contains(texts[i], "flash"))
            continue;
        int off = contains(texts[i], "no flash") || contains(texts[i], "without flash") ||
                  contains(texts[i], "flash attention off") ||
                  contains(texts[i], "flash_attention=false") ||
                  contains(texts[i], "flash_attention: false");
        /* the generation the text names (FlashAttention's own names for its
         * releases), else the stack's fused one, else FlashAttention-2: the
         * one the stacks of 2023 on offered as an option */
        plan_attn gen = plan__parse_flash_generation(texts[i]);
        if (gen == PLAN_ATTN_UNFUSED)
            gen = l->attention != PLAN_ATTN_UNFUSED ? l->attention : PLAN_ATTN_FLASH2;
        if (off)
            gen = PLAN_ATTN_UNFUSED;
        if (l->attention != gen)
            note(out, "attention %s (the row says so)", plan_attn_name(gen));
        l->attention = gen;
        l->flash_attention = gen != PLAN_ATTN_UNFUSED;
        break;
    }
}

/* The row's batch: virtual stages, micro-batch size and microbatches for
 * its global batch over dp replicas (published, or derived from TFLOP/s
 * and time), or a micro-batch to search (rl->search_mbs). */
/* gb as a whole number of units (PLAN__BATCH_ROUND_TOL): gb itself when it is
 * one, else the nearest multiple within the tolerance (noted), else 0. */
static int64_t whole_batch(int64_t gb, int64_t unit, plan_validate_result *out)
{
    if (unit <= 0 || gb % unit == 0)
        return gb;
    int64_t k = (gb + unit / 2) / unit;
    if (k < 1 || fabs((double)(k * unit - gb)) > PLAN__BATCH_ROUND_TOL * (double)gb)
        return 0;
    note(out, "global batch %lld read as %lld, the nearest whole number of microbatches of "
         "%lld sequences", (long long)gb, (long long)(k * unit), (long long)unit);
    return k * unit;
}

/* Is the row's measured figure a rate (tokens or samples per second,
 * FLOP/s, a utilisation), not a step's time? */
static int measures_rate(const plan_validate_row *r)
{
    if (!blank(r->iteration_time_s))
        return 0;
    const char *rates[] = {r->tokens_per_s_total, r->tokens_per_s_per_gpu, r->samples_per_s,
                           r->tflops_per_gpu,     r->mfu_pct,              r->hfu_pct,
                           r->pct_of_peak_reported, r->aggregate_pflops};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (!blank(rates[i]))
            return 1;
    return 0;
}

/* The virtual stages a pipeline degree's remark names ("4 (interleaved,
 * v=2)", "8 (VPP 12)", "4 (2 virtual stages)"): Megatron's
 * --virtual-pipeline-model-parallel-size by its abbreviations; 0 none. */
static int64_t pp_remark_virtual(const char *pp)
{
    const char *t = nz(pp);
    static const char *const keys[] = {"vpp", "vp", "v"};
    for (const char *p = t; *p; p++) {
        if (p > t && isalnum((unsigned char)p[-1]))
            continue;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            size_t n = strlen(keys[k]);
            if (strncasecmp(p, keys[k], n) != 0)
                continue;
            const char *q = p + n;
            while (*q == ' ' || *q == '=' || *q == ':')
                q++;
            if (q > p + n && isdigit((unsigned char)*q))
                return strtol(q, NULL, 10);
            break;
        }
        /* "2 virtual stages", "2 virtual" */
        if (isdigit((unsigned char)*p)) {
            char *e;
            long k = strtol(p, &e, 10);
            while (*e == ' ')
                e++;
            if (strncasecmp(e, "virtual", 7) == 0)
                return k;
        }
    }
    return 0;
}

/* Does a count's text give tokens ("4M tokens"), not sequences with a
 * remark in tokens ("128 (512K tokens)")? */
static int says_tokens(const char *s)
{
    char t[64];
    snprintf(t, sizeof t, "%s", nz(s));
    plan__cut_remark(t);
    return contains(t, "token");
}

/* The virtual stages a row's virtual_stages text gives: a count as any
 * count column reads it ("4", "VP=4", "4 (12 layers each)") or written
 * among words ("interleaved (4 chunks)", "virtual pipeline 4"); Megatron's
 * layers per virtual stage (--num-layers-per-virtual-pipeline-stage N,
 * arguments.py: the count is layers / (pp N)) where the text says layers
 * per; "interleaved" without a number gives none (the schedule is
 * searched). 1 read, 0 not given, -1 bad (the row's reason set). */
static int read_virtual(const plan_validate_row *r, const plan_model *m, int64_t pp, int64_t *v,
                        plan_validate_result *out)
{
    const char *t = r->virtual_stages, *d = t;
    while (d && *d && !isdigit((unsigned char)*d))
        d++;
    long n = d && *d ? strtol(d, NULL, 10) : 0;
    double c;
    if (contains(t, "layers per") || contains(t, "layers_per") || contains(t, "layers-per")) {
        if (n < 1 || pp < 1 || m->layers % (pp * n) != 0) {
            skip(out, "virtual_stages '%.40s': %ld layers a virtual stage do not divide %lld "
                 "layers over pp %lld", t, n, (long long)m->layers, (long long)pp);
            return -1;
        }
        *v = m->layers / (pp * n);
        note(out, "%lld virtual stages: %ld layers each of %lld over pp %lld ('%.40s')",
             (long long)*v, n, (long long)m->layers, (long long)pp, t);
        return 1;
    }
    if (blank(t) || plan__read_count("virtual_stages", t, &c) >= 0)
        return plan__get_int(out, "virtual_stages", t, 1, 1 << 20, v);
    if (n >= 1) {
        *v = n;
        note(out, "%ld virtual stages ('%.40s')", n, t);
        return 1;
    }
    if (plan__virtual_unstated(t)) {
        note(out, "virtual_stages '%.40s': no count, the schedule searched", t);
        return 0;
    }
    return plan__get_int(out, "virtual_stages", t, 1, 1 << 20, v);
}

static int map_batch(const plan_validate_row *r, const plan_model *m, const plan_framework *fw,
                     int64_t gpus, int64_t dp, int64_t pp, row_layout *rl, int64_t *v_out,
                     int64_t *mbs_out, int64_t *nmb_out, int64_t *gb_out,
                     plan_validate_result *out)
{
    int64_t v = 1, mbs = 0, gb = 0, nmb = 0, ga = 0, gbt = 0;
    int hmbs, hgb, hnmb, hga, hgbt;
    /* a global batch given in tokens ("4M tokens") is the tokens' column's */
    const char *gbs = r->global_batch_size, *gbts = r->global_batch_tokens;
    if (says_tokens(gbs) && blank(gbts)) {
        gbts = gbs;
        gbs = "";
    }
    int hv;
    if ((hv = read_virtual(r, m, pp, &v, out)) < 0 ||
        (hmbs = plan__get_int(out, "micro_batch_size", r->micro_batch_size, 1, 1 << 24, &mbs)) < 0 ||
        (hgb = plan__get_int(out, "global_batch_size", gbs, 1, MAX_GLOBAL_BATCH, &gb)) < 0 ||
        (hgbt = plan__get_int(out, "global_batch_tokens", gbts, 1,
                        MAX_GLOBAL_BATCH * (int64_t)PLAN_MAX_SEQ, &gbt)) < 0 ||
        (hnmb = plan__get_int(out, "num_microbatches", r->num_microbatches, 1, 1 << 30, &nmb)) < 0 ||
        (hga = plan__get_int(out, "grad_accum_steps", r->grad_accum_steps, 1, 1 << 30, &ga)) < 0)
        return 1;
    if (hv == 0 && (v = pp_remark_virtual(r->pp)) > 1)
        note(out, "%lld virtual stages from the pipeline's remark ('%s')", (long long)v, r->pp);
    else if (hv == 0)
        v = 1;
    if (!hnmb && hga) {
        nmb = ga;
        hnmb = 1;
    }
    if (!hgb && hgbt && gbt % m->seq == 0) {
        gb = gbt / m->seq;
        hgb = 1;
    } else if (!hgb && hgbt) {
        /* a rounded token count ("2M tokens"): the nearest whole number of
         * sequences, within the batch rounding's tolerance */
        double q = (double)gbt / (double)m->seq, k = floor(q + 0.5);
        if (k >= 1 && fabs(q - k) <= PLAN__BATCH_ROUND_TOL * k) {
            gb = (int64_t)k;
            hgb = 1;
            note(out, "global batch %lld tokens read as %lld sequences of %lld", (long long)gbt,
                 (long long)gb, (long long)m->seq);
        }
    }
    if (!hgb) {
        /* Published TFLOP/s and time pin the batch under the row's convention. */
        double tf, t;
        plan_validate_basis b;
        double f1 = convention_flops(r, fw, m, 1.0, -1, 1.0, &b);
        if (parse_num(r->tflops_per_gpu, &tf) == 1 && parse_num(r->iteration_time_s, &t) == 1 &&
            f1 > 0 && tf > 0 && t > 0) {
            double B = tf * 1e12 * (double)gpus * t / f1;
            double Br = floor(B + 0.5);
            if (Br >= 1 && Br <= (double)MAX_GLOBAL_BATCH &&
                fabs(B - Br) <= DERIVED_BATCH_TOL * Br) {
                gb = (int64_t)Br;
                note(out, "global batch %lld derived from TFLOP/s and time (%s)", (long long)gb,
                     plan_validate_basis_name(b));
            }
        }
        if (!gb && hmbs && hnmb && dp > 0 && !rl->search_degrees) {
            /* the micro-batch times the microbatches of each replica */
            gb = mbs * nmb * dp;
            note(out, "global batch %lld = dp %lld x micro-batch %lld x %lld microbatches",
                 (long long)gb, (long long)dp, (long long)mbs, (long long)nmb);
        } else if (!gb && hmbs && dp > 0 && pp == 1 && !rl->search_degrees &&
                   measures_rate(r)) {
            /* a rate with a batch per replica and no accumulation named:
             * one microbatch a step (a rate is per token, so the
             * accumulation a run may have had barely moves it) */
            gb = mbs * dp;
            nmb = 1;
            hnmb = 1;
            note(out, "global batch not published: dp %lld x micro-batch %lld, one microbatch a "
                      "step (the measured figure is a rate)", (long long)dp, (long long)mbs);
        }
        if (!gb)
            return skip(out, "global batch not published");
    }

    if (rl->search_degrees) {
        /* the degrees are searched, with the micro-batch where the row
         * does not publish it (search_mbs): a published one is what ran */
        rl->search_mbs = !hmbs;
        mbs = hmbs ? mbs : 1;
        nmb = 1;
    } else if (hmbs && hnmb) {
        if (gb % (dp * mbs) != 0 || gb / (dp * mbs) != nmb)
            return skip(out, "global batch %lld != dp %lld x micro-batch %lld x %lld microbatches",
                        (long long)gb, (long long)dp, (long long)mbs, (long long)nmb);
    } else if (hmbs) {
        int64_t w = whole_batch(gb, dp * mbs, out);
        if (!w)
            return skip(out, "global batch %lld is not a multiple of dp %lld x micro-batch %lld",
                        (long long)gb, (long long)dp, (long long)mbs);
        gb = w;
        nmb = gb / (dp * mbs);
    } else if (hnmb) {
        if (gb % (dp * nmb) != 0)
            return skip(out, "global batch %lld is not a multiple of dp %lld x %lld microbatches",
                        (long long)gb, (long long)dp, (long long)nmb);
        mbs = gb / (dp * nmb);
    } else if (fw->local_batch && pp > 1) {
        /* no gradient accumulation, but a pipeline splits the replica's
         * batch into microbatches, as many as it has stages unless set
         * (torchtitan: experimental.pipeline_parallel_microbatches, default
         * the pipeline degree, pipeline_llama.py) */
        int64_t w = whole_batch(gb, dp * pp, out);
        if (!w)
            return skip(out, "global batch %lld does not split into dp %lld x pp %lld "
                        "microbatches (%s: a replica's batch in as many microbatches as "
                        "stages)", (long long)gb, (long long)dp, (long long)pp, fw->label);
        gb = w;
        nmb = pp;
        mbs = gb / (dp * pp);
        note(out, "micro-batch %lld: a replica's batch of %lld in %lld microbatches (%s: no "
             "gradient accumulation; as many microbatches as pipeline stages)", (long long)mbs,
             (long long)(gb / dp), (long long)nmb, fw->label);
    } else if (fw->local_batch) {
        int64_t w = whole_batch(gb, dp, out);
        if (!w)
            return skip(out, "global batch %lld is not a multiple of dp %lld", (long long)gb,
                        (long long)dp);
        gb = w;
        mbs = gb / dp;
        nmb = 1;
        note(out, "micro-batch %lld = global / dp (%s: no gradient accumulation)", (long long)mbs,
             fw->label);
    } else {
        int64_t w = whole_batch(gb, dp, out);
        if (!w)
            return skip(out, "global batch %lld is not a multiple of dp %lld", (long long)gb,
                        (long long)dp);
        gb = w;
        rl->search_mbs = 1;
        mbs = 1;
        nmb = gb / dp;
    }
    if (mbs > INT_MAX || nmb > INT_MAX)
        return skip(out, "micro-batch or microbatch count too large");
    *v_out = v;
    *mbs_out = mbs;
    *nmb_out = nmb;
    *gb_out = gb;
    return 0;
}

/* What the first of a row's columns (NULL: none) that names a knob says
 * of it, by reader says (1 on, 0 said off, -1 not named): -1 when none
 * names it. */
static int first_said(int (*says)(const char *), const char *a, const char *b, const char *c,
                      const char *d)
{
    const char *const cols[] = {a, b, c, d};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        int v = cols[i] ? says(cols[i]) : -1;
        if (v >= 0)
            return v;
    }
    return -1;
}

/* Activation offloading where the row names it (in its recompute, stack or
 * notes): the stack's own, which offloads checkpoints and so needs
 * recompute (SageMaker Developer Guide, Activation offloading: "applicable
 * only when used together with activation checkpointing"); a stack
 * without it or a run without recompute: skipped, saying so. */
static int map_act_offload(const plan_validate_row *r, const plan_framework *fw, plan_layout *l,
                           plan_validate_result *out)
{
    int says = first_said(plan__says_act_offload, r->recompute, r->framework, r->other_metrics,
                          r->notes);
    if (says <= 0)
        return 0;
    if (!fw->offload)
        return skip(out, "activation offloading: %s has none modelled", fw->label);
    if (l->recompute != PLAN_RECOMP_FULL)
        return skip(out, "activation offloading without full recompute: the stack offloads "
                    "checkpointed activations, so the row contradicts itself");
    l->offload_activations = 1;
    if (fw->offload_layers_held > 0)
        note(out, "activation offloading (%s: the checkpointed layers' inputs on the host, "
             "all but %d a stage)", fw->label, fw->offload_layers_held);
    else
        note(out, "activation offloading (%s: the checkpoints of the microbatches not "
             "running on the host)", fw->label);
    return 0;
}

/* Recompute, optimizer sharding and sequence parallelism as the row
 * states them, else the stack's defaults. */
static int map_memory_knobs(const plan_validate_row *r, const plan_framework *fw, int gpn,
                            int64_t tp, int64_t pp, int64_t cp, int64_t dp, row_layout *rl,
                            plan_validate_result *out)
{
    plan_layout *l = &rl->l;
    int rc = plan__parse_recompute(r->recompute);
    if (rc == -1)
        return skip(out, "recompute '%s' not understood", r->recompute);
    if (rc == -3)
        return skip(out, "recompute '%s': a policy that saves some matmuls on the host (or "
                    "does not say which), which the model does not have", r->recompute);
    /* a recompute the row says it derived (say, from its stack's default
     * config) is its reading, not the run's: taken as given, but, like an
     * unstated one, read again from the memory the run had when it cannot
     * have held it (plan__validate_evaluate) */
    rl->recompute_defaulted = rc == -2 || plan__row_derives(r, "recompute");
    if (rc != -2 && rl->recompute_defaulted)
        note(out, "recompute '%s' derived by the row, not printed for the run", r->recompute);
    if (rc == -2) {
        rc = fw->recompute_default;
        note(out, "recompute %s (%s default)", plan_recompute_name((plan_recompute)rc), fw->label);
    }
    l->recompute = (plan_recompute)rc;
    int saved = rc == PLAN_RECOMP_FULL ? plan__parse_remat_saved(r->recompute) : -1;
    if (saved > 0) {
        l->recompute_saved = saved;
        note(out, "full recompute of the products' outputs the remat policy does not keep");
    }
    int block, n = rc == PLAN_RECOMP_FULL ? plan__parse_recompute_layers(r->recompute, &block) : -1;
    int every = rc == PLAN_RECOMP_FULL ? plan__parse_recompute_every(r->recompute) : -1;
    if (every > 0) {
        /* every Nth layer checkpointed: floor(Lc / N) of a chunk's Lc
         * layers recomputed, the others keep their activations (costed as
         * the block method's count: the layers' costs are the same) */
        int64_t chunk = out->model.layers / (pp * (l->virtual_stages > 0 ? l->virtual_stages : 1));
        n = (int)(chunk / every);
        block = 1;
        note(out, "full recompute of one layer in %d: %d of each chunk's %lld", every, n,
             (long long)chunk);
    }
    if (n == 0 && block) {
        l->recompute = PLAN_RECOMP_NONE;
        note(out, "recompute none (the block method with 0 layers)");
    } else if (n > 0 && block) {
        l->recompute_layers = n;
        note(out, "recompute the first %d layer%s of each model chunk (the block method)", n,
             n == 1 ? "" : "s");
    } else if (n > 0) {
        l->recompute_group = n;
        note(out, "recompute in checkpoints of %d layer%s (the uniform method)", n,
             n == 1 ? "" : "s");
    }

    int degree;
    int sh = plan__parse_sharding(r->optimizer_sharding, &degree);
    if (sh == -1)
        return skip(out, "optimizer_sharding '%s' not understood", r->optimizer_sharding);
    if (sh == -3)
        return skip(out, "optimizer_sharding '%s': states offloaded to the host, which the model "
                    "does not have", r->optimizer_sharding);
    if (sh == -2) {
        /* a stage the framework's text names ("DeepSpeed ZeRO-3"), by the
         * same documented names as the column's */
        int fdeg = 0, fsh = plan__parse_sharding(r->framework, &fdeg);
        if (fsh == -3)
            return skip(out, "framework '%s': states offloaded to the host, which the model does "
                        "not have", r->framework);
        if (fsh >= 0 && !blank(r->framework) && (fsh != (int)fw->sharding_default || fdeg != 0)) {
            sh = fsh;
            degree = fdeg;
            if (sh != PLAN_SHARD_NONE && dp * cp > 1)
                note(out, "sharding %s (named by the framework)", plan_sharding_name((plan_sharding)sh));
        }
    }
    if (sh == -2) {
        sh = fw->sharding_default;
        /* a default the stack does not combine with its pipeline steps down
         * to the strongest sharding it does (torchtitan keeps each block's
         * gathered parameters with a pipeline: SHARD_GRAD_OP) */
        while (pp > 1 && sh > PLAN_SHARD_NONE && !(fw->shardings_with_pp & (1u << sh)))
            sh--;
        if (sh != PLAN_SHARD_NONE && dp * cp > 1)
            note(out, "sharding %s (%s default)", plan_sharding_name((plan_sharding)sh), fw->label);
    }
    /* a stated sharding the stack does not combine with its pipeline is
     * the strongest it does there, as it runs it (torchtitan's FSDP with a
     * pipeline keeps each block's gathered parameters: SHARD_GRAD_OP) */
    if (pp > 1 && sh > PLAN_SHARD_NONE && !(fw->shardings_with_pp & (1u << sh))) {
        int was = sh;
        while (sh > PLAN_SHARD_NONE && !(fw->shardings_with_pp & (1u << sh)))
            sh--;
        note(out, "sharding %s: %s runs %s with a pipeline as that", plan_sharding_name((plan_sharding)sh),
             fw->label, plan_sharding_name((plan_sharding)was));
    }
    if (dp * cp == 1)
        sh = PLAN_SHARD_NONE;
    l->sharding = (plan_sharding)sh;
    if (degree == -1)
        degree = gpn;
    if (degree > 0 && degree < dp * cp && (dp * cp) % degree == 0) {
        l->sharding_degree = degree;
        note(out, "shards over groups of %d, replicated across %lld", degree,
             (long long)(dp * cp / degree));
    }

    int sp = plan__parse_flag(r->sequence_parallel);
    /* DeepSpeed's sequence parallelism is Ulysses, read as context
     * parallelism (map_degrees); Megatron-DeepSpeed does not combine it
     * with Megatron's ("Cannot be combined with --sequence-parallel",
     * megatron/arguments.py) */
    if (plan__ulysses_degree(r->sequence_parallel) >= 0)
        sp = 0;
    /* the column naming the technique says it was on ("SP",
     * "--sequence-parallel", "sequence parallelism") */
    if (sp == -1 && (contains(r->sequence_parallel, "sequence-parallel") ||
                     contains(r->sequence_parallel, "sequence parallel") ||
                     contains(r->sequence_parallel, "sequence_parallel") ||
                     strcasecmp(r->sequence_parallel, "SP") == 0))
        sp = !plan__key_says_no(r->sequence_parallel, "parallel"); /* "...=False" */
    if (sp == -1)
        return skip(out, "sequence_parallel '%s' not understood", r->sequence_parallel);
    if (sp == -2) {
        sp = fw->sp_default && tp > 1;
        if (sp)
            note(out, "sequence parallel (%s default with TP)", fw->label);
    }
    l->sequence_parallel = sp && tp > 1;
    return 0;
}

/* The row's precision, fp32 gradients and FSDP mixed-precision mode. 1:
 * skipped (a format the planner does not model). */
static int map_precision(const plan_validate_row *r, const plan_framework *fw, plan_layout *l,
                         plan_validate_result *out)
{
    const char *p = r->precision;
    int prec = plan__parse_precision(p);
    if (prec == PLAN__PREC_FP4)
        return skip(out, "precision '%s': 4-bit floating point (FP4) linears, which the planner "
                    "does not model (its formats: bf16, fp16, FP8, fp32)", p);
    if (prec == -2) {
        /* not stated: the release's default, never a guess from the
         * measured time */
        prec = fw->precision_default;
        if (!blank(p))
            note(out, "precision %s (%s default)", plan_precision_name((plan_precision)prec),
                  fw->label);
    }
    l->precision = (plan_precision)prec;
    if (contains(p, "fp32 grad")) {
        l->fp32_grads = 1;
        note(out, "fp32 gradients (4 bytes)");
    }
    /* FSDP mixed-precision modes by their documented names (Composer's
     * fsdp_config mixed_precision 'DEFAULT', 'PURE' or 'FULL', upper case):
     * DEFAULT reduces gradients in fp32 (reduce_dtype float32), PURE in the
     * 16-bit type, FULL computes in fp32 */
    int mode = plan__fsdp_mp_mode(p);
    if (mode == 1) {
        l->fp32_grads = 1;
        note(out, "gradients reduced in fp32 (mixed precision DEFAULT)");
    } else if (mode == 2) {
        l->fp32_grads = 0;
    } else if (mode == 3) {
        l->precision = PLAN_PREC_FP32;
        note(out, "fp32 compute (mixed precision FULL)");
    }
    return 0;
}

/* TP communication overlap a run names (plan__says_tp_overlap) on a stack
 * that has the knob: on is its pipelined overlap (with torchtitan's async TP
 * the run was compiled: "Async TP requires --training.compile",
 * parallelize_llama.py); off the highest level below it the stack still
 * runs (Megatron-Core without --tp-comm-overlap keeps the backward's
 * asynchronous all-reduce). */
static void map_tp_overlap(const plan_validate_row *r, const plan_framework *fw, plan_layout *l,
                           plan_validate_result *out)
{
    int said = first_said(plan__says_tp_overlap, NULL, r->framework, r->other_metrics, r->notes);
    if (said < 0 || l->tp < 2)
        return;
    unsigned tpo = plan_framework_tp_overlaps(fw);
    if (said && !((tpo >> 2) & 1)) {
        note(out, "TP overlap named: %s has no such knob modelled", fw->label);
        return;
    }
    if (said) {
        l->tp_overlap = 2;
        if (fw->async_tp && fw->compile)
            l->compiled = 1;
        note(out, "TP communication pipelined behind its products (%s)",
             fw->async_tp ? "async TP, compiled" : "the stack's overlap");
        return;
    }
    int lvl = (tpo >> 1) & 1 ? 1 : 0;
    if (l->tp_overlap > lvl) {
        l->tp_overlap = lvl;
        note(out, "TP overlap off as stated (%s)", lvl ? "the backward's all-reduce still "
                                                         "overlapped" : "exposed");
    }
}

static int map_layout(const plan_validate_row *r, const plan_model *m, int64_t gpus, int gpn,
                      int fwi, row_layout *rl, plan_validate_result *out)
{
    const plan_framework *fw = plan_framework_get(fwi);
    plan_layout *l = &rl->l;
    plan_layout_default(l);
    plan_framework_apply(fw, fwi, l);
    map_attention(r, l, out);
    rl->search_mbs = 0;
    int64_t tp, pp, cp, dp, v = 1, mbs = 0, gb = 0, nmb = 0;
    rl->search_degrees = 0;
    if (map_degrees(r, fw, gpn, gpus, &tp, &pp, &cp, &dp, &rl->search_degrees, out))
        return 1;
    if (map_batch(r, m, fw, gpus, dp, pp, rl, &v, &mbs, &nmb, &gb, out))
        return 1;

    l->tp = (int)tp;
    l->pp = (int)pp;
    l->cp = (int)cp;
    l->dp = (int)dp;
    l->micro_batch = (int)mbs;
    l->microbatches = (int)nmb;
    l->active_microbatches = fw->active_cap ? (int)pp + 2 : PLAN__NO_ACTIVE_CAP;
    l->global_batch = gb;
    l->schedule = v > 1 ? PLAN_SCHED_VIRTUAL : PLAN_SCHED_INTERLEAVED;
    /* a run that does not say: the one schedule its stack runs unless told
     * (schedules_unknown naming one, Nanotron's all-forward-all-backward) */
    unsigned su = fw->schedules_unknown;
    if (v == 1 && pp > 1 && su && !(su & (su - 1))) {
        int s = 0;
        while (!(su & (1u << s)))
            s++;
        l->schedule = (plan_schedule)s;
        note(out, "schedule %s (%s default)", plan_framework_schedule_name(l), fw->label);
    }
    l->virtual_stages = (int)v;
    l->recompute_group = 1;
    l->prescaled_batch = 0;
    l->offload_activations = 0;
    if (fw->launch_blocking)
        note(out, "blocking kernel launches (%s: CUDA_LAUNCH_BLOCKING=1)", fw->label);
    if (plan__says_compiled(r->framework) || plan__says_compiled(r->other_metrics) ||
        plan__says_compiled(r->notes)) {
        if (fw->compile) {
            l->compiled = 1;
            note(out, "torch.compile (%s: its pointwise ops fused)", fw->label);
        } else {
            note(out, "torch.compile named: %s has no such knob modelled", fw->label);
        }
    }
    /* the run's own fused kernels for what the stack's model runs as
     * separate ATen ops (TinyLlama's fused RMSNorm, SwiGLU and rotary
     * kernels; Liger's) */
    if (fw->unfused_pointwise && !l->compiled &&
        (plan__says_fused_kernels(r->framework) || plan__says_fused_kernels(r->other_metrics) ||
         plan__says_fused_kernels(r->notes) || plan__says_fused_kernels(r->architecture))) {
        l->fused_pointwise = 1;
        note(out, "fused kernels named: the norms, the MLP's activation and the rotary embedding "
             "costed and stored as fused, not as %s's separate ops", fw->label);
    }

    map_tp_overlap(r, fw, l, out);
    if (map_memory_knobs(r, fw, gpn, tp, pp, cp, dp, rl, out))
        return 1;
    if (map_act_offload(r, fw, l, out))
        return 1;
    return map_precision(r, fw, l, out);
}

/* The published step time: iteration_time_s, else tokens per step over the
 * tokens per second, else TFLOP/s (or MFU x peak) under the row's FLOP
 * convention. 1: compared; 0: the row's reason is set. */
static int reference_time(const plan_validate_row *row, const plan_model *m, const plan_layout *l,
                          int64_t gpus, const plan_cluster *c, plan_validate_result *out)
{
    double t = 0, x = 0;
    int ht = plan__get_measure(out, "iteration_time_s", row->iteration_time_s, PLAN_UNITS_TIME, &t);
    if (ht < 0)
        return 0;
    if (ht > 0) {
        if (t < MIN_TIME_S || t > MAX_TIME_S)
            return !skip(out, "iteration_time_s %g: outside %g to %g s", t, MIN_TIME_S, MAX_TIME_S);
        out->basis = PLAN_VAL_BASIS_TIME;
        out->ref_time_s = t;
        return 1;
    }
    double tokens = (double)l->global_batch * (double)m->seq, rate = 0;
    int hr = plan__get_measure(out, "tokens_per_s_total", row->tokens_per_s_total, PLAN_UNITS_RATE, &x);
    if (hr < 0)
        return 0;
    if (hr > 0)
        rate = x;
    else {
        hr = plan__get_measure(out, "tokens_per_s_per_gpu", row->tokens_per_s_per_gpu, PLAN_UNITS_RATE, &x);
        if (hr < 0)
            return 0;
        if (hr > 0)
            rate = x * (double)gpus;
    }
    /* samples (sequences) per second: seq tokens each */
    int hsm = rate > 0 ? 0
                       : plan__get_measure(out, "samples_per_s", row->samples_per_s, PLAN_UNITS_SAMPLES, &x);
    if (hsm < 0)
        return 0;
    if (hsm > 0)
        rate = x * (double)m->seq;
    if (rate > 0) {
        if (rate > MAX_RATE)
            return !skip(out, "tokens per second %g: above %g", rate, MAX_RATE);
        out->basis = PLAN_VAL_BASIS_TOKENS;
        out->ref_time_s = tokens / rate;
        note(out, "reference time from %.0f tokens/s%s", rate, hsm > 0 ? " (samples/s x seq)" : "");
        return 1;
    }
    double tf = 0, mfu = 0, hfu = 0, pct = 0, agg = 0, peak = 0;
    int hf = plan__get_measure(out, "tflops_per_gpu", row->tflops_per_gpu, PLAN_UNITS_TFLOPS, &tf);
    int hm = plan__get_pct(out, "mfu_pct", row->mfu_pct, &mfu);
    int hh = plan__get_pct(out, "hfu_pct", row->hfu_pct, &hfu);
    int hp = plan__get_pct(out, "pct_of_peak_reported", row->pct_of_peak_reported, &pct);
    int ha = plan__get_measure(out, "aggregate_pflops", row->aggregate_pflops, PLAN_UNITS_PFLOPS, &agg);
    if (hf < 0 || hm < 0 || hh < 0 || hp < 0 || ha < 0)
        return 0;
    /* the stated peak a percentage is of, else the GPU's dense one */
    peak = parse_num(row->peak_basis_tflops, &peak) == 1 && peak > 0 ? peak
                                                                       : c->gpu->peak_flops / 1e12;
    if (hf == 0 && ha > 0) {
        /* the whole cluster's rate, in the same convention */
        tf = agg * 1e3 / (double)gpus;
        hf = 1;
    } else if (hf == 0 && hp > 0 && !hm && !hh) {
        /* a percentage of peak in the row's FLOP convention */
        tf = pct / 100.0 * peak;
        hf = 1;
    }
    /* HFU: hardware FLOPs over the peak (Chowdhery et al. 2022, App. B) */
    int hfu_only = hf == 0 && hm == 0 && hh > 0;
    if (hfu_only) {
        tf = hfu / 100.0 * peak;
        hf = 1;
    }
    if (hf == 0 && hm == 0)
        return !skip(out, "neither iteration_time_s, tokens/s nor tflops_per_gpu published");
    double F = 0;
    if (hfu_only) {
        F = hardware_flops(m, (double)l->global_batch, (int)l->recompute,
                           plan_layout_recompute_share(m, l));
        out->basis = PLAN_VAL_BASIS_HARDWARE;
    } else {
        F = convention_flops(row, plan_framework_get(l->framework), m,
                             (double)l->global_batch, (int)l->recompute,
                             plan_layout_recompute_share(m, l), &out->basis);
    }
    int named = plan__conv_parse(row->tflops_convention) != CONV_UNKNOWN;
    if (hm > 0 && (hf == 0 || !named)) {
        tf = mfu / 100.0 * peak;
        if (!named) {
            /* MFU counts model FLOPs by its definition (Chowdhery et al.
             * 2022, App. B: the FLOPs of the model without recompute) */
            F = plan_validate_megatron_flops(m, (double)l->global_batch);
            out->basis = PLAN_VAL_BASIS_MEGATRON;
            note(out, "MFU over model FLOPs, its definition (Chowdhery et al. 2022, App. B)");
        }
    }
    if (!hfu_only && !named)
        note(out, "TFLOP/s convention %s%s%s: %s",
             blank(row->tflops_convention) ? "not stated" : "'",
             blank(row->tflops_convention) ? "" : row->tflops_convention,
             blank(row->tflops_convention) ? "" : "' names no count smdplan reads",
             out->basis == PLAN_VAL_BASIS_HARDWARE
                 ? "the FLOPs the GPUs executed (hardware FLOPs, Chowdhery et al. 2022, App. B)"
                 : "model FLOPs, the count the stack's own logs print (tflops_model)");
    out->ref_time_s = F / (tf * 1e12 * (double)gpus);
    if (out->ref_time_s < MIN_TIME_S || out->ref_time_s > MAX_TIME_S)
        return !skip(out, "reference time %g s from %g TFLOP/s: outside %g to %g s",
                     out->ref_time_s, tf, MIN_TIME_S, MAX_TIME_S);
    note(out, "reference time from %.1f TFLOP/s per GPU (%s)", tf,
         plan_validate_basis_name(out->basis));
    return 1;
}

/* One reading of the row; with no_infer, a recompute the row leaves out
 * stays its stack's default whatever the memory (plan_validate_run). */
static int validate_once(const plan_catalog *cat, const plan_validate_row *row,
                         const plan_recompute_floor *floor, plan_validate_result *out,
                         plan_terms *terms, int no_infer, st_err *err)
{
    memset(out, 0, sizeof *out);
    copy(out->row_id, sizeof out->row_id, row->row_id);
    copy(out->source_key, sizeof out->source_key, row->source_key);
    if (terms)
        terms->n = 0;

    int fwi = plan__row_framework(row, out);
    out->framework = fwi;
    const plan_framework *fw = plan_framework_get(fwi);

    if (plan__map_model(row, fw, out))
        return ST_OK;
    plan_model *m = &out->model;

    int64_t gpus = 0;
    const char *how = NULL;
    /* a count of nodes, not of GPUs ("8 DGX H100 nodes"), where the text
     * is no count of GPUs ("4 nodes x 4 GPUs" is 16) */
    double dg;
    int64_t by_nodes = plan__read_count("num_gpus", row->num_gpus, &dg) >= 0
                           ? 0
                           : plan__gpus_of_nodes(cat, row, row->num_gpus, &how);
    int hg = by_nodes > 0 ? 1 : plan__get_int(out, "num_gpus", row->num_gpus, 1, 1 << 24, &gpus);
    if (hg < 0)
        return ST_OK;
    if (by_nodes > 0) {
        gpus = by_nodes;
        note(out, "%lld GPUs: %s", (long long)gpus, how);
    }
    if (hg == 0 && (gpus = plan__gpus_of_layout(cat, row, &how)) > 0) {
        hg = 1;
        note(out, "%lld GPUs: %s", (long long)gpus, how);
    }
    if (hg == 0) {
        skip(out, "number of GPUs not published");
        return ST_OK;
    }
    if (plan__map_cluster(cat, row, gpus, out))
        return ST_OK;

    row_layout rl;
    if (map_layout(row, m, gpus, out->inst.gpus_per_node, fwi, &rl, out))
        return ST_OK;
    /* a half precision the row does not name as bfloat16 is the chip's own
     * on one without bf16 tensor cores (V100, T4: Volta and Turing have
     * fp16 only, NVIDIA's architecture whitepapers); the cost is the same */
    const plan_gpu *chip = out->inst.gpu_index >= 0 && out->inst.gpu_index < cat->ngpus
                               ? &cat->gpus[out->inst.gpu_index]
                               : NULL;
    if (chip && chip->fp16_only && rl.l.precision == PLAN_PREC_BF16 &&
        !contains(row->precision, "bf16") && !contains(row->precision, "bfloat")) {
        rl.l.precision = PLAN_PREC_FP16;
        note(out, "precision fp16 (the %s has no bf16 tensor cores)", chip->name);
    }
    /* FP8 linears need FP8 tensor cores (Hopper and later: Transformer
     * Engine's fp8_autocast refuses older devices); a row saying FP8 on
     * another chip contradicts itself */
    if (chip && rl.l.precision == PLAN_PREC_FP8 && !(chip->fp8_peak_flops > 0)) {
        skip(out, "precision '%s': the %s has no FP8 tensor cores", nz(row->precision),
             chip->name);
        return ST_OK;
    }
    /* the framework pads the vocabulary to whole GEMM tiles per TP rank */
    if (fw->vocab_multiple > 0) {
        int64_t q = (int64_t)fw->vocab_multiple * rl.l.tp;
        int64_t padded = (m->vocab + q - 1) / q * q;
        if (padded != m->vocab) {
            note(out, "vocabulary %lld padded to %lld (%s)", (long long)m->vocab,
                 (long long)padded, fw->label);
            m->vocab = padded;
            st_err e = {0};
            plan_model_finish(m, &e);
        }
    }
    out->have_layout = 1; /* the cluster needs it; cleared below if rejected */
    plan_cluster c;
    st_err ce = {0};
    if (plan_validate_cluster(cat, out, &c, &ce) != ST_OK) {
        out->have_layout = 0;
        skip(out, "cluster %d x %s: %s", out->nodes, out->inst.name, ce.msg);
        return ST_OK;
    }
    out->have_layout = 0;

    plan_estimate *est = &out->est;
    out->recompute_open = rl.recompute_defaulted;
    if (floor && floor->kind >= 0 && rl.recompute_defaulted &&
        plan__recompute_rank(rl.l.recompute, rl.l.recompute_layers) <
            plan__recompute_rank((plan_recompute)floor->kind, floor->layers)) {
        rl.l.recompute = (plan_recompute)floor->kind;
        rl.l.recompute_layers = floor->layers;
        rl.recompute_defaulted = 0;
        out->recompute_shared = 1;
        out->recompute_floor = *floor;
        char what[96];
        plan__recompute_words(rl.l.recompute, rl.l.recompute_layers, what, sizeof what);
        note(out, "recompute read as %s, the least that fits every run of this configuration "
                  "the source gives (row %s needs it): one configuration runs one recompute",
             what, floor->row_id);
    }
    if (no_infer)
        rl.recompute_defaulted = 0;
    int skipped, rc = plan__validate_evaluate(cat, m, &c, fw, row, &rl, out, &skipped, err);
    if (rc != ST_OK || skipped)
        return rc;
    if (terms) {
        st_err e = {0};
        plan_estimate again;
        plan_evaluate(m, &c, &rl.l, &again, terms, &e);
    }
    out->layout = rl.l;
    out->have_layout = 1;
    out->pred_oom = est->reject == PLAN_REJ_OOM;
    out->pred_time_s = est->time.step_s;
    out->pred_mem_bytes = est->mem.total_bytes;

    /* ---- memory ---- */
    out->ref_oom = plan__row_went_oom(row);
    double gb;
    int mem_read = out->ref_oom ? 0 : plan__measure_num(row->memory_per_gpu_gb, PLAN_UNITS_MEM, &gb);
    if (mem_read == -1)
        note(out, "memory_per_gpu_gb '%.40s': not a finite number, not compared",
             row->memory_per_gpu_gb);
    else if (mem_read == 1 && !(gb > 0))
        note(out, "memory_per_gpu_gb %g: not a GPU's memory, not compared", gb);
    if (mem_read == 1 && gb > 0) {
        if (gb > 1e6) {
            note(out, "memory_per_gpu_gb %g: not a GPU's memory, not compared", gb);
        } else {
            double unit;
            out->have_mem = 1;
            /* the tool named in the metric's column, else in the figure's
             * own remark ("62 GB (max reserved)") */
            out->mem_metric = plan__mem_metric(
                blank(row->memory_metric) ? row->memory_per_gpu_gb : row->memory_metric, &unit);
            if (contains(row->memory_per_gpu_gb, "GiB") || contains(row->memory_per_gpu_gb, "MiB"))
                unit = 1073741824.0;
            out->ref_mem_bytes = gb * unit;
            out->pred_mem_bytes = plan_validate_mem_bytes(out, &est->mem);
            if (out->mem_metric == PLAN_MEM_ALLOCATED)
                note(out, "memory compared as allocated by tensors");
            else if (out->mem_metric == PLAN_MEM_RESERVED)
                note(out, "memory compared as reserved by the caching allocator (tensors and "
                     "its cache, no CUDA context)");
            out->mem_error_pct =
                100.0 * (out->pred_mem_bytes - out->ref_mem_bytes) / out->ref_mem_bytes;
        }
    }
    if (out->pred_oom && !out->ref_oom) {
        char why[160];
        note(out, "planner: out of memory (%s), though the run fit; scored, and counted as a "
             "fit miss", plan_estimate_reason(est, why, sizeof why));
    }

    /* ---- time ---- */
    if (out->ref_oom) {
        skip(out, "published run went out of memory; planner %s (worst stage %.1f GiB of %.1f)",
             out->pred_oom ? "agrees: OOM" : "says it fits",
             plan_mem_need_bytes(&est->mem) / 1073741824.0,
             est->capacity_bytes / 1073741824.0);
        return ST_OK;
    }
    if (!reference_time(row, m, &out->layout, gpus, &c, out))
        return ST_OK;
    out->error_pct = 100.0 * (out->pred_time_s - out->ref_time_s) / out->ref_time_s;
    out->compared = 1;
    return ST_OK;
}

int plan_validate_run(const plan_catalog *cat, const plan_validate_row *row,
                      plan_validate_result *out, plan_terms *terms, st_err *err)
{
    return plan_validate_run_floor(cat, row, NULL, out, terms, err);
}

/* A GPU named without its memory, of a chip the catalog has in several
 * sizes ("A100": 40 and 80 GB), is read as the first of them
 * (plan_validate_cluster.c). A run that ran, whose layout that one cannot
 * hold as the row gives it (out of memory, or only with a recompute read
 * into the row), ran on a larger one: it is read with the smallest of the
 * chip's sizes that holds the layout with nothing read into it; with none,
 * as first read. */
int plan_validate_run_floor(const plan_catalog *cat, const plan_validate_row *row,
                            const plan_recompute_floor *floor, plan_validate_result *out,
                            plan_terms *terms, st_err *err)
{
    int rc = validate_once(cat, row, floor, out, terms, 0, err);
    if (rc != ST_OK || !out->have_layout || out->ref_oom || plan__row_states_mem(row) ||
        !(out->pred_oom || out->recompute_inferred))
        return rc;
    plan_validate_result *t = malloc(sizeof *t);
    if (!t)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    double first = out->est.capacity_bytes, mem = first;
    double next;
    while ((next = plan__larger_variant_mem(cat, row, mem)) > 0) {
        plan_validate_row alt = *row;
        char gb[32];
        snprintf(gb, sizeof gb, "%.0f", next / 1073741824.0);
        alt.gpu_mem_gb = gb;
        st_err e = {0};
        if (validate_once(cat, &alt, floor, t, NULL, 1, &e) == ST_OK && t->have_layout &&
            !t->pred_oom) {
            /* the terms of an explanation only for the reading kept */
            if (terms)
                rc = validate_once(cat, &alt, floor, out, terms, 1, err);
            else
                *out = *t;
            if (rc == ST_OK)
                note(out, "GPU memory not stated: read as %.0f GiB, the smallest of the chip's "
                     "sizes that holds the layout as the row gives it (the first, %.0f GiB, "
                     "cannot; the run ran)", next / 1073741824.0, first / 1073741824.0);
            break;
        }
        mem = next;
    }
    free(t);
    return rc;
}
