/*
 * test_plan_validate.c: how published runs are read and compared.
 *
 * Rows are given as text, as in data/reference/calibration_runs.csv: a
 * Narayanan et al. 2021 row (reference time from TFLOP/s by Eq. 3, checked
 * by hand), Megatron-LM 2020 rows (time given, one GPU of a DGX-2, micro-
 * batch = local batch), a DGX Cloud Llama 3 70B row (GQA, CP 2, virtual
 * stages, NeMo defaults), the SageMaker reference rows (no shape), an OOM
 * row, inconsistent and malformed rows, and the error statistics.
 */
#include "test_util.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli.h"
#include "data/data.h"
#include "data/data_known_models.h"
#include "planner/plan_validate.h"
#include "planner/plan_framework.h"
#include "planner/plan_validate_explain.h"
#include "planner/plan_validate_int.h"
#include "test_validate_run.h"

/* The prediction is plan_evaluate's step time of the layout it reports, and
 * the error is (predicted - reference) / reference. */
static void check_error_arithmetic(const plan_validate_result *r)
{
    plan_cluster c;
    st_err err = {0};
    assert_int_equal(plan_validate_cluster(&cat, r, &c, &err), ST_OK);
    plan_estimate *e = calloc(1, sizeof *e);
    assert_non_null(e);
    assert_int_equal(plan_evaluate(&r->model, &c, &r->layout, e, NULL, &err), ST_OK);
    assert_rel(e->time.step_s, r->pred_time_s, 1e-12);
    assert_rel(e->mem.total_bytes, r->pred_mem_bytes, 1e-12);
    assert_rel(r->error_pct, 100.0 * (r->pred_time_s - r->ref_time_s) / r->ref_time_s, 1e-12);
    free(e);
}

/* Narayanan et al. 2021 Table 1, first row: GPT 1.7B on 32 A100s, 137 TFLOP/s. */
static const plan_validate_row narayanan_23 = {
    .row_id = "23", .source_key = "narayanan2021_t1", .model_name = "GPT 1.7B",
    .architecture = "GPT-3 style decoder", .framework = "Megatron-LM (PTD-P)",
    .num_layers = "24", .hidden_size = "2304", .num_heads = "24", .num_kv_heads = "",
    .ffn_hidden_size = "9216", .seq_len = "2048", .vocab_size = "51200",
    .gpu_type = "A100-SXM4-80GB (Selene DGX A100)", .num_gpus = "32",
    .interconnect = "NVLink/NVSwitch intra-node; 8x200Gb/s HDR IB per node",
    .tp = "1", .pp = "1", .dp = "32", .global_batch_size = "512",
    .recompute = "full (activation recomputation)", .precision = "fp16 mixed",
    .tflops_per_gpu = "137",
    .tflops_convention = "Narayanan Eq.3: 96*B*s*l*h^2*(1+s/(6h)+V/(16lh)) (includes recompute)",
};

static void test_narayanan_eq3(void **state)
{
    (void)state;
    /* By hand: 96 x 512 x 2048 x 24 x 2304^2 = 1.28247e16;
     * 1 + 2048/13824 + 51200/884736 = 1.2060185; F = 1.5466830e16 FLOPs;
     * t = F / (137e12 x 32) = 3.528018 s. */
    assert_rel(plan_validate_eq3_flops(512, 2048, 24, 2304, 51200), 1.5466830067924994e16, 1e-12);
    const plan_validate_result *r = run(&narayanan_23);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_EQ3);
    assert_rel(r->ref_time_s, 3.528017807464643, 1e-9);
    assert_int_equal(r->model.arch, PLAN_ARCH_GPT);
    assert_true(r->model.tied_embedding);
    assert_int_equal(r->model.kv_heads, 24);
    assert_string_equal(r->instance, "dgx-a100");
    assert_int_equal(r->nodes, 4);
    assert_int_equal(r->gpus, 32);
    const plan_layout *l = &r->layout;
    assert_int_equal(l->tp, 1);
    assert_int_equal(l->pp, 1);
    assert_int_equal(l->dp, 32);
    assert_int_equal(l->global_batch, 512);
    assert_int_equal(l->recompute, PLAN_RECOMP_FULL);
    assert_int_equal(l->sharding, PLAN_SHARD_NONE);
    assert_int_equal(l->flash_attention, 0);
    assert_int_equal(l->dp_overlap, 0);
    /* No micro-batch in Table 1: searched, a power of two dividing 512 / 32. */
    assert_true(r->micro_batch_searched);
    assert_int_equal(16 % l->micro_batch, 0);
    assert_int_equal((int64_t)l->micro_batch * l->microbatches * l->dp, 512);
    assert_non_null(strstr(r->notes, "searched"));
    check_error_arithmetic(r);
}

/* Megatron-LM README 2020, 1B case on one V100 of a DGX-2, batch 8. */
static const plan_validate_row megatron_1 = {
    .row_id = "1", .source_key = "megatron_readme_2020", .model_name = "GPT-2 1B case",
    .architecture = "GPT-2 style decoder (learned pos emb, GeLU, 4h FFN)",
    .framework = "Megatron-LM (2020)", .num_layers = "24", .hidden_size = "1920",
    .num_heads = "15", .ffn_hidden_size = "7680", .seq_len = "1024", .vocab_size = "51200",
    .gpu_type = "V100 (DGX-2)", .num_gpus = "1", .interconnect = "NVSwitch (DGX-2)", .tp = "1",
    .pp = "1", .dp = "1", .global_batch_size = "8", .precision = "fp16 mixed",
    .tflops_per_gpu = "71.9", .tflops_convention = "Megatron README (formula not stated on page)",
    .iteration_time_s = "1.121",
};

static void test_megatron_2020(void **state)
{
    (void)state;
    const plan_validate_result *r = run(&megatron_1);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_TIME);
    assert_rel(r->ref_time_s, 1.121, 1e-12);
    assert_string_equal(r->instance, "dgx-2");
    /* One GPU of a 16-GPU node. */
    assert_int_equal(r->nodes, 1);
    assert_int_equal(r->gpus, 1);
    const plan_layout *l = &r->layout;
    assert_false(r->micro_batch_searched);
    assert_int_equal(l->micro_batch, 8); /* --batch-size is per model instance */
    assert_int_equal(l->microbatches, 1);
    assert_int_equal(l->recompute, PLAN_RECOMP_FULL); /* --checkpoint-activations */
    assert_int_equal(l->flash_attention, 0);
    assert_int_equal(l->dp_overlap, 1); /* implied by the README's 128-way rows */
    assert_rel(l->dp_bucket_bytes, 25e6, 0); /* PyTorch DDP buckets (--DDP-impl torch) */
    assert_int_equal(l->sequence_parallel, 0);
    assert_int_equal(r->model.params, 24 * (12LL * 1920 * 1920 + 13 * 1920) + 51200LL * 1920 +
                                          1024LL * 1920 + 2 * 1920);
    check_error_arithmetic(r);

    /* The 128-way data-parallel 8B case: 1024 GPUs = 128 DGX A100 nodes. */
    plan_validate_row big = megatron_1;
    big.row_id = "12";
    big.num_layers = "42";
    big.hidden_size = "4096";
    big.num_heads = "32";
    big.ffn_hidden_size = "16384";
    big.gpu_type = "A100 (DGX-A100)";
    big.interconnect = "NVSwitch intra-node; IB inter-node (Selene)";
    big.num_gpus = "1024";
    big.tp = "8";
    big.dp = "128";
    big.global_batch_size = "2048";
    big.iteration_time_s = "1.38";
    r = run(&big);
    assert_true(r->compared);
    /* the README's September 2020 tables: DGX A100 before the 80 GB part */
    assert_string_equal(r->instance, "dgx-a100-40gb");
    assert_int_equal(r->nodes, 128);
    assert_int_equal(r->layout.micro_batch, 16);
    check_error_arithmetic(r);
}

/* DGX Cloud recipes v24.11.1, Llama 3 70B on 64 H100s with CP 2 and VP 5. */
static const plan_validate_row dgxc_114 = {
    .row_id = "114", .source_key = "dgxc_bench_v24.11.1", .model_name = "LLAMA3-70B",
    .architecture = "Llama-3 (SwiGLU, RoPE, GQA)", .framework = "NeMo/Megatron-Core",
    .num_layers = "80", .hidden_size = "8192", .num_heads = "64", .num_kv_heads = "8",
    .ffn_hidden_size = "28672", .seq_len = "8192", .vocab_size = "128256",
    .gpu_type = "H100-SXM5-80GB", .num_gpus = "64", .tp = "4", .pp = "4", .dp = "2", .cp = "2",
    .virtual_stages = "5", .micro_batch_size = "1", .global_batch_size = "128",
    .num_microbatches = "64", .precision = "BF16",
    .tflops_convention = "dgxc: model FLOPs per README Notes (no recompute)",
    .iteration_time_s = "14.72",
};

static void test_dgxc_cp2(void **state)
{
    (void)state;
    const plan_validate_result *r = run(&dgxc_114);
    assert_true(r->compared);
    assert_int_equal(r->model.arch, PLAN_ARCH_LLAMA);
    assert_false(r->model.tied_embedding);
    assert_int_equal(r->model.kv_heads, 8);
    assert_string_equal(r->instance, "dgx-h100");
    assert_int_equal(r->nodes, 8);
    const plan_layout *l = &r->layout;
    assert_int_equal(l->tp, 4);
    assert_int_equal(l->pp, 4);
    assert_int_equal(l->dp, 2);
    assert_int_equal(l->cp, 2);
    assert_int_equal(l->schedule, PLAN_SCHED_VIRTUAL);
    assert_int_equal(l->virtual_stages, 5);
    assert_int_equal(l->micro_batch, 1);
    assert_int_equal(l->microbatches, 64);
    assert_int_equal(l->recompute, PLAN_RECOMP_NONE);
    assert_int_equal(l->sharding, PLAN_SHARD_OPTIMIZER); /* distributed optimizer */
    assert_int_equal(l->sequence_parallel, 1);
    assert_int_equal(l->flash_attention, 1);
    assert_int_equal(l->dp_overlap, 1);
    check_error_arithmetic(r);

    /* dp left out: GPUs / (tp pp cp). A dp that does not multiply out: a reason. */
    plan_validate_row x = dgxc_114;
    x.dp = "";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.dp, 2);
    x.dp = "8"; /* neither 64 / (tp pp cp) nor 64 / (tp pp) */
    refused(&x, "256");

    /* a head size column: the one it gives (the queries 64 x 160 = 10240
     * wide, which Megatron's FLOP count follows as kv_channels), else
     * hidden / heads; a bad one is the row's own reason */
    x = dgxc_114;
    r = run(&x);
    assert_int_equal(plan_model_head_dim(&r->model), 128);
    double base = plan_validate_megatron_flops(&r->model, 128);
    x.head_dim = "160";
    r = run(&x);
    assert_int_equal(r->model.head_dim, 160);
    assert_int_equal(plan_model_attn_width(&r->model), 10240);
    assert_true(plan_validate_megatron_flops(&r->model, 128) > base);
    x.head_dim = "wide";
    refused(&x, "head_dim");
}

/* The SageMaker reference configurations publish no shape. */
static void test_smp_reference(void **state)
{
    (void)state;
    plan_validate_row smp = {
        .row_id = "627", .source_key = "aws_smp_v1_refcfg", .model_name = "GPT-2 style 10B",
        .architecture = "GPT-2", .seq_len = "512", .vocab_size = "50000",
        .gpu_type = "A100-SXM4-40GB", .num_gpus = "128", .instance_type = "ml.p4d.24xlarge x16",
        .interconnect = "NVSwitch intra-node; EFA 4x100 Gb/s", .tp = "4", .pp = "1", .dp = "32",
        .recompute = "activation checkpointing, each transformer layer",
        .optimizer_sharding = "SMP optimizer state sharding (True)",
        .framework = "SageMaker model parallel library v1 (smdistributed.modelparallel)",
    };
    const plan_validate_result *r = refused(&smp, "shape not published");
    assert_false(r->have_model);

    /* Given a shape, the row maps to 16 p4d.24xlarge through instance_type,
     * and still has no measurement to compare. */
    smp.num_layers = "40";
    smp.hidden_size = "4608";
    smp.num_heads = "36";
    smp.global_batch_size = "1280";
    r = run(&smp);
    assert_string_equal(r->instance, "p4d.24xlarge");
    assert_int_equal(r->nodes, 16);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_FULL);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_OPTIMIZER);
    assert_false(r->compared);
    assert_non_null(strstr(r->reason, "neither iteration_time_s"));
}

/* BLOOM row 509: the run went out of memory; no time, the OOM is compared. */
static void test_oom_row(void **state)
{
    (void)state;
    plan_validate_row oom = {
        .row_id = "509", .source_key = "bloom_tr11_prequel",
        .model_name = "BLOOM candidate 181B (h=14336, l=72)",
        .architecture = "BLOOM (GPT-style, ALiBi, embedding LayerNorm, tied emb)",
        .framework = "Megatron-DeepSpeed", .num_layers = "72", .hidden_size = "14336",
        .num_heads = "64", .ffn_hidden_size = "57344", .seq_len = "2048", .vocab_size = "250880",
        .gpu_type = "A100-SXM4-80GB (Jean Zay)", .gpu_mem_gb = "80",
        .interconnect = "NVLink intra-node; 4x Omni-Path per node", .num_gpus = "384", .tp = "2", .pp = "6",
        .dp = "32", .micro_batch_size = "2", .global_batch_size = "2048",
        .num_microbatches = "32", .recompute = "full (DeepSpeed activation checkpointing)",
        .optimizer_sharding = "ZeRO-1 (DeepSpeed)", .memory_metric = "OOM",
        .tflops_convention = "Megatron/Narayanan Eq.3 hardware TFLOPs",
    };
    const plan_validate_result *r = run(&oom);
    assert_false(r->compared);
    assert_true(r->ref_oom);
    assert_true(r->have_layout);
    assert_false(r->have_mem);
    assert_string_equal(r->instance, "jean-zay-a100");
    assert_int_equal(r->layout.sharding, PLAN_SHARD_OPTIMIZER);
    assert_non_null(strstr(r->reason, "out of memory"));
    assert_int_equal(r->pred_oom, r->est.reject == PLAN_REJ_OOM);

    /* The same row as a run that worked, with memory in GB (1e9) or GiB. */
    oom.memory_metric = "nvidia-smi snapshot, GB";
    oom.memory_per_gpu_gb = "60";
    oom.iteration_time_s = "120.5";
    r = run(&oom);
    assert_true(r->compared);
    assert_true(r->have_mem);
    assert_rel(r->ref_mem_bytes, 60e9, 1e-12);
    assert_rel(r->mem_error_pct, 100.0 * (r->pred_mem_bytes - 60e9) / 60e9, 1e-12);
    oom.memory_metric = "max allocated, GiB";
    r = run(&oom);
    assert_rel(r->ref_mem_bytes, 60.0 * 1073741824.0, 1e-12);
    /* the value's own unit: GB as the column's, GiB as it says */
    oom.memory_metric = "nvidia-smi snapshot";
    oom.memory_per_gpu_gb = "60 GB";
    assert_rel(run(&oom)->ref_mem_bytes, 60e9, 1e-12);
    oom.memory_per_gpu_gb = "60GiB";
    assert_rel(run(&oom)->ref_mem_bytes, 60.0 * 1073741824.0, 1e-12);
    /* nvidia-smi's MiB, and MB */
    oom.memory_per_gpu_gb = "61,440 MiB";
    assert_rel(run(&oom)->ref_mem_bytes, 60.0 * 1073741824.0, 1e-12);
    oom.memory_per_gpu_gb = "60000 MB";
    assert_rel(run(&oom)->ref_mem_bytes, 60e9, 1e-12);
    /* a remark after the figure is no unit; with no metric column it
     * names the tool */
    oom.memory_per_gpu_gb = "60 GB (max reserved)";
    oom.memory_metric = "";
    r = run(&oom);
    assert_true(r->have_mem);
    assert_rel(r->ref_mem_bytes, 60e9, 1e-12);
    assert_int_equal(r->mem_metric, PLAN_MEM_RESERVED);
    oom.memory_per_gpu_gb = "60";
    oom.memory_metric = "max allocated, GiB";
    r = run(&oom);

    /* The three things a figure can count, each compared with its own
     * share of the prediction: the tensors, the allocator's reserve (the
     * tensors and its cache), the device's whole footprint. */
    double tensors = r->est.mem.total_bytes - r->est.mem.allocator_bytes -
                     r->est.mem.context_bytes;
    assert_int_equal(r->mem_metric, PLAN_MEM_ALLOCATED);
    assert_rel(r->pred_mem_bytes, tensors, 1e-12);
    oom.memory_metric = "torch.cuda.max_memory_reserved";
    r = run(&oom);
    assert_int_equal(r->mem_metric, PLAN_MEM_RESERVED);
    assert_rel(r->ref_mem_bytes, 60e9, 1e-12);
    assert_rel(r->pred_mem_bytes, r->est.mem.total_bytes - r->est.mem.context_bytes, 1e-12);
    assert_rel(r->pred_mem_bytes, tensors + r->est.mem.allocator_bytes, 1e-12);
    assert_true(r->pred_mem_bytes < r->est.mem.total_bytes); /* no CUDA context */
    assert_non_null(strstr(r->notes, "reserved by the caching allocator"));
    oom.memory_metric = "DeepSpeed see_memory_usage Max_CA";
    r = run(&oom);
    assert_int_equal(r->mem_metric, PLAN_MEM_RESERVED);
    assert_rel(r->ref_mem_bytes, 60.0 * 1073741824.0, 1e-12);
    oom.memory_metric = "nvidia-smi";
    r = run(&oom);
    assert_int_equal(r->mem_metric, PLAN_MEM_DEVICE);
    assert_rel(r->pred_mem_bytes, r->est.mem.total_bytes, 1e-12);
}

/* What a memory figure counted, by the documented names of the tools that
 * report it, and its unit. */
static void test_mem_metric_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        plan_mem_metric metric;
        double unit;
    } cases[] = {
        {"torch.cuda.max_memory_allocated()", PLAN_MEM_ALLOCATED, 1e9},
        {"peak allocated memory (GiB)", PLAN_MEM_ALLOCATED, 1073741824.0},
        {"memory_stats active_bytes.all.peak", PLAN_MEM_ALLOCATED, 1e9},
        {"max_memory_reserved", PLAN_MEM_RESERVED, 1e9},
        {"torch.cuda.max_memory_cached (PyTorch 1.3)", PLAN_MEM_RESERVED, 1e9},
        /* DeepSpeed's see_memory_usage: MA/Max_MA allocated, CA/Max_CA
         * reserved, "GB" of 1024^3 bytes */
        {"Max_MA from the DeepSpeed log", PLAN_MEM_ALLOCATED, 1073741824.0},
        {"MA", PLAN_MEM_ALLOCATED, 1073741824.0},
        {"CA 71.3", PLAN_MEM_RESERVED, 1073741824.0},
        /* whole tokens only: a word holding the letters is not the field */
        {"CAM memory, MAX figure", PLAN_MEM_DEVICE, 1e9},
        {"nvidia-smi snapshot, GB", PLAN_MEM_DEVICE, 1e9},
        {"DCGM FB used", PLAN_MEM_DEVICE, 1e9},
        {"", PLAN_MEM_DEVICE, 1e9},
        /* the first named wins: the figure is the one the text starts with */
        {"reserved (allocated was 60)", PLAN_MEM_RESERVED, 1e9},
        {"allocated; reserved 70", PLAN_MEM_ALLOCATED, 1e9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double unit = 0;
        plan_mem_metric m = plan__mem_metric(cases[i].text, &unit);
        if (m != cases[i].metric || unit != cases[i].unit)
            fail_msg("'%s': metric %d unit %g, expected %d %g", cases[i].text, (int)m, unit,
                     (int)cases[i].metric, cases[i].unit);
    }
    double unit = 0;
    assert_int_equal(plan__mem_metric(NULL, &unit), PLAN_MEM_DEVICE);
    assert_true(unit == 1e9);
}

/* BLOOM probe rows leave the batch out; TFLOP/s and time pin it (512). */
static void test_derived_batch(void **state)
{
    (void)state;
    plan_validate_row probe = {
        .row_id = "569", .source_key = "bloom_tr11_prequel", .framework = "Megatron-DeepSpeed",
        .num_layers = "10", .hidden_size = "14336", .num_heads = "64", .ffn_hidden_size = "57344",
        .seq_len = "2048", .vocab_size = "250880", .gpu_type = "A100-SXM4-80GB (Jean Zay)",
        .num_gpus = "8", .tp = "8", .pp = "1", .dp = "1", .micro_batch_size = "1",
        .recompute = "full", .tflops_per_gpu = "142.59",
        .tflops_convention = "Megatron/Narayanan Eq.3 hardware TFLOPs (includes recompute)",
        .iteration_time_s = "205.52",
    };
    const plan_validate_result *r = run(&probe);
    assert_true(r->compared);
    assert_int_equal(r->layout.global_batch, 512);
    assert_int_equal(r->layout.microbatches, 512);
    assert_non_null(strstr(r->notes, "derived"));

    /* Without TFLOP/s the batch cannot be recovered. */
    probe.tflops_per_gpu = "";
    refused(&probe, "global batch not published");
}

/* A batch per replica and no global one: with its microbatches named the
 * global batch is their product with dp; a rate measured without them is
 * one microbatch a step (pp 1: nothing waits on the microbatch count); a
 * step's time needs the batch itself. */
static void test_batch_from_micro_batch(void **state)
{
    (void)state;
    plan_validate_row x = narayanan_23;
    x.global_batch_size = "";
    x.micro_batch_size = "4";
    x.tflops_per_gpu = "";
    x.tokens_per_s_per_gpu = "3000";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.global_batch, 4 * 32);
    assert_int_equal(r->layout.microbatches, 1);
    assert_non_null(strstr(r->notes, "one microbatch a step"));
    assert_rel(r->ref_time_s, 128.0 * 2048.0 / (3000.0 * 32.0), 1e-12);
    x.num_microbatches = "8";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.global_batch, 4 * 8 * 32);
    x.num_microbatches = "";
    x.tokens_per_s_per_gpu = "";
    x.iteration_time_s = "2.0";
    refused(&x, "global batch not published");
}

static void test_bad_rows(void **state)
{
    (void)state;
    plan_validate_row x = narayanan_23;
    x.num_layers = "24.5";
    refused(&x, "num_layers '24.5'");

    x = narayanan_23;
    x.tp = "3"; /* does not divide 32 GPUs */
    refused(&x, "does not divide");

    x = narayanan_23;
    x.tflops_per_gpu = "";
    refused(&x, "neither");

    /* a convention naming no count read: the FLOPs the GPUs executed */
    x = narayanan_23;
    x.tflops_convention = "vendor marketing";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_HARDWARE);
    assert_non_null(strstr(r->notes, "'vendor marketing' names no count"));

    x = narayanan_23;
    x.gpu_type = "TPU v4";
    x.interconnect = "";
    refused(&x, "no catalog GPU");

    x = narayanan_23;
    x.gpu_type = "Tesla V100 PCIe 32GB"; /* not the SXM module the catalog has */
    refused(&x, "PCIe board");

    x = narayanan_23;
    x.gpu_type = "H100 SXM5 NVLink"; /* NVLink is not the NVL board */
    x.interconnect = "";
    assert_string_equal(run(&x)->instance, "dgx-h100");

    x = narayanan_23;
    x.gpu_type = "nvidia a100-sxm4-80gb"; /* the same module, spelt otherwise */
    assert_true(run(&x)->compared);

    x = narayanan_23;
    x.recompute = "sometimes";
    refused(&x, "recompute 'sometimes'");

    x = narayanan_23;
    x.num_gpus = "36"; /* 4.5 DGX A100 nodes */
    x.dp = "36";
    x.global_batch_size = "576";
    refused(&x, "whole number");
}

/* A catalog without the row's GPU: the row says so. */
static void test_instance_missing_from_catalog(void **state)
{
    (void)state;
    plan_catalog small = {0};
    small.ngpus = 1;
    small.gpus = calloc(1, sizeof *small.gpus);
    small.ncurves = 1;
    small.curves = calloc(1, sizeof *small.curves);
    small.ninstances = 1;
    small.instances = calloc(1, sizeof *small.instances);
    assert_non_null(small.gpus);
    assert_non_null(small.curves);
    assert_non_null(small.instances);
    small.gpus[0] = cat.gpus[0];
    small.curves[0] = cat.curves[0];
    small.instances[0] = cat.instances[0];
    snprintf(small.instances[0].name, sizeof small.instances[0].name, "other.8x");
    small.instances[0].naliases = 0;
    snprintf(small.instances[0].gpu, sizeof small.instances[0].gpu, "%s", small.gpus[0].name);
    snprintf(small.instances[0].intra_curve, sizeof small.instances[0].intra_curve, "%s",
             small.curves[0].name);
    snprintf(small.instances[0].net_curve, sizeof small.instances[0].net_curve, "%s",
             small.curves[0].name);
    st_err err = {0};
    assert_int_equal(plan_catalog_link(&small, &err), ST_OK);
    plan_validate_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(plan_validate_run(&small, &narayanan_23, r, NULL, &err), ST_OK);
    assert_false(r->compared);
    assert_non_null(strstr(r->reason, "no catalog GPU"));
    assert_non_null(strstr(r->reason, "A100-SXM4-80GB"));
    free(r);
    plan_catalog_free(&small);
}

static void test_terms(void **state)
{
    (void)state;
    plan_terms *t = calloc(1, sizeof *t);
    plan_validate_result *r = calloc(1, sizeof *r);
    assert_non_null(t);
    assert_non_null(r);
    st_err err = {0};
    assert_int_equal(plan_validate_run(&cat, &dgxc_114, r, t, &err), ST_OK);
    int found = 0;
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].group, "time") && !strcmp(t->v[i].name, "step")) {
            assert_rel(t->v[i].value, r->pred_time_s, 1e-12);
            found = 1;
        }
    assert_true(found);
    free(r);
    free(t);
}

static plan_validate_result fake(const char *id, const char *src, int compared, double err_pct)
{
    plan_validate_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.row_id, sizeof r.row_id, "%s", id);
    snprintf(r.source_key, sizeof r.source_key, "%s", src);
    r.compared = compared;
    r.have_layout = 1;
    r.ref_time_s = 10.0;
    r.pred_time_s = 10.0 * (1 + err_pct / 100);
    r.error_pct = err_pct;
    return r;
}

static void test_summary(void **state)
{
    (void)state;
    plan_validate_result v[6];
    v[0] = fake("1", "a", 1, 10.0);
    v[1] = fake("2", "a", 1, -20.0);
    v[2] = fake("3", "b", 1, 5.0);
    v[3] = fake("4", "b", 0, 0.0); /* skipped: not in the means */
    v[4] = fake("5", "a", 0, 0.0);
    v[4].ref_oom = 1;
    v[4].pred_oom = 1;
    v[5] = fake("6", "b", 1, -3.0);
    v[5].have_mem = 1;
    v[5].mem_error_pct = -25.0;
    v[5].pred_oom = 1; /* ran, yet the planner calls it OOM */
    plan_validate_summary s;
    plan_validate_summarize(v, 6, &s);
    assert_int_equal(s.all.rows, 6);
    /* row 6 ran but the planner calls its layout OOM: its time is scored
     * with the rest, shown apart as well, and it is a fit miss */
    assert_true(plan_validate_scored(&v[5]));
    assert_true(plan_validate_scored(&v[0]));
    assert_int_equal(s.all.compared, 4);
    assert_rel(s.all.mean_abs_error_pct, (10.0 + 20.0 + 5.0 + 3.0) / 4, 1e-12);
    assert_rel(s.all.mean_error_pct, (10.0 - 20.0 + 5.0 - 3.0) / 4, 1e-12);
    assert_rel(s.all.max_abs_error_pct, 20.0, 1e-12);
    assert_string_equal(s.all.worst_row_id, "2");
    assert_int_equal(s.all.oom_timed, 1);
    assert_rel(s.all.oom_timed_mean_abs_error_pct, 3.0, 1e-12);
    assert_int_equal(s.all.fit_checked - s.all.fit_agreed, 1);
    assert_int_equal(s.nsources, 2);
    assert_string_equal(s.source[0].source_key, "a");
    assert_int_equal(s.source[0].compared, 2);
    assert_rel(s.source[0].mean_abs_error_pct, 15.0, 1e-12);
    assert_int_equal(s.source[0].oom_reference, 1);
    assert_int_equal(s.source[0].oom_agreed, 1);
    assert_int_equal(s.source[0].oom_timed, 0);
    assert_string_equal(s.source[1].source_key, "b");
    assert_rel(s.source[1].mean_abs_error_pct, 4.0, 1e-12);
    assert_rel(s.source[1].max_abs_error_pct, 5.0, 1e-12);
    assert_string_equal(s.source[1].worst_row_id, "3");
    assert_int_equal(s.source[1].mem_compared, 1);
    assert_rel(s.source[1].mem_mean_abs_error_pct, 25.0, 1e-12);
    assert_int_equal(s.source[1].pred_oom_of_ran, 1);
    assert_int_equal(s.all.pred_oom_of_ran, 1);
    /* every source weighs the same */
    assert_rel(s.mean_source_pct, (15.0 + 4.0) / 2, 1e-12);

    plan_validate_summarize(v, 0, &s);
    assert_int_equal(s.all.rows, 0);
    assert_int_equal(s.nsources, 0);
}

static void test_model_flops(void **state)
{
    (void)state;
    /* GPT-3 175B, one sample: 2048 x (72 x 96 x 12288^2 + 12 x 96 x 12288 x 2048
     * + 6 x 51200 x 12288) = 2048 x 1.07e12 ... */
    double l = 96, h = 12288, s = 2048, V = 51200;
    double want = s * (72 * l * h * h + 12 * l * h * s + 6 * V * h);
    assert_rel(plan_validate_model_flops(1, s, l, h, V), want, 1e-12);
    assert_rel(plan_validate_model_flops(256, s, l, h, V), 256 * want, 1e-12);
}

/* A utilisation with no convention is MFU's own: model FLOPs (Chowdhery et
 * al. 2022, App. B), over the stated peak; it is read before a TFLOP/s
 * figure whose convention is not known. */
static void test_mfu_without_convention(void **state)
{
    (void)state;
    plan_validate_row x = dgxc_114;
    x.iteration_time_s = "";
    x.tflops_convention = "";
    x.mfu_pct = "40";
    x.peak_basis_tflops = "989";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_MEGATRON);
    double F = plan_validate_megatron_flops(&r->model, 128);
    assert_rel(r->ref_time_s, F / (0.40 * 989e12 * 64), 1e-12);
    x.tflops_per_gpu = "500"; /* no convention: the MFU decides */
    r = run(&x);
    assert_rel(r->ref_time_s, F / (0.40 * 989e12 * 64), 1e-12);
    /* a TFLOP/s figure alone, its count not named: the count its stack's
     * logs print, Megatron-Core's model FLOPs */
    x.mfu_pct = "";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_MEGATRON);
    assert_rel(r->ref_time_s, F / (500e12 * 64), 1e-12);
    assert_non_null(strstr(r->notes, "convention not stated: model FLOPs"));
    /* documented names of the conventions */
    x.tflops_convention = "PaLM MFU";
    r = run(&x);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_MEGATRON);
    assert_rel(r->ref_time_s, F / (500e12 * 64), 1e-12);
    x.tflops_convention = "Narayanan et al. (hardware, with recompute)";
    r = run(&x);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_EQ3);
}

/* Virtual stages as sources write them: a count alone or among words,
 * Megatron's layers per virtual stage (80 layers over pp 4: 5 a chunk is
 * 4 chunks), and "interleaved" without a number searched as a blank is. */
static void test_virtual_stage_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int v;
    } cases[] = {
        {"5", 5},
        {"VP=5", 5},
        {"interleaved (5 chunks)", 5},
        {"virtual pipeline 5", 5},
        {"--num-layers-per-virtual-pipeline-stage 4", 5},
        {"num_layers_per_virtual_pipeline_stage=10", 2},
        {"20 layers per virtual stage", 1},
        {"5 (4 layers each)", 5},
    };
    plan_validate_row x = dgxc_114;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        x.virtual_stages = cases[i].text;
        plan_validate_result *r = run(&x);
        if (!r->compared || r->layout.virtual_stages != cases[i].v)
            fail_msg("'%s': compared %d, %d virtual stages, want %d (%s)", cases[i].text,
                     r->compared, r->layout.virtual_stages, cases[i].v, r->reason);
    }
    x.virtual_stages = "3 layers per virtual stage";
    refused(&x, "3 layers a virtual stage do not divide 80 layers over pp 4");
    /* no count: searched as if blank, as the blank row reads */
    x.virtual_stages = "";
    int blank_v = run(&x)->layout.virtual_stages;
    x.virtual_stages = "interleaved";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.virtual_stages, blank_v);
    assert_non_null(strstr(r->notes, "virtual_stages 'interleaved': no count, the schedule searched"));
}

/* A sharding stage the framework's text names is read when the sharding
 * column says nothing ("DeepSpeed ZeRO-3"); the column's own word wins. */
static void test_sharding_in_framework(void **state)
{
    (void)state;
    plan_validate_row x = dgxc_114;
    x.framework = "DeepSpeed ZeRO-3";
    x.tp = "1";
    x.pp = "1";
    x.cp = "";
    x.virtual_stages = "";
    x.dp = "64";
    x.num_microbatches = "";
    x.optimizer_sharding = "";
    plan_validate_result *r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_PARAMS);
    x.framework = "DeepSpeed (ZeRO stage 1)";
    r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_OPTIMIZER);
    x.framework = "DeepSpeed";
    r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_NONE); /* zero_optimization's default, 0 */
    x.framework = "DeepSpeed ZeRO-3";
    x.optimizer_sharding = "ZeRO-2";
    r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_GRADIENTS);
}

/* smdplan validate's exit codes: 0 whenever the file reads (the goal may be
 * missed: it is a measurement), 2 for a bad file or bad options. stdout and
 * stderr go to /dev/null for the call. */
static int quiet_validate(int argc, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    int o = dup(1), e = dup(2), null = open("/dev/null", O_WRONLY);
    assert_true(o >= 0 && e >= 0 && null >= 0);
    dup2(null, 1);
    dup2(null, 2);
    int rc = cli_validate_cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(o, 1);
    dup2(e, 2);
    close(o);
    close(e);
    close(null);
    return rc;
}

static void test_cli_exit_codes(void **state)
{
    (void)state;
    char file[] = SMD_TEST_DATA_DIR "/reference/calibration_runs.csv";
    char *ok[] = {"validate", file};
    assert_int_equal(quiet_validate(2, ok), 0);
    char *json[] = {"validate", "--json", "--no-record", file};
    assert_int_equal(quiet_validate(4, json), 0);
    char *help[] = {"validate", "--help"};
    assert_int_equal(quiet_validate(2, help), 0);
    char *none[] = {"validate"};
    assert_int_equal(quiet_validate(1, none), 2);
    char *missing[] = {"validate", "/nonexistent/runs.csv"};
    assert_int_equal(quiet_validate(2, missing), 2);
    char *bad_opt[] = {"validate", "--bogus", file};
    assert_int_equal(quiet_validate(3, bad_opt), 2);
    char not_runs[] = SMD_TEST_DATA_DIR "/reference/nccl_allreduce_busbw.csv";
    char *wrong[] = {"validate", not_runs};
    assert_int_equal(quiet_validate(2, wrong), 2);
}


/* The MLP comes from the architecture, not from grouped-query attention:
 * Nemotron-4 has GQA and a plain squared-ReLU MLP. */
static void test_mlp_from_architecture(void **state)
{
    (void)state;
    plan_validate_row x = dgxc_114;
    x.architecture = "Nemotron-4 (squared-ReLU, GQA)";
    x.model_name = "Nemotron4-15B";
    plan_validate_result *r = run(&x);
    assert_true(r->have_model);
    assert_int_equal(r->model.kv_heads, 8);
    assert_int_equal(plan_model_gated(&r->model), 0);
    x.architecture = "Llama-3 (SwiGLU, RoPE, GQA)";
    r = run(&x);
    assert_int_equal(plan_model_gated(&r->model), 1);
    assert_int_equal(r->model.arch, PLAN_ARCH_LLAMA);
    /* a GQA model whose text names GeLU is plain, whatever its heads */
    x.architecture = "GPT-style decoder (GeLU, GQA)";
    r = run(&x);
    assert_int_equal(plan_model_gated(&r->model), 0);
    assert_int_equal(r->model.arch, PLAN_ARCH_GPT);
}

/* The traits of data/model_families.json: the model's name speaks when the
 * row states no architecture; "untied" is not "tied"; a family's documented
 * traits (MPT: plain MLP, no dropout); and without the traits installed a
 * Llama-named row reads as the GPT default (nothing in C knows a brand). */
static void test_model_traits(void **state)
{
    (void)state;
    plan_validate_row x = dgxc_114;
    x.architecture = "";
    x.model_name = "Mistral-7B";
    plan_validate_result *r = run(&x);
    assert_int_equal(r->model.arch, PLAN_ARCH_LLAMA);
    assert_int_equal(r->model.tied_embedding, 0);
    x.model_name = "MPT-30B";
    r = run(&x);
    assert_int_equal(r->model.arch, PLAN_ARCH_GPT);
    assert_int_equal(plan_model_gated(&r->model), 0);
    assert_int_equal(plan_model_dropout(&r->model), 0);
    x.architecture = "Llama-2 (RoPE, SwiGLU, tied emb)";
    r = run(&x);
    assert_int_equal(r->model.tied_embedding, 1);
    x.architecture = "GPT-style decoder (untied emb)";
    r = run(&x);
    assert_int_equal(r->model.tied_embedding, 0);
    assert_int_equal(r->model.arch, PLAN_ARCH_GPT);
    /* the model's name speaks after the architecture text: a family's
     * documented name beside a generic architecture */
    x.architecture = "dense transformer (GQA)";
    x.model_name = "Llama 3 405B";
    r = run(&x);
    assert_int_equal(r->model.arch, PLAN_ARCH_LLAMA);
    assert_int_equal(plan_model_gated(&r->model), 1);
    x.architecture = "GPT-style decoder (GeLU)"; /* the architecture's words decide first */
    r = run(&x);
    assert_int_equal(r->model.arch, PLAN_ARCH_GPT);
    assert_int_equal(plan_model_gated(&r->model), 0);
    /* a family's name inside another word is not that family */
    x.architecture = "";
    x.model_name = "Attempt-30B";
    r = run(&x);
    assert_int_equal(plan_model_dropout(&r->model), 1);
    x.model_name = "MPT-30B";
    r = run(&x);
    assert_int_equal(plan_model_dropout(&r->model), 0);

    int n = 0;
    const plan_model_trait *t = plan_model_traits(&n);
    assert_true(n > 0);
    plan_model_trait *keep = malloc((size_t)n * sizeof *keep);
    assert_non_null(keep);
    memcpy(keep, t, (size_t)n * sizeof *keep);
    st_err err = {0};
    assert_int_equal(plan_model_traits_set(NULL, 0, &err), ST_OK);
    x.architecture = "Llama-3 (SwiGLU, RoPE, GQA)";
    r = run(&x);
    assert_int_equal(r->model.arch, PLAN_ARCH_GPT);
    /* a trait that says nothing is refused */
    plan_model_trait empty = {.nwords = 1, .arch = -1, .mlp = -1, .dropout = -1, .tied = -1,
                              .structure = -1};
    snprintf(empty.words[0], sizeof empty.words[0], "x");
    assert_int_equal(plan_model_traits_set(&empty, 1, &err), ST_EINVAL);
    assert_int_equal(plan_model_traits_set(keep, n, &err), ST_OK);
    free(keep);
    r = run(&x);
    assert_int_equal(r->model.arch, PLAN_ARCH_LLAMA);
}

/* model_parallel_size without TP and PP: TP inside a node, PP for the rest. */
static void test_model_parallel_size(void **state)
{
    (void)state;
    plan_validate_row x = narayanan_23;
    x.tp = "";
    x.pp = "";
    x.dp = "";
    x.model_parallel_size = "16";
    x.num_gpus = "512";
    x.global_batch_size = "1024";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.tp, 8);
    assert_int_equal(r->layout.pp, 2);
    assert_int_equal(r->layout.dp, 32);
    assert_non_null(strstr(r->notes, "model-parallel size 16"));
    /* nothing of the layout published: the framework's best, said so */
    x.model_parallel_size = "";
    r = run(&x);
    assert_true(r->compared);
    assert_non_null(strstr(r->notes, "parallel layout not published"));
    assert_true(r->micro_batch_searched);
    /* ... with a micro-batch it publishes kept (what ran), not searched */
    x.micro_batch_size = "4";
    r = run(&x);
    assert_true(r->compared);
    assert_false(r->micro_batch_searched);
    assert_int_equal(r->layout.micro_batch, 4);
    assert_int_equal((int64_t)r->layout.dp * r->layout.micro_batch * r->layout.microbatches,
                     1024);
}

/* The reference time from tokens per second; FSDP sharding modes; a network
 * named only by its bandwidth and technology. */
static void test_tokens_fsdp_network(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "900", .source_key = "t", .model_name = "MPT-3b",
        .architecture = "MPT (GPT-style, 4h FFN, no bias; FlashAttention)",
        .framework = "Composer + PyTorch FSDP (llm-foundry)", .num_layers = "32",
        .hidden_size = "2560", .num_heads = "20", .ffn_hidden_size = "10240", .seq_len = "2048",
        .vocab_size = "50368", .gpu_type = "A100-40GB", .gpu_mem_gb = "40", .num_gpus = "16",
        .interconnect = "1600 Gbps RoCE node-node", .tp = "1", .pp = "1", .dp = "16",
        .micro_batch_size = "8", .global_batch_size = "256", .grad_accum_steps = "2",
        .recompute = "none", .optimizer_sharding = "PyTorch FSDP SHARD_GRAD_OP (ZeRO-2-like)",
        .precision = "amp_bf16 (mp_mode DEFAULT)", .tokens_per_s_per_gpu = "5000",
        .tflops_convention = "MosaicML MFU: (6N + 12*l*h*s per token) model FLOPs",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->basis, PLAN_VAL_BASIS_TOKENS);
    assert_rel(r->ref_time_s, 256.0 * 2048.0 / (5000.0 * 16.0), 1e-12);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_GRADIENTS);
    assert_int_equal(r->layout.microbatches, 2);
    assert_int_equal(r->layout.fp32_grads, 1); /* DEFAULT reduces in fp32 */
    assert_int_equal(plan_model_dropout(&r->model), 0);
    /* A100-40GB nodes of 8 with 1600 Gb/s of RDMA: the catalog's DGX A100 40 GB */
    assert_string_equal(r->instance, "dgx-a100-40gb");
    assert_int_equal(r->nodes, 2);
    check_error_arithmetic(r);

    x.optimizer_sharding = "PyTorch FSDP FULL_SHARD (ZeRO-3-like)";
    r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_PARAMS);
    x.optimizer_sharding = "FSDP (shard group 8) + DP";
    r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_PARAMS);
    assert_int_equal(r->layout.sharding_degree, 8);
    /* the shard group by the stacks' own names of it, and the stages by
     * their documented names (plan_validate_rules.c lists each source) */
    static const struct {
        const char *text;
        int sharding, degree;
    } names[] = {
        {"hybrid_shard_degree=8", PLAN_SHARD_PARAMS, 8},
        {"sharded_data_parallel_degree: 4", PLAN_SHARD_PARAMS, 4},
        {"torchtitan data_parallel_shard_degree 8, data_parallel_replicate_degree 2",
         PLAN_SHARD_PARAMS, 8},
        {"ici_fsdp_parallelism=4 dcn_fsdp_parallelism=2", PLAN_SHARD_PARAMS, 8},
        {"ZeRO-3 with MiCS, mics_shard_size 4", PLAN_SHARD_PARAMS, 4},
        {"ZeRO stage 3 over 4 GPUs", PLAN_SHARD_PARAMS, 4}, /* plain English */
        {"sharded across 8 ranks", PLAN_SHARD_PARAMS, 8},
        {"ZeRO-3 over 2 nodes", PLAN_SHARD_PARAMS, 0}, /* nodes are not ranks */
        {"8-way FSDP, replicated across nodes", PLAN_SHARD_PARAMS, 8},
        {"ZeRO-3, sharding degree of 4", PLAN_SHARD_PARAMS, 4},
        {"hybrid sharding (HYBRID_SHARD), degree 4", PLAN_SHARD_PARAMS, 4},
        {"HSDP (shard within a node)", PLAN_SHARD_PARAMS, 0}, /* the node: 8 of 16 here */
        {"_HYBRID_SHARD_ZERO2", PLAN_SHARD_GRADIENTS, 0}, /* the node too */
        {"fully_shard(reshard_after_forward=False)", PLAN_SHARD_GRADIENTS, 0},
        {"ZeRO-3 (parameters, gradients and optimizer states)", PLAN_SHARD_PARAMS, 0},
        {"FSDP NO_SHARD", PLAN_SHARD_NONE, 0},
        {"ZeRO stage 1", PLAN_SHARD_OPTIMIZER, 0},
        {"DeepSpeed ZeRO Stage-2", PLAN_SHARD_GRADIENTS, 0},
        /* the ZeRO paper's names of its stages */
        {"P_os", PLAN_SHARD_OPTIMIZER, 0},
        {"P_os+g", PLAN_SHARD_GRADIENTS, 0},
        {"Pos+g+p", PLAN_SHARD_PARAMS, 0},
        /* what is sharded, in words */
        {"optimizer states", PLAN_SHARD_OPTIMIZER, 0},
        {"optimizer states and gradients", PLAN_SHARD_GRADIENTS, 0},
        {"weights, gradients and optimizer states sharded", PLAN_SHARD_PARAMS, 0},
        {"fully sharded", PLAN_SHARD_PARAMS, 0},
        /* replicated data parallelism */
        {"PyTorch DDP", PLAN_SHARD_NONE, 0},
        {"weights not sharded", PLAN_SHARD_NONE, 0},
        {"data parallel, replicated", PLAN_SHARD_NONE, 0},
        {"ZeRO-3 (no offload)", PLAN_SHARD_PARAMS, 0},
        /* SMP v2's and PyTorch's words for HSDP; Colossal-AI's plugins */
        {"hybrid sharded data parallelism", PLAN_SHARD_PARAMS, 0},
        {"Colossal-AI Gemini", PLAN_SHARD_PARAMS, 0},
        {"LowLevelZeroPlugin, stage 2", PLAN_SHARD_GRADIENTS, 0},
        /* fairscale's: OSS the optimizer state, ShardedDDP the gradients too */
        {"fairscale OSS", PLAN_SHARD_OPTIMIZER, 0},
        {"OSS + ShardedDDP", PLAN_SHARD_GRADIENTS, 0},
        {"ShardedDataParallel", PLAN_SHARD_GRADIENTS, 0},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        x.optimizer_sharding = names[i].text;
        r = run(&x);
        if (r->layout.sharding != (plan_sharding)names[i].sharding)
            fail_msg("'%s': sharding %d, want %d", names[i].text, r->layout.sharding,
                     names[i].sharding);
        int want = names[i].degree ? names[i].degree
                   : strstr(names[i].text, "HSDP") || strstr(names[i].text, "HYBRID") ||
                           strstr(names[i].text, "hybrid")
                       ? 8
                       : 0;
        if (r->layout.sharding_degree != want)
            fail_msg("'%s': degree %d, want %d", names[i].text, r->layout.sharding_degree, want);
    }

    /* a stated network no catalog node has: the row's node, made for it */
    x.interconnect = "3x100 Gb/s InfiniBand";
    r = run(&x);
    assert_true(r->compared);
    assert_rel(r->inst.net_bps, 300e9 / 8.0, 1e-12);
    assert_int_equal(r->inst.gpus_per_node, 8);
    assert_non_null(strstr(r->instance, "300Gbps"));

    /* a rate per GPU is each GPU's NIC: the node has eight of them */
    x.interconnect = "400 Gb/s RDMA per GPU";
    r = run(&x);
    assert_true(r->compared);
    assert_rel(r->inst.net_bps, 8 * 400e9 / 8.0, 1e-12);
    assert_rel(r->inst.net_gpu_bps, 400e9 / 8.0, 1e-12);
    assert_non_null(strstr(r->notes, "400 Gbps per GPU: 3200 Gbps per node"));
    /* a rate's unit as written: bytes with a capital B, a port speed "400G" */
    static const struct {
        const char *text;
        double node_gbps;
    } units[] = {
        {"8 x 400G NDR InfiniBand", 3200},        {"RoCE v2, 8x400G", 3200},
        {"100 GB/s InfiniBand per node", 800},   {"4 x 25 GB/s EFA", 800},
        {"1.6 Tb/s InfiniBand per node", 1600},  {"800 Gbit/s RoCE", 800},
        /* InfiniBand's generation names, counts after a rate, the sign x */
        {"4 x HDR200", 800},                       {"8x NDR InfiniBand", 3200},
        {"InfiniBand NDR 400Gb/s x 8", 3200},     {"8\u00d7400 Gb/s InfiniBand", 3200},
        /* the links inside a node are not its network */
        {"NVLink 900GB/s; 8x 200 Gb/s HDR InfiniBand", 1600},
        {"NVSwitch (900 GB/s), 2x 400 Gb/s RoCE", 800},
    };
    x.interconnect = NULL;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        x.interconnect = units[i].text;
        r = run(&x);
        assert_true(r->compared);
        if (fabs(r->inst.net_bps - units[i].node_gbps * 1e9 / 8.0) > 1e-6 * r->inst.net_bps)
            fail_msg("'%s': %.1f Gb/s per node, not %.1f", units[i].text, r->inst.net_bps * 8e-9,
                     units[i].node_gbps);
    }
    /* ... but links counted for the node stay the node's */
    x.interconnect = "8x400 Gb/s InfiniBand, one NIC per GPU";
    r = run(&x);
    assert_rel(r->inst.net_bps, 3200e9 / 8.0, 1e-12);
    /* the numbers, where the file has them, over the text */
    x.interconnect = "400 Gb/s RDMA";
    x.net_gbps_per_gpu = "200";
    r = run(&x);
    assert_rel(r->inst.net_bps, 8 * 200e9 / 8.0, 1e-12);
    x.net_gbps_per_gpu = NULL;
    x.net_gbps_per_node = "800";
    r = run(&x);
    assert_rel(r->inst.net_bps, 800e9 / 8.0, 1e-12);
    assert_rel(r->inst.net_gpu_bps, 0, 0);
    x.net_gbps_per_node = NULL;

    /* a GPU's stated memory is the run's: a 96 GB part is not the 80 GB one */
    x.interconnect = "1600 Gbps RoCE node-node";
    x.gpu_type = "H100 96GB";
    x.gpu_mem_gb = "96";
    r = run(&x);
    assert_true(r->own_gpu);
    assert_rel(r->gpu.mem_bytes, 96.0 * 1073741824.0, 1e-12);
    assert_rel(r->est.capacity_bytes, 96.0 * 1073741824.0, 1e-12);
    assert_string_equal(r->gpu.name, "H100-96GB");
    assert_non_null(strstr(r->notes, "GPU memory 96 GiB as stated"));
    x.gpu_mem_gb = "80";
    r = run(&x);
    assert_false(r->own_gpu);
    assert_rel(r->est.capacity_bytes, 80.0 * 1073741824.0, 1e-12);
    /* the export parts of a chip: its compute, and NVLink at 400 GB/s */
    static const struct {
        const char *gpu, *inst;
    } parts[] = {{"H800 80GB", "8xH800-80GB 1600Gbps RDMA"}, /* its node, the row's network */
                 {"A800-SXM4-80GB", "hgx-a800"}};               /* the row's network is its own */
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        x.gpu_type = parts[i].gpu;
        r = run(&x);
        assert_true(r->compared);
        assert_string_equal(r->inst.name, parts[i].inst);
        assert_rel(r->inst.nvlink_bps, 200e9, 1e-12);
    }
}

/* NeMo's GPT configs train with the GPT-2 BPE vocabulary padded to 128 x TP;
 * "none (...checkpoint... null)" is no recomputation. */
static void test_framework_defaults(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "901", .source_key = "t", .model_name = "GPT-3 5B",
        .architecture = "GPT-3 style", .framework = "NeMo Megatron (launcher, 2023)",
        .num_layers = "24", .hidden_size = "4096", .num_heads = "32", .seq_len = "2048",
        .gpu_type = "A100-SXM4-80GB", .gpu_mem_gb = "80", .num_gpus = "16", .tp = "2",
        .pp = "1", .micro_batch_size = "4", .global_batch_size = "256",
        .recompute = "none (activations_checkpoint_granularity null in default config)",
        .sequence_parallel = "no", .precision = "bf16", .tokens_per_s_total = "40000",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    /* sequence parallelism by its flag's names, a no given as its value
     * off; the default (on with TP in NeMo 2023) otherwise */
    static const struct {
        const char *text;
        int sp;
    } sps[] = {
        {"--sequence-parallel", 1}, {"sequence_parallel=True", 1},
        {"sequence_parallel=False", 0}, {"sequence parallelism: off", 0},
        {"without sequence parallelism", 0}, {"no", 0},
    };
    for (size_t i = 0; i < sizeof sps / sizeof sps[0]; i++) {
        x.sequence_parallel = sps[i].text;
        r = run(&x);
        if (!r->compared || r->layout.sequence_parallel != sps[i].sp)
            fail_msg("'%s': compared %d, sequence parallel %d", sps[i].text, r->compared,
                     r->layout.sequence_parallel);
    }
    assert_true(r->compared);
    assert_int_equal(r->model.vocab, 50432); /* 50257 up to a multiple of 256 */
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_NONE);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_OPTIMIZER); /* distributed fused Adam */
    assert_non_null(strstr(r->notes, "vocabulary 50257 (GPT-3's tokenizer"));
    /* a model of no family the traits name: the stack's GPT-2 BPE default */
    x.architecture = "decoder-only transformer";
    x.model_name = "5B model";
    r = run(&x);
    assert_int_equal(r->model.vocab, 50432);
    assert_non_null(strstr(r->notes, "GPT-2 BPE"));
    /* a family's own tokenizer, whatever the stack; a version word is not
     * inside a longer number (LLaMA 30B is not a Llama 3) */
    static const struct {
        const char *name, *fw;
        int64_t vocab;
    } fam[] = {
        {"LLaMA 30B", "NeMo Megatron (launcher, 2023)", 32000},
        {"Llama 3.1 8B", "NeMo Megatron (launcher, 2023)", 128256},
        {"Llama-3-70B", "Megatron-LM", 128256},
        {"GPT-3 13B", "DeepSpeed", 50257},
    };
    x.tp = "1";
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        x.architecture = NULL;
        x.model_name = fam[i].name;
        x.framework = fam[i].fw;
        r = run(&x);
        assert_true(r->compared);
        assert_true(r->model.vocab >= fam[i].vocab && r->model.vocab < fam[i].vocab + 512);
    }
    x.tp = "2";
    x.architecture = "GPT-3 style";
    x.model_name = "GPT-3 5B";
    x.framework = "NeMo Megatron (launcher, 2023)";
    /* an unknown stack that publishes TP is read as Megatron-Core, one that
     * publishes data parallelism alone as plain PyTorch, and either says so */
    x.framework = "SomeFutureTrainer 3.0";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron@2025");
    assert_non_null(strstr(r->notes, "not known: read as Megatron"));
    /* ... the release in force at its source's date */
    x.source_date = "2021-08";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron@2021");
    x.source_date = NULL;
    x.tp = "1";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "pytorch@2024");
    assert_non_null(strstr(r->notes, "not known: read as PyTorch 2.2+ DDP"));
    assert_int_equal(r->layout.attention, PLAN_ATTN_FLASH2);
    /* ... by its date too: before PyTorch 2 no fused attention, then the
     * first FlashAttention in scaled_dot_product_attention */
    x.source_date = "2021-08";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "pytorch@2019");
    assert_int_equal(r->layout.attention, PLAN_ATTN_UNFUSED);
    x.source_date = "2023-06";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "pytorch@2023");
    assert_int_equal(r->layout.attention, PLAN_ATTN_FLASH1);
    /* ... unless its text names a model-parallel scheme by Megatron's
     * names for it, or the row says sequence parallelism */
    x.framework = "in-house trainer (model and sequence parallelism)";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron@2023");
    assert_non_null(strstr(r->notes, "whose model-parallel scheme the row names"));
    x.framework = "SomeFutureTrainer 3.0";
    x.sequence_parallel = "yes";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron@2023");
    x.sequence_parallel = NULL;
    /* ... and a data-parallel one whose sharding carries a sharding
     * stack's names as that stack: ZeRO's stages DeepSpeed, FSDP's
     * strategies PyTorch FSDP; "zero bubble" is no ZeRO */
    static const struct {
        const char *sharding, *key;
    } shard[] = {
        {"ZeRO-3", "deepspeed@2022"},       {"ZeRO stage 2", "deepspeed@2022"},
        {"P_os+g", "deepspeed@2022"},       {"FULL_SHARD", "fsdp@2023"},
        {"FSDP, HYBRID_SHARD", "fsdp@2023"}, {"zero bubble schedule", "pytorch@2023"},
        {"optimizer states sharded", "pytorch@2023"},
    };
    for (size_t i = 0; i < sizeof shard / sizeof shard[0]; i++) {
        x.optimizer_sharding = shard[i].sharding;
        r = run(&x);
        if (strcmp(plan_framework_get(r->framework)->key, shard[i].key) != 0)
            fail_msg("'%s': read as %s, want %s", shard[i].sharding,
                     plan_framework_get(r->framework)->key, shard[i].key);
        if (strcmp(shard[i].key, "pytorch@2023") != 0)
            assert_non_null(strstr(r->notes, "whose sharding the row names by that stack's names"));
    }
    x.optimizer_sharding = NULL;
    /* FSDP by its PyTorch release the same way */
    x.framework = "PyTorch FSDP";
    x.source_date = "2022-09";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "fsdp@2022");
    assert_int_equal(r->layout.attention, PLAN_ATTN_UNFUSED);
    x.source_date = "2023-09";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "fsdp@2023");
    assert_int_equal(r->layout.attention, PLAN_ATTN_FLASH1);
    /* ... whose degrees it cannot run (FSDP1 has no tensor parallelism):
     * a stack built on it that can, FSDP with Megatron's TP (metaseq); a
     * pipeline besides, PyTorch's own composition of them (torchtitan) */
    x.tp = "2";
    r = run(&x);
    assert_true(r->compared);
    assert_string_equal(plan_framework_get(r->framework)->key, "metaseq@2022");
    assert_non_null(strstr(r->notes, "a stack built on it that does"));
    x.pp = "2";
    x.dp = "";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "torchtitan@2024");
    x.tp = "1";
    x.pp = "1";
    /* no framework column: the stack the source's title names, else as an
     * unknown one */
    x.framework = "";
    x.source_title = "MosaicML llm-foundry benchmarks";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "llm-foundry@2023");
    assert_non_null(strstr(r->notes, "which the source's title names"));
    x.source_title = "A study of training throughput";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "pytorch@2023");
}

/* A Nanotron run that states its degrees and nothing else is read with
 * Nanotron's defaults (parallelism_config.py): all-forward-all-backward
 * (GPipe) pipelining, tensor parallelism without sequence parallelism,
 * FlashAttention-2, fp32 gradient accumulation, no ZeRO; a stated ZeRO-1
 * shards the optimizer. GPipe keeps every microbatch's activations, so the
 * same layout needs more memory than under 1F1B. */
static void test_nanotron_defaults(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "902", .source_key = "t", .model_name = "Llama 3 8B", .architecture = "Llama",
        .framework = "Nanotron", .source_date = "2025-02", .num_layers = "32",
        .hidden_size = "4096", .num_heads = "32", .num_kv_heads = "8",
        .ffn_hidden_size = "14336", .seq_len = "4096", .vocab_size = "128256",
        .gpu_type = "H100-SXM5-80GB", .gpu_mem_gb = "80", .num_gpus = "32", .tp = "2",
        .pp = "2", .micro_batch_size = "1", .global_batch_size = "64",
        .iteration_time_s = "3",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_string_equal(plan_framework_get(r->framework)->key, "nanotron@2024");
    assert_int_equal(r->layout.schedule, PLAN_SCHED_SIMPLE);
    assert_non_null(strstr(r->notes, "schedule gpipe (Nanotron"));
    assert_int_equal(r->layout.sequence_parallel, 0);
    assert_int_equal(r->layout.attention, PLAN_ATTN_FLASH2);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_NONE);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_NONE);
    double gpipe_bytes = r->pred_mem_bytes;
    x.optimizer_sharding = "ZeRO-1";
    r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_OPTIMIZER);
    assert_true(r->pred_mem_bytes < gpipe_bytes);
    /* the same layout as Megatron-Core runs it (1F1B, or its interleaved
     * schedule: the run states neither) holds fewer microbatches */
    x.optimizer_sharding = NULL;
    x.framework = "Megatron-Core 0.10";
    r = run(&x);
    assert_true(r->layout.schedule == PLAN_SCHED_INTERLEAVED ||
                r->layout.schedule == PLAN_SCHED_VIRTUAL);
    assert_true(r->pred_mem_bytes < gpipe_bytes);
}

/* Number formats by their names; a 16-bit mixed precision whose format is
 * not named is the release's default (-2), as one not stated. */
static void test_precision_names(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"bf16", PLAN_PREC_BF16},          {"amp_bf16 (mp_mode DEFAULT)", PLAN_PREC_BF16},
        {"fp16 mixed", PLAN_PREC_FP16},    {"Apex AMP O2", PLAN_PREC_FP16},
        {"amp O1", PLAN_PREC_FP16},        {"16-mixed", PLAN_PREC_FP16},
        {"bf16-mixed", PLAN_PREC_BF16},    {"FP8 (Transformer Engine)", PLAN_PREC_FP8},
        {"float8 linears", PLAN_PREC_FP8}, {"fp32", PLAN_PREC_FP32},
        {"mixed precision", -2},          {"AMP", -2},
        {"not stated (bf16?)", -2},       {"", -2},
        /* FP8 named only to say it was not used */
        {"bf16 (no FP8)", PLAN_PREC_BF16}, {"BF16, FP8 off", PLAN_PREC_BF16},
        {"bf16 without fp8", PLAN_PREC_BF16},   {"bf16, FP8 (not used)", PLAN_PREC_BF16},
        /* 4-bit floating point by its names: not modelled */
        {"NVFP4", PLAN__PREC_FP4},         {"MXFP4 (E2M1) linears", PLAN__PREC_FP4},
        {"bf16, no FP4", PLAN_PREC_BF16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__parse_precision(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text, plan__parse_precision(cases[i].text),
                     cases[i].want);
}

/* FP8 on a chip without FP8 tensor cores (an A100): the row contradicts
 * itself, and is refused saying so. */
static void test_fp8_needs_fp8_chip(void **state)
{
    (void)state;
    plan_validate_row x = dgxc_114;
    x.gpu_type = "A100-SXM4-80GB";
    x.precision = "FP8 (Transformer Engine)";
    refused(&x, "the A100-80GB has no FP8 tensor cores");
}

/* The GPUs of the catalog that are H100-80GB, their mem_err_pct set to pct. */
static void set_h100_band(double pct)
{
    for (int i = 0; i < cat.ngpus; i++)
        cat.gpus[i].mem_err_pct = strcmp(cat.gpus[i].name, "H100-80GB") == 0 ? pct : 0.0;
}

/* A run that ran with its recompute left to a stack whose default (none)
 * cannot hold it by more than the memory model's band: read as the least
 * recompute of the stack's that fits (Megatron's block method, the fewest
 * layers); a stated recompute, a run that went OOM, a miss within the band
 * and a catalog without a band keep the default. */
static void test_unstated_recompute(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "908", .source_key = "t", .model_name = "GPT 175B", .architecture = "GPT",
        .framework = "Megatron-Core", .source_date = "2024-06", .num_layers = "96",
        .hidden_size = "12288", .num_heads = "96", .seq_len = "4096", .vocab_size = "51200",
        .gpu_type = "H100 SXM 80GB", .num_gpus = "128", .tp = "8", .pp = "4", .dp = "4",
        .virtual_stages = "1", .micro_batch_size = "2", .global_batch_size = "256",
        .precision = "bf16", .iteration_time_s = "20",
    };
    set_h100_band(5.0);
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_false(r->pred_oom);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_FULL);
    int n = r->layout.recompute_layers;
    assert_true(n > 0 && n < 96 / 4);
    assert_non_null(strstr(r->notes, "recompute not stated"));
    assert_non_null(strstr(r->notes, "the block method), the least that fits"));
    check_error_arithmetic(r);
    /* the least: one layer fewer does not fit */
    plan_layout less = r->layout;
    less.recompute_layers = n - 1;
    if (less.recompute_layers == 0)
        less.recompute = PLAN_RECOMP_NONE;
    plan_cluster c;
    st_err err = {0};
    assert_int_equal(plan_validate_cluster(&cat, r, &c, &err), ST_OK);
    plan_estimate *e = calloc(1, sizeof *e);
    assert_non_null(e);
    assert_int_equal(plan_evaluate(&r->model, &c, &less, e, NULL, &err), ST_OK);
    assert_int_equal(e->reject, PLAN_REJ_OOM);
    double over = plan_mem_need_bytes(&e->mem) / e->capacity_bytes - 1.0;

    /* stated: as stated, a fit miss */
    x.recompute = "none";
    r = run(&x);
    assert_true(r->compared);
    assert_true(r->pred_oom);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_NONE);
    assert_null(strstr(r->notes, "recompute not stated"));
    double over_none = plan_mem_need_bytes(&r->est.mem) / r->est.capacity_bytes - 1.0;
    assert_true(over_none > 0.05);
    /* stated, but the row says it derived it (from a default config): its
     * reading, not the run's, so read from memory as an unstated one */
    x.derived_fields = "tp/pp/recompute from the repository's default config";
    r = run(&x);
    assert_false(r->pred_oom);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_FULL);
    assert_int_equal(r->layout.recompute_layers, n);
    assert_non_null(strstr(r->notes, "recompute 'none' derived by the row"));
    assert_non_null(strstr(r->notes, "recompute derived by the row, and its"));
    /* a column only containing the word is not it */
    x.derived_fields = "recompute_layers from the paper's Table 3; recomputed_flops";
    assert_true(run(&x)->pred_oom);
    x.derived_fields = NULL;
    x.recompute = NULL;
    /* the default over by less than the band */
    set_h100_band(100.0 * over_none + 1.0);
    r = run(&x);
    assert_true(r->pred_oom);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_NONE);
    /* no band on any chip */
    set_h100_band(0.0);
    assert_true(run(&x)->pred_oom);
    /* a run that went out of memory is not one that fit */
    set_h100_band(5.0);
    x.memory_metric = "OOM";
    r = run(&x);
    assert_true(r->ref_oom);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_NONE);
    x.memory_metric = NULL;
    /* a stack without the block method recomputes every layer */
    x.framework = "PyTorch FSDP", x.tp = "1", x.pp = "1", x.dp = "128";
    r = run(&x);
    assert_false(r->pred_oom);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_FULL);
    assert_int_equal(r->layout.recompute_layers, 0);
    assert_non_null(strstr(r->notes, "read as full recompute, the least that fits"));
    assert_true(over > 0);
    /* none fits, but recomputing every layer closes most of the gap (the
     * activations are the bulk of it): read as that, still a fit miss */
    x.micro_batch_size = "16", x.global_batch_size = "2048";
    r = run(&x);
    assert_true(r->compared);
    assert_true(r->pred_oom);
    assert_true(r->recompute_inferred);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_FULL);
    assert_int_equal(r->layout.recompute_layers, 0);
    assert_non_null(strstr(r->notes, "no recompute of the stack's fits: read as full recompute, "
                                     "the least memory of them"));
    check_error_arithmetic(r);
    /* where the weights and optimizer state are the bulk (DDP keeps all of
     * them on every GPU), recompute closes little of it: the default kept */
    x.framework = "PyTorch DDP";
    r = run(&x);
    assert_true(r->pred_oom);
    assert_false(r->recompute_inferred);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_NONE);
    assert_null(strstr(r->notes, "no recompute of the stack's fits"));
    set_h100_band(0.0);
    free(e);
}

/* One configuration, one recompute (plan_validate_rows): the rows of a
 * source that give one config at several GPU counts, their recompute left
 * open, are read with the most any of them needed, the least that fits
 * them all; another source's row, and a row that states its recompute,
 * keep their own readings. */
static void test_shared_recompute(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "908", .source_key = "t", .model_name = "GPT 175B", .architecture = "GPT",
        .framework = "Megatron-Core", .source_date = "2024-06", .num_layers = "96",
        .hidden_size = "12288", .num_heads = "96", .seq_len = "4096", .vocab_size = "51200",
        .gpu_type = "H100 SXM 80GB", .num_gpus = "128", .tp = "8", .pp = "4",
        .virtual_stages = "1", .micro_batch_size = "2", .global_batch_size = "256",
        .precision = "bf16", .iteration_time_s = "20",
    };
    set_h100_band(5.0);
    plan_validate_row rows[4] = {x, x, x, x};
    rows[1].row_id = "909", rows[1].num_gpus = "512";
    rows[2] = rows[1], rows[2].row_id = "910", rows[2].source_key = "u";
    rows[3] = rows[1], rows[3].row_id = "911", rows[3].recompute = "selective";
    plan_validate_result *res = calloc(4, sizeof *res);
    assert_non_null(res);
    st_err err = {0};
    /* each alone: the larger data-parallel degree shards the optimizer
     * thinner and needs less recompute */
    for (int i = 0; i < 4; i++)
        assert_int_equal(plan_validate_run(&cat, &rows[i], &res[i], NULL, &err), ST_OK);
    const plan_layout *a = &res[0].layout;
    assert_int_equal(a->recompute, PLAN_RECOMP_FULL);
    assert_true(a->recompute_layers > 0);
    double need = plan__recompute_rank(a->recompute, a->recompute_layers);
    assert_true(res[1].compared && res[1].recompute_open);
    assert_true(plan__recompute_rank(res[1].layout.recompute, res[1].layout.recompute_layers) <
                need);
    double own = plan__recompute_rank(res[2].layout.recompute, res[2].layout.recompute_layers);
    /* together */
    assert_int_equal(plan_validate_rows(&cat, rows, 4, res, &err), ST_OK);
    assert_int_equal(res[1].layout.recompute, a->recompute);
    assert_int_equal(res[1].layout.recompute_layers, a->recompute_layers);
    assert_true(res[1].recompute_shared);
    assert_non_null(strstr(res[1].notes, "(row 908 needs it): one configuration runs one"));
    assert_true(res[1].compared);
    check_error_arithmetic(&res[1]);
    assert_false(res[0].recompute_shared);
    assert_false(res[2].recompute_shared); /* another source */
    assert_true(plan__recompute_rank(res[2].layout.recompute, res[2].layout.recompute_layers) ==
                own);
    assert_false(res[3].recompute_shared); /* stated */
    assert_int_equal(res[3].layout.recompute, PLAN_RECOMP_SELECTIVE);
    /* the explanation reads the row as the file does */
    plan_terms *t = calloc(1, sizeof *t);
    assert_non_null(t);
    assert_int_equal(plan_validate_terms(&cat, &rows[1], &res[1], t, &err), ST_OK);
    int found = 0;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, "step") == 0)
            found = fabs(t->v[i].value - res[1].pred_time_s) <= 1e-9 * res[1].pred_time_s;
    assert_true(found);
    free(t);
    free(res);
    set_h100_band(0.0);
}

/* A run's own fused kernels for what its stack's model runs as separate
 * ATen ops (TinyLlama's fused RMSNorm, SwiGLU and rotary; Liger's): the
 * fused counts, as compiled; the words alone, not "fused attention" or
 * "not fused". */
static void test_fused_kernel_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"lit-gpt with fused RMSNorm and fused SwiGLU", 1}, {"fused rotary embedding", 1},
        {"Liger kernels", 1}, {"fused-layernorm", 1}, {"fused attention", 0},
        {"FlashAttention-2", 0}, {"no fused kernels", 0}, {NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__says_fused_kernels(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text ? cases[i].text : "(null)",
                     plan__says_fused_kernels(cases[i].text), cases[i].want);
    plan_validate_row x = {
        .row_id = "910", .source_key = "t", .model_name = "Llama", .architecture = "Llama",
        .framework = "PyTorch FSDP", .source_date = "2024-01", .num_layers = "22",
        .hidden_size = "2048", .num_heads = "32", .num_kv_heads = "4",
        .ffn_hidden_size = "5632", .seq_len = "2048", .vocab_size = "32000",
        .gpu_type = "A100-SXM4-40GB", .num_gpus = "16", .tp = "1", .pp = "1",
        .micro_batch_size = "8", .global_batch_size = "1024", .iteration_time_s = "5",
    };
    plan_validate_result *r = run(&x);
    assert_false(r->layout.fused_pointwise);
    double eager_s = r->pred_time_s;
    double eager_act = r->est.mem.activations_bytes;
    x.framework = "PyTorch FSDP, fused RMSNorm, fused SwiGLU, fused rotary embedding";
    r = run(&x);
    assert_true(r->layout.fused_pointwise);
    assert_non_null(strstr(r->notes, "fused kernels named"));
    assert_true(r->pred_time_s < eager_s);
    assert_true(r->est.mem.activations_bytes < eager_act);
    /* the same as the compiled model */
    double fused_s = r->pred_time_s;
    x.framework = "PyTorch FSDP + torch.compile";
    r = run(&x);
    assert_true(r->layout.compiled);
    assert_false(r->layout.fused_pointwise);
    assert_rel(r->pred_time_s, fused_s, 1e-12);
}

/* Whole layers checkpointed one in N (torchtitan's selective_ac_option N,
 * or the same in words): full recompute of Lc / N of each chunk's Lc
 * layers, between no recompute and full in time. */
static void test_recompute_every(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"selective_ac_option 2", 2},      {"selective_ac_option = \"4\"", 4},
        {"selective_ac_option 'op'", -1}, {"every other layer", 2},
        {"every 3rd layer", 3},            {"every 4 layers", 4},
        {"every layer", -1},               {"full", -1},
        {NULL, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__parse_recompute_every(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text ? cases[i].text : "(null)",
                     plan__parse_recompute_every(cases[i].text), cases[i].want);
    plan_validate_row x = {
        .row_id = "907", .source_key = "t", .model_name = "Llama 3.1 8B", .architecture = "Llama",
        .framework = "torchtitan (FSDP2)", .source_date = "2024-10", .num_layers = "32",
        .hidden_size = "4096", .num_heads = "32", .num_kv_heads = "8",
        .ffn_hidden_size = "14336", .seq_len = "8192", .vocab_size = "128256",
        .gpu_type = "H100-SXM5-80GB", .gpu_mem_gb = "80", .num_gpus = "8", .tp = "1",
        .pp = "1", .micro_batch_size = "1", .global_batch_size = "8",
        .recompute = "selective, selective_ac_option 2", .iteration_time_s = "2.5",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_FULL);
    assert_int_equal(r->layout.recompute_layers, 16);
    assert_non_null(strstr(r->notes, "one layer in 2: 16 of each chunk's 32"));
    double half = r->pred_time_s;
    x.recompute = "full";
    r = run(&x);
    double full = r->pred_time_s;
    x.recompute = "none";
    r = run(&x);
    assert_true(r->pred_time_s < half && half < full);
}

/* A batch published as a round figure ("4M tokens": 1953.1 sequences of
 * 2048) with no layout published: no layout of 2048 GPUs divides 1953
 * sequences, so the row is read at the nearest batch within 5 % that one
 * does (1952), said, and compared. */
static void test_round_batch_searched(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "906", .source_key = "t", .model_name = "GPT 1.3B", .architecture = "GPT-3",
        .framework = "Megatron-LM", .source_date = "2022-06", .num_layers = "24",
        .hidden_size = "2048", .num_heads = "16", .seq_len = "2048", .vocab_size = "51200",
        .gpu_type = "A100-SXM4-80GB", .gpu_mem_gb = "80", .num_gpus = "2048",
        .global_batch_tokens = "4000000", .tokens_per_s_per_gpu = "3000",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.global_batch, 1952);
    assert_non_null(strstr(r->notes, "global batch 1953 read as 1952"));
    /* the reference time is that batch's tokens at the published rate */
    assert_rel(r->ref_time_s, 1952.0 * 2048.0 / (3000.0 * 2048.0), 1e-12);
    /* written with its prefix, "4M" is 4 x 2^20 tokens (count_num): 2048
     * whole sequences */
    x.global_batch_tokens = "4M tokens";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.global_batch, 2048);
}

/* TP communication overlap by the stacks' names: torchtitan's async TP
 * (compiled, as torchtitan requires) pipelines its sequence-parallel
 * collectives and shortens the step; Megatron-Core's tp_comm_overlap off
 * keeps the backward's overlap; a stack without the knob says so. */
static void test_tp_overlap_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"torchtitan FSDP2 + TP + AsyncTP", 1},
        {"experimental.enable_async_tensor_parallel = true", 1},
        {"async TP", 1},
        {"--tp-comm-overlap", 1},
        {"tp_comm_overlap: False", 0},
        {"tp_comm_overlap=false", 0},
        {"enable_async_tensor_parallel = false", 0},
        {"without async TP", 0},
        {"no TP comm overlap", 0},
        {"torchtitan FSDP2 + TP", -1},
        {"TP comm, PP comm", -1},
        {NULL, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__says_tp_overlap(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text ? cases[i].text : "(null)",
                     plan__says_tp_overlap(cases[i].text), cases[i].want);
    plan_validate_row x = {
        .row_id = "905", .source_key = "t", .model_name = "Llama 3.1 70B", .architecture = "Llama",
        .framework = "torchtitan FSDP2 + TP", .source_date = "2024-10", .num_layers = "80",
        .hidden_size = "8192", .num_heads = "64", .num_kv_heads = "8",
        .ffn_hidden_size = "28672", .seq_len = "8192", .vocab_size = "128256",
        .gpu_type = "H100-SXM5-80GB", .gpu_mem_gb = "80", .num_gpus = "64", .tp = "8",
        .pp = "1", .micro_batch_size = "2", .global_batch_size = "16",
        .recompute = "full", .iteration_time_s = "10",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.tp_overlap, 0);
    assert_int_equal(r->layout.compiled, 0);
    double plain_s = r->pred_time_s;
    x.framework = "torchtitan FSDP2 + TP + AsyncTP";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.tp_overlap, 2);
    assert_int_equal(r->layout.compiled, 1);
    assert_true(r->pred_time_s < plain_s);
    assert_non_null(strstr(r->notes, "async TP, compiled"));
    x.framework = "Megatron-Core 0.8, tp_comm_overlap False";
    x.source_date = "2024-06";
    r = run(&x);
    assert_int_equal(r->layout.tp_overlap, 1);
    assert_non_null(strstr(r->notes, "TP overlap off as stated"));
    x.framework = "DeepSpeed, async TP";
    r = run(&x);
    assert_non_null(strstr(r->notes, "no such knob modelled"));
}

/* DeepSpeed-Ulysses by its names, with its degree where given; a row
 * naming it is read as context parallelism on a release that has it
 * (Megatron-DeepSpeed from 2023; a stack not known by name as DeepSpeed's),
 * and refused on one that has none; a context-parallel degree on a stack
 * without context parallelism is refused too. */
static void ulysses_rows(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"DeepSpeed-Ulysses 8", 8},          {"4-way Ulysses", 4},
        {"ds_sequence_parallel_size=16", 16}, {"--ds-sequence-parallel-size 2", 2},
        {"Ulysses", 0},                      {"sequence parallel", -1},
        {"ring attention", -1},              {NULL, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__ulysses_degree(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text ? cases[i].text : "(null)",
                     plan__ulysses_degree(cases[i].text), cases[i].want);
    plan_validate_row x = {
        .row_id = "907", .source_key = "t", .model_name = "GPT 7B", .architecture = "GPT",
        .framework = "Megatron-DeepSpeed", .source_date = "2023-09", .num_layers = "32",
        .hidden_size = "4096", .num_heads = "32", .seq_len = "65536", .vocab_size = "50304",
        .gpu_type = "A100 80GB", .num_gpus = "32", .tp = "1", .pp = "1",
        .micro_batch_size = "1", .global_batch_size = "8", .recompute = "full",
        .sequence_parallel = "DeepSpeed-Ulysses 8", .iteration_time_s = "20",
        .notes = "FlashAttention-2",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron-deepspeed@2023");
    assert_int_equal(r->layout.cp, 8);
    assert_int_equal(r->layout.dp, 4);
    assert_int_equal(r->layout.sequence_parallel, 0);
    assert_non_null(strstr(r->notes, "DeepSpeed-Ulysses over 8 GPUs"));
    /* the cp column on a release with it */
    x.sequence_parallel = NULL;
    x.cp = "8";
    r = run(&x);
    assert_int_equal(r->layout.cp, 8);
    /* ... dated before Ulysses: the run had it, so the release with it */
    x.source_date = "2023-01";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron-deepspeed@2023");
    assert_non_null(strstr(r->notes, "the first release of its stack with it"));
    /* a stack that never had context parallelism refuses it */
    x.framework = "SageMaker model parallel v1";
    refused(&x, "has no context parallelism");
    x.framework = "Megatron-DeepSpeed";
    x.source_date = "2023-01";
    /* named, on a release before it: the stack's release with it */
    x.notes = "DeepSpeed-Ulysses, FlashAttention-2";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron-deepspeed@2023");
    /* a stack not known by name: DeepSpeed's */
    x.framework = "in-house";
    r = run(&x);
    assert_string_equal(plan_framework_get(r->framework)->key, "deepspeed@2023");
    /* a stack known by name without it */
    x.framework = "Megatron-Core";
    x.source_date = "2024-06";
    refused(&x, "DeepSpeed-Ulysses: Megatron-Core");
}

/* A GPU named without its memory ("A100": 40 and 80 GB in the catalog) is
 * its chip's first size, unless the run's layout, as the row gives it, fits
 * only a larger one: the run ran, so the smallest that holds it. A stated
 * memory, or a layout no size holds, stays as read. */
static void unstated_gpu_memory(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "909", .source_key = "t", .model_name = "GPT 6.7B", .architecture = "GPT",
        .framework = "Megatron-LM", .source_date = "2022-09", .num_layers = "32",
        .hidden_size = "4096", .num_heads = "32", .seq_len = "2048", .vocab_size = "51200",
        .gpu_type = "A100", .num_gpus = "64", .tp = "2", .pp = "1", .micro_batch_size = "2",
        .global_batch_size = "512", .precision = "bf16", .iteration_time_s = "5",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_false(r->pred_oom);
    assert_rel(r->est.capacity_bytes, 80.0 * 1073741824.0, 1e-12);
    assert_non_null(strstr(r->notes, "GPU memory not stated: read as 80 GiB"));
    /* stated */
    x.gpu_mem_gb = "40";
    r = run(&x);
    assert_true(r->pred_oom);
    assert_rel(r->est.capacity_bytes, 40.0 * 1073741824.0, 1e-12);
    x.gpu_mem_gb = NULL;
    /* a model small enough for the first size keeps it */
    x.num_layers = "12", x.hidden_size = "768", x.num_heads = "12";
    r = run(&x);
    assert_false(r->pred_oom);
    assert_rel(r->est.capacity_bytes, 40.0 * 1073741824.0, 1e-12);
    assert_null(strstr(r->notes, "GPU memory not stated"));
    /* no size holds it: the first, a fit miss */
    x.num_layers = "40", x.hidden_size = "5120", x.num_heads = "40";
    r = run(&x);
    assert_true(r->pred_oom);
    assert_rel(r->est.capacity_bytes, 40.0 * 1073741824.0, 1e-12);
}

/* torchtitan has no gradient accumulation, but its pipeline splits a
 * replica's batch into as many microbatches as it has stages unless set
 * (pipeline_parallel_microbatches): 64 sequences over dp 2 and pp 4 are 4
 * microbatches of 8; a batch that does not split so is refused. */
static void torchtitan_pipeline_microbatches(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "906", .source_key = "t", .model_name = "Llama 3.1 8B", .architecture = "Llama",
        .framework = "torchtitan", .source_date = "2024-10", .num_layers = "32",
        .hidden_size = "4096", .num_heads = "32", .num_kv_heads = "8",
        .ffn_hidden_size = "14336", .seq_len = "8192", .vocab_size = "128256",
        .gpu_type = "H100-SXM5-80GB", .num_gpus = "8", .tp = "1", .pp = "4",
        .global_batch_size = "64", .recompute = "full", .iteration_time_s = "10",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.dp, 2);
    assert_int_equal(r->layout.micro_batch, 8);
    assert_int_equal(r->layout.microbatches, 4);
    assert_non_null(strstr(r->notes, "a replica's batch of 32 in 4 microbatches"));
    /* without a pipeline: the replica's batch is one microbatch */
    x.pp = "1";
    r = run(&x);
    assert_int_equal(r->layout.micro_batch, 8);
    assert_int_equal(r->layout.microbatches, 1);
    x.pp = "4";
    x.global_batch_size = "6";
    refused(&x, "does not split into dp 2 x pp 4 microbatches");
}

/* torch.compile by PyTorch's and torchtitan's names: a torchtitan run
 * under it has its pointwise ops fused and runs faster than the same run
 * eager; "without torch.compile" and compile = false are eager; a stack
 * with no such knob modelled says so and reads the run as it is. */
static void test_compile_words(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "904", .source_key = "t", .model_name = "Llama 3.1 8B", .architecture = "Llama",
        .framework = "torchtitan (FSDP2)", .source_date = "2024-10", .num_layers = "32",
        .hidden_size = "4096", .num_heads = "32", .num_kv_heads = "8",
        .ffn_hidden_size = "14336", .seq_len = "8192", .vocab_size = "128256",
        .gpu_type = "H100-SXM5-80GB", .gpu_mem_gb = "80", .num_gpus = "8", .tp = "1",
        .pp = "1", .micro_batch_size = "2", .global_batch_size = "16",
        .recompute = "selective", .iteration_time_s = "2.5",
    };
    plan_validate_result *r = run(&x);
    assert_int_equal(r->layout.compiled, 0);
    double eager_s = r->pred_time_s;
    static const struct {
        const char *text;
        int compiled;
    } words[] = {
        {"torchtitan (FSDP2) + torch.compile", 1},
        {"torchtitan, compiled", 1},
        {"torchtitan without torch.compile", 0},
        {"torchtitan; training.compile = false", 0},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        x.framework = words[i].text;
        r = run(&x);
        if (r->layout.compiled != words[i].compiled)
            fail_msg("'%s': compiled %d, want %d", words[i].text, r->layout.compiled,
                     words[i].compiled);
        if (words[i].compiled)
            assert_true(r->pred_time_s < eager_s);
    }
    /* PyTorch FSDP from PyTorch 2.0 has the knob; Megatron-Core has not */
    x.framework = "PyTorch FSDP + torch.compile";
    r = run(&x);
    assert_int_equal(r->layout.compiled, 1);
    x.framework = "Megatron-Core + torch.compile";
    r = run(&x);
    assert_int_equal(r->layout.compiled, 0);
    assert_non_null(strstr(r->notes, "torch.compile named"));
    /* xformers' memory-efficient attention: a fused kernel, the first
     * FlashAttention's generation (LLaMA's, Touvron et al. 2023) */
    x.framework = "PyTorch + xformers";
    r = run(&x);
    assert_int_equal(r->layout.attention, PLAN_ATTN_FLASH1);
    assert_int_equal(r->layout.flash_attention, 1);
    x.framework = "PyTorch + xformers (FlashAttention-2 backend)";
    r = run(&x);
    assert_int_equal(r->layout.attention, PLAN_ATTN_FLASH2);
    /* torchtitan's FSDP with a pipeline keeps each block's gathered
     * parameters (reshard_after_forward False): a stated FSDP is its
     * ZeRO-2-like sharding there */
    x.framework = "torchtitan";
    x.optimizer_sharding = "FSDP";
    x.pp = "2";
    x.dp = "4";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_GRADIENTS);
    assert_non_null(strstr(r->notes, "with a pipeline as that"));
    x.pp = "1";
    x.dp = NULL;
    r = run(&x);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_PARAMS);
}

/* A pipelined run that states its micro-batch but not its schedule, on a
 * stack with more than one (schedules_unknown: Megatron-LM's 1F1B and its
 * interleaved schedule), has the schedule searched as a tuned run would
 * pick it, the published micro-batch kept; a stated number of virtual
 * stages is the interleaved schedule; a stack that states none open
 * (NeMo's launcher: its configs give virtual_pipeline_model_parallel_size)
 * keeps 1F1B. */
static void test_schedule_unstated(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "903", .source_key = "t", .model_name = "GPT 175B",
        .architecture = "GPT-3 style", .framework = "Megatron-LM", .source_date = "2022-05",
        .num_layers = "96", .hidden_size = "12288", .num_heads = "96", .seq_len = "2048",
        .vocab_size = "51200", .gpu_type = "A100-SXM4-80GB", .gpu_mem_gb = "80",
        .num_gpus = "64", .tp = "8", .pp = "8", .micro_batch_size = "1",
        .global_batch_size = "64", .recompute = "selective", .iteration_time_s = "13.75",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_string_equal(plan_framework_get(r->framework)->key, "megatron@2022");
    assert_int_equal(r->micro_batch_searched, 0);
    assert_int_equal(r->layout.micro_batch, 1);
    assert_int_equal(r->layout.schedule, PLAN_SCHED_VIRTUAL);
    assert_non_null(strstr(r->notes, "schedule searched"));
    double searched_s = r->pred_time_s;
    x.virtual_stages = "1";
    r = run(&x);
    assert_int_equal(r->layout.schedule, PLAN_SCHED_INTERLEAVED);
    assert_true(r->pred_time_s > searched_s);
    x.virtual_stages = "3";
    r = run(&x);
    assert_int_equal(r->layout.schedule, PLAN_SCHED_VIRTUAL);
    assert_int_equal(r->layout.virtual_stages, 3);
    x.virtual_stages = NULL;
    x.framework = "NeMo Megatron (launcher, 2023)";
    r = run(&x);
    assert_int_equal(r->layout.schedule, PLAN_SCHED_INTERLEAVED);
    assert_null(strstr(r->notes, "schedule searched"));
}

/* The words runs are published with, for recompute, sharding and sequence
 * parallelism; "N/A" and the like are the stack's documented default. */
static void test_phrasings(void **state)
{
    (void)state;
    static const struct {
        const char *recompute, *sharding, *sp;
        int want_rc, want_sh, want_sp;
    } cases[] = {
        {"uniform", "", "", PLAN_RECOMP_FULL, PLAN_SHARD_OPTIMIZER, 0},
        {"block", "yes", "", PLAN_RECOMP_FULL, PLAN_SHARD_OPTIMIZER, 0},
        {"enabled", "use-distributed-optimizer", "", PLAN_RECOMP_FULL, PLAN_SHARD_OPTIMIZER, 0},
        {"N/A", "sharded optimizer states", "", PLAN_RECOMP_FULL, PLAN_SHARD_OPTIMIZER, 0},
        {"not used", "N/A", "n/a", PLAN_RECOMP_NONE, PLAN_SHARD_OPTIMIZER, 0},
        {"Full", "not used", "not used", PLAN_RECOMP_FULL, PLAN_SHARD_NONE, 0},
        /* DeepSpeed's configuration key */
        {"Full", "zero_optimization \"stage\": 1", "", PLAN_RECOMP_FULL, PLAN_SHARD_OPTIMIZER, 0},
        {"Full", "stage=0", "", PLAN_RECOMP_FULL, PLAN_SHARD_NONE, 0},
        /* a lone mark is "not given"; a flag that starts with dashes is a flag */
        {"-", "-", "?", PLAN_RECOMP_FULL, PLAN_SHARD_OPTIMIZER, 0},
        {"--checkpoint-activations", "", "", PLAN_RECOMP_FULL, PLAN_SHARD_OPTIMIZER, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_validate_row x = narayanan_23;
        x.framework = "Megatron-DeepSpeed"; /* full recompute, ZeRO-1 by default */
        x.tflops_per_gpu = ""; /* a throughput that counts no recompute */
        x.tflops_convention = "";
        x.tokens_per_s_total = "200000";
        x.recompute = cases[i].recompute;
        x.optimizer_sharding = cases[i].sharding;
        x.sequence_parallel = cases[i].sp;
        plan_validate_result *r = run(&x);
        if (!r->compared)
            print_message("case %zu: %s\n", i, r->reason);
        assert_true(r->compared);
        assert_int_equal(r->layout.recompute, cases[i].want_rc);
        assert_int_equal(r->layout.sharding, cases[i].want_sh);
        assert_int_equal(r->layout.sequence_parallel, cases[i].want_sp);
    }
}

/* Numbers as people write them: thousands separators and an approximation
 * mark are the number's, a measured column's unit is read; a decimal comma
 * or a unit of nothing measured here is not understood. */
static void test_written_numbers(void **state)
{
    (void)state;
    const plan_validate_result *r = run(&dgxc_114);
    double want_s = r->ref_time_s, want_pred = r->pred_time_s;
    plan_validate_row x = dgxc_114;
    x.global_batch_size = "128";
    x.seq_len = "8,192";
    x.vocab_size = "128,256";
    x.iteration_time_s = "~14.72";
    r = run(&x);
    assert_true(r->compared);
    assert_rel(r->ref_time_s, want_s, 1e-12);
    assert_rel(r->pred_time_s, want_pred, 1e-12);
    x.iteration_time_s = "14,72";
    refused(&x, "iteration_time_s '14,72'");
    /* a time with its unit: seconds, a step's, milliseconds */
    const char *timed[] = {"14.72 s", "14.72s", "14.72 s/step", "14720 ms", "14.72 sec/it"};
    for (size_t i = 0; i < sizeof timed / sizeof timed[0]; i++) {
        x.iteration_time_s = timed[i];
        r = run(&x);
        assert_true(r->compared);
        assert_rel(r->ref_time_s, want_s, 1e-12);
    }
    x.iteration_time_s = "14.72 parsecs";
    refused(&x, "iteration_time_s '14.72 parsecs'");
    x.iteration_time_s = "14.72";
    /* a data-parallel degree counted over the context-parallel ranks
     * (64 GPUs / TP 4 / PP 4 = 4 with CP 2): DP 2 */
    x.dp = "4";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.dp, 2);
    assert_int_equal(r->layout.cp, 2);
    assert_non_null(strstr(r->notes, "counts the context-parallel ranks"));
    x.dp = "3";
    refused(&x, "but the run has 64 GPUs");
    x.dp = dgxc_114.dp;
    /* heads left out, no model named to give them: hidden over the head
     * size stated, else over the derived shapes' 128 (64 below 1024) */
    x.model_name = "An unnamed 70B";
    x.num_heads = "";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->model.heads, 64);
    assert_non_null(strstr(r->notes, "heads not published: hidden 8192 / head size 128"));
    x.head_dim = "256";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->model.heads, 32);
    x.head_dim = "96"; /* does not divide 8192: no heads, no shape */
    refused(&x, "shape not published");
    x = dgxc_114;
    x.iteration_time_s = "14.72";
    x.seq_len = "8,1920";
    refused(&x, "seq_len '8,1920'");
}

/* A network named by its technology alone is that technology's node of
 * the chip: EFA on an A100 80GB is p4de's 400 Gb/s, not the reference
 * node's InfiniBand rate. */
static void test_network_technology_alone(void **state)
{
    (void)state;
    plan_validate_row x = narayanan_23;
    x.interconnect = "EFA";
    plan_validate_result *r = run(&x);
    assert_string_equal(r->instance, "p4de.24xlarge");
    x.interconnect = "";
    r = run(&x);
    assert_string_equal(r->instance, "dgx-a100");
}

/* A row that names a documented model without its shape takes the
 * model's published shape (data/models.json, data/hf_models.json); what
 * the row does give must agree, its sequence length is its own. */
static void test_known_model_shape(void **state)
{
    (void)state;
    st_err err = {0};
    assert_int_equal(data_known_models_load(&err), ST_OK);
    plan_validate_row x = dgxc_114;
    x.num_layers = x.hidden_size = x.num_heads = x.num_kv_heads = x.ffn_hidden_size = "";
    x.model_name = "Llama 3 70B (NeMo)";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->model.layers, 80);
    assert_int_equal(r->model.hidden, 8192);
    assert_int_equal(r->model.kv_heads, 8);
    assert_int_equal(r->model.ffn, 28672);
    assert_int_equal(r->model.seq, 8192);
    assert_int_equal(r->model.arch, PLAN_ARCH_LLAMA);
    assert_non_null(strstr(r->notes, "shape of "));
    /* a digit after the name is another model: GPT-3 1.3B is not GPT-3 13B */
    x.model_name = "GPT-3 1.3B";
    x.vocab_size = "";
    x.num_kv_heads = "";
    r = run(&x);
    assert_int_equal(r->model.layers, 24);
    assert_int_equal(r->model.hidden, 2048);
    assert_true(r->model.vocab >= 50257 && r->model.vocab < 50257 + 1024); /* padded for TP */
    /* what the row gives must be the named model's */
    x.model_name = "Llama 3 70B";
    x.vocab_size = "128256";
    x.hidden_size = "4096";
    refused(&x, "shape not published");
    x.hidden_size = "";
    x.params_b = "8";
    refused(&x, "shape not published");
    x.params_b = "70";
    r = run(&x);
    assert_true(r->compared);
    /* a sequence length left out is the named model's training context,
     * which an unnamed shape does not have */
    x.seq_len = "";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->model.seq, 8192);
    assert_non_null(strstr(r->notes, "training context"));
    x.model_name = "GPT-3 175B";
    x.params_b = "";
    x.vocab_size = "";
    /* 96 layers do not split into 4 x 5 equal Megatron chunks: refused */
    refused(&x, "not a multiple of pp x virtual stages");
    x.virtual_stages = "6"; /* 96 = 4 x 6 x 4 */
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->model.seq, 2048);
    x.model_name = "a 70B decoder";
    x.num_layers = "80";
    x.hidden_size = "8192";
    x.num_heads = "64";
    x.vocab_size = "128256";
    refused(&x, "sequence length not published");
    x.num_layers = x.hidden_size = x.num_heads = "";
    x.seq_len = dgxc_114.seq_len;
    x.params_b = "70";
    /* the family named, its size in params_b or before the name: the
     * model of that size, said so; a size no model of the family has is
     * none */
    static const struct {
        const char *name, *params_b;
        int layers;
    } sized[] = {{"Llama 3", "70", 80},       {"Llama 3", "70B", 80}, {"70B Llama 3", "", 80},
                 {"8B Llama 3", "", 32},       {"Llama 3", "8", 32},   {"Llama 3", "50", 0},
                 {"Llama 3", "70 params", 0}, {"Llama 3", "70 billion", 80},
                 {"Llama 3", "~70B", 80},      {"Llama 3", "8000 million", 32},
                 {"Llama 3", "70B billion", 0},
    };
    for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++) {
        x.model_name = sized[i].name;
        x.params_b = sized[i].params_b;
        r = run(&x);
        if (!sized[i].layers) {
            assert_false(r->have_model);
            continue;
        }
        if (r->model.layers != sized[i].layers)
            fail_msg("'%s' (%s): %lld layers, want %d", sized[i].name, sized[i].params_b,
                     (long long)r->model.layers, sized[i].layers);
        assert_non_null(strstr(r->notes, "read as 'Llama 3 "));
    }
    x.params_b = "70";
    /* a name inside a longer word, or no name: as before */
    x.model_name = "Tinyllama 3 70B";
    refused(&x, "shape not published");
    const char *nm = NULL;
    const plan_known_model *k = plan_known_model_named("LLaMA2-7B", &nm);
    assert_non_null(k);
    assert_int_equal(k->model.hidden, 4096);
    assert_int_equal(k->model.layers, 32);
    assert_int_equal(k->model.vocab, 32000);
    k = plan_known_model_named("LLaMA-65B", &nm);
    assert_non_null(k);
    assert_int_equal(k->model.layers, 80);
    assert_int_equal(k->model.ffn, 22016);
    /* a preset's documented alias: MT-NLG 530B has the 529.6B row's shape */
    k = plan_known_model_named("Megatron-Turing NLG 530B", &nm);
    assert_non_null(k);
    assert_int_equal(k->model.layers, 105);
    assert_int_equal(k->model.hidden, 20480);
    assert_non_null(plan_known_model_named("MT-NLG 530B", NULL));
    assert_null(plan_known_model_named("MT-NLG 5300B", NULL));
    /* a shape given but for its kv heads and ffn: those of the named model */
    x = dgxc_114;
    x.num_kv_heads = x.ffn_hidden_size = "";
    x.model_name = "Llama 3 70B";
    r = run(&x);
    assert_int_equal(r->model.kv_heads, 8);
    assert_int_equal(r->model.ffn, 28672);
    assert_non_null(strstr(r->notes, "kv heads and ffn of "));
    x.hidden_size = "8000"; /* not that model: the row's own defaults */
    r = run(&x);
    assert_int_equal(r->model.kv_heads, r->model.heads);
    assert_null(strstr(r->notes, "kv heads and ffn of "));
    /* ... and its vocabulary and layer, where no family word gives them:
     * Baichuan 2 13B's 125696 tokens and gated MLP, not a GPT's */
    x = dgxc_114;
    x.architecture = NULL;
    x.model_name = "Baichuan2-13B";
    x.num_layers = "40", x.hidden_size = "5120", x.num_heads = "40";
    x.num_kv_heads = x.ffn_hidden_size = x.vocab_size = "";
    r = run(&x);
    assert_true(r->compared);
    assert_true(r->model.vocab >= 125696 && r->model.vocab < 125696 + 1024); /* padded by the stack */
    assert_int_equal(r->model.ffn, 13696);
    assert_int_equal(r->model.arch, PLAN_ARCH_LLAMA);
    assert_non_null(strstr(r->notes, "vocabulary 125696 of "));
    assert_int_equal(plan_known_models_set(NULL, 0, &err), ST_OK);
    assert_null(plan_known_model_named("Llama 3 70B", NULL));
}

/* A published global batch the published layout cannot run exactly is
 * read as the nearest whole number of microbatches within 5 %, and said;
 * further off it is refused as before. */
static void test_whole_batch(void **state)
{
    (void)state;
    plan_validate_row x = dgxc_114; /* dp 2, micro-batch 1 */
    x.num_microbatches = "";
    x.global_batch_size = "127";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.global_batch, 128);
    assert_int_equal(r->layout.microbatches, 64);
    assert_non_null(strstr(r->notes, "global batch 127 read as 128"));
    x.micro_batch_size = "2";
    x.global_batch_size = "3";
    refused(&x, "global batch 3 is not a multiple of dp 2 x micro-batch 2");
}

/* A row that does not count its GPUs: the published degrees multiply to
 * them; else an instance type with a node count gives them. */
static void test_gpus_not_counted(void **state)
{
    (void)state;
    plan_validate_row x = dgxc_114; /* 4 x 4 x 2 x cp 2 */
    x.num_gpus = "";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->gpus, 64);
    assert_non_null(strstr(r->notes, "64 GPUs: the product of the published degrees"));
    x.dp = "";
    x.instance_type = "8 x p5.48xlarge";
    r = run(&x);
    assert_int_equal(r->gpus, 64);
    assert_string_equal(r->instance, "p5.48xlarge");
    assert_non_null(strstr(r->notes, "64 GPUs: the published instance count"));
    x.instance_type = "ml.p5.48xlarge x 8";
    r = run(&x);
    assert_int_equal(r->gpus, 64);
    x.instance_type = "p5.48xlarge";
    refused(&x, "number of GPUs not published");
}

/* Recompute by the stacks' own names of each kind. */
static void test_recompute_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"--recompute-activations", PLAN_RECOMP_SELECTIVE}, /* Megatron-LM: selective */
        {"--checkpoint-activations", PLAN_RECOMP_FULL},     /* Megatron-LM 2020-2021 */
        {"recompute_granularity=full", PLAN_RECOMP_FULL},
        {"remat_policy=minimal", PLAN_RECOMP_SELECTIVE},    /* MaxText: dots saved */
        {"jax.checkpoint_policies.nothing_saveable", PLAN_RECOMP_FULL}, /* JAX: keeps none */
        {"selective, selective_ac_option 2", PLAN_RECOMP_FULL}, /* torchtitan: every 2nd */
        {"selective_ac_option = 'op'", PLAN_RECOMP_SELECTIVE},   /* torchtitan: op-level */
        {"partial (every other layer)", PLAN_RECOMP_FULL},
        {"checkpointing every 3rd layer", PLAN_RECOMP_FULL},
        {"policy everything_saveable", PLAN_RECOMP_NONE},  /* JAX: keeps every residual */
        {"dots_saveable", PLAN_RECOMP_SELECTIVE},          /* JAX: matmul outputs kept */
        {"checkpoint_dots", PLAN_RECOMP_SELECTIVE},
        {"remat_policy=full", PLAN_RECOMP_FULL},
        {"attention-only recompute", PLAN_RECOMP_SELECTIVE},
        {"gradient checkpointing", PLAN_RECOMP_FULL},
        {"off", PLAN_RECOMP_NONE},
        {"-", -2},
        {"?", -2},
        /* MaxText's partial policies: full recompute of the matmuls they
         * do not keep (plan__parse_remat_saved); kept on the host, or a
         * custom policy without its settings, not modelled (said, not
         * guessed) */
        {"save_dot_except_mlp", PLAN_RECOMP_FULL},
        {"remat_policy: save_qkv_proj", PLAN_RECOMP_FULL},
        {"remat_policy=custom", -3},
        {"qkv_proj_offloaded", -3},
        {"remat", PLAN_RECOMP_FULL},          /* jax.checkpoint, aka jax.remat */
        {"AC", PLAN_RECOMP_FULL},             /* torchtitan: activation checkpointing */
        {"SAC", PLAN_RECOMP_SELECTIVE},       /* torchtitan: selective AC */
        {"op-level selective AC", PLAN_RECOMP_SELECTIVE},
        {"per-layer", PLAN_RECOMP_FULL},
        {"every layer", PLAN_RECOMP_FULL},
        {"ACCEL", -1},                        /* a token, not letters inside a word */
        {"partial", -1},
        /* a recompute key whose value is a no, or "without" one */
        {"activation_checkpointing: false", PLAN_RECOMP_NONE},
        {"activation_checkpointing: true", PLAN_RECOMP_FULL},
        {"checkpoint-activations: False", PLAN_RECOMP_NONE},
        {"recompute_granularity=none", PLAN_RECOMP_NONE},
        {"activation checkpointing disabled", PLAN_RECOMP_NONE},
        {"without activation checkpointing", PLAN_RECOMP_NONE},
        {"checkpoint_num_layers: 1", PLAN_RECOMP_FULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__parse_recompute(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text, plan__parse_recompute(cases[i].text),
                     cases[i].want);
}

/* MaxText's remat policies by their names in decoders.py and the custom
 * policy's per-tensor settings: what each keeps on the device. */
static void test_remat_saved(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"remat_policy=save_dot_with_context_except_mlp",
         PLAN_SAVE_QKV | PLAN_SAVE_OUT | PLAN_SAVE_CONTEXT},
        {"save_dot_except_mlpwi", PLAN_SAVE_QKV | PLAN_SAVE_OUT | PLAN_SAVE_MLPWO},
        {"save_dot_except_mlp", PLAN_SAVE_QKV | PLAN_SAVE_OUT},
        {"save_qkv_proj", PLAN_SAVE_QKV},
        {"save_out_proj", PLAN_SAVE_OUT},
        {"remat_policy=custom query_proj=device key_proj=device value_proj=device "
         "out_proj=device mlpwo=device",
         PLAN_SAVE_QKV | PLAN_SAVE_OUT | PLAN_SAVE_MLPWO},
        {"remat_policy=custom mlpwi_0=device mlpwi_1=device context=remat", PLAN_SAVE_MLPWI},
        {"remat_policy=custom qkv_proj=offload", -3},
        {"remat_policy=custom", -3},
        {"qkv_proj_offloaded", -3},
        {"minimal_offloaded", -3},
        {"full", -1},
        {"", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__parse_remat_saved(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text, plan__parse_remat_saved(cases[i].text),
                     cases[i].want);
}

/* The layer counts of full recompute under the stacks' documented keys:
 * Megatron's block method counts the layers recomputed per chunk (0: none),
 * the uniform method and Megatron 2020's --checkpoint-num-layers the layers
 * of one checkpoint; a count under no such key, or none, is -1 ("per-block"
 * names what is checkpointed, not the method). */
static void test_recompute_layer_counts(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want, block;
    } cases[] = {
        {"full, --recompute-method block --recompute-num-layers 4", 4, 1},
        {"activations_checkpoint_method: block, activations_checkpoint_num_layers: 0", 0, 1},
        {"recompute_granularity=full recompute_method=uniform recompute_num_layers=2", 2, 0},
        {"--checkpoint-activations --checkpoint-num-layers 2", 2, 0},
        {"full (per-block activation checkpointing)", -1, 0},
        {"full, 4 layers", -1, 0},
        {"recompute_num_layers", -1, 0},
        {"", -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int block = -1, n = plan__parse_recompute_layers(cases[i].text, &block);
        if (n != cases[i].want || (n >= 0 && block != cases[i].block))
            fail_msg("'%s': %d (block %d), want %d (block %d)", cases[i].text, n, block,
                     cases[i].want, cases[i].block);
    }
}

/* States kept on the host are a kind the planner does not model: said,
 * not read as the stage they build on. */
static void test_offload_words(void **state)
{
    (void)state;
    static const char *const off[] = {"ZeRO-Offload", "ZeRO-Infinity (NVMe)",
                                      "ZeRO-3 with offload_optimizer cpu",
                                      "FSDP FULL_SHARD, CPUOffload(offload_params=True)"};
    int degree;
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (plan__parse_sharding(off[i], &degree) != -3)
            fail_msg("'%s': %d, want -3", off[i], plan__parse_sharding(off[i], &degree));
    assert_int_equal(plan__parse_sharding("ZeRO-2, offload: none", &degree), PLAN_SHARD_GRADIENTS);
    plan_validate_row x = dgxc_114;
    x.optimizer_sharding = "ZeRO-Offload";
    refused(&x, "offloaded to the host");
    x.optimizer_sharding = "";
    x.recompute = "remat_policy=qkv_proj_offloaded";
    refused(&x, "saves some matmuls on the host");
    /* a policy that keeps its matmuls on the device is full recompute of
     * the others */
    x.recompute = "remat_policy=save_dot_except_mlpwi";
    plan_validate_result *r = run(&x);
    assert_int_equal(r->layout.recompute, PLAN_RECOMP_FULL);
    assert_int_equal(r->layout.recompute_saved, PLAN_SAVE_QKV | PLAN_SAVE_OUT | PLAN_SAVE_MLPWO);
    assert_non_null(strstr(r->notes, "remat policy does not keep"));
}

/* Activation offloading moves checkpoints, no state: read by the stacks'
 * names, kept apart from a state's offload, and costed as the stack
 * offloads (SMP v2 by layer: with one microbatch in flight, all but the
 * profile's offload_layers_held layers' checkpoints leave the GPU). */
static void test_activation_offload(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"sm_activation_offloading: true", 1},
        {"full recompute with activation offloading", 1},
        {"offload_activations=True", 1},
        {"offload_activations: False", 0},
        {"no activation offloading", 0},
        {"ZeRO-Offload", -1},
        {NULL, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (plan__says_act_offload(cases[i].text) != cases[i].want)
            fail_msg("'%s': %d, want %d", cases[i].text ? cases[i].text : "(null)",
                     plan__says_act_offload(cases[i].text), cases[i].want);
    int degree;
    assert_int_equal(plan__parse_sharding("FULL_SHARD, activation offloading", &degree),
                     PLAN_SHARD_PARAMS);
    assert_int_equal(plan__parse_sharding("FULL_SHARD, activation offloading, "
                                          "CPUOffload(offload_params=True)", &degree), -3);

    plan_validate_row x = {
        .row_id = "909", .source_key = "t", .model_name = "Llama 2 70B", .architecture = "Llama",
        .framework = "SMP v2 (PyTorch FSDP)", .source_date = "2024-06", .num_layers = "80",
        .hidden_size = "8192", .num_heads = "64", .num_kv_heads = "8",
        .ffn_hidden_size = "28672", .seq_len = "4096", .vocab_size = "32000",
        .instance_type = "ml.p5.48xlarge", .num_gpus = "256", .tp = "1", .pp = "1",
        .micro_batch_size = "2", .global_batch_size = "512",
        .recompute = "activation checkpointing", .optimizer_sharding = "FULL_SHARD",
        .iteration_time_s = "30",
    };
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_false(r->layout.offload_activations);
    double act = r->est.mem.activations_bytes;
    x.recompute = "activation checkpointing with sm_activation_offloading";
    r = run(&x);
    assert_true(r->compared);
    assert_true(r->layout.offload_activations);
    assert_non_null(strstr(r->notes, "activation offloading (SageMaker model parallel v2"));
    const plan_framework *fw = plan_framework_get(r->layout.framework);
    assert_true(fw->offload_layers_held > 0);
    /* the first stage's activations: the held layers' of its 80 and the
     * embedding output with its dropout mask (3 bytes x tokens x hidden) */
    double emb = 3.0 * 2 * 4096 * 8192;
    assert_rel(r->est.mem.activations_bytes - emb,
               (act - emb) * fw->offload_layers_held / 80.0, 1e-9);
    /* in the stack column too */
    x.recompute = "full";
    x.framework = "SMP v2 with activation offloading";
    assert_true(run(&x)->layout.offload_activations);
    /* a stack without it; offloading without recompute */
    x.framework = "PyTorch FSDP with activation offloading";
    refused(&x, "activation offloading: PyTorch FSDP");
    x.framework = "SMP v2";
    x.recompute = "none, activation offloading";
    refused(&x, "without full recompute");
}

/* The number format a run names: FP8 by any of its names, IEEE half when
 * named without bfloat16, the release's default (bf16 here) for mixed
 * precision unnamed and when not stated. */
static void test_precision_words(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        plan_precision want;
    } cases[] = {
        {"fp16", PLAN_PREC_FP16},
        {"FP16 mixed precision with dynamic loss scaling", PLAN_PREC_FP16},
        {"torch.float16 autocast", PLAN_PREC_FP16},
        {"bfloat16", PLAN_PREC_BF16},
        {"mixed precision", PLAN_PREC_BF16},
        {"float8 linears", PLAN_PREC_FP8},
        {"FP8 (Transformer Engine, E4M3)", PLAN_PREC_FP8},
        {"not stated (the TFLOP/s suggest fp16)", PLAN_PREC_BF16}, /* the release's default */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_validate_row x = narayanan_23;
        x.framework = "Megatron-Core 0.8"; /* FP8 linears through Transformer Engine */
        x.tflops_per_gpu = "";
        x.tflops_convention = "";
        x.tokens_per_s_total = "200000";
        x.gpu_type = "H100-SXM5-80GB";
        x.precision = cases[i].text;
        plan_validate_result *r = run(&x);
        if (!r->compared)
            print_message("case %zu: %s\n", i, r->reason);
        assert_true(r->compared);
        if (r->layout.precision != cases[i].want)
            fail_msg("'%s': read as %s", cases[i].text, plan_precision_name(r->layout.precision));
    }
    /* FP4 linears: refused in words, not read as bf16 */
    plan_validate_row x = narayanan_23;
    x.gpu_type = "B200";
    x.precision = "NVFP4 (Transformer Engine)";
    refused(&x, "precision 'NVFP4 (Transformer Engine)': 4-bit floating point (FP4) linears");
}

/* A sharding default the stack does not run with a pipeline steps down to
 * one it does: torchtitan keeps each block's gathered parameters when
 * pipelined (SHARD_GRAD_OP), and shards them fully without a pipeline. */
static void test_sharding_default_with_pp(void **state)
{
    (void)state;
    plan_validate_row x = narayanan_23;
    x.framework = "torchtitan";
    x.recompute = "full";
    x.tflops_per_gpu = "";
    x.tflops_convention = "";
    x.tokens_per_s_total = "200000";
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_PARAMS);
    x.pp = "2";
    x.dp = "16";
    r = run(&x);
    assert_true(r->compared);
    assert_int_equal(r->layout.sharding, PLAN_SHARD_GRADIENTS);
}

/* A row that names its attention kernel is read with it. */
static void test_flash_named(void **state)
{
    (void)state;
    plan_validate_row x = narayanan_23; /* Megatron-LM 2021: unfused by default */
    plan_validate_result *r = run(&x);
    assert_true(r->compared);
    assert_false(r->layout.flash_attention);
    double unfused_s = r->pred_time_s;
    x.notes = "trained with FlashAttention-2 (--use-flash-attn)";
    r = run(&x);
    assert_true(r->layout.flash_attention);
    assert_non_null(strstr(r->notes, "attention flash2 (the row says so)"));
    assert_true(r->pred_time_s < unfused_s);
    x.notes = "without FlashAttention";
    r = run(&x);
    assert_false(r->layout.flash_attention);
}

/* A run's framework text names its stack first (the engine it runs on may
 * follow in parentheses), and its release by a name only that release has,
 * a version after a stack name, a year, or else the date of its source: the
 * release then in force; with none of these, the latest. Every wording
 * here is a documented name of the stack or release, several of them no
 * shared row's. */
/* NeMo 25.02's table trains Llama 3.1 405B's 126 layers at pp 8 x virtual
 * 8 (64 chunks) on 128 B200s: the release counts the embedding and the loss
 * as layers of its split (128 places), and the row is compared and says
 * so; read as NeMo 24.12 (the 2024 release), the same layout is refused. */
static void test_embedding_loss_split_row(void **state)
{
    (void)state;
    plan_validate_row x = {
        .row_id = "1", .source_key = "nemo_perf_25.02", .model_name = "LLAMA3-405B",
        .framework = "NeMo 25.02", .seq_len = "8192", .gpu_type = "B200 (DGX-B200)",
        .num_gpus = "128", .tp = "4", .pp = "8", .cp = "2", .virtual_stages = "8",
        .micro_batch_size = "1", .global_batch_size = "64", .precision = "FP8",
        .tokens_per_s_per_gpu = "625",
    };
    const plan_validate_result *r = run(&x);
    if (!r->compared)
        fail_msg("not compared: %s", r->reason);
    assert_string_equal(plan_framework_get(r->framework)->key, "nemo@2025");
    assert_int_equal(r->model.layers, 126);
    assert_int_equal(r->est.stage_layers[0], 15);
    assert_int_equal(r->est.stage_layers[1], 16);
    assert_int_equal(r->est.stage_layers[7], 15);
    assert_non_null(strstr(r->notes, "126 layers over 64 pipeline chunks"));
    x.framework = "NeMo 24.12";
    r = run(&x);
    assert_false(r->compared);
    assert_non_null(strstr(r->reason, "not a multiple of pp x virtual stages"));
}

static void test_framework_names(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int ym;                  /* the source's date, year * 12 + month - 1; 0 none */
        const char *key;
    } cases[] = {
        {"NeMo 24.07 (Megatron-Core)", 0, "nemo@2024"},
        {"NeMo 23.05", 0, "nemo@2023"},
        {"NeMo Megatron", 2022 * 12 + 7, "nemo@2022"},
        {"NeMo Framework", 0, "nemo@2025"},
        {"NeMo 24.12", 0, "nemo@2024"},
        {"NeMo 25.02", 0, "nemo@2025"},
        {"NVIDIA NeMo Framework 24.05", 2023 * 12, "nemo@2024"},
        {"NeMo Megatron 22.09", 2024 * 12, "nemo@2022"},
        {"NeMo 2.0", 2023 * 12, "nemo@2024"},
        {"NeMo 1.0", 2023 * 12, "nemo@2022"},   /* NeMo 1.x versions: 1.0-1.14, 1.15-1.22 */
        {"NeMo 1.20", 2025 * 12, "nemo@2023"},
        {"Megatron-LM v2.5", 0, "megatron@2021"}, /* the repository's own tags */
        {"Megatron-LM 3.0.2", 0, "megatron@2022"},
        {"Megatron-LM v1.1.5", 2023 * 12, "megatron@2020"},
        {"Megatron-LM 23.08", 0, "megatron@2023"},
        {"Megatron-LM core_r0.4.0", 0, "megatron@2023"},
        {"Megatron-LM core_r0.6.0", 2022 * 12, "megatron@2024"},
        {"SageMaker distributed model parallel", 0, "smp@v1"},
        {"Megatron-Core r0.8.0", 0, "megatron@2024"},
        {"Megatron-Core 0.3.0", 0, "megatron@2023"},
        {"MCore v0.9", 2021 * 12, "megatron@2024"},
        {"Megatron-LM", 2020 * 12 + 8, "megatron@2020"},
        {"Megatron-LM", 2021 * 12 + 5, "megatron@2021"},
        {"Megatron-LM", 2022 * 12 + 8, "megatron@2022"},
        {"Megatron-LM", 0, "megatron@2025"},
        {"Megatron-LM", 2024 * 12 + 11, "megatron@2024"},
        {"Megatron-Core 0.11.0", 2024 * 12, "megatron@2025"},
        {"Megatron-LM 2022", 2024 * 12, "megatron@2022"},
        {"Megatron (PTD-P)", 0, "megatron@2021"},
        {"Megatron-DeepSpeed", 0, "megatron-deepspeed@2023"},
        {"Megatron-DeepSpeed", 2022 * 12 + 6, "megatron-deepspeed@2022"},
        {"GPT-NeoX (DeepSpeed)", 2022 * 12 + 2, "megatron-deepspeed@2022"},
        /* both stacks Megatron-DeepSpeed joins, in either order */
        {"DeepSpeed + Megatron-LM (3D parallelism)", 2022 * 12, "megatron-deepspeed@2022"},
        {"Megatron-LM with DeepSpeed ZeRO-1", 2023 * 12 + 9, "megatron-deepspeed@2023"},
        {"Megatron and DeepSpeed", 0, "megatron-deepspeed@2023"},
        {"DeepSpeed ZeRO-3", 0, "deepspeed@2023"},
        {"DeepSpeed ZeRO-3", 2023 * 12 + 1, "deepspeed@2022"},
        {"Composer + PyTorch FSDP (llm-foundry)", 0, "llm-foundry@2023"},
        {"LLM Foundry", 0, "llm-foundry@2023"},
        {"PyTorch FSDP", 2023 * 12, "fsdp@2022"},
        {"FullyShardedDataParallel", 2022 * 12 + 5, "fsdp@2022"},
        {"PyTorch FSDP2", 2023 * 12, "fsdp@2024"},
        {"torchtitan (FSDP2 + TP)", 0, "torchtitan@2024"},
        {"metaseq (FSDP + Megatron TP)", 0, "metaseq@2022"},
        /* a stack built on the one named first is the more specific */
        {"Fully Sharded Data Parallel with Megatron-LM tensor parallelism (metaseq)", 0,
         "metaseq@2022"},
        {"Megatron-Core (NeMo 24.07)", 0, "nemo@2024"},
        {"Paxml (JAX)", 0, "jax@2024"},
        {"T5X", 0, "jax@2024"},
        {"SageMaker model parallel library v1 (smdistributed.modelparallel)", 0, "smp@v1"},
        {"SageMaker model parallelism library v2", 0, "smp2"},
        {"SMPv2 (torch.sagemaker)", 0, "smp2"},
        {"Nanotron", 0, "nanotron@2024"},
        {"nanotron (Hugging Face)", 2025 * 12, "nanotron@2024"},
        /* trainers that run FSDP underneath, by their own names */
        {"OLMo trainer", 2024 * 12 + 1, "fsdp@2023"},
        {"LitGPT", 2024 * 12 + 8, "fsdp@2024"},
        {"lit-gpt", 2023 * 12 + 12, "fsdp@2023"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int k = plan_framework_match(cases[i].text, cases[i].ym);
        if (k < 0)
            fail_msg("'%s': no stack, want %s", cases[i].text, cases[i].key);
        if (strcmp(plan_framework_get(k)->key, cases[i].key) != 0)
            fail_msg("'%s': %s, want %s", cases[i].text, plan_framework_get(k)->key, cases[i].key);
    }
    assert_int_equal(plan_framework_match("Colossal-AI", 0), -1);
    /* a name inside a longer word is not the name */
    assert_int_equal(plan_framework_match("Paxtonia", 0), -1);
}

/* The date of a row's source: a source_date column, else the earliest date
 * its title, locator or reference names (a year alone its middle; an arXiv
 * number its month); versions and hashes are not dates. */
static void test_source_date(void **state)
{
    (void)state;
    plan_validate_row r = {0};
    r.source_title = "NVIDIA Megatron-LM README (Sep 2020 - Apr 2021), scaling tables";
    assert_int_equal(plan__source_ym(&r), 2020 * 12 + 8);
    r.source_title = "Narayanan et al. 2021 (SC21)";
    r.source_ref = "arXiv 2104.04473; github NVIDIA/Megatron-LM @50a4b5fa02";
    assert_int_equal(plan__source_ym(&r), 2021 * 12 + 3);
    r.source_title = "recipes v24.11.1 ('Expected Performance', H100)";
    r.source_ref = "github NVIDIA/Megatron-LM @5281919420 README.md";
    assert_int_equal(plan__source_ym(&r), 0);
    r.source_date = "2022-05";
    assert_int_equal(plan__source_ym(&r), 2022 * 12 + 4);
}

/* A row's board picks the catalog GPU of its chip and variant, and that
 * GPU's node: a PCIe or NVL board its own GPU (its name carries the word),
 * never the SXM module's, nor the module a board's; a stated memory picks
 * among the boards of a chip, none the first listed (release order). The
 * chip is a word of its own: GH200 is not an H200, GB200 not a B200, but a
 * count written onto it ("8xA100", "4×H100") or a plural is the chip. With
 * no network stated, the node is the GPU's reference node or, for a board
 * without one, its catalog node (narayanan_23: 32 GPUs: a part of one
 * GB200 NVL72 rack, the node as the run used it). */
static void test_board_variants(void **state)
{
    (void)state;
    const struct {
        const char *gpu_type, *gpu, *instance;
        int nodes;
    } cases[] = {
        {"H100 PCIe", "H100-PCIe-80GB", "pcie8-h100", 4},
        {"NVIDIA H100 PCIe 80GB", "H100-PCIe-80GB", "pcie8-h100", 4},
        {"NVIDIA H100 NVL", "H100-NVL-94GB", "pcie8-h100-nvl", 4},
        {"NVIDIA A100 PCIe 40GB", "A100-PCIe-40GB", "pcie8-a100-40gb", 4},
        {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB", "pcie8-a100-80gb", 4},
        {"A100 PCIe", "A100-PCIe-40GB", "pcie8-a100-40gb", 4},
        {"B200", "B200-180GB", "dgx-b200", 4},
        {"NVIDIA B200-SXM-180GB", "B200-180GB", "dgx-b200", 4},
        {"GH200", "GH200-96GB", "jupiter-gh200", 8},
        {"NVIDIA GH200 96GB HBM3", "GH200-96GB", "jupiter-gh200", 8},
        {"GB200", "GB200-186GB", "gb200-nvl72", 1},
        {"NVIDIA GB200 NVL72", "GB200-186GB", "gb200-nvl72", 1},
        {"H100-SXM5-80GB", "H100-80GB", "dgx-h100", 4},
        {"NVIDIA H200", "H200-141GB", NULL, 4},
        {"A100-SXM4-40GB", "A100-40GB", NULL, 4},
        /* a count written onto the chip, a plural */
        {"8xA100 80GB", "A100-80GB", "dgx-a100", 4},
        {"4\xc3\x97H100", "H100-80GB", "dgx-h100", 4},
        {"A100x8", "A100-40GB", NULL, 4},
        {"H100s", "H100-80GB", "dgx-h100", 4},
        {"H100SXM5", "H100-80GB", "dgx-h100", 4},
        {"NVIDIA H100PCIe", "H100-PCIe-80GB", "pcie8-h100", 4},
        /* AMD: an MI250X is a GCD, its package's memory is two GCDs' */
        {"AMD Instinct MI250X", "MI250X-64GB", "frontier", 4},
        {"MI250X 128GB", "MI250X-64GB", "frontier", 4},
        {"AMD MI300X", "MI300X-192GB", "Standard_ND96isr_MI300X_v5", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_validate_row x = narayanan_23;
        x.gpu_type = cases[i].gpu_type;
        x.interconnect = "";
        plan_validate_result *r = run(&x);
        if (!r->compared)
            fail_msg("'%s' not compared: %s", cases[i].gpu_type, r->reason);
        assert_string_equal(cat.gpus[r->inst.gpu_index].name, cases[i].gpu);
        assert_false(r->own_gpu); /* the catalog GPU's own memory */
        if (cases[i].instance)
            assert_string_equal(r->instance, cases[i].instance);
        assert_int_equal(r->nodes, cases[i].nodes);
        assert_int_equal(r->gpus, 32);
    }
    /* an MI250 is not an MI250X; a catalog GPU no node has is said so */
    plan_validate_row y = narayanan_23;
    y.gpu_type = "AMD MI250";
    y.interconnect = "";
    assert_false(run(&y)->compared);
    y.gpu_type = "MI325X";
    plan_validate_result *ny = run(&y);
    assert_true(ny->compared); /* on its platform node */
    assert_string_equal(ny->instance, "amd-mi325x-platform");
    /* taken out of the catalog, the chip's node is missed in words */
    const plan_instance *node = plan_catalog_find(&cat, "amd-mi325x-platform");
    assert_non_null(node);
    plan_instance *mut = &cat.instances[node - cat.instances];
    int gi = mut->gpu_index;
    mut->gpu_index = -1;
    ny = run(&y);
    mut->gpu_index = gi;
    assert_false(ny->compared);
    assert_non_null(strstr(ny->reason, "no catalog node has GPU 'MI325X'"));
    /* a module's row never takes a board, nor a board's the module */
    plan_validate_row x = narayanan_23;
    x.gpu_type = "H100 SXM5 80GB";
    x.interconnect = "";
    assert_null(strstr(cat.gpus[run(&x)->inst.gpu_index].name, "PCIe"));
    /* 64 GPUs of a 72-GPU NVLink rack: one node of the 64; 128 two racks
     * of 64 each (as many on each as divides them); 144 two whole racks */
    x.gpu_type = "GB200";
    x.num_gpus = "64";
    x.dp = "64";
    plan_validate_result *gb = run(&x);
    assert_true(gb->compared);
    assert_int_equal(gb->inst.gpus_per_node, 64);
    assert_non_null(strstr(gb->notes, "64 of the 72 GPUs"));
    x.num_gpus = "128";
    x.dp = "128";
    gb = run(&x);
    assert_true(gb->compared);
    assert_int_equal(gb->inst.gpus_per_node, 64);
    assert_int_equal(gb->nodes, 2);
    assert_rel(gb->inst.net_bps, 64 * 400e9 / 8, 1e-12); /* the NICs of the GPUs used */
    x.num_gpus = "144";
    x.dp = "144";
    x.global_batch_size = "1152";
    gb = run(&x);
    assert_true(gb->compared);
    assert_int_equal(gb->inst.gpus_per_node, 72);
    assert_int_equal(gb->nodes, 2);
    /* an 8-GPU node is filled whole or the row is refused */
    x.gpu_type = "H100-SXM5-80GB";
    x.num_gpus = "12";
    x.dp = "12";
    x.global_batch_size = "96";
    refused(&x, "not a whole number");
    x.global_batch_size = narayanan_23.global_batch_size;
    x.num_gpus = narayanan_23.num_gpus;
    x.dp = narayanan_23.dp;
    /* a board of a chip the catalog lists only as a module */
    x.gpu_type = "NVIDIA H200 NVL";
    refused(&x, "NVL board");
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tp_overlap_words),
        cmocka_unit_test(test_round_batch_searched),
        cmocka_unit_test(test_recompute_every),
        cmocka_unit_test(test_precision_names),
        cmocka_unit_test(test_fp8_needs_fp8_chip),
        cmocka_unit_test(test_narayanan_eq3),
        cmocka_unit_test(test_megatron_2020),
        cmocka_unit_test(test_dgxc_cp2),
        cmocka_unit_test(test_smp_reference),
        cmocka_unit_test(test_oom_row),
        cmocka_unit_test(test_derived_batch),
        cmocka_unit_test(test_batch_from_micro_batch),
        cmocka_unit_test(test_bad_rows),
        cmocka_unit_test(test_instance_missing_from_catalog),
        cmocka_unit_test(test_terms),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_model_flops),
        cmocka_unit_test(test_mfu_without_convention),
        cmocka_unit_test(test_sharding_in_framework),
        cmocka_unit_test(test_cli_exit_codes),
        cmocka_unit_test(test_mlp_from_architecture),
        cmocka_unit_test(test_model_traits),
        cmocka_unit_test(test_model_parallel_size),
        cmocka_unit_test(test_tokens_fsdp_network),
        cmocka_unit_test(test_framework_defaults),
        cmocka_unit_test(test_nanotron_defaults),
        cmocka_unit_test(test_schedule_unstated),
        cmocka_unit_test(test_compile_words),
        cmocka_unit_test(test_framework_names),
        cmocka_unit_test(test_embedding_loss_split_row),
        cmocka_unit_test(test_source_date),
        cmocka_unit_test(test_flash_named),
        cmocka_unit_test(test_phrasings),
        cmocka_unit_test(test_recompute_words),
        cmocka_unit_test(test_recompute_layer_counts),
        cmocka_unit_test(test_remat_saved),
        cmocka_unit_test(test_written_numbers),
        cmocka_unit_test(test_network_technology_alone),
        cmocka_unit_test(test_known_model_shape),
        cmocka_unit_test(test_whole_batch),
        cmocka_unit_test(test_gpus_not_counted),
        cmocka_unit_test(test_precision_words),
        cmocka_unit_test(test_virtual_stage_words),
        cmocka_unit_test(test_mem_metric_words),
        cmocka_unit_test(test_unstated_recompute),
        cmocka_unit_test(test_shared_recompute),
        cmocka_unit_test(torchtitan_pipeline_microbatches),
        cmocka_unit_test(unstated_gpu_memory),
        cmocka_unit_test(ulysses_rows),
        cmocka_unit_test(test_offload_words),
        cmocka_unit_test(test_activation_offload),
        cmocka_unit_test(test_fused_kernel_words),
        cmocka_unit_test(test_sharding_default_with_pp),
        cmocka_unit_test(test_board_variants),
    };
    return cmocka_run_group_tests(tests, validate_setup, validate_teardown);
}
