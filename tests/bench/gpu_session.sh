#!/usr/bin/env bash
# gpu_session.sh: one command for a session on a machine with a GPU. It
# measures every figure of the GPU backend and keeps the evidence.
#
#   [BUILD=build] tests/bench/gpu_session.sh OUT_DIR [STAGE...]
#
# Stages, in order (all of them when none is named; each can be run alone,
# the database and logs accumulate in OUT_DIR, so a session whose commands
# are limited in time runs them one or two at a time):
#   ctest      the gpu label: every CUDA kernel against the CPU device,
#              training on the GPU against the bf16-rounding CPU device,
#              checkpoints resumed and resharded bit for bit, smdplan exec
#              --device cuda recorded
#   attention  bench_attention_gpu: the fused attention alone, forward and
#              forward+backward time and TFLOP/s at the reference shape (B8
#              H16 T2048 d128, causal, bf16) and a few others
#   bench      bench_exec_gpu: a 1.31B GPT on the GPU in bf16, fused and
#              plain attention: step, tokens/s, MFU against the dense bf16
#              peak
#   torch      tests/bench/torch_step.py: the same model in PyTorch on the
#              same GPU, eager and torch.compile (the peer's step the MFU
#              target is set by; skipped where python3 has no PyTorch)
#   host       smdplan bench gpu --write-catalog OUT_DIR/host.json: this
#              GPU measured through the executor (its linears fitted to the
#              GEMM model, its fused and plain attention, elementwise
#              kernels, a device copy, a reference step of a model apart
#              from every shape below): the catalog entry every prediction
#              below is made with; nothing is fitted to the runs
#   runs       smdplan exec --device cuda, one rank, six shapes (two with the
#              fused attention, the 1.31B GPT among them), recorded in
#              OUT_DIR/gpu.db with the prediction from host.json: predicted
#              against measured (target 5 %)
#   calibrate  smdplan calibrate --runs: what a fit of the smdplan
#              framework's efficiencies to those runs would set (reported,
#              not used), written to OUT_DIR/fitted.json
#   comm       smdplan bench comm --transport nccl between the GPUs (two or
#              more; with one GPU there is nothing between GPUs to measure,
#              and the one-rank runs above have no communication term)
#   compare    smdplan compare: predicted, simulated, measured of every run
# Every command runs under its own time limit (STAGE_LIMIT_S, seconds,
# default 150; a run 90), so a stage that hangs ends and the next begins.
# About 4 minutes on an H100 or H200 for all of them, machine start aside
# (torch.compile's compilation is 40-60 s of it; each stage prints its own
# time). OUT_DIR gets gpu.db (the records), host.json,
# fitted.json, logs/ (every command's output), runs/ (each run's
# CONFIG.json, RESULT.json and mpirun logs), bench_exec_gpu/ and summary.txt
# (every figure, with the command that produced it), printed at the end.
#
# Exit 77 (nothing run) in a build without CUDA or where CUDA sees no GPU;
# 2 for bad arguments; otherwise 1 when a stage failed, 0 when all passed.
set -u
usage() {
  echo "usage: [BUILD=build] tests/bench/gpu_session.sh OUT_DIR [ctest attention bench torch host runs" \
    "calibrate comm compare]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
out=$1
shift
build=${BUILD:-build}
bin="$build/smdplan"
# Every program run here, the tests under build/tests included, finds this
# build's backend modules (smdplan-cuda.so ...) in it: a build unpacked on
# another host may lack the directory it was configured in, where they look
# after their own (exec/exec_module.h).
if [ -z "${SMDPLAN_MODULES:-}" ] && [ -d "$build" ]; then
  SMDPLAN_MODULES=$(cd "$build" && pwd)
  export SMDPLAN_MODULES
fi
all=(ctest attention bench torch host runs calibrate comm compare)
limit=${STAGE_LIMIT_S:-150}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${all[@]}")
for s in "${stages[@]}"; do
  case " ${all[*]} " in *" $s "*) ;; *) echo "gpu_session: unknown stage '$s'" >&2; usage ;; esac
done
if [ ! -x "$bin" ]; then
  echo "gpu_session: build $bin first (cmake --build $build)" >&2
  exit 2
fi

# ---- a GPU, or nothing ----
ver=$("$bin" --version) || { echo "gpu_session: $bin --version failed" >&2; exit 1; }
if ! grep -q 'CUDA yes' <<<"$ver"; then
  echo "gpu_session: $bin was built without CUDA; nothing run"
  exit 77
fi
gpus=$(sed -n 's/^GPUs visible to CUDA: //p' <<<"$ver")
if [ "${gpus:-0}" -lt 1 ]; then
  echo "gpu_session: CUDA sees no GPU on this host; nothing run"
  exit 77
fi

if [ ! -x "$build/smdplan-rank" ]; then
  echo "gpu_session: build $build/smdplan-rank first (cmake --build $build)" >&2
  exit 2
fi
mkdir -p "$out/logs" "$out/runs" || exit 2
out=$(cd "$out" && pwd)
db="$out/gpu.db"
fitted="$out/fitted.json"
summary="$out/summary.txt"
export SMDPLAN_DB="$db"
unset SMDPLAN_NO_RECORD
status=0
{
  echo "== gpu_session $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $gpus GPU(s) =="
  echo "$ver"
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null || true
} | tee -a "$summary"

say() { echo "$*" | tee -a "$summary"; }
# A key's value in smdplan's --json output (one object, a key per line).
val() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\\([^,]*\\),*\$/\\1/p" "$2" | head -1; }
# Run a command with its output in logs/NAME.log; say how long it took.
step() {
  local name=$1 t0 rc
  shift
  say "\$ $*"
  t0=$(date +%s)
  timeout "${STEP_LIMIT:-$limit}" "$@" >"$out/logs/$name.log" 2>&1
  rc=$?
  [ "$rc" -eq 124 ] && echo "(stopped after ${STEP_LIMIT:-$limit} s)" >>"$out/logs/$name.log"
  say "  ($name: exit $rc, $(($(date +%s) - t0)) s; log logs/$name.log)"
  return "$rc"
}
want() { case " ${stages[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
# A benchmark program built, and not older than the library it measures
# (benchmarks are outside the default build: a stale one would time the
# kernels of an earlier build); built here when it is missing or stale.
fresh() {
  local prog=$1 name=$2
  if [ -x "$prog" ] && ! [ "$prog" -ot "$build/libsmd_exec.a" ]; then return 0; fi
  [ -x "$prog" ] && say "  $(basename "$prog") is older than $build/libsmd_exec.a: building it again"
  step "$name" cmake --build "$build" --target "$(basename "$prog")" -j "$(nproc)"
}

# GPT shapes, one rank: "name|flags". Hidden sizes and sequences that weigh
# the GEMMs, the attention and the memory-bound kernels differently, two
# with the fused attention; none is the host bench's reference model (6
# layers of width 1280), and nothing is fitted to any of them.
shapes=(
  "h1024-s1024|--layers 4 --hidden 1024 --heads 16 --seq 1024 --vocab 32768 --micro-batch 4 --microbatches 2"
  "h1536-s1024|--layers 8 --hidden 1536 --heads 16 --seq 1024 --vocab 32768 --micro-batch 4 --microbatches 2"
  "h768-s2048|--layers 6 --hidden 768 --heads 12 --seq 2048 --vocab 50304 --micro-batch 4 --microbatches 2"
  "h2048-s1024-fused|--layers 12 --hidden 2048 --heads 16 --seq 1024 --vocab 50304 --micro-batch 4 --microbatches 2 --flash-attention on"
  "h2048-s2048|--layers 16 --hidden 2048 --heads 16 --ffn 8192 --seq 2048 --vocab 50304 --micro-batch 2 --microbatches 2"
  "gpt3xl-fused|--layers 24 --hidden 2048 --heads 16 --ffn 8192 --seq 2048 --vocab 50304 --micro-batch 8 --microbatches 1 --flash-attention on"
)

# One recorded run of a shape; extra flags after it (--catalog ...). Prints
# measured, predicted (and its error), MFU; returns the error in $err_pct.
err_pct=""
exec_run() {
  local spec=$1 name flags json rc
  shift
  name=${spec%%|*}
  read -ra flags <<<"${spec#*|}"
  json="$out/logs/exec-$name.json"
  STEP_LIMIT=90 step "exec-$name" "$bin" exec --device cuda "${flags[@]}" --steps 15 --timeout 80 \
    --run-dir "$out/runs/$name-$(date +%s)" --db "$db" --json "$@"
  rc=$?
  cp "$out/logs/exec-$name.log" "$json"
  local meas pred sim mfu tps mem
  meas=$(val step_time_s "$json"); pred=$(val predicted_step_s "$json")
  sim=$(val simulated_step_s "$json"); mfu=$(val mfu "$json"); tps=$(val tokens_per_s "$json")
  mem=$(val device_memory_peak_bytes "$json")
  err_pct=$(awk -v p="$pred" -v m="$meas" 'BEGIN { if (p + 0 > 0 && m + 0 > 0) printf "%+.1f", 100 * (p - m) / m }')
  say "$(awk -v n="$name" -v m="$meas" -v p="$pred" -v s="$sim" -v e="$err_pct" -v f="$mfu" -v t="$tps" -v g="$mem" '
    function num(x, fmt) { return (x == "" || x == "null") ? "-" : sprintf(fmt, x) }
    BEGIN {
      printf "  %-18s measured %s s, predicted %s s (%s%%), simulated %s s, %s tokens/s, MFU %s, GPU memory %s GiB",
        n, num(m, "%.4f"), num(p, "%.4f"), e == "" ? "-" : e, num(s, "%.4f"), num(t, "%.0f"),
        (f == "null" || f == "") ? "-" : sprintf("%.1f%%", 100 * f), (g == "" || g == "null") ? "-" : sprintf("%.2f", g / 1073741824) }')"
  return "$rc"
}

# ---- ctest ----
if want ctest; then
  say ""
  say "== 1. the gpu tests: kernels against the CPU device, training against the CPU, checkpoints =="
  STEP_LIMIT=240 step ctest-gpu ctest --test-dir "$build" -L gpu -V --timeout 120 || status=1
  grep -E '^[0-9]+: (ok|FAIL|skipped)|comparisons failed|tests passed|Passed|Failed|Skipped' \
    "$out/logs/ctest-gpu.log" | sed 's/^/  /' | tee -a "$summary"
fi

# ---- attention ----
if want attention; then
  say ""
  say "== 2a. bench_attention_gpu: the fused attention alone (FlashAttention-2 on this GPU: 0.49 ms"
  say "   forward, 2.29 ms forward+backward at B8 H16 T2048 d128; cuDNN 0.27 / 1.35 ms) =="
  fresh "$build/tests/bench/bench_attention_gpu" build-bench-attn || status=1
  step bench_attention_gpu "$build/tests/bench/bench_attention_gpu" || status=1
  grep -v '^bench_attention_gpu,' "$out/logs/bench_attention_gpu.log" | sed 's/^/  /' | tee -a "$summary"
  # on a Hopper GPU the forward above is the sm90 (wgmma) kernel: the sm_80
  # one, which other GPUs run, timed beside it
  if grep -q 'fused attention sm90' "$out/logs/bench_attention_gpu.log"; then
    step bench_attention_gpu-sm80 env SMDPLAN_CUDA_ATTENTION=sm80 \
      "$build/tests/bench/bench_attention_gpu" || status=1
    grep -v '^bench_attention_gpu,' "$out/logs/bench_attention_gpu-sm80.log" | sed 's/^/  /' |
      tee -a "$summary"
  fi
fi

# ---- bench ----
if want bench; then
  say ""
  say "== 2b. bench_exec_gpu: a 1.31B GPT in bf16 on one GPU, MFU (target >= 55 %: torch.compile's"
  say "   0.274 s on an H100; PyTorch eager 0.321 s) =="
  fresh "$build/tests/bench/bench_exec_gpu" build-bench || status=1
  mkdir -p "$out/bench_exec_gpu"
  step bench_exec_gpu "$build/tests/bench/bench_exec_gpu" --out "$out/bench_exec_gpu" || status=1
  grep -E '^(device|dense|step time|tokens/s|model FLOP/s|MFU|memory|bench_exec_gpu,|.* attention:)' \
    "$out/logs/bench_exec_gpu.log" | sed 's/^/  /' | tee -a "$summary"
fi

# ---- torch ----
if want torch; then
  say ""
  say "== 2c. torch_step.py: the same model in PyTorch on this GPU (eager SDPA; torch.compile) =="
  if python3 -c 'import torch' 2>/dev/null; then
    STEP_LIMIT=240 step torch-step python3 "$(dirname "$0")/torch_step.py" || status=1
    grep -E '^(device|eager|compile|step time|tokens/s|MFU|memory)' "$out/logs/torch-step.log" |
      sed 's/^/  /' | tee -a "$summary"
  else
    say "  skipped: python3 here has no PyTorch"
  fi
fi

# ---- host ----
host_json="$out/host.json"
if want host; then
  say ""
  say "== 3. smdplan bench gpu: this GPU through the executor, the catalog entry of every prediction =="
  step host-bench "$bin" bench gpu --write-catalog "$host_json" --force --db "$db" || status=1
  grep -E '^entry|^catalog|^  1 thread' "$out/logs/host-bench.log" | sed 's/^/  /' | tee -a "$summary"
fi

# ---- runs ----
if want runs; then
  say ""
  say "== 4. smdplan exec --device cuda, one rank, predicted from the measured entry (target: within 5 %) =="
  cat_flags=()
  if [ -f "$host_json" ]; then
    cat_flags=(--catalog "$host_json")
  else
    say "  (no $host_json: predicted with the catalog as shipped)"
  fi
  n=0
  within=0
  for spec in "${shapes[@]}"; do
    exec_run "$spec" "${cat_flags[@]}" || status=1
    n=$((n + 1))
    if [ -n "$err_pct" ] && awk -v e="$err_pct" 'BEGIN { exit !(e <= 5 && e >= -5) }'; then
      within=$((within + 1))
    fi
  done
  say "  predicted within 5 % of the measured step: $within of $n"
fi

# ---- calibrate ----
if want calibrate; then
  say ""
  say "== 5. smdplan calibrate --runs: what a fit to the runs would set (reported, not used) =="
  cal_cat=()
  [ -f "$host_json" ] && cal_cat=(--catalog "$host_json")
  step calibrate "$bin" calibrate --runs --framework smdplan --db "$db" "${cal_cat[@]}" \
    --write "$fitted" || status=1
  sed 's/^/  /' "$out/logs/calibrate.log" | tee -a "$summary"
fi

# ---- comm ----
if want comm; then
  say ""
  say "== 6. smdplan bench comm --transport nccl (busbw as nccl-tests defines it) =="
  if [ "$gpus" -ge 2 ]; then
    step bench-comm "$bin" bench comm --transport nccl --max-bytes 1GiB --db "$db" || status=1
    tail -n 40 "$out/logs/bench-comm.log" | sed 's/^/  /' | tee -a "$summary"
  else
    say "  not measured: one GPU, and NCCL between GPUs needs two (one GPU cannot hold two ranks"
    say "  of a communicator); the one-rank runs above have no communication term to calibrate"
  fi
fi

# ---- compare ----
if want compare; then
  say ""
  say "== 7. smdplan compare: predicted, simulated and measured step of each run =="
  step compare "$bin" compare --db "$db" --wide
  sed 's/^/  /' "$out/logs/compare.log" | tee -a "$summary"
fi

say ""
say "== done: $(date -u +%Y-%m-%dT%H:%M:%SZ); records $db, every log in $out/logs, summary $summary =="
exit "$status"
