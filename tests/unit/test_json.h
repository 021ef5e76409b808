/*
 * test_json.h: what the tests of JSON documents share: a key of an object
 * read as what it must be (the test fails naming the key when it is
 * missing or of another kind).
 */
#ifndef SMD_TEST_JSON_H
#define SMD_TEST_JSON_H

#include <cjson/cJSON.h>

#include "test_util.h"

/* The item under key k of o. */
static inline const cJSON *get(const cJSON *o, const char *k)
{
    return found_or_fail(cJSON_GetObjectItemCaseSensitive(o, k), "key", k);
}

/* The number under key k of o. */
static inline double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("'%s' is not a number", k);
    return v->valuedouble;
}

/* The string under key k of o. */
static inline const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    if (!cJSON_IsString(v))
        fail_msg("'%s' is not a string", k);
    return v->valuestring;
}

#endif
