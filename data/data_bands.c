/*
 * data_bands.c: the error bands of predicted step times
 * (data/error_bands.json, written by smdplan calibrate --write-bands).
 *
 * A prediction is only as good as the evidence behind its efficiencies: a
 * stack release with published runs on a chip predicts a source it never
 * saw to within the held-out error of those runs (leave-one-source-out: each
 * source predicted by a fit without it, plan_calibrate.h), a release
 * without runs of its own on the chip gets the chip pool's held-out error
 * (every stack's runs on it), and a chip no run was fitted on gets the worst
 * held-out source on any chip. data_band_of picks the first of these that
 * exists and says which.
 *
 *   {"bands": [{"stack": "megatron@2024", "framework": "megatron",
 *               "silicon": "GH100", "heldout_mean_abs_err_pct": 8.24,
 *               "sources": 1, "rows": 11}],
 *    "pools": [{"silicon": "GH100", "heldout_mean_abs_err_pct": 9.91, ...}],
 *    "worst_heldout_source_pct": 14.92}
 */
#include "data/data.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BANDS_MAX 256

static int entry(const cJSON *o, int pool, const char *file, data_band *b, st_err *err)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "stack");
    const cJSON *fw = cJSON_GetObjectItemCaseSensitive(o, "framework");
    const cJSON *si = cJSON_GetObjectItemCaseSensitive(o, "silicon");
    const cJSON *pct = cJSON_GetObjectItemCaseSensitive(o, "heldout_mean_abs_err_pct");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "sources");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, "rows");
    memset(b, 0, sizeof *b);
    if ((!pool && (!cJSON_IsString(st) || !st->valuestring[0] ||
                   strlen(st->valuestring) >= sizeof b->stack || !cJSON_IsString(fw) ||
                   strlen(fw->valuestring) >= sizeof b->framework)) ||
        !cJSON_IsString(si) || strlen(si->valuestring) >= sizeof b->silicon ||
        !cJSON_IsNumber(pct) || !isfinite(pct->valuedouble) || pct->valuedouble < 0 ||
        pct->valuedouble > 1000 || !cJSON_IsNumber(src) || src->valuedouble < 1 ||
        !cJSON_IsNumber(rows) || rows->valuedouble < 1)
        return ST_RAISE(err, ST_EINVAL, "%s: a %s needs %ssilicon, heldout_mean_abs_err_pct "
                        "(0..1000), sources and rows", file, pool ? "pool" : "band",
                        pool ? "" : "stack, framework, ");
    if (!pool) {
        snprintf(b->stack, sizeof b->stack, "%s", st->valuestring);
        snprintf(b->framework, sizeof b->framework, "%s", fw->valuestring);
    }
    snprintf(b->silicon, sizeof b->silicon, "%s", si->valuestring);
    b->pct = pct->valuedouble;
    b->sources = (int)src->valuedouble;
    b->rows = (int)rows->valuedouble;
    return ST_OK;
}

int data_bands_parse(const char *text, size_t len, const char *file, data_bands *out,
                     st_err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "%s: not JSON", file);
    int rc = ST_OK;
    const cJSON *bands = cJSON_GetObjectItemCaseSensitive(root, "bands");
    const cJSON *pools = cJSON_GetObjectItemCaseSensitive(root, "pools");
    const cJSON *worst = cJSON_GetObjectItemCaseSensitive(root, "worst_heldout_source_pct");
    if (!cJSON_IsArray(bands) || !cJSON_IsArray(pools) || !cJSON_IsNumber(worst) ||
        !(worst->valuedouble >= 0 && worst->valuedouble <= 1000))
        rc = ST_RAISE(err, ST_EINVAL, "%s: expected \"bands\" and \"pools\" arrays and "
                      "\"worst_heldout_source_pct\"", file);
    int n = rc == ST_OK ? cJSON_GetArraySize(bands) + cJSON_GetArraySize(pools) : 0;
    if (rc == ST_OK && n > BANDS_MAX)
        rc = ST_RAISE(err, ST_EINVAL, "%s: %d entries; at most %d", file, n, BANDS_MAX);
    if (rc == ST_OK && n > 0 && !(out->v = calloc((size_t)n, sizeof *out->v)))
        rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
    for (int pool = 0; rc == ST_OK && pool < 2; pool++) {
        const cJSON *o, *arr = pool ? pools : bands;
        cJSON_ArrayForEach(o, arr)
        {
            if (rc == ST_OK)
                rc = entry(o, pool, file, &out->v[out->n++], err);
        }
    }
    if (rc == ST_OK)
        out->worst_pct = worst->valuedouble;
    cJSON_Delete(root);
    if (rc != ST_OK)
        data_bands_free(out);
    return rc;
}

int data_bands_load(const char *path, data_bands *out, st_err *err)
{
    char def[4096];
    if (!path) {
        snprintf(def, sizeof def, "%s/error_bands.json", data_dir());
        path = def;
    }
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = data_read_file(path, &text, &len, err);
    if (rc == ST_OK)
        rc = data_bands_parse(text, len, path, out, err);
    free(text);
    return rc;
}

void data_bands_free(data_bands *b)
{
    if (!b)
        return;
    free(b->v);
    b->v = NULL;
    b->n = 0;
}

double data_band_of(const data_bands *b, const char *stack, const char *silicon,
                    char *basis, size_t n)
{
    for (int pass = 0; b && pass < 2; pass++)
        for (int i = 0; i < b->n; i++) {
            const data_band *x = &b->v[i];
            int pool = x->stack[0] == '\0';
            if (pool != pass || strcasecmp(x->silicon, silicon) != 0 ||
                (!pool && strcasecmp(x->stack, stack) != 0))
                continue;
            char what[64];
            if (x->sources == 1)
                snprintf(what, sizeof what, "its one published source");
            else
                snprintf(what, sizeof what, "each of its %d published sources", x->sources);
            if (!pool)
                snprintf(basis, n, "the mean |error| of %s on %s predicting %s (%d runs) held "
                         "out of the fit", x->stack, x->silicon, what, x->rows);
            else
                snprintf(basis, n, "no %s runs on %s were fitted: the %s pool's mean |error| "
                         "predicting %s (%d runs) held out",
                         stack, x->silicon, x->silicon, what, x->rows);
            return x->pct;
        }
    if (!b)
        return 0;
    snprintf(basis, n, "no published run on %s was fitted: the worst source held out on any "
             "chip", silicon);
    return b->worst_pct;
}
