/*
 * exec_devinfo_cuda.c: what the GPUs of this host hold, asked of CUDA from
 * the launching process (smdplan exec's memory check) without making a
 * context: cudaGetDeviceProperties reads the device's description, where
 * cudaMemGetInfo would create a context (and take memory) on every GPU it
 * asked. Built with CUDA only (exec_features.c calls it).
 */
#include <cuda_runtime.h>

#include "exec/exec_dev_int.h"

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
