/*
 * cli_instance_types.c: without --instances, compare every instance type
 * of the catalog at 1, 2, 4, ... up to --max-instances instances: the best
 * plan of each, its step time, throughput, MFU, price, and the time and
 * cost to train --tokens tokens. Marks the fastest and the cheapest.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "data/data_json.h"
#include "common/units.h"
#include "planner/plan_framework.h"
#include "data/data_plan_json.h"
#include "reports/rpt_plan.h"

typedef struct option_row {
    const plan_instance *inst;
    int nodes;
    plan_candidate best;
    double train_s;
    double train_cost;           /* 0 when the price is unknown */
} option_row;

typedef struct options_record {
    const cli_plan_opts *o;
    const cli_plan_ctx *x;
    const option_row *rows;
    int n;
} options_record;

/* The comparison as one plan record: the best plan of each type and count. */
static int record_options(db *d, const db_provenance *p, void *ctx, st_err *err)
{
    const options_record *s = ctx;
    int n = s->n;
    plan_cluster *cl = calloc(n ? (size_t)n : 1, sizeof *cl);
    plan_candidate *cd = calloc(n ? (size_t)n : 1, sizeof *cd);
    int rc = cl && cd ? ST_OK : ST_RAISE(err, ST_ENOMEM, "out of memory");
    for (int i = 0; rc == ST_OK && i < n; i++) {
        rc = plan_cluster_make(&s->x->cat, s->rows[i].inst, s->rows[i].nodes, &cl[i], err);
        if (rc == ST_OK)
            plan_cluster_use_framework(&s->x->cat, s->o->cfg.framework, &cl[i]);
        cd[i] = s->rows[i].best;
    }
    if (rc == ST_OK)
        rc = db_record_plan_options(d, p, &s->x->model, &s->o->cfg, n, cl, cd, s->o->tokens, NULL,
                                    err);
    free(cl);
    free(cd);
    return rc;
}

/* --json: the model, the tokens, every option with its plan, the types
 * left out. */
static void options_json(const cli_plan_opts *o, const cli_plan_ctx *x, const plan_framework *fw,
                         const option_row *rows, int n, int fastest, int cheapest)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "model", data_json_model(&x->model));
    cJSON_AddNumberToObject(root, "tokens", o->tokens);
    cJSON_AddStringToObject(root, "price_list", cli_price_list());
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "instance_type", rows[i].inst->name);
        cJSON_AddNumberToObject(j, "instances", rows[i].nodes);
        cJSON_AddNumberToObject(j, "train_time_s", rows[i].train_s);
        cJSON_AddNumberToObject(j, "train_cost", rows[i].train_cost);
        cJSON_AddBoolToObject(j, "fastest", i == fastest);
        cJSON_AddBoolToObject(j, "cheapest", i == cheapest);
        cJSON_AddItemToObject(j, "plan", data_json_plan(&rows[i].best));
        cJSON_AddItemToArray(arr, j);
    }
    cJSON_AddItemToObject(root, "options", arr);
    cJSON *lo = cJSON_AddArrayToObject(root, "instance_types_left_out");
    for (int i = 0; i < x->cat.ninstances; i++)
        if (!plan_framework_runs_on(fw, &x->cat.instances[i]))
            cJSON_AddItemToArray(lo, cJSON_CreateString(x->cat.instances[i].name));
    char *s = cJSON_Print(root);
    if (s)
        printf("%s\n", s);
    free(s);
    cJSON_Delete(root);
}

/* The text: the model and prices, a table of the options, what its
 * columns mean, the types left out. */
static void options_text(const cli_plan_opts *o, const cli_plan_ctx *x, const plan_framework *fw,
                         const option_row *rows, int n, int fastest, int cheapest)
{
    char tok[32];
    rpt_term_capture_buf hb;
    FILE *h = rpt_term_capture(&hb);
    rpt_plan_model(h ? h : stdout, &x->model);
    fprintf(h ? h : stdout,
            "compare: every catalog type at 1..%d instances (powers of two), training %s "
            "tokens\nprices:  %s\n",
            o->max_instances, units_fmt_count(o->tokens, tok, sizeof tok), cli_price_list());
    rpt_term_capture_wrap(&hb, stdout, "", "         ");
    printf("\n");
    rpt_table *t = rpt_table_new();
    rpt_table_col(t, "instance", 0, 0);
    rpt_table_col(t, "count", 1, 0);
    rpt_table_col(t, "GPUs", 1, 2);
    rpt_table_col(t, "batch", 1, 1);
    rpt_table_col(t, "best layout", 0, 3);
    rpt_table_col(t, "step s", 1, 2);
    rpt_table_col(t, "tokens/s", 1, 1);
    rpt_table_col(t, "MFU", 1, 3);
    rpt_table_col(t, "$/h", 1, 2);
    rpt_table_col(t, "train", 1, 0);
    rpt_table_col(t, "train $", 1, 0);
    rpt_table_col(t, "", 0, 0);
    int64_t bmin = 0, bmax = 0;
    for (int i = 0; i < n; i++) {
        const option_row *r = &rows[i];
        const plan_layout *l = &r->best.layout;
        char lay[48], tt[24];
        snprintf(lay, sizeof lay, "tp%d pp%d dp%d mbs%d%s", l->tp, l->pp, l->dp,
                 l->micro_batch,
                 l->recompute == PLAN_RECOMP_NONE   ? ""
                 : l->recompute == PLAN_RECOMP_FULL ? " rc"
                                                    : " sel");
        units_fmt_seconds(r->train_s, tt, sizeof tt);
        rpt_table_row(t);
        rpt_table_cell(t, "%s", r->inst->name);
        rpt_table_cell(t, "%d", r->nodes);
        rpt_table_cell(t, "%d", r->nodes * r->inst->gpus_per_node);
        rpt_table_cell(t, "%lld", (long long)l->global_batch);
        rpt_table_cell(t, "%s", lay);
        rpt_table_cell(t, "%.3f", r->best.est.time.step_s);
        rpt_table_cell(t, "%.0f", r->best.est.tokens_per_s);
        rpt_table_cell(t, "%.1f%%", 100 * r->best.est.mfu);
        if (r->best.est.cost_per_hour > 0)
            rpt_table_cell(t, "%.2f", r->best.est.cost_per_hour);
        else
            rpt_table_cell(t, "-");
        rpt_table_cell(t, "%s", tt);
        if (r->train_cost > 0)
            rpt_table_cell(t, "%.0f", r->train_cost);
        else
            rpt_table_cell(t, "-");
        rpt_table_cell(t, "%s%s", i == fastest ? "<- fastest" : "",
                       i == cheapest ? (i == fastest ? ", cheapest" : "<- cheapest") : "");
        if (i == 0 || l->global_batch < bmin)
            bmin = l->global_batch;
        if (i == 0 || l->global_batch > bmax)
            bmax = l->global_batch;
    }
    if (n > 0)
        rpt_table_print(stdout, t, "");
    rpt_table_free(t);
    if (n > 0)
        rpt_term_wrap(stdout, "best layout: tp, pp, dp: tensor-, pipeline- and data-parallel "
                              "degrees; mbs: sequences per microbatch; rc: full activation "
                              "recompute, sel: selective (the attention core only).", "", "");
    if (n > 0 && bmin != bmax) {
        char note[400];
        snprintf(note, sizeof note,
                 "batch: sequences per step, the GPT-3 schedule's batch for this model "
                 "rounded to a multiple of each cluster's GPUs, so it changes per row (%lld "
                 "to %lld); time and cost to train count tokens, so the rows compare; set "
                 "--global-batch to compare steps at one batch.",
                 (long long)bmin, (long long)bmax);
        rpt_term_wrap(stdout, note, "", "");
    }
    char left_out[512] = "";
    for (int i = 0; i < x->cat.ninstances; i++) {
        const char *name = x->cat.instances[i].name;
        size_t u = strlen(left_out);
        if (!plan_framework_runs_on(fw, &x->cat.instances[i]) &&
            u + strlen(name) + 3 < sizeof left_out)
            snprintf(left_out + u, sizeof left_out - u, "%s%s", u ? ", " : "", name);
    }
    if (left_out[0]) {
        char types[160], note[900];
        snprintf(note, sizeof note,
                 "left out: %s, where %s does not run (it runs on %s: its documentation, "
                 "Supported Instance Types); --framework NAME compares them for another "
                 "stack.", left_out, fw->label,
                 plan_framework_instance_list(fw, types, sizeof types));
        rpt_term_wrap(stdout, note, "", "");
    }
    if (n == 0)
        printf("No instance type fits this model at up to %d instances; raise --max-instances.\n",
               o->max_instances);
}

int cli_instance_types_compare(const cli_plan_opts *o, cli_plan_ctx *x)
{
    st_err err = {0};
    plan_config cfg = o->cfg;
    cfg.top_k = 1;
    int cap = 64 * x->cat.ninstances;
    option_row *rows = calloc((size_t)cap, sizeof *rows);
    plan_result *res = calloc(1, sizeof *res);
    if (!rows || !res) {
        free(rows);
        free(res);
        fprintf(stderr, "smdplan: out of memory\n");
        return 1;
    }
    int n = 0, ex = 0;
    /* instance types the framework does not run on: left out, and said */
    const plan_framework *fw = plan_framework_get(cfg.framework);
    cli_progress prog;
    cli_progress_start(&prog, "comparing instance types");
    for (int i = 0; i < x->cat.ninstances && !ex; i++) {
        const plan_instance *in = &x->cat.instances[i];
        cli_progress_step(&prog, i, x->cat.ninstances);
        if (!plan_framework_runs_on(fw, in))
            continue;
        for (int nodes = 1; nodes <= o->max_instances && n < cap; nodes *= 2) {
            plan_cluster c;
            if (plan_cluster_make(&x->cat, in, nodes, &c, &err) != ST_OK) {
                ex = cli_fail(&err);
                break;
            }
            plan_cluster_use_framework(&x->cat, cfg.framework, &c);
            if (plan_search(&x->model, &c, &cfg, res, &err) != ST_OK) {
                ex = cli_fail(&err);
                break;
            }
            if (res->ntop == 0)
                continue;
            option_row *r = &rows[n++];
            r->inst = in;
            r->nodes = nodes;
            r->best = res->top[0];
            r->train_s = o->tokens / r->best.est.tokens_per_s;
            r->train_cost = in->price_per_hour > 0 ? r->train_s / 3600.0 * in->price_per_hour * nodes : 0;
        }
    }
    cli_progress_end(&prog);
    if (ex) {
        free(rows);
        free(res);
        return ex;
    }
    int fastest = -1, cheapest = -1;
    for (int i = 0; i < n; i++) {
        if (fastest < 0 || rows[i].train_s < rows[fastest].train_s)
            fastest = i;
        if (rows[i].train_cost > 0 && (cheapest < 0 || rows[i].train_cost < rows[cheapest].train_cost))
            cheapest = i;
    }
    if (o->json)
        options_json(o, x, fw, rows, n, fastest, cheapest);
    else
        options_text(o, x, fw, rows, n, fastest, cheapest);
    options_record rec = {o, x, rows, n};
    cli_record(o->db_path, o->no_record, record_options, &rec);
    free(rows);
    free(res);
    return n == 0 ? 3 : 0;
}
