/*
 * cli_compare.c: without --instances, compare every instance type of the
 * catalog at 1, 2, 4, ... up to --max-instances instances: the best plan of
 * each, its step time, throughput, MFU, price, and the time and cost to train
 * --tokens tokens. Marks the fastest and the cheapest.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/cli_int.h"
#include "common/units.h"
#include "planner/plan_framework.h"

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

int cli_compare(const cli_plan_opts *o, cli_plan_ctx *x)
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
    cli_progress prog;
    cli_progress_start(&prog, "comparing instance types");
    for (int i = 0; i < x->cat.ninstances && !ex; i++) {
        const plan_instance *in = &x->cat.instances[i];
        cli_progress_step(&prog, i, x->cat.ninstances);
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
    char tok[32];
    if (o->json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "model", cli_json_model(&x->model));
        cJSON_AddNumberToObject(root, "tokens", o->tokens);
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < n; i++) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "instance_type", rows[i].inst->name);
            cJSON_AddNumberToObject(j, "instances", rows[i].nodes);
            cJSON_AddNumberToObject(j, "train_time_s", rows[i].train_s);
            cJSON_AddNumberToObject(j, "train_cost", rows[i].train_cost);
            cJSON_AddBoolToObject(j, "fastest", i == fastest);
            cJSON_AddBoolToObject(j, "cheapest", i == cheapest);
            cJSON_AddItemToObject(j, "plan", cli_json_plan(&rows[i].best));
            cJSON_AddItemToArray(arr, j);
        }
        cJSON_AddItemToObject(root, "options", arr);
        char *s = cJSON_Print(root);
        if (s)
            printf("%s\n", s);
        free(s);
        cJSON_Delete(root);
    } else {
        cli_print_model(stdout, &x->model);
        printf("compare: every catalog type at 1..%d instances (powers of two), training %s tokens\n\n",
               o->max_instances, units_fmt_count(o->tokens, tok, sizeof tok));
        printf("%-16s %5s %5s  %-22s %8s %11s %6s %9s %10s %12s\n", "instance", "count", "GPUs",
               "best layout", "step s", "tokens/s", "MFU", "$/h", "train", "train $");
        for (int i = 0; i < n; i++) {
            const option_row *r = &rows[i];
            const plan_layout *l = &r->best.layout;
            char lay[40], t[24], cost[24];
            snprintf(lay, sizeof lay, "tp%d pp%d dp%d mbs%d %s", l->tp, l->pp, l->dp, l->micro_batch,
                     l->recompute == PLAN_RECOMP_NONE ? "" : l->recompute == PLAN_RECOMP_FULL ? "rc" : "sel");
            units_fmt_seconds(r->train_s, t, sizeof t);
            if (r->train_cost > 0)
                snprintf(cost, sizeof cost, "%.0f", r->train_cost);
            else
                snprintf(cost, sizeof cost, "-");
            char price[24];
            if (r->best.est.cost_per_hour > 0)
                snprintf(price, sizeof price, "%.2f", r->best.est.cost_per_hour);
            else
                snprintf(price, sizeof price, "-");
            printf("%-16s %5d %5d  %-22s %8.3f %11.0f %5.1f%% %9s %10s %12s%s%s\n", r->inst->name,
                   r->nodes, r->nodes * r->inst->gpus_per_node, lay, r->best.est.time.step_s,
                   r->best.est.tokens_per_s, 100 * r->best.est.mfu, price, t, cost,
                   i == fastest ? "  <- fastest" : "", i == cheapest ? "  <- cheapest" : "");
        }
        if (n == 0)
            printf("No instance type fits this model at up to %d instances; raise --max-instances.\n",
                   o->max_instances);
    }
    options_record rec = {o, x, rows, n};
    cli_record(o->db_path, o->no_record, record_options, &rec);
    free(rows);
    free(res);
    return n == 0 ? 3 : 0;
}
