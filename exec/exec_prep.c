/*
 * exec_prep.c: a run of smdplan exec prepared (exec_prep.h): the job as the
 * executor runs it, the GPUs and the transport between its ranks, its
 * CONFIG.json, its run directory and launch command, and what is checked,
 * predicted and made before it launches. Nothing here prints; nothing is
 * written before exec_prep_ready, and then only the run directory and its
 * CONFIG.json.
 *
 * Order matters for what a person is told: the options' own errors come
 * first (exec_request_check), then the job's (its layout, its GPUs, the
 * model under --scale), then CONFIG.json's as the rank program would read
 * it, then the backends the ranks would open, then the run directory of an
 * import; the memory check comes before the prediction (the planner and
 * the simulator on a model that cannot fit would only take time).
 */
#include "exec/exec_prep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/outfile.h"
#include "exec/exec_comm.h"
#include "exec/exec_dev.h"
#include "exec/exec_here.h"
#include "exec/exec_layout.h"

void exec_prep_init(exec_prep *p, const exec_request *r, const char *host,
                    const char *host_entry)
{
    memset(p, 0, sizeof *p);
    p->req = r;
    p->cuda = !strcmp(r->device, "cuda");
    snprintf(p->host, sizeof p->host, "%s", host);
    snprintf(p->host_entry, sizeof p->host_entry, "%s", host_entry);
    snprintf(p->transport, sizeof p->transport, "mpi");
    p->timeout_s = r->timeout_s;
    snprintf(p->limit_why, sizeof p->limit_why, "--timeout");
}

void exec_prep_free(exec_prep *p)
{
    free(p->config_text);
    free(p->cmd);
    free(p->cmd_text);
    p->config_text = NULL;
    p->cmd = NULL;
    p->cmd_text = NULL;
}

/* A cuda job's GPUs, where its ranks find them, and the transport between
 * them. */
static int job_gpus(exec_prep *p, const plan_config *cfg, st_err *err)
{
    const exec_request *r = p->req;
    exec_gpu_hosts *g = &p->gpus;
    exec_gpu_hosts_of(p->cat, &p->job, r->gpus_per_host, r->emit != NULL, r->hostfile != NULL,
                      r->hostfile_slots, g);
    int rc = exec_transport_choose(g, 1, r->transport, p->transport, sizeof p->transport, err);
    if (rc != ST_OK)
        return rc;
    /* staged through host memory, a bucket progresses only inside MPI's
     * calls: no overlap unless asked (the smdplan profile's reason) */
    if (!strcmp(p->transport, "mpi") && cfg->dp_overlap < 0)
        p->job.layout.dp_overlap = 0;
    if (r->host_type && !plan_catalog_find(p->cat, r->host_type))
        return ST_RAISE(err, ST_EINVAL, "--host %s: not an instance type of the catalog (see "
                        "smdplan catalog; add one with --catalog FILE)", r->host_type);
    if (r->emit && g->gpus == 0)
        return ST_RAISE(err, ST_EINVAL, "--emit slurm --device cuda: the GPUs of a node are not "
                        "known here (no plan cluster, none visible); give --gpus-per-host N");
    if (g->visible == 0 && !r->dry_run && !r->emit && !r->import_dir)
        return g->unseen.code
                   ? ST_RAISE(err, g->unseen.code, "%s; nothing launched", g->unseen.msg)
                   : ST_RAISE(err, ST_EINVAL, "--device cuda: CUDA sees no GPU on this host; "
                              "nothing launched (--dry-run or --emit slurm, with "
                              "--gpus-per-host N, prepare a run for another host)");
    return ST_OK;
}

int exec_prep_job(exec_prep *p, const plan_config *cfg, const plan_catalog *cat,
                  const plan_model *m, const plan_cluster *c, st_err *err)
{
    const exec_request *r = p->req;
    exec_job *j = &p->job;
    p->cat = cat;
    p->plan_inst = c ? c->inst : NULL;
    int rc = ST_OK;
    if (m && c)
        rc = exec_job_search(m, c, cfg, j, err);
    else if (m)
        rc = exec_job_from_config(m, cfg, p->cuda, j, err);
    if (rc == ST_OK)
        rc = exec_job_finish(j, p->cuda, cfg->flash_attention, err);
    if (rc == ST_OK && p->cuda)
        rc = job_gpus(p, cfg, err);
    if (rc == ST_OK && r->scale_text)
        rc = exec_model_scale(&r->scale, &j->layout, &j->model, j->scaled, sizeof j->scaled,
                              err);
    if (rc == ST_OK)
        rc = exec_model_check(&j->model, &j->layout, r->data_kind, err);
    /* the GPUs the ranks run on: theirs, or the ones they share */
    p->gpus_used = p->cuda && !r->hostfile && p->gpus.gpus < j->ranks ? p->gpus.gpus : j->ranks;
    return rc;
}

int exec_prep_config(exec_prep *p, st_err *err)
{
    const exec_request *r = p->req;
    exec_job_run run = {
        .train = &r->train, .data_kind = r->data_kind, .data_path = r->data_path,
        .save_dir = r->save_dir, .save_every = r->save_every, .resume_dir = r->resume_dir,
        .threads = r->threads, .wait_timeout_s = r->wait_timeout_s, .device = r->device,
        .transport = p->transport,
    };
    int rc = exec_job_config(&p->job, &run, &p->config_text, err);
    /* the modules the ranks will open (exec_module.h), found here without
     * loading them: one missing is one line before anything launches
     * rather than one from every rank after */
    if (rc == ST_OK && !r->dry_run && !r->emit && !r->import_dir) {
        st_err why = {0};
        if (exec_dev_present(r->device, &why) != ST_OK ||
            exec_comm_present(p->transport, &why) != ST_OK)
            rc = ST_RAISE(err, why.code, "%s; nothing launched", why.msg);
    }
    return rc;
}

int exec_prep_command(exec_prep *p, const char *rank_program, st_err *err)
{
    const exec_request *r = p->req;
    if (r->import_dir)
        exec_path_absolute(r->import_dir, p->run_dir, sizeof p->run_dir);
    else if (r->run_dir)
        snprintf(p->run_dir, sizeof p->run_dir, "%s", r->run_dir);
    else
        exec_run_dir_default(p->run_dir, sizeof p->run_dir);
    if (r->import_dir) {
        int rc = exec_import_check(p->run_dir, p->config_text, err);
        if (rc != ST_OK)
            return rc;
    }
    p->cmd = calloc(1, sizeof *p->cmd);
    p->cmd_text = malloc(LAUNCH_CMD_TEXT_MAX);
    if (!p->config_text || !p->cmd || !p->cmd_text)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    exec_job_command(&p->job, r->threads, r->hostfile,
                     rank_program[0] ? rank_program : EXEC_RANK_PROGRAM, p->run_dir, p->cmd);
    launch_cmd_line(p->cmd, p->cmd_text, LAUNCH_CMD_TEXT_MAX);
    if (p->cmd->cut) /* mpirun would be given a path cut short */
        return ST_RAISE(err, ST_EINVAL, "the launch command: an argument (--run-dir, --hostfile "
                        "or the rank program's path) is longer than %d bytes; give a shorter "
                        "path", (int)sizeof p->cmd->store[0] - 1);
    return ST_OK;
}

void exec_prep_predict(const exec_prep *p, const char *device_desc, int device_gpu,
                       exec_pred *h)
{
    const exec_request *r = p->req;
    if (!p->cuda) {
        memset(h, 0, sizeof *h);
        snprintf(h->type, sizeof h->type, "%s", r->host_type ? r->host_type : p->host_entry);
        exec_predict_host(p->cat, &p->job, h);
        return;
    }
    char own_name[sizeof p->host + 16];
    snprintf(own_name, sizeof own_name, "host-%s-cuda", p->host);
    exec_here_gpu w = {
        .host_type = r->host_type, .plan_inst = p->plan_inst, .own_name = own_name,
        .device_desc = device_desc, .device_gpu = device_gpu, .gpus_used = p->gpus_used,
    };
    exec_here_predict_gpu(p->cat, &w, &p->job, h);
}

int exec_prep_ready(exec_prep *p, exec_pred *h, st_err *err)
{
    const exec_request *r = p->req;
    const exec_job *j = &p->job;
    if (!r->import_dir) {
        /* the ranks that share what is compared: this host's (a hostfile's
         * most slots) on the CPU, one GPU's on the GPU */
        int per_host = p->cuda ? p->gpus.ranks_per_host
                       : r->hostfile_slots > 0 && r->hostfile_slots < j->ranks ? r->hostfile_slots
                                                                               : j->ranks;
        int per_gpu = p->cuda && p->gpus.gpus > 0
                          ? (p->gpus.ranks_per_host + p->gpus.gpus - 1) / p->gpus.gpus
                          : 1;
        int rc = exec_memory_check(j, p->cuda, per_host, per_gpu, err);
        if (rc != ST_OK)
            return rc;
    }
    exec_prep_predict(p, NULL, -1, h);
    if (r->import_dir) /* it has run: its directory and CONFIG.json are there */
        return ST_OK;
    if (!r->timeout_given)
        p->timeout_s = exec_default_timeout_s(j, h, r->train.steps, p->limit_why,
                                              sizeof p->limit_why);
    int rc = exec_run_dir_make(p->run_dir, err);
    if (rc != ST_OK)
        return rc;
    char path[EXEC_RUN_DIR_MAX + 32];
    snprintf(path, sizeof path, "%s/CONFIG.json", p->run_dir);
    st_err werr = {0};
    if (outfile_write(path, "run directory", p->config_text, strlen(p->config_text), 0,
                      &werr) != ST_OK) {
        /* nothing ran, so there is no run to record: the error says so, and
         * the directory made above (empty: the write left nothing) goes */
        (void)rmdir(p->run_dir);
        return ST_RAISE(err, werr.code, "%s; nothing launched or recorded", werr.msg);
    }
    return ST_OK;
}
