/*
 * test_models.h: the small model the executor's host-side tests run their
 * layouts on (13 layers, hidden 1536, 12 heads, sequence 1000), one too
 * big for a p4d.24xlarge, and the planner's search of a model on a cluster
 * of the shipped catalog.
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

/* The small model grown until no layout of one p4d.24xlarge holds it: 400
 * layers of hidden 16384. */
static inline plan_model test_gpt_too_big(void)
{
    plan_model m = test_gpt_13x1536();
    m.layers = 400, m.hidden = 16384, m.heads = 128, m.kv_heads = 128, m.ffn = 4 * 16384;
    st_err err = {0};
    assert_int_equal(plan_model_finish(&m, &err), ST_OK);
    return m;
}

/* The shipped catalog (data/catalog.json) into cat, before any test runs:
 * the program ends when it cannot be read. */
static inline void test_catalog_load(plan_catalog *cat)
{
    st_err err = {0};
    if (data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", cat, &err) != ST_OK) {
        fprintf(stderr, "cannot load the catalog: %s\n", err.msg);
        exit(1);
    }
}

/* The search of m on the cluster spec ("1xp4d") of cat, into c, under cfg
 * (NULL: plan_config_default); the result is allocated (caller frees). */
static inline plan_result *test_search(const plan_catalog *cat, const plan_model *m,
                                       const char *spec, const plan_config *cfg, plan_cluster *c)
{
    st_err err = {0};
    assert_int_equal(plan_cluster_parse(cat, spec, c, &err), ST_OK);
    plan_config def;
    if (!cfg) {
        plan_config_default(&def);
        cfg = &def;
    }
    plan_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(plan_search(m, c, cfg, r, &err), ST_OK);
    return r;
}

/* A model searched on one p4d.24xlarge of the shipped catalog with the
 * default config: a cmocka test's state, made by test_searched_setup (the
 * 13 x 1536 model) or test_too_big_setup (test_gpt_too_big), freed by
 * test_searched_teardown. */
typedef struct test_searched {
    plan_catalog cat;
    plan_model m;
    plan_cluster c;
    plan_result *r;
} test_searched;

static inline int test_searched_make(void **state, plan_model m)
{
    test_searched *s = calloc(1, sizeof *s);
    assert_non_null(s);
    test_catalog_load(&s->cat);
    s->m = m;
    s->r = test_search(&s->cat, &s->m, "1xp4d", NULL, &s->c);
    *state = s;
    return 0;
}

static inline int test_searched_setup(void **state)
{
    return test_searched_make(state, test_gpt_13x1536());
}

static inline int test_too_big_setup(void **state)
{
    return test_searched_make(state, test_gpt_too_big());
}

static inline int test_searched_teardown(void **state)
{
    test_searched *s = *state;
    free(s->r);
    plan_catalog_free(&s->cat);
    free(s);
    return 0;
}

#endif
