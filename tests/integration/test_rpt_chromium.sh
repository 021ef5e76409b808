#!/usr/bin/env bash
# test_rpt_chromium.sh: the index.html of `smdplan report` opened in
# headless Chromium: every image on the page (each plot's PNG) and each
# plot's SVG load, the page has one table per plot, opens with its summary
# and says how to read every plot.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# Skips (exit 77) without Debian's chromium or without gnuplot.
# SMD_RPT_SCREENSHOT=FILE.png keeps a screenshot of the page's top, to look at.
. "$(dirname "$0")/lib.sh"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "skip: chromium not installed"; exit 77
fi
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "skip: gnuplot not installed"; exit 77
fi
out=$tmp/report
# The report of a records database, as a user makes it: a search, a
# comparison, a simulation of plan #1, a traced one of another layout and
# published runs with their simulation.
export SMDPLAN_DB=$tmp/r.db
unset SMDPLAN_NO_RECORD
head -40 "$2/data/reference/calibration_runs.csv" >"$tmp/runs.csv"
{ "$bin" --params 30B --instances 16xp4d &&
  "$bin" --params 30B --max-instances 16 &&
  "$bin" simulate --params 30B --instances 16xp4d &&
  "$bin" simulate --params 30B --instances 16xp4d --tp 8 --pp 2 --trace "$tmp/t.json" &&
  "$bin" validate "$tmp/runs.csv" --sim &&
  "$bin" report --out "$out"; } >"$tmp/render.log" 2>&1
if [ ! -f "$out/index.html" ]; then
  echo "FAIL: the report was not written"; cat "$tmp/render.log"; exit 1
fi

# A copy of the page that also shows every SVG as an image and, once the page
# has loaded, writes what loaded into the DOM (the report itself has no script).
plots=$(grep -o '<section id="[A-Za-z0-9_-]*"' "$out/index.html" | sed 's/.*id="\(.*\)"/\1/' | grep -v '^summary$')
nplots=$(echo "$plots" | grep -c .)
{
  sed 's|</body>||; s|</html>||' "$out/index.html"
  echo '<div id="svgs">'
  for p in $plots; do echo "<img src=\"$p.svg\" alt=\"$p svg\">"; done
  echo '</div>'
  cat <<'EOF'
<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                .map(function (i) { return i.getAttribute('src'); });
  var r = document.createElement('pre');
  r.id = 'check';
  r.textContent = 'images=' + imgs.length + ' broken=' + bad.length + ' [' + bad.join(' ') + ']' +
                  ' tables=' + document.querySelectorAll('table[id$="-table"]').length +
                  ' howto=' + document.querySelectorAll('p.howto').length +
                  ' summary=' + document.querySelectorAll('section#summary dd').length;
  document.body.appendChild(r);
});
</script>
</body>
</html>
EOF
} >"$out/check.html"

"$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --allow-file-access-from-files --virtual-time-budget=15000 \
  --dump-dom "file://$out/check.html" >"$tmp/dom.html" 2>"$tmp/browser.log"
result=$(grep -o 'images=[0-9]* broken=[0-9]* \[[^]]*\] tables=[0-9]* howto=[0-9]* summary=[0-9]*' "$tmp/dom.html")
echo "chromium: $result"
want="images=$((2 * nplots)) broken=0 [] tables=$nplots howto=$nplots summary=8"
if [ "$result" != "$want" ]; then
  echo "FAIL: want '$want'"; grep -v dbus "$tmp/browser.log" | tail -20; exit 1
fi
echo "ok   every image of the $nplots plots loaded"
if [ -n "${SMD_RPT_SCREENSHOT:-}" ]; then
  "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --allow-file-access-from-files --virtual-time-budget=15000 --window-size=1280,2400 \
    --screenshot="$SMD_RPT_SCREENSHOT" "file://$out/index.html" >/dev/null 2>&1
  cp -r "$out" "${SMD_RPT_SCREENSHOT%.png}-report" 2>/dev/null
  echo "screenshot: $SMD_RPT_SCREENSHOT"
fi
