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
# line kinds: a trace line starts "Idx:<n>; ID:<hex>;" (after a tab in the text forms); a
# packet's continues "\tI_<NAME> :" (ocsd monitor: " [raw bytes];\tI_"), an element's
# " OCSD_GEN_TRC_ELEM_"; record lines and slice headers have neither
def kind(l):
    if "; OCSD_GEN_TRC_ELEM_" in l:
        return "e"
    if ";\tI_" in l:
        return "p"
    return None
NOT_SYNC = "\tI_NOT_SYNC :"
tk, dk_, ok_, odk = ([kind(l) for l in x] for x in (T, D, O, OD))
tp = [l for l, k in zip(T, tk) if k == "p" and l[0] == "\t"]
if not tp and "/gen-" in name:
    bad.append("no packet lines on a gen recording")
# --decode less its elements is --packets
same("--decode without element lines vs --packets", [l for l, k in zip(D, dk_) if k != "e"], T)
# ocsd --packets: the text packet lines without the tab
op = [l for l, k in zip(O, ok_) if k == "p" and l[0] != "\t"]
same("--packets --format=ocsd vs text", op, [l[1:] for l in tp])
# ocsd --decode: elements as text's, packets as ocsd --packets' (raw bytes out)
de = [l for l, k in zip(D, dk_) if k == "e"]
same("--decode --format=ocsd element lines vs text", [l for l, k in zip(OD, odk) if k == "e"],
     [l[1:] for l in de])
def split_raw(l):
    # "Idx:<n>; ID:<hex>; [0x.. 0x.. ];\tI_..." -> ("Idx:<n>; ID:<hex>;", "0x.. 0x..", "\tI_...")
    head, sep, rest = l.partition(" [")
    raw, sep2, tail = rest.partition("];")
    if not sep or not sep2 or not tail.startswith("\tI_"):
        return None
    return head, raw.strip(), tail
odp = [l for l, k in zip(OD, odk) if k == "p"]
odm = [split_raw(l) for l in odp]
if not all(odm):
    bad.append("--decode --format=ocsd: a packet line without raw bytes")
else:
    same("--decode --format=ocsd packet lines (no raw bytes, no I_NOT_SYNC) vs --packets",
         [h + t for h, _, t in odm if not t.startswith(NOT_SYNC)],
         [l for l in op if NOT_SYNC not in l])
# JSON: slices after their AUXTRACE records, items as the ocsd --decode lines
hdr = re.compile(r"^  trace of AUX #(-?\d+) \(queue (\d+)\): 0x([0-9a-f]+) bytes")
th = [(int(m.group(1)), int(m.group(2)), int(m.group(3), 16)) for m in map(hdr.match, D) if m]
js, prev_aux, orphan = [], False, 0
jk, jr = [], []
for r in J.get("records", []):
    if "trace" in r:
        t = r["trace"]
        js.append((t["aux_record"], t["queue"], t["size"]))
        orphan += not prev_aux
        for it in t["items"]:
            if "raw" in it:
                jk.append(f"{it['idx']} {it['id']:x} I_{it['type']}")
                jr.append(it["raw"])
            else:
                jk.append(f"{it['idx']} {it['id']:x} OCSD_GEN_TRC_ELEM_{it['type'].upper()}")
    else:
        prev_aux = r.get("name") == "AUXTRACE"
if orphan:
    bad.append(f"JSON: {orphan} trace object(s) not after an AUXTRACE record")
same("JSON slices vs text slice headers", [str(x) for x in js], [str(x) for x in th])
def key(l, k):
    # "<idx> <id> <I_NAME or OCSD_GEN_TRC_ELEM_NAME>" of an ocsd line
    idx, _, rest = l[4:].partition("; ID:")
    tid, _, rest = rest.partition(";")
    if k == "p":
        name = rest.partition(";\tI_")[2].partition(" ")[0]
        return f"{idx} {tid} I_{name}"
    return f"{idx} {tid} {rest[1:].partition('(')[0]}"
same("JSON items vs --decode --format=ocsd lines", jk, [key(l, k) for l, k in zip(OD, odk) if k])
if all(odm):
    same("JSON raw bytes vs --decode --format=ocsd", jr,
         ["".join(b[2:] for b in r.split()) for _, r, _ in odm])
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
