/*
 * data_catalog_entry.c: a host's catalog entry as a catalog file (smdplan
 * bench --write-catalog; data.h).
 *
 * The entry's figures come fitted (planner/plan_hwfit.h); this writes them
 * in the catalog's own format, a device's optional figures only where
 * they are positive. An existing file that smdplan bench wrote (it carries
 * the marker below) keeps its entries of other names; any other file is
 * replaced whole, and only with force (common/outfile.h: never through a
 * symbolic link, atomically). The catalog's reader checks the text before
 * it is written.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "common/outfile.h"
#include "data/data.h"
#include "data/data_json.h"

#define MARKER_KEY "_generated_by"
#define MARKER_VALUE "smdplan bench"
#define MARKER "\"" MARKER_KEY "\":\t\"" MARKER_VALUE "\""

struct data_catalog_entry {
    cJSON *gpus, *instances, *curves;
};

int data_catalog_entry_new(data_catalog_entry **out, st_err *err)
{
    data_catalog_entry *e = calloc(1, sizeof *e);
    if (e) {
        e->gpus = cJSON_CreateArray();
        e->instances = cJSON_CreateArray();
        e->curves = cJSON_CreateArray();
    }
    if (!e || !e->gpus || !e->instances || !e->curves) {
        data_catalog_entry_free(e);
        *out = NULL;
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    }
    *out = e;
    return ST_OK;
}

void data_catalog_entry_free(data_catalog_entry *e)
{
    if (!e)
        return;
    cJSON_Delete(e->gpus);
    cJSON_Delete(e->instances);
    cJSON_Delete(e->curves);
    free(e);
}

void data_catalog_entry_add_gpu(data_catalog_entry *e, const char *name, const plan_gpu *g,
                                const char *source, const char *note)
{
    const data_json_member head[] = {
        DATA_JSON_STR("name", name), DATA_JSON_STR("silicon", name),
        DATA_JSON_NUM("mem_bytes", floor(g->mem_bytes)), DATA_JSON_NUM("peak_flops", g->peak_flops),
        DATA_JSON_NUM("hbm_bps", g->hbm_bps), DATA_JSON_NUM("gemm_eff_max", g->gemm_eff_max),
        DATA_JSON_NUM("gemm_dim_half", g->gemm_dim_half),
        DATA_JSON_NUM("misaligned_factor", g->misaligned_factor),
    };
    cJSON *j = cJSON_CreateObject();
    data_json_add(j, head, sizeof head / sizeof head[0]);
    if (g->gemm_align_bytes > 0)
        cJSON_AddNumberToObject(j, "gemm_align_bytes", g->gemm_align_bytes);
    if (g->align_partial_factor > 0)
        cJSON_AddNumberToObject(j, "align_partial_factor", g->align_partial_factor);
    cJSON_AddNumberToObject(j, "hbm_eff", g->hbm_eff);
    cJSON_AddNumberToObject(j, "flash_eff", g->flash_eff);
    const struct { const char *key; double v; } floors[] = {
        {"act_fwd_s", g->act_fwd_s}, {"act_bwd_s", g->act_bwd_s}, {"glu_fwd_s", g->glu_fwd_s},
        {"glu_bwd_s", g->glu_bwd_s}, {"opt_param_s", g->opt_param_s},
        {"attn_fwd_flops", g->attn_fwd_flops}, {"attn_bwd_flops", g->attn_bwd_flops},
        {"attn_row_fwd_s", g->attn_row_fwd_s}, {"attn_row_bwd_s", g->attn_row_bwd_s},
        {"attn_elem_fwd_s", g->attn_elem_fwd_s}, {"attn_elem_bwd_s", g->attn_elem_bwd_s},
        {"flash2_fwd_eff", g->flash2_fwd_eff}, {"flash2_bwd_eff", g->flash2_bwd_eff},
        {"flash_score_fwd_s", g->flash_score_fwd_s}, {"flash_score_bwd_s", g->flash_score_bwd_s},
        {"flash_row_fwd_s", g->flash_row_fwd_s}, {"flash_row_bwd_s", g->flash_row_bwd_s},
    };
    for (size_t i = 0; i < sizeof floors / sizeof floors[0]; i++)
        if (isfinite(floors[i].v) && floors[i].v > 0)
            cJSON_AddNumberToObject(j, floors[i].key, floors[i].v);
    if (g->flash_measured)
        cJSON_AddBoolToObject(j, "flash_measured", 1);
    cJSON_AddStringToObject(j, "source", source);
    cJSON_AddStringToObject(j, "_note", note);
    cJSON_AddItemToArray(e->gpus, j);
}

void data_catalog_entry_add_instance(data_catalog_entry *e, const char *name, const char *gpu,
                                     const plan_instance *in, const char *intra_curve,
                                     const char *net_curve, const char *source,
                                     const char *note)
{
    const data_json_member links[] = {
        DATA_JSON_STR("gpu", gpu), DATA_JSON_NUM("gpus_per_node", in->gpus_per_node),
        DATA_JSON_NUM("nvlink_bps", in->nvlink_bps), DATA_JSON_BOOL("nvswitch", in->nvswitch),
        DATA_JSON_NUM("intra_busbw_bps", in->intra_busbw_bps),
        DATA_JSON_NUM("intra_latency_s", in->intra_latency_s),
        DATA_JSON_NUM("net_bps", in->net_bps), DATA_JSON_NUM("net_latency_s", in->net_latency_s),
        DATA_JSON_NUM("net_ring_eff", in->net_ring_eff),
        DATA_JSON_NUM("net_tree_eff", in->net_tree_eff),
        DATA_JSON_NUM("price_per_hour", in->price_per_hour),
    };
    const data_json_member tail[] = {
        DATA_JSON_BOOL("efa", in->efa), DATA_JSON_STR("intra_curve", intra_curve),
        DATA_JSON_STR("net_curve", net_curve), DATA_JSON_STR("source", source),
    };
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddItemToObject(j, "aliases", cJSON_CreateArray());
    data_json_add(j, links, sizeof links / sizeof links[0]);
    if (in->host_mem_bytes > 0)
        cJSON_AddNumberToObject(j, "host_mem_bytes", in->host_mem_bytes);
    data_json_add(j, tail, sizeof tail / sizeof tail[0]);
    cJSON_AddStringToObject(j, "_note", note);
    cJSON_AddItemToArray(e->instances, j);
}

int data_catalog_entry_has_curve(const data_catalog_entry *e, const char *name)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, e->curves)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(x, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
            return 1;
    }
    return 0;
}

int data_catalog_entry_ncurves(const data_catalog_entry *e)
{
    return cJSON_GetArraySize(e->curves);
}

void data_catalog_entry_add_curve(data_catalog_entry *e, const plan_curve *c)
{
    if (data_catalog_entry_has_curve(e, c->name))
        return;
    cJSON *cv = cJSON_CreateObject();
    cJSON_AddStringToObject(cv, "name", c->name);
    cJSON *xs = cJSON_AddArrayToObject(cv, "log2_bytes"), *ys = cJSON_AddArrayToObject(cv, "eff");
    for (int k = 0; k < c->n; k++) {
        cJSON_AddItemToArray(xs, cJSON_CreateNumber(c->log2_bytes[k]));
        cJSON_AddItemToArray(ys, cJSON_CreateNumber(c->eff[k]));
    }
    cJSON_AddStringToObject(cv, "source", c->source);
    cJSON_AddItemToArray(e->curves, cv);
}

char *data_catalog_entry_json(const data_catalog_entry *e, const char *key)
{
    const cJSON *a = !strcmp(key, "gpus")        ? e->gpus
                     : !strcmp(key, "instances") ? e->instances
                     : !strcmp(key, "curves")    ? e->curves
                                                 : NULL;
    return a ? cJSON_Print(a) : NULL;
}

/* Keep the entries of an existing file of ours whose names are not made
 * now. */
static void keep_others(const cJSON *old, const char *key, cJSON *arr)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(old, key), *e;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name"), *x;
        int taken = 0;
        cJSON_ArrayForEach(x, arr)
        {
            const cJSON *xn = cJSON_GetObjectItemCaseSensitive(x, "name");
            if (cJSON_IsString(nm) && cJSON_IsString(xn) && !strcmp(nm->valuestring, xn->valuestring))
                taken = 1;
        }
        if (!taken)
            cJSON_AddItemToArray(arr, cJSON_Duplicate(e, 1));
    }
}

int data_catalog_entry_write(const data_catalog_entry *e, const char *path, int force,
                             st_err *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "_doc", "This host's catalog entry, measured by smdplan bench "
                                          "(see app/cli_bench.c for what each field is); load "
                                          "it with --catalog FILE.");
    cJSON_AddStringToObject(root, MARKER_KEY, MARKER_VALUE);
    cJSON *g = cJSON_Duplicate(e->gpus, 1), *i = cJSON_Duplicate(e->instances, 1),
          *c = cJSON_Duplicate(e->curves, 1);
    struct stat sb;
    char *old = NULL;
    size_t len = 0;
    st_err ignore = {0};
    if (stat(path, &sb) == 0 && data_read_file(path, &old, &len, &ignore) == ST_OK) {
        cJSON *prev = strstr(old, MARKER) ? cJSON_Parse(old) : NULL;
        if (prev) {
            keep_others(prev, "gpus", g);
            keep_others(prev, "instances", i);
            keep_others(prev, "curves", c);
        }
        cJSON_Delete(prev);
    }
    free(old);
    cJSON_AddItemToObject(root, "gpus", g);
    cJSON_AddItemToObject(root, "instances", i);
    cJSON_AddItemToObject(root, "curves", c);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    size_t n = strlen(text);
    char *full = malloc(n + 2);
    if (!full) {
        cJSON_free(text);
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    }
    memcpy(full, text, n);
    memcpy(full + n, "\n", 2);
    cJSON_free(text);
    /* the catalog's own reader checks the entry before it is written */
    plan_catalog cat;
    memset(&cat, 0, sizeof cat);
    int rc = data_catalog_parse(full, n, path, &cat, err);
    plan_catalog_free(&cat);
    if (rc == ST_OK)
        rc = outfile_write(path, "--write-catalog", full, strlen(full), force, err);
    free(full);
    return rc;
}
