/*
 * exec_devinfo_cuda.c: the GPUs of this host as CUDA's runtime sees them:
 * how many, the smallest one's memory, and which one a rank uses.
 *
 * The count and the memory are asked without making a context:
 * cudaGetDeviceProperties reads the device's description, where
 * cudaMemGetInfo would create a context (and take memory) on every GPU it
 * asked. They are the module smdplan-cuda-info.so (exec_module.h), which
 * needs cudart alone, so smdplan --version and smdplan exec's checks count
 * GPUs without loading cuBLASLt; the cuda device (exec_dev_cuda.c) and the
 * NCCL transport hold this file too, for exec__cuda_select.
 */
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "exec/exec_cuda.h"
#include "exec/exec_module.h"

int exec__cuda_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

double exec__cuda_memory_bytes(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    double least = 0;
    for (int i = 0; i < count; i++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        double b = (double)prop.totalGlobalMem;
        if (i == 0 || b < least)
            least = b;
    }
    return least;
}

int exec__cuda_select(int *ordinal, st_err *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1)
        return ST_RAISE(err, ST_EUNSUPPORTED, "no CUDA device: %s",
                        e != cudaSuccess ? cudaGetErrorString(e) : "none visible");
    const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", NULL};
    int local = 0;
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            local = atoi(v);
            break;
        }
    }
    *ordinal = (local < 0 ? 0 : local) % count;
    e = cudaSetDevice(*ordinal);
    if (e != cudaSuccess)
        return ST_RAISE(err, ST_EUNSUPPORTED, "cudaSetDevice(%d): %s", *ordinal,
                        cudaGetErrorString(e));
    return ST_OK;
}

/* The module smdplan-cuda-info.so (exec_module.h). */
const exec_module exec_module_cuda_info = {
    .abi = EXEC_MODULE_ABI,
    .build = EXEC_MODULE_BUILD,
    .device_count = exec__cuda_count,
    .device_memory_bytes = exec__cuda_memory_bytes,
};
