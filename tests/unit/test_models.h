/*
 * test_models.h: the small model the executor's host-side tests run their
 * layouts on (13 layers, hidden 1536, 12 heads, sequence 1000).
 */
#ifndef SMD_TEST_MODELS_H
#define SMD_TEST_MODELS_H

#include "test_util.h"

#include "planner/plan.h"

static inline plan_model test_gpt_13x1536(void)
{
    plan_model m = {.arch = PLAN_ARCH_GPT, .layers = 13, .hidden = 1536, .heads = 12,
                    .kv_heads = 12, .ffn = 6144, .seq = 1000, .vocab = 51200,
                    .tied_embedding = 1};
    snprintf(m.name, sizeof m.name, "gpt-13x1536");
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    return m;
}

#endif
