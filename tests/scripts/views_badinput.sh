#!/bin/bash
# `etmkit export --format=folded` (and svg) and `etmkit report` on bad input exit as `etmkit script`
# does, and where script's error names the file, their first line of error does too (-q: where
# script says nothing, a view may say one line more): a missing file, a file that is not a
# perf.data, an empty one, recordings cut at several points, a recording whose code is
# missing (no --symfs: no sample and problems, 1), with --strict; and their own usage errors
# (2): an --itrace the stacks cannot follow, a bad --root, --top or --format.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ETMKIT_BIN" gen -q --scenario basic -o "$tmp/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen basic failed"; exit 77; }
src="$tmp/g/perf.data"
size=$(stat -c %s "$src")
echo hello >"$tmp/notperf.txt"
: >"$tmp/empty.data"
inputs=("$tmp/nosuch.data" "$tmp/notperf.txt" "$tmp/empty.data")
for cut in 16 200 3000 $((size / 2)) $((size - 100)); do
  head -c "$cut" "$src" >"$tmp/cut$cut.data"
  inputs+=("$tmp/cut$cut.data")
done
fail=0 n=0
# same EXTRA...: every input, script against the two views
same() {
  for f in "${inputs[@]}"; do
    "$ETMKIT_BIN" script -q "$@" "$f" >/dev/null 2>"$tmp/se"
    local want=$?
    for c in "export --format=folded" "export --format=svg" "report" "report --format=json"; do
      # shellcheck disable=SC2086
      timeout 120 "$ETMKIT_BIN" $c -q "$@" "$f" >/dev/null 2>"$tmp/ve"
      local got=$?
      n=$((n + 1))
      if [ "$got" != "$want" ]; then
        echo "FAIL $c $* $(basename "$f"): exit $got, script exits $want: $(head -1 "$tmp/ve")"
        fail=1
      elif [ "$want" != 0 ] && grep -qF "$(basename "$f")" "$tmp/se" &&
           ! head -1 "$tmp/ve" | grep -qF "$(basename "$f")"; then
        echo "FAIL $c $* $(basename "$f"): the first error line does not name the file:"
        head -2 "$tmp/ve"
        fail=1
      fi
    done
  done
}
same --symfs "$tmp/g/symfs"
same --symfs "$tmp/g/symfs" --strict
inputs=("$src")
same # no --symfs: the code is missing, no sample comes out: 1
same --strict
# usage errors: 2, one line
usage() {
  "$ETMKIT_BIN" "$@" --symfs "$tmp/g/symfs" "$src" >/dev/null 2>"$tmp/ue"
  local got=$?
  n=$((n + 1))
  if [ "$got" != 2 ] || [ "$(wc -l <"$tmp/ue")" != 1 ]; then
    echo "FAIL $*: exit $got (want 2), $(wc -l <"$tmp/ue") lines on stderr:"; head -3 "$tmp/ue"; fail=1
  fi
}
for it in i100 bi c r bs5; do
  usage export --format=folded --itrace=$it
  usage report --itrace=$it
done
usage export --format=folded --root=cpu
usage export --format=folded --top=5
usage report --top=0
usage report --format=xml
usage report --root=tid
usage report -F ip
usage export --format=folded -o
[ "$fail" = 0 ] && echo "ok: $n runs: export --format=folded and report exit as script does"
exit $fail
