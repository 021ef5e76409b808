#!/usr/bin/env bash
# fuzz_long.sh: every libFuzzer target of a fuzz build for a fixed number of
# executions each (default 1,000,000), the long run CI's 20-second ctest runs
# stand in for. Prints, per target, the executions libFuzzer counted
# (stat::number_of_executed_units), the crashes it left (crash-, leak-,
# timeout- and oom- artifacts: libFuzzer stops at the first, so 0 or 1), the
# wall time and the exit status; then rows for machines,
# "fuzz_long target=... execs=... crashes=... seconds=... rc=...".
#
#   [JOBS=1] [RUNS=1000000] [TIMEOUT=10] tests/bench/fuzz_long.sh [FUZZ_BUILD_DIR] [TARGET...]
#
# FUZZ_BUILD_DIR is a build configured with -DSMD_FUZZ=ON (default
# build-asan); TARGETs default to every tests/fuzz/fuzz_* built there. Each
# target starts from its seed corpus (tests/fuzz/corpus/NAME) and a fresh
# work corpus, with the limits of the ctest runs (-timeout=10,
# -rss_limit_mb=2048). TIMEOUT sets the seconds one input may take before
# libFuzzer calls it a hang: fuzz_args plans whole clusters, which under the
# sanitizers on a loaded host can take seconds (a 2T model on 3 x p4d, 0.2 s
# uninstrumented, took 11 s), so a long run of it on a shared machine wants
# more than the ctest's 10. JOBS targets run at once. Artifacts of a crash are
# kept under FUZZ_BUILD_DIR/tests/fuzz/long/ and their paths printed; the
# script exits 1 when any target crashed or did not finish its runs.
set -u
build=${1:-build-asan}
[ $# -gt 0 ] && shift
runs=${RUNS:-1000000}
jobs=${JOBS:-1}
timeout=${TIMEOUT:-10}
src=$(cd "$(dirname "$0")/../.." && pwd)
fdir="$build/tests/fuzz"
[ -d "$fdir" ] || { echo "fuzz_long: no $fdir: configure $build with -DSMD_FUZZ=ON (CC=clang)" >&2; exit 1; }
fdir=$(cd "$fdir" && pwd)
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in "$fdir"/fuzz_*; do
    [ -x "$f" ] && [ -f "$f" ] && targets+=("$(basename "$f")")
  done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz_long: no fuzz targets built in $fdir" >&2; exit 1; }
out="$fdir/long"
mkdir -p "$out"

one() { # target: run it, leave its figures in $out/NAME.row
  local t=$1 work="$out/$1.corpus" art="$out/$1.artifacts" seeds="$src/tests/fuzz/corpus/$1"
  rm -rf "$work" "$art"
  mkdir -p "$work" "$art"
  [ -d "$seeds" ] || seeds=""
  local start=$SECONDS
  (cd "$out" && "$fdir/$t" -runs="$runs" -timeout="$timeout" -rss_limit_mb=2048 -close_fd_mask=3 \
     -print_final_stats=1 -artifact_prefix="$art/" "$work" $seeds) >"$out/$t.log" 2>&1
  local rc=$? secs=$((SECONDS - start))
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
  local crashes
  crashes=$(find "$art" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
            -o -name 'oom-*' \) | wc -l)
  echo "$t ${execs:-0} $crashes $secs $rc" >"$out/$t.row"
}

running=0
for t in "${targets[@]}"; do
  [ -x "$fdir/$t" ] || { echo "fuzz_long: $fdir/$t is not built" >&2; exit 1; }
  echo "fuzz_long: $t, $runs runs ..." >&2
  one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

bad=0
printf '%-16s %12s %8s %9s %4s\n' target executions crashes seconds rc
for t in "${targets[@]}"; do
  read -r name execs crashes secs rc <"$out/$t.row"
  printf '%-16s %12s %8s %9s %4s\n' "$name" "$execs" "$crashes" "$secs" "$rc"
  if [ "$crashes" -gt 0 ] || [ "$rc" -ne 0 ] || [ "$execs" -lt "$runs" ]; then
    bad=1
    find "$out/$t.artifacts" -type f | sed 's/^/  artifact: /'
    [ "$rc" -ne 0 ] && tail -5 "$out/$t.log" | sed 's/^/  log: /'
  fi
done
for t in "${targets[@]}"; do
  read -r name execs crashes secs rc <"$out/$t.row"
  echo "fuzz_long target=$name execs=$execs crashes=$crashes seconds=$secs rc=$rc runs=$runs" \
       "timeout=$timeout"
done
exit $bad
