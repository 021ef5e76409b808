/*
 * test_exec_request.c: what smdplan exec is asked (exec/exec_request.h).
 *
 * The defaults are the executor's (20 steps, peak learning rate 3e-4) with
 * the final rate a tenth of the peak unless given: 3e-4 -> 3e-5, and a
 * given --lr 6e-4 -> 6e-5. --scale reads every key within the planner's
 * limits and refuses an unknown key, a missing '=', a zero and an empty
 * value naming them. Each inconsistency of the options is refused naming
 * the option, in the order a person fixes them; the files named are
 * looked at (a missing data file or checkpoint, a hostfile's slots read).
 */
#include "test_util.h"

#include <stdlib.h>

#include "exec/exec_request.h"
#include "planner/plan_framework.h"
#include "test_dir.h"

static void defaults(void **state)
{
    (void)state;
    exec_request r;
    exec_request_default(&r);
    exec_config c;
    exec_config_default(&c);
    assert_int_equal(r.train.steps, c.train.steps);
    assert_rel(r.train.lr, c.train.lr, 0);
    assert_string_equal(r.data_kind, "synthetic");
    assert_string_equal(r.device, "cpu");
    assert_string_equal(r.transport, "");
    assert_rel(r.wait_timeout_s, EXEC_WAIT_TIMEOUT_S_DEFAULT, 0);
    assert_int_equal(r.threads, 1);
    assert_null(r.data_path);
    assert_int_equal(r.plan_id, 0);

    plan_config cfg;
    plan_config_default(&cfg);
    st_err err = {0};
    r.train.lr = 3e-4;
    assert_int_equal(exec_request_check(&r, &cfg, &err), ST_OK);
    assert_rel(r.train.min_lr, 3e-5, 1e-15);
    r.train.lr = 6e-4; /* checked again: the tenth follows the peak */
    assert_int_equal(exec_request_check(&r, &cfg, &err), ST_OK);
    assert_rel(r.train.min_lr, 6e-5, 1e-15);
    r.min_lr_given = 1;
    r.train.min_lr = 1e-5;
    assert_int_equal(exec_request_check(&r, &cfg, &err), ST_OK);
    assert_rel(r.train.min_lr, 1e-5, 0);
}

static void scale_read(void **state)
{
    (void)state;
    exec_scale sc;
    st_err err = {0};
    assert_int_equal(exec_scale_parse("layers=3,hidden=192,heads=6,kv_heads=2,ffn=768,seq=48,"
                                      "vocab=320", &sc, &err), ST_OK);
    assert_int_equal(sc.layers, 3);
    assert_int_equal(sc.hidden, 192);
    assert_int_equal(sc.heads, 6);
    assert_int_equal(sc.kv_heads, 2);
    assert_int_equal(sc.ffn, 768);
    assert_int_equal(sc.seq, 48);
    assert_int_equal(sc.vocab, 320);
    assert_int_equal(exec_scale_parse("hidden=96", &sc, &err), ST_OK);
    assert_int_equal(sc.hidden, 96);
    assert_int_equal(sc.layers, 0); /* not given */

    static const struct { const char *text, *msg; } bad[] = {
        {"depth=1", "--scale 'depth=1': unknown key 'depth'; allowed: layers, hidden, heads, "
                    "kv_heads, ffn, seq, vocab"},
        {"layers=2,hidden", "--scale 'layers=2,hidden': 'hidden' is not KEY=N (keys: layers, "
                            "hidden, heads, kv_heads, ffn, seq, vocab)"},
        {"", "--scale '': expected KEY=N,... with keys layers, hidden, heads, kv_heads, ffn, "
             "seq, vocab"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st_err_clear(&err);
        assert_int_equal(exec_scale_parse(bad[i].text, &sc, &err), ST_EINVAL);
        assert_string_equal(err.msg, bad[i].msg);
    }
    st_err_clear(&err);
    assert_int_not_equal(exec_scale_parse("heads=0", &sc, &err), ST_OK);
    assert_non_null(strstr(err.msg, "--scale heads"));
    char longer[300];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    st_err_clear(&err);
    assert_int_equal(exec_scale_parse(longer, &sc, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "expected KEY=N,..."));
}

/* r as given, checked: the message of its refusal ("" when accepted). */
static const char *refusal(exec_request *r, const plan_config *cfg, st_err *err)
{
    st_err_clear(err);
    return exec_request_check(r, cfg, err) == ST_OK ? "" : err->msg;
}

static void inconsistent_refused(void **state)
{
    (void)state;
    plan_config cfg;
    plan_config_default(&cfg);
    exec_request r;
    st_err err = {0};
#define FRESH() (exec_request_default(&r), plan_config_default(&cfg))
    FRESH();
    r.train.lr = 1e-4, r.train.min_lr = 1e-3, r.min_lr_given = 1;
    assert_string_equal(refusal(&r, &cfg, &err), "--min-lr 0.001: above --lr 0.0001");
    FRESH();
    r.train.steps = r.train.warmup_steps_unmeasured;
    char want[160];
    snprintf(want, sizeof want, "--steps %lld: the first %lld step%s not measured; give at "
             "least %lld", (long long)r.train.steps, (long long)r.train.steps,
             r.train.steps == 1 ? " is" : "s are", (long long)r.train.steps + 1);
    assert_string_equal(refusal(&r, &cfg, &err), want);
    FRESH();
    r.save_every = 7;
    assert_string_equal(refusal(&r, &cfg, &err), "--save-every 7: needs --save DIR");
    FRESH();
    r.out = "job.sbatch";
    assert_string_equal(refusal(&r, &cfg, &err), "--out job.sbatch: only with --emit slurm");
    FRESH();
    r.emit = "slurm", r.dry_run = 1;
    assert_string_equal(refusal(&r, &cfg, &err), "--emit and --dry-run: choose one");
    FRESH();
    r.import_dir = "runs/a", r.dry_run = 1;
    assert_string_equal(refusal(&r, &cfg, &err),
                        "--import runs/a: records a run that has run; not with --dry-run");
    FRESH();
    r.import_dir = "runs/a", r.run_dir = "runs/b";
    assert_string_equal(refusal(&r, &cfg, &err),
                        "--run-dir runs/b: with --import the run directory is runs/a");
    FRESH();
    r.exit_status = 9, r.exit_status_given = 1;
    assert_string_equal(refusal(&r, &cfg, &err), "--exit-status 9: only with --import");
    FRESH();
    r.plan_id = 12, r.shape_opt_given = 1;
    snprintf(r.shape_opt, sizeof r.shape_opt, "tp");
    assert_string_equal(refusal(&r, &cfg, &err), "--tp: the model and layout come from plan "
                                                 "record 12; shrink the model with --scale");
    FRESH();
    r.plan_rank = 3;
    assert_string_equal(refusal(&r, &cfg, &err), "--plan-rank 3: only with --plan ID");
#undef FRESH
}

static void device_refused(void **state)
{
    (void)state;
    plan_config cfg;
    exec_request r;
    st_err err = {0};
#define FRESH() (exec_request_default(&r), plan_config_default(&cfg))
    FRESH();
    r.framework_given = 1;
    cfg.framework = plan_framework_match("megatron", 0);
    assert_true(cfg.framework >= 0);
    assert_non_null(strstr(refusal(&r, &cfg, &err), ": smdplan exec runs the smdplan executor "
                                                     "(--framework smdplan)"));
    FRESH();
    r.framework_given = 1;
    cfg.framework = exec_layout_profile(1); /* the GPU's profile on the CPU */
    assert_string_equal(refusal(&r, &cfg, &err), "--framework smdplan-cuda: the executor's "
                                                 "profile on the cpu device is smdplan");
    FRESH();
    r.framework_given = 1;
    cfg.framework = exec_layout_profile(0);
    assert_string_equal(refusal(&r, &cfg, &err), "");
    FRESH();
    r.precision_given = 1;
    cfg.precision = PLAN_PREC_BF16;
    assert_string_equal(refusal(&r, &cfg, &err), "--precision bf16: the CPU device computes in "
                                                 "fp32 (bf16 with --device cuda)");
    FRESH();
    snprintf(r.device, sizeof r.device, "cuda");
    r.precision_given = 1;
    cfg.precision = PLAN_PREC_FP32;
    assert_non_null(strstr(refusal(&r, &cfg, &err), "--precision fp32: the CUDA device computes "
                                                    "in bf16"));
    FRESH();
    snprintf(r.transport, sizeof r.transport, "nccl");
    assert_string_equal(refusal(&r, &cfg, &err), "--transport nccl: only with --device cuda "
                                                 "(the CPU device runs over mpi)");
    FRESH();
    r.gpus_per_host = 4;
    assert_string_equal(refusal(&r, &cfg, &err), "--gpus-per-host 4: only with --device cuda");
    FRESH();
    cfg.flash_attention = 1;
    assert_non_null(strstr(refusal(&r, &cfg, &err), "--flash-attention on: the CPU device has "
                                                    "no fused attention kernel"));
    FRESH();
    snprintf(r.device, sizeof r.device, "cuda");
    snprintf(r.transport, sizeof r.transport, "mpi");
    r.gpus_per_host = 4;
    cfg.flash_attention = 1;
    assert_string_equal(refusal(&r, &cfg, &err), "");
#undef FRESH
}

static void files_looked_at(void **state)
{
    test_scratch *s = *state;
    plan_config cfg;
    plan_config_default(&cfg);
    exec_request r;
    st_err err = {0};
    char path[1024], want[1200];

    exec_request_default(&r);
    snprintf(path, sizeof path, "%s/corpus.txt", s->dir);
    snprintf(r.data_kind, sizeof r.data_kind, "text");
    r.data_path = path;
    snprintf(want, sizeof want, "--data text:%s: no such file", path);
    assert_string_equal(refusal(&r, &cfg, &err), want);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("some text\n", f);
    fclose(f);
    assert_string_equal(refusal(&r, &cfg, &err), "");
    r.resume_dir = path; /* a file, not a directory */
    snprintf(want, sizeof want, "--resume %s: no such directory", path);
    assert_string_equal(refusal(&r, &cfg, &err), want);
    r.resume_dir = s->dir;
    assert_string_equal(refusal(&r, &cfg, &err), "");

    exec_request_default(&r);
    snprintf(path, sizeof path, "%s/hosts", s->dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("node1 slots=6\nnode2 slots=3 # smaller\n", f);
    fclose(f);
    r.hostfile = path;
    assert_string_equal(refusal(&r, &cfg, &err), "");
    assert_int_equal(r.hostfile_slots, 6);
    r.hostfile = s->dir; /* a directory */
    assert_non_null(strstr(refusal(&r, &cfg, &err), "a directory, not a regular file"));
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(defaults),
          cmocka_unit_test(scale_read),
          cmocka_unit_test(inconsistent_refused),
          cmocka_unit_test(device_refused),
          cmocka_unit_test_setup_teardown(files_looked_at, test_scratch_setup,
                                          test_scratch_teardown))
