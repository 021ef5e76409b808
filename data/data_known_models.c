/*
 * data_known_models.c: the models a run may name without publishing their
 * shape (data_known_models.h), read from the two files that already hold
 * them: data/models.json's presets (each by its key, its source a paper's
 * table) and data/hf_models.json's configs (each by its Hugging Face id and
 * aliases, its source the config.json). The presets are installed first:
 * a name both files give matches the preset; every name is the file's
 * own, none made up here.
 */
#include "data/data_known_models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/data.h"
#include "planner/plan_validate.h"

static void add_name(plan_known_model *k, const char *name)
{
    if (k->nnames >= PLAN_KNOWN_NAMES || !name || !*name ||
        strlen(name) >= PLAN_KNOWN_NAME_MAX)
        return;
    memcpy(k->names[k->nnames], name, strlen(name) + 1);
    k->nnames++;
}

/* hf_models.json's aliases of the entry named name, into k. */
static void add_aliases(const cJSON *list, const char *name, plan_known_model *k)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsString(n) || strcmp(n->valuestring, name) != 0)
            continue;
        const cJSON *a, *al = cJSON_GetObjectItemCaseSensitive(e, "aliases");
        cJSON_ArrayForEach(a, al) {
            if (cJSON_IsString(a))
                add_name(k, a->valuestring);
        }
        return;
    }
}

static int hf_aliases(cJSON **root, const cJSON **list, st_err *err)
{
    char path[4096], *text = NULL;
    size_t len = 0;
    int n = snprintf(path, sizeof path, "%s/hf_models.json", data_dir());
    if (n < 0 || (size_t)n >= sizeof path)
        return ST_RAISE(err, ST_EINVAL, "data directory path too long");
    int rc = data_read_file(path, &text, &len, err);
    if (rc != ST_OK)
        return rc;
    *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!*root)
        return ST_RAISE(err, ST_EINVAL, "%s: not JSON", path);
    *list = cJSON_GetObjectItemCaseSensitive(*root, "models");
    return ST_OK;
}

int data_known_models_load(st_err *err)
{
    plan_presets presets = {0};
    data_hf_named *hf = NULL;
    int nhf = 0, n = 0;
    cJSON *root = NULL;
    const cJSON *list = NULL;
    plan_known_model *v = NULL;
    int rc;
    if ((rc = data_presets_load(NULL, &presets, err)) != ST_OK ||
        (rc = data_hf_named_list(&hf, &nhf, err)) != ST_OK ||
        (rc = hf_aliases(&root, &list, err)) != ST_OK)
        goto done;
    v = calloc((size_t)presets.n + (size_t)nhf + 1, sizeof *v);
    if (!v) {
        rc = ST_RAISE(err, ST_ENOMEM, "known models: out of memory");
        goto done;
    }
    for (int i = 0; i < presets.n && n < PLAN_KNOWN_MAX; i++) {
        v[n].model = presets.v[i].model;
        add_name(&v[n], presets.v[i].key);
        n++;
    }
    for (int i = 0; i < nhf && n < PLAN_KNOWN_MAX; i++) {
        if (!hf[i].ok)
            continue;
        v[n].model = hf[i].model;
        add_name(&v[n], hf[i].name);
        add_aliases(list, hf[i].name, &v[n]);
        n++;
    }
    rc = plan_known_models_set(v, n, err);
done:
    free(v);
    cJSON_Delete(root);
    free(hf);
    plan_presets_free(&presets);
    return rc;
}
