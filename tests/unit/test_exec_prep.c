/*
 * test_exec_prep.c: a run of smdplan exec phase by phase
 * (exec/exec_prep.h), as the command calls them.
 *
 * The job: the 13 x 1536 GPT (12 heads, sequence 1000, vocabulary 51200)
 * under tp 2 x pp 2 from the layout flags alone, shrunk with --scale to 4
 * layers, hidden 192, 6 heads, sequence 48, vocabulary 320: 4 ranks, the
 * default 2 x pp = 4 microbatches of one sequence, so a global batch of 4
 * and 4 x 48 = 192 tokens a step; the MLP keeps its ratio (6144 / 1536 =
 * 4: ffn 768). Its CONFIG.json reads back as the same layout; its command
 * is mpirun -n 4 on the rank program with the run directory's CONFIG.json;
 * a dry run's JSON carries both; the limit without --timeout is the floor
 * of 600 s (a step of this size is predicted in well under a second);
 * the run directory is made once, with CONFIG.json in it.
 *
 * What it came to: an import without RESULT.json with the launcher's exit
 * status 137 is a failure saying so; with a RESULT.json of the job whose
 * measured steps are 0.3, 0.1, 0.4 and 0.2 s (after a warm-up of 9 s) it
 * is ok at the median 0.25 s, 192 / 0.25 = 768 tokens/s; a RESULT.json of
 * 3 ranks is not this run's and nothing is recorded. A launched command
 * that exits 3 without a result fails with that status; one that exits 0
 * after writing a RESULT.json that does not read fails with why it does
 * not. A CUDA job whose ranks share one GPU runs over mpi, without bucket
 * overlap.
 */
#include "test_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "data/data.h"
#include "exec/exec_prep.h"
#include "test_dir.h"
#include "test_models.h"

/* What a test prepares: the request and the plan's inputs it borrows. */
typedef struct fixture {
    exec_request r;
    plan_config cfg;
    plan_catalog cat;
    plan_model m;
    exec_prep p;
} fixture;

/* The job above on the CPU, with the fixture catalog's host-test entry
 * (--host host-test), in run directory dir (NULL: the default). */
static fixture *fixture_new(const char *dir)
{
    setenv("SMDPLAN_DATA", SMD_TEST_DATA_DIR, 1);
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &f->cat, &err), ST_OK);
    assert_int_equal(data_catalog_merge(&f->cat, SMD_TEST_FIXTURES "/catalog_host.json", &err),
                     ST_OK);
    exec_request_default(&f->r);
    f->r.train.steps = 5;
    f->r.host_type = "host-test";
    f->r.run_dir = dir;
    f->r.dry_run = 1; /* the backends the ranks open are not looked for */
    f->r.scale_text = "layers=4,hidden=192,heads=6,seq=48,vocab=320";
    assert_int_equal(exec_scale_parse(f->r.scale_text, &f->r.scale, &err), ST_OK);
    plan_config_default(&f->cfg);
    f->cfg.tp = 2;
    f->cfg.pp = 2;
    f->cfg.framework = exec_layout_profile(0);
    f->cfg.precision = PLAN_PREC_FP32;
    assert_int_equal(exec_request_check(&f->r, &f->cfg, &err), ST_OK);
    f->m = test_gpt_13x1536();
    return f;
}

static void fixture_free(fixture *f)
{
    exec_prep_free(&f->p);
    plan_catalog_free(&f->cat);
    free(f);
}

/* The job, CONFIG.json and the command, as far as the command goes before
 * it prints a dry run. */
static void prepare(fixture *f)
{
    st_err err = {0};
    exec_prep_init(&f->p, &f->r, "testhost", "host-testhost");
    assert_int_equal(exec_prep_job(&f->p, &f->cfg, &f->cat, &f->m, NULL, &err), ST_OK);
    assert_int_equal(exec_prep_config(&f->p, &err), ST_OK);
    assert_int_equal(exec_prep_command(&f->p, "/opt/bin/smdplan-rank", &err), ST_OK);
}

static void job_config_command(void **state)
{
    test_scratch *s = *state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/run1", s->dir);
    fixture *f = fixture_new(dir);
    prepare(f);
    const exec_job *j = &f->p.job;
    assert_int_equal(j->ranks, 4);
    assert_int_equal(j->layout.microbatches, 4);
    assert_int_equal(j->layout.global_batch, 4);
    assert_int_equal(j->model.layers, 4);
    assert_int_equal(j->model.ffn, 768);
    assert_string_equal(j->model_full.name, "gpt-13x1536");
    assert_non_null(strstr(j->scaled, "layers 13 -> 4"));
    assert_string_equal(j->source, "the layout flags on this host");
    assert_string_equal(f->p.transport, "mpi");
    assert_int_equal(f->p.gpus_used, 4);

    exec_config *cfg = calloc(1, sizeof *cfg);
    assert_non_null(cfg);
    st_err err = {0};
    assert_int_equal(exec_config_parse(f->p.config_text, cfg, &err), ST_OK);
    assert_int_equal(cfg->layout.tp, 2);
    assert_int_equal(cfg->layout.pp, 2);
    assert_int_equal(cfg->model.hidden, 192);
    assert_int_equal(cfg->train.steps, 5);
    assert_string_equal(cfg->device, "cpu");
    free(cfg);

    assert_string_equal(f->p.run_dir, dir);
    assert_non_null(strstr(f->p.cmd_text, "mpirun -n 4 "));
    char want[1200];
    snprintf(want, sizeof want, "/opt/bin/smdplan-rank --config %s/CONFIG.json", dir);
    assert_non_null(strstr(f->p.cmd_text, want));

    /* --dry-run --json: the command and the CONFIG.json it would write */
    char *text = exec_prep_json(&f->p);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_string_equal(cJSON_GetObjectItem(root, "command")->valuestring, f->p.cmd_text);
    assert_string_equal(cJSON_GetObjectItem(root, "run_dir")->valuestring, dir);
    assert_int_equal(cJSON_GetObjectItem(root, "ranks")->valueint, 4);
    assert_string_equal(cJSON_GetObjectItem(root, "transport")->valuestring, "mpi");
    assert_null(cJSON_GetObjectItem(root, "gpus_per_host")); /* the CPU's */
    cJSON *model = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "model");
    assert_int_equal(cJSON_GetObjectItem(model, "hidden")->valueint, 192);
    cJSON_Delete(root);
    free(text);

    /* --emit slurm: the same job as a batch script that records itself
     * with the options that describe it */
    f->r.run_args[0] = "--tp";
    f->r.run_args[1] = "2";
    f->r.nrun_args = 2;
    text = exec_prep_slurm(&f->p, "/opt/bin/smdplan", &err);
    assert_text(text, TEXTS("#SBATCH --ntasks=4", "exec --tp 2 --import", "/opt/bin/smdplan"),
                NULL);
    free(text);
    /* nothing was written */
    assert_int_equal(access(dir, F_OK), -1);
    fixture_free(f);
}

static void ready_and_start(void **state)
{
    test_scratch *s = *state;
    char dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s/runs/r1", s->dir);
    fixture *f = fixture_new(dir);
    prepare(f);
    exec_pred *h = calloc(1, sizeof *h);
    assert_non_null(h);
    st_err err = {0};
    assert_int_equal(exec_prep_ready(&f->p, h, &err), ST_OK);
    assert_true(h->have_entry && h->have_est);
    assert_string_equal(h->type, "host-test");
    assert_rel(f->p.timeout_s, 600, 0);
    assert_int_equal(strncmp(f->p.limit_why, "the default: 10 x the predicted", 31), 0);

    /* CONFIG.json in the run directory, as prepared */
    snprintf(path, sizeof path, "%s/CONFIG.json", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    buf[n] = '\0';
    assert_string_equal(buf, f->p.config_text);
    /* never twice */
    assert_int_equal(exec_prep_ready(&f->p, h, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "a run directory is never reused"));

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    exec_prep_print_start(out, &f->p, h);
    fclose(out);
    snprintf(path, sizeof path, "run:     %s\n", f->p.cmd_text);
    assert_text(text, TEXTS("scaled:  layers 13 -> 4", "(from gpt-13x1536)\n",
                            "from:    the layout flags on this host\n",
                            "layout:  tp 2, pp 2, dp 1 (4 ranks), micro-batch 1 x 4 microbatches",
                            "predicted on host-test: ", path, "limit:   600 s (the default: "),
                TEXTS("device:", "import:", "note:"));
    free(text);
    free(h);
    fixture_free(f);
}

static void recorded_plan_kept(void **state)
{
    (void)state;
    fixture *f = fixture_new(NULL);
    st_err err = {0};
    exec_prep_init(&f->p, &f->r, "testhost", "host-testhost");
    /* what the caller reads from a recorded plan */
    f->p.job.model_full = f->m;
    assert_int_equal(exec_layout_from_config(&f->cfg, 0, &f->p.job.layout, &err), ST_OK);
    snprintf(f->p.job.source, sizeof f->p.job.source, "plan record 12 (best #1 on 1 x p4d)");
    assert_int_equal(exec_prep_job(&f->p, &f->cfg, &f->cat, NULL, NULL, &err), ST_OK);
    assert_string_equal(f->p.job.source, "plan record 12 (best #1 on 1 x p4d)");
    assert_int_equal(f->p.job.ranks, 4);
    assert_int_equal(f->p.job.model.layers, 4);
    /* a shape the layout cannot split */
    f->r.scale.heads = 5;
    assert_int_equal(exec_prep_job(&f->p, &f->cfg, &f->cat, &f->m, NULL, &err), ST_EINVAL);
    fixture_free(f);
}

static void cuda_shared_gpu(void **state)
{
    (void)state;
    fixture *f = fixture_new(NULL);
    st_err err = {0};
    snprintf(f->r.device, sizeof f->r.device, "cuda");
    f->r.gpus_per_host = 1;
    f->r.dry_run = 1;
    f->r.host_type = NULL;
    f->cfg.framework = exec_layout_profile(1);
    f->cfg.precision = PLAN_PREC_BF16;
    exec_prep_init(&f->p, &f->r, "testhost", "host-testhost");
    assert_int_equal(exec_prep_job(&f->p, &f->cfg, &f->cat, &f->m, NULL, &err), ST_OK);
    assert_string_equal(f->p.transport, "mpi"); /* 4 ranks on one GPU */
    assert_int_equal(f->p.job.layout.dp_overlap, 0);
    assert_int_equal(f->p.gpus_used, 1);
    assert_int_equal(f->p.gpus.ranks_per_host, 4);

    f->r.host_type = "no-such-type";
    assert_int_equal(exec_prep_job(&f->p, &f->cfg, &f->cat, &f->m, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--host no-such-type: not an instance type of the catalog"));
    f->r.host_type = NULL;
    f->r.dry_run = 0;
    f->r.emit = "slurm";
    f->r.gpus_per_host = 0; /* no plan cluster: GPUs per node unknown, unless CUDA sees some */
    st_err_clear(&err);
    int rc = exec_prep_job(&f->p, &f->cfg, &f->cat, &f->m, NULL, &err);
    if (f->p.gpus.visible == 0) {
        assert_int_equal(rc, ST_EINVAL);
        assert_non_null(strstr(err.msg, "give --gpus-per-host N"));
    }
    fixture_free(f);
}

/* A RESULT.json of the job with the step times above, written into dir. */
static void write_result(const exec_job *j, const exec_train *t, int ranks, const char *dir)
{
    static const double step_s[] = {9.0, 0.3, 0.1, 0.4, 0.2};
    exec_result r;
    exec_result_init(&r);
    snprintf(r.status, sizeof r.status, "ok");
    r.failed_rank = -1;
    r.ranks = ranks;
    snprintf(r.device, sizeof r.device, "cpu");
    snprintf(r.transport, sizeof r.transport, "mpi");
    snprintf(r.host, sizeof r.host, "node7");
    snprintf(r.device_name, sizeof r.device_name, "cpu");
    r.tokens_per_step = 192;
    r.model_flops_per_step = plan_model_train_flops_per_token(&j->model) * 192;
    r.hardware_flops_per_step = r.model_flops_per_step;
    r.nsteps = 5;
    r.steps = calloc(5, sizeof *r.steps);
    assert_non_null(r.steps);
    for (int i = 0; i < 5; i++)
        r.steps[i] = (exec_step_result){.step = i + 1, .time_s = step_s[i], .loss = 5.5 - 0.1 * i,
                                        .lr = t->lr, .grad_norm = 1.0, .measured = i > 0};
    r.nranks = ranks;
    r.rank_stats = calloc((size_t)r.nranks, sizeof *r.rank_stats);
    assert_non_null(r.rank_stats);
    for (int i = 0; i < r.nranks; i++)
        r.rank_stats[i] = (exec_rank_stat){.rank = i, .tp_rank = i % 2, .pp_rank = i / 2,
                                           .peak_memory_bytes = 1e6 + i};
    char path[1100];
    snprintf(path, sizeof path, "%s/RESULT.json", dir);
    st_err err = {0};
    assert_int_equal(exec_result_write(path, &r, &err), ST_OK);
    exec_result_free(&r);
}

/* An import of the job from dir, with CONFIG.json there, prepared and
 * ready; the exit status the launcher gave. */
static fixture *imported(const char *dir, int exit_status, exec_pred *h)
{
    fixture *f = fixture_new(NULL);
    f->r.import_dir = dir;
    f->r.exit_status = exit_status;
    exec_prep_init(&f->p, &f->r, "testhost", "host-testhost");
    st_err err = {0};
    assert_int_equal(exec_prep_job(&f->p, &f->cfg, &f->cat, &f->m, NULL, &err), ST_OK);
    assert_int_equal(exec_prep_config(&f->p, &err), ST_OK);
    char path[1100];
    snprintf(path, sizeof path, "%s/CONFIG.json", dir);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(f->p.config_text, out);
    fclose(out);
    assert_int_equal(exec_prep_command(&f->p, "", &err), ST_OK);
    assert_string_equal(f->p.run_dir, dir);
    assert_int_equal(exec_prep_ready(&f->p, h, &err), ST_OK);
    return f;
}

static void import_accounted(void **state)
{
    test_scratch *s = *state;
    exec_pred *h = calloc(1, sizeof *h);
    assert_non_null(h);
    exec_account a;
    st_err err = {0};

    fixture *f = imported(s->dir, 137, h);
    assert_int_equal(exec_account_launch(&f->p, NULL, &a, &err), ST_OK);
    assert_false(a.have_result);
    assert_int_equal(a.exit_status, 137);
    assert_true(isnan(a.lr.wall_s));
    assert_rel(a.timeout_s, 0, 0);
    assert_string_equal(a.host, "testhost");
    exec_account_judge(&a, h);
    assert_string_equal(a.oc.status, "failed");
    assert_string_equal(a.oc.error, "mpirun exited with status 137");
    assert_int_equal(exec_account_exit(&a, 1), 1); /* not recorded */
    a.run_id = 3;
    assert_int_equal(exec_account_exit(&a, 1), 0);
    assert_int_equal(exec_account_exit(&a, 0), 1);
    exec_account_free(&a);
    fixture_free(f);

    f = imported(s->dir, 0, h);
    write_result(&f->p.job, &f->r.train, 4, s->dir);
    assert_int_equal(exec_account_launch(&f->p, NULL, &a, &err), ST_OK);
    assert_true(a.have_result);
    assert_string_equal(a.host, "node7");
    exec_account_judge(&a, h);
    assert_string_equal(a.oc.status, "ok");
    assert_rel(a.oc.step_s, 0.25, 1e-15);
    assert_rel(a.oc.tokens_per_s, 768, 1e-15);
    assert_int_equal(exec_account_exit(&a, 0), 0);
    a.run_id = 7;

    cJSON *model = cJSON_CreateObject();
    char *text = exec_account_json(&a, model);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_int_equal(cJSON_GetObjectItem(root, "run_id")->valueint, 7);
    assert_string_equal(cJSON_GetObjectItem(root, "status")->valuestring, "ok");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "error")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "losses")), 5);
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(root, "model")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "timeout_s"))); /* an import's */
    assert_string_equal(cJSON_GetObjectItem(root, "host_type")->valuestring, "host-test");
    cJSON_Delete(root);
    free(text);

    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    exec_account_print(out, &a);
    fclose(out);
    assert_text(text, TEXTS("\nrun 7: ok\n", "step time: 0.2500 s (median of 4 measured steps); "
                            "predicted ", "tokens/s: 768.0, model FLOP/s ",
                            "the host entry's sgemm peak", "loss: 5.5000 -> 5.1000 over 5 steps",
                            "run directory: "),
                TEXTS("device:", "GPU memory"));
    free(text);
    exec_account_free(&a);
    fixture_free(f);

    /* a RESULT.json of another run: nothing recorded */
    f = imported(s->dir, 0, h);
    write_result(&f->p.job, &f->r.train, 3, s->dir);
    assert_int_equal(exec_account_launch(&f->p, NULL, &a, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "RESULT.json: ranks 3: the run has 4; nothing recorded"));
    exec_account_free(&a);
    fixture_free(f);
    free(h);
}

/* p's command made /bin/sh -c script. */
static void command_is(exec_prep *p, const char *script)
{
    launch_cmd *c = p->cmd;
    memset(c, 0, sizeof *c);
    const char *args[] = {"/bin/sh", "-c", script};
    for (int i = 0; i < 3; i++) {
        snprintf(c->store[i], sizeof c->store[i], "%s", args[i]);
        c->argv[i] = c->store[i];
    }
    c->argc = 3;
}

static void launched_accounted(void **state)
{
    test_scratch *s = *state;
    exec_pred *h = calloc(1, sizeof *h);
    assert_non_null(h);
    exec_account a;
    st_err err = {0};
    char dir[1024], script[1200];
    snprintf(dir, sizeof dir, "%s/r1", s->dir);
    fixture *f = fixture_new(dir);
    prepare(f);
    assert_int_equal(exec_prep_ready(&f->p, h, &err), ST_OK);
    command_is(&f->p, "exit 3");
    assert_int_equal(exec_account_launch(&f->p, NULL, &a, &err), ST_OK);
    assert_int_equal(a.exit_status, 3);
    assert_false(a.have_result);
    assert_rel(a.timeout_s, 600, 0);
    exec_account_judge(&a, h);
    assert_string_equal(a.oc.status, "failed");
    assert_string_equal(a.oc.error, "mpirun exited with status 3");
    assert_int_equal(exec_account_exit(&a, 0), 1);
    exec_account_free(&a);
    fixture_free(f);

    /* exit 0 with a RESULT.json that does not read: why it does not */
    snprintf(dir, sizeof dir, "%s/r2", s->dir);
    f = fixture_new(dir);
    prepare(f);
    assert_int_equal(exec_prep_ready(&f->p, h, &err), ST_OK);
    snprintf(script, sizeof script, "echo '{\"version\": 1}' > '%s/RESULT.json'", dir);
    command_is(&f->p, script);
    assert_int_equal(exec_account_launch(&f->p, NULL, &a, &err), ST_OK);
    assert_int_equal(a.exit_status, 0);
    assert_false(a.have_result);
    assert_int_not_equal(a.result_err.code, ST_OK);
    exec_account_judge(&a, h);
    assert_string_equal(a.oc.status, "failed");
    assert_string_equal(a.oc.error, a.result_err.msg);
    exec_account_free(&a);
    fixture_free(f);
    free(h);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test_setup_teardown(job_config_command, test_scratch_setup,
                                          test_scratch_teardown),
          cmocka_unit_test_setup_teardown(ready_and_start, test_scratch_setup,
                                          test_scratch_teardown),
          cmocka_unit_test(recorded_plan_kept),
          cmocka_unit_test(cuda_shared_gpu),
          cmocka_unit_test_setup_teardown(import_accounted, test_scratch_setup,
                                          test_scratch_teardown),
          cmocka_unit_test_setup_teardown(launched_accounted, test_scratch_setup,
                                          test_scratch_teardown))
