/*
 * rpt_record_text.c: one recorded answer as the text of `smdplan show`: its
 * provenance, model, cluster and search, each plan with every memory and
 * time term of its prediction, its simulations, runs and calibrations (as
 * tables that fit the terminal, rpt_table.h), and a bench record's host and
 * entry.
 *
 * The record is the JSON that data/'s db_show hands over (borrowed); a field
 * a record of an older schema lacks reads as NaN or "" and prints as such.
 * Byte counts are printed as the caller left them (show rounds them first).
 */
#include "reports/rpt_record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/units.h"
#include "common/json_get.h"
#include "reports/rpt_table.h"


static const char *bytes(double b, char *buf, int n)
{
    if (!isfinite(b))
        return "-";
    return units_fmt_bytes(b, buf, n);
}

static void show_model(FILE *f, const cJSON *m)
{
    char p[24], head[40] = "", window[96] = "";
    /* recorded from schema version 6 (NULL before: a head of hidden / heads,
     * no window): a head size apart from hidden / heads and the layers that
     * attend through a sliding window, as the plan's model line says them
     * (cli_print_model; plan_model_local_layers: every Nth layer global,
     * 0 every layer local) */
    double hd = json_get_num(m, "head_dim"), w = json_get_num(m, "sliding_window"), L = json_get_num(m, "layers");
    double pat = json_get_num(m, "sliding_window_pattern");
    if (hd > 0 && hd * json_get_num(m, "heads") != json_get_num(m, "hidden"))
        snprintf(head, sizeof head, " of %.0f", hd);
    if (w > 0 && w < json_get_num(m, "seq") && L > 0) {
        double local = pat > 0 ? L - floor(L / pat) : L;
        if (local > 0)
            snprintf(window, sizeof window, ", sliding window %.0f on %.0f of %.0f layers", w,
                     local, L);
    }
    fprintf(f, "model:    %s (%s), %s params: %.0f layers, hidden %.0f, %.0f heads (kv %.0f)%s, "
            "ffn %.0f, seq %.0f, vocab %.0f%s\n",
            json_get_str(m, "name"), json_get_str(m, "arch"), units_fmt_count(json_get_num(m, "params"), p, sizeof p),
            json_get_num(m, "layers"), json_get_num(m, "hidden"), json_get_num(m, "heads"), json_get_num(m, "kv_heads"), head,
            json_get_num(m, "ffn"), json_get_num(m, "seq"), json_get_num(m, "vocab"), window);
}

static const cJSON *find_id(const cJSON *list, double id)
{
    for (const cJSON *x = list ? list->child : NULL; x; x = x->next)
        if (json_get_num(x, "id") == id)
            return x;
    return NULL;
}

static void show_prediction(FILE *f, const cJSON *pr)
{
    char a[32], b[32];
    fprintf(f, "  memory per GPU (worst stage %.0f of %.0f): %s of %s", json_get_num(pr, "worst_stage"),
            json_get_num(pr, "nstages"), bytes(json_get_num(pr, "total_bytes"), a, sizeof a),
            bytes(json_get_num(pr, "capacity_bytes"), b, sizeof b));
    if (strcmp(json_get_str(pr, "reject"), "ok") != 0)
        fprintf(f, "  (rejected: %s: %s)", json_get_str(pr, "reject"), json_get_str(pr, "reason"));
    fprintf(f, "\n    ");
    static const char *const mem[][2] = {
        {"weights_bytes", "weights"}, {"grads_bytes", "gradients"},
        {"optimizer_bytes", "optimizer"}, {"activations_bytes", "activations"},
        {"recompute_bytes", "recompute"}, {"logits_bytes", "logits"},
        {"comm_buffers_bytes", "comm buffers"}, {"context_bytes", "context"},
        {"allocator_bytes", "allocator"}};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
        fprintf(f, "%s%s %s", i ? ", " : "", mem[i][1], bytes(json_get_num(pr, mem[i][0]), a, sizeof a));
    fprintf(f, "\n");
    const cJSON *st = json_get_arr(pr, "stages");
    if (st && cJSON_GetArraySize(st) > 1) {
        fprintf(f, "    per stage:");
        int k = 0;
        for (const cJSON *s = st->child; s; s = s->next, k++)
            fprintf(f, "%s %s (%.0f layers)", k ? "," : "", bytes(json_get_num(s, "mem_bytes"), a, sizeof a),
                    json_get_num(s, "layers"));
        fprintf(f, "\n");
    }
    fprintf(f, "  step %.4f s: compute %.4f, tp comm %.4f, cp comm %.4f, pp comm %.4f, dp exposed "
            "%.4f, bubble %.4f, optimizer %.4f (dp total %.4f)\n",
            json_get_num(pr, "step_s"), json_get_num(pr, "compute_s"), json_get_num(pr, "tp_comm_s"), json_get_num(pr, "cp_comm_s"),
            json_get_num(pr, "pp_comm_s"), json_get_num(pr, "dp_exposed_s"), json_get_num(pr, "bubble_s"),
            json_get_num(pr, "optimizer_s"), json_get_num(pr, "dp_total_s"));
    fprintf(f, "  %.0f tokens/s, MFU %.1f%%", json_get_num(pr, "tokens_per_s"), 100 * json_get_num(pr, "mfu"));
    if (json_get_num(pr, "cost_per_hour") > 0)
        fprintf(f, ", $%.2f/h, $%.4f per 1M tokens", json_get_num(pr, "cost_per_hour"),
                json_get_num(pr, "cost_per_mtokens"));
    fprintf(f, "\n");
}

void rpt_record_text_plans(FILE *f, const cJSON *rec)
{
    if (json_get_arr(rec, "runs"))
        return;
    const cJSON *plans = json_get_arr(rec, "plans"), *its = json_get_arr(rec, "instance_types");
    for (const cJSON *p = plans ? plans->child : NULL; p; p = p->next) {
        const char *role = json_get_str(p, "role");
        const cJSON *it = find_id(its, json_get_num(p, "instance_type_id"));
        fprintf(f, "\n");
        if (!strcmp(role, "top"))
            fprintf(f, "plan %.0f: ", json_get_num(p, "rank"));
        else if (!strcmp(role, "closest_oom"))
            fprintf(f, "closest layout (out of memory): ");
        else if (!strcmp(role, "option"))
            fprintf(f, "%.0f x %s: ", json_get_num(p, "nodes"), it ? json_get_str(it, "name") : "?");
        else
            fprintf(f, "layout: ");
        fprintf(f, "%s, placement %s, global batch %.0f", json_get_str(p, "label"), json_get_str(p, "placement"),
                json_get_num(p, "global_batch"));
        if (*json_get_str(p, "framework")) /* recorded from schema version 3 on */
            fprintf(f, ", %s %s", json_get_str(p, "framework"), json_get_str(p, "precision"));
        fprintf(f, "\n");
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(p, "prediction");
        if (pr)
            show_prediction(f, pr);
        if (json_get_num(p, "simulated_step_s") > 0)
            fprintf(f, "  simulated step %.4f s\n", json_get_num(p, "simulated_step_s"));
    }
}


void rpt_record_text_simulations(FILE *f, const cJSON *rec)
{
    const cJSON *sims = json_get_arr(rec, "simulations");
    for (const cJSON *s = sims ? sims->child : NULL; s; s = s->next) {
        char a[32], b[32];
        fprintf(f, "\nsimulated step %.4f s (planner %.4f s), pipeline span %.4f s, bubble %.1f%%, "
               "%.0f events\n",
               json_get_num(s, "step_s"), json_get_num(s, "planner_step_s"), json_get_num(s, "pipeline_s"),
               100 * json_get_num(s, "bubble_fraction"), json_get_num(s, "events"));
        if (json_get_num(s, "steps") > 1)
            fprintf(f, "%.0f steps, jitter sigma %.3f, seed %.0f: p50 %.4f s, p95 %.4f s, p99 %.4f s\n",
                   json_get_num(s, "steps"), json_get_num(s, "jitter_sigma"), json_get_num(s, "seed"), json_get_num(s, "p50_s"),
                   json_get_num(s, "p95_s"), json_get_num(s, "p99_s"));
        fprintf(f, "bounds: compute %.4f s, busiest link %.4f s; critical path %.0f ops over %.0f "
               "stages\n",
               json_get_num(s, "compute_bound_s"), json_get_num(s, "comm_bound_s"), json_get_num(s, "critical_ops"),
               json_get_num(s, "critical_stages"));
        rpt_table *t = rpt_table_new();
        if (t) {
            const char *const head[] = {"stage", "busy s", "bubble", "in flight", "peak act",
                                        "peak mem", "send busy", "DP exposed"};
            for (int k = 0; k < 8; k++)
                rpt_table_col(t, head[k], 1, k < 3 ? 0 : k);
            const cJSON *st = json_get_arr(s, "stages");
            for (const cJSON *x = st ? st->child : NULL; x; x = x->next) {
                rpt_table_row(t);
                rpt_table_cell(t, "%.0f", json_get_num(x, "stage"));
                rpt_table_cell(t, "%.3f", json_get_num(x, "busy_s"));
                rpt_table_cell(t, "%.1f%%", 100 * json_get_num(x, "bubble_fraction"));
                rpt_table_cell(t, "%.0f", json_get_num(x, "peak_inflight"));
                rpt_table_cell(t, "%s", bytes(json_get_num(x, "peak_act_bytes"), a, sizeof a));
                rpt_table_cell(t, "%s", bytes(json_get_num(x, "peak_mem_bytes"), b, sizeof b));
                rpt_table_cell(t, "%.3f", json_get_num(x, "send_busy_s"));
                rpt_table_cell(t, "%.3f", json_get_num(x, "dp_exposed_s"));
            }
            rpt_table_print(f, t, " ");
            rpt_table_free(t);
        }
        if (json_get_num(s, "trace_ops") > 0)
            fprintf(f, "trace: %.0f ops kept (in --json)\n", json_get_num(s, "trace_ops"));
    }
}

static void cell(char *buf, size_t n, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "-");
}

void rpt_record_text_runs(FILE *f, const cJSON *rec)
{
    const cJSON *runs = json_get_arr(rec, "runs"), *plans = json_get_arr(rec, "plans"), *models = json_get_arr(rec, "models");
    if (!runs)
        return;
    rpt_table *t = rpt_table_new();
    if (!t)
        return;
    const char *const head[] = {"run", "source", "row", "model", "framework", "layout",
                                "measured", "predicted", "error", "simulated", "status"};
    const int right[] = {1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0};
    const int prio[] = {0, 3, 0, 2, 3, 1, 0, 0, 0, 1, 2};
    for (int k = 0; k < 11; k++)
        rpt_table_col(t, head[k], right[k], prio[k]);
    for (const cJSON *r = runs->child; r; r = r->next) {
        const cJSON *p = find_id(plans, json_get_num(r, "plan_id"));
        const cJSON *m = find_id(models, json_get_num(r, "model_id"));
        char meas[24], pred[24], e[24], sim[24];
        cell(meas, sizeof meas, "%.3f", json_get_num(r, "measured_step_s"));
        cell(pred, sizeof pred, "%.3f", json_get_num(r, "predicted_step_s"));
        cell(e, sizeof e, "%+.1f%%", json_get_num(r, "error_pct"));
        cell(sim, sizeof sim, "%.3f", json_get_num(r, "simulated_step_s"));
        const char *note = json_get_str(r, "error_text");
        if (!*note)
            note = json_get_num(r, "compared") == 0 && *json_get_str(r, "reason") ? json_get_str(r, "reason") : json_get_str(r, "notes");
        const char *fw = p && *json_get_str(p, "framework") ? json_get_str(p, "framework") : "-";
        rpt_table_row(t);
        rpt_table_cell(t, "%.0f", json_get_num(r, "id"));
        rpt_table_cell(t, "%s", json_get_str(r, "source"));
        rpt_table_cell(t, "%s %s", json_get_str(r, "source_key"), json_get_str(r, "row_id"));
        rpt_table_cell(t, "%s", m ? json_get_str(m, "name") : "-");
        rpt_table_cell(t, "%s", fw);
        rpt_table_cell(t, "%s", p ? json_get_str(p, "label") : "-");
        rpt_table_cell(t, "%s", meas);
        rpt_table_cell(t, "%s", pred);
        rpt_table_cell(t, "%s", e);
        rpt_table_cell(t, "%s", sim);
        rpt_table_cell(t, "%s", json_get_str(r, "status"));
        const cJSON *steps = json_get_arr(r, "steps"), *ranks = json_get_arr(r, "ranks");
        /* under the row: what an executed run measured (schema version 4),
         * its steps, each rank's peak memory, how the row was read */
        char *extra = NULL;
        size_t xn = 0;
        FILE *xf = open_memstream(&extra, &xn);
        if (!xf)
            continue;
        if (json_get_num(r, "nranks") > 0) { /* an executed run (schema version 4) */
            fprintf(xf, "%.0f ranks, %s on %s, %.0f thread%s per rank", json_get_num(r, "nranks"),
                    json_get_str(r, "backend"), json_get_str(r, "run_host"), json_get_num(r, "threads_per_rank"),
                    json_get_num(r, "threads_per_rank") == 1 ? "" : "s");
            if (json_get_num(r, "tokens_per_s") > 0)
                fprintf(xf, "; %.1f tokens/s, %.3g model FLOP/s", json_get_num(r, "tokens_per_s"),
                        json_get_num(r, "achieved_flops"));
            if (json_get_num(r, "mfu") > 0)
                fprintf(xf, ", MFU %.2f%% of %.3g FLOP/s", 100 * json_get_num(r, "mfu"),
                        json_get_num(r, "peak_flops"));
            fprintf(xf, "\n");
            /* schema version 5: the device as it named itself */
            if (*json_get_str(r, "device_name") && strcmp(json_get_str(r, "device_name"), json_get_str(r, "device")))
                fprintf(xf, "device: %s\n", json_get_str(r, "device_name"));
            if (*json_get_str(r, "scaled"))
                fprintf(xf, "scaled: %s\n", json_get_str(r, "scaled"));
            if (json_get_num(r, "failed_rank") >= 0 && !cJSON_IsNull(cJSON_GetObjectItem(r, "failed_rank")))
                fprintf(xf, "failed rank %.0f, launcher status %.0f\n", json_get_num(r, "failed_rank"),
                        json_get_num(r, "exit_status"));
            /* the mean phases of the measured steps */
            double ph[5] = {0};
            int nm = 0;
            static const char *const keys[] = {"compute_s", "tp_comm_s", "pp_wait_s", "dp_comm_s",
                                               "optimizer_s"};
            for (const cJSON *k = steps ? steps->child : NULL; k; k = k->next)
                if (json_get_num(k, "measured") == 1) {
                    for (int q = 0; q < 5; q++)
                        ph[q] += json_get_num(k, keys[q]) > 0 ? json_get_num(k, keys[q]) : 0;
                    nm++;
                }
            if (nm > 0)
                fprintf(xf, "per step (mean of %d measured): compute %.4f s, TP comm %.4f s, PP "
                        "wait %.4f s, DP comm %.4f s, optimizer %.4f s\n", nm, ph[0] / nm,
                        ph[1] / nm, ph[2] / nm, ph[3] / nm, ph[4] / nm);
            if (*json_get_str(r, "run_dir"))
                fprintf(xf, "run directory %s; launched: %s\n", json_get_str(r, "run_dir"),
                        json_get_str(r, "launch_command"));
        }
        if (steps)
            fprintf(xf, "%d steps recorded\n", cJSON_GetArraySize(steps));
        if (ranks) {
            char a[32];
            int gpu = 0;
            fprintf(xf, "peak memory per rank:");
            for (const cJSON *k = ranks->child; k; k = k->next) {
                fprintf(xf, " %s", bytes(json_get_num(k, "peak_mem_bytes"), a, sizeof a));
                gpu |= json_get_num(k, "device_memory_peak_bytes") > 0;
            }
            fprintf(xf, "\n");
            if (gpu) { /* schema version 5: as CUDA counted it, context and libraries too */
                fprintf(xf, "GPU memory in use at most per rank (CUDA's count):");
                for (const cJSON *k = ranks->child; k; k = k->next)
                    fprintf(xf, " %s", bytes(json_get_num(k, "device_memory_peak_bytes"), a, sizeof a));
                fprintf(xf, "\n");
            }
        }
        if (*note)
            fprintf(xf, "%s", note);
        fclose(xf);
        while (xn > 0 && extra[xn - 1] == '\n')
            extra[--xn] = '\0';
        if (xn > 0)
            rpt_table_note(t, "%s", extra);
        free(extra);
    }
    fprintf(f, "\n");
    rpt_table_print(f, t, "");
    rpt_table_free(t);
}

/* "megatron on GA100", "GA100 pool" (every framework's runs on the chip),
 * or a version-2 record's GPU type. */
static void fit_name(const cJSON *c, char *buf, size_t n)
{
    const cJSON *fw = cJSON_GetObjectItemCaseSensitive(c, "framework");
    if (!cJSON_IsString(fw)) /* recorded before fits per framework */
        snprintf(buf, n, "%s", json_get_str(c, "gpu"));
    else if (fw->valuestring[0])
        snprintf(buf, n, "%s on %s", fw->valuestring, json_get_str(c, "silicon"));
    else
        snprintf(buf, n, "%s pool", json_get_str(c, "silicon"));
}

void rpt_record_text_calibrations(FILE *f, const cJSON *rec)
{
    const cJSON *cals = json_get_arr(rec, "calibrations");
    if (cals)
        fprintf(f, "\nfits (a framework on a chip, or the chip's pool of every framework's runs):\n");
    for (const cJSON *c = cals ? cals->child : NULL; c; c = c->next) {
        char name[64];
        fit_name(c, name, sizeof name);
        fprintf(f, "\n%s: %.0f rows", name, json_get_num(c, "rows"));
        if (json_get_num(c, "sources") > 0)
            fprintf(f, " from %.0f source%s", json_get_num(c, "sources"), json_get_num(c, "sources") == 1 ? "" : "s");
        fprintf(f, ", mean |error| %.1f%% -> %.1f%% (max %.1f%%), %.0f iterations%s\n",
               json_get_num(c, "mean_abs_err_before_pct"), json_get_num(c, "mean_abs_err_after_pct"),
               json_get_num(c, "max_abs_err_after_pct"), json_get_num(c, "iterations"),
               json_get_num(c, "converged") > 0 ? "" : " (not converged)");
        const cJSON *ps = json_get_arr(c, "params");
        for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
            int fitted = json_get_num(p, "fitted") > 0;
            char se[32] = "";
            if (fitted && isfinite(json_get_num(p, "std_err")))
                snprintf(se, sizeof se, "+- %.2g", json_get_num(p, "std_err"));
            fprintf(f, "  %-18s %10.4g -> %10.4g %-10s  %s\n", json_get_str(p, "name"), json_get_num(p, "before"),
                   json_get_num(p, "after"), se, fitted ? "fitted" : json_get_num(p, "asked") > 0 ? "kept (the "
                   "runs do not constrain it)" : "kept (not asked)");
        }
        if (json_get_num(c, "rejected") > 0)
            fprintf(f, "  rejected: %s; its runs use the %s pool\n", json_get_str(c, "why"),
                   json_get_str(c, "silicon"));
    }
    const cJSON *srcs = json_get_arr(rec, "calibration_sources");
    if (!srcs)
        return;
    fprintf(f, "\nsources: mean |error| of their runs, fitted with every source and held out (fitted "
           "without the source's own runs)\n");
    rpt_table *t = rpt_table_new();
    if (!t)
        return;
    const char *const head[] = {"source", "framework", "chip", "rows", "fitted", "held out",
                                "held out, predicted by"};
    const int right[] = {0, 0, 0, 1, 1, 1, 0};
    const int prio[] = {0, 0, 0, 2, 0, 0, 1};
    for (int k = 0; k < 7; k++)
        rpt_table_col(t, head[k], right[k], prio[k]);
    for (const cJSON *x = srcs->child; x; x = x->next) {
        char a[24], b[24];
        cell(a, sizeof a, "%.1f%%", json_get_num(x, "mean_abs_err_pct"));
        cell(b, sizeof b, "%.1f%%", json_get_num(x, "loso_mean_abs_err_pct"));
        rpt_table_row(t);
        rpt_table_cell(t, "%s", json_get_str(x, "source_key"));
        rpt_table_cell(t, "%s", json_get_str(x, "framework"));
        rpt_table_cell(t, "%s", json_get_str(x, "silicon"));
        rpt_table_cell(t, "%.0f", json_get_num(x, "rows"));
        rpt_table_cell(t, "%s", a);
        rpt_table_cell(t, "%s", b);
        rpt_table_cell(t, "%s", *json_get_str(x, "loso_basis") ? json_get_str(x, "loso_basis") : "-");
    }
    rpt_table_print(f, t, "");
    rpt_table_free(t);
}

void rpt_record_text_bench(FILE *f, const cJSON *rec)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(rec, "bench");
    if (!b)
        return;
    char a[32];
    fprintf(f, "host:     %s, %.0f cores, %s memory, %s\n", json_get_str(b, "host"), json_get_num(b, "cores"),
            bytes(json_get_num(b, "mem_bytes"), a, sizeof a), json_get_str(b, "cpu_model"));
    if (*json_get_str(b, "blas"))
        fprintf(f, "BLAS:     %s\n", json_get_str(b, "blas"));
    if (json_get_num(b, "peak_flops") > 0)
        fprintf(f, "device:   %s: peak %.2f GFLOP/s per rank (%.0f thread%s), gemm_dim_half %.1f "
                "(rms %.1f%%), misaligned factor %.3f, triad %.2f GB/s per rank\n",
                json_get_str(b, "gpu_name"), json_get_num(b, "peak_flops") / 1e9, json_get_num(b, "threads_per_rank"),
                json_get_num(b, "threads_per_rank") == 1 ? "" : "s", json_get_num(b, "gemm_dim_half"),
                100 * json_get_num(b, "gemm_rms_log_err"), json_get_num(b, "misaligned_factor"),
                json_get_num(b, "hbm_bps") / 1e9);
    if (json_get_num(b, "act_fwd_s") > 0 || json_get_num(b, "opt_param_s") > 0)
        fprintf(f, "kernels:  hbm_eff %.3f; ns per element: GELU %.2f + %.2f, SwiGLU %.2f + %.2f, "
                "optimizer %.2f per parameter\n", json_get_num(b, "hbm_eff"), 1e9 * json_get_num(b, "act_fwd_s"),
                1e9 * json_get_num(b, "act_bwd_s"), 1e9 * json_get_num(b, "glu_fwd_s"), 1e9 * json_get_num(b, "glu_bwd_s"),
                1e9 * json_get_num(b, "opt_param_s"));
    if (json_get_num(b, "allreduce_busbw_bps") > 0)
        fprintf(f, "links:    %s between %.0f ranks: all-reduce busbw %.2f GB/s, %.2f us at "
                "<= 1 KiB; send/recv %.2f GB/s\n", json_get_str(b, "transport"), json_get_num(b, "ranks"),
                json_get_num(b, "allreduce_busbw_bps") / 1e9, 1e6 * json_get_num(b, "allreduce_latency_s"),
                json_get_num(b, "p2p_bps") / 1e9);
    if (*json_get_str(b, "instance_name"))
        fprintf(f, "entry:    %s%s%s\n", json_get_str(b, "instance_name"),
                *json_get_str(b, "catalog_file") ? " in " : "", json_get_str(b, "catalog_file"));
    const cJSON *g = json_get_arr(b, "gemm"), *m = json_get_arr(b, "mem"), *c = json_get_arr(b, "comm");
    const cJSON *el = json_get_arr(b, "elem");
    fprintf(f, "measured: %d GEMMs, %d elementwise kernels, %d triads, %d collectives (smdplan "
            "show %.0f --json has each)\n", g ? cJSON_GetArraySize(g) : 0,
            el ? cJSON_GetArraySize(el) : 0, m ? cJSON_GetArraySize(m) : 0,
            c ? cJSON_GetArraySize(c) : 0, json_get_num(rec, "id"));
}

void rpt_record_text_head(FILE *f, const cJSON *rec)
{
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(rec, "provenance");
    fprintf(f, "record %.0f: %s, %s\n", json_get_num(rec, "id"), json_get_str(rec, "kind"), json_get_str(rec, "created_at"));
    fprintf(f, "summary:  %s\n", json_get_str(rec, "summary"));
    fprintf(f, "command:  %s\n", json_get_str(prov, "command_line"));
    fprintf(f, "by:       smdplan %s (git %s), %s; %s; host %s\n", json_get_str(prov, "tool_version"),
            json_get_str(prov, "git_rev"), json_get_str(prov, "build_features"), json_get_str(prov, "library_versions"),
            json_get_str(prov, "host"));
    const cJSON *models = json_get_arr(rec, "models");
    const cJSON *search = cJSON_GetObjectItemCaseSensitive(rec, "search");
    int many_models = models && cJSON_GetArraySize(models) > 1;
    if (models && !many_models)
        show_model(f, models->child);
    const cJSON *its = json_get_arr(rec, "instance_types");
    const cJSON *plans = json_get_arr(rec, "plans");
    if (plans && its && cJSON_GetArraySize(its) == 1 && !json_get_arr(rec, "runs")) {
        const cJSON *it = its->child, *p = plans->child;
        char a[32];
        fprintf(f, "cluster:  %.0f x %s (%.0f GPUs, %s, %s each)\n", json_get_num(p, "nodes"),
                json_get_str(it, "name"), json_get_num(p, "gpus"), json_get_str(it, "gpu"),
                bytes(json_get_num(it, "gpu_mem_bytes"), a, sizeof a));
    }
    if (search && !strcmp(json_get_str(search, "mode"), "compare")) {
        char t[24];
        fprintf(f, "compare:  objective %s, the best plan of each instance type and count; "
                "training %s tokens\n",
                json_get_str(search, "objective"), units_fmt_count(json_get_num(search, "tokens"), t, sizeof t));
    } else if (search) {
        fprintf(f, "search:   objective %s, %.0f layouts evaluated, %.0f feasible",
                json_get_str(search, "objective"), json_get_num(search, "evaluated"), json_get_num(search, "feasible"));
        if (json_get_num(search, "global_batch") > 0)
            fprintf(f, ", global batch %.0f", json_get_num(search, "global_batch"));
        fprintf(f, "\n");
    }
}
