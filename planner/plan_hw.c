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
 * Communication: NCCL's own latency and bandwidth model (see coll_s below)
 * with the node's measured bus bandwidths and small-message latencies.
 */
#include "planner/plan_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

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
    double half = c->eff.gemm_dim_half;
    double eff = e_max * dim_eff(m, half) * dim_eff(n, half) * dim_eff(k, half);
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

/* FlashAttention-2 is about twice as fast as FlashAttention (Dao 2023,
 * abstract: "around 2x speedup compared to FlashAttention"). */
#define FLASH1_OVER_FLASH2 0.5
/* FlashAttention-3 is 1.5-2.0x faster than FlashAttention-2 on H100 (Shah et
 * al. 2024, abstract, BF16); the low end. It needs Hopper's wgmma and TMA:
 * on another chip the kernel falls back to FlashAttention-2's. */
#define FLASH3_OVER_FLASH2 1.5

/* A generation's rate: measured per direction where the chip has it
 * (fwd_m, bwd_m), else the one value v for both. */
static double dir_eff(double v, double fwd_m, double bwd_m, double *fwd, double *bwd)
{
    *fwd = fwd_m > 0 ? fwd_m : v;
    *bwd = bwd_m > 0 ? bwd_m : v;
    return *fwd;
}

double plan__attn_fwd_bwd_eff(double fwd, double bwd)
{
    if (!(fwd > 0) || !(bwd > 0))
        return 0.0;
    return (1.0 + PLAN__ATTN_BWD_OVER_FWD) / (1.0 / fwd + PLAN__ATTN_BWD_OVER_FWD / bwd);
}

double plan__attn_eff(const plan_cluster *c, plan_attn a, double *fwd, double *bwd)
{
    const plan_gpu *g = c->gpu;
    /* the executor's own fused kernels measured on this chip: their rates
     * per direction, at the framework's share of them */
    double fbx = c->exec_kernels
                     ? plan__attn_fwd_bwd_eff(g->exec_attn_fwd_eff, g->exec_attn_bwd_eff)
                     : 0.0;
    if (fbx > 0) {
        double sx = fmin(1.0, c->eff.flash_eff / fbx);
        return dir_eff(0, sx * g->exec_attn_fwd_eff, sx * g->exec_attn_bwd_eff, fwd, bwd);
    }
    double f2, b2, s = 1.0; /* FlashAttention-2, the reference generation; the stack's share */
    double fb2 = plan__attn_fwd_bwd_eff(g->flash2_fwd_eff, g->flash2_bwd_eff);
    if (fb2 > 0) {
        s = fmin(1.0, c->eff.flash_eff / fb2);
        f2 = s * g->flash2_fwd_eff;
        b2 = s * g->flash2_bwd_eff;
    } else {
        f2 = b2 = c->eff.flash_eff;
    }
    switch (a) {
    case PLAN_ATTN_FLASH1:
        if (g->flash1_eff > 0)
            return dir_eff(g->flash1_eff, 0, 0, fwd, bwd);
        return dir_eff(0, FLASH1_OVER_FLASH2 * f2, FLASH1_OVER_FLASH2 * b2, fwd, bwd);
    case PLAN_ATTN_FLASH3:
        /* Hopper only (plan_gpu.flash3); elsewhere FlashAttention-2 runs */
        if (!g->flash3)
            return dir_eff(0, f2, b2, fwd, bwd);
        if (g->flash3_eff > 0)
            return dir_eff(g->flash3_eff, 0, 0, fwd, bwd);
        return dir_eff(0, FLASH3_OVER_FLASH2 * f2, FLASH3_OVER_FLASH2 * b2, fwd, bwd);
    case PLAN_ATTN_CUDNN:
        /* cuDNN's fused attention runs FlashAttention-2's algorithm (cuDNN
         * 8.9 release notes, "fused flash attention"); measured where a
         * chip's own rate is known */
        if (g->cudnn_fwd_eff > 0 && g->cudnn_bwd_eff > 0)
            return dir_eff(0, s * g->cudnn_fwd_eff, s * g->cudnn_bwd_eff, fwd, bwd);
        if (g->cudnn_attn_eff > 0)
            return dir_eff(g->cudnn_attn_eff, 0, 0, fwd, bwd);
        return dir_eff(0, f2, b2, fwd, bwd);
    case PLAN_ATTN_FLASH2:
    case PLAN_ATTN_UNFUSED:
    default:
        return dir_eff(0, f2, b2, fwd, bwd);
    }
}

/* NCCL runs each channel of a collective as one CUDA block (NCCL
 * environment variables, NCCL_MIN_NCHANNELS: "increasing the number of
 * channels also increases the number of CUDA blocks NCCL uses ... it uses
 * more CUDA compute resources"); a block occupies an SM for as long as the
 * collective runs, beside the kernels of the compute stream, which have the
 * other SMs meanwhile. */
double plan__comm_sm_frac(const plan_cluster *c)
{
    int sms = c->gpu->sms, ch = c->inst->nccl_channels;
    if (sms <= 0 || ch <= 0)
        return 0.0;
    return ch >= sms ? 1.0 : (double)ch / sms;
}

double plan__mem_s(const plan_cluster *c, double bytes)
{
    return bytes / (c->gpu->hbm_bps * c->eff.hbm_eff);
}

/* Bytes moved per attention-score element by Megatron's unfused path (fused
 * scale-mask-softmax, then attention dropout): forward softmax read/write 4
 * (2-byte scores in, probabilities out), dropout read/write + 1-byte mask
 * 5; backward softmax 6 (the probabilities and their gradient in, the
 * scores' gradient out), dropout 5. Without dropout (a model that has none,
 * or a stack that runs none) the dropout passes do not exist. The two
 * batched products per direction are GEMMs (q k^T and P v forward; dP, dV,
 * dQ, dK backward), their T x T operands through HBM in plan__gemm_s's
 * roofline. */
#define SCORE_BYTES_SOFTMAX_FWD 4.0
#define SCORE_BYTES_SOFTMAX_BWD 6.0
#define SCORE_BYTES_DROPOUT 5.0

void plan__attn_plain_s(const plan_cluster *c, double nb, double sq, double sk, double d,
                        int dropout, double *fwd_s, double *bwd_s)
{
    const plan_gpu *g = c->gpu;
    double scores = nb * sq * sk;
    double mm = plan__gemm_s(c, sq, sk, d, nb) + plan__gemm_s(c, sq, d, sk, nb);
    double drop_b = dropout ? SCORE_BYTES_DROPOUT : 0.0;
    double f = mm + plan__mem_s(c, (SCORE_BYTES_SOFTMAX_FWD + drop_b) * scores);
    double b = 2.0 * mm + plan__mem_s(c, (SCORE_BYTES_SOFTMAX_BWD + drop_b) * scores);
    /* The row kernels (the causal softmax and its gradient, one score row
     * each) cost a measured time per row beyond their bytes, and the layout
     * copies and short-sided products one per row and head element, on a
     * device whose entry has them (attn_row_*_s, attn_elem_*_s: smdplan
     * bench gpu through the executor's kernels, plan_bench_attn_rows); 0
     * elsewhere. */
    double rf = g->attn_row_fwd_s, rb = g->attn_row_bwd_s, ef = g->attn_elem_fwd_s,
           eb = g->attn_elem_bwd_s;
    /* the executor's own kernels on a chip measured with them (its
     * measured-rates file), where the entry itself has none */
    if (c->exec_kernels && !(rf > 0 || rb > 0 || ef > 0 || eb > 0)) {
        rf = g->exec_attn_row_fwd_s;
        rb = g->exec_attn_row_bwd_s;
        ef = g->exec_attn_elem_fwd_s;
        eb = g->exec_attn_elem_bwd_s;
    }
    f += nb * sq * (rf + d * ef);
    b += nb * sq * (rb + d * eb);
    /* a device whose attention core runs below its GEMM model (a CPU:
     * products with the head dimension as a side, a softmax per score;
     * catalog attn_*_flops, measured by smdplan bench) is bounded by its
     * measured rate (roofline, Williams et al. 2009) */
    if (g->attn_fwd_flops > 0)
        f = fmax(f, 4.0 * scores * d / g->attn_fwd_flops);
    if (g->attn_bwd_flops > 0)
        b = fmax(b, 8.0 * scores * d / g->attn_bwd_flops);
    *fwd_s = f;
    *bwd_s = b;
}

int plan_attn_plain_time(const plan_gpu *g, double nb, double sq, double sk, double d,
                         double *fwd_s, double *bwd_s, st_err *err)
{
    if (!g || !(g->hbm_bps > 0) || !(g->peak_flops > 0) || !(g->gemm_eff_max > 0) ||
        !(g->hbm_eff > 0))
        return ST_RAISE(err, ST_EINVAL, "attention time: the GPU entry has no peak, GEMM "
                        "efficiency or memory bandwidth");
    if (!(nb > 0 && sq > 0 && sk > 0 && d > 0))
        return ST_RAISE(err, ST_EINVAL, "attention time: products %g, queries %g, keys %g, "
                        "head %g; allowed: positive", nb, sq, sk, d);
    plan_cluster c;
    memset(&c, 0, sizeof c);
    c.gpu = g;
    c.eff.gemm_eff_max = g->gemm_eff_max;
    c.eff.hbm_eff = g->hbm_eff;
    c.eff.flash_eff = g->flash_eff;
    c.eff.fp8_gemm_eff = g->fp8_gemm_eff > 0 ? g->fp8_gemm_eff : g->gemm_eff_max;
    c.eff.gemm_dim_half = g->gemm_dim_half;
    plan__attn_plain_s(&c, nb, sq, sk, d, 0, fwd_s, bwd_s);
    return ST_OK;
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

int plan_layout_stride(const plan_layout *l, char dim)
{
    return plan__stride_of(l, dim);
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

/* ---- collectives: NCCL's own cost model ----
 * NCCL picks, per call, the algorithm and protocol its model says is
 * fastest (src/graph/tuning.cc): time = latency + bytes / bandwidth, with
 *   ring latency = base[p] + (steps - inter) x intra_hop[p] + inter x net_hop[p]
 *     steps = 2(n - 1) for all-reduce, n - 1 for all-gather / reduce-scatter,
 *     inter = 2(N - 1), resp. N - 1, of them crossing nodes;
 *   tree (all-reduce only) = base[p] + 2((r - 1) intra_hop[p] + log2(N) net_hop[p]);
 *   protocols LL (8 of 16 bytes are data), LL128 (120 of 128) and Simple.
 * The constants below are tuning.cc's (baseLat, hwLat for NVLink and NET,
 * in us). A node's measured small-message all-reduce times (catalog
 * intra_latency_s on one node, net_latency_s on net_latency_nodes nodes:
 * nccl-tests at <= 1 KiB) scale the hop latencies to that hardware: EFA's
 * hops are slower than the InfiniBand tuning.cc assumes.
 * Bandwidth, bytes moved per rank as nccl-tests' PERFORMANCE.md defines bus
 * bandwidth (2(n-1)/n of the buffer for all-reduce, (n-1)/n otherwise):
 *   inside one node: the node's measured bus bandwidth;
 *   a ring across nodes: every GPU's channel crosses the network, so the
 *     group's r GPUs per node drive r / (GPUs per node) of the node's
 *     network, at net_ring_eff of line rate;
 *   a tree all-reduce: reduce inside the node, then each node moves its
 *     1/r shard 2(N-1)/N times across the network (as a hierarchical
 *     all-reduce does), at net_tree_eff; measured two-node all-reduces reach
 *     more than a ring could (p5: 487 GB/s busbw on 400 GB/s nodes), which
 *     only this accounts for.
 * The efficiencies are measured per network (catalog sources: nccl-tests
 * at 1-16 GiB). All-gather and reduce-scatter run on rings. */
enum { PROTO_LL = 0, PROTO_LL128, PROTO_SIMPLE, PROTO__COUNT };
static const double base_ring_us[PROTO__COUNT] = {6.6, 14.0, 8.4};
static const double base_tree_us[PROTO__COUNT] = {6.8, 14.0, 0.0};
static const double nvlink_ring_us[PROTO__COUNT] = {0.6, 1.9, 3.4};
static const double nvlink_tree_us[PROTO__COUNT] = {0.6, 1.25, 28.0};
static const double net_ring_us[PROTO__COUNT] = {2.7, 4.0, 14.0};
static const double net_tree_us[PROTO__COUNT] = {5.0, 8.5, 28.0};
static const double proto_data[PROTO__COUNT] = {0.5, 120.0 / 128.0, 1.0};

/* Scale of this node's NVLink hop latency against tuning.cc's, from the
 * measured small-message (LL ring) all-reduce on one node of g GPUs:
 * 2(g - 1) hops. */
static double intra_scale(const plan_instance *in)
{
    int g = in->gpus_per_node;
    if (g <= 1 || !(in->intra_latency_s > 0))
        return 1.0;
    double hops = 2.0 * (g - 1) * nvlink_ring_us[PROTO_LL];
    return fmax(0.1, (in->intra_latency_s * 1e6 - base_ring_us[PROTO_LL]) / hops);
}

/* The same for the network hop, from the measured small-message all-reduce
 * on N nodes of g GPUs: NCCL ran the faster of an LL ring and an LL tree,
 * so the scale is the larger of the two that reproduce the measurement. */
static double net_scale(const plan_instance *in)
{
    int g = in->gpus_per_node, N = in->net_latency_nodes >= 2 ? in->net_latency_nodes : 2;
    if (!(in->net_latency_s > 0))
        return 1.0;
    double t = in->net_latency_s * 1e6, si = intra_scale(in);
    double n = (double)g * N, inter = 2.0 * (N - 1);
    double ring = (t - base_ring_us[PROTO_LL] - (2.0 * (n - 1) - inter) * nvlink_ring_us[PROTO_LL] * si) /
                  (inter * net_ring_us[PROTO_LL]);
    double tree = (t - base_tree_us[PROTO_LL] - 2.0 * (g - 1) * nvlink_tree_us[PROTO_LL] * si) /
                  (2.0 * log2((double)N) * net_tree_us[PROTO_LL]);
    return fmax(0.1, fmax(ring, tree));
}

/* One GPU's share of its node's network, bytes/s one direction: the node's
 * bandwidth split over its GPUs (they all communicate at once in a layout's
 * collectives), never more than the NIC the GPU reaches (net_gpu_bps). */
static double gpu_net_bps(const plan_instance *in)
{
    double share = in->net_bps / in->gpus_per_node;
    return in->net_gpu_bps > 0 ? fmin(share, in->net_gpu_bps) : share;
}

/* Bandwidth time of a ring of r x N ranks moving factor x bytes per rank. */
static double ring_bw_s(const plan_cluster *c, const plan__span *sp, double bytes, double factor)
{
    const plan_instance *in = c->inst;
    double b = in->intra_busbw_bps;
    if (sp->nodes > 1)
        b = fmin(b, gpu_net_bps(in) * in->net_ring_eff * sp->ranks_per_node);
    return factor * bytes / b;
}

/* Bandwidth time of a tree all-reduce: inside the node at the node's bus
 * bandwidth, across nodes the 1/r shard 2(N-1)/N times; the slower phase
 * sets the pace (NCCL pipelines them). */
static double tree_bw_s(const plan_cluster *c, const plan__span *sp, double bytes)
{
    const plan_instance *in = c->inst;
    int r = sp->ranks_per_node, N = sp->nodes;
    double t_in = r > 1 ? 2.0 * (r - 1) / r * bytes / in->intra_busbw_bps : 0.0;
    double share = gpu_net_bps(in) * in->net_tree_eff;
    double t_out = 2.0 * (N - 1) / N * (bytes / r) / share;
    return t_in > t_out ? t_in : t_out;
}

static double coll_s(const plan_cluster *c, const plan__span *sp, double bytes, int allreduce)
{
    if (bytes <= 0)
        return 0.0;
    int r = sp->ranks_per_node, N = sp->nodes, n = r * N;
    if (n <= 1)
        return 0.0;
    double k = allreduce ? 2.0 : 1.0;
    double ring_bw = ring_bw_s(c, sp, bytes, k * (n - 1) / n);
    double tree_bw = allreduce && N > 1 ? tree_bw_s(c, sp, bytes) : INFINITY;
    double steps = k * (n - 1), inter = k * (N - 1);
    double si = intra_scale(c->inst), sn = net_scale(c->inst);
    double best = INFINITY;
    for (int p = 0; p < PROTO__COUNT; p++) {
        double lat_us = base_ring_us[p] + (steps - inter) * nvlink_ring_us[p] * si +
                        inter * net_ring_us[p] * sn;
        double t = lat_us * 1e-6 + ring_bw / proto_data[p];
        if (allreduce && N > 1) {
            double tree_us = base_tree_us[p] + 2.0 * ((r - 1) * nvlink_tree_us[p] * si +
                                                      log2((double)N) * net_tree_us[p] * sn);
            t = fmin(t, tree_us * 1e-6 + tree_bw / proto_data[p]);
        }
        best = fmin(best, t);
    }
    return best;
}

double plan__allreduce_s(const plan_cluster *c, const plan__span *sp, double bytes)
{
    return coll_s(c, sp, bytes, 1);
}

double plan__allgather_s(const plan_cluster *c, const plan__span *sp, double bytes)
{
    return coll_s(c, sp, bytes, 0);
}

/* An all-to-all (NCCL's grouped sends and receives to every peer): each
 * rank keeps 1/n of its buffer and sends 1/n to each other rank, (r - 1)/n
 * of it over the node's links and (n - r)/n over the network, both at once;
 * the node's links at its measured bus bandwidth (nccl-tests PERFORMANCE.md:
 * an all-to-all's bus bandwidth is its algorithm bandwidth x (n - 1)/n, the
 * rate each rank's outgoing data moves), the network at the GPU's share of
 * the node's at the ring's efficiency; the peers' sends run together, so
 * one send's latency. */
double plan__alltoall_s(const plan_cluster *c, const plan__span *sp, double bytes)
{
    int r = sp->ranks_per_node, N = sp->nodes, n = r * N;
    if (bytes <= 0 || n <= 1)
        return 0.0;
    const plan_instance *in = c->inst;
    double t_in = r > 1 ? bytes * (r - 1) / n / in->intra_busbw_bps : 0.0;
    double t_out = N > 1 ? bytes * (double)(n - r) / n / (gpu_net_bps(in) * in->net_ring_eff) : 0.0;
    return plan__p2p_latency_s(c, N == 1) + fmax(t_in, t_out);
}

/* A point-to-point send: one hop's latency (NCCL's Simple protocol, scaled
 * to the hardware as above) and the link's bandwidth at the fraction a send
 * reaches of it (PLAN__P2P_PEAK_EFF, plan_int.h). */
double plan__p2p_link_bps(const plan_cluster *c, int same_node)
{
    if (same_node)
        return c->inst->nvlink_bps * PLAN__P2P_PEAK_EFF;
    return gpu_net_bps(c->inst) * PLAN__P2P_PEAK_EFF;
}

double plan__p2p_latency_s(const plan_cluster *c, int same_node)
{
    double hop = same_node ? nvlink_ring_us[PROTO_SIMPLE] * intra_scale(c->inst)
                           : net_ring_us[PROTO_SIMPLE] * net_scale(c->inst);
    return (base_ring_us[PROTO_SIMPLE] + hop) * 1e-6;
}

double plan__p2p_s(const plan_cluster *c, int same_node, double bytes)
{
    if (bytes <= 0)
        return 0.0;
    return plan__p2p_latency_s(c, same_node) + bytes / plan__p2p_link_bps(c, same_node);
}
