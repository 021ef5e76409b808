/*
 * cli_catalog.c: `smdplan catalog`, the instance types the planner knows.
 *
 *   smdplan catalog [--catalog FILE] [--json]
 *
 * Loads the shipped catalog (data_dir()/catalog.json), merges a user file if
 * given, and prints one row per instance type: GPUs x GPU type, GPU memory,
 * dense FP16/BF16 peak, HBM bandwidth, GPU link bandwidth per GPU (one
 * direction), network per node (one direction) and the on-demand price.
 * --json prints the merged catalog in the catalog file's own schema (numbers
 * in bytes, bytes/s, FLOP/s, seconds), so the output can be read back as a
 * catalog file. Exit 0, or 2 with one line on stderr for a bad option or file.
 */
#include "app/cli.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli_int.h"
#include "data/data.h"
#include "data/data_json_catalog.h"
#include "reports/rpt_catalog.h"

typedef struct cat_opts {
    const char *catalog_file;
    const char *region, *prices_file;
    int json;
} cat_opts;

static int fail(const st_err *err)
{
    fprintf(stderr, "smdplan: %s\n", err->msg[0] ? err->msg : st_str(err->code));
    return st_exit_code(err->code);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan catalog [--catalog FILE] [--region R [--prices FILE]] [--json] [--no-record]\n"
            "\n"
            "List the instance types the planner knows (use their names or aliases in\n"
            "--instances, e.g. 16xp4d, p4d:16, 16xml.p4d.24xlarge).\n"
            "\n"
            "  --catalog FILE  merge a user catalog file: new names add instance types,\n"
            "                  existing names have the fields given replaced\n"
            "  --region R      prices: SageMaker's published ml.* prices in region R\n"
            "                  (default: the catalog's EC2 on-demand prices)\n"
            "  --prices FILE   SageMaker price lists (default data/sagemaker_prices.json)\n"
            "  --json          print the merged catalog as JSON (the catalog file's schema)\n"
            "  --no-record     do not record this run\n"
            "  -h, --help      show this help\n"
            "\n"
            "Shipped catalog: %s/catalog.json\n",
            data_dir());
}

/* 0: parsed; 1: help printed; otherwise an exit code. */
static int parse_args(int argc, char **argv, cat_opts *o)
{
    enum { O_CATALOG = 256, O_JSON, O_NO_RECORD, O_REGION, O_PRICES };
    static const struct option lo[] = {
        {"catalog", required_argument, NULL, O_CATALOG},
        {"region", required_argument, NULL, O_REGION},
        {"prices", required_argument, NULL, O_PRICES},
        {"json", no_argument, NULL, O_JSON},
        {"no-record", no_argument, NULL, O_NO_RECORD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (id) {
        case O_CATALOG: o->catalog_file = optarg; break;
        case O_REGION: o->region = optarg; break;
        case O_PRICES: o->prices_file = optarg; break;
        case O_JSON: o->json = 1; break;
        case O_NO_RECORD: break; /* nothing is recorded yet */
        case 'h': usage(stdout); return 1;
        default:
            fprintf(stderr,
                    "smdplan catalog: unknown option or missing value: '%s'; allowed: "
                    "--catalog FILE, --region R, --prices FILE, --json, --no-record, --help\n",
                    argv[optind - 1] ? argv[optind - 1] : "?");
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "smdplan catalog: unexpected argument '%s' (see smdplan catalog --help)\n",
                argv[optind]);
        return 2;
    }
    return 0;
}

/* The merged catalog in its file's schema (data_json_catalog). */
static int print_json(FILE *f, const plan_catalog *cat)
{
    cJSON *root = data_json_catalog(cat);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        fprintf(stderr, "smdplan catalog: out of memory printing JSON\n");
        return 1;
    }
    fprintf(f, "%s\n", text);
    cJSON_free(text);
    return 0;
}

int cli_catalog_cmd(int argc, char **argv)
{
    cat_opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    plan_catalog cat = {0};
    st_err err = {0};
    if (data_catalog_load(NULL, &cat, &err) != ST_OK ||
        (o.catalog_file && data_catalog_merge(&cat, o.catalog_file, &err) != ST_OK) ||
        cli_prices_apply(&cat, o.region, o.prices_file, &err) != ST_OK) {
        plan_catalog_free(&cat);
        return fail(&err);
    }
    if (o.json)
        rc = print_json(stdout, &cat);
    else
        rc = rpt_catalog_text(stdout, &cat, cli_price_list(), cli_price_is_sagemaker()) != ST_OK;
    plan_catalog_free(&cat);
    return rc;
}
