/*
 * exec_dev.c: the device-independent half of exec_dev.h: opening a device
 * by name and counting what the executor allocates on it by class (the
 * peak_memory_bytes of RESULT.json).
 */
#include <stdlib.h>

#include "exec/exec_dev.h"
#include "exec/exec_dev_int.h"

int exec_dev_open(const char *name, int threads, exec_dev **out, st_err *err)
{
    *out = NULL;
    const exec_dev_ops *ops = NULL;
    int rc = exec_dev_lookup(name, &ops, err);
    if (rc != ST_OK)
        return rc;
    if (threads < 1)
        return ST_RAISE(err, ST_EINVAL, "threads per rank %d: must be at least 1", threads);
    exec_dev *d = calloc(1, sizeof *d);
    if (!d)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the %s device", name);
    d->ops = ops;
    d->elem_bytes = exec_dtype_bytes(ops->dtype);
    d->state_bytes = exec_dtype_bytes(ops->state_dtype);
    d->stat_bytes = exec_dtype_bytes(ops->stat_dtype);
    d->threads = threads;
    rc = ops->open(d, threads, err);
    if (rc != ST_OK) {
        free(d);
        return rc;
    }
    *out = d;
    return ST_OK;
}

void exec_dev_close(exec_dev *d)
{
    if (!d)
        return;
    d->ops->close(d);
    free(d);
}

void *exec_dev_alloc(exec_dev *d, size_t bytes, exec_mem_class c, st_err *err)
{
    void *p = d->ops->alloc(d, bytes, c);
    if (!p) {
        ST_RAISE(err, ST_ENOMEM, "out of %s memory allocating %zu bytes of %s", d->ops->name,
                 bytes, exec_mem_class_name(c));
        return NULL;
    }
    exec_mem *m = &d->mem;
    m->cur_bytes[c] += (double)bytes;
    m->cur_total_bytes += (double)bytes;
    if (m->cur_bytes[c] > m->peak_class_bytes[c])
        m->peak_class_bytes[c] = m->cur_bytes[c];
    if (m->cur_total_bytes > m->peak_total_bytes)
        m->peak_total_bytes = m->cur_total_bytes;
    return p;
}

void exec_dev_free(exec_dev *d, void *p, size_t bytes, exec_mem_class c)
{
    if (!p)
        return;
    d->ops->free(d, p);
    d->mem.cur_bytes[c] -= (double)bytes;
    d->mem.cur_total_bytes -= (double)bytes;
}
