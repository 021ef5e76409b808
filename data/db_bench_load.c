/*
 * db_bench_load.c: a host's bench measurements read back for smdplan
 * bench (db_bench_load.h). The database is opened read-only and closed on
 * every path; nothing is written.
 */
#include "data/db_bench_load.h"

#include <stdio.h>
#include <string.h>

#include "data/db.h"
#include "data/db_lookup.h"

int db_bench_load(const char *db_path, int64_t record_id, const char *host, plan_bench_cpu *cpu,
                  int *have_cpu, plan_bench_comm *comm, int *have_comm, st_err *err)
{
    db *d = NULL;
    int rc = db_open(db_default_path(db_path), DB_OPEN_READ, &d, err);
    if (rc == ST_OK && record_id > 0)
        rc = db_bench_read(d, record_id, NULL, cpu, have_cpu, comm, have_comm, NULL, err);
    db_close(d);
    if (rc == ST_OK && record_id == 0) {
        snprintf(cpu->host, sizeof cpu->host, "%s", host);
        snprintf(comm->host, sizeof comm->host, "%s", host);
    }
    return rc;
}

int db_bench_load_gpu(const char *db_path, int64_t record_id, plan_bench_cpu *b, st_err *err)
{
    db *d = NULL;
    int have = 0;
    int rc = db_open(db_default_path(db_path), DB_OPEN_READ, &d, err);
    if (rc == ST_OK)
        rc = db_bench_read(d, record_id, NULL, b, &have, NULL, NULL, NULL, err);
    db_close(d);
    if (rc == ST_OK && (!have || strcmp(b->device, "cuda") != 0))
        rc = ST_RAISE(err, ST_EINVAL, "--from-record %lld: not a GPU bench record (smdplan "
                      "bench gpu records one)", (long long)record_id);
    return rc;
}

int db_bench_complete(const char *db_path, int64_t record_id, plan_bench_cpu *cpu, int *have_cpu,
                      plan_bench_comm *comm, int *have_comm, int64_t *from_cpu,
                      int64_t *from_comm, st_err *err)
{
    char host[PLAN_BENCH_NAME_MAX];
    snprintf(host, sizeof host, "%s", *have_cpu ? cpu->host : comm->host);
    *from_cpu = record_id > 0 && *have_cpu ? record_id : 0;
    *from_comm = record_id > 0 && *have_comm ? record_id : 0;
    /* the part not measured now from this host's newest record of it */
    if (!*have_cpu && record_id <= 0)
        *from_cpu = db_bench_newest(db_path, host, cpu, have_cpu, NULL, NULL);
    if (!*have_comm && record_id <= 0)
        *from_comm = db_bench_newest(db_path, host, NULL, NULL, comm, have_comm);
    if (record_id >= 0 && !*have_cpu && !*have_comm)
        return ST_RAISE(err, ST_ENOENT, "--from-record: no bench measurements of %s recorded in "
                        "%s", host, db_default_path(db_path));
    return ST_OK;
}
