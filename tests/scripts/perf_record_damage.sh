#!/bin/bash
# One damaged record header in a recording with 91 AUX records and 91 AUXTRACE buffers on one
# CPU (`etmkit gen --scenario multi-aux-per-auxtrace`, read_period_ns = 20000): the damage is
# reported once, in one line at the damaged record's offset, the reader resynchronises on the
# next record and every intact buffer is decoded: `etmkit script` prints exactly what it prints
# for the intact recording, less the samples the damage took.
#   1. ITRACE_START's size 0x30 -> 0x31: nothing lost (all samples; the reader used to lose
#      every record after it: 0 samples, exit 1)
#   2. the 11th AUX record's size 0x40 -> 0x41: only its slice is lost (the same output as
#      with that AUX record's aux_size set to 0; the reader used to lose 80 of 91 buffers)
#   3. the 11th AUXTRACE record's payload size -> 2^40: the payload ends where the records after
#      it begin, nothing lost (the buffer used to keep its declared size and take the AUX
#      records of the 80 buffers after it: record headers decoded as trace, 23236 of 63739
#      samples)
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf 'read_period_ns = 20000\n' >"$tmp/g.cfg"
"$ETMKIT_BIN" gen -q --scenario multi-aux-per-auxtrace --config "$tmp/g.cfg" -o "$tmp/g" ||
  { echo "FAIL: etmkit gen multi-aux-per-auxtrace"; exit 1; }

# the damaged copies; prints "name offset record" facts as shell assignments
python3 - "$tmp" >"$tmp/facts" <<'PY' || { echo "FAIL: making the damaged files"; exit 1; }
import struct, sys
d = sys.argv[1]
b = open(d + '/g/perf.data', 'rb').read()
data_off, data_size = struct.unpack_from('<QQ', b, 40)
p, end, recs = data_off, data_off + data_size, []
while p + 8 <= end:
    t, m, s = struct.unpack_from('<IHH', b, p)
    pay = struct.unpack_from('<Q', b, p + 8)[0] if t == 71 else 0
    recs.append((p, t, s, pay))
    p += s + pay
def put(name, off, fmt, v):
    x = bytearray(b)
    struct.pack_into(fmt, x, off, v)
    open('%s/%s.data' % (d, name), 'wb').write(x)
itrace = [i for i, r in enumerate(recs) if r[1] == 12][0]
aux = [i for i, r in enumerate(recs) if r[1] == 11][10]
buf = aux + 1                       # its AUXTRACE record follows it
assert recs[buf][1] == 71
o, t, s, pay = recs[itrace]
put('odd-itrace', o + 6, '<H', s | 1)
print('itrace_rec=%d itrace_off=0x%x itrace_size=%d' % (itrace, o, s | 1))
o, t, s, pay = recs[aux]
put('odd-aux', o + 6, '<H', s | 1)
put('ref-aux', o + 16, '<Q', 0)     # the same AUX record without data
aux_off, aux_size = struct.unpack_from('<QQ', b, o + 8)
print('aux_rec=%d aux_off=0x%x aux_size=%d' % (aux, o, s | 1))
print('buf_off=0x%x buf_aux=0x%x buf_size=0x%x' % (recs[buf][0], aux_off, aux_size))
o, t, s, pay = recs[buf]
put('auxtrace-size', o + 8, '<Q', 1 << 40)
print('at_rec=%d at_off=0x%x at_present=%d at_next=0x%x at_kept=%d' % (buf, o, end - (o + 48), o + 48 + pay, pay))
PY
. "$tmp/facts"

F=(script --symfs "$tmp/g/symfs")
"$ETMKIT_BIN" "${F[@]}" "$tmp/g/perf.data" >"$tmp/clean.txt" 2>"$tmp/clean.err" ||
  { echo "FAIL: script on the intact recording"; cat "$tmp/clean.err"; exit 1; }
[ "$(wc -l <"$tmp/clean.txt")" -gt 1000 ] || { echo "FAIL: the intact recording gives too few samples"; exit 1; }

# check NAME EXPECTED-STDOUT-FILE EXPECTED-STDERR
check() {
  local name=$1 f="$tmp/$1.data"
  timeout 120 "$ETMKIT_BIN" "${F[@]}" "$f" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ $rc -eq 0 ] || { echo "FAIL $name: exit status $rc"; fail=1; }
  cmp -s "$tmp/out" "$2" || {
    echo "FAIL $name: $(wc -l <"$tmp/out") samples, expected $(wc -l <"$2") (first difference below)"
    diff "$2" "$tmp/out" | head -4; fail=1; }
  printf '%s\n' "$3" "etmkit: run 'etmkit doctor $f' for the details and remedies" >"$tmp/want.err"
  diff "$tmp/want.err" "$tmp/err" >"$tmp/d" || { echo "FAIL $name: stderr differs:"; cat "$tmp/d"; fail=1; }
}

check odd-itrace "$tmp/clean.txt" \
  "etmkit: $tmp/odd-itrace.data: record $itrace_rec: offset $itrace_off: warning: ITRACE_START record (type 12) with size $itrace_size, not a multiple of 8 [perf.bad-size]"

"$ETMKIT_BIN" "${F[@]}" "$tmp/ref-aux.data" >"$tmp/ref.txt" 2>/dev/null
[ "$(wc -l <"$tmp/ref.txt")" -lt "$(wc -l <"$tmp/clean.txt")" ] ||
  { echo "FAIL: the reference without the 11th slice has as many samples as the intact recording"; fail=1; }
# the damaged record takes no record number: its buffer's AUXTRACE record is number aux_rec
check odd-aux "$tmp/ref.txt" \
  "etmkit: $tmp/odd-aux.data: record $aux_rec: offset $aux_off: warning: AUX record (type 11) with size $aux_size, not a multiple of 8 [perf.bad-size]
etmkit: $tmp/odd-aux.data: record $aux_rec: offset $buf_off: warning: AUXTRACE buffer (cpu 0, tid 1000, offset $buf_aux, size $buf_size) is covered by no AUX record [perf.buffer-unused]"

check auxtrace-size "$tmp/clean.txt" \
  "etmkit: $tmp/auxtrace-size.data: record $at_rec: offset $at_off: warning: AUXTRACE payload of 1099511627776 bytes reaches past the end of the data ($at_present present), and a record follows at $at_next: the $at_kept bytes up to it are kept as the payload [perf.bad-size]"

[ $fail -eq 0 ] && echo "damaged record headers: reported once, every intact buffer decoded"
exit $fail
