/*
 * exec_account.c: what a run of smdplan exec came to (exec_prep.h), once
 * it has run: launched here under launch/'s supervisor (its time limit,
 * interruption, nothing left behind) or, with --import, run by another
 * launcher that gives its exit status; its RESULT.json read and checked
 * against the job (exec_result_load); judged (exec_outcome.c); the exit
 * code that follows; and the account as JSON (--json) and for a person.
 * The caller records it (data/ is not exec/'s).
 *
 * The step time is the median of the measured steps (exec_outcome.c);
 * against the prediction it is shown as the error of the prediction in
 * percent, (predicted - measured) / measured (plan_error_pct's definition,
 * the sign saying which way the planner errs). Values not known are NAN
 * here and null in the JSON.
 */
#include "exec/exec_prep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/units.h"

int exec_account_launch(const exec_prep *p, FILE *progress, exec_account *a, st_err *err)
{
    const exec_request *r = p->req;
    memset(a, 0, sizeof *a);
    exec_result_init(&a->res);
    if (r->import_dir) { /* it has run: what the launcher said of it */
        a->lr.exited = 1;
        a->lr.exit_status = r->exit_status;
        a->lr.wall_s = NAN;
    } else {
        char out_log[EXEC_RUN_DIR_MAX + 32], err_log[EXEC_RUN_DIR_MAX + 32];
        snprintf(out_log, sizeof out_log, "%s/mpirun.out", p->run_dir);
        snprintf(err_log, sizeof err_log, "%s/mpirun.err", p->run_dir);
        launch_job L = {p->cmd->argv, p->cmd->env, p->timeout_s, progress, out_log, err_log};
        int rc = launch_job_run(&L, &a->lr, err);
        if (rc != ST_OK)
            return rc;
    }
    a->have_result = exec_result_load(p->run_dir, &p->job, &r->train, &a->res, &a->result_err);
    if (r->import_dir && a->result_err.code) /* a RESULT.json that is not this run's */
        return ST_RAISE(err, a->result_err.code == ST_ENOMEM ? ST_ENOMEM : ST_EINVAL,
                        "--import %s: %s; nothing recorded", p->run_dir, a->result_err.msg);
    a->j = &p->job;
    a->cmd_text = p->cmd_text;
    a->run_dir = p->run_dir;
    a->config_text = p->config_text;
    snprintf(a->host, sizeof a->host, "%s",
             a->have_result && a->res.host[0] ? a->res.host : p->host);
    a->exit_status = a->lr.exit_status;
    a->plan_record = r->plan_id;
    a->threads = r->threads;
    a->device = r->device;
    a->transport = p->transport;
    a->cuda = p->cuda;
    a->timeout_s = r->import_dir ? 0 : p->timeout_s;
    return ST_OK;
}

void exec_account_judge(exec_account *a, const exec_pred *h)
{
    a->h = h;
    exec_outcome *oc = &a->oc;
    exec_outcome_judge(a->timeout_s, &a->lr, a->have_result, &a->res, h, oc);
    /* a RESULT.json that could not be read, or is not this run's: that is
     * the error, unless the launcher said something of its own */
    if (!a->have_result && a->result_err.code &&
        (!oc->error[0] || (a->lr.exited && a->lr.exit_status == 0)))
        snprintf(oc->error, sizeof oc->error, "%s", a->result_err.msg);
}

int exec_account_exit(const exec_account *a, int import)
{
    if (import) /* whether it was recorded; the run's own status is the
                 * launcher's exit status */
        return a->run_id > 0 ? 0 : 1;
    return !strcmp(a->oc.status, "ok") ? 0 : a->oc.bad_config ? 2 : 1;
}

void exec_account_free(exec_account *a)
{
    if (a->have_result)
        exec_result_free(&a->res);
    a->have_result = 0;
}

static void json_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* The outcome's keys, run_id to losses. */
static void json_outcome(cJSON *root, const exec_account *a)
{
    const exec_outcome *oc = &a->oc;
    if (a->run_id > 0)
        cJSON_AddNumberToObject(root, "run_id", (double)a->run_id);
    else
        cJSON_AddNullToObject(root, "run_id");
    cJSON_AddStringToObject(root, "status", oc->status);
    if (oc->error[0])
        cJSON_AddStringToObject(root, "error", oc->error);
    else
        cJSON_AddNullToObject(root, "error");
    if (oc->failed_rank >= 0)
        cJSON_AddNumberToObject(root, "failed_rank", oc->failed_rank);
    else
        cJSON_AddNullToObject(root, "failed_rank");
    cJSON_AddNumberToObject(root, "ranks", a->j->ranks);
    cJSON_AddStringToObject(root, "device", a->device);
    cJSON_AddStringToObject(root, "transport", a->transport);
    if (a->have_result && a->res.device_name[0])
        cJSON_AddStringToObject(root, "device_name", a->res.device_name);
    else
        cJSON_AddNullToObject(root, "device_name");
    json_num(root, "step_time_s", oc->step_s);
    cJSON_AddNumberToObject(root, "measured_steps", oc->measured);
    json_num(root, "tokens_per_s", oc->tokens_per_s);
    json_num(root, "achieved_flops", oc->achieved_flops);
    json_num(root, "peak_flops", oc->peak_flops);
    json_num(root, "mfu", oc->mfu);
    json_num(root, "peak_memory_bytes", oc->peak_mem_bytes);
    json_num(root, "device_memory_peak_bytes", oc->device_mem_bytes);
    cJSON *losses = cJSON_AddArrayToObject(root, "losses");
    for (int i = 0; a->have_result && i < a->res.nsteps; i++)
        cJSON_AddItemToArray(losses, isfinite(a->res.steps[i].loss)
                                         ? cJSON_CreateNumber(a->res.steps[i].loss)
                                         : cJSON_CreateNull());
}

char *exec_account_json(const exec_account *a, struct cJSON *model)
{
    const exec_pred *h = a->h;
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        cJSON_Delete(model);
        return NULL;
    }
    json_outcome(root, a);
    json_num(root, "predicted_step_s", h->have_est ? h->est.time.step_s : NAN);
    json_num(root, "simulated_step_s", h->simulated_s > 0 ? h->simulated_s : NAN);
    if (!h->have_est)
        cJSON_AddStringToObject(root, "prediction_note", h->note);
    cJSON_AddStringToObject(root, "host_type", h->type);
    if (model)
        cJSON_AddItemToObject(root, "model", model);
    if (a->j->scaled[0])
        cJSON_AddStringToObject(root, "scaled", a->j->scaled);
    cJSON_AddStringToObject(root, "layout_source", a->j->source);
    cJSON_AddStringToObject(root, "run_dir", a->run_dir);
    cJSON_AddStringToObject(root, "command", a->cmd_text);
    cJSON_AddNumberToObject(root, "wall_s", a->lr.wall_s);
    json_num(root, "timeout_s", a->timeout_s > 0 ? a->timeout_s : NAN);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

/* The step time beside the prediction and the simulation, the throughput,
 * the model FLOP/s and the MFU. */
static void print_speed(FILE *f, const exec_account *a)
{
    const exec_outcome *oc = &a->oc;
    const exec_pred *h = a->h;
    if (isfinite(oc->step_s)) {
        fprintf(f, "step time: %.4f s (median of %d measured steps)", oc->step_s, oc->measured);
        if (h->have_est)
            fprintf(f, "; predicted %.4f s (%+.1f%%)", h->est.time.step_s,
                    plan_error_pct(h->est.time.step_s, oc->step_s));
        if (h->simulated_s > 0)
            fprintf(f, ", simulated %.4f s (%+.1f%%)", h->simulated_s,
                    plan_error_pct(h->simulated_s, oc->step_s));
        fprintf(f, "\n");
    }
    if (isfinite(oc->tokens_per_s))
        fprintf(f, "tokens/s: %.1f", oc->tokens_per_s);
    if (isfinite(oc->achieved_flops))
        fprintf(f, ", model FLOP/s %.3g", oc->achieved_flops);
    if (isfinite(oc->mfu))
        fprintf(f, ", MFU %.1f%% of %d x %.3g FLOP/s (%s)", 100 * oc->mfu, h->peak_devices,
                h->peak_flops_per_rank, a->cuda ? "the GPU's dense bf16 peak in the catalog"
                                                : "the host entry's sgemm peak");
    if (isfinite(oc->tokens_per_s))
        fprintf(f, "\n");
}

void exec_account_print(FILE *f, const exec_account *a)
{
    const exec_outcome *oc = &a->oc;
    const exec_pred *h = a->h;
    fprintf(f, "\nrun%s%lld: %s", a->run_id > 0 ? " " : "", (long long)a->run_id, oc->status);
    if (oc->error[0])
        fprintf(f, ": %s", oc->error);
    fprintf(f, "\n");
    print_speed(f, a);
    if (isfinite(oc->peak_mem_bytes)) {
        char b[32];
        fprintf(f, "peak memory per rank: %s (largest)\n",
                units_fmt_bytes(oc->peak_mem_bytes, b, sizeof b));
    }
    if (isfinite(oc->device_mem_bytes)) {
        char b[32];
        fprintf(f, "GPU memory in use at most: %s (largest rank, CUDA's count)\n",
                units_fmt_bytes(oc->device_mem_bytes, b, sizeof b));
    }
    if (a->have_result && a->cuda && a->res.device_name[0])
        fprintf(f, "device: %s\n", a->res.device_name);
    if (a->cuda && h->have_entry && !h->have_est && h->note[0])
        fprintf(f, "note: %s\n", h->note);
    if (a->have_result && a->res.nsteps > 0)
        fprintf(f, "loss: %.4f -> %.4f over %d steps\n", a->res.steps[0].loss,
                a->res.steps[a->res.nsteps - 1].loss, a->res.nsteps);
    fprintf(f, "run directory: %s\n", a->run_dir);
}
