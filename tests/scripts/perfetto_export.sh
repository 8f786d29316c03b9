#!/bin/bash
# etmkit export --format=perfetto: the trace decodes with tests/data/perfetto_trace.proto (our
# own text of Perfetto's published field numbers) and tests/scripts/perfetto_check.py finds its
# slices nested, every begin ended, times never going back on a track, and on every `etmkit
# gen` scenario that writes expected-callstacks.txt (seeds 1-2; GEN_SCENARIOS / GEN_SEEDS select
# others) the slices of every thread are the truth's calls. Also: the shared real recording
# perf_etm.data (skipped without ../shared), bad input (script's one-line errors and exit
# statuses), and the output file only appearing when complete.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
command -v protoc >/dev/null || { echo "SKIP: no protoc (Debian package protobuf-compiler)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
proto_dir="$ETMKIT_SRC/tests/data"
tool="${ETMKIT_BUILD:-}/tests/ek_callstacks" # which samples are late (perfetto_check.py)
check="$ETMKIT_SRC/tests/scripts/perfetto_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0 calls=0

decode() { # TRACE TEXT
  protoc --proto_path="$proto_dir" --decode=perfetto.protos.Trace perfetto_trace.proto <"$1" >"$2" 2>"$2.err"
}

# 1. gen recordings against their truth
scen=${GEN_SCENARIOS:-$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')}
seeds=${GEN_SEEDS:-1 2}
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && [ -z "${GEN_SEEDS:-}" ] && seeds=1
for sc in $scen; do
  [ "$sc" = workload-real ] && [ -z "${GEN_SCENARIOS:-}" ] && continue # big; stacks_vs_gen.sh has it
  for seed in $seeds; do
    out="$tmp/$sc-$seed"
    if ! "$ETMKIT_BIN" gen -q --scenario "$sc" --seed "$seed" -o "$out" >"$out.log" 2>&1; then
      grep -q "libc6-arm64-cross" "$out.log" && continue
      echo "FAIL $sc seed $seed: etmkit gen failed"; head -3 "$out.log"; fail=1; continue
    fi
    for data in "$out"/perf*.data; do
      [ -f "$data" ] || continue
      sfx=$(basename "$data" .data); sfx=${sfx#perf}
      truth="$out/expected-callstacks$sfx.txt"
      [ -f "$truth" ] || continue
      name="$sc seed $seed${sfx:+ ($(basename "$data"))}"
      uopts=()
      [ -f "$out/script-options$sfx.txt" ] && read -r -a uopts <"$out/script-options$sfx.txt"
      if ! "$ETMKIT_BIN" export -q --format=perfetto --symfs "$out/symfs" "${uopts[@]}" \
           -o "$tmp/t.pftrace" "$data" 2>"$tmp/err"; then
        echo "FAIL $name: export failed: $(head -c 300 "$tmp/err")"; fail=1; continue
      fi
      if ! decode "$tmp/t.pftrace" "$tmp/t.txt"; then
        echo "FAIL $name: protoc cannot decode the trace: $(head -c 300 "$tmp/t.txt.err")"; fail=1; continue
      fi
      n=$((n + 1))
      late=()
      if [ -x "$tool" ]; then
        "$tool" "$data" "$out/symfs" "${uopts[@]}" >"$tmp/cs" 2>/dev/null && late=("$tmp/cs")
      fi
      if ! python3 "$check" "$tmp/t.txt" "$truth" "$out/expected-branches$sfx.txt" "${late[@]}" >"$tmp/cmp"; then
        echo "FAIL $name:"; head -10 "$tmp/cmp" | cut -c1-400; fail=1; continue
      fi
      calls=$((calls + $(sed -n 's/.*, \([0-9]*\) calls of the truth/\1/p' "$tmp/cmp")))
    done
  done
  rm -rf "${tmp:?}/$sc-"*
done
[ "$n" -gt 0 ] || { echo "FAIL: no scenario wrote a recording with expected-callstacks.txt"; fail=1; }

# 2. without time stamps: the clock is instructions, and the tracks say so
out="$tmp/pt"
if "$ETMKIT_BIN" gen -q --scenario per-thread --seed 1 -o "$out" >/dev/null 2>&1; then
  "$ETMKIT_BIN" export -q --format=perfetto --symfs "$out/symfs" -o "$tmp/pt.pftrace" "$out/perf.data" &&
    decode "$tmp/pt.pftrace" "$tmp/pt.txt" || { echo "FAIL per-thread: export or decode failed"; fail=1; }
  grep -q 'name: ".*(time = instructions)"' "$tmp/pt.txt" ||
    { echo "FAIL per-thread: no track says its times are instructions"; fail=1; }
  # itrace Z on a recording with time stamps: the same
  "$ETMKIT_BIN" gen -q --scenario basic --seed 1 -o "$tmp/b" >/dev/null 2>&1
  "$ETMKIT_BIN" export -q --format=perfetto --itrace=bZ --symfs "$tmp/b/symfs" -o "$tmp/z.pftrace" "$tmp/b/perf.data" &&
    decode "$tmp/z.pftrace" "$tmp/z.txt" && python3 "$check" "$tmp/z.txt" >/dev/null &&
    grep -q '(time = instructions)' "$tmp/z.txt" || { echo "FAIL basic --itrace=bZ: not an instructions clock"; fail=1; }
  "$ETMKIT_BIN" export -q --format=perfetto --symfs "$tmp/b/symfs" -o "$tmp/b.pftrace" "$tmp/b/perf.data" &&
    decode "$tmp/b.pftrace" "$tmp/b.txt" || { echo "FAIL basic: export or decode failed"; fail=1; }
  grep -q '(time = instructions)' "$tmp/b.txt" && { echo "FAIL basic: time stamps, but the tracks say instructions"; fail=1; }
  # filters as script's: --tid keeps one thread's track
  tid=$(awk 'NR==1{split($1,a,"/"); print a[2]}' "$tmp/b/expected-callstacks.txt")
  "$ETMKIT_BIN" export -q --format=perfetto --tid="$tid" --symfs "$tmp/b/symfs" -o "$tmp/f.pftrace" "$tmp/b/perf.data" &&
    decode "$tmp/f.pftrace" "$tmp/f.txt" || { echo "FAIL basic --tid: export failed"; fail=1; }
  got=$(grep -A2 '^    thread {' "$tmp/f.txt" | sed -n 's/^ *tid: //p' | sort -u | tr '\n' ' ')
  [ "$got" = "$tid " ] || { echo "FAIL basic --tid=$tid: thread tracks of tids '$got'"; fail=1; }
  # the summary on stderr: its counts, each noun in the singular for one ("1 threads" before)
  "$ETMKIT_BIN" export --format=perfetto --tid="$tid" --symfs "$tmp/b/symfs" -o "$tmp/f1.pftrace" \
    "$tmp/b/perf.data" >/dev/null 2>"$tmp/f1.err" || { echo "FAIL basic --tid: export failed"; fail=1; }
  line=$(grep "^etmkit export: $tmp/f1.pftrace: " "$tmp/f1.err")
  echo "$line" | awk -v f="$tmp/f1.pftrace" '
    { sub("^etmkit export: " f ": ", "") }
    function noun(n, w) { return n " " w (n == 1 ? "" : "s") }
    { split($0, c, /[ ,]+/)
      want = noun(c[1], "thread") ", " noun(c[3], "call") ", " noun(c[5], "trace gap") " (perfetto; "
      exit !(c[1] == 1 && index($0, want) == 1) }' ||
    { echo "FAIL basic --tid: the summary line is '$line'"; fail=1; }
else
  echo "FAIL: etmkit gen --scenario per-thread failed (the checks without time stamps did not run)"; fail=1
fi

# 3. the real recording (Linux perf 2019, Juno)
S="$ETMKIT_SRC/../shared/testdata/perf"
[ -n "${ETMKIT_SHARED:-}" ] && S="$ETMKIT_SHARED/testdata/perf"
if [ -f "$S/files/perf_etm.data" ]; then
  if "$ETMKIT_BIN" export -q --format=perfetto --symfs "$S/symfs" -o "$tmp/r.pftrace" "$S/files/perf_etm.data" 2>"$tmp/err" &&
     decode "$tmp/r.pftrace" "$tmp/r.txt" && python3 "$check" "$tmp/r.txt" >"$tmp/cmp"; then
    grep -q TYPE_SLICE_BEGIN "$tmp/r.txt" || { echo "FAIL perf_etm.data: no slice"; fail=1; }
  else
    echo "FAIL perf_etm.data: $(head -c 300 "$tmp/err" "$tmp/cmp" 2>/dev/null)"; fail=1
  fi
else
  echo "skipped: perf_etm.data (no ../shared/testdata/perf: the shared test data)"
fi

# 4. bad input: script's messages and exit statuses; no output file left behind
printf 'not a perf.data file at all' >"$tmp/junk.data"
: >"$tmp/empty.data"
for f in "$tmp/junk.data" "$tmp/empty.data" "$tmp/missing.data"; do
  "$ETMKIT_BIN" script "$f" >/dev/null 2>"$tmp/e1"; r1=$?
  "$ETMKIT_BIN" export --format=perfetto -o "$tmp/bad.pftrace" "$f" >/dev/null 2>"$tmp/e2"; r2=$?
  sed -i 's/^etmkit: export:/etmkit: script:/; s/^etmkit export:/etmkit script:/' "$tmp/e2"
  [ "$r1" = "$r2" ] && cmp -s "$tmp/e1" "$tmp/e2" ||
    { echo "FAIL $(basename "$f"): export exits $r2 ($(head -1 "$tmp/e2")), script $r1 ($(head -1 "$tmp/e1"))"; fail=1; }
  ls "$tmp" | grep -q '^bad.pftrace' && { echo "FAIL $(basename "$f"): an output file was left"; fail=1; }
done
"$ETMKIT_BIN" export --format=perfetto --itrace=i100 -o "$tmp/x" "$tmp/b/perf.data" >/dev/null 2>"$tmp/e"; r=$?
[ "$r" = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || { echo "FAIL --itrace=i100: exit $r, $(cat "$tmp/e")"; fail=1; }
"$ETMKIT_BIN" export --format=perfetto --pid=notanumber "$tmp/b/perf.data" >/dev/null 2>"$tmp/e"; r=$?
"$ETMKIT_BIN" script --pid=notanumber "$tmp/b/perf.data" >/dev/null 2>"$tmp/e1"; r1=$?
[ "$r" = "$r1" ] || { echo "FAIL --pid=notanumber: export exits $r, script $r1"; fail=1; }

[ "$fail" = 0 ] && echo "ok: $n recordings (seeds $seeds): slices nest, end, keep time order; $calls calls of the truth are the slices"
exit $fail
