/*
 * data_csv.h: a small RFC 4180 CSV reader.
 *
 * The whole table is read into memory: the first record is the header, the
 * others are data rows, and every row must have exactly as many fields as
 * the header (a ragged row is an error naming its line). Fields may be
 * quoted; inside quotes, commas, line breaks and doubled quotes ("") are
 * data. Records end with CRLF, LF or a lone CR; the last one may end at the
 * end of the text. A UTF-8 byte-order mark before the header is skipped.
 * Blank lines (no characters at all) between records are skipped. A quote
 * inside an unquoted field, text after a closing quote, an unterminated
 * quote, a NUL byte and duplicate header names are errors.
 *
 * Cells are NUL-terminated strings owned by the table; an absent value is
 * the empty string "", never NULL.
 */
#ifndef SMD_DATA_CSV_H
#define SMD_DATA_CSV_H

#include <stddef.h>

#include "common/st.h"
#include "planner/plan_validate.h"

/* Limits that keep every count an int; far beyond any calibration table. */
#define DATA_CSV_MAX_COLS 4096
#define DATA_CSV_MAX_CELLS (64 * 1024 * 1024)

typedef struct data_csv {
    int ncols;
    int nrows;             /* data rows, the header excluded */
    char **header;         /* ncols column names */
    char **cells;          /* nrows x ncols, row-major */
    int *row_line;         /* 1-based line of the file where each data row starts */
    char *buf;             /* storage of every cell and name */
} data_csv;

/* Parse len bytes of text (need not be NUL-terminated). name is used in
 * messages ("runs.csv:12: ..."). On success csv owns its storage
 * (data_csv_free); on failure nothing is left allocated. ST_EPARSE with the
 * line for malformed text, ST_ENOMEM, ST_ERANGE past the limits above. */
int data_csv_parse(const char *text, size_t len, const char *name, data_csv *csv, st_err *err);

/* Read and parse a file (data_read_file limits apply). ST_ENOENT / ST_EIO
 * when it cannot be read. */
int data_csv_load(const char *path, data_csv *csv, st_err *err);

/* Release the table's storage; harmless on a zeroed or freed table. */
void data_csv_free(data_csv *csv);

/* Index of the column with this header name (exact match), or -1. */
int data_csv_col(const data_csv *csv, const char *name);

/* Cell at (row, col); "" when col is -1 (an absent column). row and col
 * must be in range otherwise. The string is borrowed from the table. */
const char *data_csv_get(const data_csv *csv, int row, int col);

/* Calibration runs (data/reference/calibration_runs.csv and files like it):
 * point rows[i] (csv->nrows entries, caller-allocated) at the cells of
 * data row i, one member per column of plan_validate_columns; a column the
 * file lacks reads as "". ST_EPARSE naming the first required column that
 * is missing (the file is not a runs table). The strings stay owned by csv. */
int data_csv_validate_rows(const data_csv *csv, const char *name, plan_validate_row *rows,
                           st_err *err);

#endif
