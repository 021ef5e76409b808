/*
 * plan_preset_cmp.h: what a preset that publishes the layout it was trained
 * with adds to a plan (SageMaker model parallel's best-practices reference
 * configurations, data/models.json "reference"): the default global batch
 * its training script implies, and its layout evaluated on the plan's
 * cluster beside the plan ranked #1, with one sentence on why they differ.
 *
 * Pure: no files, no output but the caller's buffers; every argument is
 * borrowed for the call. Memory in the sentences is GiB (2^30 bytes), time
 * seconds per step.
 */
#ifndef SMD_PLAN_PRESET_CMP_H
#define SMD_PLAN_PRESET_CMP_H

#include <stddef.h>
#include <stdint.h>

#include "planner/plan.h"

/* The preset of presets that m is, when that preset publishes a layout and
 * m's shape is the published one (a shape changed on the command line is
 * another model); NULL otherwise. */
const plan_preset *plan_preset_of(const plan_presets *presets, const plan_model *m);

/* The global batch (sequences) p's training script used on its published
 * cluster (p->ref.instances, parsed with cat), into *global, and one
 * sentence on where it comes from into src (n bytes). With prescaled_batch
 * the script's batch_size is per model-parallel group and the global batch
 * is rdp_size times it (SMP parameters, sagemaker-python-sdk
 * smd_model_parallel_general.rst, Prescaled Batch), rdp_size = GPUs / (tp x
 * pp); without, it is per rank and tp times more. ST_EINVAL when tp x pp
 * does not divide the published cluster's GPUs, plan_cluster_parse's
 * status for a cluster it does not know. */
int plan_preset_batch(const plan_catalog *cat, const plan_preset *p, int64_t *global, char *src,
                      size_t n, st_err *err);

enum { PLAN_PRESET_FITS = 0, PLAN_PRESET_OOM, PLAN_PRESET_UNPLACEABLE };

/* The preset's layout beside the plan ranked #1. */
typedef struct plan_preset_cmp {
    int shown;                   /* 0: no preset layout to compare */
    const plan_preset *preset;   /* borrowed from the caller's presets */
    int status;                  /* PLAN_PRESET_*: evaluated and fits, evaluated and out
                                  * of memory, or not evaluated (why says why) */
    plan_candidate ref;          /* the reference evaluated on the plan's cluster */
    char why[1024];              /* why ours differs; with no SMP run fitted, it says
                                  * so: the difference is the model's */
    int smp_fitted;              /* the efficiencies in force were fitted to SMP runs */
} plan_preset_cmp;

/* Evaluate preset p's layout (NULL: nothing to compare) on cluster c with
 * base's stack, precision and behaviour and r's global batch, and say why
 * r->top[0] differs. out->shown is 0 when p is NULL or r has no plan.
 * ST_ENOMEM only; a layout that cannot be evaluated is a result
 * (PLAN_PRESET_UNPLACEABLE with the reason in why). */
int plan_preset_compare(const plan_preset *p, const plan_model *m, const plan_cluster *c,
                        const plan_config *base, const plan_result *r, plan_preset_cmp *out,
                        st_err *err);

#endif
