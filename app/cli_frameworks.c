/*
 * cli_frameworks.c: `smdplan frameworks`, the stacks and releases the
 * planner knows.
 *
 *   smdplan frameworks [--json]          every profile: key, in force from,
 *                                        what it inherits, family, attention
 *   smdplan frameworks KEY [--json]      one profile's every value, the entry
 *                                        it is written in, and its citation
 *
 * KEY is what --framework takes: "megatron@2022", or a stack ("megatron",
 * its latest release). The profiles are data/frameworks.json (data/
 * reads them at start). Exit 0, or 2 with one line for a bad option or key.
 */
#include "app/cli.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli_int.h"
#include "data/data.h"
#include "planner/plan_framework.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan frameworks [KEY] [--json]\n"
            "\n"
            "List the training stacks a plan can be for, one line per release\n"
            "(--framework takes the key, or a stack for its latest release); with KEY,\n"
            "every value of that profile with the entry it is written in and its source.\n"
            "\n"
            "  --json          machine-readable\n"
            "  -h, --help      show this help\n"
            "\n"
            "Profiles: %s\n",
            data_frameworks_path());
}

static int list(int json)
{
    char ym[16];
    if (json) {
        cJSON *a = cJSON_CreateArray();
        for (int i = 0; i < plan_nframeworks; i++) {
            const plan_framework *f = plan_framework_get(i);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "key", f->key);
            cJSON_AddStringToObject(o, "stack", f->stack);
            cJSON_AddStringToObject(o, "released", plan_fw_ym_text(f->released_ym, ym, sizeof ym));
            cJSON_AddStringToObject(o, "inherits", f->inherits);
            cJSON_AddStringToObject(o, "family", plan_fw_family_key(f->family));
            cJSON_AddStringToObject(o, "attention", plan_attn_name(f->attention));
            cJSON_AddStringToObject(o, "label", f->label);
            cJSON_AddBoolToObject(o, "default", i == PLAN_FW_DEFAULT);
            cJSON_AddItemToArray(a, o);
        }
        char *s = cJSON_Print(a);
        printf("%s\n", s ? s : "[]");
        free(s);
        cJSON_Delete(a);
        return 0;
    }
    rpt_table *t = rpt_table_new();
    if (!t)
        return 1;
    rpt_table_col(t, "key", 0, 0);
    rpt_table_col(t, "from", 0, 1);
    rpt_table_col(t, "inherits", 0, 3);
    rpt_table_col(t, "family", 0, 4);
    rpt_table_col(t, "attention", 0, 2);
    rpt_table_col(t, "stack", 0, 0);
    for (int i = 0; i < plan_nframeworks; i++) {
        const plan_framework *f = plan_framework_get(i);
        rpt_table_row(t);
        rpt_table_cell(t, "%s%s", f->key, i == PLAN_FW_DEFAULT ? " *" : "");
        rpt_table_cell(t, "%s", plan_fw_ym_text(f->released_ym, ym, sizeof ym));
        rpt_table_cell(t, "%s", f->inherits[0] ? f->inherits : "-");
        rpt_table_cell(t, "%s", plan_fw_family_key(f->family));
        rpt_table_cell(t, "%s", plan_attn_name(f->attention));
        rpt_table_cell(t, "%s", f->label);
    }
    rpt_table_print(stdout, t, "");
    rpt_table_free(t);
    printf("(* the default; --framework STACK is its latest release; from: the month it is in "
           "force from, which validate reads a run's source date against; smdplan frameworks "
           "KEY shows every value and its source)\n");
    return 0;
}

static int describe(const char *key, int json)
{
    st_err err = {0};
    int i = -1;
    if (plan_framework_find(key, &i, &err) != ST_OK)
        return cli_fail(&err);
    const plan_framework *f = plan_framework_get(i);
    data_fw_line *lines = NULL;
    int n = 0;
    if (data_frameworks_describe(NULL, f->key, &lines, &n, &err) != ST_OK)
        return cli_fail(&err);
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", f->key);
        cJSON *a = cJSON_AddArrayToObject(o, "values");
        for (int k = 0; k < n; k++) {
            cJSON *v = cJSON_CreateObject();
            cJSON_AddStringToObject(v, "field", lines[k].field);
            cJSON_AddRawToObject(v, "value", lines[k].value);
            cJSON_AddStringToObject(v, "from", lines[k].from);
            cJSON_AddStringToObject(v, "source", lines[k].cite);
            cJSON_AddItemToArray(a, v);
        }
        char *s = cJSON_Print(o);
        printf("%s\n", s ? s : "{}");
        free(s);
        cJSON_Delete(o);
    } else {
        printf("%s: %s\n", f->key, f->label);
        for (int k = 0; k < n; k++) {
            char head[96], text[1024];
            snprintf(head, sizeof head, "  %-22s ", lines[k].field);
            snprintf(text, sizeof text, "%s%s%s%s%s", lines[k].value,
                     strcmp(lines[k].from, f->key) ? " (from " : "",
                     strcmp(lines[k].from, f->key) ? lines[k].from : "",
                     strcmp(lines[k].from, f->key) ? ")" : "",
                     lines[k].cite[0] ? " -- " : "");
            size_t u = strlen(text);
            snprintf(text + u, sizeof text - u, "%s", lines[k].cite);
            rpt_term_wrap(stdout, text, head, "                           ");
        }
    }
    free(lines);
    return 0;
}

int cli_frameworks_cmd(int argc, char **argv)
{
    enum { O_JSON = 256, O_NO_RECORD };
    static const struct option lo[] = {
        {"json", no_argument, NULL, O_JSON},
        {"no-record", no_argument, NULL, O_NO_RECORD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0, id;
    optind = 1;
    opterr = 0;
    while ((id = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (id) {
        case O_JSON: json = 1; break;
        case O_NO_RECORD: break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "smdplan frameworks: unknown option '%s'; allowed: --json (see "
                    "smdplan frameworks --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "smdplan frameworks: '%s': one KEY at most\n", argv[optind + 1]);
        return 2;
    }
    return optind < argc ? describe(argv[optind], json) : list(json);
}
