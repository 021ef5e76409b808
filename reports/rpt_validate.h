/*
 * rpt_validate.h: the text of `smdplan validate`: one row per published run
 * (the planner's predicted step and memory beside the measured ones, and
 * the simulator's step when it played the rows out), how each row was
 * read, the errors per source and overall, and whether the goal was met;
 * and --explain's account of one row.
 *
 * Errors are 100 (predicted - reference) / reference; memory is shown in
 * GiB (2^30 bytes), the worst pipeline stage; times in seconds. Tables fit
 * the terminal (rpt_table.h). Every argument is borrowed for the call.
 */
#ifndef SMD_RPT_VALIDATE_H
#define SMD_RPT_VALIDATE_H

#include <stdio.h>

#include "planner/plan.h"
#include "planner/plan_validate.h"

/* "validate: FILE, N rows", the table of the n results v (with the
 * simulated step sim_s[i] of each when sim_s is not NULL; 0: none), the
 * simulated errors over the scored rows when there are any, then the table
 * of sum per source and overall and the goal's verdict. */
void rpt_validate_text(FILE *f, const char *file, const plan_validate_result *v,
                       const double *sim_s, int n, const plan_validate_summary *sum);

/* --explain's head: row r's source, model, framework, cluster, time against
 * its reference (or why it was not compared) and how it was read. */
void rpt_validate_explain(FILE *f, const plan_validate_result *r);

#endif
