/*
 * launch_job.c: running a job (mpirun and its ranks) under supervision.
 *
 * The job runs in a session of its own (setsid in the child), so that
 * everything it starts can be found again: Open MPI's mpirun puts each
 * local rank in a process group of its own, but in mpirun's session, so a
 * process-group kill would miss the ranks and a session sweep does not.
 * The supervisor:
 *   - copies the job's stdout and stderr to the log files given, passes
 *     stdout lines through to `echo` when asked (progress on a terminal),
 *     and keeps the last bytes of stderr for the error message;
 *   - on a hard timeout, or when smdplan itself is interrupted (SIGINT,
 *     SIGTERM, SIGHUP), sends SIGTERM to mpirun (which forwards it to the
 *     ranks and tears the job down), then after KILL_GRACE_S SIGKILL to
 *     every process left in the session;
 *   - after mpirun has exited, for whatever reason, sweeps the session with
 *     SIGKILL (a rank that outlives its launcher is never left behind) and
 *     waits until no process of it remains, up to SWEEP_WAIT_S.
 * Processes are found through /proc/PID/stat (field 6, the session id; see
 * proc(5)); a system without /proc gets the SIGTERM/SIGKILL of mpirun only.
 */
#include "launch/launch_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* After SIGTERM, how long mpirun gets to bring its ranks down. */
#define KILL_GRACE_S 5.0
/* How long the final sweep waits for the killed processes to go. */
#define SWEEP_WAIT_S 5.0
#define POLL_MS 100

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Session id of process pid (from /proc/pid/stat), or -1. */
static pid_t session_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ppid pgrp session ...": comm may hold spaces and
     * parentheses, so parse from the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    char state;
    int ppid, pgrp, sid;
    if (sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
        return -1;
    if (state == 'Z') /* a zombie is gone already; its parent reaps it */
        return -1;
    return (pid_t)sid;
}

int launch_job_session_pids(pid_t sid, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (session_of((pid_t)pid) == sid) {
            if (n < max)
                out[n] = (pid_t)pid;
            n++;
        }
    }
    closedir(d);
    return n;
}

/* SIGKILL every process of session sid; returns how many were signalled. */
static int sweep(pid_t sid)
{
    pid_t pids[512];
    int n = launch_job_session_pids(sid, pids, 512);
    int k = 0;
    for (int i = 0; i < n && i < 512; i++)
        if (kill(pids[i], SIGKILL) == 0)
            k++;
    return k;
}

/* Append len bytes to the tail buffer, keeping the last cap - 1. */
static void tail_add(char *tail, size_t cap, const char *b, size_t len)
{
    size_t have = strlen(tail);
    if (len >= cap - 1) {
        memcpy(tail, b + len - (cap - 1), cap - 1);
        tail[cap - 1] = '\0';
        return;
    }
    if (have + len >= cap) {
        size_t drop = have + len - (cap - 1);
        memmove(tail, tail + drop, have - drop + 1);
        have -= drop;
    }
    memcpy(tail + have, b, len);
    tail[have + len] = '\0';
}

/* Line-buffered pass-through of stdout to echo. */
typedef struct linebuf {
    char b[4096];
    size_t n;
} linebuf;

static void echo_lines(linebuf *lb, FILE *echo, const char *b, size_t len, int flush)
{
    for (size_t i = 0; i < len; i++) {
        if (lb->n < sizeof lb->b - 1)
            lb->b[lb->n++] = b[i];
        if (b[i] == '\n') {
            fwrite(lb->b, 1, lb->n, echo);
            fflush(echo);
            lb->n = 0;
        }
    }
    if (flush && lb->n) {
        fwrite(lb->b, 1, lb->n, echo);
        fputc('\n', echo);
        fflush(echo);
        lb->n = 0;
    }
}

static int open_log(const char *path)
{
    if (!path)
        return -1;
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
}

/* In the forked child: its own session, default signals, the pipes as
 * stdout and stderr, /dev/null as stdin, the extra environment, then the
 * program; never returns. */
_Noreturn static void run_child(const launch_job *l, const int out_pipe[2], const int err_pipe[2])
{
    setsid();
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, STDIN_FILENO);
        close(devnull);
    }
    for (int i = 0; l->env && l->env[i]; i++) {
        char kv[256];
        snprintf(kv, sizeof kv, "%s", l->env[i]);
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            setenv(kv, eq + 1, 1);
        }
    }
    execvp(l->argv[0], l->argv);
    fprintf(stderr, "smdplan: cannot run %s: %s\n", l->argv[0], strerror(errno));
    _exit(127);
}

/* What a job held while it ran, given back: the log files and the signal
 * handlers as they were before it. */
static void job_end(int out_log, int err_log, const struct sigaction *old_int,
                    const struct sigaction *old_term, const struct sigaction *old_hup)
{
    if (out_log >= 0)
        close(out_log);
    if (err_log >= 0)
        close(err_log);
    sigaction(SIGINT, old_int, NULL);
    sigaction(SIGTERM, old_term, NULL);
    sigaction(SIGHUP, old_hup, NULL);
}

int launch_job_run(const launch_job *l, launch_job_result *r, st_err *err)
{
    memset(r, 0, sizeof *r);
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (out_pipe[i] >= 0)
                close(out_pipe[i]);
            if (err_pipe[i] >= 0)
                close(err_pipe[i]);
        }
        return ST_RAISE(err, ST_EIO, "launch: pipe: %s", strerror(e));
    }
    int out_log = open_log(l->stdout_log), err_log = open_log(l->stderr_log);

    struct sigaction sa, old_int, old_term, old_hup;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    got_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    fflush(stdout);
    fflush(stderr);
    double start = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(out_pipe[0]);
        close(out_pipe[1]);
        close(err_pipe[0]);
        close(err_pipe[1]);
        job_end(out_log, err_log, &old_int, &old_term, &old_hup);
        return ST_RAISE(err, ST_EIO, "launch: fork: %s", strerror(e));
    }
    if (pid == 0)
        run_child(l, out_pipe, err_pipe);
    close(out_pipe[1]);
    close(err_pipe[1]);

    linebuf lb = {.n = 0};
    int open_fds = 2, status = 0, reaped = 0;
    double term_at = 0, killed_at = 0;
    struct pollfd pf[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    char buf[4096];
    for (;;) {
        if (!reaped) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                reaped = 1;
        }
        if (reaped && open_fds == 0)
            break;
        double t = now_s();
        if (!reaped && !term_at && got_signal) {
            r->interrupted = (int)got_signal;
            kill(pid, SIGTERM);
            term_at = t;
        }
        if (!reaped && !term_at && l->timeout_s > 0 && t - start > l->timeout_s) {
            r->timed_out = 1;
            kill(pid, SIGTERM);
            term_at = t;
        }
        if (!reaped && term_at && !killed_at && t - term_at > KILL_GRACE_S) {
            sweep(pid);
            kill(pid, SIGKILL);
            killed_at = t;
        }
        /* mpirun gone but a rank keeps the pipes open: sweep it */
        if (reaped && open_fds > 0 && !killed_at) {
            sweep(pid);
            killed_at = t;
        }
        int pr = poll(pf, 2, POLL_MS);
        if (pr < 0 && errno != EINTR)
            break;
        for (int i = 0; pr > 0 && i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(pf[i].fd, buf, sizeof buf);
            if (n <= 0) {
                close(pf[i].fd);
                pf[i].fd = -1;
                open_fds--;
                continue;
            }
            int log = i == 0 ? out_log : err_log;
            if (log >= 0 && write(log, buf, (size_t)n) != n) {
                close(log);
                if (i == 0)
                    out_log = -1;
                else
                    err_log = -1;
            }
            if (i == 0 && l->echo)
                echo_lines(&lb, l->echo, buf, (size_t)n, 0);
            if (i == 1)
                tail_add(r->stderr_tail, sizeof r->stderr_tail, buf, (size_t)n);
        }
    }
    if (l->echo)
        echo_lines(&lb, l->echo, "", 0, 1);
    r->wall_s = now_s() - start;

    /* nothing of the job stays behind */
    double sweep_start = now_s();
    pid_t left[8];
    while (launch_job_session_pids(pid, left, 8) > 0 && now_s() - sweep_start < SWEEP_WAIT_S) {
        sweep(pid);
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    r->left_behind = launch_job_session_pids(pid, left, 8);
    if (r->left_behind < 0)
        r->left_behind = 0;

    if (WIFEXITED(status)) {
        r->exited = 1;
        r->exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r->signaled = WTERMSIG(status);
        r->exit_status = 128 + r->signaled;
    }
    job_end(out_log, err_log, &old_int, &old_term, &old_hup);
    return ST_OK;
}

const char *launch_job_error_line(const launch_job_result *r, const char *prefix, char *buf,
                                  size_t n)
{
    const char *t = r->stderr_tail, *hit = NULL;
    for (const char *p = t; prefix && (p = strstr(p, prefix)); p++)
        if (p == t || p[-1] == '\n')
            hit = p;
    if (!hit)
        return launch_job_last_line(r, buf, n);
    const char *e = strchr(hit, '\n');
    size_t len = e ? (size_t)(e - hit) : strlen(hit);
    snprintf(buf, n, "%.*s", (int)len, hit);
    return buf;
}

const char *launch_job_last_line(const launch_job_result *r, char *buf, size_t n)
{
    /* the last non-empty line of the stderr tail that is not mpirun's
     * decoration (lines of dashes or asterisks) */
    const char *t = r->stderr_tail;
    const char *best = NULL;
    size_t best_len = 0;
    for (const char *p = t; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        size_t k = 0;
        while (k < len && (p[k] == ' ' || p[k] == '\t'))
            k++;
        int deco = 1;
        for (size_t j = k; j < len; j++)
            if (p[j] != '-' && p[j] != '*' && p[j] != '=' && p[j] != ' ' && p[j] != '\r')
                deco = 0;
        if (len > k && !deco) {
            best = p + k;
            best_len = len - k;
        }
        p = e ? e + 1 : p + len;
    }
    if (!best) {
        buf[0] = '\0';
        return buf;
    }
    while (best_len > 0 && (best[best_len - 1] == '\r' || best[best_len - 1] == ' '))
        best_len--;
    snprintf(buf, n, "%.*s", (int)best_len, best);
    return buf;
}
