/*
 * test_exec_features.c: the registry of devices and transports
 * (exec_features.c) and the backend modules it opens (exec_module.h).
 *
 * Names are answered without opening anything; an unknown name is refused
 * with the list of what was built; a module that is missing or cannot be
 * loaded is ST_ENOENT with one line naming it (and the backend asked for),
 * and the caller's device count is then 0; once found (in the build
 * directory) a module's table is the backend asked for, and the same table
 * on every later ask. The CUDA and MPI cases run in the builds that have
 * them.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "smd_config.h"

static char dir[64];

static void test_names(void **state)
{
    (void)state;
    assert_true(exec_dev_built("cpu") && exec_dev_built("cpu64") && exec_dev_built("cpu-bf16"));
    assert_int_equal(exec_dev_built("cuda"), HAVE_CUDA);
    assert_false(exec_dev_built("tpu") || exec_dev_built(NULL));
    assert_true(exec_comm_built("self"));
    assert_int_equal(exec_comm_built("mpi"), HAVE_MPI);
    assert_int_equal(exec_comm_built("nccl"), HAVE_NCCL && HAVE_MPI);
    assert_string_equal(exec_dev_names(), HAVE_CUDA ? "cpu cpu64 cpu-bf16 cuda"
                                                    : "cpu cpu64 cpu-bf16");
    assert_string_equal(exec_comm_names(), HAVE_NCCL && HAVE_MPI ? "mpi self nccl"
                                           : HAVE_MPI            ? "mpi self"
                                                                 : "self");
    /* the fused attention is known without opening the device */
    assert_int_equal(exec_dev_flash("cuda"), HAVE_CUDA);
    assert_false(exec_dev_flash("cpu") || exec_dev_flash("tpu"));
}

static void test_unknown(void **state)
{
    (void)state;
    const exec_dev_ops *d = (const exec_dev_ops *)1;
    st_err err = {0};
    assert_int_equal(exec_dev_lookup("tpu", &d, &err), ST_EUNSUPPORTED);
    assert_null(d);
    assert_non_null(strstr(err.msg, "device \"tpu\" is not in this build (built: cpu cpu64"));
    const exec_comm_ops *c = (const exec_comm_ops *)1;
    st_err err2 = {0};
    assert_int_equal(exec_comm_lookup("gloo", &c, &err2), ST_EUNSUPPORTED);
    assert_null(c);
    assert_non_null(strstr(err2.msg, "transport \"gloo\" is not in this build"));
    int n = -1;
    double bytes = -1;
    st_err err3 = {0};
    assert_int_equal(exec_device_query("tpu", &n, &bytes, &err3), ST_EUNSUPPORTED);
    assert_int_equal(n, 0);
    assert_true(bytes == 0);
    /* the host devices: one, their memory the host's */
    assert_int_equal(exec_device_query("cpu", &n, &bytes, NULL), ST_OK);
    assert_int_equal(n, 1);
    assert_true(bytes == 0);
    assert_int_equal(exec_device_count("cpu64"), 1);
    /* in libexec: present whatever $SMDPLAN_MODULES says */
    assert_int_equal(exec_dev_present("cpu", NULL), ST_OK);
    assert_int_equal(exec_comm_present("self", NULL), ST_OK);
    st_err err4 = {0};
    assert_int_equal(exec_comm_present("gloo", &err4), ST_EUNSUPPORTED);
    assert_non_null(strstr(err4.msg, "transport \"gloo\" is not in this build"));
    assert_ptr_equal(exec_comm_find("self"), exec_comm_find("self"));
    assert_non_null(exec_dev_find("cpu"));
}

/* With $SMDPLAN_MODULES an empty directory, then one holding a file that is
 * no shared object: every module-held backend refused by name. */
static void test_missing(void **state)
{
    (void)state;
    if (!HAVE_CUDA && !HAVE_MPI)
        skip();
    for (int broken = 0; broken < 2; broken++) {
        if (broken)
            for (int i = 0; i < 3; i++) {
                const char *f[] = {"smdplan-mpi.so", "smdplan-cuda.so", "smdplan-cuda-info.so"};
                char p[128];
                snprintf(p, sizeof p, "%s/%s", dir, f[i]);
                FILE *fp = fopen(p, "w");
                assert_non_null(fp);
                fclose(fp);
            }
        const char *why = broken ? "cannot be loaded" : "not found (looked in $SMDPLAN_MODULES";
        assert_int_equal(setenv("SMDPLAN_MODULES", dir, 1), 0);
        if (HAVE_MPI) {
            st_err err = {0};
            exec_comm *w = NULL;
            assert_int_equal(exec_comm_open("mpi", 10, &w, &err), ST_ENOENT);
            assert_null(w);
            assert_non_null(strstr(err.msg, "transport mpi: backend module "));
            assert_non_null(strstr(err.msg, "smdplan-mpi.so"));
            assert_non_null(strstr(err.msg, why));
            assert_null(strchr(err.msg, '\n'));
            assert_null(exec_comm_find("mpi"));
            /* found without loading: a file that is there is present */
            st_err err2 = {0};
            assert_int_equal(exec_comm_present("mpi", &err2), broken ? ST_OK : ST_ENOENT);
            if (!broken)
                assert_non_null(strstr(err2.msg, "transport mpi: backend module smdplan-mpi.so "
                                                 "not found (looked in $SMDPLAN_MODULES = "));
        }
        if (HAVE_CUDA) {
            int n = -1;
            double bytes = -1;
            st_err err = {0};
            assert_int_equal(exec_device_query("cuda", &n, &bytes, &err), ST_ENOENT);
            assert_non_null(strstr(err.msg, "device cuda: backend module "));
            assert_non_null(strstr(err.msg, "smdplan-cuda-info.so"));
            assert_non_null(strstr(err.msg, why));
            assert_int_equal(exec_device_count("cuda"), 0);
            exec_dev *d = NULL;
            st_err err2 = {0};
            assert_int_equal(exec_dev_open("cuda", 1, &d, &err2), ST_ENOENT);
            assert_null(d);
            assert_non_null(strstr(err2.msg, "smdplan-cuda.so"));
            st_err err3 = {0};
            assert_int_equal(exec_dev_present("cuda", &err3), broken ? ST_OK : ST_ENOENT);
        }
        assert_int_equal(unsetenv("SMDPLAN_MODULES"), 0);
    }
}

/* Found beside the programs of the build: the table asked for, the same
 * one every time. */
static void test_found(void **state)
{
    (void)state;
    if (!HAVE_CUDA && !HAVE_MPI)
        skip();
    if (HAVE_MPI) {
        const exec_comm_ops *c = NULL;
        st_err err = {0};
        assert_int_equal(exec_comm_lookup("mpi", &c, &err), ST_OK);
        assert_string_equal(c->name, "mpi");
        assert_int_equal(c->device_buffers, 0);
        assert_ptr_equal(exec_comm_find("mpi"), c);
        assert_int_equal(exec_comm_present("mpi", &err), ST_OK);
    }
    if (HAVE_CUDA) {
        const exec_dev_ops *d = NULL;
        st_err err = {0};
        assert_int_equal(exec_dev_lookup("cuda", &d, &err), ST_OK);
        assert_string_equal(d->name, "cuda");
        assert_int_equal(d->host_memory, 0);
        assert_non_null(d->flash_fwd);
        int n = -1;
        double bytes = -1;
        assert_int_equal(exec_device_query("cuda", &n, &bytes, &err), ST_OK);
        assert_true(n >= 0 && bytes >= 0);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/smd-test-modules-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *f[] = {"smdplan-mpi.so", "smdplan-cuda.so", "smdplan-cuda-info.so"};
    for (int i = 0; i < 3; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, f[i]);
        unlink(p);
    }
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_found),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
