/*
 * test_exec_bench_here.c: smdplan bench's runs on this host, the parts that
 * need no measurement (exec/exec_bench_here.c), and finding the programs
 * beside the running one (exec/exec_program.c).
 *
 * This host's name as gethostname gives it and its short name; this
 * executable found beside itself, a shell found on PATH only when PATH is
 * searched, a path that does not fit refused. The transport bench without
 * its rank program beside the running one (a test binary has none) is
 * ST_ENOENT after its progress line; a GPU bench on a host CUDA sees no GPU
 * of (or a build without CUDA) says there is nothing to measure, and
 * measures nothing.
 */
#include "test_util.h"

#include <stdlib.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/exec_bench_here.h"
#include "exec/exec_program.h"
#include "planner/plan_host_names.h"

static void host_name(void **state)
{
    (void)state;
    char raw[256] = "", full[256], short_name[PLAN_HOST_SHORT_MAX], want[PLAN_HOST_SHORT_MAX];
    assert_int_equal(gethostname(raw, sizeof raw - 1), 0);
    exec_bench_host_name(full, sizeof full, short_name, sizeof short_name);
    assert_string_equal(full, raw[0] ? raw : "localhost");
    plan_host_short_name(raw, want, sizeof want);
    assert_string_equal(short_name, want);
    exec_bench_host_name(NULL, 0, short_name, sizeof short_name); /* either may be NULL */
    assert_string_equal(short_name, want);
}

static void programs(void **state)
{
    (void)state;
    char self[EXEC_PROGRAM_PATH_MAX], found[EXEC_PROGRAM_PATH_MAX];
    exec_program_self(self, sizeof self);
    const char *base = strrchr(self, '/');
    assert_non_null(base);
    assert_string_equal(base, "/test_exec_bench_here");
    exec_program_find("test_exec_bench_here", 0, found, sizeof found);
    assert_string_equal(found, self);
    /* a path that does not fit the buffer: none */
    char small[8] = "x";
    exec_program_find("test_exec_bench_here", 0, small, sizeof small);
    assert_string_equal(small, "");
    /* sh: not beside this program, on PATH */
    exec_program_find("sh", 0, found, sizeof found);
    assert_string_equal(found, "");
    exec_program_find("sh", 1, found, sizeof found);
    assert_true(strlen(found) > 3 && !strcmp(found + strlen(found) - 3, "/sh"));
    assert_int_equal(access(found, X_OK), 0);
    exec_program_find("no-such-program-smd", 1, found, sizeof found);
    assert_string_equal(found, "");
}

typedef struct said {
    int n;
    char last[128];
} said;

static void say(const char *line, void *ctx)
{
    said *s = ctx;
    s->n++;
    snprintf(s->last, sizeof s->last, "%s", line);
}

static void comm_without_program(void **state)
{
    (void)state;
    said s = {0};
    exec_bench_here h = {.quick = 1, .say = say, .say_ctx = &s};
    exec_bench_comm *out = calloc(1, sizeof *out);
    st_err err = {0};
    assert_int_equal(exec_bench_here_comm(&h, out, &err), ST_ENOENT);
    assert_string_equal(err.msg, "bench comm: smdplan-bench-rank is not next to smdplan (this "
                                 "build has no MPI, or it was not built)");
    assert_int_equal(s.n, 1);
    assert_string_equal(s.last, "measuring the transport between ranks (mpirun)...");
    assert_int_equal(out->n, 0);
    free(out);
}

static void gpu_without_gpu(void **state)
{
    (void)state;
    if (exec_device_count("cuda") > 0)
        skip(); /* a GPU here: the GPU tests (tests/gpu/) measure it */
    said s = {0};
    exec_bench_here h = {.say = say, .say_ctx = &s};
    exec_bench_cpu *b = calloc(1, sizeof *b);
    st_err err = {0};
    int no_gpu = 0;
    assert_int_not_equal(exec_bench_here_gpu(&h, b, &no_gpu, &err), ST_OK);
    assert_int_equal(no_gpu, 1);
    assert_int_equal(s.n, 0); /* nothing measured */
    if (!exec_features_built().cuda) {
        assert_int_equal(err.code, ST_EUNSUPPORTED);
        assert_string_equal(err.msg, "no GPU: this build has no cuda device (built without "
                                     "CUDA)");
    }
    /* the host of an entry: the device's count, the physical memory */
    snprintf(b->device, sizeof b->device, "cpu");
    int ngpu = -1;
    double mem = 0;
    exec_bench_gpu_host(b, &ngpu, &mem);
    assert_int_equal(ngpu, exec_device_count("cpu"));
    assert_true(mem == (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE));
    free(b);
}

TEST_MAIN((void)0,
          cmocka_unit_test(host_name),
          cmocka_unit_test(programs),
          cmocka_unit_test(comm_without_program),
          cmocka_unit_test(gpu_without_gpu))
