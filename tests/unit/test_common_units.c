/*
 * test_common_units.c: the one parser for counts, sizes and rates (units.h)
 * and the formatters that print them back.
 *
 * Accepted forms are checked against their exact values (relative tolerance
 * 1e-15 where a decimal times a power of ten is not exact in binary); every
 * rejection is checked for its status and for a one-line message that names
 * the option and the bad text, so a user sees what to fix.
 */
#include "test_util.h"

#include "common/units.h"

#define REL 1e-15

typedef struct {
    const char *text;
    double want;
} ok_case;

typedef struct {
    const char *text;
    int code;
} bad_case;

typedef int (*parse_fn)(const char *, const char *, double *, st_err *);

/* A rejected input leaves the output alone and raises code with a message
 * naming the option and the text. */
static void expect_bad(parse_fn fn, const bad_case *c)
{
    st_err err = {0};
    double out = -1.0;
    int rc = fn(c->text, "--opt", &out, &err);
    if (rc != c->code)
        print_error("input '%s': status %d (%s), want %d (%s)\n", c->text, rc, st_str(rc),
                    c->code, st_str(c->code));
    assert_int_equal(rc, c->code);
    assert_int_equal(err.code, c->code);
    assert_true(out == -1.0);
    assert_non_null(strstr(err.msg, "--opt"));
    if (c->text[0] != '\0') {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", c->text);
        if (!strstr(err.msg, quoted))
            print_error("message \"%s\" does not name %s\n", err.msg, quoted);
        assert_non_null(strstr(err.msg, quoted));
    } else {
        assert_non_null(strstr(err.msg, "empty"));
    }
    assert_null(strchr(err.msg, '\n'));
    assert_non_null(err.file);
    assert_true(err.line > 0);
}

static void expect_ok(parse_fn fn, const ok_case *c)
{
    st_err err = {0};
    double out = -1.0;
    int rc = fn(c->text, "--opt", &out, &err);
    if (rc != ST_OK)
        print_error("input '%s': %s\n", c->text, err.msg);
    assert_int_equal(rc, ST_OK);
    assert_int_equal(err.code, ST_OK);
    assert_rel(out, c->want, REL);
}

/* Each of n inputs read by fn to its value. */
static void expect_oks(parse_fn fn, const ok_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_ok(fn, &c[i]);
}

/* Inputs every parser must refuse, whatever its units. */
static const bad_case common_bad[] = {
    {"", ST_EINVAL},       {"abc", ST_EINVAL},     {"-5", ST_EINVAL},   {"+5", ST_EINVAL},
    {"nan", ST_EINVAL},    {"inf", ST_EINVAL},     {"NaN", ST_EINVAL},  {"infinity", ST_EINVAL},
    {"0x10", ST_EINVAL},   {"0X1p4", ST_EINVAL},   {" 5", ST_EINVAL},   {".", ST_EINVAL},
    {"1e400", ST_ERANGE},  {"1e31", ST_ERANGE},    {"5 5", ST_EINVAL},  {"1..5", ST_EINVAL},
};

/* Each of n inputs refused by fn, and every one of common_bad. */
static void expect_rejects(parse_fn fn, const bad_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_bad(fn, &c[i]);
    for (size_t i = 0; i < sizeof common_bad / sizeof common_bad[0]; i++)
        expect_bad(fn, &common_bad[i]);
}

/* fn refuses text given to option opt as bad input, with a message
 * holding every string of has (TEXTS). */
static void refused_saying(parse_fn fn, const char *text, const char *opt,
                           const char *const *has)
{
    st_err err = {0};
    double out;
    assert_int_equal(fn(text, opt, &out, &err), ST_EINVAL);
    assert_text(err.msg, has, NULL);
}

/* ---------------------------------------------------------------- counts */

static void count_suffixes(void **state)
{
    static const ok_case ok[] = {
        {"30B", 3e10},      {"1.3B", 1.3e9},  {"350M", 3.5e8},  {"1T", 1e12},
        {"12k", 1.2e4},     {"12K", 1.2e4},   {"175e9", 1.75e11}, {"175G", 1.75e11},
        {"6.7b", 6.7e9},    {"0.5T", 5e11},   {"4096", 4096.0}, {".5M", 5e5},
        {"1.5e3K", 1.5e6},  {"13m", 1.3e7},   {"0", 0.0},       {"1e30", 1e30},
    };
    expect_oks(units_parse_count, ok, sizeof ok / sizeof ok[0]);
}

static void count_rejects(void **state)
{
    static const bad_case bad[] = {
        {"30X", ST_EINVAL}, {"30BB", ST_EINVAL}, {"30 B", ST_EINVAL}, {"30B ", ST_EINVAL},
        {"30GB", ST_EINVAL}, {"1e30K", ST_ERANGE}, {"1e", ST_EINVAL}, {"1-", ST_EINVAL},
        {"30Bx", ST_EINVAL}, {"30MiB", ST_EINVAL},
    };
    expect_rejects(units_parse_count, bad, sizeof bad / sizeof bad[0]);

    /* The suffix message lists what is allowed. */
    refused_saying(units_parse_count, "30X", "--params", TEXTS("--params '30X'", "'X'", "K, M, B"));
}

/* ----------------------------------------------------------------- bytes */

static void bytes_decimal_and_binary(void **state)
{
    static const ok_case ok[] = {
        {"80GB", 8e10},           {"80gb", 8e10},          {"40GiB", 40.0 * 1073741824.0},
        {"512MiB", 536870912.0},  {"1.5TB", 1.5e12},       {"4096", 4096.0},
        {"4096B", 4096.0},        {"1KB", 1000.0},         {"1KiB", 1024.0},
        {"2TiB", 2199023255552.0}, {"80 GB", 8e10},        {"0.5MB", 5e5},
        {"16MB", 1.6e7},          {"1e3GiB", 1e3 * 1073741824.0}, {"96GiB", 103079215104.0},
    };
    expect_oks(units_parse_bytes, ok, sizeof ok / sizeof ok[0]);
}

static void bytes_rejects(void **state)
{
    static const bad_case bad[] = {
        {"80X", ST_EINVAL},    {"80GBs", ST_EINVAL},   {"80 GB ", ST_EINVAL},
        {"80Gbps", ST_EINVAL}, {"1e30TB", ST_ERANGE},  {"80PB", ST_EINVAL},
        {"80G", ST_EINVAL},    {"GB", ST_EINVAL},
    };
    expect_rejects(units_parse_bytes, bad, sizeof bad / sizeof bad[0]);

    refused_saying(units_parse_bytes, "80GX", "--gpu-mem", TEXTS("--gpu-mem '80GX'", "GiB"));
}

/* ----------------------------------------------------------------- rates */

static void rates_bits_and_bytes(void **state)
{
    static const ok_case ok[] = {
        {"400Gbps", 5e10},   {"25GB/s", 2.5e10},  {"300GBps", 3e11},   {"100Gb/s", 1.25e10},
        {"3.2Tbps", 4e11},   {"800Mbps", 1e8},    {"600MB/s", 6e8},    {"1TB/s", 1e12},
        {"8bps", 1.0},       {"1B/s", 1.0},       {"200 Gbps", 2.5e10}, {"1600Kbps", 2e5},
        {"900GB/s", 9e11},   {"2MBps", 2e6},      {"1TBps", 1e12},     {"1KB/s", 1e3},
    };
    expect_oks(units_parse_rate, ok, sizeof ok / sizeof ok[0]);
}

static void rates_rejects(void **state)
{
    static const bad_case bad[] = {
        {"400", ST_EINVAL},       {"400G", ST_EINVAL},       {"400gbps", ST_EINVAL},
        {"400GiB/s", ST_EINVAL},  {"400Gbps ", ST_EINVAL},   {"400GB", ST_EINVAL},
        {"1e30Tbps", ST_ERANGE},  {"1e20TB/s", ST_ERANGE},   {"Gbps", ST_EINVAL},
    };
    expect_rejects(units_parse_rate, bad, sizeof bad / sizeof bad[0]);

    refused_saying(units_parse_rate, "400Gbit", "--efa", TEXTS("--efa '400Gbit'", "Gbps", "GB/s"));
}

/* ------------------------------------------------------------------ ints */

static void ints_in_range(void **state)
{
    static const struct {
        const char *text;
        int64_t min, max, want;
    } ok[] = {
        {"16", 1, 1024, 16},
        {"1", 1, 1024, 1},
        {"1024", 1, 1024, 1024},
        {"12k", 1, 100000, 12000},
        {"1.5K", 1, 100000, 1500},
        {"2M", 1, INT64_MAX, 2000000},
        {"30B", 1, INT64_MAX, 30000000000LL},
        {"175e9", 1, INT64_MAX, 175000000000LL},
        /* decimals whose product with the suffix is not whole in binary */
        {"8.2M", 1, INT64_MAX, 8200000},
        {"2.01K", 1, INT64_MAX, 2010},
        {"4.35T", 1, INT64_MAX, 4350000000000LL},
        /* plain digits are exact past 2^53 */
        {"9007199254740993", 1, INT64_MAX, 9007199254740993LL},
        {"9223372036854775807", 1, INT64_MAX, INT64_MAX},
        {"0", 0, 0, 0},
        {"007", 1, 10, 7},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        st_err err = {0};
        int64_t out = -1;
        int rc = units_parse_int(ok[i].text, "--n", ok[i].min, ok[i].max, &out, &err);
        if (rc != ST_OK)
            print_error("input '%s': %s\n", ok[i].text, err.msg);
        assert_int_equal(rc, ST_OK);
        assert_int_equal(out, ok[i].want);
    }
}

static void ints_rejects(void **state)
{
    static const struct {
        const char *text;
        int64_t min, max;
        int code;
        const char *says;
    } bad[] = {
        {"3.5", 1, 100, ST_EINVAL, "whole number"},
        {"1.0001K", 1, 100000, ST_EINVAL, "whole number"},
        {"0.5", 0, 100, ST_EINVAL, "whole number"},
        {"0", 1, 100, ST_EINVAL, "allowed range is 1 to 100"},
        {"101", 1, 100, ST_EINVAL, "allowed range is 1 to 100"},
        {"2k", 1, 1024, ST_EINVAL, "allowed range is 1 to 1024"},
        {"9223372036854775808", 1, INT64_MAX, ST_EINVAL, "allowed range"},
        {"99999999999999999999", 1, INT64_MAX, ST_EINVAL, "allowed range"},
        {"1e19", 1, INT64_MAX, ST_EINVAL, "allowed range"},
        {"10T", 1, INT64_MAX / 1000000, ST_EINVAL, "allowed range"},
        {"-5", 1, 100, ST_EINVAL, "positive"},
        {"", 1, 100, ST_EINVAL, "empty"},
        {"abc", 1, 100, ST_EINVAL, "positive"},
        {"30X", 1, 100, ST_EINVAL, "suffix"},
        {"0x10", 1, 100, ST_EINVAL, "decimal"},
        {"nan", 1, 100, ST_EINVAL, "positive"},
        {"inf", 1, 100, ST_EINVAL, "positive"},
        {"1e400", 1, 100, ST_ERANGE, "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st_err err = {0};
        int64_t out = -1;
        int rc = units_parse_int(bad[i].text, "--pp", bad[i].min, bad[i].max, &out, &err);
        if (rc != bad[i].code || !strstr(err.msg, bad[i].says))
            print_error("input '%s': status %d, message \"%s\"\n", bad[i].text, rc, err.msg);
        assert_int_equal(rc, bad[i].code);
        assert_int_equal(out, -1);
        assert_non_null(strstr(err.msg, bad[i].says));
        assert_non_null(strstr(err.msg, "--pp"));
        if (bad[i].text[0]) {
            char quoted[64];
            snprintf(quoted, sizeof quoted, "'%s'", bad[i].text);
            assert_non_null(strstr(err.msg, quoted));
        }
    }
}

/* A NULL error context is allowed: the status still comes back. */
static void null_err_context(void **state)
{
    double out = 0;
    int64_t n = 0;
    assert_int_equal(units_parse_count("30X", "--params", &out, NULL), ST_EINVAL);
    assert_int_equal(units_parse_bytes("", "--mem", &out, NULL), ST_EINVAL);
    assert_int_equal(units_parse_rate("1e400Gbps", "--bw", &out, NULL), ST_ERANGE);
    assert_int_equal(units_parse_int("3.5", "--tp", 1, 8, &n, NULL), ST_EINVAL);
    assert_int_equal(units_parse_count(NULL, "--params", &out, NULL), ST_EINVAL);
}

/* The first parse error in a context is the one that is kept. */
static void first_error_kept(void **state)
{
    st_err err = {0};
    double out;
    assert_int_equal(units_parse_count("30X", "--params", &out, &err), ST_EINVAL);
    assert_int_equal(units_parse_bytes("1e400", "--mem", &out, &err), ST_ERANGE);
    assert_int_equal(err.code, ST_EINVAL);
    assert_non_null(strstr(err.msg, "--params '30X'"));
    assert_null(strstr(err.msg, "--mem"));
}

/* An input with a newline still gives a one-line message. */
static void message_one_line(void **state)
{
    st_err err = {0};
    double out;
    assert_int_equal(units_parse_count("30\nB", "--params", &out, &err), ST_EINVAL);
    assert_null(strchr(err.msg, '\n'));
    assert_null(strchr(err.msg, '\r'));

    /* A very long input is cut, never overflows the message. */
    char big[2048];
    memset(big, '7', sizeof big - 2);
    big[sizeof big - 2] = 'X';
    big[sizeof big - 1] = '\0';
    st_err_clear(&err);
    assert_int_equal(units_parse_count(big, "--params", &out, &err), ST_ERANGE);
    assert_true(strlen(err.msg) < ST_MSG_MAX);
}

/* ------------------------------------------------------------ formatting */

static void fmt_count(void **state)
{
    static const struct {
        double n;
        const char *want;
    } c[] = {
        {30e9, "30.0B"},       {350e6, "350M"},      {1.01e12, "1.01T"},  {174604259328.0, "175B"},
        {6738415616.0, "6.74B"}, {999.0, "999"},     {0.0, "0"},          {1500.0, "1.50K"},
        {12e3, "12.0K"},       {2.5e15, "2500T"},
        /* just under a unit boundary: the next unit, never "1000M" */
        {999.6e6, "1.00B"},    {999.4e6, "999M"},    {99.96e6, "100M"},   {9.996e9, "10.0B"},
        {999.7, "1.00K"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        units_fmt_count(c[i].n, buf, sizeof buf);
        if (strcmp(buf, c[i].want) != 0)
            print_error("%.17g: got \"%s\", want \"%s\"\n", c[i].n, buf, c[i].want);
        assert_string_equal(buf, c[i].want);
    }
    /* Returns buf; truncates to len with a terminator. */
    char small[4];
    assert_ptr_equal(units_fmt_count(174604259328.0, small, sizeof small), small);
    assert_string_equal(small, "175");
}

static void fmt_bytes(void **state)
{
    static const struct {
        double b;
        const char *want;
    } c[] = {
        {0.0, "0 B"},
        {1023.0, "1023 B"},
        {1024.0, "1.0 KiB"},
        {80e9, "74.5 GiB"},
        {40.0 * 1073741824.0, "40.0 GiB"},
        {38.2 * 1073741824.0, "38.2 GiB"},
        {1536.0 * 1048576.0, "1.5 GiB"},
        {3.0 * 1099511627776.0, "3.0 TiB"},
        {5000.0 * 1125899906842624.0, "5000.0 PiB"},
        /* just under a boundary */
        {1023.97 * 1048576.0, "1.0 GiB"},
        {1023.9 * 1048576.0, "1023.9 MiB"},
        {1023.6, "1.0 KiB"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        units_fmt_bytes(c[i].b, buf, sizeof buf);
        if (strcmp(buf, c[i].want) != 0)
            print_error("%.17g: got \"%s\", want \"%s\"\n", c[i].b, buf, c[i].want);
        assert_string_equal(buf, c[i].want);
    }
}

static void fmt_seconds(void **state)
{
    static const struct {
        double s;
        const char *want;
    } c[] = {
        {12.5e-6, "12.5 us"}, {0.0, "0.0 us"},     {45.6e-3, "45.6 ms"},  {1.234, "1.23 s"},
        {119.0, "119.00 s"},  {150.0, "2.5 min"},  {7560.0, "2.1 h"},     {3.4 * 86400, "3.4 d"},
        {36 * 3600.0, "36.0 h"}, {1e-3, "1.0 ms"}, {1.0, "1.00 s"},
        /* just under a boundary */
        {0.99996, "1.00 s"},  {0.99996e-3, "1.0 ms"}, {119.996, "2.0 min"},
        {7199.0, "2.0 h"},    {71.97 * 3600.0, "3.0 d"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        units_fmt_seconds(c[i].s, buf, sizeof buf);
        if (strcmp(buf, c[i].want) != 0)
            print_error("%.17g: got \"%s\", want \"%s\"\n", c[i].s, buf, c[i].want);
        assert_string_equal(buf, c[i].want);
    }
}

/* What the formatter prints, the parser reads back (to its precision). */
static void fmt_count_round_trips(void **state)
{
    static const double n[] = {30e9, 1.3e9, 350e6, 1e12, 12e3, 6738415616.0, 70553706496.0};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++) {
        char buf[32];
        double back = 0;
        st_err err = {0};
        units_fmt_count(n[i], buf, sizeof buf);
        assert_int_equal(units_parse_count(buf, "--params", &back, &err), ST_OK);
        assert_rel(back, n[i], 5e-3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(count_suffixes),     cmocka_unit_test(count_rejects),
        cmocka_unit_test(bytes_decimal_and_binary), cmocka_unit_test(bytes_rejects),
        cmocka_unit_test(rates_bits_and_bytes), cmocka_unit_test(rates_rejects),
        cmocka_unit_test(ints_in_range),      cmocka_unit_test(ints_rejects),
        cmocka_unit_test(null_err_context),   cmocka_unit_test(first_error_kept),
        cmocka_unit_test(message_one_line),   cmocka_unit_test(fmt_count),
        cmocka_unit_test(fmt_bytes),          cmocka_unit_test(fmt_seconds),
        cmocka_unit_test(fmt_count_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
