/*
 * cli_plan.c: `smdplan [plan]`, the planner's command line.
 *
 * One option table drives getopt_long, --help and the range checks. The
 * command resolves the model (preset, derived shape, Hugging Face config or
 * explicit sizes) and the cluster (catalog + --instances), searches layouts
 * with the knobs the user fixed, and prints the ranked plans (table, --json,
 * --explain, --emit). A model that fits on no layout is an answer, exit 3.
 * The work is the libraries': the model a request names
 * (planner/plan_request_model.h), a preset's reference layout
 * (planner/plan_preset_cmp.h), the simulations (sim/sim_plans.h), the text
 * (reports/rpt_plan.h) and the JSON (data/data_plan_json.h).
 */
#include "app/cli.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app/cli_int.h"
#include "common/outfile.h"
#include "common/units.h"
#include "data/data.h"
#include "data/data_model_ref.h"
#include "data/data_plan_json.h"
#include "launch/launch.h"
#include "planner/plan_framework.h"
#include "planner/plan_preset_cmp.h"
#include "planner/plan_request.h"
#include "planner/plan_request_model.h"
#include "reports/rpt_plan.h"
#include "sim/sim_plans.h"

#include <cjson/cJSON.h>

enum {
    O_HELP = 'h',
    O_PARAMS = 256, O_ARCH, O_FAMILY, O_MODEL, O_LAYERS, O_HIDDEN, O_HEADS, O_KV_HEADS, O_FFN,
    O_SEQ, O_VOCAB, O_DROPOUT, O_HEAD_DIM, O_WINDOW, O_WINDOW_PATTERN,
    O_INSTANCES, O_CATALOG, O_MAX_INSTANCES, O_TOKENS,
    O_TP, O_PP, O_DP, O_CP, O_MICRO_BATCH, O_MICROBATCHES, O_ACTIVE, O_SCHEDULE, O_VIRTUAL,
    O_RECOMPUTE, O_RECOMPUTE_GROUP, O_RECOMPUTE_LAYERS, O_REMAT_POLICY, O_SHARDING, O_SP, O_OFFLOAD, O_COMPILE, O_PRESCALED, O_PLACEMENT,
    O_FLASH, O_DP_OVERLAP, O_FP32_GRADS, O_TP_OVERLAP, O_PP_OVERLAP, O_DP_BUCKET, O_LAUNCH_BLOCKING, O_GLOBAL_BATCH, O_BATCH_SIZE,
    O_OBJECTIVE, O_TOP, O_ALLOW_TP_NODES, O_JSON, O_EXPLAIN, O_EMIT, O_NO_RECORD, O_VERSION,
    O_FRAMEWORK, O_PRECISION,
    O_SEED, O_JITTER, O_STRAGGLER, O_MONTE_CARLO, O_TRACE, O_FORCE, O_SIM_THRESHOLD, O_NO_SIM, O_DB, O_WIDE,
    O_REGION, O_PRICES,
};


static const cli_opt opt_table[] = {
    {NULL, 0, 0, NULL, "Model"},
    {"params", 1, O_PARAMS, "N", "model size (350M, 1.3B, 30B, 175B, 1T): a published shape or one derived between them"},
    {"arch", 1, O_ARCH, "A", "gpt (GPT-2/3, Megatron) or llama (SwiGLU, GQA, RMSNorm); default gpt"},
    {"family", 1, O_FAMILY, "F", "restrict --params to one preset family: smp, gpt3, megatron, llama"},
    {"model", 1, O_MODEL, "FILE|NAME", "the shape from a Hugging Face config.json, or a widely used open model by name, offline (meta-llama/Llama-3.1-70B, Qwen/Qwen2.5-72B, ...: smdplan models)"},
    {"layers", 1, O_LAYERS, "N", "override: transformer layers"},
    {"dropout", 1, O_DROPOUT, "on|off", "override: whether the model trains with dropout (default: GPT yes, Llama no, or its config's)"},
    {"hidden", 1, O_HIDDEN, "N", "override: hidden size"},
    {"heads", 1, O_HEADS, "N", "override: attention heads"},
    {"kv-heads", 1, O_KV_HEADS, "N", "override: key/value heads (grouped-query attention)"},
    {"head-dim", 1, O_HEAD_DIM, "N", "override: size of one attention head (default hidden / heads, or its config's head_dim: Gemma 2's 256)"},
    {"sliding-window", 1, O_WINDOW, "N", "override: local attention window, tokens a query sees (0: none; default its config's sliding_window)"},
    {"sliding-window-pattern", 1, O_WINDOW_PATTERN, "N", "override: with --sliding-window, every Nth layer attends globally (Gemma 2: 2; 0: every layer local)"},
    {"ffn", 1, O_FFN, "N", "override: MLP inner size (default 4 x hidden for gpt)"},
    {"seq", 1, O_SEQ, "N", "override: sequence length, tokens"},
    {"vocab", 1, O_VOCAB, "N", "override: vocabulary size"},
    {NULL, 0, 0, NULL, "Cluster"},
    {"instances", 1, O_INSTANCES, "SPEC", "cluster: 16xp4d, 16xml.p4d.24xlarge or p4d:16 (see 'smdplan catalog'); without it, compare types and counts"},
    {"catalog", 1, O_CATALOG, "FILE", "JSON file adding or overriding instance types and GPUs (more than once: in order, later files override)"},
    {"max-instances", 1, O_MAX_INSTANCES, "N", "comparison: largest instance count tried (default 64)"},
    {"tokens", 1, O_TOKENS, "N", "tokens to train: with --instances, plan #1's time and cost to train them; without, the comparison's (default 300B)"},
    {"region", 1, O_REGION, "R", "price the ml.* instances with SageMaker's published prices of region R (default: the catalog's EC2 on-demand prices)"},
    {"prices", 1, O_PRICES, "FILE", "SageMaker price lists to use with --region (default data/sagemaker_prices.json)"},
    {NULL, 0, 0, NULL, "Stack"},
    {"framework", 1, O_FRAMEWORK, "F", "the training stack the plan is for, at a release: smp (SageMaker model parallel v1, default), smp2 (SageMaker model parallel v2: p4d, p4de, p5, p5e), megatron, nemo, deepspeed, megatron-deepspeed, fsdp, llm-foundry, metaseq, torchtitan, nanotron, jax, smdplan (the executor on CPUs), smdplan-cuda (on GPUs); a stack is its latest release, STACK@RELEASE one release (megatron@2022; smdplan frameworks lists them)"},
    {"precision", 1, O_PRECISION, "P", "bf16 (default), fp16 (the default on chips without bf16: V100, T4; costs what bf16 does), fp8 (FP8 linears: megatron, torchtitan, jax or smp2 on H100/H200), fp32"},
    {NULL, 0, 0, NULL, "Layout (fix a knob; the others are searched)"},
    {"tp", 1, O_TP, "N", "tensor-parallel degree (SMP tensor_parallel_degree)"},
    {"pp", 1, O_PP, "N", "pipeline degree (SMP partitions); --partitions is the same"},
    {"partitions", 1, O_PP, "N", "same as --pp"},
    {"dp", 1, O_DP, "N", "data-parallel degree"},
    {"cp", 1, O_CP, "N", "context-parallel degree (sequence split across GPUs; default searched "
                         "where the stack has it, with TP inside a node; 1 otherwise)"},
    {"micro-batch", 1, O_MICRO_BATCH, "N", "sequences per microbatch"},
    {"microbatches", 1, O_MICROBATCHES, "N", "microbatches per step (SMP microbatches)"},
    {"active-microbatches", 1, O_ACTIVE, "N", "max microbatches in flight per stage (SMP default partitions + 2)"},
    {"schedule", 1, O_SCHEDULE, "S", "simple (GPipe), interleaved (SMP 1F1B), virtual (Megatron), zb-h1"},
    {"virtual-stages", 1, O_VIRTUAL, "N", "model chunks per pipeline rank with --schedule virtual"},
    {"recompute", 1, O_RECOMPUTE, "R", "activation recomputation: none, selective, full"},
    {"recompute-group", 1, O_RECOMPUTE_GROUP, "K", "layers per checkpoint with full recompute (default 1)"},
    {"recompute-layers", 1, O_RECOMPUTE_LAYERS, "N", "with --recompute full: recompute only the first N layers of each model chunk, Megatron's block method (megatron, nemo)"},
    {"remat-policy", 1, O_REMAT_POLICY, "P", "with --recompute full: a MaxText remat policy keeping some products' outputs (jax): save_dot_with_context_except_mlp, save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj, save_out_proj"},
    {"sharding", 1, O_SHARDING, "S", "none, optimizer (ZeRO-1, SMP shard_optimizer_state), gradients (ZeRO-2), params (ZeRO-3, SMP sharded data parallel)"},
    {"sequence-parallel", 1, O_SP, "on|off", "Megatron sequence parallelism with TP (default on when tp > 1)"},
    {"offload", 1, O_OFFLOAD, "on|off", "offload activation checkpoints to host memory"},
    {"compile", 1, O_COMPILE, "on|off", "the model under torch.compile (torchtitan; default off): its pointwise ops fused"},
    {"prescaled-batch", 1, O_PRESCALED, "on|off", "SMP prescaled_batch (default on when tp > 1)"},
    {"placement", 1, O_PLACEMENT, "P", "cluster, spread, or an order of D, P, T (outermost first)"},
    {"flash-attention", 1, O_FLASH, "on|off", "fused attention kernel (default: the framework's)"},
    {"dp-overlap", 1, O_DP_OVERLAP, "on|off", "overlap gradient sync with backward (default: the framework's)"},
    {"tp-overlap", 1, O_TP_OVERLAP, "off|bwd|on", "overlap TP collectives: bwd beside the weight-gradient GEMM, on with every GEMM (default: the framework's)"},
    {"pp-overlap", 1, O_PP_OVERLAP, "on|off", "overlap pipeline sends with compute (default: the framework's)"},
    {"dp-bucket", 1, O_DP_BUCKET, "BYTES", "gradient all-reduce message size (default: the framework's)"},
    {"fp32-grads", 1, O_FP32_GRADS, "on|off", "keep and reduce gradients in fp32 (default: the framework's)"},
    {"launch-blocking", 1, O_LAUNCH_BLOCKING, "on|off", "runs with CUDA_LAUNCH_BLOCKING=1: host time per kernel adds to each (default off)"},
    {"global-batch", 1, O_GLOBAL_BATCH, "N", "sequences per optimizer step (default: a preset's published batch, else the GPT-3 schedule by size)"},
    {"batch-size", 1, O_BATCH_SIZE, "N", "SMP script batch per model-parallel group (prescaled); global = N x dp; needs --dp or --tp and --pp"},
    {NULL, 0, 0, NULL, "Simulation (smdplan simulate; plan simulates its top plans too)"},
    {"trace", 1, O_TRACE, "FILE", "simulate: write the step as Chrome trace-event JSON (opens in Perfetto)"},
    {"force", 0, O_FORCE, NULL, "with --trace: replace an existing file (never through a symbolic link)"},
    {"monte-carlo", 1, O_MONTE_CARLO, "N", "simulate N steps with seeds seed..seed+N-1; prints p50/p95/p99 (default 1)"},
    {"jitter", 1, O_JITTER, "SIGMA", "lognormal per-op jitter, sigma of log(duration) (default 0)"},
    {"straggler", 1, O_STRAGGLER, "S:F", "pipeline stage S runs F times slower (e.g. 3:1.5)"},
    {"seed", 1, O_SEED, "N", "random seed of the jitter (default 1)"},
    {"sim-threshold", 1, O_SIM_THRESHOLD, "PCT", "flag plans whose simulated and analytic steps differ by more (default 10)"},
    {"no-sim", 0, O_NO_SIM, NULL, "plan: do not simulate the top plans"},
    {NULL, 0, 0, NULL, "Search and output"},
    {"objective", 1, O_OBJECTIVE, "O", "rank by time (default), cost, throughput or memory"},
    {"top", 1, O_TOP, "N", "plans shown (default 5, at most 32)"},
    {"allow-tp-across-nodes", 0, O_ALLOW_TP_NODES, NULL, "let TP groups span nodes (off: SMP best practice)"},
    {"json", 0, O_JSON, NULL, "print JSON with stable field names"},
    {"explain", 0, O_EXPLAIN, NULL, "print every memory and time term of the best plan with its formula and source"},
    {"emit", 1, O_EMIT, "K", "print the launch file of plan #1 as the table ranks it: launch (its stack's: SageMaker estimator, Megatron-LM, DeepSpeed, torchtitan, FSDP, MaxText, smdplan exec), slurm (an sbatch script of it), or the stack's name (sagemaker, mpirun, megatron, deepspeed, torchtitan, fsdp, maxtext, smdplan); with --json, inside the document"},
    {"wide", 0, O_WIDE, NULL, "every column of every table, whatever the terminal's width (any command)"},
    {"no-record", 0, O_NO_RECORD, NULL, "do not record this run"},
    {"db", 1, O_DB, "FILE", "record into this database (default $SMDPLAN_DB, else smdplan.db; see smdplan history)"},
    {"version", 0, O_VERSION, NULL, "print the version and build features"},
    {"help", 0, O_HELP, NULL, "this help"},
};
#define NOPTS ((int)(sizeof opt_table / sizeof opt_table[0]))

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan [plan] --params SIZE [--instances N x TYPE] [options]\n"
            "       smdplan simulate --params SIZE --instances N x TYPE [layout options] [--trace FILE]\n"
            "       smdplan catalog | validate FILE.csv | calibrate FILE.csv | --version\n"
            "       smdplan history | show ID | compare       what was recorded (see smdplan history --help)\n"
            "       smdplan report [--out DIR]                 plots and a page of the records (see smdplan report --help)\n\n"
            "Recommends how to split a GPT-style model over a cluster: tensor, pipeline and data\n"
            "parallel degrees, micro-batching, recomputation, sharding and placement, with the\n"
            "per-GPU memory, step time, tokens/s, MFU and cost of each plan.\n");
    cli_print_opt_table(f, opt_table, NOPTS);
    fprintf(f,
            "\nExamples:\n"
            "  smdplan --params 30B --instances 16xp4d\n"
            "  smdplan --params 60B --instances 32xp4d --tp 8 --pp 2 --batch-size 56 \\\n"
            "          --microbatches 4 --active-microbatches 2 --recompute full --sharding optimizer\n"
            "  smdplan --params 175B --instances 64xp5 --objective cost --json\n"
            "  smdplan --params 13B --tokens 300B            # compare instance types and counts\n"
            "  smdplan --model config.json --instances p4de:8 --emit sagemaker\n"
            "  smdplan simulate --params 30B --instances 16xp4d --tp 8 --pp 2 --trace step.json\n"
            "\nExit codes: 0 plans found, 2 bad input, 3 nothing fits (the output says why).\n");
}

static int parse_onoff(const char *what, const char *s, int *out, st_err *err)
{
    if (!strcasecmp(s, "on") || !strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes")) {
        *out = 1;
        return ST_OK;
    }
    if (!strcasecmp(s, "off") || !strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no")) {
        *out = 0;
        return ST_OK;
    }
    return ST_RAISE(err, ST_EINVAL, "%s '%s': allowed are on, off", what, s);
}

static int parse_int_opt(const char *name, const char *s, int64_t max, int *out, st_err *err)
{
    int64_t v;
    char what[48];
    snprintf(what, sizeof what, "--%s", name);
    int rc = units_parse_int(s, what, 1, max, &v, err);
    if (rc == ST_OK)
        *out = (int)v;
    return rc;
}

static int parse_i64_opt(const char *name, const char *s, int64_t max, int64_t *out, st_err *err)
{
    char what[48];
    snprintf(what, sizeof what, "--%s", name);
    return units_parse_int(s, what, 1, max, out, err);
}

/* Apply one option. */
/* The simulator's options (--monte-carlo, --seed, --jitter,
 * --sim-threshold, --straggler). */
static int apply_sim(cli_plan_opts *o, const cli_opt *d, const char *a, st_err *err)
{
    switch (d->id) {
    case O_MONTE_CARLO: return parse_int_opt(d->name, a, 100000, &o->sim.monte_carlo, err);
    case O_SEED: {
        int64_t seed;
        int rc = units_parse_int(a, "--seed", 0, INT64_MAX / 2, &seed, err);
        o->sim.seed = (uint64_t)seed;
        return rc;
    }
    case O_JITTER: {
        double j;
        int rc = units_parse_count(a, "--jitter", &j, err);
        if (rc == ST_OK && j > 2.0)
            return ST_RAISE(err, ST_EINVAL, "--jitter '%s': allowed 0 to 2 (sigma of log duration)", a);
        o->sim.jitter_sigma = j;
        return rc;
    }
    case O_SIM_THRESHOLD: return units_parse_count(a, "--sim-threshold", &o->sim_threshold_pct, err);
    case O_STRAGGLER: {
        const char *colon = strchr(a, ':');
        char stage[32];
        if (!colon || colon == a || (size_t)(colon - a) >= sizeof stage)
            return ST_RAISE(err, ST_EINVAL, "--straggler '%s': expected STAGE:FACTOR, e.g. 3:1.5", a);
        memcpy(stage, a, (size_t)(colon - a));
        stage[colon - a] = '\0';
        int64_t st;
        double fac;
        int rc = units_parse_int(stage, "--straggler stage", 0, PLAN_PP_MAX - 1, &st, err);
        if (rc == ST_OK)
            rc = units_parse_count(colon + 1, "--straggler factor", &fac, err);
        if (rc == ST_OK && (fac < 1.0 || fac > 1000))
            return ST_RAISE(err, ST_EINVAL, "--straggler '%s': the factor must be 1 to 1000", a);
        o->sim.straggler_stage = (int)st;
        o->sim.straggler_factor = fac;
        return rc;
    }
    default:
        return ST_RAISE(err, ST_EINTERNAL, "option --%s has no handler", d->name);
    }
}

static int apply(cli_plan_opts *o, const cli_opt *d, const char *a, st_err *err)
{
    plan_config *c = &o->cfg;
    const int64_t big = 1 << 30;
    int v;
    switch (d->id) {
    case O_PARAMS: o->params = a; return ST_OK;
    case O_ARCH: o->arch = a; return ST_OK;
    case O_FAMILY: o->family = a; return ST_OK;
    case O_MODEL: o->model_file = a; return ST_OK;
    case O_LAYERS: return parse_i64_opt(d->name, a, PLAN_MAX_LAYERS, &o->layers, err);
    case O_HIDDEN: return parse_i64_opt(d->name, a, PLAN_MAX_HIDDEN, &o->hidden, err);
    case O_HEADS: return parse_i64_opt(d->name, a, PLAN_MAX_HEADS, &o->heads, err);
    case O_KV_HEADS: return parse_i64_opt(d->name, a, PLAN_MAX_HEADS, &o->kv_heads, err);
    case O_FFN: return parse_i64_opt(d->name, a, 16 * (int64_t)PLAN_MAX_HIDDEN, &o->ffn, err);
    case O_SEQ: return parse_i64_opt(d->name, a, PLAN_MAX_SEQ, &o->seq, err);
    case O_VOCAB: return parse_i64_opt(d->name, a, PLAN_MAX_VOCAB, &o->vocab, err);
    case O_DROPOUT: return parse_onoff("--dropout", a, &o->dropout, err);
    case O_HEAD_DIM: return parse_i64_opt(d->name, a, PLAN_MAX_ATTN_WIDTH, &o->head_dim, err);
    case O_WINDOW: return units_parse_int(a, "--sliding-window", 0, PLAN_MAX_SEQ, &o->window, err);
    case O_WINDOW_PATTERN: {
        int64_t n;
        int rc = units_parse_int(a, "--sliding-window-pattern", 0, PLAN_MAX_LAYERS, &n, err);
        if (rc == ST_OK)
            o->window_pattern = (int)n;
        return rc;
    }
    case O_INSTANCES: o->instances = a; return ST_OK;
    case O_CATALOG:
        if (o->ncatalogs == CLI_CATALOGS_MAX)
            return ST_RAISE(err, ST_EINVAL, "--catalog %s: at most %d catalog files", a,
                            CLI_CATALOGS_MAX);
        o->catalog_files[o->ncatalogs++] = a;
        return ST_OK;
    case O_REGION: o->region = a; return ST_OK;
    case O_PRICES: o->prices_file = a; return ST_OK;
    case O_MAX_INSTANCES: return parse_int_opt(d->name, a, 100000, &o->max_instances, err);
    case O_TOKENS: {
        o->tokens_given = 1;
        int rc = units_parse_count(a, "--tokens", &o->tokens, err);
        if (rc == ST_OK && o->tokens < 1)
            return ST_RAISE(err, ST_EINVAL, "--tokens '%s': must be at least 1", a);
        return rc;
    }
    case O_TP: return parse_int_opt(d->name, a, 65536, &c->tp, err);
    case O_PP: return parse_int_opt(d->name, a, PLAN_PP_MAX, &c->pp, err);
    case O_DP: return parse_int_opt(d->name, a, big, &c->dp, err);
    case O_CP: return parse_int_opt(d->name, a, 65536, &c->cp, err);
    case O_MICRO_BATCH: return parse_int_opt(d->name, a, big, &c->micro_batch, err);
    case O_MICROBATCHES: return parse_int_opt(d->name, a, big, &c->microbatches, err);
    case O_ACTIVE: return parse_int_opt(d->name, a, big, &c->active_microbatches, err);
    case O_VIRTUAL: return parse_int_opt(d->name, a, 1024, &c->virtual_stages, err);
    case O_RECOMPUTE_GROUP: return parse_int_opt(d->name, a, PLAN_MAX_LAYERS, &c->recompute_group, err);
    case O_RECOMPUTE_LAYERS:
        return parse_int_opt(d->name, a, PLAN_MAX_LAYERS, &c->recompute_layers, err);
    case O_REMAT_POLICY: return plan_remat_policy_parse(a, &c->recompute_saved, err);
    case O_GLOBAL_BATCH: return parse_i64_opt(d->name, a, (int64_t)1 << 40, &c->global_batch, err);
    case O_BATCH_SIZE: return parse_i64_opt(d->name, a, (int64_t)1 << 40, &o->batch_size, err);
    case O_TOP: return parse_int_opt(d->name, a, PLAN_TOPK_MAX, &c->top_k, err);
    case O_SCHEDULE: {
        plan_schedule s;
        int rc = plan_schedule_parse(a, &s, err);
        c->schedule = (int)s;
        return rc;
    }
    case O_RECOMPUTE: {
        plan_recompute r;
        int rc = plan_recompute_parse(a, &r, err);
        c->recompute = (int)r;
        return rc;
    }
    case O_SHARDING: {
        plan_sharding s;
        int rc = plan_sharding_parse(a, &s, err);
        c->sharding = (int)s;
        return rc;
    }
    case O_OBJECTIVE: return plan_objective_parse(a, &c->objective, err);
    case O_PLACEMENT: return plan_placement_parse(a, c->placement, err);
    case O_SP: return parse_onoff("--sequence-parallel", a, &c->sequence_parallel, err);
    case O_OFFLOAD: return parse_onoff("--offload", a, &c->offload_activations, err);
    case O_COMPILE: return parse_onoff("--compile", a, &c->compiled, err);
    case O_PRESCALED: return parse_onoff("--prescaled-batch", a, &c->prescaled_batch, err);
    case O_FLASH: return parse_onoff("--flash-attention", a, &c->flash_attention, err);
    case O_DP_OVERLAP: return parse_onoff("--dp-overlap", a, &c->dp_overlap, err);
    case O_FP32_GRADS: return parse_onoff("--fp32-grads", a, &c->fp32_grads, err);
    case O_LAUNCH_BLOCKING: return parse_onoff("--launch-blocking", a, &c->launch_blocking, err);
    case O_DP_BUCKET: {
        int rc = units_parse_bytes(a, "--dp-bucket", &c->dp_bucket_bytes, err);
        if (rc == ST_OK && c->dp_bucket_bytes < 1)
            return ST_RAISE(err, ST_EINVAL, "--dp-bucket '%s': must be at least 1 byte", a);
        return rc;
    }
    case O_TP_OVERLAP:
        if (!strcasecmp(a, "bwd")) {
            c->tp_overlap = 1;
            return ST_OK;
        }
        if (parse_onoff("--tp-overlap", a, &c->tp_overlap, NULL) != ST_OK)
            return ST_RAISE(err, ST_EINVAL, "--tp-overlap '%s': allowed are off, bwd, on", a);
        c->tp_overlap *= 2;
        return ST_OK;
    case O_FRAMEWORK: return plan_framework_find(a, &c->framework, err);
    case O_PRECISION: {
        plan_precision p;
        int rc = plan_precision_parse(a, &p, err);
        c->precision = (int)p;
        return rc;
    }
    case O_PP_OVERLAP: return parse_onoff("--pp-overlap", a, &c->pp_overlap, err);
    case O_ALLOW_TP_NODES: c->allow_tp_across_nodes = 1; return ST_OK;
    case O_JSON: o->json = 1; return ST_OK;
    case O_TRACE: o->trace_path = a; return ST_OK;
    case O_FORCE: o->force = 1; return ST_OK;
    case O_NO_SIM: o->no_sim = 1; return ST_OK;
    case O_WIDE: rpt_term_set_wide(1); return ST_OK; /* cli_main takes it first */
    case O_MONTE_CARLO:
    case O_SEED:
    case O_JITTER:
    case O_SIM_THRESHOLD:
    case O_STRAGGLER: return apply_sim(o, d, a, err);
    case O_EXPLAIN: o->explain = 1; return ST_OK;
    case O_NO_RECORD: o->no_record = 1; return ST_OK;
    case O_DB: o->db_path = a; return ST_OK;
    case O_EMIT:
        if (!launch_kind_valid(a))
            return ST_RAISE(err, ST_EINVAL, "--emit '%s': allowed are %s", a, launch_kinds());
        o->emit = a;
        return ST_OK;
    default:
        (void)v;
        return ST_RAISE(err, ST_EINTERNAL, "option --%s has no handler", d->name);
    }
}

void cli_plan_opts_init(cli_plan_opts *o, int simulate)
{
    memset(o, 0, sizeof *o);
    plan_config_default(&o->cfg);
    sim_config_default(&o->sim);
    o->simulate = simulate;
    o->sim_threshold_pct = 10.0;
    o->max_instances = 64;
    o->dropout = -1;
    o->window = -1;
    o->window_pattern = -1;
    o->tokens = 300e9; /* GPT-3's training tokens (Brown et al. 2020, Sec. 2.2) */
}

int cli_plan_parse(int argc, char **argv, cli_plan_opts *o, st_err *err)
{
    struct option lo[NOPTS + 1];
    int n = 0;
    for (int i = 0; i < NOPTS; i++)
        if (opt_table[i].name)
            lo[n++] = (struct option){opt_table[i].name, opt_table[i].has_arg, NULL, opt_table[i].id};
    lo[n] = (struct option){0, 0, 0, 0};

    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof o->command_line; i++)
        used += (size_t)snprintf(o->command_line + used, sizeof o->command_line - used, "%s%s",
                                 i ? " " : "", argv[i]);

    optind = 1;
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (id == '?' || id == ':') {
            const char *bad = argv[optind - 1];
            fprintf(stderr, "smdplan: unknown option or missing value: '%s' (see smdplan --help)\n",
                    bad ? bad : "?");
            return 2;
        }
        if (id == O_HELP) {
            usage(stdout);
            return 1;
        }
        if (id == O_VERSION) {
            char *v[] = {(char *)"smdplan", (char *)"--version"};
            cli_main(2, v);
            return 1;
        }
        const cli_opt *d = NULL;
        for (int i = 0; i < NOPTS && !d; i++)
            if (opt_table[i].name && opt_table[i].id == id)
                d = &opt_table[i];
        if (apply(o, d, optarg, err) != ST_OK)
            return cli_fail(err);
    }
    if (optind < argc) {
        fprintf(stderr, "smdplan: unexpected argument '%s' (options start with --; see smdplan --help)\n",
                argv[optind]);
        return 2;
    }
    return 0;
}

void cli_plan_ctx_free(cli_plan_ctx *x)
{
    plan_catalog_free(&x->cat);
    plan_presets_free(&x->presets);
}

int cli_plan_resolve(const cli_plan_opts *o, cli_plan_ctx *x, int need_model, st_err *err)
{
    memset(x, 0, sizeof *x);
    int rc = data_catalog_load(NULL, &x->cat, err);
    for (int i = 0; rc == ST_OK && i < o->ncatalogs; i++)
        rc = data_catalog_merge(&x->cat, o->catalog_files[i], err);
    if (rc == ST_OK)
        rc = cli_prices_apply(&x->cat, o->region, o->prices_file, err);
    if (rc == ST_OK && need_model && (o->params || !o->model_file))
        rc = data_presets_load(NULL, &x->presets, err);
    if (rc == ST_OK && need_model) {
        plan_model_request q = {
            .arch = o->arch, .family = o->family, .file = o->model_file,
            .load = data_model_ref_load, .params = o->params,
            .ov = {.layers = o->layers, .hidden = o->hidden, .heads = o->heads,
                   .kv_heads = o->kv_heads, .ffn = o->ffn, .seq = o->seq, .vocab = o->vocab,
                   .head_dim = o->head_dim, .window = o->window,
                   .window_pattern = o->window_pattern, .dropout = o->dropout},
        };
        rc = plan_request_model(&q, &x->presets, &x->model, err);
    }
    if (rc == ST_OK && o->instances) {
        rc = plan_cluster_parse(&x->cat, o->instances, &x->cluster, err);
        x->have_cluster = rc == ST_OK;
        if (rc == ST_OK)
            plan_cluster_use_framework(&x->cat, o->cfg.framework, &x->cluster);
    }
    if (rc != ST_OK)
        cli_plan_ctx_free(x);
    return rc;
}

int cli_preset_batch(cli_plan_opts *o, const cli_plan_ctx *x, char *src, size_t n, st_err *err)
{
    const plan_preset *p = plan_preset_of(&x->presets, &x->model);
    if (!p || o->cfg.global_batch > 0)
        return ST_OK;
    int rc = plan_preset_batch(&x->cat, p, &o->cfg.global_batch, src, n, err);
    if (rc == ST_OK)
        o->batch_source = src;
    return rc;
}

typedef struct sim_record {
    const cli_plan_ctx *x;
    const plan_candidate *best;
    const sim_config *cfg;
    const sim_result *r;
} sim_record;

static int record_sim(db *d, const db_provenance *p, void *ctx, st_err *err)
{
    const sim_record *s = ctx;
    return db_record_simulation(d, p, &s->x->model, &s->x->cluster, &s->best->layout,
                                &s->best->est, s->cfg, s->r, NULL, err);
}

typedef struct plan_record {
    const cli_plan_ctx *x;
    const plan_config *cfg;
    const plan_result *r;
    const sim_top_steps *sim;
} plan_record;

static int record_plan(db *d, const db_provenance *p, void *ctx, st_err *err)
{
    const plan_record *s = ctx;
    return db_record_plan(d, p, &s->x->model, &s->x->cluster, s->cfg, s->r,
                          s->sim->n > 0 ? s->sim->step_s : NULL, NULL, err);
}

/* `smdplan simulate`: play out the best layout the fixed knobs allow, the
 * plan command's plan #1 (its top plans re-ranked by simulation). */
static int run_simulate(const cli_plan_opts *o, cli_plan_ctx *x, plan_result *res)
{
    st_err err = {0};
    sim_config sc = o->sim;
    sc.keep_trace = o->trace_path != NULL;
    sim_result sr;
    cli_progress prog;
    cli_progress_start(&prog, "simulating steps");
    sc.progress = cli_progress_sim;
    sc.progress_ctx = &prog;
    /* the plan the plan command recommends: its top plans re-ranked by
     * their simulated steps (show_plan), unless --no-sim */
    sim_top_steps col = {0};
    if (!o->no_sim && res->ntop > 1 &&
        sim_top_rank(&x->model, &x->cluster, res, &o->sim, o->cfg.objective,
                     o->sim_threshold_pct, &col, &err) != ST_OK) {
        cli_progress_end(&prog);
        return cli_fail(&err);
    }
    const plan_candidate *best = &res->top[0];
    int rc = sim_layout_run_trace(&x->model, &x->cluster, &best->layout, &sc, o->trace_path,
                                  o->force, &sr, &err);
    cli_progress_end(&prog);
    sc.progress = NULL;
    if (rc != ST_OK)
        return cli_fail(&err);
    if (o->json) {
        cJSON *root = data_json_simulation(&sr, &x->model, &x->cluster, best, sc.seed);
        char *s = cJSON_Print(root);
        cJSON_Delete(root);
        if (s)
            printf("%s\n", s);
        free(s);
    } else {
        rpt_plan_model(stdout, &x->model);
        rpt_plan_cluster(stdout, &x->cluster, cli_price_list());
        rpt_plan_stack(stdout, best->layout.framework, &x->cluster);
        rpt_plan_layout(stdout, &best->layout);
        rpt_plan_sim(stdout, &sc, &sr, o->sim_threshold_pct);
        if (o->trace_path)
            printf("\ntrace: %s (%d ops; open in ui.perfetto.dev)\n", o->trace_path, sr.ntrace);
    }
    sim_record rec = {x, best, &sc, &sr};
    cli_record(o->db_path, o->no_record, record_sim, &rec);
    sim_result_fini(&sr);
    return 0;
}

int cli_simulate_cmd(int argc, char **argv)
{
    return cli_plan_run(argc, argv, 1);
}

int cli_plan_cmd(int argc, char **argv)
{
    return cli_plan_run(argc, argv, 0);
}

/* Requests the plan command refuses before any search. */
static int refuse_request(const cli_plan_opts *o, const cli_plan_ctx *x, st_err *err)
{
    if (!x->have_cluster && o->simulate) {
        ST_RAISE(err, ST_EINVAL, "simulate: give the cluster with --instances (e.g. 16xp4d)");
        return err->code;
    }
    if (!x->have_cluster && o->emit) {
        ST_RAISE(err, ST_EINVAL, "--emit %s: the launch settings are for one cluster; give it "
                 "with --instances (e.g. 16xp4d); without --instances smdplan compares instance "
                 "types", o->emit);
        return err->code;
    }
    if (o->trace_path && !o->simulate) {
        ST_RAISE(err, ST_EINVAL, "--trace %s: only with smdplan simulate (the plan command "
                 "simulates its top plans without a trace)", o->trace_path);
        return err->code;
    }
    /* a file that may not be written is refused before the simulation */
    if (o->trace_path && outfile_check(o->trace_path, "--trace", o->force, err) != ST_OK)
        return err->code;
    return ST_OK;
}

/* The batch a preset publishes (its source text into batch_src, which
 * o->batch_source then points to), the layout flags no search could
 * honour, and --batch-size as a global batch. */
static int check_layout_flags(cli_plan_opts *o, cli_plan_ctx *x, char *batch_src, size_t n,
                              st_err *err)
{
    /* a preset that publishes its batch: that is the default
     * (planner/plan_preset_cmp.h) */
    if (!o->batch_size && cli_preset_batch(o, x, batch_src, n, err) != ST_OK)
        return err->code;
    return plan_request_check_layout(&x->model, &x->cluster, o->batch_size, &o->cfg, err);
}

/* --emit: refused before anything is printed; with --json its settings go
 * into the document. 0 or an exit code, with the message printed. */
static int check_emit(cli_plan_opts *o, const launch_plan *lp, st_err *err)
{
    launch_plan unsimulated = *lp; /* a refusal does not depend on the simulator */
    unsimulated.sim_step_s = 0;
    int rc = launch_check(o->emit, &unsimulated, err);
    int ex = rc == ST_OK ? 0 : st_exit_code(rc);
    if (!ex && o->json) {
        cJSON *e = launch_json(o->emit, lp, err);
        if (e)
            cJSON_AddItemToObject(o->json_extra, o->emit, e);
        else
            ex = 1;
    }
    if (ex)
        cli_fail(err);
    return ex;
}

/* --explain: the terms of plan #1 (NULL when they cannot be had); with
 * --json they go into the document. Caller frees. */
static plan_terms *explain_terms(cli_plan_opts *o, const cli_plan_ctx *x, const plan_result *res)
{
    plan_terms *terms = calloc(1, sizeof *terms);
    plan_estimate *e = calloc(1, sizeof *e);
    st_err terr = {0};
    if (!terms || !e ||
        plan_evaluate(&x->model, &x->cluster, &res->top[0].layout, e, terms, &terr) != ST_OK) {
        free(terms);
        terms = NULL;
    }
    free(e);
    if (terms && o->json)
        cJSON_AddItemToObject(o->json_extra, "explain", data_json_terms(terms));
    return terms;
}

/* The search's answer: simulate the top plans, check --emit, compare with
 * the preset's reference, print (text, JSON or launch settings), record. */
static int show_plan(cli_plan_opts *o, cli_plan_ctx *x, plan_result *res, int min_nodes,
                     st_err *err)
{
    int ex = 0;
    sim_top_steps simcol = {0};
    if (res->ntop > 0 && !o->no_sim &&
        sim_top_rank(&x->model, &x->cluster, res, &o->sim, o->cfg.objective, o->sim_threshold_pct,
                     &simcol, err) != ST_OK)
        return cli_fail(err);

    /* --json carries the launch settings, the preset's reference and
     * --explain's terms in the document (launch/, planner/plan_preset_cmp.h,
     * data/data_plan_json.h) */
    plan_preset_cmp *cmp = calloc(1, sizeof *cmp);
    o->json_extra = cJSON_CreateObject();
    if (!cmp || !o->json_extra)
        ex = cli_fail(&(st_err){.code = ST_ENOMEM, .msg = "out of memory"});
    launch_plan lp;
    char lp_basis[400];
    cli_launch_plan_of(o, &x->model, &x->cluster, res, &simcol, &lp, lp_basis, sizeof lp_basis);
    if (!ex && res->ntop > 0 && o->emit)
        ex = check_emit(o, &lp, err);
    if (!ex && res->ntop > 0 && !o->emit &&
        plan_preset_compare(plan_preset_of(&x->presets, &x->model), &x->model, &x->cluster,
                            &o->cfg, res, cmp, err) != ST_OK)
        ex = cli_fail(err);
    if (!ex && o->json && cmp->shown)
        cJSON_AddItemToObject(o->json_extra, "preset_reference", data_json_preset_cmp(cmp));
    plan_terms *terms = !ex && res->ntop > 0 && o->explain ? explain_terms(o, x, res) : NULL;
    if (!ex)
        ex = cli_plan_show(o, x, res, min_nodes, &simcol, cmp, terms);
    free(terms);
    if (res->ntop > 0 && o->emit && !o->json && !ex) {
        int rc = launch_write(stdout, o->emit, &lp, err);
        ex = rc == ST_OK ? 0 : st_exit_code(rc);
        if (ex)
            cli_fail(err);
    }
    if (!ex && res->ntop == 0)
        ex = 3;
    plan_record rec = {x, &o->cfg, res, &simcol};
    cli_record(o->db_path, o->no_record, record_plan, &rec);
    cJSON_Delete(o->json_extra);
    free(cmp);
    return ex;
}

int cli_plan_run(int argc, char **argv, int simulate)
{
    cli_plan_opts o;
    cli_plan_opts_init(&o, simulate);
    st_err err = {0};
    int ex = cli_plan_parse(argc, argv, &o, &err);
    if (ex)
        return ex == 1 ? 0 : ex;

    cli_plan_ctx x;
    int rc = cli_plan_resolve(&o, &x, 1, &err);
    if (rc != ST_OK)
        return cli_fail(&err);
    if (refuse_request(&o, &x, &err) != ST_OK) {
        cli_plan_ctx_free(&x);
        return cli_fail(&err);
    }
    if (!x.have_cluster) {
        ex = cli_instance_types_compare(&o, &x);
        cli_plan_ctx_free(&x);
        return ex;
    }
    char batch_src[400];
    if (check_layout_flags(&o, &x, batch_src, sizeof batch_src, &err) != ST_OK) {
        cli_plan_ctx_free(&x);
        return cli_fail(&err);
    }

    plan_result *res = calloc(1, sizeof *res);
    if (!res) {
        cli_plan_ctx_free(&x);
        ST_RAISE(&err, ST_ENOMEM, "out of memory");
        return cli_fail(&err);
    }
    rc = plan_search(&x.model, &x.cluster, &o.cfg, res, &err);
    if (rc != ST_OK) {
        free(res);
        cli_plan_ctx_free(&x);
        return cli_fail(&err);
    }

    int min_nodes = 0;
    if (res->ntop == 0)
        min_nodes = plan_min_nodes(&x.model, &x.cluster, &o.cfg, 16384, &err);

    if (o.simulate && res->ntop > 0) {
        ex = run_simulate(&o, &x, res);
        free(res);
        cli_plan_ctx_free(&x);
        return ex;
    }
    ex = show_plan(&o, &x, res, min_nodes, &err);
    free(res);
    cli_plan_ctx_free(&x);
    return ex;
}
