/*
 * launch_stacks.c: the launch of every stack but SageMaker's (see
 * launch_int.h): each builder turns the plan into its stack's own words,
 * argument for argument, and refuses (one line, naming the knob) what its
 * stack cannot express. Every name written is one its stack reads, from
 * the sources below; tests/fixtures/stack_args/ lists them, cited, and the
 * tests check every emitted name against those lists.
 *
 * Sources:
 *   [megatron]  NVIDIA/Megatron-LM megatron/training/arguments.py (read at
 *               commit 000c4ac2, 2025; the Megatron-Core arguments of the
 *               2024 releases): _add_network_size_args, _add_training_args,
 *               _add_distributed_args, _add_mixed_precision_args,
 *               _add_transformer_engine_args, _add_tokenizer_args,
 *               _add_data_args, and validate_args (CUDA_DEVICE_MAX_CONNECTIONS
 *               must be 1 with tensor or context parallelism; sequence length
 *               a multiple of 2 x context parallel size; --tp-comm-overlap
 *               needs --sequence-parallel; --overlap-param-gather needs the
 *               distributed optimizer and --overlap-grad-reduce)
 *   [mds]       Megatron-DeepSpeed megatron/training/arguments.py (process_args:
 *               the upstream arguments plus _add_zero_args --zero-stage,
 *               _add_activation_checkpoint_args --deepspeed-activation-
 *               checkpointing, --num-key-value-heads, --no-pipeline-parallel,
 *               --partition-method / --custom-partition) and
 *               deepspeed.add_config_arguments (--deepspeed, --deepspeed_config)
 *   [dsconfig]  DeepSpeed configuration JSON (deepspeed/runtime/constants.py,
 *               deepspeed/runtime/zero/config.py): train_batch_size,
 *               train_micro_batch_size_per_gpu, gradient_accumulation_steps,
 *               zero_optimization.stage ...
 *   [dsrunner]  deepspeed/launcher/runner.py: --hostfile, --num_nodes, --num_gpus
 *   [titan]     pytorch/torchtitan torchtitan/config_manager.py (commit
 *               0011fb90): JobConfig's [job], [model], [training],
 *               [experimental], [activation_checkpoint], [float8]; train.py
 *               --job.config_file; Llama 3 flavors in torchtitan/models/llama
 *               (8B, 70B, 405B: train_configs/llama3_*.toml); its Attention
 *               (models/llama/model.py: head_dim = dim // n_heads, causal
 *               scaled_dot_product_attention over the whole sequence)
 *   [fsdp]      PyTorch torch/distributed/fsdp (FullyShardedDataParallel's
 *               keyword arguments, ShardingStrategy, MixedPrecision,
 *               BackwardPrefetch)
 *   [fsdp2]     PyTorch 2.4+ torch/distributed/_composable/fsdp
 *               (fully_shard(module, mesh=, reshard_after_forward=,
 *               mp_policy=), MixedPrecisionPolicy(param_dtype, reduce_dtype);
 *               a 2-D mesh is HSDP: replicate over dim 0, shard over dim 1),
 *               torch/distributed/device_mesh.py init_device_mesh,
 *               torch/distributed/tensor/parallel parallelize_module
 *   [maxtext]   AI-Hypercomputer/maxtext MaxText/configs/base.yml (commit
 *               000e9355): the keys MaxText/train.py takes as key=value
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "common/units.h"
#include "launch/launch_int.h"
#include "planner/plan_framework.h"

#define SRC_TORCHRUN "[torchrun] pytorch torch/distributed/run.py: --nnodes, --nproc-per-node, " \
                     "--rdzv-id, --rdzv-backend, --rdzv-endpoint."

static int refuse(const launch_job *j, st_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(const launch_job *j, st_err *err, const char *fmt, ...)
{
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return ST_RAISE(err, ST_EINVAL, "--emit %s: %s", j->kind, why);
}

static void env_set(launch_job *j, const char *name, const char *value)
{
    cJSON_AddStringToObject(j->env, name, value);
}

/* A whole number as an argument. */
static void arg_int(launch_job *j, const char *opt, long long v)
{
    launch__arg(j, opt);
    launch__argf(j, "%lld", v);
}

/* The stages in the middle (all but the first and last) hold the same
 * number of layers: Megatron's first/last flags express the split. */
static int middle_even(const launch_job *j)
{
    for (int i = 2; i < j->l->pp - 1; i++)
        if (j->stage_layers[i] != j->stage_layers[1])
            return 0;
    return 1;
}

/* Layers of model chunk k in model order, of the plan's pp x v chunks: the
 * chunk of rank k % pp numbered k / pp (the interleaved schedule's order:
 * Narayanan et al. 2021, Sec. 2.2; Megatron's and torchtitan's looped
 * schedules place stage k on rank k % pp), each rank's share of layers
 * split evenly over its v chunks, the first ones taking the remainder (as
 * exec_params.c splits them). */
static int chunk_layers(const launch_job *j, int k)
{
    const plan_layout *l = j->l;
    int v = l->schedule == PLAN_SCHED_VIRTUAL ? l->virtual_stages : 1;
    int rank = k % l->pp, c = k / l->pp, n = j->stage_layers[rank];
    return n / v + (c < n % v);
}

static int nchunks(const launch_job *j)
{
    return j->l->pp * (j->l->schedule == PLAN_SCHED_VIRTUAL ? j->l->virtual_stages : 1);
}

/* The learning-rate arguments Megatron requires a value for; the plan says
 * nothing about them: placeholders, said so. */
static void megatron_lr(launch_job *j)
{
    launch__arg(j, "--lr");
    launch__arg(j, "3.0e-4");
    launch__arg(j, "--min-lr");
    launch__arg(j, "3.0e-5");
    launch__arg(j, "--lr-decay-style");
    launch__arg(j, "cosine");
    launch__arg(j, "--lr-warmup-fraction");
    launch__arg(j, "0.01");
}

/* The model's shape as Megatron names it ([megatron] network size). */
static void megatron_model(launch_job *j, int mds)
{
    const plan_model *m = j->m;
    arg_int(j, "--num-layers", m->layers);
    arg_int(j, "--hidden-size", m->hidden);
    arg_int(j, "--ffn-hidden-size", m->ffn);
    arg_int(j, "--num-attention-heads", m->heads);
    /* [megatron] [mds] --kv-channels: "Projection weights dimension in
     * multi-head attention", hidden / heads when not given: the head size */
    if (plan_model_attn_width(m) != m->hidden)
        arg_int(j, "--kv-channels", plan_model_head_dim(m));
    if (m->kv_heads != m->heads) {
        if (mds) /* [mds] */
            arg_int(j, "--num-key-value-heads", m->kv_heads);
        else {
            launch__arg(j, "--group-query-attention");
            arg_int(j, "--num-query-groups", m->kv_heads);
        }
    }
    arg_int(j, "--seq-length", m->seq);
    arg_int(j, "--max-position-embeddings", m->seq);
    if (plan_model_local_layers(m) > 0) {
        /* [megatron] --window-size LEFT,RIGHT (Transformer Engine's
         * window_size: a query at i sees keys i - LEFT to i + RIGHT, the
         * causal mask taking the right side), so W keys ending at the query
         * are W-1,0; --window-attn-skip-freq N: "one full attention layer
         * after (N-1) SWA layers", the model's pattern (plan_model) */
        launch__arg(j, "--window-size");
        launch__argf(j, "%lld,0", (long long)m->sliding_window - 1);
        if (m->sliding_window_pattern > 0)
            arg_int(j, "--window-attn-skip-freq", m->sliding_window_pattern);
    }
    if (m->arch == PLAN_ARCH_LLAMA) {
        launch__arg(j, "--position-embedding-type");
        launch__arg(j, "rope");
        launch__arg(j, "--normalization");
        launch__arg(j, "RMSNorm");
        launch__arg(j, "--disable-bias-linear");
    }
    /* a gated MLP as SwiGLU: any GLU's shape and cost (Gemma 2's GeGLU
     * too); the planner does not keep the activation itself, and this
     * release's --quick-geglu is GELU's sigmoid form, not Gemma's tanh one */
    if (plan_model_gated(m))
        launch__arg(j, "--swiglu");
    if (!m->tied_embedding)
        launch__arg(j, "--untie-embeddings-and-output-weights");
    if (!plan_model_dropout(m)) {
        launch__arg(j, "--attention-dropout");
        launch__arg(j, "0");
        launch__arg(j, "--hidden-dropout");
        launch__arg(j, "0");
    }
    /* synthetic data and a tokenizer of the model's vocabulary: the job runs
     * as printed; point it at your data with --data-path and a tokenizer */
    launch__arg(j, "--mock-data");
    launch__arg(j, "--tokenizer-type");
    launch__arg(j, "NullTokenizer");
    arg_int(j, "--vocab-size", m->vocab);
}

static void megatron_precision(launch_job *j)
{
    switch (j->l->precision) {
    case PLAN_PREC_BF16: launch__arg(j, "--bf16"); break;
    case PLAN_PREC_FP16: launch__arg(j, "--fp16"); break;
    case PLAN_PREC_FP8:
        /* Transformer Engine's FP8 linears, the rest bf16 ([megatron]
         * --fp8-format: e4m3 or hybrid, E4M3 forward and E5M2 backward) */
        launch__arg(j, "--bf16");
        launch__arg(j, "--fp8-format");
        launch__arg(j, "hybrid");
        break;
    case PLAN_PREC_FP32:
    default: break; /* Megatron's default */
    }
}

static void recompute_args(launch_job *j)
{
    const plan_layout *l = j->l;
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_layers > 0) {
        /* [megatron] --recompute-method block: "recompute the input
         * activations of only a set number of individual Transformer layers
         * per pipeline stage" */
        launch__arg(j, "--recompute-granularity");
        launch__arg(j, "full");
        launch__arg(j, "--recompute-method");
        launch__arg(j, "block");
        arg_int(j, "--recompute-num-layers", l->recompute_layers);
    } else if (l->recompute == PLAN_RECOMP_FULL) {
        launch__arg(j, "--recompute-granularity");
        launch__arg(j, "full");
        launch__arg(j, "--recompute-method");
        launch__arg(j, "uniform");
        arg_int(j, "--recompute-num-layers", l->recompute_group > 0 ? l->recompute_group : 1);
    } else if (l->recompute == PLAN_RECOMP_SELECTIVE) {
        launch__arg(j, "--recompute-granularity");
        launch__arg(j, "selective");
    }
}

/* ------------------------------------------------------------------------ */
/* Megatron-LM (Megatron-Core)                                               */
/* ------------------------------------------------------------------------ */

static int build_megatron(launch_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    const plan_model *m = j->m;
    j->title = "Megatron-LM (Megatron-Core) launch";
    j->launcher = LAUNCH_TORCHRUN;
    j->sources = "[megatron] NVIDIA/Megatron-LM megatron/training/arguments.py (commit 000c4ac2). "
                 SRC_TORCHRUN;
    if (l->pp > 1 && l->schedule != PLAN_SCHED_INTERLEAVED && l->schedule != PLAN_SCHED_VIRTUAL)
        return refuse(j, err, "schedule %s: Megatron-LM runs 1f1b and interleaved virtual "
                      "stages", plan_schedule_name(l->schedule));
    if (l->sharding == PLAN_SHARD_GRADIENTS || l->sharding == PLAN_SHARD_PARAMS)
        return refuse(j, err, "sharding %s: Megatron-LM's distributed optimizer shards the "
                      "optimizer state (sharding optimizer)", plan_sharding_name(l->sharding));
    if (l->cp > 1 && m->seq % (2 * l->cp) != 0)
        return refuse(j, err, "context parallel %d with sequence %lld: Megatron-LM needs the "
                      "sequence a multiple of 2 x %d", l->cp, (long long)m->seq, l->cp);
    if (l->offload_activations)
        return refuse(j, err, "activation offload: not a Megatron-LM knob of this plan's model");

    /* [megatron] validate_args: "Using tensor model parallelism or context
     * parallelism require setting the environment variable
     * CUDA_DEVICE_MAX_CONNECTIONS to 1" */
    if (l->tp > 1 || l->cp > 1)
        env_set(j, "CUDA_DEVICE_MAX_CONNECTIONS", "1");

    launch__arg(j, "pretrain_gpt.py");
    arg_int(j, "--tensor-model-parallel-size", l->tp);
    arg_int(j, "--pipeline-model-parallel-size", l->pp);
    if (l->cp > 1)
        arg_int(j, "--context-parallel-size", l->cp);
    int virt = l->pp > 1 && l->schedule == PLAN_SCHED_VIRTUAL;
    int even_chunks = 1;
    for (int k = 1; k < nchunks(j); k++)
        even_chunks &= chunk_layers(j, k) == chunk_layers(j, 0);
    /* [megatron] validate_args: at most one of --num-layers-per-virtual-
     * pipeline-stage, --num-virtual-stages-per-pipeline-rank and
     * --pipeline-model-parallel-layout */
    int emb_place, loss_place;
    if (plan_split_embedding_loss(m, l, &emb_place, &loss_place)) {
        /* [megatron] --account-for-embedding-in-pipeline-split, --account-
         * for-loss-in-pipeline-split: the embedding (the loss) "treated as
         * a standard transformer layer in the context of partition and
         * placement"; the split is the stack's own (plan_stage_layers) */
        if (virt)
            arg_int(j, "--num-virtual-stages-per-pipeline-rank", l->virtual_stages);
        if (emb_place)
            launch__arg(j, "--account-for-embedding-in-pipeline-split");
        if (loss_place)
            launch__arg(j, "--account-for-loss-in-pipeline-split");
        launch__note(j, "The layers do not split evenly over the pipeline's chunks: the "
                        "embedding and the loss each take a layer's place in the split "
                        "(Megatron-Core 0.11 on).");
    } else {
        if (virt && even_chunks)
            arg_int(j, "--num-layers-per-virtual-pipeline-stage", chunk_layers(j, 0));
        if ((virt && !even_chunks) || (j->uneven && !middle_even(j))) {
            /* [megatron] --pipeline-model-parallel-layout: E embedding, L
             * loss, t a transformer layer, stages (pp x virtual, in model
             * order) split by | */
            char layout[8192];
            size_t u = 0;
            int n = nchunks(j);
            for (int k = 0; k < n && u + 32 < sizeof layout; k++)
                u += (size_t)snprintf(layout + u, sizeof layout - u, "%s%st*%d%s",
                                      k ? "|" : "", k == 0 ? "E," : "", chunk_layers(j, k),
                                      k == n - 1 ? ",L" : "");
            launch__arg(j, "--pipeline-model-parallel-layout");
            launch__arg(j, layout);
        } else if (j->uneven) {
            /* [megatron] --decoder-first/last-pipeline-num-layers: "Default
             * None is even split of transformer layers" */
            int p = l->pp;
            if (j->stage_layers[0] != j->stage_layers[1] || p == 2)
                arg_int(j, "--decoder-first-pipeline-num-layers", j->stage_layers[0]);
            if (j->stage_layers[p - 1] != j->stage_layers[p > 2 ? 1 : 0] || p == 2)
                arg_int(j, "--decoder-last-pipeline-num-layers", j->stage_layers[p - 1]);
        }
        if (j->uneven)
            launch__note(j, "The split of layers over pipeline stages is uneven (the planner's "
                            "model finds it faster than the even one); Megatron-LM takes it "
                            "as written here.");
    }
    if (l->tp > 1 && l->sequence_parallel)
        launch__arg(j, "--sequence-parallel");
    if (l->tp > 1 && l->sequence_parallel && l->tp_overlap >= 2) {
        launch__arg(j, "--tp-comm-overlap");
        launch__note(j, "--tp-comm-overlap: the plan's times assume tensor-parallel "
                          "communication pipelined behind its GEMMs (Transformer Engine "
                          "userbuffers); it needs Transformer Engine built with userbuffers.");
    }
    if (l->sharding == PLAN_SHARD_OPTIMIZER)
        launch__arg(j, "--use-distributed-optimizer");
    if (l->dp * l->cp > 1 && l->dp_overlap) {
        launch__arg(j, "--overlap-grad-reduce");
        if (l->sharding == PLAN_SHARD_OPTIMIZER)
            launch__arg(j, "--overlap-param-gather");
    }
    recompute_args(j);
    megatron_precision(j);
    if (l->fp32_grads && l->precision != PLAN_PREC_BF16 && l->precision != PLAN_PREC_FP32)
        launch__arg(j, "--accumulate-allreduce-grads-in-fp32");
    arg_int(j, "--micro-batch-size", l->micro_batch);
    arg_int(j, "--global-batch-size", l->global_batch);
    megatron_model(j, 0);
    arg_int(j, "--train-iters", j->train_steps);
    megatron_lr(j);
    launch__note(j, "pretrain_gpt.py is Megatron-LM's GPT training script (run from the "
                      "repository); --mock-data and the NullTokenizer train on synthetic tokens "
                      "of the model's vocabulary: replace them with --data-path and your "
                      "tokenizer. The learning-rate schedule is a placeholder; --train-iters "
                      "trains --tokens (%.3g).", j->p->tokens);
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* Megatron-DeepSpeed                                                        */
/* ------------------------------------------------------------------------ */

static int build_deepspeed(launch_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    j->title = "Megatron-DeepSpeed launch";
    j->launcher = LAUNCH_DEEPSPEED;
    j->sources = "[mds] Megatron-DeepSpeed megatron/training/arguments.py and "
                 "deepspeed.add_config_arguments; [dsconfig] DeepSpeed configuration JSON "
                 "(deepspeed/runtime/constants.py, runtime/zero/config.py); [dsrunner] "
                 "deepspeed/launcher/runner.py. " SRC_TORCHRUN;
    if (l->pp > 1 && l->schedule != PLAN_SCHED_INTERLEAVED)
        return refuse(j, err, "schedule %s: DeepSpeed's pipeline engine runs 1f1b",
                      plan_schedule_name(l->schedule));
    const plan_framework *fw = plan_framework_get(l->framework);
    if (l->cp > 1 && !fw->cp_all_to_all)
        return refuse(j, err, "context parallel %d: not a knob of %s (DeepSpeed-Ulysses came "
                      "in 2023: --framework megatron-deepspeed@2023)", l->cp, fw->label);
    if (l->cp > 1 && l->sequence_parallel)
        return refuse(j, err, "context parallel %d with sequence parallelism: [mds] "
                      "--ds-sequence-parallel-size 'cannot be combined with --sequence-parallel'",
                      l->cp);
    if (l->recompute == PLAN_RECOMP_SELECTIVE)
        return refuse(j, err, "recompute selective: DeepSpeed checkpoints whole layers");
    if (plan_model_local_layers(j->m) > 0)
        return refuse(j, err, "sliding window of %lld tokens: Megatron-DeepSpeed's network-size "
                      "arguments have no sliding-window attention (Megatron-LM's --window-size "
                      "has: --framework megatron)", (long long)j->m->sliding_window);
    if (l->tp > 1)
        env_set(j, "CUDA_DEVICE_MAX_CONNECTIONS", "1");

    int stage = l->sharding == PLAN_SHARD_OPTIMIZER   ? 1
                : l->sharding == PLAN_SHARD_GRADIENTS ? 2
                : l->sharding == PLAN_SHARD_PARAMS    ? 3
                                                      : 0;
    /* the DeepSpeed configuration ([dsconfig]) */
    cJSON *ds = cJSON_CreateObject();
    if (!ds)
        return ST_RAISE(err, ST_ENOMEM, "--emit deepspeed: out of memory");
    cJSON_AddNumberToObject(ds, "train_batch_size", (double)l->global_batch);
    cJSON_AddNumberToObject(ds, "train_micro_batch_size_per_gpu", l->micro_batch);
    cJSON_AddNumberToObject(ds, "gradient_accumulation_steps", l->microbatches);
    cJSON_AddNumberToObject(ds, "gradient_clipping", 1.0);
    cJSON_AddNumberToObject(ds, "steps_per_print", 10);
    cJSON *zo = cJSON_AddObjectToObject(ds, "zero_optimization");
    cJSON_AddNumberToObject(zo, "stage", stage);
    if (stage > 0) {
        /* the plan's gradient bucket, in elements of 2 bytes */
        double bucket = l->dp_bucket_bytes > 0 && l->dp_bucket_bytes < 1e20
                            ? floor(l->dp_bucket_bytes / 2.0)
                            : 5e8;
        cJSON_AddNumberToObject(zo, "reduce_bucket_size", bucket);
        cJSON_AddBoolToObject(zo, "overlap_comm", l->dp_overlap);
        cJSON_AddBoolToObject(zo, "contiguous_gradients", 1);
    }
    if (l->precision == PLAN_PREC_BF16) {
        cJSON *b = cJSON_AddObjectToObject(ds, "bf16");
        cJSON_AddBoolToObject(b, "enabled", 1);
    } else if (l->precision == PLAN_PREC_FP16) {
        cJSON *h = cJSON_AddObjectToObject(ds, "fp16");
        cJSON_AddBoolToObject(h, "enabled", 1);
        cJSON_AddNumberToObject(h, "loss_scale", 0); /* 0: dynamic loss scaling */
    } else if (l->precision == PLAN_PREC_FP8) {
        cJSON_Delete(ds);
        return refuse(j, err, "fp8: Megatron-DeepSpeed has no FP8 linears");
    }
    if (l->recompute == PLAN_RECOMP_FULL) {
        cJSON *ac = cJSON_AddObjectToObject(ds, "activation_checkpointing");
        cJSON_AddBoolToObject(ac, "partition_activations", 0);
        cJSON_AddBoolToObject(ac, "contiguous_memory_optimization", 0);
        cJSON_AddBoolToObject(ac, "cpu_checkpointing", 0);
    }
    cJSON_AddBoolToObject(ds, "wall_clock_breakdown", 0);
    char *text = cJSON_Print(ds);
    if (!text) {
        cJSON_Delete(ds);
        return ST_RAISE(err, ST_ENOMEM, "--emit deepspeed: out of memory");
    }
    cJSON_AddStringToObject(j->files, "ds_config.json", text);
    free(text);
    cJSON_AddItemToObject(j->configs, "ds_config.json", ds);

    launch__arg(j, "pretrain_gpt.py");
    arg_int(j, "--tensor-model-parallel-size", l->tp);
    arg_int(j, "--pipeline-model-parallel-size", l->pp);
    if (l->pp == 1)
        launch__arg(j, "--no-pipeline-parallel");
    if (j->uneven) {
        /* [mds] --partition-method custom with --custom-partition: "divide
         * 32 layers to 6 PP stages: 5 5 5 6 6 5" */
        launch__arg(j, "--partition-method");
        launch__arg(j, "custom");
        launch__arg(j, "--custom-partition");
        for (int i = 0; i < l->pp; i++)
            launch__argf(j, "%d", j->stage_layers[i]);
        launch__note(j, "The split of layers over pipeline stages is uneven (faster by the "
                          "planner's model); --custom-partition gives it to DeepSpeed's "
                          "PipelineModule.");
    }
    if (l->cp > 1)
        /* [mds] DeepSpeed-Ulysses: "Enable DeepSpeed's sequence parallel" */
        arg_int(j, "--ds-sequence-parallel-size", l->cp);
    arg_int(j, "--micro-batch-size", l->micro_batch);
    arg_int(j, "--global-batch-size", l->global_batch);
    if (l->recompute == PLAN_RECOMP_FULL)
        launch__arg(j, "--deepspeed-activation-checkpointing");
    recompute_args(j);
    megatron_precision(j);
    megatron_model(j, 1);
    arg_int(j, "--train-iters", j->train_steps);
    megatron_lr(j);
    arg_int(j, "--zero-stage", stage);
    launch__arg(j, "--deepspeed");
    launch__arg(j, "--deepspeed_config");
    launch__arg(j, "ds_config.json");
    launch__note(j, "pretrain_gpt.py is Megatron-DeepSpeed's GPT training script; "
                      "ds_config.json carries the batch, ZeRO stage %d and precision the plan "
                      "was timed with; --mock-data trains on synthetic tokens (replace with "
                      "--data-path and your tokenizer); the learning-rate schedule is a "
                      "placeholder.", stage);
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* torchtitan                                                                */
/* ------------------------------------------------------------------------ */

/* The Llama 3 flavor torchtitan registers for a shape, or NULL ([titan]
 * train_configs/llama3_8b.toml, llama3_70b.toml, llama3_405b.toml with the
 * published Llama 3 shapes). */
static const char *titan_flavor(const plan_model *m)
{
    static const struct {
        const char *flavor;
        int64_t layers, hidden, heads, kv_heads, vocab;
    } f[] = {{"8B", 32, 4096, 32, 8, 128256},
             {"70B", 80, 8192, 64, 8, 128256},
             {"405B", 126, 16384, 128, 8, 128256}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (m->layers == f[i].layers && m->hidden == f[i].hidden && m->heads == f[i].heads &&
            m->kv_heads == f[i].kv_heads && m->vocab == f[i].vocab)
            return f[i].flavor;
    return NULL;
}

static int build_torchtitan(launch_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    const plan_model *m = j->m;
    j->title = "torchtitan launch";
    j->launcher = LAUNCH_TORCHRUN;
    j->sources = "[titan] pytorch/torchtitan torchtitan/config_manager.py (commit 0011fb90), "
                 "train_configs/llama3_70b.toml; train.py --job.config_file. " SRC_TORCHRUN;
    if (m->arch != PLAN_ARCH_LLAMA)
        return refuse(j, err, "a %s model: torchtitan trains its Llama models (model.name "
                      "llama3)", m->arch == PLAN_ARCH_GPT ? "GPT" : "non-Llama");
    /* [titan] torchtitan/models/llama/model.py, Attention: head_dim = dim //
     * n_heads, and F.scaled_dot_product_attention(..., is_causal=True) */
    if (plan_model_attn_width(m) != m->hidden)
        return refuse(j, err, "head size %lld: torchtitan's Llama attention takes dim / n_heads "
                      "= %lld (model.py, Attention.head_dim); no flavor sets it",
                      (long long)plan_model_head_dim(m), (long long)(m->hidden / m->heads));
    if (plan_model_local_layers(m) > 0)
        return refuse(j, err, "sliding window of %lld tokens: torchtitan's Llama attention is "
                      "causal over the whole sequence (model.py: scaled_dot_product_attention "
                      "with is_causal=True)", (long long)m->sliding_window);
    if (l->precision == PLAN_PREC_FP16)
        return refuse(j, err, "fp16: torchtitan's training.mixed_precision_param takes "
                      "bfloat16 or float32");
    const char *sched = NULL;
    if (l->pp > 1)
        switch (l->schedule) {
        case PLAN_SCHED_SIMPLE: sched = "gpipe"; break;
        case PLAN_SCHED_INTERLEAVED: sched = "1f1b"; break;
        case PLAN_SCHED_VIRTUAL: sched = "interleaved_1f1b"; break;
        default:
            return refuse(j, err, "schedule %s: torchtitan's pipeline_parallel_schedule takes "
                          "1f1b, gpipe, interleaved_1f1b", plan_schedule_name(l->schedule));
        }
    if (l->pp == 1 && l->microbatches > 1)
        return refuse(j, err, "%d microbatches without a pipeline: torchtitan has no gradient "
                      "accumulation; plan with --microbatches 1", l->microbatches);
    if (l->tp > 1 && !l->sequence_parallel)
        return refuse(j, err, "sequence parallel off: torchtitan's tensor parallelism always "
                      "shards the norms over the sequence; plan with --sequence-parallel on");
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_group > 1)
        return refuse(j, err, "recompute full/%d: torchtitan checkpoints every layer",
                      l->recompute_group);
    if (l->offload_activations)
        return refuse(j, err, "activation offload: not a torchtitan knob");
    /* [titan] selective_ac_option N: every Nth block of a stage checkpointed
     * whole; the plan's recompute_layers R of each chunk's Lc layers is
     * N = Lc / R where R divides every chunk's count */
    int every = 0;
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_layers > 0) {
        int lc = chunk_layers(j, 0), r = l->recompute_layers;
        for (int k = 0; k < nchunks(j) && lc > 0; k++)
            if (chunk_layers(j, k) != lc)
                lc = 0;
        if (lc <= 0 || r > lc || lc % r != 0)
            return refuse(j, err, "recompute_layers %d: torchtitan checkpoints every Nth layer of "
                          "a stage (selective_ac_option N), so the count must divide each model "
                          "chunk's layers (%d)", r, chunk_layers(j, 0));
        every = lc / r;
    }
    const char *flavor = titan_flavor(m);

    char *toml = NULL;
    size_t len = 0;
    FILE *t = open_memstream(&toml, &len);
    if (!t)
        return ST_RAISE(err, ST_ENOMEM, "--emit torchtitan: out of memory");
    fputs("# torchtitan job config written by smdplan (see the launch script's comments)\n", t);
    fputs("[job]\ndump_folder = \"./outputs\"\ndescription = ", t);
    char desc[200];
    snprintf(desc, sizeof desc, "%s, plan #1 of smdplan", m->name);
    launch__toml_str(t, desc);
    fputs("\n\n[model]\nname = \"llama3\"\nflavor = ", t);
    launch__toml_str(t, flavor ? flavor : "smdplan");
    fputs("\nnorm_type = \"rmsnorm\"\n"
          "tokenizer_path = \"./torchtitan/datasets/tokenizer/original/tokenizer.model\"\n", t);
    /* training.batch_size is per data-parallel rank: global = batch_size x
     * dp ([titan], "Batch size"; the 70B config's 8 on 64 GPUs with TP 8) */
    fprintf(t, "\n[training]\nbatch_size = %lld\nseq_len = %lld\nsteps = %lld\n",
            (long long)(l->global_batch / l->dp), (long long)m->seq, (long long)j->train_steps);
    int shard = l->sharding == PLAN_SHARD_PARAMS || l->sharding == PLAN_SHARD_GRADIENTS;
    fprintf(t, "data_parallel_replicate_degree = %d\ndata_parallel_shard_degree = %d\n",
            shard ? 1 : l->dp, shard ? l->dp : 1);
    fprintf(t, "tensor_parallel_degree = %d\n", l->tp);
    fprintf(t, "mixed_precision_param = \"%s\"\n",
            l->precision == PLAN_PREC_FP32 ? "float32" : "bfloat16");
    fprintf(t, "mixed_precision_reduce = \"float32\"\ncompile = %s\ndataset = \"c4\"\n",
            l->compiled ? "true" : "false");
    fprintf(t, "\n[experimental]\npipeline_parallel_degree = %d\n", l->pp);
    /* [titan] --experimental.enable_async_tensor_parallel: "Whether to
     * apply async tensor parallel (currently only effective when compile is
     * enabled)"; the plan's TP overlap (plan_framework_check asks compile) */
    if (l->tp > 1 && l->tp_overlap >= 2)
        fputs("enable_async_tensor_parallel = true\n", t);
    if (l->cp > 1)
        fprintf(t, "context_parallel_degree = %d\n", l->cp);
    if (l->pp > 1) {
        fprintf(t, "pipeline_parallel_schedule = \"%s\"\n", sched);
        fprintf(t, "pipeline_parallel_microbatches = %d\n", l->microbatches);
        /* the first layer of every stage but the first ([titan]: "layers.0,
         * layers.2 will cause the model to be split into 3 stages"); with
         * virtual stages each rank's share is split evenly in v chunks */
        fputs("pipeline_parallel_split_points = [", t);
        for (int k = 1, at = 0; k < nchunks(j); k++) {
            at += chunk_layers(j, k - 1);
            fprintf(t, "%s\"layers.%d\"", k > 1 ? ", " : "", at);
        }
        fputs("]\n", t);
    }
    fprintf(t, "\n[activation_checkpoint]\nmode = \"%s\"\n",
            every > 1                               ? "selective"
            : l->recompute == PLAN_RECOMP_FULL      ? "full"
            : l->recompute == PLAN_RECOMP_SELECTIVE ? "selective"
                                                    : "none");
    if (every > 1)
        fprintf(t, "selective_ac_option = \"%d\"\n", every);
    else if (l->recompute == PLAN_RECOMP_SELECTIVE)
        fputs("selective_ac_option = \"op\"\n", t);
    if (l->precision == PLAN_PREC_FP8)
        fputs("\n[float8]\nenable_float8_linear = true\n", t);
    fclose(t);
    cJSON_AddStringToObject(j->files, "train.toml", toml ? toml : "");
    free(toml);

    launch__arg(j, "train.py");
    launch__arg(j, "--job.config_file");
    launch__arg(j, "train.toml");
    if (!flavor)
        launch__note(j, "torchtitan builds its models from named flavors, and this shape is "
                          "none of Llama 3's (8B, 70B, 405B): register flavor \"smdplan\" in "
                          "torchtitan/models/llama/__init__.py with dim %lld, n_layers %lld, "
                          "n_heads %lld, n_kv_heads %lld, vocab_size %lld and the MLP size %lld.",
                       (long long)m->hidden, (long long)m->layers, (long long)m->heads,
                       (long long)m->kv_heads, (long long)m->vocab, (long long)m->ffn);
    if (l->recompute == PLAN_RECOMP_SELECTIVE)
        launch__note(j, "Selective activation checkpointing \"op\" saves the matrix products' "
                          "outputs and recomputes the rest, close to the attention-core "
                          "recompute the plan was timed with.");
    launch__note(j, "train.py is torchtitan's training script, run from the repository; "
                      "tokenizer_path and dataset are placeholders for yours.");
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* PyTorch FSDP                                                              */
/* ------------------------------------------------------------------------ */

static const char *torch_dtype(plan_precision p)
{
    return p == PLAN_PREC_FP32 ? "torch.float32" : p == PLAN_PREC_FP16 ? "torch.float16"
                                                                       : "torch.bfloat16";
}

/* FSDP2 (the fsdp@2024 release): fully_shard over a device mesh, with
 * DTensor tensor parallelism inside each block when tp > 1. Sharding maps
 * onto reshard_after_forward and the mesh [fsdp2]: params (ZeRO-3) frees
 * the gathered parameters after each block's forward; gradients (ZeRO-2)
 * keeps them to the backward; none shards over a dimension of one and
 * replicates over the data parallel ranks (HSDP with shard size 1). */
static int build_fsdp2(launch_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    j->title = "PyTorch FSDP2 launch";
    j->launcher = LAUNCH_TORCHRUN;
    j->sources = "[fsdp2] PyTorch 2.4+ torch.distributed._composable.fsdp: fully_shard("
                 "module, mesh, reshard_after_forward, mp_policy), MixedPrecisionPolicy("
                 "param_dtype, reduce_dtype); torch.distributed.device_mesh.init_device_mesh; "
                 "torch.distributed.tensor.parallel.parallelize_module. " SRC_TORCHRUN;
    if (l->pp > 1 || l->cp > 1)
        return refuse(j, err, "pp %d, cp %d: a PyTorch FSDP2 script shards data and tensor "
                      "parallelism; torchtitan (--framework torchtitan) adds its pipeline and "
                      "context parallelism", l->pp, l->cp);
    if (l->precision == PLAN_PREC_FP8)
        return refuse(j, err, "fp8: the plan's FSDP2 has no FP8 linears (torchtitan's "
                      "[float8] has)");
    if (l->recompute == PLAN_RECOMP_SELECTIVE)
        return refuse(j, err, "recompute selective: FSDP's activation checkpointing wraps "
                      "whole layers");
    int shard = l->sharding == PLAN_SHARD_NONE ? 1 : l->dp;
    int replicate = l->dp / shard;
    const char *dt = torch_dtype(l->precision);
    char *py = NULL;
    size_t len = 0;
    FILE *p = open_memstream(&py, &len);
    if (!p)
        return ST_RAISE(err, ST_ENOMEM, "--emit fsdp: out of memory");
    fputs("# FSDP2 settings of smdplan's plan #1 (see the launch script's comments). In\n"
          "# train.py: mesh = init_device_mesh(\"cuda\", mesh_shape, mesh_dim_names=\n"
          "# mesh_dim_names); with tp_degree > 1, parallelize_module(block, mesh[\"tp\"],\n"
          "# <your block's ColwiseParallel/RowwiseParallel plan>) for each transformer\n"
          "# block; then fully_shard(block, mesh=mesh[\"dp_replicate\", \"dp_shard\"],\n"
          "# **fsdp_kwargs) for each block and once for the whole model.\n"
          "import torch\n"
          "from torch.distributed._composable.fsdp import MixedPrecisionPolicy\n\n", p);
    fprintf(p, "mesh_shape = (%d, %d, %d)\n"
               "mesh_dim_names = (\"dp_replicate\", \"dp_shard\", \"tp\")\n"
               "tp_degree = %d\n",
            replicate, shard, l->tp, l->tp);
    fprintf(p, "fsdp_kwargs = dict(\n"
               "    reshard_after_forward=%s,\n"
               "    mp_policy=MixedPrecisionPolicy(\n"
               "        param_dtype=%s,\n"
               "        reduce_dtype=%s,\n"
               "    ),\n"
               ")\n",
            l->sharding == PLAN_SHARD_GRADIENTS ? "False" : "True", dt,
            l->fp32_grads ? "torch.float32" : dt);
    fprintf(p, "activation_checkpointing = %s\n", l->recompute == PLAN_RECOMP_FULL ? "True"
                                                                                   : "False");
    /* the plan's step assumes TorchInductor's fused pointwise kernels when
     * compiled, the eager ops' otherwise (plan_eval.c) */
    fprintf(p, "compile = %s  # torch.compile(block) for each transformer block\n",
            l->compiled ? "True" : "False");
    fprintf(p, "micro_batch_size = %d\ngradient_accumulation_steps = %d\nglobal_batch_size = "
               "%lld\nseq_len = %lld\ntrain_steps = %lld\n",
            l->micro_batch, l->microbatches, (long long)l->global_batch, (long long)j->m->seq,
            (long long)j->train_steps);
    fclose(p);
    cJSON_AddStringToObject(j->files, "fsdp_settings.py", py ? py : "");
    free(py);
    launch__arg(j, "train.py");
    launch__note(j, "train.py is a placeholder for your FSDP2 training script: it builds the "
                      "mesh and imports fsdp_kwargs and the batch from fsdp_settings.py%s; with "
                      "activation_checkpointing, wrap each transformer block in torch.distributed."
                      "algorithms._checkpoint.checkpoint_wrapper before fully_shard%s.",
                   l->tp > 1 ? " (torchtitan's parallelize_llama.py is a worked tensor parallel "
                               "plan for Llama blocks)" : "",
                   l->precision == PLAN_PREC_FP16
                       ? "; fp16 needs torch.amp.GradScaler for the loss"
                       : "");
    return ST_OK;
}

static int build_fsdp(launch_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    /* fsdp@2022 is FSDP1 (FullyShardedDataParallel); later releases FSDP2 */
    if (strcmp(plan_framework_get(l->framework)->key, "fsdp@2022") != 0)
        return build_fsdp2(j, err);
    j->title = "PyTorch FSDP launch";
    j->launcher = LAUNCH_TORCHRUN;
    j->sources = "[fsdp] PyTorch torch/distributed/fsdp: FullyShardedDataParallel(sharding_"
                 "strategy, mixed_precision, backward_prefetch, limit_all_gathers, "
                 "use_orig_params), ShardingStrategy, MixedPrecision(param_dtype, "
                 "reduce_dtype, buffer_dtype), BackwardPrefetch. " SRC_TORCHRUN;
    if (l->tp > 1 || l->pp > 1 || l->cp > 1)
        return refuse(j, err, "tp %d, pp %d, cp %d: PyTorch FSDP shards data parallelism only",
                      l->tp, l->pp, l->cp);
    if (l->precision == PLAN_PREC_FP8)
        return refuse(j, err, "fp8: the plan's FSDP has no FP8 linears");
    if (l->recompute == PLAN_RECOMP_SELECTIVE)
        return refuse(j, err, "recompute selective: FSDP's activation checkpointing wraps "
                      "whole layers");
    const char *strategy = l->sharding == PLAN_SHARD_PARAMS      ? "FULL_SHARD"
                           : l->sharding == PLAN_SHARD_GRADIENTS ? "SHARD_GRAD_OP"
                                                                 : "NO_SHARD";
    const char *dt = torch_dtype(l->precision);
    char *py = NULL;
    size_t len = 0;
    FILE *p = open_memstream(&py, &len);
    if (!p)
        return ST_RAISE(err, ST_ENOMEM, "--emit fsdp: out of memory");
    fputs("# FSDP settings of smdplan's plan #1 (see the launch script's comments): wrap the\n"
          "# model with FullyShardedDataParallel(model, auto_wrap_policy=<your transformer\n"
          "# layer class>, **fsdp_kwargs) in train.py.\n"
          "import torch\n"
          "from torch.distributed.fsdp import BackwardPrefetch, MixedPrecision, "
          "ShardingStrategy\n\n", p);
    fprintf(p, "fsdp_kwargs = dict(\n"
               "    sharding_strategy=ShardingStrategy.%s,\n"
               "    mixed_precision=MixedPrecision(\n"
               "        param_dtype=%s,\n"
               "        reduce_dtype=%s,\n"
               "        buffer_dtype=%s,\n"
               "    ),\n"
               "    backward_prefetch=BackwardPrefetch.BACKWARD_PRE,\n"
               "    limit_all_gathers=True,\n"
               "    use_orig_params=True,\n"
               ")\n",
            strategy, dt, l->fp32_grads ? "torch.float32" : dt, dt);
    fprintf(p, "activation_checkpointing = %s\n", l->recompute == PLAN_RECOMP_FULL ? "True"
                                                                                   : "False");
    /* the plan's step assumes TorchInductor's fused pointwise kernels when
     * compiled, the eager ops' otherwise (plan_eval.c) */
    fprintf(p, "compile = %s  # torch.compile(block) for each transformer block\n",
            l->compiled ? "True" : "False");
    fprintf(p, "micro_batch_size = %d\ngradient_accumulation_steps = %d\nglobal_batch_size = "
               "%lld\nseq_len = %lld\ntrain_steps = %lld\n",
            l->micro_batch, l->microbatches, (long long)l->global_batch, (long long)j->m->seq,
            (long long)j->train_steps);
    fclose(p);
    cJSON_AddStringToObject(j->files, "fsdp_settings.py", py ? py : "");
    free(py);
    launch__arg(j, "train.py");
    launch__note(j, "train.py is a placeholder for your FSDP training script: it imports "
                      "fsdp_kwargs and the batch from fsdp_settings.py; with activation_"
                      "checkpointing, apply torch.distributed.algorithms._checkpoint."
                      "checkpoint_wrapper.apply_activation_checkpointing to each transformer "
                      "layer%s.",
                   l->precision == PLAN_PREC_FP16
                       ? "; fp16 needs torch.distributed.fsdp.sharded_grad_scaler."
                         "ShardedGradScaler for the loss"
                       : "");
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* MaxText (JAX)                                                             */
/* ------------------------------------------------------------------------ */

/* remat_policy as the plan recomputes: full, or the policy MaxText names
 * for the outputs it keeps. */
static const char *maxtext_remat(const plan_layout *l)
{
    if (l->recompute != PLAN_RECOMP_FULL)
        return "minimal";
    return l->recompute_saved ? plan_remat_policy_name(l->recompute_saved) : "full";
}

static int build_maxtext(launch_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    const plan_model *m = j->m;
    int gpn = j->c->inst->gpus_per_node;
    j->title = "MaxText (JAX) launch";
    j->launcher = LAUNCH_PER_NODE;
    j->sources = "[maxtext] AI-Hypercomputer/maxtext MaxText/configs/base.yml (commit 000e9355): "
                 "MaxText/train.py CONFIG key=value.";
    if (l->pp > 1)
        return refuse(j, err, "pp %d: this MaxText release (configs/base.yml) has no pipeline "
                      "axis", l->pp);
    if (l->cp > 1)
        return refuse(j, err, "cp %d: not a MaxText axis of this release", l->cp);
    if (l->microbatches > 1)
        return refuse(j, err, "%d microbatches: this MaxText release has no gradient "
                      "accumulation; plan with --microbatches 1", l->microbatches);
    if (l->tp > gpn)
        return refuse(j, err, "tp %d over nodes of %d GPUs: MaxText's tensor axis stays in a "
                      "node (dcn_tensor_parallelism: \"never recommended\")", l->tp, gpn);
    if (l->precision == PLAN_PREC_FP16)
        return refuse(j, err, "fp16: MaxText's dtype here is bfloat16 (or fp8 quantization)");
    const char *policy = maxtext_remat(l);
    if (!policy)
        return refuse(j, err, "recompute_saved %d: no remat policy of this MaxText release "
                      "keeps those outputs (its named ones: save_dot_with_context_except_mlp, "
                      "save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj, "
                      "save_out_proj)", l->recompute_saved);
    if (plan_model_local_layers(m) > 0)
        return refuse(j, err, "sliding window of %lld tokens: this MaxText release's base.yml "
                      "has no sliding-window key and its llama2 and gpt3 decoder blocks attend "
                      "over the whole sequence", (long long)m->sliding_window);
    int in_node = gpn / l->tp, nodes = j->c->nodes;
    int shard = l->sharding == PLAN_SHARD_PARAMS;
    launch__arg(j, "python3");
    launch__arg(j, "MaxText/train.py");
    launch__arg(j, "MaxText/configs/base.yml");
    launch__arg(j, "run_name=smdplan");
    launch__arg(j, "hardware=gpu");
    launch__arg(j, "dataset_type=synthetic");
    launch__arg(j, "enable_checkpointing=False");
    launch__argf(j, "steps=%lld", (long long)j->train_steps);
    launch__argf(j, "decoder_block=%s", m->arch == PLAN_ARCH_LLAMA ? "llama2" : "gpt3");
    launch__argf(j, "base_num_decoder_layers=%lld", (long long)m->layers);
    launch__argf(j, "base_emb_dim=%lld", (long long)m->hidden);
    launch__argf(j, "base_num_query_heads=%lld", (long long)m->heads);
    launch__argf(j, "base_num_kv_heads=%lld", (long long)m->kv_heads);
    launch__argf(j, "base_mlp_dim=%lld", (long long)m->ffn);
    launch__argf(j, "head_dim=%lld", (long long)plan_model_head_dim(m));
    launch__argf(j, "vocab_size=%lld", (long long)m->vocab);
    launch__argf(j, "max_target_length=%lld", (long long)m->seq);
    /* global batch = per_device_batch_size x devices (base.yml) */
    launch__argf(j, "per_device_batch_size=%.6g", (double)l->global_batch / j->c->gpus);
    launch__argf(j, "ici_tensor_parallelism=%d", l->tp);
    launch__argf(j, "ici_%s_parallelism=%d", shard ? "fsdp" : "data", in_node);
    launch__argf(j, "ici_%s_parallelism=1", shard ? "data" : "fsdp");
    launch__argf(j, "dcn_%s_parallelism=%d", shard ? "fsdp" : "data", nodes);
    launch__argf(j, "dcn_%s_parallelism=1", shard ? "data" : "fsdp");
    launch__argf(j, "remat_policy=%s", policy);
    if (l->flash_attention)
        launch__arg(j, "attention=cudnn_flash_te");
    if (l->precision == PLAN_PREC_FP8)
        launch__arg(j, "quantization=fp8");
    int full = l->recompute == PLAN_RECOMP_FULL;
    launch__note(j, "Run on every node (one process per node drives its %d GPUs); set the "
                      "JAX distributed coordinator as MaxText's GPU guide does. remat_policy "
                      "%s: %s.", gpn, policy,
                   !full ? "base.yml has no policy without rematerialisation; minimal keeps "
                           "every matrix product's output, the closest to the plan's"
                   : l->recompute_saved ? "the products' outputs the plan keeps stay on the "
                                          "device, the rest of every layer is recomputed"
                                        : "every layer recomputed");
    return ST_OK;
}

/* ------------------------------------------------------------------------ */
/* smdplan's executor                                                        */
/* ------------------------------------------------------------------------ */

static int build_smdplan(launch_job *j, st_err *err)
{
    const plan_layout *l = j->l;
    const plan_model *m = j->m;
    j->title = "smdplan executor run";
    j->launcher = LAUNCH_COMMAND;
    j->sources = "smdplan exec --help: the layout options are the plan command's.";
    /* the executor's attention (exec/) projects hidden to hidden over the
     * whole sequence; smdplan exec refuses the others (check_shape) */
    if (plan_model_attn_width(m) != m->hidden)
        return refuse(j, err, "head size %lld is not hidden / heads: the executor's attention "
                      "projections are hidden x hidden", (long long)plan_model_head_dim(m));
    if (plan_model_local_layers(m) > 0)
        return refuse(j, err, "sliding window of %lld tokens: the executor attends over the "
                      "whole sequence", (long long)m->sliding_window);
    launch__arg(j, "smdplan");
    launch__arg(j, "exec");
    for (int i = 0; i < j->p->ncatalogs; i++) {
        launch__arg(j, "--catalog");
        launch__arg(j, j->p->catalog_files[i]);
    }
    launch__arg(j, "--instances");
    launch__argf(j, "%dx%s", j->c->nodes, j->c->inst->name);
    if (!strcmp(plan_framework_get(l->framework)->key, "smdplan-cuda")) {
        launch__arg(j, "--device");
        launch__arg(j, "cuda");
    }
    launch__arg(j, "--arch");
    launch__arg(j, m->arch == PLAN_ARCH_LLAMA ? "llama" : "gpt");
    arg_int(j, "--layers", m->layers);
    arg_int(j, "--hidden", m->hidden);
    arg_int(j, "--heads", m->heads);
    arg_int(j, "--kv-heads", m->kv_heads);
    arg_int(j, "--ffn", m->ffn);
    arg_int(j, "--seq", m->seq);
    arg_int(j, "--vocab", m->vocab);
    arg_int(j, "--tp", l->tp);
    arg_int(j, "--pp", l->pp);
    arg_int(j, "--dp", l->dp);
    arg_int(j, "--micro-batch", l->micro_batch);
    arg_int(j, "--microbatches", l->microbatches);
    launch__arg(j, "--schedule");
    launch__arg(j, plan_schedule_name(l->schedule));
    if (l->schedule == PLAN_SCHED_VIRTUAL)
        arg_int(j, "--virtual-stages", l->virtual_stages);
    arg_int(j, "--active-microbatches", l->active_microbatches);
    launch__arg(j, "--recompute");
    launch__arg(j, plan_recompute_name(l->recompute));
    launch__arg(j, "--sharding");
    launch__arg(j, plan_sharding_name(l->sharding));
    launch__arg(j, "--sequence-parallel");
    launch__arg(j, l->sequence_parallel ? "on" : "off");
    launch__arg(j, "--placement");
    launch__arg(j, l->placement);
    launch__note(j, "smdplan exec runs the layout on this host and records the run; "
                      "--emit slurm there writes its sbatch script.");
    return ST_OK;
}

/* ------------------------------------------------------------------------ */

static const struct {
    const char *kind;
    int (*build)(launch_job *j, st_err *err);
} builders[] = {
    {"megatron", build_megatron},     {"deepspeed", build_deepspeed},
    {"torchtitan", build_torchtitan}, {"fsdp", build_fsdp},
    {"maxtext", build_maxtext},       {"smdplan", build_smdplan},
};

int launch__kind_known(const char *kind)
{
    for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++)
        if (!strcmp(builders[i].kind, kind))
            return 1;
    return 0;
}

int launch__build(launch_job *j, st_err *err)
{
    /* the one check of a layout against its stack (plan_framework_check),
     * as the SMP launchers make it: knobs the stack has not (Megatron's
     * block method, MaxText's remat policies, torch.compile) */
    char why[300];
    if (plan_framework_check(plan_framework_get(j->l->framework), j->l, why, sizeof why))
        return refuse(j, err, "%s", why);
    for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++)
        if (!strcmp(builders[i].kind, j->kind))
            return builders[i].build(j, err);
    return ST_RAISE(err, ST_EINVAL, "--emit %s: allowed are %s", j->kind, launch_kinds());
}
