/*
 * test_data_prices.c: SageMaker price lists (data/data_prices.c).
 *
 * A list reads back with its region, source and date; a price is looked up
 * with or without "ml."; a type a list does not price is 0 (unknown), never
 * another list's; a price without a URL or a date, a region given twice, a
 * negative or non-ml price are refused naming the list; the shipped file
 * reads (it may hold no list, and then every region is refused by the CLI).
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data.h"

static const char *good =
    "{\"lists\": [{\"region\": \"xx-east-1\", \"what\": \"SageMaker training\", "
    "\"source\": \"https://example.com/p\", \"as_of\": \"2025-03-04\", "
    "\"prices\": {\"ml.p4d.24xlarge\": 12.5, \"_comment\": 1, \"ml.g5.48xlarge\": 3.25}}]}";

static void reads_and_looks_up(void **state)
{
    data_prices p;
    st_err err = {0};
    assert_int_equal(data_prices_parse(good, strlen(good), "t.json", &p, &err), ST_OK);
    assert_int_equal(p.n, 1);
    const data_price_list *l = data_prices_region(&p, "xx-east-1");
    assert_non_null(l);
    assert_string_equal(l->source, "https://example.com/p");
    assert_string_equal(l->as_of, "2025-03-04");
    assert_int_equal(l->n, 2);
    assert_rel(data_price_of(l, "p4d.24xlarge"), 12.5, 1e-12);
    assert_rel(data_price_of(l, "ml.g5.48xlarge"), 3.25, 1e-12);
    assert_true(data_price_of(l, "p5.48xlarge") == 0);
    assert_null(data_prices_region(&p, "xx-west-2"));
    data_prices_free(&p);
}

static void refuses_unsourced_and_bad(void **state)
{
    static const struct { const char *text, *needle; } bad[] = {
        {"{\"lists\": [{\"region\": \"a-1\", \"what\": \"w\", \"as_of\": \"2025-01-01\", "
         "\"prices\": {\"ml.x\": 1}}]}", "\"source\" missing"},
        {"{\"lists\": [{\"region\": \"a-1\", \"what\": \"w\", \"source\": \"my notes\", "
         "\"as_of\": \"2025-01-01\", \"prices\": {\"ml.x\": 1}}]}", "not a URL"},
        {"{\"lists\": [{\"region\": \"a-1\", \"what\": \"w\", \"source\": \"https://e.com\", "
         "\"as_of\": \"last year\", \"prices\": {\"ml.x\": 1}}]}", "YYYY-MM-DD"},
        {"{\"lists\": [{\"region\": \"a-1\", \"what\": \"w\", \"source\": \"https://e.com\", "
         "\"as_of\": \"2025-\\t1-02\", \"prices\": {\"ml.x\": 1}}]}", "YYYY-MM-DD"},
        {"{\"lists\": [{\"region\": \"a-1\", \"what\": \"w\", \"source\": \"https://e.com\", "
         "\"as_of\": \"2025-01-01\", \"prices\": {\"ml.x\": -1}}]}", "above 0"},
        {"{\"lists\": [{\"region\": \"a-1\", \"what\": \"w\", \"source\": \"https://e.com\", "
         "\"as_of\": \"2025-01-01\", \"prices\": {\"p4d\": 1}}]}", "SageMaker instance type"},
        {"{\"lists\": [{\"region\": \"A 1\", \"what\": \"w\", \"source\": \"https://e.com\", "
         "\"as_of\": \"2025-01-01\", \"prices\": {\"ml.x\": 1}}]}", "region 'A 1'"},
        {"{\"lists\": [{\"region\": \"a-1\", \"what\": \"w\", \"source\": \"https://e.com\", "
         "\"as_of\": \"2025-01-01\", \"prices\": {\"ml.x\": 1}}, {\"region\": \"a-1\", \"what\": "
         "\"w\", \"source\": \"https://e.com\", \"as_of\": \"2025-01-01\", \"prices\": {\"ml.x\": "
         "2}}]}", "two lists"},
        {"[1, 2]", "\"lists\" array"},
        {"{\"lists\": [", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        data_prices p;
        st_err err = {0};
        int rc = data_prices_parse(bad[i].text, strlen(bad[i].text), "bad.json", &p, &err);
        assert_int_not_equal(rc, ST_OK);
        if (!strstr(err.msg, bad[i].needle))
            print_error("case %zu: '%s' lacks '%s'\n", i, err.msg, bad[i].needle);
        assert_non_null(strstr(err.msg, bad[i].needle));
        assert_int_equal(p.n, 0);
        assert_null(p.list);
    }
}

static void shipped_file_reads(void **state)
{
    data_prices p;
    st_err err = {0};
    assert_int_equal(data_prices_load(SMD_TEST_DATA_DIR "/sagemaker_prices.json", &p, &err),
                     ST_OK);
    for (int i = 0; i < p.n; i++) /* whatever it holds is sourced and dated */
        assert_true(p.list[i].source[0] && p.list[i].as_of[0]);
    data_prices_free(&p);
}

/* The AWS Price List offer file of Amazon SageMaker (fixture in its
 * published format): the training instances' on-demand hourly prices per
 * region, dated with the file's publication date and citing the file of
 * its version; hosting, spot, storage and reserved terms are not training
 * on-demand prices. What it writes, data_prices_parse reads back the same. */
static void offer_file(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    st_err err = {0};
    assert_int_equal(data_read_file(SMD_TEST_FIXTURES "/aws_offer_sagemaker.json", &text, &len,
                                    &err), ST_OK);
    data_prices p;
    data_offer_info info;
    assert_int_equal(data_prices_from_offer(text, len, "offer", &p, &info, &err), ST_OK);
    assert_string_equal(info.version, "20250131000000");
    assert_string_equal(info.published, "2025-01-31");
    assert_int_equal(info.products, 6);
    assert_int_equal(info.prices, 3);
    assert_int_equal(p.n, 2);
    const data_price_list *e = data_prices_region(&p, "us-east-1");
    const data_price_list *w = data_prices_region(&p, "us-west-2");
    assert_non_null(e);
    assert_non_null(w);
    assert_true(data_price_of(e, "ml.p4d.24xlarge") == 11.25); /* training, not hosting's 99 */
    assert_true(data_price_of(e, "p5.48xlarge") == 22.5);
    assert_true(data_price_of(w, "ml.p4d.24xlarge") == 12.5);  /* on demand, not spot's 3 */
    assert_int_equal(w->n, 1);
    assert_string_equal(e->as_of, "2025-01-31");
    assert_non_null(strstr(e->source, "/AmazonSageMaker/20250131000000/index.json"));
    /* written and read back */
    char *json = data_prices_json(&p, "test");
    assert_non_null(json);
    data_prices back;
    assert_int_equal(data_prices_parse(json, strlen(json), "back", &back, &err), ST_OK);
    assert_int_equal(back.n, 2);
    assert_true(data_price_of(data_prices_region(&back, "us-west-2"), "ml.p4d.24xlarge") == 12.5);
    /* merging keeps a region the new file lacks and replaces one it has */
    data_prices older;
    const char *old_text = "{\"lists\": [{\"region\": \"eu-west-1\", \"what\": \"w\", "
                           "\"source\": \"https://example.com/x\", \"as_of\": \"2024-01-01\", "
                           "\"prices\": {\"ml.p4d.24xlarge\": 9.0}}, {\"region\": \"us-east-1\", "
                           "\"what\": \"w\", \"source\": \"https://example.com/x\", \"as_of\": "
                           "\"2024-01-01\", \"prices\": {\"ml.p4d.24xlarge\": 1.0}}]}";
    assert_int_equal(data_prices_parse(old_text, strlen(old_text), "old", &older, &err), ST_OK);
    assert_int_equal(data_prices_merge(&older, &p, &err), ST_OK);
    assert_int_equal(older.n, 3);
    assert_true(data_price_of(data_prices_region(&older, "eu-west-1"), "ml.p4d.24xlarge") == 9.0);
    assert_true(data_price_of(data_prices_region(&older, "us-east-1"), "ml.p4d.24xlarge") == 11.25);
    data_prices_free(&older);
    data_prices_free(&back);
    free(json);
    data_prices_free(&p);
    /* another service's file, or one without a date, is refused naming why */
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"{\"offerCode\": \"AmazonEC2\", \"version\": \"1\", \"publicationDate\": "
         "\"2025-01-31T00:00:00Z\", \"products\": {}, \"terms\": {\"OnDemand\": {}}}",
         "AmazonSageMaker"},
        {"{\"offerCode\": \"AmazonSageMaker\", \"version\": \"1\", \"products\": {}, "
         "\"terms\": {\"OnDemand\": {}}}", "publicationDate"},
        {"{\"offerCode\": \"AmazonSageMaker\", \"version\": \"1\", \"publicationDate\": "
         "\"2025-01-31T00:00:00Z\", \"products\": {}, \"terms\": {\"OnDemand\": {}}}",
         "no on-demand price"},
        {"[1", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_not_equal(data_prices_from_offer(bad[i].text, strlen(bad[i].text), "f", &p,
                                                    &info, &err), ST_OK);
        if (!strstr(err.msg, bad[i].needle))
            print_error("case %zu: '%s' lacks '%s'\n", i, err.msg, bad[i].needle);
        assert_non_null(strstr(err.msg, bad[i].needle));
        assert_int_equal(p.n, 0);
    }
    free(text);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_and_looks_up),
        cmocka_unit_test(refuses_unsourced_and_bad),
        cmocka_unit_test(shipped_file_reads),
        cmocka_unit_test(offer_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
