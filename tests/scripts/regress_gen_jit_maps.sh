#!/bin/bash
# Regression: `etmkit gen --scenario jit-reuse --seed 2 --trace-size 1M` (and seed 2 with
# `retstack = 1`) stopped with "too many mappings in simjit": the JIT kept adding live functions
# (each a mapping) until the process's table was full. It now collects its code cache when the table is full, as when the cache is.
# The recording must then decode to its ground truth exactly (branch samples, in order).
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf 'retstack = 1\n' >"$tmp/retstack.cfg"
for run in "2 --trace-size 1M" "5 --trace-size 1M" "2 --config $tmp/retstack.cfg"; do
    set -- $run
    seed=$1
    shift
    out="$tmp/jit-$seed-$#-$(basename "$2")"
    if ! "$ETMKIT_BIN" gen --scenario jit-reuse --seed "$seed" "$@" -o "$out" >"$out.log" 2>&1; then
        echo "FAIL: gen jit-reuse seed $seed $*: $(grep -m1 error "$out.log")"
        fail=1
        continue
    fi
    grep -q '^ *[0-9]' "$out/expected-branches.txt" || { echo "FAIL: seed $seed $*: no expected branches"; fail=1; continue; }
    "$ETMKIT_BIN" script -q --symfs "$out/symfs" --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr \
        "$out/perf.data" >"$tmp/ours" 2>"$tmp/err"
    if ! cmp -s "$out/expected-branches.txt" "$tmp/ours"; then
        echo "FAIL: seed $seed $*: etmkit script differs from expected-branches.txt:"
        diff "$out/expected-branches.txt" "$tmp/ours" | head -5
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "jit-reuse with a long trace ok"
exit $fail
