#!/bin/bash
# Where the kernel's code and symbols come from: a vmlinux found under --symfs (as perf looks
# for it), the same given with -k, and a `perf record --kcore` folder (kcore: an ELF core file
# of the kernel's memory, plus kallsyms) must all give the same samples for the kernel; and
# the decode is the same whatever the number of decoder threads.
set -u
py=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ETMKIT_BIN" gen --scenario kernel-and-user -o "$tmp/k" >/dev/null 2>&1 || { echo "SKIP: etmkit gen failed"; exit 77; }
"$ETMKIT_BIN" gen --scenario kernel-and-user-novmlinux -o "$tmp/n" >/dev/null 2>&1 || { echo "SKIP: etmkit gen failed"; exit 77; }
[ -f "$tmp/k/symfs/vmlinux" ] || { echo "SKIP: no vmlinux in the scenario's symfs"; exit 77; }
F=(--itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr)
fail=0
"$ETMKIT_BIN" script -q --symfs "$tmp/k/symfs" "${F[@]}" "$tmp/k/perf.data" >"$tmp/symfs.txt"
grep -q 'vectors+0x400 (\[kernel.kallsyms\])' "$tmp/symfs.txt" || { echo "FAIL: no kernel samples with the symfs vmlinux"; fail=1; }
# -k
"$ETMKIT_BIN" script -q --symfs "$tmp/n/symfs" -k "$tmp/k/symfs/vmlinux" "${F[@]}" "$tmp/n/perf.data" >"$tmp/k.txt"
cmp -s "$tmp/symfs.txt" "$tmp/k.txt" || { echo "FAIL: -k vmlinux differs from the vmlinux in symfs"; diff "$tmp/symfs.txt" "$tmp/k.txt" | head -5; fail=1; }
# a kcore folder: the vmlinux's loadable segments as an ELF core file
mkdir -p "$tmp/kcore_dir"
"$py" - "$tmp/k/symfs/vmlinux" "$tmp/kcore_dir/kcore" <<'PY'
import struct, sys
src = open(sys.argv[1], 'rb').read()
assert src[:4] == b'\x7fELF' and src[4] == 2 and src[5] == 1
phoff, = struct.unpack_from('<Q', src, 32)
phentsize, phnum = struct.unpack_from('<HH', src, 54)
segs = []
for i in range(phnum):
    p = struct.unpack_from('<IIQQQQQQ', src, phoff + i * phentsize)
    if p[0] == 1 and p[5]:                      # PT_LOAD with file bytes
        segs.append((p[3], src[p[2]:p[2] + p[5]], p[1]))
hdr = bytearray(64)
hdr[:16] = b'\x7fELF\x02\x01\x01' + bytes(9)
struct.pack_into('<HHIQQQIHHHHHH', hdr, 16, 4, 183, 1, 0, 64, 0, 0, 64, 56, len(segs), 64, 0, 0)
off = 64 + 56 * len(segs)
ph = bytearray()
data = bytearray()
for vaddr, b, flags in segs:
    ph += struct.pack('<IIQQQQQQ', 1, flags, off + len(data), vaddr, 0, len(b), len(b), 4096)
    data += b
open(sys.argv[2], 'wb').write(bytes(hdr) + bytes(ph) + bytes(data))
PY
cp "$tmp/n/kallsyms" "$tmp/kcore_dir/kallsyms"
"$ETMKIT_BIN" script -q --symfs "$tmp/n/symfs" --kcore "$tmp/kcore_dir" "${F[@]}" "$tmp/n/perf.data" >"$tmp/kcore.txt"
# kallsyms has no symbol sizes: the names and offsets are the same as from the vmlinux here
if ! cmp -s "$tmp/symfs.txt" "$tmp/kcore.txt"; then
  echo "FAIL: --kcore DIR differs from the vmlinux in symfs ($(diff "$tmp/symfs.txt" "$tmp/kcore.txt" | grep -c '^>') lines)"
  diff "$tmp/symfs.txt" "$tmp/kcore.txt" | head -6 | cut -c1-200; fail=1
fi
# a perf.data folder with kcore_dir/ is found by itself
mkdir -p "$tmp/folder"; cp "$tmp/n/perf.data" "$tmp/folder/data"; cp -r "$tmp/kcore_dir" "$tmp/folder/"
"$ETMKIT_BIN" script -q --symfs "$tmp/n/symfs" "${F[@]}" "$tmp/folder" >"$tmp/folder.txt"
cmp -s "$tmp/kcore.txt" "$tmp/folder.txt" || { echo "FAIL: a perf.data folder with kcore_dir differs from --kcore"; fail=1; }
# threads: the same output with 1, 2 and 8 decoder threads (2 queues, time-stamp order)
for j in 1 2 8; do
  "$ETMKIT_BIN" script -q -j$j --symfs "$tmp/k/symfs" "${F[@]}" "$tmp/k/perf.data" >"$tmp/j$j.txt"
  cmp -s "$tmp/symfs.txt" "$tmp/j$j.txt" || { echo "FAIL: -j$j changes the output"; fail=1; }
done
[ $fail -eq 0 ] && echo "kernel from symfs, -k, --kcore and a perf.data folder: same samples; threads: same order"
exit $fail
