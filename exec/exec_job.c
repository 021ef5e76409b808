/*
 * exec_job.c: the job smdplan exec runs, a model and a layout as the
 * executor runs them (exec_layout.h), from the planner's search on a
 * cluster or from the layout options alone on this host (a recorded plan's
 * is read from the database by the caller), then made the executor's own:
 * the device's profile, no dropout, its ranks, the knobs it does not run
 * refused. And what launches it: its CONFIG.json (the contract with the
 * rank program, exec.h) and its mpirun command (launch/launch_mpirun.c).
 */
#include "exec/exec_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec_layout.h"

int exec_job_search(const plan_model *m, const plan_cluster *c, const plan_config *cfg,
                    exec_job *j, st_err *err)
{
    /* the planner's search on the cluster named, as smdplan plan runs it */
    j->model_full = *m;
    plan_result *res = calloc(1, sizeof *res);
    if (!res)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    int rc = plan_search(m, c, cfg, res, err);
    if (rc == ST_OK && res->ntop == 0)
        rc = ST_RAISE(err, ST_EINFEASIBLE, "the model fits on no layout of %d x %s (see "
                      "smdplan plan with the same flags)", c->nodes, c->inst->name);
    if (rc == ST_OK) {
        j->layout = res->top[0].layout;
        j->plan_nodes = c->nodes;
        j->plan_gpus = c->gpus;
        snprintf(j->plan_instance, sizeof j->plan_instance, "%s", c->inst->name);
        snprintf(j->source, sizeof j->source, "the planner's best layout on %d x %s", c->nodes,
                 c->inst->name);
    }
    free(res);
    return rc;
}

int exec_job_from_config(const plan_model *m, const plan_config *cfg, int cuda, exec_job *j,
                         st_err *err)
{
    j->model_full = *m;
    int rc = exec_layout_from_config(cfg, cuda, &j->layout, err);
    snprintf(j->source, sizeof j->source, "the layout flags on this host");
    return rc;
}

int exec_job_finish(exec_job *j, int cuda, int flash, st_err *err)
{
    exec_layout_apply(&j->layout, cuda, flash);
    j->model = j->model_full;
    j->model.dropout = PLAN_DROPOUT_OFF; /* the executor trains without dropout */
    j->ranks = j->layout.tp * j->layout.pp * j->layout.dp * j->layout.cp;
    return exec_layout_check(&j->layout, cuda, err);
}

int exec_job_config(const exec_job *j, const exec_job_run *r, char **text, st_err *err)
{
    *text = NULL;
    exec_config *cfg = calloc(2, sizeof *cfg);
    if (!cfg)
        return ST_RAISE(err, ST_ENOMEM, "out of memory");
    exec_config_default(&cfg[0]);
    cfg[0].model = j->model;
    cfg[0].layout = j->layout;
    cfg[0].train = *r->train;
    for (int k = 0; k < EXEC_DATA__COUNT; k++)
        if (!strcmp(exec_data_kind_name((exec_data_kind)k), r->data_kind))
            cfg[0].data_kind = (exec_data_kind)k;
    exec_path_absolute(r->data_path, cfg[0].data_path, sizeof cfg[0].data_path);
    cfg[0].threads_per_rank = r->threads;
    exec_path_absolute(r->save_dir, cfg[0].save_dir, sizeof cfg[0].save_dir);
    cfg[0].save_every = r->save_every;
    exec_path_absolute(r->resume_dir, cfg[0].resume_dir, sizeof cfg[0].resume_dir);
    cfg[0].timeout_s = r->wait_timeout_s;
    cfg[0].progress = 1;
    snprintf(cfg[0].device, sizeof cfg[0].device, "%s", r->device);
    snprintf(cfg[0].transport, sizeof cfg[0].transport, "%s", r->transport);
    *text = exec_config_json(&cfg[0]);
    int rc = *text ? exec_config_parse(*text, &cfg[1], err)
                   : ST_RAISE(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK)
        rc = exec_config_check(&cfg[1], j->ranks, err);
    free(cfg);
    return rc;
}

static int online_cores(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

void exec_job_command(const exec_job *j, int threads, const char *hostfile,
                      const char *rank_program, const char *run_dir, launch_cmd *c)
{
    launch_mpirun m = {
        .ranks = j->ranks, .threads = threads, .cores = online_cores(), .hostfile = hostfile,
        .rank_program = rank_program, .run_dir = run_dir,
        /* Open MPI refuses root without both */
        .allow_root = geteuid() == 0 && !getenv("OMPI_ALLOW_RUN_AS_ROOT"),
        .allow_root_confirm = geteuid() == 0 && !getenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"),
    };
    launch_mpirun_cmd(&m, c);
}
