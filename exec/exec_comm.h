/*
 * exec_comm.h: the transport table, the one interface through which the
 * executor talks between ranks.
 *
 * A transport (MPI, NCCL, and "self" for one rank) is a small table of operations
 * (exec_comm_ops) in its own file; the pipeline runner, the data-parallel
 * code and the model's tensor-parallel collectives call the exec_comm_*
 * functions below and never know which transport they have. The tables are
 * listed in exec_features.c, the only place with #if HAVE_* lines; MPI's and
 * NCCL's are in modules opened when first asked for (exec_module.h).
 *
 * Objects:
 *   exec_comm  a group of ranks (the world, or a TP / PP / DP group made by
 *              exec_comm_split, i.e. MPI_Comm_split or ncclCommSplit).
 *   exec_req   one operation in flight, made by a non-blocking call; it ends
 *              in exec_comm_wait (which frees it) or exec_comm_test.
 *
 * Buffers: ops->device_buffers says where the transport wants them: 0 host
 * memory (MPI), 1 device memory of the rank's device (NCCL on CUDA buffers).
 * A device whose buffers live elsewhere than the transport wants is refused
 * when the run is set up (exec_comm_check_device), never copied silently.
 * Transports that work on a device stream (NCCL) take the stream given to
 * exec_comm_set_stream; every collective is then ordered on that stream and
 * a request completes when the stream reaches it.
 *
 * Every call is non-blocking inside the transport; the blocking forms below
 * (req == NULL) start the operation and wait for it with the group's timeout.
 * A wait longer than timeout_s returns ST_EIO with
 * "timeout after N s waiting for <what> on <group>"; the caller passes the
 * error up to the rank program, which records it and ends the job through
 * exec_comm_abort (MPI_Abort / ncclCommAbort + MPI_Abort). Libraries never
 * abort on their own.
 *
 * Collective calls must be made by every rank of the group in the same
 * order (MPI's and NCCL's rule). Point-to-point sends never wait for their
 * receiver (sim/sim_schedule.h's contract: rendezvous sends deadlock 1F1B).
 */
#ifndef SMD_EXEC_COMM_H
#define SMD_EXEC_COMM_H

#include <stddef.h>

#include "common/st.h"

typedef enum exec_dtype {
    EXEC_DT_F32 = 0,
    EXEC_DT_F64,
    EXEC_DT_BF16,                /* NCCL only: MPI has no bf16 reduction */
    EXEC_DT_I32,
    EXEC_DT_I64,
    EXEC_DT_U8,
    EXEC_DT__COUNT
} exec_dtype;

/* Bytes of one element; 0 for an unknown type. */
size_t exec_dtype_bytes(exec_dtype t);
const char *exec_dtype_name(exec_dtype t);

typedef enum exec_redop {
    EXEC_RED_SUM = 0,
    EXEC_RED_MAX,
    EXEC_RED__COUNT
} exec_redop;

typedef struct exec_comm exec_comm;
typedef struct exec_req exec_req;
typedef struct exec_comm_ops exec_comm_ops;

/* Longest label of a group ("world", "tp", "dp", "pp", "embedding"). */
#define EXEC_COMM_LABEL_MAX 32

struct exec_comm {
    const exec_comm_ops *ops;
    int rank;                    /* this rank in the group, 0..size-1 */
    int size;
    double timeout_s;            /* longest blocking wait (inherited by splits) */
    void *stream;                /* device stream the transport orders on (NULL: none) */
    char label[EXEC_COMM_LABEL_MAX];
    void *impl;                  /* the transport's own state */
};

/* The table one transport fills. Every operation starts the transfer and
 * returns a request (*req) that the generic wait/test below drive through
 * ops->test; none of them blocks. Counts are elements of dtype. */
struct exec_comm_ops {
    const char *name;            /* "mpi", "nccl", "self" */
    int device_buffers;          /* 1: buffers are device memory; 0: host */
    /* Make the world group of this process (initialises the library when the
     * transport owns it, e.g. MPI_Init_thread). */
    int (*open)(exec_comm **world, st_err *err);
    /* MPI_Comm_split semantics: ranks with the same color form a group,
     * ordered by key. Collective over parent. */
    int (*split)(exec_comm *parent, int color, int key, exec_comm **out, st_err *err);
    void (*free)(exec_comm *c);  /* a group (the world last: finalises) */
    /* recv = reduce(send) over the group; send == recv is in place. */
    int (*allreduce)(exec_comm *c, const void *send, void *recv, size_t count, exec_dtype t,
                     exec_redop op, exec_req **req, st_err *err);
    /* recv (recv_count) = block `rank` of reduce(send) (recv_count * size);
     * send and recv must not overlap. */
    int (*reduce_scatter)(exec_comm *c, const void *send, void *recv, size_t recv_count,
                          exec_dtype t, exec_redop op, exec_req **req, st_err *err);
    /* recv (send_count * size) = concatenation of every rank's send in rank
     * order; send == recv + rank * send_count (in bytes of t) is in place. */
    int (*allgather)(exec_comm *c, const void *send, void *recv, size_t send_count,
                     exec_dtype t, exec_req **req, st_err *err);
    int (*bcast)(exec_comm *c, void *buf, size_t count, exec_dtype t, int root, exec_req **req,
                 st_err *err);
    int (*send)(exec_comm *c, const void *buf, size_t count, exec_dtype t, int peer, int tag,
                exec_req **req, st_err *err);
    int (*recv)(exec_comm *c, void *buf, size_t count, exec_dtype t, int peer, int tag,
                exec_req **req, st_err *err);
    int (*barrier)(exec_comm *c, exec_req **req, st_err *err);
    /* *done = 1 when r completed (r stays valid until req_free). */
    int (*test)(exec_req *r, int *done, st_err *err);
    void (*req_free)(exec_req *r);
    /* End every rank of the job now with exit code code (MPI_Abort). */
    void (*abort)(exec_comm *c, int code);
    /* Operations posted between group_begin and group_end start together
     * (ncclGroupStart / ncclGroupEnd): a send and the receive posted with it
     * progress at once, as Megatron's batched send_forward_recv_backward
     * (p2p_communication.py) does, so two stages that send to each other
     * before receiving never wait on each other's send. NULL when every
     * operation already starts on its own (MPI's non-blocking calls). */
    int (*group_begin)(exec_comm *c, st_err *err);
    int (*group_end)(exec_comm *c, st_err *err);
};

/* Largest tag a point-to-point message may carry (MPI guarantees 32767). */
#define EXEC_COMM_TAG_MAX 32767

/* Whether this build has a transport of that name ("mpi", "self", "nccl"
 * when built); nothing is opened. The list lives in exec_features.c. */
int exec_comm_built(const char *name);
/* The transport named name. Those on MPI and NCCL are modules, opened here
 * the first time (exec_module.h). ST_EUNSUPPORTED naming the transports
 * built when this build has none of that name; ST_ENOENT with one line
 * when its module is missing or cannot be loaded. */
int exec_comm_lookup(const char *name, const exec_comm_ops **out, st_err *err);
/* Whether the transport can be looked up here, its module found without
 * being loaded (for a launcher to refuse a job its ranks would refuse):
 * ST_OK, or exec_comm_lookup's ST_EUNSUPPORTED or ST_ENOENT line for a
 * module that is missing. A module found but not loadable is reported by
 * exec_comm_lookup only. */
int exec_comm_present(const char *name, st_err *err);
/* The same without the reason: NULL when the transport cannot be had. */
const exec_comm_ops *exec_comm_find(const char *name);
/* "mpi self" style list of the transports built, for messages. */
const char *exec_comm_names(void);

/* Open the world group of a transport; timeout_s bounds every blocking wait
 * (> 0). ST_EUNSUPPORTED names the transports built when name is unknown;
 * ST_ENOENT when its module cannot be had (exec_comm_lookup). */
int exec_comm_open(const char *name, double timeout_s, exec_comm **world, st_err *err);

/* Collective over parent: a new group of the ranks with the same color,
 * ordered by key, labelled label (for messages). */
int exec_comm_split(exec_comm *parent, int color, int key, const char *label, exec_comm **out,
                    st_err *err);

/* Free a group; the world last (it finalises the transport). NULL is fine. */
void exec_comm_free(exec_comm *c);

/* Order the group's operations on a device stream (NCCL); MPI ignores it. */
void exec_comm_set_stream(exec_comm *c, void *stream);

/* ST_EUNSUPPORTED when the device keeps its buffers where the transport
 * cannot take them (device_host_memory: 1 when the device's buffers are
 * host memory). */
int exec_comm_check_device(const exec_comm *c, int device_host_memory, const char *device_name,
                           st_err *err);

/* The operations. With req == NULL the call blocks until done (bounded by
 * the group's timeout); with req != NULL it returns at once and *req is the
 * request to pass to exec_comm_wait / exec_comm_test. Buffers must stay
 * valid and untouched until the operation completes. */
int exec_comm_allreduce(exec_comm *c, const void *send, void *recv, size_t count, exec_dtype t,
                        exec_redop op, exec_req **req, st_err *err);
int exec_comm_reduce_scatter(exec_comm *c, const void *send, void *recv, size_t recv_count,
                             exec_dtype t, exec_redop op, exec_req **req, st_err *err);
int exec_comm_allgather(exec_comm *c, const void *send, void *recv, size_t send_count,
                        exec_dtype t, exec_req **req, st_err *err);
int exec_comm_bcast(exec_comm *c, void *buf, size_t count, exec_dtype t, int root,
                    exec_req **req, st_err *err);
int exec_comm_barrier(exec_comm *c, exec_req **req, st_err *err);
/* Point to point: always non-blocking (*req required); tag in 0..EXEC_COMM_TAG_MAX. */
int exec_comm_isend(exec_comm *c, const void *buf, size_t count, exec_dtype t, int peer, int tag,
                    exec_req **req, st_err *err);
int exec_comm_irecv(exec_comm *c, void *buf, size_t count, exec_dtype t, int peer, int tag,
                    exec_req **req, st_err *err);

/* Post the operations between these two calls as one group (see
 * exec_comm_ops.group_begin); no-ops on a transport without groups. The
 * requests of a group's operations are waited for after group_end. */
int exec_comm_group_begin(exec_comm *c, st_err *err);
int exec_comm_group_end(exec_comm *c, st_err *err);

/* Wait for *req (and free it; *req becomes NULL). what names the operation
 * for the timeout message ("all-reduce of gradients"). NULL *req is done. */
int exec_comm_wait(exec_req **req, const char *what, st_err *err);
/* Wait for n requests (NULL entries are skipped); each is freed. */
int exec_comm_waitall(exec_req **reqs, int n, const char *what, st_err *err);
/* *done = 1 and the request freed (*req = NULL) when it has completed;
 * otherwise it only drives progress. */
int exec_comm_test(exec_req **req, int *done, st_err *err);

/* End the whole job now (every rank, exit code code). Does not return. */
void exec_comm_abort(exec_comm *c, int code);

/* Group of a request (for the transports' own use). */
exec_comm *exec_req_comm(const exec_req *r);

/* Monotonic clock, seconds (CLOCK_MONOTONIC): the executor's one timer. */
double exec_now_s(void);

/* A request's common head: transports embed it first in their requests. */
struct exec_req {
    exec_comm *comm;
};

#endif
