#!/bin/sh
# An ini file of a snapshot that is no regular file is refused, not read: ek_ini_load opened a
# FIFO and waited for a writer, for ever (dump, script, doctor hung), and read /dev/zero whole
# (1 GB and more, then "not a usable trace snapshot (out of memory)": one bad device file made
# the whole snapshot unusable, for the wrong cause). Now:
#  - a device file (device5= of snapshot-etr, ETM_2.ini) that is a FIFO or /dev/zero: one
#    warning at its snapshot.ini line, the device is left out, and the rest is read as when the
#    line is not there (the same listing and the same other warnings, exit status 0);
#  - trace.ini (metadata=) or snapshot.ini itself a FIFO or /dev/zero: one line, exit status 1.
# Runs under a timeout (a hang fails) and, outside ASan, a memory limit (growth fails).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$ETMKIT_BIN" gen -q --scenario snapshot-etr -o "$tmp/g" >/dev/null 2>&1 || { echo "FAIL: gen snapshot-etr"; exit 1; }
mkfifo "$tmp/fifo" || { echo "FAIL: mkfifo"; exit 1; }
limit() { [ "${ETMKIT_SANITIZE:-0}" = 1 ] || ulimit -v 4000000; }
# run NAME CMD DIR: CMD on DIR into $tmp/NAME.out, .err, .rc
run() {
    (limit; timeout 60 "$ETMKIT_BIN" $2 "$3") >"$tmp/$1.out" 2>"$tmp/$1.err"
    echo $? >"$tmp/$1.rc"
}
# same WHAT GOT WANT
same() {
    cmp -s "$2" "$3" || { echo "FAIL: $1:"; diff "$3" "$2" | head -20; fail=1; }
}
s="$tmp/s"
grep -q '^device5=ETM_2.ini$' "$tmp/g/snapshot/snapshot.ini" || { echo "FAIL: no device5=ETM_2.ini line"; exit 1; }
grep -q '^metadata=trace.ini$' "$tmp/g/snapshot/snapshot.ini" || { echo "FAIL: no metadata= line"; exit 1; }
# what dump, script and doctor say without the device5 line: ETM_2 is not in the device list
line=$(grep -n '^device5=' "$tmp/g/snapshot/snapshot.ini" | cut -d: -f1)
offset=$(head -n $((line - 1)) "$tmp/g/snapshot/snapshot.ini" | wc -c)
rm -rf "$s"; cp -r "$tmp/g/snapshot" "$s"
sed -i '/^device5=/d' "$s/snapshot.ini"
for cmd in dump script doctor; do run "$cmd.without" $cmd "$s"; done
for f in "$tmp/fifo" /dev/zero; do
    rm -rf "$s"; cp -r "$tmp/g/snapshot" "$s"
    sed -i "s|^device5=ETM_2.ini\$|device5=$f|" "$s/snapshot.ini"
    printf '%s: record %d: offset 0x%x: warning: device file %s cannot be read (not a regular file); device ignored [snapshot.missing-file]\n' \
        "$s/snapshot.ini" "$line" "$offset" "'$f'" >"$tmp/want.line"
    for cmd in dump script doctor; do
        run "$cmd" $cmd "$s"
        same "$cmd with device5=$f: exit status" "$tmp/$cmd.rc" "$tmp/$cmd.without.rc"
        [ $cmd = doctor ] ||
            same "$cmd with device5=$f: output" "$tmp/$cmd.out" "$tmp/$cmd.without.out"
    done
    # doctor: the same account, with the device file as one more cause
    { sed 's/^Not turned into samples (1 cause):$/Not turned into samples (2 causes):/' "$tmp/doctor.without.out" |
        sed '/^[0-9]* notes*, not/,$d'
      printf '[2] device file %s cannot be read (not a regular file); device ignored (in %s, record %d, at offset 0x%x)\n\n' \
        "'$f'" "$s/snapshot.ini" "$line" "$offset"
      sed -n '/^[0-9]* notes*, not/,$p' "$tmp/doctor.without.out"; } >"$tmp/want"
    same "doctor with device5=$f: output" "$tmp/doctor.out" "$tmp/want"
    # dump: the line (its collector summary), then what it says without the device
    { cat "$tmp/want.line"; cat "$tmp/dump.without.err"; } >"$tmp/want"
    same "dump with device5=$f: stderr" "$tmp/dump.err" "$tmp/want"
    # script: the summary lines, prefixed; the line comes after the other kinds
    { grep -v '^etmkit: run ' "$tmp/script.without.err"; sed 's/^/etmkit: /' "$tmp/want.line"
      grep '^etmkit: run ' "$tmp/script.without.err"; } >"$tmp/want"
    same "script with device5=$f: stderr" "$tmp/script.err" "$tmp/want"

    rm -rf "$s"; cp -r "$tmp/g/snapshot" "$s"
    sed -i "s|^metadata=trace.ini\$|metadata=$f|" "$s/snapshot.ini"
    run dump dump "$s"
    printf "%s: error: trace metadata cannot be read (not a regular file) [snapshot.missing-file]\n" "$f" >"$tmp/want"
    same "dump with metadata=$f: stderr" "$tmp/dump.err" "$tmp/want"
    echo 1 >"$tmp/want"
    same "dump with metadata=$f: exit status" "$tmp/dump.rc" "$tmp/want"

    rm -rf "$s"; cp -r "$tmp/g/snapshot" "$s"
    if [ "$f" = /dev/zero ]; then ln -sf /dev/zero "$s/snapshot.ini"; else rm "$s/snapshot.ini"; mkfifo "$s/snapshot.ini"; fi
    run dump dump "$s"
    printf "%s/snapshot.ini: error: not a snapshot folder: snapshot.ini cannot be read (not a regular file) [snapshot.missing-file]\n" "$s" >"$tmp/want"
    same "dump with snapshot.ini on $f: stderr" "$tmp/dump.err" "$tmp/want"
    echo 1 >"$tmp/want"
    same "dump with snapshot.ini on $f: exit status" "$tmp/dump.rc" "$tmp/want"
    # script: the session takes the folder for a snapshot (it looked by opening snapshot.ini,
    # and waited on the FIFO) and the reader refuses it, in the reader's line alone
    run script script "$s"
    same "script with snapshot.ini on $f: exit status" "$tmp/script.rc" "$tmp/want"
    printf "%s/snapshot.ini: error: not a snapshot folder: snapshot.ini cannot be read (not a regular file) [snapshot.missing-file]\n" "$s" >"$tmp/want"
    same "script with snapshot.ini on $f: stderr" "$tmp/script.err" "$tmp/want"
done
[ "$fail" = 0 ] && echo "ok: device files, trace.ini and snapshot.ini on a FIFO or /dev/zero are refused in one line"
exit "$fail"
