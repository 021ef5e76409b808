/*
 * test_data_bench_json.c: smdplan bench's --json document
 * (data/data_bench_json.c).
 *
 * A device's measurements come out under the key asked ("cpu", "gpu")
 * with every number as measured and busy from the planner's rule; the
 * records the parts came from under <key>_from_record and
 * comm_from_record, only when given; the transport's text as an object;
 * the catalog's gpus and instances (curves only when asked), arrays even
 * without an entry; catalog_file only when written; recorded last. Keys
 * in that order, as scripts have read them.
 */
#include "test_util.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

#include "data/data_bench_json.h"
#include "data/data_host_entry.h"
#include "test_bench_fixture.h"

static void cpu_json(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    bench_fixture_cpu(&b);
    b.elem[b.nelem++] = (plan_bench_elem){"gelu_fwd", 2, 131072, 9, 1.25e-3, 1.25e-3 / 131072};
    b.spread_median = 0.08; /* over PLAN_BENCH_SPREAD_BUSY: busy */
    b.spread_worst = 0.31;
    cJSON *o = data_bench_cpu_json(&b);
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "host")->valuestring, BF_HOST);
    assert_string_equal(cJSON_GetObjectItem(o, "blas")->valuestring, "OpenBLAS test");
    assert_true(cJSON_GetObjectItem(o, "cores")->valuedouble == BF_CORES);
    assert_true(cJSON_GetObjectItem(o, "mem_bytes")->valuedouble == BF_MEM_BYTES);
    assert_true(cJSON_GetObjectItem(o, "spread_worst")->valuedouble == 0.31);
    assert_true(cJSON_GetObjectItem(o, "load_start")->valuedouble == -1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "busy")));
    const cJSON *g = cJSON_GetObjectItem(o, "gemm");
    assert_int_equal(cJSON_GetArraySize(g), b.ngemm);
    const cJSON *g7 = cJSON_GetArrayItem(g, 7);
    assert_string_equal(cJSON_GetObjectItem(g7, "kind")->valuestring, "sgemm");
    assert_true(cJSON_GetObjectItem(g7, "m")->valuedouble == (double)b.gemm[7].m);
    assert_true(cJSON_GetObjectItem(g7, "k")->valuedouble == (double)b.gemm[7].k);
    assert_true(cJSON_GetObjectItem(g7, "achieved_flops")->valuedouble == b.gemm[7].flops);
    assert_true(cJSON_GetObjectItem(g7, "time_s")->valuedouble == b.gemm[7].time_s);
    const cJSON *el = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "elementwise"), 0);
    assert_string_equal(cJSON_GetObjectItem(el, "op")->valuestring, "gelu_fwd");
    assert_true(cJSON_GetObjectItem(el, "n")->valuedouble == 131072);
    assert_true(cJSON_GetObjectItem(el, "elem_s")->valuedouble == 1.25e-3 / 131072);
    const cJSON *tr = cJSON_GetObjectItem(o, "triad");
    assert_int_equal(cJSON_GetArraySize(tr), 2);
    assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(tr, 1), "triad_bps")->valuedouble ==
                BF_TRIAD_FULL_BPS);
    cJSON_Delete(o);
}

/* The keys of the document's top level, in order, joined by spaces. */
static void top_keys(const char *text, char *buf, size_t n)
{
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    buf[0] = '\0';
    for (const cJSON *c = root->child; c; c = c->next)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? " " : "", c->string);
    cJSON_Delete(root);
}

static void document(void **state)
{
    (void)state;
    data_host_bench b = bench_fixture_host(1);
    const int threads[] = {2};
    data_host_entries *es = bench_fixture_entries(&b, threads, 1);
    data_bench_doc d = {.device_key = "cpu", .device = b.cpu, .device_from_record = 12,
                        .comm_json = "{\"version\": 1, \"ranks\": 4}", .comm_from_record = 9,
                        .entry = es->cat, .with_curves = 1, .catalog_file = "host.json",
                        .recorded = 1};
    char *s = data_bench_json(&d);
    char keys[256];
    top_keys(s, keys, sizeof keys);
    assert_string_equal(keys, "cpu cpu_from_record comm comm_from_record catalog catalog_file "
                              "recorded");
    cJSON *root = cJSON_Parse(s);
    assert_true(cJSON_GetObjectItem(root, "cpu_from_record")->valuedouble == 12);
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "comm"), "ranks")->valuedouble == 4);
    const cJSON *cat = cJSON_GetObjectItem(root, "catalog");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cat, "gpus")), 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cat, "instances")), 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cat, "curves")), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cat, "gpus"), 0),
                                            "name")->valuestring,
                        "cpu-box7-t2");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(root, "recorded")));
    cJSON_Delete(root);
    free(s);

    /* a GPU's: its key, no curves, nothing not given */
    d = (data_bench_doc){.device_key = "gpu", .device = b.cpu, .entry = es->cat};
    s = data_bench_json(&d);
    top_keys(s, keys, sizeof keys);
    assert_string_equal(keys, "gpu catalog recorded");
    assert_text(s, TEXTS("\"recorded\":\tfalse"), TEXTS("\"curves\"", "catalog_file"));
    free(s);

    /* no device, no entry: the catalog's arrays empty */
    d = (data_bench_doc){.device_key = "cpu", .comm_from_record = 3, .with_curves = 1};
    s = data_bench_json(&d);
    top_keys(s, keys, sizeof keys);
    assert_string_equal(keys, "comm_from_record catalog recorded");
    root = cJSON_Parse(s);
    cat = cJSON_GetObjectItem(root, "catalog");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cat, "gpus")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cat, "curves")), 0);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(cat, "instances")));
    cJSON_Delete(root);
    free(s);
    data_host_entries_free(es);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(cpu_json),
          cmocka_unit_test(document))
