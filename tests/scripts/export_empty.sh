#!/bin/bash
# etmkit export, issue 14 item 6: a profile that comes out empty says why on stderr (the
# session's account, as etmkit script gives it) and exits 1, writing nothing; a profile with
# counts exits 0 even when part of the trace could not be used, and says what was left out.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/no-cache" "$tmp/empty"
fail=0
# expect NAME STATUS FIRST-LINE PATTERN -- export args...: exit status, the exact first stderr
# line (unless ""), a line matching PATTERN, and no output file unless the status is 0
expect() {
  local name=$1 want=$2 first=$3 pat=$4; shift 5
  rm -f "$tmp/out.afdo"
  "$ETMKIT_BIN" export --buildid-dir "$tmp/no-cache" -o "$tmp/out.afdo" "$@" 2>"$tmp/err"
  local got=$?
  [ "$got" = "$want" ] || { echo "FAIL $name: exit status $got, expected $want"; cat "$tmp/err"; fail=1; }
  [ -z "$first" ] || [ "$(head -1 "$tmp/err")" = "$first" ] ||
    { echo "FAIL $name: first stderr line:"; echo "  got:  $(head -1 "$tmp/err")"; echo "  want: $first"; fail=1; }
  grep -q -- "$pat" "$tmp/err" || { echo "FAIL $name: no line says '$pat':"; cat "$tmp/err"; fail=1; }
  if [ "$want" != 0 ] && [ -e "$tmp/out.afdo" ]; then echo "FAIL $name: an empty profile was written"; fail=1; fi
  if [ "$want" = 0 ] && [ ! -s "$tmp/out.afdo" ]; then echo "FAIL $name: no profile written"; fail=1; fi
}
# missing code: gen basic without its files
"$ETMKIT_BIN" gen -q --scenario basic -o "$tmp/g" >/dev/null 2>&1 || { echo "FAIL: gen basic"; exit 1; }
expect "missing code" 1 "etmkit export: $tmp/g/perf.data: the profile is empty: no samples came out of the trace (below: why)" \
  "files missing or of another build" -- --symfs "$tmp/empty" "$tmp/g/perf.data"
# another build: simloop replaced by simchild (another build-id)
mkdir -p "$tmp/other/usr/bin"
cp "$tmp/g/symfs/usr/bin/simchild" "$tmp/other/usr/bin/simloop" 2>/dev/null ||
  { "$ETMKIT_BIN" gen -q --scenario two-processes -o "$tmp/t" >/dev/null 2>&1 &&
    cp "$tmp/t/symfs/usr/bin/simchild" "$tmp/other/usr/bin/simloop"; }
expect "another build" 1 "etmkit export: $tmp/g/perf.data: the profile is empty: no samples came out of the trace (below: why)" \
  "files missing or of another build" -- --symfs "$tmp/other" "$tmp/g/perf.data"
"$ETMKIT_BIN" doctor --buildid-dir "$tmp/no-cache" --symfs "$tmp/other" "$tmp/g/perf.data" >"$tmp/doctor" 2>&1
grep -q "build" "$tmp/doctor" || { echo "FAIL another build: doctor does not name the build-ids"; fail=1; }
# a part of the trace into another build: counts for the rest, exit 0, the summary says it
"$ETMKIT_BIN" gen -q --scenario buildid-mismatch -o "$tmp/b" >/dev/null 2>&1 || { echo "FAIL: gen buildid-mismatch"; exit 1; }
expect "partly another build" 0 "" "files missing or of another build" -- --symfs "$tmp/b/symfs" "$tmp/b/perf.data"
grep -q "^etmkit export: $tmp/out.afdo: 1 binary, [1-9][0-9]* branches, [1-9][0-9]* ranges (autofdo)\$" "$tmp/err" ||
  { echo "FAIL partly another build: no summary line of the profile written"; cat "$tmp/err"; fail=1; }
# lost trace: ../shared's recording whose AUX records have no data
S=${ETMKIT_SHARED:-}/testdata/perf/files
if [ -f "$S/perf_with_missing_aux_data.data" ]; then
  expect "lost trace" 1 "etmkit export: $S/perf_with_missing_aux_data.data: the profile is empty: no samples came out of the trace (below: why)" \
    "AUX records without trace data" -- "$S/perf_with_missing_aux_data.data"
else
  echo "note: $S is absent: the lost-trace case is not checked"
fi
[ "$fail" -eq 0 ] && echo "ok: empty profiles say why and exit 1; a partial one is written"
exit $fail
