/*
 * db_bench_load.h: a host's bench measurements read back from the database
 * at a path, for smdplan bench to make its catalog entry from
 * (db_bench_load.c): a record named by id, or the newest of this host for
 * the part not measured now. Each call opens the database read-only and
 * closes it again; paths are as db_default_path takes them (NULL: the
 * default database).
 */
#ifndef SMD_DB_BENCH_LOAD_H
#define SMD_DB_BENCH_LOAD_H

#include <stdint.h>

#include "common/st.h"
#include "planner/plan_bench.h"

/* Bench record record_id (> 0) into cpu and comm, *have_cpu and *have_comm
 * saying which it holds (db_bench_read). record_id 0 reads nothing: it
 * checks that the database opens and sets cpu->host and comm->host to
 * host (this host's name as gethostname gives it), for db_bench_complete
 * to find this host's newest records. db_open's and db_bench_read's
 * codes. */
int db_bench_load(const char *db_path, int64_t record_id, const char *host, plan_bench_cpu *cpu,
                  int *have_cpu, plan_bench_comm *comm, int *have_comm, st_err *err);

/* The device measurements of GPU bench record record_id (0: the newest
 * bench record holding device measurements, of any host) into b. ST_EINVAL
 * when the record holds none or they are not a cuda device's; db_open's
 * and db_bench_read's codes. */
int db_bench_load_gpu(const char *db_path, int64_t record_id, plan_bench_cpu *b, st_err *err);

/* What was measured or loaded (*have_cpu, *have_comm) completed: with
 * record_id < 0 (measured now) or 0, the part missing is read from the
 * newest bench record of the host the other part names
 * (db_bench_newest). *from_cpu and *from_comm get the record each part
 * came from (0: measured now, or none). ST_ENOENT when record_id >= 0 and
 * neither part is there in the end. */
int db_bench_complete(const char *db_path, int64_t record_id, plan_bench_cpu *cpu, int *have_cpu,
                      plan_bench_comm *comm, int *have_comm, int64_t *from_cpu,
                      int64_t *from_comm, st_err *err);

#endif
