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

#define FUZZ_NAME "fuzz_exec_config"
#include "fuzz_util.h"

static void check_failure(int rc, const st_err *err)
{
    CHECK(rc == ST_EPARSE || rc == ST_EINVAL);
    fuzz_check_err_msg(rc, err, 1);
}

static void check_text(char *text, size_t size)
{
    static exec_config cfg, back;
    (void)size;
    st_err err = {0};
    int rc = exec_config_parse(text, &cfg, &err);
    if (rc != ST_OK) {
        check_failure(rc, &err);
        return;
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
        return;
    st_err err2 = {0};
    rc = exec_config_parse(a, &back, &err2);
    fuzz_check_round_trip("config", a, rc, &err2, rc == ST_OK ? exec_config_json(&back) : NULL);

    /* the checks against the job's rank count: a status either way */
    int64_t ranks = (int64_t)l->tp * l->pp * l->dp;
    st_err err3 = {0};
    rc = exec_config_check(&cfg, ranks <= INT32_MAX ? (int)ranks : 1, &err3);
    if (rc != ST_OK)
        check_failure(rc, &err3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_CSTR, check_text);
}
