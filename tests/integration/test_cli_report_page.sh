#!/usr/bin/env bash
# test_cli_report_page.sh: the report shows what was asked.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# A search, a comparison, a simulation of plan #1 without a trace and a
# traced simulation of another layout: the page opens with the recommended
# plan (launch settings, predicted time, cost, memory headroom), draws the
# scaling curves and plan #1's per-stage busy time, says the timeline is not
# plan #1's, draws it in seconds with its sends visible, uses colours any
# eye tells apart, labels every cell, and names every plot once.
. "$(dirname "$0")/lib.sh"
db="$tmp/r.db"
export SMDPLAN_DB=$db
unset SMDPLAN_NO_RECORD

"$bin" --params 30B --instances 16xp4d >/dev/null || { echo "FAIL plan"; fail=1; }
"$bin" --params 30B --max-instances 16 >/dev/null || { echo "FAIL compare"; fail=1; }
"$bin" simulate --params 30B --instances 16xp4d >/dev/null || { echo "FAIL simulate #1"; fail=1; }
"$bin" simulate --params 30B --instances 16xp4d --tp 8 --pp 2 --trace "$tmp/t.json" >/dev/null \
  || { echo "FAIL simulate other"; fail=1; }
"$bin" report --out "$tmp/rep" --no-render >"$tmp/out" 2>"$tmp/err" || { echo "FAIL report"; cat "$tmp/err"; fail=1; }
rep=$tmp/rep
page=$rep/index.html

# the comparison is drawn, and the page does not ask for what it has
[ -s "$rep/scaling.dat" ] || { echo "FAIL scaling: not drawn"; fail=1; }
note=$(grep -o '<p class="note">[^<]*' "$page")
echo "$note" | grep -q "scaling\|timeline\|per-stage" && { echo "FAIL note: asks for what it has: $note"; fail=1; }
echo "$note" | grep -q "accuracy plots" || { echo "FAIL note: does not say what is missing: $note"; fail=1; }

# plan #1's simulation, recorded without a trace, is drawn per stage
[ -s "$rep/stages.dat" ] || { echo "FAIL stages: the untraced simulation is not drawn"; fail=1; }
grep -q "This is the recommended plan #1" "$page" || { echo "FAIL stages: not said to be plan #1"; fail=1; }
# the timeline is another layout's, and says so; seconds for a 24 s step; sends visible
grep -q "This is not the recommended plan #1" "$page" || { echo "FAIL timeline: not said"; fail=1; }
grep -q "set xlabel 'time from the start of the step (s)'" "$rep/timeline.gp" || { echo "FAIL timeline: not in s"; fail=1; }
grep -q "^min_ms = " "$rep/timeline.gp" || { echo "FAIL timeline: sends may vanish"; fail=1; }

# colours: viridis on the grid (no red-green), labelled "not evaluated"
grep -q "#440154" "$rep/grid.gp" || { echo "FAIL grid: not viridis"; fail=1; }
grep -qi "#1a9850\|#d73027" "$rep/grid.gp" && { echo "FAIL grid: red-green palette"; fail=1; }
grep -q "cell_label(s, step) = ok(s) ? sprintf('%.3g s', step + 0) : s" "$rep/grid.gp" \
  || { echo "FAIL grid: not-evaluated cells unlabelled"; fail=1; }
# the scaling plot: log y, every series its own (colour, dash) pair; SMP v1
# runs on few instance types, so the many series come from a stack that
# runs on all of them, in records of their own
grep -q "set logscale y" "$rep/scaling.gp" || { echo "FAIL scaling: linear y"; fail=1; }
mdb="$tmp/many.db"
SMDPLAN_DB=$mdb "$bin" --params 30B --instances 16xp4d --framework megatron >/dev/null || { echo "FAIL plan megatron"; fail=1; }
SMDPLAN_DB=$mdb "$bin" --params 30B --max-instances 16 --framework megatron >/dev/null || { echo "FAIL compare megatron"; fail=1; }
SMDPLAN_DB=$mdb "$bin" report --out "$tmp/many" --no-render >/dev/null 2>&1 || { echo "FAIL report megatron"; fail=1; }
styles=$(sed -n '/set key top left/,/unset key/p' "$tmp/many/scaling.gp" \
  | grep -o "dt [0-9]* pt [0-9]* ps 1.2 lc rgb '#[0-9a-f]*'" | sed 's/ pt [0-9]* ps 1.2//' | sort)
[ "$(echo "$styles" | wc -l)" -ge 10 ] || { echo "FAIL scaling: fewer series than the test needs"; fail=1; }
[ "$(echo "$styles" | uniq -d | wc -l)" -eq 0 ] || { echo "FAIL scaling: series share a style"; echo "$styles" | uniq -d; fail=1; }

# the page: a summary first, headings and contents naming each plot once,
# a sentence on how to read every plot
python3 - "$page" <<'EOF' || { echo "FAIL page"; fail=1; }
import re, sys
html = open(sys.argv[1]).read()
s = html.index('<section id="summary">')
assert s < html.index('<section id="memory">'), "summary not first"
summary = html[s:html.index("</section>", s)]
for want in ("Recommended plan (#1)", "Predicted step time", "Cost", "Memory headroom",
             "Launch settings", "tensor_parallel_degree"):
    assert want in summary, want
entries = re.findall(r'<li><a href="#[^"]+">(.*?)</a></li>', html)
heads = re.findall(r"<h2>(.*?)</h2>", html)
assert len(entries) == len(set(entries)), entries
assert len(heads) == len(set(heads)), heads
assert all(":" in h for h in heads if h != "Recommended plan"), heads
sections = re.findall(r'<section id="([^"]+)">(.*?)</section>', html, re.S)
for name, body in sections:
    if name != "summary":
        assert '<p class="howto">' in body, name + " has no sentence on how to read it"
EOF
# A report of a comparison record opens with its answer (the fastest and the
# cheapest cluster), not with a TP x PP heat map of one cell.
cid=$("$bin" history --kind plan | awk '$2 == "plan" && /instance options/ {print $1; exit}')
if [ -z "$cid" ]; then
  echo "FAIL comparison: no comparison record"; fail=1
else
  "$bin" report --plan "$cid" --out "$tmp/crep" --no-render >/dev/null 2>"$tmp/err" || { echo "FAIL comparison report"; cat "$tmp/err"; fail=1; }
  [ -e "$tmp/crep/grid.dat" ] && { echo "FAIL comparison: a TP x PP grid of a comparison"; fail=1; }
  grep -q "<h2>Recommended cluster</h2>" "$tmp/crep/index.html" || { echo "FAIL comparison: does not open with its answer"; fail=1; }
  grep -q "Fastest" "$tmp/crep/index.html" || { echo "FAIL comparison: no fastest option"; fail=1; }
  [ -s "$tmp/crep/scaling.dat" ] || { echo "FAIL comparison: no scaling plot"; fail=1; }
fi
[ "$fail" -eq 0 ] && echo "ok   report page"
exit $fail
