# lib.sh: what the integration scripts share. Not a test: each test_*.sh
# sources it first, with the arguments ctest gives the script
#   . "$(dirname "$0")/lib.sh"    ($1 smdplan binary, $2 source dir, $3 fixtures dir)
# and then sets its environment (SMDPLAN_DB, SMDPLAN_NO_RECORD) and working
# directory itself.
#
# Sourcing it sets -u and these variables:
#   bin       the smdplan binary ($1); dir, the build directory holding it
#   src, fix  the source and fixtures directories ($2, $3; empty if not given)
#   tmp       a new temporary directory, removed on exit (made writable first,
#             so read-only files go too; kept when $KEEP is set)
#   fail      0; a failed check sets it to 1, and the script exits with it
#   have_py   1 when python3 is on the PATH, else 0
#   tiny_model   the flags of a model small enough to run in seconds
#   host_catalog the flags of this host's fixture catalog entry (host-test)
# Options a script may set after sourcing it:
#   grep_syntax  how has, hasnt and one_line read their pattern: G basic
#                regular expression (the default), E extended, F fixed string
#   run_timeout  seconds run gives its command at most (empty: no limit)
# Checks (each prints "ok   NAME" or "FAIL NAME: ..." and sets fail):
#   run NAME WANT_EXIT CMD...   runs CMD, stdout in $tmp/out, stderr in $tmp/err
#   has NAME FILE PATTERN       FILE holds PATTERN
#   hasnt NAME FILE PATTERN     FILE does not hold PATTERN
#   one_line NAME PATTERN       stderr is exactly one line, holding PATTERN
#   one_line_error NAME PATTERN one_line, and nothing on stdout
#   checked NAME CMD...         CMD succeeds (its output shown when not)
#   emitted NAME KIND ARGS...   a plan's --emit KIND and --emit KIND --json
# and need_built PROGRAM (exit 77 when the build lacks it), pyget FILE EXPR
# (a value of a JSON file), allow_mpirun_as_root.
# shellcheck shell=bash disable=SC2034  # its variables are for the scripts sourcing it
set -u
bin=$1
dir=$(dirname "$bin")
src=${2:-}
fix=${3:-}
fail=0
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || { chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"; }' EXIT
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1
grep_syntax=G
run_timeout=
n=0
tiny_model="--layers 2 --hidden 32 --heads 2 --seq 16 --vocab 64"
host_catalog="--catalog $fix/catalog_host.json --host host-test"

need_built() { # program: skip the whole test (exit 77) when the build has not made it
  [ -x "$dir/$1" ] || { echo "SKIP: $dir/$1 not built"; exit 77; }
}

run() { # name, expected exit, command...
  local name=$1 want=$2
  shift 2
  if [ -n "$run_timeout" ]; then
    timeout "$run_timeout" "$@" >"$tmp/out" 2>"$tmp/err"
  else
    "$@" >"$tmp/out" 2>"$tmp/err"
  fi
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, want $want"
    head -40 "$tmp/out" | sed 's/^/  out: /'
    head -40 "$tmp/err" | sed 's/^/  err: /'
    fail=1
  else
    echo "ok   $name"
  fi
}

has() { # name, file, pattern it must hold
  grep -"$grep_syntax"q -- "$3" "$2" || { echo "FAIL $1: no '$3' in:"; head -80 "$2"; fail=1; }
}

hasnt() { # name, file, pattern it must not hold
  ! grep -"$grep_syntax"q -- "$3" "$2" || { echo "FAIL $1: '$3' in:"; head -80 "$2"; fail=1; }
}

one_line() { # name, pattern: stderr is exactly one line, holding it
  if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -"$grep_syntax"q -- "$2" "$tmp/err"; then
    echo "FAIL $1: stderr is not one line with '$2':"; cat "$tmp/err"; fail=1
  fi
}

one_line_error() { # name, pattern: one_line, and stdout empty
  one_line "$1" "$2"
  [ ! -s "$tmp/out" ] || { echo "FAIL $1: output beside the error:"; head -3 "$tmp/out"; fail=1; }
}

checked() { # name, command...: it succeeds; its last lines are shown when not
  local name=$1
  shift
  if "$@" >"$tmp/checked" 2>&1; then
    echo "ok   $name"
  else
    echo "FAIL $name:"; sed 's/^/  /' "$tmp/checked" | tail -8; fail=1
  fi
}

# emitted NAME KIND ARGS...: the plan of ARGS emitted as KIND into $tmp/s$n
# and as --json into $tmp/j$n (n counts the calls); returns 1, said, when
# either command fails.
emitted() {
  local name=$1 kind=$2
  shift 2
  n=$((n + 1))
  "$bin" "$@" --emit "$kind" >"$tmp/s$n" 2>"$tmp/err" ||
    { echo "FAIL $name: exit $?"; cat "$tmp/err"; fail=1; return 1; }
  "$bin" "$@" --emit "$kind" --json >"$tmp/j$n" 2>"$tmp/err" ||
    { echo "FAIL $name json: exit $?"; cat "$tmp/err"; fail=1; return 1; }
}

pyget() { # file, Python expression over d, the file's JSON document: its value
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

allow_mpirun_as_root() { # mpirun refuses root (a container) unless told
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}
