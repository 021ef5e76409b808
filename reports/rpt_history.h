/*
 * rpt_history.h: the text of the commands that read the records back:
 * `smdplan history` (one line per record, its summary wrapped under
 * itself), `smdplan show ID` (one record in full, rpt_record.h's parts
 * wrapped to the terminal) and `smdplan compare` (prediction, simulation
 * and measurement of the same plan side by side).
 *
 * Errors are percent, 100 (a - b) / b (plan_error_pct); step times in
 * seconds. Text is wrapped and tables fitted to the terminal
 * (rpt_table.h). Every argument is borrowed for the call.
 */
#ifndef SMD_RPT_HISTORY_H
#define SMD_RPT_HISTORY_H

#include <stdio.h>

#include "data/db.h"

struct cJSON;

/* The n records rows of db_history, newest first: id, kind, time and
 * summary (a control character in it shown as \u00XX); "no records" (of
 * kind, when not NULL) when n is 0. */
void rpt_history_text(FILE *f, const db_summary *rows, int n, const char *kind);

/* The record rec of db_show in full: its head, plans, simulations, runs,
 * calibrations and bench (rpt_record.h), every line wrapped under its
 * value. Every string of rec with a tab or line break is replaced, in
 * rec, by its one-line form (rpt_term_escape_line). */
void rpt_history_show(FILE *f, struct cJSON *rec);

/* The n rows of db_compare as one table (model, instance, layout, stack,
 * the three step times, their errors and their records) with its key. */
void rpt_history_compare(FILE *f, const db_compare_row *rows, int n);

#endif
