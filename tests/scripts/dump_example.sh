#!/bin/sh
# The shipped example snapshot: trace.bin is exactly the bytes written in trace.hex, and its
# listings (text, ocsd, json) are the reviewed golden files.
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

"$ETMKIT_BIN" dump --format=text "$ex" >"$tmp/text"
"$ETMKIT_BIN" dump "$ex" >"$tmp/default"
"$ETMKIT_BIN" dump --format=ocsd --pkt-mon "$ex" | grep -E '^(Idx|ID):' >"$tmp/ocsd"
"$ETMKIT_BIN" dump --format=json "$ex" >"$tmp/json"
diff -u "$golden/etm4-hello.text" "$tmp/text"
diff -u "$golden/etm4-hello.text" "$tmp/default"
diff -u "$golden/etm4-hello.ocsd" "$tmp/ocsd"
diff -u "$golden/etm4-hello.json" "$tmp/json"
# every JSON line is an object with the common keys
python3 - "$tmp/json" <<'PY' || exit 1
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    o = json.loads(line)
    assert {"idx", "id", "type", "raw"} <= set(o), (n, o)
PY
echo "example ok"
