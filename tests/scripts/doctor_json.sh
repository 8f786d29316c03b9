#!/bin/bash
# etmkit doctor --format=json (docs/DOCTOR.md): the account as one JSON document holds what the
# text says, as fields. For each recording, with and without -v:
#  - the document parses, names its schema, and exits as the text does;
#  - the text's first line is made of its fields (path, CPUs, protocols, mode, time stamps), its
#    counts line and decoded line of its stats;
#  - the text's causes are the document's causes, in order: "\n[N] " + each one's text, byte for
#    byte; with -v the notes are "  - " + each note's text; without, one line counts them;
#  - every item names a known kind and remedy; code items' counts add up to stats.nacc; the
#    AUX records without data are all listed, their count matches the AUX no-data cause's plus
#    the overwritten note's.
# Recordings: etmkit gen jit-reuse (JIT code and missing files, no symfs), arbitration-stress
# seed 7 (AUX records without data and flagged COLLISION) and seed 3 (a refused session's
# empty TRUNCATED AUX record, a note), snapshot-wrap (overwritten AUX records),
# buildid-mismatch; and the real recordings of ../shared when present.
# --format is doctor's only: script refuses it, and doctor refuses another format (exit 2).
set -u -o pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir "$tmp/cache" # an empty build-id cache: only symfs counts

for sc in jit-reuse:1 arbitration-stress:7 arbitration-stress:3 snapshot-wrap:1 buildid-mismatch:1; do
  name=${sc%%:*}
  "$ETMKIT_BIN" gen --scenario "$name" --seed "${sc##*:}" -o "$tmp/$name-${sc##*:}" >/dev/null 2>&1 ||
    { echo "FAIL: gen $name"; fail=1; }
done

check() { # dir file [options]
  local dir=$1 file=$2 rc1 rc2
  shift 2
  (cd "$dir" && "$ETMKIT_BIN" doctor --buildid-dir "$tmp/cache" "$@" "$file") >"$tmp/text" 2>/dev/null
  rc1=$?
  (cd "$dir" && "$ETMKIT_BIN" doctor --buildid-dir "$tmp/cache" --format=json "$@" "$file") \
    >"$tmp/json" 2>/dev/null
  rc2=$?
  if [ $rc1 -ne $rc2 ]; then
    echo "FAIL $file $*: exit $rc1 as text, $rc2 as JSON"
    fail=1
    return
  fi
  local v=0
  for o in "$@"; do [ "$o" = -v ] && v=1; done
  if ! python3 - "$tmp/text" "$tmp/json" "$v" <<'EOF'; then
import json, sys
text = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read()
raw = open(sys.argv[2], encoding="utf-8", errors="surrogateescape").read()
verbose = sys.argv[3] == "1"
errs = []
try:
    a = json.loads(raw)
except ValueError as e:
    print("not JSON: %s" % e)
    sys.exit(1)
if not raw.endswith("}\n"):
    errs.append("the document does not end with '}' and a newline")
if a.get("schema") != "etmkit-account/1":
    errs.append("schema %r" % a.get("schema"))
KINDS = {"aux-no-data", "aux-overwritten", "aux-clipped", "aux-truncated", "aux-refused",
         "aux-collision", "aux-partial", "lost", "code", "module-relocations", "gap",
         "diagnostic"}
REMEDIES = {"none", "record-again", "copy-again", "bigger-aux-buffer", "one-session-per-sink",
            "unshared-sink", "bigger-perf-buffer", "kernel-image", "kallsyms", "symfs", "no-file",
            "jitdump-write", "jitdump-copy", "jitdump-clock"}
def pl(n, one, many):
    return "%d %s" % (n, one if n == 1 else many)
lines = text.split("\n")
head = "%s: " % a["path"]
if not a["coresight"]:
    head += "no CoreSight (cs_etm) trace configuration in this recording"
else:
    head += "CoreSight trace of %d CPU%s (%s), %s, %s" % (
        a["cpus"], "" if a["cpus"] == 1 else "s", "+".join(a["protocols"]),
        "snapshot mode" if a["snapshot"] else "full trace",
        "with time stamps" if a["time_stamps"] else "no time stamps used")
    st = a["stats"]
    counts = "  %s, %s, %s of trace in the file" % (
        pl(st["queues"], "queue", "queues"), pl(st["slices"], "AUX slice", "AUX slices"),
        pl(st["trace_bytes"], "byte", "bytes"))
    if a["decoded"]:
        counts += " (%d of them frame headers and padding)" % st["frame_bytes"]
        dec = "  decoded: %s -> %s, %s, %s" % (
            pl(st["trace_bytes_decoded"], "trace byte", "trace bytes"),
            pl(st["instructions"], "instruction", "instructions"),
            pl(st["samples_branches"], "branch sample", "branch samples"),
            pl(st["samples_instructions"], "instruction sample", "instruction samples"))
        if lines[2] != dec:
            errs.append("decoded line %r, from the fields %r" % (lines[2], dec))
    if lines[1] != counts:
        errs.append("counts line %r, from the fields %r" % (lines[1], counts))
if lines[0] != head:
    errs.append("first line %r, from the fields %r" % (lines[0], head))
causes, notes = a["causes"], a["notes"]
for it in causes + notes:
    if it["kind"] not in KINDS: errs.append("kind %r" % it["kind"])
    if it["remedy"] not in REMEDIES: errs.append("remedy %r" % it["remedy"])
    if not it["text"].endswith("\n"): errs.append("text without its newline: %r" % it["text"])
if causes:
    want = "\nNot turned into samples (%d cause%s):\n" % (len(causes), "" if len(causes) == 1 else "s")
    want += "".join("\n[%d] %s" % (i + 1, c["text"]) for i, c in enumerate(causes))
else:
    want = "\nAll trace was decoded.\n"
if notes and verbose:
    want += "\nNotes (not problems):\n" + "".join("  - " + n["text"] for n in notes)
elif notes:
    want += "\n%d %s (--verbose shows %s).\n" % (
        len(notes), "note, not a problem" if len(notes) == 1 else "notes, not problems",
        "it" if len(notes) == 1 else "them")
body = text[text.index("\n\n") + 1:] if "\n\n" in text else ""
if body != want:
    errs.append("the text's causes and notes are not the document's:\n--- text\n%s--- from JSON\n%s"
                % (body[:1500], want[:1500]))
if a["decoded"] and a["coresight"]:
    nacc = sum(c["count"] for c in causes if c["kind"] == "code")
    if nacc != a["stats"]["nacc"]:
        errs.append("code items count %d, stats.nacc %d" % (nacc, a["stats"]["nacc"]))
nd = sum(c["count"] for c in causes + notes if c["kind"] in ("aux-no-data", "aux-overwritten"))
if nd != len(a["aux_no_data"]):
    errs.append("%d AUX records without data listed, the items count %d" % (len(a["aux_no_data"]), nd))
if sum(1 for r in a["aux_no_data"] if r["overwritten"]) != sum(
        c["count"] for c in notes if c["kind"] == "aux-overwritten"):
    errs.append("overwritten AUX records do not match the note")
for e in errs:
    print(e)
sys.exit(1 if errs else 0)
EOF
    echo "FAIL $file $*: the JSON and the text disagree (above)"
    fail=1
  fi
  grep -q . "$tmp/text" || { echo "FAIL $file $*: no output"; fail=1; }
  n=$((n + 1))
}

n=0
for name in jit-reuse-1 arbitration-stress-7 arbitration-stress-3 snapshot-wrap-1 buildid-mismatch-1; do
  [ -f "$tmp/$name/perf.data" ] || continue
  check "$tmp/$name" perf.data
  check "$tmp/$name" perf.data -v
  check "$tmp/$name" perf.data --symfs symfs
  check "$tmp/$name" perf.data --symfs symfs -v
done
# the kinds these recordings must show, or the comparison above proves little
for sk in 7:aux-no-data 7:aux-collision 3:aux-refused 3:diagnostic; do
  (cd "$tmp/arbitration-stress-${sk%%:*}" && "$ETMKIT_BIN" doctor --format=json perf.data) \
    >"$tmp/arb.json" 2>/dev/null
  grep -q "\"kind\":\"${sk#*:}\"" "$tmp/arb.json" ||
    { echo "FAIL: arbitration-stress seed ${sk%%:*} has no ${sk#*:} item"; fail=1; }
done
(cd "$tmp/jit-reuse-1" && "$ETMKIT_BIN" doctor --format=json perf.data) >"$tmp/jit.json" 2>/dev/null
grep -q '"remedy":"jitdump-copy"' "$tmp/jit.json" || { echo "FAIL: jit-reuse has no jitdump-copy remedy"; fail=1; }
(cd "$tmp/snapshot-wrap-1" && "$ETMKIT_BIN" doctor --format=json perf.data) >"$tmp/snap.json" 2>/dev/null
grep -q '"overwritten":true' "$tmp/snap.json" ||
  { echo "FAIL: snapshot-wrap lists no overwritten AUX record"; fail=1; }

S=${ETMKIT_SHARED:-}/testdata/perf
if [ -d "$S/files" ]; then
  for f in "$S"/files/*.data*; do
    b=$(basename "$f")
    "$ETMKIT_BIN" doctor -q "$f" >/dev/null 2>&1
    [ $? -le 1 ] || continue
    head -c 8 "$f" | grep -q PERFILE2 || continue
    check "$S" "files/$b" --symfs symfs
    check "$S" "files/$b" --symfs symfs -v
  done
fi

# --format belongs to doctor
p=$tmp/jit-reuse-1/perf.data
"$ETMKIT_BIN" script --format=json "$p" >/dev/null 2>"$tmp/err"
rc=$?
{ [ $rc -eq 2 ] && grep -q "unknown option '--format=json'" "$tmp/err"; } ||
  { echo "FAIL: script --format=json: exit $rc, $(head -1 "$tmp/err")"; fail=1; }
"$ETMKIT_BIN" doctor --format=xml "$p" >/dev/null 2>"$tmp/err"
rc=$?
{ [ $rc -eq 2 ] && grep -q "give text or json" "$tmp/err"; } ||
  { echo "FAIL: doctor --format=xml: exit $rc, $(head -1 "$tmp/err")"; fail=1; }
"$ETMKIT_BIN" doctor --format=text "$p" >"$tmp/a" 2>/dev/null
"$ETMKIT_BIN" doctor "$p" >"$tmp/b" 2>/dev/null
cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: doctor --format=text differs from doctor"; fail=1; }

[ "$fail" -eq 0 ] && echo "doctor json ok ($n runs compared)"
exit $fail
