#!/bin/bash
# perf's everyday filters in etmkit script (issue 11, item 6): -C/--cpu, --pid, --tid, --comm
# and --time against Debian's perf 6.1, same command line (-i FILE --symfs DIR ...), on
# `etmkit gen` recordings whose unfiltered outputs are equal (checked first):
#   two-processes    3 CPUs, 2 processes, 3 threads, each alone on its CPU (every field,
#                    time included, is perf's)
#   kernel-and-user  (seed 5) 2 CPUs sharing one ETR: the AUX buffer of CPU 0 holds some of CPU 1's
#                    trace, and perf's -C 1 leaves that buffer out (auxtrace.c filter_cpu),
#                    so -C 1 keeps fewer samples than --tid 1001 although thread 1001 only
#                    ran on CPU 1 (its time field is not perf's: docs/SCRIPT.md, "Sample times")
# Each filtered output must equal perf's exactly, be non-empty and be shorter than the
# unfiltered one. perf 6.1 stamps every sample of these recordings with one time (the last AUX
# record's), so its --time keeps all or nothing: those cases check the bounds (inclusive, in
# nanoseconds, open ends, several ranges) and tests/scripts/script_time_filter.sh checks that
# --time selects within a recording where etmkit's times differ.
set -u
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
perf version >/dev/null 2>&1 || { echo "SKIP: perf does not run here"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
# compare NAME DIR FIELDS MODE FILTER...: MODE "fewer" (non-empty, shorter than unfiltered),
# "all" (equal to unfiltered) or "none" (empty)
compare() {
  local name=$1 d=$2 F=$3 mode=$4; shift 4
  perf script -i "$d/perf.data" --symfs "$d/symfs" --itrace=b -F "$F" "$@" >"$T/perf" 2>"$T/perf.err"
  "$ETMKIT_BIN" script -q --no-end-flush -i "$d/perf.data" --symfs "$d/symfs" --itrace=b -F "$F" "$@" \
    >"$T/ours" 2>"$T/ours.err"
  local rc=$? n all
  n=$(wc -l <"$T/ours"); all=$(wc -l <"$d/all")
  if [ $rc -ne 0 ]; then
    echo "FAIL: $name $*: exit $rc: $(head -2 "$T/ours.err")"; fail=1; return
  fi
  if ! cmp -s "$T/perf" "$T/ours"; then
    echo "FAIL: $name $*: differs from perf 6.1 ($(wc -l <"$T/perf") lines, etmkit $n):"
    diff "$T/perf" "$T/ours" | head -6 | cut -c1-200; fail=1; return
  fi
  case $mode in
    fewer) [ "$n" -gt 0 ] && [ "$n" -lt "$all" ] ||
             { echo "FAIL: $name $*: $n lines of $all: the filter must keep some, not all"; fail=1; return; } ;;
    all) cmp -s "$T/ours" "$d/all" || { echo "FAIL: $name $*: not every sample ($n of $all)"; fail=1; return; } ;;
    none) [ "$n" -eq 0 ] || { echo "FAIL: $name $*: $n lines, want none"; fail=1; return; } ;;
  esac
  echo "ok: $name $*: $n of $all lines, as perf"
}
setup() { # scenario fields [seed]
  local d="$T/$1"
  "$ETMKIT_BIN" gen --scenario "$1" --seed "${3:-1}" -o "$d" >/dev/null 2>&1 || { echo "FAIL: etmkit gen $1"; exit 1; }
  perf script -i "$d/perf.data" --symfs "$d/symfs" --itrace=b -F "$2" >"$d/all" 2>/dev/null
  "$ETMKIT_BIN" script -q --no-end-flush -i "$d/perf.data" --symfs "$d/symfs" --itrace=b -F "$2" >"$T/ours"
  if [ ! -s "$d/all" ] || ! cmp -s "$d/all" "$T/ours"; then
    echo "FAIL: $1: unfiltered, etmkit and perf 6.1 differ: the filters cannot be compared there"
    diff "$d/all" "$T/ours" | head -5 | cut -c1-200
    exit 1
  fi
}

F=comm,pid,tid,cpu,time,flags,ip,sym,symoff,dso,addr
setup two-processes $F
D="$T/two-processes"
compare two-processes "$D" $F fewer -C 0
compare two-processes "$D" $F fewer -C 1-2
compare two-processes "$D" $F fewer --cpu=0,2
compare two-processes "$D" $F fewer -C2
compare two-processes "$D" $F fewer --pid 1000
compare two-processes "$D" $F fewer --pid=1001
compare two-processes "$D" $F fewer --pid 1001,5
compare two-processes "$D" $F fewer --tid 1000,1001
compare two-processes "$D" $F fewer --tid 1002
compare two-processes "$D" $F fewer --comm simchild
compare two-processes "$D" $F fewer --comm simloop,bash
compare two-processes "$D" $F fewer -C 0-1 --pid 1000
compare two-processes "$D" $F fewer --comm simloop --tid 1002,1001
compare two-processes "$D" $F fewer -C 1,2 --comm simloop
# --time: the one time of every sample, in nanoseconds
t=$(perf script -i "$D/perf.data" --symfs "$D/symfs" --itrace=b -F time --ns 2>/dev/null | awk '{print $1; exit}' | tr -d :)
case $t in *.?????????) ;; *) echo "FAIL: no sample time from perf ('$t')"; exit 1 ;; esac
s=${t%.*}; ns=$((10#${t#*.}))
at() { printf '%s.%09d' $((s + ($1 + ns) / 1000000000)) $((($1 + ns) % 1000000000)); }
compare two-processes "$D" $F all --time "$(at 0),$(at 0)"
compare two-processes "$D" $F none --time "$(at 1),"
compare two-processes "$D" $F none --time ",$(at -1)"
compare two-processes "$D" $F all --time "$(at 0),"
compare two-processes "$D" $F all --time ",$(at 0)"
compare two-processes "$D" $F all --time ","
compare two-processes "$D" $F all --time "$s,$((s + 1))"
compare two-processes "$D" $F all --time "$(at -1000), $(at 1000)"
compare two-processes "$D" $F all --time "$(at -9000),$(at -5000) $(at -1),$(at 0)"
compare two-processes "$D" $F none --time "$(at -9000),$(at -5000) $(at 1),$(at 5)"
compare two-processes "$D" $F none --time "$(at -9000),$(at -1) $(at 1),"
# microseconds as perf prints them are truncated: an end at the printed time leaves them out
us=$(printf '%s.%06d' "$s" $((ns / 1000)))
if [ $((ns % 1000)) -ne 0 ]; then
  compare two-processes "$D" $F none --time ",$us"
fi

F=comm,pid,tid,cpu,flags,ip,sym,symoff,dso,addr
# seed 5: CPU 0's buffer holds some of CPU 1's trace (the seed decides how the threads and the
# ETR's copies interleave; at seed 1 it holds none) and perf loses nothing at block ends
setup kernel-and-user $F 5
D="$T/kernel-and-user"
compare kernel-and-user "$D" $F fewer -C 0
compare kernel-and-user "$D" $F fewer -C 1
compare kernel-and-user "$D" $F fewer --tid 1001
compare kernel-and-user "$D" $F fewer --tid 1000 --comm simloop
n1=$(perf script -i "$D/perf.data" --symfs "$D/symfs" --itrace=b -F $F -C 1 2>/dev/null | wc -l)
nt=$(perf script -i "$D/perf.data" --symfs "$D/symfs" --itrace=b -F $F --tid 1001 2>/dev/null | wc -l)
[ "$n1" -lt "$nt" ] && echo "ok: kernel-and-user: -C 1 keeps $n1 samples, --tid 1001 $nt (CPU 0's buffer left out)" ||
  { echo "FAIL: kernel-and-user no longer shows CPU 1's trace in CPU 0's buffer ($n1, $nt)"; fail=1; }
exit $fail
