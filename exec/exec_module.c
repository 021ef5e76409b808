/*
 * exec_module.c: finding and opening the backend modules (exec_module.h).
 *
 * The first file of the module's name found in the directories of
 * exec_module.h decides: it is opened, or its failure is the answer (a
 * module left behind by another build is refused, never skipped for one
 * further down the list). Modules are opened RTLD_NOW, so a missing library
 * is reported when the module is asked for, not at its first call, and
 * RTLD_GLOBAL, as MPI libraries ask of a library that loads them (Open
 * MPI's components resolve MPI's symbols from the global scope where they
 * are built without linking it; mpi4py opens MPI so for the same reason).
 * A module stays open for the life of the process: its tables are in use.
 */
#include "exec/exec_module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smd_config.h"

#define MODULE_PATH_MAX 4096
#define MODULE_DIRS 4
#define MODULE_CACHE 8

typedef struct opened {
    char name[32];
    const exec_module *m;
} opened;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static opened cache[MODULE_CACHE];
static int ncache;

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The directories to look in, in order; returns how many. */
static int module_dirs(char dirs[MODULE_DIRS][MODULE_PATH_MAX])
{
    const char *env = getenv("SMDPLAN_MODULES");
    if (env && *env) {
        snprintf(dirs[0], MODULE_PATH_MAX, "%s", env);
        return 1;
    }
    int n = 0;
    ssize_t k = readlink("/proc/self/exe", dirs[n], MODULE_PATH_MAX - 1);
    if (k > 0) {
        dirs[n][k] = '\0';
        char *slash = strrchr(dirs[n], '/');
        if (slash) {
            *slash = '\0';
            n++;
            /* PREFIX/bin/smdplan's PREFIX/lib/smdplan, wherever installed */
            int len = snprintf(dirs[n], MODULE_PATH_MAX, "%s/../lib/smdplan", dirs[n - 1]);
            if (len > 0 && len < MODULE_PATH_MAX && is_dir(dirs[n]))
                n++;
        }
    }
    if (is_dir(SMD_MODULE_DIR_BUILD))
        snprintf(dirs[n++], MODULE_PATH_MAX, "%s", SMD_MODULE_DIR_BUILD);
    snprintf(dirs[n++], MODULE_PATH_MAX, "%s", SMD_MODULE_DIR_INSTALL);
    return n;
}

/* The file of module name: the first of the directories holding it, into
 * path (MODULE_PATH_MAX + 80 bytes). */
static int find(const char *name, char *path, size_t size, st_err *err)
{
    char file[64];
    snprintf(file, sizeof file, "smdplan-%s.so", name);
    char dirs[MODULE_DIRS][MODULE_PATH_MAX], shown[ST_PATH_SHOWN];
    int nd = module_dirs(dirs);
    for (int i = 0; i < nd; i++) {
        int len = snprintf(path, size, "%s/%s", dirs[i], file);
        if (len > 0 && (size_t)len < size && access(path, F_OK) == 0)
            return ST_OK;
    }
    path[0] = '\0';
    char where[ST_MSG_MAX / 2] = "";
    size_t used = 0;
    for (int i = 0; i < nd && used < sizeof where; i++)
        used += (size_t)snprintf(where + used, sizeof where - used, "%s%s", i ? ", " : "",
                                 st_path_fit(dirs[i], shown, 64));
    const char *env = getenv("SMDPLAN_MODULES");
    return ST_RAISE(err, ST_ENOENT, "backend module %s not found (looked in %s%s)", file,
                    env && *env ? "$SMDPLAN_MODULES = " : "", where);
}

static int load(const char *name, const exec_module **out, st_err *err)
{
    char sym[96], path[MODULE_PATH_MAX + 80], shown[ST_PATH_SHOWN];
    snprintf(sym, sizeof sym, "exec_module_%s", name);
    for (char *p = sym; *p; p++)
        if (*p == '-')
            *p = '_';
    int rc = find(name, path, sizeof path, err);
    if (rc != ST_OK)
        return rc;
    st_path_fit(path, shown, sizeof shown);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        /* the loader's reason, without the path it repeats */
        const char *why = dlerror();
        size_t len = strlen(path);
        if (why && strncmp(why, path, len) == 0 && why[len] == ':')
            why += len + 1 + (why[len + 1] == ' ');
        return ST_RAISE(err, ST_ENOENT, "backend module %s cannot be loaded: %s", shown,
                        why ? why : "unknown error");
    }
    const exec_module *m = dlsym(h, sym);
    if (!m) {
        dlclose(h);
        return ST_RAISE(err, ST_ENOENT, "backend module %s has no %s (not an smdplan module)",
                        shown, sym);
    }
    /* the ABI first: a module of another one may not have its build where
     * this one looks */
    int abi = m->abi == EXEC_MODULE_ABI && m->build;
    if (!abi || strcmp(m->build, EXEC_MODULE_BUILD) != 0) {
        char theirs[96];
        if (abi)
            snprintf(theirs, sizeof theirs, "%s", m->build);
        else
            snprintf(theirs, sizeof theirs, "of another module ABI (%d, this one %d)", m->abi,
                     EXEC_MODULE_ABI);
        dlclose(h);
        return ST_RAISE(err, ST_ENOENT, "backend module %s is from smdplan %s, this program "
                        "from smdplan %s (build and install them together)", shown, theirs,
                        EXEC_MODULE_BUILD);
    }
    *out = m;
    return ST_OK;
}

int exec__module_open(const char *name, const exec_module **out, st_err *err)
{
    *out = NULL;
    pthread_mutex_lock(&lock);
    int rc = ST_OK;
    for (int i = 0; i < ncache && !*out; i++)
        if (strcmp(cache[i].name, name) == 0)
            *out = cache[i].m;
    if (!*out) {
        rc = load(name, out, err);
        if (rc == ST_OK && ncache < MODULE_CACHE) {
            snprintf(cache[ncache].name, sizeof cache[ncache].name, "%s", name);
            cache[ncache++].m = *out;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int exec__module_find(const char *name, st_err *err)
{
    char path[MODULE_PATH_MAX + 80];
    return find(name, path, sizeof path, err);
}
