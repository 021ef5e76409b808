/*
 * json_get.h: reading a member of a JSON object that may be missing or of
 * another type, as the records' readers and formatters read them: a
 * number or NAN, a string or "", an array or NULL. Header only: a library
 * that includes it links cJSON (data/, reports/, app/ do; common/ itself
 * does not).
 */
#ifndef SMD_JSON_GET_H
#define SMD_JSON_GET_H

#include <math.h>

#include <cjson/cJSON.h>

static inline double json_get_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static inline const char *json_get_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static inline const cJSON *json_get_arr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsArray(v) ? v : NULL;
}

#endif
