/*
 * db_report.h: what `smdplan report` reads from the records database for its
 * page, as plain structs: the newest search, a search's model and plans,
 * the memory by term of its top plans' stages, and the simulations to draw
 * (plan #1's when there is one, else the newest). The page itself is
 * composed by the reports library from these.
 */
#ifndef SMD_DB_REPORT_H
#define SMD_DB_REPORT_H

#include <stdint.h>

#include "common/st.h"
#include "data/db.h"
#include "planner/plan.h"
#include "sim/sim.h"

/* The plans of a search the page reads: its ranked plans and grid. */
#define DB_REPORT_PLANS_MAX 32

/* The newest plan record of a search (one with ranked plans, not a
 * comparison of instance types), among the 64 newest plan records; 0 if
 * none or the database cannot be read. */
int64_t db_report_newest_search(db *d);

/* A search record as the page opens with it. */
typedef struct db_report_search {
    int have_model;              /* model holds the record's model */
    plan_model model;
    int nplans;                  /* 0 when the plans cannot be read */
    db_plan plans[DB_REPORT_PLANS_MAX];
    int one;                     /* plan #1 (rank 1 of role "top") in plans, -1 none */
    int comparison;              /* a comparison of instance types and counts: "option"
                                  * plans and no "top" one */
} db_report_search;

/* Record record_id's model and plans into *out; record_id 0 reads nothing
 * (no model, no plans). What cannot be read is left out (have_model 0,
 * nplans 0): a search without them only loses the page's titles and
 * summary. */
void db_report_search_read(db *d, int64_t record_id, db_report_search *out);

/* The memory of one top plan, by term, per stage: every stage when the
 * record keeps them all (schema version 2 on), else the worst stage as the
 * prediction holds it. */
typedef struct db_report_mem_plan {
    char label[128];             /* db_plan's layout label */
    int nstages;                 /* entries in mem and stage: pp, or 1 (the worst only) */
    int pp;                      /* the plan's stages; 0 when not known */
    int worst_only;
    plan_mem mem[PLAN_PP_MAX];   /* bytes per GPU by term */
    int stage[PLAN_PP_MAX];      /* pipeline rank of each entry */
} db_report_mem_plan;

typedef struct db_report_memory {
    char gpu[32];                /* the GPU of the record's first plan */
    double capacity_bytes;       /* the GPU's memory, from the last top plan */
    int nplans;                  /* top plans with a prediction, best first */
    int worst_only;              /* how many of them hold their worst stage only */
    db_report_mem_plan plans[DB_REPORT_PLANS_MAX];
} db_report_memory;

/* The memory of record record_id's top plans into *out (caller-owned; it
 * is large, so allocate it). ST_ENOMEM; db_plans' and db_plan_stages'
 * codes. */
int db_report_memory_read(db *d, int64_t record_id, db_report_memory *out, st_err *err);

/* A simulation record the page draws. */
typedef struct db_report_sim {
    int64_t id;                  /* the record; 0: none to draw (sim is then empty) */
    int mine;                    /* it played out plan #1's layout on plan #1's cluster */
    char label[256];             /* "LAYOUT on N x TYPE"; "" when its plan is not recorded */
    sim_result sim;              /* owned: sim_result_fini when id is not 0 */
} db_report_sim;

/* The simulation whose per-stage busy time the page draws (plan #1's
 * newest, else the newest) into *stages, and the one whose timeline it
 * draws (plan #1's newest with a trace of 1..trace_ops_max ops, else the
 * newest with one) into *trace; one (may be NULL) is plan #1. Among the 64
 * newest simulation records; one that cannot be read is skipped. db_history's
 * codes (then both ids are 0). */
int db_report_sims_read(db *d, const db_plan *one, int trace_ops_max, db_report_sim *stages,
                        db_report_sim *trace, st_err *err);

#endif
