/*
 * rpt_page_db.h: the sections of the page of `smdplan report` read from the
 * records database: each reads its records through data/ (db.h,
 * db_report.h), hands them to the page's writers (rpt_page.h, rpt.h) as
 * their own structs and draws its plot. A section whose records are missing
 * draws nothing and is no error: the page's closing note names it
 * (rpt_page_finish).
 *
 * d is an open database (read only is enough); every argument is borrowed
 * for the call. The codes are the readers' and writers' (ST_ENOMEM,
 * ST_EIO, ...).
 */
#ifndef SMD_RPT_PAGE_DB_H
#define SMD_RPT_PAGE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "common/st.h"
#include "data/db.h"
#include "data/db_report.h"
#include "reports/rpt.h"
#include "reports/rpt_page.h"

/* A recorded plan as the page takes it (its strings and structs borrowed
 * from p). */
rpt_page_plan rpt_page_plan_of(const db_plan *p);

/* The page's title and the scaling plot's of search s (rpt_page_titles:
 * its model, and plan #1's cluster when it has one). */
void rpt_page_db_titles(const db_report_search *s, char *title, size_t title_len,
                        char *scale_title, size_t scale_title_len);

/* The page's opening: plan #1 of s with its launch settings (launch, made
 * by the caller; not read when s has no plan #1), or a comparison's
 * recommended cluster; nothing when s is neither. */
int rpt_page_db_summary(rpt_report *r, const db_report_search *s, const rpt_page_launch *launch,
                        st_err *err);

/* Memory by term of every stage of the top plans of record plan_id, under
 * title; *worst_only gets how many plans were recorded with their worst
 * stage only. */
int rpt_page_db_memory(rpt_report *r, db *d, int64_t plan_id, const char *title, int *worst_only,
                       st_err *err);

/* The step time over TP x PP of record plan_id's search. */
int rpt_page_db_grid(rpt_report *r, db *d, int64_t plan_id, const char *title, st_err *err);

/* Throughput and cost against instance count of the model of record
 * plan_id (every comparison recorded for it); drawn for two clusters or
 * more. */
int rpt_page_db_scaling(rpt_report *r, db *d, int64_t plan_id, const char *title, st_err *err);

/* The stages and timeline of the simulations of plan #1 (one, may be NULL),
 * else the newest; *have_stages and *have_timeline say what was drawn. */
int rpt_page_db_simulations(rpt_report *r, db *d, const db_plan *one, int *have_stages,
                            int *have_timeline, st_err *err);

/* Predicted and simulated against measured step time of every run recorded
 * (executed or published), up to RPT_PAGE_DB_RUNS_MAX. */
#define RPT_PAGE_DB_RUNS_MAX 4096
int rpt_page_db_accuracy(rpt_report *r, db *d, st_err *err);

#endif
