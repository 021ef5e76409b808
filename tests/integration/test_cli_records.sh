#!/usr/bin/env bash
# test_cli_records.sh: what smdplan records, and reading it back.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# plan, simulate, validate and calibrate each leave a record that history
# lists (--json: id, kind, created_at, summary) and show / compare read back;
# --no-record and $SMDPLAN_NO_RECORD write nothing (no file); a database that
# cannot be written (read-only, full disk, missing directory, corrupt, newer
# schema) costs one warning line and never the answer or the exit code; bad
# ids and kinds, corrupt and newer files make history/show/compare exit 2
# with one line, and no file is changed by them. A model name with a newline
# and a tab stays on its record's line in history, show and compare.
. "$(dirname "$0")/lib.sh"
unset SMDPLAN_DB SMDPLAN_NO_RECORD
csv="$src/data/reference/calibration_runs.csv"
db="$tmp/x.db"

no_err() { [ -s "$tmp/err" ] && { echo "FAIL $1: stderr:"; cat "$tmp/err"; fail=1; }; return 0; }
kinds() { # the kinds listed by history --json, one per line
  "$bin" history --db "$1" --json --limit 1000 | sed -n 's/.*"kind":[[:space:]]*"\([a-z]*\)".*/\1/p'
}

plan="--params 30B --instances 16xp4d"
layout="$plan --tp 8 --pp 2 --micro-batch 4 --schedule interleaved --recompute full --sharding optimizer"

# ---- every command records what it computed ----
run plan 0 "$bin" $plan --db "$db"
no_err plan
has plan "$tmp/out" "Why #1"
run history-json 0 "$bin" history --db "$db" --json
for key in '"id"' '"kind"' '"created_at"' '"summary"'; do has history-json "$tmp/out" "$key"; done
[ "$(kinds "$db")" = "plan" ] || { echo "FAIL history: want one plan record"; fail=1; }

run simulate 0 "$bin" simulate $layout --db "$db" --trace "$tmp/t.json"
run validate 0 "$bin" validate "$csv" --sim --db "$db"
run calibrate 0 "$bin" calibrate "$csv" --db "$db"
run plan-compare-mode 0 "$bin" --params 13B --max-instances 4 --db "$db"
got=$(kinds "$db" | tr '\n' ' ')
[ "$got" = "plan calibration run simulation plan " ] || { echo "FAIL kinds newest first: '$got'"; fail=1; }

# a search where nothing fits keeps its closest layout, and show says so
ndb="$tmp/nofit.db"
run plan-nothing-fits 3 "$bin" --params 1T --instances 1xp4d --db "$ndb"
run show-nothing-fits 0 "$bin" show 1 --db "$ndb"
has show-nothing-fits "$tmp/out" "closest layout (out of memory): tp "

run history 0 "$bin" history --db "$db"
has history "$tmp/out" "calibration"
run history-kind 0 "$bin" history --db "$db" --kind simulation --csv
[ "$(wc -l <"$tmp/out")" -eq 2 ] || { echo "FAIL history --kind --csv: want header + 1 row"; cat "$tmp/out"; fail=1; }
has history-kind "$tmp/out" "^id,kind,created_at,summary,command_line"
run history-limit 0 "$bin" history --db "$db" --limit 2 --json
[ "$(grep -c '"kind"' "$tmp/out")" -eq 2 ] || { echo "FAIL history --limit 2"; fail=1; }

# ids by kind
id_of() { "$bin" history --db "$db" --kind "$1" --csv --limit 1 | sed -n '2s/,.*//p'; }
pid=$(id_of plan); sid=$(id_of simulation); rid=$(id_of run); cid=$(id_of calibration)
firstplan=$("$bin" history --db "$db" --kind plan --csv | tail -1 | sed 's/,.*//')

run show-plan 0 "$bin" show "$firstplan" --db "$db"
for t in "memory per GPU" "weights" "optimizer" "activations" "bubble" "plan 1:" "command:" "p4d.24xlarge" "smp@v1 bf16"; do
  has show-plan "$tmp/out" "$t"
done
run show-plan-json 0 "$bin" show "$firstplan" --db "$db" --json
for t in '"plans"' '"prediction"' '"weights_bytes"' '"step_s"' '"provenance"' '"library_versions"' '"stages"'; do
  has show-plan-json "$tmp/out" "$t"
done
run show-plan-csv 0 "$bin" show "$firstplan" --db "$db" --csv
has show-plan-csv "$tmp/out" "^role,rank,"
run show-sim 0 "$bin" show "$sid" --db "$db"
for t in "simulated step" "bubble" "in flight" "trace:"; do has show-sim "$tmp/out" "$t"; done
run show-sim-json 0 "$bin" show "$sid" --db "$db" --json
for t in '"simulations"' '"trace"' '"busy_s"' '"peak_inflight"'; do has show-sim-json "$tmp/out" "$t"; done
run show-sim-csv 0 "$bin" show "$sid" --db "$db" --csv
has show-sim-csv "$tmp/out" "^stage,busy_s,bubble_fraction,peak_inflight"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || { echo "FAIL show-sim-csv: want header + 2 stages"; fail=1; }
run show-run 0 "$bin" show "$rid" --db "$db"
has show-run "$tmp/out" "published"
run show-cal 0 "$bin" show "$cid" --db "$db" --csv
has show-cal "$tmp/out" "^framework,silicon,gpu,rows,sources,rejected,name,before,after,std_err"
has show-cal "$tmp/out" "gemm_eff_max"
# each fit (a framework on a chip, or the chip's pool) and each source fitted and held out
run show-cal-text 0 "$bin" show "$cid" --db "$db"
for t in " pool: " "megatron on " "+- " "held out, predicted by"; do has show-cal-text "$tmp/out" "$t"; done
run show-cal-json 0 "$bin" show "$cid" --db "$db" --json
for t in '"calibration_sources"' '"loso_mean_abs_err_pct"' '"std_err"' '"silicon"'; do
  has show-cal-json "$tmp/out" "$t"
done
if command -v python3 >/dev/null 2>&1; then
  "$bin" show "$pid" --db "$db" --json | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["kind"]=="plan" and r["plans"]' \
    || { echo "FAIL show --json: not valid JSON"; fail=1; }
  "$bin" history --db "$db" --json | python3 -c 'import json,sys; r=json.load(sys.stdin); assert all({"id","kind","created_at","summary"} <= set(x) for x in r)' \
    || { echo "FAIL history --json: not a list of records"; fail=1; }
fi

# compare: published runs with prediction and simulation; the simulated layout
run compare 0 "$bin" compare --db "$db"
has compare "$tmp/out" "pred/meas"
run compare-json 0 "$bin" compare --db "$db" --json --limit 500
for t in '"measured_step_s"' '"error_pred_vs_measured_pct"' '"error_sim_vs_measured_pct"' '"error_sim_vs_pred_pct"' '"published"' '"framework"' '"precision"'; do
  has compare-json "$tmp/out" "$t"
done
run compare-record 0 "$bin" compare "$sid" --db "$db" --csv
[ "$(wc -l <"$tmp/out")" -eq 2 ] || { echo "FAIL compare ID: want the simulated layout"; cat "$tmp/out"; fail=1; }
run compare-model 0 "$bin" compare --db "$db" --model "no such model"
has compare-model "$tmp/out" "nothing to compare"

# ---- bad ids and kinds: one line, exit 2 ----
run show-bad-id 2 "$bin" show abc --db "$db"; one_line show-bad-id "not a record id"
run show-missing 2 "$bin" show 99999 --db "$db"; one_line show-missing "no record 99999"
run show-none 2 "$bin" show --db "$db"; one_line show-none "one record id"
run history-bad-kind 2 "$bin" history --kind plans --db "$db"; one_line history-bad-kind "unknown record kind"
run compare-missing 2 "$bin" compare 99999 --db "$db"; one_line compare-missing "no record 99999"
run history-no-db 2 "$bin" history --db "$tmp/nothing.db"; one_line history-no-db "no such database"
[ -e "$tmp/nothing.db" ] && { echo "FAIL history created a file"; fail=1; }

# ---- --no-record and the environment ----
run no-record 0 "$bin" $plan --db "$tmp/none.db" --no-record
[ -e "$tmp/none.db" ] && { echo "FAIL --no-record created the database"; fail=1; }
for c in "simulate $layout" "validate $csv" "calibrate $csv"; do
  run "no-record ${c%% *}" 0 "$bin" $c --db "$tmp/none.db" --no-record
done
[ -e "$tmp/none.db" ] && { echo "FAIL --no-record created the database"; fail=1; }
(cd "$tmp" && SMDPLAN_NO_RECORD=1 "$bin" $plan >/dev/null 2>&1)
[ -e "$tmp/smdplan.db" ] && { echo "FAIL SMDPLAN_NO_RECORD created smdplan.db"; fail=1; }
(cd "$tmp" && "$bin" $plan --no-sim >/dev/null 2>&1)
[ -e "$tmp/smdplan.db" ] || { echo "FAIL default database smdplan.db not created"; fail=1; }
SMDPLAN_DB="$tmp/env.db" "$bin" $plan --no-sim >/dev/null 2>&1
[ "$(kinds "$tmp/env.db")" = "plan" ] || { echo "FAIL SMDPLAN_DB not used"; fail=1; }

# ---- a database that cannot be written never costs the answer ----
# (the search's wall time is the one line that differs between two runs)
"$bin" $plan --no-sim --no-record 2>/dev/null | grep -v '^search:' >"$tmp/want"
same_answer() { grep -v '^search:' "$tmp/out" | cmp -s - "$tmp/want"; }
answer_kept() { # name, expected exit, db path
  run "$1" "$2" "$bin" $plan --no-sim --db "$3"
  same_answer || { echo "FAIL $1: the answer changed"; fail=1; }
  one_line "$1" "^smdplan: warning: not recorded: "
}
answer_kept missing-dir 0 "$tmp/no/such/dir/x.db"
[ -w /dev/full ] && answer_kept full-disk 0 /dev/full
run nothing-fits 3 "$bin" --params 1T --instances 1xp4d --no-sim --db "$tmp/no/dir/x.db"
one_line nothing-fits "warning: not recorded"

cp "$db" "$tmp/ro.db"
chmod 0444 "$tmp/ro.db"
chmod 0755 "$tmp"
as_user() { # run as an unprivileged user (root writes read-only files)
  if [ "$(id -u)" -ne 0 ]; then "$@"
  elif command -v setpriv >/dev/null 2>&1; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
  else return 77; fi
}
cp "$tmp/ro.db" "$tmp/ro.before"
as_user "$bin" $plan --no-sim --db "$tmp/ro.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 77 ]; then
  [ $rc -eq 0 ] || { echo "FAIL read-only: exit $rc"; fail=1; }
  same_answer || { echo "FAIL read-only: the answer changed"; fail=1; }
  one_line read-only "warning: not recorded: .*read-only"
  as_user "$bin" history --db "$tmp/ro.db" >"$tmp/out" 2>"$tmp/err" \
    || { echo "FAIL history of a read-only file"; cat "$tmp/err"; fail=1; }
  cmp -s "$tmp/ro.db" "$tmp/ro.before" || { echo "FAIL read-only file changed"; fail=1; }
  echo "ok   read-only"
fi

# corrupt: a page in the middle overwritten; newer: user_version 99
cp "$db" "$tmp/bad.db"
chmod 0644 "$tmp/bad.db"
pages=$(( $(wc -c <"$tmp/bad.db") / 4096 ))
dd if=/dev/zero bs=4096 count=1 2>/dev/null | tr '\0' '\245' | dd of="$tmp/bad.db" bs=4096 seek=$((pages / 2)) conv=notrunc 2>/dev/null
cp "$db" "$tmp/new.db"
chmod 0644 "$tmp/new.db"
printf '\000\000\000\143' | dd of="$tmp/new.db" bs=1 seek=60 conv=notrunc 2>/dev/null
printf 'this is not a database\n%.0s' $(seq 200) >"$tmp/junk.db"
for f in bad new junk; do
  cp "$tmp/$f.db" "$tmp/$f.before"
  answer_kept "$f-plan" 0 "$tmp/$f.db"
  run "$f-history" 2 "$bin" history --db "$tmp/$f.db"; one_line "$f-history" "$f.db"
  case $f in
    bad) has bad-message "$tmp/err" "corrupt" ;;
    new) has new-message "$tmp/err" "newer smdplan" ;;
    junk) has junk-message "$tmp/err" "not a smdplan database" ;;
  esac
  run "$f-show" 2 "$bin" show 1 --db "$tmp/$f.db"; one_line "$f-show" "$f.db"
  run "$f-compare" 2 "$bin" compare --db "$tmp/$f.db"; one_line "$f-compare" "$f.db"
  cmp -s "$tmp/$f.db" "$tmp/$f.before" || { echo "FAIL $f: the file changed"; fail=1; }
done

# ---- a name with a newline and a tab: one record, one line ----
ndb="$tmp/names.db"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['_name_or_path']='evil\nname\ttab'; json.dump(d, open(sys.argv[2], 'w'))" \
  "$3/hf_gpt2.json" "$tmp/nl.json" || { echo "FAIL names: no config"; fail=1; }
"$bin" --model "$tmp/nl.json" --instances 1xp4d --no-sim --db "$ndb" >/dev/null 2>&1 ||
  { echo "FAIL names: not planned"; fail=1; }
run names-history 0 "$bin" history --db "$ndb"
[ "$(wc -l <"$tmp/out")" -eq 2 ] || { echo "FAIL names-history: the record is not one line:"; cat "$tmp/out"; fail=1; }
has names-history "$tmp/out" 'evil\\u000aname\\u0009tab'
run names-show 0 "$bin" show 1 --db "$ndb"
grep -q '^name' "$tmp/out" && { echo "FAIL names-show: a line starts inside the name:"; cat "$tmp/out"; fail=1; }
has names-show "$tmp/out" '^summary:  evil\\u000aname'
run names-compare 0 "$bin" compare --db "$ndb"
grep -q '^name' "$tmp/out" && { echo "FAIL names-compare: a line starts inside the name"; fail=1; }

exit $fail
