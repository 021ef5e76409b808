/*
 * exec_module.h: the backends opened on demand. Internal to exec/.
 *
 * The backends that need CUDA, cuBLASLt, NCCL or MPI are not linked into
 * any program: each is a shared module built beside the programs
 * (smdplan-cuda.so: the cuda device; smdplan-cuda-info.so: how many GPUs
 * CUDA sees and their memory, with cudart alone; smdplan-mpi.so: the MPI
 * transport; smdplan-nccl.so: the NCCL transport with the MPI transport it
 * bootstraps over), and the registry (exec_features.c) opens one with
 * dlopen the first time its device or transport is asked for. So smdplan
 * plans without loading any of those libraries (they cost a plan ~80 ms
 * and ~200 MB of start-up), a build with CUDA starts on a machine without
 * them, and a rank program that runs on the CPU loads only MPI.
 *
 * A module exports one symbol, its descriptor exec_module_<name> (defined
 * in the file of the backend; the module's link script makes everything
 * else local, the copies of libexec's and common/'s helpers it holds
 * included), holding its operation table. It is accepted only when it was
 * built by the same smdplan build (abi and build below), so a module left
 * from another build is refused by name rather than called with another
 * layout of the tables.
 *
 * Where modules are looked for, first found: $SMDPLAN_MODULES alone when
 * it is set; else the directory of the running program, ../lib/smdplan
 * from there (an install moved or made with cmake --install --prefix),
 * the build directory (SMD_MODULE_DIR_BUILD, when it exists), the install
 * directory (SMD_MODULE_DIR_INSTALL: PREFIX/lib/smdplan).
 */
#ifndef SMD_EXEC_MODULE_H
#define SMD_EXEC_MODULE_H

#include "common/st.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "smd_config.h"

/* Bumped whenever exec_module, exec_dev_ops, exec_comm_ops or the objects
 * they work on change layout. */
#define EXEC_MODULE_ABI 2
/* A program's and its modules' build: the version and the build
 * directory's id (smd_config.h), the same for every target of one build
 * directory however partly it is rebuilt (the commit, which a partial
 * rebuild moves in some targets only, is not part of it). */
#define EXEC_MODULE_BUILD SMD_VERSION " (build " SMD_BUILD_ID ")"

typedef struct exec_module {
    int abi;                         /* EXEC_MODULE_ABI of the module's build */
    /* The build it is from (EXEC_MODULE_BUILD); a module of another build
     * is refused. */
    const char *build;
    const exec_dev_ops *dev;         /* the device it holds, or NULL */
    const exec_comm_ops *comm;       /* the transport it holds, or NULL */
    /* Devices of its kind on this host and the smallest one's memory in
     * bytes, asked without making a context; 0 when none or on any error.
     * NULL when the module does not tell. */
    int (*device_count)(void);
    double (*device_memory_bytes)(void);
} exec_module;

/* Open the module called name and return its descriptor: "cuda" is the
 * file smdplan-cuda.so exporting exec_module_cuda, "cuda-info" the file
 * smdplan-cuda-info.so exporting exec_module_cuda_info. A module opened
 * once stays open for the life of the process. ST_ENOENT with one line
 * naming the file and where it was looked for, or what the dynamic loader
 * said (a library it needs is missing), or that it is from another build. */
int exec__module_open(const char *name, const exec_module **out, st_err *err);

/* Whether the file of module name is found, without loading it: ST_OK, or
 * ST_ENOENT with exec__module_open's line naming it and where it was
 * looked for. */
int exec__module_find(const char *name, st_err *err);

#endif
