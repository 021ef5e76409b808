/*
 * exec_here.c: the catalog entry a cuda run of smdplan exec is predicted
 * on, and the sbatch script of its job (exec_here.h), from the values the
 * command finds on this host.
 */
#include "exec/exec_here.h"

#include <stdio.h>
#include <string.h>

void exec_here_predict_gpu(const plan_catalog *cat, const exec_here_gpu *w, const exec_job *j,
                           exec_pred *h)
{
    memset(h, 0, sizeof *h);
    const plan_instance *in = NULL;
    if (w->host_type)
        in = plan_catalog_find(cat, w->host_type);
    else if (w->plan_inst)
        in = w->plan_inst;
    else if ((in = plan_catalog_find(cat, w->own_name)) != NULL) {
        /* smdplan bench gpu's measured entry of this host */
    } else if (w->device_desc && *w->device_desc) {
        in = exec_pred_own_gpu(cat, w->device_gpu, w->own_name, w->gpus_used, h);
        if (!in) {
            snprintf(h->note, sizeof h->note, "no catalog GPU for the device \"%.120s\": no "
                     "prediction and no MFU (give --host TYPE, or add the GPU with --catalog)",
                     w->device_desc);
            return;
        }
    } else {
        snprintf(h->note, sizeof h->note, "the GPU is named by the run: predicted after it");
        return;
    }
    exec_predict_gpu(cat, in, j, w->gpus_used, h);
}

char *exec_here_slurm_script(const exec_here_slurm *s, st_err *err)
{
    const exec_job *j = s->j;
    const launch_cmd *c = s->cmd;
    const exec_gpu_hosts *g = s->gpus;
    const char *rank = EXEC_RANK_PROGRAM;
    for (int i = 1; i < c->argc; i++)
        if (!strcmp(c->argv[i], "--config")) /* the rank program's path is argv[i - 1] */
            rank = c->argv[i - 1];
    launch_slurm ls = {
        .model_name = j->model.name, .layout = &j->layout, .ranks = j->ranks,
        .plan_nodes = j->plan_nodes, .plan_instance = j->plan_instance, .scaled = j->scaled,
        .threads = s->threads > 0 ? s->threads : 1,
        .gpus_per_node = g ? (g->ranks_per_host < g->gpus ? g->ranks_per_host : g->gpus) : 0,
        .timeout_s = s->timeout_s, .runs_dir = EXEC_RUNS_DIR, .config_text = s->config_text,
        .rank_program = rank, .smdplan = s->smdplan, .cwd = s->cwd, .run_args = s->run_args,
        .nrun_args = s->nrun_args,
    };
    return launch_slurm_script(&ls, err);
}
