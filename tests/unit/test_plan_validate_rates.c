/*
 * test_plan_validate_rates.c: the reference time of a published run from
 * each figure a source may give instead of a step time (sequences per
 * second; TFLOP/s as the whole cluster's PFLOP/s or a percentage of peak,
 * in the row's FLOP convention; hardware FLOPs and HFU), and the kinds of
 * network the planner does not model, listed as such.
 *
 * The rows are the DGX Cloud Llama 3 70B run of test_plan_validate.c and a
 * GPT-3-shaped one; every expected time is worked from the row's own
 * numbers and the FLOP counts' closed forms.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "data/data_known_models.h"
#include "planner/plan_framework.h"
#include "planner/plan_validate.h"
#include "planner/plan_validate_int.h"
#include "test_validate_run.h"

/* DGX Cloud recipes v24.11.1, Llama 3 70B on 64 H100s, its time left out. */
static const plan_validate_row llama = {
    .row_id = "114", .source_key = "dgxc_bench_v24.11.1", .model_name = "LLAMA3-70B",
    .architecture = "Llama-3 (SwiGLU, RoPE, GQA)", .framework = "NeMo/Megatron-Core",
    .num_layers = "80", .hidden_size = "8192", .num_heads = "64", .num_kv_heads = "8",
    .ffn_hidden_size = "28672", .seq_len = "8192", .vocab_size = "128256",
    .gpu_type = "H100-SXM5-80GB", .num_gpus = "64", .tp = "4", .pp = "4", .dp = "2", .cp = "2",
    .virtual_stages = "5", .micro_batch_size = "1", .global_batch_size = "128",
    .num_microbatches = "64", .precision = "BF16", .recompute = "none",
};

/* A GPT-3-shaped run (multi-head, 4h MLP): Narayanan et al. 2021's Eq. 3
 * is its hardware FLOP count with full recompute. */
static const plan_validate_row gpt = {
    .row_id = "1", .source_key = "t", .model_name = "GPT 13B", .architecture = "GPT",
    .num_layers = "40", .hidden_size = "5120", .num_heads = "40", .seq_len = "2048",
    .vocab_size = "50257", .gpu_type = "A100-SXM4-80GB", .num_gpus = "64", .tp = "2", .pp = "1",
    .dp = "32", .micro_batch_size = "4", .global_batch_size = "1024", .precision = "bf16",
    .framework = "Megatron-LM", .recompute = "full",
};

/* Sequences per second are tokens per second over the sequence length. */
static void test_samples_per_s(void **state)
{
    (void)state;
    plan_validate_row x = llama;
    x.samples_per_s = "8.5";
    const plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_TOKENS);
    assert_rel(r->ref_time_s, 128.0 / 8.5, 1e-12);
    assert_non_null(strstr(r->notes, "samples/s x seq"));
}

/* Hardware FLOPs: Megatron's model count, plus the forward recomputed.
 * Without recompute the two conventions give one time; with full
 * recompute, on a GPT, hardware FLOPs are Eq. 3 exactly. */
static void test_hardware_flops(void **state)
{
    (void)state;
    plan_validate_row x = llama;
    x.tflops_per_gpu = "400";
    x.tflops_convention = "model FLOPs";
    double t_model = run(&x)->ref_time_s;
    x.tflops_convention = "hardware FLOPs";
    const plan_validate_result *r = run(&x);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_HARDWARE);
    assert_rel(r->ref_time_s, t_model, 1e-12);

    plan_validate_row g = gpt;
    g.tflops_per_gpu = "150";
    g.tflops_convention = "Narayanan Eq. 3";
    double t_eq3 = run(&g)->ref_time_s;
    g.tflops_convention = "TFLOP/s including recompute";
    r = run(&g);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_HARDWARE);
    assert_rel(r->ref_time_s, t_eq3, 1e-12);
    /* selective: the attention scores' forward again, 4 B s^2 l h */
    g.recompute = "selective";
    g.tflops_convention = "model FLOPs";
    double t_sel_model = run(&g)->ref_time_s;
    g.tflops_convention = "HFU";
    r = run(&g);
    double B = 1024, s = 2048, l = 40, h = 5120, gpus = 64, tf = 150e12;
    assert_rel(r->ref_time_s, t_sel_model + 4.0 * B * s * s * l * h / (tf * gpus), 1e-9);
    /* HFU as a percentage: hardware FLOPs over the GPU's dense peak */
    g.recompute = "full";
    g.tflops_per_gpu = "";
    g.tflops_convention = "";
    g.hfu_pct = "48.076923076923";
    r = run(&g);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_HARDWARE);
    assert_rel(r->ref_time_s, t_eq3, 1e-9); /* 48.08 % of 312 is 150 TFLOP/s */
}

/* The whole cluster's PFLOP/s and a percentage of peak are the per-GPU
 * rate in the row's convention; without a convention they say nothing. */
static void test_aggregate_and_pct(void **state)
{
    (void)state;
    plan_validate_row g = gpt;
    g.tflops_per_gpu = "150";
    g.tflops_convention = "Narayanan Eq. 3";
    double t = run(&g)->ref_time_s;
    g.tflops_per_gpu = "";
    g.aggregate_pflops = "9.6"; /* 150 TFLOP/s x 64 GPUs */
    const plan_validate_result *r = run(&g);
    assert_true(r->compared);
    assert_rel(r->ref_time_s, t, 1e-12);
    g.aggregate_pflops = "";
    g.pct_of_peak_reported = "50";
    g.peak_basis_tflops = "300";
    r = run(&g);
    assert_true(r->compared);
    assert_rel(r->ref_time_s, t, 1e-12);
    /* no count named: the count the stack's own logs print, model FLOPs
     * for Megatron-Core's (the latest release), the FLOPs executed for a
     * release that logs none (2021's), here with full recompute 4/3 of
     * them */
    g.tflops_convention = "";
    r = run(&g);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_MEGATRON);
    double t_model = r->ref_time_s;
    g.source_date = "2021-06";
    r = run(&g);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_HARDWARE);
    assert_true(r->ref_time_s > 1.2 * t_model);
}

/* A measured figure with its unit, as sources print one: tokens per
 * second (a decimal K or M), TFLOP/s, PFLOP/s, a percentage, the
 * percentage as a fraction; a unit of another quantity is refused. */
static void test_measured_units(void **state)
{
    (void)state;
    plan_validate_row x = llama;
    x.tokens_per_s_total = "70000";
    double t = run(&x)->ref_time_s;
    const char *rates[] = {"70K tokens/s", "0.07M tok/s", "70,000 tokens per second"};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        x.tokens_per_s_total = rates[i];
        const plan_validate_result *r = run(&x);
        if (!r->compared)
            fail_msg("'%s': %s", rates[i], r->reason);
        assert_rel(r->ref_time_s, t, 1e-12);
    }
    x.tokens_per_s_total = "70000 samples/s";
    refused(&x, "tokens_per_s_total '70000 samples/s'");
    x.tokens_per_s_total = "";
    x.tokens_per_s_per_gpu = "1093.75 tok/s/GPU"; /* 70000 / 64 */
    assert_rel(run(&x)->ref_time_s, t, 1e-12);

    plan_validate_row g = gpt;
    g.tflops_per_gpu = "150";
    g.tflops_convention = "Narayanan Eq. 3";
    double tg = run(&g)->ref_time_s;
    g.tflops_per_gpu = "150 TFLOP/s";
    assert_rel(run(&g)->ref_time_s, tg, 1e-12);
    g.tflops_per_gpu = "150 teraFLOPS per GPU";
    assert_rel(run(&g)->ref_time_s, tg, 1e-12);
    g.tflops_per_gpu = "";
    g.aggregate_pflops = "9.6 PFLOP/s";
    assert_rel(run(&g)->ref_time_s, tg, 1e-12);
    g.aggregate_pflops = "9.6 petaFLOPS";
    assert_rel(run(&g)->ref_time_s, tg, 1e-12);
    g.aggregate_pflops = "";
    g.peak_basis_tflops = "300";
    const char *pcts[] = {"50", "50%", "50 %", "0.5", "50 % of peak"};
    for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
        g.pct_of_peak_reported = pcts[i];
        const plan_validate_result *r = run(&g);
        if (!r->compared)
            fail_msg("'%s': %s", pcts[i], r->reason);
        assert_rel(r->ref_time_s, tg, 1e-12);
        if (i == 3)
            assert_non_null(strstr(r->notes, "read as a fraction"));
        else
            assert_null(strstr(r->notes, "read as a fraction"));
    }
}

/* The conventions by their documented names; a text naming a convention
 * and, after it, another utilisation reads as the first. */
static void test_convention_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        flop_conv want;
    } cases[] = {
        {"HFU", CONV_HARDWARE},
        {"hardware FLOPs utilization", CONV_HARDWARE},
        {"hardware TFLOPs", CONV_HARDWARE},
        {"hardware PFLOP/s of the cluster", CONV_HARDWARE},
        {"achieved TFLOP/s, with activation recomputation", CONV_HARDWARE},
        {"excluding recompute", CONV_MEGATRON},
        {"MFU", CONV_MEGATRON},
        {"MosaicML MFU: (6N + 12*l*h*s per token) model FLOPs; HFU adds recompute (8N)",
         CONV_MOSAIC},
        {"Megatron/Narayanan Eq.3 hardware TFLOPs", CONV_EQ3},
        {"dgxc: model FLOPs per README Notes (no recompute)", CONV_MEGATRON},
        {"DeepSpeed flops profiler", CONV_UNKNOWN},
        /* 6N alone is the weights' FLOPs (C = 6ND); with the attention's
         * 12 l h s beside it llm-foundry's count */
        {"6ND", CONV_PARAMS6},
        {"Kaplan et al. 2020, C = 6NBS", CONV_PARAMS6},
        {"6 * N * D model FLOPs", CONV_PARAMS6},
        {"6N + 12 l h s per token", CONV_MOSAIC},
        {"6N per token plus attention", CONV_MOSAIC},
        /* recomputation by its noun too; the stacks' logged key */
        {"including recomputation", CONV_HARDWARE},
        {"TFLOPs excluding activation recomputation", CONV_MEGATRON},
        {"without recomputation", CONV_MEGATRON},
        {"tflops_model", CONV_MEGATRON},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__conv_parse(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text, (int)plan__conv_parse(cases[i].text),
                     (int)cases[i].want);
}

/* A mixture-of-experts, encoder-decoder or state-space model is listed
 * with that reason, by its family's documented names, whatever shape the
 * row gives; a row that says it is dense is read as dense. */
static void test_structures(void **state)
{
    (void)state;
    static const struct {
        const char *model, *arch, *says;
    } cases[] = {
        {"Mixtral 8x7B", "", "mixture-of-experts"},
        {"GPT 13B", "MoE, 8 experts, top-2", "mixture-of-experts"},
        {"T5-11B", "", "encoder-decoder"},
        {"Mamba-2.8B", "", "state-space"},
        {"Flan-T5 XXL", "", "encoder-decoder"},
    };
    plan_validate_row g = gpt;
    g.iteration_time_s = "20";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        g.model_name = cases[i].model;
        g.architecture = cases[i].arch;
        const plan_validate_result *r = run(&g);
        assert_false(r->compared);
        if (!strstr(r->reason, cases[i].says) || !strstr(r->reason, "dense decoder-only"))
            fail_msg("'%s' / '%s': %s", cases[i].model, cases[i].arch, r->reason);
    }
    g.model_name = "GPT 13B";
    g.architecture = "dense decoder-only transformer";
    assert_true(run(&g)->compared);
    /* the JAX trainer T5X names no model */
    g.architecture = "";
    g.model_name = "GPT 13B (T5X)";
    assert_true(run(&g)->compared);
}

/* What a row that gives no MLP width or key-value heads is read with: a
 * gated MLP 2/3 of 4h (a multiple of 64, Megatron-LM's --swiglu), a plain
 * one 4h; multi-query attention one key-value head, unless the text names
 * grouped-query attention, which has several; a stated count wins. */
static void test_unstated_widths(void **state)
{
    (void)state;
    plan_validate_row g = gpt;
    g.iteration_time_s = "20";
    const plan_validate_result *r = run(&g);
    assert_true(r->compared);
    assert_int_equal(r->model.ffn, 4 * 5120);
    assert_int_equal(r->model.kv_heads, 40);
    g.architecture = "decoder-only, SwiGLU, RoPE, RMSNorm";
    r = run(&g);
    assert_true(r->compared);
    assert_int_equal(r->model.ffn, 13632); /* int(4 x 5120 x 2/3 / 64) x 64 */
    assert_non_null(strstr(r->notes, "ffn 13632: a gated MLP's 2/3 of 4h"));
    g.ffn_hidden_size = "13824";
    assert_int_equal(run(&g)->model.ffn, 13824);
    g.ffn_hidden_size = NULL;
    g.architecture = "GPT, multi-query attention";
    r = run(&g);
    assert_true(r->compared);
    assert_int_equal(r->model.kv_heads, 1);
    assert_non_null(strstr(r->notes, "1 key-value head (multi-query attention"));
    g.architecture = "GPT, GQA (generalized multi-query attention)";
    assert_int_equal(run(&g)->model.kv_heads, 40);
    g.architecture = "GPT, MQA";
    g.num_kv_heads = "8";
    assert_int_equal(run(&g)->model.kv_heads, 8);
    /* the column naming the attention's kind */
    g.architecture = "GPT";
    g.num_kv_heads = "MHA";
    assert_int_equal(run(&g)->model.kv_heads, 40);
    g.num_kv_heads = "MQA";
    assert_int_equal(run(&g)->model.kv_heads, 1);
}

/* A node's network as sources write it: counts before or after the rate
 * or port name, in digits or words, ports named by their InfiniBand
 * generation or their ConnectX adapter (its port's top speed). */
static void test_network_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double node_gbps;
    } cases[] = {
        {"8x NDR400", 3200},
        {"NDR400 x8", 3200},
        {"HDR200 x 4", 800},
        {"8 NDR", 3200},
        {"eight 400 Gb/s NICs", 3200},
        {"400 Gb/s (8 per node)", 3200},
        {"400 Gb/s, 4 NICs", 1600},
        {"ConnectX-7 (8 per node)", 3200},
        {"8x CX7 400G", 3200},
        {"NVLink 4 + 8x CX7 400G", 3200}, /* the plus sign parts the node's links */
        {"4x ConnectX-6", 800},
        {"dual 200 Gb/s HDR", 400},
        {"100 Gb/s x 4 EDR", 400},
        {"1600 Gbps RoCE", 1600},
        {"InfiniBand NDR", 0},  /* a generation without a count: not the node's rate */
        {"InfiniBand HDR (200 Gbps)", 0}, /* ... nor with its port's rate */
        {"NDR 400 Gb/s InfiniBand", 0},
        {"HDR 200 Gb/s per node", 200}, /* a node's, said so */
        {"HDR 1600 Gb/s", 1600},        /* not a port's rate: the node's */
        {"4 x 200 Gbps Slingshot-11", 800},
        {"400 Gbps InfiniBand", 0}, /* a port's rate, no generation named */
        {"RoCE 200 Gb/s", 0},
        {"100 Gbps InfiniBand", 100}, /* below a rail-optimised node's ports: the node's */
        {"1600 Gbps InfiniBand", 1600},
        {"ConnectX-7", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        net_text n;
        plan__net_parse(cases[i].text, &n);
        double got = (n.node_bps > 0 ? n.node_bps : 0) * 8.0 / 1e9;
        if (fabs(got - cases[i].node_gbps) > 1e-6)
            fail_msg("'%s': %g Gb/s a node, want %g", cases[i].text, got, cases[i].node_gbps);
    }
}

/* Half precision unnamed on a chip without bf16 tensor cores is its fp16;
 * a row that names bfloat16 keeps it (it ran as it ran); the time is the
 * same either way. */
static void test_half_on_volta(void **state)
{
    (void)state;
    plan_validate_row g = gpt;
    g.gpu_type = "V100-SXM3-32GB";
    g.iteration_time_s = "3";
    g.precision = "mixed precision";
    const plan_validate_result *r = run(&g);
    assert_true(r->compared);
    assert_int_equal(r->layout.precision, PLAN_PREC_FP16);
    assert_non_null(strstr(r->notes, "no bf16 tensor cores"));
    double t = r->pred_time_s;
    g.precision = "bf16";
    r = run(&g);
    assert_int_equal(r->layout.precision, PLAN_PREC_BF16);
    assert_rel(r->pred_time_s, t, 1e-12);
    g.gpu_type = "A100-SXM4-80GB";
    g.precision = "mixed precision";
    assert_int_equal(run(&g)->layout.precision, PLAN_PREC_BF16);
    /* a board with no reference node: its catalog node, said so */
    g.gpu_type = "H100 PCIe";
    r = run(&g);
    assert_non_null(strstr(r->notes, "catalog node pcie8-h100"));
    assert_null(strstr(r->notes, "reference node ("));
}

/* Counts as sources write them: a label before, a unit after, a binary K
 * or M, a remark in parentheses, approximate ("~", "about"), a degree's
 * way ("4-way", "4x"), per device; GPUs as nodes times GPUs, by their
 * chip, or as nodes of a known node; a batch in tokens is the tokens' column's;
 * a range or a unit of another column is not a count. The sequence
 * parallelism column naming the technique says it was on. */
static void test_count_words(void **state)
{
    (void)state;
    static const struct {
        const char *col, *text;
        int64_t gb, mbs, vs, seq; /* 0: refused */
        int sp;
    } cases[] = {
        {"mbs", "MBS=2", 1024, 2, 1, 2048, 1},
        {"mbs", "2 sequences", 1024, 2, 1, 2048, 1},
        {"mbs", "2 tokens", 0, 0, 0, 0, 0},
        {"mbs", "1-2", 0, 0, 0, 0, 0},
        {"gb", "1,024 sequences", 1024, 4, 1, 2048, 1},
        {"gb", "2M tokens", 1024, 4, 1, 2048, 1},
        {"gb", "1024 (ramp-up from 32)", 1024, 4, 1, 2048, 1},
        {"vs", "VPP 4", 1024, 4, 4, 2048, 1},
        /* after the stack's own knob name (SMP v2, Megatron-Core, NeMo) */
        {"vs", "virtual_pipeline_model_parallel_size: 4", 1024, 4, 4, 2048, 1},
        {"mbs", "micro_batch_size=2", 1024, 2, 1, 2048, 1},
        /* ... or after words */
        {"gb", "global batch size 1024", 1024, 4, 1, 2048, 1},
        {"mbs", "micro batch 2", 1024, 2, 1, 2048, 1},
        {"vs", "n/a", 1024, 4, 1, 2048, 1},
        {"seq", "2K", 1024, 4, 1, 2048, 1},
        /* an approximate count, a rounded one in M, a degree's way, a device */
        {"gb", "~2M tokens", 1024, 4, 1, 2048, 1},
        {"gb", "about 1024", 1024, 4, 1, 2048, 1},
        {"gb", "2.0M tokens", 1024, 4, 1, 2048, 1},
        {"vs", "4-way", 1024, 4, 4, 2048, 1},
        {"vs", "4x", 1024, 4, 4, 2048, 1},
        {"mbs", "2 per GPU", 1024, 2, 1, 2048, 1},
        {"mbs", "~", 0, 0, 0, 0, 0},
        /* GPUs as nodes times GPUs, or a number of the chip */
        {"gpus", "8 nodes x 8 GPUs", 1024, 4, 1, 2048, 1},
        {"gpus", "8x8", 1024, 4, 1, 2048, 1},
        {"gpus", "64 A100s", 1024, 4, 1, 2048, 1},
        {"gpus", "64 NVIDIA A100 GPUs", 1024, 4, 1, 2048, 1},
        {"gpus", "64 GCDs", 1024, 4, 1, 2048, 1}, /* an MI250X's halves, each a GPU */
        {"gpus", "8x8 nodes", 0, 0, 0, 0, 0},
        /* nodes: of the type named, else of the chip's reference node */
        {"gpus", "8 DGX A100 nodes", 1024, 4, 1, 2048, 1},
        {"gpus", "8 p4d.24xlarge nodes", 1024, 4, 1, 2048, 1},
        {"gpus", "4 nodes x 16 GPUs", 1024, 4, 1, 2048, 1},
        {"gpus", "64 (8 nodes)", 1024, 4, 1, 2048, 1},
        {"gpus", "16 nodes", 0, 0, 0, 0, 0},
        {"sp", "--sequence-parallel", 1024, 4, 1, 2048, 1},
        {"sp", "SP", 1024, 4, 1, 2048, 1},
        {"sp", "no", 1024, 4, 1, 2048, 0},
        /* a count with its words or a remark in tokens after it */
        {"vs", "4 virtual stages", 1024, 4, 4, 2048, 1},
        {"vs", "4 model chunks", 1024, 4, 4, 2048, 1},
        {"gb", "1024 (2M tokens)", 1024, 4, 1, 2048, 1},
        /* the virtual stages in the pipeline degree's remark */
        {"pp", "2 (interleaved, v=2)", 1024, 4, 2, 2048, 1},
        {"pp", "2 (VPP 2)", 1024, 4, 2, 2048, 1},
        {"pp", "2 (2 virtual stages)", 1024, 4, 2, 2048, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_validate_row g = gpt;
        g.framework = "Megatron-LM 3.0";
        g.iteration_time_s = "20";
        g.pp = "2";
        g.dp = "16";
        g.virtual_stages = "1"; /* stated: no schedule searched */
        const char *c = cases[i].col;
        if (!strcmp(c, "mbs"))
            g.micro_batch_size = cases[i].text;
        else if (!strcmp(c, "gb"))
            g.global_batch_size = cases[i].text;
        else if (!strcmp(c, "vs"))
            g.virtual_stages = cases[i].text;
        else if (!strcmp(c, "seq"))
            g.seq_len = cases[i].text;
        else if (!strcmp(c, "gpus"))
            g.num_gpus = cases[i].text;
        else if (!strcmp(c, "pp")) {
            g.pp = cases[i].text;
            g.virtual_stages = "";
        }
        else
            g.sequence_parallel = cases[i].text;
        const plan_validate_result *r = run(&g);
        if (!cases[i].gb) {
            if (r->compared)
                fail_msg("%s '%s': read, want refused", c, cases[i].text);
            continue;
        }
        if (!r->compared || r->layout.global_batch != cases[i].gb ||
            r->layout.micro_batch != cases[i].mbs || r->layout.virtual_stages != cases[i].vs ||
            r->model.seq != cases[i].seq || r->layout.sequence_parallel != cases[i].sp)
            fail_msg("%s '%s': compared %d gb %lld mbs %lld vs %d seq %lld sp %d (%s)", c,
                     cases[i].text, r->compared, (long long)r->layout.global_batch,
                     (long long)r->layout.micro_batch, r->layout.virtual_stages,
                     (long long)r->model.seq, r->layout.sequence_parallel, r->reason);
    }
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_per_s),
        cmocka_unit_test(test_hardware_flops),
        cmocka_unit_test(test_aggregate_and_pct),
        cmocka_unit_test(test_measured_units),
        cmocka_unit_test(test_convention_words),
        cmocka_unit_test(test_structures),
        cmocka_unit_test(test_unstated_widths),
        cmocka_unit_test(test_network_words),
        cmocka_unit_test(test_half_on_volta),
        cmocka_unit_test(test_count_words),
    };
    return cmocka_run_group_tests(tests, validate_setup_known, validate_teardown);
}
