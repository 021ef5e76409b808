/*
 * plan_framework.c: the training stacks smdplan plans for (see
 * plan_framework.h): each profile's knobs, behaviour and defaults, and
 * where each comes from.
 *
 * The table is the one place a stack's behaviour is written down; the
 * search, the cost model, the emitters, validate and calibrate read it.
 * Nothing here names a published source of measurements: a profile is
 * selected by the framework a run names, or by --framework.
 */
#include "planner/plan_framework.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "planner/plan_int.h"

#define B(x) (1u << (x))
#define SCH_SMP (B(PLAN_SCHED_SIMPLE) | B(PLAN_SCHED_INTERLEAVED))
#define SCH_MEGATRON (B(PLAN_SCHED_INTERLEAVED) | B(PLAN_SCHED_VIRTUAL))
#define SCH_ALL (B(PLAN_SCHED_SIMPLE) | B(PLAN_SCHED_INTERLEAVED) | B(PLAN_SCHED_VIRTUAL) | \
                 B(PLAN_SCHED_ZB_H1))
#define SH_ALL (B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER) | B(PLAN_SHARD_GRADIENTS) | \
                B(PLAN_SHARD_PARAMS))
#define RC_ALL (B(PLAN_RECOMP_NONE) | B(PLAN_RECOMP_SELECTIVE) | B(PLAN_RECOMP_FULL))
/* One gradient message for the whole buffer. */
#define WHOLE_BUFFER 1e30

/* Megatron-LM's examples train GPT with the GPT-2 BPE vocabulary (50257
 * tokens: gpt2-vocab.json, examples/pretrain_gpt.sh; NeMo's GPT configs use
 * the same GPT2BPETokenizer) and pad it to a multiple of
 * --make-vocab-size-divisible-by (default 128) x TP
 * (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding);
 * Megatron-DeepSpeed inherits both. */
const plan_framework plan_frameworks[] = {
    /* ------------------------------------------------------------------ */
    {
        .key = "smp",
        .family = PLAN_FW_SMP,
        .label = "SageMaker model parallel v1",
        .names = {"SageMaker model parallel", "smdistributed", "SMP v1", NULL},
        .user = 1,
        .schedules = SCH_SMP,
        .shardings = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER) | B(PLAN_SHARD_PARAMS),
        .shardings_with_pp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_tp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER) | B(PLAN_SHARD_PARAMS),
        .recomputes = RC_ALL,
        .recompute_groups = 1,
        .sequence_parallel = 1,
        .context_parallel = 0,
        .active_cap = 1,
        .offload = 1,
        .prescaled = 1,
        .placement_search = 1,
        .fp8 = 0,
        .tp_max_in_node = 1,
        /* SMP v1 documentation, Supported Frameworks and AWS Regions,
         * "Supported Instance Types": "The SageMaker model parallelism
         * library requires one of the following ML instance types" */
        .instance_types = {"g4dn.12xlarge", "p3.16xlarge", "p3dn.24xlarge", "p4d.24xlarge",
                           "p4de.24xlarge", NULL},
        .placement = "DPT",
        .flash_attention = 0,
        .dp_overlap = 1,
        .dp_bucket_bytes = 25e6,
        .sync_sharded = PLAN_SYNC_PER_MICROBATCH,
        .param_gather_overlap = 0,
        .tp_overlap = 0,
        .pp_overlap = 0,
        .zero3_prefetch = 1,
        .zero3_regather = 1,
        .fp32_grads = 0,
        .launch_blocking = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .local_batch = 0,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_NONE,
        /* SMP's `optimize` defaults to "memory": no activation is stored
         * twice across the tensor-parallel ranks (smd_model_parallel_
         * general.rst); that is sequence parallelism's memory, and the
         * planner's sequence_parallel is how a plan says optimize "memory"
         * (off: "speed") */
        .sp_default = 1,
        .schedules_unknown = 0,
        .doc = "SageMaker model parallelism library v1 parameters (sagemaker-python-sdk "
               "doc/api/training/smd_model_parallel_general.rst): pipeline 'simple' or "
               "'interleaved'; active_microbatches (default partitions + 2); "
               "shard_optimizer_state; sharded_data_parallel_degree (v1.11+, not with "
               "pipeline parallelism); optimize 'memory' (the default) stores no activation "
               "twice across TP ranks (sequence parallelism's memory), 'speed' keeps every TP "
               "rank's copy; prescaled_batch; placement_strategy 'cluster', "
               "'spread' or an order of D, P, T; offload_activations with "
               "activation_loading_horizon; activation checkpointing per module "
               "(smp.set_activation_checkpointing, strategy 'each', 'contiguous', 'group_k'). "
               "Gradient all-reduce overlapped with backward in DDP's 25 MB buckets",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "megatron",
        .default_vocab = 50257,
        .vocab_multiple = 128,
        .family = PLAN_FW_MEGATRON,
        .label = "Megatron-LM (Megatron-Core)",
        .names = {"Megatron-Core", "Megatron-LM", "Megatron", NULL},
        .user = 1,
        .schedules = SCH_MEGATRON,
        .shardings = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_pp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_tp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .recomputes = RC_ALL,
        .recompute_groups = 1,
        .sequence_parallel = 1,
        .context_parallel = 1,
        .active_cap = 0,
        .offload = 0,
        .prescaled = 0,
        .placement_search = 0,
        .fp8 = 1,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 1,
        .dp_overlap = 1,
        .dp_bucket_bytes = 40e6 * 2.0,
        .sync_sharded = PLAN_SYNC_PER_STEP,
        .param_gather_overlap = 1,
        .tp_overlap = 2,
        .pp_overlap = 1,
        .zero3_prefetch = 1,
        .zero3_regather = 0,
        .fp32_grads = 1,
        .launch_blocking = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .local_batch = 0,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_OPTIMIZER,
        .sp_default = 1,
        /* a run that does not say which of its two schedules it used (no
         * virtual stage count published) is read as the faster of them, as
         * its micro-batch is: benchmark tables are tuned runs */
        .schedules_unknown = B(PLAN_SCHED_INTERLEAVED) | B(PLAN_SCHED_VIRTUAL),
        .doc = "Megatron-Core (megatron/training/arguments.py, NeMo performance recipes): "
               "1F1B and interleaved virtual-stage schedules (no zero bubble); distributed "
               "optimizer (--use-distributed-optimizer: gradients reduce-scattered, "
               "parameters all-gathered, both overlapped with --overlap-grad-reduce and "
               "--overlap-param-gather, buckets of 40M parameters); sequence parallelism "
               "with TP; context parallelism; Transformer Engine fused attention and FP8; TP "
               "communication overlapped with GEMMs (--tp-comm-overlap); p2p overlapped "
               "with the interleaved schedule; bf16 gradients accumulated and reduced in "
               "fp32 (arguments.py: bf16 sets accumulate_allreduce_grads_in_fp32); rank order "
               "tp-cp-ep-dp-pp",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "nemo",
        .default_vocab = 50257,
        .vocab_multiple = 128,
        .family = PLAN_FW_MEGATRON,
        .label = "NeMo (Megatron-Core)",
        .names = {"NeMo/Megatron-Core", "NeMo 2", "NeMo 24", "NeMo (Megatron-Core)",
                  "NeMo", NULL},
        .user = 0,
        .schedules = SCH_MEGATRON,
        .shardings = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_pp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_tp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .recomputes = RC_ALL,
        .recompute_groups = 1,
        .sequence_parallel = 1,
        .context_parallel = 1,
        .fp8 = 1,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 1,
        .dp_overlap = 1,
        .dp_bucket_bytes = 0, /* one transformer layer's gradients (dp_bucket_layer) */
        .dp_bucket_layer = 1,
        .sync_sharded = PLAN_SYNC_PER_STEP,
        .param_gather_overlap = 1,
        .tp_overlap = 2,
        .pp_overlap = 1,
        .zero3_prefetch = 1,
        .fp32_grads = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_OPTIMIZER,
        .sp_default = 1,
        .doc = "NeMo on Megatron-Core (NeMo user guide, Communication Overlap: the distributed "
               "optimizer's reduce-scatter of gradients and all-gather of parameters are "
               "chunked by transformer layer and overlapped with compute, exposing one chunk; "
               "TP communication overlapped with GEMMs through Transformer Engine userbuffers; "
               "p2p overlapped with the interleaved schedule). Gradients are reduced in bf16: "
               "Megatron-Core's DistributedDataParallelConfig.grad_reduce_in_fp32 defaults to "
               "False and NeMo's H100 recipes set optim.grad_sync_dtype=bf16 "
               "(NeMo-Framework-Launcher examples/training/llama/h100/*.sh). Transformer "
               "Engine fused attention and FP8; sequence parallelism with TP",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "megatron-2020",
        .default_vocab = 50257,
        .vocab_multiple = 128,
        .family = PLAN_FW_MEGATRON,
        .label = "Megatron-LM 2020 (v1)",
        .names = {"Megatron-LM (2020)", "Megatron-LM 2020", "Megatron-LM v1", NULL},
        .user = 0,
        .schedules = B(PLAN_SCHED_INTERLEAVED),
        .shardings = B(PLAN_SHARD_NONE),
        .shardings_with_pp = B(PLAN_SHARD_NONE),
        .shardings_with_tp = B(PLAN_SHARD_NONE),
        .recomputes = B(PLAN_RECOMP_NONE) | B(PLAN_RECOMP_FULL),
        .recompute_groups = 0,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 0,
        .dp_overlap = 1,
        .dp_bucket_bytes = 25e6,
        .sync_sharded = PLAN_SYNC_PER_STEP,
        .tp_overlap = 0,
        .zero3_prefetch = 1,
        .fp32_grads = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .local_batch = 1,
        .recompute_default = PLAN_RECOMP_FULL,
        .sharding_default = PLAN_SHARD_NONE,
        .doc = "Megatron-LM v1 (2020): examples/pretrain_gpt2.sh trains with "
               "--checkpoint-activations; --batch-size is 'batch size per model instance', "
               "global = local x data parallel, no gradient accumulation (arguments.py); "
               "attention through the unfused scale-mask-softmax path; TP ranks innermost "
               "(mpu/initialize.py); --DDP-impl torch: PyTorch DDP's 25 MB buckets "
               "(bucket_cap_mb default) overlapped with the backward; no pipeline",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "megatron-2021",
        .default_vocab = 50257,
        .vocab_multiple = 128,
        .family = PLAN_FW_MEGATRON,
        .label = "Megatron-LM 2021 (PTD-P)",
        .names = {"Megatron-LM (PTD-P)", "PTD-P", "Megatron-LM 2021", NULL},
        .user = 0,
        .schedules = SCH_MEGATRON,
        .shardings = B(PLAN_SHARD_NONE),
        .shardings_with_pp = B(PLAN_SHARD_NONE),
        .shardings_with_tp = B(PLAN_SHARD_NONE),
        .recomputes = B(PLAN_RECOMP_NONE) | B(PLAN_RECOMP_FULL),
        .recompute_groups = 0,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 0,
        .dp_overlap = 0,
        .dp_bucket_bytes = WHOLE_BUFFER,
        .sync_sharded = PLAN_SYNC_PER_STEP,
        .tp_overlap = 0,
        .zero3_prefetch = 1,
        .fp32_grads = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_FULL,
        .sharding_default = PLAN_SHARD_NONE,
        .schedules_unknown = B(PLAN_SCHED_INTERLEAVED) | B(PLAN_SCHED_VIRTUAL),
        .doc = "Narayanan et al. 2021 (Megatron-LM v2, PTD-P): 1F1B and the interleaved "
               "schedule (Sec. 2.2); activation recomputation in every reported run (Sec. "
               "3.5); the local DDP all-reduces its contiguous gradient buffer as one "
               "message after the last microbatch's backward (train_step); no sequence "
               "parallelism, no fused attention, no overlapped TP collectives (both "
               "arrived in 2022, Korthikanti et al.); rank order TP, DP, PP from innermost",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "nemo-megatron",
        .param_gather_overlap = 1,
        .default_vocab = 50257,
        .vocab_multiple = 128,
        .family = PLAN_FW_MEGATRON,
        .label = "NeMo Megatron (2022-2023)",
        .names = {"NeMo Megatron", "NeMo-Megatron", "NeMo 1", NULL},
        .user = 0,
        .schedules = SCH_MEGATRON,
        .shardings = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_pp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_tp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .recomputes = RC_ALL,
        .recompute_groups = 1,
        .sequence_parallel = 1,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 0,
        .dp_overlap = 1,
        .dp_bucket_bytes = 220e6,
        .sync_sharded = PLAN_SYNC_PER_STEP,
        .tp_overlap = 1,
        .pp_overlap = 0,
        .zero3_prefetch = 1,
        .fp32_grads = 1,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_OPTIMIZER,
        .sp_default = 0,
        .doc = "NeMo Megatron launcher (NeMo 1.x on Megatron-Core, 2023): its GPT-3 training "
               "configs (NVIDIA/NeMo-Megatron-Launcher launcher_scripts/conf/training/gpt3/"
               "5b.yaml, 175b.yaml) train with optim distributed_fused_adam (sharded optimizer "
               "states, overlap_grad_sync and overlap_param_sync, bucket_cap_mb 220-400), "
               "megatron_amp_O2 (fp32 main gradients), transformer_engine False with "
               "masked_softmax_fusion (no FlashAttention), activation checkpointing null and "
               "sequence_parallel per model; the backward TP all-reduce beside the weight-"
               "gradient GEMM (Megatron-LM 2022, async_tensor_model_parallel_allreduce)",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "deepspeed",
        /* ZeRO-1/2 (deepspeed/runtime/zero/stage_1_and_2.py): beside the fp32
         * master partition and Adam's m and v it keeps an fp32 gradient
         * partition for the step (16 B per parameter, sharded), and reduces
         * through a contiguous bucket of reduce_bucket_size elements (5e8 by
         * default, 2 bytes each) */
        .optimizer_bytes = 16.0,
        .grad_buffer_bytes = 5e8 * 2.0,
        .default_vocab = 50257,
        .vocab_multiple = 128,
        .family = PLAN_FW_DEEPSPEED,
        .label = "DeepSpeed (Megatron-DeepSpeed)",
        /* GPT-NeoX and Megatron-Turing NLG run on DeepSpeed's engine (GPT-NeoX
         * README: "based on Megatron-LM and DeepSpeed"; Smith et al. 2022) */
        .names = {"Megatron-DeepSpeed", "DeepSpeed", "GPT-NeoX", "Megatron-Turing", "MT-NLG",
                  NULL},
        .user = 1,
        .schedules = B(PLAN_SCHED_INTERLEAVED),
        .shardings = SH_ALL,
        .shardings_with_pp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_OPTIMIZER),
        .shardings_with_tp = SH_ALL,
        .recomputes = B(PLAN_RECOMP_NONE) | B(PLAN_RECOMP_FULL),
        .recompute_groups = 1,
        .sequence_parallel = 0,
        .offload = 0,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 0,
        .dp_overlap = 0,
        .dp_bucket_bytes = 5e8 * 2.0,
        .sync_sharded = PLAN_SYNC_PER_MICROBATCH,
        .tp_overlap = 1,
        .zero3_prefetch = 1,
        .zero3_regather = 1,
        .fp32_grads = 0,
        .launch_blocking = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_FULL,
        .sharding_default = PLAN_SHARD_OPTIMIZER,
        .doc = "DeepSpeed: the pipeline engine runs 1F1B (deepspeed/runtime/pipe/schedule.py "
               "TrainSchedule) and reduces gradients after the step's last backward "
               "(ReduceGrads); ZeRO stages 2 and 3 do not combine with its pipeline "
               "(runtime/pipe/engine.py asserts zero stage < 2); reduce_bucket_size 5e8 "
               "elements; ZeRO-3 fetches parameters per module with prefetch and again "
               "for the recomputed forward; Megatron-DeepSpeed trains with DeepSpeed "
               "activation checkpointing and the 2022 Megatron layer (backward TP all-reduce "
               "beside the weight-gradient GEMM), no sequence parallelism, no fused attention",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "fsdp",
        .zero2_gathers = 1,
        .family = PLAN_FW_FSDP,
        .label = "PyTorch FSDP",
        .names = {"FSDP", "llm-foundry", "Composer", "Fully Sharded", NULL},
        .user = 1,
        .schedules = B(PLAN_SCHED_INTERLEAVED),
        .shardings = B(PLAN_SHARD_GRADIENTS) | B(PLAN_SHARD_PARAMS),
        .shardings_with_pp = 0,
        .shardings_with_tp = 0,
        .recomputes = B(PLAN_RECOMP_NONE) | B(PLAN_RECOMP_FULL),
        .recompute_groups = 0,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 1,
        .dp_overlap = 1,
        .dp_bucket_bytes = WHOLE_BUFFER,
        .sync_sharded = PLAN_SYNC_PER_MICROBATCH,
        .tp_overlap = 0,
        .zero3_prefetch = 1,
        .zero3_regather = 0,
        .fp32_grads = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_PARAMS,
        .doc = "PyTorch FSDP (torch.distributed.fsdp): FULL_SHARD all-gathers each wrapped "
               "module's parameters before its forward and again before its backward and "
               "reduce-scatters its gradients after; SHARD_GRAD_OP keeps the gathered "
               "parameters from forward to backward; backward_prefetch BACKWARD_PRE issues "
               "the next module's all-gather ahead, limit_all_gathers keeps at most two in "
               "flight; activation checkpointing wraps the block inside the FSDP unit, so "
               "the recomputed forward reuses the gathered parameters; llm-foundry trains "
               "with FlashAttention",
    },
    /* ------------------------------------------------------------------ */
    {
        /* metaseq (OPT): FairScale's FullyShardedDataParallel, the FSDP
         * PyTorch took in, with Megatron-LM tensor parallelism (Zhang et al.
         * 2022, OPT, Sec. 2.3: "Fully Sharded Data Parallel with Megatron-LM
         * Tensor Parallelism ... Adam state in FP32, since we shard it across
         * all hosts, while the model weights remained in FP16"); a 2022 stack:
         * Megatron's fused softmax, no FlashAttention, no sequence
         * parallelism; activation checkpointing in its 175B configuration */
        .key = "metaseq",
        .zero2_gathers = 1,
        .family = PLAN_FW_FSDP,
        .label = "metaseq / FairScale FSDP + Megatron TP (2022)",
        .names = {"metaseq", "fairscale", NULL},
        .user = 0,
        .schedules = B(PLAN_SCHED_INTERLEAVED),
        .shardings = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_GRADIENTS) | B(PLAN_SHARD_PARAMS),
        .shardings_with_pp = 0,
        .shardings_with_tp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_GRADIENTS) | B(PLAN_SHARD_PARAMS),
        .recomputes = B(PLAN_RECOMP_NONE) | B(PLAN_RECOMP_FULL),
        .recompute_groups = 0,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 0,
        .dp_overlap = 1,
        .dp_bucket_bytes = 0,
        .dp_bucket_layer = 1,
        .sync_sharded = PLAN_SYNC_PER_MICROBATCH,
        .tp_overlap = 1,             /* Megatron's backward all-reduce beside the weight GEMM */
        .zero3_prefetch = 1,
        .zero3_regather = 0,
        .fp32_grads = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_FULL,
        .sharding_default = PLAN_SHARD_PARAMS,
        .doc = "metaseq (OPT, Zhang et al. 2022, Sec. 2.3): FairScale FSDP with Megatron-LM "
               "tensor parallelism, fp16 weights, fp32 Adam state sharded over all hosts; "
               "Megatron's unfused scale-mask-softmax attention; activation checkpointing",
    },
    /* ------------------------------------------------------------------ */
    {
        /* torchtitan (pytorch/torchtitan, torchtitan/parallelisms/
         * parallelize_llama.py and config_manager.py): PyTorch-native 4-D
         * training on FSDP2, a profile of the FSDP family (its efficiencies
         * are the family's) */
        .key = "torchtitan",
        .zero2_gathers = 1,
        .family = PLAN_FW_FSDP,
        .label = "torchtitan (FSDP2 + DTensor TP/PP/CP)",
        .names = {"torchtitan", NULL},
        .user = 1,
        /* torch.distributed.pipelining as torchtitan's release offers it
         * (torchtitan/config_manager.py, commit 0011fb90,
         * experimental.pipeline_parallel_schedule: 1f1b, gpipe,
         * interleaved_1f1b, flexible_interleaved_1f1b): no zero-bubble
         * schedule of one stage per rank */
        .schedules = B(PLAN_SCHED_SIMPLE) | B(PLAN_SCHED_INTERLEAVED) | B(PLAN_SCHED_VIRTUAL),
        /* no gradient accumulation in that release: without a pipeline a
         * rank's batch is one microbatch (training.batch_size per rank) */
        .local_batch = 1,
        /* fully_shard per transformer block; a data_parallel_shard_degree of
         * 1 replicates instead (DDP); with a pipeline each block keeps its
         * gathered parameters from forward to backward
         * (reshard_after_forward=False: SHARD_GRAD_OP) */
        .shardings = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_GRADIENTS) | B(PLAN_SHARD_PARAMS),
        .shardings_with_pp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_GRADIENTS),
        .shardings_with_tp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_GRADIENTS) | B(PLAN_SHARD_PARAMS),
        .recomputes = RC_ALL,
        .recompute_groups = 0,
        /* TP with SequenceParallel on the norms and a parallel loss */
        .sequence_parallel = 1,
        .sp_default = 1,
        .context_parallel = 1,
        .fp8 = 1,                    /* torchao float8 linears */
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 1,        /* F.scaled_dot_product_attention */
        .dp_overlap = 1,
        .dp_bucket_bytes = 0,        /* one transformer block's gradients (dp_bucket_layer) */
        .dp_bucket_layer = 1,
        .sync_sharded = PLAN_SYNC_PER_MICROBATCH,
        .tp_overlap = 0,             /* async TP only with torch.compile and its flag */
        .zero3_prefetch = 1,
        .zero3_regather = 0,         /* the checkpoint wrapper sits inside the FSDP unit */
        .fp32_grads = 1,             /* training.mixed_precision_reduce = float32 */
        .host_op_s = PLAN__HOST_OP_S, /* eager unless training.compile */
        .recompute_default = PLAN_RECOMP_FULL, /* the shipped Llama 3 70B and 405B configs */
        .sharding_default = PLAN_SHARD_PARAMS,
        .doc = "torchtitan: FSDP2 fully_shard per transformer block (reshard_after_forward "
               "except the last block, and never with pipeline parallelism), bf16 parameters "
               "with fp32 gradient reduction (MixedPrecisionPolicy, mixed_precision_reduce "
               "float32); DTensor tensor parallelism with SequenceParallel norms and a "
               "parallel loss; torch.distributed.pipelining schedules; ring-attention "
               "context parallelism; scaled_dot_product_attention; activation checkpointing "
               "'full' in its Llama 3 70B and 405B configs (train_configs/*.toml), the "
               "checkpoint wrapper inside the FSDP unit; eager kernel launches unless "
               "training.compile",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "jax",
        .family = PLAN_FW_JAX,
        .label = "JAX/XLA (MaxText, Paxml)",
        .names = {"MaxText", "Paxml", "Pax", "JAX", "XLA", "T5X", "Levanter", NULL},
        .user = 1,
        .schedules = B(PLAN_SCHED_INTERLEAVED),
        .shardings = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_PARAMS),
        .shardings_with_pp = B(PLAN_SHARD_NONE),
        .shardings_with_tp = B(PLAN_SHARD_NONE) | B(PLAN_SHARD_PARAMS),
        .recomputes = RC_ALL,
        .recompute_groups = 0,
        .sequence_parallel = 1,
        .fp8 = 1,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 1,
        .dp_overlap = 1,
        .dp_bucket_bytes = WHOLE_BUFFER,
        .sync_sharded = PLAN_SYNC_PER_MICROBATCH,
        .tp_overlap = 0,
        .zero3_prefetch = 1,
        .zero3_regather = 1,
        .fp32_grads = 0,
        .host_op_s = 0.0,
        .recompute_default = PLAN_RECOMP_FULL,
        .sharding_default = PLAN_SHARD_PARAMS,
        .doc = "JAX on XLA GPU (MaxText, Paxml): GSPMD shards parameters over the fsdp mesh "
               "axis and all-gathers them per layer inside the scanned layer loop, gradients "
               "reduce-scattered per microbatch; XLA compiles the step (no per-kernel host "
               "time); cuDNN fused "
               "attention; rematerialisation 'full' unless configured (MaxText "
               "configs/base.yml remat_policy: 'full')",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "pytorch",
        .family = PLAN_FW_PYTORCH,
        .label = "PyTorch DDP (a stack smdplan does not model by name)",
        .names = {"PyTorch DDP", "DistributedDataParallel", NULL},
        .user = 0,
        .schedules = B(PLAN_SCHED_INTERLEAVED),
        .shardings = SH_ALL,
        .shardings_with_pp = SH_ALL,
        .shardings_with_tp = SH_ALL,
        .recomputes = RC_ALL,
        .recompute_groups = 1,
        .sequence_parallel = 1,
        .context_parallel = 1,
        .fp8 = 1,
        .tp_max_in_node = 1,
        .placement = "PDT",
        .flash_attention = 1,
        .dp_overlap = 1,
        .dp_bucket_bytes = 25e6,
        .sync_sharded = PLAN_SYNC_PER_STEP,
        .tp_overlap = 0,
        .zero3_prefetch = 1,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_NONE,
        .doc = "PyTorch's own data parallelism (torch.nn.parallel.DistributedDataParallel): "
               "gradients all-reduced in 25 MB buckets (bucket_cap_mb) overlapped with the "
               "backward; eager kernel launches; PyTorch's fused scaled_dot_product_attention. "
               "The reading of a run whose stack smdplan does not know by name",
    },
    /* ------------------------------------------------------------------ */
    {
        .key = "smdplan",
        .family = PLAN_FW_SMDPLAN,
        .label = "smdplan executor",
        .names = {"smdplan", NULL},
        .user = 1,
        /* knobs: what exec/ runs (exec/exec.h, CONFIG.json) */
        .schedules = SCH_ALL,         /* every schedule of sim_sched_ops, the simulator's own */
        .shardings = SH_ALL,          /* ZeRO-1, -2 and -3 over the DP group */
        .shardings_with_pp = SH_ALL,
        .shardings_with_tp = SH_ALL,
        .recomputes = RC_ALL,         /* none, selective (attention core), full */
        .recompute_groups = 1,        /* full recompute checkpoints every k layers */
        .sequence_parallel = 1,       /* reduce-scatter / all-gather instead of all-reduce */
        .context_parallel = 0,        /* refused by the executor (cp must be 1) */
        .active_cap = 1,              /* sim_sched_ops caps microbatches in flight */
        .offload = 0,                 /* refused: the CPU device's memory is the host's */
        .prescaled = 0,
        .placement_search = 1,        /* ranks placed in any D, P, T order */
        .fp8 = 0,
        .tp_max_in_node = 1,
        /* behaviour */
        .placement = "DPT",
        .flash_attention = 0,         /* attention keeps its s x s scores, as llm.c's does */
        /* Gradient buckets all-reduced after the last backward: the MPI
         * transport's non-blocking collectives progress only inside MPI
         * calls (Open MPI has no asynchronous progress thread for its
         * shared-memory and TCP transports; LibNBC, Hoefler et al. 2007,
         * progresses in test and wait), so starting a bucket during the
         * backward hides nothing: a dp 2 step on a 2-core host took 0.456
         * s overlapped and 0.442 s not (smdplan exec). A transport that
         * progresses on its own (NCCL on a stream) is where overlap pays. */
        .dp_overlap = 0,
        .dp_bucket_bytes = 25e6,      /* the contract's bucket, PyTorch DDP's 25 MB */
        .sync_sharded = PLAN_SYNC_PER_STEP, /* gradients reduced once per step */
        .param_gather_overlap = 0,
        .tp_overlap = 0,              /* TP collectives block their layer */
        .pp_overlap = 0,              /* sends are non-blocking, waits are exposed */
        .zero3_prefetch = 0,
        .zero3_regather = 1,          /* the recomputed forward gathers its weights again */
        .fp32_grads = 0,              /* fp32 already: the CPU device computes in fp32 */
        .host_op_s = 0.0,             /* C calls, no interpreter or kernel launch per op */
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_NONE,
        .doc = "smdplan's executor (exec/, CONFIG.json of the rank program): every schedule of "
               "the simulator's generator sim_sched_ops with its active_microbatches cap; ZeRO-1/2/3 "
               "over the data-parallel group with gradients reduced once per step in 25 MB buckets "
               "after the last backward (MPI progresses only inside its calls); recompute none, "
               "selective or full in groups of "
               "k layers; Megatron tensor parallelism with sequence parallelism; no context "
               "parallelism and no activation offload (both refused); attention without a fused "
               "kernel; fp32 on the CPU device (OpenBLAS); C code, no per-op host overhead",
    },
    /* ------------------------------------------------------------------ */
    /* The same executor on the CUDA device (exec/exec_dev_cuda.c) over the
     * NCCL transport (exec/exec_comm_nccl.c): the same knobs and the same
     * schedule, the same rank program and runner; what differs from the
     * CPU host is written here, each with its source. */
    {
        .key = "smdplan-cuda",
        .family = PLAN_FW_SMDPLAN,   /* one family: fitted per chip, and the chips differ */
        .label = "smdplan executor on CUDA",
        .names = {"smdplan-cuda", "smdplan cuda", NULL},
        .user = 1,
        .schedules = SCH_ALL,
        .shardings = SH_ALL,
        .shardings_with_pp = SH_ALL,
        .shardings_with_tp = SH_ALL,
        .recomputes = RC_ALL,
        .recompute_groups = 1,
        .sequence_parallel = 1,
        .context_parallel = 0,        /* refused by the executor on every device */
        .active_cap = 1,
        .offload = 0,                 /* refused: the executor has no activation offload */
        .prescaled = 0,
        .placement_search = 1,
        .fp8 = 0,                     /* bf16 linears only (cuBLASLt, CUBLAS_COMPUTE_32F) */
        .tp_max_in_node = 1,
        .placement = "DPT",
        /* The plain attention (cuBLAS strided batched products with the
         * causal softmax between them, the T x T probabilities kept) unless
         * the layout asks for the fused kernel (layout.flash_attention,
         * smdplan exec --flash-attention on): the executor's default on
         * every device. */
        .flash_attention = 0,
        /* Gradient buckets all-reduced during the backward: each NCCL group
         * has its own stream, ordered after the compute stream by an event
         * (exec_comm_nccl.c), and NCCL's collectives are kernels that run
         * on their stream beside the compute without the host's help (NCCL
         * User Guide, "CUDA Stream Semantics": an NCCL call returns once the
         * operation is enqueued on the stream), so a bucket started when its
         * last gradient is ready (exec_dp.c) hides behind the backward that
         * follows, as PyTorch DDP's and Megatron's overlapped reductions do.
         * Over the staged MPI transport (ranks sharing a GPU) the CPU host's
         * reason holds again and smdplan exec runs without overlap. */
        .dp_overlap = 1,
        .dp_bucket_bytes = 25e6,
        .sync_sharded = PLAN_SYNC_PER_STEP,
        .param_gather_overlap = 0,
        .tp_overlap = 0,              /* TP collectives are waited for by their layer */
        /* Receives are posted right before the op that consumes them and
         * waited for there (exec_pipe.c), so a transfer is exposed on the
         * receiving stage even though NCCL moves it on the PP stream. */
        .pp_overlap = 0,
        .zero3_prefetch = 0,
        .zero3_regather = 1,
        /* Gradients are bf16, as the parameters (exec_dev_cuda.c: bf16
         * parameters, activations and gradients; fp32 only for the master
         * weights, Adam's moments and per-row statistics), and reduced in
         * bf16 over NCCL. */
        .fp32_grads = 0,
        /* Every op is a kernel (or a cuBLASLt call) launched from C on one
         * stream: no interpreter, but the launch itself. Back-to-back
         * launches of a short kernel from C on one stream ran at 3.8 us per
         * kernel (NVIDIA Developer Blog, Gray 2019, "Getting Started with
         * CUDA Graphs": 3.8 us per kernel without a graph, the kernel itself
         * 2.9 us), the rate a host issuing one kernel after another keeps
         * up; launches are asynchronous, so it is a floor under kernels
         * shorter than that, not an addition. */
        .host_op_s = 3.8e-6,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_NONE,
        .doc = "smdplan's executor on the CUDA device (exec/exec_dev_cuda.c, exec_comm_nccl.c): "
               "the knobs of the CPU host's profile; bf16 parameters, activations and gradients "
               "with fp32 master weights and moments (no FP8); cuBLASLt products and the "
               "project's own kernels launched from C (3.8 us per launch: NVIDIA's CUDA Graphs "
               "post, 2019); gradient buckets all-reduced on NCCL's own stream during the "
               "backward (NCCL User Guide, CUDA Stream Semantics); TP collectives and pipeline "
               "receives waited for where they are needed; plain attention unless the layout "
               "asks for the fused kernel",
    },
    /* ------------------------------------------------------------------ */
    /* SageMaker model parallelism library v2 (torch.sagemaker): PyTorch FSDP
     * with SMP's hybrid sharding, Transformer Engine tensor parallelism,
     * context parallelism, activation offloading and FP8 on p5. Its runs are
     * FSDP's, so it shares the FSDP family's fitted efficiencies (none of
     * its own: no SMP v2 run is published). Self-contained for the data
     * file of stack releases (issue 16): knobs, instance types, sources. */
    {
        .key = "smp2",
        .zero2_gathers = 1,
        .family = PLAN_FW_FSDP,
        .label = "SageMaker model parallel v2",
        .names = {"SageMaker model parallel v2", "SMP v2", "torch.sagemaker", NULL},
        .user = 1,
        /* no pipeline parallelism: the v2 core parameters (reference, "SMP
         * v2 core feature configuration parameters") have no pipeline degree */
        .schedules = B(PLAN_SCHED_INTERLEAVED),
        /* hybrid_shard_degree: FSDP's full sharding over that many ranks
         * (params); FSDP's SHARD_GRAD_OP strategies stay the script's */
        .shardings = B(PLAN_SHARD_GRADIENTS) | B(PLAN_SHARD_PARAMS),
        .shardings_with_pp = 0,
        .shardings_with_tp = B(PLAN_SHARD_GRADIENTS) | B(PLAN_SHARD_PARAMS),
        /* activation checkpointing of whole layers (PyTorch's
         * apply_activation_checkpointing in the script) */
        .recomputes = B(PLAN_RECOMP_NONE) | B(PLAN_RECOMP_FULL),
        .recompute_groups = 0,
        .sequence_parallel = 0,
        .context_parallel = 1,       /* context_parallel_degree (SMP v2.6.0+) */
        .offload = 1,                /* sm_activation_offloading, activation_loading_horizon */
        .fp8 = 1,                    /* Transformer Engine FP8 on p5 */
        .tp_max_in_node = 1,         /* tensor_parallel_degree within a node */
        /* "Supported instance types" of the SMP v2 documentation (Supported
         * frameworks and AWS Regions) */
        .instance_types = {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", NULL},
        .placement = "PDT",
        .flash_attention = 1,
        .dp_overlap = 1,
        .dp_bucket_bytes = WHOLE_BUFFER,
        .sync_sharded = PLAN_SYNC_PER_MICROBATCH,
        .tp_overlap = 0,
        .zero3_prefetch = 1,
        .zero3_regather = 0,
        .fp32_grads = 0,
        .host_op_s = PLAN__HOST_OP_S,
        .recompute_default = PLAN_RECOMP_NONE,
        .sharding_default = PLAN_SHARD_PARAMS,
        .doc = "SageMaker model parallelism library v2 (Developer Guide, The SageMaker model "
               "parallel library v2 reference, SMP v2 core feature configuration parameters: "
               "hybrid_shard_degree, sm_activation_offloading, activation_loading_horizon, "
               "tensor_parallel_degree, context_parallel_degree, expert_parallel_degree; "
               "Supported frameworks and AWS Regions: ml.p4d.24xlarge, ml.p4de.24xlarge, "
               "ml.p5.48xlarge, ml.p5e.48xlarge; FP8 with Transformer Engine on P5): PyTorch "
               "FSDP underneath (its gathers and reduce-scatters per layer), no pipeline",
    },
};
const int plan_nframeworks = (int)(sizeof plan_frameworks / sizeof plan_frameworks[0]);

static const char *const family_keys[PLAN_FW__COUNT] = {
    [PLAN_FW_SMP] = "smp",         [PLAN_FW_MEGATRON] = "megatron", [PLAN_FW_DEEPSPEED] = "deepspeed",
    [PLAN_FW_FSDP] = "fsdp",       [PLAN_FW_JAX] = "jax",           [PLAN_FW_SMDPLAN] = "smdplan",
    [PLAN_FW_PYTORCH] = "pytorch",
};

const char *plan_fw_family_key(plan_fw_family f)
{
    return (unsigned)f < PLAN_FW__COUNT ? family_keys[f] : "?";
}

const plan_framework *plan_framework_get(int i)
{
    return &plan_frameworks[i >= 0 && i < plan_nframeworks ? i : PLAN_FW_DEFAULT];
}

const char *plan_framework_user_keys(void)
{
    static char keys[160];
    if (!keys[0])
        for (int i = 0; i < plan_nframeworks; i++)
            if (plan_frameworks[i].user) {
                size_t n = strlen(keys);
                snprintf(keys + n, sizeof keys - n, "%s%s", n ? ", " : "", plan_frameworks[i].key);
            }
    return keys;
}

int plan_framework_find(const char *key, int *index, st_err *err)
{
    for (int i = 0; key && i < plan_nframeworks; i++)
        if (strcasecmp(plan_frameworks[i].key, key) == 0) {
            *index = i;
            return ST_OK;
        }
    return ST_RAISE(err, ST_EINVAL, "--framework '%s': allowed are %s", key ? key : "",
                    plan_framework_user_keys());
}

/* Case-insensitive substring test. */
/* Offset of needle in hay, case-insensitive; -1 when absent. */
static long find(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return (long)(p - hay);
    return -1;
}

int plan_framework_match(const char *text)
{
    if (!text || !*text)
        return -1;
    /* The stack a text names first is the one it ran ("NeMo 24.07
     * (Megatron-Core)" is NeMo's, whose engine is Megatron-Core; "Composer +
     * PyTorch FSDP" is FSDP's); among names found at the same place the
     * longest wins ("Megatron-DeepSpeed" is DeepSpeed's, "Megatron-LM
     * (PTD-P)" the 2021 profile's, not Megatron-LM's). */
    int best = -1;
    long best_at = -1;
    size_t best_len = 0;
    for (int i = 0; i < plan_nframeworks; i++)
        for (int k = 0; k < PLAN_FW_NAMES_MAX && plan_frameworks[i].names[k]; k++) {
            size_t n = strlen(plan_frameworks[i].names[k]);
            long at = find(text, plan_frameworks[i].names[k]);
            if (at < 0)
                continue;
            if (best < 0 || at < best_at || (at == best_at && n > best_len)) {
                best = i;
                best_at = at;
                best_len = n;
            }
        }
    return best;
}

/* "simple or interleaved" for a mask of names. */
static void list_mask(unsigned mask, const char *(*name)(int), int n, char *out, size_t cap)
{
    int total = 0, k = 0;
    for (int i = 0; i < n; i++)
        total += (mask >> i) & 1;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!((mask >> i) & 1))
            continue;
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s%s", k == 0 ? "" : k == total - 1 ? " or " : ", ",
                 name(i));
        k++;
    }
    if (!total)
        snprintf(out, cap, "none");
}

static const char *sched_name(int i) { return plan_schedule_name((plan_schedule)i); }
static const char *shard_name(int i) { return plan_sharding_name((plan_sharding)i); }
static const char *recomp_name(int i) { return plan_recompute_name((plan_recompute)i); }

int plan_framework_check(const plan_framework *fw, const plan_layout *l, char *why, size_t n)
{
    char list[96];
    if (!((fw->schedules >> l->schedule) & 1) && l->pp > 1) {
        list_mask(fw->schedules, sched_name, PLAN_SCHED__COUNT, list, sizeof list);
        snprintf(why, n, "schedule %s: %s runs %s", plan_schedule_name(l->schedule), fw->label, list);
        return 1;
    }
    if (!((fw->shardings >> l->sharding) & 1) && (l->sharding != PLAN_SHARD_NONE || l->dp > 1)) {
        list_mask(fw->shardings, shard_name, PLAN_SHARD__COUNT, list, sizeof list);
        snprintf(why, n, "sharding %s: %s shards %s", plan_sharding_name(l->sharding), fw->label,
                 list);
        return 1;
    }
    if (l->pp > 1 && !((fw->shardings_with_pp >> l->sharding) & 1)) {
        list_mask(fw->shardings_with_pp, shard_name, PLAN_SHARD__COUNT, list, sizeof list);
        snprintf(why, n, "sharding %s with pp %d: %s combines a pipeline only with sharding %s",
                 plan_sharding_name(l->sharding), l->pp, fw->label, list);
        return 1;
    }
    if (l->tp > 1 && !((fw->shardings_with_tp >> l->sharding) & 1)) {
        list_mask(fw->shardings_with_tp, shard_name, PLAN_SHARD__COUNT, list, sizeof list);
        snprintf(why, n, "sharding %s with tp %d: %s combines tensor parallelism only with "
                 "sharding %s", plan_sharding_name(l->sharding), l->tp, fw->label, list);
        return 1;
    }
    if (!((fw->recomputes >> l->recompute) & 1)) {
        list_mask(fw->recomputes, recomp_name, PLAN_RECOMP__COUNT, list, sizeof list);
        snprintf(why, n, "recompute %s: %s recomputes %s", plan_recompute_name(l->recompute),
                 fw->label, list);
        return 1;
    }
    if (l->recompute == PLAN_RECOMP_FULL && l->recompute_group > 1 && !fw->recompute_groups) {
        snprintf(why, n, "recompute group %d: %s checkpoints every layer", l->recompute_group,
                 fw->label);
        return 1;
    }
    if (l->sequence_parallel && !fw->sequence_parallel && l->tp > 1) {
        snprintf(why, n, "sequence parallelism: %s has none", fw->label);
        return 1;
    }
    if (l->cp > 1 && !fw->context_parallel) {
        snprintf(why, n, "context parallel %d: %s has no context parallelism", l->cp, fw->label);
        return 1;
    }
    if (l->offload_activations && !fw->offload) {
        snprintf(why, n, "activation offload: %s has none", fw->label);
        return 1;
    }
    if (l->prescaled_batch && !fw->prescaled) {
        snprintf(why, n, "prescaled batch: an SMP knob %s does not have", fw->label);
        return 1;
    }
    if (l->precision == PLAN_PREC_FP8 && !fw->fp8) {
        snprintf(why, n, "fp8: %s has no FP8 linears", fw->label);
        return 1;
    }
    if (!fw->placement_search && strcmp(l->placement, fw->placement) != 0) {
        snprintf(why, n, "placement %s: %s places ranks in the order %s", l->placement,
                 fw->label, fw->placement);
        return 1;
    }
    return 0;
}

const plan_fw_eff *plan_cluster_use_framework(const plan_catalog *cat, int i, plan_cluster *c)
{
    return plan_cluster_use(cat, plan_fw_family_key(plan_framework_get(i)->family), c);
}

void plan_framework_apply(const plan_framework *fw, int index, plan_layout *l)
{
    l->framework = index;
    l->flash_attention = fw->flash_attention;
    l->dp_overlap = fw->dp_overlap;
    l->dp_bucket_bytes = fw->dp_bucket_bytes;
    l->tp_overlap = fw->tp_overlap;
    l->pp_overlap = fw->pp_overlap;
    l->fp32_grads = fw->fp32_grads;
    l->launch_blocking = fw->launch_blocking;
    if (!fw->placement_search)
        memcpy(l->placement, fw->placement, 4);
}

int plan_framework_runs_on(const plan_framework *fw, const plan_instance *in)
{
    if (!fw->instance_types[0])
        return 1;
    /* by the type's own name only: the names a stack documents are the
     * ones its launchers are given (an alias is the user's shorthand) */
    const char *name = strncasecmp(in->name, "ml.", 3) == 0 ? in->name + 3 : in->name;
    for (int i = 0; fw->instance_types[i]; i++)
        if (strcasecmp(name, fw->instance_types[i]) == 0)
            return 1;
    return 0;
}

const char *plan_framework_instance_list(const plan_framework *fw, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; fw->instance_types[i]; i++) {
        size_t u = strlen(buf);
        snprintf(buf + u, n - u, "%s%s%s", i ? ", " : "",
                 fw->family == PLAN_FW_SMP || !strcmp(fw->key, "smp2") ? "ml." : "",
                 fw->instance_types[i]);
    }
    return buf;
}

const char *plan_framework_schedule_name(const plan_layout *l)
{
    int smp = plan_framework_get(l->framework)->family == PLAN_FW_SMP;
    switch (l->schedule) {
    case PLAN_SCHED_SIMPLE: return smp ? "simple" : "gpipe";
    case PLAN_SCHED_INTERLEAVED: return smp ? "interleaved" : "1f1b";
    case PLAN_SCHED_VIRTUAL: return smp ? "virtual" : "interleaved";
    case PLAN_SCHED_ZB_H1: return "zb-h1";
    default: return "?";
    }
}
