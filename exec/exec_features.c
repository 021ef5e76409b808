/*
 * exec_features.c: the one registry of build features. The HAVE_* tests live
 * here and nowhere else (CMake generates them into smd_config.h).
 */
#include "exec/exec.h"

#include <stddef.h>
#include <string.h>

#include "exec/exec_dev_int.h"
#include "exec/exec_int.h"
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

/* The transports of this build, the first the default for one rank. */
static const exec_comm_ops *const transports[] = {
#if HAVE_MPI
    &exec_comm_mpi_ops,
#endif
    &exec_comm_self_ops,
#if HAVE_NCCL && HAVE_MPI
    &exec_comm_nccl_ops,
#endif
};

#define NTRANSPORTS (sizeof transports / sizeof transports[0])

const exec_comm_ops *exec_comm_find(const char *name)
{
    for (size_t i = 0; name && i < NTRANSPORTS; i++)
        if (strcmp(transports[i]->name, name) == 0)
            return transports[i];
    return NULL;
}

const char *exec_comm_names(void)
{
#if HAVE_NCCL && HAVE_MPI
    return "mpi self nccl";
#elif HAVE_MPI
    return "mpi self";
#else
    return "self";
#endif
}

/* The devices of this build, by name. */
static const exec_dev_ops *const devices[] = {
    &exec_dev_cpu_ops,
    &exec_dev_cpu64_ops,
    &exec_dev_cpu_bf16_ops,
#if HAVE_CUDA
    &exec_dev_cuda_ops,
#endif
};

#define NDEVICES (sizeof devices / sizeof devices[0])

const exec_dev_ops *exec_dev_find(const char *name)
{
    for (size_t i = 0; name && i < NDEVICES; i++)
        if (strcmp(devices[i]->name, name) == 0)
            return devices[i];
    return NULL;
}

int exec_device_count(const char *name)
{
    if (!exec_dev_find(name))
        return 0;
#if HAVE_CUDA
    if (strcmp(name, "cuda") == 0)
        return exec__cuda_count();
#endif
    return 1;
}

double exec_device_memory_bytes(const char *name)
{
    if (!exec_dev_find(name))
        return 0;
#if HAVE_CUDA
    if (strcmp(name, "cuda") == 0)
        return exec__cuda_memory_bytes();
#endif
    return 0;
}

const char *exec_dev_names(void)
{
    static char names[64];
    if (!names[0])
        for (size_t i = 0; i < NDEVICES; i++) {
            if (i)
                strcat(names, " ");
            strcat(names, devices[i]->name);
        }
    return names;
}
