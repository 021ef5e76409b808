/*
 * data_json.c: the planner's values as every output's JSON (data_json.h).
 */
#include "data/data_json.h"

#include <math.h>

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
