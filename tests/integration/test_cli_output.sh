#!/usr/bin/env bash
# test_cli_output.sh: output a person reads right.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# "Why #1" quotes the figures the ranking used; tables fit the terminal;
# twins that differ only in memory are collapsed and said so; the options
# that used to be ignored say what they do; JSON byte counts are integers.
. "$(dirname "$0")/lib.sh"
export SMDPLAN_NO_RECORD=1
run_timeout=60 # nothing may hang

py() { python3 - "$@" || { echo "FAIL ${PYNAME:-python check}"; fail=1; }; }

# ---- Why #1 after the simulator re-ranks ----------------------------------------
# 20B on 8 x p4d: the simulator reorders the planner's ranking; the sentence
# quotes the simulated steps of #1 and #2, not the planner's.
case="--params 20B --instances 8xp4d"
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

# ---- the stack's own words -----------------------------------------------------------
# A Megatron-LM row's 1F1B is "1f1b" (its "interleaved" means virtual stages);
# act is "-" for a stack without SMP's active_microbatches; SMP keeps its
# names; sel and rc are explained where they are printed.
run names-megatron 0 "$bin" --params 30B --instances 16xp4d --framework megatron --schedule interleaved --wide --no-sim
PYNAME=names-megatron py "$tmp/out" <<'EOF2'
import sys
text = open(sys.argv[1]).read()
lines = text.splitlines()
head = next(i for i, l in enumerate(lines) if l.startswith("#  TP"))
cols = lines[head].split()
rows = [l.split() for l in lines[head + 1:] if l[:1].isdigit()]
assert rows, text
for r in rows:
    assert r[cols.index("sched")] in ("1f1b", "-"), r
    assert r[cols.index("act")] == "-", r
assert "interleaved/v is 1F1B over v virtual stages" in " ".join(text.split()), "no key"
assert "sel (selective" in " ".join(text.split()), "sel not explained"
EOF2
run names-smp 0 "$bin" --params 30B --instances 16xp4d --pp 4 --wide --no-sim
grep -Eq "^1 .* interleaved " "$tmp/out" || { echo "FAIL names-smp: SMP's 1F1B is its interleaved"; fail=1; }
run names-compare 0 "$bin" --params 13B --max-instances 8 --no-sim
grep -qF "rc: full activation recompute, sel: selective" "$tmp/out" || { echo "FAIL names-compare: rc/sel not explained"; fail=1; }

# ---- --tokens with --instances: time and cost to train ------------------------------
# (it was ignored silently): plan #1's step, simulated when simulated, times the
# steps the tokens take; the cost at the cluster's price per hour.
run train-json 0 "$bin" --params 13B --instances 8xp4d --tokens 300B --json
PYNAME=train-json py "$tmp/out" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
t, p = d["train"], d["plans"][0]
step = p["simulated_step_time_s"] if t["step"] == "simulated" else p["step_time_s"]["total"]
tokens_per_step = d["global_batch"] * d["model"]["seq"]
want = 300e9 / tokens_per_step * step
assert abs(t["time_s"] - want) <= 1e-9 * want, (t, want)
assert abs(t["cost"] - want / 3600 * p["cost_per_hour"]) <= 1e-6 * t["cost"], t
EOF2
run train 0 "$bin" --params 13B --instances 8xp4d --tokens 300B
grep -q "^Train 300B tokens with #1: .* d at its simulated step of .*\$" "$tmp/out" || { echo "FAIL train: no time and cost to train"; grep -i train "$tmp/out"; fail=1; }
run no-train 0 "$bin" --params 13B --instances 8xp4d --json
grep -q '"train"' "$tmp/out" && { echo "FAIL no-train: train without --tokens"; fail=1; }

# ---- twins and the microbatches in flight ------------------------------------------
# 13B on 4 x p4d (SMP): layouts differing only in the optimizer's sharding or the
# microbatches in flight take the same time; one is shown. (FSDP's ZeRO-3 with
# and without recompute no longer tie: the re-gathered weights' collectives take
# SMs from the compute they hide behind, plan__comm_sm_frac.)
run twins 0 "$bin" --params 13B --instances 4xp4d --top 8 --no-sim --json
PYNAME=twins py "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["twins_collapsed"] >= 1, d["twins_collapsed"]
key = lambda p: (p["tp"], p["pp"], p["dp"], p["cp"], p["micro_batch"], p["microbatches"])
seen = {}
for p in d["plans"]:
    t = p["step_time_s"]["total"]
    other = seen.get(key(p))
    assert other is None or abs(other - t) > 1e-9 * t, ("twins shown", key(p), t)
    seen[key(p)] = t
EOF
run twins-text 0 "$bin" --params 13B --instances 4xp4d --top 8 --no-sim
grep -q "left out as twin" "$tmp/out" || { echo "FAIL twins-text: not said"; fail=1; }
# SMP's default cap, partitions + 2, is never shown above the microbatches there are.
run act 0 "$bin" --params 30B --instances 16xp4d --global-batch 64 --pp 16 --top 32 --no-sim --json
PYNAME=act py "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [(p["microbatches"], p["active_microbatches"]) for p in d["plans"]
       if p["active_microbatches"] > p["microbatches"]]
assert not bad, bad
EOF

# ---- tables fit the terminal ----------------------------------------------------
fits() { # name, width: every line of $tmp/out within it
  local longest
  longest=$(awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }' "$tmp/out")
  [ "$longest" -le "$2" ] || { echo "FAIL $1: a line of $longest columns, wider than $2"; \
    awk -v w="$2" 'length($0) > w' "$tmp/out" | head -3; fail=1; }
}
export COLUMNS=80
run fit-plan 0 "$bin" --params 30B --instances 16xp4d --explain; fits fit-plan 80
tr '\n' ' ' <"$tmp/out" | grep -q "columns are left out: .*--wide shows every column" \
  || { echo "FAIL fit-plan: does not say which columns it left out"; fail=1; }
run fit-compare 0 "$bin" --params 13B --max-instances 4; fits fit-compare 80
grep -q "changes per row" "$tmp/out" || { echo "FAIL fit-compare: the batch per row is not said"; fail=1; }
run wide 0 "$bin" --params 30B --instances 16xp4d --wide
grep -q "DPexp.*bubble.*tokens/s.*MFU" "$tmp/out" || { echo "FAIL wide: columns missing"; fail=1; }
grep -q "columns are left out" "$tmp/out" && { echo "FAIL wide: columns left out"; fail=1; }
run fit-validate 0 "$bin" validate "$src/data/reference/calibration_runs.csv"; fits fit-validate 80
grep -q "memory in GiB" "$tmp/out" || { echo "FAIL fit-validate: memory not in GiB"; fail=1; }
grep -q "mem GB" "$tmp/out" && { echo "FAIL fit-validate: GB"; fail=1; }
run fit-calibrate 0 "$bin" calibrate "$src/data/reference/calibration_runs.csv" --no-loso
fits fit-calibrate 80
# records: a plan, a simulation of its #1 and the published runs with --sim
db="$tmp/rec.db"
SMDPLAN_NO_RECORD= "$bin" --params 13B --instances 4xp4d --db "$db" >/dev/null 2>&1
SMDPLAN_NO_RECORD= "$bin" simulate --params 13B --instances 4xp4d --db "$db" >/dev/null 2>&1
head -30 "$src/data/reference/calibration_runs.csv" >"$tmp/runs.csv"
SMDPLAN_NO_RECORD= "$bin" validate "$tmp/runs.csv" --sim --db "$db" >/dev/null 2>&1
for c in history "show 1" "show 2" "show 3" compare; do
  run "fit-$c" 0 "$bin" $c --db "$db"; fits "fit-$c" 80
done
# compare names the records and shows layouts whole
run compare-wide 0 "$bin" compare --db "$db" --wide
grep -q "records p/s/m" "$tmp/out" || { echo "FAIL compare: no record ids"; fail=1; }
PYNAME=compare-layouts py "$tmp/out" "$bin" "$db" <<'EOF'
import json, subprocess, sys
text = open(sys.argv[1]).read()
rows = json.loads(subprocess.run([sys.argv[2], "compare", "--db", sys.argv[3], "--json"],
                                 capture_output=True, text=True).stdout)
assert rows, "nothing compared"
for r in rows:
    assert r["layout"] in text, r["layout"]
    ids = "/".join(str(r[k]) if r[k] else "-" for k in
                   ("predicted_record", "simulated_record", "measured_record"))
    assert ids in text, ids
EOF
unset COLUMNS

# ---- options that used to be ignored ----------------------------------------------
run help 0 "$bin" --help
grep -q "smdplan report" "$tmp/out" || { echo "FAIL help: report is not listed"; fail=1; }
grep -q -- "--wide" "$tmp/out" || { echo "FAIL help: --wide is not listed"; fail=1; }
run json-explain 0 "$bin" --params 30B --instances 16xp4d --json --explain --emit sagemaker
PYNAME=json-explain py "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
names = [t["name"] for t in d["explain"]]
assert "weights" in names and all("formula" in t for t in d["explain"]), names
assert d["sagemaker"], d.keys()
EOF
run emit-no-instances 2 "$bin" --params 30B --emit sagemaker
grep -q -- "--emit sagemaker: .*--instances" "$tmp/err" || { echo "FAIL emit-no-instances: not explained"; fail=1; }
# ---- prices: which list a cost came from --------------------------------------------
run prices-default 0 "$bin" --params 30B --instances 16xp4d --no-sim
grep -q "^prices:  EC2 on demand, us-east-1" "$tmp/out" || { echo "FAIL prices-default: list not named"; fail=1; }
pf="$fix/sagemaker_prices_test.json"
run prices-region 0 "$bin" --params 30B --instances 16xp4d --no-sim --json --region test-east-1 --prices "$pf"
PYNAME=prices-region py "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cluster"]
assert abs(c["price_per_hour"] - 16 * 40.0) < 1e-9, c["price_per_hour"]
assert "test-east-1" in c["price_list"] and "https://example.com/test-fixture-prices" in c["price_list"]
assert "2025-01-02" in c["price_list"], c["price_list"]
assert abs(d["plans"][0]["cost_per_hour"] - 640.0) < 1e-9
EOF
# SageMaker prices from the AWS Price List offer file (fixture in its format):
# the training instances' on-demand prices per region, dated with the file's
# publication date; a second import keeps the regions it lacks; a file
# smdplan did not write is replaced only with --force; another service's
# file is refused in one line.
run prices-import 0 "$bin" prices import "$fix/aws_offer_sagemaker.json" --out "$tmp/imported.json"
grep -q "published 2025-01-31: 3 on-demand prices of training instance types in 2 regions" "$tmp/out" \
  || { echo "FAIL prices-import: summary"; cat "$tmp/out"; fail=1; }
run prices-imported 0 "$bin" --params 30B --instances 16xp4d --no-sim --json --region us-west-2 --prices "$tmp/imported.json"
PYNAME=prices-imported py "$tmp/out" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["cluster"]
assert abs(c["price_per_hour"] - 16 * 12.5) < 1e-9, c["price_per_hour"]
assert "AmazonSageMaker/20250131000000/index.json" in c["price_list"] and "2025-01-31" in c["price_list"], c
EOF
run prices-list 0 "$bin" prices --prices "$tmp/imported.json"
grep -q "^us-east-1: 2 training instance types" "$tmp/out" || { echo "FAIL prices-list"; cat "$tmp/out"; fail=1; }
echo '{"_doc": "mine", "lists": []}' >"$tmp/mine.json"
run prices-not-mine 2 "$bin" prices import "$fix/aws_offer_sagemaker.json" --out "$tmp/mine.json"
[ "$(cat "$tmp/mine.json")" = '{"_doc": "mine", "lists": []}' ] || { echo "FAIL prices-not-mine: replaced"; fail=1; }
run prices-force 0 "$bin" prices import "$fix/aws_offer_sagemaker.json" --out "$tmp/mine.json" --force
run prices-other 2 "$bin" prices import "$pf" --out "$tmp/imported.json"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "AmazonSageMaker" "$tmp/err" || { echo "FAIL prices-other: not one line naming the offer code"; cat "$tmp/err"; fail=1; }
run prices-unpriced 0 "$bin" --params 30B --instances 4xp4de --no-sim --json --region test-east-1 --prices "$pf"
PYNAME=prices-unpriced py "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cluster"]["price_per_hour"] is None, d["cluster"]
assert d["plans"][0]["cost_per_hour"] == 0
EOF
run prices-no-list 2 "$bin" --params 30B --instances 16xp4d --region eu-west-9 --prices "$pf"
grep -q "regions with a price list: test-east-1, test-west-2" "$tmp/err" || { echo "FAIL prices-no-list"; cat "$tmp/err"; fail=1; }
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL prices-no-list: not one line"; fail=1; }
run prices-shipped 2 "$bin" --params 30B --instances 16xp4d --region us-east-1
run catalog-region 0 "$bin" catalog --region test-west-2 --prices "$pf" --wide
grep -q "p4d.24xlarge .* 44.00" "$tmp/out" || { echo "FAIL catalog-region: no ml price"; fail=1; }
run compare-region 0 "$bin" --params 1.3B --max-instances 1 --region test-east-1 --prices "$pf" --json
grep -q '"price_list":' "$tmp/out" || { echo "FAIL compare-region: list not named"; fail=1; }

# ---- JSON byte counts are whole numbers; no source file of ours in the output ----------
ints() { # file: every number under a *_bytes key (or in an explain term in bytes) is whole
  PYNAME="ints $1" py "$1" <<'EOF'
import json, sys
bad = []
def walk(v, inbytes, path):
    if isinstance(v, dict):
        byt = v.get("unit") == "bytes"
        for k, x in v.items():
            walk(x, inbytes or k.endswith("_bytes") or (byt and k == "value"), path + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, inbytes, path + "[%d]" % i)
    elif inbytes and isinstance(v, float) and v != int(v):
        bad.append((path, v))
walk(json.load(open(sys.argv[1])), False, "")
assert not bad, bad[:5]
EOF
}
run json-bytes 0 "$bin" --params 30B --instances 16xp4d --json --explain
cp "$tmp/out" "$tmp/plan.json"; ints "$tmp/plan.json"
run validate-bytes 0 "$bin" validate "$tmp/runs.csv" --json
cp "$tmp/out" "$tmp/val.json"; ints "$tmp/val.json"
run show-bytes 0 "$bin" show 1 --json --db "$db"
cp "$tmp/out" "$tmp/show.json"; ints "$tmp/show.json"
run no-source-files 0 "$bin" --params 30B --instances 16xp4d --explain --wide
grep -E "[a-z_]+\.(c|h)\b" "$tmp/out" && { echo "FAIL no-source-files"; fail=1; }
run trace-no-simulate 2 "$bin" --params 30B --instances 2xp4d --trace "$tmp/t.json"

exit $fail
