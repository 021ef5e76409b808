#!/usr/bin/env bash
# test_rpt_chromium.sh: a rendered report's index.html opened in headless
# Chromium: every image on the page (each plot's PNG) and each plot's SVG
# load, and the page has one table per plot.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# Skips (exit 77) without Debian's chromium, without gnuplot, or without the
# test_rpt_render program beside the build (it writes the sample report:
# SMD_RPT_OUT=DIR). Once `smdplan report` reads the records database, this
# test can make its report with it instead.
set -u
bin=$1
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "skip: chromium not installed"; exit 77
fi
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "skip: gnuplot not installed"; exit 77
fi
render=$(dirname "$bin")/tests/test_rpt_render
if [ ! -x "$render" ]; then
  echo "skip: $render not built"; exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/report
if ! SMD_RPT_OUT=$out "$render" >"$tmp/render.log" 2>&1 || [ ! -f "$out/index.html" ]; then
  echo "FAIL: the sample report was not written"; cat "$tmp/render.log"; exit 1
fi

# A copy of the page that also shows every SVG as an image and, once the page
# has loaded, writes what loaded into the DOM (the report itself has no script).
plots=$(grep -o '<section id="[A-Za-z0-9_-]*"' "$out/index.html" | sed 's/.*id="\(.*\)"/\1/')
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
                  ' tables=' + document.querySelectorAll('table[id$="-table"]').length;
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
result=$(grep -o 'images=[0-9]* broken=[0-9]* \[[^]]*\] tables=[0-9]*' "$tmp/dom.html")
echo "chromium: $result"
want="images=$((2 * nplots)) broken=0 [] tables=$nplots"
if [ "$result" != "$want" ]; then
  echo "FAIL: want '$want'"; grep -v dbus "$tmp/browser.log" | tail -20; exit 1
fi
echo "ok   every image of the $nplots plots loaded"
