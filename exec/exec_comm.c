/*
 * exec_comm.c: the transport-independent half of exec_comm.h: argument
 * checks, the blocking forms and the one wait loop with its timeout (the
 * lookup by name and exec_comm_open are the registry's, exec_features.c).
 * The transports (exec_comm_mpi.c, exec_comm_self.c, exec_comm_nccl.c, and
 * the staging of exec_comm_stage.c) only start operations and test them.
 * The modules of the MPI and NCCL transports hold a copy of this file
 * (exec_module.h), so it calls nothing of libexec beyond itself.
 *
 * The wait polls the transport's test: a short hot spin (a transfer that is
 * about to land costs no scheduler round trip), then sched_yield (ranks
 * oversubscribed on few cores give their core to the rank they wait for),
 * then short sleeps once the wait is long (a rank waiting on a slow peer does
 * not burn the core). The clock is read on every poll, so a timeout fires
 * within one sleep of the limit.
 */
#include "exec/exec_comm.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exec/exec_int.h"

/* Polls spent spinning before yielding, and the wait after which each poll
 * also sleeps EXEC_WAIT_SLEEP_NS. */
#define EXEC_WAIT_SPINS 200
#define EXEC_WAIT_SLEEP_AFTER_S 0.002
#define EXEC_WAIT_SLEEP_NS 20000

double exec_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t exec_dtype_bytes(exec_dtype t)
{
    switch (t) {
    case EXEC_DT_F32: return 4;
    case EXEC_DT_F64: return 8;
    case EXEC_DT_BF16: return 2;
    case EXEC_DT_I32: return 4;
    case EXEC_DT_I64: return 8;
    case EXEC_DT_U8: return 1;
    default: return 0;
    }
}

const char *exec_dtype_name(exec_dtype t)
{
    static const char *names[EXEC_DT__COUNT] = {"f32", "f64", "bf16", "i32", "i64", "u8"};
    return (unsigned)t < EXEC_DT__COUNT ? names[t] : "?";
}

int exec_comm_split(exec_comm *parent, int color, int key, const char *label, exec_comm **out,
                    st_err *err)
{
    *out = NULL;
    int rc = parent->ops->split(parent, color, key, out, err);
    if (rc != ST_OK)
        return rc;
    (*out)->ops = parent->ops;
    (*out)->timeout_s = parent->timeout_s;
    (*out)->stream = parent->stream;
    snprintf((*out)->label, sizeof (*out)->label, "%s", label ? label : "group");
    return ST_OK;
}

void exec_comm_free(exec_comm *c)
{
    if (c)
        c->ops->free(c);
}

void exec_comm_set_stream(exec_comm *c, void *stream)
{
    c->stream = stream;
}

int exec_comm_check_device(const exec_comm *c, int device_host_memory, const char *device_name,
                           st_err *err)
{
    if (c->ops->device_buffers && device_host_memory)
        return ST_RAISE(err, ST_EUNSUPPORTED,
                        "transport %s needs device buffers; device %s keeps them in host memory",
                        c->ops->name, device_name);
    if (!c->ops->device_buffers && !device_host_memory)
        return ST_RAISE(err, ST_EUNSUPPORTED,
                        "transport %s needs host buffers; device %s keeps them in device memory",
                        c->ops->name, device_name);
    return ST_OK;
}

int exec_comm_group_begin(exec_comm *c, st_err *err)
{
    return c->ops->group_begin ? c->ops->group_begin(c, err) : ST_OK;
}

int exec_comm_group_end(exec_comm *c, st_err *err)
{
    return c->ops->group_end ? c->ops->group_end(c, err) : ST_OK;
}

exec_comm *exec_req_comm(const exec_req *r)
{
    return r->comm;
}

int exec_comm_test(exec_req **req, int *done, st_err *err)
{
    *done = 1;
    if (!req || !*req)
        return ST_OK;
    exec_req *r = *req;
    const exec_comm_ops *ops = r->comm->ops;
    *done = 0;
    int rc = ops->test(r, done, err);
    if (rc != ST_OK || *done) {
        ops->req_free(r);
        *req = NULL;
    }
    return rc;
}

int exec_comm_wait(exec_req **req, const char *what, st_err *err)
{
    if (!req || !*req)
        return ST_OK;
    exec_req *r = *req;
    exec_comm *c = r->comm;
    const exec_comm_ops *ops = c->ops;
    double t0 = exec_now_s();
    int rc = ST_OK;
    for (long polls = 0;; polls++) {
        int done = 0;
        rc = ops->test(r, &done, err);
        if (rc != ST_OK || done)
            break;
        if (polls < EXEC_WAIT_SPINS)
            continue;
        double waited = exec_now_s() - t0;
        if (waited > c->timeout_s) {
            rc = ST_RAISE(err, ST_EIO, "timeout after %g s waiting for %s on the %s group",
                          c->timeout_s, what ? what : "a transfer", c->label);
            break;
        }
        if (waited > EXEC_WAIT_SLEEP_AFTER_S) {
            struct timespec ts = {0, EXEC_WAIT_SLEEP_NS};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
    /* A request still in flight is not freed (MPI forbids freeing an active
     * collective's request): after a timeout the job is ending anyway. */
    *req = NULL;
    if (rc == ST_OK)
        ops->req_free(r);
    return rc;
}

int exec_comm_waitall(exec_req **reqs, int n, const char *what, st_err *err)
{
    int rc = ST_OK;
    for (int i = 0; i < n; i++) {
        int r = exec_comm_wait(&reqs[i], what, err);
        if (rc == ST_OK)
            rc = r;
    }
    return rc;
}

/* The blocking form of an operation that was just started into *mine. */
static int finish(exec_req **req, exec_req *mine, const char *what, st_err *err)
{
    if (req) {
        *req = mine;
        return ST_OK;
    }
    return exec_comm_wait(&mine, what, err);
}

static int check_type(exec_comm *c, exec_dtype t, const char *what, st_err *err)
{
    if ((unsigned)t >= EXEC_DT__COUNT)
        return ST_RAISE(err, ST_EINVAL, "%s on the %s group: unknown element type %d", what,
                        c->label, (int)t);
    return ST_OK;
}

int exec_comm_allreduce(exec_comm *c, const void *send, void *recv, size_t count, exec_dtype t,
                        exec_redop op, exec_req **req, st_err *err)
{
    if (req)
        *req = NULL;
    int rc = check_type(c, t, "all-reduce", err);
    if (rc != ST_OK)
        return rc;
    exec_req *mine = NULL;
    rc = c->ops->allreduce(c, send, recv, count, t, op, &mine, err);
    if (rc != ST_OK)
        return rc;
    return finish(req, mine, "an all-reduce", err);
}

int exec_comm_reduce_scatter(exec_comm *c, const void *send, void *recv, size_t recv_count,
                             exec_dtype t, exec_redop op, exec_req **req, st_err *err)
{
    if (req)
        *req = NULL;
    int rc = check_type(c, t, "reduce-scatter", err);
    if (rc != ST_OK)
        return rc;
    exec_req *mine = NULL;
    rc = c->ops->reduce_scatter(c, send, recv, recv_count, t, op, &mine, err);
    if (rc != ST_OK)
        return rc;
    return finish(req, mine, "a reduce-scatter", err);
}

int exec_comm_allgather(exec_comm *c, const void *send, void *recv, size_t send_count,
                        exec_dtype t, exec_req **req, st_err *err)
{
    if (req)
        *req = NULL;
    int rc = check_type(c, t, "all-gather", err);
    if (rc != ST_OK)
        return rc;
    exec_req *mine = NULL;
    rc = c->ops->allgather(c, send, recv, send_count, t, &mine, err);
    if (rc != ST_OK)
        return rc;
    return finish(req, mine, "an all-gather", err);
}

int exec_comm_bcast(exec_comm *c, void *buf, size_t count, exec_dtype t, int root,
                    exec_req **req, st_err *err)
{
    if (req)
        *req = NULL;
    int rc = check_type(c, t, "broadcast", err);
    if (rc != ST_OK)
        return rc;
    if (root < 0 || root >= c->size)
        return ST_RAISE(err, ST_EINVAL, "broadcast root %d outside the %s group of %d", root,
                        c->label, c->size);
    exec_req *mine = NULL;
    rc = c->ops->bcast(c, buf, count, t, root, &mine, err);
    if (rc != ST_OK)
        return rc;
    return finish(req, mine, "a broadcast", err);
}

int exec_comm_barrier(exec_comm *c, exec_req **req, st_err *err)
{
    if (req)
        *req = NULL;
    exec_req *mine = NULL;
    int rc = c->ops->barrier(c, &mine, err);
    if (rc != ST_OK)
        return rc;
    return finish(req, mine, "a barrier", err);
}

static int check_p2p(exec_comm *c, exec_dtype t, int peer, int tag, exec_req **req,
                     const char *what, st_err *err)
{
    if (!req)
        return ST_RAISE(err, ST_EINVAL, "%s on the %s group: point to point is non-blocking "
                        "(a request is required)", what, c->label);
    *req = NULL;
    int rc = check_type(c, t, what, err);
    if (rc != ST_OK)
        return rc;
    if (peer < 0 || peer >= c->size || peer == c->rank)
        return ST_RAISE(err, ST_EINVAL, "%s on the %s group: peer %d (rank %d of %d)", what,
                        c->label, peer, c->rank, c->size);
    if (tag < 0 || tag > EXEC_COMM_TAG_MAX)
        return ST_RAISE(err, ST_EINVAL, "%s: tag %d outside 0..%d", what, tag, EXEC_COMM_TAG_MAX);
    return ST_OK;
}

int exec_comm_isend(exec_comm *c, const void *buf, size_t count, exec_dtype t, int peer, int tag,
                    exec_req **req, st_err *err)
{
    int rc = check_p2p(c, t, peer, tag, req, "send", err);
    if (rc != ST_OK)
        return rc;
    return c->ops->send(c, buf, count, t, peer, tag, req, err);
}

int exec_comm_irecv(exec_comm *c, void *buf, size_t count, exec_dtype t, int peer, int tag,
                    exec_req **req, st_err *err)
{
    int rc = check_p2p(c, t, peer, tag, req, "receive", err);
    if (rc != ST_OK)
        return rc;
    return c->ops->recv(c, buf, count, t, peer, tag, req, err);
}

void exec_comm_abort(exec_comm *c, int code)
{
    fflush(stdout);
    fflush(stderr);
    c->ops->abort(c, code);
}
