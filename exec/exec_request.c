/*
 * exec_request.c: what smdplan exec is asked (exec_request.h): its
 * defaults, its --scale value read, and its checks, made before anything
 * is resolved, launched or written so that bad input is one line and exit
 * 2 with nothing left behind.
 *
 * The checks follow the executor: it measures from the step after its
 * warm-up steps (exec_train's warmup_steps_unmeasured), so fewer steps
 * measure nothing; it is the smdplan stack, in fp32 on the CPU and bf16
 * (fp32 master weights) on the GPU (data/frameworks.json's "smdplan" and
 * "smdplan-cuda"); only the CUDA device has a transport choice, GPUs per
 * host and the fused attention kernel.
 */
#include "exec/exec_request.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/units.h"
#include "launch/launch_job.h"
#include "planner/plan_framework.h"

void exec_request_default(exec_request *r)
{
    memset(r, 0, sizeof *r);
    exec_config defaults;
    exec_config_default(&defaults);
    r->train = defaults.train;
    snprintf(r->data_kind, sizeof r->data_kind, "synthetic");
    r->wait_timeout_s = EXEC_WAIT_TIMEOUT_S_DEFAULT;
    r->threads = 1;
    snprintf(r->device, sizeof r->device, "cpu");
}

int exec_scale_parse(const char *s, exec_scale *sc, st_err *err)
{
    memset(sc, 0, sizeof *sc);
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf || !*s)
        return ST_RAISE(err, ST_EINVAL, "--scale '%s': expected KEY=N,... with keys layers, hidden, "
                        "heads, kv_heads, ffn, seq, vocab", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return ST_RAISE(err, ST_EINVAL, "--scale '%s': '%s' is not KEY=N (keys: layers, hidden, "
                            "heads, kv_heads, ffn, seq, vocab)", s, tok);
        *eq = '\0';
        /* the planner's limits; the MLP's is its largest ratio to hidden */
        struct { const char *key; int64_t *dst; int64_t max; } keys[] = {
            {"layers", &sc->layers, PLAN_MAX_LAYERS}, {"hidden", &sc->hidden, PLAN_MAX_HIDDEN},
            {"heads", &sc->heads, PLAN_MAX_HEADS},    {"kv_heads", &sc->kv_heads, PLAN_MAX_HEADS},
            {"ffn", &sc->ffn, 16 * (int64_t)PLAN_MAX_HIDDEN}, {"seq", &sc->seq, PLAN_MAX_SEQ},
            {"vocab", &sc->vocab, PLAN_MAX_VOCAB}};
        int k = -1;
        for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++)
            if (!strcmp(tok, keys[i].key))
                k = i;
        if (k < 0)
            return ST_RAISE(err, ST_EINVAL, "--scale '%s': unknown key '%s'; allowed: layers, hidden, "
                            "heads, kv_heads, ffn, seq, vocab", s, tok);
        char what[48];
        snprintf(what, sizeof what, "--scale %s", tok);
        int rc = units_parse_int(eq + 1, what, 1, keys[k].max, keys[k].dst, err);
        if (rc)
            return rc;
    }
    return ST_OK;
}

int exec_request_data(exec_request *r, const char *spec, st_err *err)
{
    const char *colon = strchr(spec, ':');
    if (!strcmp(spec, "synthetic")) {
        snprintf(r->data_kind, sizeof r->data_kind, "synthetic");
        r->data_path = NULL;
        return ST_OK;
    }
    if ((!strncmp(spec, "text:", 5) || !strncmp(spec, "tokens:", 7)) && colon[1]) {
        snprintf(r->data_kind, sizeof r->data_kind, "%.*s", (int)(colon - spec), spec);
        r->data_path = colon + 1;
        return ST_OK;
    }
    return ST_RAISE(err, ST_EINVAL, "--data '%s': allowed synthetic, text:FILE, tokens:FILE",
                    spec);
}

/* The training and what the run makes: -1 when consistent, else the
 * status raised. */
static int check_run(const exec_request *r, st_err *err)
{
    if (r->train.min_lr > r->train.lr)
        return ST_RAISE(err, ST_EINVAL, "--min-lr %g: above --lr %g", r->train.min_lr,
                        r->train.lr);
    if (r->train.steps <= r->train.warmup_steps_unmeasured)
        return ST_RAISE(err, ST_EINVAL, "--steps %lld: the first %lld step%s not measured; give "
                        "at least %lld", (long long)r->train.steps,
                        (long long)r->train.warmup_steps_unmeasured,
                        r->train.warmup_steps_unmeasured == 1 ? " is" : "s are",
                        (long long)r->train.warmup_steps_unmeasured + 1);
    if (r->save_every && !r->save_dir)
        return ST_RAISE(err, ST_EINVAL, "--save-every %d: needs --save DIR", r->save_every);
    if (r->out && !r->emit)
        return ST_RAISE(err, ST_EINVAL, "--out %s: only with --emit slurm", r->out);
    if (r->emit && r->dry_run)
        return ST_RAISE(err, ST_EINVAL, "--emit and --dry-run: choose one");
    if (r->import_dir && (r->emit || r->dry_run))
        return ST_RAISE(err, ST_EINVAL, "--import %s: records a run that has run; not with --%s",
                        r->import_dir, r->emit ? "emit" : "dry-run");
    if (r->import_dir && r->run_dir)
        return ST_RAISE(err, ST_EINVAL, "--run-dir %s: with --import the run directory is %s",
                        r->run_dir, r->import_dir);
    if (r->exit_status_given && !r->import_dir)
        return ST_RAISE(err, ST_EINVAL, "--exit-status %d: only with --import", r->exit_status);
    if (r->plan_id && r->shape_opt_given)
        return ST_RAISE(err, ST_EINVAL, "--%s: the model and layout come from plan record %lld; "
                        "shrink the model with --scale", r->shape_opt, (long long)r->plan_id);
    if (r->plan_rank && !r->plan_id)
        return ST_RAISE(err, ST_EINVAL, "--plan-rank %d: only with --plan ID", r->plan_rank);
    return -1;
}

/* The stack, the precision and what only the CUDA device has: -1 when
 * consistent, else the status raised. */
static int check_device(const exec_request *r, const plan_config *cfg, int cuda, st_err *err)
{
    const char *fw = plan_framework_get(cfg->framework)->key;
    const char *precision = plan_precision_name((plan_precision)cfg->precision);
    if (r->framework_given && plan_framework_get(cfg->framework)->family != PLAN_FW_SMDPLAN)
        return ST_RAISE(err, ST_EINVAL, "--framework %s: smdplan exec runs the smdplan executor "
                        "(--framework smdplan)", fw);
    if (r->framework_given && cfg->framework != plan_framework_match("smdplan", 0) &&
        cfg->framework != exec_layout_profile(cuda))
        return ST_RAISE(err, ST_EINVAL, "--framework %s: the executor's profile on the %s device "
                        "is %s", fw, r->device, plan_framework_get(exec_layout_profile(cuda))->key);
    if (r->precision_given && !cuda && cfg->precision != PLAN_PREC_FP32)
        return ST_RAISE(err, ST_EINVAL, "--precision %s: the CPU device computes in fp32 (bf16 "
                        "with --device cuda)", precision);
    if (r->precision_given && cuda && cfg->precision != PLAN_PREC_BF16)
        return ST_RAISE(err, ST_EINVAL, "--precision %s: the CUDA device computes in bf16 (with "
                        "fp32 master weights and optimizer state)", precision);
    if (r->transport[0] && !cuda)
        return ST_RAISE(err, ST_EINVAL, "--transport %s: only with --device cuda (the CPU device "
                        "runs over mpi)", r->transport);
    if (r->gpus_per_host && !cuda)
        return ST_RAISE(err, ST_EINVAL, "--gpus-per-host %d: only with --device cuda",
                        r->gpus_per_host);
    if (cfg->flash_attention > 0 && !cuda)
        return ST_RAISE(err, ST_EINVAL, "--flash-attention on: the CPU device has no fused "
                        "attention kernel (it runs with --device cuda)");
    return -1;
}

int exec_request_check(exec_request *r, const plan_config *cfg, st_err *err)
{
    int cuda = !strcmp(r->device, "cuda");
    /* the cosine decay ends at 10% of the peak, as GPT-3 trained (Brown et al.
     * 2020, Appendix B) */
    if (!r->min_lr_given)
        r->train.min_lr = r->train.lr * 0.1;
    int rc = check_run(r, err);
    if (rc < 0)
        rc = check_device(r, cfg, cuda, err);
    if (rc >= 0)
        return rc;
    struct stat sb;
    if (r->data_path && (stat(r->data_path, &sb) != 0 || !S_ISREG(sb.st_mode)))
        return ST_RAISE(err, ST_EINVAL, "--data %s:%s: no such file", r->data_kind, r->data_path);
    if (r->resume_dir && (stat(r->resume_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        return ST_RAISE(err, ST_EINVAL, "--resume %s: no such directory", r->resume_dir);
    if (r->hostfile) { /* a regular file (a FIFO would block mpirun), its slots */
        launch_hostfile hf;
        rc = launch_hostfile_read(r->hostfile, &hf, err);
        if (rc != ST_OK)
            return rc;
        r->hostfile_slots = hf.most_slots;
    }
    return ST_OK;
}
