#!/bin/bash
# etmkit script against the ground truth of every `etmkit gen` scenario, exactly.
#
# For every scenario and seeds 1-5 (under the sanitizers seed 1), each file of what a correct decoder prints must equal
# etmkit's output byte for byte (perf's column padding included):
#   expected-branches.txt      --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr
#   expected-instructions.txt  --itrace=i100i -F pid,tid,cpu,period,ip,sym,symoff,dso
#   expected-lbr.txt           --itrace=i64il16 -F ip,brstack
#   expected-times.txt         --itrace=b --ns -F pid,tid,cpu,time,ip,addr (timed recordings),
#                              and without --ns the same times in microseconds
#   expected-calls.txt         --itrace=c -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr
#   expected-returns.txt       --itrace=r -F (the same)          (the --itrace letters' scenario)
#   expected-skip.txt          --itrace=i100ibs50 -F pid,tid,cpu,period,ip,sym,symoff,dso
# expected-callstacks.txt (no etmkit output yet) must name, line by line, the branch samples
# of `--itrace=b -F pid,tid,cpu,ip,addr` (pid/tid, cpu, ip => addr before its ':').
# OUT/script-options.txt (the user's knowledge the recording lacks, e.g. --raw-cpu=N) is given
# to every run; without it no sample may come out and `etmkit doctor` must name it.
# Snapshot folders are checked by gen_snapshot_lister.sh.
#
# docs/SIMULATOR.md's scenario table is made here from seed 1's results: the test fails when
# the copy there differs (scripts/gen-scenario-table writes it; GEN_TABLE_OUT=FILE writes the
# table to FILE instead of comparing). GEN_SCENARIOS / GEN_SEEDS select a subset (no table);
# GEN_CONFIG=FILE gives every gen run `--config FILE` (e.g. `retstack = 1`; no table).
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
scen=${GEN_SCENARIOS:-$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')}
[ -n "$scen" ] || { echo "SKIP: etmkit gen lists no scenario"; exit 77; }
seeds=${GEN_SEEDS:-1 2 3 4 5}
gcfg=()
if [ -n "${GEN_CONFIG:-}" ]; then
  [ -f "$GEN_CONFIG" ] || { echo "FAIL: GEN_CONFIG=$GEN_CONFIG: no such file"; exit 1; }
  gcfg=(--config "$GEN_CONFIG")
fi
# under the sanitizers (several times slower) seed 1: the seeds' exactness is the normal build's
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && [ -z "${GEN_SEEDS:-}" ] && seeds=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the same times in microseconds (perf script without --ns): the fraction cut to 6 digits
usec() { sed -E 's/^([^:]* [0-9]+\.[0-9]{6})[0-9]{3}:/\1:/'; }
fail=0
n=0
# scenario: why it has no perf-script ground truth (its row in the table says so)
NO_SCRIPT_TRUTH="
armv7-ptm: no expected-*.txt (the perf-script truth is modelled for AArch64 only); tests/scripts/script_v7_gen.sh compares etmkit script's branch samples with truth.branches.tsv
armv7-etm3: as armv7-ptm, with ETMv3
"
table="$tmp/table.md"
: >"$table"
lines() { if [ "$1" = 1 ]; then echo "1 line"; else echo "$1 lines"; fi; }
row() { # scenario, description, truth cell, perf cell
  printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$table"
}
for sc in $scen; do
  desc=$("$ETMKIT_BIN" gen --list | awk -v s="$sc" '$1 == s { $1 = ""; sub(/^ +/, ""); print }')
  for seed in $seeds; do
    out="$tmp/$sc-$seed"
    if ! "$ETMKIT_BIN" gen --scenario "$sc" --seed "$seed" "${gcfg[@]}" -o "$out" >"$out.log" 2>&1; then
      # workload-real reads Debian's AArch64 libraries: without them it is skipped, with the reason
      grep -q "libc6-arm64-cross" "$out.log" && { echo "skipped: $sc: $(grep -o 'install the packages.*' "$out.log" | head -1)"; continue; }
      echo "FAIL $sc seed $seed: etmkit gen failed"; head -3 "$out.log"; fail=1; continue
    fi
    if echo "$NO_SCRIPT_TRUTH" | grep -q "^$sc:"; then
      [ "$seed" = 1 ] && row "$sc" "$desc" "$(grep -vc '^#' "$out/truth.branches.tsv") branches and exceptions (truth.branches.tsv)" \
        "not compared:$(echo "$NO_SCRIPT_TRUTH" | grep "^$sc:" | cut -d: -f2-)"
      continue
    fi
    if [ -d "$out/snapshot" ]; then
      [ "$seed" = 1 ] && row "$sc" "$desc" "$(wc -l <"$out/expected-branches.txt") branches" \
        "not a perf recording (gen_snapshot_lister.sh: trc_pkt_lister and \`etmkit dump --decode\` = the truth)"
      continue
    fi
    cells_t=""; cells_p=""
    for data in "$out"/perf*.data; do
      [ -f "$data" ] || continue
      sfx=$(basename "$data" .data); sfx=${sfx#perf}
      name="$sc seed $seed${sfx:+ ($(basename "$data"))}"
      [ -f "$out/expected-branches$sfx.txt" ] || { echo "FAIL $name: no ground truth"; fail=1; continue; }
      counts=""; extra=""
      # options a correct decoder needs that the recording cannot tell (what the user knows:
      # --raw-cpu=N for raw per-thread trace when the CPUs decode differently); without them
      # etmkit must print no sample, and its doctor must name them as the remedy
      uopts=()
      if [ -f "$out/script-options$sfx.txt" ]; then
        read -r -a uopts <"$out/script-options$sfx.txt"
        "$ETMKIT_BIN" script -q --symfs "$out/symfs" --itrace=b -F pid,tid,cpu,ip,addr "$data" 2>/dev/null >"$tmp/ours"
        if [ -s "$tmp/ours" ]; then
          echo "FAIL $name: without ${uopts[*]} etmkit script printed $(wc -l <"$tmp/ours") samples (expected none)"; fail=1
        fi
        "$ETMKIT_BIN" doctor --symfs "$out/symfs" "$data" >"$tmp/doctor" 2>&1
        for o in "${uopts[@]}"; do
          grep -q -- "${o%%=*}=N" "$tmp/doctor" || { echo "FAIL $name: etmkit doctor does not name ${o%%=*} as the remedy"; fail=1; }
        done
      fi
      for lane in branches instructions lbr times times-us calls returns skip; do
        f="$out/expected-${lane%-us}$sfx.txt"
        [ -f "$f" ] || continue
        case $lane in
          branches) opts=(--itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr) ;;
          instructions) opts=(--itrace=i100i -F pid,tid,cpu,period,ip,sym,symoff,dso) ;;
          lbr) opts=(--itrace=i64il16 -F ip,brstack) ;;
          times) opts=(--itrace=b --ns -F pid,tid,cpu,time,ip,addr) ;;
          times-us) opts=(--itrace=b -F pid,tid,cpu,time,ip,addr) ;;
          calls) opts=(--itrace=c -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr) ;;
          returns) opts=(--itrace=r -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr) ;;
          skip) opts=(--itrace=i100ibs50 -F pid,tid,cpu,period,ip,sym,symoff,dso) ;;
        esac
        n=$((n + 1))
        "$ETMKIT_BIN" script -q --symfs "$out/symfs" "${uopts[@]}" "${opts[@]}" "$data" 2>"$tmp/err" >"$tmp/ours"
        truth=$f
        [ "$lane" = times-us ] && { usec <"$f" >"$tmp/truth-us"; truth=$tmp/truth-us; }
        if ! cmp -s "$truth" "$tmp/ours"; then
          echo "FAIL $name: etmkit script ${opts[*]} differs from $(basename "$f")$([ "$lane" = times-us ] && echo " (in microseconds)"):"
          diff "$truth" "$tmp/ours" | head -8 | cut -c1-220
          echo "  ($(diff "$truth" "$tmp/ours" | grep -c '^[<>]') lines differ; stderr: $(head -c 200 "$tmp/err"))"
          fail=1
        fi
        case $lane in
          times-us) ;;
          calls | returns | skip) extra="$extra${extra:+ / }$(wc -l <"$f")" ;;
          *) counts="$counts${counts:+ / }$(wc -l <"$f")" ;;
        esac
      done
      [ -z "$extra" ] || extra=" (calls / returns / skip: $extra)"
      # the call stacks name the branch samples, one for one, in order
      cs="$out/expected-callstacks$sfx.txt"
      "$ETMKIT_BIN" script -q --symfs "$out/symfs" "${uopts[@]}" --itrace=b -F pid,tid,cpu,ip,addr "$data" \
        2>/dev/null >"$tmp/ours"
      sed 's/:.*$//' "$cs" >"$tmp/truth"
      if ! cmp -s "$tmp/truth" "$tmp/ours"; then
        echo "FAIL $name: expected-callstacks$sfx.txt does not name etmkit's branch samples:"
        diff "$tmp/truth" "$tmp/ours" | head -6
        fail=1
      fi
      if [ "$seed" = 1 ]; then
        [ -f "$out/expected-times$sfx.txt" ] || counts="$counts / -"
        cells_t="$cells_t${cells_t:+; }${sfx:+$(basename "$data"): }$counts$extra"
        pred="$out/perf-6.1-expected$sfx.txt"
        if cmp -s "$pred" "$out/expected-branches$sfx.txt"; then
          p="equals the truth"
        else
          diff "$out/expected-branches$sfx.txt" "$pred" >"$tmp/pdiff"
          p="differs: $(lines "$(grep -c '^<' "$tmp/pdiff")") of the truth missing, $(lines "$(grep -c '^>' "$tmp/pdiff")") not in it"
        fi
        cells_p="$cells_p${cells_p:+; }${sfx:+$(basename "$data"): }$p"
      fi
    done
    [ "$seed" = 1 ] && row "$sc" "$desc" "$cells_t" "$cells_p"
  done
done
[ "$n" -gt 0 ] || { echo "SKIP: no scenario wrote a perf.data file"; exit 77; }
[ "$fail" = 0 ] && echo "ok: $n etmkit outputs equal their ground truth files (seeds $seeds)"
# the scenario table of docs/SIMULATOR.md
if [ -z "${GEN_SCENARIOS:-}${GEN_SEEDS:-}${GEN_CONFIG:-}" ] || [ -n "${GEN_TABLE_OUT:-}" ]; then
  {
    echo "| scenario | what it exercises | truth lines (seed 1): branches / instructions / lbr / times | perf 6.1's output (predicted: perf-6.1-expected.txt) against expected-branches.txt |"
    echo "| --- | --- | --- | --- |"
    cat "$table"
  } >"$tmp/table.full"
  if [ -n "${GEN_TABLE_OUT:-}" ]; then
    cp "$tmp/table.full" "$GEN_TABLE_OUT"
  else
    doc="$ETMKIT_SRC/docs/SIMULATOR.md"
    awk '/^<!-- scenario table: begin/ { on = 1; next } /^<!-- scenario table: end/ { on = 0 } on' "$doc" >"$tmp/table.doc"
    if ! cmp -s "$tmp/table.full" "$tmp/table.doc"; then
      echo "FAIL: docs/SIMULATOR.md's scenario table is not what this test measured (scripts/gen-scenario-table rewrites it):"
      diff "$tmp/table.doc" "$tmp/table.full" | head -10 | cut -c1-220
      fail=1
    else
      echo "ok: docs/SIMULATOR.md's scenario table is the measured one"
    fi
  fi
fi
exit $fail
