#!/usr/bin/env bash
# test_cli_exec_inputs.sh: the executor's inputs from files it did not write.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# - --emit slurm with hostile names (a model's _name_or_path, a catalog's
#   instance type, the config's path: newlines, $(...), backticks, quotes):
#   the script parses, and run with stub mpirun and smdplan it runs them and
#   nothing else (each injected command would leave a marker file).
# - --import of a run directory whose RESULT.json was not written by a rank
#   program (steps or rank_stats an object, ranks 2e18, ...): exit 2, one
#   line naming the key, nothing recorded.
# - --resume from a checkpoint whose rank file was crafted (tp, pp, dp or
#   virtual stages 2^62 with the header's checksum made to match, a layout
#   the model cannot have) or damaged (a flipped bit in the header or in a
#   payload, a truncated file, the old format without checksums): the run
#   fails at once with one line naming the field or the damage (exit 1, the
#   failed RESULT.json says why); it used to divide by zero, overflow the
#   stack or the heap, or resume silently from damaged numbers.
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
cd "$tmp" || exit 1
run_timeout=60 # nothing may hang

# No marker file (INJ*, or the catalog fixture's PS1, PS2) under $tmp: $1 names
# the check.
no_markers() {
  local found
  found=$(find "$tmp" -name 'INJ*' -o -name 'PS[12]' | head -5)
  [ -z "$found" ] || { echo "FAIL $1: an injected command ran: $found"; fail=1; }
}

# ---- --emit slurm with hostile names ------------------------------------------
# The model's name ends a comment line three ways (\n, \r\n, and a line of
# its own), substitutes commands ($(...) and backticks) and opens quotes; the
# catalog's instance type (catalog_hostile.json's evilsh) ends the comment
# too; the config's directory holds a substitution, quotes and a newline.
hdir="$tmp/m\$(touch INJD1)\`touch INJD2\`'\"
touch INJD3"
mkdir -p "$hdir"
sed 's/"_name_or_path": ".*"/"_name_or_path": "x\\ntouch INJ1;`touch INJ2`$(touch INJ3)\\r\\n'"'"'\\"#"/' \
  "$fix/hf_hostile_name.json" >"$hdir/config.json"
grep -q 'touch INJ1' "$hdir/config.json" || { echo "FAIL fixture: no hostile name"; fail=1; }
scale="--scale layers=2,hidden=48,heads=2,vocab=64,seq=16"
run slurm-hostile 0 "$bin" exec --model "$hdir/config.json" $scale --instances 1xevilsh \
  --catalog "$fix/catalog_hostile.json" --emit slurm --out "$tmp/job.sbatch"
bash -n "$tmp/job.sbatch" || { echo "FAIL slurm-hostile: bash -n fails"; fail=1; }
# up to the first command every line is a comment or an #SBATCH line (Slurm
# reads #SBATCH lines only before it): the names stay inside their comments
sed '/^set -euo pipefail$/q' "$tmp/job.sbatch" | grep -v '^#' >"$tmp/bad"
if [ "$(cat "$tmp/bad")" != "set -euo pipefail" ]; then
  echo "FAIL slurm-hostile: a name left its comment:"; cat "$tmp/bad"; fail=1
fi
grep -q '^#SBATCH --ntasks=8$' "$tmp/job.sbatch" || { echo "FAIL slurm-hostile: no #SBATCH --ntasks"; fail=1; }
has slurm-hostile "$tmp/job.sbatch" '^# x\\ntouch INJ1;`touch INJ2`$(touch INJ3)\\x0d\\n'"'"'"#'
has slurm-hostile "$tmp/job.sbatch" "the plan's cluster: 1 x p9.y\\\\\\\\z\\\\ntouch PS1"
# Run it as the batch system would, with stub mpirun and smdplan that log
# their arguments (NUL-separated) and succeed.
mkdir -p "$tmp/stub"
cat >"$tmp/stub/mpirun" <<'EOF'
#!/bin/sh
printf '%s\0' "$@" >"$STUB_LOG.mpirun"
EOF
cat >"$tmp/stub/smdplan" <<'EOF'
#!/bin/sh
printf '%s\0' "$@" >"$STUB_LOG.smdplan"
EOF
chmod +x "$tmp/stub/mpirun" "$tmp/stub/smdplan"
STUB_LOG="$tmp/log" SMDPLAN="$tmp/stub/smdplan" SMDPLAN_RUN_DIR="$tmp/srun" \
  PATH="$tmp/stub:$PATH" run slurm-hostile-job 0 bash "$tmp/job.sbatch"
no_markers slurm-hostile-job
[ -s "$tmp/srun/CONFIG.json" ] || { echo "FAIL slurm-hostile-job: no CONFIG.json"; fail=1; }
if [ -s "$tmp/log.mpirun" ] && [ -s "$tmp/log.smdplan" ]; then
  # the config's path reached smdplan --import as one word, byte for byte
  mapfile -d '' args <"$tmp/log.smdplan"
  ok=0
  for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    [ "${args[i]}" = --model ] && [ "${args[i + 1]}" = "$hdir/config.json" ] && ok=1
  done
  [ "$ok" = 1 ] && echo "ok   slurm-hostile-args" ||
    { echo "FAIL slurm-hostile-args: --model not passed intact:"; printf '[%s]\n' "${args[@]}"; fail=1; }
  # and the model name reached the run's CONFIG.json intact (JSON-escaped)
  grep -q '"name":[[:space:]]*"x\\ntouch INJ1;`touch INJ2`$(touch INJ3)\\r\\n'"'"'\\"#' \
    "$tmp/srun/CONFIG.json" || { echo "FAIL slurm-hostile-job: the name changed in CONFIG.json"; fail=1; }
else
  echo "FAIL slurm-hostile-job: the stub mpirun or smdplan did not run"; fail=1
fi

# ---- --import of a RESULT.json from elsewhere ----------------------------------
# The run directory as the emitted script leaves it (its CONFIG.json), then
# RESULT.json files the rank program never writes; each is refused naming the
# key, and nothing is recorded.
tiny="$tiny_model --dp 2 --steps 3"
db="$tmp/x.db"
run import-emit 0 "$bin" exec $tiny --db "$db" --emit slurm --out "$tmp/imp.sbatch"
STUB_LOG="$tmp/ilog" SMDPLAN="$tmp/stub/smdplan" SMDPLAN_RUN_DIR="$tmp/irun" \
  PATH="$tmp/stub:$PATH" run import-job 0 bash "$tmp/imp.sbatch"
while IFS='|' read -r name json want; do
  printf '%s\n' "$json" >"$tmp/irun/RESULT.json"
  unset SMDPLAN_NO_RECORD
  run "import-$name" 2 "$bin" exec $tiny --db "$db" --import "$tmp/irun"
  export SMDPLAN_NO_RECORD=1
  one_line "import-$name" "$want"
  [ ! -e "$tmp/irun/RECORDED" ] || { echo "FAIL import-$name: marked as recorded"; fail=1; }
done <<'EOF'
steps-object|{"version": 1, "status": "ok", "ranks": 2, "steps": {"a": {"step": 1}}}|RESULT.json: result: steps: must be an array
ranks-object|{"version": 1, "status": "ok", "ranks": 2, "rank_stats": {"a": {"rank": 0}}}|result: rank_stats: must be an array
steps-number|{"version": 1, "status": "ok", "ranks": 2, "steps": [1, 2]}|result: steps\[0\]: must be an object
ranks-huge|{"version": 1, "status": "ok", "ranks": 2e18}|result: ranks: must be an integer in 0..2147483647
rank-out|{"version": 1, "status": "ok", "ranks": 2, "rank_stats": [{"rank": 5}]}|result: rank_stats\[0\].rank: must be an integer in 0..1
tokens|{"version": 1, "status": "ok", "ranks": 2, "tokens_per_step": 1e300}|result: tokens_per_step
status|{"version": 1, "status": "great", "ranks": 2}|status "great": allowed are ok, failed
EOF
[ ! -e "$db" ] || { echo "FAIL import: a refused run opened the database"; fail=1; }
# the same directory with a result a rank program could have written imports
cat >"$tmp/irun/RESULT.json" <<'EOF'
{"version": 1, "status": "ok", "error": null, "failed_rank": null, "ranks": 2, "steps": [
 {"step": 1, "time_s": 0.02, "loss": 4.2, "measured": false},
 {"step": 2, "time_s": 0.01, "loss": 4.1, "measured": true},
 {"step": 3, "time_s": 0.01, "loss": 4.0, "measured": true}],
 "rank_stats": [{"rank": 0, "dp_rank": 0}, {"rank": 1, "dp_rank": 1}]}
EOF
unset SMDPLAN_NO_RECORD
run import-good 0 "$bin" exec $tiny --db "$db" --import "$tmp/irun"
export SMDPLAN_NO_RECORD=1
has import-good "$tmp/out" "run 1: ok"

# ---- --resume from a crafted or damaged checkpoint -----------------------------
# One rank (transport self) of a tiny model saves after step 2 of 3; each case
# copies the checkpoint, changes its rank file and resumes from the copy.
rank="$dir/smdplan-rank"
if [ ! -x "$rank" ]; then
  echo "skip resume: $rank not built"
else
  mkconf() { # file, checkpoint JSON object, train.stop_after
    cat >"$1" <<EOF
{"version": 1, "model": {"name": "tiny", "arch": "gpt", "layers": 2, "hidden": 16, "heads": 2,
 "ffn": 64, "seq": 8, "vocab": 32}, "layout": {"microbatches": 2},
 "train": {"steps": 3, "stop_after": $3}, "device": "cpu", "transport": "self", "progress": false,
 "checkpoint": $2}
EOF
  }
  mkconf "$tmp/save.json" "{\"save_dir\": \"$tmp/ck\"}" 2
  run ckpt-save 0 "$rank" --config "$tmp/save.json" --result "$tmp/save.res"
  f=ck/step-00000002/rank-00000.bin
  [ -s "$tmp/$f" ] || { echo "FAIL ckpt-save: no $f"; fail=1; }
  mkconf "$tmp/resume.json" "{\"resume_dir\": \"$tmp/ck2\"}" 0
  # craft FILE OP...: set FIELD VALUE (an 8-byte header field, then the
  # header's sum made to match, as a crafted file would), poke FIELD VALUE
  # (no new sum), flip OFFSET (one bit; negative: from the end), cut N bytes
  craft() {
    python3 - "$@" <<'EOF'
import sys
path, op = sys.argv[1], sys.argv[2:]
b = bytearray(open(path, "rb").read())
order = sys.byteorder
fields = ["version", "world", "rank", "tp", "pp", "dp", "virt", "sharding"]
def fnv(data):  # exec_ckpt_sum: FNV-1a 64 over 8-byte words, then the length
    h, p, mask, n = 14695981039346656037, 1099511628211, (1 << 64) - 1, len(data)
    for i in range(0, n, 8):
        h = ((h ^ int.from_bytes(data[i:i + 8].ljust(8, b"\0"), order)) * p) & mask
    return ((h ^ n) * p) & mask
if op[0] in ("set", "poke"):
    at = 8 + 8 * fields.index(op[1])
    b[at:at + 8] = int(op[2]).to_bytes(8, order, signed=True)
    if op[0] == "set":
        b[240:248] = fnv(bytes(b[:240])).to_bytes(8, order)
elif op[0] == "flip":
    b[int(op[1])] ^= 0x10
elif op[0] == "cut":
    del b[len(b) - int(op[1]):]
open(path, "wb").write(b)
EOF
  }
  big=4611686018427387904 # 2^62
  while IFS='|' read -r name op want; do
    rm -rf "$tmp/ck2" && cp -r "$tmp/ck" "$tmp/ck2" && rm -f "$tmp/resume.res"
    craft "$tmp/ck2/${f#ck/}" $op
    run "resume-$name" 1 "$rank" --config "$tmp/resume.json" --result "$tmp/resume.res"
    one_line "resume-$name" "$want"
    grep -q '"status":[[:space:]]*"failed"' "$tmp/resume.res" 2>/dev/null &&
      grep -q -- "$want" "$tmp/resume.res" ||
      { echo "FAIL resume-$name: RESULT.json does not say failed with '$want'"; fail=1; }
  done <<EOF
tp|set tp $big|header field tp $big: must be in 1..4096
pp|set pp $big|header field pp $big: must be in 1..256
dp|set dp $big|header field dp $big: must be in 1..1048576
virt|set virt $big|header field virt $big: must be in 1..256
world|set tp 2|tp 2 x pp 1 x dp 1 is not its world of 1 ranks
chunks|set virt 3|written on a layout this model cannot have: layout: 3 pipeline chunks
header-bit|poke tp $big|header is damaged (its checksum does not match)
param-bit|flip 300|its parameters are damaged
moment-bit|flip -20|its second moments are damaged
cut|cut 1|bytes, its header makes it
version1|poke version 1|checkpoint format version 1, without checksums
EOF
  # the checkpoint as written resumes, and ends at step 3
  rm -rf "$tmp/ck2" && cp -r "$tmp/ck" "$tmp/ck2"
  run resume-intact 0 "$rank" --config "$tmp/resume.json" --result "$tmp/resume.res"
  grep -q '"step":[[:space:]]*3' "$tmp/resume.res" || { echo "FAIL resume-intact: no step 3"; fail=1; }
fi

exit $fail
