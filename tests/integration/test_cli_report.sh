#!/usr/bin/env bash
# test_cli_report.sh: smdplan report from a records database.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# Records a search, searches with TP and PP fixed, a comparison, a simulation
# with its trace and a validation, then checks the report writes every plot's
# .dat and .gp (and, with gnuplot, .png and .svg) and an index.html that
# names every image, with a memory bar per pipeline stage (the worst stage
# only for stages recorded without their terms); no database gives one line
# and exit 2.
. "$(dirname "$0")/lib.sh"
db="$tmp/r.db"

"$bin" --params 13B --instances 4xp4de --db "$db" >/dev/null || { echo "FAIL plan"; fail=1; }
for tp in 2 4 8; do
  "$bin" --params 13B --instances 4xp4de --tp $tp --pp 2 --no-sim --top 1 --db "$db" >/dev/null
done
"$bin" --params 13B --max-instances 4 --db "$db" >/dev/null || { echo "FAIL compare"; fail=1; }
"$bin" simulate --params 13B --instances 4xp4de --tp 8 --pp 2 --global-batch 64 \
  --trace "$tmp/t.json" --db "$db" >/dev/null || { echo "FAIL simulate"; fail=1; }
"$bin" validate "$src/data/reference/calibration_runs.csv" --sim --db "$db" >/dev/null \
  || { echo "FAIL validate"; fail=1; }

"$bin" report --db "$db" --out "$tmp/rep" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL report"; cat "$tmp/err"; fail=1; }
for plot in memory grid scaling timeline accuracy accuracy_sim; do
  for ext in dat gp; do
    [ -s "$tmp/rep/$plot.$ext" ] || { echo "FAIL report: no $plot.$ext"; fail=1; }
  done
  grep -q "$plot.png" "$tmp/rep/index.html" || { echo "FAIL report: index.html lacks $plot.png"; fail=1; }
  if command -v gnuplot >/dev/null 2>&1; then
    [ -s "$tmp/rep/$plot.png" ] && [ -s "$tmp/rep/$plot.svg" ] || { echo "FAIL report: $plot not rendered"; fail=1; }
  fi
done
[ "$fail" -eq 0 ] && echo "ok   report"

# The newest search (TP 8, PP 2, one plan): one bar per stage, by term.
grep -q '"#1 s0"$' "$tmp/rep/memory.dat" && grep -q '"#1 s1"$' "$tmp/rep/memory.dat" \
  || { echo "FAIL report: memory.dat lacks a bar per stage"; fail=1; }
[ "$(grep -vc '^#' "$tmp/rep/memory.dat")" -eq 2 ] || { echo "FAIL report: memory.dat rows"; fail=1; }
grep -q '<td>#1 s1</td>' "$tmp/rep/index.html" || { echo "FAIL report: no per-stage table row"; fail=1; }

# Stages recorded without their terms (as under schema version 1): the
# report falls back to the worst stage's breakdown and says so.
if command -v sqlite3 >/dev/null 2>&1; then
  cp "$db" "$tmp/old.db"
  sqlite3 "$tmp/old.db" "UPDATE prediction_stages SET weights_bytes = NULL, grads_bytes = NULL,
    optimizer_bytes = NULL, activations_bytes = NULL, recompute_bytes = NULL, logits_bytes = NULL,
    comm_buffers_bytes = NULL, context_bytes = NULL, allocator_bytes = NULL" \
    || { echo "FAIL sqlite3 update"; fail=1; }
  "$bin" report --db "$tmp/old.db" --out "$tmp/rep4" --no-render >/dev/null || { echo "FAIL report (old rows)"; fail=1; }
  [ "$(grep -vc '^#' "$tmp/rep4/memory.dat")" -eq 1 ] || { echo "FAIL report: old rows not worst stage only"; fail=1; }
  grep -q 'show their worst stage only' "$tmp/rep4/index.html" || { echo "FAIL report: no note on old rows"; fail=1; }
  grep -q 'not known by term' "$tmp/rep4/index.html" || { echo "FAIL report: no caption on old rows"; fail=1; }
fi

"$bin" report --db "$db" --out "$tmp/rep2" --no-render >/dev/null || { echo "FAIL report --no-render"; fail=1; }
[ -e "$tmp/rep2/memory.png" ] && { echo "FAIL --no-render rendered"; fail=1; }
[ -s "$tmp/rep2/memory.gp" ] || { echo "FAIL --no-render wrote no script"; fail=1; }

"$bin" report --db "$tmp/none.db" --out "$tmp/rep3" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL report without a database: exit $rc"; cat "$tmp/err"; fail=1; }
[ -e "$tmp/none.db" ] && { echo "FAIL report created a database"; fail=1; }
exit $fail
