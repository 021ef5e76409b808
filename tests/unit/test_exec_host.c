/*
 * test_exec_host.c: the host side of a run (exec/exec_host.h).
 *
 * The job: a GPT of hidden 1536, 13 layers, 12 heads, sequence 1000 under
 * tp 2 x dp 2 with micro-batch 2 x 2 microbatches is 4 ranks and a global
 * batch of 8, so a RESULT.json of it counts 8 x 1000 = 8000 tokens a step;
 * one claiming 8001, 3 ranks, a step out of order or a rank twice is
 * refused naming the value. Measured steps 0.3, 0.1, 0.4, 0.2 s (and an
 * unmeasured warm-up of 9 s) have the median 0.25 s: 32000 tokens/s, and
 * the model's FLOPs per step over 0.25 s against 4 devices of 1.5e13
 * FLOP/s is the MFU. A run stopped by its limit, one whose mpirun failed
 * after the result, and one that left processes behind are judged so.
 * A run directory is never reused; an import is claimed once and then
 * says which run it became. Where ranks would share a GPU the transport
 * is mpi, and nccl is refused.
 */
#include "test_util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec_host.h"
#include "test_dir.h"
#include "test_models.h"


/* The job above, as smdplan exec makes it from the layout flags. */
static exec_job job(void)
{
    exec_job j;
    memset(&j, 0, sizeof j);
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.tp = 2, cfg.dp = 2, cfg.micro_batch = 2, cfg.global_batch = 8;
    plan_model m = test_gpt_13x1536();
    st_err err = {0};
    assert_int_equal(exec_job_from_config(&m, &cfg, 0, &j, &err), ST_OK);
    assert_int_equal(exec_job_finish(&j, 0, -1, &err), ST_OK);
    assert_int_equal(j.ranks, 4);
    assert_int_equal(j.layout.global_batch, 8);
    assert_int_equal(j.model.dropout, PLAN_DROPOUT_OFF);
    assert_string_equal(j.source, "the layout flags on this host");
    return j;
}

static exec_train train(void)
{
    exec_config c;
    exec_config_default(&c);
    c.train.steps = 20;
    return c.train;
}

static const double step_times_s[] = {9.0, 0.3, 0.1, 0.4, 0.2};
#define NSTEPS ((int)(sizeof step_times_s / sizeof step_times_s[0]))

/* A RESULT.json the job could have written (owned: exec_result_free). */
static exec_result result(const exec_job *j, const exec_train *t)
{
    exec_result r;
    exec_result_init(&r);
    snprintf(r.status, sizeof r.status, "ok");
    r.failed_rank = -1;
    r.ranks = j->ranks;
    r.tokens_per_step = 8000;
    r.model_flops_per_step = plan_model_train_flops_per_token(&j->model) * 8000;
    r.hardware_flops_per_step = r.model_flops_per_step;
    r.nsteps = NSTEPS;
    r.steps = calloc((size_t)r.nsteps, sizeof *r.steps);
    assert_non_null(r.steps);
    for (int i = 0; i < r.nsteps; i++)
        r.steps[i] = (exec_step_result){.step = i + 1, .time_s = step_times_s[i], .loss = 5.0,
                                        .lr = t->lr, .grad_norm = 1.0, .measured = i > 0};
    r.nranks = j->ranks;
    r.rank_stats = calloc((size_t)r.nranks, sizeof *r.rank_stats);
    assert_non_null(r.rank_stats);
    for (int i = 0; i < r.nranks; i++)
        r.rank_stats[i] = (exec_rank_stat){.rank = i, .tp_rank = i % 2, .dp_rank = i / 2,
                                           .peak_memory_bytes = 1e9 + i};
    return r;
}

static void result_checked(void **state)
{
    (void)state;
    exec_job j = job();
    exec_train t = train();
    exec_result r = result(&j, &t);
    st_err err = {0};
    assert_int_equal(exec_result_check(&r, &j, &t, &err), ST_OK);
    r.tokens_per_step = 0; /* nothing measured: allowed */
    r.steps[2].loss = NAN; /* a diverged step */
    assert_int_equal(exec_result_check(&r, &j, &t, &err), ST_OK);

    r.tokens_per_step = 8001;
    assert_int_equal(exec_result_check(&r, &j, &t, &err), ST_EINVAL);
    assert_string_equal(err.msg, "RESULT.json: tokens_per_step 8001: allowed 0 or the run's 8000 "
                                 "(global batch 8 x sequence 1000)");
    r.tokens_per_step = 8000;
    st_err_clear(&err);
    r.ranks = 3;
    assert_int_equal(exec_result_check(&r, &j, &t, &err), ST_EINVAL);
    assert_string_equal(err.msg, "RESULT.json: ranks 3: the run has 4");
    r.ranks = 4;
    st_err_clear(&err);
    r.steps[3].step = 3;
    assert_int_equal(exec_result_check(&r, &j, &t, &err), ST_EINVAL);
    assert_string_equal(err.msg, "RESULT.json: steps[3].step 3: allowed 4 to 20, increasing");
    r.steps[3].step = 4;
    st_err_clear(&err);
    r.rank_stats[3].rank = 1;
    assert_int_equal(exec_result_check(&r, &j, &t, &err), ST_EINVAL);
    assert_string_equal(err.msg, "RESULT.json: rank_stats[3]: rank 1 twice");
    r.rank_stats[3].rank = 3;
    st_err_clear(&err);
    r.rank_stats[0].phases.dp_comm_s = -1;
    assert_int_equal(exec_result_check(&r, &j, &t, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "rank_stats[0] phases_s.dp_comm_s -1"));
    exec_result_free(&r);
}

static void median_and_outcome(void **state)
{
    (void)state;
    exec_job j = job();
    exec_train t = train();
    exec_result r = result(&j, &t);
    int measured = 0;
    assert_rel(exec_result_median_step_s(&r, &measured), 0.25, 1e-15);
    assert_int_equal(measured, 4);

    exec_pred h;
    memset(&h, 0, sizeof h);
    h.have_entry = 1;
    h.peak_flops_per_rank = 1.5e13;
    h.peak_devices = 4;
    launch_job_result lr;
    memset(&lr, 0, sizeof lr);
    lr.exited = 1;
    exec_outcome oc;
    exec_outcome_judge(600, &lr, 1, &r, &h, &oc);
    assert_string_equal(oc.status, "ok");
    assert_string_equal(oc.error, "");
    assert_int_equal(oc.failed_rank, -1);
    assert_int_equal(oc.measured, 4);
    assert_rel(oc.step_s, 0.25, 1e-15);
    assert_rel(oc.tokens_per_s, 32000, 1e-15);
    assert_rel(oc.achieved_flops, r.model_flops_per_step / 0.25, 1e-15);
    assert_rel(oc.peak_flops, 6e13, 1e-15);
    assert_rel(oc.mfu, r.model_flops_per_step / 0.25 / 6e13, 1e-15);
    assert_rel(oc.peak_mem_bytes, 1e9 + 3, 1e-15);
    assert_true(isnan(oc.device_mem_bytes));

    lr.exit_status = 1;
    exec_outcome_judge(600, &lr, 1, &r, &h, &oc);
    assert_string_equal(oc.status, "failed");
    assert_non_null(strstr(oc.error, "mpirun exited with status 1 after the result was written"));

    lr.timed_out = 1;
    exec_outcome_judge(600, &lr, 1, &r, &h, &oc);
    assert_string_equal(oc.status, "timeout");
    assert_string_equal(oc.error, "the run passed its time limit of 600 s (--timeout) and was "
                                  "stopped");

    /* no result: the rank program refused the config on every rank */
    memset(&lr, 0, sizeof lr);
    lr.exited = 1;
    lr.exit_status = 2;
    lr.left_behind = 2;
    snprintf(lr.stderr_tail, sizeof lr.stderr_tail, "smdplan-rank: rank 3: bad config\n");
    exec_outcome_judge(600, &lr, 0, &r, &h, &oc);
    assert_string_equal(oc.status, "failed");
    assert_int_equal(oc.bad_config, 1);
    assert_int_equal(oc.failed_rank, 3);
    assert_true(isnan(oc.step_s) && isnan(oc.mfu));
    assert_non_null(strstr(oc.error, "mpirun exited with status 2"));
    assert_non_null(strstr(oc.error, "; 2 processes of the job survived the final sweep"));
    exec_result_free(&r);
}

static void run_dir_never_reused(void **state)
{
    test_scratch *s = *state;
    char dir[1024], def[256];
    snprintf(dir, sizeof dir, "%s/runs/a/run1", s->dir);
    st_err err = {0};
    assert_int_equal(exec_run_dir_make(dir, &err), ST_OK);
    struct stat sb;
    assert_int_equal(stat(dir, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(exec_run_dir_make(dir, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "a run directory is never reused"));

    exec_run_dir_default(def, sizeof def);
    char tail[32];
    snprintf(tail, sizeof tail, "-%d", (int)getpid());
    assert_int_equal(strncmp(def, EXEC_RUNS_DIR "/", strlen(EXEC_RUNS_DIR) + 1), 0);
    assert_string_equal(def + strlen(def) - strlen(tail), tail);
}

/* The marker's first line. */
static void marker(const char *dir, char *line, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, EXEC_IMPORT_MARKER);
    FILE *f = fopen(path, "r");
    line[0] = '\0';
    if (f) {
        if (!fgets(line, (int)n, f))
            line[0] = '\0';
        fclose(f);
    }
}

static void import_claimed_once(void **state)
{
    test_scratch *s = *state;
    exec_job j = job();
    exec_train t = train();
    exec_job_run run = {.train = &t, .data_kind = "synthetic", .threads = 1,
                        .wait_timeout_s = 60, .device = "cpu", .transport = "mpi"};
    char *config = NULL, *other = NULL, path[1024], line[128];
    st_err err = {0};
    assert_int_equal(exec_job_config(&j, &run, &config, &err), ST_OK);
    snprintf(path, sizeof path, "%s/CONFIG.json", s->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(config, f);
    fclose(f);
    assert_int_equal(exec_import_check(s->dir, config, &err), ST_OK);
    t.seed = 99; /* another run's options */
    assert_int_equal(exec_job_config(&j, &run, &other, &err), ST_OK);
    assert_int_equal(exec_import_check(s->dir, other, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "is not the run these options describe"));

    int fd = -1, fd2 = -1;
    st_err_clear(&err);
    assert_int_equal(exec_import_claim(s->dir, &fd, &err), ST_OK);
    assert_true(fd >= 0);
    assert_int_equal(exec_import_claim(s->dir, &fd2, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "another import is recording it (recording (pid "));
    st_err_clear(&err);
    assert_int_equal(exec_import_finish(s->dir, fd, 12, &err), ST_OK);
    marker(s->dir, line, sizeof line);
    assert_string_equal(line, "run 12\n");
    assert_int_equal(exec_import_check(s->dir, config, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "already recorded (run 12); nothing recorded"));

    /* nothing recorded: the marker goes, and the next import may try */
    snprintf(path, sizeof path, "%s/%s", s->dir, EXEC_IMPORT_MARKER);
    assert_int_equal(unlink(path), 0);
    st_err_clear(&err);
    assert_int_equal(exec_import_claim(s->dir, &fd, &err), ST_OK);
    assert_int_equal(exec_import_finish(s->dir, fd, 0, &err), ST_OK);
    assert_int_equal(access(path, F_OK), -1);
    free(config);
    free(other);
}

static void config_refused_before_launch(void **state)
{
    (void)state;
    exec_job j = job();
    exec_train t = train();
    exec_job_run run = {.train = &t, .data_kind = "text", .data_path = "corpus.txt",
                        .threads = 3, .wait_timeout_s = 60, .device = "cpu", .transport = "mpi"};
    char *text = NULL, cwd[512], want[600];
    st_err err = {0};
    j.model.vocab = 256; /* text: one token per byte */
    assert_int_equal(exec_job_config(&j, &run, &text, &err), ST_OK);
    exec_config *cfg = calloc(1, sizeof *cfg);
    assert_non_null(cfg);
    assert_int_equal(exec_config_parse(text, cfg, &err), ST_OK);
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(want, sizeof want, "%s/corpus.txt", cwd); /* made absolute */
    assert_string_equal(cfg->data_path, want);
    assert_int_equal(cfg->data_kind, EXEC_DATA_TEXT);
    assert_int_equal(cfg->threads_per_rank, 3);
    assert_int_equal(cfg->layout.tp * cfg->layout.dp, 4);
    free(cfg);
    free(text);
    j.ranks = 3; /* not tp x pp x dp */
    assert_int_equal(exec_job_config(&j, &run, &text, &err), ST_EINVAL);
    free(text);
}

static void gpus_and_transport(void **state)
{
    (void)state;
    exec_job j = job();
    plan_catalog none = {0};
    exec_gpu_hosts g;
    memset(&g, 0, sizeof g);
    j.ranks = 7;
    j.plan_nodes = 2;
    exec_gpu_hosts_of(&none, &j, 3, 1, 0, 0, &g); /* a Slurm script of 2 nodes */
    assert_int_equal(g.gpus, 3);
    assert_int_equal(g.ranks_per_host, 4);
    exec_gpu_hosts_of(&none, &j, 3, 0, 1, 2, &g); /* a hostfile of 2 slots */
    assert_int_equal(g.ranks_per_host, 2);
    exec_gpu_hosts_of(&none, &j, 3, 0, 0, 0, &g); /* all of them here */
    assert_int_equal(g.ranks_per_host, 7);

    char tr[8];
    st_err err = {0};
    g.ranks_per_host = 4, g.gpus = 2; /* ranks share GPUs */
    assert_int_equal(exec_transport_choose(&g, 1, "", tr, sizeof tr, &err), ST_OK);
    assert_string_equal(tr, "mpi");
    assert_int_equal(exec_transport_choose(&g, 1, "nccl", tr, sizeof tr, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--transport nccl: "));
    st_err_clear(&err);
    assert_int_equal(exec_transport_choose(&g, 0, "", tr, sizeof tr, &err), ST_OK);
    assert_string_equal(tr, "mpi");
    g.ranks_per_host = 2;
    assert_int_equal(exec_transport_choose(&g, 1, "", tr, sizeof tr, &err), ST_OK);
    assert_string_equal(tr, exec_features_built().nccl && exec_features_built().mpi ? "nccl"
                                                                                   : "mpi");
}

/* The default limit: 10 x the predicted run, at least 600 s. */
static void default_timeout(void **state)
{
    (void)state;
    exec_job j = job();
    exec_pred h;
    memset(&h, 0, sizeof h);
    h.have_est = 1;
    h.est.time.step_s = 1.5;
    char why[256];
    assert_rel(exec_default_timeout_s(&j, &h, 100, why, sizeof why), 1500, 1e-15);
    assert_non_null(strstr(why, "10 x the predicted 150 s (the planner's step on this host)"));
    h.est.time.step_s = 0.01;
    assert_rel(exec_default_timeout_s(&j, &h, 20, why, sizeof why), 600, 1e-15);
}

/* The prediction on a catalog entry, and why there is none. */
static void predicted(void **state)
{
    (void)state;
    setenv("SMDPLAN_DATA", SMD_TEST_DATA_DIR, 1);
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    exec_job j = job();
    exec_pred *h = calloc(1, sizeof *h);
    assert_non_null(h);
    snprintf(h->type, sizeof h->type, "host-nowhere");
    exec_predict_host(&cat, &j, h);
    assert_false(h->have_entry);
    assert_non_null(strstr(h->note, "no catalog entry host-nowhere for this host"));

    memset(h, 0, sizeof *h);
    const plan_instance *p4d = found_or_fail(plan_catalog_find(&cat, "p4d.24xlarge"), "type",
                                             "p4d.24xlarge");
    exec_predict_gpu(&cat, p4d, &j, 4, h);
    assert_true(h->have_entry && h->have_est);
    assert_true(h->est.time.step_s > 0 && h->simulated_s > 0);
    assert_int_equal(h->peak_devices, 4);
    assert_rel(h->peak_flops_per_rank, h->cluster.gpu->peak_flops, 1e-15);

    memset(h, 0, sizeof *h);
    exec_predict_gpu(&cat, p4d, &j, 2, h); /* 4 ranks on 2 GPUs */
    assert_false(h->have_est);
    assert_int_equal(h->peak_devices, 2);
    assert_string_equal(h->note, "4 ranks share 2 GPUs: the planner predicts one GPU per rank, "
                                 "no prediction");

    memset(h, 0, sizeof *h);
    assert_null(exec_pred_own_gpu(&cat, -1, "host-x-cuda", 4, h));
    const plan_instance *own = exec_pred_own_gpu(&cat, p4d->gpu_index, "host-x-cuda", 4, h);
    assert_ptr_equal(own, &h->own);
    assert_string_equal(own->name, "host-x-cuda");
    assert_true(own->gpus_per_node >= 4);
    assert_non_null(strstr(own->source, "as CUDA sees them; links of "));
    free(h);
    plan_catalog_free(&cat);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(result_checked),
          cmocka_unit_test(median_and_outcome),
          cmocka_unit_test_setup_teardown(run_dir_never_reused, test_scratch_setup,
                                          test_scratch_teardown),
          cmocka_unit_test_setup_teardown(import_claimed_once, test_scratch_setup,
                                          test_scratch_teardown),
          cmocka_unit_test(config_refused_before_launch),
          cmocka_unit_test(gpus_and_transport),
          cmocka_unit_test(default_timeout),
          cmocka_unit_test(predicted))
