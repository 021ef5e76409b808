/*
 * fuzz_exec_result.c: libFuzzer target for the RESULT.json reader
 * (exec_result_parse), which `smdplan exec --import` runs on a file
 * another launcher left in a run directory.
 *
 * Each input is copied into a NUL-terminated buffer. Besides what ASan and
 * UBSan catch, it checks the reader's contract (exec.h, exec_config.c):
 *   - failure: ST_EPARSE or ST_EINVAL with the same code in the context and
 *     a non-empty one-line message; nothing left allocated;
 *   - success: the status is ok or failed, the counts match the arrays,
 *     every rank index is below the run's ranks, every time and byte count
 *     is finite and not negative; the result written back
 *     (exec_result_json) reads again to the same text.
 * tests/fuzz/corpus/fuzz_exec_result/ holds results of real runs as seeds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

#define FUZZ_NAME "fuzz_exec_result"
#include "fuzz_util.h"

static int phases_ok(const exec_phases *p)
{
    const double v[] = {p->compute_s, p->tp_comm_s, p->pp_wait_s, p->dp_comm_s, p->optimizer_s};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!(isfinite(v[i]) && v[i] >= 0))
            return 0;
    return 1;
}

static void check_text(char *text, size_t size)
{
    (void)size;
    exec_result r, back;
    st_err err = {0};
    int rc = exec_result_parse(text, &r, &err);
    if (rc != ST_OK) {
        CHECK(rc == ST_EPARSE || rc == ST_EINVAL);
        fuzz_check_err_msg(rc, &err, 1);
        CHECK(r.steps == NULL && r.rank_stats == NULL && r.nsteps == 0 && r.nranks == 0);
        return;
    }
    CHECK(!strcmp(r.status, "ok") || !strcmp(r.status, "failed"));
    CHECK(r.ranks >= 0 && r.failed_rank >= -1);
    CHECK(r.ranks == 0 || r.failed_rank < r.ranks);
    CHECK(r.nsteps >= 0 && (r.nsteps == 0) == (r.steps == NULL));
    CHECK(r.nranks >= 0 && r.nranks <= r.ranks && (r.nranks == 0) == (r.rank_stats == NULL));
    CHECK(isfinite(r.tokens_per_step) && r.tokens_per_step >= 0);
    for (int i = 0; i < r.nsteps; i++) {
        const exec_step_result *s = &r.steps[i];
        CHECK(s->step >= 1 && isfinite(s->time_s) && s->time_s >= 0 && isfinite(s->loss));
        CHECK(isfinite(s->grad_norm) && s->grad_norm >= 0 && phases_ok(&s->phases));
    }
    for (int i = 0; i < r.nranks; i++) {
        const exec_rank_stat *s = &r.rank_stats[i];
        CHECK(s->rank >= 0 && s->rank < r.ranks && s->tp_rank >= 0 && s->tp_rank < r.ranks);
        CHECK(s->pp_rank >= 0 && s->pp_rank < r.ranks && s->dp_rank >= 0 && s->dp_rank < r.ranks);
        CHECK(isfinite(s->peak_memory_bytes) && s->peak_memory_bytes >= 0);
        for (int c = 0; c < EXEC_MEM__COUNT; c++)
            CHECK(isfinite(s->peak_class_bytes[c]) && s->peak_class_bytes[c] >= 0);
        CHECK(phases_ok(&s->phases));
    }

    /* what is written reads back to the same text */
    char *a = exec_result_json(&r);
    exec_result_free(&r);
    if (!a)
        return;
    st_err err2 = {0};
    rc = exec_result_parse(a, &back, &err2);
    fuzz_check_round_trip("result", a, rc, &err2, rc == ST_OK ? exec_result_json(&back) : NULL);
    exec_result_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_CSTR, check_text);
}
