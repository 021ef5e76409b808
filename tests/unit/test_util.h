/*
 * test_util.h: what every unit test includes: cmocka (with the headers it
 * needs first, as cmocka 1.1 requires) and a relative-tolerance assert.
 */
#ifndef SMD_TEST_UTIL_H
#define SMD_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* |a - b| <= rel * max(|a|, |b|), or both exactly zero. */
#define assert_rel(a, b, rel)                                                                  \
    do {                                                                                       \
        double a_ = (double)(a), b_ = (double)(b);                                             \
        double m_ = fmax(fabs(a_), fabs(b_));                                                  \
        if (!(fabs(a_ - b_) <= (rel) * m_)) {                                                  \
            print_error("%s = %.9g, %s = %.9g: relative difference %.3g > %.3g\n", #a, a_, #b, \
                        b_, m_ > 0 ? fabs(a_ - b_) / m_ : 0.0, (double)(rel));                 \
            _fail(__FILE__, __LINE__);                                                         \
        }                                                                                      \
    } while (0)

/* p, which a lookup of the what called name gave: the test fails on NULL. */
static inline const void *found_or_fail(const void *p, const char *what, const char *name)
{
    if (!p)
        fail_msg("no %s '%s'", what, name);
    return p;
}

/* A test program's main: `before;` (a statement: test_frameworks_load(),
 * or (void)0), then the tests listed (cmocka_unit_test(...), ...). */
#define TEST_MAIN(before, ...)                                                                 \
    int main(void)                                                                             \
    {                                                                                          \
        before;                                                                                \
        const struct CMUnitTest tests_[] = {__VA_ARGS__};                                      \
        return cmocka_run_group_tests(tests_, NULL, NULL);                                     \
    }

/* A NULL-terminated list of strings, for assert_text. */
#define TEXTS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* text is there, holds every string of has and none of lacks (TEXTS lists;
 * either may be NULL); a failure names the string. */
static inline void assert_text(const char *text, const char *const *has,
                               const char *const *lacks)
{
    assert_non_null(text);
    for (; has && *has; has++)
        if (!strstr(text, *has))
            fail_msg("not found: \"%s\"", *has);
    for (; lacks && *lacks; lacks++)
        if (strstr(text, *lacks))
            fail_msg("found: \"%s\"", *lacks);
}

/* The stack profiles the planner reads (data/frameworks.json), installed
 * before any test runs, as the smdplan program installs them at start; a
 * test binary that plans calls it first in main. */
#include <stdlib.h>

#include "data/data.h"

static inline void test_frameworks_load(void)
{
    st_err e = {0};
    if (data_frameworks_load(SMD_TEST_DATA_DIR "/frameworks.json", &e) != ST_OK) {
        fprintf(stderr, "cannot install the stack profiles: %s\n", e.msg);
        exit(1);
    }
    if (data_families_load(SMD_TEST_DATA_DIR "/model_families.json", &e) != ST_OK) {
        fprintf(stderr, "cannot install the model traits: %s\n", e.msg);
        exit(1);
    }
}

/* The preset called key in ps, NULL if none. */
static inline const plan_preset *test_preset_find(const plan_presets *ps, const char *key)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->v[i].key, key) == 0)
            return &ps->v[i];
    return NULL;
}

/* c: nodes nodes of inst, whose GPU is gpu (inst->gpu names it), both
 * networks on one flat curve (efficiency 1 at every size), with the GPU's
 * own efficiencies (plan_cluster_use without a catalog). */
static inline void test_cluster_flat(plan_cluster *c, plan_gpu *gpu, plan_instance *inst,
                                     int nodes)
{
    static plan_curve flat = {.name = "flat", .n = 1, .log2_bytes = {20}, .eff = {1.0}};
    snprintf(inst->gpu, sizeof inst->gpu, "%s", gpu->name);
    c->inst = inst;
    c->gpu = gpu;
    c->intra_curve = c->net_curve = &flat;
    c->nodes = nodes;
    c->gpus = nodes * inst->gpus_per_node;
    plan_cluster_use(NULL, NULL, c);
}

#endif
