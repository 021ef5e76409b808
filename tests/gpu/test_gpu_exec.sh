#!/usr/bin/env bash
# test_gpu_exec.sh: smdplan exec --device cuda end to end on this host's GPU.
#   $1 smdplan binary
# A tiny GPT trained for a few steps on one rank (nccl: the rank has the GPU
# to itself) and on two ranks sharing it (mpi staged through host memory,
# chosen by default), each recorded: the run's device, transport and the
# GPU's name, each rank's GPU memory as CUDA counts it, MFU against the
# catalog's dense bf16 peak and the smdplan-cuda prediction when the catalog
# knows the GPU, compare's row. Exit 77 (skipped) in a build without CUDA or
# where CUDA sees no GPU.
set -u
bin=$1
dir=$(dirname "$bin")
ver=$("$bin" --version) || { echo "FAIL: smdplan --version"; exit 1; }
if ! grep -q 'CUDA yes' <<<"$ver"; then echo "skipped: a build without CUDA"; exit 77; fi
gpus=$(sed -n 's/^GPUs visible to CUDA: //p' <<<"$ver")
if [ "${gpus:-0}" -lt 1 ]; then echo "skipped: CUDA sees no GPU"; exit 77; fi
[ -x "$dir/smdplan-rank" ] || { echo "FAIL: $dir/smdplan-rank not built"; exit 1; }
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
db="$tmp/gpu.db"
tiny=(--layers 2 --hidden 128 --heads 4 --seq 64 --vocab 256)
nccl=$(grep -q 'NCCL yes' <<<"$ver" && echo nccl || echo mpi)

run() { # name, expected exit, command...
  local name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, want $want"; head -60 "$tmp/out"; tail -20 "$tmp/err"; fail=1
  else
    echo "ok   $name"
  fi
}
has() { grep -Eq -- "$3" "$2" || { echo "FAIL $1: no '$3' in:"; head -80 "$2"; fail=1; }; }
val() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\\([^,]*\\),*\$/\\1/p" "$2" | head -1; }
positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }

# ---- one rank, the GPU its own ----
run one 0 "$bin" exec "${tiny[@]}" --device cuda --steps 6 --timeout 300 --db "$db" --json
cp "$tmp/out" "$tmp/one.json"
has one "$tmp/one.json" '"status":[[:space:]]*"ok"'
has one "$tmp/one.json" '"device":[[:space:]]*"cuda"'
has one "$tmp/one.json" "\"transport\":[[:space:]]*\"$nccl\""
has one "$tmp/one.json" '"device_name":[[:space:]]*".*compute capability'
positive "$(val device_memory_peak_bytes "$tmp/one.json")" ||
  { echo "FAIL one: no GPU memory peak"; fail=1; }
positive "$(val step_time_s "$tmp/one.json")" || { echo "FAIL one: no step time"; fail=1; }
id=$(val run_id "$tmp/one.json")
name=$(sed -n 's/^[[:space:]]*"device_name":[[:space:]]*"\(.*\)",*$/\1/p' "$tmp/one.json")
# a GPU of the catalog: MFU against its dense bf16 peak, the smdplan-cuda prediction
if grep -Eq '(^|[^A-Za-z0-9])(V100|A100|H100|H200|A10G)([^A-Za-z0-9]|$)' <<<"$name"; then
  positive "$(val mfu "$tmp/one.json")" || { echo "FAIL one: no MFU on $name"; fail=1; }
  positive "$(val peak_flops "$tmp/one.json")" || { echo "FAIL one: no peak"; fail=1; }
  positive "$(val predicted_step_s "$tmp/one.json")" || { echo "FAIL one: no prediction"; fail=1; }
  positive "$(val simulated_step_s "$tmp/one.json")" || { echo "FAIL one: no simulation"; fail=1; }
else
  echo "note: '$name' is not a catalog GPU: no MFU or prediction expected"
fi

# ---- the record ----
run show 0 "$bin" show "$id" --json --db "$db"
cp "$tmp/out" "$tmp/show.json"
has show "$tmp/show.json" '"device":[[:space:]]*"cuda"'
has show "$tmp/show.json" "\"transport\":[[:space:]]*\"$nccl\""
has show "$tmp/show.json" "\"backend\":[[:space:]]*\"cuda\\+$nccl\""
has show "$tmp/show.json" '"device_name":[[:space:]]*".*compute capability'
has show "$tmp/show.json" '"device_memory_peak_bytes":[[:space:]]*[1-9]'
has show "$tmp/show.json" '"framework":[[:space:]]*"smdplan-cuda"'
has show "$tmp/show.json" '"precision":[[:space:]]*"bf16"'
run compare 0 "$bin" compare --db "$db" --all
has compare "$tmp/out" "L2 H128|custom"

# ---- two ranks sharing the GPU: mpi staged, chosen, recorded ----
if [ "$gpus" -eq 1 ]; then
  run shared 0 "$bin" exec "${tiny[@]}" --device cuda --dp 2 --steps 4 --timeout 300 --db "$db" --json
  has shared "$tmp/out" '"status":[[:space:]]*"ok"'
  has shared "$tmp/out" '"transport":[[:space:]]*"mpi"'
  has shared "$tmp/out" '"ranks":[[:space:]]*2'
fi

[ "$fail" -eq 0 ] && echo "all passed"
exit "$fail"
