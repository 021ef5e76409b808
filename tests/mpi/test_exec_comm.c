/*
 * test_exec_comm.c: the MPI transport on 2 or 4 ranks (mpiexec -n N): every
 * collective blocking and non-blocking, in place and not, against values
 * each rank can compute alone; groups from split; sends posted before their
 * receives with messages far past the eager limit (the non-blocking send
 * contract of sim/sim_schedule.h); refusals; the timeout of a wait that
 * cannot complete.
 *
 * With --abort: rank size-1 ends the job through exec_comm_abort(3) while
 * the others wait in a barrier (test_exec_comm_abort.sh checks the exit).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_comm.h"
#include "mpi_check.h"

static void test_allreduce(exec_comm *w)
{
    st_err err = {0};
    int n = 1000, r = w->rank, p = w->size;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (int i = 0; i < n; i++)
        a[i] = (float)(r + 1) * (float)i;
    /* out of place, blocking: sum over ranks (r + 1) i = i p (p + 1) / 2 */
    CHECK_OK(exec_comm_allreduce(w, a, b, n, EXEC_DT_F32, EXEC_RED_SUM, NULL, &err), &err);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += b[i] != (float)i * (float)(p * (p + 1) / 2);
    CHECK(bad == 0);
    /* in place, non-blocking, max */
    exec_req *req = NULL;
    CHECK_OK(exec_comm_allreduce(w, a, a, n, EXEC_DT_F32, EXEC_RED_MAX, &req, &err), &err);
    CHECK(req != NULL);
    CHECK_OK(exec_comm_wait(&req, "test max", &err), &err);
    CHECK(req == NULL);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += a[i] != (float)p * (float)i;
    CHECK(bad == 0);
    /* double and int64 */
    double d = 0.5 + r;
    CHECK_OK(exec_comm_allreduce(w, &d, &d, 1, EXEC_DT_F64, EXEC_RED_SUM, NULL, &err), &err);
    CHECK(d == 0.5 * p + p * (p - 1) / 2.0);
    int64_t big = ((int64_t)1 << 40) + r;
    CHECK_OK(exec_comm_allreduce(w, &big, &big, 1, EXEC_DT_I64, EXEC_RED_SUM, NULL, &err), &err);
    CHECK(big == ((int64_t)p << 40) + p * (p - 1) / 2);
    free(a);
    free(b);
}

static void test_scatter_gather(exec_comm *w)
{
    st_err err = {0};
    int n = 257, r = w->rank, p = w->size; /* block per rank, odd on purpose */
    double *full = malloc((size_t)n * p * sizeof *full), *part = malloc(n * sizeof *part);
    for (int i = 0; i < n * p; i++)
        full[i] = (double)i * (r + 1);
    exec_req *req = NULL;
    CHECK_OK(exec_comm_reduce_scatter(w, full, part, n, EXEC_DT_F64, EXEC_RED_SUM, &req, &err),
             &err);
    CHECK_OK(exec_comm_wait(&req, "reduce-scatter", &err), &err);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += part[i] != (double)(r * n + i) * (p * (p + 1) / 2);
    CHECK(bad == 0);
    /* all-gather out of place: block k of the result is rank k's part */
    for (int i = 0; i < n; i++)
        part[i] = 1000.0 * r + i;
    CHECK_OK(exec_comm_allgather(w, part, full, n, EXEC_DT_F64, NULL, &err), &err);
    bad = 0;
    for (int k = 0; k < p; k++)
        for (int i = 0; i < n; i++)
            bad += full[k * n + i] != 1000.0 * k + i;
    CHECK(bad == 0);
    /* in place: each rank's block already sits at its offset */
    memset(full, 0, (size_t)n * p * sizeof *full);
    for (int i = 0; i < n; i++)
        full[r * n + i] = -1.0 * r - i;
    CHECK_OK(exec_comm_allgather(w, full + (size_t)r * n, full, n, EXEC_DT_F64, NULL, &err), &err);
    bad = 0;
    for (int k = 0; k < p; k++)
        for (int i = 0; i < n; i++)
            bad += full[k * n + i] != -1.0 * k - i;
    CHECK(bad == 0);
    free(full);
    free(part);
}

static void test_bcast_barrier(exec_comm *w)
{
    st_err err = {0};
    int32_t v[3] = {w->rank, w->rank, w->rank};
    int root = w->size - 1;
    CHECK_OK(exec_comm_bcast(w, v, 3, EXEC_DT_I32, root, NULL, &err), &err);
    CHECK(v[0] == root && v[2] == root);
    exec_req *req = NULL;
    CHECK_OK(exec_comm_barrier(w, &req, &err), &err);
    CHECK_OK(exec_comm_wait(&req, "barrier", &err), &err);
    CHECK(exec_comm_bcast(w, v, 3, EXEC_DT_I32, w->size, NULL, &err) == ST_EINVAL);
    st_err_clear(&err);
}

/* Groups: split by parity; a sum over the group only sees its members. */
static void test_split(exec_comm *w)
{
    st_err err = {0};
    exec_comm *g = NULL;
    int color = w->rank % 2;
    CHECK_OK(exec_comm_split(w, color, -w->rank, "parity", &g, &err), &err);
    if (!g)
        return;
    int members = (w->size + 1 - color) / 2;
    CHECK(g->size == members);
    CHECK(strcmp(g->label, "parity") == 0);
    CHECK(g->timeout_s == w->timeout_s);
    /* key -rank: ranks in the group ordered from the highest world rank */
    CHECK(g->rank == members - 1 - w->rank / 2);
    int64_t s = w->rank;
    CHECK_OK(exec_comm_allreduce(g, &s, &s, 1, EXEC_DT_I64, EXEC_RED_SUM, NULL, &err), &err);
    int64_t want = 0;
    for (int k = color; k < w->size; k += 2)
        want += k;
    CHECK(s == want);
    exec_comm_free(g);
}

/* Every rank sends 4 MiB to the next and then receives from the previous:
 * with blocking rendezvous sends this ring would deadlock. */
static void test_ring(exec_comm *w)
{
    st_err err = {0};
    size_t n = 1u << 20;
    int r = w->rank, p = w->size, next = (r + 1) % p, prev = (r + p - 1) % p;
    float *out = malloc(n * sizeof *out), *in = malloc(n * sizeof *in);
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(r * 7 + (int)(i % 1000));
    exec_req *sreq = NULL, *rreq = NULL;
    CHECK_OK(exec_comm_isend(w, out, n, EXEC_DT_F32, next, 42, &sreq, &err), &err);
    CHECK_OK(exec_comm_irecv(w, in, n, EXEC_DT_F32, prev, 42, &rreq, &err), &err);
    exec_req *both[2] = {rreq, sreq};
    CHECK_OK(exec_comm_waitall(both, 2, "ring", &err), &err);
    CHECK(both[0] == NULL && both[1] == NULL);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += in[i] != (float)(prev * 7 + (int)(i % 1000));
    CHECK(bad == 0);
    /* test(): drive a receive to completion without blocking */
    exec_req *t = NULL;
    CHECK_OK(exec_comm_isend(w, out, 1, EXEC_DT_F32, next, 7, &sreq, &err), &err);
    CHECK_OK(exec_comm_irecv(w, in, 1, EXEC_DT_F32, prev, 7, &t, &err), &err);
    int done = 0;
    double t0 = exec_now_s();
    while (!done && exec_now_s() - t0 < 10)
        CHECK_OK(exec_comm_test(&t, &done, &err), &err);
    CHECK(done && t == NULL);
    CHECK_OK(exec_comm_wait(&sreq, "send", &err), &err);
    /* refusals: no request, self as peer, bad tag */
    CHECK(exec_comm_isend(w, out, 1, EXEC_DT_F32, next, 1, NULL, &err) == ST_EINVAL);
    st_err_clear(&err);
    CHECK(exec_comm_isend(w, out, 1, EXEC_DT_F32, r, 1, &sreq, &err) == ST_EINVAL);
    st_err_clear(&err);
    CHECK(exec_comm_irecv(w, in, 1, EXEC_DT_F32, prev, EXEC_COMM_TAG_MAX + 1, &rreq, &err) ==
          ST_EINVAL);
    st_err_clear(&err);
    free(out);
    free(in);
}

static void test_refusals(exec_comm *w)
{
    st_err err = {0};
    uint16_t h = 0;
    CHECK(exec_comm_allreduce(w, &h, &h, 1, EXEC_DT_BF16, EXEC_RED_SUM, NULL, &err) ==
          ST_EUNSUPPORTED);
    CHECK(strstr(err.msg, "bf16") != NULL);
    st_err_clear(&err);
    exec_comm *x = NULL;
    CHECK(exec_comm_open("carrier-pigeon", 1, &x, &err) == ST_EUNSUPPORTED);
    CHECK(strstr(err.msg, "mpi") != NULL);
    st_err_clear(&err);
    CHECK(exec_comm_check_device(w, 1, "cpu", &err) == ST_OK);
    CHECK(exec_comm_check_device(w, 0, "cuda", &err) == ST_EUNSUPPORTED);
    st_err_clear(&err);
}

/* A receive nobody sends to times out with the limit in the message; then
 * the peer sends the message so the lost receive completes. */
static void test_timeout(exec_comm *w)
{
    st_err err = {0};
    exec_comm *g = NULL;
    CHECK_OK(exec_comm_split(w, 0, w->rank, "pp", &g, &err), &err);
    if (!g)
        return;
    g->timeout_s = 0.3;
    float v = 1;
    if (g->rank == 0) {
        exec_req *req = NULL;
        CHECK_OK(exec_comm_irecv(g, &v, 1, EXEC_DT_F32, 1, 99, &req, &err), &err);
        double t0 = exec_now_s();
        int rc = exec_comm_wait(&req, "the activation of microbatch 3", &err);
        double dt = exec_now_s() - t0;
        CHECK(rc == ST_EIO);
        CHECK(req == NULL);
        /* it ends (no hang); how long after the limit is up to the scheduler of a
         * loaded, oversubscribed host, so only an order of magnitude is checked */
        CHECK(dt >= 0.3 && dt < 30.0);
        CHECK(strstr(err.msg, "timeout after 0.3 s waiting for the activation of microbatch 3 "
                              "on the pp group") != NULL);
        if (rc == ST_EIO)
            fprintf(stderr, "rank 0: expected: %s\n", err.msg);
    }
    CHECK_OK(exec_comm_barrier(w, NULL, &err), &err);
    if (g->rank == 1) {
        exec_req *req = NULL;
        CHECK_OK(exec_comm_isend(g, &v, 1, EXEC_DT_F32, 0, 99, &req, &err), &err);
        CHECK_OK(exec_comm_wait(&req, "late send", &err), &err);
    }
    CHECK_OK(exec_comm_barrier(w, NULL, &err), &err);
    exec_comm_free(g);
}

int main(int argc, char **argv)
{
    st_err err = {0};
    exec_comm *w = NULL;
    if (exec_comm_open("mpi", 30, &w, &err) != ST_OK) {
        fprintf(stderr, "test_exec_comm: %s\n", err.msg);
        return 1;
    }
    mpi_check_rank = w->rank;
    if (argc > 1 && strcmp(argv[1], "--abort") == 0) {
        if (w->rank == w->size - 1) {
            fprintf(stderr, "rank %d: aborting on purpose\n", w->rank);
            exec_comm_abort(w, 3);
        }
        exec_comm_barrier(w, NULL, &err); /* never completes: the abort ends it */
        fprintf(stderr, "rank %d: barrier returned: %s\n", w->rank, err.msg);
        return 0;
    }
    if (w->size < 2) {
        fprintf(stderr, "test_exec_comm: run with mpiexec -n 2 or more\n");
        return 1;
    }
    test_allreduce(w);
    test_scatter_gather(w);
    test_bcast_barrier(w);
    test_split(w);
    test_ring(w);
    test_refusals(w);
    test_timeout(w);
    int failed = mpi_check_done(w);
    if (w->rank == 0)
        printf("test_exec_comm: %d ranks: %s\n", w->size, failed ? "FAILED" : "ok");
    exec_comm_free(w);
    return failed;
}
