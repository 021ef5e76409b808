/*
 * rpt_gnuplot.c: run gnuplot on a script, in the report directory.
 *
 * The scripts read their data by relative name, so gnuplot must run with the
 * report directory as its working directory. posix_spawn has no portable way
 * to change directory in the child (posix_spawn_file_actions_addchdir is a
 * GNU extension), so this is fork + chdir + execv, with only
 * async-signal-safe calls in the child. The program is looked up on PATH in
 * the parent, before forking.
 *
 * A program that is not there (or not executable) is not an error: the
 * caller gets RPT_RENDER_NO_GNUPLOT and tells the user how to install it.
 * The child reports a failed chdir or exec through a close-on-exec pipe
 * (an errno, so "not found" is told apart from gnuplot exiting 127), and
 * gnuplot's stderr comes back through a second pipe: its last non-blank line
 * (gnuplot's own `"x.gp" line 7: ...`) becomes the error message.
 */
#include "reports/rpt_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define STDERR_KEEP 8192         /* bytes of gnuplot's error output kept */

/* A regular file we may execute. */
static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Resolve program to a path (a name with '/' is taken as is, else searched
 * on PATH as execvp would). 1 if found. */
static int find_program(const char *program, rpt__buf *path)
{
    if (strchr(program, '/')) {
        rpt__buf_puts(path, program);
        return !path->oom && executable(path->p);
    }
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    for (const char *d = dirs;;) {
        const char *end = strchr(d, ':');
        size_t n = end ? (size_t)(end - d) : strlen(d);
        path->n = 0;
        if (n == 0)
            rpt__buf_puts(path, "."); /* an empty PATH entry is the current directory */
        else
            rpt__buf_put(path, d, n);
        rpt__buf_printf(path, "/%s", program);
        if (!path->oom && executable(path->p))
            return 1;
        if (!end)
            return 0;
        d = end + 1;
    }
}

static int cloexec_pipe(int fd[2])
{
    if (pipe(fd) != 0)
        return -1;
    for (int i = 0; i < 2; i++)
        if (fcntl(fd[i], F_SETFD, FD_CLOEXEC) != 0) {
            close(fd[0]);
            close(fd[1]);
            return -1;
        }
    return 0;
}

/* Child: never returns. Reports (step, errno) through report_fd on failure:
 * step 1 = chdir, 2 = exec. Only async-signal-safe calls. */
static void child(const char *path, const char *dir, const char *set, const char *script,
                  int err_fd, int report_fd)
{
    int msg[2] = {1, 0};
    if (chdir(dir) != 0)
        goto fail;
    msg[0] = 3;
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        goto fail;
    msg[0] = 2;
    char *const with_set[] = {(char *)path, (char *)"-e", (char *)set, (char *)script, NULL};
    char *const plain[] = {(char *)path, (char *)script, NULL};
    execv(path, set ? with_set : plain);
fail:
    msg[1] = errno;
    ssize_t w = write(report_fd, msg, sizeof msg);
    (void)w;
    _exit(127);
}

/* The last non-blank line of text, trimmed, into out. */
static void last_line(const char *text, size_t n, char *out, size_t outn)
{
    out[0] = '\0';
    size_t end = n;
    while (end > 0) {
        while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' ||
                           text[end - 1] == ' ' || text[end - 1] == '\t'))
            end--;
        size_t start = end;
        while (start > 0 && text[start - 1] != '\n')
            start--;
        size_t s = start;
        while (s < end && (text[s] == ' ' || text[s] == '\t'))
            s++;
        if (s < end) {
            size_t len = end - s < outn - 1 ? end - s : outn - 1;
            memcpy(out, text + s, len);
            out[len] = '\0';
            return;
        }
        end = start;
    }
}

int rpt__gnuplot_run(const char *program, const char *dir, const char *set, const char *script,
                     rpt_render *out, st_err *err)
{
    *out = RPT_RENDER_FAILED;
    rpt__buf path = {0};
    if (!find_program(program, &path)) {
        int oom = path.oom;
        rpt__buf_fini(&path);
        if (oom)
            return ST_RAISE(err, ST_ENOMEM, "gnuplot: out of memory");
        *out = RPT_RENDER_NO_GNUPLOT;
        return ST_OK;
    }
    int errp[2], rep[2];
    if (cloexec_pipe(errp) != 0) {
        rpt__buf_fini(&path);
        return ST_RAISE(err, ST_EIO, "gnuplot: pipe: %s", strerror(errno));
    }
    if (cloexec_pipe(rep) != 0) {
        close(errp[0]);
        close(errp[1]);
        rpt__buf_fini(&path);
        return ST_RAISE(err, ST_EIO, "gnuplot: pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0)
        child(path.p, dir, set, script, errp[1], rep[1]);
    int fork_errno = errno;
    close(errp[1]);
    close(rep[1]);
    if (pid < 0) {
        close(errp[0]);
        close(rep[0]);
        rpt__buf_fini(&path);
        return ST_RAISE(err, ST_EIO, "gnuplot: fork: %s", strerror(fork_errno));
    }

    /* The report pipe closes at exec (or carries why there was none); the
     * child writes nothing to stderr before that, so reading the two in turn
     * cannot block on each other. */
    int msg[2] = {0, 0};
    ssize_t got;
    do
        got = read(rep[0], msg, sizeof msg);
    while (got < 0 && errno == EINTR);
    close(rep[0]);

    char text[STDERR_KEEP];
    size_t n = 0;
    for (;;) {
        char chunk[1024];
        ssize_t k = read(errp[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        /* Keep the tail: the error gnuplot stops on is the last thing it says. */
        size_t kk = (size_t)k; /* <= sizeof chunk < sizeof text */
        if (n + kk > sizeof text) {
            size_t drop = n + kk - sizeof text;
            memmove(text, text + drop, n - drop);
            n -= drop;
        }
        memcpy(text + n, chunk, kk);
        n += kk;
    }
    close(errp[0]);

    int status = 0;
    pid_t w;
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);

    int rc = ST_OK;
    if (got == (ssize_t)sizeof msg) {
        if (msg[0] == 2 && (msg[1] == ENOENT || msg[1] == EACCES || msg[1] == ENOTDIR ||
                            msg[1] == ENOEXEC)) {
            *out = RPT_RENDER_NO_GNUPLOT;
        } else {
            rc = ST_RAISE(err, ST_EIO, "gnuplot: %s '%s' failed: %s",
                          msg[0] == 1 ? "chdir to" : msg[0] == 2 ? "exec of" : "setting up",
                          msg[0] == 1 ? dir : path.p, strerror(msg[1]));
        }
    } else if (w < 0) {
        rc = ST_RAISE(err, ST_EIO, "gnuplot: waitpid: %s", strerror(errno));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *out = RPT_RENDER_OK;
    } else {
        char line[ST_MSG_MAX / 2];
        last_line(text, n, line, sizeof line);
        if (WIFSIGNALED(status))
            rc = ST_RAISE(err, ST_EIO, "gnuplot %s in %s: killed by signal %d%s%s", script, dir,
                          WTERMSIG(status), line[0] ? ": " : "", line);
        else
            rc = ST_RAISE(err, ST_EIO, "gnuplot %s in %s: exit %d%s%s", script, dir,
                          WEXITSTATUS(status), line[0] ? ": " : "", line);
    }
    rpt__buf_fini(&path);
    return rc;
}

/* Okabe and Ito's palette for colour-blind readers (Okabe & Ito 2008, Color
 * Universal Design: its eight colours; here without black, first, plus two
 * greys), ordered so neighbours in a stack differ in lightness as well as
 * hue. The earlier Tableau 10 put its red (#e15759) and green (#59a14f)
 * 0.9 apart (CIELAB Delta E) for a deuteranope; test_rpt_plots checks every
 * pair of these under the deuteranopia simulation of Machado, Oliveira and
 * Fernandes 2009. */
const char *const rpt__series_color[RPT_NCOLORS] = {"#0072b2", "#e69f00", "#56b4e9", "#d55e00",
                                                    "#009e73", "#f0e442", "#cc79a7", "#666666",
                                                    "#cccccc", "#000000"};
