#!/bin/bash
# etmkit export --format=bolt against perf2bolt (issue 14 item 3): the fdata etmkit writes
# from a recording (with --itrace=il64, the samples etmkit inject writes) equals, line for line
# once sorted (perf2bolt writes hash order), what LLVM 16's perf2bolt writes from
# `etmkit inject`'s perf.data of the same recording, on gen scenarios and on ../shared's
# perf_etm.data. Its etm_test_loop has no symbol table: llvm-bolt's functions are the .eh_frame
# FDEs' (__BOLT_FDE_FUNCat100c ...) and the PLT's (__libc_init@PLT), and the b at 0x1004 that no
# FDE covers is "0 [unknown] 0" (6 lines). Without --itrace=il64 the export counts every branch
# of the trace once, not the 64-entry branch stacks of inject's 3 samples (the loop's 100 turns
# against 62; stacks overlap, so a branch can count twice: 1054+34 -> 108c+18 is 2 there, 1 in
# the trace), so it is not equal; it holds every line perf2bolt writes (same names, offsets).
set -u
P2B=/usr/lib/llvm-16/bin/perf2bolt
[ -x "$P2B" ] || { echo "SKIP: $P2B is absent (apt-get install bolt-16)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/no-cache"
fail=0; n=0
# check NAME SYMFS RECORDING ELF
check() {
  local name=$1 symfs=$2 f=$3 elf=$4
  "$ETMKIT_BIN" inject -q --buildid-dir "$tmp/no-cache" --symfs "$symfs" -o "$tmp/inj.data" "$f" ||
    { echo "FAIL $name: etmkit inject failed"; fail=1; return; }
  if ! "$P2B" -p "$tmp/inj.data" -o "$tmp/p2b.fdata" "$elf" >"$tmp/p2b.log" 2>&1; then
    echo "FAIL $name: perf2bolt failed:"; tail -3 "$tmp/p2b.log"; fail=1; return
  fi
  LC_ALL=C sort "$tmp/p2b.fdata" >"$tmp/want"
  "$ETMKIT_BIN" export -q --format=bolt --itrace=il64 --binary="$elf" \
    --buildid-dir "$tmp/no-cache" --symfs "$symfs" -o "$tmp/got.fdata" "$f" ||
    { echo "FAIL $name: etmkit export failed"; fail=1; return; }
  LC_ALL=C sort "$tmp/got.fdata" >"$tmp/got"
  n=$((n + 1))
  if ! cmp -s "$tmp/want" "$tmp/got"; then
    echo "FAIL $name: fdata differs from perf2bolt's on the injected file ($(wc -l <"$tmp/want") lines):"
    diff "$tmp/want" "$tmp/got" | head -10; fail=1
  elif [ ! -s "$tmp/want" ]; then
    echo "FAIL $name: empty fdata"; fail=1
  fi
}
for sc in basic per-cpu-trbe multi-aux-per-auxtrace; do
  out=$tmp/$sc
  "$ETMKIT_BIN" gen -q --scenario "$sc" --seed 1 -o "$out" >/dev/null 2>&1 ||
    { echo "FAIL $sc: etmkit gen failed"; fail=1; continue; }
  check "gen $sc" "$out/symfs" "$out/perf.data" "$out/symfs/usr/bin/simloop"
  rm -rf "$out"
done
# ../shared's perf_etm.data (a stripped binary: FDE and PLT functions)
S=${ETMKIT_SHARED:-}/testdata/perf
if [ -f "$S/files/perf_etm.data" ] && [ -f "$S/symfs/data/local/tmp/etm_test_loop" ]; then
  elf=$S/symfs/data/local/tmp/etm_test_loop
  check "perf_etm.data" "$S/symfs" "$S/files/perf_etm.data" "$elf"
  if [ -s "$tmp/want" ]; then
    "$ETMKIT_BIN" export -q --format=bolt --binary="$elf" --buildid-dir "$tmp/no-cache" \
      --symfs "$S/symfs" -o "$tmp/all.fdata" "$S/files/perf_etm.data" ||
      { echo "FAIL perf_etm.data: etmkit export (no --itrace) failed"; fail=1; }
    # every perf2bolt line (but its count) is there
    if ! python3 - "$tmp/want" "$tmp/all.fdata" <<'PY'
import sys
def load(p):
    d = {}
    for l in open(p):
        f = l.split()
        d[" ".join(f[:-1])] = int(f[-1])
    return d
want, got = load(sys.argv[1]), load(sys.argv[2])
bad = [k for k in want if k not in got]
for k in bad:
    print("  %s %d, export without --itrace: %s" % (k, want[k], got.get(k)))
sys.exit(1 if bad else 0)
PY
    then echo "FAIL perf_etm.data: the full export lacks perf2bolt's lines"; fail=1; fi
  fi
else
  echo "SKIP perf_etm.data check: $S/files/perf_etm.data or its symfs is absent (gen recordings only)"
fi
[ "$fail" -eq 0 ] && echo "ok: $n recordings, etmkit's fdata equals perf2bolt's on the injected perf.data"
exit $fail
