/*
 * fuzz_catalog.c: libFuzzer target over the catalog reader
 * (data_catalog_parse) and the planner's catalog linking behind it.
 *
 * Each input is a catalog file's text (not NUL-terminated: the reader must
 * respect the length). Besides what ASan/UBSan catch, it checks the contract
 * of data.h and st.h:
 *   - failure: EPARSE, EINVAL, ENOMEM or ERANGE in both the return and the
 *     context, a non-empty one-line message, and an empty catalog;
 *   - success: a linked catalog with at least one instance type, every index
 *     in range, every instance findable by its own name and usable as a
 *     cluster, and curves that evaluate into (0, 1].
 * plan_catalog_free then releases everything (LeakSanitizer checks).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "planner/plan.h"

#define FUZZ_NAME "fuzz_catalog"
#include "fuzz_util.h"

static void check_failure(int rc, const st_err *err, const plan_catalog *cat)
{
    CHECK(rc == ST_EPARSE || rc == ST_EINVAL || rc == ST_ENOMEM || rc == ST_ERANGE);
    fuzz_check_err_msg(rc, err, 1);
    CHECK(cat->gpus == NULL && cat->instances == NULL && cat->curves == NULL);
    CHECK(cat->ngpus == 0 && cat->ninstances == 0 && cat->ncurves == 0);
}

static void check_success(const plan_catalog *cat)
{
    CHECK(cat->ninstances > 0);
    for (int i = 0; i < cat->ninstances; i++) {
        const plan_instance *in = &cat->instances[i];
        CHECK(in->gpu_index >= 0 && in->gpu_index < cat->ngpus);
        CHECK(in->intra_curve_index >= 0 && in->intra_curve_index < cat->ncurves);
        CHECK(in->net_curve_index >= 0 && in->net_curve_index < cat->ncurves);
        CHECK(plan_catalog_find(cat, in->name) == in);
        plan_cluster c;
        st_err err = {0};
        CHECK(plan_cluster_make(cat, in, 3, &c, &err) == ST_OK);
        CHECK(c.gpus == 3 * in->gpus_per_node);
    }
    for (int i = 0; i < cat->ncurves; i++) {
        for (double b = 1.0; b < 1e13; b *= 7.3) {
            double e = plan_curve_eval(&cat->curves[i], b);
            CHECK(e > 0.0 && e <= 1.0);
        }
    }
    const char *near[4];
    CHECK(plan_catalog_suggest(cat, "p4d", near, 4) == (cat->ninstances < 4 ? cat->ninstances : 4));
}

static void check_text(char *text, size_t size)
{
    plan_catalog cat;
    st_err err = {0};
    int rc = data_catalog_parse(text, size, "fuzz.json", &cat, &err);
    if (rc == ST_OK)
        check_success(&cat);
    else
        check_failure(rc, &err, &cat);
    plan_catalog_free(&cat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_EXACT, check_text);
}
