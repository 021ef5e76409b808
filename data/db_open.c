/*
 * db_open.c: opening the record database, the one wrapper of SQLite's
 * errors, statement helpers and provenance.
 *
 * Opening checks before it changes anything: the file must be an SQLite
 * database (else SQLite says "file is not a database"), carry smdplan's
 * application_id (or be empty), have a schema version this build knows,
 * and pass PRAGMA quick_check (files up to DB_FULL_CHECK_MAX_BYTES; larger
 * ones a cheap check, and the full check on demand with db_check). Only
 * then does a writer switch the file to
 * WAL mode and migrate it, so a refused file keeps every byte it had. A
 * reader additionally sets query_only, so nothing it runs can write.
 *
 * Writers use WAL with synchronous=NORMAL: a commit survives the process
 * being killed at any point (the WAL is replayed or ignored as a whole
 * transaction), and concurrent writers queue in the busy handler for up to
 * DB_BUSY_TIMEOUT_MS (sqlite.org/wal.html).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <gsl/gsl_version.h>

#include "common/version.h"
#include "data/db_int.h"
#include "smd_config.h"

const char *db_default_path(const char *path)
{
    if (path && *path)
        return path;
    const char *env = getenv("SMDPLAN_DB");
    if (env && *env)
        return env;
    return "smdplan.db";
}

int db_record_disabled(void)
{
    const char *env = getenv("SMDPLAN_NO_RECORD");
    return env && *env && strcmp(env, "0") != 0;
}

int db__status(int sqlite_rc)
{
    switch (sqlite_rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return ST_OK;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return ST_EPARSE;
    case SQLITE_NOMEM:
        return ST_ENOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_PROTOCOL:
        return ST_EIO;
    default:
        return ST_EINTERNAL;
    }
}

int db__fail(db *d, int sqlite_rc, st_err *err, const char *what)
{
    const char *msg = d && d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(sqlite_rc);
    int code = db__status(sqlite_rc);
    if (d)
        d->last_rc = sqlite_rc;
    if (code == ST_OK)
        code = ST_EINTERNAL;
    return ST_RAISE(err, code, "%s: %s: %s", d ? d->shown : "database", what, msg);
}

int db__prepare(db *d, const char *sql, sqlite3_stmt **st, st_err *err)
{
    *st = NULL;
    int rc = sqlite3_prepare_v2(d->h, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*st);
        *st = NULL;
        return db__fail(d, rc, err, "prepare");
    }
    return ST_OK;
}

int db__exec(db *d, const char *sql, st_err *err)
{
    const char *p = sql;
    while (p && *p) {
        sqlite3_stmt *st = NULL;
        const char *tail = NULL;
        int rc = sqlite3_prepare_v2(d->h, p, -1, &st, &tail);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(st);
            return db__fail(d, rc, err, "prepare");
        }
        if (!st) /* only whitespace or a comment was left */
            break;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            ;
        if (rc != SQLITE_DONE) {
            int r = db__fail(d, rc, err, "exec");
            sqlite3_finalize(st);
            return r;
        }
        sqlite3_finalize(st);
        p = tail;
    }
    return ST_OK;
}

int db__begin(db *d, st_err *err)
{
    return db__exec(d, "BEGIN IMMEDIATE", err);
}

int db__commit(db *d, st_err *err)
{
    return db__exec(d, "COMMIT", err);
}

void db__rollback(db *d)
{
    if (d && d->h && !sqlite3_get_autocommit(d->h)) {
        st_err ignore = {0};
        db__exec(d, "ROLLBACK", &ignore);
    }
}

int db_schema_version(const db *d)
{
    return d ? d->version : 0;
}

/* Count the tables of a file that says it is version 0: none means empty. */
static int count_tables(db *d, int64_t *n, st_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, "SELECT count(*) FROM sqlite_master", &st, err);
    if (rc != ST_OK)
        return rc;
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    else
        rc = db__fail(d, s, err, "read schema");
    sqlite3_finalize(st);
    return rc;
}

/* PRAGMA quick_check: "ok", or the first problem found (O(N) in the file,
 * without the index cross-checks of integrity_check). */
static int quick_check(db *d, st_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, "PRAGMA quick_check(1)", &st, err);
    if (rc != ST_OK)
        return rc;
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        const char *r = (const char *)sqlite3_column_text(st, 0);
        if (!r || strcmp(r, "ok") != 0)
            rc = ST_RAISE(err, ST_EPARSE, "%s: corrupt database (quick_check: %s)", d->shown,
                          r ? r : "no answer");
    } else {
        rc = db__fail(d, s, err, "integrity check");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Files up to this size get PRAGMA quick_check on every open (a few ms per
 * MiB: 0.7 s for a 177 MB file); larger ones the cheap check (SQLite
 * checks every page it loads besides), and the full one on demand
 * (db_check, `smdplan history --check`). */
int64_t db__full_check_max_bytes = DB_FULL_CHECK_MAX_BYTES;

/* What every open can afford on a file of any size: the page and freelist
 * counts of the header agree, and the newest record is readable (the
 * right-most path of the records b-tree, where every write goes). SQLite
 * checks each page it loads, so damage elsewhere surfaces as "corrupt" when
 * a query reaches it. */
static int cheap_check(db *d, st_err *err)
{
    int64_t pages = 0, free_pages = 0;
    int rc = db__pragma_int(d, "page_count", &pages, err);
    if (rc == ST_OK)
        rc = db__pragma_int(d, "freelist_count", &free_pages, err);
    if (rc != ST_OK)
        return rc;
    if (pages < 1 || free_pages < 0 || free_pages >= pages)
        return ST_RAISE(err, ST_EPARSE, "%s: corrupt database (%lld free of %lld pages)",
                        d->shown, (long long)free_pages, (long long)pages);
    sqlite3_stmt *st = NULL;
    rc = db__prepare(d, "SELECT * FROM records ORDER BY id DESC LIMIT 1", &st, err);
    if (rc != ST_OK)
        return rc;
    int s = sqlite3_step(st);
    if (s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db__fail(d, s, err, "read the newest record");
    sqlite3_finalize(st);
    return rc;
}

int db_check(db *d, char *report, size_t n, st_err *err)
{
    if (report && n)
        report[0] = '\0';
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, "PRAGMA integrity_check(" DB_CHECK_PROBLEMS_MAX_STR ")", &st, err);
    if (rc != ST_OK)
        return rc;
    int problems = 0, s;
    size_t used = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *r = (const char *)sqlite3_column_text(st, 0);
        if (r && strcmp(r, "ok") == 0)
            continue;
        problems++;
        if (report && used + 2 < n)
            used += (size_t)snprintf(report + used, n - used, "%s%s", used ? "\n" : "",
                                     r ? r : "no answer");
    }
    if (s != SQLITE_DONE && db__status(s) == ST_EPARSE)
        rc = ST_RAISE(err, ST_EPARSE, "%s: corrupt database (integrity_check stopped: %s)",
                      d->shown, sqlite3_errmsg(d->h));
    else if (s != SQLITE_DONE)
        rc = db__fail(d, s, err, "integrity check");
    else if (problems)
        rc = ST_RAISE(err, ST_EPARSE, "%s: corrupt database (integrity_check found %d "
                      "problem%s%s)", d->shown, problems, problems == 1 ? "" : "s",
                      problems >= DB_CHECK_PROBLEMS_MAX ? " or more" : "");
    sqlite3_finalize(st);
    return rc;
}

/* Everything that must hold before a byte is written, read in one read
 * transaction (another process may be migrating the file meanwhile: the
 * version and the application id must come from the same snapshot). */
static int check_snapshot(db *d, st_err *err);

static int check_file(db *d, st_err *err)
{
    int rc = db__exec(d, "BEGIN", err);
    if (rc != ST_OK)
        return rc;
    rc = check_snapshot(d, err);
    st_err ignore = {0};
    db__exec(d, "COMMIT", &ignore);
    return rc;
}

static int check_snapshot(db *d, st_err *err)
{
    int64_t app = 0, ver = 0, ntab = 0;
    int rc = db__pragma_int(d, "application_id", &app, err);
    if (rc == ST_EPARSE) {
        /* "file is not a database": say what that means for the user. */
        st_err_clear(err);
        return ST_RAISE(err, ST_EPARSE, "%s: not a smdplan database (%s)", d->shown,
                        sqlite3_errmsg(d->h));
    }
    if (rc == ST_OK)
        rc = db__pragma_int(d, "user_version", &ver, err);
    if (rc != ST_OK)
        return rc;
    if (app != DB_APPLICATION_ID) {
        if (app == 0 && ver == 0 && (rc = count_tables(d, &ntab, err)) != ST_OK)
            return rc;
        if (app != 0 || ver != 0 || ntab != 0)
            return ST_RAISE(err, ST_EPARSE,
                            "%s: not a smdplan database (an SQLite file of another application: "
                            "application_id %lld, user_version %lld)",
                            d->shown, (long long)app, (long long)ver);
    }
    if (ver > DB_SCHEMA_VERSION)
        return ST_RAISE(err, ST_EUNSUPPORTED,
                        "%s: written by a newer smdplan (schema version %lld; this build knows up "
                        "to %d); not changed",
                        d->shown, (long long)ver, DB_SCHEMA_VERSION);
    d->version = (int)ver;
    if (ver > 0) {
        struct stat sb;
        if (stat(d->path, &sb) == 0 && sb.st_size > db__full_check_max_bytes)
            rc = cheap_check(d, err);
        else
            rc = quick_check(d, err);
    }
    return rc;
}

/* Run sql, retrying while another process holds the lock. SQLite does not
 * call the busy handler for every lock it waits on (switching the journal
 * mode of a file another process is creating is one), so the first steps
 * of an open wait here, up to the same timeout. */
static int exec_patient(db *d, const char *sql, st_err *err)
{
    const long step_ms[] = {1, 2, 5, 10, 20, 50};
    long waited = 0;
    for (int i = 0;; i++) {
        st_err probe = {0};
        d->last_rc = SQLITE_OK;
        int rc = db__exec(d, sql, &probe);
        int busy = (d->last_rc & 0xff) == SQLITE_BUSY || (d->last_rc & 0xff) == SQLITE_LOCKED;
        if (rc == ST_OK || !busy || waited >= DB_BUSY_TIMEOUT_MS) {
            if (rc != ST_OK)
                ST_RAISE(err, probe.code, "%s", probe.msg);
            return rc;
        }
        long ms = step_ms[i < 5 ? i : 5];
        struct timespec t = {0, ms * 1000000L};
        nanosleep(&t, NULL);
        waited += ms;
    }
}

/* "file:PATH?immutable=1" with PATH percent-encoded where a URI needs it. */
static int immutable_uri(const char *path, char *buf, size_t n)
{
    size_t u = (size_t)snprintf(buf, n, "file:");
    for (const char *c = path; *c && u + 4 < n; c++) {
        if (*c == '%' || *c == '?' || *c == '#')
            u += (size_t)snprintf(buf + u, n - u, "%%%02X", (unsigned char)*c);
        else
            buf[u++] = *c;
    }
    if (u + 16 >= n)
        return -1;
    snprintf(buf + u, n - u, "?immutable=1");
    return 0;
}

static int open_handle(db *d, int flags, st_err *err)
{
    int s = sqlite3_open_v2(d->path, &d->h, flags, NULL);
    if (s != SQLITE_OK)
        return ST_RAISE(err, ST_EIO, "%s: cannot open: %s", d->shown,
                        d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(s));
    sqlite3_extended_result_codes(d->h, 1);
    sqlite3_busy_timeout(d->h, DB_BUSY_TIMEOUT_MS);
    return ST_OK;
}

/* A reader of a WAL file in a directory it cannot write, with no -shm file
 * (so no connection is open anywhere), cannot set up the shared index;
 * such a file cannot change under it, so it is read as immutable. */
static int reopen_immutable(db *d, st_err *err)
{
    char shm[1100], uri[2200];
    struct stat sb;
    snprintf(shm, sizeof shm, "%s-shm", d->path);
    if (stat(shm, &sb) == 0 || immutable_uri(d->path, uri, sizeof uri) != 0)
        return ST_EIO;
    sqlite3_close_v2(d->h);
    d->h = NULL;
    int s = sqlite3_open_v2(uri, &d->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    if (s != SQLITE_OK)
        return ST_RAISE(err, ST_EIO, "%s: cannot open: %s", d->shown,
                        d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(s));
    sqlite3_extended_result_codes(d->h, 1);
    return ST_OK;
}

int db_open(const char *path, int mode, db **out, st_err *err)
{
    *out = NULL;
    if (!path || !*path)
        return ST_RAISE(err, ST_EINVAL, "database: empty path");
    if (mode != DB_OPEN_READ && mode != DB_OPEN_WRITE)
        return ST_RAISE(err, ST_EINVAL, "database %s: bad open mode %d", path, mode);
    struct stat sb;
    if (mode == DB_OPEN_READ && stat(path, &sb) != 0) {
        char shown[ST_PATH_SHOWN];
        return ST_RAISE(err, st_errno_status(errno), "%s: %s",
                        st_path_fit(path, shown, sizeof shown),
                        errno == ENOENT ? "no such database (nothing recorded there yet)"
                                        : strerror(errno));
    }
    /* A pipe or socket would block the first read forever; a device such
     * as /dev/null takes every write and would get a journal beside it. */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        char shown[ST_PATH_SHOWN];
        return ST_RAISE(err, ST_EINVAL, "%s: not a database file (a %s)",
                        st_path_fit(path, shown, sizeof shown),
                        S_ISDIR(sb.st_mode)                          ? "directory"
                        : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "device"
                                                                     : "pipe or socket");
    }
    char shown[ST_PATH_SHOWN];
    st_path_fit(path, shown, sizeof shown);
    if (strlen(path) >= sizeof ((db *)0)->path)
        return ST_RAISE(err, ST_EINVAL, "%s: a database path of %zu bytes; at most %zu",
                        shown, strlen(path), sizeof ((db *)0)->path - 1);
    db *d = calloc(1, sizeof *d);
    if (!d)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", shown);
    d->mode = mode;
    snprintf(d->path, sizeof d->path, "%s", path);
    snprintf(d->shown, sizeof d->shown, "%s", shown);

    int rc = open_handle(d, mode == DB_OPEN_READ ? SQLITE_OPEN_READONLY
                                                 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                         err);
    if (rc != ST_OK)
        goto fail;
    if (mode == DB_OPEN_WRITE && sqlite3_db_readonly(d->h, "main") == 1) {
        rc = ST_RAISE(err, ST_EIO, "%s: read-only (the file or its directory cannot be written)",
                      d->shown);
        goto fail;
    }
    if (mode == DB_OPEN_READ) {
        /* Try first without raising: a WAL file in a read-only directory
         * fails here and is read as immutable instead. */
        st_err probe = {0};
        d->last_rc = SQLITE_OK;
        rc = check_file(d, &probe);
        int ext = d->last_rc;
        if (rc == ST_EIO &&
            (ext == SQLITE_READONLY_CANTINIT || ext == SQLITE_READONLY_DIRECTORY) &&
            reopen_immutable(d, err) == ST_OK)
            rc = check_file(d, err);
        else if (rc != ST_OK)
            ST_RAISE(err, probe.code, "%s", probe.msg);
    } else {
        rc = check_file(d, err);
    }
    if (rc != ST_OK)
        goto fail;
    if (mode == DB_OPEN_READ) {
        if (d->version == 0) {
            rc = ST_RAISE(err, ST_ENOENT, "%s: holds no records (empty database)", d->shown);
            goto fail;
        }
        rc = db__exec(d, "PRAGMA query_only = ON", err);
    } else {
        rc = exec_patient(d, "PRAGMA journal_mode = WAL", err);
        if (rc == ST_OK)
            rc = db__exec(d, "PRAGMA synchronous = NORMAL", err);
        /* Migrations run before foreign keys are enforced: a step that
         * makes a table again (version 4's records) drops the table the
         * others reference, as SQLite's procedure for schema changes does
         * with foreign keys off. */
        if (rc == ST_OK)
            rc = db__migrate(d, db__migrations, db__nmigrations, DB_SCHEMA_VERSION, err);
        if (rc == ST_OK)
            rc = db__exec(d, "PRAGMA foreign_keys = ON", err);
    }
    if (rc != ST_OK)
        goto fail;
    *out = d;
    return ST_OK;
fail:
    db_close(d);
    return rc;
}

void db_close(db *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->ncache; i++) {
        sqlite3_finalize(d->cache[i].st);
        free(d->cache[i].sql);
    }
    /* sqlite3_close_v2 with every statement finalized closes at once. */
    sqlite3_close_v2(d->h);
    free(d);
}

/* ---- provenance ---- */

static void join_args(char *buf, size_t n, int argc, char **argv)
{
    size_t u = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && argv[i] && u + 1 < n; i++) {
        const char *a = argv[i];
        int quote = !*a || strpbrk(a, " \t\n'\"\\$`*?;&|<>()") != NULL;
        if (i)
            buf[u++] = ' ';
        if (quote && u + 1 < n)
            buf[u++] = '\'';
        for (const char *c = a; *c && u + 5 < n; c++) {
            if (*c == '\'') { /* ' -> '\'' */
                memcpy(buf + u, "'\\''", 4);
                u += 4;
            } else {
                buf[u++] = *c;
            }
        }
        if (quote && u + 1 < n)
            buf[u++] = '\'';
        buf[u < n ? u : n - 1] = '\0';
    }
}

void db_provenance_fill(db_provenance *p, int argc, char **argv, const char *build_features)
{
    memset(p, 0, sizeof *p);
    join_args(p->command_line, sizeof p->command_line, argc, argv);
    snprintf(p->tool_version, sizeof p->tool_version, "%s", SMD_VERSION);
    snprintf(p->git_rev, sizeof p->git_rev, "%s", smd_git_rev());
    snprintf(p->build_features, sizeof p->build_features, "%s",
             build_features ? build_features : "");
    snprintf(p->library_versions, sizeof p->library_versions, "sqlite %s, gsl %s, cjson %s",
             sqlite3_libversion(), GSL_VERSION, cJSON_Version());
    if (gethostname(p->host, sizeof p->host - 1) != 0)
        snprintf(p->host, sizeof p->host, "unknown");
    p->host[sizeof p->host - 1] = '\0';
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char day[24];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(p->created_at, sizeof p->created_at, "%s.%03dZ", day, (int)(ts.tv_nsec / 1000000));
}

int db__record_insert(db *d, const db_provenance *p, const char *kind, const char *summary,
                      int64_t *id, st_err *err)
{
    db__ins s;
    int rc = db__ins_prepare(d, &s, "records",
                             "kind, created_at, summary, command_line, tool_version, git_rev, "
                             "build_features, library_versions, host",
                             NULL, 0, err);
    if (rc != ST_OK)
        return rc;
    db__b_txt(&s, kind);
    db__b_txt(&s, p->created_at);
    db__b_txt(&s, summary);
    db__b_txt(&s, p->command_line);
    db__b_txt(&s, p->tool_version);
    db__b_txt(&s, p->git_rev);
    db__b_txt(&s, p->build_features);
    db__b_txt(&s, p->library_versions);
    db__b_txt(&s, p->host);
    rc = db__ins_step(d, &s, id, err);
    db__ins_finalize(&s);
    return rc;
}

/* ---- inserts ---- */

int db__ins_prepare(db *d, db__ins *s, const char *table, const char *lead,
                    const db__fields *const *lists, int nlists, st_err *err)
{
    memset(s, 0, sizeof *s);
    s->i = 1;
    /* Column names come from this file and db_fields.c, never from input. */
    size_t cap = 64 + strlen(table) + 2 * strlen(lead), u, ncols = 0;
    for (int k = 0; k < nlists; k++)
        for (int i = 0; i < lists[k]->n; i++)
            cap += strlen(lists[k]->v[i].col) + 4;
    char *sql = malloc(cap);
    if (!sql)
        return ST_RAISE(err, ST_ENOMEM, "%s: out of memory", d->shown);
    u = (size_t)snprintf(sql, cap, "INSERT INTO %s (%s", table, lead);
    for (const char *c = lead; *c; c++)
        ncols += *c == ',';
    ncols += *lead ? 1 : 0;
    for (int k = 0; k < nlists; k++)
        for (int i = 0; i < lists[k]->n; i++) {
            u += (size_t)snprintf(sql + u, cap - u, "%s%s", ncols ? ", " : "", lists[k]->v[i].col);
            ncols++;
        }
    u += (size_t)snprintf(sql + u, cap - u, ") VALUES (");
    for (size_t i = 0; i < ncols; i++)
        u += (size_t)snprintf(sql + u, cap - u, "%s?", i ? "," : "");
    snprintf(sql + u, cap - u, ")");
    for (int i = 0; i < d->ncache; i++)
        if (strcmp(d->cache[i].sql, sql) == 0) { /* reset by its last db__ins_step */
            free(sql);
            s->st = d->cache[i].st;
            s->cached = 1;
            return ST_OK;
        }
    int rc = db__prepare(d, sql, &s->st, err);
    if (rc == ST_OK && d->ncache < DB_STMT_CACHE) {
        d->cache[d->ncache].sql = sql;
        d->cache[d->ncache++].st = s->st;
        s->cached = 1;
        return ST_OK;
    }
    free(sql);
    return rc;
}

static void bound(db__ins *s, int rc)
{
    if (rc != SQLITE_OK && s->rc == SQLITE_OK)
        s->rc = rc;
    s->i++;
}

void db__b_i64(db__ins *s, int64_t v)
{
    bound(s, sqlite3_bind_int64(s->st, s->i, v));
}

void db__b_dbl(db__ins *s, double v)
{
    bound(s, v != v ? sqlite3_bind_null(s->st, s->i) : sqlite3_bind_double(s->st, s->i, v));
}

void db__b_txt(db__ins *s, const char *v)
{
    bound(s, v ? sqlite3_bind_text(s->st, s->i, v, -1, SQLITE_TRANSIENT)
               : sqlite3_bind_null(s->st, s->i));
}

void db__b_null(db__ins *s)
{
    bound(s, sqlite3_bind_null(s->st, s->i));
}

int db__ins_step(db *d, db__ins *s, int64_t *rowid, st_err *err)
{
    int rc = ST_OK;
    if (s->rc != SQLITE_OK) {
        rc = db__fail(d, s->rc, err, "bind");
    } else if (s->i - 1 != sqlite3_bind_parameter_count(s->st)) {
        rc = ST_RAISE(err, ST_EINTERNAL, "%s: insert bound %d values for %d columns", d->path,
                      s->i - 1, sqlite3_bind_parameter_count(s->st));
    } else {
        int r = sqlite3_step(s->st);
        if (r != SQLITE_DONE)
            rc = db__fail(d, r, err, "insert");
        else if (rowid)
            *rowid = sqlite3_last_insert_rowid(d->h);
    }
    sqlite3_reset(s->st);
    sqlite3_clear_bindings(s->st);
    s->i = 1;
    s->rc = SQLITE_OK;
    return rc;
}

void db__ins_finalize(db__ins *s)
{
    if (s->cached && s->st) {
        sqlite3_reset(s->st);
        sqlite3_clear_bindings(s->st);
    } else {
        sqlite3_finalize(s->st); /* NULL: nothing */
    }
    s->st = NULL;
    s->cached = 0;
}
