/*
 * st.h: project-wide status codes and the error context.
 *
 * Every library function returns an int status: ST_OK (0) or one of the codes
 * below; data comes back through out-parameters. An error is raised with
 * ST_RAISE(err, code, fmt, ...), which records the code, a message, and the
 * file and line of the raise in an st_err, so one breakpoint in st_raise()
 * catches every error at its source. An st_err keeps the first error raised
 * into it (sticky): later raises do not overwrite it.
 *
 * Libraries never exit or abort; programs turn a status into an exit code
 * with st_exit_code().
 */
#ifndef SMD_ST_H
#define SMD_ST_H

#include <stddef.h>

enum {
    ST_OK = 0,
    ST_EINVAL,     /* bad user input: a value out of range, a malformed string */
    ST_ENOENT,     /* a named thing does not exist: file, instance type, preset */
    ST_EPARSE,     /* a file could not be parsed */
    ST_ENOMEM,     /* allocation failed */
    ST_EIO,        /* reading or writing failed */
    ST_ERANGE,     /* a value would overflow what the model can represent */
    ST_EINFEASIBLE,/* a request has no feasible answer (not an input error) */
    ST_EUNSUPPORTED,/* asked for a feature this build or model does not have */
    ST_EINTERNAL,  /* an invariant failed: a bug */
    ST__COUNT
};

#define ST_MSG_MAX 512

typedef struct st_err {
    int code;                 /* first error raised, ST_OK if none */
    const char *file;         /* source file of the raise */
    int line;                 /* source line of the raise */
    char msg[ST_MSG_MAX];     /* one line, no trailing newline */
} st_err;

/* Name of a status code ("invalid argument", ...). Never NULL. */
const char *st_str(int code);

/* Reset an error context to ST_OK. */
void st_err_clear(st_err *err);

/* Record an error in err (if err is non-NULL and holds no error yet) and
 * return code. Use through ST_RAISE so file and line are filled in. */
int st_raise(st_err *err, int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define ST_RAISE(err, code, ...) st_raise((err), (code), __FILE__, __LINE__, __VA_ARGS__)

/* Exit code a program uses for a status: 0 ok, 2 bad input, 3 infeasible,
 * 1 anything else. */
int st_exit_code(int code);

/* The status of a failed system call on a path the user gave: a path that
 * does not exist is ST_ENOENT, one the user may not use (permissions, a
 * read-only file system, a directory where a file was wanted, a name too
 * long) is ST_EINVAL, both bad input; a full disk or a device error is
 * ST_EIO, out of memory ST_ENOMEM. */
int st_errno_status(int errnum);

/* A path for a one-line message: path itself when shorter than n bytes,
 * else its head and tail around "...", so the reason after it in an
 * ST_MSG_MAX message is never cut. Writes at most n bytes (n >= 16) into
 * buf; returns buf. */
#define ST_PATH_SHOWN 160
char *st_path_fit(const char *path, char *buf, size_t n);

#endif
