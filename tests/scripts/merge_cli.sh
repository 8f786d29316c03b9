#!/bin/bash
# etmkit merge (issue 14 item 4, the reduce step): inputs in any order and grouping give the
# same bytes; simpleperf's AutoFDO text (../shared perf_inject.data) goes through a branch
# list and back unchanged; a damaged input fails the merge with one line naming the file,
# line and offset, and writes nothing; usage errors exit 2.
set -u
bin=${ETMKIT_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# four shards of one fleet: two binaries, overlapping counts
shard() { # shard N: a branch list
    printf 'etmkit-branch-list 1\n'
    printf 'binary 0102030405060708090a0b0c0d0e0f1011121314 400000 /usr/bin/app\n'
    printf 'ranges 2\n400010 400020 %d\n400030 400038 1\n' "$1"
    printf 'addresses 0\nbranches 2\n400020 400030 %d\n400038 - 1\n' "$((2 * $1))"
    if [ "$1" -ne 2 ]; then
        printf 'binary - 0 /lib/libc.so.6\nranges 1\n1000 1008 %d\naddresses 0\nbranches 0\n' "$1"
    fi
    printf 'end\n'
}
for i in 1 2 3 4; do shard $i >s$i.bl; done
"$bin" merge -q -o all.bl s1.bl s2.bl s3.bl s4.bl || bad "merge of four shards"
"$bin" merge -q -o a.bl s4.bl s2.bl && "$bin" merge -q -o b.bl s3.bl s1.bl &&
    "$bin" merge -q -o ab.bl b.bl a.bl || bad "merge in pairs"
cmp -s all.bl ab.bl || { diff all.bl ab.bl; bad "grouping/order changed the merged bytes"; }
want='etmkit-branch-list 1
binary - 0 /lib/libc.so.6
ranges 1
1000 1008 8
addresses 0
branches 0
binary 0102030405060708090a0b0c0d0e0f1011121314 400000 /usr/bin/app
ranges 2
400010 400020 10
400030 400038 4
addresses 0
branches 2
400020 400030 20
400038 - 4
end'
[ "$(cat all.bl)" = "$want" ] || { diff <(echo "$want") all.bl; bad "merged counts"; }
# AutoFDO text of the same: one file per binary is what AutoFDO reads; simpleperf's layout
"$bin" merge -q --format=autofdo -o all.afdo all.bl || bad "autofdo output"
want='// Please split this file. AutoFDO only accepts profile for one binary.
1
1000-1008:8
0
0
// build_id: 0x0000000000000000000000000000000000000000
// /lib/libc.so.6

2
10-20:10
30-38:4
0
2
20->30:20
38->0:4
// build_id: 0x0102030405060708090a0b0c0d0e0f1011121314
// /usr/bin/app'
[ "$(cat all.afdo)" = "$want" ] || { diff <(echo "$want") all.afdo; bad "autofdo text"; }

# simpleperf's own AutoFDO text, through a branch list and back
inject=${ETMKIT_SHARED:-/nonexistent}/testdata/perf/files/perf_inject.data
if [ -f "$inject" ]; then
    "$bin" merge -q -o inj.bl "$inject" && "$bin" merge -q --format=autofdo -o inj.afdo inj.bl ||
        bad "merge of perf_inject.data"
    cmp -s inj.afdo "$inject" || bad "perf_inject.data did not come back byte for byte"
    "$bin" merge -q --format=autofdo -o twice.afdo "$inject" "$inject" &&
        grep -qx '105c-106c:200' twice.afdo || bad "perf_inject.data twice: counts not doubled"
else
    echo "note: $inject is not there: simpleperf round trip not checked"
fi

# a damaged input: one line naming file, line and offset; nothing written, old OUT kept.
# Cut at byte 150, all.bl ends in line 7 (from byte 91 = 0x5b) "binary <id> 400000 /usr"
head -c 150 all.bl >cut.bl
echo keep >out.bl
out=$("$bin" merge -o out.bl s1.bl cut.bl 2>&1); rc=$?
[ $rc -eq 1 ] || bad "damaged input: exit $rc, want 1"
[ "$out" = "etmkit: merge: cut.bl: record 7: offset 0x5b: error: the text ends where 'ranges N' should be [profile.malformed]" ] ||
    bad "damaged input message: '$out'"
[ "$(cat out.bl)" = keep ] || bad "a failed merge changed OUT"
[ -z "$(ls | grep merge-)" ] || bad "a failed merge left a temporary file: $(ls)"
printf 'etmkit-branch-list 1\nbinary 0102030405060708090a0b0c0d0e0f1011121314 0 /usr/bin/app\nranges 0\naddresses 0\nbranches 0\nend\n' >base0.bl
out=$("$bin" merge -o out.bl s1.bl base0.bl 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == "etmkit: merge: base0.bl: error: binary '/usr/bin/app' (build-id 0102030405060708090a0b0c0d0e0f1011121314): first load segment at 0x400000 in one profile, 0x0 in the other: its addresses cannot be merged [profile.load-base-differs]" ]] ||
    bad "different load bases: exit $rc, '$out'"
out=$("$bin" merge -o out.bl /nonexistent/x.bl 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$out" = "etmkit: merge: /nonexistent/x.bl: No such file or directory" ] ||
    bad "missing input: exit $rc, '$out'"

# --build-id: one binary alone, in any format; the parts add up to the whole
app=0102030405060708090a0b0c0d0e0f1011121314
"$bin" merge -q --build-id=$app -o app.bl all.bl || bad "merge --build-id=$app"
[ "$(grep -c '^binary ' app.bl)" = 1 ] && grep -q "^binary $app 400000 /usr/bin/app\$" app.bl ||
    bad "--build-id=$app: $(grep '^binary ' app.bl)"
"$bin" merge -q --build-id=0X${app^^} -o app2.bl all.bl 2>/dev/null && bad "--build-id with 0X accepted"
"$bin" merge -q --build-id=0x${app^^} -o app2.bl all.bl && cmp -s app.bl app2.bl ||
    bad "--build-id in upper case with 0x differs"
"$bin" merge -q --format=autofdo --build-id=$app -o app.afdo all.bl || bad "autofdo --build-id"
! grep -q '^// Please split' app.afdo && grep -q "^// build_id: 0x$app\$" app.afdo ||
    bad "autofdo --build-id=$app: $(head -2 app.afdo)"
out=$("$bin" merge -q --build-id=ffff -o none.bl all.bl 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$out" = "etmkit: merge: no binary of the profile has build-id ffff" ] &&
    [ ! -e none.bl ] || bad "--build-id of no binary: exit $rc, '$out'"
for v in abc 0000; do
    out=$("$bin" merge -q --build-id=$v -o none.bl all.bl 2>&1); rc=$?
    [ $rc -eq 2 ] && [ "$out" = "etmkit: merge: --build-id=$v: not a build-id (an even number of hex digits, not all zeros)" ] ||
        bad "--build-id=$v: exit $rc, '$out'"
done

# usage errors
for args in "s1.bl" "-o x.bl" "--format=perf -o x.bl s1.bl" "--frobnicate -o x.bl s1.bl"; do
    # shellcheck disable=SC2086
    "$bin" merge $args >/dev/null 2>&1; rc=$?
    [ $rc -eq 2 ] || bad "etmkit merge $args: exit $rc, want 2"
done
out=$("$bin" merge --format=bolt -o x.fdata all.bl 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "etmkit: merge: --format=bolt: the profile has 2 binaries: name one with --binary=ELF" ] ||
    bad "bolt with two binaries: exit $rc, '$out'"
# bolt for an ELF from every binary that is that file, in any input order: simloop's counts
# under a second path (same build-id) add up, as merging its profile with itself does (the
# first binary in input order was taken: the other's counts were dropped, and the two orders
# gave different files); an ELF without a build-id is the binary of its file name only (any
# binary without one was taken: another library's counts, or an empty file and exit 0)
if "$bin" gen -q --scenario basic -o g >/dev/null 2>&1 &&
   "$bin" export -q --format=branch-list --symfs g/symfs -o basic.bl g/perf.data 2>/dev/null; then
    elf=g/symfs/usr/bin/simloop
    { echo "etmkit-branch-list 1"; awk '/^binary/{p=($4=="/usr/bin/simloop")} p' basic.bl |
        grep -v '^end$' | sed 's#/usr/bin/simloop$#/bin/simloop#'; echo end; } >alias.bl
    "$bin" merge -q --format=bolt --binary=$elf -o o1.fdata basic.bl alias.bl || bad "bolt: basic alias"
    "$bin" merge -q --format=bolt --binary=$elf -o o2.fdata alias.bl basic.bl || bad "bolt: alias basic"
    "$bin" merge -q -o twice.bl basic.bl basic.bl &&
        "$bin" merge -q --format=bolt --binary=$elf -o want.fdata twice.bl || bad "bolt: basic twice"
    [ -s want.fdata ] && cmp -s o1.fdata want.fdata && cmp -s o2.fdata want.fdata ||
        bad "bolt from one build-id under two paths: $(wc -l <o1.fdata) and $(wc -l <o2.fdata) lines, $(wc -l <want.fdata) wanted"
    if command -v llvm-objcopy >/dev/null; then
        llvm-objcopy --remove-section .note.gnu.build-id $elf simloop
        { echo "etmkit-branch-list 1"; grep -v '^end$' basic.bl | tail -n +2 |
            sed 's#^binary [0-9a-f-]* #binary - #'; echo end; } >noid.bl
        { echo "etmkit-branch-list 1"; awk '/^binary/{p=($4!="/usr/bin/simloop")} p' noid.bl |
            grep -v '^end$'; echo end; } >lib.bl
        "$bin" merge -q --format=bolt --binary=simloop -o n1.fdata noid.bl || bad "bolt without build-ids"
        "$bin" merge -q --format=bolt --binary=$elf -o n2.fdata basic.bl
        cmp -s n1.fdata n2.fdata || bad "bolt for an ELF without a build-id: not simloop's counts"
        out=$("$bin" merge --format=bolt --binary=simloop -o n3.fdata lib.bl 2>&1); rc=$?
        [ $rc -eq 1 ] && [ ! -e n3.fdata ] && [ "$out" = "etmkit: merge: --format=bolt: simloop has no build-id, and no one binary of the profile without one is named simloop" ] ||
            bad "bolt for an ELF without a build-id that no binary is: exit $rc, '$out'"
    fi
else
    bad "gen basic / export --format=branch-list"
fi
"$bin" merge --help | grep -q '^usage: etmkit merge' || bad "merge --help"
exit $fail
