#!/bin/sh
# Damaged-input sweep of the whole 'etmkit script' pipeline: perf.data files truncated,
# bit-flipped and with size/offset fields set to 0, the file size and near 2^64 (see
# tests/sweep/sweep.py); no crash, no hang, short messages, unchanged exit status while
# samples come out. SWEEP_SCALE=N runs N times as many mutations.
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
exec python3 "$ETMKIT_SRC/tests/sweep/sweep.py" script
