/*
 * test_plan_stack.c: what a stack and a chip let a plan be.
 *
 * A plan is only worth printing if the stack it names can run it on the
 * chip it names: precision is a property of both (V100 has no bf16, so a
 * plan on it trains in fp16, and asking for bf16 there is refused with the
 * chip named); a stack offers only the layouts it runs (PyTorch FSDP has no
 * pipeline and no tensor parallelism, so its plans shard over every GPU).
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "planner/plan_framework.h"

static plan_catalog cat;

static int setup(void **state)
{
    (void)state;
    st_err err = {0};
    return data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &cat, &err) == ST_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    plan_catalog_free(&cat);
    return 0;
}

static int profile(const char *key)
{
    int i = -1;
    st_err err = {0};
    assert_int_equal(plan_framework_find(key, &i, &err), ST_OK);
    return i;
}

/* A 1.3B GPT (GPT-3 XL's shape: 24 layers, hidden 2048, 16 heads). */
static plan_model gpt_1p3b(void)
{
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = 24, .hidden = 2048, .heads = 16,
                    .kv_heads = 16, .ffn = 8192, .seq = 2048, .vocab = 50257,
                    .tied_embedding = 1};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    return m;
}

static plan_cluster cluster(const char *type, int nodes, int fw)
{
    plan_cluster c;
    st_err err = {0};
    const plan_instance *in = plan_catalog_find(&cat, type);
    assert_non_null(in);
    assert_int_equal(plan_cluster_make(&cat, in, nodes, &c, &err), ST_OK);
    plan_cluster_use_framework(&cat, fw, &c);
    return c;
}

/* V100 has no bf16: the search trains in fp16 there, and bf16 asked for is
 * refused naming the chip; on A100 bf16 stays the default and fp16 is a
 * choice of its own (not folded into bf16). */
static void precision_by_chip(void **state)
{
    (void)state;
    plan_model m = gpt_1p3b();
    int smp = profile("smp");
    plan_config cfg;
    plan_result *r = calloc(1, sizeof *r);
    st_err err = {0};
    assert_non_null(r);

    plan_cluster v100 = cluster("p3.16xlarge", 2, smp);
    assert_int_equal(v100.gpu->fp16_only, 1);
    plan_config_default(&cfg);
    cfg.framework = smp;
    assert_int_equal(plan_search(&m, &v100, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    for (int i = 0; i < r->ntop; i++)
        assert_int_equal(r->top[i].layout.precision, PLAN_PREC_FP16);
    double fp16_step = r->top[0].est.time.step_s;

    cfg.precision = PLAN_PREC_BF16;
    assert_int_equal(plan_search(&m, &v100, &cfg, r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "bf16"));
    assert_non_null(strstr(err.msg, "V100-16GB"));

    /* a published run is read as it ran: bf16 on a V100 costs what fp16 does */
    cfg.any_instance = 1;
    memset(&err, 0, sizeof err);
    assert_int_equal(plan_search(&m, &v100, &cfg, r, &err), ST_OK);
    assert_rel(r->top[0].est.time.step_s, fp16_step, 1e-12);

    plan_cluster a100 = cluster("p4d.24xlarge", 2, smp);
    assert_int_equal(a100.gpu->fp16_only, 0);
    plan_config_default(&cfg);
    cfg.framework = smp;
    assert_int_equal(plan_search(&m, &a100, &cfg, r, &err), ST_OK);
    assert_int_equal(r->top[0].layout.precision, PLAN_PREC_BF16);
    cfg.precision = PLAN_PREC_FP16;
    assert_int_equal(plan_search(&m, &a100, &cfg, r, &err), ST_OK);
    assert_int_equal(r->top[0].layout.precision, PLAN_PREC_FP16);

    plan_precision p;
    assert_int_equal(plan_precision_parse("fp16", &p, &err), ST_OK);
    assert_int_equal(p, PLAN_PREC_FP16);
    assert_string_equal(plan_precision_name(PLAN_PREC_FP16), "fp16");
    assert_true(plan_precision_half(PLAN_PREC_FP16) && plan_precision_half(PLAN_PREC_BF16));
    assert_false(plan_precision_half(PLAN_PREC_FP8) || plan_precision_half(PLAN_PREC_FP32));
    free(r);
}

/* PyTorch FSDP (FSDP1) has no pipeline and no tensor parallelism: its
 * plans shard over every GPU (the 30B on 16 x p4d came out TP 8 x
 * PP 16 x DP 1 without sharding, which FSDP does not run); fixing a pipeline
 * is refused naming the knob. torchtitan (FSDP2) pipelines. */
static void fsdp_layouts(void **state)
{
    (void)state;
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = 48, .hidden = 7168, .heads = 56,
                    .kv_heads = 56, .ffn = 28672, .seq = 512, .vocab = 50000,
                    .tied_embedding = 1};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    int fsdp = profile("fsdp@2022");
    plan_cluster c = cluster("p4d.24xlarge", 16, fsdp);
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.framework = fsdp;
    cfg.global_batch = 512;
    cfg.top_k = 32;
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    char why[300];
    for (int i = 0; i < r->ntop; i++) {
        const plan_layout *l = &r->top[i].layout;
        assert_int_equal(l->tp, 1);
        assert_int_equal(l->pp, 1);
        assert_int_equal(l->dp, 128);
        assert_true(l->sharding == PLAN_SHARD_PARAMS || l->sharding == PLAN_SHARD_GRADIENTS);
        assert_int_equal(plan_framework_check(plan_framework_get(fsdp), l, why, sizeof why), 0);
    }
    for (int i = 0; i < r->ngrid; i++)
        assert_true(r->grid[i].tp == 1 && r->grid[i].pp == 1);

    cfg.pp = 2;
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--pp 2"));
    assert_non_null(strstr(err.msg, "no pipeline"));
    cfg.pp = 0;
    cfg.tp = 8;
    memset(&err, 0, sizeof err);
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--tp 8"));

    /* torchtitan runs its pipeline (FSDP2 with torch.distributed.pipelining) */
    int tt = profile("torchtitan");
    c = cluster("p4d.24xlarge", 16, tt);
    plan_config_default(&cfg);
    cfg.framework = tt;
    cfg.global_batch = 512;
    cfg.pp = 4;
    memset(&err, 0, sizeof err);
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    assert_int_equal(r->top[0].layout.pp, 4);
    free(r);
}

/* The split of layers over pipeline stages: even unless an uneven split
 * makes the busiest stage lighter. 48 layers over 8 stages of the 30B GPT
 * (head 0.57 layers) are 6 each (the cost-balanced rounding gave
 * 6,6,6,7,6,6,6,5, a stage of 7 that the whole pipeline waits for); Llama 3
 * 8B's 32 layers over 4 stages, with its 128256-token head weighing about
 * 2.4 layers, are split unevenly, the last stage lighter. */
static void even_split_unless_faster(void **state)
{
    (void)state;
    plan_model gpt = {.arch = PLAN_ARCH_GPT, .layers = 48, .hidden = 7168, .heads = 56,
                      .kv_heads = 56, .ffn = 28672, .seq = 512, .vocab = 50000,
                      .tied_embedding = 1};
    plan_model llama = {.arch = PLAN_ARCH_LLAMA, .layers = 32, .hidden = 4096, .heads = 32,
                        .kv_heads = 8, .ffn = 14336, .seq = 8192, .vocab = 128256};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&gpt, &err), ST_OK);
    assert_int_equal(plan_model_finish(&llama, &err), ST_OK);
    plan_layout l;
    plan_layout_default(&l);
    int out[PLAN_PP_MAX];
    l.pp = 8;
    plan_stage_layers(&gpt, &l, out);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], 6);
    l.pp = 4;
    plan_stage_layers(&llama, &l, out);
    int sum = 0;
    for (int i = 0; i < 4; i++)
        sum += out[i];
    assert_int_equal(sum, 32);
    assert_true(out[3] < 8);
    /* 50 layers over 8: not divisible; the first stages take the extra */
    gpt.layers = 50;
    assert_int_equal(plan_model_finish(&gpt, &err), ST_OK);
    l.pp = 8;
    plan_stage_layers(&gpt, &l, out);
    static const int want[8] = {7, 7, 6, 6, 6, 6, 6, 6};
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], want[i]);
}

/* Llama 3 405B's 126 layers over 16 stages: a stack that can set the first
 * and last stages' layers (Megatron-Core 2024) runs 7, 8 x 14, 7 as Meta
 * did (Dubey et al. 2024, Sec. 3.3.2), its first stage a layer lighter
 * than the even split's 8; one that cannot (Megatron-DeepSpeed) keeps
 * its split, 8 on the first stage. */
static void lighter_ends_where_the_stack_runs_them(void **state)
{
    (void)state;
    plan_model m = {.arch = PLAN_ARCH_LLAMA, .layers = 126, .hidden = 16384, .heads = 128,
                    .kv_heads = 8, .ffn = 53248, .seq = 8192, .vocab = 128256};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    plan_layout l;
    plan_layout_default(&l);
    l.pp = 16;
    int out[PLAN_PP_MAX];
    l.framework = profile("megatron@2024");
    plan_stage_layers(&m, &l, out);
    for (int i = 0; i < 16; i++)
        assert_int_equal(out[i], i == 0 || i == 15 ? 7 : 8);
    l.framework = profile("megatron-deepspeed@2022");
    plan_stage_layers(&m, &l, out);
    assert_int_equal(out[0], 8);
}

/* Llama 3 70B's shape (Llama Team 2024, Table 3) at its 8K context. */
static plan_model llama3_70b(void)
{
    plan_model m = {.arch = PLAN_ARCH_LLAMA, .layers = 80, .hidden = 8192, .heads = 64,
                    .kv_heads = 8, .ffn = 28672, .seq = 8192, .vocab = 128256};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    return m;
}

/* Context parallelism is searched where the stack has it (Megatron-Core:
 * Llama 3.1 70B at 8K tokens on 8 DGX H100 ranks TP 4 x CP 2 first, as
 * NeMo's recipe runs it), in powers of two with TP inside a node and the
 * sequence a multiple of 2 cp; not on a stack without it (SMP v1), and not
 * past what --cp fixes. */
static void cp_searched(void **state)
{
    (void)state;
    plan_model m = llama3_70b();
    st_err err = {0};
    int mc = profile("megatron@2024");
    plan_cluster c = cluster("dgx-h100", 8, mc);
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.framework = mc;
    cfg.global_batch = 128;
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    int seen = 0;
    for (int i = 0; i < r->ntop; i++) {
        const plan_layout *l = &r->top[i].layout;
        assert_true(l->tp * l->cp <= 8 && (l->cp & (l->cp - 1)) == 0);
        assert_int_equal(m.seq % (2 * l->cp), 0);
        seen |= l->cp > 1;
    }
    assert_true(seen);
    assert_true(r->top[0].layout.cp > 1);
    /* fixed */
    cfg.cp = 1;
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    for (int i = 0; i < r->ntop; i++)
        assert_int_equal(r->top[i].layout.cp, 1);
    /* a stack without context parallelism */
    cfg.cp = 0;
    int smp = profile("smp@v1");
    cfg.framework = smp;
    plan_cluster c1 = cluster("p4d.24xlarge", 16, smp);
    assert_int_equal(plan_search(&m, &c1, &cfg, r, &err), ST_OK);
    for (int i = 0; i < r->ntop; i++)
        assert_int_equal(r->top[i].layout.cp, 1);
    free(r);
}

/* Megatron's block method in the search: with the recompute left to it and
 * a layout that fits only with recompute, the plan recomputes the fewest
 * layers of each chunk that fit (faster than every layer); one layer fewer
 * does not fit; with --recompute full asked, every layer. */
static void block_recompute_searched(void **state)
{
    (void)state;
    plan_model m = llama3_70b();
    st_err err = {0};
    int mc = profile("megatron@2024");
    assert_true(plan_framework_get(mc)->recompute_block);
    plan_cluster c = cluster("dgx-h100", 8, mc);
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.framework = mc;
    cfg.tp = 4, cfg.pp = 4, cfg.dp = 4, cfg.cp = 1;
    cfg.micro_batch = 1;
    cfg.global_batch = 320;
    cfg.schedule = PLAN_SCHED_INTERLEAVED;
    cfg.sharding = PLAN_SHARD_OPTIMIZER;
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    const plan_layout *best = &r->top[0].layout;
    assert_int_equal(best->recompute, PLAN_RECOMP_FULL);
    int n = best->recompute_layers;
    assert_true(n > 0 && n < 80 / 4);
    double block_s = r->top[0].est.time.step_s;
    plan_layout less = *best;
    less.recompute_layers = n - 1;
    if (n == 1)
        less.recompute = PLAN_RECOMP_NONE;
    plan_estimate *e = calloc(1, sizeof *e);
    assert_non_null(e);
    assert_int_equal(plan_evaluate(&m, &c, &less, e, NULL, &err), ST_OK);
    assert_int_equal(e->reject, PLAN_REJ_OOM);
    /* asked for full recompute: every layer, and slower */
    cfg.recompute = PLAN_RECOMP_FULL;
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    for (int i = 0; i < r->ntop; i++)
        assert_int_equal(r->top[i].layout.recompute_layers, 0);
    assert_true(r->top[0].est.time.step_s > block_s);
    free(e);
    free(r);
}

/* Megatron-LM's interleaved schedule needs equal whole chunks: the layers a
 * multiple of pp x v (megatron/arguments.py), so 92 layers over 4 stages
 * (23 each) interleave only as 23 one-layer chunks, which the search finds;
 * v = 2 is refused. torchtitan splits its chunks as they fall. */
static void virtual_stages_equal_chunks(void **state)
{
    (void)state;
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = 92, .hidden = 10240, .heads = 80,
                    .kv_heads = 80, .ffn = 40960, .seq = 4096, .vocab = 131072,
                    .tied_embedding = 1};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    int mc = profile("megatron@2024"), tt = profile("torchtitan@2024");
    assert_true(plan_framework_get(mc)->virtual_even);
    assert_false(plan_framework_get(tt)->virtual_even);
    plan_cluster c = cluster("dgx-h100", 64, mc);
    plan_layout l;
    plan_layout_default(&l);
    plan_framework_apply(plan_framework_get(mc), mc, &l);
    l.tp = 8, l.pp = 4, l.dp = 16, l.micro_batch = 1, l.microbatches = 32;
    l.global_batch = 512;
    l.schedule = PLAN_SCHED_VIRTUAL;
    l.virtual_stages = 2;
    plan_estimate *e = calloc(1, sizeof *e);
    assert_non_null(e);
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_int_equal(e->reject, PLAN_REJ_LAYERS);
    assert_non_null(strstr(e->reason, "not a multiple of pp x virtual stages"));
    l.virtual_stages = 23;
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_true(e->reject == PLAN_OK || e->reject == PLAN_REJ_OOM);
    l.framework = tt;
    l.virtual_stages = 2;
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_true(e->reject != PLAN_REJ_LAYERS);
    /* the search: the virtual stages that divide a stage's layers */
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.framework = mc;
    cfg.tp = 8, cfg.pp = 4, cfg.dp = 16, cfg.cp = 1;
    cfg.micro_batch = 1;
    cfg.global_batch = 512;
    cfg.schedule = PLAN_SCHED_VIRTUAL;
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
    assert_true(r->ntop > 0);
    for (int i = 0; i < r->ntop; i++)
        assert_int_equal(r->top[i].layout.virtual_stages, 23);
    free(r);
    free(e);
}

/* Megatron-LM's stages hold equal layers: the layers a multiple of the
 * pipeline size (megatron/model/transformer.py), Megatron-Core's first and
 * last stages lighter at most (7, 8 x 14, 7 for 126 layers over 16); a
 * split of another shape is refused, and so is an interleaved one whose
 * stages do not divide into its chunks (7 layers into 2). */
static void megatron_equal_stages(void **state)
{
    (void)state;
    st_err err = {0};
    plan_model m = {.arch = PLAN_ARCH_LLAMA, .layers = 126, .hidden = 2048, .heads = 16,
                    .kv_heads = 8, .ffn = 8192, .seq = 2048, .vocab = 128256};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    int m24 = profile("megatron@2024"), m21 = profile("megatron@2021");
    plan_cluster c = cluster("dgx-h100", 2, m24);
    plan_layout l;
    plan_layout_default(&l);
    plan_framework_apply(plan_framework_get(m24), m24, &l);
    l.tp = 1, l.pp = 16, l.dp = 1, l.micro_batch = 1, l.microbatches = 32;
    l.global_batch = 32;
    plan_estimate *e = calloc(1, sizeof *e);
    assert_non_null(e);
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_true(e->reject == PLAN_OK || e->reject == PLAN_REJ_OOM);
    assert_int_equal(e->stage_layers[0], 7);
    assert_int_equal(e->stage_layers[1], 8);
    l.schedule = PLAN_SCHED_VIRTUAL;
    l.virtual_stages = 2;
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_int_equal(e->reject, PLAN_REJ_LAYERS);
    /* Megatron-LM 2021: no lighter ends, 126 layers do not split over 16 */
    plan_layout_default(&l);
    plan_framework_apply(plan_framework_get(m21), m21, &l);
    l.tp = 1, l.pp = 16, l.dp = 1, l.micro_batch = 1, l.microbatches = 32;
    l.global_batch = 32;
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_int_equal(e->reject, PLAN_REJ_LAYERS);
    assert_non_null(strstr(e->reason, "equal stages"));
    /* 128 layers: 8 a stage, the LM head or not */
    m.layers = 128;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    for (int i = 0; i < 16; i++)
        assert_int_equal(e->stage_layers[i], 8);
    free(e);
}

/* Megatron-Core 0.11 on counts the embedding and the loss as layers of its
 * split (--account-for-embedding/loss-in-pipeline-split): Llama 3.1 405B's
 * 126 layers run at pp 8 x virtual 8 (NeMo 25.02's table), 128 places over
 * 64 chunks, the first and last stages 15 layers; 127 layers take the
 * loss's place alone; 128 split evenly; the 2024 release refuses 126 so,
 * and the search finds the count only on the release that has it. */
static void megatron_embedding_loss_split(void **state)
{
    (void)state;
    st_err err = {0};
    plan_model m = {.arch = PLAN_ARCH_LLAMA, .layers = 126, .hidden = 2048, .heads = 16,
                    .kv_heads = 8, .ffn = 8192, .seq = 2048, .vocab = 128256};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    int m25 = profile("megatron@2025"), m24 = profile("megatron@2024");
    assert_true(plan_framework_get(m25)->pipeline_embedding_loss);
    assert_false(plan_framework_get(m24)->pipeline_embedding_loss);
    plan_cluster c = cluster("dgx-h100", 1, m25);
    plan_layout l;
    plan_layout_default(&l);
    plan_framework_apply(plan_framework_get(m25), m25, &l);
    l.tp = 1, l.pp = 8, l.dp = 1, l.micro_batch = 1, l.microbatches = 32;
    l.global_batch = 32;
    l.schedule = PLAN_SCHED_VIRTUAL;
    l.virtual_stages = 8;
    int emb = -1, loss = -1;
    assert_int_equal(plan_split_embedding_loss(&m, &l, &emb, &loss), 1);
    assert_int_equal(emb, 1);
    assert_int_equal(loss, 1);
    plan_estimate *e = calloc(1, sizeof *e);
    assert_non_null(e);
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_true(e->reject == PLAN_OK || e->reject == PLAN_REJ_OOM);
    int sum = 0;
    for (int i = 0; i < 8; i++) {
        assert_int_equal(e->stage_layers[i], i == 0 || i == 7 ? 15 : 16);
        sum += e->stage_layers[i];
    }
    assert_int_equal(sum, 126);
    /* 127 layers: the loss's place alone, 128 over 64 */
    m.layers = 127;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_split_embedding_loss(&m, &l, &emb, &loss), 1);
    assert_int_equal(emb, 0);
    assert_int_equal(loss, 1);
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_int_equal(e->stage_layers[0], 16);
    assert_int_equal(e->stage_layers[7], 15);
    /* 128: even, no place taken; 125: no split of 64 chunks */
    m.layers = 128;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_split_embedding_loss(&m, &l, &emb, &loss), 0);
    m.layers = 125;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_int_equal(e->reject, PLAN_REJ_LAYERS);
    /* the 2024 release: 126 layers over 64 chunks refused */
    m.layers = 126;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    l.framework = m24;
    assert_int_equal(plan_split_embedding_loss(&m, &l, &emb, &loss), 0);
    assert_int_equal(plan_evaluate(&m, &c, &l, e, NULL, &err), ST_OK);
    assert_int_equal(e->reject, PLAN_REJ_LAYERS);
    /* the search at pp 8: virtual 8 among its counts on 2025, none on 2024 */
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.tp = 1, cfg.pp = 8, cfg.dp = 1, cfg.cp = 1;
    cfg.micro_batch = 1;
    cfg.global_batch = 32;
    cfg.schedule = PLAN_SCHED_VIRTUAL;
    cfg.top_k = 32;
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    for (int k = 0; k < 2; k++) {
        cfg.framework = k ? m24 : m25;
        c = cluster("dgx-h100", 1, cfg.framework);
        assert_int_equal(plan_search(&m, &c, &cfg, r, &err), ST_OK);
        int seen8 = 0;
        for (int i = 0; i < r->ntop; i++)
            seen8 |= r->top[i].layout.virtual_stages == 8;
        if (k)
            assert_int_equal(r->ntop, 0);
        else
            assert_true(seen8);
    }
    free(r);
    free(e);
}

/* The catalog holds every instance type a SageMaker model parallel release
 * lists (v1: ml.g4dn.12xlarge was missing), p5e and p5en, each with its GPUs,
 * its network cards per node and where its price was read (or why none). */
static void catalog_covers_smp(void **state)
{
    (void)state;
    const char *const smp_lists[] = {"smp", "smp2", NULL};
    for (int f = 0; smp_lists[f]; f++) {
        const plan_framework *fw = plan_framework_get(profile(smp_lists[f]));
        for (int i = 0; i < PLAN_FW_TYPES_MAX && fw->instance_types[i][0]; i++) {
            const plan_instance *in = plan_catalog_find(&cat, fw->instance_types[i]);
            assert_non_null(in);
            assert_true(in->gpus_per_node > 0);
            assert_true(in->nics > 0);
            assert_true(in->nics_source[0] != '\0');
            assert_true(in->price_source[0] != '\0');
        }
    }
    static const char *const more[] = {"p5e.48xlarge", "p5en.48xlarge", "p5.48xlarge"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        const plan_instance *in = plan_catalog_find(&cat, more[i]);
        assert_non_null(in);
        assert_true(in->nics > 0 && in->price_source[0]);
    }
    const plan_instance *g4 = plan_catalog_find(&cat, "ml.g4dn.12xlarge");
    assert_non_null(g4);
    assert_int_equal(g4->gpus_per_node, 4);
    assert_string_equal(cat.gpus[g4->gpu_index].name, "T4-16GB");
    assert_int_equal(cat.gpus[g4->gpu_index].fp16_only, 1);
    /* p5en: 16 EFA devices for 8 GPUs; p5: 32 */
    assert_int_equal(plan_catalog_find(&cat, "p5en")->nics, 16);
    assert_int_equal(plan_catalog_find(&cat, "p5")->nics, 32);
}

/* SageMaker model parallelism v2: FSDP's hybrid sharding with tensor and
 * context parallelism, offloading and FP8, no pipeline; it runs on the
 * instance types its documentation lists (p5 among them, which v1 lacks),
 * not on others. */
static void smp2_profile(void **state)
{
    (void)state;
    const plan_framework *fw = plan_framework_get(profile("smp2"));
    assert_true(fw->fp8 && fw->context_parallel && fw->offload);
    assert_true(fw->shardings & (1u << PLAN_SHARD_PARAMS));
    assert_true(plan_framework_runs_on(fw, plan_catalog_find(&cat, "p5.48xlarge")));
    assert_true(plan_framework_runs_on(fw, plan_catalog_find(&cat, "p4d.24xlarge")));
    assert_false(plan_framework_runs_on(fw, plan_catalog_find(&cat, "g5.48xlarge")));
    const plan_framework *v1 = plan_framework_get(profile("smp"));
    assert_false(plan_framework_runs_on(v1, plan_catalog_find(&cat, "p5.48xlarge")));
    plan_layout l;
    plan_layout_default(&l);
    plan_framework_apply(fw, profile("smp2"), &l);
    l.sharding = PLAN_SHARD_PARAMS;
    l.dp = 16;
    char why[300];
    assert_int_equal(plan_framework_check(fw, &l, why, sizeof why), 0);
    l.pp = 2;
    assert_int_not_equal(plan_framework_check(fw, &l, why, sizeof why), 0);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(precision_by_chip),
        cmocka_unit_test(fsdp_layouts),
        cmocka_unit_test(even_split_unless_faster),
        cmocka_unit_test(lighter_ends_where_the_stack_runs_them),
        cmocka_unit_test(cp_searched),
        cmocka_unit_test(block_recompute_searched),
        cmocka_unit_test(virtual_stages_equal_chunks),
        cmocka_unit_test(megatron_equal_stages),
        cmocka_unit_test(megatron_embedding_loss_split),
        cmocka_unit_test(catalog_covers_smp),
        cmocka_unit_test(smp2_profile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
