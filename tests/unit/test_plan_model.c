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

/* A head size apart from hidden / heads (h 1536, 12 heads of 160: q =
 * 1920): the GPT layer's QKV is h x (q + 2q) with its biases, the
 * projection q x h + h, the rest as before (plan_model.c); 12 heads need
 * not divide h then. A head size of h / a is the derived one (kept 0). */
static void head_size_apart(void **state)
{
    st_err err = {0};
    plan_model m = gpt(13, 1536, 12, 1000, 51200);
    m.head_dim = 160;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    int64_t h = 1536, q = 12 * 160, f = 4 * h;
    int64_t layer = h * 3 * q + 3 * q + q * h + h + 2 * h * f + f + h + 4 * h;
    assert_int_equal(m.params_layer, layer);
    assert_int_equal(plan_model_attn_width(&m), q);
    assert_int_equal(plan_model_layer_matmul_params(&m), 4 * h * q + 2 * h * f);
    /* Llama-style: q and o h x q, k and v h x kv d */
    plan_model l = m;
    l.arch = PLAN_ARCH_LLAMA;
    l.kv_heads = 4;
    l.mlp = PLAN_MLP_ARCH;
    assert_int_equal(plan_model_finish(&l, &err), ST_OK);
    assert_int_equal(l.params_layer, 2 * h * q + 2 * h * 4 * 160 + 3 * h * f + 2 * h);
    /* 7 heads of 200 on h 1536: no divisibility asked */
    m = gpt(13, 1536, 7, 1000, 51200);
    m.head_dim = 200;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_model_head_dim(&m), 200);
    m = gpt(13, 1536, 12, 1000, 51200);
    m.head_dim = 128;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(m.head_dim, 0);
    assert_int_equal(plan_model_head_dim(&m), 128);
}

/* Model FLOPs with a sliding window (s 4096, W 1000, 13 layers): a local
 * layer's score and value products count min(s, W) keys a query (MaxText's
 * Gemma 2 count), a global one s; every other layer global (pattern 2)
 * leaves 7 of 13 local (layers 0, 2, ..., 12). A window covering the
 * sequence changes nothing. */
static void flops_with_window(void **state)
{
    st_err err = {0};
    plan_model m = gpt(13, 1536, 12, 4096, 51200);
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    double full = plan_model_layer_fwd_flops_per_token(&m);
    double gemm = 2.0 * (double)plan_model_layer_matmul_params(&m);
    assert_rel(full, gemm + 4.0 * 4096 * 1536, 1e-15);
    m.sliding_window = 1000;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_model_local_layers(&m), 13);
    assert_rel(plan_model_attn_fwd_flops_per_token(&m), 4.0 * 1000 * 1536, 1e-15);
    m.sliding_window_pattern = 2;
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    assert_int_equal(plan_model_local_layers(&m), 7);
    double keys = (6.0 * 4096 + 7.0 * 1000) / 13.0;
    assert_rel(plan_model_layer_fwd_flops_per_token(&m), gemm + 4.0 * keys * 1536, 1e-15);
    assert_rel(plan_model_train_flops_per_token(&m),
               3.0 * (13 * (gemm + 4.0 * keys * 1536) + 2.0 * 1536 * 51200), 1e-15);
    m.sliding_window = 4096;
    assert_int_equal(plan_model_local_layers(&m), 0);
    assert_rel(plan_model_layer_fwd_flops_per_token(&m), full, 0);
    m.sliding_window_pattern = 1; /* every layer global */
    m.sliding_window = 1000;
    assert_int_equal(plan_model_local_layers(&m), 0);
}

static void rejects_bad_attention(void **state)
{
    st_err err = {0};
    plan_model m = gpt(13, 1536, 12, 1000, 51200);
    m.head_dim = -4;
    assert_int_equal(plan_model_finish(&m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "head-dim -4"));
    st_err_clear(&err);
    m = gpt(13, 1536, 12, 1000, 51200);
    m.head_dim = PLAN_MAX_ATTN_WIDTH / 12 + 1;
    assert_int_equal(plan_model_finish(&m, &err), ST_ERANGE);
    assert_non_null(strstr(err.msg, "heads x head-dim"));
    st_err_clear(&err);
    m = gpt(13, 1536, 7, 1000, 51200); /* 7 heads, no head size */
    m.kv_heads = 7;
    assert_int_equal(plan_model_finish(&m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "head-dim"));
    st_err_clear(&err);
    m = gpt(13, 1536, 12, 1000, 51200);
    m.sliding_window = -1;
    assert_int_equal(plan_model_finish(&m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "sliding-window -1"));
    st_err_clear(&err);
    m = gpt(13, 1536, 12, 1000, 51200);
    m.sliding_window_pattern = -3;
    assert_int_equal(plan_model_finish(&m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "sliding-window-pattern -3"));
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpt3_175b_count),     cmocka_unit_test(narayanan_closed_form),
        cmocka_unit_test(llama2_7b_count),     cmocka_unit_test(llama3_70b_count),
        cmocka_unit_test(flops_match_eq3),     cmocka_unit_test(rejects_bad_shapes),
        cmocka_unit_test(head_size_apart),     cmocka_unit_test(flops_with_window),
        cmocka_unit_test(rejects_bad_attention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
