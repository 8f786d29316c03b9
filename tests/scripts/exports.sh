#!/bin/bash
# What the library exports (issue 12, item 6; the rule is in docs/DESIGN.md,
# "Only `ek_` is exported"):
#  - libetmkit.so exports only ek_ names (nm -D), among them the API's entry points, and
#    nothing of the simulator (etmkit_sim is a library of its own);
#  - in libetmkit.a every defined global symbol is either ek_ with default visibility (the
#    API, the same names the shared library exports) or hidden (STV_HIDDEN: the library's
#    internals, as_*, dso_*, qdecode_*, ek_vec_*...: a program linking the archive statically
#    resolves them inside itself, and never exports them again, not even from a shared object
#    it builds);
#  - no trace encoder is in the library: the ETMv4/ETE, PTM and ETMv3 encoders are the
#    simulator's (src/sim/enc_*.c, in etmkit_sim), nothing in libetmkit calls them;
#  - a symbol that breaks the rule is named, with the member that defines it.
set -u
build=${ETMKIT_BUILD:?}
so=$build/libetmkit.so
ar=$build/libetmkit.a
for t in nm readelf; do
    command -v $t >/dev/null || { echo "SKIP: $t not installed (binutils)"; exit 77; }
done
[ -f "$so" ] && [ -f "$ar" ] || { echo "FAIL: no $so or $ar"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# ---- the shared library
nm -D --defined-only "$so" | awk '{ print $NF }' | sort -u >"$tmp/so"
grep -v '^ek_' "$tmp/so" >"$tmp/so.bad"
[ -s "$tmp/so.bad" ] && bad "libetmkit.so exports names without ek_: $(tr '\n' ' ' <"$tmp/so.bad")"
n=$(wc -l <"$tmp/so")
for s in ek_version ek_strerror ek_decode_new ek_session_open ek_snapshot_open; do
    grep -qx "$s" "$tmp/so" || bad "libetmkit.so does not export $s ($n names)"
done
grep -E '^ek_(sim|simblob)_' "$tmp/so" >"$tmp/so.sim"
[ -s "$tmp/so.sim" ] && bad "libetmkit.so holds the simulator: $(tr '\n' ' ' <"$tmp/so.sim")"

# ---- the static library: readelf -s per member (Num Value Size Type Bind Vis Ndx Name)
readelf -sW "$ar" | awk '
    /^File: / { member = $2; next }
    $5 != "GLOBAL" && $5 != "WEAK" { next }
    $7 == "UND" || NF < 8 { next }
    $6 == "HIDDEN" || $6 == "INTERNAL" { hidden++; next }
    $8 ~ /^ek_/ && $6 == "DEFAULT" { print $8 > "'"$tmp"'/ar.api"; next }
    { print member ": " $8 " (" $5 " " $6 ")" }
    END { print hidden + 0 > "'"$tmp"'/ar.hidden" }' >"$tmp/ar.bad"
[ -s "$tmp/ar.bad" ] && bad "libetmkit.a defines globals that are neither ek_ nor hidden:
$(head -20 "$tmp/ar.bad")"
sort -u "$tmp/ar.api" >"$tmp/ar.api.sorted"
diff -u "$tmp/so" "$tmp/ar.api.sorted" >"$tmp/diff" ||
    bad "libetmkit.a's visible ek_ names differ from libetmkit.so's: $(head -20 "$tmp/diff")"
nm --defined-only "$ar" 2>/dev/null | awk '$2 ~ /^[A-Z]$/ { print $3 }' |
    grep -E '^(ek_etm4_enc_|v7_encode_)' | sort -u >"$tmp/ar.enc"
[ -s "$tmp/ar.enc" ] && bad "libetmkit.a holds a trace encoder (the simulator's): $(tr '\n' ' ' <"$tmp/ar.enc")"
hidden=$(cat "$tmp/ar.hidden")
[ "$hidden" -gt 0 ] || bad "libetmkit.a has no hidden globals: is it built with -fvisibility=hidden?"

[ $fail -eq 0 ] && echo "ok: libetmkit.so exports $n names, all ek_; libetmkit.a: the same $n, $hidden hidden internals"
exit $fail
