/*
 * test_plan_preset_cmp.c: a preset's published layout beside a plan
 * (planner/plan_preset_cmp.c): which model is a preset, the global batch
 * its training script implies (SMP's prescaled batch: smp-30b's
 * batch_size=32 per model-parallel group x 16 replicas of TP 8 on 128 GPUs
 * = 512 sequences), and the comparison's verdicts: fits, out of memory,
 * cannot be placed, cannot split the batch, another stack.
 */
#include "test_util.h"

#include <stdlib.h>

#include "planner/plan_framework.h"
#include "planner/plan_preset_cmp.h"

typedef struct fixture {
    plan_catalog cat;
    plan_presets ps;
    const plan_preset *smp30;
} fixture;

static fixture fx;

static void load(void)
{
    st_err err = {0};
    if (data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &fx.cat, &err) != ST_OK ||
        data_presets_load(SMD_TEST_DATA_DIR "/models.json", &fx.ps, &err) != ST_OK) {
        fprintf(stderr, "cannot load the catalog or presets: %s\n", err.msg);
        exit(1);
    }
    for (int i = 0; i < fx.ps.n; i++)
        if (!strcmp(fx.ps.v[i].key, "smp-30b"))
            fx.smp30 = &fx.ps.v[i];
    if (!fx.smp30 || !fx.smp30->ref.present) {
        fprintf(stderr, "no smp-30b preset with a reference layout\n");
        exit(1);
    }
}

static plan_cluster cluster(const char *spec, int framework)
{
    plan_cluster c;
    st_err err = {0};
    assert_int_equal(plan_cluster_parse(&fx.cat, spec, &c, &err), ST_OK);
    plan_cluster_use_framework(&fx.cat, framework, &c);
    return c;
}

static void preset_of_needs_published_shape(void **state)
{
    (void)state;
    plan_model m = fx.smp30->model;
    assert_ptr_equal(plan_preset_of(&fx.ps, &m), fx.smp30);
    m.layers += 2; /* another model, though named the same */
    assert_null(plan_preset_of(&fx.ps, &m));
    m = fx.smp30->model;
    m.seq = 2048;
    assert_null(plan_preset_of(&fx.ps, &m));
    /* a preset that publishes no layout is none */
    for (int i = 0; i < fx.ps.n; i++)
        if (!fx.ps.v[i].ref.present)
            assert_null(plan_preset_of(&fx.ps, &fx.ps.v[i].model));
}

static void batch_from_reference(void **state)
{
    (void)state;
    st_err err = {0};
    char src[400];
    int64_t global = 0;
    /* prescaled: 32 per model-parallel group x 128 / (8 x 1) replicas */
    assert_int_equal(plan_preset_batch(&fx.cat, fx.smp30, &global, src, sizeof src, &err), ST_OK);
    assert_int_equal(global, 512);
    assert_text(src, TEXTS("batch_size=32 per model-parallel group", "x 16 data-parallel",
                           "tp 8, pp 1 on 16 x p4d.24xlarge", "set with --global-batch"),
                NULL);
    /* per rank: tp times more */
    plan_preset p = *fx.smp30;
    p.ref.prescaled_batch = 0;
    assert_int_equal(plan_preset_batch(&fx.cat, &p, &global, src, sizeof src, &err), ST_OK);
    assert_int_equal(global, 32 * 8 * 16);
    assert_text(src, TEXTS("per rank x 8 TP ranks x 16 data-parallel"), NULL);
    /* a layout that does not divide the published cluster */
    p.ref.tp = 3;
    global = 7;
    assert_int_equal(plan_preset_batch(&fx.cat, &p, &global, src, sizeof src, &err), ST_EINVAL);
    assert_text(err.msg, TEXTS("tp 3 x pp 1 does not divide the 128 GPUs"), NULL);
    assert_int_equal(global, 7);
    /* a cluster the catalog does not know */
    p = *fx.smp30;
    snprintf(p.ref.instances, sizeof p.ref.instances, "16xnosuchtype");
    err = (st_err){0};
    assert_int_not_equal(plan_preset_batch(&fx.cat, &p, &global, src, sizeof src, &err), ST_OK);
    assert_true(err.msg[0] != '\0');
}

/* The search of smp-30b on spec at a global batch of 512. */
static plan_result *search(const plan_cluster *c, plan_config *cfg)
{
    plan_config_default(cfg);
    cfg->global_batch = 512;
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    st_err err = {0};
    assert_int_equal(plan_search(&fx.smp30->model, c, cfg, r, &err), ST_OK);
    return r;
}

static void reference_fits_and_why(void **state)
{
    (void)state;
    plan_config cfg;
    plan_config_default(&cfg);
    plan_cluster c = cluster("16xp4d", cfg.framework);
    plan_result *r = search(&c, &cfg);
    assert_true(r->ntop > 0);
    plan_preset_cmp cmp;
    st_err err = {0};
    assert_int_equal(plan_preset_compare(fx.smp30, &fx.smp30->model, &c, &cfg, r, &cmp, &err),
                     ST_OK);
    assert_true(cmp.shown);
    assert_ptr_equal(cmp.preset, fx.smp30);
    assert_int_equal(cmp.status, PLAN_PRESET_FITS);
    /* the published knobs, the data-parallel degree this cluster leaves */
    const plan_layout *l = &cmp.ref.layout;
    assert_int_equal(l->tp, 8);
    assert_int_equal(l->pp, 1);
    assert_int_equal(l->dp, 16);
    assert_int_equal(l->micro_batch * l->microbatches * l->dp, 512);
    assert_int_equal(l->recompute, fx.smp30->ref.recompute);
    assert_int_equal(l->sharding, fx.smp30->ref.sharding);
    /* ours ranks first over a space holding the reference: never slower */
    double ours = r->top[0].est.time.step_s, ref = cmp.ref.est.time.step_s;
    assert_true(ours <= ref);
    assert_text(cmp.why, TEXTS(ours < ref ? "% faster per step" : "Ours is SMP's reference",
                               "No SMP run has been fitted", "the difference is the model's"),
                NULL);
    assert_false(cmp.smp_fitted);

    /* the reference itself as ours: nothing differs */
    r->top[0] = cmp.ref;
    r->ntop = 1;
    assert_int_equal(plan_preset_compare(fx.smp30, &fx.smp30->model, &c, &cfg, r, &cmp, &err),
                     ST_OK);
    assert_int_equal(strncmp(cmp.why, "Ours is SMP's reference layout.", 31), 0);
    free(r);
}

static void reference_out_of_memory(void **state)
{
    (void)state;
    /* 30B at TP 8 on 16 GiB V100s: 7.5 GB of weights and as much of
     * gradients per GPU before activations and the optimizer */
    plan_config cfg;
    plan_config_default(&cfg);
    plan_cluster c = cluster("16xp3.16xlarge", cfg.framework);
    plan_result *r = search(&c, &cfg);
    if (r->ntop == 0) { /* nothing fits at all: compare against a hand-made #1 */
        r->ntop = 1;
        r->top[0] = r->closest_oom;
    }
    plan_preset_cmp cmp;
    st_err err = {0};
    assert_int_equal(plan_preset_compare(fx.smp30, &fx.smp30->model, &c, &cfg, r, &cmp, &err),
                     ST_OK);
    assert_int_equal(cmp.status, PLAN_PRESET_OOM);
    assert_true(cmp.ref.est.oom_excess_bytes > 0);
    assert_text(cmp.why, TEXTS("does not fit by the planner's memory model", "of the GPU's 16.0"),
                TEXTS("No SMP run has been fitted"));
    free(r);
}

static void reference_not_evaluated(void **state)
{
    (void)state;
    plan_config cfg;
    plan_config_default(&cfg);
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->ntop = 1;
    r->global_batch = 512;
    plan_preset_cmp cmp;
    st_err err = {0};
    /* 24 GPUs: dp 3 does not divide 512 */
    plan_cluster c = cluster("3xp4d", cfg.framework);
    assert_int_equal(plan_preset_compare(fx.smp30, &fx.smp30->model, &c, &cfg, r, &cmp, &err),
                     ST_OK);
    assert_true(cmp.shown);
    assert_int_equal(cmp.status, PLAN_PRESET_UNPLACEABLE);
    assert_text(cmp.why, TEXTS("(tp 8, pp 1, dp 3, 1 microbatches) cannot split the global "
                               "batch of 512 evenly."),
                NULL);
    /* 4 GPUs: TP 8 cannot be placed */
    c = cluster("1xg4dn.12xlarge", cfg.framework);
    assert_int_equal(plan_preset_compare(fx.smp30, &fx.smp30->model, &c, &cfg, r, &cmp, &err),
                     ST_OK);
    assert_int_equal(cmp.status, PLAN_PRESET_UNPLACEABLE);
    assert_text(cmp.why, TEXTS("cannot be placed on the 4 GPUs"), NULL);
    /* another stack: not compared */
    assert_int_equal(plan_framework_find("megatron", &cfg.framework, &err), ST_OK);
    c = cluster("16xp4d", cfg.framework);
    assert_int_equal(plan_preset_compare(fx.smp30, &fx.smp30->model, &c, &cfg, r, &cmp, &err),
                     ST_OK);
    assert_int_equal(cmp.status, PLAN_PRESET_UNPLACEABLE);
    assert_text(cmp.why, TEXTS("is not compared: this plan is for"), NULL);
    /* no preset, or no plan: nothing shown */
    assert_int_equal(plan_preset_compare(NULL, &fx.smp30->model, &c, &cfg, r, &cmp, &err), ST_OK);
    assert_false(cmp.shown);
    r->ntop = 0;
    assert_int_equal(plan_preset_compare(fx.smp30, &fx.smp30->model, &c, &cfg, r, &cmp, &err),
                     ST_OK);
    assert_false(cmp.shown);
    free(r);
}

TEST_MAIN((test_frameworks_load(), load()),
          cmocka_unit_test(preset_of_needs_published_shape),
          cmocka_unit_test(batch_from_reference),
          cmocka_unit_test(reference_fits_and_why),
          cmocka_unit_test(reference_out_of_memory),
          cmocka_unit_test(reference_not_evaluated))
