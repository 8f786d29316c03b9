#!/bin/bash
# etmkit doctor's wording:
#  - a clean `etmkit gen` recording (every scenario that loses nothing, seed 1) has no causes:
#    "All trace was decoded." (formatter padding under the null trace ID is overhead, not lost
#    trace; snapshot mode's overwritten AUX records and perf's 8-byte AUXTRACE padding are not
#    problems);
#  - causes are problems only: notes are counted in one line, and listed under their own
#    heading with -v;
#  - internal diagnostic ids ("[flow.bad-packet]") appear with -v only;
#  - counts agree with their nouns ("1 place", "branch samples").
# Exact outputs are pinned by tests/golden/doctor/gen-*.txt (etmkit gen, seed 1; for
# gen-session-arbitration-1.txt seed 5, whose refused session has one empty TRUNCATED AUX
# record: the singular forms) and, when
# ../shared is present, tests/golden/doctor/perf_kernel.data@16f41ffd_2021*.txt.
set -u -o pipefail
G=$ETMKIT_SRC/tests/golden/doctor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
all=$tmp/all-outputs # every doctor output, for the wording checks at the end
: >"$all"
# an empty build-id cache (--buildid-dir must exist): only symfs counts; the output names it
# CACHE, so that the pinned outputs do not depend on the temporary folder
cache=$tmp/cache
mkdir "$cache"

# doctor DIR FILE [options]: run in DIR (paths in the output stay short); output in $tmp/out.
# The exit status is 0, or 1 for a recording of which not one sample came out while it has
# problems (issue 11, item 4: nothing usable).
doctor() {
  local dir=$1 file=$2
  shift 2
  (cd "$dir" && "$ETMKIT_BIN" doctor "$@" "$file") >"$tmp/out.raw" 2>"$tmp/err"
  local rc=$?
  sed "s|$cache|CACHE|g" "$tmp/out.raw" >"$tmp/out"
  cat "$tmp/out" >>"$all"
  if [ $rc -eq 1 ] && sed -n 3p "$tmp/out" | grep -q ' 0 branch samples, 0 instruction samples$' &&
     grep -q '^Not turned into samples' "$tmp/out"; then
    return 0
  fi
  if [ $rc -ne 0 ]; then
    echo "FAIL doctor $* $dir/$file: exit status $rc: $(head -2 "$tmp/err")"
    fail=1
    return 1
  fi
}
golden() { # name: $tmp/out must equal $G/name
  if ! diff -u "$G/$1" "$tmp/out" >"$tmp/d"; then
    echo "FAIL: doctor output differs from $G/$1:"
    head -40 "$tmp/d"
    fail=1
  fi
}
ids='\[[a-z0-9]+\.[a-z0-9.-]+\]'

# 1. clean simulated recordings
clean="basic per-thread kernel-and-user dlopen-reuse mmap2-after-aux multi-aux-per-auxtrace
shared-sink-multi-cpu session-arbitration per-cpu-trbe snapshot-wrap header-v0 header-v2 workload
trace-id-per-sink jit-reuse two-processes"
for sc in $clean flush-partial-packet; do
  "$ETMKIT_BIN" gen --scenario "$sc" --seed 1 -o "$tmp/$sc" >"$tmp/gen.log" 2>&1 ||
    { echo "FAIL: etmkit gen --scenario $sc: $(tail -2 "$tmp/gen.log")"; fail=1; continue; }
done
for sc in $clean; do
  [ -f "$tmp/$sc/perf.data" ] || continue
  doctor "$tmp/$sc" perf.data --symfs symfs || continue
  if ! grep -qx 'All trace was decoded.' "$tmp/out" || grep -q '^Not turned into samples' "$tmp/out" ||
     grep -q '^\[[0-9]' "$tmp/out"; then
    echo "FAIL $sc: a clean recording, yet doctor reports causes:"
    sed -n '4,20p' "$tmp/out"
    fail=1
  fi
  doctor "$tmp/$sc" perf.data --symfs symfs -v
done

# 2. notes, ids and singular forms, exactly (etmkit gen is deterministic for a seed)
doctor "$tmp/snapshot-wrap" perf.data --symfs symfs && golden gen-snapshot-wrap.txt
doctor "$tmp/snapshot-wrap" perf.data --symfs symfs -v && golden gen-snapshot-wrap.v.txt
"$ETMKIT_BIN" gen --scenario session-arbitration --seed 5 -o "$tmp/sa5" >"$tmp/gen.log" 2>&1 ||
  { echo "FAIL: etmkit gen --scenario session-arbitration --seed 5: $(tail -2 "$tmp/gen.log")"; fail=1; }
doctor "$tmp/sa5" perf-1.data --symfs symfs && golden gen-session-arbitration-1.txt
doctor "$tmp/flush-partial-packet" perf.data --symfs symfs && golden gen-flush-partial-packet.txt
grep -Eq "$ids" "$tmp/out" && { echo "FAIL: diagnostic ids without -v"; fail=1; }
doctor "$tmp/flush-partial-packet" perf.data --symfs symfs -v && golden gen-flush-partial-packet.v.txt
grep -q ' \[flow.bad-packet\]$' "$tmp/out" || { echo "FAIL: no diagnostic id with -v"; fail=1; }
# a file of another build (docs/SCRIPT.md, "Build-id mismatch"; etmkit gen --scenario
# buildid-mismatch): the cause names the file's build-id, the recorded one and the build-id
# cache entry to create
"$ETMKIT_BIN" gen --scenario buildid-mismatch --seed 1 -o "$tmp/bm" >"$tmp/gen.log" 2>&1 ||
  { echo "FAIL: etmkit gen --scenario buildid-mismatch: $(tail -2 "$tmp/gen.log")"; fail=1; }
if doctor "$tmp/bm" perf.data --symfs symfs; then
  have=$(llvm-readelf -n "$tmp/bm/symfs/usr/lib/libsima.so" 2>/dev/null | awk '/Build ID:/ { print $3 }')
  want=$("$ETMKIT_BIN" dump "$tmp/bm/perf.data" 2>/dev/null |
    awk '$1 == "build-id" && $NF == "/usr/lib/libsima.so" { print $2 }')
  if [ -z "$have" ] || [ -z "$want" ] || [ "$have" = "$want" ] ||
     ! grep -q "libsima.so has build-id $have, the recording says $want: another build" "$tmp/out" ||
     ! grep -q "~/.debug/.build-id/${want:0:2}/${want:2}/elf" "$tmp/out"; then
    echo "FAIL buildid-mismatch: doctor does not name build-ids $have (the file) and $want (recorded):"
    grep -A3 'libsima' "$tmp/out" | head -6
    fail=1
  fi
fi

# 3. the shared recordings, when present: no ids without -v; one pinned exactly
S=${ETMKIT_SHARED:-}/testdata/perf
if [ -d "$S/files" ]; then
  for f in "$S"/files/*; do
    [ "$(head -c 8 "$f" 2>/dev/null | tr -d '\000')" = "PERFILE2" ] || continue
    b=$(basename "$f")
    doctor "$S" "files/$b" --buildid-dir "$cache" --symfs symfs || continue
    if grep -Eq "$ids" "$tmp/out"; then
      echo "FAIL $b: diagnostic ids without -v:"
      grep -E "$ids" "$tmp/out" | head -3
      fail=1
    fi
    doctor "$S" "files/$b" --buildid-dir "$cache" --symfs symfs -v
  done
  b=perf_kernel.data@16f41ffd_2021
  doctor "$S" "files/$b" --buildid-dir "$cache" --symfs symfs && golden "$b.txt"
  doctor "$S" "files/$b" --buildid-dir "$cache" --symfs symfs -v && golden "$b.v.txt"
else
  echo "note: $S is absent: the shared recordings are not checked"
fi

# 4. counts agree with their nouns, in every output above
bad=$(grep -En '(^|[^0-9x.])1 (places|trace bytes|bytes|instructions|branch samples|instruction samples|causes|notes|AUX records|AUX slices|queues|entries|times)\b|\b(0|[2-9]|[1-9][0-9]+) (place|trace byte|byte|AUX record|AUX slice|queue|entry|cause|note) |branches samples|instructions samples|\(s\)| x [a-z]+\.[a-z-]+:' "$all")
if [ -n "$bad" ]; then
  echo "FAIL: counts and nouns disagree:"
  echo "$bad" | head -10
  fail=1
fi
[ $fail -eq 0 ] && echo "doctor wording ok ($(grep -c '' "$all") lines of doctor output checked)"
exit $fail
