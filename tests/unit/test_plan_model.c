/*
 * test_plan_model.c: exact parameter counts and FLOPs of published shapes.
 */
#include "test_util.h"

#include "planner/plan.h"

static plan_model gpt(int64_t l, int64_t h, int64_t a, int64_t s, int64_t v)
{
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = l, .hidden = h, .heads = a, .kv_heads = a,
                    .ffn = 4 * h, .seq = s, .vocab = v, .tied_embedding = 1};
    return m;
}

/* GPT-3 175B (Brown et al. 2020): 96 layers, h 12288, 96 heads, vocab 50257. */
static void gpt3_175b_count(void **state)
{
    plan_model m = gpt(96, 12288, 96, 2048, 50257);
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    /* 96 * (12h^2 + 13h) + V*h + s*h + 2h */
    int64_t h = 12288;
    int64_t want = 96 * (12 * h * h + 13 * h) + 50257 * h + 2048 * h + 2 * h;
    assert_int_equal(m.params, want);
    assert_int_equal(m.params, 174604259328LL);
}

/* The closed form of Narayanan et al. 2021 Sec. 5.1 for a non-trivial shape:
 * P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) + final LayerNorm 2h. */
static void narayanan_closed_form(void **state)
{
    plan_model m = gpt(13, 1536, 12, 1000, 51200);
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    double l = 13, h = 1536, V = 51200, s = 1000;
    double p = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)) + 2 * h;
    assert_rel(m.params, p, 1e-12);
}

/* Llama-2-7B: 6,738,415,616 parameters (Hugging Face model card count). */
static void llama2_7b_count(void **state)
{
    plan_model m = {.arch = PLAN_ARCH_LLAMA, .layers = 32, .hidden = 4096, .heads = 32,
                    .kv_heads = 32, .ffn = 11008, .seq = 4096, .vocab = 32000};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(m.params, 6738415616LL);
}

/* Llama-3-70B with grouped-query attention: 70,553,706,496 parameters. */
static void llama3_70b_count(void **state)
{
    plan_model m = {.arch = PLAN_ARCH_LLAMA, .layers = 80, .hidden = 8192, .heads = 64,
                    .kv_heads = 8, .ffn = 28672, .seq = 8192, .vocab = 128256};
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(m.params, 70553706496LL);
}

/* Training FLOPs per token times tokens reproduces Narayanan Eq. 3 without
 * the recompute pass: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). */
static void flops_match_eq3(void **state)
{
    plan_model m = gpt(13, 1536, 12, 1000, 51200);
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    double B = 7, s = 1000, l = 13, h = 1536, V = 51200;
    double want = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    assert_rel(plan_model_train_flops_per_token(&m) * B * s, want, 1e-12);
}

static void rejects_bad_shapes(void **state)
{
    st_err err = {0};
    plan_model m = gpt(13, 1536, 12, 1000, 51200);
    m.heads = 7; /* does not divide 1536 */
    m.kv_heads = 7;
    assert_int_equal(plan_model_finish(&m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "heads 7"));

    st_err_clear(&err);
    m = gpt(13, 1536, 12, 1000, 51200);
    m.layers = 0;
    assert_int_equal(plan_model_finish(&m, &err), ST_EINVAL);

    st_err_clear(&err);
    m = gpt(13, 1536, 12, 1000, 51200);
    m.hidden = (int64_t)1 << 40;
    assert_int_equal(plan_model_finish(&m, &err), ST_ERANGE);

    st_err_clear(&err);
    m = gpt(13, 1536, 12, 1000, 51200);
    m.kv_heads = 5;
    assert_int_equal(plan_model_finish(&m, &err), ST_EINVAL);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpt3_175b_count),     cmocka_unit_test(narayanan_closed_form),
        cmocka_unit_test(llama2_7b_count),     cmocka_unit_test(llama3_70b_count),
        cmocka_unit_test(flops_match_eq3),     cmocka_unit_test(rejects_bad_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
