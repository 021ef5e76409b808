/*
 * data_band_plan.h: the error band a plan's predicted step carries, from
 * the bands file (data/error_bands.json, data_bands_load) read once per
 * process and kept for its life.
 */
#ifndef SMD_DATA_BAND_PLAN_H
#define SMD_DATA_BAND_PLAN_H

#include <stddef.h>

#include "planner/plan.h"

/* The error band of a step predicted on cluster c for the stack of
 * framework index framework (percent of the step, data_band_of: the
 * held-out error of that stack release's runs on c's chip, else the chip
 * pool's, else the worst source held out), one sentence on its basis into
 * basis (n bytes); 0 with the reason in basis when the bands file cannot be
 * read (the first read's reason, every call after). */
double data_band_of_plan(const plan_cluster *c, int framework, char *basis, size_t n);

#endif
