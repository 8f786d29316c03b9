#!/bin/bash
# etmkit script against the ground truth of every `etmkit gen` scenario (seeds 1 and 7):
#   --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr
# The ground truth is perf 6.1's sample policy applied to what really ran, so:
#  1. with --no-end-flush (perf 6.1's end of trace) the output equals expected-branches.txt
#     byte for byte -- including the scenarios where perf 6.1 itself prints something else;
#  2. without it, the only difference is the "tr end ... => 0" flush at the end of each trace
#     source (README.md: "End of trace"): added lines of that form, nothing else;
#  3. where the recording's kernel image is not available (etmkit doctor says so), the truth's
#     kernel code cannot be decoded: it is compared with the truth where kernel code turned into
#     the gaps a decoder must show ("tr end <branch> => 0", "tr strt 0 => <user address>"),
#     CPU by CPU (without kernel ranges perf's time-stamp interleaving of CPUs is different).
set -u
[ -x "$ETMKIT_BIN" ] || { echo "SKIP: no etmkit binary"; exit 77; }
scen=$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')
[ -n "$scen" ] || { echo "SKIP: etmkit gen lists no scenario"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fold() { tr -s ' \t' ' ' | sed 's/^ //; s/ $//'; }
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
nokernel() { # truth lines -> what a decoder without kernel code prints
  awk 'function k(a) { return length(a) == 16 && substr(a, 1, 1) ~ /[89a-f]/ }
  { split($0, s, " => "); n = split(s[1], L, " "); split(s[2], R, " ");
    from = L[n - 2]; to = R[1]; fl = ""; for (i = 3; i <= n - 3; i++) fl = fl (fl ? " " : "") L[i];
    if (k(from)) { if (to != "0" && !k(to)) print L[1] " " L[2] " tr strt 0 [unknown] ([unknown]) => " s[2]; next }
    if (from == "0" && k(to)) next
    if (k(to)) { print L[1] " " L[2] " tr end " fl " " L[n - 2] " " L[n - 1] " " L[n] " => 0 [unknown] ([unknown])"; next }
    print }'
}
bycpu() { awk '{ print $2 "\t" NR "\t" $0 }' | sort -s -k1,1 -k2,2n | cut -f3-; }
fail=0; n=0
for sc in $scen; do
  for seed in ${GEN_SEEDS:-1 7}; do
    out="$tmp/$sc-$seed"
    if ! "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" -o "$out" >"$out.log" 2>&1; then
      echo "FAIL $sc seed $seed: etmkit gen failed"; head -3 "$out.log"; fail=1; continue
    fi
    for data in "$out"/perf*.data; do
      [ -f "$data" ] || continue
      sfx=$(basename "$data" .data); sfx=${sfx#perf}
      exp="$out/expected-branches$sfx.txt"
      [ -f "$exp" ] || continue
      name="$sc seed $seed${sfx:+ ($sfx)}"
      n=$((n + 1))
      "$ETMKIT_BIN" script -q --symfs "$out/symfs" --no-end-flush --itrace=b -F $F "$data" 2>"$tmp/err" | fold >"$tmp/compat"
      "$ETMKIT_BIN" script -q --symfs "$out/symfs" --itrace=b -F $F "$data" 2>>"$tmp/err" | fold >"$tmp/ours"
      fold <"$exp" >"$tmp/truth"
      if "$ETMKIT_BIN" doctor --symfs "$out/symfs" "$data" 2>/dev/null | grep -q "no kernel image was given"; then
        nokernel <"$tmp/truth" | bycpu >"$tmp/want"
        bycpu <"$tmp/compat" >"$tmp/got"
        how="CPU by CPU, kernel code as gaps"
      else
        cp "$tmp/truth" "$tmp/want"; cp "$tmp/compat" "$tmp/got"; how="exactly"
      fi
      if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL $name: --no-end-flush output differs from the ground truth ($how):"
        diff "$tmp/want" "$tmp/got" | head -10 | cut -c1-200
        fail=1; continue
      fi
      diff "$tmp/compat" "$tmp/ours" >"$tmp/d"
      if grep -q '^<' "$tmp/d" || grep '^>' "$tmp/d" | grep -vqE '^> .* tr end .* => 0 \[unknown\] \(\[unknown\]\)$'; then
        echo "FAIL $name: the end-of-trace flush changed more than its own lines:"
        head -10 "$tmp/d" | cut -c1-200
        fail=1; continue
      fi
      echo "ok: $name: $(wc -l <"$tmp/truth") lines equal the ground truth ($how), $(grep -c '^>' "$tmp/d") end-of-trace lines added"
    done
  done
done
[ "$n" -gt 0 ] || { echo "SKIP: no scenario wrote a perf.data file"; exit 77; }
exit $fail
