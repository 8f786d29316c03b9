#!/bin/bash
# The ETM return stack (TRCCONFIGR.RS; `retstack = 1` in an `etmkit gen --config` file): a
# return to the address on top of the trace unit's return stack is traced as an atom alone, and
# the decoder pops the target at the next P0 element (atom or exception). No scenario turns it
# on, so the sweeps do not see it; this runs a few scenarios with it, at seed 1:
#   basic               user space only: an interrupt right after a compressed RET ends the
#                       trace ('tr end hw int' from the instruction after the RET's target)
#   kernel-and-user     the same interrupt traced into the kernel ('return 4005ec => 4001bc',
#                       'hw int 4001bc => vectors+0x480')
#   per-cpu-trbe        the same on ETE
#   arbitration-stress  the config applies to the first of several sessions: the others
#                       reprogram the same trace units without the return stack
# through script_vs_gen.sh (etmkit script = the truth, every expected-*.txt) and gen_vs_perf.sh
# (perf 6.1 = its prediction; skip without perf), and kernel-and-user through stacks_vs_gen.sh
# (the library's call stacks = the truth). GEN_SCENARIOS / GEN_SEEDS / GEN_SCENARIOS_STACKS
# override the selection.
# About 10 s of CPU.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'retstack = 1\n' >"$tmp/retstack.cfg"
export GEN_CONFIG="$tmp/retstack.cfg"
export GEN_SCENARIOS="${GEN_SCENARIOS:-basic kernel-and-user per-cpu-trbe arbitration-stress}"
export GEN_SEEDS="${GEN_SEEDS:-1}"
fail=0 ran=0
stacks_scen=${GEN_SCENARIOS_STACKS:-kernel-and-user}
for t in script_vs_gen stacks_vs_gen gen_vs_perf; do
  if [ "$t" = stacks_vs_gen ]; then
    GEN_SCENARIOS="$stacks_scen" bash "$here/$t.sh" >"$tmp/$t.out" 2>&1
  else
    bash "$here/$t.sh" >"$tmp/$t.out" 2>&1
  fi
  rc=$?
  case $rc in
    0) ran=$((ran + 1)); echo "ok: $t: $(tail -1 "$tmp/$t.out")" ;;
    77) echo "skipped: $t: $(tail -1 "$tmp/$t.out")" ;;
    *) echo "FAIL: $t with retstack = 1 (seeds $GEN_SEEDS):"; head -40 "$tmp/$t.out" | cut -c1-300; fail=1 ;;
  esac
done
[ "$fail" = 0 ] && [ "$ran" = 0 ] && { echo "SKIP: none of the checks could run"; exit 77; }
exit $fail
