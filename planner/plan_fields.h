/*
 * plan_fields.h: one table per struct of the fields a plan is written
 * with: the layout (plan_layout) and the model (plan_model). Each field has
 * one name, the same in SQLite's columns (data/db_fields.c), CONFIG.json
 * (exec/exec_config.c), `smdplan --json` and validate's JSON
 * (data/data_json.c); every writer walks the table, so a field added
 * here appears in all of them under that name. A reader that meets a name
 * once spelled otherwise says what it is now (plan_field_renamed).
 *
 * The planner knows no file format: the table gives names, kinds and where
 * each member lives; the writers turn them into JSON or columns.
 */
#ifndef SMD_PLAN_FIELDS_H
#define SMD_PLAN_FIELDS_H

#include <stddef.h>

#include "common/st.h"
#include "planner/plan.h"

typedef enum plan_fkind {
    PLAN_FK_INT = 1,             /* int */
    PLAN_FK_I64,                 /* int64_t */
    PLAN_FK_DBL,                 /* double */
    PLAN_FK_BOOL,                /* int, 0 or 1 */
    PLAN_FK_STR,                 /* char array, NUL-terminated */
    PLAN_FK_SCHED,               /* plan_schedule of a plan_layout, by its name ("none"
                                  * with one stage: plan_layout_schedule_key) */
    PLAN_FK_RECOMP,              /* plan_recompute, by its name */
    PLAN_FK_SHARD,               /* plan_sharding, by its name */
    PLAN_FK_PREC,                /* plan_precision, by its name */
    PLAN_FK_FW,                  /* int index into the stack profiles, by its key */
    PLAN_FK_ARCH,                /* plan_arch, by its name ("gpt", "llama") */
    PLAN_FK_MLP,                 /* plan_mlp, by its name ("plain", "gated"; resolved) */
} plan_fkind;

/* Which writers carry a field: every one but CONFIG.json carries all. */
#define PLAN_FIELD_EXEC 1u       /* CONFIG.json: the executor runs with it */

typedef struct plan_field {
    const char *name;
    plan_fkind kind;
    size_t offset, size;         /* of the member in its struct */
    unsigned carry;              /* PLAN_FIELD_* */
} plan_field;

typedef struct plan_fields {
    const plan_field *f;
    int n;
} plan_fields;

extern const plan_fields plan_layout_fields;
extern const plan_fields plan_model_fields;

/* The field named name in t (NULL: none). */
const plan_field *plan_field_find(const plan_fields *t, const char *name);

/* A numeric field's value (INT, I64, DBL, BOOL); NAN for another kind. */
double plan_field_num(const plan_field *f, const void *obj);
/* A named field's value (STR and the enumerations) into buf; NULL for a
 * numeric field. */
const char *plan_field_text(const plan_field *f, const void *obj, char *buf, size_t n);
/* The current name of a key once spelled otherwise ("micro_batch_size" ->
 * "micro_batch"), NULL when key is no old spelling. */
const char *plan_field_renamed(const char *key);

#endif
