/*
 * data_host_entry.h: a host's catalog entry made from its bench
 * measurements (data_host_entry.c): for a CPU host, one device and
 * instance type per thread count per rank; for a GPU host, one of each.
 * The figures are fitted in the planner (planner/plan_hwfit.h:
 * plan_host_cpu_device and the like), named as planner/plan_host_names.h
 * says, gathered into a catalog entry file (data.h: data_catalog_entry)
 * and into the figures a bench record keeps (db.h: db_bench_entry).
 *
 * Everything comes in as plain values: the measurements, this host's short
 * name, and for a GPU host what the caller counted of it.
 */
#ifndef SMD_DATA_HOST_ENTRY_H
#define SMD_DATA_HOST_ENTRY_H

#include "common/st.h"
#include "data/data.h"
#include "data/db.h"
#include "planner/plan_bench.h"
#include "planner/plan_hwfit.h"

/* The measurements an entry is made from. Borrowed for the call. */
typedef struct data_host_bench {
    const plan_bench_cpu *cpu;   /* the device's; NULL: none */
    const plan_bench_comm *comm; /* the transport's; NULL: none (a CPU host's devices are
                                  * made without instance types) */
    const char *host;            /* this host's short name (plan_host_short_name) */
    const char *name;            /* smdplan bench --name; NULL: host-NAME */
} data_host_bench;

/* One entry made: the fitted device (and instance type), its names, and
 * the figures a bench record keeps of it. fig's name strings point into
 * this struct; its catalog_file and catalog_json are set when the entries
 * are written (data_host_entries_write). */
typedef struct data_host_made {
    char instance_name[PLAN_HOST_NAME_MAX];
    char gpu_name[PLAN_HOST_NAME_MAX];
    plan_host_entry h;
    db_bench_entry fig;
} data_host_made;

/* The entries of one bench and the catalog entry file they make. */
typedef struct data_host_entries {
    data_catalog_entry *cat;     /* devices, instance types and curves gathered */
    int n;                       /* entries made, in e */
    data_host_made e[PLAN_BENCH_THREADS_MAX];
    char *catalog_text;          /* the file as written (NULL: not written, or not read
                                  * back) */
    /* A CPU host's entries made without one of its measurements: which
     * ("CPU", "transport"; "" when none is missing) and the host the other
     * names. Such entries are not written. */
    char missing[16];
    char host[PLAN_BENCH_NAME_MAX];
} data_host_entries;

/* The figures a bench record keeps of entry h at threads_per_rank T into
 * e (its strings NULL). */
void data_host_entry_figures(const plan_host_entry *h, int threads_per_rank, db_bench_entry *e);

/* h's instance type and its curves into cat (its device added before). */
void data_host_entry_add_instance(data_catalog_entry *cat, const plan_host_entry *h);

/* A CPU host's entries (*out, allocated here; data_host_entries_free) at
 * each of the n thread counts per rank threads (b->cpu given): the device
 * at T threads per rank, and with b->comm its instance type (curve
 * plan_host_curve_name). ST_EINVAL when a count does not divide the cores
 * or was not measured; the fits' errors (*out then holds the entries made
 * before); ST_ENOMEM (*out NULL). Without b->cpu, no entry; without
 * b->cpu or b->comm, (*out)->missing says which. */
int data_host_cpu_entries(const data_host_bench *b, const int *threads, int n,
                          data_host_entries **out, st_err *err);

/* A GPU host's entry (*out as above) from its GPU bench b->cpu: the device
 * against the catalog's GPU of this device (the built-in catalog,
 * plan_host_catalog_gpu of b->cpu->cpu_model), and the instance type of
 * ngpu GPUs and host_mem_bytes of host memory (plan_host_gpu_instance).
 * The fits' errors (*out then holds what was added before). */
int data_host_gpu_entries(const data_host_bench *b, int ngpu, double host_mem_bytes,
                          data_host_entries **out, st_err *err);

/* Write es's catalog entry file to path (data_catalog_entry_write: force
 * to replace an existing file) and read it back: every entry's
 * fig.catalog_file is then path and fig.catalog_json the text. ST_ENOENT,
 * naming the measurement and the smdplan bench word that makes it, when
 * es->missing names one; the writer's errors (the entries then
 * unchanged). */
int data_host_entries_write(data_host_entries *es, const char *path, int force, st_err *err);

void data_host_entries_free(data_host_entries *es); /* NULL: nothing */

#endif
