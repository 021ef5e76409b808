/*
 * data_json_catalog.h: a catalog as JSON in the catalog file's own schema
 * (data/catalog.json: "gpus", "instances", "curves", "efficiencies"), base
 * units (bytes, bytes/s, FLOP/s, seconds), so `smdplan catalog --json`
 * reads back as a catalog file that gives the same values.
 */
#ifndef SMD_DATA_JSON_CATALOG_H
#define SMD_DATA_JSON_CATALOG_H

#include "planner/plan.h"

struct cJSON;

/* Every GPU, instance type, bandwidth curve and fitted efficiency entry of
 * cat (borrowed), in catalog order, as one object (caller owns,
 * cJSON_Delete; NULL when out of memory; an entry that cannot be made is
 * left out). A GPU's numbers are written with 17 significant digits, so a
 * value computed rather than read (a measured file's) reads back as the
 * same double. */
struct cJSON *data_json_catalog(const plan_catalog *cat);

#endif
