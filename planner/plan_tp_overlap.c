/*
 * plan_tp_overlap.c: what Transformer Engine's userbuffers overlap of the
 * tensor-parallel collectives costs a layer (tp_overlap "pipelined":
 * Megatron-Core --tp-comm-overlap, NeMo tp_comm_overlap).
 *
 * With sequence parallelism a layer's four linears gather their input
 * before the column-parallel products (QKV, MLP up) and reduce-scatter the
 * row-parallel products' output (projection, MLP down); the backward
 * gathers the output gradient before the row-parallel input gradients,
 * gathers the input again for the column-parallel weight gradients and
 * reduce-scatters their input gradients (Korthikanti et al. 2022, Sec.
 * 4.2.2): four collectives forward, six backward, each over the layer's
 * whole [T, h] activation.
 *
 * Transformer Engine hides each behind a product by one of three methods
 * (transformer_engine/pytorch/module/base.py, initialize_ub: the layers of
 * each method and their defaults):
 *   ring_exchange (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad): the
 *     product runs as tp_size pieces of T/tp rows, each beside the copy
 *     engines' send of the next piece (use_ce: no SMs taken); the pieces'
 *     smaller products are what it costs, and a send longer than its piece
 *     stays exposed;
 *   pipeline (proj_fprop, fc2_fprop): the product in num_splits pieces of
 *     T/num_splits rows (default 4) on the SMs num_sm (default 16) leaves
 *     it (set_sm_margin: Transformer Engine 2's default and every NeMo
 *     preset's; 1.x left the margin off by default), each piece's
 *     reduce-scatter beside the next piece: the last piece's stays exposed;
 *   bulk (qkv_dgrad, fc1_dgrad: the input's re-gather; qkv_wgrad,
 *     fc1_wgrad: the input gradient's reduce-scatter): the whole collective
 *     beside the whole product on num_sm SMs of its own (default 16), which
 *     the product loses for as long as the collective runs.
 * NeMo's tuned presets (nemo/collections/llm/recipes/tp_overlap_configs/
 * userbuffers.py) keep these methods and vary num_sm (2 to 24) by model;
 * a layout that names no preset takes the defaults, which the stack's
 * profile carries (frameworks.json ub_pipeline_sms, ub_pipeline_splits,
 * ub_bulk_sms).
 *
 * PyTorch's async TP (torchtitan enable_async_tensor_parallel; the looped
 * decomposition of Wang et al. 2023, "Overlap Communication with Dependent
 * Computation via Decomposition in Large Deep Learning Models", ASPLOS) is
 * the first method for every collective: the compiled graph's all-gather ->
 * matmul and matmul -> reduce-scatter pairs become fused_all_gather_matmul
 * and fused_matmul_reduce_scatter (torch.distributed._symmetric_memory), each
 * product cut into tp pieces beside the copy engines' exchange of the
 * neighbouring piece through symmetric memory over NVLink: no SMs held, a
 * piece's exchange longer than its product exposed. In the backward the
 * column-parallel linears' weight gradients read the input the forward
 * gathered (autograd keeps it); their input gradients' reduce-scatter is
 * cut with the input-gradient product (stack trait async_tp).
 */
#include "planner/plan_framework.h"
#include "planner/plan_int.h"

#include <math.h>

/* A product of m x k by k x n cut into pieces of m / pieces rows. */
static double pieces_s(const plan_cluster *c, double m, double n, double k, double pieces,
                       int fp8)
{
    return pieces * plan__gemm_prec_s(c, m / pieces, n, k, 1, fp8);
}

void plan__ub_layer(const plan_cluster *c, const struct plan_framework *fw, const plan__span *sp_t,
                    const plan__ub_layer_in *in, plan__ub_cost *out)
{
    double T = in->tokens, t = in->tp, h = in->hidden, S = (double)c->gpu->sms;
    int fp8 = in->fp8;
    out->fwd_gemm_s = out->bwd_gemm_s = out->fwd_exposed_s = out->bwd_exposed_s = 0.0;
    if (!(t > 1.0))
        return;
    double P = fw->ub_pipeline_splits > 0 ? (double)fw->ub_pipeline_splits : 1.0;
    /* the share of the SMs a pipelined product keeps, and the share a bulk
     * collective takes from the product beside it (none where the chip's SM
     * count is not known) */
    double keep = S > 0 && fw->ub_pipeline_sms > 0 && fw->ub_pipeline_sms < S
                      ? (S - fw->ub_pipeline_sms) / S
                      : 1.0;
    double bulk = S > 0 && fw->ub_bulk_sms > 0 ? fmin(1.0, fw->ub_bulk_sms / S) : 0.0;
    /* the gathered operands travel in FP8 with FP8 linears (fp8_buf of the
     * all-gather layers); reductions and the re-gathered input in the
     * activations' precision */
    double ag_ring = plan__allgather_s(c, sp_t, (fp8 ? 1.0 : in->elem_bytes) * T * h);
    double coll = plan__allgather_s(c, sp_t, in->elem_bytes * T * h);

    for (int i = 0; i < 2 && fw->async_tp; i++) {
        double n = in->col_n[i], k = in->row_k[i];
        /* forward: the column-parallel product beside the gather of its
         * input, the row-parallel one beside the reduce-scatter of its
         * output; backward: the row-parallel input gradient beside the
         * gather of the output gradient, the column-parallel one beside the
         * reduce-scatter of its own output */
        const double nk[4][2] = {{n, h}, {h, k}, {k, h}, {h, n}}; /* T x n x k each */
        for (int j = 0; j < 4; j++) {
            double whole = plan__gemm_prec_s(c, T, nk[j][0], nk[j][1], 1, fp8);
            double ring = pieces_s(c, T, nk[j][0], nk[j][1], t, fp8);
            double x = j == 0 || j == 2 ? ag_ring : coll;
            double exposed = fmax(0.0, x - ring * (t - 1.0) / t);
            *(j < 2 ? &out->fwd_gemm_s : &out->bwd_gemm_s) += ring - whole;
            *(j < 2 ? &out->fwd_exposed_s : &out->bwd_exposed_s) += exposed;
        }
    }
    for (int i = 0; i < 2 && !fw->async_tp; i++) {
        double n = in->col_n[i], k = in->row_k[i];
        /* forward, column-parallel: ring exchange over t pieces */
        double whole = plan__gemm_prec_s(c, T, n, h, 1, fp8);
        double ring = pieces_s(c, T, n, h, t, fp8);
        out->fwd_gemm_s += ring - whole;
        out->fwd_exposed_s += fmax(0.0, ag_ring - ring * (t - 1.0) / t);
        /* forward, row-parallel: pipelined reduce-scatter in P pieces on
         * the SMs the communication leaves */
        double row = plan__gemm_prec_s(c, T, h, k, 1, fp8);
        double pipe = pieces_s(c, T, h, k, P, fp8) / keep;
        out->fwd_gemm_s += pipe - row;
        out->fwd_exposed_s += coll / P + fmax(0.0, (coll - pipe) * (P - 1.0) / P);
        /* backward, row-parallel input gradient: ring exchange of the output
         * gradient */
        double dring = pieces_s(c, T, k, h, t, fp8);
        out->bwd_gemm_s += dring - row;
        out->bwd_exposed_s += fmax(0.0, ag_ring - dring * (t - 1.0) / t);
        /* backward, column-parallel: the input's re-gather beside the input
         * gradient, the input gradient's reduce-scatter beside the weight
         * gradient (the two products cost the forward's each) */
        for (int j = 0; j < 2; j++) {
            out->bwd_gemm_s += bulk * fmin(coll, whole);
            out->bwd_exposed_s += fmax(0.0, coll - whole);
        }
    }
}
