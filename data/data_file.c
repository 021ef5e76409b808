/*
 * data_file.c: locating the data directory and reading whole files.
 *
 * A data file may be a regular file, a pipe (--model <(...), /dev/stdin),
 * a FIFO or a device: all are read as streams, to their end or the size
 * limit, never by seeking. Errors name the path (shortened so the reason
 * always fits) and the system's reason; a path the user cannot read is bad
 * input (st_errno_status).
 */
#include "data/data.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smd_config.h"

/* Data files are small (the catalog is tens of KiB); refuse anything absurd
 * rather than trying to hold it. */
#define DATA_FILE_MAX_BYTES (64L * 1024 * 1024)
/* How long a FIFO may keep us waiting before we say what we wait for. */
#define FIFO_NOTICE_MS 1000

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *data_dir(void)
{
    const char *env = getenv("SMDPLAN_DATA");
    if (env && *env)
        return env;
    if (is_dir(SMD_DATA_DIR_BUILD))
        return SMD_DATA_DIR_BUILD;
    return SMD_DATA_DIR_INSTALL;
}

/* Read all of fd (a pipe, FIFO, terminal or device) up to the limit. The
 * descriptor is non-blocking, so poll waits for data; a FIFO with no writer
 * yet is waited on, with one line on stderr after FIFO_NOTICE_MS so the wait
 * is not silent. */
static int read_stream(int fd, const char *shown, char **out, size_t *len, st_err *err)
{
    size_t n = 0, cap = 0;
    char *buf = NULL;
    int noticed = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, noticed ? -1 : FIFO_NOTICE_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return ST_RAISE(err, ST_EIO, "%s: %s", shown, strerror(errno));
        }
        if (r == 0) {
            fprintf(stderr, "smdplan: waiting for input on %s (a pipe or FIFO)...\n", shown);
            noticed = 1;
            continue;
        }
        if (cap - n < 65536) {
            size_t nc = cap ? 2 * cap : 65536;
            char *q = realloc(buf, nc + 1);
            if (!q) {
                free(buf);
                return ST_RAISE(err, ST_ENOMEM, "%s: cannot allocate %zu bytes", shown, nc);
            }
            buf = q;
            cap = nc;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            return ST_RAISE(err, st_errno_status(e), "%s: %s", shown, strerror(e));
        }
        if (k == 0) {
            /* no writer has come yet (a FIFO opened non-blocking reads EOF
             * then, and poll reports POLLHUP only after a writer left) */
            if (!(p.revents & (POLLIN | POLLHUP)))
                continue;
            break;
        }
        n += (size_t)k;
        if (n > DATA_FILE_MAX_BYTES) {
            free(buf);
            return ST_RAISE(err, ST_EINVAL, "%s: more than %ld bytes: not a data file", shown,
                            DATA_FILE_MAX_BYTES);
        }
    }
    if (!buf && !(buf = malloc(1)))
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", shown);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return ST_OK;
}

int data_read_file(const char *path, char **out, size_t *len, st_err *err)
{
    *out = NULL;
    *len = 0;
    char shown[ST_PATH_SHOWN];
    st_path_fit(path, shown, sizeof shown);
    /* O_NONBLOCK: opening a FIFO does not wait for its writer here */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ST_RAISE(err, st_errno_status(errno), "%s: %s", shown, strerror(errno));
    struct stat st;
    int rc = ST_OK;
    if (fstat(fd, &st) != 0) {
        rc = ST_RAISE(err, ST_EIO, "%s: %s", shown, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        rc = ST_RAISE(err, ST_EINVAL, "%s: a directory, not a file", shown);
    } else if (!S_ISREG(st.st_mode)) {
        rc = read_stream(fd, shown, out, len, err);
    } else if (st.st_size > DATA_FILE_MAX_BYTES) {
        rc = ST_RAISE(err, ST_EINVAL, "%s: %lld bytes, more than the %ld of a data file", shown,
                      (long long)st.st_size, DATA_FILE_MAX_BYTES);
    } else {
        /* a regular file: it may still change size while read, so read to
         * the end within the limit as for a stream */
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        rc = read_stream(fd, shown, out, len, err);
    }
    close(fd);
    return rc;
}
