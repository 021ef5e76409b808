/*
 * test_rpt_history_text.c: the text of history, show and compare (reports/
 * rpt_history_text.c): a record's summary on its line with a newline in it
 * shown as \u000a, "no records" of a kind; show's page of a record made by
 * hand, its multi-line strings made one line in the record itself; and
 * compare's row with its errors 100 (a - b) / b, five decimals for a step
 * under 0.1 s and "-" for a figure missing.
 */
#include "test_util.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

#include "reports/rpt_history.h"
#include "reports/rpt_table.h"

/* What is printed between begin() and end(f) (malloc'd). */
static char *buf;
static size_t len;

static FILE *begin(void)
{
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    return f;
}

static char *end(FILE *f)
{
    fclose(f);
    return buf;
}

static void test_history(void **state)
{
    (void)state;
    db_summary rows[2];
    memset(rows, 0, sizeof rows);
    rows[0].id = 12;
    snprintf(rows[0].kind, sizeof rows[0].kind, "plan");
    snprintf(rows[0].created_at, sizeof rows[0].created_at, "2025-01-02T03:04:05Z");
    snprintf(rows[0].summary, sizeof rows[0].summary, "model a\nb on 2 x p4d");
    rows[1].id = 7;
    snprintf(rows[1].kind, sizeof rows[1].kind, "calibration");
    snprintf(rows[1].summary, sizeof rows[1].summary, "calibrate x.csv");
    FILE *f = begin();
    rpt_history_text(f, rows, 2, NULL);
    char *text = end(f);
    assert_text(text, TEXTS("    id  kind         created (UTC)             summary\n",
                            "    12  plan         2025-01-02T03:04:05Z      model a\\u000ab on 2 "
                            "x p4d\n",
                            "     7  calibration ", "calibrate x.csv\n"),
                NULL);
    free(text);
    f = begin();
    rpt_history_text(f, rows, 0, "bench");
    text = end(f);
    assert_string_equal(text, "no records of kind bench\n");
    free(text);
    f = begin();
    rpt_history_text(f, rows, 0, NULL);
    text = end(f);
    assert_string_equal(text, "no records\n");
    free(text);
}

static void test_show(void **state)
{
    (void)state;
    cJSON *rec = cJSON_Parse("{\"id\": 5, \"kind\": \"plan\", \"created_at\": \"2025-01-02\","
                             " \"summary\": \"two\\nlines\", \"provenance\": {\"command_line\":"
                             " \"smdplan --params 30B\", \"tool_version\": \"1.0\"},"
                             " \"search\": {\"objective\": \"time\", \"evaluated\": 120,"
                             " \"feasible\": 80}}");
    assert_non_null(rec);
    FILE *f = begin();
    rpt_history_show(f, rec);
    char *text = end(f);
    assert_text(text, TEXTS("record 5: plan, 2025-01-02\n", "summary:  two\\u000alines\n",
                            "command:  smdplan --params 30B\n",
                            "search:   objective time, 120 layouts evaluated, 80 feasible\n"),
                NULL);
    /* the record's own string made one line */
    assert_string_equal(cJSON_GetObjectItem(rec, "summary")->valuestring, "two\\u000alines");
    free(text);
    cJSON_Delete(rec);
}

static void test_compare(void **state)
{
    (void)state;
    db_compare_row r[2];
    memset(r, 0, sizeof r);
    snprintf(r[0].model, sizeof r[0].model, "gpt3-1.3b");
    snprintf(r[0].instance_type, sizeof r[0].instance_type, "p4d.24xlarge");
    r[0].nodes = 2;
    snprintf(r[0].layout, sizeof r[0].layout, "tp 1 pp 1 dp 16");
    snprintf(r[0].framework, sizeof r[0].framework, "smp");
    snprintf(r[0].precision, sizeof r[0].precision, "bf16");
    r[0].predicted_s = 5.0;
    r[0].measured_s = 4.0;
    r[0].predicted_id = 3;
    r[0].measured_id = 9;
    r[1] = r[0];
    r[1].framework[0] = '\0'; /* recorded before frameworks */
    r[1].predicted_s = 0.05;
    r[1].simulated_s = 0.06;
    r[1].measured_s = 0;
    r[1].simulated_id = 4;
    r[1].measured_id = 0;
    FILE *f = begin();
    rpt_history_compare(f, r, 2);
    char *text = end(f);
    /* 100 (5 - 4) / 4 = +25.0%; 100 (0.06 - 0.05) / 0.05 = +20.0% */
    assert_text(text, TEXTS("pred/meas", "records p/s/m", "smp bf16", "5.000", "4.000",
                            "+25.0%", "3/-/9", "0.05000", "0.06000", "+20.0%", "3/4/-",
                            "(step times in s, latest of each;"),
                NULL);
    const char *second = strstr(text, "0.05000");
    const char *line = second;
    while (line > text && line[-1] != '\n')
        line--;
    char row[400];
    snprintf(row, sizeof row, "%.*s", (int)(strchr(second, '\n') - line), line);
    assert_text(row, TEXTS(" - "), TEXTS("smp"));
    free(text);
}

TEST_MAIN(rpt_term_set_wide(1),
          cmocka_unit_test(test_history),
          cmocka_unit_test(test_compare),
          cmocka_unit_test(test_show))
