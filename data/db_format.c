/*
 * db_format.c: the records as machine-readable text: the CSV of one record
 * (the main table of each kind), the JSON and CSV of the history and of the
 * comparison rows, and the whole-number byte counts every view of a record
 * shows.
 *
 * CSV is RFC 4180: a field with a comma, quote or line break is quoted, a
 * quote doubled; a number is the shortest of %.15g / %.17g that reads back
 * as itself, a missing one (NaN, null) an empty cell. Errors are
 * percentages, 100 (a - b) / b (plan_error_pct).
 */
#include "data/db_format.h"
#include "common/json_get.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void db_format_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void db_format_csv_num(FILE *f, double v)
{
    if (!isfinite(v))
        return;
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, f);
}

/* A JSON scalar as a CSV cell (null: empty). */
static void csv_json(FILE *f, const cJSON *v)
{
    if (!v || cJSON_IsNull(v))
        return;
    if (cJSON_IsNumber(v))
        db_format_csv_num(f, v->valuedouble);
    else if (cJSON_IsString(v))
        db_format_csv_field(f, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "1" : "0", f);
    else {
        char *t = cJSON_PrintUnformatted(v);
        db_format_csv_field(f, t ? t : "");
        cJSON_free(t);
    }
}


/* CSV of a list: the scalars of each element, plus those of one nested
 * object (flatten); the header comes from the first element. */
static void csv_list(FILE *f, const cJSON *list, const char *flatten)
{
    static const char *const skip[] = {"id", "plan_id", "model_id", "instance_type_id",
                                       "prediction_id", "simulation_id", "run_id",
                                       "calibration_id", "match_key", NULL};
    const cJSON *first = list ? list->child : NULL;
    if (!first)
        return;
    const cJSON *fo = flatten ? cJSON_GetObjectItemCaseSensitive(first, flatten) : NULL;
    int col = 0;
    for (int pass = 0; pass < 2; pass++) {
        const cJSON *src = pass == 0 ? first : fo;
        for (const cJSON *c = src ? src->child : NULL; c; c = c->next) {
            int sk = cJSON_IsArray(c) || cJSON_IsObject(c);
            for (int k = 0; !sk && skip[k]; k++)
                sk = !strcmp(c->string, skip[k]);
            if (sk)
                continue;
            fprintf(f, "%s%s", col++ ? "," : "", c->string);
        }
    }
    fprintf(f, "\n");
    for (const cJSON *e = first; e; e = e->next) {
        const cJSON *eo = flatten ? cJSON_GetObjectItemCaseSensitive(e, flatten) : NULL;
        col = 0;
        for (int pass = 0; pass < 2; pass++) {
            const cJSON *hdr = pass == 0 ? first : fo;
            const cJSON *src = pass == 0 ? e : eo;
            for (const cJSON *c = hdr ? hdr->child : NULL; c; c = c->next) {
                int sk = cJSON_IsArray(c) || cJSON_IsObject(c);
                for (int k = 0; !sk && skip[k]; k++)
                    sk = !strcmp(c->string, skip[k]);
                if (sk)
                    continue;
                if (col++)
                    fputc(',', f);
                csv_json(f, src ? cJSON_GetObjectItemCaseSensitive(src, c->string) : NULL);
            }
        }
        fputc('\n', f);
    }
}

void db_format_record_csv(FILE *f, const cJSON *rec)
{
    const char *kind = json_get_str(rec, "kind");
    if (!strcmp(kind, "simulation")) {
        const cJSON *sims = json_get_arr(rec, "simulations");
        if (sims)
            csv_list(f, json_get_arr(sims->child, "stages"), NULL);
    } else if (!strcmp(kind, "run")) {
        csv_list(f, json_get_arr(rec, "runs"), NULL);
    } else if (!strcmp(kind, "calibration")) {
        /* one row per (fit, parameter); a fit is a framework on a chip or
         * the chip's pool (framework empty); gpu: a version-2 record's GPU */
        const cJSON *cals = json_get_arr(rec, "calibrations");
        fprintf(f, "framework,silicon,gpu,rows,sources,rejected,name,before,after,std_err,asked,"
                "fitted\n");
        for (const cJSON *c = cals ? cals->child : NULL; c; c = c->next) {
            const cJSON *ps = json_get_arr(c, "params");
            for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
                db_format_csv_field(f, json_get_str(c, "framework"));
                fputc(',', f);
                db_format_csv_field(f, json_get_str(c, "silicon"));
                fputc(',', f);
                db_format_csv_field(f, json_get_str(c, "gpu"));
                fprintf(f, ",%.0f,", json_get_num(c, "rows"));
                db_format_csv_num(f, json_get_num(c, "sources"));
                fputc(',', f);
                db_format_csv_num(f, json_get_num(c, "rejected"));
                fprintf(f, ",%s,", json_get_str(p, "name"));
                db_format_csv_num(f, json_get_num(p, "before"));
                fputc(',', f);
                db_format_csv_num(f, json_get_num(p, "after"));
                fputc(',', f);
                db_format_csv_num(f, json_get_num(p, "std_err"));
                fprintf(f, ",%.0f,%.0f\n", json_get_num(p, "asked"), json_get_num(p, "fitted"));
            }
        }
    } else if (!strcmp(kind, "bench")) {
        /* the transport's measurements when there are, else the GEMMs */
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(rec, "bench");
        csv_list(f, json_get_arr(b, "comm") ? json_get_arr(b, "comm") : json_get_arr(b, "gemm"), NULL);
    } else {
        csv_list(f, json_get_arr(rec, "plans"), "prediction");
    }
}

static void round_bytes(cJSON *v, int bytes)
{
    for (cJSON *c = v ? v->child : NULL; c; c = c->next) {
        size_t n = c->string ? strlen(c->string) : 0;
        int b = bytes || (n > 6 && strcmp(c->string + n - 6, "_bytes") == 0);
        if (cJSON_IsNumber(c) && b && isfinite(c->valuedouble))
            cJSON_SetNumberValue(c, round(c->valuedouble));
        else if (cJSON_IsArray(c) || cJSON_IsObject(c))
            round_bytes(c, b && cJSON_IsArray(c));
    }
}

/* a (taken, freed) printed to f with a newline; nothing when out of
 * memory. */
static void print_json(FILE *f, cJSON *a)
{
    char *s = cJSON_Print(a);
    cJSON_Delete(a);
    if (s)
        fprintf(f, "%s\n", s);
    cJSON_free(s);
}

void db_format_history_json(FILE *f, const db_summary *rows, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "id", (double)rows[i].id);
        cJSON_AddStringToObject(j, "kind", rows[i].kind);
        cJSON_AddStringToObject(j, "created_at", rows[i].created_at);
        cJSON_AddStringToObject(j, "summary", rows[i].summary);
        cJSON_AddStringToObject(j, "command_line", rows[i].command_line);
        cJSON_AddItemToArray(a, j);
    }
    print_json(f, a);
}

void db_format_history_csv(FILE *f, const db_summary *rows, int n)
{
    fprintf(f, "id,kind,created_at,summary,command_line\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%lld,%s,%s,", (long long)rows[i].id, rows[i].kind, rows[i].created_at);
        db_format_csv_field(f, rows[i].summary);
        fputc(',', f);
        db_format_csv_field(f, rows[i].command_line);
        fputc('\n', f);
    }
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v) && v != 0)
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_id_or_null(cJSON *o, const char *k, int64_t v)
{
    if (v > 0)
        cJSON_AddNumberToObject(o, k, (double)v);
    else
        cJSON_AddNullToObject(o, k);
}

void db_format_compare_json(FILE *f, const db_compare_row *rows, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const db_compare_row *r = &rows[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", r->model);
        cJSON_AddNumberToObject(j, "params", (double)r->params);
        cJSON_AddStringToObject(j, "instance_type", r->instance_type);
        cJSON_AddNumberToObject(j, "instances", r->nodes);
        cJSON_AddNumberToObject(j, "gpus", r->gpus);
        cJSON_AddStringToObject(j, "layout", r->layout);
        if (r->framework[0])
            cJSON_AddStringToObject(j, "framework", r->framework);
        else /* recorded before frameworks */
            cJSON_AddNullToObject(j, "framework");
        if (r->precision[0])
            cJSON_AddStringToObject(j, "precision", r->precision);
        else
            cJSON_AddNullToObject(j, "precision");
        add_num_or_null(j, "predicted_step_s", r->predicted_s);
        add_num_or_null(j, "simulated_step_s", r->simulated_s);
        add_num_or_null(j, "measured_step_s", r->measured_s);
        if (r->measured_source[0])
            cJSON_AddStringToObject(j, "measured_source", r->measured_source);
        add_num_or_null(j, "error_pred_vs_measured_pct",
                        plan_error_pct(r->predicted_s, r->measured_s));
        add_num_or_null(j, "error_sim_vs_measured_pct",
                        plan_error_pct(r->simulated_s, r->measured_s));
        add_num_or_null(j, "error_sim_vs_pred_pct", plan_error_pct(r->simulated_s, r->predicted_s));
        add_id_or_null(j, "predicted_record", r->predicted_id);
        add_id_or_null(j, "simulated_record", r->simulated_id);
        add_id_or_null(j, "measured_record", r->measured_id);
        cJSON_AddItemToArray(a, j);
    }
    print_json(f, a);
}

void db_format_compare_csv(FILE *f, const db_compare_row *rows, int n)
{
    fprintf(f, "model,params,instance_type,instances,gpus,layout,framework,precision,"
            "predicted_step_s,simulated_step_s,measured_step_s,measured_source,"
            "error_pred_vs_measured_pct,error_sim_vs_measured_pct,error_sim_vs_pred_pct,"
            "predicted_record,simulated_record,measured_record\n");
    for (int i = 0; i < n; i++) {
        const db_compare_row *r = &rows[i];
        db_format_csv_field(f, r->model);
        fprintf(f, ",%lld,", (long long)r->params);
        db_format_csv_field(f, r->instance_type);
        fprintf(f, ",%d,%d,", r->nodes, r->gpus);
        db_format_csv_field(f, r->layout);
        fputc(',', f);
        db_format_csv_field(f, r->framework);
        fputc(',', f);
        db_format_csv_field(f, r->precision);
        double v[] = {r->predicted_s, r->simulated_s, r->measured_s};
        for (int k = 0; k < 3; k++) {
            fputc(',', f);
            if (v[k] > 0)
                db_format_csv_num(f, v[k]);
        }
        fprintf(f, ",%s,", r->measured_source);
        db_format_csv_num(f, plan_error_pct(r->predicted_s, r->measured_s));
        fputc(',', f);
        db_format_csv_num(f, plan_error_pct(r->simulated_s, r->measured_s));
        fputc(',', f);
        db_format_csv_num(f, plan_error_pct(r->simulated_s, r->predicted_s));
        int64_t rid[] = {r->predicted_id, r->simulated_id, r->measured_id};
        for (int k = 0; k < 3; k++) {
            fputc(',', f);
            if (rid[k] > 0)
                fprintf(f, "%lld", (long long)rid[k]);
        }
        fputc('\n', f);
    }
}

void db_format_round_bytes(cJSON *rec)
{
    round_bytes(rec, 0);
}
