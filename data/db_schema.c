/*
 * db_schema.c: the database schema as a list of migrations, and the code
 * that applies them.
 *
 * The schema version lives in PRAGMA user_version: 0 is an empty file, N is
 * the schema after migration N-1 -> N. db__migrations[i] takes version i to
 * i + 1 and is never edited once shipped: a change to the schema is a new
 * entry at the end (ALTER TABLE ... ADD COLUMN, a new table, a data copy),
 * with DB_SCHEMA_VERSION raised to match and a test that migrates a file of
 * every earlier version. Each step runs in its own transaction with the
 * version bump, so a step is applied completely or not at all.
 *
 * Column names carry units (_bytes, _s, _bps, _pct). The memory and time
 * terms in predictions are plan_mem and plan_time member for member (memory
 * of the worst stage); prediction_stages has every stage's total and, from
 * version 2, its plan_mem terms; the columns of plans are plan_layout's
 * members (enums as their names; the framework as its plan_frameworks key,
 * from version 3).
 */
#include <stdio.h>
#include <string.h>

#include "data/db_int.h"

/* Version 0 -> 1: the first schema. */
static const char schema_v1[] =
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

/* Version 1 -> 2: memory by term for every pipeline stage, plan_mem member
 * for member as predictions holds it for the worst stage (their sum is the
 * row's mem_bytes); the GPU's chip and second alignment tier with the
 * instance types; blocking kernel launches with the plans. Rows recorded
 * under version 1 keep NULL there. */
static const char schema_v2[] =
    "ALTER TABLE prediction_stages ADD COLUMN weights_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN grads_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN optimizer_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN activations_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN recompute_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN logits_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN comm_buffers_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN context_bytes REAL;"
    "ALTER TABLE prediction_stages ADD COLUMN allocator_bytes REAL;"
    "ALTER TABLE instance_types ADD COLUMN gpu_silicon TEXT;"
    "ALTER TABLE instance_types ADD COLUMN gemm_align_bytes REAL;"
    "ALTER TABLE instance_types ADD COLUMN align_partial_factor REAL;"
    "ALTER TABLE plans ADD COLUMN launch_blocking INTEGER;";

/* Version 2 -> 3: the training stack. Every plan's framework (its
 * plan_frameworks key, "smp", "megatron" ...) and the number format of its
 * linears ("bf16", "fp8", "fp32"); the instance type's host memory and EFA,
 * its GPU's FP8 peak, FP8 GEMM efficiency and measured GEMM ceiling.
 * Calibrations are fitted per (framework family, chip): a calibrations row
 * is one fit, its framework ("" for the chip's pool of every framework),
 * its chip, how many published sources its rows came from, and whether it
 * was rejected and why; each parameter gets its standard error; and
 * calibration_sources has one row per published source: its error after
 * the fit and held out of it (leave-one-source-out, NULL when not run) and
 * what predicted it then. Rows recorded under version 2 keep NULL in the
 * new columns (a version-2 calibration names its GPU type in gpu). */
static const char schema_v3[] =
    "ALTER TABLE plans ADD COLUMN framework TEXT;"
    "ALTER TABLE plans ADD COLUMN precision TEXT;"
    "ALTER TABLE instance_types ADD COLUMN host_mem_bytes REAL;"
    "ALTER TABLE instance_types ADD COLUMN efa INTEGER;"
    "ALTER TABLE instance_types ADD COLUMN fp8_peak_flops REAL;"
    "ALTER TABLE instance_types ADD COLUMN fp8_gemm_eff REAL;"
    "ALTER TABLE instance_types ADD COLUMN gemm_ceiling REAL;"
    "ALTER TABLE calibrations ADD COLUMN framework TEXT;"
    "ALTER TABLE calibrations ADD COLUMN silicon TEXT;"
    "ALTER TABLE calibrations ADD COLUMN sources INTEGER;"
    "ALTER TABLE calibrations ADD COLUMN rejected INTEGER;"
    "ALTER TABLE calibrations ADD COLUMN why TEXT;"
    "ALTER TABLE calibration_params ADD COLUMN std_err REAL;"
    "CREATE TABLE calibration_sources ("
    " id INTEGER PRIMARY KEY,"
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " source_key TEXT NOT NULL, framework TEXT, silicon TEXT, rows INTEGER,"
    " mean_abs_err_pct REAL, loso_mean_abs_err_pct REAL, loso_basis TEXT);"
    "CREATE INDEX calibration_sources_record ON calibration_sources (record_id, id);";

/* Version 3 -> 4: the executor's runs and the host benchmark.
 *
 * records takes a fifth kind, 'bench' (smdplan bench: this host measured).
 * SQLite cannot change a CHECK constraint in place, so the table is made
 * again the way SQLite's documentation says ("Making Other Kinds Of Table
 * Schema Changes", sqlite.org/lang_altertable.html): a new table, every row
 * copied, the old one dropped, the new one renamed, its index made again.
 * db_open applies migrations before it turns foreign keys on, as that
 * procedure requires; the other tables' REFERENCES records (id) name the
 * table, which exists again under that name when the step commits.
 *
 * An instance type's GPU keeps the compute floors of a CPU device's
 * elementwise kernels (act_*_s, glu_*_s, opt_param_s) and attention core
 * (attn_*_flops: plan_gpu).
 *
 * A measured run (runs.source 'measured') keeps what the executor reported
 * and what smdplan derived from it: ranks (nranks), device, transport and threads
 * per rank, the host it ran on, tokens per step and per second, the model
 * and hardware FLOPs per step, the achieved model FLOP/s, the peak it is
 * measured against (the device's peak x ranks) and the MFU, the rank that
 * failed and the launcher's exit status, the measured steps, the exact
 * launch command, the run directory, the CONFIG.json it ran and what was
 * reduced from the plan (--scale), and the record of the plan it ran.
 * run_steps gain the contract's phases (compute, TP comm, PP wait, DP comm;
 * optimizer_s was there), the learning rate, the gradient norm and whether
 * the step counts in the medians; run_ranks each rank's place in the
 * layout and its phase totals. The bench tables hold a bench record's
 * host, every GEMM (cblas_sgemm and the executor's own linears), elementwise
 * kernel, triad and collective measurement, and the catalog entry made from
 * them. Rows recorded under version 3 keep
 * NULL in the new columns. */
static const char schema_v4[] =
    "CREATE TABLE records_v4 ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL CHECK (kind IN ('plan', 'simulation', 'run', 'calibration', 'bench')),"
    " created_at TEXT NOT NULL,"
    " summary TEXT NOT NULL,"
    " command_line TEXT NOT NULL,"
    " tool_version TEXT NOT NULL,"
    " git_rev TEXT NOT NULL,"
    " build_features TEXT NOT NULL,"
    " library_versions TEXT NOT NULL,"
    " host TEXT NOT NULL);"
    "INSERT INTO records_v4 (id, kind, created_at, summary, command_line, tool_version, git_rev,"
    " build_features, library_versions, host)"
    " SELECT id, kind, created_at, summary, command_line, tool_version, git_rev,"
    " build_features, library_versions, host FROM records;"
    "DROP TABLE records;"
    "ALTER TABLE records_v4 RENAME TO records;"
    "CREATE INDEX records_kind ON records (kind, id);"

    "ALTER TABLE instance_types ADD COLUMN act_fwd_s REAL;"
    "ALTER TABLE instance_types ADD COLUMN act_bwd_s REAL;"
    "ALTER TABLE instance_types ADD COLUMN glu_fwd_s REAL;"
    "ALTER TABLE instance_types ADD COLUMN glu_bwd_s REAL;"
    "ALTER TABLE instance_types ADD COLUMN opt_param_s REAL;"
    "ALTER TABLE instance_types ADD COLUMN attn_fwd_flops REAL;"
    "ALTER TABLE instance_types ADD COLUMN attn_bwd_flops REAL;"
    "ALTER TABLE runs ADD COLUMN nranks INTEGER;"
    "ALTER TABLE runs ADD COLUMN device TEXT;"
    "ALTER TABLE runs ADD COLUMN transport TEXT;"
    "ALTER TABLE runs ADD COLUMN threads_per_rank INTEGER;"
    "ALTER TABLE runs ADD COLUMN run_host TEXT;"
    "ALTER TABLE runs ADD COLUMN tokens_per_step REAL;"
    "ALTER TABLE runs ADD COLUMN tokens_per_s REAL;"
    "ALTER TABLE runs ADD COLUMN model_flops_per_step REAL;"
    "ALTER TABLE runs ADD COLUMN hardware_flops_per_step REAL;"
    "ALTER TABLE runs ADD COLUMN achieved_flops REAL;"
    "ALTER TABLE runs ADD COLUMN peak_flops REAL;"
    "ALTER TABLE runs ADD COLUMN mfu REAL;"
    "ALTER TABLE runs ADD COLUMN failed_rank INTEGER;"
    "ALTER TABLE runs ADD COLUMN exit_status INTEGER;"
    "ALTER TABLE runs ADD COLUMN measured_steps INTEGER;"
    "ALTER TABLE runs ADD COLUMN launch_command TEXT;"
    "ALTER TABLE runs ADD COLUMN run_dir TEXT;"
    "ALTER TABLE runs ADD COLUMN config_json TEXT;"
    "ALTER TABLE runs ADD COLUMN scaled TEXT;"
    "ALTER TABLE runs ADD COLUMN plan_record_id INTEGER;"
    "ALTER TABLE run_steps ADD COLUMN compute_s REAL;"
    "ALTER TABLE run_steps ADD COLUMN tp_comm_s REAL;"
    "ALTER TABLE run_steps ADD COLUMN pp_wait_s REAL;"
    "ALTER TABLE run_steps ADD COLUMN dp_comm_s REAL;"
    "ALTER TABLE run_steps ADD COLUMN lr REAL;"
    "ALTER TABLE run_steps ADD COLUMN grad_norm REAL;"
    "ALTER TABLE run_steps ADD COLUMN measured INTEGER;"
    "ALTER TABLE run_ranks ADD COLUMN tp_rank INTEGER;"
    "ALTER TABLE run_ranks ADD COLUMN pp_rank INTEGER;"
    "ALTER TABLE run_ranks ADD COLUMN dp_rank INTEGER;"
    "ALTER TABLE run_ranks ADD COLUMN compute_s REAL;"
    "ALTER TABLE run_ranks ADD COLUMN tp_comm_s REAL;"
    "ALTER TABLE run_ranks ADD COLUMN pp_wait_s REAL;"
    "ALTER TABLE run_ranks ADD COLUMN dp_comm_s REAL;"
    "ALTER TABLE run_ranks ADD COLUMN optimizer_s REAL;"

    "CREATE TABLE bench_hosts ("
    " record_id INTEGER PRIMARY KEY REFERENCES records (id),"
    " host TEXT, cpu_model TEXT, blas TEXT, cores INTEGER, mem_bytes REAL,"
    " threads_per_rank INTEGER, ranks INTEGER, transport TEXT,"
    " instance_name TEXT, gpu_name TEXT, catalog_file TEXT, catalog_json TEXT,"
    " peak_flops REAL, gemm_dim_half REAL, gemm_rms_log_err REAL, misaligned_factor REAL,"
    " hbm_bps REAL, hbm_eff REAL, act_fwd_s REAL, act_bwd_s REAL, glu_fwd_s REAL,"
    " glu_bwd_s REAL, opt_param_s REAL, attn_fwd_flops REAL, attn_bwd_flops REAL, device TEXT,"
    " p2p_bps REAL, p2p_latency_s REAL, allreduce_busbw_bps REAL, allreduce_latency_s REAL);"

    "CREATE TABLE bench_gemm ("
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " seq INTEGER NOT NULL, kind TEXT, threads INTEGER, m INTEGER, n INTEGER, k INTEGER,"
    " reps INTEGER, time_s REAL, achieved_flops REAL, layer_group INTEGER,"
    " PRIMARY KEY (record_id, seq)) WITHOUT ROWID;"

    "CREATE TABLE bench_elem ("
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " seq INTEGER NOT NULL, op TEXT, threads INTEGER, n INTEGER, reps INTEGER, time_s REAL,"
    " elem_s REAL,"
    " PRIMARY KEY (record_id, seq)) WITHOUT ROWID;"

    "CREATE TABLE bench_mem ("
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " seq INTEGER NOT NULL, threads INTEGER, array_bytes REAL, reps INTEGER, time_s REAL,"
    " triad_bps REAL,"
    " PRIMARY KEY (record_id, seq)) WITHOUT ROWID;"

    "CREATE TABLE bench_comm ("
    " record_id INTEGER NOT NULL REFERENCES records (id),"
    " seq INTEGER NOT NULL, transport TEXT, op TEXT, ranks INTEGER, bytes REAL, iters INTEGER,"
    " time_s REAL, algbw_bps REAL, busbw_bps REAL,"
    " PRIMARY KEY (record_id, seq)) WITHOUT ROWID;";

/* Version 4 -> 5: the accelerator an executed run ran on. runs.device_name
 * is what rank 0's device called itself (RESULT.json's device_name: the
 * GPU's model, compute capability, memory and SMs; "cpu" on the CPU
 * device), so a run names the GPU its MFU and its calibration are for;
 * run_ranks.device_memory_peak_bytes is each rank's most memory in use on
 * its GPU as CUDA counted it (RESULT.json: cudaMemGetInfo's total - free,
 * the CUDA context and the libraries' buffers included, sampled at every
 * sync), beside the executor's own count (peak_mem_bytes). Rows recorded
 * before keep NULL; so does device_memory_peak_bytes on the CPU device,
 * which has no such count. */
static const char schema_v5[] =
    "ALTER TABLE runs ADD COLUMN device_name TEXT;"
    "ALTER TABLE run_ranks ADD COLUMN device_memory_peak_bytes REAL;";

/* Version 5 -> 6: the attention shape beyond hidden and heads. models.head_dim
 * is the size of one attention head as the planner used it (hidden / heads
 * unless the model gives its own: Gemma 2's 256 on hidden 3584 with 16
 * heads); sliding_window the local attention span in tokens (0: none) and
 * sliding_window_pattern which layers use it (every Nth global; 0: all;
 * plan_model). Rows recorded before keep NULL, read as a head of hidden /
 * heads and no window: the shape every model had then. */
static const char schema_v6[] =
    "ALTER TABLE models ADD COLUMN head_dim INTEGER;"
    "ALTER TABLE models ADD COLUMN sliding_window INTEGER;"
    "ALTER TABLE models ADD COLUMN sliding_window_pattern INTEGER;";

/* Version 6 -> 7: two refinements of full recompute (plan_layout):
 * plans.recompute_layers, the layers of each model chunk Megatron's block
 * method recomputes (0: every layer), and plans.recompute_saved, the
 * products' outputs a partial rematerialisation policy keeps (PLAN_SAVE_*
 * bits; 0: none). Rows recorded before keep NULL, read as 0: every plan
 * then recomputed all of every layer it recomputed at all. */
static const char schema_v7[] = "ALTER TABLE plans ADD COLUMN recompute_layers INTEGER;"
                                "ALTER TABLE plans ADD COLUMN recompute_saved INTEGER;";

/* Version 7 -> 8: plans.compiled, a model run under torch.compile
 * (plan_layout). Rows recorded before keep NULL, read as 0: eager. */
static const char schema_v8[] = "ALTER TABLE plans ADD COLUMN compiled INTEGER;";

/* Version 8 -> 9: plans.fused_pointwise, a run's own fused kernels for the
 * norms, the MLP's activation and the rotary embedding (plan_layout). Rows
 * recorded before keep NULL, read as 0: the stack's own ops. */
static const char schema_v9[] = "ALTER TABLE plans ADD COLUMN fused_pointwise INTEGER;";

const db__migration db__migrations[] = {
    {0, schema_v1},
    {1, schema_v2},
    {2, schema_v3},
    {3, schema_v4},
    {4, schema_v5},
    {5, schema_v6},
    {6, schema_v7},
    {7, schema_v8},
    {8, schema_v9},
};
const int db__nmigrations = (int)(sizeof db__migrations / sizeof db__migrations[0]);

int db__pragma_int(db *d, const char *pragma, int64_t *out, st_err *err)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA %s", pragma);
    sqlite3_stmt *st = NULL;
    int rc = db__prepare(d, sql, &st, err);
    if (rc != ST_OK)
        return rc;
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = ST_OK;
    } else {
        rc = db__fail(d, s, err, pragma);
    }
    sqlite3_finalize(st);
    return rc;
}

/* One step inside its own transaction; the version is checked again under
 * the write lock so two processes never apply the same step twice. */
static int apply_step(db *d, const db__migration *m, st_err *err)
{
    int rc = db__begin(d, err);
    if (rc != ST_OK)
        return rc;
    int64_t v = 0;
    rc = db__pragma_int(d, "user_version", &v, err);
    if (rc == ST_OK && v == m->from) {
        rc = db__exec(d, m->sql, err);
        char sql[96];
        /* PRAGMA takes no parameters; both numbers are compile-time constants. */
        if (rc == ST_OK && m->from == 0) {
            snprintf(sql, sizeof sql, "PRAGMA application_id = %d", DB_APPLICATION_ID);
            rc = db__exec(d, sql, err);
        }
        if (rc == ST_OK) {
            snprintf(sql, sizeof sql, "PRAGMA user_version = %d", m->from + 1);
            rc = db__exec(d, sql, err);
        }
    }
    if (rc == ST_OK)
        rc = db__commit(d, err);
    if (rc != ST_OK)
        db__rollback(d);
    return rc;
}

int db__migrate(db *d, const db__migration *steps, int nsteps, int target, st_err *err)
{
    for (;;) {
        int64_t v = 0;
        int rc = db__pragma_int(d, "user_version", &v, err);
        if (rc != ST_OK)
            return rc;
        if (v >= target) {
            d->version = (int)v;
            return ST_OK;
        }
        const db__migration *m = NULL;
        for (int i = 0; i < nsteps && !m; i++)
            if (steps[i].from == v)
                m = &steps[i];
        if (!m)
            return ST_RAISE(err, ST_EUNSUPPORTED, "%s: no migration from schema version %lld",
                            d->path, (long long)v);
        if ((rc = apply_step(d, m, err)) != ST_OK)
            return rc;
    }
}
