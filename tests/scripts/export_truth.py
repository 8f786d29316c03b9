#!/usr/bin/env python3
"""Range and branch counts of what ran, from `etmkit gen`'s ground truth (issue 14 item 5).

usage: export_truth.py [--no-kernel-code] OUTDIR RECORDS   (OUTDIR: a gen output; RECORDS:
`etmkit dump --records` of its perf.data); export_truth.py --profile BRANCHLIST; export_truth.py
--check [--no-kernel-code] OUTDIR RECORDS BRANCHLIST (compares the two, exit 1 when they
differ). Prints one line per count, "PATH KIND A B COUNT" (KIND range or branch, hex
addresses in the binary's own address space, "-" outside the binary), sorted; `profile_lines`
turns an etmkit branch list into the same lines.

The model (docs/PROFILES.md, "From samples"): per CPU, the taken branches of truth.branches.tsv
in order; an address is traced when its exception level is in the session's el_mask and the
thread that runs it is traced (all threads system-wide, else the processes the recording names).
A branch's source runs in its row's thread; its target in the thread of the CPU's next row (the
same but at a context switch: the ret at the end of the switch goes to the next thread). A run goes
from a traced branch target to the next executed instruction that ends it: a taken branch's
source, or for an interrupt (kind irq, whose `from` is the preferred return address, not
executed) the instruction before it; it is a range when both ends are in one mapping. A taken
branch from a traced address counts for its binary, with the target when that is in the same
mapping, else "-" (and then "- -> target" for the target's binary when that is traced). An
interrupt is not a branch. Kernel addresses are [kernel.kallsyms]'s own, but in a module's map
(a .ko kernel MMAP record): offsets in that map. A trace unit traces from the session's enable to
its disable (truth.trace.tsv; an enable at a traced exception level starts a run at the
instruction it names); without that file every unit is on throughout. --no-kernel-code: the
decoder has no kernel code (no vmlinux), so it cannot follow kernel trace: count as for a trace of
user space only (a branch into the kernel goes to "-", one out of it comes from "-").
"""
import re
import struct
import sys


def elf_segments(path):
    """PT_LOAD (offset, filesz, vaddr) in file order; None when not an ELF file."""
    try:
        with open(path, 'rb') as f:
            d = f.read()
    except OSError:
        return None
    if d[:4] != b'\x7fELF' or d[4] != 2:
        return None
    e = '<' if d[5] == 1 else '>'
    phoff, = struct.unpack_from(e + 'Q', d, 0x20)
    phentsize, phnum = struct.unpack_from(e + 'HH', d, 0x36)
    segs = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, p_memsz, _ = struct.unpack_from(
            e + 'IIQQQQQQ', d, phoff + i * phentsize)
        if p_type == 1:
            segs.append((p_offset, max(p_filesz, p_memsz), p_vaddr))
    return segs


def main(args, nottaken=None):
    """nottaken (a dict): gets (path, address) -> the not-taken executions (truth rows of kind
    bcond, taken 0) inside the counted ranges"""
    no_kernel_code = args[0] == '--no-kernel-code'
    if no_kernel_code:
        args = args[1:]
    out, records = args[0], args[1]
    summary = open(out + '/truth.summary').read()
    el_mask = int(re.search(r'el_mask=(\d+)', summary).group(1))
    if no_kernel_code:
        el_mask &= 1
    # a session of processes (not system-wide) traces their threads only: the pids the
    # recording names (COMM records)
    system = re.search(r'mode=system', summary) is not None
    traced_pids = set()
    maps = []   # pid, start, end, pgoff, path, t
    modules = []  # start, end, path
    forks = {}  # pid -> ppid
    mm = re.compile(r'#\d+ MMAP2? \[\S+\] misc (\S+): (\d+)/\d+: \[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ '
                    r'(0x[0-9a-f]+)[^\]]*\]: (?:\S+ )?(\S+) \{\S+ time (\d+)')
    fk = re.compile(r'#\d+ FORK \[\S+\]: (\d+):\d+ \(ppid (\d+):\d+\)')
    cm = re.compile(r'#\d+ COMM \[\S+\]: .*:(\d+)/\d+')
    for line in open(records):
        m = cm.search(line)
        if m:
            traced_pids.add(int(m.group(1)))
        m = mm.search(line)
        if m:
            misc, pid, start, length, pgoff, path, t = m.groups()
            kernel = int(misc, 16) & 7 == 1
            if kernel:
                # the kernel: [kernel.kallsyms] at its own addresses; a module (.ko, relocatable):
                # offsets in its map
                if path.endswith('.ko'):
                    s = int(start, 16)
                    modules.append((s, s + int(length, 16), path))
                continue
            s = int(start, 16)
            maps.append([int(pid), s, s + int(length, 16), int(pgoff, 16), path, int(t), None])
            continue
        m = fk.search(line)
        if m and m.group(1) != m.group(2):
            forks[int(m.group(1))] = int(m.group(2))
    # a map lasts until a later map of its process overlaps it
    for i, a in enumerate(maps):
        a[6] = 1 << 64
        for b in maps[i + 1:]:
            if b[0] == a[0] and b[1] < a[2] and a[1] < b[2] and b[5] >= a[5]:
                a[6] = b[5]
                break
    segs = {}
    by_pid = {}  # pid -> [(index, map)] in record order
    for i, m in enumerate(maps):
        by_pid.setdefault(m[0], []).append((i, m))

    def locate(pid, addr, t):
        """(path, mapping, vaddr, load_base) or None."""
        if addr >> 63:
            for i, (ms, me, mp) in enumerate(modules):
                if ms <= addr < me:
                    return (mp, -1 - i, addr - ms, 0)
            return ('[kernel.kallsyms]', 0, addr, 0)
        for _ in range(16):
            cands = [(i, m) for i, m in by_pid.get(pid, ()) if m[1] <= addr < m[2]]
            pick = None
            for i, m in cands:
                if m[5] <= t < m[6]:
                    pick = (i, m)
            if not pick:
                after = [(i, m) for i, m in cands if m[5] > t]
                pick = after[0] if after else (cands[-1] if cands else None)
            if pick:
                i, m = pick
                if m[4] not in segs:
                    segs[m[4]] = elf_segments(out + '/symfs' + m[4])
                sg = segs[m[4]]
                if not sg:
                    return None
                fo = addr - m[1] + m[3]
                for off, size, vaddr in sg:
                    if off <= fo < off + size:
                        return (m[4], i + 1, fo - off + vaddr, sg[0][2])
                return None
            if pid not in forks:
                return None
            pid = forks[pid]
        return None

    def traced(addr):
        return bool(el_mask & (2 if addr >> 63 else 1))

    counts = {}

    def add(path, kind, a, b):
        k = (path, kind, a, b)
        counts[k] = counts.get(k, 0) + 1

    start = {}  # cpu -> loc of the run's first instruction
    rows = [l.rstrip('\n').split('\t') for l in open(out + '/truth.branches.tsv') if not l.startswith('#')]
    next_pid = [None] * len(rows)  # pid of the CPU's next row
    last = {}
    for i in range(len(rows) - 1, -1, -1):
        next_pid[i] = last.get(rows[i][1])
        last[rows[i][1]] = int(rows[i][2])

    def thread_traced(pid):
        return system or pid in traced_pids

    # where sessions enable and disable trace units (truth.trace.tsv; every unit is on
    # throughout without it): events by the row they come before
    events = {}
    enabled = {}
    last_row = 0
    try:
        with open(out + '/truth.trace.tsv') as f:
            for l in f:
                if l.startswith('#'):
                    continue
                row, et, ecpu, ev, pc, eel, epid, etid = l.rstrip('\n').split('\t')
                events.setdefault(int(row), []).append((int(et), int(ecpu), ev, pc, int(epid)))
                # a unit is enabled and disabled in turn, rows in order, all off at the end
                if int(row) < last_row or (ev == 'on') == enabled.get(int(ecpu), False):
                    sys.exit('truth.trace.tsv: %s out of order: %s' % (ev, l.strip()))
                last_row = int(row)
                enabled[int(ecpu)] = ev == 'on'
        if any(enabled.values()):
            sys.exit('truth.trace.tsv: a trace unit is still enabled at the end')
        enabled = {}
    except FileNotFoundError:
        enabled = None

    pending = {}  # cpu -> not-taken rows (pid, address, time) of the run so far

    def apply_events(row):
        for et, ecpu, ev, pc, epid in events.pop(row, []):
            start.pop(ecpu, None)
            pending.pop(ecpu, None)
            enabled[ecpu] = ev == 'on'
            if ev == 'on' and pc != '-':
                a = int(pc, 16)
                loc = locate(epid, a, et) if traced(a) and thread_traced(epid) else None
                if loc:
                    start[ecpu] = loc

    def unit_on(cpu):
        return enabled is None or enabled.get(cpu, False)

    for i, (t, cpu, pid, tid, el, frm, to, kind, taken) in enumerate(rows):
        if enabled is not None:
            apply_events(i)
        if taken != '1':
            if nottaken is not None and kind == 'bcond' and int(cpu) in start:
                pending.setdefault(int(cpu), []).append((int(pid), int(frm, 16), int(t)))
            continue
        t, cpu, pid, frm, to = int(t), int(cpu), int(pid), int(frm, 16), int(to, 16)
        to_pid = pid if next_pid[i] is None else next_pid[i]
        on = unit_on(cpu)
        from_on, to_on = on and thread_traced(pid), on and thread_traced(to_pid)
        irq = kind == 'irq'
        end = frm - 4 if irq else frm
        s = start.pop(cpu, None)
        pend = pending.pop(cpu, [])
        e = locate(pid, end, t) if traced(end) and from_on else None
        if s and e and s[1] == e[1] and s[0] == e[0] and s[2] <= e[2]:
            add(s[0], 'range', s[2], e[2])
            for ppid, a, pt in pend if nottaken is not None else ():
                loc = locate(ppid, a, pt)
                if loc and loc[0] == s[0] and loc[1] == s[1]:
                    nottaken[(loc[0], loc[2])] = nottaken.get((loc[0], loc[2]), 0) + 1
        tl = locate(to_pid, to, t) if traced(to) and to_on else None
        if not irq and traced(frm) and from_on:
            f = locate(pid, frm, t)
            same = f and tl and f[0] == tl[0] and f[1] == tl[1]
            if f:
                add(f[0], 'branch', f[2], tl[2] if same else None)
            if tl and not same:
                add(tl[0], 'branch', None, tl[2])
        if tl:
            start[cpu] = tl
    lines = []
    for (path, kind, a, b), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] if kv[0][2] is not None else -1, kv[0][3] if kv[0][3] is not None else -1)):
        lines.append('%s %s %s %s %d\n' % (path, kind, '-' if a is None else '%x' % a,
                                            '-' if b is None else '%x' % b, n))
    return ''.join(lines)


def profile_lines(path):
    """An etmkit branch list as the same lines (addresses of the branch list, sorted)."""
    binary, section, out = None, None, []
    for line in open(path):
        w = line.split()
        if w[0] == 'binary':
            binary = w[3]
        elif w[0] in ('ranges', 'addresses', 'branches', 'end', 'etmkit-branch-list'):
            section = w[0]
        elif section == 'ranges':
            out.append((binary, 'range', w[0], w[1], w[2]))
        elif section == 'branches':
            out.append((binary, 'branch', w[0], w[1], w[2]))
    key = lambda r: (r[0], r[1], -1 if r[2] == '-' else int(r[2], 16), -1 if r[3] == '-' else int(r[3], 16))
    return ''.join(' '.join(r) + '\n' for r in sorted(out, key=key))


def check(args):
    """--check [--no-kernel-code] OUTDIR RECORDS BRANCHLIST: 0 when the branch list's lines
    equal the truth's, else the first differences (diff -u of truth and profile) and 1."""
    want = main(args[:-1]).splitlines(True)
    got = profile_lines(args[-1]).splitlines(True)
    if not want:
        sys.stdout.write('the truth counts nothing\n')
        return 1
    if want == got:
        return 0
    import difflib
    d = list(difflib.unified_diff(want, got, 'truth', 'profile', n=0))
    sys.stdout.write('%d truth lines, %d profile lines; first differences:\n%s' %
                     (len(want), len(got), ''.join(d[:14])))
    return 1


if __name__ == '__main__':
    if sys.argv[1] == '--profile':
        sys.stdout.write(profile_lines(sys.argv[2]))
    elif sys.argv[1] == '--check':
        sys.exit(check(sys.argv[2:]))
    else:
        sys.stdout.write(main(sys.argv[1:]))
