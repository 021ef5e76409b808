/*
 * test_data_host_entry.c: a host's catalog entry made from its bench
 * measurements (data/data_host_entry.c), on the measurements of
 * test_bench_fixture.h.
 *
 * A CPU host of 8 cores measured at 1 and 2 threads gets one device and
 * instance type per thread count asked, named after the host (or --name),
 * with one all-reduce curve; the figures a bench record keeps are the
 * fitted entry's own. Without the transport there are devices only; a
 * thread count that does not divide the cores or was not measured is
 * refused, the entries before it kept. A GPU host gets one entry against
 * the shipped catalog's GPU its description names. Writing puts the file's
 * path and text into every entry's figures; a file that may not be
 * replaced leaves them unset; a CPU host's entries without the transport
 * or the device are not written, the message naming what to run.
 */
#include "test_util.h"

#include <stdlib.h>

#include "data/data_host_entry.h"
#include "test_bench_fixture.h"
#include "test_dir.h"

/* How many items the entry's key holds. */
static int count(const data_catalog_entry *cat, const char *key)
{
    char *t = data_catalog_entry_json(cat, key);
    assert_non_null(t);
    int n = 0;
    for (const char *p = t; (p = strstr(p, "\"name\":")); p++)
        n++;
    free(t);
    return n;
}

/* Every figure from its own field of the entry. */
static void figures(void **state)
{
    (void)state;
    static plan_host_entry h;
    memset(&h, 0, sizeof h);
    h.gpu.peak_flops = 1.5e11;
    h.gpu.misaligned_factor = 0.93;
    h.gpu.hbm_bps = 2.2e10;
    h.gpu.hbm_eff = 0.61;
    h.fit.gemm.dim_half = 37.5;
    h.fit.gemm.rms_log_err = 0.021;
    h.fit.act_fwd_s = 1.1e-9;
    h.fit.act_bwd_s = 1.3e-9;
    h.fit.glu_fwd_s = 1.7e-9;
    h.fit.glu_bwd_s = 1.9e-9;
    h.fit.opt_param_s = 2.3e-9;
    h.fit.attn_fwd_flops = 2.9e10;
    h.fit.attn_bwd_flops = 3.1e10;
    h.p2p = (plan_link_fit){.bw_bps = 4.1e9, .small_s = 4.3e-6};
    h.allreduce = (plan_link_fit){.bw_bps = 4.7e9, .small_s = 5.3e-6};
    db_bench_entry e;
    data_host_entry_figures(&h, 6, &e);
    assert_int_equal(e.threads_per_rank, 6);
    assert_true(e.peak_flops == 1.5e11 && e.misaligned_factor == 0.93);
    assert_true(e.hbm_bps == 2.2e10 && e.hbm_eff == 0.61);
    assert_true(e.gemm_dim_half == 37.5 && e.gemm_rms_log_err == 0.021);
    assert_true(e.act_fwd_s == 1.1e-9 && e.act_bwd_s == 1.3e-9);
    assert_true(e.glu_fwd_s == 1.7e-9 && e.glu_bwd_s == 1.9e-9 && e.opt_param_s == 2.3e-9);
    assert_true(e.attn_fwd_flops == 2.9e10 && e.attn_bwd_flops == 3.1e10);
    assert_true(e.p2p_bps == 4.1e9 && e.p2p_latency_s == 4.3e-6);
    assert_true(e.allreduce_busbw_bps == 4.7e9 && e.allreduce_latency_s == 5.3e-6);
    assert_null(e.instance_name);
    assert_null(e.gpu_name);
    assert_null(e.catalog_file);
    assert_null(e.catalog_json);
}

static void cpu_entries(void **state)
{
    (void)state;
    data_host_bench b = bench_fixture_host(1);
    const int threads[] = {1, 2};
    data_host_entries *es = bench_fixture_entries(&b, threads, 2);
    assert_int_equal(es->n, 2);
    const data_host_made *m = &es->e[1];
    assert_string_equal(es->e[0].instance_name, "host-box7");
    assert_string_equal(es->e[0].gpu_name, "cpu-box7");
    assert_string_equal(m->instance_name, "host-box7-t2");
    assert_string_equal(m->gpu_name, "cpu-box7-t2");
    assert_string_equal(m->h.instance_name, "host-box7-t2");
    assert_ptr_equal(m->fig.instance_name, m->instance_name);
    assert_ptr_equal(m->fig.gpu_name, m->gpu_name);
    assert_null(m->fig.catalog_file);
    assert_int_equal(m->fig.threads_per_rank, 2);
    assert_int_equal(m->h.instance.gpus_per_node, BF_CORES / 2);
    /* the fits of the fixture's exact models (plan_hwfit.h) */
    assert_rel(m->fig.peak_flops, BF_ASYMPTOTE_FLOPS, 1e-6);
    assert_true(m->fig.hbm_bps == BF_TRIAD_FULL_BPS / 4);
    assert_rel(m->fig.allreduce_busbw_bps, BF_AR_BUS_BPS, 1e-6);
    assert_rel(m->fig.p2p_bps, BF_P2P_BPS, 1e-6);
    /* one curve for both thread counts */
    assert_int_equal(count(es->cat, "gpus"), 2);
    assert_int_equal(count(es->cat, "instances"), 2);
    assert_int_equal(count(es->cat, "curves"), 1);
    assert_string_equal(m->h.intra_curve.name, "mpi-box7");
    data_host_entries_free(es);

    /* --name stands for host-NAME, in the curve too */
    b.name = "lab";
    es = bench_fixture_entries(&b, threads + 1, 1);
    assert_string_equal(es->e[0].instance_name, "lab-t2");
    assert_string_equal(es->e[0].gpu_name, "cpu-box7-t2");
    assert_string_equal(es->e[0].h.intra_curve.name, "mpi-lab");
    data_host_entries_free(es);

    /* no transport: devices only */
    b.comm = NULL;
    es = bench_fixture_entries(&b, threads, 2);
    assert_int_equal(es->n, 2);
    assert_null(es->e[0].fig.instance_name);
    assert_string_equal(es->e[0].fig.gpu_name, "cpu-box7");
    assert_true(isnan(es->e[0].fig.allreduce_busbw_bps));
    assert_int_equal(count(es->cat, "gpus"), 2);
    assert_int_equal(count(es->cat, "instances"), 0);
    data_host_entries_free(es);

    /* no device measurements: nothing */
    b.cpu = NULL;
    es = bench_fixture_entries(&b, threads, 2);
    assert_int_equal(es->n, 0);
    data_host_entries_free(es);
    data_host_entries_free(NULL);
}

static void cpu_entries_refused(void **state)
{
    (void)state;
    data_host_bench b = bench_fixture_host(1);
    data_host_entries *es = NULL;
    st_err err = {0};
    const int bad_divide[] = {2, 3};
    assert_int_equal(data_host_cpu_entries(&b, bad_divide, 2, &es, &err), ST_EINVAL);
    assert_string_equal(err.msg, "--threads-per-rank 3: does not divide the 8 cores");
    assert_int_equal(es->n, 1); /* the entry before it */
    assert_string_equal(es->e[0].instance_name, "host-box7-t2");
    data_host_entries_free(es);

    st_err_clear(&err);
    const int unmeasured[] = {4};
    assert_int_equal(data_host_cpu_entries(&b, unmeasured, 1, &es, &err), ST_EINVAL);
    assert_string_equal(err.msg,
                        "--threads-per-rank 4: the CPU bench measured 1 to 2 threads only");
    assert_int_equal(es->n, 0);
    data_host_entries_free(es);

    /* a transport without send/recv rows: no instance type, the device
     * added before it */
    st_err_clear(&err);
    b = bench_fixture_host(0);
    const int one[] = {1};
    assert_int_equal(data_host_cpu_entries(&b, one, 1, &es, &err), ST_EINVAL);
    assert_text(err.msg, TEXTS("give no bandwidth or small-message time"), NULL);
    assert_int_equal(es->n, 0);
    assert_int_equal(count(es->cat, "gpus"), 1);
    assert_int_equal(count(es->cat, "instances"), 0);
    data_host_entries_free(es);
}

/* A GPU host against the shipped catalog's H100-80GB: its peak, the
 * asymptote its fraction; the instance of the GPUs counted. */
static void gpu_entry(void **state)
{
    (void)state;
    static plan_bench_cpu b;
    bench_fixture_cpu(&b);
    snprintf(b.device, sizeof b.device, "cuda");
    snprintf(b.cpu_model, sizeof b.cpu_model,
             "NVIDIA H100 80GB HBM3, compute capability 9.0, 79.1 GiB, 132 SMs, GPU 0");
    data_host_bench in = {&b, NULL, "box7", NULL};
    data_host_entries *es = NULL;
    st_err err = {0};
    assert_int_equal(data_host_gpu_entries(&in, 4, 5e11, &es, &err), ST_OK);
    assert_int_equal(es->n, 1);
    const data_host_made *m = &es->e[0];
    assert_string_equal(m->instance_name, "host-box7-cuda");
    assert_string_equal(m->gpu_name, "cuda-box7");
    assert_ptr_equal(m->fig.instance_name, m->instance_name);
    assert_int_equal(m->fig.threads_per_rank, 1);
    assert_true(m->h.gpu.peak_flops > 5e14); /* the H100's datasheet peak, not the asymptote */
    assert_rel(m->h.gpu.gemm_eff_max, BF_ASYMPTOTE_FLOPS / m->h.gpu.peak_flops, 1e-6);
    assert_int_equal(m->h.instance.gpus_per_node, 4);
    assert_true(m->h.instance.host_mem_bytes == 5e11);
    assert_int_equal(count(es->cat, "gpus"), 1);
    assert_int_equal(count(es->cat, "instances"), 1);
    data_host_entries_free(es);

    /* a device the catalog does not have, under --name: the asymptote */
    snprintf(b.cpu_model, sizeof b.cpu_model, "Acme Accelerator 3, 12.0 GiB");
    in.name = "rig";
    assert_int_equal(data_host_gpu_entries(&in, 1, 0, &es, &err), ST_OK);
    assert_string_equal(es->e[0].instance_name, "rig");
    assert_string_equal(es->e[0].gpu_name, "cuda-rig");
    assert_rel(es->e[0].fig.peak_flops, BF_ASYMPTOTE_FLOPS, 1e-6);
    data_host_entries_free(es);
}

static void write_entries(void **state)
{
    (void)state;
    char dir[512], path[600];
    assert_int_equal(test_dir_make(dir, sizeof dir, "smd-entry-"), 0);
    snprintf(path, sizeof path, "%s/host.json", dir);
    data_host_bench b = bench_fixture_host(1);
    const int threads[] = {1, 2};
    data_host_entries *es = bench_fixture_entries(&b, threads, 2);
    st_err err = {0};
    assert_int_equal(data_host_entries_write(es, path, 0, &err), ST_OK);
    assert_text(es->catalog_text, TEXTS("\"_generated_by\":", "\"host-box7-t2\"", "\"mpi-box7\""),
                NULL);
    for (int t = 0; t < 2; t++) {
        assert_string_equal(es->e[t].fig.catalog_file, path);
        assert_ptr_equal(es->e[t].fig.catalog_json, es->catalog_text);
    }
    /* the file loads as a catalog */
    plan_catalog cat = {0};
    assert_int_equal(data_catalog_load(path, &cat, &err), ST_OK);
    assert_int_equal(cat.ninstances, 2);
    plan_catalog_free(&cat);
    data_host_entries_free(es);

    /* a file not to be replaced: refused, the figures without it */
    es = bench_fixture_entries(&b, threads, 2);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"mine\": true}\n", f);
    fclose(f);
    assert_int_not_equal(data_host_entries_write(es, path, 0, &err), ST_OK);
    assert_text(err.msg, TEXTS("exists; not replaced"), NULL);
    assert_null(es->e[0].fig.catalog_file);
    assert_null(es->catalog_text);
    data_host_entries_free(es);

    /* a CPU host's entries without the transport, or without the device:
     * refused, naming what to run, the file untouched */
    const struct {
        data_host_bench b;
        const char *missing, *run;
    } lacking[] = {
        {{b.cpu, NULL, "box7", NULL}, "transport", "comm"},
        {{NULL, b.comm, "box7", NULL}, "CPU", "cpu"},
    };
    for (size_t i = 0; i < sizeof lacking / sizeof lacking[0]; i++) {
        char want[900];
        es = bench_fixture_entries(&lacking[i].b, threads, 2);
        st_err_clear(&err);
        assert_int_equal(data_host_entries_write(es, path, 1, &err), ST_ENOENT);
        snprintf(want, sizeof want, "--write-catalog %s: no %s measurement of %s yet (run "
                 "smdplan bench %s first, or smdplan bench for both)", path, lacking[i].missing,
                 BF_HOST, lacking[i].run);
        assert_string_equal(err.msg, want);
        data_host_entries_free(es);
    }
    char *kept = NULL;
    size_t len = 0;
    assert_int_equal(data_read_file(path, &kept, &len, &err), ST_OK);
    assert_string_equal(kept, "{\"mine\": true}\n");
    free(kept);
    test_dir_remove(dir);
}

TEST_MAIN(test_frameworks_load(),
          cmocka_unit_test(figures),
          cmocka_unit_test(cpu_entries),
          cmocka_unit_test(cpu_entries_refused),
          cmocka_unit_test(gpu_entry),
          cmocka_unit_test(write_entries))
