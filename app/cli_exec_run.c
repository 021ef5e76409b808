/*
 * cli_exec_run.c: what smdplan exec makes of a run once it has ended,
 * whether it launched it or imports it (--import): the run recorded with
 * its steps, ranks and prediction, and printed as JSON or for a person.
 * The outcome is judged, and RESULT.json and an imported run directory are
 * checked, by exec/ (exec/exec_host.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "app/cli_exec_int.h"
#include "app/cli_int.h"
#include "data/data_json.h"
#include "common/units.h"

static double nan0(double v)
{
    return isfinite(v) ? v : 0.0;
}

int cli_exec__record_run(db *d, const db_provenance *p, void *vctx, st_err *err)
{
    rec_ctx *x = vctx;
    const exec_result *r = x->res;
    int ns = x->have_result ? r->nsteps : 0, nr = x->have_result ? r->nranks : 0;
    db_run_step *steps = ns ? calloc((size_t)ns, sizeof *steps) : NULL;
    db_run_rank *ranks = nr ? calloc((size_t)nr, sizeof *ranks) : NULL;
    if ((ns && !steps) || (nr && !ranks)) {
        free(steps);
        free(ranks);
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    }
    for (int i = 0; i < ns; i++) {
        const exec_step_result *s = &r->steps[i];
        steps[i] = (db_run_step){.step = (int)s->step, .time_s = s->time_s, .forward_s = NAN,
                                 .backward_s = NAN, .optimizer_s = s->phases.optimizer_s,
                                 .comm_s = NAN, .loss = s->loss, .phases = 1,
                                 .compute_s = s->phases.compute_s,
                                 .tp_comm_s = s->phases.tp_comm_s,
                                 .pp_wait_s = s->phases.pp_wait_s,
                                 .dp_comm_s = s->phases.dp_comm_s, .lr = s->lr,
                                 .grad_norm = s->grad_norm, .measured = s->measured};
    }
    for (int i = 0; i < nr; i++) {
        const exec_rank_stat *k = &r->rank_stats[i];
        ranks[i] = (db_run_rank){k->rank, k->tp_rank, k->pp_rank, k->dp_rank, k->peak_memory_bytes,
                                 k->phases.compute_s, k->phases.tp_comm_s, k->phases.pp_wait_s,
                                 k->phases.dp_comm_s, k->phases.optimizer_s,
                                 nan0(k->device_memory_peak_bytes)};
    }
    const exec_outcome *oc = x->oc;
    int failed_rank = oc->failed_rank, exit_status = x->exit_status;
    char backend[32];
    snprintf(backend, sizeof backend, "%s+%s", x->device, x->transport);
    db_run run = {
        .status = oc->status, .error_text = oc->error, .backend = backend,
        .measured_step_s = nan0(oc->step_s), .nsteps = ns, .steps = steps, .nranks = nr,
        .rank_stats = ranks, .ranks = x->j->ranks, .device = x->device,
        .transport = x->transport,
        .device_name = x->have_result && r->device_name[0] ? r->device_name : NULL,
        .threads_per_rank = x->threads, .run_host = x->host,
        .tokens_per_step = x->have_result ? nan0(r->tokens_per_step) : 0,
        .tokens_per_s = nan0(oc->tokens_per_s),
        .model_flops_per_step = x->have_result ? nan0(r->model_flops_per_step) : 0,
        .hardware_flops_per_step = x->have_result ? nan0(r->hardware_flops_per_step) : 0,
        .achieved_flops = nan0(oc->achieved_flops), .peak_flops = nan0(oc->peak_flops),
        .mfu = nan0(oc->mfu), .failed_rank = failed_rank >= 0 ? &failed_rank : NULL,
        .exit_status = &exit_status, .measured_steps = oc->measured,
        .launch_command = x->cmd_text, .run_dir = x->run_dir, .config_json = x->config_text,
        .scaled = x->j->scaled, .plan_record_id = x->plan_record,
        .simulated_step_s = x->h->simulated_s};
    const plan_cluster *c = x->h->have_entry ? &x->h->cluster : NULL;
    int rc = db_record_run(d, p, &x->j->model, c, &x->j->layout, x->h->have_est ? &x->h->est : NULL,
                           &run, &x->run_id, err);
    free(steps);
    free(ranks);
    return rc;
}

static void json_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* What a run came to, as JSON (--json): the keys the usage lists. */
void cli_exec__print_json(const rec_ctx *x, double wall_s)
{
    cJSON *root = cJSON_CreateObject();
    if (x->run_id > 0)
        cJSON_AddNumberToObject(root, "run_id", (double)x->run_id);
    else
        cJSON_AddNullToObject(root, "run_id");
    cJSON_AddStringToObject(root, "status", x->oc->status);
    if (x->oc->error[0])
        cJSON_AddStringToObject(root, "error", x->oc->error);
    else
        cJSON_AddNullToObject(root, "error");
    if (x->oc->failed_rank >= 0)
        cJSON_AddNumberToObject(root, "failed_rank", x->oc->failed_rank);
    else
        cJSON_AddNullToObject(root, "failed_rank");
    cJSON_AddNumberToObject(root, "ranks", x->j->ranks);
    cJSON_AddStringToObject(root, "device", x->device);
    cJSON_AddStringToObject(root, "transport", x->transport);
    if (x->have_result && x->res->device_name[0])
        cJSON_AddStringToObject(root, "device_name", x->res->device_name);
    else
        cJSON_AddNullToObject(root, "device_name");
    json_num(root, "step_time_s", x->oc->step_s);
    cJSON_AddNumberToObject(root, "measured_steps", x->oc->measured);
    json_num(root, "tokens_per_s", x->oc->tokens_per_s);
    json_num(root, "achieved_flops", x->oc->achieved_flops);
    json_num(root, "peak_flops", x->oc->peak_flops);
    json_num(root, "mfu", x->oc->mfu);
    json_num(root, "peak_memory_bytes", x->oc->peak_mem_bytes);
    json_num(root, "device_memory_peak_bytes", x->oc->device_mem_bytes);
    cJSON *losses = cJSON_AddArrayToObject(root, "losses");
    for (int i = 0; x->have_result && i < x->res->nsteps; i++)
        cJSON_AddItemToArray(losses, isfinite(x->res->steps[i].loss)
                                         ? cJSON_CreateNumber(x->res->steps[i].loss)
                                         : cJSON_CreateNull());
    json_num(root, "predicted_step_s", x->h->have_est ? x->h->est.time.step_s : NAN);
    json_num(root, "simulated_step_s", x->h->simulated_s > 0 ? x->h->simulated_s : NAN);
    if (!x->h->have_est)
        cJSON_AddStringToObject(root, "prediction_note", x->h->note);
    cJSON_AddStringToObject(root, "host_type", x->h->type);
    cJSON_AddItemToObject(root, "model", data_json_model(&x->j->model));
    if (x->j->scaled[0])
        cJSON_AddStringToObject(root, "scaled", x->j->scaled);
    cJSON_AddStringToObject(root, "layout_source", x->j->source);
    cJSON_AddStringToObject(root, "run_dir", x->run_dir);
    cJSON_AddStringToObject(root, "command", x->cmd_text);
    cJSON_AddNumberToObject(root, "wall_s", wall_s);
    json_num(root, "timeout_s", x->timeout_s > 0 ? x->timeout_s : NAN);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (s)
        printf("%s\n", s);
    free(s);
}

/* What a run came to, for a person. */
void cli_exec__print_text(const rec_ctx *x, int cuda)
{
    printf("\nrun%s%lld: %s", x->run_id > 0 ? " " : "", (long long)x->run_id, x->oc->status);
    if (x->oc->error[0])
        printf(": %s", x->oc->error);
    printf("\n");
    if (isfinite(x->oc->step_s)) {
        printf("step time: %.4f s (median of %d measured steps)", x->oc->step_s, x->oc->measured);
        if (x->h->have_est)
            printf("; predicted %.4f s (%+.1f%%)", x->h->est.time.step_s,
                   db_error_pct(x->h->est.time.step_s, x->oc->step_s));
        if (x->h->simulated_s > 0)
            printf(", simulated %.4f s (%+.1f%%)", x->h->simulated_s,
                   db_error_pct(x->h->simulated_s, x->oc->step_s));
        printf("\n");
    }
    if (isfinite(x->oc->tokens_per_s))
        printf("tokens/s: %.1f", x->oc->tokens_per_s);
    if (isfinite(x->oc->achieved_flops))
        printf(", model FLOP/s %.3g", x->oc->achieved_flops);
    if (isfinite(x->oc->mfu))
        printf(", MFU %.1f%% of %d x %.3g FLOP/s (%s)", 100 * x->oc->mfu, x->h->peak_devices,
               x->h->peak_flops_per_rank, cuda ? "the GPU's dense bf16 peak in the catalog"
               : "the host entry's sgemm peak");
    if (isfinite(x->oc->tokens_per_s))
        printf("\n");
    if (isfinite(x->oc->peak_mem_bytes)) {
        char b[32];
        printf("peak memory per rank: %s (largest)\n",
               units_fmt_bytes(x->oc->peak_mem_bytes, b, sizeof b));
    }
    if (isfinite(x->oc->device_mem_bytes)) {
        char b[32];
        printf("GPU memory in use at most: %s (largest rank, CUDA's count)\n",
               units_fmt_bytes(x->oc->device_mem_bytes, b, sizeof b));
    }
    if (x->have_result && cuda && x->res->device_name[0])
        printf("device: %s\n", x->res->device_name);
    if (cuda && x->h->have_entry && !x->h->have_est && x->h->note[0])
        printf("note: %s\n", x->h->note);
    if (x->have_result && x->res->nsteps > 0)
        printf("loss: %.4f -> %.4f over %d steps\n", x->res->steps[0].loss,
               x->res->steps[x->res->nsteps - 1].loss, x->res->nsteps);
    printf("run directory: %s\n", x->run_dir);
}
