/*
 * exec_int.h: internals shared by exec/'s files (not for other folders).
 */
#ifndef SMD_EXEC_INT_H
#define SMD_EXEC_INT_H

#include <stddef.h>

#include "common/st.h"
#include "exec/exec_comm.h"

/* The transport tables built (exec_features.c lists them). */
extern const exec_comm_ops exec_comm_self_ops;
extern const exec_comm_ops exec_comm_mpi_ops;

/* ---- exec_io.c: files ---- */

/* Write len bytes to path atomically: a temp file in the same directory,
 * fsync, rename over path, fsync of the directory. A failure leaves path as
 * it was and removes the temp file. */
int exec__write_atomic(const char *path, const void *data, size_t len, st_err *err);
/* Read a whole file (malloc'd, NUL-terminated; *len may be NULL). */
int exec__read_file(const char *path, char **out, size_t *len, st_err *err);

#endif
