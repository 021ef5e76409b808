/*
 * bench_exec_gpu.c: the executor on one GPU, bf16, against the GPU's dense
 * bf16 peak.
 *
 *   bench_exec_gpu [--attention fused|plain|both] [--steps N] [--layers L]
 *                  [--micro-batch B] [--peak FLOPS] [--out DIR]
 *
 * The model is a GPT of 1.31 billion parameters (GPT-3 XL's shape from
 * Brown et al. 2020, Table 2.1: 24 layers, hidden 2048, 16 heads of 128,
 * ffn 8192; sequence 2048; GPT-2's vocabulary padded to 50304, a multiple
 * of 128, as llm.c and Megatron pad it), trained on one rank in this
 * process (the one-rank transport, the cuda device) with synthetic tokens:
 *   fused  the fused attention (layout.flash_attention), 8 sequences per
 *          microbatch, one microbatch per step;
 *   plain  the cuBLAS path that keeps the probabilities, 4 sequences per
 *          microbatch, two microbatches (the same 16384 tokens per step in
 *          less memory).
 * The answer is checked before it is timed: the first step's loss of an
 * untrained model on uniform tokens must be within 5 % of ln(vocab), and
 * every loss finite. Then for the measured steps (all but the first three,
 * which include the first step's allocations and cuBLASLt's algorithm
 * choices): median step time and its spread, tokens/s, achieved FLOP/s =
 * the planner's model FLOPs per step (6 N T plus attention, no recompute:
 * RESULT.json's model_flops_per_step) / step time, and MFU = that / the
 * GPU's dense bf16 peak, which comes from the catalog (data/catalog.json:
 * the GPU entry whose name's model appears in the CUDA device's name, e.g.
 * H100-80GB's 989 TFLOP/s, NVIDIA's H100 SXM datasheet) unless --peak
 * gives it. The target is MFU >= 55 %: torch.compile's 0.274 s a step of
 * the same model on the same H100 (../reference/gpu_h100_measured.json;
 * PyTorch eager 0.321 s, 47 %). Peak memory by the executor's count and as CUDA
 * saw it are printed too.
 *
 * Without a GPU (or without the cuda device in this build) it prints why
 * and exits 77. Rows "bench_exec_gpu,KEY,VALUE" repeat every figure for
 * scripts; --out DIR writes each run's CONFIG and RESULT JSON there (the
 * rank program's files, which smdplan can record).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "data/data.h"
#include "exec/exec.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_run.h"

#define WARM_STEPS 3

typedef struct opts {
    int fused, plain, steps, layers, micro_batch;
    double peak_flops;
    const char *out;
} opts;

static int usage(const char *bad)
{
    if (bad)
        fprintf(stderr, "bench_exec_gpu: bad argument '%s'\n", bad);
    fprintf(stderr, "usage: bench_exec_gpu [--attention fused|plain|both] [--steps N] "
                    "[--layers L] [--micro-batch B] [--peak FLOPS] [--out DIR]\n");
    return 2;
}

/* The catalog GPU whose model (its name before the '-': "H100") is in the
 * CUDA device's name; ties go to the entry whose memory is nearest the
 * device's. 0 when none matches. */
static double catalog_peak(const char *desc, char *which, size_t n)
{
    plan_catalog cat;
    st_err err = {0};
    if (data_catalog_load(NULL, &cat, &err) != ST_OK) {
        fprintf(stderr, "bench_exec_gpu: %s\n", err.msg);
        return 0;
    }
    double gib = 0, best_gap = INFINITY, peak = 0;
    const char *cc = strstr(desc, ", compute capability ");
    if (!cc || sscanf(cc, ", compute capability %*d.%*d, %lf GiB", &gib) != 1)
        gib = 0;
    double mem = gib * 1073741824.0;
    for (int i = 0; i < cat.ngpus; i++) {
        char model[32];
        snprintf(model, sizeof model, "%s", cat.gpus[i].name);
        char *dash = strchr(model, '-');
        if (dash)
            *dash = '\0';
        if (!*model || !strstr(desc, model))
            continue;
        double gap = fabs(cat.gpus[i].mem_bytes - mem);
        if (gap < best_gap) {
            best_gap = gap;
            peak = cat.gpus[i].peak_flops;
            snprintf(which, n, "%s", cat.gpus[i].name);
        }
    }
    plan_catalog_free(&cat);
    return peak;
}

static void config_of(exec_config *c, const opts *o, int fused)
{
    exec_config_default(c);
    plan_model *m = &c->model;
    snprintf(m->name, sizeof m->name, "gpt-1.3b");
    m->arch = PLAN_ARCH_GPT;
    m->layers = o->layers;
    m->hidden = 2048;
    m->heads = 16;
    m->kv_heads = 16;
    m->ffn = 8192;
    m->seq = 2048;
    m->vocab = 50304;
    m->tied_embedding = 1;
    st_err err = {0};
    if (plan_model_finish(m, &err) != ST_OK) {
        fprintf(stderr, "bench_exec_gpu: %s\n", err.msg);
        exit(1);
    }
    plan_layout *l = &c->layout;
    int mb = o->micro_batch > 0 ? o->micro_batch : fused ? 8 : 4;
    l->micro_batch = mb;
    l->microbatches = (8 + mb - 1) / mb;
    l->active_microbatches = l->microbatches;
    l->global_batch = (int64_t)l->micro_batch * l->microbatches;
    l->flash_attention = fused;
    l->precision = PLAN_PREC_BF16;
    c->train.steps = o->steps;
    c->train.warmup_steps = 2;
    c->train.warmup_steps_unmeasured = WARM_STEPS;
    snprintf(c->device, sizeof c->device, "cuda");
    snprintf(c->transport, sizeof c->transport, "self");
    c->progress = 0;
    c->timeout_s = 600;
}

static int run_one(const opts *o, int fused, double peak)
{
    const char *mode = fused ? "fused" : "plain";
    exec_config cfg;
    config_of(&cfg, o, fused);
    st_err err = {0};
    exec_comm *world = NULL;
    if (exec_comm_open("self", cfg.timeout_s, &world, &err) != ST_OK) {
        fprintf(stderr, "bench_exec_gpu: %s\n", err.msg);
        return 1;
    }
    printf("\n%s attention: %lld parameters, %d x %d sequences of %lld per step, %d steps "
           "(initialising the weights takes a minute)...\n",
           mode, (long long)cfg.model.params, cfg.layout.microbatches, cfg.layout.micro_batch,
           (long long)cfg.model.seq, o->steps);
    fflush(stdout);
    exec_result res;
    double t0 = bench_now_s();
    int rc = exec_run(&cfg, world, &res, &err);
    double wall = bench_now_s() - t0;
    exec_comm_free(world);
    if (rc != ST_OK) {
        fprintf(stderr, "bench_exec_gpu: %s attention: %s\n", mode, err.msg);
        exec_result_free(&res);
        return 1;
    }
    /* the answer first */
    double want = log((double)cfg.model.vocab);
    int ok = res.nsteps == o->steps && fabs(res.steps[0].loss - want) <= 0.05 * want;
    for (int i = 0; ok && i < res.nsteps; i++)
        ok = isfinite(res.steps[i].loss);
    if (!ok) {
        fprintf(stderr, "bench_exec_gpu: %s attention: first loss %.4f, expected ln(%lld) = "
                "%.4f within 5 %%, or a loss not finite\n", mode,
                res.nsteps ? res.steps[0].loss : NAN, (long long)cfg.model.vocab, want);
        exec_result_free(&res);
        return 1;
    }
    double t[256];
    int nt = 0;
    for (int i = 0; i < res.nsteps && nt < 256; i++)
        if (res.steps[i].measured)
            t[nt++] = res.steps[i].time_s;
    if (nt == 0) {
        fprintf(stderr, "bench_exec_gpu: no measured step (--steps must exceed %d)\n",
                WARM_STEPS);
        exec_result_free(&res);
        return 1;
    }
    double med = bench_median(t, nt), fast = t[0], slow = t[nt - 1];
    double tps = res.tokens_per_step / med, flops = res.model_flops_per_step / med;
    double hw = res.hardware_flops_per_step / med;
    const exec_rank_stat *r = &res.rank_stats[0];
    printf("device        %s\n", res.device_name);
    printf("step time     %.4f s median of %d (fastest %.4f, slowest %.4f); run %.1f s\n", med,
           nt, fast, slow, wall);
    printf("loss          %.4f -> %.4f (ln V = %.4f)\n", res.steps[0].loss,
           res.steps[res.nsteps - 1].loss, want);
    printf("tokens/s      %.0f\n", tps);
    printf("model FLOP/s  %.1f TFLOP/s (%.3g model FLOPs per step: 6 N T + attention)\n",
           flops / 1e12, res.model_flops_per_step);
    printf("device FLOP/s %.1f TFLOP/s (the FLOPs the device ran, recompute included)\n",
           hw / 1e12);
    if (peak > 0)
        printf("MFU           %.1f %% of %.0f TFLOP/s dense bf16 (target >= 55 %%: "
               "torch.compile's on an H100)\n",
               100 * flops / peak, peak / 1e12);
    printf("memory        %.2f GiB by the executor's count, %.2f GiB in use on the GPU at "
           "most\n", r->peak_memory_bytes / 1073741824.0,
           r->device_memory_peak_bytes / 1073741824.0);
    printf("bench_exec_gpu,%s_step_s,%.6f\n", mode, med);
    printf("bench_exec_gpu,%s_step_fastest_s,%.6f\n", mode, fast);
    printf("bench_exec_gpu,%s_step_slowest_s,%.6f\n", mode, slow);
    printf("bench_exec_gpu,%s_tokens_per_s,%.1f\n", mode, tps);
    printf("bench_exec_gpu,%s_model_flops_per_s,%.6g\n", mode, flops);
    printf("bench_exec_gpu,%s_hardware_flops_per_s,%.6g\n", mode, hw);
    if (peak > 0)
        printf("bench_exec_gpu,%s_mfu,%.4f\n", mode, flops / peak);
    printf("bench_exec_gpu,%s_peak_memory_bytes,%.0f\n", mode, r->peak_memory_bytes);
    printf("bench_exec_gpu,%s_device_memory_peak_bytes,%.0f\n", mode,
           r->device_memory_peak_bytes);
    if (o->out) {
        char path[1100];
        snprintf(path, sizeof path, "%s/CONFIG-%s.json", o->out, mode);
        if (exec_config_write(path, &cfg, &err) != ST_OK)
            fprintf(stderr, "bench_exec_gpu: %s\n", err.msg);
        snprintf(path, sizeof path, "%s/RESULT-%s.json", o->out, mode);
        snprintf(res.status, sizeof res.status, "ok");
        if (exec_result_write(path, &res, &err) != ST_OK)
            fprintf(stderr, "bench_exec_gpu: %s\n", err.msg);
        else
            printf("wrote %s\n", path);
    }
    exec_result_free(&res);
    return 0;
}

int main(int argc, char **argv)
{
    opts o = {1, 1, 12, 24, 0, 0, NULL};
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage(a);
        if (!strcmp(a, "--attention")) {
            o.fused = !strcmp(v, "fused") || !strcmp(v, "both");
            o.plain = !strcmp(v, "plain") || !strcmp(v, "both");
            if (!o.fused && !o.plain)
                return usage(v);
        } else if (!strcmp(a, "--steps")) {
            o.steps = atoi(v);
            if (o.steps <= WARM_STEPS || o.steps > 200)
                return usage(v);
        } else if (!strcmp(a, "--layers")) {
            o.layers = atoi(v);
            if (o.layers < 1 || o.layers > 96)
                return usage(v);
        } else if (!strcmp(a, "--micro-batch")) {
            o.micro_batch = atoi(v);
            if (o.micro_batch < 1 || o.micro_batch > 64)
                return usage(v);
        } else if (!strcmp(a, "--peak")) {
            o.peak_flops = strtod(v, NULL);
            if (!(o.peak_flops > 0))
                return usage(v);
        } else if (!strcmp(a, "--out")) {
            o.out = v;
        } else {
            return usage(a);
        }
    }
    st_err err = {0};
    exec_dev *probe = NULL;
    if (!exec_dev_find("cuda")) {
        printf("skipped: this build has no cuda device (built: %s)\n", exec_dev_names());
        return 77;
    }
    if (exec_dev_open("cuda", 1, &probe, &err) != ST_OK) {
        printf("skipped: %s\n", err.msg);
        return 77;
    }
    char desc[400], which[64] = "--peak";
    snprintf(desc, sizeof desc, "%s", probe->ops->describe(probe));
    exec_dev_close(probe);
    double peak = o.peak_flops;
    if (!(peak > 0))
        peak = catalog_peak(desc, which, sizeof which);
    printf("bench_exec_gpu: %s\n", desc);
    if (peak > 0)
        printf("dense bf16 peak %.0f TFLOP/s (%s)\n", peak / 1e12, which);
    else
        printf("no catalog GPU matches this device: give --peak FLOPS for the MFU\n");
    int rc = 0;
    if (o.fused)
        rc |= run_one(&o, 1, peak);
    if (o.plain)
        rc |= run_one(&o, 0, peak);
    return rc;
}
