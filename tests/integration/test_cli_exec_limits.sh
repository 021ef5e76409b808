#!/usr/bin/env bash
# test_cli_exec_limits.sh: what smdplan exec checks and sets before it
# launches, so that a run can neither exhaust the host nor hang.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# A model whose ranks need more memory than the host has available is
# refused at once with both numbers (exit 2, one line), before a run
# directory or a record is made (the command runs under a 4 GiB address
# space limit, so that a build without the check fails here rather than
# exhaust the machine). A FIFO, a directory or a hostfile with a slots
# value that is not a count is refused as --hostfile (exit 2, one line, at
# once: a FIFO used to block mpirun forever). Without --timeout a run has a
# default limit (the floor for a tiny model), which --timeout changes and
# --timeout 0 removes; a stopped mpirun is ended at the limit and recorded as
# a timeout. Skips (77) only when the rank program is not built.
. "$(dirname "$0")/lib.sh"
need_built smdplan-rank
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
db="$tmp/l.db"
tiny="$tiny_model --steps 3"

quick() { # name, seconds it took, limit
  [ "$2" -le "$3" ] || { echo "FAIL $1: took $2 s (limit $3)"; fail=1; }
}

# ---- memory: 100000 layers of sequence 2048 need terabytes ----
# (AddressSanitizer reserves terabytes of address space for its shadow: a
# sanitized build runs without the cap)
cap='ulimit -v 4194304;'
grep -q __asan_init "$bin" && cap=''
start=$SECONDS
run memory 2 bash -c "$cap"' exec timeout 60 "$@"' - \
  "$bin" exec --layers 100000 --hidden 64 --heads 1 --steps 3 --db "$db" --run-dir "$tmp/big"
quick memory $((SECONDS - start)) 10
one_line memory "memory: the layout needs .* per rank x 1 rank on this host = .*, and the host has .* available"
[ ! -e "$tmp/big" ] && [ ! -e "$db" ] || { echo "FAIL memory: a run directory or a record was made"; fail=1; }
# two ranks on this host need twice one rank's
run memory-ranks 2 bash -c "$cap"' exec timeout 60 "$@"' - \
  "$bin" exec --layers 100000 --hidden 64 --heads 1 --steps 3 --dp 2 --no-record
one_line memory-ranks "per rank x 2 ranks on this host"

# ---- --hostfile: a regular file, read without blocking ----
mkfifo "$tmp/fifo"
start=$SECONDS
run hostfile-fifo 2 timeout 20 "$bin" exec $tiny --no-record --hostfile "$tmp/fifo"
quick hostfile-fifo $((SECONDS - start)) 10
one_line hostfile-fifo "--hostfile $tmp/fifo: a FIFO, not a regular file"
run hostfile-fifo-dry 2 timeout 20 "$bin" exec $tiny --no-record --hostfile "$tmp/fifo" --dry-run
one_line hostfile-fifo-dry "a FIFO, not a regular file"
run hostfile-dir 2 "$bin" exec $tiny --no-record --hostfile "$tmp" --dry-run
one_line hostfile-dir "a directory, not a regular file"
printf 'node1 slots=4\nnode2 slots=lots # more\n' >"$tmp/hosts"
run hostfile-slots 2 "$bin" exec $tiny --no-record --hostfile "$tmp/hosts" --dry-run
one_line hostfile-slots "line 2: slots=lots: allowed a count from 0"
printf 'localhost slots=2 # this host\n' >"$tmp/hosts"
run hostfile-ok 0 "$bin" exec $tiny --no-record --hostfile "$tmp/hosts" --dry-run
has hostfile-ok "$tmp/out" "--hostfile $tmp/hosts"

# ---- time: a default limit, --timeout to change it, 0 for none ----
run timeout-default 0 "$bin" exec $tiny --no-record --json --run-dir "$tmp/r1"
has timeout-default "$tmp/out" '"timeout_s":[[:space:]]*600'
run timeout-text 0 "$bin" exec $tiny --no-record --run-dir "$tmp/r2"
has timeout-text "$tmp/out" "limit:   600 s (the default: 10 x the predicted"
run timeout-given 0 "$bin" exec $tiny --no-record --json --timeout 90 --run-dir "$tmp/r3"
has timeout-given "$tmp/out" '"timeout_s":[[:space:]]*90'
run timeout-none 0 "$bin" exec $tiny --no-record --json --timeout 0 --run-dir "$tmp/r4"
has timeout-none "$tmp/out" '"timeout_s":[[:space:]]*null'
run timeout-bad 2 "$bin" exec $tiny --no-record --timeout -1
one_line timeout-bad "--timeout '-1': allowed a number from 0 to"

# a stopped mpirun: ended at the limit, recorded as a timeout
mkdir "$tmp/bin"
printf '#!/bin/sh\nkill -STOP $$\n' >"$tmp/bin/mpirun"
chmod +x "$tmp/bin/mpirun"
start=$SECONDS
PATH="$tmp/bin:$PATH" run stopped 1 timeout 60 "$bin" exec $tiny --db "$db" --json --timeout 2 \
  --run-dir "$tmp/r5"
quick stopped $((SECONDS - start)) 30
has stopped "$tmp/out" '"status":[[:space:]]*"timeout"'
has stopped "$tmp/out" "passed its time limit of 2 s"
exit $fail
