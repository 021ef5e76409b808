/*
 * data_calibration.h: what smdplan calibrate reads from the database and
 * writes as data files.
 *
 *  - The executor's runs recorded by smdplan exec (db_exec_runs) as rows
 *    of the fit (db_calibration_rows.c): each with exactly the model,
 *    layout and node it ran, its measured median step the reference
 *    (planner/plan_measured.h).
 *  - The fit as a catalog override (the format of data/calibration.json,
 *    applied with --catalog FILE) and the error bands of predicted steps
 *    (data/error_bands.json, read by data_bands_load) (data_calibration.c).
 *    Both are written whole or not at all under the one rule of every
 *    output (common/outfile.h): an existing file only with force, never
 *    through a symbolic link; what names the output in messages
 *    ("--write").
 */
#ifndef SMD_DATA_CALIBRATION_H
#define SMD_DATA_CALIBRATION_H

#include <stddef.h>

#include "common/st.h"
#include "data/db.h"
#include "planner/plan.h"
#include "planner/plan_calibrate.h"
#include "planner/plan_validate.h"

struct cJSON;

/* ---- the executor's runs as rows of the fit (db_calibration_rows.c) ---- */

/* Why a run cannot take part, at most this many bytes. */
#define DB_CAL_WHY_MAX 200

/* One run x of database d as a row r of the fit on cat: a run that was
 * predicted when it ran (its plan names a catalog entry, now in cat), with
 * the model and the plan of role "measured" of its record, without dropout
 * (the executor trains without it, as smdplan exec predicted the run),
 * "run ID" its row id, predicted now (plan_measured_row). 0 and r filled,
 * or 1 and why (nwhy bytes) it cannot take part. */
int db_calibration_row(db *d, const plan_catalog *cat, const db_exec_run *x,
                       plan_validate_result *r, char *why, size_t nwhy);

/* The rows of runs[0..nruns) for a fit of framework family (a
 * plan_fw_family_key, case-insensitive; NULL: every framework's) into
 * rows[0..*nrows) (room for nruns); why[i] says why run i cannot take part,
 * "" when it is a row or another family's (not asked for); *left counts the
 * runs that cannot. */
void db_calibration_rows(db *d, const plan_catalog *cat, const db_exec_run *runs, int nruns,
                         const char *family, plan_validate_result *rows, int *nrows,
                         char (*why)[DB_CAL_WHY_MAX], int *left);

/* The executed runs of a database read as rows of a fit (db_cal_runs_load,
 * db_calibration_runs.c); free with db_cal_runs_free. */
#define DB_CAL_RUNS_MAX 4096
typedef struct db_cal_runs {
    db_exec_run *runs;           /* the executed runs read (at most DB_CAL_RUNS_MAX) */
    int nruns;
    plan_validate_result *rows;  /* those that take part, as db_calibration_rows makes them */
    int nrows;
    char (*why)[DB_CAL_WHY_MAX]; /* why[i]: why runs[i] cannot take part, or "" */
    int left;                    /* runs that cannot */
} db_cal_runs;

/* The executed runs in the database at path (opened to read, closed before
 * it returns) as rows of a fit of framework family (NULL: every
 * framework's) on cat, into out (caller's storage, filled on every path:
 * free it with db_cal_runs_free). Errors: db_open's and db_exec_runs',
 * ST_ENOMEM. No run that can take part is a result (out->nrows 0). */
int db_cal_runs_load(const char *path, const plan_catalog *cat, const char *family,
                     db_cal_runs *out, st_err *err);

/* Free what db_cal_runs_load allocated in r (not r); r is zeroed. */
void db_cal_runs_free(db_cal_runs *r);

/* ---- the fit as data files (data_calibration.c) ---- */

/* The catalog override of the fit rep on cat to path: one "efficiencies"
 * entry per fitted (framework, chip) not rejected (its values as cat now
 * holds them, with standard errors), and each fitted chip pool's values on
 * every GPU of that chip, its source naming the runs (source: the file or
 * the runs fitted). */
int data_calibration_write(const char *path, const char *what, int force,
                           const plan_catalog *cat, const plan_cal_report *rep,
                           const char *source, st_err *err);

/* The error bands of rep (made with leave-one-source-out) as the JSON
 * object data_bands_parse reads (caller owns; NULL when out of memory):
 * for each (stack release, chip) the mean over its published sources of
 * their runs' held-out mean |error| there; for each chip the same over
 * every stack's sources on it; and the worst source held out. source
 * names the runs fitted in its "_doc". */
struct cJSON *data_bands_json(const plan_cal_report *rep, const char *source);

/* data_bands_json written to path. */
int data_bands_write(const char *path, const char *what, int force, const plan_cal_report *rep,
                     const char *source, st_err *err);

#endif
