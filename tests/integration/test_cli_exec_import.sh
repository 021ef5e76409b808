#!/usr/bin/env bash
# test_cli_exec_import.sh: smdplan exec --import records a run once, and
# only a run that could have happened.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# A run directory (launched here without recording) is imported: exit 0 and
# RECORDED names the run. Its exit status says whether it was recorded: 1
# when the database cannot take it (no RECORDED left, so a later import may
# try again), 2 with --no-record. A RESULT.json whose status is not of the
# contract's set, or whose numbers the run cannot have produced (tokens
# 1e300, a negative step time, a learning rate above the peak, other ranks),
# is refused with one line naming the value (exit 2) and nothing is
# recorded; a launched run that wrote such a file is recorded as failed with
# the value named. Three imports of one directory at the same time record it once.
# Skips (77) only when the rank program is not built.
. "$(dirname "$0")/lib.sh"
need_built smdplan-rank
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
opts="$tiny_model --dp 2 --steps 3 $host_catalog"

runs_in() { # runs recorded in a database
  "$bin" history --kind run --db "$1" 2>/dev/null | grep -c ' run '
}
# a copy of the launched run directory, its RESULT.json edited by sed
copy() { # name, sed expression ("" for none)
  rm -rf "$tmp/$1"
  cp -r "$tmp/base" "$tmp/$1"
  [ -z "$2" ] || sed -i -E "$2" "$tmp/$1/RESULT.json"
}

run launch 0 "$bin" exec $opts --no-record --run-dir "$tmp/base"
[ -s "$tmp/base/RESULT.json" ] && [ ! -e "$tmp/base/RECORDED" ] || { echo "FAIL launch: run directory"; fail=1; }

# ---- recorded: exit 0, RECORDED names the run ----
db="$tmp/i.db"
copy ok ""
run import 0 "$bin" exec $opts --db "$db" --import "$tmp/ok"
grep -q "^run 1$" "$tmp/ok/RECORDED" || { echo "FAIL import: RECORDED"; cat "$tmp/ok/RECORDED"; fail=1; }
run import-again 2 "$bin" exec $opts --db "$db" --import "$tmp/ok"
one_line import-again "already recorded (run 1)"

# an import that stopped while recording: said so, with the way out
copy stale ""
echo "recording (pid 99999)" >"$tmp/stale/RECORDED"
run import-stale 2 "$bin" exec $opts --db "$db" --import "$tmp/stale"
one_line import-stale "another import is recording it (recording (pid 99999); if none is running, remove"

# ---- nothing recorded: not exit 0, and the directory stays importable ----
copy norec ""
run import-nodb 1 "$bin" exec $opts --db "$tmp" --import "$tmp/norec"
grep -q "not recorded" "$tmp/err" || { echo "FAIL import-nodb: no reason given"; cat "$tmp/err"; fail=1; }
[ ! -e "$tmp/norec/RECORDED" ] || { echo "FAIL import-nodb: RECORDED left"; fail=1; }
run import-no-record 2 "$bin" exec $opts --db "$db" --import "$tmp/norec" --no-record
one_line import-no-record "not with --no-record"
SMDPLAN_NO_RECORD=1 run import-no-record-env 2 "$bin" exec $opts --db "$db" --import "$tmp/norec"
one_line import-no-record-env "SMDPLAN_NO_RECORD"
run import-later 0 "$bin" exec $opts --db "$db" --import "$tmp/norec"

# ---- a RESULT.json the run cannot have written: refused, nothing recorded
# (a value no RESULT.json may hold is named by its reader, exec_result_parse;
# one the run itself could not have is named by the checks against the run) ----
before=$(runs_in "$db")
bad() { # name, sed expression, text of the one line
  copy "$1" "$2"
  run "$1" 2 "$bin" exec $opts --db "$db" --import "$tmp/$1"
  one_line "$1" "$3"
  [ ! -e "$tmp/$1/RECORDED" ] || { echo "FAIL $1: RECORDED written"; fail=1; }
}
bad status 's/("status":[[:space:]]*)"ok"/\1"weird"/' 'status "weird": allowed are ok, failed'
bad tokens 's/("tokens_per_step":[[:space:]]*)[0-9.e+]+/\11e300/' 'tokens_per_step: must be a number in'
bad time 's/("time_s":[[:space:]]*)[0-9.e+-]+/\1-1/' 'steps\[0\].time_s: must be a number in 0'
bad lr 's/("lr":[[:space:]]*)[0-9.e+-]+/\10.5/' 'steps\[0\].lr 0.5: allowed 0 to the run.s peak'
bad ranks 's/("ranks":[[:space:]]*)2/\13/' 'ranks 3: the run has 2'
bad memory 's/("peak_memory_bytes":[[:space:]]*)[0-9.e+]+/\11e300/' 'peak_memory_bytes: must be a number in'
bad flops 's/("model_flops_per_step":[[:space:]]*)[0-9.e+]+/\1-5/' 'model_flops_per_step: must be a number in 0'
[ "$(runs_in "$db")" -eq "$before" ] || { echo "FAIL bad results: recorded"; fail=1; }

# ---- a launched run whose RESULT.json is not the run's: failed, with why ----
mkdir "$tmp/bin"
cat >"$tmp/bin/mpirun" <<'STAND_IN'
#!/bin/sh
# stands in for mpirun: writes the run's RESULT.json with a status the
# contract does not have (its path is the last argument)
for a in "$@"; do last=$a; done
sed -E 's/("status":[[:space:]]*)"ok"/\1"weird"/' "$STAND_IN_RESULT" >"$last"
STAND_IN
chmod +x "$tmp/bin/mpirun"
STAND_IN_RESULT="$tmp/base/RESULT.json" PATH="$tmp/bin:$PATH" \
  run launched-bad 1 "$bin" exec $opts --db "$db" --json --run-dir "$tmp/launched"
grep -q '"status":[[:space:]]*"failed"' "$tmp/out" &&
  grep -q 'status \\"weird\\": allowed are ok, failed' "$tmp/out" ||
  { echo "FAIL launched-bad: not recorded as failed with the check's message"; cat "$tmp/out"; fail=1; }

# ---- three imports of one directory at the same time: recorded once ----
cdb="$tmp/c.db"
copy race ""
for k in 1 2 3; do
  "$bin" exec $opts --db "$cdb" --import "$tmp/race" >"$tmp/race$k.out" 2>"$tmp/race$k.err" &
done
ok=0
for k in 1 2 3; do
  wait -n; rc=$?
  [ "$rc" -eq 0 ] && ok=$((ok + 1))
done
[ "$ok" -eq 1 ] || { echo "FAIL race: $ok imports succeeded, want 1"; cat "$tmp"/race*.err; fail=1; }
[ "$(runs_in "$cdb")" -eq 1 ] || { echo "FAIL race: $(runs_in "$cdb") runs recorded, want 1"; fail=1; }
grep -q "^run 1$" "$tmp/race/RECORDED" || { echo "FAIL race: RECORDED"; cat "$tmp/race/RECORDED"; fail=1; }
grep -qh "already recorded\|another import is recording it" "$tmp"/race*.err ||
  { echo "FAIL race: the refused imports gave no reason"; cat "$tmp"/race*.err; fail=1; }
[ "$ok" -eq 1 ] && echo "ok   race"
exit $fail
