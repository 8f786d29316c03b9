#!/bin/bash
# etmkit report (text and --format=json) and export --format=folded on gen recordings of a few
# scenarios and on the shared real recordings perf_etm.data (Android, user space) and
# perf_kernel.data (a kernel module's trace, without the kernel image):
#  - the JSON parses (python3 json.load) and says what the text says: every row of every
#    table (functions by self and by total, DSOs, threads, CPUs, conditional branches), in
#    order, and the totals;
#  - the instructions add up: report's total == the session's (account.stats.instructions,
#    without a filter) == the folded stacks' sum == the threads' == the CPUs' == the
#    functions' self;
#  - a function's total is at least its self, and _start (the simulator's programs' entry,
#    below every frame of seed 1's single-threaded basic) holds all of basic's instructions;
#  - export --format=svg draws them: its "all" is the folded stacks' sum, a thread's frame the
#    sum of its lines;
#  - the filters weigh only what they keep (--tid: the thread's own instructions, as the
#    unfiltered report's thread table gives them), the stacks still followed through all.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

# compare TEXT JSON FOLDED NAME: text and JSON agree, the sums add up
compare() {
  python3 - "$1" "$2" "$3" "$4" <<'PY' || fail=1
import json, re, sys
text, js, folded, name = sys.argv[1:5]
d = json.load(open(js))
t = open(text).read().split('\n## ')
bad = []
def rows(title):
    for sec in t:
        if sec.startswith(title):
            return [l for l in sec.split('\n')[2:] if l.strip()]
    bad.append(f'no section "{title}"')
    return []
tot = d['instructions']
# the header: the counts, each with its noun in the number it asks for ("1 thread")
def nouns_agree(line):
    pairs = re.findall(r'(\d+) (?:branches )?(instructions?|samples?|calls?|returns?|gaps?|threads?)\b',
                       line)
    return bool(pairs) and all((n == '1') == (not w.endswith('s')) for n, w in pairs)
m = re.match(r'# .*: (\d+) instructions? in (\d+) branches samples?', t[0])
if not m or int(m.group(1)) != tot or int(m.group(2)) != d['branches_samples'] or \
        not nouns_agree(t[0].splitlines()[0]):
    bad.append(f'header: {t[0].splitlines()[0]} / json {tot} {d["branches_samples"]}')
h2 = t[0].splitlines()[1] if len(t[0].splitlines()) > 1 else ''
ss = d['stacks']
m = re.match(r'# stacks: (\d+) calls?, (\d+) returns?, (\d+) returns? below the first frame, '
             r'(\d+) gaps?, (\d+) threads?$', h2)
if not m or tuple(int(x) for x in m.groups()) != \
        (ss['calls'], ss['returns'], ss['returns_below'], ss['gaps'], ss['threads']) or \
        not nouns_agree(h2):
    bad.append(f'stacks header: {h2} / json {ss}')
for key, title in (('functions_self', 'functions by instructions (self)'),
                   ('functions_total', 'functions by instructions with callees')):
    r = rows(title)
    if len(r) != len(d[key]):
        bad.append(f'{key}: {len(r)} text rows, {len(d[key])} in json')
    for line, f in zip(r, d[key]):
        want = f'{f["self"]:14d}'
        parts = line.split()
        got = (int(parts[0]), int(parts[2]), int(parts[4]), ' '.join(parts[5:]))
        exp = (f['self'], f['total'], f['calls'],
               f['name'] + (f' ({f["dso"]})' if f['dso'] else ''))
        if got != exp:
            bad.append(f'{key}: text {got} json {exp}')
        if f['total'] < f['self']:
            bad.append(f'{key}: total < self: {f}')
r = rows('DSOs')
if [(int(l.split()[0]), l.split(None, 2)[2]) for l in r] != \
        [(x['instructions'], x['dso'] or '[unknown]') for x in d['dsos']]:
    bad.append('DSOs differ')
r = rows('threads')
if [(int(l.split()[0]), int(l.split()[2]), l.split(None, 4)[3], l.split(None, 4)[4]) for l in r] != \
        [(x['instructions'], x['samples'], f'{x["pid"]}/{x["tid"]}', x['comm'] or '[unknown]')
         for x in d['threads']]:
    bad.append('threads differ')
r = rows('CPUs')
if [(int(l.split()[0]), int(l.split()[2])) for l in r] != \
        [(x['instructions'], x['cpu']) for x in d['cpus']]:
    bad.append('CPUs differ')
cb = d['conditional_branches']
r = rows('conditional branches')
m = re.search(r'conditional branches: (\d+) executed, (\d+) taken', open(text).read())
if not m or (int(m.group(1)), int(m.group(2))) != (cb['executed'], cb['taken']) or \
        cb['executed'] != cb['taken'] + cb['not_taken']:
    bad.append(f'conditional branches: {m and m.group(0)} / {cb}')
if [(int(l.split()[0]), int(l.split()[1]), l.split()[3]) for l in r] != \
        [(x['taken'] + x['not_taken'], x['taken'], x['addr'][2:]) for x in cb['hottest']]:
    bad.append('conditional branches differ')
# the sums
fsum = sum(int(l.rsplit(' ', 1)[1]) for l in open(folded).read().splitlines())
acc = d['account']['stats']['instructions']
sums = {'folded': fsum, 'threads': sum(x['instructions'] for x in d['threads']),
        'cpus': sum(x['instructions'] for x in d['cpus'])}
if '--' not in name:  # no filter: all that was decoded
    sums['account'] = acc
    sums['decoded_instructions'] = d['decoded_instructions']
if len(d['functions_self']) < 20:
    sums['functions'] = sum(x['self'] for x in d['functions_self'])
for k, v in sums.items():
    if v != tot:
        bad.append(f'{k}: {v} instructions, the report {tot}')
if 'basic' in name and not any(f['name'] == '_start' and f['total'] == tot
                               for f in d['functions_total']):
    bad.append('_start does not hold all instructions')
if bad:
    print(f'FAIL {name}:', *bad[:8], sep='\n  ')
    sys.exit(1)
print(f'ok: {name}: {tot} instructions, {len(d["functions_self"])} functions, '
      f'{cb["executed"]} conditional branches; text and JSON agree')
PY
}

# run NAME DATA [options]: report as text and JSON, and the folded stacks
run() {
  local name=$1 data=$2; shift 2
  local st1=0 st2=0 st3=0
  "$ETMKIT_BIN" report -q "$@" "$data" >"$tmp/r.txt" 2>"$tmp/err" || st1=$?
  "$ETMKIT_BIN" report -q --format=json "$@" "$data" >"$tmp/r.json" 2>>"$tmp/err" || st2=$?
  "$ETMKIT_BIN" export -q --format=folded "$@" "$data" >"$tmp/f.txt" 2>>"$tmp/err" || st3=$?
  if [ "$st1$st2$st3" != 000 ]; then
    echo "FAIL $name: exit statuses $st1 $st2 $st3: $(head -c 300 "$tmp/err")"; fail=1; return
  fi
  compare "$tmp/r.txt" "$tmp/r.json" "$tmp/f.txt" "$name"
  # the flame graph (export --format=svg, docs/FLAMEGRAPH.md) draws the same stacks: its "all"
  # is their sum, each function's frame at the bottom of a thread's tower its total there
  if ! "$ETMKIT_BIN" export -q --format=svg "$@" "$data" >"$tmp/f.svg" 2>"$tmp/err"; then
    echo "FAIL $name: export --format=svg: $(head -c 300 "$tmp/err")"; fail=1
  else
    python3 - "$tmp/f.txt" "$tmp/f.svg" "$name" <<'PY' || fail=1
import re, sys
folded, svg, name = sys.argv[1:4]
total = sum(int(l.rsplit(' ', 1)[1]) for l in open(folded).read().splitlines())
roots = {}
for l in open(folded).read().splitlines():
    st, c = l.rsplit(' ', 1)
    r = st.split(';')[0]
    roots[r] = roots.get(r, 0) + int(c)
titles = re.findall(r'<title>(.*?) \(([\d,]+) instructions, ', open(svg).read())
got = {}
for t, c in titles:
    got.setdefault(t, int(c.replace(',', '')))
bad = [f'all: {got.get("all")}, folded {total}'] if got.get('all') != total else []
bad += [f'{r}: {got.get(r)}, folded {c}' for r, c in roots.items()
        if '&' not in r and got.get(r) is not None and got[r] != c]
if not titles or bad:
    print(f'FAIL {name}: the SVG does not draw the folded stacks:', *bad[:5])
    sys.exit(1)
PY
  fi
  n=$((n + 1))
}

for sc in basic kernel-and-user workload; do
  g="$tmp/$sc"
  "$ETMKIT_BIN" gen -q --scenario $sc --seed 1 -o "$g" >/dev/null 2>&1 || { echo "FAIL: etmkit gen $sc"; fail=1; continue; }
  run "$sc seed 1" "$g/perf.data" --symfs "$g/symfs"
done
# a filter: the thread's instructions, as the unfiltered report counts them
g="$tmp/workload"
if [ -f "$g/perf.data" ]; then
  "$ETMKIT_BIN" report -q --format=json --symfs "$g/symfs" "$g/perf.data" >"$tmp/all.json"
  tid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"][0]["tid"])' "$tmp/all.json")
  run "workload seed 1 --tid $tid" "$g/perf.data" --symfs "$g/symfs" --tid "$tid"
  python3 - "$tmp/all.json" "$tmp/r.json" "$tid" <<'PY' || fail=1
import json, sys
a, f, tid = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
want = [t for t in a['threads'] if t['tid'] == tid]
if [(t['tid'], t['instructions']) for t in f['threads']] != [(t['tid'], t['instructions']) for t in want]:
    print(f'FAIL --tid {tid}: threads {f["threads"]}, unfiltered {want}')
    sys.exit(1)
print(f'ok: --tid {tid}: {f["instructions"]} instructions, the thread\'s share of the unfiltered report')
PY
fi
# the shared real recording (Android, etm_test_loop; its binary is under symfs)
sh="${ETMKIT_SHARED:-}/testdata/perf"
if [ -f "$sh/files/perf_etm.data" ]; then
  run "perf_etm.data" "$sh/files/perf_etm.data" --symfs "$sh/symfs"
  grep -q "etm_test_loop" "$tmp/r.txt" || { echo "FAIL perf_etm.data: etm_test_loop is not in the report"; fail=1; }
  # kernel trace without the kernel image: what a module ran, and the account of the rest
  run "perf_kernel.data" "$sh/files/perf_kernel.data" --symfs "$sh/symfs"
  grep -q "wakeup_user (/vendor/lib/modules/rq_stats.ko)" "$tmp/r.txt" &&
    grep -q "no kernel image" "$tmp/r.txt" ||
    { echo "FAIL perf_kernel.data: the module's function or the missing kernel is not in the report"; fail=1; }
else
  echo "skipped: perf_etm.data (no ../shared)"
fi
[ "$n" -gt 0 ] || { echo "SKIP: nothing ran"; exit 77; }
exit $fail
