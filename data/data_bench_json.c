/*
 * data_bench_json.c: smdplan bench's measurements and entry as JSON
 * (data_bench_json.h). The keys are those smdplan bench --json has always
 * printed; scripts read them (tests/integration/test_cli_bench.sh).
 */
#include "data/data_bench_json.h"

#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "data/data_json.h"

static cJSON *gemm_json(const plan_bench_gemm *g)
{
    const data_json_member m[] = {
        DATA_JSON_STR("kind", g->kind), DATA_JSON_NUM("threads", g->threads),
        DATA_JSON_NUM("m", g->m), DATA_JSON_NUM("n", g->n), DATA_JSON_NUM("k", g->k),
        DATA_JSON_NUM("time_s", g->time_s), DATA_JSON_NUM("achieved_flops", g->flops),
    };
    cJSON *x = cJSON_CreateObject();
    data_json_add(x, m, sizeof m / sizeof m[0]);
    return x;
}

static cJSON *elem_json(const plan_bench_elem *e)
{
    const data_json_member m[] = {
        DATA_JSON_STR("op", e->op), DATA_JSON_NUM("threads", e->threads), DATA_JSON_NUM("n", e->n),
        DATA_JSON_NUM("time_s", e->time_s), DATA_JSON_NUM("elem_s", e->elem_s),
    };
    cJSON *x = cJSON_CreateObject();
    data_json_add(x, m, sizeof m / sizeof m[0]);
    return x;
}

cJSON *data_bench_cpu_json(const plan_bench_cpu *b)
{
    const data_json_member head[] = {
        DATA_JSON_STR("host", b->host), DATA_JSON_STR("cpu_model", b->cpu_model),
        DATA_JSON_STR("blas", b->blas), DATA_JSON_NUM("cores", b->cores),
        DATA_JSON_NUM("mem_bytes", b->mem_bytes), DATA_JSON_NUM("spread_median", b->spread_median),
        DATA_JSON_NUM("spread_worst", b->spread_worst), DATA_JSON_NUM("load_start", b->load_start),
        DATA_JSON_NUM("load_end", b->load_end), DATA_JSON_BOOL("busy", plan_bench_busy(b)),
    };
    cJSON *o = cJSON_CreateObject();
    data_json_add(o, head, sizeof head / sizeof head[0]);
    cJSON *g = cJSON_AddArrayToObject(o, "gemm");
    for (int i = 0; i < b->ngemm; i++)
        cJSON_AddItemToArray(g, gemm_json(&b->gemm[i]));
    cJSON *el = cJSON_AddArrayToObject(o, "elementwise");
    for (int i = 0; i < b->nelem; i++)
        cJSON_AddItemToArray(el, elem_json(&b->elem[i]));
    cJSON *m = cJSON_AddArrayToObject(o, "triad");
    for (int i = 0; i < b->nmem; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "threads", b->mem[i].threads);
        cJSON_AddNumberToObject(x, "array_bytes", b->mem[i].array_bytes);
        cJSON_AddNumberToObject(x, "triad_bps", b->mem[i].triad_bps);
        cJSON_AddItemToArray(m, x);
    }
    return o;
}

void data_bench_entry_json(cJSON *obj, const data_catalog_entry *e, const char *key)
{
    char *t = e ? data_catalog_entry_json(e, key) : NULL;
    cJSON *a = t ? cJSON_Parse(t) : NULL;
    free(t);
    cJSON_AddItemToObject(obj, key, a ? a : cJSON_CreateArray());
}

char *data_bench_json(const data_bench_doc *d)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    char key[48];
    if (d->device)
        cJSON_AddItemToObject(root, d->device_key, data_bench_cpu_json(d->device));
    if (d->device_from_record) {
        snprintf(key, sizeof key, "%s_from_record", d->device_key);
        cJSON_AddNumberToObject(root, key, (double)d->device_from_record);
    }
    cJSON *c = d->comm_json ? cJSON_Parse(d->comm_json) : NULL;
    if (c)
        cJSON_AddItemToObject(root, "comm", c);
    if (d->comm_from_record)
        cJSON_AddNumberToObject(root, "comm_from_record", (double)d->comm_from_record);
    cJSON *cat = cJSON_AddObjectToObject(root, "catalog");
    data_bench_entry_json(cat, d->entry, "gpus");
    data_bench_entry_json(cat, d->entry, "instances");
    if (d->with_curves)
        data_bench_entry_json(cat, d->entry, "curves");
    if (d->catalog_file)
        cJSON_AddStringToObject(root, "catalog_file", d->catalog_file);
    cJSON_AddBoolToObject(root, "recorded", d->recorded);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}
