/*
 * rpt_int.h: what the files of reports/ share: a growing text buffer, the
 * table behind a plot (written as NAME.dat and shown in index.html, so the
 * two never disagree), the report object and the steps every plot writer
 * takes (begin, fill the table and the script, finish).
 *
 * Text from the caller reaches three languages: gnuplot data files (quoted
 * strings, no escapes), gnuplot scripts (single-quoted strings, '' for ')
 * and HTML (entities). Each has one quoting function here; nothing else
 * writes caller text.
 */
#ifndef SMD_RPT_INT_H
#define SMD_RPT_INT_H

#include <locale.h>
#include <stdarg.h>
#include <stddef.h>

#include "reports/rpt.h"

/* ------------------------------------------------------------------------ */
/* Text buffer: appends never fail loudly; oom is sticky and checked once.  */
/* ------------------------------------------------------------------------ */

typedef struct rpt__buf {
    char *p;                     /* NUL-terminated when n > 0 */
    size_t n, cap;
    int oom;
} rpt__buf;

void rpt__buf_fini(rpt__buf *b);
void rpt__buf_put(rpt__buf *b, const char *s, size_t n);
void rpt__buf_puts(rpt__buf *b, const char *s);
void rpt__buf_printf(rpt__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rpt__buf_vprintf(rpt__buf *b, const char *fmt, va_list ap);

/* Caller text as a gnuplot single-quoted string literal: quotes included,
 * ' doubled, control characters as spaces (the terminals are noenhanced, so
 * no other character is special). NULL is ''. */
void rpt__gp_str(rpt__buf *b, const char *s);

/* Caller text as a gnuplot data-file string: double quotes included, a "
 * inside becomes ', control characters spaces (gnuplot's data files have no
 * escapes). */
void rpt__dat_str(rpt__buf *b, const char *s);

/* Caller text inside a '#' comment line (of a data file or script): control
 * characters as spaces, so it cannot end the comment. */
void rpt__comment_str(rpt__buf *b, const char *s);

/* Caller text as HTML text or attribute value: & < > " ' as entities,
 * control characters (but tab and newline) as spaces. */
void rpt__html_str(rpt__buf *b, const char *s);

/* ------------------------------------------------------------------------ */
/* Table: the rows of NAME.dat                                               */
/* ------------------------------------------------------------------------ */

#define RPT__COLS_MAX 16
#define RPT__MISSING "-"         /* a missing number (gnuplot: set datafile missing "-") */

typedef struct rpt__table {
    int ncols;
    const char *col[RPT__COLS_MAX]; /* names with units: static strings */
    unsigned text_mask;          /* bit c: column c holds text (quoted in .dat) */
    unsigned hidden_mask;        /* bit c: plotting helper, not shown in the HTML */
    int nrows, cap_rows;
    size_t *cell;                /* nrows * ncols offsets into text */
    int *block;                  /* block of each row: blocks are gnuplot's `index` */
    rpt__buf text;               /* cell strings, each NUL-terminated */
    int cur_col;                 /* cells added to the last row */
    int oom;
} rpt__table;

/* Columns from a NULL-terminated list of names; text columns are those whose
 * name is in the text list (also NULL-terminated), likewise hidden. */
void rpt__table_init(rpt__table *t, const char *const *cols, const char *const *text,
                     const char *const *hidden);
void rpt__table_fini(rpt__table *t);
/* Start a row in block (blocks never decrease). */
void rpt__table_row(rpt__table *t, int block);
/* The next cell of the current row. */
void rpt__table_cell(rpt__table *t, const char *s);
void rpt__table_cellf(rpt__table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A number with fmt, or RPT__MISSING when !isfinite(v). */
void rpt__table_num(rpt__table *t, const char *fmt, double v);
const char *rpt__table_get(const rpt__table *t, int row, int col);

/* ------------------------------------------------------------------------ */
/* Report and plots                                                          */
/* ------------------------------------------------------------------------ */

typedef struct rpt__plot {
    char name[RPT_NAME_MAX];
    char *kind;                  /* owned: what the plot is ("Step time over TP x PP"), for
                                  * its heading beside the title */
    char *title;                 /* owned */
    char *howto;                 /* owned: one sentence on how to read it; may be NULL */
    char *caption;               /* owned: what the plot shows (no re-render hint) */
    int width_px, height_px;
    rpt__table table;
    rpt_render render;
    char render_msg[ST_MSG_MAX]; /* why rendering failed */
} rpt__plot;

struct rpt_report {
    char *dir;                   /* owned */
    rpt__buf summary;            /* the page's summary section, HTML (rpt_report_set_summary) */
    int render;
    char *gnuplot;               /* owned: program name or path */
    int width_px, height_px;
    int html_max_rows;
    int replace;                 /* rpt_config.replace */
    rpt__plot **plot;            /* owned, in order written */
    int nplots, cap_plots;
};

/* Start a plot: check the name (default if NULL) is valid and unused and
 * (without r->replace) that none of its files is in the directory, copy the
 * title (default if NULL), size the image. ST_EINVAL / ST_ENOMEM. */
int rpt__plot_begin(rpt_report *r, const char *name, const char *default_name,
                    const char *title, const char *default_title, int width_px,
                    int height_px, rpt__plot **out, st_err *err);
/* Set the plot's sentence on how to read it (copied). */
void rpt__plot_howto(rpt__plot *p, const char *text);
/* Drop a plot that was begun but not finished. */
void rpt__plot_free(rpt__plot *p);

/* The common head of every script: a comment block (what, how to re-run),
 * encoding and the missing-value marker. */
void rpt__gp_head(rpt__buf *gp, const rpt__plot *p, const char *what);
/* Open the loop over the two outputs (png, svg) and set the terminal; the
 * plot commands follow, then rpt__gp_loop_end. */
void rpt__gp_loop_begin(rpt__buf *gp, const rpt__plot *p);
void rpt__gp_loop_end(rpt__buf *gp);

/* Finish a plot: write NAME.dat (from p->table, with a header naming what
 * and the columns) and NAME.gp (the text of gp), render it when asked, set
 * the caption, and hand p to r (on every path: on an error p is freed);
 * gp and caption are emptied (rpt__buf_fini) on every path.
 * Returns ST_OK, ST_ENOMEM, ST_EIO (files, or gnuplot failed: p is kept with
 * RPT_RENDER_FAILED). */
int rpt__plot_finish(rpt_report *r, rpt__plot *p, const char *dat_what, rpt__buf *gp,
                     rpt__buf *caption, rpt_render *render, st_err *err);

/* Write n bytes of text to DIR/NAME.EXT. ST_EIO / ST_ENOMEM. */
int rpt__write_file(const rpt_report *r, const char *name, const char *ext, const char *text,
                    size_t n, st_err *err);

/* Run gnuplot on script (a file name in dir) with dir as its working
 * directory; set (NULL: none) is a command run first (gnuplot -e set). *out gets RPT_RENDER_OK or RPT_RENDER_NO_GNUPLOT (program not
 * found or not executable: returns ST_OK); a run that fails returns ST_EIO
 * with gnuplot's last error line (and *out = RPT_RENDER_FAILED). */
int rpt__gnuplot_run(const char *program, const char *dir, const char *set, const char *script,
                     rpt_render *out, st_err *err);

/* Numbers in the files are read by gnuplot and by people in any locale, so
 * every public writer formats them in the "C" numeric locale (a '.' before
 * the decimals), whatever setlocale() the program made: enter at the start
 * of the call, leave before returning. Thread-local (uselocale). When the C
 * locale object cannot be made, the caller's locale stays. */
typedef struct rpt__locale {
    locale_t c, old;
} rpt__locale;
void rpt__locale_enter(rpt__locale *l);
void rpt__locale_leave(rpt__locale *l);

/* A plot's writer: the plot of in (the plot's own input struct) into r. */
typedef int (*rpt__plot_writer)(rpt_report *r, const void *in, rpt_render *render, st_err *err);
/* write(r, in, render, err) in the "C" numeric locale, as every public
 * plot writer (rpt_grid_write and the like) calls it. */
int rpt__plot_write_c(rpt__plot_writer write, rpt_report *r, const void *in, rpt_render *render,
                      st_err *err);

/* Format a double for a script (%.6g, always with a decimal point or an
 * exponent so gnuplot does not read it as an integer). */
void rpt__gp_num(rpt__buf *b, double v);

#define RPT__GIB 1073741824.0    /* bytes in a GiB */

/* Colours of the series of a plot (Okabe-Ito, colour-blind safe, as every
 * plot uses); point types cycle with them. Defined in rpt_gnuplot.c. */
extern const char *const rpt__series_color[];
#define RPT_NCOLORS 10
/* Colours of the timeline's kinds of op (F, B, Bi, W, sendF, sendB, recvF,
 * recvB, bucket; rpt_timeline.c). */
#define RPT_TIMELINE_KINDS 9
extern const char *const rpt__timeline_color[];

#endif
