#!/usr/bin/env bash
# One rank calls exec_comm_abort(3) while the others wait in a barrier: the
# whole job must end quickly with a non-zero exit, and no rank may report
# that the barrier returned.
# Usage: test_exec_comm_abort.sh MPIEXEC NPROCS PROGRAM
set -u
mpiexec=$1 n=$2 prog=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$SECONDS
timeout 60 "$mpiexec" -n "$n" --oversubscribe "$prog" --abort >"$out" 2>&1
rc=$?
elapsed=$((SECONDS - start))
cat "$out"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "FAIL: exit $rc (expected the abort's non-zero exit)"; exit 1
fi
if ! grep -q "aborting on purpose" "$out"; then
  echo "FAIL: the aborting rank never ran"; exit 1
fi
if grep -q "barrier returned" "$out"; then
  echo "FAIL: a rank left the barrier"; exit 1
fi
if [ "$elapsed" -gt 30 ]; then
  echo "FAIL: the abort took ${elapsed}s"; exit 1
fi
echo "ok: exit $rc after ${elapsed}s"
