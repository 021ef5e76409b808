/*
 * plan_host_names.c: the names of a host's catalog entries and the catalog
 * GPU a CUDA device's description names (plan_host_names.h says which).
 *
 * A CUDA device names itself (exec's describe: "NVIDIA H100 80GB HBM3,
 * compute capability 9.0, 79.1 GiB, 132 SMs, GPU 0"); the catalog GPU it
 * is, for smdplan exec's MFU and prediction, is the one whose chip (the
 * catalog name before its '-': "H100" of "H100-80GB") is a word of that,
 * the closest in memory among a chip's variants. Memory in GiB: the
 * catalog's nominal GB are GiB, as plan_validate reads them.
 */
#include "planner/plan_host_names.h"
#include "planner/plan_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GIB 1073741824.0
/* A stated memory size outside this range of GiB is not a device's. */
#define STATED_GIB_MIN 1.0
#define STATED_GIB_MAX 4096.0

void plan_host_short_name(const char *raw, char *buf, size_t n)
{
    char h[256];
    snprintf(h, sizeof h, "%s", raw && raw[0] ? raw : "localhost");
    char *dot = strchr(h, '.');
    if (dot)
        *dot = '\0';
    for (char *p = h; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-'))
            *p = '-';
    snprintf(buf, n, "%.*s", PLAN_HOST_SHORT_MAX - 1, h);
}

void plan_host_cpu_names(const char *host, const char *name, int threads_per_rank, char *inst,
                         size_t ni, char *gpu, size_t ng)
{
    if (threads_per_rank <= 1) {
        snprintf(inst, ni, "%s%s", name ? "" : "host-", name ? name : host);
        snprintf(gpu, ng, "cpu-%s", host);
    } else {
        snprintf(inst, ni, "%s%s-t%d", name ? "" : "host-", name ? name : host,
                 threads_per_rank);
        snprintf(gpu, ng, "cpu-%s-t%d", host, threads_per_rank);
    }
}

void plan_host_gpu_names(const char *host, const char *name, char *inst, size_t ni, char *gpu,
                         size_t ng)
{
    if (name)
        snprintf(inst, ni, "%s", name);
    else
        snprintf(inst, ni, "host-%s-cuda", host);
    snprintf(gpu, ng, "cuda-%.24s", name ? name : host);
}

void plan_host_curve_name(const char *host, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "mpi-%.27s", name ? name : host);
}

/* Does name contain word (case-insensitive) not inside a longer word? */
static int has_word(const char *name, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = name; n && *p; p++)
        if (!strncasecmp(p, word, n) && (p == name || !isalnum((unsigned char)p[-1])) &&
            !isalnum((unsigned char)p[n]))
            return 1;
    return 0;
}

/* GiB a device's name or description states ("80GB", "79.1 GiB"); 0 when
 * none. */
static double stated_gib(const char *name)
{
    for (const char *p = name; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > name && (isdigit((unsigned char)p[-1]) ||
                                                          p[-1] == '.')))
            continue;
        char *e;
        double v = strtod(p, &e);
        while (*e == ' ')
            e++;
        if (v >= STATED_GIB_MIN && v <= STATED_GIB_MAX &&
            (!strncmp(e, "GB", 2) || !strncmp(e, "GiB", 3)))
            return v;
    }
    return 0;
}

int plan_host_catalog_gpu(const plan_catalog *cat, const char *desc)
{
    double gib = stated_gib(desc);
    int best = -1;
    double best_d = INFINITY;
    for (int i = 0; i < cat->ngpus; i++) {
        char chip[32];
        snprintf(chip, sizeof chip, "%.*s", (int)strcspn(cat->gpus[i].name, "-"),
                 cat->gpus[i].name);
        if (!chip[0] || !has_word(desc, chip) || plan__board_differs(desc, cat->gpus[i].name))
            continue;
        /* closeness as a ratio: 80 GiB is as far from 40 as from 160 */
        double d = gib > 0 ? fabs(log(cat->gpus[i].mem_bytes / GIB / gib)) : 0;
        if (d < best_d) {
            best = i;
            best_d = d;
        }
    }
    return best;
}
