#!/bin/bash
# The fuzz targets' replays leave nothing behind in TMPDIR. Their temporary folder
# (etmkit-fuzz-XXXXXX) holds what the script and jitdump targets make once (a symfs folder, a
# gen recording); it was emptied at exit but not removed when it held folders, so every run of
# the suite left folders in /tmp. Each replay here runs with TMPDIR an empty folder of its own,
# which must be empty again afterwards.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for name in script jitdump snapshot; do
    bin="$ETMKIT_BUILD/fuzz/fuzz_replay_$name"
    [ -x "$bin" ] || { echo "FAIL: $bin is not built"; fail=1; continue; }
    input=$(ls -d "$ETMKIT_SRC/fuzz/corpus/$name"/* | head -1)
    mkdir "$tmp/$name"
    TMPDIR="$tmp/$name" "$bin" "$input" >"$tmp/$name.log" 2>&1 ||
        { echo "FAIL: fuzz_replay_$name $input: $(tail -2 "$tmp/$name.log")"; fail=1; }
    left=$(cd "$tmp/$name" && find . -mindepth 1 | head -5)
    [ -z "$left" ] || { echo "FAIL: fuzz_replay_$name left in TMPDIR: $left"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "ok: the fuzz replays (script, jitdump, snapshot) leave TMPDIR as they found it"
exit "$fail"
