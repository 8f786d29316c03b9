#!/bin/sh
# Snapshot folders written by `etmkit gen` are read by `etmkit dump` without a diagnostic and
# read and decoded by OpenCSD's trc_pkt_lister (Debian's 1.3.3) without errors, and both
# decodes (the lister's and `etmkit dump --decode`) agree exactly with the simulator's ground
# truth, trace source by trace source: the branch samples perf's policy makes of the listed
# elements (the last instruction of every range executed as a taken branch, and of a range
# that an exception or the end of the trace follows), in order, are the source addresses of
# that CPU's lines of OUT/expected-branches.txt (`tr strt` lines aside).
set -eu
command -v trc_pkt_lister >/dev/null 2>&1 || { echo "SKIP: trc_pkt_lister is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cmp.py" <<'PY'
import os, re, sys
# cmp.py LISTING TRUTH SNAPSHOT_DIR [BUFFER]: every CPU of the snapshot (its trace ID from its
# source's TRCTRACEIDR); with BUFFER, only the CPU that buffer holds and, in a multi-session
# listing, only that buffer's section (multi-session decodes every buffer with the decode tree
# of the first source, as OpenCSD does, so trace IDs do not tell buffers apart)
listing, truth, ss = sys.argv[1], sys.argv[2], sys.argv[3]
buf = sys.argv[4] if len(sys.argv) > 4 else None
lines = open(listing).read().split('\n')
if buf is not None and any(l.startswith('####### Multi Session decode') for l in lines):
    sel, on = [], False
    for l in lines:
        if l.startswith('####### Multi Session decode'):
            on = l.rstrip('.').endswith('Source name = %s' % buf)
        elif on:
            sel.append(l)
    lines = sel
ids = {}
for f in os.listdir(ss):
    m = re.fullmatch(r'(ETM|ETE)_(\d+)\.ini', f)
    if m:
        t = re.search(r'TRCTRACEIDR\(0x010\)=0x([0-9a-fA-F]+)', open(os.path.join(ss, f)).read())
        ids[int(m.group(2))] = '%x' % (int(t.group(1), 16) & 0x7f)
cpus = sorted(ids) if buf is None or not buf.startswith('TRBE_') else [int(buf[5:])]
bad, nr, nb = 0, 0, 0
for cpu in cpus:
    a = []  # the samples' source addresses from the listing: perf's rule
    prev = None  # (last instruction, executed as a taken branch)
    for line in lines:
        if buf is None or not buf.startswith('TRBE_'):
            if not re.search(r'\bID:%s;' % ids[cpu], line):
                continue
        m = re.search(r'INSTR_RANGE\(exec range=0x[0-9a-f]+:\[0x([0-9a-f]+)\].*\) ([EN]) ', line)
        if m:
            if prev and prev[1]:
                a.append(prev[0])
            prev = (int(m.group(1), 16) - 4, m.group(2) == 'E')
            nr += 1
        elif re.search(r'ELEM_(EXCEPTION|NO_SYNC|EO_TRACE|TRACE_ON)\(', line) and prev:
            a.append(prev[0])
            prev = None
    if prev and prev[1]:
        a.append(prev[0])
    b = []
    for line in open(truth):
        if '[%03d]' % cpu not in line or 'tr strt' in line:
            continue
        f = line.split()
        ip = next((x for x in f[2:] if re.fullmatch(r'[0-9a-f]+', x)), None)
        b.append(int(ip, 16))
    nb += len(b)
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            bad += 1
            if bad <= 5:
                print("  cpu %d sample %d: listing %s, truth %s" % (cpu, i, hex(x) if x is not None else "none",
                                                              hex(y) if y is not None else "none"))
print("%d executed ranges, %d truth branches, %d differences" % (nr, nb, bad))
sys.exit(1 if bad or not nb else 0)
PY
fail=0
for sc in $("$ETMKIT_BIN" gen --list | awk '$1 ~ /^snapshot-/ {print $1}'); do
  seeds="1 2 3 4 5"
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
      if res=$(python3 "$tmp/cmp.py" "$out/dump-decode.txt" "$out/expected-branches.txt" "$ss"); then
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
      if res=$(python3 "$tmp/cmp.py" "$lst" "$out/expected-branches.txt" "$ss" "$buf"); then
        echo "ok: $sc seed $seed $buf: trc_pkt_lister: $res"
      else
        echo "FAIL: $sc seed $seed $buf: trc_pkt_lister and ground truth differ:"; echo "$res"; fail=1
      fi
      # etmkit's own decoder (every buffer in one run) against the same truth
      if [ "${buf#TRBE_}" != "$buf" ]; then
        res=$(python3 "$tmp/cmp.py" "$out/dump-decode.txt" "$out/expected-branches.txt" "$ss" "$buf") || {
          echo "FAIL: $sc seed $seed $buf: etmkit dump --decode and ground truth differ:"; echo "$res"; fail=1; continue; }
        echo "ok: $sc seed $seed $buf: etmkit dump --decode: $res"
      fi
    done
  done
done
exit $fail
