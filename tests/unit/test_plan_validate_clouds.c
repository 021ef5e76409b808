/*
 * test_plan_validate_clouds.c: published runs on the other clouds' GPU VMs
 * (Azure ND, Google Cloud A3, Oracle Cloud bare metal) are compared on the
 * node their instance_type column names, with its GPU, when the row leaves
 * gpu_type blank: the word of the column that names a catalog instance
 * type, whatever counts and "x" stand around it (planner/plan_validate.c).
 *
 * The rows are the GPT-3-shaped 13B run of test_plan_validate_rates.c (on
 * A100s) and the DGX Cloud Llama 3 70B run (on H100s), each with a step
 * time of its own so that it is compared.
 */
#include "test_util.h"

#include <string.h>

#include "data/data.h"
#include "data/data_known_models.h"
#include "planner/plan_validate.h"
#include "test_validate_run.h"

/* A GPT-3-shaped run (multi-head, 4h MLP) on 64 GPUs. */
static const plan_validate_row gpt = {
    .row_id = "1", .source_key = "t", .model_name = "GPT 13B", .architecture = "GPT",
    .num_layers = "40", .hidden_size = "5120", .num_heads = "40", .seq_len = "2048",
    .vocab_size = "50257", .num_gpus = "64", .tp = "2", .pp = "1", .dp = "32",
    .micro_batch_size = "4", .global_batch_size = "1024", .precision = "bf16",
    .framework = "Megatron-LM", .recompute = "full", .iteration_time_s = "20",
};

/* DGX Cloud recipes v24.11.1, Llama 3 70B: TP 4, PP 4, CP 2 (32 GPUs a
 * replica), the data-parallel degree and GPU count set per row. */
static const plan_validate_row llama = {
    .row_id = "114", .source_key = "dgxc_bench_v24.11.1", .model_name = "LLAMA3-70B",
    .architecture = "Llama-3 (SwiGLU, RoPE, GQA)", .framework = "NeMo/Megatron-Core",
    .num_layers = "80", .hidden_size = "8192", .num_heads = "64", .num_kv_heads = "8",
    .ffn_hidden_size = "28672", .seq_len = "8192", .vocab_size = "128256", .tp = "4",
    .pp = "4", .cp = "2", .virtual_stages = "5", .micro_batch_size = "1",
    .global_batch_size = "128", .precision = "BF16", .recompute = "none",
    .iteration_time_s = "10",
};

/* Compared on the named node: its name, its GPU (the catalog's own part,
 * not one made from a stated memory), nodes of its GPU count. */
static void compared_on(const plan_validate_row *row, const char *node, const char *gpu,
                        int nodes)
{
    const plan_validate_result *r = run(row);
    if (!r->compared)
        fail_msg("instance_type '%s': not compared (%s)", row->instance_type, r->reason);
    assert_string_equal(r->instance, node);
    assert_string_equal(r->inst.name, node);
    const plan_instance *in = plan_catalog_find(&cat, node);
    assert_non_null(in);
    if (!in)
        return;
    assert_int_equal(r->inst.gpu_index, in->gpu_index);
    assert_string_equal(cat.gpus[r->inst.gpu_index].name, gpu);
    assert_int_equal(r->own_gpu, 0);
    assert_rel(r->inst.net_bps, in->net_bps, 0);
    assert_int_equal(r->nodes, nodes);
    assert_int_equal(r->gpus, nodes * in->gpus_per_node);
}

/* A blank gpu_type: the GPU is the named node's. */
static void test_cloud_instance_types(void **state)
{
    (void)state;
    plan_validate_row a = gpt;
    a.instance_type = "Standard_ND96amsr_A100_v4";
    compared_on(&a, "Standard_ND96amsr_A100_v4", "A100-80GB", 8);
    a.instance_type = "8 x ND96asr_v4";
    compared_on(&a, "Standard_ND96asr_v4", "A100-40GB", 8);
    a.instance_type = "BM.GPU4.8 x 8";
    compared_on(&a, "BM.GPU4.8", "A100-40GB", 8);

    plan_validate_row h = llama;
    h.instance_type = "16 x a3-megagpu-8g";
    h.num_gpus = "128";
    h.dp = "4";
    compared_on(&h, "a3-megagpu-8g", "H100-80GB", 16);
    h.instance_type = "BM.GPU.H100.8 x 4";
    h.num_gpus = "32";
    h.dp = "1";
    compared_on(&h, "BM.GPU.H100.8", "H100-80GB", 4);
    h.instance_type = "Standard_ND96isr_H100_v5";
    compared_on(&h, "Standard_ND96isr_H100_v5", "H100-80GB", 4);
    h.instance_type = "a3-ultragpu-8g";
    compared_on(&h, "a3-ultragpu-8g", "H200-141GB", 4);

    /* a count glued to the type ("16xTYPE", "TYPE:N") or a type named in
     * words ("16 x NDm A100 v4"): the count gives the GPUs a row leaves
     * out */
    a.num_gpus = "";
    a.dp = "";
    a.instance_type = "8xND96asr_v4";
    compared_on(&a, "Standard_ND96asr_v4", "A100-40GB", 8);
    a.instance_type = "BM.GPU4.8:8";
    compared_on(&a, "BM.GPU4.8", "A100-40GB", 8);
    a.instance_type = "8 x NDm A100 v4";
    compared_on(&a, "Standard_ND96amsr_A100_v4", "A100-80GB", 8);
    /* ... after its cloud's name */
    a.instance_type = "8 x Azure NDm A100 v4";
    compared_on(&a, "Standard_ND96amsr_A100_v4", "A100-80GB", 8);
    a.instance_type = "Google Cloud a2-ultragpu-8g:8";
    compared_on(&a, "a2-ultragpu-8g", "A100-80GB", 8);
}

/* The same run on the same chip's nodes of other networks is another
 * prediction: the node named is the one used. */
static void test_cloud_network_counts(void **state)
{
    (void)state;
    plan_validate_row h = llama;
    h.num_gpus = "128";
    h.dp = "4";
    h.instance_type = "16 x a3-megagpu-8g";
    double mega = run(&h)->pred_time_s;
    h.instance_type = "16 x a3-highgpu-8g";
    const plan_validate_result *r = run(&h);
    assert_true(r->compared);
    assert_string_equal(r->instance, "a3-highgpu-8g");
    assert_rel(r->inst.net_bps, 800e9 / 8, 1e-12);
    assert_true(mega > 0 && r->pred_time_s > 0);
    assert_true(r->pred_time_s >= mega);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cloud_instance_types),
        cmocka_unit_test(test_cloud_network_counts),
    };
    return cmocka_run_group_tests(tests, validate_setup_known, validate_teardown);
}
