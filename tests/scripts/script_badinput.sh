#!/bin/bash
# etmkit script and doctor on damaged recordings: truncated at many points, record sizes and
# offsets pointing outside the file, an AUX record pointing outside its buffer, unknown record
# types, an AUXTRACE_INFO of another PMU. Each run must end (no crash, no hang), report the
# damage in one line with its byte offset, and still decode what is intact.
# The recording comes from `etmkit gen --scenario basic`, so ../shared is not needed.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ETMKIT_BIN" gen --scenario basic -o "$tmp/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen basic failed"; exit 77; }
src="$tmp/g/perf.data"
size=$(stat -c %s "$src")
F=(--itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr)
fail=0
to=${ETMKIT_SANITIZE:+120}
# record offsets from etmkit dump: "0x... #N TYPE [..]"
"$ETMKIT_BIN" dump "$src" 2>/dev/null | awk '/^0x[0-9a-f]+ #[0-9]+ /{print $1, $3}' >"$tmp/recs"
off_of() { awk -v t="$1" '$2 == t { print $1; exit }' "$tmp/recs"; }
full=$("$ETMKIT_BIN" script -q --symfs "$tmp/g/symfs" "${F[@]}" "$src" | wc -l)
[ "$full" -gt 100 ] || { echo "FAIL: the intact recording gives only $full samples"; exit 1; }

run() { # name file [must-match-regex]
  local name=$1 f=$2 want=${3:-}
  timeout "${to:-60}" "$ETMKIT_BIN" script --symfs "$tmp/g/symfs" "${F[@]}" "$f" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -ge 124 ]; then
    echo "FAIL $name: exit status $rc (crash or hang)"; head -5 "$tmp/err"; fail=1; return
  fi
  if [ -n "$want" ] && ! grep -qE "$want" "$tmp/err"; then
    echo "FAIL $name: no diagnostic matching /$want/:"; head -5 "$tmp/err"; fail=1; return
  fi
  timeout "${to:-60}" "$ETMKIT_BIN" doctor --symfs "$tmp/g/symfs" "$f" >/dev/null 2>&1
  rc=$?
  [ $rc -lt 124 ] || { echo "FAIL $name: doctor exit status $rc"; fail=1; }
}
patch() { # file offset hex-bytes
  printf "$(echo "$3" | sed 's/../\\x&/g')" | dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none
}

# 1. truncated at 60 points spread over the file, and around every record boundary
pts=$(seq 0 $((size / 60)) "$size"; while read -r o t; do echo $((o)) $((o + 3)) $((o + 9)); done <"$tmp/recs")
for cut in $pts; do
  head -c "$cut" "$src" >"$tmp/t.data"
  run "truncated at $cut" "$tmp/t.data"
done
# a cut inside the trace keeps the trace before it
aux=$(off_of AUXTRACE)
head -c $((aux + 48 + 20000)) "$src" >"$tmp/t.data"
run "truncated inside the trace" "$tmp/t.data" 'offset 0x[0-9a-f]+'
got=$(wc -l <"$tmp/out")
[ "$got" -gt 100 ] || { echo "FAIL: only $got samples from the 20000 trace bytes before the cut"; fail=1; }

# 2. record sizes: 0, odd, huge, past the end
for t in MMAP2 COMM ITRACE_START AUX; do
  o=$(off_of $t); [ -n "$o" ] || continue
  for sz in 0000 0700 f8ff; do
    cp "$src" "$tmp/t.data"; patch "$tmp/t.data" $((o + 6)) $sz
    run "$t size 0x$sz" "$tmp/t.data" 'offset 0x[0-9a-f]+'
  done
done
# 3. the AUXTRACE record's payload size and the AUX record's offset/size pointing outside
o=$(off_of AUXTRACE)
cp "$src" "$tmp/t.data"; patch "$tmp/t.data" $((o + 8)) ffffffffffff0000
run "AUXTRACE size past the end" "$tmp/t.data" 'offset 0x[0-9a-f]+'
o=$(off_of AUX)
cp "$src" "$tmp/t.data"; patch "$tmp/t.data" $((o + 8)) 0000000001000000
run "AUX offset outside its buffer" "$tmp/t.data" 'offset 0x[0-9a-f]+'
cp "$src" "$tmp/t.data"; patch "$tmp/t.data" $((o + 16)) ffffffffffffff7f
run "AUX size outside its buffer" "$tmp/t.data" 'offset 0x[0-9a-f]+'
# 4. unknown record types (a kernel-range number and a user-range one): skipped, the rest decodes
for ty in 3f00 ff7f; do
  o=$(off_of COMM)
  cp "$src" "$tmp/t.data"; patch "$tmp/t.data" "$o" ${ty}0000
  run "unknown record type 0x$ty" "$tmp/t.data"
  got=$(wc -l <"$tmp/out")
  [ "$got" -eq "$full" ] || { echo "FAIL unknown type 0x$ty: $got samples, intact file gives $full"; fail=1; }
done
# 5. an AUXTRACE_INFO of another PMU (type 4, not cs_etm): said so, nothing decoded, no crash
o=$(off_of AUXTRACE_INFO)
cp "$src" "$tmp/t.data"; patch "$tmp/t.data" $((o + 8)) 04000000
run "AUXTRACE_INFO of another PMU" "$tmp/t.data" 'offset 0x[0-9a-f]+'
# 6. garbage trace bytes in the middle of the AUX data: decoding resumes after them
o=$(off_of AUXTRACE)
cp "$src" "$tmp/t.data"
head -c 4096 /dev/urandom >"$tmp/junk"
dd if="$tmp/junk" of="$tmp/t.data" bs=1 seek=$((o + 48 + 16000)) conv=notrunc status=none
run "random bytes inside the trace" "$tmp/t.data"
got=$(wc -l <"$tmp/out")
[ "$got" -gt $((full / 2)) ] || { echo "FAIL: only $got of $full samples around 4 KiB of damaged trace"; fail=1; }
[ $fail -eq 0 ] && echo "bad input: all runs ended with one-line diagnostics"
exit $fail
