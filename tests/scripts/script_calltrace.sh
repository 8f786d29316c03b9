#!/bin/bash
# etmkit script --call-trace, --call-ret-trace, -F +callindent and --itrace=g (docs/SCRIPT.md,
# "Call traces and call chains"):
#
# (a) on the shared real recordings (../shared/testdata/perf/files) against Linux perf 6.1 run
#     here on their fixed-index copies (perf 6.1 cannot read the published AUXTRACE index, as
#     make-oracles.sh says), byte for byte: etmkit with --perf-callindent (perf 6.1's depth on
#     CoreSight: 0, its cs-etm keeps no thread stack) and --no-end-flush (perf 6.1's end of
#     trace). Where perf 6.1 is wrong, tests/golden/calltrace-vs-perf/<recording>.<mode>.diff
#     holds the exact difference (`diff perf etmkit`) after '#' lines that say why; otherwise
#     the outputs must be equal. Then the default (the depth from the call stacks) must differ
#     from --perf-callindent in blanks only.
# (b) on `etmkit gen` recordings (basic, two-processes, kernel-and-user; seeds 1-3) the same
#     against perf 6.1, exactly (kernel-and-user with -F -time: its sample times are perf's
#     documented difference, docs/SCRIPT.md "Sample times"; the exact lines where perf 6.1 is
#     wrong in G/gen-<scenario>-<seed>.<mode>.diff, as for (a)); and the call chains of
#     --itrace=bg4096 against the truth (expected-callstacks.txt) with stacks_truth.py's rules,
#     exception marks aside (a chain has none), the callindent column of the same run indented
#     by its chain's known frames (chains_as_stacks.py). (Scenarios with an exec or with late
#     samples -- workload, shared-sink-multi-cpu -- need those marks, which chains do not
#     carry: stacks_vs_gen.sh holds the stacks to the truth there.) basic with the ETM return
#     stack (retstack = 1: compressed returns) too; per-thread and time-kernel-clock against
#     perf only.
# (c) options that do not go together: one line on stderr, exit status 2.
# (d) with --itrace=c, r, s and the filters the ordered path (which makes every branch for the
#     stacks and leaves samples out afterwards) prints the samples the default path prints.
set -u
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed (apt-get install linux-perf)"; exit 77; }
perf version >/dev/null 2>&1 || { echo "SKIP: perf does not run here"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
G=$ETMKIT_SRC/tests/golden/calltrace-vs-perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/no-cache" # an empty build-id cache: only symfs counts
fold() { tr -s ' \t' ' ' | sed 's/^ //; s/ $//'; }
fail=0
mode_opt() { [ "$1" = ct ] && echo --call-trace || echo --call-ret-trace; }

# ---- (a) the real recordings -------------------------------------------------------------------
S=${ETMKIT_SHARED:-}/testdata/perf
na=0
if [ -d "$S/fixed-index" ] && [ -d "$S/files" ]; then
  for fx in "$S"/fixed-index/*; do
    b=$(basename "$fx" .fixidx)
    f=$S/files/$b
    [ -f "$f" ] || continue
    for m in ct crt; do
      o=$(mode_opt $m)
      perf script -i "$fx" --symfs "$S/symfs" "$o" >"$tmp/perf" 2>"$tmp/perf.err"
      "$ETMKIT_BIN" script -q --buildid-dir "$tmp/no-cache" --symfs "$S/symfs" "$o" \
        --perf-callindent --no-end-flush "$f" >"$tmp/ours" 2>"$tmp/err"
      rc=$?
      if [ $rc -gt 1 ] || { [ $rc -eq 1 ] && [ -s "$tmp/ours" ]; }; then
        echo "FAIL $b $o: etmkit script exit status $rc: $(head -3 "$tmp/err")"
        fail=1; continue
      fi
      diff "$tmp/perf" "$tmp/ours" >"$tmp/diff"
      if [ -f "$G/$b.$m.diff" ]; then
        grep -v '^#' "$G/$b.$m.diff" >"$tmp/want"
        if ! cmp -s "$tmp/want" "$tmp/diff"; then
          echo "FAIL $b $o: the difference from perf 6.1 is not the documented one ($G/$b.$m.diff):"
          diff "$tmp/want" "$tmp/diff" | head -20
          fail=1
        fi
      elif [ -s "$tmp/diff" ]; then
        echo "FAIL $b $o: differs from perf 6.1 ($(grep -c '^[<>]' "$tmp/diff") lines):"
        head -20 "$tmp/diff"
        fail=1
      fi
      "$ETMKIT_BIN" script -q --buildid-dir "$tmp/no-cache" --symfs "$S/symfs" "$o" --no-end-flush \
        "$f" 2>/dev/null >"$tmp/deep"
      if ! cmp -s <(fold <"$tmp/ours") <(fold <"$tmp/deep"); then
        echo "FAIL $b $o: the call depth changed more than the blanks:"
        diff <(fold <"$tmp/ours") <(fold <"$tmp/deep") | head -10
        fail=1
      fi
      na=$((na + 1))
    done
  done
  echo "real recordings: $na comparisons with perf 6.1"
else
  echo "skipped (a): $S is absent (../shared/testdata/perf with fixed-index/)"
fi

# ---- (b) etmkit gen recordings -------------------------------------------------------------------
seeds=${GEN_SEEDS:-1 2 3}
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && [ -z "${GEN_SEEDS:-}" ] && seeds=1 # (as stacks_vs_gen.sh)
nb=0 nt=0
for sc in basic two-processes kernel-and-user; do
  for seed in $seeds; do
    d=$tmp/$sc-$seed
    if ! "$ETMKIT_BIN" gen -q --scenario "$sc" --seed "$seed" -o "$d" >"$d.log" 2>&1; then
      echo "FAIL $sc seed $seed: etmkit gen failed: $(tail -2 "$d.log")"; fail=1; continue
    fi
    # perf's sample times are not the truth's where the recording has kernel trace
    ft=(); [ "$sc" = kernel-and-user ] && ft=(-F -time)
    for m in ct crt; do
      o=$(mode_opt $m)
      perf script -i "$d/perf.data" --symfs "$d/symfs" "$o" "${ft[@]}" >"$d/perf.$m" 2>"$d/perf.err"
      [ -s "$d/perf.$m" ] || { echo "FAIL $sc seed $seed $o: perf printed nothing: $(head -2 "$d/perf.err")"; fail=1; continue; }
      "$ETMKIT_BIN" script -q --symfs "$d/symfs" "$o" "${ft[@]}" --perf-callindent --no-end-flush \
        "$d/perf.data" >"$d/ours.$m" 2>"$d/err"
      diff "$d/perf.$m" "$d/ours.$m" >"$d/diff"
      gd=$G/gen-$sc-$seed.$m.diff
      if [ -f "$gd" ]; then
        grep -v '^#' "$gd" >"$d/want"
        if ! cmp -s "$d/want" "$d/diff"; then
          echo "FAIL $sc seed $seed $o: the difference from perf 6.1 is not the documented one ($gd):"
          diff "$d/want" "$d/diff" | head -20
          fail=1
        fi
      elif [ -s "$d/diff" ]; then
        echo "FAIL $sc seed $seed $o: differs from perf 6.1 ($(grep -c '^[<>]' "$d/diff") lines):"
        head -10 "$d/diff"
        fail=1
      fi
      "$ETMKIT_BIN" script -q --symfs "$d/symfs" "$o" "${ft[@]}" --no-end-flush "$d/perf.data" \
        >"$d/deep.$m" 2>/dev/null
      if ! cmp -s <(fold <"$d/ours.$m") <(fold <"$d/deep.$m"); then
        echo "FAIL $sc seed $seed $o: the call depth changed more than the blanks"
        fail=1
      fi
      nb=$((nb + 1))
    done
    # the chains and the depth against the truth
    "$ETMKIT_BIN" script -q --symfs "$d/symfs" --itrace=bg4096 \
      -F pid,tid,cpu,flags,ip,sym,symoff,addr,callindent "$d/perf.data" >"$d/chains" 2>"$d/err"
    if ! python3 "$ETMKIT_SRC/tests/scripts/chains_as_stacks.py" "$d/chains" >"$d/stacks" 2>"$d/depth"; then
      echo "FAIL $sc seed $seed: the callindent depth is not the chain's:"; head -6 "$d/depth"; fail=1
    fi
    sed 's/ <- !/ <- /g' "$d/expected-callstacks.txt" >"$d/truth"
    if ! python3 "$ETMKIT_SRC/tests/scripts/stacks_truth.py" "$d/truth" "$d/stacks" \
      "$d/expected-branches.txt" >"$d/cmp"; then
      echo "FAIL $sc seed $seed: the call chains differ from expected-callstacks.txt:"
      head -20 "$d/cmp" | cut -c1-400
      fail=1
    fi
    nt=$((nt + $(wc -l <"$d/truth")))
    rm -rf "$d"
  done
done
# returns compressed by the ETM return stack (retstack = 1: no address in the trace): basic,
# seed 1, against perf 6.1 and the truth
printf 'retstack = 1\n' >"$tmp/retstack.cfg"
d=$tmp/retstack
if "$ETMKIT_BIN" gen -q --scenario basic --seed 1 --config "$tmp/retstack.cfg" -o "$d" >/dev/null 2>&1; then
  for m in ct crt; do
    o=$(mode_opt $m)
    perf script -i "$d/perf.data" --symfs "$d/symfs" "$o" >"$d/perf.$m" 2>/dev/null
    "$ETMKIT_BIN" script -q --symfs "$d/symfs" "$o" --perf-callindent --no-end-flush "$d/perf.data" >"$d/ours.$m" 2>&1
    if [ ! -s "$d/perf.$m" ] || ! cmp -s "$d/perf.$m" "$d/ours.$m"; then
      echo "FAIL basic retstack $o: differs from perf 6.1:"; diff "$d/perf.$m" "$d/ours.$m" | head -6; fail=1
    fi
    nb=$((nb + 1))
  done
  "$ETMKIT_BIN" script -q --symfs "$d/symfs" --itrace=bg4096 \
    -F pid,tid,cpu,flags,ip,sym,symoff,addr,callindent "$d/perf.data" >"$d/chains" 2>&1
  sed 's/ <- !/ <- /g' "$d/expected-callstacks.txt" >"$d/truth"
  if ! python3 "$ETMKIT_SRC/tests/scripts/chains_as_stacks.py" "$d/chains" >"$d/stacks" 2>"$d/depth" ||
    ! python3 "$ETMKIT_SRC/tests/scripts/stacks_truth.py" "$d/truth" "$d/stacks" \
      "$d/expected-branches.txt" >"$d/cmp"; then
    echo "FAIL basic retstack: the chains or the depth differ from the truth:"; head -8 "$d/depth" "$d/cmp" | cut -c1-300; fail=1
  fi
  nt=$((nt + $(wc -l <"$d/truth")))
  rm -rf "$d"
else
  echo "FAIL: etmkit gen --config retstack = 1 failed"; fail=1
fi
# two more where perf 6.1 is right, against perf only: per-thread (no cpu column, a stack per
# thread and trace source), time-kernel-clock (3 CPUs, kernel and user)
for sc in per-thread time-kernel-clock; do
  d=$tmp/$sc
  "$ETMKIT_BIN" gen -q --scenario "$sc" --seed 1 -o "$d" >/dev/null 2>&1 || { echo "FAIL $sc: etmkit gen failed"; fail=1; continue; }
  for m in ct crt; do
    o=$(mode_opt $m)
    perf script -i "$d/perf.data" --symfs "$d/symfs" "$o" -F -time >"$d/perf.$m" 2>/dev/null
    "$ETMKIT_BIN" script -q --symfs "$d/symfs" "$o" -F -time --perf-callindent --no-end-flush \
      "$d/perf.data" >"$d/ours.$m" 2>&1
    if [ ! -s "$d/perf.$m" ] || ! cmp -s "$d/perf.$m" "$d/ours.$m"; then
      echo "FAIL $sc $o: differs from perf 6.1:"; diff "$d/perf.$m" "$d/ours.$m" | head -6; fail=1
    fi
    nb=$((nb + 1))
  done
  rm -rf "$d"
done
echo "gen recordings: $nb comparisons with perf 6.1; $nt samples' chains against the truth"

# ---- (c) options that do not go together --------------------------------------------------------
"$ETMKIT_BIN" gen -q --scenario basic -o "$tmp/g" >/dev/null 2>&1 || { echo "FAIL: etmkit gen basic"; exit 1; }
P=$tmp/g/perf.data
expect() { # STDERR-LINE command...: exit status 2, stderr exactly that one line
  local line=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  printf '%s\n' "$line" >"$tmp/want"
  if [ $rc -ne 2 ] || ! cmp -s "$tmp/want" "$tmp/err" || [ -s "$tmp/out" ]; then
    echo "FAIL: $*: exit $rc (want 2), stderr:"; head -3 "$tmp/err"; echo "  wanted: $line"; fail=1
  fi
}
H="(see 'etmkit script --help')"
expect "etmkit: script: callindent (call traces) with -C: --itrace=s does not go with them yet (it counts the samples -C leaves out in decoded buffers) $H" \
  "$ETMKIT_BIN" script --call-trace -C 0 --itrace=bs5 "$P"
expect "etmkit: script: call chains (--itrace=g): --itrace makes no samples to show them on: give b or i (bg, i100ig) $H" \
  "$ETMKIT_BIN" script --itrace=g "$P"
expect "etmkit: script: callindent (call traces): --itrace makes no samples to show them on: give b or i (bg, i100ig) $H" \
  "$ETMKIT_BIN" script --call-trace --itrace=e "$P"
expect "etmkit: script: bad --itrace options 'bg5000': call-chain size must be 1..4096 $H" \
  "$ETMKIT_BIN" script --itrace=bg5000 "$P"
# 0 and a number past 64 bits break the same rule, and say it (not the last branches' 1..1024)
for v in 0 99999999999999999999999; do
  expect "etmkit: script: bad --itrace options 'bg$v': call-chain size must be 1..4096 $H" \
    "$ETMKIT_BIN" script --itrace=bg$v "$P"
  expect "etmkit: script: bad --itrace options 'il$v': last-branch size must be 1..1024 $H" \
    "$ETMKIT_BIN" script --itrace=il$v "$P"
done
# accepted: what is right must not be refused (and gives lines)
for args in "--call-trace" "--call-ret-trace --itrace=b" "-F +callindent" "--itrace=i1000ig4" \
  "--itrace=bg -F ip,sym,callindent" "--call-trace -F +ip" "--call-trace --itrace=c" \
  "--call-ret-trace --itrace=crs10 --tid 1000"; do
  # shellcheck disable=SC2086
  if ! "$ETMKIT_BIN" script -q --symfs "$tmp/g/symfs" $args "$P" >"$tmp/out" 2>"$tmp/err" || [ ! -s "$tmp/out" ]; then
    echo "FAIL: etmkit script $args: refused or empty: $(head -2 "$tmp/err")"; fail=1
  fi
done

# ---- (d) the ordered path selects as the session does ---------------------------------------------
# c, r, s and the filters leave samples out after the call stacks saw them (the session makes
# every branch for them): with a one-entry chain (--itrace=...g1: the ip alone, on its own
# line) the lines, joined back, must be the default path's exactly.
"$ETMKIT_BIN" gen -q --scenario kernel-and-user --seed 1 -o "$tmp/ku" >/dev/null 2>&1 || { echo "FAIL: etmkit gen kernel-and-user"; exit 1; }
F=pid,tid,cpu,time,flags,ip,sym,symoff,dso,addr
nd=0
for sel in "--itrace=b" "--itrace=c" "--itrace=r" "--itrace=bs50" "--itrace=i100ibs50" \
  "--itrace=b --tid 1001" "--itrace=cr --comm simloop" "--itrace=b --time 1.0005,1.0007" \
  "--itrace=b -C 1" "--itrace=i1000i --pid 1000"; do
  read -r -a a <<<"$sel"
  "$ETMKIT_BIN" script -q --symfs "$tmp/ku/symfs" "${a[0]}" -F $F "${a[@]:1}" "$tmp/ku/perf.data" >"$tmp/staged"
  "$ETMKIT_BIN" script -q --symfs "$tmp/ku/symfs" "${a[0]}g1" -F $F "${a[@]:1}" "$tmp/ku/perf.data" |
    sed -z 's/\n\t/ /g; s/\n => / => /g' | sed '/^$/d' >"$tmp/ordered"
  if [ ! -s "$tmp/staged" ] || ! cmp -s "$tmp/staged" "$tmp/ordered"; then
    echo "FAIL: $sel: the ordered path (g1) selects other samples than the default path:"
    diff "$tmp/staged" "$tmp/ordered" | head -6; fail=1
  fi
  nd=$((nd + 1))
done
echo "selection: $nd option sets as the default path selects"
[ "$fail" = 0 ] && echo "ok: call traces as perf 6.1's, call chains as the truth, errors one line"
exit $fail
