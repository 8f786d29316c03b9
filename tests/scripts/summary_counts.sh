#!/bin/bash
# The summary lines of `etmkit inject` and `etmkit export` give each count with its noun in
# the number the count asks for: "1 sample", "2 samples", "1 branch", "1 range". They printed
# "1 samples" and "1 branches" before. The counts are checked too: the injected samples
# against the lines `etmkit script` prints for the same --itrace, the profile's branches
# against the last-branch stacks' length.
#
# A small gen recording (basic, 2 KiB of trace) with a period longer than its trace and
# --no-end-flush has exactly one instructions sample: its last branch (il1) gives a profile of
# one branch and no range, two (il2) two branches and one range.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/no-cache"
fail=0
"$ETMKIT_BIN" gen -q --scenario basic --trace-size 2K -o "$tmp/g" >/dev/null 2>&1 ||
  { echo "FAIL: gen basic"; exit 1; }
rec=$tmp/g/perf.data
common=(--no-end-flush --buildid-dir "$tmp/no-cache" --symfs "$tmp/g/symfs")

# want NAME FILE LINE: LINE is FILE's only line that starts with "etmkit "
want() {
  local got
  got=$(grep '^etmkit \(inject\|export\): ' "$2")
  [ "$got" = "$3" ] || { echo "FAIL $1:"; echo "  got:  $got"; echo "  want: $3"; fail=1; }
}

for l in 1 2; do
  it=i100000000il$l
  n=$("$ETMKIT_BIN" script -q "${common[@]}" --itrace=$it -F ip "$rec" | wc -l)
  [ "$n" = 1 ] || { echo "FAIL: script --itrace=$it made $n samples, the test needs 1"; fail=1; }
  "$ETMKIT_BIN" inject "${common[@]}" --itrace=$it -o "$tmp/inj.data" "$rec" 2>"$tmp/err"
  # (the sideband records: several, whatever gen writes)
  sb=$(sed -n 's/^etmkit inject: .*, \([0-9]*\) sideband records$/\1/p' "$tmp/err")
  [ -n "$sb" ] && [ "$sb" -gt 1 ] || { echo "FAIL inject il$l: no sideband count:"; cat "$tmp/err"; fail=1; continue; }
  want "inject il$l" "$tmp/err" "etmkit inject: $tmp/inj.data: 1 sample, $sb sideband records"
done

"$ETMKIT_BIN" export "${common[@]}" --itrace=i100000000il1 -o "$tmp/p.afdo" "$rec" 2>"$tmp/err"
want "export il1" "$tmp/err" "etmkit export: $tmp/p.afdo: 1 binary, 1 branch, 0 ranges (autofdo)"
"$ETMKIT_BIN" export "${common[@]}" --itrace=i100000000il2 -o "$tmp/p.afdo" "$rec" 2>"$tmp/err"
want "export il2" "$tmp/err" "etmkit export: $tmp/p.afdo: 1 binary, 2 branches, 1 range (autofdo)"

# JIT code has no ELF file: its addresses are counted as in no binary (many: the plural)
"$ETMKIT_BIN" gen -q --scenario jit-reuse --trace-size 2K -o "$tmp/j" >/dev/null 2>&1 ||
  { echo "FAIL: gen jit-reuse"; exit 1; }
"$ETMKIT_BIN" export --buildid-dir "$tmp/no-cache" --symfs "$tmp/j/symfs" -o "$tmp/j.afdo" \
  "$tmp/j/perf.data" 2>"$tmp/err"
grep -q '^etmkit export: [1-9][0-9]* sample addresses are in no binary whose code was found:$' \
  "$tmp/err" || { echo "FAIL jit: no line counts the addresses in no binary:"; cat "$tmp/err"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: inject and export count one sample, branch and range in the singular"
exit $fail
