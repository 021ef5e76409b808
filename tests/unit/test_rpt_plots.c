/*
 * test_rpt_plots.c: the reports library's files, without gnuplot.
 *
 * Golden files: the five plots of rpt_sample.h and the page, written with
 * rendering off, must equal tests/fixtures/reports/ byte for byte (compare
 * text, not images). After a deliberate change, regenerate them with
 * SMD_UPDATE_GOLDEN=1 and read the diff before committing it.
 *
 * Also: the same inputs give the same bytes; the data tables keep their
 * invariants (terms sum to the total, headroom is capacity minus total, the
 * grid is the full product, ops are ordered); a renamed plot's script reads
 * its own data; caller text is quoted for gnuplot and escaped for HTML;
 * every bad input is refused with its message and writes nothing; and a
 * program running in a locale with a decimal comma still gets the golden
 * files (skipped when no such locale is installed).
 */
#include "test_util.h"
#include "planner/plan_framework.h"

#include <locale.h>
#include <stdlib.h>

#include "reports/rpt.h"
#include "reports/rpt_int.h"
#include "rpt_sample.h"

#define GOLDEN_DIR SMD_TEST_FIXTURES "/reports"

static const char *const plot_names[] = {"memory", "grid", "scaling", "timeline", "accuracy",
                                         "stages"};
#define NPLOTS 6

static rpt_report *open_report(const char *dir, int max_rows)
{
    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.render = 0;
    if (max_rows > 0)
        cfg.html_max_rows = max_rows;
    rpt_report *r = NULL;
    st_err err = {0};
    int rc = rpt_report_new(dir, &cfg, &r, &err);
    if (rc != ST_OK)
        print_error("rpt_report_new: %s\n", err.msg);
    assert_int_equal(rc, ST_OK);
    return r;
}

static void ok(int rc, const st_err *err)
{
    if (rc != ST_OK)
        print_error("%s\n", err->msg);
    assert_int_equal(rc, ST_OK);
}

/* A report of the memory plot in alone, and its page. */
static void write_memory(const char *dir, const rpt_memory *in)
{
    rpt_report *r = open_report(dir, 0);
    st_err err = {0};
    ok(rpt_memory_write(r, in, NULL, &err), &err);
    ok(rpt_html_write(r, NULL, NULL, &err), &err);
    rpt_report_free(r);
}

/* The sample report: all five plots and the page. */
static void write_sample(const char *dir, int max_rows)
{
    rpt_report *r = open_report(dir, max_rows);
    sample_write_plots(r, RPT_RENDER_OFF);
    st_err err = {0};
    rpt_fact facts[] = {{"Recommended plan (#1)", "tp 8 pp 2 <best>"}, {"Cost", "$1 & more"}};
    rpt_summary sum = {"Recommended plan", "What the sample recommends.", 2, facts,
                       "Launch settings", "instance_count = 2\n"};
    ok(rpt_report_set_summary(r, &sum, &err), &err);
    assert_int_equal(rpt_report_nplots(r), NPLOTS);
    for (int i = 0; i < NPLOTS; i++)
        assert_string_equal(rpt_report_plot_name(r, i), plot_names[i]);
    assert_null(rpt_report_plot_name(r, NPLOTS));
    assert_int_equal(rpt_report_render(r), RPT_RENDER_OFF);
    ok(rpt_html_write(r, "Sample report <175B> & \"friends\"",
                      "Made from hand-written figures (no date: the caller adds one)", &err),
       &err);
    rpt_report_free(r);
}

/* Print the first line where two texts differ. */
static void first_difference(const char *name, const char *got, const char *want)
{
    int line = 1;
    const char *g = got, *w = want;
    while (*g && *g == *w) {
        if (*g == '\n')
            line++;
        g++;
        w++;
    }
    while (g > got && g[-1] != '\n') { /* from the start of that line */
        g--;
        w--;
    }
    const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
    print_error("%s differs from its golden file at line %d:\n  got:  %.*s\n  want: %.*s\n", name,
                line, ge ? (int)(ge - g) : (int)strlen(g), g, we ? (int)(we - w) : (int)strlen(w),
                w);
}

static void compare_golden(const char *dir, const char *file)
{
    char *got = file_slurp(dir, file, NULL);
    assert_non_null(got);
    if (getenv("SMD_UPDATE_GOLDEN")) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, file);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(got, 1, strlen(got), f), strlen(got));
        assert_int_equal(fclose(f), 0);
        free(got);
        return;
    }
    char *want = file_slurp(GOLDEN_DIR, file, NULL);
    if (!want)
        print_error("no golden file %s/%s (make it with SMD_UPDATE_GOLDEN=1)\n", GOLDEN_DIR,
                    file);
    assert_non_null(want);
    if (strcmp(got, want) != 0)
        first_difference(file, got, want);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static void golden_files(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    assert_true(dir[0] != '\0');
    write_sample(dir, 0);
    for (int i = 0; i < NPLOTS; i++) {
        char file[80];
        snprintf(file, sizeof file, "%s.dat", plot_names[i]);
        compare_golden(dir, file);
        snprintf(file, sizeof file, "%s.gp", plot_names[i]);
        compare_golden(dir, file);
        /* Rendering off: no image is made. */
        snprintf(file, sizeof file, "%s.png", plot_names[i]);
        assert_false(file_exists(dir, file));
    }
    compare_golden(dir, "index.html");
    test_dir_remove(dir);
}

/* A locale that writes 0.5 as "0,5", set for LC_NUMERIC; 0 if none is
 * installed. */
static int comma_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
                                        "ru_RU.UTF-8", "nl_NL.UTF-8", "de_DE", "fr_FR"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!setlocale(LC_NUMERIC, names[i]))
            continue;
        char s[16];
        snprintf(s, sizeof s, "%.1f", 0.5);
        if (strcmp(s, "0,5") == 0)
            return 1;
    }
    setlocale(LC_NUMERIC, "C");
    return 0;
}

static void decimal_comma_locale(void **state)
{
    if (!comma_locale())
        skip();
    char dir[512];
    scratch_dir(dir, sizeof dir);
    write_sample(dir, 0);
    char s[16];
    snprintf(s, sizeof s, "%.1f", 0.5);
    assert_string_equal(s, "0,5"); /* the program's locale is left as it was */
    setlocale(LC_NUMERIC, "C");
    for (int i = 0; i < NPLOTS; i++) {
        char file[80];
        snprintf(file, sizeof file, "%s.dat", plot_names[i]);
        compare_golden(dir, file);
        snprintf(file, sizeof file, "%s.gp", plot_names[i]);
        compare_golden(dir, file);
    }
    compare_golden(dir, "index.html");
    test_dir_remove(dir);
}

static void deterministic(void **state)
{
    char a[512], b[512];
    scratch_dir(a, sizeof a);
    scratch_dir(b, sizeof b);
    write_sample(a, 0);
    write_sample(b, 0);
    static const char *const ext[] = {"dat", "gp"};
    for (int i = 0; i < NPLOTS; i++)
        for (int e = 0; e < 2; e++) {
            char file[80];
            snprintf(file, sizeof file, "%s.%s", plot_names[i], ext[e]);
            size_t na, nb;
            char *x = file_slurp(a, file, &na), *y = file_slurp(b, file, &nb);
            assert_non_null(x);
            assert_non_null(y);
            assert_int_equal(na, nb);
            assert_memory_equal(x, y, na);
            free(x);
            free(y);
        }
    size_t na, nb;
    char *x = file_slurp(a, "index.html", &na), *y = file_slurp(b, "index.html", &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x);
    free(y);
    test_dir_remove(a);
    test_dir_remove(b);
}

/* Data rows of a .dat file (comments and blank lines skipped), split on
 * blanks outside double quotes. Returns rows; fields into f[row][col]. */
#define MAXROWS 128
#define MAXCOLS 16
static int parse_dat(const char *text, char f[MAXROWS][MAXCOLS][80], int *ncols)
{
    int rows = 0;
    *ncols = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 0 && p[0] != '#') {
            assert_true(rows < MAXROWS);
            int c = 0;
            for (size_t i = 0; i < n;) {
                while (i < n && p[i] == ' ')
                    i++;
                if (i >= n)
                    break;
                size_t j = i;
                if (p[i] == '"') {
                    j = i + 1;
                    while (j < n && p[j] != '"')
                        j++;
                    j++;
                } else {
                    while (j < n && p[j] != ' ')
                        j++;
                }
                assert_true(c < MAXCOLS);
                snprintf(f[rows][c], 80, "%.*s", (int)(j - i), p + i);
                c++;
                i = j;
            }
            if (rows == 0)
                *ncols = c;
            assert_int_equal(c, *ncols); /* every row has every column */
            rows++;
        }
        p += n + (end ? 1 : 0);
    }
    return rows;
}

static void table_invariants(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    write_sample(dir, 0);
    static char f[MAXROWS][MAXCOLS][80];
    int ncols;

    /* memory: one row per bar; the nine terms sum to the total (to the
     * rounding of 3 decimals), headroom = 40 - (total - allocator): the fit
     * rule of the plan table; ranks and stages as given. */
    char *text = file_slurp(dir, "memory.dat", NULL);
    int rows = parse_dat(text, f, &ncols);
    assert_int_equal(ncols, 16);
    assert_int_equal(rows, 4 + 2 + 1 + 3);
    for (int i = 0; i < rows; i++) {
        double sum = 0;
        for (int c = 3; c < 12; c++)
            sum += atof(f[i][c]);
        assert_true(fabs(sum - atof(f[i][12])) <= 9 * 0.0005 + 1e-9);
        assert_true(fabs(40.0 - (atof(f[i][12]) - atof(f[i][11])) - atof(f[i][13])) <= 0.0016);
        /* the bar's label is its plan's rank and its stage */
        char bar[200];
        snprintf(bar, sizeof bar, "\"#%s s%s\"", f[i][0], f[i][2]);
        assert_string_equal(f[i][15], bar);
    }
    assert_string_equal(f[0][0], "1");
    assert_string_equal(f[0][14], "4");
    assert_string_equal(f[6][0], "3");
    assert_string_equal(f[6][1], "\"plan 3\""); /* a plan without a label */
    assert_string_equal(f[6][2], "7");          /* its worst stage, as given */
    assert_string_equal(f[6][14], "8");         /* of its eight */
    assert_true(atof(f[5][13]) < 0);            /* the stage over capacity */
    /* 24 stages: the first, the worst (5) and the last */
    assert_string_equal(f[7][2], "0");
    assert_string_equal(f[8][2], "5");
    assert_string_equal(f[9][2], "23");
    assert_string_equal(f[9][14], "24");
    assert_true(atof(f[8][12]) > atof(f[7][12]));
    free(text);

    /* grid: the full 5 x 3 product, TP-major, with statuses. */
    text = file_slurp(dir, "grid.dat", NULL);
    rows = parse_dat(text, f, &ncols);
    assert_int_equal(rows, 5 * 3);
    int nok = 0, nne = 0;
    for (int i = 0; i < rows; i++) {
        assert_int_equal(atoi(f[i][0]), i / 3);
        assert_int_equal(atoi(f[i][1]), i % 3);
        if (strcmp(f[i][5], "\"ok\"") == 0) {
            nok++;
            assert_true(atof(f[i][4]) > 0);
        } else {
            assert_string_equal(f[i][4], "-");
            nne += strcmp(f[i][5], "\"not evaluated\"") == 0;
        }
    }
    assert_int_equal(nok, 7);
    assert_int_equal(nne, 3);
    free(text);

    /* timeline: every op once, by stage then start; ms exact from ns. */
    rpt_timeline tl = sample_timeline();
    text = file_slurp(dir, "timeline.dat", NULL);
    rows = parse_dat(text, f, &ncols);
    assert_int_equal(rows, tl.ntrace);
    for (int i = 1; i < rows; i++) {
        int s0 = atoi(f[i - 1][0]), s1 = atoi(f[i][0]);
        assert_true(s0 < s1 || (s0 == s1 && atof(f[i - 1][5]) <= atof(f[i][5])));
        assert_true(atof(f[i][5]) <= atof(f[i][6]));
    }
    assert_string_equal(f[0][5], "0.000000");
    assert_string_equal(f[0][6], "10.000000");
    free(text);

    /* scaling: blocks per type in first-seen order, counts increasing inside. */
    assert_file_text(dir, "scaling.dat",
                     TEXTS("\"p4d.24xlarge\" 8 64 - - \"\"\n"
                           "\"p4d.24xlarge\" 16 128 36400 7.875",
                           "\"p4d.24xlarge\" 64 512 139000 8.25 \"tp8 pp8 dp8\"\n\n\n"
                           "\"p5.48xlarge\" 4 32",
                           "\"my 'own' cluster\" 16 - 41000 - \"price unknown\""),
                     NULL);
    test_dir_remove(dir);
}

/* Deep pipelines stay readable: every stage up to RPT_MEM_STAGES_SHOWN per
 * plan, else first, worst and last, said in the caption; bar labels turn
 * upright past 16 bars and go past 128; the default image widens. */
static void memory_many_stages(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    static plan_mem deep[64], full[RPT_MEM_STAGES_SHOWN];
    for (int s = 0; s < 64; s++) /* the first stage is the worst, as in 1F1B */
        deep[s] = sample_mem(0.5, 12.0 - 0.125 * s, s == 63 ? 1.0 : 0.0);
    for (int s = 0; s < RPT_MEM_STAGES_SHOWN; s++)
        full[s] = sample_mem(1.0, 8.0 - 0.25 * s, s == RPT_MEM_STAGES_SHOWN - 1 ? 1.0 : 0.0);
    rpt_mem_plan plans[9];
    for (int i = 0; i < 9; i++)
        plans[i] = (rpt_mem_plan){"pp16", RPT_MEM_STAGES_SHOWN, full, NULL, 0};
    plans[1] = (rpt_mem_plan){"pp64", 64, deep, NULL, 64};
    rpt_memory in = {NULL, "deep", NULL, 40.0 * SAMPLE_GIB, 5, plans};

    write_memory(dir, &in); /* 4 x 16 + 2 = 66 bars */
    char *dat = file_slurp(dir, "memory.dat", NULL);
    static char f[MAXROWS][MAXCOLS][80];
    int ncols, rows = parse_dat(dat, f, &ncols);
    assert_int_equal(rows, 4 * RPT_MEM_STAGES_SHOWN + 2);
    assert_string_equal(f[16][15], "\"#2 s0\"");
    assert_string_equal(f[17][15], "\"#2 s63\"");
    assert_string_equal(f[17][14], "64");
    assert_string_equal(f[18][15], "\"#3 s0\"");
    free(dat);
    assert_file_text(dir, "memory.gp",
                     TEXTS("set xtics nomirror scale 0 rotate by 90 right font ',8'\n",
                           ":xtic(16)"),
                     TEXTS("with labels boxed")); /* too many bars for totals */
    /* #1 is drawn in full: nothing to say. 66 bars and 4 gaps: the last
     * bar at x 69, 70.5 slots, 30.5 past the default's 40 at 18 px each */
    assert_file_text(dir, "index.html",
                     TEXTS("#2 has 64 stages; to keep the bars readable (at most 16 per "
                           "plan) it shows its first (s0), which is also its worst, and "
                           "its last (s63).",
                           "width=\"1649\" height=\"620\""),
                     TEXTS("#1 has"));
    test_dir_remove(dir);

    /* 9 plans, 8 x 16 + 2 bars: no bar labels; the widest default image */
    scratch_dir(dir, sizeof dir);
    in.nplans = 9;
    write_memory(dir, &in);
    assert_file_text(dir, "memory.gp", TEXTS("unset xtics\n", "'#9' "), TEXTS("xtic("));
    assert_file_text(dir, "index.html", TEXTS("width=\"2400\""), NULL);
    test_dir_remove(dir);
}

/* More instance types than a plot tells apart (7 colours x 5 dashes): the
 * fastest 35 are drawn, each with its own colour and dash; every type is
 * in the table; the caption says so. */
static void scaling_many_types(void **state)
{
    (void)state;
    char dir[512];
    scratch_dir(dir, sizeof dir);
    enum { NTYPES = 40 };
    static rpt_scaling_point pts[NTYPES];
    static char names[NTYPES][16];
    for (int i = 0; i < NTYPES; i++) {
        snprintf(names[i], sizeof names[i], "type%02d", i);
        /* type00 the slowest, type39 the fastest */
        pts[i] = (rpt_scaling_point){names[i], 2, 16, 1, 100.0 * (i + 1), 1.0, NULL};
    }
    rpt_scaling sc = {NULL, "many types", NTYPES, pts};
    rpt_report *r = open_report(dir, 0);
    st_err err = {0};
    rpt_render rr = RPT_RENDER_OFF;
    ok(rpt_scaling_write(r, &sc, &rr, &err), &err);
    ok(rpt_html_write(r, "many", "test", &err), &err);
    rpt_report_free(r);
    char *gp = file_slurp(dir, "scaling.gp", NULL);
    int drawn = 0;
    for (const char *q = gp; (q = strstr(q, "title 'type")) != NULL; q++)
        drawn++;
    assert_int_equal(drawn, 2 * 35); /* both panels, the same 35 */
    assert_null(strstr(gp, "title 'type04'")); /* the five slowest left out */
    assert_non_null(strstr(gp, "title 'type05'"));
    free(gp);
    char *dat = file_slurp(dir, "scaling.dat", NULL);
    assert_non_null(strstr(dat, "type00"));
    free(dat);
    assert_file_text(dir, "index.html", TEXTS("The 35 fastest are drawn, all 40 are in the table."),
                     NULL);
    test_dir_remove(dir);
}

static void renamed_plot_reads_its_own_data(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    rpt_report *r = open_report(dir, 0);
    st_err err = {0};
    rpt_timeline a = sample_timeline(), b = sample_timeline();
    b.name = "timeline_zb";
    ok(rpt_timeline_write(r, &a, NULL, &err), &err);
    ok(rpt_timeline_write(r, &b, NULL, &err), &err);
    assert_file_text(dir, "timeline_zb.gp",
                     TEXTS("data_file = 'timeline_zb.dat'\n",
                           "if (!exists(\"out_base\")) out_base = 'timeline_zb'\n",
                           "set output out_base . \".\" . fmt"),
                     TEXTS("'timeline.dat'"));
    /* The same name twice is refused. */
    assert_int_equal(rpt_timeline_write(r, &b, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "already written"));
    assert_int_equal(rpt_report_nplots(r), 2);
    rpt_report_free(r);
    test_dir_remove(dir);
}

static void caller_text_is_quoted(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    rpt_report *r = open_report(dir, 0);
    st_err err = {0};
    rpt_memory mem = sample_memory();
    mem.title = "it's \"tp8\"\n<script>alert(1)</script> & more";
    ok(rpt_memory_write(r, &mem, NULL, &err), &err);
    ok(rpt_html_write(r, "<b>x</b>", "note & <i>", &err), &err);
    rpt_report_free(r);

    /* gnuplot: single-quoted, ' doubled, the newline a space. */
    assert_file_text(dir, "memory.gp",
                     TEXTS("title_text = 'it''s \"tp8\" <script>alert(1)</script> & more'\n",
                           "'#2 tp8 pp2 dp8 mb2 ''simple'' <none>'"),
                     NULL);
    /* The title's newline cannot end its comment line and start a data row. */
    char *dat = file_slurp(dir, "memory.dat", NULL);
    assert_text(dat,
                TEXTS("\"tp8 pp2 dp8 mb2 'simple' <none>\"",
                      "\n# it's \"tp8\" <script>alert(1)</script> & more\n"),
                NULL);
    for (const char *line = dat; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        assert_true(*line == '#' || *line == '\0' || (*line >= '1' && *line <= '4'));
    free(dat);
    /* Escaped, and nothing from the network. */
    assert_file_text(dir, "index.html",
                     TEXTS("<h1>&lt;b&gt;x&lt;/b&gt;</h1>", "note &amp; &lt;i&gt;",
                           "it&#39;s &quot;tp8&quot;\n&lt;script&gt;",
                           "<td>tp8 pp2 dp8 mb2 &#39;simple&#39; &lt;none&gt;</td>"),
                     TEXTS("<script>", "<b>x", "http://", "https://", "<script"));
    test_dir_remove(dir);
}

static void html_references_everything(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    write_sample(dir, 20); /* the timeline's ops are cut to 20 rows, the grid's 15 stay */
    char *html = file_slurp(dir, "index.html", NULL);
    assert_non_null(html);
    for (int i = 0; i < NPLOTS; i++) {
        const char *n = plot_names[i];
        char want[6][128];
        snprintf(want[0], sizeof want[0], "<section id=\"%s\">", n);
        snprintf(want[1], sizeof want[1], "<img src=\"%s.png\"", n);
        snprintf(want[2], sizeof want[2], "<a href=\"%s.svg\">", n);
        snprintf(want[3], sizeof want[3], "<table id=\"%s-table\">", n);
        snprintf(want[4], sizeof want[4], "<a href=\"%s.dat\">", n);
        snprintf(want[5], sizeof want[5], "<code>gnuplot %s.gp</code>", n);
        for (int k = 0; k < 6; k++) {
            if (!strstr(html, want[k]))
                print_error("index.html lacks %s\n", want[k]);
            assert_non_null(strstr(html, want[k]));
        }
        char toc[128];
        snprintf(toc, sizeof toc, "<li><a href=\"#%s\">", n);
        assert_non_null(strstr(html, toc));
    }
    /* Each table shows the rows of its .dat (hidden helper columns aside). */
    const char *grid = strstr(html, "<table id=\"grid-table\">");
    const char *grid_end = strstr(grid, "</table>");
    int trs = 0;
    for (const char *p = grid; (p = strstr(p, "<tr>")) && p < grid_end; p++)
        trs++;
    assert_int_equal(trs, 1 + 15);
    assert_null(strstr(grid, "<th>x</th>"));
    char more[160];
    snprintf(more, sizeof more, "The first 20 of %d rows; all of them are in "
             "<a href=\"timeline.dat\">timeline.dat</a>.", sample_timeline().ntrace);
    assert_non_null(strstr(html, more));
    free(html);
    test_dir_remove(dir);
}

/* Each call must fail with ST_EINVAL, a message containing want, and write
 * no file. */
static void refused(int rc, const st_err *err, const char *want, const char *dir)
{
    if (rc != ST_EINVAL || !strstr(err->msg, want))
        print_error("rc %d, message '%s', want '%s'\n", rc, err->msg, want);
    assert_int_equal(rc, ST_EINVAL);
    assert_non_null(strstr(err->msg, want));
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        assert_true(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0);
    closedir(d);
}

static void bad_inputs_refused(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    rpt_report *r = open_report(dir, 0);
    st_err err;
    rpt_render rr;

#define REFUSE(call, want)                                                                     \
    do {                                                                                       \
        st_err_clear(&err);                                                                    \
        refused((call), &err, (want), dir);                                                    \
    } while (0)

    rpt_memory mem = sample_memory();
    mem.capacity_bytes = 0;
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "capacity");
    mem = sample_memory();
    mem.nplans = 0;
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "0 plans");
    mem = sample_memory();
    static plan_mem neg[1];
    neg[0] = sample_mem(1, 1, 0);
    neg[0].logits_bytes = -1;
    rpt_mem_plan bad_plan = {"x", 1, neg, NULL, 0};
    mem.plans = &bad_plan;
    mem.nplans = 1;
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "logits");
    neg[0].logits_bytes = NAN;
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "logits");
    neg[0].logits_bytes = 0;
    static int stage9[1] = {9};
    rpt_mem_plan bad_pp = {"x", 1, neg, stage9, 8}; /* stage 9 of 8 */
    mem.plans = &bad_pp;
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "stage index 9");
    bad_pp = (rpt_mem_plan){"x", 1, neg, stage9, 0}; /* pp = 1 */
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "stage index 9");
    static plan_mem two[2];
    two[0] = two[1] = sample_mem(1, 1, 0);
    bad_pp = (rpt_mem_plan){"x", 2, two, NULL, 1}; /* fewer stages than given */
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "pp 1");
    bad_pp.pp = PLAN_PP_MAX + 1;
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "pp 257");
    mem = sample_memory();
    mem.name = "has space";
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "plot name");
    mem.name = "../escape";
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "plot name");
    mem.name = "index";
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "plot name");
    mem.name = "";
    REFUSE(rpt_memory_write(r, &mem, &rr, &err), "plot name");

    rpt_grid grid = sample_grid();
    rpt_grid_cell cells[2] = {{4, 8, 1, 20.0, NULL, NULL}, {4, 8, 0, 0, "OOM", NULL}};
    grid.cells = cells;
    grid.ncells = 2;
    REFUSE(rpt_grid_write(r, &grid, &rr, &err), "given twice");
    cells[1] = (rpt_grid_cell){0, 8, 0, 0, NULL, NULL};
    REFUSE(rpt_grid_write(r, &grid, &rr, &err), "TP 0");
    cells[1] = (rpt_grid_cell){2, 8, 1, -3.0, NULL, NULL};
    REFUSE(rpt_grid_write(r, &grid, &rr, &err), "step time");
    grid.ncells = 0;
    REFUSE(rpt_grid_write(r, &grid, &rr, &err), "0 cells");

    rpt_scaling sc = sample_scaling();
    rpt_scaling_point pts[2] = {{"p4d", 4, 32, 1, 100, 1, NULL}, {"p4d", 4, 32, 1, 200, 1, NULL}};
    sc.points = pts;
    sc.npoints = 2;
    REFUSE(rpt_scaling_write(r, &sc, &rr, &err), "given twice");
    pts[1] = (rpt_scaling_point){NULL, 8, 64, 1, 200, 1, NULL};
    REFUSE(rpt_scaling_write(r, &sc, &rr, &err), "no instance type");
    pts[1] = (rpt_scaling_point){"p4d", 0, 64, 1, 200, 1, NULL};
    REFUSE(rpt_scaling_write(r, &sc, &rr, &err), "0 instances");
    pts[1] = (rpt_scaling_point){"p4d", 8, 64, 1, INFINITY, 1, NULL};
    REFUSE(rpt_scaling_write(r, &sc, &rr, &err), "throughput");

    rpt_timeline tl = sample_timeline();
    tl.pp = 2; /* the sample has stage 2 */
    REFUSE(rpt_timeline_write(r, &tl, &rr, &err), "stage 2 (pp 2)");
    tl = sample_timeline();
    sim_trace_rec back[1] = {{0, SIM_STREAM_COMPUTE, SIM_OP_FWD, 0, 0, 50, 40}};
    tl.trace = back;
    tl.ntrace = 1;
    REFUSE(rpt_timeline_write(r, &tl, &rr, &err), "50..40 ns");
    back[0] = (sim_trace_rec){0, SIM_STREAM_COMPUTE, SIM_OP__COUNT + 1, 0, 0, 0, 10};
    REFUSE(rpt_timeline_write(r, &tl, &rr, &err), "kind 9");
    tl.ntrace = 0;
    REFUSE(rpt_timeline_write(r, &tl, &rr, &err), "0 ops");

    rpt_accuracy acc = sample_accuracy();
    rpt_accuracy_point ap[1] = {{"x", "y", 0.0, 1.0}};
    acc.points = ap;
    acc.npoints = 1;
    REFUSE(rpt_accuracy_write(r, &acc, &rr, &err), "both must be positive");
    acc = sample_accuracy();
    acc.band = 1.5;
    REFUSE(rpt_accuracy_write(r, &acc, &rr, &err), "error band");

    assert_int_equal(rpt_report_nplots(r), 0);
    rpt_report_free(r);
    rpt_report_free(NULL);
    test_dir_remove(dir);
#undef REFUSE
}

static void report_directory(void **state)
{
    char dir[512], nested[700], file[700];
    scratch_dir(dir, sizeof dir);
    snprintf(nested, sizeof nested, "%s/a/b/c", dir);
    rpt_report *r = NULL;
    st_err err = {0};
    ok(rpt_report_new(nested, NULL, &r, &err), &err); /* parents made */
    struct stat st;
    assert_int_equal(stat(nested, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    rpt_report_free(r);

    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    r = (rpt_report *)1;
    /* a file where the directory should be is the user's mistake: bad input */
    assert_int_equal(rpt_report_new(file, NULL, &r, &err), ST_EINVAL);
    assert_null(r);
    assert_non_null(strstr(err.msg, "plain"));
    assert_non_null(strstr(err.msg, "not a directory"));

    st_err_clear(&err);
    assert_int_equal(rpt_report_new("", NULL, &r, &err), ST_EINVAL);
    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.html_max_rows = 0;
    st_err_clear(&err);
    assert_int_equal(rpt_report_new(dir, &cfg, &r, &err), ST_EINVAL);
    rpt_config_default(&cfg);
    cfg.width_px = 50;
    st_err_clear(&err);
    assert_int_equal(rpt_report_new(dir, &cfg, &r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "image size"));

    /* An empty report still makes a page. */
    rpt_config_default(&cfg);
    cfg.render = 0;
    ok(rpt_report_new(dir, &cfg, &r, &err), &err);
    ok(rpt_html_write(r, NULL, NULL, &err), &err);
    rpt_report_free(r);
    assert_file_text(dir, "index.html", TEXTS("<title>smdplan report</title>", "No plots"), NULL);

    unlink(file);
    snprintf(file, sizeof file, "%s/index.html", dir);
    unlink(file);
    rmdir(nested);
    snprintf(file, sizeof file, "%s/a/b", dir);
    rmdir(file);
    snprintf(file, sizeof file, "%s/a", dir);
    rmdir(file);
    rmdir(dir);
}

/* A file that cannot be written is an error naming it with the system's
 * reason, and the plot is not kept. A directory in its place stands in for
 * a path the user cannot write (it stops root too, unlike permissions): bad
 * input, ST_EINVAL, and the directory is left as it was. */
static void unwritable_files(void **state)
{
    char dir[512], sub[700];
    scratch_dir(dir, sizeof dir);
    rpt_report *r = open_report(dir, 0);
    st_err err = {0};
    snprintf(sub, sizeof sub, "%s/grid.gp", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    rpt_grid grid = sample_grid();
    assert_int_equal(rpt_grid_write(r, &grid, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "grid.gp"));
    assert_non_null(strstr(err.msg, "Is a directory"));
    assert_int_equal(rpt_report_nplots(r), 0);
    rmdir(sub);
    st_err_clear(&err);
    ok(rpt_grid_write(r, &grid, NULL, &err), &err); /* the same name, now it can */
    assert_int_equal(rpt_report_nplots(r), 1);

    snprintf(sub, sizeof sub, "%s/index.html", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    st_err_clear(&err);
    assert_int_equal(rpt_html_write(r, NULL, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "index.html"));
    rmdir(sub);
    rpt_report_free(r);
    test_dir_remove(dir);
}

static void layout_labels(void **state)
{
    plan_layout l;
    plan_layout_default(&l);
    char buf[128];
    /* no pipeline, no schedule */
    assert_string_equal(rpt_layout_label(&l, buf, sizeof buf), "tp1 pp1 dp1 mb1");
    l.tp = 8;
    l.pp = 12;
    l.dp = 3;
    l.cp = 2;
    l.micro_batch = 4;
    l.schedule = PLAN_SCHED_VIRTUAL;
    l.virtual_stages = 3;
    l.recompute = PLAN_RECOMP_FULL;
    l.recompute_group = 2;
    l.sharding = PLAN_SHARD_OPTIMIZER;
    l.offload_activations = 1;
    assert_string_equal(rpt_layout_label(&l, buf, sizeof buf),
                        "tp8 pp12 dp3 cp2 mb4 virtual v3 full/2 shard optimizer offload");
    l.recompute_group = 1;
    l.offload_activations = 0;
    l.cp = 1;
    l.sharding = PLAN_SHARD_NONE;
    assert_string_equal(rpt_layout_label(&l, buf, sizeof buf), "tp8 pp12 dp3 mb4 virtual v3 full");
    l.recompute = PLAN_RECOMP_SELECTIVE;
    assert_string_equal(rpt_layout_label(&l, buf, 12), "tp8 pp12 dp"); /* 11 + NUL */
    /* the schedule by the stack's name: 1F1B is SMP's interleaved, Megatron's
     * 1f1b; two plans differing only in sequence parallelism differ in label */
    l.recompute = PLAN_RECOMP_NONE;
    l.schedule = PLAN_SCHED_INTERLEAVED;
    l.virtual_stages = 1;
    assert_string_equal(rpt_layout_label(&l, buf, sizeof buf), "tp8 pp12 dp3 mb4 interleaved");
    int meg = -1;
    st_err err = {0};
    assert_int_equal(plan_framework_find("megatron", &meg, &err), ST_OK);
    l.framework = meg;
    assert_string_equal(rpt_layout_label(&l, buf, sizeof buf), "tp8 pp12 dp3 mb4 1f1b");
    l.sequence_parallel = 1;
    assert_string_equal(rpt_layout_label(&l, buf, sizeof buf), "tp8 pp12 dp3 mb4 1f1b sp");
}

/* The memory plot applies the plan table's fit rule: the allocator's
 * reserve (freed and retried before out of memory) does not decide. A stage
 * needing 38 GiB with a 4 GiB reserve on a 40 GiB GPU fits, with 2 GiB of
 * headroom, and the caption says its bar crosses the line only with the
 * reserve; one needing 41 GiB does not. */
static void memory_fit_rule(void **state)
{
    (void)state;
    char dir[512];
    scratch_dir(dir, sizeof dir);
    plan_mem m[2];
    memset(m, 0, sizeof m);
    m[0].weights_bytes = 30 * SAMPLE_GIB;
    m[0].activations_bytes = 8 * SAMPLE_GIB;
    m[0].allocator_bytes = 4 * SAMPLE_GIB;
    m[0].total_bytes = 42 * SAMPLE_GIB;
    m[1] = m[0];
    m[1].activations_bytes = 11 * SAMPLE_GIB;
    m[1].total_bytes = 45 * SAMPLE_GIB;
    rpt_mem_plan plans[2] = {{"fits", 1, &m[0], NULL, 1}, {"oom", 1, &m[1], NULL, 1}};
    rpt_memory in = {NULL, "fit rule", "A100-40GB", 40.0 * SAMPLE_GIB, 2, plans};
    write_memory(dir, &in);
    char *dat = file_slurp(dir, "memory.dat", NULL);
    static char f[MAXROWS][MAXCOLS][80];
    int ncols, rows = parse_dat(dat, f, &ncols);
    assert_int_equal(rows, 2);
    assert_rel(atof(f[0][13]), 2.0, 1e-9);  /* 40 - 38: the reserve is not in the fit */
    assert_rel(atof(f[1][13]), -1.0, 1e-9); /* 40 - 41 */
    free(dat);
    assert_file_text(dir, "index.html",
                     TEXTS("1 bar does not fit.",
                           "1 bar crosses the line only with the reserve and fits."),
                     NULL);
    assert_file_text(dir, "memory.gp", TEXTS("fs pattern 4"), NULL);
    test_dir_remove(dir);
}

/* Colours a deuteranope tells apart: sRGB to linear, the deuteranopia
 * matrix of Machado, Oliveira and Fernandes 2009 (severity 1.0), CIELAB
 * (D65) and the CIE 1976 distance. The earlier palettes put red and green
 * 0.9 apart; every pair of the series colours the memory plot stacks (nine
 * terms) and of the timeline's kinds is kept 15 apart (a just noticeable
 * difference is about 2.3: Sharma 2003). */
static double srgb_lin(double c)
{
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double lab_f(double t)
{
    const double d = 6.0 / 29.0;
    return t > d * d * d ? cbrt(t) : t / (3 * d * d) + 4.0 / 29.0;
}

static void deutan_lab(const char *hex, double lab[3])
{
    static const double M[3][3] = {{0.367322, 0.860646, -0.227968},
                                   {0.280085, 0.672501, 0.047413},
                                   {-0.011820, 0.042940, 0.968881}};
    unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
    double rgb[3] = {srgb_lin(((v >> 16) & 255) / 255.0), srgb_lin(((v >> 8) & 255) / 255.0),
                     srgb_lin((v & 255) / 255.0)}, d[3];
    for (int i = 0; i < 3; i++)
        d[i] = fmin(1, fmax(0, M[i][0] * rgb[0] + M[i][1] * rgb[1] + M[i][2] * rgb[2]));
    double X = 0.4124 * d[0] + 0.3576 * d[1] + 0.1805 * d[2];
    double Y = 0.2126 * d[0] + 0.7152 * d[1] + 0.0722 * d[2];
    double Z = 0.0193 * d[0] + 0.1192 * d[1] + 0.9505 * d[2];
    double fx = lab_f(X / 0.95047), fy = lab_f(Y), fz = lab_f(Z / 1.08883);
    lab[0] = 116 * fy - 16;
    lab[1] = 500 * (fx - fy);
    lab[2] = 200 * (fy - fz);
}

static double deutan_delta_e(const char *a, const char *b)
{
    double x[3], y[3];
    deutan_lab(a, x);
    deutan_lab(b, y);
    return sqrt((x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) +
                (x[2] - y[2]) * (x[2] - y[2]));
}

static void palettes_for_deuteranopes(void **state)
{
    (void)state;
    /* the method itself: the old red and green were 0.9 apart */
    assert_true(deutan_delta_e("#e15759", "#59a14f") < 1.0);
    for (int i = 0; i < 9; i++)
        for (int j = i + 1; j < 9; j++)
            if (deutan_delta_e(rpt__series_color[i], rpt__series_color[j]) < 15) {
                print_error("series colours %s and %s: Delta E %.1f\n", rpt__series_color[i],
                            rpt__series_color[j],
                            deutan_delta_e(rpt__series_color[i], rpt__series_color[j]));
                fail();
            }
    for (int i = 0; i < RPT_TIMELINE_KINDS; i++)
        for (int j = i + 1; j < RPT_TIMELINE_KINDS; j++)
            if (strcmp(rpt__timeline_color[i], rpt__timeline_color[j]) != 0 &&
                deutan_delta_e(rpt__timeline_color[i], rpt__timeline_color[j]) < 15) {
                print_error("timeline colours %s and %s\n", rpt__timeline_color[i],
                            rpt__timeline_color[j]);
                fail();
            }
}

static void names_and_hint(void **state)
{
    assert_string_equal(rpt_render_name(RPT_RENDER_OK), "rendered");
    assert_string_equal(rpt_render_name(RPT_RENDER_NO_GNUPLOT), "no gnuplot");
    assert_non_null(strstr(rpt_gnuplot_hint(), "apt-get install gnuplot-nox"));
    assert_null(strchr(rpt_gnuplot_hint(), '\n'));
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_files),
        cmocka_unit_test(deterministic),
        cmocka_unit_test(decimal_comma_locale),
        cmocka_unit_test(table_invariants),
        cmocka_unit_test(memory_many_stages),
        cmocka_unit_test(scaling_many_types),
        cmocka_unit_test(renamed_plot_reads_its_own_data),
        cmocka_unit_test(caller_text_is_quoted),
        cmocka_unit_test(html_references_everything),
        cmocka_unit_test(bad_inputs_refused),
        cmocka_unit_test(report_directory),
        cmocka_unit_test(unwritable_files),
        cmocka_unit_test(layout_labels),
        cmocka_unit_test(names_and_hint),
        cmocka_unit_test(memory_fit_rule),
        cmocka_unit_test(palettes_for_deuteranopes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
