/*
 * fuzz_exec_config.c: libFuzzer target for the executor's CONFIG.json
 * reader (exec_config_parse), which every rank runs on the file
 * `smdplan exec --import` also reads from a run directory.
 *
 * Each input is copied into a NUL-terminated buffer (the reader takes a C
 * string). Besides what ASan/UBSan catch, it checks the contract of exec.h:
 *   - failure: ST_EPARSE or ST_EINVAL, the same code in the error context,
 *     a non-empty one-line message;
 *   - success: the model is finished and within the planner's limits (a
 *     head size of its own, or heads dividing hidden), the
 *     layout's degrees are at least 1, and the config written back
 *     (exec_config_json) reads again to the same text; the checks against
 *     a job's rank count (exec_config_check) return a status.
 * tests/fuzz/corpus/fuzz_exec_config/ holds the contract's example and
 * variants of it as seeds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "fuzz_exec_config: %s:%d: check failed: %s\n", __FILE__,        \
                    __LINE__, #cond);                                                       \
            abort();                                                                        \
        }                                                                                   \
    } while (0)

static void check_failure(int rc, const st_err *err)
{
    CHECK(rc == ST_EPARSE || rc == ST_EINVAL);
    CHECK(err->code == rc);
    size_t n = strnlen(err->msg, ST_MSG_MAX);
    CHECK(n > 0 && n < ST_MSG_MAX);
    CHECK(strchr(err->msg, '\n') == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static exec_config cfg, back;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    st_err err = {0};
    int rc = exec_config_parse(text, &cfg, &err);
    free(text);
    if (rc != ST_OK) {
        check_failure(rc, &err);
        return 0;
    }
    CHECK(err.code == ST_OK);
    const plan_model *m = &cfg.model;
    const plan_layout *l = &cfg.layout;
    CHECK(m->layers >= 1 && m->layers <= PLAN_MAX_LAYERS);
    /* heads divide hidden unless a head size of its own is given (which
     * exec_config_check then refuses: plan_model, exec__layout_check) */
    CHECK(m->hidden >= 1 && m->heads >= 1 && (m->head_dim > 0 || m->hidden % m->heads == 0));
    CHECK(m->head_dim >= 0 && plan_model_attn_width(m) <= PLAN_MAX_ATTN_WIDTH);
    CHECK(m->sliding_window >= 0 && m->sliding_window_pattern >= 0);
    CHECK(m->params > 0);
    CHECK(l->tp >= 1 && l->pp >= 1 && l->dp >= 1 && l->micro_batch >= 1);
    CHECK(l->microbatches >= 1 && l->virtual_stages >= 1);
    CHECK(cfg.train.steps >= 1 && cfg.threads_per_rank >= 1);

    /* what is written reads back to the same text */
    char *a = exec_config_json(&cfg);
    if (!a)
        return 0;
    st_err err2 = {0};
    rc = exec_config_parse(a, &back, &err2);
    if (rc != ST_OK) {
        fprintf(stderr, "fuzz_exec_config: the config written does not read back: %s\n%s\n",
                err2.msg, a);
        abort();
    }
    char *b = exec_config_json(&back);
    if (b && strcmp(a, b) != 0) {
        fprintf(stderr, "fuzz_exec_config: written twice, two texts:\n%s\n%s\n", a, b);
        abort();
    }
    free(a);
    free(b);

    /* the checks against the job's rank count: a status either way */
    int64_t ranks = (int64_t)l->tp * l->pp * l->dp;
    st_err err3 = {0};
    rc = exec_config_check(&cfg, ranks <= INT32_MAX ? (int)ranks : 1, &err3);
    if (rc != ST_OK)
        check_failure(rc, &err3);
    return 0;
}
