/*
 * test_plan_request_model.c: the model a plan request names
 * (planner/plan_request_model.c): a file through the caller's loader, a
 * nominal size over the presets, explicit sizes, the overrides on top, and
 * the refusals in their order (the architecture before anything is read).
 */
#include "test_util.h"

#include <stdlib.h>

#include "planner/plan_request_model.h"

static plan_presets presets;
static int loads;                /* calls of the loader */

static void load_presets(void)
{
    st_err err = {0};
    if (data_presets_load(SMD_TEST_DATA_DIR "/models.json", &presets, &err) != ST_OK) {
        fprintf(stderr, "cannot load the presets: %s\n", err.msg);
        exit(1);
    }
}

/* A loader that gives a 13-layer model of hidden 1536, or refuses "bad". */
static int fake_load(const char *ref, plan_model *m, st_err *err)
{
    loads++;
    if (!strcmp(ref, "bad"))
        return ST_RAISE(err, ST_ENOENT, "%s: no such model", ref);
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", ref);
    m->arch = PLAN_ARCH_LLAMA;
    m->layers = 13, m->hidden = 1536, m->heads = 12, m->kv_heads = 4, m->ffn = 4096;
    m->seq = 1000, m->vocab = 32000;
    return ST_OK;
}

static plan_model_request request(void)
{
    return (plan_model_request){.load = fake_load,
                                .ov = {.window = -1, .window_pattern = -1, .dropout = -1}};
}

static void from_file_through_loader(void **state)
{
    (void)state;
    plan_model_request q = request();
    q.file = "tiny/config.json";
    q.ov.seq = 4096;
    plan_model m;
    st_err err = {0};
    loads = 0;
    assert_int_equal(plan_request_model(&q, &presets, &m, &err), ST_OK);
    assert_int_equal(loads, 1);
    assert_string_equal(m.name, "tiny/config.json");
    assert_int_equal(m.layers, 13);
    assert_int_equal(m.kv_heads, 4); /* the file's, kept */
    assert_int_equal(m.seq, 4096);   /* the override */
    assert_true(m.params > 0);
    /* the loader's refusal is the request's */
    q.file = "bad";
    assert_int_equal(plan_request_model(&q, &presets, &m, &err), ST_ENOENT);
    assert_text(err.msg, TEXTS("bad: no such model"), NULL);
    /* a bad --arch is refused before the file is read */
    loads = 0;
    q.file = "tiny/config.json";
    q.arch = "rnn";
    err = (st_err){0}; /* errors are sticky: a fresh one per refusal */
    assert_int_equal(plan_request_model(&q, &presets, &m, &err), ST_EINVAL);
    assert_text(err.msg, TEXTS("--arch 'rnn'"), NULL);
    assert_int_equal(loads, 0);
}

static void from_size_over_presets(void **state)
{
    (void)state;
    plan_model_request q = request();
    q.params = "175B";
    plan_model m;
    st_err err = {0};
    assert_int_equal(plan_request_model(&q, &presets, &m, &err), ST_OK);
    assert_string_equal(m.name, "gpt3-175b");
    assert_int_equal(m.layers, 96);
    assert_int_equal(m.hidden, 12288);
    /* a file wins over a size */
    q.file = "tiny/config.json";
    assert_int_equal(plan_request_model(&q, &presets, &m, &err), ST_OK);
    assert_int_equal(m.layers, 13);
    /* a size that is not one */
    q.file = NULL;
    q.params = "lots";
    err = (st_err){0};
    assert_int_equal(plan_request_model(&q, &presets, &m, &err), ST_EINVAL);
    assert_text(err.msg, TEXTS("--params 'lots'"), NULL);
}

static void from_sizes_or_none(void **state)
{
    (void)state;
    plan_model_request q = request();
    q.ov.layers = 13, q.ov.hidden = 1536, q.ov.heads = 12;
    plan_model m;
    st_err err = {0};
    assert_int_equal(plan_request_model(&q, NULL, &m, &err), ST_OK);
    assert_string_equal(m.name, "custom");
    assert_int_equal(m.ffn, 4 * 1536); /* gpt: 4h */
    assert_int_equal(m.kv_heads, 12);
    assert_int_equal(m.seq, 2048);
    /* two of the three sizes are no model */
    q.ov.heads = 0;
    err = (st_err){0};
    assert_int_equal(plan_request_model(&q, NULL, &m, &err), ST_EINVAL);
    assert_text(err.msg, TEXTS("no model: give --params SIZE"), NULL);
}

TEST_MAIN((test_frameworks_load(), load_presets()),
          cmocka_unit_test(from_file_through_loader),
          cmocka_unit_test(from_size_over_presets),
          cmocka_unit_test(from_sizes_or_none))
