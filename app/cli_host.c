/*
 * cli_host.c: what smdplan bench and smdplan exec share about this host:
 * the names of its catalog entries, and writing a file the way every
 * smdplan output file is written.
 *
 * GPUs. A CUDA device names itself (exec's describe: "NVIDIA H100 80GB
 * HBM3, compute capability 9.0, 79.1 GiB, 132 SMs, GPU 0"); the catalog
 * GPU it is, for smdplan exec's MFU and prediction, is the one whose chip
 * (the catalog name before its '-': "H100" of "H100-80GB") is a word of
 * that, the closest in memory among a chip's variants.
 *
 * Names. smdplan bench writes one instance type per thread count per rank
 * it measured: "host-NAME" for one thread per rank (a "GPU" per core),
 * "host-NAME-tT" for T threads per rank, each with its device entry
 * "cpu-NAME" / "cpu-NAME-tT"; NAME is the host name up to its first dot,
 * with anything but letters, digits and '-' made '-', at most 20 characters. smdplan exec looks up
 * the one for the threads per rank it runs with.
 *
 * Files. A file is written whole or not at all, and an existing one is
 * replaced only with force, never through a symbolic link: the one rule of
 * every output (common/outfile.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cli_int.h"
#include "common/outfile.h"
#include "data/data.h"

void cli_host_name(char *buf, size_t n)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0])
        snprintf(h, sizeof h, "localhost");
    char *dot = strchr(h, '.');
    if (dot)
        *dot = '\0';
    for (char *p = h; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-'))
            *p = '-';
    snprintf(buf, n, "%.20s", h); /* "cpu-NAME-tT" fits a catalog GPU name (31) */
}

void cli_host_entry_names(int threads_per_rank, char *inst, size_t ni, char *gpu, size_t ng)
{
    char h[32];
    cli_host_name(h, sizeof h);
    if (threads_per_rank <= 1) {
        snprintf(inst, ni, "host-%s", h);
        snprintf(gpu, ng, "cpu-%s", h);
    } else {
        snprintf(inst, ni, "host-%s-t%d", h, threads_per_rank);
        snprintf(gpu, ng, "cpu-%s-t%d", h, threads_per_rank);
    }
}

int cli_write_file(const char *path, const char *what, const char *text, int force, st_err *err)
{
    return outfile_write(path, what, text, strlen(text), force, err);
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
 * none. The catalog's nominal GB are GiB, as plan_validate reads them. */
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
        if (v >= 1 && v <= 4096 && (!strncmp(e, "GB", 2) || !strncmp(e, "GiB", 3)))
            return v;
    }
    return 0;
}

int cli_catalog_gpu_of_device(const plan_catalog *cat, const char *desc)
{
    double gib = stated_gib(desc);
    int best = -1;
    double best_d = INFINITY;
    for (int i = 0; i < cat->ngpus; i++) {
        char chip[32];
        snprintf(chip, sizeof chip, "%.*s", (int)strcspn(cat->gpus[i].name, "-"),
                 cat->gpus[i].name);
        if (!chip[0] || !has_word(desc, chip))
            continue;
        double d = gib > 0 ? fabs(log(cat->gpus[i].mem_bytes / 1073741824.0 / gib)) : 0;
        if (d < best_d) {
            best = i;
            best_d = d;
        }
    }
    return best;
}

void cli_self_path(char *buf, size_t n)
{
    if (n == 0)
        return;
    ssize_t k = readlink("/proc/self/exe", buf, n - 1);
    buf[k > 0 ? k : 0] = '\0';
}

/* dir/name into buf when it is an executable that fits; 1 if so. */
static int executable_in(const char *dir, const char *name, char *buf, size_t n)
{
    char cand[CLI_PATH_MAX + 64];
    int len = snprintf(cand, sizeof cand, "%s/%s", *dir ? dir : ".", name);
    if (len < 0 || (size_t)len >= sizeof cand || (size_t)len >= n || access(cand, X_OK) != 0)
        return 0;
    memcpy(buf, cand, (size_t)len + 1);
    return 1;
}

void cli_find_program(const char *name, int search_path, char *buf, size_t n)
{
    char self[CLI_PATH_MAX];
    if (n == 0)
        return;
    buf[0] = '\0';
    cli_self_path(self, sizeof self);
    char *slash = strrchr(self, '/');
    if (slash) {
        *slash = '\0';
        if (executable_in(self, name, buf, n))
            return;
    }
    if (!search_path)
        return;
    const char *path = getenv("PATH");
    char dirs[CLI_PATH_MAX];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "");
    char *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
        if (executable_in(dir, name, buf, n))
            return;
}
