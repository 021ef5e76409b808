#!/usr/bin/env bash
# test_cli_modules.sh: smdplan plans without the executor's libraries.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# The program links none of CUDA's runtime, cuBLAS(Lt), NCCL, MPI or
# OpenBLAS (its ELF NEEDED entries, read with readelf; the rank programs
# none of the first four either, smdplan-rank OpenBLAS for its CPU devices):
# the backends on them are modules opened on demand (exec/exec_module.h) and
# OpenBLAS is opened by the CPU device (exec/exec_blas.h). A plan opens none
# of them at run time (the dynamic loader's LD_DEBUG=files log) and runs
# with no module to be found. Ranks train over the MPI transport through its
# module. Where a command needs a module that is missing, cannot be loaded
# or is from another build, it says so in one line naming the module and
# where it was looked for, exit 2 (a launcher before anything launches);
# --version still answers, with no GPU; so does a CUDA build where CUDA's
# libraries are hidden (in a mount namespace, where one can be made). An
# install puts the modules in PREFIX/lib/smdplan, where the installed
# program finds them. Skips (77) where readelf is missing.
. "$(dirname "$0")/lib.sh"
command -v readelf >/dev/null || { echo "SKIP: readelf not found"; exit 77; }
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
mkdir "$tmp/none" "$tmp/broken"
heavy='lib(cudart|cublas|cublasLt|nccl|mpi|openblas)\.so'
gpu_mpi='lib(cudart|cublas|cublasLt|nccl|mpi)\.so'
grep_syntax=E

needs_none() { # name, program, pattern
  local needed
  needed=$(readelf -d "$2" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || { echo "FAIL $1: readelf shows no NEEDED entries for $2"; fail=1; return; }
  if grep -Eq -- "$3" <<<"$needed"; then
    echo "FAIL $1: $2 links $(grep -E -- "$3" <<<"$needed" | tr '\n' ' ')"; fail=1
  else
    echo "ok   $1 (needs: $(tr '\n' ' ' <<<"$needed"))"
  fi
}

# ---- what the programs link ----
needs_none smdplan "$bin" "$heavy"
for p in smdplan-rank smdplan-bench-rank; do
  [ -x "$dir/$p" ] && needs_none "$p" "$dir/$p" "$gpu_mpi"
done
# the rank program's CPU devices need OpenBLAS: it names it (CMakeLists.txt)
readelf -d "$dir/smdplan-rank" | grep -q 'NEEDED.*\[libopenblas\.so' ||
  { echo "FAIL smdplan-rank: does not name libopenblas (its CPU devices open it)"; fail=1; }

# ---- a plan opens none of them, and needs no module ----
run plan 0 env LD_DEBUG=files "$bin" --params 30B --instances 16xp4d --no-record
if ! grep -q 'file=' "$tmp/err"; then
  echo "ok   plan-loads (not checked: this dynamic loader does not log LD_DEBUG=files)"
elif grep -E "file=[^ ]*$heavy" "$tmp/err" >"$tmp/loaded"; then
  echo "FAIL plan-loads: a plan loaded:"; cat "$tmp/loaded"; fail=1
else
  echo "ok   plan-loads"
fi
run plan-no-modules 0 env SMDPLAN_MODULES="$tmp/none" "$bin" --params 30B --instances 16xp4d \
  --no-record
grep -v '^search: ' "$tmp/out" >"$tmp/plan-none" # (the line with the search's time)
run plan-modules 0 "$bin" --params 30B --instances 16xp4d --no-record
grep -v '^search: ' "$tmp/out" | cmp -s - "$tmp/plan-none" ||
  { echo "FAIL plan-no-modules: another answer"; fail=1; }

# ---- a missing or broken module: one line naming it, exit 2 ----
"$bin" --version >"$tmp/version" || { echo "FAIL --version"; exit 1; }
if grep -q 'CUDA yes' "$tmp/version"; then
  run version-no-module 0 env SMDPLAN_MODULES="$tmp/none" "$bin" --version
  grep -q '^GPUs visible to CUDA: 0$' "$tmp/out" || { echo "FAIL version-no-module:"; cat "$tmp/out"; fail=1; }
  one_line version-no-module "smdplan-cuda-info\.so not found"
  run bench-gpu-no-module 2 env SMDPLAN_MODULES="$tmp/none" "$bin" bench gpu --no-record
  one_line bench-gpu-no-module "bench gpu: device cuda: backend module smdplan-cuda-info\.so not found"
  : >"$tmp/broken/smdplan-cuda-info.so"
  run bench-gpu-broken 2 env SMDPLAN_MODULES="$tmp/broken" "$bin" bench gpu --no-record
  one_line bench-gpu-broken "smdplan-cuda-info\.so cannot be loaded: "
  tiny=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 128)
  run exec-no-module 2 env SMDPLAN_MODULES="$tmp/none" "$bin" exec "${tiny[@]}" --device cuda \
    --steps 2 --no-record
  one_line exec-no-module "device cuda: backend module smdplan-cuda-info\.so not found .*; nothing launched"
  # a run prepared for a GPU host on a host without CUDA's libraries
  run exec-dry-no-module 0 env SMDPLAN_MODULES="$tmp/none" "$bin" exec "${tiny[@]}" --device cuda \
    --gpus-per-host 1 --dry-run --no-record
  [ -e "$tmp/smdplan-runs" ] && { echo "FAIL exec-dry-no-module: something was written"; fail=1; }
fi
if grep -q 'MPI yes' "$tmp/version"; then
  # ranks on the CPU over the MPI transport, its module found beside the
  # programs (the multi-rank tests under tests/mpi run the layouts)
  allow_mpirun_as_root
  export OMPI_MCA_rmaps_base_oversubscribe=1
  tiny=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 128 --steps 2 --no-record)
  run exec-mpi 0 "$bin" exec "${tiny[@]}" --tp 2 --run-dir "$tmp/run-mpi"
  grep -q '^run0: ok' "$tmp/out" || { echo "FAIL exec-mpi:"; cat "$tmp/out"; fail=1; }
  # missing: refused before mpirun, nothing written
  run exec-mpi-no-module 2 env SMDPLAN_MODULES="$tmp/none" "$bin" exec "${tiny[@]}" --tp 2 \
    --run-dir "$tmp/run-none"
  one_line exec-mpi-no-module "^smdplan: transport mpi: backend module smdplan-mpi\.so not found \(looked in \\\$SMDPLAN_MODULES = $tmp/none\); nothing launched$"
  [ -e "$tmp/run-none" ] && { echo "FAIL exec-mpi-no-module: a run directory was made"; fail=1; }
  run comm-mpi-no-module 2 env SMDPLAN_MODULES="$tmp/none" "$bin" bench comm --quick --no-record \
    --json
  one_line comm-mpi-no-module "^smdplan: transport mpi: backend module smdplan-mpi\.so not found"
  # not a shared object: the ranks say what the loader said, exit 2
  : >"$tmp/broken/smdplan-mpi.so"
  run exec-mpi-broken 2 env SMDPLAN_MODULES="$tmp/broken" "$bin" exec "${tiny[@]}" --tp 2 \
    --run-dir "$tmp/run-broken"
  grep -q "smdplan-rank: rank [01]: transport mpi: backend module .*smdplan-mpi\.so cannot be loaded: " \
    "$tmp/out" "$tmp/err" || { echo "FAIL exec-mpi-broken:"; cat "$tmp/out" "$tmp/err"; fail=1; }
  # from another build (its build id changed, length kept): refused by name,
  # never called
  mkdir "$tmp/stale"
  ver=$(sed -n 's/^smdplan \([^ ]*\) .*$/\1/p' "$tmp/version")
  id=$(sed -n 's/^smdplan .*, build \(.*\))$/\1/p' "$tmp/version")
  ID=$id perl -pe 's/\Q$ENV{ID}\E/"x" x length($ENV{ID})/ge' "$dir/smdplan-mpi.so" \
    >"$tmp/stale/smdplan-mpi.so"
  run exec-mpi-stale 2 env SMDPLAN_MODULES="$tmp/stale" "$bin" exec "${tiny[@]}" --tp 2 \
    --run-dir "$tmp/run-stale"
  grep -q "smdplan-mpi\.so is from smdplan [0-9.]* (build x*), this program from smdplan $ver (build $id)" \
    "$tmp/out" "$tmp/err" || { echo "FAIL exec-mpi-stale:"; cat "$tmp/out" "$tmp/err"; fail=1; }
fi
if grep -q 'NCCL yes' "$tmp/version"; then
  run comm-nccl-no-module 2 env SMDPLAN_MODULES="$tmp/none" "$bin" bench comm --transport nccl \
    --no-record --json
  one_line comm-nccl-no-module "device cuda: backend module smdplan-cuda-info\.so not found"
fi

# ---- a build with CUDA on a host without CUDA's libraries (their directory
# hidden under an empty tmpfs in a mount namespace of this test's own, where
# the system lets one be made): plans, says 0 GPUs and why, refuses a GPU
# run in one line ----
cudart=$(ldd "$dir/smdplan-cuda-info.so" 2>/dev/null | awk '/libcudart/ {print $3}')
cudadir=$(dirname "${cudart:-/none/x}")
ns=""
if [ -n "$cudart" ] && [[ "$cudadir" == *cuda* ]]; then
  for u in "unshare -m" "unshare -rm"; do
    $u sh -c "mount -t tmpfs none '$cudadir'" 2>/dev/null && { ns=$u; break; }
  done
fi
if [ -z "$ns" ]; then
  echo "ok   no-cuda (not checked: no CUDA build, or no mount namespace here)"
else
  hide="mount -t tmpfs none '$cudadir' &&"
  run no-cuda-version 0 $ns sh -c "$hide exec '$bin' --version"
  grep -q '^GPUs visible to CUDA: 0$' "$tmp/out" || { echo "FAIL no-cuda-version:"; cat "$tmp/out"; fail=1; }
  one_line no-cuda-version "smdplan-cuda-info\.so cannot be loaded: libcudart"
  run no-cuda-plan 0 $ns sh -c "$hide exec '$bin' --params 30B --instances 16xp4d --no-record"
  run no-cuda-exec 2 $ns sh -c "$hide exec '$bin' exec --layers 2 --hidden 64 --heads 4 --seq 32 \
    --vocab 128 --device cuda --steps 2 --no-record"
  one_line no-cuda-exec "cannot be loaded: libcudart.*; nothing launched$"
fi

# ---- installed: the modules in PREFIX/lib/smdplan, found from PREFIX/bin ----
if command -v cmake >/dev/null && [ -f "$dir/cmake_install.cmake" ]; then
  mods=$(cd "$dir" && ls smdplan-*.so 2>/dev/null)
  if cmake --install "$dir" --prefix "$tmp/inst" >"$tmp/install.log" 2>&1; then
    for m in $mods; do
      [ -f "$tmp/inst/lib/smdplan/$m" ] || { echo "FAIL install: no lib/smdplan/$m"; fail=1; }
    done
    echo "ok   install ($(echo $mods | wc -w) modules in lib/smdplan)"
    if [ -n "$mods" ]; then
      LD_DEBUG=files "$tmp/inst/bin/smdplan" --version >/dev/null 2>"$tmp/err"
      if grep -q 'file=' "$tmp/err" && grep -q 'CUDA yes' "$tmp/version" &&
        ! grep -q "file=$tmp/inst/bin/../lib/smdplan/smdplan-cuda-info\.so" "$tmp/err"; then
        echo "FAIL install: the installed smdplan did not open its own module:"
        grep 'smdplan-' "$tmp/err"; fail=1
      fi
    fi
  else
    echo "FAIL install:"; cat "$tmp/install.log"; fail=1
  fi
fi

[ "$fail" -eq 0 ] && echo "all passed"
exit "$fail"
