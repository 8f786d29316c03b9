#!/bin/sh
# Instruction-flow decode of the hand-made flow-hello snapshot (tests/data/flow-hello): the
# ocsd listing (packets + elements) is what Debian's trc_pkt_lister 1.3.3 printed for it, with
# the ADDR_NACC text of 1.8.0 (which adds "; Memspace [..]"); the text and JSON listings are the
# reviewed golden files. The snapshot also checks the memory map rules of the reference lister:
# a dump that starts inside an earlier one is not used (rets.bin, twice).
set -eu
ex="$ETMKIT_SRC/tests/data/flow-hello"
golden="$ETMKIT_SRC/tests/golden"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

sed 's/#.*//' "$ex/trace.hex" | tr -s ' \t\n' '\n' | grep -v '^$' >"$tmp/hex"
od -An -v -tx1 "$ex/trace.bin" | tr -s ' \t\n' '\n' | grep -v '^$' >"$tmp/bin"
if ! cmp -s "$tmp/hex" "$tmp/bin"; then
    echo "tests/data/flow-hello/trace.bin does not hold the bytes of trace.hex"
    exit 1
fi

"$ETMKIT_BIN" dump --format=ocsd --decode "$ex" | grep -E '^(Idx|ID):' >"$tmp/ocsd"
"$ETMKIT_BIN" dump --decode "$ex" >"$tmp/text"
"$ETMKIT_BIN" dump --format=json --decode-only "$ex" >"$tmp/json"
diff -u "$golden/flow-hello.ocsd" "$tmp/ocsd"
diff -u "$golden/flow-hello.text" "$tmp/text"
diff -u "$golden/flow-hello.json" "$tmp/json"
python3 - "$tmp/json" <<'PY' || exit 1
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    o = json.loads(line)
    assert {"idx", "id", "type"} <= set(o), (n, o)
PY

# --stats counts what was decoded
"$ETMKIT_BIN" dump --decode-only --stats "$ex" >"$tmp/stats"
grep -q "decode: 12 elements, 14 instructions, 0 decode errors" "$tmp/stats" || {
    cat "$tmp/stats"
    exit 1
}
echo "flow-hello ok"
