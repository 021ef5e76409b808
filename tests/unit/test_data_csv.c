/*
 * test_data_csv.c: the RFC 4180 reader on the cases that break naive ones:
 * quoted commas, doubled quotes, line breaks inside quotes (and the line
 * numbers after them), CRLF, no final line break, blank lines, a BOM,
 * ragged rows and malformed quotes (errors naming the line), plus the
 * shipped calibration file and its mapping onto plan_validate_row.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "data/data_csv.h"

static int parse(const char *text, data_csv *csv, st_err *err)
{
    st_err_clear(err);
    return data_csv_parse(text, strlen(text), "t.csv", csv, err);
}

static void test_plain(void **state)
{
    (void)state;
    data_csv csv;
    st_err err;
    assert_int_equal(parse("a,b,c\n1,2,3\n4,,6\n", &csv, &err), ST_OK);
    assert_int_equal(csv.ncols, 3);
    assert_int_equal(csv.nrows, 2);
    assert_string_equal(csv.header[1], "b");
    assert_int_equal(data_csv_col(&csv, "c"), 2);
    assert_int_equal(data_csv_col(&csv, "missing"), -1);
    assert_string_equal(data_csv_get(&csv, 0, 0), "1");
    assert_string_equal(data_csv_get(&csv, 1, 1), "");
    assert_string_equal(data_csv_get(&csv, 1, -1), "");
    assert_int_equal(csv.row_line[0], 2);
    assert_int_equal(csv.row_line[1], 3);
    data_csv_free(&csv);
    data_csv_free(&csv); /* a freed table is zeroed: freeing again is harmless */
}

static void test_quotes(void **state)
{
    (void)state;
    data_csv csv;
    st_err err;
    const char *t = "name,text,n\n"
                    "\"Smith, J\",\"he said \"\"hi\"\"\",7\n"
                    "x,\"\",\"\"\"\"\n";
    assert_int_equal(parse(t, &csv, &err), ST_OK);
    assert_int_equal(csv.nrows, 2);
    assert_string_equal(data_csv_get(&csv, 0, 0), "Smith, J");
    assert_string_equal(data_csv_get(&csv, 0, 1), "he said \"hi\"");
    assert_string_equal(data_csv_get(&csv, 0, 2), "7");
    assert_string_equal(data_csv_get(&csv, 1, 1), "");
    assert_string_equal(data_csv_get(&csv, 1, 2), "\"");
    data_csv_free(&csv);
}

static void test_embedded_newline(void **state)
{
    (void)state;
    data_csv csv;
    st_err err;
    /* Row 1 spans lines 2-4; row 2 starts on line 5. */
    const char *t = "id,notes\n1,\"first\nsecond\r\nthird\"\n2,x\n";
    assert_int_equal(parse(t, &csv, &err), ST_OK);
    assert_int_equal(csv.nrows, 2);
    assert_string_equal(data_csv_get(&csv, 0, 1), "first\nsecond\r\nthird");
    assert_int_equal(csv.row_line[0], 2);
    assert_int_equal(csv.row_line[1], 5);
    data_csv_free(&csv);

    /* A ragged row after a multi-line field is reported at its own line. */
    assert_int_equal(parse("id,notes\n1,\"a\nb\nc\"\n2\n", &csv, &err), ST_EPARSE);
    assert_non_null(strstr(err.msg, "t.csv:5:"));
}

static void test_crlf_and_no_final_newline(void **state)
{
    (void)state;
    data_csv csv;
    st_err err;
    assert_int_equal(parse("a,b\r\n1,2\r\n3,4", &csv, &err), ST_OK);
    assert_int_equal(csv.nrows, 2);
    assert_string_equal(data_csv_get(&csv, 0, 1), "2"); /* no stray \r */
    assert_string_equal(data_csv_get(&csv, 1, 1), "4");
    assert_int_equal(csv.row_line[1], 3);
    data_csv_free(&csv);

    /* A quoted last field at the very end, and a trailing comma. */
    assert_int_equal(parse("a,b\n1,\"x\"", &csv, &err), ST_OK);
    assert_string_equal(data_csv_get(&csv, 0, 1), "x");
    data_csv_free(&csv);
    assert_int_equal(parse("a,b\n1,", &csv, &err), ST_OK);
    assert_string_equal(data_csv_get(&csv, 0, 1), "");
    data_csv_free(&csv);

    /* Old Mac line ends (lone CR). */
    assert_int_equal(parse("a,b\r1,2\r", &csv, &err), ST_OK);
    assert_int_equal(csv.nrows, 1);
    assert_string_equal(data_csv_get(&csv, 0, 1), "2");
    data_csv_free(&csv);
}

static void test_blank_lines_bom_header_only(void **state)
{
    (void)state;
    data_csv csv;
    st_err err;
    assert_int_equal(parse("\xEF\xBB\xBFid,v\n\n1,2\n\r\n\n3,4\n\n", &csv, &err), ST_OK);
    assert_string_equal(csv.header[0], "id");
    assert_int_equal(csv.nrows, 2);
    assert_int_equal(csv.row_line[0], 3);
    assert_int_equal(csv.row_line[1], 6);
    data_csv_free(&csv);

    assert_int_equal(parse("id,v\n", &csv, &err), ST_OK);
    assert_int_equal(csv.nrows, 0);
    assert_int_equal(csv.ncols, 2);
    data_csv_free(&csv);
}

static void test_errors(void **state)
{
    (void)state;
    data_csv csv;
    st_err err;
    struct {
        const char *text, *where, *what;
    } bad[] = {
        {"a,b,c\n1,2,3\n4,5\n", "t.csv:3:", "2 fields, the header has 3"},
        {"a,b\n1,2,3\n", "t.csv:2:", "3 fields"},
        {"a,b\n1,\"open\nstill open\n", "t.csv:2:", "never closed"},
        {"a,b\n1,\"x\"y\n", "t.csv:2:", "after a closing quote"},
        {"a,b\n1,x\"y\n", "t.csv:2:", "quote inside an unquoted field"},
        {"a,a\n1,2\n", "t.csv:1:", "appears twice"},
        {"", "t.csv", "empty"},
        {"\n\r\n\n", "t.csv", "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&csv, 0x5a, sizeof csv);
        assert_int_equal(parse(bad[i].text, &csv, &err), ST_EPARSE);
        if (!strstr(err.msg, bad[i].where) || !strstr(err.msg, bad[i].what))
            fail_msg("case %zu: message '%s' lacks '%s' / '%s'", i, err.msg, bad[i].where,
                     bad[i].what);
        assert_null(csv.buf); /* nothing half-filled */
        data_csv_free(&csv);
    }
    /* An embedded NUL byte. */
    const char nul[] = "a,b\n1,x\0y\n";
    st_err_clear(&err);
    assert_int_equal(data_csv_parse(nul, sizeof nul - 1, "t.csv", &csv, &err), ST_EPARSE);
    assert_non_null(strstr(err.msg, "NUL"));

    st_err_clear(&err);
    assert_int_equal(data_csv_load("/nonexistent/dir/runs.csv", &csv, &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "runs.csv"));
}

static void test_validate_rows(void **state)
{
    (void)state;
    data_csv csv;
    st_err err;
    assert_int_equal(parse("source_key,row_id,num_gpus,tp\nx,7,8,2\n", &csv, &err), ST_OK);
    plan_validate_row row;
    assert_int_equal(data_csv_validate_rows(&csv, "t.csv", &row, &err), ST_OK);
    assert_string_equal(row.row_id, "7");
    assert_string_equal(row.source_key, "x");
    assert_string_equal(row.tp, "2");
    assert_string_equal(row.pp, ""); /* absent column: empty, not NULL */
    data_csv_free(&csv);

    assert_int_equal(parse("row_id,num_gpus\n1,8\n", &csv, &err), ST_OK);
    st_err_clear(&err);
    assert_int_equal(data_csv_validate_rows(&csv, "t.csv", &row, &err), ST_EPARSE);
    assert_non_null(strstr(err.msg, "source_key"));
    data_csv_free(&csv);
}

/* The shipped reference file: 427 runs from 9 sources, every row as wide as the header. */
static void test_calibration_file(void **state)
{
    (void)state;
    data_csv csv;
    st_err err = {0};
    assert_int_equal(data_csv_load(SMD_TEST_DATA_DIR "/reference/calibration_runs.csv", &csv, &err),
                     ST_OK);
    assert_int_equal(csv.nrows, 427);
    assert_int_equal(data_csv_col(&csv, "row_id"), 0);
    int src = data_csv_col(&csv, "source_key"), n = data_csv_col(&csv, "notes");
    assert_true(src > 0 && n > 0);
    assert_string_equal(data_csv_get(&csv, 0, 0), "1");
    assert_string_equal(data_csv_get(&csv, 0, src), "megatron_readme_2020");
    /* A quoted note with commas and quotes inside comes back whole. */
    assert_non_null(strstr(data_csv_get(&csv, 2, n), "128-way data parallelism"));
    plan_validate_row *rows = calloc((size_t)csv.nrows, sizeof *rows);
    assert_non_null(rows);
    assert_int_equal(data_csv_validate_rows(&csv, "calibration_runs.csv", rows, &err), ST_OK);
    assert_string_equal(rows[csv.nrows - 1].row_id, "629");
    free(rows);
    data_csv_free(&csv);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_quotes),
        cmocka_unit_test(test_embedded_newline),
        cmocka_unit_test(test_crlf_and_no_final_newline),
        cmocka_unit_test(test_blank_lines_bom_header_only),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_validate_rows),
        cmocka_unit_test(test_calibration_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
