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
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
grep_syntax=F

for case in "10B 16xp4d 1280 40 32 4 1" "30B 16xp4d 512 32 16 8 1" "60B 32xp4d 896 56 16 8 2"; do
  set -- $case
  run "default-$1" 0 "$bin" --params "$1" --instances "$2"
  has "default-$1" "$tmp/out" "batch:   $3 sequences per step"
  has "default-$1" "$tmp/out" "published batch_size=$4 per model-parallel group (prescaled batch) x $5 data-parallel replicas (tp $6, pp $7"
  has "default-$1" "$tmp/out" "SMP's own layout for smp-$(echo "$1" | tr B b)"
  has "default-$1" "$tmp/out" "Why ours differs: Ours is"
  # no SMP run was ever fitted: the comparison says its figures are the model's
  has "default-$1" "$tmp/out" "No SMP run has been fitted"
  grep -q "^  SMP ref *$6 *$7 " "$tmp/out" || { echo "FAIL default-$1: no SMP reference row with tp $6 pp $7"; fail=1; }
done

# The same in JSON: the batch's source and the reference evaluated.
run json-30b 0 "$bin" --params 30B --instances 16xp4d --json
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
run other-cluster 0 "$bin" --params 30B --instances 32xp4d
has other-cluster "$tmp/out" "batch:   512 sequences per step"
grep -q "^  SMP ref *8 *1 *1 *32 *16 " "$tmp/out" || { echo "FAIL other-cluster: reference not at dp 32, micro-batch 16"; fail=1; }
# ... and where the batch does not split (512 over dp 12), it says so.
run no-split 0 "$bin" --params 30B --instances 12xp4d
has no-split "$tmp/out" "cannot split the global batch of 512 evenly"
# A global batch given is the comparison's too, and not a default.
run given-batch 0 "$bin" --params 30B --instances 16xp4d --global-batch 1024
hasnt given-batch "$tmp/out" "published batch_size"
grep -q "^  SMP ref *8 *1 *1 *16 *64 " "$tmp/out" || { echo "FAIL given-batch: reference not at micro-batch 64"; fail=1; }
# A shape changed on the command line is another model: the GPT-3 default.
run changed-shape 0 "$bin" --params 30B --instances 16xp4d --seq 1024
has changed-shape "$tmp/out" "default from the GPT-3 batch schedule"
hasnt changed-shape "$tmp/out" "SMP's own layout"
# Another stack: the batch is still the published one, no comparison.
run other-stack 0 "$bin" --params 30B --instances 16xp4d --framework megatron
has other-stack "$tmp/out" "batch:   512 sequences per step"
has other-stack "$tmp/out" "is not compared: this plan is for Megatron-Core 2025"
# A preset that publishes nothing keeps the GPT-3 default, and no comparison.
run gpt3 0 "$bin" --params 13B --instances 4xp4d
has gpt3 "$tmp/out" "default from the GPT-3 batch schedule"
hasnt gpt3 "$tmp/out" "SMP's own layout"

exit $fail
