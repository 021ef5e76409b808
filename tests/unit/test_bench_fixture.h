/*
 * test_bench_fixture.h: a host's bench measurements that follow the
 * planner's models exactly, for the tests of what smdplan bench makes of
 * them (entries, JSON, text, records).
 *
 * The CPU: 8 cores whose sgemm follows the GEMM model (asymptote 2e11
 * FLOP/s, gemm_dim_half 24) at 1 and 2 threads over 15 shapes each, the
 * triad 1e10 B/s at 1 thread and 4e10 with every core busy. The transport:
 * 4 ranks whose all-reduce and send/recv take t = a + f S / B exactly
 * (nccl-tests' bus factor f = 2(n-1)/n for all-reduce, 1 for send/recv),
 * from 8 B to 64 MiB. Together they are host box7's bench as smdplan bench
 * hands it to data/data_host_entry.c.
 */
#ifndef SMD_TEST_BENCH_FIXTURE_H
#define SMD_TEST_BENCH_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/data_host_entry.h"
#include "planner/plan_bench.h"
#include "planner/plan_hwfit.h"
#include "test_util.h"

#define BF_ASYMPTOTE_FLOPS 2.0e11
#define BF_DIM_HALF 24.0
#define BF_CORES 8
#define BF_MEM_BYTES (64.0 * 1073741824.0)
#define BF_TRIAD_ONE_BPS 1.0e10
#define BF_TRIAD_FULL_BPS 4.0e10
#define BF_AR_LAT_S 5e-6
#define BF_AR_BUS_BPS 2e9
#define BF_P2P_LAT_S 3e-6
#define BF_P2P_BPS 4e9
#define BF_RANKS 4
#define BF_HOST "box7.example.com"

static inline void bench_fixture_cpu(plan_bench_cpu *b)
{
    memset(b, 0, sizeof *b);
    snprintf(b->host, sizeof b->host, BF_HOST);
    snprintf(b->cpu_model, sizeof b->cpu_model, "Test CPU 9000");
    snprintf(b->blas, sizeof b->blas, "OpenBLAS test");
    snprintf(b->device, sizeof b->device, "cpu");
    b->cores = BF_CORES;
    b->mem_bytes = BF_MEM_BYTES;
    b->nthreads = 2;
    b->threads[0] = 1;
    b->threads[1] = 2;
    b->load_start = b->load_end = -1;
    plan_gemm_fit truth = {.asymptote_flops = BF_ASYMPTOTE_FLOPS, .dim_half = BF_DIM_HALF};
    static const double sides[] = {64, 128, 256, 768, 2048};
    for (int t = 1; t <= 2; t++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j += 2) {
                plan_bench_gemm *g = &b->gemm[b->ngemm++];
                snprintf(g->kind, sizeof g->kind, "sgemm");
                g->threads = t;
                g->m = (int64_t)sides[i];
                g->k = (int64_t)sides[j];
                g->n = (int64_t)(3 * sides[(i + j) % 5]);
                g->reps = 3;
                g->flops = plan_gemm_fit_rate(&truth, (double)g->m, (double)g->n, (double)g->k);
                g->time_s = 2.0 * (double)g->m * (double)g->n * (double)g->k / g->flops;
            }
    b->mem[0] = (plan_bench_mem){.threads = 1, .array_bytes = 67108864, .reps = 5,
                                 .triad_bps = BF_TRIAD_ONE_BPS};
    b->mem[1] = (plan_bench_mem){.threads = BF_CORES, .array_bytes = 67108864, .reps = 5,
                                 .triad_bps = BF_TRIAD_FULL_BPS};
    b->nmem = 2;
}

/* The transport (with p2p: send/recv rows too). */
static inline void bench_fixture_comm(plan_bench_comm *c, int p2p)
{
    memset(c, 0, sizeof *c);
    snprintf(c->transport, sizeof c->transport, "mpi");
    snprintf(c->host, sizeof c->host, BF_HOST);
    c->ranks = BF_RANKS;
    c->threads_per_rank = 2;
    for (int op = 0; op < 1 + p2p; op++)
        for (int e = 3; e <= 26; e++) {
            plan_bench_coll *v = &c->v[c->n++];
            snprintf(v->op, sizeof v->op, "%s", op ? "sendrecv" : "allreduce");
            double f = plan_bench_busbw_factor(v->op, BF_RANKS);
            v->ranks = BF_RANKS;
            v->bytes = ldexp(1.0, e);
            v->iters = 20;
            v->time_s = op ? BF_P2P_LAT_S + v->bytes / BF_P2P_BPS
                           : BF_AR_LAT_S + f * v->bytes / BF_AR_BUS_BPS;
            v->algbw_bps = v->bytes / v->time_s;
            v->busbw_bps = f * v->algbw_bps;
        }
}

/* Host box7's bench: the CPU and the transport (with send/recv: p2p),
 * made again at each call in this function's own storage. */
static inline data_host_bench bench_fixture_host(int p2p)
{
    static plan_bench_cpu cpu;
    static plan_bench_comm comm;
    bench_fixture_cpu(&cpu);
    bench_fixture_comm(&comm, p2p);
    return (data_host_bench){&cpu, &comm, "box7", NULL};
}

/* The CPU entries of b at the n thread counts per rank threads, which the
 * test expects to be made (data_host_entries_free). */
static inline data_host_entries *bench_fixture_entries(const data_host_bench *b,
                                                       const int *threads, int n)
{
    data_host_entries *es = NULL;
    st_err err = {0};
    assert_int_equal(data_host_cpu_entries(b, threads, n, &es, &err), ST_OK);
    return es;
}

#endif
