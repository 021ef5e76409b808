/*
 * test_plan_catalog.c: finding instance types, suggestions, cluster specs,
 * catalog linking checks and efficiency curves (planner/plan_catalog.c).
 *
 * Most cases use the shipped catalog (data/catalog.json), read once; the
 * linking checks build small catalogs in memory.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data.h"
#include "planner/plan.h"

static plan_catalog shipped;

static int load_shipped(void **state)
{
    st_err err = {0};
    int rc = data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &shipped, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    return rc;
}

static int free_shipped(void **state)
{
    plan_catalog_free(&shipped);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Lookup                                                                    */
/* ------------------------------------------------------------------------ */

static void find_by_name_alias_prefix_case(void **state)
{
    const plan_instance *p4d = plan_catalog_find(&shipped, "p4d.24xlarge");
    assert_non_null(p4d);
    assert_string_equal(p4d->name, "p4d.24xlarge");
    assert_ptr_equal(plan_catalog_find(&shipped, "p4d"), p4d);
    assert_ptr_equal(plan_catalog_find(&shipped, "P4D"), p4d);
    assert_ptr_equal(plan_catalog_find(&shipped, "ml.p4d.24xlarge"), p4d);
    assert_ptr_equal(plan_catalog_find(&shipped, "ML.P4D.24XLARGE"), p4d);
    assert_ptr_equal(plan_catalog_find(&shipped, "ml.p4d"), p4d);
    assert_string_equal(plan_catalog_find(&shipped, "p4de")->name, "p4de.24xlarge");
    assert_string_equal(plan_catalog_find(&shipped, "Selene")->name, "dgx-a100");
    assert_string_equal(plan_catalog_find(&shipped, "jeanzay")->name, "jean-zay-a100");
    assert_string_equal(plan_catalog_find(&shipped, "p5en")->name, "p5en.48xlarge");
    assert_null(plan_catalog_find(&shipped, "p4"));
    assert_null(plan_catalog_find(&shipped, "ml."));
    assert_null(plan_catalog_find(&shipped, ""));
    assert_null(plan_catalog_find(&shipped, NULL));
    /* the separators between a name's parts are not the name */
    assert_ptr_equal(plan_catalog_find(&shipped, "p4d.24xlarge "), p4d);
    assert_string_equal(plan_catalog_find(&shipped, "DGX A100")->name, "dgx-a100");
    assert_string_equal(plan_catalog_find(&shipped, "dgxa100")->name, "dgx-a100");
    assert_string_equal(plan_catalog_find(&shipped, "Jean Zay")->name, "jean-zay-a100");
    assert_string_equal(plan_catalog_find(&shipped, "Eos")->name, "dgx-h100");
    assert_null(plan_catalog_find(&shipped, "p4d.24xlarge2"));
    assert_null(plan_catalog_find(&shipped, "-"));
}

static void suggest_closest_first(void **state)
{
    const char *out[5];
    int n = plan_catalog_suggest(&shipped, "p4e", out, 5);
    assert_int_equal(n, 5);
    assert_string_equal(out[0], "p4d.24xlarge");
    /* "p4x" is one edit from p4d, two from p4de and p5 */
    n = plan_catalog_suggest(&shipped, "p4x", out, 3);
    assert_int_equal(n, 3);
    assert_string_equal(out[0], "p4d.24xlarge");
    assert_string_equal(out[1], "p4de.24xlarge");
    assert_string_equal(out[2], "p5.48xlarge");
    n = plan_catalog_suggest(&shipped, "ml.p5e.48xlarg", out, 1);
    assert_int_equal(n, 1);
    assert_string_equal(out[0], "p5e.48xlarge");
    n = plan_catalog_suggest(&shipped, "dgx-h10", out, 2);
    assert_string_equal(out[0], "dgx-h100");
    /* never more than the catalog has */
    const char *all[64];
    assert_int_equal(plan_catalog_suggest(&shipped, "x", all, 64), shipped.ninstances);
    assert_int_equal(plan_catalog_suggest(&shipped, "x", all, 0), 0);
}

/* ------------------------------------------------------------------------ */
/* Cluster specs                                                             */
/* ------------------------------------------------------------------------ */

static void expect_cluster(const char *text, const char *inst, int nodes)
{
    plan_cluster c;
    st_err err = {0};
    int rc = plan_cluster_parse(&shipped, text, &c, &err);
    if (rc)
        fail_msg("'%s': %s", text, err.msg);
    assert_string_equal(c.inst->name, inst);
    assert_int_equal(c.nodes, nodes);
    assert_int_equal(c.gpus, nodes * c.inst->gpus_per_node);
    assert_ptr_equal(c.gpu, &shipped.gpus[c.inst->gpu_index]);
    assert_ptr_equal(c.intra_curve, &shipped.curves[c.inst->intra_curve_index]);
    assert_ptr_equal(c.net_curve, &shipped.curves[c.inst->net_curve_index]);
}

static void cluster_accepted_forms(void **state)
{
    expect_cluster("16xp4d", "p4d.24xlarge", 16);
    expect_cluster("16xml.p4d.24xlarge", "p4d.24xlarge", 16);
    expect_cluster("16 x p4d", "p4d.24xlarge", 16);
    expect_cluster("  13X P4DE  ", "p4de.24xlarge", 13);
    expect_cluster("p4d:16", "p4d.24xlarge", 16);
    expect_cluster("ml.p5.48xlarge : 7", "p5.48xlarge", 7);
    expect_cluster("p4d", "p4d.24xlarge", 1);
    expect_cluster("dgx-2", "dgx-2", 1);
    expect_cluster("3xdgx2", "dgx-2", 3);
    expect_cluster("100000xp5", "p5.48xlarge", 100000);
    expect_cluster("0016xp4d", "p4d.24xlarge", 16);
}

static void expect_reject(const char *text, int code, const char *in_msg)
{
    plan_cluster c = {0};
    st_err err = {0};
    int rc = plan_cluster_parse(&shipped, text, &c, &err);
    if (rc != code)
        fail_msg("'%s': status %d (%s), expected %d", text, rc, err.msg, code);
    assert_int_equal(err.code, code);
    assert_int_equal(st_exit_code(rc), 2);
    assert_null(c.inst);
    if (in_msg && !strstr(err.msg, in_msg))
        fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, in_msg);
}

static void cluster_rejections(void **state)
{
    expect_reject("0xp4d", ST_EINVAL, "node count allowed 1 to 100000");
    expect_reject("-3xp4d", ST_EINVAL, "'-3' is not a whole number");
    expect_reject("+3xp4d", ST_EINVAL, "not a whole number");
    expect_reject("16xnope", ST_ENOENT, "unknown instance type 'nope': closest are");
    expect_reject("16x", ST_EINVAL, "missing instance type");
    expect_reject("16x   ", ST_EINVAL, "missing instance type");
    expect_reject("x16", ST_ENOENT, "unknown instance type 'x16'");
    expect_reject("100001xp4d", ST_EINVAL, "node count allowed 1 to 100000");
    expect_reject("99999999999999999999999xp4d", ST_EINVAL, "node count allowed");
    expect_reject("16.5xp4d", ST_EINVAL, "expected COUNTxTYPE");
    expect_reject("16p4d", ST_EINVAL, "expected COUNTxTYPE");
    expect_reject("p4d:0", ST_EINVAL, "node count allowed");
    expect_reject("p4d:", ST_EINVAL, "missing node count");
    expect_reject(":16", ST_EINVAL, "missing instance type");
    expect_reject("p4d:1e3", ST_EINVAL, "not a whole number");
    expect_reject("", ST_EINVAL, "empty");
    expect_reject("   ", ST_EINVAL, "empty");
    expect_reject("16xml.", ST_ENOENT, "unknown instance type");
}

static void cluster_unknown_message(void **state)
{
    plan_cluster c;
    st_err err = {0};
    assert_int_equal(plan_cluster_parse(&shipped, "4xp4x", &c, &err), ST_ENOENT);
    assert_string_equal(err.msg, "unknown instance type 'p4x': closest are p4d.24xlarge, "
                                 "p4de.24xlarge, p5.48xlarge (see 'smdplan catalog')");
}

static void cluster_make_checks(void **state)
{
    const plan_instance *dgx2 = plan_catalog_find(&shipped, "dgx-2");
    plan_cluster c;
    st_err err = {0};
    assert_int_equal(plan_cluster_make(&shipped, dgx2, 13, &c, &err), ST_OK);
    assert_int_equal(c.gpus, 13 * 16);
    assert_string_equal(c.gpu->name, "V100-32GB");
    assert_int_equal(plan_cluster_make(&shipped, dgx2, 0, &c, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(plan_cluster_make(&shipped, dgx2, 100001, &c, &err), ST_EINVAL);
    st_err_clear(&err);
    assert_int_equal(plan_cluster_make(&shipped, NULL, 1, &c, &err), ST_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* Curves                                                                    */
/* ------------------------------------------------------------------------ */

static void curve_eval_at_between_outside(void **state)
{
    plan_curve c = {.name = "t", .n = 3, .log2_bytes = {10, 20, 30}, .eff = {0.1, 0.5, 1.0}};
    assert_rel(plan_curve_eval(&c, 1024.0), 0.1, 1e-15);
    assert_rel(plan_curve_eval(&c, 1048576.0), 0.5, 1e-15);
    assert_rel(plan_curve_eval(&c, 1073741824.0), 1.0, 1e-15);
    /* between: linear in log2(bytes) */
    assert_rel(plan_curve_eval(&c, 32768.0), 0.3, 1e-12);
    assert_rel(plan_curve_eval(&c, 3.0 * 1048576.0), 0.5 + 0.5 * log2(3.0) / 10.0, 1e-12);
    assert_rel(plan_curve_eval(&c, 1000.0), 0.1, 1e-15);
    /* outside: flat */
    assert_rel(plan_curve_eval(&c, 8.0), 0.1, 1e-15);
    assert_rel(plan_curve_eval(&c, 0.0), 0.1, 1e-15);
    assert_rel(plan_curve_eval(&c, -5.0), 0.1, 1e-15);
    assert_rel(plan_curve_eval(&c, 1e15), 1.0, 1e-15);
    plan_curve one = {.name = "one", .n = 1, .log2_bytes = {20}, .eff = {0.37}};
    assert_rel(plan_curve_eval(&one, 1.0), 0.37, 1e-15);
    assert_rel(plan_curve_eval(&one, 1e12), 0.37, 1e-15);
    assert_rel(plan_curve_eval(NULL, 1e6), 1.0, 1e-15);
}

static const plan_curve *curve(const char *name)
{
    for (int i = 0; i < shipped.ncurves; i++)
        if (strcmp(shipped.curves[i].name, name) == 0)
            return &shipped.curves[i];
    fail_msg("no curve %s", name);
    return NULL;
}

/* The shipped network curves, used as plan_hw.c uses them (latency +
 * S / (net_bps * eff) for 2 nodes of 8 GPUs), give back the measured
 * nccl-tests times they were derived from (reference csv rows 28 and 57:
 * min of out-of-place and in-place time), within the 4-digit rounding. */
static void shipped_curves_reproduce_measurements(void **state)
{
    const plan_instance *p4de = plan_catalog_find(&shipped, "p4de");
    const plan_instance *p5 = plan_catalog_find(&shipped, "p5");
    double S = 1073741824.0;
    double t4 = p4de->net_latency_s +
                S / (p4de->net_bps * plan_curve_eval(&shipped.curves[p4de->net_curve_index], S));
    assert_rel(t4, 26194e-6, 1e-3);
    double t5 = p5->net_latency_s +
                S / (p5->net_bps * plan_curve_eval(&shipped.curves[p5->net_curve_index], S));
    assert_rel(t5, 4565.6e-6, 1e-3);
    /* Intra curves are fractions of the bus bandwidth at 1 GiB. */
    assert_rel(plan_curve_eval(curve("nvswitch-h100"), S), 1.0, 1e-12);
    assert_rel(plan_curve_eval(curve("generic-nvlink"), 4 * S), 1.0, 1e-12);
    /* Efficiency grows with size across the range that matters. */
    const plan_curve *c = curve("efa-p5-2node");
    assert_true(plan_curve_eval(c, 1 << 20) < plan_curve_eval(c, 1 << 26));
    assert_true(plan_curve_eval(c, 1 << 26) < plan_curve_eval(c, 1 << 30));
}

/* ------------------------------------------------------------------------ */
/* Linking checks on small in-memory catalogs                                */
/* ------------------------------------------------------------------------ */

typedef struct mini {
    plan_gpu gpu;
    plan_curve curve;
    plan_instance inst[2];
    plan_catalog cat;
} mini;

static void mini_init(mini *m)
{
    memset(m, 0, sizeof *m);
    m->gpu = (plan_gpu){.name = "G-40GB", .mem_bytes = 40e9, .peak_flops = 312e12,
                        .hbm_bps = 1.555e12, .gemm_eff_max = 0.8, .gemm_dim_half = 96,
                        .misaligned_factor = 0.5, .hbm_eff = 0.8, .flash_eff = 0.55,
                        .gemm_align_bytes = 128, .align_partial_factor = 0.75};
    m->curve = (plan_curve){.name = "c", .n = 2, .log2_bytes = {10, 30}, .eff = {0.2, 0.9}};
    for (int i = 0; i < 2; i++) {
        plan_instance *in = &m->inst[i];
        *in = (plan_instance){.gpu = "g-40gb", .gpus_per_node = 8, .nvlink_bps = 300e9,
                              .nvswitch = 1, .intra_busbw_bps = 230e9, .intra_latency_s = 15e-6,
                              .net_bps = 50e9, .net_latency_s = 160e-6, .net_ring_eff = 1.0, .net_tree_eff = 1.0, .net_latency_nodes = 2, .price_per_hour = 1,
                              .intra_curve = "c", .net_curve = "C", .naliases = 1};
        snprintf(in->name, sizeof in->name, "box%d.large", i);
        snprintf(in->aliases[0], sizeof in->aliases[0], "box%d", i);
    }
    m->cat = (plan_catalog){.gpus = &m->gpu, .ngpus = 1, .instances = m->inst, .ninstances = 2,
                            .curves = &m->curve, .ncurves = 1};
}

static void expect_link_fails(mini *m, const char *in_msg)
{
    st_err err = {0};
    assert_int_equal(plan_catalog_link(&m->cat, &err), ST_EINVAL);
    if (!strstr(err.msg, in_msg))
        fail_msg("message '%s' lacks '%s'", err.msg, in_msg);
}

static void link_resolves_and_checks(void **state)
{
    mini m;
    st_err err = {0};
    mini_init(&m);
    assert_int_equal(plan_catalog_link(&m.cat, &err), ST_OK);
    assert_int_equal(m.inst[1].gpu_index, 0);
    assert_int_equal(m.inst[1].net_curve_index, 0);

    mini_init(&m), m.inst[0].gpus_per_node = 0;
    expect_link_fails(&m, "gpus_per_node 0; allowed: 1 to 72");
    mini_init(&m), m.inst[1].gpus_per_node = 73;
    expect_link_fails(&m, "gpus_per_node 73");
    mini_init(&m), m.inst[0].net_bps = -1;
    expect_link_fails(&m, "net_bps -1; must be positive");
    mini_init(&m), m.inst[0].intra_busbw_bps = NAN;
    expect_link_fails(&m, "intra_busbw_bps");
    mini_init(&m), m.inst[0].net_latency_s = 160;
    expect_link_fails(&m, "net_latency_s 160; allowed: 0 to 1 s");
    mini_init(&m), m.inst[0].price_per_hour = -2;
    expect_link_fails(&m, "price_per_hour");
    mini_init(&m), snprintf(m.inst[0].gpu, sizeof m.inst[0].gpu, "H900");
    expect_link_fails(&m, "unknown gpu 'H900'");
    mini_init(&m), snprintf(m.inst[1].net_curve, sizeof m.inst[1].net_curve, "nope");
    expect_link_fails(&m, "unknown net_curve 'nope'");
    mini_init(&m), m.curve.log2_bytes[1] = 10;
    expect_link_fails(&m, "log2_bytes must increase");
    mini_init(&m), m.curve.eff[0] = 0;
    expect_link_fails(&m, "eff[0] 0; allowed: (0, 1]");
    mini_init(&m), m.curve.eff[1] = 1.01;
    expect_link_fails(&m, "eff[1] 1.01");
    mini_init(&m), m.curve.n = 0;
    expect_link_fails(&m, "0 points");
    mini_init(&m), m.gpu.hbm_eff = 1.5;
    expect_link_fails(&m, "hbm_eff 1.5");
    mini_init(&m), m.gpu.mem_bytes = 0;
    expect_link_fails(&m, "must be positive");
    mini_init(&m), m.gpu.align_partial_factor = 0;
    expect_link_fails(&m, "align_partial_factor 0; allowed: (0, 1]");
    mini_init(&m), m.gpu.gemm_align_bytes = 100;
    expect_link_fails(&m, "gemm_align_bytes 100; allowed: a multiple of 16");
    mini_init(&m), m.gpu.gemm_align_bytes = 2048;
    expect_link_fails(&m, "gemm_align_bytes 2048");
    /* names and aliases are unique, ignoring case, "ml." and separators */
    mini_init(&m), snprintf(m.inst[1].aliases[0], sizeof m.inst[1].aliases[0], "ML.BOX0");
    expect_link_fails(&m, "alias 'ML.BOX0' is also a name or alias of 'box0.large'");
    mini_init(&m), snprintf(m.inst[1].name, sizeof m.inst[1].name, "Box0.Large");
    expect_link_fails(&m, "instance name 'Box0.Large'");
    mini_init(&m), m.inst[0].naliases = 2;
    snprintf(m.inst[0].aliases[1], sizeof m.inst[0].aliases[1], "box0");
    expect_link_fails(&m, "alias 'box0'");
    mini_init(&m), m.inst[0].naliases = 7;
    expect_link_fails(&m, "7 aliases");
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find_by_name_alias_prefix_case),
        cmocka_unit_test(suggest_closest_first),
        cmocka_unit_test(cluster_accepted_forms),
        cmocka_unit_test(cluster_rejections),
        cmocka_unit_test(cluster_unknown_message),
        cmocka_unit_test(cluster_make_checks),
        cmocka_unit_test(curve_eval_at_between_outside),
        cmocka_unit_test(shipped_curves_reproduce_measurements),
        cmocka_unit_test(link_resolves_and_checks),
    };
    return cmocka_run_group_tests(tests, load_shipped, free_shipped);
}
