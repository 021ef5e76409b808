/*
 * cli_models.c: `smdplan models`, the widely used open models smdplan
 * knows by name (data/hf_models.json), each with its shape, parameters,
 * training length and the page its config.json is published on. Any of the
 * names goes to --model, offline.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/cli.h"
#include "app/cli_int.h"
#include "data/data_json.h"
#include "common/units.h"
#include "data/data.h"

int cli_models_cmd(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: smdplan models [--json]\n\n"
                   "The widely used open models smdplan knows by name, offline\n"
                   "(data/hf_models.json): give any of them to --model, e.g.\n"
                   "  smdplan --model meta-llama/Llama-3.1-70B --instances 16xp5\n");
            return 0;
        } else {
            fprintf(stderr, "smdplan models: unknown option '%s'; allowed: --json, --help\n",
                    argv[i]);
            return 2;
        }
    }
    data_hf_named *v = NULL;
    int n = 0;
    st_err err = {0};
    if (data_hf_named_list(&v, &n, &err) != ST_OK)
        return cli_fail(&err);
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; arr && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", v[i].name);
            if (v[i].ok) {
                cJSON_AddItemToObject(o, "model", data_json_model(&v[i].model));
            } else {
                cJSON_AddNullToObject(o, "model");
                cJSON_AddStringToObject(o, "not_modelled", v[i].why);
            }
            cJSON_AddItemToArray(arr, o);
        }
        char *s = cJSON_Print(arr);
        if (s)
            printf("%s\n", s);
        free(s);
        cJSON_Delete(arr);
    } else {
        rpt_table *t = rpt_table_new();
        rpt_table_col(t, "name", 0, 0);
        rpt_table_col(t, "params", 1, 0);
        rpt_table_col(t, "arch", 0, 2);
        rpt_table_col(t, "layers", 1, 1);
        rpt_table_col(t, "hidden", 1, 1);
        rpt_table_col(t, "heads", 1, 1);
        rpt_table_col(t, "ffn", 1, 2);
        rpt_table_col(t, "vocab", 1, 2);
        rpt_table_col(t, "seq", 1, 0);
        for (int i = 0; t && i < n; i++) {
            const plan_model *m = &v[i].model;
            char p[32];
            rpt_table_row(t);
            rpt_table_cell(t, "%s", v[i].name);
            if (!v[i].ok) {
                for (int k = 0; k < 8; k++)
                    rpt_table_cell(t, "-");
                rpt_table_note(t, "not modelled: %s", v[i].why);
                continue;
            }
            rpt_table_cell(t, "%s", units_fmt_count((double)m->params, p, sizeof p));
            rpt_table_cell(t, "%s", m->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt");
            rpt_table_cell(t, "%lld", (long long)m->layers);
            rpt_table_cell(t, "%lld", (long long)m->hidden);
            char hd[32] = "";
            if (plan_model_attn_width(m) != m->hidden)
                snprintf(hd, sizeof hd, " x%lld", (long long)plan_model_head_dim(m));
            if (m->kv_heads != m->heads)
                rpt_table_cell(t, "%lld/%lld%s", (long long)m->heads, (long long)m->kv_heads, hd);
            else
                rpt_table_cell(t, "%lld%s", (long long)m->heads, hd);
            rpt_table_cell(t, "%lld", (long long)m->ffn);
            rpt_table_cell(t, "%lld", (long long)m->vocab);
            rpt_table_cell(t, "%lld", (long long)m->seq);
            if (plan_model_local_layers(m) > 0)
                rpt_table_note(t, "sliding window of %lld tokens on %lld of %lld layers",
                               (long long)m->sliding_window, (long long)plan_model_local_layers(m),
                               (long long)m->layers);
        }
        if (t)
            rpt_table_print(stdout, t, "");
        rpt_table_free(t);
        rpt_term_wrap(stdout, "(heads: query/key-value heads where they differ, x the size of a "
                              "head where it is not hidden/heads; seq: the length the model was "
                              "pre-trained at, the default --seq; each shape read from its "
                              "published config.json, the page and the training length's "
                              "source in data/hf_models.json and in the plan's shape line)",
                      "", " ");
    }
    free(v);
    return 0;
}
