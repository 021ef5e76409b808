/*
 * data_bench_json.h: what smdplan bench measured and made, as the JSON its
 * --json prints (data_bench_json.c): the device's measurements, the
 * transport's (as exec/ writes them, handed over as text: data/ does not
 * link exec/), the records either came from, the catalog entry made, where
 * it was written and whether the run was recorded. Numbers as measured
 * (seconds, FLOP/s, bytes, bytes per second).
 */
#ifndef SMD_DATA_BENCH_JSON_H
#define SMD_DATA_BENCH_JSON_H

#include <stdint.h>

#include "data/data.h"
#include "planner/plan_bench.h"

struct cJSON;

/* A device's measurements as an object (caller owns; NULL when out of
 * memory): host, cpu_model, blas, cores, mem_bytes, the spreads and loads,
 * busy (plan_bench_busy), and the arrays gemm, elementwise and triad. */
struct cJSON *data_bench_cpu_json(const plan_bench_cpu *b);

/* The catalog entry's key ("gpus", "instances", "curves") into obj under
 * that key: an array, empty when the entry has none or cannot give it. */
void data_bench_entry_json(struct cJSON *obj, const data_catalog_entry *e, const char *key);

/* What one smdplan bench --json prints. Borrowed for the call. */
typedef struct data_bench_doc {
    const char *device_key;      /* the device's key: "cpu", or "gpu" (bench gpu) */
    const plan_bench_cpu *device; /* NULL: none */
    int64_t device_from_record;  /* > 0: "<device_key>_from_record" */
    const char *comm_json;       /* the transport's measurements (exec_bench_comm_json);
                                  * NULL: none */
    int64_t comm_from_record;    /* > 0: "comm_from_record" */
    const data_catalog_entry *entry; /* "catalog": its gpus, instances (and curves) */
    int with_curves;
    const char *catalog_file;    /* NULL: not written */
    int recorded;
} data_bench_doc;

/* The document as text (cJSON's formatted print; malloc'd, caller frees;
 * NULL when out of memory). Keys in the order above. */
char *data_bench_json(const data_bench_doc *d);

#endif
