/*
 * db_calibration_runs.c: `smdplan calibrate --runs`'s reading of the
 * database (data_calibration.h): the executed runs, and those that can be
 * rows of the fit with why the others cannot (db_calibration_rows).
 */
#include "data/data_calibration.h"

#include <stdlib.h>
#include <string.h>

int db_cal_runs_load(const char *path, const plan_catalog *cat, const char *family,
                     db_cal_runs *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    out->runs = calloc(DB_CAL_RUNS_MAX, sizeof *out->runs);
    out->rows = calloc(DB_CAL_RUNS_MAX, sizeof *out->rows);
    if (!out->runs || !out->rows)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    db *d = NULL;
    int rc = db_open(path, DB_OPEN_READ, &d, err);
    if (rc == ST_OK)
        rc = db_exec_runs(d, out->runs, DB_CAL_RUNS_MAX, &out->nruns, err);
    if (rc == ST_OK) {
        out->why = calloc((size_t)(out->nruns > 0 ? out->nruns : 1), sizeof *out->why);
        if (!out->why)
            rc = ST_RAISE(err, ST_ENOMEM, "out of memory");
    }
    if (rc == ST_OK)
        db_calibration_rows(d, cat, out->runs, out->nruns, family, out->rows, &out->nrows,
                            out->why, &out->left);
    db_close(d);
    return rc;
}

void db_cal_runs_free(db_cal_runs *r)
{
    free(r->why);
    free(r->rows);
    free(r->runs);
    memset(r, 0, sizeof *r);
}
