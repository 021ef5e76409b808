/*
 * test_data_frameworks.c: the stack profiles as data (data/frameworks.json,
 * data/data_frameworks.c) and their registry in the planner.
 *
 * A release inherits its knobs, behaviour and defaults and never its
 * identity (label, names, date); every value of the shipped file cites its
 * source beside it; a bad file is refused with one line naming the entry,
 * the field and what is allowed, and installs nothing; a bare stack name is
 * its latest release and an old key still reads.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "planner/plan_validate.h"
#include "planner/plan_framework.h"

/* A small file: a stack of three releases and a second stack. */
static const char *const good =
    "{\"_doc\": \"test\", \"frameworks\": ["
    " {\"name\": \"alpha@2020\", \"label\": \"Alpha 2020\", \"released\": \"2020-03\","
    "  \"names\": [\"Alpha\", \"AlphaTrain\"], \"family\": \"megatron\","
    "  \"schedules\": [\"interleaved\"], \"shardings\": [\"none\"], \"shardings_with_pp\": [\"none\"],"
    "  \"shardings_with_tp\": [\"none\"], \"recomputes\": [\"none\", \"full\"], \"placement\": \"PDT\","
    "  \"attention\": \"unfused\", \"dp_overlap\": true, \"dp_bucket_bytes\": \"25MB\","
    "  \"sync_sharded\": \"per-step\", \"tp_overlap\": \"none\", \"host_op_s\": 15e-6,"
    "  \"recompute_default\": \"full\", \"sharding_default\": \"none\", \"aliases\": [\"alpha-old\"]},"
    " {\"name\": \"alpha@2022\", \"inherits\": \"alpha@2020\", \"label\": \"Alpha 2022\","
    "  \"released\": \"2022-05\", \"release_names\": [\"AX-2\"],"
    "  \"recomputes\": [\"none\", \"selective\", \"full\"], \"recompute_default\": \"selective\","
    "  \"_recompute_default\": \"the paper\"},"
    " {\"name\": \"alpha@2024\", \"inherits\": \"alpha@2022\", \"label\": \"Alpha 2024\","
    "  \"released\": \"2024-02\", \"attention\": \"flash3\", \"dp_bucket_bytes\": \"layer\","
    "  \"versions\": {\"Alpha\": \"5.1\"}},"
    " {\"name\": \"beta\", \"inherits\": \"alpha@2020\", \"label\": \"Beta\", \"default\": true,"
    "  \"names\": [\"Beta\"], \"family\": \"fsdp\", \"dp_bucket_bytes\": \"whole buffer\","
    "  \"joins\": \"delta\"},"
    " {\"name\": \"delta\", \"inherits\": \"alpha@2020\", \"label\": \"Delta\","
    "  \"names\": [\"Delta\"]}"
    "]}";

static int parse(const char *text, plan_framework **v, int *n, int *def, st_err *err)
{
    return data_frameworks_parse(text, strlen(text), "t.json", v, n, def, err);
}

static const plan_framework *by_key(const plan_framework *v, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].key, key) == 0)
            return &v[i];
    fail_msg("no profile %s", key);
    return NULL;
}

static void inheritance(void **state)
{
    (void)state;
    plan_framework *v = NULL;
    int n = 0, def = -1;
    st_err err = {0};
    assert_int_equal(parse(good, &v, &n, &def, &err), ST_OK);
    assert_int_equal(n, 5);
    assert_int_equal(def, 3);
    const plan_framework *a20 = by_key(v, n, "alpha@2020"), *a22 = by_key(v, n, "alpha@2022");
    const plan_framework *a24 = by_key(v, n, "alpha@2024"), *b = by_key(v, n, "beta");
    /* knobs and behaviour inherited through two generations */
    assert_int_equal(a24->schedules, 1u << PLAN_SCHED_INTERLEAVED);
    assert_int_equal(a24->recomputes, a22->recomputes);
    assert_int_equal(a24->recompute_default, PLAN_RECOMP_SELECTIVE);
    assert_int_equal(a22->recompute_default, PLAN_RECOMP_SELECTIVE);
    assert_int_equal(a20->recompute_default, PLAN_RECOMP_FULL);
    assert_true(a22->host_op_s == 15e-6 && a22->dp_bucket_bytes == 25e6);
    assert_int_equal(a24->attention, PLAN_ATTN_FLASH3);
    assert_true(a24->flash_attention && !a22->flash_attention);
    assert_true(a24->dp_bucket_layer && a24->dp_bucket_bytes == 0);
    assert_true(b->dp_bucket_bytes == PLAN_FW_WHOLE_BUFFER && !b->dp_bucket_layer);
    /* identity is never inherited */
    assert_string_equal(a22->label, "Alpha 2022");
    assert_string_equal(a22->names[0], "");
    assert_string_equal(a22->aliases[0], "");
    assert_string_equal(a22->inherits, "alpha@2020");
    assert_string_equal(a22->stack, "alpha");
    assert_string_equal(b->stack, "beta");
    assert_int_equal(b->family, PLAN_FW_FSDP);
    assert_int_equal(a22->released_ym, 2022 * 12 + 4);
    assert_int_equal(a24->nversions, 1);
    assert_int_equal(a24->versions[0].v[0], 5);
    assert_int_equal(a24->versions[0].v[1], 1);

    /* installed: the default first; a stack is its latest release; an old
     * key still reads; a release by its text */
    assert_int_equal(plan_frameworks_set(v, n, def, &err), ST_OK);
    assert_string_equal(plan_framework_get(PLAN_FW_DEFAULT)->key, "beta");
    int i = -1;
    assert_int_equal(plan_framework_find("alpha", &i, &err), ST_OK);
    assert_string_equal(plan_framework_get(i)->key, "alpha@2024");
    assert_int_equal(plan_framework_find("ALPHA@2022", &i, &err), ST_OK);
    assert_string_equal(plan_framework_get(i)->key, "alpha@2022");
    assert_int_equal(plan_framework_find("alpha-old", &i, &err), ST_OK);
    assert_string_equal(plan_framework_get(i)->key, "alpha@2020");
    assert_int_equal(plan_framework_find("alpha@2023", &i, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--framework 'alpha@2023': allowed are beta, alpha"));
    assert_string_equal(plan_framework_get(plan_framework_match("AlphaTrain", 2021 * 12))->key,
                        "alpha@2020");
    assert_string_equal(plan_framework_get(plan_framework_match("Alpha AX-2", 0))->key,
                        "alpha@2022");
    assert_string_equal(plan_framework_get(plan_framework_match("Alpha v5.3", 2020 * 12))->key,
                        "alpha@2024");
    assert_string_equal(plan_framework_get(plan_framework_match("Alpha (2023)", 0))->key,
                        "alpha@2022");
    /* before its first release, a stack's earliest */
    assert_string_equal(plan_framework_get(plan_framework_match("Alpha", 2001 * 12))->key,
                        "alpha@2020");
    assert_int_equal(plan_framework_match("Gamma", 0), -1);
    /* a text naming both stacks one joins is that one, in either order;
     * "joins" is identity, never inherited */
    assert_string_equal(b->joins, "delta");
    assert_string_equal(by_key(v, n, "delta")->joins, "");
    assert_string_equal(plan_framework_get(plan_framework_match("Alpha + Delta", 0))->key, "beta");
    assert_string_equal(plan_framework_get(plan_framework_match("Delta on AlphaTrain", 0))->key,
                        "beta");
    assert_string_equal(plan_framework_get(plan_framework_match("Delta", 0))->key, "delta");
    free(v);
}

/* The shipped profiles back for the other tests, whatever a test left. */
static int reload(void **state)
{
    (void)state;
    test_frameworks_load();
    return 0;
}

/* One bad file each: the code, and the words the message must carry. */
static void refused(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *msg1, *msg2;
    } cases[] = {
        {"{\"frameworks\": [", ST_EPARSE, "t.json:1:", "malformed JSON"},
        {"[]", ST_EINVAL, "expected a JSON object", NULL},
        {"{\"frameworks\": []}", ST_EINVAL, "missing or empty", NULL},
        {"{\"stacks\": []}", ST_EINVAL, "unknown key 'stacks'", "allowed: frameworks"},
        {"{\"frameworks\": [{\"label\": \"x\"}]}", ST_EINVAL, "frameworks[0]", "'name'"},
        {"{\"frameworks\": [{\"name\": \"x\", \"label\": \"x\", \"default\": true}]}", ST_EINVAL,
         "framework 'x': missing required field 'family'", NULL},
        {"{\"frameworks\": [{\"name\": \"x\", \"inherits\": \"y\", \"label\": \"x\"}]}",
         ST_EINVAL, "'inherits' names no other framework", NULL},
        {"{\"frameworks\": [{\"name\": \"x\", \"inherits\": \"y\", \"label\": \"x\"},"
         "{\"name\": \"y\", \"inherits\": \"x\", \"label\": \"y\"}]}",
         ST_EINVAL, "'inherits' goes round in a circle", NULL},
        {"{\"frameworks\": [{\"name\": \"Bad Key\", \"label\": \"x\"}]}", ST_EINVAL,
         "name 'Bad Key'", "STACK@RELEASE"},
        {"{\"frameworks\": [{\"name\": \"x\", \"label\": \"x\"}, {\"name\": \"X\", \"label\": \"y\"}]}",
         ST_EINVAL, "'X' is listed twice", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        plan_framework *v = (plan_framework *)1;
        int n = -1, def = -1;
        st_err err = {0};
        int rc = parse(cases[k].text, &v, &n, &def, &err);
        if (rc != cases[k].code || !strstr(err.msg, cases[k].msg1) ||
            (cases[k].msg2 && !strstr(err.msg, cases[k].msg2)))
            fail_msg("case %zu: %d '%s'", k, rc, err.msg);
        assert_null(v);
        assert_int_equal(n, 0);
    }
    /* field errors inside a good file: its first entry with one value
     * changed, each named with what is allowed */
    static const struct {
        const char *from, *to, *msg1, *msg2;
    } edits[] = {
        {"\"attention\": \"unfused\"", "\"attention\": \"flash4\"",
         "framework 'alpha@2020': field 'attention' is 'flash4'", "unfused, flash1, flash2, flash3, cudnn"},
        {"\"schedules\": [\"interleaved\"]", "\"schedules\": [\"1f2b\"]",
         "field 'schedules' is '1f2b'", "simple, interleaved, virtual, zb-h1"},
        {"\"host_op_s\": 15e-6", "\"host_op_s\": -1", "field 'host_op_s' is negative", ">= 0"},
        {"\"dp_overlap\": true", "\"dp_overlap\": 1", "field 'dp_overlap' is a number",
         "true or false"},
        {"\"placement\": \"PDT\"", "\"placement\": \"PPT\"", "field 'placement' is 'PPT'",
         "an order of D, P and T"},
        {"\"released\": \"2020-03\"", "\"released\": \"March 2020\"", "field 'released'", "YYYY-MM"},
        {"\"recompute_default\": \"full\"", "\"recompute_default\": \"selective\"",
         "'recompute_default' selective is not in 'recomputes'", NULL},
        {"\"tp_overlap\": \"none\"", "\"tp_ovrlap\": \"none\"", "unknown field 'tp_ovrlap'",
         "(nearest: 'tp_overlap')"},
        {"\"dp_bucket_bytes\": \"25MB\"", "\"dp_bucket_bytes\": \"all of it\"",
         "field 'dp_bucket_bytes'", "\"whole buffer\" or \"layer\""},
        {"\"default\": true", "\"default\": false", "no framework has \"default\": true", NULL},
        {"\"joins\": \"delta\"", "\"joins\": \"alpha\"", "framework 'beta': 'joins' is 'alpha'",
         "other than its own and the one it inherits from"},
        {"\"joins\": \"delta\"", "\"joins\": \"omega\"", "'joins' is 'omega'",
         "allowed: a stack of the file"},
        {"\"joins\": \"delta\"", "\"joins\": 7", "field 'joins' is a number",
         "expected a string"},
        {"\"aliases\": [\"alpha-old\"]", "\"aliases\": [\"beta\"]",
         "'beta' is a framework and an alias of 'alpha@2020'", NULL},
        /* a field given twice; the last of the fields once (the 65th: one
         * past what a 64-bit mask of them held, which had read the first
         * field given as the last given again) */
        {"\"dp_overlap\": true", "\"dp_overlap\": true, \"dp_overlap\": false",
         "field 'dp_overlap' given twice", NULL},
        {"\"dp_overlap\": true", "\"dp_overlap\": true, \"schedules_unknown\": [], "
         "\"schedules_unknown\": []", "field 'schedules_unknown' given twice", NULL},
    };
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        const char *at = strstr(good, edits[k].from);
        assert_non_null(at);
        size_t pre = (size_t)(at - good), fl = strlen(edits[k].from);
        char *t = malloc(strlen(good) + strlen(edits[k].to) + 1);
        assert_non_null(t);
        memcpy(t, good, pre);
        strcpy(t + pre, edits[k].to);
        strcat(t, at + fl);
        plan_framework *v = NULL;
        int n = 0, def = 0;
        st_err err = {0};
        int rc = parse(t, &v, &n, &def, &err);
        if (rc != ST_EINVAL || !strstr(err.msg, edits[k].msg1) ||
            (edits[k].msg2 && !strstr(err.msg, edits[k].msg2)))
            fail_msg("edit %zu: %d '%s'", k, rc, err.msg);
        assert_null(v);
        free(t);
    }
    /* a file that does not read installs nothing: the profiles in force stay */
    int before = plan_nframeworks;
    st_err err = {0};
    assert_int_not_equal(data_frameworks_load(SMD_TEST_FIXTURES "/catalog_user.json", &err), ST_OK);
    assert_int_equal(plan_nframeworks, before);
    st_err err2 = {0};
    assert_int_not_equal(data_frameworks_load("/nonexistent/frameworks.json", &err2), ST_OK);
    assert_non_null(strstr(err2.msg, "/nonexistent/frameworks.json"));
    assert_int_equal(plan_nframeworks, before);
}

/* Every value the shipped file gives has its citation beside it, and
 * describe shows each with the entry it is written in. */
static void shipped_values_cited(void **state)
{
    (void)state;
    char what[128];
    st_err err = {0};
    int missing = data_frameworks_uncited(SMD_TEST_DATA_DIR "/frameworks.json", what, sizeof what,
                                          &err);
    if (missing != 0)
        fail_msg("%d values without a citation beside them, the first %s", missing, what);
    data_fw_line *l = NULL;
    int n = 0;
    assert_int_equal(data_frameworks_describe(SMD_TEST_DATA_DIR "/frameworks.json",
                                              "megatron@2022", &l, &n, &err),
                     ST_OK);
    int seen_att = 0, seen_sp = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(l[i].field, "attention")) {
            seen_att = 1;
            assert_string_equal(l[i].from, "megatron@2020");
            assert_string_equal(l[i].value, "\"unfused\"");
            assert_non_null(strstr(l[i].cite, "scale-mask-softmax"));
        }
        if (!strcmp(l[i].field, "sequence_parallel")) {
            seen_sp = 1;
            assert_string_equal(l[i].from, "megatron@2022");
            assert_non_null(strstr(l[i].cite, "Korthikanti"));
        }
    }
    assert_true(seen_att && seen_sp);
    free(l);
    assert_int_equal(data_frameworks_describe(NULL, "nosuch@1", &l, &n, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "framework 'nosuch@1': not in"));
}

/* What the releases of the shipped file say about the stacks they are: the
 * 2020-2022 Megatron-LM had no fused attention and hid no TP collective
 * fully, Megatron-Core 2024 does both; every stack's bare name is its latest
 * release. */
static void shipped_releases(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        plan_attn attention;
        int tp_overlap, sequence_parallel, optimizer_sharding;
    } cases[] = {
        {"megatron@2020", PLAN_ATTN_UNFUSED, 0, 0, 0},
        {"megatron@2021", PLAN_ATTN_UNFUSED, 0, 0, 0},
        {"megatron@2022", PLAN_ATTN_UNFUSED, 1, 1, 1},
        {"megatron@2023", PLAN_ATTN_FLASH2, 1, 1, 1},
        {"megatron@2024", PLAN_ATTN_CUDNN, 2, 1, 1},
        {"nemo@2023", PLAN_ATTN_UNFUSED, 1, 1, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int i = -1;
        st_err err = {0};
        assert_int_equal(plan_framework_find(cases[k].key, &i, &err), ST_OK);
        const plan_framework *f = plan_framework_get(i);
        assert_int_equal(f->attention, cases[k].attention);
        assert_int_equal(f->tp_overlap, cases[k].tp_overlap);
        assert_int_equal(f->sequence_parallel, cases[k].sequence_parallel);
        assert_int_equal((f->shardings >> PLAN_SHARD_OPTIMIZER) & 1, cases[k].optimizer_sharding);
    }
    int i = -1;
    st_err err = {0};
    static const char *const latest[][2] = {
        {"megatron", "megatron@2025"}, {"nemo", "nemo@2025"}, {"fsdp", "fsdp@2024"},
        {"smp", "smp@v1"},             {"megatron-2021", "megatron@2021"},
    };
    for (size_t k = 0; k < sizeof latest / sizeof latest[0]; k++) {
        assert_int_equal(plan_framework_find(latest[k][0], &i, &err), ST_OK);
        assert_string_equal(plan_framework_get(i)->key, latest[k][1]);
    }
    assert_string_equal(plan_framework_get(PLAN_FW_DEFAULT)->key, "smp@v1");
    /* SMP v1 and v2 are two stacks of one product: its name with a
     * version 2 or later (a noun between them) is v2's */
    static const char *const smp[][2] = {
        {"SageMaker model parallel library v2", "smp2"},
        {"SMP 2.4.0", "smp2"},
        {"SageMaker model parallelism library v2.6", "smp2"},
        {"SMP v1.15", "smp@v1"},
        {"SageMaker model parallel", "smp@v1"},
    };
    for (size_t k = 0; k < sizeof smp / sizeof smp[0]; k++)
        assert_string_equal(plan_framework_get(plan_framework_match(smp[k][0], 0))->key, smp[k][1]);
}

/* data/model_families.json: the shipped file reads and every trait cites
 * its source; a bad file is refused in one line naming the trait and the
 * key, and installs nothing. */
static void model_families(void **state)
{
    (void)state;
    st_err err = {0};
    assert_int_equal(data_families_load(NULL, &err), ST_OK);
    int n = 0;
    const plan_model_trait *t = plan_model_traits(&n);
    assert_true(n >= 5);
    int structures[PLAN_STRUCT__COUNT] = {0};
    for (int i = 0; i < n; i++) {
        assert_true(strlen(t[i].source) > 10);
        if (t[i].structure >= 0)
            structures[t[i].structure]++;
    }
    /* the kinds of network the planner does not model, each by its names */
    for (int k = 0; k < PLAN_STRUCT__COUNT; k++)
        assert_true(structures[k] >= 1);
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"{\"traits\": [{\"words\": [\"x\"], \"arch\": \"gpt\"}]}", "trait 1 ('x'): \"source\""},
        {"{\"traits\": [{\"words\": [\"x\"], \"arch\": \"bert\", \"source\": \"s\"}]}",
         "\"arch\" must be one of \"gpt\", \"llama\""},
        {"{\"traits\": [{\"words\": [\"x\"], \"mlp\": \"plain\", \"arhc\": 1, \"source\": \"s\"}]}",
         "unknown key \"arhc\""},
        {"{\"traits\": [{\"words\": [], \"mlp\": \"plain\", \"source\": \"s\"}]}", "\"words\""},
        {"{\"traits\": [{\"words\": [\"x\"], \"source\": \"s\"}]}", "says nothing"},
        {"{\"traits\": [{\"words\": [\"x\"], \"tied\": \"yes\", \"source\": \"s\"}]}",
         "\"tied\" must be true or false"},
        {"{\"traits\": [{\"words\": [\"x\"], \"vocab\": 5.5, \"source\": \"s\"}]}",
         "\"vocab\" must be a whole number of tokens"},
        {"{\"traits\": [{\"words\": [\"x\"], \"vocab\": 0, \"source\": \"s\"}]}",
         "\"vocab\" must be a whole number of tokens"},
        {"{\"traits\": [{\"words\": [\"x\"], \"kv_heads\": 0, \"source\": \"s\"}]}",
         "\"kv_heads\" must be a whole number of heads"},
        {"{\"traits\": [{\"words\": [\"x\"], \"structure\": \"moe\", \"source\": \"s\"}]}",
         "\"structure\" must be one of \"decoder\", \"mixture-of-experts\""},
        {"[1, 2", "malformed JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st_err e = {0};
        assert_int_not_equal(data_families_parse(bad[i].text, strlen(bad[i].text), "f.json", &e),
                             ST_OK);
        if (!strstr(e.msg, bad[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, e.msg, bad[i].says);
        int m = 0;
        plan_model_traits(&m);
        assert_int_equal(m, n); /* nothing installed */
    }
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(inheritance, reload),
        cmocka_unit_test(refused),
        cmocka_unit_test(shipped_values_cited),
        cmocka_unit_test(shipped_releases),
        cmocka_unit_test(model_families),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
