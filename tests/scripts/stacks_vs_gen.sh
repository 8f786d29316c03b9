#!/bin/bash
# The library's call stacks (etmkit/stacks.h, through tests/tools/callstacks.c) against the
# simulator's ground truth, expected-callstacks.txt: every `etmkit gen` scenario that writes a
# perf recording with it, seeds 1-5 (under the sanitizers seed 1), at every branches sample,
# exactly and in order, with the rules tests/scripts/stacks_truth.py states: frames entered
# before the trace started are not in the trace; a gap frame marks where the trace lost the
# thread (the frames below it are not known); the branch of a context switch ran on the outgoing
# thread's stack; an exec rewrites the exception frame where the trace does not see it.
# GEN_SCENARIOS / GEN_SEEDS select a subset; GEN_CONFIG=FILE gives every gen run `--config FILE`.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tool="${ETMKIT_BUILD:-}/tests/ek_callstacks"
[ -x "$tool" ] || { echo "SKIP: no $tool (the test tools are built with the tests)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
scen=${GEN_SCENARIOS:-$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')}
[ -n "$scen" ] || { echo "SKIP: etmkit gen lists no scenario"; exit 77; }
seeds=${GEN_SEEDS:-1 2 3 4 5}
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && [ -z "${GEN_SEEDS:-}" ] && seeds=1
gcfg=()
if [ -n "${GEN_CONFIG:-}" ]; then
  [ -f "$GEN_CONFIG" ] || { echo "FAIL: GEN_CONFIG=$GEN_CONFIG: no such file"; exit 1; }
  gcfg=(--config "$GEN_CONFIG")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0 lines=0
for sc in $scen; do
  for seed in $seeds; do
    out="$tmp/$sc-$seed"
    if ! "$ETMKIT_BIN" gen -q --scenario "$sc" --seed "$seed" "${gcfg[@]}" -o "$out" >"$out.log" 2>&1; then
      grep -q "libc6-arm64-cross" "$out.log" && { [ "$seed" = 1 ] && echo "skipped: $sc: $(grep -o 'install the packages.*' "$out.log" | head -1)"; continue; }
      echo "FAIL $sc seed $seed: etmkit gen failed"; head -3 "$out.log"; fail=1; continue
    fi
    for data in "$out"/perf*.data; do
      [ -f "$data" ] || continue
      sfx=$(basename "$data" .data); sfx=${sfx#perf}
      truth="$out/expected-callstacks$sfx.txt"
      [ -f "$truth" ] || continue # Armv7: no perf-script truth (script_v7_gen.sh)
      name="$sc seed $seed${sfx:+ ($(basename "$data"))}"
      uopts=() # what the recording lacks and the user knows (script-options.txt: --raw-cpu=N)
      [ -f "$out/script-options$sfx.txt" ] && read -r -a uopts <"$out/script-options$sfx.txt"
      if ! "$tool" "$data" "$out/symfs" "${uopts[@]}" >"$tmp/ours" 2>"$tmp/err"; then
        echo "FAIL $name: ek_callstacks failed: $(head -c 300 "$tmp/err")"; fail=1; continue
      fi
      if ! python3 "$ETMKIT_SRC/tests/scripts/stacks_truth.py" "$truth" "$tmp/ours" "$out/expected-branches$sfx.txt" >"$tmp/cmp"; then
        echo "FAIL $name: the call stacks differ from expected-callstacks$sfx.txt:"
        head -20 "$tmp/cmp" | cut -c1-400
        fail=1
      fi
      n=$((n + 1))
      lines=$((lines + $(wc -l <"$truth")))
    done
  done
  rm -rf "${tmp:?}/$sc-"*
done
[ "$n" -gt 0 ] || { echo "SKIP: no scenario wrote a recording with expected-callstacks.txt"; exit 77; }
[ "$fail" = 0 ] && echo "ok: $n recordings (seeds $seeds), $lines branches samples: the call stacks equal the truth"
exit $fail
