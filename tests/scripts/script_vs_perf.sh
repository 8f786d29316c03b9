#!/bin/bash
# etmkit script against Linux perf 6.1 on every recording in testdata/perf/files, as published
# (simpleperf's AUXTRACE index variant included), for the three option sets of
# testdata/README.md. Runs of blanks are folded before comparing.
#
# Where perf 6.1 is wrong, tests/golden/script-vs-perf/<recording>.<kind>.diff holds the exact
# difference (`diff perf etmkit` of the folded texts) after '#' lines that say why; docs/SCRIPT.md
# ("etmkit script and perf 6.1") gives the proof. Without such a file the outputs must be equal.
set -u
S=${ETMKIT_SHARED:-}/testdata/perf
if [ ! -d "$S/files" ] || [ ! -d "$S/expected-perf-6.1" ]; then
  echo "SKIP: $S is absent (../shared/testdata/perf)"
  exit 77
fi
G=$ETMKIT_SRC/tests/golden/script-vs-perf
tmp=$(mktemp -d)
mkdir "$tmp/no-cache" # an empty build-id cache: only symfs counts
trap 'rm -rf "$tmp"' EXIT
fold() { tr -s ' \t' ' ' | sed 's/^ //; s/ $//'; }
fail=0; n=0
for f in "$S"/files/*; do
  [ -f "$f" ] || continue
  [ "$(head -c 8 "$f" 2>/dev/null | tr -d '\000')" = "PERFILE2" ] || continue
  b=$(basename "$f")
  for kind in branches instr100 lbr16; do
    exp="$S/expected-perf-6.1/$b.$kind.txt"
    [ -f "$exp" ] || continue
    case $kind in
      branches) opts=(--itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr) ;;
      instr100) opts=(--itrace=i100i -F pid,tid,cpu,period,ip,sym,symoff,dso) ;;
      lbr16)    opts=(--itrace=i64il16 -F ip,brstack) ;;
    esac
    n=$((n + 1))
    # exit status 1 means "nothing usable" (e.g. no trace data at all); more is a failure
    "$ETMKIT_BIN" script -q --buildid-dir "$tmp/no-cache" --symfs "$S/symfs" "${opts[@]}" "$f" \
      >"$tmp/out.raw" 2>"$tmp/err"
    rc=$?
    if [ $rc -gt 1 ] || { [ $rc -eq 1 ] && [ -s "$tmp/out.raw" ]; }; then
      echo "FAIL $b $kind: etmkit script exit status $rc: $(head -3 "$tmp/err")"
      fail=1; continue
    fi
    fold <"$tmp/out.raw" >"$tmp/out"
    fold <"$exp" >"$tmp/exp"
    diff "$tmp/exp" "$tmp/out" >"$tmp/diff"
    if [ -f "$G/$b.$kind.diff" ]; then
      grep -v '^#' "$G/$b.$kind.diff" >"$tmp/want"
      if ! cmp -s "$tmp/want" "$tmp/diff"; then
        echo "FAIL $b $kind: the difference from perf is not the documented one ($G/$b.$kind.diff):"
        diff "$tmp/want" "$tmp/diff" | head -20
        fail=1
      fi
    elif [ -s "$tmp/diff" ]; then
      echo "FAIL $b $kind: differs from perf 6.1 ($(grep -c '^[<>]' "$tmp/diff") lines):"
      head -20 "$tmp/diff"
      fail=1
    fi
  done
done
[ "$n" -gt 0 ] || { echo "SKIP: no recordings with expected outputs"; exit 77; }
[ "$fail" -eq 0 ] && echo "script vs perf: $n comparisons ok"
exit $fail
