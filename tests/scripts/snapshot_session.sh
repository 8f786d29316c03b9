#!/bin/bash
# Sessions over trace snapshot folders (issue 33 item 1): `etmkit script` and `doctor` read a
# snapshot folder (trace IDs as threads, the memory dumps as code), and --image FILE@ADDR /
# ELF@ADDR gives code without editing the ini files. Checked:
#  - the shipped example's samples, line for line, against its code.s (call, return, jcc,
#    syscall, the kernel loop taken five times, sysret, the trace end);
#  - on every buffer of every snapshot of ../shared (60), the session decodes what
#    `dump --decode` decodes for it: the same instructions, the same unreadable places
#    (ADDR_NACC lines);
#  - with its program's [dump1] removed from a copy of the ini, doctor names the address range
#    and the remedy (the core's ini); --image FILE@ADDR with the same bytes gives back the
#    original listing byte for byte (dump --decode) and the original samples (script); so does
#    an ELF file made of those bytes placed with ELF@ADDR (its lowest PT_LOAD at ADDR, the code
#    in a second, executable one), whose symbols then name the samples.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
E="$ETMKIT_BIN"

# ---- the shipped example: samples as code.s says ------------------------------------------
ex="$ETMKIT_SRC/examples/etm4-hello"
"$E" script -F tid,cpu,time,flags,ip,dso,addr "$ex" >"$T/hello.txt" 2>"$T/hello.err" ||
  bad "script on $ex failed: $(head -3 "$T/hello.err")"
cat >"$T/hello.want" <<'EOF'
   16 [000]     0.000000:   tr strt                               0 ([unknown]) =>           401000 (user.bin)
   16 [000]     0.000000:   call                             401004 (user.bin) =>           401020 (user.bin)
   16 [000]     0.000000:   return                           401030 (user.bin) =>           401008 (user.bin)
   16 [000]     0.000000:   jcc                              40100c (user.bin) =>           401004 (user.bin)
   16 [000]     0.000000:   call                             401004 (user.bin) =>           401020 (user.bin)
   16 [000]     0.000000:   return                           401030 (user.bin) =>           401008 (user.bin)
   16 [000]     0.000020:   syscall                          401014 (user.bin) => ffffff8008082400 (kernel.bin)
   16 [000]     0.000020:   jcc                    ffffff8008082408 (kernel.bin) => ffffff8008082404 (kernel.bin)
   16 [000]     0.000020:   jcc                    ffffff8008082408 (kernel.bin) => ffffff8008082404 (kernel.bin)
   16 [000]     0.000020:   jcc                    ffffff8008082408 (kernel.bin) => ffffff8008082404 (kernel.bin)
   16 [000]     0.000020:   jcc                    ffffff8008082408 (kernel.bin) => ffffff8008082404 (kernel.bin)
   16 [000]     0.000020:   jcc                    ffffff8008082408 (kernel.bin) => ffffff8008082404 (kernel.bin)
   16 [000]     0.000020:   sysret                 ffffff800808240c (kernel.bin) =>           401018 (user.bin)
   16 [000]     0.000020:   tr end  syscall                  40101c (user.bin) =>                0 ([unknown])
EOF
if cmp -s "$T/hello.want" "$T/hello.txt"; then ok "etm4-hello: samples as code.s runs"; else
  bad "etm4-hello samples differ:"; diff "$T/hello.want" "$T/hello.txt" | head -10; fi
# the thread's name is the trace source's
"$E" script -F comm,tid "$ex" 2>/dev/null | sort -u >"$T/comm.txt"
printf '           ETM_0    16 \n' >"$T/comm.want"
cmp -s "$T/comm.want" "$T/comm.txt" && ok "etm4-hello: comm is the source's name" ||
  bad "comm: $(head -2 "$T/comm.txt")"

# export: the profile of the example (branch-list: ranges and branches per binary, as code.s runs)
"$E" export --format=branch-list -o "$T/hello.bl" "$ex" 2>/dev/null || bad "export on $ex failed"
cat >"$T/hello.bl.want" <<'EOF'
etmkit-branch-list 1
binary - 0 kernel.bin
ranges 3
ffffff8008082400 ffffff8008082408 1
ffffff8008082404 ffffff8008082408 4
ffffff8008082404 ffffff800808240c 1
addresses 0
branches 3
ffffff8008082408 ffffff8008082404 5
ffffff800808240c - 1
- ffffff8008082400 1
binary - 0 user.bin
ranges 6
401000 401004 1
401004 401004 1
401008 40100c 1
401008 401014 1
401018 40101c 1
401020 401030 2
addresses 0
branches 6
401004 401020 2
40100c 401004 1
401014 - 1
40101c - 1
401030 401008 2
- 401018 1
end
EOF
cmp -s "$T/hello.bl.want" "$T/hello.bl" && ok "export on etm4-hello: the branch list code.s runs" ||
  { bad "export branch-list differs:"; diff "$T/hello.bl.want" "$T/hello.bl" | head; }

# ---- a shared hardware snapshot -------------------------------------------------------------
S="${ETMKIT_SHARED:-$ETMKIT_SRC/../shared}/testdata/opencsd/snapshots/tme_test"
if [ ! -f "$S/snapshot.ini" ]; then
  echo "SKIP: $S is absent (../shared/testdata): the shared-snapshot checks need it"
  [ $fail = 0 ] && exit 77 || exit 1
fi
"$E" dump --decode "$S" >"$T/orig.lst" 2>/dev/null || bad "dump --decode $S"
"$E" dump --decode --stats "$S" 2>/dev/null | sed -n 's/.*decode: [0-9]* elements, \([0-9]*\) instructions.*/\1/p' >"$T/dump.instr"
"$E" doctor --format=json "$S" >"$T/orig.json" 2>/dev/null || bad "doctor $S"
python3 - "$T/orig.json" "$T/dump.instr" "$T/orig.lst" <<'EOF' || fail=1
import json, sys
a = json.load(open(sys.argv[1]))
want_instr = int(open(sys.argv[2]).read().split()[0])
nacc = sum(1 for l in open(sys.argv[3]) if 'ADDR_NACC' in l)
src = a['sources']
ok = (a['trace_snapshot'] and len(src) == 1 and src[0]['instructions'] == want_instr
      and a['stats']['instructions'] == want_instr and src[0]['nacc'] == nacc == 0
      and src[0]['trace_id'] == 2 and src[0]['name'] == 'ETE_0_s1' and src[0]['cpu'] == 0
      and a['causes'] == [] and src[0]['samples'] == a['stats']['samples_branches'] > 0)
print(('ok' if ok else 'FAIL') + ': tme_test: doctor decodes as dump --decode (%d instructions)' % want_instr)
sys.exit(0 if ok else 1)
EOF
"$E" script -F tid,ip,addr,flags "$S" >"$T/orig.script" 2>/dev/null || bad "script $S"

# every buffer of every snapshot of ../shared: the session decodes the instructions and meets
# the unreadable places `dump --decode` lists for that buffer (dump decodes the first buffer of
# trace.ini: for buffer k, a copy whose trace.ini has buffer k's section first)
reorder() { # reorder TRACE_INI OUT K: prints buffer K's name
  python3 - "$@" <<'EOF'
import re, sys
s = open(sys.argv[1]).read()
parts = re.split(r'(?m)^(?=\[)', s)
bufs = [i for i, p in enumerate(parts) if re.match(r'\[buffer', p, re.I)]
k = bufs[int(sys.argv[3])]
parts[bufs[0]], parts[k] = parts[k], parts[bufs[0]]
open(sys.argv[2], 'w').write(''.join(parts))
print(re.search(r'(?mi)^name\s*=\s*(\S+)', parts[bufs[0]]).group(1))
EOF
}
nbuf=0
for d in "$(dirname "$S")"/*/; do
  d=${d%/}
  nb=$(grep -ci '^\[buffer' "$d/trace.ini")
  "$E" doctor --format=json "$d" >"$T/sweep.json" 2>/dev/null
  for k in $(seq 0 $((nb - 1))); do
    rm -rf "$T/r"
    mkdir "$T/r"
    for f in "$d"/*; do ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$T/r/"; done
    rm "$T/r/trace.ini"
    name=$(reorder "$d/trace.ini" "$T/r/trace.ini" "$k")
    # (a DSTREAM capture: the session reads its records, as dump --dstream)
    ds=
    python3 - "$T/r/trace.ini" <<'EOF' && ds=--dstream
import re, sys
s = open(sys.argv[1]).read()
b = re.split(r'(?m)^(?=\[)', s)
first = [p for p in b if re.match(r'\[buffer', p, re.I)][0]
sys.exit(0 if re.search(r'(?mi)^format\s*=\s*dstream_coresight', first) else 1)
EOF
    want=$("$E" dump $ds --decode-only --stats "$T/r" 2>/dev/null |
      sed -n 's/.*decode: [0-9]* elements, \([0-9]*\) instructions.*/\1/p' | awk '{n += $1} END {print n + 0}')
    want="$want $("$E" dump $ds --decode-only "$T/r" 2>/dev/null | grep -c ADDR_NACC)"
    got=$(python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))
s = [x for x in a["sources"] if x["buffer"] == sys.argv[2]]
print(sum(x["instructions"] for x in s), sum(x["nacc"] for x in s))' "$T/sweep.json" "$name")
    [ "$want" = "$got" ] ||
      bad "$(basename "$d") buffer $name: dump --decode: $want (instructions, NACC); the session: $got"
    nbuf=$((nbuf + 1))
  done
done
[ "$nbuf" -ge 50 ] && ok "$nbuf buffers of the shared snapshots: the session decodes as dump --decode" ||
  bad "only $nbuf buffers found"

# a copy without the program's dump ([dump1]: bindir_64/OTHERS_exec at 0x60000)
C="$T/copy"
mkdir "$C"
for f in "$S"/*; do ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$C/"; done
rm "$C/cpu_0.ini"
python3 - "$S/cpu_0.ini" "$C/cpu_0.ini" <<'EOF'
import re, sys
s = open(sys.argv[1]).read()
t = re.sub(r'\[dump1\]\n[^\[]*', '', s)
assert t != s and 'OTHERS_exec' not in t
open(sys.argv[2], 'w').write(t)
EOF
BIN="$S/bindir_64/OTHERS_exec"
"$E" dump --decode "$C" >"$T/nodump.lst" 2>/dev/null
n=$(grep -c ADDR_NACC "$T/nodump.lst")
[ "$n" -gt 0 ] && ok "without the dump: $n ADDR_NACC" || bad "removing the dump changed nothing"

# doctor names the range and the remedy
"$E" doctor "$C" >"$T/doc.txt" 2>&1
grep -qx "\[1\] code at 0x71c00..0xba7e0 is in no memory dump (trace ID 0x02)" "$T/doc.txt" &&
  grep -qx "    $n places in the trace where the code could not be read (the first at trace index 0x1b)" "$T/doc.txt" &&
  grep -qx "    remedy: give the code: --image ELF@ADDR (an ELF file whose lowest segment loads at ADDR) or --image FILE@ADDR (raw bytes), or add a \[dump\] section (file=, address=) to $C/cpu_0.ini" "$T/doc.txt" &&
  ok "doctor: the range and the remedy" || { bad "doctor without the dump:"; head -20 "$T/doc.txt"; }
"$E" doctor --format=json "$C" | python3 -c '
import json, sys
a = json.load(sys.stdin)
c = [x for x in a["causes"] if x["kind"] == "code"]
ok = (len(c) == 1 and c[0]["code"] == "no-image" and c[0]["remedy"] == "give-code"
      and c[0]["lo"] == "0x71c00" and c[0]["hi"] == "0xba7e0" and c[0]["count"] == int(sys.argv[1])
      and c[0]["pid"] == 2 and c[0]["ini"].endswith("/copy/cpu_0.ini")
      and a["sources"][0]["nacc"] == int(sys.argv[1]))
print(("ok" if ok else "FAIL") + ": doctor --format=json: the range", "" if ok else c)
sys.exit(0 if ok else 1)' "$n" || fail=1

# --image FILE@ADDR: the original listing, byte for byte; the original samples
"$E" dump --decode --image "$BIN@0x60000" "$C" >"$T/img.lst" 2>/dev/null
cmp -s "$T/orig.lst" "$T/img.lst" && ok "dump --decode --image FILE@ADDR = the original listing" ||
  bad "dump --decode --image FILE@ADDR differs from the original"
"$E" script -F tid,ip,addr,flags --image "$BIN@0x60000" "$C" >"$T/img.script" 2>/dev/null
cmp -s "$T/orig.script" "$T/img.script" && ok "script --image FILE@ADDR = the original samples" ||
  bad "script --image FILE@ADDR differs from the original"
"$E" doctor --image "$BIN@0x60000" "$C" >"$T/doc2.txt" 2>&1
grep -qx "All trace was decoded." "$T/doc2.txt" && ! grep -q "no memory dump" "$T/doc2.txt" &&
  ok "doctor --image: no unreadable code" || { bad "doctor --image:"; head -12 "$T/doc2.txt"; }

# ELF@ADDR: an ELF whose first PT_LOAD (vaddr 0) is its headers and whose second (vaddr 0x1000,
# R+X) holds the bytes: placed @0x5f000, the code lands at 0x60000
python3 - "$BIN" "$T/prog.elf" <<'EOF'
import struct, sys
code = open(sys.argv[1], 'rb').read()
data_off, half = 0x1000, len(code) // 2
shstr = b'\0.text\0.symtab\0.strtab\0.shstrtab\0'
strtab = b'\0code_start\0code_mid\0'
def sym(name, value, size, info, shndx): return struct.pack('<IBBHQQ', name, info, 0, shndx, value, size)
syms = sym(0, 0, 0, 0, 0) + sym(1, 0x1000, half, 0x12, 1) + sym(12, 0x1000 + half, len(code) - half, 0x12, 1)
symoff = (data_off + len(code) + 7) & ~7
stroff = symoff + len(syms)
shsoff = stroff + len(strtab)
shoff = (shsoff + len(shstr) + 7) & ~7
def sh(name, typ, flags, addr, o, size, link=0, info=0, align=1, entsize=0):
    return struct.pack('<IIQQQQIIQQ', name, typ, flags, addr, o, size, link, info, align, entsize)
shdrs = (sh(0, 0, 0, 0, 0, 0) + sh(1, 1, 6, 0x1000, data_off, len(code), align=4) +
         sh(7, 2, 0, 0, symoff, len(syms), link=3, info=1, align=8, entsize=24) +
         sh(15, 3, 0, 0, stroff, len(strtab)) + sh(23, 3, 0, 0, shsoff, len(shstr)))
eh = b'\x7fELF' + bytes([2, 1, 1, 0]) + bytes(8) + struct.pack(
    '<HHIQQQIHHHHHH', 2, 183, 1, 0x1000, 64, shoff, 0, 64, 56, 2, 64, 5, 4)
ph1 = struct.pack('<IIQQQQQQ', 1, 4, 0, 0, 0, 64 + 112, 64 + 112, 0x1000)
ph2 = struct.pack('<IIQQQQQQ', 1, 5, data_off, 0x1000, 0x1000, len(code), len(code), 0x1000)
out = bytearray(eh + ph1 + ph2)
out += bytes(data_off - len(out)) + code
out += bytes(symoff - len(out)) + syms + strtab + shstr
out += bytes(shoff - len(out)) + shdrs
open(sys.argv[2], 'wb').write(out)
EOF
"$E" dump --decode --image "$T/prog.elf@0x5f000" "$C" >"$T/elf.lst" 2>/dev/null
cmp -s "$T/orig.lst" "$T/elf.lst" && ok "dump --decode --image ELF@ADDR = the original listing" ||
  bad "dump --decode --image ELF@ADDR differs from the original"
"$E" script -F tid,ip,addr,flags --image "$T/prog.elf@0x5f000" "$C" >"$T/elf.script" 2>/dev/null
cmp -s "$T/orig.script" "$T/elf.script" && ok "script --image ELF@ADDR = the original samples" ||
  bad "script --image ELF@ADDR differs from the original"
# its symbols name the samples: 0x7d9d8 is 0x1e9d8 in the ELF, code_start (0x1000) + 0x1d9d8
"$E" script -F ip,sym,symoff,dso --image "$T/prog.elf@0x5f000" "$C" 2>/dev/null | sed -n 2p >"$T/sym.txt"
printf '            210c8 [unknown] (VAL_NON_DET_CODE_exec)\n' >"$T/sym.want"
"$E" script -F ip,sym,symoff,dso --image "$T/prog.elf@0x5f000" "$C" 2>/dev/null | grep -m1 ' 7d9d8 ' >>"$T/sym.txt"
printf '            7d9d8 code_start+0x1d9d8 (%s)\n' "$T/prog.elf" >>"$T/sym.want"
cmp -s "$T/sym.want" "$T/sym.txt" && ok "the ELF's symbols name the samples" ||
  { bad "symbols:"; cat "$T/sym.txt"; }
# export: the ELF's profile is at its own addresses (runtime - 0x5f000), the raw image's at the
# runtime ones; otherwise the same counts
"$E" export --format=branch-list -o "$T/raw.bl" --image "$BIN@0x60000" "$C" 2>/dev/null
"$E" export --format=branch-list -o "$T/elf.bl" --image "$T/prog.elf@0x5f000" "$C" 2>/dev/null
python3 - "$T/raw.bl" "$T/elf.bl" "$BIN" "$T/prog.elf" <<'EOF' || fail=1
import sys
def binaries(path):
    out, cur = {}, None
    for l in open(path):
        w = l.split()
        if w[0] == 'binary': cur = out.setdefault(w[3], []); continue
        if cur is not None: cur.append(w)
    return out
raw, elf = binaries(sys.argv[1]), binaries(sys.argv[2])
r, e = raw.pop(sys.argv[3], None), elf.pop(sys.argv[4], None)
def shift(rows):
    o = []
    for w in rows:
        if len(w) == 3 and w[0] not in ('ranges', 'branches', 'addresses'):
            w = [x if x == '-' else '%x' % (int(x, 16) - 0x5f000) for x in w[:2]] + [w[2]]
        o.append(w)
    return o
ok = r is not None and e is not None and len(r) > 10 and shift(r) == e and raw == elf
print(('ok' if ok else 'FAIL') + ": export --image ELF@ADDR: the profile at the ELF's own addresses")
sys.exit(0 if ok else 1)
EOF
# an ELF without @ADDR is at its link addresses: as @0 for this one (its lowest PT_LOAD is at 0)
"$E" dump --decode --image "$T/prog.elf" "$C" >"$T/elf0.lst" 2>/dev/null
"$E" dump --decode --image "$T/prog.elf@0" "$C" >"$T/elf00.lst" 2>/dev/null
cmp -s "$T/elf00.lst" "$T/elf0.lst" && ! cmp -s "$T/orig.lst" "$T/elf0.lst" &&
  ok "ELF without @ADDR: at its link addresses" || bad "ELF without @ADDR: not at its link addresses"
exit $fail
