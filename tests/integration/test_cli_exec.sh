#!/usr/bin/env bash
# test_cli_exec.sh: smdplan exec end to end, on the real rank program.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# Bad flags exit 2 with one line before anything launches (no run directory);
# --dry-run prints the mpirun command and writes nothing; --emit slurm writes
# a script a shell can read; a tiny run over 2 ranks succeeds, --json has the
# keys the issue names, and compare shows its prediction, simulation and
# measurement with their record; a rank killed with SIGKILL mid-run ends the
# job within 30 s, recorded as failed with the error, and no process of the
# job is left. Skips (77) only when the rank program is not built.
. "$(dirname "$0")/lib.sh"
need_built smdplan-rank
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
db="$tmp/x.db"
tiny=$tiny_model

# live (not zombie) processes whose command line names $1
alive() { ps -eo stat=,args= | awk -v p="$1" '$1 !~ /^Z/ && index($0, p) && !index($0, "awk")' | wc -l; }

# ---- bad input: exit 2, one line, nothing launched or written ----
run steps-zero 2 "$bin" exec $tiny --steps 0 --db "$db"; one_line steps-zero "--steps"
run steps-one 2 "$bin" exec $tiny --steps 1 --db "$db"; one_line steps-one "not measured"
run tp-heads 2 "$bin" exec $tiny --tp 3 --db "$db"; one_line tp-heads "heads do not divide by tp 3"
run unknown 2 "$bin" exec $tiny --bogus --db "$db"; one_line unknown "'--bogus'"
run cp 2 "$bin" exec $tiny --cp 2 --db "$db"; one_line cp "context parallel"
run offload 2 "$bin" exec $tiny --pp 2 --offload on --recompute full --db "$db"; one_line offload "offload"
run scale-key 2 "$bin" exec $tiny --scale depth=1 --db "$db"; one_line scale-key "unknown key 'depth'"
run scale-grow 2 "$bin" exec $tiny --scale hidden=64 --db "$db"; one_line scale-grow "only shrinks"
run plan-opt 2 "$bin" exec $tiny --explain --db "$db"; one_line plan-opt "--explain"
run data 2 "$bin" exec $tiny --data text:/no/such/file --db "$db"; one_line data "no such file"
run framework 2 "$bin" exec $tiny --framework megatron --db "$db"; one_line framework "smdplan executor"
run plan-missing 2 "$bin" exec --plan 999 --db "$db"; one_line plan-missing "no such database"
[ ! -e "$tmp/smdplan-runs" ] || { echo "FAIL bad input: a run directory was made"; fail=1; }
[ ! -e "$db" ] || { echo "FAIL bad input: the database was written"; fail=1; }

# ---- --dry-run: the exact command, nothing written ----
run dry-run 0 "$bin" exec $tiny --tp 2 --pp 2 --steps 3 --dry-run --db "$db"
has dry-run "$tmp/out" "mpirun -n 4 "
has dry-run "$tmp/out" "smdplan-rank --config smdplan-runs/"
[ "$(nproc)" -lt 4 ] && has dry-run "$tmp/out" "--oversubscribe"
[ "$(id -u)" -eq 0 ] && has dry-run "$tmp/out" "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun"
run dry-run-hostfile 0 "$bin" exec $tiny --dp 2 --hostfile "$fix/catalog_host.json" --dry-run
has dry-run-hostfile "$tmp/out" "--hostfile $fix/catalog_host.json"
[ ! -e "$tmp/smdplan-runs" ] && [ ! -e "$db" ] || { echo "FAIL dry-run wrote something"; fail=1; }

# ---- a recorded plan, shrunk with --scale, keeping its layout ----
pdb="$tmp/plans.db"
"$bin" --params 1.3B --instances 1xp4d --tp 2 --pp 2 --no-sim --db "$pdb" >/dev/null || { echo "FAIL plan record"; fail=1; }
run plan-dry 0 "$bin" exec --plan 1 --scale layers=4,hidden=128,heads=4,seq=64,vocab=512 \
  --dry-run --db "$pdb"
has plan-dry "$tmp/out" "mpirun -n 8 "
run plan-scaled 0 "$bin" exec --plan 1 --scale layers=4,hidden=128,heads=4,seq=64,vocab=512 \
  --steps 2 --db "$pdb" --run-dir "$tmp/runp"
has plan-scaled "$tmp/out" "scaled:  layers 24 -> 4, hidden 2048 -> 128"
has plan-scaled "$tmp/out" "layout:  tp 2, pp 2, dp 2 (8 ranks)"
run plan-flag 2 "$bin" exec --plan 1 --tp 4 --db "$pdb"; one_line plan-flag "come from plan record 1"
run plan-heads 2 "$bin" exec --plan 1 --scale hidden=100 --db "$pdb"; one_line plan-heads "not divisible by the 16 heads"
run plan-vocab 2 "$bin" exec --plan 1 --db "$pdb"; one_line plan-vocab "vocabulary 50257 does not divide by tp 2"

# ---- --emit slurm: a script the shell reads, never over a foreign file ----
run slurm 0 "$bin" exec $tiny --pp 2 --emit slurm --out "$tmp/job.sbatch"
bash -n "$tmp/job.sbatch" || { echo "FAIL slurm: not a shell script"; fail=1; }
has slurm "$tmp/job.sbatch" "#SBATCH --ntasks=2"
echo "mine" >"$tmp/mine.sbatch"
run slurm-foreign 2 "$bin" exec $tiny --emit slurm --out "$tmp/mine.sbatch"; one_line slurm-foreign "exists; not replaced (pass --force"
[ "$(cat "$tmp/mine.sbatch")" = mine ] || { echo "FAIL slurm: a foreign file was changed"; fail=1; }

# ---- the emitted script run as the batch system would: its --import line
# records the run (once), and an import that names another run is refused ----
sdb="$tmp/slurm.db"
run slurm-emit 0 "$bin" exec $tiny --dp 2 --steps 3 $host_catalog --db "$sdb" --emit slurm --out "$tmp/run.sbatch"
export SMDPLAN_RUN_DIR="$tmp/srun"
allow_mpirun_as_root # the script's mpirun
run slurm-job 0 bash "$tmp/run.sbatch"
unset SMDPLAN_RUN_DIR
has slurm-job "$tmp/out" "import:  $tmp/srun"
has slurm-job "$tmp/out" "run 1: ok"
[ -s "$tmp/srun/RESULT.json" ] && grep -q "^run 1$" "$tmp/srun/RECORDED" ||
  { echo "FAIL slurm-job: no RESULT.json or RECORDED"; fail=1; }
run slurm-history 0 "$bin" history --kind run --db "$sdb"
has slurm-history "$tmp/out" "run ok (2 ranks)"
run slurm-again 2 "$bin" exec $tiny --dp 2 --steps 3 $host_catalog --db "$sdb" --import "$tmp/srun"
one_line slurm-again "already recorded (run 1)"
rm "$tmp/srun/RECORDED"
mv "$tmp/srun/RESULT.json" "$tmp/result.keep" && mkfifo "$tmp/srun/RESULT.json"
run slurm-fifo 2 "$bin" exec $tiny --dp 2 --steps 3 $host_catalog --db "$sdb" --import "$tmp/srun"
one_line slurm-fifo "RESULT.json is not a regular file"
rm "$tmp/srun/RESULT.json" && mv "$tmp/result.keep" "$tmp/srun/RESULT.json"
run slurm-other 2 "$bin" exec $tiny --dp 2 --steps 4 $host_catalog --db "$sdb" --import "$tmp/srun"
one_line slurm-other "not the run these options describe"
run slurm-status 0 "$bin" exec $tiny --dp 2 --steps 3 $host_catalog --db "$sdb" --import "$tmp/srun" --exit-status 1 --json
has slurm-status "$tmp/out" '"status":[[:space:]]*"failed"'
has slurm-status "$tmp/out" "exited with status 1 after the result was written"

# ---- a tiny run over 2 ranks: ok, --json keys, recorded, compared ----
run tiny-json 0 "$bin" exec $tiny --pp 2 --steps 6 $host_catalog --json --db "$db" --run-dir "$tmp/run0"
for k in run_id status ranks step_time_s tokens_per_s mfu peak_memory_bytes losses \
         predicted_step_s simulated_step_s; do
  has tiny-json "$tmp/out" "\"$k\":"
done
has tiny-json "$tmp/out" '"status":[[:space:]]*"ok"'
has tiny-json "$tmp/out" '"ranks":[[:space:]]*2'
grep -q '"predicted_step_s":[[:space:]]*null' "$tmp/out" && { echo "FAIL tiny-json: no prediction"; fail=1; }
[ -s "$tmp/run0/CONFIG.json" ] && [ -s "$tmp/run0/RESULT.json" ] || { echo "FAIL tiny: run directory"; fail=1; }
rid=$(sed -n 's/.*"run_id":[[:space:]]*\([0-9]*\).*/\1/p' "$tmp/out")
run compare 0 "$bin" compare --db "$db"
has compare "$tmp/out" "smdplan fp32"
has compare "$tmp/out" " $rid/$rid/$rid"
run show 0 "$bin" show "$rid" --db "$db"
has show "$tmp/out" "2 ranks, cpu+mpi"
has show "$tmp/out" "per step (mean of 5 measured)"

# ---- a rank killed mid-run: failed within 30 s, recorded, nothing left ----
"$bin" exec $tiny --dp 2 --steps 1000000 --wait-timeout 20 $host_catalog --db "$db" --json \
  --run-dir "$tmp/run1" >"$tmp/kill.out" 2>"$tmp/kill.err" &
pid=$!
for _ in $(seq 1 200); do # until the job steps (progress reaches mpirun.out)
  grep -q "^step 3/" "$tmp/run1/mpirun.out" 2>/dev/null && break
  sleep 0.1
done
rank=$(ps -eo pid=,args= | awk -v p="$tmp/run1/CONFIG.json" 'index($0, p) && $2 ~ /smdplan-rank$/ {print $1}' | tail -1)
if [ -z "$rank" ]; then
  echo "FAIL kill: no rank process found"; cat "$tmp/kill.err"; fail=1; kill "$pid"
else
  start=$SECONDS
  kill -9 "$rank"
  wait "$pid"
  got=$?
  took=$((SECONDS - start))
  [ "$got" -eq 1 ] || { echo "FAIL kill: exit $got, want 1"; cat "$tmp/kill.err"; fail=1; }
  [ "$took" -le 30 ] || { echo "FAIL kill: took $took s (limit 30)"; fail=1; }
  echo "ok   kill: the job ended $took s after the rank was killed"
  has kill "$tmp/kill.out" '"status":[[:space:]]*"failed"'
  has kill "$tmp/kill.out" '"error":[[:space:]]*"'
  [ "$(alive "$tmp/run1")" -eq 0 ] || { echo "FAIL kill: processes left:"; ps -eo pid,stat,args | grep "$tmp/run1"; fail=1; }
  run history 0 "$bin" history --kind run --db "$db"
  has history "$tmp/out" "run failed (2 ranks)"
fi

exit $fail
