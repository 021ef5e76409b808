/*
 * exec_tp.c: the tensor-parallel collectives of a layer, timed into the
 * step's tp_s: the all-reduce of a row-parallel linear's partial output
 * and of a column-parallel linear's input gradient (Shoeybi et al. 2019,
 * Megatron-LM, Sec. 3), and with sequence parallelism the reduce-scatter
 * and all-gather pair that replaces each (Korthikanti et al. 2022, Sec.
 * 4.2.2), over the rank's TP communicator.
 */
#include "exec/exec_model.h"

static double elapsed(double t0)
{
    return exec_now_s() - t0;
}

int exec_tp_allreduce(exec_model *x, void *buf, int64_t n, exec_dtype t, exec_redop op,
                      st_err *err)
{
    if (x->tp->size == 1)
        return ST_OK;
    double t0 = exec_now_s();
    int rc = exec_comm_allreduce(x->tp, buf, buf, (size_t)n, t, op, NULL, err);
    x->timers->tp_s += elapsed(t0);
    return rc;
}

int exec_tp_reduce_scatter(exec_model *x, const void *send, void *recv, int64_t recv_n,
                           st_err *err)
{
    double t0 = exec_now_s();
    int rc = exec_comm_reduce_scatter(x->tp, send, recv, (size_t)recv_n, x->dev->ops->dtype,
                                      EXEC_RED_SUM, NULL, err);
    x->timers->tp_s += elapsed(t0);
    return rc;
}

int exec_tp_allgather(exec_model *x, const void *send, void *recv, int64_t send_n, st_err *err)
{
    double t0 = exec_now_s();
    int rc = exec_comm_allgather(x->tp, send, recv, (size_t)send_n, x->dev->ops->dtype, NULL, err);
    x->timers->tp_s += elapsed(t0);
    return rc;
}
