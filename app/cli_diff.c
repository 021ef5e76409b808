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

#include <cjson/cJSON.h>

#include "app/cli.h"
#include "app/cli_int.h"
#include "common/text.h"
#include "data/data.h"
#include "data/data_diff.h"
#include "planner/plan_diff_plan.h"
#include "reports/rpt_diff.h"
#include "data/data_band_plan.h"

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

/* ---- two layouts on the command line ---- */

/* "tp=8,pp=2" into argv words "--tp" "8" "--pp" "2" after the base ones. */
static int side_from_spec(int argc, char **argv, const char *spec, const char *which,
                          plan_diff_plan *out, st_err *err)
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
    if (rc == ST_OK) {
        int ex = cli_plan_parse(n, v, &o, err);
        if (ex)
            rc = ST_EINVAL;
    }
    if (rc == ST_OK && !o.instances)
        rc = ST_RAISE(err, ST_EINVAL, "diff: give the cluster with --instances (e.g. 16xp4d)");
    if (rc == ST_OK && (rc = cli_plan_resolve(&o, &x, 1, err)) == ST_OK)
        have_ctx = 1;
    /* the global batch the plan command would use (a preset's published one) */
    char batch_src[400];
    if (rc == ST_OK && !o.batch_size)
        rc = cli_preset_batch(&o, &x, batch_src, sizeof batch_src, err);
    if (rc == ST_OK) {
        char what[ST_MSG_MAX];
        snprintf(what, sizeof what, "--%s %s", which, spec);
        rc = plan_diff_plan_search(&x.model, &x.cluster, &o.cfg, what, out, err);
    }
    if (rc == ST_OK) {
        snprintf(out->name, sizeof out->name, "%s", which);
        out->band_pct = data_band_of_plan(&x.cluster, out->layout.framework, out->band_basis,
                                    sizeof out->band_basis);
    }
    if (have_ctx)
        cli_plan_ctx_free(&x);
    for (int i = 0; i < no; i++)
        free(opts[i]);
    free(copy);
    free(v);
    return rc;
}

/* ---- two recorded plans ---- */

static int side_from_record(const char *db_path, const char *ref, plan_diff_plan *out,
                            st_err *err)
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
    return data_diff_plan_read(db_default_path(db_path), id, rank, out, err);
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
    plan_diff_plan A, B;
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
        cJSON *o = data_diff_json(&A, &B);
        char *s = cJSON_Print(o);
        if (s)
            printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
        return 0;
    }
    rpt_diff_text(stdout, &A, &B);
    return 0;
}
