/*
 * rpt_history_text.c: the text of history, show and compare
 * (rpt_history.h) from what data/ reads back from the records (db.h). A
 * step time is shown with three decimals, five where any of a row's is
 * under 0.1 s (an executed run on a CPU steps in milliseconds); a missing
 * figure is "-".
 */
#include "reports/rpt_history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/rpt_record.h"
#include "reports/rpt_table.h"

void rpt_history_text(FILE *f, const db_summary *rows, int n, const char *kind)
{
    if (n == 0)
        fprintf(f, "no records%s%s\n", kind ? " of kind " : "", kind ? kind : "");
    else
        fprintf(f, "%6s  %-11s  %-24s  %s\n", "id", "kind", "created (UTC)", "summary");
    /* the summary wrapped under itself */
    for (int i = 0; i < n; i++) {
        char lead[64];
        snprintf(lead, sizeof lead, "%6lld  %-11s  %-24s  ", (long long)rows[i].id,
                 rows[i].kind, rows[i].created_at);
        char rest[64];
        snprintf(rest, sizeof rest, "%*s", (int)strlen(lead), "");
        /* one record, one paragraph: a newline in a name is shown as \u000a */
        char *line = rpt_term_escape_line(rows[i].summary);
        rpt_term_wrap(f, line ? line : rows[i].summary, lead, rest);
        free(line);
    }
}

/* Every string of a record as one line (rpt_term_escape_line): show prints each
 * field on a line of its own, which a newline in a name would split. */
static void escape_strings(cJSON *c)
{
    for (; c; c = c->next) {
        if (cJSON_IsString(c) && c->valuestring && strpbrk(c->valuestring, "\t\n\r\v\f")) {
            char *line = rpt_term_escape_line(c->valuestring);
            if (line)
                cJSON_SetValuestring(c, line);
            free(line);
        }
        if (c->child)
            escape_strings(c->child);
    }
}

/* The page of smdplan show: the record's parts in order. */
static void show_parts(FILE *f, const cJSON *rec)
{
    rpt_record_text_head(f, rec);
    rpt_record_text_plans(f, rec);
    rpt_record_text_simulations(f, rec);
    rpt_record_text_runs(f, rec);
    rpt_record_text_calibrations(f, rec);
    rpt_record_text_bench(f, rec);
}

void rpt_history_show(FILE *f, cJSON *rec)
{
    escape_strings(rec);
    /* into a buffer that is wrapped to the terminal at the end */
    rpt_term_capture_buf cb;
    FILE *w = rpt_term_capture(&cb);
    if (!w) {
        show_parts(f, rec);
        return;
    }
    show_parts(w, rec);
    fclose(cb.f);
    cb.f = NULL;
    if (cb.text)
        rpt_term_wrap_lines(f, cb.text);
    free(cb.text);
}

/* A step time or an error, or "-" when there is none (NaN). */
static void cell(char *buf, size_t n, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "-");
}

static void compare_row(rpt_table *t, const db_compare_row *r)
{
    char p[16], s[16], m[16], e1[16], e2[16], e3[16], ids[3][24];
    /* three significant digits at least: an executed run on a CPU
     * steps in milliseconds */
    const char *tf = "%.3f";
    double small = fmin(r->predicted_s > 0 ? r->predicted_s : INFINITY,
                        fmin(r->simulated_s > 0 ? r->simulated_s : INFINITY,
                             r->measured_s > 0 ? r->measured_s : INFINITY));
    if (small < 0.1)
        tf = "%.5f";
    cell(p, sizeof p, tf, r->predicted_s > 0 ? r->predicted_s : NAN);
    cell(s, sizeof s, tf, r->simulated_s > 0 ? r->simulated_s : NAN);
    cell(m, sizeof m, tf, r->measured_s > 0 ? r->measured_s : NAN);
    cell(e1, sizeof e1, "%+.1f%%", plan_error_pct(r->predicted_s, r->measured_s));
    cell(e2, sizeof e2, "%+.1f%%", plan_error_pct(r->simulated_s, r->measured_s));
    cell(e3, sizeof e3, "%+.1f%%", plan_error_pct(r->simulated_s, r->predicted_s));
    const int64_t rid[3] = {r->predicted_id, r->simulated_id, r->measured_id};
    for (int k = 0; k < 3; k++)
        cell(ids[k], sizeof ids[k], "%.0f", rid[k] > 0 ? (double)rid[k] : NAN);
    rpt_table_row(t);
    rpt_table_cell(t, "%s", r->model);
    rpt_table_cell(t, "%s", r->instance_type);
    rpt_table_cell(t, "%d", r->nodes);
    rpt_table_cell(t, "%s", r->layout); /* whole: a cut layout is another layout */
    if (r->framework[0])
        rpt_table_cell(t, "%s %s", r->framework, r->precision);
    else /* recorded before frameworks */
        rpt_table_cell(t, "-");
    rpt_table_cell(t, "%s", p);
    rpt_table_cell(t, "%s", s);
    rpt_table_cell(t, "%s", m);
    rpt_table_cell(t, "%s", e1);
    rpt_table_cell(t, "%s", e2);
    rpt_table_cell(t, "%s", e3);
    rpt_table_cell(t, "%s/%s/%s", ids[0], ids[1], ids[2]);
}

void rpt_history_compare(FILE *f, const db_compare_row *rows, int n)
{
    rpt_table *t = rpt_table_new();
    const char *const head[] = {"model", "instance", "n", "layout", "framework",
                                "predicted", "simulated", "measured", "pred/meas",
                                "sim/meas", "sim/pred", "records p/s/m"};
    const int right[] = {0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1};
    const int prio[] = {2, 0, 0, -1, 3, 0, 0, 0, 0, 1, 1, 0};
    for (int k = 0; t && k < 12; k++)
        rpt_table_col(t, head[k], right[k], prio[k]);
    for (int i = 0; t && i < n; i++)
        compare_row(t, &rows[i]);
    if (t)
        rpt_table_print(f, t, "");
    rpt_table_free(t);
    rpt_term_wrap(f, "(step times in s, latest of each; errors 100 (a - b) / b; "
                     "n = instances; records p/s/m: the records of the prediction, "
                     "simulation and measurement, for smdplan show ID)", "", " ");
}
