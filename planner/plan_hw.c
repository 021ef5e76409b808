/*
 * plan_hw.c: what one kernel or one collective costs on a cluster's hardware.
 *
 * Compute. A GEMM of m x k by k x n runs at
 *     peak * gemm_eff_max * prod_{d in m,n,k} d / (d + gemm_dim_half)
 *          * (misaligned_factor if any of m, n, k is not a multiple of 8,
 *             else align_partial_factor if any is not a multiple of
 *             gemm_align_bytes / 2)
 * and never faster than its operands stream through HBM (roofline, Williams
 * et al. 2009). The per-dimension factor is the usual saturation of tensor-
 * core throughput with tile occupancy (small dims leave SMs idle and waste
 * tile padding); the alignment factors follow NVIDIA's "Matrix Multiplication
 * Background User's Guide", Tensor Core Requirements: fp16 tensor cores want
 * dims that are multiples of 16 bytes (8 elements), "or 128 bytes on A100"
 * (64 elements). BigScience measured what the second tier costs: hidden
 * 14400 (1800 per rank at TP 8) ran at 94 TFLOP/s where 13824 (1728 = 27 x
 * 64) ran at 120 (bigscience tr11-176B-ml chronicles-prequel.md, "tile and
 * wave quantization"). gemm_eff_max, gemm_dim_half, misaligned_factor and
 * align_partial_factor are per GPU chip in the catalog; gemm_eff_max (and
 * fp8_gemm_eff for FP8 GEMMs on the FP8 peak) and hbm_eff are the
 * efficiencies in force on the cluster (plan_cluster.eff): fitted per
 * (framework, chip) by smdplan calibrate, else the chip's own.
 * Elementwise kernels run at hbm_eff of HBM bandwidth.
 *
 * Communication. Alpha-beta costs (Hockney 1994) with bus bandwidths as
 * nccl-tests defines them (PERFORMANCE.md: an all-reduce moves 2(n-1)/n of
 * the buffer through each rank's links). A group inside one node runs at the
 * node's measured all-reduce bus bandwidth; a group across nodes is
 * hierarchical (reduce-scatter inside the node, all-reduce across nodes of
 * the 1/ranks_per_node shard, all-gather inside), and NCCL pipelines those
 * phases over chunks, so the slower phase sets the time. The network share of
 * a group is ranks_per_node / gpus_per_node of the node's bandwidth, since the
 * node's other GPUs run their own groups' collectives at the same time.
 * Bandwidth falls off for small messages along the catalog's efficiency
 * curves, derived from published nccl-tests runs.
 */
#include "planner/plan_int.h"

#include <math.h>
#include <stdint.h>

/* Per-dimension occupancy factor d / (d + half). */
static double dim_eff(double d, double half)
{
    return d / (d + half);
}

/* d a multiple of elems? The dims are whole numbers far below 2^53, so the
 * quotient is exact when it divides (no fmod in the search's inner loop). */
static int aligned(double d, double elems)
{
    double q = d / elems;
    return q == (double)(int64_t)q;
}

double plan__gemm_s(const plan_cluster *c, double m, double n, double k, double batch)
{
    return plan__gemm_prec_s(c, m, n, k, batch, 0);
}

double plan__gemm_prec_s(const plan_cluster *c, double m, double n, double k, double batch, int fp8)
{
    const plan_gpu *g = c->gpu;
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
        return 0.0;
    /* FP8 GEMMs (Transformer Engine) run on the FP8 tensor-core peak at
     * their own fitted fraction of it; operands are 1 byte. */
    fp8 = fp8 && g->fp8_peak_flops > 0;
    double peak = fp8 ? g->fp8_peak_flops : g->peak_flops;
    double e_max = fp8 ? c->eff.fp8_gemm_eff : c->eff.gemm_eff_max;
    double eff = e_max * dim_eff(m, g->gemm_dim_half) * dim_eff(n, g->gemm_dim_half) *
                 dim_eff(k, g->gemm_dim_half);
    double best = g->gemm_align_bytes / PLAN_BYTES_HALF; /* elements */
    if (!(aligned(m, 8.0) && aligned(n, 8.0) && aligned(k, 8.0)))
        eff *= g->misaligned_factor;
    else if (best > 8.0 && !(aligned(m, best) && aligned(n, best) && aligned(k, best)))
        eff *= g->align_partial_factor;
    double flops = 2.0 * m * n * k * batch;
    double t_math = flops / (peak * eff);
    double bytes = (fp8 ? 1.0 : PLAN_BYTES_HALF) * (m * k + k * n) * batch +
                   PLAN_BYTES_HALF * m * n * batch;
    double t_mem = bytes / (g->hbm_bps * c->eff.hbm_eff);
    return t_math > t_mem ? t_math : t_mem;
}

double plan__mem_s(const plan_cluster *c, double bytes)
{
    return bytes / (c->gpu->hbm_bps * c->eff.hbm_eff);
}

static int size_of_dim(const plan_layout *l, char d)
{
    return d == 'T' ? l->tp : d == 'C' ? l->cp : d == 'P' ? l->pp : l->dp;
}

int plan__stride_of(const plan_layout *l, char dim)
{
    /* The placement string lists D, P, T from outermost to innermost;
     * context parallelism sits just outside T. */
    int stride = 1;
    for (int i = 2; i >= 0; i--) {
        char d = l->placement[i];
        if (d == dim)
            return stride;
        stride *= size_of_dim(l, d);
        if (d == 'T') {
            if (dim == 'C')
                return stride;
            stride *= l->cp;
        }
    }
    return stride;
}

int plan__span_of(const plan_layout *l, const plan_cluster *c, char dim, plan__span *out)
{
    int n = dim == 'T' ? l->tp : dim == 'C' ? l->cp : dim == 'P' ? l->pp : l->dp;
    int s = plan__stride_of(l, dim);
    int g = c->inst->gpus_per_node;
    if (n <= 1) {
        out->ranks_per_node = 1;
        out->nodes = 1;
        return 0;
    }
    if ((long)s * n <= g) {
        if (g % (s * n) != 0)
            return -1;
        out->ranks_per_node = n;
        out->nodes = 1;
    } else if (s >= g) {
        if (s % g != 0)
            return -1;
        out->ranks_per_node = 1;
        out->nodes = n;
    } else {
        if (g % s != 0 || n % (g / s) != 0)
            return -1;
        out->ranks_per_node = g / s;
        out->nodes = n / (g / s);
    }
    return 0;
}

/* One ring phase inside a node: traffic factor f (2(n-1)/n for all-reduce,
 * (n-1)/n for all-gather) of bytes at the intra-node bus bandwidth. */
static double intra_s(const plan_cluster *c, int n, double bytes, double factor)
{
    if (n <= 1)
        return 0.0;
    double eff = plan_curve_eval(c->intra_curve, bytes);
    return c->inst->intra_latency_s + factor * bytes / (c->inst->intra_busbw_bps * eff);
}

static double inter_s(const plan_cluster *c, const plan__span *sp, double bytes, double factor)
{
    if (sp->nodes <= 1)
        return 0.0;
    double shard = bytes / sp->ranks_per_node;
    double share_bps = c->inst->net_bps / c->inst->gpus_per_node; /* per GPU */
    double eff = plan_curve_eval(c->net_curve, bytes);
    return c->inst->net_latency_s + factor * shard / (share_bps * eff);
}

double plan__allreduce_s(const plan_cluster *c, const plan__span *sp, double bytes)
{
    if (bytes <= 0)
        return 0.0;
    int r = sp->ranks_per_node, N = sp->nodes;
    double t_in = intra_s(c, r, bytes, 2.0 * (r - 1) / r);
    double t_out = inter_s(c, sp, bytes, 2.0 * (N - 1) / N);
    return t_in > t_out ? t_in : t_out;
}

double plan__allgather_s(const plan_cluster *c, const plan__span *sp, double bytes)
{
    if (bytes <= 0)
        return 0.0;
    int r = sp->ranks_per_node, N = sp->nodes;
    double t_in = intra_s(c, r, bytes, (double)(r - 1) / r);
    double t_out = inter_s(c, sp, bytes, (double)(N - 1) / N);
    return t_in > t_out ? t_in : t_out;
}

/* A point-to-point send reaches this fraction of the link's line rate for
 * large messages: ib_write_bw at 24 of 25 GB/s on an HDR link (NCCL issue
 * #1048, 2023). The collective curves level off lower because they price
 * the whole all-reduce algorithm; for a send only their shape is used. */
#define P2P_PEAK_EFF 0.96

static double curve_peak(const plan_curve *cv)
{
    double m = 0;
    for (int i = 0; cv && i < cv->n; i++)
        if (cv->eff[i] > m)
            m = cv->eff[i];
    return m > 0 ? m : 1.0;
}

double plan__p2p_eff(const plan_curve *cv, double bytes)
{
    return P2P_PEAK_EFF * plan_curve_eval(cv, bytes) / curve_peak(cv);
}

double plan__p2p_s(const plan_cluster *c, int same_node, double bytes)
{
    if (bytes <= 0)
        return 0.0;
    double eff = plan__p2p_eff(same_node ? c->intra_curve : c->net_curve, bytes);
    if (same_node)
        return c->inst->intra_latency_s + bytes / (c->inst->nvlink_bps * eff);
    return c->inst->net_latency_s + bytes / (c->inst->net_bps / c->inst->gpus_per_node * eff);
}
