#!/bin/bash
# etmkit dump --packets on every recording in testdata/perf/files against perf report -D (perf
# 6.1, OpenCSD 1.3.3; testdata/perf/expected-perf-6.1/*.packets.txt.xz, made by make-oracles.sh
# from the fixed-index copies): the packet lines, exactly and in order.
#
# perf dumps at each AUXTRACE record every AUX slice of the buffers whose `reference` is that
# record's (tools/perf/util/cs-etm.c, dump_queued_data); etmkit does the same, so a simpleperf
# recording (reference 0 in every buffer) lists all its slices again at each record, in both.
# Where the lines still differ, tests/golden/dump-perf-packets/<recording>.diff holds the exact
# difference (`diff perf etmkit`) after '#' lines that say why; without such a file the lines
# must be equal. Every packet line must come after an AUXTRACE record line (its slice's).
set -u
S=${ETMKIT_SHARED:-}/testdata/perf
if [ ! -d "$S/files" ] || [ ! -d "$S/expected-perf-6.1" ]; then
  echo "SKIP: $S is absent (../shared/testdata/perf)"
  exit 77
fi
command -v xz >/dev/null 2>&1 || { echo "SKIP: xz is not installed"; exit 77; }
G=$ETMKIT_SRC/tests/golden/dump-perf-packets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkt='I_[A-Z0-9_]+ :'

# etmkit's packet lines, each checked to follow an AUXTRACE record (and its trace header)
packets() {
  awk -v pkt="$pkt" '
    /^0x[0-9a-f]+ #[0-9]+ / { in_aux = ($0 ~ / AUXTRACE \[/); next }
    $0 ~ pkt {
        if (!in_aux) { print "packet line outside an AUXTRACE record: " $0 > "/dev/stderr"; bad = 1 }
        print
    }
    END { exit bad }' "$1"
}

fail=0; n=0; lines=0
for f in "$S"/files/*; do
  [ -f "$f" ] || continue
  [ "$(head -c 8 "$f" 2>/dev/null | tr -d '\000')" = "PERFILE2" ] || continue
  b=$(basename "$f")
  exp="$S/expected-perf-6.1/$b.packets.txt.xz"
  if [ ! -f "$exp" ]; then
    echo "note: $b has no packets oracle (perf report -D); not compared"
    continue
  fi
  n=$((n + 1))
  "$ETMKIT_BIN" dump --packets -q "$f" >"$tmp/dump" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL $b: etmkit dump --packets exit status $rc: $(head -3 "$tmp/err")"
    fail=1; continue
  fi
  if ! packets "$tmp/dump" >"$tmp/ours"; then
    echo "FAIL $b: the listing does not have the shape this test reads"
    fail=1; continue
  fi
  xz -dc "$exp" | grep -E "$pkt" >"$tmp/perf"
  lines=$((lines + $(wc -l <"$tmp/perf")))
  diff "$tmp/perf" "$tmp/ours" >"$tmp/diff"
  if [ -f "$G/$b.diff" ]; then
    grep -v '^#' "$G/$b.diff" >"$tmp/want"
    if ! cmp -s "$tmp/want" "$tmp/diff"; then
      echo "FAIL $b: the difference from perf report -D is not the documented one ($G/$b.diff):"
      diff "$tmp/want" "$tmp/diff" | head -20
      fail=1
    fi
  elif [ -s "$tmp/diff" ]; then
    echo "FAIL $b: differs from perf report -D ($(grep -c '^[<>]' "$tmp/diff") lines):"
    head -20 "$tmp/diff"
    fail=1
  fi
done
[ "$n" -gt 0 ] || { echo "SKIP: no recording has a packets oracle"; exit 77; }
[ "$fail" -eq 0 ] && echo "dump --packets vs perf report -D: $n recordings, $lines packet lines ok"
exit $fail
