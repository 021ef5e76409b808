/*
 * plan_validate_rules.c: how smdplan validate reads a published run's
 * hardware and FLOP-convention text. The framework a run names is read by
 * plan_framework_match (plan_framework.c); the cluster by its GPU, memory
 * and network text here; nothing keys on a source.
 */
#include "planner/plan_validate_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int plan__contains(const char *hay, const char *needle)
{
    if (!hay || !needle)
        return 0;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return 1;
    return n == 0;
}

/* Gb/s to bytes/s. */
#define GBPS(x) ((x) * 1e9 / 8.0)

const gpu_reference plan__gpu_references[] = {
    {"V100", 16, GBPS(800),
     "NVIDIA DGX-2 / HGX-2, the V100 system built on NVSwitch: 16 GPUs, 8 x 100 Gb/s EDR "
     "InfiniBand (DGX-2 datasheet)"},
    {"A100", 8, GBPS(1600),
     "NVIDIA DGX A100: 8 GPUs on NVSwitch, 8 x 200 Gb/s HDR InfiniBand for compute (DGX A100 "
     "datasheet)"},
    {"H100", 8, GBPS(3200),
     "NVIDIA DGX H100: 8 GPUs on NVSwitch, 8 x 400 Gb/s NDR InfiniBand (DGX H100 datasheet)"},
    {"H200", 8, GBPS(3200),
     "NVIDIA DGX H200: 8 GPUs on NVSwitch, 8 x 400 Gb/s NDR InfiniBand (DGX H200 datasheet)"},
    {"A10G", 8, GBPS(100), "AWS g5.48xlarge: 8 A10G on PCIe, 100 Gb/s (hardware.md)"},
};
const int plan__ngpu_references =
    (int)(sizeof plan__gpu_references / sizeof plan__gpu_references[0]);

/* Intel Omni-Path 100 series: 100 Gb/s per port (Intel OPA product brief). */
#define OMNIPATH_PORT_GBPS 100.0

/* The first number at or after p, with its end; 0 if none. */
static double number_at(const char *p, const char **end)
{
    while (*p && !isdigit((unsigned char)*p))
        p++;
    if (!*p)
        return 0;
    char *e;
    double v = strtod(p, &e);
    *end = e;
    return v;
}

/* "<n> x <rate> Gb" or "<rate> Gbps": the per-node rate in Gb/s, 0 if the
 * text gives none. */
static double node_gbps(const char *s)
{
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > s && (isdigit((unsigned char)p[-1]) || p[-1] == '.')))
            continue;
        const char *e;
        double a = number_at(p, &e);
        const char *q = e;
        while (*q == ' ')
            q++;
        if ((*q == 'x' || *q == 'X') && isdigit((unsigned char)(q[1] == ' ' ? q[2] : q[1]))) {
            const char *e2;
            double b = number_at(q + 1, &e2);
            while (*e2 == ' ')
                e2++;
            if (strncasecmp(e2, "Gb", 2) == 0)
                return a * b;
            if (plan__contains(e2, "Omni-Path") && e2 - q < 4)
                return a * OMNIPATH_PORT_GBPS;
            continue;
        }
        if (strncasecmp(q, "Gb", 2) == 0)
            return a;
        if (strncasecmp(q, "Tb", 2) == 0)
            return a * 1000.0;
        if (strncasecmp(q, "Omni-Path", 9) == 0 || strncasecmp(q, "x Omni-Path", 11) == 0)
            return a * OMNIPATH_PORT_GBPS;
        p = e - 1;
    }
    return 0;
}

void plan__net_parse(const char *text, net_text *out)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return;
    if (plan__contains(text, "EFA"))
        out->tech = NET_EFA;
    else if (plan__contains(text, "InfiniBand") || plan__contains(text, " IB") ||
             plan__contains(text, "HDR") || plan__contains(text, "NDR") ||
             plan__contains(text, "EDR") || plan__contains(text, "RoCE") ||
             plan__contains(text, "Omni-Path") || strncasecmp(text, "IB", 2) == 0)
        out->tech = NET_RDMA;
    out->node_bps = GBPS(node_gbps(text));
    /* "4x Omni-Path" names ports without a rate */
    if (out->node_bps == 0 && plan__contains(text, "Omni-Path")) {
        const char *e;
        double n = number_at(text, &e);
        if (n >= 1 && n <= 64 && plan__contains(e, "Omni-Path"))
            out->node_bps = GBPS(n * OMNIPATH_PORT_GBPS);
    }
    out->nvswitch = plan__contains(text, "NVSwitch");
}

flop_conv plan__conv_parse(const char *c)
{
    if (plan__contains(c, "Eq.3") || plan__contains(c, "Eq. 3"))
        return CONV_EQ3;
    if (plan__contains(c, "dgxc"))
        return CONV_DGXC;
    if (plan__contains(c, "MosaicML") || plan__contains(c, "6N"))
        return CONV_MOSAIC;
    if (plan__contains(c, "Megatron model FLOPs") || plan__contains(c, "Model TFLOP"))
        return CONV_MEGATRON;
    if (plan__contains(c, "size*8") || plan__contains(c, "8*N") || plan__contains(c, "8N"))
        return CONV_PARAMS8;
    return CONV_UNKNOWN;
}
