#!/bin/sh
# Two shortcuts of the decoder threads (src/session/qdecode.c) must never change a byte:
#  - the line cache: the text of a sample line is reused for an identical later sample (same
#    kind, flags, pid, tid, cpu, ip, addr) when the maps that named its symbols are the same
#    for the later sample's time (off: ETMKIT_NO_LINE_CACHE=1);
#  - direct processing: raw trace (one trace ID) is turned into samples as it is decoded,
#    not through perf's per-trace-ID packet queue (off: ETMKIT_NO_DIRECT=1).
# 'etmkit script' with both on is compared with each turned off, on every gen scenario
# (libraries unloaded and reloaded at one address, time stamps, several CPUs, per-CPU TRBE
# and shared ETR sinks) and on the real recordings in ../shared, with field sets that allow
# the cache.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0; n=0
F1=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
F2=ip,sym,dso,addr,event
ITRACE="b i100i"
scen=$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')
# under the sanitizers (slow) one field set, branches only, and the scenarios named above
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { F2=; ITRACE=b
    scen="dlopen-reuse time-kernel-clock shared-sink-multi-cpu per-cpu-trbe workload"; }
cmp_runs() { # name symfs file
    for F in $F1 $F2; do
        for it in $ITRACE; do
            "$ETMKIT_BIN" script -q --symfs "$2" --itrace=$it -F $F "$3" >"$T/a" 2>/dev/null
            for off in ETMKIT_NO_LINE_CACHE ETMKIT_NO_DIRECT; do
                env $off=1 "$ETMKIT_BIN" script -q --symfs "$2" --itrace=$it -F $F "$3" >"$T/b" 2>/dev/null
                n=$((n + 1))
                if ! cmp -s "$T/a" "$T/b"; then
                    echo "FAIL: $1 --itrace=$it -F $F: the output differs with $off=1"
                    diff "$T/b" "$T/a" | head -6
                    fail=1
                fi
            done
        done
    done
}
for sc in $scen; do
    out="$T/$sc"
    if ! "$ETMKIT_BIN" gen --scenario "$sc" --seed 3 -o "$out" >/dev/null 2>&1; then
        # a scenario named here must exist
        [ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "FAIL: etmkit gen --scenario $sc failed"; fail=1; }
        continue
    fi
    for data in "$out"/perf*.data; do
        [ -f "$data" ] && cmp_runs "$sc $(basename "$data")" "$out/symfs" "$data"
    done
    rm -rf "$out"
done
S="${ETMKIT_SHARED:-}/testdata/perf"
if [ -d "$S/files" ]; then
    for f in "$S"/files/*.data*; do
        [ -f "$f" ] && cmp_runs "$(basename "$f")" "$S/symfs" "$f"
    done
else
    echo "note: ../shared is absent: real recordings not compared"
fi
[ $n -gt 0 ] || { echo "SKIP: no input"; exit 77; }
echo "$n runs compared"
exit $fail
