#!/usr/bin/env bash
# test_cli_exec_cuda.sh: smdplan exec --device cuda without a GPU.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# A build without CUDA: --device cuda exits 2 with one line before anything
# launches. A build with CUDA: bad combinations exit 2 with one line naming
# the value (a device or transport not offered, fp32 on the GPU, the fused
# attention on the CPU, nccl where ranks would share a GPU, another stack's
# framework, an instance type the catalog lacks) and write nothing; on a
# host where CUDA sees no GPU a real launch is refused the same way;
# --dry-run prints the mpirun command and, with --json, the CONFIG.json it
# would write (device cuda, the transport chosen: nccl when each rank has a
# GPU of its own, mpi staged otherwise; the smdplan-cuda profile's gradient
# overlap on nccl, none when staged; the fused attention when asked);
# --emit slurm asks Slurm for the GPUs. With a GPU: a model whose rank needs
# more than the GPU holds is refused with both numbers before anything
# launches, and a tiny one runs (it fits) under the default time limit. The
# rest of the run is tests/gpu's.
. "$(dirname "$0")/lib.sh"
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
db="$tmp/x.db"
grep_syntax=E
tiny=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 128)

nothing_written() {
  if [ -e "$tmp/smdplan-runs" ] || [ -e "$db" ]; then echo "FAIL $1: something was written"; fail=1; fi
}

"$bin" --version >"$tmp/version" || { echo "FAIL --version"; exit 1; }
if grep -q 'CUDA no' "$tmp/version"; then
  run no-cuda 2 "$bin" exec "${tiny[@]}" --device cuda --db "$db"
  one_line no-cuda "this build has no CUDA device"
  run no-cuda-dry 2 "$bin" exec "${tiny[@]}" --device cuda --dry-run --db "$db"
  one_line no-cuda-dry "this build has no CUDA device"
  nothing_written no-cuda
  [ "$fail" -eq 0 ] && echo "all passed (a build without CUDA: the rest needs one)"
  exit "$fail"
fi
gpus=$(sed -n 's/^GPUs visible to CUDA: //p' "$tmp/version")
[ -n "$gpus" ] || { echo "FAIL --version does not say how many GPUs CUDA sees"; cat "$tmp/version"; exit 1; }

# ---- refusals: exit 2, one line, nothing launched or written ----
run device 2 "$bin" exec "${tiny[@]}" --device tpu --db "$db"; one_line device "allowed cpu, cuda"
run transport 2 "$bin" exec "${tiny[@]}" --device cuda --transport gloo --db "$db"
one_line transport "allowed nccl, mpi"
run transport-cpu 2 "$bin" exec "${tiny[@]}" --transport nccl --db "$db"
one_line transport-cpu "only with --device cuda"
run gpus-cpu 2 "$bin" exec "${tiny[@]}" --gpus-per-host 2 --db "$db"
one_line gpus-cpu "only with --device cuda"
run fp32 2 "$bin" exec "${tiny[@]}" --device cuda --precision fp32 --db "$db"
one_line fp32 "computes in bf16"
run bf16-cpu 2 "$bin" exec "${tiny[@]}" --precision bf16 --db "$db"
one_line bf16-cpu "computes in fp32"
run flash-cpu 2 "$bin" exec "${tiny[@]}" --flash-attention on --db "$db"
one_line flash-cpu "no fused attention kernel"
run share 2 "$bin" exec "${tiny[@]}" --device cuda --dp 2 --gpus-per-host 1 --transport nccl --dry-run \
  --db "$db"
one_line share "2 ranks per host on 1 GPU would share a GPU"
run framework 2 "$bin" exec "${tiny[@]}" --device cuda --framework megatron --db "$db"
one_line framework "smdplan executor"
run profile 2 "$bin" exec "${tiny[@]}" --framework smdplan-cuda --db "$db"
one_line profile "profile on the cpu device is smdplan"
run host 2 "$bin" exec "${tiny[@]}" --device cuda --host no-such-type --dry-run --db "$db"
one_line host "not an instance type of the catalog"
if [ "$gpus" -eq 0 ]; then
  run no-gpu 2 "$bin" exec "${tiny[@]}" --device cuda --steps 2 --db "$db"
  one_line no-gpu "CUDA sees no GPU on this host"
fi
nothing_written refusals

# ---- --dry-run: the command and the CONFIG.json, nothing written ----
run dry-run 0 "$bin" exec "${tiny[@]}" --device cuda --dp 2 --gpus-per-host 2 --dry-run --db "$db"
has dry-run "$tmp/out" "mpirun -n 2 "
has dry-run "$tmp/out" "smdplan-rank --config smdplan-runs/.*/CONFIG.json"
run dry-nccl 0 "$bin" exec "${tiny[@]}" --device cuda --dp 2 --gpus-per-host 2 --dry-run --json \
  --db "$db"
cp "$tmp/out" "$tmp/nccl.json"
has dry-nccl "$tmp/nccl.json" '"command":[[:space:]]*".*mpirun -n 2 '
has dry-nccl "$tmp/nccl.json" '"transport":[[:space:]]*"nccl"'
has dry-nccl "$tmp/nccl.json" '"device":[[:space:]]*"cuda"'
has dry-nccl "$tmp/nccl.json" '"dp":[[:space:]]*2'
has dry-nccl "$tmp/nccl.json" '"dp_overlap":[[:space:]]*true'
has dry-nccl "$tmp/nccl.json" '"flash_attention":[[:space:]]*false'
hasnt dry-nccl "$tmp/nccl.json" '"transport":[[:space:]]*"mpi"'
run dry-staged 0 "$bin" exec "${tiny[@]}" --device cuda --dp 2 --gpus-per-host 1 --dry-run --json \
  --db "$db"
has dry-staged "$tmp/out" '"transport":[[:space:]]*"mpi"'
has dry-staged "$tmp/out" '"dp_overlap":[[:space:]]*false'
has dry-staged "$tmp/out" '"ranks_per_host":[[:space:]]*2'
hasnt dry-staged "$tmp/out" '"transport":[[:space:]]*"nccl"'
run dry-asked-mpi 0 "$bin" exec "${tiny[@]}" --device cuda --gpus-per-host 1 --transport mpi --dry-run \
  --json --db "$db"
has dry-asked-mpi "$tmp/out" '"transport":[[:space:]]*"mpi"'
run dry-flash 0 "$bin" exec "${tiny[@]}" --device cuda --gpus-per-host 1 --flash-attention on \
  --dry-run --json --db "$db"
has dry-flash "$tmp/out" '"flash_attention":[[:space:]]*true'
has dry-flash "$tmp/out" '"transport":[[:space:]]*"nccl"'
run dry-cpu 0 "$bin" exec "${tiny[@]}" --dry-run --json --db "$db"
has dry-cpu "$tmp/out" '"device":[[:space:]]*"cpu"'
has dry-cpu "$tmp/out" '"transport":[[:space:]]*"mpi"'
nothing_written dry-run

# ---- --emit slurm: the GPUs asked of Slurm, the CONFIG.json in the script ----
run emit 0 "$bin" exec "${tiny[@]}" --device cuda --dp 2 --gpus-per-host 2 --emit slurm --db "$db"
has emit "$tmp/out" "#SBATCH --gpus-per-node=2"
has emit "$tmp/out" '"device":[[:space:]]*"cuda"'
bash -n "$tmp/out" || { echo "FAIL emit: the script does not parse"; fail=1; }
if [ "$gpus" -eq 0 ]; then
  run emit-unknown 2 "$bin" exec "${tiny[@]}" --device cuda --emit slurm --db "$db"
  one_line emit-unknown "give --gpus-per-host N"
fi
nothing_written emit

# ---- with a GPU: its memory checked before the launch ----
if [ "$gpus" -gt 0 ]; then
  run gpu-memory 2 timeout 60 "$bin" exec --layers 100000 --hidden 64 --heads 1 --device cuda \
    --steps 3 --db "$db"
  one_line gpu-memory "memory: the layout needs .* per rank x 1 rank per GPU = .*, and the GPU has"
  nothing_written gpu-memory
  run gpu-fits 0 timeout 300 "$bin" exec "${tiny[@]}" --device cuda --steps 3 --json --no-record \
    --run-dir "$tmp/gpu-run"
  has gpu-fits "$tmp/out" '"status":[[:space:]]*"ok"'
  has gpu-fits "$tmp/out" '"timeout_s":[[:space:]]*600'
fi

[ "$fail" -eq 0 ] && echo "all passed"
exit "$fail"
