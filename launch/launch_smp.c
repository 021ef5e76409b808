/*
 * launch_smp.c: --emit sagemaker | mpirun, the launch settings of the plan
 * ranked #1 in the table `smdplan plan` prints (after the simulator's
 * re-ranking), for SageMaker's model-parallel library v1 (SMP).
 *
 * One description of the job (smp_job) is derived from the plan and checked
 * once. The SMP parameters are one cJSON object; the SageMaker estimator
 * (Python), the --json object and the mpirun line are all written from it,
 * so the three carry the same values. A plan SMP v1 cannot run is refused
 * (exit 2, one line naming the knob), never approximated.
 *
 * Every string that reaches an emitted script is escaped for its language:
 * Python string literals (py_str: ASCII only, quotes, backslashes and control
 * characters escaped, UTF-8 as \u escapes), shell words in single quotes
 * (sh_str), JSON by cJSON. Text in a comment (model and instance names from
 * config and catalog files, the command line) is reduced to printable ASCII
 * with C-style escapes (comment_text), so it cannot end the comment line.
 *
 * Sources, cited where used:
 *   [params]  SMP v1 parameters: sagemaker-python-sdk
 *             doc/api/training/smd_model_parallel_general.rst
 *   [pytorch] SMP v1 PyTorch API: doc/api/training/smp_versions/latest/
 *             smd_model_parallel_pytorch.rst
 *   [launch]  Amazon SageMaker Developer Guide, model-parallel-sm-sdk
 *             ("Launch a Training Job Using the SageMaker Python SDK")
 *   [notes]   SMP release notes: smd_model_parallel_change_log.rst
 *   [bp]      SMP best practices (model-parallel-best-practices)
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "launch/launch_int.h"
#include "common/text.h"
#include "common/units.h"
#include "planner/plan_framework.h"

#define GIB 1073741824.0
#define NOTES_MAX 10
#define NOTE_LEN 640
/* Columns of the emitted comment blocks. */
#define WRAP_COLS 96

/* [launch]: "If you launch a training job using an EFA-enabled instance
 * type, such as ml.p4d.24xlarge and ml.p3dn.24xlarge, use the following flag
 * for best performance". The options are Open MPI's -x exports. */
static const char *const efa_env[] = {"FI_EFA_USE_DEVICE_RDMA=1", "FI_PROVIDER=efa",
                                      "RDMAV_FORK_SAFE=1"};
#define EFA_NENV ((int)(sizeof efa_env / sizeof efa_env[0]))

/* [launch]: the MPI option SageMaker sets by default (Docker warnings); on
 * SageMaker it must not be repeated in custom_mpi_options, under plain
 * mpirun it is given on the line ([launch]'s example and the AWS Deep
 * Learning Containers' SMP test scripts). */
#define MPI_VADER "btl_vader_single_copy_mechanism"

/* The last SMP v1 release, 1.15.0, ships in the SageMaker PyTorch 2.0.0
 * container (py310) and the 1.13.1 one (py39); sharded data parallelism
 * combined with tensor parallelism is available on PyTorch 1.13.1 only
 * ([notes], 1.15.0: "Using sharded data parallelism with tensor parallelism
 * together is now available for PyTorch 1.13.1"). */
#define SMP_FW_VERSION "2.0.0"
#define SMP_PY_VERSION "py310"
#define SMP_FW_VERSION_SDP_TP "1.13.1"
#define SMP_PY_VERSION_SDP_TP "py39"

/* The entry point the estimator and the mpirun line name: a placeholder for
 * the user's SMP training script. Its batch-size argument is the one SMP's
 * GPT example (train_gpt_simple.py) reads. */
#define ENTRY_POINT "train.py"
#define BATCH_ARG "train_batch_size"

typedef struct smp_job {
    const char *what;            /* "sagemaker" or "mpirun" */
    const plan_model *m;
    const plan_cluster *c;
    const plan_layout *l;
    const plan_estimate *e;
    double sim_step_s;           /* simulated step of the plan, 0: not simulated */
    const char *command_line;
    double band_pct;             /* the step's error band, percent; 0: none */
    const char *band_basis;
    int64_t replica_batch;       /* sequences per model replica per step: global / dp */
    int64_t script_batch;        /* what the training script's loader reads on each rank */
    double init_params;          /* parameters one process creates on the CPU at init */
    double init_bytes;           /* ... all processes of a node, bytes */
    int delayed;                 /* 1: delayed_parameter_initialization */
    const char *fw_version, *py_version;
    char instance_type[64];      /* "ml.p4d.24xlarge" */
    cJSON *params;               /* the smdistributed.modelparallel parameters */
    int nnotes;
    char notes[NOTES_MAX][NOTE_LEN];
} smp_job;

/* ------------------------------------------------------------------------ */
/* The job                                                                   */
/* ------------------------------------------------------------------------ */

static void note(smp_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(smp_job *j, const char *fmt, ...)
{
    if (j->nnotes >= NOTES_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->notes[j->nnotes++], NOTE_LEN, fmt, ap);
    va_end(ap);
}

/* [params] placement_strategy: "cluster" is "DPT", "spread" is "TPD"; other
 * orders are written as the permutation. */
static const char *smp_placement(const char *p)
{
    if (!strcmp(p, "DPT"))
        return "cluster";
    if (!strcmp(p, "TPD"))
        return "spread";
    return p;
}

static int is_permutation_dpt(const char *p)
{
    return strlen(p) == 3 && strchr(p, 'D') && strchr(p, 'P') && strchr(p, 'T');
}

/* Refusals: one line naming the knob and what SMP v1 takes. */
static int refuse(const smp_job *j, st_err *err, const char *why)
{
    return ST_RAISE(err, ST_EINVAL, "--emit %s: %s", j->what, why);
}

static int job_check(smp_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    const plan_framework *fw = plan_framework_get(l->framework);
    char why[400], safe[160];
    /* SMP's knobs, from the framework table (the same check its search
     * obeys): schedule, sharding (no ZeRO-2; sharded data parallelism not
     * with a pipeline), context parallelism, FP8, offload ... A plan of
     * another stack names the first knob SMP lacks; one whose knobs SMP has
     * is still refused, its times being that stack's. */
    int smp_index = PLAN_FW_DEFAULT;
    for (int i = 0; i < plan_nframeworks; i++)
        if (plan_frameworks[i].family == PLAN_FW_SMP) {
            smp_index = i;
            break;
        }
    const plan_framework *smp = plan_framework_get(smp_index);
    char fw_why[300], other[200] = "";
    if (fw->family != PLAN_FW_SMP)
        snprintf(other, sizeof other, " (the plan is for %s, --framework %s)", fw->label, fw->key);
    if (plan_framework_check(smp, l, fw_why, sizeof fw_why)) {
        snprintf(why, sizeof why, "%s%s", fw_why, other);
        return refuse(j, err, why);
    }
    if (fw->family != PLAN_FW_SMP) {
        snprintf(why, sizeof why,
                 "the plan is for %s (--framework %s), its times that stack's; plan with "
                 "--framework smp for SageMaker model parallel v1",
                 fw->label, fw->key);
        return refuse(j, err, why);
    }
    if (!is_permutation_dpt(l->placement)) {
        snprintf(why, sizeof why,
                 "placement %s: SMP's placement_strategy takes cluster, spread or a permutation "
                 "of D, P, T",
                 text_comment(l->placement, safe, sizeof safe));
        return refuse(j, err, why);
    }
    /* [params] microbatches: "Batch size must be divisible by the number of
     * microbatches"; without prescaled_batch every rank of a TP group reads
     * its own batch and the group runs tp of them ([params], Prescaled
     * Batch), so a replica's microbatch must split into tp equal parts. */
    if (l->tp > 1 && !l->prescaled_batch && l->micro_batch % l->tp != 0) {
        snprintf(why, sizeof why,
                 "prescaled batch off with micro-batch %d and tp %d: each TP rank would read %d/%d "
                 "sequences per microbatch; use --prescaled-batch on or a micro-batch tp divides",
                 l->micro_batch, l->tp, l->micro_batch, l->tp);
        return refuse(j, err, why);
    }
    /* [params] offload_activations: "use activation offloading only when
     * (1) the microbatches and active_microbatches are greater than 1, and
     * (2) activation checkpointing is enabled for at least one module". */
    if (l->offload_activations &&
        (l->recompute == PLAN_RECOMP_NONE || l->microbatches < 2 || l->active_microbatches < 2)) {
        snprintf(why, sizeof why,
                 "activation offload with recompute %s, %d microbatches, %d active: SMP offloads "
                 "checkpointed activations with more than one microbatch and active microbatch",
                 plan_recompute_name(l->recompute), l->microbatches, l->active_microbatches);
        return refuse(j, err, why);
    }
    if (l->dp < 1 || l->global_batch % l->dp != 0 ||
        l->global_batch / l->dp != (int64_t)l->micro_batch * l->microbatches) {
        snprintf(why, sizeof why,
                 "global batch %lld: not dp %d x micro-batch %d x %d microbatches",
                 (long long)l->global_batch, l->dp, l->micro_batch, l->microbatches);
        return refuse(j, err, why);
    }
    if (!strcmp(j->what, "sagemaker") && !strchr(j->c->inst->name, '.')) {
        snprintf(why, sizeof why,
                 "'%s' is not a SageMaker instance type (ml.p4d.24xlarge, ...)",
                 text_comment(j->c->inst->name, safe, sizeof safe));
        return refuse(j, err, why);
    }
    return ST_OK;
}

/* The parameters, in the order [params] lists them. */
static cJSON *job_params(const smp_job *j)
{
    const plan_layout *l = j->l;
    cJSON *p = cJSON_CreateObject();
    /* [launch]: "the "partitions" key is required"; PyTorch also knows it as
     * pipeline_parallel_degree ([params]). */
    cJSON_AddNumberToObject(p, "partitions", l->pp);
    cJSON_AddNumberToObject(p, "microbatches", l->microbatches);
    if (l->pp > 1) {
        cJSON_AddStringToObject(p, "pipeline",
                                l->schedule == PLAN_SCHED_SIMPLE ? "simple" : "interleaved");
        cJSON_AddNumberToObject(p, "active_microbatches", l->active_microbatches);
    }
    /* [params] optimize: "memory" (the default) stores no redundant
     * activations across tensor-parallel ranks at more communication;
     * "speed" keeps duplicate activations and does not distribute layer
     * normalization. The planner's sequence parallelism on an SMP plan is
     * the first, off the second. */
    cJSON_AddStringToObject(p, "optimize", l->sequence_parallel && l->tp > 1 ? "memory" : "speed");
    cJSON_AddStringToObject(p, "placement_strategy", smp_placement(l->placement));
    cJSON_AddNumberToObject(p, "tensor_parallel_degree", l->tp);
    cJSON_AddBoolToObject(p, "shard_optimizer_state", l->sharding == PLAN_SHARD_OPTIMIZER);
    cJSON_AddBoolToObject(p, "prescaled_batch", l->prescaled_batch);
    if (l->sharding == PLAN_SHARD_PARAMS)
        cJSON_AddNumberToObject(p, "sharded_data_parallel_degree",
                                l->sharding_degree > 0 ? l->sharding_degree : l->dp);
    if (l->offload_activations)
        cJSON_AddBoolToObject(p, "offload_activations", 1);
    if (j->delayed)
        cJSON_AddBoolToObject(p, "delayed_parameter_initialization", 1);
    /* Mixed precision: "fp16" (v1.10.0 and later; Developer Guide,
     * model-parallel-extended-features-pytorch-fp16: "add the FP16 parameter
     * ("fp16") to the smp configuration") or "bf16" ([params]); the planner
     * picks fp16 where the chip has no bf16 (V100, T4: catalog fp16_only) */
    if (l->precision == PLAN_PREC_BF16)
        cJSON_AddBoolToObject(p, "bf16", 1);
    else if (l->precision == PLAN_PREC_FP16)
        cJSON_AddBoolToObject(p, "fp16", 1);
    /* [params] ddp: required with data parallelism; tensor_parallel_degree
     * > 1 requires it too. */
    cJSON_AddBoolToObject(p, "ddp", 1);
    return p;
}

static int job_make(const char *what, const launch_plan *p, int simulated, smp_job *j, st_err *err)
{
    memset(j, 0, sizeof *j);
    if (p->r->ntop < 1)
        return ST_RAISE(err, ST_EINVAL, "--emit %s: no plan to emit", what);
    j->what = what;
    j->m = p->m;
    j->c = p->c;
    j->l = &p->r->top[0].layout;
    j->e = &p->r->top[0].est;
    j->sim_step_s = simulated ? p->sim_step_s : 0;
    j->command_line = p->command_line;
    j->band_pct = p->band_pct;
    j->band_basis = p->band_basis;
    int rc = job_check(j, err);
    if (rc)
        return rc;
    const plan_layout *l = j->l;
    char a[32], b[32], d[32];

    snprintf(j->instance_type, sizeof j->instance_type, "%s%s",
             strncasecmp(j->c->inst->name, "ml.", 3) ? "ml." : "", j->c->inst->name);

    /* The batch the script's loader reads. [params], Prescaled Batch: with
     * prescaled_batch "the global batch size is smp.rdp_size() multiplied by
     * the per-MP_GROUP batch size"; without it, "smp.dp_size() multiplied by
     * the per-PP_GROUP batch size" (dp_size counts every TP rank). */
    j->replica_batch = l->global_batch / l->dp;
    int per_rank = l->tp > 1 && !l->prescaled_batch;
    j->script_batch = per_rank ? j->replica_batch / l->tp : j->replica_batch;
    if (per_rank)
        note(j, "Training script batch size %s = %lld sequences per rank: prescaled_batch is off, so "
                "every rank of a tensor-parallel group reads its own (shard the data by "
                "smp.dp_rank() and smp.dp_size()); smp splits them into %d microbatches, and %d TP "
                "ranks x %d data-parallel replicas x %lld make the global batch of %lld "
                "([params], Prescaled Batch).",
             BATCH_ARG, (long long)j->script_batch, l->microbatches, l->tp, l->dp,
             (long long)j->script_batch, (long long)l->global_batch);
    else
        note(j, "Training script batch size %s = %lld sequences per model-parallel group%s; smp "
                "splits them into %d microbatches of %d, and %d data-parallel replicas x %lld "
                "make the global batch of %lld ([params], Prescaled Batch).",
             BATCH_ARG, (long long)j->script_batch,
             l->tp > 1 ? " (prescaled_batch: the ranks of a tensor-parallel group read the same "
                         "sequences; shard the data by smp.rdp_rank() and smp.rdp_size())"
                       : "",
             l->microbatches, l->micro_batch, l->dp, (long long)j->script_batch,
             (long long)l->global_batch);

    if (l->tp > 1)
        note(j, "optimize \"%s\": %s ([params], optimize).",
             l->sequence_parallel ? "memory" : "speed",
             l->sequence_parallel
                 ? "the plan's sequence parallelism: SMP's default stores no activation twice "
                   "across the tensor-parallel ranks, at more communication"
                 : "the plan keeps every tensor-parallel rank's copy of the activations and does "
                   "not distribute layer normalization, for less communication");
    else
        note(j, "optimize \"speed\": without tensor parallelism it only sets auto-partitioning's "
                "memory_weight to 0.2, so auto-partitioning balances the stages' computation "
                "rather than their memory, as the planner's split of the layers does "
                "([params], memory_weight).");

    if (l->recompute == PLAN_RECOMP_FULL) {
        char strategy[24];
        if (l->recompute_group > 1)
            snprintf(strategy, sizeof strategy, "group_%d", l->recompute_group);
        else
            snprintf(strategy, sizeof strategy, "each");
        note(j, "Activation checkpointing (the plan's full recompute%s): in the script, "
                "smp.set_activation_checkpointing(<the transformer's layer sequence>, "
                "strategy=\"%s\") ([pytorch], set_activation_checkpointing).",
             l->recompute_group > 1 ? ", layers in groups" : ", every layer", strategy);
    } else if (l->recompute == PLAN_RECOMP_SELECTIVE) {
        note(j, "Activation checkpointing (the plan's selective recompute): in the script, "
                "smp.set_activation_checkpointing(<each layer's attention module>); SMP then "
                "recomputes the attention's projections too, more than the attention core the "
                "planner's selective recompute counts.");
    }
    if (l->offload_activations)
        note(j, "offload_activations: the checkpointed activations wait in host memory between "
                "forward and backward (activation_loading_horizon: SMP's default 4) ([params]).");

    /* Host memory at model creation. SMP v1 first builds the model on the
     * CPU and partitions it at the first smp.step (Developer Guide,
     * model-parallel-customize-training-script: "the library first
     * constructs a version of the model on the CPU RAM"); tensor-parallel
     * modules are created distributed, each rank holding its 1/tp share
     * ([pytorch] tensor parallelism: "The distributed modules have their
     * parameters and optimizer states partitioned across tensor-parallel
     * ranks"). So every process of a node materialises params/tp, in the
     * dtype smp.model_creation is given ([pytorch] model_creation: default
     * fp32; "Any model that causes out-of-memory problems with FP32
     * initialization is recommended to be created with ...
     * delayed_parameter_initialization", which "delays the initialization
     * of parameters to save CPU memory ... after the model is partitioned on
     * GPUs"). */
    double bytes_per_param = l->precision == PLAN_PREC_FP32 ? 4 : 2;
    j->init_params = (double)j->m->params / l->tp;
    j->init_bytes = j->c->inst->gpus_per_node * j->init_params * bytes_per_param;
    const double host = j->c->inst->host_mem_bytes;
    j->delayed = host > 0 && j->init_bytes > host;
    units_fmt_count(j->init_params, a, sizeof a);
    units_fmt_bytes(j->init_bytes, b, sizeof b);
    const char *dtype = l->precision == PLAN_PREC_FP32   ? "torch.float32"
                        : l->precision == PLAN_PREC_FP16 ? "torch.float16"
                                                         : "torch.bfloat16";
    if (host <= 0)
        note(j, "Model creation on the host: %d processes per node each create %s parameters "
                "(1/%d of %s, smp.model_creation(..., dtype=%s)) = %s; the catalog does not give "
                "this instance type's host memory, so delayed_parameter_initialization is not "
                "set: set it if that exceeds the node's memory ([pytorch], "
                "delay_param_initialization).",
             j->c->inst->gpus_per_node, a, l->tp,
             units_fmt_count((double)j->m->params, d, sizeof d), dtype, b);
    else {
        char h[32];
        units_fmt_bytes(host, h, sizeof h);
        note(j, "Model creation on the host: %d processes per node each create %s parameters "
                "(1/%d of %s, smp.model_creation(..., dtype=%s)) = %s against the node's %s: %s "
                "([pytorch], delay_param_initialization).",
             j->c->inst->gpus_per_node, a, l->tp,
             units_fmt_count((double)j->m->params, d, sizeof d), dtype, b, h,
             j->delayed ? "too much, so delayed_parameter_initialization creates them after "
                          "partitioning, on the GPUs"
                        : "it fits, no delayed_parameter_initialization");
    }

    if (j->c->inst->efa)
        note(j, "EFA: the catalog says %s has Elastic Fabric Adapter, so the MPI options SageMaker's "
                "guide gives for EFA instance types are set ([launch]).",
             "this instance type");
    else
        note(j, "No EFA on this instance type (catalog): no EFA options.");

    int sdp_tp = l->sharding == PLAN_SHARD_PARAMS && l->tp > 1;
    j->fw_version = sdp_tp ? SMP_FW_VERSION_SDP_TP : SMP_FW_VERSION;
    j->py_version = sdp_tp ? SMP_PY_VERSION_SDP_TP : SMP_PY_VERSION;
    note(j, "framework_version %s, py_version %s: SMP v1.15.0, the last v1 release, ships in "
            "SageMaker's PyTorch %s container%s ([notes], 1.15.0).",
         j->fw_version, j->py_version, j->fw_version,
         sdp_tp ? "; it combines sharded data parallelism with tensor parallelism on PyTorch "
                  "1.13.1 only"
                : "");

    j->params = job_params(j);
    if (!j->params)
        return ST_RAISE(err, ST_ENOMEM, "--emit %s: out of memory", what);
    return ST_OK;
}

static void job_fini(smp_job *j)
{
    cJSON_Delete(j->params);
    j->params = NULL;
}

/* "tp 2, pp 4, dp 16, ..." of the plan. */
static void layout_text(const plan_layout *l, char *buf, size_t n)
{
    snprintf(buf, n,
             "tp %d, pp %d, dp %d, micro-batch %d x %d microbatches, active %d, %s, recompute %s, "
             "sharding %s, sequence parallel %s, placement %s, %s",
             l->tp, l->pp, l->dp, l->micro_batch, l->microbatches, l->active_microbatches,
             plan_schedule_name(l->schedule), plan_recompute_name(l->recompute),
             plan_sharding_name(l->sharding), l->sequence_parallel ? "on" : "off", l->placement,
             plan_precision_name(l->precision));
}

/* The comment header both scripts start with. */
static void header(FILE *f, const smp_job *j, const char *title)
{
    char text[3072], lay[300], sim[64] = "";
    snprintf(text, sizeof text, "%s for plan #1 of: %s", title, j->command_line);
    launch__comment_block(f, text);
    launch__comment_block(f, "(the first row of the table that command prints without --emit: ranked "
                     "by the simulated step when the top plans are simulated)");
    layout_text(j->l, lay, sizeof lay);
    snprintf(text, sizeof text, "Model %s on %d x %s; plan: %s.", j->m->name, j->c->nodes,
             strcmp(j->what, "sagemaker") ? j->c->inst->name : j->instance_type, lay);
    launch__comment_block(f, text);
    if (j->sim_step_s > 0)
        snprintf(sim, sizeof sim, ", simulated %.3f s", j->sim_step_s);
    char band[520] = ""; /* ASCII: a script */
    if (j->band_pct > 0)
        snprintf(band, sizeof band, " +-%.0f %% (%s)", j->band_pct, j->band_basis);
    snprintf(text, sizeof text,
             "Predicted step %.3f s%s%s; worst pipeline stage needs %.1f GiB of the GPU's %.1f "
             "GiB.",
             j->e->time.step_s, band, sim, plan_mem_need_bytes(&j->e->mem) / GIB,
             j->e->capacity_bytes / GIB);
    launch__comment_block(f, text);
    fprintf(f, "#\n");
    for (int i = 0; i < j->nnotes; i++)
        launch__comment_block(f, j->notes[i]);
    launch__comment_block(f, "[params] sagemaker-python-sdk doc/api/training/smd_model_parallel_general.rst; "
                     "[pytorch] smd_model_parallel_pytorch.rst; [launch] Amazon SageMaker Developer "
                     "Guide, model-parallel-sm-sdk; [notes] smd_model_parallel_change_log.rst.");
}

/* ------------------------------------------------------------------------ */
/* SageMaker: Python                                                         */
/* ------------------------------------------------------------------------ */

/* The estimator's distribution argument ([launch]). */
static cJSON *distribution_json(const smp_job *j)
{
    cJSON *d = cJSON_CreateObject();
    cJSON *smd = cJSON_AddObjectToObject(d, "smdistributed");
    cJSON *mp = cJSON_AddObjectToObject(smd, "modelparallel");
    cJSON_AddBoolToObject(mp, "enabled", 1);
    cJSON_AddItemToObject(mp, "parameters", cJSON_Duplicate(j->params, 1));
    cJSON *mpi = cJSON_AddObjectToObject(d, "mpi");
    cJSON_AddBoolToObject(mpi, "enabled", 1);
    cJSON_AddNumberToObject(mpi, "processes_per_host", j->c->inst->gpus_per_node);
    if (j->c->inst->efa) {
        char opts[160] = "";
        for (int i = 0; i < EFA_NENV; i++) {
            size_t n = strlen(opts);
            snprintf(opts + n, sizeof opts - n, "%s-x %s", i ? " " : "", efa_env[i]);
        }
        cJSON_AddStringToObject(mpi, "custom_mpi_options", opts);
    }
    return d;
}

static void emit_sagemaker(FILE *f, const smp_job *j, const cJSON *dist)
{
    header(f, j, "SageMaker training job (SageMaker model parallel v1)");
    fputs("import sagemaker\nfrom sagemaker.pytorch import PyTorch\n\n", f);
    fprintf(f, "%s = %lld\n\n", BATCH_ARG, (long long)j->script_batch);
    fputs("distribution = ", f);
    launch__py_value(f, dist, 0);
    fputs("\n\nestimator = PyTorch(\n", f);
    fputs("    entry_point=", f);
    launch__py_str(f, ENTRY_POINT);
    fputs(",  # placeholder: your SMP v1 training script\n", f);
    fputs("    # or the ARN of an IAM role SageMaker can assume\n"
          "    role=sagemaker.get_execution_role(),\n",
          f);
    fputs("    instance_type=", f);
    launch__py_str(f, j->instance_type);
    fprintf(f, ",\n    instance_count=%d,\n", j->c->nodes);
    fputs("    framework_version=", f);
    launch__py_str(f, j->fw_version);
    fputs(",\n    py_version=", f);
    launch__py_str(f, j->py_version);
    fputs(",\n    distribution=distribution,\n", f);
    fprintf(f, "    hyperparameters={");
    launch__py_str(f, BATCH_ARG);
    fprintf(f, ": %s},  # the argument your script reads its batch size from\n", BATCH_ARG);
    fputs(")\n# estimator.fit(...) with your data channels starts the job\n", f);
}

/* The same job as JSON: the estimator's arguments (role is yours to give:
 * null) with the same distribution dict. */
static cJSON *sagemaker_json(const smp_job *j, const cJSON *dist)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "plan_rank", 1);
    cJSON *est = cJSON_AddObjectToObject(s, "estimator");
    cJSON_AddStringToObject(est, "entry_point", ENTRY_POINT);
    cJSON_AddNullToObject(est, "role");
    cJSON_AddStringToObject(est, "instance_type", j->instance_type);
    cJSON_AddNumberToObject(est, "instance_count", j->c->nodes);
    cJSON_AddStringToObject(est, "framework_version", j->fw_version);
    cJSON_AddStringToObject(est, "py_version", j->py_version);
    cJSON_AddItemToObject(est, "distribution", cJSON_Duplicate(dist, 1));
    cJSON *hp = cJSON_AddObjectToObject(est, "hyperparameters");
    cJSON_AddNumberToObject(hp, BATCH_ARG, (double)j->script_batch);
    cJSON_AddNumberToObject(s, "train_batch_size", (double)j->script_batch);
    cJSON_AddNumberToObject(s, "global_batch", (double)j->l->global_batch);
    cJSON_AddBoolToObject(s, "efa", j->c->inst->efa);
    cJSON_AddNumberToObject(s, "host_init_bytes", j->init_bytes);
    cJSON_AddNumberToObject(s, "host_memory_bytes", j->c->inst->host_mem_bytes);
    cJSON *notes = cJSON_AddArrayToObject(s, "notes");
    for (int i = 0; i < j->nnotes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(j->notes[i]));
    return s;
}

/* ------------------------------------------------------------------------ */
/* mpirun: shell                                                             */
/* ------------------------------------------------------------------------ */

/* The argument vector of the launch; the environment it exports is the
 * SMP parameters (SM_HP_MP_PARAMETERS, which smp.init() reads when it is
 * given no config: the AWS Deep Learning Containers' SMP tests export it
 * before mpirun) and the EFA options. */
static cJSON *mpirun_argv(const smp_job *j)
{
    cJSON *a = cJSON_CreateArray();
    char buf[64];
#define ARG(s) cJSON_AddItemToArray(a, cJSON_CreateString(s))
    ARG("mpirun");
    ARG("-np");
    snprintf(buf, sizeof buf, "%d", j->c->gpus);
    ARG(buf);
    ARG("--npernode");
    snprintf(buf, sizeof buf, "%d", j->c->inst->gpus_per_node);
    ARG(buf);
    ARG("--hostfile");
    ARG("hostfile");
    ARG("--bind-to");
    ARG("none");
    ARG("--mca");
    ARG(MPI_VADER);
    ARG("none");
    if (j->c->inst->efa)
        for (int i = 0; i < EFA_NENV; i++) {
            ARG("-x");
            ARG(efa_env[i]);
        }
    static const char *const pass[] = {"NCCL_DEBUG=WARN", "LD_LIBRARY_PATH", "PATH",
                                       "SM_HP_MP_PARAMETERS"};
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        ARG("-x");
        ARG(pass[i]);
    }
    ARG("python");
    ARG(ENTRY_POINT);
    ARG("--" BATCH_ARG);
    snprintf(buf, sizeof buf, "%lld", (long long)j->script_batch);
    ARG(buf);
#undef ARG
    return a;
}

static int emit_mpirun(FILE *f, const smp_job *j, const cJSON *argv, st_err *err)
{
    char *params = cJSON_PrintUnformatted(j->params);
    if (!params)
        return ST_RAISE(err, ST_ENOMEM, "--emit mpirun: out of memory");
    fputs("#!/bin/sh\n", f);
    header(f, j, "mpirun launch of an SMP v1 training script");
    char text[200];
    snprintf(text, sizeof text,
             "hostfile: %d lines 'HOST slots=%d', one per node; " ENTRY_POINT
             " is a placeholder for your SMP v1 training script.",
             j->c->nodes, j->c->inst->gpus_per_node);
    launch__comment_block(f, text);
    fputs("SM_HP_MP_PARAMETERS=", f);
    launch__sh_str(f, params);
    fputs("\nexport SM_HP_MP_PARAMETERS\n", f);
    const char *prev = NULL;
    for (const cJSON *a = argv->child; a; a = a->next) {
        const char *s = a->valuestring;
        /* continuation lines before the MCA option, the exports and the
         * program, for reading */
        if (prev)
            fputs(!strcmp(s, "--mca") || !strcmp(s, "python") ||
                          (!strcmp(s, "-x") && strcmp(prev, "none") == 0)
                      ? " \\\n  "
                      : " ",
                  f);
        launch__sh_word(f, s);
        prev = s;
    }
    fputc('\n', f);
    free(params);
    return ST_OK;
}

static cJSON *mpirun_json(const smp_job *j, const cJSON *argv)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "plan_rank", 1);
    cJSON_AddItemToObject(s, "argv", cJSON_Duplicate(argv, 1));
    cJSON *env = cJSON_AddObjectToObject(s, "env");
    char *params = cJSON_PrintUnformatted(j->params);
    cJSON_AddStringToObject(env, "SM_HP_MP_PARAMETERS", params ? params : "");
    free(params);
    cJSON_AddItemToObject(s, "parameters", cJSON_Duplicate(j->params, 1));
    cJSON_AddNumberToObject(s, "hosts", j->c->nodes);
    cJSON_AddNumberToObject(s, "slots_per_host", j->c->inst->gpus_per_node);
    cJSON_AddNumberToObject(s, "train_batch_size", (double)j->script_batch);
    cJSON *notes = cJSON_AddArrayToObject(s, "notes");
    for (int i = 0; i < j->nnotes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(j->notes[i]));
    return s;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

int launch__smp_check(const char *what, const launch_plan *p, st_err *err)
{
    smp_job j;
    int rc = job_make(what, p, 0, &j, err);
    job_fini(&j);
    return rc;
}

int launch__smp_write(FILE *f, const char *what, const launch_plan *p, st_err *err)
{
    smp_job j;
    int rc = job_make(what, p, 1, &j, err);
    if (rc == ST_OK) {
        if (!strcmp(what, "sagemaker")) {
            cJSON *dist = distribution_json(&j);
            if (!dist)
                rc = ST_RAISE(err, ST_ENOMEM, "--emit sagemaker: out of memory");
            else
                emit_sagemaker(f, &j, dist);
            cJSON_Delete(dist);
        } else {
            cJSON *argv = mpirun_argv(&j);
            rc = argv ? emit_mpirun(f, &j, argv, err)
                      : ST_RAISE(err, ST_ENOMEM, "--emit mpirun: out of memory");
            cJSON_Delete(argv);
        }
    }
    job_fini(&j);
    return rc;
}

cJSON *launch__smp_json(const char *what, const launch_plan *p, st_err *err)
{
    smp_job j;
    cJSON *out = NULL;
    if (job_make(what, p, 1, &j, err) == ST_OK) {
        if (!strcmp(what, "sagemaker")) {
            cJSON *dist = distribution_json(&j);
            out = dist ? sagemaker_json(&j, dist) : NULL;
            cJSON_Delete(dist);
        } else {
            cJSON *argv = mpirun_argv(&j);
            out = argv ? mpirun_json(&j, argv) : NULL;
            cJSON_Delete(argv);
        }
        if (!out)
            ST_RAISE(err, ST_ENOMEM, "--emit %s: out of memory", what);
    }
    job_fini(&j);
    return out;
}
