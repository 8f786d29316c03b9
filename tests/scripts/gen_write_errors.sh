#!/bin/bash
# etmkit gen that cannot write its output says which file and why: with the file size limit
# (ulimit -f, SIGXFSZ ignored: writes fail with EFBIG, as on a full disk with ENOSPC) set below
# the size of one of the files a full run writes, gen exits 1, leaves nothing behind, and says
# on one line "etmkit: gen: OUT/FILE: File too large (OUT is left as it was)", where FILE is a
# file of the full run that is larger than the limit. It used to say "gen: input/output error"
# for every such failure, and a truth file it could not create was silently left out.
# Scenarios: a perf.data recording with its truth, two sessions, a snapshot folder and the
# Armv7 generator (its own writer). The file named is the first to pass the limit (the truth's
# truth.branches.tsv, or the Armv7 generator's perf.data); test_sim_io makes each writer fail.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
E=$ETMKIT_BIN
fail=0
bad() { echo "FAIL: $*"; fail=1; }
checked=0
for sc in basic session-arbitration snapshot-etr armv7-ptm; do
  "$E" gen -q --scenario "$sc" -o "$T/full" >/dev/null 2>&1 || { bad "$sc: gen without a limit"; continue; }
  # sizes of the full run's files, in KiB rounded up: path relative to the folder
  (cd "$T/full" && find . -type f -printf '%P %s\n') >"$T/sizes"
  largest=$(awk '{ if ($2 > m) m = $2 } END { print int((m + 1023) / 1024) }' "$T/sizes")
  rm -rf "$T/full"
  # limits (KiB, bash's unit for -f) from 1 to below the largest file
  for lim in 1 2 5 17 60 200 900; do
    [ "$lim" -lt "$largest" ] || continue
    out="$T/o-$sc-$lim"
    (trap '' XFSZ; ulimit -f "$lim"; exec "$E" gen -q --scenario "$sc" -o "$out") \
      >/dev/null 2>"$T/err"
    rc=$?
    checked=$((checked + 1))
    [ "$rc" -eq 1 ] || { bad "$sc, limit $lim KiB: exit $rc, want 1: $(head -2 "$T/err")"; continue; }
    [ "$(wc -l <"$T/err")" -eq 1 ] || { bad "$sc, limit $lim KiB: stderr has $(wc -l <"$T/err") lines"; continue; }
    line=$(cat "$T/err")
    re="^etmkit: gen: $out/(.+): File too large \($out is left as it was\)\$"
    if [[ ! $line =~ $re ]]; then
      bad "$sc, limit $lim KiB: '$line'"
      continue
    fi
    f=${BASH_REMATCH[1]}
    size=$(awk -v f="$f" '$1 == f { print $2 }' "$T/sizes")
    [ -n "$size" ] || { bad "$sc, limit $lim KiB: $f is not a file of the full run"; continue; }
    [ "$size" -gt $((lim * 1024)) ] ||
      bad "$sc, limit $lim KiB: $f has $size bytes in the full run: not above the limit"
    [ -e "$out" ] && bad "$sc, limit $lim KiB: $out was left behind"
    ls "$T" | grep -q "^o-$sc-$lim." && bad "$sc, limit $lim KiB: a temporary folder was left behind"
  done
done
[ "$checked" -ge 12 ] || bad "only $checked limited runs"
[ $fail -eq 0 ] && echo "ok: $checked runs that could not write named the file and the cause"
exit $fail
