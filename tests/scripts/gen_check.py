#!/usr/bin/env python3
"""Compare `etmkit script --itrace=b` output with an `etmkit gen` ground truth, allowing only
the differences README.md documents (helper of script_vs_gen.sh; not a test by itself).

usage: gen_check.py TRUTH OURS BRANCHES_TSV [--ete] [--no-kernel]

Both texts are whitespace-folded sample lines. The ground truth is perf 6.1's sample policy
applied to what really ran; etmkit differs from it, by design, in these ways only:
  end   at the end of a block (AUX slice) and of the trace, perf 6.1 (with OpenCSD 1.3.3) drops
        what its decoder had not yet delivered when the next block resets it: etmkit shows it.
        So etmkit may have more "tr end ... => 0" lines and more branch samples, each of them a
        branch that really ran (it is in truth.branches.tsv), and perf's "tr end" lines may
        move: a truth line missing from etmkit must be a "tr end" line.
  ete   perf 6.1 gives ETE exceptions no flags; etmkit gives them ETMv4's (syscall, int, ...):
        with --ete the exception words are removed from both before comparing.
  nokernel  without a kernel image (--no-kernel) the truth's kernel code is turned into the
        gaps a decoder must show: "tr end <branch> => 0" and "tr strt 0 => <user address>".
Order: the lines are compared as multisets with the rules above, and the verdict says whether
the order is also the same (insertions and deletions of those lines only); where several
trace IDs share a queue the interleaving of queues can differ from perf's at block ends (the
same cause as "end").
Exit 0 when the output passes, 1 otherwise (with a report)."""
import collections
import os
import re
import subprocess
import sys
import tempfile

EXC = re.compile(r'\b(syscall|sysret|hw int|int|iret)\b ?')


def kern(a):
    return len(a) == 16 and a[0] in '89abcdef'


def parse(line):
    left, _, right = line.partition(' => ')
    L = left.split(' ')
    R = right.split(' ')
    return L, R


def nokernel(lines):
    out = []
    for line in lines:
        L, R = parse(line)
        if len(L) < 5:
            out.append(line)
            continue
        frm, to = L[-3], R[0]
        flags = ' '.join(L[2:-3])
        if kern(frm):
            if to != '0' and not kern(to):
                out.append('%s %s tr strt 0 [unknown] ([unknown]) => %s' %
                           (L[0], L[1], line.partition(' => ')[2]))
            continue
        if frm == '0' and kern(to):
            continue
        if kern(to):
            out.append('%s %s tr end %s %s %s %s => 0 [unknown] ([unknown])' %
                       (L[0], L[1], flags, L[-3], L[-2], L[-1]))
            continue
        out.append(line)
    return out


def strip_exc(lines):
    return [re.sub(' +', ' ', EXC.sub('', l)).strip() for l in lines]


def executed(tsv):
    pairs = set()
    with open(tsv) as f:
        for row in f:
            if row.startswith('#'):
                continue
            c = row.rstrip('\n').split('\t')
            if len(c) >= 9 and c[8] == '1':
                pairs.add((c[5].lstrip('0') or '0', c[6].lstrip('0') or '0'))
    return pairs


def is_trend(l):
    return ' tr end ' in ' ' + l + ' ' and l.endswith('=> 0 [unknown] ([unknown])')


def is_trstrt(l):
    return ' tr strt 0 [unknown] ([unknown]) => ' in l


def ok_extra(l, pairs):
    if is_trend(l) or is_trstrt(l):
        return True
    L, R = parse(l)
    if len(L) < 5 or not R:
        return False
    return (L[-3], R[0]) in pairs


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    ete = '--ete' in sys.argv
    nok = '--no-kernel' in sys.argv
    truth = [l.rstrip('\n') for l in open(args[0])]
    ours = [l.rstrip('\n') for l in open(args[1])]
    pairs = executed(args[2]) if len(args) > 2 else set()
    if nok:
        truth = nokernel(truth)
    if ete:
        truth, ours = strip_exc(truth), strip_exc(ours)
    ct, co = collections.Counter(truth), collections.Counter(ours)
    missing = ct - co   # in the truth, not in ours
    extra = co - ct     # in ours, not in the truth
    bad_missing = [l for l in missing.elements() if not is_trend(l)]
    bad_extra = [l for l in extra.elements() if not ok_extra(l, pairs)]
    if bad_missing or bad_extra:
        print('undocumented differences: %d truth lines missing, %d extra lines' %
              (len(bad_missing), len(bad_extra)))
        for l in bad_missing[:5]:
            print('  missing: ' + l[:200])
        for l in bad_extra[:5]:
            print('  extra:   ' + l[:200])
        return 1
    common = ct & co
    # order: does an edit script of insertions and deletions of those lines alone turn the
    # truth into ours? (diff finds one if there is one)
    how = 'in the same order'
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, 't'), os.path.join(d, 'o')
        open(a, 'w').write('\n'.join(truth) + '\n')
        open(b, 'w').write('\n'.join(ours) + '\n')
        out = subprocess.run(['diff', a, b], capture_output=True, text=True).stdout
    for l in out.splitlines():
        if (l.startswith('< ') and not is_trend(l[2:])) or \
           (l.startswith('> ') and not ok_extra(l[2:], pairs)):
            how = ('in another order where queues interleave (at block ends, and where perf '
                   'estimates time from instructions it decoded and etmkit could not)')
            break
    print('%d truth lines: %d shown by perf 6.1 and etmkit %s; %d more in etmkit (branches and '
          'trace ends perf drops at block ends), %d "tr end" lines of perf moved' %
          (len(truth), sum(common.values()), how, sum(extra.values()), sum(missing.values())))
    return 0


if __name__ == '__main__':
    sys.exit(main())
