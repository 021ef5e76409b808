/*
 * test_db_open.c: opening, migrating and refusing database files.
 *
 * Migration from an empty path, a zero-byte file, a hand-made version-0
 * SQLite file, and version-1 and version-2 files made with the shipped
 * steps' own scripts, to version 8 (old rows keep NULL in the new columns,
 * and read back as documented; a version-3 file's records table is made
 * again with the bench kind, its rows and references intact; a version-4
 * file's runs gain the device's name and each rank's GPU memory; a
 * version-5 file's models gain the head size and the sliding window; a
 * version-6 file's plans the layers the block method recomputes and the
 * outputs a partial rematerialisation keeps; a version-7 file's plans
 * whether the model ran under torch.compile; the
 * migrated schema is a new file's); the
 * framework applying a further (test-only) step;
 * a newer schema, another application's SQLite file, a file that is not a
 * database and one with a damaged page are refused with a clear error in
 * both modes and keep every byte; a file that cannot be written (read-only
 * file, missing directory) is an I/O error; a device, a directory and a
 * pipe are refused as bad input before SQLite sees them; a reader never
 * creates a file.
 */
#define _XOPEN_SOURCE 700 /* mknod */

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "data/db_int.h"
#include "planner/plan_framework.h"
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

/* d opened on path in mode, which must succeed. */
static db *open_ok(const char *path, int mode)
{
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(path, mode, &d, &err), ST_OK);
    return d;
}

/* A reader of the file at path, which must be of schema version v. */
static db *open_version(const char *path, int v)
{
    db *d = open_ok(path, DB_OPEN_READ);
    assert_int_equal(db_schema_version(d), v);
    return d;
}

static void write_one(const char *path)
{
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(path, DB_OPEN_WRITE, &d, &err), ST_OK);
    db_provenance p = test_provenance();
    plan_cal_report c;
    small_calibration(&c, 1);
    int64_t id = 0;
    assert_int_equal(db_record_calibration(d, &p, "runs.csv", &c, &id, &err), ST_OK);
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
                                "'calibrations', 'calibration_params', 'calibration_sources')"),
                     16);
    /* version 2: every stage's memory by term */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('prediction_stages')"
                                " WHERE name IN ('weights_bytes', 'grads_bytes',"
                                " 'optimizer_bytes', 'activations_bytes', 'recompute_bytes',"
                                " 'logits_bytes', 'comm_buffers_bytes', 'context_bytes',"
                                " 'allocator_bytes') AND type = 'REAL'"),
                     9);
    /* version 3: the stack of a plan, the node's and GPU's new fields, fits
     * per (framework, chip) with standard errors and their sources */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('plans')"
                                " WHERE name IN ('framework', 'precision') AND type = 'TEXT'"),
                     2);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('instance_types')"
                                " WHERE name IN ('host_mem_bytes', 'efa', 'fp8_peak_flops',"
                                " 'fp8_gemm_eff', 'gemm_ceiling')"),
                     5);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('calibrations')"
                                " WHERE name IN ('framework', 'silicon', 'sources', 'rejected',"
                                " 'why')"),
                     5);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('calibration_params')"
                                " WHERE name = 'std_err' AND type = 'REAL'"),
                     1);
    /* version 4: executed runs' figures, the bench tables, the bench kind */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('runs')"
                                " WHERE name IN ('nranks', 'device', 'transport', 'threads_per_rank',"
                                " 'run_host', 'tokens_per_step', 'tokens_per_s',"
                                " 'model_flops_per_step', 'hardware_flops_per_step',"
                                " 'achieved_flops', 'peak_flops', 'mfu', 'failed_rank',"
                                " 'exit_status', 'measured_steps', 'launch_command', 'run_dir',"
                                " 'config_json', 'scaled', 'plan_record_id')"),
                     20);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('run_steps')"
                                " WHERE name IN ('compute_s', 'tp_comm_s', 'pp_wait_s', 'dp_comm_s',"
                                " 'lr', 'grad_norm', 'measured')"),
                     7);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('run_ranks')"
                                " WHERE name IN ('tp_rank', 'pp_rank', 'dp_rank', 'compute_s',"
                                " 'tp_comm_s', 'pp_wait_s', 'dp_comm_s', 'optimizer_s')"),
                     8);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                "name IN ('bench_hosts', 'bench_gemm', 'bench_elem', 'bench_mem',"
                                " 'bench_comm')"),
                     5);
    assert_non_null(strstr(db_kinds[4], "bench"));
    /* version 5: the device an executed run ran on, each rank's GPU memory */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('runs')"
                                " WHERE name = 'device_name' AND type = 'TEXT'"),
                     1);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('run_ranks')"
                                " WHERE name = 'device_memory_peak_bytes' AND type = 'REAL'"),
                     1);
    /* version 6: the attention shape beyond hidden and heads */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('models')"
                                " WHERE name IN ('head_dim', 'sliding_window',"
                                " 'sliding_window_pattern') AND type = 'INTEGER'"),
                     3);
    /* version 7: the layers Megatron's block method recomputes, the
     * outputs a partial rematerialisation keeps */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('plans')"
                                " WHERE name IN ('recompute_layers', 'recompute_saved')"
                                " AND type = 'INTEGER'"),
                     2);
    /* version 8: a model under torch.compile */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('plans')"
                                " WHERE name = 'compiled' AND type = 'INTEGER'"),
                     1);
    /* version 9: a run's own fused pointwise kernels */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_table_info('plans')"
                                " WHERE name = 'fused_pointwise' AND type = 'INTEGER'"),
                     1);
    /* every row still has its record */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

/* The file at path opened to write (created or migrated): current. */
static db *open_current(const char *path)
{
    db *d = open_ok(path, DB_OPEN_WRITE);
    check_current(d);
    return d;
}

/* The schema of the file at path is the one a file made new by this build
 * gets (dir: where to make that one). */
static void same_schema_as_new(const char *dir, const char *path)
{
    st_err err = {0};
    char fresh[700];
    snprintf(fresh, sizeof fresh, "%s/fresh.db", dir);
    unlink(fresh);
    db *d = NULL, *e = NULL;
    assert_int_equal(db_open(fresh, DB_OPEN_WRITE, &e, &err), ST_OK);
    assert_int_equal(db_open(path, DB_OPEN_READ, &d, &err), ST_OK);
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

/* A migrated file takes new records, and its schema is a new file's. */
static void takes_records_like_new(const fixture *f)
{
    write_one(f->path);
    same_schema_as_new(f->dir, f->path);
}

static void test_create_new(void **state)
{
    fixture *f = *state;
    db *d = open_current(f->path);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(d->h, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    db_close(d);
    /* reopening migrates nothing and keeps what is there */
    write_one(f->path);
    d = open_ok(f->path, DB_OPEN_READ);
    st_err err = {0};
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
    db_close(open_current(f->path));
}

/* A version-0 file as another tool would leave it: a valid SQLite database
 * with no tables, user_version 0 and no application id. */
static void test_from_handmade_v0(void **state)
{
    fixture *f = *state;
    raw_exec(f->path, "PRAGMA page_size = 1024; CREATE TABLE scratch (x); DROP TABLE scratch;");
    db_close(open_current(f->path));
    write_one(f->path);
}

/* A version-1 file as a version-1 build left it: the first shipped step's
 * script (db_schema.c never edits a shipped step) run by hand, holding one
 * plan record of two pipeline stages as that build recorded it. */
static void make_v1_file(const char *path)
{
    char pragmas[128];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = 1;",
             DB_APPLICATION_ID);
    raw_exec(path, db__migrations[0].sql);
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

/* The real steps 1 -> 2 -> 3 on a version-1 file: the record stays, its
 * stages gain the nine term columns as NULL, a new record fills them; the
 * migrated schema is the one a new file gets. A reader takes the version-1
 * file as it is. */
static void test_migrate_v1(void **state)
{
    fixture *f = *state;
    make_v1_file(f->path);
    db *d = open_version(f->path, 1);
    check_v1_plan_stages(d);
    db_close(d);

    d = open_current(f->path); /* with the nine term columns of version 2 */
    assert_int_equal(raw_int(d, "SELECT count(*) FROM prediction_stages WHERE weights_bytes IS"
                                " NULL AND allocator_bytes IS NULL"),
                     2);
    check_v1_plan_stages(d);
    db_plan pl;
    int n = 0;
    st_err err = {0};
    assert_int_equal(db_plans(d, 1, &pl, 1, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_true(pl.have_est && pl.est.nstages == 2 && pl.est.stage_mem_bytes[1] == 3.0e10);
    db_close(d);
    takes_records_like_new(f);
}

/* A version-2 file as a version-2 build left it: the shipped steps 0 and 1
 * run by hand, holding a plan record (one plan on an instance type, with
 * its prediction) and a calibration record of one GPU type whose
 * parameters were numbered as that build numbered them (misaligned_factor
 * and align_partial_factor are no longer fitted; fp8_gemm_eff did not
 * exist). */
static void make_v2_file(const char *path)
{
    char pragmas[128];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = 2;",
             DB_APPLICATION_ID);
    raw_exec(path, db__migrations[0].sql);
    raw_exec(path, db__migrations[1].sql);
    raw_exec(path, pragmas);
    raw_exec(path,
             "INSERT INTO records (id, kind, created_at, summary, command_line, tool_version,"
             " git_rev, build_features, library_versions, host) VALUES"
             " (1, 'plan', '2025-06-02T03:04:05.678Z', 'v2 plan', 'smdplan --params 13B', '0.1',"
             " 'abc', 'cpu', 'sqlite 3', 'host'),"
             " (2, 'calibration', '2025-06-02T03:04:06.000Z', 'v2 calibration',"
             " 'smdplan calibrate runs.csv', '0.1', 'abc', 'cpu', 'sqlite 3', 'host');"
             "INSERT INTO instance_types (id, record_id, name, gpu, gpus_per_node, net_bps,"
             " gpu_mem_bytes, gemm_eff_max, gpu_silicon) VALUES (1, 1, 'p4d.24xlarge',"
             " 'A100-40GB', 8, 5.0e10, 4.294967296e10, 0.71, 'GA100');"
             "INSERT INTO plans (id, record_id, instance_type_id, role, rank, nodes, gpus,"
             " match_key, label, tp, pp, dp, micro_batch, microbatches, schedule, recompute,"
             " sharding, launch_blocking) VALUES (1, 1, 1, 'top', 1, 2, 16, 'gpt L40|p4d x2 g16|',"
             " 'tp 4 pp 2 dp 2', 4, 2, 2, 1, 8, 'interleaved', 'full', 'none', 0);"
             "INSERT INTO predictions (id, plan_id, record_id, reject, total_bytes, worst_stage,"
             " capacity_bytes, nstages, step_s) VALUES (1, 1, 1, 'ok', 3.25e10, 0, 4.0e10, 2,"
             " 1.25);"
             "INSERT INTO prediction_stages (prediction_id, stage, layers, mem_bytes, inflight)"
             " VALUES (1, 0, 20, 3.25e10, 2), (1, 1, 20, 3.0e10, 1);"
             "INSERT INTO calibrations (id, record_id, file, gpu, rows, asked, fitted,"
             " mean_abs_err_before_pct, mean_abs_err_after_pct, max_abs_err_after_pct,"
             " iterations, converged) VALUES (1, 2, 'runs.csv', 'A100-80GB', 12, 31, 5, 9.5,"
             " 4.25, 11.0, 14, 1);"
             "INSERT INTO calibration_params (calibration_id, param, name, before, after, asked,"
             " fitted) VALUES (1, 0, 'gemm_eff_max', 0.6815, 0.7125, 1, 1),"
             " (1, 1, 'misaligned_factor', 0.5, 0.5, 1, 0),"
             " (1, 2, 'hbm_eff', 0.8974, 0.625, 1, 1),"
             " (1, 3, 'flash_eff', 0.55, 0.55, 1, 0),"
             " (1, 4, 'align_partial_factor', 1.0, 1.0, 1, 0);");
}

/* What a version-2 file's records read as, migrated or not. */
static void check_v2_records(db *d)
{
    st_err err = {0};
    db_plan pl;
    int n = 0;
    assert_int_equal(db_plans(d, 1, &pl, 1, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    /* before frameworks: the default framework's layout, in bf16 */
    assert_int_equal(pl.layout.framework, PLAN_FW_DEFAULT);
    assert_int_equal(pl.layout.precision, PLAN_PREC_BF16);
    assert_int_equal(pl.layout.tp, 4);
    assert_int_equal(pl.layout.schedule, PLAN_SCHED_INTERLEAVED);
    assert_true(pl.have_est && pl.est.time.step_s == 1.25);
    assert_string_equal(pl.instance_type, "p4d.24xlarge");

    /* compare and the grid take its plan with no framework */
    db_compare_row row;
    db_compare_filter all = {NULL, 0, NULL, NULL, 1};
    assert_int_equal(db_compare(d, &all, &row, 1, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_string_equal(row.framework, "");
    assert_string_equal(row.precision, "");
    assert_true(row.predicted_s == 1.25);
    db_grid_cell cell;
    assert_int_equal(db_grid(d, 1, &cell, 1, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_true(cell.tp == 4 && cell.pp == 2 && cell.feasible && cell.step_s == 1.25);
    assert_string_equal(cell.framework, "");

    /* the calibration of one GPU type: its parameters by name, no sources */
    plan_cal_report *r = calloc(1, sizeof *r);
    assert_int_equal(db_calibration(d, 2, r, &err), ST_OK);
    assert_int_equal(r->ngroups, 1);
    const plan_cal_group *g = &r->group[0];
    assert_string_equal(g->framework, "");
    assert_string_equal(g->silicon, "A100-80GB");
    assert_int_equal(g->rows, 12);
    assert_int_equal(g->sources, 0);
    assert_int_equal(g->rejected, 0);
    assert_true(g->before.gemm_eff_max == 0.6815 && g->after.gemm_eff_max == 0.7125);
    assert_true(g->before.hbm_eff == 0.8974 && g->after.hbm_eff == 0.625);
    assert_true(g->after.flash_eff == 0.55);
    assert_true(isnan(g->before.fp8_gemm_eff) && isnan(g->after.fp8_gemm_eff));
    for (int k = 0; k < PLAN_EFF__COUNT; k++)
        assert_true(isnan(g->std_err[k]));
    assert_int_equal(g->asked, (1u << PLAN_EFF_GEMM) | (1u << PLAN_EFF_HBM) |
                                   (1u << PLAN_EFF_FLASH));
    assert_int_equal(g->fitted, (1u << PLAN_EFF_GEMM) | (1u << PLAN_EFF_HBM));
    assert_true(g->mean_abs_err_after_pct == 4.25 && g->iterations == 14 && g->converged);
    assert_int_equal(r->nsources, 0);
    assert_int_equal(r->rows_used, 12);
    assert_true(isnan(r->loso_mean_source_err_pct));
    free(r);

    /* show: the record in full, params with the names it was fitted under */
    cJSON *rec = NULL;
    assert_int_equal(db_show(d, 2, &rec, &err), ST_OK);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "calibrations"), 0);
    assert_non_null(c);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "params")), 5);
    assert_null(cJSON_GetObjectItemCaseSensitive(rec, "calibration_sources"));
    cJSON_Delete(rec);
}

/* The real step 2 -> 3: a reader takes the version-2 file as it is; a
 * writer migrates it; the old rows keep NULL in every new column and read
 * back as before; the file takes new records; its schema is a new file's. */
static void test_migrate_v2_to_v3(void **state)
{
    fixture *f = *state;
    make_v2_file(f->path);
    db *d = open_version(f->path, 2);
    check_v2_records(d);
    db_close(d);

    d = open_current(f->path);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM plans WHERE framework IS NULL AND"
                                " precision IS NULL"),
                     1);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM instance_types WHERE host_mem_bytes IS NULL"
                                " AND efa IS NULL AND fp8_peak_flops IS NULL AND fp8_gemm_eff IS"
                                " NULL AND gemm_ceiling IS NULL"),
                     1);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM calibrations WHERE framework IS NULL AND"
                                " silicon IS NULL AND sources IS NULL AND rejected IS NULL AND"
                                " why IS NULL AND gpu = 'A100-80GB'"),
                     1);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM calibration_params WHERE std_err IS NULL"),
                     5);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM calibration_sources"), 0);
    check_v2_records(d);
    db_close(d);
    takes_records_like_new(f);
    d = open_ok(f->path, DB_OPEN_READ);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM calibration_sources"), 1);
    db_close(d);
}

/* A version-3 file as a version-3 build left it: the shipped steps 0 to 2
 * run by hand, holding a run record (a measured plan with its model,
 * instance type, prediction, run, steps and ranks). */
static void make_v3_file(const char *path)
{
    char pragmas[128];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = 3;",
             DB_APPLICATION_ID);
    for (int i = 0; i < 3; i++)
        raw_exec(path, db__migrations[i].sql);
    raw_exec(path, pragmas);
    raw_exec(path,
             "INSERT INTO records (id, kind, created_at, summary, command_line, tool_version,"
             " git_rev, build_features, library_versions, host) VALUES"
             " (7, 'run', '2025-07-01T00:00:00.000Z', 'v3 run', 'smdplan x', '0.1', 'abc',"
             " '-cuda -nccl +mpi', 'sqlite 3', 'host');"
             "INSERT INTO models (id, record_id, name, layers) VALUES (1, 7, 'tiny', 4);"
             "INSERT INTO instance_types (id, record_id, name, gpu, gpus_per_node) VALUES"
             " (1, 7, 'p4d.24xlarge', 'A100-40GB', 8);"
             "INSERT INTO plans (id, record_id, model_id, instance_type_id, role, rank, nodes, gpus,"
             " match_key, label, tp, pp, dp, framework, precision) VALUES (1, 7, 1, 1, 'measured',"
             " 1, 1, 8, 'k', 'tp 2 pp 2 dp 2', 2, 2, 2, 'smp', 'bf16');"
             "INSERT INTO predictions (id, plan_id, record_id, step_s) VALUES (1, 1, 7, 0.5);"
             "INSERT INTO runs (id, record_id, plan_id, model_id, source, status, backend,"
             " measured_step_s, predicted_step_s, nsteps) VALUES (1, 7, 1, 1, 'measured', 'ok',"
             " 'cpu+mpi', 0.625, 0.5, 2);"
             "INSERT INTO run_steps (run_id, step, time_s, loss) VALUES (1, 1, 0.75, 5.5),"
             " (1, 2, 0.625, 5.25);"
             "INSERT INTO run_ranks (run_id, rank, peak_mem_bytes) VALUES (1, 0, 1.5e6);");
}

/* make_v3_file's file taken on to version v by the shipped steps from 3 run
 * by hand, then sql run on it (what a version-v build would have left). */
static void make_v3_file_at(const char *path, int v, const char *sql)
{
    make_v3_file(path);
    for (int i = 3; i < v; i++)
        raw_exec(path, db__migrations[i].sql);
    char version[64];
    snprintf(version, sizeof version, "PRAGMA user_version = %d;", v);
    raw_exec(path, version);
    raw_exec(path, sql);
}

/* The real step 3 -> 4: records is made again with the bench kind (every
 * row kept, every reference to it intact), the runs tables gain the
 * executor's columns (NULL in the old rows), the bench tables appear; the
 * file takes runs and bench records; its schema is a new file's. */
static void test_migrate_v3_to_v4(void **state)
{
    fixture *f = *state;
    make_v3_file(f->path);
    db *d = open_version(f->path, 3);
    st_err err = {0};
    /* a reader of a version-3 file: no bench tables, and that is said */
    assert_int_equal(db_bench_read(d, 0, NULL, NULL, NULL, NULL, NULL, NULL, &err), ST_ENOENT);
    assert_non_null(strstr(err.msg, "no bench records"));
    st_err_clear(&err);
    db_close(d);

    d = open_current(f->path);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM records WHERE id = 7 AND kind = 'run' AND"
                                " summary = 'v3 run' AND build_features = '-cuda -nccl +mpi'"),
                     1);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM runs WHERE nranks IS NULL AND device IS NULL"
                                " AND mfu IS NULL AND config_json IS NULL AND measured_step_s ="
                                " 0.625"),
                     1);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM run_steps WHERE compute_s IS NULL AND"
                                " measured IS NULL"),
                     2);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM run_ranks WHERE tp_rank IS NULL"), 1);
    /* the new CHECK: bench is a kind, anything else is not */
    char *msg = NULL;
    assert_int_equal(sqlite3_exec(d->h, "INSERT INTO records (kind, created_at, summary,"
                                        " command_line, tool_version, git_rev, build_features,"
                                        " library_versions, host) VALUES ('nonsense', '', '', '',"
                                        " '', '', '', '', '')",
                                  NULL, NULL, &msg) & 0xff,
                     SQLITE_CONSTRAINT);
    sqlite3_free(msg);
    /* compare still joins the old run's three figures through its plan */
    db_compare_row row;
    int n = 0;
    db_compare_filter all = {NULL, 0, NULL, NULL, 2};
    assert_int_equal(db_compare(d, &all, &row, 1, &n, &err), ST_OK);
    assert_int_equal(n, 1);
    assert_true(row.predicted_s == 0.5 && row.measured_s == 0.625 && row.measured_id == 7);
    /* foreign keys hold in the migrated file: a row naming no record is refused */
    assert_int_equal(sqlite3_exec(d->h, "INSERT INTO runs (record_id, source) VALUES (999,"
                                        " 'measured')",
                                  NULL, NULL, &msg) & 0xff,
                     SQLITE_CONSTRAINT);
    sqlite3_free(msg);
    db_close(d);

    /* it takes a bench record */
    d = open_ok(f->path, DB_OPEN_WRITE);
    plan_bench_cpu *cpu = calloc(1, sizeof *cpu);
    assert_non_null(cpu);
    snprintf(cpu->host, sizeof cpu->host, "h1");
    cpu->cores = 2;
    cpu->ngemm = 1;
    cpu->gemm[0] = (plan_bench_gemm){"sgemm", 1, 256, 256, 256, 10, 1e-3,
                                      2.0 * 256 * 256 * 256 / 1e-3, 0};
    db_provenance p = test_provenance();
    int64_t id = 0;
    assert_int_equal(db_record_bench(d, &p, cpu, NULL, NULL, &id, &err), ST_OK);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM records WHERE kind = 'bench'"), 1);
    db_close(d);
    free(cpu);
    takes_records_like_new(f);
}

/* The real step 4 -> 5: a version-4 file (the shipped steps 0 to 3 run by
 * hand) holding an executed run keeps it, with NULL for the device's name
 * and each rank's GPU memory; compare still joins it; the file takes a run
 * that has them; its schema is a new file's. */
static void test_migrate_v4_to_v5(void **state)
{
    fixture *f = *state;
    make_v3_file_at(f->path, 4,
                    "UPDATE runs SET nranks = 1, device = 'cuda', transport = 'nccl',"
                    " mfu = 0.375 WHERE id = 1;");
    db_close(open_version(f->path, 4));
    db *d = open_current(f->path);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM runs WHERE device = 'cuda' AND"
                                " transport = 'nccl' AND mfu = 0.375 AND device_name IS NULL"),
                     1);
    assert_int_equal(raw_int(d, "SELECT count(*) FROM run_ranks WHERE peak_mem_bytes = 1.5e6"
                                " AND device_memory_peak_bytes IS NULL"),
                     1);
    db_compare_row row;
    int n = 0;
    db_compare_filter all = {NULL, 0, NULL, NULL, 2};
    st_err err = {0};
    assert_int_equal(db_compare(d, &all, &row, 1, &n, &err), ST_OK);
    assert_true(n == 1 && row.measured_s == 0.625 && row.measured_id == 7);
    db_close(d);
    takes_records_like_new(f);
}

/* The real step 5 -> 6: a version-5 file's model (Llama-3-8B's shape,
 * recorded before head sizes and windows were) keeps NULL in the new
 * columns and reads back as the shape it was: a head of hidden / heads, no
 * window; the file then records a Gemma 2 shape whole, its head size as
 * the planner used it; its schema is a new file's. */
static void test_migrate_v5_to_v6(void **state)
{
    fixture *f = *state;
    make_v3_file_at(f->path, 5,
                    "UPDATE models SET arch = 'llama', hidden = 4096, heads = 32, kv_heads = 8,"
                    " ffn = 14336, seq = 8192, vocab = 128256 WHERE id = 1;");
    db *d = open_current(f->path);
    st_err err = {0};
    assert_int_equal(raw_int(d, "SELECT count(*) FROM models WHERE id = 1 AND head_dim IS NULL"
                                " AND sliding_window IS NULL"),
                     1);
    plan_model m;
    assert_int_equal(db_model(d, 7, &m, &err), ST_OK);
    assert_int_equal(m.head_dim, 0);
    assert_int_equal(plan_model_head_dim(&m), 128);
    assert_int_equal(m.sliding_window, 0);
    db_close(d);
    takes_records_like_new(f);
}

/* The framework takes a current file to the version a later build would
 * ship: one more step in the list, applied once, in order. */
static void test_migrate_to_next(void **state)
{
    fixture *f = *state;
    enum { NEXT = DB_SCHEMA_VERSION + 1 };
    char want[96];
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
    /* no step on from there: a clear error */
    assert_int_equal(db__migrate(d, steps, NEXT, NEXT + 1, &err), ST_EUNSUPPORTED);
    snprintf(want, sizeof want, "no migration from schema version %d", NEXT);
    assert_non_null(strstr(err.msg, want));
    db_close(d);

    /* this build refuses the newer file and leaves it alone */
    size_t n;
    unsigned char *before = file_bytes(f->path, &n);
    assert_non_null(before);
    st_err_clear(&err);
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_EUNSUPPORTED);
    assert_null(d);
    snprintf(want, sizeof want, "newer smdplan (schema version %d", NEXT);
    assert_non_null(strstr(err.msg, want));
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
        plan_cal_report c;
        small_calibration(&c, i);
        assert_int_equal(db_record_calibration(d, &p, "runs.csv", &c, NULL, &err), ST_OK);
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

    /* A file above the size of a full check on open gets the cheap one,
     * which does not read that page; db_check (history --check) finds it. */
    db__full_check_max_bytes = 0;
    st_err_clear(&err);
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_OK);
    char report[2048];
    assert_int_equal(db_check(d, report, sizeof report, &err), ST_EPARSE);
    assert_non_null(strstr(err.msg, "corrupt database (integrity_check"));
    db_close(d);
    db__full_check_max_bytes = DB_FULL_CHECK_MAX_BYTES;
}

/* The cheap check on open still catches a header whose counts disagree,
 * and a sound file passes the full check. */
static void test_cheap_and_full_check(void **state)
{
    fixture *f = *state;
    st_err err = {0};
    db *d = NULL;
    assert_int_equal(db_open(f->path, DB_OPEN_WRITE, &d, &err), ST_OK);
    db_provenance p = test_provenance();
    plan_cal_report c;
    small_calibration(&c, 1);
    assert_int_equal(db_record_calibration(d, &p, "runs.csv", &c, NULL, &err), ST_OK);
    db_close(d);
    db__full_check_max_bytes = 0;
    assert_int_equal(db_open(f->path, DB_OPEN_READ, &d, &err), ST_OK);
    char report[256];
    assert_int_equal(db_check(d, report, sizeof report, &err), ST_OK);
    assert_string_equal(report, "");
    db_close(d);
    db__full_check_max_bytes = DB_FULL_CHECK_MAX_BYTES;
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
    /* a device: refused before SQLite sees it (it would take the writes and
     * leave a -journal file beside it, in /dev) */
    if (access("/dev/full", W_OK) == 0) {
        int had_journal = access("/dev/full-journal", F_OK) == 0; /* an older build's */
        st_err_clear(&err);
        assert_int_equal(db_open("/dev/full", DB_OPEN_WRITE, &d, &err), ST_EINVAL);
        assert_non_null(strstr(err.msg, "a device"));
        if (!had_journal)
            assert_int_equal(access("/dev/full-journal", F_OK), -1);
    }
    snprintf(p, sizeof p, "%s/null", f->dir);
    if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) { /* /dev/null's device, when allowed */
        char journal[720];
        snprintf(journal, sizeof journal, "%s-journal", p);
        st_err_clear(&err);
        assert_int_equal(db_open(p, DB_OPEN_WRITE, &d, &err), ST_EINVAL);
        assert_non_null(strstr(err.msg, "not a database file (a device)"));
        assert_int_equal(access(journal, F_OK), -1);
        unlink(p);
    }
    /* a directory, and a pipe (whose first read would never return) */
    st_err_clear(&err);
    assert_int_equal(db_open(f->dir, DB_OPEN_WRITE, &d, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "directory"));
    snprintf(p, sizeof p, "%s/fifo.db", f->dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    st_err_clear(&err);
    assert_int_equal(db_open(p, DB_OPEN_READ, &d, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "pipe"));
    /* an empty path is bad input; the context keeps the first error */
    assert_int_equal(db_open("", DB_OPEN_WRITE, &d, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "pipe"));
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
    db_provenance_fill(&p, 5, argv, exec_features_str());
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
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_zero_byte_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_handmade_v0, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v2_to_v3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v3_to_v4, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v4_to_v5, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v5_to_v6, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_to_next, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_step_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_sqlite_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cheap_and_full_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_creates_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cannot_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_file, setup, teardown),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_provenance_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
