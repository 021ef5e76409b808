#!/usr/bin/env bash
# test_cli_output.sh: output a person reads right.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# "Why #1" quotes the figures the ranking used; tables fit the terminal;
# twins that differ only in memory are collapsed and said so; the options
# that used to be ignored say what they do; JSON byte counts are integers.
set -u
bin=$1
src=$2
fix=$3
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SMDPLAN_NO_RECORD=1

run() { # name, expected exit, command...
  local name=$1 want=$2
  shift 2
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, want $want"; head -20 "$tmp/out"; head -5 "$tmp/err"; fail=1
  else
    echo "ok   $name"
  fi
}
py() { python3 - "$@" || { echo "FAIL ${PYNAME:-python check}"; fail=1; }; }

# ---- Why #1 after the simulator re-ranks ----------------------------------------
# 13B on 4 x p4d: the simulator reorders the planner's ranking; the sentence
# quotes the simulated steps of #1 and #2, not the planner's.
case="--params 13B --instances 4xp4d"
run why-json 0 "$bin" $case --json
cp "$tmp/out" "$tmp/why.json"
run why 0 "$bin" $case
PYNAME=why py "$tmp/why.json" "$tmp/out" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
assert j["reranked_by_simulation"], "the case no longer re-ranks; pick another"
a, b = (p["simulated_step_time_s"] for p in j["plans"][:2])
why = next(l for l in text.splitlines() if l.startswith("Why #1"))
assert "%.3f s against %.3f s" % (a, b) in why, (why, a, b)
assert "simulated step" in why, why
EOF

exit $fail
