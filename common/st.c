/*
 * st.c: status codes and the sticky error context (see st.h).
 */
#include "common/st.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const st_names[ST__COUNT] = {
    [ST_OK] = "ok",
    [ST_EINVAL] = "invalid argument",
    [ST_ENOENT] = "not found",
    [ST_EPARSE] = "parse error",
    [ST_ENOMEM] = "out of memory",
    [ST_EIO] = "input/output error",
    [ST_ERANGE] = "value out of range",
    [ST_EINFEASIBLE] = "infeasible",
    [ST_EUNSUPPORTED] = "unsupported",
    [ST_EINTERNAL] = "internal error",
};

const char *st_str(int code)
{
    if (code < 0 || code >= ST__COUNT)
        return "unknown status";
    return st_names[code];
}

void st_err_clear(st_err *err)
{
    if (!err)
        return;
    err->code = ST_OK;
    err->file = NULL;
    err->line = 0;
    err->msg[0] = '\0';
}

int st_raise(st_err *err, int code, const char *file, int line, const char *fmt, ...)
{
    if (!err || err->code != ST_OK)
        return code;
    err->code = code;
    err->file = file;
    err->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* Messages are one line: fold any newline a caller let through. */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return code;
}

int st_exit_code(int code)
{
    switch (code) {
    case ST_OK:
        return 0;
    case ST_EINVAL:
    case ST_ENOENT:
    case ST_EPARSE:
    case ST_ERANGE:
        return 2;
    case ST_EINFEASIBLE:
        return 3;
    default:
        return 1;
    }
}

int st_errno_status(int errnum)
{
    switch (errnum) {
    case ENOENT:
    case ENOTDIR:
        return ST_ENOENT;
    case EACCES:
    case EPERM:
    case EROFS:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case ENXIO:
    case ETXTBSY:
    case EEXIST:
    case EINVAL:
        return ST_EINVAL;
    case ENOMEM:
        return ST_ENOMEM;
    default:
        return ST_EIO;
    }
}

char *st_path_fit(const char *path, char *buf, size_t n)
{
    if (!path)
        path = "(null)";
    size_t len = strlen(path);
    if (len < n) {
        memcpy(buf, path, len + 1);
        return buf;
    }
    /* head ... tail: the tail names the file, the head where it is */
    size_t keep = n - 4, head = keep / 3, tail = keep - head;
    memcpy(buf, path, head);
    memcpy(buf + head, "...", 3);
    memcpy(buf + head + 3, path + len - tail, tail);
    buf[head + 3 + tail] = '\0';
    return buf;
}
