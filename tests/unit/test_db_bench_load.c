/*
 * test_db_bench_load.c: a host's bench measurements read back for smdplan
 * bench (data/db_bench_load.c).
 *
 * Four bench records: this host's device, this host's transport, another
 * host's device, a GPU host's device. A record by id gives what it holds;
 * id 0 reads nothing but names the host; the part missing comes from the
 * host's newest record of it (never another host's), except for a record
 * named by id; nothing at all is an error naming the host and database. A
 * GPU record is one of a cuda device.
 */
#include <stdlib.h>

#include "data/db_bench_load.h"
#include "test_bench_fixture.h"
#include "test_db_util.h"

typedef struct recs {
    tdb_fixture *f;
    int64_t cpu, comm, other, gpu;
} recs;

static int64_t record(const char *path, const plan_bench_cpu *cpu, const plan_bench_comm *comm)
{
    db *d = NULL;
    st_err err = {0};
    int64_t id = 0;
    db_provenance p = test_provenance();
    assert_int_equal(db_open(path, DB_OPEN_WRITE, &d, &err), ST_OK);
    assert_int_equal(db_record_bench(d, &p, cpu, comm, NULL, &id, &err), ST_OK);
    db_close(d);
    return id;
}

static int setup(void **state)
{
    tdb_setup(state);
    recs *r = calloc(1, sizeof *r);
    r->f = *state;
    plan_bench_cpu *cpu = calloc(1, sizeof *cpu);
    plan_bench_comm *comm = calloc(1, sizeof *comm);
    bench_fixture_cpu(cpu);
    bench_fixture_comm(comm, 1);
    r->cpu = record(r->f->path, cpu, NULL);
    r->comm = record(r->f->path, NULL, comm);
    snprintf(cpu->host, sizeof cpu->host, "other.example.com");
    r->other = record(r->f->path, cpu, NULL);
    snprintf(cpu->host, sizeof cpu->host, "gpuhost");
    snprintf(cpu->device, sizeof cpu->device, "cuda");
    r->gpu = record(r->f->path, cpu, NULL);
    free(cpu);
    free(comm);
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    recs *r = *state;
    *state = r->f;
    tdb_teardown(state);
    free(r);
    return 0;
}

typedef struct got {
    plan_bench_cpu cpu;
    plan_bench_comm comm;
    int have_cpu, have_comm;
    int64_t from_cpu, from_comm;
} got;

static void load_by_id(void **state)
{
    recs *r = *state;
    got *g = calloc(1, sizeof *g);
    st_err err = {0};
    assert_int_equal(db_bench_load(r->f->path, r->cpu, "unused", &g->cpu, &g->have_cpu, &g->comm,
                                   &g->have_comm, &err),
                     ST_OK);
    assert_true(g->have_cpu && !g->have_comm);
    assert_string_equal(g->cpu.host, BF_HOST);
    assert_int_equal(g->cpu.ngemm, 30);
    /* named by id: nothing else looked up */
    assert_int_equal(db_bench_complete(r->f->path, r->cpu, &g->cpu, &g->have_cpu, &g->comm,
                                       &g->have_comm, &g->from_cpu, &g->from_comm, &err),
                     ST_OK);
    assert_true(g->from_cpu == r->cpu && g->from_comm == 0 && !g->have_comm);

    assert_int_equal(db_bench_load(r->f->path, 999, "x", &g->cpu, NULL, &g->comm, NULL, &err),
                     ST_ENOENT);
    assert_text(err.msg, TEXTS("no record 999"), NULL);
    st_err_clear(&err);
    char missing[700];
    snprintf(missing, sizeof missing, "%s/none.db", r->f->dir);
    assert_int_equal(db_bench_load(missing, 0, "x", &g->cpu, NULL, &g->comm, NULL, &err),
                     ST_ENOENT);
    free(g);
}

/* id 0: this host's newest of each part; measured now: the other part. */
static void complete_from_newest(void **state)
{
    recs *r = *state;
    got *g = calloc(1, sizeof *g);
    st_err err = {0};
    assert_int_equal(db_bench_load(r->f->path, 0, BF_HOST, &g->cpu, &g->have_cpu, &g->comm,
                                   &g->have_comm, &err),
                     ST_OK);
    assert_true(!g->have_cpu && !g->have_comm);
    assert_string_equal(g->comm.host, BF_HOST);
    assert_int_equal(db_bench_complete(r->f->path, 0, &g->cpu, &g->have_cpu, &g->comm,
                                       &g->have_comm, &g->from_cpu, &g->from_comm, &err),
                     ST_OK);
    /* the other host's device record is newer, and not taken */
    assert_true(g->have_cpu && g->have_comm);
    assert_true(g->from_cpu == r->cpu && g->from_comm == r->comm);
    assert_int_equal(g->comm.ranks, BF_RANKS);

    /* the device measured now (-1): the transport from the record */
    memset(g, 0, sizeof *g);
    bench_fixture_cpu(&g->cpu);
    g->have_cpu = 1;
    assert_int_equal(db_bench_complete(r->f->path, -1, &g->cpu, &g->have_cpu, &g->comm,
                                       &g->have_comm, &g->from_cpu, &g->from_comm, &err),
                     ST_OK);
    assert_true(g->from_cpu == 0 && g->from_comm == r->comm && g->have_comm);

    /* a host with nothing recorded */
    memset(g, 0, sizeof *g);
    snprintf(g->cpu.host, sizeof g->cpu.host, "nobody");
    snprintf(g->comm.host, sizeof g->comm.host, "nobody");
    assert_int_equal(db_bench_complete(r->f->path, 0, &g->cpu, &g->have_cpu, &g->comm,
                                       &g->have_comm, &g->from_cpu, &g->from_comm, &err),
                     ST_ENOENT);
    char want[800];
    snprintf(want, sizeof want, "--from-record: no bench measurements of nobody recorded in %s",
             r->f->path);
    assert_string_equal(err.msg, want);
    free(g);
}

static void load_gpu(void **state)
{
    recs *r = *state;
    plan_bench_cpu *b = calloc(1, sizeof *b);
    st_err err = {0};
    assert_int_equal(db_bench_load_gpu(r->f->path, r->gpu, b, &err), ST_OK);
    assert_string_equal(b->host, "gpuhost");
    assert_string_equal(b->device, "cuda");
    assert_int_equal(db_bench_load_gpu(r->f->path, 0, b, &err), ST_OK); /* the newest */
    assert_string_equal(b->host, "gpuhost");
    assert_int_equal(db_bench_load_gpu(r->f->path, r->cpu, b, &err), ST_EINVAL);
    char want[160];
    snprintf(want, sizeof want, "--from-record %lld: not a GPU bench record (smdplan bench gpu "
             "records one)", (long long)r->cpu);
    assert_string_equal(err.msg, want);
    st_err_clear(&err);
    assert_int_equal(db_bench_load_gpu(r->f->path, r->comm, b, &err), ST_EINVAL);
    free(b);
}

TEST_MAIN((void)0,
          cmocka_unit_test_setup_teardown(load_by_id, setup, teardown),
          cmocka_unit_test_setup_teardown(complete_from_newest, setup, teardown),
          cmocka_unit_test_setup_teardown(load_gpu, setup, teardown))
