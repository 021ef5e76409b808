/*
 * exec_features.c: the one registry of build features, devices and
 * transports. The HAVE_* tests live here and nowhere else (CMake generates
 * them into smd_config.h).
 *
 * A backend is linked into libexec when it needs nothing beyond libc and
 * OpenBLAS (which exec_blas.c opens itself): the CPU devices and the "self"
 * transport. The backends on CUDA, NCCL and MPI are modules opened the
 * first time they are asked for (exec_module.h), so no program links those
 * libraries. Names alone (exec_dev_built, exec_comm_built, the lists for
 * messages) never open anything.
 */
#include "exec/exec.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "exec/exec_dev_int.h"
#include "exec/exec_int.h"
#include "exec/exec_module.h"
#include "smd_config.h"

#if HAVE_CUDA
#define F_CUDA "+cuda"
#else
#define F_CUDA "-cuda"
#endif
#if HAVE_NCCL
#define F_NCCL "+nccl"
#else
#define F_NCCL "-nccl"
#endif
#if HAVE_MPI
#define F_MPI "+mpi"
#else
#define F_MPI "-mpi"
#endif

exec_features exec_features_built(void)
{
    exec_features f = {.cuda = HAVE_CUDA, .nccl = HAVE_NCCL, .mpi = HAVE_MPI};
    return f;
}

const char *exec_features_str(void)
{
    return F_CUDA " " F_NCCL " " F_MPI;
}

/* A device or transport of this build: its table when libexec holds it,
 * else the module that does (and, for a device, the module that counts
 * its devices without opening it: cudart alone, not cuBLASLt's 200 MB,
 * and whether it has the fused attention, so a config is checked without
 * opening the device: checked against the table when the module opens). */
typedef struct backend {
    const char *name;
    const exec_dev_ops *dev;
    const exec_comm_ops *comm;
    const char *module;
    const char *info_module;
    int flash;
} backend;

/* The transports of this build. */
static const backend transports[] = {
#if HAVE_MPI
    {.name = "mpi", .module = "mpi"},
#endif
    {.name = "self", .comm = &exec_comm_self_ops},
#if HAVE_NCCL && HAVE_MPI
    /* NCCL's communicators are bootstrapped over MPI (exec_comm_nccl.c) */
    {.name = "nccl", .module = "nccl"},
#endif
};

/* The devices of this build. */
static const backend devices[] = {
    {.name = "cpu", .dev = &exec_dev_cpu_ops},
    {.name = "cpu64", .dev = &exec_dev_cpu64_ops},
    {.name = "cpu-bf16", .dev = &exec_dev_cpu_bf16_ops},
#if HAVE_CUDA
    {.name = "cuda", .module = "cuda", .info_module = "cuda-info", .flash = 1},
#endif
};

#define NTRANSPORTS (sizeof transports / sizeof transports[0])
#define NDEVICES (sizeof devices / sizeof devices[0])

static const backend *find(const backend *list, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

/* "a b c": the names of a list, for messages. */
static const char *names_of(const backend *list, size_t n, char *buf, size_t size)
{
    if (!buf[0])
        for (size_t i = 0, used = 0; i < n && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " " : "", list[i].name);
    return buf;
}

/* The module m of backend kind/name, with the backend named in its error. */
static int open_module(const char *kind, const char *name, const char *module,
                       const exec_module **m, st_err *err)
{
    st_err why = {0};
    if (exec__module_open(module, m, &why) == ST_OK)
        return ST_OK;
    return ST_RAISE(err, why.code, "%s %s: %s", kind, name, why.msg);
}

/* Whether backend b's module, if it is in one, is found (not loaded). */
static int present(const char *kind, const backend *b, st_err *err)
{
    st_err why = {0};
    if (!b->module || exec__module_find(b->module, &why) == ST_OK)
        return ST_OK;
    return ST_RAISE(err, why.code, "%s %s: %s", kind, b->name, why.msg);
}

/* ---- transports ---- */

int exec_comm_built(const char *name)
{
    return find(transports, NTRANSPORTS, name) != NULL;
}

const char *exec_comm_names(void)
{
    static char names[64];
    return names_of(transports, NTRANSPORTS, names, sizeof names);
}

int exec_comm_lookup(const char *name, const exec_comm_ops **out, st_err *err)
{
    *out = NULL;
    const backend *b = find(transports, NTRANSPORTS, name);
    if (!b)
        return ST_RAISE(err, ST_EUNSUPPORTED, "transport \"%s\" is not in this build (built: %s)",
                        name ? name : "(null)", exec_comm_names());
    if (b->comm) {
        *out = b->comm;
        return ST_OK;
    }
    const exec_module *m = NULL;
    int rc = open_module("transport", b->name, b->module, &m, err);
    if (rc == ST_OK && !m->comm)
        rc = ST_RAISE(err, ST_EINTERNAL, "transport %s: module smdplan-%s.so holds no transport",
                      b->name, b->module);
    if (rc == ST_OK)
        *out = m->comm;
    return rc;
}

int exec_comm_present(const char *name, st_err *err)
{
    const backend *b = find(transports, NTRANSPORTS, name);
    if (!b)
        return ST_RAISE(err, ST_EUNSUPPORTED, "transport \"%s\" is not in this build (built: %s)",
                        name ? name : "(null)", exec_comm_names());
    return present("transport", b, err);
}

const exec_comm_ops *exec_comm_find(const char *name)
{
    const exec_comm_ops *ops = NULL;
    return exec_comm_lookup(name, &ops, NULL) == ST_OK ? ops : NULL;
}

int exec_comm_open(const char *name, double timeout_s, exec_comm **world, st_err *err)
{
    *world = NULL;
    const exec_comm_ops *ops = NULL;
    int rc = exec_comm_lookup(name, &ops, err);
    if (rc != ST_OK)
        return rc;
    if (!(timeout_s > 0))
        return ST_RAISE(err, ST_EINVAL, "timeout_s %g: must be > 0", timeout_s);
    if ((rc = ops->open(world, err)) != ST_OK)
        return rc;
    (*world)->ops = ops;
    (*world)->timeout_s = timeout_s;
    snprintf((*world)->label, sizeof (*world)->label, "world");
    return ST_OK;
}

/* ---- devices ---- */

int exec_dev_built(const char *name)
{
    return find(devices, NDEVICES, name) != NULL;
}

const char *exec_dev_names(void)
{
    static char names[64];
    return names_of(devices, NDEVICES, names, sizeof names);
}

int exec_dev_lookup(const char *name, const exec_dev_ops **out, st_err *err)
{
    *out = NULL;
    const backend *b = find(devices, NDEVICES, name);
    if (!b)
        return ST_RAISE(err, ST_EUNSUPPORTED, "device \"%s\" is not in this build (built: %s)",
                        name ? name : "(null)", exec_dev_names());
    if (b->dev) {
        *out = b->dev;
        return ST_OK;
    }
    const exec_module *m = NULL;
    int rc = open_module("device", b->name, b->module, &m, err);
    if (rc == ST_OK && (!m->dev || !m->dev->flash_fwd != !b->flash))
        rc = ST_RAISE(err, ST_EINTERNAL, "device %s: module smdplan-%s.so holds %s", b->name,
                      b->module, m->dev ? "a device unlike the registry's" : "no device");
    if (rc == ST_OK)
        *out = m->dev;
    return rc;
}

int exec_dev_present(const char *name, st_err *err)
{
    const backend *b = find(devices, NDEVICES, name);
    if (!b)
        return ST_RAISE(err, ST_EUNSUPPORTED, "device \"%s\" is not in this build (built: %s)",
                        name ? name : "(null)", exec_dev_names());
    return present("device", b, err);
}

int exec_dev_flash(const char *name)
{
    const backend *b = find(devices, NDEVICES, name);
    return b ? b->dev ? b->dev->flash_fwd != NULL : b->flash : 0;
}

const exec_dev_ops *exec_dev_find(const char *name)
{
    const exec_dev_ops *ops = NULL;
    return exec_dev_lookup(name, &ops, NULL) == ST_OK ? ops : NULL;
}

int exec_device_query(const char *name, int *count, double *memory_bytes, st_err *err)
{
    *count = 0;
    *memory_bytes = 0;
    const backend *b = find(devices, NDEVICES, name);
    if (!b)
        return ST_RAISE(err, ST_EUNSUPPORTED, "device \"%s\" is not in this build (built: %s)",
                        name ? name : "(null)", exec_dev_names());
    if (!b->info_module) { /* a host device: one, its memory the host's */
        *count = 1;
        return ST_OK;
    }
    const exec_module *m = NULL;
    int rc = open_module("device", b->name, b->info_module, &m, err);
    if (rc == ST_OK && (!m->device_count || !m->device_memory_bytes))
        rc = ST_RAISE(err, ST_EINTERNAL, "device %s: module smdplan-%s.so does not count devices",
                      b->name, b->info_module);
    if (rc != ST_OK)
        return rc;
    *count = m->device_count();
    *memory_bytes = m->device_memory_bytes();
    return ST_OK;
}

int exec_device_count(const char *name)
{
    int count = 0;
    double bytes = 0;
    return exec_device_query(name, &count, &bytes, NULL) == ST_OK ? count : 0;
}

double exec_device_memory_bytes(const char *name)
{
    int count = 0;
    double bytes = 0;
    return exec_device_query(name, &count, &bytes, NULL) == ST_OK ? bytes : 0;
}
