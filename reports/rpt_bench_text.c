/*
 * rpt_bench_text.c: smdplan bench's measurements and entries as text
 * (rpt_bench.h). Rates in GFLOP/s (TFLOP/s for a GPU's entry) and GB/s,
 * times in the unit units_fmt_seconds picks, us for the transport table.
 */
#include "reports/rpt_bench.h"

#include <math.h>

#include "common/units.h"

/* The rows of threads t: its GEMMs against the model d fitted, its
 * elementwise kernels, the fit's summary. */
static void cpu_threads(FILE *f, const plan_bench_cpu *b, int t, const plan_dev_fit *d)
{
    for (int i = 0; i < b->ngemm; i++) {
        const plan_bench_gemm *g = &b->gemm[i];
        if (g->threads != t)
            continue;
        char ts[32];
        fprintf(f, "%-10s %7d %7lld %7lld %7lld %6d %11s %9.2f %9.2f\n", g->kind, g->threads,
                (long long)g->m, (long long)g->n, (long long)g->k, g->reps,
                units_fmt_seconds(g->time_s, ts, sizeof ts), g->flops / 1e9,
                d->ok ? plan_gemm_fit_rate(&d->gemm, (double)g->m, (double)g->n, (double)g->k) / 1e9
                      : NAN);
    }
    for (int i = 0; i < b->nelem; i++)
        if (b->elem[i].threads == t)
            fprintf(f, "%-10s %7d %7lld elements %18s %9.3f ns per element\n", b->elem[i].op,
                    b->elem[i].threads, (long long)b->elem[i].n, "", 1e9 * b->elem[i].elem_s);
    if (d->ok)
        fprintf(f, "  %d thread%s: peak (asymptote of the %s) %.2f GFLOP/s, gemm_dim_half %.1f, "
                "rms %.1f%%, worst %.1f%%, misaligned factor %.3f; triad %.2f GB/s\n\n",
                t, t == 1 ? "" : "s", d->device_gemms ? "executor's linears" : "sgemm rates",
                d->gemm.asymptote_flops / 1e9, d->gemm.dim_half, 100 * d->gemm.rms_log_err,
                d->gemm.max_abs_err_pct, d->misaligned, d->triad_bps / 1e9);
}

void rpt_bench_cpu_text(FILE *f, const plan_bench_cpu *b)
{
    char mem[32];
    fprintf(f, "host %s: %d cores, %s memory, %s\nBLAS: %s\n\n", b->host, b->cores,
            units_fmt_bytes(b->mem_bytes, mem, sizeof mem),
            b->cpu_model[0] ? b->cpu_model : "CPU model unknown", b->blas);
    fprintf(f, "%-10s %7s %7s %7s %7s %6s %11s %9s %9s\n", "GEMM", "threads", "m", "n", "k",
            "reps", "time", "GFLOP/s", "model");
    for (int t = 0; t < b->nthreads; t++) {
        st_err err = {0}; /* a thread count the model cannot be fitted to prints without it */
        plan_dev_fit d = plan_dev_fit_run(b, b->threads[t], &err);
        cpu_threads(f, b, b->threads[t], &d);
    }
    char steady[PLAN_BENCH_STEADY_MAX];
    plan_bench_steadiness(b, steady, sizeof steady);
    fprintf(f, "steadiness: %s\n\n", steady);
}

void rpt_bench_busy_warning(FILE *f, const plan_bench_cpu *b)
{
    if (!plan_bench_busy(b))
        return;
    char steady[PLAN_BENCH_STEADY_MAX];
    plan_bench_steadiness(b, steady, sizeof steady);
    /* the figures: this kind of host's CPU predictions from an entry
     * written under load against one written quiet (plan_bench.h) */
    fprintf(f, "smdplan: warning: this host was busy while it was measured (%s); an entry "
            "written under load made a host's CPU predictions 15-17 %% off, against 5 %% from "
            "one written quiet: measure again on a quiet host\n", steady);
}

void rpt_bench_comm_text(FILE *f, const plan_bench_comm *c)
{
    fprintf(f, "%s between %d ranks on %s (time: mean over ranks of the mean iteration; algbw = "
            "S / t; busbw as nccl-tests' PERFORMANCE.md)\n", c->transport, c->ranks, c->host);
    fprintf(f, "%-14s %12s %6s %12s %10s %10s\n", "op", "size (B)", "iters", "time (us)",
            "algbw GB/s", "busbw GB/s");
    for (int i = 0; i < c->n; i++) {
        const plan_bench_coll *v = &c->v[i];
        fprintf(f, "%-14s %12.0f %6d %12.2f %10.3f %10.3f\n", v->op, v->bytes, v->iters,
                v->time_s * 1e6, v->algbw_bps / 1e9, v->busbw_bps / 1e9);
    }
    fprintf(f, "\n");
}

void rpt_bench_cpu_entry(FILE *f, const plan_host_entry *h, int with_links)
{
    fprintf(f, "entry %s (device %s): peak %.2f GFLOP/s per rank, gemm_dim_half %.1f, triad "
            "%.2f GB/s per rank", with_links ? h->instance_name : "(no transport yet)",
            h->gpu_name, h->gpu.peak_flops / 1e9, h->fit.gemm.dim_half, h->gpu.hbm_bps / 1e9);
    if (with_links)
        fprintf(f, ", all-reduce busbw %.2f GB/s, latency %.2f us, send/recv %.2f GB/s",
                h->allreduce.bw_bps / 1e9, h->allreduce.small_s * 1e6, h->p2p.bw_bps / 1e9);
    fprintf(f, "\n");
}

void rpt_bench_gpu_entry(FILE *f, const plan_host_entry *h)
{
    const plan_gpu *g = &h->gpu;
    fprintf(f, "entry %s (device %s): GEMM asymptote %.1f TFLOP/s (gemm_eff_max %.3f of %.0f "
            "TFLOP/s), gemm_dim_half %.1f, copy %.0f GB/s (hbm_eff %.3f), fused attention "
            "flash_eff %.3f\n",
            h->instance_name, h->gpu_name, h->fit.gemm.asymptote_flops / 1e12, g->gemm_eff_max,
            g->peak_flops / 1e12, h->fit.gemm.dim_half, g->hbm_bps / 1e9, g->hbm_eff,
            g->flash_eff);
    if (g->flash2_fwd_eff > 0)
        fprintf(f, "  fused attention: products at %.3f (forward) and %.3f (backward) of the "
                "peak, plus %.3g / %.3g ps a score and %.3g / %.3g ns a score row\n",
                g->flash2_fwd_eff, g->flash2_bwd_eff, g->flash_score_fwd_s * 1e12,
                g->flash_score_bwd_s * 1e12, g->flash_row_fwd_s * 1e9, g->flash_row_bwd_s * 1e9);
}
