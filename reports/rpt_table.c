/*
 * rpt_table.c: tables and paragraphs that fit the terminal.
 *
 * The width is the terminal's when stdout is one, else $COLUMNS when set,
 * else unlimited (a file or a pipe gets every column, as with --wide, which
 * cli_main takes from any command line). A table sizes each column to its
 * widest cell; when the row is wider than the width it leaves out columns,
 * those of the highest priority number first (priority 0 columns always
 * stay), keeps the others in their order, and says under the table which it
 * left out and that --wide shows them. A paragraph is wrapped at spaces to
 * the width with a hanging indent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "reports/rpt_table.h"

#define TABLE_COLS_MAX 48
#define CELL_MAX 256

static int wide_flag;

void rpt_term_set_wide(int on)
{
    wide_flag = on;
}

int rpt_term_width(void)
{
    if (wide_flag)
        return 0;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col < 40 ? 40 : ws.ws_col;
    const char *c = getenv("COLUMNS");
    if (c && *c) {
        long v = strtol(c, NULL, 10);
        if (v > 0)
            return v < 40 ? 40 : v > 10000 ? 10000 : (int)v;
    }
    return 0;
}

/* Columns a UTF-8 string takes (continuation bytes take none). */
static int text_width(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

struct rpt_table {
    int ncols;
    const char *head[TABLE_COLS_MAX];
    int right[TABLE_COLS_MAX];
    int prio[TABLE_COLS_MAX];
    int nrows, cap;
    char **cell;                 /* nrows * ncols, owned */
    int cur;                     /* cells filled in the last row */
    char **note;                 /* a line printed under row i (may be NULL), owned */
};

rpt_table *rpt_table_new(void)
{
    return calloc(1, sizeof(rpt_table));
}

void rpt_table_free(rpt_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nrows * t->ncols; i++)
        free(t->cell[i]);
    for (int i = 0; i < t->nrows; i++)
        free(t->note[i]);
    free(t->cell);
    free(t->note);
    free(t);
}

void rpt_table_col(rpt_table *t, const char *head, int right, int prio)
{
    if (t->ncols == TABLE_COLS_MAX || t->nrows)
        return;
    t->head[t->ncols] = head;
    t->right[t->ncols] = right;
    t->prio[t->ncols] = prio;
    t->ncols++;
}

rpt_table *rpt_table_new_cols(const rpt_table_colspec *cols, int n)
{
    rpt_table *t = rpt_table_new();
    for (int i = 0; t && i < n; i++)
        rpt_table_col(t, cols[i].head, cols[i].right, cols[i].prio);
    return t;
}

void rpt_table_row(rpt_table *t)
{
    if (t->nrows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        char **c = realloc(t->cell, (size_t)cap * (size_t)t->ncols * sizeof *c);
        if (!c)
            return;
        t->cell = c;
        char **n = realloc(t->note, (size_t)cap * sizeof *n);
        if (!n)
            return;
        t->note = n;
        t->cap = cap;
    }
    for (int c = 0; c < t->ncols; c++)
        t->cell[t->nrows * t->ncols + c] = NULL;
    t->note[t->nrows] = NULL;
    t->nrows++;
    t->cur = 0;
}

void rpt_table_cell(rpt_table *t, const char *fmt, ...)
{
    if (!t->nrows || t->cur >= t->ncols)
        return;
    char buf[CELL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* a cell is one line: a newline or tab in a name is shown escaped */
    t->cell[(t->nrows - 1) * t->ncols + t->cur++] = rpt_term_escape_line(buf);
}

void rpt_table_note(rpt_table *t, const char *fmt, ...)
{
    if (!t->nrows)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(t->note[t->nrows - 1]);
    t->note[t->nrows - 1] = strdup(buf);
}

static const char *get(const rpt_table *t, int r, int c)
{
    const char *s = t->cell[r * t->ncols + c];
    return s ? s : "";
}

int rpt_table_print(FILE *f, const rpt_table *t, const char *indent)
{
    int width = rpt_term_width(), ind = text_width(indent);
    int w[TABLE_COLS_MAX], show[TABLE_COLS_MAX];
    for (int c = 0; c < t->ncols; c++) {
        w[c] = text_width(t->head[c]);
        for (int r = 0; r < t->nrows; r++) {
            int k = text_width(get(t, r, c));
            if (k > w[c])
                w[c] = k;
        }
        show[c] = 1;
    }
    /* too wide: first the columns that may go under their row go there */
    int under[TABLE_COLS_MAX] = {0}, nunder = 0;
    {
        int total = ind;
        for (int c = 0, first = 1; c < t->ncols; c++)
            if (show[c])
                total += w[c] + (first ? 0 : 2), first = 0;
        if (width && total > width)
            for (int c = 0; c < t->ncols; c++)
                if (show[c] && t->prio[c] < 0) {
                    show[c] = 0;
                    under[c] = 1;
                    nunder++;
                }
    }
    /* then leave out the columns of the highest priority number first,
     * the right-most of them first, until the row fits */
    int dropped = 0;
    for (;;) {
        int total = ind;
        for (int c = 0, first = 1; c < t->ncols; c++)
            if (show[c])
                total += w[c] + (first ? 0 : 2), first = 0;
        if (!width || total <= width)
            break;
        int victim = -1;
        for (int c = t->ncols - 1; c >= 0; c--)
            if (show[c] && t->prio[c] > 0 && (victim < 0 || t->prio[c] > t->prio[victim]))
                victim = c;
        if (victim < 0)
            break;
        show[victim] = 0;
        dropped++;
    }
    for (int r = -1; r < t->nrows; r++) {
        char *line = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&line, &len);
        if (!m)
            return dropped;
        fputs(indent, m);
        int first = 1;
        for (int c = 0; c < t->ncols; c++) {
            if (!show[c])
                continue;
            const char *s = r < 0 ? t->head[c] : get(t, r, c);
            int pad = w[c] - text_width(s);
            if (!first)
                fputs("  ", m);
            if (t->right[c])
                fprintf(m, "%*s%s", pad, "", s);
            else
                fprintf(m, "%s%*s", s, pad, "");
            first = 0;
        }
        fclose(m);
        while (len > 0 && line[len - 1] == ' ') /* no trailing blanks */
            len--;
        fprintf(f, "%.*s\n", (int)len, line);
        free(line);
        for (int c = 0; r >= 0 && nunder && c < t->ncols; c++)
            if (under[c]) {
                char lead[64];
                snprintf(lead, sizeof lead, "%s    %s: ", indent, t->head[c]);
                rpt_term_wrap(f, get(t, r, c), lead, "        ");
            }
        if (r >= 0 && t->note[r])
            rpt_term_wrap(f, t->note[r], "      ", "      ");
    }
    if (dropped) {
        char list[512] = "";
        size_t u = 0;
        for (int c = 0; c < t->ncols; c++)
            if (!show[c] && !under[c] && u + 2 < sizeof list)
                u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", u ? ", " : "",
                                      t->head[c]);
        char line[700];
        snprintf(line, sizeof line, "(to fit %d columns, %d column%s left out: %s; --wide shows "
                 "every column)", width, dropped, dropped == 1 ? " is" : "s are", list);
        rpt_term_wrap(f, line, indent, indent);
    }
    return dropped;
}

FILE *rpt_term_capture(rpt_term_capture_buf *c)
{
    c->text = NULL;
    c->n = 0;
    return c->f = open_memstream(&c->text, &c->n);
}

void rpt_term_capture_wrap(rpt_term_capture_buf *c, FILE *f, const char *first, const char *rest)
{
    if (!c->f)
        return;
    fclose(c->f);
    c->f = NULL;
    if (c->text)
        rpt_term_wrap(f, c->text, first, rest);
    free(c->text);
    c->text = NULL;
}

void rpt_term_wrap(FILE *f, const char *text, const char *first, const char *rest)
{
    int width = rpt_term_width();
    const char *ind = first;
    const char *p = text;
    while (*p) {
        int avail = width ? width - text_width(ind) : 0;
        if (avail < 20)
            avail = width ? 20 : 0;
        size_t len = strlen(p);
        const char *nl = strchr(p, '\n');
        size_t line = nl ? (size_t)(nl - p) : len;
        size_t take = line;
        if (avail && text_width(p) > 0) {
            /* the longest prefix of the line within avail columns that ends at a space */
            int cols = 0;
            size_t last_space = 0, i;
            for (i = 0; i < line; i++) {
                if (((unsigned char)p[i] & 0xc0) != 0x80)
                    cols++;
                if (cols > avail)
                    break;
                if (p[i] == ' ')
                    last_space = i;
            }
            if (i < line)
                take = last_space > 0 ? last_space : i;
        }
        size_t shown = take;
        while (shown > 0 && p[shown - 1] == ' ')
            shown--;
        fprintf(f, "%s%.*s\n", ind, (int)shown, p);
        p += take;
        while (*p == ' ')
            p++;
        ind = rest;
        if (*p == '\n') { /* a new line of the text starts at first again */
            p++;
            ind = first;
        }
    }
}

void rpt_term_wrap_lines(FILE *f, const char *text)
{
    char rest[64], first[1];
    first[0] = '\0';
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        /* continuation under the value of a "key:  value" line, else four
         * columns in from the line's own indent */
        size_t lead = 0, at = 0;
        while (lead < len && p[lead] == ' ')
            lead++;
        const char *colon = memchr(p, ':', len < 16 ? len : 16);
        if (colon && colon > p + lead && colon[1] == ' ') {
            at = (size_t)(colon - p) + 1;
            while (at < len && p[at] == ' ')
                at++;
        }
        if (!at || at > 24)
            at = lead + 4;
        if (at >= sizeof rest)
            at = sizeof rest - 1;
        memset(rest, ' ', at);
        rest[at] = '\0';
        char *line = strndup(p, len);
        if (line) {
            if (!*line)
                fputc('\n', f);
            else
                rpt_term_wrap(f, line, first, rest);
            free(line);
        }
        p += len;
        if (*p == '\n')
            p++;
    }
}

char *rpt_term_escape_line(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += (unsigned char)*p < 0x20 || *p == 0x7f ? 6 : 1;
    char *out = malloc(n + 1), *o = out;
    for (const char *p = s; out && *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            o += sprintf(o, "\\u%04x", c);
        else
            *o++ = (char)c;
    }
    if (out)
        *o = '\0';
    return out;
}
