#!/usr/bin/env bash
# test_cli_hostile.sh: what a new or a hostile user trips over.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# Output files are written whole or not at all and nothing the program did
# not create is removed; bad paths are bad input (exit 2) with the system's
# reason; devices, FIFOs and descriptors are read and written as streams;
# text from data files cannot break JSON or reach the terminal raw.
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
run_timeout=30 # nothing may hang

sim="simulate --params 1.3B --instances 1xp4d"

# ---- output files: a temporary beside the path, renamed over it --------------
echo keep >"$tmp/old.json"
run trace-keeps 2 "$bin" $sim --trace "$tmp/old.json"
one_line trace-keeps "old.json: exists; not replaced (pass --force"
[ "$(cat "$tmp/old.json")" = keep ] || { echo "FAIL trace-keeps: the file changed"; fail=1; }
run trace-replaces 0 "$bin" $sim --trace "$tmp/old.json" --force
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/old.json" \
  || { echo "FAIL trace-replaces: not a complete trace"; fail=1; }
ls -a "$tmp" | grep -q '^\.old\.json\.' && { echo "FAIL trace-replaces: a temporary was left"; fail=1; }
# A FIFO nobody reads: refused at once (it used to block forever), still there.
mkfifo "$tmp/fifo"
run trace-fifo 2 "$bin" $sim --trace "$tmp/fifo"
one_line trace-fifo "no process is reading"
[ -p "$tmp/fifo" ] || { echo "FAIL trace-fifo: the FIFO is gone"; fail=1; }
# A device whose writes fail: an error, and the device is never removed (the
# old code removed whatever was at the path after a failed write). A private
# node of /dev/full's device when we may make one.
if mknod "$tmp/full" c 1 7 2>/dev/null; then
  run trace-device 1 "$bin" $sim --trace "$tmp/full"
  one_line trace-device "No space left on device"
  [ -c "$tmp/full" ] || { echo "FAIL trace-device: the device node was removed"; fail=1; }
else
  echo "skip trace-device: cannot make a device node"
fi
run trace-stdout 0 "$bin" $sim --trace /dev/stdout
grep -q '"traceEvents"' "$tmp/out" || { echo "FAIL trace-stdout: no trace on stdout"; fail=1; }
run trace-dir 2 "$bin" $sim --trace "$tmp";               one_line trace-dir "Is a directory"
run trace-nodir 2 "$bin" $sim --trace "$tmp/no/such.json"; one_line trace-nodir "No such file or directory"

# A model name with a quote, a backslash, a newline and an escape sequence:
# the trace stays JSON with the name intact.
cat >"$tmp/evil.json" <<'EOF'
{"_name_or_path": "evil\"name\\\n\u001b[31mRED\r", "model_type": "gpt2", "n_layer": 4,
 "n_embd": 256, "n_head": 4, "n_positions": 512, "vocab_size": 1000}
EOF
run trace-quote 0 "$bin" simulate --model "$tmp/evil.json" --instances 1xp4d --trace "$tmp/q.json"
python3 - "$tmp/q.json" <<'EOF' || { echo "FAIL trace-quote: the title broke the trace"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["otherData"]["title"].startswith('evil"name\\\n\x1b[31mRED\r on 1 x '), d["otherData"]
assert all(set(e) <= {"ph", "name", "pid", "tid", "ts", "dur", "args"} for e in d["traceEvents"])
EOF

# The same name on the terminal: control characters escaped, never raw
# (an escape sequence, a carriage return or a C1 CSI would drive the terminal).
printf '{"_name_or_path": "x\\u001b[2J\\r\\u009b31m\\u0007", "model_type": "gpt2", "n_layer": 4, "n_embd": 256, "n_head": 4, "n_positions": 512, "vocab_size": 1000}' >"$tmp/ctl.json"
for mode in --explain --json; do
  run "control-chars$mode" 0 "$bin" --model "$tmp/ctl.json" --instances 1xp4d --no-sim $mode
  if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]\|\302[\200-\237]')" "$tmp/out" "$tmp/err"; then
    echo "FAIL control-chars$mode: a control character reached the output raw"; fail=1
  fi
  [ "$mode" = --explain ] && { grep -q 'model:   x\\u001b\[2J\\u000d\\u009b31m\\u0007,' "$tmp/out" \
    || { echo "FAIL control-chars: not shown escaped"; fail=1; }; }
done
python3 -c "import json,sys; n = json.load(open(sys.argv[1]))['model']['name']; assert n == 'x\x1b[2J\r\x9b31m\x07', repr(n)" "$tmp/out" \
  || { echo "FAIL control-chars--json: the name did not survive --json"; fail=1; }

# ---- report --out ----------------------------------------------------------
db="$tmp/r.db"
SMDPLAN_NO_RECORD= "$bin" --params 1.3B --instances 2xp4d --no-sim --db "$db" >/dev/null 2>&1
touch "$tmp/plainfile"
run report-file 2 "$bin" report --db "$db" --out "$tmp/plainfile" --no-render
one_line report-file "not a directory"
run report-nodir 2 "$bin" report --db "$db" --out /proc/no/such --no-render
one_line report-nodir "No such file or directory"

# ---- calibrate --write -----------------------------------------------------
head -20 "$src/data/reference/calibration_runs.csv" >"$tmp/runs.csv"
cp "$tmp/runs.csv" "$tmp/runs.orig"
run calibrate-same 2 "$bin" calibrate "$tmp/runs.csv" --write "$tmp/runs.csv" --no-loso
one_line calibrate-same "input file"
ln -s runs.csv "$tmp/link.csv"
run calibrate-link 2 "$bin" calibrate "$tmp/runs.csv" --write "$tmp/link.csv" --no-loso
cmp -s "$tmp/runs.csv" "$tmp/runs.orig" || { echo "FAIL calibrate: the input was changed"; fail=1; }
run calibrate-write 0 "$bin" calibrate "$tmp/runs.csv" --write "$tmp/fit.json" --no-loso
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/fit.json" \
  || { echo "FAIL calibrate-write: not JSON"; fail=1; }

# ---- huge batches ------------------------------------------------------------
# 2^32 sequences: inside --global-batch's range (the micro-batch list used to
# overflow an int and fail with a message about something else).
run batch-2e32 0 "$bin" --params 30B --instances 16xp4d --global-batch 4294967296 --no-sim
grep -q "4294967296 sequences per step" "$tmp/out" || { echo "FAIL batch-2e32: no plan"; fail=1; }
# 1e8 sequences: the top plans are simulated in bounded time (109 s and 2.4 GB
# before), the step extrapolated from windows of microbatches, and said so.
start=$(date +%s%N)
run batch-1e8 0 "$bin" --params 30B --instances 16xp4d --global-batch 100000000
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "     batch-1e8: $ms ms (its bound is the two windows played, not the clock)"
grep -q "played out two windows" "$tmp/out" || { echo "FAIL batch-1e8: the extrapolation is not said"; fail=1; }
run batch-1e8-sim 0 "$bin" simulate --params 30B --instances 16xp4d --global-batch 100000000 --json
grep -q '"extrapolated_from_microbatches"' "$tmp/out" || { echo "FAIL batch-1e8-sim: not in the JSON"; fail=1; }

# A deep pipeline of many chunks (256 stages x 2 virtual, 16384 microbatches):
# the windows shrink so the work stays bounded (0.7 s and 220 MB here; 2.6 s and
# 880 MB with windows of 8 microbatches per stage).
start=$(date +%s%N)
run deep-pipeline 0 "$bin" simulate --params 30B --instances 64xp4d --tp 1 --pp 256 --layers 512 \
  --schedule virtual --virtual-stages 2 --global-batch 65536 --framework megatron
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "     deep-pipeline: $ms ms (its bound is the windows below, not the clock)"
grep -q "windows of 512 and 1024" "$tmp/out" || { echo "FAIL deep-pipeline: windows"; grep extrapolated "$tmp/out"; fail=1; }

# ---- inputs: pipes, FIFOs and devices are streams ----------------------------
plan="--instances 1xp4d --no-sim"
cfg="$fix/hf_gpt2.json"
run model-stdin 0 "$bin" --model /dev/stdin $plan <"$cfg"
run model-pipe 0 bash -c "cat '$cfg' | '$bin' --model /dev/stdin $plan"
run model-procsub 0 bash -c "'$bin' --model <(cat '$cfg') $plan"
grep -q "124M parameters" "$tmp/out" || { echo "FAIL model-procsub: not read"; fail=1; }
rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
# the writer comes once the reader has said it waits (at most 10 s), so the
# notice is seen however slowly a loaded host starts the program
(for _ in $(seq 100); do grep -q "waiting for input" "$tmp/err" 2>/dev/null && break; sleep 0.1; done
 cat "$cfg" >"$tmp/fifo") &
run model-fifo 0 "$bin" --model "$tmp/fifo" $plan
grep -q "waiting for input" "$tmp/err" || { echo "FAIL model-fifo: the wait was silent"; fail=1; }
(cat "$src/data/reference/calibration_runs.csv" >"$tmp/fifo") &
run validate-fifo 0 "$bin" validate "$tmp/fifo"
(echo '{}' >"$tmp/fifo") &
run catalog-fifo 0 "$bin" --catalog "$tmp/fifo" --params 1.3B $plan
run model-zero 2 "$bin" --model /dev/zero $plan;   one_line model-zero "more than"
run model-dir 2 "$bin" --model "$tmp" $plan;       one_line model-dir "directory"
run model-missing 2 "$bin" --model "$tmp/none.json" $plan; one_line model-missing "No such file"
long="$tmp$(printf '/%0200d' $(seq 1 24))/config.json"
run model-long 2 "$bin" --model "$long" $plan
one_line model-long "config.json: File name too long"
if [ "$(id -u)" -ne 0 ]; then
  cp "$cfg" "$tmp/locked.json"; chmod 000 "$tmp/locked.json"
  run model-unreadable 2 "$bin" --model "$tmp/locked.json" $plan
  one_line model-unreadable "Permission denied"
fi

# ---- --db: only a regular file (or a new one) -----------------------------------
SMDPLAN_NO_RECORD= run db-dir 0 "$bin" --params 1.3B $plan --db "$tmp"
grep -q "not recorded: .*a directory" "$tmp/err" || { echo "FAIL db-dir: no warning"; fail=1; }
if mknod "$tmp/null" c 1 3 2>/dev/null; then
  SMDPLAN_NO_RECORD= run db-device 0 "$bin" --params 1.3B $plan --db "$tmp/null"
  grep -q "not recorded: .*not a database file (a device)" "$tmp/err" \
    || { echo "FAIL db-device: no warning"; cat "$tmp/err"; fail=1; }
  [ -e "$tmp/null-journal" ] && { echo "FAIL db-device: a journal beside the device"; fail=1; }
fi
run history-check 0 "$bin" history --check --db "$db"
grep -q "ok (every page and index checked)" "$tmp/out" || { echo "FAIL history-check"; fail=1; }
run history-device 2 "$bin" history --db /dev/null
one_line history-device "a device"

exit $fail
