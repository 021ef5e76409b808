/*
 * data_known_models.c: the models a run may name without publishing their
 * shape (data_known_models.h), read from the two files that already hold
 * them: data/models.json's presets (each by its key and its documented
 * aliases, its source a paper's table) and data/hf_models.json's configs
 * (each by its Hugging Face id and aliases, its source the config.json).
 * The presets are installed first:
 * a name both files give matches the preset; every name is the file's
 * own, none made up here.
 */
#include "data/data_known_models.h"

#include <stdlib.h>
#include <string.h>

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

int data_known_models_load(st_err *err)
{
    plan_presets presets = {0};
    data_hf_named *hf = NULL;
    int nhf = 0, n = 0;
    plan_known_model *v = NULL;
    int rc;
    if ((rc = data_presets_load(NULL, &presets, err)) != ST_OK ||
        (rc = data_hf_named_list(&hf, &nhf, err)) != ST_OK)
        goto done;
    v = calloc((size_t)presets.n + (size_t)nhf + 1, sizeof *v);
    if (!v) {
        rc = ST_RAISE(err, ST_ENOMEM, "known models: out of memory");
        goto done;
    }
    for (int i = 0; i < presets.n && n < PLAN_KNOWN_MAX; i++) {
        v[n].model = presets.v[i].model;
        add_name(&v[n], presets.v[i].key);
        for (int j = 0; j < presets.v[i].naliases; j++)
            add_name(&v[n], presets.v[i].aliases[j]);
        n++;
    }
    for (int i = 0; i < nhf && n < PLAN_KNOWN_MAX; i++) {
        if (!hf[i].ok)
            continue;
        v[n].model = hf[i].model;
        add_name(&v[n], hf[i].name);
        for (int j = 0; j < hf[i].naliases; j++)
            add_name(&v[n], hf[i].aliases[j]);
        n++;
    }
    rc = plan_known_models_set(v, n, err);
done:
    free(v);
    free(hf);
    plan_presets_free(&presets);
    return rc;
}
