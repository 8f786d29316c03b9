#!/bin/sh
# Regression (review): the diagnostics summaries grouped problems by kind alone, so a problem
# of the same kind in another file lost its file name, and its offset was listed under the first
# file. A snapshot with a missing dump file in cpu_1.ini (record 17, offset 0xda) and a missing
# device file ETM_9.ini (snapshot.ini record 11, offset 0xc4): 'dump' printed "2 x cpu_1.ini:
# ... gone.bin ... (also at offsets 0xc4)" and never named ETM_9.ini; 'script' printed the
# ETM_9.ini line "(2 times)" and never named gone.bin; 'doctor' listed "at offsets 0xc4 0xda"
# under snapshot.ini. An ETE snapshot whose TRBE buffers are declared 'coresight' (formatted):
# offset 0xa810 of trbe_1.bin was listed under trbe_0.bin's problem and the reverse.
# The summaries group by kind and file now (src/core/diag.c for dump, src/session/sdiag.c for
# script and doctor): each file's problem on its own line, offsets only of that file.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
"$ETMKIT_BIN" gen -q --scenario snapshot-etr -o g >/dev/null || exit 1
cp -r g/snapshot two
sed -i 's/^file=mem_simloop_400000.bin/file=gone.bin/' two/cpu_1.ini
sed -i 's|^device5=.*|device5=ETM_9.ini|' two/snapshot.ini
sed -i '/ETM_2/d' two/trace.ini # (only the two missing files are reported)
"$ETMKIT_BIN" gen -q --scenario snapshot-ete-trbe -o ge >/dev/null || exit 1
cp -r ge/snapshot ete
sed -i 's/format=source_data/format=coresight/' ete/trace.ini

fail=0
# check WHAT EXPECTED-FILE COMMAND...: the command's stderr (or, for doctor, its "Not turned
# into samples" section) must be EXPECTED-FILE's text exactly
check() {
    what=$1 exp=$2
    shift 2
    if [ "$1" = doctor ]; then
        "$ETMKIT_BIN" "$@" 2>"$T/err" | sed -n '/^Not turned/,$p' >"$T/got"
    else
        "$ETMKIT_BIN" "$@" 2>"$T/got" >/dev/null
    fi
    if ! cmp -s "$T/got" "$exp"; then
        echo "FAIL: $what:"
        diff "$exp" "$T/got"
        fail=1
    fi
}

cat >dump.exp <<'EOT'
two/cpu_1.ini: record 17: offset 0xda: warning: [dump2] memory dump file 'two/gone.bin' cannot be read (No such file or directory); addresses 0x400000.. are not mapped [snapshot.missing-file]
two/snapshot.ini: record 11: offset 0xc4: warning: device file 'two/ETM_9.ini' cannot be read (No such file or directory); device ignored [snapshot.missing-file]
EOT
check "dump, two files" dump.exp dump two
cat >script.exp <<'EOT'
etmkit: two/snapshot.ini: record 11: offset 0xc4: warning: device file 'two/ETM_9.ini' cannot be read (No such file or directory); device ignored [snapshot.missing-file]
etmkit: two/cpu_1.ini: record 17: offset 0xda: warning: [dump2] memory dump file 'two/gone.bin' cannot be read (No such file or directory); addresses 0x400000.. are not mapped [snapshot.missing-file]
etmkit: run 'etmkit doctor two' for the details and remedies
EOT
check "script, two files" script.exp script two
cat >doctor.exp <<'EOT'
Not turned into samples (2 causes):

[1] device file 'two/ETM_9.ini' cannot be read (No such file or directory); device ignored (in two/snapshot.ini, record 11, at offset 0xc4)

[2] [dump2] memory dump file 'two/gone.bin' cannot be read (No such file or directory); addresses 0x400000.. are not mapped (in two/cpu_1.ini, record 17, at offset 0xda)

2 notes, not problems (--verbose shows them).
EOT
check "doctor, two files" doctor.exp doctor two

cat >script-ete.exp <<'EOT'
etmkit: ete/trbe_1.bin: offset 0x4666: ID 0x12: warning: ETE_1 I_INCOMPLETE_EOT while decoding I_NOT_SYNC (1 bytes) [etm4.truncated]
etmkit: ete/trbe_1.bin: offset 0xa810: warning: buffer ends inside a frame (5 bytes not decoded) [frame.partial]
etmkit: ete/trbe_0.bin: offset 0x13c95: ID 0x10: warning: ETE_0 I_INCOMPLETE_EOT while decoding I_NOT_SYNC (8 bytes) [etm4.truncated]
etmkit: ete/trbe_0.bin: offset 0x15d90: warning: buffer ends inside a frame (2 bytes not decoded) [frame.partial]
etmkit: run 'etmkit doctor ete' for the details and remedies
EOT
check "script, two TRBE buffers" script-ete.exp script ete
cat >doctor-ete.exp <<'EOT'
Not turned into samples (4 causes):

[1] ETE_1 I_INCOMPLETE_EOT while decoding I_NOT_SYNC (1 bytes) (in ete/trbe_1.bin, at offset 0x4666, trace ID 0x12)

[2] buffer ends inside a frame (5 bytes not decoded) (in ete/trbe_1.bin, at offset 0xa810)

[3] ETE_0 I_INCOMPLETE_EOT while decoding I_NOT_SYNC (8 bytes) (in ete/trbe_0.bin, at offset 0x13c95, trace ID 0x10)

[4] buffer ends inside a frame (2 bytes not decoded) (in ete/trbe_0.bin, at offset 0x15d90)

1 note, not a problem (--verbose shows it).
EOT
# with two decoder threads: the report must not depend on which buffer's thread reported first
for j in 1 2 2 2; do
    check "doctor -j $j, two TRBE buffers" doctor-ete.exp doctor -j "$j" ete
done
[ $fail = 0 ] && echo "every problem under its own file"
exit $fail
