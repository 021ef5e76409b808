/*
 * bench_attention_gpu.c: the CUDA device's fused causal attention
 * (flash_fwd, flash_bwd) alone: time per call and TFLOP/s for a few shapes.
 *
 *   bench_attention_gpu [--reps N]
 *
 * Shapes (batch B, query heads H, kv heads, sequence T, head size d, bf16):
 * the reference B8 H16 T2048 d128 (one layer of the 1.3B GPT of
 * bench_exec_gpu: ../reference figures for FlashAttention-2 and cuDNN on an
 * H100 were measured at this shape), d64 at the same width, T 4096 and
 * 8192 at the same tokens, and grouped-query heads (16 query heads on 4 kv
 * heads). FLOPs count the causal half, as FlashAttention's own benchmark
 * does: forward 4 B H T^2 d / 2, forward and backward 3.5 times that (the
 * backward's five products against the forward's two).
 *
 * Inputs are random bf16 (N(0, 1) queries, keys, values and output
 * gradients: never zeros, which run faster than real data). Each figure is
 * the median over 5 rounds of REPS calls queued back to back and waited
 * for once (host clock around the round; a call of 0.3 ms or more is long
 * against the launch), after 3 calls of warm-up. Rows
 * "bench_attention_gpu,KEY,VALUE" repeat the figures for scripts.
 *
 * Exits 77 without a GPU or without the cuda device in this build.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "exec/exec.h"
#include "exec/exec_dev.h"

#define ROUNDS 5

typedef struct shape {
    const char *name;
    int64_t B, H, Hkv, T, d;
} shape;

static const shape shapes[] = {
    {"B8 H16 T2048 d128", 8, 16, 16, 2048, 128},
    {"B8 H32 T2048 d64", 8, 32, 32, 2048, 64},
    {"B4 H16 T4096 d128", 4, 16, 16, 4096, 128},
    {"B2 H16 T8192 d128", 2, 16, 16, 8192, 128},
    {"B8 H16/4 T2048 d128 (GQA)", 8, 16, 4, 2048, 128},
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

/* N(0, 1) by Box-Muller over a xorshift generator. */
static double gauss(void)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        u[k] = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static void *random_buffer(exec_dev *d, int64_t n, st_err *err)
{
    void *p = exec_dev_alloc(d, (size_t)n * d->elem_bytes, EXEC_MEM_ACTIVATIONS, err);
    double *h = malloc((size_t)n * sizeof *h);
    if (!p || !h) {
        free(h);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        h[i] = gauss();
    d->ops->upload_f64(d, p, h, n);
    free(h);
    return p;
}

/* Median seconds per call of fwd (and bwd when both). */
static double time_calls(exec_dev *d, const shape *s, void *out, void *lse, void *qkv, void *dout,
                         void *dqkv, int both, int reps, st_err *err)
{
    double t[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) {
        int n = r < 0 ? 3 : reps;
        double t0 = bench_now_s();
        for (int k = 0; k < n; k++) {
            d->ops->flash_fwd(d, out, lse, qkv, s->T, s->B, s->H, s->Hkv, s->d);
            if (both)
                d->ops->flash_bwd(d, dqkv, dout, qkv, out, lse, s->T, s->B, s->H, s->Hkv, s->d);
        }
        if (d->ops->sync(d, err) != ST_OK)
            return NAN;
        if (r >= 0)
            t[r] = (bench_now_s() - t0) / n;
    }
    return bench_median(t, ROUNDS);
}

int main(int argc, char **argv)
{
    int reps = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1 || reps > 10000) {
                fprintf(stderr, "bench_attention_gpu: --reps %s: allowed 1 to 10000\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_attention_gpu [--reps N]\n");
            return 2;
        }
    }
    st_err err = {0};
    exec_dev *d = NULL;
    if (!exec_dev_find("cuda")) {
        printf("skipped: this build has no cuda device (built: %s)\n", exec_dev_names());
        return 77;
    }
    if (exec_dev_open("cuda", 1, &d, &err) != ST_OK) {
        printf("skipped: %s\n", err.msg);
        return 77;
    }
    printf("bench_attention_gpu: %s; causal, bf16, median of %d rounds of %d calls\n",
           d->ops->describe(d), ROUNDS, reps);
    printf("%-28s %10s %10s %12s %12s\n", "shape", "fwd ms", "fwd TF/s", "fwd+bwd ms",
           "fwd+bwd TF/s");
    int rc = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const shape *s = &shapes[k];
        int64_t N = s->T * s->B, W = (s->H + 2 * s->Hkv) * s->d, O = N * s->H * s->d;
        void *qkv = random_buffer(d, N * W, &err), *dout = random_buffer(d, O, &err);
        void *out = exec_dev_alloc(d, (size_t)O * d->elem_bytes, EXEC_MEM_ACTIVATIONS, &err);
        void *dqkv = exec_dev_alloc(d, (size_t)(N * W) * d->elem_bytes, EXEC_MEM_ACTIVATIONS,
                                    &err);
        void *lse = exec_dev_alloc(d, (size_t)(s->B * s->H * s->T) * d->stat_bytes,
                                   EXEC_MEM_ACTIVATIONS, &err);
        double fwd = NAN, all = NAN;
        if (qkv && dout && out && dqkv && lse) {
            fwd = time_calls(d, s, out, lse, qkv, dout, dqkv, 0, reps, &err);
            all = time_calls(d, s, out, lse, qkv, dout, dqkv, 1, reps, &err);
        }
        if (!isfinite(fwd) || !isfinite(all)) {
            fprintf(stderr, "bench_attention_gpu: %s: %s\n", s->name,
                    err.msg[0] ? err.msg : "out of memory");
            rc = 1;
            break;
        }
        double fl = 4.0 * (double)s->B * (double)s->H * (double)s->T * (double)s->T *
                    (double)s->d / 2.0;
        printf("%-28s %10.3f %10.1f %12.3f %12.1f\n", s->name, 1e3 * fwd, fl / fwd / 1e12,
               1e3 * all, 3.5 * fl / all / 1e12);
        printf("bench_attention_gpu,%s,fwd_ms,%.4f\n", s->name, 1e3 * fwd);
        printf("bench_attention_gpu,%s,fwd_bwd_ms,%.4f\n", s->name, 1e3 * all);
        exec_dev_free(d, lse, (size_t)(s->B * s->H * s->T) * d->stat_bytes, EXEC_MEM_ACTIVATIONS);
        exec_dev_free(d, dqkv, (size_t)(N * W) * d->elem_bytes, EXEC_MEM_ACTIVATIONS);
        exec_dev_free(d, out, (size_t)O * d->elem_bytes, EXEC_MEM_ACTIVATIONS);
        exec_dev_free(d, dout, (size_t)O * d->elem_bytes, EXEC_MEM_ACTIVATIONS);
        exec_dev_free(d, qkv, (size_t)(N * W) * d->elem_bytes, EXEC_MEM_ACTIVATIONS);
    }
    exec_dev_close(d);
    return rc;
}
