#!/bin/sh
# The checked-in classifier vectors (tests/data/isa/*.vec) are exactly what gen-vectors.sh makes
# from the annotated assembly with the installed llvm-mc: regenerate them in a temporary folder
# and compare. Skips when llvm-mc (or python3) is missing.
set -eu
mc=${LLVM_MC:-llvm-mc}
command -v "$mc" >/dev/null 2>&1 || { echo "SKIP: $mc not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
dir="$ETMKIT_SRC/tests/data/isa"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dir/gen-vectors.sh" "$tmp" >/dev/null
n=0
for v in "$dir"/*.vec; do
  n=$((n + 1))
  if ! diff -u "$v" "$tmp/$(basename "$v")"; then
    echo "FAIL: $(basename "$v") differs from what gen-vectors.sh produces now"
    exit 1
  fi
done
[ "$(ls "$tmp"/*.vec | wc -l)" -eq "$n" ] || { echo "FAIL: a .s file has no checked-in .vec"; exit 1; }
echo "isa vectors: $n files regenerate identically"
