/*
 * data_json.c: the planner's values as every output's JSON (data_json.h),
 * the members of an object written from a table, and what the readers of
 * data/'s JSON files say of a value or a parse that failed.
 */
#include "data/data_json.h"

#include <math.h>
#include <stdio.h>

#include <cjson/cJSON.h>

void data_json_fields(cJSON *o, const plan_fields *t, const void *v)
{
    char buf[PLAN_SOURCE_MAX];
    for (int i = 0; i < t->n; i++) {
        const plan_field *f = &t->f[i];
        if (f->kind == PLAN_FK_BOOL)
            cJSON_AddBoolToObject(o, f->name, plan_field_num(f, v) != 0);
        else if (plan_field_text(f, v, buf, sizeof buf))
            cJSON_AddStringToObject(o, f->name, buf);
        else
            cJSON_AddNumberToObject(o, f->name, plan_field_num(f, v));
    }
}

cJSON *data_json_model(const plan_model *m)
{
    plan_model r = plan_model_resolved(m);
    cJSON *j = cJSON_CreateObject();
    if (j)
        data_json_fields(j, &plan_model_fields, &r);
    return j;
}

cJSON *data_json_bytes(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(round(v)) : cJSON_CreateNull();
}

cJSON *data_json_exact(double v)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
}

void data_json_add(cJSON *o, const data_json_member *m, size_t n)
{
    for (size_t i = 0; o && i < n; i++) {
        const data_json_member *x = &m[i];
        cJSON *v = x->kind == DATA_JSON_K_BYTES   ? data_json_bytes(x->num)
                   : x->kind == DATA_JSON_K_EXACT ? data_json_exact(x->num)
                   : x->kind == DATA_JSON_K_BOOL  ? cJSON_CreateBool(x->num != 0)
                   : x->kind == DATA_JSON_K_STR   ? cJSON_CreateString(x->str)
                                                  : cJSON_CreateNumber(x->num);
        if (!cJSON_AddItemToObject(o, x->key, v))
            cJSON_Delete(v);
    }
}

const char *data_json_type_name(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "null";
}

size_t data_json_error_at(const char *text, size_t len, const char *end, int *line, int *col)
{
    size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    *line = 1, *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
    return off;
}
