#!/usr/bin/env bash
# test_cli_stacks.sh: a launch file for every stack offered, read by the
# parser that will read it.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# For each stack (Megatron-LM, Megatron-DeepSpeed, torchtitan, PyTorch FSDP,
# MaxText, smdplan's executor) and as a Slurm batch job: the script parses
# (sh -n, bash -n), is ASCII, and run in an empty directory against stub
# launchers runs exactly the argv the --json object describes and writes
# exactly its files; each file parses with its stack's parser (json, tomllib,
# Python's ast) and every argument, key and name in it is one the stack reads
# (tests/fixtures/stack_args/, each list citing the source it was read from;
# smdplan exec's against its own --help). The issue's target is here: the
# Megatron-LM plan of Llama 70B on 16 x p5. A kind that is not the plan's
# stack's is refused in one line. Without python3 (3.11: tomllib) the checks
# are skipped, said so.
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
grep_syntax=F # refused's needles
if ! python3 -c 'import tomllib' 2>/dev/null; then
  echo "note: no python3 with tomllib: the launch files are not checked"
  exit 77
fi

# Stub launchers: each records its argument vector (NUL-separated) and exits.
mkdir -p "$tmp/bin"
for p in torchrun deepspeed srun python3 smdplan; do
  cat >"$tmp/bin/$p" <<'EOF'
#!/bin/sh
name=$(basename "$0")
for a in "$name" "$@"; do printf '%s\0' "$a"; done >>"$STUB_OUT"
EOF
  chmod +x "$tmp/bin/$p"
done
cat >"$tmp/bin/scontrol" <<'EOF'
#!/bin/sh
printf 'node-a\nnode-b\n'
EOF
chmod +x "$tmp/bin/scontrol"
# smdplan exec reads the plan command's model and layout options and its own
{ "$bin" exec --help; "$bin" --help; } >"$tmp/exec-help.txt" 2>&1

cat >"$tmp/check.py" <<'EOF'
import ast, json, os, re, subprocess, sys, tomllib
script, doc_path, kind, fixdir, rundir, stubbin, exechelp = sys.argv[1:8]
text = open(script, encoding="ascii").read()          # ASCII only
doc = json.load(open(doc_path))[kind]
def names(f):
    out = set()
    for line in open(os.path.join(fixdir, f)):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        out |= names(line[1:]) if line.startswith("@") else {line}
    return out
slurm = doc["slurm"]
shell = "bash" if slurm else "sh"
subprocess.run([shell, "-n", script], check=True)
# run it against the stubs, in an empty directory
os.makedirs(rundir)
out = os.path.join(rundir, ".argv")
env = dict(os.environ, PATH=stubbin + os.pathsep + os.environ["PATH"], STUB_OUT=out,
           MASTER_ADDR="10.0.0.1", SLURM_JOB_ID="4242", SLURM_JOB_NODELIST="node-[a-b]")
env.pop("MASTER_PORT", None)
subprocess.run([shell, script], cwd=rundir, env=env, check=True)
argv = open(out).read().split("\0")[:-1]
rdzv = "node-a:29500" if slurm else "10.0.0.1:29500"
want = [rdzv if a == "$RDZV" else "4242" if a == "$SLURM_JOB_ID" else a
        for a in doc["launcher_argv"]] + doc["program_argv"]
assert argv == want, "argv differs:\n%s\n%s" % (argv, want)
made = sorted(f for f in os.listdir(rundir) if f != ".argv")
assert made == sorted(doc["files"]), (made, sorted(doc["files"]))
for f in made:
    got = open(os.path.join(rundir, f)).read()
    assert got.rstrip("\n") == doc["files"][f].rstrip("\n"), f
# every launcher option is the launcher's
for a in doc["launcher_argv"]:
    if a.startswith("-"):
        assert a in names("launchers.txt"), "launcher option %s" % a
prog = doc["program_argv"]
kind = doc["kind"]          # the stack's kind, also for --emit launch and slurm
opts = [a for a in prog if a.startswith("--")]
def check_opts(allowed, what):
    bad = [o for o in opts if o not in allowed]
    assert not bad, "%s: not %s's: %s" % (kind, what, bad)
def dict_paths(d, prefix=""):
    for k, v in d.items():
        yield prefix + k
        if isinstance(v, dict):
            yield from dict_paths(v, prefix + k + ".")
if kind == "megatron":
    check_opts(names("megatron.txt"), "Megatron-LM")
    assert prog[0] == "pretrain_gpt.py"
elif kind == "deepspeed":
    check_opts(names("deepspeed.txt"), "Megatron-DeepSpeed")
    cfg = json.loads(doc["files"]["ds_config.json"])
    assert cfg == doc["configs"]["ds_config.json"]
    bad = [p for p in dict_paths(cfg) if p not in names("ds_config.txt")]
    assert not bad, "ds_config keys %s" % bad
    la = doc["launcher_argv"]
    if "--num_gpus" in la:
        gpus = int(la[la.index("--num_nodes") + 1]) * int(la[la.index("--num_gpus") + 1])
    else:
        gpus = int(la[la.index("--nnodes") + 1]) * int(la[la.index("--nproc-per-node") + 1])
    tp = int(prog[prog.index("--tensor-model-parallel-size") + 1])
    pp = int(prog[prog.index("--pipeline-model-parallel-size") + 1])
    # DeepSpeed-Ulysses' ranks split sequences, not the batch
    sp = int(prog[prog.index("--ds-sequence-parallel-size") + 1]) \
        if "--ds-sequence-parallel-size" in prog else 1
    assert cfg["train_batch_size"] == cfg["train_micro_batch_size_per_gpu"] * \
        cfg["gradient_accumulation_steps"] * (gpus // (tp * pp * sp)), cfg
elif kind == "torchtitan":
    cfg = tomllib.loads(doc["files"]["train.toml"])
    paths = [p for p in dict_paths(cfg) if "." in p]
    bad = [p for p in paths if p not in names("torchtitan.txt")]
    assert not bad, "torchtitan keys %s" % bad
    check_opts({"--" + n for n in names("torchtitan.txt")}, "torchtitan")
    t = cfg["training"]
    world = t["data_parallel_replicate_degree"] * t["data_parallel_shard_degree"] * \
        t["tensor_parallel_degree"] * cfg["experimental"]["pipeline_parallel_degree"] * \
        cfg["experimental"].get("context_parallel_degree", 1)
    nnodes = int(doc["launcher_argv"][doc["launcher_argv"].index("--nnodes") + 1])
    nproc = int(doc["launcher_argv"][doc["launcher_argv"].index("--nproc-per-node") + 1])
    assert world == nnodes * nproc, (world, nnodes, nproc)
    splits = [int(x.split(".")[1]) for x in cfg["experimental"].get("pipeline_parallel_split_points", [])]
    assert splits == sorted(set(splits)) and all(0 < x < sum(doc["stage_layers"]) for x in splits), splits
elif kind == "fsdp":
    src = doc["files"]["fsdp_settings.py"]
    tree = ast.parse(src)
    allowed = names("fsdp.txt")
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert all(m.split(".")[0] == "torch" for m in mods), mods
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("dict", "MixedPrecision", "MixedPrecisionPolicy"):
            for kw in node.keywords:
                assert kw.arg in allowed, "FSDP keyword %s" % kw.arg
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in ("ShardingStrategy", "BackwardPrefetch", "torch"):
            assert "%s.%s" % (node.value.id, node.attr) in allowed, node.attr
elif kind == "maxtext":
    allowed = names("maxtext.txt")
    assert prog[:3] == ["python3", "MaxText/train.py", "MaxText/configs/base.yml"], prog[:3]
    bad = [a.split("=")[0] for a in prog[3:] if a.split("=")[0] not in allowed]
    assert not bad, "MaxText keys %s" % bad
elif kind == "smdplan":
    helptext = open(exechelp).read()
    known = set(re.findall(r"--[a-z][a-z0-9-]*", helptext))
    check_opts(known, "smdplan exec")
print("ok")
EOF

# launch_ok NAME KIND ARGS...: --emit KIND and --emit KIND --json agree, run
# as described, and speak only their stack's words.
launch_ok() {
  local name=$1 kind=$2
  shift 2
  emitted "$name" "$kind" "$@" || return
  checked "$name" python3 "$tmp/check.py" "$tmp/s$n" "$tmp/j$n" "$kind" "$fix/stack_args" "$tmp/run$n" \
    "$tmp/bin" "$tmp/exec-help.txt"
}

# The issue's target: Llama 70B on 16 x p5 with Megatron-LM.
launch_ok megatron-70b-p5 launch --params 70B --arch llama --instances 16xp5 --framework megatron
launch_ok megatron-70b-p5-named megatron --params 70B --arch llama --instances 16xp5 --framework megatron
# ... and for the published Llama 3.1 70B by name, the model SMP v2's plan of
# the same cluster is for (test_cli_emit.sh, smp2-70b-p5)
launch_ok megatron-llama31-70b-p5 launch --model meta-llama/Llama-3.1-70B --instances 16xp5 \
  --framework megatron
# GPT on A100 (learned positions, tied embedding) and fp16 on V100
launch_ok megatron-gpt-30b launch --params 30B --instances 16xp4d --framework megatron
# 126 layers over pp 8 x virtual 8: the embedding and the loss take layers' places
launch_ok megatron-405b-places launch --model meta-llama/Llama-3.1-405B --instances 64xp5 \
  --framework megatron --tp 8 --pp 8 --schedule virtual --virtual-stages 8
for f in --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split; do
  grep -q -- "$f" "$tmp/s$n" || { echo "FAIL megatron-405b-places: no $f"; fail=1; }
done
launch_ok megatron-v100-fp16 launch --params 1.3B --instances 2xp3.16xlarge --framework megatron
grep -q -- "--fp16" "$tmp/s$n" || { echo "FAIL megatron-v100-fp16: no --fp16"; fail=1; }
grep -q -- "--bf16" "$tmp/s$n" && { echo "FAIL megatron-v100-fp16: --bf16 on V100"; fail=1; }
# context parallelism and FP8 on H100
launch_ok megatron-cp-fp8 launch --params 70B --arch llama --instances 16xp5 --framework megatron \
  --cp 2 --precision fp8 --seq 16384
grep -q -- "--fp8-format hybrid" "$tmp/s$n" || { echo "FAIL megatron-cp-fp8: no --fp8-format"; fail=1; }
launch_ok deepspeed-13b launch --params 13B --arch llama --instances 4xp4de --framework deepspeed
launch_ok deepspeed-gpt-pp launch --params 30B --instances 16xp4d --framework deepspeed --pp 4
# DeepSpeed-Ulysses, Megatron-DeepSpeed's context parallelism from 2023
launch_ok deepspeed-ulysses launch --model meta-llama/Llama-2-7b-hf --seq 32768 --instances 4xp4d \
  --framework megatron-deepspeed@2023 --cp 8 --recompute full
grep -q -- "--ds-sequence-parallel-size 8" "$tmp/s$n" ||
  { echo "FAIL deepspeed-ulysses: no --ds-sequence-parallel-size"; fail=1; }
launch_ok torchtitan-70b-p5 launch --params 70B --arch llama --instances 16xp5 --framework torchtitan
launch_ok torchtitan-8b launch --params 8B --arch llama --instances 2xp5 --framework torchtitan
launch_ok fsdp-13b launch --params 13B --instances 4xp4de --framework fsdp
launch_ok fsdp-v100 fsdp --params 1.3B --instances 2xp3dn --framework fsdp
launch_ok maxtext-13b launch --params 13B --instances 4xp4de --framework jax --microbatches 1
# the refinements of full recompute by their stacks' own knobs: Megatron's
# block method, a MaxText remat policy; refused by a stack without them
launch_ok megatron-block launch --params 30B --instances 16xp4d --framework megatron \
  --recompute full --recompute-layers 2
{ grep -q -- "--recompute-method block" "$tmp/s$n" && grep -q -- "--recompute-num-layers 2" "$tmp/s$n"; } ||
  { echo "FAIL megatron-block: no block method"; fail=1; }
launch_ok maxtext-policy launch --params 13B --instances 4xp4de --framework jax --microbatches 1 \
  --global-batch 64 --recompute full --remat-policy save_dot_except_mlp
grep -q "remat_policy=save_dot_except_mlp" "$tmp/s$n" ||
  { echo "FAIL maxtext-policy: no remat_policy=save_dot_except_mlp"; fail=1; }
launch_ok smdplan-exec launch --params 125M --instances 1xp4d --framework smdplan
# Gemma 2: heads of 256 on hidden 3584 (--kv-channels) and a window on every
# other layer (--window-size, --window-attn-skip-freq); MaxText takes the
# head size (head_dim) of a shape without a window
launch_ok megatron-gemma2-9b launch --model google/gemma-2-9b --instances 2xp4d --framework megatron
grep -q -- "--kv-channels 256" "$tmp/s$n" || { echo "FAIL megatron-gemma2-9b: no --kv-channels"; fail=1; }
grep -q -- "--window-attn-skip-freq 2" "$tmp/s$n" || { echo "FAIL megatron-gemma2-9b: no window"; fail=1; }
launch_ok maxtext-head-dim launch --model google/gemma-2-2b --sliding-window 0 --instances 4xp4de \
  --framework jax --microbatches 1
grep -q "head_dim=256" "$tmp/s$n" || { echo "FAIL maxtext-head-dim: no head_dim=256"; fail=1; }
# the same jobs as Slurm batch scripts
launch_ok slurm-megatron slurm --params 70B --arch llama --instances 16xp5 --framework megatron
launch_ok slurm-torchtitan slurm --params 70B --arch llama --instances 16xp5 --framework torchtitan
launch_ok slurm-deepspeed slurm --params 13B --arch llama --instances 4xp4de --framework deepspeed
launch_ok slurm-maxtext slurm --params 13B --instances 4xp4de --framework jax --microbatches 1

# Names from files (a config's _name_or_path that tries to end a comment, a
# string and a here-document; a catalog path with quotes and a command
# substitution) run nothing: the run above writes only the files described.
hdir="$tmp/d\$(touch PD1)'\"
SMDPLAN_EOF
touch PD2"
mkdir -p "$hdir" && cp "$fix/hf_hostile_name.json" "$hdir/config.json"
launch_ok hostile-megatron launch --model "$hdir/config.json" --instances 2xp4d --framework megatron
launch_ok hostile-fsdp launch --model "$hdir/config.json" --instances 2xp4d --framework fsdp
launch_ok hostile-slurm slurm --model "$hdir/config.json" --instances 2xp4d --framework deepspeed
sed 's/"_name_or_path": ".*"/"_name_or_path": "x\\"\\nSMDPLAN_EOF\\n[job]\\ntouch P9"/' \
  "$fix/hf_llama3_8b.json" >"$tmp/hl.json"
launch_ok hostile-torchtitan launch --model "$tmp/hl.json" --instances 2xp5 --framework torchtitan
[ -e PD1 ] || [ -e PD2 ] || [ -e P9 ] && { echo "FAIL hostile: a name ran"; fail=1; }

# Refusals: one line, exit 2, nothing printed.
refused() { # name needle command...
  local name=$1 needle=$2
  shift 2
  run "$name" 2 "$@"
  one_line_error "$name" "$needle"
}
refused other-stack "the plan is for SageMaker model parallel v1" \
  "$bin" --params 30B --instances 16xp4d --emit megatron
refused smp-slurm "use --emit sagemaker" "$bin" --params 30B --instances 16xp4d --emit slurm
refused titan-gpt "torchtitan trains its Llama models" \
  "$bin" --params 30B --instances 16xp4d --framework torchtitan --emit launch
refused maxtext-accumulation "no gradient accumulation" \
  "$bin" --params 13B --instances 4xp4de --framework jax --microbatches 4 --emit launch
refused emit-unknown "allowed are launch" "$bin" --params 13B --instances 4xp4de --emit nemo
refused fsdp-block "--recompute-layers 2: Megatron's block method" "$bin" --params 8B \
  --arch llama --instances 2xp5 --framework fsdp --recompute full --recompute-layers 2
refused fsdp-remat-policy "--remat-policy save_qkv_proj: a MaxText remat policy" "$bin" \
  --params 13B --instances 4xp4de --framework fsdp --recompute full --remat-policy save_qkv_proj
refused remat-policy-no-full "allowed with --recompute full" "$bin" --params 13B \
  --instances 4xp4de --framework jax --microbatches 1 --remat-policy save_qkv_proj
# a head size or a window a stack cannot say
refused titan-head-dim "torchtitan's Llama attention takes dim / n_heads" \
  "$bin" --model google/gemma-2-9b --instances 2xp4d --framework torchtitan --emit launch
refused titan-window "torchtitan's Llama attention is causal over the whole sequence" \
  "$bin" --model mistral-7b --instances 2xp5 --framework torchtitan --emit launch
refused deepspeed-window "no sliding-window attention" \
  "$bin" --model google/gemma-2-9b --instances 2xp4d --framework deepspeed --emit launch
# context parallelism in a release without DeepSpeed-Ulysses
refused deepspeed-2022-cp "has no context parallelism" "$bin" --model meta-llama/Llama-2-7b-hf \
  --seq 32768 --instances 4xp4d --framework megatron-deepspeed@2022 --cp 8 --emit launch
refused maxtext-window "no sliding-window key" \
  "$bin" --model google/gemma-2-2b --instances 4xp4de --framework jax --microbatches 1 --emit launch
refused smdplan-head-dim "the executor's attention projections are hidden x hidden" \
  "$bin" --model google/gemma-2-2b --instances 1xp4d --framework smdplan --emit launch

exit $fail
