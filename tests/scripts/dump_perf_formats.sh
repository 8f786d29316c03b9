#!/bin/bash
# etmkit dump FILE on a perf.data: the trace of each AUX slice in every format says the same
# thing, in the same place (after the AUXTRACE records of its buffer's reference). The text
# packet lines are perf report -D's (tests/scripts/dump_perf_packets.sh); here the other
# listings are held to them, line by line and in order:
#   --decode           without its element lines is --packets, line for line (records too);
#   --format=ocsd      --packets: its packet lines are the text ones without the leading tab;
#                      --decode: its element lines are the text --decode ones without the tab,
#                      its packet lines less the raw bytes are --packets --format=ocsd's, the
#                      lister's monitor form listing every I_NOT_SYNC where the packet sink
#                      gives the first (as trc_pkt_lister -decode; checked against the lister
#                      on snapshots by ocsd_packets.sh / ocsd_decode.sh), so those are set
#                      aside on both sides;
#   --format=json      --decode: the objects after each AUXTRACE record object are the slices
#                      of the text listing (AUX record, queue, size), their items (every
#                      packet, as the monitor form) the --decode --format=ocsd lines (index,
#                      trace ID, packet or element kind), the packets' raw bytes theirs.
# On etmkit gen recordings (formatted and raw sinks, per-thread, trace IDs per sink, several
# AUX records per buffer) and every recording in ../shared/testdata/perf/files when present.
set -u
[ -x "$ETMKIT_BIN" ] || { echo "SKIP: no etmkit binary"; exit 77; }
py=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

files=()
for sc in basic per-thread per-cpu-trbe trace-id-per-sink multi-aux-per-auxtrace flush-partial-packet-wrap; do
  if "$ETMKIT_BIN" gen -q --scenario "$sc" -o "$tmp/gen-$sc" >"$tmp/gen.log" 2>&1; then
    files+=("$tmp/gen-$sc/perf.data")
  else
    echo "FAIL: etmkit gen --scenario $sc: $(head -2 "$tmp/gen.log")"
    exit 1
  fi
done
S=${ETMKIT_SHARED:-}/testdata/perf/files
if [ -d "$S" ]; then
  for f in "$S"/*; do
    [ "$(head -c 8 "$f" 2>/dev/null | tr -d '\000')" = "PERFILE2" ] && files+=("$f")
  done
else
  echo "note: $S is absent: gen recordings only"
fi

fail=0; n=0
for f in "${files[@]}"; do
  n=$((n + 1))
  for m in "--packets" "--decode" "--packets --format=ocsd" "--decode --format=ocsd" \
           "--decode --format=json"; do
    o=$tmp/$(echo "$m" | tr -d ' =-')
    # shellcheck disable=SC2086
    if ! "$ETMKIT_BIN" dump $m -q "$f" >"$o" 2>"$tmp/err"; then
      echo "FAIL $f: etmkit dump $m exited non-zero: $(head -2 "$tmp/err")"
      fail=1; continue 2
    fi
  done
  if ! "$py" - "$tmp" "$f" <<'EOF'; then
import json, re, sys
d, name = sys.argv[1], sys.argv[2]
def lines(k):
    return open(f"{d}/{k}", encoding="utf-8").read().split("\n")
T, D = lines("packets"), lines("decode")
O, OD = lines("packetsformatocsd"), lines("decodeformatocsd")
J = json.load(open(f"{d}/decodeformatjson", encoding="utf-8"))
bad = []
def same(what, a, b):
    if a == b:
        return
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    bad.append(f"{what}: differ at line {i + 1} of {len(a)}/{len(b)}:\n  "
               f"{a[i] if i < len(a) else '(end)'}\n  {b[i] if i < len(b) else '(end)'}")
ELEM = re.compile(r"^\t?Idx:\d+; ID:[0-9a-f]+; OCSD_GEN_TRC_ELEM_")
PKT_T = re.compile(r"^\tIdx:\d+; ID:[0-9a-f]+;\tI_")
PKT_O = re.compile(r"^Idx:\d+; ID:[0-9a-f]+;( \[[0-9a-fx ]*\];)?\tI_")
RAW = re.compile(r"^(Idx:\d+; ID:[0-9a-f]+;) \[([0-9a-fx ]*)\];(\t.*)$")
NOT_SYNC = "\tI_NOT_SYNC :"
tp = [l for l in T if PKT_T.match(l)]
if not tp and "/gen-" in name:
    bad.append("no packet lines on a gen recording")
# --decode less its elements is --packets
same("--decode without element lines vs --packets", [l for l in D if not ELEM.match(l)], T)
# ocsd --packets: the text packet lines without the tab
same("--packets --format=ocsd vs text", [l for l in O if PKT_O.match(l)], [l[1:] for l in tp])
# ocsd --decode: elements as text's, packets as ocsd --packets' (raw bytes out)
de = [l for l in D if ELEM.match(l)]
same("--decode --format=ocsd element lines vs text", [l for l in OD if ELEM.match(l)],
     [l[1:] for l in de])
odp = [l for l in OD if PKT_O.match(l)]
same("--decode --format=ocsd packet lines (no raw bytes, no I_NOT_SYNC) vs --packets",
     [RAW.sub(r"\1\3", l) for l in odp if NOT_SYNC not in l],
     [l for l in O if PKT_O.match(l) and NOT_SYNC not in l])
# JSON: slices after their AUXTRACE records, items as the text lines
hdr = re.compile(r"^  trace of AUX #(-?\d+) \(queue (\d+)\): 0x([0-9a-f]+) bytes")
th = [tuple(int(x, 16) if i == 2 else int(x) for i, x in enumerate(m.groups()))
      for m in map(hdr.match, D) if m]
js, prev_aux, orphan = [], False, 0
for r in J.get("records", []):
    if "trace" in r:
        t = r["trace"]
        js.append((t["aux_record"], t["queue"], t["size"]))
        orphan += not prev_aux
    else:
        prev_aux = r.get("name") == "AUXTRACE"
if orphan:
    bad.append(f"JSON: {orphan} trace object(s) not after an AUXTRACE record")
same("JSON slices vs text slice headers", [str(x) for x in js], [str(x) for x in th])
def item_key(it):
    if "raw" in it:
        return f"{it['idx']} {it['id']:x} I_{it['type']}"
    return f"{it['idx']} {it['id']:x} OCSD_GEN_TRC_ELEM_{it['type'].upper()}"
jk = [item_key(it) for r in J.get("records", []) if "trace" in r for it in r["trace"]["items"]]
LK = re.compile(r"^Idx:(\d+); ID:([0-9a-f]+);( \[[0-9a-fx ]*\];)?\s*"
                r"(I_[A-Z0-9_]+|OCSD_GEN_TRC_ELEM_[A-Z_]+)")
dk = [f"{m.group(1)} {m.group(2)} {m.group(4)}" for m in map(LK.match, OD) if m]
same("JSON items vs --decode --format=ocsd lines", jk, dk)
jr = [f"{it['idx']} {it['type']} {it['raw']}" for r in J.get("records", []) if "trace" in r
      for it in r["trace"]["items"] if "raw" in it]
orw = []
for l in odp:
    m = RAW.match(l)
    if m:
        idx = m.group(1).split(";")[0][4:]
        typ = re.search(r"\tI_([A-Z0-9_]+) :", m.group(3)).group(1)
        raw = "".join(b[2:] for b in m.group(2).split())
        orw.append(f"{idx} {typ} {raw}")
same("JSON raw bytes vs --decode --format=ocsd", jr, orw)
for b in bad:
    print(f"FAIL {name}: {b}")
print(f"  {name}: {len(tp)} packet lines, {len(de)} element lines, {len(th)} slices"
      + ("" if not bad else " (FAILED)"))
sys.exit(1 if bad else 0)
EOF
    fail=1
  fi
done
[ "$fail" -eq 0 ] && echo "dump FILE trace formats agree on $n recordings"
exit $fail
