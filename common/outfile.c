/*
 * outfile.c: output files written whole or not at all, under the one rule
 * of what an output may replace (see outfile.h).
 *
 * The temporary is "<dir>/.<name>.XXXXXX" (mkstemp), in the destination's
 * own directory so the move is atomic within one file system. A new file
 * gets the umask's permissions and is moved in with renameat2's
 * RENAME_NOREPLACE (else link(2), which fails on an existing name too), so
 * a file that appeared meanwhile is never replaced; a replaced file (force)
 * keeps its permissions, owner and group and is moved in with rename(2).
 * The path is looked at with lstat: a symbolic link is never followed.
 */
#define _GNU_SOURCE /* renameat2, RENAME_NOREPLACE */

#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest file name kept in a temporary's name (NAME_MAX is 255 on Linux;
 * the dot and the mkstemp suffix need 8 more). */
#define TMP_NAME_KEEP 200

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int fail_errno(const outfile *o, const char *path, const char *doing, int e, st_err *err)
{
    char shown[ST_PATH_SHOWN];
    return ST_RAISE(err, st_errno_status(e), "%s %s: %s: %s", o->what,
                    st_path_fit(path, shown, sizeof shown), doing, strerror(e));
}

/* Paths that name an open file descriptor rather than a file: renaming over
 * them would replace the link, not write to the descriptor. */
static int fd_path(const char *p)
{
    return strncmp(p, "/dev/fd/", 8) == 0 || strcmp(p, "/dev/stdout") == 0 ||
           strcmp(p, "/dev/stderr") == 0 || strcmp(p, "/dev/stdin") == 0 ||
           strncmp(p, "/proc/", 6) == 0;
}

static void release(outfile *o)
{
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    o->f = NULL;
}

/* Write in place: devices, FIFOs, sockets, descriptors. */
/* The descriptor a path names (/dev/stdout, /dev/fd/N), or -1. Writing to
 * a duplicate shares its offset with what the program prints there, where
 * opening the path anew would write over it from another offset. */
static int named_fd(const char *p)
{
    if (strcmp(p, "/dev/stdout") == 0)
        return 1;
    if (strcmp(p, "/dev/stderr") == 0)
        return 2;
    if (strncmp(p, "/dev/fd/", 8) == 0 || strncmp(p, "/proc/self/fd/", 14) == 0) {
        const char *d = p + (p[1] == 'd' ? 8 : 14);
        char *end;
        long v = strtol(d, &end, 10);
        if (*d >= '0' && *d <= '9' && *end == '\0' && v >= 0 && v < 1 << 20)
            return (int)v;
    }
    return -1;
}

static int open_stream(outfile *o, const struct stat *st, st_err *err)
{
    int nfd = named_fd(o->path), fd;
    if (nfd >= 0) {
        fflush(NULL); /* what the program printed there comes first */
        fd = fcntl(nfd, F_DUPFD_CLOEXEC, 3);
    } else {
        /* O_NONBLOCK: opening a FIFO nobody reads fails (ENXIO) instead of
         * blocking forever; the flag is cleared once it is open. */
        fd = open(o->path, O_WRONLY | O_APPEND | O_NONBLOCK);
    }
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(st->st_mode)) {
            char shown[ST_PATH_SHOWN];
            return ST_RAISE(err, ST_EINVAL, "%s %s: a FIFO that no process is reading", o->what,
                            st_path_fit(o->path, shown, sizeof shown));
        }
        return fail_errno(o, o->path, "cannot open for writing", errno, err);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        return fail_errno(o, o->path, "cannot open for writing", e, err);
    }
    return ST_OK;
}

/* The directory part of path ("." when there is none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return dup_str(".");
    if (slash == path)
        return dup_str("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

static int open_temp(outfile *o, const struct stat *existing, st_err *err)
{
    char *dir = dir_of(o->path);
    if (!dir)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", o->what);
    struct stat ds;
    if (stat(dir, &ds) != 0) {
        int rc = fail_errno(o, o->path, "no such directory", errno, err);
        free(dir);
        return rc;
    }
    if (!S_ISDIR(ds.st_mode)) {
        free(dir);
        return fail_errno(o, o->path, "cannot create", ENOTDIR, err);
    }
    const char *slash = strrchr(o->path, '/');
    const char *base = slash ? slash + 1 : o->path;
    size_t blen = strlen(base);
    if (blen > TMP_NAME_KEEP)
        blen = TMP_NAME_KEEP;
    size_t n = strlen(dir) + blen + 16;
    o->tmp = malloc(n);
    if (!o->tmp) {
        free(dir);
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", o->what);
    }
    snprintf(o->tmp, n, "%s/.%.*s.XXXXXX", dir, (int)blen, base);
    free(dir);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int rc = fail_errno(o, o->path, "cannot create a file in its directory", errno, err);
        free(o->tmp);
        o->tmp = NULL;
        return rc;
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    mode_t mode;
    if (existing) {
        mode = existing->st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    (void)fchmod(fd, mode);
    struct stat ts;
    if (existing && fstat(fd, &ts) == 0 &&
        (ts.st_uid != existing->st_uid || ts.st_gid != existing->st_gid) &&
        fchown(fd, existing->st_uid, existing->st_gid) != 0) {
        /* the new file would not be the old one's owner's: not replaced */
        char shown[ST_PATH_SHOWN];
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return ST_RAISE(err, ST_EINVAL, "%s %s: owned by uid %ld gid %ld, which the new file "
                        "cannot keep; not replaced", o->what,
                        st_path_fit(o->path, shown, sizeof shown), (long)existing->st_uid,
                        (long)existing->st_gid);
    }
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return fail_errno(o, o->path, "cannot open for writing", e, err);
    }
    return ST_OK;
}

/* What is at the destination. */
enum { DEST_NEW, DEST_FILE, DEST_STREAM };

/* The rule of outfile.h: what path is and whether it may be written. */
static int classify(const char *path, const char *what, int force, struct stat *st, int *kind,
                    st_err *err)
{
    outfile named = {.what = what};
    char shown[ST_PATH_SHOWN];
    if (!path || !*path)
        return ST_RAISE(err, ST_EINVAL, "%s: empty file name", what);
    if (fd_path(path)) { /* a descriptor's name (itself often a link): the descriptor */
        if (stat(path, st) != 0)
            return fail_errno(&named, path, "cannot write", errno, err);
        if (S_ISDIR(st->st_mode))
            return fail_errno(&named, path, "cannot write a file there", EISDIR, err);
        *kind = DEST_STREAM;
        return ST_OK;
    }
    if (lstat(path, st) != 0) {
        if (errno != ENOENT)
            return fail_errno(&named, path, "cannot write", errno, err);
        *kind = DEST_NEW;
        return ST_OK;
    }
    st_path_fit(path, shown, sizeof shown);
    if (S_ISLNK(st->st_mode))
        return ST_RAISE(err, ST_EINVAL, "%s %s: a symbolic link; not written through, with or "
                        "without --force (give the path of the file it points to)", what, shown);
    if (S_ISDIR(st->st_mode))
        return fail_errno(&named, path, "cannot write a file there", EISDIR, err);
    if (S_ISBLK(st->st_mode))
        return ST_RAISE(err, ST_EINVAL, "%s %s: a block device; not written", what, shown);
    if (!S_ISREG(st->st_mode)) {
        *kind = DEST_STREAM;
        return ST_OK;
    }
    if (!force)
        return ST_RAISE(err, ST_EINVAL, "%s %s: exists; not replaced (pass --force to replace "
                        "it)", what, shown);
    if (st->st_nlink > 1)
        return ST_RAISE(err, ST_EINVAL, "%s %s: has %lu hard links; replacing it would detach "
                        "the others, so it is not replaced even with --force", what, shown,
                        (unsigned long)st->st_nlink);
    if (geteuid() != 0 && st->st_uid != geteuid())
        return ST_RAISE(err, ST_EINVAL, "%s %s: owned by another user (uid %ld); replacing it "
                        "would change its owner, so it is not replaced even with --force", what,
                        shown, (long)st->st_uid);
    if (access(path, W_OK) != 0)
        return fail_errno(&named, path, "cannot write", errno, err);
    *kind = DEST_FILE;
    return ST_OK;
}

int outfile_check(const char *path, const char *what, int force, st_err *err)
{
    struct stat st;
    int kind;
    return classify(path, what ? what : "output", force, &st, &kind, err);
}

int outfile_open(outfile *o, const char *path, const char *what, int force, st_err *err)
{
    memset(o, 0, sizeof *o);
    o->what = what ? what : "output";
    struct stat st;
    int kind;
    int rc = classify(path, o->what, force, &st, &kind, err);
    if (rc != ST_OK)
        return rc;
    o->path = dup_str(path);
    if (!o->path)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", o->what);
    o->replace = kind == DEST_FILE;
    rc = kind == DEST_STREAM ? open_stream(o, &st, err)
                             : open_temp(o, kind == DEST_FILE ? &st : NULL, err);
    if (rc != ST_OK)
        release(o);
    return rc;
}

void outfile_abort(outfile *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp); /* ours: made by mkstemp */
    release(o);
}

/* Move tmp to path only if nothing is at path (errno EEXIST otherwise). */
static int place_new(const char *tmp, const char *path)
{
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return -1;
#endif
    /* a file system without the flag: link(2) refuses an existing name too */
    if (link(tmp, path) == 0) {
        (void)unlink(tmp);
        return 0;
    }
    if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
    /* nor hard links (FAT): look, then rename */
    struct stat st;
    if (lstat(path, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(tmp, path);
}

int outfile_commit(outfile *o, st_err *err)
{
    if (!o->f)
        return ST_RAISE(err, ST_EINVAL, "%s: not open", o->what);
    int e = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    /* devices and pipes cannot be synced (EINVAL, EROFS): nothing to wait for */
    if (!e && o->tmp && fsync(fileno(o->f)) != 0)
        e = errno;
    FILE *f = o->f;
    o->f = NULL;
    if (fclose(f) != 0 && !e)
        e = errno;
    if (e) {
        int rc = fail_errno(o, o->path, "write failed", e, err);
        outfile_abort(o);
        return rc;
    }
    if (o->tmp && (o->replace ? rename(o->tmp, o->path) : place_new(o->tmp, o->path)) != 0) {
        int rc;
        if (errno == EEXIST) {
            char shown[ST_PATH_SHOWN];
            rc = ST_RAISE(err, ST_EINVAL, "%s %s: appeared while it was being written; not "
                          "replaced (pass --force to replace it)", o->what,
                          st_path_fit(o->path, shown, sizeof shown));
        } else {
            rc = fail_errno(o, o->path, "cannot write", errno, err);
        }
        outfile_abort(o);
        return rc;
    }
    if (o->tmp) {
        /* the rename itself reaches the disk with its directory */
        char *dir = dir_of(o->path);
        int dfd = dir ? open(dir, O_RDONLY) : -1;
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    release(o);
    return ST_OK;
}

int outfile_write(const char *path, const char *what, const void *data, size_t n, int force,
                  st_err *err)
{
    outfile o;
    int rc = outfile_open(&o, path, what, force, err);
    if (rc != ST_OK)
        return rc;
    if (n > 0 && fwrite(data, 1, n, o.f) != n) {
        rc = fail_errno(&o, o.path, "write failed", errno ? errno : EIO, err);
        outfile_abort(&o);
        return rc;
    }
    return outfile_commit(&o, err);
}

int outfile_move(const char *from, const char *path, const char *what, int force, st_err *err)
{
    outfile named = {.what = what ? what : "output"};
    struct stat st;
    int kind;
    char shown[ST_PATH_SHOWN];
    int rc = classify(path, named.what, force, &st, &kind, err);
    if (rc != ST_OK)
        return rc;
    if (kind == DEST_STREAM)
        return ST_RAISE(err, ST_EINVAL, "%s %s: not a regular file; not replaced", named.what,
                        st_path_fit(path, shown, sizeof shown));
    if (kind == DEST_FILE) {
        struct stat fs;
        if (stat(from, &fs) != 0)
            return fail_errno(&named, from, "cannot read", errno, err);
        if ((fs.st_uid != st.st_uid || fs.st_gid != st.st_gid) &&
            chown(from, st.st_uid, st.st_gid) != 0)
            return ST_RAISE(err, ST_EINVAL, "%s %s: owned by uid %ld gid %ld, which the new file "
                            "cannot keep; not replaced", named.what,
                            st_path_fit(path, shown, sizeof shown), (long)st.st_uid,
                            (long)st.st_gid);
        (void)chmod(from, st.st_mode & 07777);
    }
    if ((kind == DEST_FILE ? rename(from, path) : place_new(from, path)) != 0) {
        if (errno == EEXIST)
            return ST_RAISE(err, ST_EINVAL, "%s %s: appeared while it was being written; not "
                            "replaced (pass --force to replace it)", named.what,
                            st_path_fit(path, shown, sizeof shown));
        return fail_errno(&named, path, "cannot write", errno, err);
    }
    return ST_OK;
}

int outfile_same_file(const char *a, const char *b)
{
    struct stat x, y;
    return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
           x.st_ino == y.st_ino;
}
