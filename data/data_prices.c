/*
 * data_prices.c: SageMaker price lists by region (data/sagemaker_prices.json,
 * or a user's file with --prices FILE).
 *
 * SageMaker's ml.* instances are priced apart from the EC2 instances of the
 * same hardware, and by region; the catalog carries EC2 on-demand prices. A
 * price list is one region's published per-hour prices of ml.* training
 * instances, with where they were published (source, a URL) and when they
 * were read (as_of, YYYY-MM-DD): a price without both is refused, so every
 * cost smdplan prints with a list can be traced to the page it came from.
 *
 *   {"_doc": "...",
 *    "lists": [
 *      {"region": "us-east-1", "what": "SageMaker training, on demand",
 *       "source": "https://aws.amazon.com/sagemaker/pricing/", "as_of": "2025-01-31",
 *       "prices": {"ml.p4d.24xlarge": 37.688, ...}}]}
 *
 * Keys starting with '_' are comments. A region appears in one list.
 */
#include "data/data.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRICES_LISTS_MAX 64
#define PRICES_PER_LIST_MAX 1024
#define PRICE_MAX_USD_PER_HOUR 10000.0 /* far above any instance */

void data_prices_free(data_prices *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++)
        free(p->list[i].price);
    free(p->list);
    p->list = NULL;
    p->n = 0;
}

static int region_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '-'))
            return 0;
    return 1;
}

static int date_ok(const char *s)
{
    int y, m, d;
    char tail;
    return strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) == 3 && y >= 2006 &&
           m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

static int text(const cJSON *o, const char *key, char *out, size_t n, const char *file, int i,
                st_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return ST_RAISE(err, ST_EINVAL, "%s: list %d: \"%s\" missing (a non-empty string)", file,
                        i, key);
    if (strlen(v->valuestring) >= n)
        return ST_RAISE(err, ST_EINVAL, "%s: list %d: \"%s\" longer than %zu characters", file,
                        i, key, n - 1);
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return ST_OK;
}

static int parse_list(const cJSON *o, const char *file, int i, data_price_list *l, st_err *err)
{
    memset(l, 0, sizeof *l);
    if (!cJSON_IsObject(o))
        return ST_RAISE(err, ST_EINVAL, "%s: list %d is not an object", file, i);
    int rc;
    if ((rc = text(o, "region", l->region, sizeof l->region, file, i, err)) ||
        (rc = text(o, "what", l->what, sizeof l->what, file, i, err)) ||
        (rc = text(o, "source", l->source, sizeof l->source, file, i, err)) ||
        (rc = text(o, "as_of", l->as_of, sizeof l->as_of, file, i, err)))
        return rc;
    if (!region_ok(l->region))
        return ST_RAISE(err, ST_EINVAL, "%s: list %d: region '%s': lower-case letters, digits "
                        "and '-' (us-east-1)", file, i, l->region);
    if (strncmp(l->source, "https://", 8) != 0 && strncmp(l->source, "http://", 7) != 0)
        return ST_RAISE(err, ST_EINVAL, "%s: list %d (%s): source '%.60s' is not a URL: a price "
                        "needs the page it was published on", file, i, l->region, l->source);
    if (!date_ok(l->as_of))
        return ST_RAISE(err, ST_EINVAL, "%s: list %d (%s): as_of '%.40s': the date the prices "
                        "were read, YYYY-MM-DD", file, i, l->region, l->as_of);
    const cJSON *prices = cJSON_GetObjectItemCaseSensitive(o, "prices");
    if (!cJSON_IsObject(prices))
        return ST_RAISE(err, ST_EINVAL, "%s: list %d (%s): \"prices\" missing (an object of "
                        "instance type: USD per hour)", file, i, l->region);
    int n = cJSON_GetArraySize(prices);
    if (n < 1 || n > PRICES_PER_LIST_MAX)
        return ST_RAISE(err, ST_EINVAL, "%s: list %d (%s): %d prices (1..%d)", file, i,
                        l->region, n, PRICES_PER_LIST_MAX);
    l->price = calloc((size_t)n, sizeof *l->price);
    if (!l->price)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
    for (const cJSON *p = prices->child; p; p = p->next) {
        if (p->string[0] == '_')
            continue;
        if (strncmp(p->string, "ml.", 3) != 0 || strlen(p->string) >= sizeof l->price[0].instance)
            return ST_RAISE(err, ST_EINVAL, "%s: list %d (%s): '%.60s': a SageMaker instance "
                            "type (ml.p4d.24xlarge)", file, i, l->region, p->string);
        if (!cJSON_IsNumber(p) || !isfinite(p->valuedouble) || p->valuedouble <= 0 ||
            p->valuedouble > PRICE_MAX_USD_PER_HOUR)
            return ST_RAISE(err, ST_EINVAL, "%s: list %d (%s): %s: USD per hour, above 0 and at "
                            "most %.0f", file, i, l->region, p->string, PRICE_MAX_USD_PER_HOUR);
        for (int k = 0; k < l->n; k++)
            if (strcmp(l->price[k].instance, p->string) == 0)
                return ST_RAISE(err, ST_EINVAL, "%s: list %d (%s): %s given twice", file, i,
                                l->region, p->string);
        data_price *d = &l->price[l->n++];
        memcpy(d->instance, p->string, strlen(p->string) + 1);
        d->usd_per_hour = p->valuedouble;
    }
    return ST_OK;
}

int data_prices_parse(const char *txt, size_t len, const char *file, data_prices *out,
                      st_err *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(txt, len);
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "%s: not JSON (near byte %ld)", file,
                        cJSON_GetErrorPtr() ? (long)(cJSON_GetErrorPtr() - txt) : 0L);
    int rc = ST_OK;
    const cJSON *lists = cJSON_GetObjectItemCaseSensitive(root, "lists");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(lists))
        rc = ST_RAISE(err, ST_EINVAL, "%s: expected an object with a \"lists\" array", file);
    int n = rc == ST_OK ? cJSON_GetArraySize(lists) : 0;
    if (rc == ST_OK && n > PRICES_LISTS_MAX)
        rc = ST_RAISE(err, ST_EINVAL, "%s: %d lists; at most %d", file, n, PRICES_LISTS_MAX);
    if (rc == ST_OK && n > 0 && !(out->list = calloc((size_t)n, sizeof *out->list)))
        rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
    int i = 0;
    for (const cJSON *o = rc == ST_OK ? lists->child : NULL; o && rc == ST_OK; o = o->next, i++) {
        rc = parse_list(o, file, i, &out->list[out->n], err);
        out->n++; /* its prices are freed with the others on failure */
        for (int k = 0; rc == ST_OK && k < out->n - 1; k++)
            if (strcmp(out->list[k].region, out->list[out->n - 1].region) == 0)
                rc = ST_RAISE(err, ST_EINVAL, "%s: region %s has two lists", file,
                              out->list[k].region);
    }
    cJSON_Delete(root);
    if (rc != ST_OK)
        data_prices_free(out);
    return rc;
}

int data_prices_load(const char *path, data_prices *out, st_err *err)
{
    char def[1024];
    if (!path) {
        snprintf(def, sizeof def, "%s/sagemaker_prices.json", data_dir());
        path = def;
    }
    char *txt = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = data_read_file(path, &txt, &len, err);
    if (rc == ST_OK)
        rc = data_prices_parse(txt, len, path, out, err);
    free(txt);
    return rc;
}

const data_price_list *data_prices_region(const data_prices *p, const char *region)
{
    for (int i = 0; p && i < p->n; i++)
        if (strcmp(p->list[i].region, region) == 0)
            return &p->list[i];
    return NULL;
}

double data_price_of(const data_price_list *l, const char *instance)
{
    char ml[80];
    if (strncmp(instance, "ml.", 3) != 0) {
        snprintf(ml, sizeof ml, "ml.%s", instance);
        instance = ml;
    }
    for (int i = 0; l && i < l->n; i++)
        if (strcmp(l->price[i].instance, instance) == 0)
            return l->price[i].usd_per_hour;
    return 0;
}
