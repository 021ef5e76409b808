/*
 * test_plan_cal_summary.c: a calibration report read
 * (planner/plan_cal_summary.h).
 *
 * A report of four groups: one fitted with a parameter on a bound, one
 * fitted with a bound but rejected, one pooled (not fitted) whose bound
 * bit must not count, and one fitted with an undetermined parameter. Only
 * the first group's bound counts; a parameter that is undetermined reads
 * as such even when its fitted bit is set. The chip check accepts a
 * catalog chip in any case and names an unknown one.
 */
#include "test_util.h"

#include <string.h>

#include "planner/plan_cal_summary.h"

static void outcomes(void **state)
{
    (void)state;
    plan_cal_group g = {0};
    g.asked = (1u << PLAN_EFF__COUNT) - 1;
    g.fitted = 1u << 0 | 1u << 1 | 1u << 2;
    g.on_bound = 1u << 1;
    g.undetermined = 1u << 2 | 1u << 3;
    assert_int_equal(plan_cal_param_outcome(&g, (plan_eff_param)0), PLAN_CAL_FITTED);
    assert_int_equal(plan_cal_param_outcome(&g, (plan_eff_param)1), PLAN_CAL_ON_BOUND);
    assert_int_equal(plan_cal_param_outcome(&g, (plan_eff_param)2), PLAN_CAL_UNDETERMINED);
    assert_int_equal(plan_cal_param_outcome(&g, (plan_eff_param)3), PLAN_CAL_UNDETERMINED);
    assert_int_equal(plan_cal_param_outcome(&g, (plan_eff_param)4), PLAN_CAL_KEPT);
    assert_string_equal(plan_cal_outcome_text(PLAN_CAL_KEPT), "kept");
    assert_string_equal(plan_cal_outcome_text(PLAN_CAL_ON_BOUND),
                        "ON A BOUND: a failure of the model");
}

static void bounds(void **state)
{
    (void)state;
    static plan_cal_report rep;
    memset(&rep, 0, sizeof rep);
    rep.ngroups = 4;
    plan_cal_group *ok = &rep.group[0], *rejected = &rep.group[1], *pooled = &rep.group[2];
    ok->asked = ok->fitted = 1u << 0 | 1u << 3;
    ok->on_bound = 1u << 0 | 1u << 3;
    rejected->asked = rejected->fitted = rejected->on_bound = 1u << 1;
    rejected->rejected = 1;
    pooled->on_bound = 1u << 2;
    pooled->pooled = 1;
    rep.group[3].asked = rep.group[3].fitted = 1u << 4;
    rep.group[3].undetermined = 1u << 4;
    unsigned params = 0;
    assert_int_equal(plan_cal_report_bounds(&rep, &params), 2);
    assert_int_equal(params, 1u << 0 | 1u << 3);
    ok->asked = 1u << 0; /* a bound of a parameter not asked is shown, not counted */
    assert_int_equal(plan_cal_report_bounds(&rep, NULL), 1);
    rep.ngroups = 0;
    assert_int_equal(plan_cal_report_bounds(&rep, &params), 0);
    assert_int_equal(params, 0u);
}

static void silicon(void **state)
{
    (void)state;
    plan_gpu gpus[2] = {0};
    snprintf(gpus[0].silicon, sizeof gpus[0].silicon, "GA100");
    snprintf(gpus[1].silicon, sizeof gpus[1].silicon, "GH100");
    plan_catalog cat = {0};
    cat.gpus = gpus;
    cat.ngpus = 2;
    st_err err = {0};
    assert_int_equal(plan_cal_silicon_check(&cat, "gh100", &err), ST_OK);
    assert_int_equal(plan_cal_silicon_check(&cat, "GB200", &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--gpu 'GB200': not a chip of the catalog"));
}

TEST_MAIN((void)0,
          cmocka_unit_test(outcomes),
          cmocka_unit_test(bounds),
          cmocka_unit_test(silicon))
