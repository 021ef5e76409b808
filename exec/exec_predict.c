/*
 * exec_predict.c: the planner's prediction and the simulator's step of the
 * job smdplan exec runs, on the catalog entry of the host it runs on (or
 * of its GPUs), recorded beside the measured run.
 *
 * The CPU device is predicted on the entry smdplan bench writes for this
 * host (its measured sgemm rate and links, one device slot per rank) with
 * the smdplan profile; the CUDA device on an instance type of its GPU with
 * the smdplan-cuda profile in bf16. A layout the planner rejects, more
 * ranks than device slots, or ranks sharing a GPU get no prediction and a
 * note that says why, never an error: the run is measured all the same.
 */
#include "exec/exec_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "exec/exec_layout.h"
#include "planner/plan_framework.h"
#include "sim/sim.h"


/* The simulated step of l (sim's defaults), as smdplan plan simulates a
 * plan. */
static int simulate(const plan_model *m, const plan_cluster *c, const plan_layout *l,
                    sim_result *out, st_err *err)
{
    sim_config cfg;
    sim_config_default(&cfg);
    return sim_layout_run(m, c, l, &cfg, out, err);
}

/* The planner's estimate and the simulator's step of the job's layout on
 * h->cluster (its entry set), with the device's profile's efficiencies. */
static void predict_layout(const plan_catalog *cat, const exec_job *j, int cuda, exec_pred *h)
{
    st_err err = {0};
    plan_cluster_use_framework(cat, exec_layout_profile(cuda), &h->cluster);
    plan_terms *none = NULL;
    if (plan_evaluate(&j->model, &h->cluster, &j->layout, &h->est, none, &err) != ST_OK) {
        text_setf(h->note, sizeof h->note, "prediction: %s", err.msg);
        return;
    }
    if (h->est.reject != PLAN_OK && h->est.reject != PLAN_REJ_OOM) {
        char why[200];
        snprintf(h->note, sizeof h->note, "the planner rejects the layout on %s: %s", h->type,
                 plan_estimate_reason(&h->est, why, sizeof why));
        return;
    }
    h->have_est = h->est.time.step_s > 0;
    if (!h->have_est) {
        char why[200];
        snprintf(h->note, sizeof h->note, "no predicted time: %s",
                 plan_estimate_reason(&h->est, why, sizeof why));
        return;
    }
    sim_result sr;
    if (simulate(&j->model, &h->cluster, &j->layout, &sr, &err) == ST_OK) {
        h->simulated_s = sr.step_s;
        sim_result_fini(&sr);
    } else {
        text_setf(h->note, sizeof h->note, "simulation: %s", err.msg);
    }
}

void exec_predict_host(const plan_catalog *cat, const exec_job *j, exec_pred *h)
{
    const plan_instance *in = plan_catalog_find(cat, h->type);
    if (!in) {
        snprintf(h->note, sizeof h->note,
                 "no catalog entry %s for this host: no prediction (smdplan bench --write-catalog "
                 "FILE, then --catalog FILE)", h->type);
        return;
    }
    st_err err = {0};
    if (plan_cluster_make(cat, in, 1, &h->cluster, &err) != ST_OK) {
        text_setf(h->note, sizeof h->note, "catalog entry %s: %s", h->type, err.msg);
        return;
    }
    h->have_entry = 1;
    h->peak_flops_per_rank = h->cluster.gpu->peak_flops;
    h->peak_devices = j->ranks;
    if (j->ranks > in->gpus_per_node) {
        snprintf(h->note, sizeof h->note,
                 "%d ranks on %s's %d device slots (cores / threads per rank): oversubscribed, "
                 "no prediction", j->ranks, h->type, in->gpus_per_node);
        return;
    }
    h->cluster.gpus = j->ranks;
    predict_layout(cat, j, 0, h);
}

const plan_instance *exec_pred_own_gpu(const plan_catalog *cat, int gi, const char *name,
                                       int gpus_used, exec_pred *h)
{
    const plan_instance *in = NULL;
    for (int i = 0; gi >= 0 && i < cat->ninstances && !in; i++)
        if (cat->instances[i].gpu_index == gi)
            in = &cat->instances[i];
    if (!in)
        return NULL;
    int visible = exec_device_count("cuda");
    h->own = *in;
    snprintf(h->own.name, sizeof h->own.name, "%.47s", name);
    h->own.naliases = 0;
    h->own.gpus_per_node = visible > gpus_used ? visible : gpus_used;
    h->own.price_per_hour = 0;
    snprintf(h->own.source, sizeof h->own.source, "this host: %d x %s as CUDA sees them; "
             "links of %s", h->own.gpus_per_node, cat->gpus[gi].name, in->name);
    return &h->own;
}

void exec_predict_gpu(const plan_catalog *cat, const plan_instance *in, const exec_job *j,
                      int gpus_used, exec_pred *h)
{
    snprintf(h->type, sizeof h->type, "%s", in->name);
    int per = in->gpus_per_node > 0 ? in->gpus_per_node : 1;
    st_err err = {0};
    if (plan_cluster_make(cat, in, (j->ranks + per - 1) / per, &h->cluster, &err) != ST_OK) {
        text_setf(h->note, sizeof h->note, "catalog entry %s: %s", h->type, err.msg);
        return;
    }
    h->have_entry = 1;
    h->peak_flops_per_rank = h->cluster.gpu->peak_flops;
    h->peak_devices = gpus_used < j->ranks ? gpus_used : j->ranks;
    h->cluster.gpus = j->ranks; /* the recorded plan's GPUs: one per rank, as its layout */
    if (gpus_used < j->ranks) {
        snprintf(h->note, sizeof h->note, "%d ranks share %d GPU%s: the planner predicts one GPU "
                 "per rank, no prediction", j->ranks, gpus_used, gpus_used == 1 ? "" : "s");
        return;
    }
    predict_layout(cat, j, 1, h);
}
