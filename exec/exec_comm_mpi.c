/*
 * exec_comm_mpi.c: the MPI transport (host buffers). Every operation is
 * MPI's non-blocking form (MPI_Iallreduce, MPI_Ireduce_scatter_block,
 * MPI_Iallgather, MPI_Ibcast, MPI_Ibarrier, MPI_Isend, MPI_Irecv); the
 * generic wait in exec_comm.c polls MPI_Test with the group's timeout, so
 * no rank can block inside MPI past the limit. Groups come from
 * MPI_Comm_split. Errors return (MPI_ERRORS_RETURN on every communicator)
 * with MPI's own message kept.
 *
 * The world initialises MPI when nobody did (MPI_Init_thread, FUNNELED: only
 * the main thread calls MPI; BLAS threads never do) and finalises it when
 * freed. Counts above INT_MAX are refused: MPI 3 counts are int.
 *
 * Built as the module smdplan-mpi.so (exec_module.h), and into
 * smdplan-nccl.so for NCCL's bootstrap: a process loads MPI's library when
 * it first asks for either transport.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "exec/exec_comm.h"
#include "exec/exec_int.h"
#include "exec/exec_module.h"

typedef struct mpi_comm {
    exec_comm c;
    MPI_Comm comm;
    int owns_mpi;                /* the world that initialised MPI finalises it */
} mpi_comm;

typedef struct mpi_req {
    exec_req head;
    MPI_Request r;
} mpi_req;

static int mpi_fail(st_err *err, int code, const char *what, const exec_comm *c)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", code);
    return ST_RAISE(err, ST_EIO, "%s on the %s group: %s", what, c ? c->label : "world", msg);
}

static MPI_Comm comm_of(const exec_comm *c)
{
    return ((const mpi_comm *)c->impl)->comm;
}

static int mpi_type(exec_dtype t, MPI_Datatype *out, const exec_comm *c, st_err *err)
{
    switch (t) {
    case EXEC_DT_F32: *out = MPI_FLOAT; return ST_OK;
    case EXEC_DT_F64: *out = MPI_DOUBLE; return ST_OK;
    case EXEC_DT_I32: *out = MPI_INT32_T; return ST_OK;
    case EXEC_DT_I64: *out = MPI_INT64_T; return ST_OK;
    case EXEC_DT_U8: *out = MPI_UINT8_T; return ST_OK;
    default:
        return ST_RAISE(err, ST_EUNSUPPORTED, "the mpi transport has no %s element type "
                        "(group %s)", exec_dtype_name(t), c->label);
    }
}

static int mpi_op(exec_redop op, MPI_Op *out, st_err *err)
{
    switch (op) {
    case EXEC_RED_SUM: *out = MPI_SUM; return ST_OK;
    case EXEC_RED_MAX: *out = MPI_MAX; return ST_OK;
    default: return ST_RAISE(err, ST_EINVAL, "unknown reduction %d", (int)op);
    }
}

static int check_count(size_t count, const exec_comm *c, st_err *err)
{
    if (count > (size_t)INT_MAX)
        return ST_RAISE(err, ST_EUNSUPPORTED, "%zu elements in one message on the %s group: MPI "
                        "counts stop at %d", count, c->label, INT_MAX);
    return ST_OK;
}

static int wrap(exec_comm *c, MPI_Comm comm, int owns, exec_comm **out, st_err *err)
{
    mpi_comm *m = calloc(1, sizeof *m);
    if (!m) {
        if (!owns)
            MPI_Comm_free(&comm);
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate a group");
    }
    m->comm = comm;
    m->owns_mpi = owns;
    m->c.impl = m;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &m->c.rank);
    MPI_Comm_size(comm, &m->c.size);
    *out = &m->c;
    return ST_OK;
}

static int mpi_open(exec_comm **world, st_err *err)
{
    int inited = 0, owns = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided = 0;
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS)
            return mpi_fail(err, rc, "MPI_Init_thread", NULL);
        owns = 1;
    }
    /* MPI_COMM_WORLD's handler: errors return to us instead of aborting, so
     * the message is ours and the failure goes through exec_comm_abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm dup;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, rc, "MPI_Comm_dup", NULL);
    rc = wrap(NULL, dup, 0, world, err);
    if (rc != ST_OK)
        return rc;
    ((mpi_comm *)(*world)->impl)->owns_mpi = owns;
    return ST_OK;
}

static int mpi_split(exec_comm *parent, int color, int key, exec_comm **out, st_err *err)
{
    MPI_Comm comm;
    int rc = MPI_Comm_split(comm_of(parent), color, key, &comm);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, rc, "MPI_Comm_split", parent);
    return wrap(parent, comm, 0, out, err);
}

static void mpi_free(exec_comm *c)
{
    mpi_comm *m = c->impl;
    MPI_Comm_free(&m->comm);
    int owns = m->owns_mpi;
    free(m);
    if (owns) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin)
            MPI_Finalize();
    }
}

static int new_req(exec_comm *c, mpi_req **out, st_err *err)
{
    mpi_req *r = malloc(sizeof *r);
    if (!r)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate a request on the %s group", c->label);
    r->head.comm = c;
    r->r = MPI_REQUEST_NULL;
    *out = r;
    return ST_OK;
}

/* Common tail of every operation: keep the request or report MPI's error. */
static int started(exec_comm *c, mpi_req *r, int mrc, const char *what, exec_req **req,
                   st_err *err)
{
    if (mrc != MPI_SUCCESS) {
        free(r);
        return mpi_fail(err, mrc, what, c);
    }
    *req = &r->head;
    return ST_OK;
}

static int mpi_allreduce(exec_comm *c, const void *send, void *recv, size_t count,
                         exec_dtype t, exec_redop op, exec_req **req, st_err *err)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    mpi_req *r = NULL;
    int rc;
    if ((rc = check_count(count, c, err)) || (rc = mpi_type(t, &dt, c, err)) ||
        (rc = mpi_op(op, &mop, err)) || (rc = new_req(c, &r, err)))
        return rc;
    const void *s = send == recv ? MPI_IN_PLACE : send;
    int mrc = MPI_Iallreduce(s, recv, (int)count, dt, mop, comm_of(c), &r->r);
    return started(c, r, mrc, "MPI_Iallreduce", req, err);
}

static int mpi_reduce_scatter(exec_comm *c, const void *send, void *recv, size_t recv_count,
                              exec_dtype t, exec_redop op, exec_req **req, st_err *err)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    mpi_req *r = NULL;
    int rc;
    if ((rc = check_count(recv_count * (size_t)c->size, c, err)) ||
        (rc = mpi_type(t, &dt, c, err)) || (rc = mpi_op(op, &mop, err)) ||
        (rc = new_req(c, &r, err)))
        return rc;
    int mrc = MPI_Ireduce_scatter_block(send, recv, (int)recv_count, dt, mop, comm_of(c), &r->r);
    return started(c, r, mrc, "MPI_Ireduce_scatter_block", req, err);
}

static int mpi_allgather(exec_comm *c, const void *send, void *recv, size_t send_count,
                         exec_dtype t, exec_req **req, st_err *err)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    mpi_req *r = NULL;
    int rc;
    if ((rc = check_count(send_count * (size_t)c->size, c, err)) ||
        (rc = mpi_type(t, &dt, c, err)) || (rc = new_req(c, &r, err)))
        return rc;
    const char *mine = (const char *)recv + (size_t)c->rank * send_count * exec_dtype_bytes(t);
    const void *s = (const char *)send == mine ? MPI_IN_PLACE : send;
    int mrc = MPI_Iallgather(s, (int)send_count, dt, recv, (int)send_count, dt, comm_of(c),
                             &r->r);
    return started(c, r, mrc, "MPI_Iallgather", req, err);
}

static int mpi_bcast(exec_comm *c, void *buf, size_t count, exec_dtype t, int root,
                     exec_req **req, st_err *err)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    mpi_req *r = NULL;
    int rc;
    if ((rc = check_count(count, c, err)) || (rc = mpi_type(t, &dt, c, err)) ||
        (rc = new_req(c, &r, err)))
        return rc;
    int mrc = MPI_Ibcast(buf, (int)count, dt, root, comm_of(c), &r->r);
    return started(c, r, mrc, "MPI_Ibcast", req, err);
}

static int mpi_send(exec_comm *c, const void *buf, size_t count, exec_dtype t, int peer,
                    int tag, exec_req **req, st_err *err)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    mpi_req *r = NULL;
    int rc;
    if ((rc = check_count(count, c, err)) || (rc = mpi_type(t, &dt, c, err)) ||
        (rc = new_req(c, &r, err)))
        return rc;
    int mrc = MPI_Isend(buf, (int)count, dt, peer, tag, comm_of(c), &r->r);
    return started(c, r, mrc, "MPI_Isend", req, err);
}

static int mpi_recv(exec_comm *c, void *buf, size_t count, exec_dtype t, int peer, int tag,
                    exec_req **req, st_err *err)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    mpi_req *r = NULL;
    int rc;
    if ((rc = check_count(count, c, err)) || (rc = mpi_type(t, &dt, c, err)) ||
        (rc = new_req(c, &r, err)))
        return rc;
    int mrc = MPI_Irecv(buf, (int)count, dt, peer, tag, comm_of(c), &r->r);
    return started(c, r, mrc, "MPI_Irecv", req, err);
}

static int mpi_barrier(exec_comm *c, exec_req **req, st_err *err)
{
    mpi_req *r = NULL;
    int rc = new_req(c, &r, err);
    if (rc != ST_OK)
        return rc;
    int mrc = MPI_Ibarrier(comm_of(c), &r->r);
    return started(c, r, mrc, "MPI_Ibarrier", req, err);
}

static int mpi_test(exec_req *req, int *done, st_err *err)
{
    mpi_req *r = (mpi_req *)req;
    MPI_Status st;
    int mrc = MPI_Test(&r->r, done, &st);
    if (mrc != MPI_SUCCESS)
        return mpi_fail(err, mrc, "MPI_Test", req->comm);
    return ST_OK;
}

static void mpi_req_free(exec_req *req)
{
    mpi_req *r = (mpi_req *)req;
    if (r->r != MPI_REQUEST_NULL)
        MPI_Request_free(&r->r);
    free(r);
}

static void mpi_abort(exec_comm *c, int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
    _Exit(code); /* MPI_Abort does not return; if it ever did, the rank still ends */
}

const exec_comm_ops exec_comm_mpi_ops = {
    .name = "mpi",
    .device_buffers = 0,
    .open = mpi_open,
    .split = mpi_split,
    .free = mpi_free,
    .allreduce = mpi_allreduce,
    .reduce_scatter = mpi_reduce_scatter,
    .allgather = mpi_allgather,
    .bcast = mpi_bcast,
    .send = mpi_send,
    .recv = mpi_recv,
    .barrier = mpi_barrier,
    .test = mpi_test,
    .req_free = mpi_req_free,
    .abort = mpi_abort,
};

/* The module smdplan-mpi.so (exec_module.h). */
const exec_module exec_module_mpi = {
    .abi = EXEC_MODULE_ABI,
    .build = EXEC_MODULE_BUILD,
    .comm = &exec_comm_mpi_ops,
};
