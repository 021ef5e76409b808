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
    /* digits and dashes where YYYY-MM-DD has them (sscanf's %d alone would
     * take " 1" or "\t1" for a month) */
    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
        return 0;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
            return 0;
    int y = atoi(s), m = atoi(s + 5), d = atoi(s + 8);
    return y >= 2006 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
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

/* ------------------------------------------------------------------------ */
/* AWS Price List offer files                                                */
/* ------------------------------------------------------------------------ */

/* The AWS Price List bulk offer file of a service (AWS Billing User Guide,
 * "Reading the service price list file for an AWS service", JSON file):
 *
 *   {"formatVersion": "v1.0", "offerCode": "AmazonSageMaker",
 *    "version": "...", "publicationDate": "2025-01-31T00:00:00Z",
 *    "products": {SKU: {"sku": SKU, "productFamily": "...",
 *                       "attributes": {"regionCode": "us-east-1",
 *                                      "usagetype": "USE1-Train:ml.p4d.24xlarge",
 *                                      "component": "Training",
 *                                      "instanceName": "ml.p4d.24xlarge", ...}}},
 *    "terms": {"OnDemand": {SKU: {SKU.TERM: {"priceDimensions": {RATE:
 *               {"unit": "Hrs", "pricePerUnit": {"USD": "37.688"}}}}}},
 *              "Reserved": {...}}}
 *
 * A product is a training instance when its usage type is a training one
 * (SageMaker's "<region>-Train:<instance type>") or its component is
 * "Training", and it is not a spot usage; its instance type is the
 * instanceName (or instanceType) attribute, else the usage type's tail. Its
 * price is the OnDemand term's dimension priced per hour ("Hrs") in USD. */

#define OFFER_PRICES_MAX 4096

static const char *attr(const cJSON *attrs, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(attrs, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* The training instance type of a product, or NULL. */
static const char *training_instance(const cJSON *attrs)
{
    const char *usage = attr(attrs, "usagetype"), *comp = attr(attrs, "component");
    const char *train = usage ? strstr(usage, "Train:") : NULL;
    if (usage && (strstr(usage, "Spot") || strstr(usage, "spot")))
        return NULL;
    if (!train && !(comp && !strcmp(comp, "Training")))
        return NULL;
    const char *name = attr(attrs, "instanceName");
    if (!name || strncmp(name, "ml.", 3) != 0)
        name = attr(attrs, "instanceType");
    if ((!name || strncmp(name, "ml.", 3) != 0) && train)
        name = train + strlen("Train:");
    return name && strncmp(name, "ml.", 3) == 0 ? name : NULL;
}

/* The on-demand price per hour in USD of sku, 0 when it has none. */
static double ondemand_hourly(const cJSON *ondemand, const char *sku)
{
    const cJSON *terms = cJSON_GetObjectItemCaseSensitive(ondemand, sku), *t, *d;
    if (!cJSON_IsObject(terms))
        return 0;
    cJSON_ArrayForEach(t, terms)
    {
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(t, "priceDimensions");
        if (!cJSON_IsObject(dims))
            continue;
        cJSON_ArrayForEach(d, dims)
        {
            const cJSON *unit = cJSON_GetObjectItemCaseSensitive(d, "unit");
            const cJSON *ppu = cJSON_GetObjectItemCaseSensitive(d, "pricePerUnit");
            const cJSON *usd = cJSON_GetObjectItemCaseSensitive(ppu, "USD");
            if (!cJSON_IsString(unit) || !unit->valuestring ||
                (strcmp(unit->valuestring, "Hrs") && strcmp(unit->valuestring, "Hours") &&
                 strcmp(unit->valuestring, "hours")))
                continue;
            if (!cJSON_IsString(usd) || !usd->valuestring)
                continue;
            char *end;
            double v = strtod(usd->valuestring, &end);
            if (end != usd->valuestring && *end == '\0' && isfinite(v) && v > 0 &&
                v <= PRICE_MAX_USD_PER_HOUR)
                return v;
        }
    }
    return 0;
}

static data_price_list *list_of(data_prices *p, const char *region)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->list[i].region, region))
            return &p->list[i];
    if (p->n >= PRICES_LISTS_MAX)
        return NULL;
    data_price_list *l = &p->list[p->n++];
    memset(l, 0, sizeof *l);
    snprintf(l->region, sizeof l->region, "%s", region);
    l->price = calloc(PRICES_PER_LIST_MAX, sizeof *l->price);
    return l->price ? l : NULL;
}

static int cmp_price(const void *a, const void *b)
{
    return strcmp(((const data_price *)a)->instance, ((const data_price *)b)->instance);
}

static int cmp_list(const void *a, const void *b)
{
    return strcmp(((const data_price_list *)a)->region, ((const data_price_list *)b)->region);
}

int data_prices_from_offer(const char *txt, size_t len, const char *file, data_prices *out,
                           data_offer_info *info, st_err *err)
{
    memset(out, 0, sizeof *out);
    memset(info, 0, sizeof *info);
    cJSON *root = cJSON_ParseWithLength(txt, len);
    if (!root)
        return ST_RAISE(err, ST_EPARSE, "%s: not JSON (near byte %ld)", file,
                        cJSON_GetErrorPtr() ? (long)(cJSON_GetErrorPtr() - txt) : 0L);
    int rc = ST_OK;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "offerCode");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *pub = cJSON_GetObjectItemCaseSensitive(root, "publicationDate");
    const cJSON *products = cJSON_GetObjectItemCaseSensitive(root, "products");
    const cJSON *terms = cJSON_GetObjectItemCaseSensitive(root, "terms");
    const cJSON *ondemand = cJSON_GetObjectItemCaseSensitive(terms, "OnDemand");
    if (!cJSON_IsString(code) || strcmp(code->valuestring, "AmazonSageMaker") != 0)
        rc = ST_RAISE(err, ST_EINVAL, "%s: offerCode '%.40s': not the AWS Price List offer file "
                      "of Amazon SageMaker (offerCode AmazonSageMaker)", file,
                      cJSON_IsString(code) ? code->valuestring : "");
    else if (!cJSON_IsString(ver) || !ver->valuestring[0] || strlen(ver->valuestring) > 40)
        rc = ST_RAISE(err, ST_EINVAL, "%s: \"version\" missing: the offer file's version", file);
    else if (!cJSON_IsString(pub) || strlen(pub->valuestring) < 10 ||
             (snprintf(info->published, sizeof info->published, "%.10s", pub->valuestring),
              !date_ok(info->published)))
        rc = ST_RAISE(err, ST_EINVAL, "%s: \"publicationDate\" '%.40s': an ISO 8601 date "
                      "(2025-01-31T00:00:00Z)", file, cJSON_IsString(pub) ? pub->valuestring : "");
    else if (!cJSON_IsObject(products) || !cJSON_IsObject(ondemand))
        rc = ST_RAISE(err, ST_EINVAL, "%s: expected \"products\" and \"terms\".\"OnDemand\" "
                      "objects", file);
    if (rc == ST_OK) {
        snprintf(info->version, sizeof info->version, "%s", ver->valuestring);
        if (!(out->list = calloc(PRICES_LISTS_MAX, sizeof *out->list)))
            rc = ST_RAISE(err, ST_ENOMEM, "%s: out of memory", file);
    }
    const cJSON *prod, *walk = rc == ST_OK ? products : NULL;
    cJSON_ArrayForEach(prod, walk)
    {
        info->products++;
        const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(prod, "attributes");
        const char *inst = training_instance(attrs), *region = attr(attrs, "regionCode");
        if (!inst)
            continue;
        if (!region || !region_ok(region) || strlen(region) >= sizeof out->list[0].region ||
            strlen(inst) >= sizeof out->list[0].price[0].instance) {
            info->skipped++;
            continue;
        }
        double usd = ondemand_hourly(ondemand, prod->string);
        if (!(usd > 0)) {
            info->skipped++;
            continue;
        }
        data_price_list *l = list_of(out, region);
        if (!l) {
            rc = ST_RAISE(err, ST_ENOMEM, "%s: more than %d regions, or out of memory", file,
                          PRICES_LISTS_MAX);
            break;
        }
        int dup = 0;
        for (int k = 0; k < l->n && !dup; k++)
            if (!strcmp(l->price[k].instance, inst)) {
                dup = 1;
                info->conflicts += l->price[k].usd_per_hour != usd;
            }
        if (dup || l->n >= PRICES_PER_LIST_MAX)
            continue;
        snprintf(l->price[l->n].instance, sizeof l->price[0].instance, "%s", inst);
        l->price[l->n++].usd_per_hour = usd;
        info->prices++;
    }
    for (int i = 0; rc == ST_OK && i < out->n; i++) {
        data_price_list *l = &out->list[i];
        snprintf(l->what, sizeof l->what, "SageMaker training, on demand (AWS Price List)");
        /* the offer file of that version (AWS Billing User Guide, "Getting
         * price list files manually": /offers/v1.0/aws/<offerCode>/<version>/) */
        snprintf(l->source, sizeof l->source,
                 "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonSageMaker/%s/"
                 "index.json",
                 info->version);
        snprintf(l->as_of, sizeof l->as_of, "%s", info->published);
        qsort(l->price, (size_t)l->n, sizeof *l->price, cmp_price);
    }
    if (rc == ST_OK)
        qsort(out->list, (size_t)out->n, sizeof *out->list, cmp_list);
    if (rc == ST_OK && out->n == 0)
        rc = ST_RAISE(err, ST_EINVAL, "%s: no on-demand price of a training instance among its "
                      "%d products", file, info->products);
    cJSON_Delete(root);
    if (rc != ST_OK)
        data_prices_free(out);
    return rc;
}

char *data_prices_json(const data_prices *p, const char *doc)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "_doc", doc);
    cJSON *lists = cJSON_AddArrayToObject(root, "lists");
    for (int i = 0; lists && i < p->n; i++) {
        const data_price_list *l = &p->list[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "region", l->region);
        cJSON_AddStringToObject(o, "what", l->what);
        cJSON_AddStringToObject(o, "source", l->source);
        cJSON_AddStringToObject(o, "as_of", l->as_of);
        cJSON *pr = cJSON_AddObjectToObject(o, "prices");
        for (int k = 0; pr && k < l->n; k++)
            cJSON_AddNumberToObject(pr, l->price[k].instance, l->price[k].usd_per_hour);
        cJSON_AddItemToArray(lists, o);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

int data_prices_merge(data_prices *into, const data_prices *from, st_err *err)
{
    for (int i = 0; i < from->n; i++) {
        const data_price_list *f = &from->list[i];
        data_price_list *t = NULL;
        for (int k = 0; k < into->n && !t; k++)
            if (!strcmp(into->list[k].region, f->region))
                t = &into->list[k];
        if (!t) {
            data_price_list *grown = realloc(into->list, (size_t)(into->n + 1) * sizeof *grown);
            if (!grown)
                return ST_RAISE(err, ST_ENOMEM, "prices: out of memory");
            into->list = grown;
            t = &into->list[into->n++];
            memset(t, 0, sizeof *t);
        }
        data_price *copy = malloc((size_t)(f->n > 0 ? f->n : 1) * sizeof *copy);
        if (!copy)
            return ST_RAISE(err, ST_ENOMEM, "prices: out of memory");
        memcpy(copy, f->price, (size_t)f->n * sizeof *copy);
        free(t->price);
        *t = *f;
        t->price = copy;
    }
    qsort(into->list, (size_t)into->n, sizeof *into->list, cmp_list);
    return ST_OK;
}
