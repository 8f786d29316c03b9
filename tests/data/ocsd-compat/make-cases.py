#!/usr/bin/env python3
"""Writes the crafted snapshot folders of tests/data/ocsd-compat (run: make-cases.py DIR).

Each folder holds a few bytes of ETMv3, STM or ITM trace that reach one place where OpenCSD
1.8.0 departs from the architecture (docs/PROTOCOLS.md). tests/golden/ocsd-compat/NAME.ppl is
what OpenCSD 1.8.0's trc_pkt_lister -decode printed for each (from its "Protocol printer" line on,
without the Gen_Info memory-map lines); tests/scripts/ocsd_compat.sh compares ek_proto_dump with it."""
import os, struct, sys

def w(path, data, mode='w'):
    with open(path, mode) as f: f.write(data)

def snapshot(d, src_type, regs, trace, code=None, core='Cortex-A7', fmt='source_data',
             src_name='ETM_0'):
    os.makedirs(d, exist_ok=True)
    devs = ['cpu_0.ini', 'device_1.ini'] if code is not None or src_type.startswith('ETM') else ['device_1.ini']
    w(f'{d}/snapshot.ini', '[snapshot]\nversion=1.0\n\n[device_list]\n' +
      ''.join(f'device{i}={n}\n' for i, n in enumerate(devs)) + '\n[trace]\nmetadata=trace.ini\n')
    if 'cpu_0.ini' in devs:
        s = f'[device]\nname=cpu_0\nclass=core\ntype={core}\n\n[regs]\nR15=0x8000\nCPSR=0x1D3\n'
        if code is not None:
            s += f'\n[dump]\nfile=mem.bin\naddress=0x8000\nlength=0x{len(code):x}\n'
            w(f'{d}/mem.bin', code, 'wb')
        w(f'{d}/cpu_0.ini', s)
    w(f'{d}/device_1.ini', f'[device]\nname={src_name}\nclass=trace_source\ntype={src_type}\n\n[regs]\n' +
      ''.join(f'{k}={v}\n' for k, v in regs))
    w(f'{d}/trace.ini', f'[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\nfile=trace.bin\nformat={fmt}\n\n'
      f'[source_buffers]\n{src_name}=ETB_0\n\n[core_trace_sources]\n' +
      (f'cpu_0={src_name}\n' if 'cpu_0.ini' in devs else ''))
    w(f'{d}/trace.bin', bytes(trace), 'wb')

ASYNC = [0, 0, 0, 0, 0, 0x80]
def isync(addr, thumb=False, info=0x28):
    a = addr | (1 if thumb else 0)
    return [0x08, info] + list(struct.pack('<I', a))
def br_a32(addr):  # 5-byte branch address, A32
    v = addr >> 2
    return [((v & 0x3F) << 1) | 0x81, ((v >> 6) & 0x7F) | 0x80, ((v >> 13) & 0x7F) | 0x80,
            ((v >> 20) & 0x7F) | 0x80, 0x08 | ((v >> 27) & 7)]
def br_t32(addr):  # 5-byte branch address, T32
    v = addr >> 1
    return [((v & 0x3F) << 1) | 0x81, ((v >> 6) & 0x7F) | 0x80, ((v >> 13) & 0x7F) | 0x80,
            ((v >> 20) & 0x7F) | 0x80, 0x10 | ((v >> 27) & 0xF)]
def ts(value, nbytes, ts64):
    out = [0x42]
    for i in range(nbytes):
        last = i == (8 if ts64 else 6)
        if last:
            out.append((value >> (7 * i)) & (0xFF if ts64 else 0x3F))
        else:
            b = (value >> (7 * i)) & 0x7F
            if i < nbytes - 1: b |= 0x80
            out.append(b)
    return out
def phdr(e, n=0):  # non cycle-accurate format 1
    return [0x80 | (n << 6) | (e << 2)]

ETM_REGS = lambda cr, ccer: [('ETMCR(0x000)', f'0x{cr:08X}'), ('ETMIDR(0x079)', '0x410CF250'),
                             ('ETMCCER(0x07A)', f'0x{ccer:08X}'), ('ETMTRACEIDR(0x080)', '0x00000010')]
# code: A32 at 0x8000, T32 at 0x8100
code = bytearray(0x200)
def put32(a, v): struct.pack_into('<I', code, a - 0x8000, v)
def put16(a, v): struct.pack_into('<H', code, a - 0x8000, v)
put32(0x8000, 0xFA00003E)  # blx 0x8100
put32(0x8004, 0xE320F000)  # nop
put32(0x8008, 0xE1A00000)  # mov r0, r0
put32(0x800C, 0xEAFFFFFE)  # b .
put16(0x8100, 0x2001)      # movs r0, #1
put16(0x8102, 0x3001)      # adds r0, #1
put16(0x8104, 0xF7FF)      # blx 0x8008 (T32 BLX imm to A32): hw1
put16(0x8106, 0xEF80)      #   hw2
put16(0x8108, 0x4770)      # bx lr
code = bytes(code)

out = sys.argv[1]
# 1. BLX immediate A32 -> T32 with the target's instructions in the next P-header; T32 -> A32
#    BLX in the same P-header as what follows.
t = ASYNC + isync(0x8000) + phdr(1) + phdr(2) + phdr(3) + br_t32(0x8108) + phdr(1) + br_a32(0x8004) + phdr(1)
snapshot(f'{out}/etm3-blx', 'ETM3.5', ETM_REGS(0x10000000, 0x344008F2), t, code)
# 2. 64-bit timestamps: a ninth byte with bit 7 set, then packets that OpenCSD swallows
t = ASYNC + isync(0x8004) + ts(0x8100000000000005, 9, True) + phdr(1) + [0x0C] + \
    ts(0x1234, 2, True) + phdr(1) + ts(0x55, 1, True)
snapshot(f'{out}/etm3-ts64', 'ETM3.5', ETM_REGS(0x10000000, 0x344008F2), t, code)
# 3. 48-bit timestamps: a seventh byte with bit 7 set (not allowed: 48 bits end there)
t = ASYNC + isync(0x8004) + ts(0x3F0000000001, 7, False)[:-1] + [0xBF] + phdr(1) + [0x0C] + \
    ts(0x1234, 2, False) + phdr(1)
snapshot(f'{out}/etm3-ts48', 'ETM3.5', ETM_REGS(0x10000000, 0x144008F2), t, code)
# 4. cycle-accurate, multi-byte cycle count packets
t = ASYNC + isync(0x8004) + [0x04, 0x85, 0x01] + [0x84] + [0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F] + \
    [0x04, 0x7F] + [0x84]
snapshot(f'{out}/etm3-cc', 'ETM3.5', ETM_REGS(0x10001000, 0x344008F2), t, code)
# 5. a data packet while data trace is off, then more trace
t = ASYNC + isync(0x8004) + phdr(1) + [0x62] + phdr(1) + ASYNC + isync(0x8004) + phdr(1)
snapshot(f'{out}/etm3-data-off', 'ETM3.5', ETM_REGS(0x10000000, 0x344008F2), t, code)
# 6. data trace on (data values, ETMCR bit 2): a normal data packet
t = ASYNC + isync(0x8004) + phdr(1) + [0x06, 0x11] + phdr(1)
snapshot(f'{out}/etm3-data-on', 'ETM3.5', ETM_REGS(0x10000004, 0x344008F2), t, code)
# 7. a reserved header, then an A-Sync and more trace
t = ASYNC + isync(0x8004) + phdr(1) + [0x14] + phdr(1) + ASYNC + isync(0x8004) + phdr(1)
snapshot(f'{out}/etm3-reserved', 'ETM3.5', ETM_REGS(0x10000000, 0x344008F2), t, code)
# 8. an A-Sync with an extra zero while synchronised (bad sequence)
t = ASYNC + isync(0x8004) + phdr(1) + [0, 0, 0, 0, 0, 0, 0x80] + isync(0x8004) + phdr(1)
snapshot(f'{out}/etm3-badseq', 'ETM3.5', ETM_REGS(0x10000000, 0x344008F2), t, code)

def nib(ns):
    if len(ns) % 2: ns = ns + [0]
    return [ns[i] | (ns[i + 1] << 4) for i in range(0, len(ns), 2)]
STM_ASYNC = [0xF] * 21 + [0]
STM_VER = [0xF, 0, 0, 3]
STM_REGS = [('STMTCSR(0x3A0)', '0x00A00007')]
# 9. STM: a reserved 2-nibble header (F1), then data and a new A-Sync
t = nib(STM_ASYNC + STM_VER + [1, 1, 4] + [3, 2, 0] + [4, 5, 0xA] + [0xF, 1] + [4, 6, 0xB] +
        STM_ASYNC + STM_VER + [4, 7, 0xC])
snapshot(f'{out}/stm-reserved', 'STM', STM_REGS, t, None, src_name='STM_0')
# 10. ITM: a reserved header (0x04), then a stimulus packet and a new A-Sync
t = [0, 0, 0, 0, 0, 0x80, 0x01, 0x41, 0x04, 0x01, 0x42, 0, 0, 0, 0, 0, 0x80, 0x01, 0x43]
snapshot(f'{out}/itm-reserved', 'ITM', [('ITMTCR(0xE80)', '0x00000000')], t, None, src_name='ITM_0')
# 11. CoreSight frames: the last run of a frame is empty for a trace ID that has a decoder
#     (byte 12 changes to ID 0x10 and gives byte 13 to the old ID, byte 14 changes the ID again)
def frame(pairs, b14, flags):
    f = []
    for a, b in pairs: f += [a, b]
    return f + [b14, flags]
etm = ASYNC + isync(0x8004) + phdr(1) + phdr(1) + phdr(1) + phdr(1) + phdr(1) + phdr(1)
f1 = frame([(0x21, etm[0])] + [(etm[i], etm[i + 1]) for i in range(1, 13, 2)], etm[13], 0)
f2 = frame([(etm[i], etm[i + 1]) for i in range(14, 18, 2)] + [(0x66, 0x66)] * 3 + [(0x41, 0x00), (0x21, 0x00)], 0x41, 0x40)
f3 = frame([(0x21, 0x84)] + [(0x66, 0x66)] * 6, 0x66, 0)
snapshot(f'{out}/fmt-empty-run', 'ETM3.5', ETM_REGS(0x10000000, 0x344008F2), f1 + f2 + f3, code, fmt='coresight')
