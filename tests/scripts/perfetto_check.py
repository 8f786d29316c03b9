#!/usr/bin/env python3
"""Check a Perfetto trace that `etmkit export --format=perfetto` wrote, decoded to text by
`protoc --decode=perfetto.protos.Trace tests/data/perfetto_trace.proto`.

usage: perfetto_check.py DECODED [TRUTH BRANCHES [CALLSTACKS]]
  DECODED: protoc's text of the trace; TRUTH: the simulator's expected-callstacks.txt;
  BRANCHES: its expected-branches.txt (the same samples, for their flags); CALLSTACKS: the
  library's stacks at the same samples (build/tests/ek_callstacks), for one thing only: which
  samples are late (a queue's last range flushed at the end after its thread ran on elsewhere:
  they show an earlier time's stack and move nothing; tests/scripts/stacks_truth.py, rule 5)
  exit status 0: all checks hold, 1: one does not (the first differences on stdout)

Checks, on every packet, in order:
 - interning, as Perfetto's reader applies it (resolve_interned): an iid is defined (the
   packet's InternedData) before or in the packet that refers to it, on its sequence, never
   again with another value; a packet that refers to one says it needs the sequence's
   incremental state, which a packet before it (or itself) said was cleared. The names and
   values given by iid are then read as if written in full;
 - every packet has trusted_packet_sequence_id; every event has a timestamp and a track
   described (TrackDescriptor) before it; a thread track's parent is a process track;
 - on every track the times never go back; every TYPE_SLICE_END ends a slice that began on
   its track; at the end of the trace no slice is open (every begin has its end); slices nest
   (a stack per track, so an end always ends the innermost);
with TRUTH, per thread: the slices are the truth's calls. The truth holds the stack of return
addresses at every branches sample (docs/SIMULATOR.md); a frame pushed between two samples of
a thread is a call (an exception: "!"), entering the function of the next sample's location
(below an inner pushed frame: the function of that frame's return address). The calls the
trace sees (not those across a trace begin, where the thread's trace lands after a gap, nor at
the first sample of a thread) must be our slice begins, in order, with their names; and at
every begin, our open slices on the thread's track (outermost first) must be the innermost
frames of the truth's stack -- fewer where the trace does not know the frames below (entered
before the trace, or forgotten at a gap: docs/STACKS.md), never other ones.
Whose stack a truth line shows: the sample's thread, except at the branch where the thread of
a CPU's trace changes without a trace end (a context switch), which ran on the outgoing
thread's (tests/scripts/stacks_truth.py, rule 3). An exec rewrites the exception frame of its
system call where the trace does not see it (rule 4): no call. A late sample (rule 5) moves
nothing.
"""
import re
import sys

GAP = 'trace gap'


def parse_text(path):
    """protoc's text format -> list of packets (nested dicts of lists)"""
    root = {}
    stack = [root]
    tok = re.compile(r'\s*(?:(\w+)\s*\{|(\w+)\s*:\s*("(?:[^"\\]|\\.)*"|\S+)|(\}))')
    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.strip()
        if not line:
            continue
        m = tok.match(line)
        if not m:
            raise SystemExit(f'cannot read: {line}')
        if m.group(1):
            d = {}
            stack[-1].setdefault(m.group(1), []).append(d)
            stack.append(d)
        elif m.group(4):
            stack.pop()
        else:
            v = m.group(3)
            if v.startswith('"'):
                v = bytes(v[1:-1], 'utf-8').decode('unicode_escape').encode('latin-1').decode(
                    'utf-8', 'replace')
            stack[-1].setdefault(m.group(2), []).append(v)
    return root.get('packet', [])


def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default


SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
# (table, InternedData field, the entry's string field): what refers to each table
INTERNED = (('event', 'event_names', 'name'), ('dname', 'debug_annotation_names', 'name'),
            ('dvalue', 'debug_annotation_string_values', 'str'))


def resolve_interned(packets, fail):
    """Put interned names and values in place (name, string_value), checking the interning."""
    seqs = {}  # sequence -> {'valid': state cleared, table: {iid: string}}
    ever = {}  # (sequence, table, iid) -> string: an iid never changes its string
    for i, p in enumerate(packets):
        seq = one(p, 'trusted_packet_sequence_id')
        flags = int(one(p, 'sequence_flags', '0'))
        st = seqs.setdefault(seq, {'valid': False})
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            st = seqs[seq] = {'valid': True}
        for idata in p.get('interned_data', []):
            for table, field, key in INTERNED:
                for ent in idata.get(field, []):
                    iid, v = one(ent, 'iid'), one(ent, key)
                    if iid in (None, '0') or v is None:
                        fail(f'packet {i}: an entry of {field} without an iid or a string')
                        continue
                    if ever.setdefault((seq, table, iid), v) != v:
                        fail(f'packet {i}: {field} iid {iid} defined again as {v!r}, '
                             f'was {ever[(seq, table, iid)]!r}')
                    st.setdefault(table, {})[iid] = v
        refs = []  # (dict, field to fill, table, iid)
        for e in p.get('track_event', []):
            if 'name_iid' in e:
                refs.append((e, 'name', 'event', one(e, 'name_iid')))
            for da in e.get('debug_annotations', []):
                if 'name_iid' in da:
                    refs.append((da, 'name', 'dname', one(da, 'name_iid')))
                if 'string_value_iid' in da:
                    refs.append((da, 'string_value', 'dvalue', one(da, 'string_value_iid')))
        if refs and not (flags & SEQ_NEEDS_INCREMENTAL_STATE and st['valid']):
            fail(f'packet {i}: refers to interned data without SEQ_NEEDS_INCREMENTAL_STATE '
                 f'after SEQ_INCREMENTAL_STATE_CLEARED (flags {flags})')
        for d, field, table, iid in refs:
            v = st.get(table, {}).get(iid)
            if v is None:
                fail(f'packet {i}: {table} iid {iid} is not defined on sequence {seq}')
            elif field in d:
                fail(f'packet {i}: {field} given both in full and by iid')
            else:
                d[field] = [v]


def func(loc):
    """the function of a truth location ("sym+0xoff", "[unknown]"; "!" before an exception's)"""
    loc = loc.lstrip('!')
    return loc.split('+0x')[0]


def after(at, frame):
    """frame is the return address of a call at location at (a BL of 4 or 2 bytes)"""
    if not at or frame.startswith('!') or '+0x' not in at or '+0x' not in frame:
        return False
    (s1, o1), (s2, o2) = at.split('+0x'), frame.split('+0x')
    return s1 == s2 and int(o2, 16) - int(o1, 16) in (2, 4)


LINE = re.compile(r'^\s*(-?\d+)/(-?\d+)\s+\[(-?\d+)\]\s+([0-9a-f]+) =>\s+([0-9a-f]+): (.*)$')


def truth_calls(path, branches, per_source, late=frozenset()):
    """per stack key: [(name, names of the stack after the push, outermost first)]"""
    calls = {}
    state = {}  # key -> (frames outermost first, names)
    last = {}  # cpu -> (key, ended)
    entered = set()  # stacks whose last branch entered an exception
    exc_end = {}  # stack -> where its last branch ended the trace entering an exception
    # the flags column of `-F pid,tid,cpu,flags,...`: two blanks after the CPU's "]", 21 wide
    flags = [set(l[l.index(']') + 3:l.index(']') + 25].split())
             for l in open(branches).read().splitlines()]
    for k, line in enumerate(open(path)):
        m = LINE.match(line)
        if not m or k in late:
            continue  # a late sample shows an earlier time's stack: it moves nothing
        words = flags[k] if k < len(flags) else set()
        pid, tid, cpu, ip, addr, rest = m.groups()
        ip, addr = int(ip, 16), int(addr, 16)
        parts = rest.split(' <- ')
        loc, frames = parts[0], parts[1:][::-1]
        key = (pid, tid, str(int(cpu))) if per_source or (pid, tid) == ('0', '0') else (pid, tid)
        owner = key
        prev = last.get(cpu)
        if ip != 0 and prev and not prev[1] and prev[0] != key:
            owner = prev[0]
        last[cpu] = (key, addr == 0)
        exc = owner in entered
        if addr != 0 and {'syscall', 'int'} & words:
            entered.add(owner)
        else:
            entered.discard(owner)
        old = state.get(owner)
        if old is None:
            state[owner] = (frames, ['?'] * len(frames))
            continue
        of, on = old
        c = 0
        while c < len(of) and c < len(frames) and of[c] == frames[c]:
            c += 1
        if exc:
            # an exception pushed the innermost exception frame (a return right before it can
            # have popped one with the same address: an ERET to where an interrupt is taken)
            e = [j for j, f in enumerate(frames) if f.startswith('!')]
            if e:
                c = min(c, e[-1])
        names = on[:c]
        eo = [j for j, f in enumerate(of) if f.startswith('!')]
        if ip != 0 and not exc and eo and any(f.startswith('!') for f in frames[c:]):
            # an exec rewrote the exception frame (and below) where the trace does not see it
            # (stacks_truth.py, rule 4): the frames above it stay; a call may come with it
            en = max(j for j, f in enumerate(frames) if f.startswith('!'))
            above_old, above_new = of[eo[-1] + 1:], frames[en + 1:]
            k = 0
            while k < len(above_old) and k < len(above_new) and above_old[k] == above_new[k]:
                k += 1
            # the exception frame is the same exception, its return address rewritten ("*":
            # what is below it is not compared: the exec left it, the trace cannot know)
            names = ['?'] * en + ['*' + on[eo[-1]].lstrip('*')] + on[eo[-1] + 1:eo[-1] + 1 + k]
            for x in range(k, len(above_new)):
                if k == len(above_old) and x + 1 == len(above_new) == k + 1:
                    names.append(func(loc))
                    calls.setdefault(owner, []).append((func(loc), list(names)))
                else:
                    names.append('?')
            state[owner] = (frames, names)
            continue
        # a trace begin lands: what was pushed meanwhile is not in the trace -- but for the
        # frame of a BL taken right before the exception the trace ended in (the landing, on
        # the exception's return address, pops only the exception's frame)
        seen = ip != 0 or (len(frames) == c + 1 and after(exc_end.get(owner), frames[-1]))
        exc_end[owner] = loc if addr == 0 and {'syscall', 'int'} & words else None
        for j in range(c, len(frames)):
            if not seen:
                names.append('?')
                continue
            n = func(loc) if j + 1 == len(frames) else func(frames[j + 1])
            if frames[j].startswith('!'):
                n += ' (exception)'
            names.append(n)
            calls.setdefault(owner, []).append((n, list(names)))
        state[owner] = (frames, names)
    return calls


def main():
    packets = parse_text(sys.argv[1])
    truth = sys.argv[2] if len(sys.argv) > 2 else None
    branches = sys.argv[3] if len(sys.argv) > 3 else None
    # the library's stacks at the same samples (tests/tools/callstacks.c): which are late
    late = set()
    if len(sys.argv) > 4:
        lines = [l for l in open(sys.argv[4]).read().splitlines() if not l.startswith('#')]
        late = {k for k, l in enumerate(lines) if l.endswith(' (late)')}
    bad = []

    def fail(msg):
        bad.append(msg)

    tracks = {}  # uuid -> descriptor
    open_ = {}  # uuid -> [names]
    last = {}  # uuid -> time
    begins = {}  # uuid -> [(name, open names after)]
    nev = nslices = 0
    resolve_interned(packets, fail)
    for i, p in enumerate(packets):
        if one(p, 'trusted_packet_sequence_id') is None:
            fail(f'packet {i}: no trusted_packet_sequence_id')
        if 'track_descriptor' in p:
            d = p['track_descriptor'][0]
            u = one(d, 'uuid')
            if u in tracks:
                fail(f'packet {i}: track {u} described twice')
            par = one(d, 'parent_uuid')
            if 'thread' in d and (par not in tracks or 'process' not in tracks[par]):
                fail(f'packet {i}: thread track {u} without its process track')
            tracks[u] = d
            continue
        e = one(p, 'track_event')
        if e is None:
            fail(f'packet {i}: neither a track descriptor nor a track event')
            continue
        nev += 1
        ts = one(p, 'timestamp')
        u = one(e, 'track_uuid')
        if ts is None or u is None or u not in tracks:
            fail(f'packet {i}: event without a time or a described track')
            continue
        ts = int(ts)
        if ts < last.get(u, 0):
            fail(f'packet {i}: time {ts} before {last[u]} on track {u}')
        last[u] = ts
        t = one(e, 'type')
        st = open_.setdefault(u, [])
        if t == 'TYPE_SLICE_BEGIN':
            name = one(e, 'name')
            if name is None:
                fail(f'packet {i}: a slice without a name')
            st.append(name)
            nslices += 1
            if name != GAP:
                begins.setdefault(u, []).append((name, [n for n in st if n != GAP]))
        elif t == 'TYPE_SLICE_END':
            if not st:
                fail(f'packet {i}: a slice end with no slice open on track {u}')
            else:
                st.pop()
        elif t != 'TYPE_INSTANT':
            fail(f'packet {i}: event type {t}')
    for u, st in open_.items():
        if st:
            fail(f'track {u} ({one(tracks[u], "name")}): {len(st)} slices never end: {st[-3:]}')

    ncalls = 0
    if truth:
        names = {}
        per_source = False
        keyed = {}
        for u, d in tracks.items():
            name = one(d, 'name', '')
            th = one(d, 'thread')
            par = one(d, 'parent_uuid')
            if th:
                keyed[u] = (one(th, 'pid'), one(th, 'tid'))
            elif par in tracks and 'process' in tracks[par]:
                m = re.search(r' (-?\d+) \[cpu (-?\d+)\]', name)
                if not m:
                    fail(f'track {u} ({name}): no tid and cpu in its name')
                    continue
                pid = one(one(tracks[par], 'process'), 'pid')
                keyed[u] = (pid, m.group(1), m.group(2))
                if (pid, m.group(1)) != ('0', '0'):
                    per_source = True
        calls = truth_calls(truth, branches, per_source, late)
        ours = {keyed[u]: b for u, b in begins.items() if u in keyed}
        for key in sorted(set(calls) | set(ours)):
            exp = calls.get(key, [])
            got = ours.get(key, [])
            got = [(re.sub(r'^0x[0-9a-f]+', '[unknown]', n), [re.sub(r'^0x[0-9a-f]+', '[unknown]', x) for x in s])
                   for n, s in got]
            ncalls += len(exp)
            for k in range(min(len(exp), len(got))):
                (en, es), (gn, gs) = exp[k], got[k]
                stars = [i for i, x in enumerate(es) if x.startswith('*')]
                if stars:  # below an exec's rewritten exception frame ("*"): not compared
                    es = [es[stars[-1]][1:]] + es[stars[-1] + 1:]
                    gs = gs[max(0, len(gs) - len(es)):]
                if en != gn or len(gs) > len(es) or es[len(es) - len(gs):] != gs:
                    fail(f'thread {"/".join(key)}: call {k + 1}: truth {en} in {es[-6:]}, '
                         f'ours {gn} in {gs[-6:]}')
                    break
            else:
                if len(exp) != len(got):
                    k = min(len(exp), len(got))
                    fail(f'thread {"/".join(key)}: {len(exp)} calls in the truth, {len(got)} '
                         f'slices; the first extra: '
                         f'{(exp if len(exp) > k else got)[k][0]}')
    if bad:
        for b in bad[:10]:
            print(b)
        if len(bad) > 10:
            print(f'... {len(bad)} problems')
        return 1
    print(f'{len(packets)} packets, {len(tracks)} tracks, {nslices} slices'
          + (f', {ncalls} calls of the truth' if truth else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
