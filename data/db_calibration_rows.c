/*
 * db_calibration_rows.c: the executor's own runs, recorded by smdplan exec,
 * as rows of smdplan calibrate --runs's fit. A run takes part when it ended
 * "ok" with a measured step (db_exec_runs lists those), was predicted when
 * it ran (its plan names a catalog entry), that entry is in the catalog
 * now, its record holds its model and its plan of role "measured", and the
 * planner predicts its layout now; the row is that model, layout and node
 * exactly, its measured median step the reference (plan_measured.h).
 */
#include "data/data_calibration.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "planner/plan_framework.h"
#include "planner/plan_measured.h"

/* Plans a run's record holds: the run's own, "measured" (db_record_run). */
#define RUN_PLANS_MAX 8

int db_calibration_row(db *d, const plan_catalog *cat, const db_exec_run *x,
                       plan_validate_result *r, char *why, size_t nwhy)
{
    if (!(x->predicted_s > 0)) {
        snprintf(why, nwhy, "not predicted when it ran (no catalog entry, more ranks than "
                 "devices, or ranks sharing a GPU)");
        return 1;
    }
    const plan_instance *in = plan_catalog_find(cat, x->instance_type);
    if (!in) {
        snprintf(why, nwhy, "instance type %s is not in the catalog (give its --catalog file)",
                 x->instance_type);
        return 1;
    }
    db_plan *p = calloc(RUN_PLANS_MAX, sizeof *p);
    plan_model *m = calloc(1, sizeof *m);
    st_err err = {0};
    int np = 0, rc = p && m ? db_plans(d, x->record_id, p, RUN_PLANS_MAX, &np, &err) : ST_ENOMEM;
    const db_plan *pick = NULL;
    for (int i = 0; rc == ST_OK && i < np && !pick; i++)
        if (!strcmp(p[i].role, "measured"))
            pick = &p[i];
    if (rc == ST_OK && pick)
        rc = db_model(d, x->record_id, m, &err);
    int out = 1;
    if (rc != ST_OK || !pick) {
        snprintf(why, nwhy, "its record has no plan or model: %.150s", rc ? err.msg : "none");
    } else {
        /* the executor trains without dropout (exec_config.c refuses it), as
         * smdplan exec predicted the run */
        m->dropout = PLAN_DROPOUT_OFF;
        char id[32];
        snprintf(id, sizeof id, "run %lld", (long long)x->record_id);
        plan_measured_run run = {
            .row_id = id, .model = m, .layout = &pick->layout, .inst = in,
            .nodes = pick->nodes, .gpus = pick->gpus, .label = pick->label,
            .measured_s = x->measured_s,
        };
        out = plan_measured_row(cat, &run, r, why, nwhy);
    }
    free(m);
    free(p);
    return out;
}

void db_calibration_rows(db *d, const plan_catalog *cat, const db_exec_run *runs, int nruns,
                         const char *family, plan_validate_result *rows, int *nrows,
                         char (*why)[DB_CAL_WHY_MAX], int *left)
{
    *nrows = *left = 0;
    for (int i = 0; i < nruns; i++) {
        int fwi = -1;
        st_err fe = {0};
        why[i][0] = '\0';
        if (plan_framework_find(runs[i].framework, &fwi, &fe) != ST_OK)
            snprintf(why[i], sizeof why[i], "its plan names no framework");
        else if (family &&
                 strcasecmp(family, plan_fw_family_key(plan_framework_get(fwi)->family)))
            continue; /* another framework's: not asked for */
        else if (db_calibration_row(d, cat, &runs[i], &rows[*nrows], why[i], sizeof why[i]) == 0) {
            (*nrows)++;
            continue;
        }
        (*left)++;
    }
}
