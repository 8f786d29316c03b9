#!/bin/sh
# The simulator's trace ID maps (coresight-trace-id.c): `etmkit gen --scenario
# trace-id-per-sink` (Linux 6.12+) allocates IDs per sink, CPU by CPU, from a pool of four and
# announces them in AUX_OUTPUT_HW_ID version 0.1 records with the sink's ID. Checks what the
# recording says (etmkit dump of the perf.data): each of the two sinks gives its four CPUs IDs
# 1-4 in CPU order, the sinks differ, every record is version 0.1; and that the default pool
# keeps the legacy IDs 0x10 + 2 * cpu (AUX_OUTPUT_HW_ID v0.0, header-v2).
set -u
[ -x "$ETMKIT_BIN" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$ETMKIT_BIN" gen -q --scenario trace-id-per-sink --seed 1 -o "$tmp/s" || { echo "FAIL: gen"; exit 1; }
"$ETMKIT_BIN" dump "$tmp/s/perf.data" >"$tmp/dump" 2>&1
grep 'AUX_OUTPUT_HW_ID' "$tmp/dump" | sed -n 's/.*(version \([0-9.]*\) trace ID \(0x[0-9a-f]*\) sink \([0-9]*\)) {[^ ]* time [0-9]* cpu \([0-9]*\) .*/cpu=\4 id=\2 sink=\3 v=\1/p' |
  sort -t= -k2 -n >"$tmp/hwid"
cat "$tmp/hwid"
[ "$(wc -l <"$tmp/hwid")" = 8 ] || { echo "FAIL: expected 8 AUX_OUTPUT_HW_ID records (one per CPU)"; fail=1; }
grep -qv ' v=0.1$' "$tmp/hwid" && { echo "FAIL: a record is not version 0.1"; fail=1; }
sa=$(awk '$1 == "cpu=0" { print $3 }' "$tmp/hwid"); sb=$(awk '$1 == "cpu=4" { print $3 }' "$tmp/hwid")
[ -n "$sa" ] && [ "$sa" != "$sb" ] || { echo "FAIL: the two clusters should report different sinks ($sa, $sb)"; fail=1; }
for c in 0 1 2 3 4 5 6 7; do
  want_id=0x$((c % 4 + 1)); want_sink=$sa; [ $c -ge 4 ] && want_sink=$sb
  grep -qx "cpu=$c id=$want_id $want_sink v=0.1" "$tmp/hwid" ||
    { echo "FAIL: cpu $c should have trace ID $want_id in $want_sink"; fail=1; }
done
# the decoder's view: one map per sink, no clash reported
"$ETMKIT_BIN" dump --config "$tmp/s/perf.data" 2>&1 | grep -q 'trace IDs from AUX_OUTPUT_HW_ID v0.1 (per sink)' ||
  { echo "FAIL: dump --config does not see per-sink IDs"; fail=1; }
# Linux 6.4-6.11 (v0.0, one global map with 0x6f IDs): the legacy IDs
"$ETMKIT_BIN" gen -q --scenario header-v2 --seed 1 -o "$tmp/v2" || { echo "FAIL: gen header-v2"; exit 1; }
"$ETMKIT_BIN" dump "$tmp/v2/perf.data" 2>&1 | grep 'AUX_OUTPUT_HW_ID' |
  sed -n 's/.*(version \([0-9.]*\) trace ID \(0x[0-9a-f]*\) sink [0-9]*) {[^ ]* time [0-9]* cpu \([0-9]*\) .*/\3 \2 \1/p' | sort -u >"$tmp/v2ids"
printf '0 0x10 0.0\n1 0x12 0.0\n' | cmp -s - "$tmp/v2ids" || { echo "FAIL: header-v2 IDs:"; cat "$tmp/v2ids"; fail=1; }
[ $fail = 0 ] && echo "ok: per-sink trace IDs 1-4 in two sinks; legacy IDs with the global map"
exit $fail
