#!/bin/bash
# etmkit-fleet (issue 31): profiles of many recordings on Dask. 24 gen recordings (6 scenarios
# x seeds 1-4; simloop in all, libsima.so in two scenarios, the kernel in one), each with its
# own symfs named in a --from list. The reference is the CLI contract run by hand: one `etmkit
# export --format=branch-list` a recording and one `etmkit merge` of all (and `merge
# --format=autofdo|bolt` of the same for the per-binary files). The fleet's result must be those
# bytes with --local 1, --local 2, against a real dask-scheduler with two dask-worker processes
# on 127.0.0.1, and when one of those workers is killed (SIGKILL) while it runs a task. Bad
# recordings are left out and listed in skipped.tsv with export's one-line reason; --strict
# writes nothing and exits 1; an interrupted job leaves the previous result as it was. Snapshot
# folders are recordings too.
set -u
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "SKIP: etmkit-fleet is checked in the normal build (export and merge run under ASan in their own tests)"; exit 77; }
py=/usr/bin/python3
"$py" -c 'import distributed' 2>/dev/null || { echo "SKIP: Dask's distributed is not installed (apt-get install python3-distributed)"; exit 77; }
for t in dask-scheduler dask-worker; do
    command -v $t >/dev/null || { echo "SKIP: $t not installed (python3-distributed)"; exit 77; }
done
bin=${ETMKIT_BIN:?}
fleet="$ETMKIT_BUILD/etmkit-fleet" # as the build writes it (version filled in)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
# what the fleet, Dask and their workers write for a while (the export folder of the worker
# killed below, Dask's worker space) stays in this test's folder
export TMPDIR="$tmp"
cd "$tmp" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# ---- 24 recordings and the reference, by hand
mkdir recs ref
n=0
for s in basic dlopen-reuse two-processes mmap2-after-aux kernel-and-user per-cpu-trbe; do
    for k in 1 2 3 4; do
        "$bin" gen --scenario $s --seed $k -o "recs/$s-$k" >/dev/null 2>&1 || bad "gen $s $k"
        echo "$s-$k/perf.data --symfs $s-$k/symfs" >>recs/list
        "$bin" export --format=branch-list -q --symfs="recs/$s-$k/symfs" -o "ref/$n.bl" \
            "recs/$s-$k/perf.data" || bad "export $s $k"
        n=$((n + 1))
    done
done
[ "$n" -eq 24 ] || bad "$n recordings"
"$bin" merge -q -o ref/fleet.bl ref/[0-9]*.bl || bad "reference merge"
"$bin" merge -q --format=autofdo -o ref/fleet.afdo ref/[0-9]*.bl || bad "reference autofdo"
nbin=$(grep -c '^binary ' ref/fleet.bl)
[ "$nbin" -ge 3 ] || bad "the reference has $nbin binaries"

# a result folder against the reference: every file, byte for byte
check_result() { # DIR WHAT
    local d=$1 what=$2
    cmp -s ref/fleet.bl "$d/fleet.bl" || { bad "$what: fleet.bl differs from one etmkit merge of all"; return; }
    cmp -s ref/fleet.afdo "$d/fleet.afdo" || bad "$what: fleet.afdo differs from etmkit merge --format=autofdo"
    [ "$(tail -n +2 "$d/binaries.tsv" | wc -l)" -eq "$nbin" ] || bad "$what: binaries.tsv has not $nbin rows"
    tail -n +2 "$d/binaries.tsv" | while IFS=$'\t' read -r bid path afdo bolt; do
        "$bin" merge -q --format=autofdo --build-id="$bid" -o "$tmp/one.afdo" ref/[0-9]*.bl
        cmp -s "$tmp/one.afdo" "$d/$afdo" || echo "FAIL: $what: $afdo differs from merge --format=autofdo --build-id=$bid"
        case $path in
        \[*) [ "$bolt" = "- (kernel code: no BOLT profile)" ] || echo "FAIL: $what: $path: bolt '$bolt'" ;;
        *)
            "$bin" merge -q --format=bolt --binary="recs/basic-1/symfs$path" -o "$tmp/one.fdata" ref/[0-9]*.bl 2>/dev/null ||
                "$bin" merge -q --format=bolt --binary="recs/dlopen-reuse-1/symfs$path" -o "$tmp/one.fdata" ref/[0-9]*.bl 2>/dev/null ||
                "$bin" merge -q --format=bolt --binary="recs/two-processes-1/symfs$path" -o "$tmp/one.fdata" ref/[0-9]*.bl
            cmp -s "$tmp/one.fdata" "$d/$bolt" || echo "FAIL: $what: $bolt differs from merge --format=bolt for $path"
            ;;
        esac
    done | grep FAIL && fail=1
    [ "$(cat "$d/skipped.tsv")" = "recording	reason" ] || bad "$what: skipped.tsv: $(cat "$d/skipped.tsv")"
}

run_fleet() { # OUT [args...]: stdout+stderr in OUT.log
    local out=$1; shift
    "$fleet" --etmkit "$bin" -o "$out" "$@" >"$out.log" 2>&1
}

# ---- local clusters of one and two workers
run_fleet out1 --local 1 --from recs/list || bad "--local 1: $(tail -3 out1.log)"
check_result out1 "--local 1"
grep -qx "etmkit-fleet: 24 recordings (24 merged, 0 skipped), $nbin binaries -> out1" out1.log ||
    bad "--local 1 summary: $(cat out1.log)"
run_fleet out2 --local 2 --fan-in 3 --from recs/list || bad "--local 2: $(tail -3 out2.log)"
check_result out2 "--local 2 --fan-in 3"
# each export on two threads instead of one: the same bytes
run_fleet out2j --local 2 --threads 2 --from recs/list || bad "--threads 2: $(tail -3 out2j.log)"
check_result out2j "--local 2 --threads 2"

# ---- a real scheduler and two workers on 127.0.0.1
dask-scheduler --host 127.0.0.1 --port 0 --no-dashboard --scheduler-file sched.json >sched.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s sched.json ] && break; sleep 0.1; done
addr=$("$py" -c 'import json,sys; print(json.load(open("sched.json"))["address"])' 2>/dev/null)
[ -n "$addr" ] || { cat sched.log; echo "FAIL: dask-scheduler did not start"; exit 1; }
mkdir marks
start_worker() { # NAME
    FLEET_MARK=$1 MARKDIR=$tmp/marks dask-worker "$addr" --nworkers 1 --nthreads 1 --no-nanny \
        --no-dashboard --local-directory "$tmp/w$1" >"worker$1.log" 2>&1 &
    pids+=($!)
    eval "worker_$1=$!"
}
start_worker A
start_worker B
"$py" - "$addr" <<'PY' || bad "the two workers did not join the scheduler"
import sys
from distributed import Client
c = Client(sys.argv[1], timeout="30s")
c.wait_for_workers(2, timeout=60)
c.close()
PY
run_fleet out3 --scheduler "$addr" --from recs/list || bad "--scheduler: $(tail -3 out3.log)"
check_result out3 "--scheduler (2 workers)"

# ---- worker A killed while it runs a task: each export marks its start and then takes a while
cat >slow-etmkit <<EOF
#!/bin/sh
if [ "\$1" = export ] && [ -n "\${FLEET_MARK:-}" ]; then
    touch "\$MARKDIR/\$FLEET_MARK.\$\$"; sleep 0.3
fi
exec "$bin" "\$@"
EOF
chmod +x slow-etmkit
"$fleet" --etmkit "$tmp/slow-etmkit" -o out4 --scheduler "$addr" --from recs/list >out4.log 2>&1 &
fleet_pid=$!
pids+=($fleet_pid)
for _ in $(seq 600); do ls marks | grep -q '^A\.' && break; sleep 0.05; done
if ls marks | grep -q '^A\.'; then
    # shellcheck disable=SC2154
    kill -9 "$worker_A"
else
    bad "worker A never ran a task"
fi
wait "$fleet_pid" || bad "the job with a killed worker failed: $(tail -3 out4.log)"
kill -0 "$worker_A" 2>/dev/null && bad "worker A is still alive"
check_result out4 "worker killed mid-task"
[ "$(ls marks | grep -c '^B\.')" -ge 1 ] || bad "worker B ran no task"

# ---- bad recordings among good ones: left out with export's reason, the rest merged
head -c 300 recs/basic-1/perf.data >trunc.data
echo "not a recording" >notperf.data
cp recs/list badlist
printf '%s\n' "$tmp/trunc.data" "$tmp/notperf.data" "basic-2/perf.data" >>badlist # no symfs
cp badlist recs/badlist
# export's one-line reason: its first line without "etmkit export: FILE: "; where that line
# announces the cause below it, the next line (without "etmkit: ") after ": "
reason() {
    "$bin" export --format=branch-list -q -o /dev/null "$1" 2>&1 >/dev/null | awk -v f="$1" '
        function bare(s) { sub(/^etmkit export: /, "", s); sub(/^etmkit: /, "", s)
                           if (index(s, f ": ") == 1) s = substr(s, length(f) + 3); return s }
        NF && !first { first = bare($0); if (first !~ /\(below: why\)$/) { print first; exit }
                       sub(/ *\(below: why\)$/, "", first); next }
        NF && first { print first ": " bare($0); exit }'
}
{
    printf 'recording\treason\n'
    for f in "$tmp/trunc.data" "$tmp/notperf.data" "$tmp/recs/basic-2/perf.data"; do
        printf '%s\t%s\n' "$f" "$(reason "$f")"
    done
} >want.skipped
run_fleet out5 --local 2 --from recs/badlist || bad "bad inputs: $(tail -3 out5.log)"
cmp -s want.skipped out5/skipped.tsv || { diff want.skipped out5/skipped.tsv; bad "skipped.tsv"; }
grep -q 'perf.not-perf-data' out5/skipped.tsv && grep -q 'files missing or of another build' out5/skipped.tsv ||
    bad "skipped.tsv lacks the causes: $(cat out5/skipped.tsv)"
cmp -s ref/fleet.bl out5/fleet.bl || bad "with bad recordings, fleet.bl differs from the merge of the good ones"
grep -qx "etmkit-fleet: 27 recordings (24 merged, 3 skipped: out5/skipped.tsv), $nbin binaries -> out5" out5.log ||
    bad "summary with skips: $(cat out5.log)"

# --strict: exit 1, nothing written, the previous result untouched
cp -a out1 out1.before
"$fleet" --etmkit "$bin" --local 1 --strict -o out1 --from recs/badlist >strict.log 2>&1; rc=$?
[ $rc -eq 1 ] || bad "--strict with bad recordings: exit $rc"
grep -q "^etmkit-fleet: --strict: 3 of 27 recordings gave no profile; nothing written$" strict.log ||
    bad "--strict message: $(cat strict.log)"
diff -r out1.before out1 >/dev/null || bad "--strict changed the previous result"
# an interrupted job (killed during its map step) leaves the previous result as it was
FLEET_MARK=X MARKDIR=$tmp/marks "$fleet" --etmkit "$tmp/slow-etmkit" --local 1 -o out1 --from recs/list >/dev/null 2>&1 &
victim=$!
pids+=($victim)
for _ in $(seq 600); do ls marks | grep -q '^X\.' && break; sleep 0.05; done
kill -TERM "$victim"
for _ in $(seq 300); do kill -0 "$victim" 2>/dev/null || break; sleep 0.1; done
kill -0 "$victim" 2>/dev/null && bad "etmkit-fleet did not stop on SIGTERM"
wait "$victim"; rc=$?
[ $rc -eq 130 ] || bad "an interrupted job exited $rc, want 130"
diff -r out1.before out1 >/dev/null || bad "an interrupted job changed the previous result"
[ -z "$(ls -A . | grep '^\.out1\.')" ] || bad "an interrupted job left $(ls -A . | grep '^\.out1\.')"

# etmkit runs without the MALLOC_TRIM_THRESHOLD_ Dask's nanny sets for its workers (glibc then
# trims after every free: exports took 25 % longer); a wrapper records what etmkit was given
printf '#!/bin/sh\nenv >"%s/env.$$"\nexec "%s" "$@"\n' "$tmp" "$bin" >wrap.sh
chmod +x wrap.sh
first=$(head -1 recs/list | cut -d' ' -f1)
# (this local run has a temporary folder of its own, which must stay empty: Dask's workers made
# dask-worker-space there and left it)
mkdir tmpw
TMPDIR=$tmp/tmpw "$fleet" --etmkit "$tmp/wrap.sh" --local 1 -o outw \
    --symfs "recs/${first%/perf.data}/symfs" "recs/$first" >outw.log 2>&1 ||
    bad "the wrapped etmkit: $(tail -3 outw.log)"
[ -z "$(ls -A tmpw)" ] || bad "a local run left in its temporary folder: $(ls -A tmpw)"
# one recording, one binary: in the singular
nb1=$(tail -n +2 outw/binaries.tsv | wc -l)
[ "$nb1" -eq 1 ] && w1=binary || w1=binaries
grep -qx "etmkit-fleet: 1 recording (1 merged, 0 skipped), $nb1 $w1 -> outw" outw.log ||
    bad "summary of one recording: $(cat outw.log)"
nenv=$(ls "$tmp" | grep -c '^env\.')
[ "$nenv" -ge 2 ] || bad "the wrapper ran $nenv times (an export and a merge expected)"
if grep -q '^MALLOC_TRIM_THRESHOLD_=' "$tmp"/env.* 2>/dev/null; then
    bad "etmkit ran with Dask's MALLOC_TRIM_THRESHOLD_"
fi
grep -q '^PATH=' "$tmp"/env.* 2>/dev/null || bad "etmkit ran without the worker's environment"

# snapshot folders (a debugger's trace snapshot: snapshot.ini, memory dumps) are recordings too,
# given as paths: the result is the merge of their exports, as for perf.data
mkdir snaps
for k in 1 2; do
    "$bin" gen --scenario snapshot-etr --seed $k -o "snaps/etr-$k" >/dev/null 2>&1 || bad "gen snapshot-etr $k"
    "$bin" export --format=branch-list -q -o "snaps/$k.bl" "snaps/etr-$k/snapshot" || bad "export snapshot $k"
done
"$bin" merge -q -o snaps/ref.bl snaps/1.bl snaps/2.bl || bad "snapshot reference merge"
grep -q '^binary ' snaps/ref.bl || bad "the snapshots' reference names no binary"
run_fleet outs --local 1 snaps/etr-1/snapshot snaps/etr-2/snapshot || bad "snapshot folders: $(tail -3 outs.log)"
cmp -s snaps/ref.bl outs/fleet.bl || bad "snapshot folders: fleet.bl differs from one etmkit merge of their exports"
[ "$(cat outs/skipped.tsv)" = "recording	reason" ] || bad "snapshot folders: skipped.tsv: $(cat outs/skipped.tsv)"

# nothing usable at all: exit 1, nothing written
"$fleet" --etmkit "$bin" --local 1 -o out6 "$tmp/notperf.data" >none.log 2>&1; rc=$?
[ $rc -eq 1 ] && [ ! -e out6 ] && grep -q "no recording gave a profile; nothing written" none.log ||
    bad "no usable recording: exit $rc, $(cat none.log)"
# usage errors
"$fleet" --local 1 recs/list >/dev/null 2>&1; [ $? -eq 2 ] || bad "no -o: not a usage error"
"$fleet" -o x --local 1 --threads 0 recs/list >/dev/null 2>&1; [ $? -eq 2 ] || bad "--threads 0: not a usage error"
"$fleet" -o x --local 1 'recs/nothing-*.data' >/dev/null 2>&1; [ $? -eq 2 ] || bad "a glob matching nothing: not a usage error"
"$fleet" --help | grep -q -- '--scheduler' || bad "--help lacks --scheduler"
[ "$("$fleet" --version)" = "etmkit-fleet $("$bin" --version | sed -n 's/^etmkit //p')" ] ||
    bad "etmkit-fleet --version: $("$fleet" --version)"

[ $fail -eq 0 ] && echo "fleet ok"
exit $fail
