/*
 * launch_job.h: run a job (mpirun and the ranks it starts) under
 * supervision: a session of its own, logs, a hard timeout, interruption,
 * and nothing left behind (launch_job.c).
 */
#ifndef SMD_LAUNCH_JOB_H
#define SMD_LAUNCH_JOB_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/st.h"

typedef struct launch_job {
    char **argv;                 /* program and arguments, NULL-terminated (PATH searched) */
    char **env;                  /* "NAME=VALUE" added to the environment, NULL-terminated
                                  * (may be NULL); kept alive by the caller */
    double timeout_s;            /* hard wall-clock limit; 0: none */
    FILE *echo;                  /* the job's stdout lines are copied here (NULL: not) */
    const char *stdout_log;      /* files created for the job's stdout and stderr (NULL:
                                  * none); never an existing file */
    const char *stderr_log;
} launch_job;

typedef struct launch_job_result {
    int exited;                  /* 1: exited (exit_status is its code) */
    int exit_status;             /* exit code, or 128 + signal when killed by one */
    int signaled;                /* the signal that ended it, or 0 */
    int timed_out;               /* 1: ended by the hard timeout */
    int interrupted;             /* the signal smdplan received (SIGINT ...), or 0 */
    double wall_s;
    int left_behind;             /* processes of the job alive after the final sweep (0) */
    char stderr_tail[4096];      /* the last bytes of the job's stderr */
} launch_job_result;

/* Run l->argv as described in launch_job.c; returns when the job and
 * everything it started have ended. ST_EIO when it cannot be started
 * (pipe, fork); a job that fails is a result (r), not an error. */
int launch_job_run(const launch_job *l, launch_job_result *r, st_err *err);

/* Processes of session sid (up to max pids in out); the count, or -1
 * without /proc. */
int launch_job_session_pids(pid_t sid, pid_t *out, int max);

/* The last line of the job's stderr that starts with prefix (a rank
 * program's own error, "smdplan-rank: "), else the last meaningful line,
 * into buf. Returns buf. */
const char *launch_job_error_line(const launch_job_result *r, const char *prefix, char *buf,
                                  size_t n);

/* The last meaningful line of the job's stderr into buf. Returns buf. */
const char *launch_job_last_line(const launch_job_result *r, char *buf, size_t n);

/* ---- the hostfile mpirun is given (launch_hostfile.c) ---- */

#define LAUNCH_HOSTFILE_MAX (1 << 20)       /* bytes: tens of thousands of hosts */
#define LAUNCH_HOSTFILE_SLOTS_MAX (1 << 20) /* a slots=N past any host's cores */

typedef struct launch_hostfile {
    int hosts;                   /* lines that name a host */
    int slots_given;             /* hosts with slots=N */
    int most_slots;              /* the largest slots=N: the most ranks mpirun places
                                  * on one host; 0 when none is given */
} launch_hostfile;

/* Parse len bytes of text (not NUL-terminated) named name in messages.
 * ST_EINVAL naming the line for a slots or max_slots value that is not a
 * count, or a NUL byte, with out zeroed. */
int launch_hostfile_parse(const char *text, size_t len, const char *name, launch_hostfile *out,
                       st_err *err);

/* Read and parse path: a regular file of at most LAUNCH_HOSTFILE_MAX bytes
 * (a FIFO, device or directory is refused without blocking). ST_EINVAL /
 * ST_ENOENT naming it. */
int launch_hostfile_read(const char *path, launch_hostfile *out, st_err *err);

#endif
