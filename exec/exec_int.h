/*
 * exec_int.h: internals shared by exec/'s files (not for other folders).
 */
#ifndef SMD_EXEC_INT_H
#define SMD_EXEC_INT_H

#include <stddef.h>

#include "common/st.h"
#include "exec/exec_comm.h"
#include "planner/plan.h"

/* The transport tables (exec_features.c lists them): "self" in libexec;
 * MPI's in the modules smdplan-mpi.so and smdplan-nccl.so (NCCL's is
 * bootstrapped over it), NCCL's in smdplan-nccl.so (exec_module.h). */
extern const exec_comm_ops exec_comm_self_ops;
extern const exec_comm_ops exec_comm_mpi_ops;
extern const exec_comm_ops exec_comm_nccl_ops;

/* ---- exec_comm_stage.c ---- */

struct exec_dev;
/* Replace *group (a group of a host transport: buffers in host memory) by
 * a staged group of the same ranks that takes buffers of dev, a device
 * whose buffers are not host memory: each operation copies its device
 * buffers to host memory, runs on the host group and copies the result
 * back (bf16 reduced as f32 on the host: MPI has no bf16). The staged
 * group owns the host group (freeing it frees both). */
int exec__comm_stage_wrap(exec_comm **group, struct exec_dev *dev, st_err *err);

/* ---- exec_config.c ---- */

/* What the executor's tables (exec_model_tables) need of a layout for a
 * model: tp, pp and virtual_stages at least 1 (pp at most PLAN_PP_MAX); tp
 * divides the heads, kv heads, ffn and vocab (and seq with sequence
 * parallelism); pp x virtual_stages chunks at most the layers; an even head
 * dimension for rotary positions. ST_EINVAL with one line. */
int exec__layout_check(const plan_model *m, const plan_layout *l, st_err *err);

/* ---- exec_io.c: files ---- */

/* Write len bytes to path atomically: a temp file in the same directory,
 * fsync, rename over path, fsync of the directory. A failure leaves path as
 * it was and removes the temp file. */
int exec__write_atomic(const char *path, const void *data, size_t len, st_err *err);
/* Read a whole file (malloc'd, NUL-terminated; *len may be NULL). */
int exec__read_file(const char *path, char **out, size_t *len, st_err *err);

#endif
