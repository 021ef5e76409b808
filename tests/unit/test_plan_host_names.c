/*
 * test_plan_host_names.c: the names of a host's catalog entries and the
 * catalog GPU a CUDA device's description names (planner/plan_host_names.c).
 *
 * A host name is cut at its first dot, its other characters made letters,
 * digits or '-', at most 20 of them; the CPU entry's instance type and
 * device carry -tT past one thread per rank, --name standing for the
 * instance type's host-NAME only; the GPU entry's device keeps 24
 * characters of the name; the curve 27. A device description names the
 * catalog chip as a word, and the variant closest in memory.
 */
#include "test_util.h"

#include "data/data.h"
#include "planner/plan_host_names.h"

static void short_names(void **state)
{
    (void)state;
    const struct {
        const char *host, *want;
    } cases[] = {
        {"box7.example.com", "box7"},
        {"gpu_node#12.cluster", "gpu-node-12"},
        {"a-very-long-host-name-of-31-chars", "a-very-long-host-nam"}, /* PLAN_HOST_SHORT_MAX - 1 */
        {"", "localhost"},
        {NULL, "localhost"},
    };
    char h[PLAN_HOST_SHORT_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_host_short_name(cases[i].host, h, sizeof h);
        assert_string_equal(h, cases[i].want);
    }
    assert_int_equal(strlen(cases[2].want), PLAN_HOST_SHORT_MAX - 1);
    char tiny[5];
    plan_host_short_name("box7777", tiny, sizeof tiny);
    assert_string_equal(tiny, "box7");
}

static void cpu_and_gpu_names(void **state)
{
    (void)state;
    char inst[64], gpu[64], curve[32];
    plan_host_cpu_names("box7", NULL, 1, inst, sizeof inst, gpu, sizeof gpu);
    assert_string_equal(inst, "host-box7");
    assert_string_equal(gpu, "cpu-box7");
    plan_host_cpu_names("box7", NULL, 4, inst, sizeof inst, gpu, sizeof gpu);
    assert_string_equal(inst, "host-box7-t4");
    assert_string_equal(gpu, "cpu-box7-t4");
    /* --name stands for host-NAME; the device keeps the host's name */
    plan_host_cpu_names("box7", "lab", 1, inst, sizeof inst, gpu, sizeof gpu);
    assert_string_equal(inst, "lab");
    assert_string_equal(gpu, "cpu-box7");
    plan_host_cpu_names("box7", "lab", 16, inst, sizeof inst, gpu, sizeof gpu);
    assert_string_equal(inst, "lab-t16");
    assert_string_equal(gpu, "cpu-box7-t16");

    plan_host_gpu_names("box7", NULL, inst, sizeof inst, gpu, sizeof gpu);
    assert_string_equal(inst, "host-box7-cuda");
    assert_string_equal(gpu, "cuda-box7");
    plan_host_gpu_names("box7", "a-name-of-exactly-thirty-chars", inst, sizeof inst, gpu,
                        sizeof gpu);
    assert_string_equal(inst, "a-name-of-exactly-thirty-chars");
    assert_string_equal(gpu, "cuda-a-name-of-exactly-thirty"); /* 24 of it: a GPU name fits 31 */

    plan_host_curve_name("box7", NULL, curve, sizeof curve);
    assert_string_equal(curve, "mpi-box7");
    plan_host_curve_name("box7", "a-name-of-exactly-thirty-chars", curve, sizeof curve);
    assert_string_equal(curve, "mpi-a-name-of-exactly-thirty-ch");
    assert_int_equal(strlen(curve), 31);
}

/* The shipped catalog: the chip as a word, the variant by memory, none for
 * a GPU the catalog does not have. */
static void catalog_gpu(void **state)
{
    (void)state;
    plan_catalog cat = {0};
    st_err err = {0};
    assert_int_equal(data_catalog_load(SMD_TEST_DATA_DIR "/catalog.json", &cat, &err), ST_OK);
    const struct {
        const char *desc, *want;
    } cases[] = {
        {"NVIDIA H100 80GB HBM3, compute capability 9.0, 79.1 GiB, 132 SMs, GPU 0", "H100-80GB"},
        {"NVIDIA H200, compute capability 9.0, 139.8 GiB, 132 SMs, GPU 0", "H200-141GB"},
        {"NVIDIA A100-SXM4-40GB, compute capability 8.0, 39.4 GiB, 108 SMs, GPU 3", "A100-40GB"},
        {"NVIDIA A100-SXM4-80GB, compute capability 8.0, 79.2 GiB, 108 SMs, GPU 0", "A100-80GB"},
        {"NVIDIA A100 80GB PCIe, compute capability 8.0, 79.2 GiB, 108 SMs, GPU 1",
         "A100-PCIe-80GB"},
        {"NVIDIA H100 PCIe, compute capability 9.0, 79.1 GiB, 114 SMs, GPU 0", "H100-PCIe-80GB"},
        {"NVIDIA H100 NVL, compute capability 9.0, 93.1 GiB, 132 SMs, GPU 0", "H100-NVL-94GB"},
        /* a board the catalog does not have is not its chip's SXM module */
        {"Tesla V100-PCIE-32GB, compute capability 7.0, 31.7 GiB, 80 SMs, GPU 0", NULL},
        {"nvidia a100-sxm4-80gb, compute capability 8.0, 79.2 GiB", "A100-80GB"},
        {"NVIDIA A10G, compute capability 8.6, 22.0 GiB, 80 SMs, GPU 0", "A10G-24GB"},
        {"Tesla V100-SXM2-32GB, compute capability 7.0, 31.7 GiB, 80 SMs, GPU 0", "V100-32GB"},
        {"NVIDIA H100X, compute capability 9.0, 79.1 GiB", NULL}, /* not the word H100 */
        {"NVIDIA GeForce RTX 4090, compute capability 8.9, 23.6 GiB, 128 SMs, GPU 0", NULL},
        {"NVIDIA L4, compute capability 8.9, 22.0 GiB, 58 SMs, GPU 0", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int g = plan_host_catalog_gpu(&cat, cases[i].desc);
        if (!cases[i].want) {
            assert_int_equal(g, -1);
        } else {
            assert_true(g >= 0);
            assert_string_equal(cat.gpus[g].name, cases[i].want);
        }
    }
    plan_catalog_free(&cat);
}

/* No memory stated: the chip's first GPU in catalog order; the closest as
 * a ratio (100 GiB: 80 over 141, log 0.22 against 0.34). */
static void catalog_gpu_memory(void **state)
{
    (void)state;
    plan_gpu g[3];
    memset(g, 0, sizeof g);
    snprintf(g[0].name, sizeof g[0].name, "Z9-141GB");
    g[0].mem_bytes = 141.0 * 1073741824.0;
    snprintf(g[1].name, sizeof g[1].name, "Z9-80GB");
    g[1].mem_bytes = 80.0 * 1073741824.0;
    snprintf(g[2].name, sizeof g[2].name, "Y1-16GB");
    g[2].mem_bytes = 16.0 * 1073741824.0;
    plan_catalog cat = {.gpus = g, .ngpus = 3};
    assert_int_equal(plan_host_catalog_gpu(&cat, "Vendor Z9"), 0);
    assert_int_equal(plan_host_catalog_gpu(&cat, "Vendor Z9, 100 GiB"), 1);
    assert_int_equal(plan_host_catalog_gpu(&cat, "Vendor Z9 120GB"), 0);
    assert_int_equal(plan_host_catalog_gpu(&cat, "y1 card, 15.9 GiB"), 2);
    assert_int_equal(plan_host_catalog_gpu(&cat, "Z99 card"), -1);
}

TEST_MAIN((void)0,
          cmocka_unit_test(short_names),
          cmocka_unit_test(cpu_and_gpu_names),
          cmocka_unit_test(catalog_gpu),
          cmocka_unit_test(catalog_gpu_memory))
