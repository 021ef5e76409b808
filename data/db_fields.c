/*
 * db_fields.c: which struct member goes to which column.
 *
 * One list per recorded struct; db__ins_prepare() builds the column list of
 * an INSERT from them and db__b_fields() binds the members in the same
 * order, so a column and its value cannot drift apart. A list names
 * columns of the schema's current version (db_schema.c): a member added to
 * a struct needs a migration that adds its column before it joins a list.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/db_int.h"
#include "planner/plan_fields.h"
#include "planner/plan_framework.h"

#define F(col, type, st, member) {col, type, offsetof(st, member), sizeof(((st *)0)->member)}
#define LIST(name, arr) const db__fields name = {arr, (int)(sizeof arr / sizeof arr[0])}

/* The model's and the layout's columns are the planner's field tables
 * (planner/plan_fields.c: one name per field in every file), and for the
 * model the parameter counts the planner derives, kept for the records. */
static const db__field model_extra_f[] = {
    F("params_layer", DB_F_I64, plan_model, params_layer),
    F("params_embedding", DB_F_I64, plan_model, params_embedding),
    F("params_head", DB_F_I64, plan_model, params_head),
    F("params_final_norm", DB_F_I64, plan_model, params_final_norm),
};

/* The column type of a planner field kind; 0 for one without a column (the
 * model's MLP: the records keep the architecture it follows from). */
static int db_type_of(plan_fkind k)
{
    switch (k) {
    case PLAN_FK_INT:
    case PLAN_FK_BOOL: return DB_F_INT;
    case PLAN_FK_I64: return DB_F_I64;
    case PLAN_FK_DBL: return DB_F_DBL;
    case PLAN_FK_STR: return DB_F_STR;
    case PLAN_FK_SCHED: return DB_F_SCHED;
    case PLAN_FK_RECOMP: return DB_F_RECOMP;
    case PLAN_FK_SHARD: return DB_F_SHARD;
    case PLAN_FK_PREC: return DB_F_PREC;
    case PLAN_FK_FW: return DB_F_FW;
    case PLAN_FK_ARCH: return DB_F_ARCH;
    default: return 0;
    }
}

#define TABLE_MAX 64

/* t's fields with a column, then extra's, into v (room for TABLE_MAX). */
static int from_table(const plan_fields *t, const db__field *extra, int nextra, db__field *v)
{
    int n = 0;
    for (int i = 0; i < t->n && n < TABLE_MAX; i++) {
        int type = db_type_of(t->f[i].kind);
        if (type)
            v[n++] = (db__field){t->f[i].name, type, t->f[i].offset, t->f[i].size};
    }
    for (int i = 0; i < nextra && n < TABLE_MAX; i++)
        v[n++] = extra[i];
    return n;
}

const db__fields *db__model_list(void)
{
    static db__field v[TABLE_MAX];
    static db__fields f;
    if (!f.n) {
        f.n = from_table(&plan_model_fields, model_extra_f,
                         (int)(sizeof model_extra_f / sizeof model_extra_f[0]), v);
        f.v = v;
    }
    return &f;
}

const db__fields *db__layout_list(void)
{
    static db__field v[TABLE_MAX];
    static db__fields f;
    if (!f.n) {
        f.n = from_table(&plan_layout_fields, NULL, 0, v);
        f.v = v;
    }
    return &f;
}

static const db__field instance_f[] = {
    F("name", DB_F_STR, plan_instance, name),
    F("gpu", DB_F_STR, plan_instance, gpu),
    F("gpus_per_node", DB_F_INT, plan_instance, gpus_per_node),
    F("nvlink_bps", DB_F_DBL, plan_instance, nvlink_bps),
    F("nvswitch", DB_F_INT, plan_instance, nvswitch),
    F("intra_busbw_bps", DB_F_DBL, plan_instance, intra_busbw_bps),
    F("intra_latency_s", DB_F_DBL, plan_instance, intra_latency_s),
    F("net_bps", DB_F_DBL, plan_instance, net_bps),
    F("net_latency_s", DB_F_DBL, plan_instance, net_latency_s),
    F("price_per_hour", DB_F_DBL, plan_instance, price_per_hour),
    F("intra_curve", DB_F_STR, plan_instance, intra_curve),
    F("net_curve", DB_F_STR, plan_instance, net_curve),
    F("source", DB_F_STR, plan_instance, source),
    F("host_mem_bytes", DB_F_DBL, plan_instance, host_mem_bytes),
    F("efa", DB_F_INT, plan_instance, efa),
};
LIST(db__instance_fields, instance_f);

static const db__field gpu_f[] = {
    F("gpu_mem_bytes", DB_F_DBL, plan_gpu, mem_bytes),
    F("gpu_peak_flops", DB_F_DBL, plan_gpu, peak_flops),
    F("gpu_hbm_bps", DB_F_DBL, plan_gpu, hbm_bps),
    F("gemm_eff_max", DB_F_DBL, plan_gpu, gemm_eff_max),
    F("gemm_dim_half", DB_F_DBL, plan_gpu, gemm_dim_half),
    F("misaligned_factor", DB_F_DBL, plan_gpu, misaligned_factor),
    F("hbm_eff", DB_F_DBL, plan_gpu, hbm_eff),
    F("flash_eff", DB_F_DBL, plan_gpu, flash_eff),
    F("gpu_source", DB_F_STR, plan_gpu, source),
    F("gpu_silicon", DB_F_STR, plan_gpu, silicon),
    F("gemm_align_bytes", DB_F_DBL, plan_gpu, gemm_align_bytes),
    F("align_partial_factor", DB_F_DBL, plan_gpu, align_partial_factor),
    F("fp8_peak_flops", DB_F_DBL, plan_gpu, fp8_peak_flops),
    F("fp8_gemm_eff", DB_F_DBL, plan_gpu, fp8_gemm_eff),
    F("gemm_ceiling", DB_F_DBL, plan_gpu, gemm_ceiling),
    F("act_fwd_s", DB_F_DBL, plan_gpu, act_fwd_s),
    F("act_bwd_s", DB_F_DBL, plan_gpu, act_bwd_s),
    F("glu_fwd_s", DB_F_DBL, plan_gpu, glu_fwd_s),
    F("glu_bwd_s", DB_F_DBL, plan_gpu, glu_bwd_s),
    F("opt_param_s", DB_F_DBL, plan_gpu, opt_param_s),
    F("attn_fwd_flops", DB_F_DBL, plan_gpu, attn_fwd_flops),
    F("attn_bwd_flops", DB_F_DBL, plan_gpu, attn_bwd_flops),
};
LIST(db__gpu_fields, gpu_f);


static const db__field estimate_f[] = {
    F("reject", DB_F_REJECT, plan_estimate, reject),
    F("reason", DB_F_STR, plan_estimate, reason),
    F("weights_bytes", DB_F_DBL, plan_estimate, mem.weights_bytes),
    F("grads_bytes", DB_F_DBL, plan_estimate, mem.grads_bytes),
    F("optimizer_bytes", DB_F_DBL, plan_estimate, mem.optimizer_bytes),
    F("activations_bytes", DB_F_DBL, plan_estimate, mem.activations_bytes),
    F("recompute_bytes", DB_F_DBL, plan_estimate, mem.recompute_bytes),
    F("logits_bytes", DB_F_DBL, plan_estimate, mem.logits_bytes),
    F("comm_buffers_bytes", DB_F_DBL, plan_estimate, mem.comm_buffers_bytes),
    F("context_bytes", DB_F_DBL, plan_estimate, mem.context_bytes),
    F("allocator_bytes", DB_F_DBL, plan_estimate, mem.allocator_bytes),
    F("total_bytes", DB_F_DBL, plan_estimate, mem.total_bytes),
    F("worst_stage", DB_F_INT, plan_estimate, worst_stage),
    F("capacity_bytes", DB_F_DBL, plan_estimate, capacity_bytes),
    F("oom_excess_bytes", DB_F_DBL, plan_estimate, oom_excess_bytes),
    F("nstages", DB_F_INT, plan_estimate, nstages),
    F("compute_s", DB_F_DBL, plan_estimate, time.compute_s),
    F("tp_comm_s", DB_F_DBL, plan_estimate, time.tp_comm_s),
    F("cp_comm_s", DB_F_DBL, plan_estimate, time.cp_comm_s),
    F("pp_comm_s", DB_F_DBL, plan_estimate, time.pp_comm_s),
    F("dp_exposed_s", DB_F_DBL, plan_estimate, time.dp_exposed_s),
    F("bubble_s", DB_F_DBL, plan_estimate, time.bubble_s),
    F("optimizer_s", DB_F_DBL, plan_estimate, time.optimizer_s),
    F("step_s", DB_F_DBL, plan_estimate, time.step_s),
    F("dp_total_s", DB_F_DBL, plan_estimate, time.dp_total_s),
    F("stage_fwd_s", DB_F_DBL, plan_estimate, stage_fwd_s),
    F("stage_bwd_s", DB_F_DBL, plan_estimate, stage_bwd_s),
    F("tokens_per_step", DB_F_DBL, plan_estimate, tokens_per_step),
    F("tokens_per_s", DB_F_DBL, plan_estimate, tokens_per_s),
    F("model_flops_per_step", DB_F_DBL, plan_estimate, model_flops_per_step),
    F("hw_flops_per_step", DB_F_DBL, plan_estimate, hw_flops_per_step),
    F("mfu", DB_F_DBL, plan_estimate, mfu),
    F("hfu", DB_F_DBL, plan_estimate, hfu),
    F("cost_per_hour", DB_F_DBL, plan_estimate, cost_per_hour),
    F("cost_per_mtokens", DB_F_DBL, plan_estimate, cost_per_mtokens),
};
LIST(db__estimate_fields, estimate_f);

/* The terms of one pipeline stage (prediction_stages, schema version 2);
 * their sum is the row's mem_bytes, so total_bytes has no column here. */
static const db__field stage_mem_f[] = {
    F("weights_bytes", DB_F_DBL, plan_mem, weights_bytes),
    F("grads_bytes", DB_F_DBL, plan_mem, grads_bytes),
    F("optimizer_bytes", DB_F_DBL, plan_mem, optimizer_bytes),
    F("activations_bytes", DB_F_DBL, plan_mem, activations_bytes),
    F("recompute_bytes", DB_F_DBL, plan_mem, recompute_bytes),
    F("logits_bytes", DB_F_DBL, plan_mem, logits_bytes),
    F("comm_buffers_bytes", DB_F_DBL, plan_mem, comm_buffers_bytes),
    F("context_bytes", DB_F_DBL, plan_mem, context_bytes),
    F("allocator_bytes", DB_F_DBL, plan_mem, allocator_bytes),
};
LIST(db__stage_mem_fields, stage_mem_f);

static const db__field result_f[] = {
    F("evaluated", DB_F_I64, plan_result, evaluated),
    F("feasible", DB_F_I64, plan_result, feasible),
    F("min_oom_excess_bytes", DB_F_DBL, plan_result, min_oom_excess_bytes),
    F("global_batch", DB_F_I64, plan_result, global_batch),
    F("batch_defaulted", DB_F_INT, plan_result, batch_defaulted),
    F("search_s", DB_F_DBL, plan_result, search_s),
};
LIST(db__result_fields, result_f);

static const db__field sim_f[] = {
    F("step_s", DB_F_DBL, sim_result, step_s),
    F("pipeline_s", DB_F_DBL, sim_result, pipeline_s),
    F("bubble_fraction", DB_F_DBL, sim_result, bubble_fraction),
    F("p50_s", DB_F_DBL, sim_result, p50_s),
    F("p95_s", DB_F_DBL, sim_result, p95_s),
    F("p99_s", DB_F_DBL, sim_result, p99_s),
    F("steps", DB_F_INT, sim_result, steps),
    F("events", DB_F_U64, sim_result, events),
    F("compute_bound_s", DB_F_DBL, sim_result, compute_bound_s),
    F("comm_bound_s", DB_F_DBL, sim_result, comm_bound_s),
    F("planner_step_s", DB_F_DBL, sim_result, planner_step_s),
    F("pp", DB_F_INT, sim_result, pp),
    F("critical_compute_s", DB_F_DBL, sim_result, critical_compute_s),
    F("critical_transfer_s", DB_F_DBL, sim_result, critical_transfer_s),
    F("critical_tail_s", DB_F_DBL, sim_result, critical_tail_s),
    F("critical_ops", DB_F_INT, sim_result, critical_ops),
    F("critical_stages", DB_F_INT, sim_result, critical_stages),
    F("trace_ops", DB_F_INT, sim_result, ntrace),
};
LIST(db__sim_fields, sim_f);

static const db__field sim_config_f[] = {
    F("seed", DB_F_U64, sim_config, seed),
    F("jitter_sigma", DB_F_DBL, sim_config, jitter_sigma),
    F("straggler_stage", DB_F_INT, sim_config, straggler_stage),
    F("straggler_factor", DB_F_DBL, sim_config, straggler_factor),
    F("monte_carlo", DB_F_INT, sim_config, monte_carlo),
    F("keep_trace", DB_F_INT, sim_config, keep_trace),
};
LIST(db__sim_config_fields, sim_config_f);

static const db__field sim_stage_f[] = {
    F("busy_s", DB_F_DBL, sim_stage_stats, busy_s),
    F("bubble_fraction", DB_F_DBL, sim_stage_stats, bubble_fraction),
    F("peak_inflight", DB_F_INT, sim_stage_stats, peak_inflight),
    F("peak_act_bytes", DB_F_DBL, sim_stage_stats, peak_act_bytes),
    F("peak_mem_bytes", DB_F_DBL, sim_stage_stats, peak_mem_bytes),
    F("send_busy_s", DB_F_DBL, sim_stage_stats, send_busy_s),
    F("dp_busy_s", DB_F_DBL, sim_stage_stats, dp_busy_s),
    F("dp_exposed_s", DB_F_DBL, sim_stage_stats, dp_exposed_s),
};
LIST(db__sim_stage_fields, sim_stage_f);

static const db__field validate_f[] = {
    F("row_id", DB_F_STR, plan_validate_result, row_id),
    F("source_key", DB_F_STR, plan_validate_result, source_key),
    F("compared", DB_F_INT, plan_validate_result, compared),
    F("reason", DB_F_STR, plan_validate_result, reason),
    F("notes", DB_F_STR, plan_validate_result, notes),
    F("micro_batch_searched", DB_F_INT, plan_validate_result, micro_batch_searched),
    F("predicted_oom", DB_F_INT, plan_validate_result, pred_oom),
    F("measured_oom", DB_F_INT, plan_validate_result, ref_oom),
};
LIST(db__validate_fields, validate_f);

/* One fit (calibrations); its parameters go to calibration_params. The
 * column gpu is left NULL: a fit is per chip (silicon) since version 3. */
static const db__field calibration_f[] = {
    F("framework", DB_F_STR, plan_cal_group, framework),
    F("silicon", DB_F_STR, plan_cal_group, silicon),
    F("rows", DB_F_INT, plan_cal_group, rows),
    F("sources", DB_F_INT, plan_cal_group, sources),
    F("asked", DB_F_UINT, plan_cal_group, asked),
    F("fitted", DB_F_UINT, plan_cal_group, fitted),
    F("mean_abs_err_before_pct", DB_F_DBL, plan_cal_group, mean_abs_err_before_pct),
    F("mean_abs_err_after_pct", DB_F_DBL, plan_cal_group, mean_abs_err_after_pct),
    F("max_abs_err_after_pct", DB_F_DBL, plan_cal_group, max_abs_err_after_pct),
    F("iterations", DB_F_INT, plan_cal_group, iterations),
    F("converged", DB_F_INT, plan_cal_group, converged),
    F("rejected", DB_F_INT, plan_cal_group, rejected),
    F("why", DB_F_STR, plan_cal_group, why),
};
LIST(db__calibration_fields, calibration_f);

static const db__field cal_source_f[] = {
    F("source_key", DB_F_STR, plan_cal_source, source_key),
    F("framework", DB_F_STR, plan_cal_source, framework),
    F("silicon", DB_F_STR, plan_cal_source, silicon),
    F("rows", DB_F_INT, plan_cal_source, rows),
    F("mean_abs_err_pct", DB_F_DBL, plan_cal_source, mean_abs_err_pct),
    F("loso_mean_abs_err_pct", DB_F_DBL, plan_cal_source, loso_mean_abs_err_pct),
    F("loso_basis", DB_F_STR, plan_cal_source, loso_basis),
};
LIST(db__cal_source_fields, cal_source_f);

/* plan_config goes into searches.config_json: -1 / 0 mean "searched". */
static const db__field config_f[] = {
    F("tp", DB_F_INT, plan_config, tp),
    F("pp", DB_F_INT, plan_config, pp),
    F("dp", DB_F_INT, plan_config, dp),
    F("cp", DB_F_INT, plan_config, cp),
    F("micro_batch", DB_F_INT, plan_config, micro_batch),
    F("microbatches", DB_F_INT, plan_config, microbatches),
    F("active_microbatches", DB_F_INT, plan_config, active_microbatches),
    F("virtual_stages", DB_F_INT, plan_config, virtual_stages),
    F("schedule", DB_F_INT, plan_config, schedule),
    F("recompute", DB_F_INT, plan_config, recompute),
    F("recompute_group", DB_F_INT, plan_config, recompute_group),
    F("sharding", DB_F_INT, plan_config, sharding),
    F("sequence_parallel", DB_F_INT, plan_config, sequence_parallel),
    F("offload_activations", DB_F_INT, plan_config, offload_activations),
    F("prescaled_batch", DB_F_INT, plan_config, prescaled_batch),
    F("flash_attention", DB_F_INT, plan_config, flash_attention),
    F("dp_overlap", DB_F_INT, plan_config, dp_overlap),
    F("fp32_grads", DB_F_INT, plan_config, fp32_grads),
    F("tp_overlap", DB_F_INT, plan_config, tp_overlap),
    F("pp_overlap", DB_F_INT, plan_config, pp_overlap),
    F("dp_bucket_bytes", DB_F_DBL, plan_config, dp_bucket_bytes),
    F("launch_blocking", DB_F_INT, plan_config, launch_blocking),
    F("framework", DB_F_FW, plan_config, framework),
    F("precision", DB_F_INT, plan_config, precision),
    F("schedule_mask", DB_F_UINT, plan_config, schedule_mask),
    F("placement", DB_F_STR, plan_config, placement),
    F("global_batch", DB_F_I64, plan_config, global_batch),
    F("allow_tp_across_nodes", DB_F_INT, plan_config, allow_tp_across_nodes),
    F("top_k", DB_F_INT, plan_config, top_k),
};
LIST(db__config_fields, config_f);

/* The text of an enum-valued field. */
static const char *enum_text(int type, int v)
{
    switch (type) {
    case DB_F_ARCH: return v == PLAN_ARCH_LLAMA ? "llama" : "gpt";
    case DB_F_SCHED: return plan_schedule_name((plan_schedule)v);
    case DB_F_RECOMP: return plan_recompute_name((plan_recompute)v);
    case DB_F_SHARD: return plan_sharding_name((plan_sharding)v);
    case DB_F_REJECT: return v == PLAN_OK ? "ok" : plan_reject_name((plan_reject)v);
    case DB_F_BASIS: return plan_validate_basis_name((plan_validate_basis)v);
    case DB_F_FW: return plan_framework_get(v)->key;
    case DB_F_PREC: return plan_precision_name((plan_precision)v);
    default: return "?";
    }
}

void db__b_fields(db__ins *s, const db__fields *f, const void *base)
{
    const char *b = base;
    for (int i = 0; i < f->n; i++) {
        const db__field *x = &f->v[i];
        const void *p = b + x->off;
        switch (x->type) {
        case DB_F_INT: db__b_i64(s, *(const int *)p); break;
        case DB_F_UINT: db__b_i64(s, *(const unsigned *)p); break;
        case DB_F_I64: db__b_i64(s, *(const int64_t *)p); break;
        case DB_F_U64: db__b_i64(s, (int64_t)*(const uint64_t *)p); break;
        case DB_F_DBL: db__b_dbl(s, *(const double *)p); break;
        case DB_F_STR: db__b_txt(s, (const char *)p); break;
        case DB_F_SCHED: /* a layout's: "none" with one stage */
            db__b_txt(s, plan_layout_schedule_key((const plan_layout *)base));
            break;
        default: db__b_txt(s, enum_text(x->type, *(const int *)p)); break;
        }
    }
}

/* The enum value of a text written by enum_text; -1 if none matches. */
static int enum_value(int type, const char *t)
{
    if (type == DB_F_SCHED) { /* a name, or "none" for one stage */
        plan_schedule s;
        int one;
        return plan_layout_schedule_parse(t, &s, &one, NULL) == ST_OK ? (int)s : -1;
    }
    for (int v = 0; v < 64; v++) {
        if (type == DB_F_RECOMP && v >= PLAN_RECOMP__COUNT) break;
        if (type == DB_F_SHARD && v >= PLAN_SHARD__COUNT) break;
        if (type == DB_F_REJECT && v >= PLAN_REJ__COUNT) break;
        if (type == DB_F_ARCH && v > PLAN_ARCH_LLAMA) break;
        if (type == DB_F_BASIS && v > PLAN_VAL_BASIS_PARAMS6) break;
        if (type == DB_F_FW) {
            /* a key, a bare stack (its latest release) or a key the profile
             * had before releases were keys ("megatron-2021") */
            int i = -1;
            return plan_framework_find(t, &i, NULL) == ST_OK ? i : -1;
        }
        if (type == DB_F_PREC && v >= PLAN_PREC__COUNT) break;
        if (strcmp(enum_text(type, v), t) == 0)
            return v;
    }
    return -1;
}

void db__read_fields(sqlite3_stmt *st, const db__fields *f, void *base)
{
    char *b = base;
    int nc = sqlite3_column_count(st);
    for (int i = 0; i < f->n; i++) {
        const db__field *x = &f->v[i];
        int c = 0;
        while (c < nc && strcmp(sqlite3_column_name(st, c), x->col) != 0)
            c++;
        if (c == nc || sqlite3_column_type(st, c) == SQLITE_NULL)
            continue;
        void *p = b + x->off;
        switch (x->type) {
        case DB_F_INT: *(int *)p = sqlite3_column_int(st, c); break;
        case DB_F_UINT: *(unsigned *)p = (unsigned)sqlite3_column_int64(st, c); break;
        case DB_F_I64: *(int64_t *)p = sqlite3_column_int64(st, c); break;
        case DB_F_U64: *(uint64_t *)p = (uint64_t)sqlite3_column_int64(st, c); break;
        case DB_F_DBL: *(double *)p = sqlite3_column_double(st, c); break;
        case DB_F_STR: {
            const char *t = (const char *)sqlite3_column_text(st, c);
            snprintf((char *)p, x->cap, "%s", t ? t : "");
            break;
        }
        default: {
            int v = enum_value(x->type, (const char *)sqlite3_column_text(st, c));
            if (v >= 0)
                *(int *)p = v;
            break;
        }
        }
    }
}

int db__fields_equal(const db__fields *f, const void *a, const void *b)
{
    const char *x = a, *y = b;
    for (int i = 0; i < f->n; i++) {
        const db__field *m = &f->v[i];
        const void *p = x + m->off, *q = y + m->off;
        int same;
        switch (m->type) {
        case DB_F_I64:
        case DB_F_U64: same = *(const int64_t *)p == *(const int64_t *)q; break;
        case DB_F_DBL: same = *(const double *)p == *(const double *)q; break;
        case DB_F_STR: same = strncmp(p, q, m->cap) == 0; break;
        default: same = *(const int *)p == *(const int *)q; break; /* int, unsigned, enums */
        }
        if (!same)
            return 0;
    }
    return 1;
}

char *db__fields_json(const db__fields *f, const void *base)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    const char *b = base;
    for (int i = 0; i < f->n; i++) {
        const db__field *x = &f->v[i];
        const void *p = b + x->off;
        switch (x->type) {
        case DB_F_INT: cJSON_AddNumberToObject(o, x->col, *(const int *)p); break;
        case DB_F_UINT: cJSON_AddNumberToObject(o, x->col, *(const unsigned *)p); break;
        case DB_F_I64: cJSON_AddNumberToObject(o, x->col, (double)*(const int64_t *)p); break;
        case DB_F_U64: cJSON_AddNumberToObject(o, x->col, (double)*(const uint64_t *)p); break;
        case DB_F_DBL: cJSON_AddNumberToObject(o, x->col, *(const double *)p); break;
        case DB_F_STR: cJSON_AddStringToObject(o, x->col, (const char *)p); break;
        default: cJSON_AddStringToObject(o, x->col, enum_text(x->type, *(const int *)p)); break;
        }
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

void db__match_key(const plan_model *m, const char *instance, int nodes, int gpus,
                   const plan_layout *l, char *buf, size_t n)
{
    /* The shape (not the name: a derived 30B and the same sizes given by
     * hand are one model), the cluster and every layout member. */
    size_t u = (size_t)snprintf(buf, n, "%s L%lld H%lld A%lld K%lld F%lld S%lld V%lld T%d|%s x%d g%d|",
                                m->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt", (long long)m->layers,
                                (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
                                (long long)m->ffn, (long long)m->seq, (long long)m->vocab,
                                m->tied_embedding, instance, nodes, gpus);
    /* the attention shape beyond hidden and heads, only where the model has
     * it, so that every other model keeps the key it had before */
    if (u < n && plan_model_attn_width(m) != m->hidden)
        u += (size_t)snprintf(buf + u, n - u, "D%lld|", (long long)plan_model_head_dim(m));
    if (u < n && plan_model_local_layers(m) > 0)
        u += (size_t)snprintf(buf + u, n - u, "W%lld/%d|", (long long)m->sliding_window,
                              m->sliding_window_pattern);
    const char *b = (const char *)l;
    for (int i = 0; i < db__layout_list()->n && u < n; i++) {
        const db__field *x = &db__layout_list()->v[i];
        const void *p = b + x->off;
        int w;
        switch (x->type) {
        case DB_F_I64: w = snprintf(buf + u, n - u, "%lld,", (long long)*(const int64_t *)p); break;
        case DB_F_DBL: w = snprintf(buf + u, n - u, "%.17g,", *(const double *)p); break;
        case DB_F_STR: w = snprintf(buf + u, n - u, "%s,", (const char *)p); break;
        /* by name: an index into a table that may grow or be reordered */
        case DB_F_FW:
        case DB_F_PREC: w = snprintf(buf + u, n - u, "%s,", enum_text(x->type, *(const int *)p)); break;
        default: w = snprintf(buf + u, n - u, "%d,", *(const int *)p); break;
        }
        if (w < 0)
            break;
        u += (size_t)w;
    }
}

void db__catf(char *buf, size_t n, const char *fmt, ...)
{
    size_t u = strnlen(buf, n);
    if (u + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + u, n - u, fmt, ap);
    va_end(ap);
}

void db__layout_label(const plan_layout *l, char *buf, size_t n)
{
    buf[0] = '\0';
    db__catf(buf, n, "tp %d pp %d dp %d", l->tp, l->pp, l->dp);
    if (l->cp > 1)
        db__catf(buf, n, " cp %d", l->cp);
    db__catf(buf, n, " mbs %dx%d", l->micro_batch, l->microbatches);
    /* a schedule only where there is a pipeline, by its stack's name */
    if (l->pp > 1) {
        db__catf(buf, n, " %s", plan_framework_schedule_name(l));
        if (l->schedule == PLAN_SCHED_VIRTUAL)
            db__catf(buf, n, "x%d", l->virtual_stages);
    }
    if (l->recompute != PLAN_RECOMP_NONE)
        db__catf(buf, n, " recompute %s", plan_recompute_name(l->recompute));
    if (l->sharding != PLAN_SHARD_NONE)
        db__catf(buf, n, " shard %s", plan_sharding_name(l->sharding));
}
