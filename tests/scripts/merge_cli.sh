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
out=$("$bin" merge -q --build-id=abc -o none.bl all.bl 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "etmkit: merge: --build-id=abc: not a build-id (an even number of hex digits)" ] ||
    bad "--build-id=abc: exit $rc, '$out'"

# usage errors
for args in "s1.bl" "-o x.bl" "--format=perf -o x.bl s1.bl" "--frobnicate -o x.bl s1.bl"; do
    # shellcheck disable=SC2086
    "$bin" merge $args >/dev/null 2>&1; rc=$?
    [ $rc -eq 2 ] || bad "etmkit merge $args: exit $rc, want 2"
done
out=$("$bin" merge --format=bolt -o x.fdata all.bl 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "etmkit: merge: --format=bolt: the profile has 2 binaries: name one with --binary=ELF" ] ||
    bad "bolt with two binaries: exit $rc, '$out'"
"$bin" merge --help | grep -q '^usage: etmkit merge' || bad "merge --help"
exit $fail
