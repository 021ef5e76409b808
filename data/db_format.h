/*
 * db_format.h: the records as machine-readable text, for `smdplan history`,
 * `show` and `compare` with --json or --csv.
 *
 * Every writer writes to the stream it is given and cannot fail but by the
 * stream's own error (which the caller checks); the rows and the record are
 * borrowed for the call. CSV has a header row, RFC 4180 quoting, numbers in
 * the shortest form that reads back exactly and empty cells for missing
 * values; JSON is cJSON's indented form followed by a newline.
 */
#ifndef SMD_DB_FORMAT_H
#define SMD_DB_FORMAT_H

#include <stdio.h>

#include "data/db.h"

struct cJSON;

/* One CSV cell: s as is, or quoted with each quote doubled when it holds a
 * comma, a quote or a line break. */
void db_format_csv_field(FILE *f, const char *s);

/* One CSV number: the shortest of %.15g / %.17g that reads back as v;
 * nothing when v is not finite. */
void db_format_csv_num(FILE *f, double v);

/* The byte counts of a record (db_show) as whole numbers, in place: the
 * records keep the planner's exact figures (products of fractions: 0.8 GiB
 * of CUDA context is 858993459.2 bytes), a byte count is read as a whole
 * number. A byte count is a number whose key ends in "_bytes", or any number
 * in an array under such a key. */
void db_format_round_bytes(struct cJSON *rec);

/* The main table of a record (db_show) as CSV: a simulation's stages, the
 * runs, a calibration's parameters (one row per fit and parameter), a bench
 * record's collectives (else its GEMMs), or each plan with its prediction.
 * The scalars of each element are the columns (the first element's, without
 * the ids that join the tables); nothing for an empty list. */
void db_format_record_csv(FILE *f, const struct cJSON *rec);

/* db_history's rows as a JSON array of objects, and as CSV. */
void db_format_history_json(FILE *f, const db_summary *rows, int n);
void db_format_history_csv(FILE *f, const db_summary *rows, int n);

/* db_compare's rows as a JSON array of objects (a missing time, error or
 * record is null), and as CSV (an empty cell). */
void db_format_compare_json(FILE *f, const db_compare_row *rows, int n);
void db_format_compare_csv(FILE *f, const db_compare_row *rows, int n);

#endif
