/*
 * outfile.h: output files written whole or not at all.
 *
 * A file the program writes for the user (a trace, a report's files, a
 * catalog override) is written to a temporary file in the same directory,
 * flushed to disk (fsync) and renamed over the destination only once it is
 * complete: a failure at any point leaves the destination as it was and
 * removes only the temporary the program made. Nothing that was at the path
 * is ever removed.
 *
 * A destination that exists and is not a regular file (a character device
 * such as /dev/null, a FIFO, a socket), or one reached through a file
 * descriptor (/dev/stdout, /dev/fd/N, /proc/...), is written in place as a
 * stream: renaming over it would replace the device or the descriptor's
 * file. A FIFO nobody reads is refused rather than waited on forever. A
 * directory is refused.
 *
 * Errors name the path (shortened with st_path_fit so the reason is never
 * cut) and the operating system's reason. A path the user may not write
 * (permissions, read-only file system, missing directory, a directory) is
 * bad input (ST_EINVAL or ST_ENOENT, exit 2); a full disk is ST_EIO.
 */
#ifndef SMD_OUTFILE_H
#define SMD_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "common/st.h"

typedef struct outfile {
    FILE *f;                     /* write here between open and commit/abort */
    char *path;                  /* the destination (owned) */
    char *tmp;                   /* the temporary beside it (owned); NULL for a stream */
    const char *what;            /* names the output in messages ("--trace"); borrowed */
} outfile;

/* Start writing path. what (e.g. "--trace", "report") prefixes messages and
 * must outlive o. On success o->f is open for writing. */
int outfile_open(outfile *o, const char *path, const char *what, st_err *err);

/* Finish: flush, fsync, close and rename the temporary over the
 * destination. On failure the temporary is removed and the destination is
 * untouched. o is released either way. */
int outfile_commit(outfile *o, st_err *err);

/* Give up: close and remove the temporary; the destination is untouched.
 * Harmless on a zeroed or released o. */
void outfile_abort(outfile *o);

/* open + write n bytes + commit. */
int outfile_write(const char *path, const char *what, const void *data, size_t n, st_err *err);

/* 1 when a and b name the same existing file (same device and inode). */
int outfile_same_file(const char *a, const char *b);

#endif
