/*
 * cli_prices.c: which price list the costs come from.
 *
 * The catalog's instance prices are EC2 on demand in us-east-1 (their
 * sources are in the catalog). SageMaker prices its ml.* instances apart,
 * and by region: --region R takes them from R's list in
 * data/sagemaker_prices.json (or --prices FILE), each list with the page it
 * was published on and the date it was read. An instance type the list
 * does not price gets no price (0: its cost shows as unknown), never the
 * EC2 one. Every cost printed says which list it came from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli.h"
#include "app/cli_int.h"
#include "common/text.h"
#include "data/data.h"
#include "common/outfile.h"

static char label[512] = "EC2 on demand, us-east-1, from the catalog (SageMaker's ml.* prices "
                         "differ: --region)";
static int sagemaker;

const char *cli_price_list(void)
{
    return label;
}

int cli_price_is_sagemaker(void)
{
    return sagemaker;
}

int cli_prices_apply(plan_catalog *cat, const char *region, const char *prices_file, st_err *err)
{
    if (!region) {
        if (prices_file)
            return ST_RAISE(err, ST_EINVAL, "--prices %s: give the region to price with --region",
                            prices_file);
        return ST_OK;
    }
    data_prices p;
    int rc = data_prices_load(prices_file, &p, err);
    if (rc != ST_OK)
        return rc;
    const data_price_list *l = data_prices_region(&p, region);
    if (!l) {
        char have[400] = "";
        size_t u = 0;
        for (int i = 0; i < p.n && u + 2 < sizeof have; i++)
            u += (size_t)snprintf(have + u, sizeof have - u, "%s%s", i ? ", " : "",
                                  p.list[i].region);
        rc = ST_RAISE(err, ST_EINVAL,
                      "--region %s: no published SageMaker prices for it; %s%s", region,
                      p.n ? "regions with a price list: " : "no region has a price list yet "
                      "(add the figures of the AWS SageMaker pricing page, with its URL and the "
                      "date, to data/sagemaker_prices.json or a --prices file)",
                      have);
        data_prices_free(&p);
        return rc;
    }
    int priced = 0;
    for (int i = 0; i < cat->ninstances; i++) {
        plan_instance *in = &cat->instances[i];
        in->price_per_hour = data_price_of(l, in->name);
        priced += in->price_per_hour > 0;
    }
    snprintf(label, sizeof label, "%s, %s (%s, as of %s)%s", l->what, l->region, l->source,
             l->as_of, priced < cat->ninstances ? "; types it does not price have no cost" : "");
    sagemaker = 1;
    data_prices_free(&p);
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* smdplan prices                                                            */
/* ------------------------------------------------------------------------ */

/* The mark of a prices file smdplan wrote (outfile_write replaces such a
 * file, and another only with --force). */
#define PRICES_MARKER "written by smdplan prices import"

static void prices_usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan prices import FILE [--out PATH] [--force]\n"
            "       smdplan prices [--prices PATH]\n\n"
            "import reads the AWS Price List bulk offer file of Amazon SageMaker (FILE, as\n"
            "downloaded: https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonSageMaker/\n"
            "current/index.json, or a region's file under it), keeps the on-demand price per hour\n"
            "of every training instance type in every region, dated with the file's publication\n"
            "date, and writes them into the price lists --region reads (PATH, default\n"
            "data/sagemaker_prices.json): a region it has replaces that region's list, the others\n"
            "stay. Without import: the regions and prices in PATH.\n");
}

static int prices_show(const char *path)
{
    data_prices p;
    st_err err = {0};
    if (data_prices_load(path, &p, &err) != ST_OK)
        return cli_fail(&err);
    if (p.n == 0)
        printf("no price list in %s: smdplan prices import FILE adds them from AWS's Price "
               "List file\n", path ? path : "data/sagemaker_prices.json");
    for (int i = 0; i < p.n; i++) {
        const data_price_list *l = &p.list[i];
        printf("%s: %d training instance types, %s (%s, %s)\n", l->region, l->n, l->what,
               l->source, l->as_of);
    }
    data_prices_free(&p);
    return 0;
}

int cli_prices_cmd(int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    int force = 0, import = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            prices_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "import") && !import && i == 1) {
            import = 1;
        } else if ((!strcmp(argv[i], "--out") || !strcmp(argv[i], "--prices")) && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if (import && !file && argv[i][0] != '-') {
            file = argv[i];
        } else {
            char safe[120];
            fprintf(stderr, "smdplan prices: unexpected '%s'; usage: smdplan prices import FILE "
                            "[--out PATH] [--force]\n",
                    text_comment(argv[i], safe, sizeof safe));
            return 2;
        }
    }
    if (!import)
        return prices_show(out);
    if (!file) {
        fprintf(stderr, "smdplan prices import: give the offer file (AmazonSageMaker "
                        "index.json from the AWS Price List)\n");
        return 2;
    }
    st_err err = {0};
    char *text = NULL;
    size_t len = 0;
    data_prices got, have;
    data_offer_info info;
    int rc = data_read_file(file, &text, &len, &err);
    if (rc == ST_OK)
        rc = data_prices_from_offer(text, len, file, &got, &info, &err);
    free(text);
    if (rc != ST_OK)
        return cli_fail(&err);
    char def[4096];
    if (!out) {
        snprintf(def, sizeof def, "%s/sagemaker_prices.json", data_dir());
        out = def;
    }
    /* keep the regions the offer file does not have */
    memset(&have, 0, sizeof have);
    st_err e2 = {0};
    if (access(out, F_OK) == 0 && data_prices_load(out, &have, &e2) != ST_OK) {
        data_prices_free(&got);
        return cli_fail(&e2);
    }
    rc = data_prices_merge(&have, &got, &err);
    char *json = rc == ST_OK
                     ? data_prices_json(&have,
                                        "SageMaker ml.* training prices by region (USD per hour, "
                                        "on demand), " PRICES_MARKER " from the AWS Price List "
                                        "bulk offer file of Amazon SageMaker: each list cites "
                                        "the offer file of its version (source) and is dated "
                                        "with its publication date (as_of). Read by smdplan "
                                        "--region REGION (--prices FILE for another file). "
                                        "Nothing here was typed in: import a newer file to "
                                        "update it.")
                     : NULL;
    if (rc == ST_OK && !json)
        rc = ST_RAISE(&err, ST_ENOMEM, "prices: out of memory");
    /* a prices file smdplan wrote is its own to update; another is
     * replaced only with --force (outfile.h's rule) */
    int ours = 0;
    if (rc == ST_OK && access(out, F_OK) == 0) {
        char *old = NULL;
        size_t old_len = 0;
        st_err ignore = {0};
        ours = data_read_file(out, &old, &old_len, &ignore) == ST_OK && strstr(old, PRICES_MARKER);
        free(old);
    }
    if (rc == ST_OK)
        rc = outfile_write(out, "prices", json, strlen(json), force || ours, &err);
    free(json);
    int regions = got.n;
    data_prices_free(&got);
    data_prices_free(&have);
    if (rc != ST_OK)
        return cli_fail(&err);
    char safe[600];
    printf("read %s: AmazonSageMaker offer file, version %s, published %s: %d on-demand prices "
           "of training instance types in %d region%s (%d products read%s)\n",
           text_comment(file, safe, sizeof safe), info.version, info.published, info.prices,
           regions, regions == 1 ? "" : "s", info.products,
           info.skipped ? ", some training products without a region or an hourly price" : "");
    if (info.conflicts)
        printf("%d instance types had a second, different price in a region: the first was "
               "kept\n", info.conflicts);
    text_comment(out, safe, sizeof safe);
    printf("wrote %s (smdplan --region REGION --prices %s)\n", safe, safe);
    return 0;
}
