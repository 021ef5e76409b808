/*
 * exec_comm_stage.c: a host transport's group under a device whose buffers
 * are not host memory (several ranks on one GPU, or one rank without MPI:
 * CUDA compute over the MPI or the one-rank transport).
 *
 * The staged group takes device buffers and runs every operation on the
 * host group it wraps: the device's send data is downloaded into a host
 * buffer of the request (download is ordered after the device's queued
 * work, so the data is what the compute stream produced), the host
 * transport's non-blocking operation starts on it, and when the operation
 * completes (exec_comm_test / wait driving ops->test) the received data is
 * uploaded into the device buffer. A bf16 reduction is done in f32 on the
 * host (MPI has no bf16: each value widened exactly, the sum rounded back
 * to bf16 to nearest even once, which is at least as accurate as NCCL's
 * bf16 reduction); bf16 that is only moved travels as bytes.
 *
 * Requests own their host buffer until freed; a request still in flight
 * when a wait times out is left to the job's abort, as the host
 * transport's own are (exec_comm.c). This is the slow path: every
 * operation crosses PCIe twice and the host transport copies in host
 * memory; it exists so that layouts of several ranks run on one GPU, not
 * for speed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_bf16.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_int.h"

typedef struct stage_comm {
    exec_comm c;
    exec_comm *host;             /* the wrapped group (owned) */
    exec_dev *dev;               /* borrowed: the run's device outlives its groups' use */
} stage_comm;

typedef struct stage_req {
    exec_req head;
    exec_req *inner;             /* the host transport's request */
    void *hbuf;                  /* host buffer (malloc'd) */
    void *dev_dst;               /* device buffer to fill on completion, or NULL */
    size_t count;                /* elements to upload */
    size_t out_at;               /* where the result starts in hbuf (host elements) */
    exec_dtype t;                /* device element type */
    int widened;                 /* hbuf holds f32 for bf16 */
} stage_req;

static exec_comm *host_of(exec_comm *c)
{
    return ((stage_comm *)c->impl)->host;
}

static exec_dev *dev_of(exec_comm *c)
{
    return ((stage_comm *)c->impl)->dev;
}

/* Host type of a device type on the host transport. */
static exec_dtype host_type(exec_dtype t, int reduce)
{
    return t == EXEC_DT_BF16 && reduce ? EXEC_DT_F32 : t;
}

static size_t host_bytes(exec_dtype t, size_t count, int reduce)
{
    return count * exec_dtype_bytes(host_type(t, reduce));
}

/* A new request with a host buffer of bytes; *out NULL on failure. */
static int req_new(exec_comm *c, size_t bytes, stage_req **out, st_err *err)
{
    *out = NULL;
    stage_req *r = calloc(1, sizeof *r);
    void *h = malloc(bytes ? bytes : 1);
    if (!r || !h) {
        free(r);
        free(h);
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate %zu bytes of host staging on the %s "
                        "group", bytes, c->label);
    }
    r->head.comm = c;
    r->hbuf = h;
    *out = r;
    return ST_OK;
}

static void req_drop(stage_req *r)
{
    free(r->hbuf);
    free(r);
}

/* Device src (count elements of t) into the request's host buffer at
 * element offset at (widened to f32 when reducing bf16). */
static int stage_in(exec_comm *c, stage_req *r, const void *src, size_t count, exec_dtype t,
                    int reduce, size_t at, st_err *err)
{
    exec_dev *d = dev_of(c);
    size_t es = exec_dtype_bytes(t);
    if (!(t == EXEC_DT_BF16 && reduce)) {
        d->ops->download(d, (char *)r->hbuf + at * es, src, count * es);
        return ST_OK;
    }
    uint16_t *tmp = malloc(count * sizeof *tmp + 1);
    if (!tmp)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate host staging on the %s group", c->label);
    d->ops->download(d, tmp, src, count * es);
    float *f = (float *)r->hbuf + at;
    for (size_t i = 0; i < count; i++)
        f[i] = exec_bf16_to_f32(tmp[i]);
    free(tmp);
    return ST_OK;
}

/* The request's result (host buffer from element r->out_at) into device
 * r->dev_dst. */
static int stage_out(exec_comm *c, stage_req *r, st_err *err)
{
    exec_dev *d = dev_of(c);
    size_t es = exec_dtype_bytes(r->t);
    if (!r->widened) {
        d->ops->upload(d, r->dev_dst, (char *)r->hbuf + r->out_at * es, r->count * es);
        return ST_OK;
    }
    uint16_t *tmp = malloc(r->count * sizeof *tmp + 1);
    if (!tmp)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate host staging on the %s group", c->label);
    const float *f = (const float *)r->hbuf + r->out_at;
    for (size_t i = 0; i < r->count; i++)
        tmp[i] = exec_bf16_from_f32(f[i]);
    d->ops->upload(d, r->dev_dst, tmp, r->count * es);
    free(tmp);
    return ST_OK;
}

/* Common tail: keep the host request, or drop ours on failure. */
static int started(stage_req *r, int rc, exec_req *inner, exec_req **req)
{
    if (rc != ST_OK) {
        req_drop(r);
        return rc;
    }
    r->inner = inner;
    *req = &r->head;
    return ST_OK;
}

static int st_allreduce(exec_comm *c, const void *send, void *recv, size_t count, exec_dtype t,
                        exec_redop op, exec_req **req, st_err *err)
{
    stage_req *r;
    int rc = req_new(c, host_bytes(t, count, 1), &r, err);
    if (rc != ST_OK)
        return rc;
    if ((rc = stage_in(c, r, send, count, t, 1, 0, err)) != ST_OK)
        return started(r, rc, NULL, req);
    r->dev_dst = recv;
    r->count = count;
    r->t = t;
    r->widened = t == EXEC_DT_BF16;
    exec_req *in = NULL;
    exec_comm *h = host_of(c);
    rc = h->ops->allreduce(h, r->hbuf, r->hbuf, count, host_type(t, 1), op, &in, err);
    return started(r, rc, in, req);
}

static int st_reduce_scatter(exec_comm *c, const void *send, void *recv, size_t recv_count,
                             exec_dtype t, exec_redop op, exec_req **req, st_err *err)
{
    /* the host buffer: the whole send, then this rank's block of the result */
    size_t n = recv_count * (size_t)c->size;
    stage_req *r;
    int rc = req_new(c, host_bytes(t, n + recv_count, 1), &r, err);
    if (rc != ST_OK)
        return rc;
    if ((rc = stage_in(c, r, send, n, t, 1, 0, err)) != ST_OK)
        return started(r, rc, NULL, req);
    r->dev_dst = recv;
    r->count = recv_count;
    r->out_at = n;
    r->t = t;
    r->widened = t == EXEC_DT_BF16;
    exec_req *in = NULL;
    exec_comm *h = host_of(c);
    size_t hb = exec_dtype_bytes(host_type(t, 1));
    rc = h->ops->reduce_scatter(h, r->hbuf, (char *)r->hbuf + n * hb, recv_count,
                                host_type(t, 1), op, &in, err);
    return started(r, rc, in, req);
}

static int st_allgather(exec_comm *c, const void *send, void *recv, size_t send_count,
                        exec_dtype t, exec_req **req, st_err *err)
{
    size_t n = send_count * (size_t)c->size, es = exec_dtype_bytes(t);
    stage_req *r;
    int rc = req_new(c, n * es, &r, err);
    if (rc != ST_OK)
        return rc;
    /* this rank's part in place in the gathered host buffer */
    if ((rc = stage_in(c, r, send, send_count, t, 0, (size_t)c->rank * send_count, err)))
        return started(r, rc, NULL, req);
    r->dev_dst = recv;
    r->count = n;
    r->t = t;
    exec_req *in = NULL;
    exec_comm *h = host_of(c);
    /* moved, not reduced: bf16 as pairs of bytes */
    exec_dtype ht = t == EXEC_DT_BF16 ? EXEC_DT_U8 : t;
    size_t k = t == EXEC_DT_BF16 ? 2 : 1;
    rc = h->ops->allgather(h, (char *)r->hbuf + (size_t)c->rank * send_count * es, r->hbuf,
                           send_count * k, ht, &in, err);
    return started(r, rc, in, req);
}

static int st_bcast(exec_comm *c, void *buf, size_t count, exec_dtype t, int root,
                    exec_req **req, st_err *err)
{
    size_t es = exec_dtype_bytes(t);
    stage_req *r;
    int rc = req_new(c, count * es, &r, err);
    if (rc != ST_OK)
        return rc;
    if (c->rank == root && (rc = stage_in(c, r, buf, count, t, 0, 0, err)))
        return started(r, rc, NULL, req);
    r->dev_dst = c->rank == root ? NULL : buf;
    r->count = count;
    r->t = t;
    exec_req *in = NULL;
    exec_comm *h = host_of(c);
    exec_dtype ht = t == EXEC_DT_BF16 ? EXEC_DT_U8 : t;
    rc = h->ops->bcast(h, r->hbuf, count * (t == EXEC_DT_BF16 ? 2 : 1), ht, root, &in, err);
    return started(r, rc, in, req);
}

static int st_send(exec_comm *c, const void *buf, size_t count, exec_dtype t, int peer,
                   int tag, exec_req **req, st_err *err)
{
    size_t es = exec_dtype_bytes(t);
    stage_req *r;
    int rc = req_new(c, count * es, &r, err);
    if (rc != ST_OK)
        return rc;
    if ((rc = stage_in(c, r, buf, count, t, 0, 0, err)))
        return started(r, rc, NULL, req);
    r->t = t;
    exec_req *in = NULL;
    exec_comm *h = host_of(c);
    exec_dtype ht = t == EXEC_DT_BF16 ? EXEC_DT_U8 : t;
    rc = h->ops->send(h, r->hbuf, count * (t == EXEC_DT_BF16 ? 2 : 1), ht, peer, tag, &in, err);
    return started(r, rc, in, req);
}

static int st_recv(exec_comm *c, void *buf, size_t count, exec_dtype t, int peer, int tag,
                   exec_req **req, st_err *err)
{
    size_t es = exec_dtype_bytes(t);
    stage_req *r;
    int rc = req_new(c, count * es, &r, err);
    if (rc != ST_OK)
        return rc;
    r->dev_dst = buf;
    r->count = count;
    r->t = t;
    exec_req *in = NULL;
    exec_comm *h = host_of(c);
    exec_dtype ht = t == EXEC_DT_BF16 ? EXEC_DT_U8 : t;
    rc = h->ops->recv(h, r->hbuf, count * (t == EXEC_DT_BF16 ? 2 : 1), ht, peer, tag, &in, err);
    return started(r, rc, in, req);
}

static int st_barrier(exec_comm *c, exec_req **req, st_err *err)
{
    stage_req *r;
    int rc = req_new(c, 0, &r, err);
    if (rc != ST_OK)
        return rc;
    exec_req *in = NULL;
    exec_comm *h = host_of(c);
    rc = h->ops->barrier(h, &in, err);
    return started(r, rc, in, req);
}

static int st_test(exec_req *req, int *done, st_err *err)
{
    stage_req *r = (stage_req *)req;
    exec_comm *c = req->comm;
    *done = 0;
    if (r->inner) {
        const exec_comm_ops *ho = host_of(c)->ops;
        int rc = ho->test(r->inner, done, err);
        if (rc != ST_OK || !*done)
            return rc;
        ho->req_free(r->inner);
        r->inner = NULL;
        if (r->dev_dst && (rc = stage_out(c, r, err)) != ST_OK)
            return rc;
    }
    *done = 1;
    return ST_OK;
}

static void st_req_free(exec_req *req)
{
    stage_req *r = (stage_req *)req;
    if (r->inner)
        host_of(req->comm)->ops->req_free(r->inner);
    req_drop(r);
}

static int st_open(exec_comm **world, st_err *err)
{
    return ST_RAISE(err, ST_EINTERNAL, "a staged group is made by wrapping, not opened");
}

static int st_split(exec_comm *parent, int color, int key, exec_comm **out, st_err *err)
{
    return ST_RAISE(err, ST_EINTERNAL, "the staged %s group is not split", parent->label);
}

static void st_free(exec_comm *c)
{
    stage_comm *s = c->impl;
    exec_comm_free(s->host);
    free(s);
}

static void st_abort(exec_comm *c, int code)
{
    exec_comm_abort(host_of(c), code);
}

static const exec_comm_ops stage_ops = {
    .name = "staged",
    .device_buffers = 1,
    .open = st_open,
    .split = st_split,
    .free = st_free,
    .allreduce = st_allreduce,
    .reduce_scatter = st_reduce_scatter,
    .allgather = st_allgather,
    .bcast = st_bcast,
    .send = st_send,
    .recv = st_recv,
    .barrier = st_barrier,
    .test = st_test,
    .req_free = st_req_free,
    .abort = st_abort,
};

int exec__comm_stage_wrap(exec_comm **group, exec_dev *dev, st_err *err)
{
    exec_comm *h = *group;
    stage_comm *s = calloc(1, sizeof *s);
    if (!s)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the staged %s group", h->label);
    s->host = h;
    s->dev = dev;
    s->c.ops = &stage_ops;
    s->c.rank = h->rank;
    s->c.size = h->size;
    s->c.timeout_s = h->timeout_s;
    s->c.stream = h->stream;
    s->c.impl = s;
    memcpy(s->c.label, h->label, sizeof s->c.label);
    *group = &s->c;
    return ST_OK;
}
