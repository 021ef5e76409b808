#!/usr/bin/env bash
# test_cli_bands.sh: every predicted step carries its error band, and two
# plans compare side by side.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# The band of a step is the held-out error of its evidence (data/
# error_bands.json): Megatron-Core 2024 on H100 its own runs', Megatron-LM
# 2022 on H100 (no run of that release there, though its family has some)
# and SMP on A100 (no SMP run fitted) the chip pool's, a chip no run was
# fitted on the worst source held out. It shows as "S s +-B %" with its basis in the text, --explain, --json
# and the launch files; a ranking whose top plans overlap within their bands
# says so. smdplan diff compares two recorded plans or two layouts term by
# term. Everything fits 80 columns.
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
export COLUMNS=80
command -v python3 >/dev/null 2>&1 || { echo "note: no python3: skipped"; exit 77; }

fits80() { # name: every line of the output within 80 characters (not bytes)
  python3 - "$tmp/out" "$1" <<'PY' || fail=1
import sys
bad = [l for l in open(sys.argv[1], encoding="utf-8").read().splitlines() if len(l) > 80]
if bad:
    print("FAIL %s: %d lines over 80 columns, e.g. %r" % (sys.argv[2], len(bad), bad[0]))
    sys.exit(1)
PY
}
want_band() { python3 -c "
import json,sys
b = json.load(open('$src/data/error_bands.json'))
for e in b['bands'] + b['pools']:
    if e['silicon'] == '$2' and e.get('stack', '') == '$1':
        print(e['heldout_mean_abs_err_pct']); break
else:
    print(b['worst_heldout_source_pct'])"; }

# Megatron-Core 2024 on H100: its own runs' held-out error
run band-megatron 0 "$bin" --params 70B --arch llama --instances 16xp5 --framework megatron@2024 --json
got=$(pyget "$tmp/out" 'd["error_band"]["pct"]')
[ "$got" = "$(want_band megatron@2024 GH100)" ] || { echo "FAIL band-megatron: $got"; fail=1; }
pyget "$tmp/out" 'd["error_band"]["basis"]' | grep -q "megatron@2024 on GH100" || { echo "FAIL band-megatron: basis"; fail=1; }
[ "$(pyget "$tmp/out" 'd["error_band"]["stack"]')" = "megatron@2024" ] || { echo "FAIL band-megatron: stack"; fail=1; }
python3 - "$tmp/out" <<'PY' || { echo "FAIL band-megatron: ranges"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
b = d["error_band"]["pct"] / 100
for p in d["plans"]:
    t = p.get("simulated_step_time_s", p["step_time_s"]["total"])
    lo, hi = p["step_range_s"]
    assert abs(lo - t * (1 - b)) < 1e-9 * t and abs(hi - t * (1 + b)) < 1e-9 * t, p
k = d["error_band"]["plans_within_band_of_first"]
steps = [p.get("simulated_step_time_s", p["step_time_s"]["total"]) for p in d["plans"]]
for i in range(1, len(steps)):
    inside = abs(steps[i] - steps[0]) <= b * (steps[0] + steps[i])
    assert inside == (i < k) or not inside and i >= k, (i, k, steps)
PY
# Megatron-LM 2022 on H100: no run of that release there (Megatron-Core's
# and NeMo's are other releases): the H100 pool's, said so
run band-release 0 "$bin" --params 70B --arch llama --instances 16xp5 --framework megatron@2022 --json
[ "$(pyget "$tmp/out" 'd["error_band"]["pct"]')" = "$(want_band "" GH100)" ] || { echo "FAIL band-release: not the pool's"; fail=1; }
pyget "$tmp/out" 'd["error_band"]["basis"]' | grep -q "no megatron@2022 runs on GH100" || { echo "FAIL band-release: basis"; fail=1; }
# SMP on A100, no SMP run fitted: the A100 pool's, said so
run band-smp 0 "$bin" --params 30B --instances 16xp4d --json
[ "$(pyget "$tmp/out" 'd["error_band"]["pct"]')" = "$(want_band "" GA100)" ] || { echo "FAIL band-smp: not the pool's"; fail=1; }
pyget "$tmp/out" 'd["error_band"]["basis"]' | grep -q "no smp@v1 runs on GA100" || { echo "FAIL band-smp: basis"; fail=1; }
# a chip no run was fitted on (T4): the worst source held out
run band-t4 0 "$bin" --params 1.3B --instances 4xg4dn.12xlarge --json
[ "$(pyget "$tmp/out" 'd["error_band"]["pct"]')" = "$(want_band x TU104)" ] || { echo "FAIL band-t4"; fail=1; }
# the text: "S s +-B %", and the overlap said
run band-text 0 "$bin" --params 70B --arch llama --instances 16xp5 --framework megatron
grep -q "^Step of #1: [0-9.]* s ±[0-9]* % (" "$tmp/out" || { echo "FAIL band-text: no band"; fail=1; }
fits80 band-text
tr '\n' ' ' <"$tmp/out" | grep -q "#1 to #[0-9] lie within each other's bands" || { echo "FAIL band-text: overlap not said"; fail=1; }
run band-explain 0 "$bin" --params 70B --arch llama --instances 16xp5 --framework megatron --explain --no-sim
grep -q "^  \[uncertainty\]" "$tmp/out" && grep -q "error band: the step [0-9.]* s ±" "$tmp/out" || { echo "FAIL band-explain"; fail=1; }
fits80 band-explain
run band-emit 0 "$bin" --params 70B --arch llama --instances 16xp5 --framework megatron --emit launch
grep -q "^# Predicted step [0-9.]* s +-[0-9]* %" "$tmp/out" || { echo "FAIL band-emit: launch header"; fail=1; }
run band-emit-smp 0 "$bin" --params 30B --instances 16xp4d --emit sagemaker
grep -q "^# Predicted step [0-9.]* s +-[0-9]* %" "$tmp/out" || { echo "FAIL band-emit-smp: estimator header"; fail=1; }

# smdplan diff: two layouts of one model and cluster
run diff-layouts 0 "$bin" diff --params 30B --instances 16xp4d --framework megatron \
  --a tp=8,pp=1 --b tp=2,pp=8,schedule=interleaved
fits80 diff-layouts
for want in "memory per GPU, GiB" "time per step, s" "exposed gradient sync" "error band" "Difference: B's step is"; do
  grep -qF "$want" "$tmp/out" || { echo "FAIL diff-layouts: no '$want'"; fail=1; }
done
run diff-json 0 "$bin" diff --params 30B --instances 16xp4d --framework megatron \
  --a tp=8,pp=1 --b tp=2,pp=8,schedule=interleaved --json
python3 - "$tmp/out" <<'PY' || { echo "FAIL diff-json"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
a, b = d["a"]["plan"], d["b"]["plan"]
assert (a["tp"], a["pp"], b["tp"], b["pp"]) == (8, 1, 2, 8), (a["tp"], b["tp"])
assert abs(d["step_difference_s"] - (b["step_time_s"]["total"] - a["step_time_s"]["total"])) < 1e-9
assert d["a"]["step_band_pct"] > 0 and isinstance(d["within_error_bands"], bool)
PY
# two recorded plans
db="$tmp/r.db"
SMDPLAN_NO_RECORD= SMDPLAN_DB="$db" "$bin" --params 13B --instances 4xp4de --no-sim >/dev/null
id=$(SMDPLAN_DB="$db" "$bin" history --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
run diff-records 0 env SMDPLAN_DB="$db" "$bin" diff "$id" "$id:2"
grep -q "^A (record $id:1):" "$tmp/out" && grep -q "^B (record $id:2):" "$tmp/out" || { echo "FAIL diff-records: not the records"; head -5 "$tmp/out"; fail=1; }
fits80 diff-records
run diff-no-rank 2 env SMDPLAN_DB="$db" "$bin" diff "$id" "$id:99"
grep -q "no plan of rank 99" "$tmp/err" || { echo "FAIL diff-no-rank: message"; fail=1; }
run diff-bad 2 "$bin" diff --params 13B --instances 4xp4de --a tp8 --b tp=2
grep -q "expected K=V" "$tmp/err" || { echo "FAIL diff-bad: message"; fail=1; }

exit $fail
