/*
 * plan_request_model.c: the model a plan request names (see
 * plan_request_model.h).
 */
#include "planner/plan_request_model.h"

#include "common/units.h"

int plan_request_model(const plan_model_request *q, const plan_presets *presets, plan_model *m,
                       st_err *err)
{
    plan_arch arch;
    int rc = plan_request_arch(q->arch, q->family, &arch, err);
    if (rc)
        return rc;
    if (q->file) {
        rc = q->load(q->file, m, err);
    } else if (q->params) {
        double p;
        if ((rc = units_parse_count(q->params, "--params", &p, err)))
            return rc;
        rc = plan_model_resolve(presets, p, arch, q->family, m, err);
    } else if (q->ov.layers && q->ov.hidden && q->ov.heads) {
        plan_request_custom_model(arch, m);
    } else {
        return ST_RAISE(err, ST_EINVAL,
                        "no model: give --params SIZE (e.g. 30B), --model config.json, or "
                        "--layers, --hidden and --heads");
    }
    if (rc)
        return rc;
    return plan_request_override(m, &q->ov, q->params || q->file, err);
}
