#!/usr/bin/env python3
"""The call chains of `etmkit script --itrace=bgN -F pid,tid,cpu,flags,ip,sym,symoff,addr,callindent`
as the lines of ek_callstacks (tests/tools/callstacks.c), for stacks_truth.py, and a check of
the callindent column against them (tests/scripts/script_calltrace.sh).

usage: chains_as_stacks.py SCRIPT_OUTPUT > STACKS

A sample is its line ("PID/TID [CPU]", the flags column, the callindent column), its chain
(one line per entry: the ip, then the return addresses innermost first; address 0 is a gap
frame) and its " => ADDR LOC" line. Out: "PID/TID [CPU] IP => ADDR: LOC <- FRAME ...", LOC
being the ip's (the target's at a trace begin), "?" for a gap frame. Exception frames are not
marked in a chain (perf's has no marks): compare with a truth whose "!" marks are taken out.

The callindent column of a line with a name (a call's or trace begin's target, the function a
return or trace end leaves) must be indented by 4 blanks per level, the level being the
chain's known frames (gap frames left out), one more for a call (call, syscall, int): checked
here; exit status 1 and the first differences on stderr when it is not.
"""
import re
import sys

HEAD = re.compile(r'^\s*(-?\d+)/(-?\d+)\s+\[(-?\d+)\] (.*)$')
ENTRY = re.compile(r'^\t\s*([0-9a-f]+) (.*)$')
TO = re.compile(r'^ =>\s+([0-9a-f]+) (.*)$')
HEX = re.compile(r'^[0-9a-f]+$')
CALLS = {'call', 'syscall', 'int'}


def main():
    lines = open(sys.argv[1]).read().splitlines()
    out = ['# per thread']
    bad = checked = 0
    i = 0
    while i < len(lines):
        m = HEAD.match(lines[i])
        if not m:
            sys.exit(f'line {i + 1}: not a sample line: {lines[i]!r}')
        pid, tid, cpu, rest = m.groups()
        flags, indent = set(rest[:24].split()), rest[24:]
        at = i + 1
        i += 1
        chain = []
        while i < len(lines) and ENTRY.match(lines[i]):
            a, loc = ENTRY.match(lines[i]).groups()
            chain.append((int(a, 16), loc))
            i += 1
        t = TO.match(lines[i]) if i < len(lines) else None
        if not t or not chain:
            sys.exit(f'line {i + 1}: a sample without its chain or target')
        i += 1
        addr, aloc = int(t.group(1), 16), t.group(2)
        ip, loc = chain[0]
        frames = ['?' if a == 0 else f for a, f in chain[1:]]
        out.append(f'{int(pid):5d}/{int(tid):<5d} [{int(cpu):03d}]  {ip:16x} => {addr:16x}: ' +
                   ' <- '.join([aloc if ip == 0 else loc] + frames))
        name = indent.strip()
        if name:
            level = sum(1 for f in frames if f != '?') + (1 if flags & CALLS else 0)
            want = level * 4 + (16 - len(name) if HEX.match(name) and len(name) < 16 else 0)
            lead = len(indent) - len(indent.lstrip(' '))
            checked += 1
            if lead != want:
                bad += 1
                if bad <= 5:
                    print(f'line {at}: callindent indented by {lead}, the chain says {want}: '
                          f'{lines[at - 1]!r}', file=sys.stderr)
    print('\n'.join(out))
    print(f'{checked} callindent names checked, {bad} wrongly indented', file=sys.stderr)
    return 1 if bad else 0


sys.exit(main())
