#!/bin/bash
# BOLT end to end (issue 14), independent of trace decoding: a small AArch64 program
# (tests/data/bolt/*.c, static, no C library, linked with --emit-relocs) runs under
# qemu-aarch64; its known execution (qemu's log of every instruction, turned into counts by
# bolt_model.py: a stand-in for decoded trace until the session hands out samples) becomes an
# etmkit branch list, and `etmkit merge --format=bolt` writes BOLT's fdata from it. Then:
#  1. perf2bolt, given the same execution as branch stacks (its pre-aggregated input), writes
#     the same fdata lines (perf2bolt writes them in hash order: both are sorted);
#  2. llvm-bolt-16 accepts the profile (no object of it ignored: BOLT ignores a profile whose
#     function names are not its own) with -reorder-blocks=ext-tsp -reorder-functions=hfsort;
#  3. the optimised program prints the same and exits the same under qemu;
#  4. BOLT's dyno-stats before optimising equal the counts of the run (it read every count
#     as the profile says), and after optimising equal the counts of a run of the optimised
#     program (the layout it reports is the layout it made), with fewer taken branches;
#  5. the hot text BOLT makes (__hot_start.. __hot_end) holds exactly the functions that ran.
# Installs nothing: skips (77) when a tool is missing (`make test` installs bolt-16 and
# qemu-user, see TEST_DEPS in the Makefile).
set -u
src=${ETMKIT_SRC:?}
bin=${ETMKIT_BIN:?}
BOLT=llvm-bolt-16
# Debian's perf2bolt-16 link runs as llvm-bolt (BOLT picks its mode from the program name)
PERF2BOLT=/usr/lib/llvm-16/bin/perf2bolt
need() { command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 is not installed ($2)"; exit 77; }; }
need $BOLT "Debian package bolt-16"
need $PERF2BOLT "Debian package bolt-16"
need qemu-aarch64 "Debian package qemu-user"
need clang "Debian package clang"
need ld.lld "Debian package lld"
need python3 "Debian package python3"
need llvm-nm "Debian package llvm"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# ---- the program
cflags=(--target=aarch64-linux-gnu -O2 -ffreestanding -nostdlib -fno-builtin
        -fno-stack-protector -fno-asynchronous-unwind-tables -g0)
objs=()
for f in bolt_prog bolt_prog2 bolt_prog3; do
    clang "${cflags[@]}" -c "$src/tests/data/bolt/$f.c" -o "$tmp/$f.o" || { echo "FAIL: clang $f.c"; exit 1; }
    objs+=("$tmp/$f.o")
done
ld.lld -static -e _start --emit-relocs --build-id=sha1 "${objs[@]}" -o "$tmp/prog" ||
    { echo "FAIL: ld.lld"; exit 1; }
cd "$tmp" || exit 1

run() { # run PROG: its output and exit status in PROG.out, its instructions in PROG.log
    qemu-aarch64 -singlestep -d nochain,exec -D "$1.log" "./$1" >"$1.out"; echo "exit $?" >>"$1.out"
}
run prog
mkdir -p model after
python3 "$src/tests/scripts/bolt_model.py" prog prog.log model || { echo "FAIL: bolt_model.py"; exit 1; }

# ---- 1. etmkit's fdata, and perf2bolt's from the same execution
"$bin" merge -q --format=bolt --binary=prog -o prof.fdata model/model.bl ||
    { echo "FAIL: etmkit merge --format=bolt"; exit 1; }
"$PERF2BOLT" -pa -p model/model.pa -o perf2bolt.fdata prog >perf2bolt.log 2>&1 ||
    { cat perf2bolt.log; echo "FAIL: perf2bolt"; exit 1; }
LC_ALL=C sort perf2bolt.fdata >want.fdata
LC_ALL=C sort prof.fdata >got.fdata
if ! diff -u want.fdata got.fdata >fdata.diff; then
    cat fdata.diff; bad "etmkit's fdata differs from perf2bolt's for the same execution"
fi
[ -s got.fdata ] || bad "empty fdata"

# ---- 2. BOLT accepts it
if ! $BOLT prog -o prog.bolt -data=prof.fdata -reorder-blocks=ext-tsp -reorder-functions=hfsort \
        -dyno-stats >bolt.log 2>&1; then
    cat bolt.log; echo "FAIL: llvm-bolt-16 refused the profile"; exit 1
fi
grep -E "BOLT-(ERROR|WARNING)|profile for [0-9]+ objects? (was|were) ignored" bolt.log &&
    bad "llvm-bolt-16 reported problems with the profile"

# ---- 3. same behaviour
run prog.bolt
cmp -s prog.out prog.bolt.out || bad "the optimised program behaves differently: $(cat prog.bolt.out) vs $(cat prog.out)"

# ---- 4. dyno-stats: before = the run's counts, after = the optimised run's counts
python3 "$src/tests/scripts/bolt_model.py" prog.bolt prog.bolt.log after ||
    { echo "FAIL: bolt_model.py (optimised run)"; exit 1; }
# BOLT prints two blocks of "  <n> : <name>[ (<change>)]" after "program-wide dynostats"
awk '/program-wide dynostats/ { on = 1; next }
     on && /^ *[0-9]+ : / { sub(/^ */, ""); sub(/ \(.*\)$/, ""); print > (blk ? "stats.after" : "stats.before"); seen = 1; next }
     on && seen && /^$/ { blk++; seen = 0 }' bolt.log
for when in before after; do
    model=model/dyno.txt; [ $when = after ] && model=after/dyno.txt
    while read -r line; do
        name=${line#* : }
        got=$(grep -x "[0-9]* : $name" stats.$when)
        [ "$got" = "$line" ] || bad "dyno-stats $when optimising: BOLT says '${got:-nothing}', the run '$line'"
    done <"$model"
done
taken() { awk '/taken (forward|backward) branches|executed unconditional branches/ { n += $1 } END { print n + 0 }' "$1"; }
[ "$(taken after/dyno.txt)" -lt "$(taken model/dyno.txt)" ] ||
    bad "the optimised program takes $(taken after/dyno.txt) branches, the original $(taken model/dyno.txt)"

# ---- 5. the hot text holds the functions that ran, and only those
llvm-nm -n prog.bolt >nm.txt
awk '$3 == "__hot_start" { on = 1; next } $3 == "__hot_end" { on = 0 }
     on && ($2 == "T" || $2 == "t") && $3 !~ /^\$/ { print $3 }' nm.txt | sort -u >hot.txt
awk '{ print $2 }' model/funcs.txt | sort -u >ran.txt
diff -u ran.txt hot.txt >/dev/null || { diff -u ran.txt hot.txt; bad "hot text is not the functions that ran"; }

if [ $fail -eq 0 ]; then
    echo "ok: $(wc -l <got.fdata) fdata lines as perf2bolt's; BOLT: $(grep -o 'modified layout of [0-9]* functions' bolt.log); taken branches $(taken model/dyno.txt) -> $(taken after/dyno.txt)"
fi
exit $fail
