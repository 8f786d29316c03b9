#!/bin/sh
# etmkit dump on damaged snapshots: garbage before the first A-Sync, reserved headers, a buffer
# ending inside a packet or a frame, bad TPIU sync patterns, missing files. Bad packets are
# listed (as trc_pkt_lister lists them) and summarised on stderr with file and offset; the run
# goes on; the exit status is non-zero only when nothing could be decoded.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

# make_snapshot DIR FORMAT PROTOCOL_TYPE -- trace bytes as hex on stdin
make_snapshot() {
    dir=$1 fmt=$2 type=$3
    mkdir -p "$dir"
    cat >"$dir/snapshot.ini" <<INI
[snapshot]
version=1.0
[device_list]
device0=cpu.ini
device1=etm.ini
[trace]
metadata=trace.ini
INI
    cat >"$dir/trace.ini" <<INI
[trace_buffers]
buffers=buffer0
[buffer0]
name=BUF
file=trace.bin
format=$fmt
[source_buffers]
ETM=BUF
[core_trace_sources]
cpu=ETM
INI
    printf '[device]\nname=cpu\nclass=core\ntype=Cortex-A53\n' >"$dir/cpu.ini"
    if [ "$type" = PTM1.0 ]; then
        printf '[device]\nname=ETM\nclass=trace_source\ntype=PTM1.0\n[regs]\nETMCR=0x0\nETMIDR=0x411CF300\nETMCCER=0x0\nETMTRACEIDR=0x10\n' >"$dir/etm.ini"
    else
        printf '[device]\nname=ETM\nclass=trace_source\ntype=%s\n[regs]\nTRCCONFIGR=0xC1\nTRCTRACEIDR=0x10\nTRCIDR0=0x28000EA1\nTRCIDR1=0x4100F440\nTRCIDR2=0x00000488\n' "$type" >"$dir/etm.ini"
    fi
    sed 's/#.*//' | tr -s ' \t\n' '\n' | grep -v '^$' | while read -r b; do printf "\\$(printf '%03o' "0x$b")"; done >"$dir/trace.bin"
}

ASYNC="00 00 00 00 00 00 00 00 00 00 00 80"

# 1. raw buffer: garbage, A-Sync, reserved headers, a packet cut by the end of the buffer
make_snapshot "$tmp/raw" source_data ETM4 <<HEX
de ad be ef 11 22 33 44 55 66 77
$ASYNC 01 01 00 04 f7 08 84 f7 9a 75 60
HEX
"$ETMKIT_BIN" dump --format=ocsd --pkt-mon "$tmp/raw" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "raw: exit $rc"
grep -q '^Idx:0; ID:0; \[0xde 0xad 0xbe 0xef 0x11 0x22 0x33 0x44 \];	I_NOT_SYNC' "$tmp/out" || fail "raw: NOT_SYNC"
grep -q '^Idx:8; ID:0; \[0x55 0x66 0x77 \];	I_NOT_SYNC' "$tmp/out" || fail "raw: second NOT_SYNC"
grep -q 'Idx:28; ID:0; \[0x08 \];	I_RESERVED : Reserved Packet Header' "$tmp/out" || fail "raw: RESERVED"
grep -q '^Idx:30; ID:0; \[0xf7 \];	I_ATOM_F1' "$tmp/out" || fail "raw: decoding did not go on"
grep -q '^Idx:31; ID:0; \[0x9a 0x75 0x60 \];	I_INCOMPLETE_EOT' "$tmp/out" || fail "raw: INCOMPLETE_EOT"
grep -q 'trace.bin: offset 0x1f: ID 0x10: warning: ETM I_INCOMPLETE_EOT' "$tmp/err" || fail "raw: no diag for the cut packet: $(cat "$tmp/err")"
grep -q 'etm4.bad-packet' "$tmp/err" || fail "raw: no diag for reserved headers"
# the same in every format
for f in text json; do
    "$ETMKIT_BIN" dump --format=$f "$tmp/raw" >"$tmp/out.$f" 2>/dev/null || fail "raw: --format=$f failed"
    grep -q 'INCOMPLETE_EOT' "$tmp/out.$f" || fail "raw: --format=$f lacks INCOMPLETE_EOT"
done

# 2. formatted buffer (ID 0x10) ending inside a frame
make_snapshot "$tmp/frames" coresight ETM4 <<HEX
21 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 80 00 01 00 04 f6 f7 f6 f7 f6 f7 f6 f7 f6 fa
21 f7 f7
HEX
"$ETMKIT_BIN" dump --format=ocsd --pkt-mon "$tmp/frames" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "frames: exit $rc"
grep -q '^Idx:0; ID:10; \[0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x80 \];	I_ASYNC' "$tmp/out" || fail "frames: ASYNC"
grep -q 'I_TRACE_ON' "$tmp/out" || fail "frames: TRACE_ON"
grep -q 'offset 0x20: .*buffer ends inside a frame' "$tmp/err" || fail "frames: no diag for the partial frame: $(cat "$tmp/err")"

# 3. TPIU stream with an HSYNC where none may be: reported, decoding resumes at the next FSYNC
make_snapshot "$tmp/tpiu" coresight ETM4 <<HEX
ff ff ff 7f 21 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
ff ff ff 7f 21 00 ff 7f 00 00 00 00 00 00 00 00 00 00 00 00
ff ff ff 7f 21 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
HEX
"$ETMKIT_BIN" dump --format=ocsd --tpiu "$tmp/tpiu" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "tpiu: exit $rc"
grep -q 'offset 0x1a: .*HSYNC' "$tmp/err" || fail "tpiu: no diag for the bad HSYNC: $(cat "$tmp/err")"
grep -q 'frame.bad-sync' "$tmp/err" || fail "tpiu: diag kind"

# 4. garbage only, in a formatted buffer: nothing but NOT_SYNC, still a successful run
make_snapshot "$tmp/noise" coresight ETM4 <<HEX
21 13 57 9b df 02 46 8a ce 11 33 55 77 99 bb 00
HEX
"$ETMKIT_BIN" dump --format=ocsd "$tmp/noise" >"$tmp/out" 2>"$tmp/err" || fail "noise: exit $?"
grep -q 'I_NOT_SYNC' "$tmp/out" || fail "noise: NOT_SYNC"

# 5. the trace file is missing: nothing usable, non-zero exit, a one-line reason
make_snapshot "$tmp/nofile" source_data ETM4 </dev/null
rm "$tmp/nofile/trace.bin"
if "$ETMKIT_BIN" dump "$tmp/nofile" >"$tmp/out" 2>"$tmp/err"; then fail "nofile: exit 0"; fi
grep -q 'trace.bin' "$tmp/err" || fail "nofile: message does not name the file: $(cat "$tmp/err")"

# 6. a PTM source is decoded (an I-Sync cut by the end of the buffer); a protocol etmkit does
#    not know is said once on stderr, and with nothing else to decode the exit is non-zero
make_snapshot "$tmp/ptm" coresight PTM1.0 <<HEX
21 00 00 00 00 00 80 08 00 10 00 80 01 00 00 00
HEX
"$ETMKIT_BIN" dump --format=ocsd --pkt-mon "$tmp/ptm" >"$tmp/out" 2>"$tmp/err" || fail "ptm: exit $?"
grep -q '^Trace Packet Lister : Protocol printer PTM on Trace ID 0x10$' "$tmp/out" || fail "ptm: printer"
grep -q '^Idx:0; ID:10; \[0x00 0x00 0x00 0x00 0x00 0x80 \];	ASYNC' "$tmp/out" || fail "ptm: ASYNC"
grep -q '^Idx:6; ID:10; \[0x08 0x00 0x10 0x00 0x80 \];	INCOMPLETE_EOT' "$tmp/out" || fail "ptm: EOT"
grep -q 'offset 0x6: ID 0x10: warning: ETM INCOMPLETE_EOT while decoding ISYNC' "$tmp/err" ||
    fail "ptm: no diag for the cut packet: $(cat "$tmp/err")"
sed -i 's/PTM1.0/FOO1/' "$tmp/ptm/etm.ini"
if "$ETMKIT_BIN" dump "$tmp/ptm" >"$tmp/out" 2>"$tmp/err"; then fail "unknown: exit 0"; fi
[ "$(grep -c 'is not decoded' "$tmp/err")" -eq 1 ] || fail "unknown: message: $(cat "$tmp/err")"

# 7. random bytes in every framing: listed or rejected, never a crash (run under ASan too)
make_snapshot "$tmp/rnd" coresight ETM4 </dev/null
make_snapshot "$tmp/rndraw" source_data ETE </dev/null
for seed in 1 2 3; do
    python3 -c "import random, sys; r = random.Random($seed); sys.stdout.buffer.write(bytes(r.choice((0, 0x7f, 0xff, r.randrange(256))) for _ in range(40000)))" >"$tmp/rnd/trace.bin"
    cp "$tmp/rnd/trace.bin" "$tmp/rndraw/trace.bin"
    for opts in "" "--pkt-mon --raw-packed --raw-unpacked" "--tpiu" "--tpiu-hsync --decode" "--dstream --tpiu" "--multi-session --format=json"; do
        # shellcheck disable=SC2086
        "$ETMKIT_BIN" dump --format=ocsd $opts "$tmp/rnd" >/dev/null 2>&1
        rc=$?
        [ $rc -le 1 ] || fail "random input (seed $seed, $opts): exit $rc"
    done
    "$ETMKIT_BIN" dump --format=text "$tmp/rndraw" >/dev/null 2>&1
    rc=$?
    [ $rc -le 1 ] || fail "random raw input (seed $seed): exit $rc"
done

# 8. not a snapshot, unknown option
if "$ETMKIT_BIN" dump "$tmp" >/dev/null 2>&1; then fail "no snapshot.ini: exit 0"; fi
"$ETMKIT_BIN" dump --no-such-option "$tmp/raw" >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option: exit status"
"$ETMKIT_BIN" dump --help "$tmp/raw" | grep -q -- '--multi-session' || fail "--help"
echo "bad input ok"
