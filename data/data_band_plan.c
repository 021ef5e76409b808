/*
 * data_band_plan.c: the error band of a plan's step (data_band_plan.h). The
 * bands file is read at the first call: a command asks for the band of
 * each plan it prints, and the file does not change while it runs.
 */
#include "data/data_band_plan.h"

#include <stdio.h>

#include "data/data.h"
#include "planner/plan_framework.h"

double data_band_of_plan(const plan_cluster *c, int framework, char *basis, size_t n)
{
    static data_bands bands;
    static int loaded, failed;
    static char why[300];
    if (!loaded) {
        st_err err = {0};
        loaded = 1;
        failed = data_bands_load(NULL, &bands, &err) != ST_OK;
        if (failed)
            snprintf(why, sizeof why, "no error bands: %.250s", err.msg);
    }
    if (failed) {
        snprintf(basis, n, "%s", why);
        return 0;
    }
    const char *chip = c->gpu->silicon[0] ? c->gpu->silicon : c->gpu->name;
    return data_band_of(&bands, plan_framework_get(framework)->key, chip, basis, n);
}
