#!/usr/bin/env bash
# test_cli_simulate.sh: smdplan simulate end to end.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# The simulated step of a fixed layout is reported beside the planner's, the
# JSON has the documented keys, the trace is valid JSON with one event per op
# and is byte-identical for one seed, bad simulation options exit 2 with one
# line, and validate --sim adds simulated_iteration_time_s.
. "$(dirname "$0")/lib.sh"

layout="--params 30B --instances 16xp4d --tp 8 --pp 2 --micro-batch 4 --schedule interleaved --recompute full --sharding optimizer --no-record"
run simulate 0 "$bin" simulate $layout
grep -q "simulated step" "$tmp/out" || { echo "FAIL simulate: no simulated step"; fail=1; }
grep -q "critical path" "$tmp/out" || { echo "FAIL simulate: no critical path"; fail=1; }

run simulate-json 0 "$bin" simulate $layout --json
for key in '"step_time_s"' '"bubble_fraction"' '"per_stage"' '"events"' \
           '"peak_microbatches_in_flight"' '"planner_step_time_s"'; do
  grep -q "$key" "$tmp/out" || { echo "FAIL simulate-json: missing $key"; fail=1; }
done

run trace-a 0 "$bin" simulate $layout --jitter 0.05 --seed 7 --trace "$tmp/a.json"
run trace-b 0 "$bin" simulate $layout --jitter 0.05 --seed 7 --trace "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL trace: one seed, two traces"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert any(e.get('ph')=='X' for e in d['traceEvents'])" "$tmp/a.json" \
    || { echo "FAIL trace: not valid trace-event JSON"; fail=1; }
fi

run monte-carlo 0 "$bin" simulate $layout --jitter 0.1 --monte-carlo 16
grep -q "p95" "$tmp/out" || { echo "FAIL monte-carlo: no quantiles"; fail=1; }

run bad-straggler 2 "$bin" simulate $layout --straggler 3
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL bad-straggler: not one line"; fail=1; }
run bad-virtual 2 "$bin" simulate --params 30B --instances 16xp4d --tp 8 --pp 4 --micro-batch 1 \
  --microbatches 6 --global-batch 24 --schedule virtual --virtual-stages 2 --no-record
run no-cluster 2 "$bin" simulate --params 30B --no-record

run validate-sim 0 "$bin" validate "$src/data/reference/calibration_runs.csv" --sim --json
grep -q '"simulated_iteration_time_s"' "$tmp/out" || { echo "FAIL validate --sim: no simulated time"; fail=1; }

exit $fail
