/*
 * exec_blas.c: opening OpenBLAS on demand (exec_blas.h).
 */
#include "exec/exec_blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "smd_config.h"

#define OPENBLAS_SONAME "libopenblas.so.0"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static exec_blas blas;
static int blas_rc = ST_OK;
static char blas_msg[ST_MSG_MAX];

/* The address of symbol name in h into *fn (a function pointer of any
 * type); 0 when h lacks it. POSIX guarantees dlsym's result converts. */
static int take(void *h, const char *name, void *fn)
{
    void *p = dlsym(h, name);
    if (!p)
        return 0;
    *(void **)fn = p;
    return 1;
}

/* By its soname first, as the dynamic linker finds it (the copy a program
 * that names OpenBLAS in its ELF already loaded, LD_LIBRARY_PATH's, the
 * system's), then in the directory the build found it in. The other order
 * loaded a second, different OpenBLAS into a rank program on a host that
 * had one at the build's path while the program's own came from elsewhere:
 * two copies in one process, and a crash in the first product. */
static void open_once(void)
{
    void *h = dlopen(OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h && SMD_OPENBLAS_DIR[0]) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", SMD_OPENBLAS_DIR, OPENBLAS_SONAME);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
        const char *why = dlerror();
        blas_rc = ST_ENOENT;
        snprintf(blas_msg, sizeof blas_msg, "OpenBLAS cannot be loaded: %s",
                 why ? why : OPENBLAS_SONAME " not found");
        return;
    }
    if (!take(h, "cblas_sgemm", &blas.sgemm) || !take(h, "cblas_dgemm", &blas.dgemm) ||
        !take(h, "openblas_set_num_threads", &blas.set_num_threads) ||
        !take(h, "openblas_get_config", &blas.get_config) ||
        !take(h, "openblas_get_corename", &blas.get_corename)) {
        const char *why = dlerror();
        blas_rc = ST_ENOENT;
        snprintf(blas_msg, sizeof blas_msg, "OpenBLAS (%s) lacks a function: %s",
                 OPENBLAS_SONAME, why ? why : "?");
    }
}

int exec_blas_open(const exec_blas **out, st_err *err)
{
    pthread_once(&once, open_once);
    *out = blas_rc == ST_OK ? &blas : NULL;
    return blas_rc == ST_OK ? ST_OK : ST_RAISE(err, blas_rc, "%s", blas_msg);
}
