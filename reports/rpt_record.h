/*
 * rpt_record.h: one recorded answer as the text of `smdplan show`.
 *
 * The record is the JSON object data/'s db_show hands over (borrowed for the
 * call; struct cJSON, so this header needs no cJSON include). The page is
 * written in parts, in the order of smdplan show; each part writes nothing
 * when the record has none of it. Numbers a record lacks (an older schema)
 * print as "nan" or "-", strings as "". Each line ends with '\n'; lines are
 * not wrapped, and the tables fit the terminal's width (rpt_table.h) when
 * printed, not when f is read.
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

/* A record's simulations: the step, bubble and bounds of each, its Monte
 * Carlo spread when recorded, and a table of its pipeline stages. */
void rpt_record_text_simulations(FILE *f, const struct cJSON *rec);

/* A record's runs as one table (measured, predicted and simulated step,
 * errors, status), with a line under a run for what else it recorded. */
void rpt_record_text_runs(FILE *f, const struct cJSON *rec);

/* A calibration record: each fit's parameters before and after, and a table
 * of every source's error fitted with and without its own runs. */
void rpt_record_text_calibrations(FILE *f, const struct cJSON *rec);

/* A bench record: the host, the device and link figures fitted, the entry
 * made, and how many measurements of each kind it holds. */
void rpt_record_text_bench(FILE *f, const struct cJSON *rec);

#endif
