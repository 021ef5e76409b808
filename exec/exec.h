/*
 * exec.h: the executor's public interface.
 *
 * For now: which backends this build has (CUDA, NCCL, MPI), for --version and
 * for the provenance of every record. The executor that runs a plan on real
 * ranks builds here; only this folder touches CUDA, NCCL and MPI.
 */
#ifndef SMD_EXEC_H
#define SMD_EXEC_H

typedef struct exec_features {
    int cuda;                    /* CUDA backend built */
    int nccl;                    /* NCCL transport built */
    int mpi;                     /* MPI transport built */
} exec_features;

/* Backends compiled into this build. */
exec_features exec_features_built(void);

/* "CUDA NCCL MPI" style summary with "+"/"-" per feature, e.g.
 * "+cuda +nccl +mpi". Returns a static string. */
const char *exec_features_str(void);

#endif
