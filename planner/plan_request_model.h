/*
 * plan_request_model.h: the model a plan request names, resolved: a model
 * read from a file or named (by a loader the caller gives, so the planner
 * reads no file), a preset or derived shape of a nominal size, or explicit
 * sizes; then the size overrides (plan_request.h). The messages name the
 * command-line flags.
 */
#ifndef SMD_PLAN_REQUEST_MODEL_H
#define SMD_PLAN_REQUEST_MODEL_H

#include "planner/plan.h"
#include "planner/plan_request.h"

/* Reads the model ref names (a config.json, or a model's name) into m. */
typedef int (*plan_model_loader)(const char *ref, plan_model *m, st_err *err);

/* What a request says of its model. Strings are borrowed for the call. */
typedef struct plan_model_request {
    const char *arch;            /* --arch; NULL: from the family, else gpt */
    const char *family;          /* --family; NULL: any */
    const char *file;            /* --model FILE|NAME; NULL: none */
    plan_model_loader load;      /* reads file (data/'s data_model_ref_load) */
    const char *params;          /* --params text ("30B"); NULL: none */
    plan_model_overrides ov;     /* the sizes set over the model's own */
} plan_model_request;

/* The model q names into m, in this order of precedence: q->file (read by
 * q->load), q->params (plan_model_resolve over presets, which may be empty
 * otherwise), or the custom model of ov's layers, hidden and heads when all
 * three are set; then ov applied (noted in m->source when a file or a size
 * gave the model). The architecture is checked first. ST_EINVAL when q
 * names no model, an arch or size that is not one, or the loader's and
 * plan_model_resolve's statuses. */
int plan_request_model(const plan_model_request *q, const plan_presets *presets, plan_model *m,
                       st_err *err);

#endif
