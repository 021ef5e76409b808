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
#include "common/units.h"
#include "data/data.h"

#define CAT_COLS 10
#define CAT_CELL 64

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

/* ------------------------------------------------------------------------ */
/* Table                                                                     */
/* ------------------------------------------------------------------------ */

static const char *const cat_head[CAT_COLS] = {
    "instance", "aliases", "GPUs", "GPU memory", "peak TFLOP/s",
    "HBM TB/s", "link GB/s", "net Gbps", "NICs/GPU", "$/h",
};

static void instance_cells(const plan_catalog *cat, const plan_instance *in,
                           char cell[CAT_COLS][CAT_CELL])
{
    const plan_gpu *g = &cat->gpus[in->gpu_index];
    char aliases[CAT_CELL] = "-";
    for (int a = 0; a < in->naliases; a++) {
        size_t used = a ? strlen(aliases) : 0;
        snprintf(aliases + used, sizeof aliases - used, "%s%s", a ? "," : "", in->aliases[a]);
    }
    snprintf(cell[0], CAT_CELL, "%s", in->name);
    snprintf(cell[1], CAT_CELL, "%s", aliases);
    snprintf(cell[2], CAT_CELL, "%d x %s", in->gpus_per_node, g->name);
    units_fmt_bytes(g->mem_bytes, cell[3], CAT_CELL);
    snprintf(cell[4], CAT_CELL, "%.0f", g->peak_flops / 1e12);
    snprintf(cell[5], CAT_CELL, "%.2f", g->hbm_bps / 1e12);
    snprintf(cell[6], CAT_CELL, "%.0f%s", in->nvlink_bps / 1e9, in->nvswitch ? " sw" : "");
    snprintf(cell[7], CAT_CELL, "%.0f", in->net_bps * 8 / 1e9);
    if (in->nics > 0)
        snprintf(cell[8], CAT_CELL, "%.3g", (double)in->nics / in->gpus_per_node);
    else
        snprintf(cell[8], CAT_CELL, "-");
    if (in->price_per_hour > 0)
        snprintf(cell[9], CAT_CELL, "%.2f", in->price_per_hour);
    else
        snprintf(cell[9], CAT_CELL, "-");
}

static int print_table(FILE *f, const plan_catalog *cat)
{
    rpt_table *t = rpt_table_new();
    if (!t)
        return 1;
    static const int prio[CAT_COLS] = {0, 3, 0, 0, 1, 2, 2, 2, 1, 0};
    for (int c = 0; c < CAT_COLS; c++)
        rpt_table_col(t, cat_head[c], c >= 3, prio[c]);
    for (int i = 0; i < cat->ninstances; i++) {
        char cell[CAT_COLS][CAT_CELL];
        instance_cells(cat, &cat->instances[i], cell);
        rpt_table_row(t);
        for (int c = 0; c < CAT_COLS; c++)
            rpt_table_cell(t, "%s", cell[c]);
    }
    rpt_table_print(f, t, "");
    rpt_table_free(t);
    char note[800];
    snprintf(note, sizeof note,
             "\nGPU memory per GPU; peak: dense FP16/BF16; link: GPU-to-GPU per GPU, one "
             "direction (sw = NVSwitch; PCIe where there is no NVLink); net: per node, one "
             "direction; NICs/GPU: network cards (EFA devices) per node over its GPUs; $/h: "
             "%s; '-' = unknown. Sources: smdplan catalog --json.",
             cli_price_list());
    rpt_term_wrap(f, note, "", "");
    /* where each price was read, once per source */
    for (int i = 0; i < cat->ninstances; i++) {
        const char *src = cat->instances[i].price_source;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(cat->instances[k].price_source, src);
        if (seen || cli_price_is_sagemaker())
            continue;
        char line[1200];
        size_t u = (size_t)snprintf(line, sizeof line, "prices of ");
        for (int k = i, first = 1; k < cat->ninstances && u < sizeof line; k++)
            if (!strcmp(cat->instances[k].price_source, src)) {
                u += (size_t)snprintf(line + u, sizeof line - u, "%s%s", first ? "" : ", ",
                                      cat->instances[k].name);
                first = 0;
            }
        if (u < sizeof line)
            snprintf(line + u, sizeof line - u, ": %s", src[0] ? src : "no source given");
        rpt_term_wrap(f, line, "", "  ");
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* JSON (the catalog file's schema, base units)                              */
/* ------------------------------------------------------------------------ */

/* A number as the %.17g that reads back to the same double (cJSON prints
 * 15 digits when they compare equal within DBL_EPSILON, which loses the last
 * bits of a value computed rather than read, such as a measured file's). */
static void add_exact(cJSON *o, const char *key, double v)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    cJSON_AddItemToObject(o, key, cJSON_CreateRaw(buf));
}

static cJSON *gpu_json(const plan_gpu *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", g->name);
    cJSON_AddStringToObject(o, "silicon", g->silicon);
    add_exact(o, "mem_bytes", g->mem_bytes);
    add_exact(o, "peak_flops", g->peak_flops);
    add_exact(o, "hbm_bps", g->hbm_bps);
    add_exact(o, "gemm_eff_max", g->gemm_eff_max);
    add_exact(o, "gemm_dim_half", g->gemm_dim_half);
    add_exact(o, "misaligned_factor", g->misaligned_factor);
    add_exact(o, "hbm_eff", g->hbm_eff);
    add_exact(o, "flash_eff", g->flash_eff);
    add_exact(o, "flash1_eff", g->flash1_eff);
    add_exact(o, "flash3_eff", g->flash3_eff);
    add_exact(o, "cudnn_attn_eff", g->cudnn_attn_eff);
    add_exact(o, "gemm_align_bytes", g->gemm_align_bytes);
    add_exact(o, "align_partial_factor", g->align_partial_factor);
    add_exact(o, "fp8_peak_flops", g->fp8_peak_flops);
    add_exact(o, "fp8_gemm_eff", g->fp8_gemm_eff);
    add_exact(o, "gemm_ceiling", g->gemm_ceiling);
    add_exact(o, "alloc_frac", g->alloc_frac);
    if (g->sms > 0)
        add_exact(o, "sms", g->sms);
    if (g->measured[0]) {
        /* the file, and what it made of the entry (read back, the file is
         * applied again and these fields over it: the same values) */
        cJSON_AddStringToObject(o, "measured", g->measured);
        cJSON_AddBoolToObject(o, "gemm_measured", g->gemm_measured);
        add_exact(o, "gemm_measured_rms", g->gemm_measured_rms);
        add_exact(o, "gemm_measured_shapes", g->gemm_measured_shapes);
        add_exact(o, "flash2_fwd_eff", g->flash2_fwd_eff);
        add_exact(o, "flash2_bwd_eff", g->flash2_bwd_eff);
        add_exact(o, "cudnn_fwd_eff", g->cudnn_fwd_eff);
        add_exact(o, "cudnn_bwd_eff", g->cudnn_bwd_eff);
        add_exact(o, "copy_bps", g->copy_bps);
        add_exact(o, "copy_hbm_bps", g->copy_hbm_bps);
    }
    cJSON_AddBoolToObject(o, "fp16_only", g->fp16_only);
    if (g->ref_node_gpus > 0) {
        add_exact(o, "ref_node_gpus", g->ref_node_gpus);
        add_exact(o, "ref_node_net_bps", g->ref_node_net_bps);
        cJSON_AddStringToObject(o, "ref_node_source", g->ref_node_source);
    }
    cJSON_AddStringToObject(o, "source", g->source);
    return o;
}

static cJSON *instance_json(const plan_instance *in)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", in->name);
    cJSON *al = cJSON_AddArrayToObject(o, "aliases");
    for (int a = 0; a < in->naliases; a++)
        cJSON_AddItemToArray(al, cJSON_CreateString(in->aliases[a]));
    cJSON_AddStringToObject(o, "gpu", in->gpu);
    cJSON_AddNumberToObject(o, "gpus_per_node", in->gpus_per_node);
    cJSON_AddNumberToObject(o, "nvlink_bps", in->nvlink_bps);
    cJSON_AddBoolToObject(o, "nvswitch", in->nvswitch);
    cJSON_AddNumberToObject(o, "intra_busbw_bps", in->intra_busbw_bps);
    cJSON_AddNumberToObject(o, "intra_latency_s", in->intra_latency_s);
    cJSON_AddNumberToObject(o, "net_gpu_bps", in->net_gpu_bps);
    cJSON_AddNumberToObject(o, "net_bps", in->net_bps);
    cJSON_AddNumberToObject(o, "net_latency_s", in->net_latency_s);
    cJSON_AddNumberToObject(o, "net_latency_nodes", in->net_latency_nodes);
    cJSON_AddNumberToObject(o, "net_ring_eff", in->net_ring_eff);
    cJSON_AddNumberToObject(o, "net_tree_eff", in->net_tree_eff);
    cJSON_AddNumberToObject(o, "price_per_hour", in->price_per_hour);
    cJSON_AddNumberToObject(o, "host_mem_bytes", in->host_mem_bytes);
    cJSON_AddBoolToObject(o, "efa", in->efa);
    cJSON_AddNumberToObject(o, "nics", in->nics);
    if (in->nics_source[0]) /* optional: given only where known */
        cJSON_AddStringToObject(o, "nics_source", in->nics_source);
    if (in->price_source[0])
        cJSON_AddStringToObject(o, "price_source", in->price_source);
    if (in->nccl_channels > 0)
        cJSON_AddNumberToObject(o, "nccl_channels", in->nccl_channels);
    cJSON_AddStringToObject(o, "intra_curve", in->intra_curve);
    cJSON_AddStringToObject(o, "net_curve", in->net_curve);
    cJSON_AddStringToObject(o, "source", in->source);
    return o;
}

static cJSON *curve_json(const plan_curve *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddItemToObject(o, "log2_bytes", cJSON_CreateDoubleArray(c->log2_bytes, c->n));
    cJSON_AddItemToObject(o, "eff", cJSON_CreateDoubleArray(c->eff, c->n));
    cJSON_AddStringToObject(o, "source", c->source);
    return o;
}

static cJSON *eff_json(const plan_fw_eff *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", e->name);
    cJSON_AddStringToObject(o, "framework", e->framework);
    cJSON_AddStringToObject(o, "silicon", e->silicon);
    for (int p = 0; p < PLAN_EFF__COUNT; p++) {
        if (!(e->fitted & (1u << p)))
            continue;
        char key[48];
        const char *name = plan_eff_param_name((plan_eff_param)p);
        cJSON_AddNumberToObject(o, name, *plan_eff_ref((plan_eff *)&e->eff, (plan_eff_param)p));
        snprintf(key, sizeof key, "%s_stderr", name);
        cJSON_AddNumberToObject(o, key, e->std_err[p]);
    }
    cJSON_AddNumberToObject(o, "rows", e->rows);
    cJSON_AddNumberToObject(o, "sources", e->sources);
    cJSON_AddNumberToObject(o, "mean_abs_err_pct", e->mean_abs_err_pct);
    cJSON_AddStringToObject(o, "source", e->source);
    return o;
}

static int print_json(FILE *f, const plan_catalog *cat)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
    cJSON *insts = cJSON_AddArrayToObject(root, "instances");
    cJSON *curves = cJSON_AddArrayToObject(root, "curves");
    for (int i = 0; i < cat->ngpus; i++)
        cJSON_AddItemToArray(gpus, gpu_json(&cat->gpus[i]));
    for (int i = 0; i < cat->ninstances; i++)
        cJSON_AddItemToArray(insts, instance_json(&cat->instances[i]));
    for (int i = 0; i < cat->ncurves; i++)
        cJSON_AddItemToArray(curves, curve_json(&cat->curves[i]));
    cJSON *effs = cJSON_AddArrayToObject(root, "efficiencies");
    for (int i = 0; i < cat->neffs; i++)
        cJSON_AddItemToArray(effs, eff_json(&cat->effs[i]));
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
    rc = o.json ? print_json(stdout, &cat) : print_table(stdout, &cat);
    plan_catalog_free(&cat);
    return rc;
}
