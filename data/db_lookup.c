/*
 * db_lookup.c: one answer from the database at a path (db_lookup.h): the
 * database opened read-only, read, and closed on every path.
 */
#include "data/db_lookup.h"

#include <stdlib.h>
#include <string.h>

/* The plans of one record: more than a search's ranked plans and grid. */
#define PICK_PLANS_MAX 160
/* How far back a host's bench measurements are looked for. */
#define NEWEST_BENCH_LOOK 64

int db_plan_pick(const char *db_path, int64_t record_id, int rank, db_plan *plan,
                 plan_model *model, st_err *err)
{
    db *d = NULL;
    int rc = db_open(db_default_path(db_path), DB_OPEN_READ, &d, err);
    if (rc != ST_OK)
        return rc;
    db_plan *p = calloc(PICK_PLANS_MAX, sizeof *p);
    int n = 0;
    if (!p)
        rc = ST_RAISE(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK)
        rc = db_plans(d, record_id, p, PICK_PLANS_MAX, &n, err);
    if (rc == ST_OK)
        rc = db_model(d, record_id, model, err);
    const db_plan *pick = NULL;
    int want = rank > 0 ? rank : 1;
    for (int i = 0; rc == ST_OK && i < n && !pick; i++)
        if (!strcmp(p[i].role, "top") && p[i].rank == want)
            pick = &p[i];
    for (int i = 0; rc == ST_OK && i < n && !pick && rank <= 0; i++)
        if (strcmp(p[i].role, "grid") && strcmp(p[i].role, "closest_oom"))
            pick = &p[i]; /* a simulation's or a run's own plan */
    if (rc == ST_OK && !pick)
        rc = ST_RAISE(err, ST_EINVAL, "--plan %lld: the record has no plan of rank %d (see smdplan "
                      "show %lld)", (long long)record_id, want, (long long)record_id);
    if (rc == ST_OK)
        *plan = *pick;
    free(p);
    db_close(d);
    return rc;
}

int64_t db_bench_newest(const char *db_path, const char *host, plan_bench_cpu *cpu,
                        int *have_cpu, plan_bench_comm *comm, int *have_comm)
{
    db *d = NULL;
    st_err err = {0};
    if (db_open(db_default_path(db_path), DB_OPEN_READ, &d, &err) != ST_OK)
        return 0;
    /* newest first: the first record holding the part wanted */
    db_summary s[NEWEST_BENCH_LOOK];
    int n = 0;
    int64_t found = 0;
    if (db_history(d, "bench", s, NEWEST_BENCH_LOOK, &n, &err) == ST_OK)
        for (int i = 0; i < n && !found; i++) {
            int hc = 0, hm = 0;
            int64_t id = 0;
            st_err e2 = {0};
            if (db_bench_read(d, s[i].id, NULL, cpu, &hc, comm, &hm, &id, &e2) != ST_OK)
                continue;
            if (strcmp(cpu ? cpu->host : comm->host, host) != 0)
                continue;
            if ((have_cpu && hc) || (have_comm && hm)) {
                if (have_cpu)
                    *have_cpu = hc;
                if (have_comm)
                    *have_comm = hm;
                found = id;
            }
        }
    db_close(d);
    return found;
}
