#!/bin/bash
# The input of etmkit script and doctor as perf takes it (issue 11, item 6): ./perf.data when
# none is given, -i FILE / --input=FILE / -iFILE, or FILE; the same samples every way. Without
# an input and without ./perf.data the one-line error says that ./perf.data is the default.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$ETMKIT_BIN" gen --scenario basic -o "$T/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen basic failed"; exit 77; }
fail=0
O=(-q --symfs symfs --itrace=b -F tid,cpu,flags,ip,sym,addr)
cd "$T/g" || exit 1
"$ETMKIT_BIN" script "${O[@]}" perf.data >"$T/file" || { echo "FAIL: script perf.data: exit $?"; exit 1; }
[ -s "$T/file" ] || { echo "FAIL: script perf.data printed nothing"; exit 1; }
for how in "" "-i perf.data" "--input=perf.data" "--input perf.data" "-iperf.data" "-i $T/g/perf.data"; do
  # shellcheck disable=SC2086
  "$ETMKIT_BIN" script "${O[@]}" $how >"$T/out" 2>"$T/err"
  rc=$?
  if [ $rc -ne 0 ] || ! cmp -s "$T/file" "$T/out"; then
    echo "FAIL: script ${how:-(no input)}: exit $rc, $(wc -l <"$T/out") lines (want $(wc -l <"$T/file")): $(head -2 "$T/err")"
    fail=1
  else
    echo "ok: script ${how:-(no input: ./perf.data)}"
  fi
done
mkdir "$T/empty" && cd "$T/empty" || exit 1
for cmd in script doctor; do
  "$ETMKIT_BIN" $cmd >"$T/out" 2>"$T/err"
  rc=$?
  echo "etmkit: perf.data: No such file or directory (no FILE or -i FILE given, and ./perf.data is the default)" >"$T/want"
  if [ $rc -ne 1 ] || ! cmp -s "$T/want" "$T/err" || [ -s "$T/out" ]; then
    echo "FAIL: $cmd without input nor ./perf.data: exit $rc:"; cat "$T/err"; fail=1
  else
    echo "ok: $cmd without input nor ./perf.data: $(cat "$T/err")"
  fi
done
exit $fail
