/*
 * exec_features.c: the one registry of build features. The HAVE_* tests live
 * here and nowhere else (CMake generates them into smd_config.h).
 */
#include "exec/exec.h"

#include "smd_config.h"

#if HAVE_CUDA
#define F_CUDA "+cuda"
#else
#define F_CUDA "-cuda"
#endif
#if HAVE_NCCL
#define F_NCCL "+nccl"
#else
#define F_NCCL "-nccl"
#endif
#if HAVE_MPI
#define F_MPI "+mpi"
#else
#define F_MPI "-mpi"
#endif

exec_features exec_features_built(void)
{
    exec_features f = {.cuda = HAVE_CUDA, .nccl = HAVE_NCCL, .mpi = HAVE_MPI};
    return f;
}

const char *exec_features_str(void)
{
    return F_CUDA " " F_NCCL " " F_MPI;
}
