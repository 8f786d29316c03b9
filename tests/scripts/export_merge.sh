#!/bin/bash
# export then merge (issue 14 item 4, the fleet path): branch lists exported from several
# recordings, merged in different orders and groupings, give identical bytes, and the merged
# AutoFDO text equals the sum's.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
i=0
for spec in basic:1 basic:2 basic:3 two-processes:1; do
  sc=${spec%%:*}; seed=${spec##*:}; i=$((i + 1))
  "$ETMKIT_BIN" gen -q --scenario "$sc" --seed "$seed" -o "$tmp/g$i" >/dev/null 2>&1 ||
    { echo "FAIL: etmkit gen $sc"; exit 1; }
  "$ETMKIT_BIN" export -q --format=branch-list --buildid-dir "$tmp" --symfs "$tmp/g$i/symfs" \
    -o "$tmp/s$i.bl" "$tmp/g$i/perf.data" || { echo "FAIL: export $sc seed $seed"; exit 1; }
done
cd "$tmp" || exit 1
"$ETMKIT_BIN" merge -q -o all.bl s1.bl s2.bl s3.bl s4.bl || fail=1
"$ETMKIT_BIN" merge -q -o rev.bl s4.bl s3.bl s2.bl s1.bl || fail=1
"$ETMKIT_BIN" merge -q -o a.bl s3.bl s1.bl && "$ETMKIT_BIN" merge -q -o b.bl s2.bl s4.bl &&
  "$ETMKIT_BIN" merge -q -o ab.bl b.bl a.bl || fail=1
"$ETMKIT_BIN" merge -q -o c.bl s1.bl s2.bl && "$ETMKIT_BIN" merge -q -o d.bl c.bl s3.bl &&
  "$ETMKIT_BIN" merge -q -o cd.bl s4.bl d.bl || fail=1
for f in rev.bl ab.bl cd.bl; do
  cmp -s all.bl "$f" || { echo "FAIL: $f differs from all.bl"; diff all.bl "$f" | head -5; fail=1; }
done
grep -q '^binary .* /usr/bin/simchild$' all.bl || { echo "FAIL: simchild missing from the sum"; fail=1; }
[ "$(grep -c '^binary' all.bl)" -ge 2 ] || { echo "FAIL: expected at least 2 binaries"; fail=1; }
# the sum's counts are the shards' counts added, line by line
here=$(cd "$(dirname "$0")" && pwd)
sum_lines() { for f in "$@"; do python3 "$here/export_truth.py" --profile "$f"; done |
  awk '{ k = $1 " " $2 " " $3 " " $4; c[k] += $5 } END { for (k in c) print k, c[k] }' | LC_ALL=C sort; }
sum_lines s1.bl s2.bl s3.bl s4.bl >want.sum
sum_lines all.bl >got.sum
cmp -s want.sum got.sum || { echo "FAIL: the merged counts are not the shards' sums"; diff want.sum got.sum | head -5; fail=1; }
"$ETMKIT_BIN" merge -q --format=autofdo -o all.afdo s4.bl s1.bl s3.bl s2.bl || fail=1
"$ETMKIT_BIN" merge -q --format=autofdo -o all2.afdo all.bl || fail=1
cmp -s all.afdo all2.afdo || { echo "FAIL: autofdo of the sum depends on the grouping"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: 4 exported branch lists merged in 4 orders/groupings: identical bytes"
exit $fail
