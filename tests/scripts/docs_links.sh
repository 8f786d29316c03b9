#!/bin/bash
# The documentation's references resolve (issue 32, item 6: README.md is the first hour; the
# reference material, every difference from perf and OpenCSD with its evidence, is on docs/
# pages that README.md and the tests point at):
# - every relative link of README.md and docs/*.md names a file that exists and, with #anchor,
#   a heading of that page (GitHub's anchors);
# - every reference to a page in the sources, tests, scripts and golden headers
#   (`docs/X.md#anchor`, `docs/X.md, "Title"`, `README.md: "Title"`, ...) names a page that
#   exists, and each quoted title a heading of it (or the start of one) or a bold bullet
#   (`- **Title.**`, `6. **Title.**`);
# - every golden file that states a difference from perf (tests/golden/script-vs-perf,
#   default-vs-perf, calltrace-vs-perf, dump-perf-packets) names, in its '#' header, the page
#   that documents it with its evidence (all but dump-perf-packets: with the difference's
#   title).
set -u
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
cd "$ETMKIT_SRC" || exit 1
exec python3 - <<'EOF'
import glob, os, re, sys

fail = []

def md_targets(path):
    """GitHub anchors of a page's headings, and its bold-bullet titles."""
    anchors, titles, heads, seen = set(), set(), [], {}
    fence = False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
            continue
        if fence:
            continue
        m = re.match(r'(#{1,6}) +(.*?)\s*#*\s*$', line)
        if m:
            text = m.group(2).replace('`', '')
            heads.append(text)
            slug = re.sub(r'[^\w\- ]', '', text.lower()).replace(' ', '-')
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            anchors.add(slug if n == 0 else '%s-%d' % (slug, n))
        m = re.match(r'\s*(?:[-*]|\d+\.) +\*\*(.+?)\*\*', line)
        if m:
            titles.add(m.group(1).replace('`', '').rstrip('.:'))
    return anchors, titles, heads

cache = {}
def targets(path):
    if path not in cache:
        cache[path] = md_targets(path)
    return cache[path]

def title_ok(page, title):
    _, titles, heads = targets(page)
    t = title.replace('`', '').rstrip('.:')
    return t in titles or any(h == t or h.startswith(t) for h in heads)

# 1. links of README.md and docs/*.md
pages = ['README.md'] + sorted(glob.glob('docs/*.md'))
nlinks = 0
for page in pages:
    text = open(page, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    for m in re.finditer(r'\[[^\]]*\]\(([^)\s]+)\)', text):
        target = m.group(1)
        if re.match(r'[a-z]+:', target):
            continue
        nlinks += 1
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(dest):
            fail.append('%s: link %s: no file %s' % (page, target, dest))
        elif anchor and dest.endswith('.md') and anchor not in targets(dest)[0]:
            fail.append('%s: link %s: %s has no heading with that anchor' % (page, target, dest))

# 2. references to pages, with anchors or quoted titles
ref = re.compile(r'(?<![\w/.-])(README(?:\.md)?|docs/[\w.-]+\.md)(#[\w-]+)?'
                 r'((?:[,:]?\s*\(?"[^"]+")*)')
files = (glob.glob('src/**/*.[ch]', recursive=True) + glob.glob('include/**/*.h', recursive=True)
         + glob.glob('tools/**/*.[ch]', recursive=True) + glob.glob('tests/scripts/*')
         + glob.glob('tests/unit/*.c') + glob.glob('scripts/*') + glob.glob('bench/*')
         + glob.glob('tests/golden/**/*.diff', recursive=True) + pages)
nrefs = 0
headers = {}
for f in sorted(set(files)):
    if not os.path.isfile(f) or f == 'tests/scripts/docs_links.sh':
        continue
    try:
        lines = open(f, encoding='utf-8').read().split('\n')
    except UnicodeDecodeError:
        continue
    if f.endswith('.diff'):
        lines = [l for l in lines if l.startswith('#')]
    # comment lines joined: a reference may run over a line break
    text = ' '.join(re.sub(r'^\s*(#|\*|//|/\*)\s?', '', l) for l in lines)
    found = []
    for m in ref.finditer(text):
        name, anchor, quoted = m.group(1), m.group(2), m.group(3)
        page = 'README.md' if name.startswith('README') else name
        nrefs += 1
        if not os.path.exists(page):
            fail.append('%s: refers to %s, which does not exist' % (f, page))
            continue
        ok = True
        if anchor and anchor[1:] not in targets(page)[0]:
            fail.append('%s: %s%s: no heading with that anchor' % (f, page, anchor))
            ok = False
        titles = re.findall(r'"([^"]+)"', quoted or '')
        for t in titles:
            if not title_ok(page, t):
                fail.append('%s: %s, "%s": no such heading or bold bullet there' % (f, page, t))
                ok = False
        found.append((page, bool(titles or anchor), ok))
    headers[f] = found

# 3. each golden difference from perf names its documentation
for d, need_title in (('script-vs-perf', True), ('default-vs-perf', True),
                      ('calltrace-vs-perf', True), ('dump-perf-packets', False)):
    diffs = sorted(glob.glob('tests/golden/%s/*.diff' % d))
    if not diffs:
        fail.append('tests/golden/%s: no golden files' % d)
    for g in diffs:
        refs = [r for r in headers.get(g, []) if r[0].startswith('docs/') and r[2]
                and (r[1] or not need_title)]
        if not refs:
            fail.append('%s: its header names no docs/ page%s that documents the difference'
                        % (g, ' section' if need_title else ''))

for x in fail:
    print('FAIL:', x)
if fail:
    sys.exit(1)
print('ok: %d links in %d pages and %d references to pages resolve; every golden difference '
      'from perf names its page' % (nlinks, len(pages), nrefs))
EOF
