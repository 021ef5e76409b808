/*
 * plan_validate_explain.c: a published run found by its row_id and the
 * terms of its prediction (plan_validate_explain.h), for validate
 * --explain. The terms come from running the row again with a terms
 * buffer: the results of a whole file are made without them.
 */
#include "planner/plan_validate_explain.h"

#include <stdlib.h>
#include <string.h>

int plan_validate_find(const plan_validate_result *res, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(res[i].row_id, id) == 0)
            return i;
    return -1;
}

int plan_validate_terms(const plan_catalog *cat, const plan_validate_row *row,
                        const plan_validate_result *r, plan_terms *t, st_err *err)
{
    plan_validate_result *again = calloc(1, sizeof *again);
    if (!again)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    memset(t, 0, sizeof *t);
    int rc = plan_validate_run_floor(cat, row, r && r->recompute_shared ? &r->recompute_floor : NULL,
                                     again, t, err);
    free(again);
    return rc;
}
