/*
 * db_lookup.h: one answer from the database at a path, opened read-only
 * for it and closed again: a recorded plan to run (smdplan exec --plan),
 * a host's newest bench measurements (smdplan bench). The callers hold no
 * database of their own.
 */
#ifndef SMD_DB_LOOKUP_H
#define SMD_DB_LOOKUP_H

#include <stdint.h>

#include "common/st.h"
#include "data/db.h"
#include "planner/plan.h"

/* The plan of rank rank (1..) of record record_id in the database at
 * db_path (NULL: db_default_path's) into *plan, the record's model into
 * *model. rank 0 takes rank 1, or, for a record without ranked plans, its
 * own plan (a simulation's or a run's: any role but "grid" and
 * "closest_oom"). ST_EINVAL when the record has no such plan; db_open's,
 * db_plans' and db_model's codes. */
int db_plan_pick(const char *db_path, int64_t record_id, int rank, db_plan *plan,
                 plan_model *model, st_err *err);

/* The newest bench record of host (newest first, among the 64 newest bench
 * records) holding the cpu measurements when have_cpu is given, or the comm
 * measurements when have_comm is: read into cpu and comm (as
 * db_bench_read), with *have_cpu and *have_comm (those given) saying which
 * it holds. cpu and comm are scratch while looking. The record's id, 0 when
 * there is none or the database cannot be read. */
int64_t db_bench_newest(const char *db_path, const char *host, plan_bench_cpu *cpu,
                        int *have_cpu, plan_bench_comm *comm, int *have_comm);

#endif
