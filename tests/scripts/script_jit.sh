#!/bin/bash
# JIT code (etmkit gen --scenario jit-reuse): a JIT compiles functions into an anonymous code
# cache, moves some, collects the cache and puts other code at the same addresses; it writes
# jit-PID.dump (maps it, so the recording names it) and perf-PID.map.
#  - etmkit script reads the code from the jitdump by time and equals the ground truth
#    exactly, which names every JIT function (jitted-PID-N.so, as perf inject --jit names them);
#  - the same with the jitdump given by --jitdump from elsewhere (byte-identical output);
#  - without the jitdump, etmkit doctor says which file the recording names, where it looked
#    and what to supply, and that perf-PID.map only names functions;
#  - a recording not made with perf record -k 1: the jitdump's times cannot be used (doctor);
#  - with perf installed: after `perf inject --jit` (its jitted-PID-N.so files), etmkit prints
#    exactly what it prints from the jitdump.
set -u
[ -x "$ETMKIT_BIN" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fold() { tr -s ' \t' ' ' | sed 's/^ //; s/ $//'; }
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
E=$ETMKIT_BIN
fail=0
jd="$tmp/jitdir"
printf 'jit_dir = %s\n' "$jd" >"$tmp/c.ini"
"$E" gen -q --scenario jit-reuse --seed 1 --config "$tmp/c.ini" -o "$tmp/g" || { echo "FAIL: gen"; exit 1; }
dump="$tmp/g/symfs$jd/jit-1000.dump"
[ -f "$dump" ] && [ -f "$tmp/g/symfs/tmp/perf-1000.map" ] || { echo "FAIL: gen wrote no jitdump / perf map"; exit 1; }

# 1. the ground truth names JIT code, and other code at the same address later
fold <"$tmp/g/expected-branches.txt" >"$tmp/truth"
njit=$(grep -c "jitted-1000-" "$tmp/truth")
names=$(grep -o ' ffff9c000000 [a-z_]*+0x0' "$tmp/truth" | sort -u | wc -l)
[ "$njit" -gt 1000 ] && [ "$names" -ge 2 ] ||
  { echo "FAIL: the truth has $njit JIT lines and $names functions at the cache start"; fail=1; }
"$E" script -q --symfs "$tmp/g/symfs" --itrace=b -F $F "$tmp/g/perf.data" | fold >"$tmp/ours"
if ! cmp -s "$tmp/truth" "$tmp/ours"; then
  echo "FAIL: etmkit script differs from the truth:"; diff "$tmp/truth" "$tmp/ours" | head -5; fail=1
else
  echo "ok: JIT code decoded from the jitdump: $(wc -l <"$tmp/ours") lines equal the truth; $njit JIT lines, $names functions at 0xffff9c000000"
fi
"$E" script -q --symfs "$tmp/g/symfs" --itrace=b -F $F "$tmp/g/perf.data" >"$tmp/ref"

# 2. the jitdump from elsewhere
mkdir -p "$tmp/nodump"
cp -r "$tmp/g/symfs" "$tmp/nodump/"
rm "$tmp/nodump/symfs$jd/jit-1000.dump"
cp "$dump" "$tmp/elsewhere.dump"
"$E" script -q --symfs "$tmp/nodump/symfs" --jitdump "$tmp/elsewhere.dump" --itrace=b -F $F "$tmp/g/perf.data" >"$tmp/j"
cmp -s "$tmp/j" "$tmp/ref" && echo "ok: --jitdump FILE gives the same output" ||
  { echo "FAIL: --jitdump FILE changes the output"; fail=1; }

# 3. no jitdump: the doctor explains
"$E" doctor --symfs "$tmp/nodump/symfs" "$tmp/g/perf.data" >"$tmp/doc" 2>&1
for want in "JIT code? anonymous executable memory (//anon) of pid 1000" \
            "its jitdump $jd/jit-1000.dump (MMAP2 record" \
            "was not found (looked for $tmp/nodump/symfs$jd/jit-1000.dump, $jd/jit-1000.dump)" \
            "remedy: copy the jit-1000.dump the JIT wrote on the traced system to <DIR>$jd/jit-1000.dump and pass --symfs DIR, or give it with --jitdump FILE" \
            "note: $tmp/nodump/symfs/tmp/perf-1000.map names the JIT's functions but holds no code"; do
  grep -qF "$want" "$tmp/doc" || { echo "FAIL: doctor without the jitdump lacks: $want"; cat "$tmp/doc"; fail=1; }
done
"$E" doctor --symfs "$tmp/g/symfs" "$tmp/g/perf.data" 2>&1 | grep -q "All trace was decoded." ||
  { echo "FAIL: doctor with the jitdump reports a problem"; fail=1; }
[ $fail = 0 ] && echo "ok: doctor names the missing jitdump, where it looked and what to supply"

# 4. not recorded with -k 1: the jitdump's times are not comparable
printf 'jit_dir = %s\nclock_monotonic = 0\n' "$jd" >"$tmp/k.ini"
"$E" gen -q --scenario jit-reuse --seed 1 --config "$tmp/k.ini" -o "$tmp/k" || { echo "FAIL: gen"; exit 1; }
"$E" doctor --symfs "$tmp/k/symfs" "$tmp/k/perf.data" >"$tmp/kdoc" 2>&1
grep -qF "the recording was not made with perf record -k 1" "$tmp/kdoc" &&
  grep -qF "remedy: record with perf record -k 1" "$tmp/kdoc" &&
  echo "ok: a recording without -k 1 is explained" ||
  { echo "FAIL: doctor on a recording without -k 1:"; cat "$tmp/kdoc"; fail=1; }

# 5. perf inject --jit: the same samples from its jitted-PID-N.so files
if command -v perf >/dev/null 2>&1 && perf version >/dev/null 2>&1; then
  mkdir -p "$jd"
  cp "$dump" "$jd/"
  if HOME="$tmp" perf inject --jit -i "$tmp/g/perf.data" -o "$tmp/inj.data" >"$tmp/inj.log" 2>&1 &&
     ls "$jd"/jitted-1000-*.so >/dev/null 2>&1; then
    cp "$jd"/jitted-1000-*.so "$tmp/g/symfs$jd/"
    "$E" script -q --symfs "$tmp/g/symfs" --itrace=b -F $F "$tmp/inj.data" >"$tmp/inj"
    cmp -s "$tmp/inj" "$tmp/ref" && echo "ok: perf inject --jit: $(ls "$jd"/jitted-1000-*.so | wc -l) jitted files, the same $(wc -l <"$tmp/ref") lines" ||
      { echo "FAIL: etmkit on the perf inject --jit output differs:"; diff "$tmp/ref" "$tmp/inj" | head -6; fail=1; }
    # perf 6.1 reads reused addresses with the code put there last (docs/SCRIPT.md, "JIT code")
    perf script -i "$tmp/inj.data" --symfs "$tmp/g/symfs" --itrace=b -F $F 2>/dev/null >"$tmp/pinj"
    echo "   perf 6.1 on it: $(diff "$tmp/pinj" "$tmp/g/expected-branches.txt" | grep -c '^<') of $(wc -l <"$tmp/pinj") lines differ from the truth"
  else
    echo "FAIL: perf inject --jit failed:"; tail -3 "$tmp/inj.log"; fail=1
  fi
else
  echo "skipped: perf inject (perf is not installed)"
fi
exit $fail
