#!/bin/sh
# Peak memory decoding does not grow with the recording (issue 30 item 4): `etmkit script
# --itrace=i10000000` (decoding, almost no output) on `etmkit gen --scenario workload` of 16 MiB
# and of 64 MiB of trace (4 CPUs, time stamps, 1 MiB AUX buffers); the larger may take at most
# 1.25x the smaller's peak RSS. Before the fixes it took 2.2x (11.5 and 24.8 MB): every epoch
# (time stamp) of a chunk with little output was kept until 256 KiB of text came, and the file
# pages around decoded blocks stayed resident. Prints the figures (KiB).
# Normal build only (ASan changes memory use). bench/memory.sh measures 64 MiB against 1 GiB.
set -u
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "SKIP: memory is measured in the normal build"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time is needed (apt-get install time)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for m in 16 64; do
    "$ETMKIT_BIN" gen -q --scenario workload --trace-size ${m}M -o "$T/w$m" || exit 1
done
rss() { # recording -> peak KiB
    /usr/bin/time -f %M -o "$T/rss" "$ETMKIT_BIN" script -i "$1/perf.data" --symfs "$1/symfs" \
        --kallsyms "$1/kallsyms" --itrace=i10000000 >/dev/null 2>"$T/err"
    rc=$?
    [ $rc -lt 128 ] || { echo "CRASH ($rc) on $1" >&2; head -5 "$T/err" >&2; echo 999999999; return; }
    tail -1 "$T/rss"
}
# residency moves a little run to run: the small figure is the larger of two runs, the large
# one the smaller of two (growth with the recording shows in every run)
a=$(rss "$T/w16"); b=$(rss "$T/w16"); small=$(( a > b ? a : b ))
a=$(rss "$T/w64"); b=$(rss "$T/w64"); large=$(( a < b ? a : b ))
limit=$(( small * 5 / 4 ))
printf '16 MiB of trace: %s KiB\n64 MiB of trace: %s KiB (limit %s KiB)\n' "$small" "$large" "$limit"
if [ "$large" -gt "$limit" ]; then
    echo "FAIL: peak memory grows with the recording"
    exit 1
fi
echo "ok"
