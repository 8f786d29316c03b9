#!/bin/sh
# A snapshot buffer whose file= names no regular file is not read: the snapshot reader says
# it cannot be read (not a regular file), and dump (the lister) and script (the session) stop
# there with exit status 1.
#  - a FIFO: the reader's check opened it and waited for a writer, for ever (the timeout);
#  - /dev/zero: both commands read it whole, growing without end (8 GB in 9 s): peak memory
#    stays within 1.5x of the clean snapshot's, under a limit that makes the old behaviour fail
#    rather than take the machine (both in the normal build only: ASan changes memory use and
#    cannot run under a limit).
# A file that is not there is said the same way (No such file or directory). The problem is one
# line, the reader's, with its trace.ini line: the lister and the session said it again, as
# "cannot read trace buffer ETR_0" without the cause (two lines for one problem; they still
# say that line for a file the reader found but that cannot be read then).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$ETMKIT_BIN" gen -q --scenario snapshot-etr -o "$tmp/g" >/dev/null 2>&1 || { echo "FAIL: gen snapshot-etr"; exit 1; }
mkfifo "$tmp/fifo" || { echo "FAIL: mkfifo"; exit 1; }
# a memory limit for the runs (not under ASan, whose shadow memory cannot live under one)
limit() { [ "${ETMKIT_SANITIZE:-0}" = 1 ] || ulimit -v 4000000; }
line=$(grep -n '^file=cstrace.bin$' "$tmp/g/snapshot/trace.ini" | cut -d: -f1)
offset=$(head -n $((line - 1)) "$tmp/g/snapshot/trace.ini" | wc -c)
# check CMD DIR FILE WHY: exit status 1, and the one line that says why (script: and where to
# look further)
check() {
    [ "$rc" = 1 ] || { echo "FAIL: $1 on $3: exit status $rc, expected 1"; cat "$tmp/err"; fail=1; }
    msg=$(printf "%s/trace.ini: record %d: offset 0x%x: error: trace file '%s' of buffer ETR_0 cannot be read (%s) [snapshot.missing-file]" \
        "$2" "$line" "$offset" "$3" "$4")
    if [ "$1" = dump ]; then
        printf '%s\n' "$msg" >"$tmp/want"
    else
        printf "etmkit: %s\netmkit: run 'etmkit doctor %s' for the details and remedies\n" "$msg" "$2" >"$tmp/want"
    fi
    cmp -s "$tmp/err" "$tmp/want" || { echo "FAIL: $1 on $3: stderr:"; diff "$tmp/want" "$tmp/err"; fail=1; }
}
for f in "$tmp/not-there" "$tmp/fifo" /dev/zero; do # (/dev/zero last: $tmp/z below)
    rm -rf "$tmp/z"
    cp -r "$tmp/g/snapshot" "$tmp/z"
    sed -i "s|^file=cstrace.bin\$|file=$f|" "$tmp/z/trace.ini"
    grep -q "^file=$f\$" "$tmp/z/trace.ini" || { echo "FAIL: the buffer's file= line was not found"; exit 1; }
    for cmd in dump script; do
        (limit; timeout 60 "$ETMKIT_BIN" $cmd "$tmp/z") >/dev/null 2>"$tmp/err"
        rc=$?
        why="not a regular file"
        [ "$f" = "$tmp/not-there" ] && why="No such file or directory"
        check $cmd "$tmp/z" "$f" "$why"
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
[ "$fail" = 0 ] && echo "ok: buffers on a FIFO, on /dev/zero or missing are one line (dump, script)"
exit "$fail"
