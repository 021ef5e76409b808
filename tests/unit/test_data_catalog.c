/*
 * test_data_catalog.c: reading the catalog file and user overrides
 * (data/data_catalog.c), and `smdplan catalog` (app/cli_catalog.c).
 *
 * The shipped file must load and link with every type the planner's users
 * and the published-run checks name; user files merge by name; every bad
 * input gives its status and a message naming the file, entry and field,
 * and leaves nothing behind (run under valgrind: see the commit message).
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cli.h"
#include "data/data.h"
#include "planner/plan.h"

#define CATALOG SMD_TEST_DATA_DIR "/catalog.json"
#define GIB 1073741824.0

static const plan_instance *find(const plan_catalog *c, const char *name)
{
    return found_or_fail(plan_catalog_find(c, name), "instance type", name);
}

static const plan_gpu *gpu_of(const plan_catalog *c, const char *inst)
{
    return &c->gpus[find(c, inst)->gpu_index];
}

/* ------------------------------------------------------------------------ */
/* The shipped catalog                                                       */
/* ------------------------------------------------------------------------ */

static void shipped_loads_and_links(void **state)
{
    plan_catalog cat;
    st_err err = {0};
    int rc = data_catalog_load(CATALOG, &cat, &err);
    if (rc)
        fail_msg("%s", err.msg);
    static const char *const want[] = {
        "p3.2xlarge", "p3.16xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge",
        "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "g5.48xlarge", "dgx-a100", "dgx-2",
        "dgx-h100", "jean-zay-a100",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(find(&cat, want[i])->name, want[i]);
    for (int i = 0; i < cat.ninstances; i++) {
        const plan_instance *in = &cat.instances[i];
        plan_cluster c;
        assert_int_equal(plan_cluster_make(&cat, in, 2, &c, &err), ST_OK);
        assert_true(in->gpu_index >= 0 && in->gpu_index < cat.ngpus);
        assert_true(strlen(in->source) > 40); /* a real citation, not the file name */
    }
    for (int i = 0; i < cat.ngpus; i++)
        assert_true(strlen(cat.gpus[i].source) > 40);
    for (int i = 0; i < cat.ncurves; i++)
        assert_true(strlen(cat.curves[i].source) > 40);
    plan_catalog_free(&cat);
    plan_catalog_free(&cat); /* harmless twice */
}

/* Values straight from hardware.md and the nccl-tests rows, in base units. */
static void shipped_values(void **state)
{
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    const plan_instance *p4d = find(&cat, "p4d");
    assert_int_equal(p4d->gpus_per_node, 8);
    assert_rel(p4d->nvlink_bps, 300e9, 1e-12);   /* 600 GB/s NVSwitch, both directions */
    assert_rel(p4d->net_bps, 50e9, 1e-12);       /* 400 Gbps */
    assert_rel(p4d->intra_busbw_bps, 230.77e9, 1e-12);
    assert_rel(p4d->price_per_hour, 32.77, 1e-12);
    assert_int_equal(p4d->nvswitch, 1);
    assert_rel(gpu_of(&cat, "p4d")->mem_bytes, 40 * GIB, 1e-12);
    assert_rel(gpu_of(&cat, "p4d")->peak_flops, 312e12, 1e-12);
    assert_rel(gpu_of(&cat, "p4de")->hbm_bps, 2039e9, 1e-12);
    assert_rel(find(&cat, "p5")->net_bps, 400e9, 1e-12);  /* 3200 Gbps */
    assert_rel(find(&cat, "p5")->intra_busbw_bps, 370e9, 1e-12);
    assert_rel(gpu_of(&cat, "p5")->peak_flops, 989e12, 1e-12);
    assert_rel(find(&cat, "p5e")->price_per_hour, 0.0, 0);
    assert_rel(gpu_of(&cat, "p5en")->mem_bytes, 141 * GIB, 1e-12);
    assert_rel(find(&cat, "selene")->net_bps, 200e9, 1e-12); /* 8 x 200 Gb/s */
    assert_int_equal(find(&cat, "dgx-2")->gpus_per_node, 16);
    assert_int_equal(find(&cat, "p3.2xlarge")->gpus_per_node, 1);
    assert_int_equal(find(&cat, "p3.16xlarge")->nvswitch, 0);
    /* both A100 types are one chip with A100's 128-byte alignment tier */
    assert_string_equal(gpu_of(&cat, "p4d")->silicon, "GA100");
    assert_string_equal(gpu_of(&cat, "p4de")->silicon, "GA100");
    assert_rel(gpu_of(&cat, "p4d")->gemm_align_bytes, 128, 0);
    assert_rel(gpu_of(&cat, "p4d")->align_partial_factor,
               gpu_of(&cat, "p4de")->align_partial_factor, 0);
    assert_string_equal(gpu_of(&cat, "dgx-a100-40gb")->name, "A100-40GB");
    assert_rel(gpu_of(&cat, "p5")->gemm_align_bytes, 16, 0);
    plan_catalog_free(&cat);
}

/* The boards beside the SXM modules and the newer chips, as their sources
 * give them: dense peaks are half the datasheets' sparse figures; nominal
 * GB read as GiB; a node's rates one direction. A PCIe or NVL board is a
 * GPU of its own, its name carrying the variant word, on the SXM module's
 * silicon; its node has no NVSwitch and runs a ring over 8 GPUs at PCIe. */
static void shipped_boards(void **state)
{
    (void)state;
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    const struct {
        const char *node, *gpu, *silicon;
        double mem_gib, peak_tflops, fp8_tflops, hbm_gbps;
        int sms;
    } boards[] = {
        /* A100 datasheet: PCIe 40GB HBM2 1555 GB/s, 80GB HBM2e 1935 GB/s */
        {"pcie8-a100-40gb", "A100-PCIe-40GB", "GA100", 40, 312, 0, 1555, 108},
        {"pcie8-a100-80gb", "A100-PCIe-80GB", "GA100", 80, 312, 0, 1935, 108},
        /* H100 datasheet: PCIe 1513 / 3026 sparse, 2 TB/s; NVL 1671 / 3341, 3.9 TB/s */
        {"pcie8-h100", "H100-PCIe-80GB", "GH100", 80, 756, 1513, 2000, 114},
        {"pcie8-h100-nvl", "H100-NVL-94GB", "GH100", 94, 835, 1670, 3900, 0},
        /* JSC JUPITER: 132 SMs, 96 GB HBM3 at 4 TB/s; the H100 SXM's peaks */
        {"jupiter-gh200", "GH200-96GB", "GH100", 96, 989, 1979, 4000, 132},
        /* HGX B200 per GPU: 4.5 / 9 PFLOP/s sparse, 180 GB at 7.7 TB/s */
        {"dgx-b200", "B200-180GB", "B200", 180, 2250, 4500, 7700, 148},
        /* GB200 NVL72 over 72 GPUs: 360 / 720 PFLOP/s sparse, 13.4 TB at 576 TB/s */
        {"gb200-nvl72", "GB200-186GB", "B200", 186, 2500, 5000, 8000, 148},
    };
    for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++) {
        const plan_gpu *g = gpu_of(&cat, boards[i].node);
        assert_string_equal(g->name, boards[i].gpu);
        assert_string_equal(g->silicon, boards[i].silicon);
        assert_rel(g->mem_bytes, boards[i].mem_gib * GIB, 1e-12);
        assert_rel(g->peak_flops, boards[i].peak_tflops * 1e12, 1e-12);
        assert_rel(g->fp8_peak_flops, boards[i].fp8_tflops * 1e12, 1e-12);
        assert_rel(g->hbm_bps, boards[i].hbm_gbps * 1e9, 1e-12);
        assert_int_equal(g->sms, boards[i].sms);
        assert_true(g->gemm_eff_max > 0 && g->gemm_eff_max <= g->gemm_ceiling);
        assert_true(strlen(g->source) > 40);
        const plan_instance *node = find(&cat, boards[i].node);
        assert_non_null(node);
        if (node)
            assert_true(strlen(node->source) > 40);
    }
    /* Blackwell parts run attention as the H100 measured it, at the same
     * fractions of their own peak: FlashAttention-2 and cuDNN per direction,
     * so cuDNN's lead over FlashAttention-2 carries over with them */
    const plan_gpu *sxm = gpu_of(&cat, "p5.48xlarge");
    assert_true(sxm->cudnn_fwd_eff > sxm->flash2_fwd_eff && sxm->flash2_bwd_eff > 0);
    const char *const blackwell[] = {"dgx-b200", "gb200-nvl72"};
    for (size_t i = 0; i < sizeof blackwell / sizeof blackwell[0]; i++) {
        const plan_gpu *g = gpu_of(&cat, blackwell[i]);
        assert_rel(g->flash2_fwd_eff, sxm->flash2_fwd_eff, 1e-12);
        assert_rel(g->flash2_bwd_eff, sxm->flash2_bwd_eff, 1e-12);
        assert_rel(g->cudnn_fwd_eff, sxm->cudnn_fwd_eff, 1e-12);
        assert_rel(g->cudnn_bwd_eff, sxm->cudnn_bwd_eff, 1e-12);
        assert_false(g->flash3); /* FlashAttention-3 is Hopper's */
    }
    /* the variant word in the name keeps a board apart from its module */
    assert_non_null(strstr(gpu_of(&cat, "pcie8-h100")->name, "PCIe"));
    assert_non_null(strstr(gpu_of(&cat, "pcie8-h100-nvl")->name, "NVL"));
    assert_null(strstr(gpu_of(&cat, "p5")->name, "PCIe"));
    /* DGX B200: 8 GPUs, NVLink 5 at 1.8 TB/s both directions, 8 x 400 Gb/s */
    const plan_instance *b200 = find(&cat, "dgxb200");
    assert_string_equal(b200->name, "dgx-b200");
    assert_int_equal(b200->gpus_per_node, 8);
    assert_int_equal(b200->nvswitch, 1);
    assert_rel(b200->nvlink_bps, 900e9, 1e-12);
    assert_rel(b200->net_bps, 400e9, 1e-12);
    assert_int_equal(b200->nics, 8);
    const plan_gpu *bg = gpu_of(&cat, "dgx-b200");
    assert_int_equal(bg->ref_node_gpus, 8);
    assert_rel(bg->ref_node_net_bps, 400e9, 1e-12);
    /* GB200 NVL72: one NVLink 5 domain of 72 GPUs, a 400 Gb/s NIC each */
    const plan_instance *nvl = find(&cat, "nvl72");
    assert_string_equal(nvl->name, "gb200-nvl72");
    assert_int_equal(nvl->gpus_per_node, 72);
    assert_int_equal(nvl->nvswitch, 1);
    assert_rel(nvl->nvlink_bps, 900e9, 1e-12);
    assert_rel(nvl->net_bps, 72 * 400e9 / 8, 1e-12);
    assert_int_equal(gpu_of(&cat, "gb200-nvl72")->ref_node_gpus, 72);
    /* JUPITER: 4 GH200 fully linked at 150 GB/s per pair and direction, no
     * NVSwitch, 4 x 200 Gb/s NDR200 */
    const plan_instance *jup = find(&cat, "jupiter");
    assert_string_equal(jup->name, "jupiter-gh200");
    assert_int_equal(jup->gpus_per_node, 4);
    assert_int_equal(jup->nvswitch, 0);
    assert_rel(jup->nvlink_bps, 3 * 150e9, 1e-12);
    assert_rel(jup->net_bps, 100e9, 1e-12);
    assert_int_equal(gpu_of(&cat, "jupiter")->ref_node_gpus, 4);
    /* GH200 runs the H100 SXM's measured GEMM model (the same GH100 at the
     * same peak), not its copy, which was measured on other memory */
    const plan_gpu *gh = gpu_of(&cat, "jupiter"), *h100 = gpu_of(&cat, "p5");
    assert_true(gh->gemm_measured);
    assert_rel(gh->gemm_ceiling, h100->gemm_ceiling, 1e-12);
    assert_rel(gh->gemm_dim_half, h100->gemm_dim_half, 1e-12);
    assert_rel(plan_gpu_copy_eff(gh), 0.0, 0);
    assert_true(plan_gpu_copy_eff(h100) > 0);
    /* PCIe nodes: NVLink bridges join pairs only, so PCIe one direction
     * (Gen5 x16 64 GB/s, Gen4 32 GB/s); no reference node for a board */
    assert_int_equal(find(&cat, "pcie8-h100")->nvswitch, 0);
    assert_rel(find(&cat, "pcie8-h100")->nvlink_bps, 64e9, 1e-12);
    assert_rel(find(&cat, "pcie8-a100-80gb")->nvlink_bps, 32e9, 1e-12);
    assert_rel(find(&cat, "pcie8-h100-nvl")->net_bps, 200e9, 1e-12); /* 4 x 400 Gb/s */
    assert_int_equal(gpu_of(&cat, "pcie8-h100")->ref_node_gpus, 0);
    plan_catalog_free(&cat);
}

/* AMD's Instinct GPUs as ROCm's documents and their nodes' give them: an
 * MI250X entry is one GCD of a two-GCD package; FlashAttention-3 runs on
 * Hopper alone. No AMD run was fitted: the GEMM and attention efficiencies
 * are the pool of the NVIDIA chip of their generation (as calibrated)
 * scaled by the two chips' GEMM ceilings from one published table
 * (Bekman's MAMF: A100 SXM 267.9 of 312, H100 SXM 794.5 of 989), rounded
 * to the catalog's four digits. A refit that moves the pools moves these:
 * this test says so. */
static void shipped_amd(void **state)
{
    (void)state;
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    const struct {
        const char *node, *gpu, *silicon, *pool_node;
        double mem_gib, peak_tflops, fp8_tflops, hbm_gbps, pool_ceiling;
        int sms, package_devices, gpus_per_node;
        double link_gbps, busbw_gbps, net_gbps;
    } amd[] = {
        {"frontier", "MI250X-64GB", "gfx90a", "dgx-a100", 64, 191.5, 0, 1600, 267.9 / 312, 110, 2,
         8, 100, 77, 800},
        {"lumi", "MI250X-64GB", "gfx90a", "dgx-a100", 64, 191.5, 0, 1600, 267.9 / 312, 110, 2, 8,
         100, 77, 800},
        {"ND MI300X v5", "MI300X-192GB", "gfx942", "p5", 192, 1307.4, 2614.9, 5300, 794.5 / 989,
         304, 0, 8, 448, 314.72, 3200},
        /* the MI325X on the MI300X platform's links, a 400 Gb/s NIC per GPU */
        {"amd-mi325x-platform", "MI325X-256GB", "gfx942", "p5", 256, 1307.4, 2614.9, 6000,
         794.5 / 989, 304, 0, 8, 448, 314.72, 3200},
    };
    for (size_t i = 0; i < sizeof amd / sizeof amd[0]; i++) {
        const plan_gpu *g = gpu_of(&cat, amd[i].node), *pool = gpu_of(&cat, amd[i].pool_node);
        assert_string_equal(g->name, amd[i].gpu);
        assert_string_equal(g->silicon, amd[i].silicon);
        assert_rel(g->mem_bytes, amd[i].mem_gib * GIB, 1e-12);
        assert_rel(g->peak_flops, amd[i].peak_tflops * 1e12, 1e-12);
        assert_rel(g->fp8_peak_flops, amd[i].fp8_tflops * 1e12, 1e-12);
        assert_rel(g->hbm_bps, amd[i].hbm_gbps * 1e9, 1e-12);
        assert_int_equal(g->sms, amd[i].sms);
        assert_int_equal(g->package_devices, amd[i].package_devices);
        assert_false(g->flash3);
        double share = g->gemm_ceiling / amd[i].pool_ceiling;
        assert_rel(g->gemm_eff_max, pool->gemm_eff_max * share, 5e-4);
        assert_rel(g->flash_eff, pool->flash_eff * share, 5e-4);
        if (g->fp8_peak_flops > 0)
            assert_rel(g->fp8_gemm_eff, pool->fp8_gemm_eff * share, 5e-4);
        assert_true(g->gemm_eff_max <= g->gemm_ceiling);
        const plan_instance *in = find(&cat, amd[i].node);
        assert_non_null(in);
        assert_int_equal(in->gpus_per_node, amd[i].gpus_per_node);
        assert_int_equal(in->nvswitch, 0);
        assert_string_equal(in->gpu_link, "Infinity Fabric");
        assert_rel(in->nvlink_bps, amd[i].link_gbps * 1e9, 1e-12);
        assert_rel(in->intra_busbw_bps, amd[i].busbw_gbps * 1e9, 1e-12);
        assert_rel(in->net_bps, amd[i].net_gbps * 1e9 / 8, 1e-12);
    }
    /* the same die at 1000 W: its own ceiling, the MI300X's peaks */
    const plan_gpu *mi325 = NULL;
    for (int i = 0; i < cat.ngpus; i++)
        if (strcmp(cat.gpus[i].name, "MI325X-256GB") == 0)
            mi325 = &cat.gpus[i];
    assert_non_null(mi325);
    assert_string_equal(mi325->silicon, "gfx942");
    assert_rel(mi325->peak_flops, 1307.4e12, 1e-12);
    assert_rel(mi325->gemm_eff_max, gpu_of(&cat, "p5")->gemm_eff_max * mi325->gemm_ceiling /
                                        (794.5 / 989), 5e-4);
    /* Hopper's GPUs run FlashAttention-3; no other does */
    for (int i = 0; i < cat.ngpus; i++)
        assert_int_equal(cat.gpus[i].flash3, strcmp(cat.gpus[i].silicon, "GH100") == 0);
    plan_catalog_free(&cat);
}

/* ------------------------------------------------------------------------ */
/* User files                                                                */
/* ------------------------------------------------------------------------ */

static void merge_overrides_and_adds(void **state)
{
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_load(CATALOG, &cat, &err), ST_OK);
    int n0 = cat.ninstances, g0 = cat.ngpus, c0 = cat.ncurves;
    plan_instance before = *find(&cat, "p4d");
    int rc = data_catalog_merge(&cat, SMD_TEST_FIXTURES "/catalog_user.json", &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(cat.ninstances, n0 + 1);
    assert_int_equal(cat.ngpus, g0 + 1);
    assert_int_equal(cat.ncurves, c0 + 1);
    const plan_instance *p4d = find(&cat, "p4d");
    assert_rel(p4d->price_per_hour, 20.5, 1e-12);
    assert_string_equal(p4d->name, "p4d.24xlarge"); /* matched through ml., not renamed */
    assert_rel(p4d->net_bps, before.net_bps, 0);
    assert_rel(p4d->intra_busbw_bps, before.intra_busbw_bps, 0);
    assert_non_null(strstr(p4d->source, "catalog_user.json set price_per_hour; was: "));
    const plan_instance *g6e = find(&cat, "g6e");
    assert_string_equal(g6e->name, "g6e.48xlarge");
    assert_string_equal(cat.gpus[g6e->gpu_index].name, "L40S-48GB");
    /* a GPU added without them: its own chip, one alignment tier */
    assert_string_equal(cat.gpus[g6e->gpu_index].silicon, "L40S-48GB");
    assert_rel(cat.gpus[g6e->gpu_index].gemm_align_bytes, 16, 0);
    assert_rel(cat.gpus[g6e->gpu_index].align_partial_factor, 1.0, 0);
    assert_rel(cat.gpus[g6e->gpu_index].mem_bytes, 48e9, 1e-12);
    assert_string_equal(cat.curves[g6e->intra_curve_index].name, "fixture-flat");
    assert_non_null(strstr(g6e->source, "catalog_user.json")); /* no source given */
    plan_cluster c;
    assert_int_equal(plan_cluster_parse(&cat, "4xml.g6e.48xlarge", &c, &err), ST_OK);
    assert_int_equal(c.gpus, 32);
    plan_catalog_free(&cat);
}

static void merge_failure_leaves_catalog(void **state)
{
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_load(CATALOG, &cat, &err), ST_OK);
    plan_instance *copy = malloc((size_t)cat.ninstances * sizeof *copy);
    memcpy(copy, cat.instances, (size_t)cat.ninstances * sizeof *copy);
    int n = cat.ninstances;
    assert_int_equal(data_catalog_merge(&cat, SMD_TEST_FIXTURES "/catalog_bad_ref.json", &err),
                     ST_EINVAL);
    assert_non_null(strstr(err.msg, "catalog_bad_ref.json: instance 'x1.box': unknown gpu 'A200-1TB'"));
    assert_int_equal(cat.ninstances, n);
    assert_memory_equal(cat.instances, copy, (size_t)n * sizeof *copy);
    st_err_clear(&err);
    assert_int_equal(data_catalog_merge(&cat, SMD_TEST_FIXTURES "/catalog_none.json", &err),
                     ST_ENOENT);
    assert_non_null(strstr(err.msg, "catalog_none.json"));
    assert_int_equal(cat.ninstances, n);
    free(copy);
    plan_catalog_free(&cat);
}

/* ------------------------------------------------------------------------ */
/* Bad input, from a small valid text with one thing changed                 */
/* ------------------------------------------------------------------------ */

static const char base[] =
    "{\"_doc\": \"test\",\n"
    " \"gpus\": [{\"name\": \"G-40GB\", \"mem_bytes\": \"40GiB\", \"peak_flops\": 312e12,\n"
    "   \"hbm_bps\": \"1555GB/s\", \"gemm_eff_max\": 0.8, \"gemm_dim_half\": 96,\n"
    "   \"misaligned_factor\": 0.5, \"hbm_eff\": 0.8, \"flash_eff\": 0.55, \"source\": \"s\"}],\n"
    " \"curves\": [{\"name\": \"c\", \"log2_bytes\": [10, 30], \"eff\": [0.2, 0.9]}],\n"
    " \"instances\": [{\"name\": \"box.large\", \"aliases\": [\"box\"], \"gpu\": \"G-40GB\",\n"
    "   \"gpus_per_node\": 8, \"nvlink_bps\": \"300GB/s\", \"nvswitch\": true,\n"
    "   \"intra_busbw_bps\": \"230GB/s\", \"intra_latency_s\": 15e-6, \"net_bps\": \"400Gbps\",\n"
    "   \"net_latency_s\": 160e-6, \"price_per_hour\": 32.77, \"intra_curve\": \"c\",\n"
    "   \"net_curve\": \"c\", \"_note\": \"n\"}]}\n";

/* base with the first `from` replaced by `to`. */
static char *edit(const char *from, const char *to)
{
    const char *at = strstr(base, from);
    if (!at)
        fail_msg("'%s' not in the base text", from);
    size_t n = strlen(base) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
    return s;
}

static void expect_parse(const char *text, int code, const char *in_msg)
{
    plan_catalog cat = {.ngpus = 99};
    st_err err = {0};
    int rc = data_catalog_parse(text, strlen(text), "t.json", &cat, &err);
    if (rc != code)
        fail_msg("status %d (%s), expected %d", rc, err.msg, code);
    if (rc == ST_OK) {
        plan_catalog_free(&cat);
        return;
    }
    if (!strstr(err.msg, in_msg))
        fail_msg("message '%s' lacks '%s'", err.msg, in_msg);
    assert_null(strchr(err.msg, '\n'));
    /* nothing half-filled */
    assert_null(cat.gpus);
    assert_null(cat.instances);
    assert_null(cat.curves);
    assert_int_equal(cat.ngpus + cat.ninstances + cat.ncurves, 0);
}

static void expect_edit(const char *from, const char *to, int code, const char *in_msg)
{
    char *s = edit(from, to);
    expect_parse(s, code, in_msg);
    free(s);
}

/* An edit of the base text (from replaced by to) and what parsing the
 * result gives: its status and, on failure, a part of the message. */
typedef struct edit_case {
    const char *from, *to;
    int code;
    const char *in_msg;
} edit_case;

static void expect_edits(const edit_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_edit(c[i].from, c[i].to, c[i].code, c[i].in_msg);
}

static void base_parses(void **state)
{
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_parse(base, strlen(base), "t.json", &cat, &err), ST_OK);
    assert_int_equal(cat.ninstances, 1);
    assert_rel(cat.gpus[0].mem_bytes, 40 * GIB, 1e-15);
    assert_rel(cat.instances[0].nvlink_bps, 300e9, 1e-15);
    assert_rel(cat.instances[0].net_bps, 50e9, 1e-15);
    assert_int_equal(cat.curves[0].n, 2);
    assert_string_equal(cat.curves[0].source, "t.json"); /* defaulted */
    /* not NUL-terminated: the length is what counts */
    plan_catalog_free(&cat);
    char *copy = malloc(strlen(base));
    memcpy(copy, base, strlen(base));
    assert_int_equal(data_catalog_parse(copy, strlen(base), "t.json", &cat, &err), ST_OK);
    plan_catalog_free(&cat);
    free(copy);
}

static void malformed_json(void **state)
{
    expect_parse("", ST_EPARSE, "t.json: empty file");
    expect_parse("{\"gpus\": [}", ST_EPARSE, "t.json:1:11: malformed JSON near '}'");
    expect_parse("{\n  \"gpus\": [],\n  \"instances\": [,]\n}", ST_EPARSE, "t.json:3:");
    expect_edit("\"net_curve\": \"c\",", "\"net_curve\": \"c\"", ST_EPARSE, "malformed JSON");
    expect_parse("[1, 2]", ST_EINVAL, "expected a JSON object");
    expect_parse("{}", ST_EINVAL, "no instance types");
    expect_parse("{\"gpus\": {}}", ST_EINVAL, "'gpus' is an object; expected an array");
    expect_parse("{\"machines\": []}", ST_EINVAL, "unknown key 'machines'; allowed: gpus");
    expect_edit("\"curves\": [", "\"gpus\": [], \"curves\": [", ST_EINVAL, "key 'gpus' given twice");
}

static void wrong_types(void **state)
{
    static const edit_case cases[] = {
        {"\"gpus_per_node\": 8", "\"gpus_per_node\": \"8\"", ST_EINVAL,
         "t.json: instance 'box.large': field 'gpus_per_node' is a string; expected a whole number"},
        {"\"gpus_per_node\": 8", "\"gpus_per_node\": 8.5", ST_EINVAL,
         "field 'gpus_per_node' is 8.5; allowed: a whole number"},
        {"\"gpus_per_node\": 8", "\"gpus_per_node\": 1e300", ST_EINVAL, "field 'gpus_per_node'"},
        {"\"peak_flops\": 312e12", "\"peak_flops\": \"312T\"", ST_EINVAL,
         "gpu 'G-40GB': field 'peak_flops' is a string; expected a number"},
        {"\"peak_flops\": 312e12", "\"peak_flops\": 1e999", ST_EINVAL,
         "field 'peak_flops' is not a finite number"},
        {"\"nvswitch\": true", "\"nvswitch\": \"yes\"", ST_EINVAL,
         "field 'nvswitch': allowed: true or false"},
        {"\"aliases\": [\"box\"]", "\"aliases\": \"box\"", ST_EINVAL,
         "field 'aliases' is a string; expected an array of strings"},
        {"\"aliases\": [\"box\"]", "\"aliases\": [\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\"]",
         ST_EINVAL, "field 'aliases' has 7 names; allowed: at most 6"},
        {"\"aliases\": [\"box\"]", "\"aliases\": [\"\"]", ST_EINVAL, "field 'aliases' is empty"},
        {"\"eff\": [0.2, 0.9]", "\"eff\": [0.2, null]", ST_EINVAL,
         "curve 'c': field 'eff' is null; expected an array of numbers"},
        {"\"name\": \"box.large\"",
         "\"name\": \"a-very-long-instance-type-name-that-does-not-fit-at-all\"", ST_EINVAL,
         "field 'name' is 55 characters; allowed: at most 47"},
        {"{\"name\": \"c\",", "[", ST_EPARSE, "malformed"},
        {"\"instances\": [{", "\"instances\": [7, {", ST_EINVAL,
         "t.json: instances[0]: expected an object, found a number"},
    };
    expect_edits(cases, sizeof cases / sizeof cases[0]);
}

static void bad_units_and_values(void **state)
{
    static const edit_case cases[] = {
        {"\"net_bps\": \"400Gbps\"", "\"net_bps\": \"400Gbit\"", ST_EINVAL,
         "t.json: instance 'box.large': field 'net_bps' '400Gbit': unknown rate unit"},
        {"\"mem_bytes\": \"40GiB\"", "\"mem_bytes\": \"40 gigs\"", ST_EINVAL,
         "gpu 'G-40GB': field 'mem_bytes' '40 gigs': unknown size unit"},
        {"\"net_bps\": \"400Gbps\"", "\"net_bps\": 5e10", ST_OK, NULL},
        {"\"flash_eff\": 0.55,", "\"flash_eff\": 0.55, \"gemm_align_bytes\": 100,", ST_EINVAL,
         "gemm_align_bytes 100; allowed: a multiple of 16"},
        {"\"flash_eff\": 0.55,", "\"flash_eff\": 0.55, \"align_partial_factor\": 1.5,", ST_EINVAL,
         "align_partial_factor 1.5; allowed: (0, 1]"},
        {"\"net_bps\": \"400Gbps\"", "\"net_bps\": 0", ST_EINVAL,
         "t.json: instance 'box.large': net_bps 0; must be positive"},
        {"\"gpus_per_node\": 8", "\"gpus_per_node\": 128", ST_EINVAL,
         "gpus_per_node 128; allowed: 1 to 72"},
        {"\"eff\": [0.2, 0.9]", "\"eff\": [0.2, 1.9]", ST_EINVAL, "eff[1] 1.9; allowed: (0, 1]"},
        {"\"log2_bytes\": [10, 30]", "\"log2_bytes\": [30, 10]", ST_EINVAL,
         "log2_bytes must increase"},
        {"\"eff\": [0.2, 0.9]", "\"eff\": [0.2]", ST_EINVAL,
         "curve 'c': log2_bytes has 2 points but eff has 1"},
        {"\"eff\": [0.2, 0.9]", "\"eff\": []", ST_EINVAL, "field 'eff' has 0 points"},
        {"\"gemm_eff_max\": 0.8", "\"gemm_eff_max\": 80", ST_EINVAL, "gemm_eff_max 80"},
        {"\"intra_curve\": \"c\"", "\"intra_curve\": \"d\"", ST_EINVAL,
         "instance 'box.large': unknown intra_curve 'd'"},
    };
    expect_edits(cases, sizeof cases / sizeof cases[0]);
}

static void missing_and_unknown_fields(void **state)
{
    static const edit_case cases[] = {
        {"\"net_bps\": \"400Gbps\",", "", ST_EINVAL,
         "t.json: instance 'box.large': missing required field 'net_bps'"},
        {"\"hbm_eff\": 0.8,", "", ST_EINVAL, "gpu 'G-40GB': missing required field 'hbm_eff'"},
        {"\"log2_bytes\": [10, 30],", "", ST_EINVAL, "missing required field 'log2_bytes'"},
        {"{\"name\": \"box.large\",", "{", ST_EINVAL,
         "t.json: instances[0]: missing required field 'name'"},
        {"\"price_per_hour\": 32.77", "\"price\": 32.77", ST_EINVAL,
         "unknown field 'price'; allowed: name, aliases, gpu, gpus_per_node"},
        {"\"price_per_hour\": 32.77", "\"price_per_hour\": 1, \"price_per_hour\": 2", ST_EINVAL,
         "field 'price_per_hour' given twice"},
        /* optional fields may be left out */
        {"\"price_per_hour\": 32.77,", "", ST_OK, NULL},
        {"\"aliases\": [\"box\"],", "", ST_OK, NULL},
    };
    expect_edits(cases, sizeof cases / sizeof cases[0]);
}

static void duplicates(void **state)
{
    char *s = edit("\"instances\": [", "\"instances\": [{\"name\": \"ml.Box.Large\"}, ");
    expect_parse(s, ST_EINVAL, "t.json: instance 'Box.Large' is listed twice");
    free(s);
    /* an alias that names another type */
    s = edit("\"instances\": [",
             "\"instances\": [{\"name\": \"other\", \"aliases\": [\"BOX\"], \"gpu\": \"G-40GB\", "
             "\"gpus_per_node\": 8, \"nvlink_bps\": 1e9, \"intra_busbw_bps\": 1e9, "
             "\"intra_latency_s\": 0, \"net_bps\": 1e9, \"net_latency_s\": 0, "
             "\"intra_curve\": \"c\", \"net_curve\": \"c\"}, ");
    expect_parse(s, ST_EINVAL, "alias 'box' is also a name or alias of 'other'");
    free(s);
}

/* ------------------------------------------------------------------------ */
/* smdplan catalog                                                           */
/* ------------------------------------------------------------------------ */

/* Run the command with stdout into a temporary file; returns the exit code
 * and the output (free()). */
static int run_cli(char **argv, int argc, char **out)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stdout);
    int saved = dup(1);
    dup2(fileno(tmp), 1);
    int rc = cli_catalog_cmd(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    long n = ftell(tmp);
    assert_true(n >= 0);
    *out = calloc((size_t)n + 1, 1);
    rewind(tmp);
    assert_int_equal(fread(*out, 1, (size_t)n, tmp), (size_t)n);
    fclose(tmp);
    return rc;
}

static void cli_table(void **state)
{
    char *argv[] = {"catalog", NULL};
    char *out;
    assert_int_equal(run_cli(argv, 1, &out), 0);
    assert_non_null(strstr(out, "instance"));
    const char *row = strstr(out, "p4d.24xlarge");
    assert_non_null(row);
    assert_non_null(strstr(row, "8 x A100-40GB"));
    assert_non_null(strstr(row, "40.0 GiB"));
    assert_non_null(strstr(row, "312"));
    assert_non_null(strstr(row, "1.55"));   /* HBM TB/s, 1555 GB/s */
    assert_non_null(strstr(row, "300 sw"));
    assert_non_null(strstr(row, "400"));
    assert_non_null(strstr(row, "32.77"));
    assert_non_null(strstr(out, "selene"));
    free(out);
}

static void cli_json_round_trip(void **state)
{
    char *argv[] = {"catalog", "--json", "--catalog", SMD_TEST_FIXTURES "/catalog_user.json",
                    NULL};
    char *out;
    assert_int_equal(run_cli(argv, 4, &out), 0);
    plan_catalog back, want;
    st_err err = {0};
    int rc = data_catalog_parse(out, strlen(out), "json", &back, &err);
    if (rc)
        fail_msg("%s", err.msg);
    /* the shipped catalog with the shipped calibration, as the command loads it */
    assert_int_equal(data_catalog_load(NULL, &want, &err), ST_OK);
    assert_int_equal(data_catalog_merge(&want, SMD_TEST_FIXTURES "/catalog_user.json", &err),
                     ST_OK);
    assert_int_equal(back.ninstances, want.ninstances);
    assert_memory_equal(back.instances, want.instances, (size_t)want.ninstances * sizeof *want.instances);
    assert_memory_equal(back.gpus, want.gpus, (size_t)want.ngpus * sizeof *want.gpus);
    assert_int_equal(back.ncurves, want.ncurves);
    for (int i = 0; i < want.ncurves; i++) {
        assert_int_equal(back.curves[i].n, want.curves[i].n);
        assert_memory_equal(back.curves[i].eff, want.curves[i].eff, sizeof(double) * want.curves[i].n);
    }
    plan_catalog_free(&back);
    plan_catalog_free(&want);
    free(out);
}

static void cli_errors_exit_2(void **state)
{
    char *out;
    char *a1[] = {"catalog", "--bogus", NULL};
    assert_int_equal(run_cli(a1, 2, &out), 2);
    free(out);
    char *a2[] = {"catalog", "--catalog", SMD_TEST_FIXTURES "/catalog_none.json", NULL};
    assert_int_equal(run_cli(a2, 3, &out), 2);
    free(out);
    char *a3[] = {"catalog", "--catalog", SMD_TEST_FIXTURES "/catalog_bad_ref.json", NULL};
    assert_int_equal(run_cli(a3, 3, &out), 2);
    assert_string_equal(out, ""); /* nothing on stdout */
    free(out);
    char *a4[] = {"catalog", "extra", NULL};
    assert_int_equal(run_cli(a4, 2, &out), 2);
    free(out);
    char *a5[] = {"catalog", "--catalog", NULL};
    assert_int_equal(run_cli(a5, 2, &out), 2);
    free(out);
    char *a6[] = {"catalog", "--help", NULL};
    assert_int_equal(run_cli(a6, 2, &out), 0);
    assert_non_null(strstr(out, "usage: smdplan catalog"));
    free(out);
}


/* The H100 and H200 entries name the H100's measured rates: the GEMM model
 * fitted to its 41 shapes away from the harness's floor (ceiling 0.76 of
 * the 989 TFLOP/s peak), FlashAttention-2 and cuDNN per direction, the
 * copy's 2990 of 3350 GB/s on the H100 alone (the H200's memory is not the
 * one measured). A user file may name a file beside itself; a path that is
 * not a regular file (a directory, a FIFO, nothing) is refused, naming the
 * entry and the path, and so is a measured file of the wrong shape. */
static void measured_rates_file(void **state)
{
    (void)state;
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_load_base(&cat, &err), ST_OK);
    const plan_gpu *h = gpu_of(&cat, "p5.48xlarge"), *h2 = gpu_of(&cat, "p5en.48xlarge");
    assert_true(h->gemm_measured && h2->gemm_measured);
    assert_int_equal(h->gemm_measured_shapes, 41);
    assert_true(h->gemm_ceiling > 0.70 && h->gemm_ceiling < 0.80);
    assert_true(h->gemm_dim_half >= 0 && h->gemm_dim_half < 200);
    assert_rel(h->flash2_fwd_eff, 281.66e12 / 989e12, 1e-12);
    assert_rel(h->cudnn_fwd_eff, 517.55e12 / 989e12, 1e-12);
    assert_true(h->flash2_bwd_eff < h->flash2_fwd_eff && h->cudnn_bwd_eff < h->cudnn_fwd_eff);
    assert_rel(plan_gpu_copy_eff(h), 2990.5 / 3350.0, 1e-12);
    assert_rel(plan_gpu_copy_eff(h2), 0.0, 0);
    assert_int_equal(h->sms, 132);
    assert_int_equal(find(&cat, "p5.48xlarge")->nccl_channels, 16);
    assert_int_equal(find(&cat, "p4d.24xlarge")->nccl_channels, 24);
    assert_non_null(strstr(h->measured, "measured/h100-sxm.json"));

    char dir[] = "/tmp/smd-measured-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char user[256], meas[256], fifo[256];
    snprintf(user, sizeof user, "%s/user.json", dir);
    snprintf(meas, sizeof meas, "%s/m.json", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    FILE *f = fopen(meas, "w");
    assert_non_null(f);
    fputs("{\"hbm_bps\": \"2039GB/s\", \"copy_bps\": \"1800GB/s\", \"attention\": "
          "{\"flash2\": {\"fwd_tflops\": 150, \"fwd_bwd_tflops\": 120}}}", f);
    fclose(f);
    static const char *const names[] = {"m.json", "nothing.json", ".", "fifo.json"};
    assert_int_equal(mkfifo(fifo, 0600), 0);
    for (int i = 0; i < 4; i++) {
        f = fopen(user, "w");
        assert_non_null(f);
        fprintf(f, "{\"gpus\": [{\"name\": \"A100-80GB\", \"measured\": \"%s\"}]}", names[i]);
        fclose(f);
        plan_catalog c2;
        assert_int_equal(data_catalog_load_base(&c2, &err), ST_OK);
        int rc = data_catalog_merge(&c2, user, &err);
        if (i == 0) {
            if (rc)
                fail_msg("%s", err.msg);
            const plan_gpu *a = gpu_of(&c2, "p4de.24xlarge");
            assert_rel(a->flash2_fwd_eff, 150e12 / 312e12, 1e-12);
            assert_rel(plan_gpu_copy_eff(a), 1800.0 / 2039.0, 1e-12);
            assert_false(a->gemm_measured); /* no GEMMs in the file: the chip's own kept */
        } else {
            assert_int_equal(rc, ST_EINVAL);
            assert_non_null(strstr(err.msg, "A100-80GB"));
            assert_non_null(strstr(err.msg, "not a readable file"));
            st_err_clear(&err);
        }
        plan_catalog_free(&c2);
    }
    /* a file of the wrong shape */
    f = fopen(meas, "w");
    assert_non_null(f);
    fputs("{\"gemm_bf16\": {\"rows\": [[1, 2, 3]]}}", f);
    fclose(f);
    f = fopen(user, "w");
    assert_non_null(f);
    fputs("{\"gpus\": [{\"name\": \"A100-80GB\", \"measured\": \"m.json\"}]}", f);
    fclose(f);
    assert_int_equal(data_catalog_merge(&cat, user, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "gemm_bf16 row 0"));
    unlink(user);
    unlink(meas);
    unlink(fifo);
    rmdir(dir);
    plan_catalog_free(&cat);
}

/* The other clouds' GPU VMs, as their documentation pages give them: the
 * cloud's size name and the short names it documents (found with dots,
 * underscores and spaces, as a node count's type too), the GPU count and
 * chip, NVLink per GPU one direction on an NVSwitch board, and the network
 * the GPUs' collectives run on, per node one direction, with its NIC count
 * (0 where no page states it). */
static void shipped_other_clouds(void **state)
{
    (void)state;
    plan_catalog cat;
    st_err err = {0};
    assert_int_equal(data_catalog_load(NULL, &cat, &err), ST_OK);
    static const struct {
        const char *node, *alias, *gpu;
        int gpus;
        double nvlink_gbs, net_gbps; /* GB/s per GPU, Gb/s per node; one direction */
        int nics;
    } clouds[] = {
        /* Azure: 8 x 200 Gb/s HDR, 8 x 400 Gb/s NDR InfiniBand, one per GPU */
        {"Standard_ND96asr_v4", "ND96asr_v4", "A100-40GB", 8, 300, 1600, 8},
        {"Standard_ND96amsr_A100_v4", "ND96amsr_A100_v4", "A100-80GB", 8, 300, 1600, 8},
        {"Standard_ND96isr_H100_v5", "ND H100 v5", "H100-80GB", 8, 450, 3200, 8},
        {"Standard_ND96isr_H200_v5", "ND96isr_H200_v5", "H200-141GB", 8, 450, 3200, 8},
        /* Google Cloud: A2 up to 100 Gbps per VM; A3 High 4 and A3 Mega 8
         * GPU NICs of 200 Gbps; A3 Ultra 8 ConnectX-7, 3,200 Gbps */
        {"a2-highgpu-8g", "a2-highgpu-8g", "A100-40GB", 8, 300, 100, 0},
        {"a2-ultragpu-8g", "A2-ULTRAGPU-8G", "A100-80GB", 8, 300, 100, 0},
        {"a3-highgpu-8g", "a3-highgpu-8g", "H100-80GB", 8, 450, 800, 4},
        {"a3-megagpu-8g", "A3 Mega", "H100-80GB", 8, 450, 1600, 8},
        {"a3-ultragpu-8g", "A3 Ultra", "H200-141GB", 8, 450, 3200, 8},
        /* Oracle Cloud: 16 RDMA (RoCE) ports, 100 or 200 Gbps each */
        {"BM.GPU4.8", "bm.gpu4.8", "A100-40GB", 8, 300, 1600, 16},
        {"BM.GPU.A100-v2.8", "BM.GPU.A100-v2.8", "A100-80GB", 8, 300, 1600, 16},
        {"BM.GPU.H100.8", "BM.GPU.H100.8", "H100-80GB", 8, 450, 3200, 16},
    };
    for (size_t i = 0; i < sizeof clouds / sizeof clouds[0]; i++) {
        const plan_instance *in = find(&cat, clouds[i].node);
        assert_non_null(in);
        if (!in)
            continue;
        assert_string_equal(in->name, clouds[i].node);
        assert_ptr_equal(plan_catalog_find(&cat, clouds[i].alias), in);
        assert_int_equal(in->gpus_per_node, clouds[i].gpus);
        assert_true(in->gpu_index >= 0 && in->gpu_index < cat.ngpus);
        assert_string_equal(cat.gpus[in->gpu_index].name, clouds[i].gpu);
        assert_int_equal(in->nvswitch, 1);
        assert_rel(in->nvlink_bps, clouds[i].nvlink_gbs * 1e9, 1e-12);
        assert_rel(in->net_bps, clouds[i].net_gbps * 1e9 / 8, 1e-12);
        assert_int_equal(in->nics, clouds[i].nics);
        assert_int_equal(in->efa, 0);
        assert_true(strlen(in->source) > 40);
        assert_true(strlen(in->nics_source) > 20 && strlen(in->price_source) > 20);
        /* --instances: COUNTxTYPE by a documented name, TYPE:COUNT by the size */
        char spec[96];
        plan_cluster c;
        snprintf(spec, sizeof spec, "16x%s", clouds[i].alias);
        if (plan_cluster_parse(&cat, spec, &c, &err) != ST_OK)
            fail_msg("%s: %s", spec, err.msg);
        assert_ptr_equal(c.inst, in);
        assert_int_equal(c.gpus, 16 * clouds[i].gpus);
        snprintf(spec, sizeof spec, " %s:4 ", clouds[i].node);
        assert_int_equal(plan_cluster_parse(&cat, spec, &c, &err), ST_OK);
        assert_int_equal(c.nodes, 4);
        assert_ptr_equal(c.inst, in);
    }
    /* a spaced name is one type after the count */
    plan_cluster c;
    assert_int_equal(plan_cluster_parse(&cat, "16 x NDm A100 v4", &c, &err), ST_OK);
    assert_string_equal(c.inst->name, "Standard_ND96amsr_A100_v4");
    assert_int_equal(plan_cluster_parse(&cat, "2xND A100 v4", &c, &err), ST_OK);
    assert_string_equal(c.inst->name, "Standard_ND96asr_v4");
    plan_catalog_free(&cat);
}

int main(void)
{
    test_frameworks_load();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_loads_and_links),
        cmocka_unit_test(shipped_values),
        cmocka_unit_test(shipped_boards),
        cmocka_unit_test(shipped_amd),
        cmocka_unit_test(merge_overrides_and_adds),
        cmocka_unit_test(merge_failure_leaves_catalog),
        cmocka_unit_test(base_parses),
        cmocka_unit_test(malformed_json),
        cmocka_unit_test(wrong_types),
        cmocka_unit_test(bad_units_and_values),
        cmocka_unit_test(missing_and_unknown_fields),
        cmocka_unit_test(duplicates),
        cmocka_unit_test(cli_table),
        cmocka_unit_test(cli_json_round_trip),
        cmocka_unit_test(cli_errors_exit_2),
        cmocka_unit_test(measured_rates_file),
        cmocka_unit_test(shipped_other_clouds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
