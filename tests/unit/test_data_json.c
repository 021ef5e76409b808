/*
 * test_data_json.c: the shared pieces of data/'s JSON (data/data_json.c).
 *
 * A table of members is written in its order, each by its kind: a number
 * as cJSON prints it (null when not finite), a byte count as the whole
 * number (858993459.2 bytes is 858993459), an exact number as the %.17g
 * that reads back to the same double (0.1 + 0.2 is 0.30000000000000004,
 * which cJSON's 15 digits print as 0.3), a boolean from any non-zero
 * value, a string as given; nothing is added to no object. The readers'
 * messages: each kind of value by name, and the line and column where a
 * parse stopped (the third line's fifth character of "{\n \"a\":\n  1 x"
 * is at offset 12), the text's end when the parse gave no place in it.
 */
#include "test_util.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

#include "data/data_json.h"

static void members_in_order(void **state)
{
    (void)state;
    const data_json_member m[] = {
        DATA_JSON_NUM("n", 1.5),
        DATA_JSON_NUM("sum", 0.1 + 0.2),
        DATA_JSON_NUM("nan", NAN),
        DATA_JSON_BYTES("bytes", 858993459.2),
        DATA_JSON_BYTES("inf_bytes", INFINITY),
        DATA_JSON_EXACT("exact", 0.1 + 0.2),
        DATA_JSON_BOOL("yes", 7),
        DATA_JSON_BOOL("no", 0),
        DATA_JSON_STR("s", "text"),
    };
    cJSON *o = cJSON_CreateObject();
    data_json_add(o, m, sizeof m / sizeof m[0]);
    char *t = cJSON_PrintUnformatted(o);
    assert_string_equal(t, "{\"n\":1.5,\"sum\":0.3,\"nan\":null,\"bytes\":858993459,"
                           "\"inf_bytes\":null,\"exact\":0.30000000000000004,\"yes\":true,"
                           "\"no\":false,\"s\":\"text\"}");
    free(t);
    /* the exact number reads back to the same double */
    cJSON *back = cJSON_Parse("0.30000000000000004");
    assert_true(back->valuedouble == 0.1 + 0.2);
    cJSON_Delete(back);
    /* appended after what the object holds */
    data_json_add(o, m, 1);
    assert_int_equal(cJSON_GetArraySize(o), 10);
    cJSON_Delete(o);
    data_json_add(NULL, m, sizeof m / sizeof m[0]); /* no object: nothing, no leak */

    cJSON *x = data_json_exact(1.0 / 3.0);
    t = cJSON_PrintUnformatted(x);
    assert_string_equal(t, "0.33333333333333331");
    free(t);
    cJSON_Delete(x);
}

static void type_names(void **state)
{
    (void)state;
    const struct {
        const char *json, *name;
    } cases[] = {
        {"\"x\"", "a string"}, {"2", "a number"},    {"false", "a boolean"},
        {"[1]", "an array"},   {"{}", "an object"}, {"null", "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *v = cJSON_Parse(cases[i].json);
        assert_non_null(v);
        assert_string_equal(data_json_type_name(v), cases[i].name);
        cJSON_Delete(v);
    }
    assert_string_equal(data_json_type_name(NULL), "null");
}

static void error_place(void **state)
{
    (void)state;
    const char *text = "{\n \"a\":\n  1 x";
    size_t len = strlen(text);
    int line = 0, col = 0;
    assert_int_equal(data_json_error_at(text, len, text + 12, &line, &col), 12);
    assert_int_equal(line, 3);
    assert_int_equal(col, 5);
    /* cJSON's own place */
    cJSON *v = cJSON_ParseWithLength(text, len);
    assert_null(v);
    assert_int_equal(data_json_error_at(text, len, cJSON_GetErrorPtr(), &line, &col), 12);
    /* no place, or one outside the text: its end */
    assert_int_equal(data_json_error_at(text, len, NULL, &line, &col), len);
    assert_int_equal(line, 3);
    assert_int_equal(col, 6);
    assert_int_equal(data_json_error_at(text, len, text + len + 1, &line, &col), len);
    assert_int_equal(data_json_error_at("", 0, NULL, &line, &col), 0);
    assert_int_equal(line, 1);
    assert_int_equal(col, 1);
}

TEST_MAIN((void)0,
          cmocka_unit_test(members_in_order),
          cmocka_unit_test(type_names),
          cmocka_unit_test(error_place))
