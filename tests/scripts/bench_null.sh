#!/bin/sh
# bench/null.inc: where the benches' timed runs write. When /dev/null is the null device, it;
# when it is a regular file (some VMs), a null device made in the bench's folder -- also when
# that folder is kept from an earlier run (BENCH_TMP) and already has one. (It used to fall
# back to the regular file then: gigabytes of text written to memory, system time 2x the
# user time in bench/ab's script-default rounds.)
set -u
src=${ETMKIT_SRC:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
for run in first again; do
    null=
    . "$src/bench/null.inc"
    if [ -c /dev/null ]; then
        [ "$null" = /dev/null ] || { echo "FAIL ($run): \$null is $null, not /dev/null"; fail=1; }
    elif [ -c "$tmp/null" ]; then
        [ "$null" = "$tmp/null" ] || { echo "FAIL ($run): \$null is $null, not $tmp/null"; fail=1; }
        [ -c "$null" ] || { echo "FAIL ($run): $null is not a character device"; fail=1; }
    else
        echo "SKIP ($run): /dev/null is not the null device and mknod is not allowed here"
        exit 77
    fi
done
[ $fail = 0 ] && echo "bench_null: \$null is $null on both runs"
exit $fail
