/*
 * fuzz_hfconfig.c: libFuzzer target for the Hugging Face config.json reader.
 *
 * Feeds arbitrary bytes (not NUL-terminated) to data_hfconfig_parse. The
 * reader must return a status without crashing, reading out of bounds or
 * leaking (run under ASan/UBSan); on success the model it returns must be
 * finished: positive sizes within the planner's limits (a head size of its
 * own, or heads dividing hidden; a window and its pattern not negative) and
 * an exact count that plan_model_finish reproduces. tests/fixtures/hf_*.json make a seed
 * corpus.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "data/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plan_model m;
    st_err err = {0};
    int rc = data_hfconfig_parse((const char *)data, size, "fuzz.json", &m, &err);
    if (rc == ST_OK) {
        plan_model again = m;
        st_err err2 = {0};
        /* A success is a finished, valid shape: anything else is a bug. */
        if (err.code != ST_OK || m.layers <= 0 || m.layers > PLAN_MAX_LAYERS ||
            (m.head_dim == 0 && m.hidden % m.heads != 0) || m.head_dim < 0 ||
            plan_model_attn_width(&m) > PLAN_MAX_ATTN_WIDTH || m.heads % m.kv_heads != 0 ||
            m.sliding_window < 0 || m.sliding_window_pattern < 0 ||
            plan_model_finish(&again, &err2) != ST_OK || again.params != m.params)
            abort();
    } else if (err.code != rc || err.msg[0] == '\0') {
        abort(); /* every failure carries its code and a message */
    }
    return 0;
}
