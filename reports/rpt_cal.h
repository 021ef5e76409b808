/*
 * rpt_cal.h: the text of `smdplan calibrate`: each fit (a framework on a
 * GPU chip, or the chip's pool over every framework) with its parameters
 * before and after, their standard errors and outcome, the error before and
 * after; the parameters that ended on a bound of their physical range with
 * that range's source; each source's error fitted and held out; and for
 * calibrate --runs each executed run's measured step beside its prediction
 * before and after the fit.
 *
 * Errors are percent, 100 (predicted - measured) / measured; steps in
 * seconds. Text is wrapped and tables fitted to the terminal (rpt_table.h).
 * Every argument is borrowed for the call.
 */
#ifndef SMD_RPT_CAL_H
#define SMD_RPT_CAL_H

#include <stdio.h>

#include "data/data_calibration.h"
#include "planner/plan.h"
#include "planner/plan_calibrate.h"

/* The fit rep of the nrows rows read from source (a file, or "the executed
 * runs in DB"). */
void rpt_cal_text(FILE *f, const char *source, int nrows, const plan_cal_report *rep);

/* calibrate --runs: rpt_cal_text of the runs cr (source names them), then a
 * table of each run's measured step, its prediction before the fit
 * (before[i] seconds for cr->rows[i]; NULL: not known) and after it (on
 * cat, the catalog the fit changed), and why each run left out is. */
void rpt_cal_runs_text(FILE *f, const char *source, const plan_catalog *cat,
                       const db_cal_runs *cr, const double *before, const plan_cal_report *rep);

#endif
