#!/usr/bin/env bash
# test_cli_overwrite.sh: one rule for every output file (common/outfile.h).
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# For simulate --trace, report --out, calibrate --write, exec --emit slurm
# --out and bench --write-catalog: an existing file is refused without
# --force (exit 2, one line naming it and --force, the file unchanged,
# nothing else written); a symbolic link is refused with or without --force
# (the link and the file it points to unchanged); a file with another hard
# link is refused even with --force; with --force a regular file is
# replaced, keeping its permissions; a new path is written without --force.
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
unset SMDPLAN_DB

same() { # name, file, text it must still hold
  [ "$(cat "$2")" = "$3" ] || { echo "FAIL $1: $2 changed"; fail=1; }
}

# check NAME FLAG-WORDS... -- the command writing "$out" (the path is the
# last word before --): the rule on one output of one command.
check() {
  local name=$1 path=$2
  shift 2
  # an existing file: refused, unchanged
  echo mine >"$path"
  chmod 640 "$path"
  run "$name-exists" 2 "$@"
  one_line "$name-exists" "exists; not replaced (pass --force to replace it)"
  same "$name-exists" "$path" mine
  # a symbolic link: refused even with --force; link and target unchanged
  rm -f "$path" "$tmp/target"
  echo target >"$tmp/target"
  ln -s "$tmp/target" "$path"
  run "$name-link" 2 "$@" --force
  one_line "$name-link" "a symbolic link; not written through"
  [ -L "$path" ] || { echo "FAIL $name-link: the link was replaced"; fail=1; }
  same "$name-link" "$tmp/target" target
  # a file with another hard link: refused even with --force
  rm -f "$path"
  echo shared >"$path"
  ln "$path" "$tmp/hard"
  run "$name-hardlink" 2 "$@" --force
  one_line "$name-hardlink" "hard links"
  same "$name-hardlink" "$tmp/hard" shared
  rm -f "$tmp/hard"
  # --force: replaced, its permissions kept
  chmod 640 "$path"
  run "$name-force" 0 "$@" --force
  [ "$(cat "$path")" != shared ] && [ -s "$path" ] || { echo "FAIL $name-force: not replaced"; fail=1; }
  [ "$(stat -c %a "$path")" = 640 ] || { echo "FAIL $name-force: permissions $(stat -c %a "$path")"; fail=1; }
  # a new path: written without --force
  rm -f "$path"
  run "$name-new" 0 "$@"
  [ -s "$path" ] || { echo "FAIL $name-new: nothing written"; fail=1; }
  ls -a "$(dirname "$path")" | grep -q '^\..*\.[A-Za-z0-9]\{6\}$' &&
    { echo "FAIL $name: a temporary was left"; ls -a "$(dirname "$path")"; fail=1; }
}

check trace "$tmp/t.json" "$bin" simulate --params 1.3B --instances 1xp4d --trace "$tmp/t.json"
check calibrate "$tmp/fit.json" "$bin" calibrate "$src/data/reference/calibration_runs.csv" \
  --no-loso --framework megatron --gpu GA100 --write "$tmp/fit.json"
check slurm "$tmp/job.sbatch" "$bin" exec $tiny_model --emit slurm --out "$tmp/job.sbatch"

# report --out DIR: a directory holding a report is refused before anything
# is written; --force replaces its files (never through a link).
db="$tmp/r.db"
SMDPLAN_NO_RECORD= "$bin" --params 1.3B --instances 1xp4d --no-sim --db "$db" >/dev/null ||
  { echo "FAIL report: no plan recorded"; fail=1; }
run report-new 0 "$bin" report --out "$tmp/rep" --no-render --db "$db"
[ -s "$tmp/rep/index.html" ] && [ -s "$tmp/rep/memory.dat" ] || { echo "FAIL report-new: no report"; fail=1; }
echo mine >"$tmp/rep/memory.dat"
cp "$tmp/rep/index.html" "$tmp/index.keep"
run report-exists 2 "$bin" report --out "$tmp/rep" --no-render --db "$db"
one_line report-exists "exists; not replaced (pass --force to replace it)"
same report-exists "$tmp/rep/memory.dat" mine
cmp -s "$tmp/rep/index.html" "$tmp/index.keep" || { echo "FAIL report-exists: index.html changed"; fail=1; }
rm "$tmp/rep/grid.dat"
echo target >"$tmp/target"
ln -s "$tmp/target" "$tmp/rep/grid.dat"
run report-link 2 "$bin" report --out "$tmp/rep" --no-render --db "$db" --force
one_line report-link "a symbolic link; not written through"
same report-link "$tmp/target" target
same report-link "$tmp/rep/memory.dat" mine
rm "$tmp/rep/grid.dat"
run report-force 0 "$bin" report --out "$tmp/rep" --no-render --db "$db" --force
grep -q "^# memory.dat" "$tmp/rep/memory.dat" || { echo "FAIL report-force: memory.dat not replaced"; fail=1; }

# bench --write-catalog: refused before measuring (the bench's own test
# covers the write)
echo mine >"$tmp/host.json"
run bench-exists 2 "$bin" bench --quick --write-catalog "$tmp/host.json"
one_line bench-exists "exists; not replaced (pass --force to replace it)"
same bench-exists "$tmp/host.json" mine
rm "$tmp/host.json"
ln -s "$tmp/target" "$tmp/host.json"
run bench-link 2 "$bin" bench --quick --write-catalog "$tmp/host.json" --force
one_line bench-link "a symbolic link; not written through"
same bench-link "$tmp/target" target
exit $fail
