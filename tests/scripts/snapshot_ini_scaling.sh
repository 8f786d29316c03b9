#!/bin/sh
# The snapshot reader takes time in proportion to its ini files: each register of a device file
# was compared with every one kept before it, and each buffer of trace.ini with every buffer
# before it (its section looked up by a scan of the file's sections, then scans for a section
# listed twice and for names used twice), so that 150 000 registers (1.7 MB) or 60 000 buffers
# (3.7 MB) ran for minutes. Here: snapshot-etr with 500 000 more registers in ETM_0.ini (6 MB;
# the old code: about 5 minutes) and with 200 000 more buffers in trace.ini (9 MB; about 4
# minutes), each listed by dump under a timeout only a hang reaches (now: well under a second
# each); the listing and the (empty) diagnostics are the snapshot's own.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$ETMKIT_BIN" gen -q --scenario snapshot-etr -o "$tmp/g" >/dev/null 2>&1 || { echo "FAIL: gen snapshot-etr"; exit 1; }
"$ETMKIT_BIN" dump "$tmp/g/snapshot" >"$tmp/want.out" 2>"$tmp/want.err" || { echo "FAIL: dump of the snapshot"; exit 1; }
# check WHAT DIR: dump DIR lists what the snapshot lists
check() {
    timeout 120 "$ETMKIT_BIN" dump "$2" >"$tmp/got.out" 2>"$tmp/got.err"
    rc=$?
    [ "$rc" = 0 ] || { echo "FAIL: $1: exit status $rc (124: the timeout)"; head -5 "$tmp/got.err"; fail=1; }
    cmp -s "$tmp/got.out" "$tmp/want.out" || { echo "FAIL: $1: the listing differs"; fail=1; }
    cmp -s "$tmp/got.err" "$tmp/want.err" || { echo "FAIL: $1: stderr:"; diff "$tmp/want.err" "$tmp/got.err" | head -5; fail=1; }
}
cp -r "$tmp/g/snapshot" "$tmp/regs"
seq 1 500000 | awk '{ print "R" $1 "=0x1" }' >>"$tmp/regs/ETM_0.ini"
check "ETM_0.ini with 500000 more registers" "$tmp/regs"
rm -rf "$tmp/regs"

cp -r "$tmp/g/snapshot" "$tmp/bufs"
grep -q '^buffers=buffer0$' "$tmp/g/snapshot/trace.ini" || { echo "FAIL: no buffers=buffer0 line"; exit 1; }
awk -v n=200000 '
    /^buffers=buffer0$/ { printf "buffers=buffer0"; for (i = 1; i <= n; i++) printf ",b%d", i; print ""; next }
    /^\[source_buffers\]$/ { for (i = 1; i <= n; i++) printf "[b%d]\nname=B%d\nfile=cstrace.bin\n", i, i }
    { print }' "$tmp/g/snapshot/trace.ini" >"$tmp/bufs/trace.ini"
check "trace.ini with 200000 more buffers" "$tmp/bufs"
[ "$fail" = 0 ] && echo "ok: 500000 registers, 200000 buffers read in linear time"
exit "$fail"
