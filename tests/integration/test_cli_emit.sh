#!/usr/bin/env bash
# test_cli_emit.sh: --emit sagemaker and --emit mpirun end to end.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# Checks that the emitters write the plan ranked #1 in the table (after the
# simulator's re-ranking); refuse, with one line naming the knob and exit 2,
# plans SageMaker model parallel v1 cannot run; take EFA and host memory from
# the catalog; and that what they write is safe to run: the Python parses and,
# run against a stub of the SageMaker SDK, builds exactly the estimator the
# --json object describes; the shell script, run against a stub mpirun, passes
# exactly the argv and SMP parameters the --json object describes; names from
# a config.json, a catalog file and a path that try to break out of a string
# or a comment run nothing. Without python3 the checks that need it are
# skipped (said so), the others still run.
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
grep_syntax=F
[ "$have_py" = 1 ] || echo "note: no python3: the parse and run checks are skipped"

# A stub of the SageMaker SDK: the estimator records its arguments as JSON.
mkdir -p "$tmp/stub/sagemaker" "$tmp/bin"
cat >"$tmp/stub/sagemaker/__init__.py" <<'EOF'
def get_execution_role():
    return "arn:aws:iam::000000000000:role/stub"
EOF
cat >"$tmp/stub/sagemaker/pytorch.py" <<'EOF'
import json, os
class PyTorch:
    def __init__(self, **kw):
        with open(os.environ["STUB_OUT"], "w") as f:
            json.dump(kw, f)
EOF
# A stub mpirun: records its argument vector and the SMP parameters it was given.
cat >"$tmp/bin/mpirun" <<'EOF'
#!/bin/sh
printf '%s\n' mpirun "$@" >"$STUB_OUT.argv"
printf '%s' "$SM_HP_MP_PARAMETERS" >"$STUB_OUT.env"
EOF
chmod +x "$tmp/bin/mpirun"

# The checker: parses the emitted file, runs it in an empty directory against
# the stubs, compares with the --json object; prints what differs.
cat >"$tmp/cmp.py" <<'EOF'
import ast, json, os, subprocess, sys
kind, script, doc, rundir, stub, binstub = sys.argv[1:7]
text = open(script, encoding="ascii").read()   # ASCII only: nothing can hide
if kind == "sagemaker":
    tree = ast.parse(text)
    for node in ast.walk(tree):                # the only imports are the SDK's
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert all(m.split(".")[0] == "sagemaker" for m in mods), "import %s" % mods
doc = json.load(open(doc))
os.makedirs(rundir)
out = os.path.join(rundir, "stub-out")
env = dict(os.environ, STUB_OUT=out, PYTHONPATH=stub, PATH=binstub + os.pathsep + os.environ["PATH"])
cmd = [sys.executable, script] if kind == "sagemaker" else ["sh", script]
subprocess.run(cmd, cwd=rundir, env=env, check=True)
left = sorted(f for f in os.listdir(rundir) if not f.startswith("stub-out"))
assert not left, "the script created %s" % left
if kind == "sagemaker":
    got = json.load(open(out))
    want = dict(doc["sagemaker"]["estimator"])
    assert got.pop("role") == "arn:aws:iam::000000000000:role/stub"
    want.pop("role")
    assert got == want, "estimator differs:\n%s\n%s" % (got, want)
else:
    argv = open(out + ".argv").read().split("\n")[:-1]
    assert argv == doc["mpirun"]["argv"], "argv differs:\n%s\n%s" % (argv, doc["mpirun"]["argv"])
    params = json.loads(open(out + ".env").read())
    assert params == doc["mpirun"]["parameters"], "parameters differ"
print("same")
EOF

# emit_ok NAME KIND ARGS...: the emitted script parses, runs only what it
# should, and carries the same settings as --json KIND.
emit_ok() {
  local name=$1 kind=$2
  shift 2
  emitted "$name" "$kind" "$@" || return
  if [ "$have_py" = 1 ]; then
    checked "$name" python3 "$tmp/cmp.py" "$kind" "$tmp/s$n" "$tmp/j$n" "$tmp/run$n" "$tmp/stub" "$tmp/bin"
  else
    echo "ok   $name (not run: no python3)"
  fi
}

# --- The plan the table ranks first, after the simulator's re-ranking. ------
# 20B on 8 x p4d: the simulator reorders the planner's ranking.
emit_ok rank1-sagemaker sagemaker --params 20B --instances 8xp4d
emit_ok rank1-mpirun mpirun --params 20B --instances 8xp4d
if [ "$have_py" = 1 ]; then
  "$bin" --params 20B --instances 8xp4d --json >"$tmp/table" 2>/dev/null
  if [ "$(pyget "$tmp/table" 'd["reranked_by_simulation"]')" != True ]; then
    echo "FAIL rank1: 20B on 8 x p4d is no longer re-ranked by the simulator; pick a case that is"; fail=1
  fi
  want=$(pyget "$tmp/table" '"%d %d %d %d" % tuple(d["plans"][0][k] for k in ("tp","pp","micro_batch","microbatches"))')
  p='d["sagemaker"]["estimator"]["distribution"]["smdistributed"]["modelparallel"]["parameters"]'
  got=$(pyget "$tmp/j1" "\"%d %d %d %d\" % ($p[\"tensor_parallel_degree\"], $p[\"partitions\"], d[\"sagemaker\"][\"train_batch_size\"] // $p[\"microbatches\"], $p[\"microbatches\"])")
  [ "$want" = "$got" ] && echo "ok   rank1-is-table-first ($want)" || { echo "FAIL rank1: emitted '$got', table #1 '$want'"; fail=1; }
  got=$(pyget "$tmp/j2" '"%d %d" % (d["mpirun"]["parameters"]["tensor_parallel_degree"], d["mpirun"]["parameters"]["partitions"])')
  [ "$got" = "$(echo "$want" | cut -d' ' -f1-2)" ] && echo "ok   rank1-mpirun-is-table-first" || { echo "FAIL rank1 mpirun: $got"; fail=1; }
fi

# --- What the SageMaker settings say. ----------------------------------------
run sm-30b 0 "$bin" --params 30B --instances 16xp4d --emit sagemaker
for want in '"optimize": "memory"' '"prescaled_batch": True' '"shard_optimizer_state": True' \
            'custom_mpi_options' 'FI_PROVIDER=efa' 'instance_type="ml.p4d.24xlarge"' \
            'instance_count=16' 'framework_version="2.0.0"' 'py_version="py310"' \
            'role=sagemaker.get_execution_role()' 'entry_point="train.py"'; do
  grep -qF -- "$want" "$tmp/out" || { echo "FAIL sm-30b: no $want"; fail=1; }
done
if [ "$have_py" = 1 ]; then # the script's batch: the preset's 512 over #1's replicas (prescaled)
  "$bin" --params 30B --instances 16xp4d --json >"$tmp/t30" 2>/dev/null
  want=$(pyget "$tmp/t30" 'd["global_batch"] // d["plans"][0]["dp"]')
  grep -qF "train_batch_size = $want" "$tmp/out" || { echo "FAIL sm-30b: train_batch_size not $want"; fail=1; }
fi
grep -q "delayed_parameter_initialization\"" "$tmp/out" && { echo "FAIL sm-30b: delayed init on a node it fits"; fail=1; }
# sequence parallelism off is SMP's optimize "speed"
run sm-speed 0 "$bin" --params 30B --instances 16xp4d --sequence-parallel off --emit sagemaker
grep -qF '"optimize": "speed"' "$tmp/out" || { echo "FAIL sm-speed: no optimize speed"; fail=1; }
# EFA from the catalog field, not the network curve's name: p3.16xlarge has
# no EFA (though it borrows the EFA curve); a catalog override takes p4d's off.
run sm-no-efa 0 "$bin" --params 1.3B --instances 2xp3.16xlarge --emit sagemaker
grep -q "FI_PROVIDER\|custom_mpi_options" "$tmp/out" && { echo "FAIL sm-no-efa: EFA options"; fail=1; }
printf '{"instances": [{"name": "p4d.24xlarge", "efa": false, "host_mem_bytes": "100GiB"}]}\n' >"$tmp/cat.json"
run sm-efa-off 0 "$bin" --params 30B --instances 16xp4d --catalog "$tmp/cat.json" --emit sagemaker
grep -q "FI_PROVIDER" "$tmp/out" && { echo "FAIL sm-efa-off: EFA options"; fail=1; }
# ... and 100 GiB of host memory cannot hold 8 x 7.49B bf16 parameters (111.6 GiB)
grep -qF '"delayed_parameter_initialization": True' "$tmp/out" || { echo "FAIL sm-efa-off: no delayed init"; fail=1; }
run mpi-efa-off 0 "$bin" --params 30B --instances 16xp4d --catalog "$tmp/cat.json" --emit mpirun
grep -q "FI_PROVIDER" "$tmp/out" && { echo "FAIL mpi-efa-off: EFA options"; fail=1; }
run mpi-efa 0 "$bin" --params 30B --instances 16xp4d --emit mpirun
grep -qF -- "-x FI_PROVIDER=efa" "$tmp/out" || { echo "FAIL mpi-efa: no EFA options"; fail=1; }
# a 1T model at TP 8 is 8 x 126B bf16 parameters on a p4de's 1152 GiB: delayed
run sm-delayed 0 "$bin" --params 1T --instances 128xp4de --emit sagemaker
grep -qF '"delayed_parameter_initialization": True' "$tmp/out" || { echo "FAIL sm-delayed"; fail=1; }
# fp32: no bf16, parameters created in fp32
run sm-fp32 0 "$bin" --params 1.3B --instances 2xp4d --precision fp32 --emit sagemaker
grep -q '"bf16"' "$tmp/out" && { echo "FAIL sm-fp32: bf16 set"; fail=1; }
grep -qF 'dtype=torch.float32' "$tmp/out" || { echo "FAIL sm-fp32: creation dtype"; fail=1; }
# Precision is the chip's and the stack's: V100 has no bf16, so a plan on it
# trains in fp16 and the SMP parameters say fp16 (never bf16); --precision
# fp16 on an A100 is fp16 too; bf16 on a V100 is refused naming the chip.
run sm-v100-fp16 0 "$bin" --params 1.3B --instances 2xp3.16xlarge --emit sagemaker
grep -q '"bf16"' "$tmp/out" && { echo "FAIL sm-v100-fp16: bf16 on V100"; fail=1; }
grep -qF '"fp16": True' "$tmp/out" || { echo "FAIL sm-v100-fp16: no fp16"; fail=1; }
grep -qF 'dtype=torch.float16' "$tmp/out" || { echo "FAIL sm-v100-fp16: creation dtype"; fail=1; }
run sm-fp16 0 "$bin" --params 1.3B --instances 2xp4d --precision fp16 --emit sagemaker
grep -q '"bf16"' "$tmp/out" && { echo "FAIL sm-fp16: bf16 set"; fail=1; }
grep -qF '"fp16": True' "$tmp/out" || { echo "FAIL sm-fp16: no fp16"; fail=1; }
run v100-bf16 2 "$bin" --params 1.3B --instances 2xp3.16xlarge --precision bf16
one_line_error v100-bf16 "the V100-16GB has no bf16"
emit_ok sm-v100-runs sagemaker --params 1.3B --instances 2xp3.16xlarge
# ml.g4dn.12xlarge, which SMP v1 lists (4 x T4, no bf16), is in the catalog
run sm-g4dn 0 "$bin" --params 1.3B --instances 4xg4dn.12xlarge --emit sagemaker
grep -qF 'instance_type="ml.g4dn.12xlarge"' "$tmp/out" || { echo "FAIL sm-g4dn: not g4dn"; fail=1; }
grep -qF '"fp16": True' "$tmp/out" || { echo "FAIL sm-g4dn: not fp16 on T4"; fail=1; }
# prescaled_batch off: the script batch is per rank (global / dp / tp)
run sm-per-rank 0 "$bin" --params 30B --instances 16xp4d --tp 2 --pp 4 --micro-batch 2 \
  --prescaled-batch off --global-batch 512 --emit sagemaker
grep -qF 'train_batch_size = 16' "$tmp/out" || { echo "FAIL sm-per-rank: want 512 / 16 / 2 = 16"; grep train_batch_size "$tmp/out" | head -2; fail=1; }
emit_ok sm-30b-runs sagemaker --params 30B --instances 16xp4d
emit_ok mpi-30b-runs mpirun --params 30B --instances 16xp4d

# --- SageMaker model parallelism v2 (--framework smp2). ---------------------
# Llama 3.1 70B on 16 x p5 (an instance type only v2 lists): the estimator
# parses, runs against the stub SDK exactly as --json describes it, and every
# name it gives the library is one of the v2 reference's (stack_args/smp2.txt).
m70=(--model meta-llama/Llama-3.1-70B --instances 16xp5 --framework smp2)
emit_ok smp2-70b-p5 sagemaker "${m70[@]}"
emit_ok smp2-70b-p5-fp8 sagemaker "${m70[@]}" --precision fp8
# the plan's own launch (--emit launch) is the same estimator
"$bin" "${m70[@]}" --emit launch >"$tmp/l1" 2>&1
"$bin" "${m70[@]}" --emit sagemaker >"$tmp/l2" 2>&1
if diff <(grep -v '^#' "$tmp/l1") <(grep -v '^#' "$tmp/l2") >/dev/null && grep -q "PyTorch(" "$tmp/l1"; then
  echo "ok   smp2-launch"
else
  echo "FAIL smp2-launch: --emit launch is not the estimator"; head -3 "$tmp/l1"; fail=1
fi
if [ "$have_py" = 1 ]; then
  "$bin" "${m70[@]}" --emit sagemaker --json >"$tmp/smp2.json" 2>/dev/null
  "$bin" "${m70[@]}" --json >"$tmp/smp2-table.json" 2>/dev/null
  python3 - "$tmp/smp2.json" "$tmp/smp2-table.json" "$fix/stack_args/smp2.txt" <<'PYEOF2' \
    && echo "ok   smp2-names" || { echo "FAIL smp2-names"; fail=1; }
import json, sys
doc = json.load(open(sys.argv[1]))["sagemaker"]
plan = json.load(open(sys.argv[2]))["plans"][0]
names = {l.strip() for l in open(sys.argv[3]) if l.strip() and not l.startswith("#")}
est = doc["estimator"]
assert set(est) <= names, set(est) - names
dist = est["distribution"]
assert set(dist) == {"torch_distributed", "smdistributed"}, dist.keys()
assert dist["torch_distributed"] == {"enabled": True}
mp = dist["smdistributed"]["modelparallel"]
assert mp["enabled"] is True and set(mp) <= names
p = mp["parameters"]
assert set(p) <= names, set(p) - names
assert "partitions" not in p and "ddp" not in p          # v1's names
assert p["tensor_parallel_degree"] == plan["tp"], (p, plan)
assert p["context_parallel_degree"] <= p["hybrid_shard_degree"]
assert p["hybrid_shard_degree"] == plan["dp"] * plan["cp"], (p, plan)   # all of them
assert p["context_parallel_degree"] == plan["cp"]
assert est["instance_type"] == "ml.p5.48xlarge" and est["instance_count"] == 16
assert est["framework_version"] == "2.5.1" and est["py_version"] == "py311"
hp = est["hyperparameters"]
assert hp["train_batch_size"] == plan["micro_batch"]
assert plan["dp"] * hp["train_batch_size"] * hp["gradient_accumulation_steps"] == doc["global_batch"]
PYEOF2
fi
run smp2-fp8-notes 0 "$bin" "${m70[@]}" --precision fp8 --emit sagemaker
grep -qF 'transformer_engine.pytorch.fp8_autocast' "$tmp/out" || { echo "FAIL smp2-fp8-notes: no Transformer Engine"; fail=1; }
grep -qF 'DelayedParamIniter' "$tmp/out" || { echo "FAIL smp2-fp8-notes: 70B without delayed init"; fail=1; }
# A plan for an instance type only v2 supports names smp2 in its refusal.
run smp1-p5 2 "$bin" --params 70B --instances 16xp5 --emit sagemaker
one_line_error smp1-p5 "--framework smp2"
# SMP v2 starts with torchrun: no mpirun, no Slurm; nor on a type it does not list
run smp2-mpirun 2 "$bin" "${m70[@]}" --emit mpirun
one_line_error smp2-mpirun "torch_distributed"
run smp2-slurm 2 "$bin" "${m70[@]}" --emit slurm
one_line_error smp2-slurm "SageMaker's own cluster"
run smp2-g5 2 "$bin" --params 7B --instances 2xg5.48xlarge --framework smp2
one_line_error smp2-g5 "does not run on"
run smp2-pp 2 "$bin" "${m70[@]}" --pp 2
one_line_error smp2-pp "pipeline"
emit_ok sm-delayed-runs sagemaker --params 30B --instances 16xp4d --catalog "$tmp/cat.json"

# --json --emit: one JSON document, the settings inside it, no Python.
run json-sm 0 "$bin" --params 30B --instances 16xp4d --json --emit sagemaker
grep -q "^distribution = \|^import " "$tmp/out" && { echo "FAIL json-sm: Python in the JSON stream"; fail=1; }
if [ "$have_py" = 1 ]; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["sagemaker"]["estimator"]["distribution"]["mpi"]["processes_per_host"] == 8' "$tmp/out" \
    && echo "ok   json-sm-parses" || { echo "FAIL json-sm: not one JSON document with a sagemaker object"; fail=1; }
fi
run json-mpi 0 "$bin" --params 30B --instances 16xp4d --json --emit mpirun
[ "$have_py" = 1 ] && { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["mpirun"]["argv"][0] == "mpirun"' "$tmp/out" \
  && echo "ok   json-mpi-parses" || { echo "FAIL json-mpi"; fail=1; }; }

# --- Refusals: one line naming the knob, exit 2, nothing printed. -----------
run no-zb 2 "$bin" --params 30B --instances 16xp4d --framework smdplan --schedule zb-h1 --emit sagemaker
one_line_error no-zb "schedule zb-h1"
run no-virtual 2 "$bin" --params 30B --instances 16xp4d --framework megatron --emit mpirun
one_line_error no-virtual "schedule virtual"
run no-zero2 2 "$bin" --params 30B --instances 16xp4d --framework deepspeed --sharding gradients --emit sagemaker
one_line_error no-zero2 "sharding gradients"
run no-sdp-pp 2 "$bin" --params 30B --instances 16xp4d --framework deepspeed --sharding params --pp 2 --emit sagemaker
one_line_error no-sdp-pp "sharding params with pp 2"
run no-cp 2 "$bin" --params 30B --instances 16xp4d --framework megatron --schedule interleaved --cp 2 --emit sagemaker
one_line_error no-cp "context parallel 2"
run no-fp8 2 "$bin" --params 30B --instances 16xp5 --framework megatron --schedule interleaved --precision fp8 --emit sagemaker
one_line_error no-fp8 "fp8"
run no-other-stack 2 "$bin" --params 30B --instances 16xp4d --framework megatron --schedule interleaved --emit sagemaker
one_line_error no-other-stack "--framework megatron"
run no-json-either 2 "$bin" --params 30B --instances 16xp4d --framework megatron --schedule interleaved --emit sagemaker --json
one_line_error no-json-either "--framework megatron"
run no-split 2 "$bin" --params 30B --instances 16xp4d --tp 2 --pp 4 --micro-batch 1 --prescaled-batch off --emit sagemaker
one_line_error no-split "prescaled batch off with micro-batch 1 and tp 2"
run not-sagemaker 2 "$bin" --params 30B --instances 16xdgx-a100 --emit sagemaker
one_line_error not-sagemaker "SageMaker model parallel v1 does not run on dgx-a100"
# SMP v1 runs on the instance types its documentation lists, nowhere else
run not-smp-type 2 "$bin" --params 30B --instances 16xp5 --emit sagemaker
one_line_error not-smp-type "it runs on ml.g4dn.12xlarge, ml.p3.16xlarge, ml.p3dn.24xlarge, ml.p4d.24xlarge, ml.p4de.24xlarge"

# --- Hostile names: nothing they carry may run. ------------------------------
# Each would run a command (or break the script) if written unescaped: the
# catalog names close a Python string or end a comment with a newline, the
# model's _name_or_path ends a comment in both languages, the path of the
# config has a command substitution, quotes, a backslash and a newline.
# A catalog's instance types reach no script: the SMP emitters run only on
# the instance types SMP v1 documents, by their own names; the refusal is
# one line, and nothing the names carry runs.
hc="$fix/catalog_hostile.json"
for alias in evilpy evilsh evilutf8; do
  for kind in sagemaker mpirun; do
    run "hostile-inst-$alias-$kind" 2 "$bin" --params 1.3B --instances "2x$alias" --catalog "$hc" --emit "$kind"
    one_line_error "hostile-inst-$alias-$kind" "SageMaker model parallel v1 does not run on"
  done
done
# Past ASCII: UTF-8 names keep their characters (as escapes, and bytes that
# are not UTF-8 one by one); the scripts stay ASCII (cmp.py reads them so).
sed 's/"_name_or_path": ".*"/"_name_or_path": "caf\\xc3\\xa9 \\xf0\\x9f\\x98\\x80 end"/' \
  "$fix/hf_hostile_name.json" >"$tmp/utf8.in"
printf '%b' "$(cat "$tmp/utf8.in")" >"$tmp/utf8.json"
grep -q "$(printf '\360\237\230\200')" "$tmp/utf8.json" || { echo "FAIL utf8 fixture: no U+1F600"; fail=1; }
emit_ok utf8-model-sagemaker sagemaker --model "$tmp/utf8.json" --instances 2xp4d
emit_ok utf8-model-mpirun mpirun --model "$tmp/utf8.json" --instances 2xp4d
hdir="$tmp/d\$(touch PD1)'\"\\
touch PD2"
mkdir -p "$hdir" && cp "$fix/hf_hostile_name.json" "$hdir/config.json"
emit_ok hostile-model-sagemaker sagemaker --model "$hdir/config.json" --instances 2xp4d
emit_ok hostile-model-mpirun mpirun --model "$hdir/config.json" --instances 2xp4d
# The simulator's trace carries the model and instance names in its title.
run hostile-trace 0 "$bin" simulate --model "$hdir/config.json" --instances 2xevilsh --catalog "$hc" \
  --framework megatron --trace "$tmp/trace.json"
if [ "$have_py" = 1 ]; then
  python3 - "$tmp/trace.json" "$hc" <<'EOF' && echo "ok   hostile-trace-parses" || { echo "FAIL hostile-trace: not JSON, or the title lost a name"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
inst = [i["name"] for i in json.load(open(sys.argv[2]))["instances"] if "evilsh" in i["aliases"]][0]
t = d["otherData"]["title"]
assert inst in t and '__import__("os").system("touch P3")' in t, t
EOF
fi
run hostile-refusal 2 "$bin" --params 1.3B --instances 2xevilnodot --catalog "$hc" --emit sagemaker
one_line_error hostile-refusal "does not run on"

exit $fail
