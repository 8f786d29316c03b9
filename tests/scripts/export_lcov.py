#!/usr/bin/env python3
"""Coverage of what ran, as lcov records, for tests/scripts/export_lcov.sh (issue 29 item 2).

usage:
  export_lcov.py graft OUTDIR SRCDIR
      gives every AArch64 executable and shared object under OUTDIR/symfs (a gen output) DWARF
      line tables, grafted on with llvm-mc, ld.lld and llvm-objcopy (nothing else of the file
      changes: same code, symbols and build-id). The lines follow RULE below.
  export_lcov.py expect [--no-kernel-code] OUTDIR RECORDS SRCDIR [PATH]
      the lcov records of the truth's counts (export_truth.py: ranges and taken branches of
      what ran) for every binary with a file in OUTDIR/symfs (the kernel: OUTDIR/symfs/vmlinux),
      after graft (PATH: that binary's only). It first checks that the truth's not-taken rows
      (bcond, taken 0) inside the counted ranges number, for every conditional branch,
      its executions minus its taken branches (exit 1 and why if not).
  export_lcov.py expect-profile BRANCHLIST SYMFS
      the same from an etmkit branch list (its ranges and branches), for binaries with no lines
      (a real recording's), files found at SYMFS + path.
  export_lcov.py sources LCOV SRCDIR
      writes every SF file of LCOV under SRCDIR (as many lines as its records need), so that
      genhtml can render them.

RULE (the made-up sources): functions of a binary in address order, number k from 0; function
k is in SRCDIR/<binary file name>_a.c when k is even, _b.c when odd, m = k // 2; its instruction
j (from 0) is on line 1 + 10 * m + (j // 3) % 4 (so a line holds instructions that are not
next to each other), except that function k with k % 5 == 4 has no line (line 0), nor has
code outside the functions.

THE MODEL (docs/PROFILES.md, "Coverage (lcov)"), computed here without etmkit: an instruction
ran as often as the sum of the counts of the ranges holding it; a line counts its most executed
instruction; a function its entry instruction; a conditional branch (B.cond, BC.cond, CBZ,
CBNZ, TBZ, TBNZ) was taken as often as the taken branches from it, and not taken the rest of its
executions. Functions: .symtab (else .dynsym) FUNC and IFUNC symbols of executable sections,
one per address (global, weak, local, then by name); then each .eh_frame FDE (llvm-dwarfdump's
reading) no such function starts at or covers, "fde@<hex>", cut at the next function; without
any, each executable section is one, named after it. Names several functions share get
"@<hex address>". Code: 4-byte instructions in the functions, not after a $d mapping symbol
(until the next one). Functions whose entry has no line are listed in one record named after the
binary's path, line = their number in address order from 1.
"""
import bisect
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_truth  # noqa: E402


class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, 'rb') as f:
            self.d = d = f.read()
        if d[:4] != b'\x7fELF' or d[4] != 2 or d[5] != 1:
            raise ValueError('not a 64-bit little-endian ELF file')
        self.type, self.machine = struct.unpack_from('<HH', d, 16)
        shoff, = struct.unpack_from('<Q', d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
        self.sh = []
        for i in range(shnum):
            name, typ, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
                '<IIQQQQIIQQ', d, shoff + i * shentsize)
            self.sh.append([name, typ, flags, addr, off, size, link, entsize])
        so = self.sh[shstrndx][4]
        for s in self.sh:
            s[0] = self.cstr(so + s[0])

    def cstr(self, off):
        return self.d[off:self.d.index(b'\0', off)].decode()

    def code(self):
        """executable PROGBITS sections: (lo, hi, name, bytes)"""
        return [(s[3], s[3] + s[5], s[0], self.d[s[4]:s[4] + s[5]]) for s in self.sh
                if s[1] == 1 and s[2] & 6 == 6 and s[5]]

    def symbols(self):
        """functions (lo, hi, name), deduplicated; mapping symbols (addr, kind)"""
        tab = [s for s in self.sh if s[1] == 2] or [s for s in self.sh if s[1] == 11]
        funcs, maps = [], []
        for t in tab[:1]:
            strtab = self.sh[t[6]][4]
            for i in range(1, t[5] // t[7]):
                name, info, other, shndx, value, size = struct.unpack_from(
                    '<IBBHQQ', self.d, t[4] + i * t[7])
                if shndx == 0 or shndx >= 0xff00 or not self.sh[shndx][2] & 4:
                    continue
                name = self.cstr(strtab + name)
                typ, bind = info & 15, info >> 4
                if typ == 0 and len(name) >= 2 and name[0] == '$' and name[1] in 'xadt' and \
                        (len(name) == 2 or name[2] == '.'):
                    maps.append((value, name[1]))
                elif typ in (2, 10) and name:
                    funcs.append((value, value + size if size else 0,
                                  {1: 0, 2: 1}.get(bind, 2), name))
        code = self.code()
        funcs.sort(key=lambda f: (f[0], f[2], f[3].encode()))
        uniq = []
        for f in funcs:
            if not uniq or uniq[-1][0] != f[0]:
                uniq.append(f)
        out = []
        for i, (lo, hi, _, name) in enumerate(uniq):
            if not hi:
                last = i + 1 == len(uniq)
                hi = lo if last else uniq[i + 1][0]
                for clo, chi, _, _ in code:
                    if clo <= lo < chi and (last or chi < hi):
                        hi = chi
            out.append((lo, hi, name))
        # FDEs no symbol's function starts at or covers (the last function starting at or
        # before it), the longest of an address, cut at the next function
        los = [f[0] for f in out]
        extra = []
        for lo, hi in self.fdes():
            i = bisect.bisect_right(los, lo)
            if (i and lo < out[i - 1][1]) or not any(c[0] <= lo < c[1] for c in code):
                continue
            if extra and extra[-1][0] == lo:
                continue
            extra.append((lo, hi, 'fde@%x' % lo))
        if extra:
            out = sorted(out + extra)
            out = [(lo, min(hi, out[i + 1][0]) if name.startswith('fde@') and i + 1 < len(out)
                    else hi, name) for i, (lo, hi, name) in enumerate(out)]
        if not out:
            out = [(lo, hi, name) for lo, hi, name, _ in code]
        names = {}
        for f in out:
            names[f[2]] = names.get(f[2], 0) + 1
        out = [(lo, hi, name if names[name] == 1 else '%s@%x' % (name, lo)) for lo, hi, name in out]
        maps.sort()
        return out, maps

    def fdes(self):
        """.eh_frame FDEs with a range: (start, end), by start, the longest first"""
        if not any(s[0] == '.eh_frame' and s[1] == 1 for s in self.sh):
            return []
        txt = subprocess.run(['llvm-dwarfdump', '--eh-frame', self.path], check=True,
                             capture_output=True, text=True).stdout
        r = []
        for m in re.finditer(r' FDE cie=\S+ pc=([0-9a-f]+)\.\.\.([0-9a-f]+)', txt):
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            if hi > lo:
                r.append((lo, hi))
        return sorted(r, key=lambda f: (f[0], -f[1]))


def instructions(elf):
    """(addr, word, function index) of every instruction the model walks, in address order"""
    funcs, maps = elf.symbols()
    code = elf.code()
    kinds = {}
    for a, k in maps:
        kinds[a] = k
    mapaddrs = sorted(kinds)
    out = []
    seen = set()
    for fi, (lo, hi, _) in enumerate(funcs):
        for clo, chi, _, data in code:
            a = max(lo, clo)
            while a < min(hi, chi):
                # the mapping symbol in force
                i = bisect.bisect_right(mapaddrs, a)
                if i and kinds[mapaddrs[i - 1]] == 'd':
                    a = mapaddrs[i] if i < len(mapaddrs) else chi
                    continue
                if a % 4:
                    a += 4 - a % 4
                    continue
                if a + 4 > min(hi, chi):
                    break
                if a not in seen:
                    seen.add(a)
                    out.append((a, struct.unpack_from('<I', data, a - clo)[0], fi))
                a += 4
    out.sort()
    return funcs, out


def is_cond_branch(w):
    if w & 0xff000000 == 0x54000000 and w & 0xf < 14:  # B.cond, BC.cond
        return True
    return w & 0x7e000000 in (0x34000000, 0x36000000)  # CBZ/CBNZ, TBZ/TBNZ


def rule(funcs, insns, srcdir, base):
    """addr -> (file, line) by RULE"""
    lines = {}
    j = {}
    for a, _, fi in insns:
        if fi % 5 == 4:
            continue
        n = j.get(fi, 0)
        j[fi] = n + 1
        f = '%s/%s_%s.c' % (srcdir, base, 'ab'[fi % 2])
        lines[a] = (f, 1 + 10 * (fi // 2) + (n // 3) % 4)
    return lines


def graft(path, srcdir):
    elf = Elf(path)
    if elf.type not in (2, 3) or elf.machine != 183:
        return
    funcs, insns = instructions(elf)
    base = os.path.basename(path)
    lines = rule(funcs, insns, srcdir, base)
    asm = ['.file 1 "%s" "%s_a.c"' % (srcdir, base), '.file 2 "%s" "%s_b.c"' % (srcdir, base)]
    lds = ['SECTIONS {']
    for lo, hi, name, _ in elf.code():
        asm.append('.section %s,"ax",@progbits' % name)
        lds.append('  %s 0x%x : { *(%s) }' % (name, lo, name))
        for a in range(lo, hi - 3, 4):
            f, n = lines.get(a, ('', 0))
            asm.append('.loc %d %d' % (2 if f.endswith('_b.c') else 1, n))
            asm.append('nop')
    lds.append('}')
    asm += ['.section .debug_line,"",@progbits', '.Lline_table_start0:',
            '.section .debug_abbrev,"",@progbits',
            '.uleb128 1', '.uleb128 0x11', '.byte 0', '.uleb128 0x03', '.uleb128 0x08',
            '.uleb128 0x10', '.uleb128 0x17', '.byte 0, 0', '.byte 0',
            '.section .debug_info,"",@progbits', '.long .Linfo_end - .Linfo_start',
            '.Linfo_start:', '.short 4', '.long .debug_abbrev', '.byte 8', '.uleb128 1',
            '.asciz "%s.c"' % base, '.long .Lline_table_start0', '.Linfo_end:']
    w = path + '.lines'
    with open(w + '.s', 'w') as f:
        f.write('\n'.join(asm) + '\n')
    with open(w + '.lds', 'w') as f:
        f.write('\n'.join(lds) + '\n')
    subprocess.run(['llvm-mc', '-filetype=obj', '-triple=aarch64-linux-gnu', '-dwarf-version=4',
                    w + '.s', '-o', w + '.o'], check=True)
    subprocess.run(['ld.lld', '-T', w + '.lds', '-e', '0', w + '.o', '-o', w + '.elf'], check=True)
    secs = ['.debug_line', '.debug_info', '.debug_abbrev']
    subprocess.run(['llvm-objcopy'] + ['--dump-section=%s=%s%s' % (s, w, s) for s in secs] +
                   [w + '.elf', w + '.junk'], check=True)
    subprocess.run(['llvm-objcopy'] + ['--add-section=%s=%s%s' % (s, w, s) for s in secs] +
                   [path], check=True)
    for ext in ['.s', '.lds', '.o', '.elf', '.junk'] + secs:
        os.unlink(w + ext)


def lcov(binpath, elfpath, ranges, branches, srcdir, nottaken=None):
    """lcov text of one binary: ranges [(begin, end, count)], branches [(from, count)];
    nottaken: the truth's not-taken executions by (path, address), which must equal the model's
    (executed - taken) for every conditional branch (else ValueError)"""
    try:
        elf = Elf(elfpath)
    except (OSError, ValueError):
        return ''
    if elf.type not in (2, 3) or elf.machine != 183:
        return ''
    funcs, insns = instructions(elf)
    lines = rule(funcs, insns, srcdir, os.path.basename(elfpath)) if srcdir else {}
    cov = {}
    for b, e, n in ranges:
        for a in range(b, e + 1, 4):
            cov[a] = cov.get(a, 0) + n
    taken = {}
    for a, n in branches:
        taken[a] = taken.get(a, 0) + n
    perline, brs = {}, []
    for a, w, fi in insns:
        fl = lines.get(a)
        if fl:
            perline[fl] = max(perline.get(fl, 0), cov.get(a, 0))
        if is_cond_branch(w):
            brs.append((a, fi, fl, cov.get(a, 0), taken.get(a, 0)))
    if nottaken is not None:
        truth = {a: n for (p, a), n in nottaken.items() if p == binpath}
        for a, _, _, ex, tk in brs:
            if max(ex - tk, 0) != truth.pop(a, 0):
                raise ValueError('%s %x: executed %d, taken %d, but the truth has %d not taken'
                                 % (binpath, a, ex, tk, nottaken.get((binpath, a), 0)))
        if truth:
            raise ValueError('%s: the truth has not-taken rows at %s, not conditional branches '
                             'of the model' % (binpath, ' '.join('%x' % a for a in sorted(truth))))
    out = []
    files = sorted({fl[0] for fl in lines.values()}, key=lambda s: s.encode())

    def brda(line, block, ex, tk):
        if not ex and not tk:
            return ['BRDA:%d,%d,0,-' % (line, block), 'BRDA:%d,%d,1,-' % (line, block)], 0
        nt = max(ex - tk, 0)
        return ['BRDA:%d,%d,0,%d' % (line, block, tk), 'BRDA:%d,%d,1,%d' % (line, block, nt)], \
            (tk > 0) + (nt > 0)

    for f in files:
        fns = sorted(((lines[lo][1], name, cov.get(lo, 0)) for lo, _, name in funcs
                      if lines.get(lo, ('',))[0] == f), key=lambda x: (x[0], x[1].encode()))
        das = sorted((ln, n) for (ff, ln), n in perline.items() if ff == f)
        if not fns and not das:
            continue
        out += ['TN:', 'SF:' + f] + ['FN:%d,%s' % (ln, nm) for ln, nm, _ in fns]
        out += ['FNDA:%d,%s' % (n, nm) for _, nm, n in fns]
        out += ['FNF:%d' % len(fns), 'FNH:%d' % sum(1 for x in fns if x[2])]
        fb = sorted((b for b in brs if b[2] and b[2][0] == f), key=lambda b: (b[2][1], b[0]))
        hit, prev, block = 0, None, 0
        for a, _, fl, ex, tk in fb:
            block = block + 1 if prev == fl[1] else 0
            prev = fl[1]
            t, h = brda(fl[1], block, ex, tk)
            out += t
            hit += h
        out += ['BRF:%d' % (2 * len(fb)), 'BRH:%d' % hit]
        out += ['DA:%d,%d' % d for d in das]
        out += ['LF:%d' % len(das), 'LH:%d' % sum(1 for d in das if d[1]), 'end_of_record']
    pseudo = [(i, lo, name) for i, (lo, _, name) in enumerate(funcs) if lo not in lines]
    if pseudo:
        num = {fi: k + 1 for k, (fi, _, _) in enumerate(pseudo)}
        out += ['TN:', 'SF:' + binpath]
        out += ['FN:%d,%s' % (num[fi], nm) for fi, _, nm in pseudo]
        out += ['FNDA:%d,%s' % (cov.get(lo, 0), nm) for _, lo, nm in pseudo]
        out += ['FNF:%d' % len(pseudo), 'FNH:%d' % sum(1 for _, lo, _ in pseudo if cov.get(lo, 0))]
        hit, nb, prev, block = 0, 0, None, 0
        for a, fi, fl, ex, tk in brs:
            if fl or fi not in num:
                continue
            block = block + 1 if prev == fi else 0
            prev = fi
            t, h = brda(num[fi], block, ex, tk)
            out += t
            hit += h
            nb += 2
        out += ['BRF:%d' % nb, 'BRH:%d' % hit]
        out += ['DA:%d,%d' % (num[fi], cov.get(lo, 0)) for fi, lo, _ in pseudo]
        out += ['LF:%d' % len(pseudo),
                'LH:%d' % sum(1 for _, lo, _ in pseudo if cov.get(lo, 0)), 'end_of_record']
    return ''.join(l + '\n' for l in out)


def from_lines(text):
    """export_truth's 'PATH KIND A B COUNT' lines -> {path: (ranges, branches)}"""
    per = {}
    for l in text.splitlines():
        path, kind, a, b, n = l.rsplit(' ', 4)
        r, br = per.setdefault(path, ([], []))
        if kind == 'range':
            r.append((int(a, 16), int(b, 16), int(n)))
        elif a != '-':
            br.append((int(a, 16), int(n)))
    return per


def main(argv):
    cmd = argv[0]
    if cmd == 'graft':
        out, srcdir = argv[1], argv[2]
        for root, _, names in os.walk(out + '/symfs'):
            for n in sorted(names):
                p = os.path.join(root, n)
                try:
                    graft(p, srcdir)
                except ValueError:
                    pass
        return 0
    if cmd == 'expect':
        args = argv[1:]
        model = [args.pop(0)] if args[0] == '--no-kernel-code' else []
        only = args.pop() if len(args) == 4 else None
        out, records, srcdir = args
        nottaken = {}
        per = from_lines(export_truth.main(model + [out, records], nottaken))
        text = ''
        for path in sorted(per, key=lambda s: s.encode()):
            if only and path != only:
                continue
            elf = out + '/symfs' + ('/vmlinux' if path == '[kernel.kallsyms]' else path)
            if path == '[kernel.kallsyms]' and model:
                continue
            try:
                text += lcov(path, elf, per[path][0], per[path][1], srcdir, nottaken)
            except ValueError as e:
                sys.exit('export_lcov.py: %s' % e)
        sys.stdout.write(text)
        return 0
    if cmd == 'expect-profile':
        bl, symfs = argv[1], argv[2]
        per = from_lines(export_truth.profile_lines(bl))
        sys.stdout.write(''.join(lcov(p, symfs + p, per[p][0], per[p][1], None)
                                 for p in sorted(per, key=lambda s: s.encode())))
        return 0
    if cmd == 'sources':
        need = {}
        sf = None
        for l in open(argv[1]):
            if l.startswith('SF:'):
                sf = l[3:].rstrip('\n')
            elif l[:3] in ('DA:', 'FN:') or l.startswith('BRDA:'):
                n = int(l.split(':', 1)[1].split(',')[0])
                need[sf] = max(need.get(sf, 0), n)
        for f, n in need.items():
            if not f.startswith(argv[2] + '/'):
                continue
            os.makedirs(os.path.dirname(f), exist_ok=True)
            with open(f, 'w') as o:
                o.write(''.join('/* line %d */\n' % i for i in range(1, n + 1)))
        return 0
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
