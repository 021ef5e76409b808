#!/usr/bin/env bash
# test_cli_calibrate_runs.sh: smdplan calibrate --runs on this host's CPU.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# This host measured (smdplan bench --quick: its catalog entry), three
# one-rank runs of different shapes recorded with their prediction, one
# without (no catalog entry): calibrate --runs fits the smdplan framework on
# the host's chip to the three (one source per shape, each held out), says
# why the fourth is left out, writes an override that holds that one
# efficiencies entry and nothing else, records the calibration, and a run
# predicted with the override gets exactly the fitted prediction the table
# shows. The same command fits a GPU's runs (tests/bench/gpu_session.sh).
# Skips (77) only when the rank program is not built.
. "$(dirname "$0")/lib.sh"
need_built smdplan-rank
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
db="$tmp/runs.db"
grep_syntax=E

# ---- nothing to fit: one line, exit 2 ----
run no-db 2 "$bin" calibrate --runs --db "$tmp/none.db"; one_line no-db "none.db"
run file 2 "$bin" calibrate --runs runs.csv --db "$db"; one_line file "no file is read"
run framework 2 "$bin" calibrate --runs --framework nope --db "$db"; one_line framework "allowed are"

# ---- this host's entry, and runs recorded with their prediction ----
run bench 0 "$bin" bench --quick --write-catalog host.json --db "$db"
entry=$(sed -n 's/^entry \(host-[^ ]*\) (device \([^)]*\)).*/\1 \2/p' "$tmp/out")
inst=${entry% *}
chip=${entry#* }
if [ -z "$inst" ] || [ -z "$chip" ]; then echo "FAIL bench: no entry line"; cat "$tmp/out"; exit 1; fi
run empty 2 "$bin" calibrate --runs --catalog host.json --db "$db"
one_line empty "none of the 0 executed runs"
shapes=("--layers 2 --hidden 128 --heads 4 --seq 64 --vocab 256"
        "--layers 3 --hidden 192 --heads 4 --seq 64 --vocab 512"
        "--layers 2 --hidden 256 --heads 4 --seq 128 --vocab 256")
shape() { read -ra sh <<<"${shapes[$1]}"; } # the flags of shape $1, in sh
for i in 0 1 2; do
  shape "$i"
  run "exec-$i" 0 "$bin" exec --catalog host.json "${sh[@]}" --steps 5 --db "$db" --json
  has "exec-$i" "$tmp/out" '"predicted_step_s":[[:space:]]*[0-9]'
done
first=$(sed -n 's/^[[:space:]]*"run_id":[[:space:]]*\([0-9]*\).*/\1/p' "$tmp/out")
# a run of a host with no catalog entry: recorded, not predicted, left out
shape 0
run exec-bare 0 "$bin" exec --host no-entry "${sh[@]}" --steps 3 --db "$db"
bare=$(sed -n 's/^run \([0-9]*\): ok$/\1/p' "$tmp/out")

# ---- the fit, with each shape held out ----
run fit 0 "$bin" calibrate --runs --catalog host.json --write loso.json --db "$db"
cp "$tmp/out" "$tmp/fit.out"
has fit "$tmp/fit.out" "the executed runs in $db, 3 rows, 3 with a compared time fitted, 3 sources"
# fitted, on a bound of its range, or left undetermined by three runs this
# far apart (its standard error over half its range: the chip's value kept),
# each said so: which one depends on how busy this host was between its
# bench and its runs, not on the pipeline
# (any of the efficiencies: the entry written holds whichever were fitted)
fitted_any=0
if grep -qE "(gemm_eff_max|hbm_eff|flash_eff|fp8_gemm_eff|gemm_dim_half|alloc_frac) +[0-9.]+ +[0-9.]+ +[0-9.]+ +(fitted|ON A BOUND)" \
    "$tmp/fit.out"; then
  fitted_any=1
else
  has fit "$tmp/fit.out" "^smdplan +$chip .*gemm_eff_max .*kept: undetermined by these rows"
  echo "     the runs leave the efficiencies undetermined on this host now: nothing fitted"
fi
# held out, a shape leaves two: too few sources for a fit of their own, so
# the chip's own values predict it
has fit "$tmp/fit.out" "gpt L3 H192 A4 S64 V512 +1 +smdplan +$chip .*% +[0-9.]+% +$chip chip's own values \(fewer than 3 other smdplan sources\)"
has fit "$tmp/fit.out" "held out: [0-9.]+%"
has fit "$tmp/fit.out" "1 executed run left out:"
has fit "$tmp/fit.out" "run $bare: not predicted when it ran"
has fit "$tmp/fit.out" "wrote loso.json"
# the mean error over sources does not grow in a fit that ended inside its
# ranges (one on a bound is calibrate's own failure, said above: a bench
# written while this shared host was busy can leave the runs far off the
# entry, and the fit's least squares then need not lower the mean |error|)
read -r before after < <(sed -n 's/.*mean |error| over sources \([0-9.]*\)% -> \([0-9.]*\)%.*/\1 \2/p' \
  "$tmp/fit.out" | head -1)
if grep -q "ON A BOUND" "$tmp/fit.out"; then
  echo "     fit on a bound (mean |error| $before% -> $after%): not compared"
else
  awk -v b="$before" -v a="$after" 'BEGIN { exit !(a != "" && a + 0 <= b + 0.05) }' ||
    { echo "FAIL fit: mean |error| $before% -> $after%"; fail=1; }
fi
# a fit that predicts the shapes held out worse than the chip's own values
# is rejected and written as nothing (timings of tiny steps on a shared
# host decide which; both are checked for what they must be)
if grep -q "REJECTED" "$tmp/fit.out" || [ "$fitted_any" -eq 0 ]; then
  has loso loso.json '"efficiencies":[[:space:]]*\[\]'
else
  has loso loso.json "\"name\":[[:space:]]*\"smdplan@$chip\""
fi
has loso loso.json '"gpus":[[:space:]]*\[\]'

# ---- the fit kept (no held-out test): the override ----
run fit-kept 0 "$bin" calibrate --runs --no-loso --catalog host.json --write fitted.json --db "$db"
cp "$tmp/out" "$tmp/fit.out"
has override fitted.json '"gpus":[[:space:]]*\[\]'
if [ "$fitted_any" -eq 1 ]; then
  has fit-kept "$tmp/fit.out" " +[0-9.]+ +[0-9.]+ +[0-9.]+ +(fitted|ON A BOUND)"
  # one efficiencies entry, smdplan on the host's chip; no GPU changed
  has override fitted.json "\"name\":[[:space:]]*\"smdplan@$chip\""
  has override fitted.json '"framework":[[:space:]]*"smdplan"'
  [ "$(grep -c '"framework"' fitted.json)" -eq 1 ] || { echo "FAIL override: not one entry"; fail=1; }
else
  has override fitted.json '"efficiencies":[[:space:]]*\[\]'
fi
run history 0 "$bin" history --kind calibration --db "$db"
has history "$tmp/out" "calibrate runs.db: 3 rows from 3 sources"

# ---- the override in force: the last shape predicted as the table says ----
fitted=$(awk -v id="$first" '$1 == id { print $(NF - 2) }' "$tmp/fit.out")
shape 2
run exec-fitted 0 "$bin" exec --catalog host.json --catalog fitted.json "${sh[@]}" --steps 3 \
  --db "$db" --json
pred=$(sed -n 's/^[[:space:]]*"predicted_step_s":[[:space:]]*\([0-9.e+-]*\).*/\1/p' "$tmp/out")
if [ -z "$fitted" ] || [ -z "$pred" ] || [ "$(printf '%.4f' "$pred")" != "$fitted" ]; then
  echo "FAIL exec-fitted: predicted $pred with the override, the fit's table says $fitted"; fail=1
fi

[ "$fail" -eq 0 ] && echo "all passed"
exit "$fail"
