/*
 * data_json.h: a model, a layout and byte counts as the JSON every output
 * of smdplan gives them (`--json`, validate --json, show --json): each
 * field under its one name of the planner's field tables
 * (planner/plan_fields.h), the model as the planner resolves it, bytes as
 * whole numbers. CONFIG.json is written by exec/ (exec_config.c) from the
 * same tables, exec/ not linking data/. An object of many members is
 * written from a table of them (data_json_add), each number, byte count,
 * boolean or string by the same rule in every writer of data/. The
 * readers of data/'s JSON files name what they found and where a parse
 * stopped the same way.
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

/* One member of an object written by data_json_add: its key, its value
 * and how the value is written; made by the DATA_JSON_* macros below. */
typedef enum data_json_kind {
    DATA_JSON_K_NUM,             /* num as a number (null when not finite) */
    DATA_JSON_K_BYTES,           /* num as a byte count (data_json_bytes) */
    DATA_JSON_K_EXACT,           /* num as data_json_exact writes it */
    DATA_JSON_K_BOOL,            /* num != 0 as true or false */
    DATA_JSON_K_STR,             /* str as a string */
} data_json_kind;

typedef struct data_json_member {
    const char *key;
    double num;                  /* a number's value, a boolean's (0: false) */
    data_json_kind kind;
    const char *str;             /* a string's value */
} data_json_member;

#define DATA_JSON_NUM(k, v) {(k), (double)(v), DATA_JSON_K_NUM, NULL}
#define DATA_JSON_BYTES(k, v) {(k), (double)(v), DATA_JSON_K_BYTES, NULL}
#define DATA_JSON_EXACT(k, v) {(k), (double)(v), DATA_JSON_K_EXACT, NULL}
#define DATA_JSON_BOOL(k, v) {(k), (v) ? 1.0 : 0.0, DATA_JSON_K_BOOL, NULL}
#define DATA_JSON_STR(k, s) {(k), 0.0, DATA_JSON_K_STR, (s)}

/* The n members of m into object o, in their order: the table a writer of
 * many members lists them in ({DATA_JSON_NUM("gpus", c->gpus),
 * DATA_JSON_STR("gpu", g->name), ...}). */
void data_json_add(struct cJSON *o, const data_json_member *m, size_t n);

/* A byte count as a whole number (the planner's terms are products of
 * fractions: 0.8 GiB of CUDA context is 858993459.2 bytes), null when not
 * finite. */
struct cJSON *data_json_bytes(double v);

/* A number as the %.17g that reads back to the same double (cJSON prints
 * 15 digits when they compare equal within DBL_EPSILON, which loses the
 * last bits of a value computed rather than read, such as a measured
 * file's). */
struct cJSON *data_json_exact(double v);

/* What kind of value v is, for a message naming what was found ("a
 * string", "a number", "a boolean", "an array", "an object", "null"). */
const char *data_json_type_name(const struct cJSON *v);

/* Where a parse of text[0..len) stopped at end (cJSON_GetErrorPtr; NULL or
 * outside the text: its end): *line and *col from 1, the offset returned. */
size_t data_json_error_at(const char *text, size_t len, const char *end, int *line, int *col);

#endif
