/*
 * exec_comm_nccl.c: the NCCL transport ("nccl"): collectives and
 * point-to-point on GPU buffers, one GPU per rank.
 *
 * Bootstrap over MPI. Every group keeps an MPI group of the same ranks
 * (the MPI transport's own table): the world is MPI's, a split is
 * MPI_Comm_split's, and each group's NCCL communicator is made from a
 * unique id that its rank 0 draws (ncclGetUniqueId) and broadcasts over
 * that MPI group (the NCCL documentation's "Creating a communicator" with
 * MPI). Before that, the ranks of a group compare their GPUs' UUIDs: one
 * GPU cannot hold two ranks of an NCCL communicator (NCCL refuses or
 * hangs), which is refused here by name; several ranks per GPU run with the
 * MPI transport instead, staged through host memory (exec_comm_stage.c).
 * The world's communicator is made on its first device-buffer operation
 * (the runner moves only host data over the world; the transport bench
 * moves device data); the TP, PP and DP groups' at their split. Buffers in
 * host memory (the runner's sums over the world, the benchmark's checks)
 * go over the MPI group, so one transport serves both kinds; which kind a
 * buffer is comes from cudaPointerGetAttributes.
 *
 * Streams and events. Each group has its own stream; an operation first
 * makes it wait for the compute stream's work queued so far (an event
 * recorded there), so the data is what the compute produced, and records
 * its own completion event; a request completes when that event has
 * (cudaEventQuery). DP buckets and pipeline transfers thus run beside the
 * backward on their own streams, as the plan assumes them overlapped.
 * Sends and receives go on the PP groups' streams, posted by the runner as
 * NCCL groups where a send is followed by a receive (group_begin/end:
 * ncclGroupStart/End; NCCL orders a pair's messages by posting order, and
 * the runner keeps activations and gradients on separate groups so each
 * kind's order is the schedule's).
 *
 * Errors and hangs. Communicators are non-blocking (ncclConfig_t.blocking =
 * 0): their creation and any call that returns ncclInProgress are polled
 * with ncclCommGetAsyncError under the group's timeout. While a request is
 * waited for (exec_comm.c's loop), each poll also asks
 * ncclCommGetAsyncError, so an asynchronous NCCL error (a peer gone, a
 * network failure) ends the wait at once with NCCL's message; a wait past
 * the timeout ends it too. The rank program then records the run as failed
 * and calls abort, which aborts every NCCL communicator of the process
 * (ncclCommAbort stops kernels stuck waiting for a dead peer) and then the
 * MPI job (MPI_Abort); a watchdog alarm ends the process if that itself
 * stalls (EXEC_NCCL_ABORT_S).
 *
 * Built as the module smdplan-nccl.so (exec_module.h) with the MPI
 * transport it bootstraps over and the GPU selection it shares with the
 * cuda device (exec_devinfo_cuda.c).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "exec/exec_comm.h"
#include "exec/exec_cuda.h"
#include "exec/exec_int.h"
#include "exec/exec_module.h"

/* Seconds the abort may take before the process ends itself. */
#define EXEC_NCCL_ABORT_S 10
/* Sleep between polls of a communicator still in progress. */
#define EXEC_NCCL_POLL_NS 100000
#define EXEC_NCCL_EVENT_POOL 256

typedef struct nccl_comm {
    exec_comm c;
    exec_comm *host;             /* the MPI group of the same ranks (owned) */
    ncclComm_t nc;               /* NULL until made */
    cudaStream_t stream;         /* this group's stream */
    cudaEvent_t ready;           /* recorded on the compute stream before each operation */
    struct nccl_comm *next;      /* the process's live groups (for abort) */
} nccl_comm;

typedef struct nccl_req {
    exec_req head;
    cudaEvent_t done;
    int recorded;                /* done recorded on the stream (after its group ended) */
    const char *what;
    struct nccl_req *next_pending;
} nccl_req;

/* Process state: the live groups, the requests of the NCCL group being
 * posted (their completion is recorded at ncclGroupEnd, when the
 * operations are launched), and a pool of events. Only the main thread
 * calls the transport (the MPI transport's FUNNELED rule). */
static nccl_comm *live;
static int group_depth;
static nccl_req *pending;
static cudaEvent_t event_pool[EXEC_NCCL_EVENT_POOL];
static int nevents;

static nccl_comm *nc_of(exec_comm *c)
{
    return (nccl_comm *)c->impl;
}

static int nccl_fail(st_err *err, ncclResult_t r, ncclComm_t nc, const char *what,
                     const exec_comm *c)
{
    const char *last = nc ? ncclGetLastError(nc) : NULL;
    return ST_RAISE(err, ST_EIO, "nccl: %s on the %s group: %s%s%s", what, c ? c->label : "world",
                    ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
}

static int cuda_fail(st_err *err, cudaError_t e, const char *what, const exec_comm *c)
{
    return ST_RAISE(err, ST_EIO, "cuda: %s on the %s group: %s", what, c ? c->label : "world",
                    cudaGetErrorString(e));
}

/* A call's result settled: ncclInProgress polled (ncclCommGetAsyncError)
 * until it is not, within timeout_s. */
static int settle(nccl_comm *n, ncclResult_t r, const char *what, double timeout_s, st_err *err)
{
    double t0 = exec_now_s();
    while (r == ncclInProgress) {
        if (exec_now_s() - t0 > timeout_s) {
            ncclCommAbort(n->nc);
            n->nc = NULL;
            return ST_RAISE(err, ST_EIO, "nccl: timeout after %g s waiting for %s on the %s "
                            "group", timeout_s, what, n->c.label);
        }
        struct timespec ts = {0, EXEC_NCCL_POLL_NS};
        nanosleep(&ts, NULL);
        ncclResult_t st = ncclSuccess;
        ncclResult_t q = ncclCommGetAsyncError(n->nc, &st);
        r = q != ncclSuccess ? q : st;
    }
    return r == ncclSuccess ? ST_OK : nccl_fail(err, r, n->nc, what, &n->c);
}

static int is_device(const void *p)
{
    struct cudaPointerAttributes a;
    if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* The MPI group, with this group's timeout and label for its messages. */
static exec_comm *host_of(exec_comm *c)
{
    exec_comm *h = nc_of(c)->host;
    h->timeout_s = c->timeout_s;
    memcpy(h->label, c->label, sizeof h->label);
    return h;
}

static int event_get(cudaEvent_t *ev, const exec_comm *c, st_err *err)
{
    if (nevents > 0) {
        *ev = event_pool[--nevents];
        return ST_OK;
    }
    cudaError_t e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    return e == cudaSuccess ? ST_OK : cuda_fail(err, e, "cudaEventCreate", c);
}

static void event_put(cudaEvent_t ev)
{
    if (nevents < EXEC_NCCL_EVENT_POOL)
        event_pool[nevents++] = ev;
    else
        cudaEventDestroy(ev);
}

/* This rank's GPU as one number: FNV-1a of the GPU's UUID (the same GPU
 * whatever ordinal CUDA_VISIBLE_DEVICES gives it in each process); 0 when
 * CUDA cannot say. */
static int64_t gpu_id(int ordinal)
{
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof prop.uuid.bytes; i++)
        h = (h ^ (unsigned char)prop.uuid.bytes[i]) * 1099511628211ull;
    return (int64_t)(h >> 1);
}

/* Make the group's NCCL communicator (collective over its MPI group). */
static int make_nccl(nccl_comm *n, double timeout_s, st_err *err)
{
    exec_comm *h = n->host;
    h->timeout_s = timeout_s;
    int ordinal = 0, rc;
    if ((rc = exec__cuda_select(&ordinal, err)))
        return rc;
    int64_t *places = malloc((size_t)h->size * sizeof *places);
    if (!places)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate the nccl bootstrap");
    int64_t mine = gpu_id(ordinal);
    rc = exec_comm_allgather(h, &mine, places, 1, EXEC_DT_I64, NULL, err);
    /* every rank sees every pair, so all of them refuse together */
    for (int i = 0; rc == ST_OK && i < h->size; i++)
        for (int j = i + 1; rc == ST_OK && j < h->size; j++)
            if (places[i] != 0 && places[i] == places[j])
                rc = ST_RAISE(err, ST_EUNSUPPORTED, "nccl: ranks %d and %d of a group share "
                              "one GPU; one GPU cannot hold two ranks of an NCCL communicator "
                              "(use the mpi transport, which stages through host memory)", i, j);
    free(places);
    if (rc != ST_OK)
        return rc;
    /* rank 0's id (and whether it could draw one) to every rank */
    struct {
        int64_t ok;
        ncclUniqueId id;
    } boot;
    memset(&boot, 0, sizeof boot);
    if (h->rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&boot.id);
        boot.ok = r == ncclSuccess;
        if (r != ncclSuccess)
            rc = nccl_fail(err, r, NULL, "ncclGetUniqueId", &n->c);
    }
    int brc = exec_comm_bcast(h, &boot, sizeof boot, EXEC_DT_U8, 0, NULL, err);
    if (rc != ST_OK || brc != ST_OK)
        return rc != ST_OK ? rc : brc;
    if (!boot.ok)
        return ST_RAISE(err, ST_EIO, "nccl: rank 0 of a group could not draw a unique id");
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&n->nc, h->size, boot.id, h->rank, &cfg);
    if (r != ncclSuccess && r != ncclInProgress)
        return nccl_fail(err, r, n->nc, "ncclCommInitRankConfig", &n->c);
    return settle(n, r, "the communicator's creation", timeout_s, err);
}

/* Before a device operation: the communicator exists and the group's
 * stream waits for the compute stream's queued work. */
static int dev_begin(exec_comm *c, st_err *err)
{
    nccl_comm *n = nc_of(c);
    int rc;
    if (!n->nc && (rc = make_nccl(n, c->timeout_s, err)))
        return rc;
    if (c->stream) {
        cudaError_t e = cudaEventRecord(n->ready, (cudaStream_t)c->stream);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(n->stream, n->ready, 0);
        if (e != cudaSuccess)
            return cuda_fail(err, e, "ordering after the compute stream", c);
    }
    return ST_OK;
}

/* After posting a device operation whose call returned r: settle it and
 * make its request (completion recorded now, or at the group's end). */
static int dev_end(exec_comm *c, ncclResult_t r, const char *what, exec_req **req, st_err *err)
{
    nccl_comm *n = nc_of(c);
    if (r != ncclSuccess && r != ncclInProgress)
        return nccl_fail(err, r, n->nc, what, c);
    int rc = settle(n, r, what, c->timeout_s, err);
    if (rc != ST_OK)
        return rc;
    nccl_req *q = calloc(1, sizeof *q);
    if (!q)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate a request on the %s group", c->label);
    q->head.comm = c;
    q->what = what;
    if ((rc = event_get(&q->done, c, err))) {
        free(q);
        return rc;
    }
    if (group_depth > 0) {
        q->next_pending = pending;
        pending = q;
    } else {
        cudaError_t e = cudaEventRecord(q->done, n->stream);
        if (e != cudaSuccess) {
            event_put(q->done);
            free(q);
            return cuda_fail(err, e, "cudaEventRecord", c);
        }
        q->recorded = 1;
    }
    *req = &q->head;
    return ST_OK;
}

static int nccl_type(exec_dtype t, ncclDataType_t *out, const exec_comm *c, st_err *err)
{
    switch (t) {
    case EXEC_DT_F32: *out = ncclFloat32; return ST_OK;
    case EXEC_DT_F64: *out = ncclFloat64; return ST_OK;
    case EXEC_DT_BF16: *out = ncclBfloat16; return ST_OK;
    case EXEC_DT_I32: *out = ncclInt32; return ST_OK;
    case EXEC_DT_I64: *out = ncclInt64; return ST_OK;
    case EXEC_DT_U8: *out = ncclUint8; return ST_OK;
    default:
        return ST_RAISE(err, ST_EUNSUPPORTED, "the nccl transport has no %s element type "
                        "(group %s)", exec_dtype_name(t), c->label);
    }
}

static int nccl_op(exec_redop op, ncclRedOp_t *out, st_err *err)
{
    switch (op) {
    case EXEC_RED_SUM: *out = ncclSum; return ST_OK;
    case EXEC_RED_MAX: *out = ncclMax; return ST_OK;
    default: return ST_RAISE(err, ST_EINVAL, "unknown reduction %d", (int)op);
    }
}

/* Where an operation's buffers are: 1 device, 0 host (*dev: the first
 * buffer's, set on every path); mixed is refused. */
static int where(exec_comm *c, const void *a, const void *b, int *dev, st_err *err)
{
    int da = is_device(a), db = b ? is_device(b) : da;
    *dev = da;
    if (da != db)
        return ST_RAISE(err, ST_EINVAL, "nccl: one buffer in device memory and one in host "
                        "memory on the %s group", c->label);
    return ST_OK;
}

static int x_allreduce(exec_comm *c, const void *send, void *recv, size_t count, exec_dtype t,
                       exec_redop op, exec_req **req, st_err *err)
{
    int dev, rc;
    ncclDataType_t dt = ncclFloat32;
    ncclRedOp_t rop = ncclSum;
    if ((rc = where(c, send, recv, &dev, err)))
        return rc;
    if (!dev) {
        exec_comm *h = host_of(c);
        return h->ops->allreduce(h, send, recv, count, t, op, req, err);
    }
    if ((rc = nccl_type(t, &dt, c, err)) || (rc = nccl_op(op, &rop, err)) ||
        (rc = dev_begin(c, err)))
        return rc;
    nccl_comm *n = nc_of(c);
    return dev_end(c, ncclAllReduce(send, recv, count, dt, rop, n->nc, n->stream), "all-reduce",
                   req, err);
}

static int x_reduce_scatter(exec_comm *c, const void *send, void *recv, size_t recv_count,
                            exec_dtype t, exec_redop op, exec_req **req, st_err *err)
{
    int dev, rc;
    ncclDataType_t dt = ncclFloat32;
    ncclRedOp_t rop = ncclSum;
    if ((rc = where(c, send, recv, &dev, err)))
        return rc;
    if (!dev) {
        exec_comm *h = host_of(c);
        return h->ops->reduce_scatter(h, send, recv, recv_count, t, op, req, err);
    }
    if ((rc = nccl_type(t, &dt, c, err)) || (rc = nccl_op(op, &rop, err)) ||
        (rc = dev_begin(c, err)))
        return rc;
    nccl_comm *n = nc_of(c);
    return dev_end(c, ncclReduceScatter(send, recv, recv_count, dt, rop, n->nc, n->stream),
                   "reduce-scatter", req, err);
}

static int x_allgather(exec_comm *c, const void *send, void *recv, size_t send_count,
                       exec_dtype t, exec_req **req, st_err *err)
{
    int dev, rc;
    ncclDataType_t dt = ncclFloat32;
    if ((rc = where(c, send, recv, &dev, err)))
        return rc;
    if (!dev) {
        exec_comm *h = host_of(c);
        return h->ops->allgather(h, send, recv, send_count, t, req, err);
    }
    if ((rc = nccl_type(t, &dt, c, err)) || (rc = dev_begin(c, err)))
        return rc;
    nccl_comm *n = nc_of(c);
    /* in place when send is this rank's block of recv (NCCL's in-place rule) */
    return dev_end(c, ncclAllGather(send, recv, send_count, dt, n->nc, n->stream), "all-gather",
                   req, err);
}

static int x_bcast(exec_comm *c, void *buf, size_t count, exec_dtype t, int root,
                   exec_req **req, st_err *err)
{
    int dev, rc;
    ncclDataType_t dt = ncclFloat32;
    if ((rc = where(c, buf, NULL, &dev, err)))
        return rc;
    if (!dev) {
        exec_comm *h = host_of(c);
        return h->ops->bcast(h, buf, count, t, root, req, err);
    }
    if ((rc = nccl_type(t, &dt, c, err)) || (rc = dev_begin(c, err)))
        return rc;
    nccl_comm *n = nc_of(c);
    return dev_end(c, ncclBroadcast(buf, buf, count, dt, root, n->nc, n->stream), "broadcast",
                   req, err);
}

static int x_send(exec_comm *c, const void *buf, size_t count, exec_dtype t, int peer, int tag,
                  exec_req **req, st_err *err)
{
    int dev, rc;
    ncclDataType_t dt = ncclFloat32;
    if ((rc = where(c, buf, NULL, &dev, err)))
        return rc;
    if (!dev) {
        exec_comm *h = host_of(c);
        return h->ops->send(h, buf, count, t, peer, tag, req, err);
    }
    /* NCCL has no tags: a pair's messages match in posting order */
    if ((rc = nccl_type(t, &dt, c, err)) || (rc = dev_begin(c, err)))
        return rc;
    nccl_comm *n = nc_of(c);
    return dev_end(c, ncclSend(buf, count, dt, peer, n->nc, n->stream), "a send", req, err);
}

static int x_recv(exec_comm *c, void *buf, size_t count, exec_dtype t, int peer, int tag,
                  exec_req **req, st_err *err)
{
    int dev, rc;
    ncclDataType_t dt = ncclFloat32;
    if ((rc = where(c, buf, NULL, &dev, err)))
        return rc;
    if (!dev) {
        exec_comm *h = host_of(c);
        return h->ops->recv(h, buf, count, t, peer, tag, req, err);
    }
    if ((rc = nccl_type(t, &dt, c, err)) || (rc = dev_begin(c, err)))
        return rc;
    nccl_comm *n = nc_of(c);
    return dev_end(c, ncclRecv(buf, count, dt, peer, n->nc, n->stream), "a receive", req, err);
}

static int x_barrier(exec_comm *c, exec_req **req, st_err *err)
{
    exec_comm *h = host_of(c);
    return h->ops->barrier(h, req, err);
}

static int x_test(exec_req *req, int *done, st_err *err)
{
    nccl_req *q = (nccl_req *)req;
    exec_comm *c = req->comm;
    nccl_comm *n = nc_of(c);
    *done = 0;
    if (!q->recorded)
        return ST_RAISE(err, ST_EINTERNAL, "nccl: %s on the %s group waited for inside its "
                        "group (before group_end)", q->what, c->label);
    cudaError_t e = cudaEventQuery(q->done);
    if (e == cudaSuccess) {
        *done = 1;
        return ST_OK;
    }
    if (e != cudaErrorNotReady)
        return cuda_fail(err, e, q->what, c);
    ncclResult_t st = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(n->nc, &st);
    if (r != ncclSuccess)
        return nccl_fail(err, r, n->nc, q->what, c);
    if (st != ncclSuccess && st != ncclInProgress)
        return nccl_fail(err, st, n->nc, q->what, c);
    return ST_OK;
}

static void x_req_free(exec_req *req)
{
    nccl_req *q = (nccl_req *)req;
    event_put(q->done);
    free(q);
}

static int x_group_begin(exec_comm *c, st_err *err)
{
    ncclResult_t r = ncclGroupStart();
    if (r != ncclSuccess)
        return nccl_fail(err, r, NULL, "ncclGroupStart", c);
    group_depth++;
    return ST_OK;
}

static int x_group_end(exec_comm *c, st_err *err)
{
    ncclResult_t r = ncclGroupEnd();
    group_depth--;
    int rc = ST_OK;
    if (r != ncclSuccess && r != ncclInProgress)
        rc = nccl_fail(err, r, NULL, "ncclGroupEnd", c);
    /* settle every communicator of the group, then record the completions
     * (the operations are launched now) */
    for (nccl_req *q = pending; q && group_depth == 0; q = q->next_pending) {
        exec_comm *qc = q->head.comm;
        nccl_comm *n = nc_of(qc);
        if (rc == ST_OK && r == ncclInProgress)
            rc = settle(n, r, "a group of transfers", qc->timeout_s, err);
        cudaError_t e = cudaEventRecord(q->done, n->stream);
        if (e != cudaSuccess && rc == ST_OK)
            rc = cuda_fail(err, e, "cudaEventRecord", qc);
        q->recorded = 1;
    }
    if (group_depth == 0)
        pending = NULL;
    return rc;
}

/* ---- groups ---- */

static int wrap(exec_comm *h, exec_comm **out, st_err *err)
{
    nccl_comm *n = calloc(1, sizeof *n);
    if (!n) {
        exec_comm_free(h);
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate a group");
    }
    n->host = h;
    n->c.impl = n;
    n->c.rank = h->rank;
    n->c.size = h->size;
    cudaError_t e = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&n->ready, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        if (n->stream)
            cudaStreamDestroy(n->stream);
        exec_comm_free(h);
        free(n);
        return cuda_fail(err, e, "creating a group's stream", NULL);
    }
    n->next = live;
    live = n;
    *out = &n->c;
    return ST_OK;
}

static int x_open(exec_comm **world, st_err *err)
{
    int ordinal, rc;
    exec_comm *h = NULL;
    if ((rc = exec_comm_mpi_ops.open(&h, err)))
        return rc;
    h->ops = &exec_comm_mpi_ops;
    h->timeout_s = 60;
    snprintf(h->label, sizeof h->label, "world");
    if ((rc = exec__cuda_select(&ordinal, err))) {
        exec_comm_free(h);
        return rc;
    }
    return wrap(h, world, err);
}

static int x_split(exec_comm *parent, int color, int key, exec_comm **out, st_err *err)
{
    exec_comm *ph = host_of(parent), *h = NULL;
    int rc = ph->ops->split(ph, color, key, &h, err);
    if (rc != ST_OK)
        return rc;
    h->ops = ph->ops;
    h->timeout_s = parent->timeout_s;
    memcpy(h->label, parent->label, sizeof h->label);
    if ((rc = wrap(h, out, err)))
        return rc;
    nccl_comm *n = nc_of(*out);
    memcpy(n->c.label, parent->label, sizeof n->c.label);
    n->c.timeout_s = parent->timeout_s;
    return make_nccl(n, parent->timeout_s, err);
}

static void x_free(exec_comm *c)
{
    nccl_comm *n = nc_of(c);
    for (nccl_comm **p = &live; *p; p = &(*p)->next)
        if (*p == n) {
            *p = n->next;
            break;
        }
    if (n->nc) {
        ncclResult_t r = ncclCommFinalize(n->nc);
        st_err ignore = {0};
        if (r == ncclInProgress)
            settle(n, r, "the communicator's end", c->timeout_s > 0 ? c->timeout_s : 60, &ignore);
        if (n->nc)
            ncclCommDestroy(n->nc);
    }
    cudaEventDestroy(n->ready);
    cudaStreamDestroy(n->stream);
    exec_comm_free(n->host); /* the world's last: it finalises MPI */
    free(n);
    if (!live)
        while (nevents > 0)
            cudaEventDestroy(event_pool[--nevents]);
}

static int abort_code;

static void abort_watchdog(int sig)
{
    (void)sig;
    _exit(abort_code ? abort_code : 1);
}

static void x_abort(exec_comm *c, int code)
{
    /* NCCL's abort unblocks kernels waiting for a dead peer; should it stall
     * itself, the alarm ends this rank and mpirun ends the others */
    abort_code = code;
    signal(SIGALRM, abort_watchdog);
    alarm(EXEC_NCCL_ABORT_S);
    for (nccl_comm *n = live; n; n = n->next)
        if (n->nc) {
            ncclCommAbort(n->nc);
            n->nc = NULL;
        }
    exec_comm_mpi_ops.abort(nc_of(c)->host, code);
    _exit(code);
}

const exec_comm_ops exec_comm_nccl_ops = {
    .name = "nccl",
    .device_buffers = 1,
    .open = x_open,
    .split = x_split,
    .free = x_free,
    .allreduce = x_allreduce,
    .reduce_scatter = x_reduce_scatter,
    .allgather = x_allgather,
    .bcast = x_bcast,
    .send = x_send,
    .recv = x_recv,
    .barrier = x_barrier,
    .test = x_test,
    .req_free = x_req_free,
    .abort = x_abort,
    .group_begin = x_group_begin,
    .group_end = x_group_end,
};

/* The module smdplan-nccl.so (exec_module.h). */
const exec_module exec_module_nccl = {
    .abi = EXEC_MODULE_ABI,
    .build = EXEC_MODULE_BUILD,
    .comm = &exec_comm_nccl_ops,
};
