/*
 * data_plan_json.h: a plan's answer as the JSON of `smdplan --json` and
 * `smdplan simulate --json`: the ranked plans with their memory and time
 * terms, the error band of their steps, the rejected layouts, --explain's
 * terms, a preset's reference layout beside plan #1 and a simulation. Field
 * names are stable and carry their units (_bytes, _s); bytes are whole
 * numbers (data_json.h).
 *
 * Every function returns a new object the caller owns (cJSON_Delete), NULL
 * when out of memory; its arguments are borrowed for the call.
 */
#ifndef SMD_DATA_PLAN_JSON_H
#define SMD_DATA_PLAN_JSON_H

#include "planner/plan.h"
#include "planner/plan_preset_cmp.h"
#include "sim/sim.h"
#include "sim/sim_plans.h"

struct cJSON;

/* One plan: its layout by the planner's field table, its memory per GPU by
 * term, its stages, its step time by term, throughput, MFU, cost, and why
 * it was rejected when it was. */
struct cJSON *data_json_plan(const plan_candidate *c);

/* --explain's terms as an array, each with group, name, value, unit,
 * formula and source. */
struct cJSON *data_json_terms(const plan_terms *t);

/* A preset's reference layout beside plan #1 (plan_preset_cmp.h); NULL
 * when p->shown is 0. */
struct cJSON *data_json_preset_cmp(const plan_preset_cmp *p);

/* A simulation's figures: the step, the planner's, the pipeline span, the
 * Monte Carlo quantiles, bounds, bubbles per stage and the critical path. */
struct cJSON *data_json_sim(const sim_result *r);

/* What the document of a search is made of. */
typedef struct data_plan_doc {
    const char *command_line;
    const plan_model *m;
    const plan_cluster *c;
    const plan_result *r;
    int min_nodes;               /* with no plan: the fewest instances that fit, 0 none */
    const sim_top_steps *sim;    /* the top plans' simulated steps; NULL: not simulated */
    plan_objective objective;
    const char *batch_source;    /* where a global batch not defaulted came from; NULL */
    const char *price_list;      /* the prices' source, one phrase */
    double band_pct;             /* the error band of plan #1's step, percent (read when
                                  * r has a plan) */
    const char *band_basis;      /* ... and one sentence on its basis */
    double train_tokens;         /* > 0: the time and cost of training them with #1 */
    const struct cJSON *extra;   /* objects added under their names, copied (NULL: none) */
} data_plan_doc;

/* The document of `smdplan --json`: the tool's version, the command line,
 * the model and cluster, the batch, the search's counts, the error band,
 * the plans (each with its simulated step and step range), the training
 * time, the rejected layouts by reason, the closest layout out of memory
 * when none fits, then d->extra's objects. */
struct cJSON *data_json_plan_doc(const data_plan_doc *d);

/* The document of `smdplan simulate --json`: data_json_sim's figures with
 * the model, the plan simulated, the cluster and the seed. */
struct cJSON *data_json_simulation(const sim_result *r, const plan_model *m,
                                   const plan_cluster *c, const plan_candidate *plan,
                                   uint64_t seed);

#endif
