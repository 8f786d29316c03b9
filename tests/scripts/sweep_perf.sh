#!/bin/sh
# Damaged-input sweep: perf inputs truncated, bit-flipped and with size/offset fields set to
# 0, the file size and near 2^64, run through the CLI with a time bound; no crash, no hang,
# short one-line-per-kind messages, unchanged exit status while valid data is listed.
# Details: tests/sweep/sweep.py. SWEEP_SCALE=N runs N times as many mutations.
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
exec python3 "$ETMKIT_SRC/tests/sweep/sweep.py" perf
