/*
 * data_json.h: a model, a layout and byte counts as the JSON every output
 * of smdplan gives them (`--json`, validate --json, show --json): each
 * field under its one name of the planner's field tables
 * (planner/plan_fields.h), the model as the planner resolves it, bytes as
 * whole numbers. CONFIG.json is written by exec/ (exec_config.c) from the
 * same tables, exec/ not linking data/.
 */
#ifndef SMD_DATA_JSON_H
#define SMD_DATA_JSON_H

#include "planner/plan.h"
#include "planner/plan_fields.h"

struct cJSON;

/* Every field of table t of the struct at v into object o under its table
 * name: booleans as true/false, enumerations and strings by name, numbers
 * as numbers. */
void data_json_fields(struct cJSON *o, const plan_fields *t, const void *v);

/* The model as an object (caller owns; NULL when out of memory), as the
 * planner resolves it (plan_model_resolved: the head size in force, the
 * MLP). */
struct cJSON *data_json_model(const plan_model *m);

/* A byte count as a whole number (the planner's terms are products of
 * fractions: 0.8 GiB of CUDA context is 858993459.2 bytes), null when not
 * finite. */
struct cJSON *data_json_bytes(double v);

#endif
