/*
 * exec_prep_out.c: what smdplan exec shows of a prepared run before it
 * launches (exec_prep.h): a dry run's JSON (the command and the CONFIG.json
 * it would write), the sbatch script that runs it elsewhere
 * (launch/launch_slurm.c through exec_here.c), and the lines that say what
 * the run is before it starts. Text only: the caller prints or writes it.
 */
#include "exec/exec_prep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "exec/exec_here.h"

char *exec_prep_json(const exec_prep *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "command", p->cmd_text);
    cJSON_AddStringToObject(root, "run_dir", p->run_dir);
    cJSON_AddNumberToObject(root, "ranks", p->job.ranks);
    cJSON_AddStringToObject(root, "device", p->req->device);
    cJSON_AddStringToObject(root, "transport", p->transport);
    if (p->cuda) {
        cJSON_AddNumberToObject(root, "gpus_per_host", p->gpus.gpus);
        cJSON_AddNumberToObject(root, "ranks_per_host", p->gpus.ranks_per_host);
    }
    cJSON *conf = cJSON_Parse(p->config_text);
    if (conf)
        cJSON_AddItemToObject(root, "config", conf);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

char *exec_prep_slurm(const exec_prep *p, const char *smdplan, st_err *err)
{
    const exec_request *r = p->req;
    char cwd[EXEC_RUN_DIR_MAX];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    exec_here_slurm hs = {
        .j = &p->job, .cmd = p->cmd, .config_text = p->config_text,
        .gpus = p->cuda ? &p->gpus : NULL, .threads = r->threads, .timeout_s = r->timeout_s,
        .smdplan = smdplan, .cwd = cwd, .run_args = r->run_args, .nrun_args = r->nrun_args,
    };
    return exec_here_slurm_script(&hs, err);
}

static void print_layout(FILE *f, const plan_layout *l, int ranks)
{
    fprintf(f, "layout:  tp %d, pp %d, dp %d (%d ranks), micro-batch %d x %d microbatches, %s",
            l->tp, l->pp, l->dp, ranks, l->micro_batch, l->microbatches,
            plan_layout_schedule_label(l));
    if (l->schedule == PLAN_SCHED_VIRTUAL)
        fprintf(f, " x %d virtual stages", l->virtual_stages);
    fprintf(f, ", recompute %s, sharding %s%s, placement %s\n", plan_recompute_name(l->recompute),
            plan_sharding_name(l->sharding), l->sequence_parallel ? ", sequence parallel" : "",
            l->placement);
}

void exec_prep_print_start(FILE *f, const exec_prep *p, const exec_pred *h)
{
    const exec_job *j = &p->job;
    const exec_request *r = p->req;
    if (j->scaled[0])
        fprintf(f, "scaled:  %s (from %s)\n", j->scaled, j->model_full.name);
    fprintf(f, "from:    %s\n", j->source);
    print_layout(f, &j->layout, j->ranks);
    if (p->cuda)
        fprintf(f, "device:  cuda (bf16, fp32 master weights)%s over %s%s, %d GPU%s\n",
                j->layout.flash_attention ? ", fused attention" : "", p->transport,
                !strcmp(p->transport, "mpi") ? " (staged through host memory)" : "",
                p->gpus_used, p->gpus_used == 1 ? "" : "s");
    if (h->have_est)
        fprintf(f, "predicted on %s: %.4f s/step, simulated %.4f s/step\n", h->type,
                h->est.time.step_s, h->simulated_s);
    else
        fprintf(f, "note:    %s\n", h->note);
    if (r->import_dir)
        fprintf(f, "import:  %s (run by another launcher, exit status %d)\n", p->run_dir,
                r->exit_status);
    else
        fprintf(f, "run:     %s\n", p->cmd_text);
    if (!r->import_dir && p->timeout_s > 0)
        fprintf(f, "limit:   %.0f s (%s)\n", p->timeout_s, p->limit_why);
}
