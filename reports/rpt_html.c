/*
 * rpt_html.c: index.html, every plot of a report with the table behind it.
 *
 * The page is one self-contained file: inline CSS, no script, no font or
 * image from elsewhere; images and data are linked by relative name, so the
 * directory can be copied or archived whole. Each plot is a <section
 * id=NAME> with its title, the PNG (a link to the SVG), a caption (what it
 * shows, and how to change and re-render it), and <table id=NAME-table>
 * made from the same rows as NAME.dat (helper columns hidden, long tables
 * cut at html_max_rows with a pointer to the file). Every piece of caller
 * text passes through rpt__html_str. Nothing here depends on the time or
 * the host: the same report gives the same bytes.
 */
#include "reports/rpt_int.h"

#include <string.h>

static const char style[] =
    "body { font-family: sans-serif; color: #222; max-width: 1240px; margin: 1.5em auto; "
    "padding: 0 1em; line-height: 1.4; }\n"
    "h1 { font-size: 1.6em; margin-bottom: 0.2em; }\n"
    "h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }\n"
    "p.note { color: #555; margin-top: 0; }\n"
    "figure { margin: 1em 0; }\n"
    "figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }\n"
    "figcaption { margin-top: 0.5em; }\n"
    "p.missing { background: #fff4d6; border: 1px solid #e3c56b; padding: 0.6em; }\n"
    "div.table { max-height: 32em; overflow: auto; border: 1px solid #ddd; }\n"
    "table { border-collapse: collapse; font-size: 0.85em; }\n"
    "th, td { border: 1px solid #ddd; padding: 2px 8px; white-space: nowrap; }\n"
    "th { background: #f2f2f2; position: sticky; top: 0; }\n"
    "td.num { text-align: right; font-variant-numeric: tabular-nums; }\n"
    "code { background: #f4f4f4; padding: 0 3px; }\n"
    "p.howto { font-style: italic; margin: 0.3em 0; }\n"
    "section#summary { background: #f6f8fa; border: 1px solid #d0d7de; padding: 0.2em 1em 1em; }\n"
    "section#summary dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }\n"
    "section#summary dt { font-weight: bold; }\n"
    "section#summary dd { margin: 0; }\n"
    "pre { background: #fff; border: 1px solid #ddd; padding: 0.6em; overflow: auto; }\n";

static void h(rpt__buf *b, const char *s)
{
    rpt__html_str(b, s);
}

static void table(rpt__buf *b, const rpt_report *r, const rpt__plot *p)
{
    const rpt__table *t = &p->table;
    rpt__buf_printf(b, "<div class=\"table\">\n<table id=\"%s-table\">\n<thead><tr>", p->name);
    for (int c = 0; c < t->ncols; c++)
        if (!(t->hidden_mask & (1u << c))) {
            rpt__buf_puts(b, "<th>");
            h(b, t->col[c]);
            rpt__buf_puts(b, "</th>");
        }
    rpt__buf_puts(b, "</tr></thead>\n<tbody>\n");
    int n = t->nrows < r->html_max_rows ? t->nrows : r->html_max_rows;
    for (int i = 0; i < n; i++) {
        rpt__buf_puts(b, "<tr>");
        for (int c = 0; c < t->ncols; c++) {
            if (t->hidden_mask & (1u << c))
                continue;
            rpt__buf_puts(b, t->text_mask & (1u << c) ? "<td>" : "<td class=\"num\">");
            h(b, rpt__table_get(t, i, c));
            rpt__buf_puts(b, "</td>");
        }
        rpt__buf_puts(b, "</tr>\n");
    }
    rpt__buf_puts(b, "</tbody>\n</table>\n</div>\n");
    if (n < t->nrows)
        rpt__buf_printf(b, "<p class=\"more\">The first %d of %d rows; all of them are in "
                           "<a href=\"%s.dat\">%s.dat</a>.</p>\n",
                        n, t->nrows, p->name, p->name);
}

/* A plot's heading and contents entry: what it is, then its title; the
 * plot's name in parentheses when another plot would read the same. */
static void heading(rpt__buf *b, const rpt_report *r, int i)
{
    const rpt__plot *p = r->plot[i];
    h(b, p->kind);
    if (strcmp(p->kind, p->title) != 0) {
        rpt__buf_puts(b, ": ");
        h(b, p->title);
    }
    for (int j = 0; j < r->nplots; j++)
        if (j != i && !strcmp(r->plot[j]->kind, p->kind) &&
            !strcmp(r->plot[j]->title, p->title)) {
            rpt__buf_printf(b, " (%s)", p->name);
            break;
        }
}

static void section(rpt__buf *b, const rpt_report *r, int i)
{
    const rpt__plot *p = r->plot[i];
    const char *n = p->name; /* [A-Za-z0-9_-]: safe in attributes and URLs as is */
    rpt__buf_printf(b, "<section id=\"%s\">\n<h2>", n);
    heading(b, r, i);
    rpt__buf_puts(b, "</h2>\n");
    if (p->howto) {
        rpt__buf_puts(b, "<p class=\"howto\">");
        h(b, p->howto);
        rpt__buf_puts(b, "</p>\n");
    }
    rpt__buf_puts(b, "<figure>\n");
    switch (p->render) {
    case RPT_RENDER_OK:
    case RPT_RENDER_OFF:
        rpt__buf_printf(b, "<a href=\"%s.svg\"><img src=\"%s.png\" width=\"%d\" height=\"%d\" "
                           "alt=\"",
                        n, n, p->width_px, p->height_px);
        h(b, p->title);
        rpt__buf_puts(b, "\"></a>\n");
        break;
    case RPT_RENDER_NO_GNUPLOT:
        rpt__buf_printf(b, "<p class=\"missing\">Not rendered: gnuplot was not found. Install "
                           "it (Debian/Ubuntu: <code>apt-get install gnuplot-nox</code>) and run "
                           "<code>gnuplot %s.gp</code> in this directory to make %s.png and "
                           "%s.svg.</p>\n",
                        n, n, n);
        break;
    case RPT_RENDER_FAILED:
        rpt__buf_printf(b, "<p class=\"missing\">Not rendered: gnuplot failed on %s.gp: ", n);
        h(b, p->render_msg);
        rpt__buf_puts(b, "</p>\n");
        break;
    }
    rpt__buf_puts(b, "<figcaption>");
    h(b, p->caption);
    if (p->render == RPT_RENDER_OK || p->render == RPT_RENDER_OFF)
        rpt__buf_printf(b, " The image as SVG: <a href=\"%s.svg\">%s.svg</a>.", n, n);
    rpt__buf_printf(b, " The data: <a href=\"%s.dat\">%s.dat</a> (the table below); the "
                       "script: <a href=\"%s.gp\">%s.gp</a>. To change the plot, edit either "
                       "file and run <code>gnuplot %s.gp</code> in this directory.</figcaption>\n"
                       "</figure>\n",
                    n, n, n, n, n);
    table(b, r, p);
    rpt__buf_puts(b, "</section>\n");
}

static int write_page(const rpt_report *r, const char *title, const char *note, st_err *err)
{
    if (!title || !*title)
        title = "smdplan report";
    rpt__buf b = {0};
    rpt__buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                      "<title>");
    h(&b, title);
    rpt__buf_puts(&b, "</title>\n<style>\n");
    rpt__buf_puts(&b, style);
    rpt__buf_puts(&b, "</style>\n</head>\n<body>\n<h1>");
    h(&b, title);
    rpt__buf_puts(&b, "</h1>\n");
    if (note && *note) {
        rpt__buf_puts(&b, "<p class=\"note\">");
        h(&b, note);
        rpt__buf_puts(&b, "</p>\n");
    }
    if (r->summary.n)
        rpt__buf_put(&b, r->summary.p, r->summary.n);
    if (r->nplots == 0) {
        rpt__buf_puts(&b, "<p>No plots: there was nothing recorded to show.</p>\n");
    } else {
        rpt__buf_puts(&b, "<nav>\n<ul>\n");
        if (r->summary.n)
            rpt__buf_puts(&b, "<li><a href=\"#summary\">Summary</a></li>\n");
        for (int i = 0; i < r->nplots; i++) {
            rpt__buf_printf(&b, "<li><a href=\"#%s\">", r->plot[i]->name);
            heading(&b, r, i);
            rpt__buf_puts(&b, "</a></li>\n");
        }
        rpt__buf_puts(&b, "</ul>\n</nav>\n");
    }
    for (int i = 0; i < r->nplots; i++)
        section(&b, r, i);
    rpt__buf_puts(&b, "</body>\n</html>\n");
    if (b.oom) {
        rpt__buf_fini(&b);
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory writing index.html");
    }
    int rc = rpt__write_file(r, "index", "html", b.p, b.n, err);
    rpt__buf_fini(&b);
    return rc;
}

int rpt_html_write(const rpt_report *r, const char *title, const char *note, st_err *err)
{
    rpt__locale loc;
    rpt__locale_enter(&loc);
    int rc = write_page(r, title, note, err);
    rpt__locale_leave(&loc);
    return rc;
}

int rpt_report_set_summary(rpt_report *r, const rpt_summary *s, st_err *err)
{
    rpt__buf b = {0};
    rpt__buf_puts(&b, "<section id=\"summary\">\n<h2>");
    h(&b, s->heading && *s->heading ? s->heading : "Summary");
    rpt__buf_puts(&b, "</h2>\n");
    if (s->lead && *s->lead) {
        rpt__buf_puts(&b, "<p>");
        h(&b, s->lead);
        rpt__buf_puts(&b, "</p>\n");
    }
    if (s->nfacts > 0 && s->facts) {
        rpt__buf_puts(&b, "<dl>\n");
        for (int i = 0; i < s->nfacts; i++) {
            rpt__buf_puts(&b, "<dt>");
            h(&b, s->facts[i].label);
            rpt__buf_puts(&b, "</dt><dd>");
            h(&b, s->facts[i].value);
            rpt__buf_puts(&b, "</dd>\n");
        }
        rpt__buf_puts(&b, "</dl>\n");
    }
    if (s->code && *s->code) {
        if (s->code_title && *s->code_title) {
            rpt__buf_puts(&b, "<p><strong>");
            h(&b, s->code_title);
            rpt__buf_puts(&b, "</strong></p>\n");
        }
        rpt__buf_puts(&b, "<pre>");
        h(&b, s->code);
        rpt__buf_puts(&b, "</pre>\n");
    }
    rpt__buf_puts(&b, "</section>\n");
    if (b.oom) {
        rpt__buf_fini(&b);
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    }
    rpt__buf_fini(&r->summary);
    r->summary = b;
    return ST_OK;
}
