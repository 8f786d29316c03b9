#!/bin/bash
# etmkit script with no --itrace and no -F against Linux perf 6.1's `perf script` on `etmkit gen`
# recordings (runs of blanks folded, as everywhere).
#
# 1. basic and per-thread (scenarios perf 6.1 decodes right): `diff perf etmkit` must be
#    exactly tests/golden/default-vs-perf/<scenario>.diff (after its '#' lines, which say why:
#    perf 6.1 drops the last branch of the trace), and with --no-end-flush the outputs must be
#    equal. perf's default is --itrace=ce: branches samples for every branch, no instructions
#    samples; a per-thread recording has no cpu column.
# 2. workload (4 CPUs, idle tasks): the threads the two name, as "comm tid" pairs, must be the
#    same: pid/tid 0 is "swapper". (perf 6.1 gives samples of the raw per-CPU queues to the
#    wrong thread and CPU there -- docs/SIMULATOR.md -- so the samples themselves differ.)
set -u -o pipefail
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed (apt-get install linux-perf)"; exit 77; }
perf version >/dev/null 2>&1 || { echo "SKIP: perf does not run here"; exit 77; }
G=$ETMKIT_SRC/tests/golden/default-vs-perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fold() { tr -s ' \t' ' ' | sed 's/^ //; s/ $//'; }
fail=0
gen() { # scenario -> $tmp/<scenario>
  "$ETMKIT_BIN" gen --scenario "$1" --seed 1 -o "$tmp/$1" >"$tmp/$1.log" 2>&1 ||
    { echo "FAIL: etmkit gen --scenario $1 failed: $(tail -2 "$tmp/$1.log")"; exit 1; }
}

for sc in basic per-thread; do
  sfail=0
  gen "$sc"
  d=$tmp/$sc
  perf script -i "$d/perf.data" --symfs "$d/symfs" 2>"$d/perf.err" | fold >"$d/perf.txt"
  [ -s "$d/perf.txt" ] || { echo "FAIL $sc: perf script printed nothing: $(head -2 "$d/perf.err")"; fail=1; continue; }
  "$ETMKIT_BIN" script -q --symfs "$d/symfs" "$d/perf.data" 2>"$d/e.err" | fold >"$d/etmkit.txt" ||
    { echo "FAIL $sc: etmkit script failed: $(head -2 "$d/e.err")"; fail=1; continue; }
  diff "$d/perf.txt" "$d/etmkit.txt" >"$d/diff"
  grep -v '^#' "$G/$sc.diff" >"$d/want"
  if ! cmp -s "$d/want" "$d/diff"; then
    echo "FAIL $sc: the difference from perf 6.1's default output is not the documented one ($G/$sc.diff):"
    diff "$d/want" "$d/diff" | head -20
    sfail=1
  fi
  "$ETMKIT_BIN" script -q --no-end-flush --symfs "$d/symfs" "$d/perf.data" | fold >"$d/etmkit2.txt"
  if ! cmp -s "$d/perf.txt" "$d/etmkit2.txt"; then
    echo "FAIL $sc: with --no-end-flush the output differs from perf 6.1's:"
    diff "$d/perf.txt" "$d/etmkit2.txt" | head -20
    sfail=1
  fi
  if [ $sfail -eq 0 ]; then
    echo "ok $sc: $(wc -l <"$d/perf.txt") lines as perf 6.1's, plus the documented end of trace"
  else
    fail=1
  fi
done

gen workload
d=$tmp/workload
perf script -i "$d/perf.data" --symfs "$d/symfs" --itrace=b -F comm,tid 2>/dev/null | fold | sort -u >"$d/perf.threads"
"$ETMKIT_BIN" script -q --symfs "$d/symfs" --itrace=b -F comm,tid "$d/perf.data" | fold | sort -u >"$d/etmkit.threads"
grep -qx 'swapper 0' "$d/perf.threads" || { echo "FAIL workload: perf 6.1 names no 'swapper 0' (has the scenario changed?)"; fail=1; }
if ! cmp -s "$d/perf.threads" "$d/etmkit.threads"; then
  echo "FAIL workload: the threads are named differently (< perf 6.1, > etmkit):"
  diff "$d/perf.threads" "$d/etmkit.threads"
  fail=1
else
  echo "ok workload: the same $(wc -l <"$d/perf.threads") threads, $(tr '\n' ',' <"$d/perf.threads" | sed 's/,$//')"
fi
exit $fail
