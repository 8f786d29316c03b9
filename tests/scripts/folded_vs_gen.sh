#!/bin/bash
# Flame-graph stacks against the simulator's truth: on every `etmkit gen` scenario that writes
# a perf recording with expected-callstacks.txt, seeds 1-3 (under the sanitizers seed 1):
#  (a) the counts of `etmkit export --format=folded` add up to the instructions the session
#      decoded (`etmkit doctor --format=json`: stats.instructions), which is also the sum of
#      the branches samples' ninsn;
#  (b) its stacks (--root=tid) equal the folded stacks built from expected-callstacks.txt by
#      tests/scripts/folded_truth.py (the rules it states: the frames the trace cannot know are
#      left out as stacks_truth.py says, every frame named by the symbol of its return
#      address), stack for stack and count for count, all threads together and thread by
#      thread; the lines are sorted and unique.
# GEN_SCENARIOS / GEN_SEEDS select a subset.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tool="${ETMKIT_BUILD:-}/tests/ek_callstacks"
[ -x "$tool" ] || { echo "SKIP: no $tool (the test tools are built with the tests)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
scen=${GEN_SCENARIOS:-$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')}
[ -n "$scen" ] || { echo "SKIP: etmkit gen lists no scenario"; exit 77; }
seeds=${GEN_SEEDS:-1 2 3}
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && [ -z "${GEN_SEEDS:-}" ] && seeds=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0 insns=0
for sc in $scen; do
  for seed in $seeds; do
    out="$tmp/$sc-$seed"
    if ! "$ETMKIT_BIN" gen -q --scenario "$sc" --seed "$seed" -o "$out" >"$out.log" 2>&1; then
      grep -q "libc6-arm64-cross" "$out.log" && continue
      echo "FAIL $sc seed $seed: etmkit gen failed"; head -3 "$out.log"; fail=1; continue
    fi
    for data in "$out"/perf*.data; do
      [ -f "$data" ] || continue
      sfx=$(basename "$data" .data); sfx=${sfx#perf}
      truth="$out/expected-callstacks$sfx.txt"
      [ -f "$truth" ] || continue
      name="$sc seed $seed${sfx:+ ($(basename "$data"))}"
      uopts=()
      [ -f "$out/script-options$sfx.txt" ] && read -r -a uopts <"$out/script-options$sfx.txt"
      if ! EK_CALLSTACKS_NINSN=1 "$tool" "$data" "$out/symfs" "${uopts[@]}" >"$tmp/ours" 2>"$tmp/err"; then
        echo "FAIL $name: ek_callstacks failed: $(head -c 300 "$tmp/err")"; fail=1; continue
      fi
      st=0
      "$ETMKIT_BIN" export -q --format=folded --root=tid --symfs "$out/symfs" "${uopts[@]}" \
        "$data" >"$tmp/folded" 2>"$tmp/err" || st=$?
      # an export without instructions fails (exit 1) and says so; the truth must agree
      sum=$(awk '{ s += $NF } END { printf "%d", s }' "$tmp/folded")
      nsum=$(awk -F '\t' 'NF > 1 { s += $2 } END { printf "%d", s }' "$tmp/ours")
      "$ETMKIT_BIN" doctor -q --format=json --symfs "$out/symfs" "${uopts[@]}" "$data" \
        >"$tmp/doc.json" 2>/dev/null
      dec=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"]["instructions"])' \
        "$tmp/doc.json" 2>/dev/null)
      if [ "$sum" != "$dec" ] || [ "$sum" != "$nsum" ]; then
        echo "FAIL $name: the folded counts add up to $sum; the session decoded ${dec:-?}" \
          "instructions, the samples' ninsn add up to $nsum"
        fail=1
      fi
      if [ "$st" != 0 ] && { [ "$st" != 1 ] || [ "$sum" != 0 ] || ! grep -q "no stacks" "$tmp/err"; }; then
        echo "FAIL $name: export --format=folded exit status $st: $(head -c 300 "$tmp/err")"
        fail=1; continue
      fi
      if ! python3 "$ETMKIT_SRC/tests/scripts/folded_truth.py" "$truth" "$tmp/ours" \
          "$out/expected-branches$sfx.txt" "$tmp/folded" >"$tmp/cmp"; then
        echo "FAIL $name: the folded stacks differ from the truth's:"
        head -12 "$tmp/cmp" | cut -c1-400
        fail=1
      fi
      n=$((n + 1))
      insns=$((insns + sum))
    done
  done
  rm -rf "${tmp:?}/$sc-"*
done
[ "$n" -gt 0 ] || { echo "SKIP: no scenario wrote a recording with expected-callstacks.txt"; exit 77; }
[ "$fail" = 0 ] && echo "ok: $n recordings (seeds $seeds), $insns instructions: the folded stacks equal the truth's and add up to the instructions decoded"
exit $fail
