/*
 * launch_smp2.c: --emit sagemaker for a plan of SageMaker model
 * parallelism v2 (--framework smp2): the SageMaker PyTorch estimator whose
 * distribution argument turns the library on, for the plan ranked #1 in the
 * table `smdplan plan` prints.
 *
 * SMP v2 is PyTorch FSDP with SMP's hybrid sharding, Transformer Engine
 * tensor parallelism, context parallelism, activation offloading and FP8 on
 * p5 ([ref]); it has no pipeline. Its parameters are one cJSON object; the
 * estimator (Python) and the --json object are both written from it. A plan
 * SMP v2 cannot run is refused (exit 2, one line naming the knob).
 *
 * Sources, cited where used (Amazon SageMaker Developer Guide):
 *   [ref]    The SageMaker model parallel library v2 reference, "SMP v2 core
 *            feature configuration parameters"
 *            (distributed-model-parallel-v2-reference)
 *   [use]    Use the SageMaker model parallelism library v2, "Step 2: Launch
 *            a training job" (model-parallel-use-api-v2): the PyTorch
 *            estimator's distribution {"torch_distributed": {"enabled":
 *            True}, "smdistributed": {"modelparallel": {"enabled": True,
 *            "parameters": {...}}}}
 *   [sup]    Supported frameworks and AWS Regions
 *            (distributed-model-parallel-support-v2): PyTorch v2.5.1 with
 *            smdistributed-modelparallel v2.8.0, image ...:2.5.1-gpu-py311-cu124
 *   [mp]     Mixed precision training (model-parallel-core-features-v2-
 *            mixed-precision): FP8 with Transformer Engine on P5
 *   [tp]     Tensor parallelism (model-parallel-core-features-v2-tensor-
 *            parallelism): torch.sagemaker.transform
 *   [bp]     SageMaker distributed model parallelism best practices
 *            (model-parallel-best-practices-v2)
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "launch/launch_int.h"
#include "common/text.h"
#include "common/units.h"
#include "planner/plan_framework.h"

#define GIB 1073741824.0

/* [sup]: the newest SMP v2 release and the SageMaker PyTorch container it
 * ships in. */
#define SMP2_VERSION "2.8.0"
#define SMP2_FW_VERSION "2.5.1"
#define SMP2_PY_VERSION "py311"

/* Placeholders for the user's FSDP training script and the arguments it
 * reads its batch from. */
#define ENTRY_POINT "train.py"
#define BATCH_ARG "train_batch_size"
#define ACCUM_ARG "gradient_accumulation_steps"

/* [ref] activation_loading_horizon: "The default value is 2". The planner
 * models offloaded checkpoints, not how many are loaded back early; the
 * default is written. */
#define LOADING_HORIZON 2

/* [bp]: delayed parameter initialization "If your model has more than about
 * 60 billion parameters". */
#define DELAYED_INIT_PARAMS 60e9

typedef struct smp2_job {
    const char *what;
    const plan_model *m;
    const plan_cluster *c;
    const plan_layout *l;
    const plan_estimate *e;
    double sim_step_s;
    const char *command_line;
    double band_pct;             /* the step's error band, percent; 0: none */
    const char *band_basis;
    int shard_degree;            /* hybrid_shard_degree */
    char instance_type[64];      /* "ml.p5.48xlarge" */
    cJSON *params;               /* the smdistributed.modelparallel parameters */
    int nnotes;
    char notes[LAUNCH_NOTES_MAX][LAUNCH_NOTE_LEN];
} smp2_job;

static void note(smp2_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(smp2_job *j, const char *fmt, ...)
{
    if (j->nnotes >= LAUNCH_NOTES_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->notes[j->nnotes++], LAUNCH_NOTE_LEN, fmt, ap);
    va_end(ap);
}

static int refuse(const smp2_job *j, st_err *err, const char *why)
{
    return ST_RAISE(err, ST_EINVAL, "--emit %s: %s", j->what, why);
}

static int job_check(smp2_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    const plan_framework *fw = plan_framework_get(l->framework);
    char why[400], safe[160], types[200];
    if (strcmp(j->what, "sagemaker"))
        return refuse(j, err, "SageMaker model parallel v2 is started by SageMaker's "
                              "torch_distributed launcher (torchrun), not mpirun; use "
                              "--emit sagemaker");
    /* the profile's own check: knobs SMP v2 lacks (pipeline, selective
     * recompute, sequence parallelism ...) */
    char fw_why[300];
    if (plan_framework_check(fw, l, fw_why, sizeof fw_why))
        return refuse(j, err, fw_why);
    if (l->pp > 1) {
        snprintf(why, sizeof why, "pp %d: SMP v2 has no pipeline parallelism ([ref] lists no "
                                  "pipeline degree)", l->pp);
        return refuse(j, err, why);
    }
    if (!strchr(j->c->inst->name, '.') || !plan_framework_runs_on(fw, j->c->inst)) {
        snprintf(why, sizeof why, "'%s' is not an instance type SMP v2 supports: %s",
                 text_comment(j->c->inst->name, safe, sizeof safe),
                 plan_framework_instance_list(fw, types, sizeof types));
        return refuse(j, err, why);
    }
    if (l->sharding != PLAN_SHARD_PARAMS && l->sharding != PLAN_SHARD_GRADIENTS) {
        snprintf(why, sizeof why, "sharding %s: SMP v2 shards with FSDP (params or gradients)",
                 plan_sharding_name(l->sharding));
        return refuse(j, err, why);
    }
    /* [ref] context_parallel_degree: "must be <= hybrid_shard_degree" */
    j->shard_degree = l->sharding_degree > 0 ? l->sharding_degree : l->dp * l->cp;
    if (l->cp > j->shard_degree) {
        snprintf(why, sizeof why, "cp %d over a sharding degree of %d: SMP v2 takes "
                                  "context_parallel_degree <= hybrid_shard_degree",
                 l->cp, j->shard_degree);
        return refuse(j, err, why);
    }
    /* [ref] sm_activation_offloading offloads the inputs of checkpointed
     * layers: offloading without checkpointing has nothing to offload */
    if (l->offload_activations && l->recompute == PLAN_RECOMP_NONE)
        return refuse(j, err, "activation offload without recompute: SMP v2 offloads the "
                              "checkpoints of checkpointed layers; use --recompute full");
    if (l->precision == PLAN_PREC_FP16 || l->precision == PLAN_PREC_FP32) {
        snprintf(why, sizeof why, "precision %s: SMP v2 on %s trains in bf16 or fp8 ([mp])",
                 plan_precision_name(l->precision),
                 text_comment(j->c->inst->name, safe, sizeof safe));
        return refuse(j, err, why);
    }
    if (l->dp < 1 || l->global_batch != (int64_t)l->dp * l->micro_batch * l->microbatches) {
        snprintf(why, sizeof why, "global batch %lld: not dp %d x micro-batch %d x %d "
                                  "microbatches",
                 (long long)l->global_batch, l->dp, l->micro_batch, l->microbatches);
        return refuse(j, err, why);
    }
    return ST_OK;
}

/* The parameters, in the order [ref] lists them. */
static cJSON *job_params(const smp2_job *j)
{
    const plan_layout *l = j->l;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "hybrid_shard_degree", j->shard_degree);
    cJSON_AddBoolToObject(p, "sm_activation_offloading", l->offload_activations);
    if (l->offload_activations)
        cJSON_AddNumberToObject(p, "activation_loading_horizon", LOADING_HORIZON);
    cJSON_AddNumberToObject(p, "tensor_parallel_degree", l->tp);
    cJSON_AddNumberToObject(p, "context_parallel_degree", l->cp);
    cJSON_AddNumberToObject(p, "expert_parallel_degree", 1);
    return p;
}

static int job_make(const char *what, const launch_plan *p, int simulated, smp2_job *j,
                    st_err *err)
{
    const plan_model *m = p->m;
    const plan_cluster *c = p->c;
    memset(j, 0, sizeof *j);
    if (p->r->ntop < 1)
        return ST_RAISE(err, ST_EINVAL, "--emit %s: no plan to emit", what);
    j->what = what;
    j->m = m;
    j->c = c;
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
    snprintf(j->instance_type, sizeof j->instance_type, "%s%s",
             strncasecmp(c->inst->name, "ml.", 3) ? "ml." : "", c->inst->name);

    int replicas = l->dp * l->cp / j->shard_degree;
    note(j, "hybrid_shard_degree %d: FSDP shards parameters, gradients and optimizer states "
            "over %d ranks%s; %s ([ref] hybrid_shard_degree).",
         j->shard_degree, j->shard_degree,
         replicas > 1 ? " and keeps that many ranks' shards replicated across the others" : "",
         l->sharding == PLAN_SHARD_GRADIENTS
             ? "the plan shards gradients and optimizer states only, so set sharding_strategy="
               "ShardingStrategy._HYBRID_SHARD_ZERO2 in the script's FSDP wrapper (SMP keeps a "
               "strategy the script sets)"
             : "leave sharding_strategy unset in the script's FSDP wrapper: SMP makes it "
               "HYBRID_SHARD");
    note(j, "Training script batch: %s = %d (sequences per data-parallel rank and micro-step), "
            "%s = %d; %d data-parallel ranks x %d x %d make the global batch of %lld%s.",
         BATCH_ARG, l->micro_batch, ACCUM_ARG, l->microbatches, l->dp, l->micro_batch,
         l->microbatches, (long long)l->global_batch,
         l->tp > 1 || l->cp > 1 ? " (the ranks of one tensor- or context-parallel group read "
                                  "the same sequences)"
                                : "");
    if (l->tp > 1 || l->cp > 1)
        note(j, "tensor_parallel_degree %d, context_parallel_degree %d: SMP applies them to a "
                "model wrapped with torch.sagemaker.transform (Transformer Engine layers; "
                "the Hugging Face models [tp] lists); tensor parallelism stays within a node "
                "([tp], [ref]).",
             l->tp, l->cp);
    if (l->recompute == PLAN_RECOMP_FULL)
        note(j, "Activation checkpointing of every transformer layer: apply "
                "torch.distributed.algorithms._checkpoint.checkpoint_wrapper."
                "apply_activation_checkpointing in the script%s.",
             l->offload_activations
                 ? ", with offload_wrapper for the offloaded checkpoints "
                   "(sm_activation_offloading; activation_loading_horizon left at its "
                   "default of 2, [ref])"
                 : "");
    if (l->precision == PLAN_PREC_FP8)
        note(j, "FP8: Transformer Engine's FP8 linears on p5's H100s (SMP v2.2.0 and later; in "
                "the script, run the model under transformer_engine.pytorch.fp8_autocast with "
                "FSDP MixedPrecision in bf16 for the rest). SMP documents FP8 for the Hugging "
                "Face GPT-NeoX, Llama 2 and Mixtral models ([mp]); for another model check "
                "that torch.sagemaker.transform converts it, else the step is the bf16 plan's.");
    else
        note(j, "Mixed precision: bf16 through FSDP MixedPrecision(param_dtype=torch.bfloat16) "
                "in the script ([mp]).");
    char a[32];
    if ((double)j->m->params > DELAYED_INIT_PARAMS)
        note(j, "Model creation: %s parameters is above the %s SMP's best practices give for "
                "delayed parameter initialization (torch.sagemaker.delayed_param."
                "DelayedParamIniter, [bp], [ref]).",
             units_fmt_count((double)j->m->params, a, sizeof a), "60 billion");
    note(j, "From SMP v1: start from a PyTorch FSDP script rather than the v1 one, whose v1 "
            "APIs (smp.DistributedModel, smp.step, ...) are removed; a v1 model moves as a "
            "Hugging Face checkpoint ([ref] Upgrade from SMP v1 to SMP v2).");
    note(j, "framework_version %s, py_version %s: SMP v%s ships in SageMaker's PyTorch %s "
            "container ([sup]).",
         SMP2_FW_VERSION, SMP2_PY_VERSION, SMP2_VERSION, SMP2_FW_VERSION);
    j->params = job_params(j);
    if (!j->params)
        return ST_RAISE(err, ST_ENOMEM, "--emit %s: out of memory", what);
    return ST_OK;
}

static void job_fini(smp2_job *j)
{
    cJSON_Delete(j->params);
    j->params = NULL;
}

static cJSON *distribution_json(const smp2_job *j)
{
    cJSON *d = cJSON_CreateObject();
    cJSON *td = cJSON_AddObjectToObject(d, "torch_distributed");
    cJSON_AddBoolToObject(td, "enabled", 1);
    cJSON *smd = cJSON_AddObjectToObject(d, "smdistributed");
    cJSON *mp = cJSON_AddObjectToObject(smd, "modelparallel");
    cJSON_AddBoolToObject(mp, "enabled", 1);
    cJSON_AddItemToObject(mp, "parameters", cJSON_Duplicate(j->params, 1));
    return d;
}

static void header(FILE *f, const smp2_job *j)
{
    const plan_layout *l = j->l;
    char text[3072], sim[64] = "";
    snprintf(text, sizeof text, "SageMaker training job (SageMaker model parallel v2) for plan "
             "#1 of: %s", j->command_line);
    launch__comment_block(f, text);
    launch__comment_block(f, "(the first row of the table that command prints without --emit: "
                          "ranked by the simulated step when the top plans are simulated)");
    snprintf(text, sizeof text,
             "Model %s on %d x %s; plan: tp %d, cp %d, dp %d, micro-batch %d x %d, recompute "
             "%s%s, sharding %s over %d ranks, %s.",
             j->m->name, j->c->nodes, j->instance_type, l->tp, l->cp, l->dp, l->micro_batch,
             l->microbatches, plan_recompute_name(l->recompute),
             l->offload_activations ? " (offloaded)" : "", plan_sharding_name(l->sharding),
             j->shard_degree, plan_precision_name(l->precision));
    launch__comment_block(f, text);
    if (j->sim_step_s > 0)
        snprintf(sim, sizeof sim, ", simulated %.3f s", j->sim_step_s);
    char band[520] = ""; /* ASCII: a script */
    if (j->band_pct > 0)
        snprintf(band, sizeof band, " +-%.0f %% (%s)", j->band_pct, j->band_basis);
    snprintf(text, sizeof text, "Predicted step %.3f s%s%s; needs %.1f GiB of the GPU's %.1f "
             "GiB.",
             j->e->time.step_s, band, sim, plan_mem_need_bytes(&j->e->mem) / GIB,
             j->e->capacity_bytes / GIB);
    launch__comment_block(f, text);
    fprintf(f, "#\n");
    for (int i = 0; i < j->nnotes; i++)
        launch__comment_block(f, j->notes[i]);
    launch__comment_block(f, "Amazon SageMaker Developer Guide: [ref] distributed-model-parallel-"
                          "v2-reference; [use] model-parallel-use-api-v2; [sup] distributed-"
                          "model-parallel-support-v2; [mp] model-parallel-core-features-v2-"
                          "mixed-precision; [tp] model-parallel-core-features-v2-tensor-"
                          "parallelism; [bp] model-parallel-best-practices-v2.");
}

static void emit_estimator(FILE *f, const smp2_job *j, const cJSON *dist)
{
    header(f, j);
    fputs("import sagemaker\nfrom sagemaker.pytorch import PyTorch\n\n", f);
    fputs("distribution = ", f);
    launch__py_value(f, dist, 0);
    fputs("\n\nestimator = PyTorch(\n"
          "    # placeholder: your FSDP training script calling torch.sagemaker.init()\n"
          "    entry_point=",
          f);
    launch__py_str(f, ENTRY_POINT);
    fputs(",\n    # or the ARN of an IAM role SageMaker can assume\n"
          "    role=sagemaker.get_execution_role(),\n    instance_type=",
          f);
    launch__py_str(f, j->instance_type);
    fprintf(f, ",\n    instance_count=%d,\n    framework_version=", j->c->nodes);
    launch__py_str(f, SMP2_FW_VERSION);
    fputs(",\n    py_version=", f);
    launch__py_str(f, SMP2_PY_VERSION);
    fputs(",\n    distribution=distribution,\n    # the arguments your script reads\n"
          "    hyperparameters={",
          f);
    launch__py_str(f, BATCH_ARG);
    fprintf(f, ": %d, ", j->l->micro_batch);
    launch__py_str(f, ACCUM_ARG);
    fprintf(f, ": %d},\n)\n"
               "# estimator.fit(...) with your data channels starts the job\n",
            j->l->microbatches);
}

static cJSON *estimator_json(const smp2_job *j, const cJSON *dist)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "plan_rank", 1);
    cJSON_AddStringToObject(s, "library", "SageMaker model parallelism v" SMP2_VERSION);
    cJSON *est = cJSON_AddObjectToObject(s, "estimator");
    cJSON_AddStringToObject(est, "entry_point", ENTRY_POINT);
    cJSON_AddNullToObject(est, "role");
    cJSON_AddStringToObject(est, "instance_type", j->instance_type);
    cJSON_AddNumberToObject(est, "instance_count", j->c->nodes);
    cJSON_AddStringToObject(est, "framework_version", SMP2_FW_VERSION);
    cJSON_AddStringToObject(est, "py_version", SMP2_PY_VERSION);
    cJSON_AddItemToObject(est, "distribution", cJSON_Duplicate(dist, 1));
    cJSON *hp = cJSON_AddObjectToObject(est, "hyperparameters");
    cJSON_AddNumberToObject(hp, BATCH_ARG, j->l->micro_batch);
    cJSON_AddNumberToObject(hp, ACCUM_ARG, j->l->microbatches);
    cJSON_AddNumberToObject(s, "global_batch", (double)j->l->global_batch);
    cJSON *notes = cJSON_AddArrayToObject(s, "notes");
    for (int i = 0; i < j->nnotes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(j->notes[i]));
    return s;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

int launch__smp2_check(const char *what, const launch_plan *p, st_err *err)
{
    smp2_job j;
    int rc = job_make(what, p, 0, &j, err);
    job_fini(&j);
    return rc;
}

int launch__smp2_write(FILE *f, const char *what, const launch_plan *p, st_err *err)
{
    smp2_job j;
    int rc = job_make(what, p, 1, &j, err);
    if (rc == ST_OK) {
        cJSON *dist = distribution_json(&j);
        if (!dist)
            rc = ST_RAISE(err, ST_ENOMEM, "--emit %s: out of memory", what);
        else
            emit_estimator(f, &j, dist);
        cJSON_Delete(dist);
    }
    job_fini(&j);
    return rc;
}

cJSON *launch__smp2_json(const char *what, const launch_plan *p, st_err *err)
{
    smp2_job j;
    cJSON *out = NULL;
    if (job_make(what, p, 1, &j, err) == ST_OK) {
        cJSON *dist = distribution_json(&j);
        out = dist ? estimator_json(&j, dist) : NULL;
        cJSON_Delete(dist);
        if (!out)
            ST_RAISE(err, ST_ENOMEM, "--emit %s: out of memory", what);
    }
    job_fini(&j);
    return out;
}
