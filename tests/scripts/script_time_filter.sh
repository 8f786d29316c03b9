#!/bin/bash
# --time START,STOP in etmkit script (issue 11, item 6) where the samples' times differ: on
# `etmkit gen --scenario kernel-and-user` etmkit converts the CoreSight time stamps (perf 6.1
# stamps every sample with one time there: docs/SCRIPT.md, "Sample times"; the comparison with
# perf is tests/scripts/script_filters_vs_perf.sh). A filtered run must print exactly the lines
# of the unfiltered run whose time is within the ranges, both ends included, in the same order;
# each case keeps some samples and leaves some out.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$ETMKIT_BIN" gen --scenario kernel-and-user -o "$T/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen failed"; exit 77; }
F=(--symfs "$T/g/symfs" --itrace=b --ns -F time,flags,ip,sym,addr "$T/g/perf.data")
"$ETMKIT_BIN" script -q "${F[@]}" >"$T/all" || { echo "FAIL: etmkit script"; exit 1; }
# the distinct times, in order
awk '{print $1}' "$T/all" | tr -d : | sort -u >"$T/times"
n=$(wc -l <"$T/times")
[ "$n" -ge 10 ] || { echo "FAIL: only $n distinct sample times: nothing to select among"; exit 1; }
t() { sed -n "$1p" "$T/times"; } # the Nth time
a=$(t $((n / 4))); b=$(t $((n / 2))); c=$(t $((n * 3 / 4))); d=$(t $((n * 3 / 4 + 1)))
fail=0
# select RANGES...: the lines of the unfiltered output within the ranges ("lo,hi", "" = open)
select_lines() {
  awk -v spec="$*" '
    function ns(s,  p) { if (s == "") return -1; split(s, p, "."); return p[1] * 1e9 + p[2] }
    BEGIN { nr = split(spec, r, " "); for (i = 1; i <= nr; i++) { split(r[i], e, ","); lo[i] = ns(e[1]); hi[i] = ns(e[2]) } }
    { x = $1; sub(/:$/, "", x); t = ns(x)
      for (i = 1; i <= nr; i++) if ((lo[i] < 0 || t >= lo[i]) && (hi[i] < 0 || t <= hi[i])) { print; next } }
  ' "$T/all"
}
check() { # ranges
  "$ETMKIT_BIN" script -q --time "$*" "${F[@]}" >"$T/got" 2>"$T/err" ||
    { echo "FAIL: --time '$*': exit $?: $(head -2 "$T/err")"; fail=1; return; }
  select_lines "$@" >"$T/want"
  local g w all
  g=$(wc -l <"$T/got"); w=$(wc -l <"$T/want"); all=$(wc -l <"$T/all")
  if [ "$w" -eq 0 ] || [ "$w" -ge "$all" ]; then
    echo "FAIL: --time '$*': the case selects $w of $all lines"; fail=1
  elif ! cmp -s "$T/got" "$T/want"; then
    echo "FAIL: --time '$*': $g lines, want $w"; diff "$T/want" "$T/got" | head -4; fail=1
  else
    echo "ok: --time '$*': $g of $all lines"
  fi
}
check "$a,$b"
check "$b,$b"
check "$a,"
check ",$c"
check "$a,$a $c,$d"
check ",$a $b,$c $d,"
exit $fail
