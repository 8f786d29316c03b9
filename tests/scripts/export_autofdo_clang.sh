#!/bin/bash
# AutoFDO end to end (issue 14 acceptance): Debian's create_llvm_prof (autofdo 0.19) turns
# etmkit's profile of a recording into an LLVM sample profile that clang-16 accepts with
# -fprofile-sample-use for AArch64, both ways: etmkit export's AutoFDO text (--profiler=text)
# and `etmkit inject`'s perf.data (--profiler=perf). The program with DWARF is the simulator's
# simloop built again as `make` builds it but with -gdwarf-4 (create_llvm_prof needs DWARF 4,
# docs/PROFILES.md): its functions are at the same addresses (debug info only moves a few
# prologue instructions inside their function). llvm-profgen-16 refuses AArch64: its exact
# error is checked, so that a version that accepts it is noticed.
set -u
for t in create_llvm_prof clang-16 clang ld.lld llvm-objdump; do
  command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t is not installed (apt-get install autofdo clang-16)"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# create_llvm_prof's logs (glog) go to the test's folder, not /tmp
export GOOGLE_LOG_DIR="$tmp"
src=$(cd "$ETMKIT_SRC" && pwd)/src/sim/programs
fail=0
cd "$tmp" || exit 1
"$ETMKIT_BIN" gen -q --scenario basic -o gen >/dev/null 2>&1 || { echo "FAIL: etmkit gen"; exit 1; }
flags=(--target=aarch64-linux-gnu -ffreestanding -nostdlib -fno-builtin -O2 -fno-jump-tables
       -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables
       -mgeneral-regs-only -fno-ident -I"$src")
clang "${flags[@]}" -g0 -c "$src/crt.S" -o crt.o && clang "${flags[@]}" -gdwarf-4 -c "$src/simloop.c" -o simloop.o &&
  mkdir -p dwarf/usr/bin && ld.lld --build-id=sha1 --no-rosegment -z norelro --hash-style=gnu \
    -z max-page-size=4096 -static -e _start -T "$src/exe.lds" crt.o simloop.o -o dwarf/usr/bin/simloop ||
  { echo "FAIL: building simloop with DWARF"; exit 1; }
syms() { llvm-objdump -t "$1" | awk '$3 == "F" || $4 == "F" { print $1, $NF }' | sort; }
cmp -s <(syms dwarf/usr/bin/simloop) <(syms gen/symfs/usr/bin/simloop) ||
  { echo "FAIL: simloop with DWARF has its functions elsewhere"; diff <(syms dwarf/usr/bin/simloop) <(syms gen/symfs/usr/bin/simloop) | head; exit 1; }

# check NAME PROFILE: an LLVM text profile with sim_work_step, which clang-16 takes silently
check() {
  if ! grep -q '^sim_work_step:[0-9]*:[0-9]*$' "$2"; then
    echo "FAIL $1: create_llvm_prof wrote no profile of sim_work_step ($(wc -c <"$2") bytes)"; fail=1; return
  fi
  if ! clang-16 "${flags[@]}" -fprofile-sample-use="$2" -c "$src/simloop.c" -o use.o 2>clang.err ||
      [ -s clang.err ]; then
    echo "FAIL $1: clang-16 -fprofile-sample-use: $(head -3 clang.err)"; fail=1
  fi
}
"$ETMKIT_BIN" export -q --symfs gen/symfs -o app.afdo gen/perf.data || { echo "FAIL: etmkit export"; exit 1; }
create_llvm_prof --profiler=text --profile=app.afdo --binary=dwarf/usr/bin/simloop --format=text \
  --out=text.prof >cl.log 2>&1 || { echo "FAIL: create_llvm_prof (text): $(head -3 cl.log)"; fail=1; }
check "AutoFDO text" text.prof
"$ETMKIT_BIN" inject -q --symfs gen/symfs -o inj.data gen/perf.data || { echo "FAIL: etmkit inject"; exit 1; }
# create_llvm_prof finds the binary's samples by its file name: the recording's /usr/bin/simloop
create_llvm_prof --profile=inj.data --binary=dwarf/usr/bin/simloop --format=text --out=perf.prof \
  >cl.log 2>&1 || { echo "FAIL: create_llvm_prof (perf.data): $(head -3 cl.log)"; fail=1; }
check "injected perf.data" perf.prof
if command -v llvm-profgen-16 >/dev/null 2>&1; then
  got=$(llvm-profgen-16 --perfdata=inj.data --binary=dwarf/usr/bin/simloop --output=pg.prof 2>&1 | head -1)
  [ "$got" = "llvm-profgen: error: aarch64--: unsupported target" ] ||
    { echo "FAIL: llvm-profgen-16 says something new (docs/PROFILES.md): $got"; fail=1; }
fi
[ "$fail" -eq 0 ] && echo "ok: create_llvm_prof on etmkit's AutoFDO text and injected perf.data; clang-16 accepts both profiles"
exit $fail
