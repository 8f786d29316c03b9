#!/bin/sh
# Snapshot folders written by `etmkit gen` are read by `etmkit dump` without a diagnostic and
# read and decoded by OpenCSD's trc_pkt_lister (Debian's 1.3.3) without errors, and the decode agrees with the simulator's ground truth:
# the executed instruction ranges (E) the lister prints, in order, are the branches of
# OUT/expected-branches.txt (one line per taken branch or exception, `tr strt` lines aside),
# except that the last range of a trace ID may be missing from the truth (perf's sample policy,
# which the ground truth follows, reports a branch only once a later packet closes it).
set -eu
command -v trc_pkt_lister >/dev/null 2>&1 || { echo "SKIP: trc_pkt_lister is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cmp.py" <<'PY'
import sys, re, difflib
listing, truth, cpu = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else None)
a, ids = [], []
for line in open(listing):
    m = re.search(r'ID:([0-9a-f]+);.*INSTR_RANGE\(exec range=0x[0-9a-f]+:\[0x([0-9a-f]+)\].*\) E ', line)
    if m:
        ids.append(m.group(1))
        a.append(int(m.group(2), 16) - 4)
b = []
for line in open(truth):
    if cpu is not None and '[%03d]' % int(cpu) not in line:
        continue
    f = line.split()
    ip = next((x for x in f[2:] if re.fullmatch(r'[0-9a-f]+', x)), None)
    if 'tr strt' in line or ip is None or ip == '0':
        continue
    b.append(int(ip, 16))
last = {d: i for i, d in enumerate(ids)}
bad = 0
for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
    if op == 'equal' or (op == 'delete' and all(last[ids[i]] == i for i in range(i1, i2))):
        continue
    bad += 1
    if bad <= 5:
        print("  %s lister[%d:%d]=%s truth[%d:%d]=%s" % (op, i1, i2, [hex(x) for x in a[i1:i2]][:4],
                                                     j1, j2, [hex(x) for x in b[j1:j2]][:4]))
print("%d executed ranges, %d truth branches, %d differences" % (len(a), len(b), bad))
sys.exit(1 if bad or not b else 0)
PY
fail=0
for sc in $("$ETMKIT_BIN" gen --list | awk '$1 ~ /^snapshot-/ {print $1}'); do
  for seed in 1 7; do
    out="$tmp/$sc-$seed"
    "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" -o "$out" 2>/dev/null || { echo "FAIL: gen $sc $seed"; fail=1; continue; }
    ss="$out/snapshot"
    [ -d "$ss" ] || continue # a perf -S (snapshot mode) recording, not a snapshot folder
    [ -f "$ss/snapshot.ini" ] || { echo "FAIL: $sc: no snapshot.ini"; fail=1; continue; }
    # etmkit's own snapshot reader takes it without a diagnostic
    if ! "$ETMKIT_BIN" dump "$ss" >"$out/dump.txt" 2>"$out/dump.err" || [ -s "$out/dump.err" ]; then
      echo "FAIL: $sc seed $seed: etmkit dump:"; head -5 "$out/dump.err"; fail=1
    fi
    # one run per buffer; raw buffers carry one CPU each
    bufs=$(sed -n 's/^name=//p' "$ss/trace.ini")
    for buf in $bufs; do
      lst="$out/$buf.ppl"
      (cd "$ss" && trc_pkt_lister -ss_dir . -decode -src_name "$buf" -logstdout) >"$lst" 2>&1 || {
        echo "FAIL: $sc seed $seed $buf: trc_pkt_lister exit status $?"; fail=1; continue; }
      if grep -q -E "not found|ERR|NACC|BAD_" "$lst"; then
        echo "FAIL: $sc seed $seed $buf: the lister reports problems:"; grep -E "not found|ERR|NACC|BAD_" "$lst" | head -5; fail=1; continue
      fi
      grep -q "END OF TRACE DATA" "$lst" || { echo "FAIL: $sc seed $seed $buf: no end of trace"; fail=1; continue; }
      cpu=""
      case "$buf" in TRBE_*) cpu=${buf#TRBE_} ;; esac
      if res=$(python3 "$tmp/cmp.py" "$lst" "$out/expected-branches.txt" $cpu); then
        echo "ok: $sc seed $seed $buf: $res"
      else
        echo "FAIL: $sc seed $seed $buf: lister and ground truth differ:"; echo "$res"; fail=1
      fi
    done
  done
done
exit $fail
