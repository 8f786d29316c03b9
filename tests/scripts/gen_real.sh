#!/bin/bash
# workload-real: real AArch64 code (etmkit gen, src/sim/realcode.c).
#  - without Debian's AArch64 libraries gen fails with a clear line naming the packages, and
#    leaves nothing behind (always checked, with a real_libdir that does not exist);
#  - symfs holds the libraries it ran, byte for byte, at the paths the recording names, with
#    the build-ids the recording lists; every process maps the program, ld.so and the libraries,
#    and the trace runs through all of them;
#  - the executed code's footprint (distinct instruction bytes, truth.summary) reaches 1 MiB at
#    the benchmark size (64 MiB of trace, ground truth off).
# Skips the rest (77) when libc6-arm64-cross / libgomp1-arm64-cross are not installed.
set -u
[ -x "$ETMKIT_BIN" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
E=$ETMKIT_BIN
fail=0
printf 'real_libdir = %s/none\n' "$tmp" >"$tmp/none.ini"
if "$E" gen -q --scenario workload-real --config "$tmp/none.ini" -o "$tmp/x" 2>"$tmp/err"; then
  echo "FAIL: gen succeeded without the libraries"; fail=1
elif [ -e "$tmp/x" ] || ! head -1 "$tmp/err" | grep -q "install the packages libc6-arm64-cross and libgomp1-arm64-cross"; then
  echo "FAIL: gen without the libraries:"; cat "$tmp/err"; ls "$tmp"; fail=1
else
  echo "ok: missing libraries: $(head -1 "$tmp/err")"
fi
L=/usr/aarch64-linux-gnu/lib
for f in ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libresolv.so.2 libgomp.so.1; do
  [ -f "$L/$f" ] || { echo "SKIP: $L/$f is missing (apt-get install libc6-arm64-cross libgomp1-arm64-cross)"; [ $fail = 0 ] && exit 77; exit 1; }
done
"$E" gen -q --scenario workload-real --seed 1 -o "$tmp/g" || { echo "FAIL: gen workload-real"; exit 1; }
"$E" dump "$tmp/g/perf.data" >"$tmp/dump" 2>&1
while read -r f path; do
  if ! cmp -s "$L/$f" "$tmp/g/symfs$path"; then
    echo "FAIL: symfs$path is not $L/$f"; fail=1; continue
  fi
  id=$(readelf -n "$L/$f" | awk '/Build ID/ {print $3}')
  grep -q "build-id $id pid -1 $path\$" "$tmp/dump" || { echo "FAIL: the recording lists no build-id $id for $path"; fail=1; }
  n=$(grep -c "MMAP2 .*r-xp $path " "$tmp/dump")
  [ "$n" = 3 ] || { echo "FAIL: $n MMAP2 records of $path, not one per process"; fail=1; }
done <<'LIST'
ld-linux-aarch64.so.1 /usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1
libc.so.6 /usr/lib/aarch64-linux-gnu/libc.so.6
libm.so.6 /usr/lib/aarch64-linux-gnu/libm.so.6
libresolv.so.2 /usr/lib/aarch64-linux-gnu/libresolv.so.2
libgomp.so.1 /usr/lib/aarch64-linux-gnu/libgomp.so.1.0.0
LIST
grep -q "MMAP2 .*r-xp /usr/bin/simreal " "$tmp/dump" || { echo "FAIL: no MMAP2 of /usr/bin/simreal"; fail=1; }
"$E" script -q --symfs "$tmp/g/symfs" --itrace=b -F ip,dso "$tmp/g/perf.data" | awk '{print $2}' | sort | uniq -c >"$tmp/dsos"
for d in simreal ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libgomp.so.1.0.0; do
  grep -q "/$d)" "$tmp/dsos" || { echo "FAIL: no branch sample in $d:"; cat "$tmp/dsos"; fail=1; }
done
[ $fail = 0 ] && echo "ok: symfs and build-ids of the Debian libraries; every image runs"
printf 'truth = off\n' >"$tmp/off.ini"
"$E" gen -q --scenario workload-real --seed 1 --trace-size 64M --config "$tmp/off.ini" -o "$tmp/big" ||
  { echo "FAIL: gen --trace-size 64M"; exit 1; }
fp=$(awk -F'\t' '$1 == "footprint" { sub("bytes=", "", $2); print $2 }' "$tmp/big/truth.summary")
if [ "${fp:-0}" -ge 1048576 ]; then
  echo "ok: footprint at 64 MiB of trace: $fp bytes of distinct code ran"
else
  echo "FAIL: footprint at 64 MiB of trace: ${fp:-none} bytes, under 1 MiB"; fail=1
fi
exit $fail
