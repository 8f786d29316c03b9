#!/bin/sh
# Regression (review of the session's sideband pass, src/session/sideband.c): damaged sideband
# of a few MB hung every session command (script, doctor, report, export, inject).
# 1. An AUX record that is not the next one of ek_perf_aux_records() was looked up by a scan of
#    every AUX record; damaged AUX records are never in that list, so each cost a full scan:
#    time damaged x valid AUX records (32768 valid + 262144 damaged, 4.2 MB: 16-37 s).
# 2. The CPU of every ITRACE_START / switch record was looked up by a scan of the CPUs seen so
#    far: time records x CPUs when every record names another CPU (196608, 9.5 MB: 21-40 s).
# Both files are built at run time from 'etmkit gen --scenario basic' (records inserted after
# its AUX / ITRACE_START record), large enough that the old code takes minutes while the fixed
# one takes well under a second. The 60 s bounds are hang detectors, not speed assertions
# (speed is measured in bench/). The output must be that of the undamaged recording
# (the inserted records carry nothing to decode), with one exact warning line for the damage.
# Normal build only.
set -u
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "SKIP: timing is checked in the normal build"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$ETMKIT_BIN" gen -q --scenario basic -o "$T/g" || exit 1

python3 - "$T" <<'PY' || exit 1
import struct, sys
t = sys.argv[1]
b = open(t + '/g/perf.data', 'rb').read()

def records(b):
    dstart, dsize = struct.unpack_from('<QQ', b, 40)
    pos, out = dstart, []
    while pos + 8 <= dstart + dsize:
        typ, misc, size = struct.unpack_from('<IHH', b, pos)
        if size < 8:
            break
        out.append((pos, typ, size))
        pos += size + (struct.unpack_from('<Q', b, pos + 8)[0] if typ == 71 else 0)
    return out

def insert(b, off, new):
    """b with 'new' inserted at data offset 'off': data size, feature offsets and the
    AUXTRACE index (feature bit 18) entries behind it moved."""
    dsize = struct.unpack_from('<Q', b, 48)[0]
    dend = struct.unpack_from('<Q', b, 40)[0] + dsize
    feat = struct.unpack_from('<4Q', b, 72)
    bits = [i for i in range(256) if feat[i // 64] >> (i % 64) & 1]
    out = bytearray(b[:off] + new + b[off:])
    d = len(new)
    struct.pack_into('<Q', out, 48, dsize + d)
    for k, bit in enumerate(bits):
        e = dend + d + 16 * k
        fo = struct.unpack_from('<Q', out, e)[0] + d
        struct.pack_into('<Q', out, e, fo)
        if bit == 18:
            for i in range(struct.unpack_from('<Q', out, fo)[0]):
                eo = struct.unpack_from('<Q', out, fo + 8 + 16 * i)[0]
                if eo >= off:
                    struct.pack_into('<Q', out, fo + 8 + 16 * i, eo + d)
    return bytes(out)

recs = records(b)
# 1. 131072 copies of the AUX record with aux_size 0, each followed by 4 AUX records of 8
#    bytes (header only: damaged); and the same without the damaged ones
pos, typ, size = [r for r in recs if r[1] == 11][0]
good = bytearray(b[pos:pos + size])
struct.pack_into('<Q', good, 16, 0)
open(t + '/aux-clean.data', 'wb').write(insert(b, pos + size, bytes(good) * 131072))
bad = bytes(good) + struct.pack('<IHH', 11, 0, 8) * 4
open(t + '/aux-damaged.data', 'wb').write(insert(b, pos + size, bad * 131072))
# 2. 524288 copies of the ITRACE_START record, each with another CPU in its trailer
#    (pid, tid, then the trailer: tid, time, cpu, identifier)
pos, typ, size = [r for r in recs if r[1] == 12][0]
rec = bytearray(b[pos:pos + size])
assert size == 48 and struct.unpack_from('<I', rec, 32)[0] == 0
blob = bytearray()
for i in range(524288):
    struct.pack_into('<I', rec, 32, i + 1)
    blob += rec
open(t + '/cpus.data', 'wb').write(insert(b, pos + size, bytes(blob)))
PY

# run NAME WHAT: 'etmkit script' of $T/NAME.data into $T/NAME.out and $T/NAME.err within 60 s
run() {
    start=$(date +%s)
    timeout 60 "$ETMKIT_BIN" script --symfs "$T/g/symfs" "$T/$1.data" >"$T/$1.out" 2>"$T/$1.err"
    rc=$?
    secs=$(($(date +%s) - start))
    if [ $rc -eq 124 ]; then
        echo "FAIL: $2: no output in 60 s (a lookup per sideband record is linear again?)"
        exit 1
    fi
    [ $rc -ne 0 ] && { echo "FAIL: $2: exit $rc"; head -5 "$T/$1.err"; exit 1; }
    echo "$2: ${secs}s"
}
same() { # FILE EXPECTED WHAT
    cmp -s "$1" "$2" && return 0
    echo "FAIL: $3:"
    diff "$2" "$1" | head -5
    exit 1
}

run aux-clean "131072 AUX records"
run aux-damaged "131072 AUX records and 524288 damaged ones"
same "$T/aux-damaged.out" "$T/aux-clean.out" "the damaged AUX records changed the samples"
same "$T/aux-clean.err" /dev/null "warnings on the undamaged file"
cat >"$T/expect" <<EOT
etmkit: $T/aux-damaged.data: record 10: offset 0x490: warning: AUX record of 8 bytes is malformed (fields too short for its size) [perf.bad-record] (524288 times)
etmkit: run 'etmkit doctor $T/aux-damaged.data' for the details and remedies
EOT
same "$T/aux-damaged.err" "$T/expect" "the warning"

"$ETMKIT_BIN" script --symfs "$T/g/symfs" "$T/g/perf.data" >"$T/g.out" 2>"$T/g.err" || exit 1
run cpus "524288 ITRACE_START records on as many CPUs"
same "$T/cpus.out" "$T/g.out" "the ITRACE_START records of other CPUs changed the samples"
same "$T/cpus.err" "$T/g.err" "the ITRACE_START records of other CPUs: diagnostics"
echo "same samples as the undamaged recording"
exit 0
