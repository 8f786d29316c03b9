#!/bin/sh
# A snapshot buffer whose file= names no regular file is not read: the snapshot reader says
# it cannot be read (not a regular file), and dump (the lister) and script (the session) stop
# there with exit status 1.
#  - a FIFO: the reader's check opened it and waited for a writer, for ever (the timeout);
#  - /dev/zero: both commands read it whole, growing without end (8 GB in 9 s): peak memory
#    stays within 1.5x of the clean snapshot's, under a limit that makes the old behaviour fail
#    rather than take the machine (both in the normal build only: ASan changes memory use and
#    cannot run under a limit).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$ETMKIT_BIN" gen -q --scenario snapshot-etr -o "$tmp/g" >/dev/null 2>&1 || { echo "FAIL: gen snapshot-etr"; exit 1; }
mkfifo "$tmp/fifo" || { echo "FAIL: mkfifo"; exit 1; }
# a memory limit for the runs (not under ASan, whose shadow memory cannot live under one)
limit() { [ "${ETMKIT_SANITIZE:-0}" = 1 ] || ulimit -v 4000000; }
# check CMD DIR FILE: exit status 1, and the two lines that say why
check() {
    [ "$rc" = 1 ] || { echo "FAIL: $1 on $3: exit status $rc, expected 1"; cat "$tmp/err"; fail=1; }
    grep -q "trace file '$3' of buffer ETR_0 cannot be read (not a regular file)" "$tmp/err" ||
        { echo "FAIL: $1 on $3: no line says the buffer's file cannot be read:"; cat "$tmp/err"; fail=1; }
    grep -q "$3: error: cannot read trace buffer ETR_0" "$tmp/err" ||
        { echo "FAIL: $1 on $3: no line says the buffer was not read:"; cat "$tmp/err"; fail=1; }
}
for f in "$tmp/fifo" /dev/zero; do
    rm -rf "$tmp/z"
    cp -r "$tmp/g/snapshot" "$tmp/z"
    sed -i "s|^file=cstrace.bin\$|file=$f|" "$tmp/z/trace.ini"
    grep -q "^file=$f\$" "$tmp/z/trace.ini" || { echo "FAIL: the buffer's file= line was not found"; exit 1; }
    for cmd in dump script; do
        (limit; timeout 60 "$ETMKIT_BIN" $cmd "$tmp/z") >/dev/null 2>"$tmp/err"
        rc=$?
        check $cmd "$tmp/z" "$f"
    done
done
if [ "${ETMKIT_SANITIZE:-0}" != 1 ] && [ -x /usr/bin/time ]; then
    for cmd in dump script; do
        /usr/bin/time -f %M -o "$tmp/clean.kib" "$ETMKIT_BIN" $cmd "$tmp/g/snapshot" >/dev/null 2>&1
        (limit; /usr/bin/time -f %M -o "$tmp/zero.kib" "$ETMKIT_BIN" $cmd "$tmp/z") >/dev/null 2>&1
        clean=$(tail -1 "$tmp/clean.kib") zero=$(tail -1 "$tmp/zero.kib")
        [ $((zero * 2)) -le $((clean * 3)) ] ||
            { echo "FAIL: $cmd on /dev/zero: peak $zero KiB, the clean snapshot's $clean KiB"; fail=1; }
    done
fi
[ "$fail" = 0 ] && echo "ok: buffers on a FIFO and on /dev/zero are not read (dump, script)"
exit "$fail"
