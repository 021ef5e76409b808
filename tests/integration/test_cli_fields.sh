#!/usr/bin/env bash
# test_cli_fields.sh: one plan read back three ways, field by field: the
# record in SQLite (plans table), smdplan --json and the CONFIG.json that
# smdplan exec writes for it. Every layout field has one name in all three
# (planner/plan_fields.c) and the same value; CONFIG.json carries the fields
# the executor runs with, the others carry them all.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
. "$(dirname "$0")/lib.sh"
unset SMDPLAN_DB SMDPLAN_NO_RECORD
cd "$tmp" || exit 1
if ! "$bin" --params 1.3B --instances 2xp4d --framework smdplan --db "$tmp/f.db" --json \
  >plan.json 2>plan.err; then
  echo "FAIL plan"; cat plan.err; exit 1
fi
if ! "$bin" exec --plan 1 --db "$tmp/f.db" --scale layers=2,hidden=64,seq=32,vocab=128 \
  --dry-run --json --no-record >exec.json 2>exec.err; then
  echo "FAIL exec --dry-run"; cat exec.err; exit 1
fi
python3 - "$tmp/f.db" <<'PY' || fail=1
import json, sqlite3, sys
plan = json.load(open("plan.json"))["plans"][0]
cfg = json.load(open("exec.json"))["config"]["layout"]
db = sqlite3.connect(sys.argv[1])
db.row_factory = sqlite3.Row
row = dict(db.execute("SELECT * FROM plans ORDER BY rank LIMIT 1").fetchone())
bad = 0
def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return int(a) == int(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return a == b
# the layout's keys in --json that SQLite also has: every one, equal
layout_keys = [k for k in plan if k in row]
for k in layout_keys:
    if not same(plan[k], row[k]):
        print(f"FAIL {k}: --json {plan[k]!r}, SQLite {row[k]!r}"); bad = 1
# CONFIG.json: every key is a --json key of the same value (scaled model aside)
for k, v in cfg.items():
    if k not in plan:
        print(f"FAIL CONFIG.json key {k} is not a --json key"); bad = 1
    elif not same(v, plan[k]):
        print(f"FAIL {k}: CONFIG.json {v!r}, --json {plan[k]!r}"); bad = 1
for old in ("micro_batch_size", "optimizer_sharding"):
    if old in plan:
        print(f"FAIL --json still writes {old}"); bad = 1
need = {"tp", "pp", "dp", "micro_batch", "microbatches", "sharding", "recompute", "schedule"}
if not need <= set(layout_keys) or not need <= set(cfg):
    print("FAIL missing", need - set(layout_keys), need - set(cfg)); bad = 1
# the model: one name per field; --json gives the planner's model, CONFIG.json
# the scaled one (--scale), so the names and the unscaled values compare
jm = json.load(open("plan.json"))["model"]
cm = json.load(open("exec.json"))["config"]["model"]
mrow = dict(db.execute("SELECT * FROM models ORDER BY id LIMIT 1").fetchone())
for k in cm:
    if k not in jm:
        print(f"FAIL CONFIG.json model key {k} is not a --json model key"); bad = 1
for k in jm:
    if k != "mlp" and k not in mrow:
        print(f"FAIL --json model key {k} is not a SQLite column"); bad = 1
    elif k in mrow and not same(jm[k], mrow[k]):
        print(f"FAIL model {k}: --json {jm[k]!r}, SQLite {mrow[k]!r}"); bad = 1
for k in ("arch", "ffn", "head_dim", "mlp", "tied_embedding"):
    if k not in cm:
        print(f"FAIL CONFIG.json model lacks {k}"); bad = 1
print(f"ok   {len(layout_keys)} fields in --json and SQLite, {len(cfg)} in CONFIG.json, equal;"
      f" {len(jm)} model fields, {len(cm)} in CONFIG.json, by one name")
sys.exit(bad)
PY
exit $fail
