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
#include <math.h>
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

/* ---- the comparison ---- */

typedef struct term {
    const char *name;
    double a, b;
} term;

static void mem_terms(const side *A, const side *B, term *t, int *n)
{
    const plan_mem *a = &A->e.mem, *b = &B->e.mem;
    term v[] = {
        {"weights", a->weights_bytes, b->weights_bytes},
        {"gradients", a->grads_bytes, b->grads_bytes},
        {"optimizer states", a->optimizer_bytes, b->optimizer_bytes},
        {"activations", a->activations_bytes, b->activations_bytes},
        {"recompute work", a->recompute_bytes, b->recompute_bytes},
        {"logits", a->logits_bytes, b->logits_bytes},
        {"comm buffers", a->comm_buffers_bytes, b->comm_buffers_bytes},
        {"CUDA context", a->context_bytes, b->context_bytes},
        {"needed", plan_mem_need_bytes(a), plan_mem_need_bytes(b)},
        {"allocator reserve", a->allocator_bytes, b->allocator_bytes},
    };
    *n = (int)(sizeof v / sizeof v[0]);
    memcpy(t, v, sizeof v);
}

static void time_terms(const side *A, const side *B, term *t, int *n)
{
    const plan_time *a = &A->e.time, *b = &B->e.time;
    term v[] = {
        {"compute", a->compute_s, b->compute_s},
        {"TP communication", a->tp_comm_s + a->cp_comm_s, b->tp_comm_s + b->cp_comm_s},
        {"pipeline sends", a->pp_comm_s, b->pp_comm_s},
        {"exposed gradient sync", a->dp_exposed_s, b->dp_exposed_s},
        {"pipeline bubble", a->bubble_s, b->bubble_s},
        {"optimizer step", a->optimizer_s, b->optimizer_s},
        {"step", a->step_s, b->step_s},
    };
    *n = (int)(sizeof v / sizeof v[0]);
    memcpy(t, v, sizeof v);
}

/* The knobs of two layouts that differ, "tp 8 vs 2, pp 1 vs 8". */
static void knob_diff(const plan_layout *a, const plan_layout *b, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = '\0';
#define DIFF_INT(name, f)                                                                       \
    if (a->f != b->f && u < n)                                                                  \
        u += (size_t)snprintf(buf + u, n - u, "%s" name " %d vs %d", u ? ", " : "", a->f, b->f);
    DIFF_INT("tp", tp)
    DIFF_INT("pp", pp)
    DIFF_INT("dp", dp)
    DIFF_INT("cp", cp)
    DIFF_INT("micro-batch", micro_batch)
    DIFF_INT("microbatches", microbatches)
    DIFF_INT("virtual stages", virtual_stages)
#undef DIFF_INT
    char sa[24], sb[24];
    if (a->schedule != b->schedule && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%sschedule %s vs %s", u ? ", " : "",
                              plan_framework_sched_label(a, sa, sizeof sa), plan_framework_sched_label(b, sb, sizeof sb));
    if (a->recompute != b->recompute && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%srecompute %s vs %s", u ? ", " : "",
                              plan_recompute_name(a->recompute), plan_recompute_name(b->recompute));
    if (a->sharding != b->sharding && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%ssharding %s vs %s", u ? ", " : "",
                              plan_sharding_name(a->sharding), plan_sharding_name(b->sharding));
    if (a->sequence_parallel != b->sequence_parallel && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%ssequence parallel %s vs %s", u ? ", " : "",
                              a->sequence_parallel ? "on" : "off",
                              b->sequence_parallel ? "on" : "off");
    if (a->framework != b->framework && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%sstack %s vs %s", u ? ", " : "",
                              plan_framework_get(a->framework)->key,
                              plan_framework_get(b->framework)->key);
    if (a->precision != b->precision && u < n)
        snprintf(buf + u, n - u, "%sprecision %s vs %s", u ? ", " : "",
                 plan_precision_name(a->precision), plan_precision_name(b->precision));
}

static void explain(FILE *f, const side *A, const side *B)
{
    term t[8] = {0}; /* time_terms sets the nt read; -O3 cannot see it */
    int nt;
    time_terms(A, B, t, &nt);
    int big = 0;
    for (int i = 1; i < nt - 1; i++)
        if (fabs(t[i].b - t[i].a) > fabs(t[big].b - t[big].a))
            big = i;
    double ta = A->e.time.step_s, tb = B->e.time.step_s;
    double pct = ta > 0 ? 100 * (tb - ta) / ta : 0;
    char knobs[400];
    knob_diff(&A->l, &B->l, knobs, sizeof knobs);
    double ma = plan_mem_need_bytes(&A->e.mem) / GIB, mb = plan_mem_need_bytes(&B->e.mem) / GIB;
    char text[1600];
    size_t u = (size_t)snprintf(text, sizeof text, "Difference: ");
    if (!knobs[0])
        u += (size_t)snprintf(text + u, sizeof text - u, "the two are the same layout. ");
    else if (fabs(pct) < 0.05)
        u += (size_t)snprintf(text + u, sizeof text - u, "B takes the same time as A (%s). ", knobs);
    else
        u += (size_t)snprintf(text + u, sizeof text - u,
                              "B's step is %.1f%% %s than A's (%.3f s against %.3f s), mostly in "
                              "its %s (%+.3f s), where the layouts differ in %s. ",
                              fabs(pct), pct > 0 ? "longer" : "shorter", tb, ta,
                              t[big].name, t[big].b - t[big].a, knobs);
    u += (size_t)snprintf(text + u, sizeof text - u, "B needs %.1f GiB per GPU on its fullest "
                          "stage against A's %.1f GiB%s%s. ", mb, ma,
                          B->oom ? " (it does not fit)" : "", A->oom ? " (A does not fit)" : "");
    double ba = A->band_pct / 100, bb = B->band_pct / 100;
    if (ba > 0 && bb > 0 && knobs[0])
        snprintf(text + u, sizeof text - u, "%s", fabs(tb - ta) <= ba * ta + bb * tb
                     ? "The steps lie within each other's error bands: by the evidence behind "
                       "the model, neither is known to be faster."
                     : "The difference is larger than the error bands: it is the evidence's, "
                       "not noise.");
    cli_wrap(f, text, "", "");
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
    cli_wrap_lines(f, head);
    cli_table *t = cli_table_new();
    if (!t)
        return;
    cli_table_col(t, "", 0, 0);
    cli_table_col(t, "A", 1, 0);
    cli_table_col(t, "B", 1, 0);
    cli_table_col(t, "B - A", 1, 0);
    term v[12];
    int n;
    mem_terms(A, B, v, &n);
    cli_table_row(t);
    cli_table_cell(t, "memory per GPU, GiB");
    for (int k = 0; k < 3; k++)
        cli_table_cell(t, " ");
    for (int i = 0; i < n; i++) {
        cli_table_row(t);
        cli_table_cell(t, "  %s", v[i].name);
        cli_table_cell(t, "%.2f", v[i].a / GIB);
        cli_table_cell(t, "%.2f", v[i].b / GIB);
        cli_table_cell(t, "%+.2f", (v[i].b - v[i].a) / GIB);
    }
    time_terms(A, B, v, &n);
    cli_table_row(t);
    cli_table_cell(t, "time per step, s");
    for (int k = 0; k < 3; k++)
        cli_table_cell(t, " ");
    for (int i = 0; i < n; i++) {
        cli_table_row(t);
        cli_table_cell(t, "  %s", v[i].name);
        cli_table_cell(t, "%.3f", v[i].a);
        cli_table_cell(t, "%.3f", v[i].b);
        cli_table_cell(t, "%+.3f", v[i].b - v[i].a);
    }
    cli_table_row(t);
    cli_table_cell(t, "  error band");
    cli_table_cell(t, "\u00b1%.0f %%", A->band_pct);
    cli_table_cell(t, "\u00b1%.0f %%", B->band_pct);
    cli_table_cell(t, " ");
    cli_table_row(t);
    cli_table_cell(t, "tokens/s");
    cli_table_cell(t, "%.0f", A->e.tokens_per_s);
    cli_table_cell(t, "%.0f", B->e.tokens_per_s);
    cli_table_cell(t, "%+.0f", B->e.tokens_per_s - A->e.tokens_per_s);
    cli_table_row(t);
    cli_table_cell(t, "MFU");
    cli_table_cell(t, "%.1f%%", 100 * A->e.mfu);
    cli_table_cell(t, "%.1f%%", 100 * B->e.mfu);
    cli_table_cell(t, "%+.1f", 100 * (B->e.mfu - A->e.mfu));
    if (A->e.cost_per_mtokens > 0 && B->e.cost_per_mtokens > 0) {
        cli_table_row(t);
        cli_table_cell(t, "$ per 1M tokens");
        cli_table_cell(t, "%.3f", A->e.cost_per_mtokens);
        cli_table_cell(t, "%.3f", B->e.cost_per_mtokens);
        cli_table_cell(t, "%+.3f", B->e.cost_per_mtokens - A->e.cost_per_mtokens);
    }
    fputc('\n', f);
    cli_table_print(f, t, "");
    cli_table_free(t);
    fputc('\n', f);
    explain(f, A, B);
    char bands[900];
    snprintf(bands, sizeof bands, "(error bands: A %s; B %s)", A->band_basis, B->band_basis);
    cli_wrap(f, bands, "", " ");
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
        double ba = A.band_pct / 100, bb = B.band_pct / 100;
        cJSON_AddBoolToObject(o, "within_error_bands",
                              fabs(B.e.time.step_s - A.e.time.step_s) <=
                                  ba * A.e.time.step_s + bb * B.e.time.step_s);
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
