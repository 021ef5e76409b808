/*
 * test_plan_framework.c: the instance types SMP v1 runs on; the executor's
 * two profiles, the CPU host's ("smdplan") and the CUDA device's
 * ("smdplan-cuda").
 *
 * They are one family (fitted together per chip) with the same knobs, and
 * differ where the device does, as plan_framework.c documents: the GPU
 * overlaps its gradient buckets with the backward (NCCL on its own stream)
 * and pays a host floor per kernel launch; the CPU host does neither. On a
 * GPU cluster the overlap shows: a data-parallel 1.3B step of the CUDA
 * profile exposes less data-parallel time than the CPU profile's, while a
 * layout with no data parallelism costs the same under both (its kernels
 * run longer than the launch floor). Texts name the profiles as
 * plan_framework_match reads them.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "planner/plan_framework.h"
#include "planner/plan_hwfit.h"
#include "planner/plan_int.h"

static int profile(const char *key)
{
    int i = -1;
    st_err err = {0};
    assert_int_equal(plan_framework_find(key, &i, &err), ST_OK);
    return i;
}

/* SMP v1 runs on the instance types its documentation lists, by their own
 * names with or without "ml."; a stack that lists none runs anywhere. */
static void smp_instance_types(void **state)
{
    (void)state;
    const plan_framework *smp = plan_framework_get(profile("smp"));
    const plan_framework *meg = plan_framework_get(profile("megatron"));
    plan_instance in;
    memset(&in, 0, sizeof in);
    static const struct {
        const char *name;
        int smp;
    } cases[] = {
        {"p4d.24xlarge", 1}, {"ml.p4de.24xlarge", 1}, {"P3dn.24xlarge", 1},
        {"g4dn.12xlarge", 1}, {"p5.48xlarge", 0}, {"p3.2xlarge", 0}, {"dgx-a100", 0},
        {"p4d.24xlarge.evil", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(in.name, sizeof in.name, "%s", cases[i].name);
        assert_int_equal(plan_framework_runs_on(smp, &in), cases[i].smp);
        assert_int_equal(plan_framework_runs_on(meg, &in), 1);
    }
    /* an alias is the user's shorthand, not a documented name */
    snprintf(in.name, sizeof in.name, "mybox");
    snprintf(in.aliases[0], sizeof in.aliases[0], "p4d.24xlarge");
    in.naliases = 1;
    assert_int_equal(plan_framework_runs_on(smp, &in), 0);
    char list[160];
    assert_string_equal(plan_framework_instance_list(smp, list, sizeof list),
                        "ml.g4dn.12xlarge, ml.p3.16xlarge, ml.p3dn.24xlarge, ml.p4d.24xlarge, "
                        "ml.p4de.24xlarge");
    assert_string_equal(plan_framework_instance_list(meg, list, sizeof list), "");
}

static void same_knobs_one_family(void **state)
{
    (void)state;
    const plan_framework *cpu = plan_framework_get(profile("smdplan"));
    const plan_framework *gpu = plan_framework_get(profile("smdplan-cuda"));
    assert_int_equal(cpu->family, PLAN_FW_SMDPLAN);
    assert_int_equal(gpu->family, PLAN_FW_SMDPLAN);
    assert_int_equal(gpu->schedules, cpu->schedules);
    assert_int_equal(gpu->shardings, cpu->shardings);
    assert_int_equal(gpu->shardings_with_pp, cpu->shardings_with_pp);
    assert_int_equal(gpu->shardings_with_tp, cpu->shardings_with_tp);
    assert_int_equal(gpu->recomputes, cpu->recomputes);
    assert_int_equal(gpu->context_parallel, cpu->context_parallel);
    assert_int_equal(gpu->offload, cpu->offload);
    assert_int_equal(gpu->fp8, cpu->fp8);
    /* where the devices differ */
    assert_int_equal(cpu->dp_overlap, 0);
    assert_int_equal(gpu->dp_overlap, 1);
    assert_true(cpu->host_op_s == 0.0 && gpu->host_op_s > 0.0);
    /* where they do not */
    assert_int_equal(gpu->tp_overlap, cpu->tp_overlap);
    assert_int_equal(gpu->pp_overlap, cpu->pp_overlap);
    assert_int_equal(gpu->flash_attention, cpu->flash_attention);
    assert_true(gpu->dp_bucket_bytes == cpu->dp_bucket_bytes);
    assert_int_equal(plan_framework_match("smdplan", 0), profile("smdplan"));
    assert_int_equal(plan_framework_match("smdplan-cuda", 0), profile("smdplan-cuda"));
    assert_int_equal(plan_framework_match("smdplan cuda 0.1", 0), profile("smdplan-cuda"));
    assert_non_null(strstr(plan_framework_user_keys(), "smdplan-cuda"));
}

/* The step of a 1.3B GPT in bf16 on n GPUs of one p4de node (A100: no
 * measured-rates file, so both executor profiles use the chip's own
 * efficiencies and differ by their knobs alone), dp n, under a profile;
 * *dp_s gets its exposed data-parallel time. */
static double step_s(const plan_catalog *cat, int fw, int n, double *dp_s)
{
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = 24, .hidden = 2048, .heads = 16,
                    .kv_heads = 16, .ffn = 8192, .seq = 2048, .vocab = 50304,
                    .tied_embedding = 1};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    plan_cluster c;
    const plan_instance *in = plan_catalog_find(cat, "p4de.24xlarge");
    assert_non_null(in);
    assert_int_equal(plan_cluster_make(cat, in, 1, &c, &err), ST_OK);
    c.gpus = n;
    plan_cluster_use_framework(cat, fw, &c);
    plan_layout l;
    plan_layout_default(&l);
    plan_framework_apply(plan_framework_get(fw), fw, &l);
    l.dp = n;
    l.micro_batch = 4;
    l.microbatches = 2;
    l.active_microbatches = 2;
    l.global_batch = (int64_t)n * 8;
    l.precision = PLAN_PREC_BF16;
    plan_estimate e;
    assert_int_equal(plan_evaluate(&m, &c, &l, &e, NULL, &err), ST_OK);
    assert_int_equal(e.reject, PLAN_OK);
    *dp_s = e.time.dp_exposed_s;
    return e.time.step_s;
}

static void overlap_shows_on_gpus(void **state)
{
    (void)state;
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &cat, &err), ST_OK);
    int cpu = profile("smdplan"), gpu = profile("smdplan-cuda");
    double dcpu, dgpu;
    double scpu = step_s(&cat, cpu, 8, &dcpu), sgpu = step_s(&cat, gpu, 8, &dgpu);
    assert_true(dcpu > 0);
    assert_true(dgpu < dcpu);
    assert_true(sgpu < scpu);
    /* one GPU: nothing to overlap, and the kernels outlast the launch floor;
     * the steps differ only by the cross-entropy's traffic (fp32 logits on
     * the CPU device, 20 B a logit; bf16 on CUDA, 10 B): the CUDA step is
     * shorter, by a few percent of a step at most */
    scpu = step_s(&cat, cpu, 1, &dcpu);
    sgpu = step_s(&cat, gpu, 1, &dgpu);
    assert_true(dcpu == 0 && dgpu == 0);
    assert_true(sgpu < scpu);
    assert_true((scpu - sgpu) / scpu < 0.05);
    plan_catalog_free(&cat);
}

/* On a chip with a measured-rates file (the H100's) the executor's CUDA
 * profile takes the measurements, where other stacks keep the chip's pool:
 * the GEMM ceiling, the copy's share of HBM, the executor's own fused
 * kernels at a share of 1. */
static void executor_uses_measured_rates(void **state)
{
    (void)state;
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &cat, &err), ST_OK);
    const plan_instance *in = plan_catalog_find(&cat, "p5.48xlarge");
    assert_non_null(in);
    plan_cluster c, p;
    assert_int_equal(plan_cluster_make(&cat, in, 1, &c, &err), ST_OK);
    p = c;
    const plan_gpu *g = c.gpu;
    assert_true(g->gemm_measured && g->gemm_ceiling > 0 && g->exec_attn_fwd_eff > 0 &&
                g->exec_attn_row_fwd_s > 0);
    plan_cluster_use_framework(&cat, profile("smdplan-cuda"), &c);
    assert_true(c.exec_kernels);
    assert_true(c.eff.gemm_eff_max == g->gemm_ceiling);
    assert_true(c.eff.hbm_eff == plan_gpu_copy_eff(g));
    assert_true(c.eff.flash_eff ==
                plan__attn_fwd_bwd_eff(g->exec_attn_fwd_eff, g->exec_attn_bwd_eff));
    double f = 0, b = 0;
    plan__attn_eff(&c, PLAN_ATTN_FLASH2, &f, &b);
    assert_true(f == g->exec_attn_fwd_eff && b == g->exec_attn_bwd_eff);
    /* another stack on the same chip: not the executor's kernels (its fused
     * attention is FlashAttention-2's measured rates at its share) */
    plan_cluster_use_framework(&cat, profile("megatron"), &p);
    assert_false(p.exec_kernels);
    plan__attn_eff(&p, PLAN_ATTN_FLASH2, &f, &b);
    assert_true(f <= g->flash2_fwd_eff && f < g->exec_attn_fwd_eff);
    plan_catalog_free(&cat);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(smp_instance_types),
        cmocka_unit_test(same_knobs_one_family),
        cmocka_unit_test(overlap_shows_on_gpus),
        cmocka_unit_test(executor_uses_measured_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
