/*
 * exec_program.c: finding the programs smdplan starts (exec_program.h):
 * beside this executable, then on $PATH. A candidate counts when it is
 * executable (access X_OK) and its whole path fits the caller's buffer.
 */
#include "exec/exec_program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void exec_program_self(char *buf, size_t n)
{
    if (n == 0)
        return;
    ssize_t k = readlink("/proc/self/exe", buf, n - 1);
    buf[k > 0 ? k : 0] = '\0';
}

/* dir/name into buf when it is an executable that fits; 1 if so. */
static int executable_in(const char *dir, const char *name, char *buf, size_t n)
{
    char cand[EXEC_PROGRAM_PATH_MAX + 64];
    int len = snprintf(cand, sizeof cand, "%s/%s", *dir ? dir : ".", name);
    if (len < 0 || (size_t)len >= sizeof cand || (size_t)len >= n || access(cand, X_OK) != 0)
        return 0;
    memcpy(buf, cand, (size_t)len + 1);
    return 1;
}

void exec_program_find(const char *name, int search_path, char *buf, size_t n)
{
    char self[EXEC_PROGRAM_PATH_MAX];
    if (n == 0)
        return;
    buf[0] = '\0';
    exec_program_self(self, sizeof self);
    char *slash = strrchr(self, '/');
    if (slash) {
        *slash = '\0';
        if (executable_in(self, name, buf, n))
            return;
    }
    if (!search_path)
        return;
    const char *path = getenv("PATH");
    char dirs[EXEC_PROGRAM_PATH_MAX];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "");
    char *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
        if (executable_in(dir, name, buf, n))
            return;
}
