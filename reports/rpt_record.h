/*
 * rpt_record.h: one recorded answer as the text of `smdplan show`.
 *
 * The record is the JSON object data/'s db_show hands over (borrowed for the
 * call; struct cJSON, so this header needs no cJSON include). The page is
 * written in parts, so the caller can put its terminal tables (simulations,
 * runs, calibrations) between them; each part writes nothing when the record
 * has none of it. Numbers a record lacks (an older schema) print as "nan"
 * or "-", strings as "". Each line ends with '\n'; lines are not wrapped.
 */
#ifndef SMD_RPT_RECORD_H
#define SMD_RPT_RECORD_H

#include <stdio.h>

struct cJSON;

/* The head: "record ID: KIND, TIME", summary, command line, provenance, the
 * model (when the record has one), the cluster (a plan record of one
 * instance type) and the search (objective, layouts evaluated, or a
 * comparison of instance types). */
void rpt_record_text_head(FILE *f, const struct cJSON *rec);

/* Each plan of a plan record: its role (rank, closest layout out of memory,
 * an option of a comparison), layout, placement and batch, every memory
 * and time term of its prediction, and its simulated step when recorded.
 * Nothing for a record of runs (its plans are shown beside its runs). */
void rpt_record_text_plans(FILE *f, const struct cJSON *rec);

/* A bench record: the host, the device and link figures fitted, the entry
 * made, and how many measurements of each kind it holds. */
void rpt_record_text_bench(FILE *f, const struct cJSON *rec);

#endif
