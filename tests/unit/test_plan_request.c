/*
 * test_plan_request.c: a request's architecture, size overrides and fixed
 * layout knobs (planner/plan_request.c), on shapes with non-trivial sizes
 * (hidden 1536, 13 layers, 12 heads of which 4 kv).
 */
#include "test_util.h"

#include "planner/plan_request.h"

static const plan_model_overrides none = {.window = -1, .window_pattern = -1, .dropout = -1};

static void arch_from_name_or_family(void **state)
{
    (void)state;
    plan_arch a;
    st_err err = {0};
    assert_int_equal(plan_request_arch(NULL, NULL, &a, &err), ST_OK);
    assert_int_equal(a, PLAN_ARCH_GPT);
    assert_int_equal(plan_request_arch(NULL, "Llama", &a, &err), ST_OK);
    assert_int_equal(a, PLAN_ARCH_LLAMA);
    /* a name given wins over the family's architecture */
    assert_int_equal(plan_request_arch("GPT", "llama", &a, &err), ST_OK);
    assert_int_equal(a, PLAN_ARCH_GPT);
    assert_int_equal(plan_request_arch("mamba", NULL, &a, &err), ST_EINVAL);
    assert_string_equal(err.msg, "--arch 'mamba': allowed are gpt, llama");
}

static void custom_gpt_takes_defaults(void **state)
{
    (void)state;
    plan_model m;
    st_err err = {0};
    plan_request_custom_model(PLAN_ARCH_GPT, &m);
    plan_model_overrides ov = none;
    ov.layers = 13, ov.hidden = 1536, ov.heads = 12;
    assert_int_equal(plan_request_override(&m, &ov, 0, &err), ST_OK);
    assert_string_equal(m.name, "custom");
    assert_int_equal(m.seq, 2048);
    assert_int_equal(m.vocab, 50257);
    assert_int_equal(m.kv_heads, 12);
    assert_int_equal(m.ffn, 4 * 1536);
    /* 12 h^2 + 13 h per layer (weights and biases), tied embedding, learned
     * positions, final norm (Narayanan et al. 2021, Eq. 2 with biases) */
    int64_t h = 1536, layer = 12 * h * h + 13 * h;
    assert_int_equal(m.params, 13 * layer + 50257 * h + 2048 * h + 2 * h);
    assert_string_equal(m.source, "sizes given on the command line");
}

static void llama_ffn_and_note(void **state)
{
    (void)state;
    plan_model m;
    st_err err = {0};
    plan_request_custom_model(PLAN_ARCH_LLAMA, &m);
    plan_model_overrides ov = none;
    ov.layers = 13, ov.hidden = 1536, ov.heads = 12, ov.kv_heads = 4, ov.dropout = 1;
    assert_int_equal(plan_request_override(&m, &ov, 1, &err), ST_OK);
    assert_int_equal(m.vocab, 32000);
    assert_int_equal(m.kv_heads, 4);
    /* 2/3 x 4 x 1536 = 4096, already a multiple of 256 */
    assert_int_equal(m.ffn, 4096);
    assert_int_equal(m.dropout, PLAN_DROPOUT_ON);
    assert_string_equal(m.source, "sizes given on the command line; sizes overridden on the "
                                  "command line");
    /* a new head count takes the kv heads with it unless they are given;
     * nothing changed: no note */
    plan_model_overrides heads = none;
    heads.heads = 24;
    assert_int_equal(plan_request_override(&m, &heads, 1, &err), ST_OK);
    assert_int_equal(m.kv_heads, 24);
    char before[sizeof m.source];
    snprintf(before, sizeof before, "%s", m.source);
    assert_int_equal(plan_request_override(&m, &none, 1, &err), ST_OK);
    assert_string_equal(m.source, before);
}

static plan_model shape(void)
{
    plan_model m;
    st_err err = {0};
    plan_request_custom_model(PLAN_ARCH_LLAMA, &m);
    plan_model_overrides ov = none;
    ov.layers = 13, ov.hidden = 1536, ov.heads = 12, ov.kv_heads = 4;
    if (plan_request_override(&m, &ov, 0, &err))
        fail_msg("%s", err.msg);
    return m;
}

static int check(const plan_model *m, int64_t batch_size, plan_config *cfg, st_err *err)
{
    plan_cluster c;
    memset(&c, 0, sizeof c);
    c.gpus = 96;
    memset(err, 0, sizeof *err); /* st_err keeps the first error */
    return plan_request_check_layout(m, &c, batch_size, cfg, err);
}

static void layout_refusals(void **state)
{
    (void)state;
    plan_model m = shape();
    plan_config cfg;
    st_err err = {0};

    plan_config_default(&cfg);
    cfg.tp = 8; /* divides 4 kv heads' multiple, not the 12 heads */
    assert_int_equal(check(&m, 0, &cfg, &err), ST_EINVAL);
    assert_string_equal(err.msg, "--tp 8: must divide the 12 attention heads (and 4 kv heads)");
    cfg.tp = 6; /* divides the heads; 4 kv heads neither divide nor are divided by 6 */
    assert_int_equal(check(&m, 0, &cfg, &err), ST_EINVAL);
    cfg.tp = 12; /* kv heads replicated: 12 % 4 == 0 */
    assert_int_equal(check(&m, 0, &cfg, &err), ST_OK);

    plan_config_default(&cfg);
    cfg.pp = 7, cfg.virtual_stages = 2;
    assert_int_equal(check(&m, 0, &cfg, &err), ST_EINVAL);
    assert_string_equal(err.msg,
                        "--pp 7 x --virtual-stages 2: more pipeline chunks than the 13 layers");
    cfg.schedule = PLAN_SCHED_SIMPLE, cfg.pp = 4;
    assert_int_equal(check(&m, 0, &cfg, &err), ST_EINVAL);
    assert_string_equal(err.msg, "--virtual-stages 2: only with --schedule virtual");
    cfg.schedule = PLAN_SCHED_VIRTUAL, cfg.microbatches = 6;
    assert_int_equal(check(&m, 0, &cfg, &err), ST_EINVAL);
    cfg.microbatches = 8;
    assert_int_equal(check(&m, 0, &cfg, &err), ST_OK);
}

static void batch_size_is_per_dp_group(void **state)
{
    (void)state;
    plan_model m = shape();
    plan_config cfg;
    st_err err = {0};

    plan_config_default(&cfg);
    assert_int_equal(check(&m, 7, &cfg, &err), ST_EINVAL);
    cfg.tp = 4, cfg.pp = 3, cfg.cp = 2; /* 96 / 24: dp 4 */
    assert_int_equal(check(&m, 7, &cfg, &err), ST_OK);
    assert_int_equal(cfg.global_batch, 28);
    cfg.dp = 5; /* --dp wins */
    assert_int_equal(check(&m, 7, &cfg, &err), ST_OK);
    assert_int_equal(cfg.global_batch, 35);
    plan_config_default(&cfg);
    cfg.tp = 4, cfg.pp = 5; /* 20 does not divide 96: dp unknown */
    assert_int_equal(check(&m, 7, &cfg, &err), ST_EINVAL);
}

TEST_MAIN((void)0,
          cmocka_unit_test(arch_from_name_or_family),
          cmocka_unit_test(custom_gpt_takes_defaults),
          cmocka_unit_test(llama_ffn_and_note),
          cmocka_unit_test(layout_refusals),
          cmocka_unit_test(batch_size_is_per_dp_group))
