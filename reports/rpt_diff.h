/*
 * rpt_diff.h: the text of `smdplan diff`: the two plans' model, cluster and
 * layouts, a table of every memory term of the worst stage (GiB, 2^30
 * bytes) and every time term of the step (seconds) with B - A, each step's
 * error band, throughput, MFU and cost, then the paragraph on what makes
 * the difference (plan_diff_explain) and the bands' bases.
 *
 * Text is wrapped and the table fitted to the terminal (rpt_table.h). Both
 * sides are borrowed for the call.
 */
#ifndef SMD_RPT_DIFF_H
#define SMD_RPT_DIFF_H

#include <stdio.h>

#include "planner/plan_diff_plan.h"

/* Sides a and b, each named "A" or "B" in the text (and by its record when
 * its name is not "A" or "B"). */
void rpt_diff_text(FILE *f, const plan_diff_plan *a, const plan_diff_plan *b);

#endif
