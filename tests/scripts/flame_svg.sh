#!/bin/bash
# Flame graphs (issue 29 item 1, the SVG half; docs/FLAMEGRAPH.md): ek_flame_svg (through the
# test tool ek_flame) renders a hand-made folded file, then
#  - the SVG is well-formed XML, needs nothing from outside (no URL but the SVG namespace, no
#    href, no url()), and every frame (title, x, y, width, label), in order, is exactly the one
#    an independent layout of the folded input gives (Python, below), by name and by weight;
#  - the stats the tool prints are exact (lines, bad lines, frames drawn and left out);
#  - in headless Chromium (a harness page drives the SVG in an iframe, then --dump-dom prints
#    what it saw): the frames are there, hovering shows a frame's title, a click zooms (the
#    frame full width, an ancestor greyed at full width, a sibling hidden, a child scaled),
#    Reset zoom restores every frame, Search (its prompt answered) highlights the matches and
#    shows the matched share, Ctrl-F opens the search, clicking Search again clears it, and
#    out.svg?s=REGEX searches as it opens;
#  - a screenshot is saved as an artefact: $ETMKIT_BUILD/artifacts/flame.png (with flame.svg).
# Without chromium (Debian package chromium, in TEST_DEPS) the browser part is skipped (77).
set -u
tool=${ETMKIT_BUILD:?}/tests/ek_flame
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
[ -x "$tool" ] || { echo "FAIL: no $tool (the test tool tests/tools/flame.c)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# The folded input: stacks that merge (main;work;inner twice), a name with blanks, one with
# XML's specials, non-ASCII (valid and invalid UTF-8, a control character), a kernel frame, an
# unknown one, frames too narrow to draw (count 1 of ~10^6; a_small, 80: its sibling b_after
# is placed after it by the count it left out, data-skip), a blank line, CRLF, and bad lines
# (no count, a count with a sign, an empty frame, a count beyond 64 bits).
printf '%s\n' \
  'main;work;inner 300000' \
  'main;work 99000' \
  'main;work;inner 150000' \
  'main;parse;operator<< <int, std::string>(a&b, "c") 120000' \
  'main;parse;std::vector<int>::push_back(int const&) 80000' \
  "main;déjà vu;naïve ünïcode 60000" \
  'main;syscall;do_sys_open_[k] 40000' \
  'main;[unknown] 30000' \
  'main;tiny;tinier 1' \
  'main;tiny2 1' \
  'start_thread;worker;spin 119998' \
  'main;mid;a_small 80' \
  'main;mid;b_after 920' \
  '' \
  'no count here' \
  'main;work -5' \
  'main;;work 7' \
  'main;work 99999999999999999999' >"$tmp/in.folded"
printf 'main;bad\377byte\001ctl 10000\r\n' >>"$tmp/in.folded"

"$tool" "$tmp/in.folded" "$tmp/out.svg" 'Flame <test> & "co"' 'instructions executed, 12 samples' \
  >"$tmp/stats" 2>"$tmp/err" || { echo "FAIL: ek_flame: $(cat "$tmp/err")"; exit 1; }
"$tool" "$tmp/in.folded" "$tmp/weight.svg" --by-weight >/dev/null 2>&1 ||
  { echo "FAIL: ek_flame --by-weight"; exit 1; }
# one line a stat: 19 lines, 14 used, 4 bad (the first is line 15), 22 frames, 4 too narrow
printf '%s\n' 'lines 19' 'stacks 14' 'bad_lines 4' 'first_bad_line 15' 'total 1010000' \
  'frames 22' 'drawn 18' 'omitted 4' 'depth 3' >"$tmp/stats.want"
diff -u "$tmp/stats.want" "$tmp/stats" || { echo "FAIL: the stats differ (above)"; fail=1; }

# A second input: no line usable -> status 1 and no file; an empty one -> a picture
printf 'junk\n; 5\n' >"$tmp/bad.folded"
if "$tool" "$tmp/bad.folded" "$tmp/bad.svg" >/dev/null 2>&1 || [ -e "$tmp/bad.svg" ]; then
  echo "FAIL: a folded file with no usable line gave a picture"; fail=1
fi
: >"$tmp/empty.folded"
"$tool" "$tmp/empty.folded" "$tmp/empty.svg" >/dev/null 2>&1 || { echo "FAIL: an empty input"; fail=1; }

python3 - "$tmp" <<'EOF' || fail=1
import re, sys, xml.etree.ElementTree as ET
tmp = sys.argv[1]
NS = '{http://www.w3.org/2000/svg}'
bad = []

def layout(data, order, top, width=1200, min_width=0.1):
    """The frames an independent reading of folded stacks gives, in depth-first order."""
    root = {'n': 0, 'k': {}}
    total = 0
    for line in data.split(b'\n'):
        line = line.rstrip(b' \t\r')
        if not line:
            continue
        m = re.match(rb'(.*?)[ \t\r]*[ \t]([0-9]+)$', line, re.S)
        if not m:
            continue
        stack, n = m.group(1), int(m.group(2))
        frames = stack.split(b';')
        if not stack or b'' in frames or n >= 2**64 or total + n >= 2**64:
            continue
        total += n
        if n == 0:
            continue
        root['n'] += n
        node = root
        for f in frames:
            node = node['k'].setdefault(f, {'n': 0, 'k': {}})
            node['n'] += n
    depth = lambda t: 1 + max([depth(c) for c in t['k'].values()] or [0])
    rows = depth(root)
    base = top + (rows - 1) * 16
    scale = float(width - 20) / float(total)
    fx = lambda v: '%d.%02d' % divmod(int(v * 100.0 + 0.5), 100)
    def text(b):
        s = b.decode('utf-8', 'replace').replace('\ufffe', '\ufffd').replace('\uffff', '\ufffd')
        return ''.join('\ufffd' if ord(c) < 32 or ord(c) == 127 else c for c in s)
    out = []
    def walk(name, t, d, start):
        w = float(t['n']) * scale
        if w < min_width:
            return
        x = float(start) * scale
        x += 10
        fit = int((w - 6.0) / 7.08) if w > 6.0 else 0
        nm = text(name)
        label = None
        if fit >= 3:
            label = nm if len(nm) <= fit else nm[:fit - 2] + '..'
        out.append(('%s (%s instructions, %s%%)' % (nm, '{:,}'.format(t['n']),
                    fx(float(t['n']) / float(total) * 100.0)),
                    fx(x), str(base - d * 16), fx(w), label, fx(x + 3.0) if label else None))
        kids = sorted(t['k'].items(), key=(lambda kv: kv[0]) if order == 'name' else
                      (lambda kv: (-kv[1]['n'], kv[0])))
        for k, c in kids:
            walk(k, c, d + 1, start)
            start += c['n']
    walk(b'all', root, 0, 0)
    return out

def frames(path):
    doc = ET.parse(path).getroot()
    g = doc.find(NS + 'g[@id="frames"]')
    got = []
    for f in g:
        r = f.find(NS + 'rect')
        t = f.find(NS + 'text')
        got.append((f.find(NS + 'title').text, r.get('x'), r.get('y'), r.get('width'),
                    t.text if t is not None else None, t.get('x') if t is not None else None))
    return doc, got

data = open(tmp + '/in.folded', 'rb').read()
for path, order, top in (('out.svg', 'name', 52), ('weight.svg', 'weight', 34)):
    try:
        doc, got = frames(tmp + '/' + path)
    except ET.ParseError as e:
        bad.append('%s is not well-formed XML: %s' % (path, e))
        continue
    want = layout(data, order, top)
    if got != want:
        bad.append('%s: the frames differ from the layout of the folded input (%s order)' % (path, order))
        for i in range(max(len(got), len(want))):
            a = got[i] if i < len(got) else None
            b = want[i] if i < len(want) else None
            if a != b:
                bad.append('  frame %d:\n    got:  %r\n    want: %r' % (i, a, b))
    print('%s: %d frames checked (%s order)' % (path, len(got), order))
# alone, with nothing from outside
svg = open(tmp + '/out.svg', encoding='utf-8').read()
urls = set(re.findall(r'https?://[^\s"\')<]*', svg)) - {'http://www.w3.org/2000/svg'}
if urls or re.search(r'href|url\(|@import', svg):
    bad.append('out.svg refers to something outside it: %s' % (sorted(urls) or 'href/url()/@import'))
if svg.count('<script') != 1:
    bad.append('out.svg has %d scripts, not one inline' % svg.count('<script'))
doc = ET.parse(tmp + '/out.svg').getroot()
texts = {t.get('id'): (t.text or '') for t in doc.iter(NS + 'text') if t.get('id')}
for k, v in (('title', 'Flame <test> & "co"'), ('subtitle', 'instructions executed, 12 samples'),
             ('details', '4 frames narrower than 0.10 px not drawn')):
    if texts.get(k) != v:
        bad.append('%s: %r, want %r' % (k, texts.get(k), v))
# colours (the palette of src/output/flame_svg.c, exactly): from a hash of the name (FNV-1a,
# 32 bits) warm; kernel frames ("_[k]") blue; names in brackets grey
def colour(b):
    h = 2166136261
    for c in b:
        h = ((h ^ c) * 16777619) & 0xffffffff
    x, y, z = h & 255, (h >> 8) & 255, (h >> 16) & 255
    if b.endswith(b'_[k]'):
        rgb = (70 + x * 50 // 255, 140 + y * 60 // 255, 200 + z * 55 // 255)
    elif len(b) >= 2 and b[:1] == b'[' and b[-1:] == b']':
        rgb = (175 + x * 35 // 255,) * 3
    else:
        rgb = (205 + x * 50 // 255, 50 + y * 150 // 255, 20 + z * 50 // 255)
    return '#%02x%02x%02x' % rgb
raw = {}
for line in data.split(b'\n'):
    for f in re.sub(rb'[ \t\r]+[0-9]*[ \t\r]*$', b'', line).split(b';'):
        raw[f.decode('utf-8', 'replace').replace('\x01', '\ufffd')] = f
raw['all'] = b'all'
kinds = set()
for f in doc.find(NS + 'g[@id="frames"]'):
    name = f.find(NS + 'title').text.rsplit(' (', 1)[0]
    want = colour(raw[name])
    kinds.add('blue' if name.endswith('_[k]') else 'grey' if name[0] == '[' else 'warm')
    if f.find(NS + 'rect').get('fill') != want:
        bad.append('%s: colour %s, want %s' % (name, f.find(NS + 'rect').get('fill'), want))
if kinds != {'blue', 'grey', 'warm'}:
    bad.append('the frames do not show the three palettes: %r' % kinds)
e = ET.parse(tmp + '/empty.svg').getroot()
if len(e.find(NS + 'g[@id="frames"]')) or 'No samples' not in open(tmp + '/empty.svg').read():
    bad.append('empty.svg: not an empty picture saying "No samples"')
for b in bad:
    print('FAIL: ' + b)
sys.exit(1 if bad else 0)
EOF

# ---- the browser
chromium=$(command -v chromium || command -v chromium-browser)
if [ -z "$chromium" ]; then
  [ "$fail" -eq 0 ] || exit 1
  echo "SKIP: chromium is not installed (Debian package chromium): the SVG's script is not checked"
  exit 77
fi
# A harness page: loads the SVG in an iframe (file:// pages may read each other with
# --allow-file-access-from-files), acts as a user would, and writes what it saw into #out.
cat >"$tmp/harness.html" <<'EOF'
<!DOCTYPE html><html><body><iframe id="f" src="out.svg" width="1200" height="200"></iframe>
<pre id="out">not run</pre><script>
var out = document.getElementById('out'), frame = document.getElementById('f');
frame.onload = function () {
  var r = {};
  try {
    var w = frame.contentWindow, d = frame.contentDocument;
    var gs = Array.prototype.slice.call(d.getElementById('frames').children);
    var title = function (g) { return g.getElementsByTagName('title')[0].textContent; };
    var rect = function (g) { return g.getElementsByTagName('rect')[0]; };
    var find = function (name) {
      return gs.filter(function (g) { return title(g).lastIndexOf(name + ' (', 0) === 0; })[0];
    };
    var state = function (g) {
      var t = g.getElementsByTagName('text')[0];
      return [rect(g).getAttribute('x'), rect(g).getAttribute('width'), g.getAttribute('class') || '',
              t ? t.textContent : null];
    };
    var click = function (el) { el.dispatchEvent(new w.MouseEvent('click', {bubbles: true})); };
    r.frames = gs.map(title);
    r.initial = gs.map(state);
    find('work').dispatchEvent(new w.MouseEvent('mouseover', {bubbles: true}));
    r.hover = d.getElementById('details').textContent;
    find('work').dispatchEvent(new w.MouseEvent('mouseout', {bubbles: true}));
    r.unhover = d.getElementById('details').textContent;
    click(rect(find('work')));
    r.zoom = {work: state(find('work')), main: state(find('main')), all: state(find('all')),
              inner: state(find('inner')), parse: state(find('parse')),
              spin: state(find('spin')), reset: d.getElementById('reset').getAttribute('class')};
    click(d.getElementById('reset'));
    r.reset = gs.map(state);
    r.reset_ctl = d.getElementById('reset').getAttribute('class');
    click(rect(find('main')));
    r.zoom_main = {main: state(find('main')), work: state(find('work')), spin: state(find('spin'))};
    click(rect(find('mid')));
    r.zoom_main.b_after = state(find('b_after'));
    d.getElementById('reset').dispatchEvent(new w.MouseEvent('click', {bubbles: true}));
    var asked = [];
    w.prompt = function (q) { asked.push(q); return asked.length === 1 ? 'er|p[ua]' : 'work'; };
    click(d.getElementById('search'));
    r.hits = gs.filter(function (g) { return g.classList.contains('hit'); }).map(title);
    r.matched = d.getElementById('matched').textContent;
    r.search_ctl = d.getElementById('search').textContent;
    r.hit_fill = w.getComputedStyle(rect(r.hits.length ? find('inner') : gs[0])).fill;
    click(d.getElementById('search'));
    r.cleared = [gs.filter(function (g) { return g.classList.contains('hit'); }).length,
                 d.getElementById('matched').textContent];
    var k = new w.KeyboardEvent('keydown', {key: 'f', ctrlKey: true, bubbles: true, cancelable: true});
    w.dispatchEvent(k);
    r.ctrlf = [asked.length, k.defaultPrevented, d.getElementById('matched').textContent];
  } catch (e) { r.error = String(e) + ' ' + (e.stack || ''); }
  // ?s=REGEX searches as the picture opens
  frame.onload = function () {
    r.url_search = frame.contentDocument.getElementById('matched').textContent;
    out.textContent = 'RESULT ' + JSON.stringify(r);
  };
  frame.src = 'out.svg?s=' + encodeURIComponent('^inn');
};
</script></body></html>
EOF
# chromium writes only under $tmp (its profile, and HOME for what it keeps there)
mkdir -p "$tmp/home"
cr() { HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_CACHE_HOME=$tmp/home/.cache \
       timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
         --no-first-run --no-default-browser-check --user-data-dir="$tmp/profile" "$@" 2>>"$tmp/chromium.log"; }
cr --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom "file://$tmp/harness.html" \
  >"$tmp/dom.html"
python3 - "$tmp" <<'EOF' || fail=1
import html, json, re, sys
from decimal import Decimal, ROUND_HALF_UP
tmp = sys.argv[1]
js2 = lambda v: str(Decimal(v).quantize(Decimal('0.01'), ROUND_HALF_UP))  # toFixed(2)
dom = open(tmp + '/dom.html', encoding='utf-8').read()
m = re.search(r'RESULT (\{.*?\})</pre>', dom, re.S)
if not m:
    print('FAIL: the harness page gave no result (chromium: %s/chromium.log):' % tmp)
    print(open(tmp + '/chromium.log').read()[-2000:])
    sys.exit(1)
r = json.loads(html.unescape(m.group(1)))
bad = []
if 'error' in r:
    bad.append('the harness page failed: ' + r['error'])
    r = {}
frames = r.get('frames', [])
if len(frames) != 18 or not frames[0].startswith('all (1,010,000 instructions'):
    bad.append('%d frames in the browser, want 18 with "all" first: %r' % (len(frames), frames[:3]))
want_hover = 'work (549,000 instructions, 54.36%)'
if r.get('hover') != want_hover:
    bad.append('hover shows %r, want %r' % (r.get('hover'), want_hover))
if r.get('unhover') != '4 frames narrower than 0.10 px not drawn':
    bad.append('the pointer gone, the details line shows %r' % r.get('unhover'))
z = r.get('zoom', {})
# work: 549000 of 1010000; inner 450000 of it -> 1180 * 450000 / 549000 = 967.21
want = {'work': ['10.00', '1180.00', '', 'work'], 'main': ['10.00', '1180.00', 'anc', 'main'],
        'all': ['10.00', '1180.00', 'anc', 'all'], 'inner': ['10.00', '967.21', '', 'inner'],
        'parse': None, 'spin': None, 'reset': 'ctl'}
for k, v in want.items():
    g = z.get(k)
    if k in ('parse', 'spin'):  # hidden: not in work's subtree nor above it
        if not g or g[2] != 'hide':
            bad.append('after the zoom, %s is %r, want hidden' % (k, g))
    elif g != v:
        bad.append('after the zoom, %s is %r, want %r' % (k, g, v))
if r.get('reset') != r.get('initial') or r.get('reset_ctl') != 'ctl hide':
    bad.append('Reset zoom did not restore every frame (or the control stays)')
# main: 890,002; work starts 341,002 into it, after two frames too narrow to draw (data-skip);
# mid: 1000, b_after starts 80 into it, after a_small (not drawn)
k = 1180 / 890002
want = {'main': ['10.00', '1180.00', '', 'main'],
        'work': [js2(10 + 341002 * k), js2(549000 * k), '', 'work'], 'spin': 'hide',
        'b_after': ['104.40', '1085.60', '', 'b_after']}
zm = r.get('zoom_main', {})
for key, v in want.items():
    g = zm.get(key)
    if (g[2] if g and key == 'spin' else g) != v:
        bad.append('zoomed into main, %s is %r, want %r' % (key, g, v))
# "er|p[ua]": inner (450,000), parse (200,000, with the two under it), worker (119,998),
# b_after (920): 770,918 of 1,010,000 = 76.33%
want_hits = [f for f in frames if re.search('er|p[ua]', f.rsplit(' (', 1)[0])]
if r.get('hits') != want_hits or len(want_hits) < 3:
    bad.append('search hits %r, want %r' % (r.get('hits'), want_hits))
# the share: main (1,000,001... ) holds most of it; outermost matches only
if r.get('matched') != 'Matched: 76.33%' or r.get('search_ctl') != 'Clear search':
    bad.append('search: %r / %r, want "Matched: 76.33%%" / "Clear search"' % (r.get('matched'), r.get('search_ctl')))
if r.get('hit_fill') != 'rgb(224, 64, 224)':
    bad.append('a match is filled %r, want rgb(224, 64, 224)' % r.get('hit_fill'))
if r.get('cleared') != [0, '']:
    bad.append('clicking "Clear search" left %r' % r.get('cleared'))
# work (549,000) and worker (119,998): 66.24%
if r.get('ctrlf') != [2, True, 'Matched: 66.24%']:
    bad.append('Ctrl-F: %r, want the prompt asked, the key taken, work matched (66.24%%)' % r.get('ctrlf'))
# inner: 450,000 of 1,010,000
if r.get('url_search') != 'Matched: 44.55%':
    bad.append('out.svg?s=^inn shows %r, want "Matched: 44.55%%"' % r.get('url_search'))
for b in bad:
    print('FAIL: ' + b)
if not bad:
    print('browser: %d frames, hover, zoom, reset, search, clear, Ctrl-F, ?s= as expected' % len(frames))
sys.exit(1 if bad else 0)
EOF

# The artefact: the picture as a browser draws it
art=$ETMKIT_BUILD/artifacts
mkdir -p "$art" && cp "$tmp/out.svg" "$art/flame.svg"
h=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' "$tmp/out.svg")
rm -f "$art/flame.png"
cr --hide-scrollbars --window-size="1200,${h:-800}" --screenshot="$art/flame.png" "file://$art/flame.svg" >/dev/null
if [ -s "$art/flame.png" ]; then
  echo "artefact: $art/flame.png (a screenshot of $art/flame.svg)"
else
  echo "FAIL: chromium made no screenshot (log: below)"; tail -5 "$tmp/chromium.log"; fail=1
fi
[ "$fail" -eq 0 ] && echo "ok: the flame graph's layout is exact and its controls work"
exit "$fail"
