#!/bin/sh
# Files written by Linux perf itself (pipe mode, and zstd COMPRESSED records): every record
# perf report -D sees is read, by type, with no warning. Skipped when perf cannot record here.
set -u
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
work='i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'
perf record -q -e cpu-clock -z -o "$tmp/z.data" -- sh -c "$work" >/dev/null 2>&1 ||
  { echo "SKIP: perf record does not work here"; exit 77; }
perf record -q -e cpu-clock -o - -- sh -c "$work" >"$tmp/pipe.data" 2>/dev/null ||
  { echo "SKIP: perf record -o - does not work here"; exit 77; }
for f in z.data pipe.data; do
  perf report -D -i "$tmp/$f" 2>/dev/null |
    grep -oE '^(-?[0-9]+ )*0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_[A-Z0-9_]+' |
    sed -e 's/.*PERF_RECORD_//' -e 's/^FEATURE$/HEADER_FEATURE/' | sort | uniq -c >"$tmp/perf.txt"
  "$ETMKIT_BIN" dump --records "$tmp/$f" >"$tmp/ours.txt" 2>"$tmp/err.txt" || fail "$f: exit $?"
  # perf does not list the COMPRESSED containers nor pipe-mode HEADER_ATTR records
  awk '$3 != "" && $3 != "COMPRESSED" && $3 != "HEADER_ATTR" {print $3}' "$tmp/ours.txt" |
    sort | uniq -c >"$tmp/ours-count.txt"
  diff "$tmp/perf.txt" "$tmp/ours-count.txt" || fail "$f: record counts differ from perf report -D"
  [ -s "$tmp/perf.txt" ] || fail "$f: perf listed no records"
  if grep -q 'warning\|error' "$tmp/err.txt"; then cat "$tmp/err.txt"; fail "$f: diagnostics"; fi
done
grep -q ' COMPRESSED ' "$tmp/ours.txt" && fail "pipe file should not be compressed"
"$ETMKIT_BIN" dump --records "$tmp/z.data" 2>/dev/null | grep -q '/z0x' || fail "no record came out of COMPRESSED data"
"$ETMKIT_BIN" dump --header "$tmp/pipe.data" 2>/dev/null | grep -q 'pipe mode' || fail "pipe mode not detected"
echo "Linux perf files ok"
