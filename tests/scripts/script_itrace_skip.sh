#!/bin/bash
# --itrace=sN in etmkit script: the first N samples of the output are left out, counted once
# over the whole recording (every queue and trace ID, branches and instructions samples
# together), before the display filters -- as perf counts them where it implements 's' (its
# Intel PT decoder: one num_events per session; perf 6.1's cs-etm ignores the letter,
# docs/SCRIPT.md, "etmkit script and perf 6.1"). On `etmkit gen --scenario
# shared-sink-multi-cpu` (4 CPUs, 4 trace IDs in one ETR, several decoders), with one decoder
# thread and with several: each skipped run must print exactly the unskipped run's lines after
# its first N, in order.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$ETMKIT_BIN" gen --scenario shared-sink-multi-cpu --seed 2 --trace-size 48K -q -o "$T/g" >/dev/null 2>&1 ||
  { echo "SKIP: etmkit gen failed"; exit 77; }
fail=0
run() { # out-file, options...
  local out=$1; shift
  "$ETMKIT_BIN" script -q --symfs "$T/g/symfs" "$@" "$T/g/perf.data" >"$out" 2>"$T/err" ||
    { echo "FAIL: etmkit script $*: exit $?: $(head -2 "$T/err")"; fail=1; }
}
check() { # name, N, unskipped file, options of the skipped run...
  local name=$1 n=$2 all=$3; shift 3
  run "$T/got" "$@"
  tail -n +$((n + 1)) "$all" >"$T/want"
  if ! cmp -s "$T/want" "$T/got"; then
    echo "FAIL: $name: $(wc -l <"$T/got") lines, want $(wc -l <"$T/want") (the unskipped run's after its first $n)"
    diff "$T/want" "$T/got" | head -4
    fail=1
  else
    echo "ok: $name: the first $n of $(wc -l <"$all") lines left out"
  fi
}
B=(-F pid,tid,cpu,flags,ip,sym,symoff,dso,addr)
run "$T/b" --itrace=b "${B[@]}"
[ "$(awk '{print $2}' "$T/b" | sort -u | wc -l)" -ge 2 ] || { echo "FAIL: fewer than 2 CPUs in the output"; exit 1; }
for j in 1 4; do
  check "--itrace=bs5 -j $j" 5 "$T/b" --itrace=bs5 -j "$j" "${B[@]}"
done
# both kinds in one count: skip up to and including the first instructions sample (period 100)
I=(-F pid,tid,cpu,period,ip,sym,symoff,dso)
run "$T/ib" --itrace=i100ib "${I[@]}"
k=$(awk '$3 == 100 { print NR; exit }' "$T/ib")
[ -n "$k" ] && [ "$k" -gt 1 ] || { echo "FAIL: no instructions sample after a branches one"; exit 1; }
check "--itrace=i100ibs$k" "$k" "$T/ib" --itrace=i100ibs"$k" "${I[@]}"
# before the filters: skip past the first sample of the second CPU's thread, then keep that
# thread's samples: those after the first N of all
tid=$(awk -v c="$(awk 'NR == 1 { print $2 }' "$T/b")" '$2 != c { split($1, p, "/"); print p[2]; exit }' "$T/b")
n=$(awk -v t="$tid" '{ split($1, p, "/") } p[2] == t { print NR; exit }' "$T/b")
run "$T/got" --itrace=bs"$n" --tid "$tid" "${B[@]}"
tail -n +$((n + 1)) "$T/b" | awk -v t="$tid" '{ split($1, p, "/") } p[2] == t' >"$T/want"
if [ ! -s "$T/want" ] || ! cmp -s "$T/want" "$T/got"; then
  echo "FAIL: --itrace=bs$n --tid $tid: $(wc -l <"$T/got") lines, want $(wc -l <"$T/want")"
  diff "$T/want" "$T/got" | head -4
  fail=1
else
  echo "ok: --itrace=bs$n --tid $tid: $(wc -l <"$T/got") lines (skipped before the filter)"
fi
# -C leaves the other CPUs' buffers out of decoding, as perf does: their samples do not count
cpu=$(awk 'NR == 1 { gsub(/[][]/, "", $2); print $2 + 0 }' "$T/b")
run "$T/bc" --itrace=b -C "$cpu" "${B[@]}"
check "--itrace=bs3 -C $cpu" 3 "$T/bc" --itrace=bs3 -C "$cpu" "${B[@]}"
exit $fail
