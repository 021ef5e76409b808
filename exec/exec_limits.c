/*
 * exec_limits.c: what a run of smdplan exec may take of the host it
 * launches on, checked and set before anything launches.
 *
 * Memory. The planner's memory of one rank of the job (plan_stages_mem:
 * the worst pipeline stage of the job's model and layout under the
 * device's profile, what it must hold, plan_mem_need_bytes) times the
 * ranks that share what is compared:
 *   - the CPU device: the ranks this host runs (all of them, or a
 *     hostfile's most slots) against the memory the kernel says is
 *     available to new work (/proc/meminfo MemAvailable; without /proc the
 *     free pages, sysconf _SC_AVPHYS_PAGES). The planner's CUDA context
 *     term is left out: the CPU device has none;
 *   - the CUDA device: the ranks that share one GPU against the GPU's memory
 *     (the smallest GPU's, as the device describes itself:
 *     exec_device_memory_bytes).
 * A job that does not fit is refused with both numbers (ST_EINVAL: smdplan
 * exec exits 2): a run past the host's memory grows until the kernel's
 * out-of-memory killer ends it or the machine, a GPU's fails at its first
 * allocation after minutes of start-up. The memory terms do not depend on the host's speed,
 * so they are computed on a stand-in node of the job's ranks (one instance
 * type whose devices hold what is compared) whatever the catalog holds.
 * There is no flag to launch past the check: a layout that does not fit
 * is reduced (--scale, recompute, sharding, more pipeline stages).
 *
 * Time. Without --timeout a run is stopped after DEFAULT_TIMEOUT_FACTOR
 * times its predicted time, and never before DEFAULT_TIMEOUT_FLOOR_S: a
 * launcher that hangs (a stopped mpirun, a rank waiting on a host that is
 * gone) is then ended and recorded rather than waited on forever. The
 * predicted time is the steps times the planner's step on this host's
 * catalog entry, or, without one, the model's FLOPs at FLOOR_FLOPS_PER_RANK
 * per rank. --timeout S sets another limit; --timeout 0, none.
 */
#define _GNU_SOURCE /* getline */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/units.h"
#include "exec/exec_host.h"
#include "planner/plan_framework.h"

/* The default limit: ten times the prediction (the planner's step on this
 * host is within 10 % of the measured one in README's table; the factor
 * leaves room for a host that other work slows down and for checkpoint
 * writes), at least ten minutes (mpirun's start-up, the first step's
 * allocations, a prediction that is only a floor). */
#define DEFAULT_TIMEOUT_FACTOR 10.0
#define DEFAULT_TIMEOUT_FLOOR_S 600.0
/* A rate every core of the last decade beats at sgemm by ten times or more
 * (smdplan bench measures tens of GFLOP/s per core): the predicted time of
 * a run without a catalog entry, a bound from above. */
#define FLOOR_FLOPS_PER_RANK 1e9

/* The memory available to new work on this host, bytes; 0: unknown. */
static double host_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        double kib = -1;
        while (getline(&line, &cap, f) > 0)
            if (!strncmp(line, "MemAvailable:", 13)) {
                kib = strtod(line + 13, NULL);
                break;
            }
        free(line);
        fclose(f);
        if (kib >= 0)
            return kib * 1024.0;
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* The planner's memory of one rank of the job: its worst stage's need, on
 * a stand-in node of j->ranks devices (the memory terms do not depend on
 * the host's speeds, see above). */
static int rank_need_bytes(const exec_job *j, int cuda, double *need, st_err *err)
{
    plan_gpu gpu = {
        .name = "stand-in", .silicon = "stand-in", .mem_bytes = 1e15, .peak_flops = 1e12,
        .hbm_bps = 1e11, .gemm_eff_max = 1, .gemm_dim_half = 1, .misaligned_factor = 1,
        .hbm_eff = 1, .flash_eff = 1, .align_partial_factor = 1,
    };
    plan_curve flat = {.name = "flat", .n = 1, .log2_bytes = {20}, .eff = {1}};
    plan_instance in = {
        .name = "stand-in", .gpu = "stand-in", .gpus_per_node = j->ranks, .nvlink_bps = 1e10,
        .nvswitch = 1, .intra_busbw_bps = 1e10, .intra_latency_s = 1e-6, .net_bps = 1e10,
        .net_latency_s = 1e-6, .net_latency_nodes = 2, .net_ring_eff = 1, .net_tree_eff = 1,
        .intra_curve = "flat", .net_curve = "flat",
    };
    plan_catalog cat = {.gpus = &gpu, .ngpus = 1, .instances = &in, .ninstances = 1,
                        .curves = &flat, .ncurves = 1};
    plan_cluster c;
    int rc = plan_catalog_link(&cat, err);
    if (rc == ST_OK)
        rc = plan_cluster_make(&cat, &in, 1, &c, err);
    if (rc != ST_OK)
        return rc;
    int profile = PLAN_FW_DEFAULT;
    st_err ignore = {0};
    plan_framework_find(cuda ? "smdplan-cuda" : "smdplan", &profile, &ignore);
    plan_cluster_use_framework(&cat, profile, &c);
    plan_mem *mem = calloc((size_t)j->layout.pp, sizeof *mem);
    if (!mem)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    rc = plan_stages_mem(&j->model, &c, &j->layout, mem, j->layout.pp, err);
    *need = 0;
    for (int s = 0; rc == ST_OK && s < j->layout.pp; s++) {
        double b = plan_mem_need_bytes(&mem[s]);
        if (!cuda) /* the CPU device makes no CUDA context */
            b -= mem[s].context_bytes;
        if (b > *need)
            *need = b;
    }
    free(mem);
    return rc;
}

int exec_memory_check(const exec_job *j, int cuda, int ranks_per_host, int ranks_per_gpu,
                      st_err *err)
{
    double need = 0;
    st_err perr = {0};
    if (rank_need_bytes(j, cuda, &need, &perr) != ST_OK)
        return ST_OK; /* no estimate of this layout: the run itself will say */
    char a[32], b[32], c[32];
    if (cuda) {
        double gpu = exec_device_memory_bytes("cuda");
        int per = ranks_per_gpu > 0 ? ranks_per_gpu : 1;
        if (gpu > 0 && need * per > gpu)
            return ST_RAISE(err, ST_EINVAL, "memory: the layout needs %s per rank x %d rank%s "
                            "per GPU = %s (the planner's worst pipeline stage), and the GPU has "
                            "%s; nothing launched (reduce the model with --scale, or recompute, "
                            "shard or pipeline more)", units_fmt_bytes(need, a, sizeof a), per,
                            per == 1 ? "" : "s", units_fmt_bytes(need * per, b, sizeof b),
                            units_fmt_bytes(gpu, c, sizeof c));
        return ST_OK;
    }
    double avail = host_available_bytes();
    int per = ranks_per_host > 0 ? ranks_per_host : 1;
    if (avail > 0 && need * per > avail)
        return ST_RAISE(err, ST_EINVAL, "memory: the layout needs %s per rank x %d rank%s on this "
                        "host = %s (the planner's worst pipeline stage), and the host has %s "
                        "available (MemAvailable); nothing launched (reduce the model with "
                        "--scale, or recompute, shard or pipeline more)",
                        units_fmt_bytes(need, a, sizeof a), per, per == 1 ? "" : "s",
                        units_fmt_bytes(need * per, b, sizeof b),
                        units_fmt_bytes(avail, c, sizeof c));
    return ST_OK;
}

double exec_default_timeout_s(const exec_job *j, const exec_pred *h, int64_t steps, char *why,
                              size_t n)
{
    double step_s;
    const char *from;
    if (h->have_est && h->est.time.step_s > 0) {
        step_s = h->est.time.step_s;
        from = "the planner's step on this host";
    } else {
        double tokens = (double)j->layout.global_batch * (double)j->model.seq;
        step_s = plan_model_train_flops_per_token(&j->model) * tokens /
                 ((double)j->ranks * FLOOR_FLOPS_PER_RANK);
        from = "the model's FLOPs at 1 GFLOP/s per rank";
    }
    double run_s = step_s * (double)steps;
    double limit = DEFAULT_TIMEOUT_FACTOR * run_s;
    if (!(limit >= DEFAULT_TIMEOUT_FLOOR_S))
        limit = DEFAULT_TIMEOUT_FLOOR_S;
    snprintf(why, n, "the default: %.0f x the predicted %.3g s (%s), at least %.0f s; --timeout "
             "S to change, 0 for none", DEFAULT_TIMEOUT_FACTOR, run_s, from,
             DEFAULT_TIMEOUT_FLOOR_S);
    return ceil(limit);
}
