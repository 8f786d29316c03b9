#!/bin/bash
# Trace that was lost for a reason other than missing code (its trace ID has no configuration,
# it has no synchronisation) is a problem like missing code: when no sample came out, script,
# report and export exit 1 and say why on stderr, one line per cause with where it begins
# (etmkit doctor had the causes, but script printed nothing and exited 0, as perf does). Inputs:
# `gen basic` with one field changed each: the CPU's TRCTRACEIDR in AUXTRACE_INFO (its trace
# comes under an ID nothing configures), the AUXTRACE_INFO CPU count 0 (no configuration at
# all), and the AUXTRACE record's header size 48 -> 56 (its payload read 8 bytes late: the
# formatter never finds a frame start). The last two are also named as damage where they are.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
E=$ETMKIT_BIN
"$E" gen -q --scenario basic -o "$T/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen basic failed"; exit 77; }
/usr/bin/python3 - "$T/g/perf.data" "$T" <<'PY' || { echo "FAIL: cannot damage the recording"; exit 1; }
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
out = sys.argv[2]
off, size = struct.unpack_from('<QQ', data, 0x28)  # the data section
p, recs = off, {}
while p + 8 <= off + size:
    typ, misc, sz = struct.unpack_from('<IHH', data, p)
    recs.setdefault(typ, p)
    if typ == 71:  # AUXTRACE: its payload follows
        p += sz + struct.unpack_from('<Q', data, p + 8)[0]
    else:
        p += sz
info, aux = recs[70], recs[71]
# AUXTRACE_INFO: header (8), type (4), reserved (4), then u64 words: PMU type, the CPU count
# (low half of word 1), ..., CPU 0's block: magic, cpu, nr params, TRCCONFIGR, TRCTRACEIDR
def put(name, at, fmt, v):
    d = bytearray(data)
    struct.pack_into(fmt, d, at, v)
    open(out + '/' + name, 'wb').write(d)
assert struct.unpack_from('<Q', data, info + 16 + 8 * 7)[0] == 0x10
put('traceid.data', info + 16 + 8 * 7, '<Q', 0x22)
put('ncpus0.data', info + 16 + 8, '<I', 0)
put('hdr56.data', aux + 6, '<H', 56)
PY
fail=0
# expect NAME STATUS STDERR command...: the exit status and the whole of stderr
expect() {
  local name=$1 want=$2 msg=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ -n "$msg" ]; then printf '%s\n' "$msg" >"$T/want"; else : >"$T/want"; fi
  if [ "$rc" -ne "$want" ] || ! cmp -s "$T/want" "$T/err"; then
    echo "FAIL $name: exit $rc (want $want); stderr:"; cat "$T/err"; echo "wanted:"; cat "$T/want"; fail=1
  fi
}
G=$T/g
noid="etmkit: 50453 trace bytes not decoded: trace ID without configuration (3604 places, the first at offset 0x480)"
# (the damaged field itself is named, where the reader can tell it is damage: a CPU count of 0)
for f in traceid ncpus0; do
  d="etmkit: run 'etmkit doctor $T/$f.data' for the details and remedies"
  cause=""
  [ $f = ncpus0 ] && cause="
etmkit: $T/ncpus0.data: record 1: offset 0x1e8: warning: cs_etm AUXTRACE_INFO declares no CPU: no trace unit's configuration is known, so none of the trace can be decoded (the words that follow are not read) [perf.cs-etm-info]"
  expect "script $f" 1 "$noid$cause
$d" "$E" script --symfs "$G/symfs" "$T/$f.data"
  [ -s "$T/out" ] && { echo "FAIL script $f: samples came out"; fail=1; }
  expect "export $f" 1 "etmkit export: $T/$f.data: the profile is empty: no samples came out of the trace (below: why)
$noid$cause
$d" "$E" export --format=autofdo --symfs "$G/symfs" -o "$T/x.afdo" "$T/$f.data"
done
expect "script hdr56" 1 "etmkit: 8 trace bytes not decoded: formatter data before the slice's first trace ID (1 place, the first at offset 0x488)
etmkit: 50434 trace bytes not decoded: bytes before the first synchronisation packet (1 place, the first at offset 0x490)
etmkit: 4 trace bytes not decoded: malformed or reserved packets (1 place, the first at offset 0xe5b6)
etmkit: $T/hdr56.data: record 9: offset 0x450: warning: AUXTRACE record header of 56 bytes, not 48: its payload is read after the 56 [perf.bad-size]
etmkit: run 'etmkit doctor $T/hdr56.data' for the details and remedies" \
  "$E" script --symfs "$G/symfs" "$T/hdr56.data"
expect "report traceid" 1 "etmkit: report: $T/traceid.data: no sample came out of the trace (the report's account says why)" \
  "$E" report -o "$T/r.txt" --symfs "$G/symfs" "$T/traceid.data"
# the clean recording: samples, nothing said
expect "script clean" 0 "" "$E" script --symfs "$G/symfs" "$G/perf.data"
expect "script --strict clean" 0 "" "$E" script --strict --symfs "$G/symfs" "$G/perf.data"
[ $fail -eq 0 ] && echo "ok: lost trace is said and fails a run that gave no sample"
exit $fail
