/*
 * test_common_st.c: status codes and the sticky error context (st.h).
 *
 * The error context is how every library reports a failure, so these pin its
 * contract: the first raise wins, a raise records file and line, messages are
 * one line and bounded, and each status maps to the documented exit code.
 */
#include "test_util.h"

#include "common/st.h"

static void names_for_every_code(void **state)
{
    for (int a = 0; a < ST__COUNT; a++) {
        const char *na = st_str(a);
        assert_non_null(na);
        assert_true(strlen(na) > 0);
        assert_string_not_equal(na, "unknown status");
        for (int b = a + 1; b < ST__COUNT; b++)
            assert_string_not_equal(na, st_str(b));
    }
    assert_string_equal(st_str(ST_OK), "ok");
    assert_string_equal(st_str(ST_EINVAL), "invalid argument");
    assert_string_equal(st_str(-1), "unknown status");
    assert_string_equal(st_str(ST__COUNT), "unknown status");
    assert_string_equal(st_str(1 << 30), "unknown status");
}

static void exit_codes(void **state)
{
    assert_int_equal(st_exit_code(ST_OK), 0);
    /* bad input: 2 */
    assert_int_equal(st_exit_code(ST_EINVAL), 2);
    assert_int_equal(st_exit_code(ST_ENOENT), 2);
    assert_int_equal(st_exit_code(ST_EPARSE), 2);
    assert_int_equal(st_exit_code(ST_ERANGE), 2);
    /* no feasible answer: 3 */
    assert_int_equal(st_exit_code(ST_EINFEASIBLE), 3);
    /* everything else: 1 */
    assert_int_equal(st_exit_code(ST_ENOMEM), 1);
    assert_int_equal(st_exit_code(ST_EIO), 1);
    assert_int_equal(st_exit_code(ST_EUNSUPPORTED), 1);
    assert_int_equal(st_exit_code(ST_EINTERNAL), 1);
    assert_int_equal(st_exit_code(-7), 1);
    assert_int_equal(st_exit_code(ST__COUNT), 1);
    /* Every error is a non-zero exit code. */
    for (int c = ST_OK + 1; c < ST__COUNT; c++)
        assert_int_not_equal(st_exit_code(c), 0);
}

static void raise_records_site(void **state)
{
    st_err err = {0};
    int line = __LINE__ + 1;
    int rc = ST_RAISE(&err, ST_ENOENT, "instance type '%s' not found", "p9x");
    assert_int_equal(rc, ST_ENOENT);
    assert_int_equal(err.code, ST_ENOENT);
    assert_string_equal(err.msg, "instance type 'p9x' not found");
    assert_int_equal(err.line, line);
    assert_non_null(err.file);
    assert_non_null(strstr(err.file, "test_common_st.c"));
}

/* The first error raised is kept; later raises still return their own code. */
static void first_error_is_sticky(void **state)
{
    st_err err = {0};
    assert_int_equal(ST_RAISE(&err, ST_EPARSE, "catalog.json: line %d: bad value", 12), ST_EPARSE);
    int first_line = err.line;
    assert_int_equal(ST_RAISE(&err, ST_ENOMEM, "out of memory"), ST_ENOMEM);
    assert_int_equal(ST_RAISE(&err, ST_EINVAL, "second"), ST_EINVAL);
    assert_int_equal(err.code, ST_EPARSE);
    assert_string_equal(err.msg, "catalog.json: line 12: bad value");
    assert_int_equal(err.line, first_line);

    /* Clearing makes room for a new first error. */
    st_err_clear(&err);
    assert_int_equal(err.code, ST_OK);
    assert_string_equal(err.msg, "");
    assert_null(err.file);
    assert_int_equal(err.line, 0);
    ST_RAISE(&err, ST_EIO, "write failed");
    assert_int_equal(err.code, ST_EIO);
    assert_string_equal(err.msg, "write failed");
}

/* Raising into no context is allowed (callers that only want the status). */
static void null_context(void **state)
{
    assert_int_equal(ST_RAISE(NULL, ST_EINTERNAL, "ignored %d", 1), ST_EINTERNAL);
    st_err_clear(NULL);
}

static void message_is_one_line(void **state)
{
    st_err err = {0};
    ST_RAISE(&err, ST_EINVAL, "first line\nsecond line\r\nthird");
    assert_null(strchr(err.msg, '\n'));
    assert_null(strchr(err.msg, '\r'));
    assert_string_equal(err.msg, "first line second line  third");

    /* A user string with a newline is folded too. */
    st_err_clear(&err);
    ST_RAISE(&err, ST_EINVAL, "--params '%s': bad", "30\nB");
    assert_string_equal(err.msg, "--params '30 B': bad");
}

/* Messages longer than ST_MSG_MAX are cut with a terminator, not overflowed. */
static void message_is_bounded(void **state)
{
    static char big[4 * ST_MSG_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    st_err err = {0};
    ST_RAISE(&err, ST_EINVAL, "value '%s'", big);
    assert_int_equal(strlen(err.msg), ST_MSG_MAX - 1);
    assert_memory_equal(err.msg, "value 'xxx", 10);
}

/* An empty format string still records the error. */
static void empty_message(void **state)
{
    st_err err = {0};
    const char *empty = "";
    ST_RAISE(&err, ST_EIO, "%s", empty);
    assert_int_equal(err.code, ST_EIO);
    assert_string_equal(err.msg, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_for_every_code), cmocka_unit_test(exit_codes),
        cmocka_unit_test(raise_records_site),   cmocka_unit_test(first_error_is_sticky),
        cmocka_unit_test(null_context),         cmocka_unit_test(message_is_one_line),
        cmocka_unit_test(message_is_bounded),   cmocka_unit_test(empty_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
