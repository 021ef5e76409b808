/*
 * cli_diff.c: `smdplan diff`, two plans side by side, term by term.
 *
 *   smdplan diff ID[:RANK] ID[:RANK]            two recorded plans (record id,
 *                                                plan rank, default 1)
 *   smdplan diff [plan options] --a K=V,... --b K=V,...
 *                                                two layouts of one model and
 *                                                cluster (K: any layout option
 *                                                of smdplan plan, without --)
 *
 * Every memory term of the worst stage and every time term of the step,
 * each plan's error band, and one paragraph on what makes the difference:
 * the time term that differs most, the layout knobs behind it, the memory,
 * and whether the two steps lie within each other's bands. Thin: the
 * planner evaluates, the records database reads, this prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "app/cli.h"
#include "app/cli_int.h"
#include "common/text.h"
#include "common/units.h"
#include "data/data.h"
#include "planner/plan_diff.h"
#include "planner/plan_framework.h"

#define GIB 1073741824.0

/* One side: a plan, its cluster's words, its band. */
typedef struct side {
    char name[64];               /* "A (tp 8, pp 2)" or "record 12 #1" */
    plan_layout l;
    plan_estimate e;
    int oom;                     /* the layout does not fit */
    char model[PLAN_NAME_MAX];
    char cluster[96];
    double band_pct;
    char band_basis[400];
} side;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan diff ID[:RANK] ID[:RANK] [--db FILE] [--json]\n"
            "       smdplan diff [plan options] --a K=V,... --b K=V,... [--json]\n\n"
            "Two plans side by side, term by term: memory of the worst pipeline stage and time\n"
            "of the step, each step with its error band, and what makes the difference.\n"
            "ID[:RANK] is a plan record (smdplan history) and the rank of its plan (default 1).\n"
            "--a and --b each fix layout options of smdplan plan (names without --, values\n"
            "after =, comma-separated); the options they leave are searched, the model and\n"
            "cluster are the plan options given once (smdplan --help).\n\n"
            "Examples:\n"
            "  smdplan diff 12 12:2\n"
            "  smdplan diff --params 30B --instances 16xp4d --a tp=8,pp=1 --b tp=2,pp=8,schedule=interleaved\n");
}

static void layout_words(const plan_layout *l, char *buf, size_t n)
{
    char s[24], r[24];
    snprintf(buf, n, "tp %d, pp %d, dp %d%s, mbs %d x %d, %s, %s, %s%s", l->tp, l->pp, l->dp,
             l->cp > 1 ? " (cp)" : "", l->micro_batch, l->microbatches,
             plan_framework_sched_label(l, s, sizeof s), cli_recomp_label(l, r, sizeof r),
             plan_sharding_name(l->sharding), l->sequence_parallel && l->tp > 1 ? ", sp" : "");
}

/* ---- two layouts on the command line ---- */

/* "tp=8,pp=2" into argv words "--tp" "8" "--pp" "2" after the base ones. */
static int side_from_spec(int argc, char **argv, const char *spec, const char *which, side *out,
                          st_err *err)
{
    char **v = calloc((size_t)argc + 2 * strlen(spec) + 4, sizeof *v);
    char *copy = strdup(spec);
    if (!v || !copy) {
        free(v);
        free(copy);
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    }
    int n = 0;
    for (int i = 0; i < argc; i++)
        v[n++] = argv[i];
    char *opts[128];
    int no = 0, rc = ST_OK;
    for (char *tok = strtok(copy, ","); tok && rc == ST_OK; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1] || no + 2 > 128) {
            char safe[120];
            rc = ST_RAISE(err, ST_EINVAL, "--%s '%s': expected K=V,... with K a layout option "
                          "of smdplan plan without -- (tp=8,pp=2)", which,
                          text_comment(spec, safe, sizeof safe));
            break;
        }
        *eq = '\0';
        char *opt = malloc(strlen(tok) + 3);
        if (!opt) {
            rc = ST_RAISE(err, ST_ENOMEM, "out of memory");
            break;
        }
        snprintf(opt, strlen(tok) + 3, "--%s", tok);
        opts[no++] = opt;
        v[n++] = opt;
        v[n++] = eq + 1;
    }
    cli_plan_opts o;
    cli_plan_opts_init(&o, 0);
    cli_plan_ctx x;
    int have_ctx = 0;
    plan_result *res = NULL;
    if (rc == ST_OK) {
        int ex = cli_plan_parse(n, v, &o, err);
        if (ex)
            rc = ex == 1 ? ST_EINVAL : ST_EINVAL;
    }
    if (rc == ST_OK && !o.instances)
        rc = ST_RAISE(err, ST_EINVAL, "diff: give the cluster with --instances (e.g. 16xp4d)");
    if (rc == ST_OK && (rc = cli_plan_resolve(&o, &x, 1, err)) == ST_OK)
        have_ctx = 1;
    /* the global batch the plan command would use (a preset's published one) */
    char batch_src[400];
    if (rc == ST_OK && !o.batch_size)
        rc = cli_preset_batch(&o, &x, batch_src, sizeof batch_src, err);
    if (rc == ST_OK && !(res = calloc(1, sizeof *res)))
        rc = ST_RAISE(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK) {
        o.cfg.top_k = 1;
        rc = plan_search(&x.model, &x.cluster, &o.cfg, res, err);
    }
    if (rc == ST_OK && res->ntop == 0 && !(res->min_oom_excess_bytes > 0))
        rc = ST_RAISE(err, ST_EINVAL, "--%s %s: no layout of these knobs can be evaluated on %d x "
                      "%s", which, spec, x.cluster.nodes, x.cluster.inst->name);
    if (rc == ST_OK) {
        const plan_candidate *c = res->ntop ? &res->top[0] : &res->closest_oom;
        out->l = c->layout;
        out->e = c->est;
        out->oom = res->ntop == 0;
        snprintf(out->name, sizeof out->name, "%s", which);
        snprintf(out->model, sizeof out->model, "%s", x.model.name);
        snprintf(out->cluster, sizeof out->cluster, "%d x %s", x.cluster.nodes,
                 x.cluster.inst->name);
        out->band_pct = cli_band_of(&x.cluster, out->l.framework, out->band_basis,
                                    sizeof out->band_basis);
    }
    if (have_ctx)
        cli_plan_ctx_free(&x);
    free(res);
    for (int i = 0; i < no; i++)
        free(opts[i]);
    free(copy);
    free(v);
    return rc;
}

/* ---- two recorded plans ---- */

static int side_from_record(const char *db_path, const char *ref, side *out, st_err *err)
{
    char *end;
    long long id = strtoll(ref, &end, 10);
    long rank = 1;
    if (*end == ':')
        rank = strtol(end + 1, &end, 10);
    if (id <= 0 || rank <= 0 || *end) {
        char safe[80];
        return ST_RAISE(err, ST_EINVAL, "diff: '%s': expected a plan record ID or ID:RANK "
                        "(smdplan history)", text_comment(ref, safe, sizeof safe));
    }
    db *d = NULL;
    db_plan *pl = calloc(64, sizeof *pl);
    plan_model m;
    plan_catalog cat = {0};
    int np = 0, rc = pl ? ST_OK : ST_RAISE(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK)
        rc = db_open(db_default_path(db_path), DB_OPEN_READ, &d, err);
    if (rc == ST_OK)
        rc = db_plans(d, id, pl, 64, &np, err);
    if (rc == ST_OK)
        rc = db_model(d, id, &m, err);
    const db_plan *p = NULL;
    for (int i = 0; rc == ST_OK && i < np && !p; i++)
        if (!strcmp(pl[i].role, "top") && pl[i].rank == rank)
            p = &pl[i];
    if (rc == ST_OK && (!p || !p->have_est))
        rc = ST_RAISE(err, ST_EINVAL, "diff: record %lld has no plan of rank %ld with its "
                      "prediction (smdplan show %lld)", id, rank, id);
    if (rc == ST_OK) {
        out->l = p->layout;
        out->e = p->est;
        snprintf(out->name, sizeof out->name, "%lld:%ld", id, rank); /* A/B in the text */
        snprintf(out->model, sizeof out->model, "%s", m.name);
        snprintf(out->cluster, sizeof out->cluster, "%d x %s", p->nodes, p->instance_type);
        /* the band of its stack on its chip, as the catalog names the chip */
        st_err e2 = {0};
        plan_cluster c;
        char spec[96];
        snprintf(spec, sizeof spec, "%dx%s", p->nodes, p->instance_type);
        if (data_catalog_load(NULL, &cat, &e2) == ST_OK &&
            plan_cluster_parse(&cat, spec, &c, &e2) == ST_OK)
            out->band_pct = cli_band_of(&c, out->l.framework, out->band_basis,
                                        sizeof out->band_basis);
        else
            snprintf(out->band_basis, sizeof out->band_basis, "no band: %s is not in the "
                     "catalog", p->instance_type);
    }
    plan_catalog_free(&cat);
    db_close(d);
    free(pl);
    return rc;
}

static plan_diff_side diff_side(const side *s)
{
    return (plan_diff_side){&s->l, &s->e, s->oom, s->band_pct};
}

static void print_sides(FILE *f, const side *A, const side *B)
{
    char la[200], lb[200];
    layout_words(&A->l, la, sizeof la);
    layout_words(&B->l, lb, sizeof lb);
    char head[1200];
    char na[80] = "", nb[80] = "";
    if (strcmp(A->name, "A"))
        snprintf(na, sizeof na, " (record %s)", A->name);
    if (strcmp(B->name, "B"))
        snprintf(nb, sizeof nb, " (record %s)", B->name);
    snprintf(head, sizeof head, "model:   %s%s%s\ncluster: %s%s%s\nA%s:  %s; %s %s\nB%s:  %s; "
             "%s %s\n", A->model, strcmp(A->model, B->model) ? " vs " : "",
             strcmp(A->model, B->model) ? B->model : "", A->cluster,
             strcmp(A->cluster, B->cluster) ? " vs " : "", strcmp(A->cluster, B->cluster)
                 ? B->cluster : "", na, la, plan_framework_get(A->l.framework)->key,
             plan_precision_name(A->l.precision), nb, lb,
             plan_framework_get(B->l.framework)->key, plan_precision_name(B->l.precision));
    rpt_term_wrap_lines(f, head);
    rpt_table *t = rpt_table_new();
    if (!t)
        return;
    rpt_table_col(t, "", 0, 0);
    rpt_table_col(t, "A", 1, 0);
    rpt_table_col(t, "B", 1, 0);
    rpt_table_col(t, "B - A", 1, 0);
    plan_diff_term v[PLAN_DIFF_MEM_TERMS];
    int n = plan_diff_mem_terms(&A->e.mem, &B->e.mem, v);
    rpt_table_row(t);
    rpt_table_cell(t, "memory per GPU, GiB");
    for (int k = 0; k < 3; k++)
        rpt_table_cell(t, " ");
    for (int i = 0; i < n; i++) {
        rpt_table_row(t);
        rpt_table_cell(t, "  %s", v[i].name);
        rpt_table_cell(t, "%.2f", v[i].a / GIB);
        rpt_table_cell(t, "%.2f", v[i].b / GIB);
        rpt_table_cell(t, "%+.2f", (v[i].b - v[i].a) / GIB);
    }
    n = plan_diff_time_terms(&A->e.time, &B->e.time, v);
    rpt_table_row(t);
    rpt_table_cell(t, "time per step, s");
    for (int k = 0; k < 3; k++)
        rpt_table_cell(t, " ");
    for (int i = 0; i < n; i++) {
        rpt_table_row(t);
        rpt_table_cell(t, "  %s", v[i].name);
        rpt_table_cell(t, "%.3f", v[i].a);
        rpt_table_cell(t, "%.3f", v[i].b);
        rpt_table_cell(t, "%+.3f", v[i].b - v[i].a);
    }
    rpt_table_row(t);
    rpt_table_cell(t, "  error band");
    rpt_table_cell(t, "\u00b1%.0f %%", A->band_pct);
    rpt_table_cell(t, "\u00b1%.0f %%", B->band_pct);
    rpt_table_cell(t, " ");
    rpt_table_row(t);
    rpt_table_cell(t, "tokens/s");
    rpt_table_cell(t, "%.0f", A->e.tokens_per_s);
    rpt_table_cell(t, "%.0f", B->e.tokens_per_s);
    rpt_table_cell(t, "%+.0f", B->e.tokens_per_s - A->e.tokens_per_s);
    rpt_table_row(t);
    rpt_table_cell(t, "MFU");
    rpt_table_cell(t, "%.1f%%", 100 * A->e.mfu);
    rpt_table_cell(t, "%.1f%%", 100 * B->e.mfu);
    rpt_table_cell(t, "%+.1f", 100 * (B->e.mfu - A->e.mfu));
    if (A->e.cost_per_mtokens > 0 && B->e.cost_per_mtokens > 0) {
        rpt_table_row(t);
        rpt_table_cell(t, "$ per 1M tokens");
        rpt_table_cell(t, "%.3f", A->e.cost_per_mtokens);
        rpt_table_cell(t, "%.3f", B->e.cost_per_mtokens);
        rpt_table_cell(t, "%+.3f", B->e.cost_per_mtokens - A->e.cost_per_mtokens);
    }
    fputc('\n', f);
    rpt_table_print(f, t, "");
    rpt_table_free(t);
    fputc('\n', f);
    char text[1600];
    plan_diff_side sa = diff_side(A), sb = diff_side(B);
    plan_diff_explain(&sa, &sb, text, sizeof text);
    rpt_term_wrap(f, text, "", "");
    char bands[900];
    snprintf(bands, sizeof bands, "(error bands: A %s; B %s)", A->band_basis, B->band_basis);
    rpt_term_wrap(f, bands, "", " ");
}

static cJSON *side_json(const side *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "model", s->model);
    cJSON_AddStringToObject(o, "cluster", s->cluster);
    cJSON_AddBoolToObject(o, "fits", !s->oom);
    cJSON_AddItemToObject(o, "plan", cli_json_plan(&(plan_candidate){s->l, s->e}));
    cJSON_AddNumberToObject(o, "step_band_pct", s->band_pct);
    cJSON_AddStringToObject(o, "band_basis", s->band_basis);
    return o;
}

static int is_ref(const char *s)
{
    if (!(*s >= '1' && *s <= '9'))
        return 0;
    while (*s >= '0' && *s <= '9')
        s++;
    if (*s == ':') {
        s++;
        if (!(*s >= '1' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

int cli_diff_cmd(int argc, char **argv)
{
    const char *a = NULL, *b = NULL, *db_path = NULL, *refs[2] = {NULL, NULL};
    int json = 0, nrefs = 0, bad = 0;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest)
        return 1;
    int nrest = 0;
    rest[nrest++] = argv[0];
    int by_record = argc > 2 && is_ref(argv[1]) && is_ref(argv[2]);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(rest);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (by_record) {
            if (i <= 2)
                refs[nrefs++] = argv[i];
            else if (!strcmp(argv[i], "--db") && i + 1 < argc)
                db_path = argv[++i];
            else
                bad = i;
        } else if (!strcmp(argv[i], "--a") && i + 1 < argc) {
            a = argv[++i];
        } else if (!strcmp(argv[i], "--b") && i + 1 < argc) {
            b = argv[++i];
        } else {
            rest[nrest++] = argv[i]; /* the plan command's options */
        }
    }
    if (bad) {
        char safe[80];
        fprintf(stderr, "smdplan diff: '%s': with two plan records only --db FILE and --json "
                        "(see smdplan diff --help)\n",
                text_comment(argv[bad], safe, sizeof safe));
        free(rest);
        return 2;
    }
    st_err err = {0};
    side A, B;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    int rc;
    if (by_record) {
        rc = side_from_record(db_path, refs[0], &A, &err);
        if (rc == ST_OK)
            rc = side_from_record(db_path, refs[1], &B, &err);
    } else if (a && b) {
        rc = side_from_spec(nrest, rest, a, "a", &A, &err);
        if (rc == ST_OK)
            rc = side_from_spec(nrest, rest, b, "b", &B, &err);
        snprintf(A.name, sizeof A.name, "A");
        snprintf(B.name, sizeof B.name, "B");
    } else {
        rc = ST_RAISE(&err, ST_EINVAL, "diff: give two plan records (smdplan diff 12 12:2) or "
                      "a model, a cluster and two layouts (--a K=V,... --b K=V,...)");
    }
    free(rest);
    if (rc != ST_OK)
        return err.msg[0] ? cli_fail(&err) : 2;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "a", side_json(&A));
        cJSON_AddItemToObject(o, "b", side_json(&B));
        cJSON_AddNumberToObject(o, "step_difference_s", B.e.time.step_s - A.e.time.step_s);
        plan_diff_side sa = diff_side(&A), sb = diff_side(&B);
        cJSON_AddBoolToObject(o, "within_error_bands", plan_diff_within_bands(&sa, &sb));
        char *s = cJSON_Print(o);
        if (s)
            printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
        return 0;
    }
    print_sides(stdout, &A, &B);
    return 0;
}
