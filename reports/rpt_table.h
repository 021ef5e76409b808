/*
 * rpt_table.h: tables and paragraphs that fit the terminal.
 *
 * The width is the terminal's when stdout is one, else $COLUMNS, else
 * unlimited (0); rpt_term_set_wide(1) (--wide, on any command line) makes
 * it unlimited. Cells and notes are copied; a column's head is borrowed
 * until the table is freed. Text goes to the FILE * given.
 */
#ifndef SMD_RPT_TABLE_H
#define SMD_RPT_TABLE_H

#include <stddef.h>
#include <stdio.h>

void rpt_term_set_wide(int on);
int rpt_term_width(void); /* 0: unlimited */
typedef struct rpt_table rpt_table;
rpt_table *rpt_table_new(void);
void rpt_table_free(rpt_table *t);
/* A column: right-aligned or not; priority 0 always shown, higher numbers
 * are left out first when the table is too wide, and a negative priority
 * moves the column under each row when that is not enough. Before the
 * first row. */
void rpt_table_col(rpt_table *t, const char *head, int right, int prio);
/* A column as rpt_table_col takes it, for tables whose columns are a list. */
typedef struct rpt_table_colspec {
    const char *head;
    int right, prio;
} rpt_table_colspec;
/* A new table with the n columns of cols, in order (each as rpt_table_col;
 * the heads borrowed as there); NULL when out of memory. */
rpt_table *rpt_table_new_cols(const rpt_table_colspec *cols, int n);
void rpt_table_row(rpt_table *t);
void rpt_table_cell(rpt_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line of text printed (wrapped) under the current row. */
void rpt_table_note(rpt_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print with each line prefixed by indent; returns the columns left out. */
int rpt_table_print(FILE *f, const rpt_table *t, const char *indent);
/* Text wrapped at spaces to the width: each line of text starts after
 * first, its continuations after rest. */
void rpt_term_wrap(FILE *f, const char *text, const char *first, const char *rest);
/* Every line of text wrapped: its continuations under the value of a
 * "key:  value" line, else four columns in from its own indent. */
void rpt_term_wrap_lines(FILE *f, const char *text);
/* Print into a buffer (rpt_term_capture gives the stream; NULL when it cannot
 * be made), then wrap what was printed onto f. */
typedef struct rpt_term_capture_buf {
    FILE *f;
    char *text;
    size_t n;
} rpt_term_capture_buf;
FILE *rpt_term_capture(rpt_term_capture_buf *c);
void rpt_term_capture_wrap(rpt_term_capture_buf *c, FILE *f, const char *first, const char *rest);

/* s for printing as one line: every C0 control, tab and newline included,
 * and DEL as \u00XX (malloc'd; NULL when out of memory). */
char *rpt_term_escape_line(const char *s);

#endif
