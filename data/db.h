/*
 * db.h: the record of every answer smdplan gives, in an embedded SQLite
 * database (the only folder that touches SQLite is data/).
 *
 * The database file is `smdplan.db` in the working directory unless --db
 * PATH or $SMDPLAN_DB says otherwise. Its schema is versioned with PRAGMA
 * user_version and migrated forward from every earlier version on open; it
 * runs in WAL mode with a busy timeout, so several smdplan processes can
 * record at once (each record is one transaction). A file that is not an
 * SQLite database, fails SQLite's quick integrity check, belongs to another
 * application, or was written by a newer schema is refused with a clear
 * error and never modified. Only prepared statements are used.
 *
 * Records are of five kinds: plan (a search: model, cluster, the ranked
 * layouts and their predicted memory and time breakdowns), simulation (a
 * simulated step: summary and per-stage figures), run (a measured step from
 * the executor, or the published runs compared by `validate`, each with the
 * prediction beside it), calibration (the efficiency parameters fitted per
 * framework family and GPU chip, and how well each published source is
 * predicted with and without its own runs), bench (this host measured by
 * smdplan bench: GEMM rates, memory bandwidth, the transport between ranks,
 * and the catalog entry made from them). Every record carries its
 * provenance (db_provenance); every row of the other tables belongs to one
 * record.
 *
 * The tables (schema version 5; data/db_schema.c has the full text):
 *   records            id, kind, created_at, summary, provenance columns
 *   models             the model shape of a record (exact parameter counts)
 *   instance_types     the catalog entry as loaded (user overrides applied),
 *                      or the node a published run was read as
 *   searches           one per plan record: counts, objective, config_json
 *   plans              one layout (every plan_layout field, the framework
 *                      and precision from version 3) on a cluster, with
 *                      match_key: shape + cluster + layout, the key
 *                      `compare` joins on
 *   predictions        plan_evaluate's estimate of a plan: every memory term
 *                      (*_bytes, worst stage), every time term (*_s), rates
 *   prediction_stages  per pipeline rank: layers, memory, microbatches held,
 *                      and (version 2) memory by term (*_bytes, NULL in rows
 *                      recorded under version 1)
 *   simulations        sim_result summary and sim_config of a plan
 *   sim_stages         per pipeline rank: busy, bubble, peaks in flight ...
 *   sim_trace          every op of the step when the trace was kept
 *   runs               measured (executor) or published (validate) runs;
 *                      (version 4) an executed run's ranks, device, tokens/s,
 *                      FLOPs, MFU, launch command, config and failure;
 *                      (version 5) the device as it named itself (the GPU)
 *   run_steps          per step: time by phase, loss (version 4: the
 *                      executor's phases, lr, gradient norm, measured or not)
 *   run_ranks          per rank: peak memory (version 4: place in the layout,
 *                      phase totals; version 5: the GPU's own peak count)
 *   calibrations       one fit: a framework family on a chip, or the chip's
 *                      pool (framework ""); rows, sources, errors
 *                      before/after, rejected and why (version 2: one GPU
 *                      type, named in gpu)
 *   calibration_params one row per parameter: before, after, fitted, and
 *                      (version 3) its standard error
 *   calibration_sources (version 3) one row per published source: its
 *                      error after the fit and held out of it
 *   bench_hosts        (version 4) one per bench record: the host and the
 *                      catalog entry made from its measurements
 *   bench_gemm, bench_elem, bench_mem, bench_comm  (version 4) every
 *                      measurement
 */
#ifndef SMD_DB_H
#define SMD_DB_H

#include <stdint.h>

#include "common/st.h"
#include "planner/plan.h"
#include "planner/plan_bench.h"
#include "planner/plan_calibrate.h"
#include "planner/plan_framework.h"
#include "planner/plan_validate.h"
#include "sim/sim.h"

typedef struct db db;

/* Current schema version (PRAGMA user_version). */
#define DB_SCHEMA_VERSION 9

/* PRAGMA application_id of a smdplan database ("SMDP"), so that another
 * application's SQLite file is refused rather than migrated. */
#define DB_APPLICATION_ID 0x534D4450

/* How long a writer waits for another process's transaction, ms. */
#define DB_BUSY_TIMEOUT_MS 10000

/* Where records go: path if non-NULL and non-empty, else $SMDPLAN_DB, else
 * "smdplan.db". Returns path or a static string. */
const char *db_default_path(const char *path);

/* 1 when $SMDPLAN_NO_RECORD is set to anything but "" or "0": every command
 * behaves as with --no-record (for scripts and fuzzing). */
int db_record_disabled(void);

/* Open modes. */
enum {
    DB_OPEN_WRITE = 0,           /* create if missing, migrate, WAL mode */
    DB_OPEN_READ = 1,            /* an existing file; never created or changed */
};

/* Open the database at path. DB_OPEN_WRITE creates the file if needed and
 * migrates it to DB_SCHEMA_VERSION; DB_OPEN_READ opens an existing file
 * without creating or migrating it (for history, show, compare, report).
 * Errors (the message names the path and keeps SQLite's own words):
 *   ST_ENOENT        DB_OPEN_READ and no file
 *   ST_EIO           the file cannot be opened, or not written (read-only
 *                    file or directory, full disk)
 *   ST_EPARSE        not an SQLite file, another application's, or corrupt
 *   ST_EUNSUPPORTED  written by a newer schema (version named)
 * On error *out is NULL and nothing was written to an existing file. */
int db_open(const char *path, int mode, db **out, st_err *err);

/* Close (NULL is harmless). */
void db_close(db *d);

/* The full check (PRAGMA integrity_check: every page, every index against
 * its table), which db_open runs only in its quick form and only on files
 * up to 16 MiB. ST_OK, or ST_EPARSE "corrupt database" with the first
 * DB_CHECK_PROBLEMS_MAX problems, one per line, in report (n bytes; may be
 * NULL). Seconds on a large file. */
#define DB_CHECK_PROBLEMS_MAX 20
#define DB_CHECK_PROBLEMS_MAX_STR "20"
int db_check(db *d, char *report, size_t n, st_err *err);

/* Schema version of an open database. */
int db_schema_version(const db *d);

/* Who, what and where produced a record. */
typedef struct db_provenance {
    char command_line[1024];
    char tool_version[32];
    char git_rev[48];
    char build_features[64];     /* the build's features (exec_features_str()) */
    char library_versions[160];  /* "sqlite 3.40.1, gsl 2.7.1, cjson 1.7.15" */
    char host[128];
    char created_at[32];         /* UTC, ISO 8601 with milliseconds */
} db_provenance;

/* Fill provenance for this process; argv is joined into command_line
 * (arguments with spaces or quotes are single-quoted); build_features is
 * the caller's (the executor's exec_features_str(), "-cuda -nccl +mpi"),
 * copied, so data/ needs nothing of exec/. */
void db_provenance_fill(db_provenance *p, int argc, char **argv, const char *build_features);

/* Every db_record_* call writes one record in one transaction (all of it or
 * nothing), and gives its id in *id (id may be NULL). */

/* Every prediction recorded below (plans, simulations, runs, validations)
 * keeps the memory of each pipeline stage by term: the terms are computed
 * from the model, cluster and layout handed in (plan_stages_mem, the code
 * plan_evaluate ran) and kept only where they sum to the estimate's
 * stage_mem_bytes; otherwise (a layout rejected for anything but memory, an
 * estimate not made on that cluster) those columns stay NULL. */

/* A search and its ranked plans, each with its prediction (every memory and
 * time term, per-stage memory). sim_step_s, if non-NULL, holds the
 * simulated step of each of r->top (0 = not simulated). With r->ntop == 0
 * the closest out-of-memory layout is kept (role 'closest_oom'). */
int db_record_plan(db *d, const db_provenance *p, const plan_model *m, const plan_cluster *c,
                   const plan_config *cfg, const plan_result *r, const double *sim_step_s,
                   int64_t *id, st_err *err);

/* The comparison mode of plan (no --instances): the best plan of each of n
 * clusters (cands[i] on clusters[i]), training tokens tokens. One record of
 * kind plan whose plans span instance types and counts. */
int db_record_plan_options(db *d, const db_provenance *p, const plan_model *m,
                           const plan_config *cfg, int n, const plan_cluster *clusters,
                           const plan_candidate *cands, double tokens, int64_t *id, st_err *err);

/* A simulated step of one layout, with its analytic estimate (est may be
 * NULL) and, when s->trace is set, every op of the step. */
int db_record_simulation(db *d, const db_provenance *p, const plan_model *m,
                         const plan_cluster *c, const plan_layout *l, const plan_estimate *est,
                         const sim_config *cfg, const sim_result *s, int64_t *id, st_err *err);

/* The rows of a validation: each published run (runs.source = 'published')
 * with its layout, prediction and error, and its simulated time when sim_s
 * is non-NULL (0 = not simulated). cat is the catalog the rows were
 * predicted with. Each row's node (r->inst: a catalog entry as loaded, or
 * the node made from the row's GPU and network text) is recorded once per
 * distinct node, with its GPU and curves from cat. One record of kind run. */
int db_record_validation(db *d, const db_provenance *p, const plan_catalog *cat,
                         const char *file, const plan_validate_result *rows, const double *sim_s,
                         int n, int64_t *id, st_err *err);

/* A calibration of file's rows: every fit of rep (a calibrations row each,
 * with its parameters) and every source (calibration_sources). The summary
 * keeps the mean over sources of their error fitted and held out. */
int db_record_calibration(db *d, const db_provenance *p, const char *file,
                          const plan_cal_report *rep, int64_t *id, st_err *err);

/* One measured step of a run (the executor's figures). */
typedef struct db_run_step {
    int step;
    double time_s;
    double forward_s, backward_s, optimizer_s, comm_s; /* NAN or 0 when not measured */
    double loss;
    /* schema version 4, recorded when phases is 1 (else NULL): the
     * executor's phases (mean over ranks, RESULT.json's phases_s) */
    int phases;
    double compute_s, tp_comm_s, pp_wait_s, dp_comm_s;
    double lr, grad_norm;
    int measured;                /* 1: counted in the medians; 0: a warm-up step */
} db_run_step;

/* One rank of an executed run (schema version 4). */
typedef struct db_run_rank {
    int rank, tp_rank, pp_rank, dp_rank;
    double peak_mem_bytes;
    double compute_s, tp_comm_s, pp_wait_s, dp_comm_s, optimizer_s; /* totals, measured steps */
    double device_mem_peak_bytes; /* schema version 5: the GPU's memory in use at most as
                                   * CUDA counts it; 0 = none (the CPU device) */
} db_run_rank;

/* A measured run, as the executor reports it. Borrowed for the call. Fields
 * after rank_peak_mem_bytes are schema version 4's; zero, NULL or NAN
 * leaves their columns NULL. */
typedef struct db_run {
    const char *status;          /* "ok", "failed", "timeout", "oom" */
    const char *error_text;      /* NULL or "" when none */
    const char *backend;         /* "cpu+mpi", "cuda+nccl" ... */
    double measured_step_s;      /* the figure compared with the prediction; 0 = none */
    int nsteps;
    const db_run_step *steps;
    int nranks;
    const double *rank_peak_mem_bytes; /* nranks values, or NULL (rank_stats has them) */

    const db_run_rank *rank_stats; /* nranks entries, or NULL */
    int ranks;                   /* ranks launched (tp x pp x dp) */
    const char *device;          /* "cpu", "cuda" */
    const char *transport;       /* "mpi", "nccl" */
    int threads_per_rank;
    const char *run_host;        /* where it ran */
    double tokens_per_step, tokens_per_s;
    double model_flops_per_step, hardware_flops_per_step;
    double achieved_flops;       /* model FLOPs per step / step time, FLOP/s */
    double peak_flops;           /* the device's peak x ranks, FLOP/s (MFU's denominator) */
    double mfu;
    const int *failed_rank;      /* NULL: none known */
    const int *exit_status;      /* the launcher's (mpirun's) exit status; NULL: none */
    int measured_steps;          /* steps in the median */
    const char *launch_command;  /* the exact mpirun command */
    const char *run_dir;         /* where CONFIG.json and RESULT.json are */
    const char *config_json;     /* the CONFIG.json text it ran */
    const char *scaled;          /* what --scale reduced ("layers 96 -> 4, ..."), or NULL */
    int64_t plan_record_id;      /* the recorded plan it ran (0: layout flags) */
    double simulated_step_s;     /* the simulator's step for the same layout on this
                                  * host; 0 = not simulated */
    const char *device_name;     /* schema version 5: the device as it named itself (the
                                  * GPU's model); NULL or "" leaves it NULL */
} db_run;

/* A measured run of layout l of model m on cluster c (runs.source =
 * 'measured'; c may be NULL for a host with no catalog entry: the plan then
 * names run->run_host, 1 node of run->ranks, and no prediction is kept),
 * with the prediction beside it (est may be NULL) and, when
 * run->simulated_step_s > 0, the simulated step (plans.simulated_step_s and
 * runs.simulated_step_s), so that compare joins the three. */
int db_record_run(db *d, const db_provenance *p, const plan_model *m, const plan_cluster *c,
                  const plan_layout *l, const plan_estimate *est, const db_run *run, int64_t *id,
                  st_err *err);

/* What smdplan bench made of its measurements: the catalog entry for this
 * host and the figures it took from them. Borrowed for the call. */
typedef struct db_bench_entry {
    const char *instance_name;   /* the catalog's instance type for this host */
    const char *gpu_name;        /* its device entry */
    const char *catalog_file;    /* where it was written (NULL: not written) */
    const char *catalog_json;    /* the entry as written */
    int threads_per_rank;
    double peak_flops;           /* the device's peak: sgemm asymptote at threads_per_rank */
    double gemm_dim_half, gemm_rms_log_err, misaligned_factor;
    double hbm_bps;              /* triad bandwidth per rank */
    double hbm_eff;              /* the norm and residual kernels' fraction of it */
    double act_fwd_s, act_bwd_s, glu_fwd_s, glu_bwd_s, opt_param_s; /* compute floors
                                  * (plan_gpu), NAN: not measured */
    double attn_fwd_flops, attn_bwd_flops; /* the attention core's rates (plan_gpu) */
    double p2p_bps, p2p_latency_s; /* send/recv between two ranks (NAN: not measured) */
    double allreduce_busbw_bps, allreduce_latency_s;
} db_bench_entry;

/* A bench record: this host's CPU measurements (cpu may be NULL), the
 * transport's (comm may be NULL) and the entry made from them. One record
 * of kind bench. */
int db_record_bench(db *d, const db_provenance *p, const plan_bench_cpu *cpu,
                    const plan_bench_comm *comm, const db_bench_entry *entry, int64_t *id,
                    st_err *err);

/* The measurements of a bench record (record_id > 0), or of the newest bench
 * record that has them (0; host, if non-NULL, only that host's). cpu and
 * comm (each may be NULL) get the measurements as recorded; *have_cpu and
 * *have_comm (may be NULL) say which the record holds; *id (may be NULL)
 * the record read. ST_ENOENT when there is no such record. */
int db_bench_read(db *d, int64_t record_id, const char *host, plan_bench_cpu *cpu,
                  int *have_cpu, plan_bench_comm *comm, int *have_comm, int64_t *id,
                  st_err *err);

/* ---- reading ---- */

/* The record kinds; NULL-terminated. */
extern const char *const db_kinds[];

/* 1 if kind is one of db_kinds. */
int db_kind_valid(const char *kind);

/* One line of history. */
typedef struct db_summary {
    int64_t id;
    char kind[16];               /* "plan", "simulation", "run", "calibration", "bench" */
    char created_at[32];
    char summary[256];           /* one line: model, cluster, best layout, time */
    char command_line[256];      /* shortened with "..." when longer */
} db_summary;

/* Up to max records, newest first, optionally of one kind (NULL: all; an
 * unknown kind is ST_EINVAL naming the allowed ones). *n receives the count. */
int db_history(db *d, const char *kind, db_summary *out, int max, int *n, st_err *err);

/* Number of records, optionally of one kind. */
int db_count(db *d, const char *kind, int64_t *n, st_err *err);

/* One record in full as a JSON object (caller owns; cJSON_Delete):
 *   id, kind, created_at, summary, provenance {...},
 *   models [...], instance_types [...], search {...} (plan),
 *   plans [{..layout.., prediction {..terms.., stages [...]}}],
 *   simulations [{.., stages [...], trace [...]}],
 *   runs [{.., steps [...], ranks [...]}],
 *   calibrations [{.., params [...]}], calibration_sources [...]
 * Keys are the column names of the tables above; empty arrays are left out.
 * ST_ENOENT for an id with no record. */
struct cJSON;
int db_show(db *d, int64_t id, struct cJSON **out, st_err *err);

/* Prediction, simulation and measurement of the same plan (same model
 * shape, cluster and layout: plans.match_key), the latest of each. */
typedef struct db_compare_row {
    char model[PLAN_NAME_MAX];
    int64_t params;
    char instance_type[48];
    int nodes, gpus;
    char layout[128];            /* "tp 8 pp 2 dp 8 mbs 1x16 interleaved recompute full ..." */
    char framework[PLAN_FW_KEY_MAX]; /* plan_frameworks key ("smp", "megatron" ...) */
    char precision[8];           /* plan_precision_name ("bf16", "fp8", "fp32") */
    double predicted_s;          /* 0 = none */
    double simulated_s;
    double measured_s;
    int64_t predicted_id, simulated_id, measured_id; /* their records (0 = none) */
    char measured_source[16];    /* "published", "measured" or "" */
} db_compare_row;

/* Which plans compare looks at. Zero-initialised: every plan with at least
 * two of the three figures. */
typedef struct db_compare_filter {
    const int64_t *records;      /* only plans of these records (nrecords > 0) */
    int nrecords;
    const char *model;           /* model name contains this (case-insensitive) */
    const char *instance_type;   /* instance type name contains this */
    int min_figures;             /* 1..3 figures a row must have; 0 = 2 */
} db_compare_filter;

/* Up to max rows, the most recently recorded plan first. *n gets the count.
 * An id in f->records with no record is ST_ENOENT. */
int db_compare(db *d, const db_compare_filter *f, db_compare_row *out, int max, int *n,
               st_err *err);


/* ---- records read back into the planner's and simulator's structs ---- */

/* One plan row of a record: its layout and prediction as plan_evaluate
 * made them (worst-stage memory by term, per-stage totals, time by term). */
typedef struct db_plan {
    int64_t id;                  /* plans.id */
    int64_t record_id;
    char role[16];               /* "top" (ranked), "closest_oom", "grid" (best of a TP x PP
                                  * pair), "option" (comparison mode), "simulated",
                                  * "published", "measured" */
    int rank;                    /* 1.. for "top", else 0 */
    char instance_type[48];
    char gpu[32];
    int nodes, gpus;
    plan_layout layout;          /* with its framework and precision; a plan recorded
                                  * before schema version 3 reads as the default
                                  * framework (SMP v1, what the planner modelled then)
                                  * in bf16 */
    int have_est;                /* est holds the prediction */
    plan_estimate est;
    double simulated_s;          /* simulated step; 0 = not simulated */
    char label[128];             /* db's layout label */
} db_plan;

/* The plans of a record in the order recorded (rank order for a search).
 * Up to max; *n gets the count. ST_ENOENT for an id with no record. */
int db_plans(db *d, int64_t record_id, db_plan *out, int max, int *n, st_err *err);

/* One pipeline stage of a recorded prediction. */
typedef struct db_plan_stage {
    int stage;                   /* pipeline rank, 0.. */
    int layers;                  /* transformer layers on it */
    int inflight;                /* microbatches whose activations it holds */
    double mem_bytes;            /* per GPU, total */
    int have_terms;              /* mem holds the terms (recorded under schema 2+ and
                                  * computed then); 0: only mem_bytes is known */
    plan_mem mem;                /* by term, mem.total_bytes = mem_bytes; zero
                                  * without have_terms */
} db_plan_stage;

/* The stages of the prediction of plan plan_id (db_plan.id), in stage
 * order. Up to max; *n gets the count (0 when the plan has no prediction).
 * Reads files of every schema version (a version-1 file opened for reading
 * is not migrated: its stages come back without terms). */
int db_plan_stages(db *d, int64_t plan_id, db_plan_stage *out, int max, int *n, st_err *err);

/* The (first) model of a record. ST_ENOENT when it has none. */
int db_model(db *d, int64_t record_id, plan_model *out, st_err *err);

/* The simulation of a simulation record as sim_step_run returned it: the
 * summary, every stage and, when it was kept, the trace (owned by out:
 * sim_result_fini). cfg (may be NULL) gets its sim_config. ST_ENOENT when
 * the record holds no simulation. */
int db_simulation(db *d, int64_t record_id, sim_config *cfg, sim_result *out, st_err *err);

/* The best recorded step per (TP, PP) for the model shape, cluster,
 * framework and precision of a record's first plan, over every record with
 * them (a search records the best layout of every TP x PP pair it tried).
 * Plans recorded before schema version 3 have no framework: they make a
 * grid of their own. */
typedef struct db_grid_cell {
    int tp, pp;
    int feasible;                /* 1: step_s is the best feasible step recorded */
    double step_s;
    char reason[24];             /* when infeasible: the latest rejection ("out of memory") */
    char layout[128];
    char framework[PLAN_FW_KEY_MAX]; /* plan_frameworks key; "" when not recorded */
    char precision[8];           /* plan_precision_name; "" when not recorded */
} db_grid_cell;

int db_grid(db *d, int64_t record_id, db_grid_cell *out, int max, int *n, st_err *err);

/* The best recorded plan (most tokens/s) per instance type and count for
 * the model shape, framework and precision of a record's first plan (a
 * comparison-mode plan record has one per type and count), ordered by
 * type, then count. */
typedef struct db_scaling_point {
    char instance_type[48];
    int nodes, gpus;
    double tokens_per_s, step_s, mfu;
    double cost_per_hour, cost_per_mtokens; /* 0 when the price is unknown */
    char layout[128];
    char framework[PLAN_FW_KEY_MAX]; /* as db_grid_cell */
    char precision[8];
} db_scaling_point;

int db_scaling(db *d, int64_t record_id, db_scaling_point *out, int max, int *n, st_err *err);

/* Runs with a measured step and what was predicted (and simulated) for
 * them. record_id > 0: the runs of that record; 0: every measured
 * (executor) run and the published runs of the newest record that has any. */
typedef struct db_measured {
    int64_t run_id, record_id;
    char source[16];             /* "published" or "measured" */
    char source_key[64];         /* published: the source ("megatron_2021"); else "" */
    char row_id[32];             /* published: the row of the file */
    char model[PLAN_NAME_MAX];
    char layout[128];
    char framework[PLAN_FW_KEY_MAX]; /* the plan's (a published run's: its row's); "" when
                                  * not recorded */
    char precision[8];
    double measured_s, predicted_s, simulated_s; /* 0 = none */
} db_measured;

int db_measured_runs(db *d, int64_t record_id, db_measured *out, int max, int *n, st_err *err);

/* The executor's runs (runs.source 'measured', schema version 4 and later)
 * that ended "ok" with a measured step, oldest first: what `smdplan
 * calibrate --runs` fits to. The layout and model of each are its record's
 * (db_plans: the plan of role "measured", db_model). A file older than
 * version 4 has none (*n = 0). */
typedef struct db_exec_run {
    int64_t run_id, record_id;
    int ranks;
    char device[16];             /* "cpu", "cuda" */
    char transport[16];          /* "mpi", "nccl" */
    char device_name[256];       /* version 5: the device as it named itself; "" before */
    char run_host[128];
    char model[PLAN_NAME_MAX];
    char instance_type[48];      /* of its plan: the catalog entry it was predicted on, or
                                  * the host's name when there was none */
    char framework[PLAN_FW_KEY_MAX]; /* the plan's plan_frameworks key */
    double measured_s;           /* median of the measured steps */
    double predicted_s, simulated_s; /* when it ran; 0 = none */
} db_exec_run;

int db_exec_runs(db *d, db_exec_run *out, int max, int *n, st_err *err);

/* The calibration of a calibration record as plan_calibrate reported it:
 * every fit (groups, in the order recorded) with its parameters and their
 * standard errors, and every source with its fitted and held-out error. The
 * report's totals are not stored; they are computed again from the sources
 * as plan_calibrate.h defines them (rows_used the sum of the sources' rows,
 * the means and maxima over sources in their order), so a report read back
 * equals the one recorded, bit for bit. A record of schema version 2 (one
 * fit per GPU type, before frameworks) reads with its GPU type as the chip,
 * no framework and no sources (rows_used the sum of its fits' rows), its
 * parameters matched by name (those no longer fitted are left out) and
 * NAN where it has no value (standard errors, fp8_gemm_eff). ST_ENOENT when
 * the record holds no calibration. */
int db_calibration(db *d, int64_t record_id, plan_cal_report *out, st_err *err);

/* ---- queries for reports ---- */

/* A column value handed to db_select's callback. */
typedef struct db_value {
    int is_null;
    double num;                  /* numeric value (0 for text) */
    const char *text;            /* text form, valid during the callback */
} db_value;

/* Called once per row with ncols values and their column names; a non-zero
 * return stops the query (and is returned by db_select as ST_OK). */
typedef int (*db_row_fn)(void *ctx, int ncols, const char *const *names, const db_value *vals);

/* Run one read-only SELECT (a statement that would change the database is
 * ST_EINVAL) with nparams text parameters bound to ?1.. (NULL entries bind
 * NULL). For reports/, which may not link SQLite. */
int db_select(db *d, const char *sql, const char *const *params, int nparams, db_row_fn fn,
              void *ctx, st_err *err);

#endif
