/*
 * data_csv.c: the RFC 4180 CSV reader (see data_csv.h for the grammar).
 *
 * One pass over the text. Field bytes are copied, unquoted, into one buffer
 * of len + 1 bytes: a field's output (its data plus a NUL) never exceeds the
 * input it consumes (its bytes plus the delimiter after it), except the last
 * field of a text with no final line break, which needs the one extra byte.
 * Field starts are kept as offsets in a growing array and become pointers
 * only at the end, so the arrays may move while they grow.
 */
#include "data/data_csv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

typedef struct parser {
    const char *name;
    const char *p, *end;
    int line;              /* current physical line, 1-based */
    char *out;             /* cell storage */
    size_t nout;
    size_t *offs;          /* start of every field in out */
    size_t noffs, capoffs;
    int *lines;            /* line where each record starts */
    size_t nrecs, caprecs;
    int ncols;
    st_err *err;
} parser;

/* Make room for one more element in a growing array. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem, st_err *err)
{
    if (n < *cap)
        return ST_OK;
    size_t nc = *cap ? *cap * 2 : 64;
    if (nc > SIZE_MAX / elem)
        return ST_RAISE(err, ST_ENOMEM, "CSV table too large");
    void *q = realloc(*arr, nc * elem);
    if (!q)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate %zu bytes for a CSV table", nc * elem);
    *arr = q;
    *cap = nc;
    return ST_OK;
}

static int is_eol(char c)
{
    return c == '\n' || c == '\r';
}

/* Step over one line break (CRLF, LF or CR) at x->p. */
static void skip_eol(parser *x)
{
    if (*x->p == '\r' && x->p + 1 < x->end && x->p[1] == '\n')
        x->p++;
    x->p++;
    x->line++;
}

static int field_quoted(parser *x)
{
    int qline = x->line;
    x->p++; /* opening quote */
    for (;;) {
        if (x->p == x->end)
            return ST_RAISE(x->err, ST_EPARSE, "%s:%d: quoted field never closed", x->name, qline);
        char c = *x->p;
        if (c == '"') {
            if (x->p + 1 < x->end && x->p[1] == '"') { /* "" is a quote */
                x->out[x->nout++] = '"';
                x->p += 2;
                continue;
            }
            x->p++;
            break;
        }
        if (c == '\0')
            return ST_RAISE(x->err, ST_EPARSE, "%s:%d: NUL byte in a field", x->name, x->line);
        /* A line break inside quotes is data; count it once (CRLF at its LF). */
        if (c == '\n' || (c == '\r' && !(x->p + 1 < x->end && x->p[1] == '\n')))
            x->line++;
        x->out[x->nout++] = c;
        x->p++;
    }
    if (x->p < x->end && *x->p != ',' && !is_eol(*x->p))
        return ST_RAISE(x->err, ST_EPARSE, "%s:%d: text after a closing quote (a quote inside a "
                        "quoted field is written \"\")", x->name, x->line);
    return ST_OK;
}

static int field_plain(parser *x)
{
    while (x->p < x->end && *x->p != ',' && !is_eol(*x->p)) {
        char c = *x->p;
        if (c == '"')
            return ST_RAISE(x->err, ST_EPARSE,
                            "%s:%d: quote inside an unquoted field (quote the whole field and "
                            "double the quote)", x->name, x->line);
        if (c == '\0')
            return ST_RAISE(x->err, ST_EPARSE, "%s:%d: NUL byte in a field", x->name, x->line);
        x->out[x->nout++] = c;
        x->p++;
    }
    return ST_OK;
}

/* One record starting at x->p (not at a blank line). */
static int record(parser *x)
{
    int rc, rec_line = x->line;
    size_t first = x->noffs;
    for (;;) {
        if (x->noffs - first >= DATA_CSV_MAX_COLS)
            return ST_RAISE(x->err, ST_ERANGE, "%s:%d: more than %d fields", x->name, rec_line,
                            DATA_CSV_MAX_COLS);
        if (x->noffs >= DATA_CSV_MAX_CELLS)
            return ST_RAISE(x->err, ST_ERANGE, "%s:%d: more than %d cells in the table", x->name,
                            rec_line, DATA_CSV_MAX_CELLS);
        if ((rc = grow((void **)&x->offs, &x->capoffs, x->noffs, sizeof *x->offs, x->err)))
            return rc;
        x->offs[x->noffs++] = x->nout;
        rc = (x->p < x->end && *x->p == '"') ? field_quoted(x) : field_plain(x);
        if (rc)
            return rc;
        x->out[x->nout++] = '\0';
        if (x->p < x->end && *x->p == ',') {
            x->p++;
            continue;
        }
        if (x->p < x->end)
            skip_eol(x);
        break;
    }
    int nf = (int)(x->noffs - first);
    if (x->nrecs == 0)
        x->ncols = nf;
    else if (nf != x->ncols)
        return ST_RAISE(x->err, ST_EPARSE, "%s:%d: %d field%s, the header has %d", x->name,
                        rec_line, nf, nf == 1 ? "" : "s", x->ncols);
    if ((rc = grow((void **)&x->lines, &x->caprecs, x->nrecs, sizeof *x->lines, x->err)))
        return rc;
    x->lines[x->nrecs++] = rec_line;
    return ST_OK;
}

void data_csv_free(data_csv *csv)
{
    if (!csv)
        return;
    free(csv->header); /* cells point into the same array */
    free(csv->row_line);
    free(csv->buf);
    memset(csv, 0, sizeof *csv);
}

int data_csv_parse(const char *text, size_t len, const char *name, data_csv *csv, st_err *err)
{
    memset(csv, 0, sizeof *csv);
    if (!name)
        name = "CSV";
    parser x = {.name = name, .p = text, .end = text + len, .line = 1, .err = err};
    char **ptrs = NULL;
    int rc = ST_OK;

    if (len == SIZE_MAX)
        return ST_RAISE(err, ST_ERANGE, "%s: text too large", name);
    x.out = malloc(len + 1);
    if (!x.out)
        return ST_RAISE(err, ST_ENOMEM, "%s: cannot allocate %zu bytes", name, len + 1);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        x.p += 3;

    while (x.p < x.end) {
        if (is_eol(*x.p)) { /* blank line */
            skip_eol(&x);
            continue;
        }
        if ((rc = record(&x)))
            goto fail;
    }
    if (x.nrecs == 0) {
        rc = ST_RAISE(err, ST_EPARSE, "%s: empty: no header line", name);
        goto fail;
    }
    for (int i = 0; i < x.ncols; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(x.out + x.offs[i], x.out + x.offs[j]) == 0) {
                rc = ST_RAISE(err, ST_EPARSE, "%s:%d: column '%s' appears twice in the header",
                              name, x.lines[0], x.out + x.offs[i]);
                goto fail;
            }

    ptrs = malloc(x.noffs * sizeof *ptrs);
    if (!ptrs) {
        rc = ST_RAISE(err, ST_ENOMEM, "%s: cannot allocate the cell table", name);
        goto fail;
    }
    for (size_t i = 0; i < x.noffs; i++)
        ptrs[i] = x.out + x.offs[i];
    /* The header's line is dropped: row_line[i] is data row i's line. */
    memmove(x.lines, x.lines + 1, (x.nrecs - 1) * sizeof *x.lines);

    csv->ncols = x.ncols;
    csv->nrows = (int)(x.nrecs - 1);
    csv->header = ptrs;
    csv->cells = ptrs + x.ncols;
    csv->row_line = x.lines;
    csv->buf = x.out;
    free(x.offs);
    return ST_OK;
fail:
    free(ptrs);
    free(x.offs);
    free(x.lines);
    free(x.out);
    return rc;
}

int data_csv_load(const char *path, data_csv *csv, st_err *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(csv, 0, sizeof *csv);
    int rc = data_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = data_csv_parse(text, len, path, csv, err);
    free(text);
    return rc;
}

int data_csv_col(const data_csv *csv, const char *name)
{
    for (int i = 0; i < csv->ncols; i++)
        if (strcmp(csv->header[i], name) == 0)
            return i;
    return -1;
}

const char *data_csv_get(const data_csv *csv, int row, int col)
{
    if (col < 0)
        return "";
    return csv->cells[(size_t)row * (size_t)csv->ncols + (size_t)col];
}

int data_csv_validate_rows(const data_csv *csv, const char *name, plan_validate_row *rows,
                           st_err *err)
{
    enum { MAX_COLUMNS = 64 };
    int idx[MAX_COLUMNS];
    int ncol = 0;
    while (plan_validate_columns[ncol].name)
        if (++ncol == MAX_COLUMNS)
            return ST_RAISE(err, ST_EINTERNAL, "more than %d validation columns", MAX_COLUMNS);
    for (int k = 0; k < ncol; k++) {
        const plan_validate_column *c = &plan_validate_columns[k];
        idx[k] = data_csv_col(csv, c->name);
        if (idx[k] < 0 && c->required)
            return ST_RAISE(err, ST_EPARSE,
                            "%s: no column '%s': not a table of training runs (see "
                            "data/reference/calibration_runs.csv for the columns)",
                            name ? name : "CSV", c->name);
    }
    for (int i = 0; i < csv->nrows; i++) {
        memset(&rows[i], 0, sizeof rows[i]);
        for (int k = 0; k < ncol; k++) {
            const char **slot =
                (const char **)(void *)((char *)&rows[i] + plan_validate_columns[k].offset);
            *slot = data_csv_get(csv, i, idx[k]);
        }
    }
    return ST_OK;
}
