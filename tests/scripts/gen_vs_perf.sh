#!/bin/sh
# Independent check of `etmkit gen`: Debian's perf 6.1 (linked with OpenCSD) decodes each
# generated recording and must print exactly the ground truth expected-branches.txt.
# Scenarios where perf 6.1 fails by design are listed in gen_perf_differences.sh instead.
set -eu
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
perf version >/dev/null 2>&1 || { echo "SKIP: perf does not run here"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
fail=0
for sc in ${GEN_SCENARIOS:-basic}; do
  for seed in 1 7; do
    out="$tmp/$sc-$seed"
    "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" -o "$out" 2>"$out.log" || {
      echo "FAIL: gen $sc seed $seed"; cat "$out.log"; fail=1; continue; }
    [ -s "$out/expected-branches.txt" ] || { echo "FAIL: $sc seed $seed: empty ground truth"; fail=1; continue; }
    perf script -i "$out/perf.data" --symfs "$out/symfs" --itrace=b -F $F >"$out/perf.txt" 2>"$out/perf.err" || true
    if cmp -s "$out/perf.txt" "$out/expected-branches.txt"; then
      echo "ok: $sc seed $seed: $(wc -l <"$out/perf.txt") lines identical"
    else
      echo "FAIL: $sc seed $seed: perf 6.1 output differs from expected-branches.txt"
      diff "$out/perf.txt" "$out/expected-branches.txt" | head -20
      fail=1
    fi
  done
done
exit $fail
