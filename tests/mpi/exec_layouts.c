/*
 * exec_layouts.c: the multi-rank executor against the one-rank executor.
 *
 *   exec_layouts MPIEXEC SMDPLAN-RANK FIXTURES CASE
 *
 * A layout case trains the same tiny model from the same seed on the same
 * global batch twice: on one rank, and on the case's layout under
 * `mpiexec -n R --oversubscribe smdplan-rank`. Both runs dump their final
 * weights by global tensor (debug.dump_weights), and the case passes when
 * every step's loss and every weight agree within the case's tolerance
 * (printed with the differences found). In double precision (the cpu64
 * device) only the order of sums differs, so the tolerance is 1e-10; the
 * fp32 case allows 1e-4 on the weights (AdamW divides by the root of the
 * second moment, which turns rounding in small gradients into visible
 * steps) and 1e-5 on the loss.
 *
 * Across the cases every schedule (simple, interleaved, virtual, zb-h1),
 * every sharding (none, optimizer, gradients, params), every recompute
 * (none, selective, full), sequence parallelism, dp_overlap on and off,
 * both architectures and every placement order appear.
 *
 * Other cases: "resume" (a run interrupted after 2 of 3 steps, saved and
 * resumed, ends bit for bit where the uninterrupted run ends), "reshard"
 * (a checkpoint of one layout continues on two others), "refuse" (a
 * knob the executor does not run: exit 2, one line naming it, a failed
 * RESULT.json), "fail_error" and "fail_hang" (one rank fails, or stops
 * answering: the job ends within 30 s, non-zero, with a failed RESULT.json
 * naming the rank and the error or the timeout).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/exec_comm.h"
#include "exec/exec_dump.h"

static const char *mpiexec, *rankprog, *fixtures;
static char tmp[256];

typedef struct layout_case {
    const char *name;
    int ranks;
    const char *arch;
    const char *device;
    int dp;                      /* the reference runs dp x microbatches microbatches */
    const char *layout;          /* JSON members of "layout" */
    int text;                    /* train on the text fixture (vocab 256) */
} layout_case;

static const layout_case cases[] = {
    {"tp2", 2, "gpt", "cpu64", 1, "\"tp\": 2", 0},
    {"tp2_sp", 2, "gpt", "cpu64", 1,
     "\"tp\": 2, \"sequence_parallel\": true, \"recompute\": \"selective\"", 0},
    {"pp2_simple", 2, "gpt", "cpu64", 1,
     "\"pp\": 2, \"schedule\": \"simple\", \"active_microbatches\": 2, \"recompute\": \"full\", "
     "\"recompute_group\": 2", 0},
    {"pp2_virtual", 2, "gpt", "cpu64", 1,
     "\"pp\": 2, \"schedule\": \"virtual\", \"virtual_stages\": 2", 0},
    {"pp2_zb", 2, "llama", "cpu64", 1,
     "\"pp\": 2, \"schedule\": \"zb-h1\", \"recompute\": \"full\", \"recompute_group\": 1", 0},
    {"dp2", 2, "gpt", "cpu64", 2, "\"dp\": 2, \"dp_bucket_bytes\": 4096", 0},
    {"dp2_zero1", 2, "llama", "cpu64", 2,
     "\"dp\": 2, \"sharding\": \"optimizer\", \"dp_overlap\": false", 0},
    {"dp2_zero2", 2, "gpt", "cpu64", 2,
     "\"dp\": 2, \"sharding\": \"gradients\", \"dp_bucket_bytes\": 2048", 0},
    {"dp2_zero3", 2, "llama", "cpu64", 2, "\"dp\": 2, \"sharding\": \"params\"", 0},
    {"tp2pp2", 4, "llama", "cpu64", 1,
     "\"tp\": 2, \"pp\": 2, \"sequence_parallel\": true, \"recompute\": \"selective\", "
     "\"placement\": \"PDT\"", 0},
    {"tp2pp2dp2", 8, "gpt", "cpu64", 2,
     "\"tp\": 2, \"pp\": 2, \"dp\": 2, \"schedule\": \"zb-h1\", \"sharding\": \"params\", "
     "\"sequence_parallel\": true, \"placement\": \"TPD\"", 0},
    {"tp2pp2dp2_fp32", 8, "llama", "cpu", 2,
     "\"tp\": 2, \"pp\": 2, \"dp\": 2, \"schedule\": \"virtual\", \"virtual_stages\": 2, "
     "\"sharding\": \"optimizer\", \"recompute\": \"full\", \"recompute_group\": 1, "
     "\"dp_overlap\": false", 1},
};

#define NCASES (int)(sizeof cases / sizeof cases[0])
#define STEPS 3

/* A config: the tiny model, 3 steps, the case's layout. */
static void write_config(const char *path, const char *arch, const char *device, int text,
                         const char *layout, const char *transport, const char *more)
{
    char json[4096];
    snprintf(json, sizeof json,
             "{\"version\": 1, \"model\": {\"name\": \"tiny\", \"arch\": \"%s\", \"layers\": 4,"
             " \"hidden\": 16, \"heads\": 4, \"kv_heads\": %d, \"ffn\": 32, \"seq\": %d, "
             "\"vocab\": %d}, \"layout\": {\"micro_batch\": 2, %s}, \"train\": {\"steps\": %d, "
             "\"lr\": 0.01, \"min_lr\": 0.001, \"warmup_steps\": 1, \"seed\": 7}, "
             "\"data\": {\"kind\": \"%s\", \"path\": %s%s%s}, \"device\": \"%s\", "
             "\"transport\": \"%s\", \"progress\": false, \"timeout_s\": 20%s}",
             arch, strcmp(arch, "llama") == 0 ? 2 : 4, text ? 16 : 8, text ? 256 : 32, layout,
             STEPS, text ? "text" : "synthetic", text ? "\"" : "",
             text ? fixtures : "null", text ? "/exec_tiny_text.txt\"" : "", device, transport,
             more ? more : "");
    exec_config c;
    st_err err = {0};
    if (exec_config_parse(json, &c, &err) != ST_OK) {
        fprintf(stderr, "exec_layouts: bad test config: %s\n%s\n", err.msg, json);
        exit(1);
    }
    FILE *f = fopen(path, "w");
    if (!f || fputs(json, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "exec_layouts: cannot write %s\n", path);
        exit(1);
    }
}

/* Run the rank program on ranks ranks (directly for one); its exit code. */
static int run(int ranks, const char *cfg, const char *res, double *seconds)
{
    char cmd[2048], log[300];
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    if (ranks == 1)
        snprintf(cmd, sizeof cmd, "timeout 120 %s --config %s --result %s > %s 2>&1", rankprog,
                 cfg, res, log);
    else
        snprintf(cmd, sizeof cmd,
                 "timeout 120 %s -n %d --oversubscribe %s --config %s --result %s > %s 2>&1",
                 mpiexec, ranks, rankprog, cfg, res, log);
    double t0 = exec_now_s();
    int st = system(cmd);
    if (seconds)
        *seconds = exec_now_s() - t0;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (rc != 0) {
        char show[400];
        snprintf(show, sizeof show, "cat %s >&2", log);
        if (system(show) != 0)
            fprintf(stderr, "(no log)\n");
    }
    return rc;
}

static int mkdir_p(const char *path)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", path);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot create %s\n", path);
        return 1;
    }
    return 0;
}

static int read_result(const char *path, exec_result *r)
{
    st_err err = {0};
    if (exec_result_read(path, r, &err) != ST_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    return 0;
}

/* Largest |a - b| of two weight dumps, -1 on failure. */
static double weights_diff(const char *da, const char *db)
{
    double *a = NULL, *b = NULL, worst = -1;
    int64_t na = 0, nb = 0;
    st_err err = {0};
    if (exec_dump_read(da, &a, &na, &err) != ST_OK || exec_dump_read(db, &b, &nb, &err) != ST_OK) {
        fprintf(stderr, "%s\n", err.msg);
    } else if (na != nb) {
        fprintf(stderr, "dumps of %lld and %lld parameters\n", (long long)na, (long long)nb);
    } else {
        worst = 0;
        for (int64_t i = 0; i < na; i++)
            worst = fmax(worst, fabs(a[i] - b[i]));
    }
    free(a);
    free(b);
    return worst;
}

static int compare_case(const layout_case *c)
{
    char cfg[300], res[300], dump[300], rcfg[300], rres[300], rdump[300], layout[512], more[400];
    snprintf(rcfg, sizeof rcfg, "%s/ref.json", tmp);
    snprintf(rres, sizeof rres, "%s/ref-result.json", tmp);
    snprintf(rdump, sizeof rdump, "%s/ref-weights", tmp);
    snprintf(cfg, sizeof cfg, "%s/case.json", tmp);
    snprintf(res, sizeof res, "%s/case-result.json", tmp);
    snprintf(dump, sizeof dump, "%s/case-weights", tmp);
    if (mkdir_p(rdump) || mkdir_p(dump))
        return 1;
    snprintf(more, sizeof more, ", \"debug\": {\"dump_weights\": \"%s\"}", rdump);
    snprintf(layout, sizeof layout, "\"microbatches\": %d", 4 * c->dp);
    write_config(rcfg, c->arch, c->device, c->text, layout, "self", more);
    snprintf(more, sizeof more, ", \"debug\": {\"dump_weights\": \"%s\"}", dump);
    snprintf(layout, sizeof layout, "\"microbatches\": 4, %s", c->layout);
    write_config(cfg, c->arch, c->device, c->text, layout, "mpi", more);
    double t_ref = 0, t_case = 0;
    if (run(1, rcfg, rres, &t_ref) != 0 || run(c->ranks, cfg, res, &t_case) != 0)
        return 1;
    exec_result a, b;
    if (read_result(rres, &a) || read_result(res, &b))
        return 1;
    int fail = 0;
    double dloss = 0;
    if (a.nsteps != STEPS || b.nsteps != STEPS || b.ranks != c->ranks) {
        fprintf(stderr, "steps %d and %d, ranks %d\n", a.nsteps, b.nsteps, b.ranks);
        fail = 1;
    }
    for (int i = 0; !fail && i < STEPS; i++)
        dloss = fmax(dloss, fabs(a.steps[i].loss - b.steps[i].loss));
    double dw = weights_diff(rdump, dump);
    int f64 = strcmp(c->device, "cpu64") == 0;
    double tol_loss = f64 ? 1e-10 : 1e-5, tol_w = f64 ? 1e-10 : 1e-4;
    printf("%s: %d ranks (%s, %s): losses %.6f %.6f %.6f; max |loss diff| %.3g (tolerance %g), "
           "max |weight diff| %.3g (tolerance %g); %.2f s and %.2f s\n",
           c->name, c->ranks, c->arch, c->device, b.steps[0].loss, b.steps[1].loss,
           b.steps[2].loss, dloss, tol_loss, dw, tol_w, t_ref, t_case);
    if (!(dloss <= tol_loss) || !(dw >= 0 && dw <= tol_w))
        fail = 1;
    /* the loss moved: the comparison is not of two untrained models */
    if (!(fabs(b.steps[2].loss - b.steps[0].loss) > 1e-6))
        fail = 1;
    exec_result_free(&a);
    exec_result_free(&b);
    return fail;
}

/* An interrupted run, saved and resumed on its layout, ends exactly where
 * the uninterrupted run ends (fp32, ZeRO-1 shards, 4 ranks). */
static int resume_case(void)
{
    const char *layout = "\"microbatches\": 2, \"tp\": 2, \"dp\": 2, \"sharding\": "
                         "\"optimizer\", \"sequence_parallel\": true";
    char cfg[300], res[300], full[300], resumed[300], ck[300], more[800];
    snprintf(cfg, sizeof cfg, "%s/c.json", tmp);
    snprintf(res, sizeof res, "%s/r.json", tmp);
    snprintf(full, sizeof full, "%s/full", tmp);
    snprintf(resumed, sizeof resumed, "%s/resumed", tmp);
    snprintf(ck, sizeof ck, "%s/ckpt", tmp);
    if (mkdir_p(full) || mkdir_p(resumed))
        return 1;
    exec_result a, b;
    snprintf(more, sizeof more, ", \"debug\": {\"dump_weights\": \"%s\"}", full);
    write_config(cfg, "gpt", "cpu", 0, layout, "mpi", more);
    if (run(4, cfg, res, NULL) || read_result(res, &a))
        return 1;
    /* the same run stopped after step 2 with a checkpoint (step-2 is the
     * last one kept), then resumed to the end */
    char json_more[800];
    snprintf(json_more, sizeof json_more,
             ", \"checkpoint\": {\"save_dir\": \"%s\", \"save_every\": 1}", ck);
    write_config(cfg, "gpt", "cpu", 0, layout, "mpi", json_more);
    /* stop_after lives in train: patch it in */
    char edit[1200];
    snprintf(edit, sizeof edit, "sed -i 's/\"warmup_steps\": 1,/\"warmup_steps\": 1, "
             "\"stop_after\": 2,/' %s", cfg);
    if (system(edit) != 0 || run(4, cfg, res, NULL) != 0)
        return 1;
    snprintf(json_more, sizeof json_more,
             ", \"checkpoint\": {\"resume_dir\": \"%s\"}, \"debug\": {\"dump_weights\": "
             "\"%s\"}", ck, resumed);
    write_config(cfg, "gpt", "cpu", 0, layout, "mpi", json_more);
    if (run(4, cfg, res, NULL) || read_result(res, &b))
        return 1;
    int fail = b.nsteps != STEPS - 2 || b.steps[0].step != 3;
    double dl = 0;
    for (int i = 0; !fail && i < b.nsteps; i++)
        dl = fmax(dl, fabs(a.steps[2 + i].loss - b.steps[i].loss));
    double dw = weights_diff(full, resumed);
    printf("resume: steps 3-%d after a restart at step 2: max |loss diff| %.3g, max |weight "
           "diff| %.3g (both must be 0: bit for bit)\n", STEPS, dl, dw);
    fail |= dl != 0 || dw != 0;
    /* a checkpoint does not load on another model */
    write_config(cfg, "llama", "cpu", 0, "\"microbatches\": 4, \"tp\": 2", "mpi", json_more);
    int rc = run(2, cfg, res, NULL);
    exec_result_free(&a);
    exec_result_free(&b);
    if (rc != 1 || read_result(res, &b)) {
        fprintf(stderr, "resume with another model: exit %d\n", rc);
        return 1;
    }
    printf("resume with another model: exit %d, \"%s\"\n", rc, b.error);
    fail |= strcmp(b.status, "failed") != 0 || !strstr(b.error, "different from this run");
    exec_result_free(&b);
    return fail;
}

/* A checkpoint written on one layout continues on others (resharding):
 * stopped after step 1 of 3 on TP2 x DP2 with ZeRO-2 (4 ranks), resumed on
 * PP2 with virtual stages and on DP2 with ZeRO-3; both end where one rank
 * ends (double precision, 1e-10). */
static int reshard_case(void)
{
    char cfg[300], res[300], ref[300], out[300], ck[300], more[800], edit[1200];
    snprintf(cfg, sizeof cfg, "%s/c.json", tmp);
    snprintf(res, sizeof res, "%s/r.json", tmp);
    snprintf(ref, sizeof ref, "%s/ref", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    snprintf(ck, sizeof ck, "%s/ckpt", tmp);
    if (mkdir_p(ref) || mkdir_p(out))
        return 1;
    snprintf(more, sizeof more, ", \"debug\": {\"dump_weights\": \"%s\"}", ref);
    write_config(cfg, "llama", "cpu64", 0, "\"microbatches\": 4", "self", more);
    exec_result a, b;
    if (run(1, cfg, res, NULL) || read_result(res, &a))
        return 1;
    snprintf(more, sizeof more, ", \"checkpoint\": {\"save_dir\": \"%s\"}", ck);
    write_config(cfg, "llama", "cpu64", 0,
                 "\"microbatches\": 2, \"tp\": 2, \"dp\": 2, \"sharding\": \"gradients\"",
                 "mpi", more);
    snprintf(edit, sizeof edit, "sed -i 's/\"warmup_steps\": 1,/\"warmup_steps\": 1, "
             "\"stop_after\": 1,/' %s", cfg);
    if (system(edit) != 0 || run(4, cfg, res, NULL) != 0)
        return 1;
    const char *targets[2][2] = {
        {"pp2 virtual", "\"microbatches\": 4, \"pp\": 2, \"schedule\": \"virtual\", "
                        "\"virtual_stages\": 2"},
        {"dp2 zero3", "\"microbatches\": 2, \"dp\": 2, \"sharding\": \"params\""},
    };
    int fail = 0;
    for (int i = 0; i < 2; i++) {
        char rm[400];
        snprintf(rm, sizeof rm, "rm -f %s/*", out);
        if (system(rm) != 0)
            return 1;
        snprintf(more, sizeof more, ", \"checkpoint\": {\"resume_dir\": \"%s\"}, \"debug\": "
                 "{\"dump_weights\": \"%s\"}", ck, out);
        write_config(cfg, "llama", "cpu64", 0, targets[i][1], "mpi", more);
        if (run(2, cfg, res, NULL) || read_result(res, &b))
            return 1;
        double dl = 0;
        for (int k = 0; k < b.nsteps; k++)
            dl = fmax(dl, fabs(a.steps[1 + k].loss - b.steps[k].loss));
        double dw = weights_diff(ref, out);
        printf("reshard: TP2 x DP2 ZeRO-2 at step 1 -> %s, steps 2-%d: max |loss diff| %.3g, "
               "max |weight diff| %.3g (tolerance 1e-10)\n", targets[i][0], STEPS, dl, dw);
        fail |= b.nsteps != STEPS - 1 || !(dl <= 1e-10) || !(dw >= 0 && dw <= 1e-10);
        exec_result_free(&b);
    }
    exec_result_free(&a);
    return fail;
}

/* A knob the executor does not run: exit 2 before any work, one line. */
static int refuse_case(void)
{
    char cfg[300], res[300];
    snprintf(cfg, sizeof cfg, "%s/c.json", tmp);
    snprintf(res, sizeof res, "%s/r.json", tmp);
    FILE *f = fopen(cfg, "w");
    fputs("{\"version\": 1, \"layout\": {\"cp\": 2}}", f);
    fclose(f);
    int rc = run(2, cfg, res, NULL);
    exec_result r;
    if (read_result(res, &r))
        return 1;
    printf("refuse: exit %d, \"%s\"\n", rc, r.error);
    int fail = rc != 2 || strcmp(r.status, "failed") != 0 || !strstr(r.error, "layout.cp 2");
    exec_result_free(&r);
    return fail;
}

/* One rank fails (error) or stops answering (hang) at step 2 of 3. */
static int fail_case(int hang)
{
    char cfg[300], res[300], more[300];
    snprintf(cfg, sizeof cfg, "%s/c.json", tmp);
    snprintf(res, sizeof res, "%s/r.json", tmp);
    snprintf(more, sizeof more, ", \"debug\": {\"fail_rank\": 2, \"fail_step\": 2, "
             "\"fail_mode\": \"%s\"}", hang ? "hang" : "error");
    write_config(cfg, "gpt", "cpu", 0, "\"microbatches\": 4, \"pp\": 2, \"dp\": 2", "mpi",
                 more);
    /* a short timeout so the test is quick */
    char edit[400];
    snprintf(edit, sizeof edit, "sed -i 's/\"timeout_s\": 20/\"timeout_s\": 2/' %s", cfg);
    if (system(edit) != 0)
        return 1;
    double t = 0;
    int rc = run(4, cfg, res, &t);
    exec_result r;
    if (read_result(res, &r))
        return 1;
    printf("%s: exit %d after %.1f s, failed_rank %d, \"%s\"\n", hang ? "fail_hang" : "fail_error",
           rc, t, r.failed_rank, r.error);
    int fail = rc == 0 || rc == 124 || t > 30 || strcmp(r.status, "failed") != 0;
    if (hang)
        fail |= !strstr(r.error, "timeout after 2 s waiting for");
    else
        fail |= r.failed_rank != 2 || !strstr(r.error, "failure injected at step 2");
    exec_result_free(&r);
    return fail;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: exec_layouts MPIEXEC SMDPLAN-RANK FIXTURES CASE\n");
        return 2;
    }
    mpiexec = argv[1];
    rankprog = argv[2];
    fixtures = argv[3];
    const char *name = argv[4];
    snprintf(tmp, sizeof tmp, "/tmp/smd_exec_layouts_XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = -1;
    for (int i = 0; i < NCASES; i++)
        if (strcmp(cases[i].name, name) == 0)
            rc = compare_case(&cases[i]);
    if (strcmp(name, "resume") == 0)
        rc = resume_case();
    else if (strcmp(name, "reshard") == 0)
        rc = reshard_case();
    else if (strcmp(name, "refuse") == 0)
        rc = refuse_case();
    else if (strcmp(name, "fail_error") == 0)
        rc = fail_case(0);
    else if (strcmp(name, "fail_hang") == 0)
        rc = fail_case(1);
    if (rc < 0) {
        fprintf(stderr, "exec_layouts: unknown case %s\n", name);
        rc = 2;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    printf("%s: %s\n", name, rc == 0 ? "ok" : "FAILED");
    return rc;
}
