/*
 * outfile.h: output files written whole or not at all, and the one rule for
 * what an output may replace.
 *
 * A file the program writes for the user (a trace, a report's files, a
 * catalog override, an emitted script, a run's CONFIG.json) is written to a
 * temporary file in the same directory, flushed to disk (fsync) and renamed
 * to the destination only once it is complete: a failure at any point
 * leaves the destination as it was and removes only the temporary the
 * program made.
 *
 * What is at the path decides what happens (outfile_check states it without
 * writing anything):
 *   - nothing: the file is created; if something appears at the path while
 *     it is being written, it is not replaced (the commit refuses, nothing
 *     changes);
 *   - a regular file: refused unless force (--force). With force it is
 *     replaced atomically, keeping its permissions, owner and group; a file
 *     with other hard links is refused even then (replacing it would detach
 *     them), as is one whose owner the program cannot give the new file;
 *   - a symbolic link: refused, with or without force; the program never
 *     writes through a link (give the path of the file it points to). The
 *     system's names of open descriptors are the exception below;
 *   - a character device such as /dev/null, a FIFO, a socket, or a name of
 *     an open descriptor (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/...):
 *     written in place as a stream, which replaces nothing. A FIFO nobody
 *     reads is refused rather than waited on forever;
 *   - a directory or a block device: refused.
 *
 * Errors name the path (shortened with st_path_fit so the reason is never
 * cut) and the reason. A path the user may not write (an existing file
 * without force, a link, permissions, read-only file system, missing
 * directory, a directory) is bad input (ST_EINVAL or ST_ENOENT, exit 2); a
 * full disk is ST_EIO.
 */
#ifndef SMD_OUTFILE_H
#define SMD_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/st.h"

typedef struct outfile {
    FILE *f;                     /* write here between open and commit/abort */
    char *path;                  /* the destination (owned) */
    char *tmp;                   /* the temporary beside it (owned); NULL for a stream */
    const char *what;            /* names the output in messages ("--trace"); borrowed */
    int replace;                 /* 1: the commit replaces an existing file (force) */
} outfile;

/* The rule above for path, without writing: ST_OK when outfile_open would
 * go ahead. For refusing early, before work whose only product is the
 * file. what (e.g. "--trace") prefixes messages. */
int outfile_check(const char *path, const char *what, int force, st_err *err);

/* Start writing path under the rule above (force: --force was given).
 * what (e.g. "--trace", "report") prefixes messages and must outlive o. On
 * success o->f is open for writing. */
int outfile_open(outfile *o, const char *path, const char *what, int force, st_err *err);

/* Finish: flush, fsync, close and move the temporary to the destination
 * (without force, only if nothing has appeared there since the open). On
 * failure the temporary is removed and the destination is untouched. o is
 * released either way. */
int outfile_commit(outfile *o, st_err *err);

/* Give up: close and remove the temporary; the destination is untouched.
 * Harmless on a zeroed or released o. */
void outfile_abort(outfile *o);

/* open + write n bytes + commit. */
int outfile_write(const char *path, const char *what, const void *data, size_t n, int force,
                  st_err *err);

/* Move from, a complete file the program made in path's directory (an
 * image another program rendered), to path under the same rule: a regular
 * file is replaced only with force (keeping its permissions, owner and
 * group), a new one never replaces what appeared meanwhile; anything but a
 * regular file or nothing at path is refused. from is left for the caller
 * to remove on failure. */
int outfile_move(const char *from, const char *path, const char *what, int force, st_err *err);

/* 1 when a and b name the same existing file (same device and inode). */
int outfile_same_file(const char *a, const char *b);

#endif
