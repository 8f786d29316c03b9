#!/bin/sh
# Files a command writes through a temporary beside -o (export in every format, merge, inject)
# get the mode open(2) would give them under the caller's umask, as any other tool's output:
# mkstemp alone makes them 0600, which other users (a web server showing a flame graph, a
# fleet's reader) cannot read.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$ETMKIT_BIN" gen -q --scenario basic -o "$tmp/rec" || fail "gen exited $?"
for mask in 022 027; do
    want=$(printf '%o' $((0666 & ~0$mask)))
    for fmt in autofdo branch-list folded svg perfetto; do
        out="$tmp/out.$mask.$fmt"
        (umask $mask && "$ETMKIT_BIN" export -q --format=$fmt --symfs "$tmp/rec/symfs" -o "$out" \
            "$tmp/rec/perf.data") || fail "export --format=$fmt exited $?"
        got=$(stat -c %a "$out")
        [ "$got" = "$want" ] || fail "export --format=$fmt under umask $mask: mode $got, expected $want"
    done
    (umask $mask && "$ETMKIT_BIN" merge -q -o "$tmp/m.$mask" "$tmp/out.$mask.branch-list") ||
        fail "merge exited $?"
    got=$(stat -c %a "$tmp/m.$mask")
    [ "$got" = "$want" ] || fail "merge under umask $mask: mode $got, expected $want"
    (umask $mask && "$ETMKIT_BIN" inject -q --symfs "$tmp/rec/symfs" -o "$tmp/i.$mask" \
        "$tmp/rec/perf.data") || fail "inject exited $?"
    got=$(stat -c %a "$tmp/i.$mask")
    [ "$got" = "$want" ] || fail "inject under umask $mask: mode $got, expected $want"
done
echo "ok: export (5 formats), merge and inject write files with the umask's mode"
