#!/bin/sh
# `etmkit gen` is deterministic: the same scenario and seed give byte-identical output folders
# (perf.data, snapshot folders, symfs, ground truth), whether or not the ground truth is
# computed (truth = off must not change the recording), and every seed gives another recording:
# seeds 1-6 of a scenario give six different recordings (perf*.data files or the snapshot folder;
# seeds 2-4 and 6 with truth = off, which leaves the recording as it is).
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'truth = off\n' >"$tmp/off.ini"
fail=0
scenarios=$("$ETMKIT_BIN" gen --list | awk '{print $1}')
# under ASan/UBSan (4 runs per scenario are slow there) a sample of the kinds of output
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && scenarios="basic session-arbitration snapshot-etr arbitration-stress workload"
for sc in $scenarios; do
  a="$tmp/a"; b="$tmp/b"; c="$tmp/c"; d="$tmp/d"
  rm -rf "$a" "$b" "$c" "$d"
  if ! "$ETMKIT_BIN" gen --scenario "$sc" --seed 5 -o "$a" 2>"$tmp/log"; then
    # workload-real reads Debian's AArch64 libraries: without them it is skipped, with the reason
    grep -q "libc6-arm64-cross" "$tmp/log" && { echo "skipped: $sc: $(grep -o 'install the packages.*' "$tmp/log" | head -1)"; continue; }
    echo "FAIL: $sc: gen failed: $(tail -1 "$tmp/log")"; fail=1; continue
  fi
  "$ETMKIT_BIN" gen --scenario "$sc" --seed 5 -o "$b" 2>/dev/null
  "$ETMKIT_BIN" gen --scenario "$sc" --seed 5 --config "$tmp/off.ini" -o "$c" 2>/dev/null
  "$ETMKIT_BIN" gen --scenario "$sc" --seed 6 --config "$tmp/off.ini" -o "$d" 2>/dev/null
  if ! diff -r "$a" "$b" >/dev/null; then
    echo "FAIL: $sc: two runs with seed 5 differ:"; diff -rq "$a" "$b" | head -5; fail=1; continue
  fi
  # the recording itself (everything but the ground truth files) does not depend on truth
  for f in $(cd "$a" && find . -type f ! -name 'truth.*' ! -name 'expected-*' ! -name 'perf-6.1-*' | sort); do
    if ! cmp -s "$a/$f" "$c/$f"; then
      echo "FAIL: $sc: $f differs with truth = off"; fail=1
    fi
  done
  # no two of seeds 1-6 give the same recording
  sums=""
  for seed in 1 2 3 4 5 6; do
    case $seed in
      5) e="$a" ;;
      6) e="$d" ;;
      *) e="$tmp/s$seed"; rm -rf "$e"
         "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" --config "$tmp/off.ini" -o "$e" 2>/dev/null ;;
    esac
    sum=$(cd "$e" && find . -type f \( -name 'perf*.data' -o -path './snapshot/*' \) | sort |
          xargs -r md5sum | md5sum | cut -c1-32)
    same=$(printf '%s' "$sums" | awk -v s="$sum" '$2 == s { print $1; exit }')
    [ -z "$same" ] || { echo "FAIL: $sc: seeds $same and $seed give the same recording"; fail=1; }
    sums="$sums$seed $sum
"
  done
  [ $fail = 0 ] && echo "ok: $sc: deterministic ($(du -sk "$a" | cut -f1) KiB)"
done
exit $fail
