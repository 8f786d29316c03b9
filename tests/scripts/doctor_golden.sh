#!/bin/bash
# etmkit doctor on the real recordings: the messages for a recording of kernel code without a
# kernel image (perf_kernel.data) and for AUX records without data
# (perf_with_missing_aux_data.data) are pinned by tests/golden/doctor/*.txt.
# For the kernel recording, the pinned part is the header and every cause about kernel code,
# with counts, addresses and offsets replaced by N (they follow the decoder); the AUX report is
# compared as it is.
set -u
S=${ETMKIT_SHARED:-}/testdata/perf
if [ ! -d "$S/files" ]; then
  echo "SKIP: $S is absent (../shared/testdata/perf)"
  exit 77
fi
G=$ETMKIT_SRC/tests/golden/doctor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/no-cache" # an empty build-id cache: only symfs counts
fail=0
run() { # recording mask exit-status
  local b=$1 mask=$2 want=$3 rc
  (cd "$S" && "$ETMKIT_BIN" doctor --buildid-dir "$tmp/no-cache" --symfs symfs "files/$b") \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc -eq "$want" ] || { echo "FAIL $b: doctor exit $rc, want $want: $(head -3 "$tmp/err")"; fail=1; return; }
  if [ "$mask" = 1 ]; then
    # the first paragraph, then the paragraphs about kernel code
    awk 'BEGIN{RS=""; ORS="\n\n"} NR==1 || /kernel code at/' "$tmp/out" |
      sed -E 's/0x[0-9a-f]+/N/g; s/\b[0-9]+\b/N/g' >"$tmp/cmp"
  else
    cp "$tmp/out" "$tmp/cmp"
  fi
  if ! diff -u "$G/$b.txt" "$tmp/cmp" >"$tmp/d"; then
    echo "FAIL $b: doctor output differs from $G/$b.txt:"
    head -40 "$tmp/d"
    fail=1
  fi
}
run perf_kernel.data 1 0
# no trace at all in the file: nothing usable, exit 1 (issue 11, item 4)
run perf_with_missing_aux_data.data 0 1
# the kernel report must name the missing kernel and every way to supply it
for w in 'no kernel image was given' '-k /path/to/vmlinux' 'CONFIG_KALLSYMS' 'CONFIG_PROC_KCORE' \
         'perf record --kcore' '--kallsyms FILE'; do
  grep -qF -- "$w" "$G/perf_kernel.data.txt" || { echo "FAIL: kernel report lacks '$w'"; fail=1; }
done
grep -q 'AUX records have no trace data' "$G/perf_with_missing_aux_data.data.txt" ||
  { echo "FAIL: AUX report lacks its headline"; fail=1; }
[ "$fail" -eq 0 ] && echo "doctor golden ok"
exit $fail
