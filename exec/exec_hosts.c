/*
 * exec_hosts.c: where the ranks of a CUDA job find their GPUs, and the
 * transport between them.
 *
 * NCCL cannot hold two ranks of a communicator on one GPU
 * (exec_comm_nccl.c), so a job whose ranks share a GPU runs over MPI,
 * staged through host memory; nccl is the default where each rank has a
 * GPU of its own and the build has both NCCL and MPI.
 */
#include "exec/exec_host.h"

#include <stdio.h>
#include <string.h>

void exec_gpu_hosts_of(const plan_catalog *cat, const exec_job *j, int gpus_per_host, int emit,
                       int hostfile, int hostfile_slots, exec_gpu_hosts *g)
{
    double bytes = 0;
    exec_device_query("cuda", &g->visible, &bytes, &g->unseen);
    int nodes = j->plan_nodes > 0 ? j->plan_nodes : 1;
    const plan_instance *pi = j->plan_instance[0] ? plan_catalog_find(cat, j->plan_instance)
                                                  : NULL;
    if (gpus_per_host > 0)
        g->gpus = gpus_per_host;
    else if (emit && pi)
        g->gpus = pi->gpus_per_node;
    else
        g->gpus = g->visible;
    if (emit)
        g->ranks_per_host = (j->ranks + nodes - 1) / nodes;
    else if (hostfile)
        g->ranks_per_host = hostfile_slots > 0 && hostfile_slots < j->ranks ? hostfile_slots
                                                                            : j->ranks;
    else
        g->ranks_per_host = j->ranks;
}

int exec_transport_choose(const exec_gpu_hosts *g, int cuda, const char *asked, char *out,
                          size_t n, st_err *err)
{
    if (!cuda) {
        snprintf(out, n, "mpi");
        return ST_OK;
    }
    int own = g->ranks_per_host <= g->gpus;
    int nccl = exec_features_built().nccl && exec_features_built().mpi;
    if (!asked[0]) {
        snprintf(out, n, "%s", own && nccl ? "nccl" : "mpi");
        return ST_OK;
    }
    if (!strcmp(asked, "nccl") && !nccl)
        return ST_RAISE(err, ST_EINVAL, "--transport nccl: this build has no NCCL transport "
                        "(build features: %s); use --transport mpi", exec_features_str());
    if (!strcmp(asked, "nccl") && !own)
        return ST_RAISE(err, ST_EINVAL, "--transport nccl: %d ranks per host on %d GPU%s would "
                        "share a GPU, and one GPU cannot hold two ranks of an NCCL communicator; "
                        "use --transport mpi (staged through host memory) or --gpus-per-host",
                        g->ranks_per_host, g->gpus, g->gpus == 1 ? "" : "s");
    snprintf(out, n, "%s", asked);
    return ST_OK;
}
