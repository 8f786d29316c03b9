#!/bin/sh
# bench/script.sh on real code: etmkit gen --scenario workload-real (Debian's AArch64 libc, libm,
# libresolv and libgomp; skipped with the reason when libc6-arm64-cross / libgomp1-arm64-cross
# are not installed).
here=$(cd "$(dirname "$0")" && pwd)
BENCH_SCENARIO=workload-real exec sh "$here/script.sh" "$@"
