#!/bin/sh
# The decoder threads reuse the text of a sample line for an identical later sample (same
# kind, flags, pid, tid, cpu, ip, addr) when the maps that named its symbols are the same for
# the later sample's time (src/session/qdecode.c, on_sample). This checks that the reuse never
# changes a byte: 'etmkit script' with and without it (ETMKIT_NO_LINE_CACHE=1) on every gen
# scenario (libraries unloaded and reloaded at one address, time stamps, several CPUs) and on
# the real recordings in ../shared, with field sets that allow it.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0; n=0
F1=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
F2=ip,sym,dso,addr,event
ITRACE="b i100i"
# under the sanitizers (slow) one field set and branches only
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { F2=; ITRACE=b; }
cmp_runs() { # name symfs file
    for F in $F1 $F2; do
        for it in $ITRACE; do
            "$ETMKIT_BIN" script -q --symfs "$2" --itrace=$it -F $F "$3" >"$T/a" 2>/dev/null
            ETMKIT_NO_LINE_CACHE=1 "$ETMKIT_BIN" script -q --symfs "$2" --itrace=$it -F $F "$3" >"$T/b" 2>/dev/null
            n=$((n + 1))
            if ! cmp -s "$T/a" "$T/b"; then
                echo "FAIL: $1 --itrace=$it -F $F: reused lines differ"
                diff "$T/b" "$T/a" | head -6
                fail=1
            fi
        done
    done
}
for sc in $("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}'); do
    out="$T/$sc"
    "$ETMKIT_BIN" gen --scenario "$sc" --seed 3 -o "$out" >/dev/null 2>&1 || continue
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
