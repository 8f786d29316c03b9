#!/usr/bin/env python3
"""Compare the call stacks of ek_callstacks (the library's stack analysis) with the simulator's
expected-callstacks.txt, line by line, exactly and in order.

usage: stacks_truth.py TRUTH OURS BRANCHES
  BRANCHES: expected-branches.txt (the same samples, for their flags); exit status 0: equal
  under the rules below, 1: a difference

Both files name the same branches samples in the same order ("PID/TID [CPU] IP => ADDR"), then
the location and the frames, innermost first. The truth holds what ran; a decoder knows what
the trace shows. Our frames must be exactly the truth's innermost ones, in order; how many of
them is fixed by these rules (all but rule 5 counted), and nothing else is allowed:

1. Frames entered before the trace started are not in the trace (a stack without a gap
   frame). Per stack, the frames it held when its trace began, and never left since, are
   left out of the truth: its depth at its first sample, lowered to the least depth of any
   later sample (a return below those frames shows that one of them ran again and was left),
   and below the frame a call or an exception
   of the previous sample entered (a sample can show a return and the exception taken right
   after it: an ERET to code where an interrupt comes before its first instruction).
2. Where the trace of a thread begins again (a trace begin, or a context switch to it) after a
   gap, not on the return address of the frame the trace ended with (or where a return lands
   on no frame it knew), the frames entered and left during the gap are not known: the stack
   is forgotten, and says so with a gap frame ("?") at its bottom and nothing above it at
   that line, which appears nowhere else. From there rule 1 starts again (the truth's frames
   at that line are the ones the trace cannot know), with the gap frame staying at the bottom.
   Where the thread's trace ended at a system call, a call or an exception (into code it does
   not see) and begins again at the instruction after it (returning where it left), the
   stack must not be forgotten: there the frames are known. (After a return or a jump the
   next instruction can be reached again any other way: no such rule.)
3. Whose stack a line shows: the thread of the sample, except at the branch where the thread
   of a CPU's trace changes without a trace end before it (a context switch): that branch ran
   on the outgoing thread's stack, which is the one the truth shows (the machine's thread
   that executed it), and rule 1 counts it there.
   The idle task (0/0) has a stack per CPU. With "# per thread and trace source" (the
   recording's samples carry their buffer's thread, perf record --per-thread), every stack is
   keyed by thread and CPU.
4. An exec replaces the program: the kernel rewrites the exception frame the system call
   returns to (the new program's entry) and the old program's frames are gone, inside the
   kernel, where the trace shows nothing of it (the exception return then lands on no frame
   the stack knew: rule 2). From the line where the frames from the innermost exception frame
   down change without a return or an exception (neither ends the other) to the stack's next
   line without an exception frame, only the frames above the exception frame are compared
   (a stack with a gap frame: rule 2).
5. A late sample (the end of a queue's last range, flushed at the end of the trace after its
   thread ran on in another queue: the tool marks it "(late)") shows the stack as that queue
   left it, an earlier time's: its frames are the truth's innermost ones, and it moves
   nothing.
"""
import re
import sys

LINE = re.compile(r'^\s*(-?\d+)/(-?\d+)\s+\[(-?\d+)\]\s+([0-9a-f]+) =>\s+([0-9a-f]+): (.*)$')


def parse(line):
    m = LINE.match(line)
    if not m:
        return None
    pid, tid, cpu, ip, addr, rest = m.groups()
    frames = rest.split(' <- ')
    return (pid, tid, cpu, int(ip, 16), int(addr, 16), frames)


def exc_part(frames):
    """the frames from the innermost exception frame down (None: no exception frame)"""
    for i, f in enumerate(frames):
        if f.startswith('!'):
            return frames[i:]
    return None


def suffix(a, b):
    """a ends b"""
    return len(a) <= len(b) and b[len(b) - len(a):] == a


def main(argv=None, kept=None):
    """kept (a dict, optional) receives, per line index compared without a difference, the
    truth's frames the rules keep (innermost first, as the truth writes them), whether our
    line has a gap frame, and whose stack it is: (frames, gap, (pid, tid)); the frames of a
    late line are the truth's innermost ones, as many as ours (rule 5 compares those); after
    an exec, the truth's above the exception frame and ours from it down (rule 4)."""
    argv = argv or sys.argv
    truth = open(argv[1]).read().splitlines()
    ours = open(argv[2]).read().splitlines()
    # the flags column of `-F pid,tid,cpu,flags,...`: two blanks after the CPU's "]", 21 wide
    flags = [set(l[l.index(']') + 3:l.index(']') + 25].split())
             for l in open(argv[3]).read().splitlines()]
    entered = set()  # stacks whose last sample entered a frame (a call, an exception)
    head = ours[0] if ours and ours[0].startswith('#') else ''
    if head:
        ours = ours[1:]
    per_source = 'trace source' in head
    bad = 0
    base, gap, landed = {}, {}, set()
    prev_part, execs, n_exec = {}, set(), 0
    last = {}  # cpu -> (stack key, ended)
    gaps = gap_lines = frames_cmp = frames_left = n_resume = 0
    last_end = {}  # stack key -> ip of the branch its trace last ended at
    n = min(len(truth), len(ours))
    if len(truth) != len(ours):
        print(f'{len(truth)} truth lines, {len(ours)} lines of ours')
        bad += 1

    def flags_at(k):
        return flags[k] if k < len(flags) else set()

    def differ(k, why):
        nonlocal bad
        bad += 1
        if bad <= 8:
            print(f'line {k + 1}: {why}:\n  truth: {truth[k]}\n  ours:  {ours[k]}')

    for k in range(n):
        t, o = parse(truth[k]), parse(ours[k].split('\t')[0])
        if not t or not o:
            differ(k, 'unreadable')
            continue
        if t[:5] != o[:5]:
            differ(k, 'another sample')
            continue
        pid, tid, cpu, ip, addr, tf = t
        late = o[5][-1].endswith(' (late)')
        if late:
            o[5][-1] = o[5][-1][:-len(' (late)')]
        if late:
            # rule 5: a late sample shows the stack of its time (its frames are compared) and
            # moves nothing
            lf = [f for f in o[5][1:] if f != '?']
            frames_cmp += len(lf)
            if o[5][0] != tf[0] or lf != tf[1:1 + len(lf)]:
                differ(k, 'frames of a late sample differ')
            elif kept is not None:
                kept[k] = (tf[:1 + len(lf)], o[5][-1] == '?', (pid, tid))
            continue
        key = (pid, tid, cpu) if per_source or (pid, tid) == ('0', '0') else (pid, tid)
        ended = last_end.pop(key, None) if ip == 0 else None
        if addr == 0 and ip != 0 and {'call', 'syscall', 'int'} & flags_at(k):
            last_end[key] = ip  # the trace ended entering code it does not see
        resumes = ended is not None and addr in (ended + 2, ended + 4)
        n_resume += resumes
        owner = key
        prev = last.get(cpu)
        if ip == 0:
            landed.add(key)
        elif prev and not prev[1] and prev[0] != key:
            owner = prev[0]  # rule 3: a context switch, which lands on this thread
            landed.add(key)
        last[cpu] = (key, addr == 0)
        depth = len(tf) - 1
        of = o[5]
        if tf[0] != of[0]:
            differ(k, 'another location')
            continue
        frames = of[1:]
        g = bool(frames) and frames[-1] == '?'
        if g:
            frames = frames[:-1]
        if '?' in frames:
            differ(k, 'a gap frame above the bottom')
            continue
        was_landed = owner in landed
        if ip != 0 and owner == key:
            landed.discard(owner)
        words = flags[k] if k < len(flags) else set()
        entered_before = owner in entered
        if owner == key and addr != 0 and {'call', 'syscall', 'int'} & words:
            entered.add(owner)
        else:
            entered.discard(owner)
        if owner == key and {'return', 'iret', 'sysret'} & words:
            landed.add(owner)  # rule 2: a return may land on no frame the stack knew
        # rule 4: an exec rewrites the exception frame below what the trace shows
        part = exc_part(tf[1:])
        pp = prev_part.get(owner)
        prev_part[owner] = part
        if owner in execs:
            if part is None:
                execs.discard(owner)
        elif pp is not None and part is not None and not suffix(pp, part) and not suffix(part, pp):
            execs.add(owner)
            n_exec += 1
        if owner in execs and not g:
            i = len(tf) - 1 - len(part)
            frames_cmp += i
            if frames[:i] != tf[1:1 + i] or len(frames) <= i or not frames[i].startswith('!'):
                differ(k, 'frames differ above the exception frame an exec rewrote')
            elif kept is not None:  # below the exception frame: what the trace shows (ours)
                kept[k] = (tf[:1 + i] + frames[i:], g, owner[:2])
            continue
        b = base.get(owner)
        b = depth if b is None else min(b, depth)
        if entered_before and ip != 0:
            b = min(b, depth - 1)
        base[owner] = b
        if g and not frames and resumes and not gap.get(owner):
            differ(k, 'the stack was forgotten where the trace resumed after the instruction '
                      'it ended at')
            continue
        if g and was_landed and not frames:
            # rule 2: the stack was forgotten here; rule 1 starts again
            if not gap.get(owner) or b != depth:
                gaps += 1
            gap[owner] = True
            b = base[owner] = depth
        elif g and not gap.get(owner):
            differ(k, 'a gap frame where the trace did not begin again')
            continue
        frames_cmp += len(frames)
        gap_lines += g
        want = tf[1:1 + depth - b]  # rules 1 and 2
        frames_left += b
        if want != frames:
            differ(k, 'frames differ (the truth less the frames the trace cannot know: '
                      f'{" <- ".join(want)})')
        elif kept is not None:
            kept[k] = ([tf[0]] + want, g, owner[:2])
    print(f'{n} lines, {frames_cmp} frames compared, {frames_left} frames entered before the trace '
          f'left out; {gaps} gaps, {gap_lines} lines with a gap frame, {n_exec} execs, '
          f'{n_resume} resumptions after the end; '
          f'{bad} differences')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
