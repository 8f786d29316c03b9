#!/bin/sh
# The views on a snapshot folder (issue 29 item 4, issue 28 item 3): report, export
# --format=folded|svg|perfetto|lcov read examples/etm4-hello (a trace snapshot: trace IDs as
# threads, the memory dumps as code) and, with --image, an ELF file built from the example's
# code.s for the names and the DWARF lines. What the trace runs is read off code.s:
#   main: mov, bl greet                                   -> 2 (main)
#   greet: add, cmp, b.hs (not taken), add, ret           -> 5 (main;greet), twice
#   main: subs, b.ne (taken), bl greet                    -> 3 (main)
#   main: subs, b.ne (not taken), mov, svc                -> 4 (main)
#   el0_sync: mov, 5 x (subs, b.ne taken) ... eret        -> 3 + 4 x 2 + 3 = 14 (main;[kernel.bin]:
#             the exception runs on main's stack; the kernel dump has no ELF, so no name)
#   main: mov, svc (the trace ends)                       -> 2 (main)
# so main 2 + 3 + 4 + 2 = 11, greet 10, the kernel 14: 35 instructions, as doctor counts them.
set -u
E="$ETMKIT_BIN"
ex="$ETMKIT_SRC/examples/etm4-hello"
for t in clang ld.lld python3; do
  command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the ELF of the user code: code.s with its labels typed as functions (the bytes stay
# those of user.bin), at the address of the example's [dump1]
sed -E 's/^(main|greet|el0_sync):/    .type \1, %function\n\1:/' "$ex/code.s" >"$T/code.s"
clang --target=aarch64-linux-gnu -g -c "$T/code.s" -o "$T/code.o" || { echo "FAIL: clang"; exit 1; }
printf 'SECTIONS { .text.user 0x401000 : { *(.text.user) } /DISCARD/ : { *(.text.kernel) } }\n' >"$T/l.ld"
ld.lld -T "$T/l.ld" --build-id=sha1 -o "$T/prog.elf" "$T/code.o" 2>/dev/null || { echo "FAIL: ld.lld"; exit 1; }
img="--image $T/prog.elf"

# folded: exact
"$E" export --format=folded $img "$ex" >"$T/folded" 2>"$T/err" || bad "folded exited $?: $(cat "$T/err")"
printf 'ETM_0;main 11\nETM_0;main;[kernel.bin] 14\nETM_0;main;greet 10\n' >"$T/want"
cmp -s "$T/want" "$T/folded" || bad "folded stacks: $(cat "$T/folded")"
# without the ELF: the dumps name the code
"$E" export --format=folded "$ex" >"$T/folded2" 2>/dev/null
printf 'ETM_0;[user.bin] 11\nETM_0;[user.bin];[kernel.bin] 14\nETM_0;[user.bin];[user.bin] 10\n' >"$T/want2"
cmp -s "$T/want2" "$T/folded2" || bad "folded stacks without --image: $(cat "$T/folded2")"

# report: its totals are doctor's, the functions those above, calls into greet 2
"$E" doctor --format=json "$ex" >"$T/doctor.json" || bad "doctor exited $?"
"$E" report --format=json $img "$ex" >"$T/report.json" || bad "report exited $?"
python3 - "$T/doctor.json" "$T/report.json" <<'PY' || bad "report against doctor and code.s"
import json, sys
d = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert d["stats"]["instructions"] == 35 == r["instructions"], (d["stats"], r["instructions"])
selfs = sorted((f["name"], f["self"], f["total"], f["calls"]) for f in r["functions_self"])
assert selfs == [("[kernel.bin]", 14, 14, 0), ("greet", 10, 10, 2), ("main", 11, 35, 0)], selfs
th = [(t["pid"], t["tid"], t["comm"], t["instructions"]) for t in r["threads"]]
assert th == [(16, 16, "ETM_0", 35)], th
PY
"$E" report $img "$ex" >"$T/report.txt" || bad "report (text) exited $?"
grep -Eq '^ +10 +[0-9.]+% +10 +[0-9.]+% +2  greet \(' "$T/report.txt" || bad "report text: no greet row"

# svg: a picture of the same counts
"$E" export -q --format=svg $img -o "$T/f.svg" "$ex" || bad "svg exited $?"
python3 - "$T/f.svg" <<'PY' || bad "svg"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
for want in ("greet (10 instructions", "main (35 instructions"):
    assert any(t and t.startswith(want) for t in titles), (want, titles)
PY

# perfetto: decodes against the schema, slices nest and end, greet twice under main's thread
if command -v protoc >/dev/null; then
  "$E" export -q --format=perfetto $img -o "$T/t.pt" "$ex" || bad "perfetto exited $?"
  protoc --proto_path="$ETMKIT_SRC/tests/data" --decode=perfetto.protos.Trace perfetto_trace.proto \
    <"$T/t.pt" >"$T/t.txt" || bad "protoc could not decode the timeline"
  python3 "$ETMKIT_SRC/tests/scripts/perfetto_check.py" "$T/t.txt" >"$T/chk" 2>&1 ||
    bad "perfetto_check: $(tail -3 "$T/chk")"
  # (the names as the interned data gives them: each is written once)
  n=$(python3 - "$ETMKIT_SRC/tests/scripts" "$T/t.txt" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import perfetto_check as pc
packets = pc.parse_text(sys.argv[2])
pc.resolve_interned(packets, lambda m: sys.exit(m))
print(sum(1 for p in packets for e in p.get('track_event', [])
          if pc.one(e, 'type') == 'TYPE_SLICE_BEGIN' and pc.one(e, 'name') == 'greet'))
PY
)
  [ "$n" = 2 ] || bad "timeline: $n slices of greet, expected 2"
else
  echo "note: no protoc (protobuf-compiler): the timeline is not decoded"
fi

# lcov: every line of main and greet with its count, the two conditional branches
"$E" export -q --format=lcov $img -o "$T/c.info" "$ex" 2>"$T/err" || bad "lcov exited $?: $(cat "$T/err")"
python3 - "$T/code.s" "$T/c.info" <<'PY' || bad "lcov against code.s"
import sys
src = open(sys.argv[1]).read().split("\n")
def line(text, after=0):
    for i in range(after, len(src)):
        if src[i].split("//")[0].strip() == text:
            return i + 1
    raise SystemExit("no line " + text)
m = line("mov  w19, #2"); g = line("add  x0, x0, #1")
main_counts = [1, 2, 2, 2, 1, 1, 1, 1]   # mov, bl, subs, b.ne, mov, svc, mov, svc
rows = {}
l = m
for c in main_counts:
    while not src[l - 1].split("//")[0].strip() or src[l - 1].lstrip().startswith("."):
        l += 1
    rows[l] = c; l += 1
for k in range(5):
    rows[g + k] = 2
bne, bhs = line("1:  bl   greet") + 2, g + 2
want = ["TN:", "SF:" + sys.argv[1], "FN:%d,main" % m, "FN:%d,greet" % g, "FNDA:1,main",
        "FNDA:2,greet", "FNF:2", "FNH:2",
        "BRDA:%d,0,0,1" % bne, "BRDA:%d,0,1,1" % bne, "BRDA:%d,0,0,0" % bhs, "BRDA:%d,0,1,2" % bhs,
        "BRF:4", "BRH:3"] + ["DA:%d,%d" % (k, rows[k]) for k in sorted(rows)] + \
       ["LF:%d" % len(rows), "LH:%d" % len(rows), "end_of_record"]
got = open(sys.argv[2]).read().split("\n")[:-1]
assert got == want, "\n".join(["got:"] + got + ["want:"] + want)
PY
# an --image file named by a relative path is still found where the binary is looked up
(cd "$T" && "$E" export -q --format=lcov --image prog.elf -o c2.info "$ex") 2>"$T/err" ||
  bad "lcov with a relative --image exited $?: $(cat "$T/err")"
cmp -s "$T/c.info" "$T/c2.info" || bad "lcov with a relative --image path differs"
# ... and for the profiles: the binary's build-id and load base (matched against the
# resolver's absolute name, the relative one gave neither: "binary - 0 ...", and AutoFDO
# addresses not relative to the binary)
"$E" export -q --format=branch-list --image "$T/prog.elf" -o "$T/abs.bl" "$ex" 2>/dev/null
(cd "$T" && "$E" export -q --format=branch-list --image prog.elf -o rel.bl "$ex") 2>"$T/err" ||
  bad "branch-list with a relative --image exited $?: $(cat "$T/err")"
cmp -s "$T/abs.bl" "$T/rel.bl" || bad "branch-list with a relative --image path differs: $(grep ^binary "$T/rel.bl")"
grep -q "^binary [0-9a-f]\{40\} [0-9a-f]* $T/prog.elf\$" "$T/rel.bl" ||
  bad "the ELF's build-id and load base: $(grep ^binary "$T/rel.bl")"
# ... named as given, symbolic links kept (the binary is the file the user named)
ln -s "$T" "$T/link"
"$E" script -F ip,dso --image "$T/link/prog.elf" "$ex" 2>/dev/null | sed -n 2p >"$T/dso.txt"
printf '           401004 (%s)\n' "$T/link/prog.elf" >"$T/dso.want"
cmp -s "$T/dso.want" "$T/dso.txt" || bad "an --image path through a symbolic link: $(cat "$T/dso.txt")"
if command -v genhtml >/dev/null; then
  genhtml -q --branch-coverage -o "$T/html" "$T/c.info" >"$T/gh" 2>&1 || bad "genhtml exited $?"
  grep -qi warning "$T/gh" && bad "genhtml warned: $(cat "$T/gh")"
fi

[ $fail -eq 0 ] && echo "ok: report, folded, svg, perfetto and lcov on a snapshot folder"
exit $fail
