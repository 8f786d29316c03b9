#!/usr/bin/env python3
"""The known execution of a program, as counts: a stand-in for decoded trace in the BOLT
end-to-end test (tests/scripts/bolt_e2e.sh) until the session hands out samples.

usage: bolt_model.py ELF QEMU_LOG OUTDIR

QEMU_LOG is `qemu-aarch64 -singlestep -d nochain,exec` output: one "Trace" line per executed
instruction, in order. From it and the instruction words in ELF (a static AArch64 executable,
run where it is linked) this writes under OUTDIR:
  model.bl     an etmkit branch list of the run as ETM traces it: ranges that end at every
               branch, taken or not, and at exceptions (SVC); taken branches with their counts
  model.pa     the same run for perf2bolt's pre-aggregated input (-pa): "B from to count 0"
               per taken branch and "F start end count" per trace (from a taken branch's
               target to the next taken branch: what a last-branch stack shows)
  dyno.txt     what BOLT's dyno-stats must say of the run: "<count> : executed forward
               branches" and the like, for conditional and unconditional direct branches and
               calls, leaving out functions with an indirect jump (llvm-bolt 16 has no CFG
               for them on AArch64 and counts nothing there)
  funcs.txt    the functions that ran, hottest first: "<instructions executed> <name>"
"""
import re
import struct
import sys
from collections import Counter


def elf_image(path):
    data = open(path, 'rb').read()
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        sys.exit('bolt_model: %s: not a little-endian ELF64 file' % path)
    phoff, = struct.unpack_from('<Q', data, 0x20)
    shoff, = struct.unpack_from('<Q', data, 0x28)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from('<HHHHH', data, 0x36)
    segs = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from('<IIQQQQ', data,
                                                                       phoff + i * phentsize)
        if p_type == 1:
            segs.append((p_vaddr, p_offset, p_filesz))
    secs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize) for i in range(shnum)]
    funcs = []
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for k in range(s[5] // s[9]):
            name, info, _, shndx, value, size = struct.unpack_from('<IBBHQQ', data, s[4] + k * s[9])
            if info & 0xf == 2 and value:  # STT_FUNC
                end = data.index(b'\0', strtab[4] + name)
                funcs.append((value, size, data[strtab[4] + name:end].decode()))
    return data, segs, sorted(funcs)


def word_at(img, addr):
    data, segs, _ = img
    for vaddr, off, filesz in segs:
        if vaddr <= addr and addr + 4 <= vaddr + filesz:
            return struct.unpack_from('<I', data, off + addr - vaddr)[0]
    sys.exit('bolt_model: no code at 0x%x in the ELF file' % addr)


def kind(w):
    """'call', 'jump' (unconditional), 'cond', 'ret', 'indirect', 'exc' (SVC) or None."""
    if w & 0xfc000000 == 0x94000000 or w & 0xfffffc1f == 0xd63f0000:
        return 'call'  # BL, BLR
    if w & 0xfc000000 == 0x14000000:
        return 'jump'  # B
    if w & 0xff000010 == 0x54000000 or w & 0x7e000000 in (0x34000000, 0x36000000):
        return 'cond'  # B.cond, CBZ/CBNZ, TBZ/TBNZ
    if w & 0xfffffc1f == 0xd65f0000:
        return 'ret'
    if w & 0xfffffc1f == 0xd61f0000:
        return 'indirect'  # BR
    if w & 0xffe0001f == 0xd4000001:
        return 'exc'  # SVC
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    elf, log, out = sys.argv[1:]
    img = elf_image(elf)
    pcs = [int(m.group(1), 16) for m in
           re.finditer(r'^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/', open(log).read(), re.M)]
    if not pcs:
        sys.exit('bolt_model: %s: no executed instructions (qemu -singlestep -d nochain,exec?)'
                 % log)
    kinds = {}
    funcs = img[2]
    no_cfg = set()  # functions with an indirect jump: BOLT counts nothing in them
    for value, size, name in funcs:
        if any(kind(word_at(img, a)) == 'indirect' for a in range(value, value + size, 4)):
            no_cfg.add(value)

    def func_of(pc):
        for value, size, _ in funcs:
            if value <= pc < value + size:
                return value
        return None

    ranges, branches, traces = Counter(), Counter(), Counter()
    dyn = Counter()
    start = trace_start = pcs[0]
    for i, pc in enumerate(pcs):
        if pc not in kinds:
            kinds[pc] = kind(word_at(img, pc))
        k = kinds[pc]
        nxt = pcs[i + 1] if i + 1 < len(pcs) else None
        if k is None:
            continue
        ranges[(start, pc)] += 1
        start = nxt
        # branches other than conditional ones are always taken (an indirect one may go to
        # the next instruction: a jump table's first case)
        taken = nxt is not None and (nxt != pc + 4 if k == 'cond' else k != 'exc')
        if func_of(pc) not in no_cfg:
            if k == 'cond':
                d = 'forward' if cond_target(word_at(img, pc), pc) > pc else 'backward'
                dyn['executed %s branches' % d] += 1
                if taken:
                    dyn['taken %s branches' % d] += 1
            elif k == 'jump':
                dyn['executed unconditional branches'] += 1
            elif k == 'call':
                dyn['all function calls'] += 1
        if taken:
            branches[(pc, nxt)] += 1
            traces[(trace_start, pc)] += 1
            trace_start = nxt
    with open(out + '/model.bl', 'w') as f:
        f.write('etmkit-branch-list 1\n')
        f.write('binary %s %x %s\n' % (build_id(img), img[1][0][0], elf))
        f.write('ranges %d\n' % len(ranges))
        for (a, b), n in sorted(ranges.items()):
            f.write('%x %x %d\n' % (a, b, n))
        f.write('addresses 0\nbranches %d\n' % len(branches))
        for (a, b), n in sorted(branches.items()):
            f.write('%x %x %d\n' % (a, b, n))
        f.write('end\n')
    with open(out + '/model.pa', 'w') as f:
        for (a, b), n in sorted(branches.items()):
            f.write('B %x %x %d 0\n' % (a, b, n))
        for (a, b), n in sorted(traces.items()):
            f.write('F %x %x %d\n' % (a, b, n))
    with open(out + '/dyno.txt', 'w') as f:
        for name in ('executed forward branches', 'taken forward branches',
                     'executed backward branches', 'taken backward branches',
                     'executed unconditional branches', 'all function calls'):
            f.write('%d : %s\n' % (dyn[name], name))
    hot = Counter()
    for pc in pcs:
        for value, size, name in funcs:
            if value <= pc < value + size:
                hot[name] += 1
    with open(out + '/funcs.txt', 'w') as f:
        for name, n in sorted(hot.items(), key=lambda x: (-x[1], x[0])):
            f.write('%d %s\n' % (n, name))


def cond_target(w, pc):
    if w & 0xff000010 == 0x54000000 or w & 0x7e000000 == 0x34000000:
        off = (w >> 5) & 0x7ffff
        off = off - (1 << 19) if off & (1 << 18) else off
    else:  # TBZ/TBNZ
        off = (w >> 5) & 0x3fff
        off = off - (1 << 14) if off & (1 << 13) else off
    return pc + 4 * off


def build_id(img):
    data = img[0]
    i = data.find(b'GNU\0')
    while i >= 12:
        namesz, descsz, ntype = struct.unpack_from('<III', data, i - 12)
        if namesz == 4 and ntype == 3 and 0 < descsz <= 64:
            return data[i + 4:i + 4 + descsz].hex()
        i = data.find(b'GNU\0', i + 1)
    return '-'


if __name__ == '__main__':
    main()
