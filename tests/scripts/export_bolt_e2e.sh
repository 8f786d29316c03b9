#!/bin/bash
# BOLT end to end from trace (issue 14 acceptance): the profile etmkit makes from a recording
# of the simulator's simloop (`etmkit gen --scenario basic`) drives Debian's llvm-bolt-16 on a
# build of simloop with relocations, both ways: `etmkit export --format=bolt` and perf2bolt on
# `etmkit inject`'s perf.data.
#
# The relocatable build is simloop built as `make` builds it (src/sim/programs/programs.cmake)
# plus -Wl,--emit-relocs, with the recorded build-id (so that both tools take the recording's
# samples for it), and one more object linked last: a driver for qemu. The recorded simloop
# never ends under qemu-aarch64 by itself: its loop in _start goes on while the scripted action
# (act_none) returns non-zero, which it always does (in the simulator the SIM_DEC_CONTINUE
# annotation ends it), and it writes nothing. The driver (entry point qemu_entry) points the
# action slot at qemu_stop, which after QEMU_STEPS work steps writes sim_sink in hex and exits
# with its low byte. Checked: the recorded simloop's .text is a prefix of the relocatable
# build's, its .data is the same, and every function of it is at the same address there (the
# driver's two functions come after). checksum reads four ints from &sim_sink, the last of
# which is the driver's counter: the output depends on it, the same in every build.
#
# Then, for each of the two profiles:
#  1. llvm-bolt-16 accepts it (exit 0, no BOLT-ERROR or BOLT-WARNING line, no "profile for N
#     objects ignored");
#  2. the optimised program prints the same and exits the same under qemu as the relocatable
#     build does (every qemu run has a timeout);
#  3. the hot text (__hot_start .. __hot_end) holds, in address order, exactly the functions
#     BOLT's hfsort ordered (-generate-function-order), and those are exactly the functions the
#     profile names; the order differs from the link order (BOLT moved them), and is the same
#     for both profiles.
# The two profiles differ in one line, listed below with why; any other difference fails.
# Skips (77) when a tool is missing (`make test` installs bolt-16, qemu-user, clang and lld).
set -u
BOLT=llvm-bolt-16
P2B=/usr/lib/llvm-16/bin/perf2bolt
QEMU_STEPS=3   # work steps under qemu: their cost grows fast (cb_sum loops over a value; 10 take ~7 s)
QTIME=120      # seconds allowed for each qemu run
need() { command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 is not installed ($2)"; exit 77; }; }
need $BOLT "Debian package bolt-16"
need $P2B "Debian package bolt-16"
need qemu-aarch64 "Debian package qemu-user"
need clang "Debian package clang"
need ld.lld "Debian package lld"
need llvm-nm "Debian package llvm"
need llvm-objcopy "Debian package llvm"
need llvm-readelf "Debian package llvm"
need timeout "Debian package coreutils"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
src=$(cd "$ETMKIT_SRC" && pwd)/src/sim/programs
bin=${ETMKIT_BIN:?}
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$tmp" && mkdir no-cache || exit 1

"$bin" gen -q --scenario basic --seed 1 -o gen >/dev/null 2>&1 || { echo "FAIL: etmkit gen"; exit 1; }
rec=gen/symfs/usr/bin/simloop

# ---- the recorded program does not end under qemu by itself
cp "$rec" recorded && chmod +x recorded || exit 1
timeout 3 qemu-aarch64 ./recorded >/dev/null 2>&1
rc=$?
[ $rc -eq 124 ] || bad "the recorded simloop ended under qemu by itself (status $rc): the driver is not needed any more"

# ---- the relocatable build
cat >drv.c <<EOF
/* qemu driver for simloop (tests/scripts/export_bolt_e2e.sh): linked after simloop.o, with
 * its counter in .bss after simloop's and no read-only data, so that it moves nothing of
 * simloop; hidden, so that the compiler's default PIE code model makes no GOT entry */
extern volatile int sim_sink __attribute__((visibility("hidden")));
extern int (*sim_actions[2])(void) __attribute__((visibility("hidden")));
static unsigned long steps;
static inline long sys3(long n, long a, long b, long c)
{
    register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
                  x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}
int qemu_stop(void)
{
    if (++steps < $QEMU_STEPS)
        return 1;
    unsigned v = (unsigned)sim_sink;
    char buf[9];
    for (int i = 0; i < 8; i++) {
        unsigned d = (v >> (28 - 4 * i)) & 15;
        buf[i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    }
    buf[8] = '\n';
    sys3(64, 1, (long)buf, 9);
    sys3(93, v & 0xff, 0, 0);
    return 0;
}
__attribute__((naked)) void qemu_entry(void)
{
    __asm__("adrp x9, sim_actions\n add x9, x9, :lo12:sim_actions\n"
            "adrp x10, qemu_stop\n add x10, x10, :lo12:qemu_stop\n str x10, [x9]\n b _start");
}
EOF
flags=(--target=aarch64-linux-gnu -ffreestanding -nostdlib -fno-builtin -O2 -fno-jump-tables
       -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables
       -mgeneral-regs-only -fno-ident -g0 -I"$src")
bid=$(llvm-readelf -n "$rec" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || { echo "FAIL: no build-id in the recorded simloop"; exit 1; }
clang "${flags[@]}" -c "$src/crt.S" -o crt.o && clang "${flags[@]}" -c "$src/simloop.c" -o simloop.o &&
  clang "${flags[@]}" -c drv.c -o drv.o &&
  ld.lld --build-id=0x"$bid" --no-rosegment -z norelro --hash-style=gnu -z max-page-size=4096 \
    -static -e qemu_entry --emit-relocs -T "$src/exe.lds" crt.o simloop.o drv.o -o prog ||
  { echo "FAIL: building simloop with --emit-relocs"; exit 1; }
llvm-readelf -S prog | grep -q ' \.rela\.text ' || { echo "FAIL: no .rela.text in the relocatable build"; exit 1; }
llvm-objcopy -O binary --only-section=.text "$rec" rec.text &&
  llvm-objcopy -O binary --only-section=.text prog prog.text || { echo "FAIL: llvm-objcopy"; exit 1; }
cmp -s rec.text <(head -c "$(wc -c <rec.text)" prog.text) ||
  { echo "FAIL: the recorded simloop's code is not the start of the relocatable build's"; exit 1; }
llvm-objcopy -O binary --only-section=.data "$rec" rec.data &&
  llvm-objcopy -O binary --only-section=.data prog prog.data || { echo "FAIL: llvm-objcopy"; exit 1; }
cmp -s rec.data prog.data || { echo "FAIL: the relocatable build's .data differs from the recorded simloop's"; exit 1; }
funcs() { llvm-nm -n "$1" | awk '$2 == "T" || $2 == "t" { print $1, $3 }' | grep -v ' \$'; }
funcs "$rec" >rec.funcs; funcs prog >prog.funcs
printf '%s\n' qemu_stop qemu_entry >want.extra
if ! cmp -s rec.funcs <(head -n "$(wc -l <rec.funcs)" prog.funcs) ||
   ! tail -n +"$(($(wc -l <rec.funcs) + 1))" prog.funcs | awk '{ print $2 }' | cmp -s want.extra -; then
  echo "FAIL: the relocatable build has its functions elsewhere:"; diff rec.funcs prog.funcs | head; exit 1
fi

# ---- the two profiles
"$bin" export -q --format=bolt --itrace=il64 --binary=prog --buildid-dir "$tmp/no-cache" \
  --symfs gen/symfs -o export.fdata gen/perf.data || { echo "FAIL: etmkit export --format=bolt"; exit 1; }
"$bin" inject -q --buildid-dir "$tmp/no-cache" --symfs gen/symfs -o inj.data gen/perf.data ||
  { echo "FAIL: etmkit inject"; exit 1; }
"$P2B" -p inj.data -o perf2bolt.fdata prog >perf2bolt.log 2>&1 ||
  { tail -3 perf2bolt.log; echo "FAIL: perf2bolt"; exit 1; }
[ -s export.fdata ] || bad "etmkit export wrote an empty profile"
# perf2bolt enables BOLT's strict relocation mode for a binary with relocations, in which it
# takes call_library's `br x1` for a tail call and so builds that function's CFG, writing the
# fall-through of its `cbz`; etmkit's BOLT map follows llvm-bolt's non-strict reading (no CFG
# for a function with an indirect jump, so no fall-throughs), which llvm-bolt-16 also uses when
# optimising: it reports it could not post-process call_library's indirect branch either way.
printf '%s\n' '< 1 call_library/1 8 1 call_library/1 c 0 3' >allowed.diff
diff <(LC_ALL=C sort perf2bolt.fdata) <(LC_ALL=C sort export.fdata) | grep '^[<>]' >got.diff
cmp -s allowed.diff got.diff || { bad "the two profiles differ otherwise:"; diff allowed.diff got.diff; }

# ---- the relocatable build under qemu
qrun() { timeout "$QTIME" qemu-aarch64 "./$1" >"$1.out" 2>"$1.err"; echo "exit $?" >>"$1.out"; }
qrun prog
grep -q '^exit 124$' prog.out && { echo "FAIL: the relocatable build did not end in ${QTIME} s under qemu"; exit 1; }
grep -Eq '^[0-9a-f]{8}$' prog.out || bad "the relocatable build printed no sim_sink: $(head -2 prog.out)"

# ---- BOLT on each profile
llvm-nm -n prog | awk '($2 == "T" || $2 == "t") && $3 !~ /^\$/ { print $3 }' >link.order
orders=()
for p in export perf2bolt; do
  if ! $BOLT prog -o "prog.$p" -data="$p.fdata" -reorder-blocks=ext-tsp -reorder-functions=hfsort \
      -dyno-stats -generate-function-order="$p.order" >"bolt.$p.log" 2>&1; then
    tail -5 "bolt.$p.log"; bad "$p: llvm-bolt-16 refused the profile"; continue
  fi
  grep -E "BOLT-(ERROR|WARNING)|profile for [0-9]+ objects? (was|were) ignored" "bolt.$p.log" &&
    bad "$p: llvm-bolt-16 reported problems with the profile"
  qrun "prog.$p"
  cmp -s prog.out "prog.$p.out" ||
    bad "$p: the optimised program behaves differently: $(tr '\n' ' ' <"prog.$p.out") vs $(tr '\n' ' ' <prog.out)"
  llvm-nm -n "prog.$p" | awk '$3 == "__hot_start" { on = 1; next } $3 == "__hot_end" { on = 0 }
    on && ($2 == "T" || $2 == "t") && $3 !~ /^\$/ { print $3 }' >"hot.$p"
  sed 's,/[0-9]*$,,' "$p.order" >"order.$p"
  [ -s "hot.$p" ] || bad "$p: no hot text"
  cmp -s "order.$p" "hot.$p" ||
    { bad "$p: the hot text is not in the order BOLT's hfsort gave:"; diff "order.$p" "hot.$p"; }
  awk '{ print $2; print $5 }' "$p.fdata" | sed 's,/[0-9]*$,,' | LC_ALL=C sort -u >"named.$p"
  LC_ALL=C sort "hot.$p" | cmp -s "named.$p" - ||
    { bad "$p: the hot text does not hold exactly the profile's functions:"; LC_ALL=C sort "hot.$p" | diff "named.$p" -; }
  grep -Fxf "hot.$p" link.order | cmp -s "hot.$p" - && bad "$p: BOLT kept the link order of the hot functions"
  orders+=("$p")
done
[ ${#orders[@]} -eq 2 ] && ! cmp -s hot.export hot.perf2bolt &&
  { bad "the two profiles give different hot layouts:"; diff hot.export hot.perf2bolt; }

if [ $fail -eq 0 ]; then
  echo "ok: llvm-bolt-16 takes etmkit's fdata ($(wc -l <export.fdata) lines) and perf2bolt's on the injected perf.data ($(wc -l <perf2bolt.fdata) lines);" \
    "under qemu both optimised programs print $(head -1 prog.out) and $(tail -1 prog.out) as the original;" \
    "hot text in hfsort's order: $(paste -sd ' ' hot.export)"
fi
exit $fail
