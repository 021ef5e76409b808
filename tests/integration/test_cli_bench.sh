#!/usr/bin/env bash
# test_cli_bench.sh: smdplan bench makes a catalog entry the planner and
# smdplan exec load.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# A quick bench (CPU and transport) writes the entry atomically, records a
# bench record that history and show read back, and the entry plans: the
# smdplan framework in fp32 on this host. An existing file is not replaced
# (exit 2 before measuring), not even bench's own, unless --force; bad flags
# exit 2 with one line. Skips (77) only when the transport's rank program is not built.
. "$(dirname "$0")/lib.sh"
need_built smdplan-bench-rank
unset SMDPLAN_DB SMDPLAN_NO_RECORD
db="$tmp/b.db"

run bad-word 2 "$bin" bench tpu; one_line bad-word "allowed are cpu, comm, gpu"
# bench gpu on a host without a GPU (or a build without CUDA): one line, exit 2
if ! "$bin" --version | grep -q 'GPUs visible to CUDA: [1-9]'; then
  run no-gpu 2 "$bin" bench gpu --no-record; one_line no-gpu "bench gpu: no GPU"
fi
run bad-ranks 2 "$bin" bench comm --ranks 1; one_line bad-ranks "--ranks"
run bad-ops 2 "$bin" bench comm --ops allreduce,bcast; one_line bad-ops "'bcast'"
run bad-threads 2 "$bin" bench --threads-per-rank 0; one_line bad-threads "--threads-per-rank"
echo '{"mine": true}' >"$tmp/mine.json"
run foreign 2 "$bin" bench --quick --write-catalog "$tmp/mine.json" --db "$db"
one_line foreign "mine.json: exists; not replaced (pass --force"
[ "$(cat "$tmp/mine.json")" = '{"mine": true}' ] || { echo "FAIL foreign: the file changed"; fail=1; }
[ ! -e "$db" ] || { echo "FAIL foreign: measured and recorded before refusing"; fail=1; }

run bench 0 "$bin" bench --quick --write-catalog "$tmp/host.json" --db "$db"
has bench "$tmp/out" "busbw"
has bench "$tmp/out" "entry host-"
inst=$(sed -n 's/^entry \(host-[^ ]*\) .*/\1/p' "$tmp/out" | head -1)
has bench "$tmp/host.json" '"_generated_by":'
has bench "$tmp/host.json" '"act_fwd_s":'
# the entry plans on this host (all its device slots), smdplan in fp32
run plan 0 "$bin" --catalog "$tmp/host.json" --instances "1x$inst" --framework smdplan \
  --precision fp32 --layers 4 --hidden 64 --heads 4 --seq 32 --vocab 256 --global-batch 8 --no-record
has plan "$tmp/out" "smdplan executor"
# a second run replaces its own file only with --force; --json has the measurements
run again-no-force 2 "$bin" bench cpu --quick --write-catalog "$tmp/host.json" --db "$db"
one_line again-no-force "host.json: exists; not replaced (pass --force"
run again 0 "$bin" bench cpu --quick --write-catalog "$tmp/host.json" --force --json --db "$db"
has again "$tmp/out" '"elementwise":'
has again "$tmp/out" '"comm_from_record":'
run history 0 "$bin" history --kind bench --db "$db"
[ "$(grep -c ' bench ' "$tmp/out")" -eq 2 ] || { echo "FAIL history: want 2 bench records"; cat "$tmp/out"; fail=1; }
id=$(awk '$2 == "bench" {print $1; exit}' "$tmp/out")
run show 0 "$bin" show "$id" --db "$db"
has show "$tmp/out" "device:   cpu-"
has show "$tmp/out" "kernels:"
# --force replaces a foreign file
run force 0 "$bin" bench cpu --quick --write-catalog "$tmp/mine.json" --force --no-record --db "$db"
has force "$tmp/mine.json" '"_generated_by":'
exit $fail
