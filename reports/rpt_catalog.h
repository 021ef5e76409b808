/*
 * rpt_catalog.h: the instance types of a catalog as the table of `smdplan
 * catalog`: one row per instance type (GPUs, GPU memory, dense FP16/BF16
 * peak, HBM bandwidth, GPU link and network bandwidth, NICs per GPU, price
 * per hour), the key under it and where each price was read.
 *
 * Units as printed: TFLOP/s, TB/s (10^12 bytes/s), GB/s per GPU one
 * direction, Gbps per node one direction, dollars per hour; GPU memory as
 * units_fmt_bytes writes it. The table fits the terminal (rpt_table.h).
 */
#ifndef SMD_RPT_CATALOG_H
#define SMD_RPT_CATALOG_H

#include <stdio.h>

#include "planner/plan.h"

/* The table of cat's instance types, its key (price_list names the prices'
 * source, one phrase) and, unless sagemaker (the prices are one SageMaker
 * list), a line per price source naming the instance types priced from
 * it. ST_OK, or ST_ENOMEM with nothing printed. */
int rpt_catalog_text(FILE *f, const plan_catalog *cat, const char *price_list, int sagemaker);

#endif
