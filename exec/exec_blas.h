/*
 * exec_blas.h: OpenBLAS, opened the first time a CPU device or the CPU
 * bench needs it. Internal to exec/.
 *
 * OpenBLAS starts a thread per core when its library is loaded (its
 * constructor, gotoblas_init, starts the pool), so a program linking it
 * pays that at start whether or not it ever multiplies a matrix: smdplan
 * plans without it. Its functions are taken from its own handle, never
 * by name from the global scope, where GSL's reference CBLAS (libgslcblas,
 * which libgsl needs) would answer cblas_sgemm 35 times slower.
 *
 * The library is the one the build found (SMD_OPENBLAS_DIR, as the
 * programs' run path had it), else libopenblas.so.0 wherever the dynamic
 * loader finds it.
 */
#ifndef SMD_EXEC_BLAS_H
#define SMD_EXEC_BLAS_H

#include <cblas.h>

#include "common/st.h"

typedef struct exec_blas {
    void (*sgemm)(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                  blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                  const float *b, blasint ldb, float beta, float *c, blasint ldc);
    void (*dgemm)(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                  blasint m, blasint n, blasint k, double alpha, const double *a, blasint lda,
                  const double *b, blasint ldb, double beta, double *c, blasint ldc);
    void (*set_num_threads)(int threads);
    char *(*get_config)(void);       /* e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    char *(*get_corename)(void);     /* the kernel set chosen, e.g. "Haswell" */
} exec_blas;

/* OpenBLAS's functions; the library is opened on the first call (any
 * thread) and stays open. ST_ENOENT with the dynamic loader's message when
 * it cannot be opened or lacks one of them. */
int exec_blas_open(const exec_blas **out, st_err *err);

#endif
