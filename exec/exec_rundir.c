/*
 * exec_rundir.c: the run directory of smdplan exec, where CONFIG.json is
 * written and the rank programs write RESULT.json: made fresh for each run
 * (never reused), or, with --import, one another launcher ran (an emitted
 * Slurm script), checked before it is recorded.
 *
 * An import is recorded once: the marker EXEC_IMPORT_MARKER is created with
 * O_EXCL before the record is written (exec_import_claim), so of two
 * imports of one directory at the same time one records and the other is
 * refused; it then says which run it became, or is removed when nothing
 * was recorded (exec_import_finish).
 */
#include "exec/exec_host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Sizes past any run's files: a CONFIG.json is a few KiB; a RESULT.json
 * holds a few hundred bytes per step and per rank. */
#define IMPORT_CONFIG_MAX ((off_t)1 << 20)
#define IMPORT_RESULT_MAX ((off_t)1 << 30)

/* ---- a run directory of its own ---- */

static void utc_stamp(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y%m%dT%H%M%SZ", &tm);
}

void exec_run_dir_default(char *buf, size_t n)
{
    char ts[32];
    utc_stamp(ts, sizeof ts);
    snprintf(buf, n, "%s/%s-%d", EXEC_RUNS_DIR, ts, (int)getpid());
}

void exec_path_absolute(const char *path, char *buf, size_t n)
{
    if (!path || !*path) {
        buf[0] = '\0';
        return;
    }
    if (path[0] == '/') {
        snprintf(buf, n, "%s", path);
        return;
    }
    char cwd[EXEC_RUN_DIR_MAX];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    snprintf(buf, n, "%s/%s", cwd, path);
}

int exec_run_dir_make(const char *dir, st_err *err)
{
    char parent[EXEC_RUN_DIR_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        /* create the parents that are missing (smdplan-runs/) */
        for (char *p = parent + 1; *p; p++) {
            if (*p != '/')
                continue;
            *p = '\0';
            if (mkdir(parent, 0755) != 0 && errno != EEXIST)
                return ST_RAISE(err, ST_EIO, "run directory %s: cannot create %s: %s", dir, parent,
                                strerror(errno));
            *p = '/';
        }
        if (mkdir(parent, 0755) != 0 && errno != EEXIST)
            return ST_RAISE(err, ST_EIO, "run directory %s: cannot create %s: %s", dir, parent,
                            strerror(errno));
    }
    if (mkdir(dir, 0755) != 0)
        return ST_RAISE(err, errno == EEXIST ? ST_EINVAL : ST_EIO,
                        "run directory %s: %s%s", dir, strerror(errno),
                        errno == EEXIST ? " (a run directory is never reused; give a new --run-dir)"
                                        : "");
    return ST_OK;
}

/* ---- --import: a run another launcher ran ---- */

/* DIR's marker is there, saying line: recorded ("run 12"), or an import
 * recording it ("recording (pid 345)": running, or one that stopped). */
static int refuse_marked(const char *dir, const char *line, st_err *err)
{
    if (!strncmp(line, "recording", 9))
        return ST_RAISE(err, ST_EINVAL, "--import %s: another import is recording it (%s; if "
                        "none is running, remove %s/%s); nothing recorded", dir, line, dir,
                        EXEC_IMPORT_MARKER);
    return ST_RAISE(err, ST_EINVAL, "--import %s: already recorded (%s); nothing recorded", dir,
                    line[0] ? line : EXEC_IMPORT_MARKER);
}

/* DIR is the run these options describe (its CONFIG.json is the one exec
 * builds from them, compared as the executor reads both) and was not
 * recorded before. */
int exec_import_check(const char *dir, const char *config_text, st_err *err)
{
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return ST_RAISE(err, ST_EINVAL, "--import %s: no such directory", dir);
    char path[EXEC_RUN_DIR_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, EXEC_IMPORT_MARKER);
    int marked = lstat(path, &sb) == 0;
    if (marked && !S_ISREG(sb.st_mode))
        return ST_RAISE(err, ST_EINVAL, "--import %s: %s is there and is not a regular file; "
                        "nothing recorded", dir, EXEC_IMPORT_MARKER);
    FILE *f = marked ? fopen(path, "r") : NULL;
    if (f) {
        char line[128] = "";
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
        line[strcspn(line, "\n")] = '\0';
        return refuse_marked(dir, line, err);
    }
    /* what the run wrote: plain files of a run's size (a FIFO or a device
     * in their place would block or never end) */
    static const struct {
        const char *name;
        off_t max_bytes;
    } files[] = {{"CONFIG.json", IMPORT_CONFIG_MAX}, {"RESULT.json", IMPORT_RESULT_MAX}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        if (stat(path, &sb) != 0) {
            if (errno == ENOENT && i == 1)
                continue; /* no result: the run failed before writing one */
            return ST_RAISE(err, ST_EINVAL, "--import %s: %s: %s", dir, files[i].name,
                            strerror(errno));
        }
        if (!S_ISREG(sb.st_mode))
            return ST_RAISE(err, ST_EINVAL, "--import %s: %s is not a regular file", dir,
                            files[i].name);
        if (sb.st_size > files[i].max_bytes)
            return ST_RAISE(err, ST_EINVAL, "--import %s: %s has %lld bytes; a run's has at "
                            "most %lld", dir, files[i].name, (long long)sb.st_size,
                            (long long)files[i].max_bytes);
    }
    snprintf(path, sizeof path, "%s/CONFIG.json", dir);
    exec_config *cfg = calloc(2, sizeof *cfg);
    if (!cfg)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    st_err e = {0};
    int rc = exec_config_read(path, &cfg[0], &e);
    if (rc != ST_OK)
        rc = ST_RAISE(err, ST_EINVAL, "--import %s: %s", dir, e.msg);
    else if ((rc = exec_config_parse(config_text, &cfg[1], err)) == ST_OK) {
        char *a = exec_config_json(&cfg[0]), *b = exec_config_json(&cfg[1]);
        if (!a || !b)
            rc = ST_RAISE(err, ST_ENOMEM, "out of memory");
        else if (strcmp(a, b) != 0)
            rc = ST_RAISE(err, ST_EINVAL, "--import %s: its CONFIG.json is not the run these "
                          "options describe (import with the options and from the directory "
                          "the script was emitted with)", dir);
        free(a);
        free(b);
    }
    free(cfg);
    /* a RESULT.json that is not what a rank program writes is bad input,
     * refused with its key named before anything is recorded */
    snprintf(path, sizeof path, "%s/RESULT.json", dir);
    if (rc == ST_OK && access(path, F_OK) == 0) {
        exec_result res;
        if (exec_result_read(path, &res, &e) != ST_OK)
            rc = ST_RAISE(err, ST_EINVAL, "--import %s: RESULT.json: %s; nothing recorded", dir,
                          e.msg);
        exec_result_free(&res);
    }
    return rc;
}

/* ---- --import: recorded once ---- */

/* What a marker says: its first line ("run 12", "recording (pid 345)"). */
static void marker_line(int fd, char *line, size_t n)
{
    ssize_t k = fd >= 0 ? pread(fd, line, n - 1, 0) : -1;
    line[k > 0 ? k : 0] = '\0';
    line[strcspn(line, "\n")] = '\0';
}

int exec_import_claim(const char *dir, int *fd, st_err *err)
{
    char path[EXEC_RUN_DIR_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, EXEC_IMPORT_MARKER);
    *fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (*fd < 0) {
        int e = errno;
        char line[128] = "";
        int other = e == EEXIST ? open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) : -1;
        marker_line(other, line, sizeof line);
        if (other >= 0)
            close(other);
        if (e != EEXIST)
            return ST_RAISE(err, st_errno_status(e), "--import %s: cannot create %s: %s; nothing "
                            "recorded", dir, EXEC_IMPORT_MARKER, strerror(e));
        return refuse_marked(dir, line, err);
    }
    char mark[64];
    int n = snprintf(mark, sizeof mark, "recording (pid %ld)\n", (long)getpid());
    if (write(*fd, mark, (size_t)n) != n) {
        int e = errno;
        close(*fd);
        unlink(path);
        *fd = -1;
        return ST_RAISE(err, st_errno_status(e), "--import %s: cannot write %s: %s; nothing "
                        "recorded", dir, EXEC_IMPORT_MARKER, strerror(e));
    }
    return ST_OK;
}

int exec_import_finish(const char *dir, int fd, int64_t run_id, st_err *err)
{
    char path[EXEC_RUN_DIR_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, EXEC_IMPORT_MARKER);
    if (run_id <= 0) { /* nothing recorded: the next import may try again */
        close(fd);
        unlink(path);
        return ST_OK;
    }
    char mark[64];
    int n = snprintf(mark, sizeof mark, "run %lld\n", (long long)run_id);
    int rc = ST_OK;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, mark, (size_t)n, 0) != n || fsync(fd) != 0)
        rc = ST_RAISE(err, ST_EIO, "recorded as run %lld, but %s/%s says so only in part: %s",
                      (long long)run_id, dir, EXEC_IMPORT_MARKER, strerror(errno));
    close(fd);
    return rc;
}
