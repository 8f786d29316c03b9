#!/bin/sh
# Snapshot folders written by `etmkit gen` are read by `etmkit dump` without a diagnostic and
# read and decoded by OpenCSD's trc_pkt_lister (Debian's 1.3.3) without errors, and both
# decodes (the lister's and `etmkit dump --decode`) agree with the simulator's ground truth:
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
import sys, re
# cmp.py LISTING TRUTH [CPU]: with CPU, only that CPU's truth lines and, in a multi-session
# listing, only the section of buffer TRBE_<CPU> (multi-session decodes every buffer with the
# decode tree of the first source, as OpenCSD does, so trace IDs do not tell buffers apart)
listing, truth, cpu = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else None)
lines = open(listing).read().split('\n')
if cpu is not None and any(l.startswith('####### Multi Session decode') for l in lines):
    sel, on = [], False
    for l in lines:
        if l.startswith('####### Multi Session decode'):
            on = l.rstrip('.').endswith('Source name = TRBE_%s' % cpu)
        elif on:
            sel.append(l)
    lines = sel
a, ids = [], []
for line in lines:
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
# walk both in order: a lister range missing from the truth must be its trace ID's last one
bad, j = 0, 0
for i, x in enumerate(a):
    if j < len(b) and b[j] == x:
        j += 1
    elif last[ids[i]] != i:
        bad += 1
        if bad <= 5:
            print("  lister range %d (ID %s) ends at %#x, truth branch %d is %s" %
                  (i, ids[i], x, j, hex(b[j]) if j < len(b) else "past the end"))
if j < len(b):
    bad += 1
    print("  %d truth branches left over from %#x" % (len(b) - j, b[j]))
print("%d executed ranges, %d truth branches, %d differences" % (len(a), len(b), bad))
sys.exit(1 if bad or not b else 0)
PY
fail=0
for sc in $("$ETMKIT_BIN" gen --list | awk '$1 ~ /^snapshot-/ {print $1}'); do
  seeds="1 7"
  [ "${ETMKIT_SANITIZE:-0}" = 1 ] && seeds=1 # the lister's own time does not depend on the build
  for seed in $seeds; do
    out="$tmp/$sc-$seed"
    "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" -o "$out" 2>/dev/null || { echo "FAIL: gen $sc $seed"; fail=1; continue; }
    ss="$out/snapshot"
    [ -d "$ss" ] || continue # a perf -S (snapshot mode) recording, not a snapshot folder
    [ -f "$ss/snapshot.ini" ] || { echo "FAIL: $sc: no snapshot.ini"; fail=1; continue; }
    # etmkit's own snapshot reader takes it without a diagnostic
    if ! "$ETMKIT_BIN" dump "$ss" >"$out/dump.txt" 2>"$out/dump.err" || [ -s "$out/dump.err" ]; then
      echo "FAIL: $sc seed $seed: etmkit dump:"; head -5 "$out/dump.err"; fail=1
    fi
    "$ETMKIT_BIN" dump --format=ocsd --decode --multi-session "$ss" >"$out/dump-decode.txt" 2>/dev/null || {
      echo "FAIL: $sc seed $seed: etmkit dump --decode failed"; fail=1; }
    if [ "$(sed -n 's/^name=//p' "$ss/trace.ini" | wc -l)" = 1 ]; then
      if res=$(python3 "$tmp/cmp.py" "$out/dump-decode.txt" "$out/expected-branches.txt"); then
        echo "ok: $sc seed $seed: etmkit dump --decode: $res"
      else
        echo "FAIL: $sc seed $seed: etmkit dump --decode and ground truth differ:"; echo "$res"; fail=1
      fi
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
        echo "ok: $sc seed $seed $buf: trc_pkt_lister: $res"
      else
        echo "FAIL: $sc seed $seed $buf: trc_pkt_lister and ground truth differ:"; echo "$res"; fail=1
      fi
      # etmkit's own decoder (every buffer in one run) against the same truth
      if [ -n "$cpu" ]; then
        res=$(python3 "$tmp/cmp.py" "$out/dump-decode.txt" "$out/expected-branches.txt" $cpu) || {
          echo "FAIL: $sc seed $seed $buf: etmkit dump --decode and ground truth differ:"; echo "$res"; fail=1; continue; }
        echo "ok: $sc seed $seed $buf: etmkit dump --decode: $res"
      fi
    done
  done
done
exit $fail
