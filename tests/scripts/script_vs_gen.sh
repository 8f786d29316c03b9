#!/bin/bash
# etmkit script against the ground truth of every `etmkit gen` scenario (seeds 1 and 7):
#   --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr
# The ground truth is perf 6.1's sample policy applied to what really ran. With --no-end-flush
# (perf 6.1's end of trace) etmkit's output must equal it except for the differences README.md
# documents, which tests/scripts/gen_check.py checks one by one: what perf drops at block ends
# (every extra branch must be one that really ran: truth.branches.tsv), ETE exception flags,
# and, without a kernel image (etmkit doctor says so), kernel code shown as gaps. Without
# --no-end-flush the only further difference is one "tr end ... => 0" line per trace source.
set -u
[ -x "$ETMKIT_BIN" ] || { echo "SKIP: no etmkit binary"; exit 77; }
scen=$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')
[ -n "$scen" ] || { echo "SKIP: etmkit gen lists no scenario"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fold() { tr -s ' \t' ' ' | sed 's/^ //; s/ $//'; }
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
py=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
check="$ETMKIT_SRC/tests/scripts/gen_check.py"
fail=0; n=0
for sc in $scen; do
  # two seeds; one under the sanitizers (slow)
  seeds=${GEN_SEEDS:-1 7}
  [ "${ETMKIT_SANITIZE:-0}" = 1 ] && [ -z "${GEN_SEEDS:-}" ] && seeds=1
  for seed in $seeds; do
    out="$tmp/$sc-$seed"
    if ! "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" -o "$out" >"$out.log" 2>&1; then
      # workload-real reads Debian's AArch64 libraries: without them it is skipped, with the reason
      grep -q "libc6-arm64-cross" "$out.log" && { echo "skipped: $sc: $(grep -o 'install the packages.*' "$out.log" | head -1)"; continue; }
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
      opts=()
      "$ETMKIT_BIN" doctor --symfs "$out/symfs" "$data" 2>/dev/null | grep -q "no kernel image was given" &&
        opts+=(--no-kernel)
      "$ETMKIT_BIN" dump --config "$data" 2>/dev/null | grep -q ": ETE," && opts+=(--ete)
      if ! "$py" "$check" "$tmp/truth" "$tmp/compat" "$out/truth.branches.tsv" "${opts[@]}" >"$tmp/verdict"; then
        echo "FAIL $name: differs from the ground truth beyond the documented differences:"
        head -12 "$tmp/verdict" | cut -c1-200
        fail=1; continue
      fi
      diff "$tmp/compat" "$tmp/ours" >"$tmp/d"
      if grep -q '^<' "$tmp/d" || grep '^>' "$tmp/d" | grep -vqE '^> .* tr end .* => 0 \[unknown\] \(\[unknown\]\)$'; then
        echo "FAIL $name: the end-of-trace flush changed more than its own lines:"
        head -10 "$tmp/d" | cut -c1-200
        fail=1; continue
      fi
      echo "ok: $name${opts:+ (${opts[*]})}: $(cat "$tmp/verdict"); $(grep -c '^>' "$tmp/d") end-of-trace lines added"
    done
  done
done
[ "$n" -gt 0 ] || { echo "SKIP: no scenario wrote a perf.data file"; exit 77; }
exit $fail
