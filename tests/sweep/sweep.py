#!/usr/bin/env python3
"""Damaged-input sweeps through the etmkit CLI (tests/scripts/sweep_*.sh call this).

    sweep.py perf|snapshot|script [--scale N] [--seed S] [--verbose]

Inputs: our own seeds (fuzz/corpus/perf, the hand-made snapshot archives in
fuzz/corpus/snapshot) and, when $ETMKIT_SHARED exists, the real recordings and a selection of
snapshots, read in place (mutated copies go to a temporary folder only).

Mutations (deterministic for a seed; --scale multiplies the counts):
  - truncation at many points; single-bit flips at seeded random offsets;
  - perf.data: header section offsets/sizes, feature-table entries, record size fields
    (0, 8, 0xffff), record types, AUXTRACE size/offset/cpu, AUX offset/size (0, file size,
    near 2^64, and AUX offsets that loop back), AUXTRACE_INFO CPU counts and parameter counts;
  - snapshots: trace buffer truncated/flipped/emptied/removed, INI values (addresses,
    lengths, offsets, registers) set to 0, the file size and near 2^64, INI files truncated.

Each damaged input runs through the CLI with a time bound. Asserted for every run:
  - no crash: exit status < 128, no sanitizer report, no timeout (hang);
  - a failing run says why on stderr; stderr stays short without --verbose (one line per
    problem kind: at most MAX_STDERR_LINES lines, each at most MAX_LINE bytes);
  - a run that still listed valid data exits as the clean run did (damage alone does not
    change the exit status), or 0 when the clean run listed none (it exited 1: nothing
    usable; the damage made something usable) -- unless --strict is given, which must then exit non-zero when
    warnings or errors were reported (checked when the command has --strict; notes, which say
    nothing was lost, do not count);
  - (normal build, when /usr/bin/time exists) peak memory within 1.5x the clean run's + 32 MiB.
Prints one line per failure and a summary; exit 0 pass, 1 fail, 77 skip.
"""
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

MAX_STDERR_LINES = 60
MAX_LINE = 1024
TIME_LIMIT = 60 if os.environ.get('ETMKIT_SANITIZE') in ('1', 'ON', 'TRUE', 'true') else 20
SANITIZE = os.environ.get('ETMKIT_SANITIZE') in ('1', 'ON', 'TRUE', 'true')
BIN = os.environ.get('ETMKIT_BIN', 'build/etmkit')
SRC = os.environ.get('ETMKIT_SRC', '.')
SHARED = os.environ.get('ETMKIT_SHARED', '')
TIME = '/usr/bin/time' if os.path.exists('/usr/bin/time') and not SANITIZE else None
SAN_PATTERNS = re.compile(rb'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|'
                          rb'runtime error:|Segmentation fault|Assertion .* failed|FUZZ INVARIANT')

PROBLEM = re.compile(rb'\b(warning|error): ')

U64_MAX = (1 << 64) - 1
# Runs per input (times --scale): the mutations are drawn down to this many, deterministically.
BUDGET = 10 if SANITIZE else 36


def budget(muts, rng, scale):
    muts = list(muts)
    n = BUDGET * scale
    if len(muts) <= n:
        return muts
    keep = sorted(rng.sample(range(len(muts)), n))
    return [muts[i] for i in keep]


class Run:
    def __init__(self, rc, out_valid, err, rss, timed_out):
        self.rc, self.out_valid, self.err, self.rss, self.timed_out = rc, out_valid, err, rss, timed_out


class Sweep:
    def __init__(self, cmd, valid_re, scale, seed, verbose):
        self.cmd = cmd              # e.g. ['dump'] or ['dump', '--format=ocsd']
        self.valid_re = valid_re    # bytes regex: a stdout line showing valid data
        self.scale = scale
        self.seed = seed
        self.verbose = verbose
        self.nruns = 0
        self.failures = []
        self.tmp = tempfile.mkdtemp(prefix='etmkit-sweep-')
        self.has_strict = b'--strict' in self.help_text()

    def help_text(self):
        p = subprocess.run([BIN, self.cmd[0], '--help'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return p.stdout

    def run(self, path, extra=()):
        args = [BIN] + self.cmd + list(extra) + [path]
        outf = os.path.join(self.tmp, 'stdout')
        errf = os.path.join(self.tmp, 'stderr')
        rssf = os.path.join(self.tmp, 'rss')
        if TIME:
            args = [TIME, '-f', '%M', '-o', rssf] + args
        timed_out = False
        with open(outf, 'wb') as fo, open(errf, 'wb') as fe:
            try:
                p = subprocess.run(args, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                   timeout=TIME_LIMIT)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc, timed_out = -1, True
        self.nruns += 1
        valid = False
        with open(outf, 'rb') as fo:
            for line in fo:
                if self.valid_re.search(line):
                    valid = True
                    break
        with open(errf, 'rb') as fe:
            err = fe.read(1 << 20)
        rss = None
        if TIME and os.path.exists(rssf):
            try:
                with open(rssf) as f:
                    rss = int(f.read().strip().splitlines()[-1])
            except (ValueError, IndexError):
                rss = None
        if TIME and rc is not None and rc >= 0:
            pass
        return Run(rc, valid, err, rss, timed_out)

    def fail(self, label, why, r):
        first = r.err.decode('utf-8', 'replace').strip().splitlines()[:3]
        self.failures.append('%s: %s (exit %s; stderr: %s)' % (label, why, r.rc, ' | '.join(first)))
        if self.verbose:
            print('FAIL', self.failures[-1])

    def check(self, label, path, clean):
        r = self.run(path)
        if r.timed_out:
            return self.fail(label, 'no result within %ds (hang?)' % TIME_LIMIT, r)
        if r.rc < 0 or r.rc >= 128:
            return self.fail(label, 'killed by a signal / crashed', r)
        if SAN_PATTERNS.search(r.err):
            return self.fail(label, 'sanitizer or assertion report', r)
        lines = r.err.splitlines()
        if len(lines) > MAX_STDERR_LINES:
            return self.fail(label, '%d stderr lines without --verbose (want one per problem '
                             'kind, at most %d)' % (len(lines), MAX_STDERR_LINES), r)
        if any(len(l) > MAX_LINE for l in lines):
            return self.fail(label, 'a stderr line longer than %d bytes' % MAX_LINE, r)
        if r.rc != 0 and not r.err.strip():
            return self.fail(label, 'failed without a message', r)
        # valid data came out: the clean run's status if it gave some too, else 0 (a clean
        # run without any is "nothing usable": the damage made something usable, as a
        # BUILD_ID feature gone lets a file of another build be read)
        want = clean.rc if clean.out_valid else 0
        if r.out_valid and r.rc != want:
            return self.fail(label, 'listed valid data but exit status %d differs from %d (the '
                             'clean run\'s: %d, %s valid data)'
                             % (r.rc, want, clean.rc, 'with' if clean.out_valid else 'without'), r)
        if TIME and r.rss and clean.rss and r.rss > clean.rss * 1.5 + 32 * 1024:
            return self.fail(label, 'peak memory %d KiB > 1.5x clean %d KiB + 32 MiB'
                             % (r.rss, clean.rss), r)
        # --strict turns warnings and errors into exit 1; notes ("nothing lost") do not count
        if self.has_strict and PROBLEM.search(r.err):
            s = self.run(path, ['--strict'])
            if s.rc == 0:
                return self.fail(label, 'problems reported but --strict exited 0', s)
        return None

    def clean_run(self, label, path):
        r = self.run(path)
        if r.timed_out or r.rc < 0 or r.rc >= 128:
            self.fail(label + ' (clean)', 'clean input crashed or hung', r)
            return None
        m = SAN_PATTERNS.search(r.err)
        if m:
            at = r.err.find(m.group(0))
            r.err = r.err[at:at + 2000]  # the report itself, not the warnings before it
            self.fail(label + ' (clean)', 'sanitizer report on the clean input', r)
            return None
        return r

    def finish(self, what):
        shutil.rmtree(self.tmp, ignore_errors=True)
        for f in self.failures:
            print('FAIL', f)
        print('sweep %s: %d runs, %d failures%s' % (what, self.nruns, len(self.failures),
              '' if self.has_strict else ' (the command has no --strict: strict checks skipped)'))
        return 1 if self.failures else 0


# ---------------------------------------------------------------- byte-level mutations

def truncations(data, n, rng):
    size = len(data)
    points = {0, 1, 7, 8, 16, size // 2, max(size - 1, 0), max(size - 8, 0)}
    while len(points) < min(n, size + 1):
        points.add(rng.randrange(0, size + 1))
    for p in sorted(points):
        if p < size:
            yield 'truncate@%d' % p, data[:p]


def bitflips(data, n, rng):
    if not data:
        return
    for _ in range(n):
        off = rng.randrange(0, len(data))
        bit = rng.randrange(0, 8)
        b = bytearray(data)
        b[off] ^= 1 << bit
        yield 'flip@%d.%d' % (off, bit), bytes(b)


def values_for(size):
    return [0, size, U64_MAX, 1 << 63, U64_MAX - 7, size + 8]


# ---------------------------------------------------------------- perf.data structure

def perf_layout(data):
    """(endian, header fields, records) or None. records: list of (offset, type, size)."""
    if len(data) < 16:
        return None
    if data[:8] == b'PERFILE2':
        e = '<'
    elif data[:8] == b'2ELIFREP':
        e = '>'
    else:
        return None
    hsize = struct.unpack_from(e + 'Q', data, 8)[0]
    recs = []
    if hsize == 16:  # pipe mode: records follow the header
        start, end = 16, len(data)
    elif len(data) >= 104:
        start, dsize = struct.unpack_from(e + 'QQ', data, 40)
        end = min(len(data), start + dsize)
    else:
        return e, hsize, []
    pos = start
    while pos + 8 <= end and len(recs) < 100000:
        rtype, misc, rsize = struct.unpack_from(e + 'IHH', data, pos)
        if rsize < 8:
            break
        recs.append((pos, rtype, rsize))
        if rtype == 71 and pos + 16 <= end:  # AUXTRACE: payload follows the record
            pos += rsize + struct.unpack_from(e + 'Q', data, pos + 8)[0]
        else:
            pos += rsize
    return e, hsize, recs


def put(data, off, fmt, e, v):
    b = bytearray(data)
    if off + struct.calcsize(fmt) <= len(b):
        struct.pack_into(e + fmt, b, off, v & ((1 << (8 * struct.calcsize(fmt))) - 1))
    return bytes(b)


def perf_mutations(data, rng, scale):
    size = len(data)
    yield from truncations(data, 12 * scale, rng)
    yield from bitflips(data, 12 * scale, rng)
    lay = perf_layout(data)
    if not lay:
        return
    e, hsize, recs = lay
    if hsize != 16 and size >= 104:
        for off, name in ((8, 'header.size'), (16, 'attr_size'), (24, 'attrs.offset'),
                          (32, 'attrs.size'), (40, 'data.offset'), (48, 'data.size'),
                          (56, 'event_types.offset'), (64, 'event_types.size')):
            for v in values_for(size):
                yield '%s=%#x' % (name, v), put(data, off, 'Q', e, v)
        # feature section table after the data section
        doff, dsz = struct.unpack_from(e + 'QQ', data, 40)
        ft = doff + dsz
        for k in range(min(4, max(0, (size - ft) // 16))):
            for v in (0, size, U64_MAX):
                yield 'feature[%d].offset=%#x' % (k, v), put(data, ft + 16 * k, 'Q', e, v)
                yield 'feature[%d].size=%#x' % (k, v), put(data, ft + 16 * k + 8, 'Q', e, v)
    # records: the first few of each type, and a few at random
    by_type = {}
    for r in recs:
        by_type.setdefault(r[1], []).append(r)
    chosen = []
    for t, rs in sorted(by_type.items()):
        chosen += rs[:2]
    if recs:
        chosen += [recs[rng.randrange(len(recs))] for _ in range(4 * scale)]
    seen = set()
    for pos, rtype, rsize in chosen:
        if pos in seen:
            continue
        seen.add(pos)
        tag = 'rec@%#x(type %d)' % (pos, rtype)
        for v in (0, 8, 0xffff, rsize + 8):
            yield tag + '.size=%d' % v, put(data, pos + 6, 'H', e, v)
        yield tag + '.type=0', put(data, pos, 'I', e, 0)
        yield tag + '.type=max', put(data, pos, 'I', e, 0xffffffff)
        if rtype == 71:  # AUXTRACE: size, offset, reference, idx, tid, cpu
            for v in values_for(size):
                yield tag + '.auxtrace.size=%#x' % v, put(data, pos + 8, 'Q', e, v)
                yield tag + '.auxtrace.offset=%#x' % v, put(data, pos + 16, 'Q', e, v)
            yield tag + '.auxtrace.cpu=-2', put(data, pos + 44, 'I', e, 0xfffffffe)
            yield tag + '.auxtrace.idx=max', put(data, pos + 32, 'I', e, 0xffffffff)
        if rtype == 11:  # AUX: aux_offset, aux_size, flags
            for v in values_for(size):
                yield tag + '.aux.offset=%#x' % v, put(data, pos + 8, 'Q', e, v)
                yield tag + '.aux.size=%#x' % v, put(data, pos + 16, 'Q', e, v)
            yield tag + '.aux.flags=max', put(data, pos + 24, 'Q', e, U64_MAX)
        if rtype == 70 and rsize >= 32:  # AUXTRACE_INFO: type, reserved, priv[]
            for v in (0, 0xffffffff, 1000000):
                yield tag + '.nr_cpu=%#x' % v, put(data, pos + 24, 'I', e, v)
            for v in (0, U64_MAX):
                yield tag + '.version=%#x' % v, put(data, pos + 16, 'Q', e, v)
            if rsize >= 64:
                yield tag + '.cpu0.nparams=max', put(data, pos + 56, 'Q', e, U64_MAX)
                yield tag + '.cpu0.magic=0', put(data, pos + 40, 'Q', e, 0)
        if rtype == 81 or rtype == 83:  # COMPRESSED(2): damage the zstd stream
            mid = pos + 8 + (rsize - 8) // 2
            b = bytearray(data)
            if mid < size:
                b[mid] ^= 0xff
            yield tag + '.zstd-damaged', bytes(b)
    # AUX offsets that loop: every AUX record at offset 0 with the largest size, and
    # offsets running backwards
    aux = [r for r in recs if r[1] == 11]
    if len(aux) >= 2:
        b = data
        for i, (pos, _, _) in enumerate(aux):
            b = put(b, pos + 8, 'Q', e, 0)
        yield 'aux-all-at-0', b
        b = data
        for i, (pos, _, _) in enumerate(aux):
            b = put(b, pos + 8, 'Q', e, (len(aux) - i) * 0x1000)
            b = put(b, pos + 16, 'Q', e, 0x100000)
        yield 'aux-offsets-backwards', b
        b = data
        for i, (pos, _, _) in enumerate(aux):
            b = put(b, pos + 8, 'Q', e, U64_MAX - 0x10 + i * 0x40)
        yield 'aux-offsets-wrap-2^64', b


# ---------------------------------------------------------------- snapshots

def unpack_archive(data, dest):
    """The fuzz_snapshot '@@ NAME' archive format -> files in dest."""
    os.makedirs(dest, exist_ok=True)
    if not data.startswith(b'@@ '):
        open(os.path.join(dest, 'snapshot.ini'), 'wb').write(data)
        return
    parts = (b'\n' + data).split(b'\n@@ ')[1:]
    for part in parts:
        name, _, body = part.partition(b'\n')
        name = re.sub(rb'[^A-Za-z0-9._-]', b'_', name[:48]).decode() or '_'
        open(os.path.join(dest, name), 'wb').write(body)


def link_snapshot(src, dest):
    """A copy of the snapshot folder: INI files copied, everything else symlinked."""
    os.makedirs(dest)
    for name in os.listdir(src):
        s = os.path.join(src, name)
        d = os.path.join(dest, name)
        if os.path.isfile(s):
            if name.lower().endswith('.ini'):
                shutil.copyfile(s, d)
            else:
                os.symlink(os.path.abspath(s), d)


def trace_buffers(snapdir):
    files = []
    try:
        text = open(os.path.join(snapdir, 'trace.ini'), 'rb').read().decode('latin-1')
    except OSError:
        return files
    for m in re.finditer(r'(?im)^\s*file\s*=\s*([^;\r\n]+)', text):
        f = m.group(1).strip()
        if os.path.isfile(os.path.join(snapdir, f)):
            files.append(f)
    return files


NUM_RE = re.compile(rb'(?m)^(\s*[A-Za-z_][A-Za-z0-9_]*(?:\([^)]*\))?\s*=\s*)(0x[0-9A-Fa-f]+|\d+)')


def snapshot_mutations(snapdir, work, rng, scale):
    """Yields (label, folder) with one damage applied to a fresh copy of the snapshot."""
    counter = [0]

    def fresh():
        counter[0] += 1
        d = os.path.join(work, 'm%d' % counter[0])
        if os.path.exists(d):
            shutil.rmtree(d)
        link_snapshot(snapdir, d)
        return d

    def write(d, name, data):
        p = os.path.join(d, name)
        if os.path.islink(p):
            os.unlink(p)
        open(p, 'wb').write(data)

    bufs = trace_buffers(snapdir)
    for name in bufs[:2]:
        data = open(os.path.join(snapdir, name), 'rb').read()
        for label, mutated in list(truncations(data, 8 * scale, rng)) + \
                list(bitflips(data, 8 * scale, rng)):
            d = fresh()
            write(d, name, mutated)
            yield '%s:%s' % (name, label), d
        d = fresh()
        os.unlink(os.path.join(d, name))
        yield '%s:missing' % name, d
    inis = sorted(n for n in os.listdir(snapdir) if n.lower().endswith('.ini'))
    for name in inis:
        text = open(os.path.join(snapdir, name), 'rb').read()
        nums = list(NUM_RE.finditer(text))
        picks = nums if len(nums) <= 3 * scale else rng.sample(nums, 3 * scale)
        for m in picks:
            for v in (b'0', b'0xFFFFFFFFFFFFFFFF', b'0x8000000000000000', b'99999999999999999999'):
                d = fresh()
                write(d, name, text[:m.start(2)] + v + text[m.end(2):])
                key = m.group(1).split(b'=')[0].strip().decode('latin-1')
                yield '%s:%s=%s' % (name, key, v.decode()), d
        if name.lower() in ('snapshot.ini', 'trace.ini') or rng.random() < 0.3:
            for label, mutated in list(truncations(text, 3 * scale, rng)) + \
                    list(bitflips(text, 2 * scale, rng)):
                d = fresh()
                write(d, name, mutated)
                yield '%s:%s' % (name, label), d
    # a dump length far beyond its file: set length= of the first dump section
    for name in inis:
        text = open(os.path.join(snapdir, name), 'rb').read()
        if re.search(rb'(?im)^\[dump', text):
            d = fresh()
            t = re.sub(rb'(?im)^(\s*length\s*=\s*)\S+', rb'\g<1>0xFFFFFFFFFFFFFFF0', text, count=1)
            t = re.sub(rb'(?im)^(\s*offset\s*=\s*)\S+', rb'\g<1>0xFFFFFFFFFFFFFFF0', t, count=1)
            write(d, name, t)
            yield '%s:dump-length-offset-huge' % name, d
            break


SNAPSHOTS = ['juno_r1_1', 'a55-test-tpiu', 'ete_spec_1', 'TC2', 'stm_only', 'armv8_1m_branches',
             'q_elem', 'trace_cov_a15', 'ete-bc-instr', 'bugfix-exact-match']


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    what = args[0]
    scale = int(os.environ.get('SWEEP_SCALE', '1'))
    seed = int(os.environ.get('SWEEP_SEED', '1'))
    verbose = '--verbose' in args
    if '--scale' in args:
        scale = int(args[args.index('--scale') + 1])
    if '--seed' in args:
        seed = int(args[args.index('--seed') + 1])
    shared = os.path.join(SHARED, 'testdata') if SHARED and os.path.isdir(SHARED) else None

    if what in ('perf', 'script'):
        files = []
        corpus = os.path.join(SRC, 'fuzz', 'corpus', 'perf')
        if os.path.isdir(corpus):
            files += [os.path.join(corpus, f) for f in sorted(os.listdir(corpus))]
        gen = os.environ.get('SWEEP_EXTRA_PERF', '')
        files += [f for f in gen.split(':') if f]
        if shared:
            pf = os.path.join(shared, 'perf', 'files')
            files += [os.path.join(pf, f) for f in sorted(os.listdir(pf))
                      if 'data' in f]
        if not files:
            print('SKIP: no perf.data inputs')
            return 77
        if what == 'perf':
            sw = Sweep(['dump'], re.compile(rb'^0x[0-9a-f]+ #\d+ '), scale, seed, verbose)
        else:
            # a private symfs: the seed program as /bin/loop, the real binaries linked in
            symfs = tempfile.mkdtemp(prefix='etmkit-sweep-symfs-')
            os.makedirs(os.path.join(symfs, 'bin'))
            exe = os.path.join(SRC, 'fuzz', 'corpus', 'elf', 'exe')
            if os.path.exists(exe):
                shutil.copyfile(exe, os.path.join(symfs, 'bin', 'loop'))
            if shared:
                for top in os.listdir(os.path.join(shared, 'perf', 'symfs')):
                    os.symlink(os.path.join(shared, 'perf', 'symfs', top), os.path.join(symfs, top))
            # a sample line of perf script's default fields: "comm tid [cpu] ... event: ..."
            # two decoder threads: damage met by both at once is part of the sweep (finding 9)
            sw = Sweep(['script', '--threads=2', '--symfs=' + symfs, '--buildid-dir=' + symfs],
                       re.compile(rb'^\s*\S+\s+\d+(/\d+)?\s+\[\d+\]'), scale, seed, verbose)
        for path in files:
            data = open(path, 'rb').read()
            name = os.path.basename(path)
            clean = sw.clean_run(name, path)
            if clean is None:
                continue
            rng = random.Random('%s:%d' % (name, seed))
            mpath = os.path.join(sw.tmp, 'mutated.data')
            for label, mutated in budget(perf_mutations(data, rng, scale), rng, scale):
                with open(mpath, 'wb') as f:
                    f.write(mutated)
                sw.check('%s %s' % (name, label), mpath, clean)
        rc = sw.finish(what)
        if what == 'script':
            shutil.rmtree(symfs, ignore_errors=True)
        return rc

    if what == 'snapshot':
        sw = Sweep(['dump', '--format=ocsd'],
                   re.compile(rb'^Idx:\d+; ID:[0-9a-f]+;\s+I_(?!NOT_SYNC)'), scale, seed, verbose)
        dirs = []
        corpus = os.path.join(SRC, 'fuzz', 'corpus', 'snapshot')
        if os.path.isdir(corpus):
            for f in sorted(os.listdir(corpus)):
                d = os.path.join(sw.tmp, 'seed-' + f)
                unpack_archive(open(os.path.join(corpus, f), 'rb').read(), d)
                dirs.append(d)
        if shared:
            base = os.path.join(shared, 'opencsd', 'snapshots')
            dirs += [os.path.join(base, s) for s in SNAPSHOTS if os.path.isdir(os.path.join(base, s))]
        for snap in dirs:
            name = os.path.basename(snap)
            clean = sw.clean_run(name, snap)
            if clean is None:
                continue
            rng = random.Random('%s:%d' % (name, seed))
            work = os.path.join(sw.tmp, 'work')
            for label, d in budget(snapshot_mutations(snap, work, rng, scale), rng, scale):
                sw.check('%s %s' % (name, label), d, clean)
                shutil.rmtree(d, ignore_errors=True)
        return sw.finish(what)
    print('unknown sweep', what)
    return 2


if __name__ == '__main__':
    sys.exit(main())
