#!/bin/bash
# etmkit inject read by Debian's perf 6.1 and BOLT's perf2bolt: `perf script -F ip,brstack` on
# the injected file prints exactly the lines `etmkit script --itrace=il64 -F ip,brstack` prints
# for the recording (runs of blanks folded), for every shared recording and for gen scenarios
# at seed 1; perf2bolt-16 turns an injected gen recording into a non-empty fdata. `inject -o -`
# (perf's pipe mode, on standard output) piped into `perf script -i -` prints what perf script
# prints for the injected file (with sym: perf prints the symbol of a pipe's samples unasked).
#
# Order: as with perf's own `perf inject`, the samples of an injected file carry their time
# (unless the recording has none) and perf script delivers them sorted by it (ordered events,
# equal times in file order), where the decoder's order, which `perf script` and `etmkit
# script` print for the recording, is only sorted per CPU (docs/PROFILES.md,
# "etmkit inject"). So the expected order is etmkit's, stably sorted by the sample time in ns
# when the injected samples have a time, etmkit's own otherwise.
set -u
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
perf version >/dev/null 2>&1 || { echo "SKIP: perf does not run here"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/no-cache"
fold() { tr -s ' \t' ' ' | sed 's/^ //; s/ $//'; }
fail=0; n=0

# check NAME SYMFS RECORDING
check() {
  local name=$1 symfs=$2 f=$3
  "$ETMKIT_BIN" script -q --ns --buildid-dir "$tmp/no-cache" --symfs "$symfs" --itrace=il64 \
    -F time,ip,brstack "$f" 2>"$tmp/err" | fold >"$tmp/want.t"
  sed 's/^[0-9.]*: //' "$tmp/want.t" >"$tmp/want"
  if ! "$ETMKIT_BIN" inject -q --buildid-dir "$tmp/no-cache" --symfs "$symfs" -o "$tmp/inj.data" \
    "$f" 2>"$tmp/err"; then
    if [ ! -s "$tmp/want" ]; then return; fi # nothing usable: no samples either way
    echo "FAIL $name: etmkit inject failed: $(head -3 "$tmp/err")"; fail=1; return
  fi
  n=$((n + 1))
  if perf evlist -v -i "$tmp/inj.data" 2>/dev/null | grep '^instructions' | grep -q 'TIME'; then
    sort -s -n -k1,1 "$tmp/want.t" | sed 's/^[0-9.]*: //' >"$tmp/want"
  fi
  if ! perf script -i "$tmp/inj.data" -F ip,brstack 2>"$tmp/perr" | fold >"$tmp/got"; then
    echo "FAIL $name: perf script failed: $(head -3 "$tmp/perr")"; fail=1; return
  fi
  if ! cmp -s "$tmp/want" "$tmp/got"; then
    echo "FAIL $name: perf script on the injected file differs from etmkit script" \
      "($(wc -l <"$tmp/want") lines expected, $(wc -l <"$tmp/got") printed):"
    diff "$tmp/want" "$tmp/got" | cut -c1-160 | head -10
    fail=1
  fi
  # -o -: the same samples through a pipe
  perf script -i "$tmp/inj.data" -F ip,sym,brstack 2>/dev/null | fold >"$tmp/want.pipe"
  "$ETMKIT_BIN" inject -q --buildid-dir "$tmp/no-cache" --symfs "$symfs" -o - "$f" 2>"$tmp/err" |
    perf script -i - -F ip,sym,brstack 2>"$tmp/perr" | fold >"$tmp/got.pipe"
  local st=("${PIPESTATUS[@]}")
  if [ "${st[0]}" != 0 ] || [ "${st[1]}" != 0 ]; then
    echo "FAIL $name: inject -o - | perf script -i -: exit ${st[0]} and ${st[1]}:" \
      "$(head -1 "$tmp/err") $(head -1 "$tmp/perr")"; fail=1
  elif ! cmp -s "$tmp/want.pipe" "$tmp/got.pipe"; then
    echo "FAIL $name: perf script on inject -o - differs from the injected file" \
      "($(wc -l <"$tmp/want.pipe") lines expected, $(wc -l <"$tmp/got.pipe") printed):"
    diff "$tmp/want.pipe" "$tmp/got.pipe" | cut -c1-160 | head -6
    fail=1
  fi
}

S=${ETMKIT_SHARED:-}/testdata/perf
if [ -d "$S/files" ]; then
  for f in "$S"/files/*; do
    [ -f "$f" ] || continue
    [ "$(head -c 8 "$f" 2>/dev/null | tr -d '\000')" = "PERFILE2" ] || continue
    check "$(basename "$f")" "$S/symfs" "$f"
  done
else
  echo "note: $S is absent: gen scenarios only"
fi

scenarios=$("$ETMKIT_BIN" gen --list | awk '{ print $1 }')
bolt_done=0
for sc in $scenarios; do
  out=$tmp/gen-$sc
  "$ETMKIT_BIN" gen -q --scenario "$sc" --seed 1 -o "$out" >/dev/null 2>&1 || continue
  [ -f "$out/perf.data" ] || continue # snapshot scenarios
  check "gen $sc" "$out/symfs" "$out/perf.data"
  if [ "$bolt_done" = 0 ] && [ "$sc" = basic ]; then
    P2B=/usr/lib/llvm-16/bin/perf2bolt
    if [ -x "$P2B" ]; then
      bolt_done=1
      if ! "$P2B" -p "$tmp/inj.data" -o "$tmp/out.fdata" "$out/symfs/usr/bin/simloop" \
        >"$tmp/bolt.log" 2>&1 || [ ! -s "$tmp/out.fdata" ]; then
        echo "FAIL gen $sc: perf2bolt did not accept the injected file:"; tail -5 "$tmp/bolt.log"
        fail=1
      fi
    else
      echo "note: $P2B is absent: perf2bolt not checked"
    fi
  fi
  rm -rf "$out"
done
[ "$n" -gt 0 ] || { echo "SKIP: no recording to inject"; exit 77; }
[ "$fail" -eq 0 ] && echo "inject: perf 6.1 read $n injected files (and their -o - streams) as etmkit script prints them"
exit $fail
