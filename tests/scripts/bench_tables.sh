#!/bin/sh
# make bench's table writer (bench/tables, bench/result.inc): a run's figures replace the rows
# with their IDs in place, new IDs are added at the end, rows the run did not measure keep
# their figures and the line of the run that measured them, runs no row names are dropped, and
# nothing outside the two marker lines changes. Compared whole, line for line.
set -u
src=${ETMKIT_SRC:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cat >"$tmp/doc.md" <<'EOF'
# Title

text before
<!-- make bench: begin -->
<!-- make bench: end -->

## after
| a | table | not ours |
EOF
# the figures as the benches record them (bench_result), with the acceptance worked out
BENCH_RESULTS=$tmp/r1
export BENCH_RESULTS
. "$src/bench/result.inc"
bench_result alpha 'the `alpha` work' "1.00 s CPU" "10.00 s CPU (peer)" 10.0 ">=5"
bench_result beta "beta, wall time" "2.00 s wall" "3.00 s wall" 1.50 ">=1.7"
bench_result gamma "gamma memory" "100 KiB" "80 KiB" 1.25 "<=1.5"
sh "$src/bench/tables" "$tmp/r1" "$tmp/doc.md" "2026-01-01 10:00" "commit a; machine m; load 0.1" ||
    bad "first run: bench/tables failed"
cat >"$tmp/want1" <<'EOF'
# Title

text before
<!-- make bench: begin -->
| id | comparison | etmkit | peer | ratio | acceptance | met | run |
| --- | --- | --- | --- | --- | --- | --- | --- |
| alpha | the `alpha` work | 1.00 s CPU | 10.00 s CPU (peer) | 10.0x | ≥ 5x | yes | 2026-01-01 10:00 |
| beta | beta, wall time | 2.00 s wall | 3.00 s wall | 1.50x | ≥ 1.7x | no | 2026-01-01 10:00 |
| gamma | gamma memory | 100 KiB | 80 KiB | 1.25x | ≤ 1.5x | yes | 2026-01-01 10:00 |

Runs:

- 2026-01-01 10:00: commit a; machine m; load 0.1
<!-- make bench: end -->

## after
| a | table | not ours |
EOF
diff "$tmp/want1" "$tmp/doc.md" || bad "first run: the document differs"

# a second run measures beta again and a new delta; alpha and gamma stay with the first run
BENCH_RESULTS=$tmp/r2
bench_result beta "beta, wall time" "1.00 s wall" "2.00 s wall" 2.00 ">=1.7"
bench_result delta "delta" "1 s" "1.5 s" 1.5 "<=1.3"
sh "$src/bench/tables" "$tmp/r2" "$tmp/doc.md" "2026-01-02 11:00" "commit b; machine m; load 0.2" ||
    bad "second run: bench/tables failed"
sed -e 's/^| beta .*/| beta | beta, wall time | 1.00 s wall | 2.00 s wall | 2.00x | ≥ 1.7x | yes | 2026-01-02 11:00 |/' \
    -e 's/^\(| gamma .*\)$/\1\
| delta | delta | 1 s | 1.5 s | 1.5x | ≤ 1.3x | no | 2026-01-02 11:00 |/' \
    -e 's/^\(- 2026-01-01 10:00: .*\)$/\1\
- 2026-01-02 11:00: commit b; machine m; load 0.2/' "$tmp/want1" >"$tmp/want2"
diff "$tmp/want2" "$tmp/doc.md" || bad "second run: the document differs"

# a third run measures every row of the first run: its line goes, the second run's stays
BENCH_RESULTS=$tmp/r3
bench_result alpha 'the `alpha` work' "1.00 s CPU" "4.00 s CPU (peer)" 4.0 ">=5"
bench_result gamma "gamma memory" "100 KiB" "80 KiB" 1.25 "<=1.5"
sh "$src/bench/tables" "$tmp/r3" "$tmp/doc.md" "2026-01-03 12:00" "commit c" || bad "third run failed"
grep -c '^- 2026-01-01' "$tmp/doc.md" | grep -qx 0 || bad "third run: the first run's line stayed"
grep -qx '| alpha | the `alpha` work | 1.00 s CPU | 4.00 s CPU (peer) | 4.0x | ≥ 5x | no | 2026-01-03 12:00 |' "$tmp/doc.md" ||
    bad "third run: alpha not replaced"
[ "$(sed -n '/^- /p' "$tmp/doc.md")" = "- 2026-01-02 11:00: commit b; machine m; load 0.2
- 2026-01-03 12:00: commit c" ] || bad "third run: runs $(sed -n '/^- /p' "$tmp/doc.md")"

# without the marker lines: an error, the document untouched
printf '# no markers\n' >"$tmp/plain.md"
if sh "$src/bench/tables" "$tmp/r3" "$tmp/plain.md" "x" "y" 2>"$tmp/err"; then bad "no markers: exit 0"; fi
[ "$(cat "$tmp/plain.md")" = "# no markers" ] || bad "no markers: the document changed"
grep -q "has no '<!-- make bench: begin/end -->' lines" "$tmp/err" || bad "no markers: $(cat "$tmp/err")"
# the repository's document has the markers
grep -qx '<!-- make bench: begin -->' "$src/docs/PERFORMANCE.md" || bad "docs/PERFORMANCE.md has no make bench table"

[ $fail -eq 0 ] && echo "bench tables ok"
exit $fail
