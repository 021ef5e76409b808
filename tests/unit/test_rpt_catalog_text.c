/*
 * test_rpt_catalog_text.c: the table of smdplan catalog (reports/
 * rpt_catalog_text.c): a row per instance type with its bandwidths
 * converted (p4d: 400 Gbps network is 50e9 bytes/s in the catalog, 300 GB/s
 * NVSwitch per GPU), unknown NICs and prices as "-", the key naming the
 * price list, and each price source listed once with its instance types
 * unless the prices are one SageMaker list.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data.h"
#include "reports/rpt_catalog.h"
#include "reports/rpt_table.h"

#define CATALOG SMD_TEST_DATA_DIR "/catalog.json"

static char *text_of(const plan_catalog *cat, const char *price_list, int sagemaker)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    assert_int_equal(rpt_catalog_text(f, cat, price_list, sagemaker), ST_OK);
    fclose(f);
    return text;
}

/* The line of the table that starts with name. */
static const char *row_of(const char *text, const char *name)
{
    size_t k = strlen(name);
    for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, name, k) && p[k] == ' ')
            return p;
    fail_msg("no row %s", name);
    return NULL;
}

static void test_rows(void **state)
{
    (void)state;
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(CATALOG, &cat, &err), ST_OK);
    const plan_instance *p4d = found_or_fail(plan_catalog_find(&cat, "p4d"), "instance", "p4d");
    int i = (int)(p4d - cat.instances);
    /* an instance type whose NICs and price are not known */
    cat.instances[i].nics = 0;
    cat.instances[i].price_per_hour = 0;
    char *text = text_of(&cat, "EC2 on demand (test list)", 0);
    assert_text(text, TEXTS("instance", "aliases", "NICs/GPU", "$/h", "p5.48xlarge",
                            "$/h: EC2 on demand (test list); '-' = unknown",
                            "prices of p3.2xlarge, "),
                NULL);
    const char *row = row_of(text, "p4d.24xlarge");
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(strchr(row, '\n') - row), row);
    /* 8 x A100, 300 GB/s NVSwitch, 50e9 bytes/s = 400 Gbps, NICs and price unknown */
    assert_text(line, TEXTS(" p4d ", "8 x A100-40GB", "300 sw", " 400 ", " - "), NULL);
    assert_string_equal(line + strlen(line) - 2, " -");
    /* p5: 32 NICs on 8 GPUs, priced */
    row = row_of(text, "p5.48xlarge");
    snprintf(line, sizeof line, "%.*s", (int)(strchr(row, '\n') - row), row);
    assert_text(line, TEXTS(" 3200 ", " 4 ", "98.32"), NULL);
    free(text);
    /* one SageMaker list: its key says where, no line per source */
    text = text_of(&cat, "SageMaker (test list)", 1);
    assert_text(text, TEXTS("$/h: SageMaker (test list)"), TEXTS("prices of "));
    free(text);
    plan_catalog_free(&cat);
}

/* Each source once: the instance types priced from it on its one line. */
static void test_sources(void **state)
{
    (void)state;
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(CATALOG, &cat, &err), ST_OK);
    assert_true(cat.ninstances >= 3);
    for (int i = 0; i < cat.ninstances; i++)
        snprintf(cat.instances[i].price_source, sizeof cat.instances[i].price_source, "%s",
                 i == 1 ? "list B" : "list A");
    cat.instances[2].price_source[0] = '\0';
    char *text = text_of(&cat, "x", 0);
    char want[256];
    snprintf(want, sizeof want, "prices of %s: list B\n", cat.instances[1].name);
    assert_text(text, TEXTS(want, ": no source given"), NULL);
    snprintf(want, sizeof want, "prices of %s, %s", cat.instances[0].name,
             cat.instances[3].name);
    assert_text(text, TEXTS(want), NULL);
    /* "list B" once */
    int times = 0;
    for (size_t k = 0; text[k]; k++)
        times += strncmp(text + k, "list B", 6) == 0;
    assert_int_equal(times, 1);
    free(text);
    plan_catalog_free(&cat);
}

TEST_MAIN(rpt_term_set_wide(1),
          cmocka_unit_test(test_rows),
          cmocka_unit_test(test_sources))
