/*
 * test_db_open.c: opening, migrating and refusing database files.
 *
 * Migration from an empty path, a zero-byte file, a hand-made version-0
 * SQLite file and a hand-made version-1 file (schema text frozen here) to
 * version 2; the framework applying a further (test-only) version 3 step;
 * a newer schema, another application's SQLite file, a file that is not a
 * database and one with a damaged page are refused with a clear error in
 * both modes and keep every byte; a file that cannot be written (read-only
 * file, missing directory, full disk) is an I/O error; a reader never
 * creates a file.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "data/db_int.h"
#include "test_db_util.h"

typedef tdb_fixture fixture;
#define setup tdb_setup
#define teardown tdb_teardown

/* Run a statement on a raw connection (for hand-made files). */
static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
    sqlite3_free(msg);
    assert_int_equal(sqlite3_close(h), SQLITE_OK);
}

static int64_t raw_int(db *d, const char *sql)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(d->h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void write_one(const char *path)
{
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(path, DB_OPEN_WRITE, &d, &err), ST_OK);
    db_provenance p = test_provenance();
    plan_calibration c;
    small_calibration(&c, 1);
    int64_t id = 0;
    assert_int_equal(db_record_calibration(d, &p, "runs.csv", &c, 1, &id, &err), ST_OK);
    assert_true(id > 0);
    db_close(d);
}

static void check_current(db *d)
{
    assert_int_equal(db_schema_version(d), DB_SCHEMA_VERSION);
    assert_int_equal(raw_int(d, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    assert_int_equal(raw_int(d, "PRAGMA application_id"), DB_APPLICATION_ID);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                "name IN ('records', 'models', 'instance_types', 'searches', "
                                "'plans', 'predictions', 'prediction_stages', 'simulations', "
                                "'sim_stages', 'sim_trace', 'runs', 'run_steps', 'run_ranks', "
                                "'calibrations', 'calibration_params')"),
                     15);
    /* version 2: every stage's memory by term */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('prediction_stages')"
                                " WHERE name IN ('weights_bytes', 'grads_bytes',"
                                " 'optimizer_bytes', 'activations_bytes', 'recompute_bytes',"
                                " 'logits_bytes', 'comm_buffers_bytes', 'context_bytes',"
                                " 'allocator_bytes') AND type = 'REAL'"),
                     9);
}

static void test_create_new(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    check_current(d);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(d->h, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    db_close(d);
    /* reopening migrates nothing and keeps what is there */
    write_one(f->path);
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_OK);
    int64_t n = 0;
    assert_int_equal(db_count(d, NULL, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    db_close(d);
}

static void test_from_zero_byte_file(void **state)
{
    fixture *f = *state;
    write_bytes(f->path, "", 0);
    st_err err = {0};
    db *d = NULL;
    /* a reader finds no records in it, and leaves it as it is */
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_ENOENT);
    assert_null(d);
    assert_non_null(strstr(err.msg, "no records"));
    assert_file_is(f->path, (const unsigned char *)"", 0);
    st_err_clear(&err);
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    check_current(d);
    db_close(d);
}

/* A version-0 file as another tool would leave it: a valid SQLite database
 * with no tables, user_version 0 and no application id. */
static void test_from_handmade_v0(void **state)
{
    fixture *f = *state;
    raw_exec(f->path, "PRAGMA page_size = 1024; CREATE TABLE scratch (x); DROP TABLE scratch;");
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    check_current(d);
    db_close(d);
    write_one(f->path);
}

/* The schema of version 1 as it shipped, frozen here: a file a version-1
 * build left behind must migrate whatever later edits db_schema.c sees. */
static const char v1_schema[] =
    "CREATE TABLE records ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL CHECK (kind IN ('plan', 'simulation', 'run', 'calibration')),"
    " created_at TEXT NOT NULL,"
    " summary TEXT NOT NULL,"
    " command_line TEXT NOT NULL,"
    " tool_version TEXT NOT NULL,"
    " git_rev TEXT NOT NULL,"
    " build_features TEXT NOT NULL,"
    " library_versions TEXT NOT NULL,"
    " host TEXT NOT NULL);"
    "CREATE INDEX records_kind ON records (kind, id);"

    "CREATE TABLE models ("
    " id INTEGER PRIMARY KEY,"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " name TEXT, source TEXT, arch TEXT,"
    " layers INTEGER, hidden INTEGER, heads INTEGER, kv_heads INTEGER, ffn INTEGER,"
    " seq INTEGER, vocab INTEGER, tied_embedding INTEGER,"
    " params INTEGER, params_layer INTEGER, params_embedding INTEGER, params_head INTEGER,"
    " params_final_norm INTEGER);"
    "CREATE INDEX models_record ON models (record_id);"

    "CREATE TABLE instance_types ("
    " id INTEGER PRIMARY KEY,"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " aliases TEXT, intra_curve_json TEXT, net_curve_json TEXT,"
    " name TEXT, gpu TEXT, gpus_per_node INTEGER, nvlink_bps REAL, nvswitch INTEGER,"
    " intra_busbw_bps REAL, intra_latency_s REAL, net_bps REAL, net_latency_s REAL,"
    " price_per_hour REAL, intra_curve TEXT, net_curve TEXT, source TEXT,"
    " gpu_mem_bytes REAL, gpu_peak_flops REAL, gpu_hbm_bps REAL, gemm_eff_max REAL,"
    " gemm_dim_half REAL, misaligned_factor REAL, hbm_eff REAL, flash_eff REAL,"
    " gpu_source TEXT);"
    "CREATE INDEX instance_types_record ON instance_types (record_id);"

    "CREATE TABLE searches ("
    " record_id INTEGER PRIMARY KEY REFERENCES records (id),"
    " model_id INTEGER REFERENCES models (id),"
    " instance_type_id INTEGER REFERENCES instance_types (id),"
    " nodes INTEGER, gpus INTEGER, mode TEXT, objective TEXT, top_k INTEGER, tokens REAL,"
    " rejected_json TEXT, config_json TEXT,"
    " evaluated INTEGER, feasible INTEGER, min_oom_excess_bytes REAL, global_batch INTEGER,"
    " batch_defaulted INTEGER, search_s REAL);"

    "CREATE TABLE plans ("
    " id INTEGER PRIMARY KEY,"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " model_id INTEGER REFERENCES models (id),"
    " instance_type_id INTEGER REFERENCES instance_types (id),"
    " role TEXT NOT NULL, rank INTEGER, nodes INTEGER, gpus INTEGER,"
    " simulated_step_s REAL, match_key TEXT NOT NULL, label TEXT,"
    " tp INTEGER, pp INTEGER, dp INTEGER, cp INTEGER, micro_batch INTEGER,"
    " microbatches INTEGER, active_microbatches INTEGER, schedule TEXT,"
    " virtual_stages INTEGER, recompute TEXT, recompute_group INTEGER,"
    " sequence_parallel INTEGER, offload_activations INTEGER, sharding TEXT,"
    " sharding_degree INTEGER, prescaled_batch INTEGER, placement TEXT,"
    " flash_attention INTEGER, dp_overlap INTEGER, fp32_grads INTEGER, tp_overlap INTEGER,"
    " pp_overlap INTEGER, dp_bucket_bytes REAL, global_batch INTEGER);"
    "CREATE INDEX plans_record ON plans (record_id);"
    "CREATE INDEX plans_key ON plans (match_key, id);"

    "CREATE TABLE predictions ("
    " id INTEGER PRIMARY KEY,"
    " plan_id INTEGER NOT NULL UNIQUE REFERENCES plans (id),"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " reject TEXT, reason TEXT,"
    " weights_bytes REAL, grads_bytes REAL, optimizer_bytes REAL, activations_bytes REAL,"
    " recompute_bytes REAL, logits_bytes REAL, comm_buffers_bytes REAL, context_bytes REAL,"
    " allocator_bytes REAL, total_bytes REAL,"
    " worst_stage INTEGER, capacity_bytes REAL, oom_excess_bytes REAL, nstages INTEGER,"
    " compute_s REAL, tp_comm_s REAL, cp_comm_s REAL, pp_comm_s REAL, dp_exposed_s REAL,"
    " bubble_s REAL, optimizer_s REAL, step_s REAL, dp_total_s REAL,"
    " stage_fwd_s REAL, stage_bwd_s REAL, tokens_per_step REAL, tokens_per_s REAL,"
    " model_flops_per_step REAL, hw_flops_per_step REAL, mfu REAL, hfu REAL,"
    " cost_per_hour REAL, cost_per_mtokens REAL);"
    "CREATE INDEX predictions_record ON predictions (record_id);"

    "CREATE TABLE prediction_stages ("
    " prediction_id INTEGER NOT NULL REFERENCES predictions (id),"
    " stage INTEGER NOT NULL, layers INTEGER, mem_bytes REAL, inflight INTEGER,"
    " PRIMARY KEY (prediction_id, stage)) WITHOUT ROWID;"

    "CREATE TABLE simulations ("
    " id INTEGER PRIMARY KEY,"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " plan_id INTEGER NOT NULL REFERENCES plans (id),"
    " seed INTEGER, jitter_sigma REAL, straggler_stage INTEGER, straggler_factor REAL,"
    " monte_carlo INTEGER, keep_trace INTEGER,"
    " step_s REAL, pipeline_s REAL, bubble_fraction REAL, p50_s REAL, p95_s REAL, p99_s REAL,"
    " steps INTEGER, events INTEGER, compute_bound_s REAL, comm_bound_s REAL,"
    " planner_step_s REAL, pp INTEGER, critical_compute_s REAL, critical_transfer_s REAL,"
    " critical_tail_s REAL, critical_ops INTEGER, critical_stages INTEGER, trace_ops INTEGER);"
    "CREATE INDEX simulations_record ON simulations (record_id);"
    "CREATE INDEX simulations_plan ON simulations (plan_id);"

    "CREATE TABLE sim_stages ("
    " simulation_id INTEGER NOT NULL REFERENCES simulations (id),"
    " stage INTEGER NOT NULL,"
    " busy_s REAL, bubble_fraction REAL, peak_inflight INTEGER, peak_act_bytes REAL,"
    " peak_mem_bytes REAL, send_busy_s REAL, dp_busy_s REAL, dp_exposed_s REAL,"
    " PRIMARY KEY (simulation_id, stage)) WITHOUT ROWID;"

    "CREATE TABLE sim_trace ("
    " simulation_id INTEGER NOT NULL REFERENCES simulations (id),"
    " seq INTEGER NOT NULL, stage INTEGER, stream TEXT, op TEXT, chunk INTEGER,"
    " microbatch INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " PRIMARY KEY (simulation_id, seq)) WITHOUT ROWID;"

    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " plan_id INTEGER REFERENCES plans (id),"
    " model_id INTEGER REFERENCES models (id),"
    " source TEXT NOT NULL CHECK (source IN ('published', 'measured')),"
    " status TEXT, error_text TEXT, backend TEXT, file TEXT, compared INTEGER, basis TEXT,"
    " measured_step_s REAL, predicted_step_s REAL, simulated_step_s REAL, error_pct REAL,"
    " measured_mem_bytes REAL, predicted_mem_bytes REAL, mem_error_pct REAL, nsteps INTEGER,"
    " row_id TEXT, source_key TEXT, reason TEXT, notes TEXT, micro_batch_searched INTEGER,"
    " predicted_oom INTEGER, measured_oom INTEGER);"
    "CREATE INDEX runs_record ON runs (record_id);"
    "CREATE INDEX runs_plan ON runs (plan_id);"

    "CREATE TABLE run_steps ("
    " run_id INTEGER NOT NULL REFERENCES runs (id),"
    " step INTEGER NOT NULL, time_s REAL, forward_s REAL, backward_s REAL, optimizer_s REAL,"
    " comm_s REAL, loss REAL,"
    " PRIMARY KEY (run_id, step)) WITHOUT ROWID;"

    "CREATE TABLE run_ranks ("
    " run_id INTEGER NOT NULL REFERENCES runs (id),"
    " rank INTEGER NOT NULL, peak_mem_bytes REAL,"
    " PRIMARY KEY (run_id, rank)) WITHOUT ROWID;"

    "CREATE TABLE calibrations ("
    " id INTEGER PRIMARY KEY,"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " file TEXT, gpu TEXT, rows INTEGER, asked INTEGER, fitted INTEGER,"
    " mean_abs_err_before_pct REAL, mean_abs_err_after_pct REAL, max_abs_err_after_pct REAL,"
    " iterations INTEGER, converged INTEGER);"
    "CREATE INDEX calibrations_record ON calibrations (record_id);"

    "CREATE TABLE calibration_params ("
    " calibration_id INTEGER NOT NULL REFERENCES calibrations (id),"
    " param INTEGER NOT NULL, name TEXT NOT NULL, before REAL, after REAL, asked INTEGER,"
    " fitted INTEGER,"
    " PRIMARY KEY (calibration_id, param)) WITHOUT ROWID;";

/* A version-1 file made by hand (no code of this build), holding one plan
 * record of two pipeline stages as a version-1 build recorded it. */
static void make_v1_file(const char *path)
{
    char pragmas[128];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = 1;",
             DB_APPLICATION_ID);
    raw_exec(path, v1_schema);
    raw_exec(path, pragmas);
    raw_exec(path,
             "INSERT INTO records (id, kind, created_at, summary, command_line, tool_version,"
             " git_rev, build_features, library_versions, host) VALUES (1, 'plan',"
             " '2025-01-02T03:04:05.678Z', 'v1 plan', 'smdplan --params 30B', '0.1', 'abc',"
             " 'cpu', 'sqlite 3', 'host');"
             "INSERT INTO plans (id, record_id, role, rank, nodes, gpus, match_key, label, tp, pp,"
             " dp) VALUES (1, 1, 'top', 1, 2, 16, 'key', 'tp 4 pp 2 dp 2', 4, 2, 2);"
             "INSERT INTO predictions (id, plan_id, record_id, reject, weights_bytes,"
             " total_bytes, worst_stage, capacity_bytes, nstages, step_s) VALUES (1, 1, 1, 'ok',"
             " 1.5e9, 3.25e10, 0, 4.0e10, 2, 1.25);"
             "INSERT INTO prediction_stages (prediction_id, stage, layers, mem_bytes, inflight)"
             " VALUES (1, 0, 24, 3.25e10, 2), (1, 1, 24, 3.0e10, 1);");
}

static void check_v1_plan_stages(db *d)
{
    st_err err = {0};
    db_plan_stage g[4];
    int n = 0;
    assert_int_equal(db_plan_stages(d, 1, g, 4, &n, &err), ST_OK);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_int_equal(g[i].stage, i);
        assert_int_equal(g[i].layers, 24);
        assert_int_equal(g[i].have_terms, 0);
        assert_true(g[i].mem.weights_bytes == 0 && g[i].mem.total_bytes == 0);
    }
    assert_true(g[0].mem_bytes == 3.25e10 && g[1].mem_bytes == 3.0e10);
    assert_int_equal(g[0].inflight, 2);
}

/* The real step 1 -> 2 on a hand-made version-1 file: the record stays, its
 * stages gain the nine term columns as NULL, a new record fills them; the
 * migrated schema is the one a new file gets. A reader takes the version-1
 * file as it is. */
static void test_migrate_v1_to_v2(void **state)
{
    fixture *f = *state;
    make_v1_file(f->path);
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_OK);
    assert_int_equal(db_schema_version(d), 1);
    check_v1_plan_stages(d);
    db_close(d);

    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    check_current(d); /* version 2, with the nine term columns */
    assert_int_equal(DB_SCHEMA_VERSION, 2);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM prediction_stages WHERE weights_bytes IS"
                                " NULL AND allocator_bytes IS NULL"),
                     2);
    check_v1_plan_stages(d);
    db_plan pl;
    int n = 0;
    assert_int_equal(db_plans(d, 1, &pl, 1, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_true(pl.have_est && pl.est.nstages == 2 && pl.est.stage_mem_bytes[1] == 3.0e10);
    db_close(d);
    write_one(f->path); /* the migrated file takes new records */

    /* the same schema as a file made new by this build */
    char fresh[700];
    snprintf(fresh, sizeof fresh, "%s/fresh.db", f->dir);
    db *e = NULL;
    assert_int_equal(db_open(fresh, DB_OPEN_WRITE, &e, &err), ST_OK);
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_OK);
    const char *q = "SELECT group_concat(type || ' ' || name || ': ' || coalesce(sql, ''), '\n')"
                    " FROM (SELECT * FROM sqlite_master ORDER BY name)";
    sqlite3_stmt *a = NULL, *b = NULL;
    assert_int_equal(sqlite3_prepare_v2(d->h, q, -1, &a, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(e->h, q, -1, &b, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(a), SQLITE_ROW);
    assert_int_equal(sqlite3_step(b), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(a, 0),
                        (const char *)sqlite3_column_text(b, 0));
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    db_close(d);
    db_close(e);
}

/* The framework takes a current file to a version 3 that a later build
 * would ship: one more step in the list, applied once, in order. */
static void test_migrate_to_next(void **state)
{
    fixture *f = *state;
    enum { NEXT = DB_SCHEMA_VERSION + 1 };
    assert_int_equal(NEXT, 3);
    write_one(f->path);
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    db__migration steps[NEXT];
    assert_int_equal(db__nmigrations, DB_SCHEMA_VERSION);
    for (int i = 0; i < db__nmigrations; i++)
        steps[i] = db__migrations[i];
    steps[DB_SCHEMA_VERSION] = (db__migration){
        DB_SCHEMA_VERSION, "ALTER TABLE records ADD COLUMN note TEXT;"
                           "UPDATE records SET note = 'migrated';"};
    assert_int_equal(db__migrate(d, steps, NEXT, NEXT, &err), ST_OK);
    assert_int_equal(db_schema_version(d), NEXT);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM records WHERE note = 'migrated'"), 1);
    /* applying the list again changes nothing */
    assert_int_equal(db__migrate(d, steps, NEXT, NEXT, &err), ST_OK);
    /* no step from version 3 to 4: a clear error */
    assert_int_equal(db__migrate(d, steps, NEXT, NEXT + 1, &err), ST_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "no migration from schema version 3"));
    db_close(d);

    /* this build refuses the version-3 file and leaves it alone */
    size_t n;
    unsigned char *before = file_bytes(f->path, &n);
    assert_non_null(before);
    st_err_clear(&err);
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_EUNSUPPORTED);
    assert_null(d);
    assert_non_null(strstr(err.msg, "newer smdplan (schema version 3"));
    st_err_clear(&err);
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_EUNSUPPORTED);
    assert_file_is(f->path, before, n);
    free(before);
}

/* A failing step leaves the version where it was (its transaction rolls
 * back with it), and says why in SQLite's words. */
static void test_failed_step_rolls_back(void **state)
{
    fixture *f = *state;
    write_one(f->path);
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    db__migration steps[] = {
        {DB_SCHEMA_VERSION, "CREATE TABLE extra (x); INSERT INTO no_such_table VALUES (1);"}};
    assert_int_equal(db__migrate(d, steps, 1, DB_SCHEMA_VERSION + 1, &err), ST_EINTERNAL);
    assert_non_null(strstr(err.msg, "no such table: no_such_table"));
    assert_int_equal(raw_int(d, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM sqlite_master WHERE name = 'extra'"), 0);
    db_close(d);
}

static void refused_unchanged(const char *path, int code, const char *needle)
{
    size_t n;
    unsigned char *before = file_bytes(path, &n);
    assert_non_null(before);
    for (int mode = 0; mode < 2; mode++) {
        st_err err = {0};
        db *d = NULL;
        assert_int_equal(db_open(path, mode == 0 ? DB_OPEN_WRITE : DB_OPEN_READ, &d, &err), code);
        assert_null(d);
        if (!strstr(err.msg, needle))
            fail_msg("message '%s' lacks '%s'", err.msg, needle);
        assert_non_null(strstr(err.msg, path));
        assert_null(strchr(err.msg, '\n'));
    }
    assert_file_is(path, before, n);
    free(before);
}

static void test_not_a_database(void **state)
{
    fixture *f = *state;
    char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)("smdplan is not this"[i % 19] ^ (i * 131));
    write_bytes(f->path, junk, sizeof junk);
    refused_unchanged(f->path, ST_EPARSE, "not a smdplan database");
    /* a text file that happens to be short */
    write_bytes(f->path, "hello\n", 6);
    refused_unchanged(f->path, ST_EPARSE, "not a smdplan database");
}

static void test_foreign_sqlite_file(void **state)
{
    fixture *f = *state;
    raw_exec(f->path, "CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('x');");
    refused_unchanged(f->path, ST_EPARSE, "another application");
    raw_exec(f->path, "PRAGMA application_id = 1234;");
    refused_unchanged(f->path, ST_EPARSE, "application_id 1234");
}

/* A page of a real database overwritten: quick_check finds it before any
 * write, in both modes. */
static void test_corrupt_page(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    db_provenance p = test_provenance();
    for (int i = 0; i < 300; i++) {
        plan_calibration c;
        small_calibration(&c, i);
        assert_int_equal(db_record_calibration(d, &p, "runs.csv", &c, 1, NULL, &err), ST_OK);
    }
    int64_t page = raw_int(d, "PRAGMA page_size"), pages = raw_int(d, "PRAGMA page_count");
    db_close(d); /* the last connection checkpoints the WAL into the file */
    assert_true(pages > 8);
    size_t n;
    unsigned char *b = file_bytes(f->path, &n);
    assert_int_equal(n, (size_t)(page * pages));
    /* overwrite the middle page with a pattern no b-tree page has */
    size_t at = (size_t)(pages / 2) * (size_t)page;
    for (int64_t i = 0; i < page; i++)
        b[at + (size_t)i] = (unsigned char)(0xA5 ^ i);
    write_bytes(f->path, b, n);
    free(b);
    refused_unchanged(f->path, ST_EPARSE, "corrupt");
}

static void test_reader_creates_nothing(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_ENOENT);
    assert_null(d);
    assert_non_null(strstr(err.msg, "no such database"));
    assert_int_equal(access(f->path, F_OK), -1);
}

static void test_cannot_write(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    db *d = NULL;
    char p[700];
    /* a directory that does not exist */
    snprintf(p, sizeof p, "%s/missing/records.db", f->dir);
    assert_int_equal(db_open(p, DB_OPEN_WRITE, &d, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "cannot open"));
    /* a full disk (Linux's /dev/full fails every write with ENOSPC) */
    if (access("/dev/full", W_OK) == 0) {
        st_err_clear(&err);
        assert_int_equal(db_open("/dev/full", DB_OPEN_WRITE, &d, &err), ST_EIO);
        assert_non_null(strstr(err.msg, "full"));
    }
    /* a directory, and a pipe (whose first read would never return) */
    st_err_clear(&err);
    assert_int_equal(db_open(f->dir, DB_OPEN_WRITE, &d, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "directory"));
    snprintf(p, sizeof p, "%s/fifo.db", f->dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    st_err_clear(&err);
    assert_int_equal(db_open(p, DB_OPEN_READ, &d, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "pipe"));
    /* an empty path is bad input; the context keeps the first error */
    assert_int_equal(db_open("", DB_OPEN_WRITE, &d, &err), ST_EINVAL);
    assert_int_equal(err.code, ST_EIO);
}

/* A read-only file: opened for writing it is an I/O error and unchanged;
 * opened for reading it answers. The superuser writes any file, so then
 * the check runs in a child that has dropped to an unprivileged user. */
static void test_read_only_file(void **state)
{
    fixture *f = *state;
    write_one(f->path);
    assert_int_equal(chmod(f->path, 0444), 0);
    assert_int_equal(chmod(f->dir, 0755), 0);
    size_t n;
    unsigned char *before = file_bytes(f->path, &n);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(77);
        st_err err = {0};
        db *d = NULL;
        if (db_open(f->path, DB_OPEN_WRITE, &d, &err) != ST_EIO || d)
            _exit(1);
        if (!strstr(err.msg, "read-only"))
            _exit(2);
        st_err_clear(&err);
        if (db_open(f->path, DB_OPEN_READ, &d, &err) != ST_OK)
            _exit(3);
        int64_t c = 0;
        int rc = db_count(d, NULL, &c, &err);
        db_close(d);
        _exit(rc == ST_OK && c == 1 ? 0 : 4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 77)
        assert_int_equal(WEXITSTATUS(status), 0);
    assert_file_is(f->path, before, n);
    free(before);
}

static void test_default_path(void **state)
{
    (void)state;
    const char *old = getenv("SMDPLAN_DB");
    char *keep = old ? strdup(old) : NULL;
    assert_string_equal(db_default_path("given.db"), "given.db");
    setenv("SMDPLAN_DB", "from-env.db", 1);
    assert_string_equal(db_default_path(NULL), "from-env.db");
    assert_string_equal(db_default_path(""), "from-env.db");
    unsetenv("SMDPLAN_DB");
    assert_string_equal(db_default_path(NULL), "smdplan.db");
    if (keep)
        setenv("SMDPLAN_DB", keep, 1);
    free(keep);

    setenv("SMDPLAN_NO_RECORD", "1", 1);
    assert_true(db_record_disabled());
    setenv("SMDPLAN_NO_RECORD", "0", 1);
    assert_false(db_record_disabled());
    unsetenv("SMDPLAN_NO_RECORD");
    assert_false(db_record_disabled());
}

static void test_provenance_fill(void **state)
{
    (void)state;
    char *argv[] = {(char *)"smdplan", (char *)"--params", (char *)"30B", (char *)"a b",
                    (char *)"it's"};
    db_provenance p;
    db_provenance_fill(&p, 5, argv);
    assert_string_equal(p.command_line, "smdplan --params 30B 'a b' 'it'\\''s'");
    assert_non_null(strstr(p.library_versions, "sqlite 3."));
    assert_non_null(strstr(p.library_versions, "gsl "));
    assert_non_null(strstr(p.library_versions, "cjson "));
    assert_true(p.tool_version[0] && p.git_rev[0] && p.build_features[0] && p.host[0]);
    /* 2024-05-01T12:00:00.123Z */
    assert_int_equal(strlen(p.created_at), 24);
    assert_int_equal(p.created_at[10], 'T');
    assert_int_equal(p.created_at[23], 'Z');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_zero_byte_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_handmade_v0, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v1_to_v2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_to_next, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_step_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_sqlite_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_creates_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cannot_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_file, setup, teardown),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_provenance_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
