/*
 * exec_dump.c: writing and reading the test mode's weight dumps (format in
 * exec_dump.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_dump.h"
#include "exec/exec_int.h"
#include "exec/exec_rt.h"

#define DUMP_MAGIC "SMDWGT1"

/* A growing byte buffer. */
typedef struct bytes {
    char *p;
    size_t n, cap;
} bytes;

static int put(bytes *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return 0;
}

static int record(bytes *b, int64_t off, int64_t count, const double *v)
{
    return put(b, &off, 8) || put(b, &count, 8) || put(b, v, (size_t)count * sizeof *v);
}

int exec_dump_weights(exec_rt *rt, const char *dir, st_err *err)
{
    exec_model *x = &rt->x;
    bytes b = {0};
    int64_t total = 0;
    for (int g = 0; g < x->ngt; g++)
        total += x->gt[g].rows * x->gt[g].cols;
    int rc = ST_OK, owner = rt->dp_rank == 0;
    double *host = NULL;
    if (put(&b, DUMP_MAGIC, 8) || put(&b, &total, 8))
        rc = ST_RAISE(err, ST_ENOMEM, "out of memory dumping weights");
    for (int u = 0; rc == ST_OK && u < x->nu; u++) {
        const exec_unit *un = &x->u[u];
        /* every DP rank takes part in a ZeRO-3 gather */
        if ((rc = exec_z3_acquire(x, u, err)))
            break;
        if (owner) {
            double *h = realloc(host, (size_t)(un->numel ? un->numel : 1) * sizeof *h);
            if (!h) {
                rc = ST_RAISE(err, ST_ENOMEM, "out of memory dumping weights");
            } else {
                host = h;
                for (int r = 0; r < R__COUNT && rc == ST_OK; r++) {
                    int ti = un->tensor[r];
                    if (ti < 0)
                        continue;
                    const exec_tensor *t = &x->t[ti];
                    if ((t->flags & EXEC_T_TIED_COPY) ||
                        ((t->flags & EXEC_T_TP_REPL) && rt->tp_rank != 0))
                        continue;
                    x->dev->ops->download_f64(x->dev, host, exec_param(x, u, (exec_role)r),
                                              t->numel);
                    const double *v = host;
                    for (int k = 0; k < t->npieces && rc == ST_OK; k++) {
                        const exec_piece *pc = &t->piece[k];
                        const exec_gtensor *g = &x->gt[pc->gid];
                        for (int64_t i = 0; i < pc->nrows && rc == ST_OK; i++) {
                            if (record(&b, g->offset + (pc->row0 + i) * g->cols + pc->col0,
                                       pc->ncols, v))
                                rc = ST_RAISE(err, ST_ENOMEM, "out of memory dumping weights");
                            v += pc->ncols;
                        }
                    }
                }
            }
        }
        exec_z3_release(x, u);
    }
    free(host);
    if (rc == ST_OK && owner) {
        char path[EXEC_PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/weights-rank-%05d.bin", dir, rt->rank);
        rc = exec__write_atomic(path, b.p, b.n, err);
    }
    free(b.p);
    return rc;
}

static int read_one(const char *path, double **out, unsigned char **seen, int64_t *n,
                    st_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = exec__read_file(path, &buf, &len, err);
    if (rc != ST_OK)
        return rc;
    int64_t total = 0;
    if (len < 16 || memcmp(buf, DUMP_MAGIC, 8) != 0) {
        free(buf);
        return ST_RAISE(err, ST_EPARSE, "%s: not a weight dump", path);
    }
    memcpy(&total, buf + 8, 8);
    if (!*out) {
        *out = calloc((size_t)(total > 0 ? total : 1), sizeof **out);
        *seen = calloc((size_t)(total > 0 ? total : 1), 1);
        *n = total;
        if (!*out || !*seen) {
            free(buf);
            return ST_RAISE(err, ST_ENOMEM, "out of memory reading %s", path);
        }
    } else if (total != *n) {
        free(buf);
        return ST_RAISE(err, ST_EPARSE, "%s: a model of %lld parameters, the others %lld", path,
                        (long long)total, (long long)*n);
    }
    size_t at = 16;
    while (rc == ST_OK && at < len) {
        int64_t off, count;
        if (len - at < 16) {
            rc = ST_RAISE(err, ST_EPARSE, "%s: truncated record", path);
            break;
        }
        memcpy(&off, buf + at, 8);
        memcpy(&count, buf + at + 8, 8);
        at += 16;
        if (off < 0 || count < 0 || off + count > total || len - at < (size_t)count * 8) {
            rc = ST_RAISE(err, ST_EPARSE, "%s: bad record at byte %zu", path, at - 16);
            break;
        }
        for (int64_t i = 0; i < count; i++) {
            if ((*seen)[off + i]++) {
                rc = ST_RAISE(err, ST_EINVAL, "%s: parameter %lld written twice", path,
                              (long long)(off + i));
                break;
            }
            memcpy(*out + off + i, buf + at + (size_t)i * 8, 8);
        }
        at += (size_t)count * 8;
    }
    free(buf);
    return rc;
}

int exec_dump_read(const char *dir, double **out, int64_t *n, st_err *err)
{
    *out = NULL;
    *n = 0;
    DIR *dh = opendir(dir);
    if (!dh)
        return ST_RAISE(err, ST_ENOENT, "%s: cannot open the dump directory", dir);
    unsigned char *seen = NULL;
    int rc = ST_OK, files = 0;
    struct dirent *e;
    while (rc == ST_OK && (e = readdir(dh))) {
        if (strncmp(e->d_name, "weights-rank-", 13) != 0 || !strstr(e->d_name, ".bin"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = read_one(path, out, &seen, n, err);
        files++;
    }
    closedir(dh);
    if (rc == ST_OK && files == 0)
        rc = ST_RAISE(err, ST_ENOENT, "%s: no weight dumps", dir);
    for (int64_t i = 0; rc == ST_OK && i < *n; i++)
        if (!seen[i])
            rc = ST_RAISE(err, ST_EINVAL, "%s: parameter %lld is in no dump", dir, (long long)i);
    free(seen);
    if (rc != ST_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}
