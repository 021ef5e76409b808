/*
 * exec_comm_self.c: the one-rank transport. Every group has one member, so a
 * collective is a copy and a barrier is done at once; point-to-point has no
 * peer and is refused by exec_comm.c's checks. It lets a one-rank run (and
 * the unit tests) go without an MPI launcher; it is what MPI would compute
 * with one rank, without initialising MPI.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_comm.h"
#include "exec/exec_int.h"

typedef struct self_comm {
    exec_comm c;
    exec_req done;               /* every request completes at once */
} self_comm;

static int self_new(exec_comm **out, st_err *err)
{
    self_comm *s = calloc(1, sizeof *s);
    if (!s)
        return ST_RAISE(err, ST_ENOMEM, "cannot allocate a group");
    s->c.rank = 0;
    s->c.size = 1;
    s->c.impl = s;
    s->done.comm = &s->c;
    *out = &s->c;
    return ST_OK;
}

static int self_open(exec_comm **world, st_err *err)
{
    return self_new(world, err);
}

static int self_split(exec_comm *parent, int color, int key, exec_comm **out, st_err *err)
{
    return self_new(out, err);
}

static void self_free(exec_comm *c)
{
    free(c->impl);
}

static exec_req *done_req(exec_comm *c)
{
    return &((self_comm *)c->impl)->done;
}

static void copy(void *dst, const void *src, size_t count, exec_dtype t)
{
    if (dst != src && count > 0)
        memmove(dst, src, count * exec_dtype_bytes(t));
}

static int self_allreduce(exec_comm *c, const void *send, void *recv, size_t count,
                          exec_dtype t, exec_redop op, exec_req **req, st_err *err)
{
    copy(recv, send, count, t);
    *req = done_req(c);
    return ST_OK;
}

static int self_reduce_scatter(exec_comm *c, const void *send, void *recv, size_t recv_count,
                               exec_dtype t, exec_redop op, exec_req **req, st_err *err)
{
    copy(recv, send, recv_count, t);
    *req = done_req(c);
    return ST_OK;
}

static int self_allgather(exec_comm *c, const void *send, void *recv, size_t send_count,
                          exec_dtype t, exec_req **req, st_err *err)
{
    copy(recv, send, send_count, t);
    *req = done_req(c);
    return ST_OK;
}

static int self_bcast(exec_comm *c, void *buf, size_t count, exec_dtype t, int root,
                      exec_req **req, st_err *err)
{
    *req = done_req(c);
    return ST_OK;
}

static int self_p2p(exec_comm *c, const void *buf, size_t count, exec_dtype t, int peer,
                    int tag, exec_req **req, st_err *err)
{
    return ST_RAISE(err, ST_EINTERNAL, "the one-rank transport has no peer %d", peer);
}

static int self_recv(exec_comm *c, void *buf, size_t count, exec_dtype t, int peer, int tag,
                     exec_req **req, st_err *err)
{
    return self_p2p(c, buf, count, t, peer, tag, req, err);
}

static int self_barrier(exec_comm *c, exec_req **req, st_err *err)
{
    *req = done_req(c);
    return ST_OK;
}

static int self_test(exec_req *r, int *done, st_err *err)
{
    *done = 1;
    return ST_OK;
}

static void self_req_free(exec_req *r)
{
}

static void self_abort(exec_comm *c, int code)
{
    _Exit(code);
}

const exec_comm_ops exec_comm_self_ops = {
    .name = "self",
    .device_buffers = 0,
    .open = self_open,
    .split = self_split,
    .free = self_free,
    .allreduce = self_allreduce,
    .reduce_scatter = self_reduce_scatter,
    .allgather = self_allgather,
    .bcast = self_bcast,
    .send = self_p2p,
    .recv = self_recv,
    .barrier = self_barrier,
    .test = self_test,
    .req_free = self_req_free,
    .abort = self_abort,
};
