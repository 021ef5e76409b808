/*
 * exec_outcome.c: what a run of smdplan exec came to, judged from the
 * launcher's result (launch/launch_job.h: its exit, a timeout, an
 * interruption, processes left behind, the tail of its stderr) and the
 * run's RESULT.json when it wrote one that passed exec_result_check.
 *
 * The step time is the median of the measured steps; throughput and model
 * FLOP/s are per that step; MFU is the model FLOP/s over the device's peak
 * times the devices it counts (exec_pred: the ranks, or the GPUs ranks
 * share). A value that is not known is NAN.
 */
#include "exec/exec_host.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void exec_outcome_judge(double timeout_s, const launch_job_result *lr, int have_result,
                        const exec_result *res, const exec_pred *h, exec_outcome *oc)
{
    memset(oc, 0, sizeof *oc);
    oc->failed_rank = -1;
    oc->step_s = oc->tokens_per_s = oc->achieved_flops = oc->peak_flops = oc->mfu = NAN;
    oc->peak_mem_bytes = oc->device_mem_bytes = NAN;
    char last[512];
    launch_job_error_line(lr, EXEC_RANK_PROGRAM ": ", last, sizeof last);
    if (have_result) {
        snprintf(oc->status, sizeof oc->status, "%s", res->status);
        snprintf(oc->error, sizeof oc->error, "%s", res->error);
        oc->failed_rank = res->failed_rank;
        oc->step_s = exec_result_median_step_s(res, &oc->measured);
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
                     strstr(lr->stderr_tail, EXEC_RANK_PROGRAM ": ") != NULL;
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
