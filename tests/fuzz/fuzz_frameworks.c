/*
 * fuzz_frameworks.c: libFuzzer target over the stack profiles' reader
 * (data_frameworks_parse: JSON, inheritance, every field's value).
 *
 * Each input is a frameworks file's text (not NUL-terminated: the reader
 * must respect the length). Besides what ASan/UBSan catch, it checks the
 * contract of data.h:
 *   - failure: EPARSE, EINVAL or ENOMEM in both the return and the context,
 *     a non-empty one-line message, and nothing handed back;
 *   - success: at least one profile, a default among them, unique keys, each
 *     key's stack its part before '@', every inherited profile named by one
 *     that exists, and a set of profiles the planner installs and finds
 *     again by key.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "data/data.h"
#include "planner/plan_framework.h"

#define FUZZ_NAME "fuzz_frameworks"
#include "fuzz_util.h"

static void check_text(char *text, size_t size)
{
    plan_framework *v = NULL;
    int n = 0, def = -1;
    st_err err = {0};
    int rc = data_frameworks_parse(text, size, "fuzz.json", &v, &n, &def, &err);
    if (rc != ST_OK) {
        CHECK(rc == ST_EPARSE || rc == ST_EINVAL || rc == ST_ENOMEM);
        fuzz_check_err_msg(rc, &err, 1);
        CHECK(v == NULL && n == 0);
    } else {
        CHECK(v && n >= 1 && n <= PLAN_FW_MAX && def >= 0 && def < n);
        for (int i = 0; i < n; i++) {
            size_t k = strnlen(v[i].key, PLAN_FW_KEY_MAX);
            CHECK(k > 0 && k < PLAN_FW_KEY_MAX);
            CHECK(strncmp(v[i].key, v[i].stack, strlen(v[i].stack)) == 0);
            CHECK(v[i].schedules != 0 && v[i].recomputes != 0);
            CHECK((unsigned)v[i].attention < PLAN_ATTN__COUNT);
            CHECK(v[i].flash_attention == (v[i].attention != PLAN_ATTN_UNFUSED));
            int parent = !v[i].inherits[0];
            for (int j = 0; j < n; j++) {
                CHECK(i == j || strcasecmp(v[i].key, v[j].key) != 0);
                parent |= strcmp(v[i].inherits, v[j].key) == 0;
            }
            CHECK(parent);
        }
        CHECK(plan_frameworks_set(v, n, def, &err) == ST_OK);
        CHECK(plan_nframeworks == n);
        for (int i = 0; i < n; i++) {
            int idx = -1;
            CHECK(plan_framework_find(plan_framework_get(i)->key, &idx, &err) == ST_OK);
            CHECK(idx == i);
        }
    }
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_EXACT, check_text);
}
