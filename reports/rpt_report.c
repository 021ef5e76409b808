/*
 * rpt_report.c: the report object and the steps every plot shares: name
 * checks, writing NAME.dat from the plot's table and NAME.gp from its
 * script, rendering with gnuplot, and keeping the plot for the page.
 *
 * Every script has the same shape (rpt__gp_head, the plot's settings, then
 * a loop over the two outputs): gnuplot 5.2+ evaluates the plot commands once
 * per terminal, so a multiplot renders to both PNG and SVG, and a user who
 * edits the script changes both images. Terminals are noenhanced, so caller
 * text needs no escaping beyond gnuplot's quotes.
 */
#include "reports/rpt_int.h"

#include "common/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_HTML_ROWS 200

void rpt__locale_enter(rpt__locale *l)
{
    l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    l->old = l->c ? uselocale(l->c) : (locale_t)0;
}

void rpt__locale_leave(rpt__locale *l)
{
    if (!l->c)
        return;
    uselocale(l->old);
    freelocale(l->c);
    l->c = (locale_t)0;
}

int rpt__plot_write_c(rpt__plot_writer write, rpt_report *r, const void *in, rpt_render *render,
                      st_err *err)
{
    rpt__locale loc;
    rpt__locale_enter(&loc);
    int rc = write(r, in, render, err);
    rpt__locale_leave(&loc);
    return rc;
}

void rpt_config_default(rpt_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->render = 1;
    cfg->html_max_rows = DEFAULT_HTML_ROWS;
}

const char *rpt_render_name(rpt_render r)
{
    switch (r) {
    case RPT_RENDER_OK: return "rendered";
    case RPT_RENDER_OFF: return "off";
    case RPT_RENDER_NO_GNUPLOT: return "no gnuplot";
    case RPT_RENDER_FAILED: return "failed";
    }
    return "?";
}

const char *rpt_gnuplot_hint(void)
{
    return "gnuplot not found: install it (Debian/Ubuntu: apt-get install gnuplot-nox) or set "
           "SMDPLAN_GNUPLOT to its path; the .dat and .gp files are written, run `gnuplot "
           "NAME.gp` in the report directory to make the images";
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* mkdir -p: create dir and its missing parents. */
static int make_dirs(const char *dir, st_err *err)
{
    char *path = dup_str(dir);
    if (!path)
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    int rc = ST_OK;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            char shown[ST_PATH_SHOWN];
            rc = ST_RAISE(err, st_errno_status(errno), "report: cannot create directory '%s': %s",
                          st_path_fit(path, shown, sizeof shown), strerror(errno));
            break;
        }
        *p = c;
        if (c == '\0')
            break;
    }
    free(path);
    if (rc != ST_OK)
        return rc;
    struct stat st;
    char shown[ST_PATH_SHOWN];
    st_path_fit(dir, shown, sizeof shown);
    if (stat(dir, &st) != 0)
        return ST_RAISE(err, st_errno_status(errno), "report: '%s': %s", shown, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return ST_RAISE(err, ST_EINVAL, "report: '%s' is not a directory (--out names the "
                        "directory to write the report in)", shown);
    if (access(dir, W_OK | X_OK) != 0)
        return ST_RAISE(err, st_errno_status(errno), "report: cannot write in '%s': %s", shown,
                        strerror(errno));
    return ST_OK;
}

/* The names the report's own plots take by default, and the page. */
static const char *const default_names[] = {"index", "memory", "grid", "scaling", "timeline",
                                            "accuracy", "stages", NULL};
static const char *const plot_exts[] = {"dat", "gp", "png", "svg", NULL};

/* The files named name (index: index.html; a plot: NAME.dat, .gp, .png,
 * .svg) in dir may be written under the rule of common/outfile.h. */
static int files_free(const char *dir, const char *name, int replace, st_err *err)
{
    int rc = ST_OK;
    for (int i = 0; rc == ST_OK && plot_exts[i]; i++) {
        int page = strcmp(name, "index") == 0;
        if (page && i > 0)
            break;
        rpt__buf path = {0};
        rpt__buf_printf(&path, "%s/%s.%s", dir, name, page ? "html" : plot_exts[i]);
        rc = path.oom ? ST_RAISE(err, ST_ENOMEM, "report: out of memory")
                      : outfile_check(path.p, "report", replace, err);
        rpt__buf_fini(&path);
    }
    return rc;
}

int rpt_report_new(const char *dir, const rpt_config *cfg, rpt_report **out, st_err *err)
{
    *out = NULL;
    rpt_config def;
    if (!cfg) {
        rpt_config_default(&def);
        cfg = &def;
    }
    if (!dir || !*dir)
        return ST_RAISE(err, ST_EINVAL, "report: no output directory given");
    if (cfg->width_px < 0 || cfg->height_px < 0 || cfg->width_px > RPT_IMAGE_MAX_PX ||
        cfg->height_px > RPT_IMAGE_MAX_PX ||
        (cfg->width_px > 0 && cfg->width_px < 200) || (cfg->height_px > 0 && cfg->height_px < 150))
        return ST_RAISE(err, ST_EINVAL,
                        "report: image size %d x %d px out of range (200..%d x 150..%d, or 0)",
                        cfg->width_px, cfg->height_px, RPT_IMAGE_MAX_PX, RPT_IMAGE_MAX_PX);
    if (cfg->html_max_rows < 1)
        return ST_RAISE(err, ST_EINVAL, "report: html_max_rows %d must be at least 1",
                        cfg->html_max_rows);
    const char *prog = cfg->gnuplot;
    if (!prog) {
        prog = getenv("SMDPLAN_GNUPLOT");
        if (!prog || !*prog)
            prog = "gnuplot";
    }
    if (!*prog)
        return ST_RAISE(err, ST_EINVAL, "report: empty gnuplot program name");

    int rc = make_dirs(dir, err);
    if (rc != ST_OK)
        return rc;
    /* a report already there (without replace), or a file that may not be
     * replaced even then (a link): refused before anything is written */
    for (int i = 0; default_names[i]; i++) {
        rc = files_free(dir, default_names[i], cfg->replace, err);
        if (rc != ST_OK)
            return rc;
    }
    rpt_report *r = calloc(1, sizeof *r);
    if (!r)
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    r->dir = dup_str(dir);
    r->gnuplot = dup_str(prog);
    if (!r->dir || !r->gnuplot) {
        rpt_report_free(r);
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    }
    r->render = cfg->render != 0;
    r->width_px = cfg->width_px;
    r->height_px = cfg->height_px;
    r->html_max_rows = cfg->html_max_rows;
    r->replace = cfg->replace != 0;
    *out = r;
    return ST_OK;
}

void rpt__plot_howto(rpt__plot *p, const char *text)
{
    free(p->howto);
    p->howto = text ? dup_str(text) : NULL;
}

void rpt__plot_free(rpt__plot *p)
{
    if (!p)
        return;
    free(p->kind);
    free(p->howto);
    free(p->title);
    free(p->caption);
    rpt__table_fini(&p->table);
    free(p);
}

void rpt_report_free(rpt_report *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nplots; i++)
        rpt__plot_free(r->plot[i]);
    free(r->plot);
    rpt__buf_fini(&r->summary);
    free(r->dir);
    free(r->gnuplot);
    free(r);
}

rpt_render rpt_report_render(const rpt_report *r)
{
    rpt_render worst = RPT_RENDER_OK;
    for (int i = 0; i < r->nplots; i++)
        if (r->plot[i]->render > worst)
            worst = r->plot[i]->render;
    return worst;
}

int rpt_report_nplots(const rpt_report *r)
{
    return r->nplots;
}

const char *rpt_report_plot_name(const rpt_report *r, int i)
{
    return i >= 0 && i < r->nplots ? r->plot[i]->name : NULL;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= RPT_NAME_MAX || strcmp(s, "index") == 0)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return 0;
    return 1;
}

int rpt__plot_begin(rpt_report *r, const char *name, const char *default_name,
                    const char *title, const char *default_title, int width_px,
                    int height_px, rpt__plot **out, st_err *err)
{
    *out = NULL;
    if (!name)
        name = default_name;
    if (!valid_name(name))
        return ST_RAISE(err, ST_EINVAL,
                        "report: plot name '%.80s' must be 1..%d letters, digits, '_' or '-' "
                        "(and not 'index')", name, RPT_NAME_MAX - 1);
    for (int i = 0; i < r->nplots; i++)
        if (strcmp(r->plot[i]->name, name) == 0)
            return ST_RAISE(err, ST_EINVAL, "report: a plot named '%s' was already written",
                            name);
    int rc = files_free(r->dir, name, r->replace, err);
    if (rc != ST_OK)
        return rc;
    rpt__plot *p = calloc(1, sizeof *p);
    if (!p)
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    snprintf(p->name, sizeof p->name, "%s", name);
    p->title = dup_str(title && *title ? title : default_title);
    p->kind = dup_str(default_title);
    if (!p->title || !p->kind) {
        rpt__plot_free(p);
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    }
    p->width_px = r->width_px > 0 ? r->width_px : width_px;
    p->height_px = r->height_px > 0 ? r->height_px : height_px;
    p->render = r->render ? RPT_RENDER_OK : RPT_RENDER_OFF;
    *out = p;
    return ST_OK;
}

void rpt__gp_head(rpt__buf *gp, const rpt__plot *p, const char *what)
{
    rpt__buf_printf(gp, "# %s.gp: ", p->name);
    rpt__buf_puts(gp, what);
    rpt__buf_printf(gp,
                    "\n# Reads %s.dat (beside this script); writes %s.png and %s.svg.\n"
                    "# Edit either file, then run in this directory:  gnuplot %s.gp\n"
                    "set encoding utf8\n"
                    "set datafile missing \"" RPT__MISSING "\"\n"
                    "data_file = '%s.dat'\n"
                    "# smdplan renders to temporary names (gnuplot -e \"out_base='...'\") and\n"
                    "# renames them once both images are complete.\n"
                    "if (!exists(\"out_base\")) out_base = '%s'\n"
                    "title_text = ",
                    p->name, p->name, p->name, p->name, p->name, p->name);
    rpt__gp_str(gp, p->title);
    rpt__buf_puts(gp, "\n");
}

void rpt__gp_loop_begin(rpt__buf *gp, const rpt__plot *p)
{
    rpt__buf_printf(gp,
                    "do for [fmt in \"png svg\"] {\n"
                    "    if (fmt eq \"png\") {\n"
                    "        set terminal pngcairo size %d,%d noenhanced font \"sans,10\" "
                    "background rgb \"white\"\n"
                    "    } else {\n"
                    "        set terminal svg size %d,%d noenhanced font \"sans,10\" "
                    "background rgb \"white\"\n"
                    "    }\n"
                    "    set output out_base . \".\" . fmt\n",
                    p->width_px, p->height_px, p->width_px, p->height_px);
}

void rpt__gp_loop_end(rpt__buf *gp)
{
    rpt__buf_puts(gp, "    set output\n}\n");
}

/* Write text to DIR/NAME.EXT, whole or not at all (common/outfile.h): a
 * failed write leaves what was there. */
int rpt__write_file(const rpt_report *r, const char *name, const char *ext, const char *text,
                    size_t n, st_err *err)
{
    rpt__buf path = {0};
    rpt__buf_printf(&path, "%s/%s.%s", r->dir, name, ext);
    if (path.oom)
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    int rc = outfile_write(path.p, "report", text, n, r->replace, err);
    rpt__buf_fini(&path);
    return rc;
}

static int file_nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* Render p's script: gnuplot writes .NAME.render-PID.png and .svg (names
 * this process owns), which are renamed to NAME.png and NAME.svg once both
 * are there. A failed render removes its own temporaries only: images a
 * run did not make are never removed (the page does not show them). */
static int render_plot(const rpt_report *r, rpt__plot *p, st_err *gerr)
{
    char script[RPT_NAME_MAX + 4], base[RPT_NAME_MAX + 32], set[RPT_NAME_MAX + 48];
    snprintf(script, sizeof script, "%s.gp", p->name);
    snprintf(base, sizeof base, ".%s.render-%ld", p->name, (long)getpid());
    snprintf(set, sizeof set, "out_base='%s'", base);
    rpt__buf tmp[2] = {{0}, {0}}, dst[2] = {{0}, {0}};
    static const char *const ext[2] = {"png", "svg"};
    for (int i = 0; i < 2; i++) {
        rpt__buf_printf(&tmp[i], "%s/%s.%s", r->dir, base, ext[i]);
        rpt__buf_printf(&dst[i], "%s/%s.%s", r->dir, p->name, ext[i]);
    }
    int rc = ST_OK;
    if (tmp[0].oom || tmp[1].oom || dst[0].oom || dst[1].oom)
        rc = ST_RAISE(gerr, ST_ENOMEM, "report: out of memory");
    if (rc == ST_OK)
        rc = rpt__gnuplot_run(r->gnuplot, r->dir, set, script, &p->render, gerr);
    if (rc == ST_OK && p->render == RPT_RENDER_OK &&
        (!file_nonempty(tmp[0].p) || !file_nonempty(tmp[1].p)))
        rc = ST_RAISE(gerr, ST_EIO, "gnuplot ran %s but wrote no %s.png / %s.svg", script,
                      p->name, p->name);
    for (int i = 0; rc == ST_OK && p->render == RPT_RENDER_OK && i < 2; i++)
        rc = outfile_move(tmp[i].p, dst[i].p, "report", r->replace, gerr);
    for (int i = 0; i < 2; i++) {
        if (!tmp[i].oom && tmp[i].p)
            (void)unlink(tmp[i].p); /* ours; gone already after a rename */
        rpt__buf_fini(&tmp[i]);
        rpt__buf_fini(&dst[i]);
    }
    return rc;
}

/* NAME.dat: a comment header (what, the columns), then the rows; two blank
 * lines between blocks (gnuplot's `index`). */
static void dat_text(const rpt__plot *p, const char *what, rpt__buf *b)
{
    const rpt__table *t = &p->table;
    rpt__buf_printf(b, "# %s.dat: ", p->name);
    rpt__buf_puts(b, what);
    rpt__buf_puts(b, "\n# ");
    rpt__comment_str(b, p->title);
    rpt__buf_puts(b, "\n#");
    for (int c = 0; c < t->ncols; c++)
        rpt__buf_printf(b, " %s", t->col[c]);
    rpt__buf_puts(b, "\n");
    for (int i = 0; i < t->nrows; i++) {
        if (i > 0 && t->block[i] != t->block[i - 1])
            rpt__buf_puts(b, "\n\n");
        for (int c = 0; c < t->ncols; c++) {
            if (c > 0)
                rpt__buf_puts(b, " ");
            if (t->text_mask & (1u << c))
                rpt__dat_str(b, rpt__table_get(t, i, c));
            else
                rpt__buf_puts(b, rpt__table_get(t, i, c));
        }
        rpt__buf_puts(b, "\n");
    }
}

static int keep_plot(rpt_report *r, rpt__plot *p, st_err *err)
{
    if (r->nplots == r->cap_plots) {
        int cap = r->cap_plots ? 2 * r->cap_plots : 8;
        rpt__plot **v = realloc(r->plot, (size_t)cap * sizeof *v);
        if (!v) {
            rpt__plot_free(p);
            return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
        }
        r->plot = v;
        r->cap_plots = cap;
    }
    r->plot[r->nplots++] = p;
    return ST_OK;
}

/* rpt__plot_finish before gp and caption are emptied. */
static int plot_finish(rpt_report *r, rpt__plot *p, const char *dat_what, const rpt__buf *gp,
                       const rpt__buf *caption, rpt_render *render, st_err *err)
{
    if (render)
        *render = p->render;
    if (p->table.oom || gp->oom || caption->oom) {
        rpt__plot_free(p);
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    }
    p->caption = dup_str(caption->p ? caption->p : "");
    rpt__buf dat = {0};
    dat_text(p, dat_what, &dat);
    if (!p->caption || dat.oom) {
        rpt__buf_fini(&dat);
        rpt__plot_free(p);
        return ST_RAISE(err, ST_ENOMEM, "report: out of memory");
    }
    int rc = rpt__write_file(r, p->name, "dat", dat.p, dat.n, err);
    rpt__buf_fini(&dat);
    if (rc == ST_OK)
        rc = rpt__write_file(r, p->name, "gp", gp->p, gp->n, err);
    if (rc != ST_OK) {
        rpt__plot_free(p);
        return rc;
    }
    if (r->render) {
        st_err gerr = {0};
        rc = render_plot(r, p, &gerr);
        if (rc != ST_OK) {
            p->render = RPT_RENDER_FAILED;
            snprintf(p->render_msg, sizeof p->render_msg, "%s", gerr.msg);
            if (err && err->code == ST_OK)
                *err = gerr;
        }
        if (render)
            *render = p->render;
    }
    int krc = keep_plot(r, p, err);
    return rc != ST_OK ? rc : krc;
}

int rpt__plot_finish(rpt_report *r, rpt__plot *p, const char *dat_what, rpt__buf *gp,
                     rpt__buf *caption, rpt_render *render, st_err *err)
{
    int rc = plot_finish(r, p, dat_what, gp, caption, render, err);
    rpt__buf_fini(gp);
    rpt__buf_fini(caption);
    return rc;
}
