/*
 * rpt_catalog_text.c: the table of `smdplan catalog` (rpt_catalog.h): one
 * row per instance type of the catalog as the planner reads it, bandwidths
 * converted from the catalog's bytes/s and bits (net_bps is bytes/s; the
 * table shows Gbps, 8 bits a byte) and the price sources listed once each.
 */
#include "reports/rpt_catalog.h"

#include <stdio.h>
#include <string.h>

#include "common/st.h"
#include "common/units.h"
#include "reports/rpt_table.h"

#define CAT_COLS 10
#define CAT_CELL 64

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

/* "prices of A, B: SOURCE", once per source, in catalog order. */
static void price_sources(FILE *f, const plan_catalog *cat)
{
    for (int i = 0; i < cat->ninstances; i++) {
        const char *src = cat->instances[i].price_source;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(cat->instances[k].price_source, src);
        if (seen)
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
}

int rpt_catalog_text(FILE *f, const plan_catalog *cat, const char *price_list, int sagemaker)
{
    rpt_table *t = rpt_table_new();
    if (!t)
        return ST_ENOMEM;
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
             "direction (sw = NVSwitch; PCIe where there is no NVLink; Infinity Fabric on "
             "AMD's nodes); net: per node, one "
             "direction; NICs/GPU: network cards (EFA devices) per node over its GPUs; $/h: "
             "%s; '-' = unknown. Sources: smdplan catalog --json.",
             price_list);
    rpt_term_wrap(f, note, "", "");
    /* where each price was read: one SageMaker list says so in the key */
    if (!sagemaker)
        price_sources(f, cat);
    return ST_OK;
}
