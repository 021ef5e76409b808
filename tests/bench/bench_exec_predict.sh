#!/usr/bin/env bash
# bench_exec_predict.sh: close the loop on this host. Runs smdplan exec of
# one model on 1 rank and on 2 ranks (data, pipeline and tensor parallel)
# and prints, for each, the planner's predicted step time, the simulator's,
# and the measured median step, with their errors (target: within 10 %).
#
#   [REPEAT=3] tests/bench/bench_exec_predict.sh [BUILD_DIR] [CATALOG.json]
#
# CATALOG.json is this host's entry from `smdplan bench --write-catalog`;
# without it the script measures the host first (a minute or two). A
# benchmark, not a test: each case runs REPEAT times after the cores are
# idle (the idle share is printed), and the median is kept with its spread.
# Rows for machines follow the table: "case=... ranks=... measured_s=...".
set -u
build=${1:-build}
repeat=${REPEAT:-3}
bin="$build/smdplan"
[ -x "$bin" ] && [ -x "$build/smdplan-rank" ] || { echo "bench_exec_predict: build $bin and $build/smdplan-rank first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat=${2:-}
if [ -z "$cat" ]; then
  cat="$tmp/host.json"
  echo "measuring this host: $bin bench --write-catalog $cat" >&2
  "$bin" bench --write-catalog "$cat" --no-record >"$tmp/bench.out" 2>&1 || { cat "$tmp/bench.out"; exit 1; }
fi
# Idle share of the cores over 1 s (proc(5): /proc/stat's cpu line).
idle() {
  local a b c d e f g h t1 i1 t2 i2
  read -r _ a b c d e f g h _ </proc/stat; t1=$((a + b + c + d + e + f + g + h)); i1=$d
  sleep 1
  read -r _ a b c d e f g h _ </proc/stat; t2=$((a + b + c + d + e + f + g + h)); i2=$d
  echo $((100 * (i2 - i1) / (t2 - t1)))
}
# Before a run: wait (at most a minute) for the cores to be idle; other
# processes on them change the step, not the host.
quiet() {
  local k p
  for k in $(seq 1 60); do
    p=$(idle)
    [ "$p" -ge 95 ] && { echo "$p"; return; }
  done
  echo "$p"
}
echo "host $(hostname), $(nproc) cores; each case run $repeat times, the median kept; idle % before each run"
# GPT, 4 layers, hidden 512 (8 heads), sequence 256, vocabulary 1024; the
# same tokens per step in every case: 4 microbatches of one sequence per
# model replica, 2 per replica with dp 2.
model="--layers 4 --hidden 512 --heads 8 --seq 256 --vocab 1024 --steps 12"
cases=(
  "1-rank|--microbatches 4"
  "dp2|--dp 2 --microbatches 2"
  "pp2|--pp 2 --microbatches 4"
  "tp2|--tp 2 --microbatches 4"
)
printf '%-8s %5s %11s %7s %11s %8s %11s %8s  %s\n' case ranks measured_s spread predicted_s error \
  simulated_s error "idle %"
rows=()
worst=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  layout=${c#*|}
  meas=() idles=()
  pred="" sim="" ranks=""
  for r in $(seq 1 "$repeat"); do
    idles+=("$(quiet)")
    # shellcheck disable=SC2086
    "$bin" exec --catalog "$cat" $model $layout --json --no-record --run-dir "$tmp/$name.$r" \
      >"$tmp/$name.json" 2>"$tmp/$name.err" || { echo "$name: failed"; cat "$tmp/$name.err"; continue 2; }
    read -r ranks m pred sim <<<"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["ranks"], d["step_time_s"], d["predicted_step_s"], d["simulated_step_s"])' "$tmp/$name.json")"
    meas+=("$m")
  done
  # the median of the repeats and their spread (max - min) / median
  read -r med spread <<<"$(printf '%s\n' "${meas[@]}" | sort -g | awk '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.6f %.1f", m, 100 * (v[NR] - v[1]) / m }')"
  line=$(awk -v n="$name" -v r="$ranks" -v m="$med" -v sp="$spread" -v p="$pred" -v s="$sim" \
             -v id="${idles[*]}" 'BEGIN {
    ep = 100 * (p - m) / m; es = 100 * (s - m) / m
    printf "%-8s %5d %11.4f %6.1f%% %11.4f %+7.1f%% %11.4f %+7.1f%%  %s", n, r, m, sp, p, ep, s, es, id }')
  echo "$line"
  rows+=("case=$name ranks=$ranks measured_s=$med spread_pct=$spread predicted_s=$pred simulated_s=$sim")
  worst=$(awk -v w="$worst" -v m="$med" -v p="$pred" -v s="$sim" 'BEGIN {
    a = p > m ? (p - m) / m : (m - p) / m; b = s > m ? (s - m) / m : (m - s) / m
    x = a > b ? a : b; print (100 * x > w ? 100 * x : w) }')
done
printf 'worst |error| %.1f%% (target 10%%)\n' "$worst"
printf '%s\n' "${rows[@]}"
