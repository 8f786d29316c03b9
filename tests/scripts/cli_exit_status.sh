#!/bin/bash
# The exit status tells the truth (issue 11, item 4), in script and in doctor alike:
#   1 when not one sample came out of a recording with problems (its code is missing);
#   0 when samples came out, even with problems (1 with --strict);
#   0 when no sample was asked for and nothing is wrong (--itrace=e), and when a filter
#     leaves no sample of a recording that gave some (the filter is the user's choice).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for sc in basic kernel-and-user-novmlinux; do
  "$ETMKIT_BIN" gen --scenario $sc -o "$T/$sc" >/dev/null 2>&1 || { echo "SKIP: etmkit gen $sc failed"; exit 77; }
done
B="$T/basic"; N="$T/kernel-and-user-novmlinux"
fail=0
# check STATUS LINES DESCRIPTION COMMAND...: the exit status, and the lines on stdout
# (LINES: a number, "+" for some, "-" for any: doctor's report)
check() {
  local want=$1 lines=$2 what=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"
  local rc=$? got lok=1
  got=$(wc -l <"$T/out")
  case $lines in
    -) ;;
    +) [ "$got" -gt 0 ] || lok=0 ;;
    *) [ "$got" -eq "$lines" ] || lok=0 ;;
  esac
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: $what: exit $rc, want $want ($*)"; head -3 "$T/err"; fail=1
  elif [ $lok = 0 ]; then
    echo "FAIL: $what: $got lines of output, want $lines"; fail=1
  else
    echo "ok: $what: exit $rc"
  fi
}
for cmd in script doctor; do
  some=+ none=0; [ $cmd = doctor ] && some=- none=-
  # basic without --symfs: the program's code is missing, nothing decodes
  check 1 $none "$cmd, no sample and problems" "$ETMKIT_BIN" $cmd -q --itrace=b "$B/perf.data"
  check 1 $none "$cmd, no sample and problems, a filter too" "$ETMKIT_BIN" $cmd -q --itrace=b --pid 1000 "$B/perf.data"
  check 0 $some "$cmd, samples and no problem" "$ETMKIT_BIN" $cmd -q --itrace=b --symfs "$B/symfs" "$B/perf.data"
  check 0 $some "$cmd --strict, samples and no problem" "$ETMKIT_BIN" $cmd -q --strict --itrace=b --symfs "$B/symfs" "$B/perf.data"
  check 0 $none "$cmd, no sample asked for, no problem" "$ETMKIT_BIN" $cmd -q --itrace=e --symfs "$B/symfs" "$B/perf.data"
  check 0 $none "$cmd, a filter leaving no sample" "$ETMKIT_BIN" $cmd -q --itrace=b --pid 1 --symfs "$B/symfs" "$B/perf.data"
  # no kernel image: user samples come out, kernel code is a problem
  check 0 $some "$cmd, samples and problems" "$ETMKIT_BIN" $cmd -q --itrace=b --symfs "$N/symfs" "$N/perf.data"
  check 1 $some "$cmd --strict, samples and problems" "$ETMKIT_BIN" $cmd -q --strict --itrace=b --symfs "$N/symfs" "$N/perf.data"
done
exit $fail
