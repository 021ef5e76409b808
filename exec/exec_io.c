/*
 * exec_io.c: whole-file reads and atomic writes. A file the executor writes
 * (RESULT.json, checkpoints, weight dumps) never appears half-written: the
 * bytes go to a temp file in the same directory, which is fsynced and then
 * renamed over the name (rename is atomic within a file system, POSIX),
 * and the directory is fsynced so the rename itself survives a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec_int.h"

static int dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return snprintf(dir, n, ".") < (int)n ? 0 : -1;
    if (slash == path)
        return snprintf(dir, n, "/") < (int)n ? 0 : -1;
    int len = (int)(slash - path);
    return snprintf(dir, n, "%.*s", len, path) < (int)n ? 0 : -1;
}

int exec__write_atomic(const char *path, const void *data, size_t len, st_err *err)
{
    char tmp[4096], dir[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp ||
        dir_of(path, dir, sizeof dir) != 0)
        return ST_RAISE(err, ST_EINVAL, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return ST_RAISE(err, ST_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return ST_RAISE(err, ST_EIO, "%s: write failed: %s", tmp, strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return ST_RAISE(err, ST_EIO, "%s: fsync failed: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ST_RAISE(err, ST_EIO, "%s: rename failed: %s", path, strerror(e));
    }
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return ST_OK;
}

int exec__read_file(const char *path, char **out, size_t *len, st_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ST_RAISE(err, errno == ENOENT ? ST_ENOENT : ST_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *grown = realloc(buf, 2 * cap + 1);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory reading it", path);
    if (bad) {
        free(buf);
        return ST_RAISE(err, ST_EIO, "%s: read failed", path);
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return ST_OK;
}
