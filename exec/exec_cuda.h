/*
 * exec_cuda.h: the GPUs of this host (exec_devinfo_cuda.c), what the CUDA
 * device (exec_dev_cuda.c), the NCCL transport (exec_comm_nccl.c) and the
 * module smdplan-cuda-info.so share. Internal to exec/, built only with
 * CUDA.
 */
#ifndef SMD_EXEC_CUDA_H
#define SMD_EXEC_CUDA_H

#include "common/st.h"

/* Make the GPU of this rank current (cudaSetDevice) and give its ordinal:
 * the rank's index on its node (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK,
 * MPICH's MPI_LOCALRANKID, Slurm's SLURM_LOCALID; 0 without a launcher)
 * modulo the GPUs visible, so one rank per GPU when there are as many GPUs
 * as ranks on a node, and ranks sharing GPUs otherwise. The device and the
 * transport both call it, so they pick the same GPU. ST_EUNSUPPORTED with
 * CUDA's own message when there is no usable GPU. */
int exec__cuda_select(int *ordinal, st_err *err);

/* GPUs CUDA sees; 0 on any error. */
int exec__cuda_count(void);
/* The memory of the smallest GPU CUDA sees, bytes, from its description;
 * 0 on any error or none. */
double exec__cuda_memory_bytes(void);

#endif
