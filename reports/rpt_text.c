/*
 * rpt_text.c: the text helpers of reports/: a growing buffer, the quoting
 * of caller text for gnuplot data files, gnuplot scripts and HTML, and the
 * table behind each plot.
 *
 * Invariants: a buffer that failed to grow stays failed (oom) and drops
 * later appends, so writers check once at the end; a table's cells are
 * strings in one arena, addressed by offset (the arena moves as it grows).
 * Numbers are formatted with printf in the C locale the library runs in,
 * so files do not depend on the user's locale unless the program sets one.
 */
#include "reports/rpt_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rpt__buf_fini(rpt__buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int reserve(rpt__buf *b, size_t extra)
{
    if (b->oom)
        return 0;
    if (b->n + extra + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->oom = 1;
            return 0;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void rpt__buf_put(rpt__buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void rpt__buf_puts(rpt__buf *b, const char *s)
{
    rpt__buf_put(b, s, strlen(s));
}

void rpt__buf_vprintf(rpt__buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        rpt__buf_put(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    b->n += (size_t)n;
}

void rpt__buf_printf(rpt__buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rpt__buf_vprintf(b, fmt, ap);
    va_end(ap);
}

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

void rpt__gp_str(rpt__buf *b, const char *s)
{
    rpt__buf_put(b, "'", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '\'')
            rpt__buf_put(b, "''", 2);
        else if (is_control(*p))
            rpt__buf_put(b, " ", 1);
        else
            rpt__buf_put(b, (const char *)p, 1);
    }
    rpt__buf_put(b, "'", 1);
}

void rpt__dat_str(rpt__buf *b, const char *s)
{
    rpt__buf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"')
            rpt__buf_put(b, "'", 1);
        else if (is_control(*p))
            rpt__buf_put(b, " ", 1);
        else
            rpt__buf_put(b, (const char *)p, 1);
    }
    rpt__buf_put(b, "\"", 1);
}

void rpt__comment_str(rpt__buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
        rpt__buf_put(b, is_control(*p) ? " " : (const char *)p, 1);
}

void rpt__html_str(rpt__buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '&': rpt__buf_puts(b, "&amp;"); break;
        case '<': rpt__buf_puts(b, "&lt;"); break;
        case '>': rpt__buf_puts(b, "&gt;"); break;
        case '"': rpt__buf_puts(b, "&quot;"); break;
        case '\'': rpt__buf_puts(b, "&#39;"); break;
        case '\t':
        case '\n': rpt__buf_put(b, (const char *)p, 1); break;
        default:
            rpt__buf_put(b, is_control(*p) ? " " : (const char *)p, 1);
        }
    }
}

void rpt__gp_num(rpt__buf *b, double v)
{
    char s[64];
    snprintf(s, sizeof s, "%.6g", v);
    rpt__buf_puts(b, s);
    if (!strpbrk(s, ".eEn")) /* "inf"/"nan" never reach a script; keep it a float */
        rpt__buf_puts(b, ".0");
}

/* ------------------------------------------------------------------------ */
/* Table                                                                     */
/* ------------------------------------------------------------------------ */

static int in_list(const char *name, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(name, *list) == 0)
            return 1;
    return 0;
}

void rpt__table_init(rpt__table *t, const char *const *cols, const char *const *text,
                     const char *const *hidden)
{
    memset(t, 0, sizeof *t);
    for (; *cols && t->ncols < RPT__COLS_MAX; cols++, t->ncols++) {
        t->col[t->ncols] = *cols;
        if (in_list(*cols, text))
            t->text_mask |= 1u << t->ncols;
        if (in_list(*cols, hidden))
            t->hidden_mask |= 1u << t->ncols;
    }
    t->cur_col = t->ncols;
}

void rpt__table_fini(rpt__table *t)
{
    free(t->cell);
    free(t->block);
    rpt__buf_fini(&t->text);
    memset(t, 0, sizeof *t);
}

void rpt__table_row(rpt__table *t, int block)
{
    if (t->oom)
        return;
    /* A row left short (a writer bug) is padded so offsets stay valid. */
    while (t->nrows > 0 && t->cur_col < t->ncols)
        rpt__table_cell(t, RPT__MISSING);
    if (t->nrows == t->cap_rows) {
        int cap = t->cap_rows ? 2 * t->cap_rows : 64;
        size_t *cell = realloc(t->cell, (size_t)cap * (size_t)t->ncols * sizeof *cell);
        if (!cell) {
            t->oom = 1;
            return;
        }
        t->cell = cell;
        int *blk = realloc(t->block, (size_t)cap * sizeof *blk);
        if (!blk) {
            t->oom = 1;
            return;
        }
        t->block = blk;
        t->cap_rows = cap;
    }
    t->block[t->nrows] = block;
    t->nrows++;
    t->cur_col = 0;
}

void rpt__table_cell(rpt__table *t, const char *s)
{
    if (t->oom || t->nrows == 0 || t->cur_col >= t->ncols)
        return;
    size_t at = t->text.n;
    rpt__buf_put(&t->text, s, strlen(s) + 1); /* keeps its NUL: n moves past it */
    if (t->text.oom) {
        t->oom = 1;
        return;
    }
    t->cell[(size_t)(t->nrows - 1) * (size_t)t->ncols + (size_t)t->cur_col] = at;
    t->cur_col++;
}

void rpt__table_cellf(rpt__table *t, const char *fmt, ...)
{
    char s[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    rpt__table_cell(t, s);
}

void rpt__table_num(rpt__table *t, const char *fmt, double v)
{
    if (!isfinite(v)) {
        rpt__table_cell(t, RPT__MISSING);
        return;
    }
    char s[64];
    snprintf(s, sizeof s, fmt, v);
    if (strcmp(s, "-0") == 0 || strncmp(s, "-0.", 3) == 0) { /* no negative zero in files */
        int zero = 1;
        for (const char *c = s + 1; *c; c++)
            if (*c != '0' && *c != '.')
                zero = 0;
        if (zero)
            memmove(s, s + 1, strlen(s));
    }
    rpt__table_cell(t, s);
}

const char *rpt__table_get(const rpt__table *t, int row, int col)
{
    return t->text.p + t->cell[(size_t)row * (size_t)t->ncols + (size_t)col];
}
