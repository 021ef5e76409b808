/*
 * test_gpu_train.c: training on the CUDA device against the CPU device.
 *
 *   test_gpu_train MPIEXEC SMDPLAN-RANK FIXTURES CASE
 *
 * Each case trains the same small model from the same seed on the same
 * data (the text fixture, vocab 256) for STEPS steps with smdplan-rank, once
 * on the CPU device that rounds like the GPU stores ("cpu-bf16": fp32
 * arithmetic, every stored parameter, activation and gradient rounded to
 * bf16, fp32 master weights and moments; one rank) and once as the case
 * says, and compares the losses step by step.
 *
 * The tolerance of step t. Both runs round the same stored values to bf16;
 * what differs is the order of the fp32 sums (each a relative 2^-24 per
 * term), which flips the bf16 rounding (one step of 2^-8) of some stored
 * values, and the roundings a GPU kernel makes inside itself (the plain
 * attention's scores, the fused attention's probabilities, each a relative
 * 2^-9 before a sum over at most 64 keys). The size of such differences in
 * the loss is known from the CPU alone: storing in bf16 at all (cpu-bf16
 * against the fp32 "cpu", every stored value moved by up to 2^-9) moves
 * this model's loss by at most 0.05 % on a step of ordinary gradient
 * (measured on both architectures, steps 1-20); TOL, 1 %, is twenty times
 * that, while a wrong gradient anywhere moves the curves apart by far more
 * within a few steps. To first order two runs whose weights differ by
 * dtheta at step t see losses differing by grad L_t . dtheta, at most
 * |grad L_t| |dtheta|: a step whose gradient is k times the run's median
 * magnifies the same weight difference k times. The GPT case has such
 * steps, and where they fall moves with the roundings themselves: a spike
 * of the loss and a gradient norm 10 to 100 times the median somewhere in
 * steps 13 to 16, in one run and not in another that differs only in the
 * order of its sums (on the CPU alone: cpu-bf16 on one rank with 4
 * microbatches has none; the same on two data-parallel ranks with 2 each,
 * ZeRO-2, has one at step 16, gradient norm 47.6 against a median of 1.5,
 * the loss 5.8 % above the one-rank run's; the fp32 "cpu" device on two
 * ranks has its own at step 13, norm 9.7). The gradient that bounds the
 * loss difference is the largest along the way from one run's weights to
 * the other's, of which each run's own gradient is a sample: step t's
 * tolerance is TOL max(1, max(|grad L_t| of either run) / median |grad L|),
 * the median the reference's, the gradient norms before clipping. The loss
 * must also fall (last < first).
 *
 *   gpt, llama          one rank, "cuda" (bf16, plain attention).
 *   gpt_flash, llama_flash  the same with the fused attention
 *                       (layout.flash_attention), against the CPU and
 *                       against the plain path on the GPU (the same
 *                       tolerance: both bf16, they differ in the
 *                       attention's internal rounding only).
 *   tp2, pp2, dp2_zero2  two ranks on one GPU over the MPI transport (the
 *                       groups staged through host memory), CUDA compute:
 *                       TP's bf16 all-reduces (summed in f32 on the host),
 *                       the pipeline's sends, ZeRO-2's reduce-scatter.
 *   nccl1               one rank over the NCCL transport (communicators of
 *                       one GPU each, made over MPI), with ZeRO-2 so the
 *                       gradients go through an NCCL reduce-scatter every
 *                       step.
 *   cpu_gpt, cpu_llama  no GPU: the fp32 "cpu" device against the same
 *                       reference under the same tolerance, the CPU's own
 *                       check of the claims above (it runs in every build).
 *   checkpoint          checkpoints of the CUDA device (bf16 parameters, fp32
 *                       master weights and moments): two ranks sharing the
 *                       GPU over the MPI transport, DP 2 with ZeRO-1 (each
 *                       rank keeps the master weights of its shard), plain
 *                       attention (every kernel of that path is
 *                       deterministic, exec_cuda_kernels.cu), stopped after
 *                       step 10 with a checkpoint and resumed: steps 11-20
 *                       and the final weights equal the uninterrupted run's
 *                       bit for bit; resumed on DP 2 without sharding (the
 *                       checkpoint resharded: each parameter from its master
 *                       on the rank that updated it), bit for bit too, as
 *                       both layouts compute the same sums.
 *
 * Exit 77 (skipped) without the cuda device in this build or without a GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_dump.h"

#define STEPS 20
#define TOL 0.01

static const char *mpiexec, *rankprog, *fixtures;
static char tmp[256];

/* A config; stop_after > 0 ends the run there (the schedule still spans
 * STEPS), more is added to the top-level object (checkpoint, debug). */
static void write_config_more(const char *path, const char *arch, const char *device,
                              const char *transport, int microbatches, const char *layout,
                              int stop_after, const char *more)
{
    char json[4096], stop[48] = "";
    if (stop_after > 0)
        snprintf(stop, sizeof stop, ", \"stop_after\": %d", stop_after);
    snprintf(json, sizeof json,
             "{\"version\": 1, \"model\": {\"name\": \"small\", \"arch\": \"%s\", \"layers\": 4,"
             " \"hidden\": 64, \"heads\": 4, \"kv_heads\": %d, \"ffn\": 192, \"seq\": 64, "
             "\"vocab\": 256}, \"layout\": {\"micro_batch\": 4, \"microbatches\": %d%s%s}, "
             "\"train\": {\"steps\": %d, \"lr\": 0.003, \"min_lr\": 0.0003, \"warmup_steps\": 2, "
             "\"seed\": 11%s}, \"data\": {\"kind\": \"text\", \"path\": \"%s/exec_tiny_text.txt\"}, "
             "\"device\": \"%s\", \"transport\": \"%s\", \"progress\": false, \"timeout_s\": 60%s}",
             arch, strcmp(arch, "llama") == 0 ? 2 : 4, microbatches, *layout ? ", " : "", layout,
             STEPS, stop,
             fixtures, device, transport, more);
    FILE *f = fopen(path, "w");
    if (!f || fputs(json, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "test_gpu_train: cannot write %s\n", path);
        exit(1);
    }
}

static void write_config(const char *path, const char *arch, const char *device,
                         const char *transport, int microbatches, const char *layout)
{
    write_config_more(path, arch, device, transport, microbatches, layout, 0, "");
}

/* Run the config on ranks ranks; 0 and the losses on success (nsteps, if
 * non-NULL, gets the steps run and loss their losses; NULL: STEPS of them
 * are required). */
static double last_gnorm[STEPS];

static int run_n(int ranks, const char *cfg, double *loss, int *nsteps)
{
    char cmd[2048], res[300], log[300];
    snprintf(res, sizeof res, "%s/result.json", tmp);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    if (ranks == 1)
        snprintf(cmd, sizeof cmd, "timeout 300 %s --config %s --result %s > %s 2>&1", rankprog,
                 cfg, res, log);
    else
        snprintf(cmd, sizeof cmd,
                 "timeout 300 %s -n %d --oversubscribe %s --config %s --result %s > %s 2>&1",
                 mpiexec, ranks, rankprog, cfg, res, log);
    int st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "test_gpu_train: `%s` failed:\n", cmd);
        snprintf(cmd, sizeof cmd, "cat %s >&2", log);
        if (system(cmd) != 0)
            fprintf(stderr, "(no log)\n");
        return 1;
    }
    exec_result r;
    st_err err = {0};
    if (exec_result_read(res, &r, &err) != ST_OK) {
        fprintf(stderr, "test_gpu_train: %s\n", err.msg);
        return 1;
    }
    int ok = nsteps ? r.nsteps >= 1 && r.nsteps <= STEPS : r.nsteps == STEPS;
    if (nsteps)
        *nsteps = r.nsteps;
    for (int i = 0; ok && i < r.nsteps; i++) {
        loss[i] = r.steps[i].loss;
        last_gnorm[i] = r.steps[i].grad_norm;
    }
    if (ok && r.nranks > 0)
        printf("  %s on %d rank(s): peak %.1f MiB by the executor's count, %.1f MiB on the GPU\n",
               r.device, r.ranks, r.rank_stats[0].peak_memory_bytes / 1048576.0,
               r.rank_stats[0].device_memory_peak_bytes / 1048576.0);
    exec_result_free(&r);
    return ok ? 0 : 1;
}

static int run(int ranks, const char *cfg, double *loss)
{
    return run_n(ranks, cfg, loss, NULL);
}

/* Largest |a - b| of two weight dumps; -1 when they cannot be compared. */
static double weights_diff(const char *da, const char *db)
{
    double *a = NULL, *b = NULL, worst = -1;
    int64_t na = 0, nb = 0;
    st_err err = {0};
    if (exec_dump_read(da, &a, &na, &err) != ST_OK || exec_dump_read(db, &b, &nb, &err) != ST_OK)
        fprintf(stderr, "test_gpu_train: %s\n", err.msg);
    else if (na != nb)
        fprintf(stderr, "test_gpu_train: dumps of %lld and %lld parameters\n", (long long)na,
                (long long)nb);
    else {
        worst = 0;
        for (int64_t i = 0; i < na; i++)
            worst = fmax(worst, fabs(a[i] - b[i]));
    }
    free(a);
    free(b);
    return worst;
}

static int make_dir(const char *path)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", path);
    return system(cmd) != 0;
}

/* The checkpoint case (see the file comment). */
#define CKPT_STOP 10
static int checkpoint_case(const char *arch)
{
    const char *zero1 = "\"dp\": 2, \"sharding\": \"optimizer\"";
    const char *none = "\"dp\": 2, \"sharding\": \"none\"";
    char cfg[300], full[300], ck[300], out[300], more[900];
    snprintf(cfg, sizeof cfg, "%s/ck.json", tmp);
    snprintf(full, sizeof full, "%s/full", tmp);
    snprintf(ck, sizeof ck, "%s/ckpt", tmp);
    double ref[STEPS], got[STEPS];
    int n = 0, fail = 0;
    if (make_dir(full))
        return 1;
    snprintf(more, sizeof more, ", \"debug\": {\"dump_weights\": \"%s\"}", full);
    write_config_more(cfg, arch, "cuda", "mpi", 2, zero1, 0, more);
    if (run(2, cfg, ref))
        return 1;
    snprintf(more, sizeof more, ", \"checkpoint\": {\"save_dir\": \"%s\"}", ck);
    write_config_more(cfg, arch, "cuda", "mpi", 2, zero1, CKPT_STOP, more);
    if (run_n(2, cfg, got, &n) || n != CKPT_STOP) {
        fprintf(stderr, "test_gpu_train: the run to step %d with a checkpoint ran %d steps\n",
                CKPT_STOP, n);
        return 1;
    }
    const char *names[2] = {"resumed (dp 2, ZeRO-1)", "resharded (dp 2, no sharding)"};
    const char *layouts[2] = {zero1, none};
    for (int k = 0; k < 2; k++) {
        snprintf(out, sizeof out, "%s/out%d", tmp, k);
        if (make_dir(out))
            return 1;
        snprintf(more, sizeof more,
                 ", \"checkpoint\": {\"resume_dir\": \"%s\"}, \"debug\": {\"dump_weights\": "
                 "\"%s\"}", ck, out);
        write_config_more(cfg, arch, "cuda", "mpi", 2, layouts[k], 0, more);
        if (run_n(2, cfg, got, &n))
            return 1;
        double dl = n == STEPS - CKPT_STOP ? 0 : INFINITY;
        for (int i = 0; i < n && i < STEPS - CKPT_STOP; i++)
            dl = fmax(dl, fabs(got[i] - ref[CKPT_STOP + i]));
        double dw = weights_diff(full, out);
        int ok = dl == 0 && dw == 0;
        printf("%-4s %-30s steps %d-%d after a restart at step %d: max |loss diff| %.3g, max "
               "|weight diff| %.3g (both must be 0: bit for bit)\n",
               ok ? "ok" : "FAIL", names[k], CKPT_STOP + 1, STEPS, CKPT_STOP, dl, dw);
        fail |= !ok;
    }
    return fail;
}

/* The reference run's gradient norms, and the plain GPU run's (the
 * reference of the fused one) (see the file comment). */
static double ref_gnorm[STEPS], plain_gnorm[STEPS];

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every step's relative difference within TOL, magnified on a step where
 * either run's gradient is above the median (the file comment): ref_g the
 * gradient norms of the run ref, the run got's those of the last run; the
 * curve falls. */
static int compare(const char *what, const double *ref, const double *ref_g, const double *got)
{
    double sorted[STEPS];
    memcpy(sorted, ref_gnorm, sizeof sorted);
    qsort(sorted, STEPS, sizeof sorted[0], cmp_double);
    double med = sorted[STEPS / 2], worst = 0, worst_tol = TOL;
    int at = 0, ok = got[STEPS - 1] < got[0];
    for (int i = 0; i < STEPS; i++) {
        double tol = TOL * fmax(1.0, fmax(ref_g[i], last_gnorm[i]) / med);
        double rel = fabs(got[i] - ref[i]) / fabs(ref[i]);
        if (!(rel <= tol))
            ok = 0;
        if (!(rel / tol <= worst / worst_tol))
            worst = rel, worst_tol = tol, at = i;
    }
    printf("%-4s %-28s losses %.4f -> %.4f (reference %.4f -> %.4f), nearest its tolerance: "
           "step %d, %.2f %% (tol %.1f %%)\n",
           ok ? "ok" : "FAIL", what, got[0], got[STEPS - 1], ref[0], ref[STEPS - 1], at + 1,
           100 * worst, 100 * worst_tol);
    return ok ? 0 : 1;
}

/* The reference: one rank of the bf16-rounding CPU device. */
static int run_reference(const char *cfg, const char *arch, int microbatches, double *ref)
{
    write_config(cfg, arch, "cpu-bf16", "self", microbatches, "");
    if (run(1, cfg, ref))
        return 1;
    memcpy(ref_gnorm, last_gnorm, sizeof ref_gnorm);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: test_gpu_train MPIEXEC SMDPLAN-RANK FIXTURES CASE\n");
        return 2;
    }
    mpiexec = argv[1];
    rankprog = argv[2];
    fixtures = argv[3];
    const char *c = argv[4];
    st_err err = {0};
    exec_dev *probe = NULL;
    int cpu_case = strncmp(c, "cpu_", 4) == 0;
    if (!cpu_case) { /* the GPU cases need a GPU */
        if (!exec_dev_find("cuda")) {
            printf("skipped: this build has no cuda device (built: %s)\n", exec_dev_names());
            return 77;
        }
        if (exec_dev_open("cuda", 1, &probe, &err) != ST_OK) {
            printf("skipped: %s\n", err.msg);
            return 77;
        }
        exec_dev_close(probe);
    }
    snprintf(tmp, sizeof tmp, "/tmp/smd-gpu-train-XXXXXX");
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "test_gpu_train: cannot make a directory under /tmp\n");
        return 1;
    }
    const char *arch = strstr(c, "llama") ? "llama" : "gpt";
    int flash = strstr(c, "flash") != NULL;
    char ref_cfg[300], cfg[300];
    snprintf(ref_cfg, sizeof ref_cfg, "%s/ref.json", tmp);
    snprintf(cfg, sizeof cfg, "%s/case.json", tmp);
    double ref[STEPS], got[STEPS], plain[STEPS];
    int rc = 1;
    if (!strcmp(c, "checkpoint")) {
        rc = checkpoint_case(arch);
        goto done;
    }
    if (run_reference(ref_cfg, arch, 2, ref))
        goto done;
    if (cpu_case) {
        write_config(cfg, arch, "cpu", "self", 2, "");
        if (run(1, cfg, got))
            goto done;
        rc = compare("cpu (fp32)", ref, ref_gnorm, got);
    } else if (!strcmp(c, "gpt") || !strcmp(c, "llama") || flash) {
        write_config(cfg, arch, "cuda", "self", 2, "");
        if (run(1, cfg, plain))
            goto done;
        rc = compare("cuda (plain attention)", ref, ref_gnorm, plain);
        memcpy(plain_gnorm, last_gnorm, sizeof plain_gnorm);
        if (flash) {
            write_config(cfg, arch, "cuda", "self", 2, "\"flash_attention\": true");
            if (run(1, cfg, got)) {
                rc = 1;
                goto done;
            }
            rc |= compare("cuda (fused attention)", ref, ref_gnorm, got);
            rc |= compare("fused against plain", plain, plain_gnorm, got);
        }
    } else {
        int ranks = strcmp(c, "nccl1") ? 2 : 1;
        const char *layout = !strcmp(c, "nccl1") ? "\"sharding\": \"gradients\""
                             : !strcmp(c, "tp2") ? "\"tp\": 2"
                             : !strcmp(c, "pp2") ? "\"pp\": 2, \"schedule\": \"interleaved\""
                             : !strcmp(c, "dp2_zero2")
                                 ? "\"dp\": 2, \"sharding\": \"gradients\", \"dp_bucket_bytes\": 65536"
                                 : NULL;
        if (!layout) {
            fprintf(stderr, "test_gpu_train: unknown case %s\n", c);
            rc = 2;
            goto done;
        }
        /* the one-rank reference runs the same global batch: dp2 with 2
         * microbatches each is 4 microbatches on one rank */
        if (!strcmp(c, "dp2_zero2") && run_reference(ref_cfg, arch, 4, ref))
            goto done;
        write_config(cfg, arch, "cuda", ranks == 1 ? "nccl" : "mpi", 2, layout);
        if (run(ranks, cfg, got))
            goto done;
        rc = compare(c, ref, ref_gnorm, got);
    }
done:
    snprintf(cfg, sizeof cfg, "rm -rf %s", tmp);
    if (system(cfg) != 0)
        fprintf(stderr, "test_gpu_train: could not remove %s\n", tmp);
    return rc;
}
