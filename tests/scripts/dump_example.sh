#!/bin/sh
# The shipped example snapshot: trace.bin is exactly the bytes written in trace.hex, its memory
# dumps are code.s assembled, its listings (text, ocsd, json; packets and with --decode the
# instruction flow) are the reviewed golden files, and the ocsd decode is what OpenCSD's
# trc_pkt_lister prints (1.3.3, Debian's: it lacks 1.8.0's "; Decoder Sync point TINFO").
set -eu
ex="$ETMKIT_SRC/examples/etm4-hello"
golden="$ETMKIT_SRC/tests/golden"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# hex source -> bytes (comments start with '#')
sed 's/#.*//' "$ex/trace.hex" | tr -s ' \t\n' '\n' | grep -v '^$' >"$tmp/hex"
od -An -v -tx1 "$ex/trace.bin" | tr -s ' \t\n' '\n' | grep -v '^$' >"$tmp/bin"
if ! cmp -s "$tmp/hex" "$tmp/bin"; then
    echo "examples/etm4-hello/trace.bin does not hold the bytes of trace.hex"
    diff "$tmp/hex" "$tmp/bin" | head
    exit 1
fi

# code.s -> user.bin, kernel.bin (the commands code.s gives)
if clang --target=aarch64-linux-gnu -c "$ex/code.s" -o "$tmp/code.o" &&
    llvm-objcopy -O binary --only-section=.text.user "$tmp/code.o" "$tmp/user.bin" &&
    llvm-objcopy -O binary --only-section=.text.kernel "$tmp/code.o" "$tmp/kernel.bin"; then
    for b in user kernel; do
        cmp "$tmp/$b.bin" "$ex/$b.bin" || { echo "examples/etm4-hello/$b.bin is not code.s assembled"; exit 1; }
    done
else
    echo "cannot assemble examples/etm4-hello/code.s (clang, llvm-objcopy)"
    exit 1
fi

"$ETMKIT_BIN" dump --format=text "$ex" >"$tmp/text"
"$ETMKIT_BIN" dump "$ex" >"$tmp/default"
"$ETMKIT_BIN" dump --format=ocsd --pkt-mon "$ex" | grep -E '^(Idx|ID):' >"$tmp/ocsd"
"$ETMKIT_BIN" dump --format=json "$ex" >"$tmp/json"
diff -u "$golden/etm4-hello.text" "$tmp/text"
diff -u "$golden/etm4-hello.text" "$tmp/default"
diff -u "$golden/etm4-hello.ocsd" "$tmp/ocsd"
diff -u "$golden/etm4-hello.json" "$tmp/json"
"$ETMKIT_BIN" dump --decode "$ex" >"$tmp/decode.text"
"$ETMKIT_BIN" dump --format=ocsd --decode "$ex" | grep -E '^(Idx|ID):' >"$tmp/decode.ocsd"
diff -u "$golden/etm4-hello.decode.text" "$tmp/decode.text"
diff -u "$golden/etm4-hello.decode.ocsd" "$tmp/decode.ocsd"
# every packet decoded, every instruction read from the dumps
"$ETMKIT_BIN" dump --decode-only --stats "$ex" >"$tmp/stats"
grep -q "decode: 28 elements, 35 instructions, 0 decode errors, 0 resyncs, 0 atoms without an address" "$tmp/stats" || {
    cat "$tmp/stats"
    exit 1
}
if command -v trc_pkt_lister >/dev/null; then
    (cd "$tmp" && trc_pkt_lister -ss_dir "$ex" -decode -logfilename "$tmp/lister.log" >/dev/null 2>&1)
    grep -E '^(Idx|ID):' "$tmp/lister.log" >"$tmp/lister"
    sed 's/^\(Idx:15; ID:0; .*I_TRACE_INFO : .*\); Decoder Sync point TINFO$/\1/' "$tmp/decode.ocsd" >"$tmp/decode.133"
    [ "$(grep -c 'Decoder Sync point TINFO' "$tmp/decode.ocsd")" -eq 1 ] || { echo "want one 'Decoder Sync point TINFO'"; exit 1; }
    diff -u "$tmp/lister" "$tmp/decode.133"
else
    echo "trc_pkt_lister not installed: not compared with OpenCSD"
fi
# every JSON line is an object with the common keys
python3 - "$tmp/json" <<'PY' || exit 1
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    o = json.loads(line)
    assert {"idx", "id", "type", "raw"} <= set(o), (n, o)
PY
echo "example ok"
