/*
 * mpi_check.h: checks for the multi-rank tests. Each rank counts its own
 * failures (printing each with its rank); mpi_check_done() sums them over
 * the world so every rank exits with the same verdict.
 */
#ifndef SMD_MPI_CHECK_H
#define SMD_MPI_CHECK_H

#include <math.h>
#include <stdio.h>

#include "exec/exec_comm.h"

static int mpi_check_failures;
static int mpi_check_rank;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", mpi_check_rank, __FILE__,   \
                    __LINE__, #cond);                                                          \
            mpi_check_failures++;                                                              \
        }                                                                                      \
    } while (0)

#define CHECK_OK(expr, err)                                                                    \
    do {                                                                                       \
        int rc_ = (expr);                                                                      \
        if (rc_ != ST_OK) {                                                                    \
            fprintf(stderr, "rank %d: %s:%d: %s: %s\n", mpi_check_rank, __FILE__, __LINE__,    \
                    #expr, (err)->msg);                                                        \
            mpi_check_failures++;                                                              \
            st_err_clear(err);                                                                 \
        }                                                                                      \
    } while (0)

/* Sum of failures over the world (collective); 0 when every rank passed. */
static inline int mpi_check_done(exec_comm *world)
{
    st_err err = {0};
    long long n = mpi_check_failures;
    if (exec_comm_allreduce(world, &n, &n, 1, EXEC_DT_I64, EXEC_RED_SUM, NULL, &err) != ST_OK) {
        fprintf(stderr, "rank %d: summing failures: %s\n", mpi_check_rank, err.msg);
        return 1;
    }
    return n != 0;
}

#endif
