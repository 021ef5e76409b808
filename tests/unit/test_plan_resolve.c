/*
 * test_plan_resolve.c: "--params 30B" to a shape, against the shipped presets.
 *
 * Exact presets: 30B is SMP's reference shape (seq 512, vocab 50000), 175B
 * GPT-3 (174,604,259,328 parameters), 1T Megatron's (128 x 25600), 1.3B
 * GPT-3 XL; Llama 8B / 70B are Llama 3 (8,030,261,248 and 70,553,706,496).
 * Derived shapes land near the request, between their neighbours, and the
 * SMP presets are exactly what the rule derives from GPT-3 and Megatron.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data.h"

#define PRESETS SMD_TEST_DATA_DIR "/models.json"

static int setup(void **state)
{
    plan_presets *ps = calloc(1, sizeof *ps);
    st_err err = {0};
    if (!ps || data_presets_load(PRESETS, ps, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        free(ps);
        return -1;
    }
    *state = ps;
    return 0;
}

static int teardown(void **state)
{
    plan_presets_free(*state);
    free(*state);
    return 0;
}

static plan_model resolve_ok(const plan_presets *ps, double params, plan_arch arch,
                             const char *family)
{
    plan_model m;
    st_err err = {0};
    int rc = plan_model_resolve(ps, params, arch, family, &m, &err);
    if (rc)
        fail_msg("resolve %g: %s", params, err.msg);
    return m;
}

/* resolve_ok's model, which must be the preset called name. */
static plan_model resolves_to(const plan_presets *ps, double params, plan_arch arch,
                              const char *family, const char *name)
{
    plan_model m = resolve_ok(ps, params, arch, family);
    assert_string_equal(m.name, name);
    return m;
}

static void exact_30b_is_smp(void **state)
{
    plan_model m = resolves_to(*state, 30e9, PLAN_ARCH_GPT, NULL, "smp-30b");
    assert_int_equal(m.seq, 512);
    assert_int_equal(m.vocab, 50000);
    assert_int_equal(m.heads % 8, 0); /* SMP's reference runs it at TP 8 */
    assert_rel(m.params, 30e9, 0.01);
    /* "" is no family */
    resolves_to(*state, 30e9, PLAN_ARCH_GPT, "", "smp-30b");
}

static void exact_published(void **state)
{
    plan_model m = resolves_to(*state, 175e9, PLAN_ARCH_GPT, NULL, "gpt3-175b");
    assert_int_equal(m.params, 174604259328LL);

    m = resolves_to(*state, 1e12, PLAN_ARCH_GPT, NULL, "megatron-1t");
    assert_int_equal(m.layers, 128);
    assert_int_equal(m.hidden, 25600);
    assert_int_equal(m.heads, 160);

    m = resolves_to(*state, 1.3e9, PLAN_ARCH_GPT, NULL, "gpt3-1.3b");
    assert_int_equal(m.hidden, 2048);

    /* within 0.5 % of the nominal size */
    m = resolves_to(*state, 174.2e9, PLAN_ARCH_GPT, NULL, "gpt3-175b");
    /* 13B is published by GPT-3 (and Llama 2): GPT-3 first for gpt */
    m = resolves_to(*state, 13e9, PLAN_ARCH_GPT, NULL, "gpt3-13b");
    /* family restriction picks Megatron's size */
    m = resolves_to(*state, 7.5e9, PLAN_ARCH_GPT, "megatron", "megatron-7.5b");
}

static void exact_llama(void **state)
{
    plan_model m = resolves_to(*state, 8e9, PLAN_ARCH_LLAMA, NULL, "llama3-8b");
    assert_int_equal(m.params, 8030261248LL);
    /* Llama 2 and 3 both publish 70B: the exact count nearer the request wins */
    m = resolves_to(*state, 70e9, PLAN_ARCH_LLAMA, NULL, "llama3-70b");
    assert_int_equal(m.params, 70553706496LL);
    m = resolves_to(*state, 7e9, PLAN_ARCH_LLAMA, "llama", "llama2-7b");
    assert_int_equal(m.params, 6738415616LL);
}

/* The presets of arch nearest below and above params (by exact count),
 * those with the architecture's own feed-forward layer (Nemotron-4's plain
 * MLP on a Llama layer is no anchor of a derived shape). */
static void neighbours(const plan_presets *ps, double params, plan_arch arch,
                       const plan_preset **lo, const plan_preset **hi)
{
    *lo = *hi = NULL;
    for (int i = 0; i < ps->n; i++) {
        const plan_preset *p = &ps->v[i];
        double x = (double)p->model.params;
        if (p->model.arch != arch ||
            p->model.mlp != (arch == PLAN_ARCH_LLAMA ? PLAN_MLP_GATED : PLAN_MLP_PLAIN))
            continue;
        if (x <= params && (!*lo || x > (double)(*lo)->model.params))
            *lo = p;
        if (x > params && (!*hi || x < (double)(*hi)->model.params))
            *hi = p;
    }
}

static void check_derived(const plan_presets *ps, double params, plan_arch arch, double rel)
{
    plan_model m = resolve_ok(ps, params, arch, NULL);
    assert_int_equal(strncmp(m.name, "derived-", 8), 0);
    assert_non_null(strstr(m.source, "interpolated"));
    assert_rel(m.params, params, rel);
    const plan_preset *lo, *hi;
    neighbours(ps, params, arch, &lo, &hi);
    assert_non_null(lo);
    assert_non_null(hi);
    if (m.hidden < lo->model.hidden || m.hidden > hi->model.hidden)
        fail_msg("%g: hidden %lld outside %s (%lld) .. %s (%lld)", params, (long long)m.hidden,
                 lo->key, (long long)lo->model.hidden, hi->key, (long long)hi->model.hidden);
    assert_non_null(strstr(m.source, lo->key));
    assert_non_null(strstr(m.source, hi->key));
    assert_int_equal(m.hidden % m.heads, 0);
    if (arch == PLAN_ARCH_GPT) {
        assert_int_equal(m.ffn, 4 * m.hidden);
        assert_int_equal(m.kv_heads, m.heads);
        assert_int_equal(m.tied_embedding, 1);
    } else {
        assert_int_equal(m.ffn % 256, 0);
        assert_true(m.ffn >= 8 * m.hidden / 3 && m.ffn < 8 * m.hidden / 3 + 256);
        assert_int_equal(m.kv_heads, m.heads % 8 == 0 ? 8 : m.heads);
        assert_int_equal(m.tied_embedding, 0);
    }
}

static void derived_between_presets(void **state)
{
    check_derived(*state, 20e9, PLAN_ARCH_GPT, 0.02);
    check_derived(*state, 3e9, PLAN_ARCH_GPT, 0.02);
    check_derived(*state, 500e9, PLAN_ARCH_GPT, 0.02);
    check_derived(*state, 100e9, PLAN_ARCH_LLAMA, 0.02);
    check_derived(*state, 34e9, PLAN_ARCH_LLAMA, 0.02);

    plan_model m = resolves_to(*state, 20e9, PLAN_ARCH_GPT, NULL, "derived-20B");
    /* nearest preset is Megatron 18.4B: its seq and vocab */
    assert_int_equal(m.seq, 2048);
    assert_int_equal(m.vocab, 51200);
    assert_int_equal(m.hidden % 1024, 0); /* h >= 4096: heads a multiple of 8 */
    assert_int_equal(m.heads % 8, 0);
    m = resolves_to(*state, 2.5e9, PLAN_ARCH_GPT, NULL, "derived-2.5B");
    assert_int_equal(m.hidden % 128, 0);
}

/* Outside the presets the end segment is extended. */
static void derived_extrapolated(void **state)
{
    /* Llama below 6.7B: the 7B/8B end segment is flat (h 4096 both), so the
     * 13B preset sets the slope; 1B gets h 2176 (Llama 3.2 1B has 2048), not
     * 4096, and 3B stays narrower than 7B. */
    plan_model m = resolve_ok(*state, 1e9, PLAN_ARCH_LLAMA, NULL);
    assert_int_equal(m.hidden, 2176);
    assert_int_equal(m.heads, 17);
    assert_int_equal(m.kv_heads, 17);  /* 8 does not divide 17 heads */
    assert_int_equal(m.ffn, 5888);     /* 2/3 * 8704 = 5802, up to 256 */
    assert_rel(m.params, 1e9, 0.05);
    plan_model m3 = resolve_ok(*state, 3e9, PLAN_ARCH_LLAMA, NULL);
    assert_true(m3.hidden > m.hidden && m3.hidden < 4096);

    m = resolve_ok(*state, 2e12, PLAN_ARCH_GPT, NULL);
    assert_rel(m.params, 2e12, 0.01);
    assert_non_null(strstr(m.source, "extrapolated megatron-529.6b..megatron-1t"));
    assert_true(m.hidden > 25600);
    assert_string_equal(m.name, "derived-2T");
    m = resolve_ok(*state, 1e15, PLAN_ARCH_GPT, NULL);
    assert_rel(m.params, 1e15, 0.01);
    m = resolve_ok(*state, 1e15, PLAN_ARCH_LLAMA, NULL);
    assert_rel(m.params, 1e15, 0.01);

    /* Tiny: one GPT-3 Small-like narrow layer, the embedding dominates. */
    m = resolve_ok(*state, 1e6, PLAN_ARCH_GPT, NULL);
    assert_int_equal(m.layers, 1);
    assert_int_equal(m.hidden % 64, 0);
    assert_int_equal(plan_model_head_dim(&m), 64);
}

/* A sweep: every result finished, within half a layer of the request once
 * there is more than one layer, and hidden never shrinks as params grow. */
static void derived_sweep(void **state)
{
    for (int a = 0; a < 2; a++) {
        plan_arch arch = a ? PLAN_ARCH_LLAMA : PLAN_ARCH_GPT;
        int64_t last_h = 0;
        for (double p = 1e6; p <= 1e15; p *= 1.23) {
            plan_model m = resolve_ok(*state, p, arch, NULL);
            plan_model again = m;
            st_err err = {0};
            assert_int_equal(plan_model_finish(&again, &err), ST_OK);
            assert_int_equal(again.params, m.params);
            if (strncmp(m.name, "derived-", 8) == 0 && m.layers > 1 &&
                fabs((double)m.params - p) > 0.5 * (double)m.params_layer + 1)
                fail_msg("%g: %lld params, layer %lld", p, (long long)m.params,
                         (long long)m.params_layer);
            if (strncmp(m.name, "derived-", 8) == 0) {
                assert_true(m.hidden >= last_h);
                last_h = m.hidden;
            }
        }
    }
}

/* The shipped SMP shapes are the rule's answer from GPT-3 and Megatron with
 * SMP's seq 512 and vocab 50000. */
static void smp_presets_follow_rule(void **state)
{
    const plan_presets *ps = *state;
    plan_presets base = {calloc((size_t)ps->n, sizeof(plan_preset)), 0};
    assert_non_null(base.v);
    for (int i = 0; i < ps->n; i++) {
        const plan_preset *p = &ps->v[i];
        if (strcmp(p->family, "gpt3") != 0 && strcmp(p->family, "megatron") != 0)
            continue;
        /* Only seq and vocab change: the curve's x stays the published
         * shape's count. */
        plan_preset q = *p;
        q.model.seq = 512;
        q.model.vocab = 50000;
        base.v[base.n++] = q;
    }
    const char *keys[] = {"smp-10b", "smp-30b", "smp-60b"};
    const double sizes[] = {10e9, 30e9, 60e9};
    for (int i = 0; i < 3; i++) {
        const plan_preset *smp = test_preset_find(ps, keys[i]);
        assert_non_null(smp);
        plan_model m = resolve_ok(&base, sizes[i], PLAN_ARCH_GPT, NULL);
        assert_int_equal(m.layers, smp->model.layers);
        assert_int_equal(m.hidden, smp->model.hidden);
        assert_int_equal(m.heads, smp->model.heads);
        assert_int_equal(m.ffn, smp->model.ffn);
        assert_int_equal(m.params, smp->model.params);
        assert_non_null(strstr(smp->model.source, "derived"));
    }
    plan_presets_free(&base);
}

static void family_restriction(void **state)
{
    /* only GPT-3: between 13B and 175B, GPT-3's seq and vocab */
    plan_model m = resolves_to(*state, 30e9, PLAN_ARCH_GPT, "gpt3", "derived-30B");
    assert_int_equal(m.seq, 2048);
    assert_int_equal(m.vocab, 50257);
    assert_non_null(strstr(m.source, "gpt3-13b"));
    assert_non_null(strstr(m.source, "gpt3-175b"));
    assert_true(m.hidden >= 5120 && m.hidden <= 12288);

    /* only SMP: 20B between its 10B and 30B references, seq 512 */
    m = resolve_ok(*state, 20e9, PLAN_ARCH_GPT, "smp");
    assert_int_equal(m.seq, 512);
    assert_int_equal(m.vocab, 50000);
    assert_rel(m.params, 20e9, 0.02);
}

static void expect_error(const plan_presets *ps, double params, plan_arch arch,
                         const char *family, int code, const char *want1, const char *want2)
{
    plan_model m = {.layers = 777};
    st_err err = {0};
    int rc = plan_model_resolve(ps, params, arch, family, &m, &err);
    if (rc != code || !strstr(err.msg, want1) || (want2 && !strstr(err.msg, want2)))
        fail_msg("rc %d (want %d): '%s'", rc, code, err.msg);
    assert_int_equal(m.layers, 777);
}

static void errors(void **state)
{
    expect_error(*state, 30e9, PLAN_ARCH_GPT, "gpt4", ST_EINVAL, "family 'gpt4'", "megatron");
    expect_error(*state, 30e9, PLAN_ARCH_GPT, "llama", ST_EINVAL, "no gpt presets", "smp");
    expect_error(*state, 30e9, PLAN_ARCH_LLAMA, "smp", ST_EINVAL, "llama families", "llama");
    expect_error(*state, 9e5, PLAN_ARCH_GPT, NULL, ST_EINVAL, "1e6", "1e15");
    expect_error(*state, 2e15, PLAN_ARCH_GPT, NULL, ST_EINVAL, "allowed range", NULL);
    expect_error(*state, NAN, PLAN_ARCH_GPT, NULL, ST_EINVAL, "allowed range", NULL);
    expect_error(*state, -30e9, PLAN_ARCH_GPT, NULL, ST_EINVAL, "allowed range", NULL);
    expect_error(*state, 30e9, (plan_arch)7, NULL, ST_EINVAL, "arch 7", NULL);
    plan_presets none = {NULL, 0};
    expect_error(&none, 30e9, PLAN_ARCH_GPT, NULL, ST_ENOENT, "no gpt model presets", NULL);
    expect_error(NULL, 30e9, PLAN_ARCH_GPT, NULL, ST_ENOENT, "no gpt model presets", NULL);
    expect_error(NULL, 30e9, PLAN_ARCH_GPT, "smp", ST_EINVAL, "family 'smp': unknown", NULL);
}

/* A one-preset set falls back to the P ~ h^3 slope. */
static void single_preset(void **state)
{
    const plan_preset *p = test_preset_find(*state, "gpt3-175b");
    plan_presets one = {(plan_preset *)p, 1};
    plan_model m = resolve_ok(&one, 175e9 * 8, PLAN_ARCH_GPT, NULL);
    assert_int_equal(m.hidden, 2 * 12288); /* 8x params: 2x hidden */
    assert_rel(m.params, 175e9 * 8, 0.02);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_30b_is_smp),        cmocka_unit_test(exact_published),
        cmocka_unit_test(exact_llama),             cmocka_unit_test(derived_between_presets),
        cmocka_unit_test(derived_extrapolated),    cmocka_unit_test(derived_sweep),
        cmocka_unit_test(smp_presets_follow_rule), cmocka_unit_test(family_restriction),
        cmocka_unit_test(errors),                  cmocka_unit_test(single_preset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
