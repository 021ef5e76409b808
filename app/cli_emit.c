/*
 * cli_emit.c: `--emit sagemaker` prints the SageMaker estimator settings of
 * the best plan (the `distribution` dict with smdistributed.modelparallel
 * parameters and the mpi options, in the form the SageMaker model-parallel
 * documentation shows); `--emit mpirun` prints the equivalent launch line
 * for running the same script under plain Open MPI.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "app/cli_int.h"

/* SMP v1's pipeline parameter knows "simple" and "interleaved" only. */
static const char *smp_pipeline(const plan_layout *l)
{
    return l->schedule == PLAN_SCHED_SIMPLE ? "simple" : "interleaved";
}

static const char *smp_placement(const plan_layout *l)
{
    if (!strcmp(l->placement, "DPT"))
        return "cluster";
    if (!strcmp(l->placement, "TPD"))
        return "spread";
    return l->placement;
}

/* EFA instance types want the EFA provider options (SageMaker docs). */
static int uses_efa(const plan_cluster *c)
{
    return strstr(c->inst->net_curve, "efa") != NULL;
}

/* Print the smdistributed.modelparallel "parameters" dict body. */
static void smp_params(FILE *f, const plan_layout *l, const char *ind, int json)
{
    const char *T = json ? "true" : "True";
    fprintf(f, "%s\"partitions\": %d,\n", ind, l->pp);
    fprintf(f, "%s\"tensor_parallel_degree\": %d,\n", ind, l->tp);
    fprintf(f, "%s\"microbatches\": %d,\n", ind, l->microbatches);
    fprintf(f, "%s\"active_microbatches\": %d,\n", ind, l->active_microbatches);
    fprintf(f, "%s\"pipeline\": \"%s\",\n", ind, smp_pipeline(l));
    fprintf(f, "%s\"placement_strategy\": \"%s\",\n", ind, smp_placement(l));
    if (l->prescaled_batch)
        fprintf(f, "%s\"prescaled_batch\": %s,\n", ind, T);
    if (l->sharding == PLAN_SHARD_OPTIMIZER || l->sharding == PLAN_SHARD_GRADIENTS)
        fprintf(f, "%s\"shard_optimizer_state\": %s,\n", ind, T);
    if (l->sharding == PLAN_SHARD_PARAMS)
        fprintf(f, "%s\"sharded_data_parallel_degree\": %d,\n", ind, l->dp);
    if (l->offload_activations)
        fprintf(f, "%s\"offload_activations\": %s,\n", ind, T);
    fprintf(f, "%s\"optimize\": \"speed\",\n", ind);
    fprintf(f, "%s\"bf16\": %s,\n", ind, T);
    fprintf(f, "%s\"ddp\": %s", ind, T);
}

static int emit_sagemaker(FILE *f, const plan_model *m, const plan_cluster *c,
                          const plan_candidate *best, st_err *err)
{
    const plan_layout *l = &best->layout;
    if (!strchr(c->inst->name, '.'))
        return ST_RAISE(err, ST_EINVAL,
                        "--emit sagemaker: '%s' is not a SageMaker instance type (ml.p4d.24xlarge, ...)",
                        c->inst->name);
    int64_t smp_batch = l->global_batch / l->dp; /* per model-parallel group */
    if (!l->prescaled_batch)
        smp_batch /= l->tp;
    fprintf(f, "# SageMaker estimator settings for %s on %d x ml.%s (smdplan plan #1)\n", m->name,
            c->nodes, c->inst->name);
    if (l->schedule == PLAN_SCHED_VIRTUAL || l->schedule == PLAN_SCHED_ZB_H1)
        fprintf(f, "# note: the plan's %s schedule is not an SMP option; SMP's interleaved is set\n",
                plan_schedule_name(l->schedule));
    if (l->sequence_parallel)
        fprintf(f, "# note: sequence parallelism is assumed on with tensor parallelism\n");
    if (l->recompute != PLAN_RECOMP_NONE)
        fprintf(f, "# activation checkpointing (%s%s): call smp.set_activation_checkpointing on each "
                   "transformer layer%s in the training script\n",
                plan_recompute_name(l->recompute),
                l->recompute == PLAN_RECOMP_FULL ? "" : ", attention only",
                l->recompute_group > 1 ? " group (strategy 'group_k')" : "");
    fprintf(f, "# training script batch size (per model-parallel group%s): %lld\n",
            l->prescaled_batch ? ", prescaled" : " rank", (long long)smp_batch);
    fprintf(f, "instance_type = \"ml.%s\"\n", c->inst->name);
    fprintf(f, "instance_count = %d\n", c->nodes);
    fprintf(f, "distribution = {\n");
    fprintf(f, "    \"smdistributed\": {\n");
    fprintf(f, "        \"modelparallel\": {\n");
    fprintf(f, "            \"enabled\": True,\n");
    fprintf(f, "            \"parameters\": {\n");
    smp_params(f, l, "                ", 0);
    fprintf(f, "\n            },\n");
    fprintf(f, "        }\n");
    fprintf(f, "    },\n");
    fprintf(f, "    \"mpi\": {\n");
    fprintf(f, "        \"enabled\": True,\n");
    fprintf(f, "        \"processes_per_host\": %d,\n", c->inst->gpus_per_node);
    if (uses_efa(c))
        fprintf(f, "        \"custom_mpi_options\": \"-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa "
                   "-x RDMAV_FORK_SAFE=1\",\n");
    fprintf(f, "    },\n");
    fprintf(f, "}\n");
    return ST_OK;
}

static int emit_mpirun(FILE *f, const plan_model *m, const plan_cluster *c,
                       const plan_candidate *best)
{
    const plan_layout *l = &best->layout;
    fprintf(f, "# launch of an smdistributed.modelparallel script for %s on %d x %s (plan #1);\n",
            m->name, c->nodes, c->inst->name);
    fprintf(f, "# hosts: a hostfile with %d lines of 'HOST slots=%d'\n", c->nodes,
            c->inst->gpus_per_node);
    fprintf(f, "mpirun -np %d --npernode %d --hostfile hostfile --bind-to none \\\n", c->gpus,
            c->inst->gpus_per_node);
    fprintf(f, "  --mca btl_vader_single_copy_mechanism none \\\n");
    if (uses_efa(c))
        fprintf(f, "  -x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x RDMAV_FORK_SAFE=1 \\\n");
    fprintf(f, "  -x NCCL_DEBUG=WARN -x LD_LIBRARY_PATH -x PATH \\\n");
    fprintf(f, "  -x SM_HP_MP_PARAMETERS='{");
    fprintf(f, "\"partitions\": %d, \"tensor_parallel_degree\": %d, \"microbatches\": %d, "
               "\"active_microbatches\": %d, \"pipeline\": \"%s\", \"placement_strategy\": \"%s\"",
            l->pp, l->tp, l->microbatches, l->active_microbatches, smp_pipeline(l), smp_placement(l));
    if (l->prescaled_batch)
        fprintf(f, ", \"prescaled_batch\": true");
    if (l->sharding == PLAN_SHARD_OPTIMIZER || l->sharding == PLAN_SHARD_GRADIENTS)
        fprintf(f, ", \"shard_optimizer_state\": true");
    if (l->sharding == PLAN_SHARD_PARAMS)
        fprintf(f, ", \"sharded_data_parallel_degree\": %d", l->dp);
    fprintf(f, ", \"ddp\": true, \"bf16\": true}' \\\n");
    fprintf(f, "  python train.py\n");
    return ST_OK;
}

int cli_emit(FILE *f, const char *what, const plan_model *m, const plan_cluster *c,
             const plan_candidate *best, st_err *err)
{
    int rc = !strcasecmp(what, "sagemaker") ? emit_sagemaker(f, m, c, best, err)
                                           : emit_mpirun(f, m, c, best);
    return rc == ST_OK ? 0 : st_exit_code(rc);
}
