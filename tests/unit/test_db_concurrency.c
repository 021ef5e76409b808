/*
 * test_db_concurrency.c: several processes recording at once, and writers
 * killed at the worst moment.
 *
 * 8 processes (fork) each write 1000 small records, one transaction per
 * record as the CLI does, into a file none of them has created yet (so they
 * also race to create and migrate it); afterwards every record is there and
 * PRAGMA integrity_check says ok. A writer killed with SIGKILL in the middle
 * of a transaction leaves the committed records and nothing of its own; one
 * killed while committing in a loop leaves a file that checks ok and takes
 * new records.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "data/db_int.h"
#include "test_db_util.h"

#define WRITERS 8
#define RECORDS_EACH 1000

typedef tdb_fixture fixture;
#define setup tdb_setup
#define teardown tdb_teardown

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* PRAGMA integrity_check's first line. */
static void assert_intact(const char *path)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_close(h), SQLITE_OK);
}

static int64_t count(const char *path, const char *sql)
{
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(path, DB_OPEN_READ, &d, &err), ST_OK);
    int64_t n = raw_int(d, sql);
    db_close(d);
    return n;
}

/* One writer: open (creating or migrating as needed), record n, close.
 * Returns the number of failures (the exit status of the child). */
static int writer(const char *path, int who, int n)
{
    st_err err = {0};
    db *d = NULL;
    if (db_open(path, DB_OPEN_WRITE, &d, &err) != ST_OK) {
        fprintf(stderr, "writer %d: %s\n", who, err.msg);
        return 100;
    }
    db_provenance p = test_provenance();
    int failures = 0;
    for (int i = 0; i < n; i++) {
        plan_cal_report c;
        small_calibration(&c, who * n + i);
        st_err_clear(&err);
        if (db_record_calibration(d, &p, "runs.csv", &c, NULL, &err) != ST_OK) {
            if (failures++ == 0)
                fprintf(stderr, "writer %d, record %d: %s\n", who, i, err.msg);
        }
    }
    db_close(d);
    return failures > 99 ? 99 : failures;
}

static void test_eight_writers(void **state)
{
    fixture *f = *state;
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pid[WRITERS];
    double t0 = now_s();
    for (int w = 0; w < WRITERS; w++) {
        pid[w] = fork();
        assert_true(pid[w] >= 0);
        if (pid[w] == 0) {
            close(go[1]);
            char c;
            /* start together: the parent closes the pipe */
            while (read(go[0], &c, 1) > 0)
                ;
            _exit(writer(f->path, w, RECORDS_EACH));
        }
    }
    close(go[0]);
    close(go[1]);
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        assert_int_equal(waitpid(pid[w], &status, 0), pid[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    double dt = now_s() - t0;
    print_message("%d writers x %d records: %.2f s (%.0f records/s)\n", WRITERS, RECORDS_EACH, dt,
                  WRITERS * RECORDS_EACH / dt);
    assert_int_equal(count(f->path, "SELECT count(*) FROM records"), WRITERS * RECORDS_EACH);
    assert_int_equal(count(f->path, "SELECT count(*) FROM calibrations"), WRITERS * RECORDS_EACH);
    assert_int_equal(count(f->path, "SELECT count(*) FROM calibration_sources"),
                     WRITERS * RECORDS_EACH);
    assert_int_equal(count(f->path, "SELECT count(*) FROM calibration_params"),
                     WRITERS * RECORDS_EACH * PLAN_EFF__COUNT);
    /* every writer's every record, once: rows are 13 + who * n + i */
    assert_int_equal(count(f->path, "SELECT count(DISTINCT rows) FROM calibrations"),
                     WRITERS * RECORDS_EACH);
    assert_int_equal(count(f->path, "SELECT min(rows) FROM calibrations"), 13);
    assert_int_equal(count(f->path, "SELECT max(rows) FROM calibrations"),
                     13 + WRITERS * RECORDS_EACH - 1);
    assert_int_equal(count(f->path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    assert_intact(f->path);
}

/* A child that tells the parent it is ready by a byte on ready[1]: fork's
 * result, with the other end of the pipe closed in the child. */
static pid_t fork_child(int ready[2])
{
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        close(ready[0]);
    return pid;
}

/* In the parent: once the child is ready and delay_ns later, kill -9 it
 * and reap it; its status. */
static int kill_when_ready(pid_t pid, int ready[2], long delay_ns)
{
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    if (delay_ns > 0) {
        struct timespec t = {0, delay_ns};
        nanosleep(&t, NULL);
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* Kill -9 inside an open transaction: the records committed before it are
 * all there, none of the uncommitted ones, and the write lock is free. */
static void test_killed_mid_transaction(void **state)
{
    fixture *f = *state;
    int ready[2];
    pid_t pid = fork_child(ready);
    if (pid == 0) {
        if (writer(f->path, 0, 10) != 0)
            _exit(1);
        st_err err = {0};
        db *d = NULL;
        if (db_open(f->path, DB_OPEN_WRITE, &d, &err) != ST_OK || db__begin(d, &err) != ST_OK)
            _exit(2);
        db_provenance p = test_provenance();
        for (int i = 0; i < 500; i++) {
            int64_t id;
            if (db__record_insert(d, &p, "run", "uncommitted", &id, &err) != ST_OK)
                _exit(3);
        }
        /* big enough to have spilled pages to the WAL before the commit */
        if (write(ready[1], "x", 1) != 1)
            _exit(4);
        for (;;)
            pause();
    }
    int status = kill_when_ready(pid, ready, 0);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    assert_intact(f->path);
    assert_int_equal(count(f->path, "SELECT count(*) FROM records"), 10);
    assert_int_equal(count(f->path, "SELECT count(*) FROM records WHERE summary = 'uncommitted'"),
                     0);
    /* the lock died with the writer: the next one records at once */
    assert_int_equal(writer(f->path, 1, 5), 0);
    assert_int_equal(count(f->path, "SELECT count(*) FROM records"), 15);
    assert_intact(f->path);
}

/* Kill -9 at an arbitrary point of a loop of commits (several times, at
 * different moments): every record is either there whole or not at all. */
static void test_killed_while_committing(void **state)
{
    fixture *f = *state;
    assert_int_equal(writer(f->path, 0, 1), 0);
    for (int round = 0; round < 3; round++) {
        int ready[2];
        pid_t pid = fork_child(ready);
        if (pid == 0) {
            st_err err = {0};
            db *d = NULL;
            if (db_open(f->path, DB_OPEN_WRITE, &d, &err) != ST_OK)
                _exit(2);
            db_provenance p = test_provenance();
            for (int i = 0;; i++) {
                plan_cal_report cal;
                small_calibration(&cal, 1000 + i);
                db_record_calibration(d, &p, "runs.csv", &cal, NULL, &err);
                /* the parent's clock starts after the first commit */
                if (i == 0 && write(ready[1], "x", 1) != 1)
                    _exit(4);
            }
        }
        int status = kill_when_ready(pid, ready, 20000000L + 15000000L * round);
        assert_true(WIFSIGNALED(status));
        assert_intact(f->path);
        /* whole records only: each calibration has its parameters and its source */
        int64_t recs = count(f->path, "SELECT count(*) FROM records");
        assert_true(recs > 1);
        assert_int_equal(count(f->path, "SELECT count(*) FROM calibrations"), recs);
        assert_int_equal(count(f->path, "SELECT count(*) FROM calibration_sources"), recs);
        assert_int_equal(count(f->path, "SELECT count(*) FROM calibration_params"),
                         recs * PLAN_EFF__COUNT);
    }
    assert_int_equal(writer(f->path, 2, 3), 0);
    assert_intact(f->path);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_eight_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_mid_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_while_committing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
