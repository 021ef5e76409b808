/*
 * exec_cuda.h: what the CUDA device (exec_dev_cuda.c) shares with the NCCL
 * transport (exec_comm_nccl.c). Internal to exec/, built only with CUDA.
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

#endif
