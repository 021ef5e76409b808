/*
 * test_rpt_render.c: running gnuplot, and what happens when it cannot run.
 *
 * With gnuplot installed, every plot of the sample (and the edge cases that
 * would make gnuplot refuse a plot: no feasible cell, no price, one point)
 * renders to a non-trivial PNG and SVG: PNG signature, IHDR size as asked,
 * a size floor, and compressed image data that is not one colour. Without
 * it that test is skipped, and the rest still runs: gnuplot missing
 * ($SMDPLAN_GNUPLOT pointing nowhere, a name not on PATH, a file that is
 * not executable) writes the data and scripts and says so; stand-in
 * programs check that gnuplot runs in the report directory on the script's
 * relative name, and that a failing, silent or killed gnuplot becomes
 * ST_EIO with its message, on the page too.
 *
 * SMD_RPT_KEEP=1 keeps the rendered reports (their directories are
 * printed); SMD_RPT_OUT=DIR writes the rendered sample report into DIR.
 */
#include "test_util.h"

#include <dirent.h>

#include <stdlib.h>
#include <sys/stat.h>

#include "reports/rpt.h"
#include "rpt_sample.h"

#define PNG_MIN_BYTES 8000       /* a one-colour 820 x 420 PNG is well under 2 kB */
#define SVG_MIN_BYTES 4000
#define IDAT_MIN_DISTINCT 64     /* byte values in compressed data of a real picture */

static void ok(int rc, const st_err *err)
{
    if (rc != ST_OK)
        print_error("%s\n", err->msg);
    assert_int_equal(rc, ST_OK);
}

static int gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char buf[4096];
    for (const char *d = path;;) {
        const char *end = strchr(d, ':');
        int n = end ? (int)(end - d) : (int)strlen(d);
        snprintf(buf, sizeof buf, "%.*s/gnuplot", n, d);
        if (access(buf, X_OK) == 0)
            return 1;
        if (!end)
            return 0;
        d = end + 1;
    }
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A PNG gnuplot made: signature, IHDR first with the size asked, a size
 * floor, and IDAT bytes spread over many values. */
static void check_png(const char *dir, const char *name, uint32_t width, uint32_t height)
{
    char file[128];
    snprintf(file, sizeof file, "%s.png", name);
    size_t n = 0;
    unsigned char *p = (unsigned char *)file_slurp(dir, file, &n);
    if (!p)
        print_error("%s not written\n", file);
    assert_non_null(p);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_true(n > 33);
    assert_memory_equal(p, sig, 8);
    assert_memory_equal(p + 12, "IHDR", 4);
    assert_int_equal(be32(p + 16), width);
    assert_int_equal(be32(p + 20), height);
    if (n < PNG_MIN_BYTES)
        print_error("%s: %zu bytes\n", file, n);
    assert_true(n >= PNG_MIN_BYTES);
    int seen[256] = {0}, distinct = 0, idat = 0;
    for (size_t at = 8; at + 12 <= n;) {
        uint32_t len = be32(p + at);
        assert_true(at + 12 + len <= n);
        if (memcmp(p + at + 4, "IDAT", 4) == 0) {
            idat++;
            for (uint32_t i = 0; i < len; i++)
                distinct += !seen[p[at + 8 + i]]++;
        }
        at += 12 + len;
    }
    assert_true(idat > 0);
    assert_true(distinct >= IDAT_MIN_DISTINCT);
    free(p);

    snprintf(file, sizeof file, "%s.svg", name);
    char *svg = file_slurp(dir, file, &n);
    assert_non_null(svg);
    assert_true(n >= SVG_MIN_BYTES);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    free(svg);
}

static rpt_report *open_report(const char *dir, const rpt_config *cfg)
{
    rpt_report *r = NULL;
    st_err err = {0};
    ok(rpt_report_new(dir, cfg, &r, &err), &err);
    return r;
}

static void renders_with_gnuplot(void **state)
{
    unsetenv("SMDPLAN_GNUPLOT");
    if (!gnuplot_on_path())
        skip();
    /* SMD_RPT_OUT=DIR writes the report there and keeps it (the integration
     * test that opens the page in a browser uses this). */
    const char *out = getenv("SMD_RPT_OUT");
    char dir[512];
    if (out && *out)
        snprintf(dir, sizeof dir, "%s", out);
    else
        scratch_dir(dir, sizeof dir);
    rpt_report *r = open_report(dir, NULL);
    sample_write_plots(r, RPT_RENDER_OK);
    assert_int_equal(rpt_report_render(r), RPT_RENDER_OK);
    st_err err = {0};
    ok(rpt_html_write(r, "Rendered sample", NULL, &err), &err);
    rpt_report_free(r);

    static const struct {
        const char *name;
        uint32_t width, height;
    } pngs[] = {{"memory", 1100, 620},  {"grid", 900, 640},     {"scaling", 1200, 560},
                {"timeline", 1200, 420}, {"accuracy", 820, 760}, {"stages", 900, 520}};
    for (size_t i = 0; i < sizeof pngs / sizeof pngs[0]; i++)
        check_png(dir, pngs[i].name, pngs[i].width, pngs[i].height);
    assert_file_text(dir, "index.html",
                     TEXTS("<img src=\"timeline.png\" width=\"1200\" height=\"420\""),
                     TEXTS("Not rendered"));

    /* SMD_RPT_KEEP=1 keeps the rendered report, to look at. */
    if (getenv("SMD_RPT_KEEP"))
        print_message("rendered report kept in %s\n", dir);
    else if (!(out && *out))
        test_dir_remove(dir);
}

/* Inputs gnuplot would refuse if the script drew an empty curve. */
static void renders_edge_cases(void **state)
{
    unsetenv("SMDPLAN_GNUPLOT");
    if (!gnuplot_on_path())
        skip();
    char dir[512];
    scratch_dir(dir, sizeof dir);
    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.width_px = 640;
    cfg.height_px = 480;
    rpt_report *r = open_report(dir, &cfg);
    st_err err = {0};
    rpt_render rr = RPT_RENDER_FAILED;

    rpt_grid_cell none[2] = {{2, 4, 0, 0, "OOM", NULL}, {4, 8, 0, 0, NULL, NULL}};
    rpt_grid grid = {NULL, "nothing fits", 2, none};
    ok(rpt_grid_write(r, &grid, &rr, &err), &err);
    assert_int_equal(rr, RPT_RENDER_OK);

    rpt_scaling_point nofit[2] = {{"p3dn.24xlarge", 2, 16, 0, 0, 0, NULL},
                                  {"p3dn.24xlarge", 4, 32, 0, 0, 0, NULL}};
    rpt_scaling sc = {"scaling_none", "no cluster fits", 2, nofit};
    ok(rpt_scaling_write(r, &sc, &rr, &err), &err);
    assert_int_equal(rr, RPT_RENDER_OK);
    rpt_scaling_point noprice[1] = {{"own", 4, 32, 1, 1000, 0, NULL}};
    rpt_scaling sc2 = {"scaling_noprice", "no price", 1, noprice};
    ok(rpt_scaling_write(r, &sc2, &rr, &err), &err);
    assert_int_equal(rr, RPT_RENDER_OK);

    rpt_accuracy_point one[1] = {{"recorded", "run 1", 2.0, 2.0}};
    rpt_accuracy acc = {NULL, NULL, NULL, 0.05, 0, 1, one};
    ok(rpt_accuracy_write(r, &acc, &rr, &err), &err);
    assert_int_equal(rr, RPT_RENDER_OK);

    /* Virtual stages and zero-bubble kinds, from the simulator itself. */
    plan_costs *c = calloc(1, sizeof *c);
    c->pp = 4;
    c->microbatches = 8;
    c->virtual_stages = 1;
    c->active_microbatches = 8;
    c->schedule = PLAN_SCHED_ZB_H1;
    c->p2p_bytes = 64e6;
    c->p2p_intra_bps = 150e9;
    c->p2p_net_bps = 12.5e9;
    for (int s = 0; s < c->pp; s++) {
        c->stage[s].fwd_s = 0.05;
        c->stage[s].bwd_s = 0.1;
        c->stage[s].bwd_weight_s = 0.05;
        c->stage[s].act_bytes = 1e9;
        c->stage[s].node = s / 2;
        c->stage[s].dp_buckets = 3;
        c->stage[s].dp_bucket_s = 0.02;
        c->stage[s].dp_last_bucket_s = 0.01;
    }
    c->dp_overlap = 1;
    c->optimizer_s = 0.01;
    sim_config scfg;
    sim_config_default(&scfg);
    scfg.keep_trace = 1;
    sim_result res;
    ok(sim_step_run(c, &scfg, &res, &err), &err);
    rpt_timeline tl = {NULL, "ZB-H1, 4 stages, 8 microbatches", res.pp, res.ntrace, res.trace,
                       res.step_s, NULL};
    ok(rpt_timeline_write(r, &tl, &rr, &err), &err);
    assert_int_equal(rr, RPT_RENDER_OK);
    sim_result_fini(&res);
    free(c);
    rpt_report_free(r);

    for (const char *const *png =
             TEXTS("grid", "scaling_none", "scaling_noprice", "accuracy", "timeline");
         *png; png++)
        check_png(dir, *png, 640, 480);
    assert_file_text(dir, "timeline.dat", TEXTS("\"Bi\"", "\"W\"", "\"send_network\""), NULL);
    if (getenv("SMD_RPT_KEEP"))
        print_message("edge cases kept in %s\n", dir);
    else
        test_dir_remove(dir);
}

/* Write the sample memory plot; return its status and render state. */
static int memory_plot(const char *dir, const rpt_config *cfg, rpt_render *rr, st_err *err,
                       rpt_render *report_state)
{
    /* the same directory again and again: its files are replaced (--force) */
    rpt_config again;
    if (cfg)
        again = *cfg;
    else
        rpt_config_default(&again);
    again.replace = 1;
    rpt_report *r = open_report(dir, &again);
    rpt_memory mem = sample_memory();
    int rc = rpt_memory_write(r, &mem, rr, err);
    *report_state = rpt_report_render(r);
    st_err herr = {0};
    ok(rpt_html_write(r, NULL, NULL, &herr), &herr);
    rpt_report_free(r);
    return rc;
}

static void touch(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("stale", f);
    fclose(f);
}

static void check_not_rendered(const char *dir)
{
    assert_true(file_exists(dir, "memory.dat"));
    assert_true(file_exists(dir, "memory.gp"));
    /* images this run did not make are never removed, and never shown */
    char *png = file_slurp(dir, "memory.png", NULL);
    assert_string_equal(png, "stale");
    free(png);
    assert_file_text(dir, "index.html",
                     TEXTS("Not rendered: gnuplot was not found", "apt-get install gnuplot-nox",
                           "<table id=\"memory-table\">"),
                     TEXTS("<img", "href=\"memory.svg\""));
}

static void gnuplot_missing(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    st_err err = {0};
    rpt_render rr = RPT_RENDER_OK, state_r;

    /* $SMDPLAN_GNUPLOT pointing nowhere. */
    setenv("SMDPLAN_GNUPLOT", "/nonexistent", 1);
    touch(dir, "memory.png");
    touch(dir, "memory.svg");
    ok(memory_plot(dir, NULL, &rr, &err, &state_r), &err);
    assert_int_equal(rr, RPT_RENDER_NO_GNUPLOT);
    assert_int_equal(state_r, RPT_RENDER_NO_GNUPLOT);
    check_not_rendered(dir);

    /* A name not on PATH; the config wins over the environment. */
    setenv("SMDPLAN_GNUPLOT", "/bin/false", 1);
    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.gnuplot = "no-such-gnuplot-program";
    ok(memory_plot(dir, &cfg, &rr, &err, &state_r), &err);
    assert_int_equal(rr, RPT_RENDER_NO_GNUPLOT);
    check_not_rendered(dir);

    /* A directory, and a file that is not executable. */
    cfg.gnuplot = dir;
    ok(memory_plot(dir, &cfg, &rr, &err, &state_r), &err);
    assert_int_equal(rr, RPT_RENDER_NO_GNUPLOT);
    char prog[700];
    snprintf(prog, sizeof prog, "%s/memory.dat", dir);
    cfg.gnuplot = prog;
    ok(memory_plot(dir, &cfg, &rr, &err, &state_r), &err);
    assert_int_equal(rr, RPT_RENDER_NO_GNUPLOT);
    check_not_rendered(dir);

    /* An empty variable is unset: then gnuplot on PATH (if any) is used. */
    setenv("SMDPLAN_GNUPLOT", "", 1);
    rpt_config_default(&cfg);
    cfg.render = 0;
    ok(memory_plot(dir, &cfg, &rr, &err, &state_r), &err);
    assert_int_equal(rr, RPT_RENDER_OFF);
    unsetenv("SMDPLAN_GNUPLOT");
    test_dir_remove(dir);
}

/* Any ".NAME.render-PID.*" image a render left behind. */
static int temporaries_left(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".render-") != NULL;
    closedir(d);
    return n;
}

/* A stand-in for gnuplot: a shell script in its own directory. */
static void fake(const char *bin, const char *name, const char *body, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", bin, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

static void gnuplot_runs_and_fails(void **state)
{
    char dir[512], bin[512], prog[1024];
    scratch_dir(dir, sizeof dir);
    scratch_dir(bin, sizeof bin);
    unsetenv("SMDPLAN_GNUPLOT");
    rpt_config cfg;
    rpt_config_default(&cfg);
    st_err err = {0};
    rpt_render rr, state_r;

    /* Run in the report directory, on the script's relative name. */
    fake(bin, "good", "test \"$1\" = -e || exit 5\n"
                      "out=$(echo \"$2\" | sed \"s/^out_base='\\(.*\\)'$/\\1/\")\n"
                      "case \"$3\" in */*) exit 3;; esac\n"
                      "base=${3%.gp}\n"
                      "test -f \"$3\" && test -f \"$base.dat\" || exit 4\n"
                      "echo png > \"$out.png\"; echo svg > \"$out.svg\"",
         prog, sizeof prog);
    setenv("SMDPLAN_GNUPLOT", prog, 1); /* through the environment this time */
    ok(memory_plot(dir, NULL, &rr, &err, &state_r), &err);
    assert_int_equal(rr, RPT_RENDER_OK);
    assert_int_equal(state_r, RPT_RENDER_OK);
    assert_true(file_exists(dir, "memory.png"));
    char *png = file_slurp(dir, "memory.png", NULL);
    assert_string_equal(png, "png\n");
    free(png);
    unsetenv("SMDPLAN_GNUPLOT");

    /* Fails: ST_EIO with its last error line; the page says so, escaped. */
    fake(bin, "bad", "echo 'plot data_file using 1:2' >&2\n"
                     "echo '                ^' >&2\n"
                     "echo '\"memory.gp\" line 30: all points y value <undefined>!' >&2\n"
                     "exit 1",
         prog, sizeof prog);
    cfg.gnuplot = prog;
    st_err_clear(&err);
    assert_int_equal(memory_plot(dir, &cfg, &rr, &err, &state_r), ST_EIO);
    assert_int_equal(rr, RPT_RENDER_FAILED);
    assert_int_equal(state_r, RPT_RENDER_FAILED);
    assert_non_null(strstr(err.msg, "exit 1"));
    assert_non_null(strstr(err.msg, "\"memory.gp\" line 30: all points y value <undefined>!"));
    assert_true(file_exists(dir, "memory.dat"));
    assert_file_text(dir, "index.html",
                     TEXTS("Not rendered: gnuplot failed on memory.gp: ",
                           "y value &lt;undefined&gt;!"),
                     NULL);

    /* Exits 0 but writes nothing. */
    fake(bin, "silent", "exit 0", prog, sizeof prog);
    st_err_clear(&err);
    assert_int_equal(memory_plot(dir, &cfg, &rr, &err, &state_r), ST_EIO);
    assert_int_equal(rr, RPT_RENDER_FAILED);
    assert_non_null(strstr(err.msg, "wrote no memory.png"));

    /* Killed. */
    fake(bin, "killed", "kill -9 $$", prog, sizeof prog);
    st_err_clear(&err);
    assert_int_equal(memory_plot(dir, &cfg, &rr, &err, &state_r), ST_EIO);
    assert_non_null(strstr(err.msg, "killed by signal 9"));
    /* a failed render leaves none of its temporaries, and the image of the
     * good run is still there */
    assert_false(temporaries_left(dir));
    png = file_slurp(dir, "memory.png", NULL);
    assert_string_equal(png, "png\n");
    free(png);

    /* A failed plot does not stop the next one, and the report keeps both. */
    fake(bin, "picky", "case \"$3\" in memory.gp) echo 'no memory today' >&2; exit 2;; esac\n"
                       "out=$(echo \"$2\" | sed \"s/^out_base='\\(.*\\)'$/\\1/\")\n"
                       "echo png > \"$out.png\"; echo svg > \"$out.svg\"",
         prog, sizeof prog);
    cfg.replace = 1; /* the directory of the runs above */
    rpt_report *r = open_report(dir, &cfg);
    rpt_memory mem = sample_memory();
    rpt_grid grid = sample_grid();
    st_err_clear(&err);
    assert_int_equal(rpt_memory_write(r, &mem, &rr, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "exit 2: no memory today"));
    st_err_clear(&err);
    ok(rpt_grid_write(r, &grid, &rr, &err), &err);
    assert_int_equal(rr, RPT_RENDER_OK);
    assert_int_equal(rpt_report_nplots(r), 2);
    assert_int_equal(rpt_report_render(r), RPT_RENDER_FAILED);
    rpt_report_free(r);

    test_dir_remove(bin);
    test_dir_remove(dir);
}

/* Without replace (no --force) a report is never written over another:
 * the directory is refused before anything is written, and a plot of
 * another name whose file is there is refused before its files are. */
static void never_over_a_report(void **state)
{
    char dir[512];
    scratch_dir(dir, sizeof dir);
    rpt_config cfg;
    rpt_config_default(&cfg);
    cfg.render = 0;
    rpt_report *r = open_report(dir, &cfg);
    st_err err = {0};
    rpt_render rr;
    rpt_memory mem = sample_memory();
    ok(rpt_memory_write(r, &mem, &rr, &err), &err);
    ok(rpt_html_write(r, NULL, NULL, &err), &err);
    rpt_report_free(r);
    char *before = file_slurp(dir, "memory.dat", NULL);

    r = NULL;
    assert_int_equal(rpt_report_new(dir, &cfg, &r, &err), ST_EINVAL);
    assert_null(r);
    assert_non_null(strstr(err.msg, "exists; not replaced (pass --force"));

    /* a plot of its own name: refused before its .dat is written */
    char sub[512];
    scratch_dir(sub, sizeof sub);
    r = open_report(sub, &cfg);
    touch(sub, "mine.gp");
    rpt_memory named = sample_memory();
    named.name = "mine";
    st_err_clear(&err);
    assert_int_equal(rpt_memory_write(r, &named, &rr, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "mine.gp: exists"));
    assert_false(file_exists(sub, "mine.dat"));
    rpt_report_free(r);
    test_dir_remove(sub);

    /* with replace the files are written again */
    cfg.replace = 1;
    r = open_report(dir, &cfg);
    st_err_clear(&err);
    ok(rpt_memory_write(r, &mem, &rr, &err), &err);
    rpt_report_free(r);
    char *after = file_slurp(dir, "memory.dat", NULL);
    assert_string_equal(before, after);
    free(before);
    free(after);
    test_dir_remove(dir);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(renders_with_gnuplot),
        cmocka_unit_test(renders_edge_cases),
        cmocka_unit_test(gnuplot_missing),
        cmocka_unit_test(gnuplot_runs_and_fails),
        cmocka_unit_test(never_over_a_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
