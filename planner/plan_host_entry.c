/*
 * plan_host_entry.c: a host's catalog entry as smdplan bench writes it
 * (plan_hwfit.h): the values of its device, instance type and curves, from
 * the fits of plan_hwfit_host.c, and the source and note texts that say
 * where each figure came from.
 *
 * A CPU host has an entry for each thread count T per rank: an instance
 * type of cores / T "GPUs" per node, each a device entry of the CPU at T
 * threads:
 *   peak_flops     the asymptote of the GEMM model fitted to the executor's
 *                  own linears at T threads (their forward, input- and
 *                  weight-gradient passes through the device table, a
 *                  layer's worth at each size fitted as a whole:
 *                  plan_hwfit.h), the rate a GEMM approaches as its sides
 *                  grow: the device's peak (sgemm's rates without the
 *                  device measurements);
 *   gemm_eff_max   1 (the peak is the measured rate itself);
 *   gemm_dim_half  fitted with it (how a GEMM's sides lower its rate);
 *   misaligned_factor  the rate of sgemm 1023^3 over the model's at 1024^3
 *                  (at most 1);
 *   act_*_s, glu_*_s  the executor's GELU and SwiGLU, forward and backward,
 *                  per element: the compute floors of the activation kernels;
 *   attn_*_flops   the executor's attention core (products and softmax) at
 *                  its median rate, forward and backward;
 *   hbm_bps        the triad bandwidth with every core busy, shared by the
 *                  device slots (bandwidth per rank when the host is full);
 *   hbm_eff, opt_param_s  from the executor's own step on a reference model
 *                  (exec_bench_ref_step_run): the fraction of hbm_bps that makes the
 *                  planner's compute time of that step the measured one,
 *                  and its optimizer phase per parameter (without it: the
 *                  norm kernels' bytes over their time, and the optimizer
 *                  kernels' time per parameter);
 *   mem_bytes      physical memory / device slots;
 *   flash_eff      1, unused: the smdplan framework runs no fused attention
 *                  kernel on the CPU device (plan_framework.c).
 * and the links between ranks, from the transport bench:
 *   intra_busbw_bps  B of the fit time = a + 2(n-1)/n S / B to every
 *                    all-reduce measured (least squares in relative error),
 *                    the planner's ring model (plan_hw.c);
 *   intra_latency_s  the median all-reduce time at <= 1 KiB (the catalog's
 *                    definition: nccl-tests' small-message time);
 *   nvlink_bps       the send/recv bandwidth fitted the same way, divided
 *                    by the fraction of a link a send reaches in the
 *                    planner (PLAN__P2P_PEAK_EFF, plan_int.h), so the planner's
 *                    point-to-point time uses the measured bandwidth;
 *   net_*            a single host has no network: the intra-host figures,
 *                    so the entry is complete (say so in _note); plans of
 *                    more than one node of this type mean nothing;
 *   intra_curve      the all-reduce busbw at each size over its largest
 *                    (a curve of the catalog, for the record).
 * A GPU host's device is measured through the executor's cuda device
 * (exec_bench_gpu_run; its figures: plan_host_gpu_fit_run); the links
 * between its GPUs are the catalog's instance type of that GPU, not
 * measured here.
 *
 * Pure computation on the measurements (planner/plan_bench.h) and values
 * the caller passes (names, GPU count, memory, the catalog): no files, no
 * host queries. Units: bytes, seconds, FLOP/s, bytes per second.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/text.h"
#include "planner/plan_hwfit.h"
#include "planner/plan_int.h"

/* A CPU entry's notes are cut at this many bytes (less the NUL), as
 * smdplan bench has always written them; a GPU's at PLAN_HOST_NOTE_MAX. */
#define CPU_NOTE_MAX 1000
/* The intra-host time a GPU entry without a catalog instance type of its
 * GPU stands in with (a placeholder, said in its note): 10 us. */
#define GPU_PLACEHOLDER_LATENCY_S 1e-5
/* The smallest curve efficiency written: a size whose busbw is not
 * positive is left out, and the curve never reaches 0. */
#define CURVE_EFF_MIN 1e-6


void plan_bench_steadiness(const plan_bench_cpu *b, char *buf, size_t n)
{
    if (!(b->spread_median > 0) && !(b->load_start >= 0)) {
        text_setf(buf, n, "spread and load not recorded (figures from a record)");
        return;
    }
    char load[96] = "";
    if (b->load_start >= 0)
        text_setf(load, sizeof load, "; 1-minute load %.2f at the start, %.2f at the end, %d cores",
                  b->load_start, b->load_end, b->cores);
    text_setf(buf, n, "measurements' spread (interquartile range over the median) %.1f %% median, "
              "%.1f %% worst%s%s", 100 * b->spread_median, 100 * b->spread_worst, load,
              plan_bench_busy(b) ? ": a busy host" : "");
}

/* out emptied: no device figures, no instance, no links measured. */
static void entry_reset(plan_host_entry *out)
{
    memset(out, 0, sizeof *out);
    out->allreduce = out->p2p = (plan_link_fit){NAN, NAN, NAN, 0, 0};
}

/* The device of an entry: its name, values and the fit they came from. */
static void entry_device(plan_host_entry *out, const char *gpu_name, const plan_gpu *g,
                         const plan_dev_fit *d)
{
    snprintf(out->gpu_name, sizeof out->gpu_name, "%s", gpu_name);
    out->gpu = *g;
    out->fit = *d;
}

int plan_host_cpu_device(const plan_bench_cpu *cpu, int T, const char *gpu_name,
                         plan_host_entry *out, st_err *err)
{
    entry_reset(out);
    plan_host_cpu_fit f;
    int rc = plan_host_cpu_fit_run(cpu, T, &f, err);
    if (rc != ST_OK)
        return rc;
    const plan_dev_fit *d = &f.d;
    entry_device(out, gpu_name, &f.g, d);
    out->slots = f.slots;
    text_setf(out->gpu_source, sizeof out->gpu_source,
              "smdplan bench on %.40s: %d thread%s per rank, "
              "sgemm fit over %d shapes (rms %.1f%%), triad %.1f GB/s over %d slots", cpu->host, T,
              T == 1 ? "" : "s", d->gemm.used, 100 * d->gemm.rms_log_err,
              plan_bench_full_triad(cpu) / 1e9, f.slots);
    char steady[PLAN_BENCH_STEADY_MAX];
    plan_bench_steadiness(cpu, steady, sizeof steady);
    text_setf(out->gpu_note, CPU_NOTE_MAX,
              "CPU device of %s (%s; %s; %s). peak_flops: asymptote of the GEMM model fitted to "
              "%s at %d thread%s (worst shape %.1f%% off); gemm_eff_max 1: the peak is the "
              "measured rate; misaligned_factor: sgemm 1023^3 against the model at 1024^3; "
              "hbm_bps: STREAM triad with every core busy / %d slots; hbm_eff: from %s; act_*_s, "
              "glu_*_s: the executor's GELU and SwiGLU per element; opt_param_s: its optimizer "
              "step per parameter; attn_*_flops: its attention core's median rate; "
              "flash_eff unused (no fused attention on the CPU device).",
              cpu->host, cpu->cpu_model[0] ? cpu->cpu_model : "CPU model unknown", cpu->blas,
              steady,
              d->device_gemms ? "the executor's linears (forward, input and weight gradients)"
                              : "cblas_sgemm rates",
              T, T == 1 ? "" : "s", d->gemm.max_abs_err_pct, f.slots, f.hbm_how);
    return ST_OK;
}

int plan_host_cpu_instance(const plan_bench_cpu *cpu, const plan_bench_comm *comm,
                           const char *instance_name, const char *curve_name,
                           plan_host_entry *out, st_err *err)
{
    plan_link_fit ar = plan_link_fit_run(comm, "allreduce");
    plan_link_fit p2p = plan_link_fit_run(comm, "sendrecv");
    if (!(ar.bw_bps > 0) || !(ar.small_s > 0) || !(p2p.bw_bps > 0))
        return ST_RAISE(err, ST_EINVAL, "bench comm: the all-reduce and send/recv measurements "
                        "give no bandwidth or small-message time (measure with --ops including "
                        "allreduce and sendrecv, from 8 B)");
    int T = out->fit.threads, slots = out->slots;
    out->allreduce = ar;
    out->p2p = p2p;
    /* one curve for the host, intra and net: MPI does not depend on the
     * BLAS threads */
    plan_curve *cv = &out->intra_curve;
    memset(cv, 0, sizeof *cv);
    snprintf(cv->name, sizeof cv->name, "%s", curve_name);
    for (int i = 0; i < comm->n && cv->n < PLAN_CURVE_MAX; i++) {
        const plan_bench_coll *v = &comm->v[i];
        if (strcmp(v->op, "allreduce") || !(v->busbw_bps > 0))
            continue;
        cv->log2_bytes[cv->n] = log2(v->bytes);
        cv->eff[cv->n++] = fmax(CURVE_EFF_MIN, v->busbw_bps / ar.max_busbw_bps);
    }
    text_setf(cv->source, sizeof cv->source, "smdplan bench comm on %.40s: %s all-reduce busbw "
              "over its largest (%.2f GB/s), %d ranks", comm->host, comm->transport,
              ar.max_busbw_bps / 1e9, comm->ranks);
    out->net_curve = *cv;

    plan_instance *in = &out->instance;
    memset(in, 0, sizeof *in);
    in->gpus_per_node = slots;
    in->nvlink_bps = p2p.bw_bps / PLAN__P2P_PEAK_EFF;
    in->nvswitch = 1;
    in->intra_busbw_bps = ar.bw_bps;
    in->intra_latency_s = ar.small_s;
    in->net_bps = p2p.bw_bps * slots;
    in->net_latency_s = ar.small_s;
    in->net_ring_eff = in->net_tree_eff = 1.0;
    in->host_mem_bytes = cpu->mem_bytes;
    snprintf(out->instance_name, sizeof out->instance_name, "%s", instance_name);
    text_setf(out->instance_source, sizeof out->instance_source,
              "smdplan bench on %.40s: %d cores / "
              "%d thread%s per rank; %s between %d ranks", cpu->host, cpu->cores, T,
              T == 1 ? "" : "s", comm->transport, comm->ranks);
    text_setf(out->instance_note, CPU_NOTE_MAX,
              "intra_busbw_bps: B of t = a + 2(n-1)/n S / B fitted to every %s all-reduce "
              "measured (a = %.2f us); intra_latency_s: median all-reduce time at <= 1 KiB; "
              "nvlink_bps: send/recv bandwidth %.2f GB/s fitted the same way / %.2f (the "
              "planner's point-to-point efficiency). A single host has no network: net_* repeat "
              "the intra-host figures; plans of several nodes of this type mean nothing.",
              comm->transport, 1e6 * ar.lat_s, p2p.bw_bps / 1e9, PLAN__P2P_PEAK_EFF);
    out->has_instance = 1;
    return ST_OK;
}

int plan_host_gpu_device(const plan_bench_cpu *b, const plan_catalog *cat, int gpu_index,
                         const char *gpu_name, plan_host_entry *out, st_err *err)
{
    entry_reset(out);
    /* the catalog's GPU of this device: its datasheet peak stays the peak
     * (MFU is against it), the measured asymptote its fraction */
    const plan_gpu *ref = gpu_index >= 0 ? &cat->gpus[gpu_index] : NULL;
    plan_host_gpu_fit f;
    int rc = plan_host_gpu_fit_run(b, ref, &f, err);
    if (rc != ST_OK)
        return rc;
    const plan_dev_fit *d = &f.d;
    entry_device(out, gpu_name, &f.g, d);
    text_setf(out->gpu_source, sizeof out->gpu_source, "smdplan bench gpu on %.40s: %.80s", b->host,
              b->cpu_model);
    char steady[PLAN_BENCH_STEADY_MAX];
    plan_bench_steadiness(b, steady, sizeof steady);
    text_setf(out->gpu_note, sizeof out->gpu_note,
              "The executor's %s device on %s (%s; %s). peak_flops: %s; gemm_eff_max: the "
              "asymptote of the GEMM model fitted to the executor's linears (forward, input and "
              "weight gradients, a layer's worth at each of %d groups; rms %.1f%%, worst group "
              "%.1f%%) "
              "over that peak; hbm_bps: a device-to-device copy, bytes read and written; hbm_eff: "
              "from %s; flash2_fwd_eff, flash2_bwd_eff, flash_score_*_s, flash_row_*_s: the fused "
              "attention's time per direction as its products' work as the planner counts it at "
              "a rate, plus a time per score and per score row, least squares over the shapes "
              "(flash_eff: the two directions' rates together); attn_row_*_s and "
              "attn_elem_*_s: the plain attention core's time beyond the planner's terms per score "
              "row (its softmax row kernels) and per row and head element (layout copies, short "
              "products), least squares over the shapes; act_*_s, glu_*_s: "
              "GELU and SwiGLU per element; "
              "opt_param_s: the executor's optimizer (the gradients' squares and AdamW) per "
              "parameter. Measured, not fitted to runs.",
              b->device, b->host, b->cpu_model, steady,
              ref ? "the datasheet peak of the catalog's GPU of this device"
                  : "the measured asymptote (no catalog GPU matches this device)",
              d->gemm.groups, 100 * d->gemm.rms_log_err, d->gemm.max_abs_err_pct, f.hbm_how);
    return ST_OK;
}

int plan_host_gpu_instance(const plan_bench_cpu *b, const plan_catalog *cat, int gpu_index,
                           int ngpu, double host_mem_bytes, const char *instance_name,
                           plan_host_entry *out, st_err *err)
{
    /* the links between the GPUs are the catalog's instance of this GPU
     * where there is one (not measured: NCCL between the GPUs is smdplan
     * bench comm --transport nccl) */
    const plan_instance *ri = NULL;
    for (int i = 0; gpu_index >= 0 && i < cat->ninstances && !ri; i++)
        if (cat->instances[i].gpu_index == gpu_index)
            ri = &cat->instances[i];
    const plan_curve *ci = ri ? &cat->curves[ri->intra_curve_index]
                           : cat->ncurves ? &cat->curves[0]
                                          : NULL;
    const plan_curve *cn = ri ? &cat->curves[ri->net_curve_index] : ci;
    if (!ci)
        return ST_RAISE(err, ST_EINVAL, "bench gpu: the catalog has no collective curve to name");
    double hbm = out->gpu.hbm_bps;
    plan_instance *in = &out->instance;
    memset(in, 0, sizeof *in);
    in->gpus_per_node = ngpu > 0 ? ngpu : 1;
    in->nvlink_bps = ri ? ri->nvlink_bps : hbm;
    in->nvswitch = ri ? ri->nvswitch : 1;
    in->intra_busbw_bps = ri ? ri->intra_busbw_bps : hbm;
    in->intra_latency_s = ri ? ri->intra_latency_s : GPU_PLACEHOLDER_LATENCY_S;
    in->net_bps = ri ? ri->net_bps : hbm;
    in->net_latency_s = ri ? ri->net_latency_s : GPU_PLACEHOLDER_LATENCY_S;
    in->net_ring_eff = ri ? ri->net_ring_eff : 1.0;
    in->net_tree_eff = ri ? ri->net_tree_eff : 1.0;
    in->host_mem_bytes = host_mem_bytes;
    in->efa = ri ? ri->efa : 0;
    out->slots = in->gpus_per_node;
    out->intra_curve = *ci;
    out->net_curve = *cn;
    snprintf(out->instance_name, sizeof out->instance_name, "%s", instance_name);
    text_setf(out->instance_source, sizeof out->instance_source,
              "smdplan bench gpu on %.40s: %d GPU%s",
              b->host, ngpu, ngpu == 1 ? "" : "s");
    text_setf(out->instance_note, sizeof out->instance_note,
              "This host's %d GPU%s as CUDA sees them. "
              "The links between them are %s%s, not measured here.", ngpu, ngpu == 1 ? "" : "s",
              ri ? "the catalog's instance type " : "placeholders (the device's own bandwidth)",
              ri ? ri->name : "");
    out->has_instance = 1;
    return ST_OK;
}
