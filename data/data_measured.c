/*
 * data_measured.c: reading a measured-rates file (under data/measured/) into
 * plan_measured, for the catalog GPU whose "measured" names it.
 *
 * The file is one JSON object (keys starting with '_' are comments):
 *   device     what was measured (a string);
 *   hbm_bps    the datasheet HBM bandwidth of that device (a rate string);
 *   copy_bps   a device-to-device copy, bytes read + written per second
 *              (optional);
 *   gemm_bf16  {"rows": [[m, k, n, TFLOP/s], ...]} (optional): m tokens, k
 *              inputs, n outputs, the rate at 2 m k n FLOPs a call;
 *   attention  {"flash2": {...}, "cudnn": {...}, "smdplan": {...}}
 *              (optional), each with fwd_tflops and fwd_bwd_tflops (forward
 *              and backward counted as 3.5x the forward's FLOPs); smdplan
 *              is this executor's own fused kernels;
 *   smdplan_plain_attention  {row_fwd_s, row_bwd_s, elem_fwd_s,
 *              elem_bwd_s} (optional): this executor's plain attention
 *              core beyond the planner's terms (plan_bench_attn_rows).
 * What each becomes is plan_gpu_measured's (planner/plan_hwfit.h). Errors
 * name the file and the value; nothing is half-filled on failure.
 */
#include "data/data.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"

#define TFLOPS 1e12

static int number(const cJSON *obj, const char *key, const char *file, const char *where,
                  double *out, st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        *out = 0;
        return ST_OK;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0))
        return ST_RAISE(err, ST_EINVAL, "%s: %s%s: expected a positive number", file, where, key);
    *out = v->valuedouble;
    return ST_OK;
}

static int rate(const cJSON *root, const char *key, const char *file, double *out, st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = 0;
    if (!v)
        return ST_OK;
    char what[160];
    snprintf(what, sizeof what, "%s: '%s'", file, key);
    if (!cJSON_IsString(v))
        return ST_RAISE(err, ST_EINVAL, "%s: expected a rate such as \"3350GB/s\"", what);
    return units_parse_rate(v->valuestring, what, out, err);
}

static int gemm_rows(const cJSON *root, const char *file, plan_measured *m, st_err *err)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "gemm_bf16");
    if (!g)
        return ST_OK;
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(g, "rows");
    if (!cJSON_IsObject(g) || !cJSON_IsArray(rows))
        return ST_RAISE(err, ST_EINVAL, "%s: gemm_bf16: expected {\"rows\": [[m, k, n, TFLOP/s], ...]}",
                        file);
    int n = cJSON_GetArraySize(rows);
    if (n > PLAN_MEASURED_GEMM_MAX)
        return ST_RAISE(err, ST_EINVAL, "%s: gemm_bf16 has %d rows; allowed: at most %d", file, n,
                        PLAN_MEASURED_GEMM_MAX);
    int i = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        double v[4];
        int k = 0;
        const cJSON *x;
        if (cJSON_IsArray(r) && cJSON_GetArraySize(r) == 4)
            cJSON_ArrayForEach(x, r) {
                if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || !(x->valuedouble > 0))
                    break;
                v[k++] = x->valuedouble;
            }
        if (k != 4)
            return ST_RAISE(err, ST_EINVAL, "%s: gemm_bf16 row %d: expected [m, k, n, TFLOP/s], "
                            "four positive numbers", file, i);
        m->gemm[i] = (plan_gemm_sample){.m = v[0], .k = v[1], .n = v[2], .flops = v[3] * TFLOPS};
        i++;
    }
    m->ngemm = i;
    return ST_OK;
}

static int attention(const cJSON *root, const char *file, plan_measured *m, st_err *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "attention");
    if (!a)
        return ST_OK;
    if (!cJSON_IsObject(a))
        return ST_RAISE(err, ST_EINVAL, "%s: attention: expected an object", file);
    static const struct {
        const char *key;
        size_t fwd, fb;
    } gen[] = {
        {"flash2", offsetof(plan_measured, flash2_fwd_flops), offsetof(plan_measured, flash2_fwd_bwd_flops)},
        {"cudnn", offsetof(plan_measured, cudnn_fwd_flops), offsetof(plan_measured, cudnn_fwd_bwd_flops)},
        {"smdplan", offsetof(plan_measured, smdplan_fwd_flops),
         offsetof(plan_measured, smdplan_fwd_bwd_flops)},
    };
    const cJSON *v;
    cJSON_ArrayForEach(v, a) {
        const char *key = v->string ? v->string : "";
        if (key[0] == '_')
            continue;
        int found = -1;
        for (int i = 0; i < (int)(sizeof gen / sizeof gen[0]); i++)
            if (strcmp(key, gen[i].key) == 0)
                found = i;
        if (found < 0)
            return ST_RAISE(err, ST_EINVAL, "%s: attention: unknown kernel '%s'; allowed: flash2, "
                            "cudnn, smdplan (and keys starting with '_')", file, key);
        if (!cJSON_IsObject(v))
            return ST_RAISE(err, ST_EINVAL, "%s: attention.%s: expected an object", file, key);
        char where[48];
        snprintf(where, sizeof where, "attention.%s.", key);
        double *f = (double *)(void *)((char *)m + gen[found].fwd);
        double *fb = (double *)(void *)((char *)m + gen[found].fb);
        int rc = number(v, "fwd_tflops", file, where, f, err);
        if (!rc)
            rc = number(v, "fwd_bwd_tflops", file, where, fb, err);
        if (rc)
            return rc;
        if (!(*f > 0) || !(*fb > 0))
            return ST_RAISE(err, ST_EINVAL, "%s: %s: give both fwd_tflops and fwd_bwd_tflops",
                            file, where);
        *f *= TFLOPS;
        *fb *= TFLOPS;
    }
    return ST_OK;
}

/* "smdplan_plain_attention": {row_fwd_s, row_bwd_s, elem_fwd_s, elem_bwd_s}
 * (optional; seconds per score row and per row and head element). */
static int plain_rows(const cJSON *root, const char *file, plan_measured *m, st_err *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "smdplan_plain_attention");
    if (!a)
        return ST_OK;
    if (!cJSON_IsObject(a))
        return ST_RAISE(err, ST_EINVAL, "%s: smdplan_plain_attention: expected an object", file);
    const char *w = "smdplan_plain_attention.";
    int rc = number(a, "row_fwd_s", file, w, &m->smdplan_row_fwd_s, err);
    if (!rc)
        rc = number(a, "row_bwd_s", file, w, &m->smdplan_row_bwd_s, err);
    if (!rc)
        rc = number(a, "elem_fwd_s", file, w, &m->smdplan_elem_fwd_s, err);
    if (!rc)
        rc = number(a, "elem_bwd_s", file, w, &m->smdplan_elem_bwd_s, err);
    return rc;
}

int data_measured_parse(const char *text, size_t len, const char *file, plan_measured *out,
                        st_err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "%s: malformed JSON", file);
    plan_measured m;
    memset(&m, 0, sizeof m);
    int rc = ST_OK;
    if (!cJSON_IsObject(root))
        rc = ST_RAISE(err, ST_EINVAL, "%s: expected a JSON object", file);
    if (!rc)
        rc = rate(root, "hbm_bps", file, &m.hbm_bps, err);
    if (!rc)
        rc = rate(root, "copy_bps", file, &m.copy_bps, err);
    if (!rc)
        rc = gemm_rows(root, file, &m, err);
    if (!rc)
        rc = attention(root, file, &m, err);
    if (!rc)
        rc = plain_rows(root, file, &m, err);
    cJSON_Delete(root);
    if (rc)
        return rc;
    *out = m;
    return ST_OK;
}

int data_measured_load(const char *path, plan_measured *out, st_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = data_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = data_measured_parse(text, len, path, out, err);
    free(text);
    return rc;
}
