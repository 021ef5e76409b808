/*
 * test_rpt_diff_text.c: the text of smdplan diff (reports/rpt_diff_text.c)
 * for two layouts of a 30B model on 16 x p4d: the model and cluster once
 * when the same ("A vs B" when not), each layout's words with its stack, a
 * row per memory term in GiB (2^30 bytes) and per time term in seconds
 * with B - A, both bands, the cost row only when both sides are priced, a
 * recorded side named by its record, and the paragraph and bands' bases.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data.h"
#include "planner/plan_diff_plan.h"
#include "reports/rpt_diff.h"
#include "reports/rpt_table.h"

#define CATALOG SMD_TEST_DATA_DIR "/catalog.json"
#define PRESETS SMD_TEST_DATA_DIR "/models.json"

static plan_diff_plan A, B;

static int setup(void **state)
{
    (void)state;
    plan_catalog cat = {0};
    plan_presets presets = {0};
    plan_model m;
    plan_cluster c;
    st_err err = {0};
    assert_int_equal(data_catalog_load(CATALOG, &cat, &err), ST_OK);
    assert_int_equal(data_presets_load(PRESETS, &presets, &err), ST_OK);
    assert_int_equal(plan_model_resolve(&presets, 30e9, PLAN_ARCH_GPT, NULL, &m, &err), ST_OK);
    assert_int_equal(plan_cluster_parse(&cat, "16xp4d", &c, &err), ST_OK);
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.tp = 8;
    cfg.pp = 1;
    assert_int_equal(plan_diff_plan_search(&m, &c, &cfg, "a", &A, &err), ST_OK);
    cfg.tp = 2;
    cfg.pp = 8;
    assert_int_equal(plan_diff_plan_search(&m, &c, &cfg, "b", &B, &err), ST_OK);
    snprintf(A.name, sizeof A.name, "A");
    snprintf(B.name, sizeof B.name, "B");
    A.band_pct = 9;
    B.band_pct = 12;
    snprintf(A.band_basis, sizeof A.band_basis, "basis of a");
    snprintf(B.band_basis, sizeof B.band_basis, "basis of b");
    plan_catalog_free(&cat);
    plan_presets_free(&presets);
    return 0;
}

/* The text of a beside b (malloc'd). */
static char *buf;
static size_t len;

static char *text_of(const plan_diff_plan *a, const plan_diff_plan *b)
{
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rpt_diff_text(f, a, b);
    fclose(f);
    return buf;
}

static void test_sides(void **state)
{
    (void)state;
    char *text = text_of(&A, &B);
    char model[128], mem[128], step[128];
    snprintf(model, sizeof model, "model:   %s\n", A.model);
    plan_diff_term v[PLAN_DIFF_MEM_TERMS];
    plan_diff_mem_terms(&A.est.mem, &B.est.mem, v);
    snprintf(mem, sizeof mem, "%.2f", v[0].a / 1073741824.0);
    snprintf(step, sizeof step, "%+.3f", B.est.time.step_s - A.est.time.step_s);
    assert_text(text, TEXTS(model, "cluster: 16 x p4d.24xlarge\n", "A:  tp 8, pp 1, dp 16",
                            "B:  tp 2, pp 8, dp 8", "; smp@v1 bf16\n", "memory per GPU, GiB",
                            v[0].name, mem, "time per step, s", "  step", step, "B - A",
                            "\u00b19 %", "\u00b112 %", "tokens/s", "MFU", "$ per 1M tokens",
                            "(error bands: A basis of a; B basis of b)"),
                TEXTS("(record"));
    /* one model, one cluster: no "vs" in the head (the paragraph has its knobs') */
    char head[800];
    snprintf(head, sizeof head, "%.*s", (int)(strstr(text, "memory per GPU") - text), text);
    assert_text(head, TEXTS("cluster: "), TEXTS(" vs "));
    free(text);
}

static void test_named(void **state)
{
    (void)state;
    plan_diff_plan a = A, b = B;
    snprintf(a.name, sizeof a.name, "12:1");
    snprintf(b.model, sizeof b.model, "other-model");
    b.est.cost_per_mtokens = 0; /* not priced */
    char *text = text_of(&a, &b);
    char model[160];
    snprintf(model, sizeof model, "model:   %s vs other-model\n", a.model);
    assert_text(text, TEXTS(model, "A (record 12:1):  tp 8", "\nB:  tp 2"),
                TEXTS("$ per 1M tokens", "B (record"));
    free(text);
}

TEST_MAIN((test_frameworks_load(), rpt_term_set_wide(1), setup(NULL)),
          cmocka_unit_test(test_sides),
          cmocka_unit_test(test_named))
