#!/bin/sh
# Independent check of `etmkit gen` with Debian's perf 6.1 (linked with OpenCSD 1.3.3).
#
# For every scenario and two seeds, perf decodes the generated recording with
#   perf script --symfs OUT/symfs --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr
# and its output must equal, byte for byte,
#   - OUT/expected-branches.txt (the ground truth) where perf 6.1 is right, and
#   - OUT/perf-6.1-expected.txt (the simulator's prediction of perf 6.1's answer) everywhere.
# For the scenarios listed in PERF_FAILS (perf 6.1 is wrong by design, see docs/SIMULATOR.md)
# the two files must differ: the exact expected difference is `diff expected-branches.txt
# perf-6.1-expected.txt`, of which the first lines are printed.
set -eu
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
perf version >/dev/null 2>&1 || { echo "SKIP: perf does not run here"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
# scenario: reason perf 6.1 prints something else than the ground truth
PERF_FAILS="
kernel-and-user-novmlinux: no kernel image: kernel ranges are never decoded, user samples around system calls change
dlopen-reuse: perf decodes the first library's trace with the code of the library mapped last at its address
per-cpu-trbe: perf builds every raw queue's decoder from CPU 0's metadata and reports cpu 0 for all trace
header-v2: perf 6.1 refuses AUXTRACE_INFO version 2 and prints nothing
jit-reuse: perf 6.1 reads no jitdump (only perf inject --jit would turn it into files): JIT code is unreadable anonymous memory, each call into it is joined to what follows
trace-id-per-sink: perf 6.1 refuses AUXTRACE_INFO version 2 (and knows no AUX_OUTPUT_HW_ID v0.1) and prints nothing
workload: raw queues are reported as cpu 0, and samples decoded before a context change are given to the new thread
workload-real: as workload (raw queues as cpu 0, samples before a context change given to the new thread), on real code
"
# scenario: why perf 6.1 may or may not print the ground truth, depending on the seed
PERF_MAY_FAIL="
arbitration-stress: random topologies: per-CPU TRBEs (raw queues reported as cpu 0) and system-wide sessions (samples given to the next thread); a refused session may record no trace at all
"
fails() { echo "$PERF_FAILS" | grep -q "^$1:"; }
may_fail() { echo "$PERF_MAY_FAIL" | grep -q "^$1:"; }
scenarios=${GEN_SCENARIOS:-$("$ETMKIT_BIN" gen --list | awk '{print $1}')}
fail=0
for sc in $scenarios; do
  for seed in 1 7; do
    out="$tmp/$sc-$seed"
    if ! "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" -o "$out" 2>"$out.log"; then
      grep -q "libc6-arm64-cross" "$out.log" && { echo "skipped: $sc: $(grep -o 'install the packages.*' "$out.log" | head -1)"; continue; }
      echo "FAIL: gen $sc seed $seed"; cat "$out.log"; fail=1; continue
    fi
    [ -f "$out/perf.data" ] || { echo "ok: $sc seed $seed: no perf.data (snapshot scenario)"; continue; }
    for data in "$out"/perf*.data; do
      sfx=$(basename "$data" .data); sfx=${sfx#perf}
      exp="$out/expected-branches$sfx.txt"; pred="$out/perf-6.1-expected$sfx.txt"; got="$out/perf$sfx.txt"
      name="$sc seed $seed${sfx:+ session ${sfx#-}}"
      [ -s "$exp" ] || may_fail "$sc" || { echo "FAIL: $name: empty ground truth"; fail=1; continue; }
      perf script -i "$data" --symfs "$out/symfs" --itrace=b -F $F >"$got" 2>"$got.err" || true
      if ! cmp -s "$got" "$pred"; then
        echo "FAIL: $name: perf 6.1 output differs from $(basename "$pred")"
        diff "$got" "$pred" | head -10
        fail=1
        continue
      fi
      if may_fail "$sc"; then
        if cmp -s "$got" "$exp"; then
          echo "ok: $name: $(wc -l <"$got") lines identical to the ground truth"
        else
          echo "ok: $name: perf 6.1 differs from the ground truth as predicted ($(wc -l <"$got") lines)"
        fi
      elif fails "$sc"; then
        if cmp -s "$got" "$exp"; then
          echo "FAIL: $name: perf 6.1 was expected to fail but printed the ground truth"
          fail=1
        else
          echo "ok: $name: perf 6.1 fails as predicted ($(wc -l <"$got") lines, truth $(wc -l <"$exp")):$(echo "$PERF_FAILS" | grep "^$sc:" | cut -d: -f2-)"
          diff "$exp" "$got" | head -3 | cut -c1-160 | sed 's/^/    /'
        fi
      elif cmp -s "$got" "$exp"; then
        echo "ok: $name: $(wc -l <"$got") lines identical to the ground truth"
      else
        echo "FAIL: $name: perf 6.1 output differs from $(basename "$exp")"
        diff "$got" "$exp" | head -10
        fail=1
      fi
    done
  done
done
exit $fail
