/*
 * test_launch_job.c: the supervisor smdplan exec runs mpirun under, and the
 * files smdplan writes.
 *
 * Jobs are small shell commands standing in for mpirun: the exit status and
 * stderr tail come back; a hard timeout ends a job and everything it started
 * well inside the grace period; a process that outlives its launcher (a
 * rank whose mpirun is gone) is swept; nothing of any job stays behind; the
 * logs hold what the job wrote. Files: written whole, a foreign file is
 * never replaced without force, a file carrying smdplan's marker is; shell
 * quoting survives a round trip through sh.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/cli_int.h"
#include "launch/launch_job.h"
#include "common/text.h"
#include "data/data.h"
#include "test_db_util.h"
#include "common/outfile.h"

typedef test_scratch fixture;
#define setup test_scratch_setup
#define teardown test_scratch_teardown

/* A text file written the way every smdplan output is (common/outfile.h). */
static int write_text(const char *path, const char *what, const char *text, int force,
                      st_err *err)
{
    return outfile_write(path, what, text, strlen(text), force, err);
}

static void run_sh(const char *script, double timeout_s, const char *out_log, const char *err_log,
                   launch_job_result *r)
{
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)script, NULL};
    char *env[] = {(char *)"SMD_LAUNCH_TEST=42", NULL};
    launch_job l = {argv, env, timeout_s, NULL, out_log, err_log};
    st_err err = {0};
    assert_int_equal(launch_job_run(&l, r, &err), ST_OK);
}

/* No process of session sid is alive (zombies aside). */
static void session_gone(pid_t sid)
{
    pid_t p[4];
    assert_int_equal(launch_job_session_pids(sid, p, 4), 0);
}

static void test_exit_status_and_logs(void **state)
{
    fixture *f = *state;
    char out[600], errp[600];
    snprintf(out, sizeof out, "%s/out.log", f->dir);
    snprintf(errp, sizeof errp, "%s/err.log", f->dir);
    launch_job_result r;
    run_sh("echo step 1; echo \"env $SMD_LAUNCH_TEST\"; echo '-----' >&2; "
           "echo 'smdplan-rank: rank 1: boom' >&2; echo '*****' >&2; exit 3",
           0, out, errp, &r);
    assert_true(r.exited && r.exit_status == 3 && !r.timed_out && !r.signaled);
    assert_int_equal(r.left_behind, 0);
    char line[256];
    assert_string_equal(launch_job_last_line(&r, line, sizeof line), "smdplan-rank: rank 1: boom");
    /* a rank program's own line wins over what its launcher prints after */
    run_sh("echo 'smdplan-rank: rank 0: bad layout' >&2; echo 'Exit code:    2' >&2; exit 2", 0,
           NULL, NULL, &r);
    assert_string_equal(launch_job_error_line(&r, "smdplan-rank: ", line, sizeof line),
                        "smdplan-rank: rank 0: bad layout");
    assert_string_equal(launch_job_last_line(&r, line, sizeof line), "Exit code:    2");
    assert_string_equal(launch_job_error_line(&r, "other: ", line, sizeof line), "Exit code:    2");
    char *text = NULL;
    size_t n = 0;
    st_err err = {0};
    assert_int_equal(data_read_file(out, &text, &n, &err), ST_OK);
    assert_string_equal(text, "step 1\nenv 42\n");
    free(text);
    assert_int_equal(data_read_file(errp, &text, &n, &err), ST_OK);
    assert_non_null(strstr(text, "rank 1: boom"));
    free(text);
    /* a log is never written over an existing file */
    run_sh("echo again", 0, out, NULL, &r);
    assert_int_equal(data_read_file(out, &text, &n, &err), ST_OK);
    assert_string_equal(text, "step 1\nenv 42\n");
    free(text);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A hung job (with a child of its own, in its own process group as
 * mpirun's ranks are) ends at the timeout, all of it. */
static void test_timeout_ends_everything(void **state)
{
    (void)state;
    launch_job_result r;
    double t0 = now_s();
    run_sh("set -m; sleep 30 & set +m; sleep 30; echo never", 0.5, NULL, NULL, &r);
    double t = now_s() - t0;
    assert_true(r.timed_out);
    assert_true(t < 8.0); /* 0.5 s + at most the 5 s grace + the sweep */
    assert_int_equal(r.left_behind, 0);
    assert_true(r.signaled == SIGTERM || r.signaled == SIGKILL);
}

/* A process that outlives the launcher is swept when the launcher exits. */
static void test_orphan_swept(void **state)
{
    (void)state;
    launch_job_result r;
    double t0 = now_s();
    /* the background sleep keeps stdout open and survives sh's exit */
    run_sh("sleep 30 & echo started; exit 0", 0, NULL, NULL, &r);
    assert_true(now_s() - t0 < 8.0);
    assert_true(r.exited && r.exit_status == 0);
    assert_int_equal(r.left_behind, 0);
}

/* A program that cannot be run: status 127 and its message. */
static void test_cannot_start(void **state)
{
    (void)state;
    char *argv[] = {(char *)"/nonexistent/mpirun", NULL};
    launch_job l = {argv, NULL, 0, NULL, NULL, NULL};
    launch_job_result r;
    st_err err = {0};
    assert_int_equal(launch_job_run(&l, &r, &err), ST_OK);
    assert_true(r.exited && r.exit_status == 127);
    assert_non_null(strstr(r.stderr_tail, "cannot run /nonexistent/mpirun"));
}

static void test_session_helper(void **state)
{
    (void)state;
    session_gone(999999); /* no such session */
    pid_t p[4];
    assert_true(launch_job_session_pids(getsid(0), p, 4) >= 1); /* this test's own */
}

static void test_write_file(void **state)
{
    fixture *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/c.json", f->dir);
    st_err err = {0};
    assert_int_equal(write_text(path, "--write-catalog",
                                "{\"_generated_by\": \"smdplan bench\"}\n", 0, &err),
                     ST_OK);
    /* an existing file, even one smdplan wrote: kept, one line, unless forced */
    assert_int_equal(write_text(path, "--write-catalog",
                                    "{\"_generated_by\": \"smdplan bench\", \"x\": 1}\n", 0,
                                    &err),
                     ST_EINVAL);
    assert_non_null(strstr(err.msg, "--write-catalog"));
    assert_non_null(strstr(err.msg, "exists; not replaced (pass --force to replace it)"));
    assert_null(strchr(err.msg, '\n'));
    char *t = NULL;
    size_t n = 0;
    assert_int_equal(data_read_file(path, &t, &n, &err), ST_OK);
    assert_null(strstr(t, "\"x\": 1"));
    free(t);
    st_err_clear(&err);
    assert_int_equal(write_text(path, "--write-catalog",
                                    "{\"_generated_by\": \"smdplan bench\", \"x\": 1}\n", 1,
                                    &err),
                     ST_OK);
    assert_int_equal(data_read_file(path, &t, &n, &err), ST_OK);
    assert_non_null(strstr(t, "\"x\": 1"));
    free(t);
    /* a directory that is not there: bad input naming it, nothing left */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.json", f->dir);
    assert_int_equal(write_text(bad, "--out", "x", 0, &err), ST_ENOENT);
}

static void test_shell_quote(void **state)
{
    fixture *f = *state;
    char q[256], cmd[1200], path[600];
    text_shell_quote("plain-arg_1.json", q, sizeof q);
    assert_string_equal(q, "plain-arg_1.json");
    text_shell_quote("it's a $HOME `x` \"y\"", q, sizeof q);
    assert_string_equal(q, "'it'\\''s a $HOME `x` \"y\"'");
    text_shell_quote("", q, sizeof q);
    assert_string_equal(q, "''");
    /* what the shell reads back is the text itself */
    snprintf(path, sizeof path, "%s/q.txt", f->dir);
    text_shell_quote("it's a $HOME `x` \"y\"", q, sizeof q);
    snprintf(cmd, sizeof cmd, "printf '%%s' %s > %s", q, path);
    assert_int_equal(system(cmd), 0);
    char *t = NULL;
    size_t n = 0;
    st_err err = {0};
    assert_int_equal(data_read_file(path, &t, &n, &err), ST_OK);
    assert_string_equal(t, "it's a $HOME `x` \"y\"");
    free(t);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exit_status_and_logs, setup, teardown),
        cmocka_unit_test(test_timeout_ends_everything),
        cmocka_unit_test(test_orphan_swept),
        cmocka_unit_test(test_cannot_start),
        cmocka_unit_test(test_session_helper),
        cmocka_unit_test_setup_teardown(test_write_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shell_quote, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
