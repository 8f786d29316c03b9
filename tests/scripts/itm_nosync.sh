#!/bin/bash
# ITM streams without sync packets (issue 33 item 3), on the shared ITM snapshots:
#  - itm_only_raw with its sync packets removed: its trace file cut to start right after its
#    first A-Sync (the bytes before it are garbage that no decoder can align) and every other
#    A-Sync cut out, where OpenCSD's reference listing places them (the ITM_ASYNC lines of
#    expected/itm_only_raw.ppl: index and raw bytes). `dump --format=text --decode` of that
#    stream, with --itm-sync=assume and by default, lists the same packets and elements as the
#    original (listed with --itm-sync=wait, as OpenCSD) after its first A-Sync (A-Sync lines and indexes aside, which the cuts move), and
#    the same for --format=json; with --itm-sync=wait it lists only ITM_NOTSYNC.
#  - itm_only_csformat holds the same ITM bytes in CoreSight frames (checked here: its
#    de-formatted bytes for ID 0x14, from --raw-unpacked, are itm_only_raw's file), so cutting
#    its syncs would test the frame writer, not ITM: the stripped case uses the raw one.
#  - --format=ocsd of both originals stays OpenCSD's listing, byte for byte from the first
#    "Protocol printer" line (the ocsd default is --itm-sync=wait), and the ocsd listing of the
#    stripped stream with --itm-sync=assume decodes too.
#  - --itm-sync takes only wait or assume (usage error, exit 2).
set -u
shared=${ETMKIT_SHARED:-}
snaps="$shared/testdata/opencsd/snapshots"
expected="$shared/testdata/opencsd/expected"
if [ -z "$shared" ] || [ ! -d "$snaps/itm_only_raw" ] || [ ! -f "$expected/itm_only_raw.ppl.xz" ]; then
    echo "SKIP: ../shared/testdata/opencsd (itm_only_raw and its listing) is absent"
    exit 77
fi
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
command -v xz >/dev/null 2>&1 || { echo "SKIP: xz is needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# ---- the stripped stream
orig="$snaps/itm_only_raw"
strip="$tmp/itm_nosync"
mkdir "$strip"
cp "$orig"/*.ini "$strip/"
chmod u+w "$strip"/*.ini
xz -dc "$expected/itm_only_raw.ppl.xz" >"$tmp/raw.ppl"
python3 - "$orig/itm_testdata.bin" "$tmp/raw.ppl" "$strip/itm_testdata.bin" <<'EOF' || exit 1
import re, sys
data = open(sys.argv[1], 'rb').read()
cuts = []
for line in open(sys.argv[2]):
    m = re.match(r'Idx:(\d+); ID:[0-9a-f]+; \[((?:0x[0-9a-f]{2} )+)\];\tITM_ASYNC', line)
    if m:
        cuts.append((int(m.group(1)), len(m.group(2).split())))
if len(cuts) < 2:
    sys.exit('fewer than 2 ITM_ASYNC lines in the reference listing')
out, pos = bytearray(), cuts[0][0] + cuts[0][1]   # from the end of the first A-Sync
for at, n in cuts[1:]:
    seg = data[at:at + n]
    if len(seg) < 6 or any(seg[:-1]) or seg[-1] != 0x80:
        sys.exit('not an A-Sync at %d: %s' % (at, seg.hex()))
    out += data[pos:at]
    pos = at + n
out += data[pos:]
if re.search(b'\x00{5,}\x80', bytes(out)):
    sys.exit('an A-Sync is left in the stripped stream')
open(sys.argv[3], 'wb').write(out)
print('itm_only_raw: %d bytes, %d A-Syncs cut, %d bytes left' % (len(data), len(cuts), len(out)))
EOF

# Packet and element lines of a text listing without the index column (cuts move indexes),
# without A-Sync lines; `after` = 1: only from the first A-Sync on.
text_lines() { # file after
    awk -v after="$2" '
        / ITM_ASYNC: / { seen = 1; next }
        after && !seen { next }
        { $1 = ""; print }' "$1"
}
json_lines() { # file after
    awk -v after="$2" '
        /"type":"ITM_ASYNC"/ { seen = 1; next }
        after && !seen { next }
        { sub(/"idx":[0-9]+,/, ""); print }' "$1"
}

E=$ETMKIT_BIN
"$E" dump --format=text --decode --itm-sync=wait "$orig" >"$tmp/orig.text" 2>/dev/null || bad "dump of itm_only_raw failed"
for mode in assume default; do
    opt=--itm-sync=assume
    [ $mode = default ] && opt=
    "$E" dump --format=text --decode $opt "$strip" >"$tmp/strip.$mode.text" 2>"$tmp/err" ||
        bad "dump --format=text $opt of the stripped stream failed: $(head -3 "$tmp/err")"
    [ -s "$tmp/err" ] && bad "($mode) the stripped stream gives diagnostics: $(head -3 "$tmp/err")"
    # the stripped listing: its first packet, then NO_SYNC (init-decoder), then what the
    # original lists after its first A-Sync
    sed -n 2p "$tmp/strip.$mode.text" | grep -q '> NO_SYNC  *init-decoder' ||
        bad "($mode) the stripped listing's second line is not NO_SYNC init-decoder: $(sed -n 2p "$tmp/strip.$mode.text")"
    sed 2d "$tmp/strip.$mode.text" >"$tmp/strip.$mode.rest"
    text_lines "$tmp/orig.text" 1 >"$tmp/want.text"
    text_lines "$tmp/strip.$mode.rest" 0 >"$tmp/got.text"
    if ! cmp -s "$tmp/want.text" "$tmp/got.text"; then
        bad "($mode) text listing of the stripped stream differs from the original's after its first sync (< original, > stripped):"
        diff "$tmp/want.text" "$tmp/got.text" | head -20
    fi
done
n=$(wc -l <"$tmp/want.text")
grep -q 'ITM_SWIT' "$tmp/want.text" && grep -q 'ITMTRACE' "$tmp/want.text" ||
    bad "the original lists no SWIT packet or ITMTRACE element after its sync"
echo "stripped text listing: $n lines as the original's after its first A-Sync"

"$E" dump --format=json --decode --itm-sync=wait "$orig" >"$tmp/orig.json" 2>/dev/null
"$E" dump --format=json --decode --itm-sync=assume "$strip" >"$tmp/strip.json" 2>/dev/null
sed -n 2p "$tmp/strip.json" | grep -q '"type":"no_sync","reason":"init-decoder"' ||
    bad "the stripped JSON listing's second line is not no_sync: $(sed -n 2p "$tmp/strip.json")"
sed 2d "$tmp/strip.json" >"$tmp/strip.json.rest"
json_lines "$tmp/orig.json" 1 >"$tmp/want.json"
json_lines "$tmp/strip.json.rest" 0 >"$tmp/got.json"
cmp -s "$tmp/want.json" "$tmp/got.json" || {
    bad "JSON listing of the stripped stream differs from the original's after its first sync:"
    diff "$tmp/want.json" "$tmp/got.json" | head -10
}

# wait: nothing decodes
"$E" dump --format=text --decode --itm-sync=wait "$strip" >"$tmp/strip.wait" 2>/dev/null
grep -v -e 'ITM_NOTSYNC' -e '> NO_SYNC' -e '> EO_TRACE' "$tmp/strip.wait" >"$tmp/other" &&
    bad "--itm-sync=wait lists more than ITM_NOTSYNC: $(head -3 "$tmp/other")"
grep -q ITM_NOTSYNC "$tmp/strip.wait" || bad "--itm-sync=wait lists no ITM_NOTSYNC"

# ---- the ocsd listings of the originals are OpenCSD's
for name in itm_only_raw itm_only_csformat; do
    [ -f "$expected/$name.ppl.xz" ] || continue
    xz -dc "$expected/$name.ppl.xz" | sed -n '/^Trace Packet Lister : Protocol/,$p' |
        grep -v -e '^Gen_Info' -e '^Filename=' -e 'Set trace element decode printer' >"$tmp/want.ppl"
    "$E" dump --format=ocsd --decode "$snaps/$name" 2>/dev/null |
        sed -n '/^Trace Packet Lister : Protocol/,$p' >"$tmp/got.ppl"
    if cmp -s "$tmp/want.ppl" "$tmp/got.ppl"; then
        echo "$name: --format=ocsd is trc_pkt_lister's ($(wc -l <"$tmp/want.ppl") lines)"
    else
        bad "$name: --format=ocsd differs from trc_pkt_lister's (< OpenCSD, > etmkit):"
        diff "$tmp/want.ppl" "$tmp/got.ppl" | head -10
    fi
done
"$E" dump --format=ocsd --decode --itm-sync=assume "$strip" >"$tmp/strip.ocsd" 2>/dev/null
grep -q 'ITM_SWIT' "$tmp/strip.ocsd" && ! grep -q 'ITM_NOTSYNC' "$tmp/strip.ocsd" ||
    bad "--format=ocsd --itm-sync=assume of the stripped stream does not decode it"

# ---- itm_only_csformat carries itm_only_raw's bytes
if [ -d "$snaps/itm_only_csformat" ]; then
    "$E" dump --format=text --raw-unpacked "$snaps/itm_only_csformat" 2>/dev/null |
        sed -n 's/^Frame Data; Index *[0-9]*; *ID_DATA\[0x14\]; //p' | tr -d ' \n' >"$tmp/cs.hex"
    od -An -v -tx1 "$orig/itm_testdata.bin" | tr -d ' \n' >"$tmp/raw.hex"
    cmp -s "$tmp/cs.hex" "$tmp/raw.hex" ||
        bad "itm_only_csformat's de-formatted ID 0x14 bytes are not itm_only_raw's file"
fi

# ---- usage
"$E" dump --itm-sync=sometimes "$orig" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || bad "--itm-sync=sometimes is not a usage error"
grep -q "wait or assume" "$tmp/err" || bad "--itm-sync=sometimes: message lacks the choices: $(cat "$tmp/err")"

[ $fail -eq 0 ] && echo "ok: ITM without sync packets decodes with --itm-sync=assume; ocsd listings are OpenCSD's"
exit $fail
