#!/bin/sh
# Skips are reported as skips (issue 11 item 2): a cmocka test that skips makes its program
# exit 77, ctest lists it as skipped, and scripts/run-tests counts it in "N passed, N failed,
# N skipped" with its reason, not among the passes.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# 1. A unit program whose one test skips (its shared data is absent) exits 77 with a reason.
set +e
out=$(ETMKIT_SHARED="$t/absent" "$ETMKIT_BUILD/tests/test_perf_real" test_facts 2>&1); rc=$?
set -e
[ "$rc" -eq 77 ] || { echo "a skipped cmocka test exited $rc, expected 77"; echo "$out"; exit 1; }
echo "$out" | grep -q '^SKIP: .*absent' || { echo "no SKIP reason: $out"; exit 1; }
# ... and a name the program does not have is an error, not an empty pass.
set +e
"$ETMKIT_BUILD/tests/test_core" no_such_test >/dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "an unknown test name exited $rc, expected 1"; exit 1; }

# 2. run-tests over a ctest folder with one pass, one failure and one skip.
mkdir "$t/b"
cat > "$t/b/CTestTestfile.cmake" <<'EOT'
add_test(ok "sh" "-c" "exit 0")
add_test(bad "sh" "-c" "exit 3")
add_test(skipping "sh" "-c" "echo 'SKIP: nothing to read here'; exit 77")
set_tests_properties(skipping PROPERTIES SKIP_RETURN_CODE 77)
EOT
set +e
summary=$(JOBS=1 "$ETMKIT_SRC/scripts/run-tests" "$t/b" 2>&1); rc=$?
set -e
[ "$rc" -ne 0 ] || { echo "run-tests exited 0 with a failing test"; exit 1; }
last=$(printf '%s\n' "$summary" | tail -n 1)
[ "$last" = "1 passed, 1 failed, 1 skipped" ] || {
    echo "summary line: '$last', expected '1 passed, 1 failed, 1 skipped'"; exit 1; }
printf '%s\n' "$summary" | grep -q '  skipping: SKIP: nothing to read here' || {
    echo "the skip's reason is not listed:"; printf '%s\n' "$summary"; exit 1; }
echo "skips are skips ok"
