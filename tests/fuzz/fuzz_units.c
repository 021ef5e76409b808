/*
 * fuzz_units.c: libFuzzer target over every parser in common/units.h.
 *
 * Each input is copied into a NUL-terminated buffer (the parsers take C
 * strings) and given to the count, byte, rate and integer parsers. Besides
 * what ASan/UBSan catch, it checks the contract of units.h and st.h:
 *   - success: a finite value in [0, 1e30]; an integer within [min, max]; an
 *     untouched error context;
 *   - failure: EINVAL or ERANGE, the same code in the context, a non-empty
 *     one-line message shorter than ST_MSG_MAX, the output left alone;
 *   - agreement: an integer that parses also parses as a count, to the same
 *     value; a parsed count formats and parses back to nearly itself.
 * The formatters run on every parsed value, also into tiny buffers.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/st.h"
#include "common/units.h"

#define FUZZ_NAME "fuzz_units"
#include "fuzz_util.h"

/* The largest value units.c accepts (UNITS_MAX_VALUE there). */
#define FUZZ_UNITS_MAX 1e30

static void check_err(int rc, const st_err *err, const char *text)
{
    if (rc == ST_OK) {
        CHECK_INPUT(err->code == ST_OK, text);
        CHECK_INPUT(err->msg[0] == '\0', text);
        return;
    }
    CHECK_INPUT(rc == ST_EINVAL || rc == ST_ERANGE, text);
    CHECK_INPUT(err->code == rc, text);
    size_t n = strnlen(err->msg, ST_MSG_MAX);
    CHECK_INPUT(n > 0 && n < ST_MSG_MAX, text);
    CHECK_INPUT(strchr(err->msg, '\n') == NULL && strchr(err->msg, '\r') == NULL, text);
    CHECK_INPUT(err->file != NULL && err->line > 0, text);
}

static void format_all(double v)
{
    char buf[64], tiny[3];
    units_fmt_count(v, buf, sizeof buf);
    units_fmt_count(v, tiny, sizeof tiny);
    units_fmt_bytes(v, buf, sizeof buf);
    units_fmt_bytes(v, tiny, sizeof tiny);
    units_fmt_seconds(v, buf, sizeof buf);
    units_fmt_seconds(v, tiny, sizeof tiny);
    units_fmt_seconds(v * 1e-9, buf, sizeof buf);
}

typedef int (*parse_fn)(const char *, const char *, double *, st_err *);

static int parse_double(parse_fn fn, const char *text, double *out)
{
    st_err err = {0};
    double v = -1.0;
    int rc = fn(text, "--fuzz", &v, &err);
    check_err(rc, &err, text);
    if (rc == ST_OK) {
        CHECK_INPUT(isfinite(v) && v >= 0.0 && v <= FUZZ_UNITS_MAX, text);
        format_all(v);
    } else {
        CHECK_INPUT(v == -1.0, text);
    }
    *out = v;
    return rc;
}

static void parse_ints(const char *text, int count_rc, double count)
{
    static const struct {
        int64_t min, max;
    } ranges[] = {
        {1, 1024}, {0, INT64_MAX}, {1, INT64_MAX}, {-10, 10}, {INT64_MIN, INT64_MAX},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        st_err err = {0};
        int64_t n = -77;
        int rc = units_parse_int(text, "--fuzz", ranges[i].min, ranges[i].max, &n, &err);
        check_err(rc, &err, text);
        if (rc == ST_OK) {
            CHECK_INPUT(n >= ranges[i].min && n <= ranges[i].max, text);
            /* an integer is a count that is whole */
            CHECK_INPUT(count_rc == ST_OK, text);
            CHECK_INPUT(fabs((double)n - count) <= 1e-12 * fabs(count) + 0.5, text);
        } else {
            CHECK_INPUT(n == -77, text);
        }
    }
}

static void check_text(char *text, size_t size)
{
    (void)size;
    double count, bytes, rate;
    int count_rc = parse_double(units_parse_count, text, &count);
    parse_double(units_parse_bytes, text, &bytes);
    parse_double(units_parse_rate, text, &rate);
    parse_ints(text, count_rc, count);

    /* What the count formatter prints, the count parser reads back. */
    if (count_rc == ST_OK) {
        char buf[64];
        double back = -1.0;
        st_err err = {0};
        units_fmt_count(count, buf, sizeof buf);
        CHECK_INPUT(units_parse_count(buf, "--fuzz", &back, &err) == ST_OK, buf);
        CHECK_INPUT(fabs(back - count) <= fmax(0.5, 5.01e-3 * count), buf);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_CSTR, check_text);
}
