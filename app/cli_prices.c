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
#include <string.h>

#include "app/cli_int.h"
#include "data/data.h"

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
    snprintf(label, sizeof label, "%s, %s (%s, read %s)%s", l->what, l->region, l->source,
             l->as_of, priced < cat->ninstances ? "; types it does not price have no cost" : "");
    sagemaker = 1;
    data_prices_free(&p);
    return ST_OK;
}
