/*
 * launch_hostfile.c: what smdplan exec reads of an Open MPI hostfile, the file
 * given to mpirun --hostfile (mpirun(1), "Specifying Host Nodes"): one host
 * per line, "NAME [slots=N] [max_slots=N]", '#' to the end of the line a
 * comment. smdplan exec needs the hosts and the most ranks one host runs:
 * mpirun fills a host's slots before it moves to the next (--map-by slot),
 * so that is the largest slots=N (ranks on one host: the memory check, the
 * GPUs a host's ranks share).
 *
 * The file is untrusted input: it is read only when it is a regular file
 * (a FIFO would block smdplan here and mpirun after it; a device may never
 * end), opened without blocking to look, of at most LAUNCH_HOSTFILE_MAX bytes,
 * and parsed from memory by its length (a NUL byte is refused: mpirun reads
 * lines of text). A slots or max_slots value that is not a count is refused
 * with the line it is on; other words are mpirun's to judge.
 */
#include "launch/launch_job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The count in [p, end): digits only, 0 .. LAUNCH_HOSTFILE_SLOTS_MAX (a host
 * of slots=0 runs no rank); -1 if not. */
static long count_of(const char *p, const char *end)
{
    long v = 0;
    if (p == end)
        return -1;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > LAUNCH_HOSTFILE_SLOTS_MAX)
            return -1;
    }
    return v;
}

int launch_hostfile_parse(const char *text, size_t len, const char *name, launch_hostfile *out,
                       st_err *err)
{
    memset(out, 0, sizeof *out);
    if (memchr(text, '\0', len))
        return ST_RAISE(err, ST_EINVAL, "--hostfile %s: holds a NUL byte; a hostfile is lines of "
                        "text (NAME slots=N)", name);
    const char *end = text + len;
    int line = 0;
    for (const char *p = text; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *stop = eol ? eol : end;
        const char *hash = memchr(p, '#', (size_t)(stop - p));
        if (hash)
            stop = hash;
        line++;
        int words = 0, has_slots = 0;
        for (const char *w = p; w < stop;) {
            while (w < stop && is_space(*w))
                w++;
            if (w == stop)
                break;
            const char *we = w;
            while (we < stop && !is_space(*we))
                we++;
            words++;
            const char *eq = memchr(w, '=', (size_t)(we - w));
            if (words > 1 && eq) {
                size_t klen = (size_t)(eq - w);
                int slots = klen == 5 && !strncmp(w, "slots", 5);
                int max = (klen == 9 && (!strncmp(w, "max_slots", 9) ||
                                         !strncmp(w, "max-slots", 9)));
                if (slots || max) {
                    long v = count_of(eq + 1, we);
                    if (v < 0) {
                        memset(out, 0, sizeof *out); /* nothing of a refused file */
                        return ST_RAISE(err, ST_EINVAL, "--hostfile %s: line %d: %.*s: allowed "
                                        "a count from 0 to %d", name, line,
                                        (int)(we - w > 60 ? 60 : we - w), w,
                                        LAUNCH_HOSTFILE_SLOTS_MAX);
                    }
                    if (slots) {
                        has_slots = 1;
                        if (v > out->most_slots)
                            out->most_slots = (int)v;
                    }
                }
            }
            w = we;
        }
        if (words > 0)
            out->hosts++;
        out->slots_given += words > 0 && has_slots;
        p = eol ? eol + 1 : end;
    }
    return ST_OK;
}

int launch_hostfile_read(const char *path, launch_hostfile *out, st_err *err)
{
    memset(out, 0, sizeof *out);
    /* O_NONBLOCK: a FIFO is opened without waiting for a writer, then
     * refused by its type */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ST_RAISE(err, st_errno_status(errno), "--hostfile %s: cannot be read: %s", path,
                        strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ST_RAISE(err, st_errno_status(e), "--hostfile %s: cannot be read: %s", path,
                        strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        int fifo = S_ISFIFO(st.st_mode);
        close(fd);
        return ST_RAISE(err, ST_EINVAL, "--hostfile %s: %s, not a regular file (mpirun reads "
                        "a hostfile as a file, more than once)", path,
                        fifo ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory"
                                      : S_ISCHR(st.st_mode) ? "a device" : "not a file");
    }
    if (st.st_size > LAUNCH_HOSTFILE_MAX) {
        close(fd);
        return ST_RAISE(err, ST_EINVAL, "--hostfile %s: %lld bytes; a hostfile has at most %d",
                        path, (long long)st.st_size, LAUNCH_HOSTFILE_MAX);
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *text = malloc(n ? n : 1);
    if (!text) {
        close(fd);
        return ST_RAISE(err, ST_ENOMEM, "--hostfile %s: out of memory", path);
    }
    while (got < n) {
        ssize_t k = read(fd, text + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* shorter than it was: what is there */
        got += (size_t)k;
    }
    close(fd);
    int rc = launch_hostfile_parse(text, got, path, out, err);
    free(text);
    return rc;
}
