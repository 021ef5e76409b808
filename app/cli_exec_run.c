/*
 * cli_exec_run.c: what smdplan exec makes of a run once it has ended,
 * whether it launched it or imports it (--import): the outcome judged from
 * the launcher's result and RESULT.json, the run recorded with its steps,
 * ranks and prediction, and printed as JSON or for a person; and the checks
 * an imported run directory must pass.
 *
 * A RESULT.json is checked against the run it claims to be before anything
 * of it is recorded (cli_exec__result_check): a status of the contract's
 * set, the run's ranks, its tokens and model FLOPs per step as the
 * executor counts them for this model and layout, steps of the run's
 * schedule, learning rates up to the peak, and times, FLOPs and memory
 * finite, non-negative and under bounds no run reaches.
 *
 * An import is recorded once: the marker RECORDED is created with O_EXCL
 * before the record is written (cli_exec__import_claim), so of two imports
 * of one directory at the same time one records and the other is refused;
 * it then says which run it became, or is removed when nothing was
 * recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "app/cli_exec_int.h"
#include "app/cli_int.h"
#include "common/units.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median time of the measured steps (the contract's step time), NAN
 * when none was measured; *measured their count. */
static double median_step_s(const exec_result *r, int *measured)
{
    *measured = 0;
    double *t = r->nsteps > 0 ? malloc((size_t)r->nsteps * sizeof *t) : NULL;
    if (!t)
        return NAN;
    int n = 0;
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].measured && isfinite(r->steps[i].time_s))
            t[n++] = r->steps[i].time_s;
    *measured = n;
    double med = NAN;
    if (n > 0) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    }
    free(t);
    return med;
}

/* "rank N" in a line of mpirun's or the rank program's: N, or -1. */
static int rank_in(const char *s)
{
    const char *p = s;
    while ((p = strstr(p, "rank "))) {
        char *end;
        long v = strtol(p + 5, &end, 10);
        if (end != p + 5 && v >= 0 && v < INT_MAX)
            return (int)v;
        p += 5;
    }
    return -1;
}

void cli_exec__judge(double timeout_s, const launch_job_result *lr, int have_result,
                     const exec_result *res, const host_pred *h, const exec_job *j, outcome *oc)
{
    memset(oc, 0, sizeof *oc);
    oc->failed_rank = -1;
    oc->step_s = oc->tokens_per_s = oc->achieved_flops = oc->peak_flops = oc->mfu = NAN;
    oc->peak_mem_bytes = oc->device_mem_bytes = NAN;
    char last[512];
    launch_job_error_line(lr, RANK_PROGRAM ": ", last, sizeof last);
    if (have_result) {
        snprintf(oc->status, sizeof oc->status, "%s", res->status);
        snprintf(oc->error, sizeof oc->error, "%s", res->error);
        oc->failed_rank = res->failed_rank;
        oc->step_s = median_step_s(res, &oc->measured);
        for (int i = 0; i < res->nranks; i++) {
            if (isfinite(res->rank_stats[i].peak_memory_bytes) &&
                !(oc->peak_mem_bytes >= res->rank_stats[i].peak_memory_bytes))
                oc->peak_mem_bytes = res->rank_stats[i].peak_memory_bytes;
            double dm = res->rank_stats[i].device_memory_peak_bytes;
            if (dm > 0 && !(oc->device_mem_bytes >= dm))
                oc->device_mem_bytes = dm;
        }
    } else {
        snprintf(oc->status, sizeof oc->status, "failed");
    }
    if (!strcmp(oc->status, "ok") && lr->exit_status != 0) {
        snprintf(oc->status, sizeof oc->status, "failed");
        snprintf(oc->error, sizeof oc->error, "mpirun exited with status %d after the result was "
                 "written%s%s", lr->exit_status, last[0] ? ": " : "", last);
    }
    if (lr->timed_out) {
        snprintf(oc->status, sizeof oc->status, "timeout");
        snprintf(oc->error, sizeof oc->error, "the run passed its time limit of %g s "
                 "(--timeout) and was stopped", timeout_s);
    } else if (lr->interrupted) {
        snprintf(oc->status, sizeof oc->status, "failed");
        snprintf(oc->error, sizeof oc->error, "interrupted by signal %d; the job was stopped",
                 lr->interrupted);
    } else if (strcmp(oc->status, "ok") && !oc->error[0]) {
        if (lr->exited && lr->exit_status == 127 && !have_result)
            snprintf(oc->error, sizeof oc->error, "the launcher could not start: %s",
                     last[0] ? last : "mpirun not found");
        else
            snprintf(oc->error, sizeof oc->error, "mpirun exited with status %d%s%s",
                     lr->exit_status, last[0] ? ": " : "", last);
    }
    if (oc->failed_rank < 0 && strcmp(oc->status, "ok"))
        oc->failed_rank = rank_in(lr->stderr_tail);
    /* the rank program's exit 2: the config was refused on every rank */
    oc->bad_config = !have_result && lr->exited && lr->exit_status == 2 &&
                     strstr(lr->stderr_tail, "smdplan-rank: ") != NULL;
    if (lr->left_behind > 0) {
        snprintf(oc->status, sizeof oc->status, "failed");
        size_t u = strlen(oc->error);
        snprintf(oc->error + u, sizeof oc->error - u, "%s%d processes of the job survived the "
                 "final sweep", u ? "; " : "", lr->left_behind);
    }
    if (have_result && isfinite(oc->step_s) && oc->step_s > 0) {
        if (res->tokens_per_step > 0)
            oc->tokens_per_s = res->tokens_per_step / oc->step_s;
        if (res->model_flops_per_step > 0)
            oc->achieved_flops = res->model_flops_per_step / oc->step_s;
        if (h->have_entry && h->peak_flops_per_rank > 0) {
            /* the contract: the device's peak (the host entry's measured
             * sgemm rate; a GPU's dense bf16 peak from the catalog) x the
             * devices: the ranks, or the GPUs ranks share */
            oc->peak_flops = h->peak_flops_per_rank * h->peak_devices;
            oc->mfu = oc->achieved_flops / oc->peak_flops;
        }
    }
}


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
    const outcome *oc = x->oc;
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
    cJSON_AddItemToObject(root, "model", cli_json_model(&x->j->model));
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

/* ---- --import: a run another launcher ran ---- */

/* DIR's marker is there, saying line: recorded ("run 12"), or an import
 * recording it ("recording (pid 345)": running, or one that stopped). */
static int refuse_marked(const char *dir, const char *line, st_err *err)
{
    if (!strncmp(line, "recording", 9))
        return ST_RAISE(err, ST_EINVAL, "--import %s: another import is recording it (%s; if "
                        "none is running, remove %s/%s); nothing recorded", dir, line, dir,
                        IMPORT_MARKER);
    return ST_RAISE(err, ST_EINVAL, "--import %s: already recorded (%s); nothing recorded", dir,
                    line[0] ? line : IMPORT_MARKER);
}

/* DIR is the run these options describe (its CONFIG.json is the one exec
 * builds from them, compared as the executor reads both) and was not
 * recorded before. */
int cli_exec__import_check(const char *dir, const char *config_text, st_err *err)
{
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return ST_RAISE(err, ST_EINVAL, "--import %s: no such directory", dir);
    char path[CLI_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, IMPORT_MARKER);
    int marked = lstat(path, &sb) == 0;
    if (marked && !S_ISREG(sb.st_mode))
        return ST_RAISE(err, ST_EINVAL, "--import %s: %s is there and is not a regular file; "
                        "nothing recorded", dir, IMPORT_MARKER);
    FILE *f = marked ? fopen(path, "r") : NULL;
    if (f) {
        char line[128] = "";
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
        line[strcspn(line, "\n")] = '\0';
        return refuse_marked(dir, line, err);
    }
    /* what the run wrote: plain files of a run's size (a FIFO or a device
     * in their place would block or never end) */
    static const struct {
        const char *name;
        off_t max_bytes;
    } files[] = {{"CONFIG.json", IMPORT_CONFIG_MAX}, {"RESULT.json", IMPORT_RESULT_MAX}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        if (stat(path, &sb) != 0) {
            if (errno == ENOENT && i == 1)
                continue; /* no result: the run failed before writing one */
            return ST_RAISE(err, ST_EINVAL, "--import %s: %s: %s", dir, files[i].name,
                            strerror(errno));
        }
        if (!S_ISREG(sb.st_mode))
            return ST_RAISE(err, ST_EINVAL, "--import %s: %s is not a regular file", dir,
                            files[i].name);
        if (sb.st_size > files[i].max_bytes)
            return ST_RAISE(err, ST_EINVAL, "--import %s: %s has %lld bytes; a run's has at "
                            "most %lld", dir, files[i].name, (long long)sb.st_size,
                            (long long)files[i].max_bytes);
    }
    snprintf(path, sizeof path, "%s/CONFIG.json", dir);
    exec_config *cfg = calloc(2, sizeof *cfg);
    if (!cfg)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    st_err e = {0};
    int rc = exec_config_read(path, &cfg[0], &e);
    if (rc != ST_OK)
        rc = ST_RAISE(err, ST_EINVAL, "--import %s: %s", dir, e.msg);
    else if ((rc = exec_config_parse(config_text, &cfg[1], err)) == ST_OK) {
        char *a = exec_config_json(&cfg[0]), *b = exec_config_json(&cfg[1]);
        if (!a || !b)
            rc = ST_RAISE(err, ST_ENOMEM, "out of memory");
        else if (strcmp(a, b) != 0)
            rc = ST_RAISE(err, ST_EINVAL, "--import %s: its CONFIG.json is not the run these "
                          "options describe (import with the options and from the directory "
                          "the script was emitted with)", dir);
        free(a);
        free(b);
    }
    free(cfg);
    /* a RESULT.json that is not what a rank program writes is bad input,
     * refused with its key named before anything is recorded */
    snprintf(path, sizeof path, "%s/RESULT.json", dir);
    if (rc == ST_OK && access(path, F_OK) == 0) {
        exec_result res;
        if (exec_result_read(path, &res, &e) != ST_OK)
            rc = ST_RAISE(err, ST_EINVAL, "--import %s: RESULT.json: %s; nothing recorded", dir,
                          e.msg);
        exec_result_free(&res);
    }
    return rc;
}


/* ---- what a RESULT.json may say ---- */

/* The statuses of the contract (exec.h): the rank program writes no other. */
static const char *const result_statuses[] = {"ok", "failed", NULL};
/* Longest time a step (or a phase of it) can take: the largest --timeout
 * smdplan exec takes for a whole run, 1e7 s. */
#define RESULT_TIME_MAX_S 1e7
/* Most memory a rank can report: 1 PiB, more than any host or GPU holds. */
#define RESULT_MEM_MAX_BYTES 1125899906842624.0
/* Hardware FLOPs over the model's: full recompute adds one forward to the
 * forward and backward, 4/3 (Korthikanti et al. 2022); twice that is past
 * anything the executor computes. */
#define RESULT_HW_FLOPS_FACTOR (2.0 * 4.0 / 3.0)
/* Relative tolerance of a count the executor computes in double from the
 * same integers: a few roundings of 2^-53 each. */
#define RESULT_COUNT_RTOL 1e-9

static int in_range(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

/* v is 0 (nothing measured) or the count the executor makes, want. */
static int zero_or(double v, double want)
{
    return v == 0.0 || (isfinite(v) && fabs(v - want) <= RESULT_COUNT_RTOL * want);
}

static int check_phases(const exec_phases *p, double max_s, const char *where, st_err *err)
{
    const struct {
        const char *name;
        double v;
    } ph[] = {{"compute_s", p->compute_s},   {"tp_comm_s", p->tp_comm_s},
              {"pp_wait_s", p->pp_wait_s},   {"dp_comm_s", p->dp_comm_s},
              {"optimizer_s", p->optimizer_s}};
    for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++)
        if (!in_range(ph[i].v, 0, max_s))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: %s phases_s.%s %g: allowed 0 to %g s",
                            where, ph[i].name, ph[i].v, max_s);
    return ST_OK;
}

int cli_exec__result_check(const exec_result *r, const exec_job *j, const exec_train *t,
                           st_err *err)
{
    int known = 0;
    for (int i = 0; result_statuses[i]; i++)
        known |= !strcmp(r->status, result_statuses[i]);
    if (!known)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: status \"%.40s\": allowed ok, failed",
                        r->status);
    if (r->ranks != j->ranks)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: ranks %d: the run has %d", r->ranks,
                        j->ranks);
    if (r->failed_rank < -1 || r->failed_rank >= j->ranks)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: failed_rank %d: allowed -1 (none) to %d",
                        r->failed_rank, j->ranks - 1);
    double tokens = (double)j->layout.global_batch * (double)j->model.seq;
    double flops = plan_model_train_flops_per_token(&j->model) * tokens;
    if (!zero_or(r->tokens_per_step, tokens))
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: tokens_per_step %g: allowed 0 or the run's "
                        "%.0f (global batch %lld x sequence %lld)", r->tokens_per_step, tokens,
                        (long long)j->layout.global_batch, (long long)j->model.seq);
    if (!zero_or(r->model_flops_per_step, flops))
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: model_flops_per_step %g: allowed 0 or the "
                        "run's %.6g", r->model_flops_per_step, flops);
    if (!in_range(r->hardware_flops_per_step, 0, RESULT_HW_FLOPS_FACTOR * flops))
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: hardware_flops_per_step %g: allowed 0 to "
                        "%.6g (%.3g x the model's)", r->hardware_flops_per_step,
                        RESULT_HW_FLOPS_FACTOR * flops, RESULT_HW_FLOPS_FACTOR);
    if (r->nsteps > t->steps)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: %d steps: the run has %lld", r->nsteps,
                        (long long)t->steps);
    char where[48];
    for (int i = 0; i < r->nsteps; i++) {
        const exec_step_result *s = &r->steps[i];
        int64_t prev = i ? r->steps[i - 1].step : 0;
        if (s->step <= prev || s->step > t->steps)
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].step %lld: allowed %lld to "
                            "%lld, increasing", i, (long long)s->step, (long long)prev + 1,
                            (long long)t->steps);
        if (!in_range(s->time_s, 0, RESULT_TIME_MAX_S))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].time_s %g: allowed 0 to %g s",
                            i, s->time_s, RESULT_TIME_MAX_S);
        /* a diverged run's loss and norm are NaN (null in the file) */
        if (!isnan(s->loss) && !(isfinite(s->loss) && s->loss >= 0))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].loss %g: allowed a "
                            "cross-entropy >= 0, or null", i, s->loss);
        if (!isnan(s->grad_norm) && !(isfinite(s->grad_norm) && s->grad_norm >= 0))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].grad_norm %g: allowed >= 0, "
                            "or null", i, s->grad_norm);
        if (!in_range(s->lr, 0, t->lr * (1 + RESULT_COUNT_RTOL)))
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: steps[%d].lr %g: allowed 0 to the "
                            "run's peak %g", i, s->lr, t->lr);
        snprintf(where, sizeof where, "steps[%d]", i);
        int rc = check_phases(&s->phases, RESULT_TIME_MAX_S, where, err);
        if (rc)
            return rc;
    }
    if (r->nranks > j->ranks)
        return ST_RAISE(err, ST_EINVAL, "RESULT.json: %d rank_stats: the run has %d ranks",
                        r->nranks, j->ranks);
    for (int i = 0; i < r->nranks; i++) {
        const exec_rank_stat *k = &r->rank_stats[i];
        if (k->rank < 0 || k->rank >= j->ranks || k->tp_rank < 0 || k->tp_rank >= j->layout.tp ||
            k->pp_rank < 0 || k->pp_rank >= j->layout.pp || k->dp_rank < 0 ||
            k->dp_rank >= j->layout.dp)
            return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d] rank %d (tp %d, pp %d, "
                            "dp %d): outside the layout's %d ranks (tp %d, pp %d, dp %d)", i,
                            k->rank, k->tp_rank, k->pp_rank, k->dp_rank, j->ranks, j->layout.tp,
                            j->layout.pp, j->layout.dp);
        for (int m = 0; m < i; m++)
            if (r->rank_stats[m].rank == k->rank)
                return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d]: rank %d twice", i,
                                k->rank);
        const struct {
            const char *name;
            double v;
        } mem[] = {{"peak_memory_bytes", k->peak_memory_bytes},
                   {"max_rss_bytes", k->max_rss_bytes},
                   {"device_memory_peak_bytes", k->device_memory_peak_bytes}};
        for (size_t q = 0; q < sizeof mem / sizeof mem[0]; q++)
            if (!in_range(mem[q].v, 0, RESULT_MEM_MAX_BYTES))
                return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d].%s %g: allowed 0 to "
                                "%g bytes", i, mem[q].name, mem[q].v, RESULT_MEM_MAX_BYTES);
        for (int c = 0; c < EXEC_MEM__COUNT; c++)
            if (!in_range(k->peak_class_bytes[c], 0, RESULT_MEM_MAX_BYTES))
                return ST_RAISE(err, ST_EINVAL, "RESULT.json: rank_stats[%d] peak of %s %g: "
                                "allowed 0 to %g bytes", i, exec_mem_class_name((exec_mem_class)c),
                                k->peak_class_bytes[c], RESULT_MEM_MAX_BYTES);
        snprintf(where, sizeof where, "rank_stats[%d]", i);
        int rc = check_phases(&k->phases, RESULT_TIME_MAX_S * (double)t->steps, where, err);
        if (rc)
            return rc;
    }
    return ST_OK;
}

/* ---- --import: recorded once ---- */

/* What a marker says: its first line ("run 12", "recording (pid 345)"). */
static void marker_line(int fd, char *line, size_t n)
{
    ssize_t k = fd >= 0 ? pread(fd, line, n - 1, 0) : -1;
    line[k > 0 ? k : 0] = '\0';
    line[strcspn(line, "\n")] = '\0';
}

int cli_exec__import_claim(const char *dir, int *fd, st_err *err)
{
    char path[CLI_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, IMPORT_MARKER);
    *fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (*fd < 0) {
        int e = errno;
        char line[128] = "";
        int other = e == EEXIST ? open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) : -1;
        marker_line(other, line, sizeof line);
        if (other >= 0)
            close(other);
        if (e != EEXIST)
            return ST_RAISE(err, st_errno_status(e), "--import %s: cannot create %s: %s; nothing "
                            "recorded", dir, IMPORT_MARKER, strerror(e));
        return refuse_marked(dir, line, err);
    }
    char mark[64];
    int n = snprintf(mark, sizeof mark, "recording (pid %ld)\n", (long)getpid());
    if (write(*fd, mark, (size_t)n) != n) {
        int e = errno;
        close(*fd);
        unlink(path);
        *fd = -1;
        return ST_RAISE(err, st_errno_status(e), "--import %s: cannot write %s: %s; nothing "
                        "recorded", dir, IMPORT_MARKER, strerror(e));
    }
    return ST_OK;
}

int cli_exec__import_finish(const char *dir, int fd, int64_t run_id, st_err *err)
{
    char path[CLI_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, IMPORT_MARKER);
    if (run_id <= 0) { /* nothing recorded: the next import may try again */
        close(fd);
        unlink(path);
        return ST_OK;
    }
    char mark[64];
    int n = snprintf(mark, sizeof mark, "run %lld\n", (long long)run_id);
    int rc = ST_OK;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, mark, (size_t)n, 0) != n || fsync(fd) != 0)
        rc = ST_RAISE(err, ST_EIO, "recorded as run %lld, but %s/%s says so only in part: %s",
                      (long long)run_id, dir, IMPORT_MARKER, strerror(errno));
    close(fd);
    return rc;
}
