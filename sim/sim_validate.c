/*
 * sim_validate.c: published runs played out by the simulator
 * (sim_validate.h), each with the default configuration (no jitter, one
 * step), so validate --sim gives the same steps on every run.
 */
#include "sim/sim_validate.h"

#include "sim/sim.h"

double sim_validate_step_s(const plan_catalog *cat, const plan_validate_result *r)
{
    if (!r->compared || !r->have_layout)
        return 0.0;
    plan_cluster c;
    st_err err = {0};
    if (plan_validate_cluster(cat, r, &c, &err) != ST_OK)
        return 0.0;
    sim_config cfg;
    sim_config_default(&cfg);
    sim_result s;
    if (sim_layout_run(&r->model, &c, &r->layout, &cfg, &s, &err) != ST_OK)
        return 0.0;
    double t = s.step_s;
    sim_result_fini(&s);
    return t;
}

void sim_validate_rows(const plan_catalog *cat, plan_validate_result *res, double *sim_s, int n,
                       sim_validate_progress_fn progress, void *ctx)
{
    for (int i = 0; i < n; i++) {
        res[i].sim_time_s = sim_s[i] = sim_validate_step_s(cat, &res[i]);
        if (progress)
            progress(ctx, i + 1, n);
    }
}
