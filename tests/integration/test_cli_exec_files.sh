#!/usr/bin/env bash
# test_cli_exec_files.sh: the files smdplan exec writes are whole, or it
# says why there are none.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# The emitted slurm script is never cut: options longer than the old 8 KiB
# argument buffer (three catalog paths of 3 KiB with spaces) are all in its
# --import line, and bash reads the script. A CONFIG.json that cannot be
# written (a file size limit) is one line naming it and saying nothing was
# launched or recorded (exit 1), and the run directory made for it is gone.
# The default run directory, smdplan-runs/ in the working directory, is
# ignored by git in a checkout, as smdplan.db is.
. "$(dirname "$0")/lib.sh"
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
tiny="$tiny_model --steps 3"

# ---- the slurm script: never cut ----
d="$tmp/long"
for i in $(seq 1 14); do d="$d/dir $i $(printf 'x%.0s' $(seq 1 190))"; done
mkdir -p "$d"
cp "$fix/catalog_host.json" "$d/cat alog.json"
c="$d/cat alog.json"
run slurm-long 0 "$bin" exec $tiny --catalog "$c" --catalog "$c" --catalog "$c" --emit slurm \
  --out "$tmp/job.sbatch"
bash -n "$tmp/job.sbatch" || { echo "FAIL slurm-long: bash cannot read the script"; fail=1; }
[ "$(grep '\--import' "$tmp/job.sbatch" | grep -o 'cat alog.json' | wc -l)" -eq 3 ] ||
  { echo "FAIL slurm-long: the --import line lost a catalog"; fail=1; }

# ---- CONFIG.json that cannot be written ----
run config-write 1 bash -c 'ulimit -f 1; trap "" XFSZ; exec "$@"' - \
  "$bin" exec $tiny --run-dir "$tmp/r1" --db "$tmp/x.db"
one_line config-write "r1/CONFIG.json: write failed: File too large; nothing launched or recorded"
[ ! -e "$tmp/r1" ] || { echo "FAIL config-write: the run directory was left"; fail=1; }
[ ! -e "$tmp/x.db" ] || { echo "FAIL config-write: recorded"; fail=1; }

# ---- the default run directory in a checkout ----
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$src" check-ignore -q smdplan-runs/20250101T000000Z-1/CONFIG.json ||
    { echo "FAIL gitignore: smdplan-runs/ is not ignored in a checkout"; fail=1; }
  echo "ok   gitignore"
else
  echo "skip gitignore: $src is not a git checkout"
fi
run default-dir 0 "$bin" exec $tiny --dry-run
grep -q -- "--config smdplan-runs/" "$tmp/out" || { echo "FAIL default-dir: not under smdplan-runs/"; fail=1; }
exit $fail
