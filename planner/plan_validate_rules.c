/*
 * plan_validate_rules.c: how smdplan validate reads what a published run's
 * row leaves unsaid: each framework's documented defaults, and which catalog
 * cluster a row's GPU and network text names. These interpret the sources'
 * configurations; none of them corrects a prediction.
 */
#include "planner/plan_validate_int.h"

const framework_rule plan__framework_rules[] = {
    {"Megatron-LM (2020)", "megatron_readme_2020", "Megatron-LM 2020",
     PLAN_RECOMP_FULL, PLAN_SHARD_NONE, 0, 0, 1, 0, 0, 0, 25e6, 1, 0, "PDT",
     "Megatron-LM v1 (2020): examples/pretrain_gpt2.sh trains with --checkpoint-activations; "
     "--batch-size is 'batch size per model instance', global = local x data parallel, no "
     "gradient accumulation (arguments.py); attention through the unfused softmax path; TP "
     "ranks innermost (mpu/initialize.py). Gradient sync overlapped: the README's 128-way "
     "runs add 37 ms to the 8B case (rows 11, 12), below the 170 ms a non-overlapped "
     "all-reduce of its 2.2 GB needs at the 25 GB/s line rate of a GPU's HDR link, so "
     "these runs used bucketed, overlapped gradient all-reduce (--DDP-impl torch: PyTorch "
     "DDP's 25 MB buckets, bucket_cap_mb default)"},
    {"Megatron-LM (PTD-P)", "narayanan2021", "Megatron-LM 2021",
     PLAN_RECOMP_FULL, PLAN_SHARD_NONE, 0, 0, 0, 0, 0,
     (1u << PLAN_SCHED_INTERLEAVED) | (1u << PLAN_SCHED_VIRTUAL), WHOLE_BUFFER, 0, 0, "PDT",
     "Narayanan et al. 2021: activation recomputation in every run of Table 1 (Sec. 3.5, the "
     "Eq. 3 FLOP count includes it); gradient all-reduce after the last microbatch's backward "
     "(Megatron-LM v2 train_step); no sequence parallelism (Korthikanti et al. 2022 came "
     "later); no fused attention; rank order TP, DP, PP from innermost (mpu/initialize.py); "
     "Table 1 does not give the micro-batch or whether the interleaved schedule ran (both "
     "are in the paper's toolkit, Sec. 2.2.2), so both are searched; the local DDP "
     "all-reduces the contiguous gradient buffer as one message"},
    {"Megatron-DeepSpeed", "bloom", "Megatron-DeepSpeed",
     PLAN_RECOMP_FULL, PLAN_SHARD_NONE, 0, 0, 0, 0, 0, 0, 1e9, 0, 1, "PDT",
     "BigScience Megatron-DeepSpeed (2022): DeepSpeed activation checkpointing in the tr11 "
     "scripts; the pipeline engine reduces gradients after the step's last backward "
     "(deepspeed/runtime/pipe/schedule.py TrainSchedule, ReduceGrads); no fused attention "
     "before FlashAttention (mid-2022); PipeModelDataParallelTopology axes pipe, data, model; "
     "gradients reduced in buckets of reduce_bucket_size 5e8 elements (DeepSpeed config "
     "default; 1 GB of bf16); CUDA_LAUNCH_BLOCKING=1 ('do not remove or the training will "
     "hang', train/tr11-176B-ml/tr11-176B-ml.slurm; chronicles-prequel.md 'dealing with JZ "
     "hanging', set before the 02-20 topology benchmarks)"},
    {"NeMo", "dgxc_bench", "NeMo 2024",
     PLAN_RECOMP_NONE, PLAN_SHARD_OPTIMIZER, 1, 1, 1, 1, 1, 0, 80e6, 0, 0, "PDT",
     "NVIDIA dgxc-benchmarking v24.11 NeMo/Megatron-Core BF16 recipes: no recomputation unless "
     "stated; distributed optimizer with gradient reduce-scatter and parameter all-gather "
     "overlapped with compute, TP communication overlapped with GEMMs (Transformer Engine "
     "userbuffers) and pipeline p2p overlapped with the interleaved schedule (NeMo user "
     "guide, Communication Overlap); sequence parallelism with TP > 1; Transformer Engine "
     "fused attention; Megatron-Core rank order tp-cp-dp-pp; DDP buckets of 40M parameters "
     "(Megatron-Core DistributedDataParallelConfig.bucket_size)"},
    {"SageMaker model parallel", "aws_smp", "SMP v1",
     PLAN_RECOMP_NONE, PLAN_SHARD_NONE, 0, 0, 1, 0, 0, 0, 25e6, 0, 0, "DPT",
     "SageMaker model parallel v1 documentation: placement_strategy 'cluster' by default; "
     "gradient all-reduce overlapped with backward as in PyTorch DDP (assumed, the reference "
     "configurations do not say); no fused attention kernel in v1; PyTorch DDP's 25 MB "
     "buckets (bucket_cap_mb default)"},
};
const int plan__nframework_rules = (int)(sizeof plan__framework_rules / sizeof plan__framework_rules[0]);

const framework_rule plan__default_rule = {
    NULL, NULL, "planner defaults", PLAN_RECOMP_NONE, PLAN_SHARD_NONE, 0, 1, 1, 0, 0, 0, 80e6, 0, 0, "PDT",
    "no rule for this framework: no recompute, no sharding, fused attention, overlapped DP"};

const cluster_rule plan__cluster_rules[] = {
    /* Before "Selene": the Megatron-LM README's A100 tables (September 2020)
     * name no memory size and predate the 80 GB part (November 2020). */
    {{"A100 (DGX-A100)", NULL}, "dgx-a100-40gb",
     "DGX A100 of 2020: 8 A100-40GB (the 80 GB part came in November 2020)"},
    {{"V100", "DGX-2"}, "dgx-2", "NVIDIA DGX-2: 16 V100-32GB on NVSwitch"},
    {{"A100", "Jean Zay"}, "jean-zay-a100",
     "IDRIS Jean Zay A100 partition: 8 A100-80GB, Omni-Path"},
    {{"A100", "Selene"}, "dgx-a100", "Selene: DGX A100 80GB, 8x200 Gb/s HDR InfiniBand"},
    {{"A100", "DGX-A100"}, "dgx-a100", "DGX A100"},
    {{"A100", "DGX A100"}, "dgx-a100", "DGX A100"},
    {{"H100", NULL}, "dgx-h100", "DGX H100 (DGX Cloud): 8 H100-SXM5-80GB, 8x400 Gb/s"},
    {{"A100-SXM4-40GB", "p4d"}, "p4d.24xlarge", "AWS p4d.24xlarge: 8 A100-40GB, 4x100 Gb/s EFA"},
};
const int plan__ncluster_rules = (int)(sizeof plan__cluster_rules / sizeof plan__cluster_rules[0]);
