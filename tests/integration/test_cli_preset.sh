#!/usr/bin/env bash
# test_cli_preset.sh: the SMP presets' published layouts end to end.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# The SMP best practices publish, for 10B, 30B and 60B GPT-2 models, a
# layout with its training-script batch_size (per model-parallel group, with
# prescaled batch). The default global batch of such a preset is that batch
# times the layout's data-parallel degree on its cluster: 40 x 32 = 1280
# (10B, TP 4 on 16 x p4d), 32 x 16 = 512 (30B, TP 8 on 16 x p4d), 56 x 16 =
# 896 (60B, TP 8 x PP 2 on 32 x p4d), printed with where it came from. The
# published layout is evaluated beside the plan ranked #1, with a sentence on
# what makes the difference. A shape changed on the command line, another
# --framework or a global batch given are respected.
set -u
bin=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SMDPLAN_NO_RECORD=1
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1

check() { # name, expected exit code, command...
  local name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, want $want"; sed 's/^/  out: /' "$tmp/out" | head -20; sed 's/^/  err: /' "$tmp/err"
    fail=1
  else
    echo "ok   $name"
  fi
}
has() { # name, fixed string that must be in the output
  grep -qF -- "$2" "$tmp/out" || { echo "FAIL $1: no '$2'"; fail=1; }
}
hasnt() {
  grep -qF -- "$2" "$tmp/out" && { echo "FAIL $1: '$2' should not be there"; fail=1; }
}

for case in "10B 16xp4d 1280 40 32 4 1" "30B 16xp4d 512 32 16 8 1" "60B 32xp4d 896 56 16 8 2"; do
  set -- $case
  check "default-$1" 0 "$bin" --params "$1" --instances "$2"
  has "default-$1" "batch:   $3 sequences per step"
  has "default-$1" "published batch_size=$4 per model-parallel group (prescaled batch) x $5 data-parallel replicas (tp $6, pp $7"
  has "default-$1" "SMP's own layout for smp-$(echo "$1" | tr B b)"
  has "default-$1" "Why ours differs: Ours is"
  # no SMP run was ever fitted: the comparison says its figures are the model's
  has "default-$1" "No SMP run has been fitted"
  grep -q "^  SMP ref *$6 *$7 " "$tmp/out" || { echo "FAIL default-$1: no SMP reference row with tp $6 pp $7"; fail=1; }
done

# The same in JSON: the batch's source and the reference evaluated.
check json-30b 0 "$bin" --params 30B --instances 16xp4d --json
if [ "$have_py" = 1 ]; then
  python3 - "$tmp/out" <<'EOF' && echo "ok   json-30b-fields" || { echo "FAIL json-30b-fields"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["global_batch"] == 512 and not d["global_batch_defaulted"]
assert "batch_size=32" in d["global_batch_source"]
r = d["preset_reference"]
assert r["preset"] == "smp-30b" and r["status"] == "fits"
p = r["plan"]
assert (p["tp"], p["pp"], p["dp"], p["micro_batch"], p["recompute"], p["sharding"]) == (8, 1, 16, 32, "full", "optimizer")
assert p["prescaled_batch"] and r["why_ours_differs"].startswith("Ours is")
assert r["smp_runs_fitted"] is False and "No SMP run has been fitted" in r["why_ours_differs"]
EOF
fi

# On another cluster the reference keeps its TP, PP and knobs; the batch
# stays the published one: 512 over dp 32 is a micro-batch of 16.
check other-cluster 0 "$bin" --params 30B --instances 32xp4d
has other-cluster "batch:   512 sequences per step"
grep -q "^  SMP ref *8 *1 *32 *16 " "$tmp/out" || { echo "FAIL other-cluster: reference not at dp 32, micro-batch 16"; fail=1; }
# ... and where the batch does not split (512 over dp 12), it says so.
check no-split 0 "$bin" --params 30B --instances 12xp4d
has no-split "cannot split the global batch of 512 evenly"
# A global batch given is the comparison's too, and not a default.
check given-batch 0 "$bin" --params 30B --instances 16xp4d --global-batch 1024
hasnt given-batch "published batch_size"
grep -q "^  SMP ref *8 *1 *16 *64 " "$tmp/out" || { echo "FAIL given-batch: reference not at micro-batch 64"; fail=1; }
# A shape changed on the command line is another model: the GPT-3 default.
check changed-shape 0 "$bin" --params 30B --instances 16xp4d --seq 1024
has changed-shape "default from the GPT-3 batch schedule"
hasnt changed-shape "SMP's own layout"
# Another stack: the batch is still the published one, no comparison.
check other-stack 0 "$bin" --params 30B --instances 16xp4d --framework megatron
has other-stack "batch:   512 sequences per step"
has other-stack "is not compared: this plan is for Megatron-Core 2024"
# A preset that publishes nothing keeps the GPT-3 default, and no comparison.
check gpt3 0 "$bin" --params 13B --instances 4xp4d
has gpt3 "default from the GPT-3 batch schedule"
hasnt gpt3 "SMP's own layout"

exit $fail
