#!/bin/sh
# OpenCSD 1.8.0 compatibility of the PTM/ETMv3/STM/ITM modules on crafted snapshots
# (tests/data/ocsd-compat, written by make-cases.py there): `etmkit dump --format=ocsd`, which
# runs them with their OpenCSD options (EK_DECODE_COMPAT_OCSD), lists each exactly as OpenCSD
# 1.8.0's trc_pkt_lister -decode did (tests/golden/ocsd-compat/NAME.ppl): packet lines in
# order, element lines in order, and every other line (the fatal stop, its logged error, the
# byte count) in order. The interleaving of packet and element lines is left out, as
# ocsd-compare leaves it out: OpenCSD's ETMv3 decoder emits a held-back range at different
# points than etmkit's.
set -u
data="$ETMKIT_SRC/tests/data/ocsd-compat"
golden="$ETMKIT_SRC/tests/golden/ocsd-compat"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

split() { # file prefix: .pkt, .elem, .other
    grep '^Idx:' "$1" | grep -v 'OCSD_GEN_TRC_ELEM' >"$2.pkt"
    grep '^Idx:[0-9]*; ID:[0-9a-f]*; OCSD_GEN_TRC_ELEM' "$1" >"$2.elem"
    grep -v '^Idx:' "$1" >"$2.other"
}

n=0
fail=0
for want in "$golden"/*.ppl; do
    name=$(basename "$want" .ppl)
    [ -d "$data/$name" ] || { echo "$name: no snapshot folder $data/$name"; fail=1; continue; }
    (cd "$data" && "$ETMKIT_BIN" dump --format=ocsd --decode "$name" 2>/dev/null) |
        sed -n '/^Trace Packet Lister : Protocol/,$p' >"$tmp/$name.got"
    split "$want" "$tmp/$name.w"
    split "$tmp/$name.got" "$tmp/$name.g"
    for k in pkt elem other; do
        if ! cmp -s "$tmp/$name.w.$k" "$tmp/$name.g.$k"; then
            echo "$name: $k lines differ from OpenCSD 1.8.0's (< OpenCSD, > etmkit):"
            diff "$tmp/$name.w.$k" "$tmp/$name.g.$k" | head -20
            fail=1
        fi
    done
    n=$((n + 1))
done
[ "$n" -ge 11 ] || { echo "expected at least 11 cases, found $n"; exit 1; }
[ "$fail" -eq 0 ] || exit 1
echo "$n crafted cases listed as OpenCSD 1.8.0 lists them"
exit 0
