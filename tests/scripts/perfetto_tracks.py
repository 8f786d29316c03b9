#!/usr/bin/env python3
"""The tracks of a filtered Perfetto trace against the whole one (tests/scripts/perfetto_filter.sh).

usage: perfetto_tracks.py WHOLE.txt FILTERED.txt TID...   (protoc --decode text of each trace)

The filtered trace must hold a thread track for each TID that the whole trace has, and no
other; each of those tracks must carry exactly the whole trace's events of that thread, in
order (time, type, name); on the CPU tracks, the slices begun must be the whole trace's slices
of those threads, in order. Prints one line per difference and exits 1, or one summary line."""
import sys


def parse(path):
    """thread tracks {uuid: tid}, cpu tracks {uuid}, events [(uuid, ts, type, name)]; a name
    given by iid is the one its sequence's InternedData defined (in this packet or before:
    protoc prints a packet's interned_data after its track_event, so names resolve at the
    packet's end; perfetto_check.py checks the interning itself)"""
    threads, cpus, events = {}, set(), []
    stack, cur = [], {}
    names = {}  # (sequence, iid) -> name
    with open(path) as f:
        for line in f:
            l = line.strip()
            if l.endswith('{'):
                stack.append(l[:-1].strip())
                if stack == ['packet']:
                    cur = {}
                continue
            if l == '}':
                stack.pop()
                if not stack:
                    if 'td' in cur:
                        if 'tid' in cur:
                            threads[cur['td']] = cur['tid']
                        elif cur.get('tdname', '').startswith('"CPU '):
                            cpus.add(cur['td'])
                    for iid, name in cur.get('defs', []):
                        names[(cur.get('seq'), iid)] = name
                    if 'name_iid' in cur:
                        key = (cur.get('seq'), cur['name_iid'])
                        if key not in names:
                            raise SystemExit(f'{path}: event name iid {key[1]} is not defined '
                                             f'on sequence {key[0]} before its use')
                        cur['name'] = names[key]
                    if 'type' in cur:
                        events.append((cur['track'], cur.get('ts'), cur['type'], cur.get('name')))
                continue
            k, _, v = l.partition(': ')
            where = '/'.join(stack)
            if where == 'packet' and k == 'timestamp':
                cur['ts'] = int(v)
            elif where == 'packet' and k == 'trusted_packet_sequence_id':
                cur['seq'] = v
            elif where == 'packet/interned_data/event_names' and k == 'iid':
                cur.setdefault('defs', []).append([v, None])
            elif where == 'packet/interned_data/event_names' and k == 'name':
                cur['defs'][-1][1] = v
            elif where == 'packet/track_event' and k == 'name_iid':
                cur['name_iid'] = v
            elif where == 'packet/track_descriptor' and k == 'uuid':
                cur['td'] = int(v)
            elif where == 'packet/track_descriptor' and k == 'name':
                cur['tdname'] = v
            elif where == 'packet/track_descriptor/thread' and k == 'tid':
                cur['tid'] = int(v)
            elif where == 'packet/track_event' and k == 'type':
                cur['type'] = v
            elif where == 'packet/track_event' and k == 'track_uuid':
                cur['track'] = int(v)
            elif where == 'packet/track_event' and k == 'name':
                cur['name'] = v
    return threads, cpus, events


def per_tid(threads, events, tid):
    uu = {u for u, t in threads.items() if t == tid}
    return [e[1:] for e in events if e[0] in uu]


def cpu_begins(threads, cpus, events, tids):
    """(cpu uuid, ts, label) of the CPU slices begun for the threads tids ("comm pid/tid")"""
    out = []
    for u, ts, ty, name in events:
        if u in cpus and ty == 'TYPE_SLICE_BEGIN':
            tid = int(name.strip('"').rsplit('/', 1)[1])
            if tid in tids:
                out.append((u, ts, name))
    return out


def main():
    whole, filt, tids = sys.argv[1], sys.argv[2], {int(t) for t in sys.argv[3:]}
    wt, wc, we = parse(whole)
    ft, fc, fe = parse(filt)
    bad = []
    shown = set(wt.values()) & tids
    if set(ft.values()) != shown:
        bad.append('thread tracks of tids %s, want %s' % (sorted(set(ft.values())), sorted(shown)))
    nev = 0
    for tid in sorted(shown):
        a, b = per_tid(wt, we, tid), per_tid(ft, fe, tid)
        nev += len(a)
        if a != b:
            i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            bad.append('tid %d: %d events, filtered %d; first difference at %d: %s / %s' %
                       (tid, len(a), len(b), i, a[i] if i < len(a) else '-',
                        b[i] if i < len(b) else '-'))
    ca, cb = cpu_begins(wt, wc, we, tids), cpu_begins(ft, fc, fe, set(ft.values()) | tids)
    allb = [e for e in fe if e[0] in fc and e[2] == 'TYPE_SLICE_BEGIN']
    if len(allb) != len(cb):
        bad.append('CPU slices of threads left out: %d' % (len(allb) - len(cb)))
    if ca != cb:
        bad.append('CPU slices: %d begun in the whole trace for these threads, %d filtered' %
                   (len(ca), len(cb)))
    for line in bad:
        print(line)
    if bad:
        return 1
    print('%d threads, %d thread events, %d CPU slices as in the whole trace' %
          (len(shown), nev, len(cb)))
    return 0


sys.exit(main())
