#!/usr/bin/env python3
"""Compare etmkit's folded stacks (export --format=folded --root=tid) with folded stacks built
from the simulator's expected-callstacks.txt, exactly.

usage: folded_truth.py TRUTH OURS BRANCHES FOLDED
  TRUTH:    expected-callstacks.txt
  OURS:     ek_callstacks' lines with EK_CALLSTACKS_NINSN set (each sample's ninsn after a tab)
  BRANCHES: expected-branches.txt
  FOLDED:   `etmkit export --format=folded --root=tid` of the same recording
exit status 0: equal, 1: a difference

The truth's folded stacks: per branches sample, the truth's frames that the rules of
stacks_truth.py keep (frames entered before the trace began, or before a gap, are not in the
trace; a gap frame stays at the bottom of a stack that lost its thread; a context switch's
branch is the outgoing thread's; an exec rewrites the exception frame: from the exception
frame down, the frames are what the trace shows until the return), every frame named by
the symbol of its return address ("sym+0xoff" less "+0xoff"; "!" of an exception frame
dropped), the leaf by the sample's location, then, outermost first:
"PID/TID;[gap];outer;...;leaf", weighed by the sample's ninsn (ours: the count of instructions
is checked against the session's by folded_vs_gen.sh; this compares where they went). Our
root frame "comm-PID/TID" is read as "PID/TID" (the truth has no comm). The stacks must be
equal thread by thread (until 2026-12-07 only all threads together: the stacks gave the branch
of a context switch to the outgoing thread only where the switch was in one trace source,
stacks_truth.py's rule 3 wherever the CPU's trace went on, and arbitration-stress seed 3 put 9
instructions in another thread's stack; the stacks now follow a CPU across its sources). A
name without a symbol ("[unknown]" in the truth, "[DSO]" or "[unknown]" in ours) compares as
"[unknown]".
"""
import io
import os
import re
import sys
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stacks_truth  # noqa: E402

OFF = re.compile(r'\+0x[0-9a-f]+$')
ROOT = re.compile(r'^(.*)-(-?\d+)/(-?\d+)$')


def norm(name):
    if name.startswith('[') and name.endswith(']') and name != '[gap]':
        return '[unknown]'
    return name


def func(frame):
    if frame.startswith('!'):
        frame = frame[1:]
    return norm(OFF.sub('', frame).replace(';', ':'))


def fold_threads(stacks):
    out = {}
    for key, w in stacks.items():
        key = key.split(';', 1)[1]
        out[key] = out.get(key, 0) + w
    return out


def main():
    truth, ours, branches, folded = sys.argv[1:5]

    kept = {}
    log = io.StringIO()
    with redirect_stdout(log):
        st = stacks_truth.main(['', truth, ours, branches], kept)
    if st:
        print('the call stacks differ from the truth (stacks_vs_gen.sh):')
        print(log.getvalue()[:2000])
        return 1
    want = {}
    lines = open(ours).read().splitlines()
    if lines and lines[0].startswith('#'):
        lines = lines[1:]
    bad = 0
    total = 0
    for k, l in enumerate(lines):
        if '\t' not in l:
            print(f'line {k + 1} of ours has no ninsn: {l}')
            return 1
        w = int(l.rsplit('\t', 1)[1])
        if not w:
            continue
        total += w
        if k not in kept:
            print(f'line {k + 1}: weighed, but not compared with the truth: {l}')
            return 1
        frames, gap, (pid, tid) = kept[k]
        stack = [f'{pid}/{tid}'] + (['[gap]'] if gap else [])
        stack += [func(f) for f in reversed(frames[1:])] + [func(frames[0])]
        key = ';'.join(stack)
        want[key] = want.get(key, 0) + w
    got = {}
    raw = open(folded).read().splitlines()
    if raw != sorted(raw):
        print('the folded stacks are not sorted')
        bad += 1
    seen = set()
    for l in raw:
        stack, count = l.rsplit(' ', 1)
        if stack in seen:
            print(f'a stack twice: {stack}')
            bad += 1
        seen.add(stack)
        fr = stack.split(';')
        m = ROOT.match(fr[0])
        if not m:
            print(f'no comm-PID/TID root frame: {l}')
            bad += 1
            continue
        fr = [f'{m.group(2)}/{m.group(3)}'] + [norm(f) for f in fr[1:]]
        key = ';'.join(fr)
        got[key] = got.get(key, 0) + int(count)
    # the stacks of all threads together: exactly
    wa, ga = fold_threads(want), fold_threads(got)
    for key in sorted(set(wa) | set(ga)):
        if wa.get(key) != ga.get(key):
            bad += 1
            if bad <= 10:
                print(f'{key}: truth {wa.get(key, 0)}, ours {ga.get(key, 0)}')
    # thread by thread: exactly
    for key in sorted(set(want) | set(got)):
        if want.get(key) != got.get(key):
            bad += 1
            if bad <= 10:
                print(f'{key}: truth {want.get(key, 0)}, ours {got.get(key, 0)}')
    print(f'{len(wa)} stacks from the truth, {len(ga)} of ours, {len(want)} per thread, '
          f'{total} instructions; {bad} differences')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
