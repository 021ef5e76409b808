/*
 * test_exec_config.c: CONFIG.json and RESULT.json, the contract between the
 * rank program and `smdplan exec`: the contract's own example reads into the
 * planner's structs, every refusal names its key, writing and reading back
 * gives the same values, and files are replaced atomically.
 */
#include "test_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"

#define EXAMPLE SMD_TEST_FIXTURES "/exec_config_example.json"

static void test_example(void **state)
{
    exec_config c;
    st_err err = {0};
    assert_int_equal(exec_config_read(EXAMPLE, &c, &err), ST_OK);
    assert_int_equal(c.model.arch, PLAN_ARCH_GPT);
    assert_int_equal(c.model.layers, 4);
    assert_int_equal(c.model.hidden, 64);
    assert_int_equal(c.model.tied_embedding, 1);
    /* plan_model_finish ran: GPT with learned positions, 4 layers of
     * 12 h^2 + 13 h (f = 4h) plus V h + s h + 2 h */
    int64_t h = 64, layer = 12 * h * h + 13 * h;
    assert_int_equal(c.model.params, 4 * layer + 256 * h + 32 * h + 2 * h);
    assert_int_equal(c.layout.tp, 2);
    assert_int_equal(c.layout.pp, 2);
    assert_int_equal(c.layout.dp, 2);
    assert_int_equal(c.layout.microbatches, 4);
    assert_int_equal(c.layout.global_batch, 2 * 2 * 4);
    assert_int_equal(c.layout.schedule, PLAN_SCHED_INTERLEAVED);
    assert_int_equal(c.layout.sharding, PLAN_SHARD_NONE);
    assert_memory_equal(c.layout.placement, "DPT", 3);
    assert_rel(c.layout.dp_bucket_bytes, 25e6, 0);
    assert_int_equal(c.train.steps, 20);
    assert_int_equal(c.train.seed, 1234);
    assert_rel(c.train.beta2, 0.95, 0);
    assert_int_equal(c.data_kind, EXEC_DATA_SYNTHETIC);
    assert_string_equal(c.transport, "mpi");
    assert_string_equal(c.save_dir, "");
    assert_int_equal(exec_config_check(&c, 8, &err), ST_OK);
    assert_int_equal(exec_config_check(&c, 4, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "8 ranks, the job has 4"));
}

static void expect_refused(const char *json, int code, const char *needle)
{
    exec_config c;
    st_err err = {0};
    int rc = exec_config_parse(json, &c, &err);
    if (rc != code || !strstr(err.msg, needle)) {
        print_error("%s\n -> %d \"%s\", wanted %d with \"%s\"\n", json, rc, err.msg, code, needle);
        fail();
    }
}

static void test_refusals(void **state)
{
    expect_refused("{\"version\": 1, \"layout\": {\"cp\": 2}}", ST_EINVAL, "layout.cp 2");
    expect_refused("{\"version\": 1, \"layout\": {\"offload_activations\": true}}", ST_EINVAL,
                   "offload_activations");
    expect_refused("{\"version\": 1, \"layout\": {\"tpp\": 2}}", ST_EINVAL,
                   "unknown key layout.tpp");
    /* a key spelled as --json once spelled it: the name it has now */
    expect_refused("{\"version\": 1, \"layout\": {\"micro_batch_size\": 2}}", ST_EINVAL,
                   "unknown key layout.micro_batch_size: it is now micro_batch");
    expect_refused("{\"version\": 1, \"layout\": {\"tp\": 1.5}}", ST_EINVAL, "layout.tp");
    expect_refused("{\"version\": 1, \"layout\": {\"schedule\": \"zigzag\"}}", ST_EINVAL, "zigzag");
    expect_refused("{\"version\": 2}", ST_EINVAL, "version 2");
    expect_refused("{\"version\": 1, \"model\": {\"arch\": \"bert\"}}", ST_EINVAL, "bert");
    expect_refused("{\"version\": 1, \"model\": {\"dropout\": true}}", ST_EINVAL, "dropout");
    expect_refused("{\"version\": 1, \"model\": {\"hidden\": 65}}", ST_EINVAL, "heads");
    expect_refused("{\"version\": 1, \"data\": {\"kind\": \"text\"}}", ST_EINVAL, "data.path");
    expect_refused("{\"version\": 1, \"device\": \"tpu\"}", ST_EINVAL, "tpu");
    expect_refused("{\"version\": 1, \"train\": {\"lr\": -1}}", ST_EINVAL, "train.lr");
    expect_refused("{\"version\": 1, \"colour\": 1}", ST_EINVAL, "unknown key colour");
    expect_refused("{\"version\": 1,", ST_EPARSE, "malformed");

    /* checks that need the rank count and the layout together */
    exec_config c;
    st_err err = {0};
    assert_int_equal(exec_config_parse("{\"version\": 1, \"model\": {\"kv_heads\": 1}, "
                                       "\"layout\": {\"tp\": 2}}", &c, &err), ST_OK);
    assert_int_equal(exec_config_check(&c, 2, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "kv heads"));
    st_err_clear(&err);
    assert_int_equal(exec_config_parse("{\"version\": 1, \"layout\": {\"pp\": 2, \"microbatches"
                                       "\": 3, \"schedule\": \"virtual\", \"virtual_stages\": 2}}",
                                       &c, &err), ST_OK);
    assert_int_equal(exec_config_check(&c, 2, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(exec_config_parse("{\"version\": 1, \"layout\": {\"pp\": 4, \"virtual_stages"
                                       "\": 2, \"schedule\": \"virtual\", \"microbatches\": 4}}",
                                       &c, &err), ST_OK);
    assert_int_equal(exec_config_check(&c, 4, &err), ST_EINVAL); /* 8 chunks, 4 layers */
    assert_non_null(strstr(err.msg, "8 pipeline chunks"));
}

/* A head size apart from hidden / heads, or a sliding window, is read (so
 * the file says what was asked) and refused by the checks in one line: the
 * executor's attention projects hidden to hidden over the whole sequence.
 * 4 heads of 32 on hidden 64 (q = 128); a head of hidden / heads is the
 * derived one and runs. */
static void test_attention_shape(void **state)
{
    exec_config c, b;
    st_err err = {0};
    assert_int_equal(exec_config_parse("{\"version\": 1, \"model\": {\"head_dim\": 32}}", &c,
                                       &err), ST_OK);
    assert_int_equal(plan_model_attn_width(&c.model), 128);
    char *text = exec_config_json(&c);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"head_dim\""));
    assert_int_equal(exec_config_parse(text, &b, &err), ST_OK);
    free(text);
    assert_int_equal(b.model.head_dim, 32);
    assert_int_equal(b.model.params, c.model.params);
    assert_int_equal(exec_config_check(&c, 1, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "heads x head size 128 is not hidden 64"));
    assert_null(strchr(err.msg, '\n'));
    st_err_clear(&err);
    assert_int_equal(exec_config_parse("{\"version\": 1, \"model\": {\"sliding_window\": 8, "
                                       "\"sliding_window_pattern\": 2}}", &c, &err), ST_OK);
    text = exec_config_json(&c);
    assert_non_null(text);
    assert_int_equal(exec_config_parse(text, &b, &err), ST_OK);
    free(text);
    assert_int_equal(b.model.sliding_window, 8);
    assert_int_equal(b.model.sliding_window_pattern, 2);
    assert_int_equal(exec_config_check(&c, 1, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "sliding window 8"));
    st_err_clear(&err);
    assert_int_equal(exec_config_parse("{\"version\": 1, \"model\": {\"head_dim\": 16}}", &c,
                                       &err), ST_OK);
    assert_int_equal(c.model.head_dim, 0);
    assert_int_equal(exec_config_check(&c, 1, &err), ST_OK);
    /* the file gives the head size in force and no window, as the planner
     * resolves the model (plan_model_resolved); read back, the same model */
    text = exec_config_json(&c);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"head_dim\":\t16"));
    assert_non_null(strstr(text, "\"sliding_window\":\t0"));
    assert_int_equal(exec_config_parse(text, &b, &err), ST_OK);
    assert_int_equal(b.model.head_dim, 0);
    assert_int_equal(b.model.sliding_window, 0);
    assert_int_equal(b.model.params, c.model.params);
    free(text);
    expect_refused("{\"version\": 1, \"model\": {\"head_dim\": 0}}", ST_EINVAL,
                   "model.head_dim");
    /* a size past the planner's limits is a bad value too (not ST_ERANGE) */
    expect_refused("{\"version\": 1, \"model\": {\"arch\": \"llama\", \"layers\": 2, "
                   "\"hidden\": 64, \"heads\": 4, \"kv_heads\": 2, \"head_dim\": 2322222, "
                   "\"vocab\": 256}}",
                   ST_EINVAL, "head-dim 2322222");
}

static void test_config_roundtrip(void **state)
{
    exec_config a, b;
    st_err err = {0};
    assert_int_equal(exec_config_parse("{\"version\": 1, \"model\": {\"arch\": \"llama\", "
                                       "\"layers\": 3, \"hidden\": 48, \"heads\": 6, \"kv_heads\": 2,"
                                       " \"ffn\": 128, \"seq\": 16, \"vocab\": 100}, \"layout\": "
                                       "{\"schedule\": \"zb-h1\", \"recompute\": \"full\", "
                                       "\"recompute_group\": 2, \"sharding\": \"params\", "
                                       "\"placement\": \"TPD\"}, \"data\": {\"kind\": \"text\", "
                                       "\"path\": \"x.txt\"}, \"debug\": {\"dump_weights\": "
                                       "\"d\"}}", &a, &err), ST_OK);
    assert_int_equal(a.model.tied_embedding, 0); /* llama's own */
    assert_int_equal(plan_model_gated(&a.model), 1);
    char *text = exec_config_json(&a);
    assert_non_null(text);
    assert_int_equal(exec_config_parse(text, &b, &err), ST_OK);
    free(text);
    assert_int_equal(b.model.params, a.model.params);
    assert_int_equal(b.model.kv_heads, 2);
    assert_int_equal(b.layout.schedule, PLAN_SCHED_ZB_H1);
    assert_int_equal(b.layout.recompute, PLAN_RECOMP_FULL);
    assert_int_equal(b.layout.recompute_group, 2);
    assert_int_equal(b.layout.sharding, PLAN_SHARD_PARAMS);
    assert_memory_equal(b.layout.placement, "TPD", 3);
    assert_int_equal(b.data_kind, EXEC_DATA_TEXT);
    assert_string_equal(b.data_path, "x.txt");
    assert_string_equal(b.dump_dir, "d");

    /* one stage on the one-stage convention is written "none" and read back
     * as it; "none" with stages is refused by name */
    const char *one = "{\"version\": 1, \"model\": {\"layers\": 2, \"hidden\": 32, "
                      "\"heads\": 4, \"seq\": 8, \"vocab\": 64}, \"layout\": {}}";
    assert_int_equal(exec_config_parse(one, &a, &err), ST_OK);
    assert_int_equal(a.layout.pp, 1);
    text = exec_config_json(&a);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"schedule\":\t\"none\""));
    assert_int_equal(exec_config_parse(text, &b, &err), ST_OK);
    free(text);
    assert_int_equal(b.layout.schedule, PLAN_SCHED_INTERLEAVED);
    assert_int_equal(exec_config_parse("{\"version\": 1, \"model\": {\"layers\": 2, "
                                       "\"hidden\": 32, \"heads\": 4, \"seq\": 8, \"vocab\": "
                                       "64}, \"layout\": {\"pp\": 2, \"schedule\": \"none\"}}",
                                       &a, &err),
                     ST_EINVAL);
    assert_non_null(strstr(err.msg, "layout.schedule none: the layout has 2 pipeline stages"));
}

static void test_result_roundtrip(void **state)
{
    char dir[] = "/tmp/smd_exec_result_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/RESULT.json", dir);
    exec_result r, back;
    exec_result_init(&r);
    r.ranks = 2;
    snprintf(r.device, sizeof r.device, "cpu");
    snprintf(r.transport, sizeof r.transport, "mpi");
    snprintf(r.host, sizeof r.host, "box");
    r.threads_per_rank = 1;
    r.tokens_per_step = 512;
    r.model_flops_per_step = 1.23e9;
    r.hardware_flops_per_step = 1.5e9;
    r.nsteps = 2;
    r.steps = calloc(2, sizeof *r.steps);
    r.steps[0] = (exec_step_result){1, 0.123, 5.54, 3e-4, 1.9, 0, {0.1, 0.01, 0.005, 0.004, 0.004}};
    r.steps[1] = (exec_step_result){2, 0.1, 5.3, 2e-4, 1.7, 1, {0.09, 0.01, 0, 0, 0.003}};
    r.nranks = 2;
    r.rank_stats = calloc(2, sizeof *r.rank_stats);
    r.rank_stats[1].rank = 1;
    r.rank_stats[1].dp_rank = 1;
    r.rank_stats[1].peak_memory_bytes = 123456;
    r.rank_stats[1].peak_class_bytes[EXEC_MEM_OPTIMIZER] = 1000;
    r.rank_stats[1].max_rss_bytes = 9e6;
    r.rank_stats[1].phases.pp_wait_s = 0.5;
    st_err err = {0};
    assert_int_equal(exec_result_write(path, &r, &err), ST_OK);
    assert_int_equal(exec_result_read(path, &back, &err), ST_OK);
    assert_string_equal(back.status, "ok");
    assert_int_equal(back.failed_rank, -1);
    assert_int_equal(back.ranks, 2);
    assert_string_equal(back.host, "box");
    assert_int_equal(back.nsteps, 2);
    assert_rel(back.steps[0].loss, 5.54, 1e-12);
    assert_int_equal(back.steps[0].measured, 0);
    assert_int_equal(back.steps[1].measured, 1);
    assert_rel(back.steps[1].phases.compute_s, 0.09, 1e-12);
    assert_int_equal(back.nranks, 2);
    assert_int_equal(back.rank_stats[1].dp_rank, 1);
    assert_rel(back.rank_stats[1].peak_memory_bytes, 123456, 0);
    assert_rel(back.rank_stats[1].peak_class_bytes[EXEC_MEM_OPTIMIZER], 1000, 0);
    assert_rel(back.rank_stats[1].phases.pp_wait_s, 0.5, 0);
    exec_result_free(&back);

    /* a failed run replaces the file whole; no temp file is left behind */
    snprintf(r.status, sizeof r.status, "failed");
    snprintf(r.error, sizeof r.error, "rank 1: timeout after 60 s waiting for x");
    r.failed_rank = 1;
    assert_int_equal(exec_result_write(path, &r, &err), ST_OK);
    assert_int_equal(exec_result_read(path, &back, &err), ST_OK);
    assert_string_equal(back.status, "failed");
    assert_int_equal(back.failed_rank, 1);
    assert_string_equal(back.error, r.error);
    exec_result_free(&back);
    exec_result_free(&r);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    /* writing into a directory that does not exist fails and says where */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/nowhere/RESULT.json", dir);
    assert_int_equal(exec_result_write(bad, &r, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "nowhere"));
    unlink(path);
    rmdir(dir);
}

/* A RESULT.json from elsewhere: every key's type and range is checked, and
 * each refusal names the key (these crashed or read out of range before:
 * steps and rank_stats as objects were walked as arrays into a NULL array,
 * ranks 2e18 was converted to int). */
#define RES_HEAD "{\"version\": 1, \"status\": \"ok\", \"ranks\": 2"
static void expect_result_refused(const char *json, int code, const char *needle)
{
    exec_result r;
    st_err err = {0};
    int rc = exec_result_parse(json, &r, &err);
    if (rc != code || !strstr(err.msg, needle) || err.code != code || r.steps || r.rank_stats) {
        print_error("%s\n -> %d \"%s\", wanted %d with \"%s\"\n", json, rc, err.msg, code, needle);
        fail();
    }
    exec_result_free(&r);
}

static void test_result_refusals(void **state)
{
    expect_result_refused(RES_HEAD ", \"steps\": {\"a\": {\"step\": 1}}}", ST_EINVAL,
                          "result: steps: must be an array of objects");
    expect_result_refused(RES_HEAD ", \"rank_stats\": {\"a\": {\"rank\": 0}}}", ST_EINVAL,
                          "result: rank_stats: must be an array of objects");
    expect_result_refused(RES_HEAD ", \"steps\": [{\"step\": 1}, 7]}", ST_EINVAL,
                          "result: steps[1]: must be an object");
    expect_result_refused("{\"version\": 1, \"status\": \"ok\", \"ranks\": 2e18}", ST_EINVAL,
                          "result: ranks: must be an integer in 0..2147483647");
    expect_result_refused("{\"version\": 1, \"status\": \"ok\", \"ranks\": -1}", ST_EINVAL,
                          "result: ranks");
    expect_result_refused("{\"version\": 1, \"status\": \"ok\"}", ST_EINVAL, "result: ranks");
    expect_result_refused("{\"version\": 1e300, \"status\": \"ok\", \"ranks\": 1}", ST_EINVAL,
                          "result: version");
    expect_result_refused("{\"version\": 2, \"status\": \"ok\", \"ranks\": 1}", ST_EINVAL,
                          "version 2");
    expect_result_refused("{\"version\": 1, \"ranks\": 1}", ST_EINVAL, "result: status");
    expect_result_refused("{\"version\": 1, \"status\": \"fine\", \"ranks\": 1}", ST_EINVAL,
                          "status \"fine\": allowed are ok, failed");
    expect_result_refused("{\"version\": 1, \"status\": 7, \"ranks\": 1}", ST_EINVAL,
                          "result: status: must be a string");
    expect_result_refused(RES_HEAD ", \"failed_rank\": 2}", ST_EINVAL,
                          "failed_rank 2: must be below ranks 2");
    expect_result_refused(RES_HEAD ", \"failed_rank\": 1e18}", ST_EINVAL, "result: failed_rank");
    expect_result_refused(RES_HEAD ", \"threads_per_rank\": 1e12}", ST_EINVAL,
                          "result: threads_per_rank");
    expect_result_refused(RES_HEAD ", \"tokens_per_step\": 1e300}", ST_EINVAL,
                          "result: tokens_per_step");
    expect_result_refused(RES_HEAD ", \"host\": [1]}", ST_EINVAL, "result: host: must be a string");
    expect_result_refused(RES_HEAD ", \"steps\": [{\"step\": 1.5}]}", ST_EINVAL,
                          "result: steps[0].step: must be an integer");
    expect_result_refused(RES_HEAD ", \"steps\": [{}]}", ST_EINVAL, "result: steps[0].step");
    expect_result_refused(RES_HEAD ", \"steps\": [{\"step\": 1, \"loss\": 1e400}]}", ST_EINVAL,
                          "result: steps[0].loss: must be a finite number");
    expect_result_refused(RES_HEAD ", \"steps\": [{\"step\": 1, \"time_s\": -1}]}", ST_EINVAL,
                          "result: steps[0].time_s");
    expect_result_refused(RES_HEAD ", \"steps\": [{\"step\": 1, \"measured\": 1}]}", ST_EINVAL,
                          "result: steps[0].measured: must be true or false");
    expect_result_refused(RES_HEAD ", \"steps\": [{\"step\": 1, \"phases_s\": [1]}]}", ST_EINVAL,
                          "result: steps[0].phases_s: must be an object");
    expect_result_refused(RES_HEAD ", \"steps\": [{\"step\": 1, \"phases_s\": {\"compute\": "
                          "\"x\"}}]}", ST_EINVAL, "result: steps[0].phases_s.compute");
    expect_result_refused(RES_HEAD ", \"rank_stats\": [{\"rank\": 2}]}", ST_EINVAL,
                          "result: rank_stats[0].rank: must be an integer in 0..1");
    expect_result_refused(RES_HEAD ", \"rank_stats\": [{\"rank\": 0}, {\"rank\": 1}, {\"rank\": "
                          "1}]}", ST_EINVAL, "result: rank_stats: 3 entries, at most 2");
    expect_result_refused(RES_HEAD ", \"rank_stats\": [{\"rank\": 0, \"peak_memory_by_class_"
                          "bytes\": {\"params\": -5}}]}", ST_EINVAL,
                          "result: rank_stats[0].peak_memory_by_class_bytes.params");
    expect_result_refused(RES_HEAD "} trailing", ST_EPARSE, "malformed JSON");

    /* what the rank program writes when it fails before its world is open */
    exec_result r;
    st_err err = {0};
    assert_int_equal(exec_result_parse("{\"version\": 1, \"status\": \"failed\", \"error\": "
                                       "\"rank 0: x\", \"failed_rank\": 0, \"ranks\": 0, "
                                       "\"steps\": [], \"rank_stats\": [], \"loss\": null}",
                                       &r, &err), ST_OK);
    assert_int_equal(r.failed_rank, 0);
    assert_string_equal(r.error, "rank 0: x");
    exec_result_free(&r);
    /* null for a number that was not finite keeps the default */
    assert_int_equal(exec_result_parse(RES_HEAD ", \"failed_rank\": null, \"steps\": [{\"step\": "
                                       "3, \"loss\": null, \"measured\": true}]}", &r, &err),
                     ST_OK);
    assert_int_equal(r.failed_rank, -1);
    assert_int_equal(r.nsteps, 1);
    assert_int_equal(r.steps[0].step, 3);
    assert_int_equal(r.steps[0].measured, 1);
    exec_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_attention_shape),
        cmocka_unit_test(test_config_roundtrip),
        cmocka_unit_test(test_result_roundtrip),
        cmocka_unit_test(test_result_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
