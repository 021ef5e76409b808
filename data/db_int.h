/*
 * db_int.h: what the data/db_*.c files share (not for other folders; tests
 * may use it).
 *
 * SQLite is wrapped once here: db__fail() turns an SQLite result code into
 * a project status and keeps sqlite3_errmsg() in the message. Statements
 * are prepared with db__prepare() and finalized by their caller on every
 * path (sqlite3_finalize(NULL) is harmless, so one `goto fail` does it).
 */
#ifndef SMD_DB_INT_H
#define SMD_DB_INT_H

#include <stddef.h>
#include <sqlite3.h>

#include "data/db.h"

/* Insert statements kept prepared for the life of a handle: a plan's
 * record inserts rows into the same few tables for each of its ranked
 * plans, and parsing the statement each time was a third of the record's
 * time (db__ins_prepare). */
#define DB_STMT_CACHE 16

struct db {
    sqlite3 *h;
    struct {
        char *sql;
        sqlite3_stmt *st;
    } cache[DB_STMT_CACHE];
    int ncache;
    int mode;                    /* DB_OPEN_WRITE or DB_OPEN_READ */
    int version;                 /* user_version after open */
    int last_rc;                 /* extended SQLite code of the last db__fail */
    char path[1024];
    char shown[ST_PATH_SHOWN];   /* path as messages show it (st_path_fit) */
};

/* Files larger than this get the cheap check on open, not quick_check
 * (db_open.c); a variable so tests can lower it. */
#define DB_FULL_CHECK_MAX_BYTES ((int64_t)16 << 20)
extern int64_t db__full_check_max_bytes;

/* Status for an SQLite result code: corrupt / not a database -> ST_EPARSE,
 * no memory -> ST_ENOMEM, busy, read-only, I/O, full disk, cannot open ->
 * ST_EIO, anything else ST_EINTERNAL. */
int db__status(int sqlite_rc);

/* Raise the status of sqlite_rc with "PATH: what: sqlite's message". */
int db__fail(db *d, int sqlite_rc, st_err *err, const char *what);

/* Prepare one statement; *st is NULL on failure. */
int db__prepare(db *d, const char *sql, sqlite3_stmt **st, st_err *err);

/* ST_OK if record id exists, ST_ENOENT naming it otherwise (what names the
 * operation in SQLite errors). */
int db__record_exists(db *d, int64_t id, const char *what, st_err *err);

/* Run every statement of a fixed SQL text (no parameters), such as a
 * migration script, one prepared statement at a time. */
int db__exec(db *d, const char *sql, st_err *err);

/* One transaction: BEGIN IMMEDIATE (takes the write lock now, so a writer
 * waits for others in the busy handler rather than failing on upgrade),
 * COMMIT, ROLLBACK (never fails the caller; safe when none is open). */
int db__begin(db *d, st_err *err);
int db__commit(db *d, st_err *err);
void db__rollback(db *d);

/* A schema migration: the script that takes version `from` to `from + 1`. */
typedef struct db__migration {
    int from;
    const char *sql;
} db__migration;

/* The shipped migrations, in order (db_schema.c); db__migrations[i].from == i. */
extern const db__migration db__migrations[];
extern const int db__nmigrations;

/* Bring d from its user_version up to target with steps[], each in its own
 * transaction that re-reads the version first (another process may have
 * migrated meanwhile). ST_EUNSUPPORTED when no step leads on. Used by
 * db_open with the shipped list; tests pass their own to try a version
 * past DB_SCHEMA_VERSION. */
int db__migrate(db *d, const db__migration *steps, int nsteps, int target, st_err *err);

/* Read an integer PRAGMA (user_version, application_id ...). */
int db__pragma_int(db *d, const char *pragma, int64_t *out, st_err *err);

/* Insert the records row of a new record (inside a transaction). */
int db__record_insert(db *d, const db_provenance *p, const char *kind, const char *summary,
                      int64_t *id, st_err *err);

/* ---- binding struct fields to columns ---- */

enum {
    DB_F_INT = 1,                /* int */
    DB_F_I64,                    /* int64_t */
    DB_F_U64,                    /* uint64_t (stored as a signed 64-bit integer) */
    DB_F_UINT,                   /* unsigned */
    DB_F_DBL,                    /* double */
    DB_F_STR,                    /* char array, NUL-terminated */
    DB_F_ARCH,                   /* plan_arch as "gpt" / "llama" */
    DB_F_SCHED,                  /* plan_schedule as its name */
    DB_F_RECOMP,                 /* plan_recompute as its name */
    DB_F_SHARD,                  /* plan_sharding as its name */
    DB_F_REJECT,                 /* plan_reject as its name ("ok" when feasible) */
    DB_F_BASIS,                  /* plan_validate_basis as its name */
    DB_F_FW,                     /* int index into plan_frameworks as its key ("smp") */
    DB_F_PREC,                   /* plan_precision as its name ("bf16") */
};

/* One struct member and the column it goes to. */
typedef struct db__field {
    const char *col;
    int type;
    size_t off;
    size_t cap;                  /* sizeof the member (the room of a DB_F_STR) */
} db__field;

typedef struct db__fields {
    const db__field *v;
    int n;
} db__fields;

/* The field lists of the structs that are recorded (db_fields.c). */
extern const db__fields db__instance_fields, db__gpu_fields, db__estimate_fields, db__stage_mem_fields, db__result_fields, db__sim_fields,
    db__sim_config_fields, db__sim_stage_fields, db__validate_fields, db__calibration_fields,
    db__cal_source_fields, db__config_fields;

/* The model's and the layout's columns: the planner's field tables
 * (plan_fields.h) and the model's parameter counts (db_fields.c). */
const db__fields *db__model_list(void);
const db__fields *db__layout_list(void);

/* An INSERT being built: the statement and the next parameter index. */
typedef struct db__ins {
    sqlite3_stmt *st;
    int i;
    int rc;                      /* first bind failure */
    int cached;                  /* st belongs to the handle's cache (db__ins_finalize
                                  * resets it) */
} db__ins;

/* Prepare "INSERT INTO table (lead, fields of each list...) VALUES (?...)".
 * lead is a comma-separated list of leading columns ("" for none) bound
 * first with db__b_*; then db__b_fields for each list in order. */
int db__ins_prepare(db *d, db__ins *s, const char *table, const char *lead,
                    const db__fields *const *lists, int nlists, st_err *err);
void db__b_i64(db__ins *s, int64_t v);
void db__b_dbl(db__ins *s, double v);     /* NaN binds NULL */
void db__b_txt(db__ins *s, const char *v); /* NULL binds NULL */
void db__b_null(db__ins *s);
void db__b_fields(db__ins *s, const db__fields *f, const void *base);
/* Step the insert, reset it for the next row; *rowid (may be NULL) gets the
 * new row's id. */
int db__ins_step(db *d, db__ins *s, int64_t *rowid, st_err *err);
void db__ins_finalize(db__ins *s);

/* Set the members of base from the columns of st's current row with the
 * same names (the inverse of db__b_fields); members whose column is absent
 * or NULL are left as they are. */
void db__read_fields(sqlite3_stmt *st, const db__fields *f, void *base);

/* 1 if a and b hold the same value in every member of the list (strings
 * up to their NUL, doubles by value). */
int db__fields_equal(const db__fields *f, const void *a, const void *b);

/* Write a struct as a JSON object text with the field list (caller frees). */
char *db__fields_json(const db__fields *f, const void *base);

/* The key plans are compared on: model shape, cluster and layout. */
void db__match_key(const plan_model *m, const char *instance, int nodes, int gpus,
                   const plan_layout *l, char *buf, size_t n);

/* Append printf-style text to the NUL-terminated buf of size n, cutting it
 * short when it does not fit (summaries and labels are for people). */
void db__catf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The select list of the framework and precision of a plans row aliased
 * p: "p.framework, p.precision", or "NULL, NULL" in a file older than
 * schema version 3 (opened for reading, so not migrated). Static. */
const char *db__stack_cols(const db *d);

/* "tp 8 pp 2 dp 8 mbs 1x16 interleaved ..." */
void db__layout_label(const plan_layout *l, char *buf, size_t n);

#endif
