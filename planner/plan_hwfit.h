/*
 * plan_hwfit.h: the catalog's device parameters fitted to measurements of
 * the device itself (smdplan bench), rather than to published training
 * runs (plan_calibrate.h).
 *
 * The planner times a GEMM of m x n x k on a device as (plan_hw.c)
 *     peak x gemm_eff_max x prod_{d in m, n, k} d / (d + gemm_dim_half)
 * (times misaligned_factor when a side is not a multiple of 8). Given
 * measured rates of GEMMs of several shapes on one device, the fit below
 * finds the asymptote A = peak x gemm_eff_max and gemm_dim_half that make
 * this model closest to them in log(time) of each group of samples (every
 * group, or every ungrouped shape, weighs the same in relative terms): a
 * group is what a step is made of, so its total is what the planner must
 * get right. Pure computation, no allocation.
 */
#ifndef SMD_PLAN_HWFIT_H
#define SMD_PLAN_HWFIT_H

#include "common/st.h"
#include "planner/plan.h"
#include "planner/plan_bench.h"

/* One measured GEMM: sides and achieved FLOP/s. Samples with the same
 * group > 0 are the GEMMs of one unit of work (a transformer layer's
 * linears and attention at one size): the fit matches their total time, not
 * each one's; group 0 is a sample of its own. */
typedef struct plan_gemm_sample {
    double m, n, k;
    double flops;
    int group;
} plan_gemm_sample;

typedef struct plan_gemm_fit {
    double asymptote_flops;      /* A: the rate as every side grows without bound */
    double dim_half;             /* gemm_dim_half */
    double rms_log_err;          /* root mean square over groups of log(model / measured) */
    double max_abs_err_pct;      /* worst group's |model - measured| / measured, percent */
    int used;                    /* samples fitted (sides multiples of 8) */
    int groups;                  /* groups (an ungrouped sample counts as one) */
} plan_gemm_fit;

/* Largest dim_half the fit considers, elements. */
#define PLAN_GEMM_DIM_HALF_MAX 16384.0

/* Fit A and dim_half to n samples; samples with a side that is not a
 * multiple of 8 are left out (misaligned_factor covers them). ST_EINVAL
 * with fewer than two usable groups or a non-positive value. */
int plan_gemm_fit_run(const plan_gemm_sample *s, int n, plan_gemm_fit *out, st_err *err);

/* The model's rate for one shape under a fit (aligned sides). */
double plan_gemm_fit_rate(const plan_gemm_fit *f, double m, double n, double k);

/* ---- rates measured on a device, applied to its catalog GPU ----
 * A measured-rates file (data/measured/, named by a catalog GPU's
 * "measured") gives what one device reached: GEMMs by shape, fused
 * attention per kernel generation and direction, a device-to-device copy.
 * plan_gpu_measured turns them into the GPU's model:
 *   GEMMs: the model above fitted to the shapes (each shape a group of its
 *     own), leaving out calls at the harness's per-call floor: a call within
 *     PLAN_MEASURED_FLOOR_RATIO of the shortest measured one times the host's
 *     dispatch of a call, not the GEMM (the H100 file's four smallest
 *     shapes, 4.3 to 17.2 GFLOP, all took 26-30 us). gemm_ceiling becomes
 *     the asymptote over the peak (what no fitted efficiency exceeds) and
 *     gemm_dim_half the fitted one (the chip's, no longer fitted to runs);
 *   attention: forward efficiency = forward FLOP/s over the peak; backward
 *     from the forward-and-backward time less the forward one, at 2.5x the
 *     forward FLOPs (the planner's count, Dao 2023);
 *   copy: kept with the datasheet bandwidth of the memory it was measured
 *     on (plan_gpu_copy_eff). */
#define PLAN_MEASURED_GEMM_MAX 128
#define PLAN_MEASURED_FLOOR_RATIO 1.5

typedef struct plan_measured {
    plan_gemm_sample gemm[PLAN_MEASURED_GEMM_MAX]; /* bf16, group 0 */
    int ngemm;
    double flash2_fwd_flops, flash2_fwd_bwd_flops; /* FLOP/s; 0: not measured */
    double cudnn_fwd_flops, cudnn_fwd_bwd_flops;
    double smdplan_fwd_flops, smdplan_fwd_bwd_flops; /* this executor's own fused kernels */
    /* this executor's plain attention core beyond the planner's terms, per
     * score row and per row and head element (plan_bench_attn_rows) */
    double smdplan_row_fwd_s, smdplan_row_bwd_s, smdplan_elem_fwd_s, smdplan_elem_bwd_s;
    double copy_bps;             /* bytes read + written per second; 0: not measured */
    double hbm_bps;              /* the measured device's datasheet HBM bandwidth */
} plan_measured;

/* Apply m to g (whose peak_flops must be set). ST_EINVAL, naming the
 * value, when a rate is not positive or too few GEMM shapes remain. */
int plan_gpu_measured(plan_gpu *g, const plan_measured *m, st_err *err);

/* The fraction of g's HBM bandwidth a device-to-device copy measured on
 * memory of the same datasheet bandwidth reached; 0 when none was. */
double plan_gpu_copy_eff(const plan_gpu *g);

/* ---- the executor's own step on a reference model (smdplan bench) ----
 * smdplan bench times the executor's kernels one by one; a training step
 * also zeroes its gradients, copies activations between layers, computes
 * the loss and reduces the gradient norm, work the planner's elementwise
 * bytes stand for only in sum. So the executor itself runs a reference
 * model on one rank (transport "self", no MPI) and its median compute and
 * optimizer phases are kept: hbm_eff is then set so that the planner's
 * compute time of that model, with every other figure of the entry, equals
 * the executor's, and opt_param_s is its optimizer phase per parameter.
 * The reference is fixed here (a GPT of PLAN_BENCH_REF_* shape, one rank,
 * PLAN_BENCH_REF_MICROBATCHES microbatches of one sequence), apart from
 * every model the benchmarks validate against. */
#define PLAN_BENCH_REF_LAYERS 2
#define PLAN_BENCH_REF_HIDDEN 384
#define PLAN_BENCH_REF_HEADS 6
#define PLAN_BENCH_REF_SEQ 128
#define PLAN_BENCH_REF_VOCAB 512
#define PLAN_BENCH_REF_MICROBATCHES 8
#define PLAN_BENCH_REF_STEPS 6

/* The reference model and its layout (the smdplan framework, fp32). */
void plan_bench_ref_model(plan_model *m);
void plan_bench_ref_layout(plan_layout *l);

/* hbm_eff in (0, 1] such that the planner's compute time of the reference
 * step on device g (one rank) is measured_s, the executor's: bisection on
 * a time that falls as hbm_eff grows. 1 when even the triad's full rate
 * leaves the planner slower; *how says which (static text). */
double plan_hbm_eff_fit(plan_gpu g, double measured_s, const char **how);

/* ---- what a host's entry takes from the measurements ---- */

/* The catalog's small-message latency: nccl-tests at <= 1 KiB. */
#define PLAN_SMALL_MESSAGE_BYTES 1024.0

typedef struct plan_link_fit {
    double bw_bps;               /* B of t = a + f S / B */
    double lat_s;                /* a */
    double small_s;              /* median time at <= 1 KiB */
    double max_busbw_bps;
    int n;
} plan_link_fit;

/* Weighted least squares of t = a + f S / B over the rows of op (weights
 * 1/t^2: relative error), with f its bus factor (plan_bench_busbw_factor);
 * NAN figures where too few rows. */
plan_link_fit plan_link_fit_run(const plan_bench_comm *c, const char *op);

typedef struct plan_dev_fit {
    int threads;
    plan_gemm_fit gemm;
    int device_gemms;            /* 1: fitted to the executor's own linears */
    double misaligned;           /* rate(1023^3) / model(1024^3), at most 1; NAN: not measured */
    double triad_bps;            /* at this thread count */
    /* the executor's elementwise kernels, seconds per element; NAN: not measured */
    double act_fwd_s, act_bwd_s, glu_fwd_s, glu_bwd_s, opt_param_s;
    double norm_s;               /* a layer's norm and residual kernels, forward and backward,
                                  * per token x hidden element */
    double attn_fwd_flops, attn_bwd_flops; /* the attention core's median rates */
    int ok;
} plan_dev_fit;

/* The planner's bytes of a layer's norm and residual kernels per token x
 * hidden element: 11 h-sized passes forward (ELEM_H_GPT), twice that
 * backward (ELEM_BWD_OVER_FWD; planner/plan_eval.c), 4 bytes each in fp32. */
#define PLAN_NORM_BYTES_PER_ELEM (4.0 * 11.0 * 3.0)

/* The device at threads: the GEMM model fitted to the executor's own
 * linears when measured (what it runs), else to sgemm; the kernels' floors
 * and the attention core's median rates. ok 0 (err set) when the GEMM fit
 * fails. */
plan_dev_fit plan_dev_fit_run(const plan_bench_cpu *b, int threads, st_err *err);

/* An elementwise measurement's time per element at threads; NAN: none. */
double plan_bench_elem_s(const plan_bench_cpu *b, int threads, const char *op);

/* The triad with every core busy: the measurement at the most threads. */
double plan_bench_full_triad(const plan_bench_cpu *b);

/* The fused attention's time in one direction (bwd: the backward) as the
 * planner counts its work, over the shapes measured: work / (peak x eff)
 * + score_s per score of the causal half + row_s per score row, least
 * squares in relative error with every term at least 0 and eff at most 1
 * (plan_hwfit_host.c). ST_OK, or ST_ENOENT (eff 0) when that direction was
 * not measured. */
int plan_bench_flash_fit(const plan_bench_cpu *b, double peak, int bwd, double *eff,
                         double *score_s, double *row_s);

/* The plain attention's time beyond the planner's terms on the entry g
 * (forward, or backward with bwd), as row_s per score row plus elem_s per
 * score row and head element (both at least 0: a least-squares fit over
 * the shapes measured; elem_s 0 where one head size was measured); ST_OK,
 * or ST_ENOENT with both NAN when no plain core was measured
 * (plan_hwfit_host.c). */
int plan_bench_attn_rows(const plan_bench_cpu *b, const plan_gpu *g, int bwd, double *row_s,
                         double *elem_s);

/* A host CPU's device entry at T threads per rank, each of cores / T
 * slots a device: the GEMM model and floors at T (plan_dev_fit_run); the
 * triad with every core busy shared by the slots; hbm_eff from the norm
 * and residual kernels' bytes as the planner counts them (at most 1), or,
 * when the executor's reference step was measured at T, fitted to it
 * (plan_hbm_eff_fit), with its optimizer phase per parameter as
 * opt_param_s. g holds the entry's figures (a floor not measured is NAN);
 * ST_EINVAL when T does not fit the cores or the GEMM fit fails. */
typedef struct plan_host_cpu_fit {
    plan_dev_fit d;              /* the device at T, opt_param_s as in g */
    int slots;                   /* cores / T */
    plan_gpu g;                  /* the entry: peak, GEMM model, hbm, floors */
    const char *hbm_how;         /* where hbm_eff came from (static text) */
} plan_host_cpu_fit;

int plan_host_cpu_fit_run(const plan_bench_cpu *cpu, int T, plan_host_cpu_fit *out, st_err *err);

/* A GPU's device entry from its bench (threads {1}): the GEMM model's
 * asymptote as a fraction of ref's datasheet peak (ref: the catalog's GPU
 * of this device, NULL: none, the asymptote is the peak; at most 1), the
 * device copy as hbm_bps, hbm_eff from the norm and residual kernels,
 * flash_eff from the fused attention, the plain attention's row times and
 * the kernels' floors (0 where not measured); misaligned_factor and the
 * alignment figures are ref's. ST_EINVAL when the GEMM fit fails or no
 * copy was measured. */
typedef struct plan_host_gpu_fit {
    plan_dev_fit d;
    plan_gpu g;                  /* the entry's figures (no name) */
    char hbm_how[160];           /* where hbm_eff came from */
} plan_host_gpu_fit;

int plan_host_gpu_fit_run(const plan_bench_cpu *b, const plan_gpu *ref, plan_host_gpu_fit *out,
                          st_err *err);

/* ---- a host's catalog entry: its values and texts (plan_host_entry.c) ----
 * What smdplan bench writes for a host: its device, from the fits above,
 * and its instance type with the links and curves, each with the source
 * and note texts the catalog keeps. Made from the measurements and from
 * what the caller knows of the host (the names, its GPUs and memory, the
 * catalog), passed in as values; data/ writes it. */
#define PLAN_HOST_NAME_MAX 64
#define PLAN_HOST_NOTE_MAX 1200

typedef struct plan_host_entry {
    char gpu_name[PLAN_HOST_NAME_MAX];  /* the device entry */
    plan_gpu gpu;                /* its figures (no name) */
    plan_dev_fit fit;            /* the device fit they come from (a CPU: at T threads,
                                  * opt_param_s as in gpu) */
    int slots;                   /* devices per node (a CPU: cores / T; a GPU host: its
                                  * GPUs, with the instance) */
    char gpu_source[PLAN_SOURCE_MAX];
    char gpu_note[PLAN_HOST_NOTE_MAX];
    int has_instance;            /* 1: the instance type below is made */
    char instance_name[PLAN_HOST_NAME_MAX];
    plan_instance instance;      /* its links and node figures (no name) */
    plan_curve intra_curve, net_curve; /* its curves (a CPU host: one curve, twice) */
    char instance_source[PLAN_SOURCE_MAX];
    char instance_note[PLAN_HOST_NOTE_MAX];
    plan_link_fit allreduce, p2p; /* a CPU host's links as measured; NAN: not measured */
} plan_host_entry;

/* A CPU host's device gpu_name at T threads per rank (plan_host_cpu_fit_run)
 * into out (reset first; no instance, the link fits NAN), its source
 * naming the host, the fit and the triad, its note every figure's origin
 * and how steady the measurements were. The fit's errors. */
int plan_host_cpu_device(const plan_bench_cpu *cpu, int T, const char *gpu_name,
                         plan_host_entry *out, st_err *err);

/* The instance type instance_name of the device out holds (from
 * plan_host_cpu_device on cpu), from comm, the transport measured between
 * its ranks: out->slots devices; intra_busbw_bps and intra_latency_s the
 * all-reduce fit's bandwidth and small-message time (plan_link_fit_run);
 * nvlink_bps the send/recv fit's bandwidth over the planner's
 * point-to-point efficiency, so that the planner's send time is the one
 * measured; the network the intra-host figures again (a single host has
 * none, as the note says); the node's memory cpu's; both curves curve_name,
 * the all-reduce busbw at each size over its largest. ST_EINVAL when the
 * all-reduce or send/recv rows give no bandwidth or small-message time
 * (out's instance then not made). */
int plan_host_cpu_instance(const plan_bench_cpu *cpu, const plan_bench_comm *comm,
                           const char *instance_name, const char *curve_name,
                           plan_host_entry *out, st_err *err);

/* A GPU host's device gpu_name from its bench b (plan_host_gpu_fit_run,
 * ref the GPU gpu_index of cat, the catalog's GPU of this device; -1:
 * none) into out (reset first; no instance, the link fits NAN), with its
 * source and note. The fit's errors. */
int plan_host_gpu_device(const plan_bench_cpu *b, const plan_catalog *cat, int gpu_index,
                         const char *gpu_name, plan_host_entry *out, st_err *err);

/* The instance type instance_name of the GPU device out holds: ngpu GPUs
 * (as CUDA counts them; at least 1 in the entry), host_mem_bytes of host
 * memory (0: unknown), and the links, curves and EFA of cat's first
 * instance type of GPU gpu_index, not measured here; without one, the
 * device's own bandwidth stands for every link (a placeholder, as the note
 * says) and cat's first curve for both curves. ST_EINVAL when cat has no
 * curve to name. */
int plan_host_gpu_instance(const plan_bench_cpu *b, const plan_catalog *cat, int gpu_index,
                           int ngpu, double host_mem_bytes, const char *instance_name,
                           plan_host_entry *out, st_err *err);

#endif
