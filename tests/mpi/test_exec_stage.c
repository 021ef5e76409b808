/*
 * test_exec_stage.c: the host staging of exec_comm_stage.c on 2 or 4 ranks.
 *
 * A staged group takes a device's buffers and runs every operation on the
 * MPI group it wraps, copying through host memory with the device's
 * download and upload. Here the device is the CPU one, whose copies are
 * memcpy, so the staging's own logic (where each result lands, the
 * completion that uploads it, bf16 reduced in f32 on the host and narrowed
 * to nearest even, bf16 moved as bytes) runs in CI without a GPU. The
 * results are checked against values each rank computes alone; bf16 values
 * are small whole numbers, exact in bf16, and one sum is chosen to need
 * rounding (257 is not a bf16: it rounds to 256).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_int.h"
#include "mpi_check.h"

static uint16_t bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16); /* exact for the whole numbers used here */
}

static float fl(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_staged(exec_comm *w, exec_dev *dev)
{
    st_err err = {0};
    exec_comm *g = NULL;
    CHECK_OK(exec_comm_split(w, 0, w->rank, "staged", &g, &err), &err);
    if (!g)
        return;
    CHECK_OK(exec__comm_stage_wrap(&g, dev, &err), &err);
    CHECK(g->ops->device_buffers == 1 && g->size == w->size && g->rank == w->rank);
    int n = 1000, r = g->rank, p = g->size, bad = 0;
    /* f32 all-reduce, out of place and non-blocking */
    float *a = malloc((size_t)n * p * sizeof *a), *b = malloc((size_t)n * p * sizeof *b);
    for (int i = 0; i < n; i++)
        a[i] = (float)(r + 1) * (float)(i % 50);
    exec_req *req = NULL;
    CHECK_OK(exec_comm_allreduce(g, a, b, n, EXEC_DT_F32, EXEC_RED_SUM, &req, &err), &err);
    CHECK_OK(exec_comm_wait(&req, "staged all-reduce", &err), &err);
    for (int i = 0; i < n; i++)
        bad += b[i] != (float)(i % 50) * (float)(p * (p + 1) / 2);
    CHECK(bad == 0);
    /* bf16 all-reduce in place: summed in f32 on the host, rounded once */
    uint16_t *h = malloc((size_t)n * p * sizeof *h), *h2 = malloc((size_t)n * p * sizeof *h2);
    for (int i = 0; i < n; i++)
        h[i] = bf(i == 0 ? (r == 0 ? 255.0f : 2.0f / (float)(p - 1)) : (float)(r + (i % 7)));
    CHECK_OK(exec_comm_allreduce(g, h, h, n, EXEC_DT_BF16, EXEC_RED_SUM, NULL, &err), &err);
    bad = 0;
    for (int i = 1; i < n; i++)
        bad += fl(h[i]) != (float)(p * (p - 1) / 2 + p * (i % 7));
    CHECK(bad == 0);
    /* 255 + 2 = 257 is between the bf16 neighbours 256 and 258: nearest even is 256 */
    CHECK(p != 2 || fl(h[0]) == 256.0f);
    /* bf16 reduce-scatter: block r of the sum */
    for (int i = 0; i < n * p; i++)
        h[i] = bf((float)((i % 11) + r));
    CHECK_OK(exec_comm_reduce_scatter(g, h, h2, n, EXEC_DT_BF16, EXEC_RED_SUM, NULL, &err), &err);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += fl(h2[i]) != (float)(p * ((r * n + i) % 11) + p * (p - 1) / 2);
    CHECK(bad == 0);
    /* bf16 all-gather, in place (each rank's block at its offset) */
    memset(h, 0, (size_t)n * p * sizeof *h);
    for (int i = 0; i < n; i++)
        h[r * n + i] = bf((float)(10 * r + (i % 13)));
    CHECK_OK(exec_comm_allgather(g, h + r * n, h, n, EXEC_DT_BF16, NULL, &err), &err);
    bad = 0;
    for (int k = 0; k < p; k++)
        for (int i = 0; i < n; i++)
            bad += fl(h[k * n + i]) != (float)(10 * k + (i % 13));
    CHECK(bad == 0);
    /* f32 all-gather out of place */
    for (int i = 0; i < n; i++)
        a[i] = (float)(7 * r + i);
    CHECK_OK(exec_comm_allgather(g, a, b, n, EXEC_DT_F32, NULL, &err), &err);
    bad = 0;
    for (int k = 0; k < p; k++)
        for (int i = 0; i < n; i++)
            bad += b[k * n + i] != (float)(7 * k + i);
    CHECK(bad == 0);
    /* broadcast from the last rank */
    for (int i = 0; i < n; i++)
        h[i] = bf(r == p - 1 ? (float)(i % 17) : -1.0f);
    CHECK_OK(exec_comm_bcast(g, h, n, EXEC_DT_BF16, p - 1, NULL, &err), &err);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += fl(h[i]) != (float)(i % 17);
    CHECK(bad == 0);
    /* a ring of sends posted before the receives, bf16 */
    exec_req *rq[2] = {NULL, NULL};
    for (int i = 0; i < n; i++)
        h[i] = bf((float)(r * 3 + (i % 5)));
    CHECK_OK(exec_comm_isend(g, h, n, EXEC_DT_BF16, (r + 1) % p, 5, &rq[0], &err), &err);
    CHECK_OK(exec_comm_irecv(g, h2, n, EXEC_DT_BF16, (r + p - 1) % p, 5, &rq[1], &err), &err);
    CHECK_OK(exec_comm_waitall(rq, 2, "staged ring", &err), &err);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += fl(h2[i]) != (float)(((r + p - 1) % p) * 3 + (i % 5));
    CHECK(bad == 0);
    CHECK_OK(exec_comm_barrier(g, NULL, &err), &err);
    free(a), free(b), free(h), free(h2);
    exec_comm_free(g);
}

int main(void)
{
    st_err err = {0};
    exec_comm *w = NULL;
    exec_dev *dev = NULL;
    if (exec_comm_open("mpi", 30, &w, &err) != ST_OK || exec_dev_open("cpu", 1, &dev, &err)) {
        fprintf(stderr, "test_exec_stage: %s\n", err.msg);
        return 1;
    }
    mpi_check_rank = w->rank;
    test_staged(w, dev);
    int failed = mpi_check_done(w);
    if (w->rank == 0)
        printf("test_exec_stage: %d ranks: %s\n", w->size, failed ? "FAILED" : "ok");
    exec_dev_close(dev);
    exec_comm_free(w);
    return failed;
}
