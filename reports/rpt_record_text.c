/*
 * rpt_record_text.c: one recorded answer as the text of `smdplan show`: its
 * provenance, model, cluster and search, each plan with every memory and
 * time term of its prediction, and a bench record's host and entry.
 *
 * The record is the JSON that data/'s db_show hands over (borrowed); a field
 * a record of an older schema lacks reads as NaN or "" and prints as such.
 * Byte counts are printed as the caller left them (show rounds them first).
 * The parts of the page that are terminal tables (simulations, runs,
 * calibrations) stay with the caller, which knows the terminal.
 */
#include "reports/rpt_record.h"

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/units.h"
#include "common/json_get.h"


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
            fprintf(f, "closest layout (f of memory): ");
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
